//! CPU mirror of `shaders/segment_rect.wgsl`: the same functions under the same names, in the
//! same branch order. [`segment_rect`] is the executable form of the contract in
//! docs/semantics.md.
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "kept line for line comparable with the WGSL"
)]

use super::arithmetic::{F32Arithmetic, Ieee};
use crate::types::{PairResult, Rect, Segment, Sides, flags};

const SIDE_MIN_X: u32 = Sides::MIN_X.bits();
const SIDE_MAX_X: u32 = Sides::MAX_X.bits();
const SIDE_MIN_Y: u32 = Sides::MIN_Y.bits();
const SIDE_MAX_Y: u32 = Sides::MAX_Y.bits();

/// The constants of the floating-point filter: the one source for the CPU mirror and the shader
/// (which receives them as overrides of the same names).
///
/// The filter evaluates `det = a·b − c·d` in f32, where a, b, c, d are differences of inputs.
/// Whatever a backend does within the WGSL / Vulkan rules — round to nearest or toward zero
/// (relative error 2^-23 per operation), fuse a multiply-add, flush any subnormal input or
/// result to zero (absolute error 2^-126 per value) — the computed det differs from the exact
/// one by less than the bound
/// `FILTER_RELATIVE·(|a·b| + |c·d|) + FILTER_ABSOLUTE·(|a| + |b| + |c| + |d|) + FILTER_FLOOR`
/// (derived in docs/semantics.md). Beyond it the sign is certain; within it the decision is
/// made exactly.
pub mod filter {
    /// 4.01 · 2^-23, the relative error of det, rounded up to a power of two (2^-21) and doubled
    /// for the rounding of the bound itself.
    pub const FILTER_RELATIVE: f32 = 1.0 / (1u32 << 20) as f32;
    /// Covers 3.1 · 2^-126 per difference (a flushed operand or result), times the other factor.
    pub const FILTER_ABSOLUTE: f32 = 1.0 / (1u128 << 124) as f32;
    /// Covers the flushed products and det (3 · 2^-126) and a flushed absolute term of the bound
    /// (< 12.4 · 2^-126), with room to spare: 2^-120.
    pub const FILTER_FLOOR: f32 = 1.0 / (1u128 << 120) as f32;
}

/// The constants of the exact t (`crossing_time`): the one source for the CPU mirror and the
/// shader (overrides of the same names).
pub mod time {
    /// The largest exponent spread `crossing_time` handles: three values m·2^e (m < 2^24) whose
    /// exponents e differ by at most this are, on a common scale, integers below 2^62, so that
    /// their differences fit a signed 64-bit integer. Beyond it (a value 2^38 times another), t
    /// is rounded exactly another way: inline on the CPU, on the host for the GPU.
    pub const MAX_SPREAD: i32 = 38;
    /// The exponent `float_parts` gives a zero: above every f32's (at most 104), so that a zero
    /// never sets the scale.
    pub const ZERO_EXPONENT: i32 = 1 << 10;
}

use filter::{FILTER_ABSOLUTE, FILTER_FLOOR, FILTER_RELATIVE};
use time::{MAX_SPREAD, ZERO_EXPONENT};

/// `compare_crossings` could not certify the sign; the caller decides exactly. Like the shader's
/// `UNCERTAIN` and `AXIS_*`, a value private to the kernel: the two sides never exchange it, so
/// nothing has to be kept in sync.
pub(crate) const UNCERTAIN: i32 = 2;

/// Which axis a bound was crossed on.
pub(crate) const AXIS_NONE: u32 = 0;
pub(crate) const AXIS_X: u32 = 1;
pub(crate) const AXIS_Y: u32 = 2;

/// What comparisons of inputs compare: on the CPU the value itself. Rust's floating point is
/// IEEE 754 with subnormals (no flush to zero), so f32 comparisons are exact and -0.0 == +0.0.
/// The shader compares integers that order like the values instead, because a GPU may flush
/// subnormals in float comparisons (`order_key` there).
#[inline(always)]
pub(crate) fn order_key(v: f32) -> f32 {
    v
}

