//! `bplab bench`: every algorithm against the peers on the lab's scenes, interleaved and
//! repeated, with the pairs of every contender checked against ours, the memory each holds,
//! and the results as JSON, CSV, a markdown table and SVG charts.
//!
//! A run is a matrix of [`Cell`]s (scene × size × thread count, [`matrix`]). In each cell
//! every contender is first checked on fresh copies ([`runner::verify`]), then built once
//! and warmed up, then timed in interleaved rounds ([`matrix::schedule`]): each round steps
//! the scene `frames` frames once and replays those frames to every contender in turn. A
//! contender's time per frame in a round is the round's time over `frames`; the median and
//! spread are over the rounds.

pub mod check;
pub mod contender;
pub mod gpu;
pub mod matrix;
pub mod memory;
pub mod peers;
pub mod plot;
pub mod publish;
pub mod report;
pub mod runner;

use std::fmt;
use std::path::PathBuf;

use broadphase::Algorithm;
use serde::{Deserialize, Serialize};

pub use check::Mismatch;
pub use matrix::Cell;
pub use peers::PeerKind;

use crate::progress::Progress;
use crate::run::VERIFY_ALL_UP_TO;
use crate::scenes::SceneKind;
use crate::variation::Variation;

/// The algorithms a bench runs by default (`BruteForce` only on request, at small sizes).
pub const DEFAULT_ALGORITHMS: &[Algorithm] = &[
    Algorithm::Abp,
    Algorithm::Sap,
    Algorithm::Mbp,
    Algorithm::QuadTree,
    Algorithm::Grid,
    Algorithm::Auto,
];

/// What to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchOptions {
    /// The matrix this started from: `quick`, `standard` or `full`.
    pub preset: String,
    /// The scenes, by name.
    #[serde(with = "scene_names")]
    pub scenes: Vec<SceneKind>,
    /// Boxes per scene.
    pub sizes: Vec<usize>,
    /// `broadphase`'s algorithms; the first is the reference every pair set is checked
    /// against.
    #[serde(with = "algorithm_names")]
    pub algorithms: Vec<Algorithm>,
    /// The peers (none without the `peers` feature).
    #[serde(with = "peer_names")]
    pub peers: Vec<PeerKind>,
    /// Whether GpuGrid runs (by default, wherever a device answers; see [`crate::gpu`]).
    #[serde(default)]
    pub gpu: bool,
    /// Thread counts, one rayon pool each.
    pub threads: Vec<usize>,
    /// Frames per timed round.
    pub frames: usize,
    /// Timed rounds per contender.
    pub repeats: usize,
    /// Untimed frames after the build, before memory is read and rounds start.
    pub warmup: usize,
    /// Frames of the verification pass, every one checked.
    pub verify_frames: usize,
    /// Seconds of timed frames each contender may spend in a cell: one past it runs no
    /// further frame there (at least one is timed). The reference, the first algorithm,
    /// always runs every frame, since the last one is checked against it.
    #[serde(default = "default_budget")]
    pub budget_s: f64,
    /// The scenes' seed.
    pub seed: u64,
    /// Factors varying the scenes' generators (`bplab bench --vary`).
    #[serde(default, with = "variation")]
    pub vary: Variation,
    /// The scene of the frame-time-against-N chart.
    #[serde(with = "scene_name")]
    pub plot_scene: SceneKind,
    /// Whether to show a progress bar.
    #[serde(skip)]
    pub progress: bool,
}

impl BenchOptions {
    /// The small matrix CI runs: three scenes at 10k boxes, one thread and all cores, every
    /// algorithm and peer, every frame checked.
    pub fn quick() -> Self {
        Self {
            preset: "quick".to_string(),
            scenes: vec![SceneKind::Uniform, SceneKind::Clustered, SceneKind::Churn],
            sizes: vec![10_000],
            algorithms: DEFAULT_ALGORITHMS.to_vec(),
            peers: default_peers(),
            gpu: crate::gpu::available(),
            threads: thread_counts(&[1, 0]),
            frames: 20,
            repeats: 5,
            warmup: 2,
            verify_frames: 5,
            budget_s: DEFAULT_BUDGET_S,
            seed: 1,
            vary: Variation::default(),
            plot_scene: SceneKind::Uniform,
            progress: true,
        }
    }

