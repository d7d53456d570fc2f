//! Queries: the candidates of a box or a ray (the out-of-bounds cell, then the regions the
//! query reaches, cell by cell), and the figures `Mbp` reports about its regions.

use std::ops::ControlFlow;

use crate::cells::grid::pad_stretch;
use crate::cells::{self, RayWalk, Report};
use crate::query::{segment_bounds, Ray};
use crate::store::Store;
use crate::{Aabb, ProxyId};

use super::membership::{MembershipView, RegionEntry};
use super::regions::{RegionId, RegionInfo, RegionSet};
use super::table::{Region, State};
use super::{MbpEngine, OUT};

impl MbpEngine {
    /// [`Mbp::region_ids`](super::Mbp::region_ids).
    #[must_use]
    pub(super) fn region_ids(&self) -> Vec<RegionId> {
        self.regions
            .iter()
            .flatten()
            .filter(|r| !r.auto && !matches!(r.state, State::Removing(_)))
            .map(|r| r.id)
            .collect()
    }

    /// [`Mbp::regions`](super::Mbp::regions).
    #[must_use]
    pub(super) fn regions(&self) -> Vec<RegionInfo> {
        self.regions
            .iter()
            .flatten()
            .filter(|r| !matches!(r.state, State::Removing(_)))
            .map(|r| {
                let b = r.built();
                let (fixed, dynamic) = b.map_or((0, 0), |b| self.population(b));
                RegionInfo {
                    id: (!r.auto).then_some(r.id),
                    bounds: r.bounds,
                    fixed,
                    dynamic,
                    cells: b.map_or(0, |b| b.grid.len()),
                    overlaps: b.is_some_and(|b| !b.neighbours.is_empty()),
                    cuts: b.map_or_else(Vec::new, |b| {
                        let [_, u, v] = b.grid.axes;
                        [(0, u), (1, v)]
                            .into_iter()
                            .flat_map(|(k, axis)| {
                                (1..b.grid.cells[k])
                                    .map(move |c| (axis, b.grid.cell_span(k, c - 1).1))
                            })
                            .collect()
                    }),
                }
            })
            .collect()
    }

    /// [`Mbp::out_of_bounds`](super::Mbp::out_of_bounds).
    #[must_use]
    pub(super) fn out_of_bounds(&self, store: &Store) -> Vec<ProxyId> {
        let cell = self.cells.get(OUT);
        let mut out: Vec<ProxyId> = cell
            .entries()
            .map(|(slot, _)| slot as usize)
            .filter(|&s| store.is_alive(s))
            .map(|s| store.id_at(s))
            .collect();
        out.sort_unstable();
        out
    }

    /// [`Mbp::derives_regions`](super::Mbp::derives_regions).
    #[must_use]
    pub(super) fn derives_regions(&self) -> bool {
        self.auto
    }

    /// The regions with cells whose reach (their members' boxes) `q` touches.
    fn reached(&self, q: &Aabb) -> RegionSet {
        let mut out = RegionSet::default();
        for (r, region) in self.regions.iter().enumerate() {
            if region
                .as_ref()
                .and_then(Region::built)
                .and_then(|b| b.reach)
                .is_some_and(|reach| reach.overlaps(q))
            {
                out.insert(r);
            }
        }
        out
    }

    /// [`Engine::candidates`](crate::engine::Engine::candidates): the out-of-bounds cell, then
    /// the cells of every region whose reach the box touches, each searched on the sweep axis;
    /// a proxy in several is visited in the lowest of these regions, and there in the first
    /// cell both cover.
    pub(super) fn box_candidates(
        &self,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        self.cells
            .get(OUT)
            .scan(bounds, &mut |slot, _| visit(slot))?;
        let touched = self.reached(bounds);
        let view = MembershipView {
            members: &self.members,
            extras: &self.extras,
        };
        for r in touched.iter() {
            let Some(b) = self.built(r) else { continue };
            let range = b.grid.range(bounds);
            let query = cells::tag(0, range.u0, range.v0);
            for (u, v) in range.cells() {
                let here = cells::tag(0, u as u16, v as u16);
                let cell = self.cells.get(b.first_cell + b.grid.index(u, v));
                cell.scan(bounds, &mut |slot, tag| {
                    if cells::reporting_cell(here, cells::local(tag), query) != Report::Here {
                        return ControlFlow::Continue(());
                    }
                    let mut buf = [RegionEntry::default(); 2];
                    let lower = cells::tag_region(tag) < r
                        && view.members[slot as usize]
                            .entries(view.extras, &mut buf)
                            .iter()
                            .any(|e| {
                                usize::from(e.region) < r && touched.contains(usize::from(e.region))
                            });
                    if lower {
                        ControlFlow::Continue(())
                    } else {
                        visit(slot)
                    }
                })?;
            }
        }
        ControlFlow::Continue(())
    }

    /// [`Engine::ray_candidates`](crate::engine::Engine::ray_candidates): the out-of-bounds cell,
    /// then the regions the ray's segment touches, each walked cell by cell over the stretch of
    /// the ray inside the cell.
    pub(super) fn ray_walk(
        &self,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Some(segment) = segment_bounds(ray, max_t, world) else {
            return ControlFlow::Continue(());
        };
        self.cells
            .get(OUT)
            .scan(&segment, &mut |slot, _| visit(slot))?;
        let mut walk = RayWalk::new(ray, max_t);
        let members = &self.members;
        // A proxy in one cell of one region only is met there only.
        let single = |slot: u32| {
            let m = &members[slot as usize];
            m.count == 1 && m.first.range.count() == 1
        };
        for r in self.reached(&segment).iter() {
            let Some((b, bounds)) = self.built(r).and_then(|b| b.reach.map(|x| (b, x))) else {
                continue;
            };
            let mut clip = *world;
            for axis in 0..3 {
                clip.min[axis] = clip.min[axis].max(bounds.min[axis]);
                clip.max[axis] = clip.max[axis].min(bounds.max[axis]);
            }
            if !(0..3).all(|k| clip.min[k] <= clip.max[k]) {
                continue;
            }
            let Some(stretch) = segment_bounds(ray, max_t, &clip) else {
                continue;
            };
            walk.cells(
                self.cells.slice(b.cell_range()),
                &b.grid,
                b.grid.range(&pad_stretch(&stretch)),
                &clip,
                single,
                visit,
            )?;
        }
        ControlFlow::Continue(())
    }
}
