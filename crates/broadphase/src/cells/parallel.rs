//! The parallel processing of the touched cells: each prunes on its own (rayon, one task per
//! cell), with its worker's scratch, and their candidate changes are gathered in cell order.

use std::sync::{Mutex, PoisonError};

use super::bin::PARALLEL_MIN;
use super::cell::Cell;
use super::update::{prune_cell, Rules, Scratch};
use super::Cells;

/// One [`Scratch`] per worker of the pool the cells are pruned on (the first serves a serial
/// update), owned by the cells: their memory is counted and freed with them. A clone starts
/// with none.
#[derive(Debug, Default)]
pub(super) struct Scratches(Vec<Mutex<Scratch>>);

impl Clone for Scratches {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl Scratches {
    /// At least `n` scratches.
    fn ensure(&mut self, n: usize) {
        if self.0.len() < n {
            self.0.resize_with(n, Mutex::default);
        }
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.0
            .iter()
            .map(|m| {
                m.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .memory_bytes()
            })
            .sum::<usize>()
            + self.0.capacity() * size_of::<Mutex<Scratch>>()
    }
}

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
        let threads = crate::par::threads();
        self.scratch_per_worker.ensure(threads);
        let (is_touched, leavers, track) = (&self.is_touched, &self.leavers, self.track_bounds);
        let work = |c: usize, cell: &mut Cell, scratch: &mut Scratch| {
            prune_cell(cell, c, leavers[c], chunks, scratch, rules);
            if track {
                cell.bounds = cell.measure();
            }
        };
        if parallel && self.binned >= PARALLEL_MIN && self.touched.len() > 1 && threads > 1 {
            for_each_touched(&mut self.cells, is_touched, &self.scratch_per_worker, work);
        } else if let Some(first) = self.scratch_per_worker.0.first_mut() {
            let scratch = first.get_mut().unwrap_or_else(PoisonError::into_inner);
            for &c in &self.touched {
                let c = c as usize;
                work(c, &mut self.cells[c], scratch);
            }
        }
        let mut tests = 0;
        for &c in &self.touched {
            let c = c as usize;
            let cell = &mut self.cells[c];
            self.created.extend_from_slice(&cell.created);
            self.deleted.extend_from_slice(&cell.deleted);
            cell.trims[0].clear(&mut cell.created);
            cell.trims[1].clear(&mut cell.deleted);
            tests += cell.tests;
            self.is_touched[c] = false;
            self.leavers[c] = false;
        }
        self.tests = tests;
        self.touched.clear();
    }
}

/// Runs `f` on every touched cell, in parallel, each worker with its own scratch.
#[cfg(feature = "parallel")]
fn for_each_touched(
    cells: &mut [Cell],
    is_touched: &[bool],
    scratches: &Scratches,
    f: impl Fn(usize, &mut Cell, &mut Scratch) + Sync + Send,
) {
    use rayon::prelude::*;
    let scratches = &scratches.0;
    // One task per cell, as in Grid's buckets: rayon's own cut leaves a thread idle while
    // the other finishes its last run of cells.
    cells
        .par_iter_mut()
        .with_max_len(1)
        .enumerate()
        .filter(|(c, _)| is_touched[*c])
        .for_each(|(c, cell)| {
            // The worker's own scratch. `f` starts no parallel work, so a worker never runs
            // two cells at once and the lock is free; were it not (a pool larger than the
            // one counted), a fresh scratch does the same work.
            let k = rayon::current_thread_index().unwrap_or(0) % scratches.len().max(1);
            match scratches.get(k).map(Mutex::try_lock) {
                Some(Ok(mut scratch)) => f(c, cell, &mut scratch),
                _ => f(c, cell, &mut Scratch::default()),
            }
        });
}

#[cfg(not(feature = "parallel"))]
fn for_each_touched(
    cells: &mut [Cell],
    is_touched: &[bool],
    scratches: &Scratches,
    f: impl Fn(usize, &mut Cell, &mut Scratch) + Sync + Send,
) {
    let mut fresh = Scratch::default();
    let mut first = scratches.0.first().map(|m| m.lock());
    let scratch = match first.as_mut() {
        Some(Ok(guard)) => &mut **guard,
        _ => &mut fresh,
    };
    for (c, cell) in cells.iter_mut().enumerate() {
        if is_touched[c] {
            f(c, cell, scratch);
        }
    }
}
