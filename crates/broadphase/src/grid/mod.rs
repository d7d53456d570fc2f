//! `Grid`: uniform-grid spatial subdivision, GPU Gems 3 chapter 32 on the CPU.
//!
//! Each update, every box writes the ids of the cells it covers. Its *home cell* (on a level) is
//! the one cell of the level holding the box's centre, the chapter's centroid cell; the other
//! cells it covers are its *phantom cells*. The ids, with the box's index and control bits, are
//! sorted by a stable radix sort; the entries of one cell then form a run, and a run of two
//! boxes or more is a collision cell, whose boxes are tested pairwise. Each pair is tested in
//! exactly one cell, chosen by the control bits (see [`collision_cell`]), so no table of pairs
//! already tested is needed.
//!
//! On the CPU the sort is organised for the cache. A cell id is hashed by wrapping the grid onto
//! a torus ([`layout`]); its high bits name a bucket and its low bits a cell inside the bucket.
//! The boxes are binned in slot order into the buckets they touch ([`bin`]: the sort's first,
//! most significant digit), and each bucket ([`bucket`]) then sorts its own entries with the
//! least significant digits, tests its collision cells and diffs its pairs against its sorted
//! pairs of the last update — all in cache, and each bucket independently, so buckets run in parallel. The
//! collision cells run all at once ([`Schedule::All`], the default) or in the chapter's eight
//! parity passes ([`Schedule::Parity`]); the result is the same.
//!
//! Beyond the chapter, the fine level keeps its buckets from one update to the next: a box
//! that moves but covers the same fine cells (lowest cell, spans and home cell, compared with
//! the last update's in slot order) is not binned again; its buckets read its new box into the
//! records they keep, drop the records of the boxes that left, and sort only the arrivals'
//! entries, merged into the kept ones ([`GridSettings::keep_cells`], on by default). A
//! collision cell none of whose boxes changed has nothing to test (the diff keeps its pairs):
//! it is neither listed nor read, so a frame where few boxes move costs little more than
//! finding the cells.
//!
//! A cell of a coarse level can hold hundreds of boxes (a planet and the asteroids visiting
//! it): its boxes are kept as columns and each of its residents tests eight of them at a time
//! ([`scan`]).
//!
//! Boxes much larger than the cell (a planet among asteroids, the chapter's exercise 3) live
//! on coarser levels of a hierarchical grid ([`level`]), each four times coarser than the last.
//! The boxes of finer levels visit a coarser level's cells to meet its boxes, so an oversized
//! box costs cells in proportion to its size on its own level, never a huge cell for everyone.

mod bin;
mod bucket;
mod chapter;
mod check;
mod collision_cell;
mod context;
mod dump;
mod entries;
mod found;
mod layout;
mod level;
mod record;
mod scan;
mod settings;

use std::ops::ControlFlow;

use crate::engine::{Driver, Engine, PairChanges, PairList};
use crate::pairs::{cancel_common, pair_key};
use crate::par::{self, each_mut as run_each, PerWorker, SORT_BOTH_MIN};
use crate::query::{segment_bounds, Ray};
use crate::radix::KeySorter;
use crate::slack;
use crate::slack::Trim;
use crate::store::Store;
use crate::{Aabb, Algorithm, Config, Error, Figures, GridFigures, Stats};
use bin::{Binner, ChunkState, Placement, MIN_CHUNK};
use bucket::Bucket;
pub use chapter::{SortAndSweep, SweepFigures};
use context::Context;
pub use dump::{CellBoxDump, GridLevelDump};
use layout::Layout;
use level::Level;
use record::Record;
pub use settings::{GridSettings, Schedule};

/// What the last update counted (the chapter's lab), for [`GridFigures`].
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    entries: u64,
    home: u64,
    collision_cells: u64,
    cells_tested: u64,
    tests: u64,
    found: u64,
    radix_passes: u32,
    radix_skipped: u32,
    buckets: u64,
}

