//! The automatic column layout: which axis Abp sweeps, and how the plane of the two other
//! axes is cut into columns.
//!
//! A single sweep over N boxes in a dense 3D scene tests every box against all boxes in its
//! slab along the sweep axis: about N²·w/L tests, 10⁸ for 100k boxes. Cutting the cross plane
//! into C columns and sweeping each on its own divides that by C, at the price of boxes that
//! straddle column borders appearing in several columns. The layout is derived from the boxes
//! themselves (robust percentiles, so a few far or huge boxes do not stretch it) and rebuilt
//! when the population changes a lot; boxes outside it are clamped into the border columns.

use crate::{Aabb, Error};

/// How [`Abp`](crate::Abp) cuts the scene into columns.
///
/// ```
/// use broadphase::{Abp, AbpSettings, Config};
/// let settings = AbpSettings { boxes_per_column: 256, ..AbpSettings::default() };
/// let abp = Abp::with_settings(Config::default(), settings)?;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbpSettings {
    /// Boxes per column the layout aims for: small enough that sweeps are short, large enough
    /// that per-column overhead and boxes straddling borders stay few. Default 1024.
    pub boxes_per_column: usize,
    /// Columns are at least this many median box extents wide, which bounds how many columns
    /// a typical box straddles. Default 2.5.
    pub min_column_extents: f32,
    /// Below this many proxies one column (a plain sweep) is used. Default 512.
    pub min_proxies_for_columns: usize,
}

impl Default for AbpSettings {
    fn default() -> Self {
        Self {
            boxes_per_column: 1024,
            min_column_extents: 2.5,
            min_proxies_for_columns: 512,
        }
    }
}

impl AbpSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero boxes per column or a negative or non-finite
    /// extent factor.
    pub fn validate(&self) -> Result<(), Error> {
        if self.boxes_per_column == 0 {
            return Err(Error::InvalidParameter {
                name: "boxes_per_column",
                value: 0.0,
                expected: "at least 1",
            });
        }
        if !(self.min_column_extents.is_finite() && self.min_column_extents >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "min_column_extents",
                value: f64::from(self.min_column_extents),
                expected: "a finite value >= 0",
            });
        }
        Ok(())
    }
}

/// At most this many columns per axis (indices fit in 16 bits).
const MAX_CELLS_PER_AXIS: usize = 1024;
/// Boxes sampled to choose a layout.
const SAMPLE: usize = 4096;

/// The sweep axis and the column grid over the two other axes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    /// `[sweep, u, v]`: the sweep axis, then the two column axes.
    pub axes: [usize; 3],
    origin: [f64; 2],
    inv_cell: [f64; 2],
    /// Columns along u and along v.
    pub cells: [usize; 2],
}

/// The columns a box covers: `u0..=u1` by `v0..=v1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ColumnRange {
    pub u0: u16,
    pub u1: u16,
    pub v0: u16,
    pub v1: u16,
}

impl ColumnRange {
    /// The tag stored with each of the box's entries: its first column on each axis. The pair
    /// of two boxes is reported only in the column holding the corner (max of mins) of their
    /// overlap, which is `(max(u0, u0'), max(v0, v0'))`: once, whatever columns they share.
    #[inline]
    pub fn home_tag(&self) -> u32 {
        (u32::from(self.u0) << 16) | u32::from(self.v0)
    }

    /// How many columns the box covers.
    #[inline]
    pub fn count(&self) -> usize {
        (usize::from(self.u1 - self.u0) + 1) * (usize::from(self.v1 - self.v0) + 1)
    }
}

/// Whether the column `(u, v)` is where the pair with home tags `a` and `b` is reported.
#[inline(always)]
pub(crate) fn is_home(u: u32, v: u32, a: u32, b: u32) -> bool {
    (a >> 16).max(b >> 16) == u && (a & 0xFFFF).max(b & 0xFFFF) == v
}

impl Layout {
    /// One column: a plain sweep along `axis`.
    pub fn single(axis: usize) -> Self {
        Self {
            axes: [axis, (axis + 1) % 3, (axis + 2) % 3],
            origin: [0.0; 2],
            inv_cell: [0.0; 2],
            cells: [1, 1],
        }
    }

    /// The number of columns.
    #[inline]
    pub fn columns(&self) -> usize {
        self.cells[0] * self.cells[1]
    }

    /// The index of column `(u, v)`.
    #[inline]
    pub fn index(&self, u: usize, v: usize) -> usize {
        u * self.cells[1] + v
    }

