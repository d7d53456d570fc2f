//! A cache hint shared by the passes that know which memory they will read next before they
//! read it (moved boxes by slot, tree nodes, pair-table buckets). The instruction itself is in
//! [`crate::simd`] ([`simd::prefetch_line`]); this module says which lines to ask for.

use crate::simd;

/// Asks the processor to start loading the cache line holding `item`. A hint: it changes no
/// result, and does nothing on other architectures.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    simd::prefetch_line((item as *const T).cast::<u8>());
}

/// [`prefetch`] for every cache line `item` spans: a 24-byte box in an array of them crosses
/// into a second line one time in four, and that line would otherwise wait for memory.
#[inline(always)]
pub(crate) fn prefetch_whole<T>(item: &T) {
    prefetch(item);
    let last = (item as *const T)
        .cast::<u8>()
        .wrapping_add(std::mem::size_of::<T>().saturating_sub(1));
    simd::prefetch_line(last);
}

/// Asks for the cache line `ahead` items past the end of `list`, when its capacity reaches that
/// far: a list filled one push at a time, among many filled at once (binning into cells or
/// buckets), is a stream too many for the processor to follow, and each new line it writes
/// would otherwise wait for memory.
#[inline(always)]
pub(crate) fn prefetch_tail<T>(list: &mut Vec<T>, ahead: usize) {
    if let Some(slot) = list.spare_capacity_mut().get(ahead) {
        prefetch(slot);
    }
}

#[cfg(test)]
mod tests {
    /// A hint on any live reference is harmless and leaves the value as it was.
    #[test]
    fn prefetch_changes_nothing() {
        let v = vec![1u64, 2, 3];
        for x in &v {
            super::prefetch(x);
        }
        super::prefetch(&v);
        let boxes = [[1.0f32; 6]; 3];
        for b in &boxes {
            super::prefetch_whole(b);
        }
        super::prefetch_whole(&());
        assert_eq!(v, [1, 2, 3]);
        assert_eq!(boxes, [[1.0; 6]; 3]);
    }

    /// Past the capacity nothing is asked; within it, the list is left as it was.
    #[test]
    fn prefetch_tail_stays_within_the_capacity() {
        let mut v: Vec<u64> = Vec::with_capacity(8);
        v.extend([1, 2, 3]);
        super::prefetch_tail(&mut v, 2);
        super::prefetch_tail(&mut v, 100);
        let mut empty: Vec<u64> = Vec::new();
        super::prefetch_tail(&mut empty, 0);
        assert_eq!(v, [1, 2, 3]);
        assert!(empty.is_empty());
    }
}
