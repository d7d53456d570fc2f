//! What every algorithm keeps the same way: the proxies (a slot map with generations), what
//! changed since the last update, the filter rules, the persistent pairs (how many, and their
//! list as ids when asked) and the last events.
//!
//! Every public mutation is validated here, before anything changes, so that an error leaves
//! the broad phase exactly as it was. Algorithms read the changed slots in `update` and keep
//! their own structures in step.
//!
//! One concern per file: the struct, its flags and what engines read are here;
//! [`slots`] inserts and removes proxies, [`changes`] tracks what changed between updates,
//! [`bounds`] keeps the bounds of the world and shifts its origin, [`moves`] writes batches of
//! moves (on several threads through [`scatter`]), [`listing`] lists the pairs of
//! algorithms that keep them in their own lists, and [`check`] checks the invariants of all
//! of it.

mod bounds;
mod changes;
mod check;
mod listing;
mod moves;
mod scatter;
mod slots;
mod view;
mod world;

pub(crate) use view::Catchup;

use crate::filter::LayerMatrix;
use crate::slack::Trim;
use crate::{Aabb, Config, Error, Figures, Layer, Pair, PairEvents, ProxyDesc, ProxyId, Stats};
use listing::Spare;
use std::sync::OnceLock;

/// The slot is a live proxy.
const ALIVE: u8 = 1;
/// The slot was a live proxy at the end of the last update (the algorithm's structures hold it).
const WAS_IN: u8 = 2;
/// The slot is in the changed list.
const DIRTY: u8 = 4;
/// The live proxy is fixed: a copy of its description's motion, read with the other flags
/// where a pass would otherwise miss the cache on the description.
const FIXED: u8 = 8;
/// The slot's box was set (inserted or moved) since the last update.
const BOX_SET: u8 = 16;
/// Set, during [`Store::remove_batch`]'s check, on the slots the batch removes.
const LEAVING: u8 = 32;
/// The slot was removed since the last update and retired: its generation was not advanced
/// (it would have wrapped), so its last proxy's id is the one it still holds.
const RETIRED: u8 = 64;
/// The live proxy's box lies wholly outside the world bounds, as of the update in progress or
/// the last one: the engine does not hold it ([`Store::is_alive`] is false for it).
const OUT: u8 = 128;

/// The proxies, as the [`Driver`](crate::engine::Driver) keeps them for its engine: boxes,
/// descriptions and ids by slot, what changed since the last update, the filter rules and the
/// bounds of the world. An [`Engine`](crate::engine::Engine) reads it; only the driver writes.
///
/// A slot is a proxy's index ([`ProxyId::index`](crate::ProxyId::index)); slots are reused
/// after the update that follows a removal, so within one update a slot names one proxy.
#[derive(Clone, Debug)]
pub struct Store {
    aabbs: Vec<Aabb>,
    descs: Vec<ProxyDesc>,
    generations: Vec<u32>,
    flags: Vec<u8>,
    /// Slots free for reuse (a stack: the last freed is reused first).
    free: Vec<u32>,
    /// Slots removed since the last update. They are reused only after it, so that within one
    /// update a slot index names one proxy.
    pending_free: Vec<u32>,
    /// Slots inserted, moved, re-described or removed since the last update, in first-change
    /// order.
    dirty: Vec<u32>,
    len: usize,
    fixed: usize,
    /// Live proxies with a non-zero group.
    grouped: usize,
    limit: usize,
    matrix: LayerMatrix,
    /// Whether the matrix is the default (every layer collides with every layer).
    all_layers_collide: bool,
    /// Layers whose collision rules changed since the last update.
    rule_changes: u64,
    /// The layers whose rules changed before the update in progress (set by `begin_update`).
    rules_changed: u64,
    /// Origin shifts so far: an algorithm compares it with the count at its last update.
    shifts: u64,
    /// How many pairs the algorithm's own lists hold ([`Store::finish_update_listed`]).
    listed: usize,
    /// Those pairs as ids, made on the first ask after an update ([`Store::listed_pairs`]).
    listed_ids: OnceLock<Vec<Pair>>,
    /// The last list's memory, for the next one (3.4 million pairs are 55 MB: the kernel
    /// clearing fresh pages for each list took two thirds of making it).
    listed_spare: Spare,
    pub(crate) events: PairEvents,
    /// When the events' lists give their memory back.
    events_trims: [Trim; 3],
    /// Candidate overlap tests made by the last update (for stats).
    pub(crate) tests: u64,
    /// Proxies that changed in the last update (for stats).
    last_changed: usize,
    /// A box holding every live box (queries clip infinite rays to it). It only grows between
    /// the updates that tighten it (see `end_update`).
    bounds: Option<Aabb>,
    /// Boxes removed or moved since `bounds` was recomputed: it may be loose by that many.
    bounds_loose: usize,
    /// A box holding every box set since the last update, and how many live slots are
    /// [`BOX_SET`]: when that is all of them, it holds every live box, and the update takes it
    /// as the new bounds instead of reading the whole store again (a frame that moves
    /// everything made the bounds loose every time).
    set_bounds: Option<Aabb>,
    boxes_set: usize,
    /// The world bounds ([`Config::world_bounds`]): proxies wholly outside are [`OUT`].
    world: Option<Aabb>,
    /// The slots flagged [`OUT`] at the last update, sorted; a slot removed since may still
    /// be listed, until the next update.
    outside: Vec<u32>,
    /// Live slots flagged [`OUT`].
    out_count: usize,
    /// Whether large batches of moves may be spread over threads.
    parallel: bool,
    /// The lists a batch of moves out of slot order is written from, kept for the next one.
    scatter: scatter::Scatter,
}

