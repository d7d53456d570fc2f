//! Copies of the store for an engine built away from the driver: [`Auto`](crate::Auto) builds
//! its next engine on another thread from a snapshot, then brings it up to date with the
//! changes made since, sent a few updates at a time as [`Catchup`]s.

use std::sync::OnceLock;

use super::{listing::Spare, scatter::Scatter, Store, DIRTY, WAS_IN};
use crate::{Aabb, Config, PairEvents, ProxyDesc};

/// The changes a copy of the store (a [`snapshot`](Store::snapshot_for_build)) must take to
/// be the store as the driver hands it to an engine in the update in progress: the changed
/// slots' boxes, descriptions and flags, and the store's counts and short lists. Its size
/// is the changes', not the store's: at 40,000 proxies a whole copy cost 0.4 ms in touched
/// memory and 1.0 ms in fresh, where most bodies asleep change a few hundred slots an update.
#[derive(Debug)]
pub(crate) struct Catchup {
    /// The slots to be dirty, in the order an engine reads them: the update's own first,
    /// then those changed before it since the last catch-up.
    slots: Vec<u32>,
    /// Per slot in `slots`, its entries.
    aabbs: Vec<Aabb>,
    descs: Vec<ProxyDesc>,
    generations: Vec<u32>,
    flags: Vec<u8>,
    /// The store's counts, bounds and short lists, its slot arrays left empty.
    rest: Store,
    slot_count: usize,
}

impl Store {
    /// A copy of what engines read (boxes, descriptions, flags, what changed, the rules, the
    /// bounds), without the driver's own lists (the pairs as ids, the events). With
    /// `slots` false, the per-slot arrays are left empty.
    /// Written into `into`'s memory.
    fn engine_view(&self, slots: bool, into: Store) -> Store {
        fn per_slot<T: Clone>(keep: bool, into: Vec<T>, v: &[T]) -> Vec<T> {
            let mut into = into;
            into.clear();
            if keep {
                into.extend_from_slice(v);
            }
            into
        }
        Store {
            aabbs: per_slot(slots, into.aabbs, &self.aabbs),
            descs: per_slot(slots, into.descs, &self.descs),
            generations: per_slot(slots, into.generations, &self.generations),
            flags: per_slot(slots, into.flags, &self.flags),
            free: self.free.clone(),
            pending_free: self.pending_free.clone(),
            dirty: per_slot(slots, into.dirty, &self.dirty),
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
            outside: self.outside.clone(),
            out_count: self.out_count,
            parallel: self.parallel,
            scatter: Scatter::default(),
        }
    }

    /// A snapshot for building a fresh engine from: every proxy new to the structure, and the
    /// update begun (rules applied, proxies out of the world sorted out), as the driver hands
    /// the store to an engine's first update.
    ///
    /// Written into `spare`'s memory where there is one ([`Store::touched`]).
    pub(crate) fn snapshot_for_build(&self, spare: Option<Store>) -> Store {
        let spare = spare.unwrap_or_else(|| Store::new(&Config::default()));
        let mut snap = self.engine_view(true, spare);
        // Every live slot joins the changed list (each slot at most once).
        snap.dirty
            .reserve(self.slot_count().saturating_sub(snap.dirty.len()));
        snap.forget_structure();
        snap.begin_update();
        snap
    }

    /// An empty store whose slot arrays (and changed list) have room for `slots` slots,
    /// every page of them written once: a snapshot copied into it pays no page faults.
    pub(crate) fn touched(slots: usize) -> Store {
        fn touch<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
            v.resize(n, fill);
            v.clear();
        }
        let mut store = Store::new(&Config::default());
        touch(&mut store.aabbs, slots, Aabb::default());
        touch(&mut store.descs, slots, ProxyDesc::default());
        touch(&mut store.generations, slots, 0);
        touch(&mut store.flags, slots, 0);
        touch(&mut store.dirty, slots, 0);
        store
    }

    /// What a copy of the store that an engine ran its last update on must take to be this
    /// store, in the update in progress: `changed` lists the slots changed since that update,
    /// before this one; they and this update's changes are the catch-up's dirty slots. Call
    /// during an update (after it began), with the rules and the origin as they were at the
    /// copy's (a change to either reaches slots the lists do not name).
    pub(crate) fn catchup(&self, changed: &[u32]) -> Catchup {
        let mut slots = self.dirty.clone();
        slots.extend(
            changed
                .iter()
                .filter(|&&s| self.flags[s as usize] & DIRTY == 0),
        );
        Catchup {
            aabbs: slots.iter().map(|&s| self.aabbs[s as usize]).collect(),
            descs: slots.iter().map(|&s| self.descs[s as usize]).collect(),
            generations: slots
                .iter()
                .map(|&s| self.generations[s as usize])
                .collect(),
            flags: slots.iter().map(|&s| self.flags[s as usize]).collect(),
            slots,
            rest: self.engine_view(false, Store::new(&Config::default())),
            slot_count: self.slot_count(),
        }
    }

    /// Takes `catchup` into this copy, after its engine ran the last update on it: the slots
    /// that update's engine read as dirty are settled (held if live and in the world, as the
    /// driver leaves them after an update), then the catch-up's slots are written and made
    /// dirty, each held or not as this copy's engine holds it.
    pub(crate) fn take_catchup(&mut self, catchup: Catchup) {
        self.settle_dirty();
        let Catchup {
            slots,
            aabbs,
            descs,
            generations,
            flags,
            rest,
            slot_count,
        } = catchup;
        self.aabbs.resize(slot_count, Aabb::default());
        self.descs.resize(slot_count, ProxyDesc::default());
        self.generations.resize(slot_count, 0);
        self.flags.resize(slot_count, 0);
        for (i, &slot) in slots.iter().enumerate() {
            let s = slot as usize;
            self.aabbs[s] = aabbs[i];
            self.descs[s] = descs[i];
            self.generations[s] = generations[i];
            self.flags[s] = (flags[i] & !WAS_IN) | (self.flags[s] & WAS_IN) | DIRTY;
        }
        let aabbs = std::mem::take(&mut self.aabbs);
        let descs = std::mem::take(&mut self.descs);
        let generations = std::mem::take(&mut self.generations);
        let flags = std::mem::take(&mut self.flags);
        *self = Store {
            aabbs,
            descs,
            generations,
            flags,
            dirty: slots,
            ..rest
        };
    }
}
