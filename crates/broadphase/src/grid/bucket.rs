//! One bucket of a level: the boxes dealt to it, its sorted cell entries, its collision cells,
//! and the pairs whose cell it holds.
//!
//! Each box writes one entry per cell it covers in the bucket: the cell's id (the sort key) and
//! the box's record index with control bits (the value). The entry of the box's home cell (the
//! one holding its centre) is marked home; the others are its phantoms. After the stable radix
//! sort the entries of one cell are a run; a run with two boxes or more, one of them living on
//! this level, is a collision cell.
//!
//! # Once per pair
//!
//! A pair is tested only in the cell holding the lower corner of the two boxes' overlap: per
//! axis the larger of their lowest cells. Each entry carries three control bits, "this is the
//! box's lowest cell on x, y, z"; two entries of one cell pass when, on every axis, one of them
//! has the bit — their cell is then that corner. No dedup table is needed, and the test never
//! loses a pair: overlapping boxes both cover the corner cell.
//!
//! The chapter's own rule ("test in a cell where one of the two is at home, unless both share a
//! cell of a smaller type") is not exact for boxes: two boxes can overlap while sharing only a
//! cell where both are phantoms (see `chapter_rule_misses_a_pair` in the tests), so home bits are
//! kept for the figures, not for the decision.
//!
//! # Pairs found in order
//!
//! The pairs found are diffed against the bucket's sorted pairs of the last update, so they
//! must be sorted too. A bucket built afresh (every coarse level) holds its records in slot
//! order, residents then visitors, and each pair is tested by a resident: the pair is then a
//! bit in its tester's row of a bit matrix (resident × record), and reading the rows in order
//! gives the pairs sorted, with no sort ([`SinkKind::Rows`]); the diff reads them off the rows as
//! it merges, without writing them out ([`RowKeys`]). Their keys name the tester's slot,
//! whether the other box is a visitor, and its slot ([`ordered_key`]), an order that holds from
//! one update to the next. On `sizes` (3.4 million planet–asteroid pairs a frame) sorting the
//! keys was a quarter of the frame. Level 0, whose kept records are out of slot order, sorts
//! pair keys.

use crate::encode::encode;
use crate::gallop::gallop;
use crate::pairs::{diff_pairs, diff_pairs_by, key_slots, pair_key, KeySorter, PairList};
use crate::prefetch::prefetch_whole;
use crate::prune::signed;
use crate::radix::{RadixReport, RadixSorter};
use crate::store::Store;
use crate::Aabb;

use super::layout::LevelGrid;
use super::scan;

/// `Record::slot`: the slot in the low bits.
pub(crate) const SLOT: u32 = (1 << 24) - 1;
/// `Record::slot`: the proxy is fixed.
pub(crate) const FIXED: u32 = 1 << 31;
/// `Record::slot`: the proxy changed since the last update (or every proxy must be tested).
pub(crate) const DIRTY: u32 = 1 << 30;

/// Entry value: the record index in the low bits.
const INDEX: u32 = (1 << 24) - 1;
/// Entry value: the cell is the box's lowest on x, y, z (bits 24, 25, 26).
const FIRST_SHIFT: u32 = 24;
pub(crate) const FIRST_ALL: u32 = 7 << FIRST_SHIFT;
/// Entry value: the cell holds the box's centre on x, y, z (bits 27, 28, 29).
const HOME_SHIFT: u32 = 27;
const HOME_ALL: u32 = 7 << HOME_SHIFT;
/// Entry value: the entry's record is [`DIRTY`]. A collision cell none of whose entries is
/// changed has no pair to test (the diff keeps the pairs of unchanged boxes), so it is not
/// listed: in a frame where a tenth of the boxes move, most cells are skipped unread.
const CHANGED: u32 = DIRTY;

/// A box's six coordinates as order-preserving integer keys ([`encode`]): `min` x, y, z, then
/// `max` x, y, z. Integer tests are exact, treat -0.0 as 0.0, and compile without branches.
pub(crate) type BoxKeys = [u32; 6];

