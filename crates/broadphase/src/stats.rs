//! Figures about a broad phase after its last update: those every algorithm has ([`Stats`]) and
//! each algorithm's own ([`Figures`]), as typed fields.

/// Figures about a broad phase after its last update.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, Figures, ProxyDesc, Sap};
/// let mut bp = Sap::new(Config::default());
/// bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// bp.update()?;
/// let stats = bp.stats();
/// assert_eq!(stats.proxies, 1);
/// let Figures::Sap(sap) = stats.figures else { unreachable!() };
/// assert_eq!(sap.created, 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Live proxies.
    pub proxies: usize,
    /// Live fixed proxies.
    pub fixed: usize,
    /// Live dynamic proxies.
    pub dynamic: usize,
    /// Persistent pairs.
    pub pairs: usize,
    /// Pairs created by the last update.
    pub created: usize,
    /// Pairs deleted by the last update.
    pub deleted: usize,
    /// Proxies inserted, moved, re-described or removed before the last update.
    pub changed: usize,
    /// Candidate box-box tests the last update made.
    pub tests: u64,
    /// Heap bytes held (approximately: the capacity of every buffer).
    pub memory_bytes: usize,
    /// The algorithm's own figures.
    pub figures: Figures,
}

/// Each algorithm's own figures ([`Stats::figures`]).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub enum Figures {
    /// An algorithm with none ([`BruteForce`](crate::BruteForce)).
    #[default]
    None,
    /// [`Abp`](crate::Abp)'s.
    Abp(AbpFigures),
    /// [`Sap`](crate::Sap)'s.
    Sap(SapFigures),
    /// [`Mbp`](crate::Mbp)'s.
    Mbp(MbpFigures),
    /// [`QuadTree`](crate::QuadTree)'s.
    QuadTree(QuadTreeFigures),
    /// [`Grid`](crate::Grid)'s.
    Grid(GridFigures),
    /// [`Auto`](crate::Auto)'s: what it runs on, why, and that algorithm's figures.
    Auto(crate::AutoFigures),
    /// An engine written outside this crate: named counters.
    Other(Vec<(&'static str, u64)>),
}

impl Figures {
    /// Every figure with its name, for tables (`bplab`): one row per field.
    ///
    /// ```
    /// use broadphase::{Figures, GridFigures};
    /// let figures = Figures::Grid(GridFigures::default());
    /// assert!(figures.counters().iter().any(|&(name, _)| name == "collision cells"));
    /// ```
    #[must_use]
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        match self {
            Figures::None => Vec::new(),
            Figures::Abp(f) => vec![
                ("columns", f.columns),
                ("sweep axis", f.sweep_axis),
                ("entries", f.entries),
                ("outside", f.outside),
                ("layouts", f.layouts),
            ],
            Figures::Sap(f) => vec![
                ("swaps x", f.swaps[0]),
                ("swaps y", f.swaps[1]),
                ("swaps z", f.swaps[2]),
                ("asleep crossed", f.asleep_crossed),
                ("boxes moved", f.moved),
                ("boxes created", f.created),
                ("boxes removed", f.removed),
                ("boxes re-inserted", f.reinserted),
                ("boxes woken", f.woken),
                ("boxes slept", f.slept),
                ("box pruning tests", f.prune_tests),
                ("awake", f.awake),
                ("asleep", f.asleep),
                ("stale asleep entries", f.stale_asleep),
            ],
            Figures::Mbp(f) => vec![
                ("regions", f.regions),
                ("cells", f.cells),
                ("entries", f.entries),
                ("out of bounds", f.out_of_bounds),
                ("sweep axis", f.sweep_axis),
                ("layouts", f.layouts),
                ("region recuts", f.region_recuts),
            ],
            Figures::QuadTree(f) => vec![
                ("trees", f.trees),
                ("nodes", f.nodes),
                ("height", f.height),
                ("fill percent", f.fill_percent),
                ("partial rebuilds", f.partial_rebuilds),
                ("partial rebuild units", f.partial_rebuild_units),
                ("full rebuilds", f.full_rebuilds),
                ("fast rebuilds", f.fast_rebuilds),
            ],
            Figures::Grid(f) => vec![
                ("brute-force pairs", f.brute_force_pairs),
                ("cell ids", f.cell_ids),
                ("home cells", f.home_cells),
                ("phantom cells", f.phantom_cells),
                ("collision cells", f.collision_cells),
                ("collision cells tested", f.collision_cells_tested),
                ("radix passes", f.radix_passes),
                ("radix passes skipped", f.radix_passes_skipped),
                ("candidate pairs tested", f.candidate_pairs_tested),
                ("pairs found", f.pairs_found),
                ("levels", f.levels),
                ("buckets", f.buckets),
                ("layouts", f.layouts),
            ],
            Figures::Auto(f) => {
                let mut counters = vec![
                    ("switches", f.switches),
                    ("updates on this algorithm", f.updates_running),
                ];
                counters.extend(f.inner.counters());
                counters
            }
            Figures::Other(counters) => counters.clone(),
        }
    }
}

