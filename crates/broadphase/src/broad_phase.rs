//! The trait every algorithm implements, the algorithm selector and the shared settings.

use std::fmt;
use std::ops::ControlFlow;
use std::str::FromStr;

use crate::{
    Aabb, CastHit, Error, Layer, LayerMask, Obb, Pair, PairEvents, ProxyDesc, ProxyId, Ray, RayHit,
    Snapshot, Stats,
};

/// The most live proxies one broad phase holds (2^24): slot indices stay small enough to pack
/// with flags, and a runaway caller gets [`Error::CapacityExceeded`] instead of exhausting memory.
pub const MAX_PROXIES: usize = 1 << 24;

/// A broad phase: boxes in, overlapping pairs and queries out.
///
/// Changes (`insert`, `set_aabb`, `set_desc`, `remove`, `set_layers_collide`, `shift_origin`)
/// take effect at the next [`update`](BroadPhase::update), which returns the pairs created and
/// deleted since the previous one. Every implementation reports exactly the pairs
/// [`BruteForce`](crate::BruteForce) reports for the same calls, with the same ids, and returns
/// an [`Error`] (changing nothing) for bad input instead of panicking.
///
/// Queries take `&self` and are exact against the boxes as last set, including changes not yet
/// brought in by an update: they never report a proxy whose box misses the query. A visitor
/// returns [`ControlFlow::Break`] to stop early. Results come in an unspecified but deterministic
/// order.
///
/// Threads: a broad phase is `Send` (move it to another thread) and `Sync`: queries, `pairs`,
/// `aabb` and the other `&self` methods may run from many threads at once, while no mutation
/// runs (the borrow checker enforces it). Each `update` may use rayon's threads internally.
///
/// The trait is object-safe: [`crate::new`] returns a `Box<dyn BroadPhase>`.
pub trait BroadPhase: Send + Sync {
    /// Which algorithm this is.
    fn algorithm(&self) -> Algorithm;

    /// Adds a proxy; its pairs appear at the next update.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`], [`Error::InvalidLayer`],
    /// [`Error::CapacityExceeded`].
    fn insert(&mut self, aabb: Aabb, desc: ProxyDesc) -> Result<ProxyId, Error>;

    /// Adds many proxies at once: all of them, or none if one is invalid. Algorithms build
    /// their structures for a batch faster than for the same proxies one by one.
    ///
    /// # Errors
    /// As [`insert`](BroadPhase::insert), for the first invalid item.
    fn insert_batch(&mut self, items: &[(Aabb, ProxyDesc)]) -> Result<Vec<ProxyId>, Error>;

