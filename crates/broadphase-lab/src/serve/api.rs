//! The JSON API's requests and responses, and the checks a request passes before anything
//! runs. A request that fails them gets a 4xx status and `{"error": "..."}` saying why.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::lab::{LabArgs, LabResult, ScheduleArg, Strategy};
use crate::scenes::SceneKind;

/// The most objects a session may hold.
pub const MAX_N: u32 = 200_000;

/// The most objects brute force may test, n(n-1)/2 pairs a frame: 20,000 take about 1.5 s a
/// frame on one core.
pub const MAX_BRUTE_N: u32 = 20_000;

/// The most frames one step request may run.
pub const MAX_STEP_FRAMES: u32 = 20;

/// An API error: its status and the message the client gets as `{"error": message}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status (4xx for the client's mistakes, 500 for the server's).
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// A 400 Bad Request with `message`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// A 404 Not Found with `message`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// A 500 Internal Server Error with `message`: a bug, never the client's input.
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl From<broadphase::Error> for ApiError {
    /// A setting the broad phase rejects is the client's mistake; anything else is a bug.
    fn from(e: broadphase::Error) -> Self {
        match e {
            broadphase::Error::InvalidParameter { .. } => Self::bad_request(e.to_string()),
            _ => Self::internal(e.to_string()),
        }
    }
}

/// The body of an error response.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: &self.message,
        };
        (self.status, Json(body)).into_response()
    }
}

/// Parses a JSON request body; an empty body is `T::default()`.
///
/// # Errors
/// A 400 naming what is wrong: malformed JSON, an unknown field, a value of the wrong type.
pub fn parse_body<T: for<'de> Deserialize<'de> + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))
}

/// The lab's settings as a client sends them (`POST /api/sessions`, `PUT
/// /api/sessions/{id}`); a missing field takes its default.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SettingsRequest {
    /// A scene name (`bplab list`).
    pub scene: String,
    /// Objects: 2 to [`MAX_N`] ([`MAX_BRUTE_N`] for brute force).
    pub n: u32,
    /// `brute`, `sweep` or `grid`.
    pub strategy: String,
    /// The grid's cell size, finite and above 0; `null` for the grid's own choice.
    pub cell_size: Option<f64>,
    /// Bits per radix digit, 4 to 16.
    pub radix_bits: u32,
    /// `parity` or `all`.
    pub schedule: String,
    /// Whether the grid keeps the sorted entries of boxes that stay in their cells.
    pub keep_cells: bool,
    /// Worker threads, 1 to 4 per core; `null` for one per core.
    pub threads: Option<u32>,
    /// The scene's seed.
    pub seed: u64,
}

impl Default for SettingsRequest {
    /// The chapter's first question, at a size a page redraws quickly: 3,000 objects on the
    /// grid with its eight parity passes.
    fn default() -> Self {
        Self {
            scene: SceneKind::Uniform.name().to_string(),
            n: 3_000,
            strategy: "grid".to_string(),
            cell_size: None,
            radix_bits: 8,
            schedule: "parity".to_string(),
            keep_cells: false,
            threads: None,
            seed: 1,
        }
    }
}

/// Settings that passed the checks.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The lab's knobs (one strategy, one frame at a time).
    pub args: LabArgs,
    /// The strategy the session runs.
    pub strategy: Strategy,
}

/// The name of a clap value (`brute`, `parity`, ...).
pub fn value_name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

/// A clap value enum from its name, or a message listing the names.
fn parse_value<T: ValueEnum>(s: &str, what: &str) -> Result<T, ApiError> {
    T::from_str(s, true).map_err(|_| {
        let names: Vec<String> = T::value_variants().iter().map(value_name).collect();
        ApiError::bad_request(format!(
            "unknown {what} {s:?}; expected one of: {}",
            names.join(", ")
        ))
    })
}

