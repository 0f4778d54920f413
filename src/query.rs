//! The queries' inputs and outputs: a [`Batch`] of segments and rects (with optional filters),
//! and what each query returns. The kernels are `shaders/rect_queries.wgsl` and its CPU mirror
//! [`crate::cpu::rect_queries`]; [`crate::Engine`] runs them.

use crate::broad_phase::RectSet;
use crate::cpu::rounding::crossing_point_exact;
use crate::error::{Error, InputError, Result};
use crate::types::{Filter, Kind, PairResult, Rect, Segment, Sides};
use crate::validate;

/// What a query does with an invalid element of its [`Batch`] (NaN, infinite, beyond ±2^62, or
/// a rect with min above max).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnInvalid {
    /// The call fails with [`Error::Input`] naming the first one, before any work: for batch
    /// jobs, where a bad value is a bug to stop at.
    #[default]
    Fail,
    /// Each one misses everything, the rest of the batch is answered, and the engine lists them
    /// ([`crate::Engine::last_skipped`]): for a game's frame, which one bad bullet must not
    /// stop.
    Miss,
}

/// The invalid elements a call (or a [`RectSet`] rebuild) skipped, each with its index and its
/// first problem, in index order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Skipped {
    pub segments: Vec<InputError>,
    pub rects: Vec<InputError>,
}

impl Skipped {
    /// How many elements were skipped.
    pub fn count(&self) -> usize {
        self.segments.len() + self.rects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    pub(crate) fn clear(&mut self) {
        self.segments.clear();
        self.rects.clear();
    }
}

/// A batch's stand-ins for its invalid elements ([`OnInvalid::Miss`]): copies of its arrays with
/// each invalid element replaced by a zero one that its filter ([`Filter::NONE`]) never tests.
/// Kept between calls, so a frame that has some allocates only when it is larger than any before.
#[derive(Clone, Debug, Default)]
pub(crate) struct StandIns {
    segments: Vec<Segment>,
    rects: Vec<Rect>,
    segment_filters: Vec<Filter>,
    rect_filters: Vec<Filter>,
}

/// `filters` (or [`Filter::ALL`] for each of `len`) with [`Filter::NONE`] at each skipped index.
fn filters_without(
    out: &mut Vec<Filter>,
    filters: Option<&[Filter]>,
    len: usize,
    skipped: &[InputError],
) {
    out.clear();
    match filters {
        Some(f) => out.extend_from_slice(f),
        None => out.resize(len, Filter::ALL),
    }
    for e in skipped {
        out[e.index] = Filter::NONE;
    }
}

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
    /// The rects prepared with their grid ([`Batch::over`]): `rects` is then its rects.
    pub rect_set: Option<&'a RectSet>,
    /// What a query does with an invalid segment or rect (default: [`OnInvalid::Fail`]).
    pub on_invalid: OnInvalid,
}

impl<'a> Batch<'a> {
    pub fn new(segments: &'a [Segment], rects: &'a [Rect]) -> Self {
        Self {
            segments,
            rects,
            segment_filters: None,
            rect_filters: None,
            rect_set: None,
            on_invalid: OnInvalid::Fail,
        }
    }

    /// Invalid segments and rects miss everything instead of failing the call
    /// ([`OnInvalid::Miss`]): the rest of the batch is answered, and
    /// [`crate::Engine::last_skipped`] lists them. A [`RectSet`]'s own invalid rects (kept by
    /// [`RectSet::rebuild_skipping_invalid`]) miss in any batch. A filter array of the wrong
    /// length still fails the call.
    pub fn skip_invalid(self) -> Self {
        Self {
            on_invalid: OnInvalid::Miss,
            ..self
        }
    }

