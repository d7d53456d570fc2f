//! The region table: each region's bounds and state (pending, built with cells, or being
//! removed), a built region's grid of cells, its neighbours and its core, and what the engine
//! reads of it (its cells, its members, the index that finds the regions a box touches).

use crate::cells::grid::{ColumnGrid, GridParams};
use crate::cells::{self, Cell};
use crate::store::Store;
use crate::Aabb;

use super::regions::{horizontal, RegionId, RegionIndex};
use super::MbpEngine;

/// A region in the table.
#[derive(Clone, Debug)]
pub(super) struct Region {
    pub(super) id: RegionId,
    pub(super) bounds: Aabb,
    /// Derived by Mbp (no region was added).
    pub(super) auto: bool,
    pub(super) state: State,
}

#[derive(Clone, Debug)]
pub(super) enum State {
    /// Added since the last update; gets its cells at the next.
    Pending { populate: bool },
    /// Has cells.
    Built(Built),
    /// Removed since the last update; its cells serve queries until the next.
    Removing(Built),
}

/// A region with cells.
#[derive(Clone, Debug)]
pub(super) struct Built {
    pub(super) grid: ColumnGrid,
    pub(super) first_cell: usize,
    /// The population its grid was chosen for.
    pub(super) grid_for: usize,
    /// Regions that touch this one (neighbours in a grid share borders).
    pub(super) neighbours: Vec<u8>,
    /// The part of the region a box can lie in without touching another region: a box
    /// inside it belongs to this region alone (the fast path). `None` when a neighbour
    /// overlaps the region's inside.
    pub(super) core: Option<Aabb>,
    /// A box holding every member's box (members reach out of the region): queries search
    /// the regions whose reach they touch. The union of its cells' bounds, after each update.
    pub(super) reach: Option<Aabb>,
}

impl Built {
    pub(super) fn new(grid: ColumnGrid, first_cell: usize, grid_for: usize) -> Self {
        Self {
            grid,
            first_cell,
            grid_for,
            neighbours: Vec::new(),
            core: None,
            reach: None,
        }
    }

    pub(super) fn cell_range(&self) -> std::ops::Range<usize> {
        self.first_cell..self.first_cell + self.grid.len()
    }

    /// The region's cells, with keys, for grid `grid` of region `r`.
    pub(super) fn cells(r: usize, grid: &ColumnGrid) -> Vec<Cell> {
        (0..grid.cells[0])
            .flat_map(|u| (0..grid.cells[1]).map(move |v| (u, v)))
            .map(|(u, v)| Cell::new(cells::tag(r, u as u16, v as u16), true, grid.axes))
            .collect()
    }
}

/// The largest float below `x` (`x` itself for -inf).
fn next_down(x: f32) -> f32 {
    if x == f32::NEG_INFINITY {
        x
    } else if x == 0.0 {
        -f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() - 1)
    } else {
        f32::from_bits(x.to_bits() + 1)
    }
}

/// The smallest float above `x` (`x` itself for +inf).
fn next_up(x: f32) -> f32 {
    -next_down(-x)
}

/// The core of a region with bounds `b` whose neighbours have bounds `neighbours` (see
/// [`Built::core`]): the region cut back, one side per neighbour, just short of it.
fn core(b: &Aabb, neighbours: impl Iterator<Item = Aabb>) -> Option<Aabb> {
    let mut core = *b;
    for n in neighbours {
        if !core.overlaps(&n) {
            continue;
        }
        let side = (0..3).find_map(|a| {
            if n.min[a] >= b.max[a] {
                Some((a, true))
            } else if n.max[a] <= b.min[a] {
                Some((a, false))
            } else {
                None
            }
        })?;
        match side {
            (a, true) => core.max[a] = core.max[a].min(next_down(n.min[a])),
            (a, false) => core.min[a] = core.min[a].max(next_up(n.max[a])),
        }
    }
    (0..3).all(|a| core.min[a] <= core.max[a]).then_some(core)
}

impl Region {
    pub(super) fn built(&self) -> Option<&Built> {
        match &self.state {
            State::Built(b) | State::Removing(b) => Some(b),
            State::Pending { .. } => None,
        }
    }

