//! The AVX2 kernels: eight candidates per step, where [`super::Avx2`] says the CPU runs AVX2
//! and POPCNT. Each is an `unsafe fn` with `#[target_feature(enable = "avx2,popcnt")]`,
//! called only from the token's methods.
//!
//! - The box-pruning kernels of [`crate::prune`] ([`complete_boxes`], [`bipartite_boxes`]).
//!   Each step loads eight consecutive entries of the five key arrays, compares them with the
//!   probe box broadcast to all lanes, and turns the lane masks into bits: the lanes whose
//!   sweep-axis minimum is within the probe's maximum (a prefix, since the list is sorted;
//!   fewer than eight ends the scan) and, among those, the lanes that also overlap on the two
//!   other axes (reported in increasing position, the order of the scalar kernels).
//! - The scan of a long collision cell of Grid ([`scan_cell`]): a cell of a coarse level holds
//!   its large boxes and every smaller box that visits it, hundreds of entries; a scalar loop
//!   runs one test per entry, this one eight, without a branch per entry.

use std::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_castsi256_ps, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32,
    _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256, _mm256_set1_epi32,
    _mm256_setzero_si256, _mm256_xor_si256,
};

use super::RunColumns;
use crate::prune::{walks, BoxList, SignedBox, SkipTo, SweepKeys, Walk};

/// Hit positions a scan holds before it hands them to its caller's `emit`.
///
/// The scan loop makes no call: `emit` (a cell's report of a pair, not inlined) would
/// clobber every vector register, and the loop kept its broadcast probe and key pointers on
/// the stack, reloading them each step (`perf annotate`: the two hottest instructions of
/// `complete_boxes` were such a store and reload). The hits wait here, and are emitted
/// after the scan, or, if a long scan fills the buffer, after the step that filled it.
/// Positions are held as `u32`: a list holds at most [`crate::MAX_PROXIES`] boxes.
const SCAN_HITS: usize = 64;

/// The hits a scan holds ([`SCAN_HITS`]), one per sweep function and reused by each of its
/// scans: zeroing it at every scan was eight vector stores per box. Aligned to a cache
/// line, which makes the function align its stack frame: where its spilled vectors lie then
/// no longer depends on its caller's stack (Mbp's `bipartite_boxes` ran 1.16x slower on
/// `sleeping` 100,000 after a change to code it never ran, the same instructions at another
/// stack offset).
#[repr(align(64))]
struct Held([u32; SCAN_HITS]);

