//! Segment × circle on 64-, 128- and 256-bit integers (`crate::cpu::narrow`), for pairs whose
//! seven values span at most `SPAN` binary orders: `circle_meeting`'s steps and branches, and
//! its roots' search, on narrow integers. Pairs beyond that reach, and roots whose search
//! probes below about 2^-40 (where a probe's terms outgrow 256 bits), are left to the wide
//! integers.

use super::{
    Circle, CircleContact, CircleKind, HALF_BITS, ONE_BITS, PHASE_BISECT, PHASE_DOWN, PHASE_GUESS,
    PHASE_ROUND, PHASE_UP, SEARCH_STEPS, circle_contact, root_guesses,
};
use crate::cpu::narrow::{Wide, mul_full, narrow_ratio_to_f32, scaled_values};
use crate::types::Segment;

/// The largest k of a probe m · 2^-k the narrow search takes: with |C| below 2^127, C · 2^2k
/// stays below 2^253, and the sum of the probe's three terms within ±2^255.
const MAX_PROBE_SHIFT: u32 = 63;

/// `l · r` of two differences.
fn dot(l: (i64, i64), r: (i64, i64)) -> i128 {
    l.0 as i128 * r.0 as i128 + l.1 as i128 * r.1 as i128
}

/// [`super::segment_circle`]'s answer, from the narrow integers, for pairs whose seven values
/// span at most `SPAN` (62) binary orders and whose roots lie above about 2^-40; `None` for the
/// others. Exact: the same kind and the same correctly rounded t.
pub fn circle_narrow(query: &Segment, circle: &Circle) -> Option<CircleContact> {
    narrow_meeting(query, circle, true)
}

/// [`circle_narrow`], with its t when `times` holds; without them (both 0: the hit and the kind
/// alone, what counts ask) the roots' search is skipped, as `circle_meeting`'s is.
pub fn narrow_meeting(query: &Segment, circle: &Circle, times: bool) -> Option<CircleContact> {
    let v = scaled_values(&[
        query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r, 0.0,
    ])?;
    // Each scaled value is below 2^62: differences fit an i64, and q(0), q(1), dd and fd an
    // i128 (two squares below 2^126 each, less a square).
    let f = (v[0] - v[4], v[1] - v[5]);
    let g = (v[2] - v[4], v[3] - v[5]);
    let d = (v[2] - v[0], v[3] - v[1]);
    let r2 = v[6] as i128 * v[6] as i128;
    let (start, end) = (dot(f, f) - r2, dot(g, g) - r2);
    let (dd, fd) = (dot(d, d), dot(f, d));
    let (start_in, end_in) = (start <= 0, end <= 0);
    if start_in && end_in {
        return Some(circle_contact(0.0, 1.0, CircleKind::Inside));
    }
    if dd == 0 {
        // A point outside the disk.
        return Some(CircleContact::MISS);
    }
    let kind = if start_in {
        CircleKind::Exit
    } else if end_in {
        CircleKind::Enter
    } else {
        // Both ends outside: q is least at t = −fd / dd, strictly between them, and ≤ 0
        // there: fd² ≥ dd · q(0), in full.
        let ahead = -fd;
        if fd >= 0 || ahead >= dd {
            return Some(CircleContact::MISS);
        }
        let square = mul_full(fd.unsigned_abs(), fd.unsigned_abs());
        let product = mul_full(dd as u128, start as u128);
        if square < product {
            return Some(CircleContact::MISS);
        }
        if square == product {
            let t = if times {
                narrow_ratio_to_f32(ahead as u128, dd as u128)
            } else {
                0.0
            };
            return Some(circle_contact(t, t, CircleKind::Tangent));
        }
        CircleKind::Cross
    };
    if !times {
        return Some(circle_contact(0.0, 0.0, kind));
    }
    let guesses = root_guesses(query, circle);
    let coefficients = [Wide::of(dd), Wide::of(fd), Wide::of(start)];
    let mut t = [0.0f32, 1.0];
    if !start_in {
        t[0] = root_to_f32(&coefficients, false, guesses[0])?;
    }
    if !end_in {
        // A start on the circle heading out leaves at t = 0 exactly (a root the search would
        // probe down to the subnormals for).
        t[1] = if start == 0 && fd >= 0 {
            0.0
        } else {
            root_to_f32(&coefficients, true, guesses[1])?
        };
    }
    Some(circle_contact(t[0], t[1], kind))
}

