//! QuadTree against Jolt's failure modes and against parry3d's BVH, single-threaded, on Jolt's
//! grid scene (103,823 unit cubes on a 2 m lattice) and on 100,000 uniform moving boxes.
//!
//! ```text
//! cargo bench -p broadphase-lab --bench quadtree                     # everything
//! cargo bench -p broadphase-lab --bench quadtree -- qt_frame/uniform   # one group (a filter)
//! BENCH_N=5000 cargo bench -p broadphase-lab --bench quadtree -- --quick  # smoke run
//! ```
//!
//! Groups, each id `<group>/<scene>_<size>/<contender>`:
//!
//! - `qt_build`: a fresh broad phase gets the scene as one `insert_batch` then `update`
//!   (`batch`), or as one `insert` per box then `update` (`one_by_one`): Jolt's chain case.
//!   parry3d's `Bvh::from_leaves` (binned) is there for scale.
//! - `qt_frame`: one frame of the moving scene (apply the moves, find the pairs), as in the
//!   `frame` bench: QuadTree with its defaults, with Jolt's partial rebuild of the top to
//!   depth 5 (`quadtree_jolt_top5`), with refits only (`quadtree_refit_only`), and parry3d's
//!   BVH driven as rapier drives it (`parry3d_bvh`) or reporting every overlap
//!   (`parry3d_bvh_exact`).
//! - `qt_optimize`: `QuadTree::optimize` (a full SAH rebuild) of the built scene.
//! - `qt_probes`: 1,000 boxes of ±5 m at random places in the world (one seeded generator),
//!   queried through `BroadPhase::query_aabb` and through parry3d's `Bvh::intersect_aabb`.
//!
//! Before timing, the bench prints what time cannot show: the depth and node count of the
//! trees built by batch and one by one (and, on the first 10,000 boxes, with an update after
//! every insertion), and the
//! nodes visited per hit of the probes in each.

mod common;

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use broadphase::{Aabb, BroadPhase, Config, LayerMask, ProxyDesc, QuadTree, QuadTreeSettings};
use broadphase_lab::scenes::{Scene, SceneKind};
use common::yardstick::{self, to_parry, Mode};
use common::{BroadPhaseContender, Contender, SceneSpec};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use parry3d::partitioning::{Bvh, BvhBuildStrategy};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Jolt's scene (47³ cubes) and the uniform scene of the frame bench.
const SCENES: &[SceneSpec] = &[
    SceneSpec::new(SceneKind::Grid, 103_823),
    SceneSpec::new(SceneKind::Uniform, 100_000),
];

/// Probes per iteration of `qt_probes`.
const PROBES: usize = 1_000;

/// Half the size of a probe box.
const PROBE_HALF: f32 = 5.0;

fn single_threaded() -> Config {
    Config::default().with_parallel(false)
}

fn quadtree(settings: QuadTreeSettings) -> QuadTree {
    // The settings are the defaults with one field changed: always valid.
    QuadTree::with_settings(single_threaded(), settings).expect("valid settings")
}

/// The probe boxes: centres uniform over the scene's world cube, from a fixed seed.
fn probes(scene: &Scene) -> Vec<Aabb> {
    let mut rng = Pcg64Mcg::seed_from_u64(0x9E37_79B9_7F4A_7C15);
    let mut unit = move || rng.random::<f32>();
    let (lo, side) = {
        let b = scene.bounds().expect("scenes are not empty");
        (b.min, scene.side())
    };
    (0..PROBES)
        .map(|_| {
            let c: [f32; 3] = std::array::from_fn(|k| lo[k] + unit() * side);
            Aabb::point(c).inflated(PROBE_HALF)
        })
        .collect()
}

/// The scene as one batch and the first update.
fn build_batch(items: &[(Aabb, ProxyDesc)]) -> QuadTree {
    let mut qt = quadtree(QuadTreeSettings::default());
    qt.insert_batch(items).expect("the scene's boxes are valid");
    qt.update().expect("update cannot fail");
    qt
}

