// Segment vs closed axis-aligned rectangle (Liang–Barsky with exact decisions): the function
// every rectcast kernel calls, and the one users include in their own shaders
// (`rectcast::gpu::shader::SEGMENT_RECT_WGSL`).
//
// CPU mirror: src/cpu/segment_rect.rs, with the same names and the same branch order. The
// contract is docs/semantics.md; change both files together.
//
// Every number comes from the host as a pipeline-overridable constant (src/gpu/shader.rs
// `constants()`), so there is nothing here to keep in sync by hand. A result whose flags are
// exactly FLAG_UNCERTAIN is a pair the floating-point filter could not decide with certainty,
// or whose t the integer path could not hold: the caller must decide it another way (rectcast
// re-decides it on the host).
//
// t is computed without floating-point arithmetic (crossing_time), so it is the correctly
// rounded value on any GPU, however it divides, rounds or flushes. The only float arithmetic
// left is the filter of compare_crossings, whose bound covers all of that.

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
// The floating-point filter (src/cpu/rect_pairs.rs, `filter`, derives them).
override FILTER_RELATIVE: f32;
override FILTER_ABSOLUTE: f32;
override FILTER_FLOOR: f32;
// The exact t (src/cpu/segment_rect.rs, `time`).
override MAX_SPREAD: i32;
override ZERO_EXPONENT: i32;
// Test-only emulation of what other hardware may do with float arithmetic (src/gpu/emulation.rs,
// `Emulation`): EMULATION is one of the EMULATE_* values, EMULATE_NATIVE in production.
override EMULATION: u32;
override EMULATE_NATIVE: u32;
override EMULATE_ROUNDING: u32;
override EMULATE_FLUSH: u32;
override EMULATE_FUSED: u32;
override EMULATE_UNCERTIFIED: u32;

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

// The side of segment s's line that the point (bx, by) lies on, as det = (bx - x0)(y1 - y0) -
// (by - y0)(x1 - x0) in f32 and a bound its error is below (valid with rounding toward zero,
// fused multiply-adds, and subnormals flushed anywhere): (det, bound).
fn crossing_det(s: Segment, bx: f32, by: f32) -> vec2<f32> {
    let a = f_sub(bx, s.x0);
    let b = f_sub(s.y1, s.y0);
    let c = f_sub(by, s.y0);
    let d = f_sub(s.x1, s.x0);
    let left = f_mul(a, b);
    let right = f_mul(c, d);
    let det = f_mul_sub(a, b, left, right);
    let bound = f_add(f_add(f_mul(FILTER_RELATIVE, f_add(abs(left), abs(right))),
        f_mul(FILTER_ABSOLUTE, f_add(f_add(abs(a), abs(b)), f_add(abs(c), abs(d))))),
        FILTER_FLOOR);
    return vec2<f32>(det, bound);
}

// Sign of t_x - t_y, where the segment's line crosses x = bx at t_x and y = by at t_y, or
// UNCERTAIN: the sign of crossing_det, flipped when the directions' signs differ, used only
// when it exceeds the filter's error bound.
fn compare_crossings(s: Segment, bx: f32, by: f32, flip: bool) -> i32 {
    let det = crossing_det(s, bx, by);
    var sign = UNCERTAIN;
    if (det.x > det.y) {
        sign = 1;
    }
    if (det.x < -det.y) {
        sign = -1;
    }
    return select(sign, -sign, flip && sign != UNCERTAIN);
}

// Two certified signs of compare_crossings that agree: the points lie strictly on one side of
// the line. An uncertain sign decides nothing.
fn same_certain_side(a: i32, b: i32) -> bool {
    return a == b && a != UNCERTAIN;
}

// Whether the line through segment s misses the closed box b: its four corners lie strictly on
// one side of it, certainly (compare_crossings, whose bound holds on any GPU). A false is no
// answer. With the boxes overlapping, this is the last separating axis between a segment and
// a box; the shapes' kernels skip their exact path on it (a circle inside its box).
fn line_misses_box(s: Segment, b: Rect) -> bool {
    let side = compare_crossings(s, b.min_x, b.min_y, false);
    return same_certain_side(side, compare_crossings(s, b.max_x, b.min_y, false))
        && same_certain_side(side, compare_crossings(s, b.min_x, b.max_y, false))
        && same_certain_side(side, compare_crossings(s, b.max_x, b.max_y, false));
}

