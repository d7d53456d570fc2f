//! A physics step around a broad phase: bodies with glam positions and velocities, fat boxes
//! so that small moves cost nothing, contacts begun and ended through the caller's entities
//! (each proxy's `user_data`), and bodies destroyed in batches.
//!
//! Five balls roll along a floor toward a wall at different speeds, overtake one another,
//! and are destroyed once inside the wall. The contact list the events build is checked
//! against the broad phase's pairs after every step.
//!
//! `cargo run -p broadphase --all-features --example physics_step`

use std::collections::BTreeSet;

use broadphase::{Aabb, Algorithm, BroadPhase, Config, Error, FatBoxes, Pair, ProxyDesc, ProxyId};
use glam::Vec3;

/// The caller's entity numbers, stored in each proxy's `user_data`.
const FLOOR: u64 = 1;
const WALL: u64 = 2;
const FIRST_BALL: u64 = 100;

const DT: f32 = 0.1;
const STEPS: usize = 60;
/// Where the wall starts along x; a ball whose centre passes `WALL_X + 0.5` is destroyed.
const WALL_X: f32 = 10.0;

struct Ball {
    entity: u64,
    proxy: ProxyId,
    position: Vec3,
    velocity: Vec3,
    half_size: Vec3,
}

impl Ball {
    /// The ball's tight box this step, built from glam vectors.
    fn tight(&self) -> Aabb {
        Aabb::from((
            self.position - self.half_size,
            self.position + self.half_size,
        ))
    }
}

fn name(entity: u64) -> String {
    match entity {
        FLOOR => "floor".to_string(),
        WALL => "wall".to_string(),
        ball => format!("ball {}", ball - FIRST_BALL),
    }
}

/// The entities of a pair the last update's events name, read through `event_desc`, which
/// also answers for proxies removed before that update.
fn entities(bp: &dyn BroadPhase, pair: &Pair) -> Result<(u64, u64), Error> {
    Ok((
        bp.event_desc(pair.a)?.user_data,
        bp.event_desc(pair.b)?.user_data,
    ))
}

fn main() -> Result<(), Error> {
    let mut bp = broadphase::new(Algorithm::Abp, Config::default());
    // Boxes 0.05 wider than the balls: a ball's proxy changes only every few steps.
    let fat = FatBoxes::new(0.05)?;

    // Level geometry: fixed proxies, which never pair with one another.
    let floor = Aabb::from((Vec3::new(-20.0, -1.0, -5.0), Vec3::new(20.0, 0.0, 5.0)));
    let wall = Aabb::from((
        Vec3::new(WALL_X, 0.0, -5.0),
        Vec3::new(WALL_X + 1.0, 5.0, 5.0),
    ));
    bp.insert(floor, ProxyDesc::fixed().with_user_data(FLOOR))?;
    bp.insert(wall, ProxyDesc::fixed().with_user_data(WALL))?;

    // Five balls resting on the floor, the slow ones ahead of the fast ones.
    let mut balls = Vec::new();
    for i in 0..5u8 {
        let entity = FIRST_BALL + u64::from(i);
        let position = Vec3::new(-2.0 * f32::from(i), 0.5, 0.0);
        let half_size = Vec3::splat(0.5);
        let tight = Aabb::from((position - half_size, position + half_size));
        let proxy = bp.insert(
            fat.fatten(tight),
            ProxyDesc::dynamic().with_user_data(entity),
        )?;
        balls.push(Ball {
            entity,
            proxy,
            position,
            velocity: Vec3::new(2.0 + f32::from(i), 0.0, 0.0),
            half_size,
        });
    }

    let mut contacts: BTreeSet<(u64, u64)> = BTreeSet::new();
    let mut touched_wall = BTreeSet::new();
    let mut destroyed = BTreeSet::new();
    let mut moves_sent = 0;
    for step in 0..STEPS {
        // Integrate, then hand the broad phase only the balls that left their fat boxes.
        for ball in &mut balls {
            ball.position += ball.velocity * DT;
        }
        let mut moves: Vec<(ProxyId, Aabb)> = balls.iter().map(|b| (b.proxy, b.tight())).collect();
        fat.retain_moves(&*bp, &mut moves)?;
        moves_sent += moves.len();
        bp.set_aabbs(&moves)?;

        // Balls inside the wall are destroyed this step, all in one batch.
        let (gone, kept): (Vec<Ball>, Vec<Ball>) =
            balls.into_iter().partition(|b| b.position.x > WALL_X + 0.5);
        balls = kept;
        bp.remove_batch(&gone.iter().map(|b| b.proxy).collect::<Vec<_>>())?;

        bp.update()?;
        let mut trace = Vec::new();
        for pair in bp.events().created() {
            let (a, b) = entities(&*bp, pair)?;
            if b == WALL || a == WALL {
                touched_wall.insert(a.max(b));
            }
            assert!(contacts.insert((a, b)), "a contact begins once");
            trace.push(format!("+{}/{}", name(a), name(b)));
        }
        for pair in bp.events().deleted() {
            let (a, b) = entities(&*bp, pair)?;
            assert!(contacts.remove(&(a, b)), "a contact ends after it began");
            trace.push(format!("-{}/{}", name(a), name(b)));
        }
        for ball in &gone {
            destroyed.insert(ball.entity);
            trace.push(format!("destroyed {}", name(ball.entity)));
            assert!(
                contacts
                    .iter()
                    .all(|&(a, b)| a != ball.entity && b != ball.entity),
                "a destroyed ball's contacts all ended"
            );
        }
        if !trace.is_empty() {
            println!("step {step:2}: {}", trace.join("  "));
        }

        // The contacts the events built are the broad phase's pairs, by entity.
        let mut from_pairs = BTreeSet::new();
        for pair in bp.pairs() {
            from_pairs.insert((bp.desc(pair.a)?.user_data, bp.desc(pair.b)?.user_data));
        }
        assert_eq!(contacts, from_pairs, "step {step}");
    }

    let all_balls: BTreeSet<u64> = (FIRST_BALL..FIRST_BALL + 5).collect();
    assert_eq!(touched_wall, all_balls, "every ball reached the wall");
    assert_eq!(destroyed, all_balls, "every ball was destroyed");
    assert_eq!(bp.len(), 2, "the floor and the wall are left");
    assert!(contacts.is_empty(), "fixed proxies never pair");
    assert!(
        moves_sent < 5 * STEPS,
        "fat boxes spared some moves: {moves_sent} sent for {} ball steps",
        5 * STEPS
    );
    println!(
        "{STEPS} steps: {moves_sent} moves sent for {} ball steps (fat boxes kept the rest)",
        5 * STEPS
    );
    Ok(())
}
