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
//!
//! The files: `membership` (where each proxy is held), `table` (the regions and their cells),
//! `edits` (regions added and removed), `layout` (full layouts and re-cuts), `place` (leaving
//! and placing), `query` (the candidates of queries, the figures of regions), `engine` (the
//! steps of an update, the [`Engine`](crate::engine::Engine) impl and the stats); `regions`
//! holds the region ids, set-ups, sets and index; `check` checks the invariants of it all.

mod check;
mod edits;
mod engine;
mod layout;
mod membership;
mod place;
mod query;
mod regions;
mod table;

use crate::abp::AbpSettings;
use crate::cells::{self, Binning, Cell, Cells};
use crate::engine::Driver;
use crate::{Aabb, Config, Error, ProxyId};
use membership::{Bits, Membership, RegionEntry};
pub use regions::{regions_from_bounds, MbpSettings, RegionId, RegionInfo, MAX_REGIONS};
use regions::{RegionIndex, RegionSet};
use table::Region;

/// The cell of out-of-bounds proxies: held for queries, never pruned.
const OUT: usize = 0;
/// Its axes (any will do).
const OUT_AXES: [usize; 3] = [0, 1, 2];

/// How [`Mbp`] sizes what it derives: the regions it lays out when none was added, and the
/// cells it cuts every region into.
///
/// ```
/// use broadphase::{Config, Mbp, MbpTuning};
/// let mut tuning = MbpTuning::default();
/// tuning.boxes_per_region = 4096;
/// let mbp = Mbp::with_tuning(Config::default(), tuning)?;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
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
    /// The slots to place this update (each once, in increasing order), and what became of
    /// each.
    to_place: Vec<u32>,
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
    /// do (inserted or changed, or looked up again when a region they were in is removed),
    /// as in PhysX. The first region added ends the derived regions: from then on, proxies
    /// outside every added region are out of bounds.
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

    /// The two axes the regions are laid out in, as a picture of them is drawn (horizontal,
    /// vertical): the two horizontal axes of the up axis, or, with derived regions, the two
    /// axes their cells cut. `bplab regions` draws [`regions`](Self::regions) in them.
    #[must_use]
    pub fn plane(&self) -> [usize; 2] {
        self.engine.plane()
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
            to_place: Vec::new(),
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
}
