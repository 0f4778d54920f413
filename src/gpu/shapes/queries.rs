//! The queries over shapes on the GPU, each as what a tile encodes and how its read-back
//! merges; the chunk ring and the uploads are the host's (`super`).

use super::kernels::{CountsKernel, HITS_ENTRY, ShapeKernels};
use super::{DENSE, GpuShapeQueries, Run, Staged, TileWork};
use crate::error::Result;
use crate::gpu::buffers::Binder;
use crate::gpu::chunks::{self, DenseChunk};
use crate::gpu::timer::KernelTimer;
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::types::Segment;

/// The hits' work: a tile, whose read-back is how many of its pairs hit, then a copy of those
/// hits alone, which reads the outputs the tile left (so the hits run one piece at a time).
enum HitsWork {
    Tile(DenseChunk),
    Copy { tile: DenseChunk, count: usize },
}

impl TileWork for HitsWork {
    fn tile(&self) -> Option<&DenseChunk> {
        match self {
            HitsWork::Tile(tile) => Some(tile),
            HitsWork::Copy { .. } => None,
        }
    }
}

/// A compute pass of `pipeline` over `bind_group`, `groups` workgroups in rows, timed by
/// `timer` when it is on.
fn dispatch(
    encoder: &mut wgpu::CommandEncoder,
    (label, timer): (&'static str, Option<&KernelTimer>),
    pipeline: &wgpu::ComputePipeline,
    bind_group: Option<&wgpu::BindGroup>,
    (x, y): (u32, u32),
) {
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: timer.and_then(KernelTimer::writes),
    });
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, bind_group, &[]);
    pass.dispatch_workgroups(x, y, 1);
}

impl<S: Shape> GpuShapeQueries<S> {
    /// The workgroups of a dispatch over `invocations`, in rows.
    fn grid(&self, invocations: usize) -> (u32, u32) {
        chunks::workgroup_grid(invocations, self.max_workgroups_per_dimension)
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
        let contact = size_of::<S::Contact>();
        let work = chunks::plan_dense(queries.len(), m, self.tile_caps(S::KERNEL.entry));
        self.run_tiles(
            queries,
            shapes,
            DENSE,
            work,
            |this, tile: &DenseChunk, encoder, slot| {
                let pairs = tile.pair_count();
                let bytes = (pairs * contact) as u64;
                this.reserve_staging(slot, bytes);
                this.encode_dense(encoder, pairs);
                let staging = this.staging[slot].get();
                encoder.copy_buffer_to_buffer(this.contacts.get(), 0, staging, 0, bytes);
                Ok(Staged {
                    bytes,
                    step: S::KERNEL.entry,
                    pairs,
                })
            },
            |tile, mapped, _| {
                let local: &[S::Contact] = bytemuck::cast_slice(mapped);
                let width = tile.targets.len();
                // Query-major within the tile: one run per query.
                for (k, row) in local.chunks_exact(width).enumerate() {
                    let at = (tile.segments.start + k) * m + tile.targets.start;
                    out[at..at + width].copy_from_slice(row);
                }
            },
        )
    }

