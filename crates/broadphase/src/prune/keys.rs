//! The key formats of the box lists and their kernels: a box as [`encode`]d keys
//! ([`EncodedBox`]), the same keys in signed form ([`SignedBox`]), and the padding that ends
//! every key array of a list.

use crate::encode::encode;
use crate::Aabb;

/// Entries past the last box in each key array.
pub(crate) const PAD: usize = 8;
/// The sweep-axis key after the last box: above every finite key.
pub(crate) const SENTINEL: i32 = i32::MAX;
/// Filler of the other arrays' padding: a box that overlaps nothing (never read for a result).
pub(crate) const FILL_MIN: i32 = i32::MAX;
pub(crate) const FILL_MAX: i32 = i32::MIN;

/// The signed form of an [`encode`]d key: same order, as `i32`.
#[inline(always)]
pub(crate) fn signed(key: u32) -> i32 {
    (key ^ 0x8000_0000) as i32
}

/// The [`encode`]d key of a signed key.
#[inline(always)]
pub(crate) fn unsigned(key: i32) -> u32 {
    (key as u32) ^ 0x8000_0000
}

/// A box in integer keys, its sweep axis split from the two others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EncodedBox {
    /// Encoded minimum on the sweep axis.
    pub min_x: u32,
    /// Encoded maximum on the sweep axis.
    pub max_x: u32,
    /// Encoded `[min_u, min_v, max_u, max_v]` on the two other axes.
    pub uv: [u32; 4],
}

impl EncodedBox {
    /// Encodes `aabb` with `axes[0]` as the sweep axis and `axes[1]`, `axes[2]` as the others.
    #[inline]
    pub(crate) fn new(aabb: &Aabb, axes: [usize; 3]) -> Self {
        let [x, u, v] = axes;
        Self {
            min_x: encode(aabb.min[x]),
            max_x: encode(aabb.max[x]),
            uv: [
                encode(aabb.min[u]),
                encode(aabb.min[v]),
                encode(aabb.max[u]),
                encode(aabb.max[v]),
            ],
        }
    }
}

/// One box's signed keys, for the kernels.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SignedBox {
    pub min_x: i32,
    pub max_x: i32,
    pub min_u: i32,
    pub min_v: i32,
    pub max_u: i32,
    pub max_v: i32,
}

impl SignedBox {
    #[inline(always)]
    pub(crate) fn new(b: &EncodedBox) -> Self {
        Self {
            min_x: signed(b.min_x),
            max_x: signed(b.max_x),
            min_u: signed(b.uv[0]),
            min_v: signed(b.uv[1]),
            max_u: signed(b.uv[2]),
            max_v: signed(b.uv[3]),
        }
    }
}
