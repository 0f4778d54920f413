//! Polygons through the seam ([`crate::Shape`]), one edge at a time: the per-edge function, its
//! filter and its kernel. The host gathers each polygon's edges ([`super::polygon_contact`]).

use super::filters::edge_filtered;
use super::{EdgeContact, PolygonContact, PolygonEdge, edge_ends, polygon_edge};
use crate::error::{InputArray, InputError};
use crate::gpu::Emulation;
use crate::shape::{Shape, ShapeKernel};
use crate::types::{Rect, Segment};
use crate::validate;

/// The kernel, one edge at a time: `shaders/segment_polygon.wgsl` (the per-edge function and
/// its own dense entry point over the tile's queries × polygon edges), after the walls' file
/// (its `segment_segment`) and what that builds on, then the tile of the passes. Polygons gather
/// their edges on the host, so the queries over shapes' contacts are not part of it.
const SOURCE: &str = crate::shape::kernel_source!("segment_segment.wgsl", "segment_polygon.wgsl");

/// The kernel through the grid: [`SOURCE`], the walk, then `shaders/polygon_grid.wgsl` (each
/// listed candidate's edges' contacts, which the host gathers as it gathers the dense pairs').
const GRID_SOURCE: &str = concat!(
    crate::shape::kernel_source!("segment_segment.wgsl", "segment_polygon.wgsl"),
    "\n",
    crate::shape::kernel_source!(walk),
    "\n",
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/shaders/polygon_grid.wgsl"
    ))
);

crate::shape::contact_with_times!(EdgeContact, "contact", contact: crate::Contact);

crate::shape::contact_with_times!(PolygonContact, "kind", kind: crate::Kind);

/// One edge of a polygon, with its polygon's box: segment × polygon runs as segment × edge
/// ([`polygon_edge`]), and the host gathers each polygon's edges
/// ([`crate::cpu::segment_polygon::polygon_contact`]; docs/semantics.md, "Segment × polygon").
impl Shape for PolygonEdge {
    type Contact = EdgeContact;
    const MISS: EdgeContact = EdgeContact::MISS;
    const ARRAY: InputArray = InputArray::Polygons;
    const KERNEL: ShapeKernel = ShapeKernel {
        file: "segment_polygon.wgsl",
        source: SOURCE,
        entry: "polygon_edges_dense",
        listed: None,
        counts: None,
        reduces: false,
        grid: Some(GRID_SOURCE),
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
        let mut constants = crate::cpu::segment_segment::kernel_constants(emulation);
        constants.extend([
            ("EDGE_START_ON", edge_ends::START_ON as f64),
            ("EDGE_START_RAY", edge_ends::START_RAY as f64),
            ("EDGE_END_SHIFT", edge_ends::END_SHIFT as f64),
            ("EDGE_HOST", edge_ends::HOST as f64),
        ]);
        constants
    }
}
