//! Host side of `shaders/queries.wgsl`: first hit, counts, hit list and clipping. Pipelines are
//! built once, buffers kept between calls and grown only when a batch needs more, and a batch
//! is split into chunks the device can take.
//!
//! Every chunk also returns a `found` list: the hits (hit list) and the pairs the kernel could not
//! decide with certainty. When the list overflows, the host grows it, or splits the chunk when it
//! is at the binding limit, and runs the chunk again: nothing found is ever dropped.

use std::ops::Range;

use super::buffers::{
    Growable, PendingRead, Wait, compute_pipeline, entry, storage_entry, uniform_entry,
};
use super::chunks::workgroup_grid;
use super::context::GpuContext;
use super::grid::{Built, GridBuffers, GridKernels, fits};
use super::rect_kernel::RectKernel;
use super::ring::{self, CHUNKS_IN_FLIGHT, Submitted};
use super::shader::{self, QueryParams, WORKGROUP_SIZE};
use super::timer::KernelTimer;
use super::{GpuLimits, WaitLimit};
use crate::cpu::grid::Grid;
use crate::cpu::queries::{FILTER_RECTS, FILTER_SEGMENTS, beats, query};
use crate::cpu::segment_rect::segment_rect;
use crate::error::Result;
use crate::query::{Batch, Counts};
use crate::types::{FirstHit, Hit, Rect, Segment, flags};

/// Entries the found list starts with when [`GpuLimits::hit_list_capacity`] is not set.
pub const DEFAULT_HIT_LIST_CAPACITY: u64 = 1 << 14;
/// Found entries copied back with a chunk's results before the count is known; more take a
/// second copy (not a second dispatch).
const FOUND_FIRST_COPY: u64 = 1024;
/// Bytes before the found list's entries: its atomic count.
const FOUND_HEADER: u64 = 4;
/// Workgroups of the hit list's second step (`hit_times`), at most: its invocations stride over
/// the list, whose length only the GPU knows. 65,536 invocations fill any GPU, and cost little
/// when the list is short.
const HIT_TIMES_WORKGROUPS: u64 = 1024;

/// The layout and the pipelines, compiled once per device: one per [`RectKernel`], and the hit
/// list's second step.
#[derive(Clone)]
pub(crate) struct QueryKernels {
    pub(crate) layout: wgpu::BindGroupLayout,
    pipelines: Vec<wgpu::ComputePipeline>,
    hit_times: wgpu::ComputePipeline,
    first_hit_rects: wgpu::ComputePipeline,
}

impl QueryKernels {
    /// The device's, compiled on first use.
    pub(crate) fn new(context: &GpuContext) -> Result<Self> {
        context.compiled::<Self, _>(|| Self::compile(context))
    }

    fn compile(context: &GpuContext) -> Result<Self> {
        let device = &context.device;
        context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rectcast.queries.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shader::QUERIES_WGSL.into()),
            });
            let mut entries = vec![uniform_entry(0)];
            entries.extend((1..=4).map(|b| storage_entry(b, true)));
            entries.extend((5..=8).map(|b| storage_entry(b, false)));
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("rectcast.queries.layout"),
                entries: &entries,
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("rectcast.queries.pipeline_layout"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = |entry_point: &str, query: u32, label: &str| {
                let constants = shader::queries_constants(query, context.emulation());
                compute_pipeline(
                    device,
                    &pipeline_layout,
                    &module,
                    entry_point,
                    label,
                    &constants,
                )
            };
            let pipelines = RectKernel::PIPELINES
                .iter()
                .map(|kernel| {
                    let (entry_point, query, label) = kernel.entry_point();
                    pipeline(entry_point, query, label)
                })
                .collect();
            let hit_times = pipeline("hit_times", query::QUERY_HITS, "rectcast.queries.hit_times");
            let first_hit_rects = pipeline(
                "first_hit_rects",
                query::QUERY_FIRST_HIT,
                "rectcast.queries.first_hit_rects",
            );
            Ok(Self {
                layout,
                pipelines,
                hit_times,
                first_hit_rects,
            })
        })
    }

    fn pipeline(&self, kernel: RectKernel) -> &wgpu::ComputePipeline {
        &self.pipelines[kernel.pipeline_kernel().index()]
    }
}

/// The most one dispatch may take, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryCaps {
    /// Segments per dispatch (one invocation each; their outputs fit one binding).
    pub segments: u64,
    /// Rects per dispatch (one binding).
    pub rects: u64,
    /// Entries of the found list (one binding).
    pub found: u64,
}

