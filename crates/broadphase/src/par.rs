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

/// Items in each of two lists from which sorting them on two threads pays. Tiny with the
/// `testing` feature, so that the differential suite's crowds sort that way.
#[cfg(not(feature = "testing"))]
pub(crate) const SORT_BOTH_MIN: usize = 1 << 13;
#[cfg(feature = "testing")]
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
