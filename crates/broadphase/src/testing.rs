//! The shared differential suite: every algorithm against [`BruteForce`].
//!
//! [`check_algorithm`] generates thousands of random call sequences (proptest, with shrinking),
//! runs each on a fresh instance of the algorithm and on `BruteForce`, and after every call
//! checks that both answered the same; after every update, that the created and deleted lists
//! and the persistent pair set are identical. Sequences mix fixed and dynamic proxies, groups,
//! layers and rule changes, origin shifts, batches, exactly touching and zero-size boxes,
//! duplicates, and bad input (NaN, infinities, `min > max`, stale, foreign and removed ids,
//! invalid layers), which must return the same [`Error`] from both and change nothing.
//! Each sequence is replayed once more on a single thread to check determinism.
//!
//! ```no_run
//! use broadphase::{testing, Algorithm, Config};
//! testing::check_algorithm(|| broadphase::new(Algorithm::Abp, Config::default()));
//! ```
//!
//! A failure panics with the shortest failing sequence found, as a `Vec<Op>` that
//! [`check_sequence`] replays: paste it into a regression test.
//!
//! The cases are drawn afresh at every run. For a longer hunt, set `BROADPHASE_CHECK_SCALE`
//! (a float) to multiply every case count ([`scaled_cases`]).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestError, TestRunner};

use std::ops::ControlFlow;

pub use crate::split_mix::SplitMix64;
use crate::{
    Aabb, BroadPhase, BruteForce, CastHit, Config, Error, Group, Layer, LayerMask, Mobility, Obb,
    Pair, ProxyDesc, ProxyId, Ray, RayHit,
};

/// A way a box can be invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadBox {
    /// A NaN coordinate.
    Nan,
    /// A `+inf` coordinate.
    PosInf,
    /// A `-inf` coordinate.
    NegInf,
    /// `min > max` on one axis.
    Inverted,
}

impl BadBox {
    fn make(self, base: Aabb, axis: usize) -> Aabb {
        let mut b = base;
        match self {
            BadBox::Nan => b.min[axis] = f32::NAN,
            BadBox::PosInf => b.max[axis] = f32::INFINITY,
            BadBox::NegInf => b.min[axis] = f32::NEG_INFINITY,
            BadBox::Inverted => {
                // A fresh box: the base may reach the ends of the float range.
                b = Aabb::new([0.0; 3], [1.0; 3]);
                b.min[axis] = 2.0;
            }
        }
        b
    }

    fn expected(self, e: &Error) -> bool {
        match self {
            BadBox::Inverted => matches!(e, Error::InvertedAabb { .. }),
            _ => matches!(e, Error::NonFiniteAabb { .. }),
        }
    }
}

/// Names a live (or removed) proxy by position in the list of such ids, modulo its length, so
/// that sequences stay meaningful while proptest shrinks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick(pub usize);

impl Pick {
    fn index(self, len: usize) -> usize {
        self.0 % len
    }
}

/// One call in a generated sequence.
#[derive(Clone, Debug)]
pub enum Op {
    /// `insert`.
    Insert(Aabb, ProxyDesc),
    /// `insert_batch`.
    InsertBatch(Vec<(Aabb, ProxyDesc)>),
    /// `insert` of a box identical to a live proxy's.
    InsertDuplicate(Pick, ProxyDesc),
    /// `set_aabb`.
    SetAabb(Pick, Aabb),
    /// `set_aabb` to the current box moved by an offset.
    Nudge(Pick, [f32; 3]),
    /// `set_aabbs` of current boxes moved by offsets (a proxy may come twice: its last box
    /// wins). With `Some((place, kind, axis))`, the item at `place` (modulo the count) gets an
    /// invalid box: the call must fail and move nothing.
    NudgeMany(Vec<(Pick, [f32; 3])>, Option<(usize, BadBox, usize)>),
    /// `set_desc`.
    SetDesc(Pick, ProxyDesc),
    /// `remove`.
    Remove(Pick),
    /// `remove_batch` of live proxies (a proxy picked twice fails the batch). With
    /// `Some(pick)`, an id removed earlier joins the batch at the place `pick` names: the call
    /// must fail and remove nothing.
    RemoveMany(Vec<Pick>, Option<Pick>),
    /// `set_layers_collide`.
    SetLayersCollide(Layer, Layer, bool),
    /// `shift_origin`.
    ShiftOrigin([f32; 3]),
    /// `update`, then compare events and pairs.
    Update,
    /// `insert` of an invalid box: must fail.
    InsertBad(BadBox, usize),
    /// `set_aabb` with an invalid box: must fail.
    SetAabbBad(Pick, BadBox, usize),
    /// `remove` twice: the second must fail.
    RemoveTwice(Pick),
    /// `set_aabb`, `set_desc`, `remove`, `aabb` with an id removed earlier: must fail.
    UseStale(Pick),
    /// Calls with ids never issued (an unknown slot; a future generation): must fail.
    UseForeign(Pick),
    /// `insert`, `set_desc` and `set_layers_collide` with a layer outside 0..64: must fail.
    BadLayer(Pick, u8),
    /// `shift_origin` with a non-finite component: must fail.
    BadShift(usize),
    /// A query, compared with BruteForce's answer.
    Query(Query),
}

