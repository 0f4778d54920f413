//! Exact integers for the shapes' contracts: every f32 as an integer multiple of 2^-149, signed
//! values of [`LIMBS`] 32-bit limbs (`Big`) and unsigned double-width products (`Double`), and an
//! exact ratio rounded to the nearest f32.
//!
//! The CPU mirror of `shaders/exact.wgsl`: the same functions under the same names, the same
//! branches, u32 arithmetic only (WGSL has no 64-bit integers, so a 32 × 32-bit product is
//! split into 16-bit halves here too).

#![allow(
    clippy::needless_range_loop,
    reason = "the mirror of shaders/exact.wgsl keeps its indexed loops, line for line"
)]

/// Limbs of a `Big`: 448 bits, above the 428 the contracts' products and shifts need. WGSL
/// `LIMBS` (tests/shader.rs holds them equal).
pub const LIMBS: usize = 14;

/// Limbs of a `Double`: a product of two `Big`s. WGSL `DOUBLE`.
pub const DOUBLE: usize = 2 * LIMBS;

/// A signed integer, least significant limb first, two's complement. WGSL `Big`.
pub(crate) type Big = [u32; LIMBS];

/// WGSL `BigPoint`.
pub(crate) struct BigPoint {
    pub(crate) x: Big,
    pub(crate) y: Big,
}

pub(crate) fn difference(a: &BigPoint, b: &BigPoint) -> BigPoint {
    BigPoint {
        x: big_sub(&a.x, &b.x),
        y: big_sub(&a.y, &b.y),
    }
}

/// `v · 2^149`, exactly (every f32 is a multiple of 2^-149).
pub(crate) fn big_from_f32(v: f32) -> Big {
    let bits = v.to_bits();
    let exponent = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    // A normal value is (2^23 + fraction) · 2^(exponent − 150); a subnormal one (exponent 0)
    // fraction · 2^-149.
    let mut mantissa = fraction | 0x80_0000;
    let mut shift = exponent.wrapping_sub(1);
    if exponent == 0 {
        mantissa = fraction;
        shift = 0;
    }
    let mut magnitude = [0; LIMBS];
    magnitude[0] = mantissa;
    magnitude = big_shl(&magnitude, shift);
    if bits >> 31 == 1 {
        return big_neg(&magnitude);
    }
    magnitude
}

pub(crate) fn big_is_zero(a: &Big) -> bool {
    let mut zero = true;
    for i in 0..LIMBS {
        zero = zero && a[i] == 0;
    }
    zero
}

pub(crate) fn big_is_negative(a: &Big) -> bool {
    a[LIMBS - 1] >> 31 == 1
}

pub(crate) fn big_add(a: &Big, b: &Big) -> Big {
    let mut out: Big = [0; LIMBS];
    let mut carry = 0u32;
    for i in 0..LIMBS {
        let sum = a[i].wrapping_add(b[i]);
        let total = sum.wrapping_add(carry);
        carry = (sum < a[i]) as u32 + (total < sum) as u32;
        out[i] = total;
    }
    out
}

pub(crate) fn big_neg(a: &Big) -> Big {
    let mut out: Big = [0; LIMBS];
    let mut carry = 1u32;
    for i in 0..LIMBS {
        let total = (!a[i]).wrapping_add(carry);
        carry = (total < carry) as u32;
        out[i] = total;
    }
    out
}

pub(crate) fn big_sub(a: &Big, b: &Big) -> Big {
    big_add(a, &big_neg(b))
}

