//! [`Snapshot`]: a frozen view of a broad phase's proxies that other threads query while the
//! owner keeps moving proxies and running updates.
//!
//! A `QuadTree` shares its trees with its snapshots: each tree is behind an `Arc`, and an
//! update copies a tree before writing it only while a snapshot still holds it
//! (`Arc::make_mut`). Taking a snapshot clones those `Arc`s, the table of ids and layers of
//! the proxies the trees hold (shared the same way), and copies the proxies changed since the
//! last update: it costs nothing like a copy of the trees. Other algorithms' structures are not
//! shared this way (sorted columns and cells rewritten in place at every update); their
//! snapshot is a tree built from the store's boxes when it is taken.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::build::{Builder, Unit};
use super::node::NONE;
use super::traverse::QueryStats;
use super::tree::{AllNew, Tree};
use crate::query::{self, Ray, Source};
use crate::store::Store;
use crate::{Aabb, CastHit, Error, Layer, LayerMask, Obb, ProxyId, RayHit};

/// What a snapshot knows of a proxy a tree holds: its id and layer (as of the last update).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub(crate) id: ProxyId,
    pub(crate) layer: Layer,
}

impl Held {
    /// The proxy in `slot` of `store`.
    pub(crate) fn of(store: &Store, slot: usize) -> Self {
        Self {
            id: store.id_at(slot),
            layer: store.desc_at(slot).layer,
        }
    }
}

/// A proxy a snapshot answers for apart from its trees (changed since the last update, or out
/// of the world's bounds), with its box when the snapshot was taken.
#[derive(Clone, Copy, Debug)]
struct Loose {
    id: ProxyId,
    layer: Layer,
    aabb: Aabb,
}

/// The proxies of a broad phase as they were when [`snapshot`](crate::engine::Driver::snapshot)
/// was called: `Send + Sync + Clone + 'static`, so any number of threads may query it while the
/// broad phase it came from moves proxies and runs updates.
///
/// **Which boxes it answers for:** every proxy live when it was taken, with the box it had
/// then, changes made since the last update included. It answers every query exactly as the
/// broad phase itself would have answered at that moment (so, taken right after `update`,
/// exactly for the boxes of that update), and nothing done to the broad phase afterwards
/// changes its answers. Ids it returns may have been removed since.
///
/// **What it costs:** from a [`QuadTree`](crate::QuadTree), taking one clones a few `Arc`s and
/// copies the proxies changed since the last update (none, right after an update); the next
/// update then copies each tree it writes, once, while the snapshot is alive (see the
/// README's concurrency figures). From any other algorithm it builds a tree over every live
/// box, in `O(n log n)`: those structures are rewritten in place at every update and cannot
/// be shared.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, LayerMask, ProxyDesc, QuadTree};
///
/// let mut bp = QuadTree::new(Config::default());
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// bp.update()?;
/// let snapshot = bp.snapshot();
/// // Another thread queries the boxes of that update while this one moves on.
/// let worker = std::thread::spawn(move || snapshot.query_aabb_vec(Aabb::new([0.5; 3], [0.6; 3]), LayerMask::ALL));
/// bp.set_aabb(a, Aabb::new([5.0; 3], [6.0; 3]))?;
/// bp.update()?;
/// assert_eq!(worker.join().unwrap()?, [a]);
/// assert!(bp.query_aabb_vec(Aabb::new([0.5; 3], [0.6; 3]), LayerMask::ALL)?.is_empty());
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Snapshot {
    trees: Vec<Arc<Tree>>,
    /// The layers each tree may hold.
    tree_layers: Vec<LayerMask>,
    /// Per slot: the id and layer of the proxy a tree holds there.
    held: Arc<Vec<Held>>,
    /// Slots changed since the last update, sorted: their lanes are not their boxes now.
    changed: Vec<u32>,
    loose: Vec<Loose>,
    bounds: Option<Aabb>,
    len: usize,
}

impl Snapshot {
    /// A snapshot of trees shared with their engine: `held` names the proxies they hold; the
    /// proxies of `store` changed since its last update and those out of its world's bounds
    /// are copied.
    pub(crate) fn shared(
        trees: Vec<Arc<Tree>>,
        tree_layers: Vec<LayerMask>,
        held: Arc<Vec<Held>>,
        store: &Store,
    ) -> Self {
        let mut changed = store.dirty().to_vec();
        changed.sort_unstable();
        let outside = store
            .outside()
            .iter()
            .filter(|&&s| !store.is_dirty(s as usize));
        let loose = outside
            .chain(store.dirty())
            .map(|&s| s as usize)
            .filter(|&s| store.is_live(s))
            .map(|s| Loose {
                id: store.id_at(s),
                layer: store.desc_at(s).layer,
                aabb: *store.aabb_at(s),
            })
            .collect();
        Self {
            trees,
            tree_layers,
            held,
            changed,
            loose,
            bounds: store.bounds(),
            len: store.live_len(),
        }
    }

