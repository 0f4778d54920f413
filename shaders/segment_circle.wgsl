// Segment x circle: where a query segment meets a closed disk, decided exactly, t correctly
// rounded, on integers alone (docs/semantics.md, "Segment x circle"), and the hooks through
// which shaders/shape_passes.wgsl runs it over queries x circles.
//
// Compiled after shaders/segment_rect.wgsl (its Segment) and shaders/exact.wgsl (Big, Double),
// before shaders/shape_passes.wgsl (the tile: shape_params, queries, bounds). CPU mirror:
// src/cpu/segment_circle/mod.rs, same function names, same branches.

override KIND_MISS: u32;
override KIND_INSIDE: u32;
override KIND_ENTER: u32;
override KIND_EXIT: u32;
override KIND_CROSS: u32;
override KIND_TANGENT: u32;
override ONE_BITS: u32;
override HALF_BITS: u32;
override SEARCH_STEPS: u32;

// The search's phases.
const PHASE_GUESS: u32 = 0u;
const PHASE_UP: u32 = 1u;
const PHASE_DOWN: u32 = 2u;
const PHASE_BISECT: u32 = 3u;
const PHASE_ROUND: u32 = 4u;

struct Circle {
    cx: f32,
    cy: f32,
    r: f32,
}

struct CircleContact {
    t_enter: f32,
    t_exit: f32,
    kind: u32,
}

// What shaders/shape_queries.wgsl reduces: this kernel's contact, and whether one hits
// (CircleContact::hit on the host).
alias Contact = CircleContact;

fn contact_hit(c: Contact) -> bool {
    return c.kind != KIND_MISS;
}

@group(0) @binding(2) var<storage, read> circles: array<Circle>;

// Every call of a Big function is inlined in full by a GPU compiler: products appear at one call
// site each, in loops over their operands (as in shaders/segment_segment.wgsl).
fn segment_circle(query: Segment, circle: Circle) -> CircleContact {
    return circle_meeting(query, circle, true);
}

// segment_circle, with its t when times holds; without them (both 0: the hit and the kind
// alone, what counts ask) the roots' search is skipped.
fn circle_meeting(query: Segment, circle: Circle, times: bool) -> CircleContact {
    let miss = CircleContact(0.0, 0.0, KIND_MISS);
    let values = array<f32, 7>(query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r);
    var exact: array<Big, 7>;
    for (var k = 0u; k < 7u; k += 1u) {
        exact[k] = big_from_f32(values[k]);
    }
    let p0 = BigPoint(exact[0], exact[1]);
    let p1 = BigPoint(exact[2], exact[3]);
    let center = BigPoint(exact[4], exact[5]);
    let radius = exact[6];
    let f = difference(p0, center);
    let g = difference(p1, center);
    let d = difference(p1, p0);
    // q(0) = f . f - R^2, q(1) = g . g - R^2, dd = d . d, fd = f . d, from nine products.
    let left = array<Big, 9>(f.x, f.y, g.x, g.y, radius, d.x, d.y, f.x, f.y);
    let right = array<Big, 9>(f.x, f.y, g.x, g.y, radius, d.x, d.y, d.x, d.y);
    var terms: array<Big, 9>;
    for (var k = 0u; k < 9u; k += 1u) {
        terms[k] = big_mul(left[k], right[k]);
    }
    let start = big_sub(big_add(terms[0], terms[1]), terms[4]);
    let end = big_sub(big_add(terms[2], terms[3]), terms[4]);
    let dd = big_add(terms[5], terms[6]);
    let fd = big_add(terms[7], terms[8]);
    // fd^2 and dd * |q(0)|, double width.
    let wide_left = array<Big, 2>(big_abs(fd), dd);
    let wide_right = array<Big, 2>(big_abs(fd), big_abs(start));
    var wides: array<Double, 2>;
    for (var k = 0u; k < 2u; k += 1u) {
        wides[k] = double_mul(wide_left[k], wide_right[k]);
    }
    let start_in = big_is_negative(start) || big_is_zero(start);
    let end_in = big_is_negative(end) || big_is_zero(end);
    if (start_in && end_in) {
        return CircleContact(0.0, 1.0, KIND_INSIDE);
    }
    if (big_is_zero(dd)) {
        // A point outside the disk.
        return miss;
    }
    var kind = KIND_CROSS;
    if (start_in) {
        kind = KIND_EXIT;
    } else if (end_in) {
        kind = KIND_ENTER;
    } else {
        // Both ends outside: q is least at t = -fd / dd, which must lie strictly between them,
        // and be <= 0 there: fd^2 >= dd * q(0).
        let ahead = big_neg(fd);
        if (!big_is_negative(fd) || !big_lt(ahead, dd)) {
            return miss;
        }
        let discriminant = double_compare(wides[0], wides[1]);
        if (discriminant < 0) {
            return miss;
        }
        if (discriminant == 0) {
            var t = 0.0;
            if (times) {
                t = ratio_to_f32(ahead, dd);
            }
            return CircleContact(t, t, KIND_TANGENT);
        }
    }
    if (!times) {
        return CircleContact(0.0, 0.0, kind);
    }
    // The roots still needed: the entering one unless the start is in, the leaving one unless
    // the end is.
    let guesses = root_guesses(query, circle);
    let coefficients = array<Double, 3>(double_from_big(dd), double_from_big(fd), double_from_big(start));
    var t = array<f32, 2>(0.0, 1.0);
    for (var k = 0u; k < 2u; k += 1u) {
        let needed = (k == 0u && !start_in) || (k == 1u && !end_in);
        if (needed) {
            t[k] = root_to_f32(coefficients, k == 1u, guesses[k]);
        }
    }
    return CircleContact(t[0], t[1], kind);
}

