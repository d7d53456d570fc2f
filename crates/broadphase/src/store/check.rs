//! The store's invariants, checked on demand ([`Store::check`]), and the checks of an engine's
//! pair lists against it ([`Store::check_pairs`]): for tests and debugging.

use super::{Store, ALIVE, BOX_SET, DIRTY, FIXED, LEAVING, OUT, RETIRED, WAS_IN};
use crate::filter::LayerMatrix;
use crate::pairs::{pair_key, PairList};

/// What the free lists say of each slot.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listed {
    No,
    Free,
    Pending,
}

impl Store {
    /// Checks the store's own invariants: flags, the changed list, the free lists, the
    /// counters, generations and the bounds of the world. Returns the first broken one.
    pub(crate) fn check(&self) -> Result<(), String> {
        let n = self.flags.len();
        if [self.aabbs.len(), self.descs.len(), self.generations.len()] != [n; 3] {
            return Err(format!(
                "store: {} boxes, {} descriptions, {} generations, {n} flags",
                self.aabbs.len(),
                self.descs.len(),
                self.generations.len()
            ));
        }
        let mut listed = vec![Listed::No; n];
        for (list, what) in [
            (&self.free, Listed::Free),
            (&self.pending_free, Listed::Pending),
        ] {
            for &s in list {
                let s = s as usize;
                match listed.get(s) {
                    None => return Err(format!("store: free slot {s} of {n} slots")),
                    Some(Listed::No) => listed[s] = what,
                    Some(_) => return Err(format!("store: slot {s} is free twice")),
                }
            }
        }
        let mut in_dirty = vec![false; n];
        for &s in &self.dirty {
            let s = s as usize;
            match in_dirty.get(s) {
                None => return Err(format!("store: changed slot {s} of {n} slots")),
                Some(true) => return Err(format!("store: slot {s} is listed changed twice")),
                Some(false) => in_dirty[s] = true,
            }
        }
        let (mut len, mut fixed, mut grouped, mut boxes_set) = (0, 0, 0, 0);
        for s in 0..n {
            let f = self.flags[s];
            let alive = f & ALIVE != 0;
            let dirty = f & DIRTY != 0;
            if dirty != in_dirty[s] {
                return Err(format!(
                    "store: slot {s} is flagged changed: {dirty}, listed changed: {}",
                    in_dirty[s]
                ));
            }
            if f & LEAVING != 0 {
                return Err(format!("store: slot {s} is still marked leaving a batch"));
            }
            if f & BOX_SET != 0 && !(alive && dirty) {
                return Err(format!(
                    "store: slot {s} has its box set but is not a changed live proxy"
                ));
            }
            // An unchanged slot is as the last update left it: held exactly if live and in the
            // world's bounds.
            let out = f & OUT != 0;
            if !dirty && (f & WAS_IN != 0) != (alive && !out) {
                return Err(format!(
                    "store: unchanged slot {s} is live: {alive}, out of bounds: {out}, held by \
                     the engine: {}",
                    f & WAS_IN != 0
                ));
            }
            if out && !alive {
                return Err(format!("store: dead slot {s} is flagged out of bounds"));
            }
            let generation = self.generations[s];
            match (alive, listed[s]) {
                (true, Listed::No) => {}
                (true, _) => return Err(format!("store: live slot {s} is on a free list")),
                (false, Listed::Free) if dirty || f & WAS_IN != 0 => {
                    return Err(format!(
                        "store: free slot {s} is changed or held (free only after an update)"
                    ))
                }
                (false, Listed::Pending) if !dirty || generation == 0 => {
                    return Err(format!(
                        "store: slot {s}, removed since the update, is not changed or kept \
                         generation 0"
                    ))
                }
                (false, Listed::No) if generation != u32::MAX => {
                    return Err(format!(
                        "store: dead slot {s} (generation {generation}) is neither free nor \
                         retired"
                    ))
                }
                (false, _) => {}
            }
            if f & RETIRED != 0 && (alive || generation != u32::MAX || !dirty) {
                return Err(format!(
                    "store: retired slot {s} is live, changed: {dirty}, or of generation \
                     {generation}"
                ));
            }
            if alive {
                let desc = &self.descs[s];
                if (f & FIXED != 0) != desc.is_fixed() {
                    return Err(format!(
                        "store: slot {s}'s fixed flag disagrees with its desc"
                    ));
                }
                if usize::from(desc.layer.0) >= crate::Layer::COUNT {
                    return Err(format!("store: slot {s} is on layer {}", desc.layer.0));
                }
                if !self.aabbs[s].is_valid() {
                    return Err(format!("store: slot {s} holds {:?}", self.aabbs[s]));
                }
                len += 1;
                fixed += usize::from(desc.is_fixed());
                grouped += usize::from(desc.group.0 != 0);
                boxes_set += usize::from(f & BOX_SET != 0);
            }
        }
        self.check_world()?;
        let counts = [self.len, self.fixed, self.grouped, self.boxes_set];
        if counts != [len, fixed, grouped, boxes_set] {
            return Err(format!(
                "store: counts (live, fixed, grouped, boxes set) are {counts:?}, a recount \
                 gives {:?}",
                [len, fixed, grouped, boxes_set]
            ));
        }
        if self.len > self.limit {
            return Err(format!(
                "store: {} live proxies over the limit {}",
                self.len, self.limit
            ));
        }
        if self.all_layers_collide != (self.matrix == LayerMatrix::default()) {
            return Err("store: the all-layers-collide flag disagrees with the matrix".into());
        }
        self.check_bounds()
    }

