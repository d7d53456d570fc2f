//! Replaying a sequence on the algorithm and the oracle side by side ([`check_sequence`]),
//! with the structure checked after every update, and again on one thread for determinism.

use super::compare::{expect_err, same, same_answer, same_pairs, same_state};
use super::ops::{Op, Pick};
use crate::{Aabb, BroadPhase, BruteForce, Config, Error, Layer, Pair, ProxyDesc, ProxyId};

/// Replays `ops` on a fresh algorithm and on `BruteForce`, comparing every answer; then
/// replays it on a single thread and checks the algorithm gave identical events and pair
/// order. The algorithm's structure is checked ([`BroadPhase::check_structure`]) after every
/// update and at the end. Returns a description of the first difference.
pub fn check_sequence(make: &impl Fn() -> Box<dyn BroadPhase>, ops: &[Op]) -> Result<(), String> {
    check_sequence_against(make, &brute_force, ops)
}

/// The oracle of [`check_sequence`]: `BruteForce` on one thread.
pub(super) fn brute_force() -> Box<dyn BroadPhase> {
    Box::new(BruteForce::new(Config::default().with_parallel(false)))
}

/// [`check_sequence`] against the oracle `oracle` makes.
pub(super) fn check_sequence_against(
    make: &impl Fn() -> Box<dyn BroadPhase>,
    oracle: &impl Fn() -> Box<dyn BroadPhase>,
    ops: &[Op],
) -> Result<(), String> {
    let first = replay(make(), oracle(), ops)?;
    let (again, oracle) = (make(), oracle());
    let second = single_threaded(move || replay(again, oracle, ops))?;
    if first != second {
        return Err(
            "not deterministic: a second run of the same calls on one thread gave \
                    different ids, events or pair order"
                .to_string(),
        );
    }
    Ok(())
}

#[cfg(feature = "parallel")]
fn single_threaded<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    use std::sync::OnceLock;
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    let pool = POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok());
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

#[cfg(not(feature = "parallel"))]
fn single_threaded<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    f()
}

/// What a replay observed: per update, the events and the pair order; ids issued.
type Log = Vec<(Vec<Pair>, Vec<Pair>, Vec<Pair>, Vec<ProxyId>)>;

/// Every how many updates [`replay`] leaves `pairs()` unread until the next removal, which
/// must not change it: an algorithm that makes its list of pairs only when asked then makes it
/// after proxies of those pairs were removed, and must still name them by their ids.
const PAIRS_READ_LATE: usize = 3;

