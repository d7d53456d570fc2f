//! The one implementation of [`BroadPhase`]: a [`Store`] and an [`Engine`].
//!
//! Every call is validated by the store before anything changes; an update is bracketed here
//! (the store's changes handed to the engine, the engine's pair keys turned into events), so no
//! engine can skip a step of it.

use std::ops::ControlFlow;

use crate::engine::{pair_key, Engine, PairChanges};
use crate::query::{self, Live, SpatialIndex};
use crate::slack::Trim;
use crate::store::Store;
use crate::{
    Aabb, Algorithm, BroadPhase, CastHit, Config, Error, Layer, LayerMask, Obb, Pair, PairEvents,
    ProxyDesc, ProxyId, Ray, RayHit, Snapshot, Stats,
};

/// A broad phase made of the proxies' [`Store`] and an [`Engine`]: what every algorithm type
/// of this crate is (`Abp` is `Driver<AbpEngine>`, and so on), and how an engine written
/// elsewhere becomes a [`BroadPhase`].
///
/// ```
/// use broadphase::engine::{BruteForceEngine, Driver};
/// use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc};
/// let config = Config::default();
/// let mut bp = Driver::with_engine(&config, BruteForceEngine::new(&config));
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([1.0; 3], [2.0; 3]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Driver<E> {
    pub(crate) store: Store,
    pub(crate) engine: E,
    /// The engine's lists of the update in progress, kept for their memory.
    changes: PairChanges,
    /// When the lists of `changes` give their memory back.
    changes_trims: [Trim; 2],
    /// After an engine was replaced: the sorted keys of the pairs at the last update, which
    /// the fresh engine's first update is diffed against.
    before: Option<Vec<u64>>,
}

impl<E: Engine> Driver<E> {
    /// A broad phase with no proxies, run by `engine` (which must hold nothing yet: one fresh
    /// from its constructor).
    #[must_use]
    pub fn with_engine(config: &Config, engine: E) -> Self {
        Self {
            store: Store::new(config),
            engine,
            changes: PairChanges::default(),
            changes_trims: [Trim::default(); 2],
            before: None,
        }
    }

    /// The engine.
    #[must_use]
    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// The proxies, as the engine sees them.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The same proxies run by another engine, which must hold nothing yet (one fresh from
    /// its constructor). Ids, boxes, descriptions, rules, `pairs()` and the last events stay;
    /// the new engine is built from the store at the next update, which reports exactly the
    /// events the old engine would have reported. Queries before it are exact too (every proxy
    /// counts as changed until then).
    ///
    /// ```
    /// use broadphase::engine::{AbpEngine, Driver, SapEngine};
    /// use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc, SapSettings};
    /// let config = Config::default();
    /// let mut abp = broadphase::Abp::new(config.clone());
    /// let a = abp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// let b = abp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
    /// abp.update()?;
    /// let mut sap = abp.replace_engine(SapEngine::new(&config, SapSettings::default()));
    /// sap.set_aabb(b, Aabb::new([5.0; 3], [6.0; 3]))?;
    /// assert_eq!(sap.update()?.deleted(), &[Pair::new(a, b)]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn replace_engine<F: Engine>(mut self, engine: F) -> Driver<F> {
        self.hand_over();
        Driver {
            store: self.store,
            engine,
            changes: self.changes,
            changes_trims: self.changes_trims,
            before: self.before,
        }
    }

    /// [`replace_engine`](Self::replace_engine) for engines of one type (a
    /// `Driver<Box<dyn Engine>>`): puts `engine` in and returns the old one.
    pub fn set_engine(&mut self, engine: E) -> E {
        self.hand_over();
        std::mem::replace(&mut self.engine, engine)
    }

    /// A [`Snapshot`] of the proxies as they are now, for other threads to query while this
    /// broad phase moves on: a [`QuadTree`](crate::QuadTree) shares its trees with it (cheap:
    /// see [`Snapshot`]); any other engine gets a tree built over the store's boxes.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, Config, LayerMask, ProxyDesc, Sap};
    /// let mut bp = Sap::new(Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// let snapshot = bp.snapshot();
    /// bp.remove(a)?;
    /// bp.update()?;
    /// assert_eq!(snapshot.nearest([3.0; 3], 1, LayerMask::ALL)?[0].0, a);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        self.engine
            .snapshot(&self.store)
            .unwrap_or_else(|| Snapshot::build(&self.store))
    }

    /// Readies the store for a fresh engine: the pairs of the last update are listed (for
    /// `pairs()` until the next update) and kept as keys to diff against, and every proxy
    /// becomes new to the structure.
    fn hand_over(&mut self) {
        let engine = &self.engine;
        self.store.listed_pairs(|| engine.pair_lists());
        if self.before.is_none() {
            let mut keys: Vec<u64> = engine
                .pair_lists()
                .iter()
                .flat_map(|list| {
                    list.keys.iter().map(|&k| {
                        let (a, b) = (list.slots)(k);
                        pair_key(a, b)
                    })
                })
                .collect();
            keys.sort_unstable();
            self.before = Some(keys);
        }
        self.store.forget_structure();
    }

    /// The proxies and the engine's candidates, for the query driver.
    fn live(&self) -> Live<'_, Index<'_, E>> {
        Live {
            store: &self.store,
            index: Index {
                store: &self.store,
                engine: &self.engine,
            },
        }
    }
}

