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

// The narrow integers: the same exact answers, for the pairs whose values span few binary
// orders, on 64-bit values (vec2<u32>, the rects' words) and 128-bit products (vec4<u32>, low
// word first, two's complement). CPU mirror: src/cpu/narrow.rs (i64 and i128), same names.

// Binary orders a pair's nonzero values may span for the narrow integers: each scaled value is
// below 2^62, a difference of two below 2^63, a product of two differences below 2^126, and a
// sum or difference of two products below 2^127. The host supplies it (narrow::SPAN).
override NARROW_SPAN: i32;

// Every value of a pair on the scale of its least significant bit: values[k] = scaled[k] *
// 2^lowest for the largest lowest that does it. fits is false when the values span more than
// NARROW_SPAN binary orders (scaled then holds nothing).
struct NarrowValues {
    fits: bool,
    scaled: array<vec2<u32>, 8>,
}

// The pair's values (up to 8; zeros fill the rest) as NarrowValues.
fn scaled_values(values: array<f32, 8>) -> NarrowValues {
    var mantissas: array<u32, 8>;
    var shifts: array<i32, 8>;
    var negative: array<bool, 8>;
    var low = ZERO_EXPONENT;
    var high = -ZERO_EXPONENT;
    for (var k = 0u; k < 8u; k += 1u) {
        let bits = bitcast<u32>(values[k]);
        let field = (bits >> 23u) & 0xffu;
        let fraction = bits & 0x7fffffu;
        var m = fraction | 0x800000u;
        var e = i32(field) - 150;
        if (field == 0u) {
            m = fraction;
            e = -149;
        }
        if (m == 0u) {
            continue;
        }
        // The odd significand: the least exponent that holds the value.
        let zeros = countTrailingZeros(m);
        m = m >> zeros;
        e += i32(zeros);
        low = min(low, e);
        // m < 2^(bit length): the value is below 2^(e + bit length).
        high = max(high, e + i32(32u - countLeadingZeros(m)));
        mantissas[k] = m;
        shifts[k] = e;
        negative[k] = (bits >> 31u) == 1u;
    }
    var out: NarrowValues;
    // All zeros: low and high as set above, and every scaled value 0.
    if (high - low > NARROW_SPAN) {
        return out;
    }
    out.fits = true;
    for (var k = 0u; k < 8u; k += 1u) {
        if (mantissas[k] != 0u) {
            let magnitude = wide_shl(wide(mantissas[k]), u32(shifts[k] - low));
            out.scaled[k] = select(magnitude, wide_neg(magnitude), negative[k]);
        }
    }
    return out;
}

// A difference of two points' narrow values: each coordinate below 2^63.
struct NarrowPoint {
    x: vec2<u32>,
    y: vec2<u32>,
}

fn narrow_difference(ax: vec2<u32>, ay: vec2<u32>, bx: vec2<u32>, by: vec2<u32>) -> NarrowPoint {
    return NarrowPoint(wide_sub(ax, bx), wide_sub(ay, by));
}

fn narrow_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    var out: vec4<u32>;
    var carry = 0u;
    for (var i = 0u; i < 4u; i += 1u) {
        let sum = a[i] + b[i];
        let total = sum + carry;
        carry = select(0u, 1u, sum < a[i]) + select(0u, 1u, total < sum);
        out[i] = total;
    }
    return out;
}

fn narrow_neg(a: vec4<u32>) -> vec4<u32> {
    var out: vec4<u32>;
    var carry = 1u;
    for (var i = 0u; i < 4u; i += 1u) {
        let total = ~a[i] + carry;
        carry = select(0u, 1u, total < carry);
        out[i] = total;
    }
    return out;
}

fn narrow_sub(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return narrow_add(a, narrow_neg(b));
}

fn narrow_is_zero(a: vec4<u32>) -> bool {
    return all(a == vec4<u32>(0u));
}

fn narrow_is_negative(a: vec4<u32>) -> bool {
    return (a.w >> 31u) == 1u;
}

