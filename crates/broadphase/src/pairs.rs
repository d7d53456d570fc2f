//! The persistent pairs and their created/deleted diffing.
//!
//! Two ways to keep them. Abp, Mbp, QuadTree and Grid keep their pairs in their own parts
//! (a cell, a bucket, a tree), each part's as a sorted list of keys that [`diff_pairs`] diffs
//! against the part's pairs found this update; the store turns the candidates into events and
//! makes the list of pairs as ids only when asked (`Store::listed_pairs`), so a frame pays
//! for the pairs that changed, not for a table of all of them. Sap adds and removes pairs one
//! at a time as its end points swap, and keeps them in a [`PairSet`] (PhysX's pair manager,
//! ours), below.
//!
//! In a [`PairSet`], pairs live in a dense array (the order [`crate::BroadPhase::pairs`] returns) indexed by an
//! open-addressing hash table keyed on the two slot indices. Each update the algorithm
//! [`add`](PairSet::add)s every overlapping, allowed pair it finds among the proxies that changed;
//! [`finish`](PairSet::finish) then reports as created the pairs that were not there before, and
//! as deleted the pairs with a changed proxy that were not found again. Pairs between two
//! unchanged proxies are kept without being tested: their boxes did not move.
//!
//! Every operation is amortised O(1) per pair; `finish` reads the whole array once.

use crate::prefetch::prefetch;
use crate::{Pair, PairEvents, ProxyId};

/// How many keys ahead batch operations ask for a key's bucket.
const PREFETCH_AHEAD: usize = 8;

/// Keys from which [`PairSet::remove_keys`] first looks them all up on every thread. Tiny with
/// the `testing` feature, so that the differential suite's crowds take that path.
#[cfg(not(feature = "testing"))]
const PARALLEL_LOOKUPS: usize = 1 << 14;
#[cfg(feature = "testing")]
const PARALLEL_LOOKUPS: usize = 16;
/// Keys per task of those look-ups.
#[cfg(feature = "parallel")]
const LOOKUP_CHUNK: usize = 4096;

/// Set on a pair first added during the current update.
const NEW: u32 = 1;
/// Set on a pair found (again) during the current update.
const SEEN: u32 = 2;
/// `index` of an empty bucket.
const EMPTY: u32 = u32::MAX;

/// One slot of the hash table. The key and the update flags live here, so finding a pair
/// again costs one cache line.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    key: u64,
    /// Index into `pairs`, or `EMPTY`.
    index: u32,
    flags: u32,
}

const VACANT: Bucket = Bucket {
    key: 0,
    index: EMPTY,
    flags: 0,
};

/// The set of overlapping pairs that persists between updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct PairSet {
    /// The pairs, densely.
    pairs: Vec<Pair>,
    /// Linear-probing table; its length is a power of two (or zero).
    table: Vec<Bucket>,
    /// `64 - log2(table.len())`: Fibonacci hashing keeps the top bits.
    shift: u32,
    /// Dense indices of the pairs `finish` deletes (scratch).
    doomed: Vec<u32>,
    /// Where [`PairSet::remove_keys`] found each key before removing any (scratch).
    lookups: Vec<u32>,
}

/// The key of the pair of slots `a < b`.
#[inline]
fn key(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

/// The key of the pair of slots `a` and `b`, in either order: the smaller slot in the high
/// half, so keys sort like the pairs' ids.
#[inline]
#[must_use]
pub fn pair_key(a: u32, b: u32) -> u64 {
    if a < b {
        key(a, b)
    } else {
        key(b, a)
    }
}

/// One list of an engine's persistent pairs (a cell's, a bucket's, a tree's), as
/// [`Engine::pair_lists`](crate::engine::Engine::pair_lists) gives them: its keys, and how to
/// read a key's two slots (keys need not be [`pair_key`]s: a grid keeps its own order).
#[derive(Clone, Copy, Debug)]
pub struct PairList<'a> {
    /// The keys, one per pair.
    pub keys: &'a [u64],
    /// The two slots of a key.
    pub slots: fn(u64) -> (u32, u32),
}

impl<'a> PairList<'a> {
    /// A list of [`pair_key`]s.
    #[must_use]
    pub fn new(keys: &'a [u64]) -> Self {
        Self {
            keys,
            slots: key_slots,
        }
    }
}

