//! The one entry point: an [`Engine`] on the GPU or the CPU, with the same API and results.

mod auto;
mod frames;
mod layers;
mod polygons;
mod rects;
mod scene_report;
mod shape_grids;
mod shapes;
mod targets;

pub use auto::{AUTO_COSTS_VAR, AutoCosts, Choice, Family, GRID_TESTS_PER_SEGMENT, TestCost};
pub use frames::FrameLoop;

use auto::{Auto, Decision, Work};

use crate::broad_phase::{BroadPhase, RectSet};
use crate::cancel::Cancel;
use crate::cpu::batched::{CpuKernel, CpuOptions};
use crate::cpu::grid::Grid;
use crate::error::{Error, Result};
use crate::gpu::{
    GpuCall, GpuContext, GpuLimits, GpuRectPairs, GpuRectQueries, GpuShapeQueries, GridQuery,
    WaitLimit,
};
use crate::query::{Batch, Skipped, StandIns};
use crate::shape::Shape;
use crate::types::Rect;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::Duration;

/// A shape's GPU host, behind its type: what the engine does with each of them.
trait ShapeHost: Any + Send + Sync {
    fn set_wait(&mut self, wait: WaitLimit);
    fn set_cancel(&mut self, cancel: Option<Cancel>);
    fn time_kernels(&mut self, on: bool) -> bool;
    fn as_any(&mut self) -> &mut dyn Any;
}

impl<S: Shape> ShapeHost for GpuShapeQueries<S> {
    fn set_wait(&mut self, wait: WaitLimit) {
        GpuShapeQueries::set_wait(self, wait);
    }

    fn time_kernels(&mut self, on: bool) -> bool {
        GpuShapeQueries::time_kernels(self, on)
    }

    fn set_cancel(&mut self, cancel: Option<Cancel>) {
        GpuShapeQueries::set_cancel(self, cancel);
    }

    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// Which backend to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Each call where the cost model ([`AutoCosts`]) expects it to finish sooner: the CPU,
    /// or a hardware GPU, opened at the first call that would be sooner there, its opening
    /// included ([`Engine::chosen`] and [`Engine::last_choice`] say which and why).
    #[default]
    Auto,
    /// The GPU; fail when none can be opened.
    Gpu,
    /// The CPU fallback.
    Cpu,
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
    context: GpuContext,
    /// The dense and listed pairs' host, built on first use: a process that asks only first
    /// hits, hits or counts never compiles its pipelines.
    pairs: Option<GpuRectPairs>,
    queries: GpuRectQueries,
    /// Whether kernels are timed ([`Engine::time_gpu_kernels`]), for the hosts built later.
    timing: bool,
    /// The calls' cancel token ([`Engine::set_cancel`]), for the hosts built later.
    cancel: Option<Cancel>,
    /// One host per shape ([`Shape`]), built on first use (the exact kernels are long to
    /// compile), by the shape's type.
    shapes: HashMap<TypeId, Box<dyn ShapeHost>>,
    /// The limits the kernels were built with (and the wait set since), for those built later.
    limits: GpuLimits,
    /// Runs a call the GPU could not finish (a timeout, a lost device): `Auto`'s engines, and
    /// [`Engine::with_cpu_fallback`].
    fallback: Option<CpuKernel>,
    /// The host's CPU kernel for the work its CPU does sooner than the GPU (a scene's shapes'
    /// first hits: [`Engine::target_first_hits_into`]) where there is no fallback, made on
    /// first use.
    host_cpu: Option<CpuKernel>,
    /// The last call's kernel time, when timing is on.
    kernel_time: Option<Duration>,
    /// Where the last call's host time went.
    call: Option<GpuCall>,
    /// Polygon edge pairs the kernel left to the host (beyond its narrow integers' reach),
    /// since the engine was created: part of [`Engine::uncertain_pairs`].
    edges_on_host: u64,
    /// The process the device was opened in: a forked child has none of its driver's
    /// threads, and must not touch it.
    pid: u32,
}

