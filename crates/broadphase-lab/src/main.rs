//! `bplab`: the broad-phase lab.
//!
//! `bplab` alone runs the default scene (20,000 moving boxes) through every algorithm, checks
//! each against `BruteForce` and prints a timing table. `bplab run --help` lists the knobs;
//! `bplab bench` measures every algorithm against the peers and writes results and charts.
//!
//! Exit codes (see [`broadphase_lab::cli`]): 0 on success, 2 for a usage error (a bad
//! argument, value or input file: nothing ran), 1 when a run failed (a verification mismatch,
//! output that could not be written).

use std::process::ExitCode;
use std::sync::Arc;

use broadphase::Algorithm;

use broadphase_lab::bench::{self, BenchError, BenchOptions, PeerKind};
use broadphase_lab::cells::{self, CellOptions};
use broadphase_lab::cli::{self, usage_error};
use broadphase_lab::output::{print_or_fail, Format};
use broadphase_lab::regions::{self, RegionOptions};
use broadphase_lab::run::{self, RunOptions, Verdict, VERIFY_ALL_UP_TO};
use broadphase_lab::scene_file::{self, SceneFile};
use broadphase_lab::scenes::SceneKind;
use broadphase_lab::tree::{self, TreeOptions};
use broadphase_lab::variation::Variation;
use clap::{Args, Parser, Subcommand};

// The counting allocator behind `bplab bench`'s memory figures: two relaxed atomic updates per
// allocation, which the other commands do not notice.
#[global_allocator]
static ALLOC: broadphase_lab::alloc::Counting = broadphase_lab::alloc::Counting;

