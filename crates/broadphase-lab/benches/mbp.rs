//! Mbp and Abp, on one and two threads, against the parry3d yardstick (its BVH driven the way
//! rapier drives it, one thread): the cost of one frame.
//!
//! ```text
//! cargo bench -p broadphase-lab --bench mbp                       # everything (~10 minutes)
//! cargo bench -p broadphase-lab --bench mbp -- uniform_100k       # one scene (a filter)
//! BENCH_N=5000 cargo bench -p broadphase-lab --bench mbp -- --quick   # smoke run
//! ```
//!
//! Ids read `mbp/<scene>_<size>/<contender>`: `mbp_8x8_t1` is Mbp with 8 × 8 regions over the
//! scene's bounds (PhysX's `createRegionsFromWorldBounds`, y up) on one thread, `_t2` on two;
//! `mbp_auto` derives its regions; `abp`; `parry3d_bvh` the yardstick (rapier's settings,
//! single-threaded by design). A timed iteration is one frame: the scene steps (not timed),
//! then the contender applies the frame's removals, arrivals and moves and finds the pairs
//! (timed). Before timing, every `broadphase` contender's pairs are checked against Abp's at
//! the start, and the yardstick is checked as in the `frame` bench.

mod common;

use std::time::Duration;

use broadphase::{Aabb, Algorithm, BroadPhase, Config, Mbp, MbpSettings};
use broadphase_lab::scenes::{Scene, SceneKind};
use common::yardstick::{self, Mode};
use common::{BroadPhaseContender, Contender, SceneSpec};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

/// The scenes, at full size.
const SCENES: &[SceneSpec] = &[
    SceneSpec::new(SceneKind::Uniform, 100_000),
    SceneSpec::new(SceneKind::Sleeping, 100_000),
    SceneSpec::new(SceneKind::Churn, 100_000),
    SceneSpec::new(SceneKind::Uniform, 1_000_000),
];

/// Builds a contender on a scene at its start. Set-up, not timed.
type Make = fn(&Scene) -> Box<dyn Contender>;

/// The contenders: name, threads, maker.
const CONTENDERS: &[(&str, usize, Make)] = &[
    ("mbp_8x8_t1", 1, |s| checked(mbp_grid(s, 8), s)),
    ("mbp_8x8_t2", 2, |s| checked(mbp_grid(s, 8), s)),
    ("mbp_4x4_t1", 1, |s| checked(mbp_grid(s, 4), s)),
    ("mbp_4x4_t2", 2, |s| checked(mbp_grid(s, 4), s)),
    ("mbp_auto_t1", 1, |s| {
        checked(broadphase::new(Algorithm::Mbp, Config::default()), s)
    }),
    ("abp_t1", 1, |s| {
        checked(broadphase::new(Algorithm::Abp, Config::default()), s)
    }),
    ("abp_t2", 2, |s| {
        checked(broadphase::new(Algorithm::Abp, Config::default()), s)
    }),
    ("parry3d_bvh", 1, |s| yardstick::checked(Mode::Rapier, s, 2)),
];

/// The box the scene's objects stay in: its cube, plus the largest half size and the
/// overshoot of a bounce.
fn scene_bounds(scene: &Scene) -> Aabb {
    Aabb::new([-2.0; 3], [scene.side() + 2.0; 3])
}

/// Mbp with `n × n` regions over the scene's bounds.
fn mbp_grid(scene: &Scene, n: u32) -> Box<dyn BroadPhase> {
    let settings = MbpSettings::new(scene_bounds(scene), n);
    Box::new(Mbp::with_settings(Config::default(), &settings).expect("valid settings"))
}

/// Loads `bp` with the scene and checks its pairs against Abp's.
///
/// # Panics
/// When they differ (or a region left an object out of bounds).
fn checked(bp: Box<dyn BroadPhase>, scene: &Scene) -> Box<dyn Contender> {
    let contender =
        BroadPhaseContender::with_broad_phase(bp, scene).expect("the scene's boxes are valid");
    let abp = BroadPhaseContender::new(Algorithm::Abp, Config::default(), scene)
        .expect("the scene's boxes are valid");
    assert!(
        contender.pairs() == abp.pairs(),
        "{:?} disagrees with Abp at the start of the scene",
        contender.broad_phase().algorithm()
    );
    Box::new(contender)
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bench-{i}"))
        .build()
        .expect("cannot start the bench's rayon pool")
}

fn mbp(c: &mut Criterion) {
    let pools = [pool(1), pool(2)];
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let mut group = c.benchmark_group(format!("mbp/{}", spec.label()));
        if spec.n >= 500_000 {
            // A frame takes a good fraction of a second: few, flat samples.
            group
                .sample_size(10)
                .sampling_mode(SamplingMode::Flat)
                .warm_up_time(Duration::from_secs(3))
                .measurement_time(Duration::from_secs(10));
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
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5));
    targets = mbp
}
criterion_main!(benches);
