//! The fast CPU path: the scalar reference's answers ([`super::segment_rect`],
//! [`super::rect_queries`], [`super::rect_pairs`]), bit for bit, in a fraction of its time.
//!
//! - **Layout.** The rects are copied into blocks of [`LANES`] (struct of arrays within a block),
//!   padded with empty rects that overlap nothing.
//! - **SIMD cull.** For each segment, one pass compares the segment's bounding box with all the
//!   rects, 16 per block, and keeps a bit mask per block. Explicit AVX-512 or AVX2, chosen at
//!   run time ([`Simd::detect`]), else a portable loop that LLVM vectorises for the baseline.
//! - **Exactness.** The bounding-box test is the reference's first rule, "both ends beyond one
//!   side of a slab", turned around: `max(x0, x1) >= min_x && min(x0, x1) <= max_x` (and y) holds
//!   exactly when `beyond_one_side` does not, for every finite input. A pair it rejects is a
//!   [`crate::PairResult::MISS`] in the reference and adds nothing to any query; every pair it keeps
//!   runs the reference itself ([`crate::segment_rect`]) and the query's own step (`queries::is_closer` for
//!   the first hit). So every decision is the reference's, in the reference's order.
//! - **Threads.** rayon over chunks of segments, or none at all with one thread (then nothing is
//!   allocated per call).

mod along;
mod cull;
mod grid_build;
mod order;
mod rects;
mod shape_cull;
#[cfg(test)]
mod shape_work;
mod shapes;
mod start_cell;

pub use cull::RectBlock;
pub(crate) use shapes::{Earlier, FirstOrder};

use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

use super::workers::Workers;
use crate::cancel::Cancel;

use super::grid::Grid;
pub use super::lanes::{LANES, Simd};
use crate::types::Rect;

/// How the CPU backend runs: its worker threads and SIMD level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuOptions {
    /// Worker threads; 0 (the default) is one per core, as rayon counts them
    /// (`RAYON_NUM_THREADS` overrides).
    pub threads: usize,
    /// The SIMD level; `None` (the default) is the best this CPU runs.
    pub simd: Option<Simd>,
}

impl CpuOptions {
    /// The most worker threads an engine starts: more is refused
    /// ([`crate::Error::CpuOptions`]) rather than spent minutes starting (20,000 took over a
    /// minute, and no machine has the cores to use them).
    pub const MAX_THREADS: usize = 1024;

    /// `threads` worker threads (0: one per core), at the best SIMD level this CPU runs.
    pub const fn threads(threads: usize) -> Self {
        Self {
            threads,
            simd: None,
        }
    }
}

/// The fast CPU kernel: its options, its thread pool, and its rect blocks (kept between calls,
/// so that a steady stream of batches allocates nothing on one thread).
pub struct CpuKernel {
    simd: Simd,
    threads: usize,
    /// Its own workers, or `None` for the process's shared pool ([`Workers::shared`]).
    pool: Option<Workers>,
    blocks: Vec<RectBlock>,
    /// The last few calls' shapes' layouts and lane filters, the most recently used first,
    /// kept for a call over the same shapes ([`CpuKernel::prepare_shapes`]).
    shapes: Vec<shape_cull::PreparedShapes>,
    /// Set: chunks not started yet are skipped (the engine then discards the call's results).
    cancel: Option<Cancel>,
    /// Whether a chunk was skipped since the engine last asked ([`CpuKernel::take_skipped`]):
    /// a cancel reset before the call ends must not make its partial results an answer.
    skipped: AtomicBool,
}

impl std::fmt::Debug for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuKernel({self})")
    }
}

impl std::fmt::Display for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.threads == 1 { "" } else { "s" };
        write!(f, "{}, {} thread{s}", self.simd, self.threads)
    }
}

/// Segments a task runs between two looks at its call's [`Cancel`]: a chunk's length comes
/// from an estimate of each segment's work, which long segments over many targets exceed by
/// orders of magnitude (2M segments across 200k rects: 65,536 of them were tens of seconds),
/// so a cancel is also looked at every `SLICE` segments within a chunk.
pub(crate) const SLICE: usize = 512;

/// Segments per parallel task: a few tasks per thread, none too small to be worth a steal.
fn chunk_len(segments: usize, rects: usize, threads: usize) -> usize {
    let tasks = threads * 8;
    let by_count = segments.div_ceil(tasks.max(1));
    // At least about 64k pairs per task, and at most 64k segments: a call is cancelled
    // between chunks (`Cancel`), so none is long.
    let by_work = (1 << 16) / rects.max(1);
    by_count.min(1 << 16).max(by_work).max(1)
}

