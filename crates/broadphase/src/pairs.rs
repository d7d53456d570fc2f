//! The persistent pair set and its created/deleted diffing (PhysX's pair manager, ours).
//!
//! Pairs live in a dense array (the order [`crate::BroadPhase::pairs`] returns) indexed by an
//! open-addressing hash table keyed on the two slot indices. Each update the algorithm
//! [`add`](PairSet::add)s every overlapping, allowed pair it finds among the proxies that changed;
//! [`finish`](PairSet::finish) then reports as created the pairs that were not there before, and
//! as deleted the pairs with a changed proxy that were not found again. Pairs between two
//! unchanged proxies are kept without being tested: their boxes did not move.
//!
//! Every operation is amortised O(1) per pair; `finish` reads the whole array once.

use crate::{Pair, PairEvents, ProxyId};

const EMPTY: u32 = u32::MAX;
/// Set on a pair first added during the current update.
const NEW: u8 = 1;
/// Set on a pair found (again) during the current update.
const SEEN: u8 = 2;

/// The set of overlapping pairs that persists between updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct PairSet {
    /// The pairs, densely.
    pairs: Vec<Pair>,
    /// `key(a, b)` of each pair, parallel to `pairs`.
    keys: Vec<u64>,
    /// `NEW | SEEN` bits of each pair, parallel to `pairs`.
    flags: Vec<u8>,
    /// Linear-probing table of indices into `pairs`; its length is a power of two (or zero).
    table: Vec<u32>,
    /// `64 - log2(table.len())`: Fibonacci hashing keeps the top bits.
    shift: u32,
}

#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