#[inline(always)]
fn outside_slab(c: f32, lo: f32, hi: f32) -> bool {
    c < lo || c > hi
}

/// Both ends beyond the same side of the slab lo..hi: no point of the segment is in it.
#[inline(always)]
fn beyond_one_side(c0: f32, c1: f32, lo: f32, hi: f32) -> bool {
    (c0 < lo && c1 < lo) || (c0 > hi && c1 > hi)
}

/// The side of segment `s`'s line that the point (bx, by) lies on, as
/// `det = (bx − x0)·(y1 − y0) − (by − y0)·(x1 − x0)` computed by `ops`, and a bound its error
/// is below on any arithmetic WGSL allows ([`filter`]): `(det, bound)`.
#[inline(always)]
pub fn crossing_det(
    ops: &(impl F32Arithmetic + ?Sized),
    s: &Segment,
    bx: f32,
    by: f32,
) -> (f32, f32) {
    let a = ops.sub(bx, s.x0);
    let b = ops.sub(s.y1, s.y0);
    let c = ops.sub(by, s.y0);
    let d = ops.sub(s.x1, s.x0);
    let left = ops.mul(a, b);
    let right = ops.mul(c, d);
    let det = ops.det(a, b, c, d);
    let bound = ops.add(
        ops.add(
            ops.mul(FILTER_RELATIVE, ops.add(left.abs(), right.abs())),
            ops.mul(
                FILTER_ABSOLUTE,
                ops.add(ops.add(a.abs(), b.abs()), ops.add(c.abs(), d.abs())),
            ),
        ),
        FILTER_FLOOR,
    );
    (det, bound)
}

/// Sign of t_x − t_y, where the segment's line crosses x = bx at t_x and y = by at t_y
/// (requires x0 != x1 and y0 != y1), or UNCERTAIN. That is the side of the line p0 -> p1 the
/// point (bx, by) lies on ([`crossing_det`]), times the signs of the two directions; the sign
/// of det is used only when the filter certifies it.
#[inline(always)]
pub(crate) fn compare_crossings(s: &Segment, bx: f32, by: f32, flip: bool) -> i32 {
    let det = crossing_det(&Ieee, s, bx, by);
    let mut sign = UNCERTAIN;
    if det.0 > det.1 {
        sign = 1;
    }
    if det.0 < -det.1 {
        sign = -1;
    }
    select_i32(sign, -sign, flip && sign != UNCERTAIN)
}

/// Two certified signs of `compare_crossings` that agree: the points lie strictly on one side
/// of the line. An uncertain sign decides nothing.
#[inline(always)]
pub(crate) fn same_certain_side(a: i32, b: i32) -> bool {
    a == b && a != UNCERTAIN
}

/// Whether the line through segment `s` misses the closed box `b`: its four corners lie strictly
/// on one side of it, certainly (`compare_crossings`, whose bound holds on any GPU). `false`
/// is no answer. With the boxes overlapping, this is the last separating axis between a segment
/// and a box; the shapes' kernels skip their exact path on it (a circle lies inside its box,
/// [`crate::Shape::bounds`]).
#[inline(always)]
pub fn line_misses_box(s: &Segment, b: &Rect) -> bool {
    let side = compare_crossings(s, b.min_x, b.min_y, false);
    same_certain_side(side, compare_crossings(s, b.max_x, b.min_y, false))
        && same_certain_side(side, compare_crossings(s, b.min_x, b.max_y, false))
        && same_certain_side(side, compare_crossings(s, b.max_x, b.max_y, false))
}

/// `crossing_time` could not give the exact t: the values are too far apart in magnitude for its
/// 64-bit integers. The caller rounds exactly another way (the CPU inline, in
/// [`round_exactly`]; the GPU sends the pair to the host). Never a valid t, which is in [0, 1].
pub(crate) const UNCERTAIN_TIME: f32 = -1.0;

