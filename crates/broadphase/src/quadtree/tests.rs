//! The tree's own invariants, checked after every update of random sequences, and the shape
//! promises: single insertions do not degenerate, removing everything frees everything.

use proptest::prelude::*;

use super::*;
use crate::split_mix::SplitMix64;
use crate::{BroadPhase, Group};

impl QuadTree {
    /// Checks every tree (links, exact boxes, counts, heights, no marks left) and that every
    /// live proxy is in the tree its description asks for.
    fn check_invariants(&self) {
        assert_eq!(self.engine.check_structure(&self.store), Ok(()));
        assert_eq!(self.check_structure(), Ok(()));
        // The stats' figures are read from counts: they must agree with a walk.
        let Figures::QuadTree(f) = self.stats().figures else {
            panic!("QuadTree reports its own figures");
        };
        let (mut lanes, mut nodes) = (0, 0);
        for t in &self.engine.trees {
            for n in (0..t.nodes.len() as u32).filter(|&n| !t.is_free(n)) {
                lanes += t.nodes[n as usize].len();
                nodes += 1;
            }
        }
        assert_eq!(f.nodes, nodes as u64);
        assert_eq!(
            f.fill_percent,
            (100 * lanes / (LANES * nodes).max(1)) as u64
        );
        assert!(f.height >= self.depth() as u64);
        assert_eq!(f.height == 0, self.depth() == 0);
    }
}

fn random_box(rng: &mut SplitMix64, side: f32) -> Aabb {
    let min = [0; 3].map(|_| rng.unit() * side);
    let size = [0; 3].map(|_| 0.5 + 1.5 * rng.unit());
    Aabb::new(min, std::array::from_fn(|i| min[i] + size[i]))
}

