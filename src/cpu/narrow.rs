//! Exact integers in 64 and 128 bits, for pairs whose values span few binary orders: the CPU's
//! narrow exact path, taken before the wide integers of [`super::exact`] (448 bits, 896 for
//! circles), which answer the pairs beyond its reach.
//!
//! An f32 is `m · 2^e` with an odd integer `m` below 2^24. When every nonzero value of a pair
//! lies within [`SPAN`] binary orders of the smallest `e` among them, each one divided by
//! 2^(that `e`) is an integer below 2^62: differences of two fit an `i64`, and products of two
//! differences and their sums or differences fit an `i128`. A common power of two scales every
//! sign alike and cancels from every ratio, so the narrow path's decisions and t are the wide
//! path's.
//!
//! The CPU mirror of the narrow integers of `shaders/exact.wgsl`: the same functions under the
//! same names and branches, on i64 and i128 where the shader has 32-bit words (`vec2<u32>`,
//! `vec4<u32>`).

#![allow(
    clippy::needless_range_loop,
    reason = "the mirror keeps the shader's indexed loops, line for line"
)]

use super::segment_rect::time::ZERO_EXPONENT;

/// Binary orders a pair's values may span for the narrow path: each scaled value is below
/// 2^SPAN, differences below 2^(SPAN + 1) ≤ 2^63, products of two differences below 2^126, and
/// a sum or difference of two such products below 2^127. The shader's `NARROW_SPAN`.
pub(crate) const SPAN: i32 = 62;

/// Every value of `values` as an integer multiple of one power of two, exactly: `values[k] =
/// scaled[k] · 2^e` for the smallest `e` that does it, when every `scaled[k]` is below 2^[`SPAN`]
/// in magnitude; `None` when the values span more binary orders than that. Zeros (either sign)
/// scale to 0; a pair of fewer values fills the rest with zeros. The shader's `scaled_values`
/// (its `NarrowValues`, `fits` false for `None`).
pub(crate) fn scaled_values(values: &[f32; 8]) -> Option<[i64; 8]> {
    let mut mantissas = [0u32; 8];
    let mut shifts = [0i32; 8];
    let mut negative = [false; 8];
    let mut low = ZERO_EXPONENT;
    let mut high = -ZERO_EXPONENT;
    for k in 0..8 {
        let bits = values[k].to_bits();
        let field = (bits >> 23) & 0xff;
        let fraction = bits & 0x7f_ffff;
        let mut m = fraction | 0x80_0000;
        let mut e = field as i32 - 150;
        if field == 0 {
            m = fraction;
            e = -149;
        }
        if m == 0 {
            continue;
        }
        // The odd significand: the least exponent that holds the value.
        let zeros = m.trailing_zeros();
        m >>= zeros;
        e += zeros as i32;
        low = low.min(e);
        // m < 2^(bit length): the value is below 2^(e + bit length).
        high = high.max(e + (32 - m.leading_zeros()) as i32);
        mantissas[k] = m;
        shifts[k] = e;
        negative[k] = (bits >> 31) == 1;
    }
    // All zeros: low and high as set above, and every scaled value 0.
    if high - low > SPAN {
        return None;
    }
    let mut out = [0i64; 8];
    for k in 0..8 {
        if mantissas[k] != 0 {
            let magnitude = (mantissas[k] as i64) << (shifts[k] - low);
            out[k] = if negative[k] { -magnitude } else { magnitude };
        }
    }
    Some(out)
}

/// A difference of two points' narrow values: each coordinate below 2^63. WGSL `NarrowPoint`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NarrowPoint {
    pub(crate) x: i64,
    pub(crate) y: i64,
}

pub(crate) fn narrow_difference(ax: i64, ay: i64, bx: i64, by: i64) -> NarrowPoint {
    NarrowPoint {
        x: ax - bx,
        y: ay - by,
    }
}

