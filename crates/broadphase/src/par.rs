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

/// Runs `a`, `b` and `c`, on three threads when `parallel` and the pool has them (Sap's three
/// axes).
pub(crate) fn three(
    parallel: bool,
    a: impl FnOnce() + Send,
    b: impl FnOnce() + Send,
    c: impl FnOnce() + Send,
) {
    both(parallel, a, || both(parallel, b, c));
}

/// `row(0)`, `row(1)`, ... `row(n - 1)` concatenated in order, the rows made on rayon's
/// threads when `parallel`.
pub(crate) fn concat_rows<T: Send>(
    parallel: bool,
    n: usize,
    row: impl Fn(usize) -> Vec<T> + Sync + Send,
) -> Vec<T> {
    #[cfg(feature = "parallel")]
    if parallel {
        use rayon::prelude::*;
        return (0..n).into_par_iter().flat_map_iter(row).collect();
    }
    let _ = parallel;
    (0..n).flat_map(row).collect()
}

/// Runs `f` on each pair of matching chunks of `chunk` items of `out` and `input`, on rayon's
/// threads when `parallel`.
pub(crate) fn zip_chunks<T: Send, U: Sync>(
    parallel: bool,
    out: &mut [T],
    input: &[U],
    chunk: usize,
    f: impl Fn(&mut [T], &[U]) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    if parallel {
        use rayon::prelude::*;
        out.par_chunks_mut(chunk)
            .zip(input.par_chunks(chunk))
            .for_each(|(o, i)| f(o, i));
        return;
    }
    let _ = parallel;
    for (o, i) in out.chunks_mut(chunk).zip(input.chunks(chunk)) {
        f(o, i);
    }
}

/// One `T` per worker of the pool the work runs on (scratch space kept from one update to the
/// next), owned by the structure that uses it: its memory is counted and freed with it, and
/// a clone starts with none.
#[derive(Debug, Default)]
pub(crate) struct PerWorker<T>(Vec<std::sync::Mutex<T>>);

impl<T> Clone for PerWorker<T> {
    fn clone(&self) -> Self {
        Self(Vec::new())
    }
}

impl<T: Default> PerWorker<T> {
    /// One for each thread of the current pool (call before the work starts).
    pub(crate) fn ensure(&mut self) {
        let n = threads();
        if self.0.len() < n {
            self.0.resize_with(n, Default::default);
        }
    }

    /// Runs `f` with the calling worker's own `T` (the first one outside a pool). The work a
    /// worker runs `f` for starts no parallel work, so a worker never holds two and its lock
    /// is free; were it not (a pool larger than the one counted), `f` gets a fresh `T`,
    /// which does the same work.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        #[cfg(feature = "parallel")]
        let k = rayon::current_thread_index().unwrap_or(0);
        #[cfg(not(feature = "parallel"))]
        let k = 0;
        match self.0.get(k).map(std::sync::Mutex::try_lock) {
            Some(Ok(mut mine)) => f(&mut mine),
            _ => f(&mut T::default()),
        }
    }

    /// The sum of `bytes` over them.
    pub(crate) fn sum(&self, bytes: impl Fn(&T) -> usize) -> usize {
        self.0
            .iter()
            .map(|m| bytes(&m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)))
            .sum::<usize>()
            + self.0.capacity() * size_of::<std::sync::Mutex<T>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helpers_give_the_same_results_on_any_threads() {
        for parallel in [false, true] {
            let (mut x, mut y, mut z) = (0, 0, 0);
            three(parallel, || x += 1, || y += 2, || z += 3);
            assert_eq!((x, y, z), (1, 2, 3));
            let rows = concat_rows(parallel, 50, |k| vec![k; k % 3]);
            let want: Vec<usize> = (0..50).flat_map(|k| vec![k; k % 3]).collect();
            assert_eq!(rows, want);
            let input: Vec<u32> = (0..1000).collect();
            let mut out = vec![0u32; 1000];
            zip_chunks(parallel, &mut out, &input, 64, |o, i| {
                for (o, i) in o.iter_mut().zip(i) {
                    *o = 2 * i;
                }
            });
            assert!(out.iter().zip(&input).all(|(o, i)| *o == 2 * i));
        }
    }

    #[test]
    fn both_runs_both_either_way() {
        for parallel in [false, true] {
            let (mut x, mut y) = (0, 0);
            both(parallel, || x += 1, || y += 2);
            assert_eq!((x, y), (1, 2));
        }
    }
}