/// A query of the differential suite.
#[derive(Clone, Debug)]
pub enum Query {
    /// `query_aabb`.
    Aabb(Aabb, LayerMask),
    /// `query_point`.
    Point([f32; 3], LayerMask),
    /// `query_sphere`.
    Sphere([f32; 3], f32, LayerMask),
    /// `query_obb`.
    Obb(Obb, LayerMask),
    /// `ray_cast`.
    Ray(Ray, f32, LayerMask),
    /// `box_cast`.
    BoxCast(Aabb, [f32; 3], LayerMask),
    /// `nearest`.
    Nearest([f32; 3], usize, LayerMask),
    /// `query_aabb` that stops after the first hit.
    FirstHit(Aabb),
}

/// The kind of world a sequence plays in.
#[derive(Clone, Copy, Debug)]
enum World {
    /// Coordinates on a 0.5 lattice in about [-2, 10]: dense, many exact contacts.
    Small,
    /// Coordinates on an 8-unit lattice in about [-4096, 4096], big origin shifts.
    Large,
}

impl World {
    fn step(self) -> f32 {
        match self {
            World::Small => 0.5,
            World::Large => 8.0,
        }
    }

    fn aabb(self) -> BoxedStrategy<Aabb> {
        let step = self.step();
        let cells = match self {
            World::Small => -4i32..20,
            World::Large => -512i32..512,
        };
        let normal = (
            [cells.clone(), cells.clone(), cells],
            [0i32..5, 0i32..5, 0i32..5],
        )
            .prop_map(move |(lo, size)| {
                let min = lo.map(|c| c as f32 * step);
                let max = std::array::from_fn(|i| min[i] + size[i] as f32 * step);
                Aabb::new(min, max)
            });
        // Now and then a box that spans (almost) the whole float range.
        let huge = Just(Aabb::new([-1e33; 3], [1e33; 3]));
        prop_oneof![200 => normal, 1 => huge].boxed()
    }

    fn shift(self) -> BoxedStrategy<[f32; 3]> {
        match self {
            World::Small => prop::array::uniform3((-8i32..8).prop_map(|v| v as f32 * 0.5)).boxed(),
            World::Large => prop::array::uniform3(prop_oneof![
                (-64i32..64).prop_map(|v| v as f32 * 8.0),
                // Far enough that coordinates round: boxes may start or stop touching.
                (-4i32..4).prop_map(|v| v as f32 * 3.0e6),
            ])
            .boxed(),
        }
    }
}

fn desc() -> impl Strategy<Value = ProxyDesc> {
    (
        prop_oneof![3 => Just(Mobility::Dynamic), 1 => Just(Mobility::Fixed)],
        prop_oneof![4 => Just(0u8), 1 => 1u8..4],
        prop_oneof![4 => Just(0u32), 1 => 1u32..3],
        any::<u64>(),
    )
        .prop_map(|(mobility, layer, group, user_data)| ProxyDesc {
            mobility,
            layer: Layer(layer),
            group: Group(group),
            user_data,
        })
}

fn bad_box() -> impl Strategy<Value = BadBox> {
    prop_oneof![
        Just(BadBox::Nan),
        Just(BadBox::PosInf),
        Just(BadBox::NegInf),
        Just(BadBox::Inverted)
    ]
}

fn op(world: World) -> impl Strategy<Value = Op> {
    let aabb = world.aabb();
    let step = world.step();
    let nudge = prop::array::uniform3((-2i32..=2).prop_map(move |v| v as f32 * step));
    prop_oneof![
        20 => (aabb.clone(), desc()).prop_map(|(a, d)| Op::Insert(a, d)),
        3 => prop::collection::vec((aabb.clone(), desc()), 0..40).prop_map(Op::InsertBatch),
        3 => (any::<usize>().prop_map(Pick), desc()).prop_map(|(i, d)| Op::InsertDuplicate(i, d)),
        12 => (any::<usize>().prop_map(Pick), aabb).prop_map(|(i, a)| Op::SetAabb(i, a)),
        12 => (any::<usize>().prop_map(Pick), nudge.clone()).prop_map(|(i, o)| Op::Nudge(i, o)),
        4 => (
            prop::collection::vec((any::<usize>().prop_map(Pick), nudge), 0..24),
            prop::option::weighted(0.2, (any::<usize>(), bad_box(), 0usize..3)),
        )
            .prop_map(|(moves, bad)| Op::NudgeMany(moves, bad)),
        4 => (any::<usize>().prop_map(Pick), desc()).prop_map(|(i, d)| Op::SetDesc(i, d)),
        8 => any::<usize>().prop_map(Pick).prop_map(Op::Remove),
        3 => (
            prop::collection::vec(any::<usize>().prop_map(Pick), 0..12),
            prop::option::weighted(0.2, any::<usize>().prop_map(Pick)),
        )
            .prop_map(|(picks, stale)| Op::RemoveMany(picks, stale)),
        3 => (0u8..4, 0u8..4, any::<bool>())
            .prop_map(|(a, b, c)| Op::SetLayersCollide(Layer(a), Layer(b), c)),
        2 => world.shift().prop_map(Op::ShiftOrigin),
        16 => Just(Op::Update),
        1 => (bad_box(), 0usize..3).prop_map(|(b, axis)| Op::InsertBad(b, axis)),
        1 => (any::<usize>().prop_map(Pick), bad_box(), 0usize..3).prop_map(|(i, b, axis)| Op::SetAabbBad(i, b, axis)),
        1 => any::<usize>().prop_map(Pick).prop_map(Op::RemoveTwice),
        1 => any::<usize>().prop_map(Pick).prop_map(Op::UseStale),
        1 => any::<usize>().prop_map(Pick).prop_map(Op::UseForeign),
        1 => (any::<usize>().prop_map(Pick), 64u8..=255).prop_map(|(i, l)| Op::BadLayer(i, l)),
        1 => (0usize..6).prop_map(Op::BadShift),
        10 => query(world).prop_map(Op::Query),
    ]
}

