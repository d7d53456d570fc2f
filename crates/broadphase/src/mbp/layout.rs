//! Layouts and re-cuts: the full layout (the sweep axis, derived regions laid out anew or the
//! first added ones, every region cut into cells, every proxy placed again), and the re-cut of
//! a region whose population drifted from what its cells were cut for.

use crate::cells::grid::{centre_spread, ColumnGrid};
use crate::cells::{self, Cell};
use crate::split_mix::sample;
use crate::store::Store;
use crate::Aabb;

use super::membership::{Membership, NOT_SOLE};
use super::regions::{RegionId, RegionIndex, MAX_REGIONS};
use super::table::{Built, Region, State};
use super::{MbpEngine, OUT_AXES};

impl MbpEngine {
    /// Whether the population changed enough since the last full layout to lay out again.
    pub(super) fn needs_full_layout(&self, store: &Store) -> bool {
        let n = store.len();
        match self.layout_for {
            None => true,
            Some(built) => self.relayout || n > 2 * built + 256 || (4 * n < built && built > 4096),
        }
    }

    /// The derived regions for the live boxes: a grid over the plane of the cut axes, about
    /// `boxes_per_region` proxies each, the border regions reaching to infinity.
    fn derived_regions(&self, store: &Store) -> Vec<Aabb> {
        let live = (0..store.slot_count()).filter(|&i| store.is_alive(i));
        let [_, u, v] = ColumnGrid::single(self.sweep).axes;
        let whole = Aabb::new([f32::NEG_INFINITY; 3], [f32::INFINITY; 3]);
        let k = ((store.len() as f64 / self.tuning.boxes_per_region as f64)
            .sqrt()
            .round() as usize)
            .clamp(1, 16);
        let Some((lo, hi)) = centre_spread(store.len(), live.map(|i| store.aabb_at(i))) else {
            return vec![whole];
        };
        let borders = |axis: usize| -> Vec<f32> {
            let k = if hi[axis] > lo[axis] { k } else { 1 };
            let mut b: Vec<f32> = (0..=k)
                .map(|i| (lo[axis] + (hi[axis] - lo[axis]) * i as f64 / k as f64) as f32)
                .collect();
            b[0] = f32::NEG_INFINITY;
            b[k] = f32::INFINITY;
            b.dedup();
            b
        };
        let (bu, bv) = (borders(u), borders(v));
        let mut out = Vec::new();
        for i in 0..bu.len() - 1 {
            for j in 0..bv.len() - 1 {
                let mut r = whole;
                r.min[u] = bu[i];
                r.max[u] = bu[i + 1];
                r.min[v] = bv[j];
                r.max[v] = bv[j + 1];
                out.push(r);
            }
        }
        out
    }

