//! Seeded adversarial pairs: the inputs where rounded Liang–Barsky goes wrong. Each category
//! builds a configuration that is exact on a small integer grid (a line through a corner, a
//! segment on an edge's line, an endpoint on an edge), scales it by a power of two, then often
//! moves one value by 1 to 3 ulp, so the pair sits exactly on, or just beside, a decision.

use super::SplitMix64;
use crate::types::{Rect, Segment};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Lines through a rect corner exactly, and 1..3 ulp beside it (crossings and grazes).
    Corner,
    /// Segments on an edge's line, and 1 ulp off it, whole or tilted by one endpoint.
    EdgeCollinear,
    /// Direction 1..3 ulp off an axis, beside or on an edge.
    NearParallel,
    /// A segment starting or ending on an edge or corner, or 1 ulp before or past it.
    EndpointOnEdge,
    /// The configurations above scaled to 1e-30 .. subnormal magnitudes.
    Tiny,
    /// The configurations above scaled up to the 2^62 domain limit.
    Huge,
    /// A "0.06-wide" rect at 1e6 (one ulp, 0.0625, at that magnitude) hit or just missed by a
    /// 2e6-long segment.
    Mixed,
    /// A long segment (2^20 .. 2^62) that crosses a rect's line a tiny distance (2^-140 ..
    /// 2^-90) after its start: t is subnormal or close to it.
    TinyT,
    /// Coordinates from ±0.0, ±2^-149, ±1 and ±2: signed zeros and the smallest subnormal.
    SignedZeros,
    /// Zero-length segments on corners and edges, and 1 ulp beside them.
    ZeroLength,
    /// Zero-width, zero-height and point rects against the configurations above.
    ZeroWidth,
}

impl Category {
    pub const ALL: [Category; 11] = [
        Category::Corner,
        Category::EdgeCollinear,
        Category::NearParallel,
        Category::EndpointOnEdge,
        Category::Tiny,
        Category::Huge,
        Category::Mixed,
        Category::TinyT,
        Category::SignedZeros,
        Category::ZeroLength,
        Category::ZeroWidth,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Corner => "corner",
            Category::EdgeCollinear => "edge_collinear",
            Category::NearParallel => "near_parallel",
            Category::EndpointOnEdge => "endpoint_on_edge",
            Category::Tiny => "tiny",
            Category::Huge => "huge",
            Category::Mixed => "mixed",
            Category::TinyT => "tiny_t",
            Category::SignedZeros => "signed_zeros",
            Category::ZeroLength => "zero_length",
            Category::ZeroWidth => "zero_width",
        }
    }
}

/// The input domain's bound (rectcast::validate::MAX_ABS_COORDINATE).
const LIMIT: f32 = (1u64 << 62) as f32;

/// x moved by k ulp (k may be negative), kept inside the input domain.
pub fn ulps(mut x: f32, k: i32) -> f32 {
    for _ in 0..k.unsigned_abs() {
        x = if k > 0 { x.next_up() } else { x.next_down() };
    }
    x.clamp(-LIMIT, LIMIT)
}

fn int(rng: &mut SplitMix64, lo: i32, hi: i32) -> f32 {
    (lo + rng.below((hi - lo + 1) as u64) as i32) as f32
}

/// 0 (half the time) or ±1..3.
fn nudge(rng: &mut SplitMix64) -> i32 {
    if rng.below(2) == 0 {
        return 0;
    }
    let k = 1 + rng.below(3) as i32;
    if rng.below(2) == 0 { k } else { -k }
}

/// A rect on the integer grid; zero width or height one time in eight.
fn grid_rect(rng: &mut SplitMix64) -> [f32; 4] {
    let (x, y) = (int(rng, -64, 64), int(rng, -64, 64));
    let mut w = int(rng, 1, 48);
    let mut h = int(rng, 1, 48);
    match rng.below(8) {
        0 => w = 0.0,
        1 => h = 0.0,
        _ => {}
    }
    [x, y, x + w, y + h]
}

fn make(seg: [f32; 4], rect: [f32; 4]) -> (Segment, Rect) {
    let [a, b, c, d] = rect;
    // Nudging a bound can cross its partner on a zero-width rect: keep min <= max.
    (
        Segment::new(seg[0], seg[1], seg[2], seg[3]),
        Rect::new(a.min(c), b.min(d), a.max(c), b.max(d)),
    )
}

/// Every value times 2^exponent, computed in f64 and rounded once (2^-150 is not an f32, and
/// `2f32.powi(-128)` is 0 in some builds); exact unless the result is subnormal.
fn scaled(seg: [f32; 4], rect: [f32; 4], exponent: i32) -> ([f32; 4], [f32; 4]) {
    let f = 2f64.powi(exponent);
    let scale = |v: f32| ((f64::from(v) * f) as f32).clamp(-LIMIT, LIMIT);
    (seg.map(scale), rect.map(scale))
}

