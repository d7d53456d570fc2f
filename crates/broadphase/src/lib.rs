//! Broad-phase collision detection: from the boxes of many objects that are added, moved and
//! removed every frame, find which pairs overlap.
//!
//! Every algorithm implements the [`BroadPhase`] trait and keeps one contract: it reports
//! exactly the pairs that [`BruteForce`] reports (boxes are closed, so touching boxes overlap),
//! as a persistent set plus the pairs created and deleted by each [`update`](BroadPhase::update),
//! each list sorted; the same calls give the same ids and events on any number of threads; and
//! bad input returns an [`Error`] that changes nothing, never a panic.
//!
//! ```
//! use broadphase::{Aabb, Algorithm, BroadPhase, Config, Pair, ProxyDesc};
//!
//! let mut bp = broadphase::new(Algorithm::Auto, Config::default());
//! let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
//! let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::fixed())?;
//! let events = bp.update()?;
//! assert_eq!(events.created(), &[Pair::new(a, b)]);
//!
//! bp.set_aabb(a, Aabb::new([5.0; 3], [6.0; 3]))?; // move `a` away
//! let events = bp.update()?;
//! assert_eq!(events.deleted(), &[Pair::new(a, b)]);
//! assert!(bp.pairs().is_empty());
//! # Ok::<(), broadphase::Error>(())
//! ```
//!
//! # Choosing an algorithm
//!
//! | algorithm | use it when |
//! |---|---|
//! | [`Auto`] | the default: it measures the scene it holds and runs on [`Abp`], [`Sap`] or [`QuadTree`], switching as the scene changes; `stats()` says which and why |
//! | [`Abp`] | many objects move, objects come and go, no set-up |
//! | [`Grid`] | many pairs per object in a large scene (big boxes among small ones: the bench's `sizes` scene from 100,000 boxes, where it is the fastest of ours and [`Abp`] takes about 1.8× its time); experiments with GPU Gems 3's uniform grid (cell size, radix width, schedules) |
//! | [`Sap`] | most objects rest (sleeping bodies, level geometry) and few come and go |
//! | [`Mbp`] | many objects move in a world you can bound: regions you choose (PhysX's grid over world bounds, Unreal's set-up) or derived from the boxes; objects outside every region are reported out of bounds |
//! | [`QuadTree`] | large worlds queried often (rays, boxes, nearest), levels loaded in batches, many fixed proxies; other threads query a [`Snapshot`] while updates run, and batches are prepared on any thread ([`PreparedBatch`]) |
//! | [`BruteForce`] | a few hundred objects at most, or as a reference in tests |
//!
//! # Features
//!
//! - `parallel` (default): spreads work over rayon's threads; results are identical without it.
//! - `testing`: the module `broadphase::testing`, the differential suite every algorithm passes,
//!   for implementors of [`BroadPhase`].
//! - `glam`, `mint`, `nalgebra`: conversions from and to those crates' types. [`Aabb`] from and
//!   to a `(min, max)` pair of points (`Aabb::from((min, max))`, `let (min, max) =
//!   aabb.into()`), [`Ray`] from and to an `(origin, dir)` pair, and [`Obb`] from a centre,
//!   half extents and a rotation (`Obb::from_glam`, `Obb::from_mint`, `Obb::from_nalgebra`,
//!   `Obb::from_isometry`). Points passed alone take `[f32; 3]`, which each of these crates
//!   converts to already: `p.into()`, or glam's `p.to_array()`. The features take glam 0.34
//!   and nalgebra 0.35; `mint` reaches other versions of those, and any crate that converts to
//!   mint's types.
//!
//! # 2D worlds
//!
//! A 2D world is the plane `z = 0`: give every box `min[2] == max[2] == 0.0`. Flat boxes are
//! ordinary boxes (a box with `min == max` on an axis is valid, and boxes are closed, so two
//! flat boxes overlap exactly when their rectangles do), and every algorithm runs on them
//! unchanged; the test suite checks each one against [`BruteForce`] on random 2D scenes.
//! Queries work in the plane: a point or ray with `z = 0` (a ray's direction too), a query
//! box flat or not.
//!
//! ```
//! use broadphase::{Aabb, Algorithm, BroadPhase, Config, LayerMask, Pair, ProxyDesc, Ray};
//!
//! // A rectangle from (x0, y0) to (x1, y1), as a box in the plane z = 0.
//! let rect = |x0: f32, y0: f32, x1: f32, y1: f32| Aabb::new([x0, y0, 0.0], [x1, y1, 0.0]);
//! let mut bp = broadphase::new(Algorithm::Sap, Config::default());
//! let a = bp.insert(rect(0.0, 0.0, 2.0, 1.0), ProxyDesc::dynamic())?;
//! let b = bp.insert(rect(2.0, 0.5, 3.0, 3.0), ProxyDesc::dynamic())?; // touches `a`'s edge
//! let c = bp.insert(rect(5.0, 0.0, 6.0, 1.0), ProxyDesc::fixed())?;
//! assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
//!
//! let ray = Ray::new([-1.0, 0.5, 0.0], [1.0, 0.0, 0.0]); // along the x axis, in the plane
//! let hits = bp.ray_cast_vec(&ray, f32::INFINITY, LayerMask::ALL)?;
//! assert_eq!(hits.iter().map(|h| (h.id, h.t)).collect::<Vec<_>>(), [(a, 1.0), (b, 3.0), (c, 6.0)]);
//! # Ok::<(), broadphase::Error>(())
//! ```

#![warn(missing_docs)]

mod aabb;
mod abp;
mod auto;
mod broad_phase;
mod brute;
mod cells;
mod desc;
mod driver;
mod encode;
pub mod engine;
mod error;
mod events;
mod fat;
mod filter;
mod gallop;
mod grid;
mod id;
mod interop;
mod mbp;
mod pairs;
mod par;
mod prefetch;
mod prune;
mod quadtree;
mod query;
mod radix;
mod sap;
mod simd;
mod slack;
mod split_mix;
mod stats;
mod store;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
#[cfg(test)]
mod tests;

// The suites in `tests/` name the crate as its users do.
#[cfg(test)]
extern crate self as broadphase;

pub use aabb::Aabb;
pub use abp::{Abp, AbpSettings};
pub use auto::{Auto, AutoFigures, AutoSettings, Reason, SceneMeasures};
pub use broad_phase::{new, Algorithm, BroadPhase, Config, UnknownAlgorithm, MAX_PROXIES};
pub use brute::BruteForce;
pub use desc::{Group, Layer, LayerMask, Mobility, ProxyDesc};
pub use error::Error;
pub use events::PairEvents;
pub use fat::FatBoxes;
pub use grid::{
    CellBoxDump, Grid, GridLevelDump, GridSettings, Schedule, SortAndSweep, SweepFigures,
};
pub use id::{Pair, ProxyId};
pub use mbp::{
    regions_from_bounds, Mbp, MbpSettings, MbpTuning, RegionId, RegionInfo, MAX_REGIONS,
};
pub use quadtree::{
    ChildDump, NodeDump, PreparedBatch, QuadTree, QuadTreeSettings, QueryStats, Snapshot, TreeDump,
};
pub use query::{CastHit, Obb, Ray, RayHit};
pub use sap::{Sap, SapSettings};
pub use stats::{AbpFigures, Figures, GridFigures, MbpFigures, QuadTreeFigures, SapFigures, Stats};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