impl QueryCaps {
    pub fn new(max_binding_bytes: u64, max_workgroups_per_dimension: u32) -> Self {
        let max_binding_bytes = max_binding_bytes / 16 * 16;
        let dim = max_workgroups_per_dimension as u64;
        let dispatch = dim * dim * WORKGROUP_SIZE as u64;
        let per_binding = |size: usize| max_binding_bytes / size as u64;
        Self {
            segments: per_binding(size_of::<FirstHit>())
                .min(per_binding(size_of::<Segment>()))
                .min(dispatch)
                .clamp(1, 1 << 31),
            rects: per_binding(size_of::<Rect>()).max(1),
            found: (max_binding_bytes.saturating_sub(FOUND_HEADER) / size_of::<Hit>() as u64)
                .max(1),
        }
    }
}

/// The storage buffers of one `queries.wgsl` bind group, and the bind group.
pub(crate) struct QueryBuffers {
    params: wgpu::Buffer,
    segments: Growable,
    rects: Growable,
    segment_filters: Growable,
    rect_filters: Growable,
    first_hits: Growable,
    segment_hits: Growable,
    rect_hits: Growable,
    found: Growable,
    bind_group: Option<wgpu::BindGroup>,
}

/// Element counts to make room for.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Room {
    pub segments: usize,
    pub rects: usize,
    pub found: u64,
}

/// Where a chunk's outputs lie in the staging buffer, in bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct StagingLayout {
    pub first_hits: Range<u64>,
    pub segment_hits: Range<u64>,
    pub rect_hits: Range<u64>,
    /// The found list's count and its first entries.
    pub found: Range<u64>,
}

impl StagingLayout {
    pub(crate) fn new(
        kernel: RectKernel,
        segments: usize,
        rects: usize,
        found_entries: u64,
    ) -> Self {
        let first = if kernel.writes_first_hits() {
            (segments * size_of::<FirstHit>()) as u64
        } else {
            0
        };
        let (segment_hits, rect_hits) = match kernel {
            RectKernel::Counts => ((segments * 4) as u64, (rects * 4) as u64),
            RectKernel::FirstHitRects => ((segments * 4) as u64, 0),
            _ => (0, 0),
        };
        // Copies move whole 4-byte words, and every size here is one.
        let a = first;
        let b = a + segment_hits;
        let c = b + rect_hits;
        let d = c + FOUND_HEADER + found_entries * size_of::<Hit>() as u64;
        Self {
            first_hits: 0..a,
            segment_hits: a..b,
            rect_hits: b..c,
            found: c..d,
        }
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.found.end
    }
}

/// A chunk's outputs as read back, with chunk-local indices.
pub(crate) struct ChunkOut<'a> {
    pub segments: Range<usize>,
    pub rects: Range<usize>,
    pub first_hits: &'a [FirstHit],
    pub segment_hits: &'a [u32],
    pub rect_hits: &'a [u32],
    pub found: &'a [Hit],
}

impl QueryBuffers {
    pub(crate) fn new(context: &GpuContext) -> Self {
        let read = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let write = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        Self {
            params: context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rectcast.queries.params"),
                size: size_of::<QueryParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            segments: Growable::new("rectcast.queries.segments", read),
            rects: Growable::new("rectcast.queries.rects", read),
            segment_filters: Growable::new("rectcast.queries.segment_filters", read),
            rect_filters: Growable::new("rectcast.queries.rect_filters", read),
            first_hits: Growable::new("rectcast.queries.first_hits", write),
            segment_hits: Growable::new("rectcast.queries.segment_hits", write),
            rect_hits: Growable::new("rectcast.queries.rect_hits", write),
            found: Growable::new("rectcast.queries.found", write),
            bind_group: None,
        }
    }

