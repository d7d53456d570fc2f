//! The binning of boxes into buckets, the sort's first and most significant digit: each binner
//! takes a chunk of slots, finds each box's level and cells, and scatters its record to the
//! buckets of its cells, level by level (the residents of a level, and the boxes of finer
//! levels visiting it).
//!
//! With [`GridSettings::keep_cells`](super::GridSettings::keep_cells), a level-0 box that covers
//! the same cells as at the last update (its [`Placement`]) is not binned: its buckets keep its
//! records, told by its fate ([`LEFT`], [`MOVED`], [`MOVED_FIXED`]).

use crate::store::Store;
use crate::Aabb;

use super::bucket::{LEFT, MOVED, MOVED_FIXED};
use super::layout::{Layout, LevelGrid, FINE_SPAN};
use super::level::Level;
use super::record::{record_flags, Record};

/// The fewest slots worth a binner of their own: binning runs in parallel over chunks of slots.
pub(crate) const MIN_CHUNK: usize = 1 << 14;
/// `Binner::levels` of a slot that is not live.
const NO_LEVEL: u8 = u8::MAX;

/// The records one binner scattered to the buckets of one level.
#[derive(Clone, Debug, Default)]
pub(crate) struct LevelBins {
    pub residents: Vec<Vec<Record>>,
    pub visitors: Vec<Vec<Record>>,
}

impl LevelBins {
    fn reset(&mut self, buckets: usize) {
        self.residents.resize_with(buckets, Vec::new);
        self.visitors.resize_with(buckets, Vec::new);
        self.residents.truncate(buckets);
        self.visitors.truncate(buckets);
        self.residents.iter_mut().for_each(Vec::clear);
        self.visitors.iter_mut().for_each(Vec::clear);
    }

    /// Scatters a record to every bucket holding one of its cells (once per bucket).
    #[inline]
    fn scatter(&mut self, g: &LevelGrid, rec: Record, hi: [i32; 3], resident: bool) {
        let lists = if resident {
            &mut self.residents
        } else {
            &mut self.visitors
        };
        let mut blocks = [[0u32; 4]; 3];
        let mut counts = [0usize; 3];
        for a in 0..3 {
            let (b0, b1) = (rec.lo[a] >> g.lb, hi[a] >> g.lb);
            let wrap = 1u32 << g.kb[a];
            let n = ((b1 - b0 + 1) as u32).min(wrap).min(4);
            for k in 0..n {
                blocks[a][k as usize] = (b0 as u32).wrapping_add(k) & (wrap - 1);
            }
            counts[a] = n as usize;
        }
        for &z in &blocks[2][..counts[2]] {
            for &y in &blocks[1][..counts[1]] {
                for &x in &blocks[0][..counts[0]] {
                    lists[g.bucket_index([x, y, z])].push(rec);
                }
            }
        }
    }
}

/// Bins one chunk of slots into the buckets.
#[derive(Clone, Debug, Default)]
pub(crate) struct Binner {
    /// Per level of the grid (same order as `GridEngine::levels`).
    pub bins: Vec<LevelBins>,
    /// The level of each slot of the chunk ([`NO_LEVEL`] when not live).
    levels: Vec<u8>,
    /// Residents per level (indexed by level number) of the chunk's boxes above level 0.
    pub upper: Vec<usize>,
    /// Boxes whose centre lies outside the layout's region.
    pub outside: usize,
}

/// The record of `aabb` on grid `g`, and its highest cell.
#[inline]
fn record(g: &LevelGrid, aabb: &Aabb, flags: u32) -> (Record, [i32; 3]) {
    let (lo, hi, home) = g.range_and_home(aabb);
    (Record::new(aabb, flags, lo, hi, home), hi)
}

/// Where a box's cells were on level 0 at the last update: its lowest cell and its
/// [`Record::shape`]. A box that covers the same cells again keeps its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    lo: [i32; 3],
    shape: u32,
}

impl Placement {
    /// Not on level 0 (not live, on a coarser level, or not placed yet).
    pub const NONE: Self = Self {
        lo: [0; 3],
        shape: u32::MAX,
    };

