//! `Abp`: automatic box pruning, PhysX's region-free broad phase, made column-wise.
//!
//! PhysX's ABP keeps the boxes sorted along one axis and, each update, sweeps the moved dynamic
//! boxes among themselves (complete box pruning) and against the unmoved dynamic and the fixed
//! boxes (bipartite box pruning); fixed boxes are re-sorted only when they change. This type does
//! the same inside each column of an automatic grid over the two non-sweep axes
//! ([`crate::cells::grid`]): a plain sweep tests N²·w/L candidates in a dense scene, the columns
//! divide that by their number. The columns are [`crate::cells`], which Mbp's regions use too:
//! how boxes leave and arrive, the sweeps, the per-column pair diff and the parallel processing
//! live there, and so do the loop that bins the changed boxes, the end of an update and the
//! walk of a ray through the columns. This engine says where a box goes and keeps its counts.
//!
//! Per update:
//! 1. boxes that changed leave their old columns (marked here, compacted by each column);
//! 2. the changed boxes, sorted by slot, are binned into the columns they cover, reading the
//!    store in slot order, one chunk of slots per thread, except those that stay in the
//!    columns they were in: those columns re-encode them where they are;
//! 3. every touched column, in parallel, sorts its arrivals, sweeps them, diffs its pairs and
//!    merges the arrivals in.
//!
//! Pairs between two unmoved boxes are not tested: the pair set keeps them.

mod check;
mod settings;

use std::ops::ControlFlow;

use crate::cells::grid::{CellRange, ColumnGrid};
use crate::cells::{
    self, split_slots, Arrival, BinSink, Binning, Cell, Cells, RayWalk, Rules, Stay,
};
use crate::engine::{Driver, Engine, PairChanges, PairList, Store};
use crate::prune::EncodedBox;
use crate::query::{segment_bounds, Ray};
use crate::slack;
use crate::{Aabb, AbpFigures, Algorithm, Config, Error, Figures, Stats};
pub use settings::AbpSettings;

/// Automatic box pruning: sorted sweeps in automatic columns, with fixed boxes kept sorted
/// between updates. The default choice for scenes where many objects move.
///
/// ```
/// use broadphase::{Abp, Aabb, BroadPhase, Config, Pair, ProxyDesc};
/// let mut bp = Abp::new(Config::default());
/// let ground = bp.insert(Aabb::new([-50.0, -1.0, -50.0], [50.0, 0.0, 50.0]), ProxyDesc::fixed())?;
/// let ball = bp.insert(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
/// bp.set_aabb(ball, Aabb::new([0.0, 2.0, 0.0], [1.0, 3.0, 1.0]))?;
/// assert_eq!(bp.update()?.deleted(), &[Pair::new(ground, ball)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type Abp = Driver<AbpEngine>;

impl Abp {
    /// An empty broad phase with the default [`AbpSettings`].
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(&config, AbpEngine::new(&config, AbpSettings::default()))
    }

    /// An empty broad phase with chosen column settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the settings are invalid ([`AbpSettings::validate`]).
    pub fn with_settings(config: Config, settings: AbpSettings) -> Result<Self, Error> {
        settings.validate()?;
        Ok(Driver::with_engine(
            &config,
            AbpEngine::new(&config, settings),
        ))
    }

    /// The number of columns the boxes are sorted in.
    #[must_use]
    pub fn columns(&self) -> usize {
        self.engine.grid.len()
    }
}

/// [`Abp`]'s engine: the columns, and where each slot's entries lie in them.
#[derive(Clone, Debug)]
pub struct AbpEngine {
    settings: AbpSettings,
    parallel: bool,
    grid: ColumnGrid,
    cells: Cells,
    /// Per slot: the columns holding its entries, while the structure holds it.
    ranges: Vec<CellRange>,
    /// Per slot: whether its centre lies outside the grid (it sits in a border column).
    outside: Vec<bool>,
    /// Live proxies the grid was chosen for; `None` before the first update.
    layout_for: Option<usize>,
    /// Entries in all columns (a box counts once per column it covers).
    entries: usize,
    /// Boxes in the structure whose centre lies outside the grid.
    outside_count: usize,
    /// Slots to bin (all live ones after a new layout) when they are not the store's changed
    /// list as it stands ([`AbpEngine::list_slots`]), and what became of each.
    to_bin: Vec<u32>,
    from_dirty: bool,
    binning: Binning,
    rebuilds: u64,
}

