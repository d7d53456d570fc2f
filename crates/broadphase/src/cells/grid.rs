//! A grid of cells over the two non-sweep axes: which axis the cells sweep, and how the plane
//! of the two other axes is cut. Abp lays one grid over the whole scene; Mbp lays one inside
//! each region.
//!
//! A single sweep over N boxes in a dense 3D scene tests every box against all boxes in its
//! slab along the sweep axis: about N²·w/L tests, 10⁸ for 100k boxes. Cutting the cross plane
//! into C cells and sweeping each on its own divides that by C, at the price of boxes that
//! straddle cell borders appearing in several cells. The grid is derived from the boxes
//! themselves (robust percentiles, so a few far or huge boxes do not stretch it); boxes outside
//! it are clamped into the border cells, which reach to infinity. Sap cuts its large batches of
//! fresh boxes with the same grid, sized its own way ([`ColumnGrid::cut`]).

use crate::split_mix::sample;
use crate::Aabb;

/// How a grid is sized: the knobs of [`AbpSettings`](crate::AbpSettings), shared with Mbp.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GridParams {
    /// Boxes per cell to aim for.
    pub boxes_per_cell: usize,
    /// Cells are at least this many median box extents wide.
    pub min_cell_extents: f32,
    /// Below this many boxes, one cell.
    pub min_boxes_for_cells: usize,
    /// The length of the sweep, in median box extents along it, at which a cell holds
    /// `boxes_per_cell` boxes; 0 to hold that many whatever the length (see
    /// [`sweep_scale`]).
    pub sweep_extents: f64,
    /// The most times `boxes_per_cell` a long sweep makes a cell hold (at least 1).
    pub max_sweep_scale: f64,
}

/// How many times `boxes_per_cell` a cell holds when its sweep is `length` long over boxes
/// `extent` wide, for `params.sweep_extents`: as many times as the sweep is longer, from a
/// quarter up to `params.max_sweep_scale` (Abp: 4; Mbp: 1, its cells grow with the population
/// instead).
///
/// A moving box's sweep meets the cell's boxes within its extent along the sweep axis: about
/// `boxes × extent / length` of them. At a fixed count per cell, a short sweep (a small or
/// dense scene) meets many and a long one few: with 1,024 boxes a column, Abp's columns met
/// twice as many at 10,000 uniform boxes (a sweep 41 extents long) as at 100,000 (89). Holding
/// the count per extent of sweep instead made Abp's 10k frames 0.86-0.97 of before on nine
/// scenes (sleeping 1.01), left 100k and 1M level (0.93-1.03), and at 1M (a sweep 195 extents
/// long: 484 columns, not about 1,000) took the boxes straddling columns from 1.33 entries a
/// box to 1.22, 6 bytes a box less.
fn sweep_scale(params: &GridParams, length: f64, extent: f64) -> f64 {
    let scale = length / extent / params.sweep_extents;
    if params.sweep_extents > 0.0 && scale.is_finite() && scale > 0.0 {
        scale.clamp(0.25, params.max_sweep_scale.max(1.0))
    } else {
        1.0
    }
}

/// At most this many cells per axis: cell coordinates fit the 11-bit fields of a tag
/// (`super::tag`).
pub(crate) const MAX_CELLS_PER_AXIS: usize = 1024;
/// Boxes sampled to choose a grid.
const SAMPLE: usize = 4096;

/// The sweep axis and the cells over the two other axes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColumnGrid {
    /// `[sweep, u, v]`: the sweep axis, then the two cut axes.
    pub axes: [usize; 3],
    origin: [f64; 2],
    inv_cell: [f64; 2],
    /// Cells along u and along v.
    pub cells: [usize; 2],
}

/// The cells a box covers: `u0..=u1` by `v0..=v1`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CellRange {
    pub u0: u16,
    pub u1: u16,
    pub v0: u16,
    pub v1: u16,
}

