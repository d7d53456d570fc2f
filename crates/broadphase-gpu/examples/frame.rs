//! Frame times of GpuGrid against the CPU Grid on one scene: `n` boxes in a cube (about three
//! neighbours each), a tenth of them moved per frame.
//!
//! ```text
//! cargo run --release -p broadphase-gpu --example frame -- 100000 20 [radix bits]
//! ```

use std::time::Instant;

use broadphase::testing::SplitMix64;
use broadphase::{Aabb, BroadPhase, Config, Grid, ProxyDesc, ProxyId};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(10_000), |s| s.parse())?;
    let frames: usize = args.next().map_or(Ok(20), |s| s.parse())?;
    let mut settings = broadphase_gpu::GpuGridSettings::default();
    if let Some(bits) = args.next() {
        settings = settings.with_radix_bits(bits.parse()?);
    }
    let gpu = broadphase_gpu::with_settings(Config::default(), settings)?;
    println!("{}", gpu.engine().context().adapter());
    let side = (n as f32 * 3.4 / 3.0).cbrt() * 1.5;
    let mut rng = SplitMix64::new(1);
    let make = |rng: &mut SplitMix64| {
        let min: [f32; 3] = std::array::from_fn(|_| rng.unit() * side);
        let ext: [f32; 3] = std::array::from_fn(|_| rng.unit() * 1.5);
        Aabb::new(min, std::array::from_fn(|a| min[a] + ext[a]))
    };
    let items: Vec<(Aabb, ProxyDesc)> = (0..n)
        .map(|_| (make(&mut rng), ProxyDesc::dynamic()))
        .collect();
    let moves: Vec<Vec<(usize, Aabb)>> = (0..frames)
        .map(|_| (0..n).step_by(10).map(|i| (i, make(&mut rng))).collect())
        .collect();
    let figures = |bp: &dyn BroadPhase| format!("{:?}", bp.stats().figures);
    let grids: Vec<(&str, Box<dyn BroadPhase>)> = vec![
        ("GpuGrid", Box::new(gpu) as Box<dyn BroadPhase>),
        ("Grid (CPU)", Box::new(Grid::new(Config::default()))),
    ];
    for (name, mut bp) in grids {
        let ids: Vec<ProxyId> = bp.insert_batch(&items)?;
        let t = Instant::now();
        bp.update()?;
        let first = t.elapsed();
        let t = Instant::now();
        for frame in &moves {
            let batch: Vec<(ProxyId, Aabb)> = frame.iter().map(|&(i, b)| (ids[i], b)).collect();
            bp.set_aabbs(&batch)?;
            bp.update()?;
        }
        let per = t.elapsed() / frames.max(1) as u32;
        println!(
            "{name:>10}: {n} boxes, {} pairs; first update {:.1} ms, then {:.2} ms per frame ({} moved)",
            bp.pairs().len(),
            first.as_secs_f64() * 1e3,
            per.as_secs_f64() * 1e3,
            n.div_ceil(10)
        );
        println!("{:>10}  {}", "", figures(bp.as_ref()));
    }
    Ok(())
}
