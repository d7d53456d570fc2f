//! Spatial queries: the shapes, their exact tests, and the one driver every algorithm shares.
//!
//! An engine only says which proxies *may* match a query (its
//! [`candidates`](crate::engine::Engine::candidates), seen here as a `SpatialIndex`: a tree's
//! nodes, a grid's cells, sorted axes); the query driver here tests each candidate exactly against the
//! proxy's current box, applies the layer mask, and also visits the proxies changed since the
//! last update, whose boxes the structures do not hold yet. So every algorithm answers exactly
//! what [`BruteForce`](crate::BruteForce) answers, never a stale or widened box.
//!
//! The tests are written so that a box containing another box passes whenever the inner one
//! does: culling with node or cell bounds through the same functions never loses a hit.

use std::ops::ControlFlow;

use crate::encode::{decode, encode_at_least, encode_at_most};
use crate::store::Store;
use crate::{Aabb, Error, LayerMask, ProxyId};

/// A ray: the points `origin + t * dir` for `t >= 0`. `dir` need not be normalised; `t` is in
/// units of `dir`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: [f32; 3],
    /// Its direction; a zero direction makes the ray a point.
    pub dir: [f32; 3],
}

impl Ray {
    /// The ray from `origin` along `dir`.
    #[must_use]
    pub const fn new(origin: [f32; 3], dir: [f32; 3]) -> Self {
        Self { origin, dir }
    }

    /// The point at `t`.
    #[must_use]
    pub fn at(&self, t: f32) -> [f32; 3] {
        std::array::from_fn(|i| self.origin[i] + t * self.dir[i])
    }
}

/// A proxy hit by a ray: `t` is where the ray enters its box (0 when it starts inside).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// The proxy.
    pub id: ProxyId,
    /// The entry parameter along the ray.
    pub t: f32,
}

/// A proxy hit by a moving box: `t` in `[0, 1]` is the fraction of the motion at first contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit {
    /// The proxy.
    pub id: ProxyId,
    /// The time of impact, 0 when the box overlaps it at the start.
    pub t: f32,
}

/// An oriented box: `center`, `half_extents` along its own axes, and the rotation from its
/// axes to the world's as a quaternion `[x, y, z, w]` (normalised by the query).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obb {
    /// The centre.
    pub center: [f32; 3],
    /// Half the size along each of the box's axes (zero allowed).
    pub half_extents: [f32; 3],
    /// The rotation, `[x, y, z, w]`.
    pub rotation: [f32; 4],
}

fn invalid(name: &'static str, value: f32, expected: &'static str) -> Error {
    Error::InvalidParameter {
        name,
        value: f64::from(value),
        expected,
    }
}

fn check_finite(name: &'static str, v: &[f32]) -> Result<(), Error> {
    match v.iter().find(|x| !x.is_finite()) {
        Some(&bad) => Err(invalid(name, bad, "a finite value")),
        None => Ok(()),
    }
}

/// The entry parameter of `ray` into `aabb`, if it enters at some `t` in `[0, max_t]`.
///
/// The slab method, with the axes the ray is parallel to handled apart (the ray must then lie
/// within the slab) so that no `0 * inf` appears.
#[must_use]
pub fn ray_aabb(ray: &Ray, max_t: f32, aabb: &Aabb) -> Option<f32> {
    let (mut t0, mut t1) = (0.0f32, max_t);
    for i in 0..3 {
        let (o, d) = (ray.origin[i], ray.dir[i]);
        if d == 0.0 {
            if o < aabb.min[i] || o > aabb.max[i] {
                return None;
            }
        } else {
            let ta = (aabb.min[i] - o) / d;
            let tb = (aabb.max[i] - o) / d;
            let (lo, hi) = if ta <= tb { (ta, tb) } else { (tb, ta) };
            t0 = t0.max(lo);
            t1 = t1.min(hi);
            if t0 > t1 {
                return None;
            }
        }
    }
    Some(t0)
}

