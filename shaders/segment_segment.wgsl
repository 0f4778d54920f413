// Segment x segment: where a query segment meets a wall (another segment), decided exactly, t
// correctly rounded, on integers alone (docs/semantics.md, "Segment x segment"), and the hooks
// through which shaders/shape_passes.wgsl runs it over queries x walls.
//
// Compiled after shaders/segment_rect.wgsl (its Segment) and shaders/exact.wgsl (Big), before
// shaders/shape_passes.wgsl (the tile: shape_params, queries, bounds). CPU mirror:
// src/cpu/segment_segment/mod.rs, same function names, same branches.

override CONTACT_MISS: u32;
override CONTACT_CROSS: u32;
override CONTACT_TOUCH: u32;
override CONTACT_OVERLAP: u32;

// wall_verdict's certain answers (its third is UNCERTAIN): values private to the kernel, like
// UNCERTAIN, never exchanged with the host.
const WALLS_APART: i32 = 0;
const WALLS_CROSS: i32 = 1;

struct SegmentContact {
    t_enter: f32,
    t_exit: f32,
    contact: u32,
}

// The common part of a query and a wall, exactly: its contact, and its first and last t as
// ratios (a denominator above 0) before rounding. Polygons compare two edges' ratios exactly.
struct SegmentRatios {
    contact: u32,
    enter_num: Big,
    enter_den: Big,
    exit_num: Big,
    exit_den: Big,
}

// What shaders/shape_queries.wgsl reduces: this kernel's contact, and whether one hits
// (SegmentContact::hit on the host).
alias Contact = SegmentContact;

fn contact_hit(c: Contact) -> bool {
    return c.contact != CONTACT_MISS;
}

@group(0) @binding(2) var<storage, read> walls: array<Segment>;

// The pair's hit from four certified orientations (compare_crossings, whose bound holds on any
// GPU): WALLS_APART when one segment lies strictly on one side of the other's line, WALLS_CROSS
// when each segment's ends lie strictly on both sides of the other's line (a proper crossing),
// UNCERTAIN otherwise: an end on or near the other line, left to the exact integers.
fn wall_verdict(query: Segment, wall: Segment) -> i32 {
    let wall_start = compare_crossings(query, wall.x0, wall.y0, false);
    let wall_end = compare_crossings(query, wall.x1, wall.y1, false);
    let query_start = compare_crossings(wall, query.x0, query.y0, false);
    let query_end = compare_crossings(wall, query.x1, query.y1, false);
    if (same_certain_side(wall_start, wall_end) || same_certain_side(query_start, query_end)) {
        return WALLS_APART;
    }
    if (wall_start != UNCERTAIN && wall_end != UNCERTAIN && query_start != UNCERTAIN && query_end != UNCERTAIN) {
        return WALLS_CROSS;
    }
    return UNCERTAIN;
}

// Where query's ends lie certainly on both sides of wall's line (crossing_det), the time it
// meets that line is t = o0 / (o0 + o1), o0 and o1 the ends' distances from it as crossing_det
// measures them; each is within its bound of det. This is (o0's upper bound, that plus o1's
// lower one), a ratio at or after t, each term off by its own roundings alone; (1, 1) where
// the sides are not certain. For a crossing wall_verdict certifies, t is the pair's t_enter.
fn crossing_fraction(query: Segment, wall: Segment) -> vec2<f32> {
    let start = crossing_det(wall, query.x0, query.y0);
    let end = crossing_det(wall, query.x1, query.y1);
    let apart = (start.x > start.y && end.x < -end.y) || (start.x < -start.y && end.x > end.y);
    if (!apart) {
        return vec2<f32>(1.0, 1.0);
    }
    let before = f_add(abs(start.x), start.y);
    let after = f_sub(abs(end.x), end.y);
    return vec2<f32>(before, f_add(before, after));
}

