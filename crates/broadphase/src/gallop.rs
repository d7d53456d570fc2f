//! Galloping search in sorted keys, shared by the passes that walk a sorted list forward in
//! steps that are mostly short (Sap's fingers, Grid's merge of arrivals into kept entries).

/// The first index at or after `from` whose key fails `pred` (a predicate true on a prefix of
/// the sorted `keys`): steps that double from `from` until one lands past the answer, then a
/// binary search behind it, so a short step costs a few reads.
#[inline]
pub(crate) fn gallop<K: Copy>(keys: &[K], from: usize, pred: impl Fn(K) -> bool) -> usize {
    let n = keys.len();
    let (mut lo, mut step) = (from, 1usize);
    let hi = loop {
        let probe = lo + step - 1;
        if probe >= n || !pred(keys[probe]) {
            break probe.min(n);
        }
        lo = probe + 1;
        step *= 2;
    };
    lo + keys[lo..hi].partition_point(|&k| pred(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn gallop_matches_partition_point(
            mut keys in prop::collection::vec(0u32..50, 0..200),
            from_frac in 0.0f64..1.0,
            c in 0u32..52,
            sentinel in any::<bool>(),
        ) {
            keys.sort_unstable();
            if sentinel {
                keys.push(u32::MAX);
            }
            let lt = keys.partition_point(|&k| k < c);
            let from = ((lt as f64) * from_frac) as usize;
            prop_assert_eq!(gallop(&keys, from, |k| k < c), lt);
            let le = keys.partition_point(|&k| k <= c);
            let from = ((le as f64) * from_frac) as usize;
            prop_assert_eq!(gallop(&keys, from, |k| k <= c), le);
        }
    }
}
