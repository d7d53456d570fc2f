//! 2D worlds: every algorithm against BruteForce on flat boxes (`min.z == max.z == 0`, a 2D
//! world in the plane z = 0), through the differential suite's replay
//! ([`testing::check_sequence`]), which compares every answer, the events and the pairs after
//! every update, checks the structure, and replays on one thread for determinism.
//!
//! The suite's own worlds are 3D: there, boxes of zero thickness come one axis at a time.
//! Here every box is flat on the same axis, so every pair touches on z, every sweep along z
//! sees all boxes at one coordinate, and cells and regions along z collapse to one: the cases
//! an algorithm tuned for volumes could get wrong. Queries stay in the plane too (points,
//! centres, ray origins and directions with z = 0, oriented boxes turned about z), with a few
//! rays and boxes that cross the plane from outside it.

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestError, TestRunner};

use broadphase::testing::{check_sequence, scaled_cases, Op, Pick, Query, SplitMix64};
use broadphase::{
    Aabb, Algorithm, BroadPhase, Config, Group, Layer, LayerMask, Obb, ProxyDesc, Ray,
};

/// The lattice step: coordinates on it make many exact contacts (edges and corners shared).
const STEP: f32 = 0.5;

/// A coordinate in about [-2, 10], on the lattice or, now and then, anywhere.
fn coord() -> BoxedStrategy<f32> {
    prop_oneof![
        8 => (-4i32..20).prop_map(|c| c as f32 * STEP),
        1 => -2.0f32..10.0,
    ]
    .boxed()
}

/// A flat box: a rectangle, a segment or a point in the plane z = 0.
fn rect() -> BoxedStrategy<Aabb> {
    (coord(), coord(), 0i32..5, 0i32..5)
        .prop_map(|(x, y, w, h)| {
            Aabb::new([x, y, 0.0], [x + w as f32 * STEP, y + h as f32 * STEP, 0.0])
        })
        .boxed()
}

/// A move within the plane.
fn offset() -> BoxedStrategy<[f32; 3]> {
    (-2i32..=2, -2i32..=2)
        .prop_map(|(x, y)| [x as f32 * STEP, y as f32 * STEP, 0.0])
        .boxed()
}

/// A proxy's description: one in four fixed, on layers 0 to 2, in groups 0 to 2.
fn desc() -> impl Strategy<Value = ProxyDesc> {
    (0u8..4, 0u8..3, 0u32..3, any::<u64>()).prop_map(|(kind, layer, group, user_data)| {
        let base = if kind == 0 {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        };
        base.with_layer(Layer(layer))
            .with_group(Group(group))
            .with_user_data(user_data)
    })
}

fn mask() -> impl Strategy<Value = LayerMask> {
    prop_oneof![3 => Just(LayerMask::ALL), 1 => (0u64..8).prop_map(LayerMask)]
}

/// A point of the plane.
fn point() -> BoxedStrategy<[f32; 3]> {
    (coord(), coord()).prop_map(|(x, y)| [x, y, 0.0]).boxed()
}

/// A direction in the plane with small integer parts (many along an axis, some zero), or,
/// now and then, one that crosses the plane.
fn dir() -> BoxedStrategy<[f32; 3]> {
    let part = || prop_oneof![2 => Just(0.0f32), 3 => (-3i32..=3).prop_map(|v| v as f32)];
    prop_oneof![
        6 => (part(), part()).prop_map(|(x, y)| [x, y, 0.0]),
        1 => (part(), part(), prop_oneof![Just(-1.0f32), Just(1.0)]).prop_map(|(x, y, z)| [x, y, z]),
    ]
    .boxed()
}

