//! Conversions to and from glam's `Vec3`, `Vec3A` and `Quat` (feature `glam`).

use ::glam::{Quat, Vec3, Vec3A};

use crate::{Aabb, Obb, Ray};

impl From<(Vec3, Vec3)> for Aabb {
    /// The box from `min` to `max`; as [`Aabb::new`], nothing is checked until a broad
    /// phase takes the box.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use glam::Vec3;
    /// let b = Aabb::from((Vec3::ZERO, Vec3::new(1.0, 2.0, 3.0)));
    /// assert_eq!(b, Aabb::new([0.0; 3], [1.0, 2.0, 3.0]));
    /// ```
    #[inline]
    fn from((min, max): (Vec3, Vec3)) -> Self {
        Aabb::new(min.to_array(), max.to_array())
    }
}

impl From<Aabb> for (Vec3, Vec3) {
    /// The box's `(min, max)` corners.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use glam::Vec3;
    /// let (min, max): (Vec3, Vec3) = Aabb::new([0.0; 3], [1.0, 2.0, 3.0]).into();
    /// assert_eq!((max - min), Vec3::new(1.0, 2.0, 3.0));
    /// ```
    #[inline]
    fn from(aabb: Aabb) -> Self {
        (Vec3::from_array(aabb.min), Vec3::from_array(aabb.max))
    }
}

impl From<(Vec3A, Vec3A)> for Aabb {
    /// The box from `min` to `max`, from glam's 16-byte aligned vectors (which bounding
    /// boxes in glam code often use, bevy's among them).
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use glam::Vec3A;
    /// let b = Aabb::from((Vec3A::splat(-1.0), Vec3A::ONE));
    /// assert_eq!(b, Aabb::new([-1.0; 3], [1.0; 3]));
    /// ```
    #[inline]
    fn from((min, max): (Vec3A, Vec3A)) -> Self {
        Aabb::new(min.to_array(), max.to_array())
    }
}

impl From<Aabb> for (Vec3A, Vec3A) {
    /// The box's `(min, max)` corners as aligned vectors.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use glam::Vec3A;
    /// let (min, max): (Vec3A, Vec3A) = Aabb::new([-1.0; 3], [1.0; 3]).into();
    /// assert_eq!((min + max) * 0.5, Vec3A::ZERO);
    /// ```
    #[inline]
    fn from(aabb: Aabb) -> Self {
        (Vec3A::from_array(aabb.min), Vec3A::from_array(aabb.max))
    }
}

impl From<(Vec3, Vec3)> for Ray {
    /// The ray from `origin` along `dir`, as [`Ray::new`].
    ///
    /// ```
    /// use broadphase::Ray;
    /// use glam::Vec3;
    /// let ray = Ray::from((Vec3::ZERO, Vec3::X));
    /// assert_eq!(Vec3::from(ray.at(2.0)), Vec3::new(2.0, 0.0, 0.0));
    /// ```
    #[inline]
    fn from((origin, dir): (Vec3, Vec3)) -> Self {
        Ray::new(origin.to_array(), dir.to_array())
    }
}

impl From<Ray> for (Vec3, Vec3) {
    /// The ray's `(origin, dir)`.
    ///
    /// ```
    /// use broadphase::Ray;
    /// use glam::Vec3;
    /// let (origin, dir): (Vec3, Vec3) = Ray::new([1.0; 3], [0.0, 0.0, -1.0]).into();
    /// assert_eq!((origin, dir), (Vec3::ONE, Vec3::NEG_Z));
    /// ```
    #[inline]
    fn from(ray: Ray) -> Self {
        (Vec3::from_array(ray.origin), Vec3::from_array(ray.dir))
    }
}

impl Obb {
    /// The oriented box at `center` with `half_extents` along its own axes, turned by
    /// `rotation` (glam's `[x, y, z, w]` order is the one `Obb` keeps). Queries normalise the
    /// rotation and reject a zero one.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, LayerMask, Obb, ProxyDesc};
    /// use glam::{Quat, Vec3};
    /// // A thin plank along x, turned a quarter about z: it now lies along y.
    /// let plank = Obb::from_glam(
    ///     Vec3::ZERO,
    ///     Vec3::new(5.0, 0.1, 0.1),
    ///     Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
    /// );
    /// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
    /// let on_y = bp.insert(Aabb::point([0.0, 4.0, 0.0]), ProxyDesc::fixed())?;
    /// bp.insert(Aabb::point([4.0, 0.0, 0.0]), ProxyDesc::fixed())?;
    /// assert_eq!(bp.query_obb_vec(&plank, LayerMask::ALL)?, [on_y]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn from_glam(center: Vec3, half_extents: Vec3, rotation: Quat) -> Self {
        Obb {
            center: center.to_array(),
            half_extents: half_extents.to_array(),
            rotation: rotation.to_array(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_round_trip() {
        let (min, max) = (Vec3::new(-1.5, 0.0, 2.0), Vec3::new(3.0, 0.25, 2.0));
        let aabb = Aabb::from((min, max));
        assert_eq!(aabb, Aabb::new([-1.5, 0.0, 2.0], [3.0, 0.25, 2.0]));
        assert_eq!(<(Vec3, Vec3)>::from(aabb), (min, max));
        let aligned = (Vec3A::from(min), Vec3A::from(max));
        assert_eq!(Aabb::from(aligned), aabb);
        assert_eq!(<(Vec3A, Vec3A)>::from(aabb), aligned);
    }

    #[test]
    fn rays_round_trip() {
        let (origin, dir) = (Vec3::new(1.0, -2.0, 3.0), Vec3::new(0.0, 0.5, -1.0));
        let ray = Ray::from((origin, dir));
        assert_eq!(ray, Ray::new([1.0, -2.0, 3.0], [0.0, 0.5, -1.0]));
        assert_eq!(<(Vec3, Vec3)>::from(ray), (origin, dir));
    }

    #[test]
    fn oriented_boxes_keep_every_part() {
        let q = Quat::from_rotation_y(0.7) * Quat::from_rotation_x(-0.3);
        let obb = Obb::from_glam(Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.5, 1.0, 2.0), q);
        assert_eq!(Vec3::from_array(obb.center), Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(Vec3::from_array(obb.half_extents), Vec3::new(0.5, 1.0, 2.0));
        assert_eq!(Quat::from_array(obb.rotation), q);
        super::super::tests::turns_as(&obb, |v| (q * Vec3::from(v)).to_array());
    }
}