// Estimates of the entering and leaving t, in plain f32 arithmetic: where the search starts.
// Scaled by the largest magnitude so that no square overflows, each root from the form without
// cancellation. Any value may come out (flushed subnormals, a GPU's division); only the number of
// probes depends on it.
fn root_guesses(query: Segment, circle: Circle) -> array<f32, 2> {
    let fx0 = query.x0 - circle.cx;
    let fy0 = query.y0 - circle.cy;
    let dx0 = query.x1 - query.x0;
    let dy0 = query.y1 - query.y0;
    let scale = max(max(max(abs(fx0), abs(fy0)), max(abs(dx0), abs(dy0))), circle.r);
    let fx = fx0 / scale;
    let fy = fy0 / scale;
    let dx = dx0 / scale;
    let dy = dy0 / scale;
    let r = circle.r / scale;
    let a = dx * dx + dy * dy;
    let b = fx * dx + fy * dy;
    let c = fx * fx + fy * fy - r * r;
    let root = sqrt(max(b * b - a * c, 0.0));
    var lower = (-b - root) / a;
    var upper = (-b + root) / a;
    if (b < 0.0) {
        lower = c / (root - b);
    } else {
        upper = c / (-b - root);
    }
    if (EMULATION == EMULATE_ROUNDING) { return array<f32, 2>(farthest(lower), farthest(upper)); } // backend: tests only
    return array<f32, 2>(lower, upper);
}

