//! The client's workloads, of the kinds rapier's own `benchmarks3d` runs: each a function that
//! builds a [`World`] of about `size` bodies, deterministic to the bit.

use rapier3d::geometry::BroadPhase as RapierBroadPhase;
use rapier3d::na::DMatrix;
use rapier3d::prelude::*;

/// Everything a rapier simulation steps, except its broad phase (the one under test).
pub struct World {
    /// Gravity.
    pub gravity: Vector<Real>,
    /// rapier's integration parameters (its defaults).
    pub params: IntegrationParameters,
    /// The pipeline.
    pub pipeline: PhysicsPipeline,
    /// The islands.
    pub islands: IslandManager,
    /// The narrow phase.
    pub narrow_phase: NarrowPhase,
    /// The bodies.
    pub bodies: RigidBodySet,
    /// The colliders.
    pub colliders: ColliderSet,
    /// The impulse joints.
    pub impulse_joints: ImpulseJointSet,
    /// The multibody joints (none in these scenes).
    pub multibody_joints: MultibodyJointSet,
    /// The CCD solver.
    pub ccd: CCDSolver,
    /// Run before each step: the scene's own changes (the churn scene's removals and spawns).
    script: Option<fn(&mut World)>,
    steps: u64,
}

impl Default for World {
    fn default() -> Self {
        Self {
            gravity: vector![0.0, -9.81, 0.0],
            params: IntegrationParameters::default(),
            pipeline: PhysicsPipeline::new(),
            islands: IslandManager::new(),
            narrow_phase: NarrowPhase::new(),
            bodies: RigidBodySet::new(),
            colliders: ColliderSet::new(),
            impulse_joints: ImpulseJointSet::new(),
            multibody_joints: MultibodyJointSet::new(),
            ccd: CCDSolver::new(),
            script: None,
            steps: 0,
        }
    }
}

impl World {
    /// Runs the scene's script, then one `PhysicsPipeline::step` on `broad_phase`.
    pub fn step(&mut self, broad_phase: &mut dyn RapierBroadPhase) {
        if let Some(script) = self.script {
            script(self);
        }
        self.pipeline.step(
            &self.gravity,
            &self.params,
            &mut self.islands,
            broad_phase,
            &mut self.narrow_phase,
            &mut self.bodies,
            &mut self.colliders,
            &mut self.impulse_joints,
            &mut self.multibody_joints,
            &mut self.ccd,
            &(),
            &(),
        );
        self.steps += 1;
    }

    /// The steps run so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Every body's handle index and the bits of its pose: translation x, y, z, then the
    /// rotation quaternion's i, j, k, w. Two runs agree bit for bit when these are equal.
    pub fn pose_bits(&self) -> Vec<(u32, [u32; 7])> {
        self.bodies
            .iter()
            .map(|(handle, body)| {
                let t = body.translation();
                let q = body.rotation().coords;
                let bits = [t.x, t.y, t.z, q.x, q.y, q.z, q.w].map(f32::to_bits);
                (handle.into_raw_parts().0, bits)
            })
            .collect()
    }

    fn add_fixed(&mut self, collider: impl Into<Collider>) {
        self.colliders.insert(collider);
    }

    fn add_body(&mut self, body: RigidBodyBuilder, colliders: Vec<ColliderBuilder>) {
        let handle = self.bodies.insert(body);
        for collider in colliders {
            self.colliders
                .insert_with_parent(collider, handle, &mut self.bodies);
        }
    }
}

/// The scenes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scene {
    /// A pyramid of touching unit cubes on a ground box.
    Pyramid,
    /// Balls dropped into a fixed box.
    Balls,
    /// Balls, boxes, capsules, cylinders and two-ball dumbbells (two colliders on one body) on
    /// a heightfield.
    Heightfield,
    /// The same bodies on a trimesh ground.
    Trimesh,
    /// Chains of boxes held by spherical joints, each hanging from a fixed body.
    Joints,
    /// Balls in a box, some removed and new ones dropped in every few steps.
    Churn,
}

impl Scene {
    /// Every scene.
    pub const ALL: [Scene; 6] = [
        Scene::Pyramid,
        Scene::Balls,
        Scene::Heightfield,
        Scene::Trimesh,
        Scene::Joints,
        Scene::Churn,
    ];

    /// The scene's name.
    pub fn name(self) -> &'static str {
        match self {
            Scene::Pyramid => "pyramid",
            Scene::Balls => "balls",
            Scene::Heightfield => "heightfield",
            Scene::Trimesh => "trimesh",
            Scene::Joints => "joints",
            Scene::Churn => "churn",
        }
    }

    /// The scene with about `size` bodies.
    pub fn build(self, size: usize) -> World {
        match self {
            Scene::Pyramid => pyramid(size),
            Scene::Balls => balls(size),
            Scene::Heightfield => heightfield(size),
            Scene::Trimesh => trimesh(size),
            Scene::Joints => joints(size),
            Scene::Churn => churn(size),
        }
    }
}

