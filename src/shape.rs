//! The seam every shape after rectangles goes through: one kernel file in `shaders/`, its CPU
//! mirror in `src/cpu/`, and one [`Shape`] impl here. The engine's dense query
//! ([`crate::Engine::shape_pairs`]), its validation, the CPU batch path and the GPU host
//! (`gpu::shapes`) are written once, over this trait.
//!
//! Rectangles keep their own, older path (filters on the GPU, the broad phase, every query).

use bytemuck::Pod;

use crate::cpu::batched::{
    circle_filtered, circle_hit_lanes, contact_filtered, edge_filtered, wall_hit, wall_hit_lanes,
};
use crate::cpu::lanes::{HitLanes, LaneVerdicts};
use crate::cpu::segment_circle::{CircleContact, segment_circle};
use crate::cpu::segment_polygon::{EdgeContact, PolygonContact, PolygonEdge, polygon_edge};
use crate::cpu::segment_segment::{SegmentContact, segment_segment};
use crate::error::{InputArray, InputError};
use crate::gpu::Emulation;
use crate::gpu::shader;
use crate::types::{Circle, Rect, Segment};
use crate::validate;

/// A shape's per-pair result, as the queries over shapes read it.
pub trait ShapeContact: Pod + Send + Sync + PartialEq + std::fmt::Debug {
    /// Whether the segment meets the shape.
    fn hit(&self) -> bool;
    /// The first t of the segment at the shape (0 on a miss).
    fn t_enter(&self) -> f32;
    /// The last t of the segment at the shape (0 on a miss).
    fn t_exit(&self) -> f32;
}

impl ShapeContact for SegmentContact {
    fn hit(&self) -> bool {
        SegmentContact::hit(self)
    }

    fn t_enter(&self) -> f32 {
        self.t_enter
    }

    fn t_exit(&self) -> f32 {
        self.t_exit
    }
}

impl ShapeContact for CircleContact {
    fn hit(&self) -> bool {
        CircleContact::hit(self)
    }

    fn t_enter(&self) -> f32 {
        self.t_enter
    }

    fn t_exit(&self) -> f32 {
        self.t_exit
    }
}

impl ShapeContact for EdgeContact {
    fn hit(&self) -> bool {
        EdgeContact::hit(self)
    }

    fn t_enter(&self) -> f32 {
        self.t_enter
    }

    fn t_exit(&self) -> f32 {
        self.t_exit
    }
}

impl ShapeContact for PolygonContact {
    fn hit(&self) -> bool {
        PolygonContact::hit(self)
    }

    fn t_enter(&self) -> f32 {
        self.t_enter
    }

    fn t_exit(&self) -> f32 {
        self.t_exit
    }
}

/// One hitting (segment, shape) pair of a query over shapes
/// ([`crate::Engine::shape_hits`], [`crate::Engine::shape_first_hits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit<C> {
    pub segment: u32,
    pub shape: u32,
    pub contact: C,
}

/// A shape a query segment is tested against, exactly, on the CPU and the GPU.
pub trait Shape: Pod + Send + Sync + 'static {
    /// The result of one (query segment, shape) pair: GPU-ready, as the kernel writes it.
    type Contact: ShapeContact;
    /// The result of a pair that does not meet.
    const MISS: Self::Contact;
    /// What errors call an element of the shapes' array.
    const ARRAY: InputArray;
    /// The kernel: its composed source, file and dense entry point.
    const KERNEL: ShapeKernel;

    /// The contract's answer (the scalar CPU function, which the kernel mirrors).
    fn exact(query: &Segment, shape: &Self) -> Self::Contact;

    /// The same answer where floating point certifies it, `None` where only the exact path
    /// can tell: the CPU batch path's filter.
    fn filtered(query: &Segment, shape: &Self) -> Option<Self::Contact>;

    /// Whether the segment meets the shape, exactly: [`Shape::exact`]'s hit, which a shape may
    /// decide for less than the whole contact (the CPU's counts ask only this).
    fn hit(query: &Segment, shape: &Self) -> bool {
        Self::filtered(query, shape)
            .unwrap_or_else(|| Self::exact(query, shape))
            .hit()
    }

    /// Whether the shape has a lane filter of its own ([`Shape::hit_lanes`]); without one the
    /// CPU batch path sends every candidate of the box cull to [`Shape::filtered`].
    const HIT_LANES: bool = false;

    /// What the lane filter reads of the shape: up to four values.
    fn lane_values(&self) -> [f32; 4] {
        [0.0; 4]
    }

    /// The hit alone, for one query and sixteen shapes ([`HitLanes`], from
    /// [`Shape::lane_values`]): the lanes where floating point certifies a hit, and those only
    /// the exact path can tell; the others miss, certainly. The CPU batch path's second cull
    /// (`cpu::lanes`), compiled once per SIMD level: write it over the lanes without branches,
    /// so that it vectorises.
    #[inline(always)]
    fn hit_lanes(query: &Segment, shapes: &HitLanes) -> LaneVerdicts {
        let _ = (query, shapes);
        LaneVerdicts::UNSURE
    }

    /// A closed box that holds the shape: a segment whose box misses it misses the shape, and
    /// the CPU batch path culls such pairs sixteen at a time before any other work.
    fn bounds(&self) -> Rect;

    /// Checks one shape against the input domain; `index` is its place in its array.
    ///
    /// # Errors
    /// The first bad field, named.
    fn check(index: usize, shape: &Self) -> Result<(), InputError>;

    /// The overridable constants of the kernel, for one emulation mode (tests only;
    /// [`Emulation::Native`] otherwise).
    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)>;
}

