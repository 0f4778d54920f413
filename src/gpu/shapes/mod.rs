//! Host side of the shapes' kernels ([`Shape`]: each shape's file in `shaders/` composed over
//! `shaders/shape_passes.wgsl`): every query segment against every shape, tile by tile as the
//! device can take them, with buffers kept between calls, through the chunk ring
//! (`gpu::ring`): up to [`CHUNKS_IN_FLIGHT`] tiles run while the host reads the oldest back.
//!
//! This module holds the inputs, their upload and the ring's steps, once. `kernels.rs` compiles
//! a shape's pipelines and holds the optional parts of its kernel (the second pass, the counts,
//! the reductions, the grid's) with their buffers; `queries.rs` says, per query (dense pairs,
//! first hits, hits, counts), what a tile encodes and how its read-back merges; `grid.rs` runs
//! the same queries through the broad phase's grid, and `polygon_grid.rs` the polygons' edges.

mod grid;
mod kernels;
mod polygon_grid;
mod queries;

pub(crate) use grid::{DensePairs, grid_pays};

use std::time::Instant;

use super::buffers::{Binder, Growable, PendingRead, Uploaded, Wait};
use super::call::GpuCall;
use super::chunks::{ChunkCaps, DenseChunk};
use super::context::GpuContext;
use super::limits::{GpuLimits, WaitLimit};
use super::ring::{self, CHUNKS_IN_FLIGHT, Submitted};
use super::shader::ShapeParams;
use super::timer::KernelTimer;
use crate::error::Result;
use crate::shape::Shape;
use crate::types::{Rect, Segment};
use kernels::{CountsKernel, Reductions, ShapeGrid, ShapeKernels};

/// What the first dispatch of an entry point may take on top of its wait: a software driver
/// (lavapipe) compiles a kernel when it first runs, and the exact integer code takes it seconds
/// (8 to 9 s for segment × segment on two cores, measured; more when other work shares them).
const FIRST_DISPATCH_ALLOWANCE: std::time::Duration = std::time::Duration::from_secs(120);

/// How many times its own measured pace a step may take once it has run: past that it is taken
/// as stuck. The wait limit assumes one rate for every kernel (10^7 pairs a second), and some
/// run far slower on a software GPU: a polygon's collinear edges took 15 µs a pair on lavapipe,
/// and every chunk after the first (which has the allowance above) timed out on a valid job.
const MEASURED_MARGIN: f64 = 4.0;

/// The longest wait a measured pace gives a step.
const LONGEST_MEASURED_WAIT: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// About how long one tile of a slow kernel takes once its pace is known: its tiles are cut to
/// that many pairs, so that each stays well inside its wait and a cancel waits for a few of
/// them at most (a polygon's collinear edges on lavapipe: 2^22 pairs a tile took a minute).
/// A fast GPU's tiles are far from it, and stay as large as the device allows.
const TILE_SECONDS: f64 = 1.0;

/// The fewest pairs a tile cut to [`TILE_SECONDS`] takes, so that its overhead stays small.
const MIN_TILE_PAIRS: u64 = 1 << 16;

/// The pairs a tile takes at most at a pace of `seconds_per_pair`: [`TILE_SECONDS`]' worth, at
/// least [`MIN_TILE_PAIRS`].
fn tile_pairs(seconds_per_pair: f64) -> u64 {
    // (A cast from f64 saturates: a pace of 0 gives u64::MAX.)
    ((TILE_SECONDS / seconds_per_pair) as u64).max(MIN_TILE_PAIRS)
}

/// An entry point that has run: the slowest pace it was measured at, in seconds per pair (from
/// its submission to its read-back, so the chunks queued before it and its first compilation
/// count too: an upper bound), and its tiles' latest pace after their first (which a software
/// driver's compilation slows down).
#[derive(Clone, Copy, Debug)]
struct Pace {
    step: &'static str,
    seconds_per_pair: f64,
    latest: Option<f64>,
}