/// The squared distance from `p` to `aabb` (0 inside), in `f64`: squares of `f32` gaps
/// overflow `f32` beyond about 1.8e19, but never `f64`, so every finite input ranks exactly.
#[must_use]
pub fn distance_squared(p: [f32; 3], aabb: &Aabb) -> f64 {
    let mut d2 = 0.0f64;
    for i in 0..3 {
        let (x, lo, hi) = (
            f64::from(p[i]),
            f64::from(aabb.min[i]),
            f64::from(aabb.max[i]),
        );
        let e = if x < lo {
            lo - x
        } else if x > hi {
            x - hi
        } else {
            0.0
        };
        d2 += e * e;
    }
    d2
}

/// Whether the ball of `radius` around `center` touches `aabb` (in `f64`, as
/// [`distance_squared`]).
#[must_use]
pub fn sphere_aabb(center: [f32; 3], radius: f32, aabb: &Aabb) -> bool {
    let r = f64::from(radius);
    distance_squared(center, aabb) <= r * r
}

/// The first time `t` in `[0, 1]` at which `moving`, translated by `t * motion`, overlaps
/// `target`: per axis, overlap at `t` means `target.min - moving.max <= t * motion <=
/// target.max - moving.min`.
#[must_use]
pub fn box_cast_aabb(moving: &Aabb, motion: [f32; 3], target: &Aabb) -> Option<f32> {
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for i in 0..3 {
        let lo_gap = target.min[i] - moving.max[i];
        let hi_gap = target.max[i] - moving.min[i];
        let m = motion[i];
        if m == 0.0 {
            if lo_gap > 0.0 || hi_gap < 0.0 {
                return None;
            }
        } else {
            let ta = lo_gap / m;
            let tb = hi_gap / m;
            let (lo, hi) = if ta <= tb { (ta, tb) } else { (tb, ta) };
            t0 = t0.max(lo);
            t1 = t1.min(hi);
            if t0 > t1 {
                return None;
            }
        }
    }
    Some(t0)
}

/// An [`Obb`] ready for tests: its rotation matrix, and its world bounds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PreparedObb {
    center: [f32; 3],
    half: [f32; 3],
    /// `axes[j]` is the box's j-th axis in world coordinates.
    axes: [[f32; 3]; 3],
    /// The world box holding the oriented box: the three world-axis tests of the separating
    /// axis theorem, which culling reuses.
    pub bounds: Aabb,
}

impl PreparedObb {
    /// Checks and prepares `obb`.
    pub(crate) fn new(obb: &Obb) -> Result<Self, Error> {
        check_finite("obb center", &obb.center)?;
        check_finite("obb half extent", &obb.half_extents)?;
        check_finite("obb rotation", &obb.rotation)?;
        if let Some(&h) = obb.half_extents.iter().find(|h| **h < 0.0) {
            return Err(invalid("obb half extent", h, "a value >= 0"));
        }
        let [x, y, z, w] = obb.rotation.map(f64::from);
        let norm = (x * x + y * y + z * z + w * w).sqrt();
        if !norm.is_finite() || norm <= 1e-12 {
            return Err(invalid(
                "obb rotation length",
                norm as f32,
                "a non-zero quaternion",
            ));
        }
        let (x, y, z, w) = (x / norm, y / norm, z / norm, w / norm);
        // Columns of the rotation matrix: the images of the box's x, y and z axes.
        let m = [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y + w * z),
                2.0 * (x * z - w * y),
            ],
            [
                2.0 * (x * y - w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z + w * x),
            ],
            [
                2.0 * (x * z + w * y),
                2.0 * (y * z - w * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ];
        let axes = m.map(|col| col.map(|v| v as f32));
        let mut bounds = Aabb::point(obb.center);
        for i in 0..3 {
            let ext: f32 = (0..3).map(|j| axes[j][i].abs() * obb.half_extents[j]).sum();
            bounds.min[i] = obb.center[i] - ext;
            bounds.max[i] = obb.center[i] + ext;
        }
        if !bounds.is_valid() {
            return Err(invalid(
                "obb extent",
                f32::INFINITY,
                "an oriented box within the finite range",
            ));
        }
        Ok(Self {
            center: obb.center,
            half: obb.half_extents,
            axes,
            bounds,
        })
    }

