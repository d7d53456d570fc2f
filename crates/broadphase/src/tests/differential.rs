//! Every algorithm against the BruteForce oracle: the shared differential suite.

use broadphase::{testing, Algorithm, BroadPhase, Config, Error, PairEvents};

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
fn brute_force_matches_the_naive_oracle() {
    // The oracle checked against the contract written down again, sharing none of its code:
    // every mutation, error, event, pair and box and point query (the other queries are the
    // naive oracle's mirror of BruteForce, so they agree by construction).
    testing::check_algorithm_against(
        || broadphase::new(Algorithm::BruteForce, Config::default()),
        || Box::new(testing::NaiveOracle::new(Config::default())),
        &testing::CheckOptions::scaled(1000, 500, 16),
    );
}

#[test]
fn abp_matches_brute_force() {
    check(Algorithm::Abp);
}

#[test]
fn abp_single_threaded_matches_brute_force() {
    testing::check_algorithm_with(
        || broadphase::new(Algorithm::Abp, Config::default().with_parallel(false)),
        &testing::CheckOptions::scaled(200, 100, 8),
    );
}

#[test]
fn abp_with_tiny_columns_matches_brute_force() {
    // Columns of a few boxes each, from the first proxy on: most boxes straddle several
    // columns, so leaving, arriving and the once-per-pair rule are exercised everywhere.
    let settings = {
        let mut s = broadphase::AbpSettings::default();
        s.boxes_per_column = 2;
        s.min_column_extents = 0.0;
        s.min_proxies_for_columns = 0;
        s
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

/// Found by the `differential` fuzz target: a sphere far beyond a box with a huge radius (both
/// squares overflow `f32`) and a nearest query; every algorithm must answer as BruteForce, and
/// BruteForce must not report the box.
#[test]
fn far_sphere_with_a_huge_radius_misses_on_every_algorithm() {
    use broadphase::testing::{check_sequence, Op, Query};
    use broadphase::{Aabb, BroadPhase, Group, Layer, LayerMask, ProxyDesc};
    let desc = |fixed: bool, layer: u8| ProxyDesc {
        layer: Layer(layer),
        group: Group(3),
        ..if fixed {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        }
    };
    let ops = [
        Op::Insert(
            Aabb::new([-58.5, 0.0, 0.0], [-58.0, 2.5, 2.0]),
            desc(true, 1),
        ),
        Op::Update,
        Op::Query(Query::Sphere(
            [-58.5, -27.0, -1.701_879e38],
            1.663_879_2e35,
            LayerMask(11),
        )),
        Op::Insert(
            Aabb::new([-39.0, -58.5, 17.0], [-36.5, -57.0, 17.5]),
            desc(false, 1),
        ),
        Op::Query(Query::Nearest([27.0, -58.5, 0.0], 2, LayerMask(11))),
        Op::Update,
        Op::Query(Query::Nearest([0.0, 0.0, 3.0e38], 2, LayerMask::ALL)),
    ];
    for &algorithm in Algorithm::ALL {
        let make = || broadphase::new(algorithm, Config::default());
        assert_eq!(check_sequence(&make, &ops), Ok(()), "{algorithm:?}");
    }
    let mut brute = broadphase::BruteForce::new(Config::default());
    brute
        .insert(
            Aabb::new([-58.5, 0.0, 0.0], [-58.0, 2.5, 2.0]),
            desc(true, 1),
        )
        .expect("valid box");
    let mut hits = 0;
    brute
        .query_sphere(
            [-58.5, -27.0, -1.701_879e38],
            1.663_879_2e35,
            LayerMask::ALL,
            &mut |_| {
                hits += 1;
                std::ops::ControlFlow::Continue(())
            },
        )
        .expect("valid sphere");
    assert_eq!(hits, 0);
}

/// Found by the `differential` fuzz target: a ray whose exit from the world's bounds lies on a
/// flat box at the border. In `f32` the exit point rounded to just short of the box, and Sap,
/// which picks candidates from the segment's bounds, missed it.
#[test]
fn ray_leaving_the_world_through_a_flat_box_hits_it() {
    use broadphase::testing::{check_sequence, Op, Query};
    use broadphase::{Aabb, Group, Layer, LayerMask, ProxyDesc, Ray};
    let layer = |desc: ProxyDesc, group: u32| ProxyDesc {
        layer: Layer(1),
        group: Group(group),
        ..desc
    };
    let ops = [
        Op::Insert(
            Aabb::new([0.0, 0.0, 54.0], [1.0, 0.0, 54.0]),
            layer(ProxyDesc::dynamic(), 0),
        ),
        Op::Update,
        Op::Insert(
            Aabb::new([0.0, 0.0, -58.5], [0.5, 2.0, -56.0]),
            layer(ProxyDesc::fixed(), 2),
        ),
        Op::Update,
        Op::Query(Query::Ray(
            Ray::new([0.0; 3], [0.0, 0.0, 19.0]),
            122.0,
            LayerMask::ALL,
        )),
        Op::Query(Query::Ray(
            Ray::new([0.3, 0.0, -100.0], [0.0, 0.0, 7.0]),
            f32::INFINITY,
            LayerMask::ALL,
        )),
        Op::Update,
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
fn grid_variant() -> testing::CheckOptions {
    testing::CheckOptions::scaled(300, 150, 8)
}

#[test]
fn grid_matches_brute_force() {
    check(Algorithm::Grid);
}

#[test]
fn grid_all_at_once_schedule_matches_brute_force() {
    let settings = {
        let mut s = broadphase::GridSettings::default();
        s.schedule = broadphase::Schedule::All;
        s
    };
    testing::check_algorithm_with(|| grid(settings, Config::default()), &grid_variant());
}

#[test]
fn grid_every_radix_width_matches_brute_force() {
    for (radix_bits, schedule) in [
        (4, broadphase::Schedule::Parity),
        (11, broadphase::Schedule::All),
        (16, broadphase::Schedule::Parity),
    ] {
        let settings = {
            let mut s = broadphase::GridSettings::default();
            s.radix_bits = radix_bits;
            s.schedule = schedule;
            s
        };
        testing::check_algorithm_with(|| grid(settings, Config::default()), &grid_variant());
    }
}

#[test]
fn grid_sorting_every_entry_every_update_matches_brute_force() {
    // The chapter's way: no box keeps its entries from the last update.
    for schedule in [broadphase::Schedule::Parity, broadphase::Schedule::All] {
        let settings = {
            let mut s = broadphase::GridSettings::default();
            s.keep_cells = false;
            s.schedule = schedule;
            s
        };
        testing::check_algorithm_with(|| grid(settings, Config::default()), &grid_variant());
    }
}

#[test]
fn grid_with_small_cells_matches_brute_force() {
    // Cells smaller than most boxes: most boxes live on coarser levels, and the finer ones
    // visit them; many boxes straddle buckets. Single-threaded, both schedules, each with
    // half a variant's cases (the slowest test of the suite with a whole variant each).
    let half = testing::CheckOptions::scaled(150, 75, 4);
    for schedule in [broadphase::Schedule::Parity, broadphase::Schedule::All] {
        let settings = {
            let mut s = broadphase::GridSettings::default();
            s.cell_size = Some(0.3);
            s.schedule = schedule;
            s
        };
        testing::check_algorithm_with(
            || grid(settings, Config::default().with_parallel(false)),
            &half,
        );
    }
}

#[test]
fn grid_with_large_cells_matches_brute_force() {
    // Few, crowded cells and a torus that wraps: hash collisions between far cells.
    let settings = {
        let mut s = broadphase::GridSettings::default();
        s.cell_size = Some(40.0);
        s
    };
    testing::check_algorithm_with(|| grid(settings, Config::default()), &grid_variant());
}

#[test]
fn sap_matches_brute_force() {
    check(Algorithm::Sap);
}

#[test]
fn sap_variants_match_brute_force() {
    // Boxes asleep after one still update (the asleep lists and their stale entries in every
    // sequence), single-threaded; never asleep (the awake arrays alone); and every move
    // treated as a jump (re-inserted and paired by box pruning).
    let options = testing::CheckOptions::scaled(500, 250, 12);
    for (settings, parallel) in [
        (
            {
                let mut s = broadphase::SapSettings::default();
                s.sleep_after = Some(1);
                s.far_move = u32::MAX;
                s
            },
            false,
        ),
        (
            {
                let mut s = broadphase::SapSettings::default();
                s.sleep_after = None;
                s.far_move = u32::MAX;
                s
            },
            true,
        ),
        (
            {
                let mut s = broadphase::SapSettings::default();
                s.sleep_after = Some(1);
                s.far_move = 0;
                s
            },
            true,
        ),
    ] {
        testing::check_algorithm_with(
            || {
                Box::new(broadphase::Sap::with_settings(
                    Config::default().with_parallel(parallel),
                    settings,
                ))
            },
            &options,
        );
    }
}

/// The cases the sweep-and-prune is most likely to get wrong, as one scripted sequence checked
/// against BruteForce after every update: thousands of boxes on a lattice (so that many touch
/// at exactly equal coordinates) inserted in one batch, boxes sliding into contact, most boxes
/// at rest (asleep) while others move among them, half of them removed and thousands inserted
/// in one update, and origin shifts, one large enough to round coordinates.
#[test]
fn sap_large_batches_touching_boxes_and_shifts() {
    use broadphase::testing::{check_sequence, Op, Pick};
    use broadphase::{Aabb, ProxyDesc};

    let lattice = |n: usize, offset: f32| -> Vec<(Aabb, ProxyDesc)> {
        (0..n)
            .map(|i| {
                // Unit cubes touching face to face on y, half a unit apart on x: a nudge of
                // half a unit on x brings two into exact contact or out of it.
                let (x, y, z) = ((i % 40) as f32, ((i / 40) % 40) as f32, (i / 1600) as f32);
                let min = [1.5 * x + offset, y, 2.0 * z];
                let desc = if i % 7 == 0 {
                    ProxyDesc::fixed()
                } else {
                    ProxyDesc::dynamic()
                };
                (
                    Aabb::new(min, [min[0] + 1.0, min[1] + 1.0, min[2] + 1.0]),
                    desc,
                )
            })
            .collect()
    };
    let mut ops = vec![Op::InsertBatch(lattice(4000, 0.0)), Op::Update, Op::Update];
    for frame in 0..6 {
        // A few boxes slide by half a unit: into and out of exact contact.
        for k in 0..200 {
            let step = if frame % 2 == 0 { 0.5 } else { -0.5 };
            ops.push(Op::Nudge(Pick(k * 17 + frame), [step, 0.0, 0.0]));
        }
        ops.push(Op::Update);
    }
    for k in 0..2000 {
        ops.push(Op::Remove(Pick(k * 3)));
    }
    ops.push(Op::InsertBatch(lattice(3000, 0.5)));
    ops.push(Op::Update);
    ops.push(Op::ShiftOrigin([0.5, -1.0, 0.0]));
    ops.push(Op::Update);
    ops.push(Op::ShiftOrigin([3.0e6, 0.0, -3.0e6]));
    ops.push(Op::Update);
    for k in 0..100 {
        ops.push(Op::Nudge(Pick(k * 31), [0.0, 0.5, 0.0]));
    }
    ops.push(Op::Update);
    for parallel in [true, false] {
        let make = || broadphase::new(Algorithm::Sap, Config::default().with_parallel(parallel));
        if let Err(e) = check_sequence(&make, &ops) {
            panic!("{e}");
        }
    }
}

#[test]
fn mbp_matches_brute_force() {
    check(Algorithm::Mbp);
}

#[test]
fn mbp_single_threaded_matches_brute_force() {
    testing::check_algorithm_with(
        || broadphase::new(Algorithm::Mbp, Config::default().with_parallel(false)),
        &testing::CheckOptions::scaled(200, 100, 8),
    );
}

#[test]
fn mbp_with_tiny_derived_regions_and_cells_matches_brute_force() {
    // Regions of a few boxes each (up to 16 × 16 of them) cut into cells of a couple of
    // boxes: most boxes straddle regions and cells, so homes across regions, re-cuts and
    // re-layouts are exercised everywhere. Half the suite's cases: the default Mbp runs the
    // whole suite, and this variant's tiny cells make it the suite's slowest per case.
    let tuning = {
        let mut s = broadphase::MbpTuning::default();
        s.boxes_per_region = 4;
        s.cells = {
            let mut s = broadphase::AbpSettings::default();
            s.boxes_per_column = 2;
            s.min_column_extents = 0.0;
            s.min_proxies_for_columns = 0;
            s
        };
        s
    };
    testing::check_algorithm_with(
        || Box::new(broadphase::Mbp::with_tuning(Config::default(), tuning).expect("valid tuning")),
        &testing::CheckOptions::scaled(1000, 500, 24),
    );
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
        &testing::CheckOptions::scaled(800, 300, 16),
    );
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
    let settings = {
        let mut s = broadphase::QuadTreeSettings::default();
        s.layer_groups = vec![
            broadphase::LayerMask::of(broadphase::Layer(1)),
            broadphase::LayerMask::ALL,
        ];
        s.rebuild_depth = 3;
        s.rebuild_cost = 0.0;
        s
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
        &testing::CheckOptions::scaled(600, 300, 24),
    );
}

/// Delegates the trait's required methods to Abp and keeps its provided ones: the default
/// `set_aabbs` and `remove_batch`, which outside implementations inherit, must keep the same
/// contract (all or nothing) as the store's own.
struct Defaults(Box<dyn BroadPhase>);

impl BroadPhase for Defaults {
    forward_all_but_update!(0);

    fn update(&mut self) -> Result<&PairEvents, Error> {
        self.0.update()
    }
}

#[test]
fn the_traits_default_batch_methods_match_brute_force() {
    testing::check_algorithm_with(
        || Box::new(Defaults(broadphase::new(Algorithm::Abp, Config::default()))),
        &testing::CheckOptions::scaled(200, 50, 4),
    );
}

/// Found by the differential suite (Abp with tiny columns, in CI): a box set back from near
/// `-f32::MAX` and shifted there again left the union of the boxes set since the update at
/// `-inf`; it became the world's bounds, and Abp's ray query skipped its only column as
/// invalid. The world's bounds stay finite after any accepted shift.
#[test]
fn shifting_a_box_back_past_the_float_range_keeps_the_world_finite() {
    use broadphase::testing::{check_sequence, Op, Pick, Query};
    use broadphase::{Aabb, LayerMask, ProxyDesc, Ray};
    let point = Aabb::new([0.0; 3], [0.0; 3]);
    let ops = [
        Op::Insert(point, ProxyDesc::dynamic()),
        Op::BadShift(3),
        Op::SetAabb(Pick(0), point),
        Op::BadShift(3),
        Op::InsertBatch(vec![(
            Aabb::new([-1e33; 3], [1e33; 3]),
            ProxyDesc::dynamic(),
        )]),
        Op::Update,
        Op::Query(Query::Ray(
            Ray::new([0.0; 3], [0.0; 3]),
            0.0,
            LayerMask::ALL,
        )),
        Op::Query(Query::Ray(
            Ray::new([0.0; 3], [1.0, 0.0, 0.0]),
            f32::INFINITY,
            LayerMask::ALL,
        )),
        Op::Update,
    ];
    let tiny_columns = {
        let mut s = broadphase::AbpSettings::default();
        s.boxes_per_column = 2;
        s.min_column_extents = 0.0;
        s.min_proxies_for_columns = 0;
        s
    };
    let make = || -> Box<dyn broadphase::BroadPhase> {
        Box::new(broadphase::Abp::with_settings(Config::default(), tiny_columns).expect("valid"))
    };
    assert_eq!(check_sequence(&make, &ops), Ok(()), "Abp, tiny columns");
    for &algorithm in Algorithm::ALL {
        let make = || broadphase::new(algorithm, Config::default());
        assert_eq!(check_sequence(&make, &ops), Ok(()), "{algorithm:?}");
    }
}

/// A world box that leaves part of both of the suite's worlds out: boxes left of x = -1 or
/// above y = 6 (in the small world, about a third; in the large one, three quarters).
fn bounded() -> Config {
    let world = broadphase::Aabb::new([-1.0, -1.0e4, -1.0e30], [1.0e4, 6.0, 1.0e30]);
    Config::default().with_world_bounds(world)
}

#[test]
fn every_algorithm_with_world_bounds_matches_the_naive_oracle() {
    // Proxies leave and re-enter the world as they move, are inserted and removed outside
    // it, and the world shifts with the origin; the naive oracle pairs only the proxies in it.
    for &algorithm in Algorithm::ALL {
        testing::check_algorithm_against(
            || broadphase::new(algorithm, bounded()),
            || Box::new(testing::NaiveOracle::new(bounded())),
            &testing::CheckOptions::scaled(300, 150, 6),
        );
    }
}
