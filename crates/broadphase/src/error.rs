//! The one error type of the library.

use crate::{Aabb, ProxyId, RegionId};

/// Everything a broad phase can refuse. Each variant names the value at fault.
///
/// A call that returns an error has changed nothing: the broad phase is exactly as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A coordinate of the box is NaN or infinite.
    #[error("box {aabb:?} has a non-finite coordinate")]
    NonFiniteAabb {
        /// The box given.
        aabb: Aabb,
    },
    /// The box's `min` is greater than its `max` on `axis`.
    #[error("box {aabb:?} has min > max on axis {axis}")]
    InvertedAabb {
        /// The box given.
        aabb: Aabb,
        /// The first axis (0 = x, 1 = y, 2 = z) where `min > max`.
        axis: usize,
    },
    /// The id was issued by this broad phase but its proxy has since been removed.
    #[error("proxy {id} was removed (stale id)")]
    StaleProxy {
        /// The id given.
        id: ProxyId,
    },
    /// The id names a slot this broad phase never issued: it comes from another broad phase or
    /// was made up.
    #[error("proxy {id} was never issued by this broad phase")]
    UnknownProxy {
        /// The id given.
        id: ProxyId,
    },
    /// Inserting would exceed the number of live proxies a broad phase can hold.
    #[error("cannot hold more than {limit} proxies")]
    CapacityExceeded {
        /// The limit ([`crate::MAX_PROXIES`] unless [`crate::Config`] sets a lower one).
        limit: usize,
    },
    /// A layer outside `0..64`.
    #[error("layer {layer} is out of range (layers are 0..64)")]
    InvalidLayer {
        /// The layer given.
        layer: u8,
    },
    /// An origin shift with a NaN or infinite component.
    #[error("origin shift {shift:?} is not finite")]
    NonFiniteShift {
        /// The shift given.
        shift: [f32; 3],
    },
    /// Shifting the origin would push a proxy's box out of the finite range of `f32`.
    #[error("origin shift {shift:?} would make the box of proxy {id} infinite")]
    ShiftOverflow {
        /// The shift given.
        shift: [f32; 3],
        /// The first proxy whose box would overflow.
        id: ProxyId,
    },
    /// Adding a region would exceed the most regions a broad phase holds.
    #[error("cannot hold more than {limit} regions")]
    TooManyRegions {
        /// The limit ([`crate::MAX_REGIONS`]).
        limit: usize,
    },
    /// The region id is not a live region of this broad phase: removed already, or never
    /// issued by it.
    #[error("region {id} is not a live region of this broad phase")]
    UnknownRegion {
        /// The id given.
        id: RegionId,
    },
    /// A setting or query argument outside its valid range.
    #[error("{name} = {value} is invalid: expected {expected}")]
    InvalidParameter {
        /// What the value is for.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The valid range, in words.
        expected: &'static str,
    },
    /// The engine's device failed during an update (a GPU device lost, out of memory). The
    /// update changed nothing: the store keeps every change since the last update, and the
    /// next update (or a fresh engine, `Driver::replace_engine`) brings them in.
    #[error("the engine's device failed: {message}")]
    Device {
        /// What the device reported.
        message: String,
    },
}

impl Error {
    /// The error of an insertion into a broad phase whose world bounds are not a valid box:
    /// the value given is the largest coordinate magnitude, NaN included.
    pub(crate) fn invalid_world_bounds(world: &Aabb) -> Self {
        let worst = world.min.iter().chain(&world.max).fold(0.0f32, |m, v| {
            if v.is_nan() {
                f32::NAN
            } else {
                m.max(v.abs())
            }
        });
        Error::InvalidParameter {
            name: "Config::world_bounds",
            value: f64::from(worst),
            expected: "a finite box with min <= max on every axis",
        }
    }

    /// The error of an origin shift that would carry the world bounds past the float range.
    pub(crate) fn world_shift_overflow(shift: [f32; 3]) -> Self {
        Error::InvalidParameter {
            name: "origin shift (the world bounds would leave the float range)",
            value: f64::from(shift.iter().fold(0.0f32, |m, v| m.max(v.abs()))),
            expected: "a shift that keeps the world bounds finite",
        }
    }
}