    pub(super) fn built_mut(&mut self) -> Option<&mut Built> {
        match &mut self.state {
            State::Built(b) | State::Removing(b) => Some(b),
            State::Pending { .. } => None,
        }
    }
}

impl MbpEngine {
    /// The plane regions are indexed (and drawn) in.
    pub(super) fn plane(&self) -> [usize; 2] {
        if self.auto {
            let [_, u, v] = ColumnGrid::single(self.sweep).axes;
            [u, v]
        } else {
            horizontal(self.up)
        }
    }

    /// The sizing of the cells: the tuning's, with cells growing as the square root of the
    /// population past 250,000 proxies. Past a million boxes, the thousands of cells of
    /// thousand-box cells make binning the arrivals slow (each cell's list is a stream being
    /// written); twice larger cells were 11% faster on uniform 1M, and made no difference
    /// at 100k.
    ///
    /// A region's cells hold fewer boxes where its sweep is short, as Abp's columns do, but
    /// never more where it is long: the population rule grows them already (the two together
    /// made the 1M cells of uniform, grid, particles and clustered hold 1.2 to 1.8 times the
    /// candidate tests, and their frames 1-4% slower in one run). Shrinking only, the tests
    /// at 10,000 boxes halve, and Mbp's frames there are 0.94-0.99 of before on nine scenes
    /// (sizes 1.02), level at 100k, and the 1M layouts unchanged (docs/MEASUREMENTS.md).
    pub(super) fn params(&self, store: &Store) -> GridParams {
        let mut params = self.tuning.cells.grid_params();
        let scale = (store.len() as f64 / 250_000.0).sqrt().max(1.0);
        params.boxes_per_cell = (params.boxes_per_cell as f64 * scale) as usize;
        params.max_sweep_scale = 1.0;
        params
    }

    pub(super) fn built(&self, r: usize) -> Option<&Built> {
        self.regions[r].as_ref().and_then(Region::built)
    }

    /// A region's index and bounds, for every region with cells.
    fn indexed(&self) -> Vec<(usize, Aabb)> {
        self.regions
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                r.as_ref()
                    .filter(|r| r.built().is_some())
                    .map(|r| (i, r.bounds))
            })
            .collect()
    }

    /// Rebuilds the region index and every region's neighbour list.
    pub(super) fn refresh_regions(&mut self) {
        let indexed = self.indexed();
        self.index = RegionIndex::new(self.plane(), &indexed);
        for &(r, bounds) in &indexed {
            let neighbours: Vec<u8> = self
                .index
                .lookup(&bounds)
                .iter()
                .filter(|&n| n != r)
                .map(|n| n as u8)
                .collect();
            let index = &self.index;
            let core = core(
                &bounds,
                neighbours
                    .iter()
                    .filter_map(|&n| index.bounds(usize::from(n)).copied()),
            );
            if let Some(b) = self.regions[r].as_mut().and_then(Region::built_mut) {
                b.neighbours = neighbours;
                b.core = core;
            }
        }
    }

    /// The fixed and dynamic proxies held by region `b` (each counted at its first cell).
    pub(super) fn population(&self, b: &Built) -> (usize, usize) {
        let mut out = (0, 0);
        for c in b.cell_range() {
            let cell = self.cells.get(c);
            let here = cells::local(cell.key);
            let count = |l: &crate::prune::BoxList| {
                l.tags()
                    .iter()
                    .filter(|&&t| cells::local(t) == here)
                    .count()
            };
            out.0 += count(&cell.fixed);
            out.1 += count(&cell.dynamic);
        }
        out
    }

    /// Entries in region `b`'s cells (a proxy counts once per cell it covers).
    pub(super) fn entries(&self, b: &Built) -> usize {
        b.cell_range().map(|c| self.cells.get(c).len()).sum()
    }

    /// Every proxy held by built region `b` (each once: at the entry of its first cell).
    pub(super) fn members_of(&self, b: &Built) -> Vec<u32> {
        let mut out = Vec::new();
        for c in b.cell_range() {
            let cell = self.cells.get(c);
            let here = cells::local(cell.key);
            out.extend(
                cell.entries()
                    .filter(|&(_, tag)| cells::local(tag) == here)
                    .map(|(slot, _)| slot),
            );
        }
        out
    }
}
