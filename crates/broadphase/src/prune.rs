//! The box-pruning kernel (PhysX's `doCompleteBoxPruning` and `doBipartiteBoxPruning`, ours).
//!
//! Boxes are kept sorted by the encoded minimum on the sweep axis. A sweep walks the list once;
//! for each box it visits only the boxes whose minimum lies between its own minimum and maximum
//! on that axis, and tests those on the two other axes. The lists are structure-of-arrays so
//! the inner loop streams over sweep-axis keys and four-key cross sections, and end with a
//! sentinel key above every finite one, so the inner loops need no bounds test.

use std::ops::Range;

use crate::encode::{decode, encode, encode_at_least, encode_at_most, KEY_SENTINEL};
use crate::Aabb;

/// A box in integer keys, its sweep axis split from the two others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EncodedBox {
    /// Encoded minimum on the sweep axis.
    pub min_x: u32,
    /// Encoded maximum on the sweep axis.
    pub max_x: u32,
    /// Encoded `[min_u, min_v, max_u, max_v]` on the two other axes.
    pub uv: [u32; 4],
}

impl EncodedBox {
    /// Encodes `aabb` with `axes[0]` as the sweep axis and `axes[1]`, `axes[2]` as the others.
    #[inline]
    pub(crate) fn new(aabb: &Aabb, axes: [usize; 3]) -> Self {
        let [x, u, v] = axes;
        Self {
            min_x: encode(aabb.min[x]),
            max_x: encode(aabb.max[x]),
            uv: [
                encode(aabb.min[u]),
                encode(aabb.min[v]),
                encode(aabb.max[u]),
                encode(aabb.max[v]),
            ],
        }
    }
}

/// The inclusive overlap test on the two non-sweep axes.
#[inline(always)]
pub(crate) fn uv_overlap(p: &[u32; 4], q: &[u32; 4]) -> bool {
    (p[0] <= q[2]) & (q[0] <= p[2]) & (p[1] <= q[3]) & (q[1] <= p[3])
}

/// Boxes sorted by `min_x`, structure-of-arrays, each with a slot id and a caller's tag.
#[derive(Clone, Debug)]
pub(crate) struct BoxList {
    /// Sweep-axis minima, plus one trailing sentinel.
    min_x: Vec<u32>,
    max_x: Vec<u32>,
    uv: Vec<[u32; 4]>,
    ids: Vec<u32>,
    tags: Vec<u32>,
    /// At least the largest sweep-axis extent of a box in the list: a query over `[lo, hi]`
    /// needs only the boxes with `min_x` in `[lo - max_width, hi]`.
    max_width: f64,
}

impl Default for BoxList {
    fn default() -> Self {
        Self {
            min_x: vec![KEY_SENTINEL],
            max_x: Vec::new(),
            uv: Vec::new(),
            ids: Vec::new(),
            tags: Vec::new(),
            max_width: 0.0,
        }
    }
}

/// The sweep-axis extent of the box with keys `min_x` and `max_x` (exact in f64).
#[inline]
fn width(min_x: u32, max_x: u32) -> f64 {
    f64::from(decode(max_x)) - f64::from(decode(min_x))
}

impl BoxList {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    #[inline]
    pub(crate) fn id(&self, i: usize) -> u32 {
        self.ids[i]
    }

    #[inline]
    pub(crate) fn tag(&self, i: usize) -> u32 {
        self.tags[i]
    }

    /// The keys on the two other axes of box `i`.
    #[inline]
    pub(crate) fn uv(&self, i: usize) -> &[u32; 4] {
        &self.uv[i]
    }

    /// The sweep-axis minimum keys in order, followed by the sentinel.
    #[inline]
    pub(crate) fn keys(&self) -> &[u32] {
        &self.min_x
    }

    /// The sweep-axis maximum keys, in list order.
    #[inline]
    pub(crate) fn max_keys(&self) -> &[u32] {
        &self.max_x
    }