/// The smallest `s` with `f(s) >= n`.
fn side(n: usize, f: impl Fn(usize) -> usize) -> usize {
    (1..).find(|&s| f(s) >= n).unwrap_or(1)
}

/// A square pyramid of unit cubes, `s * s` at the base; every cube touches its neighbours, so
/// boxes that touch (and only touch) are paired from the first step.
pub fn pyramid(size: usize) -> World {
    let mut world = World::default();
    let base = side(size, |s| (1..=s).map(|k| k * k).sum());
    world.add_fixed(ColliderBuilder::cuboid(
        base as f32 + 5.0,
        0.5,
        base as f32 + 5.0,
    ));
    for level in 0..base {
        let width = base - level;
        let offset = -(width as f32 - 1.0) / 2.0;
        for i in 0..width {
            for k in 0..width {
                let at = vector![offset + i as f32, 1.0 + level as f32, offset + k as f32];
                world.add_body(
                    RigidBodyBuilder::dynamic().translation(at),
                    vec![ColliderBuilder::cuboid(0.5, 0.5, 0.5)],
                );
            }
        }
    }
    world
}

/// A fixed box (floor and four walls) `half` wide.
fn container(world: &mut World, half: f32) {
    let wall = 0.5;
    world.add_fixed(ColliderBuilder::cuboid(half, wall, half));
    for (x, z, hx, hz) in [
        (half, 0.0, wall, half),
        (-half, 0.0, wall, half),
        (0.0, half, half, wall),
        (0.0, -half, half, wall),
    ] {
        world.add_fixed(ColliderBuilder::cuboid(hx, half, hz).translation(vector![x, half, z]));
    }
}

/// A small deterministic offset in `[-0.1, 0.1)` so that stacked bodies do not fall straight.
fn jitter(i: usize) -> Real {
    ((i.wrapping_mul(2_654_435_761) >> 7) % 200) as Real / 1000.0 - 0.1
}

/// Balls of radius 0.5 in a grid above a box a little wider than the grid.
pub fn balls(size: usize) -> World {
    let mut world = World::default();
    let n = side(size, |s| s * s * s);
    container(&mut world, n as f32 * 0.75 + 1.0);
    drop_balls(&mut world, n, n, 0);
    world
}

/// `n * n * layers` balls in a grid, the first layer at height 2 + `first_layer` * 1.2.
fn drop_balls(world: &mut World, n: usize, layers: usize, first_layer: usize) {
    let offset = -(n as f32 - 1.0) * 0.6;
    for l in 0..layers {
        for i in 0..n {
            for k in 0..n {
                let j = (l * n + i) * n + k;
                let at = vector![
                    offset + i as f32 * 1.2 + jitter(j),
                    2.0 + (first_layer + l) as f32 * 1.2,
                    offset + k as f32 * 1.2 + jitter(j + 1)
                ];
                world.add_body(
                    RigidBodyBuilder::dynamic().translation(at),
                    vec![ColliderBuilder::ball(0.5)],
                );
            }
        }
    }
}

/// The heights of the rolling ground, `cells + 1` a side.
fn ground_heights(cells: usize) -> DMatrix<Real> {
    DMatrix::from_fn(cells + 1, cells + 1, |i, j| {
        let (x, z) = (i as Real * 0.7, j as Real * 0.6);
        x.sin() * z.cos() * 0.8
    })
}

/// A mix of shapes in a grid above the ground, one in five a two-ball dumbbell.
fn mixed_bodies(world: &mut World, size: usize) {
    let n = side(size, |s| s * s * 2);
    let offset = -(n as f32 - 1.0) * 1.25;
    let mut count = 0;
    'fill: for l in 0..2 {
        for i in 0..n {
            for k in 0..n {
                if count == size {
                    break 'fill;
                }
                let at = vector![
                    offset + i as f32 * 2.5 + jitter(count),
                    3.0 + l as f32 * 2.5,
                    offset + k as f32 * 2.5
                ];
                let shapes = match count % 5 {
                    0 => vec![ColliderBuilder::ball(0.5)],
                    1 => vec![ColliderBuilder::cuboid(0.5, 0.4, 0.6)],
                    2 => vec![ColliderBuilder::capsule_y(0.4, 0.4)],
                    3 => vec![ColliderBuilder::cylinder(0.4, 0.5)],
                    _ => vec![
                        ColliderBuilder::ball(0.45).translation(vector![-0.5, 0.0, 0.0]),
                        ColliderBuilder::ball(0.45).translation(vector![0.5, 0.0, 0.0]),
                    ],
                };
                world.add_body(RigidBodyBuilder::dynamic().translation(at), shapes);
                count += 1;
            }
        }
    }
}

