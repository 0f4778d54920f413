//! The exact oracle: the contract's definition of I (docs/semantics.md) evaluated in exact
//! integer arithmetic from the f32 inputs, for any valid input, with t rounded correctly to f32.
//!
//! Independent of the kernel by construction: it uses the p_k·t <= q_k form of the classic
//! Liang–Barsky write-up (not the kernel's slab and corner form), no floating-point operation
//! decides anything, and t is rounded from the exact quotient here rather than divided.
//!
//! Every f32 is m·2^e with an integer m of at most 24 bits. All eight values of a pair are scaled
//! by the same power of two into integers; every quantity the definition needs (differences,
//! their ratios, comparisons of ratios) is unchanged by that scale. Most pairs fit i128; pairs
//! that mix 1e-38 with 1e18 need up to ~211-bit integers and take the BigInt path.

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rectcast::{PairResult, Rect, Segment, Sides, flags};

/// v = mantissa · 2^exponent, mantissa a signed integer of at most 24 bits; None for zero.
fn decompose(v: f32) -> Option<(i64, i32)> {
    if v == 0.0 {
        return None;
    }
    let bits = v.to_bits();
    let biased = ((bits >> 23) & 0xff) as i32;
    let fraction = i64::from(bits & 0x7f_ffff);
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -149)
    } else {
        (fraction | 1 << 23, biased - 150)
    };
    Some((if v < 0.0 { -mantissa } else { mantissa }, exponent))
}

/// Integer arithmetic the oracle runs on: i128 when the pair's values fit, BigInt otherwise.
trait Exact: Clone + Ord + Signed + From<i64> + Into<BigInt> {
    fn shifted(mantissa: i64, shift: u32) -> Self;
}

impl Exact for i128 {
    fn shifted(mantissa: i64, shift: u32) -> Self {
        i128::from(mantissa) << shift
    }
}

impl Exact for BigInt {
    fn shifted(mantissa: i64, shift: u32) -> Self {
        BigInt::from(mantissa) << shift
    }
}

/// t = num / den with den > 0.
#[derive(Clone, Debug)]
struct Frac<T> {
    num: T,
    den: T,
}

impl<T: Exact> Frac<T> {
    fn new(num: T, den: T) -> Self {
        if den.is_negative() {
            Self {
                num: -num,
                den: -den,
            }
        } else {
            Self { num, den }
        }
    }
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.num.clone() * other.den.clone()).cmp(&(other.num.clone() * self.den.clone()))
    }
}

/// The f32 nearest to num / den (ties to even), for 0 <= num <= den, den > 0.
pub fn round_ratio_to_f32(num: &BigInt, den: &BigInt) -> f32 {
    assert!(!num.is_negative() && den.is_positive() && num <= den);
    round_rational_to_f32(num, den)
}

struct Oracle<T> {
    lower: Frac<T>,
    upper: Frac<T>,
    entry: Sides,
    exit: Sides,
}

/// p_k·t <= q_k for the four boundaries, in the order min_x, max_x, min_y, max_y.
fn evaluate<T: Exact>(v: [T; 8], start_inside: bool, end_inside: bool) -> Option<Oracle<T>> {
    let [x0, y0, x1, y1, min_x, min_y, max_x, max_y] = v;
    let dx = x1 - x0.clone();
    let dy = y1 - y0.clone();
    let boundaries = [
        (-dx.clone(), x0.clone() - min_x, Sides::MIN_X),
        (dx, max_x - x0, Sides::MAX_X),
        (-dy.clone(), y0.clone() - min_y, Sides::MIN_Y),
        (dy, max_y - y0, Sides::MAX_Y),
    ];
    let mut lower = Frac::new(T::zero(), T::one());
    let mut upper = Frac::new(T::one(), T::one());
    for (p, q, _) in &boundaries {
        if p.is_zero() {
            if q.is_negative() {
                return None;
            }
        } else {
            let t = Frac::new(q.clone(), p.clone());
            if p.is_negative() {
                if t.cmp(&lower).is_gt() {
                    lower = t;
                }
            } else if t.cmp(&upper).is_lt() {
                upper = t;
            }
        }
    }
    if lower.cmp(&upper).is_gt() {
        return None;
    }
    // The sides crossed inward at t_enter and outward at t_exit.
    let mut entry = Sides::NONE;
    let mut exit = Sides::NONE;
    for (p, q, side) in boundaries {
        if p.is_zero() {
            continue;
        }
        let t = Frac::new(q, p.clone());
        if p.is_negative() && !start_inside && t.cmp(&lower).is_eq() {
            entry = entry | side;
        }
        if p.is_positive() && !end_inside && t.cmp(&upper).is_eq() {
            exit = exit | side;
        }
    }
    Some(Oracle {
        lower,
        upper,
        entry,
        exit,
    })
}

