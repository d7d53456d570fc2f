//! One cell of `bplab bench`: check the contenders, build them, time them in interleaved
//! rounds on the same frames, and read their memory.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::bench::check::{Checker, Mismatch};
use crate::bench::contender::{Contender, ContenderKind, Reported};
use crate::bench::matrix::{schedule, Cell};
use crate::bench::memory::Meter;
use crate::bench::peers::PeerKind;
use crate::bench::{BenchError, BenchOptions, CellResult, ContenderResult, Spread};
use crate::progress::Progress;
use crate::run::threads;
use crate::scenes::{Frame, Scene};

/// The contenders of a cell: the algorithms (the first is the reference), GpuGrid, then the
/// peers. GpuGrid and the peers use no worker threads, so like the peers GpuGrid runs once per
/// scene and size, in the cell with the fewest threads.
pub fn contenders(cell: &Cell, opts: &BenchOptions) -> Vec<ContenderKind> {
    let algorithms = opts.algorithms.iter().map(|&a| ContenderKind::Algorithm(a));
    let gpu = (opts.gpu && cell.peers).then_some(ContenderKind::Gpu);
    let peers = opts
        .peers
        .iter()
        .filter(|_| cell.peers)
        .map(|&p| ContenderKind::Peer(p));
    algorithms.chain(gpu).chain(peers).collect()
}

/// Builds every contender on `scene`, then runs `frames` frames of it through all of them,
/// checking every contender's pairs against the first's at the build and after every frame.
///
/// # Errors
/// [`BenchError::Mismatch`] at the first difference; a broad phase rejecting the scene.
pub fn verify(kinds: &[ContenderKind], scene: &Scene, frames: usize) -> Result<(), BenchError> {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    let mut contenders = kinds
        .iter()
        .map(|k| k.build(scene))
        .collect::<Result<Vec<_>, _>>()?;
    let mut checker = Checker::new(scene, contenders.len(), true);
    checker.observe(&contenders, &names, true)?;
    let mut scene = scene.clone();
    for _ in 0..frames {
        let frame = scene.step();
        for c in &mut contenders {
            c.frame(&frame)?;
        }
        checker.apply(&frame);
        checker.observe(&contenders, &names, true)?;
    }
    Ok(())
}

/// `peer` built on `scene` after [`verify`] passed against `Abp` on its first `frames`
/// frames: the set-up of a criterion bench.
///
/// # Errors
/// As [`verify`].
pub fn checked_peer(
    peer: PeerKind,
    scene: &Scene,
    frames: usize,
) -> Result<Box<dyn Contender>, BenchError> {
    let kinds = [
        ContenderKind::Algorithm(broadphase::Algorithm::Abp),
        ContenderKind::Peer(peer),
    ];
    verify(&kinds, scene, frames)?;
    peer.build(scene)
}

/// Runs one cell on a rayon pool of the cell's thread count.
///
/// # Errors
/// A pair mismatch, a broad phase rejecting the scene, or the threads refused.
pub fn run_cell(
    cell: &Cell,
    opts: &BenchOptions,
    progress: &mut Progress,
) -> Result<CellResult, BenchError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cell.threads)
        .build()
        .map_err(|e| BenchError::Threads(e.to_string()))?;
    pool.install(|| run_in_pool(cell, opts, progress))
        .map_err(|e| match e {
            BenchError::Mismatch(m) => BenchError::Mismatch(Mismatch {
                cell: format!(
                    "{} at {} boxes on {}",
                    cell.scene,
                    cell.n,
                    threads(cell.threads)
                ),
                ..m
            }),
            other => other,
        })
}

/// The timed seconds each contender may spend in a cell, and what each has spent.
struct Budget {
    limit: Duration,
    used: Vec<Duration>,
    /// Frames timed per contender.
    frames: Vec<usize>,
}

impl Budget {
    fn new(contenders: usize, seconds: f64) -> Self {
        Self {
            limit: Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX),
            used: vec![Duration::ZERO; contenders],
            frames: vec![0; contenders],
        }
    }

    /// Whether contender `c` has used its budget. Never for the reference (contender 0),
    /// which every other contender's last frame is checked against.
    fn spent(&self, c: usize) -> bool {
        self.spent_with(c, Duration::ZERO)
    }

    /// [`Self::spent`] once `more` is added to what `c` has used.
    fn spent_with(&self, c: usize, more: Duration) -> bool {
        c > 0 && self.used[c].saturating_add(more) > self.limit
    }

    fn charge(&mut self, c: usize, time: Duration, frames: usize) {
        self.used[c] = self.used[c].saturating_add(time);
        self.frames[c] += frames;
    }
}