// a < b, unsigned.
fn narrow_below(a: vec4<u32>, b: vec4<u32>) -> bool {
    for (var k = 0u; k < 4u; k += 1u) {
        let i = 3u - k;
        if (a[i] != b[i]) {
            return a[i] < b[i];
        }
    }
    return false;
}

// a < b, signed.
fn narrow_lt(a: vec4<u32>, b: vec4<u32>) -> bool {
    let negative_a = narrow_is_negative(a);
    if (negative_a != narrow_is_negative(b)) {
        return negative_a;
    }
    return narrow_below(a, b);
}

// a * b in 128 bits, signed, for |a| and |b| below 2^63.
fn narrow_mul(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
    let x = select(a, wide_neg(a), wide_is_negative(a));
    let y = select(b, wide_neg(b), wide_is_negative(b));
    let low = mul_wide(x.x, y.x);
    let cross_xy = mul_wide(x.x, y.y);
    let cross_yx = mul_wide(x.y, y.x);
    let high = mul_wide(x.y, y.y);
    // The middle words with their carries: each sum below 2^32 * 4.
    let word1 = low.y + cross_xy.x;
    let carry1 = select(0u, 1u, word1 < low.y);
    let word1_total = word1 + cross_yx.x;
    let carry1_total = carry1 + select(0u, 1u, word1_total < word1);
    let word2 = cross_xy.y + cross_yx.y;
    let carry2 = select(0u, 1u, word2 < cross_xy.y);
    let word2_high = word2 + high.x;
    let carry2_high = carry2 + select(0u, 1u, word2_high < word2);
    let word2_total = word2_high + carry1_total;
    let carry2_total = carry2_high + select(0u, 1u, word2_total < word2_high);
    let magnitude = vec4<u32>(low.x, word1_total, word2_total, high.y + carry2_total);
    return select(magnitude, narrow_neg(magnitude), wide_is_negative(a) != wide_is_negative(b));
}

// l x r.
fn narrow_cross(l: NarrowPoint, r: NarrowPoint) -> vec4<u32> {
    return narrow_sub(narrow_mul(l.x, r.y), narrow_mul(l.y, r.x));
}

// l . r.
fn narrow_dot(l: NarrowPoint, r: NarrowPoint) -> vec4<u32> {
    return narrow_add(narrow_mul(l.x, r.x), narrow_mul(l.y, r.y));
}