/// The two slots of a pair key, smaller first.
///
/// ```
/// use broadphase::engine::{key_slots, pair_key};
/// assert_eq!(key_slots(pair_key(7, 3)), (3, 7));
/// ```
#[inline]
#[must_use]
pub fn key_slots(k: u64) -> (u32, u32) {
    ((k >> 32) as u32, k as u32)
}

/// Removes the keys present in both sorted lists from both: a pair that an update both
/// deleted and created (a proxy re-inserted, a pair re-found) stays as it was.
pub(crate) fn cancel_common(a: &mut Vec<u64>, b: &mut Vec<u64>) {
    if a.is_empty() || b.is_empty() {
        return;
    }
    let (mut i, mut j, mut wa, mut wb) = (0, 0, 0, 0);
    while i < a.len() || j < b.len() {
        let x = a.get(i).copied().unwrap_or(u64::MAX);
        let y = b.get(j).copied().unwrap_or(u64::MAX);
        if x == y {
            i += 1;
            j += 1;
        } else if x < y {
            a[wa] = x;
            wa += 1;
            i += 1;
        } else {
            b[wb] = y;
            wb += 1;
            j += 1;
        }
    }
    a.truncate(wa);
    b.truncate(wb);
}

/// Sorts pair keys for [`diff_pairs`] by a least-significant-digit radix sort of the keys
/// themselves, keeping its buffer between calls.
///
/// A key's two halves are slots, and slots are dense: below 2^17 for 100,000 proxies. Only
/// the bits that some key uses are sorted on (the two halves packed side by side), in digits of
/// [`DIGIT`] bits: three passes over the keys for 100,000 proxies instead of four over a key
/// and an index, and no gathers.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeySorter {
    out: Vec<u64>,
    counts: Vec<[u32; 1 << DIGIT]>,
}

/// Bits per radix digit: a pass scatters through 4,096 counters (16 KB, in the L1 cache).
const DIGIT: u32 = 12;
/// Fewer keys than this are sorted by comparisons. Measured: with 1,024 here, Grid's frame on
/// the uniform scene (100,000 boxes, its buckets' keys sorted one bucket at a time) took 25 ms
/// instead of 16.7.
const SORT_BELOW: usize = 1 << 13;

impl KeySorter {
    /// Sorts `keys` ascending.
    pub(crate) fn sort(&mut self, keys: &mut Vec<u64>) {
        // Each pass reads and clears 2^DIGIT counters: worth it only for many more keys.
        if keys.len() < SORT_BELOW {
            keys.sort_unstable();
            return;
        }
        let used = keys.iter().fold(0u64, |acc, &k| acc | k);
        // Bits of the low half in use: the high half is packed right above them.
        let low_bits = 32 - (used as u32).leading_zeros();
        let high_bits = 32 - ((used >> 32) as u32).leading_zeros();
        let packed = move |k: u64| ((k >> 32) << low_bits) | (k & ((1u64 << low_bits) - 1));
        let passes = (low_bits + high_bits).div_ceil(DIGIT) as usize;
        self.counts.clear();
        self.counts.resize(passes, [0; 1 << DIGIT]);
        for &k in keys.iter() {
            let p = packed(k);
            for (pass, counts) in self.counts.iter_mut().enumerate() {
                counts[((p >> (DIGIT as usize * pass)) as usize) & ((1 << DIGIT) - 1)] += 1;
            }
        }
        self.out.clear();
        self.out.resize(keys.len(), 0);
        for pass in 0..passes {
            let counts = &mut self.counts[pass];
            // A digit every key shares moves nothing.
            if counts.iter().any(|&c| c as usize == keys.len()) {
                continue;
            }
            let mut sum = 0;
            for c in counts.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
            let shift = DIGIT as usize * pass;
            for &k in keys.iter() {
                let d = ((packed(k) >> shift) as usize) & ((1 << DIGIT) - 1);
                // In bounds: the counts of a digit start at the keys before it and count
                // its own keys, so the slots handed out stay below `keys.len()`.
                self.out[counts[d] as usize] = k;
                counts[d] += 1;
            }
            std::mem::swap(keys, &mut self.out);
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.out.capacity() * 8 + self.counts.capacity() * (4 << DIGIT)
    }
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
            + self.table.capacity() * std::mem::size_of::<Bucket>()
            + (self.doomed.capacity() + self.lookups.capacity()) * 4
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

    /// Records that slots `a` and `b` overlap and may pair in this update. `ids` gives their
    /// ids; it is called only for a pair new to the set.
    #[inline]
    // For the algorithms that find every pair of their changed proxies each update and let the
    // set diff them; the others diff their own parts and use `insert_new`/`remove_keys`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn add(&mut self, a: u32, b: u32, ids: impl FnOnce() -> (ProxyId, ProxyId)) {
        let k = pair_key(a, b);
        self.reserve_one();
        let (s, found) = self.probe(k);
        if found {
            self.table[s].flags |= SEEN;
        } else {
            let (x, y) = ids();
            self.table[s] = Bucket {
                key: k,
                index: self.pairs.len() as u32,
                flags: NEW | SEEN,
            };
            self.pairs.push(Pair::new(x, y));
        }
    }