    /// Grows the buffers to hold `room`, rebuilding the bind group if any was replaced.
    pub(crate) fn reserve(
        &mut self,
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        room: Room,
        cap: u64,
    ) {
        let n = room.segments as u64;
        let m = room.rects as u64;
        let mut stale = self.bind_group.is_none();
        stale |= self.segments.reserve(device, n * 16, cap);
        stale |= self.rects.reserve(device, m * 16, cap);
        stale |= self.segment_filters.reserve(device, n * 8, cap);
        stale |= self.rect_filters.reserve(device, m * 8, cap);
        stale |= self.first_hits.reserve(device, n * 16, cap);
        stale |= self.segment_hits.reserve(device, n * 4, cap);
        stale |= self.rect_hits.reserve(device, m * 4, cap);
        let found = FOUND_HEADER + room.found * size_of::<Hit>() as u64;
        stale |= self.found.reserve(device, found, cap);
        if stale {
            self.bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("rectcast.queries.bind_group"),
                layout,
                entries: &[
                    entry(0, &self.params),
                    entry(1, self.segments.get()),
                    entry(2, self.rects.get()),
                    entry(3, self.segment_filters.get()),
                    entry(4, self.rect_filters.get()),
                    entry(5, self.first_hits.get()),
                    entry(6, self.segment_hits.get()),
                    entry(7, self.rect_hits.get()),
                    entry(8, self.found.get()),
                ],
            }));
        }
    }

    /// Entries the found list holds (the shader's `arrayLength(&found.hits)`).
    pub(crate) fn found_capacity(&self) -> u64 {
        self.found
            .buffer
            .as_ref()
            .map_or(0, |b| (b.size() - FOUND_HEADER) / size_of::<Hit>() as u64)
    }

    pub(crate) fn bind_group(&self) -> &wgpu::BindGroup {
        self.bind_group.as_ref().expect("reserved before use")
    }

    /// The per-segment result buffer of the first-hit and clip kernels (`FirstHit` records), for
    /// binding in a caller's own shaders.
    pub(crate) fn first_hits(&self) -> &wgpu::Buffer {
        self.first_hits.get()
    }

    /// Uploads a chunk: its segments, rects and filters, and the params.
    pub(crate) fn upload(
        &self,
        queue: &wgpu::Queue,
        batch: &Batch,
        segments: &Range<usize>,
        rects: &Range<usize>,
    ) {
        queue.write_buffer(
            self.segments.get(),
            0,
            bytemuck::cast_slice(&batch.segments[segments.clone()]),
        );
        queue.write_buffer(
            self.rects.get(),
            0,
            bytemuck::cast_slice(&batch.rects[rects.clone()]),
        );
        let mut filters = 0;
        if let Some(f) = batch.segment_filters {
            queue.write_buffer(
                self.segment_filters.get(),
                0,
                bytemuck::cast_slice(&f[segments.clone()]),
            );
            filters |= FILTER_SEGMENTS;
        }
        if let Some(f) = batch.rect_filters {
            queue.write_buffer(
                self.rect_filters.get(),
                0,
                bytemuck::cast_slice(&f[rects.clone()]),
            );
            filters |= FILTER_RECTS;
        }
        let params = QueryParams {
            segment_count: segments.len() as u32,
            rect_count: rects.len() as u32,
            filters,
            ..QueryParams::default()
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
    }

    /// Records the kernel over `segments` segments: clears the found count (and the rect
    /// counts), dispatches (the hit list in its two steps: the hits, then their t).
    /// With `walk` (the grid's pipeline and bind group), the segments walk the grid instead.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode_dispatch(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        kernels: &QueryKernels,
        kernel: RectKernel,
        walk: Option<(&wgpu::ComputePipeline, &wgpu::BindGroup)>,
        segments: usize,
        max_workgroups_per_dimension: u32,
        timer: Option<&KernelTimer>,
    ) {
        encoder.clear_buffer(self.found.get(), 0, Some(FOUND_HEADER));
        if kernel == RectKernel::Counts {
            encoder.clear_buffer(self.rect_hits.get(), 0, None);
        }
        let (x, y) = workgroup_grid(segments, max_workgroups_per_dimension);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.queries.pass"),
                timestamp_writes: timer.and_then(KernelTimer::writes),
            });
            pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
            match walk {
                Some((pipeline, grid)) => {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(1, grid, &[]);
                }
                None => pass.set_pipeline(kernels.pipeline(kernel)),
            }
            pass.dispatch_workgroups(x, y, 1);
            if kernel == RectKernel::FirstHitRects {
                pass.set_pipeline(&kernels.first_hit_rects);
                pass.dispatch_workgroups(x, y, 1);
            }
            if kernel == RectKernel::Hits {
                // (A dispatch sees every write of the one before it.)
                let workgroups = self.found_capacity().div_ceil(WORKGROUP_SIZE as u64).clamp(
                    1,
                    HIT_TIMES_WORKGROUPS.min(max_workgroups_per_dimension as u64),
                );
                pass.set_pipeline(&kernels.hit_times);
                pass.dispatch_workgroups(workgroups as u32, 1, 1);
            }
        }
        if let Some(timer) = timer {
            timer.encode_resolve(encoder);
        }
    }

    /// Records the copies of a chunk's outputs into `staging`, laid out as `layout`.
    pub(crate) fn encode_copies(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        staging: &wgpu::Buffer,
        layout: &StagingLayout,
    ) {
        let copies = [
            (self.first_hits.get(), &layout.first_hits),
            (self.segment_hits.get(), &layout.segment_hits),
            (self.rect_hits.get(), &layout.rect_hits),
            (self.found.get(), &layout.found),
        ];
        for (buffer, range) in copies {
            if !range.is_empty() {
                encoder.copy_buffer_to_buffer(
                    buffer,
                    0,
                    staging,
                    range.start,
                    range.end - range.start,
                );
            }
        }
    }
}

