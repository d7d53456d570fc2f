//! SplitMix64 (Steele, Lea and Flood 2014): the deterministic random numbers of the unit tests
//! and of the [`testing`](crate::testing) suite's crowds, and the hash that picks the boxes a
//! grid is chosen from (`cells::grid`). Not for anything that must be unpredictable.

/// A SplitMix64 generator: any seed, zero included, gives a full-period stream.
///
/// ```
/// use broadphase::testing::SplitMix64;
/// let mut a = SplitMix64::new(7);
/// let mut b = SplitMix64::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// assert!((0.0..1.0).contains(&a.unit()));
/// ```
#[cfg(any(test, feature = "testing"))]
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

#[cfg(any(test, feature = "testing"))]
impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is 0); the modulo's bias is negligible for the small
    /// `n` tests use.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A float in `[0, 1)`, a multiple of 2⁻²⁴.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A hash of `i` whose bits all depend on all of `i`'s (SplitMix64's finalizer over
/// `(i + 1) * γ`).
#[inline]
pub(crate) fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// About one item of `items` in `stride`, each picked by a hash of its position. Taking every
/// `stride`-th item instead lines up with any order that repeats: boxes made round-robin over
/// 100 clusters, one in 25 taken, sample 4 clusters.
pub(crate) fn sample<T>(items: impl Iterator<Item = T>, stride: usize) -> impl Iterator<Item = T> {
    let stride = stride.max(1) as u64;
    items
        .enumerate()
        .filter(move |&(i, _)| mix(i as u64).is_multiple_of(stride))
        .map(|(_, item)| item)
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    /// The first outputs of seed 0 are the reference implementation's (Vigna's splitmix64.c).
    #[test]
    fn matches_the_reference_stream() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn below_and_unit_stay_in_range() {
        let mut r = SplitMix64::new(42);
        for n in [1, 2, 3, 10, 1000] {
            assert!((0..200).all(|_| r.below(n) < n));
        }
        assert_eq!(r.below(0), 0);
        assert!((0..1000).all(|_| (0.0..1.0).contains(&r.unit())));
    }
}
