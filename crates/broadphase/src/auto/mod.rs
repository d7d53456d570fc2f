//! [`Auto`]: the broad phase that chooses its algorithm from the scene it holds, and switches
//! as the scene changes.
//!
//! The rules and their thresholds are documented on [`Auto`]; `policy.rs` gives the bench
//! figures behind each threshold, `measure.rs` how each measure is taken.

mod background;
mod build_thread;
mod measure;
mod policy;

pub use measure::SceneMeasures;
pub use policy::Reason;

use std::ops::ControlFlow;

use crate::engine::{self, Driver, Engine, PairChanges, PairList, Store};
use crate::{Aabb, Algorithm, Config, Error, Figures, LayerMask, ProxyId, Ray, Stats};
use background::{Pending, Prepared};
use measure::Meter;

/// The broad phase that needs no choosing: it runs on [`Abp`](crate::Abp), [`Sap`](crate::Sap),
/// [`QuadTree`](crate::QuadTree) or [`Grid`](crate::Grid), whichever suits the scene it holds,
/// measured before every update, and switches as the scene changes (a level loaded, a mass
/// spawn, most bodies going to sleep) without changing ids, pairs or events.
///
/// Before each update it measures the scene ([`SceneMeasures`]: proxies, the fixed share, the
/// share that changes per update, arrivals and departures, pairs per proxy, and how much the
/// boxes gather), picks the algorithm the rules below give for it, and runs that
/// algorithm's engine. A new choice must hold for [`AutoSettings::hold`] updates in a row
/// before it is taken, and every rule leaves at a threshold on the other side of the one it
/// enters at, so that a scene near a threshold does not flip every update. A change of
/// algorithm builds the new engine from the store at that update, which reports exactly the
/// events the old engine would have (`Engine::restart`); ids, boxes, pairs and events never
/// depend on the algorithm, only the time does.
///
/// The rules, in order, from `bplab bench --algos abp,sap,mbp,quadtree,grid --no-peers
/// --threads 1` over every scene at 10k, 30k, 100k and 1M boxes (the source's
/// `auto/policy.rs` gives the figures behind each threshold):
///
/// | the scene | algorithm | reason |
/// |---|---|---|
/// | 20,000 proxies or more, 90% of them fixed (leaves under 80%) and 4% or fewer moving per update (leaves over 6%) | QuadTree | [`Reason::FixedLevel`] |
/// | 8 pairs or more per proxy (leaves under 6), under 50,000 proxies | Sap | [`Reason::Crowded`] |
/// | the same, 50,000 proxies or more (Grid leaves under 40,000) | Grid | [`Reason::LargeCrowd`] |
/// | under 50,000 proxies, 15% or fewer changing per update (leaves over 25%), a quarter or fewer of the dynamic ones moving (leaves over 40%) | Sap | [`Reason::MostlyResting`] |
/// | anything else | Abp | [`Reason::Moving`] |
///
/// The first update chooses from what it can see (counts, the fixed share, and pairs
/// estimated from the overlaps among a sample of the boxes) and takes the
/// choice at once; motion is known from the second update on, whose choice is taken at once
/// too (the first was made blind to motion). The hold applies from the third, except to an
/// update that changes half the proxies or more, or a quarter of them more than the running
/// mean of the changed share (a spawn, a wake-up), whose choice is taken at once; the mean
/// restarts at an update a quarter away from it either way (most bodies falling asleep too).
///
/// From [`AutoSettings::background_from`] proxies (4,000) and with threads, a switch builds
/// the new engine on a thread of its own from a snapshot of the store as the deciding update
/// finds it, while the current one keeps serving; sends it the changes as it goes, and puts
/// it in [`AutoSettings::build_updates`] updates later (16, or one per 625 proxies if more),
/// catching up with the last two updates' changes; smaller scenes, broad phases without
/// threads, and an update whose choice is taken at once for its changes build it in place
/// in one update, which then costs about a first build of the new algorithm. `bplab run`
/// and `bplab phases` show the switch frames.
///
/// ```
/// use broadphase::{Aabb, Algorithm, Auto, BroadPhase, Config, Figures, Pair, ProxyDesc};
/// let mut bp = Auto::new(Config::default());
/// let ground = bp.insert(Aabb::new([-50.0, -1.0, -50.0], [50.0, 0.0, 50.0]), ProxyDesc::fixed())?;
/// let ball = bp.insert(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
/// assert_eq!(bp.algorithm(), Algorithm::Auto);
///
/// // What it runs on now, and why.
/// let Figures::Auto(auto) = bp.stats().figures else { unreachable!() };
/// println!("{} ({})", auto.running, auto.reason);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type Auto = Driver<AutoEngine>;

