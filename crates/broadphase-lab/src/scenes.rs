//! The scenes every run, test and benchmark uses (DESIGN.md section 6).
//!
//! A scene is a deterministic function of its kind, size and seed: the boxes it starts with and,
//! frame after frame, which boxes move, leave and arrive. Objects are named by their index in
//! the scene (`0..n`); drivers map indices to the ids a broad phase hands out.

use std::fmt;
use std::str::FromStr;

use broadphase::{Aabb, ProxyDesc};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::variation::Variation;

/// The kinds of scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SceneKind {
    /// Boxes of size 0.5–2 in a cube sized for about one overlap per box, all moving a few
    /// percent of their size per frame and bouncing off the walls.
    Uniform,
    /// The uniform scene with 90% of the boxes asleep (dynamic, never moving).
    Sleeping,
    /// The uniform scene with 5% of the boxes removed and re-added elsewhere every frame.
    Churn,
    /// The uniform scene with 1% of the boxes 20–60 wide: planets among asteroids.
    Sizes,
    /// Boxes in Gaussian clusters (about 1,000 per cluster), moving as in `uniform`.
    Clustered,
    /// Unit cubes on a 2 m lattice, each oscillating around its place (Jolt's test scene).
    Grid,
    /// Equal small boxes (particles), denser than `uniform`, in a fast random walk.
    Particles,
    /// A big level: all but 2,000 boxes fixed, the 2,000 dynamic ones moving among them.
    StaticWorld,
    /// Every box overlaps every other: n(n-1)/2 pairs.
    Pile,
    /// The uniform scene with 1% of the boxes jumping across the world each frame.
    Teleport,
    /// The uniform scene a million units from the origin.
    Far,
    /// A lattice of touching unit cubes at rest, every box set to the box it has each frame
    /// (an engine that reports every body, moving or not).
    Resting,
}

impl SceneKind {
    /// Every scene.
    pub const ALL: &'static [SceneKind] = &[
        SceneKind::Uniform,
        SceneKind::Sleeping,
        SceneKind::Churn,
        SceneKind::Sizes,
        SceneKind::Clustered,
        SceneKind::Grid,
        SceneKind::Particles,
        SceneKind::StaticWorld,
        SceneKind::Pile,
        SceneKind::Teleport,
        SceneKind::Far,
        SceneKind::Resting,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SceneKind::Uniform => "uniform",
            SceneKind::Sleeping => "sleeping",
            SceneKind::Churn => "churn",
            SceneKind::Sizes => "sizes",
            SceneKind::Clustered => "clustered",
            SceneKind::Grid => "grid",
            SceneKind::Particles => "particles",
            SceneKind::StaticWorld => "static_world",
            SceneKind::Pile => "pile",
            SceneKind::Teleport => "teleport",
            SceneKind::Far => "far",
            SceneKind::Resting => "resting",
        }
    }

    /// One line on what the scene is, for `--help` and `bplab list`: the variant's doc.
    pub fn description(self) -> &'static str {
        match self {
            SceneKind::Uniform => {
                "boxes of size 0.5-2 in a cube sized for about one overlap per box, all \
                 moving a few percent of their size per frame and bouncing off the walls"
            }
            SceneKind::Sleeping => {
                "the uniform scene with 90% of the boxes asleep (dynamic, never moving)"
            }
            SceneKind::Churn => {
                "the uniform scene with 5% of the boxes removed and re-added elsewhere every \
                 frame"
            }
            SceneKind::Sizes => {
                "the uniform scene with 1% of the boxes 20-60 wide: planets \
                                 among asteroids"
            }
            SceneKind::Clustered => {
                "boxes in Gaussian clusters (about 1,000 per cluster), moving as in uniform"
            }
            SceneKind::Grid => {
                "unit cubes on a 2 m lattice, each oscillating around its place (Jolt's test \
                 scene)"
            }
            SceneKind::Particles => {
                "equal small boxes (particles), denser than uniform, in a fast random walk"
            }
            SceneKind::StaticWorld => {
                "a big level: all but 2,000 boxes fixed, the 2,000 dynamic ones moving among \
                 them"
            }
            SceneKind::Pile => "every box overlaps every other: n(n-1)/2 pairs",
            SceneKind::Teleport => {
                "the uniform scene with 1% of the boxes jumping across the world each frame"
            }
            SceneKind::Far => "the uniform scene a million units from the origin",
            SceneKind::Resting => {
                "a lattice of touching unit cubes at rest, every box set to the box it has each \
                 frame (an engine that reports every body)"
            }
        }
    }
}

