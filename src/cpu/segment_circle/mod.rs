//! The segment × circle contract's executable form: where a query segment meets a closed disk,
//! decided exactly, with t correctly rounded (docs/semantics.md, "Segment × circle").
//!
//! On the exact integers of [`super::exact`]: with f = p0 − c, d = p1 − p0 and R = r (all
//! times 2^149, below 2^213), the segment is in the disk where q(t) = |f + t·d|² − R² =
//! A·t² + 2B·t + C ≤ 0, A = d · d, B = f · d, C = f · f − R², coefficients below 2^427.
//! Decisions are signs of q(0), q(1), of B, and of the discriminant B² − A·C (double width).
//! A t at the disk's boundary is a root of q, irrational in general: it is found by searching
//! the f32 values of [0, 1], deciding on which side of the root each probe m lies from the
//! exact signs of q(m) and q′(m) (which tells the two roots apart), then rounding with the
//! signs at the midpoint of the last two. Each probe costs a few products by its 25-bit
//! significand, never a full product. The search starts from an f32 estimate; the estimate
//! only decides how many probes it takes, never the answer, so a GPU's own rounding cannot
//! change a byte.
//!
//! Loop budget: lavapipe ends a shader invocation's loops after 65,535 iterations in all
//! (its loop limiter counts every nested iteration), silently. The worst case here, two
//! searches of [`SEARCH_STEPS`] probes, stays well below it; tests/segment_circle.rs holds
//! the GPU to the oracle on the estimates that need the longest searches.
//!
//! The CPU batch path answers most pairs before these integers: its float filters
//! ([`filters`]) and, for pairs whose values span few binary orders, the same steps and the
//! same search on 64- to 256-bit integers ([`narrow`]).
//!
//! The CPU mirror of `shaders/segment_circle.wgsl`: the same functions under the same names,
//! the same branches.

pub mod filters;
pub mod narrow;
mod shape;
pub mod verdict;

pub use shape::{check_circle, check_circles};

use bytemuck::{Pod, Zeroable};

use super::exact::{
    Big, BigPoint, DOUBLE, Double, LIMBS, big_abs, big_add, big_from_f32, big_is_negative,
    big_is_zero, big_lt, big_mul, big_neg, big_sub, difference, double_add, double_compare,
    double_from_big, double_mul, double_mul_small, double_shl, double_sign, ratio_to_f32,
};
use crate::types::Segment;

/// A closed disk: every point within `r` of (`cx`, `cy`), the circle included. `r ≥ 0`; a zero
/// radius is a point. Mirrors WGSL `Circle`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Circle {
    pub cx: f32,
    pub cy: f32,
    pub r: f32,
}

impl Circle {
    pub const fn new(cx: f32, cy: f32, r: f32) -> Self {
        Self { cx, cy, r }
    }
}

/// How a query segment meets a closed disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CircleKind {
    /// No common point.
    Miss,
    /// Both ends in the disk (so all of it, the disk being convex).
    Inside,
    /// The start outside, the end in.
    Enter,
    /// The start in, the end outside.
    Exit,
    /// Both ends outside, and a common part of positive length: in through the circle, out
    /// again.
    Cross,
    /// Both ends outside, and a single common point: the segment's line is tangent to the
    /// circle there, or a zero-radius disk lies on the segment.
    Tangent,
}

impl CircleKind {
    /// The lowercase name used by the CLI (`miss`, `inside`, `enter`, `exit`, `cross`,
    /// `tangent`).
    pub fn name(self) -> &'static str {
        match self {
            CircleKind::Miss => "miss",
            CircleKind::Inside => "inside",
            CircleKind::Enter => "enter",
            CircleKind::Exit => "exit",
            CircleKind::Cross => "cross",
            CircleKind::Tangent => "tangent",
        }
    }

    /// Its code in [`CircleContact::kind`].
    pub const fn code(self) -> u32 {
        match self {
            CircleKind::Miss => 0,
            CircleKind::Inside => 1,
            CircleKind::Enter => 2,
            CircleKind::Exit => 3,
            CircleKind::Cross => 4,
            CircleKind::Tangent => 5,
        }
    }

    /// Every kind, in code order.
    pub const ALL: [CircleKind; 6] = [
        CircleKind::Miss,
        CircleKind::Inside,
        CircleKind::Enter,
        CircleKind::Exit,
        CircleKind::Cross,
        CircleKind::Tangent,
    ];
}

