//! Segment × circle on 64-, 128- and 256-bit integers (`crate::cpu::narrow`), for pairs whose
//! seven values span at most `SPAN` binary orders: `circle_meeting`'s steps and branches, and
//! its roots' search, on narrow integers. Pairs beyond that reach, and roots whose search
//! probes below about 2^-40 (where a probe's terms outgrow 256 bits), are left to the wide
//! integers.
//!
//! The CPU mirror of `narrow_meeting`, `narrow_root_to_f32` and `narrow_root_side` in
//! `shaders/segment_circle.wgsl`, which the circles' kernel runs before its wide integers too.

use super::{
    Circle, CircleContact, CircleKind, PHASE_ROUND, SEARCH_STEPS, circle_contact, probe_of,
    root_guesses, rounded_root, search_after, search_from, search_phase, side_of,
};
use crate::cpu::narrow::{
    Wide256, narrow_difference, narrow_dot, narrow_is_negative, narrow_is_zero, narrow_lt,
    narrow_mul_full, narrow_neg, narrow_ratio_to_f32, scaled_values, wide256_compare,
};
use crate::types::Segment;

/// The largest k of a probe m · 2^-k the narrow search takes: with |C| below 2^127,
/// C · 2^2k stays below 2^253, and the sum of the probe's three terms within ±2^255. The
/// shader's `NARROW_PROBE_SHIFT`.
pub(crate) const NARROW_PROBE_SHIFT: u32 = 63;

/// [`super::segment_circle`]'s answer, from the narrow integers, for pairs whose seven values
/// span at most `SPAN` (62) binary orders and whose roots lie above about 2^-40; `None` for the
/// others. Exact: the same kind and the same correctly rounded t.
pub fn circle_narrow(query: &Segment, circle: &Circle) -> Option<CircleContact> {
    narrow_meeting(query, circle, true)
}

/// [`circle_narrow`], with its t when `times` holds; without them (both 0: the hit and the kind
/// alone, what counts ask) the roots' search is skipped, as `circle_meeting`'s is. The CPU
/// mirror of the shader's `narrow_meeting`.
pub fn narrow_meeting(query: &Segment, circle: &Circle, times: bool) -> Option<CircleContact> {
    let miss = Some(CircleContact::MISS);
    let v = scaled_values(&[
        query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r, 0.0,
    ])?;
    // Each scaled value is below 2^62: differences fit 64 bits, and q(0), q(1), dd and fd 128
    // (two squares below 2^126 each, less a square).
    let f = narrow_difference(v[0], v[1], v[4], v[5]);
    let g = narrow_difference(v[2], v[3], v[4], v[5]);
    let d = narrow_difference(v[2], v[3], v[0], v[1]);
    let r2 = v[6] as i128 * v[6] as i128;
    let start = narrow_dot(f, f) - r2;
    let end = narrow_dot(g, g) - r2;
    let dd = narrow_dot(d, d);
    let fd = narrow_dot(f, d);
    let start_in = narrow_is_negative(start) || narrow_is_zero(start);
    let end_in = narrow_is_negative(end) || narrow_is_zero(end);
    if start_in && end_in {
        return Some(circle_contact(0.0, 1.0, CircleKind::Inside));
    }
    if narrow_is_zero(dd) {
        // A point outside the disk.
        return miss;
    }
    let mut kind = CircleKind::Cross;
    if start_in {
        kind = CircleKind::Exit;
    } else if end_in {
        kind = CircleKind::Enter;
    } else {
        // Both ends outside: q is least at t = −fd / dd, strictly between them, and ≤ 0
        // there: fd² ≥ dd · q(0), in full.
        let ahead = narrow_neg(fd);
        if !narrow_is_negative(fd) || !narrow_lt(ahead, dd) {
            return miss;
        }
        let discriminant = wide256_compare(
            narrow_mul_full(ahead as u128, ahead as u128),
            narrow_mul_full(dd as u128, start as u128),
        );
        if discriminant < 0 {
            return miss;
        }
        if discriminant == 0 {
            let mut t = 0.0;
            if times {
                t = narrow_ratio_to_f32(ahead as u128, dd as u128);
            }
            return Some(circle_contact(t, t, CircleKind::Tangent));
        }
    }
    if !times {
        return Some(circle_contact(0.0, 0.0, kind));
    }
    let guesses = root_guesses(query, circle);
    let coefficients = [Wide256::of(dd), Wide256::of(fd), Wide256::of(start)];
    let mut t = [0.0f32, 1.0];
    if !start_in {
        let root = narrow_root_to_f32(&coefficients, false, guesses[0])?;
        t[0] = root;
    }
    if !end_in {
        // A start on the circle heading out leaves at t = 0 exactly (a root the search would
        // probe down to the subnormals for).
        if narrow_is_zero(start) && !narrow_is_negative(fd) {
            t[1] = 0.0;
        } else {
            let root = narrow_root_to_f32(&coefficients, true, guesses[1])?;
            t[1] = root;
        }
    }
    Some(circle_contact(t[0], t[1], kind))
}

/// The mirror's `root_to_f32` search with each probe's side from [`narrow_root_side`]: the same
/// probes from the same estimate, and `None` at a probe deeper than 2^-[`NARROW_PROBE_SHIFT`].
fn narrow_root_to_f32(coefficients: &[Wide256; 3], upper: bool, guess: f32) -> Option<f32> {
    let mut search = search_from(guess);
    for _ in 0..SEARCH_STEPS {
        search = search_phase(search);
        let probe = probe_of(search);
        if probe.k > NARROW_PROBE_SHIFT {
            return None;
        }
        let side = narrow_root_side(coefficients, probe.m, probe.k, upper);
        if search.phase == PHASE_ROUND {
            return Some(rounded_root(search, side));
        }
        search = search_after(search, side > 0);
    }
    Some(f32::from_bits(search.lo))
}

/// The mirror's `root_side` on [`Wide256`] coefficients, for k ≤ [`NARROW_PROBE_SHIFT`].
fn narrow_root_side(coefficients: &[Wide256; 3], m: u32, k: u32, upper: bool) -> i32 {
    let am = coefficients[0].mul(m);
    let bm = coefficients[1].mul(m);
    let value = am.mul(m).add(bm.shl(k + 1)).add(coefficients[2].shl(2 * k));
    let q = value.sign();
    let slope = am.add(coefficients[1].shl(k)).sign();
    side_of(q, slope, upper)
}
