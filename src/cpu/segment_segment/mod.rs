//! The segment × segment contract's executable form: where a query segment meets a wall (another
//! segment), decided exactly and with correctly rounded t (docs/semantics.md, "Segment ×
//! segment").
//!
//! A pair whose segments lie certainly apart ([`wall_verdict`]: four orientations in f32, each
//! with its error bound) misses at once. Everything else is computed on exact integers
//! ([`super::exact`]): each f32 is an integer multiple of 2^-149, so `v · 2^149` is an integer
//! below 2^212 for the valid domain (|v| ≤ 2^62); differences stay below 2^213, products of two
//! differences (the cross and dot products) below
//! 2^427, within a `Big` (448 bits).
//!
//! The CPU batch path answers most pairs before these integers: its float filters
//! ([`filters`]) and, for pairs whose values span few binary orders, the same steps on 64- and
//! 128-bit integers ([`narrow`]).
//!
//! The CPU mirror of `shaders/segment_segment.wgsl`: the same functions under the same names,
//! the same branches, u32 arithmetic only (WGSL has no 64-bit integers, so a 32 × 32-bit
//! product is split into 16-bit halves here too).

pub mod filters;
pub mod narrow;
mod shape;

pub use shape::check_walls;

pub(crate) use shape::kernel_constants;

use bytemuck::{Pod, Zeroable};

use super::arithmetic::F32Arithmetic;
use super::exact::{
    Big, BigPoint, LIMBS, big_add, big_from_f32, big_is_negative, big_is_zero, big_lt, big_mul,
    big_neg, big_sub, difference, ratio_to_f32,
};
use super::segment_rect::{UNCERTAIN, compare_crossings, crossing_det, same_certain_side};
use crate::types::Segment;

/// How a query segment meets a wall (closed segments both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contact {
    /// No common point.
    Miss,
    /// A single common point inside both segments (not an end of either), the segments not
    /// parallel: a proper crossing.
    Cross,
    /// A single common point otherwise: an end of one lies on the other, two ends meet, or a
    /// zero-length segment (a point) lies on the other.
    Touch,
    /// A common part of positive length: the segments are collinear and overlap.
    Overlap,
}

impl Contact {
    /// Every contact, in code order.
    pub const ALL: [Contact; 4] = [
        Contact::Miss,
        Contact::Cross,
        Contact::Touch,
        Contact::Overlap,
    ];

    /// The lowercase name used by the CLI (`miss`, `cross`, `touch`, `overlap`).
    pub fn name(self) -> &'static str {
        match self {
            Contact::Miss => "miss",
            Contact::Cross => "cross",
            Contact::Touch => "touch",
            Contact::Overlap => "overlap",
        }
    }

    /// Its code in [`SegmentContact::contact`].
    pub const fn code(self) -> u32 {
        match self {
            Contact::Miss => 0,
            Contact::Cross => 1,
            Contact::Touch => 2,
            Contact::Overlap => 3,
        }
    }

    /// The contact of [`Contact::code`]; any other number is `Miss`.
    pub const fn from_code(code: u32) -> Contact {
        match code {
            1 => Contact::Cross,
            2 => Contact::Touch,
            3 => Contact::Overlap,
            _ => Contact::Miss,
        }
    }
}

/// The result for one (query segment, wall) pair: 12 bytes, GPU-ready.
///
/// `t_enter` and `t_exit` are the first and last t of the query segment at a common point,
/// each the exact value rounded to the nearest f32 (ties to even). On a miss both are 0 and
/// `contact` is 0. A zero-length query on the wall gives `t_enter = 0`, `t_exit = 1`: every t
/// of it is a common point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SegmentContact {
    pub t_enter: f32,
    pub t_exit: f32,
    /// [`Contact::code`].
    pub contact: u32,
}

impl SegmentContact {
    pub const MISS: Self = Self {
        t_enter: 0.0,
        t_exit: 0.0,
        contact: 0,
    };

    pub fn hit(&self) -> bool {
        self.contact != Contact::Miss.code()
    }

    pub fn contact(&self) -> Contact {
        Contact::from_code(self.contact)
    }

    /// Where the segment meets the wall (at t_enter, on a hit), and whether it runs along it
    /// to a second end (an overlap's t_exit).
    pub fn boundary(&self) -> (bool, bool) {
        let contact = self.contact();
        (contact != Contact::Miss, contact == Contact::Overlap)
    }
}

/// The common part of a query and a wall, exactly: its contact, and its first and last t as
/// ratios (a denominator above 0) before rounding. WGSL `SegmentRatios`; polygons compare two
/// edges' ratios exactly.
pub(crate) struct SegmentRatios {
    pub(crate) contact: Contact,
    pub(crate) enter_num: Big,
    pub(crate) enter_den: Big,
    pub(crate) exit_num: Big,
    pub(crate) exit_den: Big,
}

