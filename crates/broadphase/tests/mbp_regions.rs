//! Mbp's regions against a reference model: random sequences of proxy changes, regions added
//! (with and without `populate`) and removed, proxies leaving every region and coming back,
//! origin shifts and queries. After each update, Mbp's events, pairs and out-of-bounds list
//! must be the model's.
//!
//! The model states the semantics in a few lines (see `Model::update`): a proxy belongs to a
//! set of regions; two proxies pair when their boxes overlap, the filter allows it, and their
//! sets share a region; a proxy with an empty set is out of bounds. At an update, a proxy that
//! changed (or was inserted, or lost a region that was removed, or every proxy when the first
//! region replaces the derived ones) gets every region its box touches; the others keep their
//! regions and join the regions added with `populate` that their box touches. Before any
//! region is added, Mbp derives its own and every proxy is in bounds.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use broadphase::{
    Aabb, AbpSettings, BroadPhase, Config, Error, Group, LayerMask, Mbp, MbpSettings, MbpTuning,
    Pair, ProxyDesc, ProxyId, RegionId, MAX_REGIONS,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Insert(Aabb, ProxyDesc),
    SetAabb(usize, Aabb),
    /// Moves a proxy far away, out of every region the strategy makes.
    Leave(usize),
    SetDesc(usize, ProxyDesc),
    Remove(usize),
    AddRegion(Aabb, bool),
    RemoveRegion(usize),
    /// Removes a region twice: the second must fail.
    RemoveRegionTwice(usize),
    AddBadRegion(usize),
    Shift([f32; 3]),
    Query(Aabb),
    Update,
}

fn coord() -> impl Strategy<Value = f32> {
    (-4i32..24).prop_map(|v| v as f32 * 0.5)
}

fn aabb() -> impl Strategy<Value = Aabb> {
    ([coord(), coord(), coord()], [0i32..5, 0i32..5, 0i32..5]).prop_map(|(min, size)| {
        Aabb::new(min, std::array::from_fn(|i| min[i] + size[i] as f32 * 0.5))
    })
}

/// Regions: lattice boxes of all sizes, now and then reaching to infinity on one side.
fn region() -> impl Strategy<Value = Aabb> {
    (
        [coord(), coord(), coord()],
        [0i32..16, 0i32..16, 0i32..16],
        0usize..8,
    )
        .prop_map(|(min, size, open)| {
            let mut r = Aabb::new(min, std::array::from_fn(|i| min[i] + size[i] as f32 * 0.5));
            match open {
                0 => r.max[0] = f32::INFINITY,
                1 => r.min[2] = f32::NEG_INFINITY,
                _ => {}
            }
            r
        })
}

