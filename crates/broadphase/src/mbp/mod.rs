//! `Mbp`: multi-box pruning, PhysX's broad phase with regions (`BroadPhaseMBP` → `MBP` →
//! `Region`), with Unreal's set-up, made exact, region-limit-free and parallel.
//!
//! The world is cut into regions (boxes, at most [`MAX_REGIONS`]). A proxy belongs to the
//! regions its box touches when it is placed; one that touches none is *out of bounds*: it
//! takes part in no pair until a region covers it again ([`Mbp::out_of_bounds`]). Two proxies
//! pair when their boxes overlap and they share a region; each pair is reported once, from one
//! shared pair set, however many regions the two share.
//!
//! Regions come from the user ([`Mbp::add_region`], [`Mbp::with_settings`] with PhysX's grid
//! over world bounds or Unreal's set-up) or, when none was added, from the boxes themselves:
//! a grid of columns along the axis the boxes spread most along, whose border columns reach to
//! infinity, derived again as the population grows or shrinks. So `Mbp` with no set-up keeps
//! the contract of every algorithm: exactly `BruteForce`'s pairs.
//!
//! Inside a region, PhysX sorts all its boxes on one axis; a region holding many boxes then
//! sweeps long lists (and past 65,535 boxes PhysX's region overflows). Here each region sorts
//! along its own longest axis (the vertical one, in a horizontal grid of regions) and is cut
//! across it into cells of about a thousand boxes ([`crate::cells`], shared with Abp: fixed
//! and dynamic boxes apart, moved boxes sorted apart and merged in, complete pruning of the
//! moved dynamic boxes, bipartite pruning against the unmoved and the fixed ones, a per-cell
//! pair diff), re-cut when its population drifts: a region never overflows, it splits.
//!
//! What an update does, in order:
//! 1. region changes: removed regions drop their cells and their proxies are placed again;
//!    added regions get cells and, when populated, the proxies that touch them, found among
//!    the proxies not *fully inside* a region (a bitmap, as in PhysX) and those of the regions
//!    the new one overlaps; regions whose population drifted are re-cut;
//! 2. changed proxies leave their cells;
//! 3. changed proxies are placed, in parallel chunks: the regions their box touches (PhysX's
//!    fast path when the box stays in the core of its single region, the part no other region
//!    reaches; else a lookup in a coarse grid of bins over the regions), then their cells
//!    there; a proxy in exactly the regions and cells it was in keeps its membership and is
//!    not binned: its cells re-encode it where it is (a copy of its second region's entry in
//!    the membership spares reading its region list to tell);
//! 4. every touched cell prunes, in parallel, and the pair changes are gathered.

mod regions;
mod svg;

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::abp::AbpSettings;
use crate::cells::grid::{centre_spread, pad_stretch, CellRange, ColumnGrid};
use crate::cells::{
    self, split_slots, Arrival, BinSink, Binning, Cell, Cells, RayWalk, Report, Rules, Stay,
};
use crate::engine::{Driver, Engine, PairChanges, PairList};
use crate::prefetch::prefetch;
use crate::prune::EncodedBox;
use crate::query::{segment_bounds, Ray};
use crate::store::Store;
use crate::{Aabb, Algorithm, Config, Error, ProxyId, Stats};
use regions::{check_region, horizontal, RegionIndex, RegionSet};
pub use regions::{regions_from_bounds, MbpSettings, RegionId, RegionInfo, MAX_REGIONS};

/// The cell of out-of-bounds proxies: held for queries, never pruned.
const OUT: usize = 0;
/// Its axes (any will do).
const OUT_AXES: [usize; 3] = [0, 1, 2];
/// `Membership::extra` when the proxy is in at most one region.
const NO_EXTRA: u32 = u32::MAX;
/// How many changed proxies ahead the leaving step prefetches a membership.
const LEAVE_AHEAD: usize = 8;
/// `MbpEngine::forced` flags: the slot is placed again this update although it did not change;
/// and its regions are looked up anew (a region it was in went away), rather than kept.
const FORCED: u8 = 1;
const LOOK_UP: u8 = 2;
/// `MbpEngine::sole_region` of a proxy in no region or in several.
const NOT_SOLE: u16 = u16::MAX;

/// How [`Mbp`] sizes what it derives: the regions it lays out when none was added, and the
/// cells it cuts every region into.
///
/// ```
/// use broadphase::{AbpSettings, Config, Mbp, MbpTuning};
/// let tuning = MbpTuning { boxes_per_region: 4096, ..MbpTuning::default() };
/// let mbp = Mbp::with_tuning(Config::default(), tuning)?;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MbpTuning {
    /// Proxies per derived region: with none added, `Mbp` lays out about
    /// `proxies / boxes_per_region` regions (at most 16 × 16). Default 16,384.
    pub boxes_per_region: usize,
    /// How each region is cut into cells: as Abp cuts the scene into columns.
    pub cells: AbpSettings,
}

impl Default for MbpTuning {
    fn default() -> Self {
        Self {
            boxes_per_region: 16_384,
            cells: AbpSettings::default(),
        }
    }
}

impl MbpTuning {
    /// Checks the tuning.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero boxes per region, or as
    /// [`AbpSettings::validate`].
    pub fn validate(&self) -> Result<(), Error> {
        if self.boxes_per_region == 0 {
            return Err(Error::InvalidParameter {
                name: "boxes_per_region",
                value: 0.0,
                expected: "at least 1",
            });
        }
        self.cells.validate()
    }
}

/// A proxy's place in one region: the region and the cells it covers there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RegionEntry {
    region: u8,
    range: CellRange,
}

/// Where a proxy is held: its regions, lowest first (the first inline, all of them in the
/// `extras` slab when there are several).
#[derive(Clone, Copy, Debug)]
struct Membership {
    first: RegionEntry,
    /// The second region's entry when in two or more (a copy of `extras[extra][1]`, so that
    /// a proxy in two regions is compared with its new place without reading `extras`).
    second: RegionEntry,
    count: u16,
    extra: u32,
    /// Its box lies inside one of its regions.
    inside: bool,
    /// It sits in the out-of-bounds cell.
    out: bool,
}

impl Membership {
    /// Its entries, lowest region first. In one or two regions they are copied into `buf` from
    /// the membership itself (no list to read: it would cost a cache miss); in more they are
    /// its list in `extras`.
    #[inline]
    fn entries<'a>(
        &self,
        extras: &'a [Vec<RegionEntry>],
        buf: &'a mut [RegionEntry; 2],
    ) -> &'a [RegionEntry] {
        *buf = [self.first, self.second];
        debug_assert!(self.count != 2 || extras[self.extra as usize][..] == buf[..]);
        match self.count {
            0..=2 => &buf[..usize::from(self.count)],
            _ => &extras[self.extra as usize],
        }
    }
}

impl Default for Membership {
    fn default() -> Self {
        Self {
            first: RegionEntry::default(),
            second: RegionEntry::default(),
            count: 0,
            extra: NO_EXTRA,
            inside: false,
            out: false,
        }
    }
}

