//! Snapshots: every query kind checked against `BruteForce` over the boxes the snapshot was
//! taken with, after the broad phase moved on; many threads querying while one updates; and
//! the events of a broad phase whose snapshots are held unchanged by them.
//!
//! The library has no `unsafe` on this path (trees shared by `Arc`, copied by
//! `Arc::make_mut` before an update writes them), so the compiler rules data races out; the
//! threaded test checks that what readers see is exact all the same.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use broadphase::testing::SplitMix64;
use broadphase::{
    Aabb, Abp, Algorithm, Auto, BroadPhase, BruteForce, Config, Error, Grid, Layer, LayerMask, Obb,
    PairEvents, ProxyDesc, ProxyId, QuadTree, QuadTreeSettings, Ray, Sap, Snapshot,
};

/// The live proxies as the test knows them.
type Model = BTreeMap<ProxyId, (Aabb, ProxyDesc)>;

fn random_box(rng: &mut SplitMix64, side: f32) -> Aabb {
    let min = [0; 3].map(|_| rng.unit() * side);
    let size = [0; 3].map(|_| 0.2 + 2.0 * rng.unit());
    Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
}

fn random_desc(rng: &mut SplitMix64) -> ProxyDesc {
    let d = if rng.below(5) == 0 {
        ProxyDesc::fixed()
    } else {
        ProxyDesc::dynamic()
    };
    d.with_layer(Layer(rng.below(3) as u8))
}

/// Inserts, moves and removes a random share of the proxies (some frames, most of them).
fn churn(bp: &mut dyn BroadPhase, model: &mut Model, rng: &mut SplitMix64, side: f32) {
    let heavy = rng.below(4) == 0;
    for _ in 0..rng.below(40) {
        let (b, d) = (random_box(rng, side), random_desc(rng));
        if let Ok(id) = bp.insert(b, d) {
            model.insert(id, (b, d));
        }
    }
    let ids: Vec<ProxyId> = model.keys().copied().collect();
    for id in ids {
        match rng.below(if heavy { 3 } else { 30 }) {
            0 => {
                let b = random_box(rng, side);
                if bp.set_aabb(id, b).is_ok() {
                    model.insert(id, (b, model[&id].1));
                }
            }
            1 if rng.below(4) == 0 && bp.remove(id).is_ok() => {
                model.remove(&id);
            }
            _ => {}
        }
    }
}

/// A reference over the boxes of `model`: `BruteForce`, and its ids mapped back.
struct Reference {
    brute: BruteForce,
    ids: BTreeMap<ProxyId, ProxyId>,
}

impl Reference {
    fn new(model: &Model) -> Result<Self, Error> {
        let mut brute = BruteForce::new(Config::default());
        let mut ids = BTreeMap::new();
        for (&id, &(b, d)) in model {
            ids.insert(brute.insert(b, d)?, id);
        }
        Ok(Self { brute, ids })
    }

    fn map(&self, mut v: Vec<ProxyId>) -> Vec<ProxyId> {
        v = v.into_iter().map(|id| self.ids[&id]).collect();
        v.sort_unstable();
        v
    }
}

fn sorted(mut v: Vec<ProxyId>) -> Vec<ProxyId> {
    v.sort_unstable();
    v
}

fn collect(
    f: impl FnOnce(&mut dyn FnMut(ProxyId) -> ControlFlow<()>) -> Result<(), Error>,
) -> Result<Vec<ProxyId>, Error> {
    let mut out = Vec::new();
    f(&mut |id| {
        out.push(id);
        ControlFlow::Continue(())
    })?;
    Ok(sorted(out))
}

/// Hits (id, t) sorted, with `t` bit for bit; the reference's ids mapped back.
fn hits(v: Vec<(ProxyId, f32)>, reference: Option<&Reference>) -> Vec<(ProxyId, u32)> {
    let mut v: Vec<_> = v
        .into_iter()
        .map(|(id, t)| (reference.map_or(id, |r| r.ids[&id]), t.to_bits()))
        .collect();
    v.sort_unstable();
    v
}

