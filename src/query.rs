//! The queries' inputs and outputs: a [`Batch`] of segments and rects (with optional filters),
//! and what each query returns. The kernels are `shaders/queries.wgsl` and its CPU mirror
//! [`crate::cpu::queries`]; [`crate::Engine`] runs them.

use crate::error::{Error, Result};
use crate::types::{Filter, Kind, PairResult, Rect, Segment, Sides};
use crate::validate;

/// Segments and rects to test every segment against every rect, with optional per-segment and
/// per-rect [`Filter`]s (absent: everything is tested).
#[derive(Clone, Copy, Debug, Default)]
pub struct Batch<'a> {
    pub segments: &'a [Segment],
    pub rects: &'a [Rect],
    /// One filter per segment, or `None`.
    pub segment_filters: Option<&'a [Filter]>,
    /// One filter per rect, or `None`.
    pub rect_filters: Option<&'a [Filter]>,
}

impl<'a> Batch<'a> {
    pub fn new(segments: &'a [Segment], rects: &'a [Rect]) -> Self {
        Self {
            segments,
            rects,
            segment_filters: None,
            rect_filters: None,
        }
    }

    /// With one filter per segment.
    pub fn with_segment_filters(self, filters: &'a [Filter]) -> Self {
        Self {
            segment_filters: Some(filters),
            ..self
        }
    }

    /// With one filter per rect.
    pub fn with_rect_filters(self, filters: &'a [Filter]) -> Self {
        Self {
            rect_filters: Some(filters),
            ..self
        }
    }

    /// Whether segment `s` and rect `r` are tested (their filters accept each other).
    pub fn is_tested(&self, s: usize, r: usize) -> bool {
        let segment = self.segment_filters.map_or(Filter::ALL, |f| f[s]);
        let rect = self.rect_filters.map_or(Filter::ALL, |f| f[r]);
        segment.tests(&rect)
    }

    /// Checks every value and the filter arrays' lengths.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid value; [`Error::FilterLength`].
    pub fn validate(&self) -> Result<()> {
        validate::check_inputs(self.segments, self.rects)?;
        let lengths = [
            ("segment", self.segment_filters, self.segments.len()),
            ("rect", self.rect_filters, self.rects.len()),
        ];
        for (array, filters, expected) in lengths {
            if let Some(filters) = filters
                && filters.len() != expected
            {
                return Err(Error::FilterLength {
                    array,
                    expected,
                    got: filters.len(),
                });
            }
        }
        Ok(())
    }
}

/// Hits per segment and per rect (damage per enemy), of the pairs a [`Batch`] tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `per_segment[s]`: the rects segment `s` hits.
    pub per_segment: Vec<u32>,
    /// `per_rect[r]`: the segments that hit rect `r`.
    pub per_rect: Vec<u64>,
}

/// What to clip each segment to.
#[derive(Clone, Copy, Debug)]
pub enum ClipTo<'a> {
    /// One rect (a viewport) for every segment.
    Rect(Rect),
    /// `rects[i]` for segment `i`: as many rects as segments.
    PerSegment(&'a [Rect]),
}

/// A segment clipped to a closed rect: the pair's result, and the part of the segment inside.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clipped {
    pub result: PairResult,
    /// From the point at `t_enter` to the point at `t_exit`; `None` on a miss.
    pub segment: Option<Segment>,
}

impl Clipped {
    pub fn kind(&self) -> Kind {
        self.result.kind()
    }

    /// The clipped part of `s` in `r`, from the pair's result (computed on the host, in f32, so
    /// both backends return the same bits).
    ///
    /// - An end inside the rect is kept exactly.
    /// - A clipped end lies exactly on the side it crosses (x = min_x for `min_x`), and its other
    ///   coordinate, `c0 + t·(c1 − c0)` rounded, is clamped into the rect: the clipped segment is
    ///   always in the closed rect.
    /// - A segment touching a corner clips to that corner, a zero-length one.
    pub fn new(s: &Segment, r: &Rect, result: PairResult) -> Self {
        if !result.hit() {
            return Self {
                result,
                segment: None,
            };
        }
        let (x0, y0) = if result.start_inside() {
            (s.x0, s.y0)
        } else {
            clipped_point(s, r, result.t_enter, result.entry_sides())
        };
        let (x1, y1) = if result.end_inside() {
            (s.x1, s.y1)
        } else {
            clipped_point(s, r, result.t_exit, result.exit_sides())
        };
        Self {
            result,
            segment: Some(Segment::new(x0, y0, x1, y1)),
        }
    }
}

/// The point at `t`, snapped onto the crossed sides and clamped into the rect.
fn clipped_point(s: &Segment, r: &Rect, t: f32, sides: Sides) -> (f32, f32) {
    let (x, y) = s.point_at(t);
    let snap = |v: f32, min: f32, max: f32, min_side: Sides, max_side: Sides| {
        if sides.contains(min_side) {
            min
        } else if sides.contains(max_side) {
            max
        } else {
            v.clamp(min, max)
        }
    };
    (
        snap(x, r.min_x, r.max_x, Sides::MIN_X, Sides::MAX_X),
        snap(y, r.min_y, r.max_y, Sides::MIN_Y, Sides::MAX_Y),
    )
}
