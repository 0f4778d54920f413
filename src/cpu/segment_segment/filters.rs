//! Segment × segment where floating point certifies the answer: the CPU batch path's filters,
//! before the exact integers of [`super::segment_segment`] (which answer everything else).

use super::SegmentContact;
use crate::cpu::lanes::{HIT_LANES, HitLanes, LaneVerdicts};
use crate::types::Segment;

/// Shewchuk's bound on the error of `l − r`, for `l` and `r` products of two differences of
/// exact values, each difference rounded once, all in f64: `(3 + 16u)·u·(|l| + |r|)`, u = 2^-53.
const CROSS_ERROR: f64 = (3.0 + 16.0 * (f64::EPSILON / 2.0)) * (f64::EPSILON / 2.0);

/// `a × b` in f64 and its error bound, when its sign is certain (|value| above the bound).
fn certain_cross(ax: f64, ay: f64, bx: f64, by: f64) -> Option<(f64, f64)> {
    let (l, r) = (ax * by, ay * bx);
    let value = l - r;
    let bound = CROSS_ERROR * (l.abs() + r.abs());
    (value.abs() > bound).then_some((value, bound))
}

/// `x − y`, when f64 holds it exactly (TwoSum's error is zero).
fn exact_sub(x: f64, y: f64) -> Option<f64> {
    let s = x - y;
    let z = s - x;
    let error = (x - (s - z)) + (-y - z);
    (error == 0.0).then_some(s)
}

/// `a × b`, when f64 holds both products and their difference exactly (a product's error,
/// which a fused multiply-add gives exactly, is zero).
fn exact_cross(ax: f64, ay: f64, bx: f64, by: f64) -> Option<f64> {
    let (l, r) = (ax * by, ay * bx);
    if ax.mul_add(by, -l) != 0.0 || ay.mul_add(bx, -r) != 0.0 {
        return None;
    }
    exact_sub(l, r)
}

/// The answer where `d × e` is 0 or too small to be certain, for the cases floating point can
/// still certify: two points (equal or not), a point certainly off the other segment's line,
/// and segments that f64 computes exactly to lie on parallel lines apart (axis-aligned and
/// equal-slope segments on a grid). `None` otherwise (collinear, or not exact in f64).
/// Boxes meet (the caller checked).
fn parallel_apart(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    let f = |v: f32| v as f64;
    let point = |s: &Segment| s.x0 == s.x1 && s.y0 == s.y1;
    match (point(query), point(wall)) {
        // Two points whose boxes meet (the caller checked): the same point. They touch, every
        // t of the query naming it.
        (true, true) => {
            return Some(SegmentContact {
                t_enter: 0.0,
                t_exit: 1.0,
                contact: crate::cpu::segment_segment::Contact::Touch.code(),
            });
        }
        // A point off the other's line, certainly: a miss.
        (true, false) | (false, true) => {
            let (p, s) = if point(query) {
                (query, wall)
            } else {
                (wall, query)
            };
            let off = certain_cross(
                f(p.x0) - f(s.x0),
                f(p.y0) - f(s.y0),
                f(s.x1) - f(s.x0),
                f(s.y1) - f(s.y0),
            );
            return off.map(|_| SegmentContact::MISS);
        }
        (false, false) => {}
    }
    let (dx, dy) = (
        exact_sub(f(query.x1), f(query.x0))?,
        exact_sub(f(query.y1), f(query.y0))?,
    );
    let (ex, ey) = (
        exact_sub(f(wall.x1), f(wall.x0))?,
        exact_sub(f(wall.y1), f(wall.y0))?,
    );
    if (dx == 0.0 && dy == 0.0) || (ex == 0.0 && ey == 0.0) || exact_cross(dx, dy, ex, ey)? != 0.0 {
        return None;
    }
    let (wx, wy) = (
        exact_sub(f(wall.x0), f(query.x0))?,
        exact_sub(f(wall.y0), f(query.y0))?,
    );
    (exact_cross(wx, wy, dx, dy)? != 0.0).then_some(SegmentContact::MISS)
}

