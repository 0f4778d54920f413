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

/// `(bound − c0) / (c1 − c0)` rounded to the nearest f32, clamped to [0, 1] (0 for a
/// quotient at or below 0, 1 at or above 1): what `crossing_time` and [`crossing_time_exact`]
/// give, where plain f64 arithmetic gives it certainly, else `None` (the caller then rounds as
/// the reference does). Certainly means:
/// - both differences exact in f64 (TwoSum's error is 0: so for any two f32 less than 2^29
///   apart in magnitude), and c1 != c0, so that q, the f64 quotient, is the exact quotient x
///   correctly rounded;
/// - q in f32's normal range (at or above 2^-126, where its spacing is 2^-23 of the binade),
///   and not on a midpoint of two adjacent f32 (its 29 low fraction bits not 1 followed by
///   zeros).
///
/// Then `q as f32` is x rounded to the nearest f32: every midpoint m of two f32 in (0, 1) is an
/// f64, and rounding to f64 is monotone and keeps m, so x < m gives q <= m and x > m gives
/// q >= m; q != m puts q and x strictly between the same two midpoints, where every value
/// rounds to the same f32. At or below 0, or at or above 1, the signs of exact numerator and
/// denominator decide, as they do the reference's clamp.
#[inline(always)]
pub(crate) fn crossing_time_f64(bound: f32, c0: f32, c1: f32) -> Option<f32> {
    let (num, num_error) = two_difference(bound as f64, c0 as f64);
    let (den, den_error) = two_difference(c1 as f64, c0 as f64);
    if num_error != 0.0 || den_error != 0.0 || den == 0.0 {
        return None;
    }
    let q = num / den;
    if q <= 0.0 {
        return Some(0.0);
    }
    if q >= 1.0 {
        return Some(1.0);
    }
    const LOW_BITS: u64 = (1 << 29) - 1;
    const MIDPOINT: u64 = 1 << 28;
    if q < f32::MIN_POSITIVE as f64 || (q.to_bits() & LOW_BITS) == MIDPOINT {
        return None;
    }
    Some(q as f32)
}

