//! Host side of the shapes' kernels ([`Shape`]: `shaders/segment_segment.wgsl`,
//! `shaders/segment_circle.wgsl`, `shaders/segment_polygon.wgsl`): every query segment against
//! every shape, in chunks the device can take, with buffers kept between calls. The dense
//! pairs run in two passes where the kernel has a second ([`ShapeKernel::listed`](crate::ShapeKernel::listed): the pairs
//! the first could not answer, listed, under an indirect dispatch sized on the GPU); counts
//! run their own entry point and read back one number per query and per shape; first hits and
//! hits reduce the dense pairs on the GPU (`shaders/shape_queries.wgsl`,
//! [`ShapeKernel::reduces`](crate::ShapeKernel::reduces)) and read back one result per query,
//! or the hits alone. One chunk at a time for now: the exact integer kernel, not the
//! transfers, is what these queries cost.

use std::ops::Range;

use super::buffers::{
    Growable, Wait, compute_pipeline, entry, read_back, storage_entry, uniform_entry,
};
use super::chunks::{self, ChunkCaps};
use super::context::GpuContext;
use super::limits::{GpuLimits, WaitLimit};
use super::shader::{ShapeParams, WORKGROUP_SIZE};
use crate::cpu::shape_queries::{NO_SHAPE, comes_first};
use crate::error::Result;
use crate::shape::{Shape, ShapeHit};
use crate::types::{Rect, Segment};

/// What the first dispatch may take on top of its wait: a software driver (lavapipe) compiles a
/// kernel when it first runs, and the exact integer code takes it seconds (8 to 9 s for
/// segment × segment on two cores, measured; more when other work shares them).
const FIRST_DISPATCH_ALLOWANCE: std::time::Duration = std::time::Duration::from_secs(120);

/// One shape's queries on one GPU context: dense pairs, first hits, hits and counts.
pub struct GpuShapeQueries<S: Shape> {
    context: GpuContext,
    caps: ChunkCaps,
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
    layout: wgpu::BindGroupLayout,
    dense: wgpu::ComputePipeline,
    /// The dense kernel's second pass ([`ShapeKernel::listed`](crate::ShapeKernel::listed)):
    /// `list_dispatch`, which sizes it, and the pass itself.
    listed: Option<(wgpu::ComputePipeline, wgpu::ComputePipeline)>,
    /// The list's header (`PairList`: its length, then the second pass's indirect dispatch)
    /// and the listed pairs.
    pair_list: wgpu::Buffer,
    listed_pairs: Growable,
    /// The second pass's dispatch, copied out of the list's header: a buffer a dispatch reads
    /// as its size may not be bound to it.
    list_dispatch_args: wgpu::Buffer,
    /// The counts entry point ([`ShapeKernel::counts`](crate::ShapeKernel::counts)), its
    /// layout and its buffers, where the shape has one.
    counts: Option<CountsKernel>,
    /// The first hits and hits reduced from the dense pairs, where the kernel has them.
    reductions: Option<Reductions>,
    params: wgpu::Buffer,
    queries: Growable,
    shapes: Growable,
    /// Each shape's box ([`Shape::bounds`]): pairs whose boxes are apart skip the exact path.
    bounds: Growable,
    contacts: Growable,
    staging: Growable,
    bind_group: Option<wgpu::BindGroup>,
    wait: WaitLimit,
    /// Whether the kernel has run once (see [`FIRST_DISPATCH_ALLOWANCE`]).
    dispatched: bool,
    shape: std::marker::PhantomData<S>,
}

/// A shape's counts entry point: hits per query and per shape of a tile, summed on the GPU
/// (bindings 5 and 6 of `shaders/shape_passes.wgsl`), so that a call reads back one number per query
/// and per shape instead of every pair's contact.
struct CountsKernel {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    query_hits: Growable,
    shape_hits: Growable,
    staging: Growable,
    bind_group: Option<wgpu::BindGroup>,
    /// Whether it has run once (see [`FIRST_DISPATCH_ALLOWANCE`]; its own compilation).
    dispatched: bool,
}

