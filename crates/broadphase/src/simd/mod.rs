//! Every SIMD kernel of the crate, behind safe functions, and the policy that picks them.
//!
//! The algorithms never touch an intrinsic: they ask this module for a path and call its safe
//! functions, or run their own scalar code.
//!
//! - **AVX2** (the box-pruning kernels of [`crate::prune`], the scan of a long collision cell of
//!   `crate::grid`) is chosen at run time: [`avx2`] gives an [`Avx2`] token where the CPU runs
//!   AVX2 and POPCNT, asked once and cached. The kernels are methods of the token, so none can
//!   be called without the check. They are in `avx2.rs`.
//! - **SSE2** (the lane-overlap mask of QuadTree's nodes, Sap's swap test of the other-axis
//!   keys, the float-to-cell conversions of Grid's levels and of the cells' grid) is part of
//!   every x86-64 CPU, so it is chosen at compile time: [`sse2`] gives an [`Sse2`] token on
//!   x86-64, as a constant. Its kernels, and the prefetch hint, are in `sse2.rs`.
//! - **Scalar** everywhere else: on other architectures neither token can exist (its type is
//!   uninhabited there), so every dispatch folds to the scalar path.
//!
//! `--cfg broadphase_scalar` (`BROADPHASE_SCALAR=1` at build time, read by `build.rs`, or
//! `RUSTFLAGS="--cfg broadphase_scalar"`) makes [`avx2`] and [`sse2`] give `None`, so every
//! dispatch takes the scalar path; CI runs the unit tests so.
//! The tests that compare a kernel with its scalar twin take the tokens from
//! [`Avx2::detect`] and [`Sse2::detect`], which ignore that switch: they compare both paths
//! wherever the CPU runs the kernel, in either build. [`prefetch_line`] is a hint, not a path:
//! the switch leaves it on.
//!
//! The scalar twins live beside their callers, where they are the caller's own code
//! (`prune/scalar.rs`, `grid/scan.rs`, `cell_of` in `grid/layout.rs`, the cells' grid's `cell`
//! in `cells/grid.rs`, `overlap_mask_scalar` in `quadtree/node.rs`), and so do the tests
//! comparing the two. One twin lives here: Sap's swap test keeps its probe as SSE2 lanes or as
//! plain keys, so the path decides the probe's layout, and [`UvProbe`] holds either.
//!
//! The kernels take their callers' data as the callers hold it, so that they compile to what
//! they were when they lived beside their callers: a [`BoxList`] (read through
//! `prune::SweepKeys`, the view of its padded keys that only a list can make), a
//! [`RunColumns`] (a collision cell's columns, defined here and named by `grid::scan` too),
//! plain arrays and boxes for the SSE2 kernels.
//!
//! Every `unsafe` here has a `SAFETY` note: the AVX2 kernels are `unsafe fn`s with
//! `#[target_feature]`, called only from a token's methods; the SSE2 kernels rely on SSE2
//! being enabled for the whole build; the loads rely on the bounds that the inputs guarantee
//! (a list's padding, slices cut to length).

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2;
#[cfg(test)]
mod tests;

#[cfg(target_arch = "x86_64")]
use std::sync::OnceLock;

use crate::prune::BoxList;
use crate::Aabb;

/// A type with no values: the proof a token holds where its instructions cannot exist.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[derive(Clone, Copy, Debug)]
enum Never {}

/// What an [`Avx2`] holds: nothing on x86-64, a value that cannot exist elsewhere.
#[cfg(target_arch = "x86_64")]
type Avx2Proof = ();
#[cfg(not(target_arch = "x86_64"))]
type Avx2Proof = Never;

/// What an [`Sse2`] holds.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
type Sse2Proof = ();
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
type Sse2Proof = Never;

/// Proof that the CPU runs AVX2 and POPCNT: made only by [`Avx2::detect`]. Its methods are
/// the AVX2 kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(Avx2Proof);

/// The AVX2 path, where dispatch takes it: `Some` where the CPU runs AVX2 and POPCNT, unless
/// the build has `--cfg broadphase_scalar`.
#[inline(always)]
pub(crate) fn avx2() -> Option<Avx2> {
    if cfg!(broadphase_scalar) {
        None
    } else {
        Avx2::detect()
    }
}

