//! CPU mirror of `shaders/pairs.wgsl`: the dense and pair-list entry points.

use super::segment_rect::segment_rect;
use crate::gpu::shader::WORKGROUP_SIZE;
use crate::types::{PairIndex, PairResult, Rect, Segment};

/// Words of a compact block's mask (WGSL `MASK_WORDS`): a bit for each pair of a workgroup.
pub const MASK_WORDS: u32 = WORKGROUP_SIZE / 32;
/// Words of a compact block's header (WGSL `BLOCK_WORDS`): where its stored results start,
/// then its mask.
pub const BLOCK_WORDS: u32 = 1 + MASK_WORDS;
const _: () = assert!(WORKGROUP_SIZE.is_multiple_of(32), "a mask word covers 32 lanes");

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

/// Mirror of `rank_in_block`: of the pairs before `lane` in a compact block with this mask, how
/// many are stored, which is the index of lane's stored result within the block's run. The
/// host reads the compact results back with it.
pub fn rank_in_block(mask: &[u32], lane: u32) -> u32 {
    let mut rank = 0;
    for w in 0..lane / 32 {
        rank += mask[w as usize].count_ones();
    }
    let below = (1u32 << (lane % 32)) - 1;
    rank + (mask[(lane / 32) as usize] & below).count_ones()
}
