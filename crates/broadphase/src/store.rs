//! What every algorithm keeps the same way: the proxies (a slot map with generations), what
//! changed since the last update, the filter rules, the persistent pairs (how many, and their
//! list as ids when asked) and the last events.
//!
//! Every public mutation is validated here, before anything changes, so that an error leaves
//! the broad phase exactly as it was. Algorithms read the changed slots in `update` and keep
//! their own structures in step.

use crate::filter::{check_layer, LayerMatrix};
use crate::pairs::{key_slots, PairList};
use crate::prefetch::{prefetch, prefetch_whole};
use crate::{Aabb, Config, Error, Layer, Pair, PairEvents, ProxyDesc, ProxyId, Stats};
use std::sync::{Mutex, OnceLock, PoisonError};

/// How many items ahead [`Store::set_aabbs`], [`Store::insert_batch`] and
/// [`Store::remove_batch`] ask for a proxy's entries.
const MOVE_AHEAD: usize = 8;
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

/// Flags `slot` as changed and lists it, unless it is already.
#[inline(always)]
fn mark_changed(flags: &mut u8, dirty: &mut Vec<u32>, slot: usize) {
    if *flags & DIRTY == 0 {
        *flags |= DIRTY;
        dirty.push(slot as u32);
    }
}

/// The [`FIXED`] flag of a description.
fn fixed_flag(desc: &ProxyDesc) -> u8 {
    if desc.is_fixed() {
        FIXED
    } else {
        0
    }
}

/// What [`write_moves`] did: changed slots listed, slots newly [`BOX_SET`], and the union of
/// the boxes written.
struct Written {
    changed: usize,
    newly_set: usize,
    lo: [f32; 3],
    hi: [f32; 3],
}

impl Written {
    /// Nothing written.
    const NONE: Self = Self {
        changed: 0,
        newly_set: 0,
        lo: [f32::INFINITY; 3],
        hi: [f32::NEG_INFINITY; 3],
    };

    /// Widens the union by a written box, compared plainly (validated boxes have no NaN;
    /// `f32::min` handles NaN at a cost in a loop this hot).
    #[inline(always)]
    fn grow(&mut self, aabb: &Aabb) {
        for a in 0..3 {
            self.lo[a] = if aabb.min[a] < self.lo[a] {
                aabb.min[a]
            } else {
                self.lo[a]
            };
            self.hi[a] = if aabb.max[a] > self.hi[a] {
                aabb.max[a]
            } else {
                self.hi[a]
            };
        }
    }

    /// Adds what another piece wrote.
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    fn add(&mut self, other: &Written) {
        self.changed += other.changed;
        self.newly_set += other.newly_set;
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(other.lo[a]);
            self.hi[a] = self.hi[a].max(other.hi[a]);
        }
    }
}

/// Pass two of [`Store::set_aabbs`] on the part of the store's arrays that starts at slot
/// `base` (checked moves of live proxies within it): writes the boxes, flags the slots and
/// lists the newly changed ones at the front of `dirty` (as long as `items`).
///
/// The union of the boxes stays in registers, per axis and compared plainly as in
/// `recompute_bounds` (the boxes were validated). The changed slots are written into room made
/// beforehand and counted without a branch: pushing kept the list's length going to memory
/// and back at every box.
fn write_moves(
    aabbs: &mut [Aabb],
    flags: &mut [u8],
    base: usize,
    items: &[(ProxyId, Aabb)],
    dirty: &mut [u32],
) -> Written {
    let mut w = Written::NONE;
    for (k, &(id, aabb)) in items.iter().enumerate() {
        if let Some((ahead, _)) = items.get(k + MOVE_AHEAD) {
            let i = (ahead.index() as usize).wrapping_sub(base);
            if let (Some(a), Some(f)) = (aabbs.get(i), flags.get(i)) {
                prefetch_whole(a);
                prefetch(f);
            }
        }
        // Checked: a live slot within this part.
        let i = id.index() as usize - base;
        aabbs[i] = aabb;
        w.grow(&aabb);
        let f = flags[i];
        flags[i] = f | DIRTY | BOX_SET;
        // In bounds: at most one entry per item.
        dirty[w.changed] = id.index();
        w.changed += usize::from(f & DIRTY == 0);
        w.newly_set += usize::from(f & BOX_SET == 0);
    }
    w
}

/// The id the proxy in `slot` had at the last update, for a slot that held one then: its id
/// now if it is still live (a slot is reused only after the update that follows its removal),
/// else the id it had before its removal advanced its generation ([`RETIRED`]: did not).
#[inline]
fn id_at_last_update(flags: &[u8], generations: &[u32], slot: u32) -> ProxyId {
    let s = slot as usize;
    let generation = if flags[s] & (ALIVE | RETIRED) != 0 {
        generations[s]
    } else {
        generations[s].wrapping_sub(1)
    };
    ProxyId::from_raw_parts(slot, generation)
}

/// A list kept for reuse behind `&self` (a lock that is never contended: only the first
/// [`Store::listed_pairs`] after an update takes it). A clone starts empty.
#[derive(Debug, Default)]
struct Spare(Mutex<Vec<Pair>>);

impl Spare {
    fn take(&self) -> Vec<Pair> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn get_mut(&mut self) -> &mut Vec<Pair> {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }

    fn capacity(&self) -> usize {
        self.0.lock().map_or(0, |v| v.capacity())
    }
}

impl Clone for Spare {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Pairs per task when [`Store::listed_pairs`] makes a long list on several threads. Tiny with
/// the `testing` feature, so that the differential suite makes lists that way.
#[cfg(not(feature = "testing"))]
const LIST_PIECE: usize = 1 << 14;
#[cfg(feature = "testing")]
const LIST_PIECE: usize = 4;

/// Moves per batch from which [`Store::set_aabbs`] spreads them over threads.
const PARALLEL_MOVES: usize = 1 << 15;

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
    /// Whether large batches of moves may be spread over threads.
    parallel: bool,
    /// The lists a batch of moves out of slot order is written from, kept for the next one.
    scatter: par::Scatter,
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
            tests: 0,
            last_changed: 0,
            bounds: None,
            bounds_loose: 0,
            set_bounds: None,
            boxes_set: 0,
            parallel: config.use_threads(),
            scatter: par::Scatter::default(),
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

    fn mark_dirty(&mut self, slot: usize) {
        mark_changed(&mut self.flags[slot], &mut self.dirty, slot);
    }