/// A bitmap by slot, whose words several threads may set bits in.
#[derive(Debug, Default)]
struct Bits(Vec<AtomicU64>);

impl Clone for Bits {
    fn clone(&self) -> Self {
        Self(
            self.0
                .iter()
                .map(|w| AtomicU64::new(w.load(Ordering::Relaxed)))
                .collect(),
        )
    }
}

/// A region in the table.
#[derive(Clone, Debug)]
struct Region {
    id: RegionId,
    bounds: Aabb,
    /// Derived by Mbp (no region was added).
    auto: bool,
    state: State,
}

#[derive(Clone, Debug)]
enum State {
    /// Added since the last update; gets its cells at the next.
    Pending { populate: bool },
    /// Has cells.
    Built(Built),
    /// Removed since the last update; its cells serve queries until the next.
    Removing(Built),
}

/// A region with cells.
#[derive(Clone, Debug)]
struct Built {
    grid: ColumnGrid,
    first_cell: usize,
    /// The population its grid was chosen for.
    grid_for: usize,
    /// Regions that touch this one (neighbours in a grid share borders).
    neighbours: Vec<u8>,
    /// The part of the region a box can lie in without touching another region: a box
    /// inside it belongs to this region alone (the fast path). `None` when a neighbour
    /// overlaps the region's inside.
    core: Option<Aabb>,
    /// A box holding every member's box (members reach out of the region): queries search
    /// the regions whose reach they touch. The union of its cells' bounds, after each update.
    reach: Option<Aabb>,
}

impl Built {
    fn new(grid: ColumnGrid, first_cell: usize, grid_for: usize) -> Self {
        Self {
            grid,
            first_cell,
            grid_for,
            neighbours: Vec::new(),
            core: None,
            reach: None,
        }
    }

    fn cell_range(&self) -> std::ops::Range<usize> {
        self.first_cell..self.first_cell + self.grid.len()
    }

    /// The region's cells, with keys, for grid `grid` of region `r`.
    fn cells(r: usize, grid: &ColumnGrid) -> Vec<Cell> {
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
    fn built(&self) -> Option<&Built> {
        match &self.state {
            State::Built(b) | State::Removing(b) => Some(b),
            State::Pending { .. } => None,
        }
    }

    fn built_mut(&mut self) -> Option<&mut Built> {
        match &mut self.state {
            State::Built(b) | State::Removing(b) => Some(b),
            State::Pending { .. } => None,
        }
    }
}

/// What one chunk of the placing writes: the memberships of its own range of slots, and
/// what is left to store once the chunks are done.
struct PlaceChunk<'a> {
    members: &'a mut [Membership],
    sole_region: &'a mut [u16],
    /// The region lists of this chunk's proxies in several regions.
    lists: Vec<RegionEntry>,
    fixups: Vec<Fixup>,
}

/// A membership whose list changes: its new list (`lists[start..start + len]`, stored when
/// `len >= 2`) and its old one (`old`, released), for the pass after the chunks.
#[derive(Clone, Copy, Debug)]
struct Fixup {
    slot: u32,
    start: u32,
    len: u16,
    old: u32,
}

/// Multi-box pruning: PhysX's MBP, with regions (user-defined, Unreal's set-up, or derived
/// from the boxes when none is given), each cut into sorted cells that are pruned in parallel.
///
/// With no set-up it reports exactly the pairs [`BruteForce`](crate::BruteForce) reports. With
/// regions added, a proxy whose box touches no region is out of bounds and pairs with nothing
/// (as in PhysX), and two proxies pair when their boxes overlap and touch a common region.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, Mbp, MbpSettings, Pair, ProxyDesc};
/// // Four regions over a 100 × 100 floor, y up.
/// let floor = Aabb::new([0.0, -10.0, 0.0], [100.0, 10.0, 100.0]);
/// let mut bp = Mbp::with_settings(Config::default(), &MbpSettings::new(floor, 2))?;
/// let a = bp.insert(Aabb::new([49.0, 0.0, 49.0], [51.0, 1.0, 51.0]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([50.0, 0.0, 50.0], [52.0, 1.0, 52.0]), ProxyDesc::dynamic())?;
/// let far = bp.insert(Aabb::new([500.0; 3], [501.0; 3]), ProxyDesc::dynamic())?;
/// // `a` and `b` share four regions: their pair is reported once.
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// assert_eq!(bp.out_of_bounds(), vec![far]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type Mbp = Driver<MbpEngine>;

/// [`Mbp`]'s engine: the regions (added or derived), their cells, and where each proxy is
/// held in them.
#[derive(Clone, Debug)]
pub struct MbpEngine {
    parallel: bool,
    tuning: MbpTuning,
    /// No region was added: regions are derived from the boxes.
    auto: bool,
    /// The up axis of [`MbpSettings`]: added regions are indexed in the plane of the others.
    up: usize,
    /// The axis every cell sweeps along.
    sweep: usize,
    /// By region index.
    regions: Vec<Option<Region>>,
    generations: Vec<u32>,
    /// Some region was added or removed since the last update.
    region_edits: bool,
    /// Finds the regions a box touches, among those with cells.
    index: RegionIndex,
    cells: Cells,
    /// Per slot, while the structure holds it.
    members: Vec<Membership>,
    /// Per slot: its region when it is in exactly one, else `NOT_SOLE`. The fast path reads
    /// this (two bytes a proxy) rather than the whole membership.
    sole_region: Vec<u16>,
    extras: Vec<Vec<RegionEntry>>,
    free_extras: Vec<u32>,
    /// Per slot: held and not fully inside a region (the bitmap new regions scan).
    not_inside: Bits,
    /// Per slot: placed again this update without having changed (`FORCED`, `LOOK_UP`).
    forced: Vec<u8>,
    forced_list: Vec<u32>,
    /// Regions whose cells were replaced this update (no proxy leaves them cell by cell).
    recut: RegionSet,
    /// Regions added this update with `populate`: proxies kept in their regions join these.
    joinable: RegionSet,
    /// This update looks up the regions of every proxy (derived regions were laid out anew,
    /// or the first regions were added).
    lookup_all: bool,
    /// Every cell was replaced this update (a full layout): memberships may still name the
    /// cells a proxy is in, but the cells are empty.
    new_cells: bool,
    /// The first region was added: the derived regions go at the next update.
    switching: bool,
    /// Live proxies at the last full layout; `None` before the first update.
    layout_for: Option<usize>,
    /// A full layout is due (the origin moved, or the first region was added).
    relayout: bool,
    /// The slots to place this update, and what became of each.
    binning: Binning,
    layouts: u64,
    recuts: u64,
}

