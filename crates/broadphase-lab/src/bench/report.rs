//! The results of a bench run as files: `results.json` (everything, to read back with
//! serde), `results.csv` (one row per cell and contender) and `results.md` (the tables).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::bench::{BenchError, BenchOptions, BenchReport, CellResult, ContenderResult};

/// The best peer of a cell's scene and size: the fastest (lowest median) peer in the cell of
/// that scene and size where the peers ran, as `(name, median ms per frame)`.
pub fn best_peer<'a>(report: &'a BenchReport, cell: &CellResult) -> Option<(&'a str, f64)> {
    report
        .cells
        .iter()
        .filter(|c| c.scene == cell.scene && c.n == cell.n)
        .flat_map(|c| c.contenders.iter().filter(|k| k.peer))
        .map(|k| (k.name.as_str(), k.frame_ms.median))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// A contender's median over the best peer's (below 1: faster than every peer).
pub fn ratio(report: &BenchReport, cell: &CellResult, contender: &ContenderResult) -> Option<f64> {
    best_peer(report, cell)
        .filter(|&(_, ms)| ms > 0.0)
        .map(|(_, ms)| contender.frame_ms.median / ms)
}

/// The report as pretty JSON.
///
/// # Errors
/// [`BenchError::Json`] (not expected: every field serialises).
pub fn json(report: &BenchReport) -> Result<String, BenchError> {
    serde_json::to_string_pretty(report).map_err(BenchError::Json)
}

/// The report read back from [`json`]'s text.
///
/// # Errors
/// [`BenchError::Json`] when the text is not a report.
pub fn from_json(text: &str) -> Result<BenchReport, BenchError> {
    serde_json::from_str(text).map_err(BenchError::Json)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(String::new, |v| format!("{v:.digits$}"))
}

/// Whether `k` ran out of its budget before the end of its rounds. Reports written before
/// the budget existed say 0 frames: they ran every frame.
fn cut_short(o: &BenchOptions, k: &ContenderResult) -> bool {
    k.timed_frames > 0 && k.timed_frames < o.frames * o.repeats
}

/// One row per cell and contender, with a header.
pub fn csv(report: &BenchReport) -> String {
    let mut out = String::from(
        "scene,n,threads,pairs,contender,peer,median_ms,min_ms,max_ms,q1_ms,q3_ms,build_ms,\
         ratio_to_best_peer,steady_bytes,peak_bytes,steady_per_proxy,peak_per_proxy,\
         steady_per_pair,peak_per_pair,timed_frames\n",
    );
    for cell in &report.cells {
        for k in &cell.contenders {
            let s = &k.frame_ms;
            let m = k.memory.as_ref();
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.3},{},{},{},{},{},{},{},{}",
                cell.scene,
                cell.n,
                cell.threads,
                cell.pairs,
                k.name,
                k.peer,
                s.median,
                s.min,
                s.max,
                s.q1,
                s.q3,
                k.build_ms,
                opt(ratio(report, cell, k), 4),
                m.map_or_else(String::new, |m| m.steady_bytes.to_string()),
                m.map_or_else(String::new, |m| m.peak_bytes.to_string()),
                opt(m.map(|m| m.steady_per_proxy), 2),
                opt(m.map(|m| m.peak_per_proxy), 2),
                opt(m.and_then(|m| m.steady_per_pair), 2),
                opt(m.and_then(|m| m.peak_per_pair), 2),
                k.timed_frames,
            );
        }
    }
    out
}

/// `10k`, `1m`, or the plain number.
pub fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}m", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

/// Every contender name in the report, in order of first appearance.
pub fn contender_names(report: &BenchReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for k in report.cells.iter().flat_map(|c| &c.contenders) {
        if !names.contains(&k.name) {
            names.push(k.name.clone());
        }
    }
    names
}

/// A markdown table: a header row, then `rows`.
pub(crate) fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = line(header);
    out += &line(&header.iter().map(|_| "---".to_string()).collect::<Vec<_>>());
    for r in rows {
        out += &line(r);
    }
    out
}

