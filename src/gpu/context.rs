//! The GPU context: adapter, device and queue, with wgpu's errors turned into [`Error`]s.

use std::sync::{Arc, Mutex};

use super::compiled::Compiled;
use super::emulation::Emulation;
use super::pipeline_cache::PipelineStore;
use crate::error::{Error, LimitShortfall, Result};

/// A wgpu device and queue that rectcast runs on. Build it once and share it (it is cheap to
/// clone): from a new adapter with [`GpuContext::new`], or from a game's own device with
/// [`GpuContext::from_device`]. Engines on one context, in one thread or several, share the
/// kernels compiled on it (compiling is most of an engine's start: about 20 s for a shape's
/// kernels on lavapipe); each keeps its own buffers.
#[derive(Clone, Debug)]
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    /// Errors wgpu raised outside any error scope (uncaptured), and a lost device, noted by the
    /// callbacks installed in [`GpuContext::new`] and turned into errors by [`GpuContext::check`].
    faults: Arc<Mutex<Vec<Error>>>,
    /// The float arithmetic the kernels emulate (tests only; `Native` otherwise).
    emulation: Emulation,
    /// The kernels compiled on this device, shared by every engine on it.
    compiled: Compiled,
    /// Whether rectcast installed the device's uncaptured-error handler ([`GpuContext::new`]);
    /// not on a caller's device, where an error outside a scope may panic.
    handles_errors: bool,
    /// The compiled pipelines kept between processes, where the device keeps them.
    pipelines: Option<Arc<PipelineStore>>,
    /// Compute pipelines built on this context ([`GpuContext::pipeline_compilations`]).
    pipeline_builds: Arc<std::sync::atomic::AtomicUsize>,
}

/// One adapter as [`enumerate_adapters`] reports it.
#[derive(Clone, Debug)]
pub struct AdapterReport {
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
}

/// A wgpu instance, honouring WGPU_BACKEND (and wgpu's other instance variables); an error in a
/// build without GPU backends, where wgpu would panic.
fn instance() -> Result<wgpu::Instance> {
    if wgpu::Instance::enabled_backend_features().is_empty() {
        return Err(Error::NoAdapter(NO_BACKENDS.into()));
    }
    Ok(wgpu::Instance::new(
        wgpu::InstanceDescriptor::new_without_display_handle_from_env(),
    ))
}

/// Every adapter wgpu can see (honouring `WGPU_BACKEND`); none in a build without GPU backends.
pub fn enumerate_adapters() -> Vec<AdapterReport> {
    let Ok(instance) = instance() else {
        return Vec::new();
    };
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .map(|a| AdapterReport {
            info: a.get_info(),
            limits: a.limits(),
        })
        .collect()
}

/// Why no adapter opens where no driver is installed.
const NO_DRIVER: &str = if cfg!(target_os = "linux") {
    "no Vulkan driver found; on Debian or Ubuntu: apt-get install mesa-vulkan-drivers"
} else {
    "no Vulkan, Metal or DX12 driver found"
};

/// Why no adapter opens in a build without GPU backends.
const NO_BACKENDS: &str = "rectcast was built without GPU backends (default-features = false): \
     enable its `vulkan`, `metal` or `dx12` feature";

/// The limits of `device` below `required`, each named.
fn shortfalls(required: &wgpu::Limits, device: &wgpu::Limits) -> Vec<LimitShortfall> {
    let mut short = Vec::new();
    required.check_limits_with_fail_fn(device, false, |limit, needs, got| {
        short.push(LimitShortfall { limit, needs, got });
    });
    short
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

fn choose_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter> {
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let wanted_lower = wanted.to_lowercase();
        let names: Vec<String> = adapters.iter().map(|a| describe(&a.get_info())).collect();
        return adapters
            .into_iter()
            .find(|a| a.get_info().name.to_lowercase().contains(&wanted_lower))
            .ok_or_else(|| {
                Error::NoAdapter(format!(
                    "WGPU_ADAPTER_NAME={wanted:?} matches none of [{}]",
                    names.join(", ")
                ))
            });
    }
    let options = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::from_env()
            .unwrap_or(wgpu::PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
        ..Default::default()
    };
    if adapters.is_empty() {
        // wgpu's own message lists every backend it lacks, in one long line; this is what it
        // comes to.
        return Err(Error::NoAdapter(NO_DRIVER.into()));
    }
    pollster::block_on(instance.request_adapter(&options))
        .map_err(|e| Error::NoAdapter(e.to_string()))
}

