//! Small pieces of parallelism shared by the algorithms; one thread without the `parallel`
//! feature.

/// The threads work may be spread over: rayon's current pool (the pool a caller runs the
/// update under), or one.
#[inline]
pub(crate) fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// Items in each of two lists from which sorting them on two threads pays. Tiny in the
/// crate's tests (`cfg(test)`), so that the differential suite's crowds sort that way.
#[cfg(not(test))]
pub(crate) const SORT_BOTH_MIN: usize = 1 << 13;
#[cfg(test)]
pub(crate) const SORT_BOTH_MIN: usize = 16;

/// Runs `a` and `b`, on two threads when `parallel` and the pool has them. Callers pass
/// `parallel` only for work large enough to pay for handing half of it over (a few
/// microseconds).
pub(crate) fn both(parallel: bool, a: impl FnOnce() + Send, b: impl FnOnce() + Send) {
    #[cfg(feature = "parallel")]
    if parallel && threads() > 1 {
        rayon::join(a, b);
        return;
    }
    let _ = parallel;
    a();
    b();
}

/// Runs `f` on every item, on rayon's threads when `parallel`, one task per item.
pub(crate) fn each_mut<T: Send>(
    parallel: bool,
    items: &mut [T],
    f: impl Fn(usize, &mut T) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    if parallel && items.len() > 1 {
        use rayon::prelude::*;
        // One task per item: left to itself, rayon cuts the items into as many runs as there
        // are threads (and splits further only what is stolen), so a thread that ran out of
        // work waited on the other's last run: at 1M boxes, a third of Grid's buckets' time.
        items
            .par_iter_mut()
            .with_max_len(1)
            .enumerate()
            .for_each(|(i, t)| f(i, t));
        return;
    }
    let _ = parallel;
    for (i, t) in items.iter_mut().enumerate() {
        f(i, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_runs_both_either_way() {
        for parallel in [false, true] {
            let (mut x, mut y) = (0, 0);
            both(parallel, || x += 1, || y += 2);
            assert_eq!((x, y), (1, 2));
        }
    }
}
