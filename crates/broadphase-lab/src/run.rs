//! `bplab run`: drive every algorithm through a scene, time it, and check it against
//! `BruteForce`.
//!
//! The frames come from a generated scene, from a scene file's drifting boxes (version 1), or
//! from a trace's recorded frames (version 2, see [`crate::scene_file`]): a [`Source`].
//!
//! The oracle runs once per scene and updates only on the frames it checks (and the frame
//! before each, so that its events are that frame's diff); each algorithm's created and deleted
//! lists and its persistent pair set are compared there. Frame time is the broad phase's own
//! work: the `set_aabb`, `remove` and `insert` calls of the frame plus `update()`, not the
//! scene's stepping.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::output::{csv_line, Format};
use crate::progress::Progress;
use crate::scene_file::SceneFile;
use crate::scenes::{Frame, Scene, SceneKind};
use crate::variation::Variation;
use broadphase::{
    Aabb, Algorithm, BroadPhase, BruteForce, Config, Error, Figures, Pair, ProxyDesc, ProxyId,
};

/// Up to this many boxes every frame is verified.
pub const VERIFY_ALL_UP_TO: usize = 5_000;

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The scene.
    pub scene: SceneKind,
    /// Objects in the scene.
    pub n: usize,
    /// Frames after the build.
    pub frames: usize,
    /// The scene's seed.
    pub seed: u64,
    /// Factors varying the scene's generator.
    pub vary: Variation,
    /// The algorithms to run, in order.
    pub algorithms: Vec<Algorithm>,
    /// Whether GpuGrid runs too, after the algorithms, checked as they are (see
    /// [`crate::gpu`]; `bplab run` sets it when a device answers or `--algo gpugrid` asks).
    pub gpu: bool,
    /// Frames to verify besides the build (ignored when every frame is verified).
    pub samples: usize,
    /// Whether to show a progress bar when the run takes more than a second.
    pub progress: bool,
    /// Whether to check the algorithms against `BruteForce` at all.
    pub verify: bool,
    /// A scene read from a file, used instead of `scene`, `n` and `seed`; `n` is then its
    /// [`SceneFile::object_count`], and for a trace `frames` at most its frame count.
    pub file: Option<Arc<SceneFile>>,
}

impl RunOptions {
    /// The scene at its start.
    pub fn source(&self) -> Source {
        match &self.file {
            Some(file) if file.is_trace() => Source::Trace {
                file: Arc::clone(file),
                next: 0,
            },
            Some(file) => Source::Scene(Scene::from_file(file)),
            None => Source::Scene(Scene::varied(self.scene, self.n, self.seed, &self.vary)),
        }
    }
}

/// One value of `bplab run --algo`: one of `broadphase`'s algorithms, or GpuGrid, which runs
/// on the device ([`crate::gpu`]).
///
/// ```
/// use broadphase::Algorithm;
/// use broadphase_lab::run::RunAlgorithm;
///
/// assert_eq!("sap".parse(), Ok(RunAlgorithm::Cpu(Algorithm::Sap)));
/// assert_eq!("GpuGrid".parse(), Ok(RunAlgorithm::GpuGrid));
/// assert!("nope".parse::<RunAlgorithm>().unwrap_err().ends_with("or gpugrid"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunAlgorithm {
    /// One of `broadphase`'s algorithms, on the CPU.
    Cpu(Algorithm),
    /// GpuGrid (`broadphase-gpu`), on the device.
    GpuGrid,
}

impl std::str::FromStr for RunAlgorithm {
    type Err = String;

    /// An [`Algorithm`]'s name, or `gpugrid` (any case, with `-` or `_` anywhere).
    fn from_str(s: &str) -> Result<Self, String> {
        let norm: String = s
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_ascii_lowercase();
        if norm == crate::gpu::NAME {
            return Ok(RunAlgorithm::GpuGrid);
        }
        s.parse::<Algorithm>()
            .map(RunAlgorithm::Cpu)
            .map_err(|e| format!("{e}, or {}", crate::gpu::NAME))
    }
}