/// a − b and its rounding error, exactly (Knuth's TwoSum, branch free; no overflow for valid
/// inputs): the difference is exact when the error is 0.
#[inline(always)]
fn two_difference(a: f64, b: f64) -> (f64, f64) {
    let d = a - b;
    let a_part = d + b;
    let b_part = a_part - d;
    (d, (a - a_part) + (b_part - b))
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

#[cfg(test)]
mod tests {
    use super::{crossing_time_exact, crossing_time_f64};
    use crate::scene::SplitMix64;

    /// A random f32 of either sign, its exponent in `exponents`, its 24-bit mantissa random.
    fn random_f32(rng: &mut SplitMix64, exponents: std::ops::Range<i32>) -> f32 {
        let mantissa = (rng.next_u64() as u32 >> 8) | (1 << 23);
        let exponent = exponents.start + rng.below(exponents.len() as u64) as i32;
        let v = mantissa as f32 * 2f32.powi(exponent - 23);
        if rng.next_u64() & 1 == 0 { v } else { -v }
    }

    /// Bound, c0, c1 of a crossing: the ends in a window of exponents (which the f64 path
    /// answers) or far apart (which it leaves), the bound between them, near an end, or outside
    /// (a t clamped to 0 or 1), on a grid or not.
    fn random_crossing(rng: &mut SplitMix64) -> (f32, f32, f32) {
        let low = -40 + rng.below(80) as i32;
        let width = [1, 4, 20, 29, 40][rng.below(5) as usize];
        let c0 = random_f32(rng, low..low + width);
        let c1 = random_f32(rng, low..low + width);
        let bound = match rng.below(5) {
            0 => random_f32(rng, low..low + width),
            1 => (c0 as f64 + (c1 as f64 - c0 as f64) * rng.unit() as f64) as f32,
            2 => c0 + (c1 - c0) * 2f32.powi(-(rng.below(30) as i32)),
            // Integers: quotients of small integers, exact ties and midpoints among them.
            3 => {
                return (
                    rng.below(64) as f32,
                    rng.below(64) as f32,
                    rng.below(64) as f32,
                );
            }
            _ => c1.next_down(),
        };
        (bound, c0, c1)
    }

    #[test]
    fn the_f64_crossing_time_is_the_exactly_rounded_one_wherever_it_answers() {
        let mut rng = SplitMix64::new(2026);
        let (mut answered, mut inside, total) = (0, 0, 400_000);
        for i in 0..total {
            let (bound, c0, c1) = random_crossing(&mut rng);
            if c0 == c1 {
                assert_eq!(crossing_time_f64(bound, c0, c1), None);
                continue;
            }
            let Some(t) = crossing_time_f64(bound, c0, c1) else {
                continue;
            };
            let exact = crossing_time_exact(bound, c0, c1);
            assert_eq!(
                t.to_bits(),
                exact.to_bits(),
                "case {i}: bound {bound:e}, c0 {c0:e}, c1 {c1:e}: f64 {t:e}, exact {exact:e}"
            );
            answered += 1;
            inside += (t > 0.0 && t < 1.0) as u32;
        }
        // Most crossings are answered, most of them strictly inside (0, 1).
        assert!(answered > total / 2, "answered {answered} of {total}");
        assert!(
            inside > total / 4,
            "strictly inside (0, 1): {inside} of {total}"
        );
    }

    #[test]
    fn a_quotient_on_a_midpoint_of_two_f32_or_of_values_far_apart_is_left_to_the_reference() {
        // (0.5 − 2^-25 + 2^-24) / (1 − 2^-24 + 2^-24) = 0.5 + 2^-25, halfway between 0.5 and the
        // f32 after it: the reference rounds it to even, 0.5; f64 cannot tell a tie from a value
        // rounded onto one. Scaled by powers of two and mirrored, the quotient is the same.
        let (bound, c0, c1) = (
            0.5 - 2f32.powi(-25),
            -(2f32.powi(-24)),
            1.0 - 2f32.powi(-24),
        );
        for p in -60..60 {
            for sign in [1.0f32, -1.0] {
                let scale = sign * 2f32.powi(p);
                let (b, a0, a1) = (bound * scale, c0 * scale, c1 * scale);
                assert_eq!(crossing_time_exact(b, a0, a1), 0.5, "scale {scale:e}");
                assert_eq!(crossing_time_f64(b, a0, a1), None, "scale {scale:e}");
            }
        }
        // Quotients 1e-17 off a midpoint, which f64's division rounds onto it (as in
        // tests/rounding.rs): the reference rounds them to the nearer f32.
        for (bound, c0, c1) in [
            (0x3fb3ac38, 0xb18482ed, 0x3feae8e6),
            (0x3f0bbd7d, 0xb15b2d18, 0x3f845b48),
            (0x3f7c3c7c, 0x320a13a6, 0x3f9905f3),
        ] {
            let [bound, c0, c1] = [bound, c0, c1].map(f32::from_bits);
            let q = (bound as f64 - c0 as f64) / (c1 as f64 - c0 as f64);
            assert_eq!(
                q.to_bits() & ((1 << 29) - 1),
                1 << 28,
                "{q:e} is a midpoint"
            );
            assert_eq!(
                crossing_time_f64(bound, c0, c1),
                None,
                "{bound:e} {c0:e} {c1:e}"
            );
        }
        // 2^60 and 2^-10 are 70 binary orders apart: their difference is no f64.
        assert_eq!(crossing_time_f64(2f32.powi(-10), 2f32.powi(60), 0.0), None);
        // Below f32's normal range: a quotient of 2^-130.
        assert_eq!(crossing_time_f64(2f32.powi(-100), 0.0, 2f32.powi(30)), None);
        assert!(crossing_time_exact(2f32.powi(-100), 0.0, 2f32.powi(30)) > 0.0);
    }
}
