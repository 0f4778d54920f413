//! Where a GPU call's host time went: what every host's chunk ring accounts.

use super::buffers::{PendingRead, Wait};
use super::context::GpuContext;
use crate::error::Result;

/// Where one GPU call's time went on the host, and how its chunks overlapped (see
/// [`crate::Engine::last_gpu_call`]). The GPU's own kernel time is
/// [`crate::Engine::gpu_kernel_time`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuCall {
    /// Chunks submitted, reruns (a found list that grew) included.
    pub chunks: usize,
    /// Chunks submitted before the first one's results were read back: more than one when
    /// the GPU had work queued while the host read.
    pub submitted_before_first_read: usize,
    /// Uploading inputs, recording and submitting the chunks.
    pub submitting: std::time::Duration,
    /// Blocked until the GPU had a chunk's results ready (kernels and copies the host could not
    /// overlap with its own work).
    pub waiting: std::time::Duration,
    /// Copying results out of the mapped staging buffers and merging them.
    pub merging: std::time::Duration,
    /// Bytes the GPU copied back to the host (the staging buffers' mapped ranges).
    pub bytes_read: u64,
    /// Pairs whose results the host computed itself because the GPU's were not read back:
    /// compact dense or listed results beyond what their chunk copied back, once a later
    /// chunk had overwritten them on the GPU. Uncertain pairs are not counted here.
    pub decided_on_host: u64,
    /// Answering on the host's CPU what a call over a scene of mixed targets
    /// ([`crate::Targets`]) does not send to the GPU: the shapes' first hits (bounded by the
    /// rects') and the merge of every kind's results.
    pub on_host: std::time::Duration,
    /// Before any GPU work, on the host: checking the inputs (and standing in for the
    /// invalid ones a batch skips) and planning the grid (the rect queries: first hits, hits,
    /// counts).
    pub preparing: std::time::Duration,
    /// Segments whose run of a rect hit list the host sorted: the GPU orders the list itself,
    /// except a run longer than [`crate::cpu::rect_queries::ORDER_RUN_LIMIT`] after a grid
    /// walk.
    pub sorted_on_host: u64,
}

impl std::ops::AddAssign for GpuCall {
    /// Adds another call's parts: the report of a call made of several (one per kind of a
    /// scene). `submitted_before_first_read` stays the first call's.
    fn add_assign(&mut self, other: Self) {
        if self.submitted_before_first_read == 0 {
            self.submitted_before_first_read = other.submitted_before_first_read;
        }
        self.chunks += other.chunks;
        self.submitting += other.submitting;
        self.waiting += other.waiting;
        self.merging += other.merging;
        self.bytes_read += other.bytes_read;
        self.decided_on_host += other.decided_on_host;
        self.on_host += other.on_host;
        self.preparing += other.preparing;
        self.sorted_on_host += other.sorted_on_host;
    }
}

impl GpuCall {
    /// Finishes `read` (see [`PendingRead::finish`]), accounting its wait and the time `merge`
    /// takes with the mapped bytes; the first read of a call records how many chunks were
    /// submitted before it.
    pub(crate) fn read(
        &mut self,
        read: PendingRead,
        context: &GpuContext,
        staging: &wgpu::Buffer,
        submission: wgpu::SubmissionIndex,
        wait: Wait,
        merge: impl FnOnce(&[u8]),
    ) -> Result<()> {
        if self.submitted_before_first_read == 0 {
            self.submitted_before_first_read = self.chunks;
        }
        let started = std::time::Instant::now();
        let mut merging = std::time::Duration::ZERO;
        self.bytes_read += read.bytes();
        let finished = read.finish(context, staging, submission, wait, |mapped| {
            let merge_started = std::time::Instant::now();
            merge(mapped);
            merging = merge_started.elapsed();
        });
        self.merging += merging;
        self.waiting += started.elapsed().saturating_sub(merging);
        finished
    }
}
