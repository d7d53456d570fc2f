//! The grid's geometry: the cell size of each level, cell coordinates, and how hashed cell ids
//! fall into buckets.
//!
//! Level 0 has the chosen cell size; level `L` has cells `4^L` times larger. A box lives on the
//! finest level where it spans at most [`FINE_SPAN`] (level 0) or [`COARSE_SPAN`] cells per axis,
//! so a planet among asteroids gets coarse cells without forcing them on the asteroids.
//!
//! A cell's id is hashed by keeping the low `lb + kb` bits of each coordinate: space wraps
//! around a torus of `2^(lb + kb)` cells per axis. The high `kb` bits of each wrapped coordinate
//! name the cell's bucket (a block of `2^lb` cells per axis, plus every block it wraps onto); the
//! low `lb` bits name the cell inside it. Two cells share an id only if they lie a whole torus
//! apart, so the cells of one box (fewer per axis than the torus) all have distinct ids; cells
//! far apart that share one only add candidates, which the exact tests reject.

use crate::simd;
use crate::split_mix::sample;
use crate::Aabb;

/// Cell coordinates are clamped to ±2^29 so that they and their differences fit an `i32`.
/// Clamping is monotone, so two boxes that overlap still share the cell holding the lower corner
/// of their overlap.
const CELL_LIMIT: f32 = (1u32 << 29) as f32;
/// Boxes of level 0 span at most this many cells per axis: 2 when the cell is no smaller than
/// the box (the chapter's rule), 3 for the tail of boxes up to twice the cell.
pub(crate) const FINE_SPAN: i32 = 3;
/// Boxes of the coarser levels span at most this many cells per axis, so that a big box is cut
/// into cells a few times smaller than itself and the small boxes meet only the big boxes near
/// them.
pub(crate) const COARSE_SPAN: i32 = 8;
/// The cell size ratio between consecutive levels.
const LEVEL_RATIO: f64 = 4.0;
/// The coarsest level. With the fine cell at least `MIN_CELL`, its cells exceed the whole `f32`
/// range.
pub(crate) const MAX_LEVEL: u32 = 127;
/// The smallest cell size allowed.
const MIN_CELL: f64 = 1e-30;
/// Boxes sampled to choose a layout.
const SAMPLE: usize = 4096;
/// Records a bucket aims for: enough that per-bucket work is worth it, few enough that a
/// bucket's records and entries stay in the core's cache.
const RECORDS_PER_BUCKET: f64 = 1024.0;
/// At most 2^MAX_BUCKET_BITS buckets per level.
const MAX_BUCKET_BITS: u32 = 15;

/// The cell of coordinate `x` with `inv = 1 / cell size`: monotone in `x` (a rounded product
/// and a floor, both monotone).
#[inline(always)]
fn cell_of(inv: f32, x: f32) -> i32 {
    // `inv` is finite, `x` is finite: the product is a number or ±inf, which the clamp bounds.
    let t = (x * inv).clamp(-CELL_LIMIT, CELL_LIMIT);
    // `floor` is a library call on baseline x86-64: truncate, then step down below zero.
    let i = t as i32;
    i - i32::from(i as f32 > t)
}

/// [`cell_of`] on four coordinates at once; the same cells for finite coordinates (binning
/// computes nine per box, and one at a time they were half of its time). SSE2 where built
/// ([`simd::Sse2::floor_cells4`]), else one at a time.
#[inline(always)]
fn cells_of4(inv: f32, x: [f32; 4]) -> [i32; 4] {
    match simd::sse2() {
        Some(sse2) => sse2.floor_cells4(inv, CELL_LIMIT, x),
        None => x.map(|x| cell_of(inv, x)),
    }
}

/// One level of the grid: its cells and its buckets.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LevelGrid {
    /// The level: cells are `4^level` fine cells wide.
    pub level: u32,
    /// The cell size.
    pub cell: f64,
    /// `1 / cell`, rounded to `f32` (every cell of the level is computed with it, so the
    /// rounding only shifts cell borders, the same way for every box).
    inv: f32,
    /// A bucket's block is `2^lb` cells per axis.
    pub lb: u32,
    /// Bucket bits per axis: `2^kb[a]` blocks along axis `a` before the torus wraps.
    pub kb: [u32; 3],
    /// The most cells a resident box spans per axis.
    pub max_span: i32,
}

