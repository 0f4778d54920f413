//! One per-frame loop on either backend: [`FrameLoop`], the same calls over
//! [`crate::gpu::frames::Frames`] on a GPU engine and over the engine itself on the CPU.

use super::auto::{Family, Work};
use super::{Engine, Place};
use crate::broad_phase::BroadPhase;
use crate::error::{Error, InputArray, Result};
use crate::gpu::WaitLimit;
use crate::gpu::frames::{FrameCapacity, FrameId, Frames};
use crate::query::{Batch, Skipped};
use crate::types::FirstHit;

/// Closest hit per segment, frame after frame, on whichever backend an [`Engine`] runs: write a
/// frame, dispatch it, and read its first hits a frame later. A game writes this loop once and
/// runs it on a GPU, or on the CPU where there is none, with the same results, byte for byte.
///
/// ```
/// # use rectcast::{Backend, Batch, Engine, FirstHit, FrameLoop, scene};
/// # use rectcast::FrameCapacity;
/// # fn main() -> rectcast::Result<()> {
/// let engine = Engine::new(Backend::Auto)?; // the CPU when no GPU opens
/// let mut frames = FrameLoop::new(engine, FrameCapacity::new(10_000, 1_000))?;
/// let mut hits = vec![FirstHit::NONE; 10_000];
/// let mut previous = None;
/// for frame in 0..3 {
///     let (bullets, hitboxes) = scene::bullet_hell(frame, 10_000, 1_000);
///     frames.write(&Batch::new(&bullets, &hitboxes).skip_invalid())?;
///     let id = frames.dispatch()?;
///     if let Some(previous) = previous {
///         frames.read(previous, &mut hits)?; // last frame's: ready by now
///     }
///     previous = Some(id);
/// }
/// # Ok(()) }
/// ```
///
/// On a GPU engine it is [`Frames`] (its ring, its no-stall reads; see there for recording into
/// your own encoder). On the CPU a frame is answered when it is written, on the engine's
/// threads, into a ring of result buffers made once: [`read`](Self::read) copies them, and
/// steady state on one thread allocates nothing. The errors are the same on both: a frame over
/// the capacity, a ring full of unread frames, a dispatch with nothing written, a frame read
/// twice.
pub struct FrameLoop {
    inner: Inner,
    /// What the last query over mixed targets skipped.
    target_skipped: Skipped,
    /// Why the last read ran on the CPU, if it did.
    last_fallback: Option<String>,
}

enum Inner {
    /// The engine is kept for what it says it runs on.
    Gpu {
        frames: Box<Frames>,
        engine: Engine,
    },
    Cpu(CpuFrames),
}

/// The CPU's ring: each slot's frame (`None`: read, or never dispatched) and first hits.
struct CpuFrames {
    engine: Engine,
    capacity: FrameCapacity,
    ring: Vec<(Option<u64>, Vec<FirstHit>)>,
    /// A frame answered by `write` and not dispatched yet.
    written: bool,
    next_frame: u64,
}

impl FrameLoop {
    /// A loop on `engine`'s backend, its buffers sized for `capacity` once. An `Auto` engine
    /// opens a GPU here when its cost model expects a full frame to be sooner there (the
    /// loop's many frames pay for the opening), and runs the loop on the CPU otherwise.
    ///
    /// # Errors
    /// On a GPU engine, as [`Frames::new`]; on the CPU, [`Error::TooManyPairs`] when the ring's
    /// result buffers do not fit in memory.
    pub fn new(mut engine: Engine, capacity: FrameCapacity) -> Result<Self> {
        let grid = engine
            .broad_phase
            .uses_grid(capacity.segments, capacity.rects, false);
        let work = Work::through(Family::FirstHits, capacity.segments, capacity.rects, grid);
        let place = engine.place_for(work, true);
        let inner = match engine.gpu_context().filter(|_| place == Place::Gpu) {
            Some(context) => {
                let mut frames = Box::new(Frames::new(context, capacity)?);
                frames.set_wait(engine.gpu_wait());
                Inner::Gpu { frames, engine }
            }
            None => {
                let mut ring = Vec::new();
                for _ in 0..capacity.ring.max(1) {
                    let mut first_hits = Vec::new();
                    first_hits
                        .try_reserve_exact(capacity.segments)
                        .map_err(|_| Error::TooManyPairs {
                            queries: capacity.segments,
                            query_array: InputArray::Segments,
                            targets: capacity.rects,
                            target_array: InputArray::Rects,
                        })?;
                    ring.push((None, first_hits));
                }
                Inner::Cpu(CpuFrames {
                    engine,
                    capacity,
                    ring,
                    written: false,
                    next_frame: 0,
                })
            }
        };
        Ok(Self {
            inner,
            target_skipped: Skipped::default(),
            last_fallback: None,
        })
    }

