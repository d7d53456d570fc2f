//! The box-pruning kernels one candidate at a time: what [`super::complete`] and
//! [`super::bipartite`] run where AVX2 does not (or `--cfg broadphase_scalar` says not to), and
//! the reference the AVX2 kernels in `crate::simd` are tested against.

use super::{BoxList, SignedBox, SweepKeys};

/// Calls `emit(j)` for each box `j` of `list`, from `from` on, that starts on the sweep axis
/// within `p`'s extent and overlaps `p` on the two other axes, and returns how many started
/// within: one candidate at a time, over zipped slices (no bounds checks). The padding's
/// sentinel ends the scan at the list's end.
#[inline(always)]
fn scan(list: SweepKeys<'_>, from: usize, p: &SignedBox, mut emit: impl FnMut(usize)) -> u64 {
    let keys = list.min_x()[from..]
        .iter()
        .zip(&list.min_u()[from..])
        .zip(&list.min_v()[from..])
        .zip(&list.max_u()[from..])
        .zip(&list.max_v()[from..]);
    let mut tested = 0;
    for ((((&x, &mu), &mv), &xu), &xv) in keys {
        if x > p.max_x {
            break;
        }
        if (mu <= p.max_u) & (p.min_u <= xu) & (mv <= p.max_v) & (p.min_v <= xv) {
            emit(from + tested);
        }
        tested += 1;
    }
    tested as u64
}

/// [`super::complete`] one candidate at a time: the reference the SIMD kernel is tested
/// against.
pub(crate) fn complete(list: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    let keys = list.sweep_keys();
    let mut tests = 0u64;
    for i in 0..keys.len() {
        let p = keys.box_at(i);
        tests += scan(keys, i + 1, &p, |j| emit(i, j));
    }
    tests
}

/// [`super::bipartite`] one candidate at a time.
pub(crate) fn bipartite(a: &BoxList, b: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    let (ka, kb) = (a.sweep_keys(), b.sweep_keys());
    let (walk_a, walk_b) = super::walks(a.len(), b.len());
    let mut skip_a = super::SkipTo::new(a.max_width());
    let mut skip_b = super::SkipTo::new(b.max_width());
    let mut tests = 0u64;
    // Pairs where the `a` box starts first (or together): scan `b` from a's min to a's max.
    let mut start = 0;
    for i in 0..ka.len() {
        if skip_a.passes(i) {
            continue;
        }
        let p = ka.box_at(i);
        while kb.min_x()[start] < p.min_x {
            start += 1;
        }
        if start == kb.len() {
            break;
        }
        if walk_a != super::Walk::Dense && kb.min_x()[start] > p.max_x {
            if walk_a == super::Walk::Skip {
                skip_a.skip(ka, i, kb.min_x()[start]);
            }
            continue;
        }
        tests += scan(kb, start, &p, |j| emit(i, j));
    }
    // Pairs where the `b` box starts strictly first: scan `a` past b's min up to b's max.
    let mut start = 0;
    for j in 0..kb.len() {
        if skip_b.passes(j) {
            continue;
        }
        let p = kb.box_at(j);
        while ka.min_x()[start] <= p.min_x {
            start += 1;
        }
        if start == ka.len() {
            break;
        }
        if walk_b != super::Walk::Dense && ka.min_x()[start] > p.max_x {
            if walk_b == super::Walk::Skip {
                skip_b.skip(kb, j, ka.min_x()[start]);
            }
            continue;
        }
        tests += scan(ka, start, &p, |i| emit(i, j));
    }
    tests
}
