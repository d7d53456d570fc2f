//! `Sap`: PhysX 3.4's incremental three-axis sweep-and-prune, rebuilt around what makes it slow
//! in dense 3D scenes.
//!
//! # PhysX's design
//!
//! Per axis, the box endpoints sorted in one array (a minimum before a maximum at equal
//! coordinates, so touching boxes overlap), and per box the index of its endpoints in each
//! array. Each frame the moved endpoints are re-sorted by insertion. Every swap of a minimum
//! past a maximum of another box may start (or stop) an overlap, so the two other axes are
//! tested through the endpoint indices; PhysX defers rewriting the array to once per "activity
//! pocket" with a linked list. New boxes are radix-sorted per axis, merged in, and paired by
//! box pruning; removed ones are marked and compacted away.
//!
//! # Why it is slow in a dense 3D scene
//!
//! With N boxes in a cube of side L, a box overlaps about N·w/L others *on one axis* (2,000 at
//! 100,000 boxes) but one or two in 3D. A moving endpoint therefore passes dozens of endpoints
//! per frame on each axis, and almost none of those swaps means a pair. PhysX pays for every
//! swap: the passed endpoint's box has its stored index rewritten (a random write), the 2D test
//! reads the other box's indices on the other axes (random reads), and the sleeping boxes'
//! endpoints are shifted along with everyone else's. Those cache misses, not the tests, are the
//! cost: on a dense scene with 10% of the boxes moving, PhysX 5's SAP takes about 20 times the
//! time of a BVH.
//!
//! # What this type does instead
//!
//! - **No endpoint indices.** The 2D test compares keys, not positions, so nothing is written
//!   when an endpoint is passed, and the positions never need maintaining.
//! - **Endpoints carry their box.** Each endpoint holds its box's other key on the axis and its
//!   keys on the two other axes (32 bytes), so a swap's test reads only the two endpoints
//!   involved, which are adjacent in memory.
//! - **Awake and asleep boxes apart.** Boxes that stopped moving leave the awake arrays for
//!   per-axis asleep lists (one sorted by minimum, one by maximum) that the frame loop never
//!   rewrites. A moving endpoint only *reads* the asleep endpoints it crosses, from a finger it
//!   keeps into each list; the insertion sort runs over the awake endpoints only. This is the
//!   few-updates path of PhysX (touch only what moved) made permanent, and the full-scan pass
//!   over the awake arrays is its other path. A box that moves wakes up; one still for
//!   [`SapSettings::sleep_after`] updates goes back to sleep, in batches.
//! - **Only starts are swept.** A crossing can start an overlap only in one direction (a
//!   minimum moving down past a maximum, or a maximum moving up past a minimum), so only those
//!   crossings are tested. Overlaps that end are found by re-testing the existing pairs of the
//!   moved boxes, about one or two per box, instead of at every swap the other way.
//! - **Exact keys.** Coordinates keep all 32 bits of their encoded key; the minimum-first rule
//!   at equal coordinates is a 33rd bit of the sort order, not a lost low bit as in PhysX.
//! - **No pockets.** PhysX defers its array writes with linked lists because every write also
//!   rewrites a box's stored index. With no indices, a pass slides the awake endpoints in place,
//!   one sequential sweep per axis (a moved endpoint ends a few dozen places from where it was).
//! - **Branch-free swap tests.** Minima and maxima are passed in no predictable order, so the
//!   test of a swap is computed for every endpoint passed, the four other-axis comparisons as
//!   one SSE2 comparison on x86-64 (module `probe`), and only its rare success branches.
//!
//! Every reported pair is tested exactly on all three axes with integer keys, so the output is
//! exactly [`BruteForce`](crate::BruteForce)'s. The three axes update independently (on three
//! threads with the `parallel` feature); each reports the pairs that start on it and the union
//! is sorted, so the result does not depend on the thread count.
//!
//! # Where it loses
//!
//! Sweep-and-prune pays per endpoint swap, three axes over. When every box moves, a dense scene
//! of 100,000 boxes makes about 14 million swaps and 3.4 million tests per frame for some 1,600
//! new pairs, and many boxes coming and going each frame add box pruning against all the
//! others: there [`Abp`](crate::Abp), which sweeps only what moved in small columns, is faster.
//! Memory is about 200 bytes per box (six 32-byte endpoints or asleep entries).
//!
//! Per update:
//! 1. the changed proxies are sorted out: removed, re-inserted (their filter changed, or they
//!    jumped so far that sweeping them would cost more than box pruning), new, moved (asleep
//!    ones wake up and join the awake arrays at their old place);
//! 2. the pairs of moved boxes are re-tested, the pairs of removed ones deleted;
//! 3. per axis, one pass merges the joining endpoints (radix-sorted) into the awake array,
//!    drops the leaving ones, and insertion-sorts the moved ones in place, reporting every pair
//!    that starts to overlap;
//! 4. the new boxes are paired by box pruning: new against new, against the asleep boxes and
//!    against the awake ones;
//! 5. boxes that stayed still long enough go to sleep (one merge per list), and lists that
//!    hold many stale entries are compacted.

