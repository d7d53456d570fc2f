//! Axis-aligned bounding boxes.

use crate::Error;

/// An axis-aligned bounding box: the set of points `p` with `min[i] <= p[i] <= max[i]`.
///
/// Boxes are closed: two boxes that share only a face, an edge or a corner overlap, and a box
/// with `min == max` (a point) is valid. A box handed to a broad phase must be finite and have
/// `min <= max` on every axis; [`Aabb::validate`] says which rule a box breaks.
///
/// ```
/// use broadphase::Aabb;
/// let a = Aabb::new([0.0; 3], [1.0; 3]);
/// let b = Aabb::new([1.0, 0.0, 0.0], [2.0, 1.0, 1.0]);
/// assert!(a.overlaps(&b)); // touching faces count as overlap
/// assert!(!a.overlaps(&b.inflated(-0.25)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Aabb {
    /// The lower corner.
    pub min: [f32; 3],
    /// The upper corner.
    pub max: [f32; 3],
}

impl Aabb {
    /// The box from `min` to `max`. Nothing is checked here; broad phases check on insertion.
    #[inline]
    #[must_use]
    pub const fn new(min: [f32; 3], max: [f32; 3]) -> Self {
        Self { min, max }
    }

    /// The box of zero size at `p`.
    #[inline]
    #[must_use]
    pub const fn point(p: [f32; 3]) -> Self {
        Self { min: p, max: p }
    }

    /// The box grown by `margin` on every side (shrunk when `margin` is negative).
    ///
    /// This is how a contact distance or a "fat AABB" margin is added before insertion.
    #[inline]
    #[must_use]
    pub fn inflated(&self, margin: f32) -> Self {
        Self {
            min: self.min.map(|v| v - margin),
            max: self.max.map(|v| v + margin),
        }
    }

    /// The box that holds this box now and after moving by `velocity * dt`: the speculative
    /// continuous-collision box, which finds pairs a fast object would tunnel through.
    #[inline]
    #[must_use]
    pub fn swept(&self, velocity: [f32; 3], dt: f32) -> Self {
        let mut out = *self;
        for (axis, v) in velocity.iter().enumerate() {
            let d = v * dt;
            if d < 0.0 {
                out.min[axis] += d;
            } else {
                out.max[axis] += d;
            }
        }
        out
    }

    /// The smallest box holding both boxes.
    #[inline]
    #[must_use]
    pub fn union(&self, other: &Aabb) -> Self {
        Self {
            min: std::array::from_fn(|i| self.min[i].min(other.min[i])),
            max: std::array::from_fn(|i| self.max[i].max(other.max[i])),
        }
    }

    /// The contract's overlap test: inclusive on all three axes,
    /// `a.min <= b.max && b.min <= a.max` per axis.
    #[inline]
    #[must_use]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        (0..3).all(|i| self.min[i] <= other.max[i] && other.min[i] <= self.max[i])
    }

    /// Whether `p` lies in the box (boundary included).
    #[inline]
    #[must_use]
    pub fn contains_point(&self, p: [f32; 3]) -> bool {
        (0..3).all(|i| self.min[i] <= p[i] && p[i] <= self.max[i])
    }

    /// Whether `other` lies entirely inside this box (boundary included).
    #[inline]
    #[must_use]
    pub fn contains(&self, other: &Aabb) -> bool {
        (0..3).all(|i| self.min[i] <= other.min[i] && other.max[i] <= self.max[i])
    }

    /// The centre point.
    #[inline]
    #[must_use]
    pub fn center(&self) -> [f32; 3] {
        std::array::from_fn(|i| 0.5 * (self.min[i] + self.max[i]))
    }

    /// The size along each axis (`max - min`).
    #[inline]
    #[must_use]
    pub fn extents(&self) -> [f32; 3] {
        std::array::from_fn(|i| self.max[i] - self.min[i])
    }

    /// The box moved by `offset`.
    #[inline]
    #[must_use]
    pub fn translated(&self, offset: [f32; 3]) -> Self {
        Self {
            min: std::array::from_fn(|i| self.min[i] + offset[i]),
            max: std::array::from_fn(|i| self.max[i] + offset[i]),
        }
    }

    /// Whether the box is finite with `min <= max` on every axis.
    #[inline]
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// [`Aabb::validate`]'s rules as one test without branches: a coordinate within
    /// ±`f32::MAX` on both sides of an ordered pair is finite, and NaN fails every comparison.
    #[inline]
    pub(crate) fn is_finite_and_ordered(&self) -> bool {
        (0..3).fold(true, |ok, i| {
            ok & (self.min[i] >= -f32::MAX)
                & (self.min[i] <= self.max[i])
                & (self.max[i] <= f32::MAX)
        })
    }

    /// Checks the rules every stored box keeps: every coordinate finite, `min <= max` per axis.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`] for a NaN or infinite coordinate, [`Error::InvertedAabb`] when
    /// `min > max` on an axis.
    #[inline]
    pub fn validate(&self) -> Result<(), Error> {
        if self.is_finite_and_ordered() {
            return Ok(());
        }
        if self.min.iter().chain(&self.max).any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteAabb { aabb: *self });
        }
        match (0..3).find(|&i| self.min[i] > self.max[i]) {
            Some(axis) => Err(Error::InvertedAabb { aabb: *self, axis }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_inclusive() {
        let a = Aabb::new([0.0; 3], [1.0; 3]);
        assert!(a.overlaps(&Aabb::point([1.0, 1.0, 1.0])));
        assert!(a.overlaps(&Aabb::new([1.0, 1.0, 1.0], [2.0; 3])));
        assert!(!a.overlaps(&Aabb::new([1.0, 1.0, 1.0 + f32::EPSILON * 2.0], [2.0; 3])));
        // -0.0 and +0.0 are the same coordinate.
        let b = Aabb::new([-1.0; 3], [-0.0; 3]);
        assert!(b.overlaps(&Aabb::new([0.0; 3], [1.0; 3])));
    }

    #[test]
    fn swept_covers_both_ends() {
        let a = Aabb::new([0.0; 3], [1.0; 3]);
        let s = a.swept([2.0, -1.0, 0.0], 0.5);
        assert_eq!(s, Aabb::new([0.0, -0.5, 0.0], [2.0, 1.0, 1.0]));
    }

    #[test]
    fn validate_names_the_fault() {
        let nan = Aabb::new([0.0, f32::NAN, 0.0], [1.0; 3]);
        assert!(matches!(nan.validate(), Err(Error::NonFiniteAabb { .. })));
        let inf = Aabb::new([0.0; 3], [1.0, 1.0, f32::INFINITY]);
        assert!(matches!(inf.validate(), Err(Error::NonFiniteAabb { .. })));
        let inv = Aabb::new([0.0, 2.0, 0.0], [1.0; 3]);
        assert!(matches!(
            inv.validate(),
            Err(Error::InvertedAabb { axis: 1, .. })
        ));
        assert!(Aabb::point([3.0; 3]).is_valid());
    }
}
