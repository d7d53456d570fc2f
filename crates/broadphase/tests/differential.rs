//! Every algorithm against the BruteForce oracle: the shared differential suite.

use broadphase::{testing, Algorithm, Config};

fn check(algorithm: Algorithm) {
    testing::check_algorithm(|| broadphase::new(algorithm, Config::default()));
}

#[test]
fn brute_force_matches_itself_and_is_deterministic() {
    // The oracle against a second oracle: exercises the suite's checks of errors and
    // determinism on the reference itself.
    check(Algorithm::BruteForce);
}

#[test]
fn abp_matches_brute_force() {
    check(Algorithm::Abp);
}

#[test]
fn abp_single_threaded_matches_brute_force() {
    testing::check_algorithm_with(
        || broadphase::new(Algorithm::Abp, Config::default().with_parallel(false)),
        &testing::CheckOptions {
            small_cases: 200,
            large_cases: 100,
            crowd_cases: 8,
        },
    );
}

#[test]
fn abp_with_tiny_columns_matches_brute_force() {
    // Columns of a few boxes each, from the first proxy on: most boxes straddle several
    // columns, so leaving, arriving and the once-per-pair rule are exercised everywhere.
    let settings = broadphase::AbpSettings {
        boxes_per_column: 2,
        min_column_extents: 0.0,
        min_proxies_for_columns: 0,
    };
    testing::check_algorithm(|| {
        Box::new(
            broadphase::Abp::with_settings(Config::default(), settings).expect("valid settings"),
        )
    });
}

/// Found by the `differential` fuzz target: a first-hit query with a NaN box must fail the same
/// way on both sides (the suite's comparison used to treat the two errors as a difference).
#[test]
fn first_hit_query_with_a_nan_box_fails_on_both_sides() {
    use broadphase::testing::{check_sequence, Op, Query};
    let nan_box = broadphase::Aabb::new([f32::NAN, 0.0, 0.0], [f32::NAN, 1.0, 1.0]);
    let ops = [
        Op::Insert(
            broadphase::Aabb::new([0.0; 3], [1.0; 3]),
            broadphase::ProxyDesc::dynamic(),
        ),
        Op::Query(Query::FirstHit(nan_box)),
        Op::Update,
        Op::Query(Query::FirstHit(nan_box)),
    ];
    for &algorithm in Algorithm::ALL {
        let make = || broadphase::new(algorithm, Config::default());
        assert_eq!(check_sequence(&make, &ops), Ok(()), "{algorithm:?}");
    }
}

#[allow(clippy::expect_used)] // a test helper: invalid settings are a bug of the test
fn grid(settings: broadphase::GridSettings, config: Config) -> Box<dyn broadphase::BroadPhase> {
    Box::new(broadphase::Grid::with_settings(config, settings).expect("valid settings"))
}

/// Fewer cases for the variants: each still mixes every kind of call, and the default variant
/// runs the full suite.
const GRID_VARIANT: testing::CheckOptions = testing::CheckOptions {
    small_cases: 300,
    large_cases: 150,
    crowd_cases: 8,
};

#[test]
fn grid_matches_brute_force() {
    check(Algorithm::Grid);
}

#[test]
fn grid_all_at_once_schedule_matches_brute_force() {
    let settings = broadphase::GridSettings {
        schedule: broadphase::Schedule::All,
        ..Default::default()
    };
    testing::check_algorithm_with(|| grid(settings, Config::default()), &GRID_VARIANT);
}

#[test]
fn grid_every_radix_width_matches_brute_force() {
    for (radix_bits, schedule) in [
        (4, broadphase::Schedule::Parity),
        (11, broadphase::Schedule::All),
        (16, broadphase::Schedule::Parity),
    ] {
        let settings = broadphase::GridSettings {
            radix_bits,
            schedule,
            ..Default::default()
        };
        testing::check_algorithm_with(|| grid(settings, Config::default()), &GRID_VARIANT);
    }
}

#[test]
fn grid_with_small_cells_matches_brute_force() {
    // Cells smaller than most boxes: most boxes live on coarser levels, and the finer ones
    // visit them; many boxes straddle buckets. Single-threaded, both schedules.
    for schedule in [broadphase::Schedule::Parity, broadphase::Schedule::All] {
        let settings = broadphase::GridSettings {
            cell_size: Some(0.3),
            schedule,
            ..Default::default()
        };
        testing::check_algorithm_with(
            || grid(settings, Config::default().with_parallel(false)),
            &GRID_VARIANT,
        );
    }
}

#[test]
fn grid_with_large_cells_matches_brute_force() {
    // Few, crowded cells and a torus that wraps: hash collisions between far cells.
    let settings = broadphase::GridSettings {
        cell_size: Some(40.0),
        ..Default::default()
    };
    testing::check_algorithm_with(|| grid(settings, Config::default()), &GRID_VARIANT);
}
