// Segment vs closed axis-aligned rectangle (Liang–Barsky, division-free decisions).
//
// CPU mirror: src/cpu/pairs.rs, with the same names and the same branch order. The contract is
// docs/semantics.md; change both files together.
//
// Every number comes from the host as a pipeline-overridable constant (src/gpu/shader.rs), so
// there is nothing here to keep in sync by hand.

override WORKGROUP_SIZE: u32;
override FLAG_HIT: u32;
override FLAG_START_INSIDE: u32;
override FLAG_END_INSIDE: u32;
override ENTRY_SHIFT: u32;
override EXIT_SHIFT: u32;
override SIDE_MIN_X: u32;
override SIDE_MAX_X: u32;
override SIDE_MIN_Y: u32;
override SIDE_MAX_Y: u32;

struct Segment {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
}

struct Rect {
    min_x: f32,
    min_y: f32,
    max_x: f32,
    max_y: f32,
}

struct PairIndex {
    segment: u32,
    rect: u32,
}

struct PairResult {
    t_enter: f32,
    t_exit: f32,
    flags: u32,
}

struct Params {
    segment_count: u32,
    rect_count: u32,
    pair_count: u32,
    _pad: u32,
}

// A parameter on the segment, t = num / den, with den > 0. Kept as a fraction so that every
// decision is a comparison of products; the only division happens once, for the output t.
struct Param {
    num: f32,
    den: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> segments: array<Segment>;
@group(0) @binding(2) var<storage, read> rects: array<Rect>;
@group(0) @binding(3) var<storage, read> pair_indices: array<PairIndex>;
@group(0) @binding(4) var<storage, read_write> results: array<PairResult>;

// Sign of a - b: -1, 0 or 1. Both products are compared, never subtracted, so no backend can fuse
// them into a multiply-add with a different rounding.
fn compare_params(a: Param, b: Param) -> i32 {
    let lhs = a.num * b.den;
    let rhs = b.num * a.den;
    if (lhs < rhs) {
        return -1;
    }
    if (lhs > rhs) {
        return 1;
    }
    return 0;
}

// Where the line c0 -> c1 enters the slab lo <= c <= hi. Requires c0 != c1.
fn slab_entry(c0: f32, c1: f32, lo: f32, hi: f32) -> Param {
    if (c1 > c0) {
        return Param(lo - c0, c1 - c0);
    }
    return Param(c0 - hi, c0 - c1);
}

// Where the line c0 -> c1 leaves the slab lo <= c <= hi. Requires c0 != c1.
fn slab_exit(c0: f32, c1: f32, lo: f32, hi: f32) -> Param {
    if (c1 > c0) {
        return Param(hi - c0, c1 - c0);
    }
    return Param(c0 - lo, c0 - c1);
}

fn outside_slab(c: f32, lo: f32, hi: f32) -> bool {
    return c < lo || c > hi;
}

fn segment_rect(s: Segment, r: Rect) -> PairResult {
    let start_out_x = outside_slab(s.x0, r.min_x, r.max_x);
    let start_out_y = outside_slab(s.y0, r.min_y, r.max_y);
    let end_out_x = outside_slab(s.x1, r.min_x, r.max_x);
    let end_out_y = outside_slab(s.y1, r.min_y, r.max_y);
    let start_inside = !start_out_x && !start_out_y;
    let end_inside = !end_out_x && !end_out_y;

    // Parallel to an axis (this also covers a point) and outside that axis' slab: no common point.
    // Exact comparisons of the inputs, so no 1/0 and no flushed tiny difference decides this.
    if (s.x0 == s.x1 && start_out_x) {
        return PairResult(0.0, 0.0, 0u);
    }
    if (s.y0 == s.y1 && start_out_y) {
        return PairResult(0.0, 0.0, 0u);
    }

    // Entry: the latest slab entry of the axes the start lies outside of, and never before t = 0.
    // An axis the start lies inside of was entered at t <= 0; a tie marks both sides (a corner).
    var enter = Param(0.0, 1.0);
    var entry = 0u;
    if (start_out_x) {
        let entry_x = slab_entry(s.x0, s.x1, r.min_x, r.max_x);
        let side_x = select(SIDE_MAX_X, SIDE_MIN_X, s.x1 > s.x0);
        let order = compare_params(entry_x, enter);
        if (order > 0) {
            enter = entry_x;
            entry = side_x;
        } else if (order == 0) {
            entry = entry | side_x;
        }
    }
    if (start_out_y) {
        let entry_y = slab_entry(s.y0, s.y1, r.min_y, r.max_y);
        let side_y = select(SIDE_MAX_Y, SIDE_MIN_Y, s.y1 > s.y0);
        let order = compare_params(entry_y, enter);
        if (order > 0) {
            enter = entry_y;
            entry = side_y;
        } else if (order == 0) {
            entry = entry | side_y;
        }
    }

    // Exit: the earliest slab exit of the axes the end lies outside of, and never after t = 1.
    var leave = Param(1.0, 1.0);
    var exit = 0u;
    if (end_out_x) {
        let exit_x = slab_exit(s.x0, s.x1, r.min_x, r.max_x);
        let side_x = select(SIDE_MIN_X, SIDE_MAX_X, s.x1 > s.x0);
        let order = compare_params(exit_x, leave);
        if (order < 0) {
            leave = exit_x;
            exit = side_x;
        } else if (order == 0) {
            exit = exit | side_x;
        }
    }
    if (end_out_y) {
        let exit_y = slab_exit(s.y0, s.y1, r.min_y, r.max_y);
        let side_y = select(SIDE_MIN_Y, SIDE_MAX_Y, s.y1 > s.y0);
        let order = compare_params(exit_y, leave);
        if (order < 0) {
            leave = exit_y;
            exit = side_y;
        } else if (order == 0) {
            exit = exit | side_y;
        }
    }

    // Hit when the parameter interval [enter, leave] is not empty.
    if (compare_params(enter, leave) > 0) {
        return PairResult(0.0, 0.0, 0u);
    }

    var flags = FLAG_HIT | (entry << ENTRY_SHIFT) | (exit << EXIT_SHIFT);
    // t in [0, 1], t_enter <= t_exit, and never -0.0 (a numerator can be -0.0, and clamp may
    // keep the sign of a zero): select the bound itself whenever t does not exceed it.
    var t_enter = 0.0;
    var t_exit = 1.0;
    if (start_inside) {
        flags = flags | FLAG_START_INSIDE;
    } else {
        let t = enter.num / enter.den;
        t_enter = select(0.0, min(t, 1.0), t > 0.0);
    }
    if (end_inside) {
        flags = flags | FLAG_END_INSIDE;
    } else {
        let t = leave.num / leave.den;
        t_exit = select(t_enter, min(t, 1.0), t > t_enter);
    }
    return PairResult(t_enter, t_exit, flags);
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
    results[i] = segment_rect(segments[segment], rects[rect]);
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
    results[i] = segment_rect(segments[pair.segment], rects[pair.rect]);
}