/// Unit cubes on a 2 m lattice, x fastest: Jolt's scene, in its worst insertion order.
fn lattice(n: usize) -> Vec<Aabb> {
    let m = (n as f64).cbrt().ceil() as usize;
    (0..n)
        .map(|i| {
            let c = [i % m, (i / m) % m, i / (m * m)].map(|k| 2.0 * k as f32);
            Aabb::new(c, c.map(|v| v + 1.0))
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Step {
    Insert(u64, bool),
    Move(usize, u64),
    Remove(usize),
    Fix(usize, bool, u8),
    Update,
    Optimize,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (any::<u64>(), any::<bool>()).prop_map(|(s, f)| Step::Insert(s, f)),
        8 => (any::<usize>(), any::<u64>()).prop_map(|(i, s)| Step::Move(i, s)),
        3 => any::<usize>().prop_map(Step::Remove),
        1 => (any::<usize>(), any::<bool>(), 0u8..3).prop_map(|(i, f, l)| Step::Fix(i, f, l)),
        3 => Just(Step::Update),
        1 => Just(Step::Optimize),
    ]
}

fn settings() -> impl Strategy<Value = QuadTreeSettings> {
    (
        prop_oneof![
            Just(vec![LayerMask::ALL]),
            Just(vec![LayerMask::of(Layer(1)), LayerMask::ALL]),
        ],
        0u32..7,
        prop_oneof![Just(0.0), Just(64.0), Just(f64::INFINITY)],
    )
        .prop_map(
            |(layer_groups, rebuild_depth, rebuild_cost)| QuadTreeSettings {
                layer_groups,
                rebuild_depth,
                rebuild_cost,
                background_rebuild: false,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random edits in batches of various sizes; after each update every invariant holds.
    #[test]
    fn invariants_hold_after_every_update(
        settings in settings(),
        steps in prop::collection::vec(step(), 1..120),
        burst in 0usize..300,
    ) {
        let mut qt = QuadTree::with_settings(Config::default(), settings).unwrap();
        let mut rng = SplitMix64::new(burst as u64);
        let side = 12.0;
        let mut live: Vec<ProxyId> = Vec::new();
        // A first batch of some size, then single edits.
        let items: Vec<(Aabb, ProxyDesc)> =
            (0..burst).map(|_| (random_box(&mut rng, side), ProxyDesc::dynamic())).collect();
        live.extend(qt.insert_batch(&items).unwrap());
        qt.update().unwrap();
        qt.check_invariants();
        for s in steps {
            match s {
                Step::Insert(seed, fixed) => {
                    let mut r = SplitMix64::new(seed);
                    let d = if fixed { ProxyDesc::fixed() } else { ProxyDesc::dynamic() };
                    live.push(qt.insert(random_box(&mut r, side), d).unwrap());
                }
                Step::Move(i, seed) if !live.is_empty() => {
                    let mut r = SplitMix64::new(seed);
                    qt.set_aabb(live[i % live.len()], random_box(&mut r, side)).unwrap();
                }
                Step::Remove(i) if !live.is_empty() => {
                    let id = live.swap_remove(i % live.len());
                    qt.remove(id).unwrap();
                }
                Step::Fix(i, fixed, layer) if !live.is_empty() => {
                    let d = if fixed { ProxyDesc::fixed() } else { ProxyDesc::dynamic() };
                    qt.set_desc(live[i % live.len()], d.with_layer(Layer(layer)).with_group(Group(0)))
                        .unwrap();
                }
                Step::Update => {
                    qt.update().unwrap();
                    qt.check_invariants();
                }
                Step::Optimize => qt.optimize(),
                _ => {}
            }
        }
        qt.update().unwrap();
        qt.check_invariants();
    }
}

/// The depth of a tree of `n` proxies built as one batch, and the one reached by inserting them
/// one at a time with an update after each: Jolt's chain would be hundreds of levels deep.
#[test]
fn single_insertions_do_not_degenerate() -> Result<(), Error> {
    for boxes in [lattice(4_000), {
        let mut rng = SplitMix64::new(5);
        (0..4_000).map(|_| random_box(&mut rng, 40.0)).collect()
    }] {
        let items: Vec<(Aabb, ProxyDesc)> =
            boxes.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
        let mut batch = QuadTree::new(Config::default());
        batch.insert_batch(&items)?;
        batch.update()?;
        let mut single = QuadTree::new(Config::default());
        for &(b, d) in &items {
            single.insert(b, d)?;
            single.update()?;
        }
        single.check_invariants();
        assert_eq!(single.pairs().len(), batch.pairs().len());
        let (db, ds) = (batch.depth(), single.depth());
        assert!(ds <= 2 * db, "one by one: depth {ds}, batch: {db}");
        // Buffered: many single insertions before one update are one batch.
        let mut buffered = QuadTree::new(Config::default());
        for &(b, d) in &items {
            buffered.insert(b, d)?;
        }
        buffered.update()?;
        assert_eq!(buffered.depth(), db);
        assert_eq!(buffered.node_count(), batch.node_count());
    }
    Ok(())
}

#[test]
fn removing_everything_frees_every_node() -> Result<(), Error> {
    let mut qt = QuadTree::new(Config::default());
    let mut rng = SplitMix64::new(9);
    let items: Vec<(Aabb, ProxyDesc)> = (0..3_000)
        .map(|i| {
            let d = if i % 3 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            (random_box(&mut rng, 30.0), d)
        })
        .collect();
    let ids = qt.insert_batch(&items)?;
    qt.update()?;
    assert!(qt.node_count() > 0);
    let full = qt.stats().memory_bytes;
    // Half, one update, then the rest.
    for id in &ids[..1_500] {
        qt.remove(*id)?;
    }
    qt.update()?;
    qt.check_invariants();
    for id in &ids[1_500..] {
        qt.remove(*id)?;
    }
    qt.update()?;
    qt.check_invariants();
    assert_eq!(qt.node_count(), 0);
    assert!(qt.engine.trees.iter().all(|t| t.nodes.capacity() == 0));
    assert!(qt.stats().memory_bytes < full);
    Ok(())
}

#[test]
fn optimize_keeps_the_answers_and_the_dump_marks_changes() -> Result<(), Error> {
    let mut qt = QuadTree::new(Config::default());
    let mut rng = SplitMix64::new(3);
    let items: Vec<(Aabb, ProxyDesc)> = (0..500)
        .map(|_| (random_box(&mut rng, 15.0), ProxyDesc::dynamic()))
        .collect();
    let ids = qt.insert_batch(&items)?;
    qt.update()?;
    let pairs = qt.pairs().len();
    qt.set_aabb(ids[7], Aabb::new([100.0; 3], [101.0; 3]))?;
    let changed_proxies = |qt: &QuadTree| -> Vec<ProxyId> {
        let nodes = qt.dump().into_iter().flat_map(|t| t.nodes);
        let lanes = nodes.flat_map(|n| n.lanes);
        lanes
            .filter_map(|(_, c)| match c {
                ChildDump::Proxy { id, changed: true } => Some(id),
                _ => None,
            })
            .collect()
    };
    assert_eq!(changed_proxies(&qt), [ids[7]]);
    assert!(qt.dump()[1].nodes[0].changed, "the root above it is marked");
    qt.optimize();
    qt.update()?;
    qt.check_invariants();
    assert!(qt.pairs().len() <= pairs);
    assert!(changed_proxies(&qt).is_empty());
    assert!(qt.dump().iter().flat_map(|t| &t.nodes).all(|n| !n.changed));
    Ok(())
}

#[test]
fn probes_count_their_work() -> Result<(), Error> {
    let mut qt = QuadTree::new(Config::default());
    let boxes = lattice(1_000);
    let items: Vec<(Aabb, ProxyDesc)> = boxes.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
    qt.insert_batch(&items)?;
    qt.update()?;
    let mut hits = 0;
    let q = Aabb::new([3.0; 3], [7.0; 3]);
    let stats = qt.probe_aabb(q, LayerMask::ALL, &mut |_| {
        hits += 1;
        ControlFlow::Continue(())
    })?;
    // Cubes at 2k..2k+1: 2, 4 and 6 on each axis touch [3, 7].
    assert_eq!(hits, 27);
    assert_eq!(stats.hits, 27);
    assert!(stats.proxies_visited >= 27);
    assert!(stats.nodes_visited >= 1 && stats.nodes_visited < qt.node_count() as u64);
    Ok(())
}

#[test]
fn settings_are_checked() {
    let bad = QuadTreeSettings {
        layer_groups: Vec::new(),
        ..QuadTreeSettings::default()
    };
    assert!(matches!(
        QuadTree::with_settings(Config::default(), bad),
        Err(Error::InvalidParameter { .. })
    ));
}

/// Drifting boxes, every one moved at every update: the walk grows dearer until the tree is
/// rebuilt. The rebuilds must happen, and every answer on the way must be BruteForce's.
#[test]
fn rebuilds_happen_and_change_no_answer() -> Result<(), Error> {
    use crate::testing::{check_sequence, Op, Pick};
    let n = 400;
    let mut rng = SplitMix64::new(11);
    let items: Vec<(Aabb, ProxyDesc)> = (0..n)
        .map(|i| {
            let d = if i % 5 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            (random_box(&mut rng, 14.0), d)
        })
        .collect();
    let mut ops = vec![Op::InsertBatch(items), Op::Update];
    for _ in 0..40 {
        for i in 0..n {
            let v = [0; 3].map(|_| (rng.unit() - 0.5) * 0.6);
            ops.push(Op::Nudge(Pick(i), v));
        }
        ops.push(Op::Update);
    }
    let settings = QuadTreeSettings {
        rebuild_cost: 0.0,
        ..QuadTreeSettings::default()
    };
    let make = || -> Box<dyn BroadPhase> {
        Box::new(QuadTree::with_settings(Config::default(), settings.clone()).unwrap())
    };
    check_sequence(&make, &ops).unwrap();
    // Replayed directly, to read the counters and check the tree after each update.
    let mut qt = QuadTree::with_settings(Config::default(), settings.clone())?;
    let mut ids = Vec::new();
    for op in &ops {
        match op {
            Op::InsertBatch(items) => ids = qt.insert_batch(items)?,
            Op::Nudge(Pick(i), v) => {
                let id = ids[*i % ids.len()];
                qt.set_aabb(id, qt.aabb(id)?.translated(*v))?;
            }
            _ => {
                qt.update()?;
                qt.check_invariants();
            }
        }
    }
    let Figures::QuadTree(figures) = qt.stats().figures else {
        panic!("a QuadTree reports QuadTree figures")
    };
    let rebuilds = figures.fast_rebuilds;
    assert!(rebuilds > 0, "no rebuild in 40 frames of drift");
    Ok(())
}
