//! What changed between two updates.

use crate::slack::Trim;
use crate::{Pair, ProxyDesc, ProxyId};

/// The pairs created and deleted by one [`update`](crate::BroadPhase::update), each list sorted
/// by `(a, b)`.
///
/// A pair that appears and disappears again between two updates is in neither list. Removing a
/// proxy reports its pairs as deleted, with the removed proxy's (now stale) id; the events keep
/// that proxy's last description ([`removed`](PairEvents::removed)), so that the caller tearing
/// down its pairs still has the `user_data` of both sides
/// ([`BroadPhase::event_desc`](crate::BroadPhase::event_desc)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairEvents {
    pub(crate) created: Vec<Pair>,
    pub(crate) deleted: Vec<Pair>,
    /// The removed proxies that `deleted` names, sorted by id, with their last descriptions.
    pub(crate) removed: Vec<(ProxyId, ProxyDesc)>,
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

    /// The proxies removed before this update that [`deleted`](PairEvents::deleted) names,
    /// sorted by id, each with its description as it was when removed: what the caller needs
    /// to tear down the pairs of a proxy it has let go of. A removed proxy that had no pair is
    /// not listed.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, ProxyDesc};
    /// let mut bp = broadphase::new(Algorithm::Sap, Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic().with_user_data(7))?;
    /// let b = bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// bp.remove(a)?;
    /// let events = bp.update()?;
    /// assert_eq!(events.removed().len(), 1);
    /// assert_eq!(events.removed()[0].0, a);
    /// assert_eq!(events.removed_desc(a).map(|d| d.user_data), Some(7));
    /// assert!(events.removed_desc(b).is_none(), "b is still live");
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn removed(&self) -> &[(ProxyId, ProxyDesc)] {
        &self.removed
    }

    /// The description of `id` if it is one of the [`removed`](PairEvents::removed) proxies.
    #[must_use]
    pub fn removed_desc(&self, id: ProxyId) -> Option<ProxyDesc> {
        self.removed
            .binary_search_by_key(&id, |&(r, _)| r)
            .ok()
            .map(|i| self.removed[i].1)
    }

    /// Whether nothing changed.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.deleted.is_empty()
    }

    /// Empties the lists for the next update ([`Trim`]: the store keeps one per list).
    pub(crate) fn clear(&mut self, trims: &mut [Trim; 3]) {
        trims[0].clear(&mut self.created);
        trims[1].clear(&mut self.deleted);
        trims[2].clear(&mut self.removed);
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        (self.created.capacity() + self.deleted.capacity()) * size_of::<Pair>()
            + self.removed.capacity() * size_of::<(ProxyId, ProxyDesc)>()
    }

    /// Sorts both lists: the contract's order. On two threads when `parallel` and both are
    /// long.
    pub(crate) fn sort(&mut self, parallel: bool) {
        let (created, deleted) = (&mut self.created, &mut self.deleted);
        let both = parallel && created.len().min(deleted.len()) >= crate::par::SORT_BOTH_MIN;
        crate::par::both(both, || created.sort_unstable(), || deleted.sort_unstable());
    }
}
