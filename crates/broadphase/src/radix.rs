//! Stable least-significant-digit radix sort of `u32` keys carrying a `u32` payload.
//!
//! Broad phases sort encoded coordinates ([`crate::encode`]) and cell ids every frame, so the sort
//! keeps its buffers between calls (no allocation once warm), counts every digit of every pass
//! in one read of the keys, and skips the passes in which every key has the same digit (keys
//! that span a small range need one or two passes, not four). Input that is already sorted,
//! common from one frame to the next, costs one read.

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
    keys_tmp: Vec<u32>,
    vals_tmp: Vec<u32>,
    packed: Vec<u64>,
    counts: Vec<u32>,
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
            keys_tmp: Vec::new(),
            vals_tmp: Vec::new(),
            packed: Vec::new(),
            counts: Vec::new(),
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
        let passes = key_bits.clamp(1, 32).div_ceil(self.digit_bits);
        self.radix_sort(keys, values, passes as usize)
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

    fn radix_sort(&mut self, keys: &mut [u32], values: &mut [u32], passes: usize) -> RadixReport {
        let n = keys.len();
        let bits = self.digit_bits;
        let buckets = 1usize << bits;
        let mask = (buckets - 1) as u32;

        // Every pass's histogram from a single read of the keys.
        self.counts.clear();
        self.counts.resize(passes * buckets, 0);
        for &k in keys.iter() {
            for p in 0..passes {
                let digit = ((k >> (p as u32 * bits)) & mask) as usize;
                self.counts[p * buckets + digit] += 1;
            }
        }

        self.keys_tmp.resize(n, 0);
        self.vals_tmp.resize(n, 0);
        let mut report = RadixReport::default();
        // `in_tmp`: whether the current data lives in the scratch buffers.
        let mut in_tmp = false;
        for p in 0..passes {
            let hist = &mut self.counts[p * buckets..(p + 1) * buckets];
            if hist.iter().any(|&c| c as usize == n) {
                report.skipped += 1;
                continue;
            }
            // Exclusive prefix sums: the first output slot of each digit.
            let mut sum = 0u32;
            for c in hist.iter_mut() {
                let count = *c;
                *c = sum;
                sum += count;
            }
            let shift = p as u32 * bits;
            let (src_k, src_v, dst_k, dst_v): (&[u32], &[u32], &mut [u32], &mut [u32]) = if in_tmp {
                (&self.keys_tmp, &self.vals_tmp, keys, values)
            } else {
                (keys, values, &mut self.keys_tmp, &mut self.vals_tmp)
            };
            for (&k, &v) in src_k.iter().zip(src_v) {
                let digit = ((k >> shift) & mask) as usize;
                let at = hist[digit] as usize;
                hist[digit] += 1;
                dst_k[at] = k;
                dst_v[at] = v;
            }
            in_tmp = !in_tmp;
            report.passes += 1;
        }
        if in_tmp {
            keys.copy_from_slice(&self.keys_tmp);
            values.copy_from_slice(&self.vals_tmp);
        }
        report
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
}
