//! Host side of `shaders/pairs.wgsl`: pipelines built once, buffers kept between calls and grown
//! only when a batch needs more, batches split into chunks the device can take.

use std::collections::VecDeque;
use std::ops::Range;

use wgpu::util::DeviceExt;

use super::buffers::{
    Growable, PendingRead, Wait, compute_pipeline, entry, storage_entry, uniform_entry,
};
use super::chunks::{self, ChunkCaps};
use super::context::GpuContext;
use super::limits::{GpuLimits, UNCERTAIN_BYTES, WaitLimit};
use super::queries::{CHUNKS_IN_FLIGHT, GpuCall};
use super::shader::{self, Params};
use super::timer::KernelTimer;
use crate::cpu::segment_rect::segment_rect;
use crate::error::Result;
use crate::types::{PairIndex, PairResult, Rect, Segment, flags};

/// The pair queries on one GPU context.
pub struct GpuPairs {
    context: GpuContext,
    caps: ChunkCaps,
    /// The largest buffer, in bytes: the device's binding limit or the caller's lower one.
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
    layout: wgpu::BindGroupLayout,
    dense: wgpu::ComputePipeline,
    list: wgpu::ComputePipeline,
    params: wgpu::Buffer,
    segments: Growable,
    rects: Growable,
    pair_indices: Growable,
    results: Growable,
    /// Pairs the kernel could not certify (WGSL `Uncertain`), cleared before each dispatch.
    uncertain: wgpu::Buffer,
    /// MAP_READ may only be combined with COPY_DST, so results are copied here to be read,
    /// followed by the `Uncertain` buffer: one per chunk in flight.
    staging: Vec<Growable>,
    bind_group: Option<wgpu::BindGroup>,
    /// Pairs re-decided on the host since creation.
    uncertain_pairs: u64,
    timer: Option<KernelTimer>,
    wait: WaitLimit,
    call: GpuCall,
}