#[derive(Parser, Debug)]
#[command(
    name = "bplab",
    version,
    about = "The broad-phase lab: scenes, verified runs, timing tables"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run algorithms on a scene, verify them against BruteForce and print a table.
    Run(RunArgs),
    /// Record a generated scene's frames as a trace file that `run --scene-file` replays.
    Record(RecordArgs),
    /// Lay a scene out in Mbp's regions and draw them as an SVG picture.
    Regions(RegionArgs),
    /// Build a scene into a QuadTree, run it, and write the trees as Graphviz DOT.
    Tree(TreeArgs),
    /// Run a scene in a Grid and draw one level's cells as an SVG picture.
    Cells(CellArgs),
    /// List the scenes and algorithms.
    List,
    /// GPU Gems 3 chapter 32's lab: brute force, sort and sweep and the grid side by side.
    Lab(broadphase_lab::lab::LabArgs),
    /// A scene that changes character (a fixed level, a mass spawn, most bodies asleep): each
    /// phase's frame times per algorithm, and what Auto ran on in each.
    Phases(broadphase_lab::phases::PhasesArgs),
    /// A QuadTree's streaming batches and snapshots: the commit of a prepared batch, and the
    /// query throughput of other threads during updates and with none.
    Concurrency(broadphase_lab::concurrency::ConcurrencyArgs),
    /// Every algorithm against the peers on every scene: interleaved, repeated, checked;
    /// results as JSON, CSV, markdown and SVG charts.
    Bench(BenchArgs),
    /// The device GpuGrid runs on: adapter, backend, driver and limits (exit code 1 if none).
    GpuInfo,
    /// GPU Gems 3's lab as a local web page: pick, guess, then step and watch (listens on
    /// 127.0.0.1 unless --bind says otherwise).
    #[cfg(feature = "serve")]
    Serve(broadphase_lab::serve::ServeArgs),
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// The small matrix CI runs (3 scenes at 10k boxes, 1 thread and all cores).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Everything: every scene at 10k, 100k and 1M boxes, on 1, 2 and all cores.
    #[arg(long)]
    full: bool,
    /// Algorithms, comma-separated (default: abp,sap,mbp,quadtree,grid,auto); the first is the
    /// reference every contender's pairs are checked against.
    #[arg(long, value_delimiter = ',')]
    algos: Vec<Algorithm>,
    /// Peers, comma-separated: parry_rapier, parry_exact, broccoli (default: all three).
    #[arg(long, value_delimiter = ',', conflicts_with = "no_peers")]
    peers: Vec<PeerKind>,
    /// Run no peer.
    #[arg(long)]
    no_peers: bool,
    /// Leave GpuGrid out (it runs by default wherever a device answers; see `bplab gpu-info`).
    #[arg(long)]
    no_gpu: bool,
    /// GpuGrid against the best CPU algorithm instead of the matrix: the uniform scene at
    /// 1m and 4m boxes (--sizes 1m,4m,10m adds ten million), on every core; a table on stdout
    /// and gpu.md, gpu.json in --out. Exits 1 without a device, or on a CPU (software) driver
    /// unless --allow-cpu-adapter.
    #[arg(long, conflicts_with_all = ["quick", "full", "no_gpu", "publish"])]
    gpu: bool,
    /// With --gpu: time a CPU (software) adapter such as Mesa's lavapipe all the same (its
    /// times are not a GPU's; the table says so).
    #[arg(long, requires = "gpu")]
    allow_cpu_adapter: bool,
    /// Scenes, comma-separated (see `bplab list`).
    #[arg(long, value_delimiter = ',')]
    scenes: Vec<SceneKind>,
    /// Boxes per scene, comma-separated: 10000, 10k, 1m.
    #[arg(long, value_delimiter = ',', value_parser = bench::parse_size)]
    sizes: Vec<usize>,
    /// Thread counts, comma-separated: numbers from 1 to 4 per core (at most 256), or `all`
    /// for every core.
    #[arg(long, value_delimiter = ',', value_parser = cli::parse_bench_threads)]
    threads: Vec<usize>,
    /// Frames per timed round.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    frames: Option<u32>,
    /// Timed rounds per contender.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    repeats: Option<u32>,
    /// Untimed frames after the build, before memory is read.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    warmup: Option<u32>,
    /// Frames of the verification pass before timing (every one checked).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    verify_frames: Option<u32>,
    /// Seconds of timed frames each contender may spend in a cell (default 120): one past it
    /// runs no further frame there, and the tables mark its figure with the frames it ran.
    /// The reference (the first algorithm) always runs every frame.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    budget: Option<u32>,
    /// Seed of the scenes.
    #[arg(long)]
    seed: Option<u64>,
    /// Factors varying the scenes' generators, as `density=4,speed=2` (also `size`, the spread
    /// of box sizes, and `spread`, the width of clusters; each 0.05 to 20).
    #[arg(long, default_value = "")]
    vary: Variation,
    /// The scene of the frame-time-against-boxes chart.
    #[arg(long, default_value = "uniform")]
    plot_scene: SceneKind,
    /// Where to write results.json, results.csv, results.md and the SVG charts.
    #[arg(long, default_value = "bench-results")]
    out: std::path::PathBuf,
    /// Publish the run in the repository at this root: its files and charts in docs/bench/,
    /// the whole report in docs/PERFORMANCE.md, and the summary in README.md's marked regions.
    #[arg(long, conflicts_with = "out")]
    publish: Option<std::path::PathBuf>,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
}

