//! Leaving and placing: the changed proxies leave their cells, then are placed (binned), in
//! parallel chunks of slots: the regions their box touches (PhysX's fast path, or a lookup),
//! then their cells there, unless they stay in exactly the cells they were in. Memberships of
//! proxies in several regions get their lists after the chunks.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cells::grid::CellRange;
use crate::cells::{self, split_slots, Arrival, BinSink, Cells, Stay};
use crate::prefetch::prefetch;
use crate::prune::EncodedBox;
use crate::store::Store;
use crate::Aabb;

use super::membership::{Membership, RegionEntry, LOOK_UP, NOT_SOLE, NO_EXTRA};
use super::regions::{RegionIndex, RegionSet};
use super::table::{Built, Region, State};
use super::{MbpEngine, OUT, OUT_AXES};

/// How many changed proxies ahead the leaving step prefetches a membership.
const LEAVE_AHEAD: usize = 8;

/// What one chunk of the placing writes: the memberships of its own range of slots, and
/// what is left to store once the chunks are done.
struct PlaceChunk<'a> {
    members: &'a mut [Membership],
    sole_region: &'a mut [u16],
    /// The region lists of this chunk's proxies in several regions.
    lists: Vec<RegionEntry>,
    fixups: Vec<Fixup>,
}

/// A membership whose list changes: its new list (`lists[start..start + len]`, stored when
/// `len >= 2`) and its old one (`old`, released), for the pass after the chunks.
#[derive(Clone, Copy, Debug)]
struct Fixup {
    slot: u32,
    start: u32,
    len: u16,
    old: u32,
}

impl MbpEngine {
    /// Step 2 of the [module docs](super): the changed proxies leave their cells and regions.
    pub(super) fn leave(&mut self, store: &Store) {
        let changed = store.dirty().len() + self.forced_list.len();
        // Where many proxies changed, every one is placed as if it had (what a cell then
        // does is cheaper: see `cells::bins_all`), and every cell has leavers: compacting
        // them all beats finding which.
        let all = cells::bins_all(changed, store.len());
        if all {
            self.cells.mark_all_leavers();
        } else {
            let dirty = store.dirty().len();
            for k in 0..changed {
                let slot = if k < dirty {
                    store.dirty()[k] as usize
                } else {
                    let s = self.forced_list[k - dirty] as usize;
                    if store.is_dirty(s) {
                        continue;
                    }
                    s
                };
                // The memberships of changed proxies lie apart: prefetch a few ahead.
                if let Some(&ahead) = store.dirty().get(k + LEAVE_AHEAD) {
                    if let Some(m) = self.members.get(ahead as usize) {
                        prefetch(m);
                    }
                }
                if !store.was_in(slot) {
                    continue;
                }
                let m = self.members[slot];
                let mut buf = [RegionEntry::default(); 2];
                for e in m.entries(&self.extras, &mut buf) {
                    let r = usize::from(e.region);
                    let Some(b) = self.regions[r].as_ref().and_then(Region::built) else {
                        continue;
                    };
                    if !self.recut.contains(r) {
                        for (u, v) in e.range.cells() {
                            self.cells.mark_leaver(b.first_cell + b.grid.index(u, v));
                        }
                    }
                }
                if m.out {
                    self.cells.mark_leaver(OUT);
                }
            }
        }
        self.to_place.clear();
        if all {
            // Those removed this update (changed, no longer alive) leave too.
            let slots = 0..store.slot_count() as u32;
            let placed = |&s: &u32| store.is_alive(s as usize) || store.is_dirty(s as usize);
            self.to_place.extend(slots.filter(placed));
            return;
        }
        self.to_place.extend_from_slice(store.dirty());
        self.to_place.extend(
            self.forced_list
                .iter()
                .filter(|&&s| !store.is_dirty(s as usize)),
        );
        let forced = &self.forced;
        self.cells
            .order_slots(&mut self.to_place, store.slot_count(), |s| {
                store.is_dirty(s) || forced[s] != 0
            });
    }

