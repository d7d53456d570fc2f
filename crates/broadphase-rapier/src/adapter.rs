//! rapier's `BroadPhase` trait on any of this workspace's algorithms.

use std::fmt;

use broadphase::{Aabb, BroadPhase, Group, PairEvents, ProxyDesc, ProxyId};
use rapier3d::dynamics::{IntegrationParameters, RigidBodySet, RigidBodyType};
use rapier3d::geometry::{
    ActiveCollisionTypes, BroadPhase as RapierBroadPhase, BroadPhasePairEvent, Collider,
    ColliderHandle, ColliderSet,
};

use crate::canonical::{canonical_order, oriented};

/// Which pairs the adapter reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every pair of overlapping stored boxes, the boxes being the ones rapier's own
    /// `BroadPhaseBvh` (0.27.0) stores: a simulation matches rapier's bit for bit.
    #[default]
    BitExact,
    /// As `BitExact`, less the pairs rapier's narrow phase discards anyway: two colliders of
    /// one rigid body (one [`Group`] per body), and two colliders on fixed bodies (or on no
    /// body) whose `ActiveCollisionTypes` both leave out `FIXED_FIXED` (fixed
    /// [`Mobility`](broadphase::Mobility)). Fewer graph edges, so the solver may order its
    /// constraints differently: simulations agree with rapier's physically, not bit for bit.
    Filtered,
}

/// Something the adapter could not hand to the broad phase. rapier's trait has no error path,
/// so the adapter skips what failed, keeps going and keeps the first error for
/// [`BroadPhaseAdapter::take_error`].
#[derive(Clone, Debug)]
pub struct AdapterError {
    /// The adapter's update that met it (1 for the first; rapier 0.27 updates the broad phase
    /// at least twice per step).
    pub update: u64,
    /// The collider concerned, when there is one.
    pub collider: Option<ColliderHandle>,
    /// What the broad phase said.
    pub source: broadphase::Error,
}

impl fmt::Display for AdapterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "update {}: ", self.update)?;
        if let Some(h) = self.collider {
            let (index, generation) = h.into_raw_parts();
            write!(f, "collider {index}v{generation}: ")?;
        }
        write!(f, "{}", self.source)
    }
}

impl std::error::Error for AdapterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Where a collider's proxy stands.
#[derive(Clone, Copy, Debug)]
enum Proxy {
    /// In the broad phase under this id.
    Live(ProxyId),
    /// Waiting in this update's insert batch, at this position.
    Pending(usize),
}

/// What the adapter keeps per collider, indexed by the collider's index.
#[derive(Clone, Debug)]
struct Slot {
    handle: ColliderHandle,
    proxy: Proxy,
    /// The box the broad phase holds: the one rapier's BVH would hold.
    stored: Aabb,
    desc: ProxyDesc,
}

