//! The rect queries' pipelines and buffers: what a chunk uploads and encodes, and how its
//! staging buffer reads back.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::cpu::rect_queries::{FILTER_RECTS, FILTER_SEGMENTS, query};
use crate::error::Result;
use crate::gpu::buffers::{Binder, Growable, compute_pipeline};
use crate::gpu::chunks::workgroup_grid;
use crate::gpu::context::GpuContext;
use crate::gpu::layouts::{self, RECT_QUERIES};
use crate::gpu::rect_kernel::RectKernel;
use crate::gpu::shader::{self, QueryParams, WORKGROUP_SIZE};
use crate::gpu::timer::KernelTimer;
use crate::query::Batch;
use crate::types::{FirstHit, Hit, Rect, Segment};

/// Entries the found list starts with when [`crate::GpuLimits::hit_list_capacity`] is not set.
pub const DEFAULT_HIT_LIST_CAPACITY: u64 = 1 << 14;
/// Found entries copied back with a chunk's results before the count is known; more take a
/// second copy (not a second dispatch).
pub(super) const FOUND_FIRST_COPY: u64 = 1024;
/// Bytes before the found list's entries: its atomic count.
pub(super) const FOUND_HEADER: u64 = 4;
/// Workgroups of the hit list's third step (`hit_times`), at most: its invocations stride over
/// the list, whose length only the GPU knows. 65,536 invocations fill any GPU, and cost little
/// when the list is short.
pub(super) const HIT_TIMES_WORKGROUPS: u64 = 1024;
/// The most segments a hit list's chunk takes: its offsets' prefix sum (`hit_offsets`, one
/// workgroup) adds up 2^14 counts an invocation, twice, within a software GPU's loop budget
/// ([`super::SOFTWARE_LOOP_BUDGET`]).
pub(super) const HIT_LIST_SEGMENTS: u64 = (WORKGROUP_SIZE as u64) << 14;
/// The most entries a hit list's found list holds: an entry's ordinal among its segment's is
/// kept in an f32 until its place is known, exact below 2^24.
pub(super) const HIT_LIST_ENTRIES: u64 = 1 << 24;

/// The layout and the pipelines, once per device: the shader module and the layouts at once,
/// each pipeline (one per [`RectKernel`], and the hit list's and the first-hit rects' later
/// steps) at the first call that runs it ([`prepare`](Self::prepare)), for every engine on the
/// device. A first hit compiles one pipeline of eight: on lavapipe 57 ms of 160.
#[derive(Clone)]
pub(crate) struct QueryKernels {
    pub(crate) layout: wgpu::BindGroupLayout,
    lazy: Arc<LazyPipelines>,
}

/// What the pipelines are built from, and each one once built.
struct LazyPipelines {
    module: wgpu::ShaderModule,
    pipeline_layout: wgpu::PipelineLayout,
    /// [`RectKernel::PIPELINES`]' pipelines, then [`HIT_TIMES`]', [`FIRST_HIT_RECTS`]',
    /// [`HIT_OFFSETS`]' and [`ORDER_HITS`]'.
    pipelines: [OnceLock<wgpu::ComputePipeline>; 8],
}

/// The slot of the hit list's third step (`hit_times`).
const HIT_TIMES: usize = RectKernel::PIPELINES.len();
/// The slot of the first-hit rects' second step (`first_hit_rects`).
const FIRST_HIT_RECTS: usize = HIT_TIMES + 1;
/// The slot of the hit list's second step (`hit_offsets`).
const HIT_OFFSETS: usize = FIRST_HIT_RECTS + 1;
/// The slot of the hit list's last step after a grid walk (`order_hits`).
const ORDER_HITS: usize = HIT_OFFSETS + 1;

