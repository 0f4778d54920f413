//! Compiled kernels, kept per device and shared by every engine on it.
//!
//! Compiling is the dearest part of opening an engine: about 20 s for a shape's kernels on
//! lavapipe, whose LLVM compiles the exact integer paths, and a noticeable share of a process's
//! start on hardware. Pipelines and layouts are immutable, so a second engine on the same
//! [`GpuContext`](super::GpuContext) (another thread's, a test's, one per frame loop) takes the
//! first one's instead of compiling again. Buffers stay each engine's own.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::emulation::Emulation;
use crate::error::Result;

/// One kind of kernel set: which (its tag type, and the type holding it) and under which
/// emulated arithmetic (pipeline constants differ per emulation).
type Key = (TypeId, TypeId, Emulation);

/// A kernel set, once compiled. Each has its own lock, so that threads wanting the same set
/// wait for the one compiling it, while other sets compile meanwhile.
type Slot = Arc<Mutex<Option<Arc<dyn Any + Send + Sync>>>>;

/// The kernel sets compiled on one device (cloned with its context), and how many builds
/// there were.
#[derive(Clone, Default)]
pub(crate) struct Compiled(Arc<(Mutex<HashMap<Key, Slot>>, AtomicUsize)>);

impl Compiled {
    /// The kernel set `Tag` names, held as a `T`: the one compiled on this device under
    /// `emulation` before, or `build`'s, kept for later engines. A failed build is not kept.
    pub(crate) fn get_or_build<Tag: 'static, T: Clone + Send + Sync + 'static>(
        &self,
        emulation: Emulation,
        build: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let key = (TypeId::of::<Tag>(), TypeId::of::<T>(), emulation);
        let slot = self
            .0
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default()
            .clone();
        let mut kept = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = kept.as_ref().and_then(|k| k.downcast_ref::<T>()) {
            return Ok(found.clone());
        }
        self.0.1.fetch_add(1, Ordering::Relaxed);
        let built = build()?;
        *kept = Some(Arc::new(built.clone()));
        Ok(built)
    }

    /// How many kernel sets were built (failed builds included).
    pub(crate) fn builds(&self) -> usize {
        self.0.1.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Compiled({} builds)", self.builds())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    struct Walls;
    struct Circles;

    #[test]
    fn a_kernel_set_is_built_once_per_tag_and_emulation_and_a_failure_is_not_kept() {
        let compiled = Compiled::default();
        let shared = compiled.clone();
        let get = |c: &Compiled, emulation, value: u32| {
            c.get_or_build::<Walls, u32>(emulation, || Ok(value))
        };
        assert_eq!(get(&compiled, Emulation::Native, 1).unwrap(), 1);
        // A clone (another engine's context) finds it: no second build.
        assert_eq!(get(&shared, Emulation::Native, 2).unwrap(), 1);
        assert_eq!(compiled.builds(), 1);
        // Another emulation, and another tag, are other sets.
        assert_eq!(get(&shared, Emulation::Rounding, 3).unwrap(), 3);
        let circles = compiled.get_or_build::<Circles, u32>(Emulation::Native, || Ok(4));
        assert_eq!(circles.unwrap(), 4);
        assert_eq!(compiled.builds(), 3);
        // A failed build is not kept: the next asks again.
        let failed = compiled.get_or_build::<Circles, u64>(Emulation::Native, || {
            Err(Error::Gpu("invalid shader".into()))
        });
        assert!(failed.is_err());
        let again = compiled.get_or_build::<Circles, u64>(Emulation::Native, || Ok(5));
        assert_eq!(again.unwrap(), 5);
        assert_eq!(compiled.builds(), 5);
    }

    #[test]
    fn threads_wanting_one_set_wait_for_a_single_build() {
        let compiled = Compiled::default();
        std::thread::scope(|scope| {
            for _ in 0..8 {
                let compiled = compiled.clone();
                scope.spawn(move || {
                    let got = compiled.get_or_build::<Walls, u32>(Emulation::Native, || {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        Ok(7)
                    });
                    assert_eq!(got.unwrap(), 7);
                });
            }
        });
        assert_eq!(compiled.builds(), 1);
    }
}