mod axis;
mod batch;
mod check;
mod end;
mod pair_table;
mod probe;

use std::ops::{ControlFlow, Range};

use crate::encode::{box_keys, decode, encode_at_least, encode_at_most};
use crate::engine::{Driver, Engine, PairChanges, PairList, Store};
use crate::pairs::{cancel_common, key_slots, pair_key};
use crate::prune::BoxList;
use crate::slack;
use crate::{Aabb, Algorithm, Config, Error, Figures, ProxyDesc, SapFigures, Stats};
use axis::{Axis, Joiner, Shared, ASLEEP, AWAKE, DROP, FIXED, FRESH, GOING, MOVED};
use batch::Batch;
use pair_table::PairSet;

/// Tuning of [`Sap`]. Every value gives exactly the same pairs; they trade speed only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SapSettings {
    /// Updates a box must stay still before it may leave the awake arrays for the asleep lists
    /// (`None`: boxes never sleep; `Some(0)` acts as `Some(1)`). Only updates with some change
    /// count. Boxes go to sleep in batches, once at least a fifth of the awake boxes may: each
    /// batch is one merge per asleep list.
    pub sleep_after: Option<u8>,
    /// A box whose move would cross more than about this many endpoints (estimated from the
    /// distance and the density of boxes) is re-inserted and paired by box pruning instead of
    /// being swept there: a teleport. `u32::MAX`: never.
    pub far_move: u32,
}

impl Default for SapSettings {
    fn default() -> Self {
        Self {
            sleep_after: Some(2),
            far_move: 4096,
        }
    }
}

/// What one update did, for [`Stats::counters`].
#[derive(Clone, Copy, Debug, Default)]
struct UpdateCounts {
    moved: u64,
    woken: u64,
    created: u64,
    removed: u64,
    reinserted: u64,
    slept: u64,
    prune_tests: u64,
}

/// Incremental three-axis sweep-and-prune, PhysX's `eSAP` made fast for scenes where most boxes
/// rest: their endpoints sit in asleep lists the frame loop only reads. The choice when most
/// objects are still; it loses to [`Abp`](crate::Abp) when most move or many come and go.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc, Sap};
/// let mut bp = Sap::new(Config::default());
/// let ground = bp.insert(Aabb::new([-50.0, -1.0, -50.0], [50.0, 0.0, 50.0]), ProxyDesc::fixed())?;
/// let ball = bp.insert(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
/// bp.set_aabb(ball, Aabb::new([0.0, 2.0, 0.0], [1.0, 3.0, 1.0]))?;
/// assert_eq!(bp.update()?.deleted(), &[Pair::new(ground, ball)]);
/// // Touching counts: back down onto the ground.
/// bp.set_aabb(ball, Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]))?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub type Sap = Driver<SapEngine>;

impl Sap {
    /// An empty broad phase with the default [`SapSettings`].
    #[must_use]
    pub fn new(config: Config) -> Self {
        Self::with_settings(config, SapSettings::default())
    }