/// A line through one corner of `rect` exactly: p = corner + i·d, for small integers.
fn corner_line(rng: &mut SplitMix64, rect: [f32; 4]) -> [f32; 4] {
    let cx = rect[if rng.below(2) == 0 { 0 } else { 2 }];
    let cy = rect[if rng.below(2) == 0 { 1 } else { 3 }];
    let (mut dx, mut dy) = (int(rng, -24, 24), int(rng, -24, 24));
    if dx == 0.0 && dy == 0.0 {
        dx = 1.0;
        dy = -1.0;
    }
    let (i, j) = (int(rng, -3, 6), int(rng, -3, 6));
    [cx - i * dx, cy - i * dy, cx + j * dx, cy + j * dy]
}

/// A segment on the line of one edge: y = min_y or max_y, or x = min_x or max_x, any extent.
fn edge_line(rng: &mut SplitMix64, rect: [f32; 4]) -> [f32; 4] {
    edge_line_oriented(rng, rect).0
}

/// [`edge_line`], and whether the edge is horizontal.
fn edge_line_oriented(rng: &mut SplitMix64, rect: [f32; 4]) -> ([f32; 4], bool) {
    let horizontal = rng.below(2) == 0;
    let (lo, hi) = if horizontal {
        (rect[0], rect[2])
    } else {
        (rect[1], rect[3])
    };
    let on = if horizontal {
        rect[1 + 2 * rng.below(2) as usize]
    } else {
        rect[2 * rng.below(2) as usize]
    };
    let a = int(rng, lo as i32 - 20, hi as i32 + 20);
    let b = int(rng, lo as i32 - 20, hi as i32 + 20);
    if horizontal {
        ([a, on, b, on], true)
    } else {
        ([on, a, on, b], false)
    }
}

/// A segment with one end on an edge or a corner and the other anywhere nearby.
fn endpoint_line(rng: &mut SplitMix64, rect: [f32; 4]) -> [f32; 4] {
    let x = if rng.below(3) == 0 {
        int(rng, rect[0] as i32, rect[2] as i32)
    } else {
        rect[2 * rng.below(2) as usize]
    };
    let y = if x == rect[0] || x == rect[2] {
        int(rng, rect[1] as i32, rect[3] as i32)
    } else {
        rect[1 + 2 * rng.below(2) as usize]
    };
    let (ox, oy) = (int(rng, -100, 100), int(rng, -100, 100));
    if rng.below(2) == 0 {
        [x, y, ox, oy]
    } else {
        [ox, oy, x, y]
    }
}

/// One of the exact grid configurations, with one value often nudged by a few ulp.
fn grid_case(rng: &mut SplitMix64, rect: [f32; 4]) -> ([f32; 4], [f32; 4]) {
    let seg = match rng.below(3) {
        0 => corner_line(rng, rect),
        1 => edge_line(rng, rect),
        _ => endpoint_line(rng, rect),
    };
    nudged(rng, seg, rect)
}

fn nudged(rng: &mut SplitMix64, mut seg: [f32; 4], mut rect: [f32; 4]) -> ([f32; 4], [f32; 4]) {
    let k = nudge(rng);
    let i = rng.below(4) as usize;
    if rng.below(2) == 0 {
        seg[i] = ulps(seg[i], k);
    } else {
        rect[i] = ulps(rect[i], k);
    }
    (seg, rect)
}