/// The frames `bplab run` replays of a trace: `asked`, or all of them when not asked.
///
/// # Errors
/// When `asked` is more than the trace has: replaying a recording cannot make up frames.
pub fn trace_frames(file: &SceneFile, asked: Option<u32>) -> Result<usize, String> {
    let have = file.frames.len();
    match asked.map(|a| a as usize) {
        None => Ok(have),
        Some(a) if a <= have => Ok(a),
        Some(a) => Err(format!(
            "--frames {a} asks for more frames than the trace's {have}"
        )),
    }
}

/// Where a run's frames come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A generated scene, or a version 1 file's boxes stepping by their velocities.
    Scene(Scene),
    /// A version 2 file's recorded frames.
    Trace {
        /// The file.
        file: Arc<SceneFile>,
        /// The index of the next frame to hand out.
        next: usize,
    },
}

/// The id of an object not yet in the broad phase: never issued, as slot indices stop below
/// `u32::MAX`.
const ABSENT: ProxyId = ProxyId::from_raw_parts(u32::MAX, u32::MAX);

impl Source {
    /// The objects present at the start, in index order: what a broad phase starts with.
    pub fn initial(&self) -> Vec<(Aabb, ProxyDesc)> {
        match self {
            Source::Scene(scene) => scene.initial(),
            Source::Trace { file, .. } => file.objects.iter().map(|o| (o.aabb, o.desc)).collect(),
        }
    }

    /// The number of objects over the whole run, present or not: frames name `0..objects()`.
    pub fn objects(&self) -> usize {
        match self {
            Source::Scene(scene) => scene.len(),
            Source::Trace { file, .. } => file.object_count(),
        }
    }

    /// Advances one frame and says what changed; past a trace's end nothing does.
    pub fn step(&mut self) -> Frame {
        match self {
            Source::Scene(scene) => scene.step(),
            Source::Trace { file, next } => {
                let frame = file.frames.get(*next).map(|f| f.to_frame());
                *next += 1;
                frame.unwrap_or_default()
            }
        }
    }

    /// The ids of every object, from those a broad phase gave the start's objects:
    /// [`ABSENT`] for the objects that arrive later.
    fn all_ids(&self, mut ids: Vec<ProxyId>) -> Vec<ProxyId> {
        ids.resize(self.objects().max(ids.len()), ABSENT);
        ids
    }
}

/// A proxy named by its scene object and how many times that object has arrived again
/// (churn): the oracle updates only around the frames it checks, so it recycles slots at other
/// updates than the algorithm and hands out other ids for the same objects.
type Name = (u32, u32);

/// A pair of names, smaller first.
type NamedPair = (Name, Name);

/// The names of one broad phase's ids.
struct Names {
    of: HashMap<ProxyId, Name>,
    arrivals: Vec<u32>,
    /// Ids of objects that left this frame: named until the frame's events are compared.
    leaving: Vec<ProxyId>,
}

impl Names {
    /// The names of `ids`, the start's objects' and [`ABSENT`] for those that arrive later.
    fn new(ids: &[ProxyId]) -> Self {
        Self {
            of: ids
                .iter()
                .enumerate()
                .filter(|&(_, &id)| id != ABSENT)
                .map(|(i, &id)| (id, (i as u32, 0)))
                .collect(),
            arrivals: vec![0; ids.len()],
            leaving: Vec::new(),
        }
    }

    /// Notes the ids of the objects `frame` removes: call before applying it (an object
    /// removed and added again in one frame gets a new id).
    fn note_leavers(&mut self, ids: &[ProxyId], frame: &Frame) {
        self.leaving
            .extend(frame.removed.iter().map(|&i| ids[i as usize]));
    }

    /// Names the ids of the objects `frame` added: call after applying it.
    fn name_arrivals(&mut self, ids: &[ProxyId], frame: &Frame) {
        for &(i, _, _) in &frame.added {
            let n = &mut self.arrivals[i as usize];
            *n += 1;
            self.of.insert(ids[i as usize], (i, *n));
        }
    }

    /// Forgets the objects that left, once their events are read.
    fn forget_leavers(&mut self) {
        for id in self.leaving.drain(..) {
            self.of.remove(&id);
        }
    }

    fn pairs(&self, pairs: &[Pair]) -> Vec<NamedPair> {
        let name = |id: &ProxyId| self.of.get(id).copied().unwrap_or((u32::MAX, 0));
        let mut out: Vec<NamedPair> = pairs
            .iter()
            .map(|p| {
                let (a, b) = (name(&p.a), name(&p.b));
                (a.min(b), a.max(b))
            })
            .collect();
        out.sort_unstable();
        out
    }
}

