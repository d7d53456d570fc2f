//! The box-pruning kernel (PhysX's `doCompleteBoxPruning` and `doBipartiteBoxPruning`, ours).
//!
//! Boxes are kept sorted by the encoded minimum on the sweep axis. A sweep walks the list once;
//! for each box it visits only the boxes whose minimum lies between its own minimum and maximum
//! on that axis, and tests those on the two other axes. The lists are structure-of-arrays of
//! integer keys, one array per bound, so the inner loop streams over them: on x86-64 CPUs with
//! AVX2 it tests eight candidates per step (`crate::simd`), elsewhere one at a time
//! ([`scalar`]); both give the same pairs in the same order, which a test checks.
//!
//! Keys are [`encode`](crate::encode::encode)d floats with the top bit flipped, so that they
//! compare as *signed* integers (SIMD compares are signed). Every key array ends with
//! [`keys::PAD`] entries past the last box: sentinels above every finite key on the sweep axis,
//! so the loops need no bounds test and an eight-wide load starting at any box stays inside the
//! array.
//!
//! - [`keys`]: the key formats, a box's encoded and signed keys and the padding.
//! - [`list`]: [`BoxList`], the sorted structure-of-arrays list, and the view of its keys that
//!   the kernels read ([`SweepKeys`]).
//! - [`scalar`]: the kernels one candidate at a time.
//! - here: [`complete`] and [`bipartite`], which take the AVX2 kernels where
//!   [`simd::avx2`] says so and the scalar ones otherwise.

mod keys;
mod list;
mod scalar;
#[cfg(test)]
mod tests;

pub(crate) use keys::{signed, EncodedBox, SignedBox};
pub(crate) use list::{BoxList, SweepKeys};

use crate::simd;

/// Every overlapping pair within one sorted list: `emit(i, j)` with list positions `i < j`,
/// for each `i` in increasing `j`. Returns the number of candidates tested on the other two
/// axes.
#[inline]
pub(crate) fn complete(list: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    if let Some(avx2) = simd::avx2() {
        return avx2.complete_boxes(list, &mut emit);
    }
    scalar::complete(list, emit)
}

/// Every overlapping pair with one box in `a` and one in `b` (both sorted): `emit(i, j)` with
/// `i` a position in `a` and `j` in `b`. Returns the number of candidates tested.
#[inline]
pub(crate) fn bipartite(a: &BoxList, b: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    if let Some(avx2) = simd::avx2() {
        return avx2.bipartite_boxes(a, b, &mut emit);
    }
    scalar::bipartite(a, b, emit)
}