impl GpuHost {
    /// The dense and listed pairs' host, built on first use with the limits, wait and timing
    /// set so far.
    fn pairs(&mut self) -> Result<&mut GpuRectPairs> {
        if self.pairs.is_none() {
            let mut pairs = GpuRectPairs::new(self.context.clone(), self.limits)?;
            pairs.time_kernels(self.timing);
            pairs.set_cancel(self.cancel.clone());
            self.pairs = Some(pairs);
        }
        Ok(self.pairs.as_mut().expect("built above"))
    }

    /// The GPU host of shape `S`, built on first use.
    fn shape_host<S: Shape>(&mut self) -> Result<&mut GpuShapeQueries<S>> {
        let key = TypeId::of::<S>();
        if !self.shapes.contains_key(&key) {
            let mut host = GpuShapeQueries::<S>::new(self.context.clone(), self.limits)?;
            host.time_kernels(self.timing);
            host.set_cancel(self.cancel.clone());
            self.shapes.insert(key, Box::new(host));
        }
        let host = self.shapes.get_mut(&key).expect("built above");
        Ok(host.as_any().downcast_mut().expect("keyed by its type"))
    }

    /// Runs `query` on the GPU host of shape `S`, and keeps its kernel time and where its
    /// host time went.
    fn on_shapes<S: Shape, T>(
        &mut self,
        query: impl FnOnce(&mut GpuShapeQueries<S>) -> Result<T>,
    ) -> Result<T> {
        let host = self.shape_host::<S>()?;
        let outcome = query(host);
        let (call, kernel_time) = (host.last_call(), host.kernel_time());
        self.call = Some(call);
        self.kernel_time = kernel_time;
        outcome
    }

    /// After a pairs call: its kernel time and where its host time went.
    fn account_pairs(&mut self) {
        if let Some(pairs) = &self.pairs {
            self.kernel_time = pairs.kernel_time();
            self.call = Some(pairs.last_call());
        }
    }

