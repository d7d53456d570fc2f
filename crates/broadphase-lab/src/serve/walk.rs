//! The chapter's walkthrough of one frame of the grid, stage by stage, from the grid's dump
//! ([`broadphase::Grid::dump`]) and figures ([`GridFigures`]): the cell ids each object writes (home and
//! phantom), their sort by cell id one radix digit at a time, the collision cells, and the
//! eight parity passes over them.
//!
//! The grid's own sort runs per bucket on hashed keys and keeps nothing to show; the list
//! shown sorted here is the dump's cell ids keyed as the chapter keys them (the cell type in
//! the high bits, then the cell's coordinates), each pass a stable sort by one digit, so that
//! the reader sees what a least-significant-digit radix sort does to the list. The figures to
//! guess are the grid's own.

use std::collections::HashMap;

use broadphase::{BroadPhase, Figures, GridFigures, GridLevelDump, Mobility, ProxyId};
use serde::Serialize;

use crate::cells::cells_of;
use crate::lab::Stepper;

/// Entries, cells and pairs listed per stage: the page shows the first ones and the counts.
pub const SHOWN: usize = 64;

/// At most this many bits per axis in the walkthrough's keys: a wider grid wraps, as the
/// grid's own hashed ids do.
const MAX_AXIS_BITS: u32 = 8;

/// One cell id written: an object and one cell it covers.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct EntryJson {
    /// The object (its index in the scene).
    pub object: u32,
    /// The cell.
    pub cell: [i32; 3],
    /// Whether it is the object's home cell (the one holding its centre).
    pub home: bool,
    /// The cell's sort key: its type (parity class) in the high bits, then its coordinates.
    pub key: u32,
}

/// One pass of the radix sort over the cell ids.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PassJson {
    /// The bits of the key this pass sorts by, lowest first: `[from, to)`.
    pub bits: [u32; 2],
    /// Whether every key has the same digit here, so the pass is skipped (as the grid does).
    pub skipped: bool,
    /// The first [`SHOWN`] entries after the pass.
    pub entries: Vec<EntryJson>,
}

/// A collision cell: a cell holding two boxes or more, one of them living on its level.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CellJson {
    /// The level (0 is the finest).
    pub level: u32,
    /// The cell.
    pub cell: [i32; 3],
    /// Its type, 0 to 7: which of the eight parity passes handles it.
    pub cell_type: u32,
    /// The objects in it.
    pub objects: Vec<u32>,
    /// Pairs of them whose test falls to this cell (it holds the lower corner of the two
    /// boxes' cells).
    pub candidate_pairs: u64,
}

/// One of the eight parity passes: the collision cells of one type.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, Default)]
pub struct ParityJson {
    /// The cell type (x parity + 2 × y parity + 4 × z parity).
    pub cell_type: u32,
    /// Collision cells of this type.
    pub cells: u64,
    /// Candidate pairs tested in them.
    pub candidate_pairs: u64,
    /// Overlapping pairs found in them.
    pub pairs: u64,
}

/// The grid's own figures for the frame.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct GridFiguresJson {
    /// Cell ids written.
    pub cell_ids: u64,
    /// Home cells.
    pub home_cells: u64,
    /// Phantom cells.
    pub phantom_cells: u64,
    /// Collision cells.
    pub collision_cells: u64,
    /// Collision cells with a changed box (the ones tested).
    pub cells_tested: u64,
    /// Radix passes (the binning into buckets is the first).
    pub radix_passes: u64,
    /// Passes skipped: every key had the same digit.
    pub radix_passes_skipped: u64,
    /// Candidate pairs tested.
    pub candidate_pairs: u64,
    /// Overlapping pairs found.
    pub pairs_found: u64,
    /// Levels with boxes.
    pub levels: u64,
}

impl From<&GridFigures> for GridFiguresJson {
    fn from(g: &GridFigures) -> Self {
        Self {
            cell_ids: g.cell_ids,
            home_cells: g.home_cells,
            phantom_cells: g.phantom_cells,
            collision_cells: g.collision_cells,
            cells_tested: g.collision_cells_tested,
            radix_passes: g.radix_passes,
            radix_passes_skipped: g.radix_passes_skipped,
            candidate_pairs: g.candidate_pairs_tested,
            pairs_found: g.pairs_found,
            levels: g.levels,
        }
    }
}

