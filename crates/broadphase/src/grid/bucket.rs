//! One bucket of a level: the boxes binned to it, its sorted cell entries, its collision cells,
//! and the pairs whose cell it holds; its steps each update: build (or update the kept
//! entries), test, diff.
//!
//! The pieces it is made of have files of their own: the records ([`super::record`]), the cell
//! entries ([`super::entries`]), the pair tests of a collision cell ([`super::collision_cell`])
//! and how the pairs found are recorded and keyed ([`super::found`]).

use crate::pairs::{diff_pairs_by, diff_pairs_in_place, key_slots, PairList};
use crate::prefetch::prefetch_whole;
use crate::prune::signed;
use crate::radix::{KeySorter, RadixReport, RadixSorter};
use crate::slack::Trim;

use super::collision_cell::{test_run, Run, LONG_RUN};
use super::context::Context;
use super::entries::{
    merge_entries, next_set, run_end, same_as_next, write_entries, Extent, CHANGED, HOME_ALL, INDEX,
};
use super::found::{
    ordered_key, ordered_slots, tester_part, PairSink, PairSinkKind, RowKeys, MAX_ROW_WORDS,
};
use super::layout::LevelGrid;
use super::record::{box_keys, Record, DIRTY, FIXED, SLOT};

/// What a bucket counted in the last update.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BucketFigures {
    pub entries: u64,
    pub home: u64,
    pub collision_cells: u64,
    /// Collision cells holding a changed box: the others have nothing to test.
    pub cells_tested: u64,
    pub tests: u64,
    pub found: u64,
    pub radix: RadixReport,
}

/// One bucket: see the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bucket {
    /// Boxes living on the level, then visiting boxes of finer levels.
    pub records: Vec<Record>,
    pub residents: usize,
    /// Entries sorted by cell key (cell type, then cell id).
    pub keys: Vec<u32>,
    vals: Vec<u32>,
    /// Scratch of [`Bucket::update`]: where each old record went ([`GONE`] when dropped), the
    /// arrivals' entries, and the merged entries.
    moved_to: Vec<u32>,
    /// Scratch of [`Bucket::list_runs`]: which entries have the next one's key.
    same_as_next: Vec<u64>,
    new_keys: Vec<u32>,
    new_vals: Vec<u32>,
    merged_keys: Vec<u32>,
    merged_vals: Vec<u32>,
    /// The box and slot of each entry of the collision cells of [`LONG_RUN`] entries or more,
    /// in order, the boxes as six columns of signed keys for the wide scan
    /// ([`RunColumns::cols`](super::scan::RunColumns::cols)). A shorter cell's tests read its
    /// records.
    cols: [Vec<i32>; 6],
    col_slots: Vec<u32>,
    /// The collision cells, sorted by key; those of type `t` are
    /// `runs[type_start[t]..type_start[t + 1]]`.
    runs: Vec<Run>,
    type_start: [u32; 9],
    /// Whether two distinct cells of this bucket may share a key (the boxes span more than the
    /// torus on some axis): then the tests check the corner cell exactly.
    wraps: bool,
    /// The later entries a resident overlaps, while its cell is tested (scratch).
    hits: Vec<u32>,
    /// How this update's tests record the pairs they find.
    sink: PairSinkKind,
    /// Keys of the pairs found this update: pair keys ([`PairSinkKind::Keys`]), or record keys
    /// sorted, then made ordered keys ([`PairSinkKind::RecordKeys`]), or read off the rows
    /// ([`PairSinkKind::Rows`]). A worker lends its own list for the bucket's tests and diff
    /// when it runs both ([`Bucket::test_and_diff`]), so that buckets do not each keep one.
    found: Vec<u64>,
    /// [`PairSinkKind::Rows`]: one row of bits per resident, one bit per record: the records a
    /// resident found a pair with.
    rows: Vec<u64>,
    row_words: usize,
    /// Per record, its part of an [`ordered_key`] as the other box (scratch of the diff: in
    /// cache, where the records are not).
    other_keys: Vec<u64>,
    /// Keys of the pairs whose corner cell is in this bucket, sorted: pair keys, or
    /// [`ordered_key`]s on a level of [`Context::by_record`] (see [`Bucket::ordered`]).
    pub pairs: Vec<u64>,
    /// Candidate created and deleted pair keys of this update, and when those lists give
    /// their memory back (emptied once gathered).
    pub created: Vec<u64>,
    pub deleted: Vec<u64>,
    pub trims: [Trim; 2],
    sorter: RadixSorter,
    pub figures: BucketFigures,
}

