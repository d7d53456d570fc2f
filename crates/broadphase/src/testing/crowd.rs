//! Crowds: hundreds to thousands of boxes moved, churned and re-described over several
//! frames, as one long sequence of calls.

use proptest::prelude::*;

use super::ops::{Op, Pick, Query};
use super::SplitMix64;
use crate::{Aabb, Group, Layer, LayerMask, ProxyDesc, Ray};

/// A crowd: many boxes in a cube sized for a few overlaps each, moved, churned and
/// re-described over several frames. Generated from a seed, so failures replay.
#[derive(Clone, Debug)]
pub(super) struct Crowd {
    seed: u64,
    n: usize,
    frames: usize,
    /// Percent of boxes moved per frame.
    moving: u32,
    /// Percent of boxes removed and re-inserted per frame.
    churn: u32,
    fixed_percent: u32,
}

pub(super) fn crowd() -> impl Strategy<Value = Crowd> {
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
    pub(super) fn ops(&self) -> Vec<Op> {
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
