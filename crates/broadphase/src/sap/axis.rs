//! One axis of the sweep-and-prune: the sorted endpoints of the awake boxes, the two sorted
//! lists of the asleep boxes, and the pass that brings the awake endpoints up to date while
//! reporting the pairs that start to overlap.

use std::mem;
use std::ops::Range;

use crate::gallop::gallop;
use crate::pairs::pair_key;
use crate::prefetch::prefetch;
use crate::prune::{signed, BoxList, EncodedBox};
use crate::radix::RadixSorter;
use crate::store::Store;

pub(super) use super::end::End;
use super::probe::Probe;

/// How many endpoints ahead the pass prefetches a moved box's keys.
const PREFETCH_AHEAD: usize = 16;

// Per-slot state bits (the `state` array of `Sap`), shared with the passes.
/// The box's endpoints are in the awake arrays.
pub(super) const AWAKE: u8 = 1;
/// The box's entries in the asleep lists are current (others are stale and skipped).
pub(super) const ASLEEP: u8 = 2;
/// This update: the box's keys changed; its awake endpoints move.
pub(super) const MOVED: u8 = 4;
/// This update: the box joins with its new keys; box pruning finds its pairs.
pub(super) const FRESH: u8 = 8;
/// This update: the box leaves (removed or re-inserted); its awake endpoints are dropped and
/// all its pairs deleted.
pub(super) const DROP: u8 = 16;
/// The box is fixed: never paired with another fixed box.
pub(super) const FIXED: u8 = 32;
/// At the end of this update the box goes to sleep.
pub(super) const GOING: u8 = 64;

/// A box joining the awake arrays this update, with the keys it joins at: a box woken (its
/// old keys: it then moves in the passes like any other) or a fresh one (its new keys).
#[derive(Clone, Copy, Debug)]
pub(super) struct Joiner {
    pub slot: u32,
    pub keys: [u32; 6],
}

/// What the three axis passes read and never write.
pub(super) struct Shared<'a> {
    /// This update's joining boxes.
    pub joiners: &'a [Joiner],
    /// Per slot: the keys the box has after this update.
    pub keys: &'a [[u32; 6]],
    /// Per slot: the state bits.
    pub state: &'a [u8],
    pub store: &'a Store,
    /// Whether every joining box is fresh and no box is awake: the awake arrays are built
    /// from the joining boxes, and those [`GOING`] go straight into the asleep lists.
    pub only_fresh: bool,
    /// How many fresh boxes are [`GOING`] to sleep at once.
    pub fresh_going: usize,
}

impl Shared<'_> {
    /// Whether two boxes whose boxes now overlap may pair: neither joins fresh (box pruning
    /// reports those), not both fixed, and the filter allows them.
    #[inline]
    pub(super) fn pairable(&self, a: u32, b: u32) -> bool {
        let (sa, sb) = (self.state[a as usize], self.state[b as usize]);
        (sa | sb) & FRESH == 0 && sa & sb & FIXED == 0 && self.store.allows_unless_both_fixed(a, b)
    }
}

/// Figures of one axis's last pass.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AxisCounts {
    /// Awake endpoints that passed one another (the insertion sort's moves).
    pub swaps: u64,
    /// Asleep endpoints a moving endpoint crossed towards overlap (each tested).
    pub crossed: u64,
    /// Overlap tests made (one per swap of a minimum past a maximum, one per crossing).
    pub tests: u64,
}

/// One axis.
#[derive(Clone, Debug)]
pub(super) struct Axis {
    /// 0, 1 or 2.
    pub index: usize,
    /// The awake boxes' endpoints, sorted by [`End::order`].
    pub ends: Vec<End>,
    /// The awake array's previous buffer, reused by the next merge (scratch).
    spare: Vec<End>,
    /// The joining endpoints in order, as endpoint ids (`i` for the minimum of joiner `i`,
    /// `n + i` for its maximum, with `n` joiners), and their coordinates.
    join_ids: Vec<u32>,
    join_keys: Vec<u32>,
    /// The asleep boxes sorted by their minimum on this axis (a [`BoxList`] with this axis as
    /// the sweep axis; the pruning kernel sweeps it directly).
    pub asleep_min: BoxList,
    /// The asleep boxes sorted by their maximum: in this list `min_x` holds the maximum and
    /// `max_x` the minimum.
    pub asleep_max: BoxList,
    /// The fresh boxes [`GOING`] to sleep at once that an update with only fresh boxes
    /// set aside, sorted as the asleep lists are: they join those at the end of the update,
    /// once box pruning has paired the fresh boxes ([`Axis::sleep_fresh`]).
    going: Option<(BoxList, BoxList)>,
    /// At least the widest awake box on this axis (for queries).
    pub awake_width: f64,
    /// Pair keys of the pairs found starting to overlap this update (may repeat across axes).
    pub created: Vec<u64>,
    pub counts: AxisCounts,
    sorter: RadixSorter,
}

