//! `bplab serve`'s page in headless Chromium, driven over the W3C WebDriver protocol by
//! chromedriver: load the page, change a control, step a frame, and check that the figures the
//! page shows change and equal what the library computes for the same settings.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install chromium chromium-driver`).
//! Without them the test prints why and passes, unless `BROADPHASE_REQUIRE_BROWSER=1`, when it
//! fails: CI sets it.

#![cfg(feature = "serve")]

mod common;

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use broadphase_lab::lab::{Stepper, Strategy};
use broadphase_lab::scenes::SceneKind;
use common::{grid_args, request, start_server};
use serde_json::{json, Value};

/// The first of `names` found in the `PATH` or at an absolute path.
fn find(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names.iter().find_map(|name| {
        let direct = PathBuf::from(name);
        if direct.is_absolute() {
            return direct.is_file().then_some(direct);
        }
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// chromedriver, killed when dropped.
struct Driver {
    child: Child,
    addr: SocketAddr,
    session: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = request(
                self.addr,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts chromedriver and a headless Chromium session.
    fn start(chromedriver: &PathBuf, chromium: &PathBuf, profile: &std::path::Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let mut driver = Driver {
            child,
            addr,
            session: String::new(),
        };
        wait_for("chromedriver to answer", Duration::from_secs(20), || {
            request(addr, "GET", "/status", None)
                .ok()
                .filter(|r| r.json()["value"]["ready"] == true)
        });
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1400,1100",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let created = driver.call("POST", "/session", Some(caps));
        driver.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        driver
    }

    /// A WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string());
        let r = request(self.addr, method, path, body.as_deref()).expect("chromedriver answers");
        let v = r.json();
        assert_eq!(r.status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    /// A command of the session.
    fn session(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// The element `#id`.
    fn element(&self, id: &str) -> String {
        let found = self.session(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": format!("#{id}")})),
        );
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no #{id}: {found}"))
            .to_string()
    }

    fn click(&self, id: &str) {
        let e = self.element(id);
        self.session("POST", &format!("/element/{e}/click"), Some(json!({})));
    }

    fn type_into(&self, id: &str, text: &str) {
        let e = self.element(id);
        self.session("POST", &format!("/element/{e}/clear"), Some(json!({})));
        self.session(
            "POST",
            &format!("/element/{e}/value"),
            Some(json!({"text": text})),
        );
    }

    fn text(&self, id: &str) -> String {
        let e = self.element(id);
        self.session("GET", &format!("/element/{e}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The page's figure `#fig-<name>` as a number (`None` for "-").
    fn figure(&self, name: &str) -> Option<u64> {
        self.text(&format!("fig-{name}"))
            .replace(',', "")
            .parse()
            .ok()
    }
}

/// Polls `probe` until it gives a value, or fails after `limit`.
fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_page_steps_and_shows_the_library_figures() {
    let required = std::env::var("BROADPHASE_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let chromium = find(&["chromium", "chromium-browser", "google-chrome"]);
    let chromedriver = find(&["chromedriver", "/usr/lib/chromium/chromedriver"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        assert!(
            !required,
            "BROADPHASE_REQUIRE_BROWSER=1 but chromium or chromedriver is missing \
             (Debian: apt-get install chromium chromium-driver)"
        );
        eprintln!("skipped: chromium or chromedriver not found (set BROADPHASE_REQUIRE_BROWSER=1 to fail instead)");
        return;
    };
    let started = Instant::now();
    let server = start_server();
    let profile = std::env::temp_dir().join(format!("bplab-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).expect("a profile directory");
    let driver = Driver::start(&chromedriver, &chromium, &profile);
    let long = Duration::from_secs(60);

    driver.session(
        "POST",
        "/url",
        Some(json!({"url": format!("http://{server}/")})),
    );
    // The page starts a session with its defaults: 3,000 objects.
    wait_for("the first session", long, || {
        (driver.figure("brute-force-pairs") == Some(3000 * 2999 / 2)).then_some(())
    });

    // Fewer objects and a cell size of our own, then one frame.
    driver.type_into("n", "1500");
    driver.type_into("cell-size", "3");
    driver.click("apply");
    wait_for("the new scene", long, || {
        (driver.figure("brute-force-pairs") == Some(1500 * 1499 / 2)
            && driver.text("fig-frame") == "0")
            .then_some(())
    });
    let before = driver.figure("candidate-pairs");
    driver.click("step");
    wait_for("frame 1", long, || {
        (driver.text("fig-frame") == "1").then_some(())
    });

    let args = grid_args(SceneKind::Uniform, 1500, 3.0, 8, 1);
    let mut stepper = Stepper::new(&args, Strategy::Grid).expect("the lab's grid");
    let frame0 = stepper.last().tests;
    let r = stepper.step().expect("a frame").clone();
    assert_eq!(before, Some(frame0), "frame 0's candidates");
    let (home, phantom) = r.cell_ids.unwrap_or_default();
    assert_eq!(driver.figure("pairs"), Some(r.pairs));
    assert_eq!(driver.figure("candidate-pairs"), Some(r.tests));
    assert_eq!(driver.figure("cell-ids"), Some(home + phantom));
    assert_eq!(driver.figure("home-cells"), Some(home));
    assert_eq!(driver.figure("collision-cells"), r.collision_cells);
    assert_eq!(driver.figure("radix-passes"), r.radix_passes);
    assert_ne!(Some(r.tests), before, "the frame changed the figures");

    // The walkthrough: guess, reveal, and the figure is the grid's.
    driver.click("walk-load");
    wait_for("the walkthrough", long, || {
        driver
            .session(
                "POST",
                "/elements",
                Some(json!({"using": "css selector", "value": "#reveal-collision-cells"})),
            )
            .as_array()
            .is_some_and(|a| !a.is_empty())
            .then_some(())
    });
    driver.type_into("guess-collision-cells", "100");
    driver.click("reveal-collision-cells");
    let shown = driver.text("walk-collision-cells").replace(',', "");
    assert_eq!(shown.parse::<u64>().ok(), r.collision_cells);
    assert!(driver.text("verdict-collision-cells").contains("off"));

    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
    eprintln!("browser test took {:.1} s", started.elapsed().as_secs_f64());
}
