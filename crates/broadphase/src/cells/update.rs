//! What one touched cell does in an update: steps 1 to 5 of the [module docs](super) (drop
//! its leavers and re-encode those that stay, gather and sort its arrivals, sweep, diff its
//! pairs, merge the arrivals in).

use crate::pairs::{diff_pairs_in_place, key_slots, pair_key};
use crate::prefetch::{prefetch, prefetch_whole};
use crate::prune::{bipartite, complete, BoxList, EncodedBox};
use crate::store::Store;

use super::bin::{Arrival, Chunk, Stay};
use super::cell::Cell;
use super::tags::{reporting_cell, tag_region, Report};

/// How many boxes that stay ahead of the one re-encoded to prefetch from the store.
const STAY_AHEAD: usize = 16;

/// A cell whose moved dynamic boxes are at least `1 / MERGE_FIRST` of its dynamic boxes
/// merges them in before its sweep and sweeps all its dynamic boxes at once.
const MERGE_FIRST: usize = 3;

/// Scratch space of one worker, kept from one cell and one update to the next (the cells hold
/// one per worker).
///
/// A cell's arrivals live here only while the cell is pruned, so a set of cells holds one
/// list of them per worker instead of one per cell: at 100,000 boxes moving, the arrival
/// lists kept per cell were 60 bytes a box. (Swapping the worker's list with a cell's, where
/// the arrivals are the whole list, would hand buffers from cell to cell until each was as
/// large as the largest cell: the cell's list takes such arrivals in place instead.)
#[derive(Debug, Default)]
pub(super) struct Scratch {
    order: Vec<u64>,
    found: Vec<u64>,
    /// The changed boxes that stay in the cell, as `(slot, tag)`, then re-encoded, dynamic
    /// and fixed apart (at a new layout, every box arriving, encoded).
    staying: Vec<(u32, u32)>,
    stay_dynamic: Vec<Arrival>,
    stay_fixed: Vec<Arrival>,
    /// The cell's arrivals (with the boxes that stay), sorted.
    moved_dynamic: BoxList,
    moved_fixed: BoxList,
}

impl Scratch {
    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        self.moved_dynamic.memory_bytes()
            + self.moved_fixed.memory_bytes()
            + (self.order.capacity() + self.found.capacity()) * 8
            + self.staying.capacity() * 8
            + (self.stay_dynamic.capacity() + self.stay_fixed.capacity()) * size_of::<Arrival>()
    }
}

/// What the pruning asks of its owner, per pair or per slot.
pub(crate) struct Rules<'a, A, L> {
    /// Whether the filter lets two slots pair (never consulted for two fixed proxies).
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

/// Where a cell's arrivals are this update.
#[derive(Clone, Copy)]
pub(super) enum Arrivals<'a> {
    /// In the chunks' inboxes, in the order of the chunks.
    Inboxes(&'a [Chunk]),
    /// As slots and tags in the chunks' lists ([`Cells::bin`](super::Cells::bin)):
    /// every box of the cell arrived.
    Listed(&'a [Chunk]),
}

/// Steps 1 to 5 of the [module docs](super) for cell `c`.
pub(super) fn prune_cell<A, L>(
    cell: &mut Cell,
    c: usize,
    leaver: bool,
    arrivals: Arrivals<'_>,
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
        let is_fixed = |slot: u32| stays[slot as usize] == Stay::Fixed;
        let split = (&mut *stay_dynamic, &mut *stay_fixed);
        encode_from_store(staying.iter().copied(), store, cell.axes, is_fixed, split);
    }
    let order = &mut scratch.order;
    let (moved_dynamic, dynamic, moved_fixed, fixed);
    match arrivals {
        Arrivals::Inboxes(chunks) => {
            // A list whose every box changed (every dynamic box of the cell, in a scene where
            // everything moves) is refilled in place: its arrivals are the list, and the
            // worker's list stands, empty, for the unmoved boxes.
            let (whole_dynamic, whole_fixed) = (cell.dynamic.is_empty(), cell.fixed.is_empty());
            (moved_dynamic, dynamic) =
                moved_and_unmoved(whole_dynamic, &mut cell.dynamic, &mut scratch.moved_dynamic);
            (moved_fixed, fixed) =
                moved_and_unmoved(whole_fixed, &mut cell.fixed, &mut scratch.moved_fixed);
            let inbox = |fixed: bool| move |k: usize| chunks[k].inbox(c, fixed);
            gather_sorted(
                inbox(false),
                chunks.len(),
                order,
                stay_dynamic,
                moved_dynamic,
            );
            gather_sorted(inbox(true), chunks.len(), order, stay_fixed, moved_fixed);
        }
        Arrivals::Listed(chunks) => {
            // Every box of the cell arrived: encoded from the store (in slot order, each box
            // prefetched a few ahead), gathered sorted into the cell's lists, which are
            // empty and take them with no room to spare.
            debug_assert!(!leaver && cell.len() == 0, "a new layout");
            let listed = chunks.iter().flat_map(|ch| &ch.listed[c]);
            let listed = listed.map(|&e| ((e >> 32) as u32, e as u32));
            let is_fixed = |slot: u32| store.is_fixed(slot as usize);
            let split = (&mut *stay_dynamic, &mut *stay_fixed);
            encode_from_store(listed, store, cell.axes, is_fixed, split);
            cell.dynamic.reserve_exact(stay_dynamic.len());
            cell.fixed.reserve_exact(stay_fixed.len());
            (moved_dynamic, dynamic) = (&mut cell.dynamic, &mut scratch.moved_dynamic);
            (moved_fixed, fixed) = (&mut cell.fixed, &mut scratch.moved_fixed);
            let (arrived_dynamic, arrived_fixed) = (&stay_dynamic[..], &stay_fixed[..]);
            gather_sorted(|_| arrived_dynamic, 1, order, &mut [], moved_dynamic);
            gather_sorted(|_| arrived_fixed, 1, order, &mut [], moved_fixed);
        }
    }
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
        // Where a third or more of the dynamic boxes moved, one sweep of them all beats a
        // sweep of the moved ones and a second of the moved against the unmoved: it starts a
        // scan from each box once instead of from each unmoved box once and each moved box
        // twice, and with about one overlap a box the scans' starts are the work (see
        // MERGE_FIRST).
        let merge_first = !dynamic.is_empty()
            && MERGE_FIRST * moved_dynamic.len() >= dynamic.len() + moved_dynamic.len();
        if merge_first {
            dynamic.merge_in(moved_dynamic);
            moved_dynamic.clear();
        }
        let (md, mf, d, f) = (&*moved_dynamic, &*moved_fixed, &*dynamic, &*fixed);
        // Fixed boxes are never swept against fixed boxes. The five sweeps cover disjoint
        // pairs of lists, and a pair's reporting cell is unique: each pair is found at most once.
        let tests = if merge_first {
            // The moved boxes are in `d`: its pairs of two unchanged boxes, and theirs with
            // the unmoved fixed boxes, are kept by the diff without being found, so the
            // sweeps pass them over.
            let mut report = |a: &BoxList, i: usize, b: &BoxList, j: usize| {
                if changed(a.id(i)) || changed(b.id(j)) {
                    report(a, i, b, j);
                }
            };
            complete(d, |i, j| report(d, i, d, j))
                + bipartite(d, f, |i, j| report(d, i, f, j))
                + bipartite(d, mf, |i, j| report(d, i, mf, j))
        } else {
            complete(md, |i, j| report(md, i, md, j))
                + bipartite(md, d, |i, j| report(md, i, d, j))
                + bipartite(md, f, |i, j| report(md, i, f, j))
                + bipartite(md, mf, |i, j| report(md, i, mf, j))
                + bipartite(mf, d, |i, j| report(mf, i, d, j))
        };
        cell.tests = tests;
        found.sort_unstable();
        diff_pairs_in_place(
            &mut cell.pairs,
            found,
            key_slots,
            changed,
            &mut cell.created,
            &mut cell.deleted,
        );
    }
    merge_arrivals(&mut cell.dynamic, &mut scratch.moved_dynamic);
    merge_arrivals(&mut cell.fixed, &mut scratch.moved_fixed);
}