impl GpuPairs {
    /// Compiles the pipelines. Buffers are created on first use.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) if the shader or a pipeline fails validation on this device.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let caps = ChunkCaps::new(max_binding_bytes, max_workgroups_per_dimension);
        let device = context.device.clone();
        let (layout, dense, list, params, uncertain) = context.scoped(|| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rectcast.pairs.wgsl"),
                source: wgpu::ShaderSource::Wgsl(shader::PAIRS_WGSL.into()),
            });
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("rectcast.pairs.layout"),
                entries: &[
                    uniform_entry(0),
                    storage_entry(1, true),
                    storage_entry(2, true),
                    storage_entry(3, true),
                    storage_entry(4, false),
                    storage_entry(5, false),
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("rectcast.pairs.pipeline_layout"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let constants = shader::pairs_constants(context.emulation());
            let pipeline = |entry_point: &str, label: &str| {
                compute_pipeline(
                    &device,
                    &pipeline_layout,
                    &module,
                    entry_point,
                    label,
                    &constants,
                )
            };
            let dense = pipeline("pairs_dense", "rectcast.pairs_dense");
            let list = pipeline("pairs_list", "rectcast.pairs_list");
            let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("rectcast.params"),
                contents: bytemuck::bytes_of(&Params::default()),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            });
            let uncertain = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rectcast.uncertain"),
                size: UNCERTAIN_BYTES,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            Ok((layout, dense, list, params, uncertain))
        })?;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        Ok(Self {
            timer: KernelTimer::new(&context, "rectcast.pairs"),
            context,
            caps,
            max_binding_bytes,
            max_workgroups_per_dimension,
            layout,
            dense,
            list,
            params,
            uncertain,
            segments: Growable::new("rectcast.segments", storage),
            rects: Growable::new("rectcast.rects", storage),
            pair_indices: Growable::new("rectcast.pair_indices", storage),
            results: Growable::new(
                "rectcast.results",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            staging: (0..CHUNKS_IN_FLIGHT)
                .map(|_| {
                    Growable::new(
                        "rectcast.staging",
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    )
                })
                .collect(),
            bind_group: None,
            uncertain_pairs: 0,
            wait: limits.wait.unwrap_or_default(),
            call: GpuCall::default(),
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.context
    }

    /// Bytes of GPU memory held in buffers between calls.
    pub fn buffer_bytes(&self) -> u64 {
        let held = [
            &self.segments,
            &self.rects,
            &self.pair_indices,
            &self.results,
        ];
        held.into_iter()
            .chain(&self.staging)
            .filter_map(|g| g.buffer.as_ref())
            .map(|b| b.size())
            .sum::<u64>()
            + self.params.size()
            + self.uncertain.size()
    }

    /// Pairs whose decision the kernel's filter could not certify, re-decided exactly on the
    /// host, since this instance was created.
    pub fn uncertain_pairs(&self) -> u64 {
        self.uncertain_pairs
    }

    /// The per-dispatch caps this instance splits batches by.
    pub fn caps(&self) -> ChunkCaps {
        self.caps
    }

    /// Dense query; `results.len() == segments.len() * rects.len()`. Inputs are valid.
    pub(crate) fn pairs_dense(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        self.start_timing();
        let m = rects.len();
        let mut uploaded: (Range<usize>, Range<usize>) = (0..0, 0..0);
        let mut copy_out =
            |chunk: &chunks::DenseChunk, local: &[PairResult], uncertain: &[usize]| {
                // The chunk's results are segment-major within the tile: one run per segment.
                let tile = chunk.rects.len();
                for (k, local_row) in local.chunks_exact(tile).enumerate() {
                    let at = (chunk.segments.start + k) * m + chunk.rects.start;
                    results[at..at + tile].copy_from_slice(local_row);
                }
                for &i in uncertain {
                    let s = chunk.segments.start + i / tile;
                    let r = chunk.rects.start + i % tile;
                    results[s * m + r] = segment_rect(&segments[s], &rects[r]);
                }
            };
        let plan = chunks::plan_dense(segments.len(), m, self.caps);
        self.run_chunks(true, plan, &mut copy_out, |this, chunk| {
            let pairs = chunk.pair_count();
            this.reserve(chunk.segments.len(), chunk.rects.len(), 0, pairs)?;
            let queue = &this.context.queue;
            // Upload a tile only when it changed: with all rects in one tile they go up once.
            if uploaded.0 != chunk.segments {
                queue.write_buffer(
                    this.segments.get(),
                    0,
                    bytemuck::cast_slice(&segments[chunk.segments.clone()]),
                );
            }
            if uploaded.1 != chunk.rects {
                queue.write_buffer(
                    this.rects.get(),
                    0,
                    bytemuck::cast_slice(&rects[chunk.rects.clone()]),
                );
            }
            uploaded = (chunk.segments.clone(), chunk.rects.clone());
            Ok(Params {
                segment_count: chunk.segments.len() as u32,
                rect_count: chunk.rects.len() as u32,
                pair_count: pairs as u32,
                ..Params::default()
            })
        })
    }

    /// Pair-list query; `results.len() == pairs.len()`. Inputs and indices are valid.
    pub(crate) fn pairs_list(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        pairs: &[PairIndex],
        results: &mut [PairResult],
    ) -> Result<()> {
        self.start_timing();
        // When all segments and rects fit one binding each they go up once and the pairs index
        // them; otherwise each chunk gathers its own pairs' segments and rects.
        let gather =
            segments.len() as u64 > self.caps.segments || rects.len() as u64 > self.caps.rects;
        if !gather && !pairs.is_empty() {
            self.reserve(segments.len(), rects.len(), 0, 0)?;
            self.context
                .queue
                .write_buffer(self.segments.get(), 0, bytemuck::cast_slice(segments));
            self.context
                .queue
                .write_buffer(self.rects.get(), 0, bytemuck::cast_slice(rects));
        }
        let mut copy_out = |range: &Range<usize>, local: &[PairResult], uncertain: &[usize]| {
            results[range.clone()].copy_from_slice(local);
            for &i in uncertain {
                let pair = pairs[range.start + i];
                results[range.start + i] =
                    segment_rect(&segments[pair.segment as usize], &rects[pair.rect as usize]);
            }
        };
        let plan = chunks::plan_list(pairs.len(), self.caps, gather);
        self.run_chunks(false, plan, &mut copy_out, |this, range| {
            let n = range.len();
            let queue = this.context.queue.clone();
            if gather {
                this.reserve(n, n, n, n)?;
                let chunk = &pairs[range.clone()];
                let local_segments: Vec<Segment> =
                    chunk.iter().map(|p| segments[p.segment as usize]).collect();
                let local_rects: Vec<Rect> = chunk.iter().map(|p| rects[p.rect as usize]).collect();
                let local_pairs: Vec<PairIndex> =
                    (0..n as u32).map(|i| PairIndex::new(i, i)).collect();
                queue.write_buffer(
                    this.segments.get(),
                    0,
                    bytemuck::cast_slice(&local_segments),
                );
                queue.write_buffer(this.rects.get(), 0, bytemuck::cast_slice(&local_rects));
                queue.write_buffer(
                    this.pair_indices.get(),
                    0,
                    bytemuck::cast_slice(&local_pairs),
                );
            } else {
                this.reserve(0, 0, n, n)?;
                queue.write_buffer(
                    this.pair_indices.get(),
                    0,
                    bytemuck::cast_slice(&pairs[range.clone()]),
                );
            }
            Ok(Params {
                segment_count: segments.len().min(u32::MAX as usize) as u32,
                rect_count: rects.len().min(u32::MAX as usize) as u32,
                pair_count: n as u32,
                ..Params::default()
            })
        })
    }

    /// Grows the buffers to hold the given element counts, rebuilding the bind group if any
    /// buffer was replaced.
    fn reserve(
        &mut self,
        segments: usize,
        rects: usize,
        pair_indices: usize,
        pairs: usize,
    ) -> Result<()> {
        let context = self.context.clone();
        let device = &context.device;
        let bytes = |n: usize, size: usize| (n * size) as u64;
        let cap = self.max_binding_bytes;
        context.scoped(|| {
            let mut stale = self.bind_group.is_none();
            stale |= self
                .segments
                .reserve(device, bytes(segments, size_of::<Segment>()), cap);
            stale |= self
                .rects
                .reserve(device, bytes(rects, size_of::<Rect>()), cap);
            stale |=
                self.pair_indices
                    .reserve(device, bytes(pair_indices, size_of::<PairIndex>()), cap);
            stale |= self
                .results
                .reserve(device, bytes(pairs, size_of::<PairResult>()), cap);
            if stale {
                self.bind_group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("rectcast.pairs.bind_group"),
                    layout: &self.layout,
                    entries: &[
                        entry(0, &self.params),
                        entry(1, self.segments.get()),
                        entry(2, self.rects.get()),
                        entry(3, self.pair_indices.get()),
                        entry(4, self.results.get()),
                        entry(5, &self.uncertain),
                    ],
                }));
            }
            Ok(())
        })
    }

    /// Runs `chunks` in turn, up to [`CHUNKS_IN_FLIGHT`] at once: `prepare` uploads a chunk's
    /// inputs and gives its params, and `out` gets each chunk's results as it is read back. On
    /// an error the chunks still in flight give their maps up.
    fn run_chunks<C>(
        &mut self,
        dense: bool,
        chunks: impl IntoIterator<Item = C>,
        out: &mut impl FnMut(&C, &[PairResult], &[usize]),
        mut prepare: impl FnMut(&mut Self, &C) -> Result<Params>,
    ) -> Result<()> {
        let mut in_flight = VecDeque::new();
        let outcome = (|| {
            for chunk in chunks {
                let params = prepare(self, &chunk)?;
                self.submit(&mut in_flight, dense, params, chunk, out)?;
            }
            self.drain(&mut in_flight, out)
        })();
        self.cancel(in_flight);
        outcome
    }

    /// Chunks in flight at once: one at a time while kernels are timed (the timer waits for
    /// each dispatch).
    fn ring(&self) -> usize {
        if self.timer.as_ref().is_some_and(|t| t.total().is_some()) {
            1
        } else {
            CHUNKS_IN_FLIGHT
        }
    }

    /// Dispatches one chunk of `params.pair_count` pairs, copies its results and the
    /// `Uncertain` list into a free staging buffer of the ring, submits and asks for the map.
    /// When the ring is full, the oldest chunk is read back first: `out` gets its results and
    /// the chunk-local ids of the pairs the kernel marked uncertain, for it to re-decide.
    fn submit<C>(
        &mut self,
        in_flight: &mut VecDeque<Pending<C>>,
        dense: bool,
        params: Params,
        chunk: C,
        out: &mut impl FnMut(&C, &[PairResult], &[usize]),
    ) -> Result<()> {
        let pairs = params.pair_count as usize;
        if pairs == 0 {
            return Ok(());
        }
        if in_flight.len() >= self.ring() {
            let oldest = in_flight.pop_front().expect("the ring is full");
            self.finish(oldest, out)?;
        }
        let slot = (0..CHUNKS_IN_FLIGHT)
            .find(|&slot| in_flight.iter().all(|p| p.slot != slot))
            .expect("the ring has a free slot");
        let context = self.context.clone();
        let bytes = (pairs * size_of::<PairResult>()) as u64;
        let wait = Wait {
            step: if dense {
                "a chunk of dense pairs"
            } else {
                "a chunk of listed pairs"
            },
            limit: self.wait.for_pairs(pairs as u64),
        };
        let started = std::time::Instant::now();
        let (submission, read) = context.scoped(|| {
            let device = &context.device;
            let queue = &context.queue;
            let staging = &mut self.staging[slot];
            staging.reserve(
                device,
                bytes + UNCERTAIN_BYTES,
                self.max_binding_bytes + UNCERTAIN_BYTES,
            );
            let staging = staging.get();
            queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
            let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rectcast.pairs.encoder"),
            });
            encoder.clear_buffer(&self.uncertain, 0, None);
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("rectcast.pairs.pass"),
                    timestamp_writes: self.timer.as_ref().and_then(KernelTimer::writes),
                });
                pass.set_pipeline(if dense { &self.dense } else { &self.list });
                pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            if let Some(timer) = &self.timer {
                timer.encode_resolve(&mut encoder);
            }
            // The copies follow the dispatch in the same submission: the next chunk's upload
            // and dispatch come after them on the queue.
            encoder.copy_buffer_to_buffer(self.results.get(), 0, staging, 0, bytes);
            encoder.copy_buffer_to_buffer(&self.uncertain, 0, staging, bytes, UNCERTAIN_BYTES);
            let submission = queue.submit([encoder.finish()]);
            Ok((
                submission,
                PendingRead::start(staging, bytes + UNCERTAIN_BYTES),
            ))
        })?;
        self.call.submitting += started.elapsed();
        self.call.chunks += 1;
        in_flight.push_back(Pending {
            chunk,
            slot,
            bytes,
            submission,
            read,
            wait,
        });
        Ok(())
    }

    /// Waits for a chunk's map and hands its results to `out`.
    fn finish<C>(
        &mut self,
        pending: Pending<C>,
        out: &mut impl FnMut(&C, &[PairResult], &[usize]),
    ) -> Result<()> {
        let Pending {
            chunk,
            slot,
            bytes,
            submission,
            read,
            wait,
        } = pending;
        let mut found = 0;
        self.call.read(
            read,
            &self.context,
            self.staging[slot].get(),
            submission.clone(),
            wait,
            |mapped| {
                let (local, list) = mapped.split_at(bytes as usize);
                let local: &[PairResult] = bytemuck::cast_slice(local);
                let list: &[u32] = bytemuck::cast_slice(list);
                let ids = uncertain_ids(local, list[0], &list[1..]);
                found = ids.len();
                out(&chunk, local, &ids);
            },
        )?;
        self.uncertain_pairs += found as u64;
        if let Some(timer) = &mut self.timer {
            timer.read(&self.context, submission, wait)?;
        }
        Ok(())
    }

    /// Reads back every chunk still in flight, oldest first.
    fn drain<C>(
        &mut self,
        in_flight: &mut VecDeque<Pending<C>>,
        out: &mut impl FnMut(&C, &[PairResult], &[usize]),
    ) -> Result<()> {
        while let Some(pending) = in_flight.pop_front() {
            self.finish(pending, out)?;
        }
        Ok(())
    }

    /// After an error: the chunks still in flight give their maps up, so the staging buffers
    /// serve the next call.
    fn cancel<C>(&self, in_flight: VecDeque<Pending<C>>) {
        for pending in in_flight {
            pending.read.cancel(self.staging[pending.slot].get());
        }
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

    /// Where the last call's host time went, and how its chunks overlapped.
    pub fn last_call(&self) -> GpuCall {
        self.call
    }

    /// Starts a call's kernel time and its account at zero.
    fn start_timing(&mut self) {
        self.call = GpuCall::default();
        if let Some(timer) = &mut self.timer {
            timer.start();
        }
    }
}

/// A chunk submitted and not yet read back, with what its results belong to.
struct Pending<C> {
    chunk: C,
    /// Its staging buffer in the ring.
    slot: usize,
    /// Bytes of results before the `Uncertain` list.
    bytes: u64,
    submission: wgpu::SubmissionIndex,
    read: PendingRead,
    wait: Wait,
}

/// The chunk-local ids of the pairs the kernel marked uncertain: its list, or, when more were
/// found than it could list, a scan of the results. Allocates nothing when there are none.
fn uncertain_ids(local: &[PairResult], count: u32, listed: &[u32]) -> Vec<usize> {
    if count as usize <= listed.len() {
        listed[..count as usize]
            .iter()
            .map(|&i| i as usize)
            .collect()
    } else {
        (0..local.len())
            .filter(|&i| local[i].flags == flags::UNCERTAIN)
            .collect()
    }
}
