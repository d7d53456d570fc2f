//! The test at the heart of a pass: does the box of a minimum that has just passed a maximum
//! now overlap that maximum's box? Four key comparisons on the two other axes and one on the
//! sweep axis, made millions of times per update when every box moves.
//!
//! The comparisons are made without branches (which would mostly be mispredicted: minima and
//! maxima are passed in no predictable order), the four other-axis ones by
//! [`UvProbe`] (`crate::simd`): on x86-64 as one SSE2 comparison, elsewhere (or with
//! `--cfg broadphase_scalar`) in scalar arithmetic. Tests here and in `crate::simd` check that
//! both agree.

use super::end::End;
use crate::simd::UvProbe;

/// A minimum's keys, laid out once for testing many passed maxima against it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    /// The box's maximum on the sweep axis.
    max: u32,
    /// Its keys on the two other axes.
    uv: UvProbe,
}

impl Probe {
    /// The probe of the minimum `e` (`e.other` is its box's maximum).
    #[inline(always)]
    pub(super) fn new(e: &End) -> Self {
        Self {
            max: e.other,
            uv: UvProbe::new(&e.uv),
        }
    }

    /// Zero when the box of the maximum `q` overlaps the probe's box on the two other axes;
    /// otherwise a non-zero value below 16. Branch-free: the caller combines it with its own
    /// conditions and branches once.
    #[inline(always)]
    pub(super) fn misses(&self, q: &End) -> u32 {
        self.uv.misses(&q.uv)
    }

    /// Whether the box of the maximum `q` (`q.other` its minimum) does not start above the
    /// probe's maximum on the sweep axis: with [`Probe::misses`], the full overlap test.
    /// Nearly always true for a maximum just passed, so it is checked only after the others.
    #[inline(always)]
    pub(super) fn reaches(&self, q: &End) -> bool {
        q.other <= self.max
    }
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
            prop_assert_eq!(crate::simd::uv_overlap_scalar(&min.uv, &max.uv) & u64::from(max.other <= min.other), u64::from(want));
        }
    }
}
