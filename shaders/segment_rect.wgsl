// Segment vs closed axis-aligned rectangle (Liang–Barsky with exact decisions): the function
// every rectcast kernel calls, and the one users include in their own shaders
// (`rectcast::gpu::shader::SEGMENT_RECT_WGSL`).
//
// CPU mirror: src/cpu/segment_rect.rs, with the same names and the same branch order. The
// contract is docs/semantics.md; change both files together.
//
// Every number comes from the host as a pipeline-overridable constant (src/gpu/shader.rs
// `constants()`), so there is nothing here to keep in sync by hand. Before calling
// segment_rect, an entry point sets `rectcast_one` from a uniform holding 1.0 (see two_sum).
// A result whose flags are exactly FLAG_UNCERTAIN is a pair the floating-point filter could not
// decide with certainty: the caller must decide it another way (rectcast re-decides it on the
// host).

override FLAG_HIT: u32;
override FLAG_START_INSIDE: u32;
override FLAG_END_INSIDE: u32;
override ENTRY_SHIFT: u32;
override EXIT_SHIFT: u32;
override SIDE_MIN_X: u32;
override SIDE_MAX_X: u32;
override SIDE_MIN_Y: u32;
override SIDE_MAX_Y: u32;
// Set on a pair whose decision the filter could not certify: the host re-decides it exactly.
override FLAG_UNCERTAIN: u32;
// The floating-point filter (src/cpu/pairs.rs, `filter`, derives them).
override FILTER_RELATIVE: f32;
override FILTER_ABSOLUTE: f32;
override FILTER_FLOOR: f32;
override TINY_DIFFERENCE: f32;

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

struct PairResult {
    t_enter: f32,
    t_exit: f32,
    flags: u32,
}

// 1.0, set by the entry point from a uniform: a value the compiler cannot see through.
var<private> rectcast_one: f32;

const UNCERTAIN: i32 = 2;
const AXIS_NONE: u32 = 0u;
const AXIS_X: u32 = 1u;
const AXIS_Y: u32 = 2u;

// An integer that orders like the f32 value, with -0.0 == +0.0. Comparisons of inputs go through
// it: a GPU may flush subnormals to zero in float comparisons, never in integer ones.
fn order_key(v: f32) -> i32 {
    let bits = bitcast<i32>(v);
    return select(bits, -(bits & 0x7fffffffi), bits < 0i);
}

fn outside_slab(c: i32, lo: i32, hi: i32) -> bool {
    return c < lo || c > hi;
}

// Both ends beyond the same side of the slab lo..hi: no point of the segment is in it.
fn beyond_one_side(c0: i32, c1: i32, lo: i32, hi: i32) -> bool {
    return (c0 < lo && c1 < lo) || (c0 > hi && c1 > hi);
}

// Sign of t_x - t_y, where the segment's line crosses x = bx at t_x and y = by at t_y, or
// UNCERTAIN: the sign of det = (bx - x0)(y1 - y0) - (by - y0)(x1 - x0), flipped when the
// directions' signs differ, used only when it exceeds the filter's error bound (valid with
// rounding toward zero, fused multiply-adds, and subnormals flushed anywhere).
fn compare_crossings(s: Segment, bx: f32, by: f32, flip: bool) -> i32 {
    let a = bx - s.x0;
    let b = s.y1 - s.y0;
    let c = by - s.y0;
    let d = s.x1 - s.x0;
    let left = a * b;
    let right = c * d;
    let det = left - right;
    let bound = FILTER_RELATIVE * (abs(left) + abs(right))
        + FILTER_ABSOLUTE * (abs(a) + abs(b) + abs(c) + abs(d))
        + FILTER_FLOOR;
    var sign = UNCERTAIN;
    if (det > bound) {
        sign = 1;
    }
    if (det < -bound) {
        sign = -1;
    }
    return select(sign, -sign, flip && sign != UNCERTAIN);
}

