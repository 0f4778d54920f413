//! The contract's input domain, checked before any work.

use crate::error::{InputArray, InputError, Problem};
use crate::types::{Circle, PairIndex, Rect, Segment};

/// The largest |coordinate| accepted: 2^62. Differences stay below 2^63 and products of two
/// differences below 2^126, so no f32 computation in the kernel can overflow.
pub const MAX_ABS_COORDINATE: f32 = 4_611_686_018_427_387_904.0; // 2^62

// Tests of what the kernels do with values that change after validation (as another thread
// writing into the caller's arrays can do) switch validation off on their own thread.
#[cfg(test)]
thread_local! {
    pub(crate) static SKIP_FOR_TEST: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread's checks are switched off (tests only; always false in a build).
fn skipped() -> bool {
    #[cfg(test)]
    {
        SKIP_FOR_TEST.get()
    }
    #[cfg(not(test))]
    {
        false
    }
}

fn check_value(
    array: InputArray,
    index: usize,
    field: &'static str,
    v: f32,
) -> Result<(), InputError> {
    let problem = if v.is_nan() {
        Problem::NotANumber
    } else if v.is_infinite() {
        Problem::Infinite(v)
    } else if v.abs() > MAX_ABS_COORDINATE {
        Problem::OutOfRange(v)
    } else {
        return Ok(());
    };
    Err(InputError {
        array,
        index,
        field,
        problem,
    })
}

/// Checks one segment: every value finite and within ±2^62.
pub fn check_segment(index: usize, s: &Segment) -> Result<(), InputError> {
    check_segment_of(InputArray::Segments, index, s)
}

/// Checks every wall of a segment × segment query as [`check_segment`] does a segment.
pub fn check_walls(walls: &[Segment]) -> Result<(), InputError> {
    for (i, wall) in walls.iter().enumerate() {
        check_segment_of(InputArray::Walls, i, wall)?;
    }
    Ok(())
}

/// Checks every circle of a segment × circle query: every value finite and within ±2^62, and
/// the radius not below 0 (-0.0 is 0).
pub fn check_circles(circles: &[Circle]) -> Result<(), InputError> {
    for (i, circle) in circles.iter().enumerate() {
        check_circle(i, circle)?;
    }
    Ok(())
}

/// Checks one circle as [`check_circles`] does.
pub fn check_circle(index: usize, c: &Circle) -> Result<(), InputError> {
    if skipped() {
        return Ok(());
    }
    let a = InputArray::Circles;
    check_value(a, index, "cx", c.cx)?;
    check_value(a, index, "cy", c.cy)?;
    check_value(a, index, "r", c.r)?;
    if c.r < 0.0 {
        return Err(InputError {
            array: a,
            index,
            field: "r",
            problem: Problem::NegativeRadius(c.r),
        });
    }
    Ok(())
}

pub(crate) fn check_segment_of(a: InputArray, index: usize, s: &Segment) -> Result<(), InputError> {
    if skipped() {
        return Ok(());
    }
    check_value(a, index, "x0", s.x0)?;
    check_value(a, index, "y0", s.y0)?;
    check_value(a, index, "x1", s.x1)?;
    check_value(a, index, "y1", s.y1)
}

/// Checks one rect: every value finite and within ±2^62, and min <= max on both axes.
pub fn check_rect(index: usize, r: &Rect) -> Result<(), InputError> {
    if skipped() {
        return Ok(());
    }
    let a = InputArray::Rects;
    check_value(a, index, "min_x", r.min_x)?;
    check_value(a, index, "min_y", r.min_y)?;
    check_value(a, index, "max_x", r.max_x)?;
    check_value(a, index, "max_y", r.max_y)?;
    for (field, min, max) in [("min_x", r.min_x, r.max_x), ("min_y", r.min_y, r.max_y)] {
        if min > max {
            return Err(InputError {
                array: a,
                index,
                field,
                problem: Problem::MinAboveMax { min, max },
            });
        }
    }
    Ok(())
}

/// Checks every segment and rect; the first bad one is the error.
pub fn check_inputs(segments: &[Segment], rects: &[Rect]) -> Result<(), InputError> {
    for (i, s) in segments.iter().enumerate() {
        check_segment(i, s)?;
    }
    for (i, r) in rects.iter().enumerate() {
        check_rect(i, r)?;
    }
    Ok(())
}

/// Checks that every pair's indices are in range.
pub fn check_pairs(
    pairs: &[PairIndex],
    segment_count: usize,
    rect_count: usize,
) -> Result<(), InputError> {
    for (i, p) in pairs.iter().enumerate() {
        for (field, index, len) in [
            ("segment", p.segment, segment_count),
            ("rect", p.rect, rect_count),
        ] {
            if index as usize >= len {
                return Err(InputError {
                    array: InputArray::Pairs,
                    index: i,
                    field,
                    problem: Problem::IndexOutOfRange { index, len },
                });
            }
        }
    }
    Ok(())
}

/// Checks one polygon's ring (its closing repeat, if any, already dropped): at least three
/// vertices, each value finite and within ±2^62, no zero-length edge, and simple: no two
/// edges meet, but consecutive ones at their shared vertex alone. Exact (orientation signs of
/// f32 points, evaluated by `robust`), in O(n log n + pairs of edges whose x-ranges overlap).
pub fn check_ring(index: usize, ring: &[[f32; 2]]) -> Result<(), InputError> {
    let error = |field: &'static str, problem| InputError {
        array: InputArray::Polygons,
        index,
        field,
        problem,
    };
    let n = ring.len();
    if n < 3 {
        return Err(error("ring", Problem::TooFewVertices(n as u32)));
    }
    for (v, &[x, y]) in ring.iter().enumerate() {
        for (field, value) in [("x", x), ("y", y)] {
            if check_value(InputArray::Polygons, index, field, value).is_err() {
                let vertex = v as u32;
                return Err(error(field, Problem::BadVertex { vertex, value }));
            }
        }
    }
    let at = |v: usize| {
        let [x, y] = ring[v % n];
        robust::Coord {
            x: x as f64,
            y: y as f64,
        }
    };
    for v in 1..=n {
        if ring[v % n] == ring[v - 1] {
            return Err(error("ring", Problem::RepeatedVertex(v as u32)));
        }
    }
    // Sort and sweep: edges in order of their smallest x; each meets only the edges after it
    // that start (in x) before it ends.
    let lo = |k: usize| ring[k][0].min(ring[(k + 1) % n][0]);
    let hi = |k: usize| ring[k][0].max(ring[(k + 1) % n][0]);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| lo(a).total_cmp(&lo(b)));
    for (p, &i) in order.iter().enumerate() {
        for &j in order[p + 1..].iter().take_while(|&&j| lo(j) <= hi(i)) {
            let (i, j) = (i.min(j), i.max(j));
            let (a, b, c, d) = (at(i), at(i + 1), at(j), at(j + 1));
            let bad = if j == i + 1 {
                // Consecutive, sharing b = c: they overlap when d turns straight back along
                // the first edge.
                spike(a, b, d)
            } else if i == 0 && j == n - 1 {
                // The last edge ends where the first starts, d = a.
                spike(c, a, b)
            } else {
                closed_segments_meet(a, b, c, d)
            };
            if bad {
                let (edge, other) = (i as u32, j as u32);
                return Err(error("ring", Problem::NotSimple { edge, other }));
            }
        }
    }
    Ok(())
}