/// The ground's extent for `size` bodies: a cell count and the ground's width.
fn ground_extent(size: usize) -> (usize, Real) {
    let n = side(size, |s| s * s * 2);
    (16, n as Real * 2.5 + 6.0)
}

/// A mix of bodies on a heightfield.
pub fn heightfield(size: usize) -> World {
    let mut world = World::default();
    let (cells, width) = ground_extent(size);
    world.add_fixed(ColliderBuilder::heightfield(
        ground_heights(cells),
        vector![width, 1.0, width],
    ));
    mixed_bodies(&mut world, size);
    world
}

/// The same ground as [`heightfield`] as a triangle mesh, with the same bodies.
pub fn trimesh(size: usize) -> World {
    let mut world = World::default();
    let (cells, width) = ground_extent(size);
    let heights = ground_heights(cells);
    let step = width / cells as Real;
    let mut vertices = Vec::with_capacity((cells + 1) * (cells + 1));
    for i in 0..=cells {
        for j in 0..=cells {
            let (x, z) = (
                i as Real * step - width / 2.0,
                j as Real * step - width / 2.0,
            );
            vertices.push(point![x, heights[(i, j)], z]);
        }
    }
    let at = |i: usize, j: usize| (i * (cells + 1) + j) as u32;
    let mut triangles = Vec::with_capacity(cells * cells * 2);
    for i in 0..cells {
        for j in 0..cells {
            triangles.push([at(i, j), at(i, j + 1), at(i + 1, j)]);
            triangles.push([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    match ColliderBuilder::trimesh(vertices, triangles) {
        Ok(ground) => world.add_fixed(ground),
        // The mesh above is always valid; should it not be, a flat floor keeps the scene.
        Err(_) => world.add_fixed(ColliderBuilder::cuboid(width / 2.0, 0.5, width / 2.0)),
    }
    mixed_bodies(&mut world, size);
    world
}

/// Chains of ten boxes linked by spherical joints, each hanging from a fixed body. They start
/// level and slanted towards their neighbours (every other chain the other way), so they swing
/// into each other and onto the ground below.
pub fn joints(size: usize) -> World {
    let mut world = World::default();
    const LINKS: usize = 10;
    let chains = size.div_ceil(LINKS - 1).max(1);
    world.add_fixed(ColliderBuilder::cuboid(40.0, 0.5, 40.0).translation(vector![0.0, -7.0, 0.0]));
    for c in 0..chains {
        let z0 = (c as Real - chains as Real / 2.0) * 0.8;
        // The slant, in z per unit of x: the joint anchors follow it.
        let dz = if c % 2 == 0 { 0.2 } else { -0.2 };
        let mut previous = world
            .bodies
            .insert(RigidBodyBuilder::fixed().translation(vector![0.0, 0.0, z0]));
        for l in 1..LINKS {
            let at = vector![l as Real, 0.0, z0 + dz * l as Real];
            let body = world
                .bodies
                .insert(RigidBodyBuilder::dynamic().translation(at));
            world.colliders.insert_with_parent(
                ColliderBuilder::cuboid(0.4, 0.15, 0.3),
                body,
                &mut world.bodies,
            );
            let joint = SphericalJointBuilder::new()
                .local_anchor1(point![0.5, 0.0, dz / 2.0])
                .local_anchor2(point![-0.5, 0.0, -dz / 2.0]);
            world.impulse_joints.insert(previous, body, joint, true);
            previous = body;
        }
    }
    world
}

/// Balls in a box; before every fourth step the oldest tenth of the balls is removed (with
/// their colliders) and as many new ones are dropped in from above, so collider indices are
/// freed and reused while pairs are live.
pub fn churn(size: usize) -> World {
    let mut world = balls(size);
    world.script = Some(|world: &mut World| {
        if world.steps == 0 || !world.steps.is_multiple_of(4) {
            return;
        }
        let dynamic: Vec<RigidBodyHandle> = world
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic())
            .map(|(h, _)| h)
            .collect();
        let count = (dynamic.len() / 10).max(1);
        for &handle in dynamic.iter().take(count) {
            world.bodies.remove(
                handle,
                &mut world.islands,
                &mut world.colliders,
                &mut world.impulse_joints,
                &mut world.multibody_joints,
                true,
            );
        }
        let n = side(count, |s| s * s);
        drop_balls(world, n, 1, 12);
    });
    world
}