/// The keys of `aabb`.
#[inline]
fn box_keys(aabb: &Aabb) -> BoxKeys {
    [
        encode(aabb.min[0]),
        encode(aabb.min[1]),
        encode(aabb.min[2]),
        encode(aabb.max[0]),
        encode(aabb.max[1]),
        encode(aabb.max[2]),
    ]
}

/// A box dealt to a bucket.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Record {
    pub keys: BoxKeys,
    /// Its lowest cell on the bucket's level.
    pub lo: [i32; 3],
    /// Slot and flags ([`SLOT`], [`FIXED`], [`DIRTY`]).
    pub slot: u32,
    /// Per axis `a`: cells spanned minus one in bits `3a..3a+3`, the home cell's offset from
    /// `lo` in bits `9+3a..12+3a`.
    pub shape: u32,
}

impl Record {
    /// The record of a box with cell range `lo..=hi` (at most 8 cells per axis) and home cell
    /// `home`.
    #[inline]
    pub fn new(aabb: &Aabb, slot: u32, lo: [i32; 3], hi: [i32; 3], home: [i32; 3]) -> Self {
        Self {
            keys: box_keys(aabb),
            lo,
            slot,
            shape: Self::shape_of(lo, hi, home),
        }
    }

    /// [`Record::shape`] of a box with cell range `lo..=hi` and home cell `home`.
    #[inline]
    pub fn shape_of(lo: [i32; 3], hi: [i32; 3], home: [i32; 3]) -> u32 {
        let mut shape = 0;
        for a in 0..3 {
            shape |= ((hi[a] - lo[a]) as u32 & 7) << (3 * a);
            shape |= ((home[a] - lo[a]).clamp(0, 7) as u32) << (9 + 3 * a);
        }
        shape
    }

    /// Cells spanned on axis `a`.
    #[inline(always)]
    pub fn span(&self, a: usize) -> i32 {
        ((self.shape >> (3 * a)) & 7) as i32 + 1
    }

    /// The highest cell per axis.
    #[inline]
    pub fn hi(&self) -> [i32; 3] {
        std::array::from_fn(|a| self.lo[a] + self.span(a) - 1)
    }

    #[inline(always)]
    fn home_offset(&self, a: usize) -> i32 {
        ((self.shape >> (9 + 3 * a)) & 7) as i32
    }
}

/// A collision cell: a run of entries of one cell, residents first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// Where its entries start in `keys` and `vals`.
    start: u32,
    /// Where its boxes start in `cols` and `col_slots` for a cell of [`LONG_RUN`] entries or
    /// more (0 for a shorter cell, whose tests read its records).
    at: u32,
    len: u32,
    /// Entries at the start of the run whose box lives on this level.
    residents: u32,
    /// The cell's sort key.
    key: u32,
}

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
    /// ([`scan::Cell::cols`]). A shorter cell's tests read its records.
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
    sink: SinkKind,
    /// Keys of the pairs found this update: pair keys ([`SinkKind::Keys`]), or record keys
    /// sorted, then made ordered keys ([`SinkKind::RecordKeys`]); unused with
    /// [`SinkKind::Rows`], whose keys are read off the rows.
    found: Vec<u64>,
    /// [`SinkKind::Rows`]: one row of bits per resident, one bit per record: the records a
    /// resident found a pair with.
    rows: Vec<u64>,
    row_words: usize,
    /// Per record, its part of an [`ordered_key`] as the other box (scratch of the diff: in
    /// cache, where the records are not).
    other_keys: Vec<u64>,
    /// Keys of the pairs whose corner cell is in this bucket, sorted: pair keys, or
    /// [`ordered_key`]s on a level of [`Context::by_record`] (see [`Bucket::ordered`]).
    pub pairs: Vec<u64>,
    merged: Vec<u64>,
    /// Candidate created and deleted pair keys of this update.
    pub created: Vec<u64>,
    pub deleted: Vec<u64>,
    sorter: RadixSorter,
    key_sorter: KeySorter,
    pub figures: BucketFigures,
}