    /// How long a GPU loop waits for a frame, and the engine for its other calls, from now on
    /// ([`Engine::set_gpu_wait`]); nothing on the CPU. (The engine's own `set_gpu_wait`,
    /// through [`engine_mut`](Self::engine_mut), does not reach the loop's frames.)
    pub fn set_gpu_wait(&mut self, wait: WaitLimit) {
        if let Inner::Gpu { frames, engine } = &mut self.inner {
            frames.set_wait(wait);
            engine.set_gpu_wait(wait);
        }
    }

    /// Why the last [`read`](Self::read) ran on the CPU: on a GPU engine with a CPU fallback
    /// ([`Engine::with_cpu_fallback`]; `Backend::Auto` engines have one), a frame the GPU does
    /// not finish within the wait limit, or on a lost device, is answered on the CPU from the
    /// frame's inputs, which the loop keeps: the same first hits, and this says so. `None`
    /// after a read the GPU answered, and always on a CPU engine.
    pub fn last_fallback(&self) -> Option<&str> {
        self.last_fallback.as_deref()
    }

    /// What the loop runs on (an `Auto` engine's own last call may have run elsewhere).
    pub fn chosen(&self) -> crate::Chosen {
        match &self.inner {
            Inner::Gpu { engine, .. } => match engine.gpu_context() {
                Some(context) => crate::Chosen::Gpu(context.describe()),
                None => engine.chosen(),
            },
            Inner::Cpu(cpu) => cpu.engine.chosen(),
        }
    }

    /// Whether frames find candidates through a grid (`Auto` by default); from the next write.
    pub fn set_broad_phase(&mut self, broad_phase: BroadPhase) {
        match &mut self.inner {
            Inner::Gpu { frames, .. } => frames.set_broad_phase(broad_phase),
            Inner::Cpu(cpu) => cpu.engine.set_broad_phase(broad_phase),
        }
    }

    /// Whether the last frame walked a grid.
    pub fn used_broad_phase(&self) -> bool {
        match &self.inner {
            Inner::Gpu { frames, .. } => frames.used_broad_phase(),
            Inner::Cpu(cpu) => cpu.engine.used_broad_phase(),
        }
    }

    /// Writes this frame's segments, rects and filters. Under [`Batch::skip_invalid`] its invalid
    /// elements miss, and [`last_skipped`](Self::last_skipped) lists them.
    ///
    /// # Errors
    /// [`Error::Input`] (unless skipped), [`Error::FilterLength`]; [`Error::FrameCapacity`]
    /// when the batch is larger than the capacity; [`Error::RingFull`] when the slot this frame
    /// needs still holds an unread frame.
    pub fn write(&mut self, batch: &Batch) -> Result<()> {
        let cpu = match &mut self.inner {
            Inner::Gpu { frames, .. } => return frames.write(batch),
            Inner::Cpu(cpu) => cpu,
        };
        // As `Frames::write`: the batch first, then the capacity, then the ring; a write refused
        // for any of them leaves a frame written before it in place, and skips nothing.
        cpu.engine.skipped.clear();
        batch.check_admissible()?;
        let (n, m) = (batch.segments.len(), batch.rects.len());
        let capacity = cpu.capacity;
        if n > capacity.segments || m > capacity.rects {
            return Err(Error::FrameCapacity {
                segments: n,
                rects: m,
                capacity_segments: capacity.segments,
                capacity_rects: capacity.rects,
            });
        }
        let ring = cpu.ring.len();
        let (unread, out) = &mut cpu.ring[(cpu.next_frame % ring as u64) as usize];
        if let Some(frame) = *unread {
            return Err(Error::RingFull { frame, ring });
        }
        // Within the capacity reserved at creation: no allocation.
        out.clear();
        out.resize(n, FirstHit::NONE);
        cpu.written = false;
        cpu.engine.first_hit_into(batch, out)?;
        cpu.written = true;
        Ok(())
    }