fn desc() -> impl Strategy<Value = ProxyDesc> {
    (0u32..4, 0u32..3).prop_map(|(kind, group)| {
        let d = if kind == 0 {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        };
        if group == 0 {
            d
        } else {
            d.with_group(Group(group))
        }
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (aabb(), desc()).prop_map(|(a, d)| Op::Insert(a, d)),
        10 => (any::<usize>(), aabb()).prop_map(|(i, a)| Op::SetAabb(i, a)),
        3 => any::<usize>().prop_map(Op::Leave),
        2 => (any::<usize>(), desc()).prop_map(|(i, d)| Op::SetDesc(i, d)),
        4 => any::<usize>().prop_map(Op::Remove),
        5 => (region(), any::<bool>()).prop_map(|(r, p)| Op::AddRegion(r, p)),
        3 => any::<usize>().prop_map(Op::RemoveRegion),
        1 => any::<usize>().prop_map(Op::RemoveRegionTwice),
        1 => (0usize..3).prop_map(Op::AddBadRegion),
        1 => prop::array::uniform3((-4i32..4).prop_map(|v| v as f32 * 0.5)).prop_map(Op::Shift),
        3 => aabb().prop_map(Op::Query),
        10 => Just(Op::Update),
    ]
}

#[derive(Clone, Debug)]
struct Obj {
    aabb: Aabb,
    desc: ProxyDesc,
    regions: BTreeSet<RegionId>,
    /// Changed since the last update (or never placed).
    changed: bool,
}

/// The reference: the semantics of the module docs, with no structure at all.
#[derive(Default)]
struct Model {
    objects: BTreeMap<ProxyId, Obj>,
    /// Live regions (added ones), with their bounds.
    regions: BTreeMap<RegionId, Aabb>,
    added: Vec<(RegionId, bool)>,
    removed: BTreeSet<RegionId>,
    /// A region was added: the derived regions are gone.
    explicit: bool,
    /// The first region was added since the last update.
    switching: bool,
    pairs: BTreeSet<Pair>,
}

fn allowed(a: &ProxyDesc, b: &ProxyDesc) -> bool {
    !(a.is_fixed() && b.is_fixed()) && (a.group.0 == 0 || a.group != b.group)
}

impl Model {
    fn update(&mut self) -> (Vec<Pair>, Vec<Pair>) {
        let added: BTreeMap<RegionId, bool> = self.added.drain(..).collect();
        let removed = std::mem::take(&mut self.removed);
        let switching = std::mem::take(&mut self.switching);
        let regions = &self.regions;
        for o in self.objects.values_mut() {
            let touched = |o: &Obj| -> BTreeSet<RegionId> {
                regions
                    .iter()
                    .filter(|(_, r)| r.overlaps(&o.aabb))
                    .map(|(id, _)| *id)
                    .collect()
            };
            if o.changed || switching || o.regions.iter().any(|r| removed.contains(r)) {
                o.regions = touched(o);
            } else {
                for (id, r) in regions {
                    if added.get(id) == Some(&true) && r.overlaps(&o.aabb) {
                        o.regions.insert(*id);
                    }
                }
            }
            o.changed = false;
        }
        let objs: Vec<(&ProxyId, &Obj)> = self.objects.iter().collect();
        let mut next = BTreeSet::new();
        for (i, (ia, a)) in objs.iter().enumerate() {
            for (ib, b) in &objs[i + 1..] {
                let share = !self.explicit || a.regions.intersection(&b.regions).next().is_some();
                if a.aabb.overlaps(&b.aabb) && allowed(&a.desc, &b.desc) && share {
                    next.insert(Pair::new(**ia, **ib));
                }
            }
        }
        let created = next.difference(&self.pairs).copied().collect();
        let deleted = self.pairs.difference(&next).copied().collect();
        self.pairs = next;
        (created, deleted)
    }

    fn out_of_bounds(&self) -> Vec<ProxyId> {
        if !self.explicit {
            return Vec::new();
        }
        self.objects
            .iter()
            .filter(|(_, o)| o.regions.is_empty())
            .map(|(id, _)| *id)
            .collect()
    }
}

/// Runs `ops` on `mbp` and the model; describes the first difference.
fn run(mbp: &mut Mbp, model: &mut Model, ops: &[Op]) -> Result<(), String> {
    let mut live: Vec<ProxyId> = model.objects.keys().copied().collect();
    let mut region_ids: Vec<RegionId> = model.regions.keys().copied().collect();
    let far = Aabb::new([100.0; 3], [101.0; 3]);
    for (step, op) in ops.iter().enumerate() {
        let at = |what: &str| format!("op {step} ({what})");
        let pick = |v: &[ProxyId], i: usize| (!v.is_empty()).then(|| v[i % v.len()]);
        match op {
            Op::Insert(aabb, desc) => {
                let id = mbp.insert(*aabb, *desc).map_err(|e| at(&e.to_string()))?;
                live.push(id);
                model.objects.insert(
                    id,
                    Obj {
                        aabb: *aabb,
                        desc: *desc,
                        regions: BTreeSet::new(),
                        changed: true,
                    },
                );
            }
            Op::SetAabb(..) | Op::Leave(_) => {
                let (i, aabb) = match op {
                    Op::SetAabb(i, aabb) => (*i, *aabb),
                    Op::Leave(i) => (*i, far),
                    _ => continue,
                };
                let Some(id) = pick(&live, i) else { continue };
                mbp.set_aabb(id, aabb).map_err(|e| at(&e.to_string()))?;
                if let Some(o) = model.objects.get_mut(&id) {
                    o.aabb = aabb;
                    o.changed = true;
                }
            }
            Op::SetDesc(i, desc) => {
                let Some(id) = pick(&live, *i) else { continue };
                mbp.set_desc(id, *desc).map_err(|e| at(&e.to_string()))?;
                if let Some(o) = model.objects.get_mut(&id) {
                    o.desc = *desc;
                    o.changed = true;
                }
            }
            Op::Remove(i) => {
                let Some(id) = pick(&live, *i) else { continue };
                live.retain(|x| *x != id);
                mbp.remove(id).map_err(|e| at(&e.to_string()))?;
                model.objects.remove(&id);
            }
            Op::AddRegion(bounds, populate) => {
                let live_regions = model.regions.len();
                match mbp.add_region(*bounds, *populate) {
                    Ok(id) => {
                        region_ids.push(id);
                        model.regions.insert(id, *bounds);
                        model.added.push((id, *populate));
                        if !model.explicit {
                            model.explicit = true;
                            model.switching = true;
                        }
                    }
                    Err(Error::TooManyRegions { limit }) if limit == MAX_REGIONS => {
                        if live_regions < MAX_REGIONS - 8 {
                            return Err(at("region refused with room left"));
                        }
                    }
                    Err(e) => return Err(at(&format!("add_region: {e}"))),
                }
            }
            Op::RemoveRegion(i) | Op::RemoveRegionTwice(i) => {
                if region_ids.is_empty() {
                    continue;
                }
                let id = region_ids.remove(i % region_ids.len());
                mbp.remove_region(id)
                    .map_err(|e| at(&format!("remove_region: {e}")))?;
                model.regions.remove(&id);
                model.added.retain(|(x, _)| *x != id);
                model.removed.insert(id);
                if matches!(op, Op::RemoveRegionTwice(_)) {
                    match mbp.remove_region(id) {
                        Err(Error::UnknownRegion { id: bad }) if bad == id => {}
                        other => return Err(at(&format!("second remove_region: {other:?}"))),
                    }
                }
            }
            Op::AddBadRegion(kind) => {
                let mut bad = Aabb::new([0.0; 3], [1.0; 3]);
                match kind {
                    0 => bad.min[1] = f32::NAN,
                    1 => bad.min[2] = 2.0,
                    _ => bad.max[0] = f32::NAN,
                }
                let before = mbp.regions().len();
                match mbp.add_region(bad, true) {
                    Err(Error::NonFiniteAabb { .. } | Error::InvertedAabb { .. }) => {}
                    other => return Err(at(&format!("bad region accepted: {other:?}"))),
                }
                if mbp.regions().len() != before {
                    return Err(at("a refused region changed the regions"));
                }
            }
            Op::Shift(shift) => {
                mbp.shift_origin(*shift).map_err(|e| at(&e.to_string()))?;
                let offset = shift.map(|v| -v);
                for o in model.objects.values_mut() {
                    o.aabb = o.aabb.translated(offset);
                    o.changed = true;
                }
                for r in model.regions.values_mut() {
                    *r = r.translated(offset);
                }
            }
            Op::Query(q) => {
                let mut got = Vec::new();
                mbp.query_aabb(*q, LayerMask::ALL, &mut |id| {
                    got.push(id);
                    ControlFlow::Continue(())
                })
                .map_err(|e| at(&e.to_string()))?;
                got.sort_unstable();
                let want: Vec<ProxyId> = model
                    .objects
                    .iter()
                    .filter(|(_, o)| o.aabb.overlaps(q))
                    .map(|(id, _)| *id)
                    .collect();
                if got != want {
                    return Err(at(&format!("query {q:?}: {got:?}, expected {want:?}")));
                }
            }
            Op::Update => {
                let events = mbp.update().map_err(|e| at(&e.to_string()))?.clone();
                let (created, deleted) = model.update();
                if events.created() != created || events.deleted() != deleted {
                    return Err(at(&format!(
                        "events: created {:?} deleted {:?}, expected created {created:?} \
                         deleted {deleted:?}",
                        events.created(),
                        events.deleted()
                    )));
                }
                let mut pairs = mbp.pairs().to_vec();
                pairs.sort_unstable();
                if pairs != model.pairs.iter().copied().collect::<Vec<_>>() {
                    return Err(at("persistent pairs differ"));
                }
                let oob = mbp.out_of_bounds();
                if oob != model.out_of_bounds() {
                    return Err(at(&format!(
                        "out of bounds: {oob:?}, expected {:?}",
                        model.out_of_bounds()
                    )));
                }
                let counted: usize = mbp.regions().iter().map(|r| r.fixed + r.dynamic).sum();
                let memberships: usize = model.objects.values().map(|o| o.regions.len()).sum();
                if model.explicit && counted != memberships {
                    return Err(at(&format!(
                        "region populations sum to {counted}, memberships to {memberships}"
                    )));
                }
            }
        }
    }
    Ok(())
}

fn tiny() -> MbpTuning {
    let mut s = MbpTuning::default();
    s.boxes_per_region = 4;
    s.cells = {
        let mut s = AbpSettings::default();
        s.boxes_per_column = 2;
        s.min_column_extents = 0.0;
        s.min_proxies_for_columns = 0;
        s
    };
    s
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: broadphase::testing::scaled_cases(1500),
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    /// Starting with derived regions: the first added region replaces them.
    #[test]
    fn regions_added_to_a_running_mbp(ops in prop::collection::vec(op(), 1..100), small_cells in any::<bool>()) {
        let mut mbp = if small_cells {
            Mbp::with_tuning(Config::default(), tiny()).expect("valid")
        } else {
            Mbp::new(Config::default())
        };
        let mut model = Model::default();
        let mut ops = ops;
        ops.push(Op::Update);
        prop_assert_eq!(run(&mut mbp, &mut model, &ops), Ok(()));
    }

    /// Starting from a grid of regions (Unreal's set-up, z up), then changing them.
    #[test]
    fn regions_of_a_grid_changed_at_run_time(ops in prop::collection::vec(op(), 1..100), subdivisions in 1u32..5) {
        let settings = MbpSettings::unreal(Aabb::new([-2.0; 3], [12.0; 3]), subdivisions);
        let mut mbp = Mbp::with_settings(Config::default(), &settings).expect("valid");
        let mut model = Model { explicit: true, ..Model::default() };
        for (id, bounds) in mbp.region_ids().into_iter().zip(settings.regions().expect("valid")) {
            model.regions.insert(id, bounds);
        }
        let mut ops = ops;
        ops.push(Op::Update);
        prop_assert_eq!(run(&mut mbp, &mut model, &ops), Ok(()));
    }
}

#[test]
fn the_257th_region_is_refused() {
    let mut mbp = Mbp::new(Config::default());
    let mut ids = Vec::new();
    for i in 0..MAX_REGIONS {
        let x = i as f32;
        ids.push(
            mbp.add_region(Aabb::new([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]), false)
                .expect("room"),
        );
    }
    let extra = Aabb::new([-5.0; 3], [-4.0; 3]);
    assert_eq!(
        mbp.add_region(extra, true),
        Err(Error::TooManyRegions { limit: MAX_REGIONS })
    );
    assert_eq!(mbp.regions().len(), MAX_REGIONS);
    mbp.update().expect("update");
    // A removed region frees its index at the next update.
    mbp.remove_region(ids[7]).expect("live");
    assert!(mbp.add_region(extra, true).is_err());
    mbp.update().expect("update");
    let id = mbp.add_region(extra, true).expect("a freed index");
    assert_eq!(id.index(), 7);
    assert_ne!(id, ids[7], "a new generation");
    assert_eq!(
        mbp.remove_region(ids[7]),
        Err(Error::UnknownRegion { id: ids[7] })
    );
}

#[test]
fn unreal_set_up_makes_the_grid_and_the_four_outer_regions() {
    let inner = Aabb::new([-100.0, -100.0, -10.0], [100.0, 100.0, 10.0]);
    let outer = Aabb::new([-300.0, -200.0, -50.0], [300.0, 200.0, 50.0]);
    let settings = {
        let mut s = MbpSettings::unreal(inner, 16);
        s.outer_bounds = Some(outer);
        s
    };
    let mut mbp = Mbp::with_settings(Config::default(), &settings).expect("valid");
    let regions = mbp.regions();
    assert_eq!(regions.len(), 15 * 15 + 4, "16 subdivisions clamp to 15");
    // A proxy in the ring is in bounds (in an outer region); one beyond it is not.
    let ring = mbp
        .insert(
            Aabb::new([-250.0, 0.0, 0.0], [-249.0, 1.0, 1.0]),
            ProxyDesc::dynamic(),
        )
        .expect("valid");
    let beyond = mbp
        .insert(
            Aabb::new([-350.0, 0.0, 0.0], [-349.0, 1.0, 1.0]),
            ProxyDesc::dynamic(),
        )
        .expect("valid");
    mbp.update().expect("update");
    assert_eq!(mbp.out_of_bounds(), vec![beyond]);
    let outer_regions = &mbp.regions()[225..];
    assert_eq!(outer_regions.iter().map(|r| r.dynamic).sum::<usize>(), 1);
    let _ = ring;
    // Without outer bounds, 16 subdivisions are kept: 256 regions.
    let plain =
        Mbp::with_settings(Config::default(), &MbpSettings::unreal(inner, 40)).expect("valid");
    assert_eq!(plain.regions().len(), 256);
}

#[test]
fn a_region_past_65535_boxes_splits_instead_of_overflowing() {
    // PhysX's regions hold at most 65,535 boxes. A sheet of 400 × 180 boxes in one region,
    // each touching its neighbours along x: all 399 × 180 pairs are found, and the region has
    // been cut into cells.
    let (w, h) = (400, 180);
    let region = Aabb::new([-1.0; 3], [w as f32 + 1.0, 1.0, h as f32 + 1.0]);
    let mut mbp =
        Mbp::with_settings(Config::default(), &MbpSettings::new(region, 1)).expect("valid");
    let items: Vec<(Aabb, ProxyDesc)> = (0..w * h)
        .map(|k| {
            let (x, z) = ((k % w) as f32, (k / w) as f32);
            let b = Aabb::new([x, 0.0, z], [x + 1.0, 0.5, z + 0.5]);
            (b, ProxyDesc::dynamic())
        })
        .collect();
    mbp.insert_batch(&items).expect("valid");
    assert_eq!(mbp.update().expect("update").created().len(), (w - 1) * h);
    let info = &mbp.regions()[0];
    assert_eq!(info.dynamic, w * h);
    assert!(info.cells > 1, "{info:?}");
    assert!(mbp.out_of_bounds().is_empty());
}

#[test]
fn leaving_and_re_entering_the_world() {
    let world = Aabb::new([0.0; 3], [10.0; 3]);
    let mut mbp =
        Mbp::with_settings(Config::default(), &MbpSettings::new(world, 2)).expect("valid");
    let a = mbp
        .insert(Aabb::new([1.0; 3], [2.0; 3]), ProxyDesc::dynamic())
        .expect("valid");
    let b = mbp
        .insert(Aabb::new([1.5; 3], [3.0; 3]), ProxyDesc::dynamic())
        .expect("valid");
    assert_eq!(mbp.update().expect("update").created(), &[Pair::new(a, b)]);
    // Both leave together: still overlapping, but out of bounds, so the pair goes.
    mbp.set_aabb(a, Aabb::new([20.0; 3], [21.0; 3]))
        .expect("valid");
    mbp.set_aabb(b, Aabb::new([20.5; 3], [22.0; 3]))
        .expect("valid");
    assert_eq!(mbp.update().expect("update").deleted(), &[Pair::new(a, b)]);
    assert_eq!(mbp.out_of_bounds(), vec![a, b]);
    // A region added where they are, populated: they are back, and so is their pair.
    mbp.add_region(Aabb::new([15.0; 3], [25.0; 3]), true)
        .expect("room");
    assert_eq!(mbp.update().expect("update").created(), &[Pair::new(a, b)]);
    assert!(mbp.out_of_bounds().is_empty());
    let regions = mbp.regions();
    assert_eq!(regions.len(), 5);
    let added = regions.last().expect("the region just added");
    assert_eq!((added.fixed, added.dynamic), (0, 2));
    assert!(added.cells >= 1 && added.cuts.len() + 2 >= added.cells);
}
