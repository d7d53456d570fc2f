//! The grid's cells as data, at any moment and without rebuilding anything: what `bplab cells`
//! draws as SVG.

use super::record::SLOT;
use super::Grid;
use crate::ProxyId;

/// One level of a [`Grid`] ([`Grid::dump`]): its cell size and the cells each of its boxes
/// covers, as of the last update.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GridLevelDump {
    /// The level: its cells are `4^level` cells of level 0 wide.
    pub level: u32,
    /// The side of a cell. Cell `c` on an axis spans `[c * cell_size, (c + 1) * cell_size)`.
    pub cell_size: f64,
    /// The buckets the level's cells are hashed into.
    pub buckets: usize,
    /// The boxes binned to the level, in slot order: those living on it (`resident`), then
    /// the boxes of finer levels visiting its cells to meet its residents.
    pub boxes: Vec<CellBoxDump>,
}

/// A box binned to a level of a [`GridLevelDump`], with the cells it covers there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CellBoxDump {
    /// The proxy.
    pub id: ProxyId,
    /// Whether the box lives on this level (else it visits from a finer one).
    pub resident: bool,
    /// Its lowest cell per axis.
    pub first_cell: [i32; 3],
    /// Its highest cell per axis.
    pub last_cell: [i32; 3],
    /// Its home cell, the one holding its centre (GPU Gems' centroid cell); its other cells
    /// are its phantom cells.
    pub home_cell: [i32; 3],
    /// Whether the proxy changed since the last update (the cells are the last update's).
    pub changed: bool,
}