impl Store {
    pub(crate) fn new(config: &Config) -> Self {
        let cap = config.capacity.min(crate::MAX_PROXIES);
        Self {
            aabbs: Vec::with_capacity(cap),
            descs: Vec::with_capacity(cap),
            generations: Vec::with_capacity(cap),
            flags: Vec::with_capacity(cap),
            free: Vec::new(),
            pending_free: Vec::new(),
            dirty: Vec::new(),
            len: 0,
            fixed: 0,
            grouped: 0,
            limit: config.max_proxies.min(crate::MAX_PROXIES),
            matrix: LayerMatrix::default(),
            all_layers_collide: true,
            rule_changes: 0,
            rules_changed: 0,
            shifts: 0,
            listed: 0,
            listed_ids: OnceLock::new(),
            listed_spare: Spare::default(),
            events: PairEvents::default(),
            events_trims: [Trim::default(); 3],
            tests: 0,
            last_changed: 0,
            bounds: None,
            bounds_loose: 0,
            set_bounds: None,
            boxes_set: 0,
            world: config.world_bounds,
            outside: Vec::new(),
            out_count: 0,
            parallel: config.use_threads(),
            scatter: scatter::Scatter::default(),
        }
    }

    /// The slot of a live proxy.
    #[inline]
    pub(crate) fn slot(&self, id: ProxyId) -> Result<usize, Error> {
        let i = id.index() as usize;
        match self.generations.get(i) {
            None => Err(Error::UnknownProxy { id }),
            Some(&g) if id.generation() > g => Err(Error::UnknownProxy { id }),
            Some(&g) if id.generation() == g && self.flags[i] & ALIVE != 0 => Ok(i),
            Some(_) => Err(Error::StaleProxy { id }),
        }
    }

    /// The slots inserted, moved, re-described or removed since the last update (and, during
    /// an update, those on a layer whose rules changed), each once, in first-change order.
    #[inline]
    #[must_use]
    pub fn dirty(&self) -> &[u32] {
        &self.dirty
    }

    /// Whether the slot is a live proxy the engine holds after this update: live, and not
    /// out of the world's bounds ([`Config::world_bounds`]; engines never see a proxy while
    /// it is out, as if it were removed, and see it inserted when it comes back).
    #[inline]
    #[must_use]
    pub fn is_alive(&self, slot: usize) -> bool {
        self.flags[slot] & (ALIVE | OUT) == ALIVE
    }

    /// Whether the slot is a live proxy now, in the world's bounds or not.
    #[inline]
    pub(crate) fn is_live(&self, slot: usize) -> bool {
        self.flags[slot] & ALIVE != 0
    }

    /// Whether the slot changed since the last update (is in [`dirty`](Self::dirty)).
    #[inline]
    #[must_use]
    pub fn is_dirty(&self, slot: usize) -> bool {
        self.flags[slot] & DIRTY != 0
    }

    /// Whether the slot's box was set since the last update: inserted, or moved to another
    /// box. A fresh engine's first update sees every live slot [`dirty`](Self::dirty); those
    /// whose box was not set were there, still, before it (set to the box it had is not a
    /// move).
    #[inline]
    #[must_use]
    pub fn box_set(&self, slot: usize) -> bool {
        self.flags[slot] & BOX_SET != 0
    }