    /// Grows the table ahead of one insertion, keeping the load at most one half.
    #[inline]
    fn reserve_one(&mut self) {
        if (self.pairs.len() + 1) * 2 > self.table.len() {
            self.rehash(((self.pairs.len() + 1) * 2).next_power_of_two().max(64));
        }
    }

    /// Inserts pairs known to be new, for algorithms that diff pairs themselves: `keys[i]` is
    /// the key of `pairs[i]`. A large set's buckets are all over memory: each is asked for a
    /// few keys ahead, so that the probes find it in cache.
    pub(crate) fn insert_new(&mut self, keys: &[u64], pairs: &[Pair]) {
        let want = (self.pairs.len() + keys.len()) * 2;
        if want > self.table.len() {
            self.rehash(want.next_power_of_two().max(64));
        }
        for (n, (&k, &pair)) in keys.iter().zip(pairs).enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            let (s, found) = self.probe(k);
            if !found {
                self.table[s] = Bucket {
                    key: k,
                    index: self.pairs.len() as u32,
                    flags: 0,
                };
                self.pairs.push(pair);
            }
        }
    }

    /// Removes the pairs of `keys` that are in the set, for algorithms that diff pairs
    /// themselves, appending each removed pair to `removed`. Each removal moves the last pair
    /// of the dense array into the hole; the buckets of the keys and of those last pairs are
    /// asked for ahead, as in [`insert_new`](Self::insert_new).
    ///
    /// A pair's place in the dense array is known only once its bucket is read, too late to ask
    /// for it ahead: with `parallel` and many keys, every thread first looks up a share of the
    /// keys (reading only), and the removals ask for each pair's line a few keys ahead. Without
    /// that, reading the pair was three quarters of the removals on the `sizes` scene.
    pub(crate) fn remove_keys(&mut self, keys: &[u64], removed: &mut Vec<Pair>, parallel: bool) {
        if self.table.is_empty() {
            return;
        }
        let mut lookups = std::mem::take(&mut self.lookups);
        lookups.clear();
        if parallel && keys.len() >= PARALLEL_LOOKUPS && crate::par::threads() > 1 {
            lookups.resize(keys.len(), EMPTY);
            lookup::indices(self, keys, &mut lookups);
        }
        for (n, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            // Where that key's pair was before this batch: a removal since may have moved
            // it, which costs one wasted request, never a wrong result.
            if let Some(p) = lookups
                .get(n + PREFETCH_AHEAD)
                .and_then(|&i| self.pairs.get(i as usize))
            {
                prefetch(p);
            }
            // The pair that the removal after next-few will move (unless it goes itself).
            if let Some(p) = self.pairs.len().checked_sub(1 + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(Self::key_of(&self.pairs[p]))]);
            }
            let (s, found) = self.probe(k);
            if !found {
                continue;
            }
            let i = self.table[s].index as usize;
            removed.push(self.pairs[i]);
            self.unlink(s);
            self.fill_hole(i);
        }
        self.lookups = lookups;
    }

    /// The dense index of each key's pair, or `EMPTY`, into `out` (as long as `keys`).
    fn look_up(&self, keys: &[u64], out: &mut [u32]) {
        for (n, (at, &k)) in out.iter_mut().zip(keys).enumerate() {
            if let Some(&ahead) = keys.get(n + PREFETCH_AHEAD) {
                prefetch(&self.table[self.home(ahead)]);
            }
            let (s, found) = self.probe(k);
            *at = if found { self.table[s].index } else { EMPTY };
        }
    }

    /// The keys of every pair.
    #[allow(dead_code)] // see `Store::pair_keys`
    pub(crate) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.pairs.iter().map(Self::key_of)
    }

    /// Whether the pair of slots `a` and `b` is in the set.
    #[cfg(test)]
    pub(crate) fn contains(&self, a: u32, b: u32) -> bool {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        !self.table.is_empty() && self.probe(key(a, b)).1
    }

    /// Re-inserts every bucket into a table of `size` buckets, keeping its flags.
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

    #[inline]
    fn key_of(p: &Pair) -> u64 {
        key(p.a.index(), p.b.index())
    }

    /// Removes pair `i` from the dense array and the table (the last pair takes its place).
    fn remove_at(&mut self, i: usize) {
        let (s, _) = self.probe(Self::key_of(&self.pairs[i]));
        self.unlink(s);
        self.fill_hole(i);
    }

    /// Removes pair `i`, already unlinked from the table, from the dense array: the last pair
    /// moves into its place, and its bucket follows it.
    fn fill_hole(&mut self, i: usize) {
        let last = self.pairs.len() - 1;
        if i != last {
            let (s, _) = self.probe(Self::key_of(&self.pairs[last]));
            self.table[s].index = i as u32;
        }
        self.pairs.swap_remove(i);
    }

    /// Ends an update: pairs added for the first time go to `events.created`; pairs with a
    /// changed proxy (`changed(slot)`) that were not added again go to `events.deleted` and
    /// leave the set. Both lists come out sorted.
    pub(crate) fn finish(&mut self, changed: impl Fn(u32) -> bool, events: &mut PairEvents) {
        // One pass over the table, which holds the flags.
        self.doomed.clear();
        for b in self.table.iter_mut() {
            if b.index == EMPTY {
                continue;
            }
            if b.flags & NEW != 0 {
                events.created.push(self.pairs[b.index as usize]);
            } else if b.flags & SEEN == 0
                && (changed((b.key >> 32) as u32) || changed(b.key as u32))
            {
                self.doomed.push(b.index);
            }
            b.flags = 0;
        }
        // Highest index first: `swap_remove` then only moves pairs that are not doomed.
        self.doomed.sort_unstable_by(|x, y| y.cmp(x));
        for k in 0..self.doomed.len() {
            let i = self.doomed[k] as usize;
            events.deleted.push(self.pairs[i]);
            self.remove_at(i);
        }
        // Give memory back once the set has shrunk well below its peak.
        if self.table.len() > 1024 && self.pairs.len() * 8 < self.table.len() {
            self.pairs.shrink_to(self.pairs.len() * 2);
            self.rehash((self.pairs.len() * 4).next_power_of_two().max(64));
        }
        events.sort(false);
    }
}