    /// Moves a proxy's box.
    ///
    /// # Errors
    /// [`Error::StaleProxy`], [`Error::UnknownProxy`], [`Error::NonFiniteAabb`],
    /// [`Error::InvertedAabb`].
    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), Error>;

    /// Moves many proxies' boxes, as [`set_aabb`](BroadPhase::set_aabb) on each in order (a
    /// proxy listed twice ends with its last box), but all of them or none: every item is
    /// checked first. The way a physics step hands over its moved bodies; faster than one call
    /// per box when the proxies lie all over the structure (after churn, say).
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, Pair, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// let b = bp.insert(Aabb::new([5.0; 3], [6.0; 3]), ProxyDesc::dynamic())?;
    /// bp.set_aabbs(&[(a, Aabb::new([2.0; 3], [3.0; 3])), (b, Aabb::new([2.5; 3], [3.5; 3]))])?;
    /// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
    /// // One bad box: nothing moves.
    /// let bad = Aabb::new([f32::NAN; 3], [1.0; 3]);
    /// assert!(bp.set_aabbs(&[(a, Aabb::new([9.0; 3], [10.0; 3])), (b, bad)]).is_err());
    /// assert_eq!(bp.aabb(a)?, Aabb::new([2.0; 3], [3.0; 3]));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`set_aabb`](BroadPhase::set_aabb), for the first invalid item.
    fn set_aabbs(&mut self, items: &[(ProxyId, Aabb)]) -> Result<(), Error> {
        for (id, aabb) in items {
            self.aabb(*id)?;
            aabb.validate()?;
        }
        items
            .iter()
            .try_for_each(|&(id, aabb)| self.set_aabb(id, aabb))
    }

    /// Changes a proxy's mobility, layer, group or user data.
    ///
    /// # Errors
    /// [`Error::StaleProxy`], [`Error::UnknownProxy`], [`Error::InvalidLayer`].
    fn set_desc(&mut self, id: ProxyId, desc: ProxyDesc) -> Result<(), Error>;

    /// Removes a proxy; its pairs are reported deleted at the next update and its id becomes
    /// stale.
    ///
    /// # Errors
    /// [`Error::StaleProxy`] (removed twice), [`Error::UnknownProxy`].
    fn remove(&mut self, id: ProxyId) -> Result<(), Error>;

    /// Removes many proxies, as [`remove`](BroadPhase::remove) on each in order, but all of
    /// them or none: a proxy that is not live, or that the batch lists twice (the second
    /// removal would find it stale), fails the batch before anything is removed. The way a
    /// game hands over a frame's destroyed objects; faster than one call per proxy when they
    /// lie all over the structure.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, Error, Pair, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// let b = bp.insert(Aabb::new([0.5; 3], [1.5; 3]), ProxyDesc::dynamic())?;
    /// let c = bp.insert(Aabb::new([0.8; 3], [2.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// // `b` listed twice: nothing is removed.
    /// assert!(matches!(bp.remove_batch(&[a, b, b]), Err(Error::StaleProxy { .. })));
    /// assert_eq!(bp.len(), 3);
    /// bp.remove_batch(&[a, b])?;
    /// assert_eq!(bp.update()?.deleted(), &[Pair::new(a, b), Pair::new(a, c), Pair::new(b, c)]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`remove`](BroadPhase::remove), for the first item that fails.
    fn remove_batch(&mut self, ids: &[ProxyId]) -> Result<(), Error> {
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        for &id in ids {
            self.aabb(id)?;
            if !seen.insert(id) {
                return Err(Error::StaleProxy { id });
            }
        }
        ids.iter().try_for_each(|&id| self.remove(id))
    }

    /// Brings the pairs up to date with every change since the last update and returns what
    /// changed: created and deleted pairs, each sorted by `(a, b)`.
    ///
    /// The events it returns borrow the broad phase mutably: to read proxies' descriptions
    /// while going through them, call `update()?;` and then iterate
    /// [`events()`](BroadPhase::events) beside [`event_desc`](BroadPhase::event_desc).
    ///
    /// # Errors
    /// None of today's algorithms fails here; the `Result` leaves room for ones that can
    /// (a lost GPU device).
    fn update(&mut self) -> Result<&PairEvents, Error>;

    /// The events of the last update.
    fn events(&self) -> &PairEvents;

    /// Every overlapping pair as of the last update, in an unspecified but deterministic order,
    /// each proxy named by its id at that update (also when it was removed since).
    ///
    /// Abp, Mbp, QuadTree and Grid keep their pairs in their own structures and make this list
    /// on the first call after an update that changed them (linear in the pairs), then keep it:
    /// a frame that only reads the events never pays for it.
    fn pairs(&self) -> &[Pair];

    /// A proxy's current box (as last set, even before the next update).
    ///
    /// # Errors
    /// [`Error::StaleProxy`], [`Error::UnknownProxy`].
    fn aabb(&self, id: ProxyId) -> Result<Aabb, Error>;

    /// A proxy's current description.
    ///
    /// # Errors
    /// [`Error::StaleProxy`], [`Error::UnknownProxy`].
    fn desc(&self, id: ProxyId) -> Result<ProxyDesc, Error>;

    /// The description of a proxy that the last update's [`events`](BroadPhase::events)
    /// name: a live proxy's current one, or, for a proxy removed before that update, the one
    /// it had when removed ([`PairEvents::removed`]). What a physics step reads to find the
    /// entities of the pairs it sets up and tears down, in the same loop as the events (read
    /// them with `events()`, which borrows the broad phase as `desc` does):
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
    /// let body = |entity| ProxyDesc::dynamic().with_user_data(entity);
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), body(10))?;
    /// let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), body(20))?;
    /// bp.update()?;
    /// bp.remove(a)?; // entity 10 is destroyed
    /// bp.update()?;
    /// let mut torn_down = Vec::new();
    /// for pair in bp.events().deleted() {
    ///     let (x, y) = (bp.event_desc(pair.a)?, bp.event_desc(pair.b)?);
    ///     torn_down.push((x.user_data, y.user_data));
    /// }
    /// assert_eq!(torn_down, [(10, 20)]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`desc`](BroadPhase::desc), for an id neither live nor named by the last events.
    fn event_desc(&self, id: ProxyId) -> Result<ProxyDesc, Error> {
        self.desc(id)
            .or_else(|e| self.events().removed_desc(id).ok_or(e))
    }

    /// Whether `id` names a live proxy of this broad phase.
    fn contains(&self, id: ProxyId) -> bool;

    /// The number of live proxies.
    fn len(&self) -> usize;

    /// Whether there are no live proxies.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Figures about the last update and the structure.
    fn stats(&self) -> Stats;

    /// Checks the structure's invariants and returns a description of the first one broken:
    /// for tests and debugging (the differential suite calls it after every update), never
    /// needed for results. It walks everything, in about O(n log n), and changes nothing.
    ///
    /// The crate's algorithms check the proxies' bookkeeping (ids, generations, free slots,
    /// what changed, counts, the bounds of the world), their engine's own structure
    /// ([`Engine::check_structure`](crate::engine::Engine::check_structure)), and the pairs
    /// of the last update: each listed once, of two proxies that were live then and, where
    /// neither changed since, whose boxes overlap and whose filter allows them.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Sap, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// bp.set_aabb(a, Aabb::new([5.0; 3], [6.0; 3]))?; // checked again before the update
    /// assert_eq!(bp.check_structure(), Ok(()));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// The first broken invariant, in words.
    fn check_structure(&self) -> Result<(), String>;

    /// Moves the origin to `shift`: every box is translated by `-shift`. Large worlds use it to
    /// keep coordinates near zero, where `f32` is precise.
    ///
    /// # Errors
    /// [`Error::NonFiniteShift`], or [`Error::ShiftOverflow`] when a box would leave the finite
    /// range (nothing moves).
    fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), Error>;

    /// Sets whether proxies on layers `a` and `b` may pair. Pairs the change forbids are
    /// reported deleted, and pairs it allows created, at the next update.
    ///
    /// # Errors
    /// [`Error::InvalidLayer`].
    fn set_layers_collide(&mut self, a: Layer, b: Layer, collide: bool) -> Result<(), Error>;

    /// Whether proxies on layers `a` and `b` may pair.
    fn layers_collide(&self, a: Layer, b: Layer) -> bool;

    /// The proxies out of bounds as of the last update, sorted by id: those whose boxes lie
    /// wholly outside the world bounds ([`Config::with_world_bounds`]). Empty when the world
    /// has no bounds. (Mbp's own [`out_of_bounds`](crate::Mbp::out_of_bounds) lists the
    /// proxies outside its regions.)
    fn outside_world(&self) -> Vec<ProxyId>;

    /// A [`Snapshot`] of the proxies as they are now, for other threads to query while this
    /// broad phase moves on: it answers for every proxy live at this moment, with the box it
    /// has now (changes not yet brought in by an update included), whatever happens after.
    /// [`QuadTree`](crate::QuadTree) shares its trees with it; the other algorithms build a
    /// tree over their boxes (`O(n log n)`). See
    /// [`Driver::snapshot`](crate::engine::Driver::snapshot).
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, Config, LayerMask, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Auto, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// let snapshot = bp.snapshot();
    /// let worker = std::thread::spawn(move || {
    ///     snapshot.query_aabb_vec(Aabb::new([0.5; 3], [0.6; 3]), LayerMask::ALL)
    /// });
    /// bp.set_aabb(a, Aabb::new([5.0; 3], [6.0; 3]))?;
    /// bp.update()?;
    /// assert_eq!(worker.join().unwrap()?, [a]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    fn snapshot(&self) -> Snapshot;

    /// Visits every proxy on a layer in `mask` whose box overlaps `aabb` (touching counts).
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`].
    fn query_aabb(
        &self,
        aabb: Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// Visits every proxy on a layer in `mask` whose box contains `p`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite point.
    fn query_point(
        &self,
        p: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// Visits every proxy on a layer in `mask` whose box touches the ball of `radius` around
    /// `center`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite centre, or a negative or non-finite radius.
    fn query_sphere(
        &self,
        center: [f32; 3],
        radius: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// Visits every proxy on a layer in `mask` whose box overlaps the oriented box.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for non-finite values, negative half extents or a zero
    /// quaternion.
    fn query_obb(
        &self,
        obb: &Obb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// Visits every proxy on a layer in `mask` whose box the ray enters at some `t` in
    /// `[0, max_t]` (`max_t` may be infinite), with that entry `t`. Hits come in no particular
    /// order; [`BroadPhase::ray_cast_closest`] finds the nearest.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite origin or direction, or a NaN or negative
    /// `max_t`.
    fn ray_cast(
        &self,
        ray: &Ray,
        max_t: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// Visits every proxy on a layer in `mask` that `aabb`, moved by `motion`, touches, with
    /// the fraction of the motion at first contact (0 when they overlap at the start).
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`], [`Error::InvalidParameter`] for a
    /// non-finite motion.
    fn box_cast(
        &self,
        aabb: Aabb,
        motion: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(CastHit) -> ControlFlow<()>,
    ) -> Result<(), Error>;

    /// The `k` proxies on a layer in `mask` whose boxes are nearest to `p` (distance 0 inside
    /// a box), closest first, ties broken by id.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a non-finite point.
    fn nearest(&self, p: [f32; 3], k: usize, mask: LayerMask)
        -> Result<Vec<(ProxyId, f32)>, Error>;

    /// The first proxy the ray enters within `max_t` (ties broken by id), if any.
    ///
    /// # Errors
    /// As [`BroadPhase::ray_cast`].
    fn ray_cast_closest(
        &self,
        ray: &Ray,
        max_t: f32,
        mask: LayerMask,
    ) -> Result<Option<RayHit>, Error> {
        let mut best: Option<RayHit> = None;
        self.ray_cast(ray, max_t, mask, &mut |hit| {
            let closer = match best {
                None => true,
                Some(b) => hit.t < b.t || (hit.t == b.t && hit.id < b.id),
            };
            if closer {
                best = Some(hit);
            }
            ControlFlow::Continue(())
        })?;
        Ok(best)
    }

    /// [`BroadPhase::query_aabb`], collected: the proxies sorted by id.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, LayerMask, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::QuadTree, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// let b = bp.insert(Aabb::new([2.0; 3], [3.0; 3]), ProxyDesc::fixed())?;
    /// bp.update()?;
    /// let hits = bp.query_aabb_vec(Aabb::new([0.5; 3], [2.5; 3]), LayerMask::ALL)?;
    /// assert_eq!(hits, [a, b]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`BroadPhase::query_aabb`].
    fn query_aabb_vec(&self, aabb: Aabb, mask: LayerMask) -> Result<Vec<ProxyId>, Error> {
        let mut hits = Vec::new();
        self.query_aabb(aabb, mask, &mut collect(&mut hits))?;
        hits.sort_unstable();
        Ok(hits)
    }

    /// [`BroadPhase::query_point`], collected: the proxies sorted by id.
    ///
    /// # Errors
    /// As [`BroadPhase::query_point`].
    fn query_point_vec(&self, p: [f32; 3], mask: LayerMask) -> Result<Vec<ProxyId>, Error> {
        let mut hits = Vec::new();
        self.query_point(p, mask, &mut collect(&mut hits))?;
        hits.sort_unstable();
        Ok(hits)
    }

    /// [`BroadPhase::query_sphere`], collected: the proxies sorted by id.
    ///
    /// # Errors
    /// As [`BroadPhase::query_sphere`].
    fn query_sphere_vec(
        &self,
        center: [f32; 3],
        radius: f32,
        mask: LayerMask,
    ) -> Result<Vec<ProxyId>, Error> {
        let mut hits = Vec::new();
        self.query_sphere(center, radius, mask, &mut collect(&mut hits))?;
        hits.sort_unstable();
        Ok(hits)
    }

    /// [`BroadPhase::query_obb`], collected: the proxies sorted by id.
    ///
    /// # Errors
    /// As [`BroadPhase::query_obb`].
    fn query_obb_vec(&self, obb: &Obb, mask: LayerMask) -> Result<Vec<ProxyId>, Error> {
        let mut hits = Vec::new();
        self.query_obb(obb, mask, &mut collect(&mut hits))?;
        hits.sort_unstable();
        Ok(hits)
    }

    /// [`BroadPhase::ray_cast`], collected: the hits nearest first, ties broken by id.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, LayerMask, ProxyDesc, Ray};
    /// let mut bp = broadphase::new(Algorithm::Sap, Config::default());
    /// let far = bp.insert(Aabb::new([4.0, -1.0, -1.0], [5.0, 1.0, 1.0]), ProxyDesc::fixed())?;
    /// let near = bp.insert(Aabb::new([1.0, -1.0, -1.0], [2.0, 1.0, 1.0]), ProxyDesc::fixed())?;
    /// bp.update()?;
    /// let ray = Ray::new([0.0; 3], [1.0, 0.0, 0.0]);
    /// let hits = bp.ray_cast_vec(&ray, f32::INFINITY, LayerMask::ALL)?;
    /// assert_eq!(hits.iter().map(|h| (h.id, h.t)).collect::<Vec<_>>(), [(near, 1.0), (far, 4.0)]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`BroadPhase::ray_cast`].
    fn ray_cast_vec(&self, ray: &Ray, max_t: f32, mask: LayerMask) -> Result<Vec<RayHit>, Error> {
        let mut hits = Vec::new();
        self.ray_cast(ray, max_t, mask, &mut collect(&mut hits))?;
        hits.sort_unstable_by(|a, b| a.t.total_cmp(&b.t).then(a.id.cmp(&b.id)));
        Ok(hits)
    }

    /// [`BroadPhase::box_cast`], collected: the hits earliest first, ties broken by id.
    ///
    /// # Errors
    /// As [`BroadPhase::box_cast`].
    fn box_cast_vec(
        &self,
        aabb: Aabb,
        motion: [f32; 3],
        mask: LayerMask,
    ) -> Result<Vec<CastHit>, Error> {
        let mut hits = Vec::new();
        self.box_cast(aabb, motion, mask, &mut collect(&mut hits))?;
        hits.sort_unstable_by(|a, b| a.t.total_cmp(&b.t).then(a.id.cmp(&b.id)));
        Ok(hits)
    }
}