/// [`crate::segment_segment`]'s answer where floating point certifies it, `None` where only its
/// exact integers can tell. f32 values are exact in f64 and no product of the valid domain
/// overflows or loses precision to underflow (|v| ≤ 2^62, v a multiple of 2^-149), so each
/// cross product's sign is certain past Shewchuk's bound. What is certified: boxes apart (a
/// miss); of two segments whose lines' `d × e` is certain, a miss as soon as one of the four
/// cross products that place the crossing against an end is certain and on the far side, and
/// a proper crossing when all four are certain and inside, with t certain when both ends of its
/// interval round to the same f32. Everything else (parallels, touches, ends on a line, t near
/// a rounding boundary) takes the exact path, but for points and parallel lines apart
/// (`parallel_apart`).
pub fn contact_filtered(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    // Boxes apart: plain comparisons of the inputs, exact.
    if query.x0.max(query.x1) < wall.x0.min(wall.x1)
        || wall.x0.max(wall.x1) < query.x0.min(query.x1)
        || query.y0.max(query.y1) < wall.y0.min(wall.y1)
        || wall.y0.max(wall.y1) < query.y0.min(query.y1)
    {
        return Some(SegmentContact::MISS);
    }
    let (p0x, p0y) = (query.x0 as f64, query.y0 as f64);
    let (p1x, p1y) = (query.x1 as f64, query.y1 as f64);
    let (q0x, q0y) = (wall.x0 as f64, wall.y0 as f64);
    let (q1x, q1y) = (wall.x1 as f64, wall.y1 as f64);
    let (dx, dy) = (p1x - p0x, p1y - p0y);
    let (ex, ey) = (q1x - q0x, q1y - q0y);
    // den = d × e; the crossing at t = a / den, u = b / den; den − a = (p1 − q0) × e and
    // den − b = d × (q1 − p0) place it against the far ends.
    let Some((den, den_bound)) = certain_cross(dx, dy, ex, ey) else {
        return parallel_apart(query, wall);
    };
    let a = certain_cross(q0x - p0x, q0y - p0y, ex, ey);
    let b = certain_cross(q0x - p0x, q0y - p0y, dx, dy);
    let den_a = certain_cross(p1x - q0x, p1y - q0y, ex, ey);
    let den_b = certain_cross(dx, dy, q1x - p0x, q1y - p0y);
    let positive = den > 0.0;
    let sides = [a, b, den_a, den_b];
    // One certain side past an end is a miss, whatever the others (an end on the other's
    // line, uncertain, often lies beyond the other segment).
    if sides.iter().flatten().any(|&(v, _)| (v > 0.0) != positive) {
        return Some(SegmentContact::MISS);
    }
    if sides.iter().any(Option::is_none) {
        return None;
    }
    let (a, a_bound) = a?;
    // 0 < t < 1 and 0 < u < 1: a proper crossing. t = |a| / |den| within the bounds, each
    // quotient widened for its own rounding.
    let (a, den) = (a.abs(), den.abs());
    let low = (a - a_bound) / (den + den_bound) * (1.0 - 4.0 * f64::EPSILON);
    let high = (a + a_bound) / (den - den_bound) * (1.0 + 4.0 * f64::EPSILON);
    let t = low as f32;
    (t == high as f32).then_some(SegmentContact {
        t_enter: t,
        t_exit: t,
        contact: crate::cpu::segment_segment::Contact::Cross.code(),
    })
}

/// [`super::segment_segment`]'s hit alone, exact and without t: the boxes meet, and neither segment
/// has both ends strictly on one side of the other's line, the four orientations being exact
/// signs of f32 points in f64 (`robust`). When all four are zero the segments lie on one line
/// (or are points on it), and their boxes meeting is their meeting; when some but not all are
/// zero, the ends on a line are the common point.
pub fn wall_hit(query: &Segment, wall: &Segment) -> bool {
    if query.x0.max(query.x1) < wall.x0.min(wall.x1)
        || wall.x0.max(wall.x1) < query.x0.min(query.x1)
        || query.y0.max(query.y1) < wall.y0.min(wall.y1)
        || wall.y0.max(wall.y1) < query.y0.min(query.y1)
    {
        return false;
    }
    let point = |x: f32, y: f32| robust::Coord {
        x: x as f64,
        y: y as f64,
    };
    let (p0, p1) = (point(query.x0, query.y0), point(query.x1, query.y1));
    let (q0, q1) = (point(wall.x0, wall.y0), point(wall.x1, wall.y1));
    let one_side = |a: f64, b: f64| (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0);
    !one_side(robust::orient2d(p0, p1, q0), robust::orient2d(p0, p1, q1))
        && !one_side(robust::orient2d(q0, q1, p0), robust::orient2d(q0, q1, p1))
}

/// Shewchuk's bound for a 2 × 2 determinant of differences of exact inputs, in f32:
/// `(3 + 16u)·u·(|l| + |r|)`, u = 2^-24.
const CROSS_ERROR_F32: f32 = (3.0 + 16.0 * (f32::EPSILON / 2.0)) * (f32::EPSILON / 2.0);

/// What gradual underflow can add to that bound in f32: a product that goes subnormal is off
/// by at most 2^-150 absolute (differences and sums that go subnormal are exact), so two
/// products and their difference by well under 2^-120.
const UNDERFLOW_F32: f32 = 1.0 / (1u128 << 120) as f32;

/// Whether `u × v` (two differences of f32 inputs, each rounded once) is certainly positive,
/// and whether certainly negative, in f32: past Shewchuk's bound plus `UNDERFLOW_F32`.
#[inline(always)]
pub fn certain_cross_f32(ux: f32, uy: f32, vx: f32, vy: f32) -> (bool, bool) {
    let (value, bound) = cross_f32(ux, uy, vx, vy);
    (value > bound, value < -bound)
}

/// `u × v` in f32 and its error bound, Shewchuk's plus `UNDERFLOW_F32`.
#[inline(always)]
fn cross_f32(ux: f32, uy: f32, vx: f32, vy: f32) -> (f32, f32) {
    let (l, r) = (ux * vy, uy * vx);
    (l - r, CROSS_ERROR_F32 * (l.abs() + r.abs()) + UNDERFLOW_F32)
}