    /// Every scene at 10k and 100k boxes, on one thread and all cores.
    pub fn standard() -> Self {
        Self {
            preset: "standard".to_string(),
            scenes: SceneKind::ALL.to_vec(),
            sizes: vec![10_000, 100_000],
            frames: 10,
            repeats: 5,
            verify_frames: 2,
            ..Self::quick()
        }
    }

    /// Everything: every scene at 10k, 100k and 1M boxes, on 1, 2 and all cores.
    pub fn full() -> Self {
        Self {
            preset: "full".to_string(),
            sizes: vec![10_000, 100_000, 1_000_000],
            threads: thread_counts(&[1, 2, 0]),
            ..Self::standard()
        }
    }

    /// Checks the options before anything runs.
    ///
    /// # Errors
    /// [`BenchError::Options`] saying what is wrong.
    pub fn validate(&self) -> Result<(), BenchError> {
        let bad = |what: &str| Err(BenchError::Options(what.to_string()));
        if self.algorithms.is_empty() {
            return bad("--algos: at least one algorithm (the first is the reference)");
        }
        if self.scenes.is_empty() || self.sizes.is_empty() || self.threads.is_empty() {
            return bad("--scenes, --sizes and --threads each need at least one value");
        }
        if self.frames == 0 || self.repeats == 0 {
            return bad("--frames and --repeats must be at least 1");
        }
        if !(self.budget_s.is_finite() && self.budget_s > 0.0) {
            return bad("--budget: a number of seconds above 0");
        }
        if self.sizes.iter().any(|&n| n == 0 || n > MAX_SIZE) {
            return bad(&format!("--sizes: each from 1 to {MAX_SIZE}"));
        }
        let max = crate::cli::max_threads();
        if self.threads.iter().any(|&t| t == 0 || t > max) {
            return bad(&format!(
                "--threads: each from 1 to {max} ({} per core, at most {})",
                crate::cli::THREADS_PER_CORE,
                crate::cli::MAX_THREADS
            ));
        }
        let largest = self
            .scenes
            .iter()
            .flat_map(|&s| self.sizes.iter().map(move |&n| matrix::scene_size(s, n)))
            .max()
            .unwrap_or(0);
        if self.algorithms.contains(&Algorithm::BruteForce) && largest > VERIFY_ALL_UP_TO {
            return bad(&format!(
                "brute-force is O(n²): only up to {VERIFY_ALL_UP_TO} boxes (largest cell: {largest})"
            ));
        }
        if self.gpu && !crate::gpu::available() {
            let why = crate::gpu::info().err().unwrap_or_default();
            return bad(&format!("--gpu: GpuGrid cannot run here: {why}"));
        }
        if !self.peers.is_empty() && !PeerKind::available() {
            return bad("--peers: this bplab was built without the `peers` feature");
        }
        Ok(())
    }
}

/// The largest scene a bench accepts.
pub const MAX_SIZE: usize = 16_777_216;

/// Seconds of timed frames a contender may spend in one cell by default: two minutes, so
/// that a peer whose frames take minutes (parry's tree on `teleport` at a million boxes)
/// costs the run a few of them rather than hours, while every other cell runs in full.
pub const DEFAULT_BUDGET_S: f64 = 120.0;

fn default_budget() -> f64 {
    DEFAULT_BUDGET_S
}

/// Every peer when the `peers` feature is on, else none.
pub fn default_peers() -> Vec<PeerKind> {
    if PeerKind::available() {
        PeerKind::ALL.to_vec()
    } else {
        Vec::new()
    }
}

/// The cores of this machine (1 when unknown).
pub fn cores() -> usize {
    crate::cli::cores()
}

/// Thread counts with 0 read as all cores, sorted, each once.
pub fn thread_counts(counts: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = counts
        .iter()
        .map(|&t| if t == 0 { cores() } else { t })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A size on the command line: `10000`, `10k`, `1m` (any case, `_` allowed).
///
/// # Errors
/// A message when it is not a whole number of boxes from 1 to [`MAX_SIZE`].
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "").to_ascii_lowercase();
    let (digits, scale) = match t.strip_suffix('k') {
        Some(d) => (d.to_string(), 1_000),
        None => match t.strip_suffix('m') {
            Some(d) => (d.to_string(), 1_000_000),
            None => (t.clone(), 1),
        },
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|d| d.checked_mul(scale))
        .filter(|&n| (1..=MAX_SIZE).contains(&n))
        .ok_or_else(|| {
            format!("{s:?}: a number of boxes from 1 to {MAX_SIZE} (like 10000, 10k, 1m)")
        })
}

