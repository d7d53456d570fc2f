//! The box-pruning kernel (PhysX's `doCompleteBoxPruning` and `doBipartiteBoxPruning`, ours).
//!
//! Boxes are kept sorted by the encoded minimum on the sweep axis. A sweep walks the list once;
//! for each box it visits only the boxes whose minimum lies between its own minimum and maximum
//! on that axis, and tests those on the two other axes. The lists are structure-of-arrays of
//! integer keys, one array per bound, so the inner loop streams over them: on x86-64 CPUs with
//! AVX2 it tests eight candidates per step (`x86` below), elsewhere one at a time
//! (`*_scalar`); both give the same pairs in the same order, which a test checks.
//!
//! Keys are [`encode`]d floats with the top bit flipped, so that they compare as *signed*
//! integers (SIMD compares are signed). Every key array ends with [`PAD`] entries past the last
//! box: sentinels above every finite key on the sweep axis, so the loops need no bounds test and
//! an eight-wide load starting at any box stays inside the array.

use std::ops::Range;

use crate::encode::{decode, encode, encode_at_least, encode_at_most};
use crate::Aabb;

/// Entries past the last box in each key array.
const PAD: usize = 8;
/// The sweep-axis key after the last box: above every finite key.
const SENTINEL: i32 = i32::MAX;
/// Filler of the other arrays' padding: a box that overlaps nothing (never read for a result).
const FILL_MIN: i32 = i32::MAX;
const FILL_MAX: i32 = i32::MIN;

/// The signed form of an [`encode`]d key: same order, as `i32`.
#[inline(always)]
pub(crate) fn signed(key: u32) -> i32 {
    (key ^ 0x8000_0000) as i32
}

/// The [`encode`]d key of a signed key.
#[inline(always)]
fn unsigned(key: i32) -> u32 {
    (key as u32) ^ 0x8000_0000
}

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

/// Boxes sorted by `min_x`, structure-of-arrays, each with a slot id and a caller's tag.
#[derive(Clone, Debug)]
pub(crate) struct BoxList {
    /// Signed keys, each array `len() + PAD` long: sweep-axis minima (padded with sentinels),
    /// sweep-axis maxima, and the minima and maxima on the two other axes.
    min_x: Vec<i32>,
    max_x: Vec<i32>,
    min_u: Vec<i32>,
    min_v: Vec<i32>,
    max_u: Vec<i32>,
    max_v: Vec<i32>,
    ids: Vec<u32>,
    tags: Vec<u32>,
    /// At least the largest sweep-axis extent of a box in the list (measured again when the
    /// widest may have left, kept when a narrower one leaves): a query over `[lo, hi]` needs
    /// only the boxes with `min_x` in `[lo - max_width, hi]`.
    max_width: f64,
}

impl Default for BoxList {
    fn default() -> Self {
        let mut list = Self {
            min_x: Vec::new(),
            max_x: Vec::new(),
            min_u: Vec::new(),
            min_v: Vec::new(),
            max_u: Vec::new(),
            max_v: Vec::new(),
            ids: Vec::new(),
            tags: Vec::new(),
            max_width: 0.0,
        };
        list.pad();
        list
    }
}