/// Uniform-grid spatial subdivision (GPU Gems 3, chapter 32): home and phantom cells, a radix
/// sort of hashed cell ids, collision cells, one test per pair decided by control bits, and a
/// hierarchy of coarser levels for oversized boxes.
///
/// Best when boxes are of similar size and many move: particles, debris, crowds.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, Grid, Pair, ProxyDesc};
/// let mut bp = Grid::new(Config::default());
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([0.5; 3], [1.5; 3]), ProxyDesc::dynamic())?;
/// let planet = bp.insert(Aabb::new([-50.0; 3], [-10.0; 3]), ProxyDesc::fixed())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// bp.set_aabb(b, Aabb::new([-11.0; 3], [-9.0; 3]))?; // into the planet, out of `a`
/// let events = bp.update()?;
/// assert_eq!(events.created(), &[Pair::new(b, planet)]);
/// assert_eq!(events.deleted(), &[Pair::new(a, b)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type Grid = Driver<GridEngine>;

impl Grid {
    /// An empty grid with the default [`GridSettings`] (automatic cell size).
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(&config, GridEngine::new(&config, GridSettings::default()))
    }

    /// An empty grid with chosen settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the settings are invalid ([`GridSettings::validate`]).
    pub fn with_settings(config: Config, settings: GridSettings) -> Result<Self, Error> {
        settings.validate()?;
        Ok(Driver::with_engine(
            &config,
            GridEngine::new(&config, settings),
        ))
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &GridSettings {
        self.engine.settings()
    }

    /// The fine cell size in use (`None` before the first update with proxies chooses it).
    #[must_use]
    pub fn cell_size(&self) -> Option<f64> {
        self.engine.cell_size()
    }

    /// The cell size of every level holding boxes, finest first.
    #[must_use]
    pub fn level_cell_sizes(&self) -> Vec<f64> {
        self.engine.level_cell_sizes()
    }
}

/// [`Grid`]'s engine: the levels of the hierarchical grid, each a set of buckets holding the
/// records of its boxes and the sorted pairs of its cells, and the binners that bin the boxes
/// into the buckets.
#[derive(Clone, Debug)]
pub struct GridEngine {
    settings: GridSettings,
    parallel: bool,
    layout: Option<Layout>,
    /// Live proxies the layout was chosen for.
    layout_for: usize,
    /// The levels in use, finest first; level 0 first whenever there is a layout.
    levels: Vec<Level>,
    binners: Vec<Binner>,
    /// Per slot: where its box was on level 0 at the last update.
    placed: Vec<Placement>,
    /// Per slot, this update: what became of its level-0 records ([`LEFT`](bucket::LEFT),
    /// [`MOVED`](bucket::MOVED), [`MOVED_FIXED`](bucket::MOVED_FIXED), or 0 when unchanged),
    /// written by the binning in slot order so that a bucket refreshing its records reads one
    /// byte per record.
    fates: Vec<u8>,
    /// Boxes whose centre lay outside the layout's region at the last update.
    outside: usize,
    /// Candidate created and deleted pair keys of this update.
    created: Vec<u64>,
    deleted: Vec<u64>,
    /// One sorter for the created candidates, one for the deleted, which sort side by side,
    /// and when their scratch gives its memory back.
    key_sorters: [KeySorter; 2],
    sorter_trims: [Trim; 2],
    /// What each worker lends the buckets it runs.
    scratch: PerWorker<bucket::Scratch>,
    figures: Tally,
    layouts: u64,
}