/// A time in milliseconds with three significant digits or so.
pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The date (UTC, `YYYY-MM-DD`) of a time in seconds since 1970.
pub fn date(unix_time: u64) -> String {
    // Howard Hinnant's days-to-civil conversion, for the proleptic Gregorian calendar.
    let z = (unix_time / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// One line of the summary: a scene and size, our fastest algorithm and the fastest peer in
/// the cell with the fewest threads, and the ratio of the two.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The scene.
    pub scene: String,
    /// Boxes.
    pub n: usize,
    /// Threads of the cell.
    pub threads: usize,
    /// Our fastest algorithm and its median ms per frame.
    pub ours: (String, f64),
    /// The fastest peer and its median ms per frame.
    pub peer: (String, f64),
}

impl SummaryRow {
    /// Our best over the best peer's (below 1: faster than every peer).
    pub fn ratio(&self) -> f64 {
        self.ours.1 / self.peer.1
    }
}

/// The summary of a run with peers: one row per scene and size where the peers ran.
pub fn summary(report: &BenchReport) -> Vec<SummaryRow> {
    report
        .cells
        .iter()
        .filter_map(|c| {
            let peer = c
                .contenders
                .iter()
                .filter(|k| k.peer)
                .min_by(|a, b| a.frame_ms.median.total_cmp(&b.frame_ms.median))?;
            let ours = c
                .contenders
                .iter()
                .filter(|k| !k.peer)
                .min_by(|a, b| a.frame_ms.median.total_cmp(&b.frame_ms.median))?;
            (peer.frame_ms.median > 0.0).then(|| SummaryRow {
                scene: c.scene.clone(),
                n: c.n,
                threads: c.threads,
                ours: (ours.name.clone(), ours.frame_ms.median),
                peer: (peer.name.clone(), peer.frame_ms.median),
            })
        })
        .collect()
}

/// The summary as a markdown table.
pub fn summary_table(rows: &[SummaryRow]) -> String {
    let header: Vec<String> = [
        "scene",
        "boxes",
        "our best (ms/frame)",
        "best peer (ms/frame)",
        "ours / peer",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.scene.clone(),
                size_label(r.n),
                format!("{} {}", r.ours.0, ms(r.ours.1)),
                format!("{} {}", r.peer.0, ms(r.peer.1)),
                format!("{:.2}", r.ratio()),
            ]
        })
        .collect();
    table(&header, &body)
}

/// One line of the table of `Auto` against our other algorithms: a cell, `Auto`'s median,
/// the fastest of the others, and what `Auto` ran on.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoRow {
    /// The scene.
    pub scene: String,
    /// Boxes.
    pub n: usize,
    /// Threads of the cell.
    pub threads: usize,
    /// `Auto`'s median ms per frame (switch frames included).
    pub auto_ms: f64,
    /// Our fastest other algorithm and its median ms per frame.
    pub best: (String, f64),
    /// What `Auto` ran on at the end, why, and its switches.
    pub note: String,
}

impl AutoRow {
    /// `Auto`'s frame over the best of the others' (1.2 is the goal's bound).
    pub fn ratio(&self) -> f64 {
        self.auto_ms / self.best.1
    }
}

/// `Auto` against the fastest of our other algorithms, in every cell where both ran.
pub fn auto_rows(report: &BenchReport) -> Vec<AutoRow> {
    report
        .cells
        .iter()
        .filter_map(|c| {
            let auto = c.contenders.iter().find(|k| !k.peer && k.name == "auto")?;
            let best = c
                .contenders
                .iter()
                .filter(|k| !k.peer && k.name != "auto" && k.name != "gpugrid")
                .min_by(|a, b| a.frame_ms.median.total_cmp(&b.frame_ms.median))?;
            (best.frame_ms.median > 0.0).then(|| AutoRow {
                scene: c.scene.clone(),
                n: c.n,
                threads: c.threads,
                auto_ms: auto.frame_ms.median,
                best: (best.name.clone(), best.frame_ms.median),
                note: auto.note.clone().unwrap_or_default(),
            })
        })
        .collect()
}