/// The sweep-axis extent of the box with keys `min_x` and `max_x` (exact in f64).
#[inline]
fn width(min_x: i32, max_x: i32) -> f64 {
    f64::from(decode(unsigned(max_x))) - f64::from(decode(unsigned(min_x)))
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

    /// The slot ids, in list order.
    #[inline]
    pub(crate) fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The tags, in list order.
    #[inline]
    pub(crate) fn tags(&self) -> &[u32] {
        &self.tags
    }

    /// The keys on the two other axes of box `i`: `[min_u, min_v, max_u, max_v]`, encoded.
    #[inline]
    pub(crate) fn uv(&self, i: usize) -> [u32; 4] {
        [
            unsigned(self.min_u[i]),
            unsigned(self.min_v[i]),
            unsigned(self.max_u[i]),
            unsigned(self.max_v[i]),
        ]
    }

    /// The sweep-axis maximum key of box `i`, encoded.
    #[inline]
    pub(crate) fn max_x(&self, i: usize) -> u32 {
        unsigned(self.max_x[i])
    }

    /// The sweep-axis minimum key of box `i`, encoded.
    #[inline]
    pub(crate) fn min_x(&self, i: usize) -> u32 {
        unsigned(self.min_x[i])
    }

    /// Calls `hit(i)` for each box `i` in `range` that overlaps `uv` (encoded `[min_u, min_v,
    /// max_u, max_v]`, inclusive) on the two other axes and whose sweep-axis maximum (encoded)
    /// passes `keep_max`. The range's arrays are cut once and streamed in order: no bounds test
    /// and no gather per box, which is what Sap's walks over resting boxes need.
    #[inline]
    pub(crate) fn for_each_uv_overlap(
        &self,
        range: Range<usize>,
        uv: &[u32; 4],
        keep_max: impl Fn(u32) -> bool,
        mut hit: impl FnMut(usize),
    ) {
        let q = uv.map(|k| i64::from(signed(k)));
        let r = range.clone();
        let boxes = self.min_u[r.clone()]
            .iter()
            .zip(&self.min_v[r.clone()])
            .zip(&self.max_u[r.clone()])
            .zip(&self.max_v[r.clone()])
            .zip(&self.max_x[r]);
        for (k, ((((&min_u, &min_v), &max_u), &max_v), &max_x)) in boxes.enumerate() {
            // The four inclusive tests as one sign: each gap is >= 0 exactly when its test
            // holds (in i64, no overflow). One branch, rarely taken, instead of four that the
            // compiler would otherwise emit and the CPU mispredict.
            let gaps = (q[2] - i64::from(min_u))
                | (i64::from(max_u) - q[0])
                | (q[3] - i64::from(min_v))
                | (i64::from(max_v) - q[1]);
            if gaps >= 0 && keep_max(unsigned(max_x)) {
                hit(range.start + k);
            }
        }
    }

    /// The sweep-axis minima in [`signed`] form, in list order, followed by sentinels above
    /// every finite key (so a forward scan needs no bounds test).
    #[inline]
    pub(crate) fn signed_min_keys(&self) -> &[i32] {
        &self.min_x
    }

    /// Makes room for `n` more boxes.
    pub(crate) fn reserve(&mut self, n: usize) {
        for keys in self.key_columns() {
            keys.reserve(n);
        }
        self.ids.reserve(n);
        self.tags.reserve(n);
    }

    /// Whether box `i` overlaps the box with encoded keys `q` (all three axes, inclusive).
    #[inline]
    pub(crate) fn overlaps(&self, i: usize, q: &EncodedBox) -> bool {
        let q = SignedBox::new(q);
        (self.min_x[i] <= q.max_x)
            & (q.min_x <= self.max_x[i])
            & (self.min_u[i] <= q.max_u)
            & (q.min_u <= self.max_u[i])
            & (self.min_v[i] <= q.max_v)
            & (q.min_v <= self.max_v[i])
    }

    /// The positions of the boxes whose sweep-axis extent may reach into `[lo, hi]`.
    pub(crate) fn sweep_range(&self, lo: f32, hi: f32) -> Range<usize> {
        let keys = &self.min_x[..self.len()];
        // Slightly more than max_width: the subtraction in f64 is rounded too.
        let from = signed(encode_at_most(
            f64::from(lo) - self.max_width * (1.0 + 1e-9),
        ));
        let to = signed(encode_at_least(f64::from(hi)));
        keys.partition_point(|&k| k < from)..keys.partition_point(|&k| k <= to)
    }

    /// The box holding every box of the list (in keys, decoded), or `None` when empty.
    /// `axes` are the list's `[sweep, u, v]`.
    pub(crate) fn bounds(&self, axes: [usize; 3]) -> Option<Aabb> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let lo = |v: &[i32]| v[..n].iter().copied().min().unwrap_or(SENTINEL);
        let hi = |v: &[i32]| v[..n].iter().copied().max().unwrap_or(FILL_MAX);
        let f = |k: i32| decode(unsigned(k));
        let [x, u, v] = axes;
        let mut b = Aabb::new([0.0; 3], [0.0; 3]);
        (b.min[x], b.max[x]) = (f(lo(&self.min_x)), f(hi(&self.max_x)));
        (b.min[u], b.max[u]) = (f(lo(&self.min_u)), f(hi(&self.max_u)));
        (b.min[v], b.max[v]) = (f(lo(&self.min_v)), f(hi(&self.max_v)));
        Some(b)
    }

    /// Appends the padding after the last box.
    fn pad(&mut self) {
        self.min_x.extend_from_slice(&[SENTINEL; PAD]);
        self.max_x.extend_from_slice(&[FILL_MAX; PAD]);
        self.min_u.extend_from_slice(&[FILL_MIN; PAD]);
        self.min_v.extend_from_slice(&[FILL_MIN; PAD]);
        self.max_u.extend_from_slice(&[FILL_MAX; PAD]);
        self.max_v.extend_from_slice(&[FILL_MAX; PAD]);
    }

    /// Cuts every key array to `n` entries (the padding is re-added by the caller).
    fn truncate_keys(&mut self, n: usize) {
        for v in self.key_columns() {
            v.truncate(n);
        }
    }

    /// The six key arrays.
    fn key_columns(&mut self) -> [&mut Vec<i32>; 6] {
        [
            &mut self.min_x,
            &mut self.max_x,
            &mut self.min_u,
            &mut self.min_v,
            &mut self.max_u,
            &mut self.max_v,
        ]
    }

    pub(crate) fn clear(&mut self) {
        self.max_width = 0.0;
        self.truncate_keys(0);
        self.ids.clear();
        self.tags.clear();
        self.pad();
    }

    /// Appends a box; the caller keeps the list sorted (pushes in `min_x` order).
    #[inline]
    #[allow(dead_code)] // one at a time; cells load whole batches with `extend_sorted`
    pub(crate) fn push(&mut self, b: &EncodedBox, id: u32, tag: u32) {
        let n = self.ids.len();
        let s = SignedBox::new(b);
        self.max_width = self.max_width.max(width(s.min_x, s.max_x));
        // Write over the first padding entry, then pad again at the end.
        self.min_x[n] = s.min_x;
        self.max_x[n] = s.max_x;
        self.min_u[n] = s.min_u;
        self.min_v[n] = s.min_v;
        self.max_u[n] = s.max_u;
        self.max_v[n] = s.max_v;
        self.min_x.push(SENTINEL);
        self.max_x.push(FILL_MAX);
        self.min_u.push(FILL_MIN);
        self.min_v.push(FILL_MIN);
        self.max_u.push(FILL_MAX);
        self.max_v.push(FILL_MAX);
        self.ids.push(id);
        self.tags.push(tag);
    }

    /// Appends boxes given in `min_x` order (and not below the list's last box): the way a
    /// sorted batch is loaded, with the padding written once at the end.
    pub(crate) fn extend_sorted<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = (&'a EncodedBox, u32, u32)>,
    ) {
        let n = self.len();
        self.truncate_keys(n);
        let m = items.len();
        for v in self.key_columns() {
            v.reserve(m + PAD);
        }
        self.ids.reserve(m);
        self.tags.reserve(m);
        // The boxes are written into the arrays' room by index: eight pushes per box, each
        // testing its array's room and storing its length, were most of the loop, and filling
        // the room with zeros first cost a third of what that saved.
        let mut widest = self.max_width;
        let mut written = 0;
        {
            let (min_x, max_x) = (spare(&mut self.min_x, m), spare(&mut self.max_x, m));
            let (min_u, min_v) = (spare(&mut self.min_u, m), spare(&mut self.min_v, m));
            let (max_u, max_v) = (spare(&mut self.max_u, m), spare(&mut self.max_v, m));
            let (ids, tags) = (spare(&mut self.ids, m), spare(&mut self.tags, m));
            for (k, (b, id, tag)) in items.take(m).enumerate() {
                let s = SignedBox::new(b);
                widest = widest.max(width(s.min_x, s.max_x));
                min_x[k].write(s.min_x);
                max_x[k].write(s.max_x);
                min_u[k].write(s.min_u);
                min_v[k].write(s.min_v);
                max_u[k].write(s.max_u);
                max_v[k].write(s.max_v);
                ids[k].write(id);
                tags[k].write(tag);
                written = k + 1;
            }
        }
        for v in self.key_columns() {
            // SAFETY: the array had room for `m >= written` more entries (reserved above), and
            // the loop wrote the first `written` of them (an iterator shorter than it said
            // leaves the rest out of the length).
            unsafe { v.set_len(n + written) };
        }
        for v in [&mut self.ids, &mut self.tags] {
            // SAFETY: as for the keys.
            unsafe { v.set_len(n + written) };
        }
        self.max_width = widest;
        self.pad();
    }

    /// Copies box `r` to position `w` (`w <= r`, or `r` from `other`).
    #[inline(always)]
    fn copy_from(&mut self, w: usize, other: &BoxList, r: usize) {
        self.min_x[w] = other.min_x[r];
        self.max_x[w] = other.max_x[r];
        self.min_u[w] = other.min_u[r];
        self.min_v[w] = other.min_v[r];
        self.max_u[w] = other.max_u[r];
        self.max_v[w] = other.max_v[r];
        self.ids[w] = other.ids[r];
        self.tags[w] = other.tags[r];
    }

    #[inline(always)]
    fn move_within(&mut self, w: usize, r: usize) {
        self.min_x[w] = self.min_x[r];
        self.max_x[w] = self.max_x[r];
        self.min_u[w] = self.min_u[r];
        self.min_v[w] = self.min_v[r];
        self.max_u[w] = self.max_u[r];
        self.max_v[w] = self.max_v[r];
        self.ids[w] = self.ids[r];
        self.tags[w] = self.tags[r];
    }

    /// Keeps the boxes whose id passes `keep`, in order; `dropped(id, tag)` sees each box
    /// that does not, in list order. `ahead(id)` is told each id [`RETAIN_AHEAD`] boxes
    /// before `keep` is: a `keep` that reads per-slot state all over memory (a million
    /// slots) asks for it there.
    pub(crate) fn retain(
        &mut self,
        keep: impl Fn(u32) -> bool,
        ahead: impl Fn(u32),
        mut dropped_boxes: impl FnMut(u32, u32),
    ) {
        let n = self.ids.len();
        // Boxes before the first one to drop stay where they are.
        let Some(first) = self.ids.iter().position(|&id| !keep(id)) else {
            return;
        };
        let mut w = first;
        let mut widest_left = false;
        // Measuring the boxes that leave costs one width each; past an eighth of the list,
        // measuring those that stay afterwards is no dearer, so the bound is simply redone.
        let (mut count, measure_up_to) = (0usize, n / 8);
        for r in first..n {
            if let Some(&id) = self.ids.get(r + RETAIN_AHEAD) {
                ahead(id);
            }
            let kept = keep(self.ids[r]);
            // Copied whether kept or not (the next kept box overwrites a dropped one): no
            // branch on `kept`, which is as unpredictable as the moves of a frame.
            self.move_within(w, r);
            if !kept {
                dropped_boxes(self.ids[r], self.tags[r]);
                if !widest_left {
                    count += 1;
                    widest_left = count > measure_up_to
                        || width(self.min_x[r], self.max_x[r]) >= self.max_width;
                }
            }
            w += usize::from(kept);
        }
        self.truncate_keys(w);
        self.ids.truncate(w);
        self.tags.truncate(w);
        self.pad();
        // `max_width` stays an upper bound when a narrower box leaves; only when the widest
        // may have left is it measured again.
        if widest_left {
            self.max_width = (0..w)
                .map(|i| width(self.min_x[i], self.max_x[i]))
                .fold(0.0, f64::max);
        }
    }

    /// Merges the sorted `other` into this sorted list, in place from the back. On equal keys
    /// this list's boxes come first, so the merge is stable and deterministic.
    pub(crate) fn merge_in(&mut self, other: &BoxList) {
        let (n, m) = (self.len(), other.len());
        if m == 0 {
            return;
        }
        self.max_width = self.max_width.max(other.max_width);
        self.truncate_keys(n);
        for v in self.key_columns() {
            v.resize(n + m, 0);
        }
        self.ids.resize(n + m, 0);
        self.tags.resize(n + m, 0);
        let (mut i, mut j, mut w) = (n, m, n + m);
        while j > 0 {
            w -= 1;
            if i > 0 && self.min_x[i - 1] > other.min_x[j - 1] {
                i -= 1;
                self.move_within(w, i);
            } else {
                j -= 1;
                self.copy_from(w, other, j);
            }
        }
        self.pad();
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        (self.min_x.capacity()
            + self.max_x.capacity()
            + self.min_u.capacity()
            + self.min_v.capacity()
            + self.max_u.capacity()
            + self.max_v.capacity()
            + self.ids.capacity()
            + self.tags.capacity())
            * 4
    }

    /// Gives memory back when the list has shrunk far below its capacity.
    pub(crate) fn shrink(&mut self) {
        if self.ids.capacity() > 64 && self.ids.len() * 4 < self.ids.capacity() {
            let keep = self.ids.len() * 2;
            for v in self.key_columns() {
                v.shrink_to(keep + PAD);
            }
            self.ids.shrink_to(keep);
            self.tags.shrink_to(keep);
        }
    }

    #[cfg(test)]
    pub(crate) fn is_sorted(&self) -> bool {
        let n = self.len();
        let arrays_padded = [
            &self.min_x,
            &self.max_x,
            &self.min_u,
            &self.min_v,
            &self.max_u,
            &self.max_v,
        ]
        .iter()
        .all(|v| v.len() == n + PAD);
        arrays_padded
            && self.min_x.windows(2).all(|w| w[0] <= w[1])
            && self.min_x[n..].iter().all(|&k| k == SENTINEL)
    }
}