/// Why a bench failed.
#[derive(Debug)]
pub enum BenchError {
    /// The options make no sense (exit code 2).
    Options(String),
    /// GpuGrid cannot be timed as asked: no device, or a CPU (software) driver without
    /// `--allow-cpu-adapter` (`bplab bench --gpu`; exit code 1).
    Gpu(String),
    /// A broad phase rejected the scene's input (a bug).
    BroadPhase(broadphase::Error),
    /// A contender's pairs differed from the reference's.
    Mismatch(Mismatch),
    /// The operating system refused the worker threads.
    Threads(String),
    /// An output file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A chart could not be drawn.
    Plot(String),
    /// The results could not be turned into JSON.
    Json(serde_json::Error),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Options(what) => f.write_str(what),
            BenchError::Gpu(why) => write!(f, "GpuGrid cannot be timed: {why}"),
            BenchError::BroadPhase(e) => write!(f, "a broad phase rejected the scene: {e}"),
            BenchError::Mismatch(m) => write!(f, "pair check failed: {m}"),
            BenchError::Threads(e) => write!(f, "cannot start worker threads: {e}"),
            BenchError::Write { path, error } => {
                write!(f, "cannot write {}: {error}", path.display())
            }
            BenchError::Plot(e) => write!(f, "cannot draw a chart: {e}"),
            BenchError::Json(e) => write!(f, "cannot write the JSON results: {e}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<broadphase::Error> for BenchError {
    fn from(e: broadphase::Error) -> Self {
        BenchError::BroadPhase(e)
    }
}

impl From<Mismatch> for BenchError {
    fn from(m: Mismatch) -> Self {
        BenchError::Mismatch(m)
    }
}

/// Time per frame over a contender's rounds, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median round.
    pub median: f64,
    /// The fastest round.
    pub min: f64,
    /// The slowest round.
    pub max: f64,
    /// The first quartile (nearest rank).
    pub q1: f64,
    /// The third quartile (nearest rank).
    pub q3: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Self {
        let q = |p| crate::run::percentile(values, p);
        Self {
            median: q(0.5),
            min: q(0.0),
            max: q(1.0),
            q1: q(0.25),
            q3: q(0.75),
        }
    }
}

/// One contender's results in one cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContenderResult {
    /// The algorithm's or peer's name.
    pub name: String,
    /// Whether it is a peer.
    pub peer: bool,
    /// Building it from the scene's boxes (and its first pairs), in milliseconds.
    pub build_ms: f64,
    /// Time per frame of each round, in milliseconds, in round order (fewer rounds, the
    /// last one shorter, where the contender ran out of its budget).
    pub round_ms: Vec<f64>,
    /// Frames timed: `frames × repeats`, or fewer where the contender ran out of its budget
    /// in the cell (its pairs then were checked on the verification pass only).
    #[serde(default)]
    pub timed_frames: usize,
    /// The spread of `round_ms`.
    pub frame_ms: Spread,
    /// What it holds, when the counting allocator is installed.
    pub memory: Option<memory::Memory>,
    /// How it ran, where it says (`Auto`: the algorithm it ended on, why, its switches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One cell's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// The scene's name.
    pub scene: String,
    /// Boxes in the scene.
    pub n: usize,
    /// Worker threads.
    pub threads: usize,
    /// Overlapping pairs after the last frame (the reference's, which every exact contender
    /// matched).
    pub pairs: usize,
    /// Frames each contender was checked on (the verification pass, the build included,
    /// plus the last timed frame).
    pub checked_frames: usize,
    /// The contenders, `broadphase`'s algorithms first.
    pub contenders: Vec<ContenderResult>,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// The lab's version.
    pub version: String,
    /// When the run ended, in seconds since 1970.
    pub unix_time: u64,
    /// Cores of the machine.
    pub cores: usize,
    /// Operating system and architecture.
    pub platform: String,
    /// The processor's model name, where the system says it (Linux's `/proc/cpuinfo`).
    #[serde(default)]
    pub cpu: String,
    /// The command line of the run (`bplab bench ...`).
    #[serde(default)]
    pub command: String,
    /// Whether memory was measured (the counting allocator was installed).
    pub memory_measured: bool,
    /// What was run.
    pub options: BenchOptions,
    /// The cells, in run order.
    pub cells: Vec<CellResult>,
}

