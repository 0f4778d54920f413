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
override NARROW_PROBE_SHIFT: u32;
// circle_verdict's bound and range (src/cpu/segment_circle/verdict.rs, `bounds`, derives them).
override VERDICT_RELATIVE: f32;
override VERDICT_FLOOR: f32;
override VERDICT_SMALLEST_BITS: u32;
override VERDICT_LARGEST_BITS: u32;

// circle_verdict's certain answers (its third is UNCERTAIN): values private to the kernel, like
// UNCERTAIN, never exchanged with the host.
const CIRCLE_APART: i32 = 0;
const CIRCLE_MEETS: i32 = 1;

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
// even: the search over the f32 values of [0, 1], each probe's side from the wide integers.
fn root_to_f32(coefficients: array<Double, 3>, upper: bool, guess: f32) -> f32 {
    var search = search_from(guess);
    for (var s = 0u; s < SEARCH_STEPS; s += 1u) {
        search = search_phase(search);
        let probe = probe_of(search);
        let side = root_side(coefficients, probe.m, probe.k, upper);
        if (search.phase == PHASE_ROUND) {
            return rounded_root(search, side);
        }
        search = search_after(search, side > 0);
    }
    // Not reached: SEARCH_STEPS covers the longest search.
    return bitcast<f32>(search.lo);
}

// A root's search: the root x lies in [0, 1], and lo <= x < hi holds throughout for the f32
// values with bits lo and hi. It probes from the estimate outward with doubling steps until x
// is bracketed, halves the bracket to adjacent values, then rounds by the midpoint's side.
struct RootSearch {
    lo: u32,
    hi: u32,
    probe: u32,
    phase: u32,
    step: u32,
}

// A probe's value, m * 2^-k.
struct Probe {
    m: u32,
    k: u32,
}

fn search_from(guess: f32) -> RootSearch {
    var probe = bitcast<u32>(guess);
    if (probe > ONE_BITS) {
        // Negative, above 1, or not a number.
        probe = HALF_BITS;
    }
    return RootSearch(0u, ONE_BITS + 1u, probe, PHASE_GUESS, 1u);
}

// The search with its phase moved on where the bracket says so, and its next probe placed.
fn search_phase(search: RootSearch) -> RootSearch {
    var next = search;
    if ((next.phase == PHASE_UP || next.phase == PHASE_DOWN) && next.step >= next.hi - next.lo) {
        next.phase = PHASE_BISECT;
    }
    if (next.phase == PHASE_BISECT && next.hi - next.lo == 1u) {
        next.phase = PHASE_ROUND;
    }
    if (next.phase == PHASE_UP) {
        next.probe = next.lo + next.step;
    }
    if (next.phase == PHASE_DOWN) {
        next.probe = next.hi - next.step;
    }
    if (next.phase == PHASE_BISECT) {
        next.probe = next.lo + (next.hi - next.lo) / 2u;
    }
    if (next.phase == PHASE_ROUND) {
        next.probe = next.lo;
    }
    return next;
}

// The probe's value; in the last phase, the midpoint of lo and the next f32.
fn probe_of(search: RootSearch) -> Probe {
    let exponent = search.probe >> 23u;
    var m = (search.probe & 0x7fffffu) | 0x800000u;
    var k = 150u - exponent;
    if (exponent == 0u) {
        m = search.probe & 0x7fffffu;
        k = 149u;
    }
    if (search.phase == PHASE_ROUND) {
        m = 2u * m + 1u;
        k += 1u;
    }
    return Probe(m, k);
}

// The search after its probe fell above the root or not.
fn search_after(search: RootSearch, above: bool) -> RootSearch {
    var next = search;
    if (next.phase == PHASE_GUESS) {
        if (above) {
            next.hi = next.probe;
            next.phase = PHASE_DOWN;
        } else {
            next.lo = next.probe;
            next.phase = PHASE_UP;
        }
    } else if (next.phase == PHASE_UP) {
        if (above) {
            next.hi = next.probe;
            next.phase = PHASE_BISECT;
        } else {
            next.lo = next.probe;
            next.step *= 2u;
        }
    } else if (next.phase == PHASE_DOWN) {
        if (above) {
            next.hi = next.probe;
            next.step *= 2u;
        } else {
            next.lo = next.probe;
            next.phase = PHASE_BISECT;
        }
    } else if (above) {
        next.hi = next.probe;
    } else {
        next.lo = next.probe;
    }
    return next;
}

