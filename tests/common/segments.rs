//! An independent oracle for segment × segment (docs/semantics.md, "Segment × segment"): the
//! common points of two closed segments in exact rational arithmetic (num-bigint, every f32 as
//! an integer over 2^149), t rounded by `exact::round_ratio_to_f32`.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use rectcast::{Contact, Segment, SegmentContact};

use super::exact::{round_ratio_to_f32, scaled_2_149};

type P = (BigInt, BigInt);

fn point(x: f32, y: f32) -> P {
    (scaled_2_149(x), scaled_2_149(y))
}

fn sub(a: &P, b: &P) -> P {
    (&a.0 - &b.0, &a.1 - &b.1)
}

fn cross(a: &P, b: &P) -> BigInt {
    &a.0 * &b.1 - &a.1 * &b.0
}

fn dot(a: &P, b: &P) -> BigInt {
    &a.0 * &b.0 + &a.1 * &b.1
}

/// Whether point `v` lies on the closed segment from `a` to `b`.
fn on_segment(v: &P, a: &P, b: &P) -> bool {
    let (av, ab) = (sub(v, a), sub(b, a));
    if ab.0.is_zero() && ab.1.is_zero() {
        return av.0.is_zero() && av.1.is_zero();
    }
    cross(&av, &ab).is_zero() && !dot(&av, &ab).is_negative() && dot(&av, &ab) <= dot(&ab, &ab)
}

fn contact(t_enter: f32, t_exit: f32, kind: Contact) -> SegmentContact {
    SegmentContact {
        t_enter,
        t_exit,
        contact: kind.code(),
    }
}

/// The contract's answer for `query` against `wall`.
pub fn segment_segment(query: &Segment, wall: &Segment) -> SegmentContact {
    match common_part(query, wall) {
        None => SegmentContact::MISS,
        Some(part) => contact(
            round_ratio_to_f32(&part.enter.0, &part.enter.1),
            round_ratio_to_f32(&part.exit.0, &part.exit.1),
            part.kind,
        ),
    }
}

/// The common part of a query and a wall, exactly: its first and last t as (numerator,
/// denominator > 0), and its kind.
pub struct CommonPart {
    pub enter: (BigInt, BigInt),
    pub exit: (BigInt, BigInt),
    pub kind: Contact,
}

/// Where `query` meets `wall`, before rounding; `None` on a miss.
pub fn common_part(query: &Segment, wall: &Segment) -> Option<CommonPart> {
    let one = || BigInt::from(1);
    let part = |enter: (BigInt, BigInt), exit: (BigInt, BigInt), kind| {
        Some(CommonPart { enter, exit, kind })
    };
    let (p0, p1) = (point(query.x0, query.y0), point(query.x1, query.y1));
    let (q0, q1) = (point(wall.x0, wall.y0), point(wall.x1, wall.y1));
    let d = sub(&p1, &p0);
    let e = sub(&q1, &q0);
    if d.0.is_zero() && d.1.is_zero() {
        // Every t of a point query names the same point.
        return if on_segment(&p0, &q0, &q1) {
            part((BigInt::zero(), one()), (one(), one()), Contact::Touch)
        } else {
            None
        };
    }
    let den = cross(&d, &e);
    if !den.is_zero() {
        // Cramer's rule for p0 + t d = q0 + u e.
        let w = sub(&q0, &p0);
        let (t_num, u_num) = (cross(&w, &e), cross(&w, &d));
        let (t_num, u_num, den) = if den.is_negative() {
            (-t_num, -u_num, -den)
        } else {
            (t_num, u_num, den)
        };
        let within = |n: &BigInt| !n.is_negative() && *n <= den;
        if !within(&t_num) || !within(&u_num) {
            return None;
        }
        let strictly = |n: &BigInt| n.is_positive() && *n < den;
        let kind = if strictly(&t_num) && strictly(&u_num) {
            Contact::Cross
        } else {
            Contact::Touch
        };
        return part((t_num.clone(), den.clone()), (t_num, den), kind);
    }
    // Parallel (or a point wall): the wall's points on the query's line, as t = s / |d|^2.
    let dd = dot(&d, &d);
    let on_line = |q: &P| cross(&sub(q, &p0), &d).is_zero();
    if !on_line(&q0) {
        return None;
    }
    let s0 = dot(&sub(&q0, &p0), &d);
    let s1 = dot(&sub(&q1, &p0), &d);
    let lo = s0.clone().min(s1.clone()).max(BigInt::zero());
    let hi = s0.max(s1).min(dd.clone());
    if lo > hi {
        return None;
    }
    let kind = if lo == hi {
        Contact::Touch
    } else {
        Contact::Overlap
    };
    part((lo, dd.clone()), (hi, dd), kind)
}
