//! Huge and degenerate data, limits and threads, for every algorithm: nothing lost, nothing
//! crashes, memory stays proportional.

use std::ops::ControlFlow;

use broadphase::testing::SplitMix64;
use broadphase::{
    Aabb, Algorithm, BroadPhase, BruteForce, Config, Error, LayerMask, Pair, ProxyDesc, ProxyId,
    Ray, MAX_PROXIES,
};

/// Every algorithm of this build, BruteForce included.
fn algorithms() -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL.iter().copied()
}

/// A deterministic scatter of `n` boxes of size 0.5..2 in a cube sized for about one
/// neighbour each.
fn scatter(n: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let mut next = move || f64::from(rng.unit());
    let side = 2.5 * (n as f64).cbrt();
    (0..n)
        .map(|_| {
            let min = [0; 3].map(|_| (next() * side) as f32);
            let size = [0; 3].map(|_| (0.5 + 1.5 * next()) as f32);
            Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
        })
        .collect()
}

fn sorted(pairs: &[Pair]) -> Vec<Pair> {
    let mut v = pairs.to_vec();
    v.sort_unstable();
    v
}

/// Inserts `boxes` into a fresh broad phase and into BruteForce, updates both, and checks the
/// created events agree.
fn check_against_brute(algorithm: Algorithm, boxes: &[Aabb]) -> Result<(), Error> {
    let items: Vec<(Aabb, ProxyDesc)> = boxes.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
    let mut bp = broadphase::new(algorithm, Config::default());
    let mut oracle = BruteForce::new(Config::default());
    bp.insert_batch(&items)?;
    oracle.insert_batch(&items)?;
    let got = bp.update()?.created().to_vec();
    let want = oracle.update()?.created().to_vec();
    assert_eq!(got.len(), want.len(), "{algorithm:?}");
    assert!(
        got == want,
        "{algorithm:?}: created pairs differ from BruteForce"
    );
    assert_eq!(sorted(bp.pairs()), oracle.pairs(), "{algorithm:?}");
    Ok(())
}

#[test]
fn a_box_spanning_the_float_range_among_ordinary_ones() -> Result<(), Error> {
    let mut boxes = scatter(6_000, 1);
    boxes.push(Aabb::new([-1e30; 3], [1e30; 3]));
    boxes.push(Aabb::new([-3e38, 0.0, 0.0], [3e38, 1.0, 1.0]));
    for algorithm in algorithms() {
        check_against_brute(algorithm, &boxes)?;
    }
    Ok(())
}

#[test]
fn all_boxes_at_one_point() -> Result<(), Error> {
    let boxes = vec![Aabb::point([3.0, -2.0, 7.5]); 1_500];
    for algorithm in algorithms() {
        check_against_brute(algorithm, &boxes)?;
    }
    Ok(())
}

#[test]
fn five_thousand_boxes_all_overlapping() -> Result<(), Error> {
    // 12,497,500 pairs. Each algorithm must hold them all; BruteForce is not needed to know
    // the answer.
    let n = 5_000usize;
    let items: Vec<(Aabb, ProxyDesc)> = (0..n)
        .map(|i| {
            let d = (i % 97) as f32 * 0.01;
            (Aabb::new([-1.0 - d; 3], [1.0 + d; 3]), ProxyDesc::dynamic())
        })
        .collect();
    for algorithm in algorithms().filter(|&a| a != Algorithm::BruteForce) {
        let mut bp = broadphase::new(algorithm, Config::default());
        bp.insert_batch(&items)?;
        let created = bp.update()?.created().len();
        assert_eq!(created, n * (n - 1) / 2, "{algorithm:?}");
        assert_eq!(bp.pairs().len(), n * (n - 1) / 2, "{algorithm:?}");
        // Memory proportional to the pairs: well under 200 bytes a pair.
        let bytes = bp.stats().memory_bytes;
        assert!(
            bytes < 200 * created,
            "{algorithm:?}: {bytes} bytes for {created} pairs"
        );
        // Moving one box keeps everything; removing it deletes its n - 1 pairs.
        let ids: Vec<ProxyId> = bp.pairs().iter().take(1).map(|p| p.a).collect();
        bp.set_aabb(ids[0], Aabb::new([-0.5; 3], [0.5; 3]))?;
        assert!(bp.update()?.is_empty(), "{algorithm:?}");
        bp.remove(ids[0])?;
        assert_eq!(bp.update()?.deleted().len(), n - 1, "{algorithm:?}");
    }
    Ok(())
}