    /// A snapshot of every live proxy of `store` with its current box, in a tree built for it:
    /// what the algorithms whose structures cannot be shared give.
    pub(crate) fn build(store: &Store) -> Self {
        let slots = store.slot_count();
        let mut held = Vec::with_capacity(slots);
        let mut units = Vec::with_capacity(store.live_len());
        for s in 0..slots {
            if store.is_live(s) {
                held.push(Held::of(store, s));
                units.push(Unit::proxy(store, s as u32));
            } else {
                held.push(Held {
                    id: store.id_at(s),
                    layer: Layer(0),
                });
            }
        }
        let mut tree = Tree::new();
        if !units.is_empty() {
            let mut locs = vec![NONE; slots];
            tree.root = Builder::default().build(&mut tree, &AllNew, &mut locs, &mut units);
            tree.proxies = units.len();
        }
        Self {
            trees: vec![Arc::new(tree)],
            tree_layers: vec![LayerMask::ALL],
            held: Arc::new(held),
            changed: Vec::new(),
            loose: Vec::new(),
            bounds: store.bounds(),
            len: store.live_len(),
        }
    }

    /// The number of proxies it answers for.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it answers for no proxy.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// [`BroadPhase::query_aabb`](crate::BroadPhase::query_aabb) against the snapshot's boxes.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`].
    pub fn query_aabb(
        &self,
        aabb: Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_aabb(self, &aabb, mask, visit)
    }

    /// [`query_aabb`](Self::query_aabb), collected (in no particular order).
    ///
    /// # Errors
    /// As [`query_aabb`](Self::query_aabb).
    pub fn query_aabb_vec(&self, aabb: Aabb, mask: LayerMask) -> Result<Vec<ProxyId>, Error> {
        let mut out = Vec::new();
        self.query_aabb(aabb, mask, &mut |id| {
            out.push(id);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// [`BroadPhase::query_point`](crate::BroadPhase::query_point) against the snapshot's
    /// boxes.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite point.
    pub fn query_point(
        &self,
        p: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_point(self, p, mask, visit)
    }

    /// [`BroadPhase::query_sphere`](crate::BroadPhase::query_sphere) against the snapshot's
    /// boxes.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite centre or a bad radius.
    pub fn query_sphere(
        &self,
        center: [f32; 3],
        radius: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_sphere(self, center, radius, mask, visit)
    }

    /// [`BroadPhase::query_obb`](crate::BroadPhase::query_obb) against the snapshot's boxes.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a bad oriented box.
    pub fn query_obb(
        &self,
        obb: &Obb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_obb(self, obb, mask, visit)
    }

    /// [`BroadPhase::ray_cast`](crate::BroadPhase::ray_cast) against the snapshot's boxes.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a bad ray or `max_t`.
    pub fn ray_cast(
        &self,
        ray: &Ray,
        max_t: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::ray_cast(self, ray, max_t, mask, visit)
    }

    /// [`BroadPhase::box_cast`](crate::BroadPhase::box_cast) against the snapshot's boxes.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`], [`Error::InvalidParameter`] for a
    /// bad motion.
    pub fn box_cast(
        &self,
        aabb: Aabb,
        motion: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(CastHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::box_cast(self, &aabb, motion, mask, visit)
    }

    /// [`BroadPhase::nearest`](crate::BroadPhase::nearest) against the snapshot's boxes.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite point.
    pub fn nearest(
        &self,
        p: [f32; 3],
        k: usize,
        mask: LayerMask,
    ) -> Result<Vec<(ProxyId, f32)>, Error> {
        query::nearest(self, p, k, mask)
    }

    /// Whether a tree's lane for `slot` holds its box as of the snapshot.
    #[inline]
    fn lane_is_current(&self, slot: u32) -> bool {
        self.changed.is_empty() || self.changed.binary_search(&slot).is_err()
    }
}

impl Source for Snapshot {
    /// The trees' proxies that did not change since the last update (their lanes hold their
    /// boxes), then the loose ones.
    fn visit(
        &self,
        bounds: Option<&Aabb>,
        ray: Option<(&Ray, f32)>,
        mask: LayerMask,
        hit: &mut dyn FnMut(ProxyId, &Aabb) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut stats = QueryStats::default();
        for (tree, layers) in self.trees.iter().zip(&self.tree_layers) {
            if layers.0 & mask.0 == 0 {
                continue;
            }
            let mut found = |slot: u32, b: &Aabb| match self.held.get(slot as usize) {
                Some(h) if mask.contains(h.layer) && self.lane_is_current(slot) => hit(h.id, b),
                _ => ControlFlow::Continue(()),
            };
            match (ray, bounds) {
                (Some((ray, max_t)), _) => tree.walk_ray(ray, max_t, &mut found)?,
                (None, Some(q)) => tree.walk_box(q, &mut stats, |slot, node, lane| {
                    found(slot, &node.lane_box(lane))
                })?,
                (None, None) => {}
            }
        }
        for p in &self.loose {
            if mask.contains(p.layer) {
                hit(p.id, &p.aabb)?;
            }
        }
        ControlFlow::Continue(())
    }

    fn bounds(&self) -> Option<Aabb> {
        self.bounds
    }

    fn len(&self) -> usize {
        self.len
    }
}