impl Mbp {
    /// An empty broad phase that derives its regions from the boxes it holds.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(&config, MbpEngine::new(&config, MbpTuning::default()))
    }

    /// [`Mbp::new`] with chosen sizes for derived regions and cells.
    ///
    /// # Errors
    /// As [`MbpTuning::validate`].
    pub fn with_tuning(config: Config, tuning: MbpTuning) -> Result<Self, Error> {
        tuning.validate()?;
        Ok(Driver::with_engine(
            &config,
            MbpEngine::new(&config, tuning),
        ))
    }

    /// An empty broad phase with the regions of `settings` (PhysX's grid over world bounds,
    /// or Unreal's set-up with outer bounds).
    ///
    /// # Errors
    /// As [`MbpSettings::regions`].
    pub fn with_settings(config: Config, settings: &MbpSettings) -> Result<Self, Error> {
        let engine = MbpEngine::with_settings(&config, settings)?;
        Ok(Driver::with_engine(&config, engine))
    }

    /// Adds a region; it takes effect at the next update. With `populate`, the proxies
    /// already held whose box touches it join it then; without, only proxies placed later
    /// do (inserted or changed, or looked up again when a region they were in is removed), as in
    /// PhysX. The first region added ends the derived regions: from then on, proxies outside
    /// every added region are out of bounds.
    ///
    /// A region may reach to infinity (`f32::INFINITY`) on any side.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`] for a NaN coordinate, [`Error::InvertedAabb`];
    /// [`Error::TooManyRegions`] past [`MAX_REGIONS`] (a removed region frees its index at
    /// the next update).
    pub fn add_region(&mut self, bounds: Aabb, populate: bool) -> Result<RegionId, Error> {
        self.engine.add_region(bounds, populate)
    }

    /// Removes a region; at the next update its proxies are placed again in the regions they
    /// still touch (or go out of bounds), and pairs that no longer share a region are
    /// reported deleted.
    ///
    /// # Errors
    /// [`Error::UnknownRegion`] for an id that is not a live added region of this broad
    /// phase (removed already, or never issued).
    pub fn remove_region(&mut self, id: RegionId) -> Result<(), Error> {
        self.engine.remove_region(id)
    }

    /// The ids of the added regions, by index.
    #[must_use]
    pub fn region_ids(&self) -> Vec<RegionId> {
        self.engine.region_ids()
    }

    /// Every region (added ones, or the derived ones), by index, with its population as of
    /// the last update: PhysX's `PxBroadPhaseRegionInfo`. Regions added since show no
    /// proxies yet; regions removed since are left out.
    #[must_use]
    pub fn regions(&self) -> Vec<RegionInfo> {
        self.engine.regions()
    }

    /// The proxies held out of bounds at the last update (their box touched no region), by
    /// id. They take part in no pair until a region covers them again.
    #[must_use]
    pub fn out_of_bounds(&self) -> Vec<ProxyId> {
        self.engine.out_of_bounds(&self.store)
    }

    /// Whether the regions are derived from the boxes (no region was added).
    #[must_use]
    pub fn derives_regions(&self) -> bool {
        self.engine.derives_regions()
    }

    /// The region layout as an SVG picture, seen along the up axis (derived regions: along
    /// the sweep axis): regions with their populations, their cells, and a sample of the
    /// proxies (out-of-bounds ones in red).
    #[must_use]
    pub fn regions_svg(&self) -> String {
        svg::render(&self.engine, &self.store)
    }
}

impl MbpEngine {
    /// An engine holding nothing, that derives its regions from the boxes (`tuning` already
    /// validated: [`MbpTuning::validate`]).
    #[must_use]
    pub fn new(config: &Config, tuning: MbpTuning) -> Self {
        let mut cells = Cells::default();
        cells.replace(0..0, vec![Cell::new(cells::tag(0, 0, 0), false, OUT_AXES)]);
        Self {
            parallel: config.use_threads(),
            tuning,
            auto: true,
            up: 1,
            sweep: 0,
            regions: vec![None; MAX_REGIONS],
            generations: vec![0; MAX_REGIONS],
            region_edits: false,
            index: RegionIndex::default(),
            cells,
            members: Vec::new(),
            sole_region: Vec::new(),
            extras: Vec::new(),
            free_extras: Vec::new(),
            not_inside: Bits::default(),
            forced: Vec::new(),
            forced_list: Vec::new(),
            recut: RegionSet::default(),
            joinable: RegionSet::default(),
            lookup_all: false,
            new_cells: false,
            switching: false,
            layout_for: None,
            relayout: false,
            binning: Binning::default(),
            layouts: 0,
            recuts: 0,
        }
    }

    /// An engine holding nothing, with the regions of `settings` (as [`Mbp::with_settings`]).
    ///
    /// # Errors
    /// As [`MbpSettings::regions`].
    pub fn with_settings(config: &Config, settings: &MbpSettings) -> Result<Self, Error> {
        let regions = settings.regions()?;
        let mut mbp = Self::new(config, MbpTuning::default());
        mbp.up = settings.up;
        for r in regions {
            mbp.add_region(r, false)?;
        }
        Ok(mbp)
    }

    /// [`Mbp::add_region`].
    fn add_region(&mut self, bounds: Aabb, populate: bool) -> Result<RegionId, Error> {
        check_region(&bounds)?;
        let live = self
            .regions
            .iter()
            .flatten()
            .filter(|r| !r.auto && !matches!(r.state, State::Removing(_)))
            .count();
        let free = self.regions.iter().position(Option::is_none);
        let (Some(index), true) = (free, live < MAX_REGIONS) else {
            return Err(Error::TooManyRegions { limit: MAX_REGIONS });
        };
        if self.auto {
            // The derived regions serve queries until the next update, which lays out the
            // added ones.
            self.auto = false;
            self.switching = true;
            self.relayout = true;
            for r in self.regions.iter_mut().flatten() {
                if let State::Built(b) = &r.state {
                    r.state = State::Removing(b.clone());
                }
            }
        }
        let id = RegionId::new(index, self.generations[index]);
        self.regions[index] = Some(Region {
            id,
            bounds,
            auto: false,
            state: State::Pending { populate },
        });
        self.region_edits = true;
        Ok(id)
    }

