//! The thread [`Auto`](crate::Auto)'s background builds run on: a pool of one thread of its
//! own.
//!
//! Its own pool, because an engine spreads its work over the pool it runs in: in the
//! caller's, the build queued its large pieces of work before the running engine's. At the
//! normal priority: the switch update waits for the build if it is behind, and at the lowest
//! (nice 19, as it ran before) whatever else kept the cores busy held it back for the whole
//! build. `bplab phases` on two cores with one busy loop beside it: the slowest frame of the
//! phase with the switch 26.6 ms at nice 19, 24.8 at nice 10, 4.8 at the normal priority (the
//! running engine's own frames 4-5 ms there); with two busy loops 70-1,866 ms, 198, 5.9. With
//! nothing beside it the phase read the same at either priority (median / slowest 0.72-0.79 /
//! 1.25-1.35 at the normal priority, 0.73-0.81 / 1.32-1.45 at nice 19, three runs each).

use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;

/// A build's thread.
pub(super) struct BuildThread {
    #[cfg(feature = "parallel")]
    pool: rayon::ThreadPool,
}

/// The result of work handed to a [`BuildThread`].
pub(super) struct Running<T> {
    /// (In a mutex only so that the engine is `Sync`: it is consumed, never locked.)
    result: Mutex<Receiver<T>>,
}

impl BuildThread {
    /// Starts the thread.
    ///
    /// # Errors
    /// When the operating system refuses the thread.
    #[cfg(feature = "parallel")]
    pub(super) fn start() -> Result<Self, std::io::Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "broadphase-auto-build".into())
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Self { pool })
    }

    /// Without the `parallel` feature there is no build beside the caller's: it switches in
    /// place.
    ///
    /// # Errors
    /// Always.
    #[cfg(not(feature = "parallel"))]
    pub(super) fn start() -> Result<Self, std::io::Error> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        #[cfg(feature = "parallel")]
        self.pool.spawn(job);
        #[cfg(not(feature = "parallel"))]
        drop(job);
    }

    /// Runs `there` on the thread while `here` runs on the caller's, and returns both
    /// results (`there`'s is `None` only without the `parallel` feature, where there is no
    /// thread). A panic in `there` comes back to the caller, as it would have run here.
    pub(super) fn beside<A: Send, B>(
        &self,
        there: impl FnOnce() -> A + Send,
        here: impl FnOnce() -> B,
    ) -> (Option<A>, B) {
        #[cfg(feature = "parallel")]
        {
            let mut a = None;
            let b = self.pool.in_place_scope(|scope| {
                scope.spawn(|_| a = Some(there()));
                here()
            });
            (a, b)
        }
        #[cfg(not(feature = "parallel"))]
        {
            drop(there);
            (None, here())
        }
    }

    /// Drops `garbage` on the thread (after whatever it was given before), so that giving
    /// its memory back costs the caller nothing. The thread finishes it even if this is
    /// dropped first.
    pub(super) fn discard<T: Send + 'static>(&self, garbage: T) {
        self.spawn(move || drop(garbage));
    }

    /// Hands `work` to the thread. A panic in it (a bug in an engine) is caught there: it
    /// costs the switch (the join finds no result), not the caller's process.
    pub(super) fn launch<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Running<T> {
        let (send, result) = mpsc::sync_channel(1);
        self.spawn(move || {
            if let Ok(out) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                let _ = send.send(out);
            }
        });
        Running {
            result: Mutex::new(result),
        }
    }
}

impl<T> Running<T> {
    /// Waits for the work's result; `None` if it panicked.
    pub(super) fn join(self) -> Option<T> {
        self.result.into_inner().ok()?.recv().ok()
    }

    /// The work's result if it has finished (`Ok(None)` if it panicked), without waiting;
    /// the work itself back if it has not.
    pub(super) fn try_join(self) -> Result<Option<T>, Self> {
        let Ok(result) = self.result.into_inner() else {
            return Ok(None);
        };
        match result.try_recv() {
            Ok(out) => Ok(Some(out)),
            Err(mpsc::TryRecvError::Disconnected) => Ok(None),
            Err(mpsc::TryRecvError::Empty) => Err(Self {
                result: Mutex::new(result),
            }),
        }
    }
}

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;

    #[test]
    fn work_comes_back_and_a_panic_costs_only_its_result() {
        let thread = BuildThread::start().expect("a thread");
        assert_eq!(thread.launch(|| 6 * 7).join(), Some(42));
        let panicked: Running<u32> = thread.launch(|| panic!("a bug in an engine"));
        assert_eq!(panicked.join(), None);
        // The thread goes on after it.
        assert_eq!(thread.launch(|| 1).join(), Some(1));
    }

    #[test]
    fn work_not_finished_is_not_waited_for() {
        let thread = BuildThread::start().expect("a thread");
        let (go, gate) = std::sync::mpsc::channel::<()>();
        let held = thread.launch(move || gate.recv().is_ok());
        let Err(held) = held.try_join() else {
            panic!("the work cannot have finished: its gate is closed");
        };
        go.send(()).expect("the work waits on the gate");
        assert_eq!(held.join(), Some(true));
        // Finished work comes back without waiting, a panic as None.
        let done = thread.launch(|| 7);
        let panicked: Running<u32> = thread.launch(|| panic!("a bug in an engine"));
        assert_eq!(panicked.join(), None);
        assert_eq!(done.try_join().ok(), Some(Some(7)));
    }

    #[test]
    fn work_beside_the_callers_runs_on_the_thread_and_garbage_is_dropped_there() {
        let thread = BuildThread::start().expect("a thread");
        let here = std::thread::current().id();
        let data = [1, 2, 3];
        // Both borrow the caller's data.
        let (there, sum) = thread.beside(
            || (std::thread::current().id(), data.len()),
            || data.iter().sum::<i32>(),
        );
        let (there_id, len) = there.expect("the thread ran it");
        assert_ne!(there_id, here);
        assert_eq!((len, sum), (3, 6));

        /// Says on which thread it is dropped.
        struct Noisy(std::sync::mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Noisy {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().id());
            }
        }
        let (send, dropped) = std::sync::mpsc::channel();
        thread.discard(Noisy(send));
        // Dropping the pool does not cancel what it was given.
        drop(thread);
        assert_eq!(dropped.recv().ok(), Some(there_id));
    }
}