impl Axis {
    pub(super) fn new(index: usize) -> Self {
        Self {
            index,
            ends: Vec::new(),
            spare: Vec::new(),
            join_ids: Vec::new(),
            join_keys: Vec::new(),
            asleep_min: BoxList::default(),
            asleep_max: BoxList::default(),
            going: None,
            awake_width: 0.0,
            created: Vec::new(),
            counts: AxisCounts::default(),
            sorter: RadixSorter::default(),
        }
    }

    /// Radix-sorts the endpoints of the joining boxes on this axis.
    fn sort_joining(&mut self, joiners: &[Joiner]) {
        let n = joiners.len();
        self.join_keys.clear();
        self.join_ids.clear();
        if n == 0 {
            return;
        }
        let a = self.index;
        // Minima first: the sort is stable, so at equal coordinates a minimum stays first.
        self.join_keys.extend(joiners.iter().map(|j| j.keys[a]));
        self.join_keys.extend(joiners.iter().map(|j| j.keys[3 + a]));
        self.join_ids.extend(0..2 * n as u32);
        self.sorter
            .sort_unchecked(&mut self.join_keys, &mut self.join_ids);
    }

    /// The joining endpoints in order, each placed among the asleep endpoints.
    fn joining<'s>(&'s self, joiners: &'s [Joiner]) -> impl Iterator<Item = End> + 's {
        joining(
            &self.join_ids,
            joiners,
            self.index,
            &self.asleep_min,
            &self.asleep_max,
        )
    }

