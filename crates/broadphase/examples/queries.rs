//! Every query, in both forms: the visitor (which may stop early) and the `_vec` form that
//! collects and sorts. The same scene runs on every algorithm, and each must answer exactly
//! as the others do.
//!
//! `cargo run -p broadphase --all-features --example queries`

use std::ops::ControlFlow;

use broadphase::{
    Aabb, Algorithm, BroadPhase, CastHit, Config, Error, Layer, LayerMask, Obb, ProxyDesc, ProxyId,
    Ray, RayHit,
};

/// Every query's answer on one algorithm, to compare across algorithms.
#[derive(Debug, PartialEq)]
struct Answers {
    aabb: Vec<ProxyId>,
    first_in_aabb: usize,
    point: Vec<ProxyId>,
    sphere: Vec<ProxyId>,
    obb: Vec<ProxyId>,
    obb_unturned: Vec<ProxyId>,
    rays: Vec<RayHit>,
    closest: Option<RayHit>,
    casts: Vec<CastHit>,
    nearest: Vec<(ProxyId, f32)>,
    pillar_layer: Vec<ProxyId>,
}

/// Crates of unit size along the x axis, 2 apart (crate `i` spans `2i..2i + 1`), and a
/// pillar on layer 1 beside the third.
fn scene(bp: &mut dyn BroadPhase) -> Result<(Vec<ProxyId>, ProxyId), Error> {
    let mut crates = Vec::new();
    for i in 0..5u8 {
        let x = 2.0 * f32::from(i);
        crates.push(bp.insert(
            Aabb::new([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]),
            ProxyDesc::fixed(),
        )?);
    }
    let pillar = bp.insert(
        Aabb::new([4.0, 0.0, 2.0], [5.0, 3.0, 3.0]),
        ProxyDesc::dynamic().with_layer(Layer(1)),
    )?;
    bp.update()?;
    Ok((crates, pillar))
}

