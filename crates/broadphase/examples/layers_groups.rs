//! Which proxies may pair: fixed proxies never pair with one another, proxies of one
//! non-zero group never pair (a ragdoll's limbs), and a table of 64 layers says which layers
//! pair (`set_layers_collide`). Changing a rule or a description reports the pairs it makes
//! or breaks at the next update.
//!
//! `cargo run -p broadphase --all-features --example layers_groups`

use std::collections::BTreeMap;

use broadphase::{
    Aabb, Algorithm, BroadPhase, Config, Error, Group, Layer, Pair, ProxyDesc, ProxyId,
};

const BODIES: Layer = Layer(0);
const DEBRIS: Layer = Layer(1);

/// The pairs of `pairs` by the names the proxies were given, sorted.
fn named(
    pairs: &[Pair],
    names: &BTreeMap<ProxyId, &'static str>,
) -> Vec<(&'static str, &'static str)> {
    let name = |id: ProxyId| names.get(&id).copied().unwrap_or("?");
    let mut out: Vec<_> = pairs
        .iter()
        .map(|p| {
            let (a, b) = (name(p.a), name(p.b));
            (a.min(b), a.max(b))
        })
        .collect();
    out.sort_unstable();
    out
}

fn main() -> Result<(), Error> {
    let mut bp = broadphase::new(Algorithm::Sap, Config::default());
    let mut names = BTreeMap::new();
    let mut add = |bp: &mut dyn BroadPhase, name, aabb, desc| -> Result<ProxyId, Error> {
        let id = bp.insert(aabb, desc)?;
        names.insert(id, name);
        Ok(id)
    };
    let unit_at = |x: f32, y: f32| Aabb::new([x, y, 0.0], [x + 1.0, y + 1.0, 1.0]);

    // Level geometry: a floor and a ramp on it, both fixed: they never pair.
    add(
        &mut *bp,
        "floor",
        Aabb::new([-10.0, -1.0, -1.0], [10.0, 0.0, 2.0]),
        ProxyDesc::fixed(),
    )?;
    add(
        &mut *bp,
        "ramp",
        Aabb::new([2.0, -0.5, 0.0], [4.0, 1.0, 1.0]),
        ProxyDesc::fixed(),
    )?;

    // A ragdoll: three limbs in group 7 overlap one another but never pair, and each pairs
    // with the floor.
    let ragdoll = ProxyDesc::dynamic().with_group(Group(7));
    add(&mut *bp, "torso", unit_at(-4.0, 0.0), ragdoll)?;
    add(&mut *bp, "arm", unit_at(-3.5, 0.0), ragdoll)?;
    let leg = add(&mut *bp, "leg", unit_at(-4.5, -0.5), ragdoll)?;

    // Debris on its own layer, switched off against the bodies' layer (every pair of layers
    // collides by default). The floor is on the bodies' layer too: the pebble, lying on the
    // floor among the limbs, pairs with nothing.
    bp.set_layers_collide(BODIES, DEBRIS, false)?;
    let pebble = add(
        &mut *bp,
        "pebble",
        unit_at(-3.8, -0.2),
        ProxyDesc::dynamic().with_layer(DEBRIS),
    )?;

    bp.update()?;
    let pairs = named(bp.pairs(), &names);
    println!("pairs:         {pairs:?}");
    assert_eq!(
        pairs,
        [("arm", "floor"), ("floor", "leg"), ("floor", "torso")]
    );

    // Debris may hit bodies again: the pebble's pairs appear at the next update.
    bp.set_layers_collide(BODIES, DEBRIS, true)?;
    let created = named(bp.update()?.created(), &names);
    println!("layers on:     + {created:?}");
    assert_eq!(
        created,
        [
            ("arm", "pebble"),
            ("floor", "pebble"),
            ("leg", "pebble"),
            ("pebble", "torso")
        ]
    );
    assert!(bp.layers_collide(BODIES, DEBRIS));

    // The leg is torn off: out of the group, it pairs with the torso and the arm it overlaps.
    bp.set_desc(leg, ProxyDesc::dynamic())?;
    let created = named(bp.update()?.created(), &names);
    println!("leg torn off:  + {created:?}");
    assert_eq!(created, [("arm", "leg"), ("leg", "torso")]);

    // The pebble settles: it becomes fixed, and two fixed proxies (it and the floor) never
    // pair.
    bp.set_desc(pebble, ProxyDesc::fixed().with_layer(DEBRIS))?;
    let deleted = named(bp.update()?.deleted(), &names);
    println!("pebble fixed:  - {deleted:?}");
    assert_eq!(deleted, [("floor", "pebble")]);

    println!("{} pairs at the end", bp.pairs().len());
    Ok(())
}
