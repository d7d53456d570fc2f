//! The bounds of the world (a box holding every live box, kept loose between the updates
//! that tighten it) and origin shifts.

use super::{Store, ALIVE};
use crate::{Aabb, Error};

impl Store {
    #[inline]
    pub(super) fn grow_bounds(&mut self, aabb: &Aabb) {
        let grow = |b: Option<Aabb>| Some(b.map_or(*aabb, |b| b.union(aabb)));
        self.bounds = grow(self.bounds);
        self.set_bounds = grow(self.set_bounds);
    }

    pub(super) fn recompute_bounds(&mut self) {
        self.bounds_loose = 0;
        // Per axis minima and maxima in locals (growing `self.bounds` box by box stalled on
        // store forwarding), compared plainly: boxes are finite, so no NaN handling is needed
        // (it doubled the loop). A dead slot's stale box is skipped.
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for (b, &f) in self.aabbs.iter().zip(&self.flags) {
            if f & ALIVE != 0 {
                for a in 0..3 {
                    lo[a] = if b.min[a] < lo[a] { b.min[a] } else { lo[a] };
                    hi[a] = if b.max[a] > hi[a] { b.max[a] } else { hi[a] };
                }
            }
        }
        self.bounds = (self.len > 0).then(|| Aabb::new(lo, hi));
    }

    /// A box holding every live box (not always the tightest), or `None` when there is none.
    #[inline]
    #[must_use]
    pub fn bounds(&self) -> Option<Aabb> {
        if self.len == 0 {
            None
        } else {
            self.bounds
        }
    }

    /// Moves every box by `-shift` (the new origin is at `shift` in the old coordinates).
    pub(crate) fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), Error> {
        if shift.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteShift { shift });
        }
        let offset = shift.map(|v| -v);
        let Ok(world) = self.shifted_world(offset) else {
            return Err(Error::world_shift_overflow(shift));
        };
        for slot in 0..self.aabbs.len() {
            if self.flags[slot] & ALIVE != 0 && !self.aabbs[slot].translated(offset).is_valid() {
                return Err(Error::ShiftOverflow {
                    shift,
                    id: self.id_at(slot),
                });
            }
        }
        for slot in 0..self.aabbs.len() {
            if self.flags[slot] & ALIVE != 0 {
                self.aabbs[slot] = self.aabbs[slot].translated(offset);
                self.mark_dirty(slot);
            }
        }
        self.recompute_bounds();
        // The union of the boxes set since the last update may hold boxes' old places, which
        // the shift can carry past the float range (a box set back from near -f32::MAX, then
        // shifted there again, made it -inf, and Abp's ray queries lost every box). Every live
        // box is in the bounds just recomputed: they hold the boxes set, where they are now.
        if self.set_bounds.is_some() {
            self.set_bounds = self.bounds;
        }
        self.world = world;
        self.shifts += 1;
        Ok(())
    }

    /// How many origin shifts succeeded so far: an algorithm that remembers the count at its
    /// last update knows whether every box moved by a shift since.
    #[inline]
    #[must_use]
    pub fn shift_count(&self) -> u64 {
        self.shifts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, ProxyDesc, ProxyId};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Aabb),
        Remove(usize),
        Move(usize, Aabb),
        MoveAll(f32, usize),
        Shift([f32; 3]),
        Update,
    }

    fn aabb() -> impl Strategy<Value = Aabb> {
        (
            prop::array::uniform3(-50.0f32..50.0),
            prop::array::uniform3(0.0f32..5.0),
        )
            .prop_map(|(lo, size)| Aabb::new(lo, std::array::from_fn(|a| lo[a] + size[a])))
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => aabb().prop_map(Op::Insert),
            1 => any::<usize>().prop_map(Op::Remove),
            2 => (any::<usize>(), aabb()).prop_map(|(k, b)| Op::Move(k, b)),
            2 => (-3.0f32..3.0, 0usize..3).prop_map(|(d, skip)| Op::MoveAll(d, skip)),
            1 => prop::array::uniform3(-10.0f32..10.0).prop_map(Op::Shift),
            3 => Just(Op::Update),
        ]
    }

    /// The bounds hold every live box after any sequence of edits and updates, and an update
    /// after which every live box was set takes the exact union of those boxes.
    #[test]
    fn bounds_hold_every_live_box() {
        proptest!(ProptestConfig::with_cases(200), |(ops in prop::collection::vec(op(), 1..60))| {
            let mut store = Store::new(&Config::default());
            let mut live: Vec<ProxyId> = Vec::new();
            for op in ops {
                let mut all_set = false;
                match op {
                    Op::Insert(b) => live.push(store.insert(b, ProxyDesc::default()).unwrap()),
                    Op::Remove(k) if !live.is_empty() => {
                        let id = live.swap_remove(k % live.len());
                        store.remove(id).unwrap();
                    }
                    Op::Move(k, b) if !live.is_empty() => {
                        store.set_aabb(live[k % live.len()], b).unwrap();
                    }
                    Op::MoveAll(d, skip) => {
                        // Every live box but the first `skip`, in one batch (the first twice);
                        // with none skipped, in an update of its own.
                        all_set = skip == 0;
                        if all_set {
                            store.begin_update();
                            store.finish_update_listed(&[], &[]);
                        }
                        let moves: Vec<(ProxyId, Aabb)> = live
                            .iter()
                            .skip(skip)
                            .chain(live.first())
                            .map(|&id| (id, store.aabb_at(id.index() as usize).translated([d; 3])))
                            .collect();
                        store.set_aabbs(&moves).unwrap();
                    }
                    Op::Shift(s) => store.shift_origin(s).unwrap(),
                    Op::Update => {
                        store.begin_update();
                        store.finish_update_listed(&[], &[]);
                    }
                    _ => {}
                }
                if all_set {
                    store.begin_update();
                    store.finish_update_listed(&[], &[]);
                    let exact = live
                        .iter()
                        .map(|&id| *store.aabb_at(id.index() as usize))
                        .reduce(|a, b| a.union(&b));
                    prop_assert_eq!(store.bounds(), exact);
                }
                for &id in &live {
                    let b = store.aabb_at(id.index() as usize);
                    prop_assert!(store.bounds().is_some_and(|w| w.contains(b)), "{b:?} outside");
                }
                prop_assert_eq!(store.bounds().is_none(), live.is_empty());
            }
        });
    }
}
