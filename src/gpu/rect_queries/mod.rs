//! Host side of `shaders/rect_queries.wgsl`: first hit, counts, hit list and clipping. Pipelines are
//! built once, buffers kept between calls and grown only when a batch needs more, and a batch
//! is split into chunks the device can take.
//!
//! Every chunk also returns a `found` list: the hits (hit list) and the pairs the kernel could not
//! decide with certainty. When the list overflows, the host grows it, or splits the chunk when it
//! is at the binding limit, and runs the chunk again: nothing found is ever dropped.

//!
//! `kernels.rs` holds the pipelines and buffers and what a chunk encodes; this module runs the
//! chunks through the ring (`gpu::ring`); `queries.rs` has each query's merge.

mod kernels;
mod queries;

use std::ops::Range;

use crate::cpu::grid::Grid;
use crate::error::Result;
use crate::gpu::buffers::{Growable, PendingRead, Wait};
use crate::gpu::context::GpuContext;
use crate::gpu::grid::{Built, GridBuffers, GridKernels, fits};
use crate::gpu::rect_kernel::RectKernel;
use crate::gpu::ring::{self, CHUNKS_IN_FLIGHT, Submitted};
use crate::gpu::timer::KernelTimer;
use crate::gpu::{GpuLimits, HIT_LIST_LIMIT, OVERLAP_SEGMENTS, WaitLimit};
use crate::query::Batch;
use crate::types::flags;

use super::call::GpuCall;
use kernels::{ChunkOut, FOUND_FIRST_COPY, HIT_LIST_ENTRIES, HIT_LIST_SEGMENTS};
pub use kernels::{DEFAULT_HIT_LIST_CAPACITY, QueryCaps};
pub(crate) use kernels::{QueryBuffers, QueryKernels, Room, StagingLayout, parse_staging};

/// What became of a chunk read back.
enum Outcome {
    /// Read back whole: its found list held this many entries.
    Done(u64),
    /// The found list needed this many entries, more than it holds.
    Overflow(u64),
    /// The list holds all of them (this many), but fewer came back with the chunk.
    Partial(u64),
}

/// A chunk submitted and not yet read back.
struct InFlight {
    segments: Range<usize>,
    rects: Range<usize>,
    /// Its staging buffer in the ring.
    slot: usize,
    layout: StagingLayout,
    /// Found entries copied back with it.
    entries: u64,
    submission: wgpu::SubmissionIndex,
    read: PendingRead,
}

impl Submitted for InFlight {
    fn slot(&self) -> usize {
        self.slot
    }
}

/// The loop iterations a software GPU (lavapipe: Mesa's gallivm, `LP_MAX_TGSI_LOOP_ITERATIONS`)
/// lets one shader invocation run, every loop of the shader counted together, before it
/// silently leaves them: a brute-force query over more rects than fit would miss the rest.
pub const SOFTWARE_LOOP_BUDGET: usize = 65_535;

/// The most loop iterations one rect can cost an invocation of the brute-force kernels
/// (`shaders/rect_queries.wgsl`): its place in the tile scan and the candidate loop, and for a hit
/// two crossing times whose exact division corrects its estimate in two loops of at most 64
/// steps each (`divide_rounded` in `shaders/segment_rect.wgsl`).
pub const LOOP_ITERATIONS_PER_RECT: usize = 2 + 2 * 2 * 64;

/// Rects per dispatch of the brute-force kernels on a software GPU, in whole tiles of 64:
/// within [`SOFTWARE_LOOP_BUDGET`] however many of them are hit, with 1024 iterations to spare
/// for the invocation's other loops (192).
pub const SOFTWARE_RECTS_PER_DISPATCH: usize =
    (SOFTWARE_LOOP_BUDGET - 1024) / LOOP_ITERATIONS_PER_RECT / 64 * 64;

