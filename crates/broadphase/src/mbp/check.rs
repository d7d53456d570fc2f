//! Mbp's invariants ([`MbpEngine::check`]): the cells' own (sorted, their boxes' keys, their
//! own pairs); each region's cells laid out as its grid says; each held proxy's membership
//! well formed (regions increasing, the first two inline, the others in its list), and the
//! proxy in exactly the cells of its membership with the tag of its first region and cell (in
//! the out-of-bounds cell when in no region); and an unchanged proxy's cells those its box
//! covers, in regions its box touches.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use super::membership::{RegionEntry, NO_EXTRA};
use super::{MbpEngine, OUT};
use crate::cells;
use crate::store::Store;

impl MbpEngine {
    pub(super) fn check(&self, store: &Store) -> Result<(), String> {
        let held = self.cells.check(store).map_err(|e| format!("mbp: {e}"))?;
        if self.cells.get(OUT).prune {
            return Err("mbp: the out-of-bounds cell finds pairs".into());
        }
        let mut laid_out = 1;
        for (r, region) in self.regions.iter().enumerate() {
            let Some(b) = region.as_ref().and_then(|x| x.built()) else {
                continue;
            };
            laid_out += b.grid.len();
            for u in 0..b.grid.cells[0] {
                for v in 0..b.grid.cells[1] {
                    let c = b.first_cell + b.grid.index(u, v);
                    let key = cells::tag(r, u as u16, v as u16);
                    if c >= self.cells.len() || self.cells.get(c).key != key {
                        return Err(format!("mbp: region {r}'s cell ({u}, {v}) is not at {c}"));
                    }
                }
            }
        }
        if laid_out != self.cells.len() {
            return Err(format!(
                "mbp: {} cells, the regions lay out {laid_out}",
                self.cells.len()
            ));
        }
        let mut found: Vec<HashSet<(usize, u32)>> = vec![HashSet::new(); store.slot_count()];
        for (c, entries) in held.iter().enumerate() {
            for &(slot, tag) in entries {
                found[slot as usize].insert((c, tag));
            }
        }
        for (s, cells) in found.iter().enumerate() {
            if store.was_in(s) {
                let want = self.expected_cells(store, s)?;
                if *cells != want {
                    return Err(format!(
                        "mbp: slot {s} is in cells {cells:?}, its membership says {want:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The cells (with tags) slot `s`'s membership puts it in, after checking that the
    /// membership is well formed and, for an unchanged proxy, where its box is.
    fn expected_cells(&self, store: &Store, s: usize) -> Result<HashSet<(usize, u32)>, String> {
        let Some(m) = self.members.get(s) else {
            return Err(format!("mbp: held slot {s} has no membership"));
        };
        let entries: &[RegionEntry] = match m.count {
            0..=2 => &[m.first, m.second][..usize::from(m.count)],
            _ => self.extras.get(m.extra as usize).map_or(&[], Vec::as_slice),
        };
        if usize::from(m.count) != entries.len() || (m.count == 0) != m.out {
            return Err(format!(
                "mbp: slot {s}'s membership counts {} regions, lists {}, out: {}",
                m.count,
                entries.len(),
                m.out
            ));
        }
        if m.count >= 2 {
            let list = &self.extras[m.extra as usize];
            if list.len() != usize::from(m.count) || [list[0], list[1]] != [m.first, m.second] {
                return Err(format!("mbp: slot {s}'s inline regions are not its list's"));
            }
        } else if m.extra != NO_EXTRA {
            return Err(format!(
                "mbp: slot {s}, in {} regions, holds a list",
                m.count
            ));
        }
        if entries.windows(2).any(|w| w[0].region >= w[1].region) {
            return Err(format!("mbp: slot {s}'s regions do not increase"));
        }
        let mut want = HashSet::new();
        let Some(first) = entries.first() else {
            want.insert((OUT, 0));
            return Ok(want);
        };
        let two = if entries.len() == 2 {
            cells::TWO_REGIONS
        } else {
            0
        };
        let unchanged = !store.is_dirty(s);
        let touched =
            (unchanged && !self.region_edits).then(|| self.index.lookup(store.aabb_at(s)));
        for e in entries {
            let r = usize::from(e.region);
            let Some(b) = self.built(r) else {
                return Err(format!(
                    "mbp: slot {s} is in region {r}, which has no cells"
                ));
            };
            if unchanged && b.grid.range(store.aabb_at(s)) != e.range {
                return Err(format!(
                    "mbp: slot {s}'s cells in region {r} are not those its box covers"
                ));
            }
            if touched.is_some_and(|t| !t.contains(r)) {
                return Err(format!(
                    "mbp: slot {s} is in region {r}, which its box misses"
                ));
            }
            let tag = cells::tag(usize::from(first.region), e.range.u0, e.range.v0) | two;
            want.extend(
                e.range
                    .cells()
                    .map(|(u, v)| (b.first_cell + b.grid.index(u, v), tag)),
            );
        }
        // Whether the box lies inside one of its regions decides whether a populated new
        // region looks at it (`joiners`): the flag and the bitmap say what the bounds say.
        let inside = entries.iter().any(|e| {
            self.index
                .bounds(usize::from(e.region))
                .is_some_and(|b| b.contains(store.aabb_at(s)))
        });
        let bit = self.not_inside.0[s >> 6].load(Ordering::Relaxed) >> (s & 63) & 1 == 1;
        if m.inside != inside || bit == inside {
            return Err(format!(
                "mbp: slot {s} is marked inside: {}, not inside: {bit}; its regions hold it: \
                 {inside}",
                m.inside
            ));
        }
        Ok(want)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, BroadPhase, Config, Mbp, MbpSettings, ProxyDesc};

    /// Boxes over a grid of four regions, some in two or more, one out of bounds.
    fn live() -> Mbp {
        let settings = MbpSettings::new(Aabb::new([0.0; 3], [8.0; 3]), 2);
        let Ok(mut bp) = Mbp::with_settings(Config::default(), &settings) else {
            panic!("valid settings");
        };
        for k in 0..24 {
            let lo = [(k % 8) as f32, (k % 3) as f32, (k / 3) as f32];
            assert!(bp
                .insert(Aabb::new(lo, lo.map(|c| c + 1.5)), ProxyDesc::dynamic())
                .is_ok());
        }
        assert!(bp
            .insert(Aabb::new([50.0; 3], [51.0; 3]), ProxyDesc::dynamic())
            .is_ok());
        assert!(bp.update().is_ok());
        assert_eq!(bp.out_of_bounds().len(), 1);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    #[test]
    fn a_dropped_membership_is_caught() {
        let mut bp = live();
        let s = (0..bp.engine.members.len())
            .find(|&s| bp.engine.members[s].count == 1)
            .unwrap_or(0);
        let m = &mut bp.engine.members[s];
        (m.count, m.out) = (0, true);
        bp.assert_broken(&format!("slot {s} is in cells"));
    }

    #[test]
    fn a_wrong_inside_flag_is_caught() {
        let mut bp = live();
        let s = (0..bp.engine.members.len())
            .find(|&s| bp.engine.members[s].count == 1)
            .unwrap_or(0);
        bp.engine.members[s].inside ^= true;
        bp.assert_broken(&format!("slot {s} is marked inside"));
    }

    #[test]
    fn a_region_list_out_of_order_is_caught() {
        let mut bp = live();
        let s = (0..bp.engine.members.len())
            .find(|&s| bp.engine.members[s].count >= 3)
            .unwrap_or(0);
        let m = bp.engine.members[s];
        bp.engine.extras[m.extra as usize].swap(1, 2);
        let list = &bp.engine.extras[m.extra as usize];
        bp.engine.members[s].second = list[1];
        bp.assert_broken(&format!("slot {s}'s regions do not increase"));
    }

    #[test]
    fn a_cell_out_of_order_is_caught() {
        let mut bp = live();
        bp.engine.cells.disorder_for_test();
        bp.assert_broken("out of order");
    }
}
