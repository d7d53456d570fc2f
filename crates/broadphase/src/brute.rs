//! The oracle: every pair tested, every update.

use std::ops::ControlFlow;

use crate::query::{forward_queries, SpatialIndex};
use crate::store::{forward_to_store, Store};
use crate::{Aabb, Algorithm, BroadPhase, Config, Error, Pair, PairEvents, Stats};

/// The O(n²) broad phase: at each update it tests every pair of live proxies and diffs the
/// result with the previous update's.
///
/// It is the reference every other algorithm is checked against, so it is written to be
/// obviously right rather than fast. It shares only the proxy bookkeeping (ids, validation) with
/// the others, not their pair set or any sorting. Use it for a few hundred proxies, or in tests.
#[derive(Clone, Debug)]
pub struct BruteForce {
    store: Store,
    /// All pairs as of the last update, sorted.
    pairs: Vec<Pair>,
    parallel: bool,
}

impl BruteForce {
    /// An empty broad phase.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Self {
            store: Store::new(&config),
            pairs: Vec::new(),
            parallel: config.use_threads(),
        }
    }

    /// Every overlapping, allowed pair of live proxies, sorted.
    fn all_pairs(&self) -> Vec<Pair> {
        let s = &self.store;
        let live: Vec<usize> = (0..s.slot_count()).filter(|&i| s.is_alive(i)).collect();
        let row = |k: usize| -> Vec<Pair> {
            let i = live[k];
            live[k + 1..]
                .iter()
                .filter(|&&j| s.aabb_at(i).overlaps(s.aabb_at(j)) && s.allows(i, j))
                .map(|&j| Pair::new(s.id_at(i), s.id_at(j)))
                .collect()
        };
        let mut pairs: Vec<Pair> = if self.parallel {
            rows_parallel(live.len(), &row)
        } else {
            (0..live.len()).flat_map(row).collect()
        };
        pairs.sort_unstable();
        pairs
    }
}

#[cfg(feature = "parallel")]
fn rows_parallel(n: usize, row: &(dyn Fn(usize) -> Vec<Pair> + Sync)) -> Vec<Pair> {
    use rayon::prelude::*;
    (0..n).into_par_iter().flat_map_iter(row).collect()
}

#[cfg(not(feature = "parallel"))]
fn rows_parallel(n: usize, row: &(dyn Fn(usize) -> Vec<Pair> + Sync)) -> Vec<Pair> {
    (0..n).flat_map(row).collect()
}

/// The elements of sorted `a` missing from sorted `b`.
fn sorted_difference(a: &[Pair], b: &[Pair]) -> Vec<Pair> {
    a.iter()
        .filter(|p| b.binary_search(p).is_err())
        .copied()
        .collect()
}

impl SpatialIndex for BruteForce {
    /// Every slot: the query driver tests each exactly.
    fn candidates(
        &self,
        _bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for slot in 0..self.store.slot_count() {
            visit(slot as u32)?;
        }
        ControlFlow::Continue(())
    }
}

impl BroadPhase for BruteForce {
    forward_to_store!();
    forward_queries!();

    fn algorithm(&self) -> Algorithm {
        Algorithm::BruteForce
    }

    fn update(&mut self) -> Result<&PairEvents, Error> {
        self.store.begin_update();
        let next = self.all_pairs();
        self.store.events.created = sorted_difference(&next, &self.pairs);
        self.store.events.deleted = sorted_difference(&self.pairs, &next);
        self.store.tests = {
            let n = self.store.len() as u64;
            n * n.saturating_sub(1) / 2
        };
        self.pairs = next;
        self.store.finish_update();
        Ok(&self.store.events)
    }

    fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    fn stats(&self) -> Stats {
        let mut stats = self.store.stats();
        stats.pairs = self.pairs.len();
        stats
    }
}
