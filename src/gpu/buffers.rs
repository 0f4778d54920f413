//! Buffers and binding helpers shared by the kernels' hosts.

use super::chunks::DenseChunk;
use super::context::GpuContext;
use std::ops::Range;
use std::time::Duration;

use crate::error::{Error, Result};

/// A buffer that only grows.
pub(crate) struct Growable {
    label: &'static str,
    usage: wgpu::BufferUsages,
    pub(crate) buffer: Option<wgpu::Buffer>,
}

impl Growable {
    pub(crate) fn new(label: &'static str, usage: wgpu::BufferUsages) -> Self {
        Self {
            label,
            usage,
            buffer: None,
        }
    }

    /// Makes room for `bytes`; returns true when the buffer was replaced (bind groups go stale).
    pub(crate) fn reserve(&mut self, device: &wgpu::Device, bytes: u64, cap: u64) -> bool {
        // Bindings may not be empty, and copies move whole 4-byte words.
        let bytes = bytes.max(16).next_multiple_of(16);
        if self.buffer.as_ref().is_some_and(|b| b.size() >= bytes) {
            return false;
        }
        // Double so that a slowly growing batch does not reallocate every call.
        let old = self.buffer.as_ref().map_or(0, |b| b.size());
        let size = bytes.max(old.saturating_mul(2)).min(cap.max(bytes));
        self.buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(self.label),
            size,
            usage: self.usage,
            mapped_at_creation: false,
        }));
        true
    }

    pub(crate) fn get(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("reserved before use")
    }
}

pub(crate) fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// Which tile's inputs the input buffers hold, so that a tile uploads only what changed: with
/// every target in one tile, the targets go up once per call.
#[derive(Default)]
pub(crate) struct Uploaded {
    segments: Range<usize>,
    targets: Range<usize>,
}

impl Uploaded {
    /// Writes `tile`'s segments and targets to the start of their buffers, each unless the
    /// buffer holds them already; true when the targets went up.
    pub(crate) fn upload<S: bytemuck::Pod, T: bytemuck::Pod>(
        &mut self,
        queue: &wgpu::Queue,
        tile: &DenseChunk,
        (segment_buffer, segments): (&wgpu::Buffer, &[S]),
        (target_buffer, targets): (&wgpu::Buffer, &[T]),
    ) -> bool {
        if self.segments != tile.segments {
            let segments = &segments[tile.segments.clone()];
            queue.write_buffer(segment_buffer, 0, bytemuck::cast_slice(segments));
            self.segments = tile.segments.clone();
        }
        let new_targets = self.targets != tile.targets;
        if new_targets {
            let targets = &targets[tile.targets.clone()];
            queue.write_buffer(target_buffer, 0, bytemuck::cast_slice(targets));
            self.targets = tile.targets.clone();
        }
        new_targets
    }
}

/// One bind group's buffers, named once each: [`grow`](Self::grow) makes room in a
/// [`Growable`] and binds it, [`bind`](Self::bind) binds a buffer that does not grow, and
/// [`build`](Self::build) remakes the group only when a buffer was replaced or none was built.
pub(crate) struct Binder<'a> {
    device: &'a wgpu::Device,
    cap: u64,
    stale: bool,
    entries: Vec<wgpu::BindGroupEntry<'a>>,
}

impl<'a> Binder<'a> {
    /// Buffers grow to at most `cap` bytes (the device's largest binding); `group` is the bind
    /// group built last time, if any.
    pub(crate) fn new(device: &'a wgpu::Device, cap: u64, group: &Option<wgpu::BindGroup>) -> Self {
        Self {
            device,
            cap,
            stale: group.is_none(),
            entries: Vec::with_capacity(16),
        }
    }

    /// Makes room for `bytes` in `buffer` and binds it at `binding`.
    pub(crate) fn grow(mut self, binding: u32, buffer: &'a mut Growable, bytes: u64) -> Self {
        self.stale |= buffer.reserve(self.device, bytes, self.cap);
        let buffer: &'a Growable = buffer;
        self.entries.push(entry(binding, buffer.get()));
        self
    }

    /// Binds `buffer` at `binding`.
    pub(crate) fn bind(mut self, binding: u32, buffer: &'a wgpu::Buffer) -> Self {
        self.entries.push(entry(binding, buffer));
        self
    }

    /// Remakes `group` if a buffer was replaced (or it was never built); true when it did, for
    /// then the buffers' contents are gone and other groups naming them are stale too.
    pub(crate) fn build(
        self,
        label: &str,
        layout: &wgpu::BindGroupLayout,
        group: &mut Option<wgpu::BindGroup>,
    ) -> bool {
        if self.stale {
            *group = Some(self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout,
                entries: &self.entries,
            }));
        }
        self.stale
    }
}