/// Shapes from which a call's set-up (their layout's sort, their grid) runs on the kernel's
/// threads: below it, the pool's fork and join cost more than they save (2,000 moving circles
/// of a game's frame: layout and grid 0.54 ms on two threads, 0.33 ms on one).
const PARALLEL_SETUP_MIN: usize = 16_384;

impl CpuKernel {
    /// Whether a set-up over `items` shapes runs on the kernel's threads.
    fn in_parallel(&self, items: usize) -> bool {
        self.threads > 1 && items >= PARALLEL_SETUP_MIN
    }
}

/// About how many of `boxes` a segment is tested against: all of them, or with a grid (over
/// them) the mean entries of a cell times a few cells.
fn work_per_segment(boxes: &[Rect], grid: Option<&Grid>) -> usize {
    grid.map_or(boxes.len(), |g| {
        (4 * g.entry_count() / g.cell_start.len().max(1)).clamp(1, boxes.len().max(1))
    })
}

impl Default for CpuKernel {
    /// The best SIMD level here, one thread per core (the process's shared pool).
    fn default() -> Self {
        Self {
            simd: Simd::detect(),
            threads: Workers::shared().threads(),
            pool: None,
            blocks: Vec::new(),
            shapes: Vec::new(),
            cancel: None,
            skipped: AtomicBool::new(false),
        }
    }
}

impl CpuKernel {
    /// # Errors
    /// A message when the SIMD level is not supported here or the thread pool cannot start.
    pub fn new(options: CpuOptions) -> Result<Self, String> {
        let simd = options.simd.unwrap_or_else(Simd::detect);
        if !simd.is_supported() {
            return Err(format!(
                "SIMD level {simd} is not supported by this CPU (available: {})",
                Simd::available()
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let (threads, pool) = match options.threads {
            0 => (Self::default().threads, None),
            1 => (1, None),
            n if n > CpuOptions::MAX_THREADS => {
                return Err(format!(
                    "{n} CPU threads: at most {} (CpuOptions::MAX_THREADS; 0 is one per core)",
                    CpuOptions::MAX_THREADS
                ));
            }
            n => {
                let pool = Workers::new(n)?;
                (n, Some(pool))
            }
        };
        Ok(Self {
            simd,
            threads,
            pool,
            blocks: Vec::new(),
            shapes: Vec::new(),
            cancel: None,
            skipped: AtomicBool::new(false),
        })
    }

    pub fn simd(&self) -> Simd {
        self.simd
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Calls check `cancel` between chunks from now on (`None`: never).
    pub(crate) fn set_cancel(&mut self, cancel: Option<Cancel>) {
        self.cancel = cancel;
    }

    /// Whether this call was cancelled: its chunks not started yet are skipped, and the
    /// kernel remembers that it skipped some.
    fn cancelled(&self) -> bool {
        let cancelled = self.cancel.as_ref().is_some_and(Cancel::is_cancelled);
        if cancelled {
            self.skipped.store(true, Ordering::Relaxed);
        }
        cancelled
    }

    /// Whether a chunk was skipped since the last time this was asked: then the call that
    /// skipped it is cancelled, even if the cancel was reset before it ended.
    pub(crate) fn take_skipped(&self) -> bool {
        self.skipped.swap(false, Ordering::Relaxed)
    }

    /// Runs `each(first segment, its part of out)` over consecutive parts of `out`, `chunk`
    /// segments of `per` items each a part: on the pool, or in order on this thread with one
    /// thread. A part not started once the call is cancelled is skipped.
    pub(crate) fn chunked<T: Send>(
        &self,
        out: &mut [T],
        chunk: usize,
        per: usize,
        each: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let size = (chunk * per).max(1);
        if self.threads == 1 {
            for (c, part) in out.chunks_mut(size).enumerate() {
                self.sliced(c * chunk, part, per, &each);
            }
            return;
        }
        Self::install(&self.pool, || {
            out.par_chunks_mut(size)
                .enumerate()
                .for_each(|(c, part)| self.sliced(c * chunk, part, per, &each))
        });
    }

    /// Runs `each(first segment, its part of out)` over consecutive slices of `out` of
    /// [`SLICE`] segments (`per` items each), `out`'s first segment `first`, none once the
    /// call is cancelled.
    fn sliced<T>(&self, first: usize, out: &mut [T], per: usize, each: &impl Fn(usize, &mut [T])) {
        for (k, part) in out.chunks_mut((SLICE * per).max(1)).enumerate() {
            if self.cancelled() {
                return;
            }
            each(first + k * SLICE, part);
        }
    }

    /// Runs `f` on this kernel's pool (the process's shared one when it has none of its
    /// own), never on rayon's global pool, which a forked child cannot use.
    fn install<R: Send>(pool: &Option<Workers>, f: impl FnOnce() -> R + Send) -> R {
        match pool {
            Some(pool) => pool.install(f),
            None => Workers::shared().install(f),
        }
    }
}
