//! The floating-point filter's error bound holds on any arithmetic WGSL and Vulkan allow, not
//! only on this machine's: the shader's filter sequence is replayed here with emulated f32
//! arithmetic that rounds to nearest or toward zero, fuses the det's multiply-add or not, and
//! flushes subnormal inputs and results to zero or not. Whenever the filter certifies a sign,
//! it must be the exact one (Shewchuk's orient2d in f64, exact for f32 inputs).

mod common;

use common::adversarial::{self, Category};
use rectcast::cpu::arithmetic::F32Arithmetic;
use rectcast::scene::SplitMix64;
use rectcast::{Circle, Rect, Segment};

/// Where an emulated GPU fuses the det's multiply-add, if it does.
#[derive(Clone, Copy, Debug)]
enum Fusion {
    None,
    /// fma(a, b, -right)
    Left,
    /// fma(-c, d, left)
    Right,
}

/// One arithmetic a GPU may have. With `mixed`, every operation draws its own rounding and
/// flushing (Vulkan allows flushing per operation), from `seed`.
#[derive(Clone, Debug)]
struct Arithmetic {
    toward_zero: bool,
    flush: bool,
    fusion: Fusion,
    mixed: bool,
    /// Each result then moved by up to 1 ulp either way, as `Emulation::Rounding` does on the
    /// GPU: more than any real GPU's error, so that the bounds' margin is tested too.
    nudge: bool,
    seed: std::cell::Cell<u64>,
}

/// a + b exactly, as hi + lo (TwoSum in f64).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let hi = a + b;
    let b_virtual = hi - a;
    let a_virtual = hi - b_virtual;
    (hi, (a - a_virtual) + (b - b_virtual))
}

impl Arithmetic {
    fn coin(&self) -> bool {
        let mut rng = rectcast::scene::SplitMix64::new(self.seed.get());
        let bit = rng.next_u64();
        self.seed.set(bit);
        bit & 1 == 1
    }

    fn flushes(&self) -> bool {
        if self.mixed { self.coin() } else { self.flush }
    }

    fn flushed(&self, v: f32) -> f32 {
        if v.is_subnormal() && self.flushes() {
            0.0
        } else {
            v
        }
    }

    /// The exact value hi + lo rounded to f32: to nearest (ties to even) or toward zero, then
    /// perhaps flushed.
    fn round(&self, hi: f64, lo: f64) -> f32 {
        // Signed distance from a candidate to the exact value, exactly enough for its sign.
        let off = |c: f32| (f64::from(c) - hi) - lo;
        let near = hi as f32;
        let candidates = [near.next_down(), near, near.next_up()];
        let toward_zero = if self.mixed {
            self.coin()
        } else {
            self.toward_zero
        };
        let positive = hi > 0.0;
        let r = if toward_zero {
            // The candidate of largest magnitude that is not beyond the exact value, and not of
            // the other sign.
            candidates
                .into_iter()
                .filter(|&c| {
                    if positive {
                        off(c) <= 0.0
                    } else {
                        off(c) >= 0.0
                    }
                })
                .filter(|&c| c == 0.0 || (c > 0.0) == positive)
                .max_by(|x, y| x.abs().total_cmp(&y.abs()))
                .unwrap_or(0.0)
        } else {
            *candidates
                .iter()
                .min_by(|x, y| {
                    off(**x)
                        .abs()
                        .total_cmp(&off(**y).abs())
                        .then((x.to_bits() & 1).cmp(&(y.to_bits() & 1)))
                })
                .expect("three candidates")
        };
        let r = if self.nudge && r != 0.0 && r.is_finite() {
            match (self.coin(), self.coin()) {
                (true, true) => r.next_up(),
                (true, false) => r.next_down(),
                _ => r,
            }
        } else {
            r
        };
        self.flushed(r)
    }

    fn sub(&self, a: f32, b: f32) -> f32 {
        let (hi, lo) = two_sum(f64::from(self.flushed(a)), -f64::from(self.flushed(b)));
        self.round(hi, lo)
    }

