//! The parallel processing of the touched cells: each prunes on its own (rayon, one task per
//! cell), each with its worker's scratch, and their candidate changes are gathered in cell order.

use crate::slack::SMALL_MIN_BYTES;

use super::bin::PARALLEL_MIN;
use super::cell::Cell;
use super::update::{prune_cell, Arrivals, Rules};
use super::Cells;

impl Cells {
    /// Prunes every touched cell (in parallel when `parallel` and the update is large) and
    /// gathers their candidate changes.
    pub(crate) fn prune<A, L>(&mut self, parallel: bool, rules: &Rules<'_, A, L>)
    where
        A: Fn(u32, u32) -> bool + Sync,
        L: Fn(u32, u32, usize) -> bool + Sync,
    {
        self.touched.sort_unstable();
        let chunks = &self.chunks[..self.active];
        self.scratch_per_worker.ensure();
        let scratches = &self.scratch_per_worker;
        let (is_touched, leavers, track) = (&self.is_touched, &self.leavers, self.track_bounds);
        let arrivals = if self.listed {
            Arrivals::Listed(chunks)
        } else {
            Arrivals::Inboxes(chunks)
        };
        let work = |c: usize, cell: &mut Cell| {
            scratches.with(|scratch| prune_cell(cell, c, leavers[c], arrivals, scratch, rules));
            if track {
                cell.bounds = cell.measure();
            }
        };
        if parallel
            && self.binned >= PARALLEL_MIN
            && self.touched.len() > 1
            && crate::par::threads() > 1
        {
            for_each_touched(&mut self.cells, is_touched, work);
        } else {
            for &c in &self.touched {
                let c = c as usize;
                work(c, &mut self.cells[c]);
            }
        }
        if self.listed {
            // Loaded: the lists of slots go before the candidates are gathered, into lists
            // sized at once. A new layout creates every pair: with both held, and the
            // gathered lists doubling past the cells', came the first update's peak.
            for chunk in &mut self.chunks {
                chunk.listed = Vec::new();
            }
            let (created, deleted) = self.touched.iter().fold((0, 0), |(a, b), &c| {
                let cell = &self.cells[c as usize];
                (a + cell.created.len(), b + cell.deleted.len())
            });
            self.created.reserve_exact(created);
            self.deleted.reserve_exact(deleted);
        }
        let mut tests = 0;
        for &c in &self.touched {
            let c = c as usize;
            let cell = &mut self.cells[c];
            self.created.extend_from_slice(&cell.created);
            self.deleted.extend_from_slice(&cell.deleted);
            if self.listed {
                // A new layout created every pair: lists that long are not needed again.
                cell.created = Vec::new();
                cell.deleted = Vec::new();
            } else {
                cell.trims[0].clear_above(&mut cell.created, SMALL_MIN_BYTES);
                cell.trims[1].clear_above(&mut cell.deleted, SMALL_MIN_BYTES);
            }
            tests += cell.tests;
            self.is_touched[c] = false;
            self.leavers[c] = false;
        }
        self.tests = tests;
        self.touched.clear();
    }
}

/// Runs `f` on every touched cell, in parallel.
#[cfg(feature = "parallel")]
fn for_each_touched(
    cells: &mut [Cell],
    is_touched: &[bool],
    f: impl Fn(usize, &mut Cell) + Sync + Send,
) {
    use rayon::prelude::*;
    // One task per cell, as in Grid's buckets: rayon's own cut leaves a thread idle while
    // the other finishes its last run of cells.
    cells
        .par_iter_mut()
        .with_max_len(1)
        .enumerate()
        .filter(|(c, _)| is_touched[*c])
        .for_each(|(c, cell)| f(c, cell));
}

#[cfg(not(feature = "parallel"))]
fn for_each_touched(
    cells: &mut [Cell],
    is_touched: &[bool],
    f: impl Fn(usize, &mut Cell) + Sync + Send,
) {
    for (c, cell) in cells.iter_mut().enumerate() {
        if is_touched[c] {
            f(c, cell);
        }
    }
}