    /// Step 3 of the [module docs](super): places the slots listed to place, binning their
    /// arrivals into the cells and recording their memberships; the chunks of slots run in
    /// parallel, each writing the memberships of its own range of slots. Proxies in several
    /// regions have their lists stored afterwards, in slot-list order.
    pub(super) fn place(&mut self, store: &Store) {
        self.grow_slots(store);
        let ctx = Placing {
            store,
            regions: &self.regions,
            index: &self.index,
            extras: &self.extras,
            forced: &self.forced,
            not_inside: &self.not_inside.0,
            joinable: self.joinable,
            lookup_all: self.lookup_all,
            new_cells: self.new_cells,
        };
        let to_place = &self.to_place;
        let chunks = Cells::chunks_for(to_place, self.parallel);
        let states = split_slots(&mut self.members, to_place, chunks)
            .into_iter()
            .zip(split_slots(&mut self.sole_region, to_place, chunks))
            .map(|((base, members), (_, sole_region))| {
                let st = PlaceChunk {
                    members,
                    sole_region,
                    lists: Vec::new(),
                    fixups: Vec::new(),
                };
                (base, st)
            })
            .collect();
        let states = self.cells.bin(
            &mut self.binning,
            to_place,
            states,
            false,
            |slot, i, sink, st| ctx.place(slot, i, sink, st),
        );
        // Store the lists of the proxies in several regions, release the lists of the others.
        let done: Vec<(Vec<RegionEntry>, Vec<Fixup>)> =
            states.into_iter().map(|st| (st.lists, st.fixups)).collect();
        for (lists, fixups) in &done {
            for f in fixups {
                if f.len < 2 {
                    if f.old != NO_EXTRA {
                        self.extras[f.old as usize].clear();
                        self.free_extras.push(f.old);
                    }
                    continue;
                }
                let list = &lists[f.start as usize..f.start as usize + usize::from(f.len)];
                // A proxy still in several regions keeps its old list's place.
                let i = if f.old != NO_EXTRA {
                    f.old
                } else if let Some(i) = self.free_extras.pop() {
                    i
                } else {
                    self.extras.push(Vec::new());
                    (self.extras.len() - 1) as u32
                };
                let extra = &mut self.extras[i as usize];
                extra.clear();
                extra.extend_from_slice(list);
                self.members[f.slot as usize].extra = i;
            }
        }
    }
}

/// Bins a proxy's `arrival` into the cells of region `r` (built as `b`) that it covers,
/// `first` being its lowest region and `flags` the tag's flags, and returns its entry there.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn bin_in(
    b: &Built,
    r: usize,
    first: usize,
    flags: u32,
    range: CellRange,
    mut arrival: Arrival,
    fixed: bool,
    sink: &mut BinSink<'_>,
) -> RegionEntry {
    arrival.tag = cells::tag(first, range.u0, range.v0) | flags;
    for (u, v) in range.cells() {
        sink.push(b.first_cell + b.grid.index(u, v), arrival, fixed);
    }
    RegionEntry {
        region: r as u8,
        range,
    }
}

/// A proxy's regions: one (the fast path), or a set.
#[derive(Clone, Copy, Debug)]
enum Regions {
    One(usize),
    Set(RegionSet),
}

/// What placing a proxy reads, shared by the threads that bin.
struct Placing<'a> {
    store: &'a Store,
    regions: &'a [Option<Region>],
    index: &'a RegionIndex,
    extras: &'a [Vec<RegionEntry>],
    forced: &'a [u8],
    not_inside: &'a [AtomicU64],
    joinable: RegionSet,
    lookup_all: bool,
    /// Every cell was replaced this update (a full layout): no proxy stays.
    new_cells: bool,
}

