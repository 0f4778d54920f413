//! Seeded scenes: the demo's bullet-hell frame, uniform random batches, and adversarial pairs
//! ([`adversarial`]) for tests, benches and `rectcast gen`.

pub mod adversarial;

use crate::Circle;
use crate::cpu::segment_polygon::Polygons;
use crate::types::{Rect, Segment};

/// SplitMix64: a tiny, well-known seeded generator; scenes must be reproducible from a seed.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A frame of a bullet-hell game on a 1920 × 1080 field: each bullet's move this frame is a
/// segment (speeds up to 40 px per frame, some standing still), each hitbox a rect of 8–96 px,
/// a few of them zero-width walls.
pub fn bullet_hell(seed: u64, bullets: usize, hitboxes: usize) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed);
    let segments = (0..bullets)
        .map(|i| {
            let (x, y) = (rng.range(0.0, 1920.0), rng.range(0.0, 1080.0));
            let speed = if i % 64 == 0 {
                0.0
            } else {
                rng.range(2.0, 40.0)
            };
            let angle = rng.range(0.0, std::f32::consts::TAU);
            Segment::new(x, y, x + speed * angle.cos(), y + speed * angle.sin())
        })
        .collect();
    let rects = (0..hitboxes)
        .map(|i| {
            let (x, y) = (rng.range(0.0, 1900.0), rng.range(0.0, 1060.0));
            let w = if i % 32 == 0 {
                0.0
            } else {
                rng.range(8.0, 96.0)
            };
            let h = rng.range(8.0, 96.0);
            Rect::new(x, y, x + w, y + h)
        })
        .collect();
    (segments, rects)
}

/// `count` circles in a `size` × `size` square, centres uniform, radii uniform in
/// `radii`: the enemies of the circle benches (`benches/throughput.rs`, `rectcast bench`).
pub fn random_circles(seed: u64, count: usize, size: f32, radii: (f32, f32)) -> Vec<Circle> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            Circle::new(
                rng.range(0.0, size),
                rng.range(0.0, size),
                rng.range(radii.0, radii.1),
            )
        })
        .collect()
}

/// Random simple polygons in a `size` × `size` square: star-shaped around a uniform center,
/// `vertices.0..=vertices.1` vertices at increasing angles, each at a radius in `radii`, so
/// about half are concave. A ring that rounding to f32 made not simple is drawn again.
pub fn random_polygons(
    seed: u64,
    count: usize,
    size: f32,
    radii: (f32, f32),
    vertices: (usize, usize),
) -> Polygons {
    let mut rng = SplitMix64::new(seed);
    let mut rings = Vec::with_capacity(count);
    while rings.len() < count {
        let n = vertices.0 + rng.below((vertices.1 - vertices.0 + 1) as u64) as usize;
        let (cx, cy) = (rng.range(0.0, size), rng.range(0.0, size));
        let mut angles: Vec<f32> = (0..n)
            .map(|_| rng.range(0.0, std::f32::consts::TAU))
            .collect();
        angles.sort_by(f32::total_cmp);
        let ring: Vec<[f32; 2]> = angles
            .iter()
            .map(|&a| {
                let r = rng.range(radii.0, radii.1);
                [cx + r * a.cos(), cy + r * a.sin()]
            })
            .collect();
        if Polygons::from_rings([&ring]).is_ok() {
            rings.push(ring);
        }
    }
    Polygons::from_rings(&rings).expect("each ring was checked")
}

/// Uniform random segments and rects in a `size` × `size` square, with a share of
/// axis-parallel segments, points, and grid-snapped coordinates that land exactly on edges and
/// corners, so every branch of the kernel is exercised.
pub fn random_batch(
    seed: u64,
    segment_count: usize,
    rect_count: usize,
    size: f32,
) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed);
    let coordinate = |rng: &mut SplitMix64| {
        if rng.below(4) == 0 {
            // On a coarse grid, so endpoints and edges coincide often.
            (rng.below(17) as f32 / 16.0) * size
        } else {
            rng.range(0.0, size)
        }
    };
    let segments = (0..segment_count)
        .map(|_| {
            let (x0, y0) = (coordinate(&mut rng), coordinate(&mut rng));
            let (mut x1, mut y1) = (coordinate(&mut rng), coordinate(&mut rng));
            match rng.below(10) {
                0 => x1 = x0,
                1 => y1 = y0,
                2 => (x1, y1) = (x0, y0),
                _ => {}
            }
            Segment::new(x0, y0, x1, y1)
        })
        .collect();
    let rects = (0..rect_count)
        .map(|_| {
            let (a, b) = (coordinate(&mut rng), coordinate(&mut rng));
            let (c, mut d) = (coordinate(&mut rng), coordinate(&mut rng));
            if rng.below(20) == 0 {
                d = c;
            }
            Rect::new(a.min(b), c.min(d), a.max(b), c.max(d))
        })
        .collect();
    (segments, rects)
}

/// Clustered scenes: rects and segments gathered around a few centres on a 10,000-unit field
/// (cities on a map, enemies in squads), dense inside a cluster and empty between: a uniform
/// grid's uneven case.
pub fn clustered(seed: u64, segment_count: usize, rect_count: usize) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed);
    let centres: Vec<(f32, f32, f32)> = (0..16)
        .map(|_| {
            (
                rng.range(0.0, 10_000.0),
                rng.range(0.0, 10_000.0),
                rng.range(50.0, 800.0),
            )
        })
        .collect();
    // A point near a random centre: the sum of three uniforms, roughly normal.
    let near = |rng: &mut SplitMix64| {
        let (cx, cy, spread) = centres[rng.below(centres.len() as u64) as usize];
        let mut offset = || (rng.unit() + rng.unit() + rng.unit() - 1.5) * spread;
        (cx + offset(), cy + offset())
    };
    let segments = (0..segment_count)
        .map(|_| {
            let (x, y) = near(&mut rng);
            let length = rng.range(0.0, 200.0);
            let angle = rng.range(0.0, std::f32::consts::TAU);
            Segment::new(x, y, x + length * angle.cos(), y + length * angle.sin())
        })
        .collect();
    let rects = (0..rect_count)
        .map(|_| {
            let (x, y) = near(&mut rng);
            let (w, h) = (rng.range(0.0, 40.0), rng.range(0.0, 40.0));
            Rect::new(x, y, x + w, y + h)
        })
        .collect();
    (segments, rects)
}
