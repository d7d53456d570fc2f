//! Auto's choices on scenes built to fall under each rule, its hysteresis, and its switches
//! against the oracle. (The differential suite with switches forced mid-sequence is in
//! `crate::tests::auto`.)

use crate::testing::SplitMix64;
use crate::{Aabb, Algorithm, Auto, AutoSettings, BroadPhase, Config, Figures, ProxyDesc, Reason};

fn figures(bp: &Auto) -> crate::AutoFigures {
    match bp.stats().figures {
        Figures::Auto(f) => f,
        other => panic!("not Auto's figures: {other:?}"),
    }
}

/// `n` unit-ish boxes spread evenly over a cube sized for about `overlaps` pairs a box.
fn spread(bp: &mut Auto, rng: &mut SplitMix64, n: usize, fixed: impl Fn(usize) -> bool) {
    let side = (n as f64 * 8.0).cbrt() as u64 * 2;
    for k in 0..n {
        let lo = [0, 1, 2].map(|_| rng.below(side * 100) as f32 / 100.0);
        let desc = if fixed(k) {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        };
        bp.insert(Aabb::new(lo, lo.map(|c| c + 1.0)), desc)
            .expect("valid box");
    }
}

/// The boxes and descriptions `bp` holds, slot by slot, to insert elsewhere.
fn boxes_of(bp: &Auto) -> Vec<(Aabb, ProxyDesc)> {
    (0..bp.len())
        .map(|s| {
            let id = bp.store().id_at(s);
            (bp.aabb(id).expect("live"), bp.desc(id).expect("live"))
        })
        .collect()
}

/// Moves every `every`-th live proxy by a small step.
fn stir(bp: &mut Auto, rng: &mut SplitMix64, every: usize) {
    let n = bp.len();
    let mut moves = Vec::new();
    for slot in (0..n).step_by(every) {
        let id = bp.store().id_at(slot);
        if let Ok(b) = bp.aabb(id) {
            let step = [0, 1, 2].map(|_| (rng.below(3) as f32 - 1.0) * 0.05);
            moves.push((id, b.translated(step)));
        }
    }
    bp.set_aabbs(&moves).expect("valid moves");
}

#[test]
fn a_moving_crowd_runs_on_abp_and_a_level_on_quadtree() {
    let mut rng = SplitMix64::new(1);
    let mut moving = Auto::new(Config::default());
    spread(&mut moving, &mut rng, 2_000, |_| false);
    moving.update().expect("update");
    let f = figures(&moving);
    assert_eq!((f.running, f.reason), (Algorithm::Abp, Reason::Moving));

    let mut level = Auto::new(Config::default());
    // 2% dynamic: before any motion is seen, each is assumed to move.
    spread(&mut level, &mut rng, 25_000, |k| k % 50 != 0);
    level.update().expect("update");
    let f = figures(&level);
    assert_eq!(
        (f.running, f.reason),
        (Algorithm::QuadTree, Reason::FixedLevel)
    );
    assert_eq!(f.switches, 0, "the first choice is no switch");
    assert!(f.measures.fixed_share > 0.9);
}

#[test]
fn a_scene_that_comes_to_rest_switches_after_the_hold_and_not_before() {
    let mut rng = SplitMix64::new(2);
    let settings = AutoSettings {
        hold: 5,
        ..AutoSettings::default()
    };
    let mut bp = Auto::with_settings(Config::default(), settings);
    spread(&mut bp, &mut rng, 3_000, |_| false);
    bp.update().expect("update");
    for _ in 0..3 {
        stir(&mut bp, &mut rng, 1);
        bp.update().expect("update");
    }
    assert_eq!(bp.running(), Algorithm::Abp);
    // Now a twentieth of the boxes move: a step down from every box moving, so the running
    // mean restarts at a twentieth and the rules say Sap at once, but the choice must hold
    // five updates in a row (frames 0 to 4) before it is taken.
    let mut first_sap = None;
    for frame in 0..40 {
        stir(&mut bp, &mut rng, 20);
        bp.update().expect("update");
        bp.check_structure().expect("consistent");
        if bp.running() == Algorithm::Sap && first_sap.is_none() {
            first_sap = Some(frame);
        }
    }
    let f = figures(&bp);
    assert_eq!(
        (f.running, f.reason),
        (Algorithm::Sap, Reason::MostlyResting)
    );
    assert_eq!(f.switches, 1, "one switch, no flicker");
    assert!(
        first_sap.is_some_and(|f| f >= 4),
        "switched at {first_sap:?}"
    );
}