impl BenchArgs {
    fn options(&self) -> BenchOptions {
        let mut o = if self.gpu {
            bench::gpu::options()
        } else if self.quick {
            BenchOptions::quick()
        } else if self.full {
            BenchOptions::full()
        } else {
            BenchOptions::standard()
        };
        if !self.algos.is_empty() {
            o.algorithms.clone_from(&self.algos);
        }
        if self.no_gpu {
            o.gpu = false;
        }
        if self.no_peers {
            o.peers.clear();
        } else if !self.peers.is_empty() {
            o.peers.clone_from(&self.peers);
        }
        if !self.scenes.is_empty() {
            o.scenes.clone_from(&self.scenes);
        }
        if !self.sizes.is_empty() {
            o.sizes.clone_from(&self.sizes);
        }
        if !self.threads.is_empty() {
            o.threads = bench::thread_counts(&self.threads);
        }
        let set = |v: Option<u32>, field: &mut usize| {
            if let Some(v) = v {
                *field = v as usize;
            }
        };
        set(self.frames, &mut o.frames);
        set(self.repeats, &mut o.repeats);
        set(self.warmup, &mut o.warmup);
        set(self.verify_frames, &mut o.verify_frames);
        if let Some(budget) = self.budget {
            o.budget_s = f64::from(budget);
        }
        if let Some(seed) = self.seed {
            o.seed = seed;
        }
        o.vary = self.vary;
        o.plot_scene = self.plot_scene;
        o.progress = !self.no_progress;
        o
    }
}

#[derive(Args, Debug)]
struct RegionArgs {
    /// The scene (see `bplab list`).
    #[arg(long, default_value = "uniform")]
    scene: SceneKind,
    /// Number of boxes.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    n: u32,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Regions per horizontal axis over the scene's bounds (clamped like Unreal's: 1 to 16,
    /// 15 with --outer); 0 lets Mbp derive its regions from the boxes.
    #[arg(long, default_value_t = 4)]
    subdivisions: u32,
    /// Add Unreal's four outer regions, this much beyond the scene's bounds on each side.
    #[arg(long, value_parser = cli::parse_distance)]
    outer: Option<f32>,
    /// The up axis: x, y or z.
    #[arg(long, default_value = "y", value_parser = ["x", "y", "z"])]
    up: String,
    /// Frames to run before drawing.
    #[arg(long, default_value_t = 0)]
    frames: u32,
    /// Where to write the SVG picture.
    #[arg(long, default_value = "regions.svg")]
    out: std::path::PathBuf,
}

#[derive(Args, Debug)]
struct TreeArgs {
    /// The scene (see `bplab list`).
    #[arg(long, default_value = "grid")]
    scene: SceneKind,
    /// Number of boxes.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    n: u32,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Insert the boxes one call at a time (Jolt's deep-chain case) instead of as one batch.
    #[arg(long)]
    one_by_one: bool,
    /// Frames to run after the first update, before dumping.
    #[arg(long, default_value_t = 0)]
    frames: u32,
    /// Box probes (half-size 5) whose work is reported.
    #[arg(long, default_value_t = 1_000)]
    probes: u32,
    /// Where to write the DOT graph (render with `dot -Tsvg tree.dot -o tree.svg`).
    #[arg(long, default_value = "tree.dot")]
    out: std::path::PathBuf,
}

