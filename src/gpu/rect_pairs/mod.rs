//! Host side of `shaders/rect_pairs.wgsl`: pipelines built once, buffers kept between calls and grown
//! only when a batch needs more, batches split into chunks the device can take, results read
//! back in compact form (misses implied) and expanded straight into the caller's output.

//!
//! `compact.rs` reads a chunk's compact results back and expands them.

mod compact;

use std::ops::Range;

use wgpu::util::DeviceExt;

use super::buffers::{Binder, Growable, PendingRead, Uploaded, Wait, compute_pipeline};
use super::call::GpuCall;
use super::chunks::{self, ChunkCaps};
use super::context::GpuContext;
use super::layouts::{self, RECT_PAIRS};
use super::limits::{GpuLimits, WaitLimit};
use super::ring::{self, CHUNKS_IN_FLIGHT, Submitted};
use super::shader::{self, Params};
use super::timer::KernelTimer;
use crate::cpu::rect_pairs::WORD_PAIRS;
use crate::cpu::segment_rect::segment_rect;
use crate::error::Result;
use crate::types::{PairIndex, PairResult, Rect, Segment};

use compact::{Copied, Decided, ReadBack};

/// The share of a chunk's pairs whose stored results are copied back with it before any chunk
/// has been read: one in 16. After that the most a chunk has needed decides.
const FIRST_PACKED_SHARE: f64 = 1.0 / 16.0;
/// Headroom over the share seen so far, so that a slightly busier chunk still fits.
const PACKED_SHARE_HEADROOM: f64 = 1.25;

/// Bytes of the compact header of a chunk of `pairs` pairs (WGSL `Compact`): the count of
/// packed results, then two words per word of pairs.
pub(crate) fn compact_header_bytes(pairs: u64) -> u64 {
    4 * (1 + 2 * pairs.div_ceil(WORD_PAIRS as u64))
}

/// The pair queries on one GPU context.
pub struct GpuRectPairs {
    context: GpuContext,
    caps: ChunkCaps,
    /// The largest buffer, in bytes: the device's binding limit or the caller's lower one.
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
    layout: wgpu::BindGroupLayout,
    dense: wgpu::ComputePipeline,
    list: wgpu::ComputePipeline,
    /// `compact_pairs`, run after `dense` or `list` when results come back compact.
    compact_pipeline: wgpu::ComputePipeline,
    /// Whether results come back compact (see [`GpuLimits::compact_readback`]).
    compact_readback: bool,
    params: wgpu::Buffer,
    segments: Growable,
    rects: Growable,
    pair_indices: Growable,
    /// A chunk's results, every pair's (WGSL `results`).
    results: Growable,
    /// The compact header of a chunk (WGSL `Compact`); its count is cleared before each
    /// dispatch.
    compact: Growable,
    /// A chunk's packed results (WGSL `packed`): those not a miss, in word runs.
    packed: Growable,
    /// MAP_READ may only be combined with COPY_DST, so a chunk's results are copied here to be
    /// read (its compact header and the start of its packed results, or all its results): one
    /// per chunk in flight.
    staging: Vec<Growable>,
    /// The share of a chunk's pairs whose packed results are copied back with it: learned from
    /// the chunks read so far, kept between calls.
    packed_share: f64,
    /// The largest share a chunk of this call needed.
    call_share: f64,
    bind_group: Option<wgpu::BindGroup>,
    /// Pairs re-decided on the host since creation.
    uncertain_pairs: u64,
    timer: Option<KernelTimer>,
    wait: WaitLimit,
    /// The calls' cancel token ([`set_cancel`](Self::set_cancel)).
    cancel: Option<crate::Cancel>,
    call: GpuCall,
}

