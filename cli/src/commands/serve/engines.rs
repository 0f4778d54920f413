//! The engines that answer the playground: a small pool, so that a long request (a frame of a
//! large scene) does not hold every other client's drag behind it. The first engine is opened
//! with the server; another only when every open one is busy, up to [`Engines::most`].

use std::sync::{Condvar, Mutex, MutexGuard};

use rectcast::{Backend, Engine};

use crate::options;

/// Open engines not in use, and how many are open in all.
struct Pool {
    free: Vec<Engine>,
    open: usize,
    /// The most that may be open: lowered to those open when opening one more failed.
    most: usize,
}

pub struct Engines {
    backend: Backend,
    pool: Mutex<Pool>,
    returned: Condvar,
}

/// An engine taken from the pool, returned when dropped (a panic while answering left it as it
/// was between calls: it goes back too).
pub struct Taken<'a> {
    engines: &'a Engines,
    engine: Option<Engine>,
}

impl Engines {
    /// A pool of at most `most` engines of `backend`, the first opened now.
    pub fn open(backend: Backend, most: usize) -> Result<Self, String> {
        let first = options::engine(backend)?;
        Ok(Self {
            backend,
            pool: Mutex::new(Pool {
                free: vec![first],
                open: 1,
                most: most.max(1),
            }),
            returned: Condvar::new(),
        })
    }

    fn pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A free engine: one open and idle, a new one while fewer than the most are open, or the
    /// next one returned.
    pub fn take(&self) -> Taken<'_> {
        let mut pool = self.pool();
        loop {
            if let Some(engine) = pool.free.pop() {
                return Taken {
                    engines: self,
                    engine: Some(engine),
                };
            }
            if pool.open < pool.most {
                pool.open += 1;
                drop(pool);
                match options::engine(self.backend) {
                    Ok(engine) => {
                        return Taken {
                            engines: self,
                            engine: Some(engine),
                        };
                    }
                    Err(_) => {
                        pool = self.pool();
                        pool.open -= 1;
                        pool.most = pool.open;
                        continue;
                    }
                }
            }
            pool = self.returned.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl std::ops::Deref for Taken<'_> {
    type Target = Engine;

    fn deref(&self) -> &Engine {
        self.engine.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Taken<'_> {
    fn deref_mut(&mut self) -> &mut Engine {
        self.engine.as_mut().expect("held until dropped")
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            self.engines.pool().free.push(engine);
            self.engines.returned.notify_one();
        }
    }
}