    fn add(&self, a: f32, b: f32) -> f32 {
        let (hi, lo) = two_sum(f64::from(self.flushed(a)), f64::from(self.flushed(b)));
        self.round(hi, lo)
    }

    fn mul(&self, a: f32, b: f32) -> f32 {
        // Two f32 multiply exactly in f64 (48 significant bits).
        self.round(f64::from(self.flushed(a)) * f64::from(self.flushed(b)), 0.0)
    }

    /// a / b within WGSL's 2.5 ulp: the quotient rounded as this arithmetic rounds (the
    /// remainder, exact by an f64 fma, gives the sign of what the f64 quotient leaves), then
    /// moved by up to 2 ulp either way.
    fn div(&self, a: f32, b: f32) -> f32 {
        let (a, b) = (f64::from(self.flushed(a)), f64::from(self.flushed(b)));
        let hi = a / b;
        let lo = (-hi).mul_add(b, a) / b;
        let mut r = self.round(hi, lo);
        if r != 0.0 && r.is_finite() {
            for _ in 0..2 {
                r = match (self.coin(), self.coin()) {
                    (true, true) => r.next_up(),
                    (true, false) => r.next_down(),
                    _ => r,
                };
            }
        }
        self.flushed(r)
    }

    /// fma(x, y, z): one rounding of the exact x·y + z.
    fn fma(&self, x: f32, y: f32, z: f32) -> f32 {
        let (hi, lo) = two_sum(
            f64::from(self.flushed(x)) * f64::from(self.flushed(y)),
            f64::from(self.flushed(z)),
        );
        self.round(hi, lo)
    }