/// An engine and its store as the query driver's [`SpatialIndex`].
struct Index<'a, E> {
    store: &'a Store,
    engine: &'a E,
}

impl<E: Engine> SpatialIndex for Index<'_, E> {
    fn candidates(
        &self,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.engine.candidates(self.store, bounds, visit)
    }

    fn ray_candidates(
        &self,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.engine
            .ray_candidates(self.store, ray, max_t, world, visit)
    }
}

impl<E: Engine> BroadPhase for Driver<E> {
    fn algorithm(&self) -> Algorithm {
        self.engine.algorithm()
    }

    fn insert(&mut self, aabb: Aabb, desc: ProxyDesc) -> Result<ProxyId, Error> {
        self.store.insert(aabb, desc)
    }

    fn insert_batch(&mut self, items: &[(Aabb, ProxyDesc)]) -> Result<Vec<ProxyId>, Error> {
        self.store.insert_batch(items)
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), Error> {
        self.store.set_aabb(id, aabb)
    }

    fn set_aabbs(&mut self, items: &[(ProxyId, Aabb)]) -> Result<(), Error> {
        self.store.set_aabbs(items)
    }

    fn set_desc(&mut self, id: ProxyId, desc: ProxyDesc) -> Result<(), Error> {
        self.store.set_desc(id, desc)
    }

    fn remove(&mut self, id: ProxyId) -> Result<(), Error> {
        self.store.remove(id)
    }

    fn remove_batch(&mut self, ids: &[ProxyId]) -> Result<(), Error> {
        self.store.remove_batch(ids)
    }

    fn update(&mut self) -> Result<&PairEvents, Error> {
        if self.engine.restart(&self.store) {
            self.hand_over();
        }
        self.store.begin_update();
        self.changes.clear_trimmed(&mut self.changes_trims);
        self.engine.update(&self.store, &mut self.changes)?;
        if let Some(before) = self.before.take() {
            self.changes.rebase(&before);
        }
        self.store.tests = self.changes.tests;
        self.store
            .finish_update_listed(&self.changes.created, &self.changes.deleted);
        if self.store.created_every_pair() {
            self.changes_trims[0].spike();
        }
        Ok(&self.store.events)
    }

    fn events(&self) -> &PairEvents {
        &self.store.events
    }

    fn pairs(&self) -> &[Pair] {
        self.store.listed_pairs(|| self.engine.pair_lists())
    }

    fn aabb(&self, id: ProxyId) -> Result<Aabb, Error> {
        self.store.aabb(id)
    }