/// The result for one (query segment, circle) pair: 12 bytes, GPU-ready.
///
/// `t_enter` and `t_exit` are the first and last t of the query segment in the disk, each the
/// exact value rounded to the nearest f32 (ties to even): exactly 0 when the start is in the
/// disk, exactly 1 when the end is. On a miss both are 0 and `kind` is 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct CircleContact {
    pub t_enter: f32,
    pub t_exit: f32,
    /// [`CircleKind::code`].
    pub kind: u32,
}

impl CircleContact {
    pub const MISS: Self = Self {
        t_enter: 0.0,
        t_exit: 0.0,
        kind: 0,
    };

    pub fn hit(&self) -> bool {
        self.kind != CircleKind::Miss.code()
    }

    /// Whether the segment crosses the circle coming in (or touches it: `Tangent`) and going
    /// out.
    pub fn boundary(&self) -> (bool, bool) {
        use CircleKind::{Cross, Enter, Exit, Tangent};
        let kind = self.kind();
        (
            matches!(kind, Enter | Cross | Tangent),
            matches!(kind, Exit | Cross),
        )
    }

    pub fn kind(&self) -> CircleKind {
        CircleKind::ALL
            .get(self.kind as usize)
            .copied()
            .unwrap_or(CircleKind::Miss)
    }
}

/// The bits of 1.0f32, the largest t searched. The bits of the f32 values in [0, 1] are the
/// integers 0 ..= `ONE_BITS`, in the values' order.
pub(crate) const ONE_BITS: u32 = 0x3f80_0000;
/// The bits of 0.5, where a search starts when the estimate is no t.
pub(crate) const HALF_BITS: u32 = 0x3f00_0000;
/// Probes a search may take: 1 at the estimate, at most 31 moving away from it with doubling
/// steps, at most 30 halving what is left, 1 at the last midpoint.
pub const SEARCH_STEPS: u32 = 64;

// The search's phases.
const PHASE_GUESS: u32 = 0;
const PHASE_UP: u32 = 1;
const PHASE_DOWN: u32 = 2;
const PHASE_BISECT: u32 = 3;
const PHASE_ROUND: u32 = 4;

/// Where `query` meets the closed disk `circle`: exactly, with the t of the first and last
/// common points correctly rounded.
///
/// Degenerate cases:
/// - a zero-length query is a point: `Inside` with t from 0 to 1 when it lies in the disk,
///   else a miss;
/// - a zero radius makes the disk a point: a segment through it from outside is `Tangent`
///   there; one starting or ending on it enters or exits at that end;
/// - an end on the circle is in the disk;
/// - a segment whose line only touches the circle is `Tangent` when the touching point lies
///   strictly between its ends, else a miss.
///
/// Inputs are valid (finite, |v| ≤ 2^62, r ≥ 0); -0.0 equals 0.0.
pub fn segment_circle(query: &Segment, circle: &Circle) -> CircleContact {
    circle_meeting(query, circle, true)
}

