//! `bplab lab`: the interactive lab of GPU Gems 3 chapter 32 as a command.
//!
//! The chapter's lab lets one pick the object count, the strategy (brute force, sort and sweep,
//! spatial subdivision), the cell size, the radix digit width and the collision-cell schedule,
//! and shows the brute-force pair count, the cell ids written, the collision cells, the radix
//! passes and the candidate pairs. This command runs the chosen strategies on the same moving
//! scene and prints those figures (and, beyond the chapter, how many collision cells hold a box
//! that changed, the only ones the grid tests) and each strategy's throughput side by side.
//! Brute force and the grid run as broad phases (they keep the persistent pairs and report
//! created and deleted ones); the sweep only counts its pairs, as the chapter's does:
//!
//! ```text
//! bplab lab --n 12000                                  # the three strategies
//! bplab lab --n 12000 --strategy grid --radix-bits 4   # then compare with 8
//! ```

use std::process::ExitCode;
use std::time::Instant;

use broadphase::{
    Aabb, BroadPhase, BruteForce, Config, Error, Figures, Grid, GridSettings, Pair, ProxyId,
    Schedule, SortAndSweep,
};
use clap::{Args, ValueEnum};

use crate::run::{percentile, threads, Feeder};
use crate::scenes::{Scene, SceneKind};

/// The chapter's three broad-phase strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Strategy {
    /// Every pair tested: n(n-1)/2 tests (`BruteForce`).
    Brute,
    /// Sort and sweep on one axis, from scratch every frame (`SortAndSweep`).
    Sweep,
    /// Spatial subdivision (`Grid`).
    Grid,
}

/// The collision-cell schedule of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScheduleArg {
    /// Eight passes, one per 2×2×2 parity class of cells.
    Parity,
    /// Every collision cell at once.
    All,
}

/// The knobs of the lab.
#[derive(Args, Clone, Debug)]
pub struct LabArgs {
    /// Number of objects (the chapter's question: 12,000).
    #[arg(long, default_value_t = 12_000, value_parser = clap::value_parser!(u32).range(2..=16_777_216))]
    pub n: u32,
    /// Strategies to compare, comma-separated: brute, sweep, grid.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Strategy::Brute, Strategy::Sweep, Strategy::Grid])]
    pub strategy: Vec<Strategy>,
    /// The grid's cell size (default: automatic, 1.5 times the median box extent).
    #[arg(long, value_parser = crate::cli::parse_positive)]
    pub cell_size: Option<f32>,
    /// Bits per radix digit: 4, 8, 11 or 16 (any of 4 to 16).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(4..=16))]
    pub radix_bits: u32,
    /// The grid's collision-cell schedule (here the chapter's eight parity passes by default;
    /// `Grid`'s own default is `all`, faster on the CPU).
    #[arg(long, value_enum, default_value_t = ScheduleArg::Parity)]
    pub schedule: ScheduleArg,
    /// Let the grid keep the sorted entries of boxes that stay in their cells (`Grid`'s
    /// default). Without it the lab deals and sorts every box every frame, as the chapter does,
    /// so the radix width shows in the frame time.
    #[arg(long)]
    pub keep_cells: bool,
    /// The scene the objects move in (see `bplab list`).
    #[arg(long, default_value = "uniform")]
    pub scene: SceneKind,
    /// Frames timed after the first one.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub frames: u32,
    /// Seed of the scene.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads, 1 to 4 per core (at most 256); default: all cores.
    #[arg(long, value_parser = crate::cli::parse_threads)]
    pub threads: Option<u32>,
}

/// One strategy's figures on the last frame, and its median frame time.
#[derive(Clone, Debug, PartialEq)]
pub struct LabResult {
    /// The strategy.
    pub strategy: Strategy,
    /// n(n-1)/2: what brute force tests.
    pub brute_force_pairs: u64,
    /// Cell ids written, home and phantom (the grid only).
    pub cell_ids: Option<(u64, u64)>,
    /// Collision cells (the grid only).
    pub collision_cells: Option<u64>,
    /// Collision cells holding a box that changed, the only ones tested (the grid only).
    pub cells_tested: Option<u64>,
    /// Radix sort passes (sweep and grid).
    pub radix_passes: Option<u64>,
    /// Candidate pairs tested.
    pub tests: u64,
    /// Overlapping pairs found.
    pub pairs: u64,
    /// The median frame time in milliseconds.
    pub frame_ms: f64,
}

impl LabResult {
    /// Objects per second: how many objects a second of this strategy processes.
    pub fn objects_per_second(&self, n: usize) -> f64 {
        n as f64 / (self.frame_ms / 1e3).max(1e-9)
    }
}

