//! The calls of a generated sequence ([`Op`], [`Query`], [`BadBox`], [`Pick`]) and the
//! proptest strategies that make them, in a small dense world and a large one.

use proptest::prelude::*;

use crate::{Aabb, Error, Group, Layer, LayerMask, Mobility, Obb, ProxyDesc, Ray};

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
    pub(super) fn make(self, base: Aabb, axis: usize) -> Aabb {
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

    pub(super) fn expected(self, e: &Error) -> bool {
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
    pub(super) fn index(self, len: usize) -> usize {
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
pub(super) enum World {
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

pub(super) fn sequence(world: World, len: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(world), 1..len).prop_map(|mut ops| {
        ops.push(Op::Update);
        ops
    })
}