fn mask() -> impl Strategy<Value = LayerMask> {
    prop_oneof![3 => Just(LayerMask::ALL), 1 => (0u64..16).prop_map(LayerMask)]
}

/// Coordinates for query shapes: on the world's lattice (exact contacts with boxes), or
/// anywhere in its range, and now and then NaN or infinite (the query must then fail).
fn query_coord(world: World) -> BoxedStrategy<f32> {
    let step = world.step();
    let range = match world {
        World::Small => -8.0f32..24.0,
        World::Large => -5000.0f32..5000.0,
    };
    let cells = (range.start / step) as i32..(range.end / step) as i32;
    prop_oneof![
        60 => cells.prop_map(move |c| c as f32 * step),
        30 => range,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
    ]
    .boxed()
}

fn query(world: World) -> impl Strategy<Value = Query> {
    let c = query_coord(world);
    let point = [c.clone(), c.clone(), c.clone()];
    let step = world.step();
    let size = prop_oneof![
        10 => (0i32..6).prop_map(move |v| v as f32 * step),
        1 => Just(-1.0f32),
        1 => Just(f32::NAN),
    ];
    // Directions with small integer parts: many parallel to an axis or two, some zero.
    let dir = prop::array::uniform3(prop_oneof![
        3 => Just(0.0f32),
        4 => (-3i32..=3).prop_map(|v| v as f32),
        1 => -2.0f32..2.0,
    ]);
    let max_t = prop_oneof![
        Just(0.0f32),
        (0i32..40).prop_map(move |v| v as f32 * step),
        Just(f32::INFINITY),
        Just(-1.0),
        Just(f32::NAN),
    ];
    let quat = prop_oneof![
        4 => prop::array::uniform4((-2i32..=2).prop_map(|v| v as f32)),
        2 => prop::array::uniform4(-1.0f32..1.0),
    ];
    let aabb = world.aabb();
    prop_oneof![
        (aabb.clone(), mask()).prop_map(|(b, m)| Query::Aabb(b, m)),
        (point.clone(), mask()).prop_map(|(p, m)| Query::Point(p, m)),
        (point.clone(), size.clone(), mask()).prop_map(|(p, r, m)| Query::Sphere(p, r, m)),
        (point.clone(), prop::array::uniform3(size), quat, mask()).prop_map(
            |(center, half_extents, rotation, m)| {
                Query::Obb(
                    Obb {
                        center,
                        half_extents,
                        rotation,
                    },
                    m,
                )
            }
        ),
        (point.clone(), dir.clone(), max_t, mask()).prop_map(|(o, d, t, m)| Query::Ray(
            Ray::new(o, d),
            t,
            m
        )),
        (
            aabb.clone(),
            dir.prop_map(move |d| d.map(|v| v * step * 4.0)),
            mask()
        )
            .prop_map(|(b, d, m)| Query::BoxCast(b, d, m)),
        (point, 0usize..6, mask()).prop_map(|(p, k, m)| Query::Nearest(p, k, m)),
        aabb.prop_map(Query::FirstHit),
    ]
}

/// Runs `q` on `bp`: the hits as `(id, t)` (t = 0 where there is none), sorted by id; for
/// `nearest`, the answer as given.
fn answer(bp: &dyn BroadPhase, q: &Query) -> Result<Vec<(ProxyId, f32)>, Error> {
    let mut out: Vec<(ProxyId, f32)> = Vec::new();
    match q {
        Query::Nearest(p, k, m) => return bp.nearest(*p, *k, *m),
        Query::Ray(r, t, m) => bp.ray_cast(r, *t, *m, &mut |h: RayHit| {
            out.push((h.id, h.t));
            ControlFlow::Continue(())
        })?,
        Query::BoxCast(b, d, m) => bp.box_cast(*b, *d, *m, &mut |h: CastHit| {
            out.push((h.id, h.t));
            ControlFlow::Continue(())
        })?,
        Query::FirstHit(b) => bp.query_aabb(*b, LayerMask::ALL, &mut |id| {
            out.push((id, 0.0));
            ControlFlow::Break(())
        })?,
        _ => {
            let mut ids = |id: ProxyId| {
                out.push((id, 0.0));
                ControlFlow::Continue(())
            };
            match q {
                Query::Aabb(b, m) => bp.query_aabb(*b, *m, &mut ids)?,
                Query::Point(p, m) => bp.query_point(*p, *m, &mut ids)?,
                Query::Sphere(c, r, m) => bp.query_sphere(*c, *r, *m, &mut ids)?,
                Query::Obb(o, m) => bp.query_obb(o, *m, &mut ids)?,
                _ => {}
            }
        }
    }
    out.sort_by_key(|h| h.0);
    Ok(out)
}