    fn desc(&self, id: ProxyId) -> Result<ProxyDesc, Error> {
        self.store.desc(id)
    }

    fn contains(&self, id: ProxyId) -> bool {
        self.store.slot(id).is_ok()
    }

    fn len(&self) -> usize {
        self.store.live_len()
    }

    fn stats(&self) -> Stats {
        let mut stats = self.store.stats();
        stats.memory_bytes +=
            self.changes.memory_bytes() + self.before.as_ref().map_or(0, |b| b.capacity() * 8);
        self.engine.stats(&self.store, &mut stats);
        stats
    }

    /// The store's invariants, then the engine's
    /// ([`Engine::check_structure`]), then the pairs of the last update: the engine's lists,
    /// or after the engine was replaced, the keys kept for the fresh one (which must hold
    /// none yet).
    fn check_structure(&self) -> Result<(), String> {
        self.store.check()?;
        self.engine.check_structure(&self.store)?;
        let lists = self.engine.pair_lists();
        match &self.before {
            None => self.store.check_pairs(&lists),
            Some(before) => {
                if lists.iter().any(|l| !l.keys.is_empty()) {
                    return Err("pairs: a fresh engine holds pairs before its first update".into());
                }
                if before.windows(2).any(|w| w[0] > w[1]) {
                    return Err("pairs: the keys kept for a fresh engine are not sorted".into());
                }
                self.store.check_pair_keys(before, false)
            }
        }
    }

    fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), Error> {
        self.store.shift_origin(shift)?;
        self.engine.shift_origin(shift);
        Ok(())
    }

    fn set_layers_collide(&mut self, a: Layer, b: Layer, collide: bool) -> Result<(), Error> {
        self.store.set_layers_collide(a, b, collide)
    }

    fn outside_world(&self) -> Vec<ProxyId> {
        self.store.outside_world()
    }

    fn snapshot(&self) -> Snapshot {
        Driver::snapshot(self)
    }

    fn layers_collide(&self, a: Layer, b: Layer) -> bool {
        self.store.layers_collide(a, b)
    }

    fn query_aabb(
        &self,
        aabb: Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        aabb.validate()?;
        // An engine's own answer covers the proxies it holds and the changed ones; while some
        // are out of the world's bounds (held by no engine), the shared driver answers.
        let answered = self.store.outside().is_empty()
            && self
                .engine
                .query_aabb(&self.store, &aabb, mask, visit)
                .is_some();
        if answered {
            Ok(())
        } else {
            query::query_aabb(&self.live(), &aabb, mask, visit)
        }
    }

    fn query_point(
        &self,
        p: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_point(&self.live(), p, mask, visit)
    }

    fn query_sphere(
        &self,
        center: [f32; 3],
        radius: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_sphere(&self.live(), center, radius, mask, visit)
    }

    fn query_obb(
        &self,
        obb: &Obb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::query_obb(&self.live(), obb, mask, visit)
    }

    fn ray_cast(
        &self,
        ray: &Ray,
        max_t: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::ray_cast(&self.live(), ray, max_t, mask, visit)
    }

    fn box_cast(
        &self,
        aabb: Aabb,
        motion: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(CastHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        query::box_cast(&self.live(), &aabb, motion, mask, visit)
    }

    fn nearest(
        &self,
        p: [f32; 3],
        k: usize,
        mask: LayerMask,
    ) -> Result<Vec<(ProxyId, f32)>, Error> {
        query::nearest(&self.live(), p, k, mask)
    }
}

/// Helpers for the tests of the engines' checks.
#[cfg(test)]
impl<E: Engine> Driver<E> {
    /// Asserts that the engine's check fails, saying `what`.
    pub(crate) fn assert_broken(&self, what: &str) {
        let e = self.engine.check_structure(&self.store).err();
        assert!(
            e.as_deref().is_some_and(|e| e.contains(what)),
            "wanted {what:?}, got {e:?}"
        );
    }
}
