//! Moves: one box, or a batch checked and written in two passes (on several threads for a
//! large batch, through [`scatter`]).

use super::{scatter, Store, BOX_SET, DIRTY};
use crate::prefetch::{prefetch, prefetch_whole};
use crate::{Aabb, Error, ProxyId};

/// How many items ahead [`Store::set_aabbs`], [`Store::insert_batch`] and
/// [`Store::remove_batch`] prefetch a proxy's entries.
pub(super) const MOVE_AHEAD: usize = 8;

/// Moves per batch from which [`Store::set_aabbs`] spreads them over threads.
const PARALLEL_MOVES: usize = 1 << 15;

/// What [`write_moves`] did: changed slots listed, slots newly [`BOX_SET`], boxes that moved
/// (set to a box other than the one they had), and the union of the boxes that moved.
pub(super) struct Written {
    pub(super) changed: usize,
    pub(super) newly_set: usize,
    pub(super) moved: usize,
    pub(super) lo: [f32; 3],
    pub(super) hi: [f32; 3],
}

impl Written {
    /// Nothing written.
    pub(super) const NONE: Self = Self {
        changed: 0,
        newly_set: 0,
        moved: 0,
        lo: [f32::INFINITY; 3],
        hi: [f32::NEG_INFINITY; 3],
    };

    /// Widens the union by a written box, compared plainly (validated boxes have no NaN;
    /// `f32::min` handles NaN at a cost in a loop this hot).
    #[inline(always)]
    pub(super) fn grow(&mut self, aabb: &Aabb) {
        for a in 0..3 {
            self.lo[a] = if aabb.min[a] < self.lo[a] {
                aabb.min[a]
            } else {
                self.lo[a]
            };
            self.hi[a] = if aabb.max[a] > self.hi[a] {
                aabb.max[a]
            } else {
                self.hi[a]
            };
        }
    }

    /// Adds what another piece wrote.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    pub(super) fn add(&mut self, other: &Written) {
        self.changed += other.changed;
        self.newly_set += other.newly_set;
        self.moved += other.moved;
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(other.lo[a]);
            self.hi[a] = self.hi[a].max(other.hi[a]);
        }
    }
}

/// Pass two of [`Store::set_aabbs`] on the part of the store's arrays that starts at slot
/// `base` (checked moves of live proxies within it): writes the boxes, flags the slots and
/// lists the newly changed ones at the front of `dirty` (as long as `items`).
///
/// The union of the boxes stays in registers, per axis and compared plainly as in
/// `recompute_bounds` (the boxes were validated). The changed slots are written into room made
/// beforehand and counted without a branch: pushing kept the list's length going to memory
/// and back at every box.
pub(super) fn write_moves(
    aabbs: &mut [Aabb],
    flags: &mut [u8],
    base: usize,
    items: &[(ProxyId, Aabb)],
    dirty: &mut [u32],
) -> Written {
    let mut w = Written::NONE;
    for (k, &(id, aabb)) in items.iter().enumerate() {
        if let Some((ahead, _)) = items.get(k + MOVE_AHEAD) {
            let i = (ahead.index() as usize).wrapping_sub(base);
            if let (Some(a), Some(f)) = (aabbs.get(i), flags.get(i)) {
                prefetch_whole(a);
                prefetch(f);
            }
        }
        // Checked: a live slot within this part.
        let i = id.index() as usize - base;
        // In bounds: at most one entry per item.
        dirty[w.changed] = id.index();
        write_one(&mut aabbs[i], &mut flags[i], aabb, &mut w);
    }
    w
}

/// Writes one checked move into its slot; returns whether it made the slot newly changed.
///
/// A box set to the box it already has changes nothing an algorithm sees: engines that set
/// every body's box every frame, resting or not, would otherwise pay a moving frame for a
/// still one. Such a slot keeps its flags, so the update does not visit it (a slot changed
/// earlier in the frame stays changed). It is not counted as set either: a frame that sets
/// every box but some to themselves keeps the world's bounds loose (they still hold every
/// box) instead of taking the union of the set boxes. Nor is the slot written: a frame of
/// still boxes then only reads the store, where writing the boxes back made every line of
/// the array go back to memory.
#[inline(always)]
pub(super) fn write_one(stored: &mut Aabb, flag: &mut u8, aabb: Aabb, w: &mut Written) -> bool {
    let same = *stored == aabb;
    if !same {
        *stored = aabb;
        w.grow(&aabb);
    }
    w.moved += usize::from(!same);
    let f = *flag;
    let set = if same { 0 } else { BOX_SET | DIRTY };
    *flag = f | set;
    w.newly_set += usize::from(!same && f & BOX_SET == 0);
    let new = !same && f & DIRTY == 0;
    w.changed += usize::from(new);
    new
}

