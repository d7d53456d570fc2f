//! The oracle: every pair tested, every update.

use std::ops::ControlFlow;

use crate::engine::{pair_key, Driver, Engine, PairChanges, PairList, Store};
use crate::{Aabb, Algorithm, Config, Error};

/// The O(n²) broad phase: at each update it tests every pair of live proxies and diffs the
/// result with the previous update's.
///
/// It is the reference every other algorithm is checked against, so it is written to be
/// obviously right rather than fast. It shares only the proxy bookkeeping (ids, validation) with
/// the others, not their pair lists or any sorting. Use it for a few hundred proxies, or in
/// tests.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, BruteForce, Config, Pair, ProxyDesc};
/// let mut bp = BruteForce::new(Config::default());
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([1.0; 3], [2.0; 3]), ProxyDesc::dynamic())?; // touching
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type BruteForce = Driver<BruteForceEngine>;

impl BruteForce {
    /// An empty broad phase.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Driver::with_engine(&config, BruteForceEngine::new(&config))
    }
}

/// [`BruteForce`]'s engine: the keys of every pair as of the last update, sorted.
#[derive(Clone, Debug, Default)]
pub struct BruteForceEngine {
    keys: Vec<u64>,
    parallel: bool,
}

impl BruteForceEngine {
    /// An engine holding nothing.
    #[must_use]
    pub fn new(config: &Config) -> Self {
        Self {
            keys: Vec::new(),
            parallel: config.use_threads(),
        }
    }
}

/// The key of every overlapping, allowed pair of live proxies, sorted.
fn all_pairs(store: &Store, parallel: bool) -> Vec<u64> {
    let live: Vec<u32> = (0..store.slot_count() as u32)
        .filter(|&s| store.is_alive(s as usize))
        .collect();
    let row = |k: usize| -> Vec<u64> {
        let a = live[k];
        let (i, boxed) = (a as usize, store.aabb_at(a as usize));
        live[k + 1..]
            .iter()
            .filter(|&&b| boxed.overlaps(store.aabb_at(b as usize)) && store.allows(i, b as usize))
            .map(|&b| pair_key(a, b))
            .collect()
    };
    let mut keys = crate::par::concat_rows(parallel, live.len(), row);
    keys.sort_unstable();
    keys
}

/// The elements of sorted `a` missing from sorted `b`, appended to `out`.
fn sorted_difference(a: &[u64], b: &[u64], out: &mut Vec<u64>) {
    out.extend(a.iter().filter(|k| b.binary_search(k).is_err()));
}

impl Engine for BruteForceEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::BruteForce
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        let next = all_pairs(store, self.parallel);
        sorted_difference(&next, &self.keys, &mut changes.created);
        sorted_difference(&self.keys, &next, &mut changes.deleted);
        let n = store.len() as u64;
        changes.tests = n * n.saturating_sub(1) / 2;
        self.keys = next;
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        vec![PairList::new(&self.keys)]
    }

    /// Every slot: the query driver tests each exactly.
    fn candidates(
        &self,
        store: &Store,
        _bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        (0..store.slot_count() as u32).try_for_each(visit)
    }

    /// The keys sorted, each once: the driver checks the pairs themselves.
    fn check_structure(&self, _store: &Store) -> Result<(), String> {
        check_sorted_keys("brute force", &self.keys)
    }
}

/// Checks that `keys` increase strictly (sorted, each once).
pub(crate) fn check_sorted_keys(what: &str, keys: &[u64]) -> Result<(), String> {
    match keys.windows(2).position(|w| w[0] >= w[1]) {
        Some(i) => Err(format!(
            "{what}: pair keys {:#x} and {:#x} at {i} are not in increasing order",
            keys[i],
            keys[i + 1]
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BroadPhase, ProxyDesc};

    fn three() -> BruteForce {
        let mut bp = BruteForce::new(Config::default());
        for k in 0..3 {
            let lo = [k as f32 * 0.5; 3];
            assert!(bp
                .insert(Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::dynamic())
                .is_ok());
        }
        assert!(bp.update().is_ok());
        assert_eq!(bp.engine.keys.len(), 3);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    #[test]
    fn keys_out_of_order_are_caught() {
        let mut bp = three();
        bp.engine.keys.swap(0, 2);
        let e = bp.check_structure().err().unwrap_or_default();
        assert!(e.contains("not in increasing order"), "{e}");
    }

    #[test]
    fn a_key_twice_is_caught() {
        let mut bp = three();
        bp.engine.keys[1] = bp.engine.keys[0];
        let e = bp.check_structure().err().unwrap_or_default();
        assert!(e.contains("not in increasing order"), "{e}");
    }
}
