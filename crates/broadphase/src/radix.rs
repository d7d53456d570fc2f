//! The crate's one radix sort: a stable least-significant-digit sort of `u64` words ([`Lsd`]),
//! and its two uses, `u32` keys carrying a `u32` payload ([`RadixSorter`]) and pair keys
//! ([`KeySorter`]).
//!
//! Broad phases sort encoded coordinates ([`crate::encode`]), cell ids and pair keys every
//! frame, so the sort keeps its buffers between calls (no allocation once warm), counts every
//! digit of every pass in one read of the words, and skips the passes in which every word has
//! the same digit (keys that span a small range need one or two passes, not four). Input that
//! is already sorted, common from one frame to the next, costs one read.

use crate::Error;

/// Below this many keys a comparison sort of packed `(key, position)` words beats clearing and
/// scanning the digit histograms.
const SMALL_SORT: usize = 256;

/// What one [`RadixSorter::sort`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadixReport {
    /// Scatter passes performed.
    pub passes: u32,
    /// Passes skipped because every key had the same digit there.
    pub skipped: u32,
    /// Whether the input was found already sorted (then nothing moved).
    pub presorted: bool,
}

/// A reusable radix sorter with a chosen digit width.
#[derive(Clone, Debug)]
pub struct RadixSorter {
    digit_bits: u32,
    /// The keys and payloads packed as `key << 32 | value`, the words [`Lsd`] sorts.
    packed: Vec<u64>,
    /// The payloads, for the comparison sort of small inputs.
    vals_tmp: Vec<u32>,
    lsd: Lsd,
}

impl Default for RadixSorter {
    /// An 8-bit sorter: four passes at most, 256-entry histograms that stay in L1.
    fn default() -> Self {
        Self::with_bits(8)
    }
}

impl RadixSorter {
    /// The smallest digit width accepted.
    pub const MIN_BITS: u32 = 4;
    /// The largest digit width accepted.
    pub const MAX_BITS: u32 = 16;

    /// A sorter that reads `digit_bits` bits of the key per pass (4 to 16).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `digit_bits` is outside `4..=16`.
    pub fn new(digit_bits: u32) -> Result<Self, Error> {
        if !(Self::MIN_BITS..=Self::MAX_BITS).contains(&digit_bits) {
            return Err(Error::InvalidParameter {
                name: "radix digit bits",
                value: f64::from(digit_bits),
                expected: "4..=16",
            });
        }
        Ok(Self::with_bits(digit_bits))
    }

    fn with_bits(digit_bits: u32) -> Self {
        Self {
            digit_bits,
            packed: Vec::new(),
            vals_tmp: Vec::new(),
            lsd: Lsd::default(),
        }
    }

    /// The digit width in bits.
    #[must_use]
    pub fn digit_bits(&self) -> u32 {
        self.digit_bits
    }

    /// The number of passes a full sort of 32-bit keys needs with this digit width.
    #[cfg(test)]
    #[must_use]
    pub fn max_passes(&self) -> u32 {
        32u32.div_ceil(self.digit_bits)
    }

    /// Sorts `keys` ascending, stably, moving `values[i]` with `keys[i]`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the two slices differ in length (nothing is moved).
    #[cfg(test)]
    pub fn sort(&mut self, keys: &mut [u32], values: &mut [u32]) -> Result<RadixReport, Error> {
        if keys.len() != values.len() {
            return Err(Error::InvalidParameter {
                name: "radix payload length",
                value: values.len() as f64,
                expected: "as many values as keys",
            });
        }
        Ok(self.sort_unchecked(keys, values))
    }

    /// Sorts `keys` ascending, stably, moving `values[i]` with `keys[i]` (equal lengths).
    pub(crate) fn sort_unchecked(&mut self, keys: &mut [u32], values: &mut [u32]) -> RadixReport {
        self.sort_key_bits(keys, values, 32)
    }

    /// [`RadixSorter::sort_unchecked`] for keys below `2^key_bits`: the digits above are
    /// neither counted nor tried (a wide digit's histogram is not even cleared for them).
    pub(crate) fn sort_key_bits(
        &mut self,
        keys: &mut [u32],
        values: &mut [u32],
        key_bits: u32,
    ) -> RadixReport {
        let n = keys.len().min(values.len());
        let (keys, values) = (&mut keys[..n], &mut values[..n]);
        if keys.windows(2).all(|w| w[0] <= w[1]) {
            return RadixReport {
                presorted: true,
                ..RadixReport::default()
            };
        }
        if n < SMALL_SORT {
            self.small_sort(keys, values);
            return RadixReport {
                passes: 1,
                ..RadixReport::default()
            };
        }
        self.radix_sort(keys, values, key_bits.clamp(1, 32))
    }

