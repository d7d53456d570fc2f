//! `GpuGrid`: the uniform grid of GPU Gems 3, chapter 32 — the algorithm of `broadphase`'s
//! CPU [`Grid`](broadphase::Grid) — as wgpu compute shaders, behind the same
//! [`BroadPhase`](broadphase::BroadPhase) trait and contract: exactly the pairs
//! [`BruteForce`](broadphase::BruteForce) reports, as sorted created and deleted events.
//!
//! Each update with a change runs the whole grid on the device (one without leaves it alone):
//!
//! 1. the changed slots are uploaded as compact (slot, box) records and scattered into the
//!    boxes the device keeps between updates (`upload.wgsl`);
//! 2. each box gets its level, the finest where it covers at most two cells per axis (levels
//!    are four times coarser each), writes its home and phantom cell ids with control bits on
//!    its level and on every coarser level holding boxes (`cells.wgsl`, with an exclusive
//!    scan of the counts, `scan.wgsl`);
//! 3. a stable LSD radix sort orders the cell ids (a count, a scan and a scatter per pass;
//!    the digit width is [`GpuGridSettings::radix_bits`], `radix.wgsl`);
//! 4. collision cells (runs of two ids or more) are found and their entries tested, each
//!    pair in exactly one cell: the one holding the lower corner of the boxes' overlap, on the
//!    coarser box's level (the rule of the CPU grid); overlapping, allowed pairs are appended
//!    to a buffer through an atomic counter (`collide.wgsl`). When the counter passes the
//!    buffer's capacity, the buffer grows and the pass runs again: no pair is ever dropped.
//!
//! The pairs come back to the CPU, which adds the pairs of boxes that no level holds (tested
//! against every box there, so that any size stays exact), sorts the keys and diffs them
//! against the last update's: the created and deleted pairs.
//!
//! ```no_run
//! use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc};
//!
//! let mut bp = broadphase_gpu::new(Config::default())?;
//! let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
//! let b = bp.insert(Aabb::new([0.5; 3], [1.5; 3]), ProxyDesc::dynamic())?;
//! assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod buffers;
mod context;
mod engine;
mod error;
mod kernels;

use std::sync::Arc;

use broadphase::engine::Driver;
use broadphase::Config;

pub use context::{adapter_summary, AdapterSummary, GpuContext};
pub use engine::{GpuFigures, GpuGridEngine};
pub use error::GpuError;

/// The grid on the device: a [`Driver`] around a [`GpuGridEngine`], made by [`new`],
/// [`with_settings`] or [`with_context`] (a type of `broadphase`, so it has no constructor of
/// its own here).
///
/// Updates run on the device; queries run on the CPU from the boxes the driver keeps (the
/// engine offers every slot as a candidate, and the driver tests each exactly). An update
/// that fails on the device returns [`broadphase::Error::Device`] and changes nothing; the
/// next update brings every change in, on a fresh device if the old one was lost.
///
/// ```no_run
/// use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc};
/// use broadphase_gpu::GpuError;
///
/// let mut bp = match broadphase_gpu::new(Config::default()) {
///     Ok(bp) => bp,
///     Err(GpuError::NoAdapter) => return Ok(()), // no GPU here: use broadphase::Grid
///     Err(e) => return Err(e.into()),
/// };
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([0.5; 3], [1.5; 3]), ProxyDesc::dynamic())?;
/// let planet = bp.insert(Aabb::new([-50.0; 3], [-10.0; 3]), ProxyDesc::fixed())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// bp.set_aabb(b, Aabb::new([-11.0; 3], [-9.0; 3]))?; // into the planet, out of `a`
/// let events = bp.update()?;
/// assert_eq!(events.created(), &[Pair::new(b, planet)]);
/// assert_eq!(events.deleted(), &[Pair::new(a, b)]);
/// println!("{}", bp.engine().context().adapter());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type GpuGrid = Driver<GpuGridEngine>;

/// A grid on a fresh device with the default [`GpuGridSettings`].
///
/// # Errors
/// As [`GpuContext::new`]: [`GpuError::NoAdapter`] when there is no adapter.
pub fn new(config: Config) -> Result<GpuGrid, GpuError> {
    with_settings(config, GpuGridSettings::default())
}

/// A grid on a fresh device with chosen settings.
///
/// # Errors
/// [`GpuError::Settings`] for invalid settings, then as [`GpuContext::new`].
pub fn with_settings(config: Config, settings: GpuGridSettings) -> Result<GpuGrid, GpuError> {
    settings.validate()?;
    with_context(config, settings, GpuContext::new()?)
}

/// A grid on an open device, shared with other grids: the kernels are compiled once per
/// context.
///
/// # Errors
/// [`GpuError::Settings`] for invalid settings.
pub fn with_context(
    config: Config,
    settings: GpuGridSettings,
    ctx: Arc<GpuContext>,
) -> Result<GpuGrid, GpuError> {
    settings.validate()?;
    Ok(Driver::with_engine(
        &config,
        GpuGridEngine::new(settings, ctx),
    ))
}

/// The settings of a [`GpuGrid`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GpuGridSettings {
    /// The fine cell size; `None` (the default) chooses it from the boxes at the first update
    /// and again when the number of proxies changes a lot. Any size gives the same pairs.
    pub cell_size: Option<f64>,
    /// Bits of the cell id each radix pass sorts, 1 to 8. The default, 4, takes more passes
    /// than 8 but each is much cheaper (a pass's work grows with `2^radix_bits` per block):
    /// 14 ms against 25 ms per frame of 10,000 boxes on a software Vulkan driver.
    pub radix_bits: u32,
    /// Pairs the pair buffer holds at first (default 4096); it grows when a frame finds more.
    pub pair_capacity: usize,
}

impl Default for GpuGridSettings {
    fn default() -> Self {
        Self {
            cell_size: None,
            radix_bits: 4,
            pair_capacity: 4096,
        }
    }
}

impl GpuGridSettings {
    /// The same settings with a fixed fine cell size.
    #[must_use]
    pub fn with_cell_size(mut self, cell: f64) -> Self {
        self.cell_size = Some(cell);
        self
    }

    /// The same settings with another radix digit width.
    #[must_use]
    pub fn with_radix_bits(mut self, bits: u32) -> Self {
        self.radix_bits = bits;
        self
    }

    /// The same settings with another first capacity of the pair buffer.
    #[must_use]
    pub fn with_pair_capacity(mut self, pairs: usize) -> Self {
        self.pair_capacity = pairs;
        self
    }

    /// Checks every setting.
    ///
    /// # Errors
    /// [`broadphase::Error::InvalidParameter`] naming the first invalid one.
    pub fn validate(&self) -> Result<(), broadphase::Error> {
        if let Some(c) = self.cell_size {
            if !(c.is_finite() && (1e-30..=1e30).contains(&c)) {
                return Err(broadphase::Error::InvalidParameter {
                    name: "GpuGridSettings::cell_size",
                    value: c,
                    expected: "a finite size in 1e-30..=1e30",
                });
            }
        }
        if !(1..=8).contains(&self.radix_bits) {
            return Err(broadphase::Error::InvalidParameter {
                name: "GpuGridSettings::radix_bits",
                value: f64::from(self.radix_bits),
                expected: "1 to 8",
            });
        }
        if self.pair_capacity == 0 {
            return Err(broadphase::Error::InvalidParameter {
                name: "GpuGridSettings::pair_capacity",
                value: 0.0,
                expected: "at least 1",
            });
        }
        Ok(())
    }
}
