//! Each scene stepped on rapier's own broad phase and on ours must agree bit for bit: every
//! body's translation and rotation, at every step.

use broadphase::{Algorithm, Config};
use broadphase_rapier::scenes::Scene;
use broadphase_rapier::{BroadPhaseAdapter, Canonical, Mode};
use rapier3d::geometry::{BroadPhase as RapierBroadPhase, BroadPhaseBvh};

const SIZE: usize = 250;
const STEPS: u64 = 100;

/// Steps `scene` on rapier's BVH (in canonical order) and on `algorithm` side by side; the
/// first step and body whose pose bits differ is the error.
fn compare(scene: Scene, algorithm: Algorithm) -> Result<(), String> {
    let mut theirs = scene.build(SIZE);
    let mut ours = scene.build(SIZE);
    let mut reference = Canonical::new(BroadPhaseBvh::new());
    let mut adapter = BroadPhaseAdapter::from_box(
        broadphase::new(algorithm, Config::default()),
        Mode::BitExact,
    );
    for step in 1..=STEPS {
        theirs.step(&mut reference as &mut dyn RapierBroadPhase);
        ours.step(&mut adapter);
        if let Some(e) = adapter.take_error() {
            return Err(format!("{} on {algorithm:?}: {e}", scene.name()));
        }
        let (a, b) = (theirs.pose_bits(), ours.pose_bits());
        if a != b {
            let body = a.iter().zip(&b).find(|(x, y)| x != y);
            return Err(format!(
                "{} on {algorithm:?}: step {step}: first differing body (index, pose bits): \
                 rapier {:?}, ours {:?} ({} vs {} bodies)",
                scene.name(),
                body.map(|(x, _)| x),
                body.map(|(_, y)| y),
                a.len(),
                b.len(),
            ));
        }
    }
    // The scene must have done something worth comparing: bodies in contact.
    let contacts = ours
        .narrow_phase
        .contact_pairs()
        .filter(|p| p.has_any_active_contact)
        .count();
    if contacts == 0 {
        return Err(format!("{}: no contact after {STEPS} steps", scene.name()));
    }
    Ok(())
}

#[test]
fn pyramid() {
    compare(Scene::Pyramid, Algorithm::Abp).unwrap();
}

/// Auto, the default, on a scene that settles: it measures the scene and may switch.
#[test]
fn pyramid_on_auto() {
    compare(Scene::Pyramid, Algorithm::Auto).unwrap();
}

#[test]
fn balls() {
    compare(Scene::Balls, Algorithm::Abp).unwrap();
}

#[test]
fn heightfield() {
    compare(Scene::Heightfield, Algorithm::Abp).unwrap();
}

#[test]
fn trimesh() {
    compare(Scene::Trimesh, Algorithm::Abp).unwrap();
}

#[test]
fn joints() {
    compare(Scene::Joints, Algorithm::Abp).unwrap();
}

#[test]
fn churn() {
    compare(Scene::Churn, Algorithm::Abp).unwrap();
}

/// Every other algorithm on the scene that removes and inserts; Auto (the default) switches
/// engines under live proxies there, and must stay bit-exact through its switches.
#[test]
fn churn_on_every_algorithm() {
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Sap,
        Algorithm::Mbp,
        Algorithm::QuadTree,
        Algorithm::Grid,
        Algorithm::BruteForce,
    ] {
        compare(Scene::Churn, algorithm).unwrap();
    }
}
