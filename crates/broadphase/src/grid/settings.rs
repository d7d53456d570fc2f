//! The knobs of [`Grid`](crate::Grid).

use crate::radix::RadixSorter;
use crate::Error;

/// In which order the collision cells are processed (GPU Gems 3, chapter 32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// Eight passes, one per parity class of cells (the 2×2×2 cell types): the cells of one pass
    /// are never neighbours, so a solver updating the objects of a cell could run all the cells
    /// of a pass at once without two of them writing to one object.
    Parity,
    /// Every collision cell at once: enough for detection alone, which writes nothing (the
    /// chapter's own remark). The default: one parallel pass over the buckets instead of eight
    /// balances two threads better (uniform 100k, `bplab lab --threads 2 --frames 60`: 9.8 ms
    /// against 10.2–10.3, and 2–3% faster on one thread).
    #[default]
    All,
}

impl Schedule {
    /// The name used on the command line: `parity` or `all`.
    #[must_use]
    pub fn cli_name(self) -> &'static str {
        match self {
            Schedule::Parity => "parity",
            Schedule::All => "all",
        }
    }
}

/// How [`Grid`](crate::Grid) lays out its cells and sorts them.
///
/// ```
/// use broadphase::{Config, Grid, GridSettings, Schedule};
/// let mut settings = GridSettings::default();
/// settings.cell_size = Some(2.0);
/// settings.radix_bits = 4;
/// settings.schedule = Schedule::All;
/// let grid = Grid::with_settings(Config::default(), settings)?;
/// settings.cell_size = Some(-1.0);
/// assert!(Grid::with_settings(Config::default(), settings).is_err());
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct GridSettings {
    /// The size of the fine cells. `None` (the default) chooses it from the boxes:
    /// [`cell_factor`](GridSettings::cell_factor) times the median of their largest extents.
    /// The chapter's rule is a cell at least as large as the largest box; boxes larger than the
    /// cell go to coarser levels either way, so a few huge boxes never force huge cells.
    pub cell_size: Option<f32>,
    /// The automatic cell size over the median box extent. Default 1.5: boxes of the median
    /// size cover 1.7 cells per axis on average, and a collision cell holds few boxes.
    pub cell_factor: f32,
    /// Bits per digit of the radix sort of cell ids, 4 to 16 (default 8). Wider digits mean
    /// fewer passes but larger counters.
    pub radix_bits: u32,
    /// The order in which collision cells are processed (default [`Schedule::All`]); the pairs
    /// are the same either way.
    pub schedule: Schedule,
    /// Whether a box that covers the same fine cells as at the last update keeps its sorted
    /// entries (default `true`): only the boxes that changed cells are binned and sorted, and
    /// merged into the kept entries. `false` bins and sorts every box every update, as the
    /// chapter does (the lab's way of showing it). The pairs are the same either way.
    pub keep_cells: bool,
}

impl Default for GridSettings {
    fn default() -> Self {
        Self {
            cell_size: None,
            cell_factor: 1.5,
            radix_bits: 8,
            schedule: Schedule::All,
            keep_cells: true,
        }
    }
}

impl GridSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a cell size or factor that is not finite and positive,
    /// or a digit width outside `4..=16`.
    pub fn validate(&self) -> Result<(), Error> {
        if let Some(c) = self.cell_size {
            if !(c.is_finite() && c > 0.0) {
                return Err(Error::InvalidParameter {
                    name: "grid cell size",
                    value: f64::from(c),
                    expected: "a finite value > 0",
                });
            }
        }
        if !(self.cell_factor.is_finite() && self.cell_factor > 0.0) {
            return Err(Error::InvalidParameter {
                name: "grid cell factor",
                value: f64::from(self.cell_factor),
                expected: "a finite value > 0",
            });
        }
        RadixSorter::new(self.radix_bits)?;
        Ok(())
    }
}
