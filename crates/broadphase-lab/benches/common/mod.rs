//! What the broad-phase benches share: the scene list entries, the one-thread pool, the frame
//! timer and the `broadphase` contender. The parry3d yardstick is in [`yardstick`].

// Each bench target compiles this module on its own and uses a subset of it.
#![allow(dead_code)]

pub mod yardstick;

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc, ProxyId};
use broadphase_lab::scenes::{Frame, Scene, SceneKind};
use criterion::measurement::WallTime;
use criterion::BenchmarkGroup;

/// The seed of every bench scene: each contender sees the same boxes and the same motion.
pub const SEED: u64 = 42;

/// One scene of a bench: its kind and its full size.
#[derive(Clone, Copy, Debug)]
pub struct SceneSpec {
    /// The kind of scene.
    pub kind: SceneKind,
    /// How many objects.
    pub n: usize,
}

impl SceneSpec {
    /// The scene of `kind` with `n` objects.
    pub const fn new(kind: SceneKind, n: usize) -> Self {
        Self { kind, n }
    }

    /// This scene capped at `BENCH_N` objects when that variable is set (for smoke runs).
    ///
    /// # Panics
    /// If `BENCH_N` is set but is not a number.
    pub fn scaled(self) -> Self {
        match std::env::var("BENCH_N") {
            Ok(v) => {
                let cap: usize = v
                    .trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("BENCH_N must be a whole number, not {v:?}"));
                Self {
                    n: self.n.min(cap.max(1)),
                    ..self
                }
            }
            Err(_) => self,
        }
    }

    /// The label used in bench ids, e.g. `uniform_100k`. It carries the size actually run, so
    /// smoke runs never land in the same criterion baseline as full-size ones.
    pub fn label(&self) -> String {
        format!("{}_{}", self.kind.name(), size_label(self.n))
    }

    /// The scene at its start.
    pub fn build(&self) -> Scene {
        Scene::new(self.kind, self.n, SEED)
    }
}

/// `100k`, `1m`, or the plain number when it is not a round thousand.
pub fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// A rayon pool of one thread. Work run under its `install` keeps `broadphase`'s `parallel`
/// feature on a single thread, so every contender gets the same single core.
///
/// # Panics
/// If the operating system refuses the thread.
pub fn single_thread_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|_| "bench".into())
        .build()
        .expect("cannot start the one-thread rayon pool")
}

/// A broad phase under test, fed one scene frame at a time.
pub trait Contender: Send {
    /// Applies the frame's removals, arrivals and moves, then finds the pairs. Returns a figure
    /// of the result (a pair count) for the timer to black-box, so no work is optimised away.
    fn frame(&mut self, frame: &Frame) -> usize;
}

/// Runs `iters` frames and returns the time spent in [`Contender::frame`] only: stepping the
/// scene (and dropping its frame) is the simulation's cost, not the broad phase's, so it stays
/// outside the clock. For criterion's `iter_custom`.
pub fn time_frames<C: Contender + ?Sized>(
    scene: &mut Scene,
    contender: &mut C,
    iters: u64,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let frame = scene.step();
        let start = Instant::now();
        let out = contender.frame(&frame);
        total += start.elapsed();
        black_box(out);
    }
    total
}

/// Benches one contender's frame as `name` in `group`. The scene and the contender are built
/// on the first call, which criterion makes only when the id passes the filter, under `pool` and
/// outside the timing, so set-up never counts as frame time; each sample then times frames with
/// [`time_frames`] under `pool`, stepping the same scene on.
pub fn bench_frame(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    pool: &rayon::ThreadPool,
    spec: SceneSpec,
    make: impl Fn(&Scene) -> Box<dyn Contender> + Sync,
) {
    let mut state: Option<(Scene, Box<dyn Contender>)> = None;
    group.bench_function(name, |b| {
        let (scene, contender) = state.get_or_insert_with(|| {
            pool.install(|| {
                let scene = spec.build();
                let contender = make(&scene);
                (scene, contender)
            })
        });
        b.iter_custom(|iters| pool.install(|| time_frames(scene, contender.as_mut(), iters)));
    });
}