/// The walkthrough of the last frame: `GET /api/sessions/{id}/walkthrough`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WalkthroughJson {
    /// The frame.
    pub frame: u64,
    /// The fine cell size.
    pub cell_size: f64,
    /// The cell size of every level with boxes, finest first.
    pub level_cell_sizes: Vec<f64>,
    /// Stage 1: cell ids written, over every level (from the dump).
    pub cell_ids: u64,
    /// Home cells among them.
    pub home_cells: u64,
    /// Phantom cells among them.
    pub phantom_cells: u64,
    /// The first [`SHOWN`] cell ids of level 0, in object order (as written).
    pub written: Vec<EntryJson>,
    /// Stage 2: bits per radix digit.
    pub radix_bits: u32,
    /// Bits of the keys sorted here.
    pub key_bits: u32,
    /// The list after each pass.
    pub passes: Vec<PassJson>,
    /// Stage 3: collision cells, over every level.
    pub collision_cells: u64,
    /// The first [`SHOWN`] of them, in key order.
    pub cells: Vec<CellJson>,
    /// Stage 4: the eight parity passes, one per cell type.
    pub parity: Vec<ParityJson>,
    /// The schedule the grid ran: `parity` or `all`.
    pub schedule: String,
    /// The grid's own figures for the frame.
    pub grid: GridFiguresJson,
}

/// A cell entry of a level, with what the stages need to know of its object.
#[derive(Clone, Copy, Debug)]
struct Entry {
    object: u32,
    cell: [i32; 3],
    home: bool,
    resident: bool,
    first_cell: [i32; 3],
}

/// The cell type (parity class) of cell `c`, as the chapter numbers them.
fn cell_type(c: [i32; 3]) -> u32 {
    (c[0] & 1) as u32 | ((c[1] & 1) as u32) << 1 | ((c[2] & 1) as u32) << 2
}

/// Every cell entry of a level, in the dump's order (residents, then visitors).
fn entries(level: &GridLevelDump, object_of: &HashMap<ProxyId, u32>) -> Vec<Entry> {
    let mut out = Vec::new();
    for b in &level.boxes {
        let Some(&object) = object_of.get(&b.id) else {
            continue;
        };
        for cell in cells_of(b.first_cell, b.last_cell) {
            out.push(Entry {
                object,
                cell,
                home: b.resident && cell == b.home_cell,
                resident: b.resident,
                first_cell: b.first_cell,
            });
        }
    }
    out
}

/// The scene index of each proxy of the stepper.
fn objects(stepper: &Stepper) -> HashMap<ProxyId, u32> {
    stepper
        .ids()
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect()
}

/// The collision cells among a level's entries, each with its entries: cells holding two
/// boxes or more, one of them living on the level (a cell of visitors only tests nothing).
fn collision_cells(entries: &[Entry]) -> Vec<([i32; 3], Vec<&Entry>)> {
    let mut by_cell: HashMap<[i32; 3], Vec<&Entry>> = HashMap::new();
    for e in entries {
        by_cell.entry(e.cell).or_default().push(e);
    }
    by_cell
        .into_iter()
        .filter(|(_, es)| es.len() >= 2 && es.iter().any(|e| e.resident))
        .collect()
}

/// The grid's fine cell size and the collision cells of its finest level (`None` unless the
/// stepper runs the grid).
pub(super) fn fine_collision_cells(stepper: &Stepper) -> Option<(f64, Vec<[i32; 3]>)> {
    let level = stepper.grid()?.dump().into_iter().next()?;
    let entries = entries(&level, &objects(stepper));
    let cells = collision_cells(&entries)
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    Some((level.cell_size, cells))
}

/// The chapter's keys for a level's entries: the cell type above `3 × axis_bits` bits of
/// coordinates (relative to the lowest cell, wrapped beyond [`MAX_AXIS_BITS`]).
struct Keys {
    lo: [i32; 3],
    axis_bits: u32,
}

impl Keys {
    fn new(entries: &[Entry]) -> Self {
        let mut lo = [i32::MAX; 3];
        let mut hi = [i32::MIN; 3];
        for e in entries {
            for a in 0..3 {
                lo[a] = lo[a].min(e.cell[a]);
                hi[a] = hi[a].max(e.cell[a]);
            }
        }
        let range = (0..3)
            .map(|a| (i64::from(hi[a]) - i64::from(lo[a])).max(0) as u64)
            .max()
            .unwrap_or(0);
        let axis_bits = (u64::BITS - range.leading_zeros()).clamp(1, MAX_AXIS_BITS);
        Self { lo, axis_bits }
    }

    fn bits(&self) -> u32 {
        3 * self.axis_bits + 3
    }

    fn key(&self, c: [i32; 3]) -> u32 {
        let mask = (1u32 << self.axis_bits) - 1;
        let mut key = cell_type(c) << (3 * self.axis_bits);
        for (a, (&v, &lo)) in c.iter().zip(&self.lo).enumerate() {
            let d = v.wrapping_sub(lo) as u32 & mask;
            key |= d << (a as u32 * self.axis_bits);
        }
        key
    }
}

