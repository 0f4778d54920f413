//! The engine's lock, which a forked child can take although a thread of the parent held it.
//!
//! `os.fork()` copies the memory, a held lock included, but not the thread holding it: with a
//! plain mutex, a child whose parent was mid-call on another thread waits forever for the
//! engine. This lock records the process its holder is in; a child finds the holder's process
//! is not its own and takes the lock over. The call that held it is abandoned as a cancelled
//! call is (its outputs unspecified), and the engine goes on between calls, as after a panic.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A value behind a lock that a forked child can take over (see the module's doc).
pub struct ForkLock<T> {
    /// 0 when free; else the process id of the holder.
    holder: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and one guard exists at a time in a
// process (`lock`).
unsafe impl<T: Send> Sync for ForkLock<T> {}

/// The lock, held until dropped.
pub struct Guard<'a, T> {
    lock: &'a ForkLock<T>,
}

impl<T> ForkLock<T> {
    pub fn new(value: T) -> Self {
        Self {
            holder: AtomicU32::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits for the lock: free, or held from another process (a fork's parent), which no
    /// thread here will release. Contention is rare and calls are long: a waiter polls.
    pub fn lock(&self) -> Guard<'_, T> {
        let here = std::process::id();
        loop {
            let taken = self
                .holder
                .compare_exchange(0, here, Ordering::Acquire, Ordering::Relaxed);
            match taken {
                Ok(_) => return Guard { lock: self },
                Err(held) if held != here => {
                    // Held in the parent when this process was forked: no thread of this one
                    // holds it.
                    let over = self.holder.compare_exchange(
                        held,
                        here,
                        Ordering::Acquire,
                        Ordering::Relaxed,
                    );
                    if over.is_ok() {
                        return Guard { lock: self };
                    }
                }
                Err(_) => std::thread::sleep(Duration::from_micros(100)),
            }
        }
    }
}

impl<T> std::ops::Deref for Guard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard is the one holder (`lock`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> std::ops::DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the one holder (`lock`).
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        self.lock.holder.store(0, Ordering::Release);
    }
}
