// The exact integers the shapes' kernels compute on: every f32 as an integer multiple of 2^-149,
// signed values of LIMBS 32-bit limbs (Big) and double-width ones (Double), and an exact ratio
// rounded to the nearest f32; u32 arithmetic only: WGSL has no 64-bit integers. The passes the
// shapes' kernels run are in shaders/shape_passes.wgsl.
//
// Compiled after shaders/segment_rect.wgsl (its mul_wide) and before a shape's kernel. CPU
// mirror: src/cpu/exact.rs, same function names, same branches.

// Limbs of a Big: 448 bits. A function-scope array needs a constant size, so it is a const here;
// tests/shader.rs checks it against src/cpu/exact.rs.
const LIMBS: u32 = 14u;
// Limbs of a Double: a product of two Bigs.
const DOUBLE: u32 = 28u;

// A signed integer, least significant limb first, two's complement.
alias Big = array<u32, LIMBS>;
// An integer of twice a Big's limbs, least significant first: unsigned, or two's complement
// where a function says so.
alias Double = array<u32, DOUBLE>;

// v * 2^149, exactly (every f32 is a multiple of 2^-149).
fn big_from_f32(v: f32) -> Big {
    let bits = bitcast<u32>(v);
    let exponent = (bits >> 23u) & 0xffu;
    let fraction = bits & 0x7fffffu;
    var mantissa = fraction | 0x800000u;
    var shift = exponent - 1u;
    if (exponent == 0u) {
        mantissa = fraction;
        shift = 0u;
    }
    var magnitude: Big;
    magnitude[0] = mantissa;
    magnitude = big_shl(magnitude, shift);
    if ((bits >> 31u) == 1u) {
        return big_neg(magnitude);
    }
    return magnitude;
}

fn big_is_zero(a: Big) -> bool {
    var zero = true;
    for (var i = 0u; i < LIMBS; i += 1u) {
        zero = zero && a[i] == 0u;
    }
    return zero;
}

fn big_is_negative(a: Big) -> bool {
    return (a[LIMBS - 1u] >> 31u) == 1u;
}

fn big_add(a: Big, b: Big) -> Big {
    var out: Big;
    var carry = 0u;
    for (var i = 0u; i < LIMBS; i += 1u) {
        let sum = a[i] + b[i];
        let total = sum + carry;
        carry = select(0u, 1u, sum < a[i]) + select(0u, 1u, total < sum);
        out[i] = total;
    }
    return out;
}

fn big_neg(a: Big) -> Big {
    var out: Big;
    var carry = 1u;
    for (var i = 0u; i < LIMBS; i += 1u) {
        let total = ~a[i] + carry;
        carry = select(0u, 1u, total < carry);
        out[i] = total;
    }
    return out;
}

fn big_sub(a: Big, b: Big) -> Big {
    return big_add(a, big_neg(b));
}

// a < b, signed.
fn big_lt(a: Big, b: Big) -> bool {
    let negative_a = big_is_negative(a);
    if (negative_a != big_is_negative(b)) {
        return negative_a;
    }
    for (var k = 0u; k < LIMBS; k += 1u) {
        let i = LIMBS - 1u - k;
        if (a[i] != b[i]) {
            return a[i] < b[i];
        }
    }
    return false;
}

// The product, signed; the contract's products fit (below 2^427).
fn big_mul(a: Big, b: Big) -> Big {
    let negative = big_is_negative(a) != big_is_negative(b);
    var x = a;
    if (big_is_negative(a)) {
        x = big_neg(a);
    }
    var y = b;
    if (big_is_negative(b)) {
        y = big_neg(b);
    }
    var out: Big;
    for (var i = 0u; i < LIMBS; i += 1u) {
        var carry = 0u;
        for (var j = 0u; i + j < LIMBS; j += 1u) {
            let product = mul_wide(x[i], y[j]);
            let sum = out[i + j] + product.x;
            let total = sum + carry;
            // The exact high word of out + product + carry, below 2^32.
            carry = product.y + select(0u, 1u, sum < product.x) + select(0u, 1u, total < sum);
            out[i + j] = total;
        }
    }
    if (negative) {
        return big_neg(out);
    }
    return out;
}