/// rapier3d's `BroadPhase` on one of this workspace's broad phases.
///
/// Each rapier step becomes one round of batch calls: removed colliders' proxies go in one
/// `remove_batch`, moved boxes in one `set_aabbs`, new colliders in one `insert_batch`, then
/// one `update`, whose events come back as `DeletePair`/`AddPair` of collider handles in
/// [`canonical_order`]. Pairs of removed colliders vanish without a `DeletePair`, as with
/// rapier's BVH (the narrow phase drops them with the collider).
///
/// ```
/// use broadphase::{Abp, Config};
/// use broadphase_rapier::{BroadPhaseAdapter, Mode};
/// use rapier3d::prelude::*;
///
/// let mut bodies = RigidBodySet::new();
/// let mut colliders = ColliderSet::new();
/// colliders.insert(ColliderBuilder::cuboid(10.0, 0.1, 10.0));
/// let ball = bodies.insert(RigidBodyBuilder::dynamic().translation(vector![0.0, 1.0, 0.0]));
/// colliders.insert_with_parent(ColliderBuilder::ball(0.5), ball, &mut bodies);
///
/// let mut broad_phase = BroadPhaseAdapter::new(Abp::new(Config::default()), Mode::BitExact);
/// let (mut pipeline, mut islands, mut narrow_phase) =
///     (PhysicsPipeline::new(), IslandManager::new(), NarrowPhase::new());
/// let (mut joints, mut multibody_joints, mut ccd) =
///     (ImpulseJointSet::new(), MultibodyJointSet::new(), CCDSolver::new());
/// for _ in 0..60 {
///     pipeline.step(
///         &vector![0.0, -9.81, 0.0], &IntegrationParameters::default(), &mut islands,
///         &mut broad_phase, &mut narrow_phase, &mut bodies, &mut colliders, &mut joints,
///         &mut multibody_joints, &mut ccd, &(), &(),
///     );
/// }
/// assert!(broad_phase.take_error().is_none());
/// assert!(bodies[ball].translation().y > 0.4, "the ball rests on the ground");
/// ```
pub struct BroadPhaseAdapter<B: ?Sized + BroadPhase = dyn BroadPhase> {
    mode: Mode,
    /// Overrides the change-detection skin (`1e-2 * length_unit` in rapier).
    skin: Option<f32>,
    updates: u64,
    error: Option<AdapterError>,
    /// Collider index → its slot: one way of the map.
    slots: Vec<Option<Slot>>,
    /// Proxy index → (proxy, collider): the other way; a proxy whose id no longer matches
    /// was removed, and its pairs are dropped.
    colliders_of: Vec<Option<(ProxyId, ColliderHandle)>>,
    // This update's batches, kept to reuse their allocations.
    removals: Vec<ProxyId>,
    moves: Vec<(ProxyId, Aabb)>,
    redescribed: Vec<(ProxyId, ProxyDesc)>,
    inserts: Vec<(Aabb, ProxyDesc)>,
    inserted: Vec<ColliderHandle>,
    /// Proxies inserted for no live collider; removed with the next batch.
    orphans: Vec<ProxyId>,
    added: Vec<BroadPhasePairEvent>,
    inner: Box<B>,
}

impl<B: BroadPhase> BroadPhaseAdapter<B> {
    /// An adapter on `inner`, which should be empty.
    pub fn new(inner: B, mode: Mode) -> Self {
        Self::from_box(Box::new(inner), mode)
    }
}

impl<B: ?Sized + BroadPhase> BroadPhaseAdapter<B> {
    /// An adapter on a boxed broad phase, such as `broadphase::new(algorithm, config)` gives.
    pub fn from_box(inner: Box<B>, mode: Mode) -> Self {
        Self {
            mode,
            skin: None,
            updates: 0,
            error: None,
            slots: Vec::new(),
            colliders_of: Vec::new(),
            removals: Vec::new(),
            moves: Vec::new(),
            redescribed: Vec::new(),
            inserts: Vec::new(),
            inserted: Vec::new(),
            orphans: Vec::new(),
            added: Vec::new(),
            inner,
        }
    }