/// [`PairSet::remove_keys`]'s look-ups, spread over rayon's threads.
#[cfg(feature = "parallel")]
mod lookup {
    use super::{PairSet, LOOKUP_CHUNK};
    use rayon::prelude::*;

    pub(super) fn indices(set: &PairSet, keys: &[u64], out: &mut [u32]) {
        out.par_chunks_mut(LOOKUP_CHUNK)
            .zip(keys.par_chunks(LOOKUP_CHUNK))
            .for_each(|(out, keys)| set.look_up(keys, out));
    }
}

/// Without the `parallel` feature: one thread, so no look-ups ahead.
#[cfg(not(feature = "parallel"))]
mod lookup {
    use super::PairSet;

    pub(super) fn indices(set: &PairSet, keys: &[u64], out: &mut [u32]) {
        set.look_up(keys, out);
    }
}

/// Diffs one part of the pair set (a cell, a grid bucket, a tree): `old` (last update's keys,
/// sorted) against `found` (this update's, sorted, each with a changed proxy). Pairs found
/// again or with no changed proxy stay (into `out`); pairs found for the first time are created
/// candidates; pairs with a changed proxy that were not found again are deleted candidates.
pub(crate) fn diff_pairs(
    old: &[u64],
    found: &[u64],
    changed: impl Fn(u32) -> bool,
    out: &mut Vec<u64>,
    created: &mut Vec<u64>,
    deleted: &mut Vec<u64>,
) {
    diff_pairs_by(
        old,
        found.iter().copied(),
        key_slots,
        changed,
        out,
        created,
        deleted,
    );
}