    /// The separating-axis test against `aabb`: the world axes through `bounds`, then the
    /// box's three axes and the nine edge cross products (each widened by a small epsilon so
    /// that parallel edges, whose cross product vanishes, never separate wrongly).
    pub(crate) fn overlaps(&self, aabb: &Aabb) -> bool {
        if !self.bounds.overlaps(aabb) {
            return false;
        }
        const EPS: f32 = 1e-6;
        let a = aabb.center();
        let e = aabb.extents().map(|v| 0.5 * v);
        let t: [f32; 3] = std::array::from_fn(|i| self.center[i] - a[i]);
        // r[i][j] = world axis i · box axis j; abs with the epsilon.
        let r: [[f32; 3]; 3] = std::array::from_fn(|i| std::array::from_fn(|j| self.axes[j][i]));
        let ar: [[f32; 3]; 3] = r.map(|row| row.map(|v| v.abs() + EPS));
        let h = self.half;
        // The box's own axes.
        for j in 0..3 {
            let dist = (t[0] * r[0][j] + t[1] * r[1][j] + t[2] * r[2][j]).abs();
            let ra = e[0] * ar[0][j] + e[1] * ar[1][j] + e[2] * ar[2][j];
            if dist > ra + h[j] {
                return false;
            }
        }
        // World axis i × box axis j.
        for i in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            for j in 0..3 {
                let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
                let dist = (t[i2] * r[i1][j] - t[i1] * r[i2][j]).abs();
                let ra = e[i1] * ar[i2][j] + e[i2] * ar[i1][j];
                let rb = h[j1] * ar[i][j2] + h[j2] * ar[i][j1];
                if dist > ra + rb {
                    return false;
                }
            }
        }
        true
    }
}

/// What an algorithm's structure offers the query driver.
pub(crate) trait SpatialIndex {
    /// Visits, once each, every slot the structure holds whose box (as the structure last saw
    /// it) may overlap `bounds`; extra slots are allowed. Stops when `visit` breaks.
    fn candidates(
        &self,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()>;

    /// Visits, once each, every slot whose box may be hit by `ray` within `max_t`. The default
    /// uses the bounds of the segment, or of the ray clipped to `world` when `max_t` is
    /// infinite; trees and grids walk along the ray instead.
    fn ray_candidates(
        &self,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        match segment_bounds(ray, max_t, world) {
            Some(b) => self.candidates(&b, visit),
            None => ControlFlow::Continue(()),
        }
    }
}

/// Bounds holding the part of `ray` with `t` in `[0, max_t]` that lies in `world`: every box in
/// `world` that [`ray_aabb`] hits overlaps them.
///
/// The ends are found in `f64` and widened by a few `f32` ulps, then rounded outwards: in `f32`,
/// `origin + t * dir` at the exit can round to just short of a box lying on the world's border
/// (found by the differential fuzz target), and `ray_aabb`'s own `f32` rounding may accept a box
/// a hair beyond `max_t`. A wider box only adds candidates, which the exact test then rejects.
pub(crate) fn segment_bounds(ray: &Ray, max_t: f32, world: &Aabb) -> Option<Aabb> {
    ray_aabb(ray, max_t, world)?;
    let (mut t_in, mut t_out) = (0.0f64, f64::from(max_t));
    for i in 0..3 {
        let d = f64::from(ray.dir[i]);
        if d != 0.0 {
            let o = f64::from(ray.origin[i]);
            let ta = (f64::from(world.min[i]) - o) / d;
            let tb = (f64::from(world.max[i]) - o) / d;
            t_in = t_in.max(ta.min(tb));
            t_out = t_out.min(ta.max(tb));
        }
    }
    let mut out = *world;
    for i in 0..3 {
        let (o, d) = (f64::from(ray.origin[i]), f64::from(ray.dir[i]));
        if d == 0.0 {
            // The ray stays at its origin on this axis (inside the world's slab: it hit).
            out.min[i] = ray.origin[i];
            out.max[i] = ray.origin[i];
            continue;
        }
        // With a direction on some axis, the world's slabs make `t_out` finite.
        let (a, b) = (o + t_in * d, o + t_out * d);
        let slack = 8.0 * f64::from(f32::EPSILON) * (o.abs() + d.abs() * t_out.max(0.0));
        let lo = (a.min(b) - slack).max(f64::from(world.min[i]));
        let hi = (a.max(b) + slack).min(f64::from(world.max[i]));
        if lo <= hi {
            out.min[i] = decode(encode_at_most(lo));
            out.max[i] = decode(encode_at_least(hi));
        }
        // Else the f64 segment misses what the f32 test grazed: keep the world's extent.
    }
    Some(out)
}

/// Where a query's proxies come from: a live broad phase (its store and its engine's
/// candidates, [`Live`]) or a [`Snapshot`](crate::Snapshot) of one. Either visits proxies with
/// their current box; the shapes' exact tests are applied here, the same for both.
pub(crate) trait Source {
    /// Visits, once each, every live proxy on a layer in `mask` whose box may overlap `bounds`
    /// (with `ray`: may be hit by it within its `max_t`), with its id and exact box; extra
    /// proxies are allowed, missing one is not. Stops when `hit` breaks.
    fn visit(
        &self,
        bounds: Option<&Aabb>,
        ray: Option<(&Ray, f32)>,
        mask: LayerMask,
        hit: &mut dyn FnMut(ProxyId, &Aabb) -> ControlFlow<()>,
    ) -> ControlFlow<()>;

