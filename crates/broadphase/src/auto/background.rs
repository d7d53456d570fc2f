//! Building [`Auto`](crate::Auto)'s next engine on another thread while the current one keeps
//! serving, so that a switch costs about one update of the new engine, not a build from
//! scratch.
//!
//! At the update that decides, the store is copied as a fresh engine's first update sees it
//! (a snapshot) and the new engine is built from it on a thread of its own, its pairs (all of
//! them created, at the snapshot) sorted there too. The current engine runs the next updates;
//! each one's changed slots are noted, and the pair keys the current engine creates or
//! deletes. At set updates before the switch (halfway there, then halfway through what is
//! left, down to two updates before it) the store is copied again as the new engine must see
//! it to catch up with the changes since its last copy, and sent to the thread, which runs
//! that update too: the new engine follows the scene a few updates behind, so that what is
//! left for the switch is two updates' changes (a catch-up of many updates' moves at once
//! cost Sap many times a frame: each box swept past every box it had passed since). A set
//! number of updates after the snapshot (a count, not a clock, so that the switch falls on
//! the same update on any machine, and the pairs' order after it too) the thread is joined,
//! waiting for it if it must, and the new engine runs that update on a copy of the store in
//! which every slot changed since the last copy is dirty and held as the engine holds it: it
//! catches up, and its pairs' changes since the snapshot are known. A key whose pair changed
//! an odd number of times on one side and an even number on the other differs between the
//! two engines, so it is this update's event: created if the new engine holds it now,
//! deleted if not. Every other key agrees.
//!
//! The build starts on its thread (`build_thread.rs`) once the running engine has run the
//! snapshot's update, not beside it: in `bplab phases` (40,000 proxies, a switch to Sap on two
//! cores) that update took 1.0 ms more with the build beside it.

use std::sync::mpsc::{self, SyncSender};
use std::sync::Mutex;

use super::build_thread::{BuildThread, Running};
use crate::engine::{self, Engine, PairChanges, Store};
use crate::pairs::cancel_common;
use crate::{Algorithm, Config, Error};

/// A new engine and what it found, built from the snapshot and brought on by the copies it
/// was sent.
struct Built {
    engine: Box<dyn Engine>,
    /// Its pairs at the snapshot, sorted.
    pairs: Vec<u64>,
    /// The pair keys it created or deleted since the snapshot (a key twice for a pair that
    /// came and went).
    toggled: Vec<u64>,
}

/// What the build's thread runs: the new engine's build from the snapshot and its catch-ups.
type Work = Box<dyn FnOnce() -> Result<Built, Error> + Send>;

/// A new engine building from a snapshot, and what changed since.
pub(crate) struct Pending {
    pub(crate) algorithm: Algorithm,
    /// The update (counted by the Auto engine) whose store the snapshot was taken before.
    taken_at: u64,
    /// The update at which the new engine goes in.
    due: u64,
    /// The updates after which the thread is sent a copy of the store to catch up with,
    /// soonest last.
    stages: Vec<u64>,
    thread: BuildThread,
    /// Where the copies go (one may wait while the thread runs another: a copy is the whole
    /// store, so a thread that falls behind holds the sender back instead of piling them up):
    /// closed before the join, which ends the thread's work.
    copies: SyncSender<Store>,
    /// The build, from the snapshot until the snapshot's own update has run (it starts then,
    /// not beside it), and running from then on. (In a mutex only so that the engine is
    /// `Sync`: reached through `&mut self`.)
    work: Mutex<Option<Work>>,
    build: Option<Running<Result<Built, Error>>>,
    /// Per slot: whether the new engine holds it, as of the last copy it was sent.
    held: Vec<bool>,
    /// Slots changed since that copy (or the snapshot), each once, and a flag per slot
    /// saying so.
    changed: Vec<u32>,
    seen: Vec<bool>,
    /// The pair keys the running engine created or deleted since the snapshot (a key twice
    /// for a pair that came and went).
    toggled: Vec<u64>,
}

impl Pending {
    /// Snapshots `store` (before the update numbered `now` begins) and readies a build of an
    /// engine of `algorithm` from it, to go in at update `now + after`; the thread starts on
    /// it once the running engine has run update `now` ([`record`](Self::record)).
    ///
    /// # Errors
    /// When the operating system refuses the thread, or without the `parallel` feature: the
    /// caller switches in place instead.
    pub(crate) fn start(
        store: &Store,
        algorithm: Algorithm,
        config: &Config,
        now: u64,
        after: u64,
    ) -> Result<Self, std::io::Error> {
        let thread = BuildThread::start()?;
        let snapshot = store.snapshot_for_build();
        let held = (0..snapshot.slot_count())
            .map(|s| snapshot.is_alive(s))
            .collect();
        let mut engine = engine::boxed(algorithm, config);
        let (copies, copies_in) = mpsc::sync_channel::<Store>(1);
        let spares = thread.spare_sender();
        let work: Work = Box::new(move || {
            let mut changes = PairChanges::default();
            engine.update(&snapshot, &mut changes)?;
            let _ = spares.try_send(snapshot);
            let mut pairs = std::mem::take(&mut changes.created);
            pairs.sort_unstable();
            let mut toggled = Vec::new();
            // Until the sender closes the channel, at the join.
            for copy in copies_in {
                changes.clear();
                engine.update(&copy, &mut changes)?;
                toggled.extend(&changes.created);
                toggled.extend(&changes.deleted);
                let _ = spares.try_send(copy);
            }
            Ok(Built {
                engine,
                pairs,
                toggled,
            })
        });
        let after = after.max(1);
        Ok(Self {
            algorithm,
            taken_at: now,
            due: now + after,
            stages: stages(now, after),
            thread,
            copies,
            work: Mutex::new(Some(work)),
            build: None,
            held,
            changed: Vec::new(),
            seen: Vec::new(),
            toggled: Vec::new(),
        })
    }