/// One adversarial pair of `category`.
pub fn case(category: Category, rng: &mut SplitMix64) -> (Segment, Rect) {
    match category {
        Category::Corner => {
            let rect = grid_rect(rng);
            let seg = corner_line(rng, rect);
            let (seg, rect) = scaled(seg, rect, int(rng, -20, 20) as i32);
            let (seg, rect) = nudged(rng, seg, rect);
            make(seg, rect)
        }
        Category::EdgeCollinear => {
            let rect = grid_rect(rng);
            let (seg, horizontal) = edge_line_oriented(rng, rect);
            let (mut seg, rect) = scaled(seg, rect, int(rng, -20, 20) as i32);
            // Whole segment off the line by k ulp, or tilted by moving one end.
            let k = nudge(rng);
            let (a, b) = if horizontal { (1, 3) } else { (0, 2) };
            match rng.below(3) {
                0 => {
                    seg[a] = ulps(seg[a], k);
                    seg[b] = ulps(seg[b], k);
                }
                1 => seg[a] = ulps(seg[a], k),
                _ => seg[b] = ulps(seg[b], k),
            }
            make(seg, rect)
        }
        Category::NearParallel => {
            // Float-valued rect, so ulps differ in size between values.
            let x = rng.range(-1000.0, 1000.0);
            let y = rng.range(-1000.0, 1000.0);
            let rect = [x, y, x + rng.range(0.0, 100.0), y + rng.range(0.0, 100.0)];
            let edge = rect[2 * rng.below(2) as usize];
            let x0 = ulps(edge, nudge(rng));
            let x1 = ulps(
                x0,
                (1 + rng.below(3) as i32) * if rng.below(2) == 0 { 1 } else { -1 },
            );
            let (y0, y1) = (
                rng.range(y - 200.0, y + 300.0),
                rng.range(y - 200.0, y + 300.0),
            );
            let seg = [x0, y0, x1, y1];
            if rng.below(2) == 0 {
                make(seg, rect)
            } else {
                // The y twin: swap the axes.
                make([y0, x0, y1, x1], [rect[1], rect[0], rect[3], rect[2]])
            }
        }
        Category::EndpointOnEdge => {
            let rect = grid_rect(rng);
            let seg = endpoint_line(rng, rect);
            let (mut seg, rect) = scaled(seg, rect, int(rng, -20, 20) as i32);
            let i = rng.below(4) as usize;
            seg[i] = ulps(seg[i], nudge(rng).signum());
            make(seg, rect)
        }
        Category::Tiny => {
            let rect = grid_rect(rng);
            let (seg, rect) = grid_case(rng, rect);
            // Up to 2^7 · 2^-150 .. 2^-100: 1e-30 down to subnormal, where differences and
            // products underflow.
            let (seg, rect) = scaled(seg, rect, -(100 + rng.below(51) as i32));
            make(seg, rect)
        }
        Category::Huge => {
            let rect = grid_rect(rng);
            let (seg, rect) = grid_case(rng, rect);
            let (seg, rect) = scaled(seg, rect, 40 + rng.below(15) as i32);
            make(seg, rect)
        }
        Category::Mixed => {
            let x = 1.0e6 + rng.range(-100.0, 100.0);
            let y = 1.0e6 + rng.range(-100.0, 100.0);
            let w = if rng.below(4) == 0 { 0.0 } else { 0.06 };
            let rect = [x, y, x + w, y + 0.06];
            // A 2e6-long segment aimed at the rect's corner or centre, off by a few ulp.
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let (tx, ty) = if rng.below(2) == 0 {
                (rect[0], rect[1])
            } else {
                (x + w / 2.0, y + 0.03)
            };
            let reach = 1.0e6;
            let seg = [
                tx - reach * angle.cos(),
                ty - reach * angle.sin(),
                tx + reach * angle.cos(),
                ty + reach * angle.sin(),
            ];
            let (seg, rect) = nudged(rng, seg, rect);
            make(seg, rect)
        }
        Category::TinyT => {
            let power = |rng: &mut SplitMix64, lo: i32, hi: i32| {
                ((1.0 + f64::from(rng.unit())) * 2f64.powi(int(rng, lo, hi) as i32)) as f32
            };
            let length = power(rng, 20, 61);
            let gap = power(rng, -140, -90);
            let y = rng.range(-1.0, 1.0);
            let tilt = if rng.below(2) == 0 {
                0.0
            } else {
                rng.range(-1.0, 1.0)
            };
            let seg = [0.0, y, length, y + tilt];
            let rect = [gap, -2.0, power(rng, -10, 10), 2.0];
            let (seg, rect) = nudged(rng, seg, rect);
            if rng.below(2) == 0 {
                make(seg, rect)
            } else {
                // The y twin.
                make(
                    [seg[1], seg[0], seg[3], seg[2]],
                    [rect[1], rect[0], rect[3], rect[2]],
                )
            }
        }
        Category::SignedZeros => {
            const VALUES: [f32; 9] = [0.0, -0.0, 1.0e-45, -1.0e-45, 1.0, -1.0, 2.0, -2.0, 0.0];
            let mut pick = || VALUES[rng.below(VALUES.len() as u64) as usize];
            let seg = [pick(), pick(), pick(), pick()];
            let rect = [pick(), pick(), pick(), pick()];
            make(seg, rect)
        }
        Category::ZeroLength => {
            let rect = grid_rect(rng);
            let x = rect[2 * rng.below(2) as usize];
            let y = if rng.below(2) == 0 {
                rect[1 + 2 * rng.below(2) as usize]
            } else {
                int(rng, rect[1] as i32, rect[3] as i32)
            };
            let (mut seg, rect) = scaled([x, y, x, y], rect, int(rng, -30, 30) as i32);
            let (px, py) = (
                ulps(seg[0], nudge(rng).signum()),
                ulps(seg[1], nudge(rng).signum()),
            );
            seg = [px, py, px, py];
            make(seg, rect)
        }
        Category::ZeroWidth => {
            let mut rect = grid_rect(rng);
            match rng.below(3) {
                0 => rect[2] = rect[0],
                1 => rect[3] = rect[1],
                _ => {
                    rect[2] = rect[0];
                    rect[3] = rect[1];
                }
            }
            let (seg, rect) = grid_case(rng, rect);
            let (seg, rect) = scaled(seg, rect, int(rng, -20, 20) as i32);
            make(seg, rect)
        }
    }
}

/// `n` pairs of `category` from `seed`: pair i is `(segments[i], rects[i])`.
pub fn pairs(category: Category, seed: u64, n: usize) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed ^ (category as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..n).map(|_| case(category, &mut rng)).unzip()
}