fn finish<T: Exact>(
    outcome: Option<Oracle<T>>,
    start_inside: bool,
    end_inside: bool,
) -> PairResult {
    let Some(o) = outcome else {
        return PairResult::MISS;
    };
    let round = |f: Frac<T>| round_ratio_to_f32(&f.num.into(), &f.den.into());
    let mut bits =
        flags::HIT | o.entry.bits() << flags::ENTRY_SHIFT | o.exit.bits() << flags::EXIT_SHIFT;
    if start_inside {
        bits |= flags::START_INSIDE;
    }
    if end_inside {
        bits |= flags::END_INSIDE;
    }
    PairResult {
        t_enter: if start_inside { 0.0 } else { round(o.lower) },
        t_exit: if end_inside { 1.0 } else { round(o.upper) },
        flags: bits,
    }
}

/// The contract's answer for one pair: exact flags and correctly rounded t.
pub fn segment_rect(s: &Segment, r: &Rect) -> PairResult {
    let values = [s.x0, s.y0, s.x1, s.y1, r.min_x, r.min_y, r.max_x, r.max_y];
    let parts = values.map(decompose);
    let min_exponent = parts.iter().flatten().map(|&(_, e)| e).min().unwrap_or(0);
    let shift = |p: Option<(i64, i32)>| p.map_or(0, |(_, e)| (e - min_exponent) as u32);
    let start_inside = r.contains(s.x0, s.y0);
    let end_inside = r.contains(s.x1, s.y1);
    // 24-bit mantissas shifted by < 38 stay below 2^62: differences below 2^63 and products of
    // two differences below 2^126, inside i128.
    if parts.iter().all(|&p| shift(p) < 38) {
        let v = parts.map(|p| p.map_or(0, |(m, _)| i128::shifted(m, shift(p))));
        finish(
            evaluate(v, start_inside, end_inside),
            start_inside,
            end_inside,
        )
    } else {
        let v = parts.map(|p| p.map_or(BigInt::zero(), |(m, _)| BigInt::shifted(m, shift(p))));
        finish(
            evaluate(v, start_inside, end_inside),
            start_inside,
            end_inside,
        )
    }
}

/// How one backend's results compare with the oracle on a batch of pairs.
#[derive(Clone, Debug, Default)]
pub struct Score {
    pub pairs: usize,
    /// Pairs whose flags (hit, kind, entry and exit sides) differ from the oracle's.
    pub decision_mismatches: usize,
    /// The largest t distance from the correctly rounded exact t, in ulp, over pairs whose
    /// decisions match.
    pub max_t_ulp: u32,
    /// The first mismatching pair: index, inputs, oracle result, backend result.
    pub first_mismatch: Option<(usize, Segment, Rect, PairResult, PairResult)>,
}

impl Score {
    pub fn add(&mut self, other: &Score) {
        self.pairs += other.pairs;
        self.decision_mismatches += other.decision_mismatches;
        self.max_t_ulp = self.max_t_ulp.max(other.max_t_ulp);
        if self.first_mismatch.is_none() {
            self.first_mismatch.clone_from(&other.first_mismatch);
        }
    }

