//! The filtered mode leaves out exactly the pairs rapier's narrow phase discards: colliders of
//! one body, and fixed with fixed; and loses no contact (nothing falls through the ground).

use broadphase::{Abp, Config};
use broadphase_rapier::scenes::Scene;
use broadphase_rapier::{BroadPhaseAdapter, Mode};
use rapier3d::prelude::*;

/// Steps `scene` on Abp in `mode`, checking every pair in the narrow phase's graph (the pairs
/// the broad phase reported) with `check`; the most pairs the graph held.
fn graph_pairs(
    scene: Scene,
    mode: Mode,
    check: impl Fn(&ColliderSet, &RigidBodySet, ColliderPair),
) -> usize {
    let mut world = scene.build(200);
    let mut adapter = BroadPhaseAdapter::new(Abp::new(Config::default()), mode);
    let mut most = 0;
    for _ in 0..100 {
        // The pairs the broad phase reported are the narrow phase's graph edges.
        world.step(&mut adapter);
        assert!(adapter.take_error().is_none());
        for pair in world.narrow_phase.contact_pairs() {
            check(
                &world.colliders,
                &world.bodies,
                ColliderPair::new(pair.collider1, pair.collider2),
            );
        }
        most = most.max(world.narrow_phase.contact_pairs().count());
    }
    // The ground's top: y = 0 but for the chains' ground, 6.5 below their anchors.
    let floor = if scene == Scene::Joints { -7.5 } else { -1.5 };
    for (_, body) in world.bodies.iter() {
        assert!(
            body.translation().y > floor,
            "a body fell through the ground: {:?}",
            body.translation()
        );
    }
    most
}

fn body_of(colliders: &ColliderSet, h: ColliderHandle) -> Option<RigidBodyHandle> {
    colliders.get(h).and_then(|c| c.parent())
}

fn is_fixed(colliders: &ColliderSet, bodies: &RigidBodySet, h: ColliderHandle) -> bool {
    body_of(colliders, h)
        .and_then(|b| bodies.get(b))
        .is_none_or(|b| b.is_fixed())
}

#[test]
fn filtered_pairs_leave_out_what_the_narrow_phase_discards() {
    for scene in [Scene::Balls, Scene::Heightfield, Scene::Joints] {
        let filtered = graph_pairs(scene, Mode::Filtered, |colliders, bodies, pair| {
            let (a, b) = (pair.collider1, pair.collider2);
            assert!(
                !(is_fixed(colliders, bodies, a) && is_fixed(colliders, bodies, b)),
                "{}: fixed with fixed: {pair:?}",
                scene.name()
            );
            let same_body =
                body_of(colliders, a).is_some() && body_of(colliders, a) == body_of(colliders, b);
            assert!(!same_body, "{}: one body: {pair:?}", scene.name());
        });
        let exact = graph_pairs(scene, Mode::BitExact, |_, _, _| {});
        // The balls' walls touch each other and the heightfield's dumbbells hold two
        // colliders each; the chains have neither (their anchors have no collider).
        if scene == Scene::Joints {
            assert_eq!(filtered, exact, "{}", scene.name());
        } else {
            assert!(
                filtered < exact,
                "{}: filtered {filtered}, exact {exact}",
                scene.name()
            );
        }
    }
}