/// An f32 as `mantissa · 2^exponent` (mantissa < 2^24), and its sign.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FloatParts {
    mantissa: u32,
    exponent: i32,
    negative: bool,
}

/// The parts of `v`, read from its bits (no floating-point operation, so nothing is flushed).
/// A zero gets the largest exponent, so that it never sets the scale.
#[inline(always)]
fn float_parts(v: f32) -> FloatParts {
    let bits = v.to_bits();
    let biased = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    let mantissa = select(fraction | 0x80_0000, fraction, biased == 0);
    let exponent = select_i32(biased.max(1) as i32 - 150, ZERO_EXPONENT, mantissa == 0);
    FloatParts {
        mantissa,
        exponent,
        negative: (bits >> 31) != 0,
    }
}

/// How many bits `p` is shifted by on the scale `2^lowest`: 0 for a zero.
#[inline(always)]
fn scale_shift(p: FloatParts, lowest: i32) -> i32 {
    select_i32(p.exponent - lowest, 0, p.mantissa == 0)
}

/// `p` as a signed 64-bit integer on the scale `2^lowest` (the shift is at most MAX_SPREAD).
#[inline(always)]
fn scaled(p: FloatParts, lowest: i32) -> Wide {
    let magnitude = wide_shl(wide(p.mantissa), scale_shift(p, lowest) as u32);
    select_wide(magnitude, wide_neg(magnitude), p.negative)
}

/// The t at which the line c0 -> c1 crosses c = bound, `(bound − c0) / (c1 − c0)`, correctly
/// rounded (to nearest, ties to even), for a crossing in [0, 1]; or UNCERTAIN_TIME.
///
/// The three values are scaled by a common power of two into 64-bit integers, so both
/// differences are exact, and [`divide_rounded`] rounds their quotient exactly from an integer
/// remainder (a float division only estimates it). So the result does not depend on how a GPU
/// divides, rounds or flushes. Values more than 2^MAX_SPREAD apart in magnitude do not fit: UNCERTAIN_TIME.
#[inline(always)]
pub(crate) fn crossing_time(bound: f32, c0: f32, c1: f32) -> f32 {
    let b = float_parts(bound);
    let p0 = float_parts(c0);
    let p1 = float_parts(c1);
    let lowest = b.exponent.min(p0.exponent).min(p1.exponent);
    let spread = scale_shift(b, lowest)
        .max(scale_shift(p0, lowest))
        .max(scale_shift(p1, lowest));
    if spread > MAX_SPREAD {
        return UNCERTAIN_TIME;
    }
    let w0 = scaled(p0, lowest);
    let num = wide_sub(scaled(b, lowest), w0);
    let den = wide_sub(scaled(p1, lowest), w0);
    // t = num / den: make den positive; num then has its sign, or is zero.
    let flip = wide_is_negative(den);
    let num = select_wide(num, wide_neg(num), flip);
    let den = select_wide(den, wide_neg(den), flip);
    if wide_is_zero(den) {
        return UNCERTAIN_TIME;
    }
    if wide_is_negative(num) || wide_is_zero(num) {
        return 0.0;
    }
    if !wide_lt(num, den) {
        return 1.0;
    }
    divide_rounded(num, den)
}

