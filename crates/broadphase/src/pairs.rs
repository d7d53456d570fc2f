//! Pair keys and the created/deleted diffing of persistent pairs.
//!
//! Abp, Mbp, QuadTree and Grid keep their pairs in their own parts (a cell, a bucket, a tree),
//! each part's as a sorted list of keys that [`diff_pairs`] diffs against the part's pairs
//! found this update; the store turns the candidates into events and makes the list of pairs
//! as ids only when asked (`Store::listed_pairs`), so a frame pays for the pairs that changed,
//! not for a table of all of them. Sap adds and removes pairs one at a time as its end points
//! swap, and keeps them in a hash table of its own (`sap::pair_table`).

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
    }
}
