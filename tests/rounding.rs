//! t is the correctly rounded exact parameter (to nearest, ties to even), and a clipped end
//! point the correctly rounded exact crossing, on the CPU and the GPU, byte for byte: exact
//! ties and near-ties of the quotient, t near 0 and near 1, huge and tiny differences, and
//! values too far apart in magnitude for the integer path (rounded on the host instead).
//!
//! Each case is a horizontal crossing: segment (c0, y0) → (c1, y1) against a rect whose side
//! x = bound is crossed and whose y range holds the whole segment, so t = (bound − c0) /
//! (c1 − c0) exactly, checked against the oracle's BigInt rounding.

mod common;

use common::exact::{round_rational_to_f32, scaled_2_149};
use common::{cpu_engine, gpu_engine};
use num_bigint::BigInt;
use rectcast::scene::SplitMix64;
use rectcast::{ClipTo, Engine, GpuLimits, PairIndex, PairResult, Rect, Segment};

/// The domain bound, 2^62.
const LIMIT: f32 = 4.611_686e18;

/// One crossing of x = bound, entering (bound past c0 in the motion) or leaving.
#[derive(Clone, Copy, Debug)]
struct Case {
    c0: f32,
    c1: f32,
    bound: f32,
    y0: f32,
    y1: f32,
}

impl Case {
    fn new(c0: f32, c1: f32, bound: f32) -> Self {
        Self::sloped(c0, c1, bound, 0.0, 0.0)
    }

    fn sloped(c0: f32, c1: f32, bound: f32, y0: f32, y1: f32) -> Self {
        Self {
            c0,
            c1,
            bound,
            y0,
            y1,
        }
    }

    fn segment(&self) -> Segment {
        Segment::new(self.c0, self.y0, self.c1, self.y1)
    }

    /// Entering through min_x (c1 > c0) or max_x, and ending inside: t_enter is the crossing.
    fn entering(&self) -> Rect {
        let (y_lo, y_hi) = (self.y0.min(self.y1), self.y0.max(self.y1));
        if self.c1 > self.c0 {
            Rect::new(self.bound, y_lo, self.c1.max(self.bound), y_hi)
        } else {
            Rect::new(self.c1.min(self.bound), y_lo, self.bound, y_hi)
        }
    }

    /// Starting inside and leaving through max_x (c1 > c0) or min_x: t_exit is the crossing.
    fn leaving(&self) -> Rect {
        let (y_lo, y_hi) = (self.y0.min(self.y1), self.y0.max(self.y1));
        if self.c1 > self.c0 {
            Rect::new(self.c0.min(self.bound), y_lo, self.bound, y_hi)
        } else {
            Rect::new(self.bound, y_lo, self.c0.max(self.bound), y_hi)
        }
    }

    fn exact_t(&self) -> f32 {
        let num = scaled_2_149(self.bound) - scaled_2_149(self.c0);
        let den = scaled_2_149(self.c1) - scaled_2_149(self.c0);
        round_rational_to_f32(&num, &den)
    }

    /// y at the crossing, y0 + (bound − c0)·(y1 − y0) / (c1 − c0), rounded.
    fn exact_y(&self) -> f32 {
        let s = |v: f32| scaled_2_149(v);
        let num = s(self.bound) - s(self.c0);
        let den = s(self.c1) - s(self.c0);
        let value = s(self.y0) * &den + num * (s(self.y1) - s(self.y0));
        round_rational_to_f32(&value, &(den << 149u32))
    }
}

/// The pairs of the cases: (i, 2i) enters, (i, 2i + 1) leaves.
fn batch(cases: &[Case]) -> (Vec<Segment>, Vec<Rect>, Vec<PairIndex>) {
    let segments = cases.iter().map(Case::segment).collect();
    let rects = cases
        .iter()
        .flat_map(|c| [c.entering(), c.leaving()])
        .collect();
    let pairs = (0..cases.len() as u32)
        .flat_map(|i| [PairIndex::new(i, 2 * i), PairIndex::new(i, 2 * i + 1)])
        .collect();
    (segments, rects, pairs)
}

