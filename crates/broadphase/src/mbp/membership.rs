//! Where each proxy is held: its regions and, in each, the cells it covers (a membership, the
//! first two regions inline, all of them in a slab past two), the bitmap of proxies not fully
//! inside a region, and the per-slot records of the proxies placed again this update.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cells::grid::CellRange;
use crate::slack;
use crate::store::Store;

use super::MbpEngine;

/// `Membership::extra` when the proxy is in at most one region.
pub(super) const NO_EXTRA: u32 = u32::MAX;
/// `MbpEngine::forced` flags: the slot is placed again this update although it did not change;
/// and its regions are looked up anew (a region it was in went away), rather than kept.
const FORCED: u8 = 1;
pub(super) const LOOK_UP: u8 = 2;
/// `MbpEngine::sole_region` of a proxy in no region or in several.
pub(super) const NOT_SOLE: u16 = u16::MAX;

/// A proxy's place in one region: the region and the cells it covers there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RegionEntry {
    pub(super) region: u8,
    pub(super) range: CellRange,
}

/// Where a proxy is held: its regions, lowest first (the first inline, all of them in the
/// `extras` slab when there are several).
#[derive(Clone, Copy, Debug)]
pub(super) struct Membership {
    pub(super) first: RegionEntry,
    /// The second region's entry when in two or more (a copy of `extras[extra][1]`, so that
    /// a proxy in two regions is compared with its new place without reading `extras`).
    pub(super) second: RegionEntry,
    pub(super) count: u16,
    pub(super) extra: u32,
    /// Its box lies inside one of its regions.
    pub(super) inside: bool,
    /// It sits in the out-of-bounds cell.
    pub(super) out: bool,
}

impl Membership {
    /// Its entries, lowest region first. In one or two regions they are copied into `buf` from
    /// the membership itself (no list to read: it would cost a cache miss); in more they are
    /// its list in `extras`.
    #[inline]
    pub(super) fn entries<'a>(
        &self,
        extras: &'a [Vec<RegionEntry>],
        buf: &'a mut [RegionEntry; 2],
    ) -> &'a [RegionEntry] {
        *buf = [self.first, self.second];
        debug_assert!(self.count != 2 || extras[self.extra as usize][..] == buf[..]);
        match self.count {
            0..=2 => &buf[..usize::from(self.count)],
            _ => &extras[self.extra as usize],
        }
    }
}

impl Default for Membership {
    fn default() -> Self {
        Self {
            first: RegionEntry::default(),
            second: RegionEntry::default(),
            count: 0,
            extra: NO_EXTRA,
            inside: false,
            out: false,
        }
    }
}

/// A bitmap by slot, whose words several threads may set bits in.
#[derive(Debug, Default)]
pub(super) struct Bits(pub(super) Vec<AtomicU64>);

impl Clone for Bits {
    fn clone(&self) -> Self {
        Self(
            self.0
                .iter()
                .map(|w| AtomicU64::new(w.load(Ordering::Relaxed)))
                .collect(),
        )
    }
}

/// The memberships, borrowed apart from the cells (for the parallel pruning).
pub(super) struct MembershipView<'a> {
    pub(super) members: &'a [Membership],
    pub(super) extras: &'a [Vec<RegionEntry>],
}

impl MembershipView<'_> {
    /// Whether the slots `x` and `y` share a region below `r`.
    pub(super) fn share_region_below(&self, x: u32, y: u32, r: usize) -> bool {
        let (mut bx, mut by) = ([RegionEntry::default(); 2], [RegionEntry::default(); 2]);
        let (ex, ey) = (
            self.members[x as usize].entries(self.extras, &mut bx),
            self.members[y as usize].entries(self.extras, &mut by),
        );
        let (mut i, mut j) = (0, 0);
        while i < ex.len() && j < ey.len() {
            let (a, b) = (usize::from(ex[i].region), usize::from(ey[j].region));
            if a >= r || b >= r {
                return false;
            }
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        false
    }
}

impl MbpEngine {
    /// Places `slot` again this update; with `look_up`, its regions are looked up anew.
    pub(super) fn force(&mut self, slot: u32, look_up: bool) {
        let f = &mut self.forced[slot as usize];
        if *f == 0 {
            self.forced_list.push(slot);
        }
        *f |= FORCED | if look_up { LOOK_UP } else { 0 };
    }

    /// Drops region `r` from slot `s`'s membership (the region is going away).
    pub(super) fn strip(&mut self, s: usize, r: usize) {
        // A stripped proxy is looked up again: no fast path.
        self.sole_region[s] = NOT_SOLE;
        let m = &mut self.members[s];
        match m.count {
            0 => {}
            1 => {
                if usize::from(m.first.region) == r {
                    m.count = 0;
                }
            }
            _ => {
                let list = &mut self.extras[m.extra as usize];
                list.retain(|e| usize::from(e.region) != r);
                m.count = list.len() as u16;
                m.first = list[0];
                m.second = list.get(1).copied().unwrap_or_default();
                if m.count == 1 {
                    list.clear();
                    self.free_extras.push(m.extra);
                    m.extra = NO_EXTRA;
                }
            }
        }
    }

    /// Sizes the per-slot arrays for every slot issued.
    pub(super) fn grow_slots(&mut self, store: &Store) {
        let n = store.slot_count();
        if self.members.len() < n {
            slack::resize(&mut self.members, n, Membership::default());
            slack::resize(&mut self.sole_region, n, NOT_SOLE);
            slack::resize(&mut self.forced, n, 0);
            self.not_inside
                .0
                .resize_with(n.div_ceil(64), AtomicU64::default);
        }
        self.binning.grow(n);
    }
}