/// A visitor that pushes every hit into `hits` and never stops.
fn collect<T>(hits: &mut Vec<T>) -> impl FnMut(T) -> ControlFlow<()> + '_ {
    |hit| {
        hits.push(hit);
        ControlFlow::Continue(())
    }
}

/// The algorithms, for choosing one at run time with [`crate::new`] (like PhysX's
/// `PxSceneDesc::broadPhaseType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Algorithm {
    /// The O(n²) oracle ([`crate::BruteForce`]).
    BruteForce,
    /// PhysX's automatic box pruning, region-free ([`crate::Abp`]).
    Abp,
    /// PhysX's incremental three-axis sweep-and-prune ([`crate::Sap`]).
    Sap,
    /// PhysX's multi-box pruning, with regions ([`crate::Mbp`]; with no set-up it derives its
    /// regions from the boxes).
    Mbp,
    /// Jolt's 4-wide AABB trees, one per broad-phase layer ([`crate::QuadTree`]).
    QuadTree,
    /// Uniform-grid spatial subdivision, GPU Gems 3 chapter 32 ([`crate::Grid`]).
    Grid,
    /// The default: runs on whichever of the others suits the scene it holds, measured at
    /// every update, and switches as the scene changes ([`crate::Auto`]).
    Auto,
}