// crossing_time could not give the exact t (values too far apart in magnitude for its 64-bit
// integers): the pair goes to the host. Never a valid t, which is in [0, 1].
const UNCERTAIN_TIME: f32 = -1.0;

// An f32 as mantissa * 2^exponent (mantissa < 2^24), and its sign.
struct FloatParts {
    mantissa: u32,
    exponent: i32,
    negative: bool,
}

// The parts of v, read from its bits (no float operation, so nothing is flushed). A zero gets
// the largest exponent, so that it never sets the scale.
fn float_parts(v: f32) -> FloatParts {
    let bits = bitcast<u32>(v);
    let biased = (bits >> 23u) & 0xffu;
    let fraction = bits & 0x7fffffu;
    let mantissa = select(fraction | 0x800000u, fraction, biased == 0u);
    let exponent = select(i32(max(biased, 1u)) - 150, ZERO_EXPONENT, mantissa == 0u);
    return FloatParts(mantissa, exponent, (bits >> 31u) != 0u);
}

// How many bits p is shifted by on the scale 2^lowest: 0 for a zero.
fn scale_shift(p: FloatParts, lowest: i32) -> i32 {
    return select(p.exponent - lowest, 0, p.mantissa == 0u);
}

// p as a signed 64-bit integer on the scale 2^lowest (the shift is at most MAX_SPREAD).
fn scaled(p: FloatParts, lowest: i32) -> vec2<u32> {
    let magnitude = wide_shl(wide(p.mantissa), u32(scale_shift(p, lowest)));
    return select(magnitude, wide_neg(magnitude), p.negative);
}

// The t at which the line c0 -> c1 crosses c = bound, (bound - c0) / (c1 - c0), correctly
// rounded (to nearest, ties to even), for a crossing in [0, 1]; or UNCERTAIN_TIME. The three
// values are scaled by a common power of two into 64-bit integers, so both differences are
// exact, and divide_rounded rounds their quotient exactly from an integer remainder (a float
// division only estimates it).
fn crossing_time(bound: f32, c0: f32, c1: f32) -> f32 {
    let b = float_parts(bound);
    let p0 = float_parts(c0);
    let p1 = float_parts(c1);
    let lowest = min(min(b.exponent, p0.exponent), p1.exponent);
    let spread = max(max(scale_shift(b, lowest), scale_shift(p0, lowest)), scale_shift(p1, lowest));
    if (spread > MAX_SPREAD) {
        return UNCERTAIN_TIME;
    }
    let w0 = scaled(p0, lowest);
    var num = wide_sub(scaled(b, lowest), w0);
    var den = wide_sub(scaled(p1, lowest), w0);
    // t = num / den: make den positive; num then has its sign, or is zero.
    let flip = wide_is_negative(den);
    num = select(num, wide_neg(num), flip);
    den = select(den, wide_neg(den), flip);
    if (wide_is_zero(den)) {
        return UNCERTAIN_TIME;
    }
    if (wide_is_negative(num) || wide_is_zero(num)) {
        return 0.0;
    }
    if (!wide_lt(num, den)) {
        return 1.0;
    }
    return divide_rounded(num, den);
}