fn replay(
    mut bp: Box<dyn BroadPhase>,
    mut oracle: Box<dyn BroadPhase>,
    ops: &[Op],
) -> Result<Log, String> {
    let mut updates = 0;
    let mut live: Vec<ProxyId> = Vec::new();
    let mut dead: Vec<ProxyId> = Vec::new();
    let mut log = Log::new();
    let mut issued: Vec<ProxyId> = Vec::new();
    let pick = |live: &[ProxyId], i: &Pick| (!live.is_empty()).then(|| i.index(live.len()));

    for (step, op) in ops.iter().enumerate() {
        let at = |what: &str| format!("op {step} ({what})");
        match op {
            Op::Insert(aabb, desc) => {
                let got = bp.insert(*aabb, *desc);
                let want = oracle.insert(*aabb, *desc);
                same(&at("insert"), &got, &want)?;
                if let Ok(id) = want {
                    live.push(id);
                    issued.push(id);
                }
            }
            Op::InsertBatch(items) => {
                let got = bp.insert_batch(items);
                let want = oracle.insert_batch(items);
                same(&at("insert_batch"), &got, &want)?;
                if let Ok(ids) = want {
                    live.extend(&ids);
                    issued.extend(&ids);
                }
            }
            Op::InsertDuplicate(i, desc) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = oracle.aabb(live[k]).map_err(|e| e.to_string())?;
                let got = bp.insert(aabb, *desc);
                let want = oracle.insert(aabb, *desc);
                same(&at("insert duplicate"), &got, &want)?;
                if let Ok(id) = want {
                    live.push(id);
                    issued.push(id);
                }
            }
            Op::SetAabb(i, aabb) => {
                let Some(k) = pick(&live, i) else { continue };
                same(
                    &at("set_aabb"),
                    &bp.set_aabb(live[k], *aabb),
                    &oracle.set_aabb(live[k], *aabb),
                )?;
            }
            Op::Nudge(i, offset) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = oracle
                    .aabb(live[k])
                    .map_err(|e| e.to_string())?
                    .translated(*offset);
                same(
                    &at("set_aabb (nudge)"),
                    &bp.set_aabb(live[k], aabb),
                    &oracle.set_aabb(live[k], aabb),
                )?;
            }
            Op::NudgeMany(moves, bad) => {
                let mut items = Vec::with_capacity(moves.len());
                for (i, offset) in moves {
                    let Some(k) = pick(&live, i) else { continue };
                    let aabb = oracle.aabb(live[k]).map_err(|e| e.to_string())?;
                    items.push((live[k], aabb.translated(*offset)));
                }
                if let (Some((place, kind, axis)), false) = (bad, items.is_empty()) {
                    let p = place % items.len();
                    items[p].1 = kind.make(items[p].1, *axis);
                }
                // The contract, on the oracle one item at a time: every item checked, then
                // every box set.
                let want = items
                    .iter()
                    .try_for_each(|(id, aabb)| oracle.aabb(*id).and(aabb.validate()))
                    .and_then(|()| {
                        items
                            .iter()
                            .try_for_each(|&(id, aabb)| oracle.set_aabb(id, aabb))
                    });
                same(&at("set_aabbs"), &bp.set_aabbs(&items), &want)?;
            }
            Op::SetDesc(i, desc) => {
                let Some(k) = pick(&live, i) else { continue };
                same(
                    &at("set_desc"),
                    &bp.set_desc(live[k], *desc),
                    &oracle.set_desc(live[k], *desc),
                )?;
            }
            Op::Remove(i) => {
                let Some(k) = pick(&live, i) else { continue };
                let id = live.swap_remove(k);
                same(&at("remove"), &bp.remove(id), &oracle.remove(id))?;
                same_pairs(bp.as_ref(), oracle.as_ref(), &at("pairs after remove"))?;
                dead.push(id);
            }
            Op::RemoveMany(picks, stale) => {
                let mut ids: Vec<ProxyId> = picks
                    .iter()
                    .filter_map(|i| pick(&live, i).map(|k| live[k]))
                    .collect();
                if let (Some(i), false) = (stale, dead.is_empty()) {
                    let at = i.0 % (ids.len() + 1);
                    ids.insert(at, dead[i.index(dead.len())]);
                }
                // The contract, on the oracle one id at a time: every id checked (live, and
                // not listed before), then every proxy removed.
                let mut listed = std::collections::HashSet::new();
                let want = ids
                    .iter()
                    .try_for_each(|&id| {
                        oracle.aabb(id)?;
                        if listed.insert(id) {
                            Ok(())
                        } else {
                            Err(Error::StaleProxy { id })
                        }
                    })
                    .and_then(|()| ids.iter().try_for_each(|&id| oracle.remove(id)));
                same(&at("remove_batch"), &bp.remove_batch(&ids), &want)?;
                same_pairs(
                    bp.as_ref(),
                    oracle.as_ref(),
                    &at("pairs after remove_batch"),
                )?;
                if want.is_ok() {
                    live.retain(|id| !ids.contains(id));
                    dead.extend(&ids);
                } else {
                    same_state(bp.as_ref(), oracle.as_ref(), &live)?;
                }
            }
            Op::SetLayersCollide(a, b, on) => {
                same(
                    &at("set_layers_collide"),
                    &bp.set_layers_collide(*a, *b, *on),
                    &oracle.set_layers_collide(*a, *b, *on),
                )?;
                if bp.layers_collide(*a, *b) != *on {
                    return Err(at("layers_collide does not read back the rule just set"));
                }
            }
            Op::ShiftOrigin(shift) => {
                same(
                    &at("shift_origin"),
                    &bp.shift_origin(*shift),
                    &oracle.shift_origin(*shift),
                )?;
            }
            Op::Update => {
                let got = bp.update().cloned();
                let want = oracle.update().cloned();
                same(&at("update"), &got, &want)?;
                updates += 1;
                check_structure(bp.as_ref(), &at("structure after update"))?;
                let order = if updates % PAIRS_READ_LATE == 0 {
                    Vec::new()
                } else {
                    same_pairs(bp.as_ref(), oracle.as_ref(), &at("pairs"))?
                };
                let stats = bp.stats();
                if stats.pairs != oracle.pairs().len() || stats.proxies != bp.len() {
                    return Err(format!(
                        "{}: stats disagree with pairs()/len(): {stats:?}",
                        at("stats")
                    ));
                }
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
                let events = bp.events();
                log.push((
                    events.created().to_vec(),
                    events.deleted().to_vec(),
                    order,
                    std::mem::take(&mut issued),
                ));
            }
            Op::InsertBad(kind, axis) => {
                let aabb = kind.make(Aabb::new([0.0; 3], [1.0; 3]), *axis);
                let got = bp.insert(aabb, ProxyDesc::dynamic());
                let want = oracle.insert(aabb, ProxyDesc::dynamic());
                expect_err(&at("insert bad box"), &want, |e| kind.expected(e))?;
                same(&at("insert bad box"), &got, &want)?;
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
            Op::SetAabbBad(i, kind, axis) => {
                let Some(k) = pick(&live, i) else { continue };
                let aabb = kind.make(oracle.aabb(live[k]).map_err(|e| e.to_string())?, *axis);
                let got = bp.set_aabb(live[k], aabb);
                let want = oracle.set_aabb(live[k], aabb);
                expect_err(&at("set_aabb bad box"), &want, |e| kind.expected(e))?;
                same(&at("set_aabb bad box"), &got, &want)?;
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
            Op::RemoveTwice(i) => {
                let Some(k) = pick(&live, i) else { continue };
                let id = live.swap_remove(k);
                same(&at("remove"), &bp.remove(id), &oracle.remove(id))?;
                let got = bp.remove(id);
                let want = oracle.remove(id);
                expect_err(&at("second remove"), &want, |e| {
                    matches!(e, Error::StaleProxy { .. })
                })?;
                same(&at("second remove"), &got, &want)?;
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
                dead.push(id);
            }
            Op::UseStale(i) => {
                let Some(k) = pick(&dead, i) else { continue };
                let id = dead[k];
                if oracle.contains(id) {
                    return Err(at("a removed id is live again"));
                }
                let stale = |e: &Error| matches!(e, Error::StaleProxy { .. });
                let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                let want = oracle.set_aabb(id, aabb);
                expect_err(&at("set_aabb stale"), &want, stale)?;
                same(&at("set_aabb stale"), &bp.set_aabb(id, aabb), &want)?;
                same(
                    &at("set_desc stale"),
                    &bp.set_desc(id, ProxyDesc::fixed()),
                    &oracle.set_desc(id, ProxyDesc::fixed()),
                )?;
                same(&at("remove stale"), &bp.remove(id), &oracle.remove(id))?;
                same(&at("aabb stale"), &bp.aabb(id), &oracle.aabb(id))?;
                if bp.contains(id) {
                    return Err(at("contains() holds for a stale id"));
                }
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
            Op::UseForeign(i) => {
                let unknown = |e: &Error| matches!(e, Error::UnknownProxy { .. });
                let mut ids = vec![ProxyId::from_raw_parts(10_000_000, 0)];
                if let Some(k) = pick(&live, i) {
                    let id = live[k];
                    ids.push(ProxyId::from_raw_parts(id.index(), id.generation() + 1));
                }
                for id in ids {
                    let want = oracle.remove(id);
                    expect_err(&at("remove foreign"), &want, unknown)?;
                    same(&at("remove foreign"), &bp.remove(id), &want)?;
                    let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                    same(
                        &at("set_aabb foreign"),
                        &bp.set_aabb(id, aabb),
                        &oracle.set_aabb(id, aabb),
                    )?;
                    same(&at("desc foreign"), &bp.desc(id), &oracle.desc(id))?;
                }
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
            Op::BadLayer(i, layer) => {
                let invalid = |e: &Error| matches!(e, Error::InvalidLayer { .. });
                let d = ProxyDesc::dynamic().with_layer(Layer(*layer));
                let aabb = Aabb::new([0.0; 3], [1.0; 3]);
                let want = oracle.insert(aabb, d);
                expect_err(&at("insert bad layer"), &want, invalid)?;
                same(&at("insert bad layer"), &bp.insert(aabb, d), &want)?;
                let want = oracle.set_layers_collide(Layer(*layer), Layer(0), false);
                expect_err(&at("set_layers_collide bad layer"), &want, invalid)?;
                same(
                    &at("set_layers_collide bad layer"),
                    &bp.set_layers_collide(Layer(*layer), Layer(0), false),
                    &want,
                )?;
                if let Some(k) = pick(&live, i) {
                    let want = oracle.set_desc(live[k], d);
                    expect_err(&at("set_desc bad layer"), &want, invalid)?;
                    same(&at("set_desc bad layer"), &bp.set_desc(live[k], d), &want)?;
                }
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
            Op::Query(q) => same_answer(&at("query"), bp.as_ref(), oracle.as_ref(), q)?,
            Op::BadShift(kind) => {
                let shift = match kind {
                    0 => [f32::NAN, 0.0, 0.0],
                    1 => [0.0, f32::INFINITY, 0.0],
                    2 => [0.0, 0.0, f32::NEG_INFINITY],
                    // Finite but overflows any box reaching beyond ±1e32.
                    3 => [f32::MAX, 0.0, 0.0],
                    4 => [0.0, -f32::MAX, 0.0],
                    _ => [0.0, 0.0, f32::MAX],
                };
                let got = bp.shift_origin(shift);
                let want = oracle.shift_origin(shift);
                if *kind < 3 {
                    expect_err(&at("non-finite shift"), &want, |e| {
                        matches!(e, Error::NonFiniteShift { .. })
                    })?;
                }
                same(&at("bad shift"), &got, &want)?;
                same_state(bp.as_ref(), oracle.as_ref(), &live)?;
            }
        }
    }
    check_structure(bp.as_ref(), "structure at the end")?;
    Ok(log)
}

/// [`BroadPhase::check_structure`], its failure named `what`.
fn check_structure(bp: &dyn BroadPhase, what: &str) -> Result<(), String> {
    bp.check_structure()
        .map_err(|e| format!("{what}: a broken invariant: {e}"))
}
