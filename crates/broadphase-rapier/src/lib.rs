//! rapier3d 0.27 running on this workspace's broad phases.
//!
//! rapier3d 0.27.0 is the last rapier whose `PhysicsPipeline::step` takes a
//! `&mut dyn rapier3d::geometry::BroadPhase`, so a real physics engine can run its own scenes
//! on [`broadphase`]'s algorithms. This crate holds:
//!
//! - [`BroadPhaseAdapter`]: rapier's `BroadPhase` trait on any [`broadphase::BroadPhase`]
//!   (Abp, Sap, Mbp, QuadTree, Grid, BruteForce). In [`Mode::BitExact`] it stores the very
//!   boxes rapier's default `BroadPhaseBvh` stores and reports the very pairs it reports, so a
//!   simulation stepped on it matches one stepped on rapier's own broad phase bit for bit
//!   (given [`Canonical`] around rapier's, see below). [`Mode::Filtered`] leaves out pairs
//!   rapier's narrow phase would discard anyway.
//! - [`Canonical`]: wraps any rapier broad phase and hands its events over in one canonical
//!   order. The order of pair events decides the order of the narrow phase's contact graph and
//!   therefore of the solver's constraints, so two broad phases that find the same pairs give
//!   bit-identical simulations only if they report them in the same order.
//! - [`Lockstep`]: runs two rapier broad phases on the same inputs every step and names the
//!   first step and pair where their events differ.
//! - [`scenes`]: the client's workloads (a pyramid, balls in a box, a heightfield, a trimesh,
//!   jointed chains, churn), each a function that builds a [`scenes::World`].

mod adapter;
mod canonical;
mod lockstep;
pub mod scenes;

pub use adapter::{AdapterError, BroadPhaseAdapter, Mode};
pub use canonical::{canonical_order, Canonical};
pub use lockstep::{Divergence, EventKind, Lockstep};
