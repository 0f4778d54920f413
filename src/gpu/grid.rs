//! Host side of `shaders/grid.wgsl`: the broad phase on the GPU.
//!
//! The host sizes the grid ([`Grid::plan`]: its cells and bounds, and the entry count the
//! buffers need, from the rects it already holds); the GPU lists the rects in their cells (a
//! count, a prefix sum in three steps, a fill) and then walks each segment through them, in
//! the same submission as the query: no round trip between the build and the walk. A grid
//! built for a prepared [`crate::RectSet`] is kept on the GPU until another set comes.

use super::buffers::{Binder, Growable, compute_pipeline};
use super::chunks::workgroup_grid;
use super::context::GpuContext;
use super::layouts::{self, GRID};
use super::rect_kernel::RectKernel;
use super::shader::{self, GridAxis, GridParams, SCAN_PER_INVOCATION, WORKGROUP_SIZE};
use crate::cpu::grid::Grid;
use crate::cpu::rect_queries::query;
use crate::error::Result;
use crate::types::Rect;

/// The most blocks the prefix sum's single-workgroup step takes in (its invocations add up
/// their shares serially).
const MAX_SCAN_BLOCKS: u64 = 1 << 20;

/// The grid's pipelines: the walk for three queries, and the five build steps.
#[derive(Clone)]
pub(crate) struct GridKernels {
    pub(crate) layout: wgpu::BindGroupLayout,
    first_hit: wgpu::ComputePipeline,
    counts: wgpu::ComputePipeline,
    hits: wgpu::ComputePipeline,
    count: wgpu::ComputePipeline,
    scan_blocks: wgpu::ComputePipeline,
    scan_sums: wgpu::ComputePipeline,
    add_offsets: wgpu::ComputePipeline,
    fill: wgpu::ComputePipeline,
}

impl GridKernels {
    /// The pipelines, sharing group 0 (`queries_layout`) with the query kernels; `None` when the
    /// device binds too few storage buffers per stage.
    pub(crate) fn new(
        context: &GpuContext,
        queries_layout: &wgpu::BindGroupLayout,
    ) -> Result<Option<Self>> {
        // `queries_layout` is the device's one (`QueryKernels` are compiled once per device too).
        context.compiled::<Self, _>(|| Self::compile(context, queries_layout))
    }

    /// Whether `context`'s device binds enough storage buffers per stage for them.
    pub(crate) fn supported(context: &GpuContext) -> bool {
        layouts::allow_grid(&context.limits())
    }

    fn compile(
        context: &GpuContext,
        queries_layout: &wgpu::BindGroupLayout,
    ) -> Result<Option<Self>> {
        if !Self::supported(context) {
            return Ok(None);
        }
        let device = &context.device;
        context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rectcast.grid.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shader::GRID_WGSL.into()),
            });
            let layout = layouts::bind_group_layout(device, "rectcast.grid.layout", GRID);
            let pipeline_layout = layouts::pipeline_layout(
                device,
                "rectcast.grid.pipeline_layout",
                &[queries_layout, &layout],
            );
            let pipeline = |entry_point: &str, query: u32| {
                let constants = shader::grid_constants(query, context.emulation());
                compute_pipeline(
                    context,
                    &pipeline_layout,
                    &module,
                    entry_point,
                    entry_point,
                    &constants,
                )
            };
            let build = query::QUERY_FIRST_HIT;
            Ok(Some(Self {
                first_hit: pipeline("segment_cells", query::QUERY_FIRST_HIT),
                counts: pipeline("segment_cells", query::QUERY_COUNTS),
                hits: pipeline("segment_cells", query::QUERY_HITS),
                count: pipeline("grid_count", build),
                scan_blocks: pipeline("grid_scan_blocks", build),
                scan_sums: pipeline("grid_scan_sums", build),
                add_offsets: pipeline("grid_add_offsets", build),
                fill: pipeline("grid_fill", build),
                layout,
            }))
        })
    }

    /// The walk's pipeline for `kernel` (first hit, counts or hits).
    pub(crate) fn walk(&self, kernel: RectKernel) -> &wgpu::ComputePipeline {
        match kernel {
            RectKernel::Counts => &self.counts,
            RectKernel::Hits => &self.hits,
            RectKernel::FirstHit | RectKernel::FirstHitRects | RectKernel::Clip => &self.first_hit,
        }
    }
}

/// Which grid the GPU holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Built {
    /// None yet, or one for a single call.
    Nothing,
    /// The grid of the prepared set with this id.
    Set(u64),
}

/// The grid's buffers on the GPU, and its bind group (group 1).
pub(crate) struct GridBuffers {
    params: wgpu::Buffer,
    bounds: Growable,
    cell_counts: Growable,
    cell_start: Growable,
    entries: Growable,
    boxes: Growable,
    spans: Growable,
    block_sums: Growable,
    pub(crate) bind_group: Option<wgpu::BindGroup>,
    pub(crate) built: Built,
    /// The bounds as uploaded (kept: a frame's build allocates nothing once warm).
    bounds_scratch: Vec<f32>,
}

/// The uniform block of `plan`'s grid (`GridParams`, `shaders/grid_walk.wgsl`): its axes, with
/// the columns' bounds first and the rows' after them in the bounds' buffer, and its rects.
pub(crate) fn grid_params(plan: &Grid) -> GridParams {
    let axis = |a: &crate::cpu::grid::Axis, first: usize| GridAxis {
        first: first as u32,
        cells: a.cells,
        origin: a.origin,
        scale: a.scale,
    };
    GridParams {
        xs: axis(&plan.xs, 0),
        ys: axis(&plan.ys, plan.xs.bounds.len()),
        cols: plan.cols,
        rows: plan.rows,
        rect_count: plan.spans.len() as u32,
        along: u32::from(plan.along),
    }
}

