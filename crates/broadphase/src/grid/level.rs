//! One level of the hierarchical grid, its buckets, and the queries on it: the boxes in a range
//! of cells, or in the cells along a ray.

use std::ops::ControlFlow;

use crate::query::Ray;
use crate::Aabb;

use super::bucket::Bucket;
use super::layout::LevelGrid;
use super::record::{Record, SLOT};

/// One level of the hierarchical grid.
#[derive(Clone, Debug)]
pub(crate) struct Level {
    pub grid: LevelGrid,
    pub buckets: Vec<Bucket>,
    /// Boxes living on this level.
    pub residents: usize,
}

impl Level {
    pub fn new(grid: LevelGrid) -> Self {
        let buckets = vec![Bucket::default(); grid.buckets()];
        Self {
            grid,
            buckets,
            residents: 0,
        }
    }

    /// Visits every box of the level whose cells meet `lo..=hi`, each once: in the cell of the
    /// range holding the lower corner of the two (the same rule as the pairs), unless `seen`
    /// says it was visited before.
    pub fn visit_range(
        &self,
        lo: [i32; 3],
        hi: [i32; 3],
        seen: &dyn Fn(&Record) -> bool,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let g = &self.grid;
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let c = [x, y, z];
                    let bucket = &self.buckets[g.bucket_of(c)];
                    for &v in bucket.cell(g.key(c)) {
                        let Some(r) = bucket.resident_of(v) else {
                            break;
                        };
                        let top = r.hi();
                        let once = (0..3).all(|a| {
                            r.lo[a] <= c[a] && c[a] <= top[a] && c[a] == r.lo[a].max(lo[a])
                        });
                        if once && !seen(r) {
                            visit(r.slot & SLOT)?;
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Visits every box of the level whose cells meet `lo..=hi`, reading every box once.
    pub fn visit_all(
        &self,
        lo: [i32; 3],
        hi: [i32; 3],
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        for (b, bucket) in self.buckets.iter().enumerate() {
            for r in &bucket.records[..bucket.residents] {
                let top = r.hi();
                if self.grid.bucket_of(r.lo) == b
                    && (0..3).all(|a| r.lo[a] <= hi[a] && lo[a] <= top[a])
                {
                    visit(r.slot & SLOT)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Whether reading the cells of a range of `cells` costs more than reading every box.
    pub fn cheaper_to_scan(&self, cells: f64) -> bool {
        cells > 4.0 * self.residents as f64 + 64.0
    }

    /// Visits the boxes of the level in the cells that the part of the ray inside `segment`
    /// (the bounds of that part) crosses: slab by slab of cells along the axis the segment
    /// spans most cells of, in each slab the cells of the ray's stretch there, widened for
    /// rounding. The slabs where a box is met are consecutive (the stretches move one way), so
    /// a box met in the previous slab was visited there.
    pub fn visit_ray(
        &self,
        ray: &Ray,
        segment: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let g = &self.grid;
        let (qlo, qhi) = g.range(segment);
        let spans: [i64; 3] = std::array::from_fn(|a| i64::from(qhi[a]) - i64::from(qlo[a]));
        let m = (0..3).max_by_key(|&a| (spans[a], 3 - a)).unwrap_or(0);
        let cells: f64 = spans.iter().map(|&s| s as f64 + 1.0).product();
        let d = f64::from(ray.dir[m]);
        if spans[m] < 2 || d == 0.0 {
            return if self.cheaper_to_scan(cells) {
                self.visit_all(qlo, qhi, visit)
            } else {
                self.visit_range(qlo, qhi, &|_| false, visit)
            };
        }
        if self.cheaper_to_scan(spans[m] as f64) {
            return self.visit_all(qlo, qhi, visit);
        }
        let o: [f64; 3] = ray.origin.map(f64::from);
        let magnitude = segment
            .min
            .iter()
            .chain(&segment.max)
            .chain(&ray.origin)
            .fold(0.0f64, |acc, &v| acc.max(f64::from(v).abs()));
        // Rounding of the ray's points and of the cells: a hair more all round.
        let pad = 1e-5 * (magnitude + g.cell);
        let mut prev: Option<([i32; 3], [i32; 3])> = None;
        for i in qlo[m]..=qhi[m] {
            // The slab of cells `i`, a hundredth of a cell wider each side, and more far from
            // the origin where the cell function's rounding shifts its borders.
            let slack = 0.01 + f64::from(i).abs() * 1e-6;
            let x0 = ((f64::from(i) - slack) * g.cell).max(f64::from(segment.min[m]));
            let x1 = ((f64::from(i) + 1.0 + slack) * g.cell).min(f64::from(segment.max[m]));
            if x0 > x1 {
                prev = None;
                continue;
            }
            let mut lo = qlo;
            let mut hi = qhi;
            lo[m] = i;
            hi[m] = i;
            for a in (0..3).filter(|&a| a != m) {
                let at = |x: f64| o[a] + (x - o[m]) * f64::from(ray.dir[a]) / d;
                let (u0, u1) = (at(x0), at(x1));
                let (u0, u1) = (u0.min(u1) - pad, u0.max(u1) + pad);
                let u0 = u0.max(f64::from(segment.min[a]) - pad);
                let u1 = u1.min(f64::from(segment.max[a]) + pad);
                lo[a] = lo[a].max(g.cell(u0 as f32));
                hi[a] = hi[a].min(g.cell(u1 as f32));
            }
            if (0..3).any(|a| lo[a] > hi[a]) {
                prev = None;
                continue;
            }
            let seen = |r: &Record| {
                prev.is_some_and(|(plo, phi)| {
                    let top = r.hi();
                    (0..3).all(|a| r.lo[a] <= phi[a] && plo[a] <= top[a])
                })
            };
            self.visit_range(lo, hi, &seen, visit)?;
            prev = Some((lo, hi));
        }
        ControlFlow::Continue(())
    }
}
