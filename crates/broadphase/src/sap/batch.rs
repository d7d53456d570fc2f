//! Pairing the boxes that join fresh (new or re-inserted) by box pruning, split into columns.
//!
//! PhysX sweeps a batch of new boxes along one axis, against each other and against the old
//! ones. In a dense 3D scene one sweep tests every pair of boxes that overlap on that axis —
//! about N·w/L per box, 2,000 at 100,000 boxes — for about one real pair. So large batches are
//! first binned into the columns of a grid over the two other axes (y and z: the cells' own
//! [`ColumnGrid`], sized here for the batch) and swept per column: a box goes into every column
//! it covers, and a pair is reported only in the column holding the corner of its overlap (the
//! cells' [`reporting_cell`] rule), so it is found once. Small batches are swept whole.

use crate::cells::grid::{CellRange, ColumnGrid};
use crate::cells::{reporting_cell, tag, Report};
use crate::encode::decode;
use crate::prune::{bipartite, complete, BoxList, EncodedBox};

/// Aim for about this many boxes (new and old) per column.
const BOXES_PER_COLUMN: usize = 512;
/// Columns per axis at most.
const MAX_CELLS: usize = 64;

/// The columns a box covers, from its keys on the two other axes (`[u0, v0, u1, v1]`, the
/// `uv` of [`EncodedBox`]).
#[inline]
fn columns(grid: &ColumnGrid, uv: &[u32; 4]) -> CellRange {
    grid.range_uv(
        [decode(uv[0]), decode(uv[1])],
        [decode(uv[2]), decode(uv[3])],
    )
}

/// Reusable buffers for pairing fresh boxes.
#[derive(Clone, Debug)]
pub(super) struct Batch {
    /// Boxes per column aimed at; batches of fewer than two columns' worth are swept whole.
    per_column: usize,
    /// Per column, the fresh boxes in it.
    new_cols: Vec<BoxList>,
    /// Per old list, per column, its boxes in the column.
    old_cols: Vec<Vec<BoxList>>,
    /// Per column: holds a fresh box.
    marked: Vec<bool>,
}

/// Entry `i` of a sorted list, as the kernel's box.
#[inline]
fn encoded(list: &BoxList, i: usize) -> EncodedBox {
    EncodedBox {
        min_x: list.min_x(i),
        max_x: list.max_x(i),
        uv: list.uv(i),
    }
}

impl Default for Batch {
    fn default() -> Self {
        Self {
            per_column: BOXES_PER_COLUMN,
            new_cols: Vec::new(),
            old_cols: Vec::new(),
            marked: Vec::new(),
        }
    }
}

/// The grid for pairing `fresh` with `old` boxes, about `per_column` boxes per column, or
/// `None` when one column will do.
fn grid_for(fresh: &BoxList, old: usize, per_column: usize) -> Option<ColumnGrid> {
    let f = fresh.len();
    if f < 2 * per_column {
        return None;
    }
    let (mut lo, mut hi) = ([u32::MAX; 2], [0u32; 2]);
    let mut width = [0.0f64; 2];
    for uv in (0..f).map(|i| fresh.uv(i)) {
        for k in 0..2 {
            lo[k] = lo[k].min(uv[k]);
            hi[k] = hi[k].max(uv[2 + k]);
            width[k] += f64::from(decode(uv[2 + k])) - f64::from(decode(uv[k]));
        }
    }
    // Square columns sized for the boxes, no narrower than two mean boxes (else most boxes
    // straddle several).
    let per_axis = ((f + old) as f64 / per_column as f64).sqrt();
    let (mut origin, mut inv, mut count) = ([0.0; 2], [0.0; 2], [1; 2]);
    for k in 0..2 {
        let (a, b) = (f64::from(decode(lo[k])), f64::from(decode(hi[k])));
        let extent = b - a;
        let mean = width[k] / f as f64;
        let mut cells = per_axis.min(MAX_CELLS as f64);
        if mean > 0.0 {
            cells = cells.min(extent / (2.0 * mean));
        }
        let cells = if cells.is_finite() && cells >= 2.0 {
            cells as usize
        } else {
            1
        };
        origin[k] = a;
        count[k] = cells;
        inv[k] = if cells > 1 {
            cells as f64 / extent
        } else {
            0.0
        };
    }
    // The sweep is on the batch's x axis; the grid reads only the `uv` keys.
    (count != [1, 1]).then(|| ColumnGrid::cut(0, origin, inv, count))
}