    /// An empty broad phase with chosen settings.
    #[must_use]
    pub fn with_settings(config: Config, settings: SapSettings) -> Self {
        Driver::with_engine(&config, SapEngine::new(&config, settings))
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> SapSettings {
        self.engine.settings
    }
}

/// [`Sap`]'s engine: the three axes' awake arrays and asleep lists, the keys and state of
/// every box it holds, and the persistent pairs in a hash table of its own.
#[derive(Clone, Debug)]
pub struct SapEngine {
    settings: SapSettings,
    parallel: bool,
    axes: [Axis; 3],
    /// Per slot: the keys `[min x, y, z, max x, y, z]` the structure holds for the box.
    keys: Vec<[u32; 6]>,
    /// Per slot: the state bits (`axis::AWAKE`, ...).
    state: Vec<u8>,
    /// Per slot: updates the awake box has stayed still (saturating).
    still: Vec<u8>,
    /// Per slot: the filter-relevant part of the description at the last update.
    filter: Vec<u64>,
    /// Boxes with entries in the asleep lists, stale ones included.
    asleep_entries: usize,
    /// Boxes whose asleep entries are stale (woken, removed or re-inserted since).
    stale: usize,
    /// The store's shift count at the last update.
    shifts_seen: u64,
    /// New and re-inserted boxes of this update, and how many of them go to sleep at once:
    /// fixed ones, which rarely move, and those whose box was not set since the last update
    /// (an engine built from a store whose boxes were there before: `Auto`'s switches).
    fresh: usize,
    fresh_still: usize,
    /// Whether this update's joining boxes are all fresh and there were no awake ones: the
    /// axes then put the fresh boxes that go to sleep straight into the asleep lists.
    only_fresh: bool,
    /// Candidate pairs of this update (scratch).
    created: Vec<u64>,
    deleted: Vec<u64>,
    /// Box pruning's lists (scratch).
    new_list: BoxList,
    awake_list: BoxList,
    batch: Batch,
    /// The boxes joining the awake arrays this update.
    joiners: Vec<Joiner>,
    /// Boxes going to sleep (scratch).
    going: Vec<u32>,
    counts: UpdateCounts,
    /// The persistent pairs as of the last update.
    table: PairSet,
}

/// The filter-relevant part of a description: a change re-inserts the box.
fn filter_key(d: &ProxyDesc) -> u64 {
    u64::from(d.group.0) | (u64::from(d.layer.0) << 32) | (u64::from(d.is_fixed()) << 40)
}

/// The inclusive overlap test on keys.
#[inline]
fn keys_overlap(a: &[u32; 6], b: &[u32; 6]) -> bool {
    (0..3).all(|i| a[i] <= b[3 + i] && b[i] <= a[3 + i])
}

/// Twice the centre of a box on `axis`, from its keys.
#[inline]
fn double_centre(k: &[u32; 6], axis: usize) -> f64 {
    f64::from(decode(k[axis])) + f64::from(decode(k[3 + axis]))
}

impl SapEngine {
    /// An engine holding nothing, with chosen settings.
    #[must_use]
    pub fn new(config: &Config, settings: SapSettings) -> Self {
        Self {
            settings,
            parallel: config.use_threads(),
            axes: [Axis::new(0), Axis::new(1), Axis::new(2)],
            keys: Vec::new(),
            state: Vec::new(),
            still: Vec::new(),
            filter: Vec::new(),
            asleep_entries: 0,
            stale: 0,
            shifts_seen: 0,
            fresh: 0,
            fresh_still: 0,
            only_fresh: false,
            created: Vec::new(),
            deleted: Vec::new(),
            new_list: BoxList::default(),
            awake_list: BoxList::default(),
            batch: Batch::default(),
            joiners: Vec::new(),
            going: Vec::new(),
            counts: UpdateCounts::default(),
            table: PairSet::default(),
        }
    }

    /// Boxes in the awake arrays.
    fn awake(&self) -> usize {
        self.axes[0].ends.len() / 2
    }

    /// Per axis, the estimated endpoints crossed per unit of distance, or `None` when no move
    /// counts as far (after an origin shift every box moves by the same amount and keeps its
    /// place among the others: sweeping is cheap then).
    fn far_scale(&self, store: &Store, shifted: bool) -> Option<[f64; 3]> {
        if shifted || self.settings.far_move == u32::MAX {
            return None;
        }
        let b = store.bounds()?;
        let n = store.len() as f64;
        Some(std::array::from_fn(|a| {
            let extent = f64::from(b.max[a]) - f64::from(b.min[a]);
            // Twice the centre moves twice as far: n, not 2n, endpoints per unit.
            n / extent.max(f64::MIN_POSITIVE)
        }))
    }

    /// Takes a box out of the structure: its awake endpoints are dropped by the passes, its
    /// asleep entries become stale, and its pairs will be deleted.
    fn leave(&mut self, slot: usize) {
        if self.state[slot] & ASLEEP != 0 {
            self.stale += 1;
        }
        self.state[slot] = DROP;
    }