/// What one chunk of the binning writes: the columns and outside flags of its own range of
/// slots, and its counts.
struct ColumnChunk<'a> {
    ranges: &'a mut [CellRange],
    outside: &'a mut [bool],
    /// Entries and boxes outside the grid that the chunk's slots add, and those they held.
    entries: usize,
    outside_count: usize,
    old_entries: usize,
    old_outside: usize,
}

/// The slots the update binned ([`AbpEngine::list_slots`]).
fn binned<'a>(from_dirty: bool, to_bin: &'a [u32], store: &'a Store) -> &'a [u32] {
    if from_dirty {
        store.dirty()
    } else {
        to_bin
    }
}

impl AbpEngine {
    /// An engine holding nothing, with valid settings ([`AbpSettings::validate`]).
    #[must_use]
    pub fn new(config: &Config, settings: AbpSettings) -> Self {
        let mut cells = Cells::default();
        cells.replace(0..0, vec![Cell::new(cells::tag(0, 0, 0), true, [0, 1, 2])]);
        Self {
            settings,
            parallel: config.use_threads(),
            grid: ColumnGrid::single(0),
            cells,
            ranges: Vec::new(),
            outside: Vec::new(),
            layout_for: None,
            entries: 0,
            outside_count: 0,
            to_bin: Vec::new(),
            from_dirty: false,
            binning: Binning::default(),
            rebuilds: 0,
        }
    }

    /// Whether the population changed enough since the grid was chosen to choose again.
    fn needs_new_layout(&self, store: &Store) -> bool {
        let n = store.len();
        match self.layout_for {
            None => true,
            Some(built) => {
                n > 2 * built + 256
                    || (4 * n < built && self.grid.len() > 1)
                    || (self.grid.len() > 1 && self.outside_count > n / 4 + 64)
                    || self.entries > 4 * n + 1024
            }
        }
    }

    /// Chooses a new grid from the live boxes and replaces every column: everything will be
    /// binned again as moved.
    fn new_layout(&mut self, s: &Store) {
        let live = (0..s.slot_count()).filter(|&i| s.is_alive(i));
        self.grid = ColumnGrid::choose(
            &self.settings.grid_params(),
            s.len(),
            live.map(|i| s.aabb_at(i)),
            None,
            None,
        );
        let grid = &self.grid;
        let columns = (0..grid.cells[0])
            .flat_map(|u| (0..grid.cells[1]).map(move |v| (u, v)))
            .map(|(u, v)| Cell::new(cells::tag(0, u as u16, v as u16), true, grid.axes))
            .collect();
        // Every pair will be found again in the new columns: the old columns' pairs become
        // deleted candidates, which the pairs found again cancel.
        self.cells.replace(0..self.cells.len(), columns);
        self.layout_for = Some(s.len());
        self.entries = 0;
        self.outside_count = 0;
        self.outside.iter_mut().for_each(|o| *o = false);
        self.rebuilds += 1;
    }

    /// Marks the columns the changed boxes leave (all of them when most boxes changed).
    fn remove_leavers(&mut self, store: &Store) {
        // When many proxies changed, nearly every column has leavers: compacting them all
        // beats finding which (and when every proxy is binned, every column has).
        if cells::bins_all(store.dirty().len(), store.len()) {
            self.cells.mark_all_leavers();
            return;
        }
        for &slot in store.dirty() {
            let slot = slot as usize;
            if store.was_in(slot) {
                for (u, v) in self.ranges[slot].cells() {
                    self.cells.mark_leaver(self.grid.index(u, v));
                }
            }
        }
    }

