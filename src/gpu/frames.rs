//! Per-frame first-hit queries for games: buffers, bind group and a ring of staging buffers made
//! once, then every frame write, dispatch, and read the results a frame later without stalling.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use super::buffers::Growable;
use super::context::GpuContext;
use super::grid::{GridBuffers, GridKernels, fits};
use super::rect_kernel::RectKernel;
use super::rect_queries::{QueryBuffers, QueryKernels, Room, StagingLayout, parse_staging};
use super::{GpuLimits, WaitLimit};
use crate::broad_phase::BroadPhase;
use crate::cpu::grid::Grid;
use crate::cpu::rect_queries::beats;
use crate::cpu::segment_rect::segment_rect;
use crate::error::{Error, Result};
use crate::query::{Batch, Skipped, StandIns};
use crate::types::{Filter, FirstHit, Rect, Segment, flags};

/// A slot's staging buffer is free, waiting for its map, mapped, or its map failed.
const IDLE: u8 = 0;
const PENDING: u8 = 1;
const MAPPED: u8 = 2;
const FAILED: u8 = 3;

/// A dispatched frame, to read its results with [`Frames::try_read`] or [`Frames::read`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameId(pub(crate) u64);

/// The most a frame may hold; buffers are sized for it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameCapacity {
    pub segments: usize,
    pub rects: usize,
    /// Staging buffers: frames that may be in flight at once (2 or 3 for a game).
    pub ring: usize,
    /// Pairs per frame the kernel may leave to the host's exact path before the host redoes
    /// the whole frame on the CPU (default with [`FrameCapacity::new`]: 1024).
    pub uncertain: usize,
}

impl FrameCapacity {
    pub fn new(segments: usize, rects: usize) -> Self {
        Self {
            segments,
            rects,
            ring: 3,
            uncertain: 1024,
        }
    }
}

/// One staging buffer of the ring, with copies of its frame's inputs (the host decides the
/// pairs the kernel left uncertain from them, after later frames overwrote the GPU's).
struct Slot {
    staging: wgpu::Buffer,
    state: Arc<AtomicU8>,
    frame: u64,
    /// The submission that holds the frame, when known: a read waits for it and nothing later.
    submission: Option<wgpu::SubmissionIndex>,
    segments: Vec<Segment>,
    rects: Vec<Rect>,
    /// The filters, when the frame has them (`None` leaves the reserved vector alone).
    segment_filters: (bool, Vec<Filter>),
    rect_filters: (bool, Vec<Filter>),
    /// Its frame was answered on the host after a read timed out ([`Frames::answer_on_host`]):
    /// the GPU's results for it are dropped unread, and the slot is freed once the GPU is
    /// done with it.
    answered: bool,
}

/// Closest hit per segment, frame after frame, on one GPU context.
///
/// ```no_run
/// # use rectcast::{Batch, FirstHit, GpuContext, Segment, Rect};
/// # use rectcast::gpu::frames::{FrameCapacity, Frames};
/// # fn main() -> rectcast::Result<()> {
/// let context = GpuContext::new()?;
/// let mut frames = Frames::new(&context, FrameCapacity::new(10_000, 1_000))?;
/// let mut hits = vec![FirstHit::NONE; 10_000];
/// let mut previous = None;
/// for _frame in 0..3 {
///     # let (bullets, hitboxes): (Vec<Segment>, Vec<Rect>) = (vec![], vec![]);
///     frames.write(&Batch::new(&bullets, &hitboxes))?;
///     let id = frames.dispatch()?;
///     // Last frame's results, ready by now: no stall.
///     if let Some(previous) = previous {
///         frames.read(previous, &mut hits)?;
///     }
///     previous = Some(id);
/// }
/// # Ok(()) }
/// ```
///
/// To record into your own encoder, call [`encode`](Self::encode), submit, then
/// [`submitted`](Self::submitted). [`first_hits_buffer`](Self::first_hits_buffer) holds the last
/// dispatched frame's `FirstHit` records (WGSL struct `FirstHit` in
/// [`crate::gpu::shader::RECT_QUERIES_WGSL`]) for your own shaders; a record whose flags are exactly
/// `FLAG_UNCERTAIN` is one the host decides on read.
///
/// Steady state allocates nothing in rectcast: the inputs are copied into buffers sized at
/// creation. (wgpu itself allocates a few small objects per submit and map.)
pub struct Frames {
    context: GpuContext,
    kernels: QueryKernels,
    buffers: QueryBuffers,
    capacity: FrameCapacity,
    max_workgroups_per_dimension: u32,
    ring: Vec<Slot>,
    /// The frame `write` filled, not yet encoded: its sizes, and whether it walks a grid.
    written: Option<(usize, usize, bool)>,
    next_frame: u64,
    uncertain_pairs: u64,
    frames_redone: u64,
    /// The broad phase: the setting, the grid's kernels (`None` where the device binds too
    /// few buffers) and buffers, the plan of the written frame's grid, and whether the last
    /// encoded frame walked one.
    broad_phase: BroadPhase,
    /// Built with the loop when its capacity lets `BroadPhase::Auto` walk a grid (a game
    /// then never waits for them mid-loop), else at the first frame that walks one.
    grid_kernels: Option<GridKernels>,
    /// Whether the device binds enough buffers for the grid's kernels.
    grid_supported: bool,
    grid: GridBuffers,
    plan: Grid,
    max_binding_bytes: u64,
    used_grid: bool,
    /// What the last write skipped ([`Batch::skip_invalid`]), and the stand-ins it wrote.
    skipped: Skipped,
    stand_ins: StandIns,
    /// How long a read waits for its frame.
    wait: WaitLimit,
}

