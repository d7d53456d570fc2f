//! A physics step's use of the events: every proxy an update's events name has a description
//! to read, removed ones included, on every algorithm.

use std::collections::{BTreeMap, BTreeSet};

use broadphase::testing::SplitMix64;
use broadphase::{Aabb, Algorithm, BroadPhase, Config, Error, ProxyDesc, ProxyId};

fn random_box(rng: &mut SplitMix64) -> Aabb {
    let c = [0, 1, 2].map(|_| (rng.next_u64() % 2000) as f32 / 100.0);
    Aabb::new(c.map(|x| x - 1.0), c.map(|x| x + 1.0))
}

/// Frames of moves, removals (some of proxies without pairs) and spawns into the freed slots;
/// after each update, `removed()` is exactly the dead proxies the deleted pairs name, with the
/// user data they were inserted with, and `event_desc` answers for every id of every event.
#[test]
fn every_proxy_the_events_name_has_its_description() -> Result<(), Error> {
    for &algorithm in Algorithm::ALL {
        let mut bp = broadphase::new(algorithm, Config::default());
        let mut rng = SplitMix64::new(11);
        // The caller's entities: user data = entity number.
        let mut entity_of: BTreeMap<ProxyId, u64> = BTreeMap::new();
        let mut next_entity = 0;
        let mut spawn = |bp: &mut Box<dyn BroadPhase>,
                         rng: &mut SplitMix64,
                         entity_of: &mut BTreeMap<ProxyId, u64>|
         -> Result<(), Error> {
            next_entity += 1;
            let desc = ProxyDesc::dynamic().with_user_data(next_entity);
            entity_of.insert(bp.insert(random_box(rng), desc)?, next_entity);
            Ok(())
        };
        for _ in 0..300 {
            spawn(&mut bp, &mut rng, &mut entity_of)?;
        }
        bp.update()?;
        for frame in 0..12 {
            let live: Vec<ProxyId> = entity_of.keys().copied().collect();
            let mut gone = BTreeSet::new();
            for (i, &id) in live.iter().enumerate() {
                match rng.next_u64() % 10 {
                    0 => {
                        bp.remove(id)?;
                        gone.insert(id);
                    }
                    1..=3 => bp.set_aabb(id, random_box(&mut rng))?,
                    // Re-described: a removal later keeps the new description.
                    _ if i % 50 == 0 => {
                        let renamed = entity_of[&id] + 1_000_000;
                        bp.set_desc(id, ProxyDesc::dynamic().with_user_data(renamed))?;
                        entity_of.insert(id, renamed);
                    }
                    _ => {}
                }
            }
            bp.update()?;
            // Spawned after the update, into the freed slots: the events keep their data.
            for _ in 0..gone.len() {
                spawn(&mut bp, &mut rng, &mut entity_of)?;
            }
            let events = bp.events();
            let named_dead: BTreeSet<ProxyId> = events
                .deleted()
                .iter()
                .flat_map(|p| [p.a, p.b])
                .filter(|id| gone.contains(id))
                .collect();
            let removed: Vec<ProxyId> = events.removed().iter().map(|&(id, _)| id).collect();
            assert_eq!(
                removed,
                named_dead.iter().copied().collect::<Vec<_>>(),
                "{algorithm:?} frame {frame}"
            );
            for &(id, desc) in events.removed() {
                assert!(bp.desc(id).is_err(), "{id:?} was removed");
                assert_eq!(Some(&desc.user_data), entity_of.get(&id));
            }
            for pair in events.created().iter().chain(events.deleted()) {
                for id in [pair.a, pair.b] {
                    let desc = bp.event_desc(id)?;
                    if gone.contains(&id) {
                        assert_eq!(Some(&desc.user_data), entity_of.get(&id));
                    } else {
                        assert_eq!(desc, bp.desc(id)?);
                    }
                }
            }
            for id in &gone {
                entity_of.remove(id);
            }
        }
        // An id that is neither live nor named keeps its error.
        let stale = *entity_of.keys().next().expect("live proxies");
        bp.remove(stale)?;
        bp.update()?;
        bp.update()?;
        assert!(bp.event_desc(stale).is_err(), "{algorithm:?}");
    }
    Ok(())
}