/// wgpu's message ("Validation Error\n\nCaused by:\n  In …") folded onto one line.
fn full_message(error: &wgpu::Error) -> String {
    let text = error.to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

fn to_error(error: wgpu::Error) -> Error {
    match error {
        wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory(full_message(&error)),
        _ => Error::Gpu(full_message(&error)),
    }
}

impl GpuContext {
    /// Opens an adapter (honouring `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and
    /// `WGPU_POWER_PREF`) and a device with the adapter's real limits.
    ///
    /// Its kernels emulate the arithmetic `RECTCAST_GPU_EMULATION` names, if any (tests only:
    /// see [`Emulation`]).
    ///
    /// # Errors
    /// [`Error::NoAdapter`] when no adapter matches; [`Error::DeviceLimits`] when its limits are
    /// below [`required_limits`](Self::required_limits); [`Error::RequestDevice`] when the
    /// adapter refuses a device; [`Error::Gpu`] for an unknown `RECTCAST_GPU_EMULATION`.
    pub fn new() -> Result<Self> {
        let emulation = Emulation::from_env()?;
        let instance = instance()?;
        let adapter = choose_adapter(&instance)?;
        let short = shortfalls(&Self::required_limits(), &adapter.limits());
        if !short.is_empty() {
            return Err(Error::DeviceLimits(short));
        }
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("rectcast.device"),
            // Timestamps time the kernels for benchmarks (`Engine::time_gpu_kernels`); a
            // pipeline cache keeps compiled kernels between processes.
            required_features: adapter.features()
                & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::PIPELINE_CACHE),
            // The adapter's real limits, not wgpu's conservative defaults: bigger bindings mean
            // fewer chunks.
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))?;
        let mut context = Self::wrap(device, queue, adapter.get_info()).with_emulation(emulation);
        context.handles_errors = true;
        // wgpu's default handler panics; ours records the error for the call in flight. Only for
        // devices we own: a game's own device keeps its own handler.
        let faults = context.faults.clone();
        context
            .device
            .on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
                faults
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(to_error(error));
            }));
        let faults = context.faults.clone();
        context
            .device
            .set_device_lost_callback(move |reason, message| {
                faults
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Error::DeviceLost(format!("{reason:?}: {message}")));
            });
        Ok(context)
    }

    /// Runs on a device the caller already has (a game's renderer). rectcast records its work
    /// inside error scopes, so the caller's uncaptured-error handler and device-lost callback
    /// are left alone.
    ///
    /// The device must have been requested with at least
    /// [`required_limits`](Self::required_limits) (WebGPU's defaults meet them); with
    /// [`grid_limits`](Self::grid_limits) the broad phase runs on the GPU too. Bigger binding
    /// limits mean fewer chunks. The device is checked here, before any kernel is built.
    ///
    /// # Errors
    /// [`Error::DeviceLimits`] naming every limit below
    /// [`required_limits`](Self::required_limits), what it needs and what the device has.
    pub fn from_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
    ) -> Result<Self> {
        let short = shortfalls(&Self::required_limits(), &device.limits());
        if short.is_empty() {
            Ok(Self::wrap(device, queue, info))
        } else {
            Err(Error::DeviceLimits(short))
        }
    }

    /// The limits a device needs for every rectcast kernel: request a device with at least
    /// these (`wgpu::DeviceDescriptor::required_limits`, each raised to your own needs), and
    /// pass it to [`from_device`](Self::from_device). They are counted from the kernels' own
    /// bind group layouts:
    ///
    /// - 8 storage buffers per shader stage (the rect queries bind 8), 1 uniform buffer, 1 bind
    ///   group, 14 bindings per group (a shape's reductions bind at 13);
    /// - workgroups of 64 invocations along x, 16,352 bytes of workgroup memory (wgpu's
    ///   downlevel figure), and WebGPU's default binding and buffer sizes (larger ones mean
    ///   fewer chunks).
    ///
    /// So WebGPU's default limits (`wgpu::Limits::default()`) meet them, and
    /// `wgpu::Limits::downlevel_defaults()` (4 storage buffers) does not. The limits rectcast
    /// does not use (textures, vertex buffers) are `wgpu::Limits::downlevel_webgl2_defaults()`'s,
    /// the lowest wgpu knows.
    pub fn required_limits() -> wgpu::Limits {
        super::layouts::required_limits()
    }

    /// [`required_limits`](Self::required_limits), raised to what the GPU broad phase binds: 15
    /// storage buffers per stage and 2 bind groups (its walk binds the queries' group and its
    /// own). On a device below these, GPU queries test every rect instead of walking a grid:
    /// the same bytes, slower on large scenes (and [`crate::Engine::used_broad_phase`] says
    /// false). Most desktop GPUs allow them; WebGPU's defaults (8 storage buffers) do not.
    pub fn grid_limits() -> wgpu::Limits {
        super::layouts::grid_limits()
    }

    fn wrap(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Self {
        let pipelines = device
            .features()
            .contains(wgpu::Features::PIPELINE_CACHE)
            .then(|| PipelineStore::open(&device, &info))
            .flatten()
            .map(Arc::new);
        Self {
            device,
            queue,
            info,
            faults: Arc::default(),
            emulation: Emulation::Native,
            compiled: Compiled::default(),
            handles_errors: false,
            pipelines,
            pipeline_builds: Arc::default(),
        }
    }

    /// The file this context keeps compiled kernels in between processes, where it keeps them:
    /// a device with `wgpu::Features::PIPELINE_CACHE` (Vulkan), a cache directory known
    /// (`RECTCAST_CACHE_DIR`, else the user's), and `RECTCAST_PIPELINE_CACHE` not `off`. A
    /// corrupt or mismatched file is ignored and written anew; deleting it is safe.
    pub fn pipeline_cache_file(&self) -> Option<&std::path::Path> {
        self.pipelines.as_deref().map(PipelineStore::path)
    }

    /// How many compute pipelines have been built on this context (and its clones): each
    /// kernel set's at the first call that dispatches it (a first hit builds one of the rect
    /// queries' six).
    pub fn pipeline_compilations(&self) -> usize {
        self.pipeline_builds
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts a compute pipeline built.
    pub(crate) fn count_pipeline(&self) {
        self.pipeline_builds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Keeps the pipelines built since the last save in the pipeline cache's file (after a
    /// pipeline built outside [`compiled`](Self::compiled)'s sets).
    pub(crate) fn pipelines_built(&self) {
        if let Some(pipelines) = &self.pipelines {
            pipelines.save();
        }
    }

    /// The pipeline cache kernels are compiled through.
    pub(crate) fn pipeline_cache(&self) -> Option<&wgpu::PipelineCache> {
        self.pipelines.as_deref().map(|p| &p.cache)
    }

    /// Test-only: kernels built on this context from now on emulate `emulation`'s float
    /// arithmetic (see [`Emulation`]).
    pub fn with_emulation(mut self, emulation: Emulation) -> Self {
        self.emulation = emulation;
        self
    }

    /// The float arithmetic this context's kernels emulate.
    pub fn emulation(&self) -> Emulation {
        self.emulation
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }
    /// The limits the device was created with.
    pub fn limits(&self) -> wgpu::Limits {
        self.device.limits()
    }

    /// Whether the adapter is a CPU implementation (lavapipe/llvmpipe, WARP, SwiftShader).
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// A line naming the adapter: `NVIDIA H100 (Vulkan, DiscreteGpu)`.
    /// With a test-only emulation, it is named too: `… emulating flush`.
    pub fn describe(&self) -> String {
        match self.emulation {
            Emulation::Native => describe(&self.info),
            other => format!("{} emulating {other}", describe(&self.info)),
        }
    }

    /// The kernel set `Tag` names (its layouts and pipelines), compiled by `build` once per
    /// device and emulation and shared by every engine on the device: see [`Compiled`].
    pub(crate) fn compiled<Tag: 'static, T: Clone + Send + Sync + 'static>(
        &self,
        build: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let before = self.compiled.builds();
        let built = self.compiled.get_or_build::<Tag, T>(self.emulation, build);
        if built.is_ok() && self.compiled.builds() != before {
            self.pipelines_built();
        }
        built
    }

    /// How many kernel sets (a shape's, the rect queries', …) have been compiled on this
    /// device. Engines on one context share them: a second engine compiles nothing its
    /// kernels need that an earlier one compiled, under the same emulation.
    pub fn kernel_compilations(&self) -> usize {
        self.compiled.builds()
    }

    /// Runs `record` inside validation and out-of-memory error scopes and returns the first
    /// error any of them, the uncaptured handler or the device-lost callback saw.
    pub(crate) fn scoped<T>(&self, record: impl FnOnce() -> Result<T>) -> Result<T> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let value = record();
        // Pop in reverse order of pushing, always, so the stack stays balanced on errors too.
        let internal = pollster::block_on(internal.pop());
        let validation = pollster::block_on(validation.pop());
        let oom = pollster::block_on(oom.pop());
        self.check()?;
        match oom.or(validation).or(internal) {
            Some(e) => Err(to_error(e)),
            None => value,
        }
    }

    /// Unmaps `buffer` inside an error scope, on the paths where its map may have failed or
    /// its device be lost: an error of the unmap must not reach a handler that the owner of a
    /// device brought with [`from_device`](Self::from_device) may not have set, which panics.
    pub(crate) fn unmap_scoped(&self, buffer: &wgpu::Buffer) {
        let _ = self.scoped(|| {
            buffer.unmap();
            Ok(())
        });
    }

    /// Unmaps `buffer` after its bytes were read. On a device rectcast opened, directly: its
    /// handler records an error. On a caller's device in a scope, as
    /// [`unmap_scoped`](Self::unmap_scoped) does, since the device may have been lost during
    /// the read and the unmap's error must not reach a handler the caller may not have set.
    pub(crate) fn unmap_read(&self, buffer: &wgpu::Buffer) {
        if self.handles_errors {
            buffer.unmap();
        } else {
            self.unmap_scoped(buffer);
        }
    }

    /// [`Error::DeviceLost`] once the device-lost callback has fired (the other faults are
    /// left for [`check`](Self::check) to return).
    pub(crate) fn lost(&self) -> Option<Error> {
        let faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        faults.iter().find_map(|e| match e {
            Error::DeviceLost(message) => Some(Error::DeviceLost(message.clone())),
            _ => None,
        })
    }

    /// Returns a fault recorded by the callbacks: a lost device every time from then on,
    /// other errors once.
    pub(crate) fn check(&self) -> Result<()> {
        let mut faults = self.faults.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(Error::DeviceLost(message)) =
            faults.iter().find(|e| matches!(e, Error::DeviceLost(_)))
        {
            return Err(Error::DeviceLost(message.clone()));
        }
        match faults.drain(..).next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
