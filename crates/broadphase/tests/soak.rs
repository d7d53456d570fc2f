//! Soak: many update cycles with churn on 10,000 proxies, for every algorithm. The heap must
//! stay flat after warm-up (measured by a counting allocator) and the events must match
//! `BruteForce` at sampled cycles.
//!
//! CI runs a bounded version (2,000 cycles). The full run is ignored by default:
//!
//! ```sh
//! cargo test --release -p broadphase --test soak -- --ignored
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use broadphase::testing::SplitMix64;
use broadphase::{
    Aabb, Algorithm, BroadPhase, BruteForce, Config, Error, Pair, ProxyDesc, ProxyId,
};

/// The system allocator, counting the bytes in use.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments unchanged;
// the counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract, which we pass on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (through `alloc` above).
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `realloc`'s contract, which we pass on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The soak tests measure the process's heap: they must not run at the same time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const PROXIES: usize = 10_000;
const SIDE: f32 = 54.0; // about one neighbour per box

fn random_box(rng: &mut SplitMix64) -> Aabb {
    let min = [0; 3].map(|_| rng.unit() * SIDE);
    let size = [0; 3].map(|_| 0.5 + 1.5 * rng.unit());
    Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
}

fn desc(rng: &mut SplitMix64) -> ProxyDesc {
    if rng.below(10) == 0 {
        ProxyDesc::fixed()
    } else {
        ProxyDesc::dynamic()
    }
}

/// A proxy named independently of ids: its index in the population and how many times that
/// index was replaced. The oracle updates only around checks, so it reuses slots at other
/// times than the algorithm and hands out other ids for the same calls.
type Name = (usize, u32);

/// Both broad phases' ids for the population, and the way back from ids to names.
struct Population {
    ids: [Vec<ProxyId>; 2],
    names: [HashMap<ProxyId, Name>; 2],
    replaced: Vec<u32>,
}

impl Population {
    fn name_pairs(&self, side: usize, pairs: &[Pair]) -> Vec<(Name, Name)> {
        let name = |id: &ProxyId| self.names[side].get(id).copied().unwrap_or((usize::MAX, 0));
        let mut out: Vec<(Name, Name)> = pairs
            .iter()
            .map(|p| {
                let (a, b) = (name(&p.a), name(&p.b));
                (a.min(b), a.max(b))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Forgets the names of removed proxies once their deletion has been checked.
    fn forget_removed(&mut self) {
        for side in 0..2 {
            let live = &self.ids[side];
            let replaced = &self.replaced;
            self.names[side].retain(|id, (k, inc)| live[*k] == *id && replaced[*k] == *inc);
        }
    }
}

/// Heap bytes after warm-up and at the end: the whole process's (counted by the allocator)
/// and the algorithm's own (its stats).
struct Heap {
    process: (usize, usize),
    algorithm: (usize, usize),
}

/// Runs `cycles` update cycles on `algorithm`, checking against BruteForce every `check_every`
/// cycles.
fn soak(algorithm: Algorithm, cycles: usize, check_every: usize) -> Result<Heap, Error> {
    let mut rng = SplitMix64::new(0x50A6 ^ algorithm as u64);
    let mut bp = broadphase::new(algorithm, Config::default());
    let mut oracle = BruteForce::new(Config::default());
    let items: Vec<(Aabb, ProxyDesc)> = (0..PROXIES)
        .map(|_| (random_box(&mut rng), desc(&mut rng)))
        .collect();
    let mut pop = Population {
        ids: [bp.insert_batch(&items)?, oracle.insert_batch(&items)?],
        names: [HashMap::new(), HashMap::new()],
        replaced: vec![0; PROXIES],
    };
    for side in 0..2 {
        for (k, id) in pop.ids[side].iter().enumerate() {
            pop.names[side].insert(*id, (k, 0));
        }
    }
    bp.update()?;
    oracle.update()?;
    // The oracle updates only around checks, so its slots are recycled only then: its storage
    // reaches its size over the first check interval. Warm-up covers that.
    let warm_up = (cycles / 10).max(2 * check_every);
    let mut heap = Heap {
        process: (0, 0),
        algorithm: (0, 0),
    };
    for cycle in 1..=cycles {
        // 5% leave and come back elsewhere, 20% move a little.
        for _ in 0..PROXIES / 20 {
            let k = rng.below(PROXIES as u64) as usize;
            bp.remove(pop.ids[0][k])?;
            oracle.remove(pop.ids[1][k])?;
            let (b, d) = (random_box(&mut rng), desc(&mut rng));
            pop.replaced[k] += 1;
            pop.ids[0][k] = bp.insert(b, d)?;
            pop.ids[1][k] = oracle.insert(b, d)?;
            for side in 0..2 {
                pop.names[side].insert(pop.ids[side][k], (k, pop.replaced[k]));
            }
        }
        for _ in 0..PROXIES / 5 {
            let k = rng.below(PROXIES as u64) as usize;
            let d = [0; 3].map(|_| (rng.unit() - 0.5) * 0.2);
            let moved = oracle.aabb(pop.ids[1][k])?.translated(d);
            bp.set_aabb(pop.ids[0][k], moved)?;
            oracle.set_aabb(pop.ids[1][k], moved)?;
        }
        bp.update()?;
        // The oracle's events are relative to its previous update: it updates on the cycle
        // before each check too.
        if cycle % check_every == 0 {
            oracle.update()?;
            let (got, want) = (bp.events(), oracle.events());
            let at = format!("{algorithm:?} cycle {cycle}");
            assert_eq!(
                pop.name_pairs(0, got.created()),
                pop.name_pairs(1, want.created()),
                "{at}: created"
            );
            assert_eq!(
                pop.name_pairs(0, got.deleted()),
                pop.name_pairs(1, want.deleted()),
                "{at}: deleted"
            );
            assert_eq!(
                pop.name_pairs(0, bp.pairs()),
                pop.name_pairs(1, oracle.pairs()),
                "{at}: pairs"
            );
        } else if (cycle + 1) % check_every == 0 {
            oracle.update()?;
        }
        // Names of removed proxies are needed only for the check of the cycle they left in.
        pop.forget_removed();
        if cycle == warm_up {
            heap.process.0 = LIVE.load(Ordering::Relaxed);
            heap.algorithm.0 = bp.stats().memory_bytes;
        }
    }
    heap.process.1 = LIVE.load(Ordering::Relaxed);
    heap.algorithm.1 = bp.stats().memory_bytes;
    Ok(heap)
}

fn soak_all(cycles: usize, check_every: usize) -> Result<(), Error> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for &algorithm in Algorithm::ALL {
        if algorithm == Algorithm::BruteForce {
            continue; // it is the oracle
        }
        let heap = soak(algorithm, cycles, check_every)?;
        // Flat: after warm-up the heap may wobble with capacities, not grow with cycles.
        for (what, (warm, end)) in [("process", heap.process), ("algorithm", heap.algorithm)] {
            assert!(
                end <= warm + warm / 4 + (1 << 20),
                "{algorithm:?}: {what} heap grew from {warm} to {end} bytes over {cycles} cycles"
            );
            println!("{algorithm:?}: {what} heap {warm} bytes after warm-up, {end} after {cycles} cycles");
        }
    }
    Ok(())
}

#[test]
fn soak_bounded() -> Result<(), Error> {
    soak_all(2_000, 500)
}

#[test]
#[ignore = "long: 100,000 cycles per algorithm"]
fn soak_full() -> Result<(), Error> {
    soak_all(100_000, 5_000)
}
