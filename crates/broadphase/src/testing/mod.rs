//! The shared differential suite: every algorithm against [`BruteForce`].
//!
//! [`check_algorithm`] generates thousands of random call sequences (proptest, with shrinking),
//! runs each on a fresh instance of the algorithm and on `BruteForce`, and after every call
//! checks that both answered the same; after every update, that the created and deleted lists
//! and the persistent pair set are identical. Sequences mix fixed and dynamic proxies, groups,
//! layers and rule changes, origin shifts, batches, exactly touching and zero-size boxes,
//! duplicates, and bad input (NaN, infinities, `min > max`, stale, foreign and removed ids,
//! invalid layers), which must return the same [`Error`](crate::Error) from both and change nothing.
//! Each sequence is replayed once more on a single thread to check determinism. After every
//! update, and at the end, the algorithm checks its own structure
//! ([`BroadPhase::check_structure`]): a corrupt structure fails the case even while its
//! answers are still right.
//!
//! ```no_run
//! use broadphase::{testing, Algorithm, Config};
//! testing::check_algorithm(|| broadphase::new(Algorithm::Abp, Config::default()));
//! ```
//!
//! A failure panics with the shortest failing sequence found, as a `Vec<Op>` that
//! [`check_sequence`] replays: paste it into a regression test.
//!
//! The cases are drawn afresh at every run. For a longer hunt, set `BROADPHASE_CHECK_SCALE`
//! (a float) to multiply every case count ([`scaled_cases`]).

//!
//! The files: `ops` (the calls and their strategies), `compare` (one call's answers compared),
//! `replay` (a sequence replayed on both, and again for determinism), `crowd` (the crowds)
//! and `naive` ([`NaiveOracle`], an oracle for the oracle).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod compare;
mod crowd;
mod naive;
mod ops;
mod replay;

use std::fmt::Debug;

use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestError, TestRunner};

pub use crate::split_mix::SplitMix64;
use crate::BroadPhase;
#[cfg(doc)]
use crate::BruteForce;
use crowd::crowd;
pub use naive::NaiveOracle;
use ops::{sequence, World};
pub use ops::{BadBox, Op, Pick, Query};
pub use replay::check_sequence;

/// How much checking [`check_algorithm_with`] does.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Sequences in the small, dense world.
    pub small_cases: u32,
    /// Sequences in the large world with big origin shifts.
    pub large_cases: u32,
    /// Crowd runs: hundreds to thousands of boxes moving over several frames.
    pub crowd_cases: u32,
}

/// `base` test cases multiplied by the environment variable `BROADPHASE_CHECK_SCALE` (a
/// float; 1 when unset, negative or unreadable), and at least one: a longer bug hunt
/// (`BROADPHASE_CHECK_SCALE=8 cargo test ...`) scales every randomised check that asks here.
///
/// ```
/// assert!(broadphase::testing::scaled_cases(0) >= 1);
/// ```
#[must_use]
pub fn scaled_cases(base: u32) -> u32 {
    let scale = std::env::var("BROADPHASE_CHECK_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(1.0);
    // `as` saturates: a huge scale gives `u32::MAX` cases, not a wrap.
    (f64::from(base) * scale).round().max(1.0) as u32
}

impl CheckOptions {
    /// `small` small-world sequences, `large` large-world ones and `crowd` crowds, each
    /// scaled by [`scaled_cases`].
    #[must_use]
    pub fn scaled(small: u32, large: u32, crowd: u32) -> Self {
        Self {
            small_cases: scaled_cases(small),
            large_cases: scaled_cases(large),
            crowd_cases: scaled_cases(crowd),
        }
    }
}

impl Default for CheckOptions {
    /// 2,000 small-world sequences, 1,000 large-world ones and 48 crowds, scaled as
    /// [`CheckOptions::scaled`] says.
    fn default() -> Self {
        Self::scaled(2000, 1000, 48)
    }
}

/// Runs the whole differential suite on the algorithm `make` creates; panics with the
/// smallest failing sequence on the first difference from [`BruteForce`].
pub fn check_algorithm(make: impl Fn() -> Box<dyn BroadPhase>) {
    check_algorithm_with(make, &CheckOptions::default());
}

/// [`check_algorithm`] with chosen case counts.
pub fn check_algorithm_with(make: impl Fn() -> Box<dyn BroadPhase>, options: &CheckOptions) {
    check_algorithm_against(make, replay::brute_force, options);
}

/// [`check_algorithm_with`] against another oracle than `BruteForce`: how the crate checks
/// `BruteForce` itself against [`NaiveOracle`], which shares none of its code.
pub fn check_algorithm_against(
    make: impl Fn() -> Box<dyn BroadPhase>,
    oracle: impl Fn() -> Box<dyn BroadPhase>,
    options: &CheckOptions,
) {
    for (name, world, cases, len) in [
        ("small world", World::Small, options.small_cases, 80),
        ("large world", World::Large, options.large_cases, 60),
    ] {
        let mut runner = runner(cases);
        let result = runner.run(&sequence(world, len), |ops| {
            replay::check_sequence_against(&make, &oracle, &ops).map_err(TestCaseError::fail)
        });
        report(name, result);
    }
    let mut runner = runner(options.crowd_cases);
    let result = runner.run(&crowd(), |c| {
        replay::check_sequence_against(&make, &oracle, &c.ops()).map_err(TestCaseError::fail)
    });
    report("crowd", result);
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..RunnerConfig::default()
    })
}

fn report<T: Debug>(name: &str, result: Result<(), TestError<T>>) {
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => {
            panic!(
                "differential suite ({name}) failed: {reason}\nminimal failing input:\n{value:#?}"
            )
        }
        Err(TestError::Abort(reason)) => panic!("differential suite ({name}) aborted: {reason}"),
    }
}
