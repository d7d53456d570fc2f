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

/// Runs `q` through the collecting forms (`query_aabb_vec`, `ray_cast_vec`, ...), checking
/// their order: ids ascending, or for casts `t` ascending with ties by id.
fn collected_answer(bp: &dyn BroadPhase, q: &Query) -> Result<Vec<(ProxyId, f32)>, Error> {
    let ids = |v: Vec<ProxyId>| v.into_iter().map(|id| (id, 0.0)).collect::<Vec<_>>();
    let out = match q {
        // `nearest` has one form; any one hit of the first-hit query will do.
        Query::Nearest(..) | Query::FirstHit(..) => return answer(bp, q),
        Query::Aabb(b, m) => ids(bp.query_aabb_vec(*b, *m)?),
        Query::Point(p, m) => ids(bp.query_point_vec(*p, *m)?),
        Query::Sphere(c, r, m) => ids(bp.query_sphere_vec(*c, *r, *m)?),
        Query::Obb(o, m) => ids(bp.query_obb_vec(o, *m)?),
        Query::Ray(r, t, m) => {
            let hits = bp.ray_cast_vec(r, *t, *m)?;
            hits.iter().map(|h| (h.id, h.t)).collect()
        }
        Query::BoxCast(b, d, m) => {
            let hits = bp.box_cast_vec(*b, *d, *m)?;
            hits.iter().map(|h| (h.id, h.t)).collect()
        }
    };
    let cast = matches!(q, Query::Ray(..) | Query::BoxCast(..));
    let ordered = out.windows(2).all(|w| {
        if cast {
            (w[0].1, w[0].0) < (w[1].1, w[1].0)
        } else {
            w[0].0 < w[1].0
        }
    });
    if ordered {
        Ok(out)
    } else {
        // Reported as an error the oracle never gives, so that the comparison fails.
        Err(Error::InvalidParameter {
            name: "collected hits out of order",
            value: f64::NAN,
            expected: "ids ascending, or t then id for casts",
        })
    }
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
    // The collecting forms give the visitor forms' hits, in their own order.
    let collected = collected_answer(bp, q).map(|mut v| {
        v.sort_by_key(|h| h.0);
        v
    });
    if !matches!(q, Query::Nearest(..)) && bits(&collected) != bits(&got) {
        return Err(format!(
            "{what}: {q:?}\nthe collecting form answered {collected:?}\nthe visitor form {got:?}"
        ));
    }
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
    same(
        "outside_world()",
        &Ok(bp.outside_world()),
        &Ok(oracle.outside_world()),
    )
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