/// The walkthrough of the stepper's last frame; `None` unless its strategy is the grid.
#[must_use]
pub fn walkthrough(stepper: &Stepper) -> Option<WalkthroughJson> {
    let grid = stepper.grid()?;
    let object_of = objects(stepper);
    let levels = grid.dump();
    let scene = stepper.scene();
    let figures = match grid.stats().figures {
        Figures::Grid(g) => g,
        _ => GridFigures::default(),
    };
    let settings = grid.settings();

    // Stage 1: the cell ids written.
    let per_level: Vec<Vec<Entry>> = levels.iter().map(|l| entries(l, &object_of)).collect();
    let cell_ids = per_level.iter().map(Vec::len).sum::<usize>() as u64;
    let home_cells = per_level.iter().flatten().filter(|e| e.home).count() as u64;
    let fine: &[Entry] = per_level.first().map_or(&[], Vec::as_slice);
    let keys = Keys::new(fine);
    let json = |e: &Entry| EntryJson {
        object: e.object,
        cell: e.cell,
        home: e.home,
        key: keys.key(e.cell),
    };
    let written: Vec<EntryJson> = fine.iter().take(SHOWN).map(json).collect();

    // Stage 2: the sort, one digit per pass, least significant first.
    let mut list: Vec<EntryJson> = fine.iter().map(json).collect();
    let digit = settings.radix_bits;
    let mut passes = Vec::new();
    let mut from = 0;
    while from < keys.bits() {
        let to = (from + digit).min(keys.bits());
        let of = |k: u32| (k >> from) & ((1u32 << (to - from)) - 1);
        let first = list.first().map_or(0, |e| of(e.key));
        let skipped = list.iter().all(|e| of(e.key) == first);
        if !skipped {
            // A stable sort by one digit is one pass of the radix sort.
            list.sort_by_key(|e| of(e.key));
        }
        passes.push(PassJson {
            bits: [from, to],
            skipped,
            entries: list.iter().take(SHOWN).copied().collect(),
        });
        from = to;
    }

    // Stage 3: the collision cells of every level, and stage 4: their parity passes.
    let mut cells = Vec::new();
    let mut parity: Vec<ParityJson> = (0..8)
        .map(|t| ParityJson {
            cell_type: t,
            ..ParityJson::default()
        })
        .collect();
    let mut cell_count = 0u64;
    for (dump, entries) in levels.iter().zip(&per_level) {
        let mut level_cells = collision_cells(entries);
        level_cells.sort_by_key(|(c, _)| (keys.key(*c), *c));
        for (cell, es) in level_cells {
            cell_count += 1;
            let t = cell_type(cell);
            let mut candidates = 0;
            let mut found = 0;
            for (i, a) in es.iter().enumerate() {
                for b in &es[i + 1..] {
                    // The grid tests each pair once: in the cell holding the lower corner of
                    // the two boxes' cells, and only with one of the two living here.
                    let corner: [i32; 3] =
                        std::array::from_fn(|k| a.first_cell[k].max(b.first_cell[k]));
                    let both_fixed = [a.object, b.object]
                        .iter()
                        .all(|&o| scene.desc(o as usize).mobility == Mobility::Fixed);
                    if corner != cell || !(a.resident || b.resident) || both_fixed {
                        continue;
                    }
                    candidates += 1;
                    let overlap = scene
                        .aabb(a.object as usize)
                        .overlaps(&scene.aabb(b.object as usize));
                    found += u64::from(overlap);
                }
            }
            let p = &mut parity[t as usize];
            p.cells += 1;
            p.candidate_pairs += candidates;
            p.pairs += found;
            if cells.len() < SHOWN {
                let mut objects: Vec<u32> = es.iter().map(|e| e.object).collect();
                objects.dedup();
                cells.push(CellJson {
                    level: dump.level,
                    cell,
                    cell_type: t,
                    objects,
                    candidate_pairs: candidates,
                });
            }
        }
    }

    Some(WalkthroughJson {
        frame: stepper.frame(),
        cell_size: grid.cell_size().unwrap_or(0.0),
        level_cell_sizes: levels.iter().map(|l| l.cell_size).collect(),
        cell_ids,
        home_cells,
        phantom_cells: cell_ids - home_cells,
        written,
        radix_bits: digit,
        key_bits: keys.bits(),
        passes,
        collision_cells: cell_count,
        cells,
        parity,
        schedule: settings.schedule.cli_name().to_string(),
        grid: GridFiguresJson::from(&figures),
    })
}