/// What the per-bucket steps read.
pub(crate) struct Context<'a> {
    pub store: &'a Store,
    pub grid: &'a LevelGrid,
    pub radix_bits: u32,
    /// The level's buckets are built afresh every update ([`Bucket::build`]), so their records
    /// are in slot order, residents then visitors: the pairs found are recorded by their
    /// records' indices, in a bit matrix or as [`record_key`]s (see the module docs).
    pub by_record: bool,
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
            // Only a moved box is read: in a frame where few move, asking for every box would
            // fill the memory bus with lines nobody reads.
            if let Some(ahead) = self.records.get(i + STAY_AHEAD) {
                let s = (ahead.slot & SLOT) as usize;
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
            SinkKind::Keys
        } else if matrix <= MAX_ROW_WORDS && matrix <= 2 * found_before + 64 {
            self.row_words = words;
            self.rows.clear();
            self.rows.resize(self.residents * words, 0);
            SinkKind::Rows
        } else {
            SinkKind::RecordKeys
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
            SinkKind::Keys => Sink::Keys(&mut self.found),
            SinkKind::RecordKeys => Sink::RecordKeys(&mut self.found),
            SinkKind::Rows => Sink::Rows {
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

    /// Diffs the pairs found against the bucket's pairs of the last update.
    pub fn diff(&mut self, ctx: &Context<'_>) {
        let store = ctx.store;
        if self.sink != SinkKind::Keys {
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
        let found = match self.sink {
            SinkKind::Keys => {
                self.key_sorter.sort(&mut self.found);
                diff_pairs(
                    &self.pairs,
                    &self.found,
                    changed,
                    &mut self.merged,
                    &mut self.created,
                    &mut self.deleted,
                );
                self.found.len()
            }
            SinkKind::RecordKeys => {
                // Records are in slot order, residents then visitors (see `ordered_key`): the
                // sorted record keys stay sorted as ordered keys, the keys last update's pairs
                // are kept under.
                self.key_sorter.sort(&mut self.found);
                for k in &mut self.found {
                    let (i, j) = ((*k >> 32) as usize, *k as u32 as usize);
                    *k = tester_part(others[i]) | others[j];
                }
                debug_assert!(self.found.windows(2).all(|w| w[0] < w[1]));
                diff_pairs_by(
                    &self.pairs,
                    self.found.iter().copied(),
                    ordered_slots,
                    changed,
                    &mut self.merged,
                    &mut self.created,
                    &mut self.deleted,
                );
                self.found.len()
            }
            SinkKind::Rows => {
                // Row by row, bit by bit: the keys in order with no sort, read as they are
                // merged (never written out).
                let rows = RowKeys::new(&self.rows, self.row_words, others);
                diff_pairs_by(
                    &self.pairs,
                    rows,
                    ordered_slots,
                    changed,
                    &mut self.merged,
                    &mut self.created,
                    &mut self.deleted,
                );
                self.rows.iter().map(|w| w.count_ones() as usize).sum()
            }
        };
        self.figures.found = found as u64;
        std::mem::swap(&mut self.pairs, &mut self.merged);
    }

    /// Whether the bucket's pairs are kept under [`ordered_key`]s (a level of
    /// [`Context::by_record`]), rather than pair keys.
    fn ordered(&self) -> bool {
        self.sink != SinkKind::Keys
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
            + self.key_sorter.memory_bytes()
            + (self.found.capacity()
                + self.pairs.capacity()
                + self.merged.capacity()
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

/// The most words of [`SinkKind::Rows`]' bits per bucket (256 KB): past that, a bucket with
/// that many residents and records sorts record keys instead (as does a bucket whose matrix
/// would be sparse). Small with the `testing` feature, so that the differential suite takes
/// both ways.
#[cfg(not(feature = "testing"))]
const MAX_ROW_WORDS: usize = 1 << 15;
#[cfg(feature = "testing")]
const MAX_ROW_WORDS: usize = 48;

/// How a bucket's tests record the pairs they find this update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum SinkKind {
    /// Pair keys, sorted before the diff (a level whose records are out of slot order).
    #[default]
    Keys,
    /// [`record_key`]s, sorted, then turned into [`ordered_key`]s.
    RecordKeys,
    /// A bit per pair in its tester's row, read in order: the record keys come out sorted.
    Rows,
}

/// Where the tests put the pairs they find (see [`SinkKind`]).
enum Sink<'a> {
    Keys(&'a mut Vec<u64>),
    RecordKeys(&'a mut Vec<u64>),
    Rows { bits: &'a mut [u64], words: usize },
}

impl Sink<'_> {
    /// Records the pair of records `i` (a resident, the tester) and `j`, with slots `x`, `y`.
    #[inline(always)]
    fn add(&mut self, i: u32, j: u32, x: u32, y: u32) {
        match self {
            Sink::Keys(keys) => keys.push(pair_key(x, y)),
            Sink::RecordKeys(keys) => keys.push(record_key(i, j)),
            Sink::Rows { bits, words } => {
                // In bounds: the tester is a resident and `j` a record of the bucket, which
                // the rows were sized for.
                bits[i as usize * *words + (j as usize >> 6)] |= 1 << (j & 63);
            }
        }
    }
}

/// The key of a pair found on a level of [`Context::by_record`] until it is sorted: the record
/// indices of the resident that tested it and of the later entry. Indices below 2^24 (one
/// record per box and bucket).
#[inline(always)]
fn record_key(i: u32, j: u32) -> u64 {
    (u64::from(i) << 32) | u64::from(j)
}

/// The key a pair of a level of [`Context::by_record`] is kept under: the slot of the resident
/// that tests it, whether the other box is a visitor, the other's slot. Keys sort as the record
/// keys of one update do (records hold residents then visitors, each in slot order), and a pair
/// keeps its key from one update to the next while its boxes keep their levels: a pair of two
/// residents is tested by the one with the smaller slot, a pair with a visitor by the resident.
#[inline(always)]
fn ordered_key(tester: u32, visitor: bool, other: u32) -> u64 {
    (u64::from(tester) << 33) | (u64::from(visitor) << 32) | u64::from(other)
}

/// The part of an [`ordered_key`] that names its tester, from the tester's part as the other
/// box: a tester is a resident, so that part is its slot alone.
#[inline(always)]
fn tester_part(other_part: u64) -> u64 {
    ordered_key(other_part as u32, false, 0)
}

/// The two slots of an [`ordered_key`].
#[inline(always)]
fn ordered_slots(k: u64) -> (u32, u32) {
    ((k >> 33) as u32, k as u32)
}

/// The [`ordered_key`]s of a bucket's bit rows ([`SinkKind::Rows`]), in order: row by row
/// (testers in slot order), bit by bit.
struct RowKeys<'a> {
    rows: &'a [u64],
    words: usize,
    /// Per record, its part of a key as the other box.
    others: &'a [u64],
    /// The word being read, its row and place in the row, and its bits left.
    word: usize,
    row: usize,
    column: usize,
    bits: u64,
}

impl<'a> RowKeys<'a> {
    fn new(rows: &'a [u64], words: usize, others: &'a [u64]) -> Self {
        Self {
            rows,
            words: words.max(1),
            others,
            word: 0,
            row: 0,
            column: 0,
            bits: rows.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for RowKeys<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.rows.get(self.word)?;
            self.column += 1;
            if self.column == self.words {
                (self.row, self.column) = (self.row + 1, 0);
            }
        }
        let j = self.column * 64 + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(tester_part(self.others[self.row]) | self.others[j])
    }
}

/// `moved_to` of a record dropped by [`Bucket::update`].
const GONE: u32 = u32::MAX;
/// Records ahead of the one being refreshed whose box is asked for ([`Bucket::update`]): the
/// records of a bucket name slots all over the store.
const STAY_AHEAD: usize = 16;

/// The flags of the record of `slot` ([`SLOT`], [`FIXED`], [`DIRTY`]).
#[inline]
pub(crate) fn record_flags(store: &Store, slot: usize, all_dirty: bool) -> u32 {
    let mut f = slot as u32;
    if store.is_fixed(slot) {
        f |= FIXED;
    }
    if all_dirty || store.is_dirty(slot) {
        f |= DIRTY;
    }
    f
}

/// The lowest and highest cells of a bucket's records: whether two of its cells may share a key.
#[derive(Clone, Copy, Debug)]
struct Extent {
    lo: [i32; 3],
    hi: [i32; 3],
}

impl Default for Extent {
    fn default() -> Self {
        Self {
            lo: [i32::MAX; 3],
            hi: [i32::MIN; 3],
        }
    }
}

impl Extent {
    #[inline]
    fn add(&mut self, r: &Record) {
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(r.lo[a]);
            self.hi[a] = self.hi[a].max(r.lo[a] + r.span(a) - 1);
        }
    }

    /// Whether the records span more than the torus on some axis.
    fn wraps(&self, g: &LevelGrid) -> bool {
        (0..3).any(|a| i64::from(self.hi[a]) - i64::from(self.lo[a]) >= 1i64 << (g.lb + g.kb[a]))
    }
}

/// Writes one entry per cell of bucket `me` that each record covers: the cell's key, and the
/// record's index (from `base`) with its control bits. Returns how many are home entries.
fn write_entries(
    g: &LevelGrid,
    me: [u32; 3],
    records: &[Record],
    base: u32,
    extent: &mut Extent,
    keys: &mut Vec<u32>,
    vals: &mut Vec<u32>,
) -> u64 {
    let m = (1u32 << g.lb) - 1;
    let type_shift = 3 * g.lb;
    let mut home = 0;
    // Per axis: the bucket's cells of the box as (key part, control bits).
    let mut parts = [[(0u32, 0u32); 8]; 3];
    let mut counts = [0usize; 3];
    for (i, r) in records.iter().enumerate() {
        extent.add(r);
        let changed = r.slot & CHANGED;
        for a in 0..3 {
            let shift = g.lb * a as u32;
            counts[a] = 0;
            for k in 0..r.span(a) {
                let c = r.lo[a] + k;
                if g.block(a, c) == me[a] {
                    let bits = (u32::from(k == 0) << (FIRST_SHIFT + a as u32))
                        | (u32::from(k == r.home_offset(a)) << (HOME_SHIFT + a as u32));
                    let key =
                        ((c as u32 & m) << shift) | ((c as u32 & 1) << (type_shift + a as u32));
                    parts[a][counts[a]] = (key, bits);
                    counts[a] += 1;
                }
            }
        }
        for &(kz, bz) in &parts[2][..counts[2]] {
            for &(ky, by) in &parts[1][..counts[1]] {
                for &(kx, bx) in &parts[0][..counts[0]] {
                    let v = (base + i as u32) | bx | by | bz | changed;
                    home += u64::from(v & HOME_ALL == HOME_ALL);
                    keys.push(kx | ky | kz);
                    vals.push(v);
                }
            }
        }
    }
    home
}

/// Writes bit `i` of `bits` when `keys[i] == keys[i + 1]`: the entries of a cell of two or
/// more, but its last, as set bits.
fn same_as_next(keys: &[u32], bits: &mut Vec<u64>) {
    bits.clear();
    if let Some(n) = keys.len().checked_sub(1) {
        for (a, b) in keys[..n].chunks(64).zip(keys[1..].chunks(64)) {
            let mut word = 0;
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                word |= u64::from(x == y) << k;
            }
            bits.push(word);
        }
    }
}

/// The first set bit of `bits` at position `from` or later.
#[inline]
fn next_set(bits: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    let mut word = bits.get(w)? & (u64::MAX << (from % 64));
    while word == 0 {
        w += 1;
        word = *bits.get(w)?;
    }
    Some(w * 64 + word.trailing_zeros() as usize)
}

/// The end (one past the last entry) of the run of equal keys that starts at `s`, a set bit
/// of `bits`: its entries are `s` and those after each set bit that follows.
#[inline]
fn run_end(bits: &[u64], s: usize) -> usize {
    let mut w = s / 64;
    let mut last = s + (bits[w] >> (s % 64)).trailing_ones() as usize;
    // A run that reaches the end of its word goes on in the next one.
    while last % 64 == 0 {
        w += 1;
        let ones = bits.get(w).map_or(0, |b| b.trailing_ones() as usize);
        last += ones;
        if ones < 64 {
            break;
        }
    }
    last + 1
}

/// Merges two lists of entries sorted by key into `out`, `a`'s first on equal keys.
///
/// `b` (the arrivals) is mostly much shorter than `a` (the kept entries): the stretch of `a`
/// before each `b` entry is found by galloping and copied whole, rather than compared and
/// pushed entry by entry (which was a sixth of a frame where a tenth of the boxes move).
fn merge_entries(
    (a_keys, a_vals): (&[u32], &[u32]),
    (b_keys, b_vals): (&[u32], &[u32]),
    (out_keys, out_vals): (&mut Vec<u32>, &mut Vec<u32>),
) {
    out_keys.clear();
    out_vals.clear();
    out_keys.reserve(a_keys.len() + b_keys.len());
    out_vals.reserve(a_keys.len() + b_keys.len());
    let mut i = 0;
    for (&key, &val) in b_keys.iter().zip(b_vals) {
        let end = gallop(a_keys, i, |k| k <= key);
        out_keys.extend_from_slice(&a_keys[i..end]);
        out_vals.extend_from_slice(&a_vals[i..end]);
        out_keys.push(key);
        out_vals.push(val);
        i = end;
    }
    out_keys.extend_from_slice(&a_keys[i..]);
    out_vals.extend_from_slice(&a_vals[i..]);
}

/// Entries from which a collision cell's boxes are kept as columns and scanned eight at a
/// time: a resident then has at least eight later entries to test.
const LONG_RUN: usize = 9;

/// The contract's inclusive overlap test on keys: 0 when the boxes overlap, non-zero when
/// they do not. Arithmetic only: whether two boxes of a cell overlap is unpredictable, and a
/// mispredicted branch costs more than the six subtractions.
#[inline(always)]
fn apart(a: &BoxKeys, b: &BoxKeys) -> u64 {
    let gap = |lo: u32, hi: u32| (i64::from(hi) - i64::from(lo)) as u64 >> 63;
    gap(a[0], b[3])
        | gap(b[0], a[3])
        | gap(a[1], b[4])
        | gap(b[1], a[4])
        | gap(a[2], b[5])
        | gap(b[2], a[5])
}

/// Emits the pairs of entry `i` of a collision cell with the entries that `hits` names.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn emit(
    run: &Run,
    records: &[Record],
    vals: &[u32],
    slots: &[u32],
    wrapping_bucket: Option<usize>,
    ctx: &Context<'_>,
    i: usize,
    hits: &[u32],
    found: &mut Sink<'_>,
) {
    for &j in hits {
        let j = j as usize;
        // Without hash collisions the control bits already make this the corner cell; with
        // them (cells a torus apart share a key), make sure.
        if let Some(bucket) = wrapping_bucket {
            let (a, b) = (
                &records[(vals[i] & INDEX) as usize],
                &records[(vals[j] & INDEX) as usize],
            );
            let corner: [i32; 3] = std::array::from_fn(|k| a.lo[k].max(b.lo[k]));
            if ctx.grid.bucket_of(corner) != bucket || ctx.grid.key(corner) != run.key {
                continue;
            }
        }
        let (x, y) = (slots[i] & SLOT, slots[j] & SLOT);
        if ctx.store.allows_unless_both_fixed(x, y) {
            found.add(vals[i] & INDEX, vals[j] & INDEX, x, y);
        }
    }
}

/// Tests the pairs of one collision cell: every resident against every later entry, each pair
/// only if this cell is its corner cell (the control bits) and one of the two changed.
#[inline]
#[allow(clippy::too_many_arguments)]
fn test_run(
    run: &Run,
    records: &[Record],
    vals: &[u32],
    long: (&[Vec<i32>; 6], &[u32]),
    wrapping_bucket: Option<usize>,
    ctx: &Context<'_>,
    hits: &mut Vec<u32>,
    found: &mut Sink<'_>,
) -> u64 {
    let (s, len) = (run.start as usize, run.len as usize);
    if hits.len() < len {
        hits.resize(len, 0);
    }
    let vals = &vals[s..s + len];
    if len >= LONG_RUN {
        return test_long_run(run, records, vals, long, wrapping_bucket, ctx, hits, found);
    }
    // A short cell's boxes, copied from their records to the stack: in cache for the tests,
    // cheaper than gathering every cell's boxes into a list while listing the cells.
    let mut boxes = [BoxKeys::default(); LONG_RUN - 1];
    let mut slots = [0u32; LONG_RUN - 1];
    for (k, &v) in vals.iter().enumerate() {
        let r = &records[(v & INDEX) as usize];
        boxes[k] = r.keys;
        slots[k] = r.slot;
    }
    let (boxes, slots) = (&boxes[..len], &slots[..len]);
    let mut tests = 0;
    // Most collision cells hold two boxes: the only pair, with no loop around it.
    let pairs = if len == 2 { 1 } else { run.residents as usize };
    for i in 0..pairs {
        let (vi, si, bi) = (vals[i], slots[i], &boxes[i]);
        let mut n = 0;
        for j in i + 1..len {
            let (vj, sj, bj) = (vals[j], slots[j], &boxes[j]);
            // Pairs of two unchanged boxes are kept by the diff; two fixed boxes never pair.
            // Evaluated without branches, like the overlap: which pairs pass is unpredictable.
            let skip = u64::from(scan::skip(vi, si, vj, sj));
            tests += u64::from(skip == 0);
            hits[n] = j as u32;
            n += usize::from(skip | apart(bi, bj) == 0);
        }
        emit(
            run,
            records,
            vals,
            slots,
            wrapping_bucket,
            ctx,
            i,
            &hits[..n],
            found,
        );
    }
    tests
}

/// [`test_run`] for a cell of [`LONG_RUN`] entries or more, kept as columns (`cols`,
/// `slots`, from `run.at`): each resident scans the later entries eight at a time.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn test_long_run(
    run: &Run,
    records: &[Record],
    vals: &[u32],
    (cols, slots): (&[Vec<i32>; 6], &[u32]),
    wrapping_bucket: Option<usize>,
    ctx: &Context<'_>,
    hits: &mut [u32],
    found: &mut Sink<'_>,
) -> u64 {
    let (at, len) = (run.at as usize, run.len as usize);
    let cell = scan::Cell {
        vals,
        slots: &slots[at..at + len],
        cols: std::array::from_fn(|k| &cols[k][at..at + len]),
    };
    let mut tests = 0;
    for i in 0..run.residents as usize {
        let (t, n) = scan::scan(&cell, i, hits);
        tests += t;
        emit(
            run,
            records,
            vals,
            cell.slots,
            wrapping_bucket,
            ctx,
            i,
            &hits[..n],
            found,
        );
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs read off the bitmap of equal neighbours are the runs of two or more equal
    /// keys, across word boundaries too.
    #[test]
    fn runs_from_the_bitmap_are_the_runs_of_equal_keys() {
        let mut rng = crate::split_mix::SplitMix64::new(3);
        for case in 0..300 {
            let n = rng.below(400) as usize;
            let mut keys: Vec<u32> = (0..n).map(|_| rng.below(1 + n as u64 / 2) as u32).collect();
            keys.sort_unstable();
            if case % 5 == 0 {
                keys.iter_mut().for_each(|k| *k /= 70);
            }
            let mut want = Vec::new();
            let mut s = 0;
            while s < n {
                let e = s + keys[s..].iter().take_while(|&&k| k == keys[s]).count();
                if e - s >= 2 {
                    want.push((s, e));
                }
                s = e;
            }
            let mut bits = Vec::new();
            same_as_next(&keys, &mut bits);
            let mut got = Vec::new();
            let mut from = 0;
            while let Some(s) = next_set(&bits, from) {
                let e = s + keys[s..].iter().take_while(|&&k| k == keys[s]).count();
                assert_eq!(run_end(&bits, s), e, "case {case}: the run at {s}");
                got.push((s, e));
                from = e;
            }
            assert_eq!(got, want, "case {case}");
        }
    }

    /// The galloping merge gives what a plain merge gives, `a`'s entries first on equal keys,
    /// for short and long lists, with and without repeated keys.
    #[test]
    fn merge_entries_is_a_stable_merge() {
        let mut rng = crate::split_mix::SplitMix64::new(7);
        for case in 0..400 {
            let (na, nb) = (rng.below(300) as usize, rng.below(40) as usize);
            let span = [4, 50, 1 << 20][case % 3];
            let mut sorted = |n: usize, tag: u32| -> (Vec<u32>, Vec<u32>) {
                let mut k: Vec<u32> = (0..n).map(|_| rng.below(span) as u32).collect();
                k.sort_unstable();
                let v = (0..n as u32).map(|i| i | tag).collect();
                (k, v)
            };
            let (ak, av) = sorted(na, 0);
            let (bk, bv) = sorted(nb, 1 << 31);
            let mut want: Vec<(u32, u32)> = ak.iter().copied().zip(av.iter().copied()).collect();
            want.extend(bk.iter().copied().zip(bv.iter().copied()));
            // A stable sort by key keeps `a` before `b` on equal keys, and each list's order.
            want.sort_by_key(|&(k, _)| k);
            let (mut ok, mut ov) = (Vec::new(), Vec::new());
            merge_entries((&ak, &av), (&bk, &bv), (&mut ok, &mut ov));
            let got: Vec<(u32, u32)> = ok.into_iter().zip(ov).collect();
            assert_eq!(got, want, "case {case}");
        }
    }

    /// The chapter's rule tests a pair only in a cell where one of the two boxes is at home.
    /// These two boxes overlap, yet the only cell they share is a phantom cell of both.
    #[test]
    fn chapter_rule_misses_a_pair() {
        let a = Aabb::new([0.2, 0.7, 0.0], [0.8, 1.5, 0.5]);
        let b = Aabb::new([0.7, 0.2, 0.0], [1.5, 0.8, 0.5]);
        assert!(a.overlaps(&b));
        let cell = |x: f32| x.floor() as i32;
        let home = |x: &Aabb| x.center().map(cell);
        let cells = |x: &Aabb| {
            let mut out = Vec::new();
            for i in cell(x.min[0])..=cell(x.max[0]) {
                for j in cell(x.min[1])..=cell(x.max[1]) {
                    out.push([i, j, 0]);
                }
            }
            out
        };
        let shared: Vec<[i32; 3]> = cells(&a)
            .into_iter()
            .filter(|c| cells(&b).contains(c))
            .collect();
        assert_eq!(shared, vec![[0, 0, 0]]);
        assert_ne!(home(&a), [0, 0, 0]);
        assert_ne!(home(&b), [0, 0, 0]);
        // The corner rule: the larger lowest cell per axis is (0, 0, 0), which both cover.
        let corner: Vec<i32> = (0..3).map(|k| cell(a.min[k]).max(cell(b.min[k]))).collect();
        assert_eq!(corner, vec![0, 0, 0]);
    }

    #[test]
    fn records_pack_spans_and_home() {
        let r = Record::new(&Aabb::default(), 5, [-3, 0, 7], [-1, 0, 14], [-2, 0, 10]);
        assert_eq!((r.span(0), r.span(1), r.span(2)), (3, 1, 8));
        assert_eq!(r.hi(), [-1, 0, 14]);
        assert_eq!(
            (r.home_offset(0), r.home_offset(1), r.home_offset(2)),
            (1, 0, 3)
        );
    }
}
