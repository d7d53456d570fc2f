//! How a bucket's tests record the pairs they find, and the keys the pairs are kept under.
//!
//! The pairs found are diffed against the bucket's sorted pairs of the last update, so they
//! must be sorted too. A bucket built afresh (every coarse level) holds its records in slot
//! order, residents then visitors, and each pair is tested by a resident: the pair is then a
//! bit in its tester's row of a bit matrix (resident × record), and reading the rows in order
//! gives the pairs sorted, with no sort ([`PairSinkKind::Rows`]); the diff reads them off the
//! rows as it merges, without writing them out ([`RowKeys`]). Their keys name the tester's slot,
//! whether the other box is a visitor, and its slot ([`ordered_key`]), an order that holds from
//! one update to the next. On `sizes` (3.4 million planet–asteroid pairs a frame) sorting the
//! keys was a quarter of the frame. Level 0, whose kept records are out of slot order, sorts
//! pair keys.

use crate::pairs::pair_key;

/// The most words of [`PairSinkKind::Rows`]' bits per bucket (256 KB): past that, a bucket with
/// that many residents and records sorts record keys instead (as does a bucket whose matrix
/// would be sparse). Small in the crate's tests, so that the differential suite takes
/// both ways.
#[cfg(not(test))]
pub(crate) const MAX_ROW_WORDS: usize = 1 << 15;
#[cfg(test)]
pub(crate) const MAX_ROW_WORDS: usize = 48;

/// How a bucket's tests record the pairs they find this update.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PairSinkKind {
    /// Pair keys, sorted before the diff (a level whose records are out of slot order).
    #[default]
    Keys,
    /// [`record_key`]s, sorted, then turned into [`ordered_key`]s.
    RecordKeys,
    /// A bit per pair in its tester's row, read in order: the record keys come out sorted.
    Rows,
}

/// Where the tests put the pairs they find (see [`PairSinkKind`]).
pub(crate) enum PairSink<'a> {
    Keys(&'a mut Vec<u64>),
    RecordKeys(&'a mut Vec<u64>),
    Rows { bits: &'a mut [u64], words: usize },
}

impl PairSink<'_> {
    /// Records the pair of records `i` (a resident, the tester) and `j`, with slots `x`, `y`.
    #[inline(always)]
    pub fn add(&mut self, i: u32, j: u32, x: u32, y: u32) {
        match self {
            PairSink::Keys(keys) => keys.push(pair_key(x, y)),
            PairSink::RecordKeys(keys) => keys.push(record_key(i, j)),
            PairSink::Rows { bits, words } => {
                // In bounds: the tester is a resident and `j` a record of the bucket, which
                // the rows were sized for.
                bits[i as usize * *words + (j as usize >> 6)] |= 1 << (j & 63);
            }
        }
    }
}

/// The key of a pair found on a level of [`by_record`](super::context::Context::by_record) until
/// it is sorted: the record indices of the resident that tested it and of the later entry.
/// Indices below 2^24 (one record per box and bucket).
#[inline(always)]
fn record_key(i: u32, j: u32) -> u64 {
    (u64::from(i) << 32) | u64::from(j)
}

/// The key a pair of a level of [`by_record`](super::context::Context::by_record) is kept under:
/// the slot of the resident that tests it, whether the other box is a visitor, the other's slot.
/// Keys sort as the record keys of one update do (records hold residents then visitors, each in
/// slot order), and a pair keeps its key from one update to the next while its boxes keep their
/// levels: a pair of two residents is tested by the one with the smaller slot, a pair with a
/// visitor by the resident.
#[inline(always)]
pub(crate) fn ordered_key(tester: u32, visitor: bool, other: u32) -> u64 {
    (u64::from(tester) << 33) | (u64::from(visitor) << 32) | u64::from(other)
}

/// The part of an [`ordered_key`] that names its tester, from the tester's part as the other
/// box: a tester is a resident, so that part is its slot alone.
#[inline(always)]
pub(crate) fn tester_part(other_part: u64) -> u64 {
    ordered_key(other_part as u32, false, 0)
}

/// The two slots of an [`ordered_key`].
#[inline(always)]
pub(crate) fn ordered_slots(k: u64) -> (u32, u32) {
    ((k >> 33) as u32, k as u32)
}

/// The [`ordered_key`]s of a bucket's bit rows ([`PairSinkKind::Rows`]), in order: row by row
/// (testers in slot order), bit by bit.
pub(crate) struct RowKeys<'a> {
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
    pub fn new(rows: &'a [u64], words: usize, others: &'a [u64]) -> Self {
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