/// The compute pipeline of `module`'s `entry_point`, specialised with `constants`, through the
/// context's pipeline cache where it keeps one. Workgroup memory is not zeroed: every rectcast
/// kernel writes what it reads there first (a tile before the barrier that precedes its reads).
pub(crate) fn compute_pipeline(
    context: &super::GpuContext,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    entry_point: &str,
    label: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    context.count_pipeline();
    context
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(layout),
            module,
            entry_point: Some(entry_point),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                zero_initialize_workgroup_memory: false,
            },
            cache: context.pipeline_cache(),
        })
}

/// What a wait is for, how long it may take, and the call's cancel token, if any: a wait then
/// polls in slices of [`CANCEL_SLICE`], and ends with [`Error::Cancelled`] once it is set.
#[derive(Clone, Debug)]
pub(crate) struct Wait {
    /// The step, in the caller's words ("the first-hit readback").
    pub step: &'static str,
    pub limit: Duration,
    pub cancel: Option<crate::Cancel>,
}

/// How often a wait with a cancel token looks at it.
pub(crate) const CANCEL_SLICE: Duration = Duration::from_millis(20);

/// The cancel setter of a GPU host whose field `cancel: Option<Cancel>` its chunk ring and its
/// waits look at.
macro_rules! cancel_setter {
    () => {
        /// Calls stop with [`crate::Error::Cancelled`] before their next chunk, and their waits
        /// within 20 ms, once `cancel` is set (`None`: never).
        pub fn set_cancel(&mut self, cancel: Option<crate::Cancel>) {
            self.cancel = cancel;
        }
    };
}
pub(crate) use cancel_setter;

impl Wait {
    /// Polls `context` until `submission` is done, at most the limit (then
    /// [`Error::Timeout`]), or until the cancel token is set ([`Error::Cancelled`]).
    pub(crate) fn poll(
        &self,
        context: &GpuContext,
        submission: wgpu::SubmissionIndex,
    ) -> Result<()> {
        let deadline = std::time::Instant::now() + self.limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let slice = match self.cancel {
                Some(_) => left.min(CANCEL_SLICE),
                None => left,
            };
            match context.device.poll(wgpu::PollType::Wait {
                submission_index: Some(submission.clone()),
                timeout: Some(slice),
            }) {
                Err(wgpu::PollError::Timeout) => {
                    if self
                        .cancel
                        .as_ref()
                        .is_some_and(crate::Cancel::is_cancelled)
                    {
                        return Err(Error::Cancelled);
                    }
                    if slice >= left {
                        return Err(Error::Timeout {
                            step: self.step,
                            waited: self.limit,
                        });
                    }
                }
                other => return other.map(|_| ()).map_err(Error::from),
            }
        }
    }
}

/// Maps the first `bytes` of `staging` once `submission` has run, hands them to `read`, and
/// unmaps, on every path. Past `wait.limit` it gives up with [`Error::Timeout`] and cancels the
/// map, so the buffer can be used again.
pub(crate) fn read_back(
    context: &GpuContext,
    staging: &wgpu::Buffer,
    submission: wgpu::SubmissionIndex,
    bytes: u64,
    wait: Wait,
    read: impl FnOnce(&[u8]),
) -> Result<()> {
    // In a scope too: on a caller's device, a failure here must not reach its handler.
    let pending = context.scoped(|| Ok(PendingRead::start(staging, bytes)))?;
    pending.finish(context, staging, submission, wait, read)
}

/// A map of a staging buffer's first bytes, asked for right after the submission that fills
/// it: the GPU may then go on with later submissions while the host reads earlier ones. Every
/// pending read ends in [`finish`](Self::finish) or [`cancel`](Self::cancel), which leave the
/// buffer unmapped.
pub(crate) struct PendingRead {
    bytes: u64,
    mapped: std::sync::mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
}

impl PendingRead {
    /// Asks for the map (on the caller's device, inside its error scope).
    pub(crate) fn start(staging: &wgpu::Buffer, bytes: u64) -> Self {
        let (sender, receiver) = std::sync::mpsc::channel();
        staging
            .slice(..bytes)
            .map_async(wgpu::MapMode::Read, move |result| {
                // The receiver is read in finish; a failed send only means we already bailed.
                let _ = sender.send(result);
            });
        Self {
            bytes,
            mapped: receiver,
        }
    }

