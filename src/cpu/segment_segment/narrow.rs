//! Segment × segment on 64- and 128-bit integers (`crate::cpu::narrow`), for pairs whose eight
//! values span at most `SPAN` binary orders: `segment_segment_ratios`'s steps and
//! branches on narrow integers, so its contact and its t, at a small part of the cost. Pairs
//! beyond that reach are left to the wide integers.

use super::{Contact, SegmentContact, contact_at};
use crate::cpu::narrow::{ratio_to_f32, scaled};
use crate::types::Segment;

/// [`super::SegmentRatios`] in 128 bits: the contact, and the first and last t as ratios of
/// non-negative integers (denominators above 0).
pub(crate) struct NarrowRatios {
    pub(crate) contact: Contact,
    pub(crate) enter_num: i128,
    pub(crate) enter_den: i128,
    pub(crate) exit_num: i128,
    pub(crate) exit_den: i128,
}

/// `l × r` of two differences.
fn cross(l: (i64, i64), r: (i64, i64)) -> i128 {
    l.0 as i128 * r.1 as i128 - l.1 as i128 * r.0 as i128
}

/// `l · r` of two differences.
fn dot(l: (i64, i64), r: (i64, i64)) -> i128 {
    l.0 as i128 * r.0 as i128 + l.1 as i128 * r.1 as i128
}

/// [`super::segment_segment_ratios`], when the pair's values are narrow (`None` otherwise).
pub(crate) fn narrow_ratios(query: &Segment, wall: &Segment) -> Option<NarrowRatios> {
    let v = scaled(&[
        query.x0, query.y0, query.x1, query.y1, wall.x0, wall.y0, wall.x1, wall.y1,
    ])?;
    let miss = NarrowRatios {
        contact: Contact::Miss,
        enter_num: 0,
        enter_den: 1,
        exit_num: 0,
        exit_den: 1,
    };
    // Each scaled value is below 2^62 in magnitude: differences fit an i64.
    let d = (v[2] - v[0], v[3] - v[1]);
    let e = (v[6] - v[4], v[7] - v[5]);
    let w = (v[4] - v[0], v[5] - v[1]);
    let f = (v[6] - v[0], v[7] - v[1]);
    let (mut den, mut a, mut b) = (cross(d, e), cross(w, e), cross(w, d));
    if den != 0 {
        // Not parallel: the lines meet at t = a / den on the query, u = b / den on the wall.
        if den < 0 {
            (den, a, b) = (-den, -a, -b);
        }
        if a < 0 || den < a || b < 0 || den < b {
            return Some(miss);
        }
        let contact = if a != 0 && a < den && b != 0 && b < den {
            Contact::Cross
        } else {
            Contact::Touch
        };
        return Some(NarrowRatios {
            contact,
            enter_num: a,
            enter_den: den,
            exit_num: a,
            exit_den: den,
        });
    }
    // Parallel or degenerate.
    let (ee, dd) = (dot(e, e), dot(d, d));
    let mut ratios = NarrowRatios {
        contact: Contact::Touch,
        enter_num: 0,
        enter_den: 1,
        exit_num: 1,
        exit_den: 1,
    };
    if d == (0, 0) {
        // The query is a point, p0 = q0 − w: on the wall, every t of it is a common point.
        let on = if e == (0, 0) {
            w == (0, 0)
        } else {
            let along = -dot(w, e);
            a == 0 && along >= 0 && along <= ee
        };
        return Some(if on { ratios } else { miss });
    }
    if b != 0 {
        // Parallel lines apart, or a point wall off the query's line.
        return Some(miss);
    }
    // Collinear: the wall's ends at t = s0 / dd and s1 / dd, clamped to [0, dd].
    let (s0, s1) = (dot(w, d), dot(f, d));
    let (lo, hi) = (s0.min(s1).max(0), s0.max(s1).min(dd));
    if hi < lo {
        return Some(miss);
    }
    if lo < hi {
        ratios.contact = Contact::Overlap;
    }
    ratios.enter_num = lo;
    ratios.enter_den = dd;
    ratios.exit_num = hi;
    ratios.exit_den = dd;
    Some(ratios)
}

/// [`super::segment_segment`]'s answer, from the narrow integers, for pairs whose eight values
/// span at most `SPAN` (62) binary orders; `None` for the others. Exact: the same contact and the
/// same correctly rounded t.
pub fn contact_narrow(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    let ratios = narrow_ratios(query, wall)?;
    if ratios.contact == Contact::Miss {
        return Some(SegmentContact::MISS);
    }
    // Ratios of non-negative integers, each below 2^127.
    let t = |num: i128, den: i128| ratio_to_f32(num as u128, den as u128);
    Some(contact_at(
        t(ratios.enter_num, ratios.enter_den),
        t(ratios.exit_num, ratios.exit_den),
        ratios.contact,
    ))
}
