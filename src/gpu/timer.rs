//! A kernel's own GPU time, from timestamp queries around each of its compute passes, where the
//! adapter has them (`wgpu::Features::TIMESTAMP_QUERY`; rectcast's own devices request it). Off
//! until asked for: reading the timestamps back costs a wait per submission.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::buffers::{Wait, read_back};
use super::context::GpuContext;
use crate::error::Result;

/// The public wait and kernel-timing setters of a host whose fields are `wait: WaitLimit` and
/// `timer: Option<KernelTimer>` (the rect pairs' and the rect queries').
macro_rules! wait_and_timing {
    () => {
        /// How long each chunk may take from now on.
        pub fn set_wait(&mut self, wait: crate::gpu::limits::WaitLimit) {
            self.wait = wait;
        }

        crate::gpu::timer::kernel_timing!();
    };
}
pub(crate) use wait_and_timing;

/// The public kernel-timing setters of a host whose field `timer: Option<KernelTimer>` times
/// its passes.
macro_rules! kernel_timing {
    () => {
        /// Turns kernel timing on or off; false when the device has no timestamp queries.
        pub fn time_kernels(&mut self, on: bool) -> bool {
            self.timer.as_mut().map(|t| t.set_enabled(on)).is_some()
        }

        /// The kernel time of the last call, when timing is on.
        pub fn kernel_time(&self) -> Option<std::time::Duration> {
            self.timer
                .as_ref()
                .and_then(crate::gpu::timer::KernelTimer::total)
        }
    };
}
pub(crate) use kernel_timing;

/// The compute passes one submission may time: the most any host records (the shapes' first
/// hits: the dense pass, the list's two and the reduction), with room to spare.
const MOST_PASSES: u32 = 8;
/// Two timestamps a pass: its start and end.
const QUERIES: u32 = 2 * MOST_PASSES;
const BYTES: u64 = QUERIES as u64 * size_of::<u64>() as u64;

pub(crate) struct KernelTimer {
    query_set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    staging: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f64,
    enabled: bool,
    total: Duration,
    /// Passes given timestamp writes since the last resolve, and how many that resolved.
    passes: AtomicU32,
    resolved_passes: AtomicU32,
}

impl KernelTimer {
    /// None when the device has no timestamp queries.
    pub(crate) fn new(context: &GpuContext, label: &str) -> Option<Self> {
        let device = context.device();
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let buffer = |usage, name: &str| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(&format!("{label}.{name}")),
                size: BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        Some(Self {
            query_set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some(&format!("{label}.timestamps")),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolved: buffer(
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                "timestamps.resolved",
            ),
            staging: buffer(
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                "timestamps.staging",
            ),
            period_ns: f64::from(context.queue().get_timestamp_period()),
            enabled: false,
            total: Duration::ZERO,
            passes: AtomicU32::new(0),
            resolved_passes: AtomicU32::new(0),
        })
    }

    pub(crate) fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Starts a call: its kernel time so far is zero.
    pub(crate) fn start(&mut self) {
        self.total = Duration::ZERO;
        // (A submission that failed before its resolve left its passes counted.)
        self.passes.store(0, Ordering::Relaxed);
    }

    /// The summed kernel time of the current (or last) call, when enabled.
    pub(crate) fn total(&self) -> Option<Duration> {
        self.enabled.then_some(self.total)
    }

    /// The next pass's timestamp writes, when enabled: each pass of a submission its own pair.
    pub(crate) fn writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        if !self.enabled {
            return None;
        }
        let pass = self.passes.fetch_add(1, Ordering::Relaxed);
        assert!(
            pass < MOST_PASSES,
            "a submission times {MOST_PASSES} passes at most"
        );
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(2 * pass),
            end_of_pass_write_index: Some(2 * pass + 1),
        })
    }

    /// After the submission's passes: resolves their timestamps and copies them for reading.
    pub(crate) fn encode_resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let passes = self.passes.swap(0, Ordering::Relaxed);
        self.resolved_passes.store(passes, Ordering::Relaxed);
        if self.enabled && passes > 0 {
            let bytes = 2 * u64::from(passes) * size_of::<u64>() as u64;
            encoder.resolve_query_set(&self.query_set, 0..2 * passes, &self.resolved, 0);
            encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.staging, 0, bytes);
        }
    }

    /// Waits for `submission` (which held the passes) and adds their kernel time.
    pub(crate) fn read(
        &mut self,
        context: &GpuContext,
        submission: wgpu::SubmissionIndex,
        wait: Wait,
    ) -> Result<()> {
        let passes = self.resolved_passes.load(Ordering::Relaxed);
        if !self.enabled || passes == 0 {
            return Ok(());
        }
        let bytes = 2 * u64::from(passes) * size_of::<u64>() as u64;
        let mut ticks = 0;
        read_back(context, &self.staging, submission, bytes, wait, |bytes| {
            for pass in bytes.chunks_exact(2 * size_of::<u64>()) {
                let t: [u64; 2] = bytemuck::pod_read_unaligned(pass);
                ticks += t[1].saturating_sub(t[0]);
            }
        })?;
        self.total += Duration::from_nanos((ticks as f64 * self.period_ns) as u64);
        Ok(())
    }
}