impl Frames {
    /// Compiles the kernels and makes every buffer for `capacity`: the first hit's pipeline,
    /// and the grid's when `capacity` lets `BroadPhase::Auto` walk one (else at the first
    /// frame that walks one: with `BroadPhase::On`).
    ///
    /// # Errors
    /// [`Error::Gpu`] when the kernels do not build or a buffer exceeds the device's limits.
    pub fn new(context: &GpuContext, capacity: FrameCapacity) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) =
            GpuLimits::default().resolve(context);
        let kernels = QueryKernels::new(context)?;
        kernels.prepare(context, RectKernel::FirstHit, false)?;
        let grid_supported = GridKernels::supported(context);
        let grid_kernels =
            match BroadPhase::Auto.uses_grid(capacity.segments, capacity.rects, false) {
                true => GridKernels::new(context, &kernels.layout)?,
                false => None,
            };
        let mut buffers = QueryBuffers::new(context);
        let layout = StagingLayout::new(
            RectKernel::FirstHit,
            capacity.segments,
            capacity.rects,
            capacity.uncertain as u64,
        );
        let device = &context.device;
        let ring = context.scoped(|| {
            let room = Room {
                segments: capacity.segments,
                rects: capacity.rects,
                found: capacity.uncertain as u64,
            };
            buffers.reserve(device, &kernels.layout, room, max_binding_bytes);
            Ok((0..capacity.ring.max(1))
                .map(|_| {
                    let mut staging = Growable::new(
                        "rectcast.frames.staging",
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    );
                    staging.reserve(device, layout.bytes(), u64::MAX);
                    Slot {
                        staging: staging.get().clone(),
                        state: Arc::new(AtomicU8::new(IDLE)),
                        frame: 0,
                        submission: None,
                        segments: Vec::with_capacity(capacity.segments),
                        rects: Vec::with_capacity(capacity.rects),
                        segment_filters: (false, Vec::with_capacity(capacity.segments)),
                        rect_filters: (false, Vec::with_capacity(capacity.rects)),
                        answered: false,
                    }
                })
                .collect())
        })?;
        Ok(Self {
            context: context.clone(),
            kernels,
            buffers,
            capacity,
            max_workgroups_per_dimension,
            ring,
            written: None,
            next_frame: 0,
            uncertain_pairs: 0,
            frames_redone: 0,
            broad_phase: BroadPhase::Auto,
            grid_kernels,
            grid_supported,
            grid: GridBuffers::new(context),
            plan: Grid::default(),
            max_binding_bytes,
            used_grid: false,
            skipped: Skipped::default(),
            stand_ins: StandIns::default(),
            wait: WaitLimit::default(),
        })
    }

    /// Whether frames find each segment's candidates through a grid, built on the GPU in the
    /// frame's own submission (no round trip): `Auto` by default, which uses one from
    /// [`crate::AUTO_MIN_RECTS`] rects and [`crate::AUTO_MIN_SEGMENTS`] segments. Applies from
    /// the next [`write`](Self::write).
    pub fn set_broad_phase(&mut self, broad_phase: BroadPhase) {
        self.broad_phase = broad_phase;
    }

    /// Whether the last encoded frame walked a grid.
    pub fn used_broad_phase(&self) -> bool {
        self.used_grid
    }

    /// How long [`read`](Self::read) waits for a frame from now on (default
    /// [`WaitLimit::default`]): past it the read returns [`Error::Timeout`].
    pub fn set_wait(&mut self, wait: WaitLimit) {
        self.wait = wait;
    }

    fn slot_of(&self, frame: u64) -> usize {
        (frame % self.ring.len() as u64) as usize
    }

    /// Writes this frame's segments, rects and filters (validated, within the capacity). The
    /// upload happens at the next submit on the queue.
    ///
    /// Under [`Batch::skip_invalid`] its invalid segments and rects miss, and
    /// [`last_skipped`](Self::last_skipped) lists them.
    ///
    /// # Errors
    /// [`Error::Input`] (unless skipped), [`Error::FilterLength`]; [`Error::FrameCapacity`] when the batch is
    /// larger than the capacity; [`Error::RingFull`] when the slot this frame needs still
    /// holds an unread frame.
    pub fn write(&mut self, batch: &Batch) -> Result<()> {
        let mut stand_ins = std::mem::take(&mut self.stand_ins);
        let mut skipped = std::mem::take(&mut self.skipped);
        let outcome = batch
            .admitted(&mut stand_ins, &mut skipped)
            .and_then(|batch| self.write_admitted(&batch));
        if outcome.is_err() {
            skipped.clear();
        }
        self.stand_ins = stand_ins;
        self.skipped = skipped;
        outcome
    }

    /// What the last [`write`](Self::write) skipped: a batch's invalid segments and rects under
    /// [`Batch::skip_invalid`] (they miss), and its rect set's invalid ones; empty after a write
    /// that failed.
    pub fn last_skipped(&self) -> &Skipped {
        &self.skipped
    }

    fn write_admitted(&mut self, batch: &Batch) -> Result<()> {
        let (n, m) = (batch.segments.len(), batch.rects.len());
        if n > self.capacity.segments || m > self.capacity.rects {
            return Err(Error::FrameCapacity {
                segments: n,
                rects: m,
                capacity_segments: self.capacity.segments,
                capacity_rects: self.capacity.rects,
            });
        }
        let index = self.slot_of(self.next_frame);
        self.reclaim(index);
        let slot = &mut self.ring[index];
        if slot.state.load(Ordering::Acquire) != IDLE {
            return Err(Error::RingFull {
                frame: slot.frame,
                ring: self.ring.len(),
            });
        }
        // Within the capacity reserved at creation: no allocation.
        slot.segments.clear();
        slot.segments.extend_from_slice(batch.segments);
        slot.rects.clear();
        slot.rects.extend_from_slice(batch.rects);
        copy_filters(&mut slot.segment_filters, batch.segment_filters);
        copy_filters(&mut slot.rect_filters, batch.rect_filters);
        let mut grid = false;
        if n > 0 && m > 0 {
            self.buffers
                .upload(&self.context.queue, batch, &(0..n), &(0..m));
            let wants_grid = self.grid_supported && self.broad_phase.uses_grid(n, m, false);
            if wants_grid && self.grid_kernels.is_none() {
                self.grid_kernels = GridKernels::new(&self.context, &self.kernels.layout)?;
            }
            if wants_grid && self.grid_kernels.is_some() {
                // Sized on the host, from the rects it holds; listed on the GPU at encode.
                let entries = self.plan.plan(batch.rects);
                grid = fits(
                    &self.plan,
                    entries,
                    self.max_binding_bytes,
                    self.max_workgroups_per_dimension,
                );
            }
        }
        self.written = Some((n, m, grid));
        Ok(())
    }

    /// Records the written frame's dispatch, and the copy of its results into the ring, into
    /// `encoder`. Submit it, then call [`submitted`](Self::submitted).
    ///
    /// # Errors
    /// [`Error::NothingWritten`] when no frame was written since the last encode.
    pub fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) -> Result<FrameId> {
        let (n, m, grid) = self.written.take().ok_or(Error::NothingWritten)?;
        let frame = self.next_frame;
        self.next_frame += 1;
        let index = self.slot_of(frame);
        let slot = &mut self.ring[index];
        slot.frame = frame;
        self.used_grid = false;
        if n > 0 && m > 0 {
            let mut walk = None;
            if let (true, Some(kernels)) = (grid, &self.grid_kernels) {
                self.grid.encode_build(
                    &self.context,
                    kernels,
                    self.buffers.bind_group(),
                    &self.plan,
                    self.plan.planned_entries,
                    self.max_binding_bytes,
                    self.max_workgroups_per_dimension,
                    encoder,
                );
                self.grid.built = super::grid::Built::Nothing;
                walk = self
                    .grid
                    .bind_group
                    .as_ref()
                    .map(|group| (kernels.walk(RectKernel::FirstHit), group));
                self.used_grid = walk.is_some();
            }
            self.buffers.encode_dispatch(
                encoder,
                &self.kernels,
                RectKernel::FirstHit,
                walk,
                false,
                n,
                self.max_workgroups_per_dimension,
                None,
            );
            let layout =
                StagingLayout::new(RectKernel::FirstHit, n, m, self.capacity.uncertain as u64);
            self.buffers.encode_copies(encoder, &slot.staging, &layout);
        }
        Ok(FrameId(frame))
    }

    /// Starts reading `frame` back, once the encoder [`encode`](Self::encode) recorded into has
    /// been submitted. A [`read`](Self::read) of it then waits for everything submitted so far;
    /// [`submitted_with`](Self::submitted_with) lets it wait for the frame's own submission
    /// only.
    pub fn submitted(&mut self, frame: FrameId) {
        self.submitted_as(frame, None);
    }

    /// [`submitted`](Self::submitted), with the index `Queue::submit` returned for the encoder:
    /// a [`read`](Self::read) of the frame waits for that submission, not for the frames and
    /// work submitted after it.
    pub fn submitted_with(&mut self, frame: FrameId, submission: wgpu::SubmissionIndex) {
        self.submitted_as(frame, Some(submission));
    }

    fn submitted_as(&mut self, frame: FrameId, submission: Option<wgpu::SubmissionIndex>) {
        let index = self.slot_of(frame.0);
        let slot = &mut self.ring[index];
        slot.submission = submission;
        let state = slot.state.clone();
        state.store(PENDING, Ordering::Release);
        slot.staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                state.store(
                    if result.is_ok() { MAPPED } else { FAILED },
                    Ordering::Release,
                );
            });
    }

    /// Encodes the written frame in an encoder of its own, submits it, and starts its readback.
    ///
    /// # Errors
    /// As [`encode`](Self::encode); GPU errors.
    pub fn dispatch(&mut self) -> Result<FrameId> {
        let context = self.context.clone();
        let (frame, submission) = context.scoped(|| {
            let mut encoder =
                context
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("rectcast.frames.encoder"),
                    });
            let frame = self.encode(&mut encoder)?;
            Ok((frame, context.queue.submit([encoder.finish()])))
        })?;
        self.submitted_with(frame, submission);
        Ok(frame)
    }

    /// Copies `frame`'s closest hits into `out` (one per segment of that frame) if the GPU has
    /// finished it, without waiting: `Ok(false)` when it has not.
    ///
    /// # Errors
    /// [`Error::OutputLength`]; [`Error::BufferMap`]; [`Error::UnknownFrame`] for a frame that
    /// was already read or never submitted.
    pub fn try_read(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<bool> {
        self.context.device.poll(wgpu::PollType::Poll)?;
        self.read_if_ready(frame, out)
    }

    /// Waits for `frame` and copies its closest hits into `out`. The wait is for the frame's
    /// own submission (made by [`dispatch`](Self::dispatch), or named with
    /// [`submitted_with`](Self::submitted_with)), so a frame read while the next one runs
    /// does not wait for it.
    ///
    /// # Errors
    /// As [`try_read`](Self::try_read);
    /// [`Error::Timeout`] past the wait limit ([`set_wait`](Self::set_wait)) for the frame's
    /// pairs; the frame stays in flight, and a later `read` or `try_read` may still get it.
    pub fn read(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<()> {
        // A frame already read, or a wrong output, is an error at once, not after a wait.
        unread_slot(&mut self.ring, frame, out.len())?;
        let slot = &self.ring[self.slot_of(frame.0)];
        let pairs = (slot.segments.len() * slot.rects.len()) as u64;
        let submission = slot.submission.clone().filter(|_| slot.frame == frame.0);
        let limit = self.wait.for_pairs(pairs);
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let timeout = Error::Timeout {
                step: "a frame",
                waited: limit,
            };
            match self.context.device.poll(wgpu::PollType::Wait {
                submission_index: submission.clone(),
                timeout: Some(left),
            }) {
                // A lost device is said as such (a CPU fallback then answers the frame).
                Err(wgpu::PollError::Timeout) => return Err(self.lost_or(timeout)),
                Err(e) => return Err(self.lost_or(e.into())),
                Ok(_) => {}
            };
            if self.read_if_ready(frame, out)? {
                return Ok(());
            }
            if left.is_zero() {
                return Err(timeout);
            }
        }
    }

    fn read_if_ready(&mut self, frame: FrameId, out: &mut [FirstHit]) -> Result<bool> {
        let (slot, state) = unread_slot(&mut self.ring, frame, out.len())?;
        // On a lost device the buffer is neither read nor unmapped (either raises an error, a
        // panic on a device whose owner handles none), and the slot stays taken: a CPU
        // fallback answers the frame from its inputs, and the next write frees the slot.
        if let Some(lost) = self.context.lost() {
            return Err(lost);
        }
        match state {
            PENDING => return Ok(false),
            FAILED => {
                slot.state.store(IDLE, Ordering::Release);
                return Err(Error::Gpu(format!(
                    "frame {}: reading results failed",
                    frame.0
                )));
            }
            _ => {}
        }
        let (n, m) = (slot.segments.len(), slot.rects.len());
        let layout = StagingLayout::new(RectKernel::FirstHit, n, m, self.capacity.uncertain as u64);
        let mut overflow = false;
        let mut uncertain = 0;
        if n > 0 && m > 0 {
            let view = match slot.staging.slice(..layout.bytes()).get_mapped_range() {
                Ok(view) => view,
                Err(e) => {
                    // Mapped, and yet unreadable: the buffer or its device is gone (a device
                    // destroyed or lost, before its lost callback ran). The unmap goes inside
                    // an error scope: its error must not reach a handler the device's owner
                    // may not have set, which panics. The slot stays taken, its readback
                    // failed: a CPU fallback answers the frame from its inputs, and the next
                    // write that needs the slot frees it.
                    self.context.unmap_scoped(&slot.staging);
                    slot.state.store(FAILED, Ordering::Release);
                    return Err(self.context.lost().unwrap_or_else(|| {
                        Error::DeviceLost(format!(
                            "frame {}'s results are unreadable: {e}",
                            frame.0
                        ))
                    }));
                }
            };
            let (chunk, count) = parse_staging(&view, &layout, 0..n, 0..m);
            out.copy_from_slice(chunk.first_hits);
            overflow = count > self.capacity.uncertain as u64;
            uncertain = count;
            if !overflow {
                let batch = slot_batch(slot);
                for h in chunk.found {
                    let (s, r) = (h.segment as usize, h.rect as usize);
                    let result = segment_rect(&batch.segments[s], &batch.rects[r]);
                    let hit = result.flags & flags::HIT != 0;
                    if hit && beats(&batch.segments[s], batch.rects, h.rect, &result, &out[s]) {
                        out[s] = FirstHit {
                            rect: h.rect,
                            result,
                        };
                    }
                }
            }
        } else {
            out.fill(FirstHit::NONE);
        }
        self.context.unmap_read(&slot.staging);
        slot.state.store(IDLE, Ordering::Release);
        if overflow {
            // More uncertain pairs than the list holds: the whole frame, exactly, on the CPU.
            crate::cpu::rect_queries::segment_rects(
                crate::cpu::rect_queries::query::QUERY_FIRST_HIT,
                &slot_batch(slot),
                &mut crate::cpu::rect_queries::QueryOutputs {
                    first_hits: out,
                    segment_hits: &mut [],
                    rect_hits: &mut [],
                    found: &mut Vec::new(),
                },
            );
            self.frames_redone += 1;
        }
        self.uncertain_pairs += uncertain;
        Ok(true)
    }

    /// Answers `frame`, dispatched and not read, on the host instead: `answer` gets the frame's
    /// inputs (as written, invalid ones already stand-ins) and `out`, one per segment. The
    /// GPU's results for it are dropped unread; its slot is freed when a write needs it and
    /// the GPU is done with it. For a frame whose read timed out, where the engine has a CPU
    /// fallback ([`crate::FrameLoop::read`]).
    ///
    /// # Errors
    /// [`Error::OutputLength`]; [`Error::UnknownFrame`] for a frame already read or never
    /// submitted.
    pub(crate) fn answer_on_host(
        &mut self,
        frame: FrameId,
        out: &mut [FirstHit],
        answer: impl FnOnce(&Batch, &mut [FirstHit]) -> Result<()>,
    ) -> Result<()> {
        let (slot, _) = unread_slot(&mut self.ring, frame, out.len())?;
        // An answer that fails (a cancelled call) leaves the frame unread.
        answer(&slot_batch(slot), out)?;
        slot.answered = true;
        Ok(())
    }

    /// `e`, or [`Error::DeviceLost`] when the device is lost.
    fn lost_or(&self, e: Error) -> Error {
        self.context.lost().unwrap_or(e)
    }

    /// Frees slot `index` if its frame was answered on the host and the GPU is done with it,
    /// waiting for the GPU up to the wait limit: a slot still in flight after that stays taken
    /// (the write then finds the ring full). On a lost device every slot is freed, read or
    /// not, and nothing is unmapped: the write then fails on the device, not on the ring.
    fn reclaim(&mut self, index: usize) {
        let slot = &mut self.ring[index];
        if self.context.lost().is_some() {
            slot.state.store(IDLE, Ordering::Release);
            slot.answered = false;
            return;
        }
        if !slot.answered {
            return;
        }
        let limit = self
            .wait
            .for_pairs((slot.segments.len() * slot.rects.len()) as u64);
        // An error here (a lost device, a timeout) leaves the state as it is, which decides.
        let _ = self.context.device.poll(wgpu::PollType::Wait {
            submission_index: slot.submission.clone(),
            timeout: Some(limit),
        });
        let slot = &mut self.ring[index];
        match slot.state.load(Ordering::Acquire) {
            MAPPED => {
                let staging = &slot.staging;
                // Scoped, as on a read: no error of it reaches the device's handler.
                self.context.unmap_scoped(staging);
            }
            FAILED => {}
            _ => return,
        }
        slot.state.store(IDLE, Ordering::Release);
        slot.answered = false;
    }

    /// The buffer of `FirstHit` records (one per segment) the last dispatched frame writes, for
    /// binding in your own shaders after it in the same submit.
    pub fn first_hits_buffer(&self) -> &wgpu::Buffer {
        self.buffers.first_hits()
    }

    /// Pairs the kernel left to the host's exact path since creation.
    pub fn uncertain_pairs(&self) -> u64 {
        self.uncertain_pairs
    }

    /// Frames whose uncertain pairs overflowed the list, so the host redid them on the CPU.
    pub fn frames_redone(&self) -> u64 {
        self.frames_redone
    }
}