    /// Proxies out of the world's bounds: flagged exactly where an unchanged box misses the
    /// world, counted, and listed (sorted, once each) with no other slot but removed ones.
    fn check_world(&self) -> Result<(), String> {
        let n = self.flags.len();
        let mut out = 0;
        for s in 0..n {
            let f = self.flags[s];
            if f & OUT != 0 {
                out += 1;
                if self.outside.binary_search(&(s as u32)).is_err() {
                    return Err(format!("store: slot {s} is out of bounds but not listed"));
                }
            }
            if f & (ALIVE | DIRTY) == ALIVE {
                let missed = self.world.is_some_and(|w| !w.overlaps(&self.aabbs[s]));
                if missed != (f & OUT != 0) {
                    return Err(format!(
                        "store: unchanged slot {s}'s box {:?} misses the world {:?}: {missed}, \
                         flagged out: {}",
                        self.aabbs[s],
                        self.world,
                        f & OUT != 0
                    ));
                }
            }
        }
        if out != self.out_count {
            return Err(format!(
                "store: {} proxies counted out of bounds, {out} flagged",
                self.out_count
            ));
        }
        if self.outside.windows(2).any(|w| w[0] >= w[1]) {
            return Err("store: the slots out of bounds are not sorted".into());
        }
        for &s in &self.outside {
            let f = self.flags.get(s as usize).copied().unwrap_or(0);
            if f & OUT == 0 && f & (ALIVE | DIRTY) != DIRTY {
                return Err(format!(
                    "store: slot {s} is listed out of bounds but is neither out nor removed"
                ));
            }
        }
        Ok(())
    }

    /// The bounds of the world hold every live box, and the union of the boxes set since the
    /// update holds those.
    fn check_bounds(&self) -> Result<(), String> {
        for s in (0..self.flags.len()).filter(|&s| self.flags[s] & ALIVE != 0) {
            let b = &self.aabbs[s];
            if !self.bounds.is_some_and(|w| w.contains(b)) {
                return Err(format!(
                    "store: the world's bounds {:?} miss slot {s}'s box {b:?}",
                    self.bounds
                ));
            }
            if self.flags[s] & BOX_SET != 0 && !self.set_bounds.is_some_and(|w| w.contains(b)) {
                return Err(format!(
                    "store: the bounds of the boxes set {:?} miss slot {s}'s box {b:?}",
                    self.set_bounds
                ));
            }
        }
        Ok(())
    }