/// Where a shape's kernel lives.
#[derive(Clone, Copy, Debug)]
pub struct ShapeKernel {
    /// Its file in `shaders/`.
    pub file: &'static str,
    /// The source the pipeline compiles: the file after what it builds on.
    pub source: &'static str,
    /// The dense entry point over queries × shapes.
    pub entry: &'static str,
    /// The dense entry point's second pass, if the kernel has one: the dense entry point then
    /// answers only the pairs it can at once and lists the others (`list_pair`,
    /// `shaders/exact.wgsl`), and this one takes the list, so that the exact path's invocations
    /// run side by side. Without one, the dense entry point answers every pair itself.
    pub listed: Option<&'static str>,
    /// The counts entry point, if the kernel has one: each pair's hit without its t, summed per
    /// query and per shape on the GPU (bindings 5 and 6 of `shaders/exact.wgsl`). Without one,
    /// the GPU's counts reduce the dense pairs.
    pub counts: Option<&'static str>,
    /// Whether the source ends with `shaders/shape_queries.wgsl`, which reduces a tile's dense
    /// pairs on the GPU to each query's first hit (`shape_first_hits`) or to the hits alone
    /// (`shape_hit_list`). It reads the kernel's contacts through the kernel file's `Contact` alias
    /// and `contact_hit`. Without it, the host reduces the dense pairs it reads back.
    pub reduces: bool,
}

/// A wall: segment × segment (docs/semantics.md, "Segment × segment").
impl Shape for Segment {
    type Contact = SegmentContact;
    const MISS: SegmentContact = SegmentContact::MISS;
    const ARRAY: InputArray = InputArray::Walls;
    const KERNEL: ShapeKernel = ShapeKernel {
        file: "segment_segment.wgsl",
        source: shader::SEGMENT_SEGMENT_WGSL,
        entry: "wall_pairs_dense",
        listed: Some("wall_pairs_listed"),
        counts: Some("wall_counts"),
        reduces: true,
    };

    fn exact(query: &Segment, wall: &Segment) -> SegmentContact {
        segment_segment(query, wall)
    }

    fn filtered(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
        contact_filtered(query, wall)
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
        shader::segment_segment_constants(emulation)
    }
}

/// A closed disk: segment × circle (docs/semantics.md, "Segment × circle").
impl Shape for Circle {
    type Contact = CircleContact;
    const MISS: CircleContact = CircleContact::MISS;
    const ARRAY: InputArray = InputArray::Circles;
    const KERNEL: ShapeKernel = ShapeKernel {
        file: "segment_circle.wgsl",
        source: shader::SEGMENT_CIRCLE_WGSL,
        entry: "circle_pairs_dense",
        listed: Some("circle_pairs_listed"),
        counts: Some("circle_counts"),
        reduces: true,
    };

    fn exact(query: &Segment, circle: &Circle) -> CircleContact {
        segment_circle(query, circle)
    }

    fn filtered(query: &Segment, circle: &Circle) -> Option<CircleContact> {
        circle_filtered(query, circle)
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
        validate::check_circle(index, circle)
    }

    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)> {
        shader::segment_circle_constants(emulation)
    }
}

/// One edge of a polygon, with its polygon's box: segment × polygon runs as segment × edge
/// ([`polygon_edge`]), and the host gathers each polygon's edges
/// ([`crate::cpu::segment_polygon::polygon_contact`]; docs/semantics.md, "Segment × polygon").
impl Shape for PolygonEdge {
    type Contact = EdgeContact;
    const MISS: EdgeContact = EdgeContact::MISS;
    const ARRAY: InputArray = InputArray::Polygons;
    const KERNEL: ShapeKernel = ShapeKernel {
        file: "segment_polygon.wgsl",
        source: shader::SEGMENT_POLYGON_WGSL,
        entry: "polygon_edges_dense",
        listed: None,
        counts: None,
        reduces: false,
    };

    fn exact(query: &Segment, edge: &PolygonEdge) -> EdgeContact {
        polygon_edge(query, edge)
    }

    fn filtered(query: &Segment, edge: &PolygonEdge) -> Option<EdgeContact> {
        edge_filtered(query, edge)
    }

    /// The polygon's box (not the edge's): a query apart from it gets no bits from any edge.
    fn bounds(&self) -> Rect {
        self.polygon
    }

    /// Its values, as a segment's: polygons are checked whole when built ([`crate::Polygons`]).
    fn check(index: usize, edge: &PolygonEdge) -> Result<(), InputError> {
        validate::check_segment_of(InputArray::Polygons, index, &edge.edge)?;
        let b = &edge.polygon;
        let corners = Segment::new(b.min_x, b.min_y, b.max_x, b.max_y);
        validate::check_segment_of(InputArray::Polygons, index, &corners)
    }

    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)> {
        shader::segment_polygon_constants(emulation)
    }
}