    /// Records the dense pairs of the uploaded tile (`pairs` of them) into `contacts`: the
    /// dense entry point, then its second pass where the kernel has one.
    fn encode_dense(&self, encoder: &mut wgpu::CommandEncoder, pairs: usize) {
        let bind_group = self.bind_group.as_ref();
        if self.kernels.listed.is_some() {
            encoder.clear_buffer(&self.pair_list, 0, None);
        }
        let grid = self.grid(pairs);
        let timer = self.timer.as_ref();
        dispatch(
            encoder,
            ("rectcast.shapes.pass", timer),
            &self.kernels.dense,
            bind_group,
            grid,
        );
        if let Some((list_dispatch, listed)) = &self.kernels.listed {
            // Sized on the GPU from the list's length, then run over the list.
            let label = "rectcast.shapes.list_dispatch_pass";
            dispatch(encoder, (label, timer), list_dispatch, bind_group, (1, 1));
            encoder.copy_buffer_to_buffer(&self.pair_list, 4, &self.list_dispatch_args, 0, 12);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.shapes.listed_pass"),
                timestamp_writes: timer.and_then(KernelTimer::writes),
            });
            pass.set_pipeline(listed);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups_indirect(&self.list_dispatch_args, 0);
        }
    }

    /// Every hitting (query, shape) pair, in (query, shape) order. Each tile's dense pairs are
    /// reduced on the GPU (`shape_hit_list` appends the hits), which sends back how many, then
    /// the hits alone. Inputs are valid and the kernel reduces
    /// ([`ShapeKernel::reduces`](crate::ShapeKernel::reduces)).
    pub(crate) fn hits(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<ShapeHit<S::Contact>>> {
        let contact = size_of::<S::Contact>();
        let mut hits = Vec::new();
        let work = chunks::plan_dense(queries.len(), shapes.len(), self.tile_caps(HITS_ENTRY))
            .map(HitsWork::Tile);
        // One piece at a time: a tile's copy reads the hit list it left.
        self.run_tiles(
            queries,
            shapes,
            Run {
                in_flight: 1,
                contacts: true,
            },
            work,
            |this, work: &HitsWork, encoder, slot| match work {
                HitsWork::Tile(tile) => {
                    let pairs = tile.pair_count();
                    this.reserve_reductions(pairs);
                    this.reserve_staging(slot, 4);
                    this.encode_dense(encoder, pairs);
                    let reductions = this.reductions.as_ref().expect("the kernel reduces");
                    encoder.clear_buffer(&reductions.hit_count, 0, None);
                    let bind_group = reductions.bind_group.as_ref();
                    let label = "rectcast.shapes.hits_pass";
                    dispatch(
                        encoder,
                        (label, this.timer.as_ref()),
                        &reductions.hits,
                        bind_group,
                        this.grid(pairs),
                    );
                    let staging = this.staging[slot].get();
                    encoder.copy_buffer_to_buffer(&reductions.hit_count, 0, staging, 0, 4);
                    Ok(Staged {
                        bytes: 4,
                        step: HITS_ENTRY,
                        pairs,
                    })
                }
                HitsWork::Copy { count, .. } => {
                    this.reserve_staging(slot, (count * (4 + contact)) as u64);
                    let reductions = this.reductions.as_ref().expect("the kernel reduces");
                    let lists = (reductions.hit_pairs.get(), reductions.hit_contacts.get());
                    let staging = this.staging[slot].get();
                    Ok(Staged {
                        bytes: copy_hits::<S::Contact>(encoder, lists, staging, *count),
                        step: HITS_ENTRY,
                        pairs: *count,
                    })
                }
            },
            |work, mapped, again| match work {
                HitsWork::Tile(tile) => {
                    let count = bytemuck::pod_read_unaligned::<u32>(mapped) as usize;
                    if count > 0 {
                        again.push(HitsWork::Copy {
                            tile: tile.clone(),
                            count,
                        });
                    }
                }
                HitsWork::Copy { tile, count } => merge_hits(tile, mapped, *count, &mut hits),
            },
        )?;
        // Appended in no set order, and by tile: (segment, shape) is each hit's own key.
        hits.sort_unstable_by_key(|h| (h.segment, h.shape));
        Ok(hits)
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
        let Some(step) = S::KERNEL.counts else {
            let m = shapes.len();
            let mut contacts = vec![S::MISS; queries.len() * m];
            self.pairs_dense(queries, shapes, &mut contacts)?;
            for (i, contact) in contacts.iter().enumerate() {
                if contact.hit() {
                    per_query[i / m] += 1;
                    per_shape[i % m] += 1;
                }
            }
            return Ok(());
        };
        if self.counts.is_none() {
            self.counts = ShapeKernels::compile_counts::<S>(&self.context)?.map(CountsKernel::new);
        }
        let work = chunks::plan_dense(queries.len(), shapes.len(), self.tile_caps(step));
        // With room for the dense pairs' list, which the counts' first pass fills (each tile's
        // submission reads it back only through its counts).
        self.run_tiles(
            queries,
            shapes,
            Run {
                contacts: true,
                ..DENSE
            },
            work,
            |this, tile: &DenseChunk, encoder, slot| {
                let (n, m) = (tile.segments.len(), tile.targets.len());
                let (query_bytes, shape_bytes) = ((n * 4) as u64, (m * 4) as u64);
                this.reserve_counts(n, m);
                this.reserve_staging(slot, query_bytes + shape_bytes);
                let kernel = this.counts.as_ref().expect("the kernel counts");
                encoder.clear_buffer(kernel.query_hits.get(), 0, Some(query_bytes));
                encoder.clear_buffer(kernel.shape_hits.get(), 0, Some(shape_bytes));
                encoder.clear_buffer(&this.pair_list, 0, None);
                let (label, bind_group) =
                    ("rectcast.shapes.counts_pass", kernel.bind_group.as_ref());
                let pairs = tile.pair_count();
                let timer = this.timer.as_ref();
                dispatch(
                    encoder,
                    (label, timer),
                    &kernel.pipeline,
                    bind_group,
                    this.grid(pairs),
                );
                // Sized on the GPU from the list's length, then run over the list.
                let (list_dispatch, _) = this.kernels.listed.as_ref().expect("a listed pass");
                let label = "rectcast.shapes.list_dispatch_pass";
                let dense = this.bind_group.as_ref();
                dispatch(encoder, (label, timer), list_dispatch, dense, (1, 1));
                encoder.copy_buffer_to_buffer(&this.pair_list, 4, &this.list_dispatch_args, 0, 12);
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("rectcast.shapes.counts_listed_pass"),
                    timestamp_writes: timer.and_then(KernelTimer::writes),
                });
                pass.set_pipeline(&kernel.listed);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups_indirect(&this.list_dispatch_args, 0);
                drop(pass);
                let staging = this.staging[slot].get();
                encoder.copy_buffer_to_buffer(kernel.query_hits.get(), 0, staging, 0, query_bytes);
                let shape_hits = kernel.shape_hits.get();
                encoder.copy_buffer_to_buffer(shape_hits, 0, staging, query_bytes, shape_bytes);
                Ok(Staged {
                    bytes: query_bytes + shape_bytes,
                    step,
                    pairs,
                })
            },
            |tile, mapped, _| merge_counts(tile, mapped, per_query, per_shape),
        )
    }

    /// Grows the counts' outputs to hold a tile of `queries` × `shapes`, rebuilding their
    /// bind group if any buffer (theirs or the inputs they read) was replaced.
    fn reserve_counts(&mut self, queries: usize, shapes: usize) {
        let device = &self.context.device;
        let cap = self.max_binding_bytes;
        let Some(kernel) = self.counts.as_mut() else {
            return;
        };
        Binder::new(device, cap, &kernel.bind_group)
            .bind(0, &self.params)
            .bind(1, self.queries.get())
            .bind(2, self.shapes.get())
            .bind(4, self.bounds.get())
            .grow(5, &mut kernel.query_hits, (queries * 4) as u64)
            .grow(6, &mut kernel.shape_hits, (shapes * 4) as u64)
            .bind(7, &self.pair_list)
            .bind(8, self.listed_pairs.get())
            .build(
                "rectcast.shapes.counts_bind_group",
                &kernel.layout,
                &mut kernel.bind_group,
            );
    }

    /// Grows the hit list's outputs to hold `pairs` hits, rebuilding their bind group if any
    /// buffer (theirs or the contacts they read) was replaced.
    fn reserve_reductions(&mut self, pairs: usize) {
        let device = &self.context.device;
        let cap = self.max_binding_bytes;
        let contact = size_of::<S::Contact>();
        let Some(reductions) = self.reductions.as_mut() else {
            return;
        };
        Binder::new(device, cap, &reductions.bind_group)
            .bind(0, &self.params)
            .bind(3, self.contacts.get())
            .bind(11, &reductions.hit_count)
            .grow(12, &mut reductions.hit_pairs, (pairs * 4) as u64)
            .grow(13, &mut reductions.hit_contacts, (pairs * contact) as u64)
            .build(
                "rectcast.shapes.reductions_bind_group",
                &reductions.layout,
                &mut reductions.bind_group,
            );
    }
}

