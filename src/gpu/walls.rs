//! Host side of `shaders/segment_segment.wgsl`: every query segment against every wall, in
//! chunks the device can take, with buffers kept between calls. One chunk at a time for now:
//! the exact integer kernel, not the transfers, is what this query costs.

use std::ops::Range;

use super::buffers::{
    Growable, Wait, compute_pipeline, entry, read_back, storage_entry, uniform_entry,
};
use super::chunks::{self, ChunkCaps};
use super::context::GpuContext;
use super::limits::{GpuLimits, WaitLimit};
use super::shader::{self, WallParams};
use crate::cpu::segment_segment::SegmentContact;
use crate::error::Result;
use crate::types::Segment;

/// What the first dispatch may take on top of its wait: a software driver (lavapipe) compiles a
/// kernel when it first runs, and this one's exact integer code takes it seconds (8 to 9 s on
/// two cores, measured; more when other work shares them).
const FIRST_DISPATCH_ALLOWANCE: std::time::Duration = std::time::Duration::from_secs(120);

/// The segment × segment kernel on one GPU context.
pub struct GpuWalls {
    context: GpuContext,
    caps: ChunkCaps,
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
    layout: wgpu::BindGroupLayout,
    dense: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    queries: Growable,
    walls: Growable,
    contacts: Growable,
    staging: Growable,
    bind_group: Option<wgpu::BindGroup>,
    wait: WaitLimit,
    /// Whether the kernel has run once (see [`FIRST_DISPATCH_ALLOWANCE`]).
    dispatched: bool,
}

impl GpuWalls {
    /// Compiles the pipeline. Buffers are created on first use.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) if the shader or the pipeline fails validation.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let device = context.device.clone();
        let (layout, dense, params) = context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rectcast.segment_segment.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shader::SEGMENT_SEGMENT_WGSL.into()),
            });
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("rectcast.walls.layout"),
                entries: &[
                    uniform_entry(0),
                    storage_entry(1, true),
                    storage_entry(2, true),
                    storage_entry(3, false),
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("rectcast.walls.pipeline_layout"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let constants = shader::segment_segment_constants(context.emulation());
            let dense = compute_pipeline(
                &device,
                &pipeline_layout,
                &module,
                "wall_pairs_dense",
                "rectcast.wall_pairs_dense",
                &constants,
            );
            let params = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rectcast.walls.params"),
                size: size_of::<WallParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            Ok((layout, dense, params))
        })?;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Ok(Self {
            // A contact is as large as a rect pair's result, a wall as a rect: the same caps.
            caps: ChunkCaps::new(max_binding_bytes, max_workgroups_per_dimension),
            context,
            max_binding_bytes,
            max_workgroups_per_dimension,
            layout,
            dense,
            params,
            queries: Growable::new("rectcast.walls.queries", storage),
            walls: Growable::new("rectcast.walls.walls", storage),
            contacts: Growable::new(
                "rectcast.walls.contacts",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging: Growable::new(
                "rectcast.walls.staging",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            bind_group: None,
            wait: limits.wait.unwrap_or_default(),
            dispatched: false,
        })
    }

    /// Every query against every wall, `out[q * walls.len() + w]`. Inputs are valid and `out`
    /// has `queries.len() * walls.len()` entries.
    pub(crate) fn wall_pairs_dense(
        &mut self,
        queries: &[Segment],
        walls: &[Segment],
        out: &mut [SegmentContact],
    ) -> Result<()> {
        let m = walls.len();
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        for chunk in chunks::plan_dense(queries.len(), m, self.caps) {
            let pairs = chunk.pair_count();
            if self.reserve(chunk.segments.len(), chunk.rects.len(), pairs)? {
                uploaded = (0..0, 0..0);
            }
            let context = self.context.clone();
            let queue = &context.queue;
            // Upload a tile only when it changed: with all walls in one tile they go up once.
            if uploaded.0 != chunk.segments {
                queue.write_buffer(
                    self.queries.get(),
                    0,
                    bytemuck::cast_slice(&queries[chunk.segments.clone()]),
                );
            }
            if uploaded.1 != chunk.rects {
                queue.write_buffer(
                    self.walls.get(),
                    0,
                    bytemuck::cast_slice(&walls[chunk.rects.clone()]),
                );
            }
            uploaded = (chunk.segments.clone(), chunk.rects.clone());
            let params = WallParams {
                query_count: chunk.segments.len() as u32,
                wall_count: chunk.rects.len() as u32,
                pair_count: pairs as u32,
                ..WallParams::default()
            };
            queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
            let bytes = (pairs * size_of::<SegmentContact>()) as u64;
            let submission = context.scoped(|| {
                let device = &context.device;
                self.staging.reserve(device, bytes, self.max_binding_bytes);
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("rectcast.walls.encoder"),
                });
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("rectcast.walls.pass"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(&self.dense);
                    pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
                    let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
                    pass.dispatch_workgroups(x, y, 1);
                }
                encoder.copy_buffer_to_buffer(self.contacts.get(), 0, self.staging.get(), 0, bytes);
                Ok(queue.submit([encoder.finish()]))
            })?;
            let mut limit = self.wait.for_pairs(pairs as u64);
            if !self.dispatched {
                limit += FIRST_DISPATCH_ALLOWANCE;
            }
            let wait = Wait {
                step: "a chunk of segment x segment pairs",
                limit,
            };
            let tile = chunk.rects.len();
            read_back(
                &context,
                self.staging.get(),
                submission,
                bytes,
                wait,
                |mapped| {
                    let local: &[SegmentContact] = bytemuck::cast_slice(mapped);
                    // Segment-major within the tile: one run per query.
                    for (k, row) in local.chunks_exact(tile).enumerate() {
                        let at = (chunk.segments.start + k) * m + chunk.rects.start;
                        out[at..at + tile].copy_from_slice(row);
                    }
                },
            )?;
            self.dispatched = true;
        }
        Ok(())
    }

    /// Grows the buffers to hold the given counts, rebuilding the bind group if any buffer was
    /// replaced; true when one was (its contents are gone).
    fn reserve(&mut self, queries: usize, walls: usize, pairs: usize) -> Result<bool> {
        let context = self.context.clone();
        let device = &context.device;
        let cap = self.max_binding_bytes;
        let segment = size_of::<Segment>();
        context.scoped(|| {
            let mut stale = self.bind_group.is_none();
            stale |= self
                .queries
                .reserve(device, (queries * segment) as u64, cap);
            stale |= self.walls.reserve(device, (walls * segment) as u64, cap);
            stale |=
                self.contacts
                    .reserve(device, (pairs * size_of::<SegmentContact>()) as u64, cap);
            if stale {
                self.bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("rectcast.walls.bind_group"),
                    layout: &self.layout,
                    entries: &[
                        entry(0, &self.params),
                        entry(1, self.queries.get()),
                        entry(2, self.walls.get()),
                        entry(3, self.contacts.get()),
                    ],
                }));
            }
            Ok(stale)
        })
    }

    /// How long each chunk may take from now on.
    pub fn set_wait(&mut self, wait: WaitLimit) {
        self.wait = wait;
    }
}