/// The expected events and pairs at one verified frame, by name.
#[derive(Clone, Debug)]
struct Expected {
    created: Vec<NamedPair>,
    deleted: Vec<NamedPair>,
    pairs: Vec<NamedPair>,
}

/// How an algorithm fared against the oracle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every verified frame matched.
    Verified {
        /// Frames compared (the build included).
        frames: usize,
    },
    /// Verification was turned off.
    Skipped,
    /// A frame differed.
    Mismatch {
        /// The first frame that differed (0 = the build).
        frame: usize,
        /// What differed.
        what: String,
    },
}

/// One algorithm's results.
#[derive(Clone, Debug)]
pub struct AlgoResult {
    /// Which algorithm (GpuGrid's is [`Algorithm::Grid`], the algorithm it runs).
    pub algorithm: Algorithm,
    /// The name in the report: the algorithm's, or [`crate::gpu::DISPLAY_NAME`].
    pub name: String,
    /// Inserting every box and the first update, in milliseconds.
    pub build_ms: f64,
    /// Each frame's time, in milliseconds.
    pub frame_ms: Vec<f64>,
    /// Pairs after the last frame.
    pub pairs: usize,
    /// Pairs created over all frames (the build excluded).
    pub created: usize,
    /// Pairs deleted over all frames.
    pub deleted: usize,
    /// The comparison with the oracle.
    pub verdict: Verdict,
    /// For `Auto`: what it ran on from the build, and each switch with its frame.
    pub choices: Vec<String>,
}

impl AlgoResult {
    /// The median frame time.
    pub fn median_ms(&self) -> f64 {
        percentile(&self.frame_ms, 0.5)
    }

    /// The 95th-percentile frame time.
    pub fn p95_ms(&self) -> f64 {
        percentile(&self.frame_ms, 0.95)
    }
}

/// The `q` quantile (nearest rank) of `values`.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// The frames to verify: all of them for small scenes, else the build, the first frame, and
/// `samples` more spread over the run.
fn verified_frames(n: usize, frames: usize, samples: usize) -> Vec<usize> {
    if n <= VERIFY_ALL_UP_TO {
        return (0..=frames).collect();
    }
    let mut out = vec![0];
    if frames >= 1 {
        out.push(1);
    }
    for k in 1..=samples {
        out.push(frames * k / samples.max(1));
    }
    out.sort_unstable();
    out.dedup();
    out.retain(|&f| f <= frames);
    out
}

/// Hands a scene's frames to a broad phase as a game would: its removals, arrivals and moves,
/// each as one batch, keeping `ids` (scene index → id) current. The batches are built in
/// buffers kept from frame to frame, like a game's: made afresh, the three lists were timed
/// with the frame, and on two threads handing their megabytes back to the system cost more
/// than some updates (`bplab run --scene churn --n 100000 --algo abp`, arrivals and moves
/// timed apart: 0.4–0.5 ms a frame on one thread; 0.4–1.9 ms, mostly above 1, on two).
#[derive(Debug, Default)]
pub struct Feeder {
    leaving: Vec<ProxyId>,
    arriving: Vec<(Aabb, ProxyDesc)>,
    moves: Vec<(ProxyId, Aabb)>,
}

impl Feeder {
    /// The bytes its lists hold.
    pub fn bytes(&self) -> usize {
        fn held<T>(list: &Vec<T>) -> usize {
            list.capacity() * std::mem::size_of::<T>()
        }
        held(&self.leaving) + held(&self.arriving) + held(&self.moves)
    }