    /// Checks an engine's pairs of the last update: `listed` pairs in all, each once, of two
    /// distinct slots held since then (live at the last update) and, where neither changed
    /// since, whose boxes overlap and (unless rules changed since) whose filter allows them.
    pub(crate) fn check_pairs(&self, lists: &[PairList<'_>]) -> Result<(), String> {
        let mut keys: Vec<u64> = lists
            .iter()
            .flat_map(|l| {
                l.keys.iter().map(|&k| {
                    let (a, b) = (l.slots)(k);
                    if a == b {
                        u64::MAX
                    } else {
                        pair_key(a, b)
                    }
                })
            })
            .collect();
        keys.sort_unstable();
        self.check_pair_keys(&keys, true)
    }

    /// [`Store::check_pairs`] for sorted pair keys (`u64::MAX`: a pair of one slot with itself).
    /// Without `held`, the keys were kept for a fresh engine: the store no longer knows which
    /// slots the last update held (every proxy is new to the structure).
    pub(crate) fn check_pair_keys(&self, keys: &[u64], held: bool) -> Result<(), String> {
        if keys.len() != self.listed {
            return Err(format!(
                "pairs: the engine lists {} pairs, the last update left {}",
                keys.len(),
                self.listed
            ));
        }
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            let (a, b) = crate::pairs::key_slots(w[0]);
            return Err(format!("pairs: ({a}, {b}) is listed twice"));
        }
        if keys.last() == Some(&u64::MAX) {
            return Err("pairs: a slot is paired with itself".into());
        }
        let n = self.flags.len();
        let rules_pending = self.rule_changes != 0;
        for &k in keys {
            let (a, b) = crate::pairs::key_slots(k);
            let (x, y) = (a as usize, b as usize);
            if y >= n {
                return Err(format!("pairs: ({a}, {b}) names a slot of {n}"));
            }
            if held && !(self.was_in(x) && self.was_in(y)) {
                return Err(format!(
                    "pairs: ({a}, {b}) names a slot not live at the last update"
                ));
            }
            if self.is_dirty(x) || self.is_dirty(y) {
                continue;
            }
            if !self.aabbs[x].overlaps(&self.aabbs[y]) {
                return Err(format!(
                    "pairs: ({a}, {b}) is listed, but {:?} and {:?} do not overlap",
                    self.aabbs[x], self.aabbs[y]
                ));
            }
            if !rules_pending && !self.allows(x, y) {
                return Err(format!(
                    "pairs: ({a}, {b}) is listed, but the filter forbids it"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aabb, BroadPhase, BruteForce, Config, ProxyDesc};

    /// A broad phase with a few proxies, pairs, a removal and pending changes.
    fn live() -> BruteForce {
        let mut bp = BruteForce::new(Config::default());
        let unit = Aabb::new([0.0; 3], [1.0; 3]);
        let ids: Vec<_> = (0..6)
            .map(|k| {
                let d = if k % 3 == 0 {
                    ProxyDesc::fixed()
                } else {
                    ProxyDesc::dynamic()
                };
                bp.insert(unit.translated([k as f32 * 0.5, 0.0, 0.0]), d)
            })
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        assert!(bp.update().is_ok());
        assert!(bp.remove(ids[1]).is_ok());
        assert!(bp.update().is_ok());
        assert!(bp.remove(ids[2]).is_ok());
        assert!(bp.set_aabb(ids[3], unit).is_ok());
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    fn broken(bp: &BruteForce, what: &str) {
        match bp.check_structure() {
            Err(e) => assert!(e.contains(what), "{e}"),
            Ok(()) => panic!("the corruption ({what}) was not found"),
        }
    }

    #[test]
    fn a_miscounted_store_is_caught() {
        let mut bp = live();
        bp.store.fixed += 1;
        broken(&bp, "counts");
    }

    #[test]
    fn a_live_slot_on_the_free_list_is_caught() {
        let mut bp = live();
        bp.store.free.push(0);
        broken(&bp, "live slot 0 is on a free list");
    }

    #[test]
    fn a_dirty_flag_off_the_changed_list_is_caught() {
        let mut bp = live();
        bp.store.flags[4] |= DIRTY;
        broken(&bp, "slot 4 is flagged changed");
    }

    #[test]
    fn a_box_outside_the_world_is_caught() {
        let mut bp = live();
        bp.store.aabbs[0] = Aabb::new([100.0; 3], [101.0; 3]);
        broken(&bp, "bounds");
    }

    #[test]
    fn a_listed_pair_that_no_longer_overlaps_is_caught() {
        let mut bp = live();
        // Slot 5 is unchanged since the update that paired it with slot 4: moving its box
        // behind the store's back leaves a pair whose boxes are apart.
        let far = Aabb::new([0.0, 50.0, 0.0], [1.0, 51.0, 1.0]);
        bp.store.aabbs[5] = far;
        bp.store.bounds = bp.store.bounds.map(|b| b.union(&far));
        broken(&bp, "do not overlap");
    }

    #[test]
    fn a_miscounted_pair_list_is_caught() {
        let mut bp = live();
        bp.store.listed += 1;
        broken(&bp, "the last update left");
    }

    /// [`live`] in a bounded world: the box at slot 5 (x in 2.5..3.5) lies outside it.
    fn bounded() -> BruteForce {
        let world = Aabb::new([-10.0; 3], [2.0, 10.0, 10.0]);
        let mut bp = BruteForce::new(Config::default().with_world_bounds(world));
        let unit = Aabb::new([0.0; 3], [1.0; 3]);
        for k in 0..6 {
            assert!(bp
                .insert(
                    unit.translated([k as f32 * 0.5, 0.0, 0.0]),
                    ProxyDesc::dynamic()
                )
                .is_ok());
        }
        assert!(bp.update().is_ok());
        assert_eq!(bp.store.outside, [5]);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    #[test]
    fn a_proxy_in_the_world_flagged_out_is_caught() {
        let mut bp = bounded();
        bp.store.flags[0] |= OUT;
        bp.store.flags[0] &= !WAS_IN;
        bp.store.out_count += 1;
        bp.store.outside.insert(0, 0);
        broken(&bp, "flagged out");
    }

    #[test]
    fn a_proxy_out_of_the_world_missing_from_the_list_is_caught() {
        let mut bp = bounded();
        bp.store.outside.clear();
        broken(&bp, "not listed");
    }

    #[test]
    fn a_miscount_of_the_proxies_out_is_caught() {
        let mut bp = bounded();
        bp.store.out_count = 0;
        broken(&bp, "counted out of bounds");
    }
}
