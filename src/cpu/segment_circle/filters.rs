//! Segment × circle where floating point certifies the answer: the CPU batch path's filters,
//! before the exact integers of [`super::segment_circle`] (which answer everything else).

use super::Circle;
use super::{CircleContact, CircleKind};
use crate::cpu::lanes::{HIT_LANES, HitLanes, LaneVerdicts};
use crate::types::Segment;

/// Half an ulp of 1.0 in f64: the unit of the circle filter's error bounds.
const HALF_ULP: f64 = f64::EPSILON / 2.0;

/// The sign of a value computed with at most `bound` error, when certain: `Some(value > 0)`.
fn certain_sign(value: f64, bound: f64) -> Option<bool> {
    (value.abs() > bound).then_some(value > 0.0)
}

/// A lower bound of the exact `a − b` from its f64 rounding `d` (off by at most u·|d|).
fn below(d: f64) -> f64 {
    d - d.abs() * 2f64.powi(-50)
}

/// What the circle filter knows of a query: f = p0 − c and d = p1 − p0, each rounded once
/// from exact f32 values, and R².
struct CircleFrame {
    f: [f64; 2],
    d: [f64; 2],
    rr: f64,
}

impl CircleFrame {
    /// The side of the root (the entering one, or the `upper` one) that `m` lies on, when
    /// certain: the mirror of `root_side` in f64. G = f + m·d is off by at most 5u·S per
    /// axis (S = |f| + |m·d|), so q(m) = |G|² − R² by at most 16u·(ΣS² + R²) and q′(m)/2 =
    /// d · G by at most 12u·Σ|d|·S.
    fn side(&self, m: f64, upper: bool) -> Option<i32> {
        let mut q = -self.rr;
        let mut q_bound = self.rr;
        let mut slope = 0.0;
        let mut slope_bound = 0.0;
        for axis in 0..2 {
            let (f, d) = (self.f[axis], self.d[axis]);
            let g = f + m * d;
            let s = f.abs() + (m * d).abs();
            q += g * g;
            q_bound += s * s;
            slope += d * g;
            slope_bound += d.abs() * s;
        }
        let q = certain_sign(q, 16.0 * HALF_ULP * q_bound);
        let slope = certain_sign(slope, 12.0 * HALF_ULP * slope_bound);
        match (q?, upper) {
            (false, false) => Some(1),
            (false, true) => Some(-1),
            // Outside the disk: which side of the vertex tells the roots apart.
            (true, false) => Some(if slope? { 1 } else { -1 }),
            (true, true) => Some(if slope? { 1 } else { -1 }),
        }
    }

    /// `estimate` as the root's correctly rounded f32, when the midpoints to both of its
    /// neighbours certainly lie on either side of the root.
    fn certify(&self, estimate: f64, upper: bool) -> Option<f32> {
        let t = (estimate as f32).clamp(0.0, 1.0);
        let bits = t.to_bits();
        let previous = if bits == 0 {
            -f32::from_bits(1)
        } else {
            f32::from_bits(bits - 1)
        };
        let next = f32::from_bits(bits + 1);
        let low = (previous as f64 + t as f64) / 2.0;
        let high = (t as f64 + next as f64) / 2.0;
        (self.side(low, upper)? == -1 && self.side(high, upper)? == 1).then_some(t)
    }
}