/// Compares a query's answers; `t` values bit for bit.
fn same_answer(
    what: &str,
    bp: &dyn BroadPhase,
    oracle: &BruteForce,
    q: &Query,
) -> Result<(), String> {
    let got = answer(bp, q);
    if let Query::FirstHit(b) = q {
        // Any one hit will do; none only if there is none.
        let all = answer(oracle, &Query::Aabb(*b, LayerMask::ALL));
        return match (&got, &all) {
            // An invalid box: the same error from both.
            (Err(g), Err(a)) if format!("{g:?}") == format!("{a:?}") => Ok(()),
            (Ok(g), Ok(a))
                if g.len() <= 1
                    && g.is_empty() == a.is_empty()
                    && g.iter().all(|h| a.iter().any(|x| x.0 == h.0)) =>
            {
                Ok(())
            }
            _ => Err(format!(
                "{what}: a first-hit query visited {got:?}; all hits: {all:?}"
            )),
        };
    }
    let want = answer(oracle, q);
    let bits = |r: &Result<Vec<(ProxyId, f32)>, Error>| {
        r.as_ref()
            .map(|v| v.iter().map(|(i, t)| (*i, t.to_bits())).collect::<Vec<_>>())
            .map_err(|e| format!("{e:?}"))
    };
    if bits(&got) == bits(&want) {
        Ok(())
    } else {
        Err(format!(
            "{what}: {q:?}\nalgorithm answered {got:?}\nBruteForce answered {want:?}"
        ))
    }
}

fn sequence(world: World, len: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(world), 1..len).prop_map(|mut ops| {
        ops.push(Op::Update);
        ops
    })
}

/// How much checking [`check_algorithm_with`] does.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Sequences in the small, dense world.
    pub small_cases: u32,
    /// Sequences in the large world with big origin shifts.
    pub large_cases: u32,
    /// Crowd runs: hundreds to thousands of boxes moving over several frames.
    pub crowd_cases: u32,
}

/// `base` test cases multiplied by the environment variable `BROADPHASE_CHECK_SCALE` (a
/// float; 1 when unset, negative or unreadable), and at least one: a longer bug hunt
/// (`BROADPHASE_CHECK_SCALE=8 cargo test ...`) scales every randomised check that asks here.
///
/// ```
/// assert!(broadphase::testing::scaled_cases(0) >= 1);
/// ```
#[must_use]
pub fn scaled_cases(base: u32) -> u32 {
    let scale = std::env::var("BROADPHASE_CHECK_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(1.0);
    // `as` saturates: a huge scale gives `u32::MAX` cases, not a wrap.
    (f64::from(base) * scale).round().max(1.0) as u32
}

impl CheckOptions {
    /// `small` small-world sequences, `large` large-world ones and `crowd` crowds, each
    /// scaled by [`scaled_cases`].
    #[must_use]
    pub fn scaled(small: u32, large: u32, crowd: u32) -> Self {
        Self {
            small_cases: scaled_cases(small),
            large_cases: scaled_cases(large),
            crowd_cases: scaled_cases(crowd),
        }
    }
}

impl Default for CheckOptions {
    /// 2,000 small-world sequences, 1,000 large-world ones and 48 crowds, scaled as
    /// [`CheckOptions::scaled`] says.
    fn default() -> Self {
        Self::scaled(2000, 1000, 48)
    }
}

/// Runs the whole differential suite on the algorithm `make` creates; panics with the
/// smallest failing sequence on the first difference from [`BruteForce`].
pub fn check_algorithm(make: impl Fn() -> Box<dyn BroadPhase>) {
    check_algorithm_with(make, &CheckOptions::default());
}

/// [`check_algorithm`] with chosen case counts.
pub fn check_algorithm_with(make: impl Fn() -> Box<dyn BroadPhase>, options: &CheckOptions) {
    for (name, world, cases, len) in [
        ("small world", World::Small, options.small_cases, 80),
        ("large world", World::Large, options.large_cases, 60),
    ] {
        let mut runner = runner(cases);
        let result = runner.run(&sequence(world, len), |ops| {
            check_sequence(&make, &ops).map_err(TestCaseError::fail)
        });
        report(name, result);
    }
    let mut runner = runner(options.crowd_cases);
    let result = runner.run(&crowd(), |c| {
        check_sequence(&make, &c.ops()).map_err(TestCaseError::fail)
    });
    report("crowd", result);
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..RunnerConfig::default()
    })
}

fn report<T: Debug>(name: &str, result: Result<(), TestError<T>>) {
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => {
            panic!(
                "differential suite ({name}) failed: {reason}\nminimal failing input:\n{value:#?}"
            )
        }
        Err(TestError::Abort(reason)) => panic!("differential suite ({name}) aborted: {reason}"),
    }
}