impl Auto {
    /// An empty broad phase with the default [`AutoSettings`].
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(&config, AutoEngine::new(&config, AutoSettings::default()))
    }

    /// An empty broad phase with chosen settings.
    #[must_use]
    pub fn with_settings(config: Config, settings: AutoSettings) -> Self {
        Driver::with_engine(&config, AutoEngine::new(&config, settings))
    }

    /// Runs on `algorithm` whatever the scene, or with `None`, chooses again. The switch is
    /// decided at the next update and made as every switch is: in that update, or from
    /// [`AutoSettings::background_from`] proxies built in the background and put in
    /// [`AutoSettings::build_updates`] updates later. For a caller that knows what comes (a
    /// level about to stream in), and for tests that switch on purpose.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, Auto, BroadPhase, Config, Figures, ProxyDesc, Reason};
    /// let mut bp = Auto::new(Config::default());
    /// bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// bp.pin(Some(Algorithm::Sap))?;
    /// bp.update()?;
    /// let Figures::Auto(auto) = bp.stats().figures else { unreachable!() };
    /// assert_eq!((auto.running, auto.reason), (Algorithm::Sap, Reason::Pinned));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for [`Algorithm::Auto`] itself; nothing changes.
    pub fn pin(&mut self, algorithm: Option<Algorithm>) -> Result<(), Error> {
        if algorithm == Some(Algorithm::Auto) {
            return Err(Error::InvalidParameter {
                name: "Auto::pin",
                value: 0.0,
                expected: "an algorithm other than Auto, or None",
            });
        }
        self.engine.pinned = algorithm;
        Ok(())
    }

    /// The algorithm it runs on now ([`Algorithm::Abp`] before the first update).
    #[must_use]
    pub fn running(&self) -> Algorithm {
        self.engine.running
    }
}

/// [`Auto`]'s settings.
///
/// ```
/// use broadphase::{Auto, AutoSettings, Config};
/// let mut settings = AutoSettings::default();
/// settings.hold = 16; // switch only after 16 updates agree
/// settings.background_from = usize::MAX; // always switch in place
/// let bp = Auto::with_settings(Config::default(), settings);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AutoSettings {
    /// Updates in a row a new choice must hold before it is taken (at least 1). A switch
    /// builds the new engine from scratch, so a choice that flickers would cost a build
    /// each time. An update that changes half the proxies or more (a level loaded, a mass
    /// spawn) takes a new choice at once: it rebuilds most of the structure anyway.
    pub hold: u32,
    /// Proxies from which a switch builds the new engine on another thread while the current
    /// one keeps serving (`usize::MAX`: never). Below it a build from scratch takes well under
    /// a millisecond, and the switch happens in place. Without threads
    /// ([`Config::use_threads`]) every switch happens in place.
    pub background_from: usize,
    /// Updates between the one that starts a background build and the one that puts the new
    /// engine in (at least 1), or one per 625 proxies if that is more (at most 256): a
    /// count, not a clock, so that the switch (and the order of `pairs()` after it) is the
    /// same on every machine. The build runs meanwhile on a thread of its own, and is sent
    /// the changes as it goes (halfway there, then halfway through what is left, down to two
    /// updates before), so that the switch update catches up with two updates' changes; if
    /// the thread is behind by then, that update waits for it. At 60 updates a second the
    /// default, 16, gives a build of up to 10,000 proxies a quarter of a second.
    pub build_updates: u32,
}

impl Default for AutoSettings {
    fn default() -> Self {
        Self {
            hold: 8,
            background_from: 4_000,
            build_updates: 16,
        }
    }
}

/// The share of the proxies changed in one update from which a new choice is taken at once.
const MASS_CHANGE: f32 = 0.5;

/// Proxies per update of the time a background build is given, and the most updates that
/// gives: a build grows with the proxies where a frame of a scene that mostly rests does not.
/// `bplab phases` (40,000 proxies, most asleep, a switch to Sap, frames of 0.7 ms on two
/// cores): the build and its catch-ups take the thread about 30 ms (the build of Sap 21 ms of
/// it, where one core alone builds it in 11: the thread's memory is fresh and it shares the
/// caches). Given 40 updates (one per 1,000 proxies), the switch update waited 10-15 ms for
/// the thread in half of the runs; given 64, at most 0.8 ms in six.
const BUILD_PROXIES_PER_UPDATE: usize = 625;
const MOST_SCALED_BUILD_UPDATES: usize = 256;

/// The updates a background build of `proxies` is given at least, whatever
/// [`AutoSettings::build_updates`] says.
fn scaled_build_updates(proxies: usize) -> u64 {
    (proxies / BUILD_PROXIES_PER_UPDATE).min(MOST_SCALED_BUILD_UPDATES) as u64
}