    /// Uses `skin` instead of rapier's change-detection skin (`1e-2 * length_unit`) to grow a
    /// box that left its stored box. Any other value breaks bit-exactness: a way to test that
    /// a comparison catches a difference, or to try other skins.
    #[must_use]
    pub fn with_skin(mut self, skin: f32) -> Self {
        self.skin = Some(skin);
        self
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The broad phase underneath, for its queries and statistics.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The first error met since the last call, if any.
    pub fn take_error(&mut self) -> Option<AdapterError> {
        self.error.take()
    }

    /// The proxy of a collider, once an update has brought it in.
    pub fn proxy(&self, collider: ColliderHandle) -> Option<ProxyId> {
        match self.slot(collider)?.proxy {
            Proxy::Live(id) => Some(id),
            Proxy::Pending(_) => None,
        }
    }

    /// The collider of a proxy.
    pub fn collider(&self, proxy: ProxyId) -> Option<ColliderHandle> {
        lookup(&self.colliders_of, proxy)
    }

    /// The box the broad phase holds for a collider (rapier's BVH holds the same in
    /// [`Mode::BitExact`]).
    pub fn stored_aabb(&self, collider: ColliderHandle) -> Option<Aabb> {
        Some(self.slot(collider)?.stored)
    }

    fn slot(&self, collider: ColliderHandle) -> Option<&Slot> {
        let slot = self.slots.get(index(collider))?.as_ref()?;
        (slot.handle == collider).then_some(slot)
    }

    fn fail(&mut self, collider: Option<ColliderHandle>, source: broadphase::Error) {
        if self.error.is_none() {
            self.error = Some(AdapterError {
                update: self.updates,
                collider,
                source,
            });
        }
    }

    /// What the proxy of `co` is, besides its box.
    fn desc_of(&self, co: &Collider, bodies: &RigidBodySet) -> ProxyDesc {
        if self.mode == Mode::BitExact {
            return ProxyDesc::dynamic();
        }
        let parent = co.parent();
        // A collider on no body counts as fixed for the narrow phase's type test.
        let body_is_fixed = parent
            .and_then(|p| bodies.get(p))
            .is_none_or(|b| b.body_type() == RigidBodyType::Fixed);
        // The narrow phase skips a fixed-fixed pair unless either collider asks for it: a
        // collider that asks is described as dynamic, so it pairs with everything.
        let fixed = body_is_fixed
            && !co
                .active_collision_types()
                .contains(ActiveCollisionTypes::FIXED_FIXED);
        let desc = if fixed {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        };
        // One group per body: the narrow phase never pairs two colliders of one body. Group 0
        // means none, hence the + 1.
        match parent.and_then(|p| p.into_raw_parts().0.checked_add(1)) {
            Some(group) => desc.with_group(Group(group)),
            None => desc,
        }
    }

    /// Forgets a collider's proxy and lists it for removal.
    fn drop_proxy(&mut self, slot: &Slot) {
        if let Proxy::Live(id) = slot.proxy {
            self.removals.push(id);
            if let Some(entry) = self.colliders_of.get_mut(id.index() as usize) {
                *entry = None;
            }
        }
    }

    /// Brings a modified collider's box and description into this update's batches.
    fn take_in(&mut self, handle: ColliderHandle, aabb: Aabb, desc: ProxyDesc, skin: f32) {
        let i = index(handle);
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        match self.slots[i].take() {
            Some(mut slot) if slot.handle == handle => {
                // rapier's BVH keeps a stored box while the new one stays inside it, and
                // otherwise stores the new one grown by the skin: pairs change only when a
                // box leaves its margin, and the stored boxes (not the tight ones) decide them.
                let moved = if skin > 0.0 {
                    let leaves = !slot.stored.contains(&aabb);
                    if leaves {
                        slot.stored = grown(&aabb, skin);
                    }
                    leaves
                } else {
                    let differs = slot.stored != aabb;
                    slot.stored = aabb;
                    differs
                };
                let redescribed = slot.desc != desc;
                slot.desc = desc;
                match slot.proxy {
                    Proxy::Live(id) => {
                        if moved {
                            self.moves.push((id, slot.stored));
                        }
                        if redescribed {
                            self.redescribed.push((id, desc));
                        }
                    }
                    Proxy::Pending(k) => {
                        if let Some(item) = self.inserts.get_mut(k) {
                            *item = (slot.stored, desc);
                        }
                    }
                }
                self.slots[i] = Some(slot);
            }
            stale => {
                // A new collider, or one that took the index of a collider whose removal
                // was not reported: that one's proxy goes.
                if let Some(old) = stale {
                    self.drop_proxy(&old);
                }
                // A new box is stored as it is, without the skin (as rapier's BVH does).
                self.slots[i] = Some(Slot {
                    handle,
                    proxy: Proxy::Pending(self.inserts.len()),
                    stored: aabb,
                    desc,
                });
                self.inserts.push((aabb, desc));
                self.inserted.push(handle);
            }
        }
    }

    /// Hands this update's batches to the broad phase: removals, then descriptions, moves and
    /// insertions. A batch that fails (it should not: every box was checked) is retried item
    /// by item so that one bad item costs only itself.
    fn apply_batches(&mut self) {
        let removals = std::mem::take(&mut self.removals);
        if !removals.is_empty() {
            if let Err(e) = self.inner.remove_batch(&removals) {
                self.fail(None, e);
                for &id in &removals {
                    let _ = self.inner.remove(id);
                }
            }
        }
        self.removals = removals;
        let redescribed = std::mem::take(&mut self.redescribed);
        for &(id, desc) in &redescribed {
            if let Err(e) = self.inner.set_desc(id, desc) {
                let collider = self.collider(id);
                self.fail(collider, e);
            }
        }
        self.redescribed = redescribed;
        let moves = std::mem::take(&mut self.moves);
        if !moves.is_empty() {
            if let Err(e) = self.inner.set_aabbs(&moves) {
                self.fail(None, e);
                for &(id, aabb) in &moves {
                    if let Err(e) = self.inner.set_aabb(id, aabb) {
                        let collider = self.collider(id);
                        self.fail(collider, e);
                    }
                }
            }
        }
        self.moves = moves;
        let inserts = std::mem::take(&mut self.inserts);
        let inserted = std::mem::take(&mut self.inserted);
        if !inserts.is_empty() {
            let ids: Vec<Option<ProxyId>> = match self.inner.insert_batch(&inserts) {
                Ok(ids) => ids.into_iter().map(Some).collect(),
                Err(e) => {
                    self.fail(None, e);
                    let mut ids = Vec::with_capacity(inserts.len());
                    for (k, &(aabb, desc)) in inserts.iter().enumerate() {
                        match self.inner.insert(aabb, desc) {
                            Ok(id) => ids.push(Some(id)),
                            Err(e) => {
                                self.fail(inserted.get(k).copied(), e);
                                ids.push(None);
                            }
                        }
                    }
                    ids
                }
            };
            for (k, (&handle, id)) in inserted.iter().zip(ids).enumerate() {
                self.settle(handle, k, id);
            }
        }
        self.inserts = inserts;
        self.inserted = inserted;
    }

    /// Records where the `k`-th insertion of this update went.
    fn settle(&mut self, handle: ColliderHandle, k: usize, id: Option<ProxyId>) {
        let i = index(handle);
        let owned = matches!(
            self.slots.get(i),
            Some(Some(Slot { handle: h, proxy: Proxy::Pending(p), .. })) if *h == handle && *p == k
        );
        match (id, owned) {
            (Some(id), true) => {
                if let Some(Some(slot)) = self.slots.get_mut(i) {
                    slot.proxy = Proxy::Live(id);
                }
                let at = id.index() as usize;
                if self.colliders_of.len() <= at {
                    self.colliders_of.resize(at + 1, None);
                }
                self.colliders_of[at] = Some((id, handle));
            }
            (Some(id), false) => self.orphans.push(id),
            (None, true) => {
                // Not in the broad phase: the next modification tries again.
                if let Some(entry) = self.slots.get_mut(i) {
                    *entry = None;
                }
            }
            (None, false) => {}
        }
    }
}

impl<B: ?Sized + BroadPhase + 'static> RapierBroadPhase for BroadPhaseAdapter<B> {
    fn update(
        &mut self,
        params: &IntegrationParameters,
        colliders: &ColliderSet,
        bodies: &RigidBodySet,
        modified_colliders: &[ColliderHandle],
        removed_colliders: &[ColliderHandle],
        events: &mut Vec<BroadPhasePairEvent>,
    ) {
        self.updates += 1;
        self.removals.clear();
        self.removals.append(&mut self.orphans);
        self.moves.clear();
        self.redescribed.clear();
        self.inserts.clear();
        self.inserted.clear();

        // Removals first: a collider in `modified_colliders` may have taken a removed one's
        // index.
        for &handle in removed_colliders {
            let i = index(handle);
            if let Some(entry) = self.slots.get_mut(i) {
                if entry.as_ref().is_some_and(|s| s.handle == handle) {
                    if let Some(slot) = entry.take() {
                        self.drop_proxy(&slot);
                    }
                }
            }
        }

        let prediction = params.prediction_distance() / 2.0;
        let skin = self.skin.unwrap_or(1.0e-2 * params.length_unit);
        for &handle in modified_colliders {
            let Some(co) = colliders.get(handle) else {
                continue;
            };
            // rapier's BVH leaves a disabled collider's box where it was (the narrow phase
            // ignores its pairs), and skips colliders whose change does not touch the broad
            // phase; those keep a box inside their stored one, which changes nothing here.
            if !co.is_enabled() {
                continue;
            }
            let aabb = collision_aabb(co, bodies, prediction);
            if let Err(e) = aabb.validate() {
                self.fail(Some(handle), e);
                continue;
            }
            let desc = self.desc_of(co, bodies);
            self.take_in(handle, aabb, desc, skin);
        }

        self.apply_batches();

        let pair_events = match self.inner.update() {
            Ok(events) => events,
            Err(e) => {
                self.fail(None, e);
                return;
            }
        };
        let start = events.len();
        collect(pair_events, &self.colliders_of, events, &mut self.added);
        canonical_order(&mut events[start..]);
    }
}