    /// Puts a box in with `keys`, to be paired by box pruning.
    fn join_fresh(&mut self, store: &Store, slot: usize, keys: [u32; 6]) {
        let desc = store.desc_at(slot);
        let fixed = if desc.is_fixed() { FIXED } else { 0 };
        let still = self.settings.sleep_after.is_some() && (fixed != 0 || !store.box_set(slot));
        let going = if still { GOING } else { 0 };
        self.filter[slot] = filter_key(desc);
        self.keys[slot] = keys;
        self.state[slot] = (self.state[slot] & DROP) | FRESH | AWAKE | fixed | going;
        self.still[slot] = 0;
        self.fresh += 1;
        self.fresh_still += usize::from(still);
        self.joiners.push(Joiner {
            slot: slot as u32,
            keys,
        });
    }

    /// Step 1: sorts out the changed proxies.
    fn classify(&mut self, store: &Store) {
        let n = store.slot_count();
        if self.keys.len() < n {
            slack::resize(&mut self.keys, n, [0; 6]);
            slack::resize(&mut self.state, n, 0);
            slack::resize(&mut self.still, n, 0);
            slack::resize(&mut self.filter, n, 0);
        }
        let shifted = store.shift_count() != self.shifts_seen;
        self.shifts_seen = store.shift_count();
        let rules = store.rules_changed();
        let far = self.far_scale(store, shifted);
        let limit = f64::from(self.settings.far_move);
        self.fresh = 0;
        self.fresh_still = 0;
        self.joiners.clear();
        for &slot in store.dirty() {
            let slot = slot as usize;
            let alive = store.is_alive(slot);
            if !store.was_in(slot) {
                if alive {
                    let keys = box_keys(store.aabb_at(slot));
                    self.join_fresh(store, slot, keys);
                    self.counts.created += 1;
                }
                continue;
            }
            if !alive {
                self.leave(slot);
                self.counts.removed += 1;
                continue;
            }
            let new = box_keys(store.aabb_at(slot));
            let desc = store.desc_at(slot);
            let refilter =
                self.filter[slot] != filter_key(desc) || (rules >> desc.layer.0) & 1 != 0;
            let old = &self.keys[slot];
            let jumped = far.is_some_and(|scale| {
                let crossings: f64 = (0..3)
                    .map(|a| (double_centre(&new, a) - double_centre(old, a)).abs() * scale[a])
                    .sum();
                crossings > limit
            });
            if refilter || jumped {
                self.leave(slot);
                self.join_fresh(store, slot, new);
                self.counts.reinserted += 1;
            } else if new != *old {
                if self.state[slot] & ASLEEP != 0 {
                    // Joins the awake arrays at its old keys and moves in the pass.
                    self.joiners.push(Joiner {
                        slot: slot as u32,
                        keys: *old,
                    });
                    self.state[slot] = (self.state[slot] & !ASLEEP) | AWAKE;
                    self.stale += 1;
                    self.counts.woken += 1;
                }
                self.keys[slot] = new;
                self.state[slot] |= MOVED;
                self.still[slot] = 0;
                self.counts.moved += 1;
            }
        }
    }

    /// Step 2: the deleted candidates: every pair of a leaving box, and every pair of a moved
    /// box that no longer overlaps.
    fn collect_deleted(&mut self) {
        self.deleted.clear();
        let (state, keys) = (&self.state, &self.keys);
        for &k in self.table.keys() {
            let (a, b) = key_slots(k);
            let (a, b) = (a as usize, b as usize);
            let s = state[a] | state[b];
            if s & DROP != 0 || (s & MOVED != 0 && !keys_overlap(&keys[a], &keys[b])) {
                self.deleted.push(k);
            }
        }
    }

    /// Drops every stale asleep entry.
    fn compact_asleep(&mut self) {
        for axis in &mut self.axes {
            axis.compact_asleep(&self.state);
            axis.reset_fingers();
        }
        self.asleep_entries = self.asleep_entries.saturating_sub(self.stale);
        self.stale = 0;
    }

    /// Step 3: the three axis passes.
    fn run_axes(&mut self, store: &Store) {
        let state = &self.state;
        self.only_fresh = self.awake() == 0
            && !self.joiners.is_empty()
            && self
                .joiners
                .iter()
                .all(|j| state[j.slot as usize] & FRESH != 0);
        let sh = Shared {
            joiners: &self.joiners,
            keys: &self.keys,
            state: &self.state,
            store,
            only_fresh: self.only_fresh,
            fresh_going: self.fresh_still,
        };
        let [a, b, c] = &mut self.axes;
        let sh = &sh;
        crate::par::three(self.parallel, || a.run(sh), || b.run(sh), || c.run(sh));
    }

