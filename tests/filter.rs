//! The floating-point filter's error bound holds on any arithmetic WGSL and Vulkan allow, not
//! only on this machine's: the shader's filter sequence is replayed here with emulated f32
//! arithmetic that rounds to nearest or toward zero, fuses the det's multiply-add or not, and
//! flushes subnormal inputs and results to zero or not. Whenever the filter certifies a sign,
//! it must be the exact one (Shewchuk's orient2d in f64, exact for f32 inputs).

mod common;

use common::adversarial::{self, Category};
use rectcast::cpu::pairs::filter::{FILTER_ABSOLUTE, FILTER_FLOOR, FILTER_RELATIVE};
use rectcast::{Rect, Segment};

#[derive(Clone, Copy, Debug)]
struct Arithmetic {
    toward_zero: bool,
    flush: bool,
    fused: bool,
}

impl Arithmetic {
    fn flushed(self, v: f32) -> f32 {
        if self.flush && v.is_subnormal() {
            0.0
        } else {
            v
        }
    }

    /// An f64 value (exact, or as close as f64 gets) rounded to f32 the emulated way.
    fn round(self, exact: f64) -> f32 {
        let mut r = exact as f32;
        if self.toward_zero && f64::from(r).abs() > exact.abs() {
            r = if r > 0.0 { r.next_down() } else { r.next_up() };
        }
        self.flushed(r)
    }

    fn sub(self, a: f32, b: f32) -> f32 {
        self.round(f64::from(self.flushed(a)) - f64::from(self.flushed(b)))
    }

    fn mul(self, a: f32, b: f32) -> f32 {
        // Two f32 multiply exactly in f64 (48 significant bits).
        self.round(f64::from(self.flushed(a)) * f64::from(self.flushed(b)))
    }

    fn add(self, a: f32, b: f32) -> f32 {
        self.round(f64::from(self.flushed(a)) + f64::from(self.flushed(b)))
    }

    /// `compare_crossings`' det and bound, in the shader's order.
    fn filter(self, s: &Segment, bx: f32, by: f32) -> Option<i32> {
        let a = self.sub(bx, s.x0);
        let b = self.sub(s.y1, s.y0);
        let c = self.sub(by, s.y0);
        let d = self.sub(s.x1, s.x0);
        let left = self.mul(a, b);
        let right = self.mul(c, d);
        let det = if self.fused {
            // fma(a, b, -right): one rounding of the exact a·b − right.
            self.round(f64::from(a) * f64::from(b) - f64::from(right))
        } else {
            self.sub(left, right)
        };
        let relative = self.mul(FILTER_RELATIVE, self.add(left.abs(), right.abs()));
        let sizes = self.add(self.add(self.add(a.abs(), b.abs()), c.abs()), d.abs());
        let absolute = self.mul(FILTER_ABSOLUTE, sizes);
        let bound = self.add(self.add(relative, absolute), FILTER_FLOOR);
        let det = self.flushed(det);
        if det > bound {
            Some(1)
        } else if det < -bound {
            Some(-1)
        } else {
            None
        }
    }
}

fn exact_sign(s: &Segment, bx: f32, by: f32) -> i32 {
    let det = robust::orient2d(
        robust::Coord { x: bx, y: by },
        robust::Coord { x: s.x1, y: s.y1 },
        robust::Coord { x: s.x0, y: s.y0 },
    );
    if det > 0.0 {
        1
    } else if det < 0.0 {
        -1
    } else {
        0
    }
}

/// Pair i is (segments[i], rects[i]).
type Pairs = (Vec<Segment>, Vec<Rect>);

/// Values with independent random exponents from 2^-150 to 2^30: a large difference times a
/// subnormal one, where a flushed operand moves det by far more than any relative bound.
fn scattered_exponents(seed: u64, n: usize) -> Pairs {
    let mut rng = rectcast::scene::SplitMix64::new(seed);
    let value = |rng: &mut rectcast::scene::SplitMix64| {
        let v = (1.0 + rng.unit()) * 2f32.powi(rng.below(181) as i32 - 150);
        if rng.below(2) == 0 { v } else { -v }
    };
    (0..n)
        .map(|_| {
            let s = Segment::new(
                value(&mut rng),
                value(&mut rng),
                value(&mut rng),
                value(&mut rng),
            );
            let (a, b, c, d) = (
                value(&mut rng),
                value(&mut rng),
                value(&mut rng),
                value(&mut rng),
            );
            (s, Rect::new(a.min(b), c.min(d), a.max(b), c.max(d)))
        })
        .unzip()
}

#[test]
fn the_filter_never_certifies_a_wrong_sign_under_any_allowed_arithmetic() {
    let mut checked = 0u64;
    let mut certified = 0u64;
    let mut inputs: Vec<(&str, Pairs)> = Category::ALL
        .iter()
        .map(|&c| (c.name(), adversarial::pairs(c, 3, 20_000)))
        .collect();
    inputs.push(("scattered_exponents", scattered_exponents(4, 50_000)));
    for (name, (segments, rects)) in &inputs {
        for (s, r) in segments.iter().zip(rects) {
            let Rect {
                min_x,
                min_y,
                max_x,
                max_y,
            } = *r;
            for (bx, by) in [
                (min_x, min_y),
                (min_x, max_y),
                (max_x, min_y),
                (max_x, max_y),
            ] {
                let exact = exact_sign(s, bx, by);
                for bits in 0..8 {
                    let arithmetic = Arithmetic {
                        toward_zero: bits & 1 != 0,
                        flush: bits & 2 != 0,
                        fused: bits & 4 != 0,
                    };
                    checked += 1;
                    if let Some(sign) = arithmetic.filter(s, bx, by) {
                        certified += 1;
                        assert_eq!(
                            sign, exact,
                            "{arithmetic:?} certified the wrong sign ({name}): segment {s:?}, corner ({bx:e}, {by:e})"
                        );
                    }
                }
            }
        }
    }
    // The filter must also decide most cases by itself, or it is not a filter.
    assert!(
        certified * 4 > checked,
        "the filter certified only {certified} of {checked}"
    );
    eprintln!("filter certified {certified} of {checked} adversarial sign decisions");
}