    /// The fresh boxes' minima on this axis, in order, as the pruning kernel's boxes.
    pub(super) fn fresh_minima<'s>(
        &'s self,
        joiners: &'s [Joiner],
        state: &'s [u8],
    ) -> impl Iterator<Item = (EncodedBox, u32)> + 's {
        let n = joiners.len() as u32;
        let a = self.index;
        self.join_ids.iter().filter_map(move |&id| {
            let j = joiners.get(id as usize).filter(|_| id < n)?;
            (state[j.slot as usize] & FRESH != 0)
                .then(|| (End::new(&j.keys, a, j.slot, false).encoded(), j.slot))
        })
    }

    /// Recomputes every awake endpoint's finger (after the asleep lists changed).
    pub(super) fn reset_fingers(&mut self) {
        set_fingers(&mut self.ends, &self.asleep_min, &self.asleep_max);
    }

    /// The update of this axis: merges the joining endpoints into the awake array, drops the
    /// leaving ones, moves the moved ones to their new place (insertion sort) and reports every
    /// pair that starts to overlap: on a swap of a minimum past a maximum, and on a moved
    /// endpoint's crossing of asleep endpoints. Pairs that stop overlapping are not looked for
    /// here: `Sap` re-tests the existing pairs of moved boxes.
    ///
    /// The insertion sort moves 8-byte keys (order and position), not the 32-byte endpoints:
    /// the endpoints are staged once in their old order and gathered once in the new one. A
    /// swap's test reads the two staged endpoints, both recently written.
    pub(super) fn run(&mut self, sh: &Shared<'_>) {
        self.sort_joining(sh.joiners);
        self.created.clear();
        if sh.only_fresh {
            self.build_fresh(sh);
            return;
        }
        let mut pass = Pass {
            axis: self.index,
            sh,
            by_min: &self.asleep_min,
            by_max: &self.asleep_max,
            created: &mut self.created,
            counts: AxisCounts::default(),
            width: self.awake_width,
            sweep_asleep: !self.asleep_min.is_empty(),
            hits: Vec::new(),
        };
        if self.join_ids.is_empty() {
            // In place: `..w` holds the endpoints placed so far, sorted; `i` reads ahead.
            let ends = &mut self.ends[..];
            let mut w = 0;
            for i in 0..ends.len() {
                if let Some(ahead) = ends.get(i + PREFETCH_AHEAD) {
                    prefetch(&sh.keys[ahead.slot() as usize]);
                }
                let e = ends[i];
                if sh.state[e.slot() as usize] & DROP != 0 {
                    continue;
                }
                pass.place(ends, w, e);
                w += 1;
            }
            self.ends.truncate(w);
        } else {
            // Into a second buffer, merging the joining endpoints in the old order (an awake
            // endpoint first at equal order).
            let mut out = mem::take(&mut self.spare);
            out.clear();
            out.reserve(self.ends.len() + self.join_ids.len());
            let mut place = |pass: &mut Pass<'_, '_>, e: End| {
                out.push(e);
                let w = out.len() - 1;
                pass.place(&mut out, w, e);
            };
            let mut joining = joining(
                &self.join_ids,
                sh.joiners,
                self.index,
                &self.asleep_min,
                &self.asleep_max,
            )
            .peekable();
            let ends = &self.ends;
            for (i, e) in ends.iter().enumerate() {
                if let Some(ahead) = ends.get(i + PREFETCH_AHEAD) {
                    prefetch(&sh.keys[ahead.slot() as usize]);
                }
                while let Some(j) = joining.next_if(|j| j.order() < e.order()) {
                    place(&mut pass, j);
                }
                if sh.state[e.slot() as usize] & DROP == 0 {
                    place(&mut pass, *e);
                }
            }
            joining.for_each(|j| place(&mut pass, j));
            self.spare = mem::replace(&mut self.ends, out);
        }
        let (counts, width) = (pass.counts, pass.width);
        self.awake_width = width;
        self.counts = counts;
    }

    /// The update of an axis with no awake box and only fresh ones joining: nothing moves,
    /// box pruning pairs them. The joining endpoints, in order, make the awake array, but
    /// those of boxes [`GOING`] to sleep at once, which are set aside in order for the asleep
    /// lists: `Auto`'s build of Sap from 40,000 boxes, most of them still, spent a quarter of
    /// its time putting them in the awake array and taking them out again.
    fn build_fresh(&mut self, sh: &Shared<'_>) {
        let mut width = self.awake_width;
        let mut ends = mem::take(&mut self.ends);
        ends.reserve(self.join_ids.len() - 2 * sh.fresh_going);
        if sh.fresh_going == 0 {
            ends.extend(self.joining(sh.joiners).inspect(|e| {
                if !e.is_max() {
                    width = width.max(key_width(e.coord, e.other));
                }
            }));
        } else {
            let mut going_min = Vec::with_capacity(sh.fresh_going);
            let mut going_max = Vec::with_capacity(sh.fresh_going);
            let (n, axis) = (sh.joiners.len() as u32, self.index);
            for (k, &id) in self.join_ids.iter().enumerate() {
                // Joiners are read in coordinate order, not in their own.
                if let Some(&ahead) = self.join_ids.get(k + PREFETCH_AHEAD) {
                    prefetch(&sh.joiners[(ahead % n) as usize]);
                }
                let j = &sh.joiners[(id % n) as usize];
                let e = End::new(&j.keys, axis, j.slot, id >= n);
                if sh.state[j.slot as usize] & GOING != 0 {
                    let list = if e.is_max() {
                        &mut going_max
                    } else {
                        &mut going_min
                    };
                    list.push((e.encoded(), j.slot));
                } else {
                    if !e.is_max() {
                        width = width.max(key_width(e.coord, e.other));
                    }
                    // Its finger is set once the asleep lists have taken the others.
                    ends.push(e);
                }
            }
            self.going = Some((sorted_list(&going_min), sorted_list(&going_max)));
        }
        self.ends = ends;
        self.awake_width = width;
        self.counts = AxisCounts::default();
    }

    /// Puts the fresh boxes [`build_fresh`](Self::build_fresh) set aside to sleep.
    pub(super) fn sleep_fresh(&mut self, state: &[u8]) {
        if let Some((going_min, going_max)) = self.going.take() {
            self.sleep(state, going_min, going_max);
        }
    }

    /// Drops the stale asleep entries and merges in the boxes going to sleep, `going_min` and
    /// `going_max` sorted as the asleep lists are; the awake endpoints' fingers follow.
    fn sleep(&mut self, state: &[u8], going_min: BoxList, going_max: BoxList) {
        self.compact_asleep(state);
        for (list, going) in [
            (&mut self.asleep_min, going_min),
            (&mut self.asleep_max, going_max),
        ] {
            if list.is_empty() {
                *list = going;
            } else {
                list.merge_in(&going);
            }
        }
        self.reset_fingers();
    }

    /// Moves the awake boxes marked [`GOING`] into the asleep lists, dropping stale entries.
    pub(super) fn put_to_sleep(&mut self, state: &[u8], going: usize) {
        let mut going_min = Vec::with_capacity(going);
        let mut going_max = Vec::with_capacity(going);
        self.ends.retain(|e| {
            if state[e.slot() as usize] & GOING == 0 {
                return true;
            }
            let list = if e.is_max() {
                &mut going_max
            } else {
                &mut going_min
            };
            list.push((e.encoded(), e.slot()));
            false
        });
        self.sleep(state, sorted_list(&going_min), sorted_list(&going_max));
        // The widest box may have gone: measure again (the passes only ever widen it).
        self.awake_width = self
            .ends
            .iter()
            .filter(|e| !e.is_max())
            .map(|e| key_width(e.coord, e.other))
            .fold(0.0, f64::max);
    }

    /// Drops the stale entries of the asleep lists (boxes woken, removed or re-inserted).
    pub(super) fn compact_asleep(&mut self, state: &[u8]) {
        let live = |id: u32| state[id as usize] & ASLEEP != 0;
        self.asleep_min.retain(live, |_| (), |_, _| ());
        self.asleep_max.retain(live, |_| (), |_, _| ());
        self.asleep_min.shrink();
        self.asleep_max.shrink();
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        (self.ends.capacity() + self.spare.capacity()) * mem::size_of::<End>()
            + self.asleep_min.memory_bytes()
            + self.asleep_max.memory_bytes()
            + self.created.capacity() * 8
            + (self.join_ids.capacity() + self.join_keys.capacity()) * 4
            + self.sorter.memory_bytes()
    }
}

