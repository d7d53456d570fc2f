//! A live broad phase whose engine is replaced mid-sequence gives exactly the events the old
//! engine would have given: what `Auto` does when the scene changes character.

use broadphase::engine::{self, Driver, Engine};
use broadphase::testing::{self, SplitMix64};
use broadphase::{
    Aabb, Algorithm, BroadPhase, Config, Error, Pair, PairEvents, ProxyDesc, ProxyId,
};

/// A broad phase that puts a fresh engine of the next algorithm in after every other update,
/// so that the differential suite sees builds from the store, incremental updates on a swapped
/// engine, and queries between a swap and the update that builds the new engine.
struct Swapping {
    inner: Driver<Box<dyn Engine>>,
    config: Config,
    updates: usize,
    next: usize,
}

impl Swapping {
    fn new(config: Config, first: usize) -> Self {
        let algorithm = Algorithm::ALL[first % Algorithm::ALL.len()];
        Self {
            inner: Driver::with_engine(&config, engine::boxed(algorithm, &config)),
            config,
            updates: 0,
            next: first + 1,
        }
    }
}

impl BroadPhase for Swapping {
    forward_all_but_update!(inner);

    fn update(&mut self) -> Result<&PairEvents, Error> {
        self.inner.update()?;
        self.updates += 1;
        if !self.updates.is_multiple_of(2) {
            let algorithm = Algorithm::ALL[self.next % Algorithm::ALL.len()];
            self.next += 1;
            self.inner
                .set_engine(engine::boxed(algorithm, &self.config));
        }
        Ok(self.inner.events())
    }
}

#[test]
fn engines_swapped_every_other_update_match_brute_force() {
    for first in 0..Algorithm::ALL.len() {
        testing::check_algorithm_with(
            || Box::new(Swapping::new(Config::default(), first)),
            &testing::CheckOptions::scaled(150, 60, 4),
        );
    }
}

fn sorted(pairs: &[Pair]) -> Vec<Pair> {
    let mut v = pairs.to_vec();
    v.sort_unstable();
    v
}

/// A crowd of boxes moving, leaving and arriving, run by Abp throughout and by a broad phase
/// whose engine is replaced every few frames by each algorithm in turn (twice in a row once,
/// with no update between): the same events at every update, the same pairs, the same ids.
#[test]
fn swapping_engines_mid_sequence_gives_the_old_engines_events() {
    let config = Config::default();
    let mut reference = broadphase::Abp::new(config.clone());
    let mut swapped = Driver::with_engine(&config, engine::boxed(Algorithm::Abp, &config));
    let mut rng = SplitMix64::new(7);
    let mut coord = |range: u64| rng.below(range) as f32;
    let mut boxes: Vec<Aabb> = Vec::new();
    let mut ids: Vec<ProxyId> = Vec::new();
    let desc = |k: usize| {
        if k.is_multiple_of(7) {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        }
    };
    for k in 0..600 {
        let lo = [coord(60), coord(60), coord(60)];
        let b = Aabb::new(lo, lo.map(|c| c + 1.5));
        let id = reference.insert(b, desc(k)).expect("valid");
        assert_eq!(swapped.insert(b, desc(k)), Ok(id));
        boxes.push(b);
        ids.push(id);
    }
    let mut swaps = 0;
    for frame in 0..80 {
        if frame % 5 == 3 {
            let algorithm = Algorithm::ALL[swaps % Algorithm::ALL.len()];
            swapped.set_engine(engine::boxed(algorithm, &config));
            if swaps == 4 {
                // Twice before one update: the second engine is built from the store too.
                swapped.set_engine(engine::boxed(Algorithm::Grid, &config));
            }
            swaps += 1;
            assert_eq!(
                sorted(swapped.pairs()),
                sorted(reference.pairs()),
                "after a swap"
            );
        }
        // A third of the boxes move, a few leave and as many arrive.
        let mut moves = Vec::new();
        for (k, &id) in ids.iter().enumerate() {
            if (k + frame) % 3 == 0 && reference.contains(id) {
                let step = [coord(3) - 1.0, coord(3) - 1.0, coord(3) - 1.0];
                boxes[k] = boxes[k].translated(step.map(|s| s * 0.5));
                moves.push((id, boxes[k]));
            }
        }
        reference.set_aabbs(&moves).expect("valid moves");
        swapped.set_aabbs(&moves).expect("valid moves");
        for _ in 0..6 {
            let k = (coord(ids.len() as u64)) as usize;
            if reference.contains(ids[k]) {
                reference.remove(ids[k]).expect("live");
                swapped.remove(ids[k]).expect("live");
            }
            let lo = [coord(60), coord(60), coord(60)];
            let b = Aabb::new(lo, lo.map(|c| c + 1.5));
            let id = reference.insert(b, desc(k)).expect("valid");
            assert_eq!(swapped.insert(b, desc(k)), Ok(id));
            boxes.push(b);
            ids.push(id);
        }
        let want = reference.update().expect("update").clone();
        let got = swapped.update().expect("update").clone();
        assert_eq!(got, want, "frame {frame} ({})", swapped.algorithm());
        assert_eq!(
            sorted(swapped.pairs()),
            sorted(reference.pairs()),
            "frame {frame}"
        );
        assert_eq!(swapped.stats().pairs, reference.stats().pairs);
    }
    assert!(swaps >= Algorithm::ALL.len(), "every algorithm had a turn");
}
