//! Host side of `shaders/pairs.wgsl`: pipelines built once, buffers kept between calls and grown
//! only when a batch needs more, batches split into chunks the device can take, results read
//! back in compact form (misses implied) and expanded straight into the caller's output.

use std::collections::VecDeque;
use std::ops::Range;

use wgpu::util::DeviceExt;

use super::buffers::{
    Growable, PendingRead, Wait, compute_pipeline, entry, storage_entry, uniform_entry,
};
use super::chunks::{self, ChunkCaps};
use super::context::GpuContext;
use super::limits::{GpuLimits, WaitLimit};
use super::queries::{CHUNKS_IN_FLIGHT, GpuCall};
use super::shader::{self, Params, WORKGROUP_SIZE};
use super::timer::KernelTimer;
use crate::cpu::pairs::{BLOCK_WORDS, rank_in_block};
use crate::cpu::segment_rect::segment_rect;
use crate::error::Result;
use crate::types::{PairIndex, PairResult, Rect, Segment, flags};

/// The share of a chunk's pairs whose stored results are copied back with it before any chunk
/// has been read: one in 16. After that the most a chunk has needed decides.
const FIRST_STORED_SHARE: f64 = 1.0 / 16.0;
/// Headroom over the share seen so far, so that a slightly busier chunk still fits.
const STORED_SHARE_HEADROOM: f64 = 1.25;
/// Pairs one thread expands at a time: larger ranges are spread over rayon's threads.
const EXPAND_PER_THREAD: usize = 1 << 16;

/// Bytes of the compact header of a chunk of `pairs` pairs (WGSL `Compact`): the count of
/// stored results, then a header per block.
pub(crate) fn compact_header_bytes(pairs: u64) -> u64 {
    4 * (1 + pairs.div_ceil(WORKGROUP_SIZE as u64) * BLOCK_WORDS as u64)
}

