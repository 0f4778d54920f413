//! One report for a call over a scene of mixed targets, which makes a GPU call per kind (or
//! none) and does a part of its work on the host: what [`Engine::last_gpu_call`] and
//! [`Engine::gpu_kernel_time`] then say about the whole call.

use super::Engine;
use crate::error::Result;
use crate::gpu::GpuCall;
use std::time::{Duration, Instant};

/// The parts of one scene call so far.
#[derive(Default)]
pub(super) struct SceneReport {
    call: GpuCall,
    kernel_time: Option<Duration>,
}

impl Engine {
    /// Runs `part`, a kind's own query, and adds the GPU call it made (if any) to `report`.
    pub(super) fn gpu_part<T>(
        &mut self,
        report: &mut SceneReport,
        part: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.gpu_call = None;
        self.kernel_time = None;
        let outcome = part(self);
        if let Some(call) = self.gpu_call {
            report.call += call;
        }
        if let Some(time) = self.kernel_time {
            *report.kernel_time.get_or_insert_default() += time;
        }
        outcome
    }

    /// Runs `part`, work the host does itself, and adds its time to `report`.
    pub(super) fn host_part<T>(
        &mut self,
        report: &mut SceneReport,
        part: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let started = Instant::now();
        let outcome = part(self);
        report.call.on_host += started.elapsed();
        outcome
    }

    /// Makes `report` the last call's, on a GPU engine (a CPU engine reports none).
    pub(super) fn report_scene(&mut self, report: SceneReport) {
        if self.gpu_context().is_some() {
            self.gpu_call = Some(report.call);
            self.kernel_time = report.kernel_time;
        }
    }
}
