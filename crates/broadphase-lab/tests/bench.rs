//! `bplab bench` end to end on a tiny matrix: it runs, checks, measures memory through the
//! counting allocator and writes every file, and the JSON reads back.

use broadphase_lab::alloc::Counting;
use broadphase_lab::bench::{self, report, BenchError, BenchOptions, PeerKind};
use broadphase_lab::scenes::SceneKind;

#[global_allocator]
static ALLOC: Counting = Counting;

/// The memory figures come from one global counter: two benches at once would count each
/// other's bytes, so the tests that run one take this lock first.
static ONE_BENCH_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_BENCH_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tiny() -> BenchOptions {
    let mut o = BenchOptions::quick();
    o.sizes = vec![400];
    o.threads = vec![1, 2];
    o.frames = 2;
    o.repeats = 2;
    o.verify_frames = 3;
    o.progress = false;
    // GpuGrid has a test of its own below: these count the contenders without it.
    o.gpu = false;
    o
}

/// Steady bytes are what a contender holds after its last round: memory a round gives back
/// no longer counts, and what it held for a moment counts in the peak only.
#[test]
fn steady_memory_follows_the_rounds_and_the_peak_keeps_the_most() {
    use broadphase_lab::bench::memory::Meter;
    let _guard = one_at_a_time();
    let mut meter = Meter::start();
    let mut held: Vec<u8> = vec![1; 4 << 20];
    meter.step_end(0);
    let after_warm_up = meter.memory(1, 0).expect("counting").steady_bytes;
    assert!(after_warm_up.abs_diff(4 << 20) < 1 << 18, "{after_warm_up}");
    meter.round_start();
    held.truncate(1 << 20);
    held.shrink_to_fit();
    let moment: Vec<u8> = vec![2; 8 << 20];
    drop(std::hint::black_box(moment));
    meter.round_end(0);
    let m = meter.memory(1, 0).expect("counting");
    // Give or take a quarter of a megabyte that other tests' threads may allocate meanwhile.
    let gave_back = after_warm_up.abs_diff(m.steady_bytes);
    assert!(m.steady_bytes < after_warm_up && gave_back.abs_diff(3 << 20) < 1 << 18);
    // 4 MB held, 3 given back, then 8 for a moment.
    assert!(
        m.peak_bytes + (1 << 18) >= after_warm_up + (5 << 20),
        "{m:?}"
    );
    drop(held);
}

/// The bench's own lists a contender holds are left out of its figures, steady and peak,
/// as they were at the end of each step, and as they grow over a round.
#[test]
fn the_bench_s_own_bytes_are_left_out() {
    use broadphase_lab::bench::memory::Meter;
    let _guard = one_at_a_time();
    let mut meter = Meter::start();
    let held: Vec<u8> = vec![1; 4 << 20];
    let mut bench: Vec<u8> = vec![2; 2 << 20];
    meter.step_end(bench.capacity());
    let m = meter.memory(1, 0).expect("counting");
    // Give or take a quarter of a megabyte that other tests' threads may allocate meanwhile.
    assert!(m.steady_bytes.abs_diff(4 << 20) < 1 << 18, "{m:?}");
    assert!(m.peak_bytes.abs_diff(4 << 20) < 1 << 18, "{m:?}");
    meter.round_start();
    bench.reserve_exact(6 << 20);
    let grown = bench.capacity();
    meter.round_end(grown);
    let m = meter.memory(1, 0).expect("counting");
    assert!(m.steady_bytes.abs_diff(4 << 20) < 1 << 18, "{m:?}");
    // Growing the list may have held the old one and the new one at once for a moment (or
    // not: a large block can grow in place): at most the old one is counted.
    let slack = 1 << 18;
    assert!(
        m.peak_bytes + slack > 4 << 20 && m.peak_bytes < (6 << 20) + slack,
        "{m:?}"
    );
    drop((held, bench));
}

