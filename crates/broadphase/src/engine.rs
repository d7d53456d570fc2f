//! For implementors: the narrow interface an algorithm fills, and the driver that turns it into
//! a [`BroadPhase`](crate::BroadPhase).
//!
//! Everyday code never needs this module: it uses [`crate::new`] or the algorithm types
//! ([`Abp`](crate::Abp), [`Sap`](crate::Sap), ...), each of which is a [`Driver`] around one
//! engine of this module. An [`Engine`] says only what makes an algorithm different:
//!
//! - [`update`](Engine::update): bring the store's changes in (the slots in
//!   [`Store::dirty`]) and return the pair keys created and deleted since the last update;
//! - [`candidates`](Engine::candidates) (and [`ray_candidates`](Engine::ray_candidates)): the
//!   slots its structure holds that may match a query;
//! - [`pair_lists`](Engine::pair_lists): its persistent pairs, as lists of keys;
//! - [`shift_origin`](Engine::shift_origin) and [`stats`](Engine::stats): coordinates of its
//!   own, and its own figures;
//! - [`check_structure`](Engine::check_structure): its own invariants, for tests.
//!
//! The [`Driver`] does everything else once for every engine: it validates every call, owns
//! the [`Store`] (ids, boxes, descriptions, what changed, the filter), brackets each update,
//! turns keys into sorted [`PairEvents`](crate::PairEvents) named by ids, makes
//! [`pairs`](crate::BroadPhase::pairs) from the engine's lists, and answers queries exactly
//! from the engine's candidates. An engine only ever reads the store: it cannot break the
//! contract's bookkeeping.
//!
//! An engine holds nothing the store cannot give it again: a fresh engine put under a live
//! broad phase with [`Driver::replace_engine`] is built from the store at the next update,
//! which reports exactly the events the old engine would have reported.
//!
//! The crate's `docs/ARCHITECTURE.md` walks through writing an engine in another crate, with
//! [`BruteForceEngine`] as the worked example. The smallest engine, tested against every query:
//!
//! ```
//! use std::ops::ControlFlow;
//! use broadphase::engine::{pair_key, Driver, Engine, PairChanges, PairList, Store};
//! use broadphase::{Aabb, Algorithm, BroadPhase, Config, Error, Pair, ProxyDesc};
//!
//! /// Every pair tested at every update, kept as one sorted list of keys.
//! #[derive(Default)]
//! struct Naive {
//!     keys: Vec<u64>,
//! }
//!
//! impl Engine for Naive {
//!     fn algorithm(&self) -> Algorithm {
//!         Algorithm::BruteForce
//!     }
//!
//!     fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
//!         let live: Vec<u32> = (0..store.slot_count() as u32)
//!             .filter(|&s| store.is_alive(s as usize))
//!             .collect();
//!         let mut next = Vec::new();
//!         for (k, &a) in live.iter().enumerate() {
//!             for &b in &live[k + 1..] {
//!                 let (x, y) = (a as usize, b as usize);
//!                 if store.aabb_at(x).overlaps(store.aabb_at(y)) && store.allows(x, y) {
//!                     next.push(pair_key(a, b));
//!                 }
//!             }
//!         }
//!         changes.tests = (live.len() * live.len().saturating_sub(1) / 2) as u64;
//!         // Both lists are sorted: what is new was created, what is gone was deleted.
//!         changes.created.extend(next.iter().filter(|k| self.keys.binary_search(k).is_err()));
//!         changes.deleted.extend(self.keys.iter().filter(|k| next.binary_search(k).is_err()));
//!         self.keys = next;
//!         Ok(())
//!     }
//!
//!     fn pair_lists(&self) -> Vec<PairList<'_>> {
//!         vec![PairList::new(&self.keys)]
//!     }
//!
//!     fn candidates(
//!         &self,
//!         store: &Store,
//!         _bounds: &Aabb,
//!         visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
//!     ) -> ControlFlow<()> {
//!         (0..store.slot_count() as u32).try_for_each(visit)
//!     }
//!
//!     fn check_structure(&self, _store: &Store) -> Result<(), String> {
//!         match self.keys.windows(2).find(|w| w[0] >= w[1]) {
//!             Some(w) => Err(format!("keys {:#x} and {:#x} out of order", w[0], w[1])),
//!             None => Ok(()),
//!         }
//!     }
//! }
//!
//! let mut bp = Driver::with_engine(&Config::default(), Naive::default());
//! let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
//! let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
//! assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
//! assert_eq!(bp.pairs(), &[Pair::new(a, b)]);
//! # Ok::<(), Error>(())
//! ```

use std::ops::ControlFlow;

use crate::query::segment_bounds;
use crate::{Aabb, Algorithm, Error, LayerMask, ProxyId, Ray, Stats};

pub use crate::abp::AbpEngine;
pub use crate::auto::AutoEngine;
pub use crate::brute::BruteForceEngine;
pub use crate::driver::Driver;
pub use crate::grid::GridEngine;
pub use crate::mbp::MbpEngine;
pub use crate::pairs::{key_slots, pair_key, PairList};
pub use crate::quadtree::QuadTreeEngine;
pub use crate::sap::SapEngine;
pub use crate::store::Store;