// The rounded root, from the side of the midpoint of lo and the next f32 (the last probe).
fn rounded_root(search: RootSearch, side: i32) -> f32 {
    // Bits of adjacent f32 values differ by one, and the even one is the even bits.
    if (side < 0 || (side == 0 && search.lo % 2u == 1u)) {
        return bitcast<f32>(search.lo + 1u);
    }
    return bitcast<f32>(search.lo);
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
    return side_of(q, slope, upper);
}

// The side of the root from the signs of q and q' at the probe. The leaving root: inside
// (q < 0) is below it, and so is outside before the vertex. The entering one: inside is above
// it, and so is outside after the vertex.
fn side_of(q: i32, slope: i32, upper: bool) -> i32 {
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

// circle_meeting on the narrow integers (shaders/exact.wgsl), for a pair whose seven values
// span at most NARROW_SPAN binary orders and whose roots' search probes no deeper than
// 2^-NARROW_PROBE_SHIFT; fits is false for the others, which take the wide integers. The same
// steps and the same search, so the same kind and t. CPU mirror:
// src/cpu/segment_circle/narrow.rs.
struct NarrowCircle {
    fits: bool,
    contact: CircleContact,
}

// A root from the narrow integers, when fits.
struct NarrowRoot {
    fits: bool,
    t: f32,
}

fn narrow_meeting(query: Segment, circle: Circle, times: bool) -> NarrowCircle {
    let miss = NarrowCircle(true, CircleContact(0.0, 0.0, KIND_MISS));
    let values = scaled_values(array<f32, 8>(query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r, 0.0));
    if (!values.fits) { return NarrowCircle(false, CircleContact(0.0, 0.0, KIND_MISS)); } // backend: the CPU's `?`
    let v = values.scaled;
    // Each scaled value is below 2^62: differences fit 64 bits, and q(0), q(1), dd and fd 128
    // (two squares below 2^126 each, less a square).
    let f = narrow_difference(v[0], v[1], v[4], v[5]);
    let g = narrow_difference(v[2], v[3], v[4], v[5]);
    let d = narrow_difference(v[2], v[3], v[0], v[1]);
    let r2 = narrow_mul(v[6], v[6]);
    let start = narrow_sub(narrow_dot(f, f), r2);
    let end = narrow_sub(narrow_dot(g, g), r2);
    let dd = narrow_dot(d, d);
    let fd = narrow_dot(f, d);
    let start_in = narrow_is_negative(start) || narrow_is_zero(start);
    let end_in = narrow_is_negative(end) || narrow_is_zero(end);
    if (start_in && end_in) {
        return NarrowCircle(true, CircleContact(0.0, 1.0, KIND_INSIDE));
    }
    if (narrow_is_zero(dd)) {
        // A point outside the disk.
        return miss;
    }
    var kind = KIND_CROSS;
    if (start_in) {
        kind = KIND_EXIT;
    } else if (end_in) {
        kind = KIND_ENTER;
    } else {
        // Both ends outside: q is least at t = -fd / dd, strictly between them, and <= 0
        // there: fd^2 >= dd * q(0), in full.
        let ahead = narrow_neg(fd);
        if (!narrow_is_negative(fd) || !narrow_lt(ahead, dd)) {
            return miss;
        }
        let discriminant = wide256_compare(narrow_mul_full(ahead, ahead), narrow_mul_full(dd, start));
        if (discriminant < 0) {
            return miss;
        }
        if (discriminant == 0) {
            var t = 0.0;
            if (times) {
                t = narrow_ratio_to_f32(ahead, dd);
            }
            return NarrowCircle(true, CircleContact(t, t, KIND_TANGENT));
        }
    }
    if (!times) {
        return NarrowCircle(true, CircleContact(0.0, 0.0, kind));
    }
    let guesses = root_guesses(query, circle);
    let coefficients = array<Wide256, 3>(wide256_of(dd), wide256_of(fd), wide256_of(start));
    var t = array<f32, 2>(0.0, 1.0);
    if (!start_in) {
        let root = narrow_root_to_f32(coefficients, false, guesses[0]);
        if (!root.fits) { return NarrowCircle(false, CircleContact(0.0, 0.0, KIND_MISS)); } // backend: the CPU's `?`
        t[0] = root.t;
    }
    if (!end_in) {
        // A start on the circle heading out leaves at t = 0 exactly (a root the search would
        // probe down to the subnormals for).
        if (narrow_is_zero(start) && !narrow_is_negative(fd)) {
            t[1] = 0.0;
        } else {
            let root = narrow_root_to_f32(coefficients, true, guesses[1]);
            if (!root.fits) { return NarrowCircle(false, CircleContact(0.0, 0.0, KIND_MISS)); } // backend: the CPU's `?`
            t[1] = root.t;
        }
    }
    return NarrowCircle(true, CircleContact(t[0], t[1], kind));
}

// root_to_f32's search with each probe's side from narrow_root_side; fits is false at a probe
// deeper than 2^-NARROW_PROBE_SHIFT.
fn narrow_root_to_f32(coefficients: array<Wide256, 3>, upper: bool, guess: f32) -> NarrowRoot {
    var search = search_from(guess);
    for (var s = 0u; s < SEARCH_STEPS; s += 1u) {
        search = search_phase(search);
        let probe = probe_of(search);
        if (probe.k > NARROW_PROBE_SHIFT) {
            return NarrowRoot(false, 0.0);
        }
        let side = narrow_root_side(coefficients, probe.m, probe.k, upper);
        if (search.phase == PHASE_ROUND) {
            return NarrowRoot(true, rounded_root(search, side));
        }
        search = search_after(search, side > 0);
    }
    return NarrowRoot(true, bitcast<f32>(search.lo));
}

// root_side on 256-bit coefficients, for k <= NARROW_PROBE_SHIFT: with |C| below 2^127,
// C * 2^2k stays below 2^253, and the sum of the probe's three terms within +-2^255.
fn narrow_root_side(coefficients: array<Wide256, 3>, m: u32, k: u32, upper: bool) -> i32 {
    let am = wide256_mul(coefficients[0], m);
    let bm = wide256_mul(coefficients[1], m);
    let value = wide256_add(
        wide256_add(wide256_mul(am, m), wide256_shl(bm, k + 1u)),
        wide256_shl(coefficients[2], 2u * k),
    );
    let q = wide256_sign(value);
    let slope = wide256_sign(wide256_add(am, wide256_shl(coefficients[1], k)));
    return side_of(q, slope, upper);
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

// The pair's hit certified in f32, on any arithmetic WGSL allows (docs/semantics.md, "Segment x
// circle"): CIRCLE_MEETS when an end is certainly in the disk, or both are certainly outside
// with the line's nearest point to the center certainly between them and certainly inside;
// CIRCLE_APART when both ends are certainly outside and the segment is a point, or that nearest
// point certainly lies at or past an end, or the line certainly misses the disk; UNCERTAIN
// otherwise (an end on or near the circle, a tangent, a value outside the filter's range), left
// to the integers. CPU mirror: src/cpu/segment_circle/verdict.rs, where the bounds are derived.

// Whether v is 0 or within the filter's range (compared as bits: no float comparison).
fn in_verdict_range(v: f32) -> bool {
    let magnitude = bitcast<u32>(v) & 0x7fffffffu;
    return magnitude == 0u || (magnitude >= VERDICT_SMALLEST_BITS && magnitude <= VERDICT_LARGEST_BITS);
}

// The sign of value, computed from terms whose magnitudes sum to size, when certain: past
// VERDICT_RELATIVE * size + VERDICT_FLOOR; else UNCERTAIN.
fn verdict_sign(value: f32, size: f32) -> i32 {
    let bound = f_add(f_mul(VERDICT_RELATIVE, size), VERDICT_FLOOR);
    if (value > bound) {
        return 1;
    }
    if (value < -bound) {
        return -1;
    }
    return UNCERTAIN;
}

// The sign of x^2 + y^2 - rr: 1 for a point certainly outside the disk, -1 certainly in it.
fn outside_sign(x: f32, y: f32, rr: f32) -> i32 {
    let squares = f_det(x, x, -y, y);
    return verdict_sign(f_sub(squares, rr), f_add(f_add(f_mul(x, x), f_mul(y, y)), rr));
}

// The sign of ax * bx + ay * by (f . d, or g . d).
fn dot_sign(ax: f32, ay: f32, bx: f32, by: f32) -> i32 {
    let size = f_add(abs(f_mul(ax, bx)), abs(f_mul(ay, by)));
    return verdict_sign(f_det(ax, bx, -ay, by), size);
}

// The sign of R^2 |d|^2 - (f x d)^2, which is (f . d)^2 - |d|^2 q(0): whether the segment's line
// meets the disk.
fn discriminant_sign(fx: f32, fy: f32, dx: f32, dy: f32, rr: f32) -> i32 {
    let cross = f_det(fx, dy, fy, dx);
    let size = f_add(abs(f_mul(fx, dy)), abs(f_mul(fy, dx)));
    let dd = f_det(dx, dx, -dy, dy);
    let reach = f_mul(rr, dd);
    return verdict_sign(f_det(rr, dd, cross, cross), f_add(reach, f_mul(size, size)));
}

fn circle_verdict(query: Segment, circle: Circle) -> i32 {
    let in_range = in_verdict_range(query.x0) && in_verdict_range(query.y0) && in_verdict_range(query.x1)
        && in_verdict_range(query.y1) && in_verdict_range(circle.cx) && in_verdict_range(circle.cy)
        && in_verdict_range(circle.r);
    if (!in_range) {
        return UNCERTAIN;
    }
    let fx = f_sub(query.x0, circle.cx);
    let fy = f_sub(query.y0, circle.cy);
    let gx = f_sub(query.x1, circle.cx);
    let gy = f_sub(query.y1, circle.cy);
    let dx = f_sub(query.x1, query.x0);
    let dy = f_sub(query.y1, query.y0);
    let rr = f_mul(circle.r, circle.r);
    let start = outside_sign(fx, fy, rr);
    let end = outside_sign(gx, gy, rr);
    if (start == -1 || end == -1) {
        return CIRCLE_MEETS;
    }
    if (start != 1 || end != 1) {
        return UNCERTAIN;
    }
    if (order_key(query.x0) == order_key(query.x1) && order_key(query.y0) == order_key(query.y1)) {
        // A point outside the disk.
        return CIRCLE_APART;
    }
    // Both ends outside: the segment meets the disk only if the nearest point of its line lies
    // strictly between them (f . d < 0 < g . d) and within R.
    let ahead = dot_sign(fx, fy, dx, dy);
    let behind = dot_sign(gx, gy, dx, dy);
    if (ahead == 1 || behind == -1) {
        return CIRCLE_APART;
    }
    let discriminant = discriminant_sign(fx, fy, dx, dy, rr);
    if (discriminant == -1) {
        return CIRCLE_APART;
    }
    if (ahead == -1 && behind == 1 && discriminant == 1) {
        return CIRCLE_MEETS;
    }
    return UNCERTAIN;
}

// The hooks of shaders/shape_passes.wgsl, for circle j of the tile.

// The disk lies in its box: a segment that misses the box, or whose line does, misses the disk.
fn certain_miss(query: Segment, j: u32) -> bool {
    let b = bounds[j];
    return boxes_apart(query, b) || line_misses_box(query, b);
}

// On the grid's candidates, what circle_verdict certifies too: on lavapipe its misses took
// bullets' hits through the grid from 30.6 to 25.6 ms, where over a dense pass's every pair it
// cost more than it saved (docs/broad_phase.md).
fn grid_verdict(query: Segment, j: u32) -> i32 {
    let b = bounds[j];
    if (boxes_apart(query, b)) {
        return SHAPE_APART;
    }
    let verdict = circle_verdict(query, circles[j]);
    if (verdict == CIRCLE_APART) {
        return SHAPE_APART;
    }
    if (verdict == CIRCLE_MEETS) {
        return SHAPE_MEETS;
    }
    if (line_misses_box(query, b)) {
        return SHAPE_APART;
    }
    return UNCERTAIN;
}

fn shape_miss() -> Contact {
    return CircleContact(0.0, 0.0, KIND_MISS);
}

// The narrow integers where they reach the pair, the wide ones beyond (the CPU batch path's
// order, after its float filters).
fn shape_exact(query: Segment, j: u32) -> Contact {
    let circle = circles[j];
    let narrow = narrow_meeting(query, circle, true);
    if (narrow.fits) {
        return narrow.contact;
    }
    return segment_circle(query, circle);
}

// The hit alone: one circle_verdict certifies needs no integers.
fn shape_hit(query: Segment, j: u32) -> bool {
    let circle = circles[j];
    let verdict = circle_verdict(query, circle);
    if (verdict != UNCERTAIN) {
        return verdict == CIRCLE_MEETS;
    }
    let narrow = narrow_meeting(query, circle, false);
    if (narrow.fits) {
        return narrow.contact.kind != KIND_MISS;
    }
    return circle_meeting(query, circle, false).kind != KIND_MISS;
}
