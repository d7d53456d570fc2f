//! Cells: the sorted sweeps that Abp's columns and Mbp's region cells share.
//!
//! A cell holds every box that touches it, fixed and dynamic boxes apart, each list sorted on
//! the sweep axis. Each update, the boxes that changed leave the cells they were in and arrive,
//! re-encoded, in the cells they touch now. Most moves are small, and most boxes that move stay
//! in exactly the cells they were in: those are not binned at all ([`Stay`]); each of their
//! cells re-encodes them from the store as it drops them, and they keep their order, which
//! the move leaves nearly sorted (Abp's frame with all of 100,000 boxes moving went from 13.7
//! to 10.5 ms). Where three tenths of the boxes or more changed, every box is binned as if it
//! had changed ([`bins_all`]): every cell then sorts and sweeps all its boxes at once. Each
//! touched cell then
//! 1. drops its leavers (one in-place compaction), and re-encodes those that stay;
//! 2. sorts its arrivals and those that stay (PhysX keeps the moved boxes at the front of its
//!    arrays and sorts them apart, "move to front"; here they arrive in lists of their own);
//! 3. sweeps moved dynamic × moved dynamic (complete pruning), then moved dynamic × unmoved
//!    dynamic, moved dynamic × all fixed, and moved fixed × unmoved dynamic (bipartite
//!    pruning); two unmoved boxes are never tested: their pair, if any, is kept;
//! 4. diffs the pairs it found against the sorted list of pairs it reported last time, all in
//!    cache, giving created and deleted candidates;
//! 5. merges its arrivals into its sorted lists (fixed boxes are thus re-sorted only when they
//!    change: the changed ones are sorted, then merged).
//!
//! A new layout, whose cells are all empty and receive every box, bins only each arrival's
//! slot and tag: each cell encodes its boxes from the store as it loads them, so that the
//! arrivals of every box are never held beside the cells.
//!
//! Cells are independent, so they are processed in parallel (rayon), and the arrivals are
//! binned in parallel too, one chunk of the (sorted) changed slots per thread, each chunk
//! writing its owner's per-slot records for its own range of slots. Every cell reads its
//! arrivals back chunk after chunk, which is the order of the slots however they were cut, and
//! the outputs are gathered in cell order: the result does not depend on the number of threads.
//!
//! A pair of boxes that share several cells is reported by one of them only, its *reporting
//! cell*: each entry carries a tag naming its box's first region and first cell there (see
//! [`tag`]), and the reporting cell of a pair is the lowest cell both boxes touch, in (region,
//! u, v) order: within a region, the cell at `(max u0, max v0)`; across regions, the lowest
//! region both touch. A pair whose reporting cell changes is deleted from the old cell and
//! created in the new one: it lands in both candidate lists, and [`Cells::finish`] cancels it
//! out.
//!
//! The files: `grid` cuts a plane into cells ([`grid::ColumnGrid`]); `tags` names an entry's
//! first cell and decides which cell reports a pair; `cell` holds one cell's sorted lists;
//! `bin` cuts the changed slots into chunks and bins their arrivals; `update` is what one
//! touched cell does; `parallel` runs the touched cells; `finish` gathers their changes; `ray`
//! walks a ray through cells; `check` checks the cells' invariants.

pub(crate) mod grid;

mod bin;
mod cell;
mod check;
mod finish;
mod parallel;
mod ray;
mod tags;
mod update;

use crate::par::PerWorker;
use crate::radix::RadixSorter;
use crate::slack::Trim;

use bin::Chunk;
pub(crate) use bin::{split_slots, Arrival, BinSink, Binning, Stay};
pub(crate) use cell::Cell;
pub(crate) use ray::RayWalk;
pub(crate) use tags::{local, reporting_cell, tag, tag_region, Report, TWO_REGIONS};
pub(crate) use update::Rules;

/// Where at least `BIN_ALL_SHARE` tenths of the live proxies changed, an update bins every
/// one as if it had changed ([`bins_all`]): each cell then drops and sorts all its boxes and
/// sweeps them all at once, which beats sorting the changed ones in and sweeping them against
/// those that stay. Measured with Abp on `uniform` with a share of the boxes moving (single
/// thread, median ms per frame, changed ones binned / all binned): at 10,000 boxes 0.37 / 0.49
/// at 15%, 0.47 / 0.49 at 25%, 0.53 / 0.50 at 30%, 0.61 / 0.56 at 35%; at 100,000, 3.9 / 5.4,
/// 5.0 / 5.4, 6.0 / 5.8, 6.4 / 5.5. In the `far` scene, where f32 steps leave 54% of the
/// boxes in place, about 45% change each frame.
const BIN_ALL_SHARE: usize = 3;