/// Scans `$keys` from position `$from` against the probe box `$p` (a [`SignedBox`]) until
/// a box starts beyond it, calling `$emit(j)` for each overlapping position `j` in increasing
/// order (held meanwhile in `$held`, a [`Held`]), and adds the candidates tested to `$tests`.
/// A macro, so that it is expanded inside each `#[target_feature]` function (which cannot be
/// `#[inline(always)]`).
///
/// Requires: AVX2 runs, and `$from <= $keys.len`.
macro_rules! scan {
    ($keys:expr, $from:expr, $p:expr, $held:ident, $tests:ident, $emit:expr) => {{
        let k: SweepKeys<'_> = $keys;
        let p: SignedBox = $p;
        let max_x = _mm256_set1_epi32(p.max_x);
        let (min_u, min_v) = (_mm256_set1_epi32(p.min_u), _mm256_set1_epi32(p.min_v));
        let (max_u, max_v) = (_mm256_set1_epi32(p.max_u), _mm256_set1_epi32(p.max_v));
        let hits_held: &mut [u32; SCAN_HITS] = &mut $held.0;
        let mut held = 0usize;
        let mut j: usize = $from;
        loop {
            debug_assert!(j <= k.len());
            // SAFETY: every key array holds `len + PAD` entries (PAD = 8: only a `BoxList`
            // makes a `SweepKeys`, and it keeps its arrays padded) and `j <= len`, so the
            // eight lanes from `j` are in bounds: `j` starts at most at `len`, and grows by
            // eight only when all eight lanes started within the probe, so none of them was
            // padding (whose sentinel is above every finite key) and `j + 8 <= len`. The
            // loads are unaligned.
            let load =
                |a: &[i32]| unsafe { _mm256_loadu_si256(a.as_ptr().add(j).cast::<__m256i>()) };
            let x = load(k.min_x());
            let beyond = _mm256_cmpgt_epi32(x, max_x);
            let apart = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(load(k.min_u()), max_u),
                    _mm256_cmpgt_epi32(min_u, load(k.max_u())),
                ),
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(load(k.min_v()), max_v),
                    _mm256_cmpgt_epi32(min_v, load(k.max_v())),
                ),
            );
            let beyond_bits = _mm256_movemask_ps(_mm256_castsi256_ps(beyond)) as u32;
            let miss_bits =
                _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(beyond, apart))) as u32;
            let within = !beyond_bits & 0xFF;
            let mut hits = !miss_bits & 0xFF;
            // At most eight hits a step, and `held <= SCAN_HITS - 8` at its start (the
            // buffer is emptied below once it holds more): the mask keeps the index in
            // bounds without a check the compiler cannot drop.
            while hits != 0 {
                hits_held[held & (SCAN_HITS - 1)] = (j + hits.trailing_zeros() as usize) as u32;
                held += 1;
                hits &= hits - 1;
            }
            $tests += u64::from(within.count_ones());
            if within != 0xFF {
                break;
            }
            j += 8;
            if held > SCAN_HITS - 8 {
                for &h in &hits_held[..held] {
                    $emit(h as usize);
                }
                held = 0;
            }
        }
        for &h in &hits_held[..held] {
            $emit(h as usize);
        }
    }};
}

/// [`crate::prune::complete`] with AVX2.
///
/// # Safety
/// The CPU runs AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn complete_boxes(list: &BoxList, emit: &mut impl FnMut(usize, usize)) -> u64 {
    let keys = list.sweep_keys();
    let mut tests = 0u64;
    let mut held = Held([0; SCAN_HITS]);
    for i in 0..list.len() {
        // `i + 1 <= len`.
        scan!(keys, i + 1, keys.box_at(i), held, tests, |j| emit(i, j));
    }
    tests
}

/// [`crate::prune::bipartite`] with AVX2.
///
/// # Safety
/// The CPU runs AVX2 and POPCNT.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn bipartite_boxes(
    a: &BoxList,
    b: &BoxList,
    emit: &mut impl FnMut(usize, usize),
) -> u64 {
    let (ka, kb) = (a.sweep_keys(), b.sweep_keys());
    let (walk_a, walk_b) = walks(a.len(), b.len());
    let (mut skip_a, mut skip_b) = (SkipTo::new(a.max_width()), SkipTo::new(b.max_width()));
    let mut tests = 0u64;
    let mut held = Held([0; SCAN_HITS]);
    // Pairs where the `a` box starts first (or together): scan `b` from a's min to a's max.
    let mut start = 0;
    for i in 0..a.len() {
        if skip_a.passes(i) {
            continue;
        }
        let min_x = ka.min_x()[i];
        // Stops at the latest on b's first sentinel, above every finite key: `start <= len`.
        while kb.min_x()[start] < min_x {
            start += 1;
        }
        if start == b.len() {
            // The rest of `a` starts after every box of `b`: pass two finds their pairs.
            break;
        }
        if walk_a != Walk::Dense && kb.min_x()[start] > ka.max_x()[i] {
            if walk_a == Walk::Skip {
                skip_a.skip(ka, i, kb.min_x()[start]);
            }
            continue;
        }
        scan!(kb, start, ka.box_at(i), held, tests, |j| emit(i, j));
    }
    // Pairs where the `b` box starts strictly first: scan `a` past b's min up to b's max.
    let mut start = 0;
    for j in 0..b.len() {
        if skip_b.passes(j) {
            continue;
        }
        let min_x = kb.min_x()[j];
        while ka.min_x()[start] <= min_x {
            start += 1;
        }
        if start == a.len() {
            // The rest of `b` starts at or after every box of `a`: pass one found their pairs.
            break;
        }
        if walk_b != Walk::Dense && ka.min_x()[start] > kb.max_x()[j] {
            if walk_b == Walk::Skip {
                skip_b.skip(kb, j, ka.min_x()[start]);
            }
            continue;
        }
        scan!(ka, start, kb.box_at(j), held, tests, |i| emit(i, j));
    }
    tests
}