    /// Whether the live proxy in `slot` is fixed (its description's motion, read from the
    /// flags).
    #[inline]
    #[must_use]
    pub fn is_fixed(&self, slot: usize) -> bool {
        debug_assert_eq!(
            self.flags[slot] & FIXED != 0,
            self.descs[slot].is_fixed(),
            "the fixed flag follows the description"
        );
        self.flags[slot] & FIXED != 0
    }

    /// Whether the engine's structure holds the slot: it was live at the last update (and the
    /// engine was not replaced since).
    #[inline]
    #[must_use]
    pub fn was_in(&self, slot: usize) -> bool {
        self.flags[slot] & WAS_IN != 0
    }

    /// The id of the live proxy in `slot`.
    #[inline]
    pub(crate) fn id_at(&self, slot: usize) -> ProxyId {
        ProxyId::from_raw_parts(slot as u32, self.generations[slot])
    }

    /// The box of the proxy in `slot` as last set (a dead slot's last box).
    #[inline]
    #[must_use]
    pub fn aabb_at(&self, slot: usize) -> &Aabb {
        &self.aabbs[slot]
    }

    /// The description of the proxy in `slot`.
    #[inline]
    #[must_use]
    pub fn desc_at(&self, slot: usize) -> &ProxyDesc {
        &self.descs[slot]
    }

    /// Whether the filter (mobility, groups, layers) lets the proxies in slots `a` and `b`
    /// pair.
    #[inline]
    #[must_use]
    pub fn allows(&self, a: usize, b: usize) -> bool {
        self.matrix.allows(&self.descs[a], &self.descs[b])
    }

    /// [`Store::allows`] for callers that never ask about two fixed proxies: while no proxy
    /// has a group and every layer collides, the filter has nothing else to say and the
    /// descriptions are not read at all.
    #[inline]
    #[must_use]
    pub fn allows_unless_both_fixed(&self, a: u32, b: u32) -> bool {
        debug_assert!(!(self.descs[a as usize].is_fixed() && self.descs[b as usize].is_fixed()));
        (self.grouped == 0 && self.all_layers_collide) || self.allows(a as usize, b as usize)
    }

    /// The number of slots ever used (live or not): the bound of slot indices.
    #[inline]
    #[must_use]
    pub fn slot_count(&self) -> usize {
        self.aabbs.len()
    }

    /// The number of proxies the engine holds after this update ([`Store::is_alive`]): the
    /// live ones but those out of the world's bounds.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len - self.out_count
    }

    /// Whether the engine holds no proxy after this update.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of live fixed proxies, in the world's bounds or not.
    #[inline]
    #[must_use]
    pub fn fixed_len(&self) -> usize {
        self.fixed
    }

    /// The number of live proxies, in the world's bounds or not.
    #[inline]
    pub(crate) fn live_len(&self) -> usize {
        self.len
    }

    pub(crate) fn aabb(&self, id: ProxyId) -> Result<Aabb, Error> {
        Ok(self.aabbs[self.slot(id)?])
    }

    pub(crate) fn desc(&self, id: ProxyId) -> Result<ProxyDesc, Error> {
        Ok(self.descs[self.slot(id)?])
    }

    /// Whether proxies on layers `a` and `b` may pair.
    #[inline]
    #[must_use]
    pub fn layers_collide(&self, a: Layer, b: Layer) -> bool {
        self.matrix.collide(a, b)
    }

    /// The figures every algorithm reports; engines add their own.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            proxies: self.len,
            fixed: self.fixed,
            dynamic: self.len - self.fixed,
            pairs: self.listed,
            created: self.events.created.len(),
            deleted: self.events.deleted.len(),
            changed: self.last_changed,
            tests: self.tests,
            memory_bytes: self.memory_bytes(),
            figures: Figures::None,
        }
    }

    fn memory_bytes(&self) -> usize {
        self.aabbs.capacity() * std::mem::size_of::<Aabb>()
            + self.descs.capacity() * std::mem::size_of::<ProxyDesc>()
            + (self.generations.capacity() + self.free.capacity() + self.dirty.capacity()) * 4
            + self.flags.capacity()
            + self.scatter.memory_bytes()
            + self.events.memory_bytes()
            + (self.listed_ids.get().map_or(0, Vec::capacity) + self.listed_spare.capacity())
                * std::mem::size_of::<Pair>()
    }
}