    /// Step 4: box pruning of the new and re-inserted boxes, swept on the x axis: new against
    /// new, against the asleep boxes and against the awake ones.
    fn prune_fresh(&mut self, store: &Store) {
        if self.fresh == 0 {
            return;
        }
        let state = &self.state;
        let axis = &self.axes[0];
        self.new_list.clear();
        for (b, slot) in axis.fresh_minima(&self.joiners, state) {
            self.new_list.push(&b, slot, 0);
        }
        self.awake_list.clear();
        for e in &axis.ends {
            if !e.is_max() && state[e.slot() as usize] & FRESH == 0 {
                self.awake_list.push(&e.encoded(), e.slot(), 0);
            }
        }
        let created = &mut self.created;
        let report = |a: u32, b: u32| {
            if state[a as usize] & state[b as usize] & FIXED == 0
                && store.allows_unless_both_fixed(a, b)
            {
                created.push(pair_key(a, b));
            }
        };
        // Stale asleep entries are skipped; the awake list holds only live boxes.
        let live = |list: usize, slot: u32| list == 0 || state[slot as usize] & ASLEEP != 0;
        let old = [&self.awake_list, &axis.asleep_min];
        let tests = self.batch.pairs(&self.new_list, &old, live, report);
        self.counts.prune_tests = tests;
    }

    /// Step 5: clears the update's marks, puts still boxes to sleep, compacts stale entries.
    fn settle(&mut self, store: &Store) {
        if self.only_fresh && self.fresh_still > 0 {
            // The axes set them aside: they go in the asleep lists (which drop their stale
            // entries) before their state says they are there.
            let state = &self.state;
            let [a, b, c] = &mut self.axes;
            crate::par::three(
                self.parallel,
                || a.sleep_fresh(state),
                || b.sleep_fresh(state),
                || c.sleep_fresh(state),
            );
            for j in &self.joiners {
                let s = &mut self.state[j.slot as usize];
                if *s & GOING != 0 {
                    *s = (*s & !(AWAKE | GOING)) | ASLEEP;
                }
            }
            self.asleep_entries = self.asleep_entries.saturating_sub(self.stale) + self.fresh_still;
            self.stale = 0;
            self.counts.slept = self.fresh_still as u64;
        }
        self.joiners.clear();
        // Stillness, counted on the x axis's minima (one per awake box), unless every awake
        // box moved or arrived (and none sleeps at once). A box that arrives still (fixed, or
        // there before an engine built from the store) sleeps at once: fixed boxes rarely move.
        self.going.clear();
        let busy = self.counts.moved as usize + self.fresh;
        let sleep_after = self.settings.sleep_after;
        if let Some(after) = sleep_after.filter(|_| busy < self.awake() || self.fresh_still > 0) {
            for e in &self.axes[0].ends {
                let slot = e.slot() as usize;
                let st = self.state[slot];
                if e.is_max() || st & MOVED != 0 {
                    continue;
                }
                if st & FRESH != 0 {
                    if st & GOING != 0 {
                        self.going.push(slot as u32);
                    }
                    continue;
                }
                self.still[slot] = self.still[slot].saturating_add(1);
                if self.still[slot] >= after.max(1) {
                    self.going.push(slot as u32);
                }
            }
        }
        for &slot in store.dirty() {
            let slot = slot as usize;
            self.state[slot] = if store.is_alive(slot) {
                self.state[slot] & !(MOVED | FRESH | DROP | GOING)
            } else {
                0
            };
        }
        let awake = self.awake();
        if !self.going.is_empty() && self.going.len() * 5 >= awake {
            for &slot in &self.going {
                self.state[slot as usize] |= GOING;
            }
            let (state, going) = (&self.state, self.going.len());
            let [a, b, c] = &mut self.axes;
            crate::par::three(
                self.parallel,
                || a.put_to_sleep(state, going),
                || b.put_to_sleep(state, going),
                || c.put_to_sleep(state, going),
            );
            for &slot in &self.going {
                let s = &mut self.state[slot as usize];
                *s = (*s & !(AWAKE | GOING)) | ASLEEP;
            }
            self.asleep_entries = self.asleep_entries.saturating_sub(self.stale) + self.going.len();
            self.stale = 0;
            self.counts.slept += self.going.len() as u64;
        } else if self.stale > 0 && self.stale * 4 > self.asleep_entries {
            self.compact_asleep();
        }
    }