/// Splits a mapped staging buffer into a chunk's outputs, and the found count.
pub(crate) fn parse_staging<'a>(
    mapped: &'a [u8],
    layout: &StagingLayout,
    segments: Range<usize>,
    rects: Range<usize>,
) -> (ChunkOut<'a>, u64) {
    let range = |r: &Range<u64>| &mapped[r.start as usize..r.end as usize];
    let found = range(&layout.found);
    let (count, entries) = found.split_at(FOUND_HEADER as usize);
    let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]) as u64;
    let entries: &[Hit] = bytemuck::cast_slice(entries);
    let listed = (count as usize).min(entries.len());
    (
        ChunkOut {
            segments,
            rects,
            first_hits: bytemuck::cast_slice(range(&layout.first_hits)),
            segment_hits: bytemuck::cast_slice(range(&layout.segment_hits)),
            rect_hits: bytemuck::cast_slice(range(&layout.rect_hits)),
            found: &entries[..listed],
        },
        count,
    )
}

/// What became of a chunk read back.
enum Outcome {
    Done,
    /// The found list needed this many entries, more than it holds.
    Overflow(u64),
    /// The list holds all of them (this many), but fewer came back with the chunk.
    Partial(u64),
}

/// Where one GPU call's time went on the host, and how its chunks overlapped (see
/// [`crate::Engine::last_gpu_call`]). The GPU's own kernel time is
/// [`crate::Engine::gpu_kernel_time`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuCall {
    /// Chunks submitted, reruns (a found list that grew) included.
    pub chunks: usize,
    /// Chunks submitted before the first one's results were read back: more than one when
    /// the GPU had work queued while the host read.
    pub submitted_before_first_read: usize,
    /// Uploading inputs, recording and submitting the chunks.
    pub submitting: std::time::Duration,
    /// Blocked until the GPU had a chunk's results ready (kernels and copies the host could not
    /// overlap with its own work).
    pub waiting: std::time::Duration,
    /// Copying results out of the mapped staging buffers and merging them.
    pub merging: std::time::Duration,
    /// Bytes the GPU copied back to the host (the staging buffers' mapped ranges).
    pub bytes_read: u64,
    /// Pairs whose results the host computed itself because the GPU's were not read back:
    /// compact dense or listed results beyond what their chunk copied back, once a later
    /// chunk had overwritten them on the GPU. Uncertain pairs are not counted here.
    pub decided_on_host: u64,
}

