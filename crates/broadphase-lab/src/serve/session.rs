//! The sessions: each client's scene and strategy, stepped on request. Every session has its
//! own lock, so a slow step (brute force on 20,000 objects) holds up only the requests of that
//! session; the table of sessions is locked only to find, add or drop one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use rayon::ThreadPool;

use super::api::{ApiError, FiguresJson, Settings, SettingsJson, StateJson};
use crate::lab::Stepper;

/// The most sessions held: a new one beyond this drops the one used least recently.
pub const MAX_SESSIONS: usize = 32;

/// One client's lab: its settings, its strategy stepping through its scene, and the thread
/// pool it runs in.
#[derive(Debug)]
pub struct Session {
    settings: Settings,
    stepper: Stepper,
    pool: Arc<ThreadPool>,
}

impl Session {
    /// Builds the scene and runs frame 0 in `pool`.
    ///
    /// # Errors
    /// A 400 when the grid rejects the settings.
    pub fn new(settings: Settings, pool: Arc<ThreadPool>) -> Result<Self, ApiError> {
        let stepper = pool.install(|| Stepper::new(&settings.args, settings.strategy))?;
        Ok(Self {
            settings,
            stepper,
            pool,
        })
    }

    /// Runs `frames` frames; returns the time of each in milliseconds.
    ///
    /// # Errors
    /// A 500 if the broad phase rejects the scene's input (a bug).
    pub fn step(&mut self, frames: u32) -> Result<Vec<f64>, ApiError> {
        let stepper = &mut self.stepper;
        self.pool.install(|| {
            (0..frames)
                .map(|_| stepper.step().map(|r| r.frame_ms))
                .collect::<Result<Vec<f64>, _>>()
                .map_err(ApiError::from)
        })
    }

    /// The strategy stepping through the scene.
    #[must_use]
    pub fn stepper(&self) -> &Stepper {
        &self.stepper
    }

    /// The session's state as the API reports it, with the frame times of the request.
    #[must_use]
    pub fn state(&self, id: u64, frame_ms: Vec<f64>) -> StateJson {
        StateJson {
            id,
            settings: SettingsJson::from(&self.settings),
            cell_size_used: self.stepper.grid().and_then(broadphase::Grid::cell_size),
            figures: FiguresJson::new(self.stepper.frame(), self.stepper.last()),
            frame_ms,
        }
    }
}

/// A session in the table, with when it was last asked for.
#[derive(Debug)]
struct Slot {
    session: Arc<Mutex<Session>>,
    used: Instant,
}

/// Every session, and the thread pools they share (one per thread count).
#[derive(Debug, Default)]
pub struct Sessions {
    table: Mutex<HashMap<u64, Slot>>,
    next: AtomicU64,
    pools: Mutex<HashMap<Option<u32>, Arc<ThreadPool>>>,
}

/// A lock whose holder cannot have left its data half-changed (every change is one insert or
/// removal): a panic elsewhere while it was held does not make it unusable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sessions {
    /// The pool of `threads` workers (`None`: one per core), made on first use.
    ///
    /// # Errors
    /// A 500 when the system refuses the threads.
    pub fn pool(&self, threads: Option<u32>) -> Result<Arc<ThreadPool>, ApiError> {
        let mut pools = lock(&self.pools);
        if let Some(p) = pools.get(&threads) {
            return Ok(Arc::clone(p));
        }
        let pool = crate::run::thread_pool(threads)
            .map_err(|e| ApiError::internal(format!("cannot start worker threads: {e}")))?;
        let pool = Arc::new(pool);
        pools.insert(threads, Arc::clone(&pool));
        Ok(pool)
    }

    /// Adds a session; returns its id. Beyond [`MAX_SESSIONS`] the session used least
    /// recently is dropped (a step it is running finishes first).
    pub fn insert(&self, session: Session) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut table = lock(&self.table);
        while table.len() >= MAX_SESSIONS {
            let Some(oldest) = table.iter().min_by_key(|(_, s)| s.used).map(|(&k, _)| k) else {
                break;
            };
            table.remove(&oldest);
        }
        table.insert(
            id,
            Slot {
                session: Arc::new(Mutex::new(session)),
                used: Instant::now(),
            },
        );
        id
    }

    /// Puts `session` in the place of session `id`.
    ///
    /// # Errors
    /// A 404 when there is no session `id`.
    pub fn replace(&self, id: u64, session: Session) -> Result<(), ApiError> {
        let mut table = lock(&self.table);
        let slot = table.get_mut(&id).ok_or_else(|| no_session(id))?;
        slot.session = Arc::new(Mutex::new(session));
        slot.used = Instant::now();
        Ok(())
    }

    /// Session `id`.
    ///
    /// # Errors
    /// A 404 when there is none.
    pub fn get(&self, id: u64) -> Result<Arc<Mutex<Session>>, ApiError> {
        let mut table = lock(&self.table);
        let slot = table.get_mut(&id).ok_or_else(|| no_session(id))?;
        slot.used = Instant::now();
        Ok(Arc::clone(&slot.session))
    }

    /// Drops session `id`; whether there was one.
    pub fn remove(&self, id: u64) -> bool {
        lock(&self.table).remove(&id).is_some()
    }
}

/// The 404 of an unknown session.
fn no_session(id: u64) -> ApiError {
    ApiError::not_found(format!(
        "no session {id} (sessions end when the server restarts, and the {MAX_SESSIONS} most \
         recently used are kept); create one with POST /api/sessions"
    ))
}

/// Locks a session for a request.
///
/// # Errors
/// A 500 when an earlier request on it failed midway (its state may be half-stepped).
pub fn lock_session(session: &Mutex<Session>) -> Result<MutexGuard<'_, Session>, ApiError> {
    session.lock().map_err(|_| {
        ApiError::internal("an earlier request on this session failed midway; create a new one")
    })
}
