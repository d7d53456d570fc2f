//! `bplab bench --gpu`: GpuGrid against the best CPU algorithm on uniform scenes of millions of
//! boxes, as one markdown table on stdout and in `gpu.md`, with everything measured in
//! `gpu.json`.
//!
//! It is a bench run ([`crate::bench::run`]) on one matrix: the uniform scene (all boxes
//! moving) at 1M and 4M boxes by default, on every core, the algorithms and GpuGrid checked
//! against each other and timed in interleaved rounds, no peers. A frame's time is the frame's
//! moves and `update()`, events included, as for every contender.
//!
//! A CPU adapter (a software driver such as Mesa's lavapipe) runs the kernels on the CPU: its
//! times say that GpuGrid works, not how fast a GPU is. [`check_adapter`] refuses it unless
//! asked to allow it, and the table then says so in its title.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bench::report::{self, ms, size_label};
use crate::bench::{BenchError, BenchOptions, BenchReport, CellResult, Spread};
use crate::gpu::Adapter;
use crate::scenes::SceneKind;

/// The sizes timed when none are asked for: a million boxes (the target, under 2 ms a
/// frame on a GPU) and four million. Ten million (`--sizes 1m,4m,10m`) shows that they fit.
pub const DEFAULT_SIZES: &[usize] = &[1_000_000, 4_000_000];

/// The files [`write()`] writes into its folder.
pub const FILES: &[&str] = &["gpu.md", "gpu.json"];

/// The options of `bplab bench --gpu` before the command line's: the uniform scene at
/// [`DEFAULT_SIZES`], every core, no peers, GpuGrid on.
pub fn options() -> BenchOptions {
    BenchOptions {
        preset: "gpu".to_string(),
        scenes: vec![SceneKind::Uniform],
        sizes: DEFAULT_SIZES.to_vec(),
        peers: Vec::new(),
        gpu: true,
        threads: crate::bench::thread_counts(&[0]),
        frames: 10,
        repeats: 5,
        warmup: 2,
        verify_frames: 2,
        ..BenchOptions::quick()
    }
}

/// The adapter GpuGrid would be timed on, if it may be.
///
/// # Errors
/// [`BenchError::Gpu`] when there is no device, or when it is a CPU (software driver) and
/// `allow_cpu` is not set.
pub fn check_adapter(allow_cpu: bool) -> Result<Adapter, BenchError> {
    let adapter = crate::gpu::adapter().map_err(BenchError::Gpu)?;
    if adapter.cpu && !allow_cpu {
        return Err(BenchError::Gpu(format!(
            "the adapter is {}, a CPU (software) driver: its times are not a GPU's. Run on a \
             machine with a GPU (see `bplab gpu-info`), or pass --allow-cpu-adapter to time it \
             anyway",
            adapter.label()
        )));
    }
    Ok(adapter)
}

/// One scene and size: GpuGrid and the fastest CPU algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuRow {
    /// The scene.
    pub scene: String,
    /// Boxes.
    pub n: usize,
    /// Worker threads of the CPU algorithms.
    pub threads: usize,
    /// Overlapping pairs after the last frame (every contender agreed).
    pub pairs: usize,
    /// GpuGrid's time per frame over the rounds, in milliseconds.
    pub gpu_ms: Spread,
    /// GpuGrid's build (upload and first update), in milliseconds.
    pub gpu_build_ms: f64,
    /// The CPU algorithm with the lowest median.
    pub best_cpu: String,
    /// Its time per frame over the rounds, in milliseconds.
    pub cpu_ms: Spread,
    /// The best CPU median over GpuGrid's: above 1, GpuGrid is faster.
    pub speedup: f64,
}

/// What `bplab bench --gpu` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuReport {
    /// The adapter GpuGrid ran on.
    pub adapter: Adapter,
    /// One row per scene and size.
    pub rows: Vec<GpuRow>,
    /// The whole bench run behind the rows: every contender's rounds and memory.
    pub bench: BenchReport,
}

/// The row of a cell where GpuGrid ran, or `None` where it did not (or no CPU algorithm did).
fn row(cell: &CellResult) -> Option<GpuRow> {
    let gpu = cell
        .contenders
        .iter()
        .find(|k| k.name == crate::gpu::NAME)?;
    let cpu = cell
        .contenders
        .iter()
        .filter(|k| !k.peer && k.name != crate::gpu::NAME)
        .min_by(|a, b| a.frame_ms.median.total_cmp(&b.frame_ms.median))?;
    Some(GpuRow {
        scene: cell.scene.clone(),
        n: cell.n,
        threads: cell.threads,
        pairs: cell.pairs,
        gpu_ms: gpu.frame_ms.clone(),
        gpu_build_ms: gpu.build_ms,
        best_cpu: cpu.name.clone(),
        cpu_ms: cpu.frame_ms.clone(),
        speedup: cpu.frame_ms.median / gpu.frame_ms.median.max(f64::MIN_POSITIVE),
    })
}

