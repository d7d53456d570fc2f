//! The lab behind `bplab`: scenes, verified runs and reports for the `broadphase` crate.

pub mod alloc;
pub mod bench;
pub mod lab;
pub mod output;
pub mod progress;
pub mod regions;
pub mod run;
pub mod scene_file;
pub mod scenes;
pub mod tree;