    /// Applies `frame`'s changes to `bp`.
    ///
    /// # Errors
    /// As the broad phase's batch calls: only if `ids` do not match `bp`, or the scene's
    /// boxes are invalid, which would be bugs.
    pub fn apply(
        &mut self,
        bp: &mut dyn BroadPhase,
        ids: &mut [ProxyId],
        frame: &Frame,
    ) -> Result<(), Error> {
        self.leaving.clear();
        self.leaving
            .extend(frame.removed.iter().map(|&i| ids[i as usize]));
        bp.remove_batch(&self.leaving)?;
        self.arriving.clear();
        self.arriving
            .extend(frame.added.iter().map(|&(_, aabb, desc)| (aabb, desc)));
        for (&(i, _, _), id) in frame.added.iter().zip(bp.insert_batch(&self.arriving)?) {
            ids[i as usize] = id;
        }
        self.moves.clear();
        self.moves
            .extend(frame.moved.iter().map(|&(i, aabb)| (ids[i as usize], aabb)));
        bp.set_aabbs(&self.moves)
    }
}

/// Runs the oracle over the scene and records what it expects at `check` frames.
fn expectations(
    opts: &RunOptions,
    check: &[usize],
    progress: &mut Progress,
) -> Result<BTreeMap<usize, Expected>, Error> {
    progress.stage("BruteForce");
    let mut scene = opts.source();
    let mut oracle = BruteForce::new(Config::default());
    let mut ids = scene.all_ids(oracle.insert_batch(&scene.initial())?);
    let mut names = Names::new(&ids);
    let mut feeder = Feeder::default();
    let mut out = BTreeMap::new();
    let record =
        |oracle: &mut BruteForce, names: &Names, out: &mut BTreeMap<usize, Expected>, f: usize| {
            let events = oracle.update()?;
            let want = Expected {
                created: names.pairs(events.created()),
                deleted: names.pairs(events.deleted()),
                pairs: names.pairs(oracle.pairs()),
            };
            out.insert(f, want);
            Ok::<(), Error>(())
        };
    record(&mut oracle, &names, &mut out, 0)?;
    for f in 1..=opts.frames {
        let frame = scene.step();
        names.note_leavers(&ids, &frame);
        feeder.apply(&mut oracle, &mut ids, &frame)?;
        names.name_arrivals(&ids, &frame);
        if check.binary_search(&f).is_ok() {
            record(&mut oracle, &names, &mut out, f)?;
        } else if check.binary_search(&(f + 1)).is_ok() {
            // The oracle's events are relative to its previous update: update on the frame
            // before each checked one.
            oracle.update()?;
        }
        names.forget_leavers();
        progress.tick();
    }
    Ok(out)
}

fn compare(bp: &dyn BroadPhase, names: &Names, want: &Expected) -> Option<String> {
    let events = bp.events();
    if names.pairs(events.created()) != want.created {
        return Some(format!(
            "created: {} pairs, expected {}",
            events.created().len(),
            want.created.len()
        ));
    }
    if names.pairs(events.deleted()) != want.deleted {
        return Some(format!(
            "deleted: {} pairs, expected {}",
            events.deleted().len(),
            want.deleted.len()
        ));
    }
    let pairs = names.pairs(bp.pairs());
    if pairs != want.pairs {
        return Some(format!(
            "persistent set: {} pairs, expected {}",
            pairs.len(),
            want.pairs.len()
        ));
    }
    None
}

/// The broad phase `choice` names, with its name in the report.
///
/// # Errors
/// [`Error::Device`] when GpuGrid cannot run here (no device, or no `gpu` feature).
fn broad_phase(
    choice: RunAlgorithm,
    config: Config,
) -> Result<(String, Box<dyn BroadPhase>), Error> {
    match choice {
        RunAlgorithm::Cpu(a) => Ok((a.to_string(), broadphase::new(a, config))),
        RunAlgorithm::GpuGrid => crate::gpu::grid(config)
            .map(|bp| (crate::gpu::DISPLAY_NAME.to_string(), bp))
            .map_err(|message| Error::Device { message }),
    }
}

