//! Binning: the changed boxes of one update, cut into chunks of slots (one per thread), put
//! as arrivals into the inboxes of the cells they touch, and what became of each slot
//! ([`Stay`], kept in the owner's [`Binning`]). Abp and Mbp each say only where one slot goes
//! (a closure, inlined in the loop over the slots); the cut, the per-slot records and the
//! parallel loop are here.

use crate::prefetch::prefetch_tail;
use crate::prune::EncodedBox;
use crate::slack::{self, grow, Trim};

use super::Cells;

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
pub(super) struct Chunk {
    pub(super) dynamic: Vec<Vec<Arrival>>,
    pub(super) fixed: Vec<Vec<Arrival>>,
    marked: Vec<bool>,
    touched: Vec<u32>,
    /// Per cell, when a new layout is loaded ([`Cells::bin`]): the slots arriving, with
    /// their tags (`slot << 32 | tag`).
    pub(super) listed: Vec<Vec<u64>>,
    /// Arrivals of the last binning, and the most of one binning since the inboxes were
    /// last released: about the room they hold.
    arrivals: usize,
    peak: usize,
    trim: Trim,
}

impl Chunk {
    /// Empties the inboxes of the last binning and sizes them for `cells` cells.
    ///
    /// The inboxes keep their memory from one binning to the next, unless binnings keep
    /// bringing far fewer arrivals than they have room for ([`Trim`]): after the first update,
    /// which bins every box, most boxes that move stay in their cells and few arrive (at
    /// 100,000 boxes moving, inboxes kept from the first update were 65 bytes a box).
    pub(super) fn reset(&mut self, cells: usize) {
        let last = std::mem::take(&mut self.arrivals);
        self.peak = self.peak.max(last);
        let release = self
            .trim
            .count(last, self.peak, size_of::<Arrival>())
            .is_some();
        if self.dynamic.len() != cells || release {
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

    /// Drops everything (cell indices changed, or the inboxes are released).
    pub(super) fn clear(&mut self) {
        self.dynamic.clear();
        self.fixed.clear();
        self.marked.clear();
        self.touched.clear();
        self.listed = Vec::new();
        self.arrivals = 0;
        self.peak = 0;
        self.trim = Trim::default();
    }

    /// The arrivals of cell `c`.
    pub(super) fn inbox(&self, c: usize, fixed: bool) -> &[Arrival] {
        if fixed {
            &self.fixed[c]
        } else {
            &self.dynamic[c]
        }
    }
}

/// How far past a cell's last arrival to prefetch the cache line its later arrivals will fill
/// (two lines of 32-byte arrivals).
const TAIL_AHEAD: usize = 4;

/// Where a binning function puts a slot's arrivals: a chunk's inboxes, or, when a new layout
/// is loaded ([`Cells::bin`]), only the slot and tag, in a list per cell.
pub(crate) struct BinSink<'a> {
    chunk: &'a mut Chunk,
    slots_only: bool,
}

impl BinSink<'_> {
    /// Delivers `arrival` to cell `cell`.
    #[inline(always)]
    pub(crate) fn push(&mut self, cell: usize, arrival: Arrival, fixed: bool) {
        let chunk = &mut *self.chunk;
        chunk.mark(cell);
        if self.slots_only {
            let list = &mut chunk.listed[cell];
            // Lists of every box, held beside the cells while they load: an eighth to spare.
            grow(list, 1);
            list.push((u64::from(arrival.slot) << 32) | u64::from(arrival.tag));
            prefetch_tail(list, 2 * TAIL_AHEAD);
            return;
        }
        chunk.arrivals += 1;
        let list = if fixed {
            &mut chunk.fixed[cell]
        } else {
            &mut chunk.dynamic[cell]
        };
        list.push(arrival);
        prefetch_tail(list, TAIL_AHEAD);
    }
}

impl Chunk {
    #[inline(always)]
    fn mark(&mut self, cell: usize) {
        if !self.marked[cell] {
            self.marked[cell] = true;
            self.touched.push(cell as u32);
        }
    }
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

impl Stay {
    /// A changed slot that stays in exactly its cells, now fixed or dynamic.
    #[inline]
    pub(crate) fn kept(fixed: bool) -> Self {
        if fixed {
            Self::Fixed
        } else {
            Self::Dynamic
        }
    }
}

/// What became of each slot one update bins: what Abp and Mbp keep beside their cells. The
/// owner lists the slots (each once; [`Cells::order_slots`] sorts them), [`Cells::bin`]
/// records what became of each, and [`Cells::finish`] sets them back.
#[derive(Clone, Debug, Default)]
pub(crate) struct Binning {
    /// Per slot, written for every slot binned: whether it changed, and whether it stays in
    /// the cells it was in, so that they re-encode it in place instead of receiving it.
    stays: Vec<Stay>,
}

impl Binning {
    /// Sizes the per-slot records for `slot_count` slots.
    pub(crate) fn grow(&mut self, slot_count: usize) {
        if self.stays.len() < slot_count {
            slack::resize(&mut self.stays, slot_count, Stay::Unchanged);
        }
    }

