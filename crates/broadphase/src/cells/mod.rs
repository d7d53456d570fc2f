//! Cells: the sorted sweeps that Abp's columns and Mbp's region cells share.
//!
//! A cell holds every box that touches it, fixed and dynamic boxes apart, each list sorted on
//! the sweep axis. Each update, the boxes that changed leave the cells they were in and arrive,
//! re-encoded, in the cells they touch now. Most moves are small, and most boxes that move stay
//! in exactly the cells they were in: those are not binned at all ([`Stay`]); each of their
//! cells re-encodes them from the store as it drops them, and they keep their order, which
//! the move leaves nearly sorted (Abp's frame with all of 100,000 boxes moving went from 13.7
//! to 10.5 ms). Each touched cell then
//! 1. drops its leavers (one in-place compaction), and re-encodes those that stay;
//! 2. sorts its arrivals and those that stay (PhysX keeps the moved boxes at the front of its
//!    arrays and sorts them apart, "move to front"; here they arrive in lists of their own);
//! 3. sweeps moved dynamic × moved dynamic (complete pruning), then moved dynamic × unmoved
//!    dynamic, moved dynamic × all fixed, and moved fixed × unmoved dynamic (bipartite
//!    pruning); two unmoved boxes are never tested: their pair, if any, is kept;
//! 4. diffs the pairs it found against the sorted list of pairs it reported last time, all in
//!    cache, giving created and deleted candidates;
//! 5. merges its arrivals into its sorted lists (fixed boxes are thus re-sorted only when they
//!    change: the changed ones are sorted, then merged).
//!
//! Cells are independent, so they are processed in parallel (rayon), and the arrivals are
//! binned in parallel too, one chunk of the (sorted) changed slots per thread, each chunk
//! writing its owner's per-slot records for its own range of slots. Every cell reads its
//! arrivals back chunk after chunk, which is the order of the slots however they were cut, and
//! the outputs are gathered in cell order: the result does not depend on the number of threads.
//!
//! A pair of boxes that share several cells is reported by one of them only, its *reporting
//! cell*: each entry carries a tag naming its box's first region and first cell there (see
//! [`tag`]), and the reporting cell of a pair is the lowest cell both boxes touch, in (region, u, v) order: within a
//! region, the cell at `(max u0, max v0)`; across regions, the lowest region both touch. A pair
//! whose reporting cell changes is deleted from the old cell and created in the new one: it lands in both
//! candidate lists, and [`Cells::finish`] cancels it out.

pub(crate) mod grid;

use std::ops::ControlFlow;

use crate::pairs::{cancel_common, diff_pairs, key_slots, pair_key, PairList};
use crate::prefetch::{prefetch, prefetch_tail, prefetch_whole};
use crate::prune::{bipartite, complete, BoxList, EncodedBox};
use crate::radix::RadixSorter;
use crate::store::Store;
use crate::Aabb;

/// Bits of the cut-axis fields of a tag.
const FIELD_BITS: u32 = 11;
const FIELD: u32 = (1 << FIELD_BITS) - 1;
/// The cell coordinates of a tag.
const LOCAL: u32 = (1 << (2 * FIELD_BITS)) - 1;
/// The flag of an entry whose box is in exactly two regions.
pub(crate) const TWO_REGIONS: u32 = 1 << (2 * FIELD_BITS);
const REGION_SHIFT: u32 = 24;

/// The tag of an entry (or the key of a cell): `region` (8 bits), a flag (see
/// [`TWO_REGIONS`]), then the cell coordinates `u` and `v` in that region's grid (11 bits
/// each). An entry's tag names its box's first (lowest) region and its first cell there.
#[inline]
pub(crate) fn tag(region: usize, u: u16, v: u16) -> u32 {
    debug_assert!(region < 256 && u32::from(u) <= FIELD && u32::from(v) <= FIELD);
    ((region as u32) << REGION_SHIFT) | (u32::from(u) << FIELD_BITS) | u32::from(v)
}

/// The region named by a tag or cell key.
#[inline]
pub(crate) fn tag_region(t: u32) -> usize {
    (t >> REGION_SHIFT) as usize
}

/// A tag or key without its region and flags: the cell coordinates within the region.
#[inline]
pub(crate) fn local(t: u32) -> u32 {
    t & LOCAL
}

/// Whether the cell with key `key` reports the pair of two entries tagged `a` and `b` found in
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Report {
    /// This cell reports it.
    Here,
    /// Another cell does.
    Elsewhere,
    /// This cell does, unless both boxes also touch a region below this one: both boxes start
    /// in lower regions (their first regions), which may or may not be shared.
    HereUnlessLowerRegion,
}

