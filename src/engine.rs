//! The one entry point: an [`Engine`] on the GPU or the CPU, with the same API and results.

use crate::broad_phase::{BroadPhase, RectSet};
use crate::cancel::Cancel;
use crate::cpu::batched::{CpuKernel, CpuOptions, Simd};
use crate::cpu::grid::Grid;
use crate::cpu::lane_filter::LaneFilter;
use crate::cpu::segment_circle::CircleContact;
use crate::cpu::segment_polygon::Polygons;
use crate::cpu::segment_polygon::filters::polygon_filtered;
use crate::cpu::segment_polygon::{
    EdgeContact, PolygonContact, PolygonEdge, polygon_contact, polygon_edges,
};
use crate::cpu::segment_segment::SegmentContact;
use crate::cpu::shape_queries;
use crate::error::{Error, Result};
use crate::gpu::{
    GpuCall, GpuContext, GpuLimits, GpuPairs, GpuQueries, GpuShapePairs, GridQuery, WaitLimit,
};
use crate::query::{Batch, ClipTo, Clipped, Counts};
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::types::{Circle, FirstHit, Hit, PairIndex, PairResult, Rect, Segment};
use crate::validate;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::Duration;

/// A shape's GPU host, behind its type: what the engine does with each of them.
trait ShapeHost: Any + Send + Sync {
    fn set_wait(&mut self, wait: WaitLimit);
    fn as_any(&mut self) -> &mut dyn Any;
}

impl<S: Shape> ShapeHost for GpuShapePairs<S> {
    fn set_wait(&mut self, wait: WaitLimit) {
        GpuShapePairs::set_wait(self, wait);
    }

    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// Results per chunk of the queries over shapes (hits, first hits, counts): their memory
/// whatever the batch.
pub const SHAPE_PAIRS_PER_CHUNK: usize = 1 << 22;

/// The hitting pairs of rows of `m` results each, from `chunks`, which hands each chunk of
/// rows to its argument with the chunk's first row.
fn hits_of<C: ShapeContact>(
    m: usize,
    chunks: impl FnOnce(&mut dyn FnMut(usize, &[C])) -> Result<()>,
) -> Result<Vec<ShapeHit<C>>> {
    let mut hits = Vec::new();
    chunks(&mut |first, contacts| {
        for (i, contact) in shape_queries::shape_hit_list(contacts) {
            hits.push(ShapeHit {
                segment: (first + i / m) as u32,
                shape: (i % m) as u32,
                contact,
            });
        }
    })?;
    Ok(hits)
}

/// Each row's hit with the smallest `t_enter`, the lowest index on a tie, as [`hits_of`].
fn first_hits_of<C: ShapeContact>(
    n: usize,
    m: usize,
    chunks: impl FnOnce(&mut dyn FnMut(usize, &[C])) -> Result<()>,
) -> Result<Vec<Option<ShapeHit<C>>>> {
    let mut first = vec![None; n];
    chunks(&mut |start, contacts| {
        for (k, row) in contacts.chunks_exact(m).enumerate() {
            first[start + k] =
                shape_queries::shape_first_hits(row).map(|(shape, contact)| ShapeHit {
                    segment: (start + k) as u32,
                    shape,
                    contact,
                });
        }
    })?;
    Ok(first)
}

/// Hits per row and per column, as [`hits_of`].
fn counts_of<C: ShapeContact>(
    n: usize,
    m: usize,
    chunks: impl FnOnce(&mut dyn FnMut(usize, &[C])) -> Result<()>,
) -> Result<Counts> {
    let mut counts = Counts {
        per_segment: vec![0; n],
        per_rect: vec![0; m],
    };
    chunks(&mut |start, contacts| {
        for (k, row) in contacts.chunks_exact(m).enumerate() {
            for (shape, contact) in row.iter().enumerate() {
                if contact.hit() {
                    counts.per_segment[start + k] += 1;
                    counts.per_rect[shape] += 1;
                }
            }
        }
    })?;
    Ok(counts)
}

/// Hits per segment and per shape from listed hits.
fn count_listed<C>(counts: &mut Counts, hits: &[ShapeHit<C>]) {
    for hit in hits {
        counts.per_segment[hit.segment as usize] += 1;
        counts.per_rect[hit.shape as usize] += 1;
    }
}

/// A candidate pair's contact on the CPU: the shape's float filter where it certifies the
/// answer, else its exact function.
fn contact_of<S: Shape>(shapes: &[S]) -> impl Fn(&Segment, usize) -> S::Contact + Sync + Copy + '_ {
    move |q: &Segment, k: usize| {
        let shape = &shapes[k];
        S::filtered(q, shape).unwrap_or_else(|| S::exact(q, shape))
    }
}

/// Segment and shape indices must fit in u32.
fn check_indices(segments: usize, shapes: usize) -> Result<()> {
    if segments > u32::MAX as usize || shapes > u32::MAX as usize {
        return Err(Error::TooManyPairs {
            segments,
            rects: shapes,
        });
    }
    Ok(())
}

/// Checks every segment and every shape, before any work.
fn check_shapes<S: Shape>(segments: &[Segment], shapes: &[S]) -> Result<()> {
    validate::check_inputs(segments, &[])?;
    for (i, shape) in shapes.iter().enumerate() {
        S::check(i, shape)?;
    }
    Ok(())
}

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// A hardware GPU when one opens, else the CPU ([`Engine::chosen`] says which and why).
    #[default]
    Auto,
    /// The GPU; fail when none can be opened.
    Gpu,
    /// The CPU fallback.
    Cpu,
}

/// `segments × rects`, or [`Error::TooManyPairs`] when that overflows.
fn pair_count(segments: &[Segment], rects: &[Rect]) -> Result<usize> {
    segments
        .len()
        .checked_mul(rects.len())
        .ok_or(Error::TooManyPairs {
            segments: segments.len(),
            rects: rects.len(),
        })
}

