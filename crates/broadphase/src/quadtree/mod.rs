//! `QuadTree`: Jolt's broad phase (a 4-wide AABB tree per broad-phase layer) without its
//! failure modes, and with exact answers.
//!
//! The structure follows Jolt's `BroadPhaseQuadTree`: nodes of four children whose boxes are
//! tested four at a time ([`node`]), one tree per broad-phase layer (by default two: fixed and
//! dynamic proxies), batches built by SAH ([`build`]), `optimize` for a full rebuild, stats and
//! a Graphviz dump ([`dump`]). What differs, and why:
//!
//! - **Single insertions do not degenerate.** Jolt links every single body at the root; 100,000
//!   single insertions make a chain hundreds of levels deep. Here insertions waiting for the
//!   next update are built together as a batch, and a batch (or a single proxy) descends into
//!   the tree R-tree style, splitting full nodes up to the root ([`insert`]): leaves stay about
//!   `log4 n` deep whatever the order, and a tree that grew by a quarter since its last build
//!   is rebuilt. There is no node pool to run out of: the arena grows and shrinks, and an
//!   empty tree holds no memory.
//! - **No widening, no stale answers.** Jolt widens the path of a moved body lock-free and lets
//!   queries see the widened (stale) boxes until the next rebuild. Here a move is recorded by
//!   the shared store until `update`, which writes the proxy's lane and refits the changed
//!   paths exactly ([`rebuild`]); between updates, queries skip moved proxies in the trees and
//!   test them with their current boxes instead. So queries are exact at every moment.
//! - **Kept good by what it costs.** Refits keep boxes exact but let nodes stretch as proxies
//!   drift apart (with everything drifting, the walk costs 4x more after 100 frames). Jolt
//!   rebuilds the changed top of a tree to depth 5 at every update, which leaves the stretched
//!   nodes below untouched (here a setting, off by default: see the README). Each tree here
//!   counts the lane tests its walks cost beyond what they cost right after its last build,
//!   and is rebuilt (a Morton-ordered linear build) once that excess passes the price of a
//!   rebuild: counts, not clocks, so the pair order is deterministic.
//! - **Pairs from what changed.** When much of a tree changed, each update walks each pair of
//!   trees that may pair (dynamic against itself, dynamic against fixed) simultaneously,
//!   following only lanes that lead to a changed proxy ([`collide`]); when little did, each
//!   changed proxy queries the trees instead. Either way each pair is met once, without a hash
//!   set, and pairs of two unchanged proxies are kept untested. The pairs found are diffed as
//!   sorted keys against the last update's.
//!
//! # Concurrency
//!
//! Queries take `&self` and touch nothing mutable: any number of threads may query at once while
//! no mutation runs (the borrow checker enforces it), and [`QuadTree::probe_aabb`] returns its
//! work counts instead of storing them, so it is as `Sync` as the rest. `update` spreads the
//! pair walks over rayon's threads (feature `parallel`) in steps fixed by the trees alone, so
//! events and pair order do not depend on the number of threads.
//!
//! Jolt lets other threads work while the broad phase changes; so does this, in three ways that
//! keep every answer exact and every event deterministic:
//!
//! - **Queries during updates**: [`Driver::snapshot`] gives a [`Snapshot`] that other threads
//!   query while the owner moves proxies and runs updates. It answers for every proxy live
//!   when it was taken, with the box it had then (taken right after `update`: the boxes of that
//!   update). Jolt keeps two roots so that queries read the old tree while the new one is
//!   built; here each tree is behind an `Arc`, a snapshot holds the trees of its moment, and an
//!   update copies a tree before writing it only while a snapshot still holds it. Taking one
//!   is a few `Arc` clones, and the first update after it copies the trees it writes (about 1
//!   ms at 100,000 proxies: `docs/MEASUREMENTS.md`).
//! - **Streaming batches** (Jolt's `AddBodiesPrepare`, `AddBodiesFinalize`, `AddBodiesAbort`):
//!   [`PreparedBatch::new`] checks boxes and builds their subtrees on any thread, with nothing
//!   of the broad phase; [`QuadTree::commit`] gives their ids as `insert_batch` would, and the
//!   next update links the subtrees in instead of building them. Dropping the batch aborts.
//! - **Background rebuilds** ([`QuadTreeSettings::background_rebuild`], off by default): when a
//!   tree's cost says a rebuild pays, the update refits it instead and a thread builds the
//!   fresh tree from it (shared, not copied); four updates later (a count, not a clock) the
//!   fresh tree catches up with the proxies changed since and replaces the running one, with
//!   the events a rebuild in place would have given. Jolt swaps its two roots at
//!   `UpdateFinalize` the same way; `bplab concurrency` compares both.
mod background;
mod batch;
mod build;
mod check;
mod collide;
mod dump;
mod insert;
mod node;
mod rebuild;
mod snapshot;
mod traverse;
mod tree;

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::engine::{Driver, Engine, PairChanges, PairList, Store};
use crate::pairs::{diff_pairs_in_place, key_slots};
use crate::query::Ray;
use crate::radix::KeySorter;
use crate::slack;
use crate::{
    Aabb, Algorithm, Config, Error, Figures, Layer, LayerMask, ProxyDesc, ProxyId, QuadTreeFigures,
    Stats,
};
use background::{Rebuild, Rebuilds};
use batch::Committed;
pub use batch::PreparedBatch;
use build::{Builder, Unit};
use collide::{query_pairs, split_walk, Step, Walk};
pub use dump::{ChildDump, NodeDump, TreeDump};
use node::{LANES, NONE};
use rebuild::Quality;
use snapshot::Held;
pub use snapshot::Snapshot;
pub use traverse::QueryStats;
use tree::{Loc, Tree};

