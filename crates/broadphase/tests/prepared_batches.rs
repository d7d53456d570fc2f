//! Prepared batches: committing one is `insert_batch` of its items, event for event; dropping
//! one changes nothing; its subtrees are linked in, not rebuilt.

use broadphase::testing::SplitMix64;
use broadphase::{
    Aabb, BroadPhase, Config, Error, Figures, Layer, LayerMask, PreparedBatch, ProxyDesc, ProxyId,
    QuadTree, QuadTreeSettings,
};

fn items(rng: &mut SplitMix64, n: usize, side: f32) -> Vec<(Aabb, ProxyDesc)> {
    (0..n)
        .map(|_| {
            let min = [0; 3].map(|_| rng.unit() * side);
            let size = [0; 3].map(|_| 0.2 + 2.0 * rng.unit());
            let d = if rng.below(4) == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            (
                Aabb::new(min, std::array::from_fn(|i| min[i] + size[i])),
                d.with_layer(Layer(rng.below(3) as u8)),
            )
        })
        .collect()
}

fn settings() -> QuadTreeSettings {
    let mut s = QuadTreeSettings::default();
    s.layer_groups = vec![LayerMask::of(Layer(2)), LayerMask::ALL];
    s
}

fn full_rebuilds(bp: &QuadTree) -> u64 {
    match bp.stats().figures {
        Figures::QuadTree(f) => f.full_rebuilds,
        _ => 0,
    }
}

/// Twins fed the same calls, one committing prepared batches (built on another thread), the
/// other inserting the same items: the same ids, events and pairs at every update, through
/// moves and removals of the new proxies before the update that links them.
#[test]
fn commit_is_insert_batch_event_for_event() -> Result<(), Error> {
    let mut committed = QuadTree::with_settings(Config::default(), settings())?;
    let mut inserted = QuadTree::with_settings(Config::default(), settings())?;
    let mut rng = SplitMix64::new(7);
    let side = 50.0;
    let mut live: Vec<ProxyId> = Vec::new();
    for frame in 0..40 {
        let n = [0, 1, 30, 400, 3000][rng.below(5) as usize];
        let batch = items(&mut rng, n, side);
        let copy = batch.clone();
        let prepared = std::thread::spawn(move || PreparedBatch::new(&settings(), copy))
            .join()
            .map_err(|_| Error::InvalidParameter {
                name: "thread",
                value: 0.0,
                expected: "no panic",
            })??;
        let a = committed.commit(prepared)?;
        let b = inserted.insert_batch(&batch)?;
        assert_eq!(a, b, "frame {frame}: ids");
        // The check holds between a commit and the update that links it.
        assert_eq!(committed.check_structure(), Ok(()));
        live.extend(a);
        // Some proxies move or leave, new ones among them (their part is then built as usual).
        let mut k = 0;
        while k < live.len() {
            let id = live[k];
            match rng.below(12) {
                0 => {
                    let b = items(&mut rng, 1, side)[0].0;
                    committed.set_aabb(id, b)?;
                    inserted.set_aabb(id, b)?;
                }
                1 => {
                    committed.remove(id)?;
                    inserted.remove(id)?;
                    live.swap_remove(k);
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        let ea = committed.update()?.clone();
        let eb = inserted.update()?.clone();
        assert_eq!(ea, eb, "frame {frame}: events");
        assert_eq!(committed.pairs(), inserted.pairs());
        assert_eq!(committed.check_structure(), Ok(()));
    }
    Ok(())
}

/// A batch as large as the tree: inserted, the update rebuilds the tree around it; committed,
/// its subtree is linked in and nothing is rebuilt. The events are the same.
#[test]
fn a_committed_batch_is_linked_not_rebuilt() -> Result<(), Error> {
    let mut rng = SplitMix64::new(3);
    let first = items(&mut rng, 4_000, 80.0);
    let second = items(&mut rng, 4_000, 80.0);
    let mut committed = QuadTree::new(Config::default());
    let mut inserted = QuadTree::new(Config::default());
    committed.insert_batch(&first)?;
    inserted.insert_batch(&first)?;
    committed.update()?;
    inserted.update()?;
    let before = (full_rebuilds(&committed), full_rebuilds(&inserted));
    let prepared = committed.prepare_batch(second.clone())?;
    committed.commit(prepared)?;
    inserted.insert_batch(&second)?;
    assert_eq!(committed.update()?, inserted.update()?);
    assert_eq!(full_rebuilds(&committed), before.0);
    assert!(full_rebuilds(&inserted) > before.1);
    assert_eq!(committed.check_structure(), Ok(()));
    Ok(())
}

/// Preparing a batch and dropping it (Jolt's abort) leaves no trace: the next ids and events
/// are those of a broad phase that never saw it.
#[test]
fn a_dropped_batch_changes_nothing() -> Result<(), Error> {
    let mut rng = SplitMix64::new(5);
    let base = items(&mut rng, 500, 30.0);
    let extra = items(&mut rng, 200, 30.0);
    let mut a = QuadTree::new(Config::default());
    let mut b = QuadTree::new(Config::default());
    a.insert_batch(&base)?;
    b.insert_batch(&base)?;
    a.update()?;
    b.update()?;
    drop(a.prepare_batch(extra.clone())?);
    assert_eq!(a.insert_batch(&extra)?, b.insert_batch(&extra)?);
    assert_eq!(a.update()?, b.update()?);
    assert_eq!(a.pairs(), b.pairs());
    Ok(())
}

/// Bad items are refused when the batch is prepared; a batch prepared for other layer groups
/// still commits, as an ordinary insertion.
#[test]
fn bad_items_and_other_groups() -> Result<(), Error> {
    let bad = vec![(
        Aabb::new([0.0; 3], [f32::NAN, 1.0, 1.0]),
        ProxyDesc::dynamic(),
    )];
    assert!(PreparedBatch::new(&QuadTreeSettings::default(), bad).is_err());
    let mut rng = SplitMix64::new(9);
    let batch = items(&mut rng, 300, 20.0);
    let mut a = QuadTree::new(Config::default());
    let mut b = QuadTree::new(Config::default());
    a.commit(PreparedBatch::new(&settings(), batch.clone())?)?;
    b.insert_batch(&batch)?;
    assert_eq!(a.update()?, b.update()?);
    assert_eq!(a.check_structure(), Ok(()));
    Ok(())
}
