//! Conversions to and from nalgebra's `Point3`, `Vector3`, `UnitQuaternion` and `Isometry3`
//! (feature `nalgebra`), the types rapier and parry users hold.

use ::nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};

use crate::{Aabb, Obb, Ray};

impl From<(Point3<f32>, Point3<f32>)> for Aabb {
    /// The box from `min` to `max`; as [`Aabb::new`], nothing is checked until a broad
    /// phase takes the box.
    ///
    /// ```
    /// use broadphase::Aabb;
    /// use nalgebra::Point3;
    /// let b = Aabb::from((Point3::origin(), Point3::new(1.0, 2.0, 3.0)));
    /// assert_eq!(b, Aabb::new([0.0; 3], [1.0, 2.0, 3.0]));
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
    /// use nalgebra::Point3;
    /// let (min, max): (Point3<f32>, Point3<f32>) = Aabb::new([0.0; 3], [1.0, 2.0, 3.0]).into();
    /// assert_eq!(nalgebra::center(&min, &max), Point3::new(0.5, 1.0, 1.5));
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
    /// use nalgebra::{Point3, Vector3};
    /// let ray = Ray::from((Point3::new(0.0, 1.0, 0.0), Vector3::x()));
    /// assert_eq!(Point3::from(ray.at(2.0)), Point3::new(2.0, 1.0, 0.0));
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
    /// use nalgebra::{Point3, Vector3};
    /// let (origin, dir): (Point3<f32>, Vector3<f32>) = Ray::new([1.0; 3], [0.0, 0.0, -1.0]).into();
    /// assert_eq!((origin, dir), (Point3::new(1.0, 1.0, 1.0), -Vector3::z()));
    /// ```
    #[inline]
    fn from(ray: Ray) -> Self {
        (ray.origin.into(), ray.dir.into())
    }
}

/// A unit quaternion's components in the `[x, y, z, w]` order `Obb` keeps; nalgebra names
/// them `i, j, k, w`, and its `Quaternion::new` takes `w` first, so this is written out once.
fn xyzw(rotation: &UnitQuaternion<f32>) -> [f32; 4] {
    let q = rotation.quaternion();
    [q.i, q.j, q.k, q.w]
}

impl Obb {
    /// The oriented box at `center` with `half_extents` along its own axes, turned by
    /// `rotation`.
    ///
    /// ```
    /// use broadphase::Obb;
    /// use nalgebra::{Point3, UnitQuaternion, Vector3};
    /// let turn = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f32::consts::PI);
    /// let obb = Obb::from_nalgebra(Point3::origin(), Vector3::new(2.0, 1.0, 1.0), turn);
    /// assert_eq!(obb.rotation.map(f32::round), [0.0, 0.0, 1.0, 0.0]); // [x, y, z, w]
    /// ```
    #[must_use]
    pub fn from_nalgebra(
        center: Point3<f32>,
        half_extents: Vector3<f32>,
        rotation: UnitQuaternion<f32>,
    ) -> Self {
        Obb {
            center: center.into(),
            half_extents: half_extents.into(),
            rotation: xyzw(&rotation),
        }
    }

    /// The oriented box with `half_extents` placed by `pose` (a rigid body's position, or a
    /// parry cuboid's pose): centred at the pose's translation, turned by its rotation.
    ///
    /// ```
    /// use broadphase::{Aabb, Algorithm, BroadPhase, Config, LayerMask, Obb, ProxyDesc};
    /// use nalgebra::{Isometry3, Vector3};
    /// // A plank along x at (10, 0, 0), turned a quarter about z: it now lies along y.
    /// let pose = Isometry3::new(Vector3::new(10.0, 0.0, 0.0), Vector3::z() * std::f32::consts::FRAC_PI_2);
    /// let plank = Obb::from_isometry(&pose, Vector3::new(5.0, 0.1, 0.1));
    /// let mut bp = broadphase::new(Algorithm::Sap, Config::default());
    /// let on_y = bp.insert(Aabb::point([10.0, 4.0, 0.0]), ProxyDesc::fixed())?;
    /// bp.insert(Aabb::point([14.0, 0.0, 0.0]), ProxyDesc::fixed())?;
    /// assert_eq!(bp.query_obb_vec(&plank, LayerMask::ALL)?, [on_y]);
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn from_isometry(pose: &Isometry3<f32>, half_extents: Vector3<f32>) -> Self {
        Obb {
            center: pose.translation.vector.into(),
            half_extents: half_extents.into(),
            rotation: xyzw(&pose.rotation),
        }
    }
}

#[cfg(test)]
mod tests {
    use ::nalgebra::{Quaternion, Translation3};

    use super::*;

    #[test]
    fn boxes_round_trip() {
        let (min, max) = (Point3::new(-1.5, 0.0, 2.0), Point3::new(3.0, 0.25, 2.0));
        let aabb = Aabb::from((min, max));
        assert_eq!(aabb, Aabb::new([-1.5, 0.0, 2.0], [3.0, 0.25, 2.0]));
        assert_eq!(<(Point3<f32>, Point3<f32>)>::from(aabb), (min, max));
    }

    #[test]
    fn rays_round_trip() {
        let (origin, dir) = (Point3::new(1.0, -2.0, 3.0), Vector3::new(0.0, 0.5, -1.0));
        let ray = Ray::from((origin, dir));
        assert_eq!(ray, Ray::new([1.0, -2.0, 3.0], [0.0, 0.5, -1.0]));
        assert_eq!(<(Point3<f32>, Vector3<f32>)>::from(ray), (origin, dir));
    }

    #[test]
    fn oriented_boxes_turn_as_nalgebra_turns() {
        let rotation = UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1);
        let (center, half) = (Point3::new(1.0, 2.0, 3.0), Vector3::new(0.5, 1.0, 2.0));
        let obb = Obb::from_nalgebra(center, half, rotation);
        assert_eq!(Point3::from(obb.center), center);
        assert_eq!(Vector3::from(obb.half_extents), half);
        let [x, y, z, w] = obb.rotation;
        assert_eq!(
            UnitQuaternion::new_unchecked(Quaternion::new(w, x, y, z)),
            rotation
        );
        super::super::tests::turns_as(&obb, |v| (rotation * Vector3::from(v)).into());

        let pose = Isometry3::from_parts(Translation3::from(center.coords), rotation);
        assert_eq!(Obb::from_isometry(&pose, half), obb);
    }
}