impl CellRange {
    /// How many cells the box covers.
    #[inline]
    pub fn count(&self) -> usize {
        (usize::from(self.u1 - self.u0) + 1) * (usize::from(self.v1 - self.v0) + 1)
    }

    /// The cells covered, as `(u, v)`, u-major.
    #[inline]
    pub fn cells(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (self.u0..=self.u1)
            .flat_map(move |u| (self.v0..=self.v1).map(move |v| (usize::from(u), usize::from(v))))
    }
}

/// Per axis: the 2nd and 98th percentile of box centres and the median extent, over a
/// deterministic sample of `n` boxes.
struct Spread {
    lo: [f64; 3],
    hi: [f64; 3],
    extent: [f64; 3],
}

impl Spread {
    fn of<'a>(n: usize, boxes: impl Iterator<Item = &'a Aabb>) -> Option<Self> {
        // About one box in `stride`, chosen by a hash of its position: every `stride`-th box
        // lines up with an order that repeats (boxes made round-robin over 100 clusters,
        // one in 25 taken, gave a grid over 4 of them, which left 43% of the boxes outside it:
        // Abp laid its columns out again every update).
        let stride = n.div_ceil(SAMPLE).max(1);
        let sample: Vec<&Aabb> = sample(boxes, stride).collect();
        if sample.is_empty() {
            return None;
        }
        let mut s = Spread {
            lo: [0.0; 3],
            hi: [0.0; 3],
            extent: [0.0; 3],
        };
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
            s.lo[axis] = q(&centres, 0.02);
            s.hi[axis] = q(&centres, 0.98);
            s.extent[axis] = q(&sizes, 0.5);
        }
        Some(s)
    }
}

/// Per axis, the 2nd and 98th percentiles of the box centres of a deterministic sample of
/// the `n` boxes, or `None` for no boxes.
pub(crate) fn centre_spread<'a>(
    n: usize,
    boxes: impl Iterator<Item = &'a Aabb>,
) -> Option<([f64; 3], [f64; 3])> {
    Spread::of(n, boxes).map(|s| (s.lo, s.hi))
}

impl ColumnGrid {
    /// One cell: a plain sweep along `axis`.
    pub fn single(axis: usize) -> Self {
        Self {
            axes: [axis, (axis + 1) % 3, (axis + 2) % 3],
            origin: [0.0; 2],
            inv_cell: [0.0; 2],
            cells: [1, 1],
        }
    }

    /// A grid sweeping along `sweep` whose cut axis `k` (0 for u, 1 for v) has `cells[k]`
    /// cells of `1 / inv_cell[k]` each from `origin[k]` (the border cells reach to infinity):
    /// for an owner that sizes its cells itself, as Sap's batches of fresh boxes do.
    pub fn cut(sweep: usize, origin: [f64; 2], inv_cell: [f64; 2], cells: [usize; 2]) -> Self {
        debug_assert!(cells.iter().all(|&c| (1..=MAX_CELLS_PER_AXIS).contains(&c)));
        Self {
            origin,
            inv_cell,
            cells,
            ..Self::single(sweep)
        }
    }

    /// The number of cells.
    #[inline]
    pub fn len(&self) -> usize {
        self.cells[0] * self.cells[1]
    }

    /// The index of cell `(u, v)`.
    #[inline]
    pub fn index(&self, u: usize, v: usize) -> usize {
        u * self.cells[1] + v
    }

