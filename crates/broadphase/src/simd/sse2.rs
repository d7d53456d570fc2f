//! The SSE2 kernels, and the SSE prefetch: the x86-64 baseline, enabled for every build there,
//! so these are plain functions (safe, with `unsafe` only around loads, transmutes and the
//! intrinsics older compilers still declare unsafe) and need no run-time check.
//!
//! - [`lane_overlap_mask`]: a QuadTree node's four lanes against a box, in six compares.
//! - [`UvLanes`]: Sap's swap test of the other-axis keys, one compare of four lanes.
//! - [`floor_cells4`] and [`grid_cells2`]: the float-to-cell conversions of Grid's levels and of
//!   the cells' grid (Abp, Mbp). They are two conversions, not one written twice: Grid's is four
//!   lanes of `f32`, scaled, clamped to ±limit and floored; the cells' grid's is two lanes of
//!   `f64`, offset, scaled, clamped to its cells (NaN to 0) and truncated. Each gives exactly
//!   the cells of its caller's scalar conversion, which one kernel for both could not.
//! - [`prefetch_line`]: the cache hint behind `crate::prefetch`.

use std::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_and_ps, _mm_castps_si128, _mm_castsi128_ps, _mm_cmpge_ps,
    _mm_cmpgt_epi32, _mm_cmpgt_ps, _mm_cmple_ps, _mm_cvtepi32_ps, _mm_cvttpd_epi32,
    _mm_cvttps_epi32, _mm_loadu_ps, _mm_loadu_si128, _mm_max_pd, _mm_max_ps, _mm_min_pd,
    _mm_min_ps, _mm_movemask_ps, _mm_mul_pd, _mm_mul_ps, _mm_prefetch, _mm_set1_ps, _mm_set_pd,
    _mm_set_ps, _mm_setzero_pd, _mm_shuffle_epi32, _mm_sub_pd, _mm_xor_si128, _MM_HINT_T0,
};

use crate::Aabb;

/// The four lanes' overlap test in six SSE compares. The compiler does not vectorise the
/// scalar loop by itself (it emits 24 scalar compares), and this test is the inner loop of
/// every walk.
#[inline(always)]
pub(super) fn lane_overlap_mask(b: &[[f32; 4]; 6], q: &Aabb) -> u32 {
    // SAFETY: SSE2 is enabled for this build (the `cfg` of this module), so the intrinsics
    // exist on the CPU running it. Each load reads 16 bytes from a `[f32; 4]` row, which is
    // exactly 16 bytes long and live for the whole call; `_mm_loadu_ps` needs no alignment.
    unsafe {
        let row = |k: usize| _mm_loadu_ps(b[k].as_ptr());
        let lo = _mm_and_ps(
            _mm_and_ps(
                _mm_cmple_ps(row(0), _mm_set1_ps(q.max[0])),
                _mm_cmple_ps(row(1), _mm_set1_ps(q.max[1])),
            ),
            _mm_cmple_ps(row(2), _mm_set1_ps(q.max[2])),
        );
        let hi = _mm_and_ps(
            _mm_and_ps(
                _mm_cmpge_ps(row(3), _mm_set1_ps(q.min[0])),
                _mm_cmpge_ps(row(4), _mm_set1_ps(q.min[1])),
            ),
            _mm_cmpge_ps(row(5), _mm_set1_ps(q.min[2])),
        );
        _mm_movemask_ps(_mm_and_ps(lo, hi)) as u32
    }
}

/// Keys are compared as unsigned, which SSE2 cannot: flipping the top bit maps unsigned order
/// onto signed order. Lanes 2 and 3 are also inverted (`!x`), which reverses their order, so
/// that every lane tests the same way round.
#[cfg_attr(broadphase_scalar, allow(dead_code))]
const FLIP: [u32; 4] = [0x8000_0000, 0x8000_0000, 0x7FFF_FFFF, 0x7FFF_FFFF];

/// A sweep minimum's other-axis keys as four SSE2 lanes: the SSE2 path of
/// [`super::UvProbe`].
#[derive(Clone, Copy, Debug)]
// Under `--cfg broadphase_scalar` only the tests, which still compare it, use it.
#[cfg_attr(broadphase_scalar, allow(dead_code))]
pub(super) struct UvLanes(__m128i);

#[cfg_attr(broadphase_scalar, allow(dead_code))]
impl UvLanes {
    /// The lanes of the keys `[min_u, min_v, max_u, max_v]`.
    #[inline(always)]
    pub(super) fn new(uv: &[u32; 4]) -> Self {
        // Lanes [min_u, min_v, max_u, max_v]: the passed box overlaps when its maxima are not
        // below this box's minima (lanes 0, 1) and its minima not above this box's maxima
        // (lanes 2, 3).
        let [a, b, c, d] = *uv;
        let lanes = [a ^ FLIP[0], b ^ FLIP[1], c ^ FLIP[2], d ^ FLIP[3]];
        Self(load(&lanes))
    }

