//! What each step of a bucket (build, test, diff) reads: the store, the level's grid, and how
//! the level sorts and records its pairs.

use crate::store::Store;

use super::layout::LevelGrid;

/// What the per-bucket steps read.
pub(crate) struct Context<'a> {
    pub store: &'a Store,
    pub grid: &'a LevelGrid,
    pub radix_bits: u32,
    /// The level's buckets are built afresh every update
    /// ([`Bucket::build`](super::bucket::Bucket::build)), so their records are in slot order,
    /// residents then visitors: the pairs found are recorded by their records' indices, in a bit
    /// matrix or as record keys (see [`super::found`]).
    pub by_record: bool,
}