    /// A box holding every live box, or `None` when there is none.
    fn bounds(&self) -> Option<Aabb>;

    /// The number of live proxies (it sizes `nearest`'s first search).
    fn len(&self) -> usize;
}

/// A live broad phase as a query [`Source`]: its store, and its structure's candidates.
pub(crate) struct Live<'a, I> {
    pub(crate) store: &'a Store,
    pub(crate) index: I,
}

impl<I: SpatialIndex> Source for Live<'_, I> {
    /// The structure's candidates that did not change since the last update, then the proxies
    /// out of the world's bounds (the structure does not hold them), then the changed proxies,
    /// each with its current box.
    fn visit(
        &self,
        bounds: Option<&Aabb>,
        ray: Option<(&Ray, f32)>,
        mask: LayerMask,
        hit: &mut dyn FnMut(ProxyId, &Aabb) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let store = self.store;
        let mut test = |slot: u32| -> ControlFlow<()> {
            let s = slot as usize;
            if !store.is_live(s) || !mask.contains(store.desc_at(s).layer) {
                return ControlFlow::Continue(());
            }
            hit(store.id_at(s), store.aabb_at(s))
        };
        // Changed proxies are visited last, with their current boxes; those out of the world's
        // bounds from their list (an engine may offer extra slots, these among them).
        let mut from_structure = |slot: u32| {
            if store.is_dirty(slot as usize) || store.is_out(slot as usize) {
                ControlFlow::Continue(())
            } else {
                test(slot)
            }
        };
        match (ray, bounds) {
            (Some((ray, max_t)), _) => {
                if let Some(world) = store.bounds() {
                    self.index
                        .ray_candidates(ray, max_t, &world, &mut from_structure)?;
                }
            }
            (None, Some(b)) => self.index.candidates(b, &mut from_structure)?,
            (None, None) => {}
        }
        for &slot in store.outside() {
            if !store.is_dirty(slot as usize) {
                test(slot)?;
            }
        }
        for &slot in store.dirty() {
            test(slot)?;
        }
        ControlFlow::Continue(())
    }

    fn bounds(&self) -> Option<Aabb> {
        self.store.bounds()
    }

    fn len(&self) -> usize {
        self.store.len()
    }
}

/// Visits the proxies in `bounds` whose box passes `test`.
fn overlapping(
    source: &dyn Source,
    bounds: &Aabb,
    mask: LayerMask,
    test: impl Fn(&Aabb) -> bool,
    visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
) {
    let _ = source.visit(Some(bounds), None, mask, &mut |id, b| {
        if test(b) {
            visit(id)
        } else {
            ControlFlow::Continue(())
        }
    });
}

pub(crate) fn query_aabb(
    source: &dyn Source,
    aabb: &Aabb,
    mask: LayerMask,
    visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
) -> Result<(), Error> {
    aabb.validate()?;
    overlapping(source, aabb, mask, |b| b.overlaps(aabb), visit);
    Ok(())
}