/// Runs the bench of `opts` (GpuGrid on, no peers) on `adapter` and makes the rows.
///
/// # Errors
/// As [`crate::bench::run`]: bad options, a pair mismatch, a device that fails.
pub fn run(opts: &BenchOptions, adapter: Adapter) -> Result<GpuReport, BenchError> {
    let mut opts = opts.clone();
    opts.gpu = true;
    let bench = crate::bench::run(&opts)?;
    let rows = bench.cells.iter().filter_map(row).collect();
    Ok(GpuReport {
        adapter,
        rows,
        bench,
    })
}

/// `median ± half the min–max spread`, as `results.md` writes it.
fn spread(s: &Spread) -> String {
    format!("{} ± {}", ms(s.median), ms((s.max - s.min) / 2.0))
}

/// The report as markdown: a title (a warning when the adapter is a CPU), the run's machine
/// and command, and the table.
pub fn markdown(r: &GpuReport) -> String {
    let mut out = String::from("# GpuGrid against the best CPU algorithm\n\n");
    if r.adapter.cpu {
        out += &format!(
            "**{} is a CPU (software) driver: these are not GPU figures, only a check that \
             GpuGrid runs.**\n\n",
            r.adapter.name
        );
    }
    let b = &r.bench;
    out += &format!(
        "Adapter: {}, driver {}. CPU: {} ({} cores, {}). bplab {}, {}: `{}`.\n\n",
        r.adapter.label(),
        r.adapter.driver,
        b.cpu,
        b.cores,
        b.platform,
        b.version,
        report::date(b.unix_time),
        b.command
    );
    let header: Vec<String> = [
        "scene",
        "boxes",
        "pairs",
        "GpuGrid ms/frame",
        "best CPU",
        "CPU ms/frame",
        "CPU ÷ GpuGrid",
        "threads",
        "adapter",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            vec![
                row.scene.clone(),
                size_label(row.n),
                row.pairs.to_string(),
                spread(&row.gpu_ms),
                row.best_cpu.clone(),
                spread(&row.cpu_ms),
                format!("{:.2}×", row.speedup),
                row.threads.to_string(),
                r.adapter.label(),
            ]
        })
        .collect();
    out += &report::table(&header, &rows);
    out += &format!(
        "\nms/frame: the median over {} rounds of {} frames ± half the min–max spread; a \
         frame is the scene's moves handed over and `update()` with its events. Every \
         contender's pairs were checked against the others' on {} frames and the last one \
         timed. Above 1×, GpuGrid is faster.\n",
        b.options.repeats,
        b.options.frames,
        b.options.verify_frames + 1
    );
    out
}

/// Writes `gpu.md` and `gpu.json` into `dir` (created if missing); returns the files.
///
/// # Errors
/// [`BenchError::Write`] when a file cannot be written; [`BenchError::Json`].
pub fn write(r: &GpuReport, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir).map_err(|error| BenchError::Write {
        path: dir.to_path_buf(),
        error,
    })?;
    let json = serde_json::to_string_pretty(r).map_err(BenchError::Json)? + "\n";
    Ok(vec![
        report::write(dir, FILES[0], &markdown(r))?,
        report::write(dir, FILES[1], &json)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ContenderResult;

    fn contender(name: &str, peer: bool, median: f64) -> ContenderResult {
        let rounds = [median * 0.9, median, median * 1.1];
        ContenderResult {
            name: name.to_string(),
            peer,
            build_ms: 1.0,
            round_ms: rounds.to_vec(),
            timed_frames: 3,
            frame_ms: Spread::of(&rounds),
            memory: None,
            note: None,
        }
    }

    #[test]
    fn the_row_takes_the_fastest_cpu_algorithm_and_never_a_peer() {
        let mut cell = CellResult {
            scene: "uniform".to_string(),
            n: 1_000_000,
            threads: 16,
            pairs: 5,
            checked_frames: 3,
            contenders: vec![
                contender("abp", false, 30.0),
                contender("grid", false, 12.0),
                contender(crate::gpu::NAME, false, 3.0),
                contender("broccoli", true, 1.0),
            ],
        };
        let r = row(&cell).unwrap();
        assert_eq!((r.best_cpu.as_str(), r.speedup), ("grid", 4.0));
        assert_eq!(spread(&r.gpu_ms), "3.00 ± 0.300");
        cell.contenders.retain(|k| k.name != crate::gpu::NAME);
        assert_eq!(row(&cell), None);
    }

    #[test]
    fn the_gpu_options_time_uniform_at_a_million_and_four() {
        let o = options();
        assert_eq!(o.scenes, [SceneKind::Uniform]);
        assert_eq!(o.sizes, [1_000_000, 4_000_000]);
        assert!(o.gpu && o.peers.is_empty());
        assert_eq!(o.threads, [crate::bench::cores()]);
    }
}