/// Every case's t on `engine`, and its clipped crossing point, against the oracle.
fn assert_correctly_rounded(what: &str, engine: &mut Engine, cases: &[Case]) {
    let (segments, rects, pairs) = batch(cases);
    let results = engine.pair_list(&segments, &rects, &pairs).expect("pairs");
    let entering: Vec<Rect> = rects.iter().step_by(2).copied().collect();
    let clipped = engine
        .clip(&segments, ClipTo::PerSegment(&entering))
        .expect("clip");
    for (i, case) in cases.iter().enumerate() {
        let want = case.exact_t();
        let (enter, leave): (PairResult, PairResult) = (results[2 * i], results[2 * i + 1]);
        let got = [enter.t_enter, leave.t_exit];
        assert!(
            enter.hit() && leave.hit() && got.iter().all(|t| t.to_bits() == want.to_bits()),
            "{what}, {}: case {i} {case:?}\n  t should be {want:e} ({:#010x}); entering gives {enter:?}, leaving {leave:?}",
            engine.chosen(),
            want.to_bits()
        );
        let point = clipped[i].segment.expect("clipped");
        let want_y = case.exact_y();
        assert!(
            point.x0 == case.bound && point.y0.to_bits() == want_y.to_bits(),
            "{what}, {}: case {i} {case:?}\n  clipped start should be ({:e}, {want_y:e}), is ({:e}, {:e})",
            engine.chosen(),
            case.bound,
            point.x0,
            point.y0
        );
    }
}

fn engines(test: &str) -> Vec<Engine> {
    let mut engines = vec![cpu_engine()];
    engines.extend(gpu_engine(test, GpuLimits::default()));
    engines
}

/// (bound, c0, c1), f32 bits, whose quotient (bound − c0) / (c1 − c0) lies within 5e-17 of,
/// but not on, a midpoint of two f32: f64's division rounds it onto the midpoint.
const ROUNDED_ONTO_A_TIE: [(u32, u32, u32); 6] = [
    (0x3fb3ac38, 0xb18482ed, 0x3feae8e6),
    (0x3f8c1c77, 0xb19a3798, 0x3fa5183c),
    (0x3f0bbd7d, 0xb15b2d18, 0x3f845b48),
    (0x3f49ffd3, 0xb1320ec6, 0x3f900a97),
    (0x3fa3d9c5, 0x31aaf211, 0x3fe21c46),
    (0x3f7c3c7c, 0x320a13a6, 0x3f9905f3),
];

/// c0 = −2^25·s, c1 = 2^25·s, bound = b·s: t = 1/2 + b / 2^26, a tie between two f32 when b
/// is 2 mod 4, a quarter-ulp from one when b is odd.
fn ties_and_near_ties() -> Vec<Case> {
    let mut cases = Vec::new();
    for scale in [1.0f32, 2f32.powi(-60), 2f32.powi(-120), 2f32.powi(30)] {
        for b in -40i32..=40 {
            let (c0, c1) = (-(1 << 25) as f32 * scale, (1 << 25) as f32 * scale);
            cases.push(Case::new(c0, c1, b as f32 * scale));
            cases.push(Case::new(c1, c0, b as f32 * scale));
        }
    }
    // Quotients 1e-17 off a tie, which an f64 division rounds onto it (the CPU's batched
    // kernels round t from f64 where that is certain, and must leave these to the exact path):
    // (bound, c0, c1) as f32 bits, found by a search with exact rationals.
    for (bound, c0, c1) in ROUNDED_ONTO_A_TIE {
        let [bound, c0, c1] = [bound, c0, c1].map(f32::from_bits);
        for scale in [1.0f32, -1.0, 2f32.powi(-40), 2f32.powi(50)] {
            cases.push(Case::new(c0 * scale, c1 * scale, bound * scale));
        }
    }
    // Ties in other binades: den 2^(25 + k), t near 2^-k.
    for k in 1..12 {
        for b in [1, 2, 3, 5, 6, 7] {
            let c1 = (1u64 << (25 + k)) as f32;
            let bound = (1u64 << 25) as f32 + b as f32;
            cases.push(Case::new(0.0, c1, bound));
        }
    }
    cases
}

/// t a few ulp above 0 and below 1, at several magnitudes.
fn near_the_ends() -> Vec<Case> {
    let mut cases = Vec::new();
    for (c0, c1) in [
        (0.0f32, 1.0f32),
        (-3.0, 7.5),
        (1.0e6, -2.5e7),
        (-1.0e-20, 3.0e-20),
    ] {
        let (mut above, mut below) = (c0, c1);
        for _ in 0..4 {
            above = if c1 > c0 {
                above.next_up()
            } else {
                above.next_down()
            };
            below = if c1 > c0 {
                below.next_down()
            } else {
                below.next_up()
            };
            cases.push(Case::sloped(c0, c1, above, 1.0, 3.0));
            cases.push(Case::sloped(c0, c1, below, -5.0, 2.0e-3));
        }
    }
    cases
}