    /// Comparison sort of `key << 32 | position`: stable because positions are distinct.
    fn small_sort(&mut self, keys: &mut [u32], values: &mut [u32]) {
        self.packed.clear();
        self.packed.extend(
            keys.iter()
                .enumerate()
                .map(|(i, &k)| (u64::from(k) << 32) | i as u64),
        );
        self.packed.sort_unstable();
        self.vals_tmp.clear();
        self.vals_tmp.extend_from_slice(values);
        for (i, &p) in self.packed.iter().enumerate() {
            keys[i] = (p >> 32) as u32;
            values[i] = self.vals_tmp[(p & 0xFFFF_FFFF) as usize];
        }
    }

    /// The keys and values packed side by side into words, sorted on the keys' half by the
    /// one [`Lsd`] (stable: equal keys keep their values' order), and unpacked.
    fn radix_sort(&mut self, keys: &mut [u32], values: &mut [u32], key_bits: u32) -> RadixReport {
        self.packed.clear();
        self.packed.extend(
            keys.iter()
                .zip(values.iter())
                .map(|(&k, &v)| (u64::from(k) << 32) | u64::from(v)),
        );
        let report = self
            .lsd
            .sort(&mut self.packed, self.digit_bits, key_bits, |w| w >> 32);
        for ((k, v), &w) in keys.iter_mut().zip(values.iter_mut()).zip(&self.packed) {
            *k = (w >> 32) as u32;
            *v = w as u32;
        }
        report
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.packed.capacity() * 8 + self.vals_tmp.capacity() * 4 + self.lsd.memory_bytes()
    }
}

/// The least-significant-digit pass loop every sort of the crate runs: stable, over `u64`
/// words, on the bits a caller picks out of each word, with the scratch buffer and the
/// histograms kept between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lsd {
    out: Vec<u64>,
    /// Every pass's histogram, one after the other.
    counts: Vec<u32>,
}

impl Lsd {
    /// Sorts `words` stably by `sort_key(word)`, a value below `2^sort_bits`, reading
    /// `digit_bits` (1 to 16) of it per pass. The passes whose digit every word shares are
    /// skipped. `words` may come back as another buffer of the same words (the scratch buffer
    /// it was swapped with), so no pass copies back.
    pub(crate) fn sort(
        &mut self,
        words: &mut Vec<u64>,
        digit_bits: u32,
        sort_bits: u32,
        sort_key: impl Fn(u64) -> u64,
    ) -> RadixReport {
        let n = words.len();
        let bits = digit_bits.clamp(1, 16);
        let buckets = 1usize << bits;
        let mask = (buckets - 1) as u64;
        let passes = sort_bits.clamp(1, 64).div_ceil(bits) as usize;

        // Every pass's histogram from a single read of the words.
        self.counts.clear();
        self.counts.resize(passes * buckets, 0);
        for &w in words.iter() {
            let key = sort_key(w);
            for (p, hist) in self.counts.chunks_exact_mut(buckets).enumerate() {
                hist[((key >> (p as u32 * bits)) & mask) as usize] += 1;
            }
        }

        self.out.clear();
        self.out.resize(n, 0);
        let mut report = RadixReport::default();
        for (p, hist) in self.counts.chunks_exact_mut(buckets).enumerate() {
            // A digit every word shares moves nothing.
            if hist.iter().any(|&c| c as usize == n) {
                report.skipped += 1;
                continue;
            }
            // Exclusive prefix sums: the first output slot of each digit.
            let mut sum = 0u32;
            for c in hist.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
            let shift = p as u32 * bits;
            for &w in words.iter() {
                let d = ((sort_key(w) >> shift) & mask) as usize;
                // In bounds: a digit's count starts at the words before it and counts its own
                // words, so the slots handed out stay below `n`.
                self.out[hist[d] as usize] = w;
                hist[d] += 1;
            }
            std::mem::swap(words, &mut self.out);
            report.passes += 1;
        }
        report
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.out.capacity() * 8 + self.counts.capacity() * 4
    }
}

/// Sorts pair keys for [`crate::pairs::diff_pairs`] with the one [`Lsd`], on the bits of the
/// keys themselves.
///
/// A key's two halves are slots, and slots are dense: below 2^17 for 100,000 proxies. Only
/// the bits that some key uses are sorted on (the two halves packed side by side), in digits of
/// [`KEY_DIGIT`] bits: three passes over the keys for 100,000 proxies instead of four over a
/// key and an index, and no gathers.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeySorter {
    lsd: Lsd,
}

/// Bits per radix digit of pair keys: a pass scatters through 4,096 counters (16 KB, in the
/// L1 cache).
const KEY_DIGIT: u32 = 12;
/// Fewer pair keys than this are sorted by comparisons. Measured: with 1,024 here, Grid's frame
/// on the uniform scene (100,000 boxes, its buckets' keys sorted one bucket at a time) took
/// 25 ms instead of 16.7.
pub(crate) const KEY_SORT_BELOW: usize = 1 << 13;

