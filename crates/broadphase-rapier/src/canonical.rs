//! One order for a step's pair events, and a wrapper that puts any broad phase's events in it.

use rapier3d::dynamics::{IntegrationParameters, RigidBodySet};
use rapier3d::geometry::{
    BroadPhase as RapierBroadPhase, BroadPhasePairEvent, ColliderHandle, ColliderPair, ColliderSet,
};

/// A pair with its lower collider index first: the orientation rapier's `BroadPhaseBvh` gives
/// its pairs, kept so that the narrow phase sees the same `(collider1, collider2)` from every
/// broad phase (it stores contact manifolds in that orientation).
pub(crate) fn oriented(a: ColliderHandle, b: ColliderHandle) -> ColliderPair {
    if b.into_raw_parts().0 < a.into_raw_parts().0 {
        ColliderPair::new(b, a)
    } else {
        ColliderPair::new(a, b)
    }
}

/// The sort key of a pair: both handles' (index, generation).
pub(crate) fn pair_key(pair: &ColliderPair) -> (u32, u32, u32, u32) {
    let (i1, g1) = pair.collider1.into_raw_parts();
    let (i2, g2) = pair.collider2.into_raw_parts();
    (i1, g1, i2, g2)
}

fn event_key(event: &BroadPhasePairEvent) -> (bool, (u32, u32, u32, u32)) {
    match event {
        BroadPhasePairEvent::DeletePair(p) => (false, pair_key(p)),
        BroadPhasePairEvent::AddPair(p) => (true, pair_key(p)),
    }
}

/// Puts a step's events in the canonical order: every pair oriented lower collider index
/// first, the `DeletePair`s before the `AddPair`s (so a graph edge is freed before one is
/// made), each sorted by the handles' `(index, generation)`.
///
/// ```
/// use broadphase_rapier::canonical_order;
/// use rapier3d::geometry::{BroadPhasePairEvent as E, ColliderHandle, ColliderPair};
/// let h = |i| ColliderHandle::from_raw_parts(i, 0);
/// let mut events = vec![
///     E::AddPair(ColliderPair::new(h(5), h(2))),
///     E::DeletePair(ColliderPair::new(h(1), h(3))),
///     E::AddPair(ColliderPair::new(h(0), h(9))),
/// ];
/// canonical_order(&mut events);
/// assert!(matches!(events[0], E::DeletePair(p) if p == ColliderPair::new(h(1), h(3))));
/// assert!(matches!(events[1], E::AddPair(p) if p == ColliderPair::new(h(0), h(9))));
/// assert!(matches!(events[2], E::AddPair(p) if p == ColliderPair::new(h(2), h(5))));
/// ```
pub fn canonical_order(events: &mut [BroadPhasePairEvent]) {
    for event in events.iter_mut() {
        let (BroadPhasePairEvent::AddPair(p) | BroadPhasePairEvent::DeletePair(p)) = event;
        *p = oriented(p.collider1, p.collider2);
    }
    // Keys are unique within a step (a broad phase reports a pair once), so an unstable sort
    // gives one order.
    events.sort_unstable_by_key(event_key);
}

/// Any rapier broad phase with its events handed over in [`canonical_order`].
///
/// Wrap rapier's own `BroadPhaseBvh` in it for the reference run of a bit-for-bit comparison:
/// the BVH reports pairs in tree-traversal and hash-map order, which no other structure
/// reproduces.
///
/// ```
/// use broadphase_rapier::Canonical;
/// use rapier3d::geometry::BroadPhaseBvh;
/// let reference = Canonical::new(BroadPhaseBvh::new());
/// # let _ = reference;
/// ```
#[derive(Default)]
pub struct Canonical<B> {
    inner: B,
    scratch: Vec<BroadPhasePairEvent>,
}

impl<B> Canonical<B> {
    /// Wraps `inner`.
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            scratch: Vec::new(),
        }
    }

    /// The wrapped broad phase.
    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: RapierBroadPhase> RapierBroadPhase for Canonical<B> {
    fn update(
        &mut self,
        params: &IntegrationParameters,
        colliders: &ColliderSet,
        bodies: &RigidBodySet,
        modified_colliders: &[ColliderHandle],
        removed_colliders: &[ColliderHandle],
        events: &mut Vec<BroadPhasePairEvent>,
    ) {
        // Only this step's events are reordered: whatever the caller had in `events` stays
        // ahead of them, as it would with the inner broad phase alone.
        self.scratch.clear();
        self.inner.update(
            params,
            colliders,
            bodies,
            modified_colliders,
            removed_colliders,
            &mut self.scratch,
        );
        canonical_order(&mut self.scratch);
        events.append(&mut self.scratch);
    }
}