fn query() -> impl Strategy<Value = Query> {
    let max_t = prop_oneof![
        Just(0.0f32),
        (0i32..40).prop_map(|v| v as f32 * STEP),
        Just(f32::INFINITY),
    ];
    // A turn about z (the only turns that keep a box in the plane) by a multiple of 15°.
    let turn = (0i32..24).prop_map(|k| {
        let half = k as f32 * std::f32::consts::PI / 24.0;
        [0.0, 0.0, half.sin(), half.cos()]
    });
    let half_extent = (0i32..6).prop_map(|v| v as f32 * STEP);
    // A query box: flat mostly, now and then thick across the plane.
    let query_box = prop_oneof![
        4 => rect(),
        1 => (rect(), 1i32..4).prop_map(|(r, d)| {
            Aabb::new([r.min[0], r.min[1], -(d as f32) * STEP], [r.max[0], r.max[1], d as f32 * STEP])
        }),
    ];
    // A ray from the plane, or from above or below it.
    let origin = prop_oneof![
        6 => point(),
        1 => (point(), prop_oneof![Just(-2.0f32), Just(2.0)]).prop_map(|(p, z)| [p[0], p[1], z]),
    ];
    prop_oneof![
        (query_box.clone(), mask()).prop_map(|(b, m)| Query::Aabb(b, m)),
        (point(), mask()).prop_map(|(p, m)| Query::Point(p, m)),
        (point(), half_extent.clone(), mask()).prop_map(|(p, r, m)| Query::Sphere(p, r, m)),
        (point(), half_extent.clone(), half_extent, turn, mask()).prop_map(
            |(center, hx, hy, rotation, m)| Query::Obb(
                Obb {
                    center,
                    half_extents: [hx, hy, 0.0],
                    rotation,
                },
                m
            )
        ),
        (origin, dir(), max_t, mask()).prop_map(|(o, d, t, m)| Query::Ray(Ray::new(o, d), t, m)),
        (rect(), offset(), mask()).prop_map(|(b, d, m)| Query::BoxCast(b, d.map(|v| v * 4.0), m)),
        (point(), 0usize..6, mask()).prop_map(|(p, k, m)| Query::Nearest(p, k, m)),
        query_box.prop_map(Query::FirstHit),
    ]
}

fn pick() -> impl Strategy<Value = Pick> {
    any::<usize>().prop_map(Pick)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (rect(), desc()).prop_map(|(a, d)| Op::Insert(a, d)),
        3 => prop::collection::vec((rect(), desc()), 0..40).prop_map(Op::InsertBatch),
        2 => (pick(), desc()).prop_map(|(i, d)| Op::InsertDuplicate(i, d)),
        12 => (pick(), rect()).prop_map(|(i, a)| Op::SetAabb(i, a)),
        12 => (pick(), offset()).prop_map(|(i, o)| Op::Nudge(i, o)),
        4 => prop::collection::vec((pick(), offset()), 0..24)
            .prop_map(|moves| Op::NudgeMany(moves, None)),
        4 => (pick(), desc()).prop_map(|(i, d)| Op::SetDesc(i, d)),
        8 => pick().prop_map(Op::Remove),
        3 => prop::collection::vec(pick(), 0..12).prop_map(|picks| Op::RemoveMany(picks, None)),
        2 => (0u8..3, 0u8..3, any::<bool>())
            .prop_map(|(a, b, on)| Op::SetLayersCollide(Layer(a), Layer(b), on)),
        // The origin moves within the plane.
        2 => offset().prop_map(|o| Op::ShiftOrigin(o.map(|v| v * 4.0))),
        16 => Just(Op::Update),
        12 => query().prop_map(Op::Query),
    ]
}

fn sequence() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..80).prop_map(|mut ops| {
        ops.push(Op::Update);
        ops
    })
}

fn make(algorithm: Algorithm) -> impl Fn() -> Box<dyn BroadPhase> {
    move || broadphase::new(algorithm, Config::default())
}

/// Random 2D sequences on `algorithm`, each replayed against BruteForce; panics with the
/// smallest failing sequence.
#[allow(clippy::panic)] // a test helper: a difference is the test's failure
fn check_flat(algorithm: Algorithm) {
    let mut runner = TestRunner::new(RunnerConfig {
        cases: scaled_cases(600),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..RunnerConfig::default()
    });
    let make = make(algorithm);
    let result = runner.run(&sequence(), |ops| {
        check_sequence(&make, &ops).map_err(TestCaseError::fail)
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, ops)) => {
            panic!("{algorithm:?} in 2D: {reason}\nminimal failing input:\n{ops:#?}")
        }
        Err(TestError::Abort(reason)) => panic!("{algorithm:?} in 2D aborted: {reason}"),
    }
}

