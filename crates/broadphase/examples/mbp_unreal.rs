//! Multi-box pruning set up as Unreal Engine sets up PhysX's MBP: a grid of regions over the
//! level's bounds (`MBPBounds`, `MBPNumSubdivs`), four more regions in the ring out to the
//! outer bounds (`MBPOuterBounds`), z up. A proxy that touches no region is out of bounds and
//! pairs with nothing until a region covers it again.
//!
//! `cargo run -p broadphase --all-features --example mbp_unreal`

use broadphase::{Aabb, BroadPhase, Config, Error, Mbp, MbpSettings, Pair, ProxyDesc, ProxyId};

/// A 2 × 2 × 2 crate with its lower corner at `(x, y, 0)`.
fn crate_at(x: f32, y: f32) -> Aabb {
    Aabb::new([x, y, 0.0], [x + 2.0, y + 2.0, 2.0])
}

/// A crate's name: `a` for the first id of `crates`, `b` for the second, ...
fn name(id: ProxyId, crates: &[ProxyId]) -> char {
    let index = crates.iter().position(|c| *c == id).unwrap_or(25);
    char::from(b'a' + index as u8)
}

/// `pairs` as `a-b, ...` by the crates' names.
fn show(pairs: &[Pair], crates: &[ProxyId]) -> String {
    let names: Vec<String> = pairs
        .iter()
        .map(|p| format!("{}-{}", name(p.a, crates), name(p.b, crates)))
        .collect();
    names.join(", ")
}

fn main() -> Result<(), Error> {
    // The level: 200 × 200 units, z from -10 to 50, in 4 × 4 regions; the ring out to 400 ×
    // 400 catches what leaves the level without losing its pairs.
    let mut settings =
        MbpSettings::unreal(Aabb::new([-100.0, -100.0, -10.0], [100.0, 100.0, 50.0]), 4);
    settings.outer_bounds = Some(Aabb::new([-200.0, -200.0, -20.0], [200.0, 200.0, 100.0]));
    assert_eq!(settings.up, 2, "Unreal: z up");
    assert_eq!(settings.clamped_subdivisions(), 4);
    let mut bp = Mbp::with_settings(Config::default(), &settings)?;
    assert_eq!(bp.region_ids().len(), 4 * 4 + 4);
    // Unreal clamps its subdivisions: at most 15 per axis with outer bounds (256 regions).
    let mut greedy = settings;
    greedy.subdivisions = 20;
    assert_eq!(greedy.clamped_subdivisions(), 15);

    // Two crates at the corner four regions share, overlapping: one pair, reported once.
    let a = bp.insert(crate_at(-1.0, -1.0), ProxyDesc::dynamic())?;
    let b = bp.insert(crate_at(0.0, 0.0), ProxyDesc::dynamic())?;
    // Two in the ring, beyond the level: the outer regions pair them.
    let c = bp.insert(crate_at(150.0, 20.0), ProxyDesc::dynamic())?;
    let d = bp.insert(crate_at(151.0, 21.0), ProxyDesc::dynamic())?;
    // Two beyond the outer bounds: out of bounds, so no pair.
    let e = bp.insert(crate_at(500.0, 0.0), ProxyDesc::dynamic())?;
    let f = bp.insert(crate_at(501.0, 1.0), ProxyDesc::dynamic())?;

    let crates = [a, b, c, d, e, f];
    let created = bp.update()?.created().to_vec();
    println!("created: {}", show(&created, &crates));
    assert_eq!(created, [Pair::new(a, b), Pair::new(c, d)]);
    let out: Vec<char> = bp
        .out_of_bounds()
        .iter()
        .map(|id| name(*id, &crates))
        .collect();
    println!("out of bounds: {out:?}");
    assert_eq!(bp.out_of_bounds(), [e, f]);

    println!("populated regions:");
    for region in bp.regions().iter().filter(|r| r.dynamic > 0) {
        let (lo, hi) = (region.bounds.min, region.bounds.max);
        let id = region
            .id
            .map_or_else(|| "derived".to_string(), |id| id.to_string());
        println!(
            "  {id:<6} x {:>6} .. {:<6} y {:>6} .. {:<6} {} dynamic",
            lo[0], hi[0], lo[1], hi[1], region.dynamic
        );
    }
    // `a` and `b` touch the four regions at the corner; `c` and `d` one ring region.
    let populated = bp.regions().iter().filter(|r| r.dynamic > 0).count();
    assert_eq!(populated, 5);

    // A region added at run time around the far crates brings them in: their pair appears.
    let far = bp.add_region(Aabb::new([400.0, -50.0, -10.0], [600.0, 50.0, 50.0]), true)?;
    assert_eq!(bp.update()?.created(), &[Pair::new(e, f)]);
    assert!(bp.out_of_bounds().is_empty());
    println!("added region {far}: created e-f");

    // Removed again: the pair goes, and the crates are out of bounds once more.
    bp.remove_region(far)?;
    assert_eq!(bp.update()?.deleted(), &[Pair::new(e, f)]);
    assert_eq!(bp.out_of_bounds(), [e, f]);
    println!("removed region {far}: deleted e-f");

    // `e` flies back into the level next to `a`: it pairs with `a` and `b` again.
    bp.set_aabb(e, crate_at(0.5, 0.5))?;
    let created = bp.update()?.created().to_vec();
    println!("e moved in: created {}", show(&created, &crates));
    assert_eq!(created, [Pair::new(a, e), Pair::new(b, e)]);
    assert_eq!(bp.out_of_bounds(), [f]);
    Ok(())
}