/// num / den rounded to the nearest f32 (ties to even), for 0 < num < den < 2^63. The 25-bit
/// quotient (24 bits for the mantissa, one to round by) is estimated by a float division of the
/// top words, whatever its accuracy (a GPU's may be 2.5 ulp off), then made exact: the integer
/// remainder is computed and the quotient moved until 0 <= remainder < divisor. The remainder
/// is the sticky bit. The quotient is at least 2^-63, so never subnormal.
#[inline(always)]
fn divide_rounded(num: Wide, den: Wide) -> f32 {
    // den normalised to a top bit of 1, num by the same shift (it stays below den), then num by
    // its own leading zeros: num / den = (rem / div) · 2^-num_zeros, rem / div in (1/2, 2).
    let den_zeros = wide_clz(den);
    let div = wide_shl(den, den_zeros);
    let scaled_num = wide_shl(num, den_zeros);
    let num_zeros = wide_clz(scaled_num);
    let rem = wide_shl(scaled_num, num_zeros);
    // quotient = floor(rem / div · 2^bits), in [2^24, 2^25).
    let bits = select(24, 25, wide_lt(rem, div));
    let estimate = f_div(high_word(rem) as f32, high_word(div) as f32) * (1u32 << bits) as f32;
    let mut quotient = (estimate as u32).clamp(1 << 24, (1 << 25) - 1);
    let mut remainder = long_sub(long_shl(rem, bits), long_mul(quotient, div));
    let divisor = long(div);
    let mut steps = 0;
    while long_is_negative(remainder) && steps < 64 {
        quotient -= 1;
        remainder = long_add(remainder, divisor);
        steps += 1;
    }
    while !long_is_negative(remainder) && !long_lt(remainder, divisor) && steps < 64 {
        quotient += 1;
        remainder = long_sub(remainder, divisor);
        steps += 1;
    }
    if steps >= 64 {
        return UNCERTAIN_TIME;
    }
    time_from(quotient, !long_is_zero(remainder), bits, num_zeros)
}

/// The f32 of quotient · 2^-(bits + num_zeros) (plus less than one unit when sticky), rounded
/// to nearest even on the quotient's last bit.
#[inline(always)]
fn time_from(quotient: u32, sticky: bool, bits: u32, num_zeros: u32) -> f32 {
    let round_up = (quotient & 1) != 0 && (sticky || (quotient & 2) != 0);
    let mantissa = (quotient >> 1) + select(0, 1, round_up);
    let exponent = 24 - bits as i32 - num_zeros as i32;
    // mantissa in [2^23, 2^24]: adding it to the exponent field carries into the exponent when
    // the rounding reaches 2^24.
    f32::from_bits((((exponent + 126) as u32) << 23) + mantissa)
}

/// WGSL's `select(f, t, cond)`, for u32, i32 and f32.
#[inline(always)]
fn select(f: u32, t: u32, cond: bool) -> u32 {
    if cond { t } else { f }
}

#[inline(always)]
pub(crate) fn select_i32(f: i32, t: i32, cond: bool) -> i32 {
    if cond { t } else { f }
}

#[inline(always)]
fn select_f32(f: f32, t: f32, cond: bool) -> f32 {
    if cond { t } else { f }
}

/// Tests one segment against one closed rectangle: the per-pair contract (docs/semantics.md),
/// with every decision exact and both t correctly rounded.
///
/// - Boundary points are inside: a corner touch, a segment ending on an edge or running along
///   one is a hit.
/// - A zero-length segment is a point: [`Kind::Inside`](crate::Kind::Inside) with t 0..1 when the
///   point is in the rectangle, else a miss.
/// - A side the segment only runs along (parallel, on its line) is never an entry or exit side;
///   entering or leaving through a corner sets both of its sides.
/// - t_enter and t_exit are the exact parameters rounded to the nearest f32 (ties to even).
///
/// Inputs must be valid (finite, |value| <= 2^62, min <= max); [`crate::Engine`] checks that
/// before any work. This function itself never panics.
#[inline]
pub fn segment_rect(s: &Segment, r: &Rect) -> PairResult {
    let result = pair_flags(s, r);
    if (result.flags & flags::HIT) == 0 {
        return result;
    }
    pair_times(s, r, result)
}

