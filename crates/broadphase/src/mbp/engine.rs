//! The engine's face: the steps of an update in order, its end (the regions' reach, the pair
//! changes, the marks of the update cleared), the queries (answered in `query`), and its
//! figures.

use std::ops::ControlFlow;

use crate::cells::Rules;
use crate::engine::{Engine, PairChanges, PairList};
use crate::query::Ray;
use crate::store::Store;
use crate::{Aabb, Algorithm, Error, Figures, MbpFigures, Stats};

use super::membership::{Membership, MembershipView, RegionEntry};
use super::regions::RegionSet;
use super::{MbpEngine, OUT};

impl MbpEngine {
    /// Step 4 of the [module docs](super).
    fn prune(&mut self, store: &Store) {
        let stays = self.binning.stays();
        let view = MembershipView {
            members: &self.members,
            extras: &self.extras,
        };
        let rules = Rules {
            allows: &|x: u32, y: u32| store.allows_unless_both_fixed(x, y),
            lower_common: &|x: u32, y: u32, r: usize| view.share_region_below(x, y, r),
            stays,
            store,
        };
        self.cells.prune(self.parallel, &rules);
    }

    /// Step 4's end: the regions' reach, and the pair changes into `changes`; then the marks
    /// of this update are cleared (nothing reads them before the next).
    fn finish(&mut self, changes: &mut PairChanges) {
        // Each region's reach: the union of its cells' bounds (measured by touched cells).
        for region in self.regions.iter_mut().flatten() {
            if let Some(b) = region.built_mut() {
                b.reach = b
                    .cell_range()
                    .filter_map(|c| self.cells.get(c).bounds)
                    .reduce(|x, y| x.union(&y));
            }
        }
        self.cells
            .finish(self.parallel, &mut self.binning, &self.to_place, changes);
        for &s in &self.forced_list {
            self.forced[s as usize] = 0;
        }
        self.forced_list.clear();
        self.recut = RegionSet::default();
        self.joinable = RegionSet::default();
        self.lookup_all = false;
        self.new_cells = false;
    }
}

impl Engine for MbpEngine {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Mbp
    }

    /// The out-of-bounds cell, then the cells of the regions the box reaches (see
    /// `MbpEngine::box_candidates`).
    fn candidates(
        &self,
        _store: &Store,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.box_candidates(bounds, visit)
    }

    /// The out-of-bounds cell, then the regions the ray's segment touches, cell by cell (see
    /// `MbpEngine::ray_walk`).
    fn ray_candidates(
        &self,
        _store: &Store,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.ray_walk(ray, max_t, world, visit)
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        if !store.dirty().is_empty() || self.region_edits || self.relayout {
            self.grow_slots(store);
            if self.needs_full_layout(store) {
                self.full_layout(store);
            } else {
                self.apply_region_changes(store);
                self.recut_drifted(store);
                self.leave(store);
            }
            self.place(store);
            self.prune(store);
        }
        self.finish(changes);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.cells.pair_lists()
    }

    /// Moves the regions with the boxes (as PhysX's `MBP::shiftOrigin` does); the next
    /// update lays everything out again.
    fn shift_origin(&mut self, shift: [f32; 3]) {
        // A region reaching past the float range extends to infinity: still all of it.
        let offset = shift.map(|v| -v);
        for r in self.regions.iter_mut().flatten() {
            r.bounds = r.bounds.translated(offset);
        }
        // Every proxy changed: queries test them all directly until the next update, which
        // lays everything out again.
        self.relayout = true;
    }

    /// The cells, the regions' layout and every proxy's membership (`check.rs`).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        self.check(store)
    }

    fn stats(&self, _store: &Store, stats: &mut Stats) {
        stats.memory_bytes += self.cells.memory_bytes()
            + self.members.capacity() * size_of::<Membership>()
            + self
                .extras
                .iter()
                .map(|e| e.capacity() * size_of::<RegionEntry>())
                .sum::<usize>()
            + self.not_inside.0.capacity() * 8
            + self.forced.capacity()
            + self.to_place.capacity() * 4;
        let regions = self
            .regions
            .iter()
            .flatten()
            .filter(|r| r.built().is_some())
            .count();
        stats.figures = Figures::Mbp(MbpFigures {
            regions: regions as u64,
            cells: self.cells.len() as u64 - 1,
            entries: (1..self.cells.len())
                .map(|c| self.cells.get(c).len() as u64)
                .sum(),
            out_of_bounds: self.cells.get(OUT).len() as u64,
            sweep_axis: self.sweep as u64,
            layouts: self.layouts,
            region_recuts: self.recuts,
        });
    }
}
