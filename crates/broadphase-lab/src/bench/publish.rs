//! `bplab bench --publish ROOT`: one run becomes the project's published figures.
//!
//! The run's files and charts go to `ROOT/docs/bench/`, the whole report (with the charts) to
//! `ROOT/docs/PERFORMANCE.md`, and the front page's summary sentence and table are rewritten in
//! `ROOT/README.md` between its markers:
//!
//! ```text
//! <!-- bench-summary -->...<!-- /bench-summary -->
//! <!-- bench-table -->
//! ...
//! <!-- /bench-table -->
//! ```
//!
//! Everything else in the README is left as it is, so the figures a reader sees on the front
//! page and in the docs always come from one run, and regenerating them is one command.

use std::path::{Path, PathBuf};

use crate::bench::report::{self, SummaryRow};
use crate::bench::{BenchError, BenchReport, PeerKind};

/// The folder, under the root, of the run's files and charts.
pub const BENCH_DIR: &str = "docs/bench";
/// The document, under the root, of the whole run.
pub const PERFORMANCE: &str = "docs/PERFORMANCE.md";
/// The front page, under the root.
pub const README: &str = "README.md";

/// The two marked regions of the README.
const SUMMARY: (&str, &str) = ("<!-- bench-summary -->", "<!-- /bench-summary -->");
const TABLE: (&str, &str) = ("<!-- bench-table -->", "<!-- /bench-table -->");

