//! The knobs of Abp's automatic column layout.

use crate::cells::grid::GridParams;
use crate::Error;

/// The sweep length, in median box extents, at which a column holds `boxes_per_column`.
const SWEEP_EXTENTS: f64 = 90.0;

/// How [`Abp`](crate::Abp) cuts the scene into columns.
///
/// ```
/// use broadphase::{Abp, AbpSettings, Config};
/// let mut settings = AbpSettings::default();
/// settings.boxes_per_column = 256;
/// let abp = Abp::with_settings(Config::default(), settings)?;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AbpSettings {
    /// Boxes per column the layout aims for where a column's sweep is 90 median box extents
    /// long (100,000 boxes of the lab's `uniform` scene): small enough that sweeps are short,
    /// large enough that per-column overhead and boxes straddling borders stay few. A
    /// longer sweep gets as many times more boxes a column (a shorter, fewer), within a
    /// factor of 4, so that a moving box's sweep meets about as many boxes in any scene.
    /// Default 1024.
    pub boxes_per_column: usize,
    /// Columns are at least this many median box extents wide, which bounds how many columns
    /// a typical box straddles. Default 2.5.
    pub min_column_extents: f32,
    /// Below this many proxies one column (a plain sweep) is used. Default 512.
    pub min_proxies_for_columns: usize,
}

impl Default for AbpSettings {
    fn default() -> Self {
        Self {
            boxes_per_column: 1024,
            min_column_extents: 2.5,
            min_proxies_for_columns: 512,
        }
    }
}

impl AbpSettings {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero boxes per column or a negative or non-finite
    /// extent factor.
    pub fn validate(&self) -> Result<(), Error> {
        if self.boxes_per_column == 0 {
            return Err(Error::InvalidParameter {
                name: "boxes_per_column",
                value: 0.0,
                expected: "at least 1",
            });
        }
        if !(self.min_column_extents.is_finite() && self.min_column_extents >= 0.0) {
            return Err(Error::InvalidParameter {
                name: "min_column_extents",
                value: f64::from(self.min_column_extents),
                expected: "a finite value >= 0",
            });
        }
        Ok(())
    }

    /// The grid sizing these settings stand for.
    pub(crate) fn grid_params(&self) -> GridParams {
        GridParams {
            boxes_per_cell: self.boxes_per_column,
            min_cell_extents: self.min_column_extents,
            min_boxes_for_cells: self.min_proxies_for_columns,
            sweep_extents: SWEEP_EXTENTS,
            max_sweep_scale: 4.0,
        }
    }
}