/// An f32 at or below t = |a0| / (|a0| + |a1|), the crossing of a segment whose ends lie
/// certainly on either side of a line at cross products `a0` and `a1` (each within its bound
/// `b0`, `b1`, below its magnitude), and so at or below its correctly rounded t.
///
/// The exact t is at least (|a0| − b0) / (|a0| + b0 + |a1| + b1) (t grows with |a0| and falls
/// with |a1|). Computed in f32 that quotient is off by under 5 roundings (a subtraction, two
/// sums, the division, each 2^-24 relative, the sums rounded down at worst); lowering it by
/// 2^-20 and rounding once more stays below it. A quotient under 2^-100, where gradual
/// underflow's absolute error would count, gives 0.
#[inline(always)]
fn crossing_t_below(a0: f32, b0: f32, a1: f32, b1: f32) -> f32 {
    let t = (a0.abs() - b0) / ((a0.abs() + b0) + (a1.abs() + b1));
    if t >= TINY_T {
        t * (1.0 - 1.0 / (1u32 << 20) as f32)
    } else {
        0.0
    }
}

/// 2^-100: below it [`crossing_t_below`] gives 0.
const TINY_T: f32 = 1.0 / (1u128 << 100) as f32;

/// [`contact_filtered`]'s hit alone, for sixteen walls ([`crate::Shape::hit_lanes`]; lanes x0, y0, x1,
/// y1), in f32: the four cross products that place each segment's ends against the other's
/// line, each certain past Shewchuk's bound for f32 plus `UNDERFLOW_F32` (inputs exact,
/// differences rounded once; |v| ≤ 2^62 keeps every product below 2^126 and every sum below
/// 2^127, so nothing overflows). A certain miss: both ends of one segment strictly on one side
/// of the other's line. A certain hit: both pairs of ends strictly apart, a proper crossing.
/// Anything else (an end on a line, parallels, a point, products lost to underflow) is left to
/// the exact path. f32 rather than f64: half the vector width for the same verdicts, but for
/// the few pairs whose orientations f32 cannot certify. A certain hit's `t_below` comes from
/// the query's ends against the wall's line (`crossing_t_below`).
#[inline(always)]
pub fn wall_hit_lanes(query: &Segment, walls: &HitLanes) -> LaneVerdicts {
    let [x0, y0, x1, y1] = &walls.values;
    let (px, py, rx, ry) = (query.x0, query.y0, query.x1, query.y1);
    let (dx, dy) = (rx - px, ry - py);
    let sign = certain_cross_f32;
    let mut hit = [false; HIT_LANES];
    let mut unsure = [false; HIT_LANES];
    let mut t_below = [0.0; HIT_LANES];
    for lane in 0..HIT_LANES {
        let (ax, ay, bx, by) = (x0[lane], y0[lane], x1[lane], y1[lane]);
        let (ex, ey) = (bx - ax, by - ay);
        // The wall's ends against the query's line, the query's ends against the wall's.
        let (p1, n1) = sign(dx, dy, ax - px, ay - py);
        let (p2, n2) = sign(dx, dy, bx - px, by - py);
        let (a0, b0) = cross_f32(ex, ey, px - ax, py - ay);
        let (a1, b1) = cross_f32(ex, ey, rx - ax, ry - ay);
        let (p3, n3) = (a0 > b0, a0 < -b0);
        let (p4, n4) = (a1 > b1, a1 < -b1);
        let miss = (p1 & p2) | (n1 & n2) | (p3 & p4) | (n3 & n4);
        let cross = ((p1 & n2) | (n1 & p2)) & ((p3 & n4) | (n3 & p4));
        hit[lane] = cross;
        unsure[lane] = !(miss | cross);
        // The query's ends certainly on either side of the wall's line: where it crosses.
        t_below[lane] = if cross {
            crossing_t_below(a0, b0, a1, b1)
        } else {
            0.0
        };
    }
    LaneVerdicts {
        hit,
        unsure,
        t_below,
    }
}

#[cfg(test)]
mod tests {
    use super::{exact_cross, exact_sub};

    #[test]
    fn products_that_f64_rounds_are_not_taken_as_exact() {
        let (a, b) = (2f64.powi(-40), 2f64.powi(-41));
        // (1 + 2^-40)(1 + 2^-41) needs 82 bits; 1 · (1 + 3 · 2^-41) is exact: f64 computes the
        // cross product as 0, and it is 2^-81.
        assert_eq!((1.0 + a) * (1.0 + b) - (1.0 + 3.0 * b), 0.0);
        assert_eq!(exact_cross(1.0 + a, 1.0 + 3.0 * b, 1.0, 1.0 + b), None);
        assert_eq!(exact_cross(3.0, 2.0, 5.0, 4.0), Some(2.0));
        // A difference f64 rounds, and one it holds.
        assert_eq!(exact_sub(1.0, 2f64.powi(-60)), None);
        assert_eq!(exact_sub(1.0, 2f64.powi(-40)), Some(1.0 - 2f64.powi(-40)));
    }
}