/// Every query kind of `snap` against the reference, at random places.
fn check_snapshot(
    snap: &Snapshot,
    reference: &Reference,
    rng: &mut SplitMix64,
    side: f32,
) -> Result<(), Error> {
    let r = &reference.brute;
    assert_eq!(snap.len(), r.len());
    for _ in 0..12 {
        let mask = if rng.below(3) == 0 {
            LayerMask::of(Layer(rng.below(3) as u8))
        } else {
            LayerMask::ALL
        };
        let q = random_box(rng, side).inflated(2.0 * rng.unit());
        assert_eq!(
            collect(|v| snap.query_aabb(q, mask, v))?,
            reference.map(r.query_aabb_vec(q, mask)?),
            "aabb {q:?}"
        );
        let p = q.center();
        assert_eq!(
            collect(|v| snap.query_point(p, mask, v))?,
            reference.map(r.query_point_vec(p, mask)?)
        );
        let radius = 3.0 * rng.unit();
        assert_eq!(
            collect(|v| snap.query_sphere(p, radius, mask, v))?,
            reference.map(r.query_sphere_vec(p, radius, mask)?)
        );
        let obb = Obb {
            center: p,
            half_extents: [1.0, 2.0, 0.5],
            rotation: [0.3, 0.1, 0.2, 0.9],
        };
        assert_eq!(
            collect(|v| snap.query_obb(&obb, mask, v))?,
            reference.map(r.query_obb_vec(&obb, mask)?)
        );
        let ray = Ray::new(p, [rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5]);
        let max_t = if rng.below(2) == 0 {
            f32::INFINITY
        } else {
            side * rng.unit()
        };
        let mut got = Vec::new();
        snap.ray_cast(&ray, max_t, mask, &mut |h| {
            got.push((h.id, h.t));
            ControlFlow::Continue(())
        })?;
        let want = r.ray_cast_vec(&ray, max_t, mask)?;
        let want: Vec<_> = want.iter().map(|h| (h.id, h.t)).collect();
        assert_eq!(hits(got, None), hits(want, Some(reference)), "ray {ray:?}");
        let motion = [0; 3].map(|_| 6.0 * (rng.unit() - 0.5));
        let mut got = Vec::new();
        snap.box_cast(q, motion, mask, &mut |h| {
            got.push((h.id, h.t));
            ControlFlow::Continue(())
        })?;
        let want = r.box_cast_vec(q, motion, mask)?;
        let want: Vec<_> = want.iter().map(|h| (h.id, h.t)).collect();
        assert_eq!(hits(got, None), hits(want, Some(reference)), "box cast");
        let k = 1 + rng.below(6) as usize;
        let got: Vec<f32> = snap.nearest(p, k, mask)?.iter().map(|x| x.1).collect();
        let want: Vec<f32> = r.nearest(p, k, mask)?.iter().map(|x| x.1).collect();
        assert_eq!(got, want, "nearest distances");
    }
    Ok(())
}

/// Snapshots taken after updates and between them (with changes pending), checked a few frames
/// later, after the broad phase moved on.
fn snapshots_stay_exact(bp: &mut dyn BroadPhase, seed: u64) -> Result<(), Error> {
    let mut rng = SplitMix64::new(seed);
    let side = 40.0;
    let mut model = Model::new();
    let mut held: Vec<(Snapshot, Reference, u32)> = Vec::new();
    for frame in 0..40 {
        churn(bp, &mut model, &mut rng, side);
        if frame % 3 == 1 {
            // Changes pending: the snapshot answers for them too.
            held.push((bp.snapshot(), Reference::new(&model)?, frame + 3));
        }
        bp.update()?;
        assert_eq!(bp.check_structure(), Ok(()));
        if frame % 2 == 0 {
            held.push((bp.snapshot(), Reference::new(&model)?, frame + 2));
        }
        let (due, later): (Vec<_>, Vec<_>) = held.into_iter().partition(|h| h.2 <= frame);
        held = later;
        for (snap, reference, _) in due {
            check_snapshot(&snap, &reference, &mut rng, side)?;
        }
    }
    Ok(())
}

#[test]
fn quadtree_snapshots_answer_for_the_boxes_they_were_taken_with() -> Result<(), Error> {
    snapshots_stay_exact(&mut QuadTree::new(Config::default()), 1)?;
    let mut settings = QuadTreeSettings::default();
    settings.layer_groups = vec![LayerMask::of(Layer(1)), LayerMask::ALL];
    snapshots_stay_exact(
        &mut QuadTree::with_settings(Config::default(), settings)?,
        2,
    )?;
    // Proxies out of the world's bounds are held by no tree: the snapshot copies them.
    let world = Aabb::new([0.0; 3], [25.0; 3]);
    snapshots_stay_exact(
        &mut QuadTree::new(Config::default().with_world_bounds(world)),
        3,
    )
}

