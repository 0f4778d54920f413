//! CPU mirror of `shaders/rect_pairs.wgsl`: the dense and pair-list entry points, and the compaction
//! of their results.

use super::segment_rect::segment_rect;
use crate::types::{PairIndex, PairResult, Rect, Segment};

/// Pairs per word of the compact results: a mask bit each.
pub const WORD_PAIRS: usize = u32::BITS as usize;

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

/// Mirror of the `compact_pairs` entry point: for each word of 32 results, its header (where
/// its packed results start, then its mask, bit j set when result 32 w + j is not a miss) in
/// `headers[2 w..2 w + 2]`, and those results appended to `packed`. The GPU's words take their
/// runs in whatever order they finish; here they go in order. `headers` holds two words per
/// word of results.
pub fn compact_pairs(results: &[PairResult], headers: &mut [u32], packed: &mut Vec<PairResult>) {
    for (word, run) in results.chunks(WORD_PAIRS).enumerate() {
        let mut mask = 0u32;
        for (j, result) in run.iter().enumerate() {
            if result.flags != 0 {
                mask |= 1 << j;
            }
        }
        let at = packed.len() as u32;
        headers[2 * word] = at;
        headers[2 * word + 1] = mask;
        for result in run {
            if result.flags != 0 {
                packed.push(*result);
            }
        }
    }
}