impl GpuCall {
    /// Finishes `read` (see [`PendingRead::finish`]), accounting its wait and the time `merge`
    /// takes with the mapped bytes; the first read of a call records how many chunks were
    /// submitted before it.
    pub(crate) fn read(
        &mut self,
        read: PendingRead,
        context: &GpuContext,
        staging: &wgpu::Buffer,
        submission: wgpu::SubmissionIndex,
        wait: Wait,
        merge: impl FnOnce(&[u8]),
    ) -> Result<()> {
        if self.submitted_before_first_read == 0 {
            self.submitted_before_first_read = self.chunks;
        }
        let started = std::time::Instant::now();
        let mut merging = std::time::Duration::ZERO;
        self.bytes_read += read.bytes();
        let finished = read.finish(context, staging, submission, wait, |mapped| {
            let merge_started = std::time::Instant::now();
            merge(mapped);
            merging = merge_started.elapsed();
        });
        self.merging += merging;
        self.waiting += started.elapsed().saturating_sub(merging);
        finished
    }
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
/// (`shaders/queries.wgsl`): its place in the tile scan and the candidate loop, and for a hit
/// two crossing times whose exact division corrects its estimate in two loops of at most 64
/// steps each (`divide_rounded` in `shaders/segment_rect.wgsl`).
pub const LOOP_ITERATIONS_PER_RECT: usize = 2 + 2 * 2 * 64;

/// Rects per dispatch of the brute-force kernels on a software GPU, in whole tiles of 64:
/// within [`SOFTWARE_LOOP_BUDGET`] however many of them are hit, with 1024 iterations to spare
/// for the invocation's other loops (192).
pub const SOFTWARE_RECTS_PER_DISPATCH: usize =
    (SOFTWARE_LOOP_BUDGET - 1024) / LOOP_ITERATIONS_PER_RECT / 64 * 64;

/// The query kernels on one GPU context, with buffers kept between calls.
pub struct GpuQueries {
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
    wait: WaitLimit,
    /// Pairs re-decided on the host since creation.
    uncertain_pairs: u64,
    timer: Option<KernelTimer>,
    /// The broad phase's pipelines (`None` where the device binds too few buffers), and its
    /// buffers.
    grid_kernels: Option<GridKernels>,
    grid: GridBuffers,
    /// Whether the last call walked a grid.
    used_grid: bool,
}

/// A grid for a call: the plan ([`Grid::plan`] or a built grid), and the prepared set it
/// belongs to, if any (its GPU build is then kept for the next call with that set).
#[derive(Clone, Copy, Debug)]
pub struct GridQuery<'a> {
    pub plan: &'a Grid,
    pub set: Option<u64>,
}

