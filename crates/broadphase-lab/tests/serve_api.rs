//! `bplab serve`'s JSON API over a real socket: a good session, and every kind of bad request
//! answered with a 4xx and a message, the server still serving afterwards.

#![cfg(feature = "serve")]

mod common;

use broadphase_lab::lab::{Stepper, Strategy};
use broadphase_lab::scenes::SceneKind;
use common::{grid_args, request, start_server};

#[test]
fn a_session_steps_as_the_library_does() {
    let addr = start_server();
    let page = request(addr, "GET", "/", None).unwrap();
    assert_eq!(page.status, 200);
    assert!(page.body.contains("GPU Gems 3"));
    assert_eq!(request(addr, "GET", "/app.js", None).unwrap().status, 200);
    let options = request(addr, "GET", "/api/options", None).unwrap().json();
    assert_eq!(
        options["strategies"],
        serde_json::json!(["brute", "sweep", "grid"])
    );

    let settings = r#"{"scene": "clustered", "n": 1200, "strategy": "grid", "cell_size": 2.5,
        "radix_bits": 4, "schedule": "parity", "seed": 7}"#;
    let created = request(addr, "POST", "/api/sessions", Some(settings)).unwrap();
    assert_eq!(created.status, 201, "{}", created.body);
    let id = created.json()["id"].as_u64().unwrap();
    let stepped = request(
        addr,
        "POST",
        &format!("/api/sessions/{id}/step"),
        Some(r#"{"frames": 3}"#),
    )
    .unwrap();
    assert_eq!(stepped.status, 200, "{}", stepped.body);
    let state = stepped.json();
    assert_eq!(state["frame_ms"].as_array().map(Vec::len), Some(3));

    let args = grid_args(SceneKind::Clustered, 1200, 2.5, 4, 7);
    let mut stepper = Stepper::new(&args, Strategy::Grid).unwrap();
    for _ in 0..3 {
        stepper.step().unwrap();
    }
    let r = stepper.last();
    let f = &state["figures"];
    assert_eq!(f["frame"], 3);
    assert_eq!(f["pairs"], r.pairs);
    assert_eq!(f["candidate_pairs"], r.tests);
    assert_eq!(f["collision_cells"], r.collision_cells.unwrap());
    assert_eq!(f["radix_passes"], r.radix_passes.unwrap());

    // The walkthrough's stages add up to the grid's own figures.
    let walk = request(
        addr,
        "GET",
        &format!("/api/sessions/{id}/walkthrough"),
        None,
    )
    .unwrap()
    .json();
    let grid = &walk["grid"];
    assert_eq!(walk["cell_ids"], grid["cell_ids"]);
    assert_eq!(walk["home_cells"], 1200);
    assert_eq!(walk["collision_cells"], grid["collision_cells"]);
    let sum = |k: &str| -> u64 {
        walk["parity"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p[k].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        sum("candidate_pairs"),
        grid["candidate_pairs"].as_u64().unwrap()
    );
    assert_eq!(sum("pairs"), r.pairs);
    let passes = walk["passes"].as_array().unwrap();
    assert!(
        passes.len() >= 2
            && passes
                .iter()
                .all(|p| p["entries"].as_array().unwrap().len() <= 64)
    );

    let view = request(
        addr,
        "GET",
        &format!("/api/sessions/{id}/view?plane=xz&max=100"),
        None,
    )
    .unwrap()
    .json();
    assert_eq!(view["boxes"].as_array().map(Vec::len), Some(400));
    assert!(view["cells_total"].as_u64().unwrap() > 0);

    // Another strategy on the same session: the sweep has no walkthrough.
    let reset = request(
        addr,
        "PUT",
        &format!("/api/sessions/{id}"),
        Some(r#"{"strategy": "sweep", "n": 500}"#),
    )
    .unwrap();
    assert_eq!(reset.status, 200, "{}", reset.body);
    assert_eq!(reset.json()["figures"]["frame"], 0);
    let walk = request(
        addr,
        "GET",
        &format!("/api/sessions/{id}/walkthrough"),
        None,
    )
    .unwrap();
    assert_eq!(walk.status, 409);
    assert_eq!(
        request(addr, "DELETE", &format!("/api/sessions/{id}"), None)
            .unwrap()
            .status,
        204
    );
    assert_eq!(
        request(addr, "GET", &format!("/api/sessions/{id}"), None)
            .unwrap()
            .status,
        404
    );
}

#[test]
fn bad_requests_get_a_4xx_with_a_message() {
    let addr = start_server();
    let id = request(addr, "POST", "/api/sessions", Some(r#"{"n": 300}"#))
        .unwrap()
        .json()["id"]
        .as_u64()
        .unwrap();
    let cases: &[(&str, String, Option<&str>, u16, &str)] = &[
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"scene": "moon"}"#),
            400,
            "unknown scene",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"n": 5000000}"#),
            400,
            "n must be",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"strategy": "brute", "n": 50000}"#),
            400,
            "for brute",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"cell_size": -1}"#),
            400,
            "cell_size",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"n": -3}"#),
            400,
            "bad JSON",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"n": 3"#),
            400,
            "bad JSON",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"colour": 3}"#),
            400,
            "unknown field",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"radix_bits": 2}"#),
            400,
            "radix_bits",
        ),
        (
            "POST",
            "/api/sessions".into(),
            Some(r#"{"threads": 0}"#),
            400,
            "threads",
        ),
        (
            "POST",
            format!("/api/sessions/{id}/step"),
            Some(r#"{"frames": 1000}"#),
            400,
            "frames",
        ),
        (
            "GET",
            format!("/api/sessions/{id}/view?plane=uv"),
            None,
            400,
            "plane",
        ),
        (
            "GET",
            format!("/api/sessions/{id}/view?max=0"),
            None,
            400,
            "max",
        ),
        (
            "GET",
            "/api/sessions/999999".into(),
            None,
            404,
            "no session",
        ),
        (
            "GET",
            "/api/sessions/abc/view".into(),
            None,
            404,
            "no session",
        ),
        ("GET", "/api/nothing".into(), None, 404, "no such"),
    ];
    for (method, path, body, status, message) in cases {
        let r = request(addr, method, path, *body).unwrap();
        assert_eq!(r.status, *status, "{method} {path} {body:?}: {}", r.body);
        let error = r.json()["error"].as_str().unwrap_or_default().to_string();
        assert!(error.contains(message), "{method} {path}: {error}");
    }
    // Still serving.
    let stepped = request(addr, "POST", &format!("/api/sessions/{id}/step"), None).unwrap();
    assert_eq!(stepped.status, 200);
}

/// A slow request (brute force on many objects) holds up no other client.
#[test]
fn a_slow_session_does_not_block_another() {
    let addr = start_server();
    let slow = request(
        addr,
        "POST",
        "/api/sessions",
        Some(r#"{"strategy": "brute", "n": 12000}"#),
    )
    .unwrap()
    .json()["id"]
        .as_u64()
        .unwrap();
    let busy = std::thread::spawn(move || {
        request(
            addr,
            "POST",
            &format!("/api/sessions/{slow}/step"),
            Some(r#"{"frames": 5}"#),
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    let t = std::time::Instant::now();
    let quick = request(addr, "POST", "/api/sessions", Some(r#"{"n": 200}"#)).unwrap();
    assert_eq!(quick.status, 201);
    let quick_took = t.elapsed();
    let slow_result = busy.join().unwrap().unwrap();
    assert_eq!(slow_result.status, 200);
    assert!(
        quick_took * 2 < t.elapsed(),
        "the quick request took {quick_took:?}, as long as the slow one"
    );
}