    /// Panics with the first mismatch, its inputs and both results.
    pub fn assert_exact(&self, what: &str, max_t_ulp: u32) {
        if let Some((i, s, r, want, got)) = &self.first_mismatch {
            panic!(
                "{what}: {} of {} pairs decided differently from the exact oracle; first at index {i}\n  segment {s:?}\n  rect    {r:?}\n  oracle  {want:?} ({}, entry {}, exit {})\n  got     {got:?} ({}, entry {}, exit {})",
                self.decision_mismatches,
                self.pairs,
                want.kind(),
                want.entry_sides(),
                want.exit_sides(),
                got.kind(),
                got.entry_sides(),
                got.exit_sides(),
            );
        }
        assert!(
            self.max_t_ulp <= max_t_ulp,
            "{what}: t is {} ulp from the correctly rounded exact value (allowed {max_t_ulp})",
            self.max_t_ulp
        );
    }
}

/// The oracle's answers for `n` pairs, computed on all cores.
pub fn oracle_results(
    n: usize,
    inputs: impl Fn(usize) -> (Segment, Rect) + Sync,
) -> Vec<PairResult> {
    let mut out = vec![PairResult::MISS; n];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = n.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            let inputs = &inputs;
            scope.spawn(move || {
                for (k, result) in part.iter_mut().enumerate() {
                    let (s, r) = inputs(c * chunk + k);
                    *result = segment_rect(&s, &r);
                }
            });
        }
    });
    out
}

/// Scores a backend's `results` against the oracle's answers `want`.
pub fn score(
    want: &[PairResult],
    results: &[PairResult],
    inputs: impl Fn(usize) -> (Segment, Rect),
) -> Score {
    assert_eq!(want.len(), results.len(), "result counts differ");
    let mut score = Score {
        pairs: results.len(),
        ..Score::default()
    };
    for (i, (want, got)) in want.iter().zip(results).enumerate() {
        if want.flags != got.flags {
            score.decision_mismatches += 1;
            if score.first_mismatch.is_none() {
                let (s, r) = inputs(i);
                score.first_mismatch = Some((i, s, r, *want, *got));
            }
        } else {
            let ulp =
                ulp_distance(want.t_enter, got.t_enter).max(ulp_distance(want.t_exit, got.t_exit));
            score.max_t_ulp = score.max_t_ulp.max(ulp);
        }
    }
    score
}

/// Units in the last place between two finite f32; a zero of the other sign counts as
/// u32::MAX, since the CSV would print `-0` for one and `0` for the other.
pub fn ulp_distance(a: f32, b: f32) -> u32 {
    if a.is_sign_negative() != b.is_sign_negative() {
        return u32::MAX;
    }
    a.to_bits().abs_diff(b.to_bits())
}

/// The f32 nearest to num / den (ties to even) for any num and den != 0, subnormals included;
/// a zero is +0.0. For values within the f32 range.
pub fn round_rational_to_f32(num: &BigInt, den: &BigInt) -> f32 {
    assert!(!den.is_zero());
    if num.is_zero() {
        return 0.0;
    }
    let negative = num.is_negative() != den.is_negative();
    let (num, den) = (num.abs(), den.abs());
    // |num / den| · 2^k, as a quotient and a remainder over the scaled denominator.
    let scaled = |k: i64| -> (BigInt, BigInt, BigInt) {
        let (n, d) = if k >= 0 {
            (&num << (k as u64), den.clone())
        } else {
            (num.clone(), &den << ((-k) as u64))
        };
        (&n / &d, &n % &d, d)
    };
    let mut k = den.bits() as i64 - num.bits() as i64 + 23;
    loop {
        let (q, _, _) = scaled(k);
        if q < BigInt::one() << 23u32 {
            k += 1;
        } else if q >= BigInt::one() << 24u32 {
            k -= 1;
        } else {
            break;
        }
    }
    let k = k.min(149);
    let (mut q, r, d) = scaled(k);
    let twice = &r * 2;
    if twice > d || (twice == d && (&q % 2u32) == BigInt::one()) {
        q += 1;
    }
    let magnitude = (q.to_f64().expect("small") * 2f64.powi(-(k as i32))) as f32;
    if negative { -magnitude } else { magnitude }
}

/// An f32 as an exact BigInt numerator over 2^149.
pub fn scaled_2_149(v: f32) -> BigInt {
    match decompose(v) {
        None => BigInt::zero(),
        Some((m, e)) => BigInt::from(m) << ((e + 149) as u64),
    }
}