impl SettingsRequest {
    /// Checks every field.
    ///
    /// # Errors
    /// A 400 naming the first field that is wrong and what it accepts.
    pub fn validate(&self) -> Result<Settings, ApiError> {
        let scene: SceneKind = self.scene.parse().map_err(ApiError::bad_request)?;
        let strategy: Strategy = parse_value(&self.strategy, "strategy")?;
        let schedule: ScheduleArg = parse_value(&self.schedule, "schedule")?;
        let cap = if strategy == Strategy::Brute {
            MAX_BRUTE_N
        } else {
            MAX_N
        };
        if !(2..=cap).contains(&self.n) {
            return Err(ApiError::bad_request(format!(
                "n must be from 2 to {cap} for {} (got {})",
                self.strategy, self.n
            )));
        }
        let cell_size = match self.cell_size {
            None => None,
            Some(c) if c.is_finite() && c > 0.0 && c <= f64::from(f32::MAX) => Some(c as f32),
            Some(c) => {
                return Err(ApiError::bad_request(format!(
                    "cell_size must be a finite number above 0, or null for automatic (got {c})"
                )))
            }
        };
        if !(4..=16).contains(&self.radix_bits) {
            return Err(ApiError::bad_request(format!(
                "radix_bits must be from 4 to 16 (got {})",
                self.radix_bits
            )));
        }
        let threads = self
            .threads
            .map(|t| crate::cli::parse_threads(&t.to_string()))
            .transpose()
            .map_err(|e| ApiError::bad_request(format!("threads: {e}")))?;
        Ok(Settings {
            args: LabArgs {
                n: self.n,
                strategy: vec![strategy],
                cell_size,
                radix_bits: self.radix_bits,
                schedule,
                keep_cells: self.keep_cells,
                scene,
                frames: 1,
                seed: self.seed,
                threads,
            },
            strategy,
        })
    }
}

/// The settings a session runs, as it reports them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SettingsJson {
    /// The scene's name.
    pub scene: String,
    /// Objects.
    pub n: u32,
    /// `brute`, `sweep` or `grid`.
    pub strategy: String,
    /// The cell size asked for (`null`: automatic).
    pub cell_size: Option<f32>,
    /// Bits per radix digit.
    pub radix_bits: u32,
    /// `parity` or `all`.
    pub schedule: String,
    /// Whether the grid keeps the entries of boxes that stay in their cells.
    pub keep_cells: bool,
    /// Worker threads (`null`: one per core).
    pub threads: Option<u32>,
    /// The scene's seed.
    pub seed: u64,
}

impl From<&Settings> for SettingsJson {
    fn from(s: &Settings) -> Self {
        let a = &s.args;
        Self {
            scene: a.scene.name().to_string(),
            n: a.n,
            strategy: value_name(&s.strategy),
            cell_size: a.cell_size,
            radix_bits: a.radix_bits,
            schedule: value_name(&a.schedule),
            keep_cells: a.keep_cells,
            threads: a.threads,
            seed: a.seed,
        }
    }
}

/// The chapter's figures for one frame, as `bplab lab` prints them. The grid's own figures
/// are `null` for the other strategies.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FiguresJson {
    /// The frame (0 is the build).
    pub frame: u64,
    /// n(n-1)/2: what brute force tests.
    pub brute_force_pairs: u64,
    /// Cell ids written, home and phantom.
    pub cell_ids: Option<u64>,
    /// Home cells written (one per object).
    pub home_cells: Option<u64>,
    /// Phantom cells written.
    pub phantom_cells: Option<u64>,
    /// Cells holding two boxes or more.
    pub collision_cells: Option<u64>,
    /// Collision cells holding a box that changed, the only ones tested.
    pub cells_tested: Option<u64>,
    /// Radix sort passes (the sweep's and the grid's).
    pub radix_passes: Option<u64>,
    /// Candidate pairs tested.
    pub candidate_pairs: u64,
    /// Overlapping pairs found.
    pub pairs: u64,
    /// The strategy's time for the frame, in milliseconds.
    pub frame_ms: f64,
}

impl FiguresJson {
    /// The figures of `r`, the result of frame `frame`.
    #[must_use]
    pub fn new(frame: u64, r: &LabResult) -> Self {
        Self {
            frame,
            brute_force_pairs: r.brute_force_pairs,
            cell_ids: r.cell_ids.map(|(h, p)| h + p),
            home_cells: r.cell_ids.map(|(h, _)| h),
            phantom_cells: r.cell_ids.map(|(_, p)| p),
            collision_cells: r.collision_cells,
            cells_tested: r.cells_tested,
            radix_passes: r.radix_passes,
            candidate_pairs: r.tests,
            pairs: r.pairs,
            frame_ms: r.frame_ms,
        }
    }
}

