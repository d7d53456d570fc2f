//! `bplab phases`: a scene that changes character mid-run, for watching `Auto` follow it.
//!
//! Three phases of `--frames` frames each, on `--n` boxes in all:
//!
//! 1. **level**: a level of fixed boxes (60% of `n`) with a few dynamic ones moving among
//!    them (5%);
//! 2. **spawn**: a mass spawn at the phase's first frame, 35% of `n` dynamic boxes in one
//!    update, then every dynamic box moving;
//! 3. **asleep**: nine in ten dynamic boxes go to sleep (stop moving) and stay asleep.
//!
//! Every algorithm runs the same frames, `--repeats` times, the algorithms interleaved;
//! every run's events are checked against the first algorithm's first run at every frame (by
//! object, so ids may differ). Each frame's time is its median over the runs: a frame that
//! another process slowed in one run does not pass for a switch's cost, while a switch,
//! which falls on the same update in every run, keeps its own. The table gives each
//! phase's median frame per algorithm, its first frame (where the spawn lands, and where a
//! switch may be) and its slowest, and what `Auto` ran on in each phase.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use broadphase::{Aabb, Algorithm, Config, Error, Figures, Pair, ProxyDesc, ProxyId};
use clap::Args;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::run::percentile;

/// The knobs of `bplab phases`.
#[derive(Args, Clone, Debug)]
pub struct PhasesArgs {
    /// Boxes in all, once the spawn has landed.
    #[arg(long, default_value_t = 40_000, value_parser = clap::value_parser!(u32).range(100..=4_000_000))]
    pub n: u32,
    /// Frames per phase.
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub frames: u32,
    /// Algorithms, comma-separated; the first is the reference the others' events are
    /// checked against.
    #[arg(long, value_delimiter = ',', default_values_t = [Algorithm::Abp, Algorithm::Sap, Algorithm::QuadTree, Algorithm::Auto])]
    pub algos: Vec<Algorithm>,
    /// Seed of the boxes and their motion.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs of every algorithm, interleaved; each frame's time is its median over them.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub repeats: u32,
}

impl Default for PhasesArgs {
    /// The command line's defaults: what `bplab bench --publish` runs.
    fn default() -> Self {
        Self {
            n: 40_000,
            frames: 80,
            algos: vec![
                Algorithm::Abp,
                Algorithm::Sap,
                Algorithm::QuadTree,
                Algorithm::Auto,
            ],
            seed: 1,
            repeats: 5,
        }
    }
}

/// The phases' names, in order.
pub const PHASES: [&str; 3] = ["level", "spawn", "asleep"];

/// One box of the script: where it is, how it moves, when it arrives.
#[derive(Clone, Debug)]
struct Body {
    centre: [f32; 3],
    half: [f32; 3],
    velocity: [f32; 3],
    fixed: bool,
    /// The phase it arrives in (0: present from the start).
    arrives: usize,
}

/// The script: every box, and the world cube they bounce in.
#[derive(Clone, Debug)]
struct Script {
    bodies: Vec<Body>,
    side: f32,
}

impl Script {
    fn new(n: usize, seed: u64) -> Self {
        let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0x0FA5_E500);
        // About one overlap per box once everything has landed (as the bench's `uniform`).
        let side = 2.5 * (n as f32).cbrt();
        let level = n * 60 / 100;
        let early = n * 5 / 100;
        let bodies = (0..n)
            .map(|i| {
                let half = [0.0; 3].map(|_| rng.random_range(0.25..1.0f32));
                let speed = rng.random_range(0.01..0.05f32) * (half[0] + half[1] + half[2]);
                let dir = [0.0; 3].map(|_| rng.random_range(-1.0..1.0f32));
                let len = dir.iter().map(|d| d * d).sum::<f32>().sqrt().max(1e-3);
                Body {
                    centre: [0.0; 3].map(|_| rng.random_range(0.0..side)),
                    half,
                    velocity: dir.map(|d| d / len * speed),
                    fixed: i < level,
                    arrives: usize::from(i >= level + early),
                }
            })
            .collect();
        Self { bodies, side }
    }

    fn aabb(&self, i: usize) -> Aabb {
        let b = &self.bodies[i];
        Aabb::new(
            std::array::from_fn(|a| b.centre[a] - b.half[a]),
            std::array::from_fn(|a| b.centre[a] + b.half[a]),
        )
    }

    fn desc(&self, i: usize) -> ProxyDesc {
        if self.bodies[i].fixed {
            ProxyDesc::fixed()
        } else {
            ProxyDesc::dynamic()
        }
    }

    /// Whether body `i` moves in `phase`: dynamic, present, and (in the last phase) one of
    /// the one in ten still awake.
    fn moves(&self, i: usize, phase: usize) -> bool {
        let b = &self.bodies[i];
        !b.fixed && b.arrives <= phase && (phase < 2 || i.is_multiple_of(10))
    }

    /// Advances the moving bodies one frame of `phase`, bouncing off the cube's walls.
    fn step(&mut self, phase: usize) {
        let side = self.side;
        for i in 0..self.bodies.len() {
            if !self.moves(i, phase) {
                continue;
            }
            let b = &mut self.bodies[i];
            for a in 0..3 {
                b.centre[a] += b.velocity[a];
                if (b.centre[a] < 0.0 && b.velocity[a] < 0.0)
                    || (b.centre[a] > side && b.velocity[a] > 0.0)
                {
                    b.velocity[a] = -b.velocity[a];
                }
            }
        }
    }
}