/// The processor's model name from `/proc/cpuinfo`, or `unknown processor`.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown processor".to_string())
}

/// This process's arguments as a `bplab` command line (the program's path left out).
fn command_line() -> String {
    let mut words = vec!["bplab".to_string()];
    words.extend(std::env::args().skip(1).map(|a| {
        if a.contains(char::is_whitespace) {
            format!("'{a}'")
        } else {
            a
        }
    }));
    words.join(" ")
}

/// Runs the matrix of `opts`, cell after cell.
///
/// # Errors
/// Bad options; a pair mismatch (the run stops there); a broad phase rejecting input; the
/// threads refused.
pub fn run(opts: &BenchOptions) -> Result<BenchReport, BenchError> {
    opts.validate()?;
    let cells = matrix::cells(opts);
    let steps: usize = cells
        .iter()
        .map(|c| runner::contenders(c, opts).len() * (opts.repeats + 2))
        .sum();
    let mut progress = Progress::new(steps as u64, opts.progress, "steps");
    let mut results = Vec::with_capacity(cells.len());
    for cell in &cells {
        results.push(runner::run_cell(cell, opts, &mut progress)?);
    }
    progress.finish();
    Ok(BenchReport {
        version: env!("CARGO_PKG_VERSION").to_string(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        cores: cores(),
        platform: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        cpu: cpu_model(),
        command: command_line(),
        memory_measured: crate::alloc::active(),
        options: opts.clone(),
        cells: results,
    })
}

/// Serde by name for the option lists (scenes, algorithms and peers read back by name).
macro_rules! by_name {
    ($module:ident, $ty:ty, $name:expr, $parse:expr) => {
        mod $module {
            use super::*;
            use serde::{Deserializer, Serializer};

            pub fn serialize<S: Serializer>(v: &[$ty], s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(v.iter().map($name))
            }

            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<$ty>, D::Error> {
                Vec::<String>::deserialize(d)?
                    .iter()
                    .map(|n| $parse(n).map_err(serde::de::Error::custom))
                    .collect()
            }
        }
    };
}

by_name!(
    scene_names,
    SceneKind,
    |k: &SceneKind| k.name(),
    |n: &str| n.parse::<SceneKind>()
);
by_name!(
    algorithm_names,
    Algorithm,
    |a: &Algorithm| a.cli_name(),
    |n: &str| n.parse::<Algorithm>().map_err(|e| e.to_string())
);
by_name!(peer_names, PeerKind, |p: &PeerKind| p.name(), |n: &str| {
    n.parse::<PeerKind>()
});

/// Serde of a variation as `--vary` writes it.
mod variation {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Variation, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Variation, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Serde of one scene by name.
mod scene_name {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &SceneKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SceneKind, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_threads_parse() {
        assert_eq!(parse_size("10k"), Ok(10_000));
        assert_eq!(parse_size("1M"), Ok(1_000_000));
        assert_eq!(parse_size("100_000"), Ok(100_000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("ten").is_err());
        assert!(parse_size("99999999999999999999k").is_err());
        let mut o = BenchOptions::quick();
        o.threads = vec![crate::cli::max_threads() + 1];
        assert!(matches!(o.validate(), Err(BenchError::Options(_))));
    }

    #[test]
    fn bad_options_are_errors() {
        let mut o = BenchOptions::quick();
        o.algorithms.clear();
        assert!(matches!(o.validate(), Err(BenchError::Options(_))));
        let mut o = BenchOptions::quick();
        o.algorithms = vec![Algorithm::BruteForce];
        assert!(matches!(o.validate(), Err(BenchError::Options(_))));
        let mut o = BenchOptions::quick();
        o.frames = 0;
        assert!(matches!(o.validate(), Err(BenchError::Options(_))));
        assert!(BenchOptions::full().validate().is_ok());
    }
}