/// One axis pass in progress.
struct Pass<'a, 'b> {
    axis: usize,
    sh: &'a Shared<'b>,
    by_min: &'a BoxList,
    by_max: &'a BoxList,
    created: &'a mut Vec<u64>,
    counts: AxisCounts,
    width: f64,
    /// Whether there are asleep endpoints to sweep the moved ones across.
    sweep_asleep: bool,
    /// Slots a minimum was found to overlap (scratch).
    hits: Vec<u32>,
}

impl Pass<'_, '_> {
    /// Takes the next endpoint in the old order: brings a moved one up to date (sweeping it
    /// across the asleep endpoints) and inserts it into `ends[..=w]`, whose first `w`
    /// entries are sorted.
    #[inline(always)]
    fn place(&mut self, ends: &mut [End], w: usize, e: End) {
        // One branch on the kind, then code specialised for it: the kinds come in no
        // predictable order, and each further test of it could be mispredicted again.
        if e.is_max() {
            self.place_kind::<true>(ends, w, e);
        } else {
            self.place_kind::<false>(ends, w, e);
        }
    }

    #[inline(always)]
    fn place_kind<const IS_MAX: bool>(&mut self, ends: &mut [End], w: usize, mut e: End) {
        let sh = self.sh;
        let slot = e.slot();
        let st = sh.state[slot as usize];
        if st & (MOVED | FRESH) == MOVED {
            let old = e;
            e.set_keys_of_kind::<IS_MAX>(&sh.keys[slot as usize], self.axis);
            if self.sweep_asleep {
                e.finger = if IS_MAX {
                    walk_max(&old, &e, self.by_min, sh, self.created, &mut self.counts)
                } else {
                    walk_min(&old, &e, self.by_max, sh, self.created, &mut self.counts)
                };
            }
        }
        if !IS_MAX && st & (MOVED | FRESH) != 0 {
            self.width = self.width.max(key_width(e.coord, e.other));
        }
        // Insertion: the endpoint slides left past every endpoint now above it (equal ones
        // keep their order).
        let order = e.order();
        let ends = &mut ends[..=w];
        let mut k = w;
        if IS_MAX {
            while k > 0 && ends[k - 1].order() > order {
                ends[k] = ends[k - 1];
                k -= 1;
            }
        } else {
            // A minimum passing a maximum leftwards: the two start to overlap on this axis
            // (the maximum passing the minimum rightwards is the same swap). Minima and
            // maxima are passed in no predictable order: the test is computed for every
            // endpoint passed, and only its rare success branches.
            let maxima;
            (k, maxima) = slide_min(ends, &e, &mut self.hits);
            self.counts.tests += maxima;
            for &other in &self.hits {
                if sh.pairable(slot, other) {
                    self.created.push(pair_key(slot, other));
                }
            }
            self.hits.clear();
        }
        ends[k] = e;
        self.counts.swaps += (w - k) as u64;
    }
}