#[test]
fn a_mass_spawn_switches_at_once_in_place() {
    for background in [false, true] {
        let mut settings = AutoSettings::default();
        if !background {
            settings.background_from = usize::MAX;
        }
        let mut rng = SplitMix64::new(3);
        let mut bp = Auto::with_settings(Config::default(), settings);
        let mut reference = crate::Abp::new(Config::default());
        let both = |rng: &mut SplitMix64,
                    bp: &mut Auto,
                    reference: &mut crate::Abp,
                    n: usize,
                    fixed: bool| {
            let mut fresh = Auto::with_settings(Config::default(), AutoSettings::default());
            spread(&mut fresh, rng, n, |_| fixed);
            let items = boxes_of(&fresh);
            bp.insert_batch(&items).expect("valid");
            reference.insert_batch(&items).expect("valid");
        };
        both(&mut rng, &mut bp, &mut reference, 2_000, false);
        assert_eq!(bp.update().cloned(), reference.update().cloned());
        // A level of fixed boxes streams in: fourteen times the proxies, in one update.
        both(&mut rng, &mut bp, &mut reference, 28_000, true);
        let mut switched_at = None;
        for frame in 0..20 {
            if frame > 0 {
                let moves: Vec<_> = (0..2_000)
                    .step_by(3)
                    .map(|s| {
                        let id = reference.store().id_at(s);
                        let b = reference.aabb(id).expect("live");
                        (id, b.translated([0.3, 0.0, 0.0]))
                    })
                    .collect();
                bp.set_aabbs(&moves).expect("valid");
                reference.set_aabbs(&moves).expect("valid");
            }
            let got = bp.update().expect("update").clone();
            let want = reference.update().expect("update").clone();
            assert_eq!(got, want, "frame {frame}");
            bp.check_structure().expect("consistent");
            if bp.running() == Algorithm::QuadTree && switched_at.is_none() {
                switched_at = Some(frame);
            }
        }
        // In place at the spawn's update, with background builds allowed or not: the spawn
        // changed more than half the proxies, which is nearly a build for any engine.
        assert_eq!(switched_at, Some(0), "background: {background}");
        let f = figures(&bp);
        assert_eq!(
            (f.running, f.reason, f.switches),
            (Algorithm::QuadTree, Reason::FixedLevel, 1)
        );
        assert_eq!(sorted(bp.pairs()), sorted(reference.pairs()));
    }
}

#[test]
fn a_spawn_into_a_resting_level_switches_at_once() {
    // 24,000 fixed boxes at rest (a level: QuadTree), then 16,000 dynamic ones spawned among
    // them that move every update: 40% of the proxies change, under a mass change's half,
    // but a step from a mean near nothing. Smoothed, the mean would still say "resting" and
    // choose Sap; restarted, it says "moving" at the spawn's own update.
    let mut rng = SplitMix64::new(6);
    let mut source = Auto::new(Config::default());
    spread(&mut source, &mut rng, 40_000, |k| k < 24_000);
    let items = boxes_of(&source);
    let (level, spawn) = items.split_at(24_000);
    let mut bp = Auto::new(Config::default());
    let mut reference = crate::Abp::new(Config::default());
    bp.insert_batch(level).expect("valid");
    reference.insert_batch(level).expect("valid");
    for _ in 0..4 {
        assert_eq!(bp.update().cloned(), reference.update().cloned());
    }
    assert_eq!(figures(&bp).reason, Reason::FixedLevel);
    let spawned = bp.insert_batch(spawn).expect("valid");
    reference.insert_batch(spawn).expect("valid");
    for frame in 0..6 {
        if frame > 0 {
            let moves: Vec<_> = spawned
                .iter()
                .map(|&id| (id, bp.aabb(id).expect("live").translated([0.0, -0.05, 0.0])))
                .collect();
            bp.set_aabbs(&moves).expect("valid");
            reference.set_aabbs(&moves).expect("valid");
        }
        let got = bp.update().expect("update").clone();
        assert_eq!(
            got,
            reference.update().expect("update").clone(),
            "frame {frame}"
        );
        let f = figures(&bp);
        assert_eq!(
            (f.running, f.reason, f.switches),
            (Algorithm::Abp, Reason::Moving, 1),
            "frame {frame}: {:?}",
            f.measures
        );
    }
    bp.check_structure().expect("consistent");
}

fn sorted(pairs: &[crate::Pair]) -> Vec<crate::Pair> {
    let mut v = pairs.to_vec();
    v.sort_unstable();
    v
}

#[test]
fn pinning_switches_at_the_next_update_and_unpinning_chooses_again() {
    let mut rng = SplitMix64::new(4);
    let mut bp = Auto::new(Config::default());
    spread(&mut bp, &mut rng, 500, |_| false);
    bp.update().expect("update");
    let pairs = bp.pairs().to_vec();
    for algorithm in [Algorithm::Sap, Algorithm::Grid, Algorithm::BruteForce] {
        bp.pin(Some(algorithm)).expect("valid");
        assert!(
            bp.update().expect("update").is_empty(),
            "no event from a switch"
        );
        assert_eq!(bp.pairs(), pairs);
        let f = figures(&bp);
        assert_eq!((f.running, f.reason), (algorithm, Reason::Pinned));
        bp.check_structure().expect("consistent");
    }
    assert!(bp.pin(Some(Algorithm::Auto)).is_err());
    // Unpinned, it chooses from the measures at once (the pinned updates moved nothing:
    // a resting scene), then follows the scene as it starts to move.
    bp.pin(None).expect("valid");
    bp.update().expect("update");
    assert_eq!(figures(&bp).reason, Reason::MostlyResting);
    for _ in 0..30 {
        stir(&mut bp, &mut rng, 1);
        bp.update().expect("update");
    }
    let f = figures(&bp);
    assert_eq!((f.running, f.reason), (Algorithm::Abp, Reason::Moving));
    assert_eq!(
        f.switches, 5,
        "three pins, the unpinned choice, the move to Abp"
    );
}