impl GpuQueries {
    /// Compiles the pipelines. Buffers are created on first use.
    ///
    /// # Errors
    /// [`crate::Error::Gpu`] if the shader or a pipeline fails validation on this device.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let kernels = QueryKernels::new(&context)?;
        let buffers = QueryBuffers::new(&context);
        let grid_kernels = GridKernels::new(&context, &kernels.layout)?;
        let grid = GridBuffers::new(&context);
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
            wait: limits.wait.unwrap_or_default(),
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
            grid_kernels,
            grid,
            used_grid: false,
        })
    }

    /// How long each chunk may take from now on.
    pub fn set_wait(&mut self, wait: WaitLimit) {
        self.wait = wait;
    }

    /// Turns kernel timing on or off; false when the device has no timestamp queries.
    pub fn time_kernels(&mut self, on: bool) -> bool {
        self.timer.as_mut().map(|t| t.set_enabled(on)).is_some()
    }

    /// The kernel time of the last call, when timing is on.
    pub fn kernel_time(&self) -> Option<std::time::Duration> {
        self.timer.as_ref().and_then(KernelTimer::total)
    }

    pub fn caps(&self) -> QueryCaps {
        self.caps
    }

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

    /// Whether this device can walk a grid at all.
    pub fn supports_grid(&self) -> bool {
        self.grid_kernels.is_some()
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
                && self.grid_kernels.is_some()
                && m as u64 <= self.caps.rects
                && g.plan.spans.len() == m
                && fits(
                    g.plan,
                    g.plan.planned_entries,
                    self.max_binding_bytes,
                    self.max_workgroups_per_dimension,
                )
        });
        self.used_grid = grid.is_some();
        // Built on the first chunk's submission, unless the GPU holds this set's grid.
        let mut build =
            grid.filter(|g| g.set.is_none() || self.grid.built != Built::Set(g.set.unwrap_or(0)));
        if build.is_some() {
            self.grid.built = Built::Nothing;
        }
        // Clip pairs segment i with rect i (or with the one rect): its rect range follows.
        let per_segment_rects = kernel == RectKernel::Clip && m > 1;
        let segment_tile = self.caps.segments as usize;
        let rect_tile = if kernel == RectKernel::Clip || grid.is_some() {
            m
        } else {
            (self.caps.rects as usize)
                .min(m)
                .min(self.rects_per_dispatch)
        };
        let mut work: Vec<(Range<usize>, Range<usize>)> = Vec::new();
        for s in (0..n).step_by(segment_tile).rev() {
            let segments = s..(s + segment_tile).min(n);
            if kernel == RectKernel::Clip {
                let rects = if per_segment_rects {
                    segments.clone()
                } else {
                    0..1
                };
                work.push((segments, rects));
                continue;
            }
            for r in (0..m).step_by(rect_tile).rev() {
                work.push((segments.clone(), r..(r + rect_tile).min(m)));
            }
        }
        let found = std::cell::Cell::new(self.buffers.found_capacity().max(self.initial_found));
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
                match this.finish_chunk(kernel, chunk, newest, &mut sink)? {
                    Outcome::Done => {}
                    Outcome::Partial(count) => {
                        // Later chunks have overwritten its list: the same chunk again, with
                        // all of its entries copied back (and those of the chunks after it).
                        this.found_copy[kernel.index()] =
                            count.max(this.found_copy[kernel.index()]);
                        again.push((segments, rects));
                    }
                    Outcome::Overflow(needed) if needed <= this.caps.found => {
                        // Room for all of them, and the same chunk again.
                        found.set(found.get().max(needed));
                        this.found_copy[kernel.index()] =
                            needed.max(this.found_copy[kernel.index()]);
                        again.push((segments, rects));
                    }
                    Outcome::Overflow(_) => {
                        // At the binding limit: halve the chunk (segments first; clip's rects
                        // follow its segments). One pair finds at most one entry, so this ends.
                        let half = |r: &Range<usize>| r.start + r.len() / 2;
                        if segments.len() > 1 {
                            let mid = half(&segments);
                            let split = |s: Range<usize>| {
                                let r = if per_segment_rects {
                                    s.clone()
                                } else {
                                    rects.clone()
                                };
                                (s, r)
                            };
                            again.push(split(mid..segments.end));
                            again.push(split(segments.start..mid));
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
                chunk.read.cancel(this.staging[chunk.slot].get());
            },
        };
        // `work` was laid out last first.
        let outcome = ring::run(self, size, work.into_iter().rev(), steps);
        outcome?;
        if let Some(GridQuery { set: Some(id), .. }) = grid {
            self.grid.built = Built::Set(id);
        }
        Ok(())
    }

    /// Uploads and dispatches one chunk with a found list of at least `found` entries, copies
    /// its outputs into staging buffer `slot`, submits, and asks for the map: the GPU runs it
    /// while the host goes on. With `walk`, the segments walk the grid, built first when it
    /// comes with a plan to build.
    #[allow(clippy::too_many_arguments)]
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
                chunk.read.cancel(self.staging[slot].get());
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
                wait,
                |mapped| {
                    let (out, found) =
                        parse_staging(mapped, &layout, chunk.segments.clone(), chunk.rects.clone());
                    count = found;
                    if found <= entries {
                        uncertain = out
                            .found
                            .iter()
                            .filter(|h| h.result.flags == flags::UNCERTAIN)
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
                return Ok(Outcome::Done);
            }
            if !last {
                return Ok(Outcome::Partial(count));
            }
            entries = count;
        }
    }
}

/// A found entry's result with the chunk's offsets applied; an uncertain one decided exactly.
fn decided(batch: &Batch, chunk: &ChunkOut, h: &Hit) -> Hit {
    let segment = chunk.segments.start + h.segment as usize;
    let rect = chunk.rects.start + h.rect as usize;
    let result = if h.result.flags == flags::UNCERTAIN {
        segment_rect(&batch.segments[segment], &batch.rects[rect])
    } else {
        h.result
    };
    Hit {
        segment: segment as u32,
        rect: rect as u32,
        result,
    }
}

impl GpuQueries {
    /// First-hit query; `out.len() == batch.segments.len()`. Inputs are valid.
    pub(crate) fn first_hit(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        out: &mut [FirstHit],
    ) -> Result<()> {
        out.fill(FirstHit::NONE);
        self.run(RectKernel::FirstHit, batch, grid, |chunk| {
            let best = &mut out[chunk.segments.clone()];
            // Rect tiles may come in any order: merge with the full tie rule.
            for (i, (best, local)) in best.iter_mut().zip(chunk.first_hits).enumerate() {
                if let Some(rect) = local.rect() {
                    let rect = rect + chunk.rects.start as u32;
                    let s = &batch.segments[chunk.segments.start + i];
                    if beats(s, batch.rects, rect, &local.result, best) {
                        *best = FirstHit {
                            rect,
                            result: local.result,
                        };
                    }
                }
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                let best = &mut out[h.segment as usize];
                let s = &batch.segments[h.segment as usize];
                if h.result.hit() && beats(s, batch.rects, h.rect, &h.result, best) {
                    // A hit whose order the kernel could not certify carries its decisions
                    // only: its t comes from the reference.
                    *best = FirstHit {
                        rect: h.rect,
                        result: segment_rect(s, &batch.rects[h.rect as usize]),
                    };
                }
            }
        })
    }