/// [`Auto`]'s own figures ([`Figures::Auto`]): what it runs on, why, and the measures it
/// chose from.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct AutoFigures {
    /// The algorithm it ran the last update on.
    pub running: Algorithm,
    /// Why.
    pub reason: Reason,
    /// Changes of algorithm so far (the first choice is not one).
    pub switches: u64,
    /// Updates run on the current algorithm.
    pub updates_running: u64,
    /// The measures the choice was made from.
    pub measures: SceneMeasures,
    /// The current algorithm's own figures.
    pub inner: Box<Figures>,
}

/// [`Auto`]'s engine: the engine of the algorithm it runs on, and the measures and rules that
/// choose it.
pub struct AutoEngine {
    config: Config,
    settings: AutoSettings,
    inner: Box<dyn Engine>,
    running: Algorithm,
    reason: Reason,
    /// The algorithm to build at the next update, set when [`Engine::restart`] said so.
    next: Option<(Algorithm, Reason)>,
    /// A choice other than the running one, and the updates in a row it has held.
    candidate: Option<(Algorithm, Reason, u32)>,
    pinned: Option<Algorithm>,
    meter: Meter,
    switches: u64,
    updates_running: u64,
    /// Updates run so far.
    updates: u64,
    /// The next engine, building on another thread, and the reason it was chosen for.
    pending: Option<(Pending, Reason)>,
    /// A build's thread, started two updates before a background switch is decided.
    prepared: Option<Prepared>,
}

impl std::fmt::Debug for AutoEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoEngine")
            .field("running", &self.running)
            .field("reason", &self.reason)
            .field("switches", &self.switches)
            .field("measures", &self.meter.measures)
            .finish_non_exhaustive()
    }
}

impl AutoEngine {
    /// An engine holding nothing, which chooses at its first update.
    #[must_use]
    pub fn new(config: &Config, settings: AutoSettings) -> Self {
        Self {
            config: config.clone(),
            settings,
            inner: engine::boxed(Algorithm::Abp, config),
            running: Algorithm::Abp,
            reason: Reason::NotChosen,
            next: None,
            candidate: None,
            pinned: None,
            meter: Meter::default(),
            switches: 0,
            updates_running: 0,
            updates: 0,
            pending: None,
            prepared: None,
        }
    }

    /// Records a switch to `algorithm`, chosen for `reason` (the first choice is no switch).
    fn switched(&mut self, algorithm: Algorithm, reason: Reason) {
        if self.reason != Reason::NotChosen {
            self.switches += 1;
        }
        (self.running, self.reason, self.updates_running) = (algorithm, reason, 0);
    }

    /// Pairs the inner engine held at its last update.
    fn pair_count(&self) -> usize {
        self.inner.pair_lists().iter().map(|l| l.keys.len()).sum()
    }

    /// Whether this update's changes make a new choice be taken at once and built in place:
    /// a mass change, or a step up in the share that changes (a spawn, a wake-up). The scene
    /// is not the one the held updates saw.
    fn sudden_change(&self) -> bool {
        self.meter.measures.changed_now >= MASS_CHANGE || self.meter.stepped_up()
    }

    /// The algorithm to run this update on, and why: the pinned one, the rules' choice once
    /// it has held long enough, or the running one.
    fn decide(&mut self) -> (Algorithm, Reason) {
        if let Some(pinned) = self.pinned {
            return (pinned, Reason::Pinned);
        }
        let m = &self.meter.measures;
        let (choice, reason) = policy::choose(m, self.reason);
        if choice == self.running {
            self.candidate = None;
            return (choice, reason);
        }
        // The first choice, and the one of the second measured update: the first could not
        // see motion (every proxy was new), so the choice it made is provisional.
        let first = self.reason == Reason::NotChosen
            || self.reason == Reason::Pinned
            || self.meter.updates() == 2;
        let held = match self.candidate {
            Some((c, _, n)) if c == choice => n + 1,
            _ => 1,
        };
        self.candidate = Some((choice, reason, held));
        if first || held >= self.settings.hold.max(1) || self.sudden_change() {
            self.candidate = None;
            (choice, reason)
        } else {
            (self.running, self.reason)
        }
    }
}