// num / den rounded to the nearest f32 (ties to even), for 0 < num < den < 2^63. The 25-bit
// quotient (24 bits for the mantissa, one to round by) is estimated by a float division of the
// top words, whatever its accuracy, then made exact: the integer remainder is computed and the
// quotient moved until 0 <= remainder < divisor. The remainder is the sticky bit. The quotient
// is at least 2^-63, so never subnormal.
fn divide_rounded(num: vec2<u32>, den: vec2<u32>) -> f32 {
    // den normalised to a top bit of 1, num by the same shift (it stays below den), then num by
    // its own leading zeros: num / den = (rem / div) * 2^-num_zeros, rem / div in (1/2, 2).
    let den_zeros = wide_clz(den);
    let div = wide_shl(den, den_zeros);
    let scaled_num = wide_shl(num, den_zeros);
    let num_zeros = wide_clz(scaled_num);
    let rem = wide_shl(scaled_num, num_zeros);
    // quotient = floor(rem / div * 2^bits), in [2^24, 2^25).
    let bits = select(24u, 25u, wide_lt(rem, div));
    let estimate = f_div(f32(high_word(rem)), f32(high_word(div))) * f32(1u << bits);
    var quotient = clamp(u32(estimate), 1u << 24u, (1u << 25u) - 1u);
    if (EMULATION == EMULATE_UNCERTIFIED) { return time_from(quotient, false, bits, num_zeros); } // backend: test-only control
    var remainder = long_sub(long_shl(rem, bits), long_mul(quotient, div));
    let divisor = long(div);
    var steps = 0;
    while (long_is_negative(remainder) && steps < 64) {
        quotient -= 1u;
        remainder = long_add(remainder, divisor);
        steps += 1;
    }
    while (!long_is_negative(remainder) && !long_lt(remainder, divisor) && steps < 64) {
        quotient += 1u;
        remainder = long_sub(remainder, divisor);
        steps += 1;
    }
    if (steps >= 64) {
        return UNCERTAIN_TIME;
    }
    return time_from(quotient, !long_is_zero(remainder), bits, num_zeros);
}

// The f32 of quotient * 2^-(bits + num_zeros) (plus less than one unit when sticky), rounded
// to nearest even on the quotient's last bit.
fn time_from(quotient: u32, sticky: bool, bits: u32, num_zeros: u32) -> f32 {
    let round_up = (quotient & 1u) != 0u && (sticky || (quotient & 2u) != 0u);
    let mantissa = (quotient >> 1u) + select(0u, 1u, round_up);
    let exponent = 24 - i32(bits) - i32(num_zeros);
    // mantissa in [2^23, 2^24]: adding it to the exponent field carries into the exponent when
    // the rounding reaches 2^24.
    return bitcast<f32>((u32(exponent + 126) << 23u) + mantissa);
}

// One segment against one closed rectangle: the per-pair contract (docs/semantics.md), every
// decision exact and both t correctly rounded; or FLAG_UNCERTAIN alone, for the host.
fn segment_rect(s: Segment, r: Rect) -> PairResult {
    let result = pair_flags(s, r);
    if ((result.flags & FLAG_HIT) == 0u) {
        return result;
    }
    return pair_times(s, r, result);
}

// The decisions of segment_rect alone: its flags, with both t left 0. A query that needs no t
// (counts), or t of one pair only (the first hit), calls this for every pair.
fn pair_flags(s: Segment, r: Rect) -> PairResult {
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
    if (start_inside) {
        flags = flags | FLAG_START_INSIDE;
    }
    if (end_inside) {
        flags = flags | FLAG_END_INSIDE;
    }
    return PairResult(0.0, 0.0, flags);
}

// The t of a side crossing: on the axis of the sides `sides` (x at a corner, where both axes
// give the same exact t, hence the same rounded one), at that side's bound.
fn side_crossing_time(s: Segment, r: Rect, sides: u32) -> f32 {
    let on_x = (sides & (SIDE_MIN_X | SIDE_MAX_X)) != 0u;
    let bound = select(
        select(r.max_y, r.min_y, (sides & SIDE_MIN_Y) != 0u),
        select(r.max_x, r.min_x, (sides & SIDE_MIN_X) != 0u),
        on_x,
    );
    let c0 = select(s.y0, s.x0, on_x);
    let c1 = select(s.y1, s.x1, on_x);
    return crossing_time(bound, c0, c1);
}