fn run_in_pool(
    cell: &Cell,
    opts: &BenchOptions,
    progress: &mut Progress,
) -> Result<CellResult, BenchError> {
    let kinds = contenders(cell, opts);
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    let label = format!("{} {} {}t", cell.scene, cell.n, cell.threads);
    let start = Scene::varied(cell.scene, cell.n, opts.seed, &opts.vary);

    progress.stage(&format!("{label} check"));
    verify(&kinds, &start, opts.verify_frames)?;
    progress.inc(kinds.len() as u64);

    // Every contender is built on the same boxes and warmed up on the same frames; the
    // checker follows the boxes to check the last timed frame.
    let mut scene = start.clone();
    let warmup: Vec<Frame> = (0..opts.warmup).map(|_| scene.step()).collect();
    let mut checker = Checker::new(&start, kinds.len(), false);
    for frame in &warmup {
        checker.apply(frame);
    }
    progress.stage(&format!("{label} build"));
    let mut built: Vec<Box<dyn Contender>> = Vec::with_capacity(kinds.len());
    let mut meters = Vec::with_capacity(kinds.len());
    let mut build_ms = Vec::with_capacity(kinds.len());
    for kind in &kinds {
        let mut meter = Meter::start();
        let t = Instant::now();
        let mut contender = kind.build(&start)?;
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
        meter.step_end(contender.bench_bytes());
        for frame in &warmup {
            black_box(contender.frame(frame)?);
            meter.step_end(contender.bench_bytes());
        }
        built.push(contender);
        meters.push(meter);
        progress.tick();
    }
    drop(warmup);

    progress.stage(&format!("{label} time"));
    let mut round_ms = vec![Vec::with_capacity(opts.repeats); kinds.len()];
    let mut batch: Vec<Frame> = Vec::with_capacity(opts.frames);
    let mut current_round = None;
    let mut budget = Budget::new(kinds.len(), opts.budget_s);
    for (round, c) in schedule(kinds.len(), opts.repeats) {
        if current_round != Some(round) {
            // One round's frames, stepped once and replayed to every contender.
            batch.clear();
            batch.extend((0..opts.frames).map(|_| scene.step()));
            for frame in &batch {
                checker.apply(frame);
            }
            current_round = Some(round);
        }
        if budget.spent(c) {
            progress.tick();
            continue;
        }
        let contender = &mut built[c];
        meters[c].round_start();
        let t = Instant::now();
        let mut figure = 0;
        let mut ran = 0;
        for frame in &batch {
            figure += contender.frame(frame)?;
            ran += 1;
            if budget.spent_with(c, t.elapsed()) {
                break;
            }
        }
        let elapsed = t.elapsed();
        meters[c].round_end(contender.bench_bytes());
        black_box(figure);
        budget.charge(c, elapsed, ran);
        round_ms[c].push(elapsed.as_secs_f64() * 1e3 / ran as f64);
        progress.tick();
    }

    // The last timed frame, checked for every exact contender that ran every frame (the
    // reference always does).
    let all = opts.frames * opts.repeats;
    let complete: Vec<usize> = (0..kinds.len())
        .filter(|&c| budget.frames[c] == all)
        .collect();
    let reports: Vec<Reported> = complete.iter().map(|&c| built[c].reported()).collect();
    let checked: Vec<&str> = complete.iter().map(|&c| names[c]).collect();
    checker.observe_reports(&reports, &checked, true)?;
    let pairs = match reports.first() {
        Some(Reported::Exact(p)) => p.len(),
        _ => 0,
    };
    let contenders = kinds
        .iter()
        .enumerate()
        .map(|(c, kind)| ContenderResult {
            name: kind.name().to_string(),
            peer: kind.is_peer(),
            build_ms: build_ms[c],
            frame_ms: Spread::of(&round_ms[c]),
            round_ms: std::mem::take(&mut round_ms[c]),
            timed_frames: budget.frames[c],
            memory: meters[c].memory(cell.n, pairs),
            note: built[c].note(),
        })
        .collect();
    Ok(CellResult {
        scene: cell.scene.name().to_string(),
        n: cell.n,
        threads: cell.threads,
        pairs,
        checked_frames: opts.verify_frames + 2,
        contenders,
    })
}
