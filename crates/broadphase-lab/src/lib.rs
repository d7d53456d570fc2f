//! The lab behind `bplab`: scenes, verified runs and reports for the `broadphase` crate.

pub mod cells;
pub mod lab;
pub mod output;
pub mod regions;
pub mod run;
pub mod scene_file;
pub mod scenes;
pub mod tree;