/// Replays `ops` on a fresh algorithm and on `BruteForce`, comparing every answer; then
/// replays it on a single thread and checks the algorithm gave identical events and pair
/// order. Returns a description of the first difference.
pub fn check_sequence(make: &impl Fn() -> Box<dyn BroadPhase>, ops: &[Op]) -> Result<(), String> {
    let first = replay(make(), ops)?;
    let again = make();
    let second = single_threaded(move || replay(again, ops))?;
    if first != second {
        return Err(
            "not deterministic: a second run of the same calls on one thread gave \
                    different ids, events or pair order"
                .to_string(),
        );
    }
    Ok(())
}

#[cfg(feature = "parallel")]
fn single_threaded<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    use std::sync::OnceLock;
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok());
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

#[cfg(not(feature = "parallel"))]
fn single_threaded<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    f()
}

/// What a replay observed: per update, the events and the pair order; ids issued.
type Log = Vec<(Vec<Pair>, Vec<Pair>, Vec<Pair>, Vec<ProxyId>)>;

fn same<T: PartialEq + Debug>(
    what: &str,
    got: &Result<T, Error>,
    want: &Result<T, Error>,
) -> Result<(), String> {
    let equal = match (got, want) {
        (Ok(a), Ok(b)) => a == b,
        // Debug, because errors carrying a NaN box are not `==` to themselves.
        (Err(a), Err(b)) => format!("{a:?}") == format!("{b:?}"),
        _ => false,
    };
    if equal {
        Ok(())
    } else {
        Err(format!(
            "{what}: algorithm returned {got:?}, BruteForce {want:?}"
        ))
    }
}

fn expect_err<T: Debug>(
    what: &str,
    r: &Result<T, Error>,
    ok: impl Fn(&Error) -> bool,
) -> Result<(), String> {
    match r {
        Err(e) if ok(e) => Ok(()),
        other => Err(format!("{what}: expected a specific error, got {other:?}")),
    }
}

/// Checks that every live proxy has the same box and description in both.
fn same_state(bp: &dyn BroadPhase, oracle: &BruteForce, live: &[ProxyId]) -> Result<(), String> {
    if bp.len() != oracle.len() {
        return Err(format!(
            "len: algorithm {} vs BruteForce {}",
            bp.len(),
            oracle.len()
        ));
    }
    for &id in live {
        same(&format!("aabb({id})"), &bp.aabb(id), &oracle.aabb(id))?;
        same(&format!("desc({id})"), &bp.desc(id), &oracle.desc(id))?;
    }
    Ok(())
}

/// Checks that `bp`'s persistent pairs are the oracle's (in any order); returns them in `bp`'s
/// order.
fn same_pairs(bp: &dyn BroadPhase, oracle: &BruteForce, at: &str) -> Result<Vec<Pair>, String> {
    let order = bp.pairs().to_vec();
    let mut pairs = order.clone();
    pairs.sort_unstable();
    if pairs != oracle.pairs() {
        let extra: Vec<_> = pairs
            .iter()
            .filter(|p| oracle.pairs().binary_search(p).is_err())
            .collect();
        let missing: Vec<_> = oracle
            .pairs()
            .iter()
            .filter(|p| pairs.binary_search(p).is_err())
            .collect();
        return Err(format!(
            "{at}: persistent pairs differ: extra {extra:?}, missing {missing:?}"
        ));
    }
    Ok(order)
}

/// Every how many updates [`replay`] leaves `pairs()` unread until the next removal, which
/// must not change it: an algorithm that makes its list of pairs only when asked then makes it
/// after proxies of those pairs were removed, and must still name them by their ids.
const PAIRS_READ_LATE: usize = 3;