/// The queries reduced on the GPU from a tile's dense pairs (`shaders/shape_queries.wgsl`):
/// their pipelines, one layout, and their outputs.
struct Reductions {
    layout: wgpu::BindGroupLayout,
    first_hits: wgpu::ComputePipeline,
    hits: wgpu::ComputePipeline,
    /// Each query's first shape in the tile (`NO_SHAPE` for none) and that pair's contact.
    first_shapes: Growable,
    first_contacts: Growable,
    /// How many pairs of the tile hit (zeroed before each dispatch), then each one's pair
    /// index and contact, in no set order.
    hit_count: wgpu::Buffer,
    hit_pairs: Growable,
    hit_contacts: Growable,
    staging: Growable,
    bind_group: Option<wgpu::BindGroup>,
}

/// The entry points of `shaders/shape_queries.wgsl`.
const FIRST_HITS_ENTRY: &str = "shape_first_hits";
const HITS_ENTRY: &str = "shape_hit_list";

/// How long a submission over `pairs` may take: `wait`'s limit, plus the first dispatch's
/// compilation allowance until the kernel has `dispatched` once.
fn wait_for(wait: WaitLimit, pairs: usize, step: &'static str, dispatched: bool) -> Wait {
    let mut limit = wait.for_pairs(pairs as u64);
    if !dispatched {
        limit += FIRST_DISPATCH_ALLOWANCE;
    }
    Wait { step, limit }
}

/// A bind group layout of `entries`, and the pipeline layout of that one group.
fn layouts(
    device: &wgpu::Device,
    label: &'static str,
    entries: &[wgpu::BindGroupLayoutEntry],
) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    (layout, pipeline_layout)
}

/// A shape's layouts and pipelines: compiled once per device and emulation, shared by every
/// engine on the device (see [`GpuContext::compiled`]).
#[derive(Clone)]
struct ShapeKernels {
    layout: wgpu::BindGroupLayout,
    dense: wgpu::ComputePipeline,
    /// `list_dispatch` and the second pass, where the kernel has one.
    listed: Option<(wgpu::ComputePipeline, wgpu::ComputePipeline)>,
    /// The counts entry point and its layout.
    counts: Option<(wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
    /// The reductions' layout, then `shape_first_hits` and `shape_hit_list`.
    reductions: Option<(
        wgpu::BindGroupLayout,
        wgpu::ComputePipeline,
        wgpu::ComputePipeline,
    )>,
}

impl ShapeKernels {
    fn compile<S: Shape>(context: &GpuContext) -> Result<Self> {
        let device = &context.device;
        context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(S::KERNEL.file),
                source: wgpu::ShaderSource::Wgsl(S::KERNEL.source.into()),
            });
            let constants = S::constants(context.emulation());
            let (module, constants) = (&module, &constants);
            // Each layout's pipelines, named after their entry points.
            let pipelines = |label: &'static str, entries: &[wgpu::BindGroupLayoutEntry]| {
                let (layout, pipeline_layout) = layouts(device, label, entries);
                let pipeline = move |entry: &str| {
                    compute_pipeline(device, &pipeline_layout, module, entry, entry, constants)
                };
                (layout, pipeline)
            };
            let (layout, pipeline) = pipelines(
                "rectcast.shapes.layout",
                &[
                    uniform_entry(0),
                    storage_entry(1, true),
                    storage_entry(2, true),
                    storage_entry(3, false),
                    storage_entry(4, true),
                    storage_entry(7, false),
                    storage_entry(8, false),
                ],
            );
            let dense = pipeline(S::KERNEL.entry);
            let listed = S::KERNEL
                .listed
                .map(|entry| (pipeline("list_dispatch"), pipeline(entry)));
            let counts = S::KERNEL.counts.map(|entry| {
                let (layout, pipeline) = pipelines(
                    "rectcast.shapes.counts_layout",
                    &[
                        uniform_entry(0),
                        storage_entry(1, true),
                        storage_entry(2, true),
                        storage_entry(4, true),
                        storage_entry(5, false),
                        storage_entry(6, false),
                    ],
                );
                (layout, pipeline(entry))
            });
            let reductions = S::KERNEL.reduces.then(|| {
                let (layout, pipeline) = pipelines(
                    "rectcast.shapes.reductions_layout",
                    &[
                        uniform_entry(0),
                        storage_entry(3, false),
                        storage_entry(9, false),
                        storage_entry(10, false),
                        storage_entry(11, false),
                        storage_entry(12, false),
                        storage_entry(13, false),
                    ],
                );
                (layout, pipeline(FIRST_HITS_ENTRY), pipeline(HITS_ENTRY))
            });
            Ok(Self {
                layout,
                dense,
                listed,
                counts,
                reductions,
            })
        })
    }
}