/// Encodes the boxes of `items` (`(slot, tag)`, in order) from the store for a cell sweeping
/// on `axes`, each pushed to `split.1` when `fixed(slot)`, else to `split.0`. The boxes lie
/// all over the store: each is prefetched [`STAY_AHEAD`] items ahead.
fn encode_from_store(
    items: impl Iterator<Item = (u32, u32)> + Clone,
    store: &Store,
    axes: [usize; 3],
    fixed: impl Fn(u32) -> bool,
    split: (&mut Vec<Arrival>, &mut Vec<Arrival>),
) {
    let mut ahead = items.clone().skip(STAY_AHEAD);
    for (slot, tag) in items {
        if let Some((a, _)) = ahead.next() {
            prefetch_whole(store.aabb_at(a as usize));
        }
        let enc = EncodedBox::new(store.aabb_at(slot as usize), axes);
        let list = if fixed(slot) {
            &mut *split.1
        } else {
            &mut *split.0
        };
        list.push(Arrival { enc, slot, tag });
    }
}

/// The lists a cell's arrivals are gathered into and its unmoved boxes are read from: the
/// worker's list and the cell's, or, when every box of the cell's list changed (`whole`: the
/// cell's list is empty), the cell's list and the worker's (empty).
fn moved_and_unmoved<'a>(
    whole: bool,
    cell: &'a mut BoxList,
    worker: &'a mut BoxList,
) -> (&'a mut BoxList, &'a mut BoxList) {
    debug_assert!(
        worker.is_empty(),
        "the worker's list is emptied after each cell"
    );
    if whole {
        (cell, worker)
    } else {
        (worker, cell)
    }
}

/// Sorts the arrivals of `inboxes` inboxes (`inbox(k)`: a cell's arrivals from chunk `k`) on
/// the sweep axis, merged with the boxes that `stay` in the cell (sorted here too), into
/// `list` (emptied first). Sorting `key << 32 | inbox << 28 | position` words and then copying
/// is cheaper than moving whole arrivals around; inbox and position make the order total, and
/// `stay` is sorted stably and comes first on equal keys, so the result is fixed.
fn gather_sorted<'a>(
    inbox: impl Fn(usize) -> &'a [Arrival],
    inboxes: usize,
    order: &mut Vec<u64>,
    stay: &mut [Arrival],
    list: &mut BoxList,
) {
    list.clear();
    order.clear();
    for k in 0..inboxes {
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

/// Merges the arrivals a worker gathered for a cell into the cell's sorted list and empties
/// them (when the cell's list took its arrivals in place, the worker's list is empty).
fn merge_arrivals(list: &mut BoxList, arrivals: &mut BoxList) {
    list.merge_in(arrivals);
    list.shrink();
    arrivals.clear();
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
}