/// Slides the minimum `e` into the sorted `ends[..w]` (`w = ends.len() - 1`, the last entry
/// free), testing every maximum it passes: the slots of those whose boxes it now overlaps go
/// to `hits`. Returns where `e` belongs and the number of maxima passed. Kept out of line so
/// that its loop has the registers to itself.
#[inline(never)]
fn slide_min(ends: &mut [End], e: &End, hits: &mut Vec<u32>) -> (usize, u64) {
    let probe = Probe::new(e);
    let order = e.order();
    let mut maxima = 0;
    let mut k = ends.len() - 1;
    while k > 0 {
        let p = ends[k - 1];
        if p.order() <= order {
            break;
        }
        // Minima and maxima are passed in no predictable order: the test is computed for
        // every endpoint passed, and only its rare success branches.
        let is_max = p.tag >> 31;
        maxima += u64::from(is_max);
        if probe.misses(&p) | (is_max ^ 1) == 0 && probe.reaches(&p) {
            hits.push(p.slot());
        }
        ends[k] = p;
        k -= 1;
    }
    (k, maxima)
}

/// The joining endpoints `ids` (see [`Axis::join_ids`]) of `joiners` on `axis`, in order,
/// each with its finger into the asleep lists.
fn joining<'s>(
    ids: &'s [u32],
    joiners: &'s [Joiner],
    axis: usize,
    by_min: &'s BoxList,
    by_max: &'s BoxList,
) -> impl Iterator<Item = End> + 's {
    let n = joiners.len() as u32;
    let (min_keys, max_keys) = (by_min.signed_min_keys(), by_max.signed_min_keys());
    let (mut f, mut g) = (0usize, 0usize);
    ids.iter().enumerate().map(move |(k, &id)| {
        // Joiners are read in coordinate order, not in their own.
        if let Some(&ahead) = ids.get(k + PREFETCH_AHEAD) {
            prefetch(&joiners[(ahead % n.max(1)) as usize]);
        }
        let j = &joiners[(id % n.max(1)) as usize];
        let mut e = End::new(&j.keys, axis, j.slot, id >= n);
        let c = signed(e.coord);
        e.finger = if e.is_max() {
            g = gallop(min_keys, g, |k| k <= c);
            g as u32
        } else {
            f = gallop(max_keys, f, |k| k < c);
            f as u32
        };
        e
    })
}

/// A list of `boxes`, given in its order, loaded in one pass (pushing one box at a time
/// grows and pads eight arrays per box: half of a build of Sap from 40,000 still boxes).
///
/// Its arrays get a power of two of room, as pushing left them: with exactly the room
/// needed, the asleep lists' arrays of 98,000 fixed boxes lay 96 pages apart, so that the
/// entries a crossing test reads compete for the same cache sets, and `static_world`'s
/// frames at 100,000 boxes took 5% longer.
fn sorted_list(boxes: &[(EncodedBox, u32)]) -> BoxList {
    let mut list = BoxList::default();
    list.reserve_exact(boxes.len().next_power_of_two());
    list.extend_sorted(boxes.iter().map(|(b, slot)| (b, *slot, 0)));
    list
}

/// A box's width from its two keys, in `f64` (exact).
#[inline]
pub(super) fn key_width(min: u32, max: u32) -> f64 {
    f64::from(crate::encode::decode(max)) - f64::from(crate::encode::decode(min))
}

