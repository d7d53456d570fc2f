//! Building [`Auto`](crate::Auto)'s next engine on another thread while the current one keeps
//! serving, so that a switch costs a catch-up, not a build from scratch.
//!
//! At the update that decides, the store is copied as a fresh engine's first update sees it
//! (a snapshot) and the new engine is built from it on a thread of its own, its pairs (all of
//! them created, at the snapshot) sorted there too. The current engine runs the next updates;
//! each one's changed slots are noted, and the pair keys the current engine creates or
//! deletes. A set number of updates after the snapshot (a count, not a clock, so that the
//! switch falls on the same update on any machine, and the pairs' order after it too) the
//! thread is joined, waiting for the build if it must, and the new engine
//! runs that update on a copy of the store in which every slot changed since the snapshot is
//! dirty and held as the snapshot held it: it catches up, reporting its pairs' changes since
//! the snapshot. A key whose pair changed an odd number of times on one side and an even
//! number on the other differs between the two engines, so it is this update's event:
//! created if the new engine holds it now, deleted if not. Every other key agrees.

use std::thread::JoinHandle;

use crate::engine::{self, Engine, PairChanges, Store};
use crate::pairs::cancel_common;
use crate::{Algorithm, Config, Error};

/// A new engine and what it found, built from the snapshot.
struct Built {
    engine: Box<dyn Engine>,
    /// Its pairs at the snapshot, sorted.
    pairs: Vec<u64>,
    /// Per slot: whether it holds the slot.
    held: Vec<bool>,
}

/// A new engine building from a snapshot, and what changed since.
pub(crate) struct Pending {
    pub(crate) algorithm: Algorithm,
    /// The update (counted by the Auto engine) whose store the snapshot was taken before.
    taken_at: u64,
    /// The update at which the new engine goes in.
    due: u64,
    build: JoinHandle<Result<Built, Error>>,
    /// Slots changed since the snapshot, each once, and a flag per slot saying so.
    changed: Vec<u32>,
    seen: Vec<bool>,
    /// The pair keys the running engine created or deleted since the snapshot (a key twice
    /// for a pair that came and went).
    toggled: Vec<u64>,
}

impl Pending {
    /// Snapshots `store` (before the update numbered `now` begins) and starts building an
    /// engine of `algorithm` from it, to go in at update `now + after`.
    ///
    /// # Errors
    /// When the operating system refuses the thread: the caller switches in place instead.
    pub(crate) fn start(
        store: &Store,
        algorithm: Algorithm,
        config: &Config,
        now: u64,
        after: u64,
    ) -> Result<Self, std::io::Error> {
        let snapshot = store.snapshot_for_build();
        let mut engine = engine::boxed(algorithm, config);
        let build = std::thread::Builder::new()
            .name("broadphase-auto-build".into())
            .spawn(move || {
                let mut changes = PairChanges::default();
                engine.update(&snapshot, &mut changes)?;
                let mut pairs = changes.created;
                pairs.sort_unstable();
                let held = (0..snapshot.slot_count())
                    .map(|s| snapshot.is_alive(s))
                    .collect();
                Ok(Built {
                    engine,
                    pairs,
                    held,
                })
            })?;
        Ok(Self {
            algorithm,
            taken_at: now,
            due: now + after.max(1),
            build,
            changed: Vec::new(),
            seen: Vec::new(),
            toggled: Vec::new(),
        })
    }

    /// Whether the new engine goes in at the update numbered `now` (waiting for its build if
    /// it has not finished: a count, not a clock, decides, so that the pairs' order after the
    /// switch is the same on every machine).
    pub(crate) fn due(&self, now: u64) -> bool {
        now == self.due
    }

    /// Notes what the update numbered `now` changed, after the running engine ran it: the
    /// store's changed slots and the keys the engine reported. The snapshot's own update is
    /// in the snapshot already.
    pub(crate) fn record(&mut self, now: u64, store: &Store, changes: &PairChanges) {
        if now <= self.taken_at {
            return;
        }
        if self.seen.len() < store.slot_count() {
            self.seen.resize(store.slot_count(), false);
        }
        for &slot in store.dirty() {
            if !std::mem::replace(&mut self.seen[slot as usize], true) {
                self.changed.push(slot);
            }
        }
        self.toggled.extend(&changes.created);
        self.toggled.extend(&changes.deleted);
    }

    /// Joins the build and brings the new engine up to date in this update (`store` as the
    /// driver hands it to the engine), filling `changes` with this update's events against
    /// the running engine's pairs at the last update. Returns the new engine, or `None` if
    /// its build failed (the running engine then runs this update as usual).
    ///
    /// # Errors
    /// What the new engine's catch-up update returns.
    pub(crate) fn finish(
        self,
        store: &Store,
        changes: &mut PairChanges,
    ) -> Result<Option<Box<dyn Engine>>, Error> {
        let Ok(Ok(mut built)) = self.build.join() else {
            return Ok(None);
        };
        let view = store.caught_up(&built.held, &self.changed);
        let mut caught = PairChanges::default();
        built.engine.update(&view, &mut caught)?;
        let mut old = odd(self.toggled);
        let mut new = caught.created;
        new.append(&mut caught.deleted);
        let mut new = odd(new);
        // What is left are the keys whose pair changed on one side only: the two engines
        // disagree on them, and the new engine is right.
        cancel_common(&mut old, &mut new);
        let flipped = old.iter().map(|&k| (k, false));
        for (key, flipped_new) in flipped.chain(new.iter().map(|&k| (k, true))) {
            let at_snapshot = built.pairs.binary_search(&key).is_ok();
            if at_snapshot != flipped_new {
                changes.created.push(key);
            } else {
                changes.deleted.push(key);
            }
        }
        changes.tests = caught.tests;
        Ok(Some(built.engine))
    }

    /// Heap bytes held on this side (the snapshot and the build are on the thread's).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.changed.capacity() * 4 + self.seen.capacity() + self.toggled.capacity() * 8
    }
}

/// The keys that occur an odd number of times in `keys`, sorted.
fn odd(mut keys: Vec<u64>) -> Vec<u64> {
    keys.sort_unstable();
    let mut out = Vec::with_capacity(keys.len());
    for run in keys.chunk_by(|a, b| a == b) {
        if run.len() % 2 == 1 {
            out.push(run[0]);
        }
    }
    out
}
