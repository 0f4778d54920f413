//! CPU mirror of `shaders/pairs.wgsl`: the same functions under the same names, in the same
//! branch order. [`segment_rect`] is the executable form of the contract in docs/semantics.md.
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "kept line for line comparable with the WGSL"
)]

use crate::types::{PairIndex, PairResult, Rect, Segment, Sides, flags};

const SIDE_MIN_X: u32 = Sides::MIN_X.bits();
const SIDE_MAX_X: u32 = Sides::MAX_X.bits();
const SIDE_MIN_Y: u32 = Sides::MIN_Y.bits();
const SIDE_MAX_Y: u32 = Sides::MAX_Y.bits();

/// A parameter on the segment, t = num / den, with den > 0. Mirrors WGSL `Param`.
#[derive(Clone, Copy, Debug)]
struct Param {
    num: f32,
    den: f32,
}

/// Sign of a - b: -1, 0 or 1, by comparing cross products (never subtracting them).
#[inline(always)]
fn compare_params(a: Param, b: Param) -> i32 {
    let lhs = a.num * b.den;
    let rhs = b.num * a.den;
    if lhs < rhs {
        return -1;
    }
    if lhs > rhs {
        return 1;
    }
    0
}

/// Where the line c0 -> c1 enters the slab lo <= c <= hi. Requires c0 != c1.
#[inline(always)]
fn slab_entry(c0: f32, c1: f32, lo: f32, hi: f32) -> Param {
    if c1 > c0 {
        return Param {
            num: lo - c0,
            den: c1 - c0,
        };
    }
    Param {
        num: c0 - hi,
        den: c0 - c1,
    }
}

/// Where the line c0 -> c1 leaves the slab lo <= c <= hi. Requires c0 != c1.
#[inline(always)]
fn slab_exit(c0: f32, c1: f32, lo: f32, hi: f32) -> Param {
    if c1 > c0 {
        return Param {
            num: hi - c0,
            den: c1 - c0,
        };
    }
    Param {
        num: c0 - lo,
        den: c0 - c1,
    }
}

#[inline(always)]
fn outside_slab(c: f32, lo: f32, hi: f32) -> bool {
    c < lo || c > hi
}

/// WGSL's `select(f, t, cond)`, for u32 and f32.
#[inline(always)]
fn select(f: u32, t: u32, cond: bool) -> u32 {
    if cond { t } else { f }
}

#[inline(always)]
fn select_f32(f: f32, t: f32, cond: bool) -> f32 {
    if cond { t } else { f }
}

/// Tests one segment against one closed rectangle: the per-pair contract (docs/semantics.md).
///
/// - Boundary points are inside: a corner touch, a segment ending on an edge or running along
///   one is a hit.
/// - A zero-length segment is a point: [`Kind::Inside`](crate::Kind::Inside) with t 0..1 when the
///   point is in the rectangle, else a miss.
/// - A side the segment only runs along (parallel, on its line) is never an entry or exit side;
///   entering or leaving through a corner sets both of its sides.
///
/// Inputs must be valid (finite, |value| <= 2^62, min <= max); [`crate::Engine`] checks that
/// before any work. This function itself never panics.
#[inline]
pub fn segment_rect(s: &Segment, r: &Rect) -> PairResult {
    let start_out_x = outside_slab(s.x0, r.min_x, r.max_x);
    let start_out_y = outside_slab(s.y0, r.min_y, r.max_y);
    let end_out_x = outside_slab(s.x1, r.min_x, r.max_x);
    let end_out_y = outside_slab(s.y1, r.min_y, r.max_y);
    let start_inside = !start_out_x && !start_out_y;
    let end_inside = !end_out_x && !end_out_y;

    // Parallel to an axis (this also covers a point) and outside that axis' slab: no common point.
    if s.x0 == s.x1 && start_out_x {
        return PairResult::MISS;
    }
    if s.y0 == s.y1 && start_out_y {
        return PairResult::MISS;
    }

    // Entry: the latest slab entry of the axes the start lies outside of, and never before t = 0.
    let mut enter = Param { num: 0.0, den: 1.0 };
    let mut entry = 0u32;
    if start_out_x {
        let entry_x = slab_entry(s.x0, s.x1, r.min_x, r.max_x);
        let side_x = select(SIDE_MAX_X, SIDE_MIN_X, s.x1 > s.x0);
        let order = compare_params(entry_x, enter);
        if order > 0 {
            enter = entry_x;
            entry = side_x;
        } else if order == 0 {
            entry |= side_x;
        }
    }
    if start_out_y {
        let entry_y = slab_entry(s.y0, s.y1, r.min_y, r.max_y);
        let side_y = select(SIDE_MAX_Y, SIDE_MIN_Y, s.y1 > s.y0);
        let order = compare_params(entry_y, enter);
        if order > 0 {
            enter = entry_y;
            entry = side_y;
        } else if order == 0 {
            entry |= side_y;
        }
    }

    // Exit: the earliest slab exit of the axes the end lies outside of, and never after t = 1.
    let mut leave = Param { num: 1.0, den: 1.0 };
    let mut exit = 0u32;
    if end_out_x {
        let exit_x = slab_exit(s.x0, s.x1, r.min_x, r.max_x);
        let side_x = select(SIDE_MIN_X, SIDE_MAX_X, s.x1 > s.x0);
        let order = compare_params(exit_x, leave);
        if order < 0 {
            leave = exit_x;
            exit = side_x;
        } else if order == 0 {
            exit |= side_x;
        }
    }
    if end_out_y {
        let exit_y = slab_exit(s.y0, s.y1, r.min_y, r.max_y);
        let side_y = select(SIDE_MIN_Y, SIDE_MAX_Y, s.y1 > s.y0);
        let order = compare_params(exit_y, leave);
        if order < 0 {
            leave = exit_y;
            exit = side_y;
        } else if order == 0 {
            exit |= side_y;
        }
    }

    // Hit when the parameter interval [enter, leave] is not empty.
    if compare_params(enter, leave) > 0 {
        return PairResult::MISS;
    }

    let mut flags = flags::HIT | (entry << flags::ENTRY_SHIFT) | (exit << flags::EXIT_SHIFT);
    // t in [0, 1], t_enter <= t_exit, and never -0.0 (a numerator can be -0.0, and clamp keeps
    // the sign of a zero): select the bound itself whenever t does not exceed it.
    let mut t_enter = 0.0;
    let mut t_exit = 1.0;
    if start_inside {
        flags |= flags::START_INSIDE;
    } else {
        let t = enter.num / enter.den;
        t_enter = select_f32(0.0, t.min(1.0), t > 0.0);
    }
    if end_inside {
        flags |= flags::END_INSIDE;
    } else {
        let t = leave.num / leave.den;
        t_exit = select_f32(t_enter, t.min(1.0), t > t_enter);
    }
    PairResult {
        t_enter,
        t_exit,
        flags,
    }
}

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