fn replay(mut bp: Box<dyn BroadPhase>, ops: &[Op]) -> Result<Log, String> {
    let mut oracle = BruteForce::new(Config::default().with_parallel(false));
    let mut updates = 0;
    let mut live: Vec<ProxyId> = Vec::new();
    let mut dead: Vec<ProxyId> = Vec::new();
    let mut log = Log::new();
    let mut issued: Vec<ProxyId> = Vec::new();
    let pick = |live: &[ProxyId], i: &Pick| (!live.is_empty()).then(|| i.index(live.len()));

    for (step, op) in ops.iter().enumerate() {
        let at = |what: &str| format!("op {step} ({what})");
        match op {
            Op::Insert(aabb, desc) => {
                let got = bp.insert(*aabb, *desc);
                let want = oracle.insert(*aabb, *desc);
                same(&at("insert"), &got, &want)?;
                if let Ok(id) = want {
                    live.push(id);
                    issued.push(id);
                }
            }
            Op::InsertBatch(items) => {
                let got = bp.insert_batch(items);
                let want = oracle.insert_batch(items);
                same(&at("insert_batch"), &got, &want)?;
                if let Ok(ids) = want {
                    live.extend(&ids);
                    issued.extend(&ids);
                }
            }
            Op::InsertDuplicate(i, desc) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = oracle.aabb(live[k]).map_err(|e| e.to_string())?;
                let got = bp.insert(aabb, *desc);
                let want = oracle.insert(aabb, *desc);
                same(&at("insert duplicate"), &got, &want)?;
                if let Ok(id) = want {
                    live.push(id);
                    issued.push(id);
                }
            }
            Op::SetAabb(i, aabb) => {
                let Some(k) = pick(&live, i) else { continue };
                same(
                    &at("set_aabb"),
                    &bp.set_aabb(live[k], *aabb),
                    &oracle.set_aabb(live[k], *aabb),
                )?;
            }
            Op::Nudge(i, offset) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = oracle
                    .aabb(live[k])
                    .map_err(|e| e.to_string())?
                    .translated(*offset);
                same(
                    &at("set_aabb (nudge)"),
                    &bp.set_aabb(live[k], aabb),
                    &oracle.set_aabb(live[k], aabb),
                )?;
            }
            Op::NudgeMany(moves, bad) => {
                let mut items = Vec::with_capacity(moves.len());
                for (i, offset) in moves {
                    let Some(k) = pick(&live, i) else { continue };
                    let aabb = oracle.aabb(live[k]).map_err(|e| e.to_string())?;
                    items.push((live[k], aabb.translated(*offset)));
                }
                if let (Some((place, kind, axis)), false) = (bad, items.is_empty()) {
                    let p = place % items.len();
                    items[p].1 = kind.make(items[p].1, *axis);
                }
                // The contract, on the oracle one item at a time: every item checked, then
                // every box set.
                let want = items
                    .iter()
                    .try_for_each(|(id, aabb)| oracle.aabb(*id).and(aabb.validate()))
                    .and_then(|()| {
                        items
                            .iter()
                            .try_for_each(|&(id, aabb)| oracle.set_aabb(id, aabb))
                    });
                same(&at("set_aabbs"), &bp.set_aabbs(&items), &want)?;
            }
            Op::SetDesc(i, desc) => {
                let Some(k) = pick(&live, i) else { continue };
                same(
                    &at("set_desc"),
                    &bp.set_desc(live[k], *desc),
                    &oracle.set_desc(live[k], *desc),
                )?;
            }
            Op::Remove(i) => {
                let Some(k) = pick(&live, i) else { continue };
                let id = live.swap_remove(k);
                same(&at("remove"), &bp.remove(id), &oracle.remove(id))?;
                same_pairs(bp.as_ref(), &oracle, &at("pairs after remove"))?;
                dead.push(id);
            }
            Op::RemoveMany(picks, stale) => {
                let mut ids: Vec<ProxyId> = picks
                    .iter()
                    .filter_map(|i| pick(&live, i).map(|k| live[k]))
                    .collect();
                if let (Some(i), false) = (stale, dead.is_empty()) {
                    let at = i.0 % (ids.len() + 1);
                    ids.insert(at, dead[i.index(dead.len())]);
                }
                // The contract, on the oracle one id at a time: every id checked (live, and
                // not listed before), then every proxy removed.
                let mut listed = std::collections::HashSet::new();
                let want = ids
                    .iter()
                    .try_for_each(|&id| {
                        oracle.aabb(id)?;
                        if listed.insert(id) {
                            Ok(())
                        } else {
                            Err(Error::StaleProxy { id })
                        }
                    })
                    .and_then(|()| ids.iter().try_for_each(|&id| oracle.remove(id)));
                same(&at("remove_batch"), &bp.remove_batch(&ids), &want)?;
                same_pairs(bp.as_ref(), &oracle, &at("pairs after remove_batch"))?;
                if want.is_ok() {
                    live.retain(|id| !ids.contains(id));
                    dead.extend(&ids);
                } else {
                    same_state(bp.as_ref(), &oracle, &live)?;
                }
            }
            Op::SetLayersCollide(a, b, on) => {
                same(
                    &at("set_layers_collide"),
                    &bp.set_layers_collide(*a, *b, *on),
                    &oracle.set_layers_collide(*a, *b, *on),
                )?;
                if bp.layers_collide(*a, *b) != *on {
                    return Err(at("layers_collide does not read back the rule just set"));
                }
            }
            Op::ShiftOrigin(shift) => {
                same(
                    &at("shift_origin"),
                    &bp.shift_origin(*shift),
                    &oracle.shift_origin(*shift),
                )?;
            }
            Op::Update => {
                let got = bp.update().cloned();
                let want = oracle.update().cloned();
                same(&at("update"), &got, &want)?;
                updates += 1;
                check_structure(bp.as_ref(), &at("structure after update"))?;
                let order = if updates % PAIRS_READ_LATE == 0 {
                    Vec::new()
                } else {
                    same_pairs(bp.as_ref(), &oracle, &at("pairs"))?
                };
                let stats = bp.stats();
                if stats.pairs != oracle.pairs().len() || stats.proxies != bp.len() {
                    return Err(format!(
                        "{}: stats disagree with pairs()/len(): {stats:?}",
                        at("stats")
                    ));
                }
                same_state(bp.as_ref(), &oracle, &live)?;
                let events = bp.events();
                log.push((
                    events.created().to_vec(),
                    events.deleted().to_vec(),
                    order,
                    std::mem::take(&mut issued),
                ));
            }
            Op::InsertBad(kind, axis) => {
                let aabb = kind.make(Aabb::new([0.0; 3], [1.0; 3]), *axis);
                let got = bp.insert(aabb, ProxyDesc::dynamic());
                let want = oracle.insert(aabb, ProxyDesc::dynamic());
                expect_err(&at("insert bad box"), &want, |e| kind.expected(e))?;
                same(&at("insert bad box"), &got, &want)?;
                same_state(bp.as_ref(), &oracle, &live)?;
            }
            Op::SetAabbBad(i, kind, axis) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = kind.make(oracle.aabb(live[k]).map_err(|e| e.to_string())?, *axis);
                let got = bp.set_aabb(live[k], aabb);
                let want = oracle.set_aabb(live[k], aabb);
                expect_err(&at("set_aabb bad box"), &want, |e| kind.expected(e))?;
                same(&at("set_aabb bad box"), &got, &want)?;
                same_state(bp.as_ref(), &oracle, &live)?;
            }
            Op::RemoveTwice(i) => {
                let Some(k) = pick(&live, i) else { continue };
                let id = live.swap_remove(k);
                same(&at("remove"), &bp.remove(id), &oracle.remove(id))?;
                let got = bp.remove(id);
                let want = oracle.remove(id);
                expect_err(&at("second remove"), &want, |e| {
                    matches!(e, Error::StaleProxy { .. })
                })?;
                same(&at("second remove"), &got, &want)?;
                same_state(bp.as_ref(), &oracle, &live)?;
                dead.push(id);
            }
            Op::UseStale(i) => {
                let Some(k) = pick(&dead, i) else { continue };
                let id = dead[k];
                if oracle.contains(id) {
                    return Err(at("a removed id is live again"));
                }
                let stale = |e: &Error| matches!(e, Error::StaleProxy { .. });
                let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                let want = oracle.set_aabb(id, aabb);
                expect_err(&at("set_aabb stale"), &want, stale)?;
                same(&at("set_aabb stale"), &bp.set_aabb(id, aabb), &want)?;
                same(
                    &at("set_desc stale"),
                    &bp.set_desc(id, ProxyDesc::fixed()),
                    &oracle.set_desc(id, ProxyDesc::fixed()),
                )?;
                same(&at("remove stale"), &bp.remove(id), &oracle.remove(id))?;
                same(&at("aabb stale"), &bp.aabb(id), &oracle.aabb(id))?;
                if bp.contains(id) {
                    return Err(at("contains() holds for a stale id"));
                }
                same_state(bp.as_ref(), &oracle, &live)?;
            }
            Op::UseForeign(i) => {
                let unknown = |e: &Error| matches!(e, Error::UnknownProxy { .. });
                let mut ids = vec![ProxyId::from_raw_parts(10_000_000, 0)];
                if let Some(k) = pick(&live, i) {
                    let id = live[k];
                    ids.push(ProxyId::from_raw_parts(id.index(), id.generation() + 1));
                }
                for id in ids {
                    let want = oracle.remove(id);
                    expect_err(&at("remove foreign"), &want, unknown)?;
                    same(&at("remove foreign"), &bp.remove(id), &want)?;
                    let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                    same(
                        &at("set_aabb foreign"),
                        &bp.set_aabb(id, aabb),
                        &oracle.set_aabb(id, aabb),
                    )?;
                    same(&at("desc foreign"), &bp.desc(id), &oracle.desc(id))?;
                }
                same_state(bp.as_ref(), &oracle, &live)?;
            }
            Op::BadLayer(i, layer) => {
                let invalid = |e: &Error| matches!(e, Error::InvalidLayer { .. });
                let d = ProxyDesc::dynamic().with_layer(Layer(*layer));
                let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                let want = oracle.insert(aabb, d);
                expect_err(&at("insert bad layer"), &want, invalid)?;
                same(&at("insert bad layer"), &bp.insert(aabb, d), &want)?;
                let want = oracle.set_layers_collide(Layer(*layer), Layer(0), false);
                expect_err(&at("set_layers_collide bad layer"), &want, invalid)?;
                same(
                    &at("set_layers_collide bad layer"),
                    &bp.set_layers_collide(Layer(*layer), Layer(0), false),
                    &want,
                )?;
                if let Some(k) = pick(&live, i) {
                    let want = oracle.set_desc(live[k], d);
                    expect_err(&at("set_desc bad layer"), &want, invalid)?;
                    same(&at("set_desc bad layer"), &bp.set_desc(live[k], d), &want)?;
                }
                same_state(bp.as_ref(), &oracle, &live)?;
            }
            Op::Query(q) => same_answer(&at("query"), bp.as_ref(), &oracle, q)?,
            Op::BadShift(kind) => {
                let shift = match kind {
                    0 => [f32::NAN, 0.0, 0.0],
                    1 => [0.0, f32::INFINITY, 0.0],
                    2 => [0.0, 0.0, f32::NEG_INFINITY],
                    // Finite but overflows any box reaching beyond ±1e32.
                    3 => [f32::MAX, 0.0, 0.0],
                    4 => [0.0, -f32::MAX, 0.0],
                    _ => [0.0, 0.0, f32::MAX],
                };
                let got = bp.shift_origin(shift);
                let want = oracle.shift_origin(shift);
                if *kind < 3 {
                    expect_err(&at("non-finite shift"), &want, |e| {
                        matches!(e, Error::NonFiniteShift { .. })
                    })?;
                }
                same(&at("bad shift"), &got, &want)?;
                same_state(bp.as_ref(), &oracle, &live)?;
            }
        }
    }
    check_structure(bp.as_ref(), "structure at the end")?;
    Ok(log)
}