    /// `compare_crossings`' det and bound (`crossing_det`, the shader's order) on this
    /// arithmetic, and its sign where the bound certifies it (a comparison may flush det).
    fn filter(&self, s: &Segment, bx: f32, by: f32) -> Option<i32> {
        let (det, bound) = rectcast::cpu::segment_rect::crossing_det(self, s, bx, by);
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
        // In f64 and rounded once: 2^-150 is not an f32 (and 2f32.powi(-128) may be 0).
        let v = ((1.0 + f64::from(rng.unit())) * 2f64.powi(rng.below(181) as i32 - 150)) as f32;
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
                for bits in 0..13u64 {
                    // 12 fixed arithmetics ({nearest, toward zero} x {flush, not} x fusion), and
                    // one that draws rounding and flushing per operation.
                    let arithmetic = Arithmetic {
                        toward_zero: bits & 1 != 0,
                        flush: bits & 2 != 0,
                        fusion: [Fusion::None, Fusion::Left, Fusion::Right]
                            [(bits as usize / 4) % 3],
                        mixed: bits == 12,
                        nudge: false,
                        seed: std::cell::Cell::new(checked),
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

/// The circle filter's f32 operations on this arithmetic: `det` fused as `fusion` says.
impl F32Arithmetic for Arithmetic {
    fn add(&self, a: f32, b: f32) -> f32 {
        Arithmetic::add(self, a, b)
    }
    fn sub(&self, a: f32, b: f32) -> f32 {
        Arithmetic::sub(self, a, b)
    }
    fn mul(&self, a: f32, b: f32) -> f32 {
        Arithmetic::mul(self, a, b)
    }
    fn div(&self, a: f32, b: f32) -> f32 {
        Arithmetic::div(self, a, b)
    }
    fn det(&self, a: f32, b: f32, c: f32, d: f32) -> f32 {
        match self.fusion {
            Fusion::None => Arithmetic::sub(self, self.mul(a, b), self.mul(c, d)),
            Fusion::Left => self.fma(a, b, -self.mul(c, d)),
            Fusion::Right => self.fma(-c, d, self.mul(a, b)),
        }
    }
}

/// The arithmetics a GPU may have, for the circle filter: {nearest, toward zero} × {flush,
/// not} × fusion, one drawing rounding and flushing per operation, and two that move each
/// result by up to an ulp (the GPU's emulated hostile rounding), with and without fusion.
fn arithmetics(seed: u64) -> Vec<Arithmetic> {
    (0..15u64)
        .map(|bits| Arithmetic {
            toward_zero: bits & 1 != 0 && bits < 12,
            flush: bits & 2 != 0 && bits < 12,
            fusion: [Fusion::None, Fusion::Left, Fusion::Right][(bits as usize / 4) % 3],
            mixed: bits == 12,
            nudge: bits > 12,
            seed: std::cell::Cell::new(seed ^ bits),
        })
        .collect()
}

/// A point at distance `r · (1 + off)` from (cx, cy) in direction `angle`, rounded to f32.
fn at_distance(cx: f32, cy: f32, r: f64, angle: f64) -> (f32, f32) {
    (
        (f64::from(cx) + r * angle.cos()) as f32,
        (f64::from(cy) + r * angle.sin()) as f32,
    )
}

/// Pairs where the circle filter's decisions are closest to wrong, at `scale`: lines tangent
/// to the circle but for the rounding of their ends, ends on or near the circle (on a grid
/// where 3-4-5 triangles put them exactly on it), the line's nearest point at or near an end,
/// points, and the degenerate generator's scenes.
fn circle_pairs(rng: &mut SplitMix64, scale: f32, n: usize) -> Vec<(Segment, Circle)> {
    use common::degenerate::{coordinate, random_segment};
    let mut pairs = Vec::new();
    let unit = f64::from(scale);
    while pairs.len() < n {
        let (cx, cy) = (
            rng.range(-100.0, 100.0) * scale,
            rng.range(-100.0, 100.0) * scale,
        );
        let r = rng.range(0.0, 50.0) * scale;
        let angle = f64::from(rng.unit()) * std::f64::consts::TAU;
        let off = [0.0, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3][rng.below(6) as usize];
        let reach = f64::from(r) * (1.0 + off);
        let length = f64::from(rng.range(0.0, 200.0)) * unit;
        let pair = match rng.below(6) {
            // A line at distance ~r: tangent, or just inside or outside.
            0 => {
                let (px, py) = at_distance(cx, cy, reach, angle);
                let along = angle + std::f64::consts::FRAC_PI_2;
                let back = f64::from(rng.unit()) * length;
                let (x0, y0) = at_distance(px, py, back, along + std::f64::consts::PI);
                let (x1, y1) = at_distance(px, py, length - back, along);
                (Segment::new(x0, y0, x1, y1), Circle::new(cx, cy, r))
            }
            // An end at distance ~r.
            1 => {
                let (x0, y0) = at_distance(cx, cy, reach, angle);
                let away = angle + f64::from(rng.range(-3.0, 3.0));
                let (x1, y1) = at_distance(x0, y0, length, away);
                (Segment::new(x0, y0, x1, y1), Circle::new(cx, cy, r))
            }
            // The line's nearest point to the center at ~ an end, both ends outside.
            2 => {
                let (px, py) = at_distance(cx, cy, reach * 0.5, angle);
                let along = angle + std::f64::consts::FRAC_PI_2;
                let (x0, y0) = at_distance(px, py, f64::from(r) * off, along);
                let (x1, y1) = at_distance(px, py, length + f64::from(r), along);
                (Segment::new(x0, y0, x1, y1), Circle::new(cx, cy, r))
            }
            // A point near the circle.
            3 => {
                let (x, y) = at_distance(cx, cy, reach, angle);
                (Segment::new(x, y, x, y), Circle::new(cx, cy, r))
            }
            // The degenerate generator: grids, repeats, 3-4-5 ends on the circle.
            _ => {
                let q = random_segment(rng, scale);
                let k = (rng.below(3) as f32 + 1.0) * 0.5 * scale;
                let circle = if rng.below(2) == 0 {
                    Circle::new(q.x0 + 3.0 * k, q.y0 - 4.0 * k, 5.0 * k)
                } else {
                    Circle::new(
                        coordinate(rng, scale),
                        coordinate(rng, scale),
                        coordinate(rng, scale).abs(),
                    )
                };
                (q, circle)
            }
        };
        let (q, c) = pair;
        if rectcast::validate::check_circle(0, &c).is_ok()
            && [q.x0, q.y0, q.x1, q.y1]
                .iter()
                .all(|v| v.abs() <= rectcast::MAX_ABS_COORDINATE)
        {
            pairs.push((q, c));
        }
    }
    pairs
}

#[test]
fn the_circle_filter_never_certifies_a_wrong_hit_under_any_allowed_arithmetic() {
    use rectcast::cpu::segment_circle::verdict::{CIRCLE_APART, CIRCLE_MEETS, circle_verdict};
    let mut rng = SplitMix64::new(0xc1);
    // Inside the filter's range (2^-40 to 2^30) and at its edges and beyond, where every pair
    // must be left to the integers.
    let scales = [1.0, 0.001, 3e5, 2f32.powi(-36), 2f32.powi(22), 1e-30, 3e18];
    let (mut checked, mut certified) = (0u64, 0u64);
    for scale in scales {
        let (mut meets, mut apart, mut pairs_here) = (0u64, 0u64, 0u64);
        for (i, (q, c)) in circle_pairs(&mut rng, scale, 4_000).into_iter().enumerate() {
            let want = common::circles::segment_circle(&q, &c).hit();
            for arithmetic in arithmetics(i as u64) {
                checked += 1;
                pairs_here += 1;
                let verdict = circle_verdict(&arithmetic, &q, &c);
                let in_range = [q.x0, q.y0, q.x1, q.y1, c.cx, c.cy, c.r]
                    .iter()
                    .all(|v| *v == 0.0 || (2f32.powi(-40)..=2f32.powi(30)).contains(&v.abs()));
                if !in_range {
                    assert!(
                        verdict != CIRCLE_APART && verdict != CIRCLE_MEETS,
                        "a value past the filter's range, certified: query {q:?}, circle {c:?}"
                    );
                }
                if verdict == CIRCLE_APART || verdict == CIRCLE_MEETS {
                    certified += 1;
                    assert_eq!(
                        verdict == CIRCLE_MEETS,
                        want,
                        "{arithmetic:?} certified a wrong hit at scale {scale:e}: query {q:?}, circle {c:?}"
                    );
                    if verdict == CIRCLE_MEETS {
                        meets += 1
                    } else {
                        apart += 1
                    }
                }
            }
        }
        eprintln!("scale {scale:e}: {meets} hits and {apart} misses certified of {pairs_here}");
        if (1e-9..1e8).contains(&scale) {
            // A filter must decide most of them by itself, both ways, or it is not a filter.
            assert!(
                meets * 4 > pairs_here && apart * 8 > pairs_here,
                "scale {scale:e}: {meets} hits, {apart} misses of {pairs_here}"
            );
        }
    }
    eprintln!("circle filter certified {certified} of {checked} adversarial hit decisions");
}

/// An exact time as a fraction num / den of f32 values' BigInt numerators over 2^149, den > 0.
struct Time {
    num: num_bigint::BigInt,
    den: num_bigint::BigInt,
}

impl Time {
    /// (v − a0) / (a1 − a0), exactly; None where a1 = a0.
    fn crossing(a0: f32, a1: f32, v: f32) -> Option<Time> {
        use common::exact::scaled_2_149 as n;
        use num_traits::Signed;
        let den = n(a1) - n(a0);
        let num = n(v) - n(a0);
        match den.sign() {
            num_bigint::Sign::NoSign => None,
            num_bigint::Sign::Minus => Some(Time {
                num: -num,
                den: den.abs(),
            }),
            num_bigint::Sign::Plus => Some(Time { num, den }),
        }
    }

    fn of(v: f32) -> Time {
        Time {
            num: common::exact::scaled_2_149(v),
            den: num_bigint::BigInt::from(1u8) << 149u32,
        }
    }

    fn le(&self, other: &Time) -> bool {
        &self.num * &other.den <= &other.num * &self.den
    }

    fn approx(&self) -> f64 {
        use num_traits::ToPrimitive;
        let shift = self.den.bits().saturating_sub(60);
        let den = (&self.den >> shift).to_f64().expect("60 bits");
        (&self.num >> shift).to_f64().unwrap_or(f64::INFINITY) / den
    }
}

/// Where segment s is in box b, exactly: (entry, exit) within 0..=1, None where it misses it.
fn exact_box_times(s: &Segment, b: &Rect) -> Option<(Time, Time)> {
    let (mut enter, mut leave) = (Time::of(0.0), Time::of(1.0));
    for ((a0, a1), (lo, hi)) in [
        ((s.x0, s.x1), (b.min_x, b.max_x)),
        ((s.y0, s.y1), (b.min_y, b.max_y)),
    ] {
        match (Time::crossing(a0, a1, lo), Time::crossing(a0, a1, hi)) {
            (Some(at_lo), Some(at_hi)) => {
                let (near, far) = if a1 > a0 {
                    (at_lo, at_hi)
                } else {
                    (at_hi, at_lo)
                };
                enter = if enter.le(&near) { near } else { enter };
                leave = if far.le(&leave) { far } else { leave };
            }
            _ if a0 < lo || a0 > hi => return None,
            _ => {}
        }
    }
    enter.le(&leave).then_some((enter, leave))
}

/// Segments and boxes for the walk's times at `scale`: boxes around, across and at the ends of
/// slanted and axis-parallel segments, points, boxes whose sides pass through an end, and
/// values mixing the range's ends.
fn time_cases(rng: &mut SplitMix64, scale: f32, n: usize) -> Vec<(Segment, Rect)> {
    let mut v = |lo: f32, hi: f32| rng.range(lo, hi) * scale;
    (0..n)
        .map(|k| {
            let (x0, y0, x1, y1) = (v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0));
            let s = match k % 6 {
                0 => Segment::new(x0, y0, x0, y1),
                1 => Segment::new(x0, y0, x1, y0),
                2 => Segment::new(x0, y0, x0, y0),
                _ => Segment::new(x0, y0, x1, y1),
            };
            let (bx, by) = (v(-1.0, 1.0), v(-1.0, 1.0));
            let (w, h) = (v(0.0, 0.5), v(0.0, 0.5));
            let b = match k % 5 {
                0 => Rect::new(s.x0, s.y0, s.x0 + w, s.y0 + h),
                1 => Rect::new(s.x1 - w, s.y1 - h, s.x1, s.y1),
                2 => Rect::new(bx, by, bx, by),
                3 => Rect::new(bx.min(s.x0), by, bx.max(s.x0), by + h),
                _ => Rect::new(bx, by, bx + w, by + h),
            };
            (s, b)
        })
        .collect()
}

#[test]
fn the_walks_times_bound_the_exact_ones_under_any_allowed_arithmetic() {
    use rectcast::cpu::shape_walk::{boundary_time, box_times};
    let mut rng = SplitMix64::new(0x71);
    // Inside the times' range (2^-40 to 2^30), at its edges, and beyond, where nothing is
    // bounded: box_times says (0, 1) and boundary_time 0.
    let scales = [1.0, 0.001, 3e5, 2f32.powi(-36), 2f32.powi(27), 1e-30, 3e18];
    let in_range = |v: f32| v == 0.0 || (2f32.powi(-40)..=2f32.powi(30)).contains(&v.abs());
    let mut checked = 0u64;
    for scale in scales {
        let (mut met, mut bounded, mut widest) = (0u64, 0u64, 0f64);
        for (i, (s, b)) in time_cases(&mut rng, scale, 2_000).into_iter().enumerate() {
            let values = [s.x0, s.y0, s.x1, s.y1, b.min_x, b.min_y, b.max_x, b.max_y];
            let exact = exact_box_times(&s, &b);
            let crossing = Time::crossing(s.x0, s.x1, b.min_x);
            for arithmetic in arithmetics(i as u64) {
                checked += 1;
                let (lo, hi) = box_times(&arithmetic, &s, &b);
                let at = boundary_time(&arithmetic, s.x0, s.x1, b.min_x);
                if !values.iter().all(|v| in_range(*v)) {
                    assert_eq!(
                        (lo.to_bits(), hi.to_bits()),
                        (0f32.to_bits(), 1f32.to_bits()),
                        "{arithmetic:?}: a value past the range, bounded: {s:?} in {b:?}"
                    );
                }
                if [s.x0, s.x1, b.min_x].iter().any(|v| !in_range(*v)) {
                    // No bound: 0, which is past no ceiling.
                    assert_eq!(at.to_bits(), 0, "{arithmetic:?}: {s:?} at x {}", b.min_x);
                } else if let Some(t) = &crossing {
                    assert!(
                        Time::of(at).le(t),
                        "{arithmetic:?}: {s:?} reaches x = {} at {}, after its bound {at:e}",
                        b.min_x,
                        t.approx()
                    );
                }
                let Some((enter, leave)) = &exact else {
                    continue;
                };
                met += 1;
                assert!(
                    Time::of(lo).le(enter) && leave.le(&Time::of(hi)),
                    "{arithmetic:?}: {s:?} is in {b:?} from {} to {}, outside its bounds {lo:e}..{hi:e}",
                    enter.approx(),
                    leave.approx()
                );
                if (lo, hi) != (0.0, 1.0) {
                    bounded += 1;
                    let slack =
                        (enter.approx() - f64::from(lo)).max(f64::from(hi) - leave.approx());
                    widest = widest.max(slack);
                }
            }
        }
        eprintln!(
            "scale {scale:e}: {bounded} of {met} meetings bounded, the widest off by {widest:e}"
        );
        if (1e-9..1e8).contains(&scale) {
            // Bounds that are always (0, 1), or loose, would prune nothing.
            assert!(
                bounded * 2 > met,
                "scale {scale:e}: {bounded} of {met} bounded"
            );
            assert!(
                widest < 2f64.powi(-16),
                "scale {scale:e}: off by {widest:e}"
            );
        }
    }
    eprintln!("the walk's times: {checked} bounds checked");
}

/// Where `query`'s line meets `wall`'s, exactly: the time on `query`, where its ends lie
/// strictly on both sides of the wall's line; None otherwise.
fn exact_line_crossing(query: &Segment, wall: &Segment) -> Option<Time> {
    use common::exact::scaled_2_149 as n;
    use num_traits::Signed;
    let side = |x: f32, y: f32| {
        (n(x) - n(wall.x0)) * (n(wall.y1) - n(wall.y0))
            - (n(y) - n(wall.y0)) * (n(wall.x1) - n(wall.x0))
    };
    let (start, end) = (side(query.x0, query.y0), side(query.x1, query.y1));
    let opposite =
        (start.is_positive() && end.is_negative()) || (start.is_negative() && end.is_positive());
    opposite.then(|| Time {
        den: (&start - &end).abs(),
        num: start.abs(),
    })
}

/// Queries and walls at `scale` whose lines cross, or nearly: anywhere, at right angles, with
/// the query's end a hair across the wall's line (where no sign is certain), nearly parallel,
/// and short queries crossing long walls.
fn crossing_cases(rng: &mut SplitMix64, scale: f32, n: usize) -> Vec<(Segment, Segment)> {
    (0..n)
        .map(|k| {
            let mut v = |lo: f32, hi: f32| rng.range(lo, hi);
            let (x0, y0, x1, y1) = (v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0));
            let (u, hair) = (v(0.0, 1.0), v(-1.0, 1.0) * 2f32.powi(-20));
            let on_wall = (x0 + u * (x1 - x0), y0 + u * (y1 - y0));
            let (query, wall) = match k % 5 {
                0 => (
                    (v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0), v(-1.0, 1.0)),
                    (x0, y0, x1, y1),
                ),
                1 => ((x0, y0, x1, y1), (-y0, x0, -y1, x1)),
                2 => (
                    (x0 - y1, y0 + x1, on_wall.0 + hair, on_wall.1),
                    (x0, y0, x1, y1),
                ),
                3 => ((x0, y0 + hair, x1, y1 - hair), (x0, y0, x1, y1)),
                _ => (
                    (
                        on_wall.0 - 1e-3 * y1,
                        on_wall.1 + 1e-3 * x1,
                        on_wall.0 + 1e-3 * y1,
                        on_wall.1 - 1e-3 * x1,
                    ),
                    (x0, y0, x1, y1),
                ),
            };
            let s = |(a, b, c, d): (f32, f32, f32, f32)| {
                Segment::new(a * scale, b * scale, c * scale, d * scale)
            };
            (s(query), s(wall))
        })
        .collect()
}

#[test]
fn the_walls_crossing_times_bound_the_exact_ones_under_any_allowed_arithmetic() {
    use rectcast::cpu::segment_segment::crossing_fraction;
    use rectcast::cpu::shape_walk::ratio_time_above;
    let mut rng = SplitMix64::new(0x72);
    // The terms' range is 2^-100 to 2^100: at 1e-30 every certain distance is below it and at
    // 2^60 above it, so nothing is bounded there.
    let scales = [
        1.0,
        0.001,
        3e5,
        2f32.powi(-36),
        2f32.powi(27),
        1e-30,
        3e18,
        2f32.powi(60),
    ];
    let in_range = |v: f32| (2f32.powi(-100)..=2f32.powi(100)).contains(&v);
    let mut checked = 0u64;
    for scale in scales {
        let (mut crossings, mut tight, mut widest) = (0u64, 0u64, 0f64);
        for (i, (query, wall)) in crossing_cases(&mut rng, scale, 2_000)
            .into_iter()
            .enumerate()
        {
            let exact = exact_line_crossing(&query, &wall);
            for arithmetic in arithmetics(i as u64) {
                checked += 1;
                let fraction = crossing_fraction(&arithmetic, &query, &wall);
                let t = ratio_time_above(&arithmetic, fraction);
                if !(in_range(fraction.0) && in_range(fraction.1)) {
                    assert_eq!(
                        t.to_bits(),
                        1f32.to_bits(),
                        "{arithmetic:?}: {fraction:?} past the range, bounded: {query:?} over {wall:?}"
                    );
                }
                let Some(exact) = &exact else {
                    // Its ends are not strictly on both sides: never certified so.
                    assert_eq!(
                        fraction,
                        (1.0, 1.0),
                        "{arithmetic:?} certified a crossing: {query:?} over {wall:?}"
                    );
                    continue;
                };
                crossings += 1;
                assert!(
                    exact.le(&Time::of(t)),
                    "{arithmetic:?}: {query:?} meets the line of {wall:?} at {}, after its bound {t:e} ({fraction:?})",
                    exact.approx()
                );
                if t < 1.0 {
                    // Loose where an end is a hair across the line, within its bound, or where the query is
                    // short beside the wall (the bound is relative to the wall's length).
                    let slack = f64::from(t) - exact.approx();
                    tight += u64::from(slack < 2f64.powi(-10));
                    widest = widest.max(slack);
                }
            }
        }
        eprintln!(
            "scale {scale:e}: {tight} of {crossings} crossings bounded within 2^-10, the widest off by {widest:e}"
        );
        if (1e-9..1e8).contains(&scale) {
            // A bound that is always 1, or loose, would lower no ceiling.
            assert!(
                tight * 2 > crossings,
                "scale {scale:e}: {tight} of {crossings} bounded within 2^-10"
            );
        }
    }
    eprintln!("the walls' crossing times: {checked} bounds checked");
}
