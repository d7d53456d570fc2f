//! Abp's invariants ([`AbpEngine::check`]): the columns are the grid's, each sorted and
//! holding its boxes' keys (the cells' own checks), and each held box is in exactly the
//! columns its recorded range covers, tagged with the first of them; the range is the one its
//! box covers, and the counts of entries and of boxes outside the grid match a recount.

use super::AbpEngine;
use crate::cells;
use crate::store::Store;

impl AbpEngine {
    pub(super) fn check(&self, store: &Store) -> Result<(), String> {
        let grid = &self.grid;
        if self.cells.len() != grid.len() {
            return Err(format!(
                "abp: {} columns for a grid of {}",
                self.cells.len(),
                grid.len()
            ));
        }
        let held = self.cells.check(store).map_err(|e| format!("abp: {e}"))?;
        // Per slot: the columns found holding it.
        let mut found = vec![Vec::new(); store.slot_count()];
        for u in 0..grid.cells[0] {
            for v in 0..grid.cells[1] {
                let c = grid.index(u, v);
                let cell = self.cells.get(c);
                if cell.key != cells::tag(0, u as u16, v as u16) || cell.axes != grid.axes {
                    return Err(format!("abp: column ({u}, {v}) has another key or axes"));
                }
                for &(slot, tag) in &held[c] {
                    found[slot as usize].push((u, v, tag));
                }
            }
        }
        let (mut entries, mut outside) = (0, 0);
        for (s, columns) in found.iter().enumerate() {
            if !store.was_in(s) {
                continue;
            }
            let Some(range) = self.ranges.get(s) else {
                return Err(format!("abp: held slot {s} has no recorded columns"));
            };
            let tag = cells::tag(0, range.u0, range.v0);
            let want: Vec<_> = range.cells().map(|(u, v)| (u, v, tag)).collect();
            if *columns != want {
                return Err(format!(
                    "abp: slot {s} is in columns {columns:?}, its range says {want:?}"
                ));
            }
            if !store.is_dirty(s) {
                let aabb = store.aabb_at(s);
                if grid.range(aabb) != *range || grid.is_outside(aabb) != self.outside[s] {
                    return Err(format!(
                        "abp: slot {s}'s recorded columns are not those its box covers"
                    ));
                }
            }
            entries += range.count();
            outside += usize::from(self.outside[s]);
        }
        if (entries, outside) != (self.entries, self.outside_count) {
            return Err(format!(
                "abp: counts of entries and boxes outside the grid are {:?}, a recount gives \
                 {:?}",
                (self.entries, self.outside_count),
                (entries, outside)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, Abp, AbpSettings, BroadPhase, Config, ProxyDesc};

    /// Boxes over several columns, fixed and dynamic, with pairs.
    fn live() -> Abp {
        let settings = AbpSettings {
            boxes_per_column: 2,
            min_column_extents: 0.0,
            min_proxies_for_columns: 0,
        };
        let Ok(mut bp) = Abp::with_settings(Config::default(), settings) else {
            panic!("valid settings");
        };
        for k in 0..40 {
            let lo = [(k % 7) as f32, (k / 7) as f32 * 1.5, (k % 5) as f32 * 1.5];
            let d = if k % 4 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            assert!(bp.insert(Aabb::new(lo, lo.map(|c| c + 1.25)), d).is_ok());
        }
        assert!(bp.update().is_ok());
        assert!(bp.columns() > 1);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    #[test]
    fn a_column_out_of_order_is_caught() {
        let mut bp = live();
        bp.engine.cells.disorder_for_test();
        bp.assert_broken("out of order");
    }

    #[test]
    fn a_changed_stored_box_is_caught() {
        let mut bp = live();
        let list = &mut bp.engine.cells.crowded_for_test().dynamic;
        let key = list.uv(0)[0];
        list.set_min_u_for_test(0, key.wrapping_add(1));
        bp.assert_broken("not its box");
    }

    #[test]
    fn a_box_missing_from_a_column_is_caught() {
        let mut bp = live();
        // The column's boxes, but one: the first leaves.
        let list = &mut bp.engine.cells.crowded_for_test().dynamic;
        let gone = list.id(0);
        list.retain(|id| id != gone, |_| (), |_, _| ());
        // Its pairs there name a box the column does not hold; without any, its range does.
        let e = bp.engine.check(&bp.store).err().unwrap_or_default();
        let named = [format!("slot {gone} is in columns"), format!("({gone}, ")];
        assert!(
            named.iter().any(|n| e.contains(n.as_str())) || e.contains(&format!(", {gone})")),
            "{e}"
        );
    }

    #[test]
    fn a_miscounted_entry_is_caught() {
        let mut bp = live();
        bp.engine.entries += 1;
        bp.assert_broken("recount");
    }
}