// The shader's 128-bit words are i128 here (u128 where it compares unsigned): each helper is
// the operator it names, kept as a call so that the mirror reads as the shader does.

#[inline(always)]
pub(crate) fn narrow_is_zero<T: Default + PartialEq>(a: T) -> bool {
    a == T::default()
}

#[inline(always)]
pub(crate) fn narrow_is_negative(a: i128) -> bool {
    a < 0
}

#[inline(always)]
pub(crate) fn narrow_neg(a: i128) -> i128 {
    -a
}

/// a < b, signed.
#[inline(always)]
pub(crate) fn narrow_lt(a: i128, b: i128) -> bool {
    a < b
}

/// a < b, unsigned.
#[inline(always)]
fn narrow_below(a: u128, b: u128) -> bool {
    a < b
}

/// l × r.
#[inline(always)]
pub(crate) fn narrow_cross(l: NarrowPoint, r: NarrowPoint) -> i128 {
    l.x as i128 * r.y as i128 - l.y as i128 * r.x as i128
}

/// l · r.
#[inline(always)]
pub(crate) fn narrow_dot(l: NarrowPoint, r: NarrowPoint) -> i128 {
    l.x as i128 * r.x as i128 + l.y as i128 * r.y as i128
}

/// `num / den` rounded to the nearest f32, ties to even, for `0 ≤ num ≤ den`, `0 < den <
/// 2^127`: [`super::exact`]'s `ratio_to_f32` on 128-bit integers, the same steps (align, long
/// division for the kept bits, a round bit and a sticky remainder). The remainder stays below
/// 2^128.
pub(crate) fn narrow_ratio_to_f32(num: u128, den: u128) -> f32 {
    if narrow_is_zero(num) {
        return 0.0;
    }
    let num_bits = 128 - num.leading_zeros();
    let den_bits = 128 - den.leading_zeros();
    let mut rem = num << (den_bits - num_bits.min(den_bits));
    let mut e = num_bits as i32 - den_bits as i32;
    if narrow_below(rem, den) {
        rem <<= 1;
        e -= 1;
    }
    // Quotient bits kept: 24 for a normal result, fewer below 2^-126, none at 2^-150.
    let kept = (e + 150).min(24);
    if kept < 0 {
        return 0.0;
    }
    let mut quotient = 0u32;
    for _ in 0..kept {
        quotient <<= 1;
        if !narrow_below(rem, den) {
            rem -= den;
            quotient |= 1;
        }
        rem <<= 1;
    }
    let round_bit = !narrow_below(rem, den);
    if round_bit {
        rem -= den;
    }
    if round_bit && (!narrow_is_zero(rem) || (quotient & 1) == 1) {
        quotient += 1;
    }
    // A normal result's quotient holds the hidden bit; a carry into 2^24 moves on to the next
    // exponent, as the bit patterns of f32 do.
    let mut bits = 0;
    if kept == 24 {
        bits = ((e + 126) as u32) << 23;
    }
    f32::from_bits(bits + quotient)
}

/// `a · b` in full, as its (high, low) 128-bit halves. WGSL `narrow_mul_full`.
pub(crate) fn narrow_mul_full(a: u128, b: u128) -> (u128, u128) {
    const LOW: u128 = u64::MAX as u128;
    let (a1, a0, b1, b0) = (a >> 64, a & LOW, b >> 64, b & LOW);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Below 3 · 2^64: no carry lost.
    let middle = (p00 >> 64) + (p01 & LOW) + (p10 & LOW);
    (
        p11 + (p01 >> 64) + (p10 >> 64) + (middle >> 64),
        (p00 & LOW) | (middle << 64),
    )
}

/// `an / ad < bn / bd`, exactly, for denominators above 0: the cross products in full.
pub(crate) fn ratio_below(an: u128, ad: u128, bn: u128, bd: u128) -> bool {
    narrow_mul_full(an, bd) < narrow_mul_full(bn, ad)
}

