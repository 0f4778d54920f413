//! An independent oracle for segment × circle (docs/semantics.md, "Segment × circle"): the
//! part of a segment in a closed disk, in exact integers (num-bigint, every f32 as an integer
//! over 2^149). The roots of q(t) = a·t² + 2b·t + c are bracketed by integer square roots of
//! ever finer scalings until both ends of the bracket round to the same f32 (an irrational
//! root is never a tie); a perfect-square discriminant gives a rational root, rounded exactly.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use rectcast::{Circle, CircleContact, CircleKind, Segment};

use super::exact::{round_rational_to_f32, scaled_2_149};

fn contact(t_enter: f32, t_exit: f32, kind: CircleKind) -> CircleContact {
    CircleContact {
        t_enter,
        t_exit,
        kind: kind.code(),
    }
}

/// (−b ± √disc) / a rounded to the nearest f32, ties to even, for a > 0, disc ≥ 0, the root
/// in [0, 1].
fn round_root(b: &BigInt, disc: &BigInt, a: &BigInt, plus: bool) -> f32 {
    let root = disc.sqrt();
    let sign = if plus { 1 } else { -1 };
    if &(&root * &root) == disc {
        return round_rational_to_f32(&(-b + &root * sign), a);
    }
    let mut k = 64u64;
    loop {
        // √disc · 2^k lies strictly between s and s + 1.
        let s = (disc << (2 * k)).sqrt();
        let base = -(b << k);
        let den = a << k;
        let (lo, hi) = if plus {
            (&base + &s, &base + &s + 1)
        } else {
            (&base - &s - 1, &base - &s)
        };
        if !lo.is_negative() {
            let (l, h) = (
                round_rational_to_f32(&lo, &den),
                round_rational_to_f32(&hi, &den),
            );
            if l == h {
                return l;
            }
        }
        k *= 2;
    }
}

/// The contract's answer for `query` against the closed disk `circle`.
pub fn segment_circle(query: &Segment, circle: &Circle) -> CircleContact {
    let v = scaled_2_149;
    let (cx, cy, r) = (v(circle.cx), v(circle.cy), v(circle.r));
    let (fx, fy) = (v(query.x0) - &cx, v(query.y0) - &cy);
    let (dx, dy) = (v(query.x1) - v(query.x0), v(query.y1) - v(query.y0));
    let a = &dx * &dx + &dy * &dy;
    let b = &fx * &dx + &fy * &dy;
    let c = &fx * &fx + &fy * &fy - &r * &r;
    let q1: BigInt = &a + &b * 2u32 + &c;
    let (start_in, end_in) = (!c.is_positive(), !q1.is_positive());
    if start_in && end_in {
        return contact(0.0, 1.0, CircleKind::Inside);
    }
    if a.is_zero() {
        return CircleContact::MISS;
    }
    let disc = &b * &b - &a * &c;
    if disc.is_negative() {
        return CircleContact::MISS;
    }
    if start_in {
        return contact(0.0, round_root(&b, &disc, &a, true), CircleKind::Exit);
    }
    if end_in {
        return contact(round_root(&b, &disc, &a, false), 1.0, CircleKind::Enter);
    }
    // Both ends out: the roots both lie in (0, 1), or both beyond one end.
    // t− > 0 ⇔ −b > √disc; t+ < 1 ⇔ √disc < a + b.
    let after_start = (-&b).is_positive() && &b * &b > disc;
    let before_end = (&a + &b).is_positive() && disc < (&a + &b) * (&a + &b);
    if !(after_start && before_end) {
        return CircleContact::MISS;
    }
    if disc.is_zero() {
        let t = round_rational_to_f32(&-&b, &a);
        return contact(t, t, CircleKind::Tangent);
    }
    contact(
        round_root(&b, &disc, &a, false),
        round_root(&b, &disc, &a, true),
        CircleKind::Cross,
    )
}
