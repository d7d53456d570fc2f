//! Two rapier broad phases fed the same inputs, their events compared step by step.

use std::cmp::Ordering;
use std::fmt;

use rapier3d::dynamics::{IntegrationParameters, RigidBodySet};
use rapier3d::geometry::{
    BroadPhase as RapierBroadPhase, BroadPhasePairEvent, ColliderHandle, ColliderPair, ColliderSet,
};

use crate::canonical::{canonical_order, pair_key};

/// Which event a broad phase reported for a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `AddPair`.
    Add,
    /// `DeletePair`.
    Delete,
}

/// The first difference between two broad phases' events: the step, the pair (oriented lower
/// collider index first) and what each reported for it (`None`: nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The step, as counted by [`Lockstep::begin_step`] (1 for the first; 0 if never called).
    pub step: u64,
    /// Which broad-phase update of that step (1 for the first): rapier 0.27 updates the broad
    /// phase once for the user's changes and once more after each (CCD) substep moved the
    /// bodies.
    pub update: u64,
    /// The pair.
    pub pair: ColliderPair,
    /// What the reference reported for the pair at that step.
    pub reference: Option<EventKind>,
    /// What the candidate reported for the pair at that step.
    pub candidate: Option<EventKind>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |h: ColliderHandle| {
            let (index, generation) = h.into_raw_parts();
            format!("collider {index}v{generation}")
        };
        let what = |kind: Option<EventKind>| match kind {
            Some(EventKind::Add) => "AddPair",
            Some(EventKind::Delete) => "DeletePair",
            None => "nothing",
        };
        write!(
            f,
            "step {} (update {} of the step): pair ({}, {}): the reference reported {}, the \
             candidate {}",
            self.step,
            self.update,
            name(self.pair.collider1),
            name(self.pair.collider2),
            what(self.reference),
            what(self.candidate),
        )
    }
}

impl std::error::Error for Divergence {}

/// Runs `reference` and `candidate` on the same inputs each step; the simulation goes on with
/// the reference's events, and the first step and pair where the candidate's differ are kept
/// for [`result`](Lockstep::result). Call [`begin_step`](Lockstep::begin_step) before each
/// `PhysicsPipeline::step` so that the step can be named (the broad phase cannot tell one
/// step's updates from the next one's). Both lists are compared in [`canonical_order`], so only
/// what is reported counts, not its order.
///
/// ```
/// use broadphase::{Abp, Config};
/// use broadphase_rapier::{BroadPhaseAdapter, Canonical, Lockstep, Mode};
/// use rapier3d::geometry::BroadPhaseBvh;
/// let lockstep = Lockstep::new(
///     Canonical::new(BroadPhaseBvh::new()),
///     BroadPhaseAdapter::new(Abp::new(Config::default()), Mode::BitExact),
/// );
/// assert!(lockstep.result().is_ok());
/// ```
pub struct Lockstep<R, C> {
    reference: R,
    candidate: C,
    step: u64,
    /// Updates since the step began.
    update: u64,
    divergence: Option<Divergence>,
    theirs: Vec<BroadPhasePairEvent>,
    ours: Vec<BroadPhasePairEvent>,
}

impl<R, C> Lockstep<R, C> {
    /// Compares `candidate` against `reference`.
    pub fn new(reference: R, candidate: C) -> Self {
        Self {
            reference,
            candidate,
            step: 0,
            update: 0,
            divergence: None,
            theirs: Vec::new(),
            ours: Vec::new(),
        }
    }

    /// Marks the start of a `PhysicsPipeline::step`.
    pub fn begin_step(&mut self) {
        self.step += 1;
        self.update = 0;
    }

    /// The steps begun so far.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// `Ok` while the two agreed at every step; else the first difference.
    ///
    /// # Errors
    /// The first [`Divergence`].
    pub fn result(&self) -> Result<(), Divergence> {
        match &self.divergence {
            Some(d) => Err(d.clone()),
            None => Ok(()),
        }
    }

    /// The reference broad phase.
    pub fn reference(&self) -> &R {
        &self.reference
    }

    /// The candidate broad phase.
    pub fn candidate(&self) -> &C {
        &self.candidate
    }
}

impl<R: RapierBroadPhase, C: RapierBroadPhase> RapierBroadPhase for Lockstep<R, C> {
    fn update(
        &mut self,
        params: &IntegrationParameters,
        colliders: &ColliderSet,
        bodies: &RigidBodySet,
        modified_colliders: &[ColliderHandle],
        removed_colliders: &[ColliderHandle],
        events: &mut Vec<BroadPhasePairEvent>,
    ) {
        self.update += 1;
        self.theirs.clear();
        self.ours.clear();
        let args = (
            params,
            colliders,
            bodies,
            modified_colliders,
            removed_colliders,
        );
        self.reference
            .update(args.0, args.1, args.2, args.3, args.4, &mut self.theirs);
        self.candidate
            .update(args.0, args.1, args.2, args.3, args.4, &mut self.ours);
        events.extend(self.theirs.iter().map(copy_event));
        if self.divergence.is_none() {
            canonical_order(&mut self.theirs);
            canonical_order(&mut self.ours);
            self.divergence =
                first_difference(&self.theirs, &self.ours).map(|(pair, reference, candidate)| {
                    Divergence {
                        step: self.step,
                        update: self.update,
                        pair,
                        reference,
                        candidate,
                    }
                });
        }
    }
}

// rapier's event type is not `Clone`.
fn copy_event(event: &BroadPhasePairEvent) -> BroadPhasePairEvent {
    match event {
        BroadPhasePairEvent::AddPair(p) => BroadPhasePairEvent::AddPair(*p),
        BroadPhasePairEvent::DeletePair(p) => BroadPhasePairEvent::DeletePair(*p),
    }
}

type Reported = (ColliderPair, Option<EventKind>, Option<EventKind>);

/// The first pair, in pair order, that the two canonical lists report differently.
fn first_difference(
    theirs: &[BroadPhasePairEvent],
    ours: &[BroadPhasePairEvent],
) -> Option<Reported> {
    let by_pair = |events: &[BroadPhasePairEvent]| {
        let mut listed: Vec<(ColliderPair, EventKind)> = events
            .iter()
            .map(|e| match e {
                BroadPhasePairEvent::AddPair(p) => (*p, EventKind::Add),
                BroadPhasePairEvent::DeletePair(p) => (*p, EventKind::Delete),
            })
            .collect();
        // Sorted by pair (a kind-major order would name a later pair first), the kind last
        // so that a pair reported twice by one side still compares element by element.
        listed.sort_by_key(|(p, k)| (pair_key(p), *k == EventKind::Add));
        listed
    };
    let (theirs, ours) = (by_pair(theirs), by_pair(ours));
    let (mut i, mut j) = (0, 0);
    loop {
        match (theirs.get(i), ours.get(j)) {
            (None, None) => return None,
            (Some(&(p, k)), None) => return Some((p, Some(k), None)),
            (None, Some(&(p, k))) => return Some((p, None, Some(k))),
            (Some(&(p, k)), Some(&(q, l))) => match pair_key(&p).cmp(&pair_key(&q)) {
                Ordering::Less => return Some((p, Some(k), None)),
                Ordering::Greater => return Some((q, None, Some(l))),
                Ordering::Equal if k != l => return Some((p, Some(k), Some(l))),
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            },
        }
    }
}
