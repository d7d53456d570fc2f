//! Conversions to and from mint's `Point3`, `Vector3` and `Quaternion` (feature `mint`): the
//! interchange types that cgmath, glam, nalgebra, ultraviolet and others convert to, so that
//! any version of those crates reaches this one through them.

use ::mint::{Point3, Quaternion, Vector3};

use crate::{Aabb, Obb, Ray};

impl From<(Point3<f32>, Point3<f32>)> for Aabb {
    /// The box from `min` to `max`; as [`Aabb::new`], nothing is checked until a broad
    /// phase takes the box.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use mint::Point3;
    /// let min = Point3 { x: 0.0, y: 0.0, z: 0.0 };
    /// let max = Point3 { x: 1.0, y: 2.0, z: 3.0 };
    /// assert_eq!(Aabb::from((min, max)), Aabb::new([0.0; 3], [1.0, 2.0, 3.0]));
    /// ```
    #[inline]
    fn from((min, max): (Point3<f32>, Point3<f32>)) -> Self {
        Aabb::new(min.into(), max.into())
    }
}

impl From<Aabb> for (Point3<f32>, Point3<f32>) {
    /// The box's `(min, max)` corners.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use mint::Point3;
    /// let (min, max): (Point3<f32>, Point3<f32>) = Aabb::new([0.0; 3], [1.0; 3]).into();
    /// assert_eq!((min.x, max.z), (0.0, 1.0));
    /// ```
    #[inline]
    fn from(aabb: Aabb) -> Self {
        (aabb.min.into(), aabb.max.into())
    }
}

impl From<(Point3<f32>, Vector3<f32>)> for Ray {
    /// The ray from `origin` along `dir`, as [`Ray::new`].
    ///
    /// ```
    /// use broadphase::Ray;
    /// use mint::{Point3, Vector3};
    /// let ray = Ray::from((Point3::from([0.0; 3]), Vector3::from([0.0, 1.0, 0.0])));
    /// assert_eq!(ray.at(3.0), [0.0, 3.0, 0.0]);
    /// ```
    #[inline]
    fn from((origin, dir): (Point3<f32>, Vector3<f32>)) -> Self {
        Ray::new(origin.into(), dir.into())
    }
}

impl From<Ray> for (Point3<f32>, Vector3<f32>) {
    /// The ray's `(origin, dir)`.
    ///
    /// ```
    /// use broadphase::Ray;
    /// use mint::{Point3, Vector3};
    /// let (origin, dir): (Point3<f32>, Vector3<f32>) = Ray::new([1.0; 3], [0.0, 0.0, 2.0]).into();
    /// assert_eq!((origin.y, dir.z), (1.0, 2.0));
    /// ```
    #[inline]
    fn from(ray: Ray) -> Self {
        (ray.origin.into(), ray.dir.into())
    }
}

impl Obb {
    /// The oriented box at `center` with `half_extents` along its own axes, turned by
    /// `rotation` (mint's vector part `v` and scalar part `s`). Queries normalise the
    /// rotation and reject a zero one.
    ///
    /// ```
    /// use broadphase::Obb;
    /// use mint::{Point3, Quaternion, Vector3};
    /// let identity = Quaternion { v: Vector3 { x: 0.0, y: 0.0, z: 0.0 }, s: 1.0 };
    /// let obb = Obb::from_mint(Point3::from([1.0; 3]), Vector3::from([0.5; 3]), identity);
    /// assert_eq!(obb.rotation, [0.0, 0.0, 0.0, 1.0]);
    /// ```
    #[must_use]
    pub fn from_mint(
        center: Point3<f32>,
        half_extents: Vector3<f32>,
        rotation: Quaternion<f32>,
    ) -> Self {
        Obb {
            center: center.into(),
            half_extents: half_extents.into(),
            rotation: rotation.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_round_trip() {
        let (min, max) = (
            Point3::from([-1.5, 0.0, 2.0]),
            Point3::from([3.0, 0.25, 2.0]),
        );
        let aabb = Aabb::from((min, max));
        assert_eq!(aabb, Aabb::new([-1.5, 0.0, 2.0], [3.0, 0.25, 2.0]));
        assert_eq!(<(Point3<f32>, Point3<f32>)>::from(aabb), (min, max));
    }

    #[test]
    fn rays_round_trip() {
        let (origin, dir) = (
            Point3::from([1.0, -2.0, 3.0]),
            Vector3::from([0.0, 0.5, -1.0]),
        );
        let ray = Ray::from((origin, dir));
        assert_eq!(ray, Ray::new([1.0, -2.0, 3.0], [0.0, 0.5, -1.0]));
        assert_eq!(<(Point3<f32>, Vector3<f32>)>::from(ray), (origin, dir));
    }

    #[test]
    fn oriented_boxes_turn_as_the_quaternion_says() {
        // A quarter turn about z: sin and cos of an eighth turn.
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let rotation = Quaternion {
            v: Vector3::from([0.0, 0.0, h]),
            s: h,
        };
        let obb = Obb::from_mint(
            Point3::from([1.0, 2.0, 3.0]),
            Vector3::from([0.5, 1.0, 2.0]),
            rotation,
        );
        assert_eq!(obb.center, [1.0, 2.0, 3.0]);
        assert_eq!(obb.half_extents, [0.5, 1.0, 2.0]);
        assert_eq!(Quaternion::from(obb.rotation), rotation);
        // The box's x axis now points along the world's y, its y along the world's -x.
        super::super::tests::turns_as(&obb, |[x, y, z]| [-y, x, z]);
    }
}