/// [`wall_verdict`]: one segment lies strictly on one side of the other's line.
pub const WALLS_APART: i32 = 0;
/// [`wall_verdict`]: each segment's ends lie strictly on both sides of the other's line.
pub const WALLS_CROSS: i32 = 1;

/// The pair's hit from four certified orientations (`compare_crossings`, whose bound holds on
/// any GPU): [`WALLS_APART`] when one segment lies strictly on one side of the other's line,
/// [`WALLS_CROSS`] when each segment's ends lie strictly on both sides of the other's line (a
/// proper crossing), `UNCERTAIN` (another value) otherwise: an end on or near the other line,
/// left to the exact integers.
#[inline(always)]
pub fn wall_verdict(query: &Segment, wall: &Segment) -> i32 {
    let wall_start = compare_crossings(query, wall.x0, wall.y0, false);
    let wall_end = compare_crossings(query, wall.x1, wall.y1, false);
    let query_start = compare_crossings(wall, query.x0, query.y0, false);
    let query_end = compare_crossings(wall, query.x1, query.y1, false);
    if same_certain_side(wall_start, wall_end) || same_certain_side(query_start, query_end) {
        return WALLS_APART;
    }
    if wall_start != UNCERTAIN
        && wall_end != UNCERTAIN
        && query_start != UNCERTAIN
        && query_end != UNCERTAIN
    {
        return WALLS_CROSS;
    }
    UNCERTAIN
}

/// Where `query`'s ends lie certainly on both sides of `wall`'s line ([`crossing_det`]), the
/// time it meets that line is t = o0 / (o0 + o1), o0 and o1 the ends' distances from it as
/// `crossing_det` measures them; each is within its bound of det. This is (o0's upper bound,
/// that plus o1's lower one), a ratio at or after t whose terms are off by their own roundings
/// alone (within 2^-21 relatively: the bounds exceed 2^-120, so no subnormal enters); (1, 1)
/// where the sides are not certain. For a crossing [`wall_verdict`] certifies, t is the pair's
/// t_enter. WGSL `crossing_fraction`; [`crate::cpu::shape_walk::ratio_time_above`] makes it a
/// time.
pub fn crossing_fraction(ops: &dyn F32Arithmetic, query: &Segment, wall: &Segment) -> (f32, f32) {
    let start = crossing_det(ops, wall, query.x0, query.y0);
    let end = crossing_det(ops, wall, query.x1, query.y1);
    let apart = (start.0 > start.1 && end.0 < -end.1) || (start.0 < -start.1 && end.0 > end.1);
    if !apart {
        return (1.0, 1.0);
    }
    let before = ops.add(start.0.abs(), start.1);
    let after = ops.sub(end.0.abs(), end.1);
    (before, ops.add(before, after))
}