/// The events as collider pairs, in `out`; pairs with a proxy no longer mapped (its collider
/// was removed) are dropped.
fn collect(
    pair_events: &PairEvents,
    colliders_of: &[Option<(ProxyId, ColliderHandle)>],
    out: &mut Vec<BroadPhasePairEvent>,
    added: &mut Vec<BroadPhasePairEvent>,
) {
    let as_pair = |p: &broadphase::Pair| {
        let a = lookup(colliders_of, p.a)?;
        let b = lookup(colliders_of, p.b)?;
        Some(oriented(a, b))
    };
    added.clear();
    out.extend(
        pair_events
            .deleted()
            .iter()
            .filter_map(as_pair)
            .map(BroadPhasePairEvent::DeletePair),
    );
    added.extend(
        pair_events
            .created()
            .iter()
            .filter_map(as_pair)
            .map(BroadPhasePairEvent::AddPair),
    );
    out.append(added);
}

fn lookup(
    colliders_of: &[Option<(ProxyId, ColliderHandle)>],
    proxy: ProxyId,
) -> Option<ColliderHandle> {
    match colliders_of.get(proxy.index() as usize) {
        Some(Some((id, handle))) if *id == proxy => Some(*handle),
        _ => None,
    }
}

fn index(handle: ColliderHandle) -> usize {
    handle.into_raw_parts().0 as usize
}

/// The box rapier's BVH computes for a collider: its shape's box loosened by its contact skin
/// and half the prediction distance. A body with soft-CCD also gets its box grown by the
/// soft-CCD distance on every side: rapier instead merges the box at a predicted pose, which
/// it does not expose, so such scenes are conservative here but not bit-exact.
fn collision_aabb(co: &Collider, bodies: &RigidBodySet, prediction: f32) -> Aabb {
    let b = co.compute_collision_aabb(prediction);
    let soft_ccd = co
        .parent()
        .and_then(|p| bodies.get(p))
        .map_or(0.0, |body| body.soft_ccd_prediction());
    let aabb = Aabb::new(
        [b.mins.x, b.mins.y, b.mins.z],
        [b.maxs.x, b.maxs.y, b.maxs.z],
    );
    if soft_ccd > 0.0 {
        grown(&aabb, soft_ccd)
    } else {
        aabb
    }
}

/// `aabb` grown by `margin` on every side, as parry's BVH grows a leaf: one f32 subtraction
/// and one addition per coordinate, so the bits match.
fn grown(aabb: &Aabb, margin: f32) -> Aabb {
    Aabb::new(aabb.min.map(|v| v - margin), aabb.max.map(|v| v + margin))
}
