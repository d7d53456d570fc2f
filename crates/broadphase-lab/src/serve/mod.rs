//! `bplab serve`: GPU Gems 3 chapter 32's interactive lab as a local web page.
//!
//! One page, embedded in the binary (nothing is fetched from the network), talks to a small
//! JSON API; the simulation runs here, with the library, one session per page. The API:
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /api/options` | scenes, strategies, schedules, caps, default settings |
//! | `POST /api/sessions` (settings) | 201, the new session's state |
//! | `GET /api/sessions/{id}` | its state: settings and the last frame's figures |
//! | `PUT /api/sessions/{id}` (settings) | the session rebuilt with new settings |
//! | `POST /api/sessions/{id}/step` (`{"frames": k}`) | the state after `k` more frames |
//! | `GET /api/sessions/{id}/view?plane=xy&max=2000` | the boxes projected on a plane |
//! | `GET /api/sessions/{id}/walkthrough` | the grid's last frame, stage by stage |
//! | `DELETE /api/sessions/{id}` | 204 |
//!
//! Bad requests get a 4xx and `{"error": "..."}`; the work of a request runs on a blocking
//! thread, so a slow frame holds up no other session.

pub mod api;
pub mod session;
pub mod view;
pub mod walk;

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Args;

use api::{parse_body, ApiError, OptionsJson, SettingsRequest, StateJson, StepRequest};
use session::{lock_session, Session, Sessions};
use view::ViewQuery;

/// The page, its script and its style, embedded in the binary.
const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const STYLE_CSS: &str = include_str!("page/style.css");

/// The port `bplab serve` listens on by default (chapter 32).
pub const DEFAULT_PORT: u16 = 8032;

/// `bplab serve`'s options.
#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    /// The port to listen on (0: any free port; the URL printed says which).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// The address to listen on. The default, 127.0.0.1, lets only this machine in; give
    /// another (such as 0.0.0.0) only to serve the lab to other machines, which can then run
    /// simulations here.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
}

/// The server's router: the page and the API over a fresh table of sessions.
pub fn router() -> Router {
    let sessions = Arc::new(Sessions::default());
    Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route(
            "/app.js",
            get(|| async { asset("text/javascript", APP_JS) }),
        )
        .route("/style.css", get(|| async { asset("text/css", STYLE_CSS) }))
        .route("/api/options", get(|| async { Json(OptionsJson::new()) }))
        .route("/api/sessions", post(create))
        .route("/api/sessions/{id}", get(state).put(reset).delete(remove))
        .route("/api/sessions/{id}/step", post(step))
        .route("/api/sessions/{id}/view", get(view_of))
        .route("/api/sessions/{id}/walkthrough", get(walkthrough))
        .fallback(|| async { ApiError::not_found("no such page or API route") })
        .with_state(sessions)
}

/// An embedded file with its type.
fn asset(kind: &'static str, text: &'static str) -> Response {
    let kind = format!("{kind}; charset=utf-8");
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}

/// The shared state of the handlers.
type Shared = State<Arc<Sessions>>;

/// Runs `work` on a blocking thread: the runtime's threads stay free for other requests.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the request's work failed: {e}")))?
}

/// A session id from the path: anything but a number names no session.
fn session_id(id: &str) -> Result<u64, ApiError> {
    id.parse()
        .map_err(|_| ApiError::not_found(format!("no session {id:?}: ids are numbers")))
}

/// Builds a session from a settings body (on a blocking thread: a large scene takes a while).
async fn build(sessions: &Arc<Sessions>, body: &[u8]) -> Result<Session, ApiError> {
    let settings = parse_body::<SettingsRequest>(body)?.validate()?;
    let pool = sessions.pool(settings.args.threads)?;
    blocking(move || Session::new(settings, pool)).await
}

async fn create(State(sessions): Shared, body: Bytes) -> Result<impl IntoResponse, ApiError> {
    let session = build(&sessions, &body).await?;
    let id = sessions.insert(session);
    let state = state_of(&sessions, id, Vec::new())?;
    Ok((StatusCode::CREATED, Json(state)))
}

/// The state of session `id`.
fn state_of(sessions: &Sessions, id: u64, frame_ms: Vec<f64>) -> Result<StateJson, ApiError> {
    let session = sessions.get(id)?;
    let s = lock_session(&session)?;
    Ok(s.state(id, frame_ms))
}

async fn state(
    State(sessions): Shared,
    Path(id): Path<String>,
) -> Result<Json<StateJson>, ApiError> {
    let id = session_id(&id)?;
    let session = sessions.get(id)?;
    blocking(move || Ok(lock_session(&session)?.state(id, Vec::new())))
        .await
        .map(Json)
}

async fn reset(
    State(sessions): Shared,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<StateJson>, ApiError> {
    let id = session_id(&id)?;
    sessions.get(id)?;
    let session = build(&sessions, &body).await?;
    sessions.replace(id, session)?;
    state_of(&sessions, id, Vec::new()).map(Json)
}

async fn remove(State(sessions): Shared, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let id = session_id(&id)?;
    if sessions.remove(id) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        sessions.get(id).map(|_| StatusCode::NO_CONTENT)
    }
}

async fn step(
    State(sessions): Shared,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<StateJson>, ApiError> {
    let id = session_id(&id)?;
    let frames = parse_body::<StepRequest>(&body)?.validate()?;
    let session = sessions.get(id)?;
    blocking(move || {
        let mut s = lock_session(&session)?;
        let times = s.step(frames)?;
        Ok(s.state(id, times))
    })
    .await
    .map(Json)
}

async fn view_of(
    State(sessions): Shared,
    Path(id): Path<String>,
    query: Result<Query<ViewQuery>, QueryRejection>,
) -> Result<Json<view::ViewJson>, ApiError> {
    let id = session_id(&id)?;
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let (axes, max) = query.validate()?;
    let session = sessions.get(id)?;
    blocking(move || view::view(lock_session(&session)?.stepper(), axes, max))
        .await
        .map(Json)
}

async fn walkthrough(
    State(sessions): Shared,
    Path(id): Path<String>,
) -> Result<Json<walk::WalkthroughJson>, ApiError> {
    let id = session_id(&id)?;
    let session = sessions.get(id)?;
    blocking(move || {
        walk::walkthrough(lock_session(&session)?.stepper()).ok_or(ApiError {
            status: StatusCode::CONFLICT,
            message: "the walkthrough follows the grid: set the strategy to grid".to_string(),
        })
    })
    .await
    .map(Json)
}

/// Serves the lab on `listener` until the process ends.
///
/// # Errors
/// When the runtime cannot start or the listener fails.
pub fn run(listener: TcpListener) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bplab-serve")
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, router()).await
    })
}

/// Serves the lab on `listener` from a thread of its own (for tests: bind `127.0.0.1:0` and
/// read the port from the listener); returns the address it listens on.
///
/// # Errors
/// When the listener's address cannot be read or the thread cannot start.
pub fn spawn(listener: TcpListener) -> std::io::Result<SocketAddr> {
    let addr = listener.local_addr()?;
    std::thread::Builder::new()
        .name("bplab-serve".to_string())
        .spawn(move || {
            if let Err(e) = run(listener) {
                eprintln!("bplab serve: {e}");
            }
        })?;
    Ok(addr)
}

/// `bplab serve`: binds, prints the URL and serves until interrupted.
pub fn command(args: &ServeArgs) -> ExitCode {
    let listener = match TcpListener::bind((args.bind, args.port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "bplab serve: cannot listen on {}:{}: {e}",
                args.bind, args.port
            );
            return ExitCode::FAILURE;
        }
    };
    let url = match listener.local_addr() {
        Ok(addr) => format!("http://{addr}/"),
        Err(e) => {
            eprintln!("bplab serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    if crate::output::print_or_fail(&format!(
        "bplab serve: the GPU Gems 3 lab at {url} (Ctrl-C stops it)\n"
    )) != ExitCode::SUCCESS
    {
        return ExitCode::FAILURE;
    }
    match run(listener) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bplab serve: {e}");
            ExitCode::FAILURE
        }
    }
}