/// Knobs of a [`QuadTree`].
///
/// ```
/// use broadphase::{Config, Layer, LayerMask, QuadTree, QuadTreeSettings};
/// // Debris on layer 3 gets trees of its own, apart from everything else.
/// let mut settings = QuadTreeSettings::default();
/// settings.layer_groups = vec![LayerMask::of(Layer(3)), LayerMask::ALL];
/// let tree = QuadTree::with_settings(Config::default(), settings)?;
/// assert_eq!(tree.tree_count(), 4);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct QuadTreeSettings {
    /// Broad-phase layers (Jolt's `BroadPhaseLayer`): each group of collision layers gets two
    /// trees, one for fixed and one for dynamic proxies. A layer belongs to the first group that
    /// contains it, or to the first group if none does. Trees of groups whose layers never
    /// collide are never walked against each other, and queries skip the trees of groups
    /// outside their mask. Default: one group of all layers (two trees). At most 32 groups.
    pub layer_groups: Vec<LayerMask>,
    /// Jolt's partial rebuild: when much of a tree changed, its nodes above this depth are
    /// rebuilt at each update from the subtrees below them (Jolt's `cMaxDepthMarkChanged`, 5).
    /// 0, the default, turns it off: measured, it buys nothing here (see the README), since
    /// refits keep every box exact and degraded trees are rebuilt whole.
    pub rebuild_depth: u32,
    /// What rebuilding a tree from scratch costs, per proxy, counted in lane tests of the pair
    /// walk (default 64, measured). Refits keep boxes exact but let nodes stretch as proxies
    /// drift apart; once a tree's walks have cost that much more, in all, than they did right
    /// after its last build, the next update rebuilds it: the rebuild then pays for itself.
    /// 0 rebuilds at the first extra test; `f64::INFINITY` never rebuilds.
    pub rebuild_cost: f64,
    /// Rebuild trees of 4,096 proxies or more on another thread (Jolt's background build):
    /// the update that would rebuild a tree refits it instead and starts the build, and the
    /// fresh tree catches up with the changes since and takes over four updates later (a
    /// count, so on the same update on every machine). The events are those of a rebuild in
    /// place; the owner's update pays for the catch-up instead of the build, which saves little
    /// when every proxy moves (`docs/MEASUREMENTS.md`). Default `false`.
    pub background_rebuild: bool,
}

impl Default for QuadTreeSettings {
    fn default() -> Self {
        Self {
            layer_groups: vec![LayerMask::ALL],
            rebuild_depth: 0,
            rebuild_cost: 64.0,
            background_rebuild: false,
        }
    }
}

impl QuadTreeSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when there is no layer group or more than 32, or when
    /// `rebuild_cost` is NaN or negative.
    pub fn validate(&self) -> Result<(), Error> {
        let n = self.layer_groups.len();
        if n == 0 || n > 32 {
            return Err(Error::InvalidParameter {
                name: "layer_groups",
                value: n as f64,
                expected: "between 1 and 32 groups",
            });
        }
        if self.rebuild_cost.is_nan() || self.rebuild_cost < 0.0 {
            return Err(Error::InvalidParameter {
                name: "rebuild_cost",
                value: self.rebuild_cost,
                expected: "a value >= 0 (may be infinite)",
            });
        }
        Ok(())
    }
}

/// A slot in no tree.
const NO_TREE: u8 = u8::MAX;

/// How an update brings a tree up to date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Few proxies changed: each marks its path, and only marked nodes are refit.
    Paths,
    /// Much of the tree changed: every node is refit, in one pass.
    Bulk,
    /// Much of the tree changed and refits have let it grow loose: rebuilt from scratch.
    Rebuild,
}

/// How many changed proxies ahead a bulk update starts loading the node it will write.
const MOVE_AHEAD: usize = 16;

/// Below this many steps a pair walk is not worth splitting over threads.
const PARALLEL_STEPS: usize = 64;

