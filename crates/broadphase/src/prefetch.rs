//! A cache hint shared by the passes that know which memory they will read next before they
//! read it (moved boxes by slot, tree nodes, pair-table buckets).

/// Asks the processor to start loading the cache line holding `item`. A hint: it changes no
/// result, and does nothing on other architectures.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // Newer compilers declare the intrinsic safe; older ones (the minimum supported) do not.
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of x86_64. A prefetch neither reads into the program nor faults; the
    // address comes from a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Asks for the cache line `ahead` items past the end of `list`, when its capacity reaches that
/// far: a list filled one push at a time, among many filled at once (a deal into cells or
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
        assert_eq!(v, [1, 2, 3]);
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
