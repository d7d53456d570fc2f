//! A box's record in a bucket: its coordinates as integer keys, its lowest cell, its slot with
//! flags, and the shape of its cell range (spans and home cell).

pub(crate) use crate::encode::{box_keys, BoxKeys};
use crate::store::Store;
use crate::Aabb;

/// `Record::slot`: the slot in the low bits.
pub(crate) const SLOT: u32 = (1 << 24) - 1;
/// `Record::slot`: the proxy is fixed.
pub(crate) const FIXED: u32 = 1 << 31;
/// `Record::slot`: the proxy changed since the last update (or every proxy must be tested).
pub(crate) const DIRTY: u32 = 1 << 30;

/// A box binned to a bucket.
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
    pub fn home_offset(&self, a: usize) -> i32 {
        ((self.shape >> (9 + 3 * a)) & 7) as i32
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
