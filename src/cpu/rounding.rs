//! CPU only: correct rounding (to nearest, ties to even) of the exact rationals the contract
//! defines, for every valid input, where the integer path of `crossing_time` does not reach
//! (values more than 2^MAX_SPREAD apart in magnitude) and for the clipped end points.
//!
//! The method: an f64 approximation with an error bound settles almost every value at once.
//! Otherwise the value is bracketed between two adjacent f32 by exact sign tests, "is the exact
//! value above this f64?", each one an orientation test: the value's defining expression is
//! an orient2d of f32 inputs and the f64 being compared, which the `robust` crate evaluates
//! exactly (no product or difference of these values under- or overflows in f64).

use std::cmp::Ordering;

use robust::{Coord, orient2d};

/// f64 unit roundoff.
const U: f64 = f64::EPSILON / 2.0;

/// The f32 nearest to an exact value x (ties to even) that lies in [lo, hi], given `approx`
/// with |approx − x| <= err, and `side(m)`, the exact order of x against m. A zero is +0.0.
fn round_to_f32(lo: f32, hi: f32, approx: f64, err: f64, side: impl Fn(f64) -> Ordering) -> f32 {
    // Never for valid inputs; for values changed after validation, an unspecified answer
    // rather than a panic.
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return lo;
    }
    let candidate = (approx as f32).max(lo).min(hi);
    let (below, above) = midpoints(candidate);
    if approx - err > below && approx + err < above {
        return candidate + 0.0;
    }
    // Bracket x: [a, b] around the candidate when the signs confirm it, else [lo, hi].
    let (mut a, mut b) = (lo, hi);
    let (near_a, near_b) = (step(candidate, -4).max(lo), step(candidate, 4).min(hi));
    if side(near_a as f64) != Ordering::Less && side(near_b as f64) != Ordering::Greater {
        (a, b) = (near_a, near_b);
    }
    // Invariant: a <= x <= b. Bisect over the f32 values between them, in order.
    while key(b) - key(a) > 1 {
        let mid = value(key(a) + (key(b) - key(a)) / 2);
        match side(mid as f64) {
            Ordering::Less => b = mid,
            Ordering::Greater => a = mid,
            Ordering::Equal => return mid + 0.0,
        }
    }
    // a and b adjacent (or equal): the nearer one, ties to the even one.
    let chosen = match side((a as f64 + b as f64) / 2.0) {
        Ordering::Less => a,
        Ordering::Greater => b,
        Ordering::Equal if a.to_bits() & 1 == 0 => a,
        Ordering::Equal => b,
    };
    chosen + 0.0
}

/// An integer that orders like the f32 (-0.0 and +0.0 both 0), and back.
fn key(v: f32) -> i64 {
    let bits = v.to_bits() as i32;
    (if bits < 0 {
        -(bits & 0x7fff_ffff)
    } else {
        bits
    }) as i64
}

fn value(key: i64) -> f32 {
    if key < 0 {
        f32::from_bits((-key) as u32 | 0x8000_0000)
    } else {
        f32::from_bits(key as u32)
    }
}

/// v moved by k f32 steps (within the finite values).
fn step(v: f32, k: i64) -> f32 {
    let max = key(f32::MAX);
    value((key(v) + k).clamp(-max, max))
}

/// The midpoints between v and its f32 neighbours below and above, exact in f64.
fn midpoints(v: f32) -> (f64, f64) {
    let v64 = v as f64;
    (
        (v64 + v.next_down() as f64) / 2.0,
        (v64 + v.next_up() as f64) / 2.0,
    )
}

fn sign(v: f64) -> Ordering {
    v.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// The order of x against m, where x − m = orient2d((bound, m), p1, p0) / den: the sign of the
/// exact orientation, reversed when den < 0.
fn side_of(bound: f64, m: f64, p1: Coord<f64>, p0: Coord<f64>, den_sign: Ordering) -> Ordering {
    let det = sign(orient2d(Coord { x: bound, y: m }, p1, p0));
    if den_sign == Ordering::Less {
        det.reverse()
    } else {
        det
    }
}

/// `(bound − c0) / (c1 − c0)` rounded to the nearest f32, for c0 != c1 and a quotient in
/// [0, 1] (the parameter of a crossing), for any valid inputs.
pub(crate) fn crossing_time_exact(bound: f32, c0: f32, c1: f32) -> f32 {
    let (bound, c0, c1) = (bound as f64, c0 as f64, c1 as f64);
    let approx = (bound - c0) / (c1 - c0);
    // Two rounded differences and a rounded quotient: at most 3 roundings of relative 2^-53.
    let err = 4.0 * U * approx.abs();
    let den_sign = sign(c1 - c0);
    // x − m has the sign of (bound − c0) − m·(c1 − c0) times den's: orient2d((bound, m),
    // (c1, 1), (c0, 0)) = (bound − c0)·1 − m·(c1 − c0).
    round_to_f32(0.0, 1.0, approx, err, |m| {
        side_of(
            bound,
            m,
            Coord { x: c1, y: 1.0 },
            Coord { x: c0, y: 0.0 },
            den_sign,
        )
    })
}

/// The other coordinate of the point where segment (a0, b0) → (a1, b1) crosses a = bound:
/// `b0 + (bound − a0)·(b1 − b0) / (a1 − a0)` rounded to the nearest f32, for a0 != a1 and a
/// crossing whose exact point has its b in [lo, hi] (a clipped end point on a rect side).
pub(crate) fn crossing_point_exact(
    bound: f32,
    (a0, b0): (f32, f32),
    (a1, b1): (f32, f32),
    lo: f32,
    hi: f32,
) -> f32 {
    let (bound, a0, b0, a1, b1) = (bound as f64, a0 as f64, b0 as f64, a1 as f64, b1 as f64);
    let term = (bound - a0) * (b1 - b0) / (a1 - a0);
    let approx = b0 + term;
    // Three rounded differences, a product and a quotient in `term` (5 roundings), one sum.
    let err = 8.0 * U * (term.abs() + approx.abs());
    let den_sign = sign(a1 - a0);
    // x − m has the sign of (bound − a0)·(b1 − b0) − (m − b0)·(a1 − a0) times den's, and that
    // is orient2d((bound, m), (a1, b1), (a0, b0)): which side of the segment's line (bound, m)
    // lies on.
    round_to_f32(lo, hi, approx, err, |m| {
        side_of(
            bound,
            m,
            Coord { x: a1, y: b1 },
            Coord { x: a0, y: b0 },
            den_sign,
        )
    })
}