/// The scene one `insert` at a time, then the first update.
fn build_one_by_one(items: &[(Aabb, ProxyDesc)]) -> QuadTree {
    let mut qt = quadtree(QuadTreeSettings::default());
    for &(aabb, desc) in items {
        qt.insert(aabb, desc).expect("the scene's boxes are valid");
    }
    qt.update().expect("update cannot fail");
    qt
}

/// Nodes visited per hit over the probes, and the hits.
fn visits_per_hit(qt: &QuadTree, probes: &[Aabb]) -> (f64, u64) {
    let (mut nodes, mut hits) = (0u64, 0u64);
    for p in probes {
        let stats = qt
            .probe_aabb(*p, LayerMask::ALL, &mut |_| ControlFlow::Continue(()))
            .expect("probes are valid");
        nodes += stats.nodes_visited;
        hits += stats.hits;
    }
    (nodes as f64 / hits.max(1) as f64, hits)
}

/// Prints the shape of the trees the two insertion orders give, and their probe cost.
fn report_shapes(spec: &SceneSpec, scene: &Scene) {
    let items = scene.initial();
    let probes = probes(scene);
    let t = Instant::now();
    let batch = build_batch(&items);
    let batch_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let single = build_one_by_one(&items);
    let single_ms = t.elapsed().as_secs_f64() * 1e3;
    eprintln!(
        "\n{}: trees by insertion order (single run, wall clock)",
        spec.label()
    );
    eprintln!(
        "  order                          boxes  depth   nodes  visits/hit    hits  build ms"
    );
    let row = |name: &str, qt: &QuadTree, ms: f64| {
        let (vph, hits) = visits_per_hit(qt, &probes);
        eprintln!(
            "  {name:<29} {:>6} {:>6} {:>7} {:>11.3} {:>7} {:>9.1}",
            qt.len(),
            qt.depth(),
            qt.node_count(),
            vph,
            hits,
            ms
        );
    };
    row("batch", &batch, batch_ms);
    row("one by one, then update", &single, single_ms);
    // A tree kept up to date while it fills: an update after every insertion. Each update
    // also diffs the whole pair set, so this runs on the first 10,000 boxes only.
    let few = &items[..items.len().min(10_000)];
    let mut each = quadtree(QuadTreeSettings::default());
    let t = Instant::now();
    for &(aabb, desc) in few {
        each.insert(aabb, desc)
            .expect("the scene's boxes are valid");
        each.update().expect("update cannot fail");
    }
    let each_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let few_batch = build_batch(few);
    let few_ms = t.elapsed().as_secs_f64() * 1e3;
    row("batch (first 10,000)", &few_batch, few_ms);
    row("update after each (same)", &each, each_ms);
}

/// `qt_build`: batch against one by one (then the first update), and parry3d's build.
fn build(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let scene = spec.build();
        pool.install(|| report_shapes(&spec, &scene));
        let items = scene.initial();
        let mut group = c.benchmark_group(format!("qt_build/{}", spec.label()));
        group.bench_function("batch", |b| {
            b.iter_batched(
                || items.clone(),
                |items| pool.install(|| black_box(build_batch(&items))),
                BatchSize::PerIteration,
            );
        });
        group.bench_function("one_by_one", |b| {
            b.iter_batched(
                || items.clone(),
                |items| pool.install(|| black_box(build_one_by_one(&items))),
                BatchSize::PerIteration,
            );
        });
        let leaves: Vec<_> = items.iter().map(|(a, _)| to_parry(a)).collect();
        group.bench_function("parry3d_bvh_from_leaves", |b| {
            b.iter(|| black_box(Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves)));
        });
        group.finish();
    }
}

/// Builds a contender on a scene at its start. Set-up, not timed.
type Make = fn(&Scene) -> Box<dyn Contender>;

