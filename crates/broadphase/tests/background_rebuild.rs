//! Background rebuilds: a QuadTree rebuilding its trees on other threads reports, update for
//! update, the events and pairs of one rebuilding them in place, through moves, arrivals,
//! removals, changes of tree, origin shifts and `optimize` while a build is under way.

use broadphase::testing::SplitMix64;
use broadphase::{
    Aabb, BroadPhase, Config, Error, Figures, Pair, PairEvents, ProxyDesc, ProxyId, QuadTree,
    QuadTreeSettings,
};

fn random_box(rng: &mut SplitMix64, side: f32) -> Aabb {
    let min = [0; 3].map(|_| rng.unit() * side);
    let size = [0; 3].map(|_| 0.3 + 1.5 * rng.unit());
    Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
}

/// The events of every update, the pairs at the end, and the rebuilds made.
type Run = (Vec<PairEvents>, Vec<Pair>, u64);

fn run(background: bool, rebuild_cost: f64, seed: u64) -> Result<Run, Error> {
    let mut settings = QuadTreeSettings::default();
    settings.background_rebuild = background;
    settings.rebuild_cost = rebuild_cost;
    let mut bp = QuadTree::with_settings(Config::default(), settings)?;
    let mut rng = SplitMix64::new(seed);
    let side = 45.0;
    let items: Vec<(Aabb, ProxyDesc)> = (0..7_000)
        .map(|k| {
            let d = if k % 8 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            (random_box(&mut rng, side), d)
        })
        .collect();
    let mut live: Vec<(ProxyId, Aabb)> = bp
        .insert_batch(&items)?
        .into_iter()
        .zip(items.iter().map(|i| i.0))
        .collect();
    let mut events = vec![bp.update()?.clone()];
    for frame in 0..70 {
        // Everything drifts (trees grow loose and want rebuilding); a few come and go, a few
        // change tree.
        let mut moves = Vec::new();
        for (id, b) in &mut live {
            if rng.below(3) == 0 {
                let d = [0; 3].map(|_| rng.unit() - 0.5);
                *b = Aabb::new(
                    std::array::from_fn(|i| b.min[i] + d[i]),
                    std::array::from_fn(|i| b.max[i] + d[i]),
                );
                moves.push((*id, *b));
            }
        }
        bp.set_aabbs(&moves)?;
        for _ in 0..rng.below(30) {
            let k = rng.below(live.len() as u64) as usize;
            let (id, _) = live.swap_remove(k);
            bp.remove(id)?;
        }
        for _ in 0..rng.below(30) {
            let b = random_box(&mut rng, side);
            live.push((bp.insert(b, ProxyDesc::dynamic())?, b));
        }
        for _ in 0..rng.below(5) {
            let (id, _) = live[rng.below(live.len() as u64) as usize];
            let d = if rng.below(2) == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            bp.set_desc(id, d)?;
        }
        if frame == 23 {
            bp.shift_origin([3.0, -2.0, 1.0])?;
            for (_, b) in &mut live {
                *b = Aabb::new(
                    [b.min[0] - 3.0, b.min[1] + 2.0, b.min[2] - 1.0],
                    [b.max[0] - 3.0, b.max[1] + 2.0, b.max[2] - 1.0],
                );
            }
        }
        if frame == 41 {
            bp.optimize();
        }
        events.push(bp.update()?.clone());
        assert_eq!(bp.check_structure(), Ok(()), "frame {frame}");
    }
    let rebuilds = match bp.stats().figures {
        Figures::QuadTree(f) => f.fast_rebuilds,
        _ => 0,
    };
    Ok((events, bp.pairs().to_vec(), rebuilds))
}

#[test]
fn background_rebuilds_give_the_events_of_rebuilds_in_place() -> Result<(), Error> {
    for (cost, seed) in [(0.0, 1), (64.0, 2)] {
        let (events_on, pairs_on, swaps) = run(true, cost, seed)?;
        let (events_off, pairs_off, in_place) = run(false, cost, seed)?;
        assert_eq!(events_on.len(), events_off.len());
        for (k, (a, b)) in events_on.iter().zip(&events_off).enumerate() {
            assert_eq!(a, b, "cost {cost}: update {k}");
        }
        assert_eq!(pairs_on, pairs_off);
        // Both rebuilt: one on other threads, swapped in, the other in place.
        assert!(
            swaps > 0 && in_place > 0,
            "cost {cost}: {swaps} swaps, {in_place} in place"
        );
    }
    Ok(())
}

/// The same run twice with background rebuilds: the same events (the swap falls on a fixed
/// update, whatever the threads' speed).
#[test]
fn background_rebuilds_are_deterministic() -> Result<(), Error> {
    assert_eq!(run(true, 0.0, 5)?, run(true, 0.0, 5)?);
    Ok(())
}