impl Placing<'_> {
    /// Places `slot`: bins its arrivals, writes its membership at index `i` of its chunk
    /// `st`, and says what became of it.
    #[inline]
    fn place(&self, slot: u32, i: usize, sink: &mut BinSink<'_>, st: &mut PlaceChunk) -> Stay {
        let s = slot as usize;
        let old = st.members[i];
        if !self.store.is_alive(s) {
            st.members[i] = Membership::default();
            st.sole_region[i] = NOT_SOLE;
            self.mark_not_inside(s, false);
            if old.extra != NO_EXTRA {
                st.fixups.push(Fixup {
                    slot,
                    start: 0,
                    len: 0,
                    old: old.extra,
                });
            }
            return Stay::No;
        }
        let aabb = self.store.aabb_at(s);
        let fixed = self.store.is_fixed(s);
        let (regions, inside) = self.regions_of(s, &old, st.sole_region[i]);
        let arrival = |axes: [usize; 3]| Arrival {
            enc: EncodedBox::new(aabb, axes),
            slot,
            tag: 0,
        };
        let built = |r: usize| self.regions[r].as_ref().and_then(Region::built);
        let mut stay = Stay::No;
        let mut m = Membership {
            inside,
            ..Membership::default()
        };
        match regions {
            Regions::One(r) => {
                match built(r) {
                    Some(b) => {
                        let range = b.grid.range(aabb);
                        m.first = if self.stays_put(s, &old, r, range) {
                            stay = Stay::kept(fixed);
                            old.first
                        } else {
                            bin_in(b, r, r, 0, range, arrival(b.grid.axes), fixed, sink)
                        };
                        m.count = 1;
                    }
                    None => {
                        sink.push(OUT, arrival(OUT_AXES), fixed);
                        m.out = true;
                    }
                }
                if old.extra != NO_EXTRA {
                    st.fixups.push(Fixup {
                        slot,
                        start: 0,
                        len: 0,
                        old: old.extra,
                    });
                }
            }
            Regions::Set(set) => {
                if self.stays_put_in(s, &old, set, aabb) {
                    // Same regions and cells: the membership, its list included, is kept.
                    st.members[i] = Membership { inside, ..old };
                    st.sole_region[i] = if old.count == 1 {
                        u16::from(old.first.region)
                    } else {
                        NOT_SOLE
                    };
                    self.mark_not_inside(s, !inside);
                    return Stay::kept(fixed);
                }
                let start = st.lists.len();
                let mut first = None;
                // Tags say when a box is in exactly two regions (see `cells::reporting_cell`).
                let two = if set.len() == 2 {
                    cells::TWO_REGIONS
                } else {
                    0
                };
                // Regions mostly share their axes: encode once per axes met.
                let mut last: Option<([usize; 3], Arrival)> = None;
                for r in set.iter() {
                    let Some(b) = built(r) else { continue };
                    let f = *first.get_or_insert(r);
                    let range = b.grid.range(aabb);
                    let a = match last {
                        Some((axes, a)) if axes == b.grid.axes => a,
                        _ => arrival(b.grid.axes),
                    };
                    last = Some((b.grid.axes, a));
                    st.lists.push(bin_in(b, r, f, two, range, a, fixed, sink));
                }
                let len = st.lists.len() - start;
                match len {
                    0 => {
                        sink.push(OUT, arrival(OUT_AXES), fixed);
                        m.out = true;
                    }
                    1 => {
                        m.first = st.lists[start];
                        st.lists.truncate(start);
                    }
                    _ => (m.first, m.second) = (st.lists[start], st.lists[start + 1]),
                }
                m.count = len as u16;
                if len >= 2 || old.extra != NO_EXTRA {
                    st.fixups.push(Fixup {
                        slot,
                        start: start as u32,
                        len: len as u16,
                        old: old.extra,
                    });
                }
            }
        }
        st.sole_region[i] = if m.count == 1 {
            u16::from(m.first.region)
        } else {
            NOT_SOLE
        };
        st.members[i] = m;
        self.mark_not_inside(s, !m.inside);
        stay
    }

    /// Whether slot `s`, whose membership was `old`, may keep it: it was held in cells that
    /// still exist, nothing forces it to be placed again, and it was not out of bounds.
    #[inline]
    fn may_stay(&self, s: usize, old: &Membership) -> bool {
        !self.new_cells && self.store.was_in(s) && self.forced[s] == 0 && !old.out
    }

    /// Whether slot `s`, now in region `r` alone over cells `range`, was in exactly those
    /// (and may stay): its cells then keep it, re-encoded in place, and it is not binned. Its
    /// tag, made of its region and first cell, is the same.
    #[inline]
    fn stays_put(&self, s: usize, old: &Membership, r: usize, range: CellRange) -> bool {
        self.may_stay(s, old)
            && old.count == 1
            && usize::from(old.first.region) == r
            && old.first.range == range
    }

    /// [`Placing::stays_put`] for a proxy now in the regions of `set`: whether it was in
    /// exactly those, over the same cells in each.
    fn stays_put_in(&self, s: usize, old: &Membership, set: RegionSet, aabb: &Aabb) -> bool {
        if !self.may_stay(s, old) || usize::from(old.count) != set.len() {
            return false;
        }
        let mut buf = [RegionEntry::default(); 2];
        let entries = old.entries(self.extras, &mut buf);
        set.iter().zip(entries).all(|(r, e)| {
            usize::from(e.region) == r
                && self.regions[r]
                    .as_ref()
                    .and_then(Region::built)
                    .is_some_and(|b| b.grid.range(aabb) == e.range)
        })
    }

    /// Sets slot `s`'s bit in the bitmap of proxies not fully inside a region (atomically:
    /// chunks share the words at their borders; a bit that does not change is not written).
    #[inline]
    fn mark_not_inside(&self, s: usize, on: bool) {
        let (word, bit) = (&self.not_inside[s >> 6], 1u64 << (s & 63));
        if (word.load(Ordering::Relaxed) & bit != 0) != on {
            if on {
                word.fetch_or(bit, Ordering::Relaxed);
            } else {
                word.fetch_and(!bit, Ordering::Relaxed);
            }
        }
    }

    /// The regions of slot `s` (alive) after this update, and whether its box lies inside one
    /// of them. A proxy that changed, or lost a region, is looked up: the regions its box
    /// touches (with PhysX's fast path: a proxy that was in one region, whose box is still
    /// inside it and touches none of its neighbours, is in that region alone). The others
    /// keep their regions, and join the populated new regions they touch.
    #[inline]
    fn regions_of(&self, s: usize, old: &Membership, sole: u16) -> (Regions, bool) {
        let aabb = self.store.aabb_at(s);
        let index = self.index;
        let lookup = self.lookup_all || self.store.is_dirty(s) || self.forced[s] & LOOK_UP != 0;
        if !lookup {
            // Kept: in one region with none to join (unchanged proxies placed because many
            // changed, `cells::bins_all`), that region, as cheaply as a looked-up proxy's.
            if old.count == 1 && self.joinable.is_empty() {
                let r = usize::from(old.first.region);
                let inside = index.bounds(r).is_some_and(|b| b.contains(aabb));
                return (Regions::One(r), inside);
            }
            let mut set = RegionSet::default();
            let mut buf = [RegionEntry::default(); 2];
            for e in old.entries(self.extras, &mut buf) {
                set.insert(usize::from(e.region));
            }
            if !self.joinable.is_empty() {
                for r in index.lookup(aabb).iter() {
                    if self.joinable.contains(r) {
                        set.insert(r);
                    }
                }
            }
            let inside = set
                .iter()
                .any(|r| index.bounds(r).is_some_and(|b| b.contains(aabb)));
            return (Regions::Set(set), inside);
        }
        if sole != NOT_SOLE {
            let r = usize::from(sole);
            if let Some(Region {
                state: State::Built(b),
                ..
            }) = self.regions[r].as_ref()
            {
                if b.core.is_some_and(|core| core.contains(aabb)) {
                    return (Regions::One(r), true);
                }
            }
        }
        let set = index.lookup(aabb);
        let inside = set
            .iter()
            .any(|r| index.bounds(r).is_some_and(|b| b.contains(aabb)));
        (Regions::Set(set), inside)
    }
}