/// [`super::Avx2::scan_cell`]: entry `i` of a collision cell against the entries from
/// `from` on, eight at a time while eight remain. Returns the pairs tested, the hits written
/// and the position it stopped at (the caller's scalar loop does the rest).
///
/// # Safety
/// The CPU must run AVX2.
#[target_feature(enable = "avx2,popcnt")]
pub(super) unsafe fn scan_cell<const FIRST_ALL: u32, const DIRTY: u32, const FIXED: u32>(
    cell: &RunColumns<'_>,
    i: usize,
    from: usize,
    hits: &mut [u32],
) -> (u64, usize, usize) {
    let len = cell.vals.len();
    let (vals, slots) = (cell.vals, &cell.slots[..len]);
    let cols: [&[i32]; 6] = std::array::from_fn(|k| &cell.cols[k][..len]);
    let set = |x: u32| _mm256_set1_epi32(x as i32);
    let (vi, si) = (set(vals[i]), set(slots[i]));
    let (first_all, dirty, fixed) = (set(FIRST_ALL), set(DIRTY), set(FIXED));
    let bi: [__m256i; 6] = std::array::from_fn(|k| _mm256_set1_epi32(cols[k][i]));
    let (mut tests, mut n, mut j) = (0u64, 0usize, from);
    while j + 8 <= len {
        // SAFETY: `j + 8 <= len` and every array read is `len` long (`vals` by definition,
        // `slots` and the columns cut to `len` above), so the eight lanes from `j` are in
        // bounds. The loads are unaligned.
        let load = |a: &[i32]| unsafe { _mm256_loadu_si256(a.as_ptr().add(j).cast::<__m256i>()) };
        let load_u = |a: &[u32]| unsafe { _mm256_loadu_si256(a.as_ptr().add(j).cast::<__m256i>()) };
        let (vj, sj) = (load_u(vals), load_u(slots));
        let corner = _mm256_xor_si256(
            _mm256_and_si256(_mm256_or_si256(vi, vj), first_all),
            first_all,
        );
        let changed = _mm256_xor_si256(_mm256_and_si256(_mm256_or_si256(si, sj), dirty), dirty);
        let both_fixed = _mm256_and_si256(_mm256_and_si256(si, sj), fixed);
        let skip = _mm256_or_si256(_mm256_or_si256(corner, changed), both_fixed);
        let tested = _mm256_cmpeq_epi32(skip, _mm256_setzero_si256());
        let apart = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(bi[0], load(cols[3])),
                    _mm256_cmpgt_epi32(load(cols[0]), bi[3]),
                ),
                _mm256_or_si256(
                    _mm256_cmpgt_epi32(bi[1], load(cols[4])),
                    _mm256_cmpgt_epi32(load(cols[1]), bi[4]),
                ),
            ),
            _mm256_or_si256(
                _mm256_cmpgt_epi32(bi[2], load(cols[5])),
                _mm256_cmpgt_epi32(load(cols[2]), bi[5]),
            ),
        );
        let tested_bits = _mm256_movemask_ps(_mm256_castsi256_ps(tested)) as u32;
        let apart_bits = _mm256_movemask_ps(_mm256_castsi256_ps(apart)) as u32;
        tests += u64::from(tested_bits.count_ones());
        let mut m = tested_bits & !apart_bits & 0xFF;
        while m != 0 {
            hits[n] = (j + m.trailing_zeros() as usize) as u32;
            n += 1;
            m &= m - 1;
        }
        j += 8;
    }
    (tests, n, j)
}