impl Avx2 {
    /// `Some` where the CPU runs AVX2 and POPCNT (which every AVX2 CPU has), whatever the
    /// dispatch policy: asked once, then cached. Dispatch takes [`avx2`]; the tests that
    /// compare paths take this.
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        {
            static HAS_AVX2: OnceLock<bool> = OnceLock::new();
            let has = *HAS_AVX2.get_or_init(|| {
                std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
            });
            has.then_some(Self(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }

    /// [`crate::prune::complete`] eight candidates per step: the same pairs in the same order,
    /// and the same count of candidates tested, as `prune::scalar::complete`.
    #[inline(always)]
    pub(crate) fn complete_boxes(self, list: &BoxList, emit: &mut impl FnMut(usize, usize)) -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only where the CPU runs AVX2 and POPCNT (`Avx2::detect`).
        unsafe {
            avx2::complete_boxes(list, emit)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (list, emit);
            match self.0 {}
        }
    }

    /// [`crate::prune::bipartite`] eight candidates per step (`a` and `b` not empty).
    #[inline(always)]
    pub(crate) fn bipartite_boxes(
        self,
        a: &BoxList,
        b: &BoxList,
        emit: &mut impl FnMut(usize, usize),
    ) -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only where the CPU runs AVX2 and POPCNT.
        unsafe {
            avx2::bipartite_boxes(a, b, emit)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (a, b, emit);
            match self.0 {}
        }
    }

    /// The scan of a long collision cell (`grid::scan::scan`) from `from` on, eight entries at
    /// a time while eight remain: entry `i` against each later entry whose control bits pass
    /// (`FIRST_ALL`, `DIRTY` and `FIXED` are the bits of `grid::scan::skip`) and whose box
    /// overlaps it. The positions found are written to `hits` (at least `cell.vals.len()`
    /// long). Returns the pairs tested, the hits written and the position it stopped at: the
    /// caller's scalar loop does the rest.
    #[inline(always)]
    pub(crate) fn scan_cell<const FIRST_ALL: u32, const DIRTY: u32, const FIXED: u32>(
        self,
        cell: &RunColumns<'_>,
        i: usize,
        from: usize,
        hits: &mut [u32],
    ) -> (u64, usize, usize) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only where the CPU runs AVX2 and POPCNT.
        unsafe {
            avx2::scan_cell::<FIRST_ALL, DIRTY, FIXED>(cell, i, from, hits)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (cell, i, from, hits);
            match self.0 {}
        }
    }
}

/// The entries of one long collision cell of Grid (the run of entries of one cell key), as
/// columns in cell order: control bits, slots with flags, and the boxes' keys as six columns
/// (see [`RunColumns::cols`]). Grid's scan (`grid::scan`, which names it too) reads it, and so
/// does [`Avx2::scan_cell`].
#[derive(Clone, Copy)]
pub(crate) struct RunColumns<'a> {
    /// Entry values: the lowest-cell bits (`grid::entries::FIRST_ALL`) decide where a pair is
    /// tested.
    pub vals: &'a [u32],
    /// Slots with `grid::record::DIRTY` and `FIXED`.
    pub slots: &'a [u32],
    /// Min x, y, z then max x, y, z of each entry's box, as signed keys
    /// ([`crate::prune::signed`]): `cols[k][e]`. Each column is as long as `vals`.
    pub cols: [&'a [i32]; 6],
}

/// Proof that SSE2 is enabled for this build (on x86-64 it always is): made only by
/// [`Sse2::detect`]. Its methods are the SSE2 kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sse2(Sse2Proof);

/// The SSE2 path, where dispatch takes it: `Some` on x86-64 (a constant, so the choice
/// folds away), unless the build has `--cfg broadphase_scalar`.
#[inline(always)]
pub(crate) const fn sse2() -> Option<Sse2> {
    if cfg!(broadphase_scalar) {
        None
    } else {
        Sse2::detect()
    }
}