// Every call of a Big function is inlined in full by a GPU compiler, and big_mul is long: so
// it appears at two call sites, each in a loop over its operands. (lavapipe took 24 s to
// compile the form with a call per product, 8 s with four call sites.)
fn segment_segment_ratios(query: Segment, wall: Segment) -> SegmentRatios {
    var one: Big;
    one[0] = 1u;
    let miss = SegmentRatios(CONTACT_MISS, Big(), one, Big(), one);
    let values = array<f32, 8>(query.x0, query.y0, query.x1, query.y1, wall.x0, wall.y0, wall.x1, wall.y1);
    var exact: array<Big, 8>;
    for (var k = 0u; k < 8u; k += 1u) {
        exact[k] = big_from_f32(values[k]);
    }
    let p0 = BigPoint(exact[0], exact[1]);
    let p1 = BigPoint(exact[2], exact[3]);
    let q0 = BigPoint(exact[4], exact[5]);
    let q1 = BigPoint(exact[6], exact[7]);
    let d = difference(p1, p0);
    let e = difference(q1, q0);
    let w = difference(q0, p0);
    let f = difference(q1, p0);
    // The crossing's cross products, den = d x e, a = w x e, b = w x d, from six products.
    let cross_left = array<Big, 6>(d.x, d.y, w.x, w.y, w.x, w.y);
    let cross_right = array<Big, 6>(e.y, e.x, e.y, e.x, d.y, d.x);
    var crosses: array<Big, 6>;
    for (var k = 0u; k < 6u; k += 1u) {
        crosses[k] = big_mul(cross_left[k], cross_right[k]);
    }
    var den = big_sub(crosses[0], crosses[1]);
    var a = big_sub(crosses[2], crosses[3]);
    var b = big_sub(crosses[4], crosses[5]);
    var contact = CONTACT_TOUCH;
    var enter_num: Big;
    var enter_den = one;
    var exit_num = one;
    var exit_den = one;
    if (!big_is_zero(den)) {
        // Not parallel: the lines meet at t = a / den on the query, u = b / den on the wall.
        if (big_is_negative(den)) {
            a = big_neg(a);
            b = big_neg(b);
            den = big_neg(den);
        }
        if (big_is_negative(a) || big_lt(den, a) || big_is_negative(b) || big_lt(den, b)) {
            return miss;
        }
        let inside_a = !big_is_zero(a) && big_lt(a, den);
        let inside_b = !big_is_zero(b) && big_lt(b, den);
        if (inside_a && inside_b) {
            contact = CONTACT_CROSS;
        }
        enter_num = a;
        enter_den = den;
        exit_num = a;
        exit_den = den;
    } else {
        // Parallel or degenerate: we = w . e, ee = e . e, dd = d . d, s0 = w . d, s1 = f . d.
        let dot_left = array<Big, 10>(w.x, w.y, e.x, e.y, d.x, d.y, w.x, w.y, f.x, f.y);
        let dot_right = array<Big, 10>(e.x, e.y, e.x, e.y, d.x, d.y, d.x, d.y, d.x, d.y);
        var terms: array<Big, 10>;
        for (var k = 0u; k < 10u; k += 1u) {
            terms[k] = big_mul(dot_left[k], dot_right[k]);
        }
        var dots: array<Big, 5>;
        for (var k = 0u; k < 5u; k += 1u) {
            dots[k] = big_add(terms[2u * k], terms[2u * k + 1u]);
        }
        let ee = dots[1];
        let dd = dots[2];
        if (big_is_zero(d.x) && big_is_zero(d.y)) {
            // The query is a point, p0 = q0 - w: on the wall, every t of it is a common point.
            var on = false;
            if (big_is_zero(e.x) && big_is_zero(e.y)) {
                on = big_is_zero(w.x) && big_is_zero(w.y);
            } else {
                // (p0 - q0) x e = -a, (p0 - q0) . e = -we.
                let along = big_neg(dots[0]);
                on = big_is_zero(a) && !big_is_negative(along) && !big_lt(ee, along);
            }
            if (!on) {
                return miss;
            }
        } else {
            if (!big_is_zero(b)) {
                // Parallel lines apart, or a point wall off the query's line.
                return miss;
            }
            // Collinear: the wall's ends at t = s0 / dd and s1 / dd, clamped to [0, dd].
            var lo = dots[3];
            var hi = dots[4];
            if (big_lt(hi, lo)) {
                lo = dots[4];
                hi = dots[3];
            }
            if (big_is_negative(lo)) {
                lo = Big();
            }
            if (big_lt(dd, hi)) {
                hi = dd;
            }
            if (big_lt(hi, lo)) {
                return miss;
            }
            if (big_lt(lo, hi)) {
                contact = CONTACT_OVERLAP;
            }
            enter_num = lo;
            enter_den = dd;
            exit_num = hi;
            exit_den = dd;
        }
    }
    return SegmentRatios(contact, enter_num, enter_den, exit_num, exit_den);
}

