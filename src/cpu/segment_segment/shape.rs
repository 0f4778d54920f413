//! Walls through the seam ([`crate::Shape`]): the scalar function, its filters and its kernel.

use super::filters::{contact_filtered, wall_hit, wall_hit_lanes};
use super::narrow::contact_narrow;
use super::{Contact, SegmentContact, segment_segment};
use crate::cpu::lanes::{HitLanes, LaneVerdicts};
use crate::error::{InputArray, InputError};
use crate::gpu::Emulation;
use crate::gpu::shader::{self, Constants};
use crate::shape::{Outline, Shape, ShapeKernel, ShapeRecord};
use crate::types::{Rect, Segment};
use crate::validate;

/// The kernel: `shaders/segment_segment.wgsl` (the per-pair function, and the hooks of the
/// passes over queries × walls) after what it builds on, then the passes and the queries
/// reduced from its contacts.
const SOURCE: &str = crate::shape::kernel_source!(reduces: "segment_segment.wgsl");
const GRID_SOURCE: &str = crate::shape::kernel_source!(grid: "segment_segment.wgsl");

/// The overridable constants of `shaders/segment_segment.wgsl` and what it builds on (the
/// polygons' kernel builds on it too).
pub(crate) fn kernel_constants(emulation: Emulation) -> Constants {
    let mut constants = shader::shape_passes_constants(emulation);
    constants.extend([
        ("CONTACT_MISS", Contact::Miss.code() as f64),
        ("CONTACT_CROSS", Contact::Cross.code() as f64),
        ("CONTACT_TOUCH", Contact::Touch.code() as f64),
        ("CONTACT_OVERLAP", Contact::Overlap.code() as f64),
    ]);
    constants
}

crate::shape::contact_with_times!(SegmentContact, "contact", contact: super::Contact);

/// A wall: segment × segment (docs/semantics.md, "Segment × segment").
impl Shape for Segment {
    type Contact = SegmentContact;
    const MISS: SegmentContact = SegmentContact::MISS;
    const ARRAY: InputArray = InputArray::Walls;
    const KERNEL: ShapeKernel = ShapeKernel::passes("segment_segment.wgsl", SOURCE, GRID_SOURCE);

    fn exact(query: &Segment, wall: &Segment) -> SegmentContact {
        segment_segment(query, wall)
    }

    /// The float filter, then the narrow integers: `None` only for the pairs that need the
    /// wide ones.
    fn filtered(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
        contact_filtered(query, wall).or_else(|| contact_narrow(query, wall))
    }

    /// Exact orientation signs alone, no t.
    fn hit(query: &Segment, wall: &Segment) -> bool {
        wall_hit(query, wall)
    }

    const HIT_LANES: bool = true;

    fn lane_values(&self) -> [f32; 4] {
        [self.x0, self.y0, self.x1, self.y1]
    }

    #[inline(always)]
    fn hit_lanes(query: &Segment, walls: &HitLanes) -> LaneVerdicts {
        wall_hit_lanes(query, walls)
    }

    fn paths(walls: &[Segment]) -> Option<&[Segment]> {
        Some(walls)
    }

    fn bounds(&self) -> Rect {
        Rect::new(
            self.x0.min(self.x1),
            self.y0.min(self.y1),
            self.x0.max(self.x1),
            self.y0.max(self.y1),
        )
    }

    fn check(index: usize, wall: &Segment) -> Result<(), InputError> {
        validate::check_segment_of(InputArray::Walls, index, wall)
    }

    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)> {
        shader::with_shape_queries(kernel_constants(emulation))
    }
}

/// Walls are read as segments are: their two ends.
impl ShapeRecord for Segment {
    const NAME: &'static str = "wall";
    const PLURAL: &'static str = "walls";
    const ABOUT: &'static str = "segments";
    const FIELDS: &'static [&'static str] = &["x0", "y0", "x1", "y1"];

    fn from_record([x0, y0, x1, y1]: [f32; 4]) -> Segment {
        Segment::new(x0, y0, x1, y1)
    }

    const LINES: bool = true;

    fn outline(&self) -> Outline {
        Outline::Line([self.x0, self.y0], [self.x1, self.y1])
    }
}

/// Checks every wall of a segment × segment query as [`validate::check_segment`] does a segment.
pub fn check_walls(walls: &[Segment]) -> Result<(), InputError> {
    for (i, wall) in walls.iter().enumerate() {
        validate::check_segment_of(InputArray::Walls, i, wall)?;
    }
    Ok(())
}