/// Whether the edges a → v and v → d overlap beyond v: d lies back along the first edge.
/// Collinear, a ≠ v and d ≠ v: they are on one side of v exactly when their x (or, on a
/// vertical line, their y) are on one side of v's, plain comparisons.
fn spike(a: robust::Coord<f64>, v: robust::Coord<f64>, d: robust::Coord<f64>) -> bool {
    let same_side = if a.x != v.x {
        (a.x > v.x) == (d.x > v.x)
    } else {
        (a.y > v.y) == (d.y > v.y)
    };
    robust::orient2d(a, v, d) == 0.0 && same_side
}

/// Whether the closed segments a–b and c–d share a point, exactly (f32 points as f64, whose
/// orientation signs `robust` evaluates exactly; the rest are plain comparisons).
pub(crate) fn closed_segments_meet(
    a: robust::Coord<f64>,
    b: robust::Coord<f64>,
    c: robust::Coord<f64>,
    d: robust::Coord<f64>,
) -> bool {
    let sign = |v: f64| (v > 0.0) as i32 - (v < 0.0) as i32;
    let (o1, o2) = (
        sign(robust::orient2d(a, b, c)),
        sign(robust::orient2d(a, b, d)),
    );
    let (o3, o4) = (
        sign(robust::orient2d(c, d, a)),
        sign(robust::orient2d(c, d, b)),
    );
    let within = |p: robust::Coord<f64>, q: robust::Coord<f64>, r: robust::Coord<f64>| {
        p.x.min(q.x) <= r.x && r.x <= p.x.max(q.x) && p.y.min(q.y) <= r.y && r.y <= p.y.max(q.y)
    };
    (o1 * o2 < 0 && o3 * o4 < 0)
        || (o1 == 0 && within(a, b, c))
        || (o2 == 0 && within(a, b, d))
        || (o3 == 0 && within(c, d, a))
        || (o4 == 0 && within(c, d, b))
}