impl Batch {
    /// Every overlapping pair with at least one box in `fresh`, the other in `fresh` or in one
    /// of `old` (each list sorted on the sweep axis; entry `id` of `old[k]` is skipped unless
    /// `live(k, id)`). `report(a, b)` gets the two slots. Returns the candidate tests made.
    pub(super) fn pairs(
        &mut self,
        fresh: &BoxList,
        old: &[&BoxList],
        live: impl Fn(usize, u32) -> bool,
        mut report: impl FnMut(u32, u32),
    ) -> u64 {
        let old_count: usize = old.iter().map(|l| l.len()).sum();
        let Some(grid) = grid_for(fresh, old_count, self.per_column) else {
            // One column: sweep the lists whole.
            let mut tests = complete(fresh, |i, j| report(fresh.id(i), fresh.id(j)));
            for (k, list) in old.iter().enumerate() {
                tests += bipartite(fresh, list, |i, j| {
                    if live(k, list.id(j)) {
                        report(fresh.id(i), list.id(j));
                    }
                });
            }
            return tests;
        };
        let n = grid.len();
        if self.new_cols.len() < n {
            self.new_cols.resize_with(n, BoxList::default);
        }
        if self.old_cols.len() < old.len() {
            self.old_cols.resize_with(old.len(), Vec::new);
        }
        for cols in &mut self.old_cols[..old.len()] {
            if cols.len() < n {
                cols.resize_with(n, BoxList::default);
            }
            cols[..n].iter_mut().for_each(BoxList::clear);
        }
        self.new_cols[..n].iter_mut().for_each(BoxList::clear);
        self.marked.clear();
        self.marked.resize(n, false);
        // Binning in list order keeps every column sorted.
        for i in 0..fresh.len() {
            let b = encoded(fresh, i);
            let r = columns(&grid, &b.uv);
            for (u, v) in r.cells() {
                let c = grid.index(u, v);
                self.marked[c] = true;
                self.new_cols[c].push(&b, fresh.id(i), tag(0, r.u0, r.v0));
            }
        }
        // Old boxes go only where a fresh box is.
        for (k, (list, cols)) in old.iter().zip(&mut self.old_cols).enumerate() {
            for i in 0..list.len() {
                if !live(k, list.id(i)) {
                    continue;
                }
                let b = encoded(list, i);
                let r = columns(&grid, &b.uv);
                for (u, v) in r.cells() {
                    let c = grid.index(u, v);
                    if self.marked[c] {
                        cols[c].push(&b, list.id(i), tag(0, r.u0, r.v0));
                    }
                }
            }
        }
        let mut tests = 0;
        for u in 0..grid.cells[0] {
            for v in 0..grid.cells[1] {
                let c = grid.index(u, v);
                if !self.marked[c] {
                    continue;
                }
                let here = tag(0, u as u16, v as u16);
                let new = &self.new_cols[c];
                tests += complete(new, |i, j| {
                    if reporting_cell(here, new.tag(i), new.tag(j)) == Report::Here {
                        report(new.id(i), new.id(j));
                    }
                });
                for cols in &self.old_cols[..old.len()] {
                    let old = &cols[c];
                    tests += bipartite(new, old, |i, j| {
                        if reporting_cell(here, new.tag(i), old.tag(j)) == Report::Here {
                            report(new.id(i), old.id(j));
                        }
                    });
                }
            }
        }
        tests
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.new_cols
            .iter()
            .map(BoxList::memory_bytes)
            .sum::<usize>()
            + self
                .old_cols
                .iter()
                .flatten()
                .map(BoxList::memory_bytes)
                .sum::<usize>()
            + self.marked.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::encode;
    use crate::Aabb;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn boxes(n: usize) -> impl Strategy<Value = Vec<Aabb>> {
        // A coarse lattice: touching, identical and column-straddling boxes are common.
        let coord = (-8i32..24).prop_map(|v| v as f32 * 0.5);
        let b = (
            [coord.clone(), coord.clone(), coord],
            [0i32..6, 0i32..6, 0i32..6],
        )
            .prop_map(|(min, size)| {
                let max = std::array::from_fn(|i| min[i] + size[i] as f32 * 0.5);
                Aabb::new(min, max)
            });
        prop::collection::vec(b, 0..n)
    }

    fn list(items: &[(u32, Aabb)]) -> BoxList {
        let mut sorted: Vec<(EncodedBox, u32)> = items
            .iter()
            .map(|(id, b)| (EncodedBox::new(b, [0, 1, 2]), *id))
            .collect();
        sorted.sort_by_key(|(e, _)| e.min_x);
        let mut l = BoxList::default();
        for (e, id) in &sorted {
            l.push(e, *id, 0);
        }
        l
    }

    proptest! {
        /// Columns find every pair with a fresh box exactly once, whatever the grid.
        #[test]
        fn columns_match_a_naive_search(
            fresh in boxes(120),
            old_a in boxes(120),
            old_b in boxes(60),
            per_column in 1usize..40,
        ) {
            let number = |from: u32, v: Vec<Aabb>| -> Vec<(u32, Aabb)> {
                v.into_iter().enumerate().map(|(i, b)| (from + i as u32, b)).collect()
            };
            let (f, a, b) = (number(0, fresh), number(1000, old_a), number(2000, old_b));
            // Every third box of the second old list is "stale".
            let live = |k: usize, id: u32| k == 0 || !id.is_multiple_of(3);
            let mut batch = Batch { per_column, ..Batch::default() };
            let mut found = Vec::new();
            batch.pairs(&list(&f), &[&list(&a), &list(&b)], live, |x, y| {
                found.push((x.min(y), x.max(y)));
            });
            let set: BTreeSet<(u32, u32)> = found.iter().copied().collect();
            prop_assert_eq!(set.len(), found.len(), "a pair was reported twice");
            let mut want = BTreeSet::new();
            for (i, (x, bx)) in f.iter().enumerate() {
                for (y, by) in f[i + 1..].iter().chain(&a).chain(&b) {
                    if (*y < 2000 || live(1, *y)) && bx.overlaps(by) {
                        want.insert((*x.min(y), *x.max(y)));
                    }
                }
            }
            prop_assert_eq!(set, want);
        }
    }

    #[test]
    fn columns_are_monotone_in_the_key() {
        let grid = ColumnGrid::cut(0, [-3.0, 0.0], [0.7, 2.0], [5, 9]);
        let mut last = 0;
        for v in [-1e30f32, -4.0, -3.0, -2.9, -0.0, 0.0, 1.0, 2.5, 3.0, 1e30] {
            let k = encode(v);
            let c = columns(&grid, &[k, 0, k, 0]).u0;
            assert!(c >= last && c < 5);
            last = c;
        }
    }
}
