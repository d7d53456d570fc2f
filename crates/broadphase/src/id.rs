//! Proxy handles and pairs.

use std::fmt;

/// The handle of one proxy (one box) in a broad phase.
///
/// A slot index plus a generation: when a proxy is removed its slot may be given to a later
/// proxy, with a new generation, so an id kept after removal is recognised as stale and
/// rejected ([`Error::StaleProxy`](crate::Error::StaleProxy)) instead of naming the newcomer.
/// Ids order by slot index first, then generation.
///
/// Ids are deterministic: the same calls in the same order give the same ids, in every
/// algorithm. The flip side is that an id taken from another broad phase can be told apart only
/// when it names a slot this one never issued ([`Error::UnknownProxy`](crate::Error::UnknownProxy))
/// or a generation its slot does not have.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProxyId {
    // Field order matters: the derived `Ord` compares the index first.
    index: u32,
    generation: u32,
}

impl ProxyId {
    /// Builds an id from its parts, e.g. one read back from [`ProxyId::to_bits`] storage.
    #[inline]
    #[must_use]
    pub const fn from_raw_parts(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The slot index: dense, small, reused after removal. Handy as an array index.
    #[inline]
    #[must_use]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// How many times the slot had been reused when this id was issued.
    #[inline]
    #[must_use]
    pub const fn generation(self) -> u32 {
        self.generation
    }

    /// The id packed into 64 bits (generation high, index low).
    #[inline]
    #[must_use]
    pub const fn to_bits(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }

    /// The inverse of [`ProxyId::to_bits`].
    #[inline]
    #[must_use]
    pub const fn from_bits(bits: u64) -> Self {
        Self {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

impl fmt::Debug for ProxyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}v{}", self.index, self.generation)
    }
}

impl fmt::Display for ProxyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Two proxies whose boxes overlap, with `a < b`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Pair {
    /// The smaller id.
    pub a: ProxyId,
    /// The larger id.
    pub b: ProxyId,
}

impl Pair {
    /// The pair of `x` and `y`, with the smaller id in `a`.
    #[inline]
    #[must_use]
    pub fn new(x: ProxyId, y: ProxyId) -> Self {
        if x <= y {
            Self { a: x, b: y }
        } else {
            Self { a: y, b: x }
        }
    }

    /// Whether `id` is one of the two.
    #[inline]
    #[must_use]
    pub fn contains(&self, id: ProxyId) -> bool {
        self.a == id || self.b == id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_order_by_index_first() {
        let a = ProxyId::from_raw_parts(1, 9);
        let b = ProxyId::from_raw_parts(2, 0);
        assert!(a < b);
        assert_eq!(Pair::new(b, a), Pair { a, b });
        assert_eq!(ProxyId::from_bits(a.to_bits()), a);
        assert_eq!(format!("{a:?}"), "#1v9");
    }
}