/// Whether the GPU can hold `plan`'s grid (`entries` entries) within `max_binding_bytes` per
/// binding, and build it in dispatches of at most `max_workgroups_per_dimension` workgroups a
/// side.
pub(crate) fn fits(
    plan: &Grid,
    entries: u64,
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
) -> bool {
    let cells = (plan.cols as u64) * (plan.rows as u64);
    let rects = plan.spans.len() as u64;
    let per_block = (WORKGROUP_SIZE * SCAN_PER_INVOCATION) as u64;
    let dim = max_workgroups_per_dimension as u64;
    let per_dispatch = dim * dim * WORKGROUP_SIZE as u64;
    entries * size_of::<Rect>() as u64 <= max_binding_bytes
        && (cells + 1) * 4 <= max_binding_bytes
        && rects * 16 <= max_binding_bytes
        && cells.div_ceil(per_block) <= MAX_SCAN_BLOCKS
        && cells <= per_dispatch
        && rects <= per_dispatch
}

impl GridBuffers {
    pub(crate) fn new(context: &GpuContext) -> Self {
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Self {
            params: context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rectcast.grid.params"),
                size: size_of::<GridParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            bounds: Growable::new("rectcast.grid.bounds", storage),
            cell_counts: Growable::new("rectcast.grid.cell_counts", storage),
            cell_start: Growable::new("rectcast.grid.cell_start", storage),
            entries: Growable::new("rectcast.grid.entries", storage),
            boxes: Growable::new("rectcast.grid.boxes", storage),
            spans: Growable::new("rectcast.grid.spans", storage),
            block_sums: Growable::new("rectcast.grid.block_sums", storage),
            bind_group: None,
            built: Built::Nothing,
            bounds_scratch: Vec::new(),
        }
    }

    /// Makes room for `plan`'s grid (`entries` entries), uploads its bounds and params, and
    /// records its build into `encoder`; the rects are in the query buffers' `rects` (group 0,
    /// bound as `queries`).
    #[allow(
        clippy::too_many_arguments,
        reason = "the plan, its bounds and the encoder, each its own"
    )]
    pub(crate) fn encode_build(
        &mut self,
        context: &GpuContext,
        kernels: &GridKernels,
        queries: &wgpu::BindGroup,
        plan: &Grid,
        entries: u64,
        max_binding_bytes: u64,
        max_workgroups_per_dimension: u32,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let device = &context.device;
        let cells = (plan.cols as u64) * (plan.rows as u64);
        let rects = plan.spans.len() as u64;
        let per_block = (WORKGROUP_SIZE * SCAN_PER_INVOCATION) as u64;
        let blocks = cells.div_ceil(per_block);
        let bounds_len = (plan.xs.bounds.len() + plan.ys.bounds.len()) as u64;
        Binder::new(device, max_binding_bytes, &self.bind_group)
            .bind(0, &self.params)
            .grow(1, &mut self.bounds, bounds_len * 4)
            .grow(2, &mut self.cell_counts, cells * 4)
            .grow(3, &mut self.cell_start, (cells + 1) * 4)
            .grow(4, &mut self.entries, entries * 4)
            .grow(5, &mut self.boxes, entries * 16)
            .grow(6, &mut self.spans, rects * 16)
            .grow(7, &mut self.block_sums, blocks * 4)
            .build(
                "rectcast.grid.bind_group",
                &kernels.layout,
                &mut self.bind_group,
            );
        let queue = &context.queue;
        let bounds = &mut self.bounds_scratch;
        bounds.clear();
        bounds.extend_from_slice(&plan.xs.bounds);
        bounds.extend_from_slice(&plan.ys.bounds);
        if !bounds.is_empty() {
            queue.write_buffer(self.bounds.get(), 0, bytemuck::cast_slice(bounds));
        }
        let params = grid_params(plan);
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        let grid = self.bind_group.as_ref().expect("made above");
        let max = max_workgroups_per_dimension;
        let steps: [(&wgpu::ComputePipeline, (u32, u32)); 5] = [
            (&kernels.count, workgroup_grid(rects as usize, max)),
            (
                &kernels.scan_blocks,
                workgroup_grid((blocks * WORKGROUP_SIZE as u64) as usize, max),
            ),
            (&kernels.scan_sums, (1, 1)),
            (&kernels.add_offsets, workgroup_grid(cells as usize, max)),
            (&kernels.fill, workgroup_grid(rects as usize, max)),
        ];
        for (i, (pipeline, (x, y))) in steps.into_iter().enumerate() {
            // Counts start at zero, and so do the fill's cursors.
            if i == 0 || i == 4 {
                encoder.clear_buffer(self.cell_counts.get(), 0, None);
            }
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.grid.build"),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, queries, &[]);
            pass.set_bind_group(1, grid, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Bytes of GPU memory held.
    pub(crate) fn bytes(&self) -> u64 {
        [
            &self.bounds,
            &self.cell_counts,
            &self.cell_start,
            &self.entries,
            &self.boxes,
            &self.spans,
            &self.block_sums,
        ]
        .iter()
        .filter_map(|g| g.buffer.as_ref())
        .map(|b| b.size())
        .sum::<u64>()
            + self.params.size()
    }
}