/// Huge against tiny: 2^62-long segments crossing within 2^-149 of an end, tiny segments far
/// from the origin, and magnitudes more than 2^38 apart, which the GPU hands to the host.
fn huge_and_tiny() -> Vec<Case> {
    let tiny = f32::from_bits(1);
    let mut cases = vec![
        Case::new(-LIMIT, LIMIT, tiny),
        Case::new(-LIMIT, LIMIT, -tiny),
        Case::new(0.0, LIMIT, tiny),
        Case::new(tiny, LIMIT, 2.0 * tiny),
        Case::new(-tiny, LIMIT, 1.0e-30),
        Case::new(-LIMIT, 1.0e-30, -1.0e-38),
        Case::new(1.0e-38, 1.0e18, 3.0),
        Case::sloped(0.0, 1.0e-30, 3.0e-31, -LIMIT, LIMIT),
        Case::sloped(
            1.0e12,
            1.0e12 + 65536.0 * 16.0,
            1.0e12 + 65536.0 * 5.0,
            0.1,
            0.7,
        ),
    ];
    // Random magnitudes from 2^-149 to 2^62, spreads of every size.
    let mut rng = SplitMix64::new(13);
    let value = |rng: &mut SplitMix64| {
        // Any exponent field below 2^62's, subnormals included, and any mantissa.
        let bits = (rng.below(189) << 23 | rng.below(1 << 23)) as u32;
        let v = f32::from_bits(bits);
        if rng.below(2) == 0 { v } else { -v }
    };
    while cases.len() < 3000 {
        let (a, b, c) = (value(&mut rng), value(&mut rng), value(&mut rng));
        let mut v = [a, b, c];
        v.sort_by(f32::total_cmp);
        if v[0] == v[2] {
            continue;
        }
        let (y0, y1) = (value(&mut rng), value(&mut rng));
        let case = Case::sloped(v[0], v[2], v[1], y0, y1);
        cases.push(if rng.below(2) == 0 {
            case
        } else {
            Case::sloped(v[2], v[0], v[1], y1, y0)
        });
    }
    cases
}

/// Random crossings at game scale: the common case.
fn random_crossings() -> Vec<Case> {
    let mut rng = SplitMix64::new(7);
    let coordinate = |rng: &mut SplitMix64| (rng.below(1 << 24) as f32 / 16384.0) - 512.0;
    (0..5000)
        .filter_map(|_| {
            let mut v = [
                coordinate(&mut rng),
                coordinate(&mut rng),
                coordinate(&mut rng),
            ];
            v.sort_by(f32::total_cmp);
            let (y0, y1) = (coordinate(&mut rng), coordinate(&mut rng));
            (v[0] != v[2]).then(|| Case::sloped(v[0], v[2], v[1], y0, y1))
        })
        .collect()
}

#[test]
fn ties_of_the_quotient_round_to_even_and_near_ties_to_nearest() {
    let cases = ties_and_near_ties();
    // The family holds real ties: t = 1/2 + 2^-25 lies halfway between two f32.
    assert_eq!(
        Case::new(-(1 << 25) as f32, (1 << 25) as f32, 2.0).exact_t(),
        0.5
    );
    assert_eq!(
        Case::new(-(1 << 25) as f32, (1 << 25) as f32, 6.0).exact_t(),
        0.5 + 2f32.powi(-23)
    );
    for mut engine in engines("ties") {
        assert_correctly_rounded("ties and near-ties", &mut engine, &cases);
    }
}

#[test]
fn t_near_0_and_near_1_is_correctly_rounded() {
    for mut engine in engines("near the ends") {
        assert_correctly_rounded("near the ends", &mut engine, &near_the_ends());
    }
}

#[test]
fn huge_and_tiny_differences_are_correctly_rounded() {
    for mut engine in engines("huge and tiny") {
        let uncertain = engine.uncertain_pairs();
        assert_correctly_rounded("huge and tiny", &mut engine, &huge_and_tiny());
        if engine.gpu_context().is_some() {
            // Values 2^38 apart or more cannot be held by the GPU's integers: those pairs are
            // rounded on the host, and counted.
            assert!(
                engine.uncertain_pairs() > uncertain,
                "no pair went to the host"
            );
        }
    }
}

#[test]
fn random_crossings_are_correctly_rounded() {
    for mut engine in engines("random") {
        assert_correctly_rounded("random crossings", &mut engine, &random_crossings());
    }
}

#[test]
fn the_oracle_rounds_ties_to_even() {
    // The test's own ruler, against f64 division then f32 rounding where that is exact.
    for (num, den) in [(1i64, 3i64), (2, 3), (1, 7), (5, 8), (1 << 30, 3)] {
        let want = (num as f64 / den as f64) as f32;
        assert_eq!(
            round_rational_to_f32(&BigInt::from(num), &BigInt::from(den)),
            want
        );
    }
    // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: to even, 1.
    let tie = round_rational_to_f32(
        &((BigInt::from(1) << 24u32) + 1),
        &(BigInt::from(1) << 24u32),
    );
    assert_eq!(tie, 1.0);
    let tie_up = round_rational_to_f32(
        &((BigInt::from(1) << 24u32) + 3),
        &(BigInt::from(1) << 24u32),
    );
    assert_eq!(tie_up, 1.0 + 2f32.powi(-22));
}