/// [`crate::segment_circle`]'s answer where floating point certifies it, `None` where only
/// its exact integers can tell. In f64, from f32 inputs: the boxes of the segment and the disk
/// apart (a miss); the signs of q(0) and q(1) (ends in or out), of the discriminant
/// (R²·|d|² − (f × d)²) and of q′ at the ends (where the vertex lies), each past its error
/// bound; each t a root estimate certified by the sides of the midpoints to its neighbours.
/// Tangents, ends on the circle and t near a rounding boundary take the exact path.
pub fn circle_filtered(query: &Segment, circle: &Circle) -> Option<CircleContact> {
    let f = |v: f32| v as f64;
    let (cx, cy, r) = (f(circle.cx), f(circle.cy), f(circle.r));
    let (x0, y0, x1, y1) = (f(query.x0), f(query.y0), f(query.x1), f(query.y1));
    // Boxes apart, against lower bounds of the exact box edges.
    if x0.max(x1) < below(cx - r)
        || -x0.min(x1) < below(-cx - r)
        || y0.max(y1) < below(cy - r)
        || -y0.min(y1) < below(-cy - r)
    {
        return Some(CircleContact::MISS);
    }
    let frame = CircleFrame {
        f: [x0 - cx, y0 - cy],
        d: [x1 - x0, y1 - y0],
        rr: r * r,
    };
    let [fx, fy] = frame.f;
    let [dx, dy] = frame.d;
    let (gx, gy) = (x1 - cx, y1 - cy);
    let rr = frame.rr;
    // q(0) and q(1): each |·|² − R², off by at most 8u of its terms' magnitudes.
    let start_out = certain_sign(
        fx * fx + fy * fy - rr,
        8.0 * HALF_ULP * (fx * fx + fy * fy + rr),
    )?;
    let end_out = certain_sign(
        gx * gx + gy * gy - rr,
        8.0 * HALF_ULP * (gx * gx + gy * gy + rr),
    )?;
    if !start_out && !end_out {
        return Some(CircleContact {
            t_enter: 0.0,
            t_exit: 1.0,
            kind: CircleKind::Inside.code(),
        });
    }
    if dx == 0.0 && dy == 0.0 {
        // A point (f64 subtraction of f32 values is 0 only for equal ones) outside.
        return Some(CircleContact::MISS);
    }
    let dd = dx * dx + dy * dy;
    let fd = fx * dx + fy * dy;
    let cross = fx * dy - fy * dx;
    let cross_bound = 8.0 * HALF_ULP * ((fx * dy).abs() + (fy * dx).abs());
    let kind = match (start_out, end_out) {
        (false, _) => CircleKind::Exit,
        (true, false) => CircleKind::Enter,
        (true, true) => {
            // The discriminant R²·|d|² − (f × d)², from |f × d| within its bound and |d|²
            // within 4u.
            let (far, near) = (
                (cross.abs() - cross_bound).max(0.0),
                cross.abs() + cross_bound,
            );
            if far * far > rr * dd * (1.0 + 16.0 * HALF_ULP) {
                return Some(CircleContact::MISS);
            }
            // The vertex past an end: f · d ≥ 0 or g · d ≤ 0, certainly.
            let ahead = certain_sign(fd, 8.0 * HALF_ULP * ((fx * dx).abs() + (fy * dy).abs()));
            let gd = gx * dx + gy * dy;
            let behind = certain_sign(gd, 8.0 * HALF_ULP * ((gx * dx).abs() + (gy * dy).abs()));
            if ahead == Some(true) || behind == Some(false) {
                return Some(CircleContact::MISS);
            }
            if ahead != Some(false)
                || behind != Some(true)
                || near * near * (1.0 + 16.0 * HALF_ULP) >= rr * dd * (1.0 - 16.0 * HALF_ULP)
            {
                return None;
            }
            CircleKind::Cross
        }
    };
    // Root estimates, each without cancellation: t± = (−fd ± √D) / dd = q(0) / (−fd ∓ √D).
    let root = (rr * dd - cross * cross).max(0.0).sqrt();
    let start = fx * fx + fy * fy - rr;
    let mut t = [0.0f32, 1.0];
    if start_out {
        let estimate = if fd < 0.0 {
            start / (root - fd)
        } else {
            (-fd - root) / dd
        };
        t[0] = frame.certify(estimate, false)?;
    }
    if end_out {
        let estimate = if fd <= 0.0 {
            (root - fd) / dd
        } else {
            start / (-fd - root)
        };
        t[1] = frame.certify(estimate, true)?;
    }
    Some(CircleContact {
        t_enter: t[0],
        t_exit: t[1],
        kind: kind.code(),
    })
}

