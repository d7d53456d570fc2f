//! Conversions to and from the math crates games use, each behind its own feature: `glam`,
//! `mint` and `nalgebra`.
//!
//! The crate's own types stay plain arrays (`[f32; 3]` points, `[x, y, z, w]` quaternions)
//! so that no math crate is forced on anyone; these modules only add conversions:
//!
//! - [`Aabb`](crate::Aabb) from and to a `(min, max)` pair of points;
//! - [`Ray`](crate::Ray) from and to an `(origin, dir)` pair;
//! - [`Obb`](crate::Obb) from a centre, half extents and the library's rotation type, by a
//!   named constructor (`Obb::from_glam`, `Obb::from_mint`, `Obb::from_nalgebra`,
//!   `Obb::from_isometry`): three values of which two may share a type read better named
//!   than as a tuple, and the constructors put each library's quaternion components in the
//!   `[x, y, z, w]` order `Obb` expects (nalgebra's own constructor takes `w` first).
//!
//! Points and vectors passed on their own (`query_point`, `query_sphere`, `nearest`,
//! `box_cast`'s motion, `Aabb::translated`, ...) take `[f32; 3]`, which each of these crates
//! converts to already: `p.into()`, or `p.to_array()` with glam.

#[cfg(feature = "glam")]
mod glam;
#[cfg(feature = "mint")]
mod mint;
#[cfg(feature = "nalgebra")]
mod nalgebra;

// Only the conversions' tests use it.
#[cfg(all(test, any(feature = "glam", feature = "mint", feature = "nalgebra")))]
mod tests {
    use crate::query::PreparedObb;
    use crate::{Aabb, Obb};

    /// Checks that `obb` turns its axes as `rotate` (the math crate's own rotation of a
    /// vector) does: a point just inside each face, placed with `rotate`, is in the box, and
    /// one just outside is not. A quaternion read in the wrong component order fails this.
    #[allow(clippy::expect_used)]
    pub(crate) fn turns_as(obb: &Obb, rotate: impl Fn([f32; 3]) -> [f32; 3]) {
        let prepared = PreparedObb::new(obb).expect("a valid oriented box");
        for axis in 0..3 {
            for (scale, inside) in [(0.9, true), (-0.9, true), (1.1, false), (-1.1, false)] {
                let mut local = [0.0; 3];
                local[axis] = scale * obb.half_extents[axis];
                let turned = rotate(local);
                let p = std::array::from_fn(|i| obb.center[i] + turned[i]);
                assert_eq!(
                    prepared.overlaps(&Aabb::point(p)),
                    inside,
                    "axis {axis}, {scale} of the half extent"
                );
            }
        }
    }
}