impl Store {
    pub(crate) fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), Error> {
        let slot = self.slot(id)?;
        aabb.validate()?;
        // As in a batch ([`write_one`]): a box set to the box it has changes nothing.
        if self.aabbs[slot] == aabb {
            return Ok(());
        }
        self.aabbs[slot] = aabb;
        self.grow_bounds(&aabb);
        self.bounds_loose += 1;
        self.boxes_set += usize::from(self.flags[slot] & BOX_SET == 0);
        self.flags[slot] |= BOX_SET;
        self.mark_dirty(slot);
        Ok(())
    }

    /// All or nothing: every item is checked before the first box is written. A frame's moves
    /// after churn come in no slot order, and each proxy's entries cost a trip to memory: the
    /// entries of the item [`MOVE_AHEAD`] places on are prefetched before they are needed.
    ///
    /// A large batch in increasing slot order (a frame that moves everything, handed over in
    /// the order the proxies were made) is checked and written by several threads, each its
    /// own piece of the batch and so its own range of slots: what a frame does on one thread
    /// before the algorithm can start. A large batch in another order (after churn, reused
    /// slots are out of order) is sorted out by slot range first, then each range written by
    /// its own thread. The result is the one of a single thread.
    pub(crate) fn set_aabbs(&mut self, items: &[(ProxyId, Aabb)]) -> Result<(), Error> {
        let pieces = self.pieces_for(items.len());
        let mut scatter = std::mem::take(&mut self.scatter);
        let checked = if pieces > 1 {
            scatter::check_pieces(self, items, pieces, &mut scatter)
        } else {
            self.check_moves(items).map(|c| Checked {
                increasing: false,
                ..c
            })
        };
        let Checked { increasing, still } = match checked {
            Ok(checked) => checked,
            Err(e) => {
                self.scatter = scatter;
                return Err(e);
            }
        };
        debug_assert!(!increasing || items.windows(2).all(|w| w[0].0.index() < w[1].0.index()));
        // The still items change nothing: pass two starts after them (scattered pieces were
        // listed by their place in the whole batch, and write it whole unless it is all still).
        let moving = &items[still..];
        let mut dirty = std::mem::take(&mut self.dirty);
        let before = dirty.len();
        let room = if moving.is_empty() { 0 } else { items.len() };
        // Grown by an eighth, not doubled: the list is as long as a frame's changes.
        crate::slack::grow(&mut dirty, room);
        dirty.resize(before + room, 0);
        let written = if moving.is_empty() {
            Written::NONE
        } else if increasing {
            scatter::write_pieces(self, moving, pieces, &mut dirty[before..])
        } else if pieces > 1 {
            scatter::write_scattered(self, items, &mut scatter, &mut dirty[before..])
        } else {
            write_moves(
                &mut self.aabbs,
                &mut self.flags,
                0,
                moving,
                &mut dirty[before..],
            )
        };
        dirty.truncate(before + written.changed);
        self.dirty = dirty;
        self.scatter = scatter;
        self.boxes_set += written.newly_set;
        if written.moved > 0 {
            self.grow_bounds(&Aabb::new(written.lo, written.hi));
        }
        // Boxes set to themselves loosen nothing: counting them made a frame of still boxes
        // recompute the bounds from every box at every update.
        self.bounds_loose += written.moved;
        Ok(())
    }

    /// How many threads [`Store::set_aabbs`] spreads a batch of `len` moves over.
    fn pieces_for(&self, len: usize) -> usize {
        if self.parallel && len >= PARALLEL_MOVES {
            crate::par::threads().min(len / (PARALLEL_MOVES / 2)).max(1)
        } else {
            1
        }
    }

    /// Pass one of [`Store::set_aabbs`]: the first item that is not a live proxy with a valid
    /// box, as its error; else whether the items' slots increase, and how many items from the
    /// first set a box to the box it already has.
    ///
    /// Those are compared here, in the pass that reads each slot's generation and flags
    /// anyway: a frame that sets every box to itself (bodies at rest, reported all the same)
    /// then reads each item once, and pass two has nothing to write. The comparing stops at
    /// the first box that moved: a moving frame compares one box.
    pub(super) fn check_moves(&self, items: &[(ProxyId, Aabb)]) -> Result<Checked, Error> {
        let mut increasing = true;
        let mut last = None;
        let mut still = 0;
        for (k, (id, aabb)) in items.iter().enumerate() {
            if let Some((ahead, _)) = items.get(k + MOVE_AHEAD) {
                let i = ahead.index() as usize;
                if let (Some(g), Some(f)) = (self.generations.get(i), self.flags.get(i)) {
                    prefetch(g);
                    prefetch(f);
                }
                if still == k {
                    if let Some(a) = self.aabbs.get(i) {
                        prefetch_whole(a);
                    }
                }
            }
            let slot = self.slot(*id)?;
            aabb.validate()?;
            increasing &= last < Some(id.index());
            last = Some(id.index());
            if still == k && self.aabbs[slot] == *aabb {
                still += 1;
            }
        }
        Ok(Checked { increasing, still })
    }
}

