// The dense and pair-list queries: one invocation per (segment, rect) pair.
//
// Compiled after shaders/segment_rect.wgsl (src/gpu/shader.rs joins them). CPU mirror:
// src/cpu/pairs.rs.

override WORKGROUP_SIZE: u32;

struct PairIndex {
    segment: u32,
    rect: u32,
}

// Pairs this dispatch could not certify: how many, and the first arrayLength(&pairs) of their
// pair ids (the host scans the results when more were found).
struct Uncertain {
    count: atomic<u32>,
    pairs: array<u32>,
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
@group(0) @binding(5) var<storage, read_write> uncertain: Uncertain;

// GPU only. Stores the pair's result, and lists it for the host when it is uncertain.
fn store(i: u32, result: PairResult) {
    results[i] = result;
    if (result.flags == FLAG_UNCERTAIN) {
        let k = atomicAdd(&uncertain.count, 1u);
        if (k < arrayLength(&uncertain.pairs)) {
            uncertain.pairs[k] = i;
        }
    }
}

// The dispatch may be two-dimensional (more than 65,535 workgroups): rows of workgroups.
fn pair_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32) -> u32 {
    return (workgroup_id.y * num_workgroups.x + workgroup_id.x) * WORKGROUP_SIZE + local_index;
}

// All segments x all rects, segment-major: pair i is segment i / rect_count, rect i % rect_count.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_dense(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = pair_id(workgroup_id, num_workgroups, local_index);
    if (i >= params.pair_count) {
        return;
    }
    let segment = i / params.rect_count;
    let rect = i % params.rect_count;
    store(i, segment_rect(segments[segment], rects[rect]));
}

// An explicit list of (segment, rect) pairs, validated by the host.
@compute @workgroup_size(WORKGROUP_SIZE)
fn pairs_list(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = pair_id(workgroup_id, num_workgroups, local_index);
    if (i >= params.pair_count) {
        return;
    }
    let pair = pair_indices[i];
    store(i, segment_rect(segments[pair.segment], rects[pair.rect]));
}
