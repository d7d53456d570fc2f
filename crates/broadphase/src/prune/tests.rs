//! The box-pruning kernels against a plain pair test, the AVX2 kernels against the scalar ones
//! (the same pairs in the same order, the same tests counted), and the list's merge and retain.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::encode::encode;
use crate::simd::Avx2;
use crate::Aabb;

const AXES: [usize; 3] = [0, 1, 2];

fn boxes() -> impl Strategy<Value = Vec<Aabb>> {
    // A coarse lattice makes touching and identical boxes common.
    let coord = (0i32..12).prop_map(|v| v as f32 * 0.5);
    let b = (
        [coord.clone(), coord.clone(), coord.clone()],
        [0i32..4, 0i32..4, 0i32..4],
    )
        .prop_map(|(min, size)| {
            let max = std::array::from_fn(|i| min[i] + size[i] as f32 * 0.5);
            Aabb::new(min, max)
        });
    prop::collection::vec(b, 0..60)
}

/// Boxes crowded on the sweep axis (long runs of candidates, many SIMD steps per box) with
/// negative, zero and positive keys on the others.
fn crowded() -> impl Strategy<Value = Vec<Aabb>> {
    let b = (0i32..4, [-6i32..6, -6i32..6], [0i32..5, 0i32..5]).prop_map(|(x, uv, size)| {
        let min = [x as f32 * 0.5, uv[0] as f32 * 0.5, uv[1] as f32 * -0.5];
        Aabb::new(
            min,
            [
                min[0] + 4.0,
                min[1] + size[0] as f32 * 0.5,
                min[2] + size[1] as f32 * 0.5,
            ],
        )
    });
    prop::collection::vec(b, 0..120)
}

/// Boxes along a long sweep axis, most short, some long enough to reach far ahead, on a
/// lattice that makes touching boxes common.
fn spread() -> impl Strategy<Value = Aabb> {
    let len = prop_oneof![4 => 0i32..3, 1 => 0i32..40];
    (0i32..200, len, [0i32..4, 0i32..4]).prop_map(|(x, len, uv)| {
        let min = [x as f32 * 0.5, uv[0] as f32 * 0.5, uv[1] as f32 * 0.5];
        Aabb::new(min, [min[0] + len as f32 * 0.5, min[1] + 1.0, min[2] + 1.0])
    })
}

fn sorted_list(items: &[(usize, Aabb)]) -> BoxList {
    let mut sorted: Vec<(EncodedBox, u32)> = items
        .iter()
        .map(|(i, b)| (EncodedBox::new(b, AXES), *i as u32))
        .collect();
    sorted.sort_by_key(|(e, _)| e.min_x);
    let mut list = BoxList::default();
    for (e, id) in &sorted {
        list.push(e, *id, 0);
    }
    list
}

fn naive(a: &[(usize, Aabb)], b: &[(usize, Aabb)]) -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    for (i, x) in a {
        for (j, y) in b {
            if i != j && x.overlaps(y) {
                out.insert(((*i).min(*j) as u32, (*i).max(*j) as u32));
            }
        }
    }
    out
}

/// The pairs a kernel emits, in emission order, and its test count: the AVX2 kernel with
/// `Some`, the scalar one with `None`, whatever the dispatch would take.
fn run_complete(list: &BoxList, avx2: Option<Avx2>) -> (Vec<(usize, usize)>, u64) {
    let mut out = Vec::new();
    let mut emit = |i, j| out.push((i, j));
    let tests = match avx2 {
        Some(avx2) => avx2.complete_boxes(list, &mut emit),
        None => scalar::complete(list, emit),
    };
    (out, tests)
}

fn run_bipartite(a: &BoxList, b: &BoxList, avx2: Option<Avx2>) -> (Vec<(usize, usize)>, u64) {
    let mut out = Vec::new();
    let mut emit = |i, j| out.push((i, j));
    let tests = match avx2 {
        Some(avx2) => avx2.bipartite_boxes(a, b, &mut emit),
        None => scalar::bipartite(a, b, emit),
    };
    (out, tests)
}