#[derive(Args, Debug)]
struct CellArgs {
    /// The scene (see `bplab list`).
    #[arg(long, default_value = "sizes")]
    scene: SceneKind,
    /// Number of boxes.
    #[arg(long, default_value_t = 5_000, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    n: u32,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The fine cell size (default: chosen by the grid from the boxes).
    #[arg(long, value_parser = cli::parse_positive)]
    cell_size: Option<f32>,
    /// Frames to run after the first update, before drawing.
    #[arg(long, default_value_t = 0)]
    frames: u32,
    /// The level to draw (0 is the finest; the table lists them all).
    #[arg(long, default_value_t = 0)]
    level: u32,
    /// The axis the picture looks along: x, y or z.
    #[arg(long, default_value = "y", value_parser = ["x", "y", "z"])]
    along: String,
    /// Where to write the SVG picture.
    #[arg(long, default_value = "cells.svg")]
    out: std::path::PathBuf,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// The scene (see `bplab list`).
    #[arg(long, default_value = "uniform")]
    scene: SceneKind,
    /// Number of boxes.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    n: u32,
    /// Frames to run after the build [default: 100; a trace's: all of its frames, and at most
    /// those].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    frames: Option<u32>,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Factors varying the scene's generator, as `density=4,speed=2` (also `size`, the spread
    /// of box sizes, and `spread`, the width of clusters; each 0.05 to 20).
    #[arg(long, default_value = "")]
    vary: Variation,
    /// Algorithms to run, comma-separated, and `gpugrid` for GpuGrid on the device (default:
    /// all, with GpuGrid where a device answers; BruteForce only up to 5,000 boxes).
    #[arg(long, visible_alias = "algorithm", value_delimiter = ',')]
    algo: Vec<run::RunAlgorithm>,
    /// Frames verified against BruteForce besides the build and the first frame, when the
    /// scene is too large to verify every frame.
    #[arg(long, default_value_t = 3)]
    samples: usize,
    /// Worker threads, 1 to 4 per core (at most 256); default: all cores.
    #[arg(long, value_parser = cli::parse_threads)]
    threads: Option<u32>,
    /// Never show the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Skip the comparison with BruteForce (for scenes too large to check quickly).
    #[arg(long)]
    no_verify: bool,
    /// Run the objects of a scene file, or replay a trace, instead of a generated scene
    /// (format: `bplab list`).
    #[arg(long, conflicts_with_all = ["scene", "n", "seed", "vary"])]
    scene_file: Option<std::path::PathBuf>,
    /// How to print the results: a table, JSON or CSV.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Args, Debug)]
struct RecordArgs {
    /// The scene (see `bplab list`).
    #[arg(long, default_value = "uniform")]
    scene: SceneKind,
    /// Number of boxes.
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=16_777_216))]
    n: u32,
    /// Frames to record after the start.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    frames: u32,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the trace.
    #[arg(long)]
    out: std::path::PathBuf,
}