    /// The keys on the two other axes, in list order.
    #[inline]
    pub(crate) fn uvs(&self) -> &[[u32; 4]] {
        &self.uv
    }

    /// The sweep-axis maximum key of box `i`.
    #[inline]
    pub(crate) fn max_x(&self, i: usize) -> u32 {
        self.max_x[i]
    }

    /// The positions of the boxes whose sweep-axis extent may reach into `[lo, hi]`.
    pub(crate) fn sweep_range(&self, lo: f32, hi: f32) -> Range<usize> {
        let keys = &self.min_x[..self.len()];
        // Slightly more than max_width: the subtraction in f64 is rounded too.
        let from = encode_at_most(f64::from(lo) - self.max_width * (1.0 + 1e-9));
        let to = encode_at_least(f64::from(hi));
        keys.partition_point(|&k| k < from)..keys.partition_point(|&k| k <= to)
    }

    pub(crate) fn clear(&mut self) {
        self.max_width = 0.0;
        self.min_x.clear();
        self.min_x.push(KEY_SENTINEL);
        self.max_x.clear();
        self.uv.clear();
        self.ids.clear();
        self.tags.clear();
    }

    /// Makes room for `n` more boxes.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.min_x.reserve(n);
        self.max_x.reserve(n);
        self.uv.reserve(n);
        self.ids.reserve(n);
        self.tags.reserve(n);
    }

    /// Appends a box; the caller keeps the list sorted (pushes in `min_x` order).
    #[inline]
    pub(crate) fn push(&mut self, b: &EncodedBox, id: u32, tag: u32) {
        let n = self.ids.len();
        self.max_width = self.max_width.max(width(b.min_x, b.max_x));
        self.min_x[n] = b.min_x;
        self.min_x.push(KEY_SENTINEL);
        self.max_x.push(b.max_x);
        self.uv.push(b.uv);
        self.ids.push(id);
        self.tags.push(tag);
    }

    /// Keeps the boxes whose id passes `keep`, in order.
    pub(crate) fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let n = self.ids.len();
        let mut w = 0;
        self.max_width = 0.0;
        for r in 0..n {
            if keep(self.ids[r]) {
                self.max_width = self.max_width.max(width(self.min_x[r], self.max_x[r]));
                self.min_x[w] = self.min_x[r];
                self.max_x[w] = self.max_x[r];
                self.uv[w] = self.uv[r];
                self.ids[w] = self.ids[r];
                self.tags[w] = self.tags[r];
                w += 1;
            }
        }
        self.min_x.truncate(w);
        self.min_x.push(KEY_SENTINEL);
        self.max_x.truncate(w);
        self.uv.truncate(w);
        self.ids.truncate(w);
        self.tags.truncate(w);
    }

    /// Merges the sorted `other` into this sorted list, in place from the back. On equal keys
    /// this list's boxes come first, so the merge is stable and deterministic.
    pub(crate) fn merge_in(&mut self, other: &BoxList) {
        let (n, m) = (self.len(), other.len());
        if m == 0 {
            return;
        }
        self.max_width = self.max_width.max(other.max_width);
        self.min_x.truncate(n);
        self.min_x.resize(n + m, 0);
        self.max_x.resize(n + m, 0);
        self.uv.resize(n + m, [0; 4]);
        self.ids.resize(n + m, 0);
        self.tags.resize(n + m, 0);
        let (mut i, mut j, mut w) = (n, m, n + m);
        while j > 0 {
            w -= 1;
            if i > 0 && self.min_x[i - 1] > other.min_x[j - 1] {
                i -= 1;
                self.min_x[w] = self.min_x[i];
                self.max_x[w] = self.max_x[i];
                self.uv[w] = self.uv[i];
                self.ids[w] = self.ids[i];
                self.tags[w] = self.tags[i];
            } else {
                j -= 1;
                self.min_x[w] = other.min_x[j];
                self.max_x[w] = other.max_x[j];
                self.uv[w] = other.uv[j];
                self.ids[w] = other.ids[j];
                self.tags[w] = other.tags[j];
            }
        }
        self.min_x.push(KEY_SENTINEL);
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        (self.min_x.capacity() + self.max_x.capacity() + self.ids.capacity() + self.tags.capacity())
            * 4
            + self.uv.capacity() * 16
    }

    /// Gives memory back when the list has shrunk far below its capacity.
    pub(crate) fn shrink(&mut self) {
        if self.ids.capacity() > 64 && self.ids.len() * 4 < self.ids.capacity() {
            let keep = self.ids.len() * 2;
            self.min_x.shrink_to(keep + 1);
            self.max_x.shrink_to(keep);
            self.uv.shrink_to(keep);
            self.ids.shrink_to(keep);
            self.tags.shrink_to(keep);
        }
    }

    #[cfg(test)]
    pub(crate) fn is_sorted(&self) -> bool {
        self.min_x.windows(2).all(|w| w[0] <= w[1]) && self.min_x.last() == Some(&KEY_SENTINEL)
    }
}