impl KeySorter {
    /// Sorts `keys` ascending.
    pub(crate) fn sort(&mut self, keys: &mut Vec<u64>) {
        // Each pass reads and clears 2^KEY_DIGIT counters: worth it only for many more keys.
        if keys.len() < KEY_SORT_BELOW {
            keys.sort_unstable();
            return;
        }
        let used = keys.iter().fold(0u64, |acc, &k| acc | k);
        // Bits of the low half in use: the high half is packed right above them.
        let low_bits = 32 - (used as u32).leading_zeros();
        let high_bits = 32 - ((used >> 32) as u32).leading_zeros();
        let packed = move |k: u64| ((k >> 32) << low_bits) | (k & ((1u64 << low_bits) - 1));
        self.lsd.sort(keys, KEY_DIGIT, low_bits + high_bits, packed);
    }

    /// Gives back the scratch buffer's memory when sorts keep using a small part of it: for
    /// an owner that sorts once an update (a sort of every pair at a first update, then sorts
    /// of the few that change).
    pub(crate) fn trim(&mut self, trim: &mut crate::slack::Trim) {
        trim.clear(&mut self.lsd.out);
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.lsd.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sort is stable: equal keys keep their payloads' order.
    #[test]
    fn equal_keys_keep_their_order() -> Result<(), Error> {
        let mut sorter = RadixSorter::new(8)?;
        let mut keys = vec![30, 10, 20, 10];
        let mut vals = vec![0, 1, 2, 3];
        sorter.sort(&mut keys, &mut vals)?;
        assert_eq!(keys, [10, 10, 20, 30]);
        assert_eq!(vals, [1, 3, 2, 0]);
        Ok(())
    }
    use proptest::prelude::*;

    fn check(bits: u32, keys: Vec<u32>) -> Result<(), Error> {
        let mut sorter = RadixSorter::new(bits)?;
        let mut k = keys.clone();
        let mut v: Vec<u32> = (0..keys.len() as u32).collect();
        sorter.sort(&mut k, &mut v)?;
        let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(key, _)| key); // std's stable sort
        let got: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
        assert_eq!(got, expected);
        Ok(())
    }

    proptest! {
        #[test]
        fn matches_stable_sort(bits in 4u32..=16, keys in prop::collection::vec(any::<u32>(), 0..2000)) {
            check(bits, keys)?;
        }

        #[test]
        fn matches_stable_sort_with_ties(bits in 4u32..=16, keys in prop::collection::vec(0u32..40, 0..2000)) {
            check(bits, keys)?;
        }
    }

    #[test]
    fn skips_passes_with_one_digit() -> Result<(), Error> {
        let mut sorter = RadixSorter::new(8)?;
        // Keys differ only in the lowest byte: one pass does it, three are skipped.
        let mut keys: Vec<u32> = (0..1000u32)
            .rev()
            .map(|i| 0xABCD_EF00 | (i % 256))
            .collect();
        let mut vals = vec![0; keys.len()];
        let report = sorter.sort(&mut keys, &mut vals)?;
        assert_eq!((report.passes, report.skipped), (1, 3));
        assert!(keys.windows(2).all(|w| w[0] <= w[1]));
        let again = sorter.sort(&mut keys, &mut vals)?;
        assert!(again.presorted);
        Ok(())
    }

    #[test]
    fn narrow_keys_need_fewer_passes() {
        let mut sorter = RadixSorter::with_bits(4);
        let mut keys: Vec<u32> = (0..5000u32).rev().map(|i| (i * 7919) % 4096).collect();
        let mut vals: Vec<u32> = (0..keys.len() as u32).collect();
        let mut expected: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        expected.sort_by_key(|&(k, _)| k);
        let report = sorter.sort_key_bits(&mut keys, &mut vals, 12);
        assert_eq!(
            report.passes + report.skipped,
            3,
            "12-bit keys, 4-bit digits"
        );
        let got: Vec<(u32, u32)> = keys.into_iter().zip(vals).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn rejects_bad_widths_and_lengths() -> Result<(), Error> {
        assert!(RadixSorter::new(3).is_err());
        assert!(RadixSorter::new(17).is_err());
        let mut s = RadixSorter::new(11)?;
        assert_eq!(s.max_passes(), 3);
        assert!(s.sort(&mut [1, 2], &mut [1]).is_err());
        Ok(())
    }

    mod pair_keys {
        use super::*;

        #[test]
        fn key_sorter_sorts() {
            let mut rng = crate::split_mix::SplitMix64::new(1);
            let mut keys: Vec<u64> = (0..3 * KEY_SORT_BELOW)
                .map(|_| {
                    let s = rng.next_u64();
                    let (a, b) = ((s & 0xff_ffff) as u32, ((s >> 24) & 0xff_ffff) as u32);
                    crate::pairs::pair_key(a, b)
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
                raw in prop::collection::vec((any::<u32>(), any::<u32>()), KEY_SORT_BELOW..KEY_SORT_BELOW + 3000),
            ) {
                let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
                let mut keys: Vec<u64> = raw
                    .iter()
                    .map(|&(a, b)| crate::pairs::pair_key((a & mask) | (base & !mask), b & mask))
                    .collect();
                let mut want = keys.clone();
                want.sort_unstable();
                KeySorter::default().sort(&mut keys);
                prop_assert_eq!(keys, want);
            }
        }
    }
}