// A hit's result from pair_flags with both t filled in: 0 for t_enter when the start is inside,
// else the entry's crossing; 1 for t_exit when the end is inside, else the exit's.
fn pair_times(s: Segment, r: Rect, decided: PairResult) -> PairResult {
    var result = decided;
    result.t_enter = 0.0;
    result.t_exit = 1.0;
    if ((decided.flags & FLAG_START_INSIDE) == 0u) {
        let entry = (decided.flags >> ENTRY_SHIFT) & 0xfu;
        result.t_enter = side_crossing_time(s, r, entry);
        if (result.t_enter == UNCERTAIN_TIME) { return uncertain_pair(); } // backend: the host rounds it
    }
    if ((decided.flags & FLAG_END_INSIDE) == 0u) {
        let exit = (decided.flags >> EXIT_SHIFT) & 0xfu;
        result.t_exit = side_crossing_time(s, r, exit);
        if (result.t_exit == UNCERTAIN_TIME) { return uncertain_pair(); } // backend: the host rounds it
    }
    return result;
}

// GPU only (the CPU mirror decides these inline, exactly). A pair the filter could not certify.
fn uncertain_pair() -> PairResult {
    return PairResult(0.0, 0.0, FLAG_UNCERTAIN);
}

// 64-bit integers as two u32 words, low word first (the CPU mirror has u64: `Wide`).

fn wide(v: u32) -> vec2<u32> {
    return vec2<u32>(v, 0u);
}

fn wide_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(a.x - b.x, a.y - b.y - borrow);
}

fn wide_neg(a: vec2<u32>) -> vec2<u32> {
    return wide_sub(vec2<u32>(0u, 0u), a);
}

// a << shift, for shift < 64 (WGSL takes a u32 shift modulo 32: each case keeps it below).
fn wide_shl(a: vec2<u32>, shift: u32) -> vec2<u32> {
    if (shift == 0u) {
        return a;
    }
    if (shift >= 32u) {
        return vec2<u32>(0u, a.x << (shift - 32u));
    }
    return vec2<u32>(a.x << shift, (a.y << shift) | (a.x >> (32u - shift)));
}

fn wide_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn wide_is_negative(a: vec2<u32>) -> bool {
    return (a.y >> 31u) != 0u;
}

fn wide_is_zero(a: vec2<u32>) -> bool {
    return a.x == 0u && a.y == 0u;
}

// The top 32 bits.
fn high_word(a: vec2<u32>) -> u32 {
    return a.y;
}

fn wide_clz(a: vec2<u32>) -> u32 {
    return select(countLeadingZeros(a.y), 32u + countLeadingZeros(a.x), a.y == 0u);
}

// 96-bit signed integers as three u32 words, low word first (the CPU mirror has i128: `Long`).

fn long(a: vec2<u32>) -> vec3<u32> {
    return vec3<u32>(a.x, a.y, 0u);
}

// a << shift, for 0 < shift < 32.
fn long_shl(a: vec2<u32>, shift: u32) -> vec3<u32> {
    return vec3<u32>(a.x << shift, (a.y << shift) | (a.x >> (32u - shift)), a.y >> (32u - shift));
}

// The full product of two u32, as a 64-bit integer (16-bit halves: no product overflows).
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let middle = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let low = (p00 & 0xffffu) | (middle << 16u);
    let high = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (middle >> 16u);
    return vec2<u32>(low, high);
}

// c * d, for c < 2^25 (the product is below 2^89).
fn long_mul(c: u32, d: vec2<u32>) -> vec3<u32> {
    let low = mul_wide(c, d.x);
    let high = mul_wide(c, d.y);
    let middle = low.y + high.x;
    return vec3<u32>(low.x, middle, high.y + select(0u, 1u, middle < low.y));
}

fn long_add(a: vec3<u32>, b: vec3<u32>) -> vec3<u32> {
    let x = a.x + b.x;
    let y = a.y + b.y;
    let y_carried = y + select(0u, 1u, x < a.x);
    let carry = select(0u, 1u, y < a.y) + select(0u, 1u, y_carried < y);
    return vec3<u32>(x, y_carried, a.z + b.z + carry);
}

fn long_sub(a: vec3<u32>, b: vec3<u32>) -> vec3<u32> {
    let x = a.x - b.x;
    let y = a.y - b.y;
    let borrow_x = select(0u, 1u, a.x < b.x);
    let y_borrowed = y - borrow_x;
    let borrow = select(0u, 1u, a.y < b.y) + select(0u, 1u, y < borrow_x);
    return vec3<u32>(x, y_borrowed, a.z - b.z - borrow);
}