/// [`circle_filtered`]'s hit alone, for sixteen circles ([`crate::Shape::hit_lanes`]; lanes cx, cy, r), with the same f64 values and error bounds: an end certainly in the disk is a hit; both
/// ends certainly out, a point, or the line certainly apart from the disk, or its nearest point
/// certainly past an end, a miss; both ends out, the nearest point certainly between them and
/// certainly within R, a hit. Tangents and ends on the circle are left to the exact path.
/// A certain hit whose start is certainly outside gets a `t_below` (from `entering_t_below`).
#[inline(always)]
pub fn circle_hit_lanes(query: &Segment, circles: &HitLanes) -> LaneVerdicts {
    let [cx, cy, r, _] = &circles.values;
    let (x0, y0) = (query.x0 as f64, query.y0 as f64);
    let (x1, y1) = (query.x1 as f64, query.y1 as f64);
    let (dx, dy) = (x1 - x0, y1 - y0);
    let dd = dx * dx + dy * dy;
    // f64 subtraction of f32 values is 0 only for equal ones.
    let point = dx == 0.0 && dy == 0.0;
    let mut hit = [false; HIT_LANES];
    let mut unsure = [false; HIT_LANES];
    let mut t_below = [0.0; HIT_LANES];
    for lane in 0..HIT_LANES {
        let (cx, cy, r) = (cx[lane] as f64, cy[lane] as f64, r[lane] as f64);
        let rr = r * r;
        let (fx, fy) = (x0 - cx, y0 - cy);
        let (gx, gy) = (x1 - cx, y1 - cy);
        // q(0) and q(1), each |·|² − R² within 8u of its terms' magnitudes.
        let (ff, gg) = (fx * fx + fy * fy, gx * gx + gy * gy);
        let (start_bound, end_bound) = (8.0 * HALF_ULP * (ff + rr), 8.0 * HALF_ULP * (gg + rr));
        let start_in = certainly_below(ff, rr);
        let both_out = (ff - rr > start_bound) & (gg - rr > end_bound);
        let end_in = gg - rr < -end_bound;
        // The discriminant from |f × d| within its bound, and where the vertex lies.
        let cross = fx * dy - fy * dx;
        let cross_bound = 8.0 * HALF_ULP * ((fx * dy).abs() + (fy * dx).abs());
        let far = (cross.abs() - cross_bound).max(0.0);
        let near = cross.abs() + cross_bound;
        let apart = far * far > rr * dd * (1.0 + 16.0 * HALF_ULP);
        let fd = fx * dx + fy * dy;
        let fd_bound = 8.0 * HALF_ULP * ((fx * dx).abs() + (fy * dy).abs());
        let gd = gx * dx + gy * dy;
        let gd_bound = 8.0 * HALF_ULP * ((gx * dx).abs() + (gy * dy).abs());
        let (ahead, not_ahead) = (fd > fd_bound, fd < -fd_bound);
        let (behind, not_behind) = (gd < -gd_bound, gd > gd_bound);
        let within = near * near * (1.0 + 16.0 * HALF_ULP) < rr * dd * (1.0 - 16.0 * HALF_ULP);
        let miss = both_out & (point | apart | ahead | behind);
        let crossed = both_out & !point & not_ahead & not_behind & within;
        hit[lane] = start_in | end_in | crossed;
        unsure[lane] = !(miss | hit[lane]);
        let start_out = ff - rr > start_bound;
        t_below[lane] = if hit[lane] & start_out {
            let q0_low = (ff - rr) - start_bound;
            entering_t_below(q0_low, rr * dd, far, -fd + fd_bound)
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

/// Whether a start point certainly lies strictly inside the disk: q(0) = |f|² − R² (`ff` the
/// f64 |f|², `rr` the exact R²) below 0 by more than its bound (8u of its terms' magnitudes).
#[inline(always)]
fn certainly_below(ff: f64, rr: f64) -> bool {
    ff - rr < -8.0 * HALF_ULP * (ff + rr)
}

/// [`circle_hit_lanes`]' certain `start_in` for one circle (`[cx, cy, r, _]`, its lane values):
/// the query starts strictly inside the disk, so it meets it at t = 0.
#[inline(always)]
pub fn circle_starts_inside(query: &Segment, &[cx, cy, r, _]: &[f32; 4]) -> bool {
    let (fx, fy) = (query.x0 as f64 - cx as f64, query.y0 as f64 - cy as f64);
    let r = r as f64;
    certainly_below(fx * fx + fy * fy, r * r)
}

/// Relative slack for [`entering_t_below`]: 2^-40, thousands of times each f64 rounding.
const SLACK: f64 = 1.0 / (1u64 << 40) as f64;

/// An f32 at or below the entering root t = q(0) / (−f·d + √D), D = R²·|d|² − (f × d)², of a
/// segment that starts certainly outside the disk and meets it, from bounds of its terms:
/// `q0_low` ≤ q(0) (positive), `rr_dd` within 16u of R²·|d|², `far` ≤ |f × d|, `minus_fd_high`
/// ≥ −f·d (the circle filter's bounds). Each computed term is moved by [`SLACK`] away from t,
/// and the quotient, lowered by 2^-20, is rounded to f32 once (2^-24 relative): at or below
/// the exact t, and so at or below its correctly rounded f32. A bound under 2^-100 (or a
/// denominator not certainly positive) gives 0.
#[inline(always)]
fn entering_t_below(q0_low: f64, rr_dd: f64, far: f64, minus_fd_high: f64) -> f32 {
    let d_high = rr_dd * (1.0 + SLACK) - far * far * (1.0 - SLACK);
    let root_high = d_high.max(0.0).sqrt() * (1.0 + SLACK);
    let den_high = (minus_fd_high + root_high) * (1.0 + SLACK);
    let t = q0_low * (1.0 - SLACK) / den_high * (1.0 - SLACK);
    let t = (t * (1.0 - 2f64.powi(-20))) as f32;
    if den_high > 0.0 && t >= 2f32.powi(-100) {
        t
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::{CircleFrame, circle_starts_inside};
    use crate::types::Segment;

    #[test]
    fn a_start_is_certainly_inside_only_strictly_inside_the_disk() {
        // Integer points around a circle of radius 5 about (1, -2), (4, 2) among them on it
        // (3-4-5), at powers of two down to subnormal and up to 2^60: i64 squares decide.
        for exp in [-142, -60, -1, 0, 1, 40, 60] {
            let k = 2f64.powi(exp) as f32;
            let (cx, cy, r) = (1, -2, 5);
            for px in -6..=8 {
                for py in -9..=5 {
                    let start = [px as f32 * k, py as f32 * k];
                    let query = Segment::new(start[0], start[1], start[0] + k, start[1]);
                    let values = [cx as f32 * k, cy as f32 * k, r as f32 * k, 0.0];
                    let inside = (px - cx) * (px - cx) + (py - cy) * (py - cy) < r * r;
                    assert_eq!(
                        circle_starts_inside(&query, &values),
                        inside,
                        "start ({px}, {py}) × 2^{exp}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_root_estimate_one_float_off_is_never_certified() {
        // From (-2, 0) to (2, 0) through the unit circle: roots 0.25 and 0.75.
        let frame = CircleFrame {
            f: [-2.0, 0.0],
            d: [4.0, 0.0],
            rr: 1.0,
        };
        let ulp = |t: f32| f32::from_bits(t.to_bits() + 1) - t;
        for (root, upper) in [(0.25f32, false), (0.75, true)] {
            assert_eq!(frame.certify(root as f64, upper), Some(root));
            for wrong in [root + ulp(root), root - ulp(root - ulp(root))] {
                assert_eq!(
                    frame.certify(wrong as f64, upper),
                    None,
                    "{wrong} for {root}"
                );
            }
            // The other root's estimate is not this one's.
            assert_eq!(frame.certify(1.0 - root as f64, upper), None);
        }
    }
}