/// One shape's queries on one GPU context: dense pairs, first hits, hits and counts.
pub struct GpuShapeQueries<S: Shape> {
    context: GpuContext,
    caps: ChunkCaps,
    max_binding_bytes: u64,
    max_workgroups_per_dimension: u32,
    kernels: ShapeKernels,
    /// The list's header (`PairList`: its length, then the second pass's indirect dispatch)
    /// and the listed pairs.
    pair_list: wgpu::Buffer,
    listed_pairs: Growable,
    /// The second pass's dispatch, copied out of the list's header: a buffer a dispatch reads
    /// as its size may not be bound to it.
    list_dispatch_args: wgpu::Buffer,
    /// The counts entry point's buffers, where the shape has one, from the first count on.
    counts: Option<CountsKernel>,
    /// The hits reduced from the dense pairs, where the kernel has them.
    reductions: Option<Reductions>,
    /// The queries through the grid: its buffers and pipelines, from the first such call.
    grid: Option<ShapeGrid>,
    params: wgpu::Buffer,
    queries: Growable,
    shapes: Growable,
    /// Each shape's box ([`Shape::bounds`]): pairs whose boxes are apart skip the exact path.
    bounds: Growable,
    contacts: Growable,
    bind_group: Option<wgpu::BindGroup>,
    /// One staging buffer per tile in flight (the ring's slots).
    staging: [Growable; CHUNKS_IN_FLIGHT],
    wait: WaitLimit,
    /// The calls' cancel token ([`set_cancel`](Self::set_cancel)).
    cancel: Option<crate::Cancel>,
    /// The entry points that have run once (see [`FIRST_DISPATCH_ALLOWANCE`]), and their pace
    /// (see [`MEASURED_MARGIN`]).
    ran: Vec<Pace>,
    /// Where the last call's host time went.
    call: GpuCall,
    /// Each tile's passes' GPU time, when timing is on (tiles then go one at a time).
    timer: Option<KernelTimer>,
    shape: std::marker::PhantomData<S>,
}

/// A piece of a query's work through the ring: a tile to upload and run, or a step over what
/// the tile before it left on the GPU.
trait TileWork {
    /// The tile whose inputs must be on the GPU for it, if any.
    fn tile(&self) -> Option<&DenseChunk>;
}

impl TileWork for DenseChunk {
    fn tile(&self) -> Option<&DenseChunk> {
        Some(self)
    }
}

/// What a piece of work copied into its staging buffer, and what the wait for it is for.
struct Staged {
    bytes: u64,
    /// The entry point the wait is named after.
    step: &'static str,
    /// The pairs the submission ran: the wait's limit grows with them.
    pairs: usize,
}

/// How a query runs through the ring.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// Pieces in flight at once.
    in_flight: usize,
    /// Whether its tiles compute the dense pairs (the counts do not).
    contacts: bool,
}

/// A query whose tiles are independent: the ring full, the dense pairs computed.
const DENSE: Run = Run {
    in_flight: CHUNKS_IN_FLIGHT,
    contacts: true,
};

/// A piece of work submitted and not yet read back.
struct InFlight<W> {
    work: W,
    /// Its staging buffer in the ring.
    slot: usize,
    staged: Staged,
    submission: wgpu::SubmissionIndex,
    /// When it was submitted: its pace is measured from here.
    submitted: Instant,
    read: PendingRead,
}