/// `a < b`, signed.
pub(crate) fn big_lt(a: &Big, b: &Big) -> bool {
    let negative_a = big_is_negative(a);
    if negative_a != big_is_negative(b) {
        return negative_a;
    }
    for k in 0..LIMBS {
        let i = LIMBS - 1 - k;
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

/// `a · b` as (low word, high word), from 16-bit halves: the mirror of `mul_wide` in
/// shaders/segment_rect.wgsl, which this shader shares.
pub(crate) fn mul_wide(a: u32, b: u32) -> (u32, u32) {
    let a0 = a & 0xffff;
    let a1 = a >> 16;
    let b0 = b & 0xffff;
    let b1 = b >> 16;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let middle = (p00 >> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    let low = (p00 & 0xffff) | (middle << 16);
    let high = p11 + (p01 >> 16) + (p10 >> 16) + (middle >> 16);
    (low, high)
}

/// The product, signed; the contract's products fit (below 2^427).
pub(crate) fn big_mul(a: &Big, b: &Big) -> Big {
    let negative = big_is_negative(a) != big_is_negative(b);
    let mut x = *a;
    if big_is_negative(a) {
        x = big_neg(a);
    }
    let mut y = *b;
    if big_is_negative(b) {
        y = big_neg(b);
    }
    let mut out: Big = [0; LIMBS];
    for i in 0..LIMBS {
        let mut carry = 0u32;
        for j in 0..LIMBS - i {
            let product = mul_wide(x[i], y[j]);
            let sum = out[i + j].wrapping_add(product.0);
            let total = sum.wrapping_add(carry);
            // The exact high word of out + product + carry, below 2^32.
            carry = product.1 + (sum < product.0) as u32 + (total < sum) as u32;
            out[i + j] = total;
        }
    }
    if negative {
        return big_neg(&out);
    }
    out
}

/// `a · 2^shift`, for a value (of either sign) whose product stays within a `Big`.
pub(crate) fn big_shl(a: &Big, shift: u32) -> Big {
    let words = (shift / 32) as usize;
    let bits = shift % 32;
    let mut out: Big = [0; LIMBS];
    for i in words..LIMBS {
        let mut below = 0;
        if bits > 0 && i > words {
            below = a[i - words - 1] >> (32 - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    out
}

/// Bits up to the highest set one, for a non-negative value (0 for zero).
pub(crate) fn big_bit_length(a: &Big) -> u32 {
    for k in 0..LIMBS {
        let i = LIMBS - 1 - k;
        if a[i] != 0 {
            return 32 * i as u32 + 32 - a[i].leading_zeros();
        }
    }
    0
}

/// `num / den` rounded to the nearest f32, ties to even, for `0 ≤ num ≤ den`, `den > 0`: a t
/// in [0, 1]. Long division, one quotient bit a step, as many bits as the f32 keeps at that
/// exponent (fewer for a subnormal result), then the round bit and the remainder's sticky bit.
pub(crate) fn ratio_to_f32(num: &Big, den: &Big) -> f32 {
    if big_is_zero(num) {
        return 0.0;
    }
    // Align the numerator with the denominator: den ≤ rem < 2 den, and the result's exponent
    // is e (2^e ≤ num / den < 2^(e + 1)).
    let num_bits = big_bit_length(num);
    let den_bits = big_bit_length(den);
    let mut rem = big_shl(num, den_bits - num_bits.min(den_bits));
    let mut e = num_bits as i32 - den_bits as i32;
    if big_lt(&rem, den) {
        rem = big_shl(&rem, 1);
        e -= 1;
    }
    // Quotient bits kept: 24 for a normal result, fewer below 2^-126, none at 2^-150 (the
    // round bit then decides between 0 and the smallest subnormal).
    let kept = (e + 150).min(24);
    if kept < 0 {
        // Below half the smallest subnormal: rounds to 0.
        return 0.0;
    }
    let mut quotient = 0u32;
    for _ in 0..kept {
        quotient <<= 1;
        if !big_lt(&rem, den) {
            rem = big_sub(&rem, den);
            quotient |= 1;
        }
        rem = big_shl(&rem, 1);
    }
    let round_bit = !big_lt(&rem, den);
    if round_bit {
        rem = big_sub(&rem, den);
    }
    let sticky = !big_is_zero(&rem);
    if round_bit && (sticky || quotient & 1 == 1) {
        quotient += 1;
    }
    // A normal result's quotient holds the hidden bit (2^23); a carry into 2^24 moves on to
    // the next exponent, as the bit patterns of f32 do.
    let mut bits = 0;
    if kept == 24 {
        bits = ((e + 126) as u32) << 23;
    }
    f32::from_bits(bits + quotient)
}

/// `|a|`.
pub(crate) fn big_abs(a: &Big) -> Big {
    if big_is_negative(a) {
        return big_neg(a);
    }
    *a
}

/// An integer of twice a `Big`'s limbs, least significant first: unsigned, or two's
/// complement where a function says so. WGSL `Double`.
pub(crate) type Double = [u32; DOUBLE];

/// `a · b` in full, for non-negative `a` and `b`.
pub(crate) fn double_mul(a: &Big, b: &Big) -> Double {
    let mut out: Double = [0; DOUBLE];
    for i in 0..LIMBS {
        let mut carry = 0u32;
        for j in 0..LIMBS {
            let product = mul_wide(a[i], b[j]);
            let sum = out[i + j].wrapping_add(product.0);
            let total = sum.wrapping_add(carry);
            carry = product.1 + (sum < product.0) as u32 + (total < sum) as u32;
            out[i + j] = total;
        }
        out[i + LIMBS] = carry;
    }
    out
}

pub(crate) fn double_add(a: &Double, b: &Double) -> Double {
    let mut out: Double = [0; DOUBLE];
    let mut carry = 0u32;
    for i in 0..DOUBLE {
        let sum = a[i].wrapping_add(b[i]);
        let total = sum.wrapping_add(carry);
        carry = (sum < a[i]) as u32 + (total < sum) as u32;
        out[i] = total;
    }
    out
}

/// `a < b`, unsigned.
pub(crate) fn double_lt(a: &Double, b: &Double) -> bool {
    for k in 0..DOUBLE {
        let i = DOUBLE - 1 - k;
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

/// The sign of `a − b`, unsigned: −1, 0 or 1.
pub(crate) fn double_compare(a: &Double, b: &Double) -> i32 {
    if double_lt(a, b) {
        return -1;
    }
    if double_lt(b, a) {
        return 1;
    }
    0
}

/// `a`, sign-extended: a `Double` in two's complement.
pub(crate) fn double_from_big(a: &Big) -> Double {
    let mut out: Double = [0; DOUBLE];
    let mut fill = 0u32;
    if big_is_negative(a) {
        fill = u32::MAX;
    }
    for i in 0..DOUBLE {
        out[i] = fill;
        if i < LIMBS {
            out[i] = a[i];
        }
    }
    out
}

/// `a · m`, for `a` of either sign in two's complement, whose product stays within a
/// `Double`.
pub(crate) fn double_mul_small(a: &Double, m: u32) -> Double {
    let mut out: Double = [0; DOUBLE];
    let mut carry = 0u32;
    for i in 0..DOUBLE {
        let product = mul_wide(a[i], m);
        let total = product.0.wrapping_add(carry);
        carry = product.1 + (total < product.0) as u32;
        out[i] = total;
    }
    out
}

/// The sign of `a` in two's complement: −1, 0 or 1.
pub(crate) fn double_sign(a: &Double) -> i32 {
    if a[DOUBLE - 1] >> 31 == 1 {
        return -1;
    }
    let mut zero = true;
    for i in 0..DOUBLE {
        zero = zero && a[i] == 0;
    }
    if zero {
        return 0;
    }
    1
}

/// `a · 2^shift`, for a value (of either sign, in two's complement) that stays within a
/// `Double`.
pub(crate) fn double_shl(a: &Double, shift: u32) -> Double {
    let words = (shift / 32) as usize;
    let bits = shift % 32;
    let mut out: Double = [0; DOUBLE];
    for i in words..DOUBLE {
        let mut below = 0;
        if bits > 0 && i > words {
            below = a[i - words - 1] >> (32 - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    out
}