    /// This frame's first hits among a scene of mixed targets ([`crate::Targets`]: rects,
    /// circles, walls, polygons), answered now on the loop's backend, into `out` (one per
    /// segment, reused across frames): [`Engine::target_first_hits_into`], the same results on
    /// both. It does not take a slot of the ring: a frame's rects-only query and its scene can
    /// run side by side. [`last_target_skipped`](Self::last_target_skipped) lists the segments
    /// it skipped; [`last_skipped`](Self::last_skipped) stays the last write's.
    ///
    /// # Errors
    /// As [`Engine::target_first_hits_into`].
    pub fn target_first_hits_into(
        &mut self,
        batch: &crate::TargetBatch,
        out: &mut [Option<crate::TargetHit>],
    ) -> Result<()> {
        self.keeping_written_skipped(|engine| engine.target_first_hits_into(batch, out))
    }

    /// This frame's first hits over layers of targets ([`crate::LayeredBatch`]: a level's
    /// static layer and the frame's moving one), as
    /// [`target_first_hits_into`](Self::target_first_hits_into):
    /// [`Engine::layered_first_hits_into`].
    ///
    /// # Errors
    /// As [`Engine::layered_first_hits_into`].
    pub fn layered_first_hits_into(
        &mut self,
        batch: &crate::LayeredBatch,
        out: &mut [Option<crate::LayerHit>],
    ) -> Result<()> {
        self.keeping_written_skipped(|engine| engine.layered_first_hits_into(batch, out))
    }

    /// Runs a query over targets on the engine, its skipped segments kept as the last target
    /// query's: the engine keeps one list of what its last call skipped, which on the CPU is
    /// the write's, kept.
    fn keeping_written_skipped(
        &mut self,
        query: impl FnOnce(&mut Engine) -> Result<()>,
    ) -> Result<()> {
        let engine = self.engine_mut();
        let written = std::mem::take(&mut engine.skipped);
        let outcome = query(engine);
        let skipped = std::mem::replace(&mut engine.skipped, written);
        self.target_skipped = skipped;
        outcome
    }

    /// What the last [`target_first_hits_into`](Self::target_first_hits_into) or
    /// [`layered_first_hits_into`](Self::layered_first_hits_into) skipped (its invalid
    /// segments, under [`crate::TargetBatch::skip_invalid`]).
    pub fn last_target_skipped(&self) -> &Skipped {
        &self.target_skipped
    }

    /// The engine the loop runs on: for this frame's other queries (hits, counts, shapes) on
    /// the same backend and device. On the CPU the loop's writes run on it too, so a query
    /// over a [`Batch`] through it replaces what [`last_skipped`](Self::last_skipped) lists;
    /// on a GPU it does not. [`last_target_skipped`](Self::last_target_skipped) is the loop's
    /// own on both.
    pub fn engine_mut(&mut self) -> &mut Engine {
        match &mut self.inner {
            Inner::Gpu { engine, .. } => engine,
            Inner::Cpu(cpu) => &mut cpu.engine,
        }
    }

    /// What the last [`write`](Self::write) skipped ([`Batch::skip_invalid`]); empty after a
    /// write that failed.
    pub fn last_skipped(&self) -> &Skipped {
        match &self.inner {
            Inner::Gpu { frames, .. } => frames.last_skipped(),
            Inner::Cpu(cpu) => cpu.engine.last_skipped(),
        }
    }

    /// Starts the written frame: on a GPU, submits it; on the CPU, where `write` answered it,
    /// names it.
    ///
    /// # Errors
    /// [`Error::NothingWritten`] when no frame was written since the last dispatch; GPU errors.
    pub fn dispatch(&mut self) -> Result<FrameId> {
        let cpu = match &mut self.inner {
            Inner::Gpu { frames, .. } => return frames.dispatch(),
            Inner::Cpu(cpu) => cpu,
        };
        if !std::mem::take(&mut cpu.written) {
            return Err(Error::NothingWritten);
        }
        let frame = cpu.next_frame;
        cpu.next_frame += 1;
        let ring = cpu.ring.len() as u64;
        cpu.ring[(frame % ring) as usize].0 = Some(frame);
        Ok(FrameId(frame))
    }