    fn is_placed(&self) -> bool {
        self.shape != u32::MAX
    }
}

/// What one binner owns of the per-slot state: its chunk's placements and fates.
pub(crate) struct ChunkState<'a> {
    pub placed: &'a mut [Placement],
    pub fates: &'a mut [u8],
}

impl Binner {
    /// Pass 1: bins the chunk's level-0 boxes and finds the level of the others. With
    /// `keep`, a level-0 box that covers the cells it covered at the last update is not binned
    /// (its records stay in their buckets); every other box that was on level 0 is marked as
    /// leaving, so that its buckets drop its records.
    #[allow(clippy::too_many_arguments)]
    pub fn bin_fine(
        &mut self,
        chunk: usize,
        chunk_size: usize,
        store: &Store,
        layout: &Layout,
        fine_buckets: usize,
        all_dirty: bool,
        keep: bool,
        state: &mut ChunkState<'_>,
    ) {
        let start = chunk * chunk_size;
        self.bins.resize_with(1, LevelBins::default);
        self.bins[0].reset(fine_buckets);
        self.levels.clear();
        self.upper.clear();
        self.outside = 0;
        let g = &layout.fine;
        for (k, (placed, fate)) in state
            .placed
            .iter_mut()
            .zip(state.fates.iter_mut())
            .enumerate()
        {
            let slot = start + k;
            let was_placed = keep && placed.is_placed();
            *fate = if was_placed { LEFT } else { 0 };
            if !store.is_alive(slot) {
                *placed = Placement::NONE;
                self.levels.push(NO_LEVEL);
                continue;
            }
            if was_placed && !store.is_dirty(slot) {
                // Unchanged since the last update: same cells, same entries.
                *fate = 0;
                self.outside += usize::from(layout.is_outside(&placed.lo));
                self.levels.push(0);
                continue;
            }
            let aabb = store.aabb_at(slot);
            let (lo, hi, home) = g.range_and_home(aabb);
            self.outside += usize::from(layout.is_outside(&lo));
            if (0..3).all(|a| hi[a] - lo[a] < FINE_SPAN) {
                self.levels.push(0);
                let now = Placement {
                    lo,
                    shape: Record::shape_of(lo, hi, home),
                };
                if was_placed && now == *placed {
                    *fate = if store.is_fixed(slot) {
                        MOVED_FIXED
                    } else {
                        MOVED
                    };
                    continue;
                }
                *placed = now;
                let rec = Record::new(aabb, record_flags(store, slot, all_dirty), lo, hi, home);
                self.bins[0].scatter(g, rec, hi, true);
            } else {
                *placed = Placement::NONE;
                let level = layout.level_of(aabb, &(lo, hi)) as usize;
                self.levels.push(level as u8);
                if self.upper.len() <= level {
                    self.upper.resize(level + 1, 0);
                }
                self.upper[level] += 1;
            }
        }
    }

    /// Pass 2: bins the boxes of the coarser levels, and every box of a finer level to the
    /// coarser levels that have boxes, as a visitor.
    pub fn bin_coarse(
        &mut self,
        chunk: usize,
        chunk_size: usize,
        store: &Store,
        levels: &[Level],
        all_dirty: bool,
    ) {
        self.bins.resize_with(levels.len(), LevelBins::default);
        for (bins, level) in self.bins.iter_mut().zip(levels).skip(1) {
            bins.reset(level.buckets.len());
        }
        let start = chunk * chunk_size;
        for (k, &own) in self.levels.iter().enumerate() {
            if own == NO_LEVEL {
                continue;
            }
            let slot = start + k;
            let aabb = store.aabb_at(slot);
            let f = record_flags(store, slot, all_dirty);
            for (bins, level) in self.bins.iter_mut().zip(levels).skip(1) {
                let l = level.grid.level;
                let resident = l == u32::from(own);
                if resident || (l > u32::from(own) && level.residents > 0) {
                    let (rec, hi) = record(&level.grid, aabb, f);
                    bins.scatter(&level.grid, rec, hi, resident);
                }
            }
        }
    }
}