    /// Bins the boxes to (re)insert into the columns they cover, in slot order (reading the
    /// store sequentially), then records where each went.
    fn bin_movers(&mut self, store: &Store, everything: bool) {
        let slots = store.slot_count();
        if self.ranges.len() < slots {
            slack::resize(&mut self.ranges, slots, CellRange::default());
            slack::resize(&mut self.outside, slots, false);
        }
        self.binning.grow(slots);
        self.list_slots(store, everything);
        let grid = &self.grid;
        let bin = |slot: u32, i: usize, sink: &mut BinSink<'_>, st: &mut ColumnChunk| {
            let s = slot as usize;
            // What the slot held in the columns leaves them (a new layout starts empty).
            let was_in = !everything && store.was_in(s);
            if was_in {
                st.old_entries += st.ranges[i].count();
                st.old_outside += usize::from(std::mem::take(&mut st.outside[i]));
            }
            if !store.is_alive(s) {
                return Stay::No;
            }
            let aabb = store.aabb_at(s);
            let fixed = store.is_fixed(s);
            let range = grid.range(aabb);
            let stay = if was_in && range == st.ranges[i] {
                // Same columns, same tag: they re-encode it where it is.
                Stay::kept(fixed)
            } else {
                let arrival = Arrival {
                    enc: EncodedBox::new(aabb, grid.axes),
                    slot,
                    tag: cells::tag(0, range.u0, range.v0),
                };
                for (u, v) in range.cells() {
                    sink.push(grid.index(u, v), arrival, fixed);
                }
                Stay::No
            };
            let outside = grid.is_outside(aabb);
            st.ranges[i] = range;
            st.outside[i] = outside;
            st.outside_count += usize::from(outside);
            st.entries += range.count();
            stay
        };
        let to_bin = binned(self.from_dirty, &self.to_bin, store);
        let chunks = Cells::chunks_for(to_bin, self.parallel);
        let states = split_slots(&mut self.ranges, to_bin, chunks)
            .into_iter()
            .zip(split_slots(&mut self.outside, to_bin, chunks))
            .map(|((base, ranges), (_, outside))| {
                let st = ColumnChunk {
                    ranges,
                    outside,
                    entries: 0,
                    outside_count: 0,
                    old_entries: 0,
                    old_outside: 0,
                };
                (base, st)
            })
            .collect();
        // After a new layout, every box arrives in empty columns.
        let states = self
            .cells
            .bin(&mut self.binning, to_bin, states, everything, bin);
        // The counts of one update's chunks: what they held left before what they add came.
        for st in &states {
            self.entries = self.entries + st.entries - st.old_entries;
            self.outside_count = self.outside_count + st.outside_count - st.old_outside;
        }
    }

    /// Lists the slots to bin in increasing order: the store's changed list itself when it is
    /// in order and holds them all (a simulation moves its bodies in the order it made them,
    /// and every box is changed at the first update), else a copy, sorted; after a new layout,
    /// every live slot; where many changed ([`cells::bins_all`]), every live slot and those
    /// removed. Copying the changed list was 4 bytes a box.
    fn list_slots(&mut self, store: &Store, everything: bool) {
        let dirty = store.dirty();
        let in_order = dirty.windows(2).all(|w| w[0] < w[1]);
        // Many changed: every live proxy is binned too (`cells::bins_all`), with those removed.
        let all = !everything && cells::bins_all(dirty.len(), store.len());
        // In order and one per slot: every slot, so every live one.
        self.from_dirty = in_order && (!(everything || all) || dirty.len() == store.slot_count());
        let to_bin = &mut self.to_bin;
        to_bin.clear();
        if self.from_dirty {
            // Not needed while the changed list comes in order.
            *to_bin = Vec::new();
            return;
        }
        let slots = 0..store.slot_count() as u32;
        if everything {
            to_bin.reserve_exact(store.len());
            to_bin.extend(slots.filter(|&i| store.is_alive(i as usize)));
        } else if all {
            let binned = |&i: &u32| store.is_alive(i as usize) || store.is_dirty(i as usize);
            to_bin.extend(slots.filter(binned));
        } else {
            slack::grow(to_bin, dirty.len());
            to_bin.extend_from_slice(dirty);
            let slots = store.slot_count();
            self.cells.order_slots(to_bin, slots, |i| store.is_dirty(i));
        }
    }

    /// Finds the new pairs of every touched column, then merges its arrivals in.
    fn prune_touched(&mut self, store: &Store) {
        let stays = self.binning.stays();
        let rules = Rules {
            allows: &|x: u32, y: u32| store.allows_unless_both_fixed(x, y),
            // One region: never asked.
            lower_common: &|_: u32, _: u32, _: usize| false,
            stays,
            store,
        };
        self.cells.prune(self.parallel, &rules);
    }
}

