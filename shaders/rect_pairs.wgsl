// The dense and pair-list queries: one invocation per (segment, rect) pair.
//
// Compiled after shaders/segment_rect.wgsl (src/gpu/shader.rs joins them). CPU mirror:
// src/cpu/rect_pairs.rs.

override WORKGROUP_SIZE: u32;

struct PairIndex {
    segment: u32,
    rect: u32,
}

// The results in compact form, written by `compact_pairs` after a dense or list dispatch: a
// miss is left out, every other result (a hit, or a pair the filter could not certify) is
// packed. Each run of 32 pairs (a word) has a header of two u32 at headers[2 w]: where its
// packed results start, then its mask, bit j set when pair 32 w + j is packed. Within a word
// results are packed in pair order; words take their runs in whatever order they finish. The
// host expands it, and re-decides the uncertain pairs exactly.
struct Compact {
    packed_count: atomic<u32>,
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
@group(0) @binding(6) var<storage, read_write> packed: array<PairResult>;

// The dispatch may be two-dimensional (more than 65,535 workgroups): rows of workgroups.
fn invocation_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32) -> u32 {
    return (workgroup_id.y * num_workgroups.x + workgroup_id.x) * WORKGROUP_SIZE + local_index;
}

// All segments x all rects, segment-major: pair i is segment i / rect_count, rect i % rect_count.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_dense(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_id(workgroup_id, num_workgroups, local_index);
    if (i >= params.pair_count) {
        return;
    }
    let segment = i / params.rect_count;
    let rect = i % params.rect_count;
    results[i] = segment_rect(segments[segment], rects[rect]);
}

// An explicit list of (segment, rect) pairs, validated by the host.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_list(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_id(workgroup_id, num_workgroups, local_index);
    if (i >= params.pair_count) {
        return;
    }
    let pair = pair_indices[i];
    results[i] = segment_rect(segments[pair.segment], rects[pair.rect]);
}

// Packs the results of the dispatch before it (`Compact`): one invocation per word of 32 pairs,
// with no workgroup memory and no barrier, so it costs a read of the results on any GPU.
@compute @workgroup_size(WORKGROUP_SIZE)
fn compact_pairs(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let word = invocation_id(workgroup_id, num_workgroups, local_index);
    if (word >= (params.pair_count + 31u) / 32u) {
        return;
    }
    let first = word * 32u;
    let end = min(first + 32u, params.pair_count);
    var mask = 0u;
    for (var i = first; i < end; i += 1u) {
        if (results[i].flags != 0u) {
            mask |= 1u << (i - first);
        }
    }
    var at = 0u;
    if (mask != 0u) {
        at = atomicAdd(&compact.packed_count, countOneBits(mask));
    }
    if (2u * word + 1u < arrayLength(&compact.headers)) {
        compact.headers[2u * word] = at;
        compact.headers[2u * word + 1u] = mask;
    }
    for (var i = first; i < end; i += 1u) {
        if (results[i].flags != 0u) {
            if (at < arrayLength(&packed)) {
                packed[at] = results[i];
            }
            at += 1u;
        }
    }
}