impl fmt::Display for SceneKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SceneKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        find_by_name(s, SceneKind::ALL, SceneKind::name, "scene")
    }
}

/// The item of `all` whose `name` is `s` (any case, `-` for `_`), or a message listing the
/// names: parsing a command-line name of a `what`.
pub(crate) fn find_by_name<T: Copy>(
    s: &str,
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
) -> Result<T, String> {
    let wanted = s.replace('-', "_").to_ascii_lowercase();
    all.iter()
        .copied()
        .find(|&k| name(k) == wanted)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&k| name(k)).collect();
            format!(
                "unknown {what} {s:?}; expected one of: {}",
                names.join(", ")
            )
        })
}

/// What happens to the scene in one frame. Removals come first, then arrivals, then moves;
/// an object is in at most one of the three lists.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Objects that move, with their new box.
    pub moved: Vec<(u32, Aabb)>,
    /// Objects that leave.
    pub removed: Vec<u32>,
    /// Objects that arrive (a removed index coming back), with their box and description.
    pub added: Vec<(u32, Aabb, ProxyDesc)>,
}

impl Frame {
    /// Applies the frame to each object's box (`None` while the object is away).
    ///
    /// # Panics
    /// If the frame names an object beyond `boxes` (a frame of another scene).
    pub fn apply_to(&self, boxes: &mut [Option<Aabb>]) {
        for &i in &self.removed {
            boxes[i as usize] = None;
        }
        for &(i, aabb, _) in &self.added {
            boxes[i as usize] = Some(aabb);
        }
        for &(i, aabb) in &self.moved {
            boxes[i as usize] = Some(aabb);
        }
    }
}

/// How an object moves.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Motion {
    /// Never moves.
    Still,
    /// Never moves, but is set to its box every frame.
    Hold,
    /// Constant velocity, bouncing off the walls of the world cube.
    Bounce([f32; 3]),
    /// Oscillates around `anchor` with amplitude `amp` and phase `phase`.
    Oscillate {
        anchor: [f32; 3],
        amp: f32,
        phase: f32,
    },
    /// Random steps of up to `step` per axis, kept inside the world.
    Walk(f32),
    /// Constant velocity, no walls (scene files).
    Drift([f32; 3]),
}

/// A scene in progress.
#[derive(Clone, Debug)]
pub struct Scene {
    /// `None` for a scene read from a file.
    kind: Option<SceneKind>,
    frame: u64,
    rng: Pcg64Mcg,
    /// The world cube's side; objects stay in `[offset, offset + side]` (teleports too).
    side: f32,
    /// Where the world cube starts (1e6 in `far`).
    offset: f32,
    /// Radians per frame of an oscillation's phase over 0.05 (a variation's speed).
    rate: f32,
    centers: Vec<[f32; 3]>,
    halves: Vec<[f32; 3]>,
    motions: Vec<Motion>,
    descs: Vec<ProxyDesc>,
    /// A file scene's boxes at frame 0, kept exactly as written (empty otherwise).
    file_boxes: Vec<Aabb>,
}

/// Side of a cube holding `n` boxes of mean size `mean` with about `neighbours` overlaps each:
/// the chance that two boxes overlap on one axis is about `2 * mean / side`.
fn cube_side(n: usize, mean: f32, neighbours: f32) -> f32 {
    (2.0 * mean) * (n.max(1) as f32 / neighbours).cbrt()
}

impl Scene {
    /// Builds the scene of `kind` with `n` objects from `seed`.
    pub fn new(kind: SceneKind, n: usize, seed: u64) -> Self {
        Self::varied(kind, n, seed, &Variation::default())
    }