/// The grid's settings for the lab's knobs.
#[must_use]
pub fn grid_settings(args: &LabArgs) -> GridSettings {
    let mut s = GridSettings::default();
    s.cell_size = args.cell_size;
    s.radix_bits = args.radix_bits;
    s.schedule = match args.schedule {
        ScheduleArg::Parity => Schedule::Parity,
        ScheduleArg::All => Schedule::All,
    };
    s.keep_cells = args.keep_cells;
    s
}

/// What a strategy keeps from one frame to the next.
// One per stepper, and a stepper lives as long as its run or session: the unused bytes of the
// smaller variants cost nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Engine {
    /// The sweep keeps nothing but its buffers: it starts afresh every frame.
    Sweep {
        sweep: SortAndSweep,
        boxes: Vec<Aabb>,
    },
    /// Brute force as a broad phase.
    Brute(BruteForce),
    /// The grid as a broad phase (its own type, for its dump).
    Grid(Grid),
}

/// The broad phase of brute force and the grid (`None` for the sweep).
fn broad_phase(engine: &mut Engine) -> Option<&mut dyn BroadPhase> {
    match engine {
        Engine::Brute(b) => Some(b),
        Engine::Grid(g) => Some(g),
        Engine::Sweep { .. } => None,
    }
}

/// One strategy stepping through a scene one frame at a time: what `bplab lab` times over its
/// frames, and what `bplab serve` steps on request.
#[derive(Debug)]
pub struct Stepper {
    strategy: Strategy,
    scene: Scene,
    engine: Engine,
    /// Scene index → proxy id (brute force and the grid).
    ids: Vec<ProxyId>,
    feeder: Feeder,
    frame: u64,
    last: LabResult,
}

impl Stepper {
    /// Builds the scene of `args` and hands it to `strategy`: frame 0 (the first update, or
    /// the sweep's first run).
    ///
    /// # Errors
    /// When the grid rejects the settings (a bad cell size or digit width), or a broad phase
    /// the scene's input (a scene bug).
    pub fn new(args: &LabArgs, strategy: Strategy) -> Result<Self, Error> {
        let n = args.n as usize;
        let engine = match strategy {
            Strategy::Sweep => Engine::Sweep {
                sweep: SortAndSweep::new(args.radix_bits)?,
                boxes: Vec::with_capacity(n),
            },
            Strategy::Brute => Engine::Brute(BruteForce::new(Config::default())),
            Strategy::Grid => {
                Engine::Grid(Grid::with_settings(Config::default(), grid_settings(args))?)
            }
        };
        let mut stepper = Self {
            strategy,
            scene: Scene::new(args.scene, n, args.seed),
            engine,
            ids: Vec::new(),
            feeder: Feeder::default(),
            frame: 0,
            last: LabResult {
                strategy,
                brute_force_pairs: (n as u64) * (n as u64).saturating_sub(1) / 2,
                cell_ids: None,
                collision_cells: None,
                cells_tested: None,
                radix_passes: None,
                tests: 0,
                pairs: 0,
                frame_ms: 0.0,
            },
        };
        let t = Instant::now();
        if let Some(bp) = broad_phase(&mut stepper.engine) {
            stepper.ids = bp.insert_batch(&stepper.scene.initial())?;
            bp.update()?;
        }
        stepper.finish_frame(t);
        Ok(stepper)
    }

    /// Advances the scene one frame and runs the strategy on it; returns the frame's figures,
    /// its time that of the strategy's work alone (not the scene's).
    ///
    /// # Errors
    /// Only if a broad phase rejects the scene's input (a scene bug).
    pub fn step(&mut self) -> Result<&LabResult, Error> {
        let frame = self.scene.step();
        let t = Instant::now();
        if let Some(bp) = broad_phase(&mut self.engine) {
            self.feeder.apply(bp, &mut self.ids, &frame)?;
            bp.update()?;
        }
        self.frame += 1;
        self.finish_frame(t);
        Ok(&self.last)
    }

    /// Runs the sweep (whose whole work is this), then reads the figures and the time since
    /// `t`.
    fn finish_frame(&mut self, t: Instant) {
        let r = &mut self.last;
        let bp: &dyn BroadPhase = match &mut self.engine {
            Engine::Sweep { sweep, boxes } => {
                boxes.clear();
                boxes.extend((0..self.scene.len()).map(|i| self.scene.aabb(i)));
                let figures = sweep.run(boxes, 0);
                r.frame_ms = t.elapsed().as_secs_f64() * 1e3;
                r.tests = figures.tests;
                r.pairs = figures.pairs;
                r.radix_passes = Some(u64::from(figures.radix_passes));
                return;
            }
            Engine::Brute(b) => b,
            Engine::Grid(g) => g,
        };
        r.frame_ms = t.elapsed().as_secs_f64() * 1e3;
        let stats = bp.stats();
        r.tests = stats.tests;
        r.pairs = bp.pairs().len() as u64;
        if let Figures::Grid(g) = stats.figures {
            r.cell_ids = Some((g.home_cells, g.phantom_cells));
            r.collision_cells = Some(g.collision_cells);
            r.cells_tested = Some(g.collision_cells_tested);
            r.radix_passes = Some(g.radix_passes);
        }
    }

