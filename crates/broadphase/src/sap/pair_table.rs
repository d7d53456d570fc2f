//! Sap's persistent pairs: PhysX's pair manager, ours.
//!
//! Sap adds and removes pairs one at a time as its end points swap, so it keeps them in one
//! table rather than in sorted lists per part as the other engines do. The pairs' keys
//! ([`pair_key`](crate::pairs::pair_key)) live in a dense array (the order of
//! [`crate::BroadPhase::pairs`]) indexed by an open-addressing hash table keyed on the keys
//! themselves. Each update Sap diffs its pairs itself, then [`PairSet::remove_keys`] the
//! deleted ones and [`PairSet::insert_new`] the created ones: amortised O(1) per pair, and
//! pairs between two unchanged proxies are never touched.

use crate::prefetch::prefetch;

/// How many keys ahead batch operations prefetch a key's bucket.
const PREFETCH_AHEAD: usize = 8;

/// Keys from which [`PairSet::remove_keys`] first looks them all up on every thread. Tiny in
/// the crate's tests (`cfg(test)`), so that the differential suite's crowds take that path.
#[cfg(not(test))]
const PARALLEL_LOOKUPS: usize = 1 << 14;
#[cfg(test)]
const PARALLEL_LOOKUPS: usize = 16;
/// Keys per task of those look-ups.
const LOOKUP_CHUNK: usize = 4096;

/// `index` of an empty bucket.
const EMPTY: u32 = u32::MAX;

/// One slot of the hash table: finding a pair costs one cache line.
#[derive(Clone, Copy, Debug)]
struct HashSlot {
    key: u64,
    /// Index into `keys`, or `EMPTY`.
    index: u32,
}

const VACANT: HashSlot = HashSlot {
    key: 0,
    index: EMPTY,
};

/// The set of overlapping pairs that persists between updates, as pair keys.
#[derive(Clone, Debug, Default)]
pub(super) struct PairSet {
    /// The keys, densely.
    keys: Vec<u64>,
    /// Linear-probing table; its length is a power of two (or zero).
    table: Vec<HashSlot>,
    /// `64 - log2(table.len())`: Fibonacci hashing keeps the top bits.
    shift: u32,
    /// Where [`PairSet::remove_keys`] found each key before removing any (scratch).
    lookups: Vec<u32>,
}