impl AbpEngine {
    /// Visits the boxes of column `(u, v)` that overlap `q`; `reports` says, from a box's tag
    /// and slot, whether this column is where the query reports it.
    fn scan_column(
        &self,
        u: usize,
        v: usize,
        q: &Aabb,
        reports: &mut dyn FnMut(u32, u32) -> bool,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.cells
            .get(self.grid.index(u, v))
            .scan(q, &mut |slot, tag| {
                if reports(tag, slot) {
                    visit(slot)
                } else {
                    ControlFlow::Continue(())
                }
            })
    }
}

impl Engine for AbpEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Abp
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        if store.dirty().is_empty() {
            self.from_dirty = false;
            self.to_bin.clear();
        } else {
            let everything = self.needs_new_layout(store);
            if everything {
                self.new_layout(store);
            } else {
                self.remove_leavers(store);
            }
            self.bin_movers(store, everything);
            self.prune_touched(store);
        }
        // The columns' candidate changes are the update's changes.
        let binned = binned(self.from_dirty, &self.to_bin, store);
        self.cells
            .finish(self.parallel, &mut self.binning, binned, changes);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.cells.pair_lists()
    }

    /// The columns the box covers, binary-searched on the sweep axis; a box in several of
    /// them is visited in the first the query covers.
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let r = self.grid.range(bounds);
        let query = cells::tag(0, r.u0, r.v0);
        for (u, v) in r.cells() {
            let here = cells::tag(0, u as u16, v as u16);
            let mut reports = |tag: u32, _slot: u32| {
                cells::reporting_cell(here, tag, query) == cells::Report::Here
            };
            self.scan_column(u, v, bounds, &mut reports, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// The columns the ray crosses, each searched over the stretch of the ray inside it.
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
        let ranges = &self.ranges;
        // A box in one column only is met there only.
        let single = |slot: u32| ranges.get(slot as usize).is_some_and(|r| r.count() == 1);
        RayWalk::new(ray, max_t).cells(
            self.cells.slice(0..self.grid.len()),
            &self.grid,
            self.grid.range(&segment),
            world,
            single,
            visit,
        )
    }

    /// The columns (sorted, holding their boxes' keys, reporting their own pairs), each box
    /// in exactly the columns of its range, and the counts (`check.rs`).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        self.check(store)
    }

    fn stats(&self, _store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self.cells.memory_bytes()
            + self.ranges.capacity() * std::mem::size_of::<CellRange>()
            + self.outside.capacity()
            + self.to_bin.capacity() * 4;
        stats.figures = Figures::Abp(AbpFigures {
            columns: self.grid.len() as u64,
            sweep_axis: self.grid.axes[0] as u64,
            entries: self.entries as u64,
            outside: self.outside_count as u64,
            layouts: self.rebuilds,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BroadPhase, ProxyDesc, ProxyId};

    /// The running counts of entries and of boxes outside the grid, which decide when the
    /// columns are laid out again, match a recount after updates of every kind: few or most
    /// boxes moved, boxes removed, added, and sent outside the grid and back.
    #[test]
    fn entry_and_outside_counts_match_a_recount() {
        let mut rng = crate::split_mix::SplitMix64::new(1);
        let mut next = move |m: u64| rng.below(m) as f32;
        let boxes = |far: bool, r: &mut dyn FnMut(u64) -> f32| {
            let o = if far { 5000.0 } else { 0.0 };
            let min = [o + r(200), r(200), r(200)];
            Aabb::new(min, [min[0] + 1.0 + r(3), min[1] + 1.0, min[2] + 2.0])
        };
        let mut abp = Abp::new(Config::default());
        let mut ids: Vec<ProxyId> = (0..3000)
            .map(|_| abp.insert(boxes(false, &mut next), ProxyDesc::dynamic()))
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        for frame in 0..40 {
            // Every fourth frame moves nearly everything (the bulk path), the others a few.
            let share = if frame % 4 == 0 { 1 } else { 20 };
            for (k, id) in ids.iter().enumerate() {
                if k % share == 0 {
                    let far = next(50) == 0.0;
                    assert!(abp.set_aabb(*id, boxes(far, &mut next)).is_ok());
                }
            }
            for _ in 0..30 {
                let k = next(ids.len() as u64) as usize;
                assert!(abp.remove(ids.swap_remove(k)).is_ok());
                if let Ok(id) = abp.insert(boxes(false, &mut next), ProxyDesc::dynamic()) {
                    ids.push(id);
                }
            }
            assert!(abp.update().is_ok());
            let live = (0..abp.store.slot_count()).filter(|&s| abp.store.is_alive(s));
            let (entries, outside) = live.fold((0, 0), |(e, o), s| {
                (
                    e + abp.engine.ranges[s].count(),
                    o + usize::from(abp.engine.outside[s]),
                )
            });
            assert_eq!(
                (abp.engine.entries, abp.engine.outside_count),
                (entries, outside),
                "frame {frame}"
            );
        }
        assert!(abp.engine.rebuilds >= 1);
    }
}

#[cfg(test)]
mod memory_tests {
    use crate::split_mix::SplitMix64;
    use crate::{Aabb, Abp, BroadPhase, Config, ProxyDesc};

    /// `n` boxes of size 0.5-2 in a cube with about one overlap per box.
    fn crowd(n: usize, rng: &mut SplitMix64) -> Vec<(Aabb, ProxyDesc)> {
        let side = 2.5 * (n as f32).cbrt();
        (0..n)
            .map(|_| {
                let min = [rng.unit() * side, rng.unit() * side, rng.unit() * side];
                let size = 0.5 + 1.5 * rng.unit();
                let max = [min[0] + size, min[1] + size, min[2] + size];
                (Aabb::new(min, max), ProxyDesc::dynamic())
            })
            .collect()
    }

    /// What Abp says it holds stays within 120 bytes a box plus 16 a pair, at the first update
    /// (every box binned, every pair created: the columns are loaded without lists of
    /// arrivals beside them, and the lists of candidates sized for every pair are given back)
    /// and after updates that move every box.
    #[test]
    fn bytes_held_stay_within_the_budget() {
        let mut rng = SplitMix64::new(7);
        let n = 20_000;
        let items = crowd(n, &mut rng);
        let mut abp = Abp::new(Config::default().with_parallel(false));
        let ids = abp.insert_batch(&items).unwrap_or_default();
        let budget = |abp: &Abp| 120 * n + 16 * abp.stats().pairs;
        assert!(abp.update().is_ok());
        let first = abp.stats();
        assert!(first.pairs > n / 4, "a crowd: {} pairs", first.pairs);
        assert!(
            first.memory_bytes <= budget(&abp),
            "first update: {} bytes a box",
            first.memory_bytes / n
        );
        let mut boxes: Vec<Aabb> = items.iter().map(|(b, _)| *b).collect();
        for frame in 0..12 {
            let moves: Vec<_> = ids
                .iter()
                .zip(&mut boxes)
                .map(|(&id, b)| {
                    let d = 0.05 * (rng.unit() - 0.5);
                    *b = Aabb::new(b.min.map(|x| x + d), b.max.map(|x| x + d));
                    (id, *b)
                })
                .collect();
            assert!(abp.set_aabbs(&moves).is_ok());
            assert!(abp.update().is_ok());
            let held = abp.stats().memory_bytes;
            assert!(held <= budget(&abp), "{} bytes a box", held / n);
            if frame == 0 {
                // The first update's events and changes, one for every pair (24 bytes each),
                // are given back at the next update, not eight updates later (less what that
                // update's own lists take).
                let pairs = abp.stats().pairs;
                assert!(
                    held + 12 * pairs <= first.memory_bytes,
                    "{} -> {} bytes a box",
                    first.memory_bytes / n,
                    held / n
                );
            }
        }
    }
}