impl Grid {
    /// The levels as data: each level's cell size and, for every box binned to it, the cells it
    /// covers and its home cell, as of the last update. Levels are finest first; a grid that
    /// has not updated yet has none. `bplab cells` draws it as SVG.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, Config, Grid, GridSettings, ProxyDesc};
    /// let mut settings = GridSettings::default();
    /// settings.cell_size = Some(2.0);
    /// let mut bp = Grid::with_settings(Config::default(), settings)?;
    /// let a = bp.insert(Aabb::new([0.5; 3], [2.5; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// let level = &bp.dump()[0];
    /// assert_eq!(level.cell_size, 2.0);
    /// let b = level.boxes[0];
    /// assert_eq!((b.id, b.first_cell, b.last_cell, b.home_cell), (a, [0; 3], [1; 3], [0; 3]));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn dump(&self) -> Vec<GridLevelDump> {
        let store = &self.store;
        self.engine
            .levels
            .iter()
            .map(|level| {
                // A box spanning several buckets has a record in each: list it once.
                let mut boxes: Vec<CellBoxDump> = level
                    .buckets
                    .iter()
                    .flat_map(|bucket| {
                        bucket.records.iter().enumerate().map(|(i, r)| {
                            let slot = (r.slot & SLOT) as usize;
                            let hi = r.hi();
                            CellBoxDump {
                                id: store.id_at_last_update(slot),
                                resident: i < bucket.residents,
                                first_cell: r.lo,
                                last_cell: hi,
                                home_cell: std::array::from_fn(|a| r.lo[a] + r.home_offset(a)),
                                changed: store.is_dirty(slot),
                            }
                        })
                    })
                    .collect();
                boxes.sort_unstable_by_key(|b| (!b.resident, b.id.index()));
                boxes.dedup_by_key(|b| (b.resident, b.id));
                GridLevelDump {
                    level: level.grid.level,
                    cell_size: level.grid.cell,
                    buckets: level.buckets.len(),
                    boxes,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split_mix::SplitMix64;
    use crate::{Aabb, BroadPhase, Config, Error, GridSettings, ProxyDesc};

    fn grid(cell: f32) -> Result<Grid, Error> {
        let settings = GridSettings {
            cell_size: Some(cell),
            ..GridSettings::default()
        };
        Grid::with_settings(Config::default(), settings)
    }

    /// A box's cells are the cells its corners fall in; its home holds its centre.
    #[test]
    fn a_box_covers_the_cells_of_its_corners() -> Result<(), Error> {
        let mut bp = grid(1.0)?;
        assert!(bp.dump().is_empty(), "no layout before the first update");
        let a = bp.insert(
            Aabb::new([-0.5, 0.2, 3.1], [0.4, 0.3, 3.9]),
            ProxyDesc::dynamic(),
        )?;
        bp.update()?;
        let levels = bp.dump();
        let b = levels[0].boxes[0];
        assert_eq!(b.id, a);
        assert!(b.resident && !b.changed);
        assert_eq!(b.first_cell, [-1, 0, 3]);
        assert_eq!(b.last_cell, [0, 0, 3]);
        assert_eq!(b.home_cell, [-1, 0, 3], "centre -0.05 is in cell -1");
        Ok(())
    }

    /// Every pair the grid reports meets in a cell of some level that the dump lists for both
    /// boxes, and each box lives on exactly one level.
    #[test]
    fn every_pair_shares_a_dumped_cell() -> Result<(), Error> {
        let mut bp = grid(2.0)?;
        let mut rng = SplitMix64::new(7);
        let mut items = Vec::new();
        for i in 0..400 {
            let c = [0, 1, 2].map(|_| (rng.next_u64() % 4000) as f32 / 100.0);
            // One box in forty is huge: it lives on a coarser level, the others visit it.
            let h = if i % 40 == 0 { 9.0 } else { 0.8 };
            items.push((
                Aabb::new(c.map(|x| x - h), c.map(|x| x + h)),
                ProxyDesc::dynamic(),
            ));
        }
        let ids = bp.insert_batch(&items)?;
        bp.update()?;
        let levels = bp.dump();
        assert!(levels.len() > 1, "the huge boxes need a coarser level");
        for id in &ids {
            let homes = levels
                .iter()
                .filter(|l| l.boxes.iter().any(|b| b.id == *id && b.resident))
                .count();
            assert_eq!(homes, 1, "{id:?} lives on one level");
        }
        for pair in bp.pairs() {
            let meet = levels.iter().any(|l| {
                let find = |id| l.boxes.iter().find(|b| b.id == id);
                match (find(pair.a), find(pair.b)) {
                    (Some(x), Some(y)) => (0..3).all(|k| {
                        x.first_cell[k] <= y.last_cell[k] && y.first_cell[k] <= x.last_cell[k]
                    }),
                    _ => false,
                }
            });
            assert!(meet, "{pair:?} shares no dumped cell");
        }
        Ok(())
    }

    /// Changes since the last update are marked, and a removed proxy is still named by its id
    /// until the next update drops its records.
    #[test]
    fn changes_are_marked_until_the_next_update() -> Result<(), Error> {
        let mut bp = grid(1.0)?;
        let a = bp.insert(Aabb::new([0.0; 3], [0.5; 3]), ProxyDesc::dynamic())?;
        let b = bp.insert(Aabb::new([3.0; 3], [3.5; 3]), ProxyDesc::dynamic())?;
        bp.update()?;
        bp.set_aabb(a, Aabb::new([5.0; 3], [5.5; 3]))?;
        bp.remove(b)?;
        let boxes = &bp.dump()[0].boxes;
        assert_eq!(boxes.len(), 2);
        assert!(boxes.iter().all(|x| x.changed));
        assert!(
            boxes.iter().any(|x| x.id == b),
            "the removed proxy keeps its id"
        );
        assert_eq!(
            boxes.iter().find(|x| x.id == a).map(|x| x.first_cell),
            Some([0; 3])
        );
        bp.update()?;
        let boxes = &bp.dump()[0].boxes;
        assert_eq!(boxes.len(), 1);
        assert_eq!(
            (boxes[0].id, boxes[0].first_cell, boxes[0].changed),
            (a, [5; 3], false)
        );
        Ok(())
    }
}