    /// The bytes it maps.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Waits for `submission` (at most `wait.limit`), hands the mapped bytes to `read`, and
    /// unmaps. Past the limit it gives up with [`Error::Timeout`] and cancels the map.
    pub(crate) fn finish(
        self,
        context: &GpuContext,
        staging: &wgpu::Buffer,
        submission: wgpu::SubmissionIndex,
        wait: Wait,
        read: impl FnOnce(&[u8]),
    ) -> Result<()> {
        let waited = context.scoped(|| wait.poll(context, submission));
        // After a completed wait the callback has run or is about to; if it mapped the buffer,
        // unmap it on every path below, or every later call would fail on a mapped buffer.
        // After a timeout (or a cancel) the map is still pending: unmapping cancels it.
        let mapped = match waited {
            Ok(()) => self.callback(context, wait.limit),
            Err(_) => self.mapped.try_recv().ok(),
        };
        // Only a map that failed left nothing to unmap or cancel.
        let map_failed = matches!(mapped, Some(Err(_)));
        let outcome = waited.and_then(|()| {
            mapped.ok_or_else(|| Error::Gpu("the buffer map callback never ran".into()))??;
            // The view borrows the mapping: it is dropped inside the closure, before unmap.
            staging
                .slice(..self.bytes)
                .get_mapped_range()
                .map(|view| read(&view))
                // Mapped, and yet unreadable: the buffer's device is gone (destroyed or lost,
                // before its lost callback ran), which a CPU fallback answers.
                .map_err(|e| {
                    context.lost().unwrap_or_else(|| {
                        Error::DeviceLost(format!(
                            "{}: the mapped results are unreadable: {e}",
                            wait.step
                        ))
                    })
                })
        });
        match &outcome {
            // Read: the common path, with no error scope to pay for on rectcast's own device.
            Ok(()) => context.unmap_read(staging),
            // A read of a mapped buffer whose device was lost meanwhile, or a map still
            // pending (a timeout, or a callback that did not come within the limit after
            // its submission was done): unmapped, or cancelled, in a scope
            // ([`GpuContext::unmap_scoped`]), so that the next read can map the buffer.
            Err(_) if !map_failed => context.unmap_scoped(staging),
            Err(_) => {}
        }
        outcome
    }

