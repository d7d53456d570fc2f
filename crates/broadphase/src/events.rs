//! What changed between two updates.

use crate::Pair;

/// The pairs created and deleted by one [`update`](crate::BroadPhase::update), each list sorted
/// by `(a, b)`.
///
/// A pair that appears and disappears again between two updates is in neither list. Removing a
/// proxy reports its pairs as deleted, with the removed proxy's (now stale) id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairEvents {
    pub(crate) created: Vec<Pair>,
    pub(crate) deleted: Vec<Pair>,
}

impl PairEvents {
    /// The pairs that began to overlap (or that the filter began to allow).
    #[inline]
    #[must_use]
    pub fn created(&self) -> &[Pair] {
        &self.created
    }

    /// The pairs that stopped overlapping, lost a proxy, or that the filter now forbids.
    #[inline]
    #[must_use]
    pub fn deleted(&self) -> &[Pair] {
        &self.deleted
    }

    /// Whether nothing changed.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.deleted.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.created.clear();
        self.deleted.clear();
    }

    /// Sorts both lists: the contract's order. On two threads when `parallel` and both are
    /// long.
    pub(crate) fn sort(&mut self, parallel: bool) {
        let (created, deleted) = (&mut self.created, &mut self.deleted);
        let both = parallel && created.len().min(deleted.len()) >= crate::par::SORT_BOTH_MIN;
        crate::par::both(both, || created.sort_unstable(), || deleted.sort_unstable());
    }
}