/// The sign of a − b, unsigned, for 256-bit (high, low) values: −1, 0 or 1.
pub(crate) fn wide256_compare(a: (u128, u128), b: (u128, u128)) -> i32 {
    a.cmp(&b) as i32
}

/// A 256-bit two's complement integer, (high, low) halves: the circles' probes. Every
/// operation wraps modulo 2^256, exact while the true value stays within ±2^255. WGSL
/// `Wide256`; its methods are the `wide256_` functions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Wide256 {
    high: u128,
    low: u128,
}

impl Wide256 {
    pub(crate) fn of(v: i128) -> Self {
        Wide256 {
            high: if v < 0 { u128::MAX } else { 0 },
            low: v as u128,
        }
    }

    pub(crate) fn add(self, other: Wide256) -> Wide256 {
        let low = self.low.wrapping_add(other.low);
        Wide256 {
            high: self
                .high
                .wrapping_add(other.high)
                .wrapping_add((low < self.low) as u128),
            low,
        }
    }

    /// `self · 2^k`, k < 256.
    pub(crate) fn shl(self, k: u32) -> Wide256 {
        match k {
            0 => self,
            1..128 => Wide256 {
                high: self.high << k | self.low >> (128 - k),
                low: self.low << k,
            },
            _ => Wide256 {
                high: self.low << (k - 128),
                low: 0,
            },
        }
    }

    /// `self · m`.
    pub(crate) fn mul(self, m: u32) -> Wide256 {
        let (carry, low) = narrow_mul_full(self.low, m as u128);
        Wide256 {
            high: self.high.wrapping_mul(m as u128).wrapping_add(carry),
            low,
        }
    }