    /// Hands the build to the thread, if it has not been.
    fn launch(&mut self) {
        if let Some(work) = self.work.get_mut().ok().and_then(Option::take) {
            self.build = Some(self.thread.launch(work));
        }
    }

    /// Whether the new engine goes in at the update numbered `now` (waiting for its build if
    /// it has not finished: a count, not a clock, decides, so that the pairs' order after the
    /// switch is the same on every machine).
    pub(crate) fn due(&self, now: u64) -> bool {
        now == self.due
    }

    /// Notes what the update numbered `now` changed, after the running engine ran it: the
    /// store's changed slots and the keys the engine reported. The snapshot's own update is
    /// in the snapshot already: after it, the build starts.
    pub(crate) fn record(&mut self, now: u64, store: &Store, changes: &PairChanges) {
        if now <= self.taken_at {
            self.launch();
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

    /// At the updates set for it, after [`record`](Self::record): sends the thread a copy of
    /// `store` as the new engine must see it to catch up with the changes since its last
    /// copy (this update's included), so that it runs that update while the current engine
    /// serves the next ones.
    pub(crate) fn stage(&mut self, now: u64, store: &Store) {
        if self.stages.last() != Some(&now) {
            return;
        }
        self.stages.pop();
        // Launched at the snapshot's update, unless that update failed before it recorded: a
        // copy sent to no thread would hold the next one back for good.
        self.launch();
        let copy = store.caught_up(&self.held, &self.changed, self.thread.take_spare());
        self.held.resize(copy.slot_count(), false);
        for &slot in copy.dirty() {
            self.held[slot as usize] = copy.is_alive(slot as usize);
        }
        for &slot in &self.changed {
            self.seen[slot as usize] = false;
        }
        self.changed.clear();
        // A thread that stopped (its engine returned an error) is seen at the join.
        let _ = self.copies.send(copy);
    }

    /// Joins the build and brings the new engine up to date in this update (`store` as the
    /// driver hands it to the engine), filling `changes` with this update's events against
    /// the running engine's pairs at the last update. Returns the new engine, or `None` if
    /// its build failed (the running engine then runs this update as usual).
    ///
    /// # Errors
    /// What the new engine's catch-up update returns.
    pub(crate) fn finish(
        mut self,
        store: &Store,
        changes: &mut PairChanges,
    ) -> Result<Option<Box<dyn Engine>>, Error> {
        self.launch();
        let Pending {
            mut thread,
            copies,
            build,
            held,
            changed,
            toggled,
            ..
        } = self;
        drop(copies);
        let Some(Ok(mut built)) = build.and_then(Running::join) else {
            return Ok(None);
        };
        let view = store.caught_up(&held, &changed, thread.take_spare());
        let mut caught = PairChanges::default();
        built.engine.update(&view, &mut caught)?;
        let mut old = odd(toggled);
        let mut new = built.toggled;
        new.append(&mut caught.created);
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
        self.changed.capacity() * 4
            + self.seen.capacity()
            + self.held.capacity()
            + self.toggled.capacity() * 8
    }
}

/// The updates at which a new engine started at update `now`, to go in `after` updates
/// later, is sent a copy to catch up with, soonest last: halfway to the switch, then halfway
/// through what is left, down to two updates before it (for 16: 8, 12 and 14 updates on).
/// Each copy holds about as many updates' changes as the thread had time for since the last
/// one. The last leaves the thread a whole update to run it in, and the switch two updates'
/// changes: in `bplab phases` (40,000 proxies, a switch to Sap) the switch update waited
/// 1.0-1.8 ms for a copy sent one update before it, where a second update's changes cost
/// its catch-up about 0.3 ms.
fn stages(now: u64, after: u64) -> Vec<u64> {
    let mut stages = Vec::new();
    let mut left = after / 2;
    while left >= 2 {
        stages.push(now + after - left);
        left /= 2;
    }
    stages.reverse();
    stages
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

#[cfg(test)]
mod tests {
    use super::stages;

    #[test]
    fn copies_go_halfway_then_halfway_through_what_is_left() {
        // Popped from the end: soonest first.
        assert_eq!(stages(10, 16), vec![24, 22, 18]);
        assert_eq!(stages(0, 40), vec![38, 35, 30, 20]);
        assert_eq!(stages(5, 4), vec![7]);
        assert!(stages(5, 3).is_empty());
        assert!(stages(5, 1).is_empty());
    }
}