/// A pair of objects, by their index in the script (the smaller first).
type Named = (u32, u32);

/// One frame's created and deleted pairs, by object, sorted.
type FrameEvents = (Vec<Named>, Vec<Named>);

/// One algorithm's run through the phases.
#[derive(Clone, Debug)]
pub struct PhaseRun {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Each frame's time in milliseconds, per phase.
    pub frame_ms: [Vec<f64>; 3],
    /// What `Auto` ran on at the end of each phase, and its switches so far (empty for the
    /// others).
    pub auto: Vec<String>,
    /// Each frame's events by object (for the check against the reference).
    events: Vec<FrameEvents>,
}

/// Runs `algorithm` through the script.
fn run_one(algorithm: Algorithm, n: usize, frames: usize, seed: u64) -> Result<PhaseRun, Error> {
    let mut script = Script::new(n, seed);
    let mut bp = broadphase::new(algorithm, Config::default().with_capacity(n));
    let mut ids: Vec<Option<ProxyId>> = vec![None; n];
    let mut owner: Vec<u32> = Vec::new();
    let start: Vec<usize> = (0..n).filter(|&i| script.bodies[i].arrives == 0).collect();
    let items: Vec<(Aabb, ProxyDesc)> = start
        .iter()
        .map(|&i| (script.aabb(i), script.desc(i)))
        .collect();
    let name = |owner: &[u32], p: &Pair| {
        let (a, b) = (owner[p.a.index() as usize], owner[p.b.index() as usize]);
        (a.min(b), a.max(b))
    };
    let record = |owner: &mut Vec<u32>, id: ProxyId, i: usize| {
        let slot = id.index() as usize;
        if slot >= owner.len() {
            owner.resize(slot + 1, u32::MAX);
        }
        owner[slot] = i as u32;
    };
    for (&i, id) in start.iter().zip(bp.insert_batch(&items)?) {
        ids[i] = Some(id);
        record(&mut owner, id, i);
    }
    bp.update()?;
    let mut run = PhaseRun {
        algorithm,
        frame_ms: Default::default(),
        auto: Vec::new(),
        events: Vec::new(),
    };
    let mut moves = Vec::new();
    for phase in 0..3 {
        for f in 0..frames {
            script.step(phase);
            let arriving: Vec<usize> = if f == 0 {
                (0..n)
                    .filter(|&i| script.bodies[i].arrives == phase && ids[i].is_none())
                    .collect()
            } else {
                Vec::new()
            };
            let items: Vec<(Aabb, ProxyDesc)> = arriving
                .iter()
                .map(|&i| (script.aabb(i), script.desc(i)))
                .collect();
            moves.clear();
            moves.extend(
                (0..n)
                    .filter(|&i| script.moves(i, phase))
                    .filter_map(|i| ids[i].map(|id| (id, script.aabb(i)))),
            );
            let t = Instant::now();
            let new_ids = bp.insert_batch(&items)?;
            bp.set_aabbs(&moves)?;
            let events = bp.update()?;
            run.frame_ms[phase].push(t.elapsed().as_secs_f64() * 1e3);
            for (&i, id) in arriving.iter().zip(new_ids) {
                ids[i] = Some(id);
                record(&mut owner, id, i);
            }
            let mut created: Vec<_> = events.created().iter().map(|p| name(&owner, p)).collect();
            let mut deleted: Vec<_> = events.deleted().iter().map(|p| name(&owner, p)).collect();
            created.sort_unstable();
            deleted.sort_unstable();
            run.events.push((created, deleted));
        }
        if let Figures::Auto(a) = bp.stats().figures {
            run.auto.push(crate::bench::contender::auto_note(&a));
        }
    }
    Ok(run)
}