/// One box's signed keys, for the kernels.
#[derive(Clone, Copy, Debug)]
struct SignedBox {
    min_x: i32,
    max_x: i32,
    min_u: i32,
    min_v: i32,
    max_u: i32,
    max_v: i32,
}

impl SignedBox {
    #[inline(always)]
    fn new(b: &EncodedBox) -> Self {
        Self {
            min_x: signed(b.min_x),
            max_x: signed(b.max_x),
            min_u: signed(b.uv[0]),
            min_v: signed(b.uv[1]),
            max_u: signed(b.uv[2]),
            max_v: signed(b.uv[3]),
        }
    }

    #[inline(always)]
    fn at(list: &BoxList, i: usize) -> Self {
        Self {
            min_x: list.min_x[i],
            max_x: list.max_x[i],
            min_u: list.min_u[i],
            min_v: list.min_v[i],
            max_u: list.max_u[i],
            max_v: list.max_v[i],
        }
    }
}

/// Every overlapping pair within one sorted list: `emit(i, j)` with list positions `i < j`,
/// for each `i` in increasing `j`. Returns the number of candidates tested on the other two
/// axes.
#[inline]
pub(crate) fn complete(list: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above, at run time).
        return unsafe { x86::complete_avx2(list, &mut emit) };
    }
    complete_scalar(list, emit)
}

