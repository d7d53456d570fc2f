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
fn mbp_matches_brute_force() {
    check(Algorithm::Mbp);
}

#[test]
fn mbp_single_threaded_matches_brute_force() {
    testing::check_algorithm_with(
        || broadphase::new(Algorithm::Mbp, Config::default().with_parallel(false)),
        &testing::CheckOptions {
            small_cases: 200,
            large_cases: 100,
            crowd_cases: 8,
        },
    );
}

#[test]
fn mbp_with_tiny_derived_regions_and_cells_matches_brute_force() {
    // Regions of a few boxes each (up to 16 × 16 of them) cut into cells of a couple of
    // boxes: most boxes straddle regions and cells, so homes across regions, re-cuts and
    // re-layouts are exercised everywhere.
    let tuning = broadphase::MbpTuning {
        boxes_per_region: 4,
        cells: broadphase::AbpSettings {
            boxes_per_column: 2,
            min_column_extents: 0.0,
            min_proxies_for_columns: 0,
        },
    };
    testing::check_algorithm(|| {
        Box::new(broadphase::Mbp::with_tuning(Config::default(), tuning).expect("valid tuning"))
    });
}

#[test]
fn mbp_with_added_regions_covering_everything_matches_brute_force() {
    // Four added regions that reach to infinity and tile all of space, and two more
    // overlapping them: nothing is ever out of bounds, and two overlapping boxes always touch
    // a common region, so the pairs are BruteForce's. Origin shifts move the regions.
    testing::check_algorithm_with(
        || {
            let (lo, hi) = (f32::NEG_INFINITY, f32::INFINITY);
            let mut mbp = broadphase::Mbp::with_settings(
                Config::default(),
                &broadphase::MbpSettings::new(broadphase::Aabb::new([-1.0; 3], [1.0; 3]), 1),
            )
            .expect("valid");
            let first = mbp.region_ids()[0];
            mbp.remove_region(first).expect("live");
            for r in [
                broadphase::Aabb::new([lo, lo, lo], [0.0, hi, 0.0]),
                broadphase::Aabb::new([0.0, lo, lo], [hi, hi, 0.0]),
                broadphase::Aabb::new([lo, lo, 0.0], [0.0, hi, hi]),
                broadphase::Aabb::new([0.0, lo, 0.0], [hi, hi, hi]),
                broadphase::Aabb::new([-1.0, -1.0, -1.0], [4.0, 4.0, 4.0]),
                broadphase::Aabb::new([2.0, lo, 2.0], [6.0, hi, 6.0]),
            ] {
                mbp.add_region(r, false).expect("room for regions");
            }
            Box::new(mbp)
        },
        &testing::CheckOptions {
            small_cases: 800,
            large_cases: 300,
            crowd_cases: 16,
        },
    );
}
