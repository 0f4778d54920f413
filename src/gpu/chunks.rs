//! Splitting a batch into dispatches that fit the device: no binding larger than the device's
//! storage-binding limit, no dispatch over its workgroup limit, no pair index over u32.
//!
//! Pure arithmetic, so it is tested on its own (`tests/chunks.rs`) with sizes no GPU could hold.

use std::ops::Range;

use super::shader::WORKGROUP_SIZE;
use crate::types::{PairIndex, PairResult, Rect, Segment};

/// The device limits that bound a dispatch, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkCaps {
    /// Pairs (results) one dispatch may produce.
    pub pairs: u64,
    /// Segments one binding may hold.
    pub segments: u64,
    /// Rects one binding may hold.
    pub rects: u64,
    /// Pair indices one binding may hold.
    pub pair_indices: u64,
}

impl ChunkCaps {
    /// Caps from the device's largest storage binding and workgroups per dimension (the dispatch
    /// is two-dimensional). Pair indices stay below 2^31 so the shader's u32 id arithmetic, which
    /// runs a row of workgroups past the end, cannot wrap.
    pub fn new(max_binding_bytes: u64, max_workgroups_per_dimension: u32) -> Self {
        // Buffers are sized in whole 16-byte steps, so a binding may only use whole steps.
        let max_binding_bytes = max_binding_bytes / 16 * 16;
        let per_binding = |size: usize| max_binding_bytes / size as u64;
        let dim = max_workgroups_per_dimension as u64;
        let dispatch = dim * dim * WORKGROUP_SIZE as u64;
        Self {
            pairs: per_binding(size_of::<PairResult>())
                .min(dispatch)
                .min(1 << 31),
            segments: per_binding(size_of::<Segment>()),
            rects: per_binding(size_of::<Rect>()),
            pair_indices: per_binding(size_of::<PairIndex>()),
        }
    }
}

/// One dispatch of a dense query: a tile of segments × a tile of targets (rects, or a shape's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseChunk {
    pub segments: Range<usize>,
    pub targets: Range<usize>,
}

impl DenseChunk {
    pub fn pair_count(&self) -> usize {
        self.segments.len() * self.targets.len()
    }
}

/// Tiles `segment_count × rect_count` into dispatches, segment tiles outer, rect tiles inner.
/// A rect tile is all rects whenever they fit, so each chunk's results are one contiguous run
/// of the segment-major output.
pub fn plan_dense(
    segment_count: usize,
    rect_count: usize,
    caps: ChunkCaps,
) -> impl Iterator<Item = DenseChunk> {
    let rect_tile = (rect_count as u64).min(caps.rects).min(caps.pairs).max(1) as usize;
    let segment_tile = (segment_count as u64)
        .min(caps.segments)
        .min(caps.pairs / rect_tile as u64)
        .max(1) as usize;
    let empty = segment_count == 0 || rect_count == 0;
    let segment_tiles = if empty {
        0
    } else {
        segment_count.div_ceil(segment_tile)
    };
    (0..segment_tiles).flat_map(move |st| {
        let segments = st * segment_tile..((st + 1) * segment_tile).min(segment_count);
        (0..rect_count.div_ceil(rect_tile)).map(move |rt| DenseChunk {
            segments: segments.clone(),
            targets: rt * rect_tile..((rt + 1) * rect_tile).min(rect_count),
        })
    })
}

/// Splits a pair list into runs that fit one dispatch (and, when `gather` is set, whose gathered
/// segments and rects fit one binding each).
pub fn plan_list(
    pair_count: usize,
    caps: ChunkCaps,
    gather: bool,
) -> impl Iterator<Item = Range<usize>> {
    let mut tile = caps.pairs.min(caps.pair_indices);
    if gather {
        tile = tile.min(caps.segments).min(caps.rects);
    }
    let tile = tile.max(1) as usize;
    (0..pair_count.div_ceil(tile)).map(move |k| k * tile..((k + 1) * tile).min(pair_count))
}

/// Workgroups for `pairs` invocations as a 2D grid: (x, y) with x <= `max_per_dimension`.
pub fn workgroup_grid(pairs: usize, max_per_dimension: u32) -> (u32, u32) {
    let groups = (pairs as u64).div_ceil(WORKGROUP_SIZE as u64).max(1);
    let x = groups.min(max_per_dimension as u64);
    (x as u32, groups.div_ceil(x) as u32)
}
