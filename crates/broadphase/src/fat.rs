//! Fat boxes: a proxy keeps its stored box while its body stays inside it, as rapier's
//! change-detection skin and Box2D's `aabbMargin` do.

use crate::{Aabb, BroadPhase, Error, ProxyId};

/// Fattened boxes for bodies that barely move: a proxy stores its tight box grown by a
/// margin, and keeps that stored box until the tight box leaves it; only then does it take the
/// new tight box grown by the margin again.
///
/// Most frames, most bodies of a physics scene move a little: with fat boxes their proxies do
/// not change at all, so `set_aabbs` gets only the few that left their boxes, and the update
/// has less to do. The broad phase tests the *stored* boxes, so its pairs are exact for them:
/// a pair means the fat boxes overlap, which the tight boxes may not (the narrow phase decides).
///
/// ```
/// use broadphase::{Aabb, Algorithm, BroadPhase, Config, FatBoxes, ProxyDesc};
///
/// let fat = FatBoxes::new(0.1)?;
/// let mut bp = broadphase::new(Algorithm::Abp, Config::default());
/// let tight = Aabb::new([0.0; 3], [1.0; 3]);
/// let id = bp.insert(fat.fatten(tight), ProxyDesc::dynamic())?;
///
/// // This frame's tight boxes: a small step stays inside the fat box, a big one leaves it.
/// let mut moves = vec![(id, tight.translated([0.05, 0.0, 0.0]))];
/// fat.retain_moves(&*bp, &mut moves)?;
/// assert!(moves.is_empty()); // nothing to tell the broad phase
///
/// let mut moves = vec![(id, tight.translated([0.5, 0.0, 0.0]))];
/// fat.retain_moves(&*bp, &mut moves)?;
/// assert_eq!(moves, [(id, tight.translated([0.5, 0.0, 0.0]).inflated(0.1))]);
/// bp.set_aabbs(&moves)?;
/// bp.update()?;
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FatBoxes {
    margin: f32,
}

impl FatBoxes {
    /// Fat boxes grown by `margin` on every side (0 stores the tight boxes, and then every
    /// move that changes a box is kept).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a negative or non-finite margin.
    pub fn new(margin: f32) -> Result<Self, Error> {
        if margin.is_finite() && margin >= 0.0 {
            Ok(Self { margin })
        } else {
            Err(Error::InvalidParameter {
                name: "fat box margin",
                value: f64::from(margin),
                expected: "a finite value >= 0",
            })
        }
    }