    /// Segments against a prepared [`RectSet`]: queries find each segment's candidates through
    /// its grid (unless the engine's broad phase is [`crate::BroadPhase::Off`]).
    pub fn over(segments: &'a [Segment], rect_set: &'a RectSet) -> Self {
        Self {
            rect_set: Some(rect_set),
            ..Self::new(segments, rect_set.rects())
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
        self.check_values()?;
        self.check_filter_lengths()
    }

    /// Checks every value, and that a rect set's rects are the batch's.
    fn check_values(&self) -> Result<()> {
        if let Some(set) = self.rect_set {
            // The set's rects were checked when it was built.
            validate::check_inputs(self.segments, &[])?;
            if !std::ptr::eq(set.rects(), self.rects) {
                return Err(Error::RectSetMismatch);
            }
        } else {
            validate::check_inputs(self.segments, self.rects)?;
        }
        Ok(())
    }

    fn check_filter_lengths(&self) -> Result<()> {
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

    /// Whether every element is valid; `Ok(false)` when some are not and the batch skips them.
    ///
    /// # Errors
    /// As [`validate`](Self::validate), except for invalid values under [`OnInvalid::Miss`]:
    /// what [`admitted`](Self::admitted) refuses, in its order.
    pub(crate) fn check_admissible(&self) -> Result<bool> {
        let valid = match self.check_values() {
            Ok(()) => true,
            Err(Error::Input(_)) if self.on_invalid == OnInvalid::Miss => false,
            Err(e) => return Err(e),
        };
        self.check_filter_lengths()?;
        if let Some(set) = self.rect_set
            && !std::ptr::eq(set.rects(), self.rects)
        {
            return Err(Error::RectSetMismatch);
        }
        Ok(valid)
    }

    /// The batch a query runs: this one when every element is valid; under
    /// [`OnInvalid::Miss`], one whose invalid elements (and a rect set's skipped rects) are
    /// stand-ins that its filters never test, each listed in `skipped`.
    ///
    /// # Errors
    /// As [`validate`](Self::validate), except for invalid values under [`OnInvalid::Miss`].
    pub(crate) fn admitted<'s>(
        &self,
        stand_ins: &'s mut StandIns,
        skipped: &mut Skipped,
    ) -> Result<Batch<'s>>
    where
        'a: 's,
    {
        skipped.clear();
        let set_skipped = self.rect_set.map_or(&[][..], RectSet::skipped);
        if self.check_admissible()? && set_skipped.is_empty() {
            return Ok(*self);
        }
        skipped.segments.extend(
            (self.segments.iter().enumerate())
                .filter_map(|(i, s)| validate::check_segment(i, s).err()),
        );
        match self.rect_set {
            Some(_) => skipped.rects.extend_from_slice(set_skipped),
            None => skipped.rects.extend(
                (self.rects.iter().enumerate())
                    .filter_map(|(i, r)| validate::check_rect(i, r).err()),
            ),
        }
        let mut batch: Batch<'s> = *self;
        if !skipped.segments.is_empty() {
            stand_ins.segments.clear();
            stand_ins.segments.extend_from_slice(self.segments);
            let stand_in = validate::stand_in_segment(&stand_ins.segments, &skipped.segments);
            for e in &skipped.segments {
                stand_ins.segments[e.index] = stand_in;
            }
            filters_without(
                &mut stand_ins.segment_filters,
                self.segment_filters,
                self.segments.len(),
                &skipped.segments,
            );
        }
        if !skipped.rects.is_empty() {
            if self.rect_set.is_none() {
                stand_ins.rects.clear();
                stand_ins.rects.extend_from_slice(self.rects);
                let stand_in = validate::stand_in_rect(&stand_ins.rects, &skipped.rects);
                for e in &skipped.rects {
                    stand_ins.rects[e.index] = stand_in;
                }
            }
            filters_without(
                &mut stand_ins.rect_filters,
                self.rect_filters,
                self.rects.len(),
                &skipped.rects,
            );
        }
        let stand_ins: &'s StandIns = stand_ins;
        if !skipped.segments.is_empty() {
            batch.segments = &stand_ins.segments;
            batch.segment_filters = Some(&stand_ins.segment_filters);
        }
        if !skipped.rects.is_empty() {
            if self.rect_set.is_none() {
                batch.rects = &stand_ins.rects;
            }
            batch.rect_filters = Some(&stand_ins.rect_filters);
        }
        Ok(batch)
    }
}

/// Hits per segment and per target (damage per enemy): of the pairs a [`Batch`] tests (rects),
/// or of segments × shapes ([`crate::Engine::shape_counts`], [`crate::Engine::polygon_counts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `per_segment[s]`: the targets segment `s` hits.
    pub per_segment: Vec<u32>,
    /// `per_target[r]`: the segments that hit target `r` (a rect, wall, circle or polygon).
    pub per_target: Vec<u64>,
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

    /// The clipped part of `s` in `r`, from the pair's result (computed on the host, so both
    /// backends return the same bits).
    ///
    /// - An end inside the rect is kept exactly.
    /// - A clipped end lies exactly on the side it crosses (x = min_x for `min_x`), and its other
    ///   coordinate is the exact crossing point's, rounded to the nearest f32 (ties to even):
    ///   `y0 + (min_x − x0)·(y1 − y0) / (x1 − x0)` for `min_x`. The exact point is on the rect's
    ///   boundary and rounding is monotone, so the clipped segment is always in the closed rect.
    /// - A segment touching or crossing at a corner clips to that corner exactly.
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
            clipped_point(s, r, result.entry_sides(), (s.x0, s.y0))
        };
        let (x1, y1) = if result.end_inside() {
            (s.x1, s.y1)
        } else {
            clipped_point(s, r, result.exit_sides(), (s.x1, s.y1))
        };
        Self {
            result,
            segment: Some(Segment::new(x0, y0, x1, y1)),
        }
    }
}

/// Where the segment crosses the sides `sides` (a hit's entry or exit sides): the side's bound
/// on its axis, the exact crossing rounded on the other (both bounds at a corner). `end` for a
/// result that names no side (none the contract produces).
fn clipped_point(s: &Segment, r: &Rect, sides: Sides, end: (f32, f32)) -> (f32, f32) {
    let side_x = if sides.contains(Sides::MIN_X) {
        Some(r.min_x)
    } else if sides.contains(Sides::MAX_X) {
        Some(r.max_x)
    } else {
        None
    };
    let side_y = if sides.contains(Sides::MIN_Y) {
        Some(r.min_y)
    } else if sides.contains(Sides::MAX_Y) {
        Some(r.max_y)
    } else {
        None
    };
    let (p0, p1) = ((s.x0, s.y0), (s.x1, s.y1));
    let swap = |(a, b): (f32, f32)| (b, a);
    match (side_x, side_y) {
        (Some(x), Some(y)) => (x, y),
        (Some(x), None) => (x, crossing_point_exact(x, p0, p1, r.min_y, r.max_y)),
        (None, Some(y)) => (
            crossing_point_exact(y, swap(p0), swap(p1), r.min_x, r.max_x),
            y,
        ),
        (None, None) => end,
    }
}
