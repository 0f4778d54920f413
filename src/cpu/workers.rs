//! The CPU backend's worker threads, kept valid across `fork`.
//!
//! A forked child has one thread: the parent's workers are not there, and a rayon pool made
//! before the fork would wait for them forever (Python's `multiprocessing` forks by default).
//! So no work of the library runs on rayon's global pool, which cannot be rebuilt: every
//! parallel loop runs on a [`Workers`] pool, which remembers the process it was made in and
//! makes itself again, once, in any other.

use std::sync::{Arc, Mutex, OnceLock};

/// A thread pool that is rebuilt in a forked child before its first use there.
pub struct Workers {
    /// The threads asked for; 0 is rayon's default (`RAYON_NUM_THREADS`, else one per core).
    requested: usize,
    /// The pool and the process it was made in.
    pool: Mutex<(u32, Arc<rayon::ThreadPool>)>,
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Workers({})", self.threads())
    }
}

fn build(requested: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(requested)
        .thread_name(|i| format!("rectcast-cpu-{i}"))
        .build()
        .map_err(|e| format!("cannot start {requested} CPU threads: {e}"))
}

impl Workers {
    /// A pool of `threads` workers (0: rayon's default count).
    ///
    /// # Errors
    /// A message when the threads cannot start.
    pub fn new(threads: usize) -> Result<Self, String> {
        Ok(Self {
            requested: threads,
            pool: Mutex::new((std::process::id(), Arc::new(build(threads)?))),
        })
    }

    /// The process's shared pool of rayon's default size, made on first use: what engines
    /// with the default thread count share, and what the Python layer packs results on.
    ///
    /// # Panics
    /// When not one thread can start.
    pub fn shared() -> &'static Workers {
        static SHARED: OnceLock<Workers> = OnceLock::new();
        SHARED.get_or_init(|| Workers::new(0).expect("rectcast: no CPU thread could start"))
    }

    /// The pool's threads.
    pub fn threads(&self) -> usize {
        self.current().current_num_threads()
    }

    /// This process's pool: the one made here, or a new one after a fork.
    ///
    /// # Panics
    /// When no thread can start in a forked child (the parent's pool started, so this is
    /// resource exhaustion, as for `std::thread::spawn`).
    fn current(&self) -> Arc<rayon::ThreadPool> {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        let pid = std::process::id();
        if pool.0 != pid {
            let fresh =
                build(self.requested).unwrap_or_else(|e| panic!("rectcast: after a fork, {e}"));
            // The parent's pool is not dropped: dropping it would signal threads that do not
            // exist here. Leaking it costs its bookkeeping, once per fork.
            std::mem::forget(std::mem::replace(&mut pool.1, Arc::new(fresh)));
            pool.0 = pid;
        }
        Arc::clone(&pool.1)
    }

    /// Runs `f` on this pool: rayon's parallel iterators inside it use its threads.
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.current().install(f)
    }
}