    /// Ends the update: the candidates become the pairs' changes, and the table follows them.
    fn finish(&mut self, changes: &mut PairChanges) {
        for axis in &self.axes {
            self.created.extend_from_slice(&axis.created);
        }
        self.created.sort_unstable();
        self.created.dedup();
        self.deleted.sort_unstable();
        // A re-inserted box's pairs are all deleted and found again by box pruning: those
        // still there cancel.
        cancel_common(&mut self.created, &mut self.deleted);
        changes.tests =
            self.axes.iter().map(|a| a.counts.tests).sum::<u64>() + self.counts.prune_tests;
        self.table.remove_keys(&self.deleted, self.parallel);
        self.table.insert_new(&self.created);
        // The driver's (empty) lists come back for the next update: no copy, no allocation.
        std::mem::swap(&mut self.created, &mut changes.created);
        std::mem::swap(&mut self.deleted, &mut changes.deleted);
    }

    /// The endpoints of the awake array of `axis` whose box may overlap `[lo, hi]` there (its
    /// minimum lies in `[lo - widest, hi]`).
    fn awake_range(&self, axis: usize, lo: f32, hi: f32) -> Range<usize> {
        let a = &self.axes[axis];
        let from = encode_at_most(f64::from(lo) - a.awake_width * (1.0 + 1e-9));
        let to = encode_at_least(f64::from(hi));
        a.ends.partition_point(|e| e.coord < from)..a.ends.partition_point(|e| e.coord <= to)
    }
}

impl Engine for SapEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Sap
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        self.counts = UpdateCounts::default();
        for axis in &mut self.axes {
            axis.created.clear();
            axis.counts = Default::default();
        }
        // No-ops: the lists the last update swapped in were the driver's, empty when handed in.
        self.created.clear();
        self.deleted.clear();
        if !store.dirty().is_empty() {
            self.classify(store);
            self.collect_deleted();
            // Moves are swept against live asleep entries only once most are stale (after
            // an origin shift, all are).
            if self.stale > 0 && self.stale * 2 > self.asleep_entries {
                self.compact_asleep();
            }
            self.run_axes(store);
            self.prune_fresh(store);
            self.settle(store);
        }
        self.finish(changes);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        vec![PairList::new(self.table.keys())]
    }

    /// The boxes that may overlap `bounds` on the axis where fewest do: a range of the asleep
    /// list sorted by minimum and a range of the awake array, found by binary search.
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let ranges: [(Range<usize>, Range<usize>); 3] = std::array::from_fn(|a| {
            let (lo, hi) = (bounds.min[a], bounds.max[a]);
            (
                self.axes[a].asleep_min.sweep_range(lo, hi),
                self.awake_range(a, lo, hi),
            )
        });
        let best = (0..3)
            .min_by_key(|&a| 2 * ranges[a].0.len() + ranges[a].1.len())
            .unwrap_or(0);
        let (asleep, awake) = ranges[best].clone();
        let axis = &self.axes[best];
        for i in asleep {
            let slot = axis.asleep_min.id(i);
            if self.state[slot as usize] & ASLEEP != 0 {
                visit(slot)?;
            }
        }
        for e in &axis.ends[awake] {
            if !e.is_max() {
                visit(e.slot())?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Per axis, the awake endpoints and the asleep lists; per slot, its state and keys; the
    /// pair table, and every pair's overlap on all three axes (`check.rs`).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        self.check(store)
    }

    fn stats(&self, _store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self.axes.iter().map(Axis::memory_bytes).sum::<usize>()
            + self.keys.capacity() * 24
            + self.state.capacity()
            + self.still.capacity()
            + self.filter.capacity() * 8
            + (self.created.capacity() + self.deleted.capacity()) * 8
            + self.new_list.memory_bytes()
            + self.awake_list.memory_bytes()
            + self.batch.memory_bytes()
            + self.going.capacity() * 4
            + self.joiners.capacity() * std::mem::size_of::<Joiner>()
            + self.table.memory_bytes();
        let [x, y, z] = &self.axes;
        let c = &self.counts;
        stats.figures = Figures::Sap(SapFigures {
            swaps: [x.counts.swaps, y.counts.swaps, z.counts.swaps],
            asleep_crossed: x.counts.crossed + y.counts.crossed + z.counts.crossed,
            moved: c.moved,
            created: c.created,
            removed: c.removed,
            reinserted: c.reinserted,
            woken: c.woken,
            slept: c.slept,
            prune_tests: c.prune_tests,
            awake: self.awake() as u64,
            asleep: self.asleep_entries.saturating_sub(self.stale) as u64,
            stale_asleep: self.stale as u64,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BroadPhase, Pair};

    fn ids(pairs: &[Pair]) -> Vec<(u32, u32)> {
        pairs.iter().map(|p| (p.a.index(), p.b.index())).collect()
    }

    /// Boxes that touch at one coordinate overlap, including when they come to touch by
    /// moving, asleep or awake.
    #[test]
    fn touching_boxes_pair_when_they_meet() -> Result<(), Error> {
        let mut bp = Sap::with_settings(
            Config::default(),
            SapSettings {
                sleep_after: Some(1),
                far_move: u32::MAX,
            },
        );
        let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
        let b = bp.insert(
            Aabb::new([3.0, 0.0, 0.0], [4.0, 1.0, 1.0]),
            ProxyDesc::dynamic(),
        )?;
        let far = bp.insert(Aabb::new([10.0; 3], [11.0; 3]), ProxyDesc::dynamic())?;
        assert!(bp.update()?.is_empty());
        // An update with a change (a far box moving; a box set where it is is no change)
        // lets the still boxes sleep.
        bp.set_aabb(a, Aabb::new([0.0; 3], [1.0; 3]))?;
        bp.set_aabb(far, Aabb::new([20.0; 3], [21.0; 3]))?;
        assert!(bp.update()?.is_empty());
        assert!(matches!(bp.stats().figures, Figures::Sap(f) if f.asleep == 2));
        bp.set_aabb(a, Aabb::new([2.0, 0.0, 0.0], [3.0, 1.0, 1.0]))?;
        assert_eq!(ids(bp.update()?.created()), [(0, 1)]);
        bp.set_aabb(b, Aabb::new([3.0, 1.0, 0.0], [4.0, 2.0, 1.0]))?; // edge contact
        assert!(bp.update()?.is_empty());
        bp.set_aabb(b, Aabb::new([3.0, 1.5, 0.0], [4.0, 2.0, 1.0]))?;
        assert_eq!(ids(bp.update()?.deleted()), [(0, 1)]);
        Ok(())
    }

    /// A Sap built from a store whose boxes were there before (an engine put under a live
    /// broad phase, as `Auto` does) puts the boxes that did not move since the last update
    /// straight to sleep, fixed or not; those that moved stay awake. Its pairs are the old
    /// engine's, and stay exact as sleeping boxes wake and move.
    #[test]
    fn a_rebuild_puts_the_boxes_that_did_not_move_to_sleep_at_once() -> Result<(), Error> {
        let config = Config::default();
        let mut bp = Sap::new(config.clone());
        let mut ids = Vec::new();
        for i in 0..40 {
            let lo = [i as f32 * 0.75, 0.0, 0.0];
            let desc = if i % 4 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            ids.push(bp.insert(Aabb::new(lo, lo.map(|c| c + 1.0)), desc)?);
        }
        bp.update()?;
        let before = bp.pairs().len();
        let mut bp = bp.replace_engine(SapEngine::new(&config, SapSettings::default()));
        // Three dynamic boxes move in the rebuild's update; one is set where it is.
        for &k in &[1, 2, 5] {
            let lo = [k as f32 * 0.75, 0.25, 0.0];
            bp.set_aabb(ids[k], Aabb::new(lo, lo.map(|c| c + 1.0)))?;
        }
        bp.set_aabb(ids[3], Aabb::new([2.25, 0.0, 0.0], [3.25, 1.0, 1.0]))?;
        bp.update()?;
        let Figures::Sap(f) = bp.stats().figures else {
            panic!("Sap's figures")
        };
        assert_eq!((f.awake, f.asleep, f.slept), (3, 37, 37));
        assert_eq!(bp.pairs().len(), before);
        // A sleeping box wakes and moves away from its neighbours: its pairs go.
        bp.set_aabb(ids[10], Aabb::new([100.0; 3], [101.0; 3]))?;
        let deleted = bp.update()?.deleted().len();
        assert_eq!(deleted, 2);
        assert_eq!(bp.pairs().len(), before - 2);
        Ok(())
    }
}