#[test]
fn a_contender_past_its_budget_runs_no_further_frame_in_the_cell() {
    let _guard = one_at_a_time();
    let mut opts = tiny();
    opts.scenes = vec![SceneKind::Uniform];
    opts.threads = vec![1];
    opts.frames = 3;
    opts.repeats = 2;
    // A budget every frame exceeds: one frame each, but the reference runs them all.
    opts.budget_s = 1e-12;
    let report = bench::run(&opts).unwrap();
    let cell = &report.cells[0];
    for (c, k) in cell.contenders.iter().enumerate() {
        let (frames, rounds) = if c == 0 { (6, 2) } else { (1, 1) };
        assert_eq!(k.timed_frames, frames, "{}", k.name);
        assert_eq!(k.round_ms.len(), rounds, "{}", k.name);
        assert!(k.frame_ms.median > 0.0, "{}", k.name);
    }
    let md = report::markdown(&report);
    assert!(md.contains("(1 frame)") && md.contains("checked on the verification pass only"));
    assert!(!md.contains("(6 frames)"), "the reference ran every frame");

    opts.budget_s = 0.0;
    assert!(bench::run(&opts).is_err(), "a budget of 0 s is refused");
}

#[test]
fn a_tiny_quick_matrix_runs_and_writes_every_file() {
    let _guard = one_at_a_time();
    let opts = tiny();
    let report = bench::run(&opts).unwrap();
    // 3 scenes × 1 size × 2 thread counts.
    assert_eq!(report.cells.len(), 6);
    let peers = PeerKind::available();
    for cell in &report.cells {
        let expected =
            bench::DEFAULT_ALGORITHMS.len() + if peers && cell.threads == 1 { 3 } else { 0 };
        assert_eq!(cell.contenders.len(), expected, "{}", cell.scene);
        assert!(cell.pairs > 0, "{}", cell.scene);
        for k in &cell.contenders {
            assert_eq!(k.round_ms.len(), 2);
            assert_eq!(k.timed_frames, 4, "{}", k.name);
            assert!(k.frame_ms.min <= k.frame_ms.median && k.frame_ms.median <= k.frame_ms.max);
            let m = k
                .memory
                .as_ref()
                .expect("the counting allocator is installed");
            assert!(
                m.steady_bytes > 0 && m.peak_bytes >= m.steady_bytes,
                "{}: {m:?}",
                k.name
            );
        }
    }
    assert!(report.memory_measured);
    // Auto runs by default and says what it ran on.
    let auto = report.cells[0]
        .contenders
        .iter()
        .find(|k| k.name == "auto")
        .expect("auto runs by default");
    assert!(auto.note.as_deref().is_some_and(|n| n.contains("switch")));

    let dir = std::env::temp_dir().join(format!("bplab-bench-test-{}", std::process::id()));
    let files = report::write_all(&report, &dir).unwrap();
    assert_eq!(files.len(), report::FILES.len());
    for name in report::FILES {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(!text.is_empty(), "{name}");
        if name.ends_with(".svg") {
            assert!(text.contains("<svg"), "{name}");
        }
    }
    let back = report::from_json(&std::fs::read_to_string(dir.join("results.json")).unwrap());
    assert_eq!(back.unwrap(), report);
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let rows: usize = report.cells.iter().map(|c| c.contenders.len()).sum();
    assert_eq!(csv.lines().count(), rows + 1);
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(md.contains("| uniform | 400 | 1 |"), "{md}");
    if peers {
        assert!(md.contains("parry_exact") && md.contains('×'), "{md}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With `resting` and `grid` at one size, the document sets each contender's resting frame
/// against its moving one.
#[test]
fn resting_is_set_against_the_moving_lattice() {
    let _guard = one_at_a_time();
    let mut opts = tiny();
    opts.scenes = vec![SceneKind::Resting, SceneKind::Grid];
    opts.threads = vec![1];
    let report = bench::run(&opts).unwrap();
    let md = report::markdown(&report);
    let section = md
        .split("## At rest against moving")
        .nth(1)
        .expect("a section of its own");
    let row = section
        .lines()
        .find(|l| l.starts_with("| 400 | 1 |"))
        .expect("a row for the size");
    let median = |scene: &str| {
        let cell = report.cells.iter().find(|c| c.scene == scene).unwrap();
        let abp = cell.contenders.iter().find(|k| k.name == "abp").unwrap();
        abp.frame_ms.median
    };
    let ratio = median("resting") / median("grid");
    assert!(row.contains(&format!("{ratio:.2} (")), "{row}");
}

#[test]
fn pile_is_capped_fixed_boxes_do_not_pair_and_bad_options_are_refused() {
    let _guard = one_at_a_time();
    let mut opts = tiny();
    // In static_world the peers must drop the pairs of two fixed boxes, as broadphase does.
    opts.scenes = vec![SceneKind::Pile, SceneKind::StaticWorld];
    opts.sizes = vec![30];
    opts.threads = vec![1];
    opts.repeats = 1;
    let report = bench::run(&opts).unwrap();
    assert_eq!(report.cells[0].pairs, 30 * 29 / 2);
    assert_eq!(report.cells.len(), 2);

    opts.sizes = vec![];
    assert!(matches!(bench::run(&opts), Err(BenchError::Options(_))));
}

#[test]
fn publish_writes_the_docs_and_rewrites_only_the_readme_regions() {
    let _guard = one_at_a_time();
    use broadphase_lab::bench::publish;
    let mut opts = tiny();
    opts.scenes = vec![SceneKind::Uniform];
    opts.sizes = vec![200, 400];
    opts.threads = vec![1];
    let report = bench::run(&opts).unwrap();

    let root = std::env::temp_dir().join(format!("bplab-publish-test-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let before = "# Title\n\nFast: <!-- bench-summary -->old<!-- /bench-summary -->\n\n\
                  <!-- bench-table -->\nold table\n<!-- /bench-table -->\n\n## After\n";
    std::fs::write(root.join(publish::README), before).unwrap();
    let files = publish::publish(&report, &root).unwrap();
    assert_eq!(files.len(), report::FILES.len() + 2);

    let readme = std::fs::read_to_string(root.join(publish::README)).unwrap();
    assert!(
        readme.starts_with("# Title\n\nFast: <!-- bench-summary -->"),
        "{readme}"
    );
    assert!(
        readme.ends_with("<!-- /bench-table -->\n\n## After\n"),
        "{readme}"
    );
    assert!(!readme.contains("old"), "{readme}");
    assert!(readme.contains("docs/bench/scenes.svg"), "{readme}");
    let performance = std::fs::read_to_string(root.join(publish::PERFORMANCE)).unwrap();
    assert!(performance.contains("(bench/scenes.svg)"), "{performance}");
    assert!(
        performance.contains("| uniform | 400 | 1 |"),
        "{performance}"
    );
    if PeerKind::available() {
        assert!(readme.contains("| uniform | 400 |"), "{readme}");
        assert!(
            performance.contains("## Against the best peer"),
            "{performance}"
        );
    }
    for name in report::FILES {
        assert!(root.join(publish::BENCH_DIR).join(name).is_file(), "{name}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn gpugrid_runs_and_is_checked_where_a_device_answers() {
    let _guard = one_at_a_time();
    let mut opts = tiny();
    opts.gpu = true;
    if !broadphase_lab::gpu::available() {
        // No device (or no `gpu` feature): asking for GpuGrid is a usage error.
        assert!(matches!(bench::run(&opts), Err(BenchError::Options(_))));
        return;
    }
    opts.scenes = vec![SceneKind::Uniform, SceneKind::Churn];
    opts.threads = vec![1, 2];
    let report = bench::run(&opts).unwrap();
    for cell in &report.cells {
        let runs = cell.contenders.iter().any(|k| k.name == "gpugrid");
        // Like the peers, it runs once per scene and size, in the cell with the fewest threads.
        assert_eq!(
            runs,
            cell.threads == 1,
            "{} on {} threads",
            cell.scene,
            cell.threads
        );
    }
}