/// Runs every algorithm of `args` through the phases `args.repeats` times, interleaved, and
/// checks every run's events against the first algorithm's first run. Each frame's time is
/// its median over the runs.
///
/// # Errors
/// A broad phase's error (a bug), or a mismatch, in words.
pub fn run(args: &PhasesArgs) -> Result<Vec<PhaseRun>, String> {
    let (n, frames) = (args.n as usize, args.frames as usize);
    let mut runs: Vec<PhaseRun> = Vec::new();
    // Per algorithm, phase and frame: the frame's time in each run.
    let mut times: Vec<[Vec<Vec<f64>>; 3]> = vec![Default::default(); args.algos.len()];
    for repeat in 0..args.repeats.max(1) {
        for (a, &algorithm) in args.algos.iter().enumerate() {
            let run = run_one(algorithm, n, frames, args.seed).map_err(|e| e.to_string())?;
            if let Some(first) = runs.first() {
                if let Some(f) = (0..run.events.len()).find(|&f| run.events[f] != first.events[f]) {
                    return Err(format!(
                        "{} and {} disagree on the events of frame {}",
                        algorithm.cli_name(),
                        first.algorithm.cli_name(),
                        f + 1
                    ));
                }
            }
            for (phase, ms) in run.frame_ms.iter().enumerate() {
                let per_frame = &mut times[a][phase];
                per_frame.resize(ms.len(), Vec::new());
                for (f, &t) in ms.iter().enumerate() {
                    per_frame[f].push(t);
                }
            }
            if repeat == 0 {
                runs.push(run);
            }
        }
    }
    for (run, times) in runs.iter_mut().zip(&times) {
        for (phase, per_frame) in times.iter().enumerate() {
            run.frame_ms[phase] = per_frame.iter().map(|t| percentile(t, 0.5)).collect();
        }
    }
    Ok(runs)
}

/// The runs as a markdown table: per phase and algorithm, the median frame, the phase's
/// first frame, its slowest frame, and what `Auto` ran on at its end.
pub fn table(args: &PhasesArgs, runs: &[PhaseRun]) -> String {
    let mut out = format!(
        "`bplab phases --n {} --frames {} --repeats {}`: {} boxes once the spawn has landed, {} \
         frames a phase, {} runs of each algorithm, interleaved; milliseconds per frame, each \
         frame's the median of its runs (the phase's median / first / slowest frame), events \
         checked against {}.\n\n",
        args.n,
        args.frames,
        args.repeats,
        args.n,
        args.frames,
        args.repeats,
        runs.first().map_or("-", |r| r.algorithm.cli_name())
    );
    out += "| phase |";
    for r in runs {
        let _ = write!(out, " {} |", r.algorithm.cli_name());
    }
    out += " auto ran on |\n|---|";
    out += &"---|".repeat(runs.len() + 1);
    out += "\n";
    for (p, phase) in PHASES.iter().enumerate() {
        let _ = write!(out, "| {phase} |");
        for r in runs {
            let ms = &r.frame_ms[p];
            let slowest = ms.iter().copied().fold(0.0, f64::max);
            let _ = write!(
                out,
                " {:.2} / {:.2} / {:.2} |",
                percentile(ms, 0.5),
                ms.first().copied().unwrap_or(0.0),
                slowest
            );
        }
        let auto = runs
            .iter()
            .find_map(|r| r.auto.get(p).cloned())
            .unwrap_or_default();
        let _ = writeln!(out, " {auto} |");
    }
    out
}

/// `bplab phases`.
pub fn command(args: &PhasesArgs) -> ExitCode {
    match run(args) {
        Ok(runs) => crate::output::print_or_fail(&table(args, &runs)),
        Err(e) => {
            eprintln!("bplab phases: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_phases_and_every_algorithm_agrees() {
        let args = PhasesArgs {
            // 80 frames a phase: enough for the rules' hold and a background build (40
            // updates at 40,000 proxies) after the spawn, and for the running mean to fall
            // once asleep.
            n: 40_000,
            frames: 80,
            algos: vec![Algorithm::Abp, Algorithm::Auto],
            seed: 3,
            repeats: 2,
        };
        let runs = run(&args).expect("the algorithms agree");
        let auto = &runs[1].auto;
        // The level's dynamic boxes are 7.7% of its proxies, all moving: too many for the
        // tree, which a level with fewer moving would run on.
        assert!(auto[0].starts_with("abp"), "{auto:?}");
        assert!(auto[1].starts_with("abp"), "{auto:?}");
        assert!(auto[2].starts_with("sap"), "{auto:?}");
        // Two runs each, interleaved, every frame timed in both.
        assert!(runs
            .iter()
            .all(|r| r.frame_ms.iter().all(|ms| ms.len() == 80)));
        let table = table(&args, &runs);
        assert_eq!(table.lines().filter(|l| l.starts_with("| ")).count(), 4);
        assert!(table.contains("--repeats 2"), "{table}");
    }
}
