//! Sap's invariants ([`SapEngine::check`]): per axis, the awake endpoints sorted with each
//! box's minimum before its maximum and carrying its keys, the asleep lists sorted and holding
//! each asleep box once; per slot, its state and keys as the store had them at the last
//! update; the pair table consistent, and every pair overlapping on all three axes.

use super::axis::{Axis, End, ASLEEP, AWAKE, DROP, FIXED, FRESH, GOING, MOVED};
use super::{filter_key, keys_overlap, SapEngine};
use crate::encode::box_keys;
use crate::gallop::gallop;
use crate::pairs::key_slots;
use crate::prune::signed;
use crate::store::Store;

impl SapEngine {
    pub(super) fn check(&self, store: &Store) -> Result<(), String> {
        let n = store.slot_count();
        let held = |s: usize| s < self.state.len() && self.state[s] & (AWAKE | ASLEEP) != 0;
        for s in 0..n.max(self.state.len()) {
            let in_store = s < n && store.was_in(s);
            if in_store != held(s) {
                return Err(format!(
                    "sap: slot {s} is held by the store: {in_store}, awake or asleep here: {}",
                    held(s)
                ));
            }
            if !held(s) {
                continue;
            }
            let st = self.state[s];
            if st & (MOVED | FRESH | DROP | GOING) != 0 || st & AWAKE != 0 && st & ASLEEP != 0 {
                return Err(format!("sap: slot {s} has state {st:#b} between updates"));
            }
            if store.is_dirty(s) {
                continue;
            }
            let desc = store.desc_at(s);
            if self.keys[s] != box_keys(store.aabb_at(s)) {
                return Err(format!(
                    "sap: slot {s}'s keys are not those of its box {:?}",
                    store.aabb_at(s)
                ));
            }
            if (st & FIXED != 0) != desc.is_fixed() || self.filter[s] != filter_key(desc) {
                return Err(format!("sap: slot {s}'s fixed bit or filter key is stale"));
            }
        }
        let awake = (0..self.state.len())
            .filter(|&s| self.state[s] & AWAKE != 0)
            .count();
        let asleep = (0..self.state.len())
            .filter(|&s| self.state[s] & ASLEEP != 0)
            .count();
        for axis in &self.axes {
            self.check_awake(axis, awake)?;
            self.check_asleep(axis, asleep)?;
        }
        self.table.check()?;
        for &k in self.table.keys() {
            let (a, b) = key_slots(k);
            let (x, y) = (a as usize, b as usize);
            if !(held(x) && held(y) && keys_overlap(&self.keys[x], &self.keys[y])) {
                return Err(format!(
                    "sap: pair ({a}, {b}) is not of two held boxes overlapping on all axes"
                ));
            }
            if self.state[x] & self.state[y] & FIXED != 0 {
                return Err(format!("sap: pair ({a}, {b}) is of two fixed boxes"));
            }
        }
        Ok(())
    }

    /// The awake array of `axis`: sorted, two endpoints per awake box (its minimum first),
    /// each with the box's keys and its place among the asleep endpoints, and the widest box
    /// within `awake_width`.
    fn check_awake(&self, axis: &Axis, awake: usize) -> Result<(), String> {
        let a = axis.index;
        if axis.ends.len() != 2 * awake {
            return Err(format!(
                "sap: axis {a} has {} endpoints for {awake} awake boxes",
                axis.ends.len()
            ));
        }
        if let Some(i) = axis
            .ends
            .windows(2)
            .position(|w| w[0].order() > w[1].order())
        {
            return Err(format!(
                "sap: axis {a}'s endpoints {i} and {} are out of order",
                i + 1
            ));
        }
        // Per slot: 1 once its minimum is met, 2 once its maximum is.
        let mut seen = vec![0u8; self.state.len()];
        let (by_min, by_max) = (
            axis.asleep_min.signed_min_keys(),
            axis.asleep_max.signed_min_keys(),
        );
        for e in &axis.ends {
            let s = e.slot() as usize;
            if s >= self.state.len() || self.state[s] & AWAKE == 0 {
                return Err(format!(
                    "sap: axis {a} holds an endpoint of slot {s}, not awake"
                ));
            }
            let want = u8::from(e.is_max()) + 1;
            if seen[s] + 1 != want {
                return Err(format!(
                    "sap: axis {a}: slot {s}'s endpoints are not its minimum then its maximum"
                ));
            }
            seen[s] = want;
            let mut expected = End::new(&self.keys[s], a, e.slot(), e.is_max());
            let c = signed(e.coord);
            expected.finger = if e.is_max() {
                gallop(by_min, 0, |k| k <= c)
            } else {
                gallop(by_max, 0, |k| k < c)
            } as u32;
            if *e != expected {
                return Err(format!(
                    "sap: axis {a}: slot {s}'s endpoint {e:?} should be {expected:?}"
                ));
            }
            if !e.is_max() && super::axis::key_width(e.coord, e.other) > axis.awake_width {
                return Err(format!(
                    "sap: axis {a}: slot {s} is wider than the awake width"
                ));
            }
        }
        Ok(())
    }

