//! The test at the heart of a pass: does the box of a minimum that has just passed a maximum
//! now overlap that maximum's box? Four key comparisons on the two other axes and one on the
//! sweep axis, made millions of times per update when every box moves.
//!
//! The comparisons are made without branches (which would mostly be mispredicted: minima and
//! maxima are passed in no predictable order), on x86-64 as one SSE2 comparison of the four
//! other-axis keys, elsewhere in scalar arithmetic. A test checks that both agree.

use super::end::End;

/// A minimum's keys, laid out once for testing many passed maxima against it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    /// The box's maximum on the sweep axis.
    max: u32,
    #[cfg(target_arch = "x86_64")]
    lanes: std::arch::x86_64::__m128i,
    #[cfg(not(target_arch = "x86_64"))]
    uv: [u32; 4],
}

/// Keys are compared as unsigned, which SSE2 cannot: flipping the top bit maps unsigned order
/// onto signed order. Lanes 2 and 3 are also inverted (`!x`), which reverses their order, so
/// that every lane tests the same way round.
#[cfg(target_arch = "x86_64")]
const FLIP: [u32; 4] = [0x8000_0000, 0x8000_0000, 0x7FFF_FFFF, 0x7FFF_FFFF];

impl Probe {
    /// The probe of the minimum `e` (`e.other` is its box's maximum).
    #[inline(always)]
    pub(super) fn new(e: &End) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // Lanes [min_u, min_v, max_u, max_v]: the passed box overlaps when its maxima are
            // not below this box's minima (lanes 0, 1) and its minima not above this box's
            // maxima (lanes 2, 3).
            let [a, b, c, d] = e.uv;
            let lanes = [a ^ FLIP[0], b ^ FLIP[1], c ^ FLIP[2], d ^ FLIP[3]];
            Self {
                max: e.other,
                lanes: load(&lanes),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Self {
                max: e.other,
                uv: e.uv,
            }
        }
    }

    /// Zero when the box of the maximum `q` overlaps the probe's box on the two other axes;
    /// otherwise a non-zero value below 16. Branch-free: the caller combines it with its own
    /// conditions and branches once.
    #[inline(always)]
    pub(super) fn misses(&self, q: &End) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                _mm_castsi128_ps, _mm_cmpgt_epi32, _mm_movemask_ps, _mm_shuffle_epi32,
                _mm_xor_si128,
            };
            #[allow(unused_unsafe)]
            // SAFETY: SSE2 is part of every x86-64 target, so the intrinsics are always
            // available; they read only the two vectors given.
            unsafe {
                // q's [max_u, max_v, min_u, min_v], mapped like the probe's lanes.
                let other = _mm_shuffle_epi32::<0b01_00_11_10>(load(&q.uv));
                let other = _mm_xor_si128(other, load(&FLIP));
                // A lane where the probe is above: the boxes are apart on that axis.
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(self.lanes, other))) as u32
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            (scalar_uv(&self.uv, &q.uv) ^ 1) as u32
        }
    }

    /// Whether the box of the maximum `q` (`q.other` its minimum) does not start above the
    /// probe's maximum on the sweep axis: with [`Probe::misses`], the full overlap test.
    /// Nearly always true for a maximum just passed, so it is checked only after the others.
    #[inline(always)]
    pub(super) fn reaches(&self, q: &End) -> bool {
        q.other <= self.max
    }
}

/// Four keys as a vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn load(keys: &[u32; 4]) -> std::arch::x86_64::__m128i {
    #[allow(unused_unsafe)]
    // SAFETY: `keys` is 16 readable bytes; the load has no alignment requirement.
    unsafe {
        std::arch::x86_64::_mm_loadu_si128(keys.as_ptr().cast())
    }
}

/// The other-axes test in scalar arithmetic: 1 when the boxes with keys `p` and `q` (each
/// `[min_u, min_v, max_u, max_v]`) overlap on both axes.
#[inline(always)]
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn scalar_uv(p: &[u32; 4], q: &[u32; 4]) -> u64 {
    // `a <= b` as the sign bit of `a - b - 1` in 64 bits: no branch.
    let le = |a: u32, b: u32| ((i64::from(a) - i64::from(b) - 1) >> 63) as u64 & 1;
    le(p[0], q[2]) & le(q[0], p[2]) & le(p[1], q[3]) & le(q[1], p[3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn end(keys: [u32; 6], is_max: bool) -> End {
        End::new(&keys, 0, 7, is_max)
    }

    /// Keys near the ends of the range, around the sign flip, and equal ones.
    fn key() -> impl Strategy<Value = u32> {
        prop_oneof![
            0u32..8,
            0x7FFF_FFF8u32..0x8000_0008,
            u32::MAX - 8..=u32::MAX,
            any::<u32>(),
        ]
    }

    proptest! {
        #[test]
        fn the_fast_test_matches_the_plain_comparisons(
            a in prop::array::uniform6(key()),
            b in prop::array::uniform6(key()),
        ) {
            // Boxes with min <= max on every axis.
            let fix = |k: [u32; 6]| -> [u32; 6] {
                std::array::from_fn(|i| if i < 3 { k[i].min(k[i + 3]) } else { k[i].max(k[i - 3]) })
            };
            let (a, b) = (fix(a), fix(b));
            let (min, max) = (end(a, false), end(b, true));
            let want = b[0] <= a[3] && (1..3).all(|i| a[i] <= b[3 + i] && b[i] <= a[3 + i]);
            let probe = Probe::new(&min);
            prop_assert_eq!(probe.misses(&max) == 0 && probe.reaches(&max), want);
            prop_assert_eq!(scalar_uv(&min.uv, &max.uv) & u64::from(max.other <= min.other), u64::from(want));
        }
    }
}