fn run_one(
    opts: &RunOptions,
    choice: RunAlgorithm,
    expected: &BTreeMap<usize, Expected>,
    progress: &mut Progress,
) -> Result<AlgoResult, Error> {
    let mut scene = opts.source();
    let (name, mut bp) = broad_phase(choice, Config::default().with_capacity(opts.n))?;
    progress.stage(&name);
    let algorithm = bp.algorithm();
    let initial = scene.initial();
    let t = Instant::now();
    let ids = bp.insert_batch(&initial)?;
    bp.update()?;
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut ids = scene.all_ids(ids);
    let mut names = Names::new(&ids);
    let mut verdict = None;
    let mut verified = 0;
    let mut check =
        |bp: &dyn BroadPhase, names: &Names, f: usize, verdict: &mut Option<Verdict>| {
            if let (None, Some(want)) = (&verdict, expected.get(&f)) {
                match compare(bp, names, want) {
                    Some(what) => *verdict = Some(Verdict::Mismatch { frame: f, what }),
                    None => verified += 1,
                }
            }
        };
    check(bp.as_ref(), &names, 0, &mut verdict);
    let mut choices = AutoLog::default();
    choices.observe(bp.as_ref(), 0);
    let (mut created, mut deleted) = (0, 0);
    let mut frame_ms = Vec::with_capacity(opts.frames);
    let mut feeder = Feeder::default();
    for f in 1..=opts.frames {
        let frame = scene.step();
        // Naming the objects is the lab's bookkeeping, left outside the clock.
        names.note_leavers(&ids, &frame);
        let t = Instant::now();
        feeder.apply(bp.as_mut(), &mut ids, &frame)?;
        let events = bp.update()?;
        frame_ms.push(t.elapsed().as_secs_f64() * 1e3);
        names.name_arrivals(&ids, &frame);
        created += events.created().len();
        deleted += events.deleted().len();
        check(bp.as_ref(), &names, f, &mut verdict);
        choices.observe(bp.as_ref(), f);
        names.forget_leavers();
        progress.tick();
    }
    Ok(AlgoResult {
        algorithm,
        name,
        build_ms,
        frame_ms,
        pairs: bp.pairs().len(),
        created,
        deleted,
        verdict: verdict.unwrap_or(if opts.verify {
            Verdict::Verified { frames: verified }
        } else {
            Verdict::Skipped
        }),
        choices: choices.lines,
    })
}

/// `Auto`'s choices over a run, read after each update outside the clock: a line when the
/// build chooses and one at each switch.
#[derive(Default)]
struct AutoLog {
    running: Option<Algorithm>,
    lines: Vec<String>,
}

impl AutoLog {
    fn observe(&mut self, bp: &dyn BroadPhase, frame: usize) {
        if bp.algorithm() != Algorithm::Auto {
            return;
        }
        if let Figures::Auto(f) = bp.stats().figures {
            if self.running != Some(f.running) {
                self.running = Some(f.running);
                let when = if frame == 0 {
                    "build".to_string()
                } else {
                    format!("frame {frame}")
                };
                self.lines
                    .push(format!("{when}: {} ({})", f.running.cli_name(), f.reason));
            }
        }
    }
}

/// The rayon pool a command runs in: `threads` workers, or rayon's default (one per core).
///
/// # Errors
/// When the operating system refuses the threads.
pub fn thread_pool(threads: Option<u32>) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        builder = builder.num_threads(t as usize);
    }
    builder.build()
}

/// Runs every requested algorithm on the scene and verifies each against `BruteForce`.
///
/// # Errors
/// [`Error::Device`] when GpuGrid is asked for and cannot run; otherwise only if a broad phase
/// rejects the scene's input, which would be a bug.
pub fn run(opts: &RunOptions) -> Result<Vec<AlgoResult>, Error> {
    let choices: Vec<RunAlgorithm> = opts
        .algorithms
        .iter()
        .map(|&a| RunAlgorithm::Cpu(a))
        .chain(opts.gpu.then_some(RunAlgorithm::GpuGrid))
        .collect();
    let oracle_runs = usize::from(opts.verify);
    let total = (opts.frames * (choices.len() + oracle_runs)) as u64;
    let mut progress = Progress::new(total, opts.progress, "frames");
    let expected = if opts.verify {
        let check = verified_frames(opts.n, opts.frames, opts.samples);
        expectations(opts, &check, &mut progress)?
    } else {
        BTreeMap::new()
    };
    let mut results = Vec::new();
    for choice in choices {
        results.push(run_one(opts, choice, &expected, &mut progress)?);
    }
    progress.finish();
    Ok(results)
}