    fn check_new(&self, aabb: &Aabb, desc: &ProxyDesc) -> Result<(), Error> {
        aabb.validate()?;
        check_layer(desc.layer)
    }

    fn check_room(&self, extra: usize) -> Result<(), Error> {
        if self.len + extra > self.limit {
            Err(Error::CapacityExceeded { limit: self.limit })
        } else {
            Ok(())
        }
    }

    /// Inserts a proxy already checked by `check_new` and `check_room`.
    fn insert_checked(&mut self, aabb: Aabb, desc: ProxyDesc) -> ProxyId {
        let slot = match self.free.pop() {
            Some(s) => {
                let s = s as usize;
                self.aabbs[s] = aabb;
                self.descs[s] = desc;
                // WAS_IN stays as the last update left it (clear, since the slot was freed).
                self.flags[s] = ALIVE | BOX_SET | fixed_flag(&desc);
                s
            }
            None => {
                self.aabbs.push(aabb);
                self.descs.push(desc);
                self.generations.push(0);
                self.flags.push(ALIVE | BOX_SET | fixed_flag(&desc));
                self.aabbs.len() - 1
            }
        };
        self.len += 1;
        self.boxes_set += 1;
        self.grow_bounds(&aabb);
        self.fixed += usize::from(desc.is_fixed());
        self.grouped += usize::from(desc.group.0 != 0);
        self.mark_dirty(slot);
        ProxyId::from_raw_parts(slot as u32, self.generations[slot])
    }

    pub(crate) fn insert(&mut self, aabb: Aabb, desc: ProxyDesc) -> Result<ProxyId, Error> {
        self.check_new(&aabb, &desc)?;
        self.check_room(1)?;
        Ok(self.insert_checked(aabb, desc))
    }

    /// All or nothing: every item is checked before the first is inserted.
    pub(crate) fn insert_batch(
        &mut self,
        items: &[(Aabb, ProxyDesc)],
    ) -> Result<Vec<ProxyId>, Error> {
        for (aabb, desc) in items {
            self.check_new(aabb, desc)?;
        }
        self.check_room(items.len())?;
        // Freed slots are reused last freed first, and lie all over the store: the entries of
        // the slot the item [`MOVE_AHEAD`] places on will take are asked for ahead.
        Ok(items
            .iter()
            .map(|&(aabb, desc)| {
                if let Some(&ahead) = self.free.iter().rev().nth(MOVE_AHEAD) {
                    let i = ahead as usize;
                    prefetch_whole(&self.aabbs[i]);
                    prefetch(&self.descs[i]);
                    prefetch(&self.flags[i]);
                    prefetch(&self.generations[i]);
                }
                self.insert_checked(aabb, desc)
            })
            .collect())
    }