    /// Chooses a layout for `n` boxes, of which `boxes` yields a deterministic sample.
    pub fn choose<'a>(
        settings: &AbpSettings,
        n: usize,
        boxes: impl Iterator<Item = &'a Aabb>,
    ) -> Self {
        let stride = n.div_ceil(SAMPLE).max(1);
        let sample: Vec<&Aabb> = boxes.step_by(stride).collect();
        if sample.is_empty() {
            return Self::single(0);
        }
        // Per axis: the 2nd..98th percentile range of centres, and the median extent.
        let mut lo = [0.0f64; 3];
        let mut spread = [0.0f64; 3];
        let mut extent = [0.0f64; 3];
        for axis in 0..3 {
            let mut centres: Vec<f64> = sample
                .iter()
                .map(|b| 0.5 * (f64::from(b.min[axis]) + f64::from(b.max[axis])))
                .collect();
            let mut sizes: Vec<f64> = sample
                .iter()
                .map(|b| f64::from(b.max[axis]) - f64::from(b.min[axis]))
                .collect();
            centres.sort_by(f64::total_cmp);
            sizes.sort_by(f64::total_cmp);
            let q = |v: &[f64], f: f64| v[((v.len() - 1) as f64 * f) as usize];
            lo[axis] = q(&centres, 0.02);
            spread[axis] = q(&centres, 0.98) - lo[axis];
            extent[axis] = q(&sizes, 0.5);
        }
        // Sweep along the longest axis: the other two are cut into columns.
        let sweep = (0..3)
            .max_by(|&a, &b| spread[a].total_cmp(&spread[b]).then(b.cmp(&a)))
            .unwrap_or(0);
        let mut layout = Self::single(sweep);
        if n < settings.min_proxies_for_columns {
            return layout;
        }
        let [_, u, v] = layout.axes;
        let area = spread[u].max(extent[u]) * spread[v].max(extent[v]);
        let per_column = settings.boxes_per_column as f64;
        let mut cell = (area * per_column / n as f64).sqrt();
        cell = cell.max(f64::from(settings.min_column_extents) * extent[u].max(extent[v]));
        if !(cell.is_finite() && cell > 0.0) {
            return layout;
        }
        for (k, &axis) in [u, v].iter().enumerate() {
            let count = (spread[axis] / cell).ceil();
            let count = if count.is_finite() { count as usize } else { 1 };
            layout.cells[k] = count.clamp(1, MAX_CELLS_PER_AXIS);
            layout.origin[k] = lo[axis];
            layout.inv_cell[k] = 1.0 / cell;
        }
        layout
    }

    /// The column of coordinate `x` on column axis `k`; monotone in `x`, clamped to the grid.
    #[inline]
    fn cell(&self, k: usize, x: f32) -> u16 {
        let t = (f64::from(x) - self.origin[k]) * self.inv_cell[k];
        let last = (self.cells[k] - 1) as f64;
        // Truncation is floor for t >= 0, and everything below 0 clamps to column 0 anyway;
        // `floor` itself is a library call on baseline x86-64.
        t.clamp(0.0, last) as u16
    }

    /// Whether the centre of `aabb` lies outside the grid (the box was clamped into a border
    /// column). Many such boxes mean the layout no longer fits the scene.
    #[inline]
    pub fn is_outside(&self, aabb: &Aabb) -> bool {
        if self.columns() == 1 {
            return false;
        }
        let [_, u, v] = self.axes;
        [(0, u), (1, v)].into_iter().any(|(k, axis)| {
            let centre = 0.5 * (f64::from(aabb.min[axis]) + f64::from(aabb.max[axis]));
            let t = (centre - self.origin[k]) * self.inv_cell[k];
            t < 0.0 || t >= self.cells[k] as f64
        })
    }

    /// The interval of column `i` on column axis `k`, widened a little so that rounding never
    /// loses a point on its border; the border columns reach to infinity.
    pub fn column_span(&self, k: usize, i: usize) -> (f64, f64) {
        if self.cells[k] == 1 {
            return (f64::NEG_INFINITY, f64::INFINITY);
        }
        let cell = 1.0 / self.inv_cell[k];
        let margin = cell * 1e-6;
        let lo = if i == 0 {
            f64::NEG_INFINITY
        } else {
            let lo = self.origin[k] + i as f64 * cell;
            lo - margin - lo.abs() * 1e-9
        };
        let hi = if i + 1 == self.cells[k] {
            f64::INFINITY
        } else {
            let hi = self.origin[k] + (i + 1) as f64 * cell;
            hi + margin + hi.abs() * 1e-9
        };
        (lo, hi)
    }

    /// The columns `aabb` covers.
    #[inline]
    pub fn range(&self, aabb: &Aabb) -> ColumnRange {
        let [_, u, v] = self.axes;
        ColumnRange {
            u0: self.cell(0, aabb.min[u]),
            u1: self.cell(0, aabb.max[u]),
            v0: self.cell(1, aabb.min[v]),
            v1: self.cell(1, aabb.max[v]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_populations_get_one_column() {
        let boxes: Vec<Aabb> = (0..100)
            .map(|i| Aabb::new([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]))
            .collect();
        let layout = Layout::choose(&AbpSettings::default(), boxes.len(), boxes.iter());
        assert_eq!(layout.columns(), 1);
        assert_eq!(layout.axes[0], 0, "sweeps along the long axis");
    }

    #[test]
    fn dense_scenes_get_columns_and_ranges_are_clamped() {
        let n = 20_000;
        let boxes: Vec<Aabb> = (0..n)
            .map(|i| {
                let p = [
                    (i % 30) as f32 * 3.0,
                    ((i / 30) % 30) as f32 * 3.0,
                    (i / 900) as f32 * 3.0,
                ];
                Aabb::new(p, p.map(|c| c + 1.0))
            })
            .collect();
        let layout = Layout::choose(&AbpSettings::default(), n, boxes.iter());
        assert!(layout.columns() > 16, "{layout:?}");
        let far = Aabb::new([-1e30; 3], [1e30; 3]);
        let r = layout.range(&far);
        assert_eq!((r.u0, r.v0), (0, 0));
        assert_eq!(
            (usize::from(r.u1) + 1, usize::from(r.v1) + 1),
            (layout.cells[0], layout.cells[1])
        );
    }

    #[test]
    fn the_home_column_is_unique() {
        // Two boxes sharing columns (1..=3, 2..=2) and (2..=4, 1..=2): home is (2, 2).
        let a = ColumnRange {
            u0: 1,
            u1: 3,
            v0: 2,
            v1: 2,
        };
        let b = ColumnRange {
            u0: 2,
            u1: 4,
            v0: 1,
            v1: 2,
        };
        let homes: Vec<(u32, u32)> = (2..=3)
            .flat_map(|u| (2..=2).map(move |v| (u, v)))
            .filter(|&(u, v)| is_home(u, v, a.home_tag(), b.home_tag()))
            .collect();
        assert_eq!(homes, vec![(2, 2)]);
    }
}