/// The rule of the module docs for which cell reports a pair, from the tags alone.
#[inline(always)]
pub(crate) fn reporting_cell(key: u32, a: u32, b: u32) -> Report {
    let u = ((a >> FIELD_BITS) & FIELD).max((b >> FIELD_BITS) & FIELD);
    let v = (a & FIELD).max(b & FIELD);
    if (u << FIELD_BITS) | v != key & LOCAL {
        return Report::Elsewhere;
    }
    let (ra, rb) = (a >> REGION_SHIFT, b >> REGION_SHIFT);
    match ra.max(rb).cmp(&(key >> REGION_SHIFT)) {
        std::cmp::Ordering::Equal => Report::Here,
        // Both boxes are in this cell's region and start below it. A box in exactly two
        // regions is in its first one and this one: two such boxes share a lower region
        // exactly when they start in the same one.
        std::cmp::Ordering::Less if a & b & TWO_REGIONS != 0 => {
            if ra == rb {
                Report::Elsewhere
            } else {
                Report::Here
            }
        }
        std::cmp::Ordering::Less => Report::HereUnlessLowerRegion,
        // Both boxes are in this cell's region, so neither starts above it.
        std::cmp::Ordering::Greater => Report::Elsewhere,
    }
}

/// A box arriving in a cell this update.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    pub enc: EncodedBox,
    pub slot: u32,
    pub tag: u32,
}

/// What one chunk of the changed slots binned: arrivals per cell, and the cells it touched.
/// Dynamic and fixed arrivals are kept in separate arrays, and touched cells marked in a byte
/// map: binning reads and writes the header of one vector per arrival, and with a thousand
/// cells and more the headers must stay in cache (two vectors a cell measured 30% slower at
/// a million boxes).
#[derive(Clone, Debug, Default)]
struct Chunk {
    dynamic: Vec<Vec<Arrival>>,
    fixed: Vec<Vec<Arrival>>,
    marked: Vec<bool>,
    touched: Vec<u32>,
}

impl Chunk {
    /// Empties the inboxes of the last binning and sizes them for `cells` cells.
    fn reset(&mut self, cells: usize) {
        if self.dynamic.len() != cells {
            self.clear();
            self.dynamic.resize_with(cells, Vec::new);
            self.fixed.resize_with(cells, Vec::new);
            self.marked.resize(cells, false);
        } else {
            for &c in &self.touched {
                let c = c as usize;
                self.dynamic[c].clear();
                self.fixed[c].clear();
                self.marked[c] = false;
            }
        }
        self.touched.clear();
    }

    /// Drops everything (cell indices changed).
    fn clear(&mut self) {
        self.dynamic.clear();
        self.fixed.clear();
        self.marked.clear();
        self.touched.clear();
    }

    /// The arrivals of cell `c`.
    fn inbox(&self, c: usize, fixed: bool) -> &[Arrival] {
        if fixed {
            &self.fixed[c]
        } else {
            &self.dynamic[c]
        }
    }
}

/// How many boxes that stay ahead of the one re-encoded to prefetch from the store.
const STAY_AHEAD: usize = 16;

/// How far past a cell's last arrival to prefetch the cache line its later arrivals will fill
/// (two lines of 32-byte arrivals).
const TAIL_AHEAD: usize = 4;

/// Where a binning function puts a slot's arrivals.
pub(crate) struct BinSink<'a> {
    chunk: &'a mut Chunk,
}

impl BinSink<'_> {
    /// Delivers `arrival` to cell `cell`.
    #[inline(always)]
    pub(crate) fn push(&mut self, cell: usize, arrival: Arrival, fixed: bool) {
        let chunk = &mut *self.chunk;
        if !chunk.marked[cell] {
            chunk.marked[cell] = true;
            chunk.touched.push(cell as u32);
        }
        let list = if fixed {
            &mut chunk.fixed[cell]
        } else {
            &mut chunk.dynamic[cell]
        };
        list.push(arrival);
        prefetch_tail(list, TAIL_AHEAD);
    }
}

/// One cell: its fixed and dynamic boxes, each sorted on the sweep axis, and the pairs it
/// reports.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cell {
    /// The cell's key (see [`tag`]): its region and coordinates.
    pub key: u32,
    /// Whether the cell finds pairs. Mbp keeps its out-of-bounds boxes in a cell that does
    /// not: they are held for queries only.
    pub prune: bool,
    /// `[sweep, u, v]`: the axis the cell's lists are sorted on, then the two others.
    pub axes: [usize; 3],
    pub fixed: BoxList,
    pub dynamic: BoxList,
    /// This update's arrivals, sorted.
    moved_fixed: BoxList,
    moved_dynamic: BoxList,
    /// Keys of the pairs this cell reports, sorted; and the spare list they are merged
    /// into.
    pairs: Vec<u64>,
    spare: Vec<u64>,
    /// This update's candidate created and deleted pair keys.
    created: Vec<u64>,
    deleted: Vec<u64>,
    /// Candidates tested this update.
    tests: u64,
    /// A box holding every box of the cell, kept when the owner asks ([`Cells::track_bounds`]).
    pub bounds: Option<Aabb>,
}

impl Cell {
    /// An empty cell sweeping along `axes[0]`.
    pub(crate) fn new(key: u32, prune: bool, axes: [usize; 3]) -> Self {
        Self {
            key,
            prune,
            axes,
            ..Self::default()
        }
    }

    /// Boxes held (fixed and dynamic).
    pub(crate) fn len(&self) -> usize {
        self.fixed.len() + self.dynamic.len()
    }