    pub(crate) fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), Error> {
        let slot = self.slot(id)?;
        aabb.validate()?;
        self.aabbs[slot] = aabb;
        self.grow_bounds(&aabb);
        self.bounds_loose += 1;
        self.boxes_set += usize::from(self.flags[slot] & BOX_SET == 0);
        self.flags[slot] |= BOX_SET;
        self.mark_dirty(slot);
        Ok(())
    }

    /// All or nothing: every item is checked before the first box is written. A frame's moves
    /// after churn come in no slot order, and each proxy's entries cost a trip to memory: the
    /// entries of the item [`MOVE_AHEAD`] places on are asked for before they are needed.
    ///
    /// A large batch in increasing slot order (a frame that moves everything, handed over in
    /// the order the proxies were made) is checked and written by several threads, each its
    /// own piece of the batch and so its own range of slots: what a frame does on one thread
    /// before the algorithm can start. A large batch in another order (after churn, reused
    /// slots are out of order) is sorted out by slot range first, then each range written by
    /// its own thread. The result is the one of a single thread.
    pub(crate) fn set_aabbs(&mut self, items: &[(ProxyId, Aabb)]) -> Result<(), Error> {
        let pieces = self.pieces_for(items.len());
        let mut scatter = std::mem::take(&mut self.scatter);
        let checked = if pieces > 1 {
            par::check_pieces(self, items, pieces, &mut scatter)
        } else {
            self.check_moves(items).map(|_| false)
        };
        let increasing = match checked {
            Ok(increasing) => increasing,
            Err(e) => {
                self.scatter = scatter;
                return Err(e);
            }
        };
        debug_assert!(!increasing || items.windows(2).all(|w| w[0].0.index() < w[1].0.index()));
        let mut dirty = std::mem::take(&mut self.dirty);
        let before = dirty.len();
        dirty.resize(before + items.len(), 0);
        let written = if increasing {
            par::write_pieces(self, items, pieces, &mut dirty[before..])
        } else if pieces > 1 {
            par::write_scattered(self, items, &mut scatter, &mut dirty[before..])
        } else {
            write_moves(
                &mut self.aabbs,
                &mut self.flags,
                0,
                items,
                &mut dirty[before..],
            )
        };
        dirty.truncate(before + written.changed);
        self.dirty = dirty;
        self.scatter = scatter;
        self.boxes_set += written.newly_set;
        if !items.is_empty() {
            self.grow_bounds(&Aabb::new(written.lo, written.hi));
        }
        self.bounds_loose += items.len();
        Ok(())
    }

    /// How many threads [`Store::set_aabbs`] spreads a batch of `len` moves over.
    fn pieces_for(&self, len: usize) -> usize {
        if self.parallel && len >= PARALLEL_MOVES {
            crate::par::threads().min(len / (PARALLEL_MOVES / 2)).max(1)
        } else {
            1
        }
    }

    /// Pass one of [`Store::set_aabbs`]: the first item that is not a live proxy with a valid
    /// box, as its error; else whether the items' slots increase.
    fn check_moves(&self, items: &[(ProxyId, Aabb)]) -> Result<bool, Error> {
        let mut increasing = true;
        let mut last = None;
        for (k, (id, aabb)) in items.iter().enumerate() {
            if let Some((ahead, _)) = items.get(k + MOVE_AHEAD) {
                let i = ahead.index() as usize;
                if let (Some(g), Some(f)) = (self.generations.get(i), self.flags.get(i)) {
                    prefetch(g);
                    prefetch(f);
                }
            }
            self.slot(*id)?;
            aabb.validate()?;
            increasing &= last < Some(id.index());
            last = Some(id.index());
        }
        Ok(increasing)
    }

    pub(crate) fn set_desc(&mut self, id: ProxyId, desc: ProxyDesc) -> Result<(), Error> {
        let slot = self.slot(id)?;
        check_layer(desc.layer)?;
        let old = self.descs[slot];
        self.fixed = self.fixed + usize::from(desc.is_fixed()) - usize::from(old.is_fixed());
        self.grouped =
            self.grouped + usize::from(desc.group.0 != 0) - usize::from(old.group.0 != 0);
        self.descs[slot] = desc;
        self.flags[slot] = (self.flags[slot] & !FIXED) | fixed_flag(&desc);
        self.mark_dirty(slot);
        Ok(())
    }

    pub(crate) fn remove(&mut self, id: ProxyId) -> Result<(), Error> {
        let slot = self.slot(id)?;
        self.remove_slot(slot);
        Ok(())
    }

    /// Removes the live proxy in `slot`.
    fn remove_slot(&mut self, slot: usize) {
        self.boxes_set -= usize::from(self.flags[slot] & BOX_SET != 0);
        self.flags[slot] &= !(ALIVE | BOX_SET);
        self.len -= 1;
        self.bounds_loose += 1;
        self.fixed -= usize::from(self.descs[slot].is_fixed());
        self.grouped -= usize::from(self.descs[slot].group.0 != 0);
        // A slot whose generation would wrap is retired rather than reused, so that an old id
        // can never become valid again.
        if let Some(next) = self.generations[slot].checked_add(1) {
            self.generations[slot] = next;
            self.pending_free.push(slot as u32);
        } else {
            self.flags[slot] |= RETIRED;
        }
        self.mark_dirty(slot);
    }

    /// All or nothing: every id is checked, and marked so that one listed twice is caught,
    /// before the first removal (the marks are taken back if one fails). Removed proxies lie
    /// all over the store: the entries of the id [`MOVE_AHEAD`] places on are asked for
    /// before they are needed, in both passes.
    pub(crate) fn remove_batch(&mut self, ids: &[ProxyId]) -> Result<(), Error> {
        let ahead = |store: &Self, k: usize| {
            if let Some(next) = ids.get(k + MOVE_AHEAD) {
                let i = next.index() as usize;
                if let (Some(g), Some(f), Some(d)) = (
                    store.generations.get(i),
                    store.flags.get(i),
                    store.descs.get(i),
                ) {
                    prefetch(g);
                    prefetch(f);
                    prefetch(d);
                }
            }
        };
        for (k, &id) in ids.iter().enumerate() {
            ahead(self, k);
            let checked = self.slot(id).and_then(|slot| {
                if self.flags[slot] & LEAVING != 0 {
                    // Listed before in this batch: removing it again would find it stale.
                    Err(Error::StaleProxy { id })
                } else {
                    Ok(slot)
                }
            });
            match checked {
                Ok(slot) => self.flags[slot] |= LEAVING,
                Err(e) => {
                    for done in &ids[..k] {
                        self.flags[done.index() as usize] &= !LEAVING;
                    }
                    return Err(e);
                }
            }
        }
        for (k, &id) in ids.iter().enumerate() {
            ahead(self, k);
            let slot = id.index() as usize;
            self.flags[slot] &= !LEAVING;
            self.remove_slot(slot);
        }
        Ok(())
    }

    /// Moves every box by `-shift` (the new origin is at `shift` in the old coordinates).
    pub(crate) fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), Error> {
        if shift.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteShift { shift });
        }
        let offset = shift.map(|v| -v);
        for slot in 0..self.aabbs.len() {
            if self.flags[slot] & ALIVE != 0 && !self.aabbs[slot].translated(offset).is_valid() {
                return Err(Error::ShiftOverflow {
                    shift,
                    id: self.id_at(slot),
                });
            }
        }
        for slot in 0..self.aabbs.len() {
            if self.flags[slot] & ALIVE != 0 {
                self.aabbs[slot] = self.aabbs[slot].translated(offset);
                self.mark_dirty(slot);
            }
        }
        self.recompute_bounds();
        // The union of the boxes set since the last update may hold boxes' old places, which
        // the shift can carry past the float range (a box set back from near -f32::MAX, then
        // shifted there again, made it -inf, and Abp's ray queries lost every box). Every live
        // box is in the bounds just recomputed: they hold the boxes set, where they are now.
        if self.set_bounds.is_some() {
            self.set_bounds = self.bounds;
        }
        self.shifts += 1;
        Ok(())
    }

    /// How many origin shifts succeeded so far: an algorithm that remembers the count at its
    /// last update knows whether every box moved by a shift since.
    #[inline]
    #[must_use]
    pub fn shift_count(&self) -> u64 {
        self.shifts
    }

    /// The layers (one bit each) whose collision rules changed before the update in progress:
    /// the proxies on them are dirty because the filter changed, whether or not they moved.
    #[inline]
    #[must_use]
    pub fn rules_changed(&self) -> u64 {
        self.rules_changed
    }

    pub(crate) fn set_layers_collide(
        &mut self,
        a: Layer,
        b: Layer,
        collide: bool,
    ) -> Result<(), Error> {
        if self.matrix.set(a, b, collide)? {
            self.all_layers_collide = self.matrix == LayerMatrix::default();
            // Every pair the change affects has a proxy on layer `a`: re-testing those finds
            // the pairs now allowed and drops the ones now forbidden.
            self.rule_changes |= 1 << a.0;
        }
        Ok(())
    }

    /// Whether proxies on layers `a` and `b` may pair.
    #[inline]
    #[must_use]
    pub fn layers_collide(&self, a: Layer, b: Layer) -> bool {
        self.matrix.collide(a, b)
    }

    /// Starts an update: clears the last events and turns rule changes into changed proxies.
    pub(crate) fn begin_update(&mut self) {
        self.events.clear();
        self.tests = 0;
        self.rules_changed = self.rule_changes;
        if self.rule_changes != 0 {
            for slot in 0..self.aabbs.len() {
                if self.flags[slot] & ALIVE != 0
                    && (self.rule_changes >> self.descs[slot].layer.0) & 1 != 0
                {
                    self.mark_dirty(slot);
                }
            }
            self.rule_changes = 0;
        }
    }

    /// Ends an update of an algorithm that keeps its pairs itself (in sorted lists, or Sap's
    /// hash table) and diffed them: `created` and `deleted` hold pair keys, without duplicates
    /// and none in both; every deleted key was a pair of the last update, no created one was.
    /// No pair set is kept here: the events name the proxies by their ids at the time
    /// ([`id_at_last_update`] for the deleted pairs, whose proxies may have been removed
    /// since), and the list of pairs is made only when asked ([`Store::listed_pairs`]).
    pub(crate) fn finish_update_listed(&mut self, created: &[u64], deleted: &[u64]) {
        debug_assert!(self.listed + created.len() >= deleted.len());
        self.listed = (self.listed + created.len()).saturating_sub(deleted.len());
        if !(created.is_empty() && deleted.is_empty()) {
            // The list of the last pairs is stale (unchanged pairs keep their ids: a removed
            // proxy's pairs are deleted, so the ids of the pairs left still hold).
            if let Some(list) = self.listed_ids.take() {
                *self.listed_spare.get_mut() = list;
            }
        }
        let (flags, generations) = (&self.flags, &self.generations);
        let now = |slot: u32| ProxyId::from_raw_parts(slot, generations[slot as usize]);
        let then = |slot: u32| id_at_last_update(flags, generations, slot);
        let events = &mut self.events;
        events.created.extend(created.iter().map(|&k| {
            let (a, b) = key_slots(k);
            Pair::new(now(a), now(b))
        }));
        events.deleted.extend(deleted.iter().map(|&k| {
            let (a, b) = key_slots(k);
            Pair::new(then(a), then(b))
        }));
        self.events.sort(self.parallel);
        self.end_update();
    }

    /// The pairs of the last update of an algorithm that keeps them in its own lists
    /// ([`Store::finish_update_listed`]), in the order of `lists`' lists and keys. Made on the
    /// first call after an update (a long list on several threads, in pieces), then kept until
    /// the next update that changes them; the ids are those of the last update, even for a
    /// proxy removed since.
    pub(crate) fn listed_pairs<'a>(&self, lists: impl FnOnce() -> Vec<PairList<'a>>) -> &[Pair] {
        self.listed_ids.get_or_init(|| {
            let lists = lists();
            let total = lists.iter().map(|l| l.keys.len()).sum();
            debug_assert_eq!(total, self.listed, "the lists hold every pair");
            // Every place is written below: the last list's pairs are overwritten where they
            // lie, and only a longer list's tail is filled first.
            let mut out = self.listed_spare.take();
            let none = ProxyId::from_raw_parts(0, 0);
            out.resize(total, Pair::new(none, none));
            let mut pieces = Vec::with_capacity(lists.len() + total / LIST_PIECE);
            let mut rest = &mut out[..];
            for list in &lists {
                for keys in list.keys.chunks(LIST_PIECE) {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(keys.len());
                    pieces.push((head, keys, list.slots));
                    rest = tail;
                }
            }
            let then = |slot: u32| id_at_last_update(&self.flags, &self.generations, slot);
            let parallel = self.parallel && total >= 2 * LIST_PIECE;
            crate::par::each_mut(parallel, &mut pieces, |_, (out, keys, slots)| {
                for (pair, &k) in out.iter_mut().zip(keys.iter()) {
                    let (a, b) = slots(k);
                    *pair = Pair::new(then(a), then(b));
                }
            });
            out
        })
    }

    #[inline]
    fn grow_bounds(&mut self, aabb: &Aabb) {
        let grow = |b: Option<Aabb>| Some(b.map_or(*aabb, |b| b.union(aabb)));
        self.bounds = grow(self.bounds);
        self.set_bounds = grow(self.set_bounds);
    }

    fn recompute_bounds(&mut self) {
        self.bounds_loose = 0;
        // Per axis minima and maxima in locals (growing `self.bounds` box by box stalled on
        // store forwarding), compared plainly: boxes are finite, so no NaN handling is needed
        // (it doubled the loop). A dead slot's stale box is skipped.
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for (b, &f) in self.aabbs.iter().zip(&self.flags) {
            if f & ALIVE != 0 {
                for a in 0..3 {
                    lo[a] = if b.min[a] < lo[a] { b.min[a] } else { lo[a] };
                    hi[a] = if b.max[a] > hi[a] { b.max[a] } else { hi[a] };
                }
            }
        }
        self.bounds = (self.len > 0).then(|| Aabb::new(lo, hi));
    }

    /// A box holding every live box (not always the tightest), or `None` when there is none.
    #[inline]
    #[must_use]
    pub fn bounds(&self) -> Option<Aabb> {
        if self.len == 0 {
            None
        } else {
            self.bounds
        }
    }

    /// Makes every proxy new to the structure, for a fresh engine: no slot is held
    /// ([`was_in`](Self::was_in)) and every live one is dirty, so that the next update builds
    /// the engine from the store and queries until then test every proxy directly.
    pub(crate) fn forget_structure(&mut self) {
        for slot in 0..self.flags.len() {
            self.flags[slot] &= !WAS_IN;
            if self.flags[slot] & ALIVE != 0 {
                self.mark_dirty(slot);
            }
        }
    }

    /// Forgets what changed and releases the removed slots.
    fn end_update(&mut self) {
        // Tighten the bounds once enough boxes moved or left to make them loose: amortised
        // O(1) per change.
        if self.boxes_set == self.len && self.len > 0 {
            self.bounds = self.set_bounds;
            self.bounds_loose = 0;
        } else if self.bounds_loose > self.len / 4 + 64 {
            self.recompute_bounds();
        }
        (self.set_bounds, self.boxes_set) = (None, 0);
        self.last_changed = self.dirty.len();
        for &s in &self.dirty {
            let s = s as usize;
            let alive = self.flags[s] & ALIVE;
            let mut f = alive;
            if alive != 0 {
                f |= WAS_IN | (self.flags[s] & FIXED);
            }
            self.flags[s] = f;
        }
        self.dirty.clear();
        self.free.append(&mut self.pending_free);
    }

    /// The slots inserted, moved, re-described or removed since the last update (and, during
    /// an update, those on a layer whose rules changed), each once, in first-change order.
    #[inline]
    #[must_use]
    pub fn dirty(&self) -> &[u32] {
        &self.dirty
    }

    /// Whether the slot is a live proxy now.
    #[inline]
    #[must_use]
    pub fn is_alive(&self, slot: usize) -> bool {
        self.flags[slot] & ALIVE != 0
    }

    /// Whether the slot changed since the last update (is in [`dirty`](Self::dirty)).
    #[inline]
    #[must_use]
    pub fn is_dirty(&self, slot: usize) -> bool {
        self.flags[slot] & DIRTY != 0
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

    /// The number of live proxies.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no live proxies.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn aabb(&self, id: ProxyId) -> Result<Aabb, Error> {
        Ok(self.aabbs[self.slot(id)?])
    }

    pub(crate) fn desc(&self, id: ProxyId) -> Result<ProxyDesc, Error> {
        Ok(self.descs[self.slot(id)?])
    }

    /// The figures every algorithm reports; algorithms add their own counters.
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
            counters: Vec::new(),
        }
    }

    fn memory_bytes(&self) -> usize {
        self.aabbs.capacity() * std::mem::size_of::<Aabb>()
            + self.descs.capacity() * std::mem::size_of::<ProxyDesc>()
            + (self.generations.capacity() + self.free.capacity() + self.dirty.capacity()) * 4
            + self.flags.capacity()
            + self.scatter.memory_bytes()
            + (self.listed_ids.get().map_or(0, Vec::capacity) + self.listed_spare.capacity())
                * std::mem::size_of::<Pair>()
    }
}