// a * 2^shift, for shift < 128, dropping what passes 2^128.
fn narrow_shl(a: vec4<u32>, shift: u32) -> vec4<u32> {
    let words = shift / 32u;
    let bits = shift % 32u;
    var out: vec4<u32>;
    for (var i = words; i < 4u; i += 1u) {
        var below = 0u;
        if (bits > 0u && i > words) {
            below = a[i - words - 1u] >> (32u - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    return out;
}

// Bits up to the highest set one, unsigned (0 for zero).
fn narrow_bit_length(a: vec4<u32>) -> u32 {
    for (var k = 0u; k < 4u; k += 1u) {
        let i = 3u - k;
        if (a[i] != 0u) {
            return 32u * i + 32u - countLeadingZeros(a[i]);
        }
    }
    return 0u;
}

// num / den rounded to the nearest f32, ties to even, for 0 <= num <= den, 0 < den < 2^127:
// ratio_to_f32's steps on 128 bits (the remainder stays below 2^128, compared unsigned).
fn narrow_ratio_to_f32(num: vec4<u32>, den: vec4<u32>) -> f32 {
    if (narrow_is_zero(num)) {
        return 0.0;
    }
    let num_bits = narrow_bit_length(num);
    let den_bits = narrow_bit_length(den);
    var rem = narrow_shl(num, den_bits - min(num_bits, den_bits));
    var e = i32(num_bits) - i32(den_bits);
    if (narrow_below(rem, den)) {
        rem = narrow_shl(rem, 1u);
        e -= 1;
    }
    let kept = min(e + 150, 24);
    if (kept < 0) {
        return 0.0;
    }
    var quotient = 0u;
    for (var k = 0; k < kept; k += 1) {
        quotient = quotient << 1u;
        if (!narrow_below(rem, den)) {
            rem = narrow_sub(rem, den);
            quotient = quotient | 1u;
        }
        rem = narrow_shl(rem, 1u);
    }
    let round_bit = !narrow_below(rem, den);
    if (round_bit) {
        rem = narrow_sub(rem, den);
    }
    if (round_bit && (!narrow_is_zero(rem) || (quotient & 1u) == 1u)) {
        quotient += 1u;
    }
    var bits = 0u;
    if (kept == 24) {
        bits = u32(e + 126) << 23u;
    }
    return bitcast<f32>(bits + quotient);
}

// A 256-bit integer, low word first: unsigned, or two's complement where a function says so
// (the circles' probes; CPU mirror: narrow::Wide256).
alias Wide256 = array<u32, 8>;

// a * b in full, for non-negative a and b.
fn narrow_mul_full(a: vec4<u32>, b: vec4<u32>) -> Wide256 {
    var out: Wide256;
    for (var i = 0u; i < 4u; i += 1u) {
        var carry = 0u;
        for (var j = 0u; j < 4u; j += 1u) {
            let product = mul_wide(a[i], b[j]);
            let sum = out[i + j] + product.x;
            let total = sum + carry;
            carry = product.y + select(0u, 1u, sum < product.x) + select(0u, 1u, total < sum);
            out[i + j] = total;
        }
        out[i + 4u] = carry;
    }
    return out;
}

// The sign of a - b, unsigned: -1, 0 or 1.
fn wide256_compare(a: Wide256, b: Wide256) -> i32 {
    for (var k = 0u; k < 8u; k += 1u) {
        let i = 7u - k;
        if (a[i] != b[i]) {
            return select(1, -1, a[i] < b[i]);
        }
    }
    return 0;
}

// a, sign-extended: a Wide256 in two's complement.
fn wide256_of(a: vec4<u32>) -> Wide256 {
    let fill = select(0u, 0xffffffffu, narrow_is_negative(a));
    return Wide256(a.x, a.y, a.z, a.w, fill, fill, fill, fill);
}

// a + b, two's complement, modulo 2^256.
fn wide256_add(a: Wide256, b: Wide256) -> Wide256 {
    var out: Wide256;
    var carry = 0u;
    for (var i = 0u; i < 8u; i += 1u) {
        let sum = a[i] + b[i];
        let total = sum + carry;
        carry = select(0u, 1u, sum < a[i]) + select(0u, 1u, total < sum);
        out[i] = total;
    }
    return out;
}

// a * 2^shift, two's complement, for shift < 256, modulo 2^256.
fn wide256_shl(a: Wide256, shift: u32) -> Wide256 {
    let words = shift / 32u;
    let bits = shift % 32u;
    var out: Wide256;
    for (var i = words; i < 8u; i += 1u) {
        var below = 0u;
        if (bits > 0u && i > words) {
            below = a[i - words - 1u] >> (32u - bits);
        }
        out[i] = (a[i - words] << bits) | below;
    }
    return out;
}

// a * m, two's complement, modulo 2^256.
fn wide256_mul(a: Wide256, m: u32) -> Wide256 {
    var out: Wide256;
    var carry = 0u;
    for (var i = 0u; i < 8u; i += 1u) {
        let product = mul_wide(a[i], m);
        let total = product.x + carry;
        carry = product.y + select(0u, 1u, total < product.x);
        out[i] = total;
    }
    return out;
}

// The sign of a in two's complement: -1, 0 or 1.
fn wide256_sign(a: Wide256) -> i32 {
    if ((a[7] >> 31u) == 1u) {
        return -1;
    }
    var zero = true;
    for (var i = 0u; i < 8u; i += 1u) {
        zero = zero && a[i] == 0u;
    }
    if (zero) {
        return 0;
    }
    return 1;
}
