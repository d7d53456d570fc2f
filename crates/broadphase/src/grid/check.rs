//! Grid's invariants ([`GridEngine::check`]): per bucket, its entries sorted by cell key and
//! its pairs sorted, each of two of its records; per record, a slot held since the last update
//! whose keys, fixed flag and cell range are its box's (unless it changed since), in a bucket
//! its cells reach; per held proxy, resident on one level, in exactly the buckets its cells
//! there reach; and the levels' counts of residents.

use std::collections::{BTreeSet, HashMap};

use super::record::{box_keys, FIXED, SLOT};
use super::GridEngine;
use crate::store::Store;

impl GridEngine {
    pub(super) fn check(&self, store: &Store) -> Result<(), String> {
        if self.layout.is_some() == self.levels.is_empty() {
            return Err("grid: levels without a layout, or a layout without levels".into());
        }
        // Per held slot: its level and the buckets it is resident in.
        let mut homes: HashMap<u32, (usize, BTreeSet<usize>)> = HashMap::new();
        for (l, level) in self.levels.iter().enumerate() {
            let g = &level.grid;
            if level.buckets.len() != g.buckets() {
                return Err(format!(
                    "grid: level {l} has {} buckets",
                    level.buckets.len()
                ));
            }
            let mut residents = BTreeSet::new();
            for (bi, bucket) in level.buckets.iter().enumerate() {
                let at = format!("grid: level {l}, bucket {bi}");
                if bucket.residents > bucket.records.len() {
                    return Err(format!("{at}: more residents than records"));
                }
                if let Some(w) = bucket.keys.windows(2).position(|w| w[0] > w[1]) {
                    return Err(format!("{at}: entries {w} and {} are out of order", w + 1));
                }
                if let Some(w) = bucket.pairs.windows(2).position(|w| w[0] >= w[1]) {
                    return Err(format!("{at}: pairs {w} and {} are out of order", w + 1));
                }
                let mut slots = BTreeSet::new();
                for (i, r) in bucket.records.iter().enumerate() {
                    let slot = r.slot & SLOT;
                    let s = slot as usize;
                    if s >= store.slot_count() || !store.was_in(s) {
                        return Err(format!("{at}: a record of slot {slot}, not held"));
                    }
                    if !slots.insert(slot) {
                        return Err(format!("{at}: slot {slot} has two records"));
                    }
                    let (lo, hi) = (r.lo, r.hi());
                    let reaches = (lo[0]..=hi[0]).any(|x| {
                        (lo[1]..=hi[1])
                            .any(|y| (lo[2]..=hi[2]).any(|z| g.bucket_of([x, y, z]) == bi))
                    });
                    if !reaches {
                        return Err(format!("{at}: slot {slot}'s cells do not reach the bucket"));
                    }
                    if i < bucket.residents {
                        residents.insert(slot);
                        let home = homes.entry(slot).or_insert((l, BTreeSet::new()));
                        if home.0 != l {
                            return Err(format!(
                                "grid: slot {slot} lives on levels {} and {l}",
                                home.0
                            ));
                        }
                        home.1.insert(bi);
                    }
                    if store.is_dirty(s) {
                        continue;
                    }
                    let aabb = store.aabb_at(s);
                    if r.keys != box_keys(aabb) || (r.slot & FIXED != 0) != store.is_fixed(s) {
                        return Err(format!(
                            "{at}: slot {slot}'s record is not its box {aabb:?} or its mobility"
                        ));
                    }
                    if i < bucket.residents {
                        let (want_lo, want_hi, _) = g.range_and_home(aabb);
                        if (lo, hi) != (want_lo, want_hi) {
                            return Err(format!(
                                "{at}: slot {slot}'s record covers cells {lo:?}..={hi:?}, its \
                                 box {want_lo:?}..={want_hi:?}"
                            ));
                        }
                    }
                }
                let list = bucket.pair_list();
                for &k in list.keys {
                    let (a, b) = (list.slots)(k);
                    if !(slots.contains(&a) && slots.contains(&b)) {
                        return Err(format!(
                            "{at}: pair ({a}, {b}) is of slots it does not hold"
                        ));
                    }
                }
            }
            if residents.len() != level.residents {
                return Err(format!(
                    "grid: level {l} counts {} residents, holds {}",
                    level.residents,
                    residents.len()
                ));
            }
        }
        for s in 0..store.slot_count() {
            let home = homes.get(&(s as u32));
            if store.was_in(s) != home.is_some() {
                return Err(format!(
                    "grid: slot {s} is held by the store: {}, resident here: {}",
                    store.was_in(s),
                    home.is_some()
                ));
            }
            let Some((l, buckets)) = home else { continue };
            let Some((lo, hi)) = self.levels[*l].buckets.iter().find_map(|b| {
                b.records[..b.residents]
                    .iter()
                    .find(|r| r.slot & SLOT == s as u32)
                    .map(|r| (r.lo, r.hi()))
            }) else {
                continue;
            };
            let g = &self.levels[*l].grid;
            let mut want = BTreeSet::new();
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        want.insert(g.bucket_of([x, y, z]));
                    }
                }
            }
            if *buckets != want {
                return Err(format!(
                    "grid: slot {s} is resident in buckets {buckets:?}, its cells reach {want:?}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, BroadPhase, Config, Grid, GridSettings, ProxyDesc};

    /// Small boxes over many cells and buckets, a few large ones on a coarser level.
    fn live() -> Grid {
        let settings = GridSettings {
            cell_size: Some(1.0),
            ..GridSettings::default()
        };
        let Ok(mut bp) = Grid::with_settings(Config::default(), settings) else {
            panic!("valid settings");
        };
        for k in 0..300 {
            let lo = [
                (k % 11) as f32 * 1.3,
                (k / 11 % 5) as f32,
                (k / 55) as f32 * 0.9,
            ];
            let size = if k % 60 == 0 { 9.0 } else { 0.7 };
            let d = if k % 5 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            assert!(bp.insert(Aabb::new(lo, lo.map(|c| c + size)), d).is_ok());
        }
        assert!(bp.update().is_ok());
        assert!(bp.engine.levels.len() > 1, "the large boxes live higher");
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    /// The first record of level 0, to corrupt.
    fn first_record(bp: &mut Grid) -> &mut super::super::record::Record {
        let first = bp.engine.levels[0]
            .buckets
            .iter_mut()
            .find_map(|b| b.records.first_mut());
        first.unwrap_or_else(|| panic!("level 0 holds records"))
    }

    #[test]
    fn a_miscounted_level_is_caught() {
        let mut bp = live();
        bp.engine.levels[0].residents += 1;
        bp.assert_broken("residents");
    }

    #[test]
    fn a_record_moved_to_other_cells_is_caught() {
        let mut bp = live();
        let record = first_record(&mut bp);
        record.lo[0] += 1;
        bp.assert_broken("covers cells");
    }

    #[test]
    fn a_record_of_the_wrong_mobility_is_caught() {
        let mut bp = live();
        let record = first_record(&mut bp);
        record.slot ^= super::FIXED;
        bp.assert_broken("mobility");
    }
}
