//! The rect query kernels: the entry points of `shaders/rect_queries.wgsl`, which the queries
//! (`gpu::rect_queries`) and the grid's walk (`gpu::grid`) run.

use crate::cpu::rect_queries::query;

/// The entry points of `rect_queries.wgsl`, each a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RectKernel {
    FirstHit,
    Counts,
    Hits,
    Clip,
    /// First hit, reading back each segment's rect only (`first_hit_rects`).
    FirstHitRects,
}

impl RectKernel {
    pub(crate) const ALL: [RectKernel; 5] = [
        RectKernel::FirstHit,
        RectKernel::Counts,
        RectKernel::Hits,
        RectKernel::Clip,
        RectKernel::FirstHitRects,
    ];
    /// The kernels with a pipeline of their own (FirstHitRects runs FirstHit's).
    pub(crate) const PIPELINES: [RectKernel; 4] = [
        RectKernel::FirstHit,
        RectKernel::Counts,
        RectKernel::Hits,
        RectKernel::Clip,
    ];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// (entry point, QUERY constant, label).
    pub(crate) fn entry_point(self) -> (&'static str, u32, &'static str) {
        match self {
            RectKernel::FirstHit | RectKernel::FirstHitRects => (
                "segment_rects",
                query::QUERY_FIRST_HIT,
                "rectcast.queries.first_hit",
            ),
            RectKernel::Counts => (
                "segment_rects",
                query::QUERY_COUNTS,
                "rectcast.queries.counts",
            ),
            RectKernel::Hits => ("segment_rects", query::QUERY_HITS, "rectcast.queries.hits"),
            RectKernel::Clip => ("clip", query::QUERY_FIRST_HIT, "rectcast.queries.clip"),
        }
    }

    /// The step a timeout names.
    pub(crate) fn step(self) -> &'static str {
        match self {
            RectKernel::FirstHit | RectKernel::FirstHitRects => "a first-hit chunk",
            RectKernel::Counts => "a counts chunk",
            RectKernel::Hits => "a hit-list chunk",
            RectKernel::Clip => "a clip chunk",
        }
    }

    /// Whether the kernel's readback holds one `FirstHit` per segment.
    pub(crate) fn writes_first_hits(self) -> bool {
        matches!(self, RectKernel::FirstHit | RectKernel::Clip)
    }

    /// The kernel whose pipeline runs this one.
    pub(crate) fn pipeline_kernel(self) -> RectKernel {
        match self {
            RectKernel::FirstHitRects => RectKernel::FirstHit,
            other => other,
        }
    }
}