/// A session's state: `POST /api/sessions`, `GET`/`PUT /api/sessions/{id}` and `POST
/// /api/sessions/{id}/step` answer with it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StateJson {
    /// The session's id, for the other requests.
    pub id: u64,
    /// Its settings.
    pub settings: SettingsJson,
    /// The grid's fine cell size in use (the automatic one when none was asked for); `null`
    /// for the other strategies.
    pub cell_size_used: Option<f64>,
    /// The last frame's figures.
    pub figures: FiguresJson,
    /// The time of each frame the request ran, in milliseconds (empty but for a step).
    pub frame_ms: Vec<f64>,
}

/// The body of `POST /api/sessions/{id}/step`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct StepRequest {
    /// Frames to run: 1 to [`MAX_STEP_FRAMES`].
    pub frames: u32,
}

impl Default for StepRequest {
    fn default() -> Self {
        Self { frames: 1 }
    }
}

impl StepRequest {
    /// Checks the frame count.
    ///
    /// # Errors
    /// A 400 when it is outside 1 to [`MAX_STEP_FRAMES`].
    pub fn validate(self) -> Result<u32, ApiError> {
        if (1..=MAX_STEP_FRAMES).contains(&self.frames) {
            Ok(self.frames)
        } else {
            Err(ApiError::bad_request(format!(
                "frames must be from 1 to {MAX_STEP_FRAMES} (got {})",
                self.frames
            )))
        }
    }
}

/// What the page offers: `GET /api/options`.
#[derive(Clone, Debug, Serialize)]
pub struct OptionsJson {
    /// The scenes, with their descriptions.
    pub scenes: Vec<[&'static str; 2]>,
    /// The strategies.
    pub strategies: Vec<String>,
    /// The schedules.
    pub schedules: Vec<String>,
    /// The most objects ([`MAX_N`]).
    pub max_n: u32,
    /// The most objects for brute force ([`MAX_BRUTE_N`]).
    pub max_brute_n: u32,
    /// The most worker threads.
    pub max_threads: usize,
    /// The most frames a step may run.
    pub max_step_frames: u32,
    /// The settings a session starts with when none are given.
    pub defaults: SettingsRequest,
}

impl OptionsJson {
    /// The options of this server.
    #[must_use]
    pub fn new() -> Self {
        Self {
            scenes: SceneKind::ALL
                .iter()
                .map(|k| [k.name(), k.description()])
                .collect(),
            strategies: Strategy::value_variants().iter().map(value_name).collect(),
            schedules: ScheduleArg::value_variants()
                .iter()
                .map(value_name)
                .collect(),
            max_n: MAX_N,
            max_brute_n: MAX_BRUTE_N,
            max_threads: crate::cli::max_threads(),
            max_step_frames: MAX_STEP_FRAMES,
            defaults: SettingsRequest::default(),
        }
    }
}

impl Default for OptionsJson {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_bad_values_say_why() {
        let ok = SettingsRequest::default().validate();
        assert!(ok.is_ok());
        let bad = |f: fn(&mut SettingsRequest)| {
            let mut r = SettingsRequest::default();
            f(&mut r);
            r.validate().map(|_| ()).unwrap_err()
        };
        assert!(bad(|r| r.scene = "moon".into())
            .message
            .contains("unknown scene"));
        assert!(bad(|r| r.n = MAX_N + 1).message.contains("n must be"));
        assert!(bad(|r| {
            r.strategy = "brute".into();
            r.n = MAX_BRUTE_N + 1;
        })
        .message
        .contains("for brute"));
        assert!(bad(|r| r.cell_size = Some(-1.0))
            .message
            .contains("cell_size"));
        assert!(bad(|r| r.radix_bits = 3).message.contains("radix_bits"));
        assert!(bad(|r| r.schedule = "later".into())
            .message
            .contains("parity"));
        assert!(bad(|r| r.threads = Some(0)).message.contains("threads"));
        assert_eq!(bad(|r| r.n = 1).status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn bodies_parse_strictly() {
        let empty: SettingsRequest = parse_body(b" ").unwrap();
        assert_eq!(empty, SettingsRequest::default());
        let some: SettingsRequest = parse_body(br#"{"n": 500, "strategy": "sweep"}"#).unwrap();
        assert_eq!((some.n, some.strategy.as_str()), (500, "sweep"));
        for body in [&b"{"[..], br#"{"nn": 3}"#, br#"{"n": -4}"#, br#""grid""#] {
            let e = parse_body::<SettingsRequest>(body).unwrap_err();
            assert!(e.message.starts_with("bad JSON body"), "{e:?}");
        }
        assert_eq!(StepRequest::default().validate(), Ok(1));
        assert!(StepRequest { frames: 0 }.validate().is_err());
    }
}