/// Every overlapping pair with one box in `a` and one in `b` (both sorted): `emit(i, j)` with
/// `i` a position in `a` and `j` in `b`. Returns the number of candidates tested.
#[inline]
pub(crate) fn bipartite(a: &BoxList, b: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    if x86::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above, at run time).
        return unsafe { x86::bipartite_avx2(a, b, &mut emit) };
    }
    bipartite_scalar(a, b, emit)
}

/// Calls `emit(j)` for each box `j` of `list`, from `from` on, that starts on the sweep axis
/// within `p`'s extent and overlaps `p` on the two other axes, and returns how many started
/// within: one candidate at a time, over zipped slices (no bounds checks). The padding's
/// sentinel ends the scan at the list's end.
#[inline(always)]
fn scan_scalar(list: &BoxList, from: usize, p: &SignedBox, mut emit: impl FnMut(usize)) -> u64 {
    let keys = list.min_x[from..]
        .iter()
        .zip(&list.min_u[from..])
        .zip(&list.min_v[from..])
        .zip(&list.max_u[from..])
        .zip(&list.max_v[from..]);
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

/// [`complete`] one candidate at a time: the reference the SIMD kernel is tested against.
pub(crate) fn complete_scalar(list: &BoxList, mut emit: impl FnMut(usize, usize)) -> u64 {
    let mut tests = 0u64;
    for i in 0..list.len() {
        let p = SignedBox::at(list, i);
        tests += scan_scalar(list, i + 1, &p, |j| emit(i, j));
    }
    tests
}

/// [`bipartite`] one candidate at a time.
pub(crate) fn bipartite_scalar(
    a: &BoxList,
    b: &BoxList,
    mut emit: impl FnMut(usize, usize),
) -> u64 {
    let mut tests = 0u64;
    // Pairs where the `a` box starts first (or together): scan `b` from a's min to a's max.
    let mut start = 0;
    for i in 0..a.len() {
        let p = SignedBox::at(a, i);
        while b.min_x[start] < p.min_x {
            start += 1;
        }
        tests += scan_scalar(b, start, &p, |j| emit(i, j));
    }
    // Pairs where the `b` box starts strictly first: scan `a` past b's min up to b's max.
    let mut start = 0;
    for j in 0..b.len() {
        let p = SignedBox::at(b, j);
        while a.min_x[start] <= p.min_x {
            start += 1;
        }
        tests += scan_scalar(a, start, &p, |i| emit(i, j));
    }
    tests
}

/// The AVX2 kernels: eight candidates per step. Each step loads eight consecutive entries of
/// the five key arrays, compares them with the probe box broadcast to all lanes, and turns the
/// lane masks into bits: the lanes whose sweep-axis minimum is within the probe's maximum
/// (a prefix, since the list is sorted; fewer than eight ends the scan) and, among those, the
/// lanes that also overlap on the two other axes (reported in increasing position, the order
/// of the scalar kernels).
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::{BoxList, SignedBox, PAD};
    use std::arch::x86_64::{
        __m256i, _mm256_castsi256_ps, _mm256_cmpgt_epi32, _mm256_loadu_si256, _mm256_movemask_ps,
        _mm256_or_si256, _mm256_set1_epi32,
    };

    /// Whether the CPU runs AVX2 (and POPCNT, which every AVX2 CPU has). The standard library
    /// caches the answer.
    #[inline]
    pub(crate) fn has_avx2() -> bool {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
    }

    /// A list's key arrays, held in registers through a scan.
    #[derive(Clone, Copy)]
    struct Keys<'a> {
        min_x: &'a [i32],
        min_u: &'a [i32],
        min_v: &'a [i32],
        max_u: &'a [i32],
        max_v: &'a [i32],
        len: usize,
    }

    impl<'a> Keys<'a> {
        fn of(list: &'a BoxList) -> Self {
            debug_assert!([&list.min_u, &list.min_v, &list.max_u, &list.max_v]
                .iter()
                .all(|v| v.len() == list.min_x.len()));
            debug_assert!(list.min_x.len() == list.len() + PAD);
            Self {
                min_x: &list.min_x,
                min_u: &list.min_u,
                min_v: &list.min_v,
                max_u: &list.max_u,
                max_v: &list.max_v,
                len: list.len(),
            }
        }
    }

    /// Scans `$keys` from position `$from` against the probe box `$p` (a [`SignedBox`]) until
    /// a box starts beyond it, calling `$emit(j)` for each overlapping position `j`, and adds
    /// the candidates tested to `$tests`. A macro, so that it is expanded inside each
    /// `#[target_feature]` function (which cannot be `#[inline(always)]`).
    ///
    /// Requires: AVX2 runs, and `$from <= $keys.len`.
    macro_rules! scan {
        ($keys:expr, $from:expr, $p:expr, $tests:ident, $emit:expr) => {{
            let k: Keys<'_> = $keys;
            let p: SignedBox = $p;
            let max_x = _mm256_set1_epi32(p.max_x);
            let (min_u, min_v) = (_mm256_set1_epi32(p.min_u), _mm256_set1_epi32(p.min_v));
            let (max_u, max_v) = (_mm256_set1_epi32(p.max_u), _mm256_set1_epi32(p.max_v));
            let mut j: usize = $from;
            loop {
                debug_assert!(j <= k.len);
                // SAFETY: every key array holds `len + PAD` entries (PAD = 8) and `j <= len`,
                // so the eight lanes from `j` are in bounds: `j` starts at most at `len`, and
                // grows by eight only when all eight lanes started within the probe, so none
                // of them was padding (whose sentinel is above every finite key) and
                // `j + 8 <= len`. The loads are unaligned.
                let load =
                    |a: &[i32]| unsafe { _mm256_loadu_si256(a.as_ptr().add(j).cast::<__m256i>()) };
                let x = load(k.min_x);
                let beyond = _mm256_cmpgt_epi32(x, max_x);
                let apart = _mm256_or_si256(
                    _mm256_or_si256(
                        _mm256_cmpgt_epi32(load(k.min_u), max_u),
                        _mm256_cmpgt_epi32(min_u, load(k.max_u)),
                    ),
                    _mm256_or_si256(
                        _mm256_cmpgt_epi32(load(k.min_v), max_v),
                        _mm256_cmpgt_epi32(min_v, load(k.max_v)),
                    ),
                );
                let beyond_bits = _mm256_movemask_ps(_mm256_castsi256_ps(beyond)) as u32;
                let miss_bits =
                    _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(beyond, apart))) as u32;
                let within = !beyond_bits & 0xFF;
                let mut hits = !miss_bits & 0xFF;
                while hits != 0 {
                    $emit(j + hits.trailing_zeros() as usize);
                    hits &= hits - 1;
                }
                $tests += u64::from(within.count_ones());
                if within != 0xFF {
                    break;
                }
                j += 8;
            }
        }};
    }

    /// [`super::complete`] with AVX2.
    ///
    /// # Safety
    /// The CPU runs AVX2 and POPCNT.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn complete_avx2(list: &BoxList, emit: &mut impl FnMut(usize, usize)) -> u64 {
        let keys = Keys::of(list);
        let mut tests = 0u64;
        for i in 0..list.len() {
            // `i + 1 <= len`.
            scan!(keys, i + 1, SignedBox::at(list, i), tests, |j| emit(i, j));
        }
        tests
    }

    /// [`super::bipartite`] with AVX2.
    ///
    /// # Safety
    /// The CPU runs AVX2 and POPCNT.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn bipartite_avx2(
        a: &BoxList,
        b: &BoxList,
        emit: &mut impl FnMut(usize, usize),
    ) -> u64 {
        let (ka, kb) = (Keys::of(a), Keys::of(b));
        let mut tests = 0u64;
        let mut start = 0;
        for i in 0..a.len() {
            let s = SignedBox::at(a, i);
            // Stops at the latest on b's first sentinel, above every finite key: `start <= len`.
            while kb.min_x[start] < s.min_x {
                start += 1;
            }
            scan!(kb, start, s, tests, |j| emit(i, j));
        }
        let mut start = 0;
        for j in 0..b.len() {
            let s = SignedBox::at(b, j);
            while ka.min_x[start] <= s.min_x {
                start += 1;
            }
            scan!(ka, start, s, tests, |i| emit(i, j));
        }
        tests
    }
}

