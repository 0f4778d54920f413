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