/// [`Abp`](crate::Abp)'s figures: its automatic columns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AbpFigures {
    /// Columns the boxes are sorted in.
    pub columns: u64,
    /// The axis the columns sweep (0, 1 or 2).
    pub sweep_axis: u64,
    /// Entries in all columns (a box counts once per column it covers).
    pub entries: u64,
    /// Boxes whose centre lies outside the grid (they sit in border columns).
    pub outside: u64,
    /// Grids chosen so far (each one re-bins every box).
    pub layouts: u64,
}

/// [`Sap`](crate::Sap)'s figures: the last update's sweeps and its resting boxes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SapFigures {
    /// Endpoint swaps on each axis in the last update.
    pub swaps: [u64; 3],
    /// Resting (asleep) endpoints that moving endpoints crossed, three axes together.
    pub asleep_crossed: u64,
    /// Boxes moved in the last update.
    pub moved: u64,
    /// Boxes created in the last update.
    pub created: u64,
    /// Boxes removed in the last update.
    pub removed: u64,
    /// Boxes that moved so far they were re-inserted (paired by box pruning).
    pub reinserted: u64,
    /// Resting boxes that moved and woke.
    pub woken: u64,
    /// Boxes that went to sleep at the end of the last update.
    pub slept: u64,
    /// Box-pruning tests of the new and re-inserted boxes.
    pub prune_tests: u64,
    /// Boxes in the awake arrays.
    pub awake: u64,
    /// Boxes in the asleep lists.
    pub asleep: u64,
    /// Stale entries of the asleep lists (skipped until compacted).
    pub stale_asleep: u64,
}

/// [`Mbp`](crate::Mbp)'s figures: its regions and their cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MbpFigures {
    /// Regions built.
    pub regions: u64,
    /// Cells of all regions.
    pub cells: u64,
    /// Entries in all cells (a box counts once per cell it covers).
    pub entries: u64,
    /// Proxies outside every region.
    pub out_of_bounds: u64,
    /// The axis the cells sweep (0, 1 or 2).
    pub sweep_axis: u64,
    /// Full layouts so far.
    pub layouts: u64,
    /// Regions cut into cells again so far.
    pub region_recuts: u64,
}

/// [`QuadTree`](crate::QuadTree)'s figures: its trees and their maintenance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct QuadTreeFigures {
    /// Trees (two per layer group).
    pub trees: u64,
    /// Nodes in use in all trees.
    pub nodes: u64,
    /// Levels of the tallest tree as its root records them: the measured depth
    /// ([`QuadTree::depth`](crate::QuadTree::depth)) after a build, and never less; after
    /// removals, possibly more until the next rebuild (read without walking the trees).
    pub height: u64,
    /// Lanes in use, as a percentage of all lanes of the nodes in use.
    pub fill_percent: u64,
    /// Jolt's partial rebuilds of a tree's changed top so far.
    pub partial_rebuilds: u64,
    /// Subtrees those rebuilds rebuilt.
    pub partial_rebuild_units: u64,
    /// Rebuilds of every tree from scratch ([`QuadTree::optimize`](crate::QuadTree::optimize)).
    pub full_rebuilds: u64,
    /// Rebuilds of a tree whose walks cost too much against its last build.
    pub fast_rebuilds: u64,
}

/// [`Grid`](crate::Grid)'s figures: the GPU Gems 3 lab's, for the last update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GridFigures {
    /// n(n-1)/2: what brute force would test.
    pub brute_force_pairs: u64,
    /// Cell ids written (home and phantom).
    pub cell_ids: u64,
    /// Home cells written (one per box per level it lives on).
    pub home_cells: u64,
    /// Phantom cells written (the other cells a box overlaps).
    pub phantom_cells: u64,
    /// Collision cells: cells holding two boxes or more.
    pub collision_cells: u64,
    /// Collision cells holding a changed box, the only ones tested.
    pub collision_cells_tested: u64,
    /// Radix passes over the cell ids (the binning into buckets is the first).
    pub radix_passes: u64,
    /// Radix passes skipped because every key had the same digit.
    pub radix_passes_skipped: u64,
    /// Candidate pairs tested.
    pub candidate_pairs_tested: u64,
    /// Overlapping pairs found.
    pub pairs_found: u64,
    /// Levels with boxes (oversized boxes live on coarser levels).
    pub levels: u64,
    /// Buckets the cells are binned into.
    pub buckets: u64,
    /// Layouts chosen so far.
    pub layouts: u64,
}