/// The decisions of [`segment_rect`] alone: its flags, with both t left 0. A query that needs
/// no t (counts), or t of one pair only (the first hit), calls this for every pair.
#[inline(always)]
pub(crate) fn pair_flags(s: &Segment, r: &Rect) -> PairResult {
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
    if beyond_one_side(x0, x1, min_x, max_x) || beyond_one_side(y0, y1, min_y, max_y) {
        return PairResult::MISS;
    }
    let plus_x = x1 > x0;
    let plus_y = y1 > y0;
    // t_x − t_y has the sign of det times these two signs: flip when they differ.
    let flip = plus_x != plus_y;
    let entry_x = select_f32(r.max_x, r.min_x, plus_x);
    let entry_y = select_f32(r.max_y, r.min_y, plus_y);
    let exit_x = select_f32(r.min_x, r.max_x, plus_x);
    let exit_y = select_f32(r.min_y, r.max_y, plus_y);

    // Entry: the later of the slab entries of the axes the start lies outside of; a tie is a
    // corner, and marks both sides.
    let mut enter_axis = AXIS_NONE;
    let mut entry = 0u32;
    if start_out_x {
        enter_axis = AXIS_X;
        entry = select(SIDE_MAX_X, SIDE_MIN_X, plus_x);
    }
    if start_out_y {
        let side_y = select(SIDE_MAX_Y, SIDE_MIN_Y, plus_y);
        if start_out_x {
            let order = compare_crossings(s, entry_x, entry_y, flip);
            let order = decide_exactly(order, s, entry_x, entry_y, flip); // backend: the CPU decides inline
            if order < 0 {
                enter_axis = AXIS_Y;
                entry = side_y;
            } else if order == 0 {
                entry |= side_y;
            }
        } else {
            enter_axis = AXIS_Y;
            entry = side_y;
        }
    }

    // Exit: the earlier of the slab exits of the axes the end lies outside of.
    let mut leave_axis = AXIS_NONE;
    let mut exit = 0u32;
    if end_out_x {
        leave_axis = AXIS_X;
        exit = select(SIDE_MIN_X, SIDE_MAX_X, plus_x);
    }
    if end_out_y {
        let side_y = select(SIDE_MIN_Y, SIDE_MAX_Y, plus_y);
        if end_out_x {
            let order = compare_crossings(s, exit_x, exit_y, flip);
            let order = decide_exactly(order, s, exit_x, exit_y, flip); // backend: the CPU decides inline
            if order > 0 {
                leave_axis = AXIS_Y;
                exit = side_y;
            } else if order == 0 {
                exit |= side_y;
            }
        } else {
            leave_axis = AXIS_Y;
            exit = side_y;
        }
    }

    // Hit when the parameter interval [enter, leave] is not empty. Without an entry it starts
    // at 0, without an exit it ends at 1, and on one axis the entry never follows the exit, so
    // only an entry and an exit on different axes need comparing: their lines meet at a corner.
    if enter_axis != AXIS_NONE && leave_axis != AXIS_NONE && enter_axis != leave_axis {
        let enter_on_x = enter_axis == AXIS_X;
        let bx = select_f32(exit_x, entry_x, enter_on_x);
        let by = select_f32(entry_y, exit_y, enter_on_x);
        // Sign of t_enter − t_leave: t_x − t_y with the entry on x, t_y − t_x with it on y.
        let late = flip == enter_on_x;
        let order = compare_crossings(s, bx, by, late);
        let order = decide_exactly(order, s, bx, by, late); // backend: the CPU decides inline
        if order > 0 {
            return PairResult::MISS;
        }
    }

    let mut flags = flags::HIT | (entry << flags::ENTRY_SHIFT) | (exit << flags::EXIT_SHIFT);
    if start_inside {
        flags |= flags::START_INSIDE;
    }
    if end_inside {
        flags |= flags::END_INSIDE;
    }
    PairResult {
        t_enter: 0.0,
        t_exit: 0.0,
        flags,
    }
}

