//! An endpoint of an awake box on one axis: what Sap's sorted arrays hold, and what its probes
//! read.

use crate::prune::EncodedBox;

/// Set in [`End::tag`] on a maximum.
const MAX_BIT: u32 = 1 << 31;

/// One endpoint of an awake box on one axis. It carries the box's other keys, so that the
/// overlap test of a swap reads only the two endpoints swapped: no lookup per swap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(super) struct End {
    /// The encoded coordinate (see [`crate::encode`]).
    pub coord: u32,
    /// The slot, plus [`MAX_BIT`] on a maximum.
    pub tag: u32,
    /// The box's other endpoint on this axis.
    pub other: u32,
    /// Where the endpoint stands among the asleep endpoints of the other kind: for a minimum,
    /// the number of asleep maxima below it; for a maximum, the number of asleep minima at or
    /// below it. Valid while the asleep lists are unchanged.
    pub finger: u32,
    /// The box's keys on the two other axes, `[min_u, min_v, max_u, max_v]`.
    pub uv: [u32; 4],
}

/// The two other axes of each axis, in the order of [`End::uv`] and [`EncodedBox::uv`].
const OTHER_AXES: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// A box's keys on the two other axes of `axis`.
#[inline]
fn uv_of(keys: &[u32; 6], axis: usize) -> [u32; 4] {
    let [u, v] = OTHER_AXES[axis % 3];
    [keys[u], keys[v], keys[3 + u], keys[3 + v]]
}

impl End {
    /// The minimum or maximum of the box with `keys` (`[min x, y, z, max x, y, z]`) on `axis`.
    #[inline]
    pub(super) fn new(keys: &[u32; 6], axis: usize, slot: u32, is_max: bool) -> Self {
        let mut e = End {
            tag: slot | if is_max { MAX_BIT } else { 0 },
            ..End::default()
        };
        e.set_keys(keys, axis);
        e
    }

    /// Takes the box's (new) keys.
    #[inline]
    fn set_keys(&mut self, keys: &[u32; 6], axis: usize) {
        if self.is_max() {
            self.set_keys_of_kind::<true>(keys, axis);
        } else {
            self.set_keys_of_kind::<false>(keys, axis);
        }
    }

    /// [`End::set_keys`] for an endpoint known to be a maximum (or a minimum).
    #[inline(always)]
    pub(super) fn set_keys_of_kind<const IS_MAX: bool>(&mut self, keys: &[u32; 6], axis: usize) {
        let (lo, hi) = (keys[axis], keys[3 + axis]);
        (self.coord, self.other) = if IS_MAX { (hi, lo) } else { (lo, hi) };
        self.uv = uv_of(keys, axis);
    }

    /// The sort order: by coordinate, and at equal coordinates a minimum before a maximum, so
    /// that touching boxes overlap. No bit of the coordinate is lost (PhysX drops one).
    #[inline]
    pub(super) fn order(&self) -> u64 {
        (u64::from(self.coord) << 1) | u64::from(self.tag >> 31)
    }

    #[inline]
    pub(super) fn is_max(&self) -> bool {
        self.tag & MAX_BIT != 0
    }

    #[inline]
    pub(super) fn slot(&self) -> u32 {
        self.tag & !MAX_BIT
    }

    /// The box as the pruning kernel sees it (a minimum's view: sweep key, its maximum, uv).
    #[inline]
    pub(super) fn encoded(&self) -> EncodedBox {
        EncodedBox {
            min_x: self.coord,
            max_x: self.other,
            uv: self.uv,
        }
    }
}