pub(crate) fn query_point(
    source: &dyn Source,
    p: [f32; 3],
    mask: LayerMask,
    visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
) -> Result<(), Error> {
    check_finite("query point", &p)?;
    query_aabb(source, &Aabb::point(p), mask, visit)
}

pub(crate) fn query_sphere(
    source: &dyn Source,
    center: [f32; 3],
    radius: f32,
    mask: LayerMask,
    visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
) -> Result<(), Error> {
    check_finite("sphere center", &center)?;
    if !radius.is_finite() || radius < 0.0 {
        return Err(invalid("sphere radius", radius, "a finite value >= 0"));
    }
    let bounds = Aabb::point(center).inflated(radius);
    if !bounds.is_valid() {
        return Err(invalid(
            "sphere radius",
            radius,
            "a sphere within the finite range",
        ));
    }
    let test = |b: &Aabb| sphere_aabb(center, radius, b);
    overlapping(source, &bounds, mask, test, visit);
    Ok(())
}

pub(crate) fn query_obb(
    source: &dyn Source,
    obb: &Obb,
    mask: LayerMask,
    visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
) -> Result<(), Error> {
    let obb = PreparedObb::new(obb)?;
    overlapping(source, &obb.bounds, mask, |b| obb.overlaps(b), visit);
    Ok(())
}

fn check_ray(ray: &Ray, max_t: f32) -> Result<(), Error> {
    check_finite("ray origin", &ray.origin)?;
    check_finite("ray direction", &ray.dir)?;
    if max_t.is_nan() || max_t < 0.0 {
        return Err(invalid(
            "ray max_t",
            max_t,
            "a value >= 0 (may be infinite)",
        ));
    }
    Ok(())
}

pub(crate) fn ray_cast(
    source: &dyn Source,
    ray: &Ray,
    max_t: f32,
    mask: LayerMask,
    visit: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
) -> Result<(), Error> {
    check_ray(ray, max_t)?;
    let _ = source.visit(
        None,
        Some((ray, max_t)),
        mask,
        &mut |id, b| match ray_aabb(ray, max_t, b) {
            Some(t) => visit(RayHit { id, t }),
            None => ControlFlow::Continue(()),
        },
    );
    Ok(())
}

pub(crate) fn box_cast(
    source: &dyn Source,
    aabb: &Aabb,
    motion: [f32; 3],
    mask: LayerMask,
    visit: &mut dyn FnMut(CastHit) -> ControlFlow<()>,
) -> Result<(), Error> {
    aabb.validate()?;
    check_finite("box cast motion", &motion)?;
    let swept = aabb.swept(motion, 1.0);
    if !swept.is_valid() {
        return Err(invalid(
            "box cast motion",
            f32::INFINITY,
            "a sweep within the finite range",
        ));
    }
    let _ = source.visit(
        Some(&swept),
        None,
        mask,
        &mut |id, b| match box_cast_aabb(aabb, motion, b) {
            Some(t) => visit(CastHit { id, t }),
            None => ControlFlow::Continue(()),
        },
    );
    Ok(())
}