/// A QuadTree contender with these settings.
fn qt_contender(scene: &Scene, settings: QuadTreeSettings) -> Box<dyn Contender> {
    Box::new(
        BroadPhaseContender::with_broad_phase(Box::new(quadtree(settings)), scene)
            .expect("the scene's boxes are valid"),
    )
}

const FRAME_CONTENDERS: &[(&str, Make)] = &[
    ("quadtree", |scene| {
        qt_contender(scene, QuadTreeSettings::default())
    }),
    ("quadtree_jolt_top5", |scene| {
        qt_contender(scene, {
            let mut s = QuadTreeSettings::default();
            s.rebuild_depth = 5;
            s
        })
    }),
    ("quadtree_refit_only", |scene| {
        qt_contender(scene, {
            let mut s = QuadTreeSettings::default();
            s.rebuild_cost = f64::INFINITY;
            s
        })
    }),
    ("parry3d_bvh", |scene| {
        yardstick::checked(Mode::Rapier, scene, CHECK_FRAMES)
    }),
    ("parry3d_bvh_exact", |scene| {
        yardstick::checked(Mode::Exact, scene, CHECK_FRAMES)
    }),
];

/// Frames of the yardstick checked against Abp before timing.
const CHECK_FRAMES: usize = 3;

/// `qt_frame`: the steady frame, as in the `frame` bench.
fn frame(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let mut group = c.benchmark_group(format!("qt_frame/{}", spec.label()));
        for &(name, make) in FRAME_CONTENDERS {
            common::bench_frame(&mut group, name, &pool, spec, make);
        }
        group.finish();
    }
}

/// `qt_optimize`: a full rebuild of the built scene.
fn optimize(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let built = pool.install(|| build_batch(&spec.build().initial()));
        let mut group = c.benchmark_group(format!("qt_optimize/{}", spec.label()));
        group.bench_function("quadtree", |b| {
            b.iter_batched(
                || built.clone(),
                |mut qt| {
                    pool.install(|| qt.optimize());
                    qt
                },
                BatchSize::PerIteration,
            );
        });
        group.finish();
    }
}

/// `qt_probes`: 1,000 box queries, QuadTree against parry3d's BVH on the same boxes.
fn probe(c: &mut Criterion) {
    let pool = common::single_thread_pool();
    for spec in SCENES.iter().map(|s| s.scaled()) {
        let scene = spec.build();
        let items = scene.initial();
        let probes = probes(&scene);
        let qt = pool.install(|| build_batch(&items));
        let leaves: Vec<_> = items.iter().map(|(a, _)| to_parry(a)).collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
        let parry_probes: Vec<_> = probes.iter().map(to_parry).collect();
        // Both answer the same: the hits of every probe, as scene indices.
        for (p, pp) in probes.iter().zip(&parry_probes) {
            let mut ours = Vec::new();
            qt.query_aabb(*p, LayerMask::ALL, &mut |id| {
                ours.push(id.index());
                ControlFlow::Continue(())
            })
            .expect("probes are valid");
            let mut theirs: Vec<u32> = bvh.intersect_aabb(pp).collect();
            ours.sort_unstable();
            theirs.sort_unstable();
            assert_eq!(ours, theirs, "probe {p:?}: QuadTree and parry3d disagree");
        }
        let mut group = c.benchmark_group(format!("qt_probes/{}", spec.label()));
        group.bench_function("quadtree", |b| {
            b.iter(|| {
                let mut hits = 0usize;
                for p in &probes {
                    let _ = qt.query_aabb(*p, LayerMask::ALL, &mut |_| {
                        hits += 1;
                        ControlFlow::Continue(())
                    });
                }
                black_box(hits)
            });
        });
        group.bench_function("parry3d_bvh", |b| {
            b.iter(|| {
                let hits: usize = parry_probes
                    .iter()
                    .map(|p| bvh.intersect_aabb(p).count())
                    .sum();
                black_box(hits)
            });
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Modest sampling: the whole bench takes a few minutes on two cores.
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = build, frame, optimize, probe
}
criterion_main!(benches);