impl<S: Shape> GpuShapeQueries<S> {
    /// Takes the device's compiled kernels for `S` (compiling them on first use). Buffers are
    /// created on first use.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) if the shader or the pipeline fails validation.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let kernels = context.compiled::<S, _>(|| ShapeKernels::compile::<S>(&context))?;
        let device = context.device.clone();
        let (params, pair_list, list_dispatch_args, hit_count) = context.scoped(|| {
            let buffer = |label: &'static str, size: u64, usage: wgpu::BufferUsages| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let output = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
            Ok((
                buffer(
                    "rectcast.shapes.params",
                    size_of::<ShapeParams>() as u64,
                    wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                ),
                buffer(
                    "rectcast.shapes.pair_list",
                    16,
                    output | wgpu::BufferUsages::COPY_DST,
                ),
                buffer(
                    "rectcast.shapes.list_dispatch_args",
                    12,
                    wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
                ),
                buffer(
                    "rectcast.shapes.hit_count",
                    16,
                    output | wgpu::BufferUsages::COPY_DST,
                ),
            ))
        })?;
        let counts = kernels.counts.map(|(layout, pipeline)| {
            let counter = wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST;
            CountsKernel {
                layout,
                pipeline,
                query_hits: Growable::new("rectcast.shapes.query_hits", counter),
                shape_hits: Growable::new("rectcast.shapes.shape_hits", counter),
                staging: Growable::new(
                    "rectcast.shapes.counts_staging",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
                bind_group: None,
                dispatched: false,
            }
        });
        let reductions = kernels.reductions.map(|(layout, first_hits, hits)| {
            let output = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
            Reductions {
                first_hits,
                hits,
                layout,
                first_shapes: Growable::new("rectcast.shapes.first_shapes", output),
                first_contacts: Growable::new("rectcast.shapes.first_contacts", output),
                hit_count,
                hit_pairs: Growable::new("rectcast.shapes.hit_pairs", output),
                hit_contacts: Growable::new("rectcast.shapes.hit_contacts", output),
                staging: Growable::new(
                    "rectcast.shapes.reductions_staging",
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                ),
                bind_group: None,
            }
        });
        let (layout, dense, listed) = (kernels.layout, kernels.dense, kernels.listed);
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Ok(Self {
            // A contact is no larger than a rect pair's result, a shape than a rect: the same
            // caps.
            caps: ChunkCaps::new(max_binding_bytes, max_workgroups_per_dimension),
            context,
            max_binding_bytes,
            max_workgroups_per_dimension,
            layout,
            dense,
            listed,
            pair_list,
            listed_pairs: Growable::new("rectcast.shapes.listed_pairs", storage),
            list_dispatch_args,
            counts,
            reductions,
            params,
            queries: Growable::new("rectcast.shapes.queries", storage),
            shapes: Growable::new("rectcast.shapes.shapes", storage),
            bounds: Growable::new("rectcast.shapes.bounds", storage),
            contacts: Growable::new(
                "rectcast.shapes.contacts",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging: Growable::new(
                "rectcast.shapes.staging",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
            bind_group: None,
            wait: limits.wait.unwrap_or_default(),
            dispatched: false,
            shape: std::marker::PhantomData,
        })
    }

    /// Every query against every shape, `out[q * shapes.len() + s]`. Inputs are valid and
    /// `out` has `queries.len() * shapes.len()` entries.
    pub(crate) fn pairs_dense(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        out: &mut [S::Contact],
    ) -> Result<()> {
        let m = shapes.len();
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        for chunk in chunks::plan_dense(queries.len(), m, self.caps) {
            let pairs = chunk.pair_count();
            if self.reserve(chunk.segments.len(), chunk.rects.len(), pairs)? {
                uploaded = (0..0, 0..0);
            }
            self.upload(&chunk, queries, shapes, &mut uploaded);
            let context = self.context.clone();
            let queue = &context.queue;
            let bytes = (pairs * size_of::<S::Contact>()) as u64;
            let submission = context.scoped(|| {
                let device = &context.device;
                self.staging.reserve(device, bytes, self.max_binding_bytes);
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("rectcast.shapes.encoder"),
                });
                self.encode_dense(&mut encoder, pairs);
                encoder.copy_buffer_to_buffer(self.contacts.get(), 0, self.staging.get(), 0, bytes);
                Ok(queue.submit([encoder.finish()]))
            })?;
            let wait = wait_for(self.wait, pairs, S::KERNEL.entry, self.dispatched);
            let tile = chunk.rects.len();
            read_back(
                &context,
                self.staging.get(),
                submission,
                bytes,
                wait,
                |mapped| {
                    let local: &[S::Contact] = bytemuck::cast_slice(mapped);
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

    /// Records the dense pairs of the uploaded tile (`pairs` of them) into `contacts`: the
    /// dense entry point, then its second pass where the kernel has one.
    fn encode_dense(&self, encoder: &mut wgpu::CommandEncoder, pairs: usize) {
        if self.listed.is_some() {
            encoder.clear_buffer(&self.pair_list, 0, None);
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.shapes.pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.dense);
            pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
            let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
            pass.dispatch_workgroups(x, y, 1);
        }
        if let Some((list_dispatch, listed)) = &self.listed {
            // Sized on the GPU from the list's length, then run over the list.
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.shapes.list_dispatch_pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(list_dispatch);
            pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
            pass.dispatch_workgroups(1, 1, 1);
            drop(pass);
            encoder.copy_buffer_to_buffer(&self.pair_list, 4, &self.list_dispatch_args, 0, 12);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.shapes.listed_pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(listed);
            pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
            pass.dispatch_workgroups_indirect(&self.list_dispatch_args, 0);
        }
    }

    /// Each query's first hit among the shapes (the smallest `t_enter`, the lowest index on a
    /// tie: [`comes_first`]), into `first` (as long as `queries`, every entry `None` on entry).
    /// Each tile's dense pairs are reduced on the GPU (`shape_first_hits`), which sends back
    /// one shape and contact per query; the host keeps the first over the tiles. Inputs are
    /// valid and the kernel reduces ([`ShapeKernel::reduces`](crate::ShapeKernel::reduces)).
    pub(crate) fn first_hits(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        first: &mut [Option<ShapeHit<S::Contact>>],
    ) -> Result<()> {
        let contact_size = size_of::<S::Contact>();
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        for chunk in chunks::plan_dense(queries.len(), shapes.len(), self.caps) {
            let pairs = chunk.pair_count();
            let n = chunk.segments.len();
            let mut stale = self.reserve(n, chunk.rects.len(), pairs)?;
            stale |= self.reserve_reductions(n, 0)?;
            if stale {
                uploaded = (0..0, 0..0);
            }
            self.upload(&chunk, queries, shapes, &mut uploaded);
            let context = self.context.clone();
            let (shape_bytes, contact_bytes) = ((n * 4) as u64, (n * contact_size) as u64);
            let reductions = self.reductions.as_ref().expect("the kernel reduces");
            let submission = context.scoped(|| {
                let mut encoder =
                    context
                        .device
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("rectcast.shapes.first_hits_encoder"),
                        });
                self.encode_dense(&mut encoder, pairs);
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("rectcast.shapes.first_hits_pass"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(&reductions.first_hits);
                    pass.set_bind_group(0, reductions.bind_group.as_ref(), &[]);
                    // A workgroup per query.
                    let (x, y) = chunks::workgroup_grid(
                        n * WORKGROUP_SIZE as usize,
                        self.max_workgroups_per_dimension,
                    );
                    pass.dispatch_workgroups(x, y, 1);
                }
                let staging = reductions.staging.get();
                let (shapes_out, contacts_out) = (
                    reductions.first_shapes.get(),
                    reductions.first_contacts.get(),
                );
                encoder.copy_buffer_to_buffer(shapes_out, 0, staging, 0, shape_bytes);
                encoder.copy_buffer_to_buffer(contacts_out, 0, staging, shape_bytes, contact_bytes);
                Ok(context.queue.submit([encoder.finish()]))
            })?;
            let wait = wait_for(self.wait, pairs, FIRST_HITS_ENTRY, self.dispatched);
            read_back(
                &context,
                reductions.staging.get(),
                submission,
                shape_bytes + contact_bytes,
                wait,
                |mapped| {
                    let (shape_bytes, contact_bytes) = mapped.split_at(shape_bytes as usize);
                    let tile_shapes: &[u32] = bytemuck::cast_slice(shape_bytes);
                    let contacts: &[S::Contact] = bytemuck::cast_slice(contact_bytes);
                    for (k, (&j, contact)) in tile_shapes.iter().zip(contacts).enumerate() {
                        if j == NO_SHAPE {
                            continue;
                        }
                        let shape = (chunk.rects.start + j as usize) as u32;
                        let slot = &mut first[chunk.segments.start + k];
                        let (best_shape, best) =
                            slot.map_or((NO_SHAPE, *contact), |b| (b.shape, b.contact));
                        if comes_first(contact, shape, &best, best_shape) {
                            *slot = Some(ShapeHit {
                                segment: (chunk.segments.start + k) as u32,
                                shape,
                                contact: *contact,
                            });
                        }
                    }
                },
            )?;
            self.dispatched = true;
        }
        Ok(())
    }

    /// Every hitting (query, shape) pair, in (query, shape) order. Each tile's dense pairs are
    /// reduced on the GPU (`shape_hit_list` appends the hits), which sends back how many, then the
    /// hits alone. Inputs are valid and the kernel reduces ([`ShapeKernel::reduces`](crate::ShapeKernel::reduces)).
    pub(crate) fn hits(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<ShapeHit<S::Contact>>> {
        let contact_size = size_of::<S::Contact>();
        let mut hits = Vec::new();
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        for chunk in chunks::plan_dense(queries.len(), shapes.len(), self.caps) {
            let pairs = chunk.pair_count();
            let tile = chunk.rects.len();
            let mut stale = self.reserve(chunk.segments.len(), tile, pairs)?;
            stale |= self.reserve_reductions(0, pairs)?;
            if stale {
                uploaded = (0..0, 0..0);
            }
            self.upload(&chunk, queries, shapes, &mut uploaded);
            let context = self.context.clone();
            let reductions = self.reductions.as_ref().expect("the kernel reduces");
            let staging = reductions.staging.get();
            let submission = context.scoped(|| {
                let mut encoder =
                    context
                        .device
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("rectcast.shapes.hits_encoder"),
                        });
                self.encode_dense(&mut encoder, pairs);
                encoder.clear_buffer(&reductions.hit_count, 0, None);
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("rectcast.shapes.hits_pass"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(&reductions.hits);
                    pass.set_bind_group(0, reductions.bind_group.as_ref(), &[]);
                    let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
                    pass.dispatch_workgroups(x, y, 1);
                }
                encoder.copy_buffer_to_buffer(&reductions.hit_count, 0, staging, 0, 4);
                Ok(context.queue.submit([encoder.finish()]))
            })?;
            let mut count = 0usize;
            let wait = wait_for(self.wait, pairs, HITS_ENTRY, self.dispatched);
            read_back(&context, staging, submission, 4, wait, |mapped| {
                count = bytemuck::pod_read_unaligned::<u32>(mapped) as usize;
            })?;
            self.dispatched = true;
            if count == 0 {
                continue;
            }
            // The hits alone: their pair indices, then their contacts.
            let (pair_bytes, contact_bytes) = ((count * 4) as u64, (count * contact_size) as u64);
            let submission = context.scoped(|| {
                let mut encoder =
                    context
                        .device
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("rectcast.shapes.hits_copy_encoder"),
                        });
                encoder.copy_buffer_to_buffer(
                    reductions.hit_pairs.get(),
                    0,
                    staging,
                    0,
                    pair_bytes,
                );
                encoder.copy_buffer_to_buffer(
                    reductions.hit_contacts.get(),
                    0,
                    staging,
                    pair_bytes,
                    contact_bytes,
                );
                Ok(context.queue.submit([encoder.finish()]))
            })?;
            let wait = wait_for(self.wait, count, HITS_ENTRY, self.dispatched);
            read_back(
                &context,
                staging,
                submission,
                pair_bytes + contact_bytes,
                wait,
                |mapped| {
                    let (pair_bytes, contact_bytes) = mapped.split_at(pair_bytes as usize);
                    let indices: &[u32] = bytemuck::cast_slice(pair_bytes);
                    let contacts: &[S::Contact] = bytemuck::cast_slice(contact_bytes);
                    hits.extend(indices.iter().zip(contacts).map(|(&i, &contact)| {
                        let i = i as usize;
                        ShapeHit {
                            segment: (chunk.segments.start + i / tile) as u32,
                            shape: (chunk.rects.start + i % tile) as u32,
                            contact,
                        }
                    }));
                },
            )?;
        }
        // Appended in no set order, and by tile: (segment, shape) is each hit's own key.
        hits.sort_unstable_by_key(|h| (h.segment, h.shape));
        Ok(hits)
    }

    /// Grows the reductions' outputs to hold `queries` first hits and `pairs` hits, rebuilding
    /// their bind group if any buffer (theirs or the contacts they read) was replaced.
    fn reserve_reductions(&mut self, queries: usize, pairs: usize) -> Result<bool> {
        let context = self.context.clone();
        let device = &context.device;
        let cap = self.max_binding_bytes;
        let contact_size = size_of::<S::Contact>();
        let Some(reductions) = self.reductions.as_mut() else {
            return Ok(false);
        };
        context.scoped(|| {
            let mut stale = reductions.bind_group.is_none();
            stale |= reductions
                .first_shapes
                .reserve(device, (queries * 4) as u64, cap);
            stale |=
                reductions
                    .first_contacts
                    .reserve(device, (queries * contact_size) as u64, cap);
            stale |= reductions
                .hit_pairs
                .reserve(device, (pairs * 4) as u64, cap);
            stale |= reductions
                .hit_contacts
                .reserve(device, (pairs * contact_size) as u64, cap);
            let out = (queries * (4 + contact_size)).max(pairs * (4 + contact_size));
            reductions.staging.reserve(device, out as u64, u64::MAX);
            if stale {
                reductions.bind_group =
                    Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("rectcast.shapes.reductions_bind_group"),
                        layout: &reductions.layout,
                        entries: &[
                            entry(0, &self.params),
                            entry(3, self.contacts.get()),
                            entry(9, reductions.first_shapes.get()),
                            entry(10, reductions.first_contacts.get()),
                            entry(11, &reductions.hit_count),
                            entry(12, reductions.hit_pairs.get()),
                            entry(13, reductions.hit_contacts.get()),
                        ],
                    }));
            }
            Ok(stale)
        })
    }

    /// Hits per query and per shape, added into `per_query` and `per_shape` (as long as
    /// `queries` and `shapes`), exactly: the shape's counts entry point, which decides each
    /// pair's hit without its t and sums on the GPU. Inputs are valid. Without a counts entry
    /// point ([`ShapeKernel::counts`](crate::ShapeKernel::counts) `None`) the dense pairs are
    /// counted instead.
    pub(crate) fn counts(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        per_query: &mut [u32],
        per_shape: &mut [u64],
    ) -> Result<()> {
        if queries.is_empty() || shapes.is_empty() {
            return Ok(());
        }
        if self.counts.is_none() {
            let m = shapes.len();
            let mut contacts = vec![S::MISS; queries.len() * m];
            self.pairs_dense(queries, shapes, &mut contacts)?;
            for (i, contact) in contacts.iter().enumerate() {
                if crate::shape::ShapeContact::hit(contact) {
                    per_query[i / m] += 1;
                    per_shape[i % m] += 1;
                }
            }
            return Ok(());
        }
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        for chunk in chunks::plan_dense(queries.len(), shapes.len(), self.caps) {
            let pairs = chunk.pair_count();
            let (n, m) = (chunk.segments.len(), chunk.rects.len());
            let mut stale = self.reserve(n, m, 0)?;
            stale |= self.reserve_counts(n, m)?;
            if stale {
                // An input buffer was replaced: its contents are gone.
                uploaded = (0..0, 0..0);
            }
            self.upload(&chunk, queries, shapes, &mut uploaded);
            let context = self.context.clone();
            let queue = &context.queue;
            let kernel = self.counts.as_mut().expect("checked above");
            let (query_bytes, shape_bytes) = ((n * 4) as u64, (m * 4) as u64);
            let submission = context.scoped(|| {
                let device = &context.device;
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("rectcast.shapes.counts_encoder"),
                });
                encoder.clear_buffer(kernel.query_hits.get(), 0, Some(query_bytes));
                encoder.clear_buffer(kernel.shape_hits.get(), 0, Some(shape_bytes));
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("rectcast.shapes.counts_pass"),
                        timestamp_writes: None,
                    });
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, kernel.bind_group.as_ref(), &[]);
                    let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
                    pass.dispatch_workgroups(x, y, 1);
                }
                let staging = kernel.staging.get();
                encoder.copy_buffer_to_buffer(kernel.query_hits.get(), 0, staging, 0, query_bytes);
                encoder.copy_buffer_to_buffer(
                    kernel.shape_hits.get(),
                    0,
                    staging,
                    query_bytes,
                    shape_bytes,
                );
                Ok(queue.submit([encoder.finish()]))
            })?;
            let step = S::KERNEL.counts.unwrap_or(S::KERNEL.entry);
            let wait = wait_for(self.wait, pairs, step, kernel.dispatched);
            read_back(
                &context,
                kernel.staging.get(),
                submission,
                query_bytes + shape_bytes,
                wait,
                |mapped| {
                    let hits: &[u32] = bytemuck::cast_slice(mapped);
                    let (query_hits, shape_hits) = hits.split_at(n);
                    for (total, &h) in per_query[chunk.segments.clone()].iter_mut().zip(query_hits)
                    {
                        *total += h;
                    }
                    for (total, &h) in per_shape[chunk.rects.clone()].iter_mut().zip(shape_hits) {
                        *total += h as u64;
                    }
                },
            )?;
            kernel.dispatched = true;
        }
        Ok(())
    }

    /// Uploads a chunk's tiles (each only when it changed: with all shapes in one tile they go
    /// up once) and its parameters.
    fn upload(
        &mut self,
        chunk: &chunks::DenseChunk,
        queries: &[Segment],
        shapes: &[S],
        uploaded: &mut (Range<usize>, Range<usize>),
    ) {
        let queue = &self.context.queue;
        if uploaded.0 != chunk.segments {
            queue.write_buffer(
                self.queries.get(),
                0,
                bytemuck::cast_slice(&queries[chunk.segments.clone()]),
            );
        }
        if uploaded.1 != chunk.rects {
            let tile = &shapes[chunk.rects.clone()];
            queue.write_buffer(self.shapes.get(), 0, bytemuck::cast_slice(tile));
            let bounds: Vec<Rect> = tile.iter().map(S::bounds).collect();
            queue.write_buffer(self.bounds.get(), 0, bytemuck::cast_slice(&bounds));
        }
        *uploaded = (chunk.segments.clone(), chunk.rects.clone());
        let params = ShapeParams {
            query_count: chunk.segments.len() as u32,
            shape_count: chunk.rects.len() as u32,
            pair_count: chunk.pair_count() as u32,
            row_workgroups: self.max_workgroups_per_dimension,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
    }

    /// Grows the counts' buffers to hold a tile of `queries` × `shapes`, rebuilding their
    /// bind group if any buffer (of the counts or the shared inputs) was replaced.
    fn reserve_counts(&mut self, queries: usize, shapes: usize) -> Result<bool> {
        let context = self.context.clone();
        let device = &context.device;
        let cap = self.max_binding_bytes;
        let Some(kernel) = self.counts.as_mut() else {
            return Ok(false);
        };
        context.scoped(|| {
            let (query_bytes, shape_bytes) = ((queries * 4) as u64, (shapes * 4) as u64);
            let mut stale = kernel.bind_group.is_none();
            stale |= kernel.query_hits.reserve(device, query_bytes, cap);
            stale |= kernel.shape_hits.reserve(device, shape_bytes, cap);
            kernel
                .staging
                .reserve(device, query_bytes + shape_bytes, u64::MAX);
            if stale {
                kernel.bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("rectcast.shapes.counts_bind_group"),
                    layout: &kernel.layout,
                    entries: &[
                        entry(0, &self.params),
                        entry(1, self.queries.get()),
                        entry(2, self.shapes.get()),
                        entry(4, self.bounds.get()),
                        entry(5, kernel.query_hits.get()),
                        entry(6, kernel.shape_hits.get()),
                    ],
                }));
            }
            Ok(stale)
        })
    }

    /// Grows the buffers to hold the given counts, rebuilding the bind group if any buffer was
    /// replaced; true when one was (its contents are gone).
    fn reserve(&mut self, queries: usize, shapes: usize, pairs: usize) -> Result<bool> {
        let context = self.context.clone();
        let device = &context.device;
        let cap = self.max_binding_bytes;
        let segment = size_of::<Segment>();
        context.scoped(|| {
            let mut stale = self.bind_group.is_none();
            stale |= self
                .queries
                .reserve(device, (queries * segment) as u64, cap);
            stale |= self
                .shapes
                .reserve(device, (shapes * size_of::<S>()) as u64, cap);
            stale |= self
                .bounds
                .reserve(device, (shapes * size_of::<Rect>()) as u64, cap);
            stale |= self
                .contacts
                .reserve(device, (pairs * size_of::<S::Contact>()) as u64, cap);
            stale |= self.listed_pairs.reserve(device, (pairs * 4) as u64, cap);
            if stale {
                // The counts' bind group names the inputs too.
                if let Some(counts) = self.counts.as_mut() {
                    counts.bind_group = None;
                }
                if let Some(reductions) = self.reductions.as_mut() {
                    reductions.bind_group = None;
                }
                self.bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("rectcast.shapes.bind_group"),
                    layout: &self.layout,
                    entries: &[
                        entry(0, &self.params),
                        entry(1, self.queries.get()),
                        entry(2, self.shapes.get()),
                        entry(3, self.contacts.get()),
                        entry(4, self.bounds.get()),
                        entry(7, &self.pair_list),
                        entry(8, self.listed_pairs.get()),
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
