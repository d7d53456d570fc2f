//! Building [`Auto`](crate::Auto)'s next engine on another thread while the current one keeps
//! serving, so that a switch costs about one update of the new engine, not a build from
//! scratch.
//!
//! In the update that decides, while the running engine runs it, the thread copies the store
//! as a fresh engine's first update sees it (a snapshot: copying 40,000 proxies into fresh
//! memory takes about 1.0 ms, where the update of a scene at rest takes 0.4). Once the update
//! has run, the new engine is built from the snapshot on that thread, its pairs (all of them
//! created, at the snapshot) sorted there too. The current engine runs the next updates; each
//! one's changed slots are noted, and the pair keys the current engine creates or deletes. At
//! set updates before the switch (halfway there, then halfway through what is left, down to
//! two updates before it) the thread is sent what changed since the last time (a
//! [`Catchup`]: the changed slots' entries, not a copy of the store), which it takes into its
//! copy before running that update too: the new engine follows the scene a few updates
//! behind, so that what is left for the switch is two updates' changes (a catch-up of many
//! updates' moves at once cost Sap many times a frame: each box swept past every box it had
//! passed since). A catch-up never waits to be sent: the thread runs each in turn. A set number
//! of updates after the snapshot (a count, not a clock, so that the switch falls on the same
//! update on any machine, and the pairs' order after it too) the thread is joined, waiting for
//! it if it must, and the new engine takes this update's catch-up on the main thread: it
//! catches up, and its pairs' changes since the snapshot are known. A key whose pair changed
//! an odd number of times on one side and an even number on the other differs between the
//! two engines, so it is this update's event: created if the new engine holds it now,
//! deleted if not. Every other key agrees.
//!
//! The build starts once the running engine has run the snapshot's update, not beside it: in
//! `bplab phases` (40,000 proxies, a switch to Sap on two cores) that update took 1.0 ms more
//! with the build beside it.

use std::sync::mpsc::{self, Sender};
use std::sync::Mutex;

use super::build_thread::{BuildThread, Running};
use crate::engine::{self, Engine, PairChanges, Store};
use crate::pairs::cancel_common;
use crate::store::Catchup;
use crate::{Algorithm, Config, Error};

/// A new engine and what it found, built from the snapshot and brought on by the catch-ups
/// it was sent.
struct Built {
    engine: Box<dyn Engine>,
    /// The store as it ran its last update on.
    store: Store,
    /// Its pairs at the snapshot, sorted.
    pairs: Vec<u64>,
    /// The pair keys it created or deleted since the snapshot (a key twice for a pair that
    /// came and went).
    toggled: Vec<u64>,
}

/// What the build's thread runs: the new engine's build from the snapshot and its catch-ups.
type Work = Box<dyn FnOnce(Store) -> Result<Built, Error> + Send>;

/// A build's thread started before the switch is decided, and memory for the snapshot that
/// the thread has touched meanwhile (fresh memory costs a page fault per 4 KB on first
/// touch: copying 40,000 proxies takes 1.0 ms into fresh memory, 0.4 into touched).
pub(crate) struct Prepared {
    thread: BuildThread,
    spare: Running<Store>,
}

impl Prepared {
    /// Starts the thread, and has it ready memory for a snapshot of `store`.
    ///
    /// # Errors
    /// When the operating system refuses the thread, or without the `parallel` feature.
    pub(crate) fn start(store: &Store) -> Result<Self, std::io::Error> {
        let thread = BuildThread::start()?;
        let slots = store.slot_count();
        let spare = thread.launch(move || Store::touched(slots));
        Ok(Self { thread, spare })
    }
}

/// A new engine building from a snapshot, and what changed since.
pub(crate) struct Pending {
    pub(crate) algorithm: Algorithm,
    /// The update (counted by the Auto engine) whose store the snapshot is of.
    taken_at: u64,
    /// The update at which the new engine goes in.
    due: u64,
    /// The updates from which the thread is sent a catch-up, soonest last.
    stages: Vec<u64>,
    thread: BuildThread,
    /// Where the catch-ups go: closed before the join, which ends the thread's work. None
    /// waits to be sent: the thread runs each in turn, however far behind it is, so that the
    /// new engine's history, and the order of its pairs after the switch, is the same on every
    /// machine; what it holds is bounded by the stages (a handful of catch-ups, each of what
    /// changed since the last).
    catchups: Sender<Catchup>,
    /// The build, until it is handed to the thread with the snapshot once the snapshot's
    /// update has run (not beside it), and running from then on. (In a mutex only so that
    /// the engine is `Sync`: reached through `&mut self`.)
    work: Mutex<Option<Work>>,
    /// Memory the thread readied for the snapshot, if it was started early. (In a mutex only
    /// so that the engine is `Sync`.)
    spare: Mutex<Option<Running<Store>>>,
    snapshot: Option<Store>,
    build: Option<Running<Result<Built, Error>>>,
    /// Slots changed since the last catch-up (or the snapshot), each once, and a flag per
    /// slot saying so.
    changed: Vec<u32>,
    seen: Vec<bool>,
    /// The pair keys the running engine created or deleted since the snapshot (a key twice
    /// for a pair that came and went).
    toggled: Vec<u64>,
}

