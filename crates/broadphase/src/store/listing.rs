//! Pair listing for algorithms that keep their pairs in their own lists: the events of an
//! update as ids, and the list of pairs made when asked.

use super::{Store, ALIVE, RETIRED};
use crate::pairs::{key_slots, PairList};
use crate::{Pair, ProxyId};
use std::sync::{Mutex, PoisonError};

/// The id the proxy in `slot` had at the last update, for a slot that held one then: its id
/// now if it is still live (a slot is reused only after the update that follows its removal),
/// else the id it had before its removal advanced its generation ([`RETIRED`]: did not).
#[inline]
fn id_at_last_update(flags: &[u8], generations: &[u32], slot: u32) -> ProxyId {
    let s = slot as usize;
    let generation = if flags[s] & (ALIVE | RETIRED) != 0 {
        generations[s]
    } else {
        generations[s].wrapping_sub(1)
    };
    ProxyId::from_raw_parts(slot, generation)
}

/// A list kept for reuse behind `&self` (a lock that is never contended: only the first
/// [`Store::listed_pairs`] after an update takes it). A clone starts empty.
#[derive(Debug, Default)]
pub(super) struct Spare(Mutex<Vec<Pair>>);

impl Spare {
    fn take(&self) -> Vec<Pair> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn get_mut(&mut self) -> &mut Vec<Pair> {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn capacity(&self) -> usize {
        self.0.lock().map_or(0, |v| v.capacity())
    }
}

impl Clone for Spare {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Pairs per task when [`Store::listed_pairs`] makes a long list on several threads. Tiny in
/// the crate's tests (`cfg(test)`), so that the differential suite makes lists that way.
#[cfg(not(test))]
const LIST_PIECE: usize = 1 << 14;
#[cfg(test)]
const LIST_PIECE: usize = 4;

impl Store {
    /// The id the proxy in `slot` had at the last update, for a slot the engine holds
    /// ([`was_in`](Store::was_in)), removed since or not: what a structure dump names.
    #[inline]
    pub(crate) fn id_at_last_update(&self, slot: usize) -> ProxyId {
        id_at_last_update(&self.flags, &self.generations, slot as u32)
    }

    /// Ends an update of an algorithm that keeps its pairs itself (in sorted lists, or Sap's
    /// hash table) and diffed them: `created` and `deleted` hold pair keys, without duplicates
    /// and none in both; every deleted key was a pair of the last update, no created one was.
    /// No pair set is kept here: the events name the proxies by their ids at the time
    /// ([`id_at_last_update`] for the deleted pairs, whose proxies may have been removed
    /// since), and the list of pairs is made only when asked ([`Store::listed_pairs`]).
    pub(crate) fn finish_update_listed(&mut self, created: &[u64], deleted: &[u64]) {
        debug_assert!(self.listed + created.len() >= deleted.len());
        self.listed = (self.listed + created.len()).saturating_sub(deleted.len());
        if !(created.is_empty() && deleted.is_empty()) {
            // The list of the last pairs is stale (unchanged pairs keep their ids: a removed
            // proxy's pairs are deleted, so the ids of the pairs left still hold).
            if let Some(list) = self.listed_ids.take() {
                *self.listed_spare.get_mut() = list;
            }
        }
        let (flags, generations) = (&self.flags, &self.generations);
        let now = |slot: u32| ProxyId::from_raw_parts(slot, generations[slot as usize]);
        let then = |slot: u32| id_at_last_update(flags, generations, slot);
        let events = &mut self.events;
        events.created.extend(created.iter().map(|&k| {
            let (a, b) = key_slots(k);
            Pair::new(now(a), now(b))
        }));
        events.deleted.extend(deleted.iter().map(|&k| {
            let (a, b) = key_slots(k);
            Pair::new(then(a), then(b))
        }));
        self.events.sort(self.parallel);
        if self.created_every_pair() {
            self.events_trims[0].spike();
        }
        self.list_removed();
        self.end_update();
    }

