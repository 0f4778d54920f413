// The dense and pair-list queries: one invocation per (segment, rect) pair.
//
// Compiled after shaders/segment_rect.wgsl (src/gpu/shader.rs joins them). CPU mirror:
// src/cpu/pairs.rs.

override WORKGROUP_SIZE: u32;

struct PairIndex {
    segment: u32,
    rect: u32,
}

// The results in compact form, one block per workgroup of WORKGROUP_SIZE pairs: a miss is left
// out, every other result (a hit, or a pair the filter could not certify) is stored. Block b's
// header is BLOCK_WORDS words at headers[b * BLOCK_WORDS]: where its stored results start in
// `results`, then its mask, a bit per pair (pair b * WORKGROUP_SIZE + 32 w + j is bit j of mask
// word w), set for each stored pair. Within a block, results are stored in pair order; blocks
// take their runs in whatever order they finish. The host expands it, and re-decides the
// uncertain pairs exactly.
struct Compact {
    stored: atomic<u32>,
    headers: array<u32>,
}

struct Params {
    segment_count: u32,
    rect_count: u32,
    pair_count: u32,
    // Pads the block to 16 bytes.
    padding: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> segments: array<Segment>;
@group(0) @binding(2) var<storage, read> rects: array<Rect>;
@group(0) @binding(3) var<storage, read> pair_indices: array<PairIndex>;
@group(0) @binding(4) var<storage, read_write> results: array<PairResult>;
@group(0) @binding(5) var<storage, read_write> compact: Compact;

override MASK_WORDS: u32;
override BLOCK_WORDS: u32;

var<workgroup> block_mask: array<atomic<u32>, MASK_WORDS>;
var<workgroup> block_start: u32;

// Of the pairs before `lane` in this workgroup's block, how many are stored: the index of lane's
// stored result within the block's run.
fn rank_in_block(lane: u32) -> u32 {
    var rank = 0u;
    for (var w = 0u; w < lane / 32u; w += 1u) {
        rank += countOneBits(atomicLoad(&block_mask[w]));
    }
    let below = (1u << (lane % 32u)) - 1u;
    return rank + countOneBits(atomicLoad(&block_mask[lane / 32u]) & below);
}

// GPU only, in uniform control flow: every invocation of the workgroup calls it once, with
// `pair_count` or more as `i` when it has no pair. Stores the workgroup's block.
fn store(block: u32, lane: u32, i: u32, result: PairResult) {
    if (lane < MASK_WORDS) {
        atomicStore(&block_mask[lane], 0u);
    }
    workgroupBarrier();
    let kept = i < params.pair_count && result.flags != 0u;
    if (kept) {
        atomicOr(&block_mask[lane / 32u], 1u << (lane % 32u));
    }
    workgroupBarrier();
    if (lane == 0u) {
        var count = 0u;
        for (var w = 0u; w < MASK_WORDS; w += 1u) {
            count += countOneBits(atomicLoad(&block_mask[w]));
        }
        block_start = atomicAdd(&compact.stored, count);
    }
    let start = workgroupUniformLoad(&block_start);
    if (kept) {
        let at = start + rank_in_block(lane);
        if (at < arrayLength(&results)) {
            results[at] = result;
        }
    }
    let header = block * BLOCK_WORDS;
    let blocks = (params.pair_count + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    if (block < blocks && header + BLOCK_WORDS <= arrayLength(&compact.headers)) {
        if (lane == 0u) {
            compact.headers[header] = start;
        }
        if (lane < MASK_WORDS) {
            compact.headers[header + 1u + lane] = atomicLoad(&block_mask[lane]);
        }
    }
}

fn block_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>) -> u32 {
    return workgroup_id.y * num_workgroups.x + workgroup_id.x;
}

// All segments x all rects, segment-major: pair i is segment i / rect_count, rect i % rect_count.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_dense(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let block = block_id(workgroup_id, num_workgroups);
    let i = block * WORKGROUP_SIZE + local_index;
    var result = PairResult(0.0, 0.0, 0u);
    if (i < params.pair_count) {
        let segment = i / params.rect_count;
        let rect = i % params.rect_count;
        result = segment_rect(segments[segment], rects[rect]);
    }
    store(block, local_index, i, result);
}

// An explicit list of (segment, rect) pairs, validated by the host.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_list(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let block = block_id(workgroup_id, num_workgroups);
    let i = block * WORKGROUP_SIZE + local_index;
    var result = PairResult(0.0, 0.0, 0u);
    if (i < params.pair_count) {
        let pair = pair_indices[i];
        result = segment_rect(segments[pair.segment], rects[pair.rect]);
    }
    store(block, local_index, i, result);
}