impl<W> Submitted for InFlight<W> {
    fn slot(&self) -> usize {
        self.slot
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
        let reductions = kernels
            .reductions
            .clone()
            .map(|pipelines| Reductions::new(pipelines, hit_count));
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let staging = || {
            Growable::new(
                "rectcast.shapes.staging",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )
        };
        Ok(Self {
            // A contact is no larger than a rect pair's result, a shape than a rect: the same
            // caps.
            caps: ChunkCaps::new(max_binding_bytes, max_workgroups_per_dimension),
            context: context.clone(),
            max_binding_bytes,
            max_workgroups_per_dimension,
            kernels,
            pair_list,
            listed_pairs: Growable::new("rectcast.shapes.listed_pairs", storage),
            list_dispatch_args,
            counts: None,
            reductions,
            grid: None,
            params,
            queries: Growable::new("rectcast.shapes.queries", storage),
            shapes: Growable::new("rectcast.shapes.shapes", storage),
            bounds: Growable::new("rectcast.shapes.bounds", storage),
            contacts: Growable::new(
                "rectcast.shapes.contacts",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
            bind_group: None,
            staging: std::array::from_fn(|_| staging()),
            wait: limits.wait.unwrap_or_default(),
            cancel: None,
            ran: Vec::new(),
            call: GpuCall::default(),
            timer: KernelTimer::new(&context, "rectcast.shapes"),
            shape: std::marker::PhantomData,
        })
    }

    super::timer::kernel_timing!();
    super::buffers::cancel_setter!();

    /// How long each tile may take from now on.
    pub fn set_wait(&mut self, wait: WaitLimit) {
        self.wait = wait;
    }

    /// Where the last call's host time went, and how its tiles overlapped.
    pub fn last_call(&self) -> GpuCall {
        self.call
    }

    /// Runs `work` through the chunk ring as `run` says. A piece's tile goes up first (each
    /// input only when it changed: with every shape in one tile they go up once), with room for
    /// its dense pairs where the query has them;
    /// `encode` records the query's passes and its copies into the slot's staging buffer
    /// (after [`reserve_staging`](Self::reserve_staging)), and `merge` reads each piece back,
    /// oldest first. Work `merge` pushes runs next: with more than one piece in flight, a later
    /// tile has overwritten the outputs by then. Fills [`last_call`](Self::last_call).
    fn run_tiles<W: TileWork>(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        run: Run,
        work: impl Iterator<Item = W>,
        mut encode: impl FnMut(&mut Self, &W, &mut wgpu::CommandEncoder, usize) -> Result<Staged>,
        mut merge: impl FnMut(&W, &[u8], &mut Vec<W>),
    ) -> Result<()> {
        self.call = GpuCall::default();
        if let Some(timer) = &mut self.timer {
            timer.start();
        }
        let mut uploaded = Uploaded::default();
        let steps = ring::Steps {
            submit: |this: &mut Self, work: W, slot| {
                let started = Instant::now();
                let context = this.context.clone();
                let (staged, submission, read) = context.scoped(|| {
                    if let Some(tile) = work.tile() {
                        let (n, m) = (tile.segments.len(), tile.targets.len());
                        let pairs = if run.contacts { tile.pair_count() } else { 0 };
                        if this.reserve(n, m, pairs) {
                            // An input buffer was replaced: its contents are gone.
                            uploaded = Uploaded::default();
                        }
                        this.upload(tile, queries, shapes, &mut uploaded);
                    }
                    let mut encoder =
                        context
                            .device
                            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                                label: Some("rectcast.shapes.encoder"),
                            });
                    let staged = encode(this, &work, &mut encoder, slot)?;
                    if let Some(timer) = &this.timer {
                        timer.encode_resolve(&mut encoder);
                    }
                    let submission = context.queue.submit([encoder.finish()]);
                    let read = PendingRead::start(this.staging[slot].get(), staged.bytes);
                    Ok((staged, submission, read))
                })?;
                let wait = this.wait_for(staged.step, staged.pairs);
                if let Some(timer) = &mut this.timer {
                    // Waits for the passes (only when timing is on: then tiles go one at a
                    // time).
                    if let Err(e) = timer.read(&context, submission.clone(), wait) {
                        read.cancel(&context, this.staging[slot].get());
                        return Err(e);
                    }
                }
                this.call.chunks += 1;
                this.call.submitting += started.elapsed();
                Ok(Some(InFlight {
                    work,
                    slot,
                    staged,
                    submission,
                    submitted: Instant::now(),
                    read,
                }))
            },
            finish: |this: &mut Self, done: InFlight<W>, _newest, again: &mut Vec<W>| {
                let wait = this.wait_for(done.staged.step, done.staged.pairs);
                let context = this.context.clone();
                let (work, staging) = (&done.work, this.staging[done.slot].get());
                this.call.read(
                    done.read,
                    &context,
                    staging,
                    done.submission,
                    wait,
                    |mapped| merge(work, mapped, again),
                )?;
                this.measured(
                    done.staged.step,
                    done.work.tile().is_some(),
                    done.staged.pairs,
                    done.submitted.elapsed(),
                );
                Ok(())
            },
            cancel: |this: &mut Self, done: InFlight<W>| {
                done.read
                    .cancel(&this.context, this.staging[done.slot].get());
            },
        };
        let in_flight = run.in_flight.min(ring::ring_size(self.timer.as_ref()));
        let token = self.cancel.clone();
        ring::run(self, in_flight, work, steps, token.as_ref())
    }

    /// How long a submission over `pairs` may take: the wait limit, plus the first dispatch's
    /// compilation allowance until entry point `step` has run once; after that, at least
    /// [`MEASURED_MARGIN`] times the pace it was measured at.
    fn wait_for(&self, step: &'static str, pairs: usize) -> Wait {
        let limit = self.wait.for_pairs(pairs as u64);
        let limit = match self.ran.iter().find(|pace| pace.step == step) {
            None => limit + FIRST_DISPATCH_ALLOWANCE,
            Some(pace) => {
                let measured = MEASURED_MARGIN * pace.seconds_per_pair * pairs.max(1) as f64;
                let measured = std::time::Duration::try_from_secs_f64(measured)
                    .unwrap_or(LONGEST_MEASURED_WAIT)
                    .min(LONGEST_MEASURED_WAIT);
                limit.max(measured)
            }
        };
        Wait {
            step,
            limit,
            cancel: self.cancel.clone(),
        }
    }

    /// Entry point `step` ran over `pairs` in `took`: its pace is the slowest measured.
    fn measured(
        &mut self,
        step: &'static str,
        tile: bool,
        pairs: usize,
        took: std::time::Duration,
    ) {
        let seconds_per_pair = took.as_secs_f64() / pairs.max(1) as f64;
        match self.ran.iter_mut().find(|pace| pace.step == step) {
            Some(pace) => {
                pace.seconds_per_pair = pace.seconds_per_pair.max(seconds_per_pair);
                if tile {
                    pace.latest = Some(seconds_per_pair);
                }
            }
            None => self.ran.push(Pace {
                step,
                seconds_per_pair,
                latest: None,
            }),
        }
    }

    /// The caps of entry point `step`'s tiles: the device's, with as many pairs as take about
    /// [`TILE_SECONDS`] at its tiles' latest pace, once known.
    fn tile_caps(&self, step: &'static str) -> ChunkCaps {
        let mut caps = self.caps;
        let latest = self.ran.iter().find(|pace| pace.step == step);
        if let Some(latest) = latest.and_then(|pace| pace.latest) {
            caps.pairs = caps.pairs.min(tile_pairs(latest));
        }
        caps
    }

    /// Makes the staging buffer of `slot` hold `bytes` (inside the submit's error scope).
    fn reserve_staging(&mut self, slot: usize, bytes: u64) {
        let device = &self.context.device;
        self.staging[slot].reserve(device, bytes, self.max_binding_bytes);
    }

    /// Uploads a tile's inputs (each only when it changed) and its parameters.
    fn upload(
        &mut self,
        tile: &DenseChunk,
        queries: &[Segment],
        shapes: &[S],
        uploaded: &mut Uploaded,
    ) {
        let queue = &self.context.queue;
        let (queries, shapes) = ((self.queries.get(), queries), (self.shapes.get(), shapes));
        if uploaded.upload(queue, tile, queries, shapes) {
            let bounds: Vec<Rect> = shapes.1[tile.targets.clone()]
                .iter()
                .map(S::bounds)
                .collect();
            queue.write_buffer(self.bounds.get(), 0, bytemuck::cast_slice(&bounds));
        }
        let params = ShapeParams {
            query_count: tile.segments.len() as u32,
            shape_count: tile.targets.len() as u32,
            pair_count: tile.pair_count() as u32,
            row_workgroups: self.max_workgroups_per_dimension,
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
    }

    /// Grows the inputs and the dense pairs' buffers to hold a tile, rebuilding the bind group
    /// if any buffer was replaced; true when one was (its contents are gone, and the counts'
    /// and reductions' bind groups, which name them too, are stale).
    fn reserve(&mut self, queries: usize, shapes: usize, pairs: usize) -> bool {
        let device = &self.context.device;
        let stale = Binder::new(device, self.max_binding_bytes, &self.bind_group)
            .bind(0, &self.params)
            .grow(
                1,
                &mut self.queries,
                (queries * size_of::<Segment>()) as u64,
            )
            .grow(2, &mut self.shapes, (shapes * size_of::<S>()) as u64)
            .grow(
                3,
                &mut self.contacts,
                (pairs * size_of::<S::Contact>()) as u64,
            )
            .grow(4, &mut self.bounds, (shapes * size_of::<Rect>()) as u64)
            .bind(7, &self.pair_list)
            .grow(8, &mut self.listed_pairs, (pairs * 4) as u64)
            .build(
                "rectcast.shapes.bind_group",
                &self.kernels.layout,
                &mut self.bind_group,
            );
        if stale {
            if let Some(counts) = self.counts.as_mut() {
                counts.bind_group = None;
            }
            if let Some(reductions) = self.reductions.as_mut() {
                reductions.bind_group = None;
            }
            if let Some(grid) = self.grid.as_mut() {
                grid.inputs_replaced();
            }
        }
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::{MIN_TILE_PAIRS, TILE_SECONDS, tile_pairs};

    #[test]
    fn a_slow_kernels_tiles_are_cut_to_about_a_second_and_a_fast_ones_are_not() {
        // A polygon's collinear edges on lavapipe: 15 µs a pair, 66,666 pairs a tile.
        assert_eq!(tile_pairs(15e-6), (TILE_SECONDS / 15e-6) as u64);
        // Slower still: the floor.
        assert_eq!(tile_pairs(1e-3), MIN_TILE_PAIRS);
        // A hardware GPU (10^10 pairs a second and more): far past any device's tile.
        assert!(tile_pairs(1e-10) >= 1 << 33);
        assert_eq!(tile_pairs(0.0), u64::MAX);
    }
}