    /// First-hit query, each segment's rect only ([`FirstHit::NO_RECT`] on a miss); `out.len()
    /// == batch.segments.len()`. Inputs are valid.
    pub(crate) fn first_hit_rects(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        out: &mut [u32],
    ) -> Result<()> {
        out.fill(FirstHit::NO_RECT);
        // The best so far as a whole result, recomputed: only where a segment's rects come in
        // several tiles, or the kernel left pairs to the host.
        let best = |s: &Segment, rect: u32| {
            if rect == FirstHit::NO_RECT {
                FirstHit::NONE
            } else {
                FirstHit {
                    rect,
                    result: segment_rect(s, &batch.rects[rect as usize]),
                }
            }
        };
        self.run(RectKernel::FirstHitRects, batch, grid, |chunk| {
            let bests = &mut out[chunk.segments.clone()];
            for (i, (best_rect, &local)) in bests.iter_mut().zip(chunk.segment_hits).enumerate() {
                if local == FirstHit::NO_RECT {
                    continue;
                }
                let rect = local + chunk.rects.start as u32;
                let s = &batch.segments[chunk.segments.start + i];
                // Rect tiles may come in any order: merge with the full tie rule (the results
                // recomputed only then).
                if *best_rect == FirstHit::NO_RECT
                    || beats(
                        s,
                        batch.rects,
                        rect,
                        &segment_rect(s, &batch.rects[rect as usize]),
                        &best(s, *best_rect),
                    )
                {
                    *best_rect = rect;
                }
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                let best_rect = &mut out[h.segment as usize];
                let s = &batch.segments[h.segment as usize];
                if h.result.hit() && beats(s, batch.rects, h.rect, &h.result, &best(s, *best_rect))
                {
                    *best_rect = h.rect;
                }
            }
        })
    }

    /// Hit-list query, in (segment, rect) order. Inputs are valid.
    pub(crate) fn hits(&mut self, batch: &Batch, grid: Option<GridQuery>) -> Result<Vec<Hit>> {
        let mut hits = Vec::new();
        self.run(RectKernel::Hits, batch, grid, |chunk| {
            hits.extend(
                chunk
                    .found
                    .iter()
                    .map(|h| decided(batch, chunk, h))
                    .filter(|h| h.result.hit()),
            );
        })?;
        hits.sort_unstable_by_key(|h| (h.segment, h.rect));
        Ok(hits)
    }

    /// Counts query into zeroed counts of the batch's sizes. Inputs are valid.
    pub(crate) fn counts(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        counts: &mut Counts,
    ) -> Result<()> {
        self.run(RectKernel::Counts, batch, grid, |chunk| {
            let per_segment = &mut counts.per_segment[chunk.segments.clone()];
            for (total, &n) in per_segment.iter_mut().zip(chunk.segment_hits) {
                *total += n;
            }
            let per_rect = &mut counts.per_rect[chunk.rects.clone()];
            for (total, &n) in per_rect.iter_mut().zip(chunk.rect_hits) {
                *total += n as u64;
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                if h.result.hit() {
                    counts.per_segment[h.segment as usize] += 1;
                    counts.per_rect[h.rect as usize] += 1;
                }
            }
        })
    }

    /// Clip query: segment i against `rects[0]` when there is one rect, else `rects[i]`.
    /// Inputs are valid and sized.
    pub(crate) fn clip(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        out: &mut [FirstHit],
    ) -> Result<()> {
        let batch = Batch::new(segments, rects);
        self.run(RectKernel::Clip, &batch, None, |chunk| {
            for (i, local) in chunk.first_hits.iter().enumerate() {
                let s = chunk.segments.start + i;
                out[s] = FirstHit {
                    rect: local
                        .rect()
                        .map_or(FirstHit::NO_RECT, |r| r + chunk.rects.start as u32),
                    result: local.result,
                };
            }
            for h in chunk.found {
                let h = decided(&batch, chunk, h);
                out[h.segment as usize] = FirstHit {
                    rect: if h.result.hit() {
                        h.rect
                    } else {
                        FirstHit::NO_RECT
                    },
                    result: h.result,
                };
            }
        })
    }
}