/// One algorithm's line of the report, as every `--format` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The algorithm's name.
    pub algorithm: String,
    /// Inserting every box and the first update, in milliseconds.
    pub build_ms: f64,
    /// The median frame time, in milliseconds.
    pub frame_ms_median: f64,
    /// The 95th-percentile frame time, in milliseconds.
    pub frame_ms_p95: f64,
    /// Pairs after the last frame.
    pub pairs: usize,
    /// Pairs created per frame, on average.
    pub created_per_frame: f64,
    /// Pairs deleted per frame, on average.
    pub deleted_per_frame: f64,
    /// The comparison with `BruteForce`: `yes (N frames)`, `skipped` or `NO: ...`.
    pub verified: String,
}

impl Row {
    /// The field names, in order: JSON's keys and the CSV header.
    pub const COLUMNS: [&'static str; 8] = [
        "algorithm",
        "build_ms",
        "frame_ms_median",
        "frame_ms_p95",
        "pairs",
        "created_per_frame",
        "deleted_per_frame",
        "verified",
    ];

    /// The fields as the table shows them (`precise`: as CSV writes them, unrounded).
    fn cells(&self, precise: bool) -> [String; 8] {
        let fixed = |v: f64, digits: usize| {
            if precise {
                v.to_string()
            } else {
                format!("{v:.digits$}")
            }
        };
        [
            self.algorithm.clone(),
            fixed(self.build_ms, 2),
            fixed(self.frame_ms_median, 3),
            fixed(self.frame_ms_p95, 3),
            self.pairs.to_string(),
            fixed(self.created_per_frame, 1),
            fixed(self.deleted_per_frame, 1),
            self.verified.clone(),
        ]
    }
}

/// The report's lines, one per algorithm.
pub fn rows(opts: &RunOptions, results: &[AlgoResult]) -> Vec<Row> {
    let frames = opts.frames.max(1) as f64;
    results
        .iter()
        .map(|r| Row {
            algorithm: r.name.clone(),
            build_ms: r.build_ms,
            frame_ms_median: r.median_ms(),
            frame_ms_p95: r.p95_ms(),
            pairs: r.pairs,
            created_per_frame: r.created as f64 / frames,
            deleted_per_frame: r.deleted as f64 / frames,
            verified: match &r.verdict {
                Verdict::Verified { frames } => format!("yes ({frames} frames)"),
                Verdict::Skipped => "skipped".to_string(),
                Verdict::Mismatch { frame, what } => format!("NO: frame {frame}: {what}"),
            },
        })
        .collect()
}

/// The results in `format`.
pub fn report(opts: &RunOptions, results: &[AlgoResult], format: Format) -> String {
    match format {
        Format::Table => table(opts, results),
        Format::Json => json(opts, results),
        Format::Csv => csv(opts, results),
    }
}