/// The `k` proxies nearest to `p` by box distance, closest first (ties by id).
///
/// Searches cubes of doubling half-size around `p`: once `k` proxies lie within the cube's
/// half-size, every closer proxy overlaps the cube and has been seen.
pub(crate) fn nearest(
    source: &dyn Source,
    p: [f32; 3],
    k: usize,
    mask: LayerMask,
) -> Result<Vec<(ProxyId, f32)>, Error> {
    check_finite("nearest point", &p)?;
    let Some(world) = source.bounds() else {
        return Ok(Vec::new());
    };
    if k == 0 {
        return Ok(Vec::new());
    }
    // Start from the spacing a uniform population would have, and at least the typical box.
    let ext = world.extents();
    let volume = f64::from(ext[0]) * f64::from(ext[1]) * f64::from(ext[2]);
    let n = source.len().max(1) as f64;
    let mut r = ((volume * k as f64 / n).cbrt() as f32 * 0.5).max(f32::MIN_POSITIVE);
    let mut found: Vec<(f64, ProxyId)> = Vec::new();
    loop {
        let cube = Aabb::point(p).inflated(r);
        let covers_world = !cube.is_valid() || cube.contains(&world);
        let bounds = if cube.is_valid() {
            cube
        } else {
            world.union(&Aabb::point(p))
        };
        found.clear();
        let _ = source.visit(Some(&bounds), None, mask, &mut |id, b| {
            found.push((distance_squared(p, b), id));
            ControlFlow::Continue(())
        });
        found.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        // Once r itself overflows, the cube covers the world and the search ends.
        let r2 = f64::from(r) * f64::from(r);
        let enough = found.len() >= k && found[k - 1].0 <= r2 && r2.is_finite();
        if enough || covers_world {
            found.truncate(k);
            // Distances beyond f32::MAX (boxes near opposite ends of the f32 range) read inf.
            return Ok(found
                .into_iter()
                .map(|(d2, id)| (id, d2.sqrt() as f32))
                .collect());
        }
        r *= 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit() -> Aabb {
        Aabb::new([0.0; 3], [1.0; 3])
    }

    #[test]
    fn rays() {
        let b = unit();
        let r = Ray::new([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
        assert_eq!(ray_aabb(&r, 10.0, &b), Some(1.0));
        assert_eq!(ray_aabb(&r, 0.5, &b), None);
        // Starting inside: t = 0.
        assert_eq!(
            ray_aabb(&Ray::new([0.5; 3], [0.0, 1.0, 0.0]), 1.0, &b),
            Some(0.0)
        );
        // Parallel to a face, outside its slab: never hits.
        assert_eq!(
            ray_aabb(&Ray::new([-1.0, 2.0, 0.5], [1.0, 0.0, 0.0]), 9.0, &b),
            None
        );
        // Grazing an edge: boxes are closed.
        assert_eq!(
            ray_aabb(&Ray::new([-1.0, 1.0, 1.0], [1.0, 0.0, 0.0]), 9.0, &b),
            Some(1.0)
        );
        // Zero direction: a point.
        assert_eq!(ray_aabb(&Ray::new([0.5; 3], [0.0; 3]), 0.0, &b), Some(0.0));
        assert_eq!(ray_aabb(&Ray::new([2.0; 3], [0.0; 3]), 5.0, &b), None);
        // Pointing away.
        assert_eq!(
            ray_aabb(
                &Ray::new([2.0, 0.5, 0.5], [1.0, 0.0, 0.0]),
                f32::INFINITY,
                &b
            ),
            None
        );
    }

    #[test]
    fn spheres_and_casts() {
        let b = unit();
        assert!(sphere_aabb([2.0, 0.5, 0.5], 1.0, &b));
        assert!(!sphere_aabb([2.0, 2.0, 0.5], 1.0, &b));
        assert!(sphere_aabb([0.5; 3], 0.0, &b));
        let mover = Aabb::new([-3.0, 0.0, 0.0], [-2.0, 1.0, 1.0]);
        assert_eq!(box_cast_aabb(&mover, [4.0, 0.0, 0.0], &b), Some(0.5));
        assert_eq!(box_cast_aabb(&mover, [1.0, 0.0, 0.0], &b), None);
        assert_eq!(box_cast_aabb(&b, [0.0; 3], &b), Some(0.0));
    }

    #[test]
    fn segment_bounds_hold_every_box_the_ray_hits() {
        // The exit through the world's border at z = 54: 19 * (54 / 19) rounds below 54 in f32.
        let world = Aabb::new([0.0, 0.0, -58.5], [1.0, 2.0, 54.0]);
        let flat = Aabb::new([0.0, 0.0, 54.0], [1.0, 0.0, 54.0]);
        let ray = Ray::new([0.0; 3], [0.0, 0.0, 19.0]);
        assert!(ray_aabb(&ray, 122.0, &flat).is_some());
        let seg = segment_bounds(&ray, 122.0, &world).expect("the ray is in the world");
        assert!(seg.overlaps(&flat), "{seg:?}");
        assert!(world.contains(&seg));
        // Diagonal rays through boxes spread over a large world.
        let world = Aabb::new([-1e4; 3], [1e4; 3]);
        for k in 0..200 {
            let f = k as f32;
            let ray = Ray::new(
                [-9e3 + f, 3.0 * f, -f],
                [1.0 + f * 0.01, 0.3, 0.7 - f * 0.005],
            );
            let max_t = 500.0 + 40.0 * f;
            let Some(seg) = segment_bounds(&ray, max_t, &world) else {
                continue;
            };
            for j in 0..50 {
                let t = max_t * j as f32 / 49.0;
                let p = ray.at(t);
                let b = Aabb::new(p, p.map(|x| x + 0.5));
                if world.contains(&b) && ray_aabb(&ray, max_t, &b).is_some() {
                    assert!(seg.overlaps(&b), "ray {k}, box {j}: {seg:?} misses {b:?}");
                }
            }
        }
    }

    /// Found by the `differential` fuzz target: a sphere 1.7e38 away from a box, of radius
    /// 1.7e35, squared both distances to infinity in `f32` and touched the box.
    #[test]
    fn far_spheres_and_distances_do_not_overflow() {
        let b = Aabb::new([-58.5, 0.0, 0.0], [-58.0, 2.5, 2.0]);
        assert!(!sphere_aabb(
            [-58.5, -27.0, -1.701_879e38],
            1.663_879_2e35,
            &b
        ));
        assert!(sphere_aabb([0.0, 0.0, -1.0e38], 1.0e38, &b));
        // Far boxes still rank by their distance, not by id.
        let near = Aabb::new([1e30; 3], [1e30; 3]);
        let far = Aabb::new([3e38; 3], [3e38; 3]);
        assert!(distance_squared([-3e38; 3], &near) < distance_squared([-3e38; 3], &far));
        assert!(distance_squared([-3e38; 3], &far).is_finite());
    }

    #[test]
    fn oriented_boxes() -> Result<(), Error> {
        let b = unit();
        // A unit cube turned 45° about z beside the unit box's (1, 1) edge: its bounds reach
        // 0.893 on x and y, but its near face is the plane x + y = 2.493.
        let (sin, cos) = std::f32::consts::FRAC_PI_8.sin_cos();
        let turned = Obb {
            center: [1.6, 1.6, 0.5],
            half_extents: [0.5; 3],
            rotation: [0.0, 0.0, sin, cos],
        };
        let p = PreparedObb::new(&turned)?;
        assert!(!p.overlaps(&b), "bounds overlap, the rotated box does not");
        assert!(p.bounds.overlaps(&b));
        let closer = Obb {
            center: [1.2, 1.2, 0.5],
            ..turned
        };
        assert!(PreparedObb::new(&closer)?.overlaps(&b));
        // Identity rotation: the same as the box test.
        let ident = Obb {
            center: [1.5; 3],
            half_extents: [0.5; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        assert!(PreparedObb::new(&ident)?.overlaps(&b));
        let bad = Obb {
            rotation: [0.0; 4],
            ..ident
        };
        assert!(PreparedObb::new(&bad).is_err());
        Ok(())
    }

    #[test]
    fn superset_boxes_never_cull_a_hit() {
        // The property culling relies on, over a few hand-picked cases per test.
        let inner = Aabb::new([1.0, 2.0, 3.0], [1.5, 2.5, 3.5]);
        let outer = inner.inflated(0.75);
        let ray = Ray::new([-4.0, -3.0, 1.0], [1.0, 1.0, 0.4]);
        if let Some(t) = ray_aabb(&ray, 100.0, &inner) {
            assert!(ray_aabb(&ray, 100.0, &outer).is_some_and(|u| u <= t));
        }
        assert!(
            distance_squared([9.0, 9.0, 9.0], &outer) <= distance_squared([9.0, 9.0, 9.0], &inner)
        );
        let mover = Aabb::new([-3.0; 3], [-2.5; 3]);
        if let Some(t) = box_cast_aabb(&mover, [6.0, 7.0, 8.0], &inner) {
            assert!(box_cast_aabb(&mover, [6.0, 7.0, 8.0], &outer).is_some_and(|u| u <= t));
        }
    }
}
