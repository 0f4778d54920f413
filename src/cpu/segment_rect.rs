//! CPU mirror of `shaders/segment_rect.wgsl`: the same functions under the same names, in the
//! same branch order. [`segment_rect`] is the executable form of the contract in
//! docs/semantics.md.
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "kept line for line comparable with the WGSL"
)]

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
    /// On the GPU, a difference t is computed from, or t itself, below this magnitude (and not
    /// exactly zero) sends the pair to the host, since the GPU may have flushed it: 2^-100.
    pub const TINY_DIFFERENCE: f32 = 1.0 / (1u128 << 100) as f32;
}

use filter::{FILTER_ABSOLUTE, FILTER_FLOOR, FILTER_RELATIVE};

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

/// Sign of t_x − t_y, where the segment's line crosses x = bx at t_x and y = by at t_y
/// (requires x0 != x1 and y0 != y1), or UNCERTAIN. That is the side of the line p0 -> p1 the
/// point (bx, by) lies on, `det = (bx − x0)·(y1 − y0) − (by − y0)·(x1 − x0)`, times the signs
/// of the two directions; the sign of det is used only when the filter certifies it.
#[inline(always)]
pub(crate) fn compare_crossings(s: &Segment, bx: f32, by: f32, flip: bool) -> i32 {
    let a = bx - s.x0;
    let b = s.y1 - s.y0;
    let c = by - s.y0;
    let d = s.x1 - s.x0;
    let left = a * b;
    let right = c * d;
    let det = left - right;
    let bound = FILTER_RELATIVE * (left.abs() + right.abs())
        + FILTER_ABSOLUTE * (a.abs() + b.abs() + c.abs() + d.abs())
        + FILTER_FLOOR;
    let mut sign = UNCERTAIN;
    if det > bound {
        sign = 1;
    }
    if det < -bound {
        sign = -1;
    }
    select_i32(sign, -sign, flip && sign != UNCERTAIN)
}

/// a + b as an unevaluated sum hi + lo, exactly (Knuth's TwoSum: no branch, no multiply).
/// The shader multiplies each step by an opaque 1.0 (`rectcast_one`) so that its compiler cannot
/// reassociate the steps; Rust never reassociates floating point.
#[inline(always)]
fn two_sum(a: f32, b: f32) -> [f32; 2] {
    let hi = a + b;
    let b_virtual = hi - a;
    let a_virtual = hi - b_virtual;
    [hi, (a - a_virtual) + (b - b_virtual)]
}

/// The t at which the line c0 -> c1 crosses c = bound: (bound − c0) / (c1 − c0), with both
/// differences carried exactly as two-term sums, so that only the division rounds (and the final
/// sum): within 1 ulp of the exact value when the division is correctly rounded, as on a CPU.
#[inline(always)]
fn crossing_time(bound: f32, c0: f32, c1: f32) -> f32 {
    let num = two_sum(bound, -c0);
    let den = two_sum(c1, -c0);
    let q = num[0] / den[0];
    q + (num[1] - q * den[1]) / den[0]
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
/// with every decision exact.
///
/// - Boundary points are inside: a corner touch, a segment ending on an edge or running along
///   one is a hit.
/// - A zero-length segment is a point: [`Kind::Inside`](crate::Kind::Inside) with t 0..1 when the
///   point is in the rectangle, else a miss.
/// - A side the segment only runs along (parallel, on its line) is never an entry or exit side;
///   entering or leaving through a corner sets both of its sides.
/// - t is within 1 ulp of the correctly rounded exact value.
///
/// Inputs must be valid (finite, |value| <= 2^62, min <= max); [`crate::Engine`] checks that
/// before any work. This function itself never panics.
#[inline]
pub fn segment_rect(s: &Segment, r: &Rect) -> PairResult {
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
    // t in [0, 1], t_enter <= t_exit, and never -0.0: select the bound itself whenever t does
    // not exceed it.
    let mut t_enter = 0.0;
    let mut t_exit = 1.0;
    if start_inside {
        flags |= flags::START_INSIDE;
    } else {
        let on_x = enter_axis == AXIS_X;
        let bound = select_f32(entry_y, entry_x, on_x);
        let c0 = select_f32(s.y0, s.x0, on_x);
        let c1 = select_f32(s.y1, s.x1, on_x);
        let t = crossing_time(bound, c0, c1);
        t_enter = select_f32(0.0, t.min(1.0), t > 0.0);
    }
    if end_inside {
        flags |= flags::END_INSIDE;
    } else {
        let on_x = leave_axis == AXIS_X;
        let bound = select_f32(exit_y, exit_x, on_x);
        let c0 = select_f32(s.y0, s.x0, on_x);
        let c1 = select_f32(s.y1, s.x1, on_x);
        let t = crossing_time(bound, c0, c1);
        t_exit = select_f32(t_enter, t.min(1.0), t > t_enter);
    }
    PairResult {
        t_enter,
        t_exit,
        flags,
    }
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