    /// The map's outcome, once its submission is done. The callback runs on whichever thread
    /// polls the device: on a context that engines share across threads, another thread's
    /// poll may have taken this submission's callback and be about to run it when this one's
    /// wait returns. So it waits for the callback too, polling, at most `limit`.
    fn callback(
        &self,
        context: &GpuContext,
        limit: Duration,
    ) -> Option<std::result::Result<(), wgpu::BufferAsyncError>> {
        use std::sync::mpsc::RecvTimeoutError;
        let deadline = std::time::Instant::now() + limit;
        loop {
            match self.mapped.recv_timeout(Duration::from_millis(1)) {
                Ok(outcome) => return Some(outcome),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) if std::time::Instant::now() >= deadline => {
                    return None;
                }
                Err(RecvTimeoutError::Timeout) => {
                    let _ = context.device.poll(wgpu::PollType::Poll);
                }
            }
        }
    }

    /// Gives the read up: cancels the map if it is still pending, unmaps it if it is done. It
    /// runs after an error, the device's loss among them, so in a scope.
    pub(crate) fn cancel(self, context: &GpuContext, staging: &wgpu::Buffer) {
        context.unmap_scoped(staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device of the test's own, as a game brings one: no uncaptured-error handler set, so
    /// an error outside a scope panics. `None` where no adapter opens, unless the suite
    /// requires a GPU.
    fn games_device() -> Option<(GpuContext, wgpu::Device)> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&Default::default()));
        let adapter = match adapter {
            Ok(adapter) => adapter,
            Err(e) if std::env::var("RECTCAST_REQUIRE_GPU").as_deref() == Ok("1") => {
                panic!("RECTCAST_REQUIRE_GPU=1 but no adapter opened: {e}")
            }
            Err(_) => return None,
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: GpuContext::required_limits(),
            ..Default::default()
        }))
        .expect("a device");
        let context =
            GpuContext::from_device(device.clone(), queue, adapter.get_info()).expect("a context");
        Some((context, device))
    }

    /// A staging buffer of the caller's own device (`MAP_READ`), 256 bytes, whose map is asked
    /// for after an empty submission and done.
    fn mapped_read(
        context: &GpuContext,
        device: &wgpu::Device,
    ) -> (wgpu::Buffer, PendingRead, wgpu::SubmissionIndex) {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: 256,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let submission = context.queue.submit(std::iter::empty());
        let pending = context
            .scoped(|| Ok(PendingRead::start(&staging, 256)))
            .unwrap();
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        (staging, pending, submission)
    }

    /// A submission that keeps the GPU busy for a while (0.4 s on lavapipe here): many
    /// invocations, each looping within a software GPU's loop budget.
    fn busy_submission(device: &wgpu::Device, queue: &wgpu::Queue) -> wgpu::SubmissionIndex {
        const BUSY: &str = "
            @group(0) @binding(0) var<storage, read_write> state: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                var x = id.x | 1u;
                for (var i = 0u; i < 20000u; i++) {
                    x ^= x << 13u;
                    x ^= x >> 17u;
                    x ^= x << 5u;
                }
                state[id.x] = x;
            }";
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("busy"),
            source: wgpu::ShaderSource::Wgsl(BUSY.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("busy"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        const INVOCATIONS: u64 = 1 << 17;
        let state = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("busy.state"),
            size: INVOCATIONS * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("busy"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: state.as_entire_binding(),
            }],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups((INVOCATIONS / 64) as u32, 1, 1);
        }
        queue.submit([encoder.finish()])
    }

    /// A wait whose cancel token is set stops within a slice of it, not when a long submission
    /// ends, and gives its map up: the buffer maps again after.
    #[test]
    fn a_cancelled_wait_stops_before_its_submission_ends_and_gives_its_map_up() {
        let Some((context, device)) = games_device() else {
            return;
        };
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: 256,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // How long the busy work takes alone.
        let started = std::time::Instant::now();
        let alone = busy_submission(&device, &context.queue);
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(alone),
                timeout: None,
            })
            .unwrap();
        let whole = started.elapsed();
        let cancel = crate::Cancel::new();
        let submission = busy_submission(&device, &context.queue);
        let pending = context
            .scoped(|| Ok(PendingRead::start(&staging, 256)))
            .unwrap();
        let wait = Wait {
            step: "the test's readback",
            limit: Duration::from_secs(60),
            cancel: Some(cancel.clone()),
        };
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(10));
                cancel.cancel();
            })
        };
        let started = std::time::Instant::now();
        let read = pending.finish(&context, &staging, submission, wait, |_| {
            panic!("a cancelled wait read")
        });
        let stopped = started.elapsed();
        canceller.join().unwrap();
        assert!(matches!(read, Err(Error::Cancelled)), "{read:?}");
        assert!(
            stopped < whole / 2 && stopped < CANCEL_SLICE * 10,
            "stopped after {stopped:?}; the work takes {whole:?}"
        );
        device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
        let submission = context.queue.submit(std::iter::empty());
        let pending = context
            .scoped(|| Ok(PendingRead::start(&staging, 256)))
            .unwrap();
        let wait = Wait {
            step: "the test's readback",
            limit: Duration::from_secs(5),
            cancel: None,
        };
        let mut seen = 0;
        pending
            .finish(&context, &staging, submission, wait, |bytes| {
                seen = bytes.len()
            })
            .unwrap();
        assert_eq!(seen, 256);
    }

    /// A chunk's read finished after its device was lost, its map done before: the mapped
    /// bytes are unreadable, which is a lost device (a CPU fallback answers it), and the
    /// unmap, which fails on the dead device, must not reach the game's missing handler.
    #[test]
    fn a_read_finished_on_a_games_lost_device_is_device_lost_and_does_not_panic() {
        let Some((context, device)) = games_device() else {
            return;
        };
        let (staging, pending, submission) = mapped_read(&context, &device);
        device.destroy();
        let wait = Wait {
            step: "the test's readback",
            limit: Duration::from_secs(5),
            cancel: None,
        };
        let read = pending.finish(&context, &staging, submission, wait, |_| {
            panic!("a lost device's buffer read")
        });
        assert!(matches!(read, Err(Error::DeviceLost(_))), "{read:?}");
    }

    /// The device is lost while the game's read is under way, after the bytes were read: the
    /// read stands, and the unmap that follows, which fails on the dead device, must not reach
    /// the game's missing handler either.
    #[test]
    fn a_games_device_lost_during_a_read_keeps_the_read_and_does_not_panic() {
        let Some((context, device)) = games_device() else {
            return;
        };
        let (staging, pending, submission) = mapped_read(&context, &device);
        let wait = Wait {
            step: "the test's readback",
            limit: Duration::from_secs(5),
            cancel: None,
        };
        let mut seen = 0;
        let read = pending.finish(&context, &staging, submission, wait, |bytes| {
            seen = bytes.len();
            device.destroy();
            // The loss as another thread's poll would process it, before the unmap.
            let _ = device.poll(wgpu::PollType::Poll);
        });
        assert!(read.is_ok(), "{read:?}");
        assert_eq!(seen, 256);
    }
}