/// The line of a side crossing, (bound, c0, c1): on the axis of the sides `sides` (x at a
/// corner, where both axes give the same exact t, hence the same rounded one), that side's
/// bound and the segment's two coordinates on that axis. CPU only: the shader has these lines
/// inline in `side_crossing_time`, and the CPU's batched kernels share them
/// ([`pair_times_in_f64`]).
#[inline(always)]
fn side_line(s: &Segment, r: &Rect, sides: u32) -> (f32, f32, f32) {
    let on_x = (sides & (SIDE_MIN_X | SIDE_MAX_X)) != 0;
    let bound = select_f32(
        select_f32(r.max_y, r.min_y, (sides & SIDE_MIN_Y) != 0),
        select_f32(r.max_x, r.min_x, (sides & SIDE_MIN_X) != 0),
        on_x,
    );
    let c0 = select_f32(s.y0, s.x0, on_x);
    let c1 = select_f32(s.y1, s.x1, on_x);
    (bound, c0, c1)
}

/// The t of a side crossing ([`side_line`]).
#[inline(always)]
fn side_crossing_time(s: &Segment, r: &Rect, sides: u32) -> f32 {
    let (bound, c0, c1) = side_line(s, r, sides);
    let t = crossing_time(bound, c0, c1);
    round_exactly(t, bound, c0, c1) // backend: the CPU rounds inline
}

/// A hit's result from [`pair_flags`] with both t filled in: 0 for t_enter when the start is
/// inside, else the entry's crossing; 1 for t_exit when the end is inside, else the exit's.
#[inline(always)]
pub(crate) fn pair_times(s: &Segment, r: &Rect, decided: PairResult) -> PairResult {
    let mut result = decided;
    result.t_enter = 0.0;
    result.t_exit = 1.0;
    if (decided.flags & flags::START_INSIDE) == 0 {
        let entry = (decided.flags >> flags::ENTRY_SHIFT) & 0xf;
        result.t_enter = side_crossing_time(s, r, entry);
    }
    if (decided.flags & flags::END_INSIDE) == 0 {
        let exit = (decided.flags >> flags::EXIT_SHIFT) & 0xf;
        result.t_exit = side_crossing_time(s, r, exit);
    }
    result
}

/// CPU only, not in the shader (WGSL has no f64): [`pair_times`] for the batched kernels, the
/// same result, each t rounded from f64 where that is certainly right
/// ([`super::rounding::crossing_time_f64`]: almost every pair), else as [`pair_times`] rounds
/// it: both t of a pair in 19 ns instead of 45 (bullet hell's hitting pairs, this project's
/// 2-core AVX-512 VM); the integer t_exit was about a quarter of the time of a bullet that
/// starts in a hitbox.
#[inline(always)]
pub(crate) fn pair_times_in_f64(s: &Segment, r: &Rect, decided: PairResult) -> PairResult {
    let time = |inside: u32, shift: u32| -> Option<f32> {
        if (decided.flags & inside) != 0 {
            return Some(select_f32(1.0, 0.0, inside == flags::START_INSIDE));
        }
        let (bound, c0, c1) = side_line(s, r, (decided.flags >> shift) & 0xf);
        super::rounding::crossing_time_f64(bound, c0, c1)
    };
    match (
        time(flags::START_INSIDE, flags::ENTRY_SHIFT),
        time(flags::END_INSIDE, flags::EXIT_SHIFT),
    ) {
        (Some(t_enter), Some(t_exit)) => PairResult {
            t_enter,
            t_exit,
            flags: decided.flags,
        },
        _ => pair_times(s, r, decided),
    }
}

/// CPU only: [`segment_rect`] for the batched kernels, its t from [`pair_times_in_f64`].
#[inline(always)]
pub(crate) fn segment_rect_in_f64(s: &Segment, r: &Rect) -> PairResult {
    let result = pair_flags(s, r);
    if (result.flags & flags::HIT) == 0 {
        return result;
    }
    pair_times_in_f64(s, r, result)
}