impl GridEngine {
    /// An engine holding nothing, with `settings` (already validated:
    /// [`GridSettings::validate`]).
    #[must_use]
    pub fn new(config: &Config, settings: GridSettings) -> Self {
        Self {
            settings,
            parallel: config.use_threads(),
            layout: None,
            layout_for: 0,
            levels: Vec::new(),
            binners: Vec::new(),
            placed: Vec::new(),
            fates: Vec::new(),
            outside: 0,
            created: Vec::new(),
            deleted: Vec::new(),
            key_sorters: Default::default(),
            sorter_trims: Default::default(),
            scratch: PerWorker::default(),
            figures: Tally::default(),
            layouts: 0,
        }
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &GridSettings {
        &self.settings
    }

    /// The fine cell size in use (`None` before the first update with proxies chooses it).
    #[must_use]
    pub fn cell_size(&self) -> Option<f64> {
        self.layout.as_ref().map(|l| l.fine.cell)
    }

    /// The cell size of every level holding boxes, finest first.
    #[must_use]
    pub fn level_cell_sizes(&self) -> Vec<f64> {
        self.levels
            .iter()
            .filter(|l| l.residents > 0)
            .map(|l| l.grid.cell)
            .collect()
    }

    /// Whether the population changed enough since the layout was chosen to choose again.
    fn needs_new_layout(&self, store: &Store) -> bool {
        let n = store.len();
        let built = self.layout_for;
        match self.layout {
            None => true,
            Some(_) => {
                n > 2 * built + 256 || (4 * n < built && built > 1024) || self.outside > n / 4 + 64
            }
        }
    }

    /// Chooses a new layout from the live boxes: every pair will be found again, so the old
    /// ones all become deleted candidates, which the pairs found again cancel.
    fn new_layout(&mut self, store: &Store) {
        // Every pair lives in one bucket's list.
        for b in self.levels.iter().flat_map(|l| &l.buckets) {
            let list = b.pair_list();
            self.deleted.extend(list.keys.iter().map(|&k| {
                let (x, y) = (list.slots)(k);
                pair_key(x, y)
            }));
        }
        let s = store;
        let live = (0..s.slot_count()).filter(|&i| s.is_alive(i));
        let layout = Layout::choose(
            self.settings.cell_size,
            self.settings.cell_factor,
            s.len(),
            live.map(|i| s.aabb_at(i)),
        );
        self.levels.clear();
        self.levels.push(Level::new(layout.fine.clone()));
        self.layout = Some(layout);
        self.layout_for = store.len();
        self.layouts += 1;
    }

    /// Bins every live box, then finds and diffs the pairs of every bucket.
    fn rebuild(&mut self, store: &Store, all_dirty: bool) {
        let Some(layout) = &self.layout else {
            return;
        };
        // One binner per thread: the buckets then take a lone binner's lists without a copy.
        // Which binner bins a box changes only the order of a bucket's records, never the
        // pairs or the events, which are sorted.
        let slots = store.slot_count();
        let chunks = if self.parallel {
            par::threads().min(slots.div_ceil(MIN_CHUNK)).max(1)
        } else {
            1
        };
        let chunk_size = slots.div_ceil(chunks).max(1);
        // One binner per piece of the per-slot arrays, each piece binned (an idle binner would
        // keep the last update's bins).
        let chunks = slots.div_ceil(chunk_size).max(1);
        self.binners.resize_with(chunks, Binner::default);
        self.binners.truncate(chunks);
        let fine_buckets = self.levels[0].buckets.len();
        // Boxes keep their level-0 entries from the last update unless every box must be
        // binned again (a new layout, or the chapter's way chosen).
        let keep = self.settings.keep_cells && !all_dirty;
        slack::resize(&mut self.placed, slots, Placement::NONE);
        slack::resize(&mut self.fates, slots, 0);
        let mut work: Vec<(&mut Binner, ChunkState<'_>)> = self
            .binners
            .iter_mut()
            .zip(self.placed.chunks_mut(chunk_size))
            .zip(self.fates.chunks_mut(chunk_size))
            .map(|((binner, placed), fates)| (binner, ChunkState { placed, fates }))
            .collect();
        // A rebuild has changed slots, so at least one: every binner has its piece.
        debug_assert_eq!(work.len(), chunks);
        run_each(self.parallel, &mut work, |c, (binner, state)| {
            binner.bin_fine(
                c,
                chunk_size,
                store,
                layout,
                fine_buckets,
                all_dirty,
                keep,
                state,
            )
        });
        drop(work);
        self.outside = self.binners.iter().map(|binner| binner.outside).sum();

        // The coarser levels with boxes now, and those that had boxes (their pairs must go).
        let mut residents = vec![0usize; 1];
        for binner in &self.binners {
            if residents.len() < binner.upper.len() {
                residents.resize(binner.upper.len(), 0);
            }
            for (l, &count) in binner.upper.iter().enumerate() {
                residents[l] += count;
            }
        }
        residents[0] = store.len() - residents.iter().sum::<usize>();
        for (l, &count) in residents.iter().enumerate().skip(1) {
            if count > 0 && !self.levels.iter().any(|lv| lv.grid.level == l as u32) {
                self.levels.push(Level::new(layout.grid(l as u32)));
            }
        }
        self.levels.sort_by_key(|lv| lv.grid.level);
        for lv in &mut self.levels {
            lv.residents = residents.get(lv.grid.level as usize).copied().unwrap_or(0);
        }
        if self.levels.len() > 1 {
            let levels = &self.levels;
            run_each(self.parallel, &mut self.binners, |c, binner| {
                binner.bin_coarse(c, chunk_size, store, levels, all_dirty)
            });
        }

        let mut figures = Tally::default();
        for li in 0..self.levels.len() {
            self.process_level(store, li, keep);
            let lv = &mut self.levels[li];
            for b in &mut lv.buckets {
                self.created.extend_from_slice(&b.created);
                self.deleted.extend_from_slice(&b.deleted);
                b.trims[0].clear(&mut b.created);
                b.trims[1].clear(&mut b.deleted);
                let f = &b.figures;
                figures.entries += f.entries;
                figures.home += f.home;
                figures.collision_cells += f.collision_cells;
                figures.cells_tested += f.cells_tested;
                figures.tests += f.tests;
                figures.found += f.found;
                figures.radix_passes = figures.radix_passes.max(f.radix.passes);
                figures.radix_skipped = figures.radix_skipped.max(f.radix.skipped);
            }
            figures.buckets += lv.buckets.len() as u64;
        }
        // A coarse level left without boxes has no pairs left either: drop it.
        self.levels.retain(|lv| {
            lv.grid.level == 0 || lv.residents > 0 || lv.buckets.iter().any(|b| !b.pairs.is_empty())
        });
        self.figures = figures;
    }

    /// Gathers each bucket's records from the binners, then builds, tests and diffs it. With
    /// `keep`, level 0's buckets keep the records of boxes that stayed in their cells and take
    /// the binned ones as arrivals.
    fn process_level(&mut self, store: &Store, li: usize, keep: bool) {
        let level = &mut self.levels[li];
        let incremental = keep && li == 0;
        // A lone binner's residents become the buckets' records as they are.
        let lone = self.binners.len() == 1;
        if let (true, false, Some(bins)) = (lone, incremental, self.binners[0].bins.get_mut(li)) {
            for (bucket, list) in level.buckets.iter_mut().zip(&mut bins.residents) {
                std::mem::swap(&mut bucket.records, list);
            }
        }
        let binners = &self.binners;
        let fates = &self.fates;
        let ctx = Context {
            store,
            grid: &level.grid,
            radix_bits: self.settings.radix_bits,
            // Level 0 keeps its records between updates (out of slot order) when it keeps
            // cells: its pairs keep pair keys, also at an update that builds it afresh.
            by_record: level.grid.level > 0 || !self.settings.keep_cells,
        };
        let schedule = self.settings.schedule;
        let ctx = &ctx;
        self.scratch.ensure();
        let scratch = &self.scratch;
        run_each(self.parallel, &mut level.buckets, |b, bucket| {
            if incremental {
                // Level 0 has no visitors.
                let arrivals = binners
                    .iter()
                    .filter_map(|binner| binner.bins.first())
                    .map(|h| &h.residents[b][..]);
                bucket.update(b, ctx, arrivals, fates);
            } else {
                if !lone {
                    bucket.records.clear();
                    for binner in binners {
                        if let Some(h) = binner.bins.get(li) {
                            bucket.records.extend_from_slice(&h.residents[b]);
                        }
                    }
                }
                bucket.residents = bucket.records.len();
                for binner in binners {
                    if let Some(h) = binner.bins.get(li) {
                        bucket.records.extend_from_slice(&h.visitors[b]);
                    }
                }
                bucket.build(b, ctx);
            }
            if schedule == Schedule::All {
                scratch.with(|s| bucket.test_and_diff(b, ctx, s));
            }
        });
        if schedule == Schedule::Parity {
            // The chapter's eight passes: all cells of one parity class, then the next.
            for cell_type in 0..8 {
                run_each(self.parallel, &mut level.buckets, |b, bucket| {
                    bucket.test(b, Some(cell_type), ctx)
                });
            }
            run_each(self.parallel, &mut level.buckets, |_, bucket| {
                scratch.with(|s| bucket.diff(ctx, &mut s.diff))
            });
        }
    }

    /// Turns the buckets' candidate changes into the update's changes. A pair whose corner cell
    /// moved to another bucket was deleted from the old one and created in the new one: it is
    /// in both candidate lists, and in neither event list.
    fn finish(&mut self, changes: &mut PairChanges) {
        let (created, deleted) = (&mut self.created, &mut self.deleted);
        let [for_created, for_deleted] = &mut self.key_sorters;
        let both = self.parallel && created.len().min(deleted.len()) >= SORT_BOTH_MIN;
        par::both(
            both,
            || for_created.sort(created),
            || for_deleted.sort(deleted),
        );
        for (sorter, trim) in self.key_sorters.iter_mut().zip(&mut self.sorter_trims) {
            sorter.trim(trim);
        }
        cancel_common(&mut self.created, &mut self.deleted);
        changes.tests = self.figures.tests;
        // The driver's lists come empty: they hold this update's keys without a copy, and
        // their memory becomes the next update's candidate lists.
        std::mem::swap(&mut self.created, &mut changes.created);
        std::mem::swap(&mut self.deleted, &mut changes.deleted);
        self.created.clear();
        self.deleted.clear();
    }
}

impl Engine for GridEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Grid
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        if store.dirty().is_empty() {
            self.figures.tests = 0;
            self.figures.found = 0;
        } else {
            let everything = self.needs_new_layout(store);
            if everything {
                self.new_layout(store);
            }
            self.rebuild(store, everything);
        }
        self.finish(changes);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.levels
            .iter()
            .flat_map(|l| &l.buckets)
            .map(Bucket::pair_list)
            .collect()
    }