/// The slot of `frame`, dispatched and not read yet, and its state, for an output of `out_len`
/// first hits.
///
/// # Errors
/// [`Error::UnknownFrame`] for a frame already read or never submitted;
/// [`Error::OutputLength`] when `out_len` is not the frame's segments.
fn unread_slot(ring: &mut [Slot], frame: FrameId, out_len: usize) -> Result<(&mut Slot, u8)> {
    let index = (frame.0 % ring.len() as u64) as usize;
    let slot = &mut ring[index];
    let state = slot.state.load(Ordering::Acquire);
    if slot.frame != frame.0 || state == IDLE || slot.answered {
        return Err(Error::UnknownFrame(frame.0));
    }
    if out_len != slot.segments.len() {
        return Err(Error::OutputLength {
            expected: slot.segments.len(),
            got: out_len,
        });
    }
    Ok((slot, state))
}

fn copy_filters(copy: &mut (bool, Vec<Filter>), filters: Option<&[Filter]>) {
    copy.0 = filters.is_some();
    copy.1.clear();
    copy.1.extend_from_slice(filters.unwrap_or_default());
}

fn slot_batch(slot: &Slot) -> Batch<'_> {
    Batch {
        segments: &slot.segments,
        rects: &slot.rects,
        segment_filters: slot
            .segment_filters
            .0
            .then_some(&slot.segment_filters.1[..]),
        rect_filters: slot.rect_filters.0.then_some(&slot.rect_filters.1[..]),
        ..Batch::default()
    }
}