// a + b as an unevaluated sum hi + lo, exactly under round-to-nearest (Knuth's TwoSum: no
// branch, and no multiply a compiler could fuse).
fn two_sum(a: f32, b: f32) -> vec2<f32> {
    // GPU only: each step is multiplied by rectcast_one, a 1.0 the compiler cannot see through.
    // Without it, a compiler that reassociates float additions not marked exact (Mesa's NIR
    // does) evaluates the error term in another order, and it comes out wrong.
    let one = rectcast_one;
    let hi = (a + b) * one;
    let b_virtual = (hi - a) * one;
    let a_virtual = (hi - b_virtual) * one;
    return vec2<f32>(hi, (a - a_virtual) * one + (b - b_virtual) * one);
}

// The t at which the line c0 -> c1 crosses c = bound, with both differences carried exactly:
// only the division (2.5 ulp in WGSL) and the final sum round.
fn crossing_time(bound: f32, c0: f32, c1: f32) -> f32 {
    let num = two_sum(bound, -c0);
    let den = two_sum(c1, -c0);
    let q = num[0] / den[0];
    return q + (num[1] - q * den[1]) / den[0];
}

fn segment_rect(s: Segment, r: Rect) -> PairResult {
    let x0 = order_key(s.x0);
    let y0 = order_key(s.y0);
    let x1 = order_key(s.x1);
    let y1 = order_key(s.y1);
    let min_x = order_key(r.min_x);
    let min_y = order_key(r.min_y);
    let max_x = order_key(r.max_x);
    let max_y = order_key(r.max_y);
    let start_out_x = outside_slab(x0, min_x, max_x);
    let start_out_y = outside_slab(y0, min_y, max_y);
    let end_out_x = outside_slab(x1, min_x, max_x);
    let end_out_y = outside_slab(y1, min_y, max_y);
    let start_inside = !start_out_x && !start_out_y;
    let end_inside = !end_out_x && !end_out_y;

    // Both ends beyond one side of a slab (a segment parallel to it and outside included): no
    // common point. From here on, an axis the start (end) is outside of is moved along, and its
    // entry (exit) line is crossed at some t in (0, 1] ([0, 1)).
    if (beyond_one_side(x0, x1, min_x, max_x) || beyond_one_side(y0, y1, min_y, max_y)) {
        return PairResult(0.0, 0.0, 0u);
    }
    let plus_x = x1 > x0;
    let plus_y = y1 > y0;
    // t_x - t_y has the sign of det times these two signs: flip when they differ.
    let flip = plus_x != plus_y;
    let entry_x = select(r.max_x, r.min_x, plus_x);
    let entry_y = select(r.max_y, r.min_y, plus_y);
    let exit_x = select(r.min_x, r.max_x, plus_x);
    let exit_y = select(r.min_y, r.max_y, plus_y);

    // Entry: the later of the slab entries of the axes the start lies outside of; a tie is a
    // corner, and marks both sides.
    var enter_axis = AXIS_NONE;
    var entry = 0u;
    if (start_out_x) {
        enter_axis = AXIS_X;
        entry = select(SIDE_MAX_X, SIDE_MIN_X, plus_x);
    }
    if (start_out_y) {
        let side_y = select(SIDE_MAX_Y, SIDE_MIN_Y, plus_y);
        if (start_out_x) {
            let order = compare_crossings(s, entry_x, entry_y, flip);
            if (order == UNCERTAIN) { return uncertain_pair(); } // backend: the host re-decides
            if (order < 0) {
                enter_axis = AXIS_Y;
                entry = side_y;
            } else if (order == 0) {
                entry = entry | side_y;
            }
        } else {
            enter_axis = AXIS_Y;
            entry = side_y;
        }
    }

    // Exit: the earlier of the slab exits of the axes the end lies outside of.
    var leave_axis = AXIS_NONE;
    var exit = 0u;
    if (end_out_x) {
        leave_axis = AXIS_X;
        exit = select(SIDE_MIN_X, SIDE_MAX_X, plus_x);
    }
    if (end_out_y) {
        let side_y = select(SIDE_MIN_Y, SIDE_MAX_Y, plus_y);
        if (end_out_x) {
            let order = compare_crossings(s, exit_x, exit_y, flip);
            if (order == UNCERTAIN) { return uncertain_pair(); } // backend: the host re-decides
            if (order > 0) {
                leave_axis = AXIS_Y;
                exit = side_y;
            } else if (order == 0) {
                exit = exit | side_y;
            }
        } else {
            leave_axis = AXIS_Y;
            exit = side_y;
        }
    }

    // Hit when the parameter interval [enter, leave] is not empty. Without an entry it starts
    // at 0, without an exit it ends at 1, and on one axis the entry never follows the exit, so
    // only an entry and an exit on different axes need comparing: their lines meet at a corner.
    if (enter_axis != AXIS_NONE && leave_axis != AXIS_NONE && enter_axis != leave_axis) {
        let enter_on_x = enter_axis == AXIS_X;
        let bx = select(exit_x, entry_x, enter_on_x);
        let by = select(entry_y, exit_y, enter_on_x);
        // Sign of t_enter - t_leave: t_x - t_y with the entry on x, t_y - t_x with it on y.
        let late = flip == enter_on_x;
        let order = compare_crossings(s, bx, by, late);
        if (order == UNCERTAIN) { return uncertain_pair(); } // backend: the host re-decides
        if (order > 0) {
            return PairResult(0.0, 0.0, 0u);
        }
    }

    var flags = FLAG_HIT | (entry << ENTRY_SHIFT) | (exit << EXIT_SHIFT);
    // t in [0, 1], t_enter <= t_exit, and never -0.0: select the bound itself whenever t does
    // not exceed it.
    var t_enter = 0.0;
    var t_exit = 1.0;
    if (start_inside) {
        flags = flags | FLAG_START_INSIDE;
    } else {
        let on_x = enter_axis == AXIS_X;
        let bound = select(entry_y, entry_x, on_x);
        let c0 = select(s.y0, s.x0, on_x);
        let c1 = select(s.y1, s.x1, on_x);
        let t = crossing_time(bound, c0, c1);
        if (!time_is_certain(bound, c0, c1, t)) { return uncertain_pair(); } // backend: the host re-decides
        t_enter = select(0.0, min(t, 1.0), t > 0.0);
    }
    if (end_inside) {
        flags = flags | FLAG_END_INSIDE;
    } else {
        let on_x = leave_axis == AXIS_X;
        let bound = select(exit_y, exit_x, on_x);
        let c0 = select(s.y0, s.x0, on_x);
        let c1 = select(s.y1, s.x1, on_x);
        let t = crossing_time(bound, c0, c1);
        if (!time_is_certain(bound, c0, c1, t)) { return uncertain_pair(); } // backend: the host re-decides
        t_exit = select(t_enter, min(t, 1.0), t > t_enter);
    }
    return PairResult(t_enter, t_exit, flags);
}

// GPU only (the CPU mirror decides these inline, exactly). A pair the filter could not certify.
fn uncertain_pair() -> PairResult {
    return PairResult(0.0, 0.0, FLAG_UNCERTAIN);
}

// GPU only. Whether t can be trusted on a GPU that may flush subnormals: the differences it is
// computed from, and t itself, must not be tiny (WGSL's division bound also holds only for
// divisors from 2^-126 up). A zero numerator is exact, and then t is exactly 0.
fn time_is_certain(bound: f32, c0: f32, c1: f32, t: f32) -> bool {
    // Same bits: the numerator is exactly zero (a zero of the other sign takes the host path).
    let num_is_zero = bitcast<u32>(bound) == bitcast<u32>(c0);
    let num_is_fine = abs(bound - c0) >= TINY_DIFFERENCE && t >= TINY_DIFFERENCE;
    return abs(c1 - c0) >= TINY_DIFFERENCE && (num_is_zero || num_is_fine);
}
