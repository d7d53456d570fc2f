//! What only the device does: buffers that overflow and grow, boxes no level holds, a lost
//! device, and frames of thousands of boxes against the CPU grid.

#![allow(clippy::expect_used, clippy::panic)]

mod common;

use broadphase::testing::SplitMix64;
use broadphase::{Aabb, BroadPhase, BruteForce, Config, Error, Grid, ProxyDesc, ProxyId};
use broadphase_gpu::{GpuContext, GpuGridSettings};

/// `n` boxes of sizes up to `size` in a cube of side `side`.
fn boxes(rng: &mut SplitMix64, n: usize, side: f32, size: f32) -> Vec<Aabb> {
    (0..n)
        .map(|_| {
            let min: [f32; 3] = std::array::from_fn(|_| rng.unit() * side);
            let ext: [f32; 3] = std::array::from_fn(|_| rng.unit() * size);
            Aabb::new(min, std::array::from_fn(|a| min[a] + ext[a]))
        })
        .collect()
}

fn insert_all(bp: &mut dyn BroadPhase, boxes: &[Aabb]) -> Vec<ProxyId> {
    let items: Vec<(Aabb, ProxyDesc)> = boxes.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
    bp.insert_batch(&items).expect("valid boxes")
}

#[test]
fn an_overflowing_pair_buffer_grows_and_loses_no_pair() {
    let Some(ctx) = common::context() else { return };
    let settings = GpuGridSettings::default().with_pair_capacity(4);
    let mut gpu = common::grid(&ctx, Config::default(), settings);
    let mut cpu = BruteForce::new(Config::default());
    let mut rng = SplitMix64::new(7);
    // 2,000 boxes in a small cube: thousands of pairs against room for four.
    let bs = boxes(&mut rng, 2000, 20.0, 2.0);
    insert_all(&mut gpu, &bs);
    insert_all(&mut cpu, &bs);
    let got = gpu.update().expect("update").clone();
    let want = cpu.update().expect("update").clone();
    assert!(
        want.created().len() > 1000,
        "{} pairs",
        want.created().len()
    );
    assert_eq!(got, want);
    let f = gpu.engine().figures();
    assert!(f.overflows >= 1, "{f:?}");
    // Every pair was found on the device, none by the CPU's fallback.
    assert_eq!(
        (f.oversized, f.gpu_pairs),
        (0, want.created().len() as u64),
        "{f:?}"
    );
    assert!(f.pair_capacity >= want.created().len() as u64, "{f:?}");
    assert_eq!(gpu.check_structure(), Ok(()));
}

#[test]
fn boxes_no_level_holds_are_paired_on_the_cpu() {
    let Some(ctx) = common::context() else { return };
    // Cells of a micron: boxes a million times larger fit no level of the grid.
    let settings = GpuGridSettings::default().with_cell_size(1e-6);
    let mut gpu = common::grid(&ctx, Config::default(), settings);
    let mut cpu = BruteForce::new(Config::default());
    let mut rng = SplitMix64::new(11);
    let mut bs = boxes(&mut rng, 300, 10.0, 1e-6);
    bs.extend(boxes(&mut rng, 20, 10.0, 1e30));
    bs.push(Aabb::new([-1e30; 3], [1e30; 3]));
    insert_all(&mut gpu, &bs);
    insert_all(&mut cpu, &bs);
    assert_eq!(gpu.update().expect("update"), cpu.update().expect("update"));
    assert!(gpu.engine().figures().oversized > 0);
    assert_eq!(gpu.check_structure(), Ok(()));
}

#[test]
fn a_lost_device_is_an_error_and_the_next_update_recovers() {
    // A device of its own: losing it must not fail the other tests.
    if common::context().is_none() {
        return;
    }
    let ctx = GpuContext::new().expect("a device");
    let mut gpu = broadphase_gpu::with_context(Config::default(), GpuGridSettings::default(), ctx)
        .expect("valid settings");
    let mut cpu = BruteForce::new(Config::default());
    let mut rng = SplitMix64::new(3);
    let bs = boxes(&mut rng, 500, 10.0, 1.5);
    let ids = insert_all(&mut gpu, &bs);
    insert_all(&mut cpu, &bs);
    assert_eq!(gpu.update().expect("update"), cpu.update().expect("update"));

    gpu.engine().context().lose_device();
    let moved: Vec<(ProxyId, Aabb)> = ids
        .iter()
        .zip(boxes(&mut rng, ids.len(), 10.0, 1.5))
        .step_by(3)
        .map(|(&id, b)| (id, b))
        .collect();
    gpu.set_aabbs(&moved).expect("valid boxes");
    cpu.set_aabbs(&moved).expect("valid boxes");
    match gpu.update() {
        Err(Error::Device { message }) => assert!(!message.is_empty()),
        other => panic!("expected a device error, got {other:?}"),
    }
    // The failed update changed nothing: the next one reports every change since the last
    // good one, on a fresh device.
    assert_eq!(gpu.update().expect("update"), cpu.update().expect("update"));
    let (mut a, mut b) = (gpu.pairs().to_vec(), cpu.pairs().to_vec());
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    assert_eq!(gpu.engine().figures().recoveries, 1);
    assert_eq!(gpu.check_structure(), Ok(()));
}