/// What an [`Engine`] runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum Chosen {
    /// The GPU adapter, described as `name (backend, device type)`.
    Gpu(String),
    /// The CPU: its SIMD level and threads; with `Auto`, the reason the GPU was not used.
    Cpu {
        kernel: String,
        reason: Option<String>,
    },
}

impl std::fmt::Display for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Chosen::Gpu(adapter) => write!(f, "gpu: {adapter}"),
            Chosen::Cpu {
                kernel,
                reason: None,
            } => write!(f, "cpu: {kernel}"),
            Chosen::Cpu {
                kernel,
                reason: Some(r),
            } => write!(f, "cpu: {kernel} ({r})"),
        }
    }
}

/// The GPU host of every kernel, on one context.
struct GpuHost {
    pairs: GpuPairs,
    queries: GpuQueries,
    /// One host per shape ([`Shape`]), built on first use (the exact kernels are long to
    /// compile), by the shape's type.
    shapes: HashMap<TypeId, Box<dyn ShapeHost>>,
    /// The limits the kernels were built with (and the wait set since), for those built later.
    limits: GpuLimits,
    /// Runs a call the GPU could not finish (a timeout, a lost device): `Auto`'s engines, and
    /// [`Engine::with_cpu_fallback`].
    fallback: Option<CpuKernel>,
    /// The last call's kernel time, when timing is on.
    kernel_time: Option<Duration>,
    /// Where the last call's host time went.
    call: Option<GpuCall>,
    /// The process the device was opened in: a forked child has none of its driver's
    /// threads, and must not touch it.
    pid: u32,
}

impl GpuHost {
    /// The GPU host of shape `S`, built on first use.
    fn shape_host<S: Shape>(&mut self) -> Result<&mut GpuShapePairs<S>> {
        let key = TypeId::of::<S>();
        if !self.shapes.contains_key(&key) {
            let host = GpuShapePairs::<S>::new(self.pairs.context().clone(), self.limits)?;
            self.shapes.insert(key, Box::new(host));
        }
        let host = self.shapes.get_mut(&key).expect("built above");
        Ok(host.as_any().downcast_mut().expect("keyed by its type"))
    }

    /// After a pairs call: its kernel time and where its host time went.
    fn account_pairs(&mut self) {
        self.kernel_time = self.pairs.kernel_time();
        self.call = Some(self.pairs.last_call());
    }

    /// After a queries call: its kernel time and where its host time went.
    fn account_queries(&mut self) {
        self.kernel_time = self.queries.kernel_time();
        self.call = Some(self.queries.last_call());
    }
}

/// An output buffer must hold one entry per `expected` input.
fn check_output(expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::OutputLength { expected, got })
    }
}

