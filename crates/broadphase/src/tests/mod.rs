//! The suites that run every algorithm through the differential suite (`crate::testing`).
//!
//! They are unit tests of the crate, not integration tests, so that they build with `cfg(test)`:
//! under it the library's thresholds for parallel and bulk paths are tiny (see `crate::par`,
//! `store/listing.rs`, `sap/pair_table.rs`, `grid/found.rs`, `cells/`), and the suite's small
//! scenes take every path. Builds for users never see those thresholds; the `testing` feature
//! only adds the suite. They use the crate as a user would, through `broadphase::`.

// The suites build settings as users must: `#[non_exhaustive]` outside the crate, so from the
// defaults, field by field.
#![allow(clippy::field_reassign_with_default)]

#[macro_use]
mod common;
mod auto;
mod differential;
mod engine_swap;
mod flat;
mod physics_step;