    /// Measures the box holding every box of the cell, or `None` when empty.
    fn measure(&self) -> Option<Aabb> {
        match (self.fixed.bounds(self.axes), self.dynamic.bounds(self.axes)) {
            (Some(a), Some(b)) => Some(a.union(&b)),
            (a, b) => a.or(b),
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.fixed.memory_bytes()
            + self.dynamic.memory_bytes()
            + self.moved_fixed.memory_bytes()
            + self.moved_dynamic.memory_bytes()
            + (self.pairs.capacity()
                + self.spare.capacity()
                + self.created.capacity()
                + self.deleted.capacity())
                * 8
    }

    /// Visits the boxes of this cell that overlap `q`, as `(slot, tag)`, until `visit`
    /// breaks.
    pub(crate) fn scan(
        &self,
        q: &Aabb,
        visit: &mut dyn FnMut(u32, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let enc = EncodedBox::new(q, self.axes);
        let x = self.axes[0];
        for list in [&self.fixed, &self.dynamic] {
            for i in list.sweep_range(q.min[x], q.max[x]) {
                if list.overlaps(i, &enc) {
                    visit(list.id(i), list.tag(i))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every slot held, with its tag.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        [&self.fixed, &self.dynamic]
            .into_iter()
            .flat_map(|l| l.ids().iter().copied().zip(l.tags().iter().copied()))
    }
}

/// Scratch space of one worker.
#[derive(Debug, Default)]
struct Scratch {
    order: Vec<u64>,
    found: Vec<u64>,
    /// The changed boxes that stay in the cell, as `(slot, tag)`, then re-encoded, dynamic
    /// and fixed apart.
    staying: Vec<(u32, u32)>,
    stay_dynamic: Vec<Arrival>,
    stay_fixed: Vec<Arrival>,
}

/// What the pruning asks of its owner, per pair or per slot.
pub(crate) struct Rules<'a, A, L> {
    /// Whether the filter lets two slots pair (never asked for two fixed proxies).
    pub allows: &'a A,
    /// For [`Report::HereUnlessLowerRegion`]: whether the two slots share a region below the
    /// given one.
    pub lower_common: &'a L,
    /// Per slot: whether it changed this update (it leaves its cells) and then whether the
    /// owner binned it or it stays (see [`Stay`]). One byte per slot tells both, so a cell
    /// dropping its changed boxes reads one array at random, not two or three.
    pub stays: &'a [Stay],
    /// The boxes, which the cells read for the boxes that stay.
    pub store: &'a Store,
}

/// What became of a slot this update, as its owner records it while binning (and sets back
/// to [`Stay::Unchanged`] after the update).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Stay {
    /// Not changed: it keeps its place in its cells, and its pairs with other unchanged
    /// boxes stand without a test.
    #[default]
    Unchanged,
    /// Changed, and binned as arrivals (or removed).
    No,
    /// In exactly the cells it was in, with the same tag, and now dynamic or fixed: those
    /// cells re-encode it from the store in place of receiving it, and it is not binned.
    Dynamic,
    Fixed,
}

/// At least this many changed slots per chunk when binning in parallel. Tiny with the
/// `testing` feature, so that the differential suite's crowds are binned in several chunks on
/// several threads.
#[cfg(not(feature = "testing"))]
const CHUNK_SLOTS: usize = 8192;
#[cfg(feature = "testing")]
const CHUNK_SLOTS: usize = 48;
/// Slots to bin in order are listed by a scan of every slot when at least one in this many
/// changed, and sorted when fewer did ([`Cells::order_slots`]).
const SCAN_BELOW: usize = 16;
/// At most this many chunks.
const MAX_CHUNKS: usize = 8;
/// Below this many changed slots, one thread does everything (rayon's start-up would cost
/// more than it saves).
#[cfg(not(feature = "testing"))]
const PARALLEL_MIN: usize = 2048;
#[cfg(feature = "testing")]
const PARALLEL_MIN: usize = 16;

/// A set of cells and what an update does to them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cells {
    cells: Vec<Cell>,
    chunks: Vec<Chunk>,
    /// Chunks used by the last binning, and the slots it binned.
    active: usize,
    binned: usize,
    /// Per cell: touched this update; boxes left it. Kept apart from the cells, which are
    /// large, so that marking stays in cache.
    is_touched: Vec<bool>,
    leavers: Vec<bool>,
    touched: Vec<u32>,
    /// Candidate created and deleted pair keys of this update.
    created: Vec<u64>,
    deleted: Vec<u64>,
    tests: u64,
    /// Every touched cell measures its bounds.
    pub track_bounds: bool,
    /// Sorts the slots to bin.
    sorter: RadixSorter,
    scratch: Vec<u32>,
}

impl Cells {
    /// The cells.
    #[inline]
    pub(crate) fn get(&self, c: usize) -> &Cell {
        &self.cells[c]
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.cells.len()
    }

    /// Candidates tested by the last update.
    pub(crate) fn tests(&self) -> u64 {
        self.tests
    }

    /// Replaces the cells in `range` by `new` ones (a new layout, a region re-cut, added or
    /// removed). The pairs of the old cells become deleted candidates: boxes whose pairs
    /// persist are binned again and find them again, which cancels them out. The caller bins
    /// again every box the old cells held.
    pub(crate) fn replace(&mut self, range: std::ops::Range<usize>, new: Vec<Cell>) {
        for cell in &self.cells[range.clone()] {
            self.deleted.extend_from_slice(&cell.pairs);
        }
        // Marks and inboxes refer to cell indices, which shift: drop them. Callers replace
        // cells before anything is marked or binned in an update.
        debug_assert!(self.touched.is_empty());
        self.cells.splice(range, new);
        let n = self.cells.len();
        self.is_touched.clear();
        self.is_touched.resize(n, false);
        self.leavers.clear();
        self.leavers.resize(n, false);
        for chunk in &mut self.chunks {
            chunk.clear();
        }
        self.active = 0;
        self.binned = 0;
    }

    /// Marks cell `c` as touched by this update.
    #[inline]
    pub(crate) fn touch(&mut self, c: usize) {
        if !self.is_touched[c] {
            self.is_touched[c] = true;
            self.touched.push(c as u32);
        }
    }

    /// Marks that boxes leave cell `c` this update.
    #[inline]
    pub(crate) fn mark_leaver(&mut self, c: usize) {
        self.touch(c);
        self.leavers[c] = true;
    }

    /// Marks every cell: when most boxes changed, compacting all beats finding which.
    pub(crate) fn mark_all_leavers(&mut self) {
        for c in 0..self.cells.len() {
            self.mark_leaver(c);
        }
    }

    /// Puts the slots to bin (each once) into increasing order: the store is then read in
    /// order, and the binning can run in parallel ([`Cells::chunks_for`]). Slots changed in
    /// scene order, as a simulation moves its bodies, come sorted already and cost one read;
    /// after churn (removed and re-inserted proxies get other slots) they do not. Then, when
    /// they are many (one slot in [`SCAN_BELOW`] or more), they are listed again by a scan of
    /// `changed` over all `slot_count` slots, which must hold for exactly the listed ones: a
    /// radix sort of 100,000 slots was 5% of a churn frame. Few are sorted.
    pub(crate) fn order_slots(
        &mut self,
        slots: &mut Vec<u32>,
        slot_count: usize,
        changed: impl Fn(usize) -> bool,
    ) {
        if slots.windows(2).all(|w| w[0] < w[1]) {
            return;
        }
        if slots.len() * SCAN_BELOW >= slot_count {
            let n = slots.len();
            slots.clear();
            slots.extend((0..slot_count as u32).filter(|&s| changed(s as usize)));
            debug_assert_eq!(slots.len(), n, "`changed` must hold for the listed slots");
        } else {
            self.scratch.resize(slots.len(), 0);
            self.sorter.sort_unchecked(slots, &mut self.scratch);
        }
    }

    /// How many chunks to bin `slots` in: one per thread when `parallel` and the update is
    /// large, provided `slots` increase (then each chunk holds a range of slots of its own,
    /// so owners can split their per-slot arrays between chunks: see [`split_slots`]); else
    /// one. A cell reads its arrivals back chunk after chunk, so they come in slot-list order
    /// whatever the chunking: the count can follow the threads without changing results.
    pub(crate) fn chunks_for(slots: &[u32], parallel: bool) -> usize {
        if !parallel || slots.len() < PARALLEL_MIN {
            return 1;
        }
        let chunks = slots
            .len()
            .div_ceil(CHUNK_SLOTS)
            .clamp(1, (2 * crate::par::threads()).min(MAX_CHUNKS));
        if chunks > 1 && slots.windows(2).all(|w| w[0] < w[1]) {
            chunks
        } else {
            1
        }
    }

    /// Bins the arrivals of `slots`, cut into `states.len()` chunks (as [`split_slots`]
    /// cuts them), in parallel when there are several: `bin(slot, sink, state)` pushes the
    /// slot's arrivals (if any) and records what its owner keeps in its chunk's `state`.
    pub(crate) fn bin<S, F>(&mut self, slots: &[u32], states: &mut [S], bin: F)
    where
        S: Send,
        F: Fn(u32, &mut BinSink<'_>, &mut S) + Sync,
    {
        let chunks = states.len().max(1);
        let per_chunk = chunk_len(slots.len(), chunks);
        if self.chunks.len() < chunks {
            self.chunks.resize_with(chunks, Chunk::default);
        }
        let cells = self.cells.len();
        // Empty what every chunk binned last time, including chunks this binning does not use.
        for chunk in &mut self.chunks {
            chunk.reset(cells);
        }
        self.active = chunks;
        self.binned = slots.len();
        let work = |chunk: &mut Chunk, slots: &[u32], state: &mut S| {
            let mut sink = BinSink { chunk };
            for &slot in slots {
                bin(slot, &mut sink, state);
            }
        };
        let jobs = self.chunks[..chunks]
            .iter_mut()
            .zip(slots.chunks(per_chunk).zip(states.iter_mut()));
        if chunks > 1 {
            par::for_each(jobs.collect(), |(chunk, (s, st))| work(chunk, s, st));
        } else {
            jobs.for_each(|(chunk, (s, st))| work(chunk, s, st));
        }
        for k in 0..chunks {
            for i in 0..self.chunks[k].touched.len() {
                let c = self.chunks[k].touched[i] as usize;
                self.touch(c);
            }
        }
    }

    /// Prunes every touched cell (in parallel when `parallel` and the update is large) and
    /// gathers their candidate changes.
    pub(crate) fn prune<A, L>(&mut self, parallel: bool, rules: &Rules<'_, A, L>)
    where
        A: Fn(u32, u32) -> bool + Sync,
        L: Fn(u32, u32, usize) -> bool + Sync,
    {
        self.touched.sort_unstable();
        let chunks = &self.chunks[..self.active];
        let (is_touched, leavers, track) = (&self.is_touched, &self.leavers, self.track_bounds);
        let work = |c: usize, cell: &mut Cell, scratch: &mut Scratch| {
            prune_cell(cell, c, leavers[c], chunks, scratch, rules);
            if track {
                cell.bounds = cell.measure();
            }
        };
        if parallel
            && self.binned >= PARALLEL_MIN
            && self.touched.len() > 1
            && crate::par::threads() > 1
        {
            par::for_each_touched(&mut self.cells, is_touched, work);
        } else {
            let mut scratch = Scratch::default();
            for &c in &self.touched {
                let c = c as usize;
                work(c, &mut self.cells[c], &mut scratch);
            }
        }
        let mut tests = 0;
        for &c in &self.touched {
            let c = c as usize;
            let cell = &mut self.cells[c];
            self.created.extend_from_slice(&cell.created);
            self.deleted.extend_from_slice(&cell.deleted);
            tests += cell.tests;
            self.is_touched[c] = false;
            self.leavers[c] = false;
        }
        self.tests = tests;
        self.touched.clear();
    }

    /// The update's created and deleted pairs, each sorted, the pairs in both (they changed
    /// reporting cell) removed from both. Call [`Cells::clear_changes`] once they are applied.
    pub(crate) fn finish(&mut self, parallel: bool) -> (&[u64], &[u64]) {
        let (created, deleted) = (&mut self.created, &mut self.deleted);
        let both = parallel && created.len().min(deleted.len()) >= crate::par::SORT_BOTH_MIN;
        crate::par::both(both, || created.sort_unstable(), || deleted.sort_unstable());
        // Each pair has one reporting cell, so no cell reports a key another reports too.
        debug_assert!(self.created.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(self.deleted.windows(2).all(|w| w[0] < w[1]));
        cancel_common(&mut self.created, &mut self.deleted);
        (&self.created, &self.deleted)
    }

    pub(crate) fn clear_changes(&mut self) {
        self.created.clear();
        self.deleted.clear();
    }

    /// The pairs of every cell that has some, cell by cell.
    pub(crate) fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.cells
            .iter()
            .filter(|c| !c.pairs.is_empty())
            .map(|c| PairList {
                keys: &c.pairs,
                slots: key_slots,
            })
            .collect()
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.cells.iter().map(Cell::memory_bytes).sum::<usize>()
            + self
                .chunks
                .iter()
                .flat_map(|ch| ch.fixed.iter().chain(&ch.dynamic))
                .map(|v| v.capacity() * size_of::<Arrival>())
                .sum::<usize>()
            + self.cells.capacity() * size_of::<Cell>()
    }
}

/// Positions per chunk when `len` slots are binned in `chunks` chunks.
fn chunk_len(len: usize, chunks: usize) -> usize {
    len.div_ceil(chunks.max(1)).max(1)
}

/// Cuts a per-slot array into the parts each of `chunks` chunks of `slots` (increasing, see
/// [`Cells::chunks_for`]) may write: `(first slot, part)`, the parts covering the array.
pub(crate) fn split_slots<'a, T>(
    array: &'a mut [T],
    slots: &[u32],
    chunks: usize,
) -> Vec<(usize, &'a mut [T])> {
    let per_chunk = chunk_len(slots.len(), chunks);
    let mut parts = Vec::with_capacity(chunks);
    let (mut rest, mut base) = (array, 0);
    for c in 1..chunks {
        let Some(&next) = slots.get(c * per_chunk) else {
            break;
        };
        let next = (next as usize).clamp(base, base + rest.len());
        let (part, tail) = rest.split_at_mut(next - base);
        parts.push((base, part));
        (rest, base) = (tail, next);
    }
    parts.push((base, rest));
    parts
}

/// Steps 1 to 5 of the module docs for cell `c`.
fn prune_cell<A, L>(
    cell: &mut Cell,
    c: usize,
    leaver: bool,
    chunks: &[Chunk],
    scratch: &mut Scratch,
    rules: &Rules<'_, A, L>,
) where
    A: Fn(u32, u32) -> bool,
    L: Fn(u32, u32, usize) -> bool,
{
    let (stays, store) = (rules.stays, rules.store);
    let changed = |slot: u32| stays[slot as usize] != Stay::Unchanged;
    let (stay_dynamic, stay_fixed) = (&mut scratch.stay_dynamic, &mut scratch.stay_fixed);
    stay_dynamic.clear();
    stay_fixed.clear();
    if leaver {
        // Changed boxes leave; those that stay in this cell come back re-encoded, in the order
        // they had, which their small moves leave nearly sorted.
        let staying = &mut scratch.staying;
        staying.clear();
        let mut stay = |slot: u32, tag: u32| {
            if matches!(stays[slot as usize], Stay::Dynamic | Stay::Fixed) {
                staying.push((slot, tag));
            }
        };
        let ahead = |id: u32| {
            if let Some(s) = stays.get(id as usize) {
                prefetch(s);
            }
        };
        cell.fixed.retain(|id| !changed(id), ahead, &mut stay);
        cell.dynamic.retain(|id| !changed(id), ahead, &mut stay);
        // The stayers' boxes lie all over the store: each is prefetched a few stayers ahead.
        for k in 0..staying.len() {
            if let Some(&(ahead, _)) = staying.get(k + STAY_AHEAD) {
                prefetch_whole(store.aabb_at(ahead as usize));
            }
            let (slot, tag) = staying[k];
            let enc = EncodedBox::new(store.aabb_at(slot as usize), cell.axes);
            let arrival = Arrival { enc, slot, tag };
            if stays[slot as usize] == Stay::Fixed {
                stay_fixed.push(arrival);
            } else {
                stay_dynamic.push(arrival);
            }
        }
    }
    gather_sorted(
        chunks,
        c,
        false,
        &mut scratch.order,
        stay_dynamic,
        &mut cell.moved_dynamic,
    );
    gather_sorted(
        chunks,
        c,
        true,
        &mut scratch.order,
        stay_fixed,
        &mut cell.moved_fixed,
    );
    cell.created.clear();
    cell.deleted.clear();
    cell.tests = 0;
    if cell.prune {
        let key = cell.key;
        let region = tag_region(key);
        let found = &mut scratch.found;
        found.clear();
        let (allows, lower_common) = (rules.allows, rules.lower_common);
        let mut report = |a: &BoxList, i: usize, b: &BoxList, j: usize| {
            let (x, y) = (a.id(i), b.id(j));
            let here = match reporting_cell(key, a.tag(i), b.tag(j)) {
                Report::Here => true,
                Report::Elsewhere => false,
                Report::HereUnlessLowerRegion => !lower_common(x, y, region),
            };
            if here && allows(x, y) {
                found.push(pair_key(x, y));
            }
        };
        let (md, mf, d, f) = (
            &cell.moved_dynamic,
            &cell.moved_fixed,
            &cell.dynamic,
            &cell.fixed,
        );
        // Fixed boxes are never swept against fixed boxes. The five sweeps cover disjoint
        // pairs of lists, and a pair's reporting cell is unique: each pair is found at most once.
        let mut tests = complete(md, |i, j| report(md, i, md, j));
        tests += bipartite(md, d, |i, j| report(md, i, d, j));
        tests += bipartite(md, f, |i, j| report(md, i, f, j));
        tests += bipartite(md, mf, |i, j| report(md, i, mf, j));
        tests += bipartite(mf, d, |i, j| report(mf, i, d, j));
        cell.tests = tests;
        found.sort_unstable();
        diff_pairs(
            &cell.pairs,
            found,
            changed,
            &mut cell.spare,
            &mut cell.created,
            &mut cell.deleted,
        );
        std::mem::swap(&mut cell.pairs, &mut cell.spare);
    }
    merge_arrivals(&mut cell.dynamic, &mut cell.moved_dynamic);
    merge_arrivals(&mut cell.fixed, &mut cell.moved_fixed);
}

/// Sorts cell `c`'s arrivals from every chunk on the sweep axis, merged with the boxes that
/// `stay` in it (sorted here too), into `list` (emptied first). Sorting `key << 32 | chunk <<
/// 28 | position` words and then copying is cheaper than moving whole arrivals around; chunk
/// and position make the order total, and `stay` is sorted stably and comes first on equal
/// keys, so the result is fixed.
fn gather_sorted(
    chunks: &[Chunk],
    c: usize,
    fixed: bool,
    order: &mut Vec<u64>,
    stay: &mut [Arrival],
    list: &mut BoxList,
) {
    list.clear();
    let inbox = |k: usize| chunks[k].inbox(c, fixed);
    order.clear();
    for k in 0..chunks.len() {
        order.extend(
            inbox(k)
                .iter()
                .enumerate()
                .map(|(i, a)| (u64::from(a.enc.min_x) << 32) | ((k as u64) << 28) | i as u64),
        );
    }
    if order.is_empty() && stay.is_empty() {
        return;
    }
    order.sort_unstable();
    sort_nearly_sorted(stay);
    let arrived = order.iter().map(|&o| {
        let a = &inbox(((o >> 28) & 0xF) as usize)[(o & 0x0FFF_FFFF) as usize];
        (a.enc.min_x, a)
    });
    let stayed = stay.iter().map(|a| (a.enc.min_x, a));
    list.extend_sorted(Merge::new(stayed, arrived).map(|a| (&a.enc, a.slot, a.tag)));
}

/// Sorts `items` stably on the sweep axis: by insertion while they are nearly sorted (a box
/// that stays in its cell moved a little since the list was sorted), by the library's stable
/// sort once the moves are many. Either way the order is the one stable order.
fn sort_nearly_sorted(items: &mut [Arrival]) {
    let key = |a: &Arrival| a.enc.min_x;
    // Element moves allowed before giving up on insertion: a few per item.
    let mut budget = 8 * items.len() + 64;
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && key(&items[j - 1]) > key(&items[j]) {
            items.swap(j - 1, j);
            j -= 1;
        }
        budget = budget.saturating_sub(i - j);
        if budget == 0 {
            // The prefix is sorted stably: sorting the whole stably gives the same order as
            // sorting the original.
            items.sort_by_key(key);
            return;
        }
    }
}

/// Merges two sequences of `(key, item)` sorted on `key`; on equal keys `a`'s come first.
struct Merge<'a, I: Iterator<Item = (u32, &'a Arrival)>, J: Iterator<Item = (u32, &'a Arrival)>> {
    a: std::iter::Peekable<I>,
    b: std::iter::Peekable<J>,
    left: usize,
}

impl<'a, I, J> Merge<'a, I, J>
where
    I: ExactSizeIterator<Item = (u32, &'a Arrival)>,
    J: ExactSizeIterator<Item = (u32, &'a Arrival)>,
{
    fn new(a: I, b: J) -> Self {
        let left = a.len() + b.len();
        Self {
            a: a.peekable(),
            b: b.peekable(),
            left,
        }
    }
}

impl<'a, I, J> Iterator for Merge<'a, I, J>
where
    I: Iterator<Item = (u32, &'a Arrival)>,
    J: Iterator<Item = (u32, &'a Arrival)>,
{
    type Item = &'a Arrival;

    #[inline]
    fn next(&mut self) -> Option<&'a Arrival> {
        let take_b = match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) => y.0 < x.0,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        let item = if take_b { self.b.next() } else { self.a.next() };
        self.left = self.left.saturating_sub(usize::from(item.is_some()));
        item.map(|(_, x)| x)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a, I, J> ExactSizeIterator for Merge<'a, I, J>
where
    I: Iterator<Item = (u32, &'a Arrival)>,
    J: Iterator<Item = (u32, &'a Arrival)>,
{
}

/// Merges a cell's sorted arrivals into its sorted list and empties `arrivals`. When every
/// box of the cell moved (all of them, in a scene where everything moves), the arrivals
/// simply become the list.
fn merge_arrivals(list: &mut BoxList, arrivals: &mut BoxList) {
    if list.is_empty() {
        std::mem::swap(list, arrivals);
    } else {
        list.merge_in(arrivals);
        list.shrink();
    }
    arrivals.clear();
}

/// The parallel loops, with rayon or without.
mod par {
    use super::{Cell, Scratch};

    /// Runs `f` on every job, in parallel.
    #[cfg(feature = "parallel")]
    pub(super) fn for_each<J: Send>(jobs: Vec<J>, f: impl Fn(J) + Sync + Send) {
        use rayon::prelude::*;
        jobs.into_par_iter().for_each(f);
    }

    #[cfg(not(feature = "parallel"))]
    pub(super) fn for_each<J: Send>(jobs: Vec<J>, f: impl Fn(J) + Sync + Send) {
        jobs.into_iter().for_each(f);
    }

    /// Runs `f` on every touched cell, in parallel, each worker with its own scratch.
    #[cfg(feature = "parallel")]
    pub(super) fn for_each_touched(
        cells: &mut [Cell],
        is_touched: &[bool],
        f: impl Fn(usize, &mut Cell, &mut Scratch) + Sync + Send,
    ) {
        use rayon::prelude::*;
        use std::cell::RefCell;
        thread_local! {
            // Each worker keeps its scratch from one update to the next: no allocation once
            // warm (rayon's `for_each_init` would make one per piece of work it splits off).
            static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
        }
        // One task per cell, as in Grid's buckets: rayon's own cut leaves a thread idle while
        // the other finishes its last run of cells.
        cells
            .par_iter_mut()
            .with_max_len(1)
            .enumerate()
            .filter(|(c, _)| is_touched[*c])
            .for_each(|(c, cell)| {
                SCRATCH.with(|s| match s.try_borrow_mut() {
                    Ok(mut scratch) => f(c, cell, &mut scratch),
                    // Re-entered on this thread (rayon may run other work while waiting): a
                    // fresh scratch.
                    Err(_) => f(c, cell, &mut Scratch::default()),
                });
            });
    }

    #[cfg(not(feature = "parallel"))]
    pub(super) fn for_each_touched(
        cells: &mut [Cell],
        is_touched: &[bool],
        f: impl Fn(usize, &mut Cell, &mut Scratch) + Sync + Send,
    ) {
        let mut scratch = Scratch::default();
        for (c, cell) in cells.iter_mut().enumerate() {
            if is_touched[c] {
                f(c, cell, &mut scratch);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arrival(min_x: u32, slot: u32) -> Arrival {
        Arrival {
            enc: EncodedBox {
                min_x,
                max_x: min_x,
                uv: [0; 4],
            },
            slot,
            tag: 0,
        }
    }

    proptest! {
        /// Nearly sorted or shuffled, with ties, the boxes that stay come out in the one
        /// stable order (the insertion gives up past its budget and the library sort takes
        /// over: both paths are taken here), and merge with the arrivals stably.
        #[test]
        fn stayers_sort_stably_and_merge_first_on_ties(
            keys in prop::collection::vec(0u32..40, 0..300),
            shuffled in any::<bool>(),
            arrived in prop::collection::vec(0u32..40, 0..20),
        ) {
            let mut keys = keys;
            if !shuffled {
                keys.sort_unstable();
                // Small moves: each key off by at most 2.
                for (i, k) in keys.iter_mut().enumerate() {
                    *k += (i % 5) as u32 / 2;
                }
            }
            let mut stay: Vec<Arrival> =
                keys.iter().enumerate().map(|(i, &k)| arrival(k, i as u32)).collect();
            let mut expected = stay.clone();
            expected.sort_by_key(|a| a.enc.min_x);
            sort_nearly_sorted(&mut stay);
            let order = |v: &[Arrival]| v.iter().map(|a| (a.enc.min_x, a.slot)).collect::<Vec<_>>();
            prop_assert_eq!(order(&stay), order(&expected));

            let mut arrived: Vec<Arrival> =
                arrived.iter().enumerate().map(|(i, &k)| arrival(k, 1000 + i as u32)).collect();
            arrived.sort_by_key(|a| a.enc.min_x);
            let merged: Vec<&Arrival> = Merge::new(
                stay.iter().map(|a| (a.enc.min_x, a)),
                arrived.iter().map(|a| (a.enc.min_x, a)),
            )
            .collect();
            let mut both: Vec<Arrival> = stay.iter().chain(&arrived).copied().collect();
            both.sort_by_key(|a| a.enc.min_x);
            let merged: Vec<Arrival> = merged.into_iter().copied().collect();
            prop_assert_eq!(order(&merged), order(&both));
        }
    }

    #[test]
    fn the_reporting_cell_is_unique() {
        // Two boxes sharing cells u 2..=3, v 2..=2 of region 0: only (2, 2) reports them.
        let (a, b) = (tag(0, 1, 2), tag(0, 2, 1));
        let reporting: Vec<(u16, u16)> = (2..=3)
            .flat_map(|u| (2..=2).map(move |v| (u, v)))
            .filter(|&(u, v)| reporting_cell(tag(0, u, v), a, b) == Report::Here)
            .collect();
        assert_eq!(reporting, vec![(2, 2)]);
    }

    #[test]
    fn boxes_in_two_regions_need_no_lookup() {
        let two = |r: usize| tag(r, 0, 0) | TWO_REGIONS;
        // Both in region 5 and one region below: the same one, or not.
        assert_eq!(
            reporting_cell(tag(5, 0, 0), two(3), two(3)),
            Report::Elsewhere
        );
        assert_eq!(reporting_cell(tag(5, 0, 0), two(3), two(4)), Report::Here);
        // One in more regions: the lists decide.
        assert_eq!(
            reporting_cell(tag(5, 0, 0), two(3), tag(4, 0, 0)),
            Report::HereUnlessLowerRegion
        );
        assert_eq!(local(two(7) | tag(0, 5, 9)), local(tag(0, 5, 9)));
    }

    #[test]
    fn regions_order_reporting_cells() {
        // Both start in region 3: a cell of region 3 reports them, region 5 asks about lower ones.
        let (a, b) = (tag(3, 0, 0), tag(3, 0, 0));
        assert_eq!(reporting_cell(tag(3, 0, 0), a, b), Report::Here);
        assert_eq!(
            reporting_cell(tag(5, 0, 0), a, b),
            Report::HereUnlessLowerRegion
        );
        // One starts in region 5 itself: no lower region can hold both.
        assert_eq!(reporting_cell(tag(5, 0, 0), a, tag(5, 0, 0)), Report::Here);
        assert_eq!(tag_region(tag(200, 7, 9)), 200);
    }

    #[test]
    fn slots_split_where_chunks_start() {
        let slots: Vec<u32> = vec![1, 4, 5, 9, 12, 13, 20];
        let mut array = vec![0u8; 25];
        for chunks in 1..=9 {
            let per_chunk = chunk_len(slots.len(), chunks);
            let k_chunks: Vec<&[u32]> = slots.chunks(per_chunk).collect();
            let parts = split_slots(&mut array, &slots, chunks);
            // As many parts as `bin` makes chunks, each holding its chunk's slots.
            assert_eq!(parts.len(), k_chunks.len());
            assert_eq!(chunk_len(slots.len(), parts.len()), per_chunk);
            let mut covered = 0;
            for ((base, part), ks) in parts.iter().zip(&k_chunks) {
                assert_eq!(*base, covered);
                covered += part.len();
                assert!(ks.iter().all(|&k| (*base..covered).contains(&(k as usize))));
            }
            assert_eq!(covered, array.len());
        }
    }

    #[test]
    fn cancel_and_diff() {
        let (mut a, mut b) = (vec![1, 3, 5, 7], vec![2, 3, 7, 9]);
        cancel_common(&mut a, &mut b);
        assert_eq!((a, b), (vec![1, 5], vec![2, 9]));
        let (mut out, mut created, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
        let key = |a: u32, b: u32| pair_key(a, b);
        let old = [key(1, 2), key(3, 4), key(5, 6)];
        let found = [key(1, 2), key(7, 8)];
        diff_pairs(
            &old,
            &found,
            |s| s == 3 || s == 7,
            &mut out,
            &mut created,
            &mut deleted,
        );
        assert_eq!(out, vec![key(1, 2), key(5, 6), key(7, 8)]);
        assert_eq!(created, vec![key(7, 8)]);
        assert_eq!(deleted, vec![key(3, 4)]);
    }
}