impl Sse2 {
    /// `Some` where the build enables SSE2 (all of x86-64), whatever the dispatch policy.
    #[inline(always)]
    pub(crate) const fn detect() -> Option<Self> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            Some(Self(()))
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            None
        }
    }

    /// The lanes of a QuadTree node whose box overlaps `q` (inclusive), as a bit mask: the
    /// node's four lanes' boxes as rows `bounds[k][lane]` (min x, y, z, then max x, y, z).
    /// The same mask as `quadtree::node::overlap_mask_scalar`, in six compares.
    #[inline(always)]
    pub(crate) fn lane_overlap_mask(self, bounds: &[[f32; 4]; 6], q: &Aabb) -> u32 {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            sse2::lane_overlap_mask(bounds, q)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            let _ = (bounds, q);
            match self.0 {}
        }
    }

    /// Grid's cells of four coordinates at once: `floor(clamp(x * inv, -limit, limit))` in
    /// `f32`, the same cells as `grid::layout::cell_of` for finite coordinates.
    #[inline(always)]
    pub(crate) fn floor_cells4(self, inv: f32, limit: f32, x: [f32; 4]) -> [i32; 4] {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            sse2::floor_cells4(inv, limit, x)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            let _ = (inv, limit, x);
            match self.0 {}
        }
    }

    /// The cells' grid's cells of `x[0]` on cut axis 0 and `x[1]` on cut axis 1:
    /// `(x - origin) * inv_cell` in `f64`, clamped to `0..=cells - 1` (NaN to 0) and
    /// truncated, the same cells as the grid's one-at-a-time `cell` (`cells/grid.rs`).
    /// `cells` are at most `MAX_CELLS_PER_AXIS` and at least 1.
    #[inline(always)]
    pub(crate) fn grid_cells2(
        self,
        x: [f32; 2],
        origin: [f64; 2],
        inv_cell: [f64; 2],
        cells: [usize; 2],
    ) -> [u16; 2] {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            sse2::grid_cells2(x, origin, inv_cell, cells)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            let _ = (x, origin, inv_cell, cells);
            match self.0 {}
        }
    }
}

/// The other-axis keys `[min_u, min_v, max_u, max_v]` (encoded, compared unsigned) of a sweep
/// minimum, laid out once for testing many passed maxima against it: Sap's swap test. Four
/// SSE2 lanes on the SSE2 path ([`sse2::UvLanes`]), the keys themselves on the scalar path
/// ([`UvKeys`]); the path decides the layout, so it is chosen here, at compile time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UvProbe(UvLayout);

#[cfg(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(broadphase_scalar)
))]
type UvLayout = sse2::UvLanes;
#[cfg(not(all(
    target_arch = "x86_64",
    target_feature = "sse2",
    not(broadphase_scalar)
)))]
type UvLayout = UvKeys;

impl UvProbe {
    /// The probe of the box with other-axis keys `uv`.
    #[inline(always)]
    pub(crate) fn new(uv: &[u32; 4]) -> Self {
        Self(UvLayout::new(uv))
    }

    /// Zero when the box with other-axis keys `q` overlaps the probe's box on the two other
    /// axes; otherwise a non-zero value below 16. Branch-free: the caller combines it with its
    /// own conditions and branches once.
    #[inline(always)]
    pub(crate) fn misses(&self, q: &[u32; 4]) -> u32 {
        self.0.misses(q)
    }
}

/// The scalar path of [`UvProbe`]: the keys themselves, tested in scalar arithmetic.
#[derive(Clone, Copy, Debug)]
// On the SSE2 path only the tests, which compare both, use it.
#[cfg_attr(not(broadphase_scalar), allow(dead_code))]
struct UvKeys([u32; 4]);

#[cfg_attr(not(broadphase_scalar), allow(dead_code))]
impl UvKeys {
    #[inline(always)]
    fn new(uv: &[u32; 4]) -> Self {
        Self(*uv)
    }

    /// [`UvProbe::misses`].
    #[inline(always)]
    fn misses(&self, q: &[u32; 4]) -> u32 {
        (uv_overlap_scalar(&self.0, q) ^ 1) as u32
    }
}

/// The other-axes test in scalar arithmetic: 1 when the boxes with keys `p` and `q` (each
/// `[min_u, min_v, max_u, max_v]`) overlap on both axes.
#[inline(always)]
pub(crate) fn uv_overlap_scalar(p: &[u32; 4], q: &[u32; 4]) -> u64 {
    // `a <= b` as the sign bit of `a - b - 1` in 64 bits: no branch.
    let le = |a: u32, b: u32| ((i64::from(a) - i64::from(b) - 1) >> 63) as u64 & 1;
    le(p[0], q[2]) & le(q[0], p[2]) & le(p[1], q[3]) & le(q[1], p[3])
}

/// Asks the processor to start loading the cache line holding the byte at `p`. A hint: it
/// reads nothing into the program and never faults, whatever `p` points at, and does nothing
/// on other architectures.
#[inline(always)]
pub(crate) fn prefetch_line(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    sse2::prefetch_line(p);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    let _ = p;
}
