//! A minimal HTTP/1.1 client for the tests of `bplab serve` (and of the WebDriver that drives
//! the page): one request per connection, JSON in and out.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response: its status and its body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends `method path` with `body` (as JSON when given) to `addr` and reads the whole answer.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    // Read the head, then as much body as it announces: some servers (chromedriver) keep
    // the connection open despite `Connection: close`.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break raw.len();
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let length: Option<usize> = header("content-length").and_then(|v| v.parse().ok());
    let chunked = header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    match length {
        Some(len) => {
            while raw.len() < head_end + len {
                let n = stream.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                raw.extend_from_slice(&buf[..n]);
            }
        }
        None => {
            stream.read_to_end(&mut raw)?;
        }
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let rest = String::from_utf8_lossy(&raw[head_end..]).into_owned();
    let body = if chunked { unchunk(&rest) } else { rest };
    Ok(Response { status, body })
}

/// The body of a chunked response.
fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// Starts `bplab serve` on an ephemeral port of 127.0.0.1.
pub fn start_server() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    broadphase_lab::serve::spawn(listener).expect("start the server")
}

/// The lab's settings for the grid with the page's defaults but those given.
pub fn grid_args(
    scene: broadphase_lab::scenes::SceneKind,
    n: u32,
    cell_size: f32,
    radix_bits: u32,
    seed: u64,
) -> broadphase_lab::lab::LabArgs {
    use broadphase_lab::lab::{LabArgs, ScheduleArg, Strategy};
    LabArgs {
        n,
        strategy: vec![Strategy::Grid],
        cell_size: Some(cell_size),
        radix_bits,
        schedule: ScheduleArg::Parity,
        keep_cells: false,
        scene,
        frames: 1,
        seed,
        threads: None,
    }
}