    /// The cells the box covers on each level, each box visited in the one cell that holds the
    /// lower corner of its overlap with the query's cells; when the query covers more cells
    /// than the level has boxes, every box of the level instead.
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for level in self.levels.iter().filter(|l| l.residents > 0) {
            let (lo, hi) = level.grid.range(bounds);
            let cells: f64 = (0..3)
                .map(|a| f64::from(hi[a]) - f64::from(lo[a]) + 1.0)
                .product();
            if level.cheaper_to_scan(cells) {
                level.visit_all(lo, hi, visit)?;
            } else {
                level.visit_range(lo, hi, &|_| false, visit)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The cells along the ray on each level (a long ray's bounds would cover the world).
    fn ray_candidates(
        &self,
        _store: &Store,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Some(segment) = segment_bounds(ray, max_t, world) else {
            return ControlFlow::Continue(());
        };
        for level in self.levels.iter().filter(|l| l.residents > 0) {
            level.visit_ray(ray, &segment, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// Every bucket's entries, records and pairs, and where each proxy lives (`check.rs`).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        self.check(store)
    }

    fn stats(&self, store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self
            .levels
            .iter()
            .flat_map(|l| &l.buckets)
            .map(Bucket::memory_bytes)
            .sum::<usize>()
            + self
                .binners
                .iter()
                .flat_map(|binner| &binner.bins)
                .flat_map(|h| h.residents.iter().chain(&h.visitors))
                .map(|v| v.capacity() * std::mem::size_of::<Record>())
                .sum::<usize>()
            + self.placed.capacity() * std::mem::size_of::<Placement>()
            + self.fates.capacity()
            + self.scratch.sum(bucket::Scratch::memory_bytes)
            + (self.created.capacity() + self.deleted.capacity()) * 8
            + self
                .key_sorters
                .iter()
                .map(KeySorter::memory_bytes)
                .sum::<usize>();
        let n = store.len() as u64;
        let f = &self.figures;
        stats.figures = Figures::Grid(GridFigures {
            brute_force_pairs: n * n.saturating_sub(1) / 2,
            cell_ids: f.entries,
            home_cells: f.home,
            phantom_cells: f.entries - f.home,
            collision_cells: f.collision_cells,
            // The others hold no changed box: their pairs are kept untested.
            collision_cells_tested: f.cells_tested,
            // The binning into buckets is the sort's first pass.
            radix_passes: u64::from(f.entries > 0) + u64::from(f.radix_passes),
            radix_passes_skipped: u64::from(f.radix_skipped),
            candidate_pairs_tested: f.tests,
            pairs_found: f.found,
            levels: self.levels.iter().filter(|l| l.residents > 0).count() as u64,
            buckets: f.buckets,
            layouts: self.layouts,
        });
    }
}