impl PairSet {
    /// The pairs, in a deterministic but unspecified order.
    #[inline]
    pub(crate) fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.pairs.capacity() * std::mem::size_of::<Pair>()
            + self.keys.capacity() * 8
            + self.flags.capacity()
            + self.table.capacity() * 4
    }

    #[inline]
    fn slot_of(&self, k: u64) -> usize {
        // Fibonacci hashing: multiply by 2^64/phi and keep the top bits.
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.table.len().wrapping_sub(1)
    }

    /// The table slot holding `k`, or the empty slot where it would go.
    #[inline]
    fn probe(&self, k: u64) -> (usize, Option<usize>) {
        let mask = self.mask();
        let mut s = self.slot_of(k);
        loop {
            let t = self.table[s];
            if t == EMPTY {
                return (s, None);
            }
            if self.keys[t as usize] == k {
                return (s, Some(t as usize));
            }
            s = (s + 1) & mask;
        }
    }

    /// Records that `x` and `y` overlap and are allowed to pair in this update.
    #[inline]
    pub(crate) fn add(&mut self, x: ProxyId, y: ProxyId) {
        let p = Pair::new(x, y);
        let k = key(p.a.index(), p.b.index());
        if (self.pairs.len() + 1) * 2 > self.table.len() {
            self.rehash(((self.pairs.len() + 1) * 2).next_power_of_two().max(64));
        }
        match self.probe(k) {
            (_, Some(i)) => self.flags[i] |= SEEN,
            (s, None) => {
                self.table[s] = self.pairs.len() as u32;
                self.pairs.push(p);
                self.keys.push(k);
                self.flags.push(NEW | SEEN);
            }
        }
    }

    /// Whether the pair of slots `a` and `b` is in the set.
    #[cfg(test)]
    pub(crate) fn contains(&self, a: u32, b: u32) -> bool {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        !self.table.is_empty() && self.probe(key(a, b)).1.is_some()
    }

    fn rehash(&mut self, size: usize) {
        self.table.clear();
        self.table.resize(size, EMPTY);
        self.shift = 64 - size.trailing_zeros();
        let mask = size - 1;
        for (i, &k) in self.keys.iter().enumerate() {
            let mut s = self.slot_of(k);
            while self.table[s] != EMPTY {
                s = (s + 1) & mask;
            }
            self.table[s] = i as u32;
        }
    }

    /// Takes pair `i` out of the table, keeping every probe chain intact (backward shift).
    fn unlink(&mut self, i: usize) {
        let mask = self.mask();
        let (mut hole, _) = self.probe(self.keys[i]);
        let mut s = (hole + 1) & mask;
        while self.table[s] != EMPTY {
            let t = self.table[s];
            let home = self.slot_of(self.keys[t as usize]);
            // The entry at `s` may move into the hole unless its home lies cyclically in
            // (hole, s]: moving it before its home would hide it from lookups.
            let stays = if hole <= s {
                hole < home && home <= s
            } else {
                hole < home || home <= s
            };
            if !stays {
                self.table[hole] = t;
                hole = s;
            }
            s = (s + 1) & mask;
        }
        self.table[hole] = EMPTY;
    }

    /// Removes pair `i` from the dense array and the table (the last pair takes its place).
    fn remove_at(&mut self, i: usize) {
        self.unlink(i);
        let last = self.pairs.len() - 1;
        if i != last {
            let (s, _) = self.probe(self.keys[last]);
            self.table[s] = i as u32;
        }
        self.pairs.swap_remove(i);
        self.keys.swap_remove(i);
        self.flags.swap_remove(i);
    }

    /// Ends an update: pairs added for the first time go to `events.created`; pairs with a
    /// changed proxy (`changed(slot)`) that were not added again go to `events.deleted` and
    /// leave the set. Both lists come out sorted.
    pub(crate) fn finish(&mut self, changed: impl Fn(u32) -> bool, events: &mut PairEvents) {
        let mut i = 0;
        while i < self.pairs.len() {
            let f = self.flags[i];
            if f & NEW != 0 {
                events.created.push(self.pairs[i]);
            } else if f & SEEN == 0 {
                let p = self.pairs[i];
                if changed(p.a.index()) || changed(p.b.index()) {
                    events.deleted.push(p);
                    self.remove_at(i);
                    continue;
                }
            }
            self.flags[i] = 0;
            i += 1;
        }
        // Give memory back once the set has shrunk well below its peak.
        if self.table.len() > 1024 && self.pairs.len() * 8 < self.table.len() {
            self.pairs.shrink_to(self.pairs.len() * 2);
            self.keys.shrink_to(self.pairs.len() * 2);
            self.flags.shrink_to(self.pairs.len() * 2);
            self.rehash((self.pairs.len() * 4).next_power_of_two().max(64));
        }
        events.sort();
    }

    #[cfg(test)]
    pub(crate) fn len_for_test(&self) -> usize {
        self.pairs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn id(i: u32) -> ProxyId {
        ProxyId::from_raw_parts(i, 0)
    }

    proptest! {
        /// The set against a BTreeSet model over many random updates.
        #[test]
        fn matches_a_model(frames in prop::collection::vec(
            (prop::collection::vec((0u32..40, 0u32..40), 0..60), prop::collection::vec(0u32..40, 0..10)),
            1..30,
        )) {
            let mut set = PairSet::default();
            let mut model: BTreeSet<(u32, u32)> = BTreeSet::new();
            let mut events = PairEvents::default();
            for (adds, changed) in frames {
                // An update re-finds the model's pairs with no changed proxy, as algorithms do
                // not: they are kept untested. Here only changed proxies' pairs are re-added.
                let changed: BTreeSet<u32> = changed.into_iter().collect();
                let mut found = BTreeSet::new();
                for (a, b) in adds {
                    if a != b && (changed.contains(&a) || changed.contains(&b)) {
                        found.insert((a.min(b), a.max(b)));
                    }
                }
                for &(a, b) in &found {
                    set.add(id(a), id(b));
                }
                events.clear();
                set.finish(|s| changed.contains(&s), &mut events);
                let kept: BTreeSet<(u32, u32)> = model
                    .iter()
                    .copied()
                    .filter(|(a, b)| !changed.contains(a) && !changed.contains(b))
                    .collect();
                let next: BTreeSet<(u32, u32)> = kept.union(&found).copied().collect();
                let created: Vec<Pair> = next.difference(&model).map(|&(a, b)| Pair::new(id(a), id(b))).collect();
                let deleted: Vec<Pair> = model.difference(&next).map(|&(a, b)| Pair::new(id(a), id(b))).collect();
                prop_assert_eq!(events.created(), &created[..]);
                prop_assert_eq!(events.deleted(), &deleted[..]);
                model = next;
                prop_assert_eq!(set.len_for_test(), model.len());
                for &(a, b) in &model {
                    prop_assert!(set.contains(a, b));
                }
            }
        }
    }
}