impl Default for RunArgs {
    fn default() -> Self {
        Self {
            scene: SceneKind::Uniform,
            n: 20_000,
            frames: None,
            seed: 1,
            vary: Variation::default(),
            algo: Vec::new(),
            samples: 3,
            threads: None,
            no_progress: false,
            no_verify: false,
            scene_file: None,
            format: Format::Table,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` come this way too, as "errors" printed on stdout.
            let printed = e.print();
            return if !e.use_stderr() {
                printed.map_or(ExitCode::FAILURE, |()| ExitCode::SUCCESS)
            } else {
                usage_error()
            };
        }
    };
    match cli.command.unwrap_or(Command::Run(RunArgs::default())) {
        Command::Run(args) => run_command(args),
        Command::Record(args) => record_command(&args),
        Command::Lab(args) => broadphase_lab::lab::command(&args),
        Command::Phases(args) => broadphase_lab::phases::command(&args),
        Command::Concurrency(args) => broadphase_lab::concurrency::command(&args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => broadphase_lab::serve::command(&args),
        Command::Bench(args) => bench_command(&args),
        Command::Regions(args) => regions_command(&args),
        Command::Tree(args) => tree_command(&args),
        Command::Cells(args) => cells_command(&args),
        Command::List => print_or_fail(&list()),
        Command::GpuInfo => match broadphase_lab::gpu::info() {
            Ok(text) => print_or_fail(&format!("{text}\n")),
            Err(why) => {
                eprintln!("bplab gpu-info: no device for GpuGrid: {why}");
                ExitCode::FAILURE
            }
        },
    }
}

/// `bplab list`: the scenes, the algorithms and the scene file format.
fn list() -> String {
    let mut text = String::from("scenes:\n");
    let width = SceneKind::ALL
        .iter()
        .map(|s| s.name().len())
        .max()
        .unwrap_or(0);
    for s in SceneKind::ALL {
        text += &format!("  {:width$}  {}\n", s.name(), s.description());
    }
    text += "algorithms:\n";
    for a in Algorithm::ALL {
        text += &format!("  {} ({a:?})\n", a.cli_name());
    }
    text += &match broadphase_lab::gpu::adapter() {
        Ok(a) => format!("  gpugrid (GpuGrid, on {})\n", a.label()),
        Err(why) => format!("  gpugrid (GpuGrid: not here, {why})\n"),
    };
    text += "scene files (--scene-file):\n";
    for line in scene_file::SYNTAX.lines() {
        text += &format!("  {line}\n");
    }
    text
}

fn bench_command(args: &BenchArgs) -> ExitCode {
    let opts = args.options();
    if args.gpu {
        return gpu_bench_command(args, &opts);
    }
    let start = std::time::Instant::now();
    let outcome = args
        .publish
        .as_deref()
        .map_or(Ok(()), bench::publish::check_root)
        .and_then(|()| bench::run(&opts))
        .and_then(|report| {
            let files = match &args.publish {
                Some(root) => bench::publish::publish(&report, root)?,
                None => bench::report::write_all(&report, &args.out)?,
            };
            Ok((report, files))
        });
    match outcome {
        Ok((report, files)) => {
            let mut text = bench::report::markdown(&report);
            text += &format!(
                "\n{} cells in {:.1} s; written:\n",
                report.cells.len(),
                start.elapsed().as_secs_f64()
            );
            for f in files {
                text += &format!("  {}\n", f.display());
            }
            print_or_fail(&text)
        }
        Err(e) => {
            eprintln!("bplab bench: {e}");
            match e {
                BenchError::Options(_) => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// `bplab bench --gpu`: GpuGrid against the best CPU algorithm, refused on a CPU adapter
/// unless allowed.
fn gpu_bench_command(args: &BenchArgs, opts: &BenchOptions) -> ExitCode {
    let outcome = bench::gpu::check_adapter(args.allow_cpu_adapter).and_then(|adapter| {
        if adapter.cpu {
            eprintln!(
                "bplab bench --gpu: WARNING: {} is a CPU (software) driver: these times are \
                 not a GPU's",
                adapter.label()
            );
        }
        let report = bench::gpu::run(opts, adapter)?;
        let files = bench::gpu::write(&report, &args.out)?;
        Ok((report, files))
    });
    match outcome {
        Ok((report, files)) => {
            let mut text = bench::gpu::markdown(&report);
            text += "\nwritten:\n";
            for f in files {
                text += &format!("  {}\n", f.display());
            }
            print_or_fail(&text)
        }
        Err(e) => {
            eprintln!("bplab bench --gpu: {e}");
            match e {
                BenchError::Options(_) => usage_error(),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

fn regions_command(args: &RegionArgs) -> ExitCode {
    let opts = RegionOptions {
        scene: args.scene,
        n: args.n as usize,
        seed: args.seed,
        subdivisions: args.subdivisions,
        outer: args.outer,
        up: axis(&args.up),
        frames: args.frames as usize,
    };
    report_and_write(regions::regions(&opts), &args.out, "picture")
}

fn cells_command(args: &CellArgs) -> ExitCode {
    let opts = CellOptions {
        scene: args.scene,
        n: args.n as usize,
        seed: args.seed,
        cell_size: args.cell_size,
        frames: args.frames as usize,
        level: args.level as usize,
        along: axis(&args.along),
    };
    report_and_write(cells::cells(&opts), &args.out, "picture")
}

/// An axis named on the command line (x, y or z; clap allows no other).
fn axis(name: &str) -> usize {
    match name {
        "x" => 0,
        "z" => 2,
        _ => 1,
    }
}

fn tree_command(args: &TreeArgs) -> ExitCode {
    let opts = TreeOptions {
        scene: args.scene,
        n: args.n as usize,
        seed: args.seed,
        one_by_one: args.one_by_one,
        frames: args.frames as usize,
        probes: args.probes as usize,
    };
    report_and_write(tree::tree(&opts), &args.out, "tree")
}

/// Prints the report of a command that makes a picture or a graph, then writes the picture
/// and says where; or says what went wrong.
fn report_and_write(
    made: Result<(String, String), broadphase::Error>,
    path: &std::path::Path,
    what: &str,
) -> ExitCode {
    let (text, report) = match made {
        Ok(made) => made,
        Err(e) => {
            eprintln!("bplab: {e}");
            return cli::exit_code(&e);
        }
    };
    if print_or_fail(&report) != ExitCode::SUCCESS {
        return ExitCode::FAILURE;
    }
    match std::fs::write(path, text) {
        Ok(()) => print_or_fail(&format!("{what} written to {}\n", path.display())),
        Err(e) => {
            eprintln!("bplab: cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}

/// Reads and checks a scene file: the error says which file and line.
fn read_scene_file(path: &std::path::Path) -> Result<SceneFile, String> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| scene_file::parse(&text).map_err(|e| e.to_string()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn run_command(args: RunArgs) -> ExitCode {
    let file = match args.scene_file.as_deref().map(read_scene_file).transpose() {
        Ok(file) => file.map(Arc::new),
        Err(e) => {
            eprintln!("bplab: {e}");
            return usage_error();
        }
    };
    let frames = match file.as_deref().filter(|f| f.is_trace()) {
        Some(trace) => match run::trace_frames(trace, args.frames) {
            Ok(frames) => frames,
            Err(e) => {
                eprintln!("bplab: {e}");
                return usage_error();
            }
        },
        None => args.frames.unwrap_or(100) as usize,
    };
    let n = file.as_ref().map_or(args.n as usize, |f| f.object_count());
    let algorithms = if args.algo.is_empty() {
        Algorithm::ALL
            .iter()
            .copied()
            .filter(|&a| a != Algorithm::BruteForce || n <= VERIFY_ALL_UP_TO)
            .collect()
    } else {
        args.algo
            .iter()
            .filter_map(|&c| match c {
                run::RunAlgorithm::Cpu(a) => Some(a),
                run::RunAlgorithm::GpuGrid => None,
            })
            .collect()
    };
    // GpuGrid runs wherever a device answers; asked for by name without one, it is an error
    // (the device is missing, not the argument wrong).
    let gpu = if args.algo.is_empty() {
        broadphase_lab::gpu::available()
    } else if args.algo.contains(&run::RunAlgorithm::GpuGrid) {
        if let Err(why) = broadphase_lab::gpu::adapter() {
            eprintln!("bplab: GpuGrid cannot run: {why}");
            return ExitCode::FAILURE;
        }
        true
    } else {
        false
    };
    let opts = RunOptions {
        scene: args.scene,
        n,
        frames,
        seed: args.seed,
        vary: args.vary,
        algorithms,
        gpu,
        samples: args.samples,
        progress: !args.no_progress,
        verify: !args.no_verify,
        file,
    };
    let pool = match run::thread_pool(args.threads) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bplab: cannot start worker threads: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome =
        pool.install(|| run::run(&opts).map(|r| (run::report(&opts, &r, args.format), r)));
    match outcome {
        Ok((report, results)) => {
            let printed = print_or_fail(&report);
            if results
                .iter()
                .any(|r| matches!(r.verdict, Verdict::Mismatch { .. }))
            {
                eprintln!("bplab: an algorithm disagreed with BruteForce");
                return ExitCode::FAILURE;
            }
            printed
        }
        Err(e) => {
            eprintln!("bplab: {e}");
            ExitCode::FAILURE
        }
    }
}

fn record_command(args: &RecordArgs) -> ExitCode {
    let file = scene_file::record(args.scene, args.n as usize, args.seed, args.frames as usize);
    match std::fs::write(&args.out, scene_file::write(&file)) {
        Ok(()) => print_or_fail(&format!(
            "{} frames of {} ({} boxes, seed {}) written to {}\n",
            args.frames,
            args.scene,
            args.n,
            args.seed,
            args.out.display()
        )),
        Err(e) => {
            eprintln!("bplab: cannot write {}: {e}", args.out.display());
            ExitCode::FAILURE
        }
    }
}