/// Where one call runs: what [`Engine::run`] hands a query.
enum On<'a> {
    Gpu(&'a mut GpuHost),
    Cpu(&'a mut CpuKernel),
}

enum Inner {
    Gpu(Box<GpuHost>),
    Cpu {
        kernel: CpuKernel,
        reason: Option<String>,
    },
}

/// Runs pair queries on one backend. GPU buffers live in the engine and are reused between
/// calls, growing only when a batch is larger than any before, hence `&mut self`.
pub struct Engine {
    inner: Inner,
    /// The GPU kernel time of the last call, when timing is on.
    kernel_time: Option<Duration>,
    /// Where the last GPU call's host time went.
    gpu_call: Option<GpuCall>,
    /// Why the last call ran on the CPU instead of the GPU, if it did.
    last_fallback: Option<String>,
    broad_phase: BroadPhase,
    /// Whether the last query used a grid.
    used_grid: bool,
    /// The grid built for batches without a [`RectSet`], its memory kept between calls.
    own_grid: Grid,
    /// Checked before, during (between chunks) and after each call.
    cancel: Option<Cancel>,
}

impl Engine {
    /// An engine on the given backend. `Auto` falls back to the CPU when no GPU can be opened.
    ///
    /// # Errors
    /// With `Backend::Gpu`: [`Error::NoAdapter`], [`Error::RequestDevice`], or [`Error::Gpu`] if
    /// the kernels fail to build on the device.
    pub fn new(backend: Backend) -> Result<Self> {
        match backend {
            Backend::Cpu => Ok(Self::cpu()),
            Backend::Gpu => Self::gpu(GpuContext::new()?, GpuLimits::default()),
            Backend::Auto => Ok(Self::auto(CpuKernel::default())),
        }
    }

    /// [`new`](Self::new), with the CPU backend's threads and SIMD level set (used when the CPU
    /// is chosen or falls back).
    ///
    /// # Errors
    /// [`Error::CpuOptions`] when the options cannot be met; as [`new`](Self::new).
    pub fn with_cpu_options(backend: Backend, options: CpuOptions) -> Result<Self> {
        let kernel = CpuKernel::new(options).map_err(Error::CpuOptions)?;
        match backend {
            Backend::Cpu => Ok(Self::cpu_kernel(kernel, None)),
            Backend::Gpu => Self::gpu(GpuContext::new()?, GpuLimits::default()),
            Backend::Auto => Ok(Self::auto(kernel)),
        }
    }

    fn cpu_kernel(kernel: CpuKernel, reason: Option<String>) -> Self {
        Self {
            inner: Inner::Cpu { kernel, reason },
            kernel_time: None,
            gpu_call: None,
            last_fallback: None,
            broad_phase: BroadPhase::default(),
            used_grid: false,
            own_grid: Grid::default(),
            cancel: None,
        }
    }

    /// `Auto`: a hardware GPU when one opens; the CPU when none does, or when the only adapter
    /// is a software one (lavapipe, WARP, SwiftShader), which runs the same kernel slower than
    /// the CPU backend. `WGPU_ADAPTER_NAME` naming an adapter overrides that preference. On the
    /// GPU, a call the GPU cannot finish (a timeout, a lost device) runs on the CPU instead
    /// ([`with_cpu_fallback`](Self::with_cpu_fallback)).
    fn auto(kernel: CpuKernel) -> Self {
        let chosen_by_name = std::env::var_os("WGPU_ADAPTER_NAME").is_some();
        let reason = match GpuContext::new() {
            Ok(context) if context.is_software() && !chosen_by_name => format!(
                "the GPU found, {}, is a software one, slower than the CPU",
                context.adapter_info().name
            ),
            Ok(context) => match Self::gpu(context, GpuLimits::default()) {
                Ok(engine) => return engine.falling_back_to(kernel),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        Self::cpu_kernel(kernel, Some(reason))
    }

    /// The CPU backend: the best SIMD level of this CPU, one thread per core.
    pub fn cpu() -> Self {
        Self::cpu_kernel(CpuKernel::default(), None)
    }

    /// An engine on an existing GPU context (for instance a game's own device, see
    /// [`GpuContext::from_device`]), optionally with lower limits than the device's.
    ///
    /// # Errors
    /// [`Error::Gpu`] if the kernels fail to build on the device.
    pub fn gpu(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        Ok(Self {
            inner: Inner::Gpu(Box::new(GpuHost {
                pairs: GpuPairs::new(context.clone(), limits)?,
                queries: GpuQueries::new(context, limits)?,
                shapes: HashMap::new(),
                limits,
                fallback: None,
                kernel_time: None,
                call: None,
                pid: std::process::id(),
            })),
            kernel_time: None,
            gpu_call: None,
            last_fallback: None,
            broad_phase: BroadPhase::default(),
            used_grid: false,
            own_grid: Grid::default(),
            cancel: None,
        })
    }

    /// On the GPU: a call the GPU cannot finish, because it timed out
    /// ([`Error::Timeout`], see [`GpuLimits::wait`]) or the device was lost
    /// ([`Error::DeviceLost`]), runs on the CPU backend with `options` instead, with the same
    /// results, and [`last_fallback`](Self::last_fallback) says why. `Backend::Auto` engines
    /// have one. Other GPU errors are returned. On the CPU this changes nothing.
    ///
    /// # Errors
    /// [`Error::CpuOptions`] when the options cannot be met.
    pub fn with_cpu_fallback(self, options: CpuOptions) -> Result<Self> {
        let kernel = CpuKernel::new(options).map_err(Error::CpuOptions)?;
        Ok(self.falling_back_to(kernel))
    }

    fn falling_back_to(mut self, mut kernel: CpuKernel) -> Self {
        kernel.set_cancel(self.cancel.clone());
        if let Inner::Gpu(host) = &mut self.inner {
            host.fallback = Some(kernel);
        }
        self
    }

    /// Why the last call ran on the CPU instead of the GPU (the GPU's error), or `None` when it
    /// ran where the engine runs.
    pub fn last_fallback(&self) -> Option<&str> {
        self.last_fallback.as_deref()
    }

    /// How long each GPU step may take from now on (see [`GpuLimits::wait`]); nothing on the
    /// CPU.
    pub fn set_gpu_wait(&mut self, wait: crate::gpu::WaitLimit) {
        if let Inner::Gpu(host) = &mut self.inner {
            host.pairs.set_wait(wait);
            host.queries.set_wait(wait);
            host.limits.wait = Some(wait);
            for shape in host.shapes.values_mut() {
                shape.set_wait(wait);
            }
        }
    }

    /// Calls check `cancel` from now on (`None`: never): set, a call stops at its next chunk
    /// and returns [`Error::Cancelled`] (see [`Cancel`]).
    pub fn set_cancel(&mut self, cancel: Option<Cancel>) {
        match &mut self.inner {
            Inner::Gpu(host) => {
                if let Some(kernel) = &mut host.fallback {
                    kernel.set_cancel(cancel.clone());
                }
            }
            Inner::Cpu { kernel, .. } => kernel.set_cancel(cancel.clone()),
        }
        self.cancel = cancel;
    }

    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }

    /// [`run_uncancelled`](Self::run_uncancelled), checking the cancel token before and after
    /// (the CPU checks it between chunks too): a cancelled call's results are discarded.
    fn run<T>(&mut self, call: impl FnMut(On) -> Result<T>) -> Result<T> {
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let outcome = self.run_uncancelled(call);
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        outcome
    }

    /// Runs one call where the engine runs; on the GPU with a fallback, a timeout or a lost
    /// device runs it again on the CPU (`call` must then write every output afresh).
    fn run_uncancelled<T>(&mut self, mut call: impl FnMut(On) -> Result<T>) -> Result<T> {
        self.last_fallback = None;
        match &mut self.inner {
            Inner::Gpu(host) => {
                host.kernel_time = None;
                host.call = None;
                if host.pid != std::process::id() {
                    let e = Error::Forked {
                        opened_in: host.pid,
                    };
                    return match &mut host.fallback {
                        Some(kernel) => {
                            self.last_fallback = Some(format!("{e}; this call ran on the CPU"));
                            call(On::Cpu(kernel))
                        }
                        None => Err(e),
                    };
                }
                let outcome = call(On::Gpu(host));
                self.kernel_time = host.kernel_time;
                self.gpu_call = host.call;
                match (outcome, &mut host.fallback) {
                    (Err(e @ (Error::Timeout { .. } | Error::DeviceLost(_))), Some(kernel)) => {
                        self.last_fallback = Some(format!("{e}; this call ran on the CPU"));
                        call(On::Cpu(kernel))
                    }
                    (outcome, _) => outcome,
                }
            }
            Inner::Cpu { kernel, .. } => call(On::Cpu(kernel)),
        }
    }

    /// Whether queries (first hit, hits, counts) find candidates through a grid; `Auto` by
    /// default. On the GPU the grid is built and walked there.
    pub fn set_broad_phase(&mut self, broad_phase: BroadPhase) {
        self.broad_phase = broad_phase;
    }

    pub fn broad_phase(&self) -> BroadPhase {
        self.broad_phase
    }

    /// Whether the last first-hit, hits or counts call found its candidates through a grid.
    pub fn used_broad_phase(&self) -> bool {
        self.used_grid
    }

    /// Prepares rects for many queries ([`Batch::over`]): validates them and builds their grid.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid rect.
    pub fn prepare_rects(&self, rects: &[Rect]) -> Result<RectSet> {
        RectSet::new(rects)
    }

    /// [`run`](Self::run) for a query that may use a grid: `call` gets the batch's prepared
    /// grid, the engine's own grid for this call (its memory kept between calls), or `None` for
    /// the brute force, as the broad-phase setting decides. On the GPU the engine's own grid is
    /// only planned (the GPU lists the cells itself), and a CPU fallback then runs the brute
    /// force.
    fn run_with_grid<T>(
        &mut self,
        batch: &Batch,
        mut call: impl FnMut(On, Option<GridQuery>) -> Result<T>,
    ) -> Result<T> {
        let on_gpu = matches!(self.inner, Inner::Gpu(_));
        let use_grid = self.broad_phase.uses_grid(
            batch.segments.len(),
            batch.rects.len(),
            batch.rect_set.is_some(),
        );
        let mut own = std::mem::take(&mut self.own_grid);
        if use_grid && batch.rect_set.is_none() {
            if on_gpu {
                own.plan(batch.rects);
            } else {
                own.build(batch.rects);
            }
        }
        let grid = use_grid.then(|| match batch.rect_set {
            Some(set) => GridQuery {
                plan: set.grid(),
                set: Some(set.id()),
            },
            None => GridQuery {
                plan: &own,
                set: None,
            },
        });
        let mut used = false;
        let outcome = self.run(|on| {
            used = match on {
                On::Gpu(_) => grid.is_some(),
                On::Cpu(_) => grid.is_some_and(|g| g.plan.is_built()),
            };
            call(on, grid)
        });
        self.used_grid = match &self.inner {
            // The GPU may have run the brute force anyway (bindings too small, say).
            Inner::Gpu(host) if self.last_fallback.is_none() => used && host.queries.used_grid(),
            _ => used,
        };
        self.own_grid = own;
        outcome
    }

    /// What this engine runs on.
    pub fn chosen(&self) -> Chosen {
        match &self.inner {
            Inner::Gpu(gpu) => Chosen::Gpu(gpu.pairs.context().describe()),
            Inner::Cpu { kernel, reason } => Chosen::Cpu {
                kernel: kernel.to_string(),
                reason: reason.clone(),
            },
        }
    }

    /// Times the GPU kernels with timestamp queries from now on (or stops); returns whether
    /// they can be timed: false on the CPU and on adapters without timestamp queries. Timing
    /// waits for each dispatch before its readback is recorded: for benchmarks, not games.
    pub fn time_gpu_kernels(&mut self, on: bool) -> bool {
        match &mut self.inner {
            Inner::Gpu(gpu) => gpu.pairs.time_kernels(on) & gpu.queries.time_kernels(on),
            Inner::Cpu { .. } => false,
        }
    }

    /// The summed kernel time of the last call's dispatches (no upload, no readback), when
    /// [`time_gpu_kernels`](Self::time_gpu_kernels) is on.
    pub fn gpu_kernel_time(&self) -> Option<Duration> {
        self.kernel_time
    }

    /// Where the last GPU call's host time went (submitting, waiting for the GPU, merging
    /// results) and how its chunks overlapped: a batch of several chunks keeps up to
    /// [`CHUNKS_IN_FLIGHT`](crate::gpu::CHUNKS_IN_FLIGHT) in flight, so that uploads, kernels
    /// and readbacks overlap. `None` on the CPU, and for a call that ran there.
    pub fn last_gpu_call(&self) -> Option<GpuCall> {
        self.gpu_call
    }

    /// The GPU context, when on the GPU.
    pub fn gpu_context(&self) -> Option<&GpuContext> {
        match &self.inner {
            Inner::Gpu(gpu) => Some(gpu.pairs.context()),
            Inner::Cpu { .. } => None,
        }
    }

    /// Every segment against every rect: `results[s * rects.len() + r]` (segment-major).
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid value, before any work; GPU errors.
    pub fn pairs(&mut self, segments: &[Segment], rects: &[Rect]) -> Result<Vec<PairResult>> {
        validate::check_inputs(segments, rects)?;
        let n = pair_count(segments, rects)?;
        let mut results = Vec::new();
        // A batch too big for memory is an error, not an abort.
        results
            .try_reserve_exact(n)
            .map_err(|_| Error::TooManyPairs {
                segments: segments.len(),
                rects: rects.len(),
            })?;
        results.resize(n, PairResult::MISS);
        self.pairs_into_unchecked(segments, rects, &mut results)?;
        Ok(results)
    }

    /// [`pairs`](Self::pairs) into a caller's buffer of `segments.len() * rects.len()` results
    /// (reuse it across frames). On an error its contents are unspecified.
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`pairs`](Self::pairs).
    pub fn pairs_into(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        validate::check_inputs(segments, rects)?;
        let expected = pair_count(segments, rects)?;
        check_output(expected, results.len())?;
        self.pairs_into_unchecked(segments, rects, results)
    }

    fn pairs_into_unchecked(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        self.run(|on| match on {
            On::Gpu(gpu) => {
                gpu.pairs.pairs_dense(segments, rects, results)?;
                gpu.account_pairs();
                Ok(())
            }
            On::Cpu(kernel) => {
                kernel.pairs_dense(segments, rects, results);
                Ok(())
            }
        })
    }

    /// Pairs the GPU kernel could not decide with certainty since this engine was created; the
    /// host re-decided each exactly before returning it, so results never show them. Always 0 on
    /// the CPU, which makes the same exact decisions inline. A measure of cost, not of accuracy:
    /// on random scenes it is about zero; exact ties (a line through a corner) always count.
    pub fn uncertain_pairs(&self) -> u64 {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.pairs.uncertain_pairs() + gpu.queries.uncertain_pairs(),
            Inner::Cpu { .. } => 0,
        }
    }

    /// Bytes of GPU memory this engine holds between calls (0 on the CPU). Buffers grow only
    /// when a batch needs more than any before.
    pub fn gpu_buffer_bytes(&self) -> u64 {
        match &self.inner {
            Inner::Gpu(gpu) => gpu.pairs.buffer_bytes() + gpu.queries.buffer_bytes(),
            Inner::Cpu { .. } => 0,
        }
    }

    /// Every query segment against every shape of one kind ([`Shape`]: walls, circles):
    /// `result[q * shapes.len() + s]`, query-major. Each is the shape's scalar function's
    /// answer ([`Shape::exact`]), exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or shape, before any work;
    /// [`Error::TooManyPairs`] when the result would not fit in memory; GPU errors.
    pub fn shape_pairs<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<S::Contact>> {
        check_shapes(segments, shapes)?;
        let too_many = || Error::TooManyPairs {
            segments: segments.len(),
            rects: shapes.len(),
        };
        let n = segments
            .len()
            .checked_mul(shapes.len())
            .ok_or_else(too_many)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| too_many())?;
        out.resize(n, S::MISS);
        self.shape_pairs_into(segments, shapes, &mut out)?;
        Ok(out)
    }

    /// [`Engine::shape_pairs`] into `out`, inputs checked.
    fn shape_pairs_into<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
        out: &mut [S::Contact],
    ) -> Result<()> {
        self.run(|on| match on {
            On::Gpu(gpu) => gpu.shape_host::<S>()?.pairs_dense(segments, shapes, out),
            On::Cpu(kernel) => {
                kernel.shape_pairs_dense(segments, shapes, out);
                Ok(())
            }
        })
    }

    /// The pairs of every segment with every shape, a chunk of segments at a time (memory
    /// bounded by [`SHAPE_PAIRS_PER_CHUNK`] results whatever the batch): `each(first segment,
    /// the chunk's results, query-major)`. Inputs checked, indices fit in u32.
    fn shape_chunks<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
        mut each: impl FnMut(usize, &[S::Contact]),
    ) -> Result<()> {
        check_shapes(segments, shapes)?;
        if segments.len() > u32::MAX as usize || shapes.len() > u32::MAX as usize {
            return Err(Error::TooManyPairs {
                segments: segments.len(),
                rects: shapes.len(),
            });
        }
        if shapes.is_empty() {
            return Ok(());
        }
        let rows = (SHAPE_PAIRS_PER_CHUNK / shapes.len()).max(1);
        let mut out = Vec::new();
        for (c, chunk) in segments.chunks(rows).enumerate() {
            out.clear();
            out.resize(chunk.len() * shapes.len(), S::MISS);
            self.shape_pairs_into(chunk, shapes, &mut out)?;
            each(c * rows, &out);
        }
        Ok(())
    }

    /// The hitting (segment, shape) pairs of every segment against every shape, in (segment,
    /// shape) order: [`Engine::shape_pairs`] without the misses, in memory bounded by the hits.
    ///
    /// # Errors
    /// As [`Engine::shape_pairs`].
    pub fn shape_hits<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<ShapeHit<S::Contact>>> {
        check_shapes(segments, shapes)?;
        check_indices(segments.len(), shapes.len())?;
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let contact = contact_of(shapes);
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        let mut hits = Vec::new();
        if self.listed_hits(segments, &bounds, filter, contact, |chunk| {
            hits.extend_from_slice(chunk)
        })? {
            return Ok(hits);
        }
        if S::KERNEL.reduces {
            // Reduced on the GPU (the CPU, without a grid, if the GPU times out).
            return self.run(|on| match on {
                On::Gpu(gpu) => gpu.shape_host::<S>()?.hits(segments, shapes),
                On::Cpu(kernel) => {
                    let mut hits = Vec::new();
                    kernel.shape_hit_chunks(segments, &bounds, None, filter, contact, |chunk| {
                        hits.extend_from_slice(chunk)
                    });
                    Ok(hits)
                }
            });
        }
        hits_of(shapes.len(), |each| {
            self.shape_chunks(segments, shapes, each)
        })
    }

    /// Each segment's first hit among the shapes: the smallest `t_enter`, the lowest shape
    /// index on a tie (as for rects), `None` on a miss. One per segment.
    ///
    /// # Errors
    /// As [`Engine::shape_pairs`].
    pub fn shape_first_hits<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<Option<ShapeHit<S::Contact>>>> {
        let mut first = vec![None; segments.len()];
        check_shapes(segments, shapes)?;
        check_indices(segments.len(), shapes.len())?;
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let contact = contact_of(shapes);
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        if self.listed_first_hits(segments, &bounds, filter, contact, &mut first)? {
            return Ok(first);
        }
        if S::KERNEL.reduces {
            // Reduced on the GPU (the CPU, without a grid, if the GPU times out).
            self.run(|on| {
                first.fill(None);
                match on {
                    On::Gpu(gpu) => gpu
                        .shape_host::<S>()?
                        .first_hits(segments, shapes, &mut first),
                    On::Cpu(kernel) => {
                        kernel.shape_first_hits_listed(
                            segments, &bounds, None, filter, contact, &mut first,
                        );
                        Ok(())
                    }
                }
            })?;
            return Ok(first);
        }
        first_hits_of(segments.len(), shapes.len(), |each| {
            self.shape_chunks(segments, shapes, each)
        })
    }

    /// Hits per segment and per shape (`Counts::per_rect` counts per shape).
    ///
    /// # Errors
    /// As [`Engine::shape_pairs`].
    pub fn shape_counts<S: Shape>(&mut self, segments: &[Segment], shapes: &[S]) -> Result<Counts> {
        let mut counts = Counts {
            per_segment: vec![0; segments.len()],
            per_rect: vec![0; shapes.len()],
        };
        check_shapes(segments, shapes)?;
        check_indices(segments.len(), shapes.len())?;
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let hit = |q: &Segment, k: usize| S::hit(q, &shapes[k]);
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        let listed = self.with_shape_grid(segments.len(), &bounds, |kernel, grid| {
            kernel.shape_counts_listed(segments, &bounds, grid, filter, hit, &mut counts)
        })?;
        if listed {
            return Ok(counts);
        }
        // On the GPU: the kernel's counts entry point, summed there (the CPU, without a grid,
        // if the GPU times out).
        self.run(|on| {
            counts.per_segment.fill(0);
            counts.per_rect.fill(0);
            match on {
                On::Gpu(gpu) => gpu.shape_host::<S>()?.counts(
                    segments,
                    shapes,
                    &mut counts.per_segment,
                    &mut counts.per_rect,
                ),
                On::Cpu(kernel) => {
                    kernel.shape_counts_listed(segments, &bounds, None, filter, hit, &mut counts);
                    Ok(())
                }
            }
        })?;
        Ok(counts)
    }

    /// [`Engine::listed_hits`] for first hits, the grid's walk stopping early.
    fn listed_first_hits<C: ShapeContact>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        first: &mut [Option<ShapeHit<C>>],
    ) -> Result<bool> {
        self.with_shape_grid(segments.len(), bounds, |kernel, grid| {
            kernel.shape_first_hits_listed(segments, bounds, grid, filter, contact, first)
        })
    }

    /// On the CPU, runs `run` with the grid over `bounds` when the broad-phase setting picks
    /// it (built for the call, in the engine's own grid's memory), else `None`; `false` on the
    /// GPU.
    fn with_shape_grid(
        &mut self,
        segments: usize,
        bounds: &[Rect],
        run: impl FnOnce(&mut CpuKernel, Option<&Grid>),
    ) -> Result<bool> {
        let use_grid =
            self.broad_phase.uses_grid(segments, bounds.len(), false) && !bounds.is_empty();
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let Inner::Cpu { kernel, .. } = &mut self.inner else {
            return Ok(false);
        };
        self.last_fallback = None;
        let mut grid = std::mem::take(&mut self.own_grid);
        if use_grid {
            grid.build(bounds);
        }
        run(kernel, use_grid.then_some(&grid));
        self.used_grid = use_grid;
        self.own_grid = grid;
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(true)
    }

    /// On the CPU, the hitting pairs a chunk at a time (`each`), never the dense pairs: each
    /// segment's candidates through the broad phase where the setting picks it (a grid over the
    /// shapes' boxes, built for the call), else the box cull; then the shapes' lane filter
    /// (`filter`, made for the kernel's SIMD level), and `contact` answers a candidate left.
    /// `false` on the GPU, which reduces the dense pairs (on the GPU where the kernel
    /// [`reduces`](crate::ShapeKernel::reduces), else on the host).
    fn listed_hits<C: ShapeContact>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        each: impl FnMut(&[ShapeHit<C>]),
    ) -> Result<bool> {
        self.with_shape_grid(segments.len(), bounds, |kernel, grid| {
            kernel.shape_hit_chunks(segments, bounds, grid, filter, contact, each)
        })
    }

    /// Every query segment against every polygon, segment × polygon (docs/semantics.md):
    /// `result[q * polygons.len() + p]`, query-major. Each is [`crate::segment_polygon`]'s
    /// answer, exact, with correctly rounded t, on either backend. On the GPU each (query,
    /// edge) runs there and the host gathers each polygon's edges; on the CPU polygons are
    /// culled by box and their edges certified in floating point where it can.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment, before any work (polygons are
    /// checked when built); GPU errors.
    pub fn polygon_pairs(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<PolygonContact>> {
        let m = polygons.len();
        let too_many = || Error::TooManyPairs {
            segments: segments.len(),
            rects: m,
        };
        let n = segments.len().checked_mul(m).ok_or_else(too_many)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| too_many())?;
        self.polygon_chunks(segments, polygons, |_, rows| out.extend_from_slice(rows))?;
        Ok(out)
    }

    /// The hitting (segment, polygon) pairs, as [`Engine::shape_hits`].
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<ShapeHit<PolygonContact>>> {
        let mut hits = Vec::new();
        if self.listed_polygon_hits(segments, polygons, |chunk| hits.extend_from_slice(chunk))? {
            return Ok(hits);
        }
        hits_of(polygons.len(), |each| {
            self.polygon_chunks(segments, polygons, each)
        })
    }

    /// Each segment's first hit among the polygons, as [`Engine::shape_first_hits`].
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_first_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<Option<ShapeHit<PolygonContact>>>> {
        let mut first = vec![None; segments.len()];
        validate::check_inputs(segments, &[])?;
        check_indices(segments.len(), polygons.edge_count())?;
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let bounds: Vec<Rect> = (0..polygons.len()).map(|i| polygons.bounds(i)).collect();
        let contact = |q: &Segment, k: usize| {
            let edges = &edges[offsets[k] as usize..offsets[k + 1] as usize];
            polygon_filtered(q, edges, &mut Vec::with_capacity(edges.len()))
        };
        if self.listed_first_hits(segments, &bounds, |_, _| None, contact, &mut first)? {
            return Ok(first);
        }
        first_hits_of(segments.len(), polygons.len(), |each| {
            self.polygon_chunks(segments, polygons, each)
        })
    }

    /// Hits per segment and per polygon, as [`Engine::shape_counts`].
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_counts(&mut self, segments: &[Segment], polygons: &Polygons) -> Result<Counts> {
        let mut counts = Counts {
            per_segment: vec![0; segments.len()],
            per_rect: vec![0; polygons.len()],
        };
        if self.listed_polygon_hits(segments, polygons, |chunk| count_listed(&mut counts, chunk))? {
            return Ok(counts);
        }
        counts_of(segments.len(), polygons.len(), |each| {
            self.polygon_chunks(segments, polygons, each)
        })
    }

    /// [`Engine::listed_hits`] over polygons: segments checked first.
    fn listed_polygon_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        each: impl FnMut(&[ShapeHit<PolygonContact>]),
    ) -> Result<bool> {
        validate::check_inputs(segments, &[])?;
        check_indices(segments.len(), polygons.edge_count())?;
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let bounds: Vec<Rect> = (0..polygons.len()).map(|i| polygons.bounds(i)).collect();
        let contact = |q: &Segment, k: usize| {
            let edges = &edges[offsets[k] as usize..offsets[k + 1] as usize];
            polygon_filtered(q, edges, &mut Vec::with_capacity(edges.len()))
        };
        self.listed_hits(segments, &bounds, |_, _| None, contact, each)
    }

    /// Polygon × polygon: whether each polygon of `a` and each of `b` share a point, closed
    /// (touching and containment overlap; docs/semantics.md): `result[i * b.len() + j]`.
    /// Exact, on either backend: built on segment × polygon (an edge of `a` that hits a polygon
    /// of `b`, or the first vertex of `b`'s polygon inside `a`'s).
    ///
    /// # Errors
    /// [`Error::TooManyPairs`] when the result does not fit; GPU errors.
    pub fn polygon_overlaps(&mut self, a: &Polygons, b: &Polygons) -> Result<Vec<bool>> {
        let (n, m) = (a.len(), b.len());
        let too_many = || Error::TooManyPairs {
            segments: n,
            rects: m,
        };
        let cells = n.checked_mul(m).ok_or_else(too_many)?;
        let mut overlap = Vec::new();
        overlap.try_reserve_exact(cells).map_err(|_| too_many())?;
        overlap.resize(cells, false);
        // Each edge of `a` against every polygon of `b`.
        let mut owner = Vec::with_capacity(a.edge_count());
        let mut edges = Vec::with_capacity(a.edge_count());
        for (i, ring) in a.rings().enumerate() {
            for k in 0..ring.len() {
                let ([x0, y0], [x1, y1]) = (ring[k], ring[(k + 1) % ring.len()]);
                edges.push(Segment::new(x0, y0, x1, y1));
                owner.push(i);
            }
        }
        self.polygon_chunks(&edges, b, |first, rows| {
            for (r, row) in rows.chunks_exact(m.max(1)).enumerate() {
                let i = owner[first + r];
                for (j, contact) in row.iter().enumerate() {
                    overlap[i * m + j] |= contact.hit();
                }
            }
        })?;
        // The first vertex of each polygon of `b`, a point, against every polygon of `a`.
        let points: Vec<Segment> = b
            .rings()
            .map(|ring| Segment::new(ring[0][0], ring[0][1], ring[0][0], ring[0][1]))
            .collect();
        self.polygon_chunks(&points, a, |first, rows| {
            for (r, row) in rows.chunks_exact(n.max(1)).enumerate() {
                let j = first + r;
                for (i, contact) in row.iter().enumerate() {
                    overlap[i * m + j] |= contact.hit();
                }
            }
        })?;
        Ok(overlap)
    }

    /// Segments × polygons, a chunk of segments at a time (memory bounded by
    /// [`SHAPE_PAIRS_PER_CHUNK`] per-edge results): `each(first segment, the chunk's results,
    /// query-major)`. Segments checked; indices fit in u32.
    fn polygon_chunks(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        mut each: impl FnMut(usize, &[PolygonContact]),
    ) -> Result<()> {
        validate::check_inputs(segments, &[])?;
        if segments.len() > u32::MAX as usize || polygons.edge_count() > u32::MAX as usize {
            return Err(Error::TooManyPairs {
                segments: segments.len(),
                rects: polygons.len(),
            });
        }
        if polygons.is_empty() {
            return Ok(());
        }
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let rows = (SHAPE_PAIRS_PER_CHUNK / edges.len()).max(1);
        let mut out = Vec::new();
        let mut edge_contacts = Vec::new();
        for (c, chunk) in segments.chunks(rows).enumerate() {
            out.clear();
            out.resize(chunk.len() * polygons.len(), PolygonContact::MISS);
            self.run(|on| match on {
                On::Gpu(gpu) => {
                    edge_contacts.clear();
                    edge_contacts.resize(chunk.len() * edges.len(), EdgeContact::MISS);
                    let host = gpu.shape_host::<PolygonEdge>()?;
                    host.pairs_dense(chunk, &edges, &mut edge_contacts)?;
                    for (q, (query, row)) in chunk
                        .iter()
                        .zip(out.chunks_exact_mut(polygons.len()))
                        .enumerate()
                    {
                        let contacts = &edge_contacts[q * edges.len()..(q + 1) * edges.len()];
                        for (p, result) in row.iter_mut().enumerate() {
                            let range = offsets[p] as usize..offsets[p + 1] as usize;
                            *result =
                                polygon_contact(query, &edges[range.clone()], &contacts[range]);
                        }
                    }
                    Ok(())
                }
                On::Cpu(kernel) => {
                    kernel.polygon_pairs_dense(chunk, &edges, offsets, &mut out);
                    Ok(())
                }
            })?;
            each(c * rows, &out);
        }
        Ok(())
    }

    /// Every query segment against every wall, segment × segment (docs/semantics.md):
    /// `result[q * walls.len() + w]`, query-major. Each is [`crate::segment_segment`]'s
    /// answer, exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or wall, before any work; GPU errors.
    pub fn wall_pairs(
        &mut self,
        segments: &[Segment],
        walls: &[Segment],
    ) -> Result<Vec<SegmentContact>> {
        self.shape_pairs(segments, walls)
    }

    /// Every query segment against every circle (closed disks), segment × circle
    /// (docs/semantics.md): `result[q * circles.len() + c]`, query-major. Each is
    /// [`crate::segment_circle`]'s answer, exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or circle (a negative radius
    /// included), before any work; GPU errors.
    pub fn circle_pairs(
        &mut self,
        segments: &[Segment],
        circles: &[Circle],
    ) -> Result<Vec<CircleContact>> {
        self.shape_pairs(segments, circles)
    }

    /// The listed (segment, rect) pairs: `results[i]` is `pairs[i]`.
    ///
    /// # Errors
    /// [`Error::Input`] for an invalid value or an index out of range, before any work; GPU
    /// errors.
    pub fn pair_list(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        pairs: &[PairIndex],
    ) -> Result<Vec<PairResult>> {
        validate::check_inputs(segments, rects)?;
        validate::check_pairs(pairs, segments.len(), rects.len())?;
        let mut results = vec![PairResult::MISS; pairs.len()];
        self.run(|on| {
            match on {
                On::Gpu(gpu) => {
                    gpu.pairs.pairs_list(segments, rects, pairs, &mut results)?;
                    gpu.account_pairs();
                }
                On::Cpu(kernel) => kernel.pairs_list(segments, rects, pairs, &mut results),
            }
            Ok(())
        })?;
        Ok(results)
    }

    /// The closest hit of each segment among the rects its filter tests: the smallest
    /// `t_enter`, the lowest rect index on a tie; [`FirstHit::NONE`] when it hits none.
    /// `result[s]` is segment `s`'s.
    ///
    /// A segment starting inside a rect hits it at `t_enter = 0`.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid value, [`Error::FilterLength`], before any
    /// work; GPU errors.
    pub fn first_hit(&mut self, batch: &Batch) -> Result<Vec<FirstHit>> {
        let mut out = vec![FirstHit::NONE; batch.segments.len()];
        self.first_hit_into(batch, &mut out)?;
        Ok(out)
    }

    /// [`first_hit`](Self::first_hit) into a caller's buffer of one entry per segment (reuse
    /// it across frames: on the CPU with one thread this allocates nothing).
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`first_hit`](Self::first_hit).
    pub fn first_hit_into(&mut self, batch: &Batch, out: &mut [FirstHit]) -> Result<()> {
        batch.validate()?;
        check_output(batch.segments.len(), out.len())?;
        self.run_with_grid(batch, |on, grid| {
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.first_hit(batch, grid, out)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => kernel.first_hit(batch, built(grid), out),
            }
            Ok(())
        })
    }

    /// Each segment's first-hit rect: [`first_hit_rects_into`](Self::first_hit_rects_into)
    /// into a new vector.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn first_hit_rects(&mut self, batch: &Batch) -> Result<Vec<u32>> {
        let mut out = vec![FirstHit::NO_RECT; batch.segments.len()];
        self.first_hit_rects_into(batch, &mut out)?;
        Ok(out)
    }

    /// [`first_hit`](Self::first_hit), each segment's rect only: `out[s]` is the rect of
    /// segment `s`'s closest hit, [`FirstHit::NO_RECT`] when it hits none (for a game that only
    /// needs which hitbox each bullet hit). A GPU reads back 4 bytes a segment instead of 16;
    /// the CPU computes the whole first hit and keeps the rect.
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`first_hit`](Self::first_hit).
    pub fn first_hit_rects_into(&mut self, batch: &Batch, out: &mut [u32]) -> Result<()> {
        batch.validate()?;
        check_output(batch.segments.len(), out.len())?;
        self.run_with_grid(batch, |on, grid| {
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.first_hit_rects(batch, grid, out)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => {
                    let mut first = vec![FirstHit::NONE; out.len()];
                    kernel.first_hit(batch, built(grid), &mut first);
                    crate::cpu::queries::first_hit_rects(&first, out);
                }
            }
            Ok(())
        })
    }

    /// Every hitting (segment, rect) pair the filters test, in (segment, rect) order, whatever
    /// the backend did internally.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn hits(&mut self, batch: &Batch) -> Result<Vec<Hit>> {
        batch.validate()?;
        self.run_with_grid(batch, |on, grid| match on {
            On::Gpu(gpu) => {
                let hits = gpu.queries.hits(batch, grid)?;
                gpu.account_queries();
                Ok(hits)
            }
            On::Cpu(kernel) => Ok(kernel.hits(batch, built(grid))),
        })
    }

    /// Hits per segment and per rect (damage per enemy), of the pairs the filters test.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn counts(&mut self, batch: &Batch) -> Result<Counts> {
        batch.validate()?;
        let mut counts = Counts {
            per_segment: vec![0; batch.segments.len()],
            per_rect: vec![0; batch.rects.len()],
        };
        self.run_with_grid(batch, |on, grid| {
            // Afresh: a GPU call that failed may have added some chunks' counts.
            counts.per_segment.fill(0);
            counts.per_rect.fill(0);
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.counts(batch, grid, &mut counts)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => kernel.counts(batch, built(grid), &mut counts),
            }
            Ok(())
        })?;
        Ok(counts)
    }

    /// Clips each segment to one rect (a viewport) or to its own rect: the classic
    /// Liang–Barsky clipping job. `result[i]` is segment `i` clipped, `None` on a miss (see
    /// [`Clipped::new`] for how the clipped ends are placed).
    ///
    /// # Errors
    /// [`Error::Input`], [`Error::ClipRectCount`] for a per-segment rect count that differs from
    /// the segment count, before any work; GPU errors.
    pub fn clip(&mut self, segments: &[Segment], to: ClipTo) -> Result<Vec<Clipped>> {
        let one;
        let rects = match to {
            ClipTo::Rect(rect) => {
                one = [rect];
                &one[..]
            }
            ClipTo::PerSegment(rects) => {
                if rects.len() != segments.len() {
                    return Err(Error::ClipRectCount {
                        segments: segments.len(),
                        rects: rects.len(),
                    });
                }
                rects
            }
        };
        validate::check_inputs(segments, rects)?;
        let mut results = vec![FirstHit::NONE; segments.len()];
        self.run(|on| {
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.clip(segments, rects, &mut results)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => kernel.clip(segments, rects, &mut results),
            }
            Ok(())
        })?;
        Ok(results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let rect = if rects.len() == 1 {
                    &rects[0]
                } else {
                    &rects[i]
                };
                Clipped::new(&segments[i], rect, r.result)
            })
            .collect())
    }
}

/// A call's grid for the CPU: only one whose cells are listed (a GPU engine's own grid is only
/// planned; its CPU fallback runs the brute force).
fn built(grid: Option<GridQuery<'_>>) -> Option<&Grid> {
    grid.map(|g| g.plan).filter(|g| g.is_built())
}