    /// Every host's calls, and their fallback's, check `cancel` from now on.
    fn set_cancel(&mut self, cancel: Option<Cancel>) {
        for kernel in self.fallback.iter_mut().chain(&mut self.host_cpu) {
            kernel.set_cancel(cancel.clone());
        }
        self.queries.set_cancel(cancel.clone());
        if let Some(pairs) = &mut self.pairs {
            pairs.set_cancel(cancel.clone());
        }
        for shape in self.shapes.values_mut() {
            shape.set_cancel(cancel.clone());
        }
        self.cancel = cancel;
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

/// Where a call runs, decided before it starts ([`Engine::place`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Gpu,
    Cpu,
}

/// Where one call runs: what [`Engine::run`] hands a query.
enum On<'a> {
    Gpu(&'a mut GpuHost),
    Cpu(&'a mut CpuKernel),
}

enum Inner {
    Gpu(Box<GpuHost>),
    Cpu { kernel: CpuKernel },
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
    /// The grids over the last few calls' shapes' boxes (walls, circles, polygons on the CPU),
    /// or along their walls (walls' first hits).
    shape_grids: shape_grids::ShapeGrids,
    /// A scene's per-kind first hits and rects' first hits ([`Targets`]), their memory kept
    /// between frames.
    target_first: crate::targets::kind_first::KindFirst,
    /// A layered scene's first hits of each layer, their memory kept between frames.
    layer_first: Vec<Vec<Option<crate::TargetHit>>>,
    /// Checked before, during (between chunks) and after each call.
    cancel: Option<Cancel>,
    /// Whether the shapes' CPU queries run on a GPU engine's host CPU too
    /// ([`Engine::on_host`]).
    shapes_on_host: bool,
    /// What the last query over a [`Batch`] skipped, and the stand-ins it ran with.
    skipped: Skipped,
    stand_ins: StandIns,
    /// `Backend::Auto`'s model and choices: on the CPU until a call opens a GPU; on the GPU
    /// (its CPU kernel the fallback), each call where the model places it.
    auto: Option<Box<Auto>>,
    /// The call in progress's host time before any GPU work: its inputs checked (and, in
    /// [`run_with_grid`](Self::run_with_grid), its grid planned); [`GpuCall::preparing`].
    preparing: Duration,
}

impl Engine {
    /// An engine on the given backend. `Auto` runs each call on the CPU when no GPU can be
    /// opened, or when the CPU is sooner.
    ///
    /// With `Auto` no device is opened here: the first call that the cost model places on a
    /// GPU opens one ([`AutoCosts`], read from `RECTCAST_AUTO_COSTS` when it is set).
    ///
    /// # Errors
    /// With `Backend::Gpu`: [`Error::NoAdapter`], [`Error::DeviceLimits`],
    /// [`Error::RequestDevice`], or [`Error::Gpu`] if the kernels fail to build on the device.
    /// With `Auto`: [`Error::AutoCosts`] when `RECTCAST_AUTO_COSTS` cannot be read.
    pub fn new(backend: Backend) -> Result<Self> {
        Self::with_cpu_options(backend, CpuOptions::default())
    }

    /// [`new`](Self::new), with the CPU backend's threads and SIMD level set (used when the CPU
    /// is chosen or falls back).
    ///
    /// # Errors
    /// [`Error::CpuOptions`] when the options cannot be met; as [`new`](Self::new).
    pub fn with_cpu_options(backend: Backend, options: CpuOptions) -> Result<Self> {
        let kernel = CpuKernel::new(options).map_err(Error::CpuOptions)?;
        match backend {
            Backend::Cpu => Ok(Self::cpu_kernel(kernel)),
            Backend::Gpu => Self::gpu(GpuContext::new()?, GpuLimits::default()),
            Backend::Auto => {
                let costs = AutoCosts::from_env().map_err(Error::AutoCosts)?;
                Ok(Self::auto(kernel, costs))
            }
        }
    }

    fn cpu_kernel(kernel: CpuKernel) -> Self {
        Self::on(Inner::Cpu { kernel })
    }

    /// A fresh engine on `inner`: nothing timed or fallen back yet, the default broad phase.
    fn on(inner: Inner) -> Self {
        Self {
            inner,
            kernel_time: None,
            gpu_call: None,
            last_fallback: None,
            broad_phase: BroadPhase::default(),
            used_grid: false,
            own_grid: Grid::default(),
            shape_grids: Default::default(),
            target_first: Default::default(),
            layer_first: Vec::new(),
            shapes_on_host: false,
            cancel: None,
            skipped: Skipped::default(),
            stand_ins: StandIns::default(),
            auto: None,
            preparing: Duration::ZERO,
        }
    }

    /// `Auto` with `costs`: on the CPU, until a call the model places on a GPU opens one.
    /// Only a hardware GPU is taken: a software one (lavapipe, WARP, SwiftShader) runs the same
    /// kernel slower than the CPU backend, unless [`AutoCosts::software_gpu`] (set when
    /// `WGPU_ADAPTER_NAME` names an adapter). On the GPU, a call the GPU cannot finish (a
    /// timeout, a lost device) runs on the CPU instead
    /// ([`with_cpu_fallback`](Self::with_cpu_fallback)).
    fn auto(kernel: CpuKernel, costs: AutoCosts) -> Self {
        let mut engine = Self::cpu_kernel(kernel);
        let mut auto = Auto::new(costs);
        if wgpu::Instance::enabled_backend_features().is_empty() {
            // Built without GPU backends: no call will open one, and the reason is known now.
            auto.refused = GpuContext::new().err().map(|e| e.to_string().into());
        }
        engine.auto = Some(Box::new(auto));
        engine
    }

    /// The threads of the engine's CPU kernel (on the GPU, its CPU fallback's; 0 without one).
    pub fn cpu_threads(&self) -> usize {
        match &self.inner {
            Inner::Cpu { kernel } => kernel.threads(),
            Inner::Gpu(host) => host.fallback.as_ref().map_or(0, CpuKernel::threads),
        }
    }

    /// `Auto`'s costs (`None` on an engine of another backend).
    pub fn auto_costs(&self) -> Option<&AutoCosts> {
        self.auto.as_ref().map(|auto| &auto.costs)
    }

    /// Sets `Auto`'s costs from the next call; nothing on an engine of another backend.
    pub fn set_auto_costs(&mut self, costs: AutoCosts) {
        if let Some(auto) = &mut self.auto {
            auto.costs = costs;
        }
    }

    /// Where `Auto` ran the last call and why: the model's estimates for both backends
    /// (`None` on an engine of another backend, and before the first call).
    pub fn last_choice(&self) -> Option<&Choice> {
        self.auto.as_ref().and_then(|auto| auto.last.as_ref())
    }

    /// Where `work` runs: where the engine runs, or for `Auto`, where the model places it,
    /// opening a GPU first when it says so (a GPU that cannot be opened, or a software one, is
    /// never tried again).
    fn place(&mut self, work: Work) -> Place {
        self.place_for(work, false)
    }

    /// [`place`](Self::place) for `work` that is `lasting` (see [`Auto::decide`]).
    fn place_for(&mut self, work: Work, lasting: bool) -> Place {
        let open = matches!(self.inner, Inner::Gpu(_));
        let threads = self.cpu_threads();
        let Some(auto) = &mut self.auto else {
            return if open { Place::Gpu } else { Place::Cpu };
        };
        match auto.decide(work, threads, open, lasting) {
            Decision::Cpu => Place::Cpu,
            Decision::Gpu => Place::Gpu,
            Decision::Open => match self.open_gpu() {
                Ok(()) => Place::Gpu,
                Err(why) => {
                    if let Some(auto) = &mut self.auto {
                        auto.refuse(why);
                    }
                    Place::Cpu
                }
            },
        }
    }

    /// Opens `Auto`'s GPU: the engine's CPU kernel becomes its fallback, and the wait limit
    /// and kernel timing set so far carry over. The error says why not.
    fn open_gpu(&mut self) -> std::result::Result<(), String> {
        let software = self.auto.as_ref().is_some_and(|a| a.costs.software_gpu);
        let context = GpuContext::new().map_err(|e| e.to_string())?;
        if context.is_software() && !software {
            return Err(format!(
                "the GPU found, {}, is a software one, slower than the CPU",
                context.adapter_info().name
            ));
        }
        let (wait, timing) = self
            .auto
            .as_ref()
            .map_or((None, false), |a| (a.wait, a.timing));
        let limits = GpuLimits {
            wait,
            ..GpuLimits::default()
        };
        let mut host = Self::gpu_host(context, limits).map_err(|e| e.to_string())?;
        host.queries.time_kernels(timing);
        host.timing = timing;
        if let Inner::Cpu { kernel, .. } = std::mem::replace(&mut self.inner, Inner::Gpu(host))
            && let Inner::Gpu(host) = &mut self.inner
        {
            host.fallback = Some(kernel);
            host.set_cancel(self.cancel.clone());
        }
        Ok(())
    }

    /// The CPU backend: the best SIMD level of this CPU, one thread per core.
    pub fn cpu() -> Self {
        Self::cpu_kernel(CpuKernel::default())
    }

    /// An engine on an existing GPU context (for instance a game's own device, see
    /// [`GpuContext::from_device`]), optionally with lower limits than the device's. It
    /// compiles the query kernels (first hit, hits, counts, clip); those of the dense and
    /// listed pairs, of the broad phase's grid and of each shape are compiled at the first call
    /// that needs them (a software driver takes seconds over each set; a first hit needs
    /// none of them).
    ///
    /// # Errors
    /// [`Error::Gpu`] if the query kernels fail to build on the device (the others' failures
    /// are their first call's errors).
    pub fn gpu(context: GpuContext, limits: GpuLimits) -> Result<Self> {
        Ok(Self::on(Inner::Gpu(Self::gpu_host(context, limits)?)))
    }

    /// The GPU host of [`gpu`](Self::gpu): the query kernels compiled, the others not yet.
    fn gpu_host(context: GpuContext, limits: GpuLimits) -> Result<Box<GpuHost>> {
        Ok(Box::new(GpuHost {
            pairs: None,
            queries: GpuRectQueries::new(context.clone(), limits)?,
            context,
            timing: false,
            cancel: None,
            shapes: HashMap::new(),
            limits,
            fallback: None,
            host_cpu: None,
            kernel_time: None,
            call: None,
            edges_on_host: 0,
            pid: std::process::id(),
        }))
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
        if let Some(auto) = &mut self.auto {
            auto.wait = Some(wait);
        }
        if let Inner::Gpu(host) = &mut self.inner {
            if let Some(pairs) = &mut host.pairs {
                pairs.set_wait(wait);
            }
            host.queries.set_wait(wait);
            host.limits.wait = Some(wait);
            for shape in host.shapes.values_mut() {
                shape.set_wait(wait);
            }
        }
    }

    /// Calls check `cancel` from now on (`None`: never): set, a call stops at its next chunk
    /// and returns [`Error::Cancelled`] (see [`Cancel`]); on the GPU, a wait for a chunk
    /// stops too, within 20 ms.
    pub fn set_cancel(&mut self, cancel: Option<Cancel>) {
        match &mut self.inner {
            Inner::Gpu(host) => host.set_cancel(cancel.clone()),
            Inner::Cpu { kernel, .. } => kernel.set_cancel(cancel.clone()),
        }
        self.cancel = cancel;
    }

    /// Whether the call in progress is cancelled: the token is set, or one of the engine's CPU
    /// kernels skipped a chunk since this was last asked (the token may have been reset since:
    /// the call's results are partial all the same). Asked before a call's work and after it.
    fn cancelled(&self) -> bool {
        let skipped = match &self.inner {
            Inner::Gpu(host) => host
                .fallback
                .iter()
                .chain(&host.host_cpu)
                .fold(false, |skipped, kernel| kernel.take_skipped() | skipped),
            Inner::Cpu { kernel, .. } => kernel.take_skipped(),
        };
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled) || skipped
    }

    /// [`run_uncancelled`](Self::run_uncancelled), checking the cancel token before and after
    /// (the CPU checks it between chunks too): a cancelled call's results are discarded.
    fn run<T>(&mut self, work: Work, call: impl FnMut(On) -> Result<T>) -> Result<T> {
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let place = self.place(work);
        self.run_placed(place, call)
    }

    /// [`run`](Self::run) where [`place`](Self::place) put the call.
    fn run_placed<T>(&mut self, place: Place, call: impl FnMut(On) -> Result<T>) -> Result<T> {
        let outcome = self.run_uncancelled(place, call);
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        outcome
    }

    /// Runs one call at `place`; on the GPU with a fallback, a timeout or a lost device runs
    /// it again on the CPU (`call` must then write every output afresh).
    fn run_uncancelled<T>(
        &mut self,
        place: Place,
        mut call: impl FnMut(On) -> Result<T>,
    ) -> Result<T> {
        self.last_fallback = None;
        self.kernel_time = None;
        self.gpu_call = None;
        // `Auto` on the GPU placed this call on its CPU (only `Auto` does, and its GPU engines
        // have their CPU kernel as the fallback).
        if place == Place::Cpu
            && let Inner::Gpu(host) = &mut self.inner
            && let Some(kernel) = &mut host.fallback
        {
            return call(On::Cpu(kernel));
        }
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
        family: Family,
        mut call: impl FnMut(On, Option<GridQuery>) -> Result<T>,
    ) -> Result<T> {
        let (segments, rects) = (batch.segments.len(), batch.rects.len());
        let use_grid = self
            .broad_phase
            .uses_grid(segments, rects, batch.rect_set.is_some());
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let place = self.place(Work::through(family, segments, rects, use_grid));
        let mut own = std::mem::take(&mut self.own_grid);
        let planning = std::time::Instant::now();
        if use_grid && batch.rect_set.is_none() {
            match self.cpu_at(place) {
                None => {
                    own.plan(batch.rects);
                }
                Some(kernel) => kernel.build_rect_grid(&mut own, batch.rects),
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
        let preparing = self.preparing + planning.elapsed();
        let mut used = false;
        let mut on_gpu = false;
        let outcome = self.run_placed(place, |on| {
            (used, on_gpu) = match on {
                On::Gpu(_) => (grid.is_some(), true),
                On::Cpu(_) => (grid.is_some_and(|g| g.plan.is_built()), false),
            };
            call(on, grid)
        });
        self.used_grid = match &self.inner {
            // The GPU may have run the brute force anyway (bindings too small, say).
            Inner::Gpu(host) if on_gpu && self.last_fallback.is_none() => {
                used && host.queries.used_grid()
            }
            _ => used,
        };
        if let Some(call) = &mut self.gpu_call {
            call.preparing += preparing;
        }
        self.own_grid = own;
        outcome
    }

    /// The CPU kernel a call placed at `place` runs on: `None` on the GPU.
    fn cpu_at(&mut self, place: Place) -> Option<&mut CpuKernel> {
        match (&mut self.inner, place) {
            (Inner::Cpu { kernel, .. }, _) => Some(kernel),
            (Inner::Gpu(_), Place::Gpu) => None,
            (Inner::Gpu(host), Place::Cpu) => host.fallback.as_mut(),
        }
    }

    /// What this engine runs on; for `Auto`, where its last call ran and why
    /// ([`last_choice`](Self::last_choice) has the model's estimates).
    pub fn chosen(&self) -> Chosen {
        let auto = self.auto.as_deref();
        match &self.inner {
            Inner::Gpu(host) => match (auto.and_then(|a| a.last.as_ref()), &host.fallback) {
                (Some(last), Some(kernel)) if !last.gpu => Chosen::Cpu {
                    kernel: kernel.to_string(),
                    reason: Some(last.to_string()),
                },
                _ => Chosen::Gpu(host.context.describe()),
            },
            Inner::Cpu { kernel } => Chosen::Cpu {
                kernel: kernel.to_string(),
                reason: auto.map(Auto::reason),
            },
        }
    }

    /// Times the GPU kernels with timestamp queries from now on (or stops); returns whether
    /// they can be timed: false on the CPU and on adapters without timestamp queries. Timing
    /// waits for each dispatch before its readback is recorded: for benchmarks, not games.
    pub fn time_gpu_kernels(&mut self, on: bool) -> bool {
        if let Some(auto) = &mut self.auto {
            auto.timing = on;
        }
        match &mut self.inner {
            Inner::Gpu(gpu) => {
                gpu.timing = on;
                let pairs = gpu.pairs.as_mut().is_none_or(|p| p.time_kernels(on));
                let shapes = gpu
                    .shapes
                    .values_mut()
                    .fold(true, |all, host| host.time_kernels(on) & all);
                pairs & shapes & gpu.queries.time_kernels(on)
            }
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
    /// and readbacks overlap. `None` on the CPU, and for a call that ran there. A call over a
    /// scene of mixed targets ([`crate::Targets`]) reports every kind's GPU call summed, and
    /// in [`GpuCall::on_host`] what the host answered itself (the shapes' first hits, the
    /// merge); its [`gpu_kernel_time`](Self::gpu_kernel_time) is its kinds' summed.
    pub fn last_gpu_call(&self) -> Option<GpuCall> {
        self.gpu_call
    }

    /// The GPU context, when on the GPU.
    pub fn gpu_context(&self) -> Option<&GpuContext> {
        match &self.inner {
            Inner::Gpu(gpu) => Some(&gpu.context),
            Inner::Cpu { .. } => None,
        }
    }

    /// Pairs the GPU kernel could not decide with certainty since this engine was created; the
    /// host re-decided each exactly before returning it, so results never show them. Always 0 on
    /// the CPU, which makes the same exact decisions inline. A measure of cost, not of accuracy:
    /// on random scenes it is about zero; exact ties (a line through a corner) always count.
    /// Polygons count their edge pairs whose values span more binary orders than the kernel's
    /// narrow integers reach.
    pub fn uncertain_pairs(&self) -> u64 {
        match &self.inner {
            Inner::Gpu(gpu) => {
                let pairs = gpu.pairs.as_ref().map_or(0, |p| p.uncertain_pairs());
                pairs + gpu.queries.uncertain_pairs() + gpu.edges_on_host
            }
            Inner::Cpu { .. } => 0,
        }
    }

    /// Bytes of GPU memory this engine holds between calls (0 on the CPU). Buffers grow only
    /// when a batch needs more than any before.
    pub fn gpu_buffer_bytes(&self) -> u64 {
        match &self.inner {
            Inner::Gpu(gpu) => {
                let pairs = gpu.pairs.as_ref().map_or(0, |p| p.buffer_bytes());
                pairs + gpu.queries.buffer_bytes()
            }
            Inner::Cpu { .. } => 0,
        }
    }
}
