//! Times rapier's full `PhysicsPipeline::step` on each scene with rapier's own broad phase and
//! with ours (through the adapter, bit-exact mode), and the broad-phase updates alone.
//!
//! ```text
//! cargo run --release --example bench -- [--size 1000] [--steps 100] [--rounds 5]
//! ```
//!
//! Each round builds every contender's world afresh and steps it, the contenders in a rotating
//! order so that none always runs first (interleaved: a slow stretch of a shared machine hits
//! them all alike). A cell is the median over the rounds of the mean time per step, with the
//! spread (max - min) / median.

use std::time::{Duration, Instant};

use broadphase::{Algorithm, Config};
use broadphase_rapier::scenes::Scene;
use broadphase_rapier::{BroadPhaseAdapter, Mode};
use rapier3d::dynamics::{IntegrationParameters, RigidBodySet};
use rapier3d::geometry::{
    BroadPhase as RapierBroadPhase, BroadPhaseBvh, BroadPhasePairEvent, ColliderHandle, ColliderSet,
};

/// A broad phase that adds the time spent in its updates to `spent`.
struct Timed {
    inner: Box<dyn RapierBroadPhase>,
    spent: Duration,
}

impl RapierBroadPhase for Timed {
    fn update(
        &mut self,
        params: &IntegrationParameters,
        colliders: &ColliderSet,
        bodies: &RigidBodySet,
        modified: &[ColliderHandle],
        removed: &[ColliderHandle],
        events: &mut Vec<BroadPhasePairEvent>,
    ) {
        let start = Instant::now();
        self.inner
            .update(params, colliders, bodies, modified, removed, events);
        self.spent += start.elapsed();
    }
}

#[derive(Clone, Copy)]
enum Contender {
    Rapier,
    Ours(Algorithm),
}

impl Contender {
    fn name(self) -> String {
        match self {
            Contender::Rapier => "rapier BroadPhaseBvh".to_string(),
            Contender::Ours(a) => format!("{a:?}"),
        }
    }

    fn broad_phase(self) -> Box<dyn RapierBroadPhase> {
        match self {
            Contender::Rapier => Box::new(BroadPhaseBvh::new()),
            // One thread, as rapier's broad phase runs without its `parallel` feature.
            Contender::Ours(a) => Box::new(BroadPhaseAdapter::from_box(
                broadphase::new(a, Config::default().with_parallel(false)),
                Mode::BitExact,
            )),
        }
    }
}

/// Mean (step, broad phase) milliseconds per step of one run.
fn run(scene: Scene, size: usize, steps: u64, contender: Contender) -> (f64, f64) {
    let mut world = scene.build(size);
    let mut bp = Timed {
        inner: contender.broad_phase(),
        spent: Duration::ZERO,
    };
    let start = Instant::now();
    for _ in 0..steps {
        world.step(&mut bp);
    }
    let per_step = |d: Duration| d.as_secs_f64() * 1e3 / steps as f64;
    (per_step(start.elapsed()), per_step(bp.spent))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = arg(&args, "--size", 1000);
    let steps = arg(&args, "--steps", 100) as u64;
    let rounds = arg(&args, "--rounds", 5).max(1);
    let contenders = [
        Contender::Rapier,
        Contender::Ours(Algorithm::Abp),
        Contender::Ours(Algorithm::Sap),
        Contender::Ours(Algorithm::Mbp),
        Contender::Ours(Algorithm::QuadTree),
        Contender::Ours(Algorithm::Grid),
    ];
    println!(
        "{size} bodies a scene, {steps} steps a run, {rounds} rounds; ms per step: median (spread)"
    );
    println!(
        "| scene | broad phase | full step | vs rapier | broad phase alone | vs rapier |\n\
         |---|---|---:|---:|---:|---:|"
    );
    for scene in Scene::ALL {
        let mut step_ms = vec![Vec::new(); contenders.len()];
        let mut bp_ms = vec![Vec::new(); contenders.len()];
        for round in 0..rounds {
            for k in 0..contenders.len() {
                let c = (round + k) % contenders.len();
                let (step, bp) = run(scene, size, steps, contenders[c]);
                step_ms[c].push(step);
                bp_ms[c].push(bp);
            }
        }
        let cell = |v: &mut Vec<f64>| {
            let m = median(v);
            let spread = (v[v.len() - 1] - v[0]) / m * 100.0;
            (m, spread)
        };
        let mut rows = Vec::new();
        for c in 0..contenders.len() {
            rows.push((cell(&mut step_ms[c]), cell(&mut bp_ms[c])));
        }
        let ((rapier_step, _), (rapier_bp, _)) = rows[0];
        for (c, ((step, step_spread), (bp, bp_spread))) in rows.into_iter().enumerate() {
            println!(
                "| {} | {} | {step:.3} ({step_spread:.0}%) | {:.2}x | {bp:.3} ({bp_spread:.0}%) | {:.2}x |",
                scene.name(),
                contenders[c].name(),
                step / rapier_step,
                bp / rapier_bp,
            );
        }
    }
}
