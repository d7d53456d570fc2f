//! GpuGrid through `bplab` as a user runs it: `run --algo gpugrid` checked against
//! `BruteForce`, `bench --gpu`'s table in CI size, and the exit codes without a device or on a
//! software driver.
//!
//! The tests that need a device skip (with a message) where none answers, unless
//! `BROADPHASE_REQUIRE_GPU=1`, as CI sets on Mesa's software Vulkan driver.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `bplab` with `args`, and `WGPU_BACKEND=gl` when `no_device` (GL is not built in: no
/// adapter answers).
fn bplab(args: &[&str], no_device: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bplab"));
    cmd.args(args);
    if no_device {
        cmd.env("WGPU_BACKEND", "gl");
    }
    cmd.output().expect("bplab starts")
}

/// Runs `bplab` and checks its exit code; returns stdout and stderr.
fn expect(code: i32, args: &[&str], no_device: bool) -> (String, String) {
    let out = bplab(args, no_device);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(code),
        "bplab {args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

/// Whether a device answers; without one the test skips, unless `BROADPHASE_REQUIRE_GPU=1`.
fn device(test: &str) -> bool {
    if broadphase_lab::gpu::available() {
        return true;
    }
    let why = broadphase_lab::gpu::info().err().unwrap_or_default();
    assert!(
        std::env::var("BROADPHASE_REQUIRE_GPU").as_deref() != Ok("1"),
        "BROADPHASE_REQUIRE_GPU=1 and no device: {why}"
    );
    eprintln!("{test}: skipped, no device ({why})");
    false
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bplab-gpu-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

#[test]
fn gpugrid_asked_for_without_a_device_exits_1_and_says_why() {
    // Without the `gpu` feature the message says that instead; the code is the same.
    let (out, err) = expect(1, &["run", "--algo", "gpugrid", "--n", "50"], true);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("GpuGrid cannot run"), "{err}");
    let (_, err) = expect(1, &["bench", "--gpu", "--sizes", "1k"], true);
    assert!(err.contains("GpuGrid cannot be timed"), "{err}");
    if cfg!(feature = "gpu") {
        assert!(err.contains("no GPU adapter"), "{err}");
    }
    // A usage error is still a usage error.
    expect(2, &["run", "--algo", "gpugrid,nope"], true);
    expect(2, &["bench", "--allow-cpu-adapter"], false);
    expect(2, &["bench", "--gpu", "--quick"], false);
}

#[test]
fn run_checks_gpugrid_against_brute_force() {
    if !device("run_checks_gpugrid_against_brute_force") {
        return;
    }
    let args = [
        "run",
        "--algorithm",
        "gpugrid,grid",
        "--scene",
        "churn",
        "--n",
        "1500",
        "--frames",
        "4",
        "--no-progress",
    ];
    let (table, _) = expect(0, &args, false);
    let row = table
        .lines()
        .find(|l| l.starts_with("GpuGrid "))
        .unwrap_or_else(|| panic!("no GpuGrid row: {table}"));
    assert!(row.ends_with("yes (5 frames)"), "{table}");
    // With no --algo, GpuGrid runs beside every algorithm.
    let (all, _) = expect(0, &["run", "--n", "300", "--frames", "2"], false);
    assert!(all.contains("\nGpuGrid "), "{all}");
}

#[test]
fn bench_gpu_writes_the_table_and_refuses_a_software_driver() {
    if !device("bench_gpu_writes_the_table_and_refuses_a_software_driver") {
        return;
    }
    let dir = scratch("bench");
    let out = dir.to_str().expect("a UTF-8 path");
    let adapter = broadphase_lab::gpu::adapter().expect("a device answers");
    let mut args = vec![
        "bench",
        "--gpu",
        "--sizes",
        "20k",
        "--algos",
        "grid,sap",
        "--frames",
        "2",
        "--repeats",
        "2",
        "--verify-frames",
        "1",
        "--out",
        out,
        "--no-progress",
    ];
    if adapter.cpu {
        let (_, err) = expect(1, &args, false);
        assert!(err.contains("--allow-cpu-adapter"), "{err}");
        args.push("--allow-cpu-adapter");
    }
    let (stdout, stderr) = expect(0, &args, false);
    if adapter.cpu {
        assert!(stderr.contains("WARNING"), "{stderr}");
        assert!(stdout.contains("these are not GPU figures"), "{stdout}");
    }
    let md = std::fs::read_to_string(dir.join("gpu.md")).expect("gpu.md");
    assert!(stdout.starts_with(&md), "stdout:\n{stdout}\ngpu.md:\n{md}");
    let table: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 3, "{md}");
    assert_eq!(
        table[0],
        "| scene | boxes | pairs | GpuGrid ms/frame | best CPU | CPU ms/frame | CPU ÷ GpuGrid \
         | threads | adapter |"
    );
    let cells: Vec<&str> = table[2]
        .split('|')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells.len(), 9, "{}", table[2]);
    assert_eq!(cells[..2], ["uniform", "20k"], "{}", table[2]);
    assert!(
        cells[3].contains(" ± ") && cells[5].contains(" ± "),
        "{}",
        table[2]
    );
    assert!(["grid", "sap"].contains(&cells[4]), "{}", table[2]);
    assert!(cells[6].ends_with('×'), "{}", table[2]);
    assert_eq!(cells[8], adapter.label());

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("gpu.json")).expect("gpu.json"))
            .expect("gpu.json is JSON");
    assert_eq!(json["adapter"]["name"], adapter.name.as_str());
    assert_eq!(json["adapter"]["cpu"], adapter.cpu);
    let row = &json["rows"][0];
    assert_eq!(row["n"], 20_000);
    assert!(row["pairs"].as_u64() > Some(0), "{row}");
    assert!(row["gpu_ms"]["median"].as_f64() > Some(0.0), "{row}");
    assert_eq!(json["bench"]["cells"].as_array().map(Vec::len), Some(1));
    std::fs::remove_dir_all(&dir).expect("scratch folder removed");
}