    /// [`Scene::new`] with the factors of `vary` applied (the standard variation builds the
    /// same scene).
    pub fn varied(kind: SceneKind, n: usize, seed: u64, vary: &Variation) -> Self {
        // Boxes per volume scale as the cube of the world's side.
        let shrink = vary.density.cbrt();
        // A drawn half extent from 0.25 to 1, its spread widened or narrowed.
        let spread = |h: f32| 0.25 + (h - 0.25) * vary.size;
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x5EED_0000_B0B0_0000);
        let mut s = Scene {
            kind: Some(kind),
            frame: 0,
            rng: rng.clone(),
            side: 1.0,
            offset: 0.0,
            // The pile's boxes overlap whatever their phase: it takes no factor.
            rate: if kind == SceneKind::Pile {
                1.0
            } else {
                vary.speed
            },
            centers: Vec::with_capacity(n),
            halves: Vec::with_capacity(n),
            motions: Vec::with_capacity(n),
            descs: Vec::with_capacity(n),
            file_boxes: Vec::new(),
        };
        match kind {
            SceneKind::Uniform
            | SceneKind::Sleeping
            | SceneKind::Churn
            | SceneKind::Teleport
            | SceneKind::Far
            | SceneKind::Sizes => {
                s.side = cube_side(n, 1.25, 1.0) / shrink;
                if kind == SceneKind::Far {
                    s.offset = 1.0e6;
                }
                for i in 0..n {
                    let planet = kind == SceneKind::Sizes && i % 100 == 0;
                    let half = if planet {
                        [0.0; 3].map(|_| rng.random_range(10.0..30.0f32))
                    } else {
                        [0.0; 3].map(|_| spread(rng.random_range(0.25..1.0f32)))
                    };
                    let asleep = kind == SceneKind::Sleeping && i % 10 != 0;
                    s.push_random(&mut rng, half, ProxyDesc::dynamic(), !asleep, vary.speed);
                }
            }
            SceneKind::Clustered => {
                s.side = cube_side(n, 1.25, 1.0) / shrink;
                let clusters = n.div_ceil(1000).max(1);
                let sigma = s.side / 20.0 * vary.spread;
                let centres: Vec<[f32; 3]> = (0..clusters)
                    .map(|_| [0.0; 3].map(|_| rng.random_range(0.0..s.side)))
                    .collect();
                for i in 0..n {
                    let c = centres[i % clusters];
                    let half = [0.0; 3].map(|_| spread(rng.random_range(0.25..1.0f32)));
                    let centre: [f32; 3] = std::array::from_fn(|a| {
                        (c[a] + gaussian(&mut rng) * sigma).clamp(0.0, s.side)
                    });
                    let v = velocity(&mut rng, half).map(|c| c * vary.speed);
                    s.push(centre, half, Motion::Bounce(v), ProxyDesc::dynamic());
                }
            }
            SceneKind::Grid => {
                let m = (n as f64).cbrt().ceil() as usize;
                let spacing = 2.0 / shrink;
                s.side = spacing * m as f32;
                for i in 0..n {
                    let anchor =
                        [i % m, (i / m) % m, i / (m * m)].map(|k| spacing * k as f32 + 0.5);
                    let motion = Motion::Oscillate {
                        anchor,
                        amp: 0.6,
                        phase: rng.random_range(0.0..std::f32::consts::TAU),
                    };
                    s.push(anchor, [0.5 * vary.size; 3], motion, ProxyDesc::dynamic());
                }
            }
            SceneKind::Resting => {
                let m = (n as f64).cbrt().ceil() as usize;
                s.side = m as f32;
                for i in 0..n {
                    let centre = [i % m, (i / m) % m, i / (m * m)].map(|k| k as f32 + 0.5);
                    s.push(centre, [0.5; 3], Motion::Hold, ProxyDesc::dynamic());
                }
            }
            SceneKind::Particles => {
                s.side = cube_side(n, 1.0, 3.0) / shrink;
                let (half, step) = ([0.5 * vary.size; 3], 0.1 * vary.speed);
                for _ in 0..n {
                    let centre = [0.0; 3].map(|_| rng.random_range(0.0..s.side));
                    s.push(centre, half, Motion::Walk(step), ProxyDesc::dynamic());
                }
            }
            SceneKind::StaticWorld => {
                s.side = cube_side(n, 1.25, 1.0) / shrink;
                let dynamic = 2000.min(n / 2);
                for i in 0..n {
                    let half = [0.0; 3].map(|_| spread(rng.random_range(0.25..1.0f32)));
                    if i < n - dynamic {
                        s.push_random(&mut rng, half, ProxyDesc::fixed(), false, vary.speed);
                    } else {
                        s.push_random(&mut rng, half, ProxyDesc::dynamic(), true, vary.speed);
                    }
                }
            }
            SceneKind::Pile => {
                s.side = 4.0;
                for _ in 0..n {
                    // Every box holds the point (2, 2, 2) whatever its jiggle.
                    let half = [0.0; 3].map(|_| rng.random_range(0.75..1.5f32));
                    let centre = [0.0; 3].map(|_| 2.0 + rng.random_range(-0.25..0.25f32));
                    let motion = Motion::Oscillate {
                        anchor: centre,
                        amp: 0.2,
                        phase: rng.random_range(0.0..std::f32::consts::TAU),
                    };
                    s.push(centre, half, motion, ProxyDesc::dynamic());
                }
            }
        }
        s.rng = rng;
        s
    }

    fn push(&mut self, centre: [f32; 3], half: [f32; 3], motion: Motion, desc: ProxyDesc) {
        let c = centre.map(|v| v + self.offset);
        let motion = match motion {
            Motion::Oscillate { anchor, amp, phase } => Motion::Oscillate {
                anchor: anchor.map(|v| v + self.offset),
                amp,
                phase,
            },
            m => m,
        };
        self.centers.push(c);
        self.halves.push(half);
        self.motions.push(motion);
        self.descs.push(desc);
    }

    /// Pushes a box at a random place, `moving` at `speed` times a [`velocity`].
    fn push_random(
        &mut self,
        rng: &mut Pcg64Mcg,
        half: [f32; 3],
        desc: ProxyDesc,
        moving: bool,
        speed: f32,
    ) {
        let centre = [0.0; 3].map(|_| rng.random_range(0.0..self.side));
        let motion = if moving {
            Motion::Bounce(velocity(rng, half).map(|c| c * speed))
        } else {
            Motion::Still
        };
        self.push(centre, half, motion, desc);
    }

    /// A scene of the objects of a scene file: those with a velocity move by it each frame.
    pub fn from_file(file: &crate::scene_file::SceneFile) -> Self {
        let mut s = Scene {
            kind: None,
            frame: 0,
            rng: Pcg64Mcg::seed_from_u64(0),
            side: 1.0,
            offset: 0.0,
            rate: 1.0,
            centers: Vec::with_capacity(file.objects.len()),
            halves: Vec::with_capacity(file.objects.len()),
            motions: Vec::with_capacity(file.objects.len()),
            descs: Vec::with_capacity(file.objects.len()),
            file_boxes: Vec::with_capacity(file.objects.len()),
        };
        for o in &file.objects {
            let motion = if o.velocity == [0.0; 3] {
                Motion::Still
            } else {
                Motion::Drift(o.velocity)
            };
            s.centers.push(o.aabb.center());
            s.halves.push([0.0; 3]);
            s.motions.push(motion);
            s.descs.push(o.desc);
            s.file_boxes.push(o.aabb);
        }
        s
    }

    /// The scene's kind (`None` for a scene read from a file).
    pub fn kind(&self) -> Option<SceneKind> {
        self.kind
    }

    /// The number of objects.
    pub fn len(&self) -> usize {
        self.centers.len()
    }

    /// Whether the scene has no objects.
    pub fn is_empty(&self) -> bool {
        self.centers.is_empty()
    }

    /// The side of the world cube.
    pub fn side(&self) -> f32 {
        self.side
    }

    /// The current box of object `i`.
    pub fn aabb(&self, i: usize) -> Aabb {
        if let (Some(b), Motion::Drift(v)) = (self.file_boxes.get(i), self.motions[i]) {
            // Written boxes move by whole frames of their velocity; frame 0 is exact.
            let t = self.frame as f32;
            return b.translated(v.map(|x| x * t));
        }
        if let Some(b) = self.file_boxes.get(i) {
            return *b;
        }
        let (c, h) = (self.centers[i], self.halves[i]);
        Aabb::new(
            std::array::from_fn(|a| c[a] - h[a]),
            std::array::from_fn(|a| c[a] + h[a]),
        )
    }

    /// The description of object `i`.
    pub fn desc(&self, i: usize) -> ProxyDesc {
        self.descs[i]
    }

    /// The box holding every object's current box, or `None` for an empty scene.
    pub fn bounds(&self) -> Option<Aabb> {
        (0..self.len())
            .map(|i| self.aabb(i))
            .reduce(|a, b| a.union(&b))
    }

    /// Every object's box and description, in index order: what a broad phase starts with.
    pub fn initial(&self) -> Vec<(Aabb, ProxyDesc)> {
        (0..self.len())
            .map(|i| (self.aabb(i), self.descs[i]))
            .collect()
    }

    /// Advances one frame and says what changed.
    pub fn step(&mut self) -> Frame {
        self.frame += 1;
        let mut frame = Frame::default();
        let n = self.len();
        // Who leaves and comes back elsewhere (churn), or jumps (teleport): chosen first so
        // that they do not also move.
        let mut jumped = vec![false; 0];
        let jumps = match self.kind {
            Some(SceneKind::Churn) => n / 20,
            Some(SceneKind::Teleport) => n / 100,
            _ => 0,
        };
        if jumps > 0 {
            jumped = vec![false; n];
            for _ in 0..jumps {
                let i = self.rng.random_range(0..n);
                if std::mem::replace(&mut jumped[i], true) {
                    continue;
                }
                let centre = [0.0; 3].map(|_| self.rng.random_range(0.0..self.side) + self.offset);
                self.centers[i] = centre;
                if self.kind == Some(SceneKind::Churn) {
                    frame.removed.push(i as u32);
                    frame.added.push((i as u32, self.aabb(i), self.descs[i]));
                } else {
                    frame.moved.push((i as u32, self.aabb(i)));
                }
            }
        }
        let t = self.frame as f32;
        let (lo, hi) = (self.offset, self.offset + self.side);
        for i in 0..n {
            if !jumped.is_empty() && jumped[i] {
                continue;
            }
            let c = &mut self.centers[i];
            match &mut self.motions[i] {
                Motion::Still => continue,
                Motion::Hold => {}
                Motion::Bounce(v) => {
                    for a in 0..3 {
                        c[a] += v[a];
                        if (c[a] < lo && v[a] < 0.0) || (c[a] > hi && v[a] > 0.0) {
                            v[a] = -v[a];
                        }
                    }
                }
                Motion::Oscillate { anchor, amp, phase } => {
                    for a in 0..3 {
                        c[a] = anchor[a] + *amp * (0.05 * self.rate * t + *phase + a as f32).sin();
                    }
                }
                Motion::Walk(step) => {
                    for v in c.iter_mut() {
                        *v = (*v + self.rng.random_range(-*step..*step)).clamp(lo, hi);
                    }
                }
                // File boxes: `aabb` computes the position from the frame number.
                Motion::Drift(_) => {}
            }
            frame.moved.push((i as u32, self.aabb(i)));
        }
        frame.moved.sort_unstable_by_key(|&(i, _)| i);
        frame
    }
}