/// A slot's entry point, QUERY constant and label.
fn slot_entry(slot: usize) -> (&'static str, u32, &'static str) {
    match slot {
        HIT_TIMES => ("hit_times", query::QUERY_HITS, "rectcast.queries.hit_times"),
        HIT_OFFSETS => (
            "hit_offsets",
            query::QUERY_HITS,
            "rectcast.queries.hit_offsets",
        ),
        ORDER_HITS => (
            "order_hits",
            query::QUERY_HITS,
            "rectcast.queries.order_hits",
        ),
        FIRST_HIT_RECTS => (
            "first_hit_rects",
            query::QUERY_FIRST_HIT,
            "rectcast.queries.first_hit_rects",
        ),
        kernel => RectKernel::PIPELINES[kernel].entry_point(),
    }
}

impl QueryKernels {
    /// The device's, made on first use (its pipelines at their own first use).
    pub(crate) fn new(context: &GpuContext) -> Result<Self> {
        context.compiled::<Self, _>(|| Self::compile(context))
    }

    fn compile(context: &GpuContext) -> Result<Self> {
        let device = &context.device;
        context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rectcast.rect_queries.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shader::RECT_QUERIES_WGSL.into()),
            });
            let layout =
                layouts::bind_group_layout(device, "rectcast.queries.layout", RECT_QUERIES);
            let pipeline_layout =
                layouts::pipeline_layout(device, "rectcast.queries.pipeline_layout", &[&layout]);
            Ok(Self {
                layout,
                lazy: Arc::new(LazyPipelines {
                    module,
                    pipeline_layout,
                    pipelines: Default::default(),
                }),
            })
        })
    }

    /// The slots `kernel` dispatches, with `order_hits` or not (a hit list's after a grid
    /// walk, where the GPU orders runs).
    fn slots(kernel: RectKernel, orders: bool) -> impl Iterator<Item = usize> {
        let later: &[usize] = match kernel {
            RectKernel::Hits if orders => &[HIT_OFFSETS, HIT_TIMES, ORDER_HITS],
            RectKernel::Hits => &[HIT_OFFSETS, HIT_TIMES],
            RectKernel::FirstHitRects => &[FIRST_HIT_RECTS],
            _ => &[],
        };
        std::iter::once(kernel.pipeline_kernel().index()).chain(later.iter().copied())
    }

    /// Builds the pipelines `kernel` dispatches, with `order_hits` or not, where not built yet
    /// (on `context`, the device these kernels were made on), and keeps them in the device's
    /// pipeline cache.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) when a pipeline fails to build.
    pub(crate) fn prepare(
        &self,
        context: &GpuContext,
        kernel: RectKernel,
        orders: bool,
    ) -> Result<()> {
        let mut built = false;
        for slot in Self::slots(kernel, orders) {
            let lock = &self.lazy.pipelines[slot];
            if lock.get().is_some() {
                continue;
            }
            let (entry_point, query, label) = slot_entry(slot);
            let constants = shader::rect_queries_constants(query, context.emulation());
            let pipeline = context.scoped(|| {
                Ok(compute_pipeline(
                    context,
                    &self.lazy.pipeline_layout,
                    &self.lazy.module,
                    entry_point,
                    label,
                    &constants,
                ))
            })?;
            // Another engine on the device may have built it meanwhile: either is the same.
            let _ = lock.set(pipeline);
            built = true;
        }
        if built {
            context.pipelines_built();
        }
        Ok(())
    }

    fn slot(&self, slot: usize) -> &wgpu::ComputePipeline {
        self.lazy.pipelines[slot]
            .get()
            .expect("prepared before its dispatch is recorded")
    }

    fn pipeline(&self, kernel: RectKernel) -> &wgpu::ComputePipeline {
        self.slot(kernel.pipeline_kernel().index())
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

/// The storage buffers of one `rect_queries.wgsl` bind group, and the bind group.
pub(crate) struct QueryBuffers {
    pub(super) params: wgpu::Buffer,
    pub(super) segments: Growable,
    pub(super) rects: Growable,
    pub(super) segment_filters: Growable,
    pub(super) rect_filters: Growable,
    pub(super) first_hits: Growable,
    pub(super) segment_hits: Growable,
    pub(super) rect_hits: Growable,
    pub(super) found: Growable,
    pub(super) bind_group: Option<wgpu::BindGroup>,
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
    /// A hit list's chunk: `first_hits` holds the first entries of its ordered list, and
    /// `segment_hits` each segment's offset in it.
    pub ordered: bool,
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
        let ordered = kernel == RectKernel::Hits;
        let first = if ordered {
            found_entries * size_of::<FirstHit>() as u64
        } else if kernel.writes_first_hits() {
            (segments * size_of::<FirstHit>()) as u64
        } else {
            0
        };
        let (segment_hits, rect_hits) = match kernel {
            RectKernel::Counts => ((segments * 4) as u64, (rects * 4) as u64),
            RectKernel::FirstHitRects | RectKernel::Hits => ((segments * 4) as u64, 0),
            _ => (0, 0),
        };
        // The found list's count only, for a hit list: its entries come back in order.
        let found = if ordered { 0 } else { found_entries };
        // Copies move whole 4-byte words, and every size here is one.
        let a = first;
        let b = a + segment_hits;
        let c = b + rect_hits;
        let d = c + FOUND_HEADER + found * size_of::<Hit>() as u64;
        Self {
            ordered,
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
    /// Per segment, or a hit list's entries in order (as many as the chunk listed, when they
    /// all came back; `segment_hits` then holds each segment's offset among them).
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
        let found = FOUND_HEADER + room.found * size_of::<Hit>() as u64;
        Binder::new(device, cap, &self.bind_group)
            .bind(0, &self.params)
            .grow(1, &mut self.segments, n * 16)
            .grow(2, &mut self.rects, m * 16)
            .grow(3, &mut self.segment_filters, n * 8)
            .grow(4, &mut self.rect_filters, m * 8)
            .grow(5, &mut self.first_hits, n.max(room.found) * 16)
            .grow(6, &mut self.segment_hits, n * 4)
            .grow(7, &mut self.rect_hits, m * 4)
            .grow(8, &mut self.found, found)
            .build("rectcast.queries.bind_group", layout, &mut self.bind_group);
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
    /// counts), dispatches (the hit list in its steps: the hits, their offsets, their t at their
    /// places, and after a grid walk their order when `order_on_gpu`). With `walk` (the
    /// grid's pipeline and bind group), the segments walk the grid instead.
    #[allow(
        clippy::too_many_arguments,
        reason = "one dispatch's buffers and steps, each bound on its own"
    )]
    pub(crate) fn encode_dispatch(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        kernels: &QueryKernels,
        kernel: RectKernel,
        walk: Option<(&wgpu::ComputePipeline, &wgpu::BindGroup)>,
        order_on_gpu: bool,
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
                pass.set_pipeline(kernels.slot(FIRST_HIT_RECTS));
                pass.dispatch_workgroups(x, y, 1);
            }
            if kernel == RectKernel::Hits {
                // (A dispatch sees every write of the one before it.)
                pass.set_pipeline(kernels.slot(HIT_OFFSETS));
                pass.dispatch_workgroups(1, 1, 1);
                let workgroups = self.found_capacity().div_ceil(WORKGROUP_SIZE as u64).clamp(
                    1,
                    HIT_TIMES_WORKGROUPS.min(max_workgroups_per_dimension as u64),
                );
                pass.set_pipeline(kernels.slot(HIT_TIMES));
                pass.dispatch_workgroups(workgroups as u32, 1, 1);
                if walk.is_some() && order_on_gpu {
                    pass.set_pipeline(kernels.slot(ORDER_HITS));
                    pass.dispatch_workgroups(x, y, 1);
                }
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
    let first_hits: &[FirstHit] = bytemuck::cast_slice(range(&layout.first_hits));
    (
        ChunkOut {
            segments,
            rects,
            first_hits: if layout.ordered {
                &first_hits[..(count as usize).min(first_hits.len())]
            } else {
                first_hits
            },
            segment_hits: bytemuck::cast_slice(range(&layout.segment_hits)),
            rect_hits: bytemuck::cast_slice(range(&layout.rect_hits)),
            found: &entries[..listed],
        },
        count,
    )
}