/// A `broadphase` algorithm driven through the [`BroadPhase`] trait, its objects keyed by scene
/// index.
pub struct BroadPhaseContender {
    bp: Box<dyn BroadPhase>,
    /// The id of each scene object (stale while the object is away).
    ids: Vec<ProxyId>,
    /// The scene index behind each proxy slot, to name pairs by scene index.
    owners: Vec<u32>,
    /// A frame's removals, arrivals and moves, each handed over as one batch.
    leaving: Vec<ProxyId>,
    arriving: Vec<(Aabb, ProxyDesc)>,
    moves: Vec<(ProxyId, Aabb)>,
}

impl BroadPhaseContender {
    /// Builds `algorithm` from the scene's current boxes with one `insert_batch` and one
    /// `update`, as a game loads a level: set-up cost, not per-frame cost.
    ///
    /// # Panics
    /// If the broad phase rejects a scene box (a scene bug).
    pub fn new(algorithm: Algorithm, config: Config, scene: &Scene) -> Self {
        Self::with_broad_phase(broadphase::new(algorithm, config), scene)
    }

    /// [`BroadPhaseContender::new`] for a broad phase built by the caller (an algorithm with
    /// non-default settings).
    ///
    /// # Panics
    /// If the broad phase rejects a scene box (a scene bug).
    pub fn with_broad_phase(mut bp: Box<dyn BroadPhase>, scene: &Scene) -> Self {
        let ids = bp
            .insert_batch(&scene.initial())
            .expect("the scene's boxes are valid");
        bp.update().expect("update cannot fail");
        let mut owners = vec![
            u32::MAX;
            ids.iter()
                .map(|id| id.index() as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        for (i, id) in ids.iter().enumerate() {
            owners[id.index() as usize] = i as u32;
        }
        Self {
            bp,
            ids,
            owners,
            leaving: Vec::new(),
            arriving: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// The broad phase itself.
    pub fn broad_phase(&self) -> &dyn BroadPhase {
        self.bp.as_ref()
    }

    /// Every overlapping pair as of the last update, as scene indices `(low, high)`, sorted.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let owner = |id: ProxyId| self.owners[id.index() as usize];
        let mut pairs: Vec<(u32, u32)> = self
            .bp
            .pairs()
            .iter()
            .map(|p| {
                let (a, b) = (owner(p.a), owner(p.b));
                (a.min(b), a.max(b))
            })
            .collect();
        pairs.sort_unstable();
        pairs
    }
}

impl Contender for BroadPhaseContender {
    fn frame(&mut self, frame: &Frame) -> usize {
        // The scene's order: removals, then arrivals, then moves, each handed over as one
        // batch, the way a game hands over a frame's destroyed, spawned and moved bodies.
        self.leaving.clear();
        self.leaving
            .extend(frame.removed.iter().map(|&i| self.ids[i as usize]));
        self.bp
            .remove_batch(&self.leaving)
            .expect("removed objects are live");
        self.arriving.clear();
        self.arriving
            .extend(frame.added.iter().map(|&(_, aabb, desc)| (aabb, desc)));
        let ids = self
            .bp
            .insert_batch(&self.arriving)
            .expect("the scene's boxes are valid");
        for (&(i, _, _), id) in frame.added.iter().zip(ids) {
            self.ids[i as usize] = id;
            let slot = id.index() as usize;
            if slot >= self.owners.len() {
                self.owners.resize(slot + 1, u32::MAX);
            }
            self.owners[slot] = i;
        }
        // The moves as one batch, the way a physics step hands them over.
        self.moves.clear();
        let ids = &self.ids;
        self.moves
            .extend(frame.moved.iter().map(|&(i, aabb)| (ids[i as usize], aabb)));
        self.bp
            .set_aabbs(&self.moves)
            .expect("moved objects are live and their boxes valid");
        let events = self.bp.update().expect("update cannot fail");
        events.created().len() + events.deleted().len()
    }
}