/// A moved minimum against the asleep maxima (`by_max`, where `min_x` is the maximum and
/// `max_x` the minimum): moving down from `old` to `new`, it crosses the maxima in
/// `[new, old)`, and each of those boxes may start to overlap the mover. Moving up it crosses
/// maxima only to stop overlapping, which the re-test of existing pairs handles. Returns the
/// new finger.
#[inline(always)]
fn walk_min(
    old: &End,
    new: &End,
    by_max: &BoxList,
    sh: &Shared<'_>,
    created: &mut Vec<u64>,
    counts: &mut AxisCounts,
) -> u32 {
    let keys = by_max.signed_min_keys();
    let c = signed(new.coord);
    let from = old.finger as usize;
    let mut f = from;
    if new.coord < old.coord {
        while f > 0 && keys[f - 1] >= c {
            f -= 1;
        }
        // The other box's minimum (`max_x` here) must not lie above the mover's maximum.
        test_crossed(
            new,
            by_max,
            f..from,
            |min| min <= new.other,
            sh,
            created,
            counts,
        );
    } else {
        // The sentinel ends the scan.
        while keys[f] < c {
            f += 1;
        }
    }
    f as u32
}

/// A moved maximum against the asleep minima (`by_min`): moving up from `old` to `new`, it
/// crosses the minima in `(old, new]`, each a box that may start to overlap the mover.
#[inline(always)]
fn walk_max(
    old: &End,
    new: &End,
    by_min: &BoxList,
    sh: &Shared<'_>,
    created: &mut Vec<u64>,
    counts: &mut AxisCounts,
) -> u32 {
    let keys = by_min.signed_min_keys();
    let c = signed(new.coord);
    let from = old.finger as usize;
    let mut g = from;
    if new.coord > old.coord {
        while keys[g] <= c {
            g += 1;
        }
        test_crossed(
            new,
            by_min,
            from..g,
            |max| new.other <= max,
            sh,
            created,
            counts,
        );
    } else {
        while g > 0 && keys[g - 1] > c {
            g -= 1;
        }
    }
    g as u32
}

/// Tests the asleep entries `range` of `list` that the endpoint `new` crossed towards overlap:
/// the two other axes, then `own` on the entry's other key on this axis.
#[inline]
fn test_crossed(
    new: &End,
    list: &BoxList,
    range: Range<usize>,
    own: impl Fn(u32) -> bool,
    sh: &Shared<'_>,
    created: &mut Vec<u64>,
    counts: &mut AxisCounts,
) {
    counts.crossed += range.len() as u64;
    list.for_each_uv_overlap(range, &new.uv, own, |i| {
        asleep_hit(new.slot(), list.id(i), sh, created);
    });
}

/// A mover overlaps an asleep entry: report it unless the entry is stale.
#[inline]
fn asleep_hit(mover: u32, other: u32, sh: &Shared<'_>, created: &mut Vec<u64>) {
    if sh.state[other as usize] & ASLEEP != 0 && sh.pairable(mover, other) {
        created.push(pair_key(mover, other));
    }
}

/// Sets the fingers of `ends` (sorted by order) against the asleep lists, galloping from one
/// endpoint to the next: O(n log(m / n)) for n endpoints and m asleep ones.
fn set_fingers(ends: &mut [End], by_min: &BoxList, by_max: &BoxList) {
    let (min_keys, max_keys) = (by_min.signed_min_keys(), by_max.signed_min_keys());
    let (mut f, mut g) = (0usize, 0usize);
    for e in ends.iter_mut() {
        let c = signed(e.coord);
        if e.is_max() {
            g = gallop(min_keys, g, |k| k <= c);
            e.finger = g as u32;
        } else {
            f = gallop(max_keys, f, |k| k < c);
            e.finger = f as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_puts_minima_first_at_equal_coordinates() {
        let keys = [5, 0, 0, 5, 1, 1];
        // A point box: min and max at 5; the max of another box also at 5.
        let min = End::new(&keys, 0, 1, false);
        let max = End::new(&keys, 0, 2, true);
        assert_eq!(min.coord, max.coord);
        assert!(min.order() < max.order());
        assert_eq!((max.slot(), max.other, max.is_max()), (2, 5, true));
    }
}
