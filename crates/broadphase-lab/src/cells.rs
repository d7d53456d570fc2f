//! `bplab cells`: runs a scene in a [`Grid`] and draws one level's cells (SVG), seen along an
//! axis, with a table of every level: cell size, buckets, boxes living on it and visiting it,
//! entries (cells covered), occupied cells and cells shared by two boxes or more.

use std::collections::HashMap;
use std::fmt::Write;

use broadphase::{BroadPhase, Config, Error, Grid, GridLevelDump, GridSettings};

use crate::scenes::{Scene, SceneKind};

/// What to run and draw.
#[derive(Clone, Debug)]
pub struct CellOptions {
    /// The scene.
    pub scene: SceneKind,
    /// Objects in the scene.
    pub n: usize,
    /// The scene's seed.
    pub seed: u64,
    /// The fine cell size; `None` lets the grid choose it from the boxes.
    pub cell_size: Option<f32>,
    /// Frames to run after the first update, before drawing.
    pub frames: usize,
    /// The level drawn (0 is the finest).
    pub level: usize,
    /// The axis the picture looks along (0 = x, 1 = y, 2 = z).
    pub along: usize,
}

/// What one level of a dump adds up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LevelCount {
    /// Boxes living on the level.
    pub residents: usize,
    /// Boxes of finer levels visiting its cells.
    pub visitors: usize,
    /// Cells covered, summed over the boxes (the chapter's cell ids).
    pub entries: usize,
    /// Distinct cells holding a box.
    pub occupied: usize,
    /// Cells holding two boxes or more, one of them living on the level: where pairs are
    /// tested.
    pub shared: usize,
    /// The most boxes in one cell.
    pub fullest: usize,
}

/// Counts the cells of one level of a dump.
#[must_use]
pub fn count(level: &GridLevelDump) -> LevelCount {
    let mut per_cell: HashMap<[i32; 3], (usize, bool)> = HashMap::new();
    let mut c = LevelCount::default();
    for b in &level.boxes {
        if b.resident {
            c.residents += 1;
        } else {
            c.visitors += 1;
        }
        for cell in cells_of(b.first_cell, b.last_cell) {
            let e = per_cell.entry(cell).or_default();
            e.0 += 1;
            e.1 |= b.resident;
            c.entries += 1;
        }
    }
    c.occupied = per_cell.len();
    c.shared = per_cell.values().filter(|&&(n, r)| n >= 2 && r).count();
    c.fullest = per_cell.values().map(|&(n, _)| n).max().unwrap_or(0);
    c
}

/// The cells `first..=last`.
pub(crate) fn cells_of(first: [i32; 3], last: [i32; 3]) -> impl Iterator<Item = [i32; 3]> {
    (first[2]..=last[2]).flat_map(move |z| {
        (first[1]..=last[1]).flat_map(move |y| (first[0]..=last[0]).map(move |x| [x, y, z]))
    })
}

/// Runs the scene in a grid; returns the SVG picture of the chosen level and the table of all
/// levels.
///
/// # Errors
/// When the cell size is invalid ([`GridSettings::validate`]), the level does not exist, or
/// the scene hands the grid a box it rejects (a scene bug).
pub fn cells(opts: &CellOptions) -> Result<(String, String), Error> {
    let mut settings = GridSettings::default();
    settings.cell_size = opts.cell_size;
    let mut grid = Grid::with_settings(Config::default(), settings)?;
    let mut scene = Scene::new(opts.scene, opts.n, opts.seed);
    let mut ids = grid.insert_batch(&scene.initial())?;
    grid.update()?;
    let mut feeder = crate::run::Feeder::default();
    for _ in 0..opts.frames {
        feeder.apply(&mut grid, &mut ids, &scene.step())?;
        grid.update()?;
    }
    let levels = grid.dump();
    let Some(drawn) = levels.get(opts.level) else {
        return Err(Error::InvalidParameter {
            name: "level",
            value: opts.level as f64,
            expected: "a level the grid has (see the table: 0 is the finest)",
        });
    };
    let mut table = String::new();
    let _ = writeln!(
        table,
        "level  cell size  buckets  residents  visitors   entries  occupied    shared  fullest"
    );
    for l in &levels {
        let c = count(l);
        let _ = writeln!(
            table,
            "{:>5}  {:>9.3}  {:>7}  {:>9}  {:>8}  {:>8}  {:>8}  {:>8}  {:>7}",
            l.level,
            l.cell_size,
            l.buckets,
            c.residents,
            c.visitors,
            c.entries,
            c.occupied,
            c.shared,
            c.fullest
        );
    }
    let _ = writeln!(
        table,
        "{} proxies, {} pairs; cells shared by two boxes or more are where pairs are tested",
        grid.len(),
        grid.pairs().len()
    );
    Ok((svg(drawn, opts.along % 3), table))
}

/// Picture width in pixels (the height follows the aspect ratio).
const WIDTH: f64 = 800.0;
const MARGIN: f64 = 24.0;
/// At most this many cells are drawn per axis of the picture; a larger level is drawn in part,
/// around the middle of its boxes.
const MAX_CELLS: i64 = 160;