/// [`BroadPhase::check_structure`], its failure named `what`.
fn check_structure(bp: &dyn BroadPhase, what: &str) -> Result<(), String> {
    bp.check_structure()
        .map_err(|e| format!("{what}: a broken invariant: {e}"))
}

/// A crowd: many boxes in a cube sized for a few overlaps each, moved, churned and
/// re-described over several frames. Generated from a seed, so failures replay.
#[derive(Clone, Debug)]
struct Crowd {
    seed: u64,
    n: usize,
    frames: usize,
    /// Percent of boxes moved per frame.
    moving: u32,
    /// Percent of boxes removed and re-inserted per frame.
    churn: u32,
    fixed_percent: u32,
}

fn crowd() -> impl Strategy<Value = Crowd> {
    (
        any::<u64>(),
        200usize..1600,
        2usize..8,
        0u32..=100,
        0u32..10,
        0u32..40,
    )
        .prop_map(|(seed, n, frames, moving, churn, fixed_percent)| Crowd {
            seed,
            n,
            frames,
            moving,
            churn,
            fixed_percent,
        })
}

/// A multiple of 0.25 in [0, cells / 4): lattice values make exact contacts common.
fn lattice(rng: &mut SplitMix64, cells: u64) -> f32 {
    rng.below(cells) as f32 * 0.25
}