/// [`segment_circle`], with its t when `times` holds; without them (both 0: the hit and the
/// kind alone, what counts ask) the roots' search is skipped.
pub fn circle_meeting(query: &Segment, circle: &Circle, times: bool) -> CircleContact {
    let miss = CircleContact::MISS;
    let values = [
        query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r,
    ];
    let mut exact: [Big; 7] = [[0; LIMBS]; 7];
    for k in 0..7 {
        exact[k] = big_from_f32(values[k]);
    }
    let p0 = BigPoint {
        x: exact[0],
        y: exact[1],
    };
    let p1 = BigPoint {
        x: exact[2],
        y: exact[3],
    };
    let center = BigPoint {
        x: exact[4],
        y: exact[5],
    };
    let radius = exact[6];
    let f = difference(&p0, &center);
    let g = difference(&p1, &center);
    let d = difference(&p1, &p0);
    // q(0) = f · f − R², q(1) = g · g − R², dd = d · d, fd = f · d, from nine products.
    let left = [&f.x, &f.y, &g.x, &g.y, &radius, &d.x, &d.y, &f.x, &f.y];
    let right = [&f.x, &f.y, &g.x, &g.y, &radius, &d.x, &d.y, &d.x, &d.y];
    let mut terms: [Big; 9] = [[0; LIMBS]; 9];
    for k in 0..9 {
        terms[k] = big_mul(left[k], right[k]);
    }
    let start = big_sub(&big_add(&terms[0], &terms[1]), &terms[4]);
    let end = big_sub(&big_add(&terms[2], &terms[3]), &terms[4]);
    let dd = big_add(&terms[5], &terms[6]);
    let fd = big_add(&terms[7], &terms[8]);
    // fd² and dd · |q(0)|, double width.
    let wide_left = [big_abs(&fd), dd];
    let wide_right = [big_abs(&fd), big_abs(&start)];
    let mut wides: [Double; 2] = [[0; DOUBLE]; 2];
    for k in 0..2 {
        wides[k] = double_mul(&wide_left[k], &wide_right[k]);
    }
    let start_in = big_is_negative(&start) || big_is_zero(&start);
    let end_in = big_is_negative(&end) || big_is_zero(&end);
    if start_in && end_in {
        return circle_contact(0.0, 1.0, CircleKind::Inside);
    }
    if big_is_zero(&dd) {
        // A point outside the disk.
        return miss;
    }
    let mut kind = CircleKind::Cross;
    if start_in {
        kind = CircleKind::Exit;
    } else if end_in {
        kind = CircleKind::Enter;
    } else {
        // Both ends outside: q is least at t = −fd / dd, which must lie strictly between
        // them, and be ≤ 0 there: fd² ≥ dd · q(0).
        let ahead = big_neg(&fd);
        if !big_is_negative(&fd) || !big_lt(&ahead, &dd) {
            return miss;
        }
        let discriminant = double_compare(&wides[0], &wides[1]);
        if discriminant < 0 {
            return miss;
        }
        if discriminant == 0 {
            let mut t = 0.0;
            if times {
                t = ratio_to_f32(&ahead, &dd);
            }
            return circle_contact(t, t, CircleKind::Tangent);
        }
    }
    if !times {
        return circle_contact(0.0, 0.0, kind);
    }
    // The roots still needed: the entering one unless the start is in, the leaving one
    // unless the end is.
    let guesses = root_guesses(query, circle);
    let coefficients = [
        double_from_big(&dd),
        double_from_big(&fd),
        double_from_big(&start),
    ];
    let mut t = [0.0f32, 1.0];
    for k in 0..2 {
        let needed = (k == 0 && !start_in) || (k == 1 && !end_in);
        if needed {
            t[k] = root_to_f32(&coefficients, k == 1, guesses[k]);
        }
    }
    circle_contact(t[0], t[1], kind)
}

fn circle_contact(t_enter: f32, t_exit: f32, kind: CircleKind) -> CircleContact {
    CircleContact {
        t_enter,
        t_exit,
        kind: kind.code(),
    }
}

/// Estimates of the entering and leaving t, in plain f32 arithmetic: where the search starts.
/// Scaled by the largest magnitude so that no square overflows, each root from the form
/// without cancellation. Any value may come out (flushed subnormals, a GPU's division); only
/// the number of probes depends on it.
fn root_guesses(query: &Segment, circle: &Circle) -> [f32; 2] {
    let fx = query.x0 - circle.cx;
    let fy = query.y0 - circle.cy;
    let dx = query.x1 - query.x0;
    let dy = query.y1 - query.y0;
    let scale = fx
        .abs()
        .max(fy.abs())
        .max(dx.abs().max(dy.abs()))
        .max(circle.r);
    let (fx, fy, dx, dy, r) = (
        fx / scale,
        fy / scale,
        dx / scale,
        dy / scale,
        circle.r / scale,
    );
    let a = dx * dx + dy * dy;
    let b = fx * dx + fy * dy;
    let c = fx * fx + fy * fy - r * r;
    let root = (b * b - a * c).max(0.0).sqrt();
    let mut lower = (-b - root) / a;
    let mut upper = (-b + root) / a;
    if b < 0.0 {
        lower = c / (root - b);
    } else {
        upper = c / (-b - root);
    }
    [lower, upper]
}