fn ask(bp: &dyn BroadPhase, crates: &[ProxyId], pillar: ProxyId) -> Result<Answers, Error> {
    let c = |i: usize| crates[i];
    // Layer 0 only: the pillar (layer 1) is left out of most queries.
    let ground = LayerMask::of(Layer(0));

    // A box over crates 1 and 2 (touching counts: crate 2 starts at 4.0, the box ends there).
    let aabb = bp.query_aabb_vec(Aabb::new([1.5, 0.0, 0.0], [4.0, 1.0, 1.0]), ground)?;
    assert_eq!(aabb, [c(1), c(2)]);

    // The visitor form, stopped at the first hit.
    let mut first_in_aabb = 0;
    bp.query_aabb(Aabb::new([-10.0; 3], [10.0; 3]), ground, &mut |_| {
        first_in_aabb += 1;
        ControlFlow::Break(())
    })?;
    assert_eq!(first_in_aabb, 1);

    let point = bp.query_point_vec([2.5, 0.5, 0.5], LayerMask::ALL)?;
    assert_eq!(point, [c(1)]);

    // A ball touching crates 1 and 2 exactly, half a unit from each.
    let sphere = bp.query_sphere_vec([3.5, 0.5, 0.5], 0.5, ground)?;
    assert_eq!(sphere, [c(1), c(2)]);

    // A thin plank along x, turned a quarter about z: it now stands along y at x = 5,
    // touching crate 2 only. Unturned, it reaches crates 2 and 3.
    let quarter_turn_z = [
        0.0,
        0.0,
        std::f32::consts::FRAC_1_SQRT_2,
        std::f32::consts::FRAC_1_SQRT_2,
    ];
    let mut plank = Obb {
        center: [5.0, 0.5, 0.5],
        half_extents: [1.2, 0.1, 0.1],
        rotation: quarter_turn_z,
    };
    let obb = bp.query_obb_vec(&plank, ground)?;
    assert_eq!(obb, [c(2)]);
    plank.rotation = [0.0, 0.0, 0.0, 1.0];
    let obb_unturned = bp.query_obb_vec(&plank, ground)?;
    assert_eq!(obb_unturned, [c(2), c(3)]);

    // A ray along x through the crates, up to t = 5: it enters crate 2 exactly at its end.
    let ray = Ray::new([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
    let rays = bp.ray_cast_vec(&ray, 5.0, ground)?;
    let hits: Vec<(ProxyId, f32)> = rays.iter().map(|h| (h.id, h.t)).collect();
    assert_eq!(hits, [(c(0), 1.0), (c(1), 3.0), (c(2), 5.0)]);
    let closest = bp.ray_cast_closest(&ray, f32::INFINITY, ground)?;
    assert_eq!(closest.map(|h| (h.id, h.t)), Some((c(0), 1.0)));
    // The visitor form: hits come in no particular order.
    let mut visited = 0;
    bp.ray_cast(&ray, 5.0, ground, &mut |_| {
        visited += 1;
        ControlFlow::Continue(())
    })?;
    assert_eq!(visited, rays.len());

    // A small box thrown 4 units along x: it touches crate 0 after 3/8 of the way and
    // crate 1 after 7/8.
    let thrown = Aabb::new([-2.0, 0.25, 0.25], [-1.5, 0.75, 0.75]);
    let casts = bp.box_cast_vec(thrown, [4.0, 0.0, 0.0], ground)?;
    let hits: Vec<(ProxyId, f32)> = casts.iter().map(|h| (h.id, h.t)).collect();
    assert_eq!(hits, [(c(0), 0.375), (c(1), 0.875)]);
    let mut visited = 0;
    bp.box_cast(thrown, [4.0, 0.0, 0.0], ground, &mut |_| {
        visited += 1;
        ControlFlow::Continue(())
    })?;
    assert_eq!(visited, casts.len());

    // The two crates nearest to a point between crates 3 and 4, above them: both 0.5 away
    // along x and 4 along z, a tie broken by id.
    let nearest = bp.nearest([7.5, 0.5, 5.0], 2, ground)?;
    let expected = (0.5f32 * 0.5 + 4.0 * 4.0).sqrt();
    assert_eq!(nearest, [(c(3), expected), (c(4), expected)]);

    // The pillar is found with its own layer's mask.
    let pillar_layer =
        bp.query_aabb_vec(Aabb::new([0.0; 3], [10.0; 3]), LayerMask::of(Layer(1)))?;
    assert_eq!(pillar_layer, [pillar]);

    Ok(Answers {
        aabb,
        first_in_aabb,
        point,
        sphere,
        obb,
        obb_unturned,
        rays,
        closest,
        casts,
        nearest,
        pillar_layer,
    })
}

fn main() -> Result<(), Error> {
    let mut reference = None;
    for &algorithm in Algorithm::ALL {
        let mut bp = broadphase::new(algorithm, Config::default());
        let (crates, pillar) = scene(&mut *bp)?;
        let answers = ask(&*bp, &crates, pillar)?;
        match &reference {
            None => {
                let index = |id: &ProxyId| crates.iter().position(|c| c == id);
                let names = |ids: &[ProxyId]| {
                    ids.iter()
                        .map(|id| index(id).map_or("pillar".to_string(), |i| format!("crate {i}")))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                println!("query_aabb_vec   [1.5..4] x:   {}", names(&answers.aabb));
                println!(
                    "query_aabb       stopped after {} hit",
                    answers.first_in_aabb
                );
                println!("query_point_vec  (2.5, .5, .5): {}", names(&answers.point));
                println!("query_sphere_vec r 0.5:         {}", names(&answers.sphere));
                println!("query_obb_vec    turned plank:  {}", names(&answers.obb));
                println!(
                    "query_obb_vec    plank as is:   {}",
                    names(&answers.obb_unturned)
                );
                for hit in &answers.rays {
                    println!("ray_cast_vec     {} at t = {}", names(&[hit.id]), hit.t);
                }
                for hit in &answers.casts {
                    println!("box_cast_vec     {} at t = {}", names(&[hit.id]), hit.t);
                }
                for (id, d) in &answers.nearest {
                    println!("nearest          {} at {d:.3}", names(&[*id]));
                }
                println!("layer 1 only:    {}", names(&answers.pillar_layer));
                reference = Some(answers);
            }
            Some(first) => assert_eq!(&answers, first, "{algorithm} answers as the others"),
        }
        println!("{algorithm}: every query answered as expected");
    }
    Ok(())
}