    /// Chooses a grid for `n` boxes, of which `boxes` yields a deterministic sample. The
    /// sweep axis is `sweep` if given, else the axis of the longest spread. With `clip`, the
    /// grid covers only the part of the boxes' spread inside it (a region's grid).
    pub fn choose<'a>(
        params: &GridParams,
        n: usize,
        boxes: impl Iterator<Item = &'a Aabb>,
        sweep: Option<usize>,
        clip: Option<&Aabb>,
    ) -> Self {
        let Some(s) = Spread::of(n, boxes) else {
            return Self::single(sweep.unwrap_or(0));
        };
        let mut lo = s.lo;
        let mut hi = s.hi;
        if let Some(c) = clip {
            for a in 0..3 {
                lo[a] = lo[a].max(f64::from(c.min[a]));
                hi[a] = hi[a].min(f64::from(c.max[a]));
                if lo[a] > hi[a] {
                    // The boxes' centres lie outside the clip on this axis: cover the clip.
                    lo[a] = f64::from(c.min[a]);
                    hi[a] = f64::from(c.max[a]);
                }
            }
        }
        let spread: [f64; 3] = std::array::from_fn(|a| hi[a] - lo[a]);
        let sweep = sweep.unwrap_or_else(|| {
            (0..3)
                .max_by(|&a, &b| spread[a].total_cmp(&spread[b]).then(b.cmp(&a)))
                .unwrap_or(0)
        });
        let mut grid = Self::single(sweep);
        if n < params.min_boxes_for_cells {
            return grid;
        }
        let [_, u, v] = grid.axes;
        let extent = s.extent;
        let area = spread[u].max(extent[u]) * spread[v].max(extent[v]);
        let boxes_per_cell = (params.boxes_per_cell as f64
            * sweep_scale(params, spread[sweep].max(extent[sweep]), extent[sweep]))
        .max(1.0);
        let mut cell = (area * boxes_per_cell / n as f64).sqrt();
        cell = cell.max(f64::from(params.min_cell_extents) * extent[u].max(extent[v]));
        if !(cell.is_finite() && cell > 0.0) {
            return grid;
        }
        for (k, &axis) in [u, v].iter().enumerate() {
            let count = (spread[axis] / cell).ceil();
            let count = if count.is_finite() { count as usize } else { 1 };
            grid.cells[k] = count.clamp(1, MAX_CELLS_PER_AXIS);
            grid.origin[k] = lo[axis];
            grid.inv_cell[k] = 1.0 / cell;
        }
        grid
    }

    /// The cell of coordinate `x` on cut axis `k`; monotone in `x`, clamped to the grid.
    #[inline(always)]
    fn cell(&self, k: usize, x: f32) -> u16 {
        let t = (f64::from(x) - self.origin[k]) * self.inv_cell[k];
        let last = (self.cells[k] - 1) as f64;
        // Truncation is floor for t >= 0, and everything below 0 clamps to cell 0 anyway;
        // `floor` itself is a library call on baseline x86-64.
        t.clamp(0.0, last) as u16
    }

    /// Whether the centre of `aabb` lies outside the grid (the box was clamped into a border
    /// cell). Many such boxes mean the grid no longer fits the scene.
    #[inline]
    pub fn is_outside(&self, aabb: &Aabb) -> bool {
        if self.len() == 1 {
            return false;
        }
        let [_, u, v] = self.axes;
        [(0, u), (1, v)].into_iter().any(|(k, axis)| {
            let centre = 0.5 * (f64::from(aabb.min[axis]) + f64::from(aabb.max[axis]));
            let t = (centre - self.origin[k]) * self.inv_cell[k];
            t < 0.0 || t >= f64::from(self.cells[k] as u32)
        })
    }

    /// The interval of cell `i` on cut axis `k`, widened a little so that rounding never
    /// loses a point on its border; the border cells reach to infinity.
    pub fn cell_span(&self, k: usize, i: usize) -> (f64, f64) {
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

    /// The cells `aabb` covers.
    #[inline(always)]
    pub fn range(&self, aabb: &Aabb) -> CellRange {
        let [_, u, v] = self.axes;
        self.range_uv([aabb.min[u], aabb.min[v]], [aabb.max[u], aabb.max[v]])
    }

    /// The cells covered by a box whose minima on the cut axes are `min` and maxima `max`
    /// (`[u, v]` each).
    #[inline(always)]
    pub fn range_uv(&self, min: [f32; 2], max: [f32; 2]) -> CellRange {
        let [u0, v0] = self.cells2(min);
        let [u1, v1] = self.cells2(max);
        CellRange { u0, u1, v0, v1 }
    }

    /// [`ColumnGrid::cell`] of `x[0]` on cut axis 0 and of `x[1]` on cut axis 1, both at once: the
    /// binning of Abp and Mbp spent a third of their time converting coordinates one by one.
    #[inline(always)]
    fn cells2(&self, x: [f32; 2]) -> [u16; 2] {
        // SSE2 where built (`simd::Sse2::grid_cells2`), else one at a time.
        match crate::simd::sse2() {
            Some(sse2) => sse2.grid_cells2(x, self.origin, self.inv_cell, self.cells),
            None => [self.cell(0, x[0]), self.cell(1, x[1])],
        }
    }
}