fn segment_segment(query: Segment, wall: Segment) -> SegmentContact {
    if (wall_verdict(query, wall) == WALLS_APART) {
        return SegmentContact(0.0, 0.0, CONTACT_MISS);
    }
    let ratios = segment_segment_ratios(query, wall);
    if (ratios.contact == CONTACT_MISS) {
        return SegmentContact(0.0, 0.0, CONTACT_MISS);
    }
    let nums = array<Big, 2>(ratios.enter_num, ratios.exit_num);
    let dens = array<Big, 2>(ratios.enter_den, ratios.exit_den);
    var t: array<f32, 2>;
    for (var k = 0u; k < 2u; k += 1u) {
        t[k] = ratio_to_f32(nums[k], dens[k]);
    }
    return SegmentContact(t[0], t[1], ratios.contact);
}

// Whether query meets wall, exactly, without t: what counts ask.
fn segment_segment_hit(query: Segment, wall: Segment) -> bool {
    let verdict = wall_verdict(query, wall);
    if (verdict != UNCERTAIN) {
        return verdict == WALLS_CROSS;
    }
    return segment_segment_ratios(query, wall).contact != CONTACT_MISS;
}

// segment_segment_ratios on the narrow integers (shaders/exact.wgsl), for a pair whose eight
// values span at most NARROW_SPAN binary orders; fits is false for the others, which take the
// wide integers. The same steps and branches, so the same contact and ratios. CPU mirror:
// src/cpu/segment_segment/narrow.rs.
struct NarrowRatios {
    fits: bool,
    contact: u32,
    enter_num: vec4<u32>,
    enter_den: vec4<u32>,
    exit_num: vec4<u32>,
    exit_den: vec4<u32>,
}

// The pair's answer from the narrow integers, when fits.
struct NarrowContact {
    fits: bool,
    contact: SegmentContact,
}

fn narrow_ratios(query: Segment, wall: Segment) -> NarrowRatios {
    let zero = vec4<u32>(0u);
    let one = vec4<u32>(1u, 0u, 0u, 0u);
    let values = scaled_values(array<f32, 8>(query.x0, query.y0, query.x1, query.y1, wall.x0, wall.y0, wall.x1, wall.y1));
    if (!values.fits) { return NarrowRatios(false, CONTACT_MISS, zero, one, zero, one); } // backend: the CPU's `?`
    let miss = NarrowRatios(true, CONTACT_MISS, zero, one, zero, one);
    let v = values.scaled;
    // Each scaled value is below 2^62: differences fit 64 bits, their products 128.
    let d = narrow_difference(v[2], v[3], v[0], v[1]);
    let e = narrow_difference(v[6], v[7], v[4], v[5]);
    let w = narrow_difference(v[4], v[5], v[0], v[1]);
    let f = narrow_difference(v[6], v[7], v[0], v[1]);
    var den = narrow_cross(d, e);
    var a = narrow_cross(w, e);
    var b = narrow_cross(w, d);
    if (!narrow_is_zero(den)) {
        // Not parallel: the lines meet at t = a / den on the query, u = b / den on the wall.
        if (narrow_is_negative(den)) {
            a = narrow_neg(a);
            b = narrow_neg(b);
            den = narrow_neg(den);
        }
        if (narrow_is_negative(a) || narrow_lt(den, a) || narrow_is_negative(b) || narrow_lt(den, b)) {
            return miss;
        }
        var contact = CONTACT_TOUCH;
        if (!narrow_is_zero(a) && narrow_lt(a, den) && !narrow_is_zero(b) && narrow_lt(b, den)) {
            contact = CONTACT_CROSS;
        }
        return NarrowRatios(true, contact, a, den, a, den);
    }
    // Parallel or degenerate.
    let ee = narrow_dot(e, e);
    let dd = narrow_dot(d, d);
    if (narrow_is_zero(dd)) {
        // The query is a point, p0 = q0 - w: on the wall, every t of it is a common point.
        var on = false;
        if (narrow_is_zero(ee)) {
            on = narrow_is_zero(narrow_dot(w, w));
        } else {
            let along = narrow_neg(narrow_dot(w, e));
            on = narrow_is_zero(a) && !narrow_is_negative(along) && !narrow_lt(ee, along);
        }
        if (!on) {
            return miss;
        }
        return NarrowRatios(true, CONTACT_TOUCH, zero, one, one, one);
    }
    if (!narrow_is_zero(b)) {
        // Parallel lines apart, or a point wall off the query's line.
        return miss;
    }
    // Collinear: the wall's ends at t = s0 / dd and s1 / dd, clamped to [0, dd].
    let s0 = narrow_dot(w, d);
    let s1 = narrow_dot(f, d);
    var lo = s0;
    var hi = s1;
    if (narrow_lt(hi, lo)) {
        lo = s1;
        hi = s0;
    }
    if (narrow_is_negative(lo)) {
        lo = zero;
    }
    if (narrow_lt(dd, hi)) {
        hi = dd;
    }
    if (narrow_lt(hi, lo)) {
        return miss;
    }
    var contact = CONTACT_TOUCH;
    if (narrow_lt(lo, hi)) {
        contact = CONTACT_OVERLAP;
    }
    return NarrowRatios(true, contact, lo, dd, hi, dd);
}

