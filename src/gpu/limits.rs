//! Limits a caller may set below the device's.

use std::time::Duration;

use super::context::GpuContext;
use crate::cpu::rect_pairs::WORD_PAIRS;
use crate::types::PairResult;

/// Entries a hit list grows to by default ([`GpuLimits::hit_list_limit`]).
pub const HIT_LIST_LIMIT: u64 = 1 << 20;

/// Segments a rect query's chunk takes at most on a hardware GPU by default
/// ([`GpuLimits::overlap_segments`]): a first hit of 2^20 segments runs as 4 chunks.
pub const OVERLAP_SEGMENTS: usize = 1 << 18;

/// Lower limits than the device's, to exercise chunking with small batches (tests) or to keep
/// a game's frame from holding huge bindings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuLimits {
    /// The largest storage binding, in bytes (default: the device's limit).
    pub max_binding_bytes: Option<u64>,
    /// Workgroups per dispatch dimension (default: the device's limit).
    pub max_workgroups_per_dimension: Option<u32>,
    /// Entries the hit list of the queries starts with (default 16,384). It grows when a
    /// dispatch finds more, up to [`hit_list_limit`](Self::hit_list_limit); past that the
    /// batch is split.
    pub hit_list_capacity: Option<u64>,
    /// Entries the hit list may grow to (default [`HIT_LIST_LIMIT`], 2^20: 24 MiB, in the
    /// GPU's buffer and in each staging buffer; the binding limit if lower). A chunk that
    /// finds more is split, and the next ones are sized by the hits a segment found so far,
    /// so that a call's GPU and staging memory stays bounded whatever its hits.
    pub hit_list_limit: Option<u64>,
    /// Whether dense and listed pairs come back compact: a mask bit per pair and only the
    /// results that are not a miss, packed on the GPU and expanded on the host (default: yes,
    /// except on a CPU implementation such as lavapipe, where a readback is a copy within host
    /// memory and packing would only add work). The results are the same bytes either way.
    pub compact_readback: Option<bool>,
    /// Whether the GPU sorts each segment's run of a hit list walked through a grid by rect
    /// (`order_hits`; the cells list rects in any order), or the host does (default: the GPU,
    /// except on a CPU implementation such as lavapipe, where the shader's branchy loop costs
    /// more than the host's sort: 16M hits in 262k runs, 0.45 s against 0.05 s). The hits are
    /// the same bytes either way; runs longer than
    /// [`ORDER_RUN_LIMIT`](crate::cpu::rect_queries::ORDER_RUN_LIMIT) are the host's anyway.
    pub order_on_gpu: Option<bool>,
    /// Segments a rect query's chunk takes at most (first hit, counts, hits, clip), so that a
    /// large call runs as several chunks of even size, and the host uploads the next and
    /// merges the last while the GPU runs one (default: [`OVERLAP_SEGMENTS`] on a hardware
    /// GPU; none on a CPU implementation such as lavapipe, whose chunks run on the host's own
    /// cores). The results are the same bytes however the call is split.
    pub overlap_segments: Option<usize>,
    /// How long to wait for the GPU before giving up with [`crate::Error::Timeout`] (default
    /// [`WaitLimit::default`]).
    pub wait: Option<WaitLimit>,
}

/// How long rectcast waits for one GPU step (a chunk's dispatch and readback, a frame) before
/// it returns [`crate::Error::Timeout`]: `base`, plus `per_gigapair` for every 10^9 pairs the
/// step covers. A GPU that stops answering then costs the caller an error, never a hang.
///
/// One rate cannot fit every kernel on every GPU: the shapes' kernels (walls, circles,
/// polygons) run far below it on a software GPU. Their first dispatch of each entry point
/// gets two minutes more (a software driver compiles the kernel then), and each later one at
/// least four times the pace that entry point was measured at (from submission to read-back):
/// a job slower than the rate but steady finishes, and a GPU that stops still times out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitLimit {
    pub base: Duration,
    pub per_gigapair: Duration,
}

impl Default for WaitLimit {
    /// 10 s, plus 100 s per 10^9 pairs: a GPU slower than 10^7 pairs per second (lavapipe runs
    /// 5·10^7 to 1.6·10^8 on two cores; a hardware GPU 10^11 and more) is taken as stuck.
    fn default() -> Self {
        Self {
            base: Duration::from_secs(10),
            per_gigapair: Duration::from_secs(100),
        }
    }
}

impl WaitLimit {
    /// The wait for a step over `pairs` pairs.
    pub fn for_pairs(&self, pairs: u64) -> Duration {
        self.base + self.per_gigapair.mul_f64(pairs as f64 / 1e9)
    }
}

/// The most pairs whose results, in full, and compact header (`shaders/rect_pairs.wgsl`) fit one
/// buffer of `buffer_bytes`: the pair queries' staging buffer holds both.
pub(crate) fn pairs_fitting_staging(buffer_bytes: u64) -> u64 {
    let per_word = WORD_PAIRS as u64 * size_of::<PairResult>() as u64 + 8;
    // The count, and a word of header rounded up.
    buffer_bytes.saturating_sub(4 + 8) / per_word * WORD_PAIRS as u64
}

impl GpuLimits {
    /// The largest binding in bytes (a multiple of 16) and workgroups per dimension: these
    /// limits, capped by the device's.
    pub(crate) fn resolve(&self, context: &GpuContext) -> (u64, u32) {
        let device_limits = context.limits();
        let max_binding_bytes = self
            .max_binding_bytes
            .unwrap_or(u64::MAX)
            .min(device_limits.max_storage_buffer_binding_size)
            // A staging buffer holds a chunk's compact header and its results.
            .min(
                pairs_fitting_staging(device_limits.max_buffer_size)
                    * size_of::<PairResult>() as u64,
            )
            / 16
            * 16;
        let max_workgroups_per_dimension = self
            .max_workgroups_per_dimension
            .unwrap_or(u32::MAX)
            .min(device_limits.max_compute_workgroups_per_dimension)
            .max(1);
        (max_binding_bytes, max_workgroups_per_dimension)
    }
}