#[test]
fn abp_matches_brute_force_in_2d() {
    check_flat(Algorithm::Abp);
}

#[test]
fn sap_matches_brute_force_in_2d() {
    check_flat(Algorithm::Sap);
}

#[test]
fn mbp_matches_brute_force_in_2d() {
    check_flat(Algorithm::Mbp);
}

#[test]
fn quadtree_matches_brute_force_in_2d() {
    check_flat(Algorithm::QuadTree);
}

#[test]
fn grid_matches_brute_force_in_2d() {
    check_flat(Algorithm::Grid);
}

#[test]
fn brute_force_matches_itself_in_2d() {
    check_flat(Algorithm::BruteForce);
}

/// A multiple of the lattice step below `cells` steps.
fn on_lattice(rng: &mut SplitMix64, cells: u64) -> f32 {
    rng.below(cells) as f32 * STEP
}

/// A rectangle of the crowd, in a 100 × 100 square.
fn crowd_rect(rng: &mut SplitMix64) -> Aabb {
    let (x, y) = (on_lattice(rng, 200), on_lattice(rng, 200));
    let (w, h) = (on_lattice(rng, 6), on_lattice(rng, 6));
    Aabb::new([x, y, 0.0], [x + w, y + h, 0.0])
}

/// A flat crowd, deterministic: enough boxes that every algorithm takes its bulk and parallel
/// paths (the thresholds are tiny under `cfg(test)`, see `src/tests/mod.rs`), moved in
/// batches for several frames, with removals, spawns and rays in the plane between updates.
fn crowd_ops(seed: u64) -> Vec<Op> {
    let mut rng = SplitMix64::new(seed);
    let first: Vec<(Aabb, ProxyDesc)> = (0..600)
        .map(|i| {
            let desc = if i % 7 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            (crowd_rect(&mut rng), desc.with_user_data(i))
        })
        .collect();
    let mut ops = vec![Op::InsertBatch(first), Op::Update];
    for frame in 0..8 {
        let moves = (0..300)
            .map(|_| {
                let (dx, dy) = (on_lattice(&mut rng, 5), on_lattice(&mut rng, 5));
                (Pick(rng.below(1000) as usize), [dx - 1.0, dy - 1.0, 0.0])
            })
            .collect();
        ops.push(Op::NudgeMany(moves, None));
        let removals = (0..20).map(|k| Pick(frame * 37 + k * 11)).collect();
        ops.push(Op::RemoveMany(removals, None));
        for _ in 0..20 {
            ops.push(Op::Insert(crowd_rect(&mut rng), ProxyDesc::dynamic()));
        }
        let origin = [on_lattice(&mut rng, 200), on_lattice(&mut rng, 200), 0.0];
        for dir in [
            [1.0, 0.0, 0.0],
            [0.0, -1.0, 0.0],
            [1.0, 2.0, 0.0],
            [-3.0, -1.0, 0.0],
        ] {
            ops.push(Op::Query(Query::Ray(
                Ray::new(origin, dir),
                f32::INFINITY,
                LayerMask::ALL,
            )));
        }
        ops.push(Op::Query(Query::Nearest(origin, 5, LayerMask::ALL)));
        ops.push(Op::Update);
        let [x, y, _] = origin;
        ops.push(Op::Query(Query::Aabb(
            Aabb::new([x, y, 0.0], [x + 10.0, y + 10.0, 0.0]),
            LayerMask::ALL,
        )));
    }
    ops
}

#[test]
fn every_algorithm_matches_brute_force_on_a_flat_crowd() {
    for seed in 0..u64::from(scaled_cases(3)) {
        let ops = crowd_ops(seed);
        for &algorithm in Algorithm::ALL {
            assert_eq!(
                check_sequence(&make(algorithm), &ops),
                Ok(()),
                "{algorithm:?}, seed {seed}"
            );
        }
    }
}
