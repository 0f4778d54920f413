//! The contract's input domain, checked before any work.

use crate::error::{InputArray, InputError, Problem};
use crate::types::{PairIndex, Rect, Segment};

// Each shape's check lives beside the shape; they are named here too, with the rest of the
// input domain.
pub use crate::cpu::segment_circle::{check_circle, check_circles};
pub use crate::cpu::segment_polygon::check_ring;
pub use crate::cpu::segment_segment::check_walls;

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
pub(crate) fn skipped() -> bool {
    #[cfg(test)]
    {
        SKIP_FOR_TEST.get()
    }
    #[cfg(not(test))]
    {
        false
    }
}

pub(crate) fn check_value(
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
    // Most inputs are good: one pass over the values that the compiler vectorises, then
    // the pass that names the first bad value only where there is one.
    if !all_in_range(bytemuck::cast_slice(segments)) {
        for (i, s) in segments.iter().enumerate() {
            check_segment(i, s)?;
        }
    }
    for (i, r) in rects.iter().enumerate() {
        check_rect(i, r)?;
    }
    Ok(())
}

/// Whether every value is within ±[`MAX_ABS_COORDINATE`] (so neither NaN nor infinite):
/// [`check_value`]'s test, with no branch per value.
fn all_in_range(values: &[f32]) -> bool {
    values.chunks(256).all(|chunk| {
        chunk
            .iter()
            .fold(true, |ok, v| ok & (v.abs() <= MAX_ABS_COORDINATE))
    })
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

/// What stands in for each skipped segment of `segments`: a point at the start of the first
/// valid one (so that its walk through a grid is short), or at the origin when none is.
pub(crate) fn stand_in_segment(segments: &[Segment], skipped: &[InputError]) -> Segment {
    let valid = first_valid(segments.len(), skipped);
    valid.map_or_else(Segment::default, |i| {
        let s = segments[i];
        Segment::new(s.x0, s.y0, s.x0, s.y0)
    })
}

/// What stands in for each skipped rect of `rects`: a point at the corner of the first valid one
/// (so that a grid over the rects covers no more than theirs), or at the origin when none is.
pub(crate) fn stand_in_rect(rects: &[Rect], skipped: &[InputError]) -> Rect {
    let valid = first_valid(rects.len(), skipped);
    valid.map_or_else(Rect::default, |i| {
        let r = rects[i];
        Rect::new(r.min_x, r.min_y, r.min_x, r.min_y)
    })
}

/// The first index below `len` that `skipped` (in index order) does not name.
fn first_valid(len: usize, skipped: &[InputError]) -> Option<usize> {
    let taken = skipped.iter().enumerate().find(|(k, e)| e.index != *k);
    let first = taken.map_or(skipped.len(), |(k, _)| k);
    (first < len).then_some(first)
}