/// What an [`Engine`]'s update returns: the pairs it created and deleted, as pair keys
/// ([`pair_key`]), and how many candidate box tests it made.
///
/// The driver hands the engine empty lists each update. The keys need not be sorted, but a key
/// appears at most once, never in both lists; every deleted key was a pair at the last update
/// and no created one was. A created pair's boxes overlap now and the filter allows it; a
/// deleted pair's do not, or one of its proxies is gone.
#[derive(Clone, Debug, Default)]
pub struct PairChanges {
    /// Keys of the pairs that began to overlap (or that the filter began to allow).
    pub created: Vec<u64>,
    /// Keys of the pairs that stopped overlapping, lost a proxy, or that the filter forbids.
    pub deleted: Vec<u64>,
    /// Candidate box-box tests made ([`Stats::tests`]).
    pub tests: u64,
}

impl PairChanges {
    /// Empties both lists, keeping their memory.
    pub(crate) fn clear(&mut self) {
        self.created.clear();
        self.deleted.clear();
        self.tests = 0;
    }

    /// [`PairChanges::clear`] for lists kept from one update to the next, which give their
    /// memory back after updates that use a small part of it ([`Trim`](crate::slack::Trim)).
    pub(crate) fn clear_trimmed(&mut self, trims: &mut [crate::slack::Trim; 2]) {
        trims[0].clear(&mut self.created);
        trims[1].clear(&mut self.deleted);
        self.tests = 0;
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        (self.created.capacity() + self.deleted.capacity()) * 8
    }