    /// Copies `frame`'s first hits into `out` if they are ready, without waiting: `Ok(false)`
    /// when not (on the CPU they always are).
    ///
    /// # Errors
    /// [`Error::OutputLength`]; [`Error::UnknownFrame`] for a frame already read or never
    /// dispatched; GPU errors.
    pub fn try_read(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<bool> {
        match &mut self.inner {
            Inner::Gpu { frames, .. } => frames.try_read(frame, out),
            Inner::Cpu(cpu) => cpu.read(frame, out).map(|()| true),
        }
    }

    /// Waits for `frame` (on a GPU; on the CPU it is ready) and copies its first hits into
    /// `out`. On a GPU engine with a CPU fallback, a frame the GPU does not finish in time (or
    /// a lost device) is answered on the CPU instead ([`last_fallback`](Self::last_fallback)).
    ///
    /// # Errors
    /// As [`try_read`](Self::try_read); [`Error::Timeout`] on a GPU that does not finish, where
    /// the engine has no fallback (the frame then stays in flight, and a later read may get
    /// it); [`Error::Cancelled`] when the engine's [`crate::Cancel`] stops the fallback (the
    /// frame stays unread).
    ///
    /// A frame answered on the CPU still holds its slot of the ring until the GPU is done with
    /// it: the write that next needs the slot waits for the GPU, up to the wait limit, and
    /// finds the ring full past it. So a GPU that stays slower than the limit moves the stall
    /// from the read to that write.
    pub fn read(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<()> {
        self.last_fallback = None;
        match &mut self.inner {
            Inner::Gpu { frames, engine } => match frames.read(frame, out) {
                Err(e @ (Error::Timeout { .. } | Error::DeviceLost(_)))
                    if engine.has_cpu_fallback() =>
                {
                    frames.answer_on_host(frame, out, |batch, out| {
                        engine.first_hits_on_fallback(batch, out)
                    })?;
                    self.last_fallback = Some(format!("{e}; this frame ran on the CPU"));
                    Ok(())
                }
                outcome => outcome,
            },
            Inner::Cpu(cpu) => cpu.read(frame, out),
        }
    }
}

impl CpuFrames {
    fn read(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<()> {
        let ring = self.ring.len() as u64;
        let (unread, first_hits) = &mut self.ring[(frame.0 % ring) as usize];
        if *unread != Some(frame.0) {
            return Err(Error::UnknownFrame(frame.0));
        }
        if out.len() != first_hits.len() {
            return Err(Error::OutputLength {
                expected: first_hits.len(),
                got: out.len(),
            });
        }
        out.copy_from_slice(first_hits);
        *unread = None;
        Ok(())
    }
}

impl Engine {
    /// The wait limit of this engine's GPU steps (the default on the CPU).
    fn gpu_wait(&self) -> WaitLimit {
        match &self.inner {
            super::Inner::Gpu(host) => host.limits.wait.unwrap_or_default(),
            super::Inner::Cpu { .. } => WaitLimit::default(),
        }
    }

    /// Whether this GPU engine runs a call on the CPU when the GPU times out or is lost.
    fn has_cpu_fallback(&self) -> bool {
        matches!(&self.inner, super::Inner::Gpu(host) if host.fallback.is_some())
    }

    /// A frame's first hits on this GPU engine's CPU fallback, through a grid where the broad
    /// phase would take one; `batch` valid.
    ///
    /// # Errors
    /// [`Error::Cancelled`] once the engine's [`crate::Cancel`] is set (the kernel skips its
    /// chunks then, and `out` is not the answer); [`Error::Gpu`] without a fallback.
    fn first_hits_on_fallback(&mut self, batch: &Batch, out: &mut [FirstHit]) -> Result<()> {
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let super::Inner::Gpu(host) = &mut self.inner else {
            return Err(Error::Gpu("a CPU engine has no fallback".into()));
        };
        let Some(kernel) = host.fallback.as_mut() else {
            return Err(Error::Gpu("this GPU engine has no CPU fallback".into()));
        };
        let (n, m) = (batch.segments.len(), batch.rects.len());
        let grid = &mut self.own_grid;
        let use_grid = self.broad_phase.uses_grid(n, m, false);
        if use_grid {
            kernel.build_rect_grid(grid, batch.rects);
        }
        kernel.first_hit(batch, use_grid.then_some(&*grid), out);
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(())
    }
}
