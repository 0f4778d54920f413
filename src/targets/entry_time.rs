//! The exact first t at which a segment meets a target of any kind, for ordering two hits whose
//! rounded `t_enter` are equal: on the host, for both backends, and only on such a tie.
//!
//! Every kind's entry is `(p − √d) / q` in integers (q > 0, d ≥ 0): rects, walls and polygons'
//! edges cross at a ratio of two integers (d = 0), a circle's entry is the smaller root of a
//! quadratic. Each f32 is an integer multiple of 2^-149, so the inputs times 2^149 are integers
//! and every formula below is exact. The ratios are scale-free, so the scale cancels.

use num_bigint::{BigInt, Sign};
use std::cmp::Ordering;

use crate::cpu::segment_circle::{Circle, CircleContact, CircleKind};
use crate::cpu::segment_polygon::PolygonContact;
use crate::types::{Kind, PairResult, Rect, Segment, Sides};

/// `(p − √d) / q`, exactly, with `q > 0` and `d ≥ 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryTime {
    p: BigInt,
    d: BigInt,
    q: BigInt,
}

/// `v · 2^149`: an integer for every f32.
fn scaled(v: f32) -> BigInt {
    let bits = v.to_bits();
    let exponent = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    let magnitude = if exponent == 0 {
        BigInt::from(fraction)
    } else {
        BigInt::from(fraction | 0x80_0000) << (exponent - 1)
    };
    if bits >> 31 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

fn point(x: f32, y: f32) -> [BigInt; 2] {
    [scaled(x), scaled(y)]
}

fn minus(a: &[BigInt; 2], b: &[BigInt; 2]) -> [BigInt; 2] {
    [&a[0] - &b[0], &a[1] - &b[1]]
}

fn dot(a: &[BigInt; 2], b: &[BigInt; 2]) -> BigInt {
    &a[0] * &b[0] + &a[1] * &b[1]
}

fn cross(a: &[BigInt; 2], b: &[BigInt; 2]) -> BigInt {
    &a[0] * &b[1] - &a[1] * &b[0]
}

fn is_negative(v: &BigInt) -> bool {
    v.sign() == Sign::Minus
}

impl EntryTime {
    /// t = 0: the segment starts in the target.
    pub(crate) fn zero() -> Self {
        Self::ratio(BigInt::ZERO, BigInt::from(1))
    }

    /// `p / q`, for any `q` other than 0.
    pub(crate) fn ratio(p: BigInt, q: BigInt) -> Self {
        let (p, q) = if is_negative(&q) { (-p, -q) } else { (p, q) };
        Self {
            p,
            d: BigInt::ZERO,
            q,
        }
    }

    /// A value given as an f64 (a test's bounds).
    #[cfg(test)]
    fn of_f64(v: f64) -> Self {
        // v = m · 2^(e - 1074) with an integer m below 2^53 (v in [0, 1] here).
        let bits = v.to_bits();
        let exponent = (bits >> 52) & 0x7ff;
        let fraction = bits & ((1 << 52) - 1);
        let (m, shift) = if exponent == 0 {
            (fraction, 1074)
        } else {
            (fraction | (1 << 52), 1075 - exponent as i64)
        };
        Self::ratio(BigInt::from(m), BigInt::from(1) << shift)
    }

    /// Where `segment` first meets `rect`, given their hitting `result`: 0 when it starts
    /// inside, else the crossing of one of its entry sides (all of them cross at that t).
    pub(crate) fn of_rect(segment: &Segment, rect: &Rect, result: &PairResult) -> Self {
        if result.start_inside() {
            return Self::zero();
        }
        let sides = result.entry_sides().bits();
        let (bound, c0, c1) = if sides & Sides::MIN_X.bits() != 0 {
            (rect.min_x, segment.x0, segment.x1)
        } else if sides & Sides::MAX_X.bits() != 0 {
            (rect.max_x, segment.x0, segment.x1)
        } else if sides & Sides::MIN_Y.bits() != 0 {
            (rect.min_y, segment.y0, segment.y1)
        } else {
            (rect.max_y, segment.y0, segment.y1)
        };
        let c0 = scaled(c0);
        Self::ratio(scaled(bound) - &c0, scaled(c1) - &c0)
    }

    /// Where `segment` first meets `wall`, which it does: the crossing of the two lines, or
    /// along a collinear wall the nearer of its ends (0 when the segment starts on it, and for
    /// a zero-length segment).
    pub(crate) fn of_wall(segment: &Segment, wall: &Segment) -> Self {
        let p0 = point(segment.x0, segment.y0);
        let d = minus(&point(segment.x1, segment.y1), &p0);
        let q0 = point(wall.x0, wall.y0);
        let q1 = point(wall.x1, wall.y1);
        let e = minus(&q1, &q0);
        let turn = cross(&d, &e);
        if turn.sign() != Sign::NoSign {
            return Self::ratio(cross(&minus(&q0, &p0), &e), turn);
        }
        let length = dot(&d, &d);
        if length.sign() == Sign::NoSign {
            return Self::zero();
        }
        let along = dot(&minus(&q0, &p0), &d).min(dot(&minus(&q1, &p0), &d));
        if is_negative(&along) {
            return Self::zero();
        }
        Self::ratio(along, length)
    }

    /// Where `segment` first meets `circle`'s disk, given their hitting `contact`: 0 when it
    /// starts in it, else the smaller root of |p0 + t·(p1 − p0) − c|² = r².
    pub(crate) fn of_circle(segment: &Segment, circle: &Circle, contact: &CircleContact) -> Self {
        if matches!(contact.kind(), CircleKind::Inside | CircleKind::Exit) {
            return Self::zero();
        }
        let p0 = point(segment.x0, segment.y0);
        let d = minus(&point(segment.x1, segment.y1), &p0);
        let f = minus(&p0, &point(circle.cx, circle.cy));
        let r = scaled(circle.r);
        let a = dot(&d, &d);
        let b = dot(&f, &d);
        let c = dot(&f, &f) - &r * &r;
        Self {
            p: -&b,
            d: &b * &b - &a * c,
            q: a,
        }
    }

    /// Where `segment` first meets polygon `ring`, given their hitting `contact`: 0 when it
    /// starts in it, else where it meets the entry edge.
    pub(crate) fn of_polygon(
        segment: &Segment,
        entry_edge: Segment,
        contact: &PolygonContact,
    ) -> Self {
        if matches!(contact.kind(), Kind::Inside | Kind::Exit) {
            return Self::zero();
        }
        Self::of_wall(segment, &entry_edge)
    }

    /// The order of the two times, exactly.
    pub(crate) fn cmp(&self, other: &Self) -> Ordering {
        // self ? other  ⟺  q2·p1 − q1·p2 ? q2·√d1 − q1·√d2  (both q > 0).
        let l = &other.q * &self.p - &self.q * &other.p;
        let a = &other.q * &other.q * &self.d;
        let b = &self.q * &self.q * &other.d;
        compare_with_root_difference(&l, &a, &b)
    }
}

/// The order of `l` and `√a − √b` (a, b ≥ 0), in integers: `l + √b ? √a`.
fn compare_with_root_difference(l: &BigInt, a: &BigInt, b: &BigInt) -> Ordering {
    // The sign of x = l + √b.
    let x = if !is_negative(l) {
        if l.sign() == Sign::NoSign && b.sign() == Sign::NoSign {
            Ordering::Equal
        } else {
            Ordering::Greater
        }
    } else {
        b.cmp(&(l * l))
    };
    match x {
        // x < 0 ≤ √a.
        Ordering::Less => Ordering::Less,
        Ordering::Equal if a.sign() == Sign::NoSign => Ordering::Equal,
        Ordering::Equal => Ordering::Less,
        // Both sides positive or zero: square them. x² = l² + b + 2l·√b.
        Ordering::Greater => {
            let s = l * 2;
            let w = a - l * l - b;
            compare_multiple_of_root(&s, b, &w)
        }
    }
}

/// The order of `s·√b` and `w` (b ≥ 0).
fn compare_multiple_of_root(s: &BigInt, b: &BigInt, w: &BigInt) -> Ordering {
    if s.sign() == Sign::NoSign || b.sign() == Sign::NoSign {
        return BigInt::ZERO.cmp(w);
    }
    let squares = || (s * s * b).cmp(&(w * w));
    if !is_negative(s) {
        if !w.sign().eq(&Sign::Plus) {
            Ordering::Greater
        } else {
            squares()
        }
    } else if !is_negative(w) {
        Ordering::Less
    } else {
        squares().reverse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::segment_circle::segment_circle;
    use crate::cpu::segment_polygon::segment_polygon;
    use crate::cpu::segment_rect::segment_rect;
    use crate::cpu::segment_segment::segment_segment;

    fn root(p: i64, d: i64, q: i64) -> EntryTime {
        EntryTime {
            p: p.into(),
            d: d.into(),
            q: q.into(),
        }
    }

    #[test]
    fn roots_and_ratios_are_ordered_exactly() {
        // (5 − √9) / 4 = 1/2, (1 − √0) / 2 = 1/2: equal, though one is a root.
        assert_eq!(root(5, 9, 4).cmp(&root(1, 0, 2)), Ordering::Equal);
        // (3 − √2) / 2 ≈ 0.7929 against 0.79 and 0.80.
        assert_eq!(root(3, 2, 2).cmp(&root(79, 0, 100)), Ordering::Greater);
        assert_eq!(root(3, 2, 2).cmp(&root(80, 0, 100)), Ordering::Less);
        // (10 − √2) / 10 ≈ 0.8586 against (9 − √1.5·…): two roots.
        let (a, b) = (root(10, 2, 10), root(20, 9, 20));
        assert_eq!(a.cmp(&b), Ordering::Greater, "0.8586 > 0.85");
        assert_eq!(b.cmp(&a), Ordering::Less);
        assert_eq!(a.cmp(&a.clone()), Ordering::Equal);
        assert_eq!(EntryTime::zero().cmp(&root(0, 0, 7)), Ordering::Equal);
    }

    #[test]
    fn random_pairs_of_entry_times_order_as_their_values() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |n: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as i64
        };
        for _ in 0..20_000 {
            let t = |next: &mut dyn FnMut(i64) -> i64| {
                let (p, d, q) = (next(2000) - 1000, next(3) * next(1000), next(999) + 1);
                (root(p, d, q), (p as f64 - (d as f64).sqrt()) / q as f64)
            };
            let (a, va) = t(&mut next);
            let (b, vb) = t(&mut next);
            if (va - vb).abs() > 1e-9 {
                assert_eq!(a.cmp(&b), va.partial_cmp(&vb).unwrap(), "{a:?} {b:?}");
            }
        }
    }

    /// `t`, the exact time rounded, lies within half an ulp of it: between the midpoints to
    /// its neighbours.
    fn rounds_to(exact: &EntryTime, t: f32) -> bool {
        let below = (t as f64 + (t.next_down().max(0.0)) as f64) / 2.0;
        let above = (t as f64 + t.next_up() as f64) / 2.0;
        let below = if t == 0.0 { 0.0 } else { below };
        exact.cmp(&EntryTime::of_f64(below)) != Ordering::Less
            && exact.cmp(&EntryTime::of_f64(above)) != Ordering::Greater
    }

    #[test]
    fn every_kinds_entry_time_rounds_to_its_contacts_t_enter() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) % 64) as f32 / 4.0 - 8.0
        };
        let (mut rects, mut walls, mut circles, mut polygons) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            let s = Segment::new(next(), next(), next(), next());
            let (x, y, w, h) = (next(), next(), next().abs(), next().abs());
            let rect = Rect::new(x, y, x + w, y + h);
            let r = segment_rect(&s, &rect);
            if r.hit() {
                rects += 1;
                assert!(
                    rounds_to(&EntryTime::of_rect(&s, &rect, &r), r.t_enter),
                    "{s:?} {rect:?}"
                );
            }
            let wall = Segment::new(x, y, x + w, y - h);
            let c = segment_segment(&s, &wall);
            if c.hit() {
                walls += 1;
                assert!(
                    rounds_to(&EntryTime::of_wall(&s, &wall), c.t_enter),
                    "{s:?} {wall:?}"
                );
            }
            let circle = Circle::new(x, y, w);
            let c = segment_circle(&s, &circle);
            if c.hit() {
                circles += 1;
                let e = EntryTime::of_circle(&s, &circle, &c);
                assert!(rounds_to(&e, c.t_enter), "{s:?} {circle:?}");
            }
            let ring = [[x, y], [x + w + 1.0, y], [x, y + h + 1.0]];
            let c = segment_polygon(&s, &ring);
            if c.hit() {
                polygons += 1;
                let edge = match c.entry_edge {
                    crate::NO_EDGE => Segment::default(),
                    k => {
                        let (a, b) = (ring[k as usize], ring[(k as usize + 1) % 3]);
                        Segment::new(a[0], a[1], b[0], b[1])
                    }
                };
                let e = EntryTime::of_polygon(&s, edge, &c);
                assert!(rounds_to(&e, c.t_enter), "{s:?} {ring:?}");
            }
        }
        assert!(rects > 1000 && walls > 1000 && circles > 1000 && polygons > 1000);
    }
}