/// A ray's stretch widened by a relative hair all round: the rounding of the ray's points.
pub(crate) fn pad_stretch(stretch: &Aabb) -> Aabb {
    let pad = stretch
        .min
        .iter()
        .chain(&stretch.max)
        .fold(0.0f32, |m, c| m.max(c.abs()))
        * 1e-6;
    stretch.inflated(pad + f32::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: GridParams = GridParams {
        boxes_per_cell: 1024,
        min_cell_extents: 2.5,
        min_boxes_for_cells: 512,
        sweep_extents: 0.0,
        max_sweep_scale: 4.0,
    };

    /// A cell holds as many times `boxes_per_cell` as its sweep is longer than
    /// `sweep_extents` median extents, within a factor of 4; with 0, or no extent, it holds
    /// `boxes_per_cell`.
    #[test]
    fn cells_hold_boxes_in_proportion_to_the_sweep() {
        let on = GridParams {
            sweep_extents: 90.0,
            ..PARAMS
        };
        assert_eq!(sweep_scale(&on, 45.0, 1.0), 0.5);
        assert_eq!(sweep_scale(&on, 180.0, 2.0), 1.0);
        assert_eq!(sweep_scale(&on, 10_000.0, 1.0), 4.0);
        assert_eq!(sweep_scale(&on, 1.0, 1.0), 0.25);
        assert_eq!(sweep_scale(&on, 45.0, 0.0), 1.0);
        assert_eq!(sweep_scale(&PARAMS, 45.0, 1.0), 1.0);
        // Cells that grow otherwise (Mbp's, with the population) only shrink for a short sweep.
        let shrink_only = GridParams {
            max_sweep_scale: 1.0,
            ..on
        };
        assert_eq!(sweep_scale(&shrink_only, 45.0, 1.0), 0.5);
        assert_eq!(sweep_scale(&shrink_only, 10_000.0, 1.0), 1.0);
        // A lattice 40 boxes long on the sweep axis: half the boxes a cell, so twice the cells.
        let boxes: Vec<Aabb> = (0..40 * 40 * 40)
            .map(|i| {
                let lo = [(i % 40) as f32, ((i / 40) % 40) as f32, (i / 1600) as f32];
                Aabb::new(lo, lo.map(|c| c + 1.0))
            })
            .collect();
        let cells = |params: &GridParams| {
            ColumnGrid::choose(params, boxes.len(), boxes.iter(), Some(0), None).len()
        };
        let (fixed, scaled) = (cells(&PARAMS), cells(&on));
        assert!(scaled >= 2 * fixed - fixed / 4, "{fixed} -> {scaled}");
    }

    /// Boxes made round-robin over 100 clusters (box `i` in cluster `i % 100`): a sample of
    /// every 25th box would see 4 clusters and leave most boxes outside the grid.
    #[test]
    fn a_grid_covers_boxes_made_round_robin() {
        use crate::split_mix::SplitMix64;
        let mut rng = SplitMix64::new(3);
        let centres: Vec<[f32; 3]> = (0..100)
            .map(|_| [0.0; 3].map(|_: f32| rng.unit() * 400.0))
            .collect();
        let boxes: Vec<Aabb> = (0..100_000)
            .map(|i| {
                let c = centres[i % 100];
                let min = c.map(|x| x + 10.0 * rng.unit());
                Aabb::new(min, min.map(|x| x + 1.0))
            })
            .collect();
        let grid = ColumnGrid::choose(&PARAMS, boxes.len(), boxes.iter(), None, None);
        assert!(grid.len() > 1);
        let outside = boxes.iter().filter(|b| grid.is_outside(b)).count();
        assert!(outside < boxes.len() / 10, "{outside} boxes outside");
    }

    #[test]
    fn small_populations_get_one_cell() {
        let boxes: Vec<Aabb> = (0..100)
            .map(|i| Aabb::new([i as f32, 0.0, 0.0], [i as f32 + 1.0, 1.0, 1.0]))
            .collect();
        let grid = ColumnGrid::choose(&PARAMS, boxes.len(), boxes.iter(), None, None);
        assert_eq!(grid.len(), 1);
        assert_eq!(grid.axes[0], 0, "sweeps along the long axis");
    }

    /// The two-at-a-time conversion, SSE2 called directly (whatever the dispatch) and as
    /// dispatched, gives the cells of the one-at-a-time one: inside, on cell borders, clamped
    /// either side, and for NaN.
    #[test]
    fn two_cells_at_once_are_the_same_cells() {
        let boxes: Vec<Aabb> = (0..5000)
            .map(|i| {
                let p = [
                    (i % 17) as f32 * 1.3,
                    (i % 23) as f32 * 0.7,
                    (i / 391) as f32,
                ];
                Aabb::new(p, p.map(|c| c + 0.9))
            })
            .collect();
        let grid = ColumnGrid::choose(&PARAMS, boxes.len(), boxes.iter(), None, None);
        assert!(grid.cells[0] > 1 && grid.cells[1] > 1, "{grid:?}");
        let mut xs = vec![0.0, -0.0, -1e30, 1e30, f32::MAX, f32::MIN, f32::NAN];
        for k in 0..2 {
            for i in 0..=grid.cells[k] + 1 {
                let border = (grid.origin[k] + i as f64 / grid.inv_cell[k]) as f32;
                let bits = border.to_bits();
                xs.extend([bits, bits.wrapping_add(1), bits.wrapping_sub(1)].map(f32::from_bits));
            }
        }
        xs.extend((0..2000).map(|i| i as f32 * 0.013 - 3.0));
        let sse2 = crate::simd::Sse2::detect();
        for &a in &xs {
            for &b in xs.iter().step_by(7) {
                let want = [grid.cell(0, a), grid.cell(1, b)];
                if let Some(sse2) = sse2 {
                    let got = sse2.grid_cells2([a, b], grid.origin, grid.inv_cell, grid.cells);
                    assert_eq!(got, want, "{a} {b}");
                }
                assert_eq!(grid.cells2([a, b]), want, "{a} {b}");
            }
        }
    }

    #[test]
    fn dense_scenes_get_cells_and_ranges_are_clamped() {
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
        let grid = ColumnGrid::choose(&PARAMS, n, boxes.iter(), None, None);
        assert!(grid.len() > 16, "{grid:?}");
        let far = Aabb::new([-1e30; 3], [1e30; 3]);
        let r = grid.range(&far);
        assert_eq!((r.u0, r.v0), (0, 0));
        assert_eq!(
            (usize::from(r.u1) + 1, usize::from(r.v1) + 1),
            (grid.cells[0], grid.cells[1])
        );
        // A clipped grid covers only the clip: fewer cells, same sweep axis when asked.
        let clip = Aabb::new([0.0; 3], [30.0, 30.0, 90.0]);
        let clipped = ColumnGrid::choose(
            &PARAMS,
            n / 9,
            boxes.iter(),
            Some(grid.axes[0]),
            Some(&clip),
        );
        assert_eq!(clipped.axes[0], grid.axes[0]);
        assert!(clipped.len() < grid.len(), "{clipped:?}");
    }
}