fn long_is_negative(a: vec3<u32>) -> bool {
    return (a.z >> 31u) != 0u;
}

fn long_is_zero(a: vec3<u32>) -> bool {
    return a.x == 0u && a.y == 0u && a.z == 0u;
}

// a < b, for a, b >= 0.
fn long_lt(a: vec3<u32>, b: vec3<u32>) -> bool {
    return a.z < b.z || (a.z == b.z && (a.y < b.y || (a.y == b.y && a.x < b.x)));
}

// Float arithmetic as the hardware being emulated does it (EMULATION; plain in production,
// where every branch below folds away). The filter's bound holds for each mode.

// A result moved by up to `reach` ulp, the amount hashed from the operands: a fixed function
// of the inputs, like a real GPU's rounding (EMULATE_ROUNDING).
fn nudged(v: f32, a: f32, b: f32, reach: u32) -> f32 {
    var h = (bitcast<u32>(a) * 0x9e3779b9u) ^ (bitcast<u32>(b) + 0x7f4a7c15u);
    h = (h ^ (h >> 15u)) * 0x2c1b3c6du;
    h = h ^ (h >> 12u);
    let k = i32(h % (2u * reach + 1u)) - i32(reach);
    let bits = bitcast<u32>(v);
    if ((bits & 0x7fffffffu) == 0u || (bits & 0x7fffffffu) < u32(max(-k, 0))) {
        return v;
    }
    return bitcast<f32>(u32(i32(bits) + k));
}

// A subnormal as zero, its sign kept (EMULATE_FLUSH: inputs and results).
fn flushed(v: f32) -> f32 {
    let bits = bitcast<u32>(v);
    if (EMULATION == EMULATE_FLUSH && (bits & 0x7f800000u) == 0u) {
        return bitcast<f32>(bits & 0x80000000u);
    }
    return v;
}

fn emulated(v: f32, a: f32, b: f32) -> f32 {
    if (EMULATION == EMULATE_ROUNDING || EMULATION == EMULATE_UNCERTIFIED) {
        return nudged(v, a, b, 1u);
    }
    return flushed(v);
}

fn f_add(a: f32, b: f32) -> f32 {
    return emulated(flushed(a) + flushed(b), a, b);
}

fn f_sub(a: f32, b: f32) -> f32 {
    return emulated(flushed(a) - flushed(b), a, b);
}

fn f_mul(a: f32, b: f32) -> f32 {
    return emulated(flushed(a) * flushed(b), a, b);
}

// a * b - right, where left = a * b. Under EMULATE_FUSED, a * b is not rounded first, as a
// fused multiply-add would do: WGSL's fma() may itself be unfused (it is on lavapipe), so the
// product is taken in exact partial products of 12-bit halves (split by masking bits, which no
// compiler can reassociate) and only the sums round.
fn f_mul_sub(a: f32, b: f32, left: f32, right: f32) -> f32 {
    if (EMULATION == EMULATE_FUSED) {
        let a_high = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
        let b_high = bitcast<f32>(bitcast<u32>(b) & 0xfffff000u);
        let a_low = a - a_high;
        let b_low = b - b_high;
        return (((a_high * b_high - right) + a_high * b_low) + a_low * b_high) + a_low * b_low;
    }
    return f_sub(left, right);
}

// a * b - c * d, with either product perhaps fused into the subtraction (f_mul_sub).
fn f_det(a: f32, b: f32, c: f32, d: f32) -> f32 {
    return f_mul_sub(a, b, f_mul(a, b), f_mul(c, d));
}

// a / b, off by up to 2 ulp under EMULATE_ROUNDING (and the control), as WGSL allows.
fn f_div(a: f32, b: f32) -> f32 {
    if (EMULATION == EMULATE_ROUNDING || EMULATION == EMULATE_UNCERTIFIED) {
        return nudged(a / b, a, b, 2u);
    }
    return a / b;
}
