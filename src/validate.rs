//! The contract's input domain, checked before any work.

use crate::error::{InputArray, InputError, Problem};
use crate::types::{Circle, PairIndex, Rect, Segment};

/// The largest |coordinate| accepted: 2^62. Differences stay below 2^63 and products of two
/// differences below 2^126, so no f32 computation in the kernel can overflow.
pub const MAX_ABS_COORDINATE: f32 = 4_611_686_018_427_387_904.0; // 2^62

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
    check_value(a, index, "x0", s.x0)?;
    check_value(a, index, "y0", s.y0)?;
    check_value(a, index, "x1", s.x1)?;
    check_value(a, index, "y1", s.y1)
}

/// Checks one rect: every value finite and within ±2^62, and min <= max on both axes.
pub fn check_rect(index: usize, r: &Rect) -> Result<(), InputError> {
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