impl Algorithm {
    /// Every algorithm this build provides.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::BruteForce,
        Algorithm::Abp,
        Algorithm::Sap,
        Algorithm::Mbp,
        Algorithm::QuadTree,
        Algorithm::Grid,
        Algorithm::Auto,
    ];

    /// The name used on the command line: lower case, e.g. `abp`, `brute-force`.
    #[must_use]
    pub fn cli_name(self) -> &'static str {
        match self {
            Algorithm::BruteForce => "brute-force",
            Algorithm::Abp => "abp",
            Algorithm::Sap => "sap",
            Algorithm::Mbp => "mbp",
            Algorithm::QuadTree => "quadtree",
            Algorithm::Grid => "grid",
            Algorithm::Auto => "auto",
        }
    }
}

impl Default for Algorithm {
    /// [`Algorithm::Auto`], the default broad phase.
    fn default() -> Self {
        Algorithm::Auto
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An algorithm name that [`Algorithm::from_str`] does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm {0:?}; expected one of: {list}", list = Algorithm::ALL.iter().map(|a| a.cli_name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    /// Parses a [`cli_name`](Algorithm::cli_name) or the type name, ignoring case, `-` and `_`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = |x: &str| {
            x.chars()
                .filter(|c| *c != '-' && *c != '_')
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let wanted = norm(s);
        Algorithm::ALL
            .iter()
            .copied()
            .find(|a| norm(a.cli_name()) == wanted)
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

/// Settings every algorithm understands. Algorithm-specific knobs live on the concrete types.
///
/// ```
/// use broadphase::Config;
/// let config = Config::default().with_capacity(10_000).with_parallel(false);
/// assert_eq!(config.capacity, 10_000);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// How many proxies to reserve room for (a hint; storage grows as needed).
    pub capacity: usize,
    /// The most live proxies allowed, at most [`MAX_PROXIES`].
    pub max_proxies: usize,
    /// Whether to spread work over rayon's threads (with the `parallel` feature). Results are
    /// identical either way.
    pub parallel: bool,
    /// The world, if it has bounds: a proxy whose box lies wholly outside it is out of
    /// bounds ([`BroadPhase::outside_world`]) and pairs with nothing until it comes back
    /// ([`Config::with_world_bounds`]). `None` (the default): the world has no bounds.
    pub world_bounds: Option<Aabb>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            capacity: 0,
            max_proxies: MAX_PROXIES,
            parallel: true,
            world_bounds: None,
        }
    }
}

