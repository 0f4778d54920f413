//! Cancelling a call from another thread: a Python program's Ctrl-C, a game dropping a frame's
//! late query, a server whose client went away.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag shared between an [`crate::Engine`] ([`crate::Engine::set_cancel`]) and whoever may
/// cancel its calls. Once set, the engine's call in progress stops at its next chunk (on the
/// CPU, within 512 segments' work of each thread, however long the segments; on the GPU, before it submits the next, and a wait for
/// one in flight within 20 ms, leaving the GPU to finish what it was given) and returns
/// [`crate::Error::Cancelled`], and so does every later call until [`Cancel::reset`]. A call
/// that skipped any of its work answers `Cancelled` even when the flag was reset before it
/// ended, so an `Ok` answer is always whole. A cancelled call's outputs are unspecified (an
/// `_into` call may have written part of its buffer); the engine stays usable.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the call in progress and those after it, from any thread.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Lets calls run again.
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}
