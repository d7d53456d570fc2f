//! The pair test of a long collision cell: one entry against the entries after it, eight at a
//! time where the CPU runs AVX2 (the kernel is [`simd::Avx2::scan_cell`]), one at a time here.
//!
//! Cells of boxes of one size hold two to four entries (the bucket tests those with a loop of
//! its own), but a cell of a coarse level holds its large boxes and every smaller box that
//! visits it: hundreds of entries, of which about half overlap a planet's box. There a scalar
//! loop runs one test per entry; the AVX2 loop runs eight, without a branch per entry.

use super::entries::FIRST_ALL;
use super::record::{DIRTY, FIXED};
use crate::simd::{self, Avx2};

/// The entries of one long collision cell, as columns: the input of the AVX2 kernel, so it is
/// defined with it.
pub(crate) use crate::simd::RunColumns;

/// Whether the pair of entries with these values and slots is tested in this cell: 0 when it
/// is (this is its corner cell, one of the two changed, not both fixed).
#[inline(always)]
pub(crate) fn skip(vi: u32, si: u32, vj: u32, sj: u32) -> u32 {
    (((vi | vj) & FIRST_ALL) ^ FIRST_ALL) | (((si | sj) & DIRTY) ^ DIRTY) | (si & sj & FIXED)
}

/// Tests entry `i` against every later entry of `cell`, writing the positions of those that
/// pass the control bits and overlap it into `hits` (at least `cell.vals.len()` long), in
/// increasing order. Returns the pairs tested (passing the control bits) and the hits written.
#[inline]
pub(crate) fn scan(cell: &RunColumns<'_>, i: usize, hits: &mut [u32]) -> (u64, usize) {
    scan_with(cell, i, hits, simd::avx2)
}

/// [`scan`] with the AVX2 path that `avx2` gives, asked only when eight entries or more are
/// left: eight at a time while eight remain ([`simd::Avx2::scan_cell`]), then one at a time.
#[inline(always)]
fn scan_with(
    cell: &RunColumns<'_>,
    i: usize,
    hits: &mut [u32],
    avx2: impl FnOnce() -> Option<Avx2>,
) -> (u64, usize) {
    let len = cell.vals.len();
    let mut from = i + 1;
    let (mut tests, mut n) = (0, 0);
    if len.saturating_sub(from) >= 8 {
        if let Some(avx2) = avx2() {
            (tests, n, from) = avx2.scan_cell::<FIRST_ALL, DIRTY, FIXED>(cell, i, from, hits);
        }
    }
    let (t, n) = scan_scalar(cell, i, from, hits, n);
    (tests + t, n)
}

/// [`scan`] from position `from` on, one entry at a time, appending to `hits[n..]`.
#[inline(always)]
fn scan_scalar(
    cell: &RunColumns<'_>,
    i: usize,
    from: usize,
    hits: &mut [u32],
    mut n: usize,
) -> (u64, usize) {
    let len = cell.vals.len();
    let cols: [&[i32]; 6] = std::array::from_fn(|k| &cell.cols[k][..len]);
    let (vi, si) = (cell.vals[i], cell.slots[i]);
    let bi: [i32; 6] = std::array::from_fn(|k| cols[k][i]);
    let mut tests = 0;
    for j in from..len {
        let s = skip(vi, si, cell.vals[j], cell.slots[j]);
        tests += u64::from(s == 0);
        // Evaluated without branches: whether two boxes of a cell overlap is unpredictable,
        // and a mispredicted branch costs more than the six comparisons.
        let apart = u32::from(bi[0] > cols[3][j])
            | u32::from(cols[0][j] > bi[3])
            | u32::from(bi[1] > cols[4][j])
            | u32::from(cols[1][j] > bi[4])
            | u32::from(bi[2] > cols[5][j])
            | u32::from(cols[2][j] > bi[5]);
        hits[n] = j as u32;
        n += usize::from(s | apart == 0);
    }
    (tests, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a cell's entry is made of: control bits, slot flags, a box.
    fn entry() -> impl Strategy<Value = (u32, u32, [i32; 6])> {
        (
            0u32..8,
            0u32..4,
            prop::array::uniform3(-20i32..20),
            prop::array::uniform3(0i32..12),
        )
            .prop_map(|(first, flags, min, size)| {
                let v = first << 24;
                let s = ((flags & 1) * DIRTY) | ((flags >> 1) * FIXED);
                let b = [
                    min[0],
                    min[1],
                    min[2],
                    min[0] + size[0],
                    min[1] + size[1],
                    min[2] + size[2],
                ];
                (v, s, b)
            })
    }

    proptest! {
        /// The scan with the AVX2 kernel (called directly wherever the CPU runs it, whatever
        /// the dispatch), with none, and as dispatched, finds what the scalar loop finds, and
        /// counts the same tests, from every entry of cells short and long.
        #[test]
        fn every_path_finds_what_the_scalar_loop_finds(
            entries in prop::collection::vec(entry(), 1..60),
        ) {
            let vals: Vec<u32> = entries.iter().map(|e| e.0).collect();
            let slots: Vec<u32> = entries.iter().map(|e| e.1).collect();
            let cols: Vec<Vec<i32>> = (0..6).map(|k| entries.iter().map(|e| e.2[k]).collect()).collect();
            let cell = RunColumns {
                vals: &vals,
                slots: &slots,
                cols: std::array::from_fn(|k| cols[k].as_slice()),
            };
            let len = vals.len();
            for i in 0..len {
                let mut want = vec![0; len];
                let (want_tests, want_n) = scan_scalar(&cell, i, i + 1, &mut want, 0);
                for path in [Avx2::detect(), None, simd::avx2()] {
                    let mut got = vec![0; len];
                    let (tests, n) = scan_with(&cell, i, &mut got, || path);
                    prop_assert_eq!(tests, want_tests);
                    prop_assert_eq!(&got[..n], &want[..want_n]);
                }
                let mut got = vec![0; len];
                let (tests, n) = scan(&cell, i, &mut got);
                prop_assert_eq!((tests, &got[..n]), (want_tests, &want[..want_n]));
                // And the scalar loop is the definition: control bits, then overlap.
                let expect: Vec<u32> = (i + 1..len)
                    .filter(|&j| {
                        skip(vals[i], slots[i], vals[j], slots[j]) == 0
                            && (0..3).all(|k| cols[k][i] <= cols[k + 3][j] && cols[k][j] <= cols[k + 3][i])
                    })
                    .map(|j| j as u32)
                    .collect();
                prop_assert_eq!(&want[..want_n], expect.as_slice());
            }
        }
    }
}