impl Config {
    /// The same settings reserving room for `capacity` proxies.
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The same settings with at most `max_proxies` live proxies (capped at [`MAX_PROXIES`]).
    #[must_use]
    pub fn with_max_proxies(mut self, max_proxies: usize) -> Self {
        self.max_proxies = max_proxies.min(MAX_PROXIES);
        self
    }

    /// The same settings, multi-threaded or not.
    #[must_use]
    pub fn with_parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// The same settings with the world bounded by `world`, for every algorithm.
    ///
    /// A proxy whose box lies wholly outside `world` (touching it is inside) is out of bounds:
    /// the next update reports its pairs deleted, it takes part in no pair while out, and it
    /// pairs again at the update after it comes back. It keeps its id, box and description,
    /// and queries still find it. [`BroadPhase::outside_world`] lists the proxies out of
    /// bounds. PhysX offers this only with MBP's regions; here it is the same for every
    /// algorithm. Origin shifts move the world bounds with the boxes.
    ///
    /// The box must be finite with `min <= max`; inserting into a broad phase made with one
    /// that is not returns [`Error::InvalidParameter`].
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc};
    /// let world = Aabb::new([-100.0; 3], [100.0; 3]);
    /// let mut bp = broadphase::new(Algorithm::Sap, Config::default().with_world_bounds(world));
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
    /// assert_eq!(bp.update()?.created().len(), 1);
    ///
    /// // Both fall out of the world together: still overlapping, but out of bounds.
    /// bp.set_aabb(a, Aabb::new([0.0, -300.0, 0.0], [1.0, -299.0, 1.0]))?;
    /// bp.set_aabb(b, Aabb::new([0.5, -300.0, 0.5], [2.0, -298.0, 2.0]))?;
    /// assert_eq!(bp.update()?.deleted().len(), 1);
    /// assert_eq!(bp.outside_world(), [a, b]);
    /// assert!(bp.pairs().is_empty());
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn with_world_bounds(mut self, world: Aabb) -> Self {
        self.world_bounds = Some(world);
        self
    }

    /// Whether work may be spread over threads: the setting and the `parallel` feature.
    #[must_use]
    pub fn use_threads(&self) -> bool {
        cfg!(feature = "parallel") && self.parallel
    }
}

/// Creates a broad phase of the chosen algorithm.
///
/// ```
/// use broadphase::{Aabb, Algorithm, Config, ProxyDesc};
/// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
/// bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// bp.insert(Aabb::new([1.0; 3], [2.0; 3]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created().len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[must_use]
pub fn new(algorithm: Algorithm, config: Config) -> Box<dyn BroadPhase> {
    match algorithm {
        Algorithm::BruteForce => Box::new(crate::BruteForce::new(config)),
        Algorithm::Abp => Box::new(crate::Abp::new(config)),
        Algorithm::Sap => Box::new(crate::Sap::new(config)),
        Algorithm::Mbp => Box::new(crate::Mbp::new(config)),
        Algorithm::QuadTree => Box::new(crate::QuadTree::new(config)),
        Algorithm::Grid => Box::new(crate::Grid::new(config)),
        Algorithm::Auto => Box::new(crate::Auto::new(config)),
    }
}
