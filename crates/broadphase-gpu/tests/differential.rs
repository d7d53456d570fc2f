//! GpuGrid against BruteForce: the shared differential suite, at case counts a software
//! driver runs in seconds (set `BROADPHASE_CHECK_SCALE` for a longer hunt).

#![allow(clippy::expect_used, clippy::panic)]

mod common;

use broadphase::testing::{self, CheckOptions};
use broadphase_gpu::GpuGridSettings;

#[test]
fn gpu_grid_matches_brute_force() {
    let Some(ctx) = common::context() else { return };
    testing::check_algorithm_with(
        || common::boxed(&ctx, GpuGridSettings::default()),
        &CheckOptions::scaled(800, 400, 24),
    );
}

/// Eight-bit digits (fewer, wider radix passes), a pair buffer of one pair (an overflow
/// nearly every update) and cells so small that most boxes live on coarser levels or on none (the CPU's).
#[test]
fn gpu_grid_with_tiny_cells_and_buffers_matches_brute_force() {
    let Some(ctx) = common::context() else { return };
    let settings = GpuGridSettings::default()
        .with_radix_bits(8)
        .with_pair_capacity(1)
        .with_cell_size(1e-3);
    testing::check_algorithm_with(
        || common::boxed(&ctx, settings.clone()),
        &CheckOptions::scaled(300, 150, 8),
    );
}

/// Three-bit digits, which do not divide the key width: the last pass sorts fewer bits.
#[test]
fn gpu_grid_with_odd_digits_matches_brute_force() {
    let Some(ctx) = common::context() else { return };
    let settings = GpuGridSettings::default().with_radix_bits(3);
    testing::check_algorithm_with(
        || common::boxed(&ctx, settings.clone()),
        &CheckOptions::scaled(150, 80, 4),
    );
}

/// Found by the suite: a rule change that marks no proxy changed (no proxy on its layer) left
/// the device's layer matrix stale once an update with nothing to do stopped reading it.
#[test]
fn a_rule_change_with_nothing_to_update_reaches_the_device() {
    use broadphase::testing::{check_sequence, Op};
    use broadphase::{Aabb, Layer, ProxyDesc};
    let Some(ctx) = common::context() else { return };
    let point = Aabb::new([0.0; 3], [0.0; 3]);
    let on = |layer| ProxyDesc::dynamic().with_layer(Layer(layer));
    let ops = [
        Op::Insert(point, on(0)),
        Op::Update,
        Op::SetLayersCollide(Layer(1), Layer(0), false),
        Op::Update,
        Op::Insert(point, on(1)),
        Op::Update,
    ];
    let make = || common::boxed(&ctx, GpuGridSettings::default());
    assert_eq!(check_sequence(&make, &ops), Ok(()));
}