/// Implements the `BroadPhase` methods that every algorithm forwards to its `store` field
/// unchanged. Each algorithm writes `update`, `pairs`, `algorithm` and `stats` itself;
/// `forward_to_store!(except shift_origin)` leaves `shift_origin` to it too (an algorithm that
/// keeps coordinates of its own, such as Mbp's regions, moves them as well).
macro_rules! forward_to_store {
    () => {
        $crate::store::forward_to_store!(except shift_origin);

        fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), $crate::Error> {
            self.store.shift_origin(shift)
        }
    };
    (except shift_origin) => {
        fn insert(
            &mut self,
            aabb: $crate::Aabb,
            desc: $crate::ProxyDesc,
        ) -> Result<$crate::ProxyId, $crate::Error> {
            self.store.insert(aabb, desc)
        }

        fn insert_batch(
            &mut self,
            items: &[($crate::Aabb, $crate::ProxyDesc)],
        ) -> Result<Vec<$crate::ProxyId>, $crate::Error> {
            self.store.insert_batch(items)
        }

        fn set_aabb(
            &mut self,
            id: $crate::ProxyId,
            aabb: $crate::Aabb,
        ) -> Result<(), $crate::Error> {
            self.store.set_aabb(id, aabb)
        }

        fn set_aabbs(
            &mut self,
            items: &[($crate::ProxyId, $crate::Aabb)],
        ) -> Result<(), $crate::Error> {
            self.store.set_aabbs(items)
        }

        fn set_desc(
            &mut self,
            id: $crate::ProxyId,
            desc: $crate::ProxyDesc,
        ) -> Result<(), $crate::Error> {
            self.store.set_desc(id, desc)
        }

        fn remove(&mut self, id: $crate::ProxyId) -> Result<(), $crate::Error> {
            self.store.remove(id)
        }

        fn remove_batch(&mut self, ids: &[$crate::ProxyId]) -> Result<(), $crate::Error> {
            self.store.remove_batch(ids)
        }

        fn events(&self) -> &$crate::PairEvents {
            &self.store.events
        }

        fn aabb(&self, id: $crate::ProxyId) -> Result<$crate::Aabb, $crate::Error> {
            self.store.aabb(id)
        }

        fn desc(&self, id: $crate::ProxyId) -> Result<$crate::ProxyDesc, $crate::Error> {
            self.store.desc(id)
        }

        fn contains(&self, id: $crate::ProxyId) -> bool {
            self.store.slot(id).is_ok()
        }

        fn len(&self) -> usize {
            self.store.len()
        }

        fn set_layers_collide(
            &mut self,
            a: $crate::Layer,
            b: $crate::Layer,
            collide: bool,
        ) -> Result<(), $crate::Error> {
            self.store.set_layers_collide(a, b, collide)
        }

        fn layers_collide(&self, a: $crate::Layer, b: $crate::Layer) -> bool {
            self.store.layers_collide(a, b)
        }
    };
}
pub(crate) use forward_to_store;