/// Auto hands the snapshot to the engine it runs on: shared trees on QuadTree, a tree built
/// over the boxes on the others.
#[test]
fn auto_snapshots_answer_for_the_boxes_they_were_taken_with() -> Result<(), Error> {
    let mut on_tree = Auto::new(Config::default());
    on_tree.pin(Some(Algorithm::QuadTree))?;
    snapshots_stay_exact(&mut on_tree, 8)?;
    snapshots_stay_exact(&mut Auto::new(Config::default()), 9)
}

/// Through the trait, as `broadphase::new` hands out every algorithm.
#[test]
fn boxed_broad_phases_give_snapshots_too() -> Result<(), Error> {
    for (seed, &algorithm) in (10..).zip(Algorithm::ALL.iter()) {
        let mut bp = broadphase::new(algorithm, Config::default());
        snapshots_stay_exact(bp.as_mut(), seed)?;
    }
    Ok(())
}

#[test]
fn other_algorithms_snapshots_answer_for_the_boxes_they_were_taken_with() -> Result<(), Error> {
    snapshots_stay_exact(&mut Abp::new(Config::default()), 4)?;
    snapshots_stay_exact(&mut Sap::new(Config::default()), 5)?;
    snapshots_stay_exact(&mut Grid::new(Config::default()), 6)?;
    snapshots_stay_exact(&mut BruteForce::new(Config::default()), 7)
}

/// The same calls, once with snapshots held across updates (so that every update copies the
/// trees it writes) and once without: the events and pairs are the same.
#[test]
fn holding_snapshots_changes_no_event() -> Result<(), Error> {
    let run = |hold: bool| -> Result<Vec<PairEvents>, Error> {
        let mut bp = QuadTree::new(Config::default());
        let mut model = Model::new();
        let mut rng = SplitMix64::new(11);
        let mut events = Vec::new();
        let mut kept = Vec::new();
        for _ in 0..60 {
            churn(&mut bp, &mut model, &mut rng, 30.0);
            if hold {
                kept.push(bp.snapshot());
                if kept.len() > 3 {
                    kept.remove(0);
                }
            }
            events.push(bp.update()?.clone());
            assert_eq!(bp.check_structure(), Ok(()));
        }
        Ok(events)
    };
    assert_eq!(run(true)?, run(false)?);
    Ok(())
}

/// One thread updates a QuadTree and publishes a snapshot after every update with a copy of
/// its boxes; four threads query the latest snapshot all along and check each answer against
/// those boxes.
#[test]
fn many_threads_query_snapshots_while_one_updates() -> Result<(), Error> {
    type Published = Option<(Arc<Snapshot>, Arc<Vec<(ProxyId, Aabb)>>)>;
    let latest: Arc<Mutex<Published>> = Arc::new(Mutex::new(None));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let side = 60.0;
    let readers: Vec<_> = (0..4u64)
        .map(|k| {
            let latest = Arc::clone(&latest);
            let done = Arc::clone(&done);
            std::thread::spawn(move || -> Result<usize, Error> {
                let mut rng = SplitMix64::new(100 + k);
                let mut checked = 0;
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    let Some((snap, boxes)) = latest.lock().ok().and_then(|g| g.clone()) else {
                        std::thread::yield_now();
                        continue;
                    };
                    for _ in 0..20 {
                        let q = random_box(&mut rng, side).inflated(3.0);
                        let got = sorted(snap.query_aabb_vec(q, LayerMask::ALL)?);
                        let want: Vec<ProxyId> = sorted(
                            boxes
                                .iter()
                                .filter(|(_, b)| b.overlaps(&q))
                                .map(|x| x.0)
                                .collect(),
                        );
                        assert_eq!(got, want);
                        checked += 1;
                    }
                }
                Ok(checked)
            })
        })
        .collect();
    let mut bp = QuadTree::new(Config::default());
    let mut model = Model::new();
    let mut rng = SplitMix64::new(99);
    for _ in 0..2_000 {
        let (b, d) = (random_box(&mut rng, side), random_desc(&mut rng));
        model.insert(bp.insert(b, d)?, (b, d));
    }
    for _ in 0..60 {
        churn(&mut bp, &mut model, &mut rng, side);
        bp.update()?;
        let boxes = model.iter().map(|(&id, &(b, _))| (id, b)).collect();
        if let Ok(mut g) = latest.lock() {
            *g = Some((Arc::new(bp.snapshot()), Arc::new(boxes)));
        }
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    for r in readers {
        let checked = r.join().map_err(|_| Error::InvalidParameter {
            name: "reader thread",
            value: 0.0,
            expected: "no panic",
        })??;
        assert!(checked > 0);
    }
    Ok(())
}