#[test]
fn simd_kernels_run_here() {
    // Not a requirement, but the comparisons below only mean something where AVX2 runs.
    if Avx2::detect().is_none() {
        eprintln!("this CPU has no AVX2: the AVX2 box-pruning kernels are not compared");
    }
}

proptest! {
    #[test]
    fn complete_finds_every_pair_once(all in boxes()) {
        let items: Vec<(usize, Aabb)> = all.into_iter().enumerate().collect();
        let list = sorted_list(&items);
        prop_assert!(list.is_sorted());
        let mut found = Vec::new();
        complete(&list, |i, j| {
            let (a, b) = (list.id(i), list.id(j));
            found.push((a.min(b), a.max(b)));
        });
        let set: BTreeSet<(u32, u32)> = found.iter().copied().collect();
        prop_assert_eq!(set.len(), found.len(), "a pair was reported twice");
        prop_assert_eq!(set, naive(&items, &items));
    }

    #[test]
    fn uv_overlaps_in_a_range_match_the_plain_test(
        all in crowded(),
        probe in crowded(),
        from in 0usize..120,
        len in 0usize..120,
        limit in -8i32..8,
    ) {
        let items: Vec<(usize, Aabb)> = all.into_iter().enumerate().collect();
        let list = sorted_list(&items);
        let Some(q) = probe.first().map(|b| EncodedBox::new(b, AXES)) else {
            return Ok(());
        };
        let from = from.min(list.len());
        let range = from..(from + len).min(list.len());
        let limit = encode(limit as f32 * 0.5);
        let mut got = Vec::new();
        list.for_each_uv_overlap(range.clone(), &q.uv, |m| m <= limit, |i| got.push(i));
        let want: Vec<usize> = range
            .filter(|&i| {
                let p = list.uv(i);
                let uv = (p[0] <= q.uv[2]) & (q.uv[0] <= p[2]) & (p[1] <= q.uv[3]) & (q.uv[1] <= p[3]);
                uv & (list.max_x(i) <= limit)
            })
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn bipartite_finds_every_cross_pair_once(all in boxes(), split in 0usize..60) {
        let items: Vec<(usize, Aabb)> = all.into_iter().enumerate().collect();
        let split = split.min(items.len());
        let (left, right) = items.split_at(split);
        let (la, lb) = (sorted_list(left), sorted_list(right));
        let mut found = Vec::new();
        bipartite(&la, &lb, |i, j| {
            let (a, b) = (la.id(i), lb.id(j));
            found.push((a.min(b), a.max(b)));
        });
        let set: BTreeSet<(u32, u32)> = found.iter().copied().collect();
        prop_assert_eq!(set.len(), found.len(), "a pair was reported twice");
        prop_assert_eq!(set, naive(left, right));
    }

    /// The AVX2 kernels against the scalar ones, both called directly (also under
    /// `--cfg broadphase_scalar`) wherever the CPU runs AVX2: the same pairs, in the same
    /// order, and the same number of candidates tested.
    #[test]
    fn simd_and_scalar_kernels_agree(all in crowded(), split in 0usize..120) {
        let Some(avx2) = Avx2::detect() else {
            return Ok(());
        };
        let items: Vec<(usize, Aabb)> = all.into_iter().enumerate().collect();
        let list = sorted_list(&items);
        prop_assert_eq!(run_complete(&list, Some(avx2)), run_complete(&list, None));
        let split = split.min(items.len());
        let (left, right) = items.split_at(split);
        let (la, lb) = (sorted_list(left), sorted_list(right));
        prop_assert_eq!(run_bipartite(&la, &lb, Some(avx2)), run_bipartite(&la, &lb, None));
        prop_assert_eq!(run_bipartite(&lb, &la, Some(avx2)), run_bipartite(&lb, &la, None));
    }

    /// A few boxes against many, where the walk over the many passes boxes over
    /// ([`Walk::Check`], [`Walk::Skip`]): boxes of mixed lengths spread along the sweep axis
    /// (a long one may reach a short box from far before it), both orders of the lists, the
    /// pairs a plain test finds, and the AVX2 kernel as the scalar one.
    #[test]
    fn a_short_list_against_a_long_one_finds_every_pair(
        long in prop::collection::vec(spread(), 100..300),
        short in prop::collection::vec(spread(), 1..10),
    ) {
        let long: Vec<(usize, Aabb)> = long.into_iter().enumerate().collect();
        let short: Vec<(usize, Aabb)> =
            short.into_iter().enumerate().map(|(i, b)| (1000 + i, b)).collect();
        let (ll, ls) = (sorted_list(&long), sorted_list(&short));
        prop_assert_ne!(walks(ll.len(), ls.len()).0, Walk::Dense);
        for (a, b) in [(&ll, &ls), (&ls, &ll)] {
            let mut found = BTreeSet::new();
            bipartite(a, b, |i, j| {
                let (x, y) = (a.id(i), b.id(j));
                found.insert((x.min(y), x.max(y)));
            });
            prop_assert_eq!(&found, &naive(&long, &short));
            if let Some(avx2) = Avx2::detect() {
                prop_assert_eq!(run_bipartite(a, b, Some(avx2)), run_bipartite(a, b, None));
            }
        }
    }

    #[test]
    fn merge_and_retain_keep_order(a in boxes(), b in boxes()) {
        let items_a: Vec<(usize, Aabb)> = a.into_iter().enumerate().collect();
        let items_b: Vec<(usize, Aabb)> = b.into_iter().enumerate().map(|(i, x)| (i + 100, x)).collect();
        let mut la = sorted_list(&items_a);
        let lb = sorted_list(&items_b);
        la.merge_in(&lb);
        prop_assert!(la.is_sorted());
        prop_assert_eq!(la.len(), items_a.len() + items_b.len());
        // The merged list finds the pairs of both lists' boxes: its keys moved together.
        let all: Vec<(usize, Aabb)> = items_a.iter().chain(&items_b).copied().collect();
        let mut found = BTreeSet::new();
        complete(&la, |i, j| {
            let (x, y) = (la.id(i), la.id(j));
            found.insert((x.min(y), x.max(y)));
        });
        prop_assert_eq!(&found, &naive(&all, &all));
        let leaving: Vec<u32> = la.ids().iter().copied().filter(|id| id % 3 == 0).collect();
        let mut dropped = Vec::new();
        la.retain(|id| id % 3 != 0, |_| (), |id, _| dropped.push(id));
        prop_assert_eq!(dropped, leaving, "the dropped boxes, in list order");
        prop_assert!(la.is_sorted());
        let kept: Vec<(usize, Aabb)> = all.iter().copied().filter(|(i, _)| i % 3 != 0).collect();
        prop_assert_eq!(la.len(), kept.len());
        let mut found = BTreeSet::new();
        complete(&la, |i, j| {
            let (x, y) = (la.id(i), la.id(j));
            found.insert((x.min(y), x.max(y)));
        });
        prop_assert_eq!(found, naive(&kept, &kept));
    }
}

#[test]
fn a_pile_runs_many_simd_steps() {
    // 200 identical boxes: every box is a candidate of every later one, and the first scans
    // find more hits than the AVX2 scan holds at once (it hands them over mid-scan, in order).
    let items: Vec<(usize, Aabb)> = (0..200)
        .map(|i| (i, Aabb::new([-1.0; 3], [1.0; 3])))
        .collect();
    let list = sorted_list(&items);
    let (pairs, tests) = run_complete(&list, None);
    assert_eq!(pairs.len(), 200 * 199 / 2);
    assert_eq!(tests, 200 * 199 / 2);
    if let Some(avx2) = Avx2::detect() {
        assert_eq!((pairs, tests), run_complete(&list, Some(avx2)));
    }
}