/// CPU only: where the filter left a decision UNCERTAIN, the sign of the same det computed
/// exactly (Shewchuk's adaptive orient2d, exact for f64 inputs, and every f32 is one). The GPU
/// instead marks the pair, and the host runs [`segment_rect`] for it.
#[inline(always)]
pub(crate) fn decide_exactly(order: i32, s: &Segment, bx: f32, by: f32, flip: bool) -> i32 {
    if order != UNCERTAIN {
        return order;
    }
    // orient2d(pa, pb, pc) = (pa − pc) × (pb − pc): with pa = (bx, by), pb = p1, pc = p0 this is
    // det = (bx − x0)·(y1 − y0) − (by − y0)·(x1 − x0).
    let det = robust::orient2d(
        robust::Coord { x: bx, y: by },
        robust::Coord { x: s.x1, y: s.y1 },
        robust::Coord { x: s.x0, y: s.y0 },
    );
    let sign = if det > 0.0 {
        1
    } else if det < 0.0 {
        -1
    } else {
        0
    };
    select_i32(sign, -sign, flip)
}

/// CPU only: where `crossing_time` gave UNCERTAIN_TIME (values too far apart in magnitude for
/// its integers), the same correctly rounded t by [`super::rounding`]. The GPU instead marks
/// the pair, and the host runs [`segment_rect`] for it.
#[inline(always)]
fn round_exactly(t: f32, bound: f32, c0: f32, c1: f32) -> f32 {
    if t != UNCERTAIN_TIME {
        return t;
    }
    super::rounding::crossing_time_exact(bound, c0, c1)
}

/// A signed or unsigned 64-bit integer: the shader builds one from two u32 words
/// (`vec2<u32>`, low word first); the CPU has them. The helpers below keep the shader's names.
pub(crate) type Wide = u64;

#[inline(always)]
fn wide(v: u32) -> Wide {
    v as u64
}

#[inline(always)]
fn wide_sub(a: Wide, b: Wide) -> Wide {
    a.wrapping_sub(b)
}

#[inline(always)]
fn wide_neg(a: Wide) -> Wide {
    a.wrapping_neg()
}

/// `a << shift`, for shift < 64.
#[inline(always)]
fn wide_shl(a: Wide, shift: u32) -> Wide {
    a << shift
}

#[inline(always)]
fn wide_lt(a: Wide, b: Wide) -> bool {
    a < b
}

#[inline(always)]
fn wide_is_negative(a: Wide) -> bool {
    (a >> 63) != 0
}

#[inline(always)]
fn wide_is_zero(a: Wide) -> bool {
    a == 0
}

#[inline(always)]
fn wide_clz(a: Wide) -> u32 {
    a.leading_zeros()
}

#[inline(always)]
fn select_wide(f: Wide, t: Wide, cond: bool) -> Wide {
    if cond { t } else { f }
}

/// The top 32 bits (the shader's `.y` word).
#[inline(always)]
fn high_word(a: Wide) -> u32 {
    (a >> 32) as u32
}

/// A 96-bit signed integer: the shader builds one from three u32 words (`vec3<u32>`); the CPU
/// has i128. The helpers below keep the shader's names.
pub(crate) type Long = i128;

#[inline(always)]
fn long(a: Wide) -> Long {
    a as i128
}

/// `a << shift`, for 0 < shift < 32.
#[inline(always)]
fn long_shl(a: Wide, shift: u32) -> Long {
    (a as i128) << shift
}

/// c · d, for c < 2^25 (the product is below 2^89).
#[inline(always)]
fn long_mul(c: u32, d: Wide) -> Long {
    c as i128 * d as i128
}

#[inline(always)]
fn long_add(a: Long, b: Long) -> Long {
    a.wrapping_add(b)
}

#[inline(always)]
fn long_sub(a: Long, b: Long) -> Long {
    a.wrapping_sub(b)
}

#[inline(always)]
fn long_is_negative(a: Long) -> bool {
    a < 0
}

#[inline(always)]
fn long_is_zero(a: Long) -> bool {
    a == 0
}

/// a < b, for a, b >= 0.
#[inline(always)]
fn long_lt(a: Long, b: Long) -> bool {
    a < b
}

/// a / b (the shader's emulated hardware may err by 2 ulp here; nothing depends on it).
#[inline(always)]
fn f_div(a: f32, b: f32) -> f32 {
    a / b
}