impl GpuRectPairs {
    /// Compiles the pipelines. Buffers are created on first use.
    ///
    /// # Errors
    /// [`Error::Gpu`](crate::Error::Gpu) if the shader or a pipeline fails validation on this device.
    pub fn new(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        let (max_binding_bytes, max_workgroups_per_dimension) = limits.resolve(&context);
        let caps = ChunkCaps::new(max_binding_bytes, max_workgroups_per_dimension);
        let device = context.device.clone();
        let (layout, dense, list, compact_pipeline) = context.compiled::<Self, _>(|| {
            context.scoped(|| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("rectcast.rect_pairs.wgsl"),
                    source: wgpu::ShaderSource::Wgsl(shader::RECT_PAIRS_WGSL.into()),
                });
                let layout =
                    layouts::bind_group_layout(&device, "rectcast.pairs.layout", RECT_PAIRS);
                let pipeline_layout =
                    layouts::pipeline_layout(&device, "rectcast.pairs.pipeline_layout", &[&layout]);
                let constants = shader::rect_pairs_constants(context.emulation());
                let pipeline = |entry_point: &str, label: &str| {
                    compute_pipeline(
                        &context,
                        &pipeline_layout,
                        &module,
                        entry_point,
                        label,
                        &constants,
                    )
                };
                let dense = pipeline("pairs_dense", "rectcast.pairs_dense");
                let list = pipeline("pairs_list", "rectcast.pairs_list");
                let compact_pipeline = pipeline("compact_pairs", "rectcast.compact_pairs");
                Ok((layout, dense, list, compact_pipeline))
            })
        })?;
        let params = context.scoped(|| {
            Ok(
                device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("rectcast.params"),
                    contents: bytemuck::bytes_of(&Params::default()),
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                }),
            )
        })?;
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        // Where the GPU is the CPU, reading results back is a copy in memory: packing them
        // first would only add work.
        let compact_readback = limits.compact_readback.unwrap_or(!context.is_software());
        Ok(Self {
            timer: KernelTimer::new(&context, "rectcast.pairs"),
            context,
            caps,
            max_binding_bytes,
            max_workgroups_per_dimension,
            layout,
            dense,
            list,
            compact_pipeline,
            compact_readback,
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
            packed: Growable::new(
                "rectcast.packed",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            packed_share: FIRST_PACKED_SHARE,
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
            cancel: None,
            call: GpuCall::default(),
        })
    }

    /// Bytes of GPU memory held in buffers between calls.
    pub fn buffer_bytes(&self) -> u64 {
        let held = [
            &self.segments,
            &self.rects,
            &self.pair_indices,
            &self.results,
            &self.compact,
            &self.packed,
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

    /// Dense query; `results.len() == segments.len() * rects.len()`. Inputs are valid.
    pub(crate) fn pairs_dense(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        self.start_timing();
        let m = rects.len();
        let mut uploaded = Uploaded::default();
        let mut copy_out = |chunk: &chunks::DenseChunk, compact: &ReadBack| {
            let tile = chunk.targets.len();
            let decide = |local: usize| {
                let s = chunk.segments.start + local / tile;
                let r = chunk.targets.start + local % tile;
                segment_rect(&segments[s], &rects[r])
            };
            let at = chunk.segments.start * m + chunk.targets.start;
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
            if this.reserve(chunk.segments.len(), chunk.targets.len(), 0, pairs)? {
                // An input buffer was replaced: its contents are gone.
                uploaded = Uploaded::default();
            }
            let (queue, inputs) = (&this.context.queue, &mut uploaded);
            inputs.upload(
                queue,
                chunk,
                (this.segments.get(), segments),
                (this.rects.get(), rects),
            );
            Ok(Params {
                segment_count: chunk.segments.len() as u32,
                rect_count: chunk.targets.len() as u32,
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
        let mut copy_out = |range: &Range<usize>, compact: &ReadBack| {
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
    /// buffer was replaced; true when one was (its contents are gone).
    fn reserve(
        &mut self,
        segments: usize,
        rects: usize,
        pair_indices: usize,
        pairs: usize,
    ) -> Result<bool> {
        let context = self.context.clone();
        let device = &context.device;
        let bytes = |n: usize, size: usize| (n * size) as u64;
        let cap = self.max_binding_bytes;
        context.scoped(|| {
            // Unused (a minimal binding) unless results come back compact.
            let compact_pairs = if self.compact_readback { pairs } else { 0 };
            let stale = Binder::new(device, cap, &self.bind_group)
                .bind(0, &self.params)
                .grow(1, &mut self.segments, bytes(segments, size_of::<Segment>()))
                .grow(2, &mut self.rects, bytes(rects, size_of::<Rect>()))
                .grow(
                    3,
                    &mut self.pair_indices,
                    bytes(pair_indices, size_of::<PairIndex>()),
                )
                .grow(4, &mut self.results, bytes(pairs, size_of::<PairResult>()))
                .grow(
                    5,
                    &mut self.compact,
                    compact_header_bytes(compact_pairs as u64),
                )
                .grow(
                    6,
                    &mut self.packed,
                    bytes(compact_pairs, size_of::<PairResult>()),
                )
                .build(
                    "rectcast.pairs.bind_group",
                    &self.layout,
                    &mut self.bind_group,
                );
            Ok(stale)
        })
    }

    /// Runs `chunks` in turn through the chunk ring (`gpu::ring`): `prepare` uploads a chunk's
    /// inputs and gives its params, and `out` expands each chunk's compact results as they are
    /// read back. On an error the chunks still in flight give their maps up.
    fn run_chunks<C>(
        &mut self,
        dense: bool,
        chunks: impl IntoIterator<Item = C>,
        out: &mut impl FnMut(&C, &ReadBack) -> Decided,
        mut prepare: impl FnMut(&mut Self, &C) -> Result<Params>,
    ) -> Result<()> {
        let size = ring::ring_size(self.timer.as_ref());
        let steps = ring::Steps {
            submit: |this: &mut Self, chunk: C, slot| {
                let params = prepare(this, &chunk)?;
                this.submit(dense, params, chunk, slot)
            },
            finish: |this: &mut Self, pending: Pending<C>, newest, _: &mut Vec<C>| {
                this.finish(pending, newest, out)
            },
            cancel: |this: &mut Self, pending: Pending<C>| {
                pending
                    .read
                    .cancel(&this.context, this.staging[pending.slot].get());
            },
        };
        let token = self.cancel.clone();
        let outcome = ring::run(self, size, chunks.into_iter(), steps, token.as_ref());
        if outcome.is_ok() && self.call_share > 0.0 {
            // The next call starts from what this one needed, so a busy batch does not make
            // every later one copy too much.
            self.packed_share = (self.call_share * PACKED_SHARE_HEADROOM).min(1.0);
        }
        outcome
    }

    /// Dispatches one chunk of `params.pair_count` pairs (and, for compact results, packs
    /// them), copies what is read back into a free staging buffer of the ring, submits and asks
    /// for the map. The ring has a free slot.
    fn submit<C>(
        &mut self,
        dense: bool,
        params: Params,
        chunk: C,
        slot: usize,
    ) -> Result<Option<Pending<C>>> {
        let pairs = params.pair_count as usize;
        if pairs == 0 {
            return Ok(None);
        }
        let context = self.context.clone();
        let result_size = size_of::<PairResult>() as u64;
        let copied = if self.compact_readback {
            Copied::Compact {
                header_bytes: compact_header_bytes(pairs as u64),
                packed: ((pairs as f64 * self.packed_share).ceil() as usize + WORD_PAIRS)
                    .min(pairs),
            }
        } else {
            Copied::All
        };
        let wait = Wait {
            step: if dense {
                "a chunk of dense pairs"
            } else {
                "a chunk of listed pairs"
            },
            limit: self.wait.for_pairs(pairs as u64),
            cancel: self.cancel.clone(),
        };
        let started = std::time::Instant::now();
        let (submission, read) = context.scoped(|| {
            let device = &context.device;
            let queue = &context.queue;
            // Room for a compact header and all results, so that neither the learned share nor
            // a chunk read in full reallocates it.
            let staging = &mut self.staging[slot];
            staging.reserve(
                device,
                compact_header_bytes(pairs as u64) + pairs as u64 * result_size,
                context.limits().max_buffer_size,
            );
            let staging = staging.get();
            queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rectcast.pairs.encoder"),
            });
            if self.compact_readback {
                // The count of packed results; `compact_pairs` writes every header.
                encoder.clear_buffer(self.compact.get(), 0, Some(4));
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("rectcast.pairs.pass"),
                    timestamp_writes: self.timer.as_ref().and_then(KernelTimer::writes),
                });
                pass.set_pipeline(if dense { &self.dense } else { &self.list });
                pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
                let (x, y) = chunks::workgroup_grid(pairs, self.max_workgroups_per_dimension);
                pass.dispatch_workgroups(x, y, 1);
                if self.compact_readback {
                    pass.set_pipeline(&self.compact_pipeline);
                    let words = pairs.div_ceil(WORD_PAIRS);
                    let (x, y) = chunks::workgroup_grid(words, self.max_workgroups_per_dimension);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
            if let Some(timer) = &self.timer {
                timer.encode_resolve(&mut encoder);
            }
            // The copies follow the dispatch in the same submission: the next chunk's upload
            // and dispatch come after them on the queue.
            let bytes = match copied {
                Copied::Compact {
                    header_bytes,
                    packed,
                } => {
                    let packed_bytes = packed as u64 * result_size;
                    encoder.copy_buffer_to_buffer(self.compact.get(), 0, staging, 0, header_bytes);
                    encoder.copy_buffer_to_buffer(
                        self.packed.get(),
                        0,
                        staging,
                        header_bytes,
                        packed_bytes,
                    );
                    header_bytes + packed_bytes
                }
                Copied::All => {
                    let bytes = pairs as u64 * result_size;
                    encoder.copy_buffer_to_buffer(self.results.get(), 0, staging, 0, bytes);
                    bytes
                }
            };
            let submission = queue.submit([encoder.finish()]);
            Ok((submission, PendingRead::start(staging, bytes)))
        })?;
        self.call.submitting += started.elapsed();
        self.call.chunks += 1;
        Ok(Some(Pending {
            chunk,
            slot,
            pairs,
            copied,
            submission,
            read,
            wait,
        }))
    }

    /// Waits for a chunk's map and has `out` expand its results. Packed results it did not
    /// copy back are copied now when no later chunk has overwritten them (`newest`), and
    /// decided on the host otherwise.
    fn finish<C>(
        &mut self,
        pending: Pending<C>,
        newest: bool,
        out: &mut impl FnMut(&C, &ReadBack) -> Decided,
    ) -> Result<()> {
        let Pending {
            chunk,
            slot,
            pairs,
            copied,
            submission,
            read,
            wait,
        } = pending;
        let mut decided = Decided::default();
        // Set when more results were packed than copied and they can still be read.
        let mut partial: Option<(Vec<u32>, Vec<PairResult>, usize)> = None;
        let mut share = None;
        self.call.read(
            read,
            &self.context,
            self.staging[slot].get(),
            submission.clone(),
            wait.clone(),
            |mapped| {
                let (header_bytes, copied_packed) = match copied {
                    Copied::All => {
                        let all = ReadBack {
                            headers: None,
                            results: bytemuck::cast_slice(mapped),
                            pairs,
                        };
                        decided = out(&chunk, &all);
                        return;
                    }
                    Copied::Compact {
                        header_bytes,
                        packed,
                    } => (header_bytes as usize, packed),
                };
                let (header, packed) = mapped.split_at(header_bytes);
                let header: &[u32] = bytemuck::cast_slice(header);
                let packed: &[PairResult] = bytemuck::cast_slice(packed);
                let count = (header[0] as usize).min(pairs);
                share = Some(count as f64 / pairs as f64);
                if count > copied_packed && newest {
                    partial = Some((header.to_vec(), packed.to_vec(), count));
                    return;
                }
                let compact = ReadBack {
                    headers: Some(&header[1..]),
                    results: &packed[..count.min(copied_packed)],
                    pairs,
                };
                decided = out(&chunk, &compact);
            },
        )?;
        if let Some((header, mut packed, count)) = partial {
            // Nothing was submitted after this chunk: its packed results are still on the GPU.
            self.read_rest(slot, packed.len(), count, wait.clone(), &mut packed)?;
            let compact = ReadBack {
                headers: Some(&header[1..]),
                results: &packed,
                pairs,
            };
            decided = out(&chunk, &compact);
        }
        if let Some(share) = share {
            self.call_share = self.call_share.max(share);
            if share * PACKED_SHARE_HEADROOM > self.packed_share {
                self.packed_share = (share * PACKED_SHARE_HEADROOM).min(1.0);
            }
        }
        self.uncertain_pairs += decided.uncertain;
        self.call.decided_on_host += decided.not_read;
        if let Some(timer) = &mut self.timer {
            timer.read(&self.context, submission, wait)?;
        }
        Ok(())
    }

    /// Copies packed results `from..to` of the last chunk into its staging buffer, reads them
    /// and appends them to `packed`.
    fn read_rest(
        &mut self,
        slot: usize,
        from: usize,
        to: usize,
        wait: Wait,
        packed: &mut Vec<PairResult>,
    ) -> Result<()> {
        let context = self.context.clone();
        let size = size_of::<PairResult>() as u64;
        let bytes = (to - from) as u64 * size;
        let started = std::time::Instant::now();
        let (submission, read) = context.scoped(|| {
            let staging = self.staging[slot].get();
            let mut encoder =
                context
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("rectcast.pairs.rest"),
                    });
            encoder.copy_buffer_to_buffer(self.packed.get(), from as u64 * size, staging, 0, bytes);
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
            |mapped| packed.extend_from_slice(bytemuck::cast_slice(mapped)),
        )
    }

    super::timer::wait_and_timing!();
    super::buffers::cancel_setter!();

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
    copied: Copied,
    submission: wgpu::SubmissionIndex,
    read: PendingRead,
    wait: Wait,
}

impl<C> Submitted for Pending<C> {
    fn slot(&self) -> usize {
        self.slot
    }
}
