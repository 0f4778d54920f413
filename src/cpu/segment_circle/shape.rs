//! Circles through the seam ([`crate::Shape`]): the scalar function, its filters and its kernel.

use super::Circle;
use super::filters::{circle_filtered, circle_hit_lanes, circle_starts_inside};
use super::narrow::{circle_narrow, narrow_meeting};
use super::verdict::bounds::{VERDICT_FLOOR, VERDICT_LARGEST, VERDICT_RELATIVE, VERDICT_SMALLEST};
use super::{
    CircleContact, CircleKind, HALF_BITS, ONE_BITS, SEARCH_STEPS, circle_meeting, segment_circle,
};
use crate::cpu::lanes::{HitLanes, LaneVerdicts};
use crate::error::{InputArray, InputError, Problem};
use crate::gpu::{Emulation, shader};
use crate::shape::{Outline, Shape, ShapeKernel, ShapeRecord};
use crate::types::{Rect, Segment};
use crate::validate;

/// The kernel: `shaders/segment_circle.wgsl` (the per-pair function on exact integers, and the
/// hooks of the passes over queries × circles), between the same files as the walls'.
const SOURCE: &str = crate::shape::kernel_source!(reduces: "segment_circle.wgsl");
const GRID_SOURCE: &str = crate::shape::kernel_source!(grid: "segment_circle.wgsl");

crate::shape::contact_with_times!(CircleContact, "kind", kind: CircleKind);

/// A closed disk: segment × circle (docs/semantics.md, "Segment × circle").
impl Shape for Circle {
    type Contact = CircleContact;
    const MISS: CircleContact = CircleContact::MISS;
    const ARRAY: InputArray = InputArray::Circles;
    const KERNEL: ShapeKernel = ShapeKernel::passes("segment_circle.wgsl", SOURCE, GRID_SOURCE);

    fn exact(query: &Segment, circle: &Circle) -> CircleContact {
        segment_circle(query, circle)
    }

    /// The float filter, then the narrow integers: `None` only for the pairs that need the
    /// wide ones.
    fn filtered(query: &Segment, circle: &Circle) -> Option<CircleContact> {
        circle_filtered(query, circle).or_else(|| circle_narrow(query, circle))
    }

    /// The float filter's contact, else the hit and kind alone on the narrow integers, else on
    /// the wide ones: no roots searched (what counts ask).
    fn hit(query: &Segment, circle: &Circle) -> bool {
        circle_filtered(query, circle)
            .or_else(|| narrow_meeting(query, circle, false))
            .unwrap_or_else(|| circle_meeting(query, circle, false))
            .hit()
    }

    const HIT_LANES: bool = true;

    /// Center and radius (the filter squares it in f64, exactly: 24 bits squared).
    fn lane_values(&self) -> [f32; 4] {
        [self.cx, self.cy, self.r, 0.0]
    }

    #[inline(always)]
    fn hit_lanes(query: &Segment, circles: &HitLanes) -> LaneVerdicts {
        circle_hit_lanes(query, circles)
    }

    #[inline(always)]
    fn starts_inside(query: &Segment, values: &[f32; 4]) -> bool {
        circle_starts_inside(query, values)
    }

    /// `cx ± r` and `cy ± r`, each rounded outward: the f64 difference is within 2^-53 of
    /// the exact one, and a step of one f32 away covers that and the f32 rounding.
    fn bounds(&self) -> Rect {
        let outward = |v: f64, down: bool| {
            let v = v as f32;
            if down { v.next_down() } else { v.next_up() }
        };
        let (cx, cy, r) = (self.cx as f64, self.cy as f64, self.r as f64);
        Rect::new(
            outward(cx - r, true),
            outward(cy - r, true),
            outward(cx + r, false),
            outward(cy + r, false),
        )
    }

    fn check(index: usize, circle: &Circle) -> Result<(), InputError> {
        check_circle(index, circle)
    }

    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)> {
        let mut constants = shader::shape_passes_constants(emulation);
        constants.extend([
            ("KIND_MISS", CircleKind::Miss.code() as f64),
            ("KIND_INSIDE", CircleKind::Inside.code() as f64),
            ("KIND_ENTER", CircleKind::Enter.code() as f64),
            ("KIND_EXIT", CircleKind::Exit.code() as f64),
            ("KIND_CROSS", CircleKind::Cross.code() as f64),
            ("KIND_TANGENT", CircleKind::Tangent.code() as f64),
            ("ONE_BITS", ONE_BITS as f64),
            ("HALF_BITS", HALF_BITS as f64),
            ("SEARCH_STEPS", SEARCH_STEPS as f64),
            (
                "NARROW_PROBE_SHIFT",
                super::narrow::NARROW_PROBE_SHIFT as f64,
            ),
            ("VERDICT_RELATIVE", VERDICT_RELATIVE as f64),
            ("VERDICT_FLOOR", VERDICT_FLOOR as f64),
            ("VERDICT_SMALLEST_BITS", VERDICT_SMALLEST.to_bits() as f64),
            ("VERDICT_LARGEST_BITS", VERDICT_LARGEST.to_bits() as f64),
        ]);
        shader::with_shape_queries(constants)
    }
}

/// A circle's record: its center and radius.
impl ShapeRecord for Circle {
    const NAME: &'static str = "circle";
    const PLURAL: &'static str = "circles";
    const ABOUT: &'static str = "closed disks";
    const FIELDS: &'static [&'static str] = &["cx", "cy", "r"];

    fn from_record([cx, cy, r, _]: [f32; 4]) -> Circle {
        Circle::new(cx, cy, r)
    }

    const LINES: bool = false;

    fn outline(&self) -> Outline {
        Outline::Disk([self.cx, self.cy], self.r)
    }
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
    if validate::skipped() {
        return Ok(());
    }
    let a = InputArray::Circles;
    validate::check_value(a, index, "cx", c.cx)?;
    validate::check_value(a, index, "cy", c.cy)?;
    validate::check_value(a, index, "r", c.r)?;
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