/// The query kernels on one GPU context, with buffers kept between calls.
pub struct GpuRectQueries {
    context: GpuContext,
    /// Rects one invocation of the brute-force kernels may scan in a dispatch: all of them,
    /// but on a software GPU, whose loops stop silently past a budget
    /// ([`SOFTWARE_RECTS_PER_DISPATCH`]).
    rects_per_dispatch: usize,
    kernels: QueryKernels,
    buffers: QueryBuffers,
    /// One staging buffer per chunk in flight.
    staging: Vec<Growable>,
    /// Found entries copied back with each chunk, per kernel: the most one of its chunks has
    /// needed (at least FOUND_FIRST_COPY). A hit list learns its size; first hit and counts,
    /// which list only the rare uncertain pair, stay small.
    found_copy: [u64; RectKernel::ALL.len()],
    call: GpuCall,
    caps: QueryCaps,
    max_binding_bytes: u64,
    /// The device's largest buffer: the staging buffer's cap when it doubles.
    max_buffer_bytes: u64,
    max_workgroups_per_dimension: u32,
    /// Entries the found list is given before its first run.
    initial_found: u64,
    /// Entries it may grow to ([`GpuLimits::hit_list_limit`], within 2^24).
    found_limit: u64,
    /// The hit list's entries a segment found in the chunks read so far (a rect tile's
    /// chunk; 0 before the first): the next chunks take as many segments as fill three
    /// quarters of the found list's limit.
    found_per_segment: f64,
    wait: WaitLimit,
    /// The calls' cancel token ([`set_cancel`](Self::set_cancel)).
    cancel: Option<crate::Cancel>,
    /// Pairs re-decided on the host since creation.
    uncertain_pairs: u64,
    timer: Option<KernelTimer>,
    /// Whether the device binds enough buffers for the broad phase's pipelines.
    grid_supported: bool,
    /// Those pipelines, built by the first call that walks a grid (most calls never do: the
    /// query pipelines alone open faster), and the grid's buffers.
    grid_kernels: Option<GridKernels>,
    grid: GridBuffers,
    /// Whether the last call walked a grid.
    used_grid: bool,
    /// Whether a grid walk's hit list runs are sorted on the GPU ([`GpuLimits::order_on_gpu`]).
    order_on_gpu: bool,
    /// Segments a chunk takes at most ([`GpuLimits::overlap_segments`]).
    overlap_segments: usize,
}

/// A grid for a call: the plan ([`Grid::plan`] or a built grid), and the prepared set it
/// belongs to, if any (its GPU build is then kept for the next call with that set).
#[derive(Clone, Copy, Debug)]
pub struct GridQuery<'a> {
    pub plan: &'a Grid,
    pub set: Option<u64>,
}

