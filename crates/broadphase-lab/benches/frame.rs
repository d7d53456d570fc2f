//! The cost of one frame of broad phase, single-threaded: every `broadphase` algorithm with its
//! defaults (Abp, Sap, Mbp, QuadTree, Grid) against parry3d's BVH driven the way rapier drives
//! it (see `broadphase_lab::bench::peers::parry`).
//!
//! ```text
//! cargo bench -p broadphase-lab --bench frame                      # every scene, full size
//! cargo bench -p broadphase-lab --bench frame -- uniform_100k      # one scene (a filter)
//! BENCH_N=2000 cargo bench -p broadphase-lab --bench frame -- --quick   # smoke run
//! ```
//!
//! `BENCH_N=<n>` caps every scene at `n` objects; the ids then name the size run
//! (`frame/uniform_2k/abp`), so smoke runs never mix with full-size baselines.
//!
//! Ids read `frame/<scene>_<size>/<contender>`, so one run gives the ratios. A timed iteration
//! is one frame: the scene steps (not timed), then the contender applies the frame's removals,
//! arrivals and moves and finds the pairs (timed). Each contender starts from the same seed and
//! keeps stepping its own copy of the scene across samples. Everything runs on a one-thread
//! rayon pool, so `broadphase`'s `parallel` feature gets the single core parry3d uses.
//!
//! Before a parry3d contender is timed, its pairs are checked against Abp's on the first frames
//! (`yardstick::checked`, the check of `bplab bench`), which panics on a mismatch.

mod common;

use std::time::Duration;

use broadphase::{Algorithm, Config};
use broadphase_lab::scenes::{Scene, SceneKind};
use common::yardstick::{self, Mode};
use common::{BroadPhaseContender, Contender, SceneSpec};
use criterion::{criterion_group, criterion_main, Criterion};

/// The scenes, at full size. Add a line to bench another scene or size.
const SCENES: &[SceneSpec] = &[
    SceneSpec::new(SceneKind::Uniform, 100_000),
    SceneSpec::new(SceneKind::Sleeping, 100_000),
];

/// Builds a contender on a scene at its start. Set-up, not timed.
type Make = fn(&Scene) -> Box<dyn Contender>;

/// The contenders, by the name that ends their bench id.
const CONTENDERS: &[(&str, Make)] = &[
    ("abp", |scene| algorithm(Algorithm::Abp, scene)),
    ("sap", |scene| algorithm(Algorithm::Sap, scene)),
    ("mbp", |scene| algorithm(Algorithm::Mbp, scene)),
    ("quadtree", |scene| algorithm(Algorithm::QuadTree, scene)),
    ("grid", |scene| algorithm(Algorithm::Grid, scene)),
    // rapier's settings: what a rapier user pays (less its pair-map bookkeeping).
    ("parry3d_bvh", |scene| {
        yardstick::checked(Mode::Rapier, scene, CHECK_FRAMES)
    }),
    // The same tree reporting every overlap each frame: the same output as Abp.
    ("parry3d_bvh_exact", |scene| {
        yardstick::checked(Mode::Exact, scene, CHECK_FRAMES)
    }),
];

/// A `broadphase` algorithm with its defaults (every one of them gets the same single-thread
/// pool in `frame`).
fn algorithm(algorithm: Algorithm, scene: &Scene) -> Box<dyn Contender> {
    Box::new(
        BroadPhaseContender::new(algorithm, Config::default(), scene)
            .expect("the scene's boxes are valid"),
    )
}

/// Frames of the yardstick checked against Abp before timing.
const CHECK_FRAMES: usize = 3;

fn frame(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let mut group = c.benchmark_group(format!("frame/{}", spec.label()));
        for &(name, make) in CONTENDERS {
            common::bench_frame(&mut group, name, &pool, spec, make);
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Modest sampling: the whole bench takes about ten minutes on two cores.
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = frame
}
criterion_main!(benches);