    /// The margin each stored box is grown by.
    #[must_use]
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// The box to store for a tight box: grown by the margin on every side.
    ///
    /// ```
    /// use broadphase::{Aabb, FatBoxes};
    /// let fat = FatBoxes::new(0.5)?;
    /// assert_eq!(fat.fatten(Aabb::new([0.0; 3], [1.0; 3])), Aabb::new([-0.5; 3], [1.5; 3]));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn fatten(&self, tight: Aabb) -> Aabb {
        tight.inflated(self.margin)
    }

    /// The box to store next when the body's box is now `tight` and the proxy stores
    /// `stored`: `None` while `tight` lies inside `stored` (boundary included), else the
    /// fattened `tight`.
    ///
    /// ```
    /// use broadphase::{Aabb, FatBoxes};
    /// let fat = FatBoxes::new(0.5)?;
    /// let stored = fat.fatten(Aabb::new([0.0; 3], [1.0; 3]));
    /// assert_eq!(fat.refit(&stored, &Aabb::new([0.25; 3], [1.25; 3])), None);
    /// let moved = Aabb::new([1.0; 3], [2.0; 3]);
    /// assert_eq!(fat.refit(&stored, &moved), Some(moved.inflated(0.5)));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn refit(&self, stored: &Aabb, tight: &Aabb) -> Option<Aabb> {
        // A NaN in `tight` fails `contains`, so it is handed on, and `set_aabbs` rejects it.
        (!stored.contains(tight)).then(|| self.fatten(*tight))
    }

    /// Turns this frame's tight boxes into the moves the broad phase needs: keeps the moves
    /// whose tight box left the proxy's stored box, each with its fattened box, in their
    /// order, and drops the others. Hand the result to [`BroadPhase::set_aabbs`].
    ///
    /// # Errors
    /// [`Error::StaleProxy`] (or the error [`BroadPhase::aabb`] gives) for an id that is not
    /// live; `moves` is then unchanged.
    pub fn retain_moves<B: BroadPhase + ?Sized>(
        &self,
        bp: &B,
        moves: &mut Vec<(ProxyId, Aabb)>,
    ) -> Result<(), Error> {
        // Every id is checked before anything changes, so that an error leaves `moves` whole.
        let mut refits = Vec::with_capacity(moves.len());
        for (id, tight) in moves.iter() {
            refits.push(self.refit(&bp.aabb(*id)?, tight));
        }
        let mut refits = refits.into_iter();
        moves.retain_mut(|(_, aabb)| match refits.next().flatten() {
            Some(fat) => {
                *aabb = fat;
                true
            }
            None => false,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, Config, Pair, ProxyDesc};

    #[test]
    fn bad_margins_are_refused() {
        for margin in [-0.1, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                FatBoxes::new(margin),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(FatBoxes::new(0.0).is_ok());
    }

    #[test]
    fn a_stale_id_leaves_the_moves_whole() -> Result<(), Error> {
        let fat = FatBoxes::new(0.1)?;
        let mut bp = crate::new(Algorithm::Sap, Config::default());
        let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
        let b = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
        bp.remove(b)?;
        let far = Aabb::new([5.0; 3], [6.0; 3]);
        let mut moves = vec![(a, far), (b, far)];
        assert!(fat.retain_moves(&*bp, &mut moves).is_err());
        assert_eq!(moves, [(a, far), (b, far)]);
        Ok(())
    }

    /// The pairs of the stored boxes are exact: every pair a fat-box run reports is a pair of
    /// the boxes it stored, whatever the tight boxes do.
    #[test]
    fn pairs_are_those_of_the_stored_boxes() -> Result<(), Error> {
        let fat = FatBoxes::new(0.05)?;
        let mut bp = crate::new(Algorithm::Abp, Config::default());
        let mut tight: Vec<Aabb> = (0..40)
            .map(|i| {
                let x = (i % 8) as f32 * 0.9;
                let y = (i / 8) as f32 * 0.9;
                Aabb::new([x, y, 0.0], [x + 1.0, y + 1.0, 1.0])
            })
            .collect();
        let ids = bp.insert_batch(
            &tight
                .iter()
                .map(|b| (fat.fatten(*b), ProxyDesc::dynamic()))
                .collect::<Vec<_>>(),
        )?;
        bp.update()?;
        let mut kept_total = 0;
        for frame in 0..30 {
            for (i, b) in tight.iter_mut().enumerate() {
                let step = 0.01 * ((i * 7 + frame) % 5) as f32;
                *b = b.translated([step, -step * 0.5, 0.0]);
            }
            let mut moves: Vec<_> = ids.iter().copied().zip(tight.iter().copied()).collect();
            fat.retain_moves(&*bp, &mut moves)?;
            kept_total += moves.len();
            bp.set_aabbs(&moves)?;
            bp.update()?;
            for (id, b) in ids.iter().zip(&tight) {
                let stored = bp.aabb(*id)?;
                assert!(stored.contains(b), "the stored box holds the tight one");
            }
            let mut expected = Vec::new();
            for (i, &a) in ids.iter().enumerate() {
                for &b in &ids[i + 1..] {
                    if bp.aabb(a)?.overlaps(&bp.aabb(b)?) {
                        expected.push(Pair::new(a, b));
                    }
                }
            }
            expected.sort_unstable();
            assert_eq!(bp.pairs(), expected.as_slice(), "frame {frame}");
        }
        assert!(kept_total < ids.len() * 30, "fat boxes spared some moves");
        assert!(kept_total > 0, "some bodies left their boxes");
        Ok(())
    }
}