    /// [`super::UvProbe::misses`] in one SSE2 compare.
    #[inline(always)]
    pub(super) fn misses(&self, q: &[u32; 4]) -> u32 {
        #[allow(unused_unsafe)]
        // SAFETY: SSE2 is part of every x86-64 target, so the intrinsics are always
        // available; they read only the two vectors given.
        unsafe {
            // q's [max_u, max_v, min_u, min_v], mapped like the probe's lanes.
            let other = _mm_shuffle_epi32::<0b01_00_11_10>(load(q));
            let other = _mm_xor_si128(other, load(&FLIP));
            // A lane where the probe is above: the boxes are apart on that axis.
            _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(self.0, other))) as u32
        }
    }
}

/// Four keys as a vector.
#[inline(always)]
#[cfg_attr(broadphase_scalar, allow(dead_code))]
fn load(keys: &[u32; 4]) -> __m128i {
    #[allow(unused_unsafe)]
    // SAFETY: `keys` is 16 readable bytes; the load has no alignment requirement.
    unsafe {
        _mm_loadu_si128(keys.as_ptr().cast())
    }
}

/// Grid's cells of four coordinates at once (binning computes nine per box, and one at a
/// time they were half of its time): see [`super::Sse2::floor_cells4`].
#[inline(always)]
pub(super) fn floor_cells4(inv: f32, limit: f32, x: [f32; 4]) -> [i32; 4] {
    // Newer compilers declare these intrinsics safe; older ones (the minimum supported) do not.
    #[allow(unused_unsafe)]
    // SAFETY: SSE2 is part of x86_64; the intrinsics work on registers only, and the transmute
    // turns four packed i32 lanes (16 bytes, any bits valid) into `[i32; 4]` (16 bytes).
    unsafe {
        let t = _mm_mul_ps(_mm_set_ps(x[3], x[2], x[1], x[0]), _mm_set1_ps(inv));
        let t = _mm_min_ps(_mm_max_ps(t, _mm_set1_ps(-limit)), _mm_set1_ps(limit));
        // Truncate, then step down where the truncation rounded up (below zero): the mask of
        // a true comparison is -1.
        let i = _mm_cvttps_epi32(t);
        let above = _mm_castps_si128(_mm_cmpgt_ps(_mm_cvtepi32_ps(i), t));
        std::mem::transmute::<__m128i, [i32; 4]>(_mm_add_epi32(i, above))
    }
}

/// The cells' grid's cells of two coordinates at once (the binning of Abp and Mbp spent a
/// third of its time converting coordinates one by one): see [`super::Sse2::grid_cells2`].
#[inline(always)]
pub(super) fn grid_cells2(
    x: [f32; 2],
    origin: [f64; 2],
    inv_cell: [f64; 2],
    cells: [usize; 2],
) -> [u16; 2] {
    // Newer compilers declare these intrinsics safe; older ones (the minimum supported) do not.
    #[allow(unused_unsafe)]
    // SAFETY: SSE2 is part of x86_64; the intrinsics work on registers only, and the
    // transmute turns four packed i32 lanes (16 bytes, any bits valid) into `[i32; 4]`.
    unsafe {
        let t = _mm_mul_pd(
            _mm_sub_pd(
                _mm_set_pd(f64::from(x[1]), f64::from(x[0])),
                _mm_set_pd(origin[1], origin[0]),
            ),
            _mm_set_pd(inv_cell[1], inv_cell[0]),
        );
        // The same clamp as the one-at-a-time `cell`, NaN included: `max` returns its second
        // operand (0) when the first is NaN.
        // Through u32 (at most MAX_CELLS_PER_AXIS): usize to f64 is a long sequence.
        let last = _mm_set_pd(
            f64::from((cells[1] - 1) as u32),
            f64::from((cells[0] - 1) as u32),
        );
        let t = _mm_min_pd(_mm_max_pd(t, _mm_setzero_pd()), last);
        let lanes = std::mem::transmute::<__m128i, [i32; 4]>(_mm_cvttpd_epi32(t));
        [lanes[0] as u16, lanes[1] as u16]
    }
}

/// Asks the processor to start loading the cache line holding the byte at `p`: see
/// [`super::prefetch_line`].
#[inline(always)]
pub(super) fn prefetch_line(p: *const u8) {
    // Newer compilers declare the intrinsic safe; older ones (the minimum supported) do not.
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of x86_64. A prefetch neither reads into the program nor faults,
    // whatever the address.
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
}