    /// Lays everything out again: the sweep axis, the regions' cells, and every proxy placed
    /// again. Derived regions are derived anew (and the first added regions replace them):
    /// then every proxy's regions are looked up. Added regions keep their proxies: only the
    /// changed ones, and those of removed regions, are looked up; the others join the
    /// populated new regions they touch.
    pub(super) fn full_layout(&mut self, store: &Store) {
        self.layouts += 1;
        self.relayout = false;
        let n = store.len();
        {
            let live = (0..store.slot_count()).filter(|&i| store.is_alive(i));
            self.sweep = ColumnGrid::choose(
                &self.params(store),
                n,
                live.map(|i| store.aabb_at(i)),
                None,
                None,
            )
            .axes[0];
        }
        if self.auto || self.switching {
            self.switching = false;
            self.region_edits = false;
            for r in 0..MAX_REGIONS {
                let gone = self.regions[r]
                    .as_ref()
                    .is_some_and(|x| x.auto || matches!(x.state, State::Removing(_)));
                if gone {
                    if self.regions[r].as_ref().is_some_and(|x| x.auto) {
                        self.generations[r] += 1;
                    }
                    self.regions[r] = None;
                }
            }
            if self.auto {
                for (r, bounds) in self.derived_regions(store).into_iter().enumerate() {
                    self.regions[r] = Some(Region {
                        id: RegionId::new(r, self.generations[r]),
                        bounds,
                        auto: true,
                        state: State::Pending { populate: false },
                    });
                }
            }
            for m in &mut self.members {
                *m = Membership::default();
            }
            self.sole_region.iter_mut().for_each(|h| *h = NOT_SOLE);
            for e in &mut self.extras {
                e.clear();
            }
            self.free_extras = (0..self.extras.len() as u32).rev().collect();
            self.not_inside.0.iter_mut().for_each(|w| *w.get_mut() = 0);
            self.lookup_all = true;
        } else {
            self.apply_region_changes(store);
        }
        // Sample the boxes into the regions they touch, to cut each region into cells.
        let table: Vec<(usize, Aabb)> = self
            .regions
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (i, r.bounds)))
            .collect();
        let lookup = RegionIndex::new(self.plane(), &table);
        let stride = n.div_ceil(4096 + 64 * table.len()).max(1);
        let mut samples: Vec<Vec<Aabb>> = vec![Vec::new(); MAX_REGIONS];
        // A hashed sample: a stride lines up with an order that repeats.
        let live = (0..store.slot_count()).filter(|&i| store.is_alive(i));
        for i in sample(live, stride) {
            for r in lookup.lookup(store.aabb_at(i)).iter() {
                samples[r].push(*store.aabb_at(i));
            }
        }
        let params = self.params(store);
        let mut all = vec![Cell::new(cells::tag(0, 0, 0), false, OUT_AXES)];
        for &(r, bounds) in &table {
            let est = samples[r].len() * stride;
            let grid = ColumnGrid::choose(&params, est, samples[r].iter(), None, Some(&bounds));
            let first = all.len();
            all.extend(Built::cells(r, &grid));
            if let Some(region) = self.regions[r].as_mut() {
                region.state = State::Built(Built::new(grid, first, est));
            }
        }
        let len = self.cells.len();
        self.cells.replace(0..len, all);
        // Memberships may still name the same regions and cells, but the cells are empty.
        self.new_cells = true;
        self.cells.track_bounds = true;
        self.refresh_regions();
        self.layout_for = Some(n);
        self.to_place.clear();
        // Every live proxy, and the removed ones (to forget them).
        self.to_place.extend(
            (0..store.slot_count() as u32)
                .filter(|&i| store.is_alive(i as usize) || store.is_dirty(i as usize)),
        );
    }

    /// Re-cuts the regions whose population drifted from what their cells were cut for.
    pub(super) fn recut_drifted(&mut self, store: &Store) {
        for r in 0..MAX_REGIONS {
            if self.recut.contains(r) {
                continue;
            }
            let Some(b) = self.built(r) else { continue };
            // Entries stand for members (a box in several cells counts several times).
            let e = self.entries(b);
            let drifted = e > 3 * b.grid_for + 256 || (b.grid.len() > 1 && 4 * e < b.grid_for);
            if drifted {
                self.recut_region(store, r);
            }
        }
    }

    /// Cuts region `r` into cells anew for its current population; its proxies are placed
    /// again (in the same regions).
    fn recut_region(&mut self, store: &Store, r: usize) {
        let Some(b) = self.built(r) else { return };
        let members = self.members_of(b);
        let region_bounds = self.regions[r].as_ref().map(|x| x.bounds);
        let grid = ColumnGrid::choose(
            &self.params(store),
            members.len(),
            members.iter().map(|&i| store.aabb_at(i as usize)),
            None,
            region_bounds.as_ref(),
        );
        let Some(b) = self.regions[r].as_mut().and_then(Region::built_mut) else {
            return;
        };
        b.grid_for = members.len();
        if grid == b.grid {
            return;
        }
        let range = b.first_cell..b.first_cell + b.grid.len();
        let new_len = grid.len();
        b.grid = grid.clone();
        self.cells.replace(range.clone(), Built::cells(r, &grid));
        for x in self.regions.iter_mut().flatten() {
            if let Some(o) = x.built_mut() {
                if o.first_cell > range.start {
                    o.first_cell = o.first_cell + new_len - range.len();
                }
            }
        }
        self.recut.insert(r);
        self.recuts += 1;
        for slot in members {
            self.force(slot, false);
        }
    }
}
