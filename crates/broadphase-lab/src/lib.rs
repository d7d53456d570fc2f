//! The lab behind `bplab`: scenes, verified runs and reports for the `broadphase` crate.

pub mod alloc;
pub mod bench;
pub mod cells;
pub mod cli;
pub mod concurrency;
pub mod gpu;
pub mod lab;
pub mod output;
pub mod phases;
pub mod progress;
pub mod regions;
pub mod run;
pub mod scene_file;
pub mod scenes;
#[cfg(feature = "serve")]
pub mod serve;
pub mod tree;
pub mod variation;

// The workspace README's examples are compiled and run with the lab's doctests (the library's
// own README is the crate's).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