/// [`Store::set_aabbs`] spread over threads, one piece of the batch each.
#[cfg(feature = "parallel")]
mod par {
    use super::{write_moves, Store, Written, BOX_SET, DIRTY, MOVE_AHEAD};
    use crate::prefetch::{prefetch, prefetch_whole};
    use crate::{Aabb, Error, ProxyId};
    use rayon::prelude::*;

    /// What a batch of moves out of slot order is written from, kept from one batch to the
    /// next so that a frame's batch allocates nothing once warm: per piece of the batch and
    /// range of slots, the indices of the piece's items that fall in the range, in item order;
    /// per range, a bit per item that changed a slot first.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Scatter {
        pieces: usize,
        per_piece: usize,
        ranges: usize,
        per_range: usize,
        /// Piece `p`'s items in range `r` at `p * ranges + r`.
        lists: Vec<Vec<u32>>,
        marks: Vec<Vec<u64>>,
    }

    impl Scatter {
        /// Cuts a batch of `items` moves over `slots` slots into `pieces` pieces and as many
        /// ranges, and empties the lists.
        fn plan(&mut self, slots: usize, items: usize, pieces: usize) {
            self.pieces = pieces;
            self.per_piece = items.div_ceil(pieces).max(1);
            // At least 2 for `Divisor`.
            self.per_range = slots.div_ceil(pieces).max(2);
            self.ranges = slots.div_ceil(self.per_range).max(1);
            self.lists.resize_with(self.pieces * self.ranges, Vec::new);
            for list in &mut self.lists {
                list.clear();
            }
        }

        /// Lists the items of a `piece` of the batch, which starts at item `first`, into
        /// `lists` (one per range of `per_range` slots).
        fn list(per_range: usize, first: usize, piece: &[(ProxyId, Aabb)], lists: &mut [Vec<u32>]) {
            let range_of = Divisor::new(per_range);
            for (k, (id, _)) in piece.iter().enumerate() {
                // Checked ids: a slot of the store, so a range of the plan.
                lists[range_of.div(id.index())].push((first + k) as u32);
            }
        }

        pub(super) fn memory_bytes(&self) -> usize {
            self.lists.iter().map(|l| l.capacity() * 4).sum::<usize>()
                + self.marks.iter().map(|m| m.capacity() * 8).sum::<usize>()
        }
    }

    /// Division of `u32`s by a fixed divisor as one multiplication (Lemire, Kaser and Kurz,
    /// "Faster remainder by direct computation", 2019: exact for every 32-bit numerator and
    /// divisor above 1). Listing a batch by range with `/` spent more on the division than
    /// on the rest.
    #[derive(Clone, Copy, Debug)]
    struct Divisor(u64);

    impl Divisor {
        /// `d` is at least 2 and below 2^32.
        fn new(d: usize) -> Self {
            debug_assert!((2..1 << 32).contains(&d));
            Self(u64::MAX / d as u64 + 1)
        }

        #[inline(always)]
        fn div(self, n: u32) -> usize {
            ((u128::from(self.0) * u128::from(n)) >> 64) as usize
        }
    }

    #[cfg(test)]
    #[test]
    fn division_by_multiplication_is_exact() {
        let mut rng = crate::split_mix::SplitMix64::new(1);
        let mut next = move || rng.next_u64() as u32;
        let mut divisors: Vec<u32> = vec![2, 3, 7, 64, 1000, 65_537, u32::MAX - 1, u32::MAX];
        divisors.extend((0..200).map(|_| next().max(2)));
        divisors.extend((0..200).map(|_| (next() % 100_000).max(2)));
        for &d in &divisors {
            let div = Divisor::new(d as usize);
            let mut ns = vec![0, 1, d - 1, d, d.saturating_add(1), u32::MAX, u32::MAX - 1];
            ns.extend((0..500).map(|_| next()));
            ns.extend((1..50u32).map(|k| k.saturating_mul(d)));
            ns.extend((1..50u32).map(|k| k.saturating_mul(d).saturating_sub(1)));
            for n in ns {
                assert_eq!(div.div(n), (n / d) as usize, "{n} / {d}");
            }
        }
    }

    /// Checks `items` in `pieces` pieces: the first error in item order, else whether the
    /// slots increase through the whole batch. When they do not, `scatter` holds the items
    /// listed by range for [`write_scattered`]: each piece lists its own as it checks them,
    /// while they are in cache.
    pub(super) fn check_pieces(
        store: &Store,
        items: &[(ProxyId, Aabb)],
        pieces: usize,
        scatter: &mut Scatter,
    ) -> Result<bool, Error> {
        // Item indices are kept as `u32`: a batch of 2^32 items or more is not listed, and
        // takes one thread (see `write_scattered`).
        let listable = u32::try_from(items.len()).is_ok();
        scatter.plan(store.aabbs.len(), items.len(), pieces);
        let (per, ranges, per_range) = (scatter.per_piece, scatter.ranges, scatter.per_range);
        // Per piece: whether its slots increase, and whether it was listed.
        let checked: Vec<Result<(bool, bool), Error>> = items
            .par_chunks(per)
            .zip(scatter.lists.par_chunks_mut(ranges))
            .enumerate()
            .map(|(p, (piece, lists))| {
                let increasing = store.check_moves(piece)?;
                let list = listable && !increasing;
                if list {
                    Scatter::list(per_range, p * per, piece, lists);
                }
                Ok((increasing, list))
            })
            .collect();
        let mut increasing = true;
        let mut unlisted = Vec::new();
        for (p, result) in checked.into_iter().enumerate() {
            let (piece_increasing, listed) = result?;
            increasing &= piece_increasing;
            if !listed {
                unlisted.push(p);
            }
        }
        let joins_increase = items
            .chunks(per)
            .zip(items.chunks(per).skip(1))
            .all(|(a, b)| a.last().map(|x| x.0.index()) < b.first().map(|x| x.0.index()));
        if increasing && joins_increase {
            return Ok(true);
        }
        // Out of order after all: list the pieces whose own slots increase too.
        if listable {
            let jobs: Vec<(usize, &mut [Vec<u32>])> = scatter
                .lists
                .chunks_mut(ranges)
                .enumerate()
                .filter(|(p, _)| unlisted.contains(p))
                .collect();
            jobs.into_par_iter().for_each(|(p, lists)| {
                let piece = &items[(p * per).min(items.len())..((p + 1) * per).min(items.len())];
                Scatter::list(per_range, p * per, piece, lists);
            });
        }
        Ok(false)
    }

    /// Writes checked `items`, whose slots increase, in `pieces` pieces: each piece owns the
    /// slots from its first one to the next piece's first one, and lists its changed slots in
    /// its own part of `dirty` (as long as `items`); the parts are then closed up, in order.
    pub(super) fn write_pieces(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        pieces: usize,
        dirty: &mut [u32],
    ) -> Written {
        let per = items.len().div_ceil(pieces);
        let chunks: Vec<&[(ProxyId, Aabb)]> = items.chunks(per).collect();
        let (mut aabbs, mut flags) = (&mut store.aabbs[..], &mut store.flags[..]);
        let mut rest = &mut *dirty;
        let mut jobs = Vec::with_capacity(chunks.len());
        let mut base = 0;
        for (k, &chunk) in chunks.iter().enumerate() {
            let end = chunks
                .get(k + 1)
                .and_then(|next| next.first())
                .map_or(base + aabbs.len(), |x| x.0.index() as usize);
            let (a, a_rest) = std::mem::take(&mut aabbs).split_at_mut(end - base);
            let (f, f_rest) = std::mem::take(&mut flags).split_at_mut(end - base);
            let (d, d_rest) = std::mem::take(&mut rest).split_at_mut(chunk.len());
            jobs.push((a, f, base, chunk, d));
            (aabbs, flags, rest, base) = (a_rest, f_rest, d_rest, end);
        }
        let written: Vec<Written> = jobs
            .into_par_iter()
            .map(|(a, f, base, chunk, d)| write_moves(a, f, base, chunk, d))
            .collect();
        let mut total = Written::NONE;
        let mut start = 0;
        for (chunk, w) in chunks.iter().zip(&written) {
            dirty.copy_within(start..start + w.changed, total.changed);
            total.add(w);
            start += chunk.len();
        }
        total
    }

    /// Writes checked `items` in any order, as [`check_pieces`] listed them in `scatter`: each
    /// range of slots is written by one thread, from its lists of every piece in turn (item
    /// order), marking the items that change a slot for the first time, and the marks give
    /// the changed slots in item order, as one thread lists them. A proxy listed twice is
    /// written twice by the same thread, in item order.
    pub(super) fn write_scattered(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        scatter: &mut Scatter,
        dirty: &mut [u32],
    ) -> Written {
        if u32::try_from(items.len()).is_err() {
            return write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty);
        }
        let Scatter {
            pieces,
            ranges,
            per_range,
            lists,
            marks,
            ..
        } = scatter;
        let (pieces, ranges, per_range) = (*pieces, *ranges, *per_range);
        let words = items.len().div_ceil(64);
        // A bitmap per range: the items of two ranges interleave, and shared words would
        // bounce between the cores.
        marks.resize_with(ranges, Vec::new);
        for m in marks.iter_mut() {
            m.clear();
            m.resize(words, 0);
        }
        let lists = &*lists;
        let jobs: Vec<_> = store
            .aabbs
            .chunks_mut(per_range)
            .zip(store.flags.chunks_mut(per_range))
            .zip(marks.iter_mut())
            .enumerate()
            .map(|(r, (a, m))| (r, a, m))
            .collect();
        let written: Vec<Written> = jobs
            .into_par_iter()
            .with_max_len(1)
            .map(|(r, (aabbs, flags), marks)| {
                let base = r * per_range;
                let mut w = Written::NONE;
                for p in 0..pieces {
                    let ks = &lists[p * ranges + r];
                    for (n, &k) in ks.iter().enumerate() {
                        if let Some(&ahead) = ks.get(n + MOVE_AHEAD) {
                            let i = items[ahead as usize].0.index() as usize - base;
                            prefetch_whole(&aabbs[i]);
                            prefetch(&flags[i]);
                        }
                        let (id, aabb) = items[k as usize];
                        // Checked: a live slot of this range.
                        let i = id.index() as usize - base;
                        aabbs[i] = aabb;
                        w.grow(&aabb);
                        let f = flags[i];
                        flags[i] = f | DIRTY | BOX_SET;
                        let new = f & DIRTY == 0;
                        marks[k as usize / 64] |= u64::from(new) << (k % 64);
                        w.changed += usize::from(new);
                        w.newly_set += usize::from(f & BOX_SET == 0);
                    }
                }
                w
            })
            .collect();
        let mut total = Written::NONE;
        for w in &written {
            total.add(w);
        }
        let mut n = 0;
        for word in 0..words {
            let mut bits = marks.iter().fold(0, |acc, m| acc | m[word]);
            while bits != 0 {
                let k = word * 64 + bits.trailing_zeros() as usize;
                dirty[n] = items[k].0.index();
                n += 1;
                bits &= bits - 1;
            }
        }
        debug_assert_eq!(n, total.changed);
        total
    }
}