impl LevelGrid {
    /// The level's grid for a region of `spread` (per axis) holding about `records` boxes.
    fn new(level: u32, cell: f64, spread: [f64; 3], records: usize) -> Self {
        let cells = spread.map(|s| {
            let c = (s / cell).ceil() + 2.0;
            if c.is_finite() {
                c.clamp(1.0, 1e7)
            } else {
                1e7
            }
        });
        let target = (records as f64 / RECORDS_PER_BUCKET).clamp(1.0, 4096.0);
        let side = (cells[0] * cells[1] * cells[2] / target).cbrt();
        let mut lb = 2;
        while lb < 6 && f64::from(1u32 << lb) < side {
            lb += 1;
        }
        let mut kb = cells.map(|c| {
            let blocks = (c / f64::from(1u32 << lb)).ceil().max(1.0);
            let mut k = 0;
            while k < 5 && f64::from(1u32 << k) < blocks {
                k += 1;
            }
            k
        });
        // The torus must hold more cells per axis than a box spans, so that the cells of one
        // box have distinct ids.
        for k in &mut kb {
            while lb + *k < 3 {
                *k += 1;
            }
        }
        while kb.iter().sum::<u32>() > MAX_BUCKET_BITS {
            let a = (0..3).max_by_key(|&a| kb[a]).unwrap_or(0);
            kb[a] -= 1;
        }
        Self {
            level,
            cell,
            inv: (1.0 / cell) as f32,
            lb,
            kb,
            max_span: if level == 0 { FINE_SPAN } else { COARSE_SPAN },
        }
    }

    /// The cell of coordinate `x`.
    #[inline(always)]
    pub fn cell(&self, x: f32) -> i32 {
        cell_of(self.inv, x)
    }

    /// The lowest and highest cell the box covers, per axis.
    #[inline]
    pub fn range(&self, aabb: &Aabb) -> ([i32; 3], [i32; 3]) {
        (
            aabb.min.map(|x| self.cell(x)),
            aabb.max.map(|x| self.cell(x)),
        )
    }

    /// [`LevelGrid::range`] and the home cell ([`super`]) of `aabb`.
    #[inline]
    pub fn range_and_home(&self, aabb: &Aabb) -> ([i32; 3], [i32; 3], [i32; 3]) {
        let [a, b, c] = aabb.min;
        let [d, e, f] = aabb.max;
        let [x, y, z] = aabb.center();
        let lo = cells_of4(self.inv, [a, b, c, c]);
        let hi = cells_of4(self.inv, [d, e, f, f]);
        let home = cells_of4(self.inv, [x, y, z, z]);
        (
            [lo[0], lo[1], lo[2]],
            [hi[0], hi[1], hi[2]],
            [home[0], home[1], home[2]],
        )
    }

    /// The number of buckets.
    #[inline]
    pub fn buckets(&self) -> usize {
        1 << (self.kb[0] + self.kb[1] + self.kb[2])
    }

    /// Bits of a cell's sort key inside its bucket: its cell type, then its id.
    #[inline]
    pub fn key_bits(&self) -> u32 {
        3 * self.lb + 3
    }

    /// The wrapped block coordinate of cell coordinate `c` on axis `a`.
    #[inline(always)]
    pub fn block(&self, a: usize, c: i32) -> u32 {
        ((c >> self.lb) as u32) & ((1u32 << self.kb[a]) - 1)
    }

    /// The bucket of the block with wrapped coordinates `b`.
    #[inline(always)]
    pub fn bucket_index(&self, b: [u32; 3]) -> usize {
        (b[0] | (b[1] << self.kb[0]) | (b[2] << (self.kb[0] + self.kb[1]))) as usize
    }

    /// The wrapped block coordinates of bucket `i`.
    #[inline]
    pub fn bucket_coords(&self, i: usize) -> [u32; 3] {
        let i = i as u32;
        [
            i & ((1 << self.kb[0]) - 1),
            (i >> self.kb[0]) & ((1 << self.kb[1]) - 1),
            i >> (self.kb[0] + self.kb[1]),
        ]
    }

    /// The bucket of cell `c`.
    #[inline(always)]
    pub fn bucket_of(&self, c: [i32; 3]) -> usize {
        self.bucket_index([
            self.block(0, c[0]),
            self.block(1, c[1]),
            self.block(2, c[2]),
        ])
    }

    /// The id of cell `c` inside its bucket.
    #[inline(always)]
    pub fn local(&self, c: [i32; 3]) -> u32 {
        let m = (1u32 << self.lb) - 1;
        (c[0] as u32 & m) | ((c[1] as u32 & m) << self.lb) | ((c[2] as u32 & m) << (2 * self.lb))
    }

    /// The parity class (0..8) of cell `c`: the chapter's cell type. Cells of one class are
    /// never neighbours.
    #[inline(always)]
    pub fn cell_type(c: [i32; 3]) -> u32 {
        (c[0] as u32 & 1) | (c[1] as u32 & 1) << 1 | (c[2] as u32 & 1) << 2
    }