/// How many boxes ahead [`BoxList::retain`] names the id that `keep` will be asked about.
pub(crate) const RETAIN_AHEAD: usize = 16;

/// The first `m` entries of the room past the end of `v` (`m` reserved by the caller).
#[inline(always)]
fn spare<T>(v: &mut Vec<T>, m: usize) -> &mut [std::mem::MaybeUninit<T>] {
    &mut v.spare_capacity_mut()[..m]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    const AXES: [usize; 3] = [0, 1, 2];

    /// An iterator that claims more items than it yields.
    struct ShortOfItsWord<I> {
        inner: I,
        claim: usize,
    }

    impl<I: Iterator> Iterator for ShortOfItsWord<I> {
        type Item = I::Item;
        fn next(&mut self) -> Option<I::Item> {
            self.claim = self.claim.saturating_sub(1);
            self.inner.next()
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (self.claim, Some(self.claim))
        }
    }

    impl<I: Iterator> ExactSizeIterator for ShortOfItsWord<I> {}

    /// A sorted batch is written after the boxes already there, keys, ids, tags and padding;
    /// an iterator that yields fewer boxes than it said leaves no unwritten box behind.
    #[test]
    fn extend_sorted_writes_the_boxes_it_is_given() {
        let boxes: Vec<EncodedBox> = (0..5)
            .map(|i| {
                let lo = [i as f32, -(i as f32), 0.5];
                EncodedBox::new(&Aabb::new(lo, lo.map(|c| c + 1.5)), AXES)
            })
            .collect();
        let mut list = BoxList::default();
        list.extend_sorted(boxes[..2].iter().zip(0..2u32).map(|(b, i)| (b, i, 10 + i)));
        list.extend_sorted(ShortOfItsWord {
            inner: boxes[2..4].iter().zip(2..).map(|(b, i)| (b, i, 10 + i)),
            claim: 3,
        });
        assert_eq!(list.len(), 4);
        for (i, b) in boxes[..4].iter().enumerate() {
            let s = SignedBox::new(b);
            assert_eq!((list.id(i), list.tag(i)), (i as u32, 10 + i as u32));
            assert_eq!(
                [
                    list.min_x[i],
                    list.max_x[i],
                    list.min_u[i],
                    list.min_v[i],
                    list.max_u[i],
                    list.max_v[i]
                ],
                [s.min_x, s.max_x, s.min_u, s.min_v, s.max_u, s.max_v]
            );
        }
        assert_eq!(list.min_x.len(), 4 + PAD);
        assert!(list.min_x[4..].iter().all(|&k| k == SENTINEL));
        let last = SignedBox::new(&boxes[3]);
        assert!(list.max_width >= width(last.min_x, last.max_x));
    }

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

    /// The pairs a kernel emits, in emission order, and its test count.
    fn run_complete(list: &BoxList, scalar: bool) -> (Vec<(usize, usize)>, u64) {
        let mut out = Vec::new();
        let tests = if scalar {
            complete_scalar(list, |i, j| out.push((i, j)))
        } else {
            complete(list, |i, j| out.push((i, j)))
        };
        (out, tests)
    }

    fn run_bipartite(a: &BoxList, b: &BoxList, scalar: bool) -> (Vec<(usize, usize)>, u64) {
        let mut out = Vec::new();
        let tests = if scalar {
            bipartite_scalar(a, b, |i, j| out.push((i, j)))
        } else {
            bipartite(a, b, |i, j| out.push((i, j)))
        };
        (out, tests)
    }

    #[test]
    fn simd_kernels_run_here() {
        // Not a requirement, but the comparisons below only mean something where AVX2 runs.
        #[cfg(target_arch = "x86_64")]
        if !x86::has_avx2() {
            eprintln!("this CPU has no AVX2: the SIMD comparisons compare the scalar kernels");
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

        /// The SIMD kernels against the scalar ones: the same pairs, in the same order, and the
        /// same number of candidates tested.
        #[test]
        fn simd_and_scalar_kernels_agree(all in crowded(), split in 0usize..120) {
            let items: Vec<(usize, Aabb)> = all.into_iter().enumerate().collect();
            let list = sorted_list(&items);
            prop_assert_eq!(run_complete(&list, false), run_complete(&list, true));
            let split = split.min(items.len());
            let (left, right) = items.split_at(split);
            let (la, lb) = (sorted_list(left), sorted_list(right));
            prop_assert_eq!(run_bipartite(&la, &lb, false), run_bipartite(&la, &lb, true));
            prop_assert_eq!(run_bipartite(&lb, &la, false), run_bipartite(&lb, &la, true));
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
        // 40 identical boxes: every box is a candidate of every later one.
        let items: Vec<(usize, Aabb)> = (0..40)
            .map(|i| (i, Aabb::new([-1.0; 3], [1.0; 3])))
            .collect();
        let list = sorted_list(&items);
        let (pairs, tests) = run_complete(&list, false);
        assert_eq!(pairs.len(), 40 * 39 / 2);
        assert_eq!(tests, 40 * 39 / 2);
        assert_eq!((pairs, tests), run_complete(&list, true));
    }
}
