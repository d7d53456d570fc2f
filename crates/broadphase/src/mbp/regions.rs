//! Regions: their ids, the ways to lay them out (PhysX's grid over world bounds, Unreal's
//! set-up with outer bounds), the sets of region indices, and the index that finds the regions
//! a box touches.

use std::fmt;

use crate::{Aabb, Error};

/// The most regions one [`Mbp`](crate::Mbp) holds, as in PhysX (`MAX_NB_MBP`).
pub const MAX_REGIONS: usize = 256;

/// A region of an [`Mbp`](crate::Mbp): an index below [`MAX_REGIONS`] and a generation, so
/// that the id of a removed region is never mistaken for a later one.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RegionId {
    index: u16,
    generation: u32,
}

impl RegionId {
    pub(crate) fn new(index: usize, generation: u32) -> Self {
        Self {
            index: index as u16,
            generation,
        }
    }

    /// The region's index, below [`MAX_REGIONS`]. Indices of removed regions are reused.
    #[must_use]
    pub fn index(self) -> usize {
        usize::from(self.index)
    }

    /// How many regions held this index before this one.
    #[must_use]
    pub fn generation(self) -> u32 {
        self.generation
    }
}

impl fmt::Display for RegionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}v{}", self.index, self.generation)
    }
}

/// Figures about one region after the last update, like PhysX's `PxBroadPhaseRegionInfo`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RegionInfo {
    /// The region's id; `None` for the regions Mbp derives itself when no region was added.
    pub id: Option<RegionId>,
    /// The region's bounds (derived regions reach to infinity at the borders).
    pub bounds: Aabb,
    /// Fixed proxies whose box touches the region.
    pub fixed: usize,
    /// Dynamic proxies whose box touches the region.
    pub dynamic: usize,
    /// The cells the region is cut into (more as it fills up).
    pub cells: usize,
    /// Whether the region overlaps another region.
    pub overlaps: bool,
    /// Where the region's cells are cut: the axis and the coordinate of each border between
    /// two of its cells (none before the region is built).
    pub cuts: Vec<(usize, f64)>,
}

/// Checks a region's bounds: like a proxy's box, except that a region may reach to infinity
/// (`f32::INFINITY`) on any side.
pub(crate) fn check_region(bounds: &Aabb) -> Result<(), Error> {
    if bounds.min.iter().chain(&bounds.max).any(|v| v.is_nan()) {
        return Err(Error::NonFiniteAabb { aabb: *bounds });
    }
    match (0..3).find(|&i| bounds.min[i] > bounds.max[i]) {
        Some(axis) => Err(Error::InvertedAabb {
            aabb: *bounds,
            axis,
        }),
        None => Ok(()),
    }
}

/// Checks an up axis (0 = x, 1 = y, 2 = z).
fn check_up(up: usize) -> Result<(), Error> {
    if up < 3 {
        Ok(())
    } else {
        Err(Error::InvalidParameter {
            name: "up axis",
            value: up as f64,
            expected: "0 (x), 1 (y) or 2 (z)",
        })
    }
}

/// The two horizontal axes for an up axis, in PhysX's order: `(up + 1) % 3`, `(up + 2) % 3`.
#[inline]
pub(crate) fn horizontal(up: usize) -> [usize; 2] {
    [(up + 1) % 3, (up + 2) % 3]
}

/// `subdivisions × subdivisions` regions tiling `bounds` in the plane perpendicular to `up`
/// (0 = x, 1 = y, 2 = z), each spanning the bounds' full height: PhysX's
/// `PxBroadPhaseExt::createRegionsFromWorldBounds`. Neighbours share their borders exactly.
///
/// ```
/// use broadphase::{regions_from_bounds, Aabb};
/// let regions = regions_from_bounds(&Aabb::new([0.0; 3], [8.0, 2.0, 8.0]), 4, 1)?;
/// assert_eq!(regions.len(), 16);
/// assert_eq!(regions[0], Aabb::new([0.0; 3], [2.0, 2.0, 2.0]));
/// # Ok::<(), broadphase::Error>(())
/// ```
///
/// # Errors
/// [`Error::NonFiniteAabb`] or [`Error::InvertedAabb`] for bad bounds;
/// [`Error::InvalidParameter`] for `subdivisions` outside `1..=16` (more would exceed
/// [`MAX_REGIONS`]) or an up axis above 2.
pub fn regions_from_bounds(
    bounds: &Aabb,
    subdivisions: u32,
    up: usize,
) -> Result<Vec<Aabb>, Error> {
    bounds.validate()?;
    check_up(up)?;
    if !(1..=16).contains(&subdivisions) {
        return Err(Error::InvalidParameter {
            name: "subdivisions",
            value: f64::from(subdivisions),
            expected: "1 to 16 (at most 256 regions)",
        });
    }
    let n = subdivisions as usize;
    let [a0, a1] = horizontal(up);
    // Borders computed once in f64, so neighbours share them exactly and the last one is the
    // bounds' own maximum.
    let borders = |axis: usize| -> Vec<f32> {
        let (lo, hi) = (f64::from(bounds.min[axis]), f64::from(bounds.max[axis]));
        (0..=n)
            .map(|i| {
                if i == n {
                    bounds.max[axis]
                } else {
                    (lo + (hi - lo) * i as f64 / n as f64) as f32
                }
            })
            .collect()
    };
    let (b0, b1) = (borders(a0), borders(a1));
    let mut out = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let mut r = *bounds;
            r.min[a0] = b0[i];
            r.max[a0] = b0[i + 1];
            r.min[a1] = b1[j];
            r.max[a1] = b1[j + 1];
            out.push(r);
        }
    }
    Ok(out)
}