/// The mirror's `root_to_f32` on [`Wide`] coefficients (A, B, C): the same search from the
/// same estimate, so the same probes, and `None` at a probe past [`MAX_PROBE_SHIFT`].
fn root_to_f32(coefficients: &[Wide; 3], upper: bool, guess: f32) -> Option<f32> {
    let mut lo = 0u32;
    let mut hi = ONE_BITS + 1;
    let mut probe = guess.to_bits();
    if probe > ONE_BITS {
        probe = HALF_BITS;
    }
    let mut phase = PHASE_GUESS;
    let mut step = 1u32;
    for _ in 0..SEARCH_STEPS {
        if (phase == PHASE_UP || phase == PHASE_DOWN) && step >= hi - lo {
            phase = PHASE_BISECT;
        }
        if phase == PHASE_BISECT && hi - lo == 1 {
            phase = PHASE_ROUND;
        }
        probe = match phase {
            PHASE_UP => lo + step,
            PHASE_DOWN => hi - step,
            PHASE_BISECT => lo + (hi - lo) / 2,
            PHASE_ROUND => lo,
            _ => probe,
        };
        // The probe's value m · 2^-k; in the last phase, the midpoint of lo and the next f32.
        let exponent = probe >> 23;
        let (mut m, mut k) = if exponent == 0 {
            (probe & 0x7f_ffff, 149)
        } else {
            ((probe & 0x7f_ffff) | 0x80_0000, 150 - exponent)
        };
        if phase == PHASE_ROUND {
            (m, k) = (2 * m + 1, k + 1);
        }
        if k > MAX_PROBE_SHIFT {
            return None;
        }
        let side = root_side(coefficients, m, k, upper);
        if phase == PHASE_ROUND {
            if side < 0 || (side == 0 && lo % 2 == 1) {
                return Some(f32::from_bits(lo + 1));
            }
            return Some(f32::from_bits(lo));
        }
        let above = side > 0;
        match (phase, above) {
            (PHASE_GUESS, true) => (hi, phase) = (probe, PHASE_DOWN),
            (PHASE_GUESS, false) => (lo, phase) = (probe, PHASE_UP),
            (PHASE_UP, true) => (hi, phase) = (probe, PHASE_BISECT),
            (PHASE_UP, false) => (lo, step) = (probe, step * 2),
            (PHASE_DOWN, true) => (hi, step) = (probe, step * 2),
            (PHASE_DOWN, false) => (lo, phase) = (probe, PHASE_BISECT),
            (_, true) => hi = probe,
            (_, false) => lo = probe,
        }
    }
    Some(f32::from_bits(lo))
}

/// The mirror's `root_side` on [`Wide`] coefficients: the signs of q(m·2^-k)·2^2k =
/// A·m² + 2B·m·2^k + C·2^2k and of A·m + B·2^k, for k ≤ [`MAX_PROBE_SHIFT`].
fn root_side(coefficients: &[Wide; 3], m: u32, k: u32, upper: bool) -> i32 {
    let [a, b, c] = *coefficients;
    let am = a.mul(m);
    let q = am.mul(m).add(b.mul(m).shl(k + 1)).add(c.shl(2 * k)).sign();
    let slope = am.add(b.shl(k)).sign();
    // The leaving root: inside (q < 0) is below it, and so is outside before the vertex.
    // The entering one: inside is above it, and so is outside after the vertex.
    if upper {
        return match (q, slope) {
            (-1, _) => -1,
            (0, s) if s >= 0 => 0,
            (1, s) if s > 0 => 1,
            _ => -1,
        };
    }
    match (q, slope) {
        (-1, _) => 1,
        (0, s) if s <= 0 => 0,
        (1, s) if s < 0 => -1,
        _ => 1,
    }
}
