//! A ray's walk through the cells of a grid: each cell searched over the stretch of the ray
//! inside it, a box held by several cells visited once. Abp walks its columns so, and Mbp the
//! cells of each region the ray reaches.

use std::collections::HashSet;
use std::ops::ControlFlow;

use crate::query::{segment_bounds, Ray};
use crate::Aabb;

use super::cell::Cell;
use super::grid::{pad_stretch, CellRange, ColumnGrid};

/// One ray's walk, through the cells of one grid or of several.
pub(crate) struct RayWalk<'a> {
    ray: &'a Ray,
    max_t: f32,
    /// Boxes straddling several cells may be met in more than one: those visited.
    seen: HashSet<u32>,
}

impl<'a> RayWalk<'a> {
    /// A walk along `ray` up to `max_t`.
    pub(crate) fn new(ray: &'a Ray, max_t: f32) -> Self {
        Self {
            ray,
            max_t,
            seen: HashSet::new(),
        }
    }

    /// Visits the boxes of the cells in `range` of `grid` (`cells`, in the grid's order) that
    /// the ray may hit inside `clip` (which lies in the world's box, so it is finite): each
    /// cell is searched over the stretch of the ray inside it and `clip`, padded for rounding.
    /// A box for which `single(slot)` holds is in one cell only and is visited there; the
    /// others once each, in the first cell met.
    pub(crate) fn cells(
        &mut self,
        cells: &[Cell],
        grid: &ColumnGrid,
        range: CellRange,
        clip: &Aabb,
        single: impl Fn(u32) -> bool,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let [_, a, b] = grid.axes;
        for (u, v) in range.cells() {
            let mut cell_box = *clip;
            for (k, axis, i) in [(0, a, u), (1, b, v)] {
                let (lo, hi) = grid.cell_span(k, i);
                cell_box.min[axis] = cell_box.min[axis].max(lo as f32);
                cell_box.max[axis] = cell_box.max[axis].min(hi as f32);
            }
            // Finite, as `clip` is: ordered is valid.
            if !(0..3).all(|k| cell_box.min[k] <= cell_box.max[k]) {
                continue;
            }
            let Some(stretch) = segment_bounds(self.ray, self.max_t, &cell_box) else {
                continue;
            };
            let stretch = pad_stretch(&stretch);
            let seen = &mut self.seen;
            cells[grid.index(u, v)].scan(&stretch, &mut |slot, _| {
                if single(slot) || seen.insert(slot) {
                    visit(slot)
                } else {
                    ControlFlow::Continue(())
                }
            })?;
        }
        ControlFlow::Continue(())
    }
}