/// Without the `parallel` feature: one piece.
#[cfg(not(feature = "parallel"))]
mod par {
    use super::{write_moves, Store, Written};
    use crate::{Aabb, Error, ProxyId};

    /// Nothing to keep without threads.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct Scatter {}

    impl Scatter {
        pub(super) fn memory_bytes(&self) -> usize {
            0
        }
    }

    pub(super) fn check_pieces(
        store: &Store,
        items: &[(ProxyId, Aabb)],
        _pieces: usize,
        _scatter: &mut Scatter,
    ) -> Result<bool, Error> {
        store.check_moves(items)
    }

    pub(super) fn write_pieces(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        _pieces: usize,
        dirty: &mut [u32],
    ) -> Written {
        write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty)
    }

    pub(super) fn write_scattered(
        store: &mut Store,
        items: &[(ProxyId, Aabb)],
        _scatter: &mut Scatter,
        dirty: &mut [u32],
    ) -> Written {
        write_moves(&mut store.aabbs, &mut store.flags, 0, items, dirty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A listed algorithm's events and list of pairs name a removed proxy by the id it had:
    /// the generation before the removal advanced it, or the same one when the slot retired
    /// (its generation was the last).
    #[test]
    fn listed_pairs_keep_the_ids_of_removed_proxies() {
        for last_generation in [false, true] {
            let mut store = Store::new(&Config::default());
            let unit = Aabb::new([0.0; 3], [1.0; 3]);
            let a = store.insert(unit, ProxyDesc::dynamic()).unwrap();
            let b = store.insert(unit, ProxyDesc::dynamic()).unwrap();
            let a = if last_generation {
                store.generations[a.index() as usize] = u32::MAX;
                ProxyId::from_raw_parts(a.index(), u32::MAX)
            } else {
                a
            };
            let keys = [crate::pairs::pair_key(a.index(), b.index())];
            let list = || {
                vec![PairList {
                    keys: &keys,
                    slots: key_slots,
                }]
            };
            let pair = Pair::new(a, b);
            store.begin_update();
            store.finish_update_listed(&keys, &[]);
            assert_eq!(store.events.created, vec![pair]);
            store.remove(a).unwrap();
            assert_eq!(store.listed_pairs(list), &[pair], "asked after the removal");
            store.begin_update();
            store.finish_update_listed(&[], &keys);
            assert_eq!(
                store.events.deleted,
                vec![pair],
                "retired: {last_generation}"
            );
            assert_eq!(store.listed_pairs(Vec::new), &[]);
            assert_eq!(store.stats().pairs, 0);
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(Aabb),
        Remove(usize),
        Move(usize, Aabb),
        MoveAll(f32, usize),
        Shift([f32; 3]),
        Update,
    }

    fn aabb() -> impl Strategy<Value = Aabb> {
        (
            prop::array::uniform3(-50.0f32..50.0),
            prop::array::uniform3(0.0f32..5.0),
        )
            .prop_map(|(lo, size)| Aabb::new(lo, std::array::from_fn(|a| lo[a] + size[a])))
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => aabb().prop_map(Op::Insert),
            1 => any::<usize>().prop_map(Op::Remove),
            2 => (any::<usize>(), aabb()).prop_map(|(k, b)| Op::Move(k, b)),
            2 => (-3.0f32..3.0, 0usize..3).prop_map(|(d, skip)| Op::MoveAll(d, skip)),
            1 => prop::array::uniform3(-10.0f32..10.0).prop_map(Op::Shift),
            3 => Just(Op::Update),
        ]
    }

    /// The bounds hold every live box after any sequence of edits and updates, and an update
    /// after which every live box was set takes the exact union of those boxes.
    #[test]
    fn bounds_hold_every_live_box() {
        proptest!(ProptestConfig::with_cases(200), |(ops in prop::collection::vec(op(), 1..60))| {
            let mut store = Store::new(&Config::default());
            let mut live: Vec<ProxyId> = Vec::new();
            for op in ops {
                let mut all_set = false;
                match op {
                    Op::Insert(b) => live.push(store.insert(b, ProxyDesc::default()).unwrap()),
                    Op::Remove(k) if !live.is_empty() => {
                        let id = live.swap_remove(k % live.len());
                        store.remove(id).unwrap();
                    }
                    Op::Move(k, b) if !live.is_empty() => {
                        store.set_aabb(live[k % live.len()], b).unwrap();
                    }
                    Op::MoveAll(d, skip) => {
                        // Every live box but the first `skip`, in one batch (the first twice);
                        // with none skipped, in an update of its own.
                        all_set = skip == 0;
                        if all_set {
                            store.begin_update();
                            store.finish_update_listed(&[], &[]);
                        }
                        let moves: Vec<(ProxyId, Aabb)> = live
                            .iter()
                            .skip(skip)
                            .chain(live.first())
                            .map(|&id| (id, store.aabb_at(id.index() as usize).translated([d; 3])))
                            .collect();
                        store.set_aabbs(&moves).unwrap();
                    }
                    Op::Shift(s) => store.shift_origin(s).unwrap(),
                    Op::Update => {
                        store.begin_update();
                        store.finish_update_listed(&[], &[]);
                    }
                    _ => {}
                }
                if all_set {
                    store.begin_update();
                    store.finish_update_listed(&[], &[]);
                    let exact = live
                        .iter()
                        .map(|&id| *store.aabb_at(id.index() as usize))
                        .reduce(|a, b| a.union(&b));
                    prop_assert_eq!(store.bounds(), exact);
                }
                for &id in &live {
                    let b = store.aabb_at(id.index() as usize);
                    prop_assert!(store.bounds().is_some_and(|w| w.contains(b)), "{b:?} outside");
                }
                prop_assert_eq!(store.bounds().is_none(), live.is_empty());
            }
        });
    }

    /// A store with `n` proxies, a few removed and a few already changed in this update.
    fn loaded(n: usize, parallel: bool) -> (Store, Vec<ProxyId>) {
        let mut store = Store::new(&Config::default().with_parallel(parallel));
        let ids: Vec<ProxyId> = (0..n)
            .map(|i| {
                let lo = [(i % 97) as f32, (i % 89) as f32, (i / 1000) as f32];
                store.insert(Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::default())
            })
            .collect::<Result<_, _>>()
            .unwrap();
        store.begin_update();
        store.finish_update_listed(&[], &[]);
        for &id in ids.iter().step_by(1001) {
            store.remove(id).unwrap();
        }
        for &id in ids.iter().skip(7).step_by(503) {
            if store.slot(id).is_ok() {
                store.set_aabb(id, Aabb::point([-3.0; 3])).unwrap();
            }
        }
        (store, ids)
    }

    /// Everything a batch of moves changes in the store.
    fn state(s: &Store) -> impl PartialEq + std::fmt::Debug {
        (
            s.aabbs.clone(),
            s.flags.clone(),
            s.dirty.clone(),
            s.bounds,
            s.set_bounds,
            s.boxes_set,
        )
    }

    /// A large batch gives the same store on two threads as on one: in slot order (written in
    /// pieces), out of order, with a proxy twice (to the same box or to two) or in two ordered
    /// halves (sorted out by slot range, then written range by range), and with faults (the
    /// first one named, nothing written).
    #[test]
    fn moves_in_pieces_match_one_thread() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let n = 3 * PARALLEL_MOVES;
        let moved = |ids: &[ProxyId], store: &Store| -> Vec<(ProxyId, Aabb)> {
            ids.iter()
                .filter(|&&id| store.slot(id).is_ok())
                .map(|&id| {
                    (
                        id,
                        store
                            .aabb_at(id.index() as usize)
                            .translated([0.5, -0.25, 2.0]),
                    )
                })
                .collect()
        };
        let (reference, ids) = loaded(n, false);
        let in_order = moved(&ids, &reference);
        let mut shuffled = in_order.clone();
        shuffled.swap(10, 2 * PARALLEL_MOVES);
        shuffled.push(shuffled[5]);
        // Every item out of place (a stride through the batch), a proxy moved twice to two
        // boxes (the last one stays), and one twice to the same box.
        let len = in_order.len();
        let mut scattered: Vec<(ProxyId, Aabb)> =
            (0..len).map(|k| in_order[(k * 7919) % len]).collect();
        scattered.push((in_order[3].0, in_order[3].1.translated([1.0; 3])));
        scattered.push(scattered[len / 2]);
        // Each half in order, the second starting below the first.
        let mut rotated = in_order.clone();
        rotated.rotate_left(in_order.len() / 2);
        let mut faulty = in_order.clone();
        let last = faulty.len() - 1;
        faulty[last].1 = Aabb::new([1.0; 3], [0.0; 3]);
        faulty[PARALLEL_MOVES + 3].0 = ids[0];
        for batch in [&in_order, &shuffled, &scattered, &rotated, &faulty] {
            let (mut one, _) = loaded(n, false);
            let (mut two, _) = loaded(n, true);
            let before = state(&two);
            let r1 = one.set_aabbs(batch).map_err(|e| e.to_string());
            let r2 = pool
                .install(|| two.set_aabbs(batch))
                .map_err(|e| e.to_string());
            assert_eq!(r1, r2);
            assert_eq!(state(&one), state(&two));
            if let Err(e) = r2 {
                assert_eq!(state(&two), before, "a failed batch changes nothing");
                assert!(e.contains("stale"), "{e}");
            }
        }
        // The same stores through batch after batch: the lists kept for out-of-order batches
        // start empty each time.
        let (mut one, _) = loaded(n, false);
        let (mut two, _) = loaded(n, true);
        for batch in [
            &scattered, &faulty, &rotated, &shuffled, &in_order, &scattered,
        ] {
            let r1 = one.set_aabbs(batch).map_err(|e| e.to_string());
            let r2 = pool
                .install(|| two.set_aabbs(batch))
                .map_err(|e| e.to_string());
            assert_eq!(r1, r2);
            assert_eq!(state(&one), state(&two));
            one.begin_update();
            one.finish_update_listed(&[], &[]);
            two.begin_update();
            two.finish_update_listed(&[], &[]);
        }
    }
}
