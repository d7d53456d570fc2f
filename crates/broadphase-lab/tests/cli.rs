//! `bplab` as a user runs it: exit codes, `--format`, scene descriptions, and traces recorded,
//! replayed and rejected.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `bplab` with `args`.
fn bplab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bplab"))
        .args(args)
        .output()
        .expect("bplab starts")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `bplab` with `args` and checks its exit code; returns its output.
fn expect(code: i32, args: &[&str]) -> Output {
    let out = bplab(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "bplab {args:?}\nstdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    out
}

/// The rows of a `bplab run` of every algorithm: each of `broadphase`'s, and GpuGrid where a
/// device answers.
fn every_algorithm() -> usize {
    broadphase::Algorithm::ALL.len() + usize::from(broadphase_lab::gpu::available())
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bplab-cli-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A trace with every kind of line: an arrival, a departure, a return and moves.
const TRACE: &str = include_str!("data/moves.scene");

#[test]
fn usage_errors_exit_2_and_say_what_is_allowed() {
    let dir = scratch("usage");
    let out = dir.join("x.svg");
    let out = out.to_str().unwrap();
    for (args, needle) in [
        (&["nonsense"][..], "unrecognized subcommand"),
        (&["run", "--bogus"], "unexpected argument"),
        (&["run", "--scene", "nope"], "unknown scene"),
        (&["run", "--frames", "0"], "--frames"),
        (
            &["run", "--format", "xml"],
            "possible values: table, json, csv",
        ),
        (&["run", "--threads", "0"], "thread count from 1 to"),
        (&["run", "--threads", "999"], "at most 256"),
        (&["lab", "--threads", "999"], "thread count from 1 to"),
        (&["lab", "--cell-size", "0"], "above 0"),
        (&["bench", "--threads", "2,999"], "or all"),
        (&["cells", "--cell-size=-1"], "above 0"),
        (&["cells", "--cell-size", "nan"], "above 0"),
        (
            &["cells", "--n", "50", "--level", "99", "--out", out],
            "level",
        ),
        (&["regions", "--outer=-5"], "0 or more"),
        (&["regions", "--outer", "inf"], "0 or more"),
        (
            &["run", "--scene-file", "/no/such/file.scene"],
            "file.scene",
        ),
        (&["record", "--frames", "3"], "--out"),
    ] {
        let got = expect(2, args);
        assert!(stderr(&got).contains(needle), "{args:?}: {}", stderr(&got));
        assert!(stdout(&got).is_empty(), "{args:?}: {}", stdout(&got));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_version_and_list_exit_0_and_describe_the_scenes() {
    expect(0, &["--version"]);
    let help = stdout(&expect(0, &["run", "--help"]));
    assert!(help.contains("Possible values:"), "{help}");
    assert!(help.contains("- churn: "), "{help}");
    assert!(
        help.contains("the uniform scene with 5% of the boxes removed"),
        "{help}"
    );
    assert!(help.contains("- csv:"), "{help}");
    let short = stdout(&expect(0, &["record", "-h"]));
    assert!(short.contains("uniform, sleeping, churn"), "{short}");
    let list = stdout(&expect(0, &["list"]));
    assert!(list.contains("static_world  a big level"), "{list}");
    assert!(
        list.contains("bplab-scene 2") && list.contains("remove <id>"),
        "{list}"
    );
}

#[test]
fn output_that_cannot_be_written_exits_1() {
    let missing = "/no/such/folder/out";
    let got = expect(
        1,
        &["record", "--n", "10", "--frames", "1", "--out", missing],
    );
    assert!(stderr(&got).contains("cannot write"), "{}", stderr(&got));
    expect(1, &["tree", "--n", "20", "--out", missing]);
}

#[test]
fn a_trace_replays_through_run_and_bad_ones_exit_2() {
    let dir = scratch("trace");
    let path = dir.join("moves.scene");
    std::fs::write(&path, TRACE).unwrap();
    let file = path.to_str().unwrap();

    let table = stdout(&expect(0, &["run", "--scene-file", file, "--no-progress"]));
    assert!(
        table.contains("scene from file · 4 boxes · 4 frames"),
        "{table}"
    );
    assert_eq!(
        table.matches("yes (5 frames)").count(),
        every_algorithm(),
        "{table}"
    );
    let fewer = stdout(&expect(0, &["run", "--scene-file", file, "--frames", "2"]));
    assert!(fewer.contains("yes (3 frames)"), "{fewer}");
    let more = expect(2, &["run", "--scene-file", file, "--frames", "5"]);
    assert!(stderr(&more).contains("more frames than the trace's 4"));

    for (text, needle) in [
        (
            TRACE.replace("remove 9", "remove 8"),
            "line 15: unknown id 8",
        ),
        (
            TRACE.replace("remove 9", "remove 0\nremove 0"),
            "line 16: id 0 is removed twice",
        ),
        (
            TRACE.replace("insert 9", "insert 1"),
            "line 8: id 1 is already in use",
        ),
        (
            TRACE.replace("4.5 0 5 5.5", "4.5 0 5 NaN"),
            "line 11: max y",
        ),
        (TRACE.replace("0 5 0 9 6 1", "0 5 0 9 4 1"), "line 6: box"),
        (
            TRACE.replace("bplab-scene 2", "bplab-scene 7"),
            "line 1: version \"7\"",
        ),
    ] {
        let bad = dir.join("bad.scene");
        std::fs::write(&bad, &text).unwrap();
        let got = expect(2, &["run", "--scene-file", bad.to_str().unwrap()]);
        assert!(stderr(&got).contains(needle), "{needle}: {}", stderr(&got));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rows of `bplab run ... --format json`, without the timings.
fn counts(args: &[&str]) -> Vec<(String, u64, f64, f64, String)> {
    let mut args = args.to_vec();
    args.extend(["--format", "json", "--no-progress"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&expect(0, &args))).unwrap();
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["algorithm"].as_str().unwrap().to_string(),
                r["pairs"].as_u64().unwrap(),
                r["created_per_frame"].as_f64().unwrap(),
                r["deleted_per_frame"].as_f64().unwrap(),
                r["verified"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_recorded_scene_replays_with_the_scene_s_pair_counts() {
    let dir = scratch("record");
    let path = dir.join("churn.scene");
    let file = path.to_str().unwrap();
    let said = stdout(&expect(
        0,
        &[
            "record", "--scene", "churn", "--n", "400", "--frames", "6", "--seed", "3", "--out",
            file,
        ],
    ));
    assert!(said.contains("6 frames of churn"), "{said}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("bplab-scene 2\n") && text.contains("\nremove "));

    let scene = &[
        "run", "--scene", "churn", "--n", "400", "--frames", "6", "--seed", "3",
    ];
    let generated = counts(scene);
    assert_eq!(generated.len(), every_algorithm());
    assert!(generated.iter().all(|r| r.1 > 0 && r.4 == "yes (7 frames)"));
    assert_eq!(counts(&["run", "--scene-file", file]), generated);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn csv_and_json_print_the_table_s_rows() {
    let args = [
        "run", "--scene", "pile", "--n", "30", "--frames", "2", "--algo", "abp,grid",
    ];
    let table = stdout(&expect(0, &args));
    assert!(table.contains("Abp") && table.contains("435"), "{table}");

    let mut csv_args = args.to_vec();
    csv_args.extend(["--format", "csv"]);
    let csv = stdout(&expect(0, &csv_args));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "algorithm,build_ms,frame_ms_median,frame_ms_p95,pairs,created_per_frame,\
         deleted_per_frame,verified"
    );
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[1].starts_with("Abp,") && lines[1].ends_with(",435,0,0,yes (3 frames)"));
    assert!(lines[2].starts_with("Grid,"), "{csv}");

    let rows = counts(&args);
    let want = |name: &str| {
        (
            name.to_string(),
            435,
            0.0,
            0.0,
            "yes (3 frames)".to_string(),
        )
    };
    assert_eq!(rows, vec![want("Abp"), want("Grid")]);
}

/// `bplab serve` listens on 127.0.0.1 unless told otherwise, and a bad port or address is a
/// usage error.
#[cfg(feature = "serve")]
#[test]
fn serve_says_where_it_listens_and_rejects_bad_addresses() {
    let help = stdout(&expect(0, &["serve", "--help"]));
    assert!(
        help.contains("127.0.0.1") && help.contains("--bind"),
        "{help}"
    );
    expect(2, &["serve", "--port", "70000"]);
    expect(2, &["serve", "--bind", "localhost.invalid"]);
}
