//! A bucket's cell entries: what an entry holds, how a bucket's records write theirs, how the
//! runs of one cell are found in the sorted entries, and how kept and new entries merge.
//!
//! Each box writes one entry per cell it covers in the bucket: the cell's id (the sort key) and
//! the box's record index with control bits (the value). The entry of the box's home cell (see
//! [`super`]) is marked home; the others are its phantoms. After the stable radix
//! sort the entries of one cell are a run; a run with two boxes or more, one of them living on
//! this level, is a collision cell.

use crate::gallop::gallop;

use super::layout::LevelGrid;
use super::record::{Record, DIRTY};

/// Entry value: the record index in the low bits.
pub(crate) const INDEX: u32 = (1 << 24) - 1;
/// Entry value: the cell is the box's lowest on x, y, z (bits 24, 25, 26).
const FIRST_SHIFT: u32 = 24;
pub(crate) const FIRST_ALL: u32 = 7 << FIRST_SHIFT;
/// Entry value: the cell holds the box's centre on x, y, z (bits 27, 28, 29).
const HOME_SHIFT: u32 = 27;
pub(crate) const HOME_ALL: u32 = 7 << HOME_SHIFT;
/// Entry value: the entry's record is [`DIRTY`]. A collision cell none of whose entries is
/// changed has no pair to test (the diff keeps the pairs of unchanged boxes), so it is not
/// listed: in a frame where a tenth of the boxes move, most cells are skipped unread.
pub(crate) const CHANGED: u32 = DIRTY;

/// The lowest and highest cells of a bucket's records: whether two of its cells may share a key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extent {
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
    pub fn add(&mut self, r: &Record) {
        for a in 0..3 {
            self.lo[a] = self.lo[a].min(r.lo[a]);
            self.hi[a] = self.hi[a].max(r.lo[a] + r.span(a) - 1);
        }
    }

    /// Whether the records span more than the torus on some axis.
    pub fn wraps(&self, g: &LevelGrid) -> bool {
        (0..3).any(|a| i64::from(self.hi[a]) - i64::from(self.lo[a]) >= 1i64 << (g.lb + g.kb[a]))
    }
}

/// Writes one entry per cell of bucket `me` that each record covers: the cell's key, and the
/// record's index (from `base`) with its control bits. Returns how many are home entries.
pub(crate) fn write_entries(
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
pub(crate) fn same_as_next(keys: &[u32], bits: &mut Vec<u64>) {
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
pub(crate) fn next_set(bits: &[u64], from: usize) -> Option<usize> {
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
pub(crate) fn run_end(bits: &[u64], s: usize) -> usize {
    let mut w = s / 64;
    let mut last = s + (bits[w] >> (s % 64)).trailing_ones() as usize;
    // A run that reaches the end of its word goes on in the next one.
    while last.is_multiple_of(64) {
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
pub(crate) fn merge_entries(
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
}