    /// Turns the update of an engine built from nothing (every pair it holds reported created)
    /// into the changes since `before`, the sorted keys of the pairs at the last update.
    pub(crate) fn rebase(&mut self, before: &[u64]) {
        debug_assert!(self.deleted.is_empty(), "a fresh engine held no pair");
        let mut all = std::mem::take(&mut self.created);
        all.sort_unstable();
        let (mut i, mut j) = (0, 0);
        while i < all.len() || j < before.len() {
            match (all.get(i), before.get(j)) {
                (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
                (Some(&a), Some(&b)) if a < b => {
                    self.created.push(a);
                    i += 1;
                }
                (Some(&a), None) => {
                    self.created.push(a);
                    i += 1;
                }
                (_, Some(&b)) => {
                    self.deleted.push(b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
    }
}

/// What an algorithm does that the others do not: its structure, how it brings changes in,
/// and how it finds query candidates. See the [module docs](self).
///
/// An engine works on slots (a proxy's index, [`ProxyId::index`]): the driver maps them to ids.
/// It reads the proxies from the [`Store`] it is handed and never writes them.
pub trait Engine: Send + Sync {
    /// Which algorithm this is ([`crate::BroadPhase::algorithm`]).
    fn algorithm(&self) -> Algorithm;

    /// Brings in every change since the last update: the slots in [`Store::dirty`] were
    /// inserted, moved, re-described or removed (or are on a layer whose rules changed), and
    /// [`Store::was_in`] says which of them the engine held. Reports the pairs created and
    /// deleted into `changes` (empty when called).
    ///
    /// # Errors
    /// Whatever the engine cannot do (a lost GPU device). The store keeps its changes: a
    /// fresh engine put in with [`Driver::replace_engine`] is built from it.
    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error>;

    /// The persistent pairs as of the last update, as lists of keys (all of them, once each).
    fn pair_lists(&self) -> Vec<PairList<'_>>;

    /// Visits, once each, every slot the structure holds whose box (as of the last update)
    /// may overlap `bounds`; extra slots are allowed, and dead or changed ones are skipped by
    /// the driver, which tests every candidate exactly. Stops when `visit` breaks.
    fn candidates(
        &self,
        store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()>;

    /// Visits, once each, every slot whose box may be hit by `ray` within `max_t`; `world`
    /// holds every box. The default asks [`candidates`](Engine::candidates) for the bounds of
    /// the ray's segment in `world`; trees and grids walk along the ray instead.
    fn ray_candidates(
        &self,
        store: &Store,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match segment_bounds(ray, max_t, world) {
            Some(b) => self.candidates(store, &b, visit),
            None => ControlFlow::Continue(()),
        }
    }

    /// Answers a box query in full, for an engine whose structure holds the exact box of every
    /// unchanged proxy (so the driver's second look at each candidate would be wasted): every
    /// live proxy on a layer in `mask` whose current box overlaps `aabb` (already validated),
    /// changed ones included, as ids. `None`, the default, lets the driver do it from
    /// [`candidates`](Engine::candidates).
    fn query_aabb(
        &self,
        store: &Store,
        aabb: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Option<ControlFlow<()>> {
        let _ = (store, aabb, mask, visit);
        None
    }

    /// Checks the engine's own invariants against `store` as it was at the last update (the
    /// slots the structure holds are those [`Store::was_in`] names; a slot not
    /// [`dirty`](Store::is_dirty) still has the box and description the engine saw), and
    /// returns a description of the first one broken. For tests and debugging: it walks the
    /// whole structure, in about O(n log n), and changes nothing.
    ///
    /// The driver checks the store and the pair lists itself
    /// ([`BroadPhase::check_structure`](crate::BroadPhase::check_structure)); an engine checks
    /// what only it knows: that its lists are sorted, that it holds each slot where its rules
    /// put it, that its counts match. There is no default: an engine that has nothing of its
    /// own to check says so.
    ///
    /// # Errors
    /// The first broken invariant, in words.
    fn check_structure(&self, store: &Store) -> Result<(), String>;

    /// The store has just moved every box by `-shift`: an engine with coordinates of its own
    /// (regions, say) moves them too. Every live proxy is dirty until the next update.
    fn shift_origin(&mut self, shift: [f32; 3]) {
        let _ = shift;
    }

    /// Adds the engine's own figures to `stats`, which holds the driver's: its heap bytes to
    /// `memory_bytes`, and its counters.
    fn stats(&self, store: &Store, stats: &mut Stats) {
        let _ = (store, stats);
    }

    /// A [`Snapshot`](crate::Snapshot) of the proxies as they are now (`store`), sharing the
    /// engine's structure where it can be shared. `None`, the default, lets the driver build
    /// one from the store's boxes ([`Driver::snapshot`]).
    fn snapshot(&self, store: &Store) -> Option<crate::Snapshot> {
        let _ = store;
        None
    }

    /// Called by the driver before each update, with the changes since the last one still in
    /// `store`: `true` says the engine will build its structure from nothing at this update, as
    /// a fresh one does. The driver then hands the proxies over as
    /// [`Driver::set_engine`] does (every proxy becomes new to the structure, and the pairs of
    /// the last update are kept to diff against) after reading this engine's
    /// [`pair_lists`](Engine::pair_lists) one last time; the update that follows must hold
    /// nothing before it starts. `false`, the default, changes nothing.
    ///
    /// This is how an engine replaces what it runs on while ids and events stay
    /// ([`crate::Auto`] switching algorithms as the scene changes).
    fn restart(&mut self, store: &Store) -> bool {
        let _ = store;
        false
    }
}

impl<E: Engine + ?Sized> Engine for Box<E> {
    fn algorithm(&self) -> Algorithm {
        (**self).algorithm()
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        (**self).update(store, changes)
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        (**self).pair_lists()
    }

    fn candidates(
        &self,
        store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        (**self).candidates(store, bounds, visit)
    }

    fn ray_candidates(
        &self,
        store: &Store,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        (**self).ray_candidates(store, ray, max_t, world, visit)
    }

    fn query_aabb(
        &self,
        store: &Store,
        aabb: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Option<ControlFlow<()>> {
        (**self).query_aabb(store, aabb, mask, visit)
    }

    fn check_structure(&self, store: &Store) -> Result<(), String> {
        (**self).check_structure(store)
    }

    fn shift_origin(&mut self, shift: [f32; 3]) {
        (**self).shift_origin(shift);
    }

    fn stats(&self, store: &Store, stats: &mut Stats) {
        (**self).stats(store, stats);
    }

    fn restart(&mut self, store: &Store) -> bool {
        (**self).restart(store)
    }

    fn snapshot(&self, store: &Store) -> Option<crate::Snapshot> {
        (**self).snapshot(store)
    }
}

/// A fresh engine of `algorithm` with its default settings, boxed: what [`crate::new`] puts
/// under its driver, and what a caller swapping engines at run time builds.
///
/// ```
/// use broadphase::engine::{self, Driver};
/// use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc};
/// let config = Config::default();
/// let mut bp = Driver::with_engine(&config, engine::boxed(Algorithm::Abp, &config));
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
/// bp.update()?;
/// // Another engine under the same proxies: built from the store at the next update.
/// bp.set_engine(engine::boxed(Algorithm::Sap, &config));
/// assert!(bp.update()?.is_empty());
/// assert_eq!(bp.algorithm(), Algorithm::Sap);
/// assert_eq!(bp.pairs().len(), 1);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[must_use]
pub fn boxed(algorithm: Algorithm, config: &crate::Config) -> Box<dyn Engine> {
    match algorithm {
        Algorithm::BruteForce => Box::new(BruteForceEngine::new(config)),
        Algorithm::Abp => Box::new(AbpEngine::new(config, crate::AbpSettings::default())),
        Algorithm::Sap => Box::new(SapEngine::new(config, crate::SapSettings::default())),
        Algorithm::Mbp => Box::new(MbpEngine::new(config, crate::MbpTuning::default())),
        Algorithm::QuadTree => Box::new(QuadTreeEngine::new(
            config,
            crate::QuadTreeSettings::default(),
        )),
        Algorithm::Grid => Box::new(GridEngine::new(config, crate::GridSettings::default())),
        Algorithm::Auto => Box::new(AutoEngine::new(config, crate::AutoSettings::default())),
    }
}