/// What pass one of [`Store::set_aabbs`] found in a batch (or a piece of it) of valid moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Checked {
    /// Whether the items' slots increase through the batch.
    pub(super) increasing: bool,
    /// How many items, from the first, set a box to the box it already has.
    pub(super) still: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, ProxyDesc};

    /// A store with `n` proxies, a few removed and a few already changed in this update.
    fn loaded(n: usize, parallel: bool) -> (Store, Vec<ProxyId>) {
        let mut store = Store::new(&Config::default().with_parallel(parallel));
        let ids: Vec<ProxyId> = (0..n)
            .map(|i| {
                let lo = [(i % 97) as f32, (i % 89) as f32, (i / 1000) as f32];
                store.insert(Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::default())
            })
            .collect::<Result<_, _>>()
            .unwrap();
        store.begin_update();
        store.finish_update_listed(&[], &[]);
        for &id in ids.iter().step_by(1001) {
            store.remove(id).unwrap();
        }
        for &id in ids.iter().skip(7).step_by(503) {
            if store.slot(id).is_ok() {
                store.set_aabb(id, Aabb::point([-3.0; 3])).unwrap();
            }
        }
        (store, ids)
    }

    /// Everything a batch of moves changes in the store.
    fn state(s: &Store) -> impl PartialEq + std::fmt::Debug {
        (
            s.aabbs.clone(),
            s.flags.clone(),
            s.dirty.clone(),
            s.bounds,
            s.set_bounds,
            s.boxes_set,
        )
    }

    /// A large batch gives the same store on two threads as on one: in slot order (written in
    /// pieces), out of order, with a proxy twice (to the same box or to two) or in two ordered
    /// halves (sorted out by slot range, then written range by range), and with faults (the
    /// first one named, nothing written).
    #[test]
    fn moves_in_pieces_match_one_thread() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let n = 3 * PARALLEL_MOVES;
        let moved = |ids: &[ProxyId], store: &Store| -> Vec<(ProxyId, Aabb)> {
            ids.iter()
                .filter(|&&id| store.slot(id).is_ok())
                .map(|&id| {
                    (
                        id,
                        store
                            .aabb_at(id.index() as usize)
                            .translated([0.5, -0.25, 2.0]),
                    )
                })
                .collect()
        };
        let (reference, ids) = loaded(n, false);
        let in_order = moved(&ids, &reference);
        let mut shuffled = in_order.clone();
        shuffled.swap(10, 2 * PARALLEL_MOVES);
        shuffled.push(shuffled[5]);
        // Every item out of place (a stride through the batch), a proxy moved twice to two
        // boxes (the last one stays), and one twice to the same box.
        let len = in_order.len();
        let mut scattered: Vec<(ProxyId, Aabb)> =
            (0..len).map(|k| in_order[(k * 7919) % len]).collect();
        scattered.push((in_order[3].0, in_order[3].1.translated([1.0; 3])));
        scattered.push(scattered[len / 2]);
        // Each half in order, the second starting below the first.
        let mut rotated = in_order.clone();
        rotated.rotate_left(in_order.len() / 2);
        // Every other proxy set to the box it has: those slots are not listed as changed.
        let still: Vec<(ProxyId, Aabb)> = scattered
            .iter()
            .enumerate()
            .map(|(k, &(id, aabb))| {
                let stored = *reference.aabb_at(id.index() as usize);
                (id, if k % 2 == 0 { stored } else { aabb })
            })
            .collect();
        // The first half set to the boxes they have, in order and scattered: pass two
        // starts after them, or writes the whole batch.
        let half_still: Vec<(ProxyId, Aabb)> = in_order
            .iter()
            .enumerate()
            .map(|(k, &(id, aabb))| {
                let stored = *reference.aabb_at(id.index() as usize);
                (id, if k < len / 2 { stored } else { aabb })
            })
            .collect();
        let mut half_still_scattered = half_still.clone();
        half_still_scattered[len / 2..].reverse();
        let mut faulty = in_order.clone();
        let last = faulty.len() - 1;
        faulty[last].1 = Aabb::new([1.0; 3], [0.0; 3]);
        faulty[PARALLEL_MOVES + 3].0 = ids[0];
        for batch in [
            &in_order,
            &shuffled,
            &scattered,
            &rotated,
            &still,
            &half_still,
            &half_still_scattered,
            &faulty,
        ] {
            let (mut one, _) = loaded(n, false);
            let (mut two, _) = loaded(n, true);
            let before = state(&two);
            let r1 = one.set_aabbs(batch).map_err(|e| e.to_string());
            let r2 = pool
                .install(|| two.set_aabbs(batch))
                .map_err(|e| e.to_string());
            assert_eq!(r1, r2);
            assert_eq!(state(&one), state(&two));
            if let Err(e) = r2 {
                assert_eq!(state(&two), before, "a failed batch changes nothing");
                assert!(e.contains("stale"), "{e}");
            }
        }
        // The same stores through batch after batch: the lists kept for out-of-order batches
        // start empty each time.
        let (mut one, _) = loaded(n, false);
        let (mut two, _) = loaded(n, true);
        for batch in [
            &scattered, &faulty, &rotated, &shuffled, &in_order, &scattered,
        ] {
            let r1 = one.set_aabbs(batch).map_err(|e| e.to_string());
            let r2 = pool
                .install(|| two.set_aabbs(batch))
                .map_err(|e| e.to_string());
            assert_eq!(r1, r2);
            assert_eq!(state(&one), state(&two));
            one.begin_update();
            one.finish_update_listed(&[], &[]);
            two.begin_update();
            two.finish_update_listed(&[], &[]);
        }
    }

    /// A box set to the box it has is flagged as set but not listed as changed, one at a time
    /// and in a batch; a slot changed earlier in the update stays listed.
    #[test]
    fn a_box_set_to_itself_is_not_a_change() {
        for parallel in [false, true] {
            let (mut store, ids) = loaded(40, parallel);
            store.begin_update();
            store.finish_update_listed(&[], &[]);
            assert!(store.dirty.is_empty());
            let boxes: Vec<(ProxyId, Aabb)> = ids
                .iter()
                .filter(|&&id| store.slot(id).is_ok())
                .map(|&id| (id, *store.aabb_at(id.index() as usize)))
                .collect();
            let (loose, bounds) = (store.bounds_loose, store.bounds);
            store.set_aabbs(&boxes).unwrap();
            store.set_aabb(boxes[3].0, boxes[3].1).unwrap();
            assert_eq!(
                (store.bounds_loose, store.bounds),
                (loose, bounds),
                "still boxes loosen nothing"
            );
            assert_eq!(
                store.check_moves(&boxes).unwrap().still,
                boxes.len(),
                "every box is still"
            );
            assert!(
                store.dirty.is_empty(),
                "parallel {parallel}: {:?}",
                store.dirty
            );
            assert_eq!(store.boxes_set, 0);
            let (id, aabb) = boxes[5];
            store.set_aabb(id, aabb.translated([1.0; 3])).unwrap();
            store.set_aabbs(&[(id, aabb.translated([1.0; 3]))]).unwrap();
            assert_eq!(store.dirty, [id.index()]);
        }
    }
}
