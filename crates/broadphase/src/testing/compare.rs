//! Comparing the algorithm under test with the oracle after a call: the same result or error,
//! the same query answers, boxes, descriptions and pairs.

use std::fmt::Debug;
use std::ops::ControlFlow;

use super::ops::Query;
use crate::{BroadPhase, CastHit, Error, LayerMask, Pair, ProxyId, RayHit};

/// Runs `q` on `bp`: the hits as `(id, t)` (t = 0 where there is none), sorted by id; for
/// `nearest`, the answer as given.
pub(super) fn answer(bp: &dyn BroadPhase, q: &Query) -> Result<Vec<(ProxyId, f32)>, Error> {
    let mut out: Vec<(ProxyId, f32)> = Vec::new();
    match q {
        Query::Nearest(p, k, m) => return bp.nearest(*p, *k, *m),
        Query::Ray(r, t, m) => bp.ray_cast(r, *t, *m, &mut |h: RayHit| {
            out.push((h.id, h.t));
            ControlFlow::Continue(())
        })?,
        Query::BoxCast(b, d, m) => bp.box_cast(*b, *d, *m, &mut |h: CastHit| {
            out.push((h.id, h.t));
            ControlFlow::Continue(())
        })?,
        Query::FirstHit(b) => bp.query_aabb(*b, LayerMask::ALL, &mut |id| {
            out.push((id, 0.0));
            ControlFlow::Break(())
        })?,
        _ => {
            let mut ids = |id: ProxyId| {
                out.push((id, 0.0));
                ControlFlow::Continue(())
            };
            match q {
                Query::Aabb(b, m) => bp.query_aabb(*b, *m, &mut ids)?,
                Query::Point(p, m) => bp.query_point(*p, *m, &mut ids)?,
                Query::Sphere(c, r, m) => bp.query_sphere(*c, *r, *m, &mut ids)?,
                Query::Obb(o, m) => bp.query_obb(o, *m, &mut ids)?,
                _ => {}
            }
        }
    }
    out.sort_by_key(|h| h.0);
    Ok(out)
}

/// Compares a query's answers; `t` values bit for bit.
pub(super) fn same_answer(
    what: &str,
    bp: &dyn BroadPhase,
    oracle: &dyn BroadPhase,
    q: &Query,
) -> Result<(), String> {
    let got = answer(bp, q);
    if let Query::FirstHit(b) = q {
        // Any one hit will do; none only if there is none.
        let all = answer(oracle, &Query::Aabb(*b, LayerMask::ALL));
        return match (&got, &all) {
            // An invalid box: the same error from both.
            (Err(g), Err(a)) if format!("{g:?}") == format!("{a:?}") => Ok(()),
            (Ok(g), Ok(a))
                if g.len() <= 1
                    && g.is_empty() == a.is_empty()
                    && g.iter().all(|h| a.iter().any(|x| x.0 == h.0)) =>
            {
                Ok(())
            }
            _ => Err(format!(
                "{what}: a first-hit query visited {got:?}; all hits: {all:?}"
            )),
        };
    }
    let want = answer(oracle, q);
    let bits = |r: &Result<Vec<(ProxyId, f32)>, Error>| {
        r.as_ref()
            .map(|v| v.iter().map(|(i, t)| (*i, t.to_bits())).collect::<Vec<_>>())
            .map_err(|e| format!("{e:?}"))
    };
    if bits(&got) == bits(&want) {
        Ok(())
    } else {
        Err(format!(
            "{what}: {q:?}\nalgorithm answered {got:?}\nthe oracle answered {want:?}"
        ))
    }
}

pub(super) fn same<T: PartialEq + Debug>(
    what: &str,
    got: &Result<T, Error>,
    want: &Result<T, Error>,
) -> Result<(), String> {
    let equal = match (got, want) {
        (Ok(a), Ok(b)) => a == b,
        // Debug, because errors carrying a NaN box are not `==` to themselves.
        (Err(a), Err(b)) => format!("{a:?}") == format!("{b:?}"),
        _ => false,
    };
    if equal {
        Ok(())
    } else {
        Err(format!(
            "{what}: algorithm returned {got:?}, the oracle {want:?}"
        ))
    }
}

pub(super) fn expect_err<T: Debug>(
    what: &str,
    r: &Result<T, Error>,
    ok: impl Fn(&Error) -> bool,
) -> Result<(), String> {
    match r {
        Err(e) if ok(e) => Ok(()),
        other => Err(format!("{what}: expected a specific error, got {other:?}")),
    }
}

/// Checks that every live proxy has the same box and description in both.
pub(super) fn same_state(
    bp: &dyn BroadPhase,
    oracle: &dyn BroadPhase,
    live: &[ProxyId],
) -> Result<(), String> {
    if bp.len() != oracle.len() {
        return Err(format!(
            "len: algorithm {} vs the oracle {}",
            bp.len(),
            oracle.len()
        ));
    }
    for &id in live {
        same(&format!("aabb({id})"), &bp.aabb(id), &oracle.aabb(id))?;
        same(&format!("desc({id})"), &bp.desc(id), &oracle.desc(id))?;
    }
    Ok(())
}

/// Checks that `bp`'s persistent pairs are the oracle's (in any order); returns them in `bp`'s
/// order.
pub(super) fn same_pairs(
    bp: &dyn BroadPhase,
    oracle: &dyn BroadPhase,
    at: &str,
) -> Result<Vec<Pair>, String> {
    let order = bp.pairs().to_vec();
    let mut pairs = order.clone();
    pairs.sort_unstable();
    if pairs != oracle.pairs() {
        let extra: Vec<_> = pairs
            .iter()
            .filter(|p| oracle.pairs().binary_search(p).is_err())
            .collect();
        let missing: Vec<_> = oracle
            .pairs()
            .iter()
            .filter(|p| pairs.binary_search(p).is_err())
            .collect();
        return Err(format!(
            "{at}: persistent pairs differ: extra {extra:?}, missing {missing:?}"
        ));
    }
    Ok(order)
}