// The root of q (the entering one, or the upper leaving one) rounded to the nearest f32, ties to
// even. The root x lies in [0, 1], and lo <= x < hi holds throughout for the f32 values with bits
// lo and hi.
fn root_to_f32(coefficients: array<Double, 3>, upper: bool, guess: f32) -> f32 {
    var lo = 0u;
    var hi = ONE_BITS + 1u;
    var probe = bitcast<u32>(guess);
    if (probe > ONE_BITS) {
        // Negative, above 1, or not a number.
        probe = HALF_BITS;
    }
    var phase = PHASE_GUESS;
    var step = 1u;
    for (var s = 0u; s < SEARCH_STEPS; s += 1u) {
        if ((phase == PHASE_UP || phase == PHASE_DOWN) && step >= hi - lo) {
            phase = PHASE_BISECT;
        }
        if (phase == PHASE_BISECT && hi - lo == 1u) {
            phase = PHASE_ROUND;
        }
        if (phase == PHASE_UP) {
            probe = lo + step;
        }
        if (phase == PHASE_DOWN) {
            probe = hi - step;
        }
        if (phase == PHASE_BISECT) {
            probe = lo + (hi - lo) / 2u;
        }
        if (phase == PHASE_ROUND) {
            probe = lo;
        }
        // The probe's value m * 2^-k; in the last phase, the midpoint of lo and the next f32.
        let exponent = probe >> 23u;
        var m = (probe & 0x7fffffu) | 0x800000u;
        var k = 150u - exponent;
        if (exponent == 0u) {
            m = probe & 0x7fffffu;
            k = 149u;
        }
        if (phase == PHASE_ROUND) {
            m = 2u * m + 1u;
            k += 1u;
        }
        let side = root_side(coefficients, m, k, upper);
        if (phase == PHASE_ROUND) {
            // Bits of adjacent f32 values differ by one, and the even one is the even bits.
            if (side < 0 || (side == 0 && lo % 2u == 1u)) {
                return bitcast<f32>(lo + 1u);
            }
            return bitcast<f32>(lo);
        }
        let above = side > 0;
        if (phase == PHASE_GUESS) {
            if (above) {
                hi = probe;
                phase = PHASE_DOWN;
            } else {
                lo = probe;
                phase = PHASE_UP;
            }
        } else if (phase == PHASE_UP) {
            if (above) {
                hi = probe;
                phase = PHASE_BISECT;
            } else {
                lo = probe;
                step *= 2u;
            }
        } else if (phase == PHASE_DOWN) {
            if (above) {
                hi = probe;
                step *= 2u;
            } else {
                lo = probe;
                phase = PHASE_BISECT;
            }
        } else if (above) {
            hi = probe;
        } else {
            lo = probe;
        }
    }
    // Not reached: SEARCH_STEPS covers the longest search.
    return bitcast<f32>(lo);
}

// The side of the root x that m * 2^-k lies on: -1 below, 0 at, 1 above. From the exact signs of
// q(m * 2^-k) * 2^2k = A * m^2 + 2B * m * 2^k + C * 2^2k and of q'(m * 2^-k) * 2^k / 2 = A * m + B * 2^k,
// negative before the vertex. coefficients are A, B, C.
fn root_side(coefficients: array<Double, 3>, m: u32, k: u32, upper: bool) -> i32 {
    let am = double_mul_small(coefficients[0], m);
    let bm = double_mul_small(coefficients[1], m);
    let value = double_add(
        double_add(double_mul_small(am, m), double_shl(bm, k + 1u)),
        double_shl(coefficients[2], 2u * k),
    );
    let q = double_sign(value);
    let slope = double_sign(double_add(am, double_shl(coefficients[1], k)));
    if (upper) {
        if (q < 0) {
            return -1;
        }
        if (q == 0 && slope >= 0) {
            return 0;
        }
        if (q > 0 && slope > 0) {
            return 1;
        }
        return -1;
    }
    if (q < 0) {
        return 1;
    }
    if (q == 0 && slope <= 0) {
        return 0;
    }
    if (q > 0 && slope < 0) {
        return -1;
    }
    return 1;
}

// Test-only (emulated rounding): the end of [0, 1] farthest from an estimate, where a search
// takes the most probes. The suite holds those searches to lavapipe's loop budget
// (src/cpu/segment_circle/mod.rs).
fn farthest(guess: f32) -> f32 {
    if (bitcast<u32>(guess) < HALF_BITS) {
        return 1.0;
    }
    return 0.0;
}

// The hooks of shaders/shape_passes.wgsl, for circle j of the tile.

// The disk lies in its box: a segment that misses the box, or whose line does, misses the disk.
fn certain_miss(query: Segment, j: u32) -> bool {
    let b = bounds[j];
    return boxes_apart(query, b) || line_misses_box(query, b);
}

fn shape_miss() -> Contact {
    return CircleContact(0.0, 0.0, KIND_MISS);
}

fn shape_exact(query: Segment, j: u32) -> Contact {
    return segment_circle(query, circles[j]);
}

fn shape_hit(query: Segment, j: u32) -> bool {
    return circle_meeting(query, circles[j], false).kind != KIND_MISS;
}
