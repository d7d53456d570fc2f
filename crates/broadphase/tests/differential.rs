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

#[test]
fn quadtree_matches_brute_force() {
    check(Algorithm::QuadTree);
}

#[test]
fn quadtree_with_every_maintenance_matches_brute_force() {
    // Two layer groups (four trees), Jolt's partial rebuild at every bulk update, and a
    // rebuild from scratch whenever a walk costs more than after the last build: the paths
    // the defaults take only in long runs.
    let settings = broadphase::QuadTreeSettings {
        layer_groups: vec![
            broadphase::LayerMask::of(broadphase::Layer(1)),
            broadphase::LayerMask::ALL,
        ],
        rebuild_depth: 3,
        rebuild_cost: 0.0,
    };
    testing::check_algorithm_with(
        || {
            Box::new(
                broadphase::QuadTree::with_settings(
                    Config::default().with_parallel(false),
                    settings.clone(),
                )
                .expect("valid settings"),
            )
        },
        &testing::CheckOptions {
            small_cases: 600,
            large_cases: 300,
            crowd_cases: 24,
        },
    );
}
