//! What a contender holds, read from the counting allocator ([`crate::alloc`]): the bytes it
//! keeps once warmed up, and the most it held at once, per proxy and per pair.
//!
//! The counters are process-wide, so figures are differences taken around one contender's
//! work while nothing else runs: steady = live bytes after its build and warm-up frames minus
//! live bytes before its build, plus what each of its timed rounds added or gave back (so,
//! what it holds after its last frame: a broad phase that gives back, some updates later,
//! memory the first update needed is counted without it); peak = the largest of the peaks
//! over its build and each warm-up frame, and its bytes at the start of a timed round plus
//! the largest rise over that round.
//!
//! The bench's own lists that a contender holds ([`Contender::bench_bytes`]: the map from
//! proxies to scene indices, the batches a frame is handed over in, a peer's pair filter) are
//! left out, as read at the end of each step: they only grow, so what they held at a step's
//! peak is at most that.
//!
//! [`Contender::bench_bytes`]: crate::bench::contender::Contender::bench_bytes

use serde::{Deserialize, Serialize};

use crate::alloc;

/// A contender's memory in one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Bytes held after the last timed frame.
    pub steady_bytes: u64,
    /// The most bytes held at once, during the build, warm-up or a round.
    pub peak_bytes: u64,
    /// `steady_bytes` per box.
    pub steady_per_proxy: f64,
    /// `peak_bytes` per box.
    pub peak_per_proxy: f64,
    /// `steady_bytes` per overlapping pair (`None` without pairs).
    pub steady_per_pair: Option<f64>,
    /// `peak_bytes` per overlapping pair (`None` without pairs).
    pub peak_per_pair: Option<f64>,
}

impl Memory {
    /// The figures for `proxies` boxes and `pairs` pairs.
    pub fn new(steady_bytes: u64, peak_bytes: u64, proxies: usize, pairs: usize) -> Self {
        let per = |bytes: u64, count: usize| bytes as f64 / count.max(1) as f64;
        let per_pair = |bytes| (pairs > 0).then(|| per(bytes, pairs));
        Self {
            steady_bytes,
            peak_bytes,
            steady_per_proxy: per(steady_bytes, proxies),
            peak_per_proxy: per(peak_bytes, proxies),
            steady_per_pair: per_pair(steady_bytes),
            peak_per_pair: per_pair(peak_bytes),
        }
    }
}

/// Follows one contender's bytes through a cell.
#[derive(Clone, Copy, Debug, Default)]
pub struct Meter {
    /// Live bytes before the contender was built.
    baseline: usize,
    /// Its bytes held, as of the end of its last round (or of its warm-up).
    steady: usize,
    /// Its peak so far.
    peak: usize,
    /// Live bytes when the current phase started.
    phase_start: usize,
    /// The bench's own bytes among those held, as of the last step.
    bench: usize,
}

impl Meter {
    /// Starts metering before the contender is built.
    pub fn start() -> Self {
        let baseline = alloc::reset_peak();
        Self {
            baseline,
            phase_start: baseline,
            ..Self::default()
        }
    }

    /// After the build, and after each warm-up frame (nothing else allocating between): reads
    /// the steady bytes and the step's peak, less the `bench` bytes the contender holds.
    pub fn step_end(&mut self, bench: usize) {
        let held = alloc::current().saturating_sub(self.baseline);
        let peak = alloc::peak().saturating_sub(self.baseline);
        self.peak = self.peak.max(peak.saturating_sub(bench));
        self.steady = held.saturating_sub(bench);
        self.bench = bench;
        alloc::reset_peak();
    }

    /// Before one of its timed rounds.
    pub fn round_start(&mut self) {
        self.phase_start = alloc::reset_peak();
    }

    /// After that round, the contender holding `bench` bytes of the bench's: what the round
    /// added to the bytes held, or gave back, counts, less what the bench's lists grew by.
    pub fn round_end(&mut self, bench: usize) {
        let grew = bench.saturating_sub(self.bench);
        let rise = alloc::peak().saturating_sub(self.phase_start);
        self.peak = self.peak.max((self.steady + rise).saturating_sub(grew));
        self.steady = (self.steady + alloc::current()).saturating_sub(self.phase_start + grew);
        self.bench = bench;
    }

    /// The figures, or `None` when no counting allocator is installed.
    pub fn memory(&self, proxies: usize, pairs: usize) -> Option<Memory> {
        alloc::active().then(|| Memory::new(self.steady as u64, self.peak as u64, proxies, pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_proxy_and_per_pair() {
        let m = Memory::new(1_000, 3_000, 10, 4);
        assert_eq!((m.steady_per_proxy, m.peak_per_proxy), (100.0, 300.0));
        assert_eq!(
            (m.steady_per_pair, m.peak_per_pair),
            (Some(250.0), Some(750.0))
        );
        assert_eq!(Memory::new(1, 1, 1, 0).steady_per_pair, None);
    }
}