impl Crowd {
    fn ops(&self) -> Vec<Op> {
        let mut rng = SplitMix64::new(self.seed);
        // About three neighbours per box: sizes average 1.5, so side³ ≈ n · 1.5³ / 3.
        let side = ((self.n as f64 * 3.4 / 3.0).cbrt() * 4.0) as u64 + 1;
        let boxed = |rng: &mut SplitMix64| {
            let min = [lattice(rng, side), lattice(rng, side), lattice(rng, side)];
            let size = [lattice(rng, 12), lattice(rng, 12), lattice(rng, 12)];
            Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
        };
        let desc = |rng: &mut SplitMix64, fixed_percent: u32| {
            let mut d = if (rng.below(100) as u32) < fixed_percent {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            if rng.below(20) == 0 {
                d = d.with_group(Group(1 + rng.below(3) as u32));
            }
            if rng.below(20) == 0 {
                d = d.with_layer(Layer(rng.below(3) as u8));
            }
            d
        };
        let items: Vec<(Aabb, ProxyDesc)> = (0..self.n)
            .map(|_| (boxed(&mut rng), desc(&mut rng, self.fixed_percent)))
            .collect();
        let mut ops = vec![Op::InsertBatch(items), Op::Update];
        let index = |rng: &mut SplitMix64| Pick(rng.next_u64() as usize);
        for frame in 0..self.frames {
            // Every other frame hands its moves over as one batch.
            let mut batch = Vec::new();
            for _ in 0..self.n * self.moving as usize / 100 {
                let o = [0, 1, 2].map(|_| (rng.below(5) as f32 - 2.0) * 0.25);
                if frame % 2 == 0 {
                    ops.push(Op::Nudge(index(&mut rng), o));
                } else {
                    batch.push((index(&mut rng), o));
                }
            }
            if !batch.is_empty() {
                ops.push(Op::NudgeMany(batch, None));
            }
            // Churn: every other frame removes its proxies as one batch (which fails, whole,
            // when it picks one twice).
            let mut leaving = Vec::new();
            for _ in 0..self.n * self.churn as usize / 100 {
                if frame % 2 == 0 {
                    ops.push(Op::Remove(index(&mut rng)));
                } else {
                    leaving.push(index(&mut rng));
                }
                ops.push(Op::Insert(
                    boxed(&mut rng),
                    desc(&mut rng, self.fixed_percent),
                ));
            }
            if !leaving.is_empty() {
                ops.push(Op::RemoveMany(leaving, None));
            }
            if frame % 3 == 1 {
                ops.push(Op::SetDesc(index(&mut rng), desc(&mut rng, 50)));
                ops.push(Op::SetLayersCollide(
                    Layer(0),
                    Layer(rng.below(3) as u8),
                    rng.below(2) == 0,
                ));
            }
            if frame == 4 {
                ops.push(Op::ShiftOrigin([1.5, -2.0, 0.25]));
            }
            // Queries both before the update (on pending changes) and after it.
            for k in 0..6 {
                if k == 3 {
                    ops.push(Op::Update);
                }
                let p = [0, 1, 2].map(|_| lattice(&mut rng, side));
                let d = [0, 1, 2].map(|_| rng.below(5) as f32 - 2.0);
                let m = LayerMask::ALL;
                let max_t = if k % 2 == 0 { f32::INFINITY } else { 8.0 };
                ops.push(Op::Query(match rng.below(5) {
                    0 => Query::Aabb(boxed(&mut rng), m),
                    1 => Query::Ray(Ray::new(p, d), max_t, m),
                    2 => Query::Sphere(p, lattice(&mut rng, 12), m),
                    3 => Query::Nearest(p, 1 + rng.below(8) as usize, m),
                    _ => Query::BoxCast(boxed(&mut rng), d.map(|v| v * 3.0), m),
                }));
            }
        }
        ops
    }
}