impl PairSet {
    /// The keys of every pair, in a deterministic but unspecified order.
    #[inline]
    pub(super) fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.keys.capacity() * 8
            + self.table.capacity() * std::mem::size_of::<HashSlot>()
            + self.lookups.capacity() * 4
    }

    #[inline]
    fn home(&self, k: u64) -> usize {
        // Fibonacci hashing: multiply by 2^64/phi and keep the top bits.
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.table.len().wrapping_sub(1)
    }

    /// The bucket holding `k`, or the empty bucket where it would go, and whether it was found.
    #[inline]
    fn probe(&self, k: u64) -> (usize, bool) {
        let mask = self.mask();
        let mut s = self.home(k);
        loop {
            let b = &self.table[s];
            if b.index == EMPTY {
                return (s, false);
            }
            if b.key == k {
                return (s, true);
            }
            s = (s + 1) & mask;
        }
    }

    /// Inserts pairs known to be new (a key already in the set is skipped). A large set's
    /// buckets are all over memory: each is prefetched a few keys ahead, so that the probes
    /// find it in cache.
    pub(super) fn insert_new(&mut self, keys: &[u64]) {
        let want = (self.keys.len() + keys.len()) * 2;
        if want > self.table.len() {
            self.rehash(want.next_power_of_two().max(64));
        }
        for (n, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            let (s, found) = self.probe(k);
            if !found {
                self.table[s] = HashSlot {
                    key: k,
                    index: self.keys.len() as u32,
                };
                self.keys.push(k);
            }
        }
    }

    /// Removes the pairs of `keys` that are in the set. Each removal moves the last key of the
    /// dense array into the hole; the buckets of the keys and of those last keys are prefetched
    /// ahead, as in [`insert_new`](Self::insert_new).
    ///
    /// A key's place in the dense array is known only once its bucket is read, too late to ask
    /// for it ahead: with `parallel` and many keys, every thread first looks up a share of the
    /// keys (reading only), and the removals prefetch each place's line a few keys ahead.
    /// Without that, reading the place was three quarters of the removals on the `sizes`
    /// scene.
    pub(super) fn remove_keys(&mut self, keys: &[u64], parallel: bool) {
        if self.table.is_empty() {
            return;
        }
        let mut lookups = std::mem::take(&mut self.lookups);
        lookups.clear();
        if parallel && keys.len() >= PARALLEL_LOOKUPS && crate::par::threads() > 1 {
            lookups.resize(keys.len(), EMPTY);
            crate::par::zip_chunks(true, &mut lookups, keys, LOOKUP_CHUNK, |out, keys| {
                self.look_up(keys, out);
            });
        }
        for (n, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            // Where that key was before this batch: a removal since may have moved it, which
            // costs one wasted request, never a wrong result.
            if let Some(p) = lookups
                .get(n + PREFETCH_AHEAD)
                .and_then(|&i| self.keys.get(i as usize))
            {
                prefetch(p);
            }
            // The key that the removal after next-few will move (unless it goes itself).
            if let Some(p) = self.keys.len().checked_sub(1 + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(self.keys[p])]);
            }
            let (s, found) = self.probe(k);
            if !found {
                continue;
            }
            let i = self.table[s].index as usize;
            self.unlink(s);
            self.fill_hole(i);
        }
        self.lookups = lookups;
    }

    /// The dense index of each key, or `EMPTY`, into `out` (as long as `keys`).
    fn look_up(&self, keys: &[u64], out: &mut [u32]) {
        for (n, (at, &k)) in out.iter_mut().zip(keys).enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            let (s, found) = self.probe(k);
            *at = if found { self.table[s].index } else { EMPTY };
        }
    }

    /// Checks the table against the dense keys: each key's bucket is found by a probe and
    /// points back at it, and no other bucket is taken.
    pub(super) fn check(&self) -> Result<(), String> {
        let taken = self.table.iter().filter(|b| b.index != EMPTY).count();
        if taken != self.keys.len() {
            return Err(format!(
                "sap: the pair table has {taken} buckets taken for {} pairs",
                self.keys.len()
            ));
        }
        if !self.table.is_empty() && self.table.len() < 2 * self.keys.len() {
            return Err("sap: the pair table is over half full".into());
        }
        for (i, &k) in self.keys.iter().enumerate() {
            let found = !self.table.is_empty() && {
                let (s, found) = self.probe(k);
                found && self.table[s].index as usize == i
            };
            if !found {
                let (a, b) = crate::pairs::key_slots(k);
                return Err(format!(
                    "sap: pair ({a}, {b}) is not found in the table at its place {i}"
                ));
            }
        }
        Ok(())
    }

    /// Points the bucket of key `i` at another place: a corruption for the checks' tests.
    #[cfg(test)]
    pub(super) fn misplace_for_test(&mut self, i: usize) {
        let (s, _) = self.probe(self.keys[i]);
        self.table[s].index = (i as u32 + 1) % self.keys.len().max(1) as u32;
    }

    /// Whether the pair of key `k` is in the set.
    #[cfg(test)]
    fn contains(&self, k: u64) -> bool {
        !self.table.is_empty() && self.probe(k).1
    }

    /// Re-inserts every bucket into a table of `size` buckets.
    fn rehash(&mut self, size: usize) {
        let old = std::mem::replace(&mut self.table, vec![VACANT; size]);
        self.shift = 64 - size.trailing_zeros();
        let mask = size - 1;
        for b in old.into_iter().filter(|b| b.index != EMPTY) {
            let mut s = self.home(b.key);
            while self.table[s].index != EMPTY {
                s = (s + 1) & mask;
            }
            self.table[s] = b;
        }
    }

    /// Empties bucket `hole`, keeping every probe chain intact (backward-shift deletion).
    fn unlink(&mut self, mut hole: usize) {
        let mask = self.mask();
        let mut s = (hole + 1) & mask;
        while self.table[s].index != EMPTY {
            let home = self.home(self.table[s].key);
            // The entry at `s` may move into the hole unless its home lies cyclically in
            // (hole, s]: moving it before its home would hide it from lookups.
            let stays = if hole <= s {
                hole < home && home <= s
            } else {
                hole < home || home <= s
            };
            if !stays {
                self.table[hole] = self.table[s];
                hole = s;
            }
            s = (s + 1) & mask;
        }
        self.table[hole] = VACANT;
    }

    /// Removes key `i`, already unlinked from the table, from the dense array: the last key
    /// moves into its place, and its bucket follows it.
    fn fill_hole(&mut self, i: usize) {
        let last = self.keys.len() - 1;
        if i != last {
            let (s, _) = self.probe(self.keys[last]);
            self.table[s].index = i as u32;
        }
        self.keys.swap_remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairs::pair_key;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Removing a batch with the look-ups ahead (on every thread) removes the same pairs, and
    /// leaves the rest in the same order, as one thread: keys absent from the set and keys that
    /// earlier removals of the batch moved (whose looked-up place is stale) included.
    #[test]
    fn removals_with_look_ups_match_one_thread() {
        let n = 4 * PARALLEL_LOOKUPS as u32 + 50;
        // Every third pair, from the back (each removal moves the last key, which a later key
        // of the batch names), and keys never inserted.
        let doomed: Vec<u64> = (0..n)
            .rev()
            .filter(|i| i % 3 == 0)
            .map(|i| pair_key(i, i + 1))
            .chain((0..40).map(|i| pair_key(i, i + 7)))
            .collect();
        let run = |parallel: bool| {
            let mut set = PairSet::default();
            let keys: Vec<u64> = (0..n).map(|i| pair_key(i, i + 1)).collect();
            set.insert_new(&keys);
            set.remove_keys(&doomed, parallel);
            set
        };
        let one = run(false);
        let many = run(true);
        assert_eq!(one.keys().len(), (0..n).filter(|i| i % 3 != 0).count());
        assert_eq!(many.keys(), one.keys());
        for i in 0..n {
            let k = pair_key(i, i + 1);
            assert_eq!(many.contains(k), i % 3 != 0, "pair {i}");
            assert_eq!(one.contains(k), i % 3 != 0, "pair {i}");
        }
    }

    proptest! {
        /// The set against a BTreeSet model over many random batches of insertions of new keys
        /// and removals of any keys (present, absent, repeated).
        #[test]
        fn matches_a_model(frames in prop::collection::vec(
            (
                prop::collection::vec((0u32..40, 0u32..40), 0..60),
                prop::collection::vec((0u32..40, 0u32..40), 0..60),
                any::<bool>(),
            ),
            1..30,
        )) {
            let mut set = PairSet::default();
            let mut model: BTreeSet<u64> = BTreeSet::new();
            for (inserts, removals, parallel) in frames {
                let gone: Vec<u64> = removals
                    .iter()
                    .filter(|(a, b)| a != b)
                    .map(|&(a, b)| pair_key(a, b))
                    .collect();
                set.remove_keys(&gone, parallel);
                for k in &gone {
                    model.remove(k);
                }
                // New keys only, once each, as Sap hands them.
                let mut new: Vec<u64> = inserts
                    .iter()
                    .filter(|(a, b)| a != b)
                    .map(|&(a, b)| pair_key(a, b))
                    .filter(|k| !model.contains(k))
                    .collect();
                new.sort_unstable();
                new.dedup();
                set.insert_new(&new);
                model.extend(&new);
                let held: BTreeSet<u64> = set.keys().iter().copied().collect();
                prop_assert_eq!(held.len(), set.keys().len(), "a key held twice");
                prop_assert_eq!(&held, &model);
                for &k in &model {
                    prop_assert!(set.contains(k));
                }
                for &k in &gone {
                    prop_assert_eq!(set.contains(k), model.contains(&k));
                }
            }
        }
    }
}