#[test]
fn the_clustering_index_tells_clusters_from_an_even_spread() {
    let mut rng = SplitMix64::new(5);
    let mut even = Auto::new(Config::default());
    spread(&mut even, &mut rng, 5_000, |_| false);
    even.update().expect("update");
    let c = figures(&even).measures.clustering;
    assert!((0.8..1.3).contains(&c), "even spread: {c}");

    let mut clusters = Auto::new(Config::default());
    for k in 0..5_000 {
        // Ten tight clusters far apart.
        let centre = (k % 10) as f32 * 100.0;
        let lo = [0, 1, 2].map(|_| centre + rng.below(500) as f32 / 100.0);
        clusters
            .insert(Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::dynamic())
            .expect("valid");
    }
    clusters.update().expect("update");
    let c = figures(&clusters).measures.clustering;
    assert!(c > 4.0, "ten clusters: {c}");
}

/// Sets `reference`'s boxes (inserted in `bp`'s slot order) to `bp`'s.
fn follow(bp: &Auto, reference: &mut crate::Abp) {
    let moves: Vec<_> = (0..bp.len())
        .map(|s| {
            let id = bp.store().id_at(s);
            (reference.store().id_at(s), bp.aabb(id).expect("live"))
        })
        .collect();
    reference.set_aabbs(&moves).expect("valid");
}

/// Updates from the decision to a background switch of 5,000 proxies: the default 16, or
/// none without threads, where every switch is made in place at the update that decides.
fn background_updates() -> usize {
    if Config::default().use_threads() {
        16
    } else {
        0
    }
}

#[test]
fn a_background_switch_goes_in_a_count_of_updates_after_it_is_decided() {
    // 5,000 proxies (a background build from 4,000), a pin to Sap before update `decided`:
    // the snapshot is that update's store, and Sap goes in 16 updates later, on every machine
    // however fast its thread; every update's events are Abp's.
    let mut rng = SplitMix64::new(7);
    let mut bp = Auto::new(Config::default());
    spread(&mut bp, &mut rng, 5_000, |_| false);
    let mut reference = crate::Abp::new(Config::default());
    reference.insert_batch(&boxes_of(&bp)).expect("valid");
    let decided = 3;
    let mut switched_at = None;
    for update in 0..30 {
        if update > 0 {
            stir(&mut bp, &mut rng, 2);
            follow(&bp, &mut reference);
        }
        if update == decided {
            bp.pin(Some(Algorithm::Sap)).expect("not Auto");
        }
        let got = bp.update().expect("update").clone();
        let want = reference.update().expect("update").clone();
        assert_eq!(got, want, "update {update}");
        bp.check_structure().expect("consistent");
        if bp.running() == Algorithm::Sap && switched_at.is_none() {
            switched_at = Some(update);
        }
    }
    assert_eq!(switched_at, Some(decided + background_updates()));
    assert_eq!(figures(&bp).switches, 1);
    assert_eq!(sorted(bp.pairs()), sorted(reference.pairs()));
}

#[test]
fn a_scene_coming_to_rest_switches_in_the_background_with_its_thread_started_early() {
    // 5,000 proxies every one of which moves, then one in twenty: the rules say Sap at once,
    // the choice holds five updates (frames 0 to 4), the build's thread starts two updates
    // before that and readies the snapshot's memory, and Sap goes in 16 updates after the
    // decision. Every update's events are Abp's.
    let mut rng = SplitMix64::new(11);
    let settings = AutoSettings {
        hold: 5,
        ..AutoSettings::default()
    };
    let mut bp = Auto::with_settings(Config::default(), settings);
    spread(&mut bp, &mut rng, 5_000, |_| false);
    let mut reference = crate::Abp::new(Config::default());
    reference.insert_batch(&boxes_of(&bp)).expect("valid");
    for warm_up in 0..4 {
        if warm_up > 0 {
            stir(&mut bp, &mut rng, 1);
            follow(&bp, &mut reference);
        }
        assert_eq!(
            bp.update().expect("update"),
            reference.update().expect("update")
        );
    }
    let mut first_sap = None;
    for frame in 0..30 {
        stir(&mut bp, &mut rng, 20);
        follow(&bp, &mut reference);
        let got = bp.update().expect("update").clone();
        assert_eq!(&got, reference.update().expect("update"), "frame {frame}");
        bp.check_structure().expect("consistent");
        if bp.running() == Algorithm::Sap && first_sap.is_none() {
            first_sap = Some(frame);
        }
    }
    assert_eq!(first_sap, Some(4 + background_updates()));
    assert_eq!(figures(&bp).switches, 1);
    assert_eq!(sorted(bp.pairs()), sorted(reference.pairs()));
}