    /// [`Mbp::remove_region`].
    fn remove_region(&mut self, id: RegionId) -> Result<(), Error> {
        let i = id.index();
        let live = self
            .regions
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|r| r.id == id && !r.auto && !matches!(r.state, State::Removing(_)));
        if !live {
            return Err(Error::UnknownRegion { id });
        }
        self.generations[i] += 1;
        // A pending region never had cells or proxies: it just goes. A built one serves
        // queries until the next update.
        if let Some(mut region) = self.regions[i].take() {
            if let State::Built(b) = region.state {
                region.state = State::Removing(b);
                self.regions[i] = Some(region);
            }
        }
        self.region_edits = true;
        Ok(())
    }

    /// [`Mbp::region_ids`].
    #[must_use]
    fn region_ids(&self) -> Vec<RegionId> {
        self.regions
            .iter()
            .flatten()
            .filter(|r| !r.auto && !matches!(r.state, State::Removing(_)))
            .map(|r| r.id)
            .collect()
    }

    /// [`Mbp::regions`].
    #[must_use]
    fn regions(&self) -> Vec<RegionInfo> {
        self.regions
            .iter()
            .flatten()
            .filter(|r| !matches!(r.state, State::Removing(_)))
            .map(|r| {
                let b = r.built();
                let (fixed, dynamic) = b.map_or((0, 0), |b| self.population(b));
                RegionInfo {
                    id: (!r.auto).then_some(r.id),
                    bounds: r.bounds,
                    fixed,
                    dynamic,
                    cells: b.map_or(0, |b| b.grid.len()),
                    overlaps: b.is_some_and(|b| !b.neighbours.is_empty()),
                }
            })
            .collect()
    }

    /// The fixed and dynamic proxies held by region `b` (each counted at its first cell).
    fn population(&self, b: &Built) -> (usize, usize) {
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
    fn entries(&self, b: &Built) -> usize {
        b.cell_range().map(|c| self.cells.get(c).len()).sum()
    }

    /// [`Mbp::out_of_bounds`].
    #[must_use]
    fn out_of_bounds(&self, store: &Store) -> Vec<ProxyId> {
        let cell = self.cells.get(OUT);
        let mut out: Vec<ProxyId> = cell
            .entries()
            .map(|(slot, _)| slot as usize)
            .filter(|&s| store.is_alive(s))
            .map(|s| store.id_at(s))
            .collect();
        out.sort_unstable();
        out
    }

    /// [`Mbp::derives_regions`].
    #[must_use]
    fn derives_regions(&self) -> bool {
        self.auto
    }

    /// The plane regions are indexed (and drawn) in.
    fn plane(&self) -> [usize; 2] {
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
    fn params(&self, store: &Store) -> crate::cells::grid::GridParams {
        let mut params = self.tuning.cells.grid_params();
        let scale = (store.len() as f64 / 250_000.0).sqrt().max(1.0);
        params.boxes_per_cell = (params.boxes_per_cell as f64 * scale) as usize;
        params
    }

    fn built(&self, r: usize) -> Option<&Built> {
        self.regions[r].as_ref().and_then(Region::built)
    }

    /// The regions with cells whose reach (their members' boxes) `q` touches.
    fn reached(&self, q: &Aabb) -> RegionSet {
        let mut out = RegionSet::default();
        for (r, region) in self.regions.iter().enumerate() {
            if region
                .as_ref()
                .and_then(Region::built)
                .and_then(|b| b.reach)
                .is_some_and(|reach| reach.overlaps(q))
            {
                out.insert(r);
            }
        }
        out
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
    fn refresh_regions(&mut self) {
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

    /// Places `slot` again this update; with `look_up`, its regions are looked up anew.
    fn force(&mut self, slot: u32, look_up: bool) {
        let f = &mut self.forced[slot as usize];
        if *f == 0 {
            self.forced_list.push(slot);
        }
        *f |= FORCED | if look_up { LOOK_UP } else { 0 };
    }

    /// Every proxy held by built region `b` (each once: at the entry of its first cell).
    fn members_of(&self, b: &Built) -> Vec<u32> {
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

    /// Drops region `r` from slot `s`'s membership (the region is going away).
    fn strip(&mut self, s: usize, r: usize) {
        // A stripped proxy is looked up again: no fast path.
        self.sole_region[s] = NOT_SOLE;
        let m = &mut self.members[s];
        match m.count {
            0 => {}
            1 => {
                if usize::from(m.first.region) == r {
                    m.count = 0;
                }
            }
            _ => {
                let list = &mut self.extras[m.extra as usize];
                list.retain(|e| usize::from(e.region) != r);
                m.count = list.len() as u16;
                m.first = list[0];
                m.second = list.get(1).copied().unwrap_or_default();
                if m.count == 1 {
                    list.clear();
                    self.free_extras.push(m.extra);
                    m.extra = NO_EXTRA;
                }
            }
        }
    }

    /// Sizes the per-slot arrays for every slot issued.
    fn grow_slots(&mut self, store: &Store) {
        let n = store.slot_count();
        if self.members.len() < n {
            self.members.resize(n, Membership::default());
            self.sole_region.resize(n, NOT_SOLE);
            self.forced.resize(n, 0);
            self.not_inside
                .0
                .resize_with(n.div_ceil(64), AtomicU64::default);
        }
        self.binning.grow(n);
    }

    /// Whether the population changed enough since the last full layout to lay out again.
    fn needs_full_layout(&self, store: &Store) -> bool {
        let n = store.len();
        match self.layout_for {
            None => true,
            Some(built) => self.relayout || n > 2 * built + 256 || (4 * n < built && built > 4096),
        }
    }

    /// The derived regions for the live boxes: a grid over the plane of the cut axes, about
    /// `boxes_per_region` proxies each, the border regions reaching to infinity.
    fn derived_regions(&self, store: &Store) -> Vec<Aabb> {
        let live = (0..store.slot_count()).filter(|&i| store.is_alive(i));
        let [_, u, v] = ColumnGrid::single(self.sweep).axes;
        let whole = Aabb::new([f32::NEG_INFINITY; 3], [f32::INFINITY; 3]);
        let k = ((store.len() as f64 / self.tuning.boxes_per_region as f64)
            .sqrt()
            .round() as usize)
            .clamp(1, 16);
        let Some((lo, hi)) = centre_spread(store.len(), live.map(|i| store.aabb_at(i))) else {
            return vec![whole];
        };
        let borders = |axis: usize| -> Vec<f32> {
            let k = if hi[axis] > lo[axis] { k } else { 1 };
            let mut b: Vec<f32> = (0..=k)
                .map(|i| (lo[axis] + (hi[axis] - lo[axis]) * i as f64 / k as f64) as f32)
                .collect();
            b[0] = f32::NEG_INFINITY;
            b[k] = f32::INFINITY;
            b.dedup();
            b
        };
        let (bu, bv) = (borders(u), borders(v));
        let mut out = Vec::new();
        for i in 0..bu.len() - 1 {
            for j in 0..bv.len() - 1 {
                let mut r = whole;
                r.min[u] = bu[i];
                r.max[u] = bu[i + 1];
                r.min[v] = bv[j];
                r.max[v] = bv[j + 1];
                out.push(r);
            }
        }
        out
    }

    /// Lays everything out again: the sweep axis, the regions' cells, and every proxy placed
    /// again. Derived regions are derived anew (and the first added regions replace them):
    /// then every proxy's regions are looked up. Added regions keep their proxies: only the
    /// changed ones, and those of removed regions, are looked up; the others join the
    /// populated new regions they touch.
    fn full_layout(&mut self, store: &Store) {
        self.layouts += 1;
        self.relayout = false;
        let n = store.len();
        {
            let live = (0..store.slot_count()).filter(|&i| store.is_alive(i));
            self.sweep = ColumnGrid::choose(
                &self.params(store),
                n,
                live.map(|i| store.aabb_at(i)),
                None,
                None,
            )
            .axes[0];
        }
        if self.auto || self.switching {
            self.switching = false;
            self.region_edits = false;
            for r in 0..MAX_REGIONS {
                let gone = self.regions[r]
                    .as_ref()
                    .is_some_and(|x| x.auto || matches!(x.state, State::Removing(_)));
                if gone {
                    if self.regions[r].as_ref().is_some_and(|x| x.auto) {
                        self.generations[r] += 1;
                    }
                    self.regions[r] = None;
                }
            }
            if self.auto {
                for (r, bounds) in self.derived_regions(store).into_iter().enumerate() {
                    self.regions[r] = Some(Region {
                        id: RegionId::new(r, self.generations[r]),
                        bounds,
                        auto: true,
                        state: State::Pending { populate: false },
                    });
                }
            }
            for m in &mut self.members {
                *m = Membership::default();
            }
            self.sole_region.iter_mut().for_each(|h| *h = NOT_SOLE);
            for e in &mut self.extras {
                e.clear();
            }
            self.free_extras = (0..self.extras.len() as u32).rev().collect();
            self.not_inside.0.iter_mut().for_each(|w| *w.get_mut() = 0);
            self.lookup_all = true;
        } else {
            self.apply_region_changes(store);
        }
        // Sample the boxes into the regions they touch, to cut each region into cells.
        let table: Vec<(usize, Aabb)> = self
            .regions
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (i, r.bounds)))
            .collect();
        let lookup = RegionIndex::new(self.plane(), &table);
        let stride = n.div_ceil(4096 + 64 * table.len()).max(1);
        let mut samples: Vec<Vec<Aabb>> = vec![Vec::new(); MAX_REGIONS];
        for i in (0..store.slot_count())
            .filter(|&i| store.is_alive(i))
            .step_by(stride)
        {
            for r in lookup.lookup(store.aabb_at(i)).iter() {
                samples[r].push(*store.aabb_at(i));
            }
        }
        let params = self.params(store);
        let mut all = vec![Cell::new(cells::tag(0, 0, 0), false, OUT_AXES)];
        for &(r, bounds) in &table {
            let est = samples[r].len() * stride;
            let grid = ColumnGrid::choose(&params, est, samples[r].iter(), None, Some(&bounds));
            let first = all.len();
            all.extend(Built::cells(r, &grid));
            if let Some(region) = self.regions[r].as_mut() {
                region.state = State::Built(Built::new(grid, first, est));
            }
        }
        let len = self.cells.len();
        self.cells.replace(0..len, all);
        // Memberships may still name the same regions and cells, but the cells are empty.
        self.new_cells = true;
        self.cells.track_bounds = true;
        self.refresh_regions();
        self.layout_for = Some(n);
        self.binning.slots.clear();
        // Every live proxy, and the removed ones (to forget them).
        self.binning.slots.extend(
            (0..store.slot_count() as u32)
                .filter(|&i| store.is_alive(i as usize) || store.is_dirty(i as usize)),
        );
    }

    /// Step 1 of the module docs (without the re-cuts): removed regions drop their cells and
    /// their proxies are looked up again; added regions get cells, and the proxies that join
    /// them when populated.
    fn apply_region_changes(&mut self, store: &Store) {
        if !self.region_edits {
            return;
        }
        self.region_edits = false;
        for r in 0..MAX_REGIONS {
            let Some(State::Removing(b)) = self.regions[r].as_ref().map(|x| &x.state) else {
                continue;
            };
            let b = b.clone();
            for slot in self.members_of(&b) {
                self.strip(slot as usize, r);
                self.force(slot, true);
            }
            let range = b.first_cell..b.first_cell + b.grid.len();
            self.cells.replace(range.clone(), Vec::new());
            for x in self.regions.iter_mut().flatten() {
                if let Some(o) = x.built_mut() {
                    if o.first_cell > range.start {
                        o.first_cell -= range.len();
                    }
                }
            }
            self.regions[r] = None;
        }
        for r in 0..MAX_REGIONS {
            let Some(Region {
                state: State::Pending { populate },
                bounds,
                ..
            }) = self.regions[r]
            else {
                continue;
            };
            let joiners = if populate {
                self.joiners(store, &bounds)
            } else {
                Vec::new()
            };
            let grid = ColumnGrid::choose(
                &self.params(store),
                joiners.len(),
                joiners.iter().map(|&i| store.aabb_at(i as usize)),
                None,
                Some(&bounds),
            );
            let first = self.cells.len();
            self.cells.replace(first..first, Built::cells(r, &grid));
            if let Some(region) = self.regions[r].as_mut() {
                region.state = State::Built(Built::new(grid, first, joiners.len()));
            }
            for slot in joiners {
                self.force(slot, false);
            }
            if populate {
                self.joinable.insert(r);
            }
            // New: no proxy has entries here yet, and its population is still to come.
            self.recut.insert(r);
        }
        self.refresh_regions();
    }

    /// Re-cuts the regions whose population drifted from what their cells were cut for.
    fn recut_drifted(&mut self, store: &Store) {
        for r in 0..MAX_REGIONS {
            if self.recut.contains(r) {
                continue;
            }
            let Some(b) = self.built(r) else { continue };
            // Entries stand for members (a box in several cells counts several times).
            let e = self.entries(b);
            let drifted = e > 3 * b.grid_for + 256 || (b.grid.len() > 1 && 4 * e < b.grid_for);
            if drifted {
                self.recut_region(store, r);
            }
        }
    }

    /// The proxies held that touch `bounds`, for a populated new region: those not fully
    /// inside a region (the bitmap), and those of the regions `bounds` overlaps. The others
    /// lie inside a region that `bounds` does not reach.
    fn joiners(&self, store: &Store, bounds: &Aabb) -> Vec<u32> {
        let mut out = Vec::new();
        for (w, word) in self.not_inside.0.iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != 0 {
                let slot = (w << 6) | bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if store.is_alive(slot) && store.aabb_at(slot).overlaps(bounds) {
                    out.push(slot as u32);
                }
            }
        }
        for r in 0..MAX_REGIONS {
            let Some(region) = self.regions[r].as_ref() else {
                continue;
            };
            let Some(b) = region.built() else { continue };
            if region.bounds.overlaps(bounds) {
                out.extend(self.members_of(b).into_iter().filter(|&i| {
                    store.is_alive(i as usize) && store.aabb_at(i as usize).overlaps(bounds)
                }));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Cuts region `r` into cells anew for its current population; its proxies are placed
    /// again (in the same regions).
    fn recut_region(&mut self, store: &Store, r: usize) {
        let Some(b) = self.built(r) else { return };
        let members = self.members_of(b);
        let region_bounds = self.regions[r].as_ref().map(|x| x.bounds);
        let grid = ColumnGrid::choose(
            &self.params(store),
            members.len(),
            members.iter().map(|&i| store.aabb_at(i as usize)),
            None,
            region_bounds.as_ref(),
        );
        let Some(b) = self.regions[r].as_mut().and_then(Region::built_mut) else {
            return;
        };
        b.grid_for = members.len();
        if grid == b.grid {
            return;
        }
        let range = b.first_cell..b.first_cell + b.grid.len();
        let new_len = grid.len();
        b.grid = grid.clone();
        self.cells.replace(range.clone(), Built::cells(r, &grid));
        for x in self.regions.iter_mut().flatten() {
            if let Some(o) = x.built_mut() {
                if o.first_cell > range.start {
                    o.first_cell = o.first_cell + new_len - range.len();
                }
            }
        }
        self.recut.insert(r);
        self.recuts += 1;
        for slot in members {
            self.force(slot, false);
        }
    }

    /// Step 2 of the module docs: the changed proxies leave their cells and regions.
    fn leave(&mut self, store: &Store) {
        let changed = store.dirty().len() + self.forced_list.len();
        // When most proxies changed, nearly every cell has leavers: compacting them all
        // beats finding which.
        if 2 * changed >= store.len() {
            self.cells.mark_all_leavers();
        } else {
            let dirty = store.dirty().len();
            for k in 0..changed {
                let slot = if k < dirty {
                    store.dirty()[k] as usize
                } else {
                    let s = self.forced_list[k - dirty] as usize;
                    if store.is_dirty(s) {
                        continue;
                    }
                    s
                };
                // The memberships of changed proxies lie apart: prefetch a few ahead.
                if let Some(&ahead) = store.dirty().get(k + LEAVE_AHEAD) {
                    if let Some(m) = self.members.get(ahead as usize) {
                        prefetch(m);
                    }
                }
                if !store.was_in(slot) {
                    continue;
                }
                let m = self.members[slot];
                let mut buf = [RegionEntry::default(); 2];
                for e in m.entries(&self.extras, &mut buf) {
                    let r = usize::from(e.region);
                    let Some(b) = self.regions[r].as_ref().and_then(Region::built) else {
                        continue;
                    };
                    if !self.recut.contains(r) {
                        for (u, v) in e.range.cells() {
                            self.cells.mark_leaver(b.first_cell + b.grid.index(u, v));
                        }
                    }
                }
                if m.out {
                    self.cells.mark_leaver(OUT);
                }
            }
        }
        self.binning.slots.clear();
        self.binning.slots.extend_from_slice(store.dirty());
        self.binning.slots.extend(
            self.forced_list
                .iter()
                .filter(|&&s| !store.is_dirty(s as usize)),
        );
        let forced = &self.forced;
        self.cells
            .order_slots(&mut self.binning.slots, store.slot_count(), |s| {
                store.is_dirty(s) || forced[s] != 0
            });
    }

    /// Step 3 of the module docs: places `to_place`, binning their arrivals into the cells
    /// and recording their memberships; the chunks of slots run in parallel, each writing
    /// the memberships of its own range of slots. Proxies in several regions have their
    /// lists stored afterwards, in slot-list order.
    fn place(&mut self, store: &Store) {
        self.grow_slots(store);
        let ctx = Placing {
            store,
            regions: &self.regions,
            index: &self.index,
            extras: &self.extras,
            forced: &self.forced,
            not_inside: &self.not_inside.0,
            joinable: self.joinable,
            lookup_all: self.lookup_all,
            new_cells: self.new_cells,
        };
        let to_place = &self.binning.slots;
        let chunks = Cells::chunks_for(to_place, self.parallel);
        let states = split_slots(&mut self.members, to_place, chunks)
            .into_iter()
            .zip(split_slots(&mut self.sole_region, to_place, chunks))
            .map(|((base, members), (_, sole_region))| {
                let st = PlaceChunk {
                    members,
                    sole_region,
                    lists: Vec::new(),
                    fixups: Vec::new(),
                };
                (base, st)
            })
            .collect();
        let states = self
            .cells
            .bin(&mut self.binning, states, |slot, i, sink, st| {
                ctx.place(slot, i, sink, st)
            });
        // Store the lists of the proxies in several regions, release the lists of the others.
        let done: Vec<(Vec<RegionEntry>, Vec<Fixup>)> =
            states.into_iter().map(|st| (st.lists, st.fixups)).collect();
        for (lists, fixups) in &done {
            for f in fixups {
                if f.len < 2 {
                    if f.old != NO_EXTRA {
                        self.extras[f.old as usize].clear();
                        self.free_extras.push(f.old);
                    }
                    continue;
                }
                let list = &lists[f.start as usize..f.start as usize + usize::from(f.len)];
                // A proxy still in several regions keeps its old list's place.
                let i = if f.old != NO_EXTRA {
                    f.old
                } else if let Some(i) = self.free_extras.pop() {
                    i
                } else {
                    self.extras.push(Vec::new());
                    (self.extras.len() - 1) as u32
                };
                let extra = &mut self.extras[i as usize];
                extra.clear();
                extra.extend_from_slice(list);
                self.members[f.slot as usize].extra = i;
            }
        }
    }

    /// Step 4 of the module docs.
    fn prune(&mut self, store: &Store) {
        let stays = self.binning.stays();
        let view = MembershipView {
            members: &self.members,
            extras: &self.extras,
        };
        let rules = Rules {
            allows: &|x: u32, y: u32| store.allows_unless_both_fixed(x, y),
            lower_common: &|x: u32, y: u32, r: usize| view.share_region_below(x, y, r),
            stays,
            store,
        };
        self.cells.prune(self.parallel, &rules);
    }

    /// Step 4's end: the regions' reach, and the pair changes into `changes`; then the marks
    /// of this update are cleared (nothing reads them before the next).
    fn finish(&mut self, changes: &mut PairChanges) {
        // Each region's reach: the union of its cells' bounds (measured by touched cells).
        for region in self.regions.iter_mut().flatten() {
            if let Some(b) = region.built_mut() {
                b.reach = b
                    .cell_range()
                    .filter_map(|c| self.cells.get(c).bounds)
                    .reduce(|x, y| x.union(&y));
            }
        }
        self.cells.finish(self.parallel, &mut self.binning, changes);
        for &s in &self.forced_list {
            self.forced[s as usize] = 0;
        }
        self.forced_list.clear();
        self.recut = RegionSet::default();
        self.joinable = RegionSet::default();
        self.lookup_all = false;
        self.new_cells = false;
    }
}

/// Bins a proxy's `arrival` into the cells of region `r` (built as `b`) that it covers,
/// `first` being its lowest region and `flags` the tag's flags, and returns its entry there.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn bin_in(
    b: &Built,
    r: usize,
    first: usize,
    flags: u32,
    range: CellRange,
    mut arrival: Arrival,
    fixed: bool,
    sink: &mut BinSink<'_>,
) -> RegionEntry {
    arrival.tag = cells::tag(first, range.u0, range.v0) | flags;
    for (u, v) in range.cells() {
        sink.push(b.first_cell + b.grid.index(u, v), arrival, fixed);
    }
    RegionEntry {
        region: r as u8,
        range,
    }
}

/// A proxy's regions: one (the fast path), or a set.
#[derive(Clone, Copy, Debug)]
enum Regions {
    One(usize),
    Set(RegionSet),
}

/// What placing a proxy reads, shared by the threads that bin.
struct Placing<'a> {
    store: &'a Store,
    regions: &'a [Option<Region>],
    index: &'a RegionIndex,
    extras: &'a [Vec<RegionEntry>],
    forced: &'a [u8],
    not_inside: &'a [AtomicU64],
    joinable: RegionSet,
    lookup_all: bool,
    /// Every cell was replaced this update (a full layout): no proxy stays.
    new_cells: bool,
}

impl Placing<'_> {
    /// Places `slot`: bins its arrivals, writes its membership at index `i` of its chunk
    /// `st`, and says what became of it.
    #[inline]
    fn place(&self, slot: u32, i: usize, sink: &mut BinSink<'_>, st: &mut PlaceChunk) -> Stay {
        let s = slot as usize;
        let old = st.members[i];
        if !self.store.is_alive(s) {
            st.members[i] = Membership::default();
            st.sole_region[i] = NOT_SOLE;
            self.mark_not_inside(s, false);
            if old.extra != NO_EXTRA {
                st.fixups.push(Fixup {
                    slot,
                    start: 0,
                    len: 0,
                    old: old.extra,
                });
            }
            return Stay::No;
        }
        let aabb = self.store.aabb_at(s);
        let fixed = self.store.is_fixed(s);
        let (regions, inside) = self.regions_of(s, &old, st.sole_region[i]);
        let arrival = |axes: [usize; 3]| Arrival {
            enc: EncodedBox::new(aabb, axes),
            slot,
            tag: 0,
        };
        let built = |r: usize| self.regions[r].as_ref().and_then(Region::built);
        let mut stay = Stay::No;
        let mut m = Membership {
            inside,
            ..Membership::default()
        };
        match regions {
            Regions::One(r) => {
                match built(r) {
                    Some(b) => {
                        let range = b.grid.range(aabb);
                        m.first = if self.stays_put(s, &old, r, range) {
                            stay = Stay::kept(fixed);
                            old.first
                        } else {
                            bin_in(b, r, r, 0, range, arrival(b.grid.axes), fixed, sink)
                        };
                        m.count = 1;
                    }
                    None => {
                        sink.push(OUT, arrival(OUT_AXES), fixed);
                        m.out = true;
                    }
                }
                if old.extra != NO_EXTRA {
                    st.fixups.push(Fixup {
                        slot,
                        start: 0,
                        len: 0,
                        old: old.extra,
                    });
                }
            }
            Regions::Set(set) => {
                if self.stays_put_in(s, &old, set, aabb) {
                    // Same regions and cells: the membership, its list included, is kept.
                    st.members[i] = Membership { inside, ..old };
                    st.sole_region[i] = if old.count == 1 {
                        u16::from(old.first.region)
                    } else {
                        NOT_SOLE
                    };
                    self.mark_not_inside(s, !inside);
                    return Stay::kept(fixed);
                }
                let start = st.lists.len();
                let mut first = None;
                // Tags say when a box is in exactly two regions (see `cells::reporting_cell`).
                let two = if set.len() == 2 {
                    cells::TWO_REGIONS
                } else {
                    0
                };
                // Regions mostly share their axes: encode once per axes met.
                let mut last: Option<([usize; 3], Arrival)> = None;
                for r in set.iter() {
                    let Some(b) = built(r) else { continue };
                    let f = *first.get_or_insert(r);
                    let range = b.grid.range(aabb);
                    let a = match last {
                        Some((axes, a)) if axes == b.grid.axes => a,
                        _ => arrival(b.grid.axes),
                    };
                    last = Some((b.grid.axes, a));
                    st.lists.push(bin_in(b, r, f, two, range, a, fixed, sink));
                }
                let len = st.lists.len() - start;
                match len {
                    0 => {
                        sink.push(OUT, arrival(OUT_AXES), fixed);
                        m.out = true;
                    }
                    1 => {
                        m.first = st.lists[start];
                        st.lists.truncate(start);
                    }
                    _ => (m.first, m.second) = (st.lists[start], st.lists[start + 1]),
                }
                m.count = len as u16;
                if len >= 2 || old.extra != NO_EXTRA {
                    st.fixups.push(Fixup {
                        slot,
                        start: start as u32,
                        len: len as u16,
                        old: old.extra,
                    });
                }
            }
        }
        st.sole_region[i] = if m.count == 1 {
            u16::from(m.first.region)
        } else {
            NOT_SOLE
        };
        st.members[i] = m;
        self.mark_not_inside(s, !m.inside);
        stay
    }

    /// Whether slot `s`, whose membership was `old`, may keep it: it was held in cells that
    /// still exist, nothing forces it to be placed again, and it was not out of bounds.
    #[inline]
    fn may_stay(&self, s: usize, old: &Membership) -> bool {
        !self.new_cells && self.store.was_in(s) && self.forced[s] == 0 && !old.out
    }

    /// Whether slot `s`, now in region `r` alone over cells `range`, was in exactly those
    /// (and may stay): its cells then keep it, re-encoded in place, and it is not binned. Its
    /// tag, made of its region and first cell, is the same.
    #[inline]
    fn stays_put(&self, s: usize, old: &Membership, r: usize, range: CellRange) -> bool {
        self.may_stay(s, old)
            && old.count == 1
            && usize::from(old.first.region) == r
            && old.first.range == range
    }

    /// [`Placing::stays_put`] for a proxy now in the regions of `set`: whether it was in
    /// exactly those, over the same cells in each.
    fn stays_put_in(&self, s: usize, old: &Membership, set: RegionSet, aabb: &Aabb) -> bool {
        if !self.may_stay(s, old) || usize::from(old.count) != set.len() {
            return false;
        }
        let mut buf = [RegionEntry::default(); 2];
        let entries = old.entries(self.extras, &mut buf);
        set.iter().zip(entries).all(|(r, e)| {
            usize::from(e.region) == r
                && self.regions[r]
                    .as_ref()
                    .and_then(Region::built)
                    .is_some_and(|b| b.grid.range(aabb) == e.range)
        })
    }

    /// Sets slot `s`'s bit in the bitmap of proxies not fully inside a region (atomically:
    /// chunks share the words at their borders; a bit that does not change is not written).
    #[inline]
    fn mark_not_inside(&self, s: usize, on: bool) {
        let (word, bit) = (&self.not_inside[s >> 6], 1u64 << (s & 63));
        if (word.load(Ordering::Relaxed) & bit != 0) != on {
            if on {
                word.fetch_or(bit, Ordering::Relaxed);
            } else {
                word.fetch_and(!bit, Ordering::Relaxed);
            }
        }
    }

    /// The regions of slot `s` (alive) after this update, and whether its box lies inside one
    /// of them. A proxy that changed, or lost a region, is looked up: the regions its box
    /// touches (with PhysX's fast path: a proxy that was in one region, whose box is still
    /// inside it and touches none of its neighbours, is in that region alone). The others
    /// keep their regions, and join the populated new regions they touch.
    #[inline]
    fn regions_of(&self, s: usize, old: &Membership, sole: u16) -> (Regions, bool) {
        let aabb = self.store.aabb_at(s);
        let index = self.index;
        let lookup = self.lookup_all || self.store.is_dirty(s) || self.forced[s] & LOOK_UP != 0;
        if !lookup {
            let mut set = RegionSet::default();
            let mut buf = [RegionEntry::default(); 2];
            for e in old.entries(self.extras, &mut buf) {
                set.insert(usize::from(e.region));
            }
            if !self.joinable.is_empty() {
                for r in index.lookup(aabb).iter() {
                    if self.joinable.contains(r) {
                        set.insert(r);
                    }
                }
            }
            let inside = set
                .iter()
                .any(|r| index.bounds(r).is_some_and(|b| b.contains(aabb)));
            return (Regions::Set(set), inside);
        }
        if sole != NOT_SOLE {
            let r = usize::from(sole);
            if let Some(Region {
                state: State::Built(b),
                ..
            }) = self.regions[r].as_ref()
            {
                if b.core.is_some_and(|core| core.contains(aabb)) {
                    return (Regions::One(r), true);
                }
            }
        }
        let set = index.lookup(aabb);
        let inside = set
            .iter()
            .any(|r| index.bounds(r).is_some_and(|b| b.contains(aabb)));
        (Regions::Set(set), inside)
    }
}

/// The memberships, borrowed apart from the cells (for the parallel pruning).
struct MembershipView<'a> {
    members: &'a [Membership],
    extras: &'a [Vec<RegionEntry>],
}