/// Whether an update where `changed` of `live` proxies changed bins every live proxy, changed
/// or not ([`BIN_ALL_SHARE`]); every cell then has leavers.
pub(crate) fn bins_all(changed: usize, live: usize) -> bool {
    10 * changed >= BIN_ALL_SHARE * live
}

/// A set of cells and what an update does to them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cells {
    cells: Vec<Cell>,
    chunks: Vec<Chunk>,
    /// Chunks used by the last binning, and the slots it binned.
    active: usize,
    binned: usize,
    /// This update loads a new layout: the chunks list only slots ([`Cells::bin`]).
    listed: bool,
    /// Per cell: touched this update; boxes left it. Kept apart from the cells, which are
    /// large, so that marking stays in cache.
    is_touched: Vec<bool>,
    leavers: Vec<bool>,
    touched: Vec<u32>,
    /// Candidate created and deleted pair keys of this update.
    created: Vec<u64>,
    deleted: Vec<u64>,
    /// When those lists, and each cell's, give their memory back.
    trims: [Trim; 2],
    tests: u64,
    /// Every touched cell measures its bounds.
    pub track_bounds: bool,
    /// Sorts the slots to bin.
    sorter: RadixSorter,
    scratch: Vec<u32>,
    /// What each worker prunes a cell with.
    scratch_per_worker: PerWorker<update::Scratch>,
}

impl Cells {
    /// The cells.
    #[inline]
    pub(crate) fn get(&self, c: usize) -> &Cell {
        &self.cells[c]
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// The cells in `range` (a region's, say).
    #[inline]
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> &[Cell] {
        &self.cells[range]
    }

    /// Replaces the cells in `range` by `new` ones (a new layout, a region re-cut, added or
    /// removed). The pairs of the old cells become deleted candidates: boxes whose pairs
    /// persist are binned again and find them again, which cancels them out. The caller bins
    /// again every box the old cells held.
    pub(crate) fn replace(&mut self, range: std::ops::Range<usize>, new: Vec<Cell>) {
        for cell in &self.cells[range.clone()] {
            self.deleted.extend_from_slice(&cell.pairs);
        }
        // Marks and inboxes refer to cell indices, which shift: drop them. Callers replace
        // cells before anything is marked or binned in an update.
        debug_assert!(self.touched.is_empty());
        self.cells.splice(range, new);
        let n = self.cells.len();
        self.is_touched.clear();
        self.is_touched.resize(n, false);
        self.leavers.clear();
        self.leavers.resize(n, false);
        for chunk in &mut self.chunks {
            chunk.clear();
        }
        self.active = 0;
        self.binned = 0;
    }

    /// Marks cell `c` as touched by this update.
    #[inline]
    pub(crate) fn touch(&mut self, c: usize) {
        if !self.is_touched[c] {
            self.is_touched[c] = true;
            self.touched.push(c as u32);
        }
    }

    /// Marks that boxes leave cell `c` this update.
    #[inline]
    pub(crate) fn mark_leaver(&mut self, c: usize) {
        self.touch(c);
        self.leavers[c] = true;
    }

    /// Marks every cell: when most boxes changed, compacting all beats finding which.
    pub(crate) fn mark_all_leavers(&mut self) {
        for c in 0..self.cells.len() {
            self.mark_leaver(c);
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.cells.iter().map(Cell::memory_bytes).sum::<usize>()
            + self.sorter.memory_bytes()
            + self
                .chunks
                .iter()
                .flat_map(|ch| ch.fixed.iter().chain(&ch.dynamic))
                .map(|v| v.capacity() * size_of::<Arrival>())
                .sum::<usize>()
            + self
                .chunks
                .iter()
                .flat_map(|ch| &ch.listed)
                .map(|v| v.capacity() * 8)
                .sum::<usize>()
            + self.cells.capacity() * size_of::<Cell>()
            + self.scratch_per_worker.sum(update::Scratch::memory_bytes)
    }
}
