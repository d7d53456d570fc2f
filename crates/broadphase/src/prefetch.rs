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
}
