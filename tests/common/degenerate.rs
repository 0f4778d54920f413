//! Generators of segments full of degeneracies, shared by the shapes' tests
//! (tests/segment_segment.rs, tests/segment_circle.rs).

use rectcast::Segment;
use rectcast::scene::SplitMix64;

fn s(x0: f32, y0: f32, x1: f32, y1: f32) -> Segment {
    Segment::new(x0, y0, x1, y1)
}

/// Coordinates that make degeneracies common: a coarse grid (collinear points, shared ends,
/// parallels), repeated values, and now and then any float at any scale.
pub fn coordinate(rng: &mut SplitMix64, scale: f32) -> f32 {
    match rng.below(8) {
        0..=4 => (rng.below(9) as f32 - 4.0) * scale,
        5 => (rng.below(5) as f32 - 2.0) * 0.5 * scale,
        6 => rng.range(-4.0, 4.0) * scale,
        _ => {
            f32::from_bits(rng.next_u64() as u32 & 0x5fff_ffff)
                * if rng.below(2) == 0 { 1.0 } else { -1.0 }
        }
    }
}

pub fn random_segment(rng: &mut SplitMix64, scale: f32) -> Segment {
    let x0 = coordinate(rng, scale);
    let y0 = coordinate(rng, scale);
    // A point now and then.
    if rng.below(16) == 0 {
        return s(x0, y0, x0, y0);
    }
    s(x0, y0, coordinate(rng, scale), coordinate(rng, scale))
}

pub fn valid(s: &Segment) -> bool {
    [s.x0, s.y0, s.x1, s.y1]
        .iter()
        .all(|v| v.is_finite() && v.abs() <= rectcast::MAX_ABS_COORDINATE)
}

/// The binary orders the nonzero values span: from the least significant set bit among them
/// to just above the highest set bit. The narrow integers reach a pair whose values span at
/// most 62 (src/cpu/narrow.rs `SPAN`); computed here from the bits alone, independently.
pub fn binary_orders(values: &[f32]) -> Option<i32> {
    let (mut low, mut high) = (i32::MAX, i32::MIN);
    for v in values.iter().filter(|v| **v != 0.0) {
        let bits = v.to_bits() & 0x7fff_ffff;
        let (field, fraction) = ((bits >> 23) as i32, bits & 0x7f_ffff);
        let (m, e) = if field == 0 {
            (fraction, -149)
        } else {
            (fraction | 0x80_0000, field - 150)
        };
        low = low.min(e + m.trailing_zeros() as i32);
        high = high.max(e + 32 - m.leading_zeros() as i32);
    }
    (low <= high).then_some(high - low)
}

/// A segment whose values span exactly `orders` binary orders, from a grid of step 2^`b`:
/// one value ±4 · 2^b (below 2^(b + 3)), one ±2^(b + 3 − orders), the other two on the grid
/// (k − 4) · 2^b. Its crossings, touches at grid points and near misses by the small value put
/// every contact near the narrow integers' reach. Needs b + 3 − orders ≥ −149.
pub fn segment_spanning(rng: &mut SplitMix64, b: i32, orders: i32) -> Segment {
    let sign = |rng: &mut SplitMix64| if rng.below(2) == 0 { 1.0 } else { -1.0 };
    let unit = power_of_two(b);
    let mut v: [f32; 4] = std::array::from_fn(|_| (rng.below(9) as f32 - 4.0) * unit);
    let small = rng.below(4) as usize;
    let large = (small + 1 + rng.below(3) as usize) % 4;
    v[small] = sign(rng) * power_of_two(b + 3 - orders);
    v[large] = sign(rng) * 4.0 * unit;
    s(v[0], v[1], v[2], v[3])
}

/// 2^e exactly, for −149 ≤ e ≤ 127, subnormals included (`powi` overflows on its way to them).
pub fn power_of_two(e: i32) -> f32 {
    if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else {
        f32::from_bits(1 << (e + 149))
    }
}
