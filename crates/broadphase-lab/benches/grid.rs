//! The cost of one frame of `broadphase`'s Grid against Abp and parry3d's BVH driven the way
//! rapier drives it (see `broadphase_lab::bench::peers::parry`), on one thread and on two.
//!
//! ```text
//! cargo bench -p broadphase-lab --bench grid                       # every scene, full size
//! cargo bench -p broadphase-lab --bench grid -- uniform_100k       # one scene (a filter)
//! BENCH_N=2000 cargo bench -p broadphase-lab --bench grid -- --quick    # smoke run
//! ```
//!
//! Ids read `grid/<scene>_<size>/<contender>`, so one run gives the ratios; `grid_1t_pairs` also
//! reads `pairs()` after every update. A timed iteration is
//! one frame: the scene steps (not timed), then the contender applies the frame's removals,
//! arrivals and moves and finds the pairs (timed). `_1t` contenders run on a one-thread rayon
//! pool (the single core parry3d uses), `_2t` ones on a two-thread pool. The yardstick's pairs
//! are checked against Abp's on the first frames before it is timed.

mod common;

use std::time::Duration;

use broadphase::{Algorithm, Config};
use broadphase_lab::scenes::{Frame, Scene, SceneKind};
use common::yardstick::{self, Mode};
use common::{BroadPhaseContender, Contender, Reported, SceneSpec};
use criterion::{criterion_group, criterion_main, Criterion};

/// The scenes, at full size.
const SCENES: &[SceneSpec] = &[
    SceneSpec::new(SceneKind::Uniform, 100_000),
    SceneSpec::new(SceneKind::Particles, 100_000),
    SceneSpec::new(SceneKind::Sizes, 100_000),
    SceneSpec::new(SceneKind::Uniform, 1_000_000),
];

/// Builds a contender on a scene at its start. Set-up, not timed.
type Make = fn(&Scene) -> Box<dyn Contender>;

/// The contenders, by the name that ends their bench id, and their thread count.
const CONTENDERS: &[(&str, usize, Make)] = &[
    ("grid_1t", 1, |scene| contender(Algorithm::Grid, scene)),
    ("grid_2t", 2, |scene| contender(Algorithm::Grid, scene)),
    ("grid_1t_pairs", 1, |scene| {
        Box::new(ReadingPairs(
            BroadPhaseContender::new(Algorithm::Grid, Config::default(), scene)
                .expect("the scene's boxes are valid"),
        ))
    }),
    ("abp_1t", 1, |scene| contender(Algorithm::Abp, scene)),
    ("abp_2t", 2, |scene| contender(Algorithm::Abp, scene)),
    ("parry3d_bvh", 1, |scene| {
        yardstick::checked(Mode::Rapier, scene, 2)
    }),
];

fn contender(algorithm: Algorithm, scene: &Scene) -> Box<dyn Contender> {
    Box::new(
        BroadPhaseContender::new(algorithm, Config::default(), scene)
            .expect("the scene's boxes are valid"),
    )
}

/// A contender that also reads `pairs()` after every update: what a caller who wants the
/// whole persistent set every frame pays (Grid makes the list on the first call after an
/// update).
struct ReadingPairs(BroadPhaseContender);

impl Contender for ReadingPairs {
    fn frame(&mut self, frame: &Frame) -> Result<usize, broadphase::Error> {
        Ok(self.0.frame(frame)? + self.0.broad_phase().pairs().len())
    }

    fn reported(&self) -> Reported {
        self.0.reported()
    }
}

/// A rayon pool of two threads.
fn two_thread_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("bench-{i}"))
        .build()
        .expect("cannot start the two-thread rayon pool")
}

fn grid(c: &mut Criterion) {
    let pools = [common::single_thread_pool(), two_thread_pool()];
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let mut group = c.benchmark_group(format!("grid/{}", spec.label()));
        if spec.n >= 1_000_000 {
            group.sample_size(10);
        }
        for &(name, threads, make) in CONTENDERS {
            let pool = &pools[threads - 1];
            common::bench_frame(&mut group, name, pool, spec, make);
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Modest sampling: the whole bench takes under ten minutes on two cores.
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = grid
}
criterion_main!(benches);
