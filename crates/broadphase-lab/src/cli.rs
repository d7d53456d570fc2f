//! What `bplab`'s command line accepts, shared by its commands: thread counts, sizes and
//! scene names (with their descriptions in `--help`), and what each exit code means.
//!
//! Exit codes: 0 when the command did its work (and `--help`, `--version`); [`USAGE`] (2) for
//! a usage error, that is a bad argument or value or an input file that cannot be read or is
//! malformed, with nothing run; [`FAILURE`](std::process::ExitCode::FAILURE) (1) when the
//! command ran and failed: an algorithm disagreed with `BruteForce`, or the output could not
//! be written.

use std::ffi::OsStr;
use std::process::ExitCode;

use clap::builder::{PossibleValue, TypedValueParser, ValueParserFactory};

use crate::scenes::SceneKind;

/// The exit code of a usage error, as clap's own.
pub const USAGE: u8 = 2;

/// [`USAGE`] as an exit code.
pub fn usage_error() -> ExitCode {
    ExitCode::from(USAGE)
}

/// Worker threads allowed per core: more only queue behind each other. A run on 999 threads
/// spent 290 ms on a frame of 100 boxes starting and parking them.
pub const THREADS_PER_CORE: usize = 4;

/// The most worker threads on any machine.
pub const MAX_THREADS: usize = 256;

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads a command accepts here: [`THREADS_PER_CORE`] per core, at most
/// [`MAX_THREADS`].
pub fn max_threads() -> usize {
    (THREADS_PER_CORE * cores()).min(MAX_THREADS)
}

/// A `--threads` value: a whole number from 1 to [`max_threads`].
///
/// # Errors
/// A message giving the allowed range.
pub fn parse_threads(s: &str) -> Result<u32, String> {
    let max = max_threads();
    s.trim()
        .parse::<u32>()
        .ok()
        .filter(|&t| t >= 1 && t as usize <= max)
        .ok_or_else(|| {
            format!(
                "expected a thread count from 1 to {max} ({THREADS_PER_CORE} per core on {} \
                 cores, at most {MAX_THREADS})",
                cores()
            )
        })
}

/// One of `bplab bench`'s `--threads` values: `all` (every core) or as [`parse_threads`].
///
/// # Errors
/// A message giving the allowed values.
pub fn parse_bench_threads(s: &str) -> Result<usize, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(cores());
    }
    parse_threads(s)
        .map(|t| t as usize)
        .map_err(|e| format!("{e}, or all"))
}

/// A length such as a cell size: finite and above zero.
///
/// # Errors
/// When it is not.
pub fn parse_positive(s: &str) -> Result<f32, String> {
    s.trim()
        .parse::<f32>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| "expected a finite number above 0".to_string())
}

/// A distance such as a margin: finite and not negative.
///
/// # Errors
/// When it is not.
pub fn parse_distance(s: &str) -> Result<f32, String> {
    s.trim()
        .parse::<f32>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| "expected a finite number, 0 or more".to_string())
}

/// The exit code of a broad-phase error from a command's run: a setting out of range
/// (`InvalidParameter`, e.g. `bplab cells --level 99`) is a usage error; anything else means
/// the run failed.
pub fn exit_code(e: &broadphase::Error) -> ExitCode {
    match e {
        broadphase::Error::InvalidParameter { .. } => usage_error(),
        _ => ExitCode::FAILURE,
    }
}

/// Parses scene names for clap as [`SceneKind`]'s `FromStr` does (any case, `-` for `_`),
/// and lists the scenes with their descriptions in `--help`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SceneParser;

impl TypedValueParser for SceneParser {
    type Value = SceneKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<SceneKind, clap::Error> {
        // clap's parser for a `FromStr` function, so that errors read as for other values.
        let parse = |s: &str| s.parse::<SceneKind>();
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            SceneKind::ALL
                .iter()
                .map(|k| PossibleValue::new(k.name()).help(k.description())),
        ))
    }
}

impl ValueParserFactory for SceneKind {
    type Parser = SceneParser;

    fn value_parser() -> SceneParser {
        SceneParser
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_stay_within_four_per_core() {
        let max = max_threads();
        assert!((THREADS_PER_CORE..=MAX_THREADS).contains(&max));
        assert_eq!(parse_threads("1"), Ok(1));
        assert_eq!(parse_threads(&max.to_string()), Ok(max as u32));
        for bad in ["0", "-1", "x", "", "999", &(max + 1).to_string()] {
            let e = parse_threads(bad).unwrap_err();
            assert!(e.contains(&format!("from 1 to {max}")), "{bad}: {e}");
        }
        assert_eq!(parse_bench_threads("ALL"), Ok(cores()));
        assert!(parse_bench_threads("0").unwrap_err().ends_with("or all"));
    }

    #[test]
    fn lengths_are_finite() {
        assert_eq!(parse_positive("0.5"), Ok(0.5));
        assert_eq!(parse_distance("0"), Ok(0.0));
        for bad in ["0", "-1", "nan", "inf", "x"] {
            assert!(parse_positive(bad).is_err(), "{bad}");
        }
        for bad in ["-0.1", "NaN", "-inf", ""] {
            assert!(parse_distance(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn scenes_parse_leniently_and_describe_themselves() {
        let cmd = clap::Command::new("t");
        let parse = |s: &str| SceneParser.parse_ref(&cmd, None, OsStr::new(s));
        assert_eq!(parse("Static-World").unwrap(), SceneKind::StaticWorld);
        assert!(parse("nope")
            .unwrap_err()
            .to_string()
            .contains("unknown scene"));
        let values: Vec<PossibleValue> = SceneParser.possible_values().unwrap().collect();
        assert_eq!(values.len(), SceneKind::ALL.len());
        assert!(values.iter().all(|v| v.get_help().is_some()));
    }
}