impl GpuRectQueries {
    /// Compiles the query pipelines; the broad phase's are compiled by the first call that
    /// walks a grid. Buffers are created on first use.
    ///
    /// # Errors
    /// [`crate::Error::Gpu`] if the shader or a pipeline fails validation on this device.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let kernels = QueryKernels::new(&context)?;
        let buffers = QueryBuffers::new(&context);
        let grid = GridBuffers::new(&context);
        let grid_supported = GridKernels::supported(&context);
        let software = context.is_software();
        Ok(Self {
            rects_per_dispatch: if context.is_software() {
                SOFTWARE_RECTS_PER_DISPATCH
            } else {
                usize::MAX
            },
            caps: QueryCaps::new(max_binding_bytes, max_workgroups_per_dimension),
            max_binding_bytes,
            max_buffer_bytes: context.limits().max_buffer_size,
            max_workgroups_per_dimension,
            initial_found: limits
                .hit_list_capacity
                .unwrap_or(DEFAULT_HIT_LIST_CAPACITY),
            found_limit: limits.hit_list_limit.unwrap_or(HIT_LIST_LIMIT).clamp(
                1,
                QueryCaps::new(max_binding_bytes, max_workgroups_per_dimension)
                    .found
                    .min(HIT_LIST_ENTRIES),
            ),
            found_per_segment: 0.0,
            wait: limits.wait.unwrap_or_default(),
            cancel: None,
            kernels,
            buffers,
            staging: (0..CHUNKS_IN_FLIGHT)
                .map(|_| {
                    Growable::new(
                        "rectcast.queries.staging",
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    )
                })
                .collect(),
            found_copy: [FOUND_FIRST_COPY; RectKernel::ALL.len()],
            call: GpuCall::default(),
            timer: KernelTimer::new(&context, "rectcast.queries"),
            context,
            uncertain_pairs: 0,
            grid_supported,
            grid_kernels: None,
            grid,
            used_grid: false,
            order_on_gpu: limits.order_on_gpu.unwrap_or(!software),
            overlap_segments: limits
                .overlap_segments
                .unwrap_or(if software {
                    usize::MAX
                } else {
                    OVERLAP_SEGMENTS
                })
                .max(1),
        })
    }

    super::timer::wait_and_timing!();
    crate::gpu::buffers::cancel_setter!();

    pub fn uncertain_pairs(&self) -> u64 {
        self.uncertain_pairs
    }

    /// Bytes of GPU memory held between calls.
    pub fn buffer_bytes(&self) -> u64 {
        let b = &self.buffers;
        [
            &b.segments,
            &b.rects,
            &b.segment_filters,
            &b.rect_filters,
            &b.first_hits,
            &b.segment_hits,
            &b.rect_hits,
            &b.found,
        ]
        .into_iter()
        .chain(&self.staging)
        .filter_map(|g| g.buffer.as_ref())
        .map(|b| b.size())
        .sum::<u64>()
            + b.params.size()
            + self.grid.bytes()
    }

    /// Where the last call's host time went, and how its chunks overlapped.
    pub fn last_call(&self) -> GpuCall {
        self.call
    }

    /// Whether the last first-hit, hits or counts call walked a grid (it was given one, the
    /// device binds enough buffers, and the grid and the rects fit one binding each).
    pub fn used_grid(&self) -> bool {
        self.used_grid
    }

    /// Runs `kernel` over the whole batch, chunk by chunk, handing each chunk's outputs to
    /// `sink`. Chunks come in no promised order; each chunk is handed over exactly once.
    /// With a grid, the segments walk it (built on the GPU first, unless it holds this
    /// prepared set's already), when the device and its bindings allow.
    ///
    /// Up to [`CHUNKS_IN_FLIGHT`] chunks are submitted before the first is read back (one at
    /// a time while kernels are timed: the timer waits for each dispatch).
    pub(crate) fn run(
        &mut self,
        kernel: RectKernel,
        batch: &Batch,
        grid: Option<GridQuery>,
        mut sink: impl FnMut(&ChunkOut),
    ) -> Result<()> {
        if let Some(timer) = &mut self.timer {
            timer.start();
        }
        self.used_grid = false;
        self.call = GpuCall::default();
        let n = batch.segments.len();
        let m = batch.rects.len();
        if n == 0 || m == 0 {
            return Ok(());
        }
        let grid = grid.filter(|g| {
            kernel != RectKernel::Clip
                && self.grid_supported
                && m as u64 <= self.caps.rects
                && g.plan.spans.len() == m
                && fits(
                    g.plan,
                    g.plan.planned_entries,
                    self.max_binding_bytes,
                    self.max_workgroups_per_dimension,
                )
        });
        self.kernels
            .prepare(&self.context, kernel, grid.is_some() && self.order_on_gpu)?;
        if grid.is_some() && self.grid_kernels.is_none() {
            self.grid_kernels = GridKernels::new(&self.context, &self.kernels.layout)?;
        }
        self.used_grid = grid.is_some();
        // Built on the first chunk's submission, unless the GPU holds this set's grid.
        let mut build =
            grid.filter(|g| g.set.is_none() || self.grid.built != Built::Set(g.set.unwrap_or(0)));
        if build.is_some() {
            self.grid.built = Built::Nothing;
        }
        // Clip pairs segment i with rect i (or with the one rect): its rect range follows.
        let per_segment_rects = kernel == RectKernel::Clip && m > 1;
        let rect_tile = if kernel == RectKernel::Clip || grid.is_some() {
            m
        } else {
            (self.caps.rects as usize)
                .min(m)
                .min(self.rects_per_dispatch)
        };
        // Chunks in order, each segment range over every rect tile; a hit list's ranges as
        // long as its learned hits a segment allow, learned again as chunks come back.
        let segment_tile = std::cell::Cell::new(self.segment_tile(kernel, n));
        let clip_tile = self.segment_tile(kernel, n);
        let (mut next, mut current, mut r) = (0, 0..0, m);
        let work = std::iter::from_fn(|| {
            if kernel == RectKernel::Clip {
                let segments = next..(next + clip_tile).min(n);
                next = segments.end;
                let rects = if per_segment_rects {
                    segments.clone()
                } else {
                    0..1
                };
                return (!segments.is_empty()).then_some((segments, rects));
            }
            if r >= m {
                if next >= n {
                    return None;
                }
                current = next..(next + segment_tile.get()).min(n);
                next = current.end;
                r = 0;
            }
            let rects = r..(r + rect_tile).min(m);
            r = rects.end;
            Some((current.clone(), rects))
        });
        let found = std::cell::Cell::new(
            self.buffers
                .found_capacity()
                .max(self.initial_found)
                .min(self.found_limit),
        );
        let size = ring::ring_size(self.timer.as_ref());
        let steps = ring::Steps {
            submit: |this: &mut Self, (segments, rects): (Range<usize>, Range<usize>), slot| {
                // A chunk split by rects (a found list at its binding limit for one segment)
                // runs the brute force: the grid covers every rect, under global indices.
                let whole = rects.start == 0 && rects.end == m;
                let walk = grid.filter(|_| whole).map(|g| (g, build.take()));
                let chunk =
                    this.submit_chunk(kernel, batch, segments, rects, found.get(), walk, slot)?;
                this.call.chunks += 1;
                Ok(Some(chunk))
            },
            finish: |this: &mut Self, chunk: InFlight, newest, again: &mut Vec<_>| {
                let segments = chunk.segments.clone();
                let rects = chunk.rects.clone();
                let outcome = this.finish_chunk(kernel, chunk, newest, &mut sink)?;
                if let Outcome::Done(count) | Outcome::Overflow(count) = outcome {
                    this.learn(kernel, segments.len(), count);
                    segment_tile.set(this.segment_tile(kernel, n));
                }
                match outcome {
                    Outcome::Done(_) => {}
                    Outcome::Partial(count) => {
                        // Later chunks have overwritten its list: the same chunk again, with
                        // all of its entries copied back (and those of the chunks after it).
                        this.found_copy[kernel.index()] =
                            count.max(this.found_copy[kernel.index()]);
                        again.push((segments, rects));
                    }
                    Outcome::Overflow(needed) if needed <= this.found_limit => {
                        // Room for all of them, and the same chunk again.
                        found.set(found.get().max(needed));
                        this.found_copy[kernel.index()] =
                            needed.max(this.found_copy[kernel.index()]);
                        again.push((segments, rects));
                    }
                    Outcome::Overflow(needed) => {
                        // Past the list's limit: split the chunk's segments into parts that
                        // fill three quarters of it (clip's rects follow its segments); one
                        // segment's rects in halves. One pair finds at most one entry, so
                        // this ends.
                        let half = |r: &Range<usize>| r.start + r.len() / 2;
                        if segments.len() > 1 {
                            let room = (this.found_limit * 3 / 4).max(1);
                            let parts = needed.div_ceil(room).clamp(2, segments.len() as u64);
                            let len = segments.len().div_ceil(parts as usize);
                            let split = |s: Range<usize>| {
                                let r = if per_segment_rects {
                                    s.clone()
                                } else {
                                    rects.clone()
                                };
                                (s, r)
                            };
                            // Pushed last first: `again` is taken from its end.
                            let starts: Vec<usize> = segments.clone().step_by(len).collect();
                            for &s in starts.iter().rev() {
                                again.push(split(s..(s + len).min(segments.end)));
                            }
                        } else {
                            let mid = half(&rects);
                            again.push((segments.clone(), mid..rects.end));
                            again.push((segments, rects.start..mid));
                        }
                    }
                }
                Ok(())
            },
            // On an error, the chunks still in flight give their maps up: the staging buffers
            // are free for the next call.
            cancel: |this: &mut Self, chunk: InFlight| {
                chunk
                    .read
                    .cancel(&this.context, this.staging[chunk.slot].get());
            },
        };
        let token = self.cancel.clone();
        let outcome = ring::run(self, size, work, steps, token.as_ref());
        outcome?;
        if let Some(GridQuery { set: Some(id), .. }) = grid {
            self.grid.built = Built::Set(id);
        }
        Ok(())
    }

    /// Segments a chunk of `kernel` over `n` segments takes: the most a dispatch and the
    /// overlap allow, in chunks of even size; for a hit list, within what its offsets' prefix
    /// sum takes, as many as fill three quarters of the found list's limit at the hits a
    /// segment found so far.
    fn segment_tile(&self, kernel: RectKernel, n: usize) -> usize {
        let most = (self.caps.segments as usize).min(self.overlap_segments);
        if kernel != RectKernel::Hits {
            let chunks = n.div_ceil(most).max(1);
            return n.div_ceil(chunks).max(1);
        }
        let most = most.min(HIT_LIST_SEGMENTS as usize);
        if self.found_per_segment <= 0.0 {
            return most;
        }
        let fits = (self.found_limit as f64 * 0.75 / self.found_per_segment) as usize;
        fits.clamp(1, most)
    }

    /// Learns a hit list's entries a segment from a chunk of `segments` that found `count`.
    fn learn(&mut self, kernel: RectKernel, segments: usize, count: u64) {
        if kernel == RectKernel::Hits && segments > 0 {
            self.found_per_segment = count as f64 / segments as f64;
        }
    }

    /// Uploads and dispatches one chunk with a found list of at least `found` entries, copies
    /// its outputs into staging buffer `slot`, submits, and asks for the map: the GPU runs it
    /// while the host goes on. With `walk`, the segments walk the grid, built first when it
    /// comes with a plan to build.
    #[allow(
        clippy::too_many_arguments,
        reason = "a chunk's inputs, its slot and its grid walk, each its own"
    )]
    fn submit_chunk(
        &mut self,
        kernel: RectKernel,
        batch: &Batch,
        segments: Range<usize>,
        rects: Range<usize>,
        found: u64,
        walk: Option<(GridQuery, Option<GridQuery>)>,
        slot: usize,
    ) -> Result<InFlight> {
        let context = self.context.clone();
        let device = &context.device;
        let room = Room {
            segments: segments.len(),
            rects: rects.len(),
            found,
        };
        let cap = self.max_binding_bytes;
        let started = std::time::Instant::now();
        let (submission, layout, entries, read) = context.scoped(|| {
            self.buffers
                .reserve(device, &self.kernels.layout, room, cap);
            self.buffers
                .upload(&context.queue, batch, &segments, &rects);
            // The found entries that come back with the chunk.
            let entries = self.found_copy[kernel.index()].min(self.buffers.found_capacity());
            let layout = StagingLayout::new(kernel, segments.len(), rects.len(), entries);
            self.staging[slot].reserve(device, layout.bytes(), self.max_buffer_bytes);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rectcast.queries.encoder"),
            });
            let kernels = self.grid_kernels.as_ref();
            if let (Some(kernels), Some((_, Some(build)))) = (kernels, walk) {
                self.grid.encode_build(
                    &context,
                    kernels,
                    self.buffers.bind_group(),
                    build.plan,
                    build.plan.planned_entries,
                    self.max_binding_bytes,
                    self.max_workgroups_per_dimension,
                    &mut encoder,
                );
            }
            let grid_walk = match (kernels, &self.grid.bind_group, walk) {
                (Some(kernels), Some(group), Some(_)) => Some((kernels.walk(kernel), group)),
                _ => None,
            };
            self.buffers.encode_dispatch(
                &mut encoder,
                &self.kernels,
                kernel,
                grid_walk,
                self.order_on_gpu,
                segments.len(),
                self.max_workgroups_per_dimension,
                self.timer.as_ref(),
            );
            // The copies follow the dispatch in the same submission: the next chunk's upload
            // and dispatch come after them on the queue.
            let staging = self.staging[slot].get();
            self.buffers.encode_copies(&mut encoder, staging, &layout);
            let submission = context.queue.submit([encoder.finish()]);
            let read = PendingRead::start(staging, layout.bytes());
            Ok((submission, layout, entries, read))
        })?;
        self.call.submitting += started.elapsed();
        let chunk = InFlight {
            segments,
            rects,
            slot,
            layout,
            entries,
            submission,
            read,
        };
        let wait = self.wait_for(kernel, &chunk);
        if let Some(timer) = &mut self.timer {
            // Waits for the kernel (only when timing is on: then chunks go one at a time).
            if let Err(e) = timer.read(&context, chunk.submission.clone(), wait) {
                chunk.read.cancel(&context, self.staging[slot].get());
                return Err(e);
            }
        }
        Ok(chunk)
    }

    /// How long the host waits for `chunk`.
    fn wait_for(&self, kernel: RectKernel, chunk: &InFlight) -> Wait {
        Wait {
            step: kernel.step(),
            limit: self
                .wait
                .for_pairs((chunk.segments.len() as u64) * (chunk.rects.len() as u64)),
            cancel: self.cancel.clone(),
        }
    }

    /// Waits for `chunk`'s map and hands its outputs to `sink`, unless its found list
    /// overflowed, or held more than came back. When `last` (no chunk was submitted after
    /// it, so its list is intact), the rest of the list is copied back at once instead.
    fn finish_chunk(
        &mut self,
        kernel: RectKernel,
        chunk: InFlight,
        last: bool,
        sink: &mut impl FnMut(&ChunkOut),
    ) -> Result<Outcome> {
        let context = self.context.clone();
        let device = &context.device;
        let wait = self.wait_for(kernel, &chunk);
        let capacity = self.buffers.found_capacity();
        let mut entries = chunk.entries;
        let mut layout = chunk.layout;
        let mut pending = Some((chunk.read, chunk.submission));
        loop {
            let (read, submission) = match pending.take() {
                Some(pending) => pending,
                None => {
                    // Copy back the whole list (the chunk's outputs are intact too).
                    layout = StagingLayout::new(
                        kernel,
                        chunk.segments.len(),
                        chunk.rects.len(),
                        entries,
                    );
                    context.scoped(|| {
                        let staging = &mut self.staging[chunk.slot];
                        staging.reserve(device, layout.bytes(), self.max_buffer_bytes);
                        let mut encoder =
                            device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("rectcast.queries.readback"),
                            });
                        self.buffers
                            .encode_copies(&mut encoder, staging.get(), &layout);
                        let submission = context.queue.submit([encoder.finish()]);
                        Ok((
                            PendingRead::start(staging.get(), layout.bytes()),
                            submission,
                        ))
                    })?
                }
            };
            let mut count = 0;
            let mut uncertain = 0;
            self.call.read(
                read,
                &context,
                self.staging[chunk.slot].get(),
                submission,
                wait.clone(),
                |mapped| {
                    let (out, found) =
                        parse_staging(mapped, &layout, chunk.segments.clone(), chunk.rects.clone());
                    count = found;
                    if found <= entries {
                        let listed = out.found.iter().map(|h| &h.result);
                        let ordered = out.first_hits.iter().map(|h| &h.result);
                        let ordered = ordered.filter(|_| layout.ordered);
                        uncertain = listed
                            .chain(ordered)
                            .filter(|r| r.flags == flags::UNCERTAIN)
                            .count() as u64;
                        sink(&out);
                    }
                },
            )?;
            if count > capacity {
                return Ok(Outcome::Overflow(count));
            }
            if count <= entries {
                self.uncertain_pairs += uncertain;
                return Ok(Outcome::Done(count));
            }
            if !last {
                return Ok(Outcome::Partial(count));
            }
            entries = count;
        }
    }
}
