//! The lockstep comparison: silent while the two broad phases agree, and naming the first step
//! and pair when they do not.

use broadphase::{Abp, Config};
use broadphase_rapier::scenes::Scene;
use broadphase_rapier::{BroadPhaseAdapter, Canonical, EventKind, Lockstep, Mode};
use rapier3d::geometry::BroadPhaseBvh;

fn run(
    scene: Scene,
    adapter: BroadPhaseAdapter<Abp>,
    steps: u64,
) -> Lockstep<Canonical<BroadPhaseBvh>, BroadPhaseAdapter<Abp>> {
    let mut world = scene.build(200);
    let mut lockstep = Lockstep::new(Canonical::new(BroadPhaseBvh::new()), adapter);
    for _ in 0..steps {
        lockstep.begin_step();
        world.step(&mut lockstep);
    }
    lockstep
}

#[test]
fn the_exact_adapter_agrees_at_every_step() {
    for scene in [Scene::Churn, Scene::Heightfield] {
        let lockstep = run(
            scene,
            BroadPhaseAdapter::new(Abp::new(Config::default()), Mode::BitExact),
            60,
        );
        assert_eq!(lockstep.steps(), 60);
        lockstep.result().unwrap();
    }
}

#[test]
fn a_wrong_margin_is_named_by_step_and_pair() {
    // A skin five times rapier's: boxes grow further, so pairs appear before rapier's do.
    let adapter =
        BroadPhaseAdapter::new(Abp::new(Config::default()), Mode::BitExact).with_skin(0.05);
    let lockstep = run(Scene::Balls, adapter, 60);
    let divergence = lockstep.result().unwrap_err();
    let message = divergence.to_string();
    let (a, _) = divergence.pair.collider1.into_raw_parts();
    let (b, _) = divergence.pair.collider2.into_raw_parts();
    assert!(
        message.starts_with(&format!(
            "step {} (update {} of the step): ",
            divergence.step, divergence.update
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!("pair (collider {a}v0, collider {b}v0)")),
        "{message}"
    );
    // A new box is stored without the skin, so the first update agrees; once the balls move,
    // the wider skin pairs boxes rapier does not pair yet.
    assert!((divergence.step, divergence.update) > (1, 1), "{message}");
    assert_eq!(divergence.reference, None, "{message}");
    assert_eq!(divergence.candidate, Some(EventKind::Add), "{message}");
    assert!(
        message.ends_with("the reference reported nothing, the candidate AddPair"),
        "{message}"
    );

    // The same run with rapier's skin agrees up to that step: the step named is the first.
    let exact = run(
        Scene::Balls,
        BroadPhaseAdapter::new(Abp::new(Config::default()), Mode::BitExact),
        divergence.step,
    );
    exact.result().unwrap();
}