impl Engine for AutoEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Auto
    }

    fn restart(&mut self, store: &Store) -> bool {
        if store.is_empty() && self.pinned.is_none() {
            return false;
        }
        let pairs = self.pair_count();
        self.meter.measure(store, pairs);
        if self.pending.is_some() {
            // One switch at a time: the next choice is made once this one is in.
            return false;
        }
        let (choice, reason) = self.decide();
        // A mass change (a level loaded, a spawn) is nearly a build for any engine: the new
        // one is built in this update rather than the old one paying for it and the new one
        // catching up with it later. So is a step up in the share that changes: the old
        // engine would take the arrivals or the wake-up in the structure the resting scene
        // suited (`bplab phases`' spawn: QuadTree's first spawn update 15.6 ms).
        let in_background = self.reason != Reason::NotChosen
            && !self.sudden_change()
            && self.config.use_threads()
            && store.len() >= self.settings.background_from;
        if choice == self.running {
            self.reason = reason;
            // A choice two updates short of its hold: the build's thread starts now, and
            // readies the snapshot's memory, so that the update that decides pays for
            // neither (`bplab phases`: 0.15 ms to start the thread, and the snapshot into
            // fresh memory takes twice the time it takes into touched memory).
            let due_soon = self
                .candidate
                .is_some_and(|(_, _, held)| held + 2 >= self.settings.hold.max(1));
            if !(due_soon && in_background) {
                self.prepared = None;
            } else if self.prepared.is_none() {
                self.prepared = Prepared::start(store).ok();
            }
            return false;
        }
        let prepared = self.prepared.take();
        if in_background {
            let now = self.updates + 1;
            let after =
                u64::from(self.settings.build_updates).max(scaled_build_updates(store.len()));
            if let Ok(pending) = Pending::start(choice, &self.config, now, after, prepared) {
                self.pending = Some((pending, reason));
                return false;
            }
        }
        self.next = Some((choice, reason));
        true
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        self.updates += 1;
        if let Some((algorithm, reason)) = self.next.take() {
            // The driver handed the proxies over (`restart` said so): the fresh engine is
            // built from the store, and the driver diffs its pairs against the last update's.
            self.inner = engine::boxed(algorithm, &self.config);
            self.switched(algorithm, reason);
        }
        if store.rules_changed() != 0 {
            // The snapshot knew other rules: build again later rather than reason about
            // which pairs the change reached.
            self.pending = None;
        }
        if self
            .pending
            .as_ref()
            .is_some_and(|(p, _)| p.due(self.updates))
        {
            if let Some((pending, reason)) = self.pending.take() {
                let algorithm = pending.algorithm;
                if pending.finish(store, changes, &mut self.inner)? {
                    self.switched(algorithm, reason);
                    self.updates_running += 1;
                    return Ok(());
                }
                changes.clear();
            }
        }
        self.updates_running += 1;
        let inner = &mut self.inner;
        match &mut self.pending {
            Some((pending, _)) if pending.wants_snapshot() => {
                pending.snapshot_beside(store, || inner.update(store, changes))?;
            }
            _ => inner.update(store, changes)?,
        }
        if let Some((pending, _)) = &mut self.pending {
            pending.record(self.updates, store, changes);
            pending.stage(self.updates, store);
        }
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.inner.pair_lists()
    }

    fn candidates(
        &self,
        store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.inner.candidates(store, bounds, visit)
    }

    fn ray_candidates(
        &self,
        store: &Store,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.inner.ray_candidates(store, ray, max_t, world, visit)
    }

    fn query_aabb(
        &self,
        store: &Store,
        aabb: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Option<ControlFlow<()>> {
        self.inner.query_aabb(store, aabb, mask, visit)
    }

    fn check_structure(&self, store: &Store) -> Result<(), String> {
        if self.inner.algorithm() != self.running {
            return Err(format!(
                "auto: runs {:?} but says {:?}",
                self.inner.algorithm(),
                self.running
            ));
        }
        self.inner.check_structure(store)
    }

    fn snapshot(&self, store: &Store) -> Option<crate::Snapshot> {
        // The engine it runs on shares its structure if it can (QuadTree does); a pending
        // build is not in use yet.
        self.inner.snapshot(store)
    }

    fn shift_origin(&mut self, shift: [f32; 3]) {
        // The snapshot's boxes are in the old coordinates: build again later.
        self.pending = None;
        self.inner.shift_origin(shift);
    }

    fn stats(&self, store: &Store, stats: &mut Stats) {
        self.inner.stats(store, stats);
        stats.memory_bytes +=
            self.meter.memory_bytes() + self.pending.as_ref().map_or(0, |(p, _)| p.memory_bytes());
        let inner = std::mem::take(&mut stats.figures);
        stats.figures = Figures::Auto(AutoFigures {
            running: self.running,
            reason: self.reason,
            switches: self.switches,
            updates_running: self.updates_running,
            measures: self.meter.measures,
            inner: Box::new(inner),
        });
    }
}

#[cfg(test)]
mod tests;