/// The root of q (the entering one, or the `upper` leaving one) rounded to the nearest f32,
/// ties to even: the search over the f32 values of [0, 1] ([`RootSearch`]), each probe's side
/// from the wide integers.
fn root_to_f32(coefficients: &[Double; 3], upper: bool, guess: f32) -> f32 {
    let mut search = search_from(guess);
    for _ in 0..SEARCH_STEPS {
        search = search_phase(search);
        let probe = probe_of(search);
        let side = root_side(coefficients, probe.m, probe.k, upper);
        if search.phase == PHASE_ROUND {
            return rounded_root(search, side);
        }
        search = search_after(search, side > 0);
    }
    // Not reached: SEARCH_STEPS covers the longest search.
    f32::from_bits(search.lo)
}

/// A root's search: the root x lies in [0, 1], and `lo ≤ x < hi` holds throughout for the f32
/// values with bits `lo` and `hi`. It probes from the estimate outward with doubling steps
/// until x is bracketed, halves the bracket to adjacent values, then rounds by the midpoint's
/// side. WGSL `RootSearch`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RootSearch {
    pub(crate) lo: u32,
    hi: u32,
    probe: u32,
    pub(crate) phase: u32,
    step: u32,
}

/// A probe's value, m · 2^-k. WGSL `Probe`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probe {
    pub(crate) m: u32,
    pub(crate) k: u32,
}

pub(crate) fn search_from(guess: f32) -> RootSearch {
    let mut probe = guess.to_bits();
    if probe > ONE_BITS {
        // Negative, above 1, or not a number.
        probe = HALF_BITS;
    }
    RootSearch {
        lo: 0,
        hi: ONE_BITS + 1,
        probe,
        phase: PHASE_GUESS,
        step: 1,
    }
}

/// The search with its phase moved on where the bracket says so, and its next probe placed.
pub(crate) fn search_phase(search: RootSearch) -> RootSearch {
    let mut next = search;
    if (next.phase == PHASE_UP || next.phase == PHASE_DOWN) && next.step >= next.hi - next.lo {
        next.phase = PHASE_BISECT;
    }
    if next.phase == PHASE_BISECT && next.hi - next.lo == 1 {
        next.phase = PHASE_ROUND;
    }
    if next.phase == PHASE_UP {
        next.probe = next.lo + next.step;
    }
    if next.phase == PHASE_DOWN {
        next.probe = next.hi - next.step;
    }
    if next.phase == PHASE_BISECT {
        next.probe = next.lo + (next.hi - next.lo) / 2;
    }
    if next.phase == PHASE_ROUND {
        next.probe = next.lo;
    }
    next
}

/// The probe's value; in the last phase, the midpoint of lo and the next f32.
pub(crate) fn probe_of(search: RootSearch) -> Probe {
    let exponent = search.probe >> 23;
    let mut m = (search.probe & 0x7f_ffff) | 0x80_0000;
    let mut k = 150 - exponent;
    if exponent == 0 {
        m = search.probe & 0x7f_ffff;
        k = 149;
    }
    if search.phase == PHASE_ROUND {
        m = 2 * m + 1;
        k += 1;
    }
    Probe { m, k }
}

/// The search after its probe fell above the root or not.
pub(crate) fn search_after(search: RootSearch, above: bool) -> RootSearch {
    let mut next = search;
    if next.phase == PHASE_GUESS {
        if above {
            next.hi = next.probe;
            next.phase = PHASE_DOWN;
        } else {
            next.lo = next.probe;
            next.phase = PHASE_UP;
        }
    } else if next.phase == PHASE_UP {
        if above {
            next.hi = next.probe;
            next.phase = PHASE_BISECT;
        } else {
            next.lo = next.probe;
            next.step *= 2;
        }
    } else if next.phase == PHASE_DOWN {
        if above {
            next.hi = next.probe;
            next.step *= 2;
        } else {
            next.lo = next.probe;
            next.phase = PHASE_BISECT;
        }
    } else if above {
        next.hi = next.probe;
    } else {
        next.lo = next.probe;
    }
    next
}

/// The rounded root, from the side of the midpoint of lo and the next f32 (the last probe).
pub(crate) fn rounded_root(search: RootSearch, side: i32) -> f32 {
    // Bits of adjacent f32 values differ by one, and the even one is the even bits.
    if side < 0 || (side == 0 && search.lo % 2 == 1) {
        return f32::from_bits(search.lo + 1);
    }
    f32::from_bits(search.lo)
}

