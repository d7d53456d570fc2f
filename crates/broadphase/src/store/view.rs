//! Copies of the store for an engine built away from the driver: [`Auto`](crate::Auto) builds
//! its next engine on another thread from a snapshot, then brings it up to date with every
//! change made since, in one update.

use std::sync::OnceLock;

use super::{listing::Spare, scatter::Scatter, Store, DIRTY, WAS_IN};
use crate::{Config, PairEvents};

impl Store {
    /// A copy of what engines read (boxes, descriptions, flags, what changed, the rules, the
    /// bounds), without the driver's own lists (the pairs as ids, the events), written into
    /// `spare`'s memory where there is one: fresh memory costs the kernel a page fault per
    /// 4 KB on first touch, most of a copy's time (40,000 proxies: 1.0 ms fresh).
    fn engine_view(&self, spare: Option<Store>) -> Store {
        let spare = spare.unwrap_or_else(|| Store::new(&Config::default()));
        Store {
            aabbs: copy_into(spare.aabbs, &self.aabbs),
            descs: copy_into(spare.descs, &self.descs),
            generations: copy_into(spare.generations, &self.generations),
            flags: copy_into(spare.flags, &self.flags),
            free: copy_into(spare.free, &self.free),
            pending_free: copy_into(spare.pending_free, &self.pending_free),
            dirty: copy_into(spare.dirty, &self.dirty),
            len: self.len,
            fixed: self.fixed,
            grouped: self.grouped,
            limit: self.limit,
            matrix: self.matrix.clone(),
            all_layers_collide: self.all_layers_collide,
            rule_changes: self.rule_changes,
            rules_changed: self.rules_changed,
            shifts: self.shifts,
            listed: 0,
            listed_ids: OnceLock::new(),
            listed_spare: Spare::default(),
            events: PairEvents::default(),
            events_trims: Default::default(),
            tests: 0,
            last_changed: self.last_changed,
            bounds: self.bounds,
            bounds_loose: self.bounds_loose,
            set_bounds: self.set_bounds,
            boxes_set: self.boxes_set,
            world: self.world,
            outside: copy_into(spare.outside, &self.outside),
            out_count: self.out_count,
            parallel: self.parallel,
            scatter: Scatter::default(),
        }
    }

    /// A snapshot for building a fresh engine from: every proxy new to the structure, and the
    /// update begun (rules applied, proxies out of the world sorted out), as the driver hands
    /// the store to an engine's first update.
    pub(crate) fn snapshot_for_build(&self) -> Store {
        let mut snap = self.engine_view(None);
        snap.forget_structure();
        snap.begin_update();
        snap
    }

    /// The store as an engine built from an earlier snapshot must see it to catch up in one
    /// update: `held[slot]` says whether that engine holds the slot (it was live and in the
    /// world in the snapshot), and `changed` lists the slots changed since the snapshot, before
    /// this update's. Those and this update's changes are dirty; every dirty slot is held or
    /// not as `held` says. Call during an update (after it began). Written into `spare`'s
    /// memory if given.
    pub(crate) fn caught_up(&self, held: &[bool], changed: &[u32], spare: Option<Store>) -> Store {
        let mut view = self.engine_view(spare);
        for &slot in changed {
            let s = slot as usize;
            if view.flags[s] & DIRTY == 0 {
                view.flags[s] |= DIRTY;
                view.dirty.push(slot);
            }
        }
        for &slot in &view.dirty {
            let s = slot as usize;
            if held.get(s).copied().unwrap_or(false) {
                view.flags[s] |= WAS_IN;
            } else {
                view.flags[s] &= !WAS_IN;
            }
        }
        view
    }
}

/// `from`, copied into `into`'s memory.
fn copy_into<T: Clone>(mut into: Vec<T>, from: &[T]) -> Vec<T> {
    into.clear();
    into.extend_from_slice(from);
    into
}