    /// −1, 0 or 1.
    pub(crate) fn sign(self) -> i32 {
        if (self.high as i128) < 0 {
            -1
        } else {
            (self.high | self.low != 0) as i32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SPAN, Wide256, narrow_ratio_to_f32, ratio_below, scaled_values};
    use crate::cpu::exact::{Big, LIMBS};
    use crate::scene::SplitMix64;

    fn big(v: u128) -> Big {
        let mut out = [0; LIMBS];
        for (k, limb) in out.iter_mut().take(4).enumerate() {
            *limb = (v >> (32 * k)) as u32;
        }
        out
    }

    #[test]
    fn ratios_round_as_the_wide_integers_do_at_every_size_tie_and_subnormal() {
        let mut rng = SplitMix64::new(5);
        let mut checked = 0;
        for i in 0..200_000u32 {
            let den_bits = 1 + rng.below(126) as u32;
            let den = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) >> (128 - den_bits)
                | 1u128 << (den_bits - 1);
            let (num, den) = match i % 4 {
                // Any numerator up to den, at any size.
                0 => (
                    ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128)
                        >> rng.below(128) as u32,
                    den,
                ),
                // A tie: num / den = (2^24 + 2j + 1) / 2^25, halfway between two f32.
                1 => {
                    let unit = den >> 25 | 1;
                    (
                        unit * ((1 << 24) + 2 * rng.below(1 << 23) as u128 + 1),
                        unit << 25,
                    )
                }
                // Tiny quotients, down into the subnormals and past them.
                2 => (1 + rng.below(8) as u128, den),
                _ => (den, den),
            };
            if num > den {
                continue;
            }
            let want = crate::cpu::exact::ratio_to_f32(&big(num), &big(den));
            assert_eq!(
                narrow_ratio_to_f32(num, den).to_bits(),
                want.to_bits(),
                "{num} / {den}"
            );
            checked += 1;
        }
        assert!(checked > 150_000, "{checked}");
    }

    #[test]
    fn ratios_compare_as_the_wide_integers_do_up_to_the_full_width() {
        use crate::cpu::exact::{double_compare, double_mul};
        let mut rng = SplitMix64::new(6);
        let mut wide = || (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
        for i in 0..100_000 {
            let [an, ad, bn, bd] = [wide(), wide(), wide(), wide()].map(|v| v >> (i % 7) | 1);
            let [an, ad, bn, bd] = if i % 2 == 0 {
                // The same ratio times c, off by at most one in the numerator: products that
                // differ in their low bits alone, carries into the high half included.
                let (c, an, ad) = (1 + (bn >> 120), an >> 8, ad >> 8 | 1);
                let bn = (an * c).wrapping_add(i as u128 % 3).wrapping_sub(1).max(1);
                [an, ad, bn, ad * c]
            } else {
                [an, ad, bn, bd]
            };
            let want = double_compare(
                &double_mul(&big(an), &big(bd)),
                &double_mul(&big(bn), &big(ad)),
            );
            assert_eq!(
                ratio_below(an, ad, bn, bd),
                want < 0,
                "{an}/{ad} < {bn}/{bd}"
            );
            assert!(!ratio_below(an, ad, an, ad));
        }
    }

    #[test]
    fn probes_of_a_quadratic_have_the_wide_integers_sign() {
        use crate::cpu::exact::{
            big_neg, double_add, double_from_big, double_mul_small, double_shl, double_sign,
        };
        let signed = |v: i128| {
            let b = big(v.unsigned_abs());
            if v < 0 { big_neg(&b) } else { b }
        };
        let mut rng = SplitMix64::new(7);
        let mut signs = [0usize; 3];
        for i in 0..100_000u32 {
            let mut coefficient = || {
                let v = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) >> 1;
                (v >> rng.below(127)) as i128 * if rng.below(2) == 0 { 1 } else { -1 }
            };
            let (mut a, mut b, mut c) = (coefficient().abs(), coefficient(), coefficient());
            let mut m = (rng.next_u64() as u32) >> (7 + i % 25);
            let mut k = rng.below(64) as u32;
            if i % 3 == 0 {
                // q = A·m² + C = 0, or one either side: the sign's zero, and borrows through
                // both halves.
                (a, m, k, b) = (a >> 70, m >> 1, 0, 0);
                c = -(a * m as i128 * m as i128) + (i as i128 / 3 % 3 - 1);
            }
            let got = Wide256::of(a)
                .mul(m)
                .mul(m)
                .add(Wide256::of(b).mul(m).shl(k + 1))
                .add(Wide256::of(c).shl(2 * k));
            let (da, db, dc) = (
                double_from_big(&signed(a)),
                double_from_big(&signed(b)),
                double_from_big(&signed(c)),
            );
            let want = double_add(
                &double_add(
                    &double_mul_small(&double_mul_small(&da, m), m),
                    &double_shl(&double_mul_small(&db, m), k + 1),
                ),
                &double_shl(&dc, 2 * k),
            );
            assert_eq!(got.sign(), double_sign(&want), "{a} {b} {c} {m} {k}");
            signs[(got.sign() + 1) as usize] += 1;
        }
        assert!(signs.iter().all(|&n| n > 100), "{signs:?}");
    }

    #[test]
    fn values_within_the_span_scale_exactly_and_those_past_it_do_not() {
        let pad = |v: &[f32]| std::array::from_fn(|k| v.get(k).copied().unwrap_or(0.0));
        let got = scaled_values(&pad(&[1.5, -0.25, 0.0, -0.0, 3.0 * 2f32.powi(40)])).unwrap();
        assert_eq!(got, [6, -1, 0, 0, 3 << 42, 0, 0, 0]);
        assert_eq!(
            scaled_values(&pad(&[f32::from_bits(1), 2f32.powi(-149 + SPAN - 1)])),
            Some(pad(&[1.0, 2f32.powi(61)]).map(|v| v as i64))
        );
        assert_eq!(
            scaled_values(&pad(&[f32::from_bits(1), 2f32.powi(-149 + SPAN)])),
            None
        );
        assert_eq!(scaled_values(&[0.0f32; 8]), Some([0; 8]));
    }
}