    /// The asleep lists of `axis`: sorted, each asleep box once in each with its keys (by its
    /// minimum, and by its maximum, which that list keeps first), and the entries of boxes no
    /// longer asleep counted as stale.
    fn check_asleep(&self, axis: &Axis, asleep: usize) -> Result<(), String> {
        let a = axis.index;
        for (list, by_max) in [(&axis.asleep_min, false), (&axis.asleep_max, true)] {
            list.check()
                .map_err(|e| format!("sap: axis {a}'s asleep list: {e}"))?;
            if list.len() != self.asleep_entries {
                return Err(format!(
                    "sap: axis {a}'s asleep list holds {} entries, {} are counted",
                    list.len(),
                    self.asleep_entries
                ));
            }
            let mut seen = vec![false; self.state.len()];
            let mut stale = 0;
            for i in 0..list.len() {
                let s = list.id(i) as usize;
                if s >= self.state.len() || self.state[s] & ASLEEP == 0 {
                    stale += 1;
                    continue;
                }
                if std::mem::replace(&mut seen[s], true) {
                    return Err(format!("sap: axis {a}: asleep slot {s} is listed twice"));
                }
                // A maximum's view of its box keeps the maximum first, as that list does.
                let e = End::new(&self.keys[s], a, s as u32, by_max).encoded();
                if [list.min_x(i), list.max_x(i)] != [e.min_x, e.max_x] || list.uv(i) != e.uv {
                    return Err(format!(
                        "sap: axis {a}: asleep slot {s}'s entry is not its box's keys"
                    ));
                }
            }
            if stale != self.stale || list.len() - stale != asleep {
                return Err(format!(
                    "sap: axis {a}: {stale} stale asleep entries ({} counted) and {} live \
                     ones for {asleep} asleep boxes",
                    self.stale,
                    list.len() - stale
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, BroadPhase, Config, ProxyDesc, Sap, SapSettings};

    /// A few boxes, some asleep, some awake, with pairs.
    fn live() -> Sap {
        let settings = SapSettings {
            sleep_after: Some(1),
            ..SapSettings::default()
        };
        let mut bp = Sap::with_settings(Config::default(), settings);
        let ids: Vec<_> = (0..8)
            .map(|k| {
                let lo = [k as f32 * 0.75, 0.0, (k % 3) as f32];
                bp.insert(Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::dynamic())
            })
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        assert!(bp.update().is_ok());
        assert!(bp.set_aabb(ids[0], Aabb::new([0.0; 3], [1.0; 3])).is_ok());
        assert!(bp.update().is_ok());
        // Two boxes move: they wake up and stay awake.
        for &id in &ids[2..4] {
            let b = bp.aabb(id).unwrap_or(Aabb::point([0.0; 3]));
            assert!(bp.set_aabb(id, b.translated([0.25, 0.0, 0.0])).is_ok());
        }
        assert!(bp.update().is_ok());
        assert!(!bp.engine.axes[0].ends.is_empty() && !bp.engine.axes[0].asleep_min.is_empty());
        assert!(bp.engine.table.keys().len() > 2);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    #[test]
    fn endpoints_out_of_order_are_caught() {
        let mut bp = live();
        let ends = &mut bp.engine.axes[1].ends;
        let last = ends.len() - 1;
        ends.swap(0, last);
        bp.assert_broken("out of order");
    }

    #[test]
    fn a_stale_asleep_key_is_caught() {
        let mut bp = live();
        bp.engine.axes[2].asleep_min.set_min_u_for_test(0, 7);
        bp.assert_broken("entry is not its box's keys");
    }

    #[test]
    fn a_misplaced_pair_is_caught() {
        let mut bp = live();
        bp.engine.table.misplace_for_test(0);
        bp.assert_broken("not found in the table");
    }

    #[test]
    fn a_miscounted_stale_entry_is_caught() {
        let mut bp = live();
        bp.engine.stale += 1;
        bp.assert_broken("stale asleep entries");
    }
}