/// What a worker lends the bucket it runs: the list of pairs found, which only a bucket's
/// tests and diff use, and what its diff needs.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    found: Vec<u64>,
    pub diff: DiffScratch,
}

/// What a bucket's diff needs: a sorter of the keys found, and a list to merge keys read off
/// rows into.
#[derive(Debug, Default)]
pub(crate) struct DiffScratch {
    key_sorter: KeySorter,
    merged: Vec<u64>,
}

impl Scratch {
    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        (self.found.capacity() + self.diff.merged.capacity()) * 8
            + self.diff.key_sorter.memory_bytes()
    }
}

impl Bucket {
    /// Writes the entries of every record (each cell it covers in this bucket), sorts them by
    /// cell key, and lists the collision cells: the chapter's way, every entry every update.
    pub fn build(&mut self, index: usize, ctx: &Context<'_>) {
        self.ensure_sorter(ctx.radix_bits);
        let g = ctx.grid;
        let mut extent = Extent::default();
        self.keys.clear();
        self.vals.clear();
        let mut figures = BucketFigures {
            home: write_entries(
                g,
                g.bucket_coords(index),
                &self.records,
                0,
                &mut extent,
                &mut self.keys,
                &mut self.vals,
            ),
            ..BucketFigures::default()
        };
        figures.radix = self
            .sorter
            .sort_key_bits(&mut self.keys, &mut self.vals, g.key_bits());
        // Entries were written residents first and the sort is stable: in every run the
        // residents come first.
        self.wraps = extent.wraps(g);
        self.list_runs(g, figures, ctx.by_record);
    }

