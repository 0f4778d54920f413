//! CPU mirror of `shaders/pairs.wgsl`: the dense and pair-list entry points.

use super::segment_rect::segment_rect;
use crate::types::{PairIndex, PairResult, Rect, Segment};

/// Mirror of the `pairs_dense` entry point: every segment against every rect, segment-major
/// (`results[s * rects.len() + r]`). The shader's `i / rect_count` becomes a nested loop.
pub fn pairs_dense(segments: &[Segment], rects: &[Rect], results: &mut [PairResult]) {
    debug_assert_eq!(results.len(), segments.len() * rects.len());
    if rects.is_empty() {
        return;
    }
    for (segment, row) in segments.iter().zip(results.chunks_exact_mut(rects.len())) {
        for (rect, result) in rects.iter().zip(row.iter_mut()) {
            *result = segment_rect(segment, rect);
        }
    }
}

/// Mirror of the `pairs_list` entry point. Indices must be in range (checked by the caller).
pub fn pairs_list(
    segments: &[Segment],
    rects: &[Rect],
    pair_indices: &[PairIndex],
    results: &mut [PairResult],
) {
    for (pair, result) in pair_indices.iter().zip(results.iter_mut()) {
        *result = segment_rect(&segments[pair.segment as usize], &rects[pair.rect as usize]);
    }
}