/// Unreal's MBP set-up (`FBroadphaseSettings` and `InitPhysScene`): a grid of regions over
/// `bounds`, and optionally four more regions filling the ring between `bounds` and
/// `outer_bounds`.
///
/// ```
/// use broadphase::{Aabb, MbpSettings};
/// // Unreal: z up. 20 subdivisions are clamped to 15 when outer bounds are used.
/// let mut s = MbpSettings::unreal(Aabb::new([-100.0; 3], [100.0; 3]), 20);
/// s.outer_bounds = Some(Aabb::new([-200.0; 3], [200.0; 3]));
/// assert_eq!(s.clamped_subdivisions(), 15);
/// assert_eq!(s.regions()?.len(), 15 * 15 + 4);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct MbpSettings {
    /// The bounds the grid of regions covers (Unreal's `MBPBounds`).
    pub bounds: Aabb,
    /// Bounds around `bounds` (Unreal's `MBPOuterBounds`, used when set): the ring between
    /// the two becomes four more regions.
    pub outer_bounds: Option<Aabb>,
    /// Regions per horizontal axis (Unreal's `MBPNumSubdivs`), clamped like Unreal: to
    /// `1..=16`, or `1..=15` with outer bounds (at most 256 regions either way).
    pub subdivisions: u32,
    /// The up axis (0 = x, 1 = y, 2 = z): regions tile the plane of the two others.
    /// Unreal: 2 (z); default here: 1 (y).
    pub up: usize,
}

impl MbpSettings {
    /// `subdivisions × subdivisions` regions over `bounds`, y up, no outer bounds.
    #[must_use]
    pub fn new(bounds: Aabb, subdivisions: u32) -> Self {
        Self {
            bounds,
            outer_bounds: None,
            subdivisions,
            up: 1,
        }
    }

    /// As Unreal sets MBP up: z up, no outer bounds (set `outer_bounds` to add them).
    #[must_use]
    pub fn unreal(bounds: Aabb, subdivisions: u32) -> Self {
        Self {
            up: 2,
            ..Self::new(bounds, subdivisions)
        }
    }

    /// The subdivisions after Unreal's clamp: `1..=16`, or `1..=15` with outer bounds.
    #[must_use]
    pub fn clamped_subdivisions(&self) -> u32 {
        let most = if self.outer_bounds.is_some() { 15 } else { 16 };
        self.subdivisions.clamp(1, most)
    }

    /// The regions these settings stand for: the grid over `bounds` (see
    /// [`regions_from_bounds`]), then, with outer bounds, the four regions of the ring:
    /// the strips on the low and high side of the first horizontal axis span the outer
    /// bounds' full depth on the second; the strips on the low and high side of the second
    /// lie between them. All four span the outer bounds' height.
    ///
    /// # Errors
    /// As [`regions_from_bounds`]; [`Error::InvalidParameter`] when the outer bounds do not
    /// contain `bounds`.
    pub fn regions(&self) -> Result<Vec<Aabb>, Error> {
        let mut out = regions_from_bounds(&self.bounds, self.clamped_subdivisions(), self.up)?;
        if let Some(outer) = self.outer_bounds {
            outer.validate()?;
            if !outer.contains(&self.bounds) {
                return Err(Error::InvalidParameter {
                    name: "outer_bounds",
                    value: f64::from(outer.min[0]),
                    expected: "outer bounds that contain the bounds",
                });
            }
            let [a0, a1] = horizontal(self.up);
            let (inner, up) = (self.bounds, self.up);
            let strip = |lo0: f32, hi0: f32, lo1: f32, hi1: f32| {
                let mut r = outer;
                r.min[a0] = lo0;
                r.max[a0] = hi0;
                r.min[a1] = lo1;
                r.max[a1] = hi1;
                r.min[up] = outer.min[up];
                r.max[up] = outer.max[up];
                r
            };
            out.push(strip(
                outer.min[a0],
                inner.min[a0],
                outer.min[a1],
                outer.max[a1],
            ));
            out.push(strip(
                inner.max[a0],
                outer.max[a0],
                outer.min[a1],
                outer.max[a1],
            ));
            out.push(strip(
                inner.min[a0],
                inner.max[a0],
                outer.min[a1],
                inner.min[a1],
            ));
            out.push(strip(
                inner.min[a0],
                inner.max[a0],
                inner.max[a1],
                outer.max[a1],
            ));
        }
        Ok(out)
    }
}