// segment_segment's answer from the narrow integers, when they reach the pair (fits).
fn contact_narrow(query: Segment, wall: Segment) -> NarrowContact {
    let ratios = narrow_ratios(query, wall);
    if (!ratios.fits) { return NarrowContact(false, SegmentContact(0.0, 0.0, CONTACT_MISS)); } // backend: the CPU's `?`
    if (ratios.contact == CONTACT_MISS) {
        return NarrowContact(true, SegmentContact(0.0, 0.0, CONTACT_MISS));
    }
    // Ratios of non-negative integers, each below 2^127; one division when they are the same
    // ratio (a crossing, a touch: all but an overlap and a point query).
    let t_enter = narrow_ratio_to_f32(ratios.enter_num, ratios.enter_den);
    var t_exit = t_enter;
    if (any(ratios.exit_num != ratios.enter_num) || any(ratios.exit_den != ratios.enter_den)) {
        t_exit = narrow_ratio_to_f32(ratios.exit_num, ratios.exit_den);
    }
    return NarrowContact(true, SegmentContact(t_enter, t_exit, ratios.contact));
}

// segment_segment's answer the cheapest exact way: the orientations certify most misses, the
// narrow integers answer the pairs within their reach, the wide ones the rest. What the walls'
// and the polygons' kernels run (the CPU batch path's order, after its float filters).
fn wall_contact(query: Segment, wall: Segment) -> SegmentContact {
    if (wall_verdict(query, wall) == WALLS_APART) {
        return SegmentContact(0.0, 0.0, CONTACT_MISS);
    }
    let narrow = contact_narrow(query, wall);
    if (narrow.fits) {
        return narrow.contact;
    }
    return segment_segment(query, wall);
}

// The hooks of shaders/shape_passes.wgsl, for wall j of the tile.

// A miss the boxes or the orientations certify.
fn certain_miss(query: Segment, j: u32) -> bool {
    return boxes_apart(query, bounds[j]) || wall_verdict(query, walls[j]) == WALLS_APART;
}

// certain_miss, and a crossing the orientations certify.
fn grid_verdict(query: Segment, j: u32) -> i32 {
    if (boxes_apart(query, bounds[j])) {
        return SHAPE_APART;
    }
    let verdict = wall_verdict(query, walls[j]);
    if (verdict == WALLS_APART) {
        return SHAPE_APART;
    }
    if (verdict == WALLS_CROSS) {
        return SHAPE_MEETS;
    }
    return UNCERTAIN;
}

fn shape_miss() -> Contact {
    return SegmentContact(0.0, 0.0, CONTACT_MISS);
}

fn shape_exact(query: Segment, j: u32) -> Contact {
    return wall_contact(query, walls[j]);
}

// The hit alone: a crossing the orientations certify needs no integers.
fn shape_hit(query: Segment, j: u32) -> bool {
    let wall = walls[j];
    let verdict = wall_verdict(query, wall);
    if (verdict != UNCERTAIN) {
        return verdict == WALLS_CROSS;
    }
    let narrow = narrow_ratios(query, wall);
    if (narrow.fits) {
        return narrow.contact != CONTACT_MISS;
    }
    return segment_segment_ratios(query, wall).contact != CONTACT_MISS;
}