/// Frames of 10,000 boxes, a tenth of them moving and a few coming and going, against the
/// CPU grid: the same events every frame.
#[test]
fn ten_thousand_boxes_match_the_cpu_grid_frame_by_frame() {
    let Some(ctx) = common::context() else { return };
    let mut gpu = common::grid(&ctx, Config::default(), GpuGridSettings::default());
    let mut cpu = Grid::new(Config::default());
    let mut rng = SplitMix64::new(42);
    let n = 10_000;
    // About three neighbours per box.
    let side = (n as f32 * 3.4 / 3.0).cbrt() * 1.0 + 1.0;
    let bs = boxes(&mut rng, n, side * 1.5, 1.5);
    let mut ids = insert_all(&mut gpu, &bs);
    let cpu_ids = insert_all(&mut cpu, &bs);
    assert_eq!(ids, cpu_ids);
    for frame in 0..5 {
        let got = gpu.update().expect("update").clone();
        let want = cpu.update().expect("update").clone();
        assert_eq!(got, want, "frame {frame}");
        let moved: Vec<(ProxyId, Aabb)> = ids
            .iter()
            .step_by(10)
            .map(|&id| (id, boxes(&mut rng, 1, side * 1.5, 1.5)[0]))
            .collect();
        gpu.set_aabbs(&moved).expect("valid boxes");
        cpu.set_aabbs(&moved).expect("valid boxes");
        let gone: Vec<ProxyId> = ids.iter().skip(frame).step_by(97).copied().collect();
        gpu.remove_batch(&gone).expect("live ids");
        cpu.remove_batch(&gone).expect("live ids");
        ids.retain(|id| !gone.contains(id));
        let fresh = boxes(&mut rng, gone.len(), side * 1.5, 1.5);
        let a = insert_all(&mut gpu, &fresh);
        let b = insert_all(&mut cpu, &fresh);
        assert_eq!(a, b);
        ids.extend(a);
    }
    // The same pairs; each algorithm lists them in an order of its own.
    let sorted = |bp: &dyn BroadPhase| {
        let mut p = bp.pairs().to_vec();
        p.sort_unstable();
        p
    };
    assert_eq!(sorted(&gpu), sorted(&cpu));
    let f = gpu.engine().figures();
    assert!(f.home_cells > 0 && f.home_cells <= f.cell_ids, "{f:?}");
    assert_eq!(gpu.check_structure(), Ok(()));
}

/// Giving up on the device: a CPU engine put under the same proxies carries on with exactly
/// the events the GPU engine would have reported.
#[test]
fn a_cpu_engine_takes_over_the_proxies() {
    let Some(ctx) = common::context() else { return };
    let config = Config::default();
    let mut gpu = common::grid(&ctx, config.clone(), GpuGridSettings::default());
    let mut oracle = BruteForce::new(config.clone());
    let mut rng = SplitMix64::new(5);
    let bs = boxes(&mut rng, 800, 12.0, 1.5);
    let ids = insert_all(&mut gpu, &bs);
    insert_all(&mut oracle, &bs);
    assert_eq!(
        gpu.update().expect("update"),
        oracle.update().expect("update")
    );
    let moved: Vec<(ProxyId, Aabb)> = ids
        .iter()
        .step_by(4)
        .map(|&id| (id, boxes(&mut rng, 1, 12.0, 1.5)[0]))
        .collect();
    gpu.set_aabbs(&moved).expect("valid boxes");
    oracle.set_aabbs(&moved).expect("valid boxes");
    let mut cpu = gpu.replace_engine(broadphase::engine::GridEngine::new(
        &config,
        broadphase::GridSettings::default(),
    ));
    assert_eq!(
        cpu.update().expect("update"),
        oracle.update().expect("update")
    );
    assert_eq!(cpu.check_structure(), Ok(()));
}

/// Boxes go to the device once; afterwards only the changed slots do.
#[test]
fn only_changed_boxes_are_uploaded() {
    let Some(ctx) = common::context() else { return };
    let mut gpu = common::grid(&ctx, Config::default(), GpuGridSettings::default());
    let mut rng = SplitMix64::new(9);
    let ids = insert_all(&mut gpu, &boxes(&mut rng, 1000, 15.0, 1.5));
    gpu.update().expect("update");
    assert_eq!(gpu.engine().figures().uploaded, 1000);
    let moved: Vec<(ProxyId, Aabb)> = ids[..10]
        .iter()
        .map(|&id| (id, boxes(&mut rng, 1, 15.0, 1.5)[0]))
        .collect();
    gpu.set_aabbs(&moved).expect("valid boxes");
    gpu.remove(ids[500]).expect("a live id");
    gpu.update().expect("update");
    assert_eq!(gpu.engine().figures().uploaded, 11);
    gpu.update().expect("update");
    assert_eq!(gpu.engine().figures().uploaded, 0);
    assert_eq!(gpu.check_structure(), Ok(()));
}
