//! The pair tests of one collision cell: every resident of the cell against every later entry,
//! each pair where its control bits say this cell is the pair's corner cell.
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

use super::context::Context;
use super::entries::INDEX;
use super::found::PairSink;
use super::record::{BoxKeys, Record, SLOT};
use super::scan;

/// A collision cell: a run of entries of one cell, residents first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// Where its entries start in the bucket's `keys` and `vals`.
    pub start: u32,
    /// Where its boxes start in the bucket's `cols` and `col_slots` for a cell of [`LONG_RUN`]
    /// entries or more (0 for a shorter cell, whose tests read its records).
    pub at: u32,
    pub len: u32,
    /// Entries at the start of the run whose box lives on this level.
    pub residents: u32,
    /// The cell's sort key.
    pub key: u32,
}

/// Entries from which a collision cell's boxes are kept as columns and scanned eight at a
/// time: a resident then has at least eight later entries to test.
pub(crate) const LONG_RUN: usize = 9;

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
    found: &mut PairSink<'_>,
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
pub(crate) fn test_run(
    run: &Run,
    records: &[Record],
    vals: &[u32],
    long: (&[Vec<i32>; 6], &[u32]),
    wrapping_bucket: Option<usize>,
    ctx: &Context<'_>,
    hits: &mut Vec<u32>,
    found: &mut PairSink<'_>,
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
    found: &mut PairSink<'_>,
) -> u64 {
    let (at, len) = (run.at as usize, run.len as usize);
    let cell = scan::RunColumns {
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
    use crate::Aabb;

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
}
