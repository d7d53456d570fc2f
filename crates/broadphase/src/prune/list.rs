//! [`BoxList`]: boxes sorted by their sweep-axis minimum, kept as structure-of-arrays of
//! signed keys (each array padded past the last box, see [`super::keys`]) with a slot id and a
//! caller's tag per box; and [`SweepKeys`], the view of a list's keys that the kernels read.
//!
//! The list's one `unsafe` is its batch write ([`BoxList::extend_sorted`]): boxes written into
//! the arrays' reserved room by index, then the lengths set.

use std::ops::Range;

use super::keys::{signed, unsigned, EncodedBox, SignedBox, FILL_MAX, FILL_MIN, PAD, SENTINEL};
use crate::encode::{decode, encode_at_least, encode_at_most};
use crate::slack::grow;
use crate::Aabb;

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

    /// At least the largest sweep-axis extent of a box in the list.
    #[inline]
    pub(crate) fn max_width(&self) -> f64 {
        self.max_width
    }

    /// The key arrays as the kernels read them.
    #[inline(always)]
    pub(crate) fn sweep_keys(&self) -> SweepKeys<'_> {
        debug_assert!([
            &self.max_x,
            &self.min_u,
            &self.min_v,
            &self.max_u,
            &self.max_v
        ]
        .iter()
        .all(|v| v.len() == self.min_x.len()));
        debug_assert!(self.min_x.len() == self.len() + PAD);
        SweepKeys {
            min_x: &self.min_x,
            max_x: &self.max_x,
            min_u: &self.min_u,
            min_v: &self.min_v,
            max_u: &self.max_u,
            max_v: &self.max_v,
            len: self.len(),
        }
    }

    /// Makes room for exactly `n` more boxes, where the list would leave room to spare
    /// (a list loaded once, whose length is known).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        for keys in self.key_columns() {
            keys.reserve_exact(n);
        }
        self.ids.reserve_exact(n);
        self.tags.reserve_exact(n);
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

    /// Makes room for `m` more boxes (and the padding, the keys being cut to the boxes).
    fn make_room(&mut self, m: usize) {
        for v in self.key_columns() {
            grow(v, m + PAD);
        }
        grow(&mut self.ids, m);
        grow(&mut self.tags, m);
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
        self.make_room(m);
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
            // One branch on `kept`, which the caller of a dropped box needs anyway: a kept box
            // is copied down, a dropped one is not copied at all. Where every box of the list
            // changed (a scene where everything moves), nothing is copied.
            if keep(self.ids[r]) {
                self.move_within(w, r);
                w += 1;
            } else {
                dropped_boxes(self.ids[r], self.tags[r]);
                if !widest_left {
                    count += 1;
                    widest_left = count > measure_up_to
                        || width(self.min_x[r], self.max_x[r]) >= self.max_width;
                }
            }
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
        self.make_room(m);
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

    /// Checks what the kernels rely on: every array `len() + PAD` long, the minima sorted and
    /// followed by [`SENTINEL`]s, and `max_width` at least each box's extent.
    pub(crate) fn check(&self) -> Result<(), String> {
        let n = self.len();
        if self.tags.len() != n {
            return Err(format!("{} tags for {n} boxes", self.tags.len()));
        }
        let columns = [
            &self.min_x,
            &self.max_x,
            &self.min_u,
            &self.min_v,
            &self.max_u,
            &self.max_v,
        ];
        if let Some(c) = columns.iter().position(|v| v.len() != n + PAD) {
            return Err(format!(
                "key array {c} holds {} keys for {n} boxes and {PAD} of padding",
                columns[c].len()
            ));
        }
        if let Some(i) = self.min_x[..n].windows(2).position(|w| w[0] > w[1]) {
            return Err(format!(
                "boxes {i} and {} (slots {} and {}) are out of order on the sweep axis",
                i + 1,
                self.ids[i],
                self.ids[i + 1]
            ));
        }
        if self.min_x[n..].iter().any(|&k| k != SENTINEL) {
            return Err("the sweep axis's padding is not all sentinels".into());
        }
        if let Some(i) = (0..n).find(|&i| width(self.min_x[i], self.max_x[i]) > self.max_width) {
            return Err(format!(
                "slot {}'s extent is over the list's widest, {}",
                self.ids[i], self.max_width
            ));
        }
        Ok(())
    }

    /// Swaps boxes `i` and `j`, everything they hold: a corruption for the checks' tests.
    #[cfg(test)]
    pub(crate) fn swap_for_test(&mut self, i: usize, j: usize) {
        for v in self.key_columns() {
            v.swap(i, j);
        }
        self.ids.swap(i, j);
        self.tags.swap(i, j);
    }

    /// Sets box `i`'s minimum on the first other axis: a corruption for the checks' tests.
    #[cfg(test)]
    pub(crate) fn set_min_u_for_test(&mut self, i: usize, key: u32) {
        self.min_u[i] = signed(key);
    }

    #[cfg(test)]
    pub(crate) fn is_sorted(&self) -> bool {
        self.check().is_ok()
    }
}

/// A list's sweep-axis minima and the keys on the two other axes, as the kernels read them
/// (the scalar ones in `super::scalar`, the AVX2 ones in `crate::simd`). Made only by
/// [`BoxList::sweep_keys`], so it always holds what the list guarantees and the AVX2 loads
/// rely on: every array is `len + PAD` long, the first `len` minima are sorted, and the minima
/// from `len` on are [`SENTINEL`]s, above every key of a box (keys are of finite floats: the
/// store admits nothing else).
#[derive(Clone, Copy)]
pub(crate) struct SweepKeys<'a> {
    min_x: &'a [i32],
    max_x: &'a [i32],
    min_u: &'a [i32],
    min_v: &'a [i32],
    max_u: &'a [i32],
    max_v: &'a [i32],
    len: usize,
}

impl<'a> SweepKeys<'a> {
    /// The number of boxes (each array holds [`PAD`] more keys).
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Sweep-axis minima, then the padding's sentinels.
    #[inline(always)]
    pub(crate) fn min_x(&self) -> &'a [i32] {
        self.min_x
    }

    /// Sweep-axis maxima.
    #[inline(always)]
    pub(crate) fn max_x(&self) -> &'a [i32] {
        self.max_x
    }

    /// Minima on the first other axis.
    #[inline(always)]
    pub(crate) fn min_u(&self) -> &'a [i32] {
        self.min_u
    }

    /// Minima on the second other axis.
    #[inline(always)]
    pub(crate) fn min_v(&self) -> &'a [i32] {
        self.min_v
    }

    /// Maxima on the first other axis.
    #[inline(always)]
    pub(crate) fn max_u(&self) -> &'a [i32] {
        self.max_u
    }

    /// Maxima on the second other axis.
    #[inline(always)]
    pub(crate) fn max_v(&self) -> &'a [i32] {
        self.max_v
    }

    /// The keys of box `i`.
    #[inline(always)]
    pub(crate) fn box_at(&self, i: usize) -> SignedBox {
        SignedBox {
            min_x: self.min_x[i],
            max_x: self.max_x[i],
            min_u: self.min_u[i],
            min_v: self.min_v[i],
            max_u: self.max_u[i],
            max_v: self.max_v[i],
        }
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
}