/// A set of region indices (a 256-bit mask), iterated in increasing order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RegionSet([u64; 4]);

impl RegionSet {
    #[inline]
    pub fn insert(&mut self, r: usize) {
        self.0[r >> 6] |= 1 << (r & 63);
    }

    #[inline]
    pub fn contains(&self, r: usize) -> bool {
        self.0[r >> 6] >> (r & 63) & 1 != 0
    }

    #[inline]
    pub fn union(&mut self, other: &RegionSet) {
        for k in 0..4 {
            self.0[k] |= other.0[k];
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// How many regions the set holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The indices in the set, lowest first.
    #[inline]
    pub fn iter(&self) -> RegionSetIter {
        RegionSetIter {
            words: self.0,
            word: 0,
        }
    }
}

/// The indices of a [`RegionSet`], lowest first.
#[derive(Clone, Debug)]
pub(crate) struct RegionSetIter {
    words: [u64; 4],
    word: usize,
}

impl Iterator for RegionSetIter {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word < 4 {
            let w = self.words[self.word];
            if w != 0 {
                self.words[self.word] = w & (w - 1);
                return Some((self.word << 6) | w.trailing_zeros() as usize);
            }
            self.word += 1;
        }
        None
    }
}

/// Bins per axis of the region index.
const BINS: usize = 16;

/// Finds the regions a box touches: a coarse grid of bins over the regions' finite extent in
/// the plane of two axes, each bin with the set of regions that reach into it, then an exact
/// test against each candidate's bounds. A region's bins and a box's bins come from the same
/// monotone mapping, so every region the box touches is among the candidates.
#[derive(Clone, Debug)]
pub(crate) struct RegionIndex {
    axes: [usize; 2],
    origin: [f64; 2],
    inv: [f64; 2],
    bins: [usize; 2],
    masks: Vec<RegionSet>,
    /// The bounds of every region, by index (`None`: no region there).
    bounds: Vec<Option<Aabb>>,
}

impl Default for RegionIndex {
    fn default() -> Self {
        Self::new([0, 2], &[])
    }
}

impl RegionIndex {
    /// The index of `regions` (index, bounds) over the plane of `axes`.
    pub fn new(axes: [usize; 2], regions: &[(usize, Aabb)]) -> Self {
        let mut index = Self {
            axes,
            origin: [0.0; 2],
            inv: [0.0; 2],
            bins: [1, 1],
            masks: Vec::new(),
            bounds: vec![None; MAX_REGIONS],
        };
        for &(r, b) in regions {
            index.bounds[r] = Some(b);
        }
        if regions.len() > 1 {
            for (k, &axis) in axes.iter().enumerate() {
                let finite = regions
                    .iter()
                    .flat_map(|(_, b)| [b.min[axis], b.max[axis]])
                    .filter(|c| c.is_finite())
                    .map(f64::from);
                let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), c| {
                    (l.min(c), h.max(c))
                });
                if lo < hi {
                    index.origin[k] = lo;
                    index.inv[k] = BINS as f64 / (hi - lo);
                    index.bins[k] = BINS;
                }
            }
        }
        index.masks = vec![RegionSet::default(); index.bins[0] * index.bins[1]];
        for &(r, b) in regions {
            let (u0, u1, v0, v1) = index.bin_range(&b);
            for u in u0..=u1 {
                for v in v0..=v1 {
                    index.masks[u * index.bins[1] + v].insert(r);
                }
            }
        }
        index
    }

    #[inline]
    fn bin(&self, k: usize, x: f32) -> usize {
        let t = (f64::from(x) - self.origin[k]) * self.inv[k];
        t.clamp(0.0, (self.bins[k] - 1) as f64) as usize
    }

    #[inline]
    fn bin_range(&self, b: &Aabb) -> (usize, usize, usize, usize) {
        let [a, c] = self.axes;
        (
            self.bin(0, b.min[a]),
            self.bin(0, b.max[a]),
            self.bin(1, b.min[c]),
            self.bin(1, b.max[c]),
        )
    }

    /// The bounds of region `r`, if there is one.
    #[inline]
    pub fn bounds(&self, r: usize) -> Option<&Aabb> {
        self.bounds[r].as_ref()
    }

    /// The regions `aabb` touches (inclusive overlap).
    pub fn lookup(&self, aabb: &Aabb) -> RegionSet {
        let (u0, u1, v0, v1) = self.bin_range(aabb);
        let mut candidates = RegionSet::default();
        for u in u0..=u1 {
            for v in v0..=v1 {
                candidates.union(&self.masks[u * self.bins[1] + v]);
            }
        }
        let mut out = RegionSet::default();
        for r in candidates.iter() {
            if self.bounds[r].is_some_and(|b| b.overlaps(aabb)) {
                out.insert(r);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_grid_follows_physx() {
        let b = Aabb::new([0.0, -1.0, 0.0], [4.0, 1.0, 8.0]);
        let r = regions_from_bounds(&b, 2, 1).expect("valid");
        // y up: the first horizontal axis is z, the second x; z varies fastest.
        assert_eq!(r[0], Aabb::new([0.0, -1.0, 0.0], [2.0, 1.0, 4.0]));
        assert_eq!(r[1], Aabb::new([0.0, -1.0, 4.0], [2.0, 1.0, 8.0]));
        assert_eq!(r[3], Aabb::new([2.0, -1.0, 4.0], [4.0, 1.0, 8.0]));
        for bad in [0, 17] {
            assert!(matches!(
                regions_from_bounds(&b, bad, 1),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(regions_from_bounds(&b, 2, 3).is_err());
    }

    #[test]
    fn unreal_clamps_and_adds_four_outer_regions() {
        let inner = Aabb::new([-10.0, -10.0, -5.0], [10.0, 10.0, 5.0]);
        let outer = Aabb::new([-30.0, -20.0, -50.0], [30.0, 20.0, 50.0]);
        let plain = MbpSettings::unreal(inner, 99);
        assert_eq!(plain.clamped_subdivisions(), 16);
        assert_eq!(plain.regions().expect("valid").len(), 256);
        assert_eq!(MbpSettings::unreal(inner, 0).clamped_subdivisions(), 1);
        let ringed = MbpSettings {
            outer_bounds: Some(outer),
            ..MbpSettings::unreal(inner, 16)
        };
        assert_eq!(ringed.clamped_subdivisions(), 15);
        let regions = ringed.regions().expect("valid");
        assert_eq!(regions.len(), 15 * 15 + 4);
        // z up: the horizontal axes are x then y.
        let ring = &regions[225..];
        assert_eq!(
            ring[0],
            Aabb::new([-30.0, -20.0, -50.0], [-10.0, 20.0, 50.0])
        );
        assert_eq!(ring[1], Aabb::new([10.0, -20.0, -50.0], [30.0, 20.0, 50.0]));
        assert_eq!(
            ring[2],
            Aabb::new([-10.0, -20.0, -50.0], [10.0, -10.0, 50.0])
        );
        assert_eq!(ring[3], Aabb::new([-10.0, 10.0, -50.0], [10.0, 20.0, 50.0]));
        // The ring and the grid tile the outer bounds' footprint: any point of it lies in one.
        for x in [-29.0f32, -10.0, 0.0, 10.0, 29.5] {
            for y in [-19.0f32, -10.0, 3.0, 19.0] {
                let p = Aabb::point([x, y, 0.0]);
                assert!(regions.iter().any(|r| r.overlaps(&p)), "{x} {y}");
            }
        }
        let bad = MbpSettings {
            outer_bounds: Some(Aabb::new([0.0; 3], [1.0; 3])),
            ..plain
        };
        assert!(bad.regions().is_err());
    }

    #[test]
    fn the_index_finds_exactly_the_touched_regions() {
        let mut regions: Vec<(usize, Aabb)> =
            regions_from_bounds(&Aabb::new([0.0; 3], [10.0; 3]), 5, 1)
                .expect("valid")
                .into_iter()
                .enumerate()
                .collect();
        regions.push((200, Aabb::new([3.0; 3], [3.5; 3])));
        let index = RegionIndex::new(horizontal(1), &regions);
        for b in [
            Aabb::new([2.0; 3], [2.0; 3]),
            Aabb::new([3.9, 0.0, 1.0], [4.0, 0.5, 1.5]),
            Aabb::new([-5.0; 3], [-4.0; 3]),
            Aabb::new([-1e30; 3], [1e30; 3]),
            Aabb::new([3.2, 3.2, 3.2], [3.3, 3.3, 3.3]),
        ] {
            let want: Vec<usize> = regions
                .iter()
                .filter(|(_, r)| r.overlaps(&b))
                .map(|(i, _)| *i)
                .collect();
            assert_eq!(index.lookup(&b).iter().collect::<Vec<_>>(), want, "{b:?}");
        }
    }

    #[test]
    fn region_sets_iterate_in_order() {
        let mut s = RegionSet::default();
        for r in [255, 3, 64, 0, 63] {
            s.insert(r);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 63, 64, 255]);
        assert!(s.contains(64) && !s.contains(65));
    }
}
