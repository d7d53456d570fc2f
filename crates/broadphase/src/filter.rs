//! The pair filter: which proxies may pair at all, whatever their boxes.
//!
//! A pair is reported only if the two proxies are not both fixed, not in the same non-zero
//! group, and the 64×64 layer matrix lets their layers collide. Every algorithm applies the
//! filter where it finds a candidate, before the pair set, so filtered pairs cost nothing later.

use crate::{Error, Layer, ProxyDesc};

/// The symmetric 64×64 matrix of layers that collide. By default every layer collides with
/// every layer, itself included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayerMatrix {
    rows: [u64; Layer::COUNT],
}

impl Default for LayerMatrix {
    fn default() -> Self {
        Self {
            rows: [u64::MAX; Layer::COUNT],
        }
    }
}

impl LayerMatrix {
    /// Whether layers `a` and `b` collide. Out-of-range layers collide with nothing.
    #[inline]
    #[must_use]
    pub fn collide(&self, a: Layer, b: Layer) -> bool {
        match self.rows.get(usize::from(a.0)) {
            Some(row) => b.0 < 64 && (row >> b.0) & 1 != 0,
            None => false,
        }
    }

    /// Sets whether `a` and `b` collide; returns whether anything changed.
    ///
    /// # Errors
    /// [`Error::InvalidLayer`] when a layer is outside `0..64` (nothing changes).
    pub fn set(&mut self, a: Layer, b: Layer, collide: bool) -> Result<bool, Error> {
        check_layer(a)?;
        check_layer(b)?;
        if self.collide(a, b) == collide {
            return Ok(false);
        }
        let (ia, ib) = (usize::from(a.0), usize::from(b.0));
        if collide {
            self.rows[ia] |= 1 << b.0;
            self.rows[ib] |= 1 << a.0;
        } else {
            self.rows[ia] &= !(1 << b.0);
            self.rows[ib] &= !(1 << a.0);
        }
        Ok(true)
    }

    /// Whether a pair of proxies so described may be reported, ignoring their boxes.
    #[inline]
    #[must_use]
    pub fn allows(&self, a: &ProxyDesc, b: &ProxyDesc) -> bool {
        let both_fixed = a.is_fixed() && b.is_fixed();
        let same_group = a.group.0 != 0 && a.group == b.group;
        !both_fixed && !same_group && self.collide(a.layer, b.layer)
    }
}

/// Checks that a layer is in `0..64`.
///
/// # Errors
/// [`Error::InvalidLayer`] otherwise.
pub fn check_layer(layer: Layer) -> Result<(), Error> {
    if usize::from(layer.0) < Layer::COUNT {
        Ok(())
    } else {
        Err(Error::InvalidLayer { layer: layer.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Group;

    #[test]
    fn rules() -> Result<(), Error> {
        let mut m = LayerMatrix::default();
        let d = ProxyDesc::dynamic();
        let f = ProxyDesc::fixed();
        assert!(m.allows(&d, &d));
        assert!(m.allows(&d, &f));
        assert!(!m.allows(&f, &f));
        let g = d.with_group(Group(3));
        assert!(!m.allows(&g, &g));
        assert!(m.allows(&g, &d));
        assert!(m.allows(&d.with_group(Group(0)), &d.with_group(Group(0))));
        assert!(m.set(Layer(2), Layer(5), false)?);
        assert!(!m.set(Layer(5), Layer(2), false)?);
        assert!(!m.allows(&d.with_layer(Layer(5)), &d.with_layer(Layer(2))));
        assert!(m.allows(&d.with_layer(Layer(5)), &d.with_layer(Layer(5))));
        assert_eq!(
            m.set(Layer(64), Layer(0), true),
            Err(Error::InvalidLayer { layer: 64 })
        );
        Ok(())
    }
}