/// [`segment_segment`] before its t are rounded.
pub(crate) fn segment_segment_ratios(query: &Segment, wall: &Segment) -> SegmentRatios {
    // Products at two call sites, each in a loop over its operands, as in the shader (whose
    // compiler inlines every call in full).
    let mut one: Big = [0; LIMBS];
    one[0] = 1;
    let miss = SegmentRatios {
        contact: Contact::Miss,
        enter_num: [0; LIMBS],
        enter_den: one,
        exit_num: [0; LIMBS],
        exit_den: one,
    };
    let values = [
        query.x0, query.y0, query.x1, query.y1, wall.x0, wall.y0, wall.x1, wall.y1,
    ];
    let mut exact: [Big; 8] = [[0; LIMBS]; 8];
    for k in 0..8 {
        exact[k] = big_from_f32(values[k]);
    }
    let p0 = BigPoint {
        x: exact[0],
        y: exact[1],
    };
    let p1 = BigPoint {
        x: exact[2],
        y: exact[3],
    };
    let q0 = BigPoint {
        x: exact[4],
        y: exact[5],
    };
    let q1 = BigPoint {
        x: exact[6],
        y: exact[7],
    };
    let d = difference(&p1, &p0);
    let e = difference(&q1, &q0);
    let w = difference(&q0, &p0);
    let f = difference(&q1, &p0);
    // The crossing's cross products, den = d × e, a = w × e, b = w × d, from six products.
    let cross_left = [&d.x, &d.y, &w.x, &w.y, &w.x, &w.y];
    let cross_right = [&e.y, &e.x, &e.y, &e.x, &d.y, &d.x];
    let mut crosses: [Big; 6] = [[0; LIMBS]; 6];
    for k in 0..6 {
        crosses[k] = big_mul(cross_left[k], cross_right[k]);
    }
    let mut den = big_sub(&crosses[0], &crosses[1]);
    let mut a = big_sub(&crosses[2], &crosses[3]);
    let mut b = big_sub(&crosses[4], &crosses[5]);
    let mut contact = Contact::Touch;
    let mut enter_num: Big = [0; LIMBS];
    let mut enter_den = one;
    let mut exit_num = one;
    let mut exit_den = one;
    if !big_is_zero(&den) {
        // Not parallel: the lines meet at t = a / den on the query, u = b / den on the wall.
        if big_is_negative(&den) {
            a = big_neg(&a);
            b = big_neg(&b);
            den = big_neg(&den);
        }
        if big_is_negative(&a) || big_lt(&den, &a) || big_is_negative(&b) || big_lt(&den, &b) {
            return miss;
        }
        let inside_a = !big_is_zero(&a) && big_lt(&a, &den);
        let inside_b = !big_is_zero(&b) && big_lt(&b, &den);
        if inside_a && inside_b {
            contact = Contact::Cross;
        }
        enter_num = a;
        enter_den = den;
        exit_num = a;
        exit_den = den;
    } else {
        // Parallel or degenerate: we = w · e, ee = e · e, dd = d · d, s0 = w · d, s1 = f · d.
        let dot_left = [&w.x, &w.y, &e.x, &e.y, &d.x, &d.y, &w.x, &w.y, &f.x, &f.y];
        let dot_right = [&e.x, &e.y, &e.x, &e.y, &d.x, &d.y, &d.x, &d.y, &d.x, &d.y];
        let mut terms: [Big; 10] = [[0; LIMBS]; 10];
        for k in 0..10 {
            terms[k] = big_mul(dot_left[k], dot_right[k]);
        }
        let mut dots: [Big; 5] = [[0; LIMBS]; 5];
        for k in 0..5 {
            dots[k] = big_add(&terms[2 * k], &terms[2 * k + 1]);
        }
        let ee = dots[1];
        let dd = dots[2];
        if big_is_zero(&d.x) && big_is_zero(&d.y) {
            // The query is a point, p0 = q0 − w: on the wall, every t of it is a common point.
            let on = if big_is_zero(&e.x) && big_is_zero(&e.y) {
                big_is_zero(&w.x) && big_is_zero(&w.y)
            } else {
                // (p0 − q0) × e = −a, (p0 − q0) · e = −we.
                let along = big_neg(&dots[0]);
                big_is_zero(&a) && !big_is_negative(&along) && !big_lt(&ee, &along)
            };
            if !on {
                return miss;
            }
        } else {
            if !big_is_zero(&b) {
                // Parallel lines apart, or a point wall off the query's line.
                return miss;
            }
            // Collinear: the wall's ends at t = s0 / dd and s1 / dd, clamped to [0, dd].
            let mut lo = dots[3];
            let mut hi = dots[4];
            if big_lt(&hi, &lo) {
                lo = dots[4];
                hi = dots[3];
            }
            if big_is_negative(&lo) {
                lo = [0; LIMBS];
            }
            if big_lt(&dd, &hi) {
                hi = dd;
            }
            if big_lt(&hi, &lo) {
                return miss;
            }
            if big_lt(&lo, &hi) {
                contact = Contact::Overlap;
            }
            enter_num = lo;
            enter_den = dd;
            exit_num = hi;
            exit_den = dd;
        }
    }
    SegmentRatios {
        contact,
        enter_num,
        enter_den,
        exit_num,
        exit_den,
    }
}

/// Where `query` meets `wall`: the common points of the two closed segments, exactly, with
/// the t of the first and last of them along `query` correctly rounded.
///
/// Degenerate cases:
/// - parallel segments on distinct lines miss; collinear ones overlap (`Overlap`), meet at one
///   end (`Touch`) or miss;
/// - a zero-length wall is a point: `Touch` at its t when it lies on the query;
/// - a zero-length query is a point: `Touch` with t from 0 to 1 when it lies on the wall;
/// - two equal points touch.
///
/// Inputs are valid (finite, |v| ≤ 2^62); -0.0 equals 0.0.
pub fn segment_segment(query: &Segment, wall: &Segment) -> SegmentContact {
    if wall_verdict(query, wall) == WALLS_APART {
        return SegmentContact::MISS;
    }
    let ratios = segment_segment_ratios(query, wall);
    if ratios.contact == Contact::Miss {
        return SegmentContact::MISS;
    }
    let nums = [ratios.enter_num, ratios.exit_num];
    let dens = [ratios.enter_den, ratios.exit_den];
    let mut t = [0.0f32; 2];
    for k in 0..2 {
        t[k] = ratio_to_f32(&nums[k], &dens[k]);
    }
    contact_at(t[0], t[1], ratios.contact)
}

/// Whether `query` meets `wall`, exactly, without t: [`segment_segment`]'s hit, what counts
/// ask (the GPU's `shape_counts`, through the hook `shape_hit`).
pub fn segment_segment_hit(query: &Segment, wall: &Segment) -> bool {
    let verdict = wall_verdict(query, wall);
    if verdict != UNCERTAIN {
        return verdict == WALLS_CROSS;
    }
    segment_segment_ratios(query, wall).contact != Contact::Miss
}

fn contact_at(t_enter: f32, t_exit: f32, contact: Contact) -> SegmentContact {
    SegmentContact {
        t_enter,
        t_exit,
        contact: contact.code(),
    }
}
