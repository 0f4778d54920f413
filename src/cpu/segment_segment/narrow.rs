//! Segment × segment on 64- and 128-bit integers (`crate::cpu::narrow`), for pairs whose eight
//! values span at most `SPAN` binary orders: `segment_segment_ratios`'s steps and
//! branches on narrow integers, so its contact and its t, at a small part of the cost. Pairs
//! beyond that reach are left to the wide integers.
//!
//! The CPU mirror of `narrow_ratios` and `contact_narrow` in `shaders/segment_segment.wgsl`,
//! which the walls' kernel runs before its wide integers too.

use super::{Contact, SegmentContact, WALLS_APART, contact_at, segment_segment, wall_verdict};
use crate::cpu::narrow::{
    narrow_cross, narrow_difference, narrow_dot, narrow_is_negative, narrow_is_zero, narrow_lt,
    narrow_neg, narrow_ratio_to_f32, scaled_values,
};
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

/// [`super::segment_segment_ratios`], when the pair's values are narrow (`None` otherwise). The
/// CPU mirror of the shader's `narrow_ratios`: the wide function's steps and branches, on the
/// narrow integers.
pub(crate) fn narrow_ratios(query: &Segment, wall: &Segment) -> Option<NarrowRatios> {
    let zero = 0;
    let one = 1;
    let v = scaled_values(&[
        query.x0, query.y0, query.x1, query.y1, wall.x0, wall.y0, wall.x1, wall.y1,
    ])?;
    let miss = NarrowRatios {
        contact: Contact::Miss,
        enter_num: zero,
        enter_den: one,
        exit_num: zero,
        exit_den: one,
    };
    // Each scaled value is below 2^62: differences fit 64 bits, their products 128.
    let d = narrow_difference(v[2], v[3], v[0], v[1]);
    let e = narrow_difference(v[6], v[7], v[4], v[5]);
    let w = narrow_difference(v[4], v[5], v[0], v[1]);
    let f = narrow_difference(v[6], v[7], v[0], v[1]);
    let mut den = narrow_cross(d, e);
    let mut a = narrow_cross(w, e);
    let mut b = narrow_cross(w, d);
    if !narrow_is_zero(den) {
        // Not parallel: the lines meet at t = a / den on the query, u = b / den on the wall.
        if narrow_is_negative(den) {
            a = narrow_neg(a);
            b = narrow_neg(b);
            den = narrow_neg(den);
        }
        if narrow_is_negative(a) || narrow_lt(den, a) || narrow_is_negative(b) || narrow_lt(den, b)
        {
            return Some(miss);
        }
        let mut contact = Contact::Touch;
        if !narrow_is_zero(a) && narrow_lt(a, den) && !narrow_is_zero(b) && narrow_lt(b, den) {
            contact = Contact::Cross;
        }
        return Some(NarrowRatios {
            contact,
            enter_num: a,
            enter_den: den,
            exit_num: a,
            exit_den: den,
        });
    }
    // Parallel or degenerate.
    let ee = narrow_dot(e, e);
    let dd = narrow_dot(d, d);
    if narrow_is_zero(dd) {
        // The query is a point, p0 = q0 − w: on the wall, every t of it is a common point.
        let on = if narrow_is_zero(ee) {
            narrow_is_zero(narrow_dot(w, w))
        } else {
            let along = narrow_neg(narrow_dot(w, e));
            narrow_is_zero(a) && !narrow_is_negative(along) && !narrow_lt(ee, along)
        };
        if !on {
            return Some(miss);
        }
        return Some(NarrowRatios {
            contact: Contact::Touch,
            enter_num: zero,
            enter_den: one,
            exit_num: one,
            exit_den: one,
        });
    }
    if !narrow_is_zero(b) {
        // Parallel lines apart, or a point wall off the query's line.
        return Some(miss);
    }
    // Collinear: the wall's ends at t = s0 / dd and s1 / dd, clamped to [0, dd].
    let s0 = narrow_dot(w, d);
    let s1 = narrow_dot(f, d);
    let mut lo = s0;
    let mut hi = s1;
    if narrow_lt(hi, lo) {
        lo = s1;
        hi = s0;
    }
    if narrow_is_negative(lo) {
        lo = zero;
    }
    if narrow_lt(dd, hi) {
        hi = dd;
    }
    if narrow_lt(hi, lo) {
        return Some(miss);
    }
    let mut contact = Contact::Touch;
    if narrow_lt(lo, hi) {
        contact = Contact::Overlap;
    }
    Some(NarrowRatios {
        contact,
        enter_num: lo,
        enter_den: dd,
        exit_num: hi,
        exit_den: dd,
    })
}

/// [`super::segment_segment`]'s answer, from the narrow integers, for pairs whose eight values
/// span at most `SPAN` (62) binary orders; `None` for the others. Exact: the same contact and the
/// same correctly rounded t. The shader's `contact_narrow`.
pub fn contact_narrow(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    let ratios = narrow_ratios(query, wall)?;
    if ratios.contact == Contact::Miss {
        return Some(SegmentContact::MISS);
    }
    // Ratios of non-negative integers, each below 2^127; one division when they are the same
    // ratio (a crossing, a touch: all but an overlap and a point query).
    let t_enter = narrow_ratio_to_f32(ratios.enter_num as u128, ratios.enter_den as u128);
    let mut t_exit = t_enter;
    if ratios.exit_num != ratios.enter_num || ratios.exit_den != ratios.enter_den {
        t_exit = narrow_ratio_to_f32(ratios.exit_num as u128, ratios.exit_den as u128);
    }
    Some(contact_at(t_enter, t_exit, ratios.contact))
}

/// [`super::segment_segment`]'s answer the cheapest exact way: the orientations certify most
/// misses, the narrow integers answer the pairs within their reach, the wide ones the rest.
/// The shader's `wall_contact`, which the walls' and the polygons' kernels run.
pub fn wall_contact(query: &Segment, wall: &Segment) -> SegmentContact {
    if wall_verdict(query, wall) == WALLS_APART {
        return SegmentContact::MISS;
    }
    if let Some(contact) = contact_narrow(query, wall) {
        return contact;
    }
    segment_segment(query, wall)
}