/// The table of [`auto_rows`], as markdown.
pub fn auto_table(rows: &[AutoRow]) -> String {
    let header: Vec<String> = [
        "scene",
        "boxes",
        "threads",
        "auto (ms/frame)",
        "best other (ms/frame)",
        "auto / best",
        "auto ran on",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.scene.clone(),
                size_label(r.n),
                r.threads.to_string(),
                ms(r.auto_ms),
                format!("{} {}", r.best.0, ms(r.best.1)),
                format!("{:.2}", r.ratio()),
                r.note.clone(),
            ]
        })
        .collect();
    table(&header, &body)
}

/// The range of the summary's ratios, as `(lowest, highest)`.
pub fn ratio_range(rows: &[SummaryRow]) -> Option<(f64, f64)> {
    let ratios = rows.iter().map(SummaryRow::ratio);
    let lo = ratios.clone().min_by(f64::total_cmp)?;
    let hi = ratios.max_by(f64::total_cmp)?;
    Some((lo, hi))
}

/// Where the run was made: the machine, the date and the command.
fn provenance(report: &BenchReport) -> String {
    format!(
        "Made on {} by `{}` on {} ({} cores, {}).",
        date(report.unix_time),
        report.command,
        report.cpu,
        report.cores,
        report.platform
    )
}

/// The run as a markdown document: where and how it was made, the summary against the best
/// peer, the charts (linked from `charts`, the folder holding them as seen from where the
/// document is written), frame times with ratios to the best peer, then memory.
pub fn markdown(report: &BenchReport) -> String {
    markdown_with_charts(report, None)
}