    /// [`Bucket::build`] for a level whose boxes keep their cells from one update to the next
    /// (a level without visitors): the records of boxes that left this bucket's cells
    /// (their `fates`, by slot) are dropped with their entries, the changed boxes that stayed read
    /// their new keys, and only the `arrivals`' entries are written and sorted, then merged
    /// into the kept ones, which are still in order. Most moving boxes stay in their cells from
    /// one frame to the next (uniform 100k: 93%), and the sort was a third of the update.
    pub fn update<'r>(
        &mut self,
        index: usize,
        ctx: &Context<'_>,
        arrivals: impl Iterator<Item = &'r [Record]>,
        fates: &[u8],
    ) {
        self.ensure_sorter(ctx.radix_bits);
        let (g, store) = (ctx.grid, ctx.store);
        let mut extent = Extent::default();
        // The records kept, in order, and where each old record went.
        self.moved_to.clear();
        let mut kept = 0;
        for i in 0..self.records.len() {
            // Only a moved box is read: in a frame where few move, prefetching every box would
            // fill the memory bus with lines nobody reads.
            if let Some(next) = self.records.get(i + PREFETCH_DISTANCE) {
                let s = (next.slot & SLOT) as usize;
                if fates.get(s).is_some_and(|&f| f & MOVED != 0) {
                    prefetch_whole(store.aabb_at(s));
                }
            }
            let mut r = self.records[i];
            let slot = (r.slot & SLOT) as usize;
            let fate = fates[slot];
            if fate & LEFT != 0 {
                self.moved_to.push(GONE);
                continue;
            }
            if fate & MOVED != 0 {
                r.keys = box_keys(store.aabb_at(slot));
                r.slot = slot as u32 | DIRTY | if fate == MOVED_FIXED { FIXED } else { 0 };
            } else {
                r.slot &= !DIRTY;
            }
            extent.add(&r);
            self.records[kept] = r;
            self.moved_to.push(kept as u32 | (r.slot & CHANGED));
            kept += 1;
        }
        self.records.truncate(kept);
        // The kept entries, renumbered: the renumbering keeps the order of records, so the
        // entries stay sorted by (cell key, record).
        let mut home = 0;
        let mut w = 0;
        for e in 0..self.keys.len() {
            let v = self.vals[e];
            let to = self.moved_to[(v & INDEX) as usize];
            if to != GONE {
                home += u64::from(v & HOME_ALL == HOME_ALL);
                self.keys[w] = self.keys[e];
                self.vals[w] = (v & !(INDEX | CHANGED)) | to;
                w += 1;
            }
        }
        self.keys.truncate(w);
        self.vals.truncate(w);
        // The arrivals' entries, sorted alone, then merged in, the kept entries first on equal
        // keys (every box of level 0 lives there, so any order within a cell would do; this
        // one is fixed).
        for list in arrivals {
            self.records.extend_from_slice(list);
        }
        self.new_keys.clear();
        self.new_vals.clear();
        home += write_entries(
            g,
            g.bucket_coords(index),
            &self.records[kept..],
            kept as u32,
            &mut extent,
            &mut self.new_keys,
            &mut self.new_vals,
        );
        let radix = self
            .sorter
            .sort_key_bits(&mut self.new_keys, &mut self.new_vals, g.key_bits());
        if !self.new_keys.is_empty() {
            merge_entries(
                (&self.keys, &self.vals),
                (&self.new_keys, &self.new_vals),
                (&mut self.merged_keys, &mut self.merged_vals),
            );
            std::mem::swap(&mut self.keys, &mut self.merged_keys);
            std::mem::swap(&mut self.vals, &mut self.merged_vals);
        }
        self.residents = self.records.len();
        self.wraps = extent.wraps(g);
        let figures = BucketFigures {
            home,
            radix,
            ..BucketFigures::default()
        };
        // Kept records are out of slot order: pair keys.
        debug_assert!(!ctx.by_record);
        self.list_runs(g, figures, false);
    }

    fn ensure_sorter(&mut self, radix_bits: u32) {
        if self.sorter.digit_bits() != radix_bits {
            self.sorter = RadixSorter::new(radix_bits).unwrap_or_default();
        }
    }

    /// Lists the collision cells of the sorted entries and gathers their boxes, and chooses
    /// how the tests will record their pairs.
    fn list_runs(&mut self, g: &LevelGrid, mut figures: BucketFigures, by_record: bool) {
        let found_before = self.figures.found as usize;
        figures.entries = self.keys.len() as u64;
        self.runs.clear();
        self.cols.iter_mut().for_each(Vec::clear);
        self.col_slots.clear();
        self.type_start = [0; 9];
        let residents = self.residents as u32;
        let mut collision_cells = 0;
        // Most cells hold one entry: the runs are found from a bitmap of equal neighbours
        // rather than by comparing entry after entry (a branch per entry, mispredicted at
        // every cell boundary).
        let mut same = std::mem::take(&mut self.same_as_next);
        same_as_next(&self.keys, &mut same);
        let mut from = 0;
        while let Some(s) = next_set(&same, from) {
            let (key, e) = (self.keys[s], run_end(&same, s));
            from = e;
            let run = &self.vals[s..e];
            // Without a branch for the short cells most are (which of them hold a changed box
            // is unpredictable): whether one of its boxes changed, and how many of its boxes
            // live on this level (they come first; a cell of visitors only is no collision
            // cell).
            let changed = run.iter().fold(0, |acc, &v| acc | v) & CHANGED != 0;
            let r = run
                .iter()
                .map(|&v| u32::from(v & INDEX < residents))
                .sum::<u32>();
            collision_cells += u64::from(r > 0);
            let listed = changed & (r > 0);
            // A long cell's residents each scan all its boxes: gather them as columns now,
            // while the records are in cache.
            let long = e - s >= LONG_RUN;
            let at = if long { self.col_slots.len() as u32 } else { 0 };
            if listed && long {
                for &v in run {
                    let rec = &self.records[(v & INDEX) as usize];
                    for (col, &key) in self.cols.iter_mut().zip(&rec.keys) {
                        col.push(signed(key));
                    }
                    self.col_slots.push(rec.slot);
                }
            }
            self.runs.push(Run {
                start: s as u32,
                at,
                len: (e - s) as u32,
                residents: r,
                key,
            });
            self.runs.truncate(self.runs.len() - usize::from(!listed));
            self.type_start[g.key_type(key) as usize + 1] += u32::from(listed);
        }
        self.same_as_next = same;
        for t in 0..8 {
            self.type_start[t + 1] += self.type_start[t];
        }
        figures.collision_cells = collision_cells;
        figures.cells_tested = self.runs.len() as u64;
        self.found.clear();
        self.figures = figures;
        // The matrix pays when it is dense enough: no more words than twice the pairs the
        // bucket found last time (a fine level sorted afresh, whose thousand residents find a
        // few hundred pairs, would clear and read 128 KB per bucket for them).
        let words = self.records.len().div_ceil(64);
        let matrix = self.residents.saturating_mul(words);
        self.sink = if !by_record {
            PairSinkKind::Keys
        } else if matrix <= MAX_ROW_WORDS && matrix <= 2 * found_before + 64 {
            self.row_words = words;
            self.rows.clear();
            self.rows.resize(self.residents * words, 0);
            PairSinkKind::Rows
        } else {
            PairSinkKind::RecordKeys
        };
    }

    /// Tests the pairs of the collision cells of type `cell_type` (all of them for `None`).
    pub fn test(&mut self, index: usize, cell_type: Option<u32>, ctx: &Context<'_>) {
        let runs = match cell_type {
            Some(t) => {
                let t = t as usize;
                &self.runs[self.type_start[t] as usize..self.type_start[t + 1] as usize]
            }
            None => &self.runs[..],
        };
        let mut tests = 0;
        let mut sink = match self.sink {
            PairSinkKind::Keys => PairSink::Keys(&mut self.found),
            PairSinkKind::RecordKeys => PairSink::RecordKeys(&mut self.found),
            PairSinkKind::Rows => PairSink::Rows {
                bits: &mut self.rows,
                words: self.row_words,
            },
        };
        for run in runs {
            tests += test_run(
                run,
                &self.records,
                &self.vals,
                (&self.cols, &self.col_slots),
                self.wraps.then_some(index),
                ctx,
                &mut self.hits,
                &mut sink,
            );
        }
        self.figures.tests += tests;
    }

    /// Tests every collision cell and diffs, with the worker's list of pairs found.
    pub fn test_and_diff(&mut self, index: usize, ctx: &Context<'_>, scratch: &mut Scratch) {
        std::mem::swap(&mut self.found, &mut scratch.found);
        self.found.clear();
        self.test(index, None, ctx);
        self.diff(ctx, &mut scratch.diff);
        // The bucket's own list (empty) comes back: lists do not pass from bucket to bucket.
        std::mem::swap(&mut self.found, &mut scratch.found);
    }

    /// Diffs the pairs found against the bucket's pairs of the last update, in place (but for
    /// pairs found as rows of bits).
    pub fn diff(&mut self, ctx: &Context<'_>, scratch: &mut DiffScratch) {
        let store = ctx.store;
        if self.sink != PairSinkKind::Keys {
            let residents = self.residents;
            self.other_keys.clear();
            self.other_keys.extend(
                self.records
                    .iter()
                    .enumerate()
                    .map(|(j, r)| ordered_key(0, j >= residents, r.slot & SLOT)),
            );
        }
        let others = &self.other_keys;
        self.created.clear();
        self.deleted.clear();
        let changed = |slot: u32| store.is_dirty(slot as usize);
        let slots = match self.sink {
            PairSinkKind::Keys => {
                scratch.key_sorter.sort(&mut self.found);
                key_slots
            }
            PairSinkKind::RecordKeys => {
                // Records are in slot order, residents then visitors (see `ordered_key`): the
                // sorted record keys stay sorted as ordered keys, the keys last update's pairs
                // are kept under.
                scratch.key_sorter.sort(&mut self.found);
                for k in &mut self.found {
                    let (i, j) = ((*k >> 32) as usize, *k as u32 as usize);
                    *k = tester_part(others[i]) | others[j];
                }
                ordered_slots
            }
            PairSinkKind::Rows => {
                // Row by row, bit by bit: the keys in order with no sort, read as they are
                // merged into the worker's list (decoding them into a list of their own to
                // diff in place was 5% slower on `sizes`), which is copied back.
                let rows = RowKeys::new(&self.rows, self.row_words, others);
                diff_pairs_by(
                    &self.pairs,
                    rows,
                    ordered_slots,
                    changed,
                    &mut scratch.merged,
                    &mut self.created,
                    &mut self.deleted,
                );
                self.pairs.clear();
                crate::slack::grow(&mut self.pairs, scratch.merged.len());
                self.pairs.extend_from_slice(&scratch.merged);
                self.figures.found = self.rows.iter().map(|w| w.count_ones() as u64).sum();
                return;
            }
        };
        debug_assert!(self.found.windows(2).all(|w| w[0] < w[1]));
        diff_pairs_in_place(
            &mut self.pairs,
            &self.found,
            slots,
            changed,
            &mut self.created,
            &mut self.deleted,
        );
        self.figures.found = self.found.len() as u64;
    }

    /// Whether the bucket's pairs are kept under [`ordered_key`]s (a level of
    /// [`Context::by_record`]), rather than pair keys.
    fn ordered(&self) -> bool {
        self.sink != PairSinkKind::Keys
    }

    /// The bucket's pairs, and how to read their keys.
    pub fn pair_list(&self) -> PairList<'_> {
        PairList {
            keys: &self.pairs,
            slots: if self.ordered() {
                ordered_slots
            } else {
                key_slots
            },
        }
    }

    /// The entries of cell `key`: their record indices (with control bits).
    pub fn cell(&self, key: u32) -> &[u32] {
        let from = self.keys.partition_point(|&k| k < key);
        let to = from + self.keys[from..].partition_point(|&k| k <= key);
        &self.vals[from..to]
    }

    /// The record of an entry value when its box lives on this level (residents come first in
    /// a cell's entries: `None` means no resident follows).
    #[inline]
    pub fn resident_of(&self, v: u32) -> Option<&Record> {
        let i = (v & INDEX) as usize;
        (i < self.residents).then(|| &self.records[i])
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.records.capacity() * std::mem::size_of::<Record>()
            + (self.keys.capacity() + self.vals.capacity()) * 4
            + (self.moved_to.capacity()
                + self.new_keys.capacity()
                + self.new_vals.capacity()
                + self.merged_keys.capacity()
                + self.merged_vals.capacity())
                * 4
            + self.runs.capacity() * std::mem::size_of::<Run>()
            + (self.cols.iter().map(Vec::capacity).sum::<usize>() + self.col_slots.capacity()) * 4
            + self.hits.capacity() * 4
            + (self.rows.capacity() + self.other_keys.capacity() + self.same_as_next.capacity()) * 8
            + self.sorter.memory_bytes()
            + (self.found.capacity()
                + self.pairs.capacity()
                + self.created.capacity()
                + self.deleted.capacity())
                * 8
    }
}

/// A slot's fate this update, for [`Bucket::update`]: its box left the level-0 cells it was
/// in (or is gone); its records are dropped.
pub(crate) const LEFT: u8 = 1;
/// Its box moved but covers the same cells: its records read the new box.
pub(crate) const MOVED: u8 = 2;
/// [`MOVED`], and the proxy is fixed.
pub(crate) const MOVED_FIXED: u8 = MOVED | 4;

/// `moved_to` of a record dropped by [`Bucket::update`].
const GONE: u32 = u32::MAX;
/// How many records ahead of the one being refreshed [`Bucket::update`] prefetches the box
/// (of a moved box only): the records of a bucket name slots all over the store.
const PREFETCH_DISTANCE: usize = 16;
