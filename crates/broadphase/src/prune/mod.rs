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

use keys::unsigned;
pub(crate) use keys::{signed, EncodedBox, SignedBox};
pub(crate) use list::{BoxList, SweepKeys};

use crate::encode::{decode, encode_at_most};
use crate::gallop::gallop;
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

/// How many times longer one list of a bipartite sweep must be than the other for the walk
/// over the longer one to check, before each scan, that the other list's next box starts
/// within the walked one; and how many times for a box that fails the check to work out
/// which boxes after it fail it too ([`SkipTo`]), and pass over them.
const SPARSE: usize = 8;
const VERY_SPARSE: usize = 32;

/// How a bipartite kernel walks a list against the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// The lists are alike: every box is scanned for. The check fails about as often as it
    /// holds, and a mispredicted branch per box cost more than it saved (uniform 100k, Abp
    /// 4% slower).
    Dense,
    /// The other list is much shorter (the few moved boxes of a cell against its many
    /// resting ones): a box whose scan would find no box of the other list starting within
    /// it is passed over, for one comparison instead of a scan's set-up. `perf` on Abp, 40,000
    /// boxes, 60% fixed, one in ten of the others moving: 40% of the frame in this kernel,
    /// most of it setting up scans that found nothing; 0.73 -> 0.65 ms a frame.
    Check,
    /// The other list is shorter still (a few moving boxes among a level's fixed ones): a box
    /// that fails the check also passes over the boxes after it that cannot reach the other
    /// list's next box, in a few galloping steps. 100,000 boxes, 90% fixed, one in ten of the
    /// others moving: 1.10 -> 0.65 ms; 1,000,000, 99% fixed: 8.2 -> 2.3 ms. Working out how
    /// far costs a few float operations, more than it saves where a box or two is passed
    /// over.
    Skip,
}

/// How the bipartite kernels, walking `a` (of `a_len` boxes) against `b` and then `b` (of
/// `b_len`) against `a`, walk each.
#[inline(always)]
pub(crate) fn walks(a_len: usize, b_len: usize) -> (Walk, Walk) {
    let walk = |long: usize, short: usize| {
        if short * VERY_SPARSE <= long {
            Walk::Skip
        } else if short * SPARSE <= long {
            Walk::Check
        } else {
            Walk::Dense
        }
    };
    (walk(a_len, b_len), walk(b_len, a_len))
}

/// The boxes a walk over a sorted list passes over when the other list's next box starts
/// beyond the one it is at: those after it that end before that box does, given that no box
/// of the walk's list is longer than its widest. Every box of the other list from there on
/// starts at or after that box, so none of them meets the boxes passed over.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SkipTo {
    widest: f64,
    /// The other list's next minimum the reach was last worked out for, and the reach (the
    /// lowest minimum that may reach it): many boxes in a row skip to the same one.
    next_min: i32,
    reach: i32,
    /// The first box not passed over.
    resume: usize,
}

impl SkipTo {
    /// For a walk over a list no box of which is longer than `widest`.
    #[inline(always)]
    pub(crate) fn new(widest: f64) -> Self {
        Self {
            // Rounded down, with a margin: the subtraction in f64 is rounded too.
            widest: widest * (1.0 + 1e-9),
            next_min: i32::MIN,
            reach: i32::MIN,
            resume: 0,
        }
    }

    /// Whether box `i` is passed over.
    #[inline(always)]
    pub(crate) fn passes(&self, i: usize) -> bool {
        i < self.resume
    }

    /// Box `i` of `walk` ends before `next_min`, where the other list resumes: passes over
    /// the boxes after it that cannot reach `next_min` either.
    #[inline]
    pub(crate) fn skip(&mut self, walk: SweepKeys<'_>, i: usize, next_min: i32) {
        if next_min != self.next_min {
            let from = f64::from(decode(unsigned(next_min))) - self.widest;
            (self.next_min, self.reach) = (next_min, signed(encode_at_most(from)));
        }
        let reach = self.reach;
        let keys = &walk.min_x()[..walk.len()];
        self.resume = match keys.get(i + 1) {
            // Where the boxes are dense next to the walk's widest, the next one reaches.
            Some(&x) if x < reach => gallop(keys, i + 2, |x| x < reach),
            _ => i + 1,
        };
    }
}

/// Every overlapping pair with one box in `a` and one in `b` (both sorted): `emit(i, j)` with
/// `i` a position in `a` and `j` in `b`. Returns the number of candidates tested. Where one
/// list is much longer than the other, the walk over it passes boxes over ([`Walk`]).
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