/// The most pairs whose results, stored in full, and compact header fit one buffer of
/// `buffer_bytes`: the staging buffer holds both.
pub(crate) fn pairs_fitting_staging(buffer_bytes: u64) -> u64 {
    let per_block = WORKGROUP_SIZE as u64 * size_of::<PairResult>() as u64 + 4 * BLOCK_WORDS as u64;
    // The count, and a block of header rounded up.
    let fixed = 4 + 4 * BLOCK_WORDS as u64;
    buffer_bytes.saturating_sub(fixed) / per_block * WORKGROUP_SIZE as u64
}

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
    /// The stored (not missed) results of a chunk, in block runs (WGSL `results`).
    results: Growable,
    /// The compact header of a chunk (WGSL `Compact`); its count is cleared before each
    /// dispatch.
    compact: Growable,
    /// MAP_READ may only be combined with COPY_DST, so a chunk's compact header and the start
    /// of its stored results are copied here to be read: one per chunk in flight.
    staging: Vec<Growable>,
    /// The share of a chunk's pairs whose stored results are copied back with it: learned from
    /// the chunks read so far, kept between calls.
    stored_share: f64,
    /// The largest share a chunk of this call needed.
    call_share: f64,
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
        let (layout, dense, list, params) = context.scoped(|| {
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
            Ok((layout, dense, list, params))
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
            segments: Growable::new("rectcast.segments", storage),
            rects: Growable::new("rectcast.rects", storage),
            pair_indices: Growable::new("rectcast.pair_indices", storage),
            results: Growable::new(
                "rectcast.results",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            compact: Growable::new(
                "rectcast.compact",
                wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            ),
            stored_share: FIRST_STORED_SHARE,
            call_share: 0.0,
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
            &self.compact,
        ];
        held.into_iter()
            .chain(&self.staging)
            .filter_map(|g| g.buffer.as_ref())
            .map(|b| b.size())
            .sum::<u64>()
            + self.params.size()
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
        let mut copy_out = |chunk: &chunks::DenseChunk, compact: &CompactResults| {
            let tile = chunk.rects.len();
            let decide = |local: usize| {
                let s = chunk.segments.start + local / tile;
                let r = chunk.rects.start + local % tile;
                segment_rect(&segments[s], &rects[r])
            };
            let at = chunk.segments.start * m + chunk.rects.start;
            if tile == m {
                // All rects in one tile: the chunk is one run of the segment-major output.
                return compact.expand(
                    0..compact.pairs,
                    &mut results[at..][..compact.pairs],
                    &decide,
                );
            }
            // One run per segment.
            let mut host = Decided::default();
            for k in 0..chunk.segments.len() {
                let row = &mut results[at + k * m..][..tile];
                host += compact.expand(k * tile..(k + 1) * tile, row, &decide);
            }
            host
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
        let mut copy_out = |range: &Range<usize>, compact: &CompactResults| {
            let decide = |local: usize| {
                let pair = pairs[range.start + local];
                segment_rect(&segments[pair.segment as usize], &rects[pair.rect as usize])
            };
            compact.expand(0..range.len(), &mut results[range.clone()], &decide)
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
            stale |= self
                .compact
                .reserve(device, compact_header_bytes(pairs as u64), cap);
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
                        entry(5, self.compact.get()),
                    ],
                }));
            }
            Ok(())
        })
    }

    /// Runs `chunks` in turn, up to [`CHUNKS_IN_FLIGHT`] at once: `prepare` uploads a chunk's
    /// inputs and gives its params, and `out` expands each chunk's compact results as they are
    /// read back. On an error the chunks still in flight give their maps up.
    fn run_chunks<C>(
        &mut self,
        dense: bool,
        chunks: impl IntoIterator<Item = C>,
        out: &mut impl FnMut(&C, &CompactResults) -> Decided,
        mut prepare: impl FnMut(&mut Self, &C) -> Result<Params>,
    ) -> Result<()> {
        let mut in_flight = VecDeque::new();
        let outcome = (|| {
            for chunk in chunks {
                // The oldest chunk is read back before the next one's inputs go up (a buffer
                // that grows is replaced, and with it what an unread chunk left there).
                if in_flight.len() >= self.ring() {
                    let oldest = in_flight.pop_front().expect("the ring is full");
                    self.finish(oldest, in_flight.is_empty(), out)?;
                }
                let params = prepare(self, &chunk)?;
                self.submit(&mut in_flight, dense, params, chunk)?;
            }
            self.drain(&mut in_flight, out)
        })();
        self.cancel(in_flight);
        if outcome.is_ok() && self.call_share > 0.0 {
            // The next call starts from what this one needed, so a busy batch does not make
            // every later one copy too much.
            self.stored_share = (self.call_share * STORED_SHARE_HEADROOM).min(1.0);
        }
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

    /// Dispatches one chunk of `params.pair_count` pairs, copies its compact header and the
    /// start of its stored results into a free staging buffer of the ring, submits and asks
    /// for the map. The ring has a free slot.
    fn submit<C>(
        &mut self,
        in_flight: &mut VecDeque<Pending<C>>,
        dense: bool,
        params: Params,
        chunk: C,
    ) -> Result<()> {
        let pairs = params.pair_count as usize;
        if pairs == 0 {
            return Ok(());
        }
        let slot = (0..CHUNKS_IN_FLIGHT)
            .find(|&slot| in_flight.iter().all(|p| p.slot != slot))
            .expect("the ring has a free slot");
        let context = self.context.clone();
        let header_bytes = compact_header_bytes(pairs as u64);
        let stored_copied = ((pairs as f64 * self.stored_share).ceil() as usize
            + WORKGROUP_SIZE as usize)
            .min(pairs);
        let stored_bytes = (stored_copied * size_of::<PairResult>()) as u64;
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
            // Room for every stored result, so that the learned share never reallocates it.
            let staging = &mut self.staging[slot];
            staging.reserve(
                device,
                header_bytes + (pairs * size_of::<PairResult>()) as u64,
                context.limits().max_buffer_size,
            );
            let staging = staging.get();
            queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
            let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rectcast.pairs.encoder"),
            });
            // The count of stored results; the kernel writes every header of the chunk.
            encoder.clear_buffer(self.compact.get(), 0, Some(4));
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
            encoder.copy_buffer_to_buffer(self.compact.get(), 0, staging, 0, header_bytes);
            encoder.copy_buffer_to_buffer(
                self.results.get(),
                0,
                staging,
                header_bytes,
                stored_bytes,
            );
            let submission = queue.submit([encoder.finish()]);
            Ok((
                submission,
                PendingRead::start(staging, header_bytes + stored_bytes),
            ))
        })?;
        self.call.submitting += started.elapsed();
        self.call.chunks += 1;
        in_flight.push_back(Pending {
            chunk,
            slot,
            pairs,
            header_bytes,
            stored_copied,
            submission,
            read,
            wait,
        });
        Ok(())
    }

    /// Waits for a chunk's map and has `out` expand its results. Stored results it did not
    /// copy back are copied now when no later chunk has overwritten them (`newest`), and
    /// decided on the host otherwise.
    fn finish<C>(
        &mut self,
        pending: Pending<C>,
        newest: bool,
        out: &mut impl FnMut(&C, &CompactResults) -> Decided,
    ) -> Result<()> {
        let Pending {
            chunk,
            slot,
            pairs,
            header_bytes,
            stored_copied,
            submission,
            read,
            wait,
        } = pending;
        let mut decided = Decided::default();
        // Set when more results were stored than copied and they can still be read.
        let mut partial: Option<(Vec<u32>, Vec<PairResult>, usize)> = None;
        let mut share = 0.0;
        self.call.read(
            read,
            &self.context,
            self.staging[slot].get(),
            submission.clone(),
            wait,
            |mapped| {
                let (header, stored) = mapped.split_at(header_bytes as usize);
                let header: &[u32] = bytemuck::cast_slice(header);
                let stored: &[PairResult] = bytemuck::cast_slice(stored);
                let count = (header[0] as usize).min(pairs);
                share = count as f64 / pairs as f64;
                if count > stored_copied && newest {
                    partial = Some((header.to_vec(), stored.to_vec(), count));
                    return;
                }
                let compact = CompactResults {
                    headers: &header[1..],
                    stored: &stored[..count.min(stored_copied)],
                    pairs,
                };
                decided = out(&chunk, &compact);
            },
        )?;
        if let Some((header, mut stored, count)) = partial {
            // Nothing was submitted after this chunk: its stored results are still on the GPU.
            self.read_rest(slot, stored_copied, count, wait, &mut stored)?;
            let compact = CompactResults {
                headers: &header[1..],
                stored: &stored,
                pairs,
            };
            decided = out(&chunk, &compact);
        }
        self.call_share = self.call_share.max(share);
        if share * STORED_SHARE_HEADROOM > self.stored_share {
            self.stored_share = (share * STORED_SHARE_HEADROOM).min(1.0);
        }
        self.uncertain_pairs += decided.uncertain;
        self.call.decided_on_host += decided.not_read;
        if let Some(timer) = &mut self.timer {
            timer.read(&self.context, submission, wait)?;
        }
        Ok(())
    }

    /// Copies stored results `from..to` of the last chunk into its staging buffer, reads them
    /// and appends them to `stored`.
    fn read_rest(
        &mut self,
        slot: usize,
        from: usize,
        to: usize,
        wait: Wait,
        stored: &mut Vec<PairResult>,
    ) -> Result<()> {
        let context = self.context.clone();
        let size = size_of::<PairResult>() as u64;
        let bytes = (to - from) as u64 * size;
        let started = std::time::Instant::now();
        let (submission, read) = context.scoped(|| {
            let staging = &mut self.staging[slot];
            staging.reserve(&context.device, bytes, context.limits().max_buffer_size);
            let staging = staging.get();
            let mut encoder =
                context
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("rectcast.pairs.rest"),
                    });
            encoder.copy_buffer_to_buffer(
                self.results.get(),
                from as u64 * size,
                staging,
                0,
                bytes,
            );
            let submission = context.queue.submit([encoder.finish()]);
            Ok((submission, PendingRead::start(staging, bytes)))
        })?;
        self.call.submitting += started.elapsed();
        self.call.read(
            read,
            &context,
            self.staging[slot].get(),
            submission,
            wait,
            |mapped| stored.extend_from_slice(bytemuck::cast_slice(mapped)),
        )
    }

    /// Reads back every chunk still in flight, oldest first.
    fn drain<C>(
        &mut self,
        in_flight: &mut VecDeque<Pending<C>>,
        out: &mut impl FnMut(&C, &CompactResults) -> Decided,
    ) -> Result<()> {
        while let Some(pending) = in_flight.pop_front() {
            self.finish(pending, in_flight.is_empty(), out)?;
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
        self.call_share = 0.0;
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
    pairs: usize,
    /// Bytes of the compact header, before the stored results in the staging buffer.
    header_bytes: u64,
    /// Stored results copied back after the header.
    stored_copied: usize,
    submission: wgpu::SubmissionIndex,
    read: PendingRead,
    wait: Wait,
}

/// Pairs the host decided while expanding a chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Decided {
    /// Stored as uncertain by the kernel.
    uncertain: u64,
    /// Stored by the kernel but not read back.
    not_read: u64,
}