    /// What became of every slot this update ([`Rules::stays`](super::Rules::stays)).
    #[inline]
    pub(crate) fn stays(&self) -> &[Stay] {
        &self.stays
    }

    /// The binned `slots` are unchanged again until they next change.
    pub(super) fn reset(&mut self, slots: &[u32]) {
        for &s in slots {
            self.stays[s as usize] = Stay::Unchanged;
        }
    }
}

/// What one chunk of a binning writes: what became of its own range of slots (from slot
/// `base`), and the owner's `state` for them.
struct BinChunk<'a, S> {
    base: usize,
    stays: &'a mut [Stay],
    state: S,
}

/// At least this many changed slots per chunk when binning in parallel. Tiny in the
/// crate's tests (`cfg(test)`), so that the differential suite's crowds are binned in several chunks on
/// several threads.
#[cfg(not(test))]
const CHUNK_SLOTS: usize = 8192;
#[cfg(test)]
const CHUNK_SLOTS: usize = 48;
/// Slots to bin in order are listed by a scan of every slot when at least one in this many
/// changed, and sorted when fewer did ([`Cells::order_slots`]).
const SCAN_BELOW: usize = 16;
/// At most this many chunks.
const MAX_CHUNKS: usize = 8;
/// Below this many changed slots, one thread does everything (rayon's start-up would cost
/// more than it saves).
#[cfg(not(test))]
pub(super) const PARALLEL_MIN: usize = 2048;
#[cfg(test)]
pub(super) const PARALLEL_MIN: usize = 16;

impl Cells {
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

    /// Bins `slots` (increasing, or one chunk) in chunks, in parallel when there are several,
    /// and records what became of each in `binning`. `states` holds the owner's per-slot
    /// records of each chunk, `(first slot, state)`, cut as [`split_slots`] cuts the slots
    /// into [`Cells::chunks_for`] chunks. `bin(slot, i, sink, state)` pushes the slot's
    /// arrivals (if any), records what its owner keeps at index `i` of its chunk's `state`,
    /// and returns what became of the slot. Returns the states, in chunk order.
    ///
    /// `new_layout`: every cell is empty and every box arrives. Then only each arrival's slot
    /// and tag are kept, and the cells encode the boxes from the store as they load them: the
    /// arrivals of every box (32 bytes each, 65 bytes a box at 100,000 boxes) are never held
    /// beside the cells, and the lists of slots go once the cells have loaded them.
    pub(crate) fn bin<S, F>(
        &mut self,
        binning: &mut Binning,
        slots: &[u32],
        states: Vec<(usize, S)>,
        new_layout: bool,
        bin: F,
    ) -> Vec<S>
    where
        S: Send,
        F: Fn(u32, usize, &mut BinSink<'_>, &mut S) -> Stay + Sync,
    {
        debug_assert!(!new_layout || self.cells.iter().all(|c| c.len() == 0));
        self.listed = new_layout;
        // `split_slots` cuts the same way into as many chunks as it made.
        let chunks = states.len();
        let mut states: Vec<BinChunk<'_, S>> = states
            .into_iter()
            .zip(split_slots(&mut binning.stays, slots, chunks))
            .map(|((base, state), (at, stays))| {
                debug_assert_eq!(base, at, "the owner's parts are cut as `split_slots` cuts");
                BinChunk { base, stays, state }
            })
            .collect();
        self.bin_chunks(slots, &mut states, new_layout, |slot, sink, chunk| {
            let i = slot as usize - chunk.base;
            chunk.stays[i] = bin(slot, i, sink, &mut chunk.state);
        });
        states.into_iter().map(|chunk| chunk.state).collect()
    }

    /// Bins the arrivals of `slots`, cut into `states.len()` chunks (as [`split_slots`]
    /// cuts them), in parallel when there are several: `bin(slot, sink, state)` pushes the
    /// slot's arrivals (if any) and records what its owner keeps in its chunk's `state`; only
    /// their slots and tags when `slots_only`.
    fn bin_chunks<S, F>(&mut self, slots: &[u32], states: &mut [S], slots_only: bool, bin: F)
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
            if slots_only {
                chunk.listed.resize_with(cells, Vec::new);
            }
        }
        self.active = chunks;
        self.binned = slots.len();
        let work = |chunk: &mut Chunk, slots: &[u32], state: &mut S| {
            let mut sink = BinSink { chunk, slots_only };
            for &slot in slots {
                bin(slot, &mut sink, state);
            }
        };
        let jobs = self.chunks[..chunks]
            .iter_mut()
            .zip(slots.chunks(per_chunk).zip(states.iter_mut()));
        if chunks > 1 {
            for_each(jobs.collect(), |(chunk, (s, st))| work(chunk, s, st));
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

/// Runs `f` on every job, in parallel.
#[cfg(feature = "parallel")]
fn for_each<J: Send>(jobs: Vec<J>, f: impl Fn(J) + Sync + Send) {
    use rayon::prelude::*;
    jobs.into_par_iter().for_each(f);
}

#[cfg(not(feature = "parallel"))]
fn for_each<J: Send>(jobs: Vec<J>, f: impl Fn(J) + Sync + Send) {
    jobs.into_iter().for_each(f);
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