    /// Whether the update that just ended created every pair there is, and many: a one-off
    /// fill of the lists of created pairs ([`Trim::spike`](crate::slack::Trim::spike)).
    pub(crate) fn created_every_pair(&self) -> bool {
        let created = self.events.created.len();
        created >= crate::slack::SPIKE_MIN && created == self.listed
    }

    /// Lists the removed proxies that the update's deleted pairs name, with their descriptions
    /// (a removed slot keeps its last one until it is reused, after this update).
    fn list_removed(&mut self) {
        let events = &mut self.events;
        for pair in &events.deleted {
            for id in [pair.a, pair.b] {
                let s = id.index() as usize;
                if self.flags[s] & ALIVE == 0 {
                    events.removed.push((id, self.descs[s]));
                }
            }
        }
        events.removed.sort_unstable_by_key(|&(id, _)| id);
        events.removed.dedup_by_key(|&mut (id, _)| id);
    }

    /// The pairs of the last update of an algorithm that keeps them in its own lists
    /// ([`Store::finish_update_listed`]), in the order of `lists`' lists and keys. Made on the
    /// first call after an update (a long list on several threads, in pieces), then kept until
    /// the next update that changes them; the ids are those of the last update, even for a
    /// proxy removed since.
    pub(crate) fn listed_pairs<'a>(&self, lists: impl FnOnce() -> Vec<PairList<'a>>) -> &[Pair] {
        self.listed_ids.get_or_init(|| {
            let lists = lists();
            let total = lists.iter().map(|l| l.keys.len()).sum();
            debug_assert_eq!(total, self.listed, "the lists hold every pair");
            // Every place is written below: the last list's pairs are overwritten where they
            // lie, and only a longer list's tail is filled first.
            let mut out = self.listed_spare.take();
            let none = ProxyId::from_raw_parts(0, 0);
            out.resize(total, Pair::new(none, none));
            let mut pieces = Vec::with_capacity(lists.len() + total / LIST_PIECE);
            let mut rest = &mut out[..];
            for list in &lists {
                for keys in list.keys.chunks(LIST_PIECE) {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(keys.len());
                    pieces.push((head, keys, list.slots));
                    rest = tail;
                }
            }
            let then = |slot: u32| id_at_last_update(&self.flags, &self.generations, slot);
            let parallel = self.parallel && total >= 2 * LIST_PIECE;
            crate::par::each_mut(parallel, &mut pieces, |_, (out, keys, slots)| {
                for (pair, &k) in out.iter_mut().zip(keys.iter()) {
                    let (a, b) = slots(k);
                    *pair = Pair::new(then(a), then(b));
                }
            });
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aabb, Config, ProxyDesc};

    /// A listed algorithm's events and list of pairs name a removed proxy by the id it had:
    /// the generation before the removal advanced it, or the same one when the slot retired
    /// (its generation was the last).
    #[test]
    fn listed_pairs_keep_the_ids_of_removed_proxies() {
        for last_generation in [false, true] {
            let mut store = Store::new(&Config::default());
            let unit = Aabb::new([0.0; 3], [1.0; 3]);
            let a = store.insert(unit, ProxyDesc::dynamic()).unwrap();
            let b = store.insert(unit, ProxyDesc::dynamic()).unwrap();
            let a = if last_generation {
                store.generations[a.index() as usize] = u32::MAX;
                ProxyId::from_raw_parts(a.index(), u32::MAX)
            } else {
                a
            };
            let keys = [crate::pairs::pair_key(a.index(), b.index())];
            let list = || {
                vec![PairList {
                    keys: &keys,
                    slots: key_slots,
                }]
            };
            let pair = Pair::new(a, b);
            store.begin_update();
            store.finish_update_listed(&keys, &[]);
            assert_eq!(store.events.created, vec![pair]);
            store.remove(a).unwrap();
            assert_eq!(store.listed_pairs(list), &[pair], "asked after the removal");
            store.begin_update();
            store.finish_update_listed(&[], &keys);
            assert_eq!(
                store.events.deleted,
                vec![pair],
                "retired: {last_generation}"
            );
            assert_eq!(store.listed_pairs(Vec::new), &[]);
            assert_eq!(store.stats().pairs, 0);
        }
    }
}
