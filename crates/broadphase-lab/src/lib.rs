//! The lab behind `bplab`: scenes, verified runs and reports for the `broadphase` crate.

pub mod regions;
pub mod run;
pub mod scenes;