/// [`diff_pairs`] for lists whose keys are in another order than pair keys (any order that is
/// the same from one update to the next): `slots` gives a key's two slots. The candidates come
/// out as pair keys. `found` may be made while it is read (Grid reads its bit rows so).
pub(crate) fn diff_pairs_by(
    old: &[u64],
    found: impl IntoIterator<Item = u64>,
    slots: impl Fn(u64) -> (u32, u32),
    changed: impl Fn(u32) -> bool,
    out: &mut Vec<u64>,
    created: &mut Vec<u64>,
    deleted: &mut Vec<u64>,
) {
    out.clear();
    let mut found = found.into_iter();
    // No real key is u64::MAX (slots are below 2^24): it stands for "list exhausted".
    let mut next = || found.next().unwrap_or(u64::MAX);
    let mut f = next();
    let mut i = 0;
    loop {
        let o = old.get(i).copied().unwrap_or(u64::MAX);
        if o == f {
            if o == u64::MAX {
                break;
            }
            out.push(o);
            i += 1;
            f = next();
        } else if o < f {
            let (a, b) = slots(o);
            if changed(a) || changed(b) {
                deleted.push(pair_key(a, b));
            } else {
                out.push(o);
            }
            i += 1;
        } else {
            let (a, b) = slots(f);
            created.push(pair_key(a, b));
            out.push(f);
            f = next();
        }
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

    #[test]
    fn key_sorter_sorts() {
        let mut rng = crate::split_mix::SplitMix64::new(1);
        let mut keys: Vec<u64> = (0..3 * SORT_BELOW)
            .map(|_| {
                let s = rng.next_u64();
                let (a, b) = ((s & 0xff_ffff) as u32, ((s >> 24) & 0xff_ffff) as u32);
                pair_key(a, b)
            })
            .collect();
        let mut want = keys.clone();
        want.sort_unstable();
        KeySorter::default().sort(&mut keys);
        assert_eq!(keys, want);
    }

    /// Removing a batch with the look-ups ahead (on every thread) removes the same pairs, in
    /// the same order, as one thread: keys absent from the set and pairs that earlier
    /// removals of the batch moved (whose looked-up place is stale) included.
    #[test]
    fn removals_with_look_ups_match_one_thread() {
        let n = 4 * PARALLEL_LOOKUPS as u32 + 50;
        let fill = |set: &mut PairSet| {
            let keys: Vec<u64> = (0..n).map(|i| pair_key(i, i + 1)).collect();
            let pairs: Vec<Pair> = (0..n).map(|i| Pair::new(id(i), id(i + 1))).collect();
            set.insert_new(&keys, &pairs);
        };
        // Every third pair, from the back (each removal moves the last pair, which a later key
        // of the batch names), and keys never inserted.
        let doomed: Vec<u64> = (0..n)
            .rev()
            .filter(|i| i % 3 == 0)
            .map(|i| pair_key(i, i + 1))
            .chain((0..40).map(|i| pair_key(i, i + 7)))
            .collect();
        let run = |parallel: bool| {
            let mut set = PairSet::default();
            fill(&mut set);
            let mut removed = Vec::new();
            set.remove_keys(&doomed, &mut removed, parallel);
            (removed, set.pairs().to_vec(), set)
        };
        let (one, left_one, _) = run(false);
        let (many, left_many, set) = run(true);
        assert_eq!(one.len(), (0..n).filter(|i| i % 3 == 0).count());
        assert_eq!(many, one);
        assert_eq!(left_many, left_one);
        for i in 0..n {
            assert_eq!(set.contains(i, i + 1), i % 3 != 0, "pair {i}");
        }
    }

    proptest! {
        /// Keys of slots of any width (so any number of passes, and passes skipped when every
        /// key shares a digit) come out as `sort_unstable` sorts them.
        #[test]
        fn key_sorter_sorts_any_slot_width(
            bits in 0u32..=32,
            base in any::<u32>(),
            raw in prop::collection::vec((any::<u32>(), any::<u32>()), SORT_BELOW..SORT_BELOW + 3000),
        ) {
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let mut keys: Vec<u64> = raw
                .iter()
                .map(|&(a, b)| pair_key((a & mask) | (base & !mask), b & mask))
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            KeySorter::default().sort(&mut keys);
            prop_assert_eq!(keys, want);
        }

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
                    set.add(a, b, || (id(a), id(b)));
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
                prop_assert_eq!(set.len(), model.len());
                for &(a, b) in &model {
                    prop_assert!(set.contains(a, b));
                }
            }
        }
    }
}