/// [`markdown`], with the charts linked from `charts` (none when `None`).
pub fn markdown_with_charts(report: &BenchReport, charts: Option<&str>) -> String {
    let o = &report.options;
    let mut out = format!(
        "# Performance\n\nEvery figure here comes from one `bplab bench` run. {}\n\n\
         {} matrix · seed {}{} · {} frames × {} rounds (after {} warm-up frames).\n\n",
        provenance(report),
        o.preset,
        o.seed,
        if o.vary.is_standard() {
            String::new()
        } else {
            format!(" · scenes varied: {}", o.vary)
        },
        o.frames,
        o.repeats,
        o.warmup
    );
    let best = summary(report);
    if !best.is_empty() {
        out += "## Against the best peer\n\nFor each scene and size, the fastest of our \
                algorithms and the fastest peer (median milliseconds per frame, on the fewest \
                threads of the run).\n\n";
        out += &summary_table(&best);
        out += "\n";
    }
    let auto = auto_rows(report);
    if !auto.is_empty() {
        let within = auto.iter().filter(|r| r.ratio() <= 1.2).count();
        let _ = write!(
            out,
            "## Auto against our best\n\n`Auto` (the default) against the fastest of our other \
             algorithms in each cell, switch frames included, and what it ran on at the end: \
             within 1.2× of the best in {within} of {} cells.\n\n",
            auto.len()
        );
        out += &auto_table(&auto);
        out += "\n";
    }
    if let Some(dir) = charts {
        out += "## Charts\n\n";
        for (name, what) in [
            (crate::bench::plot::SCENES, "frame time per scene"),
            (crate::bench::plot::FRAME_TIME, "frame time against boxes"),
            (crate::bench::plot::MEMORY, "memory per box"),
        ] {
            let _ = writeln!(out, "![{what}]({dir}/{name})\n");
        }
    }
    out += "## Frame times\n\n";
    out += "Milliseconds per frame: the median round ± half its min–max spread; ×r is the \
            median over the best peer's for the same scene and size (below 1 is faster). \
            Peers are single-threaded and run in the cell with the fewest threads. Every \
            contender's pairs were checked against the first algorithm's.";
    if report
        .cells
        .iter()
        .any(|c| c.contenders.iter().any(|k| cut_short(o, k)))
    {
        let _ = write!(
            out,
            " A figure marked (n frames) is a contender that used its {} s of timed frames in \
             the cell before the end of its rounds: it ran no further frame there, its figure \
             is over the frames it ran, and its pairs were checked on the verification pass \
             only.",
            o.budget_s
        );
    }
    out += "\n\n";
    let names = contender_names(report);
    let mut header: Vec<String> = ["scene", "boxes", "threads", "pairs"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(names.iter().cloned());
    let mut times = rows(report, &names, |c, k| {
        let s = &k.frame_ms;
        let mut text = format!("{} ± {}", ms(s.median), ms((s.max - s.min) / 2.0));
        if let (false, Some(r)) = (k.peer, ratio(report, c, k)) {
            let _ = write!(text, " ×{r:.2}");
        }
        if cut_short(o, k) {
            let plural = if k.timed_frames == 1 { "" } else { "s" };
            let _ = write!(text, " ({} frame{plural})", k.timed_frames);
        }
        text
    });
    for (row, c) in times.iter_mut().zip(&report.cells) {
        row.push(best_peer(report, c).map_or_else(String::new, |(n, _)| n.to_string()));
    }
    let mut time_header = header.clone();
    time_header.push("best peer".to_string());
    out += &table(&time_header, &times);
    let rest = rest_rows(report, &names);
    if !rest.is_empty() {
        out += "\n## At rest against moving\n\nEach contender's frame on `resting` (a lattice \
                of touching unit cubes, every box set to the box it has each frame) over its \
                frame on `grid` (as many unit cubes on a lattice, every one moving), at the \
                same size and threads: what an engine that reports its bodies at rest pays for \
                them, against a frame in which they move (grid's lattice is sparser, so its \
                frame is the cheaper of the two moving lattices).\n\n";
        let mut header = vec!["boxes".to_string(), "threads".to_string()];
        header.extend(names.iter().cloned());
        out += &table(&header, &rest);
    }
    let scaling = scaling_rows(report);
    if !scaling.is_empty() {
        out += "\n## Frame time against boxes\n\nMedian milliseconds per frame at each size, \
                on the fewest threads of the run. `static_world` keeps 2,000 dynamic boxes from \
                4,000 boxes up and adds fixed ones: a frame that follows the dynamic count stays \
                level along its rows.\n\n";
        let mut header = vec!["scene".to_string(), "contender".to_string()];
        header.extend(scaling_sizes(report).iter().map(|&n| size_label(n)));
        out += &table(&header, &scaling);
    }
    if report.memory_measured {
        out += "\n## Memory\n\nBytes per box: steady (after the last timed frame) / peak, from a \
                counting allocator. The ids `insert_batch` returns count; the bench's own lists \
                that a contender holds (its map from proxies to scene indices, the batches a \
                frame is handed over in, a peer's copy of the pair filter) do not.\n\n";
        let memory = rows(report, &names, |_, k| {
            k.memory.as_ref().map_or_else(String::new, |m| {
                format!("{:.0} / {:.0}", m.steady_per_proxy, m.peak_per_proxy)
            })
        });
        out += &table(&header, &memory);
        out += "\nThe same bytes per pair (steady / peak), where the scene has pairs.\n\n";
        let per_pair = rows(report, &names, |_, k| {
            k.memory
                .as_ref()
                .and_then(|m| {
                    Some(format!(
                        "{:.0} / {:.0}",
                        m.steady_per_pair?, m.peak_per_pair?
                    ))
                })
                .unwrap_or_default()
        });
        out += &table(&header, &per_pair);
    }
    out
}

/// Every size of the report, smallest first.
fn scaling_sizes(report: &BenchReport) -> Vec<usize> {
    let mut sizes: Vec<usize> = report.cells.iter().map(|c| c.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// For each scene run at more than one size, one row per contender: its median at each size
/// (empty where it did not run), from the cells with the fewest threads of that scene.
fn scaling_rows(report: &BenchReport) -> Vec<Vec<String>> {
    let sizes = scaling_sizes(report);
    if sizes.len() < 2 {
        return Vec::new();
    }
    let names = contender_names(report);
    let mut scenes: Vec<&str> = Vec::new();
    for c in &report.cells {
        if !scenes.contains(&c.scene.as_str()) {
            scenes.push(&c.scene);
        }
    }
    let mut out = Vec::new();
    for scene in scenes {
        let cells: Vec<&CellResult> = report.cells.iter().filter(|c| c.scene == scene).collect();
        let Some(threads) = cells.iter().map(|c| c.threads).min() else {
            continue;
        };
        let at = |n: usize| cells.iter().find(|c| c.n == n && c.threads == threads);
        if sizes.iter().filter(|&&n| at(n).is_some()).count() < 2 {
            continue;
        }
        for name in &names {
            let mut row = vec![scene.to_string(), name.clone()];
            row.extend(sizes.iter().map(|&n| {
                at(n)
                    .and_then(|c| c.contenders.iter().find(|k| &k.name == name))
                    .map_or_else(String::new, |k| ms(k.frame_ms.median))
            }));
            out.push(row);
        }
    }
    out
}

/// For each size and thread count where both `resting` and `grid` ran, one row: each of
/// `names`' resting frame over its grid frame, with the two medians (empty where it did not
/// run both).
fn rest_rows(report: &BenchReport, names: &[String]) -> Vec<Vec<String>> {
    let find = |scene: &str, n: usize, threads: usize| {
        report
            .cells
            .iter()
            .find(|c| c.scene == scene && c.n == n && c.threads == threads)
    };
    report
        .cells
        .iter()
        .filter(|c| c.scene == "resting")
        .filter_map(|rest| {
            let moving = find("grid", rest.n, rest.threads)?;
            let mut row = vec![size_label(rest.n), rest.threads.to_string()];
            row.extend(names.iter().map(|name| {
                let median = |c: &CellResult| {
                    c.contenders
                        .iter()
                        .find(|k| &k.name == name)
                        .map(|k| k.frame_ms.median)
                };
                match (median(rest), median(moving)) {
                    (Some(r), Some(m)) if m > 0.0 => {
                        format!("{:.2} ({} / {})", r / m, ms(r), ms(m))
                    }
                    _ => String::new(),
                }
            }));
            Some(row)
        })
        .collect()
}

/// One row per cell: the cell's scene, size, threads and pairs, then `entry` for each
/// contender of `names` (empty where it did not run).
fn rows(
    report: &BenchReport,
    names: &[String],
    entry: impl Fn(&CellResult, &ContenderResult) -> String,
) -> Vec<Vec<String>> {
    report
        .cells
        .iter()
        .map(|c| {
            let mut row = vec![
                c.scene.clone(),
                size_label(c.n),
                c.threads.to_string(),
                c.pairs.to_string(),
            ];
            for name in names {
                let k = c.contenders.iter().find(|k| &k.name == name);
                row.push(k.map_or_else(String::new, |k| entry(c, k)));
            }
            row
        })
        .collect()
}

/// The files a run writes into its output folder.
pub const FILES: &[&str] = &[
    "results.json",
    "results.csv",
    "results.md",
    crate::bench::plot::FRAME_TIME,
    crate::bench::plot::SCENES,
    crate::bench::plot::MEMORY,
];

/// Writes `text` into `dir/name`; returns the path.
pub(crate) fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, BenchError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|error| BenchError::Write {
        path: path.clone(),
        error,
    })?;
    Ok(path)
}

/// Writes the results and the charts into `dir` (created if missing); returns the files
/// written.
///
/// # Errors
/// [`BenchError::Write`] when a file cannot be written; [`BenchError::Plot`].
pub fn write_all(report: &BenchReport, dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    std::fs::create_dir_all(dir).map_err(|error| BenchError::Write {
        path: dir.to_path_buf(),
        error,
    })?;
    let mut out = vec![
        write(dir, "results.json", &json(report)?)?,
        write(dir, "results.csv", &csv(report))?,
        write(dir, "results.md", &markdown(report))?,
    ];
    for (name, svg) in crate::bench::plot::charts(report)? {
        out.push(write(dir, name, &svg)?);
    }
    Ok(out)
}
