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
    let (p0, p1) = (point(query.x0, query.y0), point(query.x1, query.y1));
    let (q0, q1) = (point(wall.x0, wall.y0), point(wall.x1, wall.y1));
    let d = sub(&p1, &p0);
    let e = sub(&q1, &q0);
    if d.0.is_zero() && d.1.is_zero() {
        // Every t of a point query names the same point.
        return if on_segment(&p0, &q0, &q1) {
            contact(0.0, 1.0, Contact::Touch)
        } else {
            SegmentContact::MISS
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
            return SegmentContact::MISS;
        }
        let strictly = |n: &BigInt| n.is_positive() && *n < den;
        let kind = if strictly(&t_num) && strictly(&u_num) {
            Contact::Cross
        } else {
            Contact::Touch
        };
        let t = round_ratio_to_f32(&t_num, &den);
        return contact(t, t, kind);
    }
    // Parallel (or a point wall): the wall's points on the query's line, as t = s / |d|^2.
    let dd = dot(&d, &d);
    let on_line = |q: &P| cross(&sub(q, &p0), &d).is_zero();
    if !on_line(&q0) {
        return SegmentContact::MISS;
    }
    let s0 = dot(&sub(&q0, &p0), &d);
    let s1 = dot(&sub(&q1, &p0), &d);
    let lo = s0.clone().min(s1.clone()).max(BigInt::zero());
    let hi = s0.max(s1).min(dd.clone());
    if lo > hi {
        return SegmentContact::MISS;
    }
    let kind = if lo == hi {
        Contact::Touch
    } else {
        Contact::Overlap
    };
    contact(
        round_ratio_to_f32(&lo, &dd),
        round_ratio_to_f32(&hi, &dd),
        kind,
    )
}