/// A velocity of a few percent of the box size per frame, in a random direction.
fn velocity(rng: &mut Pcg64Mcg, half: [f32; 3]) -> [f32; 3] {
    let size = 2.0 * (half[0] + half[1] + half[2]) / 3.0;
    let speed = size * rng.random_range(0.01..0.05f32);
    let dir = [0.0; 3].map(|_| gaussian(rng));
    let len = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2])
        .sqrt()
        .max(1e-6);
    dir.map(|d| d / len * speed)
}

/// A standard normal sample (Box-Muller).
fn gaussian(rng: &mut Pcg64Mcg) -> f32 {
    let u: f32 = rng.random_range(1e-7..1.0);
    let v: f32 = rng.random_range(0.0..std::f32::consts::TAU);
    (-2.0 * u.ln()).sqrt() * v.cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenes_are_deterministic_and_valid() {
        for &kind in SceneKind::ALL {
            let mut a = Scene::new(kind, 500, 7);
            let mut b = Scene::new(kind, 500, 7);
            assert_eq!(a.initial(), b.initial(), "{kind}");
            for _ in 0..3 {
                let (fa, fb) = (a.step(), b.step());
                assert_eq!(fa.moved, fb.moved, "{kind}");
                assert_eq!(fa.removed, fb.removed, "{kind}");
                for (_, aabb) in &fa.moved {
                    assert!(aabb.is_valid(), "{kind}: {aabb:?}");
                }
            }
        }
    }

    #[test]
    fn uniform_has_about_one_neighbour_per_box() {
        let s = Scene::new(SceneKind::Uniform, 4000, 1);
        let per_box = 2.0 * start_pairs(&s) as f64 / s.len() as f64;
        assert!(
            (0.5..2.0).contains(&per_box),
            "{per_box} neighbours per box"
        );
    }

    /// Pairs among the boxes of a scene at its start.
    fn start_pairs(s: &Scene) -> usize {
        let boxes: Vec<Aabb> = (0..s.len()).map(|i| s.aabb(i)).collect();
        let mut pairs = 0;
        for i in 0..boxes.len() {
            pairs += boxes[i + 1..]
                .iter()
                .filter(|b| b.overlaps(&boxes[i]))
                .count();
        }
        pairs
    }

    /// Each factor moves what it names: density and size the pairs, speed how far a box goes
    /// in a frame, spread how tightly clusters hold.
    #[test]
    fn variations_vary_what_they_name() {
        let vary = |text: &str| text.parse::<Variation>().unwrap_or_default();
        let uniform = |v: &str| Scene::varied(SceneKind::Uniform, 3000, 4, &vary(v));
        let base = start_pairs(&uniform("")) as f64;
        let denser = start_pairs(&uniform("density=8")) as f64 / base;
        let wider = start_pairs(&uniform("size=3")) as f64 / base;
        assert!(
            (5.0..12.0).contains(&denser),
            "density=8: {denser}x the pairs"
        );
        assert!(wider > 4.0, "size=3: {wider}x the pairs");
        let travel = |v: &str| {
            let mut s = uniform(v);
            let before = s.aabb(0);
            let after = s.step().moved[0].1;
            (0..3)
                .map(|a| (after.min[a] - before.min[a]).abs())
                .sum::<f32>()
        };
        let faster = travel("speed=3") / travel("");
        assert!((2.9..3.1).contains(&faster), "speed=3: {faster}x as far");
        let clustered =
            |v: &str| start_pairs(&Scene::varied(SceneKind::Clustered, 3000, 4, &vary(v)));
        assert!(clustered("spread=0.5") > 3 * clustered(""));
        // The pile takes no factor.
        let mut pile = Scene::varied(SceneKind::Pile, 50, 2, &vary("speed=3,size=2"));
        assert_eq!(
            pile.step().moved,
            Scene::new(SceneKind::Pile, 50, 2).step().moved
        );
    }

    #[test]
    fn sleeping_moves_a_tenth_and_churn_replaces_a_twentieth() {
        let mut s = Scene::new(SceneKind::Sleeping, 1000, 3);
        assert_eq!(s.step().moved.len(), 100);
        let mut c = Scene::new(SceneKind::Churn, 1000, 3);
        let f = c.step();
        assert!(f.removed.len() > 40 && f.removed.len() <= 50);
        assert_eq!(f.removed.len(), f.added.len());
        assert_eq!(f.moved.len() + f.removed.len(), 1000);
    }

    #[test]
    fn pile_overlaps_completely() {
        let s = Scene::new(SceneKind::Pile, 50, 2);
        for i in 0..50 {
            for j in 0..50 {
                assert!(s.aabb(i).overlaps(&s.aabb(j)));
            }
        }
    }
}
