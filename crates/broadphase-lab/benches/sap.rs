//! Sap against Abp and the parry3d yardstick, single-threaded, on the scenes that show where
//! an incremental sweep-and-prune wins and where it loses.
//!
//! ```text
//! cargo bench -p broadphase-lab --bench sap                       # everything, full size
//! cargo bench -p broadphase-lab --bench sap -- sleeping_100k      # one scene (a filter)
//! BENCH_N=2000 cargo bench -p broadphase-lab --bench sap -- --quick   # smoke run
//! ```
//!
//! Two groups:
//!
//! - `sap_frame/<scene>_<size>/<contender>`: one frame, as in the `frame` bench: the scene
//!   steps (not timed), then the contender applies the frame's removals, arrivals and moves and
//!   finds the pairs (timed). Scenes: `sleeping` (10% of the boxes moving), `uniform` (all
//!   moving) and `churn` (all moving, 5% removed and re-added elsewhere each frame).
//! - `sap_batch_insert/<size>/<contender>`: building from nothing. For a broad phase:
//!   `insert_batch` of every box of the uniform scene, then the first `update` (which finds
//!   every pair); for parry3d: `Bvh::from_leaves` (binned, as rapier's first frame) and one
//!   traversal of the tree against itself collecting every overlapping pair. Dropping the
//!   result is not timed.
//!
//! Contenders: `sap`, `abp`, and `parry3d_bvh` (parry3d's BVH driven as rapier drives it: see
//! `broadphase_lab::bench::peers::parry`, checked against Abp before timing); on the sleeping scene also
//! `sap_never_asleep`, Sap with its asleep lists turned off. Everything runs on a one-thread
//! rayon pool.

mod common;

use std::hint::black_box;
use std::time::Duration;

use broadphase::{Algorithm, Config, Sap, SapSettings};
use broadphase_lab::scenes::{Scene, SceneKind};
use common::yardstick::{self, Mode, Yardstick};
use common::{BroadPhaseContender, Contender, SceneSpec};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};

/// The frame scenes, at full size.
const SCENES: &[SceneSpec] = &[
    SceneSpec::new(SceneKind::Sleeping, 100_000),
    SceneSpec::new(SceneKind::Uniform, 100_000),
    SceneSpec::new(SceneKind::Churn, 100_000),
];

/// The batch-insert size, at full size.
const BATCH: SceneSpec = SceneSpec::new(SceneKind::Uniform, 100_000);

/// The broad phases, by the name that ends their bench id.
const ALGORITHMS: &[(&str, Algorithm)] = &[("sap", Algorithm::Sap), ("abp", Algorithm::Abp)];

/// Sap with boxes never asleep.
const NO_SLEEP: &str = "sap_never_asleep";

/// Frames of the yardstick checked against Abp before timing.
const CHECK_FRAMES: usize = 3;

/// The single-threaded configuration every broad phase runs with.
fn config() -> Config {
    Config::default().with_parallel(false)
}

fn frames(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let mut group = c.benchmark_group(format!("sap_frame/{}", spec.label()));
        // On the sleeping scene, also Sap with its asleep lists turned off (every box in the
        // awake arrays, as all are in PhysX's): what keeping resting boxes apart buys.
        let no_sleep = (spec.kind == SceneKind::Sleeping).then_some(NO_SLEEP);
        let names = ALGORITHMS
            .iter()
            .map(|&(name, _)| name)
            .chain(no_sleep)
            .chain(["parry3d_bvh"]);
        for name in names {
            common::bench_frame(&mut group, name, &pool, spec, |scene| {
                contender(name, scene)
            });
        }
        group.finish();
    }
}

/// The contender called `name`, built on `scene` at its start.
fn contender(name: &str, scene: &Scene) -> Box<dyn Contender> {
    if let Some(&(_, algorithm)) = ALGORITHMS.iter().find(|&&(n, _)| n == name) {
        return Box::new(
            BroadPhaseContender::new(algorithm, config(), scene)
                .expect("the scene's boxes are valid"),
        );
    }
    if name == NO_SLEEP {
        let settings = {
            let mut s = SapSettings::default();
            s.sleep_after = None;
            s
        };
        let sap = Sap::with_settings(config(), settings);
        return Box::new(
            BroadPhaseContender::with_broad_phase(Box::new(sap), scene)
                .expect("the scene's boxes are valid"),
        );
    }
    yardstick::checked(Mode::Rapier, scene, CHECK_FRAMES)
}

fn batch_insert(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    let spec = BATCH.scaled();
    let scene = spec.build();
    let items = scene.initial();
    let mut group = c.benchmark_group(format!("sap_batch_insert/{}", common::size_label(spec.n)));
    for &(name, algorithm) in ALGORITHMS {
        group.bench_function(name, |b| {
            b.iter_batched(
                || (),
                |()| {
                    pool.install(|| {
                        let mut bp = broadphase::new(algorithm, config());
                        bp.insert_batch(black_box(&items))
                            .expect("the scene's boxes are valid");
                        let pairs = bp.update().expect("update cannot fail").created().len();
                        black_box(pairs);
                        bp
                    })
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.bench_function("parry3d_bvh", |b| {
        b.iter_batched(
            || (),
            |()| {
                pool.install(|| {
                    let ys = Yardstick::new(Mode::Rapier, black_box(&scene));
                    black_box(ys.pairs().len());
                    ys
                })
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

criterion_group! {
    name = benches;
    // Modest sampling: the whole bench takes a few minutes on two cores.
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = frames, batch_insert
}
criterion_main!(benches);