impl std::ops::AddAssign for Decided {
    fn add_assign(&mut self, other: Self) {
        self.uncertain += other.uncertain;
        self.not_read += other.not_read;
    }
}

/// A chunk's results as read back: the block headers of WGSL `Compact` and the stored results
/// (all of them, or the first ones).
struct CompactResults<'a> {
    headers: &'a [u32],
    stored: &'a [PairResult],
    /// Pairs in the chunk.
    pairs: usize,
}

impl CompactResults<'_> {
    /// Writes the results of the chunk's pairs `range` to `out`: a miss where the mask has no
    /// bit, the stored result where it has one, and `decide(pair)` (the exact CPU answer)
    /// where that result is uncertain or was not read back. Large ranges are spread over
    /// rayon's threads.
    fn expand(
        &self,
        range: Range<usize>,
        out: &mut [PairResult],
        decide: &(impl Fn(usize) -> PairResult + Sync),
    ) -> Decided {
        debug_assert_eq!(range.len(), out.len());
        if out.len() <= EXPAND_PER_THREAD {
            return self.expand_run(range.start, out, decide);
        }
        use rayon::prelude::*;
        out.par_chunks_mut(EXPAND_PER_THREAD)
            .enumerate()
            .map(|(k, run)| self.expand_run(range.start + k * EXPAND_PER_THREAD, run, decide))
            .reduce(Decided::default, |mut a, b| {
                a += b;
                a
            })
    }

    /// [`expand`](Self::expand) on one thread, for pairs `first..first + out.len()`.
    fn expand_run(
        &self,
        first: usize,
        out: &mut [PairResult],
        decide: &impl Fn(usize) -> PairResult,
    ) -> Decided {
        let lanes = WORKGROUP_SIZE as usize;
        let mut decided = Decided::default();
        let mut pair = first;
        let end = first + out.len();
        while pair < end {
            let block = pair / lanes;
            let header = &self.headers[block * BLOCK_WORDS as usize..][..BLOCK_WORDS as usize];
            let mask = &header[1..];
            // The stored index of the block's next stored pair.
            let mut k = header[0] as usize + rank_in_block(mask, (pair % lanes) as u32) as usize;
            let block_end = ((block + 1) * lanes).min(end);
            while pair < block_end {
                let lane = pair % lanes;
                let word_end = (pair - lane % 32 + 32).min(block_end);
                let bits = mask[lane / 32] >> (lane % 32);
                let run = &mut out[pair - first..word_end - first];
                if bits == 0 {
                    run.fill(PairResult::MISS);
                } else {
                    for (j, result) in run.iter_mut().enumerate() {
                        *result = if bits >> j & 1 == 0 {
                            PairResult::MISS
                        } else {
                            let stored = self.stored.get(k);
                            k += 1;
                            match stored {
                                Some(r) if r.flags != flags::UNCERTAIN => *r,
                                Some(_) => {
                                    decided.uncertain += 1;
                                    decide(pair + j)
                                }
                                None => {
                                    decided.not_read += 1;
                                    decide(pair + j)
                                }
                            }
                        };
                    }
                }
                pair = word_end;
            }
        }
        decided
    }
}