#[test]
fn a_box_moving_away_forever_keeps_memory_bounded() -> Result<(), Error> {
    for algorithm in algorithms() {
        let mut bp = broadphase::new(algorithm, Config::default());
        let items: Vec<(Aabb, ProxyDesc)> = scatter(2_000, 2)
            .into_iter()
            .map(|b| (b, ProxyDesc::dynamic()))
            .collect();
        bp.insert_batch(&items)?;
        let runner = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
        bp.update()?;
        let mut x = 1.0f32;
        let mut peak = 0;
        for frame in 0..300 {
            // Doubling every frame reaches 1e38 and then stays at the edge of the range.
            x = (x * 2.0).min(1e38);
            bp.set_aabb(runner, Aabb::new([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]))?;
            bp.update()?;
            let bytes = bp.stats().memory_bytes;
            if frame == 50 {
                peak = bytes;
            } else if frame > 50 {
                assert!(
                    bytes <= peak * 2 + 4096,
                    "{algorithm:?}: {bytes} bytes, was {peak}"
                );
            }
        }
        assert!(
            bp.pairs().iter().all(|p| !p.contains(runner)),
            "{algorithm:?}"
        );
    }
    Ok(())
}

#[test]
fn capacity_is_an_error_not_an_abort() -> Result<(), Error> {
    assert_eq!(MAX_PROXIES, 1 << 24);
    for algorithm in algorithms() {
        let mut bp = broadphase::new(algorithm, Config::default().with_max_proxies(3));
        let b = Aabb::new([0.0; 3], [1.0; 3]);
        for _ in 0..3 {
            bp.insert(b, ProxyDesc::dynamic())?;
        }
        assert_eq!(
            bp.insert(b, ProxyDesc::dynamic()),
            Err(Error::CapacityExceeded { limit: 3 }),
            "{algorithm:?}"
        );
        // A batch that would cross the limit inserts nothing.
        let mut small = broadphase::new(algorithm, Config::default().with_max_proxies(4));
        small.insert(b, ProxyDesc::dynamic())?;
        let batch = vec![(b, ProxyDesc::dynamic()); 4];
        assert!(matches!(
            small.insert_batch(&batch),
            Err(Error::CapacityExceeded { .. })
        ));
        assert_eq!(small.len(), 1, "{algorithm:?}");
        assert_eq!(bp.update()?.created().len(), 3, "{algorithm:?}");
    }
    Ok(())
}

#[test]
fn a_batch_with_one_bad_box_inserts_nothing() -> Result<(), Error> {
    for algorithm in algorithms() {
        let mut bp = broadphase::new(algorithm, Config::default());
        let good = (Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic());
        let bad = (Aabb::new([0.0; 3], [f32::NAN; 3]), ProxyDesc::dynamic());
        assert!(matches!(
            bp.insert_batch(&[good, good, bad]),
            Err(Error::NonFiniteAabb { .. })
        ));
        assert_eq!(bp.len(), 0, "{algorithm:?}");
        assert!(bp.update()?.is_empty());
        // The next id is the first one, as if nothing had happened.
        assert_eq!(bp.insert(good.0, good.1)?, ProxyId::from_raw_parts(0, 0));
    }
    Ok(())
}

/// Every concrete type can be queried from many threads at once.
#[test]
fn queries_from_several_threads_at_once() -> Result<(), Error> {
    let boxes = scatter(4_000, 3);
    let items: Vec<(Aabb, ProxyDesc)> = boxes.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
    let probes: Vec<Aabb> = scatter(64, 4).iter().map(|b| b.inflated(2.0)).collect();
    let mut oracle = BruteForce::new(Config::default());
    oracle.insert_batch(&items)?;
    oracle.update()?;
    let expect = |bp: &dyn BroadPhase, q: &Aabb| -> Vec<ProxyId> {
        let mut hits = Vec::new();
        let _ = bp.query_aabb(*q, LayerMask::ALL, &mut |id| {
            hits.push(id);
            ControlFlow::Continue(())
        });
        hits.sort_unstable();
        hits
    };
    let want: Vec<Vec<ProxyId>> = probes.iter().map(|q| expect(&oracle, q)).collect();
    for algorithm in algorithms() {
        let mut bp = broadphase::new(algorithm, Config::default());
        bp.insert_batch(&items)?;
        bp.update()?;
        let bp: &dyn BroadPhase = bp.as_ref();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (probes, want) = (&probes, &want);
                scope.spawn(move || {
                    for (k, q) in probes.iter().enumerate().skip(t).step_by(2) {
                        assert_eq!(expect(bp, q), want[k], "{algorithm:?}");
                        let ray = Ray::new(q.min, [1.0, 0.5, 0.25]);
                        assert!(bp.ray_cast_closest(&ray, 50.0, LayerMask::ALL).is_ok());
                    }
                });
            }
        });
    }
    Ok(())
}

#[test]
fn concrete_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<broadphase::BruteForce>();
    send_sync::<broadphase::Abp>();
}
