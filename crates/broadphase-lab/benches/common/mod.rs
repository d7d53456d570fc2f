//! What the broad-phase benches share: the scene list entries, the one-thread pool and the
//! frame timer. The contenders (`broadphase`'s algorithms and the parry3d yardstick) are the
//! lab library's, the ones `bplab bench` runs.

// Each bench target compiles this module on its own and uses a subset of it.
#![allow(dead_code, unused_imports)]

pub use broadphase_lab::bench::contender::{BroadPhaseContender, Contender, Reported};
pub use broadphase_lab::bench::report::size_label;

/// The parry3d yardstick: parry's BVH driven the way rapier drives it, or exactly
/// (`broadphase_lab::bench::peers::parry`).
pub mod yardstick {
    pub use broadphase_lab::bench::peers::parry::{to_parry, Mode, Yardstick};
    use broadphase_lab::bench::peers::PeerKind;
    use broadphase_lab::bench::runner::checked_peer;
    use broadphase_lab::scenes::Scene;

    use super::Contender;

    /// The yardstick in `mode` on `scene`, built after its pairs matched Abp's on the first
    /// `frames` frames (the check of `bplab bench`: exact mode's pairs every frame, rapier
    /// mode's reports gathered as its pair map would, filtered by exact overlap). Set-up for a
    /// bench.
    ///
    /// # Panics
    /// With the first difference, when the two disagree.
    pub fn checked(mode: Mode, scene: &Scene, frames: usize) -> Box<dyn Contender> {
        let peer = match mode {
            Mode::Rapier => PeerKind::ParryRapier,
            Mode::Exact => PeerKind::ParryExact,
        };
        let contender = checked_peer(peer, scene, frames).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "yardstick check passed: {mode}, {} objects, {frames} frames",
            scene.len()
        );
        contender
    }
}

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase_lab::scenes::{Scene, SceneKind};
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
        let out = contender
            .frame(&frame)
            .expect("the scene's frames are valid input");
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