/// Jolt's broad phase, made exact: a 4-wide AABB tree per broad-phase layer (fixed and dynamic
/// by default), pairs found by walking the trees against each other from the changed proxies.
/// Choose it for queries (rays, boxes, nearest) on large worlds, and for worlds of many fixed
/// proxies or loaded in batches.
///
/// # How it works
///
/// - Nodes hold four children (nodes or proxies) with their boxes stored lane by lane, so one
///   SIMD pass tests a box against all four; 128 bytes a node, on a cache line.
/// - Batches are built by binned SAH. Insertions waiting for an update are one batch, so
///   inserting one proxy at a time and then updating gives the batch's tree (Jolt appends
///   each to the root: a chain hundreds of levels deep). A small batch, or a proxy inserted
///   alone, descends to where its box grows the tree least and splits full nodes up to the
///   root (R-tree style), so leaves stay about `log4 n` deep whatever the order.
/// - Moves are refit exactly at `update`: no widened or stale box ever answers a query or
///   makes a pair. Refits let nodes stretch as proxies drift apart; each tree counts what its
///   walks cost beyond a fresh tree's, and rebuilds itself once that excess passes the price
///   of a rebuild ([`QuadTreeSettings::rebuild_cost`]), or once it grew by a quarter.
/// - Pairs: when much of a tree changed, tree pairs are walked simultaneously, following only
///   lanes that lead to a changed proxy; when little did, each changed proxy queries the
///   trees. Either way every pair is met once, and pairs of two unchanged proxies are kept
///   untested.
/// - Queries walk the trees (rays through the nodes they enter), and test the proxies moved
///   since the last update apart, with their current boxes.
/// - [`QuadTree::stats`](crate::BroadPhase::stats) reports height, nodes, fill and rebuilds;
///   [`QuadTree::probe_aabb`] the nodes and proxies one query visits;
///   [`QuadTree::dump`] gives the trees as data (`bplab tree` draws them).
///
/// Queries may run from many threads at once (`&self`, `Sync`) while no mutation runs, and
/// from any thread at any time on a [`Snapshot`] ([`Driver::snapshot`], cheap here: the trees
/// are shared). A level section can be prepared on another thread as a [`PreparedBatch`] and
/// committed in one call ([`QuadTree::commit`]).
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, LayerMask, Pair, ProxyDesc, QuadTree};
/// use std::ops::ControlFlow;
///
/// let mut bp = QuadTree::new(Config::default());
/// let ground = bp.insert(Aabb::new([-50.0, -1.0, -50.0], [50.0, 0.0, 50.0]), ProxyDesc::fixed())?;
/// let ball = bp.insert(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
///
/// // Queries walk the trees and count their work.
/// let mut hits = Vec::new();
/// let work = bp.probe_aabb(Aabb::new([0.5; 3], [2.0; 3]), LayerMask::ALL, &mut |id| {
///     hits.push(id);
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!(hits, [ball]);
/// assert!(work.nodes_visited >= 1);
///
/// bp.set_aabb(ball, Aabb::new([0.0, 2.0, 0.0], [1.0, 3.0, 1.0]))?;
/// assert_eq!(bp.update()?.deleted(), &[Pair::new(ground, ball)]);
/// assert_eq!(bp.dump()[0].proxies, 1); // the fixed tree holds the ground
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type QuadTree = Driver<QuadTreeEngine>;

/// [`QuadTree`]'s engine: the trees (two per layer group), where each proxy sits in them, and
/// the persistent pairs as sorted keys.
#[derive(Clone, Debug)]
pub struct QuadTreeEngine {
    settings: QuadTreeSettings,
    /// Two trees per layer group: `2 * group` fixed, `2 * group + 1` dynamic. Shared with
    /// the [`Snapshot`]s taken since their last change: an update copies a shared tree before
    /// it writes it (`Arc::make_mut`), so snapshots keep the trees they were taken with.
    trees: Vec<Arc<Tree>>,
    /// The group of each collision layer.
    group_of: [u8; Layer::COUNT],
    /// The layers of each group.
    group_layers: Vec<LayerMask>,
    /// Per slot: where its proxy sits in its tree.
    locs: Vec<Loc>,
    /// Per slot: the tree holding its proxy, or [`NO_TREE`].
    home: Vec<u8>,
    /// Per slot: the id and layer of the proxy the trees hold there, as of the last update
    /// (what a [`Snapshot`] names the trees' slots by). Shared with snapshots like the trees.
    held: Arc<Vec<Held>>,
    /// Per tree: slots to insert this update (scratch).
    pending: Vec<Vec<u32>>,
    /// Committed [`PreparedBatch`]es, whose subtrees the next update links in.
    arrivals: Vec<Committed>,
    builder: Builder,
    units: Vec<Unit>,
    order: Vec<u32>,
    opened: Vec<(u32, u32)>,
    found: Vec<u64>,
    /// Every persistent pair's key, sorted: what each update's pairs are diffed against (in
    /// place; the created and deleted keys go straight into the driver's lists).
    keys: Vec<u64>,
    key_sorter: KeySorter,
    parallel: bool,
    /// Per tree: how its walk's cost compares with its cost after its last build.
    quality: Vec<Quality>,
    partial_rebuilds: u64,
    partial_units: u64,
    full_rebuilds: u64,
    fast_rebuilds: u64,
    /// Updates run (the clock of background rebuilds).
    updates: u64,
    /// Trees rebuilding on other threads.
    rebuilds: Rebuilds,
    /// Trees whose update this time starts a background rebuild (scratch).
    starting: Vec<usize>,
    /// Set when the system refused a thread: rebuilds run in place from then on.
    no_threads: bool,
}