impl MembershipView<'_> {
    /// Whether the slots `x` and `y` share a region below `r`.
    fn share_region_below(&self, x: u32, y: u32, r: usize) -> bool {
        let (mut bx, mut by) = ([RegionEntry::default(); 2], [RegionEntry::default(); 2]);
        let (ex, ey) = (
            self.members[x as usize].entries(self.extras, &mut bx),
            self.members[y as usize].entries(self.extras, &mut by),
        );
        let (mut i, mut j) = (0, 0);
        while i < ex.len() && j < ey.len() {
            let (a, b) = (usize::from(ex[i].region), usize::from(ey[j].region));
            if a >= r || b >= r {
                return false;
            }
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        false
    }
}

impl Engine for MbpEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Mbp
    }

    /// The out-of-bounds cell, then the cells of every region whose reach the box touches,
    /// each searched on the sweep axis; a proxy in several is visited in the lowest of these
    /// regions, and there in the first cell both cover.
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.cells
            .get(OUT)
            .scan(bounds, &mut |slot, _| visit(slot))?;
        let touched = self.reached(bounds);
        let view = MembershipView {
            members: &self.members,
            extras: &self.extras,
        };
        for r in touched.iter() {
            let Some(b) = self.built(r) else { continue };
            let range = b.grid.range(bounds);
            let query = cells::tag(0, range.u0, range.v0);
            for (u, v) in range.cells() {
                let here = cells::tag(0, u as u16, v as u16);
                let cell = self.cells.get(b.first_cell + b.grid.index(u, v));
                cell.scan(bounds, &mut |slot, tag| {
                    if cells::reporting_cell(here, cells::local(tag), query) != Report::Here {
                        return ControlFlow::Continue(());
                    }
                    let mut buf = [RegionEntry::default(); 2];
                    let lower = cells::tag_region(tag) < r
                        && view.members[slot as usize]
                            .entries(view.extras, &mut buf)
                            .iter()
                            .any(|e| {
                                usize::from(e.region) < r && touched.contains(usize::from(e.region))
                            });
                    if lower {
                        ControlFlow::Continue(())
                    } else {
                        visit(slot)
                    }
                })?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The regions the ray's segment touches, each searched cell by cell over the stretch of
    /// the ray inside the cell.
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
        self.cells
            .get(OUT)
            .scan(&segment, &mut |slot, _| visit(slot))?;
        let mut walk = RayWalk::new(ray, max_t);
        let members = &self.members;
        // A proxy in one cell of one region only is met there only.
        let single = |slot: u32| {
            let m = &members[slot as usize];
            m.count == 1 && m.first.range.count() == 1
        };
        for r in self.reached(&segment).iter() {
            let Some((b, bounds)) = self.built(r).and_then(|b| b.reach.map(|x| (b, x))) else {
                continue;
            };
            let mut clip = *world;
            for axis in 0..3 {
                clip.min[axis] = clip.min[axis].max(bounds.min[axis]);
                clip.max[axis] = clip.max[axis].min(bounds.max[axis]);
            }
            if !(0..3).all(|k| clip.min[k] <= clip.max[k]) {
                continue;
            }
            let Some(stretch) = segment_bounds(ray, max_t, &clip) else {
                continue;
            };
            walk.cells(
                self.cells.slice(b.cell_range()),
                &b.grid,
                b.grid.range(&pad_stretch(&stretch)),
                &clip,
                single,
                visit,
            )?;
        }
        ControlFlow::Continue(())
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        if !store.dirty().is_empty() || self.region_edits || self.relayout {
            self.grow_slots(store);
            if self.needs_full_layout(store) {
                self.full_layout(store);
            } else {
                self.apply_region_changes(store);
                self.recut_drifted(store);
                self.leave(store);
            }
            self.place(store);
            self.prune(store);
        }
        self.finish(changes);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.cells.pair_lists()
    }

    /// Moves the regions with the boxes (as PhysX's `MBP::shiftOrigin` does); the next
    /// update lays everything out again.
    fn shift_origin(&mut self, shift: [f32; 3]) {
        // A region reaching past the float range extends to infinity: still all of it.
        let offset = shift.map(|v| -v);
        for r in self.regions.iter_mut().flatten() {
            r.bounds = r.bounds.translated(offset);
        }
        // Every proxy changed: queries test them all directly until the next update, which
        // lays everything out again.
        self.relayout = true;
    }

    fn stats(&self, _store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self.cells.memory_bytes()
            + self.members.capacity() * size_of::<Membership>()
            + self
                .extras
                .iter()
                .map(|e| e.capacity() * size_of::<RegionEntry>())
                .sum::<usize>()
            + self.not_inside.0.capacity() * 8
            + self.forced.capacity();
        let regions = self
            .regions
            .iter()
            .flatten()
            .filter(|r| r.built().is_some())
            .count();
        stats.counters.extend([
            ("regions", regions as u64),
            ("cells", self.cells.len() as u64 - 1),
            (
                "entries",
                (1..self.cells.len())
                    .map(|c| self.cells.get(c).len() as u64)
                    .sum(),
            ),
            ("out of bounds", self.cells.get(OUT).len() as u64),
            ("sweep axis", self.sweep as u64),
            ("layouts", self.layouts),
            ("region recuts", self.recuts),
        ]);
    }
}