impl Pending {
    /// Readies a build of an engine of `algorithm`, to go in at update `now + after`, from a
    /// snapshot of the store taken in update `now` while the running engine runs it
    /// ([`snapshot_beside`](Self::snapshot_beside)); the thread starts on it once that update
    /// has run ([`record`](Self::record)).
    ///
    /// # Errors
    /// When the operating system refuses the thread, or without the `parallel` feature: the
    /// caller switches in place instead.
    pub(crate) fn start(
        algorithm: Algorithm,
        config: &Config,
        now: u64,
        after: u64,
        prepared: Option<Prepared>,
    ) -> Result<Self, std::io::Error> {
        let (thread, spare) = match prepared {
            Some(Prepared { thread, spare }) => (thread, Some(spare)),
            None => (BuildThread::start()?, None),
        };
        let mut engine = engine::boxed(algorithm, config);
        let (catchups, catchups_in) = mpsc::channel::<Catchup>();
        // The thread's copy of the store: the snapshot, then brought on by each catch-up.
        let work: Work = Box::new(move |mut mirror: Store| {
            let mut changes = PairChanges::default();
            engine.update(&mirror, &mut changes)?;
            let mut pairs = std::mem::take(&mut changes.created);
            pairs.sort_unstable();
            let mut toggled = Vec::new();
            // Until the sender closes the channel, at the join.
            for catchup in catchups_in {
                mirror.take_catchup(catchup);
                changes.clear();
                engine.update(&mirror, &mut changes)?;
                toggled.extend(&changes.created);
                toggled.extend(&changes.deleted);
            }
            Ok(Built {
                engine,
                store: mirror,
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
            catchups,
            work: Mutex::new(Some(work)),
            spare: Mutex::new(spare),
            snapshot: None,
            build: None,
            changed: Vec::new(),
            seen: Vec::new(),
            toggled: Vec::new(),
        })
    }

    /// Whether the snapshot is still to be taken.
    pub(crate) fn wants_snapshot(&self) -> bool {
        self.snapshot.is_none() && self.build.is_none()
    }

    /// Runs `update` (the running engine's update of `store`) here while the build's thread
    /// copies `store` for the snapshot: both only read it. Copying 40,000 proxies into fresh
    /// memory takes about 1.0 ms, more than the update it would otherwise be added to in a
    /// scene that mostly rests. A thread started early that is still readying its memory (held
    /// back by other work on the cores for two whole updates) is not waited for: the snapshot
    /// is copied here, after the update, into fresh memory.
    pub(crate) fn snapshot_beside<R>(&mut self, store: &Store, update: impl FnOnce() -> R) -> R {
        let spare = match self.spare.get_mut().ok().and_then(Option::take) {
            Some(running) => match running.try_join() {
                Ok(spare) => spare,
                // Dropped: the thread gives the memory back once it is done with it.
                Err(_busy) => {
                    let out = update();
                    self.snapshot = Some(store.snapshot_for_build(None));
                    return out;
                }
            },
            None => None,
        };
        let (snapshot, out) = self
            .thread
            .beside(|| store.snapshot_for_build(spare), update);
        self.snapshot = snapshot;
        out
    }

    /// Hands the build to the thread, if it has not been (and the snapshot is taken).
    fn launch(&mut self) {
        let Some(snapshot) = self.snapshot.take() else {
            return;
        };
        if let Some(work) = self.work.get_mut().ok().and_then(Option::take) {
            self.build = Some(self.thread.launch(move || work(snapshot)));
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

    /// At the updates set for it, after [`record`](Self::record): sends the thread the
    /// changes since its last catch-up (this update's included), so that it runs them while
    /// the current engine serves the next updates.
    pub(crate) fn stage(&mut self, now: u64, store: &Store) {
        if self.stages.last() != Some(&now) {
            return;
        }
        self.stages.pop();
        // Launched at the snapshot's update, unless that update failed before it recorded.
        self.launch();
        // A thread that stopped (its engine returned an error) is seen at the join.
        let _ = self.catchups.send(store.catchup(&self.changed));
        for &slot in &self.changed {
            self.seen[slot as usize] = false;
        }
        self.changed.clear();
    }

    /// Joins the build and brings the new engine up to date in this update (`store` as the
    /// driver hands it to the engine), filling `changes` with this update's events against
    /// the running engine's pairs at the last update, and puts it in `running`'s place.
    /// Returns whether it did: not if its build failed (the running engine then runs this
    /// update as usual). The engine it replaces, and the copy of the store the new one was
    /// brought on with, are dropped on the build's thread: giving back their memory took
    /// 0.3 ms of the switch update in `bplab phases`.
    ///
    /// # Errors
    /// What the new engine's catch-up update returns.
    pub(crate) fn finish(
        mut self,
        store: &Store,
        changes: &mut PairChanges,
        running: &mut Box<dyn Engine>,
    ) -> Result<bool, Error> {
        self.launch();
        let Pending {
            thread,
            catchups,
            build,
            changed,
            toggled,
            ..
        } = self;
        drop(catchups);
        let Some(Ok(mut built)) = build.and_then(Running::join) else {
            return Ok(false);
        };
        built.store.take_catchup(store.catchup(&changed));
        let mut caught = PairChanges::default();
        built.engine.update(&built.store, &mut caught)?;
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
        let replaced = std::mem::replace(running, built.engine);
        thread.discard((replaced, built.store, built.pairs, old, new));
        Ok(true)
    }

    /// Heap bytes held on this side (the build and its copy of the store are on the
    /// thread's).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.changed.capacity() * 4 + self.seen.capacity() + self.toggled.capacity() * 8
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
    use super::*;

    #[test]
    fn copies_go_halfway_then_halfway_through_what_is_left() {
        // Popped from the end: soonest first.
        assert_eq!(stages(10, 16), vec![24, 22, 18]);
        assert_eq!(stages(0, 40), vec![38, 35, 30, 20]);
        assert_eq!(stages(5, 4), vec![7]);
        assert!(stages(5, 3).is_empty());
        assert!(stages(5, 1).is_empty());
    }

    /// The deciding update does not wait for a thread started early that is still readying
    /// memory for the snapshot: it copies the snapshot itself.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_snapshot_does_not_wait_for_memory_still_being_readied() {
        use crate::{Aabb, ProxyDesc};
        let mut store = Store::new(&Config::default());
        let boxes: Vec<(Aabb, ProxyDesc)> = (0..100)
            .map(|i| {
                let lo = [i as f32, 0.0, 0.0];
                (Aabb::new(lo, lo.map(|c| c + 1.5)), ProxyDesc::default())
            })
            .collect();
        store.insert_batch(&boxes).expect("valid boxes");
        store.begin_update();
        let thread = BuildThread::start().expect("a thread");
        let (go, gate) = mpsc::channel::<()>();
        let (said, heard) = mpsc::channel::<bool>();
        let slots = store.slot_count();
        // The memory is ready only once the snapshot has been taken: waiting for it would
        // hold the snapshot until the gate gives up.
        let spare = thread.launch(move || {
            let released = gate
                .recv_timeout(std::time::Duration::from_secs(30))
                .is_ok();
            let _ = said.send(released);
            Store::touched(slots)
        });
        let prepared = Prepared { thread, spare };
        let config = Config::default();
        let mut pending =
            Pending::start(Algorithm::Sap, &config, 0, 4, Some(prepared)).expect("a thread");
        assert!(pending.wants_snapshot());
        let out = pending.snapshot_beside(&store, || 42);
        let _ = go.send(());
        assert_eq!(out, 42);
        assert_eq!(heard.recv(), Ok(true), "the snapshot waited for the memory");
        assert!(!pending.wants_snapshot());
        // The build runs from it: the 99 neighbours' pairs, all created.
        pending.record(0, &store, &PairChanges::default());
        let Pending {
            build, catchups, ..
        } = pending;
        drop(catchups);
        let built = build
            .and_then(Running::join)
            .expect("a build")
            .expect("no error");
        assert_eq!(built.pairs.len(), 99);
    }
}