/// The results as a table.
pub fn table(opts: &RunOptions, results: &[AlgoResult]) -> String {
    let scene = match &opts.file {
        Some(_) => "from file".to_string(),
        None if opts.vary.is_standard() => format!("{} · seed {}", opts.scene, opts.seed),
        None => format!("{} ({}) · seed {}", opts.scene, opts.vary, opts.seed),
    };
    let mut out = format!(
        "scene {scene} · {} boxes · {} frames · {}\n\n",
        opts.n,
        opts.frames,
        threads(rayon::current_num_threads())
    );
    let header = [
        "algorithm",
        "build ms",
        "frame ms (median)",
        "frame ms (p95)",
        "pairs",
        "created/frame",
        "deleted/frame",
        "verified",
    ];
    let rows: Vec<[String; 8]> = rows(opts, results).iter().map(|r| r.cells(false)).collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (c, cell) in cells.iter().enumerate() {
            if c == 0 {
                s += &format!("{cell:<w$}", w = widths[c]);
            } else {
                s += &format!("  {cell:>w$}", w = widths[c]);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    out += &line(&header.map(String::from));
    out += &line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
    for r in &rows {
        out += &line(r);
    }
    for r in results.iter().filter(|r| !r.choices.is_empty()) {
        out += &format!("\n{} ran on: {}\n", r.name, r.choices.join("; "));
    }
    out
}

/// The JSON report: the run's settings and its rows.
#[derive(Serialize)]
struct JsonReport<'a> {
    /// The generated scene's name, or `file`.
    scene: String,
    /// The generated scene's seed (none for a file).
    seed: Option<u64>,
    /// The factors varying the generated scene, as `--vary` takes them (none for a file; empty
    /// for the scene as listed).
    vary: Option<String>,
    boxes: usize,
    frames: usize,
    threads: usize,
    rows: &'a [Row],
}

/// The results as a JSON object: `scene`, `seed`, `vary`, `boxes`, `frames`, `threads` and
/// `rows`, each row an object with the [`Row::COLUMNS`] keys.
pub fn json(opts: &RunOptions, results: &[AlgoResult]) -> String {
    let rows = rows(opts, results);
    let report = JsonReport {
        scene: match opts.file {
            Some(_) => "file".to_string(),
            None => opts.scene.to_string(),
        },
        seed: opts.file.is_none().then_some(opts.seed),
        vary: opts.file.is_none().then(|| opts.vary.to_string()),
        boxes: opts.n,
        frames: opts.frames,
        threads: rayon::current_num_threads(),
        rows: &rows,
    };
    // Serializing plain strings and numbers cannot fail; NaN (no frame ever is) would be null.
    serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
}

/// The results as CSV: a header of [`Row::COLUMNS`], then one line per algorithm.
pub fn csv(opts: &RunOptions, results: &[AlgoResult]) -> String {
    let mut out = csv_line(&Row::COLUMNS);
    for r in rows(opts, results) {
        out += &csv_line(&r.cells(true));
    }
    out
}

/// "1 thread", "2 threads".
pub(crate) fn threads(n: usize) -> String {
    if n == 1 {
        "1 thread".to_string()
    } else {
        format!("{n} threads")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scene_file_runs_and_verifies() {
        let text = "box 0 0 0 1 1 1\nbox 2 0 0 3 1 1 velocity -0.25 0 0\nbox 0 5 0 9 6 1 fixed\n";
        let file = crate::scene_file::parse(text).unwrap();
        let results = run(&file_options(file, 8)).unwrap();
        for r in &results {
            assert_eq!(r.verdict, Verdict::Verified { frames: 9 }, "{r:?}");
            // The mover touches the first box from frame 4 on (x = 2 - 0.25 t reaches 1).
            assert_eq!((r.created, r.pairs), (1, 1), "{r:?}");
        }
    }

    fn file_options(file: SceneFile, frames: usize) -> RunOptions {
        RunOptions {
            scene: SceneKind::Uniform,
            n: file.object_count(),
            frames,
            seed: 0,
            vary: Variation::default(),
            algorithms: Algorithm::ALL.to_vec(),
            gpu: false,
            samples: 2,
            progress: false,
            verify: true,
            file: Some(Arc::new(file)),
        }
    }

    #[test]
    fn a_trace_replays_and_verifies() {
        let text = include_str!("../tests/data/moves.scene");
        let file = crate::scene_file::parse(text).unwrap();
        assert_eq!(trace_frames(&file, None), Ok(4));
        assert_eq!(trace_frames(&file, Some(2)), Ok(2));
        assert!(trace_frames(&file, Some(5))
            .unwrap_err()
            .contains("trace's 4"));
        let opts = file_options(file, 4);
        for r in run(&opts).unwrap() {
            assert_eq!(r.verdict, Verdict::Verified { frames: 5 }, "{r:?}");
            // Created: 0-9, 1-2, 0-1; deleted: 0-9 (0 leaves), 9 with nobody when it leaves.
            assert_eq!((r.created, r.deleted, r.pairs), (3, 1, 2), "{r:?}");
        }
    }

    #[test]
    fn a_recorded_scene_replays_with_the_scene_s_counts() {
        for scene in [
            SceneKind::Churn,
            SceneKind::Teleport,
            SceneKind::StaticWorld,
        ] {
            let generated = RunOptions {
                scene,
                n: 500,
                frames: 6,
                seed: 8,
                vary: Variation::default(),
                algorithms: Algorithm::ALL.to_vec(),
                gpu: false,
                samples: 2,
                progress: false,
                verify: true,
                file: None,
            };
            let text = crate::scene_file::write(&crate::scene_file::record(scene, 500, 8, 6));
            let replayed = file_options(crate::scene_file::parse(&text).unwrap(), 6);
            let counts = |opts: &RunOptions| -> Vec<_> {
                run(opts)
                    .unwrap()
                    .into_iter()
                    .map(|r| (r.algorithm, r.pairs, r.created, r.deleted, r.verdict))
                    .collect()
            };
            assert_eq!(counts(&replayed), counts(&generated), "{scene}");
        }
    }

    #[test]
    fn every_format_prints_the_same_rows() {
        let opts = RunOptions {
            scene: SceneKind::Pile,
            n: 40,
            frames: 3,
            seed: 2,
            vary: Variation::default(),
            algorithms: vec![Algorithm::Abp, Algorithm::Grid],
            gpu: false,
            samples: 2,
            progress: false,
            verify: true,
            file: None,
        };
        let mut results = run(&opts).unwrap();
        results[1].verdict = Verdict::Mismatch {
            frame: 2,
            what: "created: 1 pairs, expected 2".to_string(),
        };
        let rows = rows(&opts, &results);
        assert_eq!(rows[0].pairs, 40 * 39 / 2);

        let table = report(&opts, &results, Format::Table);
        assert!(
            table.contains("yes (4 frames)") && table.contains("NO: frame 2"),
            "{table}"
        );

        let json: serde_json::Value =
            serde_json::from_str(&report(&opts, &results, Format::Json)).unwrap();
        assert_eq!(json["scene"], "pile");
        assert_eq!(json["seed"], 2);
        assert_eq!(json["vary"], "");
        assert_eq!(
            (json["boxes"].as_u64(), json["frames"].as_u64()),
            (Some(40), Some(3))
        );
        let json_rows = json["rows"].as_array().unwrap();
        assert_eq!(json_rows.len(), 2);
        for (j, r) in json_rows.iter().zip(&rows) {
            assert_eq!(j.as_object().unwrap().len(), Row::COLUMNS.len());
            assert_eq!(j["algorithm"], r.algorithm.as_str());
            assert_eq!(j["pairs"].as_u64(), Some(r.pairs as u64));
            assert_eq!(j["frame_ms_median"].as_f64(), Some(r.frame_ms_median));
            assert_eq!(j["verified"], r.verified.as_str());
        }

        let csv = report(&opts, &results, Format::Csv);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        assert_eq!(lines[0], Row::COLUMNS.join(","));
        assert!(lines[1].starts_with("Abp,"), "{csv}");
        assert!(lines[1].ends_with(",780,0,0,yes (4 frames)"), "{csv}");
        // The mismatch holds a comma: quoted.
        assert!(
            lines[2].ends_with(",\"NO: frame 2: created: 1 pairs, expected 2\""),
            "{csv}"
        );
    }

    #[test]
    fn sampled_verification_survives_churn() {
        // Above the every-frame limit, the oracle skips updates and recycles slots later than
        // the algorithms: objects are compared by name, not id.
        let opts = RunOptions {
            scene: SceneKind::Churn,
            n: VERIFY_ALL_UP_TO + 1_000,
            frames: 6,
            seed: 5,
            vary: Variation::default(),
            algorithms: vec![Algorithm::Abp],
            gpu: false,
            samples: 2,
            progress: false,
            verify: true,
            file: None,
        };
        let results = run(&opts).unwrap();
        assert!(
            matches!(results[0].verdict, Verdict::Verified { .. }),
            "{:?}",
            results[0].verdict
        );
    }

    #[test]
    fn verified_frames_cover_build_and_samples() {
        assert_eq!(verified_frames(100, 3, 2), vec![0, 1, 2, 3]);
        assert_eq!(verified_frames(50_000, 100, 3), vec![0, 1, 33, 66, 100]);
    }

    #[test]
    fn a_small_run_verifies_every_algorithm() {
        for scene in [SceneKind::Uniform, SceneKind::Sleeping, SceneKind::Churn] {
            let opts = RunOptions {
                scene,
                n: 600,
                frames: 5,
                seed: 3,
                vary: Variation::default(),
                algorithms: Algorithm::ALL.to_vec(),
                gpu: false,
                samples: 2,
                progress: false,
                verify: true,
                file: None,
            };
            let results = run(&opts).unwrap();
            for r in &results {
                assert_eq!(r.verdict, Verdict::Verified { frames: 6 }, "{scene} {r:?}");
                assert_eq!(r.frame_ms.len(), 5);
            }
            assert!(table(&opts, &results).contains("yes (6 frames)"));
        }
    }
}