/// Checks, before a run, that `root` holds a README with both marked regions, so that an hour
/// of benchmarking does not end in a file it cannot update.
///
/// # Errors
/// [`BenchError::Options`] naming the file or the missing marker.
pub fn check_root(root: &Path) -> Result<(), BenchError> {
    let path = root.join(README);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        BenchError::Options(format!("--publish: cannot read {}: {e}", path.display()))
    })?;
    for (open, close) in [SUMMARY, TABLE] {
        replace_between(&text, open, close, "").ok_or_else(|| {
            BenchError::Options(format!(
                "--publish: {} has no {open} ... {close} region",
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// `text` with what lies between `open` and the next `close` replaced by `with`; `None` when
/// either marker is missing or they are out of order.
pub fn replace_between(text: &str, open: &str, close: &str, with: &str) -> Option<String> {
    let start = text.find(open)? + open.len();
    let end = start + text[start..].find(close)?;
    Some(format!("{}{with}{}", &text[..start], &text[end..]))
}

/// The peers a run timed, in words: "parry3d's BVH, in rapier's mode or exact, or broccoli"
/// when all three ran.
fn peers_in_words(peers: &[PeerKind]) -> String {
    let rapier = peers.contains(&PeerKind::ParryRapier);
    let exact = peers.contains(&PeerKind::ParryExact);
    let mut words = Vec::new();
    match (rapier, exact) {
        (true, true) => words.push("parry3d's BVH, in rapier's mode or exact"),
        (true, false) => words.push("parry3d's BVH, in rapier's mode"),
        (false, true) => words.push("parry3d's BVH, exact"),
        (false, false) => {}
    }
    if peers.contains(&PeerKind::Broccoli) {
        words.push("broccoli");
    }
    words.join(", or ")
}

/// The summary sentence: how our best compares with the best of `peers` over the run's scenes.
pub fn summary_sentence(rows: &[SummaryRow], peers: &[PeerKind]) -> String {
    let Some((lo, hi)) = report::ratio_range(rows) else {
        return "Run `bplab bench` with the peers to compare.".to_string();
    };
    let mut ratios: Vec<f64> = rows.iter().map(SummaryRow::ratio).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let faster = ratios.iter().filter(|&&r| r < 1.0).count();
    let threads = rows.iter().map(|r| r.threads).min().unwrap_or(1);
    format!(
        "On the {} scenes and sizes of the `bplab bench` run below ({threads} thread{}), the \
         best of our algorithms took {median:.2}× the frame time of the fastest peer ({}) at \
         the median, {lo:.2}× to {hi:.2}× in all, and was the faster on {faster} of them.",
        rows.len(),
        if threads == 1 { "" } else { "s" },
        peers_in_words(peers),
    )
}

/// The README's table region: where the figures come from, the summary table and one chart.
pub fn readme_table(report: &BenchReport, rows: &[SummaryRow]) -> String {
    format!(
        "\nFrom one run of `{}` on {} ({} cores), {}. Median milliseconds per frame on the fewest \
         threads of the run; every contender's pairs were checked against ours in the same run. \
         The full run, with every algorithm, thread counts, spreads and memory: \
         `{PERFORMANCE}`.\n\n{}\n![frame time per scene]({BENCH_DIR}/{})\n\n",
        report.command,
        report.cpu,
        report.cores,
        report::date(report.unix_time),
        report::summary_table(rows),
        crate::bench::plot::SCENES,
    )
}

/// Writes the run's files into `ROOT/docs/bench/`, its document into `ROOT/docs/PERFORMANCE.md`
/// and its summary into `ROOT/README.md`'s marked regions; returns the files written.
///
/// # Errors
/// [`BenchError::Options`] when the README lacks its markers; [`BenchError::Write`] and
/// [`BenchError::Plot`] as [`report::write_all`].
pub fn publish(report: &BenchReport, root: &Path) -> Result<Vec<PathBuf>, BenchError> {
    check_root(root)?;
    let mut files = report::write_all(report, &root.join(BENCH_DIR))?;

    // PERFORMANCE.md sits in docs/, beside the bench folder.
    let charts = BENCH_DIR.trim_start_matches("docs/");
    let performance = root.join(PERFORMANCE);
    let mut document = report::markdown_with_charts(report, Some(charts));
    if report
        .options
        .algorithms
        .contains(&broadphase::Algorithm::Auto)
    {
        // Auto's other figure: a scene that changes character, phase by phase.
        let args = crate::phases::PhasesArgs::default();
        let runs = crate::phases::run(&args).map_err(BenchError::Options)?;
        document += "\n## A scene that changes character\n\nA level of fixed boxes, then a mass \
                     spawn, then most bodies asleep: what `Auto` runs on in each phase, against \
                     each algorithm it can run on.\n\n";
        document += &crate::phases::table(&args, &runs);
    }
    write(&performance, &document)?;
    files.push(performance);

    let readme = root.join(README);
    let text = std::fs::read_to_string(&readme).map_err(|error| BenchError::Write {
        path: readme.clone(),
        error,
    })?;
    let rows = report::summary(report);
    let missing = || BenchError::Options(format!("{} lost its markers", readme.display()));
    let sentence = summary_sentence(&rows, &report.options.peers);
    let text = replace_between(&text, SUMMARY.0, SUMMARY.1, &sentence).ok_or_else(missing)?;
    let text = replace_between(&text, TABLE.0, TABLE.1, &readme_table(report, &rows))
        .ok_or_else(missing)?;
    write(&readme, &text)?;
    files.push(readme);
    Ok(files)
}

fn write(path: &Path, text: &str) -> Result<(), BenchError> {
    std::fs::write(path, text).map_err(|error| BenchError::Write {
        path: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_between_the_markers() {
        let text = "a <!-- x -->old<!-- /x --> b <!-- x -->keep<!-- /x -->";
        assert_eq!(
            replace_between(text, "<!-- x -->", "<!-- /x -->", "new").as_deref(),
            Some("a <!-- x -->new<!-- /x --> b <!-- x -->keep<!-- /x -->")
        );
        assert_eq!(
            replace_between("<!-- /x --><!-- x -->", "<!-- x -->", "<!-- /x -->", ""),
            None
        );
        assert_eq!(
            replace_between("none", "<!-- x -->", "<!-- /x -->", ""),
            None
        );
    }

    #[test]
    fn the_summary_names_the_peers_that_ran() {
        use PeerKind::{Broccoli, ParryExact, ParryRapier};
        assert_eq!(
            peers_in_words(&[ParryRapier, ParryExact, Broccoli]),
            "parry3d's BVH, in rapier's mode or exact, or broccoli"
        );
        assert_eq!(
            peers_in_words(&[ParryExact, ParryRapier]),
            "parry3d's BVH, in rapier's mode or exact"
        );
        assert_eq!(
            peers_in_words(&[Broccoli, ParryExact]),
            "parry3d's BVH, exact, or broccoli"
        );
        assert_eq!(peers_in_words(&[Broccoli]), "broccoli");
    }

    #[test]
    fn a_root_without_markers_is_refused_before_the_run() {
        let dir = std::env::temp_dir().join(format!("bplab-publish-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(README), "# no markers\n").unwrap();
        let e = check_root(&dir).unwrap_err();
        assert!(
            matches!(e, BenchError::Options(ref m) if m.contains("bench-summary")),
            "{e}"
        );
        std::fs::write(
            dir.join(README),
            "<!-- bench-summary --><!-- /bench-summary -->\n<!-- bench-table -->\n<!-- /bench-table -->\n",
        )
        .unwrap();
        check_root(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(check_root(&dir).is_err(), "a missing README is refused");
    }
}
