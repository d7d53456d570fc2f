//! The thread [`Auto`](crate::Auto)'s background builds run on: a pool of one thread of its
//! own, at the lowest priority the system gives a thread.
//!
//! Its own pool, because an engine spreads its work over the pool it runs in: in the
//! caller's, the build queued its large pieces of work before the running engine's. The
//! lowest priority, because the build has a count of updates to finish in, not a deadline
//! within a frame: it takes the time the caller's threads leave idle rather than theirs. At
//! the normal priority the thread took a core whenever the running engine's threads woke to
//! share a piece of work: on two cores, `bplab phases`' frames beside a build of Sap took up
//! to 6 ms where they take 1.9. The thread hands back each copy of the store it has run, for
//! the next one to be written into: fresh memory costs a page fault per 4 KB on first touch,
//! most of a copy's time (40,000 proxies: 1.0 ms into fresh memory, 0.4 ms into touched).

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;

use crate::engine::Store;

/// A build's thread, and the stores it hands back for copies to be written into.
pub(super) struct BuildThread {
    #[cfg(feature = "parallel")]
    pool: rayon::ThreadPool,
    /// (In a mutex only so that the engine is `Sync`: reached through `&mut self`.)
    spares: Mutex<Receiver<Store>>,
    spare_sender: SyncSender<Store>,
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
    /// When the operating system refuses the thread, or without the `parallel` feature (there
    /// is no build beside the caller's then: it switches in place).
    pub(super) fn start() -> Result<Self, std::io::Error> {
        let (spare_sender, spares) = mpsc::sync_channel(1);
        Self::with_pool(spares, spare_sender)
    }

    #[cfg(feature = "parallel")]
    fn with_pool(
        spares: Receiver<Store>,
        spare_sender: SyncSender<Store>,
    ) -> Result<Self, std::io::Error> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "broadphase-auto-build".into())
            .start_handler(|_| lower_this_threads_priority())
            .build()
            .map_err(std::io::Error::other)?;
        Ok(Self {
            pool,
            spares: Mutex::new(spares),
            spare_sender,
        })
    }

    #[cfg(not(feature = "parallel"))]
    fn with_pool(_: Receiver<Store>, _: SyncSender<Store>) -> Result<Self, std::io::Error> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        #[cfg(feature = "parallel")]
        self.pool.spawn(job);
        #[cfg(not(feature = "parallel"))]
        drop(job);
    }

    /// A store whose memory a copy may be written into: the last copy the thread ran (or the
    /// snapshot), if it has handed one back.
    pub(super) fn take_spare(&mut self) -> Option<Store> {
        self.spares.get_mut().ok()?.try_recv().ok()
    }

    /// Where the work hands back a store it has done with, for a later copy (it is dropped
    /// if one waits already).
    pub(super) fn spare_sender(&self) -> SyncSender<Store> {
        self.spare_sender.clone()
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
}

/// Gives the calling thread the lowest priority (nice 19) where a thread has one of its own:
/// on Linux, where the nice value is per thread. Elsewhere `setpriority` would set the whole
/// process's, so the thread keeps the normal one.
#[cfg(feature = "parallel")]
fn lower_this_threads_priority() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: `setpriority` takes plain integers and reads no memory of ours; `who` 0 names
    // the calling thread. A refusal leaves the priority as it was, which is harmless.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;

    #[test]
    fn work_comes_back_and_a_panic_costs_only_its_result() {
        let mut thread = BuildThread::start().expect("a thread");
        assert!(thread.take_spare().is_none());
        // A store handed back by the work is there for the next copy.
        let send = thread.spare_sender();
        let spare = Store::new(&crate::Config::default());
        let sent = thread.launch(move || send.try_send(spare).is_ok());
        assert_eq!(sent.join(), Some(true));
        assert!(thread.take_spare().is_some_and(|s| s.is_empty()));
        assert_eq!(thread.launch(|| 6 * 7).join(), Some(42));
        let panicked: Running<u32> = thread.launch(|| panic!("a bug in an engine"));
        assert_eq!(panicked.join(), None);
        // The thread goes on after it.
        assert_eq!(thread.launch(|| 1).join(), Some(1));
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn the_build_runs_at_the_lowest_priority_and_the_caller_keeps_its_own() {
        /// The nice value of the calling thread.
        fn nice() -> i32 {
            // SAFETY: plain integers in and out. (-1 is a valid nice value, so errno would
            // tell a refusal; a refusal shows as neither of the values asserted.)
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        }
        let before = nice();
        let thread = BuildThread::start().expect("a thread");
        assert_eq!(thread.launch(nice).join(), Some(19));
        assert_eq!(nice(), before);
    }
}