    /// The strategy it runs.
    #[must_use]
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Frames stepped since the build (0 after [`Stepper::new`]).
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The figures of the last frame (the build's after [`Stepper::new`]).
    #[must_use]
    pub fn last(&self) -> &LabResult {
        &self.last
    }

    /// The scene as of the last frame.
    #[must_use]
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// Scene index → proxy id, for brute force and the grid (empty for the sweep).
    #[must_use]
    pub fn ids(&self) -> &[ProxyId] {
        &self.ids
    }

    /// The overlapping pairs of brute force and the grid (`None` for the sweep, which only
    /// counts them).
    #[must_use]
    pub fn pairs(&self) -> Option<&[Pair]> {
        match &self.engine {
            Engine::Brute(b) => Some(b.pairs()),
            Engine::Grid(g) => Some(g.pairs()),
            Engine::Sweep { .. } => None,
        }
    }

    /// The grid, when the strategy is the grid: its dump and figures show the chapter's
    /// stages.
    #[must_use]
    pub fn grid(&self) -> Option<&Grid> {
        match &self.engine {
            Engine::Grid(g) => Some(g),
            _ => None,
        }
    }
}

/// Runs one strategy over the scene.
///
/// # Errors
/// Only if a broad phase rejects the scene's input or the settings (a bug or a bad cell size).
pub fn run_strategy(args: &LabArgs, strategy: Strategy) -> Result<LabResult, Error> {
    let mut stepper = Stepper::new(args, strategy)?;
    let mut times = Vec::with_capacity(args.frames as usize + 1);
    for _ in 0..=args.frames {
        times.push(stepper.step()?.frame_ms);
    }
    let mut result = stepper.last().clone();
    // The first frame warms the caches up; the median of the others is reported.
    result.frame_ms = percentile(&times[1..], 0.5);
    Ok(result)
}

/// Thousands separated by commas.
fn grouped(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The figures side by side, one column per strategy.
pub fn table(args: &LabArgs, results: &[LabResult]) -> String {
    let n = args.n as usize;
    let dash = || "-".to_string();
    let opt = |v: Option<u64>| v.map_or_else(dash, grouped);
    let rows: Vec<(&str, Vec<String>)> = vec![
        (
            "brute-force pairs n(n-1)/2",
            results
                .iter()
                .map(|r| grouped(r.brute_force_pairs))
                .collect(),
        ),
        (
            "cell ids written",
            results
                .iter()
                .map(|r| r.cell_ids.map_or_else(dash, |(h, p)| grouped(h + p)))
                .collect(),
        ),
        (
            "  home cells",
            results
                .iter()
                .map(|r| r.cell_ids.map_or_else(dash, |(h, _)| grouped(h)))
                .collect(),
        ),
        (
            "  phantom cells",
            results
                .iter()
                .map(|r| r.cell_ids.map_or_else(dash, |(_, p)| grouped(p)))
                .collect(),
        ),
        (
            "collision cells",
            results.iter().map(|r| opt(r.collision_cells)).collect(),
        ),
        (
            "  with a changed box",
            results.iter().map(|r| opt(r.cells_tested)).collect(),
        ),
        (
            "radix passes",
            results.iter().map(|r| opt(r.radix_passes)).collect(),
        ),
        (
            "candidate pairs tested",
            results.iter().map(|r| grouped(r.tests)).collect(),
        ),
        (
            "pairs found",
            results.iter().map(|r| grouped(r.pairs)).collect(),
        ),
        (
            "frame time (ms, median)",
            results
                .iter()
                .map(|r| format!("{:.3}", r.frame_ms))
                .collect(),
        ),
        (
            "throughput (objects/s)",
            results
                .iter()
                .map(|r| grouped(r.objects_per_second(n) as u64))
                .collect(),
        ),
        (
            "throughput vs brute force",
            results
                .iter()
                .map(|r| {
                    let brute = results.iter().find(|b| b.strategy == Strategy::Brute);
                    brute.map_or_else(dash, |b| format!("{:.1}x", b.frame_ms / r.frame_ms))
                })
                .collect(),
        ),
    ];
    let names: Vec<String> = results
        .iter()
        .map(|r| format!("{:?}", r.strategy).to_lowercase())
        .collect();
    let first = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let width = rows
        .iter()
        .flat_map(|(_, v)| v.iter().map(String::len))
        .chain(names.iter().map(String::len))
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "GPU Gems 3 chapter 32 lab · {} scene · {} objects · {} frames · cell size {} · \
         radix {} bits · {} schedule{} · {}\n\n",
        args.scene,
        grouped(n as u64),
        args.frames,
        args.cell_size
            .map_or_else(|| "auto".to_string(), |c| c.to_string()),
        args.radix_bits,
        match args.schedule {
            ScheduleArg::Parity => "parity",
            ScheduleArg::All => "all-at-once",
        },
        if args.keep_cells {
            " · cells kept"
        } else {
            ""
        },
        threads(rayon::current_num_threads())
    );
    out += &format!("{:<first$}", "");
    for name in &names {
        out += &format!("  {name:>width$}");
    }
    out += "\n";
    for (label, values) in &rows {
        out += &format!("{label:<first$}");
        for v in values {
            out += &format!("  {v:>width$}");
        }
        out += "\n";
    }
    out
}

/// `bplab lab`: runs the strategies and prints the table.
pub fn command(args: &LabArgs) -> ExitCode {
    let pool = match crate::run::thread_pool(args.threads) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bplab: cannot start worker threads: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = pool.install(|| {
        let results = args
            .strategy
            .iter()
            .map(|&s| run_strategy(args, s))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok::<_, Error>(table(args, &results))
    });
    match outcome {
        Ok(table) => crate::output::print_or_fail(&table),
        Err(e) => {
            eprintln!("bplab: {e}");
            crate::cli::exit_code(&e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(n: u32) -> LabArgs {
        LabArgs {
            n,
            strategy: vec![Strategy::Brute, Strategy::Sweep, Strategy::Grid],
            cell_size: None,
            radix_bits: 8,
            schedule: ScheduleArg::Parity,
            keep_cells: false,
            scene: SceneKind::Uniform,
            frames: 2,
            seed: 3,
            threads: None,
        }
    }

    #[test]
    fn the_strategies_agree_and_count_as_the_chapter_says() -> Result<(), Error> {
        let a = args(1500);
        let results: Vec<LabResult> = a
            .strategy
            .iter()
            .map(|&s| run_strategy(&a, s))
            .collect::<Result<_, _>>()?;
        let n = 1500u64;
        for r in &results {
            assert_eq!(r.brute_force_pairs, n * (n - 1) / 2);
            assert_eq!(r.pairs, results[0].pairs, "{r:?}");
        }
        assert_eq!(results[0].tests, n * (n - 1) / 2);
        let grid = &results[2];
        let (home, phantom) = grid.cell_ids.unwrap_or_default();
        assert_eq!(home, n, "one home cell per object");
        assert!(phantom > 0 && grid.collision_cells.unwrap_or(0) > 0);
        assert!(grid.tests < results[1].tests && results[1].tests < results[0].tests);
        let text = table(&a, &results);
        assert!(text.contains("1,124,250"), "{text}");
        // Keeping the entries of boxes that stay in their cells changes no figure of the last
        // frame but the sort's passes.
        let kept = run_strategy(
            &LabArgs {
                keep_cells: true,
                ..a.clone()
            },
            Strategy::Grid,
        )?;
        assert_eq!(kept.pairs, grid.pairs);
        assert_eq!(kept.cell_ids, grid.cell_ids);
        assert_eq!(kept.collision_cells, grid.collision_cells);
        assert_eq!(kept.tests, grid.tests);
        // Every box moves here: every collision cell holds a changed box.
        assert_eq!(grid.cells_tested, grid.collision_cells);
        Ok(())
    }

    /// Where a tenth of the boxes move, most collision cells hold none of them and are left
    /// untested, with the same pairs as brute force.
    #[test]
    fn cells_without_a_changed_box_are_not_tested() -> Result<(), Error> {
        let a = LabArgs {
            strategy: vec![Strategy::Brute, Strategy::Grid],
            scene: SceneKind::Sleeping,
            keep_cells: true,
            ..args(2000)
        };
        let brute = run_strategy(&a, Strategy::Brute)?;
        let grid = run_strategy(&a, Strategy::Grid)?;
        assert_eq!(grid.pairs, brute.pairs);
        let (all, tested) = (
            grid.collision_cells.unwrap_or(0),
            grid.cells_tested.unwrap_or(0),
        );
        assert!(0 < tested && 2 * tested < all, "{grid:?}");
        Ok(())
    }

    #[test]
    fn narrower_digits_take_more_passes() -> Result<(), Error> {
        let mut a = args(3000);
        let wide = run_strategy(&a, Strategy::Grid)?;
        a.radix_bits = 4;
        let narrow = run_strategy(&a, Strategy::Grid)?;
        assert!(
            narrow.radix_passes > wide.radix_passes,
            "{narrow:?} {wide:?}"
        );
        assert_eq!(narrow.pairs, wide.pairs);
        a.cell_size = Some(-1.0);
        assert!(run_strategy(&a, Strategy::Grid).is_err());
        Ok(())
    }
}