/// Every overlapping pair within one sorted list: `emit(i, j)` with list positions `i < j`.
/// Returns the number of candidates tested on the other two axes.
#[inline]
pub(crate) fn complete(list: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    let mut tests = 0u64;
    for i in 0..list.len() {
        let limit = list.max_x[i];
        let uv = &list.uv[i];
        let mut j = i + 1;
        // The sentinel's key exceeds every finite maximum: the loop ends at the list's end.
        while list.min_x[j] <= limit {
            if uv_overlap(uv, &list.uv[j]) {
                emit(i, j);
            }
            j += 1;
        }
        tests += (j - i - 1) as u64;
    }
    tests
}

/// Every overlapping pair with one box in `a` and one in `b` (both sorted): `emit(i, j)` with
/// `i` a position in `a` and `j` in `b`. Returns the number of candidates tested.
#[inline]
pub(crate) fn bipartite(a: &BoxList, b: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    let mut tests = 0u64;
    // Pairs where the `a` box starts first (or together): scan `b` from a's min to a's max.
    let mut start = 0;
    for i in 0..a.len() {
        let lo = a.min_x[i];
        while b.min_x[start] < lo {
            start += 1;
        }
        let limit = a.max_x[i];
        let uv = &a.uv[i];
        let mut j = start;
        while b.min_x[j] <= limit {
            if uv_overlap(uv, &b.uv[j]) {
                emit(i, j);
            }
            j += 1;
        }
        tests += (j - start) as u64;
    }
    // Pairs where the `b` box starts strictly first: scan `a` past b's min up to b's max.
    let mut start = 0;
    for j in 0..b.len() {
        let lo = b.min_x[j];
        while a.min_x[start] <= lo {
            start += 1;
        }
        let limit = b.max_x[j];
        let uv = &b.uv[j];
        let mut i = start;
        while a.min_x[i] <= limit {
            if uv_overlap(uv, &a.uv[i]) {
                emit(i, j);
            }
            i += 1;
        }
        tests += (i - start) as u64;
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

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

        #[test]
        fn merge_and_retain_keep_order(a in boxes(), b in boxes()) {
            let items_a: Vec<(usize, Aabb)> = a.into_iter().enumerate().collect();
            let items_b: Vec<(usize, Aabb)> = b.into_iter().enumerate().map(|(i, x)| (i + 100, x)).collect();
            let mut la = sorted_list(&items_a);
            let lb = sorted_list(&items_b);
            la.merge_in(&lb);
            prop_assert!(la.is_sorted());
            prop_assert_eq!(la.len(), items_a.len() + items_b.len());
            la.retain(|id| id % 3 != 0);
            prop_assert!(la.is_sorted());
            let kept = items_a.iter().chain(&items_b).filter(|(i, _)| i % 3 != 0).count();
            prop_assert_eq!(la.len(), kept);
        }
    }
}