/// Adds `tile`'s read-back (`mapped`: hits per query of the tile, then per shape of it) into
/// `per_query` and `per_shape`.
pub(super) fn merge_counts(
    tile: &DenseChunk,
    mapped: &[u8],
    per_query: &mut [u32],
    per_shape: &mut [u64],
) {
    let hits: &[u32] = bytemuck::cast_slice(mapped);
    let (query_hits, shape_hits) = hits.split_at(tile.segments.len());
    for (total, &h) in per_query[tile.segments.clone()].iter_mut().zip(query_hits) {
        *total += h;
    }
    for (total, &h) in per_shape[tile.targets.clone()].iter_mut().zip(shape_hits) {
        *total += h as u64;
    }
}

/// Records the copy of the first `count` hits of a hit list (`lists`: each hit's pair index,
/// then its contact) into `staging`, indices first; the bytes copied.
pub(super) fn copy_hits<C>(
    encoder: &mut wgpu::CommandEncoder,
    (pairs, contacts): (&wgpu::Buffer, &wgpu::Buffer),
    staging: &wgpu::Buffer,
    count: usize,
) -> u64 {
    let (pair_bytes, contact_bytes) = ((count * 4) as u64, (count * size_of::<C>()) as u64);
    encoder.copy_buffer_to_buffer(pairs, 0, staging, 0, pair_bytes);
    encoder.copy_buffer_to_buffer(contacts, 0, staging, pair_bytes, contact_bytes);
    pair_bytes + contact_bytes
}

/// Appends to `hits` the `count` hits of `tile` a copy read back (`mapped`, as [`copy_hits`]
/// lays them out: pair `i` is the tile's query `i / width` and shape `i % width`).
pub(super) fn merge_hits<C: ShapeContact>(
    tile: &DenseChunk,
    mapped: &[u8],
    count: usize,
    hits: &mut Vec<ShapeHit<C>>,
) {
    let (pair_bytes, contact_bytes) = mapped.split_at(count * 4);
    let indices: &[u32] = bytemuck::cast_slice(pair_bytes);
    let contacts: &[C] = bytemuck::cast_slice(&contact_bytes[..count * size_of::<C>()]);
    let width = tile.targets.len();
    hits.extend(indices.iter().zip(contacts).map(|(&i, &contact)| {
        let i = i as usize;
        ShapeHit {
            segment: (tile.segments.start + i / width) as u32,
            shape: (tile.targets.start + i % width) as u32,
            contact,
        }
    }));
}
