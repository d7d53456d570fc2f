//! Region edits: regions added and removed by the user take effect at the next update, when
//! removed regions drop their cells (their proxies are placed again) and added ones get cells
//! (and, when populated, the proxies already held that touch them).

use std::sync::atomic::Ordering;

use crate::cells::grid::ColumnGrid;
use crate::store::Store;
use crate::{Aabb, Error};

use super::regions::{check_region, RegionId, MAX_REGIONS};
use super::table::{Built, Region, State};
use super::MbpEngine;

impl MbpEngine {
    /// [`Mbp::add_region`](super::Mbp::add_region).
    pub(super) fn add_region(&mut self, bounds: Aabb, populate: bool) -> Result<RegionId, Error> {
        check_region(&bounds)?;
        let live = self
            .regions
            .iter()
            .flatten()
            .filter(|r| !r.auto && !matches!(r.state, State::Removing(_)))
            .count();
        let free = self.regions.iter().position(Option::is_none);
        let (Some(index), true) = (free, live < MAX_REGIONS) else {
            return Err(Error::TooManyRegions { limit: MAX_REGIONS });
        };
        if self.auto {
            // The derived regions serve queries until the next update, which lays out the
            // added ones.
            self.auto = false;
            self.switching = true;
            self.relayout = true;
            for r in self.regions.iter_mut().flatten() {
                if let State::Built(b) = &r.state {
                    r.state = State::Removing(b.clone());
                }
            }
        }
        let id = RegionId::new(index, self.generations[index]);
        self.regions[index] = Some(Region {
            id,
            bounds,
            auto: false,
            state: State::Pending { populate },
        });
        self.region_edits = true;
        Ok(id)
    }

    /// [`Mbp::remove_region`](super::Mbp::remove_region).
    pub(super) fn remove_region(&mut self, id: RegionId) -> Result<(), Error> {
        let i = id.index();
        let live = self
            .regions
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|r| r.id == id && !r.auto && !matches!(r.state, State::Removing(_)));
        if !live {
            return Err(Error::UnknownRegion { id });
        }
        self.generations[i] += 1;
        // A pending region never had cells or proxies: it just goes. A built one serves
        // queries until the next update.
        if let Some(mut region) = self.regions[i].take() {
            if let State::Built(b) = region.state {
                region.state = State::Removing(b);
                self.regions[i] = Some(region);
            }
        }
        self.region_edits = true;
        Ok(())
    }

    /// Step 1 of the [module docs](super) (without the re-cuts): removed regions drop their
    /// cells and their proxies are looked up again; added regions get cells, and the proxies
    /// that join them when populated.
    pub(super) fn apply_region_changes(&mut self, store: &Store) {
        if !self.region_edits {
            return;
        }
        self.region_edits = false;
        for r in 0..MAX_REGIONS {
            let Some(State::Removing(b)) = self.regions[r].as_ref().map(|x| &x.state) else {
                continue;
            };
            let b = b.clone();
            for slot in self.members_of(&b) {
                self.strip(slot as usize, r);
                self.force(slot, true);
            }
            let range = b.first_cell..b.first_cell + b.grid.len();
            self.cells.replace(range.clone(), Vec::new());
            for x in self.regions.iter_mut().flatten() {
                if let Some(o) = x.built_mut() {
                    if o.first_cell > range.start {
                        o.first_cell -= range.len();
                    }
                }
            }
            self.regions[r] = None;
        }
        for r in 0..MAX_REGIONS {
            let Some(Region {
                state: State::Pending { populate },
                bounds,
                ..
            }) = self.regions[r]
            else {
                continue;
            };
            let joiners = if populate {
                self.joiners(store, &bounds)
            } else {
                Vec::new()
            };
            let grid = ColumnGrid::choose(
                &self.params(store),
                joiners.len(),
                joiners.iter().map(|&i| store.aabb_at(i as usize)),
                None,
                Some(&bounds),
            );
            let first = self.cells.len();
            self.cells.replace(first..first, Built::cells(r, &grid));
            if let Some(region) = self.regions[r].as_mut() {
                region.state = State::Built(Built::new(grid, first, joiners.len()));
            }
            for slot in joiners {
                self.force(slot, false);
            }
            if populate {
                self.joinable.insert(r);
            }
            // New: no proxy has entries here yet, and its population is still to come.
            self.recut.insert(r);
        }
        self.refresh_regions();
    }

    /// The proxies held that touch `bounds`, for a populated new region: those not fully
    /// inside a region (the bitmap), and those of the regions `bounds` overlaps. The others
    /// lie inside a region that `bounds` does not reach.
    fn joiners(&self, store: &Store, bounds: &Aabb) -> Vec<u32> {
        let mut out = Vec::new();
        for (w, word) in self.not_inside.0.iter().enumerate() {
            let mut bits = word.load(Ordering::Relaxed);
            while bits != 0 {
                let slot = (w << 6) | bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if store.is_alive(slot) && store.aabb_at(slot).overlaps(bounds) {
                    out.push(slot as u32);
                }
            }
        }
        for r in 0..MAX_REGIONS {
            let Some(region) = self.regions[r].as_ref() else {
                continue;
            };
            let Some(b) = region.built() else { continue };
            if region.bounds.overlaps(bounds) {
                out.extend(self.members_of(b).into_iter().filter(|&i| {
                    store.is_alive(i as usize) && store.aabb_at(i as usize).overlaps(bounds)
                }));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
