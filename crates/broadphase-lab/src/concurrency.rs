//! `bplab concurrency`: what a `QuadTree`'s streaming batches and snapshots cost.
//!
//! 1. **Commit**: `--n` boxes present and updated; `--n` more prepared as a `PreparedBatch`
//!    (timed apart), then committed and updated, against `insert_batch` and update of the same
//!    items in a twin. The two updates' events are checked equal.
//! 2. **Queries during updates**: `--threads` threads query (boxes of about one neighbour)
//!    the latest snapshot, published after each update, while the owner moves a tenth of the
//!    boxes (by up to half a unit) and updates for `--frames` frames; then the same threads query one snapshot for
//!    as long with no update running. Queries per second per thread, and the owner's update
//!    time with snapshots held and without.
//! 3. **Background rebuilds**: every box drifting for `4 * --frames` updates, the trees
//!    rebuilt in place and in the background: the mean and worst update, events checked
//!    equal.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use broadphase::{
    Aabb, BroadPhase, Config, Error, LayerMask, ProxyDesc, ProxyId, QuadTree, QuadTreeSettings,
    Snapshot,
};
use clap::Args;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The knobs of `bplab concurrency`.
#[derive(Args, Clone, Debug)]
pub struct ConcurrencyArgs {
    /// Boxes present, and boxes in the prepared batch.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(100..=4_000_000))]
    pub n: u32,
    /// Query threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// Updates while the threads query.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub frames: u32,
    /// Seed of the boxes and their motion.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `n` dynamic boxes of size 0.5..2 in a cube sized for about one neighbour each.
fn boxes(rng: &mut Pcg64Mcg, n: usize, side: f32) -> Vec<(Aabb, ProxyDesc)> {
    (0..n)
        .map(|_| {
            let min: [f32; 3] = std::array::from_fn(|_| rng.random::<f32>() * side);
            let size: f32 = rng.random_range(0.5..2.0);
            (Aabb::new(min, min.map(|c| c + size)), ProxyDesc::dynamic())
        })
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn side(n: usize) -> f32 {
    2.5 * (n as f32).cbrt()
}

/// Part 1: the commit of a prepared batch against `insert_batch`.
fn commit(args: &ConcurrencyArgs) -> Result<String, Error> {
    let n = args.n as usize;
    let mut rng = Pcg64Mcg::seed_from_u64(args.seed);
    let s = side(2 * n);
    let present = boxes(&mut rng, n, s);
    let batch = boxes(&mut rng, n, s);
    let mut committed = QuadTree::new(Config::default());
    let mut inserted = QuadTree::new(Config::default());
    committed.insert_batch(&present)?;
    inserted.insert_batch(&present)?;
    committed.update()?;
    inserted.update()?;
    let t = Instant::now();
    let prepared = committed.prepare_batch(batch.clone())?;
    let prepare = t.elapsed();
    let t = Instant::now();
    committed.commit(prepared)?;
    let commit = t.elapsed();
    let t = Instant::now();
    let a = committed.update()?.clone();
    let link = t.elapsed();
    let t = Instant::now();
    inserted.insert_batch(&batch)?;
    let insert = t.elapsed();
    let t = Instant::now();
    let b = inserted.update()?.clone();
    let build = t.elapsed();
    let same = if a == b { "equal" } else { "DIFFER" };
    Ok(format!(
        "commit of a prepared batch of {n} boxes into a QuadTree of {n} (events {same}, {} created)\n\
         | step | prepared batch (ms) | insert_batch (ms) |\n|---|---:|---:|\n\
         | prepare (any thread) | {:.2} | - |\n\
         | commit / insert_batch (owner) | {:.2} | {:.2} |\n\
         | next update | {:.2} | {:.2} |\n",
        a.created().len(),
        ms(prepare),
        ms(commit),
        ms(insert),
        ms(link),
        ms(build),
    ))
}

/// Runs the readers on the latest published snapshot until `done`; returns queries made.
fn readers(
    threads: u32,
    latest: &Arc<Mutex<Arc<Snapshot>>>,
    done: &Arc<AtomicBool>,
    s: f32,
) -> Vec<std::thread::JoinHandle<u64>> {
    (0..threads)
        .map(|k| {
            let (latest, done) = (Arc::clone(latest), Arc::clone(done));
            std::thread::spawn(move || {
                let mut rng = Pcg64Mcg::seed_from_u64(1000 + u64::from(k));
                let mut hits = 0u64;
                let mut queries = 0u64;
                while !done.load(Ordering::Relaxed) {
                    let Ok(snap) = latest.lock().map(|g| Arc::clone(&g)) else {
                        break;
                    };
                    for _ in 0..256 {
                        let p: [f32; 3] = std::array::from_fn(|_| rng.random::<f32>() * s);
                        let q = Aabb::new(p, p.map(|c| c + 1.0));
                        let _ = snap.query_aabb(q, LayerMask::ALL, &mut |_| {
                            hits += 1;
                            std::ops::ControlFlow::Continue(())
                        });
                        queries += 1;
                    }
                }
                std::hint::black_box(hits);
                queries
            })
        })
        .collect()
}

/// Part 2: query throughput during updates and with none.
fn queries(args: &ConcurrencyArgs) -> Result<String, Error> {
    let n = args.n as usize;
    let mut rng = Pcg64Mcg::seed_from_u64(args.seed + 1);
    let s = side(n);
    let mut bp = QuadTree::new(Config::default());
    let mut now: Vec<Aabb> = boxes(&mut rng, n, s).into_iter().map(|b| b.0).collect();
    let items: Vec<(Aabb, ProxyDesc)> = now.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
    let ids: Vec<ProxyId> = bp.insert_batch(&items)?;
    bp.update()?;
    // A tenth of the boxes (every tenth, from a moving start) drift by up to half a unit.
    let mut first = 0;
    let mut frame = |bp: &mut QuadTree, rng: &mut Pcg64Mcg| -> Result<Duration, Error> {
        first = (first + 1) % 10;
        let moves: Vec<(ProxyId, Aabb)> = (first..n)
            .step_by(10)
            .map(|k| {
                let d: [f32; 3] = std::array::from_fn(|_| rng.random_range(-0.5..0.5));
                let b = &mut now[k];
                *b = Aabb::new(
                    std::array::from_fn(|i| b.min[i] + d[i]),
                    std::array::from_fn(|i| b.max[i] + d[i]),
                );
                (ids[k], *b)
            })
            .collect();
        bp.set_aabbs(&moves)?;
        let t = Instant::now();
        bp.update()?;
        Ok(t.elapsed())
    };
    // The owner's update time alone, with no snapshot held.
    let mut alone = Duration::ZERO;
    for _ in 0..args.frames {
        alone += frame(&mut bp, &mut rng)?;
    }
    // With a snapshot taken after each update and held through the next (so that the next
    // copies the trees it writes), no reader running: the copies' cost alone.
    let mut copied = Duration::ZERO;
    for _ in 0..args.frames {
        let held = bp.snapshot();
        copied += frame(&mut bp, &mut rng)?;
        drop(held);
    }
    let latest = Arc::new(Mutex::new(Arc::new(bp.snapshot())));
    let done = Arc::new(AtomicBool::new(false));
    let workers = readers(args.threads, &latest, &done, s);
    let t = Instant::now();
    let mut held = Duration::ZERO;
    for _ in 0..args.frames {
        held += frame(&mut bp, &mut rng)?;
        let snap = Arc::new(bp.snapshot());
        if let Ok(mut g) = latest.lock() {
            *g = snap;
        }
    }
    let during = t.elapsed();
    done.store(true, Ordering::Relaxed);
    let q_during: u64 = workers.into_iter().map(|w| w.join().unwrap_or(0)).sum();
    let done = Arc::new(AtomicBool::new(false));
    let workers = readers(args.threads, &latest, &done, s);
    std::thread::sleep(during);
    done.store(true, Ordering::Relaxed);
    let q_idle: u64 = workers.into_iter().map(|w| w.join().unwrap_or(0)).sum();
    let per = |q: u64| q as f64 / during.as_secs_f64() / f64::from(args.threads) / 1e6;
    let f = f64::from(args.frames);
    Ok(format!(
        "{} query threads on snapshots of a QuadTree of {n} boxes, a tenth moving per update\n\
         | | queries per thread (M/s) | owner's update (ms) |\n|---|---:|---:|\n\
         | during {} updates | {:.3} | {:.2} (readers running) |\n\
         | no update running | {:.3} | - |\n\
         | no reader | - | {:.2} (a snapshot held), {:.2} (none) |\n",
        args.threads,
        args.frames,
        per(q_during),
        ms(held) / f,
        per(q_idle),
        ms(copied) / f,
        ms(alone) / f,
    ))
}

/// Part 3: every box drifting for `4 * --frames` updates, trees rebuilt in place or in the
/// background: the mean and worst update, and the events checked equal.
fn rebuilds(args: &ConcurrencyArgs) -> Result<String, Error> {
    let n = args.n as usize;
    let s = side(n);
    let mut runs = Vec::new();
    for background in [false, true] {
        let mut rng = Pcg64Mcg::seed_from_u64(args.seed + 2);
        let mut settings = QuadTreeSettings::default();
        settings.background_rebuild = background;
        let mut bp = QuadTree::with_settings(Config::default(), settings)?;
        let mut now: Vec<Aabb> = boxes(&mut rng, n, s).into_iter().map(|b| b.0).collect();
        let items: Vec<(Aabb, ProxyDesc)> =
            now.iter().map(|&b| (b, ProxyDesc::dynamic())).collect();
        let ids = bp.insert_batch(&items)?;
        bp.update()?;
        let (mut total, mut worst) = (Duration::ZERO, Duration::ZERO);
        let mut events = Vec::new();
        for _ in 0..4 * args.frames {
            let moves: Vec<(ProxyId, Aabb)> = ids
                .iter()
                .zip(&mut now)
                .map(|(&id, b)| {
                    let d: [f32; 3] = std::array::from_fn(|_| rng.random_range(-0.2..0.2));
                    *b = Aabb::new(
                        std::array::from_fn(|i| b.min[i] + d[i]),
                        std::array::from_fn(|i| b.max[i] + d[i]),
                    );
                    (id, *b)
                })
                .collect();
            bp.set_aabbs(&moves)?;
            let t = Instant::now();
            events.push(bp.update()?.clone());
            let e = t.elapsed();
            total += e;
            worst = worst.max(e);
        }
        let rebuilt = match bp.stats().figures {
            broadphase::Figures::QuadTree(f) => f.fast_rebuilds,
            _ => 0,
        };
        runs.push((total, worst, rebuilt, events));
    }
    let same = if runs[0].3 == runs[1].3 {
        "equal"
    } else {
        "DIFFER"
    };
    let f = f64::from(4 * args.frames);
    let mut out = format!(
        "{} updates of a QuadTree of {n} boxes, every box drifting (events {same})\n\
         | rebuilds | mean update (ms) | worst update (ms) | rebuilds made |\n|---|---:|---:|---:|\n",
        4 * args.frames
    );
    for (name, (total, worst, rebuilt, _)) in ["in place", "background"].iter().zip(&runs) {
        out += &format!(
            "| {name} | {:.2} | {:.2} | {rebuilt} |\n",
            ms(*total) / f,
            ms(*worst)
        );
    }
    Ok(out)
}

/// Runs `bplab concurrency` and prints its three tables.
pub fn command(args: &ConcurrencyArgs) -> ExitCode {
    let tables = commit(args)
        .and_then(|a| Ok(a + "\n" + &queries(args)?))
        .and_then(|a| Ok(a + "\n" + &rebuilds(args)?));
    match tables {
        Ok(text) => crate::output::print_or_fail(&text),
        Err(e) => {
            eprintln!("bplab concurrency: {e}");
            ExitCode::FAILURE
        }
    }
}