impl QuadTree {
    /// An empty broad phase with the default [`QuadTreeSettings`].
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(
            &config,
            QuadTreeEngine::new(&config, QuadTreeSettings::default()),
        )
    }

    /// An empty broad phase with chosen settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the settings are invalid ([`QuadTreeSettings::validate`]).
    pub fn with_settings(config: Config, settings: QuadTreeSettings) -> Result<Self, Error> {
        settings.validate()?;
        Ok(Driver::with_engine(
            &config,
            QuadTreeEngine::new(&config, settings),
        ))
    }

    /// The number of trees (two per layer group).
    #[must_use]
    pub fn tree_count(&self) -> usize {
        self.engine.tree_count()
    }

    /// The deepest level of any tree (a tree whose root holds proxies only has depth 1).
    #[must_use]
    pub fn depth(&self) -> usize {
        self.engine.depth()
    }

    /// Nodes in use in all trees.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.engine.node_count()
    }

    /// Rebuilds every tree from scratch by SAH (Jolt's `OptimizeBroadPhase`). Updates keep
    /// the trees good without it; it helps after many proxies have travelled far, and costs
    /// about what inserting everything as one batch costs. Changes not yet brought in by an
    /// update stay pending: the next update handles them as usual.
    pub fn optimize(&mut self) {
        self.engine.optimize(&self.store);
    }

    /// [`PreparedBatch::new`] with this broad phase's settings (it needs nothing else of it:
    /// threads that cannot borrow the broad phase call `PreparedBatch::new` with a copy).
    ///
    /// # Errors
    /// As [`PreparedBatch::new`].
    pub fn prepare_batch(&self, items: Vec<(Aabb, ProxyDesc)>) -> Result<PreparedBatch, Error> {
        PreparedBatch::new(&self.engine.settings, items)
    }

    /// The settings it runs with.
    #[must_use]
    pub fn settings(&self) -> &QuadTreeSettings {
        &self.engine.settings
    }

    /// Inserts a prepared batch: exactly
    /// [`insert_batch`](crate::BroadPhase::insert_batch) of its items (ids given in item
    /// order, the same events at the next update), except that the next update links the
    /// batch's subtrees in instead of building them. A batch prepared for other layer groups
    /// is inserted all the same, its subtrees dropped. A proxy of the batch moved, re-described
    /// or removed before the next update makes that update build its part as usual.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, Config, ProxyDesc, QuadTree};
    /// let items = vec![
    ///     (Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic()),
    ///     (Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::fixed()),
    /// ];
    /// let (mut a, mut b) = (QuadTree::new(Config::default()), QuadTree::new(Config::default()));
    /// let batch = a.prepare_batch(items.clone())?;
    /// assert_eq!(a.commit(batch)?, b.insert_batch(&items)?);
    /// assert_eq!(a.update()?, b.update()?);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] (or a world-bounds error): nothing is inserted.
    pub fn commit(&mut self, batch: PreparedBatch) -> Result<Vec<ProxyId>, Error> {
        let ids = self.store.insert_batch(batch.items())?;
        let slots = ids.iter().map(|id| id.index()).collect();
        let committed = batch.committed(&self.engine.settings.layer_groups, slots);
        self.engine.arrivals.extend(committed);
        Ok(ids)
    }

    /// [`BroadPhase::query_aabb`](crate::BroadPhase::query_aabb), counting the work: nodes
    /// opened, proxies reached, hits. The answer is the same as `query_aabb`'s (exact, changes
    /// pending included).
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`].
    pub fn probe_aabb(
        &self,
        aabb: Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<QueryStats, Error> {
        aabb.validate()?;
        Ok(self.engine.probe_aabb(&self.store, &aabb, mask, visit).0)
    }
}

impl QuadTreeEngine {
    /// An engine holding nothing, with settings already checked
    /// ([`QuadTreeSettings::validate`]).
    #[must_use]
    pub fn new(config: &Config, settings: QuadTreeSettings) -> Self {
        let groups = settings.layer_groups.len();
        let group_of = group_of(&settings.layer_groups);
        let mut group_layers = vec![LayerMask::NONE; groups];
        for layer in 0..Layer::COUNT as u8 {
            let g = usize::from(group_of[usize::from(layer)]);
            group_layers[g] = group_layers[g].with(Layer(layer));
        }
        Self {
            trees: (0..2 * groups).map(|_| Arc::new(Tree::new())).collect(),
            group_of,
            group_layers,
            locs: Vec::new(),
            home: Vec::new(),
            held: Arc::new(Vec::new()),
            pending: vec![Vec::new(); 2 * groups],
            arrivals: Vec::new(),
            builder: Builder::default(),
            units: Vec::new(),
            order: Vec::new(),
            opened: Vec::new(),
            found: Vec::new(),
            keys: Vec::new(),
            key_sorter: KeySorter::default(),
            parallel: config.use_threads(),
            quality: vec![Quality::default(); 2 * groups],
            partial_rebuilds: 0,
            partial_units: 0,
            full_rebuilds: 0,
            fast_rebuilds: 0,
            updates: 0,
            rebuilds: Rebuilds::default(),
            starting: Vec::new(),
            no_threads: false,
            settings,
        }
    }

    /// The number of trees (two per layer group).
    fn tree_count(&self) -> usize {
        self.trees.len()
    }

    /// The tree a proxy so described belongs in.
    #[inline]
    fn tree_for(&self, desc: &ProxyDesc) -> u8 {
        tree_for(&self.group_of, desc)
    }

    /// The deepest level of any tree (a tree whose root holds proxies only has depth 1).
    fn depth(&self) -> usize {
        self.trees.iter().map(|t| t.depth()).max().unwrap_or(0)
    }

    /// Nodes in use in all trees.
    fn node_count(&self) -> usize {
        self.trees.iter().map(|t| t.node_count()).sum()
    }

    /// [`QuadTree::optimize`].
    fn optimize(&mut self, store: &Store) {
        let mut stack = std::mem::take(&mut self.order);
        for t in 0..self.trees.len() {
            if self.trees[t].root == NONE {
                continue;
            }
            let tree = Arc::make_mut(&mut self.trees[t]);
            tree.rebuild_all(
                store,
                &mut self.locs,
                &mut self.builder,
                &mut self.units,
                &[],
                &mut stack,
            );
            // The fresh nodes carry the dirty bits of proxies moved since the last update,
            // which the next update expects to find only on the paths it marks.
            tree.clear_marks(&mut stack);
            self.quality[t] = self.quality[t].rebuilt(tree.proxies);
            self.full_rebuilds += 1;
        }
        self.order = stack;
        self.units = Vec::new();
    }

    /// [`QuadTree::probe_aabb`] of a valid box: its work counts, and whether `visit` broke.
    fn probe_aabb(
        &self,
        s: &Store,
        aabb: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> (QueryStats, ControlFlow<()>) {
        let mut stats = QueryStats::default();
        let pending = !s.dirty().is_empty();
        let mut hits = 0;
        for (t, tree) in self.trees.iter().enumerate() {
            let layers = self.group_layers[t / 2].0;
            if layers & mask.0 == 0 {
                continue;
            }
            // Layers of this tree the mask leaves out: then each proxy's layer is checked.
            let filter = layers & !mask.0 != 0;
            let flow = tree.walk_box(aabb, &mut stats, |slot, _, _| {
                let i = slot as usize;
                // Proxies changed since the last update are answered below, with their
                // current boxes; every other lane holds its proxy's exact box.
                if (pending && s.is_dirty(i)) || (filter && !mask.contains(s.desc_at(i).layer)) {
                    return ControlFlow::Continue(());
                }
                hits += 1;
                visit(s.id_at(i))
            });
            if flow.is_break() {
                stats.hits = hits;
                return (stats, flow);
            }
        }
        let mut flow = ControlFlow::Continue(());
        for &slot in s.dirty() {
            let i = slot as usize;
            if s.is_alive(i) && mask.contains(s.desc_at(i).layer) && s.aabb_at(i).overlaps(aabb) {
                hits += 1;
                flow = visit(s.id_at(i));
                if flow.is_break() {
                    break;
                }
            }
        }
        stats.hits = hits;
        (stats, flow)
    }

    /// Puts in the trees built in the background that are due at this update, caught up.
    fn swap_in_rebuilds(&mut self, store: &Store) {
        let now = self.updates;
        if !self.rebuilds.0.iter().any(|r| r.due == now) {
            return;
        }
        let (due, later) = std::mem::take(&mut self.rebuilds.0)
            .into_iter()
            .partition(|r| r.due == now);
        self.rebuilds.0 = later;
        for r in due {
            let t = r.tree;
            let running = Arc::clone(&self.trees[t]);
            if let Some(tree) = r.finish(store, &running, t as u8, &self.home, &mut self.locs) {
                self.quality[t] = self.quality[t].rebuilt(tree.proxies);
                self.trees[t] = Arc::new(tree);
                self.fast_rebuilds += 1;
            }
        }
    }

    /// Notes this update's changes for the builds under way, and starts those this update
    /// chose (on the trees as it leaves them).
    fn start_rebuilds(&mut self, store: &Store) {
        for r in &mut self.rebuilds.0 {
            r.record(store);
        }
        for &t in &self.starting {
            let tree = Arc::clone(&self.trees[t]);
            match Rebuild::start(t, tree, store.slot_count(), self.updates) {
                Ok(r) => self.rebuilds.0.push(r),
                Err(_) => self.no_threads = true,
            }
        }
        self.starting.clear();
    }

    /// Records the id and layer of every proxy this update brought in or changed.
    fn note_held(&mut self, store: &Store) {
        let held = Arc::make_mut(&mut self.held);
        if held.len() < store.slot_count() {
            held.resize(
                store.slot_count(),
                Held {
                    id: ProxyId::from_raw_parts(0, 0),
                    layer: Layer(0),
                },
            );
        }
        for &slot in store.dirty() {
            if store.is_alive(slot as usize) {
                held[slot as usize] = Held::of(store, slot as usize);
            }
        }
    }

    /// Whether groups `g` and `h` have layers that collide.
    fn groups_collide(&self, store: &Store, g: usize, h: usize) -> bool {
        let (a, b) = (self.group_layers[g].0, self.group_layers[h].0);
        (0..Layer::COUNT as u8).any(|l| {
            a >> l & 1 != 0
                && (0..Layer::COUNT as u8)
                    .any(|m| b >> m & 1 != 0 && store.layers_collide(Layer(l), Layer(m)))
        })
    }

    /// Takes changed proxies out of their trees, writes the moved ones' boxes, and lists the
    /// ones to insert per tree; trees to rebuild only have their proxies' homes updated.
    /// Returns how each tree is brought up to date.
    fn sort_changes(&mut self, store: &Store) -> (Vec<Mode>, Vec<usize>) {
        let slots = store.slot_count();
        if self.home.len() < slots {
            slack::resize(&mut self.home, slots, NO_TREE);
            slack::resize(&mut self.locs, slots, NONE);
        }
        // Changed proxies per tree: those it holds and those that will join it.
        let mut changed = vec![0usize; self.trees.len()];
        let mut joining = vec![0usize; self.trees.len()];
        for &slot in store.dirty() {
            let s = slot as usize;
            let h = self.home[s];
            if h != NO_TREE {
                changed[usize::from(h)] += 1;
            }
            if store.is_alive(s) {
                let want = self.tree_for(store.desc_at(s));
                if want != h {
                    changed[usize::from(want)] += 1;
                    joining[usize::from(want)] += 1;
                }
            }
        }
        // A tree that refits have let grow loose is rebuilt. Otherwise: marking a path per
        // proxy costs a random walk; past a quarter of the tree, a sequential refit of
        // everything is cheaper.
        let cost = self.settings.rebuild_cost;
        let background = self.settings.background_rebuild && !self.no_threads;
        let mut starting = std::mem::take(&mut self.starting);
        starting.clear();
        let modes: Vec<Mode> = (0..self.trees.len())
            .map(|t| {
                let (c, tree, q) = (changed[t], &self.trees[t], &self.quality[t]);
                let bulk = 4 * c >= tree.proxies.max(c);
                if c == 0 {
                    Mode::Paths
                } else if tree.proxies > 0
                    && joining[t] < tree.proxies
                    && (q.wants_rebuild(tree.proxies, cost) || q.outgrown(tree.proxies))
                {
                    // (A batch as large as the tree is built by SAH with it instead.)
                    if !background || tree.proxies < background::MIN_PROXIES {
                        Mode::Rebuild
                    } else {
                        // Refit now; the rebuild runs on another thread (unless one is).
                        if !self.rebuilds.building(t) {
                            starting.push(t);
                        }
                        if bulk {
                            Mode::Bulk
                        } else {
                            Mode::Paths
                        }
                    }
                } else if bulk {
                    Mode::Bulk
                } else {
                    Mode::Paths
                }
            })
            .collect();
        // The trees this update writes, each copied first if a snapshot shares it (once: the
        // copies are not shared).
        let mut trees: Vec<Option<&mut Tree>> = self
            .trees
            .iter_mut()
            .zip(&changed)
            .map(|(tree, &c)| (c > 0).then(|| Arc::make_mut(tree)))
            .collect();
        let dirty_len = store.dirty().len();
        for k in 0..dirty_len {
            // Moved proxies' lanes are written in slot order, all over the arena: start loading
            // the node a few proxies ahead so that the writes do not wait for it.
            if let Some(&ahead) = store.dirty().get(k + MOVE_AHEAD) {
                let h = self.home[ahead as usize];
                if h != NO_TREE && modes[usize::from(h)] == Mode::Bulk {
                    if let Some(tree) = &trees[usize::from(h)] {
                        tree.nodes[tree::loc_node(self.locs[ahead as usize]) as usize].prefetch();
                    }
                }
            }
            let slot = store.dirty()[k] as usize;
            let want = if store.is_alive(slot) {
                tree_for(&self.group_of, store.desc_at(slot))
            } else {
                NO_TREE
            };
            let h = self.home[slot];
            if h != NO_TREE {
                let t = usize::from(h);
                let l = self.locs[slot];
                match (modes[t], &mut trees[t]) {
                    (Mode::Rebuild, _) | (_, None) => {}
                    (mode, Some(tree)) if want == h => {
                        tree.move_proxy(l, store.aabb_at(slot), mode == Mode::Bulk);
                    }
                    (mode, Some(tree)) => {
                        tree.remove_proxy(&mut self.locs, l, mode == Mode::Bulk);
                    }
                }
                if want == h {
                    continue;
                }
                self.home[slot] = NO_TREE;
            }
            if want != NO_TREE {
                if modes[usize::from(want)] != Mode::Rebuild {
                    self.pending[usize::from(want)].push(slot as u32);
                }
                self.home[slot] = want;
            }
        }
        self.starting = starting;
        (modes, changed)
    }

    /// Links the proxies waiting for tree `t`: a first batch (or one at least as big as the
    /// tree) rebuilds the whole tree; otherwise the batch is built by SAH and linked in.
    fn insert_pending(&mut self, store: &Store, t: usize, stack: &mut Vec<u32>) {
        self.adopt_arrivals(store, t);
        let pending = std::mem::take(&mut self.pending[t]);
        if pending.is_empty() {
            self.pending[t] = pending;
            return;
        }
        let tree = Arc::make_mut(&mut self.trees[t]);
        if pending.len() >= tree.proxies {
            tree.rebuild_all(
                store,
                &mut self.locs,
                &mut self.builder,
                &mut self.units,
                &pending,
                stack,
            );
            self.quality[t] = self.quality[t].rebuilt(tree.proxies);
            self.full_rebuilds += 1;
        } else if pending.len() == 1 {
            let unit = Unit::proxy(store, pending[0]);
            tree.insert_unit(store, &mut self.locs, unit);
            tree.proxies += 1;
        } else {
            self.units.clear();
            self.units
                .extend(pending.iter().map(|&s| Unit::proxy(store, s)));
            tree.sort_free();
            let r = self
                .builder
                .build(tree, store, &mut self.locs, &mut self.units);
            tree.link_subtree(store, &mut self.locs, r);
            tree.proxies += pending.len();
        }
        let mut pending = pending;
        pending.clear();
        self.pending[t] = pending;
    }

    /// Links the committed subtrees bound for tree `t` whose proxies are still as committed,
    /// and takes their proxies off the tree's pending list.
    fn adopt_arrivals(&mut self, store: &Store, t: usize) {
        if !self.arrivals.iter().any(|a| a.goes_to(t)) {
            return;
        }
        let mut linked = vec![false; store.slot_count()];
        let tree = Arc::make_mut(&mut self.trees[t]);
        for a in &self.arrivals {
            a.link(store, &self.group_of, t, tree, &mut self.locs, &mut linked);
        }
        self.pending[t].retain(|&s| !linked[s as usize]);
    }

    /// The walks that find this update's pairs: `(tree, tree)`, the same tree for a self walk.
    fn walks(&self, store: &Store) -> Vec<(usize, usize)> {
        let groups = self.group_layers.len();
        let mut out = Vec::new();
        for g in 0..groups {
            for h in g..groups {
                if groups > 1 && !self.groups_collide(store, g, h) {
                    continue;
                }
                let (fg, dg, fh, dh) = (2 * g, 2 * g + 1, 2 * h, 2 * h + 1);
                if g == h {
                    out.push((dg, dg));
                    out.push((dg, fg));
                } else {
                    out.push((dg, dh));
                    out.push((dg, fh));
                    out.push((fg, dh));
                }
            }
        }
        out
    }

    /// Finds the pairs of every walk into `found`: a simultaneous walk where much of either
    /// tree changed, queries from the changed proxies where little did. Returns the lane
    /// tests made, in all and per tree (what its own walks cost, for [`Quality`]).
    fn find_pairs(&mut self, store: &Store, modes: &[Mode]) -> (u64, Vec<u64>) {
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        let mut tests = 0;
        let mut per_tree = vec![0; self.trees.len()];
        let mut changed: Vec<Vec<u32>> = vec![Vec::new(); self.trees.len()];
        for &slot in store.dirty() {
            let h = self.home.get(slot as usize).copied().unwrap_or(NO_TREE);
            // Only trees in few-changes mode query from their changed proxies.
            if h != NO_TREE && modes[usize::from(h)] == Mode::Paths && store.is_alive(slot as usize)
            {
                changed[usize::from(h)].push(slot);
            }
        }
        // Queries in tree order (the arena is laid out depth first): each one finds the
        // nodes the one before it opened still in cache.
        for list in &mut changed {
            let locs = &self.locs;
            list.sort_unstable_by_key(|&s| (locs[s as usize], s));
        }
        for (a, b) in self.walks(store) {
            let (ta, tb) = (&self.trees[a], &self.trees[b]);
            if modes[a] == Mode::Paths && modes[b] == Mode::Paths {
                let ab = query_pairs(tb, store, &changed[a], a == b, &mut found);
                let ba = if a == b {
                    0
                } else {
                    query_pairs(ta, store, &changed[b], false, &mut found)
                };
                tests += ab + ba;
                per_tree[a] += ab;
                per_tree[b] += ba;
                continue;
            }
            let mut walk = Walk::new(ta, tb, store);
            let Some(first) = walk.start(a == b) else {
                continue;
            };
            let steps = split_walk(&mut walk, first, PARALLEL_STEPS, &mut found);
            let t = walk.tests
                + run_steps(
                    ta,
                    tb,
                    store,
                    &steps,
                    self.parallel && steps.len() >= PARALLEL_STEPS,
                    &mut found,
                );
            tests += t;
            if a == b {
                per_tree[a] += t;
            }
        }
        self.found = found;
        (tests, per_tree)
    }
}

/// The layer group of each collision layer: the first group that contains it, or the first.
fn group_of(groups: &[LayerMask]) -> [u8; Layer::COUNT] {
    std::array::from_fn(|layer| {
        groups
            .iter()
            .position(|m| m.contains(Layer(layer as u8)))
            .unwrap_or(0) as u8
    })
}

/// The tree a proxy so described belongs in, given the group of each layer.
#[inline]
fn tree_for(group_of: &[u8; Layer::COUNT], desc: &ProxyDesc) -> u8 {
    2 * group_of[usize::from(desc.layer.0)] + u8::from(!desc.is_fixed())
}

/// Runs independent walk steps, appending what each finds in step order: the same output
/// whether they run on one thread or many.
fn run_steps(
    ta: &Tree,
    tb: &Tree,
    store: &Store,
    steps: &[Step],
    parallel: bool,
    found: &mut Vec<u64>,
) -> u64 {
    #[cfg(feature = "parallel")]
    if parallel {
        use rayon::prelude::*;
        let parts: Vec<(Vec<u64>, u64)> = steps
            .par_iter()
            .map(|&s| {
                let mut walk = Walk::new(ta, tb, store);
                let mut out = Vec::new();
                walk.run(s, &mut Vec::new(), &mut out);
                (out, walk.tests)
            })
            .collect();
        let mut tests = 0;
        for (part, t) in parts {
            found.extend_from_slice(&part);
            tests += t;
        }
        return tests;
    }
    let _ = parallel;
    let mut walk = Walk::new(ta, tb, store);
    let mut scratch = Vec::new();
    for &s in steps {
        walk.run(s, &mut scratch, found);
    }
    walk.tests
}

impl Engine for QuadTreeEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::QuadTree
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        self.updates += 1;
        self.swap_in_rebuilds(store);
        if store.dirty().is_empty() {
            return Ok(());
        }
        let (modes, changed) = self.sort_changes(store);
        let mut stack = std::mem::take(&mut self.order);
        for t in 0..self.trees.len() {
            if changed[t] == 0 {
                // Untouched: left as it is (and shared with any snapshot holding it).
                continue;
            }
            if modes[t] == Mode::Rebuild {
                let home = &self.home;
                let slots = (0..store.slot_count() as u32).filter(|&s| home[s as usize] == t as u8);
                Arc::make_mut(&mut self.trees[t]).rebuild_fast(
                    store,
                    &mut self.locs,
                    &mut self.builder,
                    &mut self.units,
                    slots,
                );
                self.quality[t] = self.quality[t].rebuilt(self.trees[t].proxies);
                self.fast_rebuilds += 1;
                continue;
            }
            let bulk = modes[t] == Mode::Bulk;
            let mut order = std::mem::take(&mut stack);
            Arc::make_mut(&mut self.trees[t]).refit(store, bulk, &mut order);
            stack = order;
            self.insert_pending(store, t, &mut stack);
            let tree = Arc::make_mut(&mut self.trees[t]);
            if tree.proxies == 0 && tree.root == NONE && tree.nodes.capacity() > 0 {
                tree.clear();
            }
            // Jolt's partial rebuild of the changed top, when much of the tree changed (it
            // is off by default: see `QuadTreeSettings::rebuild_depth`). Rebuilding it along
            // a few changed paths puts the big untouched subtrees beside them a level deeper
            // each time: 4,000 single insertions, each followed by an update, left a tree 46
            // levels deep instead of 6.
            if bulk && self.settings.rebuild_depth > 0 {
                let units = tree.rebuild_top(
                    store,
                    &mut self.locs,
                    &mut self.builder,
                    &mut self.units,
                    &mut self.opened,
                    self.settings.rebuild_depth,
                );
                if units > 0 {
                    self.partial_rebuilds += 1;
                    self.partial_units += units as u64;
                }
            }
        }
        self.order = stack;
        let (tests, self_tests) = self.find_pairs(store, &modes);
        for (t, q) in self.quality.iter_mut().enumerate() {
            q.observe(modes[t] == Mode::Paths, self_tests[t], changed[t]);
        }
        // The pairs found (each with a changed proxy) against last update's, both sorted:
        // what was found and is new is created, what had a changed proxy and was not found
        // again is deleted, the rest (pairs of two unchanged proxies among them) is kept, in
        // place (no second list of every pair).
        let mut found = std::mem::take(&mut self.found);
        self.key_sorter.sort(&mut found);
        diff_pairs_in_place(
            &mut self.keys,
            &found,
            key_slots,
            |slot| store.is_dirty(slot as usize),
            &mut changes.created,
            &mut changes.deleted,
        );
        self.found = found;
        let mut stack = std::mem::take(&mut self.order);
        for (t, tree) in self.trees.iter_mut().enumerate() {
            if modes[t] == Mode::Paths && changed[t] > 0 {
                Arc::make_mut(tree).clear_marks(&mut stack);
            }
        }
        self.order = stack;
        // Scratch sized by the pairs of one update: give it back after a burst.
        if self.found.capacity() > 4 * self.found.len() + 4096 {
            self.found = Vec::new();
        }
        changes.tests = tests;
        self.note_held(store);
        self.start_rebuilds(store);
        // Parts bound for a tree this update rebuilt were taken in by the rebuild.
        self.arrivals.clear();
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        vec![PairList::new(&self.keys)]
    }

    /// The trees, shared: see [`Snapshot`].
    fn snapshot(&self, store: &Store) -> Option<Snapshot> {
        let layers = (0..self.trees.len())
            .map(|t| self.group_layers[t / 2])
            .collect();
        Some(Snapshot::shared(
            self.trees.clone(),
            layers,
            Arc::clone(&self.held),
            store,
        ))
    }

    /// The proxies whose lanes overlap `bounds`, tree by tree.
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut stats = QueryStats::default();
        for tree in &self.trees {
            tree.walk_box(bounds, &mut stats, |slot, _, _| visit(slot))?;
        }
        ControlFlow::Continue(())
    }

    /// The proxies whose lanes the ray enters, walking down the nodes it enters.
    fn ray_candidates(
        &self,
        _store: &Store,
        ray: &Ray,
        max_t: f32,
        _world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for tree in &self.trees {
            tree.walk_ray(ray, max_t, &mut |slot, _| visit(slot))?;
        }
        ControlFlow::Continue(())
    }

    fn query_aabb(
        &self,
        store: &Store,
        aabb: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Option<ControlFlow<()>> {
        // The trees' lanes hold exact boxes: the walk is the exact test, without the shared
        // driver's second look at each candidate's box.
        Some(self.probe_aabb(store, aabb, mask, visit).1)
    }

    /// Every tree's links, boxes and counts, each proxy's place and tree, the pair keys
    /// (`check.rs`).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        self.check(store)
    }

    fn stats(&self, _store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self.trees.iter().map(|t| t.memory_bytes()).sum::<usize>()
            + self.locs.capacity() * 4
            + self.home.capacity()
            + self.builder.memory_bytes()
            + (self.found.capacity() + self.keys.capacity()) * 8
            + self.key_sorter.memory_bytes()
            + self.units.capacity() * std::mem::size_of::<Unit>()
            + self.order.capacity() * 4
            + self
                .arrivals
                .iter()
                .map(Committed::memory_bytes)
                .sum::<usize>()
            + self.held.capacity() * std::mem::size_of::<Held>();
        // From the trees' counts, not a walk of their nodes: a user may read the stats every
        // frame, and the walk took 6 ms at a million proxies, evicting the caches the next
        // update wanted (`bplab run` reads Auto's stats after every frame).
        let nodes = self.node_count();
        let used_lanes: usize = self.trees.iter().map(|t| t.used_lanes()).sum();
        let height = self.trees.iter().map(|t| t.height()).max().unwrap_or(0);
        stats.figures = Figures::QuadTree(QuadTreeFigures {
            trees: self.trees.len() as u64,
            nodes: nodes as u64,
            height: height as u64,
            fill_percent: (100 * used_lanes / (LANES * nodes).max(1)) as u64,
            partial_rebuilds: self.partial_rebuilds,
            partial_rebuild_units: self.partial_units,
            full_rebuilds: self.full_rebuilds,
            fast_rebuilds: self.fast_rebuilds,
        });
    }
}

#[cfg(test)]
mod tests;