/// The side of the root x that m · 2^-k lies on: −1 below, 0 at, 1 above, for m < 2^25,
/// k ≤ 150. From the exact signs of q(m·2^-k)·2^2k = A·m² + 2B·m·2^k + C·2^2k (below 2^728)
/// and of q′(m·2^-k)·2^k / 2 = A·m + B·2^k, negative before the vertex: the entering root is
/// the one where q′ ≤ 0, the leaving one where q′ ≥ 0. `coefficients` are A, B, C.
fn root_side(coefficients: &[Double; 3], m: u32, k: u32, upper: bool) -> i32 {
    let am = double_mul_small(&coefficients[0], m);
    let bm = double_mul_small(&coefficients[1], m);
    let value = double_add(
        &double_add(&double_mul_small(&am, m), &double_shl(&bm, k + 1)),
        &double_shl(&coefficients[2], 2 * k),
    );
    let q = double_sign(&value);
    let slope = double_sign(&double_add(&am, &double_shl(&coefficients[1], k)));
    side_of(q, slope, upper)
}

/// The side of the root from the signs of q and q′ at the probe. The leaving root: inside
/// (q < 0) is below it, and so is outside before the vertex. The entering one: inside is above
/// it, and so is outside after the vertex.
pub(crate) fn side_of(q: i32, slope: i32, upper: bool) -> i32 {
    if upper {
        if q < 0 {
            return -1;
        }
        if q == 0 && slope >= 0 {
            return 0;
        }
        if q > 0 && slope > 0 {
            return 1;
        }
        return -1;
    }
    if q < 0 {
        return 1;
    }
    if q == 0 && slope <= 0 {
        return 0;
    }
    if q > 0 && slope < 0 {
        return -1;
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root's f32 from every kind of estimate: the answer may not depend on it.
    #[test]
    fn any_estimate_gives_the_same_root() {
        let cases = [
            (
                Segment::new(7.106875e-24, -3.0, -140185686000000.0, -2.0),
                Circle::new(-3.14653e-23, 1.0, 4.0),
            ),
            (
                Segment::new(-2.0, 0.5, 2.0, 0.5),
                Circle::new(0.0, 0.0, 1.0),
            ),
            (
                Segment::new(1.0, -1.2019023e-35, -4.0, -2.0),
                Circle::new(-3.0, 3.0, 5.0),
            ),
        ];
        let guesses = [
            0.0,
            -0.0,
            f32::from_bits(1),
            1e-30,
            0.25,
            0.5,
            0.999,
            1.0,
            2.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
        ];
        for (query, circle) in cases {
            let want = segment_circle(&query, &circle);
            let values = [
                query.x0, query.y0, query.x1, query.y1, circle.cx, circle.cy, circle.r,
            ];
            let e: Vec<Big> = values.iter().map(|&v| big_from_f32(v)).collect();
            let p0 = BigPoint { x: e[0], y: e[1] };
            let p1 = BigPoint { x: e[2], y: e[3] };
            let center = BigPoint { x: e[4], y: e[5] };
            let (f, d) = (difference(&p0, &center), difference(&p1, &p0));
            let dot =
                |a: &BigPoint, b: &BigPoint| big_add(&big_mul(&a.x, &b.x), &big_mul(&a.y, &b.y));
            let start = big_sub(&dot(&f, &f), &big_mul(&e[6], &e[6]));
            let coefficients = [
                double_from_big(&dot(&d, &d)),
                double_from_big(&dot(&f, &d)),
                double_from_big(&start),
            ];
            for guess in guesses {
                if want.kind() != CircleKind::Enter && want.kind() != CircleKind::Inside {
                    assert_eq!(
                        root_to_f32(&coefficients, true, guess),
                        want.t_exit,
                        "{query:?} {circle:?} from {guess}"
                    );
                }
                if want.kind() == CircleKind::Cross || want.kind() == CircleKind::Enter {
                    assert_eq!(
                        root_to_f32(&coefficients, false, guess),
                        want.t_enter,
                        "{query:?} {circle:?} from {guess}"
                    );
                }
            }
        }
    }
}
