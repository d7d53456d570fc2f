//! Floats to order-preserving integer keys (PhysX's `encodeFloat`).
//!
//! Sorting and comparing `u32` keys is faster than comparing floats and radix-sortable. For
//! finite floats `x <= y` exactly when `encode(x) <= encode(y)`, so the integer tests give the
//! contract's exact answers. Non-finite values are rejected before they reach this module.

use crate::Aabb;

/// The order-preserving key of a finite `f32`.
///
/// Positive floats get their sign bit set (so they sort above all negatives); negative floats
/// have all bits flipped (so larger magnitudes sort lower). `-0.0` is first turned into `+0.0`:
/// the two compare equal as floats and must get equal keys, or boxes touching at zero would be
/// missed.
#[inline]
#[must_use]
pub fn encode(x: f32) -> u32 {
    // Adding +0.0 turns -0.0 into +0.0 and leaves every other finite value unchanged.
    let bits = (x + 0.0).to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The float whose key is `key` (the inverse of [`encode`] for every key it produces).
#[inline]
#[must_use]
pub fn decode(key: u32) -> f32 {
    let bits = if key & 0x8000_0000 != 0 {
        key & 0x7FFF_FFFF
    } else {
        !key
    };
    f32::from_bits(bits)
}

/// The key of the largest `f32` not above `x`: a lower bound for searches on keys that must not
/// miss anything at `x` (the plain `x as f32` may round up).
#[inline]
#[must_use]
pub fn encode_at_most(x: f64) -> u32 {
    let f = x as f32;
    let k = encode(f);
    if f64::from(f) > x {
        k.saturating_sub(1)
    } else {
        k
    }
}

/// The key of the smallest `f32` not below `x`: an upper bound for searches.
#[inline]
#[must_use]
pub fn encode_at_least(x: f64) -> u32 {
    let f = x as f32;
    let k = encode(f);
    if f64::from(f) < x {
        k.saturating_add(1)
    } else {
        k
    }
}

/// A box's six coordinates as order-preserving integer keys ([`encode`]): `min` x, y, z, then
/// `max` x, y, z. Integer tests are exact, treat -0.0 as 0.0, and compile without branches.
pub(crate) type BoxKeys = [u32; 6];

/// The keys of `aabb`.
#[inline]
pub(crate) fn box_keys(aabb: &Aabb) -> BoxKeys {
    [
        encode(aabb.min[0]),
        encode(aabb.min[1]),
        encode(aabb.min[2]),
        encode(aabb.max[0]),
        encode(aabb.max[1]),
        encode(aabb.max[2]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_preserved() {
        let values = [
            f32::MIN,
            -1e30,
            -2.5,
            -1.0,
            -f32::MIN_POSITIVE,
            -1e-45,
            0.0,
            1e-45,
            f32::MIN_POSITIVE,
            1.0,
            1.0 + f32::EPSILON,
            3e38,
            f32::MAX,
        ];
        for w in values.windows(2) {
            assert!(encode(w[0]) < encode(w[1]), "{} vs {}", w[0], w[1]);
        }
        assert!(
            encode(f32::MAX) < u32::MAX,
            "u32::MAX stays free for end sentinels"
        );
    }

    #[test]
    fn zeros_share_a_key() {
        assert_eq!(encode(-0.0), encode(0.0));
    }

    #[test]
    fn bounds_round_outward() {
        let x = 0.1f64; // not an f32
        assert!(f64::from(decode(encode_at_most(x))) <= x);
        assert!(f64::from(decode(encode_at_least(x))) >= x);
        assert_eq!(encode_at_most(2.0), encode(2.0));
        assert_eq!(encode_at_least(-2.0), encode(-2.0));
    }

    #[test]
    fn decode_inverts_encode() {
        for x in [-3.5f32, -1e-38, 0.0, 7.25, f32::MAX, f32::MIN] {
            assert_eq!(decode(encode(x)), x);
        }
    }
}