// a * 2^shift, for a value (of either sign) whose product stays within a Big.
fn big_shl(a: Big, shift: u32) -> Big {
    let words = shift / 32u;
    let bits = shift % 32u;
    var out: Big;
    for (var i = words; i < LIMBS; i += 1u) {
        var below = 0u;
        if (bits > 0u && i > words) {
            below = a[i - words - 1u] >> (32u - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    return out;
}

// Bits up to the highest set one, for a non-negative value (0 for zero).
fn big_bit_length(a: Big) -> u32 {
    for (var k = 0u; k < LIMBS; k += 1u) {
        let i = LIMBS - 1u - k;
        if (a[i] != 0u) {
            return 32u * i + 32u - countLeadingZeros(a[i]);
        }
    }
    return 0u;
}

// num / den rounded to the nearest f32, ties to even, for 0 <= num <= den, den > 0.
fn ratio_to_f32(num: Big, den: Big) -> f32 {
    if (big_is_zero(num)) {
        return 0.0;
    }
    let num_bits = big_bit_length(num);
    let den_bits = big_bit_length(den);
    var rem = big_shl(num, den_bits - min(num_bits, den_bits));
    var e = i32(num_bits) - i32(den_bits);
    if (big_lt(rem, den)) {
        rem = big_shl(rem, 1u);
        e -= 1;
    }
    let kept = min(e + 150, 24);
    if (kept < 0) {
        return 0.0;
    }
    var quotient = 0u;
    for (var k = 0; k < kept; k += 1) {
        quotient = quotient << 1u;
        if (!big_lt(rem, den)) {
            rem = big_sub(rem, den);
            quotient = quotient | 1u;
        }
        rem = big_shl(rem, 1u);
    }
    let round_bit = !big_lt(rem, den);
    if (round_bit) {
        rem = big_sub(rem, den);
    }
    let sticky = !big_is_zero(rem);
    if (round_bit && (sticky || (quotient & 1u) == 1u)) {
        quotient += 1u;
    }
    var bits = 0u;
    if (kept == 24) {
        bits = u32(e + 126) << 23u;
    }
    return bitcast<f32>(bits + quotient);
}

struct BigPoint {
    x: Big,
    y: Big,
}

fn difference(a: BigPoint, b: BigPoint) -> BigPoint {
    return BigPoint(big_sub(a.x, b.x), big_sub(a.y, b.y));
}


// |a|.
fn big_abs(a: Big) -> Big {
    if (big_is_negative(a)) {
        return big_neg(a);
    }
    return a;
}

// a * b in full, for non-negative a and b.
fn double_mul(a: Big, b: Big) -> Double {
    var out: Double;
    for (var i = 0u; i < LIMBS; i += 1u) {
        var carry = 0u;
        for (var j = 0u; j < LIMBS; j += 1u) {
            let product = mul_wide(a[i], b[j]);
            let sum = out[i + j] + product.x;
            let total = sum + carry;
            carry = product.y + select(0u, 1u, sum < product.x) + select(0u, 1u, total < sum);
            out[i + j] = total;
        }
        out[i + LIMBS] = carry;
    }
    return out;
}

fn double_add(a: Double, b: Double) -> Double {
    var out: Double;
    var carry = 0u;
    for (var i = 0u; i < DOUBLE; i += 1u) {
        let sum = a[i] + b[i];
        let total = sum + carry;
        carry = select(0u, 1u, sum < a[i]) + select(0u, 1u, total < sum);
        out[i] = total;
    }
    return out;
}

// a < b, unsigned.
fn double_lt(a: Double, b: Double) -> bool {
    for (var k = 0u; k < DOUBLE; k += 1u) {
        let i = DOUBLE - 1u - k;
        if (a[i] != b[i]) {
            return a[i] < b[i];
        }
    }
    return false;
}

// The sign of a - b, unsigned: -1, 0 or 1.
fn double_compare(a: Double, b: Double) -> i32 {
    if (double_lt(a, b)) {
        return -1;
    }
    if (double_lt(b, a)) {
        return 1;
    }
    return 0;
}

// a, sign-extended: a Double in two's complement.
fn double_from_big(a: Big) -> Double {
    var out: Double;
    var fill = 0u;
    if (big_is_negative(a)) {
        fill = 0xffffffffu;
    }
    for (var i = 0u; i < DOUBLE; i += 1u) {
        out[i] = fill;
        if (i < LIMBS) {
            out[i] = a[i];
        }
    }
    return out;
}

// a * m, for a of either sign in two's complement, whose product stays within a Double.
fn double_mul_small(a: Double, m: u32) -> Double {
    var out: Double;
    var carry = 0u;
    for (var i = 0u; i < DOUBLE; i += 1u) {
        let product = mul_wide(a[i], m);
        let total = product.x + carry;
        carry = product.y + select(0u, 1u, total < product.x);
        out[i] = total;
    }
    return out;
}

// The sign of a in two's complement: -1, 0 or 1.
fn double_sign(a: Double) -> i32 {
    if ((a[DOUBLE - 1u] >> 31u) == 1u) {
        return -1;
    }
    var zero = true;
    for (var i = 0u; i < DOUBLE; i += 1u) {
        zero = zero && a[i] == 0u;
    }
    if (zero) {
        return 0;
    }
    return 1;
}

// a * 2^shift, for a value (of either sign, in two's complement) that stays within a Double.
fn double_shl(a: Double, shift: u32) -> Double {
    let words = shift / 32u;
    let bits = shift % 32u;
    var out: Double;
    for (var i = words; i < DOUBLE; i += 1u) {
        var below = 0u;
        if (bits > 0u && i > words) {
            below = a[i - words - 1u] >> (32u - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    return out;
}