    /// The sort key of cell `c` inside its bucket: its type in the high bits, so that the cells
    /// of one parity pass are contiguous, then its id.
    #[inline(always)]
    pub fn key(&self, c: [i32; 3]) -> u32 {
        (Self::cell_type(c) << (3 * self.lb)) | self.local(c)
    }

    /// The cell type of a sort key.
    #[inline(always)]
    pub fn key_type(&self, key: u32) -> u32 {
        key >> (3 * self.lb)
    }
}

/// The grid's layout: the fine cell size and the region the buckets are sized for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    /// The fine (level 0) grid.
    pub fine: LevelGrid,
    /// The fine cells of the 2nd to 98th percentile of box centres per axis, widened by a
    /// quarter of that range on each side.
    outer_lo: [i32; 3],
    outer_hi: [i32; 3],
    spread: [f64; 3],
    /// Boxes the layout was chosen for.
    records: usize,
}

impl Layout {
    /// Chooses a layout for `n` boxes, of which `boxes` yields a deterministic sample. The fine
    /// cell is `cell_size` when set, else `cell_factor` times the median of the boxes' largest
    /// extents: robust to a few huge boxes, which go to coarser levels.
    pub fn choose<'a>(
        cell_size: Option<f32>,
        cell_factor: f32,
        n: usize,
        boxes: impl Iterator<Item = &'a Aabb>,
    ) -> Self {
        let stride = n.div_ceil(SAMPLE).max(1);
        // A hashed sample: a stride lines up with an order that repeats.
        let sample: Vec<&Aabb> = sample(boxes, stride).collect();
        let mut lo = [0.0f32; 3];
        let mut hi = [0.0f32; 3];
        let mut spread = [0.0f64; 3];
        let mut median_extent = 0.0f64;
        if !sample.is_empty() {
            let q = |v: &[f64], f: f64| v[((v.len() - 1) as f64 * f) as usize];
            for axis in 0..3 {
                let mut centres: Vec<f64> = sample
                    .iter()
                    .map(|b| 0.5 * (f64::from(b.min[axis]) + f64::from(b.max[axis])))
                    .collect();
                centres.sort_by(f64::total_cmp);
                let (l, h) = (q(&centres, 0.02), q(&centres, 0.98));
                lo[axis] = l as f32;
                hi[axis] = h as f32;
                spread[axis] = h - l;
            }
            let mut extents: Vec<f64> = sample
                .iter()
                .map(|b| {
                    (0..3)
                        .map(|a| f64::from(b.max[a]) - f64::from(b.min[a]))
                        .fold(0.0, f64::max)
                })
                .collect();
            extents.sort_by(f64::total_cmp);
            median_extent = q(&extents, 0.5);
        }
        let cell = match cell_size {
            Some(c) => f64::from(c),
            None => {
                let mut c = f64::from(cell_factor) * median_extent;
                if !(c.is_finite() && c > 0.0) {
                    // Points only: the mean spacing of the boxes, or 1.
                    let volume: f64 = spread.iter().map(|s| s.max(0.0)).product();
                    c = (volume / n.max(1) as f64).cbrt();
                }
                if !(c.is_finite() && c > 0.0) {
                    c = 1.0;
                }
                c
            }
        };
        let cell = cell.clamp(MIN_CELL, f64::from(f32::MAX));
        let fine = LevelGrid::new(0, cell, spread, n);
        let margin = |a: usize| 0.25 * (hi[a] - lo[a]) + cell as f32;
        Self {
            outer_lo: std::array::from_fn(|a| fine.cell(lo[a] - margin(a))),
            outer_hi: std::array::from_fn(|a| fine.cell(hi[a] + margin(a))),
            fine,
            spread,
            records: n,
        }
    }

    /// The grid of `level`.
    pub fn grid(&self, level: u32) -> LevelGrid {
        if level == 0 {
            return self.fine.clone();
        }
        let cell = self.fine.cell * LEVEL_RATIO.powi(level as i32);
        LevelGrid::new(level, cell, self.spread, self.records)
    }

    /// Whether a box whose lowest fine cell is `lo` lies outside the region the buckets were
    /// sized for (by more than a quarter of the region). Many such boxes mean the layout no
    /// longer fits.
    #[inline]
    pub fn is_outside(&self, lo: &[i32; 3]) -> bool {
        (0..3).any(|a| lo[a] < self.outer_lo[a] || lo[a] > self.outer_hi[a])
    }

    /// The level of a box: the finest on which it spans few enough cells. `fine_range` is its
    /// range on level 0.
    pub fn level_of(&self, aabb: &Aabb, fine_range: &([i32; 3], [i32; 3])) -> u32 {
        let (lo, hi) = fine_range;
        if (0..3).all(|a| hi[a] - lo[a] < FINE_SPAN) {
            return 0;
        }
        // A first guess from the extent, then up until the box fits.
        let extent = (0..3)
            .map(|a| f64::from(aabb.max[a]) - f64::from(aabb.min[a]))
            .fold(0.0, f64::max);
        let cells = extent / (self.fine.cell * f64::from(COARSE_SPAN - 1));
        let guess = if cells > 1.0 {
            (cells.ln() / LEVEL_RATIO.ln()).floor()
        } else {
            1.0
        };
        let mut level = (guess as u32).clamp(1, MAX_LEVEL);
        loop {
            let inv = (1.0 / (self.fine.cell * LEVEL_RATIO.powi(level as i32))) as f32;
            let fits =
                (0..3).all(|a| cell_of(inv, aabb.max[a]) - cell_of(inv, aabb.min[a]) < COARSE_SPAN);
            if fits || level >= MAX_LEVEL {
                return level;
            }
            level += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_floors_and_clamped() {
        let g = LevelGrid::new(0, 2.0, [10.0; 3], 100);
        assert_eq!(g.cell(0.0), 0);
        assert_eq!(g.cell(1.99), 0);
        assert_eq!(g.cell(2.0), 1);
        assert_eq!(g.cell(-0.01), -1);
        assert_eq!(g.cell(-2.0), -1);
        assert_eq!(g.cell(-2.01), -2);
        assert_eq!(g.cell(3e38), 1 << 29);
        assert_eq!(g.cell(-3e38), -(1 << 29));
    }

    /// The four-wide conversion, SSE2 called directly (whatever the dispatch) and as
    /// dispatched, gives the cells of the one-at-a-time one, on cell borders, either side of
    /// zero, and clipped far out.
    #[test]
    fn four_cells_at_once_are_the_same_cells() {
        let mut rng = crate::split_mix::SplitMix64::new(1);
        for cell in [1e-3, 0.3, 1.0, 1.5, 2.529_396, 7.0, 1e6] {
            let inv = (1.0 / cell) as f32;
            let mut xs: Vec<f32> = vec![0.0, -0.0, 3e38, -3e38, f32::MAX, f32::MIN];
            for k in -40..40 {
                // The border and its two neighbouring floats.
                let border = (f64::from(k) * cell) as f32;
                let bits = border.to_bits();
                xs.extend(
                    [bits, bits.wrapping_add(1), bits.wrapping_sub(1)]
                        .map(f32::from_bits)
                        .into_iter()
                        .filter(|x| x.is_finite()),
                );
            }
            for _ in 0..4000 {
                let bits = rng.next_u64() as u32;
                let x = f32::from_bits(bits);
                if x.is_finite() {
                    xs.push(x);
                }
                xs.push((rng.below(2_000_000) as f32 - 1e6) * 1e-3 * cell as f32);
            }
            for q in xs.chunks(4).filter(|q| q.len() == 4) {
                let q = [q[0], q[1], q[2], q[3]];
                let want = q.map(|x| cell_of(inv, x));
                if let Some(sse2) = simd::Sse2::detect() {
                    assert_eq!(sse2.floor_cells4(inv, CELL_LIMIT, q), want, "{q:?} {cell}");
                }
                assert_eq!(cells_of4(inv, q), want, "{q:?} {cell}");
            }
        }
    }

    #[test]
    fn one_box_has_distinct_ids() {
        // Any box of at most COARSE_SPAN cells per axis: its cells' (bucket, local) differ.
        for spread in [0.0, 5.0, 1e6] {
            let g = LevelGrid::new(1, 1.0, [spread; 3], 10);
            for start in [-9, -1, 0, 3, 1000] {
                let mut ids = std::collections::HashSet::new();
                for x in start..start + COARSE_SPAN {
                    for y in start..start + COARSE_SPAN {
                        let c = [x, y, -start];
                        assert!(ids.insert((g.bucket_of(c), g.local(c))), "{g:?} {c:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn huge_boxes_go_up_and_fit() {
        let boxes: Vec<Aabb> = (0..100)
            .map(|i| Aabb::new([i as f32; 3], [i as f32 + 1.0; 3]))
            .collect();
        let layout = Layout::choose(None, 1.5, boxes.len(), boxes.iter());
        assert!((layout.fine.cell - 1.5).abs() < 1e-9);
        for b in [
            Aabb::new([0.0; 3], [1.0; 3]),
            Aabb::new([0.0; 3], [40.0; 3]),
            Aabb::new([-1e30; 3], [1e30; 3]),
            Aabb::new([-f32::MAX; 3], [f32::MAX; 3]),
        ] {
            let level = layout.level_of(&b, &layout.fine.range(&b));
            let g = layout.grid(level);
            let (lo, hi) = g.range(&b);
            assert!(
                (0..3).all(|a| hi[a] - lo[a] < g.max_span),
                "{b:?} at {level}"
            );
        }
    }
}