/// One level's cells as an SVG picture, seen along axis `along`: a cell's column is shaded by
/// the boxes covering it, darker where boxes have their home cell, and outlined in red where
/// two boxes or more share a cell of it.
#[must_use]
pub fn svg(level: &GridLevelDump, along: usize) -> String {
    let (a, b) = ((along + 1) % 3, (along + 2) % 3);
    // Per column of the picture: boxes covering it, boxes whose home is in it, and whether a
    // cell of it is shared.
    let mut per_cell: HashMap<[i32; 3], usize> = HashMap::new();
    for bx in &level.boxes {
        for c in cells_of(bx.first_cell, bx.last_cell) {
            *per_cell.entry(c).or_default() += 1;
        }
    }
    let mut columns: HashMap<[i32; 2], (usize, usize, bool)> = HashMap::new();
    for (c, &n) in &per_cell {
        let col = columns.entry([c[a], c[b]]).or_default();
        col.0 += n;
        col.2 |= n >= 2;
    }
    for bx in &level.boxes {
        if bx.resident {
            columns
                .entry([bx.home_cell[a], bx.home_cell[b]])
                .or_default()
                .1 += 1;
        }
    }
    // The window: the occupied columns, at most MAX_CELLS per axis around their median.
    let mut lo = [0i64; 2];
    let mut hi = [0i64; 2];
    for k in 0..2 {
        let mut v: Vec<i64> = columns.keys().map(|c| i64::from(c[k])).collect();
        v.sort_unstable();
        if let (Some(&first), Some(&last)) = (v.first(), v.last()) {
            let mid = v[v.len() / 2];
            lo[k] = first.max(mid - MAX_CELLS / 2);
            hi[k] = last.min(lo[k] + MAX_CELLS - 1);
        }
    }
    let cols = (hi[0] - lo[0] + 1) as f64;
    let rows = (hi[1] - lo[1] + 1) as f64;
    let side = (WIDTH - 2.0 * MARGIN) / cols.max(rows);
    let height = rows * side + 2.0 * MARGIN + 40.0;
    let most = columns.values().map(|c| c.0).max().unwrap_or(0).max(1);
    let name = |axis: usize| ["x", "y", "z"][axis];

    let mut out = String::new();
    crate::output::svg_open(&mut out, WIDTH, height);
    let mut keys: Vec<&[i32; 2]> = columns.keys().collect();
    keys.sort_unstable();
    let mut drawn = 0usize;
    for key in keys {
        let (u, v) = (i64::from(key[0]), i64::from(key[1]));
        if u < lo[0] || u > hi[0] || v < lo[1] || v > hi[1] {
            continue;
        }
        let (boxes, homes, shared) = columns[key];
        // The second axis grows upwards.
        let x = MARGIN + (u - lo[0]) as f64 * side;
        let y = MARGIN + (hi[1] - v) as f64 * side;
        let shade = 0.1 + 0.6 * boxes as f64 / most as f64;
        let fill = if homes > 0 { "#1f5fa8" } else { "#7fa9d9" };
        let stroke = if shared {
            r##" stroke="#d62728" stroke-width="0.8""##
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{side:.2}" height="{side:.2}" fill="{fill}" fill-opacity="{shade:.2}"{stroke}/>"#
        );
        drawn += 1;
    }
    let c = count(level);
    let caption = format!(
        "level {} (cell {:.3}): {} boxes living here, {} visiting; {drawn} of {} columns drawn; \
         cells shared by two boxes or more outlined; horizontal {}, vertical {}",
        level.level,
        level.cell_size,
        c.residents,
        c.visitors,
        columns.len(),
        name(a),
        name(b)
    );
    crate::output::svg_close(&mut out, MARGIN, height - 14.0, &caption);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(scene: SceneKind) -> CellOptions {
        CellOptions {
            scene,
            n: 2000,
            seed: 1,
            cell_size: None,
            frames: 2,
            level: 0,
            along: 1,
        }
    }

    /// The grid scene's unit cubes on a 2 m lattice in 2 m cells: about one cell per box, and
    /// the table adds up.
    #[test]
    fn draws_the_lattice() -> Result<(), Error> {
        let mut o = opts(SceneKind::Grid);
        o.cell_size = Some(2.0);
        let (svg, table) = cells(&o)?;
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("level 0 (cell 2.000)"), "{svg}");
        assert!(table.contains("2000 proxies"), "{table}");
        Ok(())
    }

    /// Planets among asteroids: the planets live on coarser levels, which the asteroids visit.
    #[test]
    fn oversized_boxes_live_on_coarser_levels() -> Result<(), Error> {
        let mut grid = Grid::new(Config::default());
        let scene = Scene::new(SceneKind::Sizes, 3000, 1);
        grid.insert_batch(&scene.initial())?;
        grid.update()?;
        let levels = grid.dump();
        assert!(levels.len() > 1, "the 1% of planets need coarser levels");
        let residents: usize = levels.iter().map(|l| count(l).residents).sum();
        assert_eq!(residents, 3000, "every box lives on one level");
        assert!(levels[1..].iter().any(|l| count(l).visitors > 0));
        let first = count(&levels[0]);
        assert!(first.entries >= first.residents && first.shared <= first.occupied);
        Ok(())
    }

    #[test]
    fn a_missing_level_is_an_error() {
        let mut o = opts(SceneKind::Uniform);
        o.level = 40;
        assert!(matches!(
            cells(&o),
            Err(Error::InvalidParameter { name: "level", .. })
        ));
    }
}
