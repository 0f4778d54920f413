//! Segment × polygon where floating point certifies the answer, edge by edge: the CPU batch
//! path's filters (always certain, with the wall's exact function as their fallback).

use super::{EdgeContact, PolygonContact, PolygonEdge, edge_ends, polygon_contact};
use crate::cpu::segment_segment::filters::{contact_filtered, wall_hit};
use crate::cpu::segment_segment::narrow::contact_narrow;
use crate::cpu::segment_segment::{SegmentContact, segment_segment};
use crate::types::Segment;

/// [`crate::segment_polygon`]'s answer for one polygon (its edges, in order), through
/// [`edge_filtered`]; `contacts` is scratch space.
pub(crate) fn polygon_filtered(
    query: &Segment,
    edges: &[PolygonEdge],
    contacts: &mut Vec<EdgeContact>,
) -> PolygonContact {
    contacts.clear();
    contacts.extend(
        edges
            .iter()
            .map(|e| edge_filtered(query, e).expect("always certain")),
    );
    polygon_contact(query, edges, contacts)
}

/// [`crate::segment_polygon`]'s hit alone, exact and without t, for one polygon (its edges, in
/// order, a valid ring's): the query meets an edge ([`wall_hit`]), or its start lies inside,
/// an odd number of edges crossing the ray from it towards +x, counted as [`edge_filtered`]
/// counts them. A query that meets no edge lies wholly inside the ring or wholly outside (the
/// boundary separates them), so its start decides; and a start on no edge has a nonzero
/// orientation against every edge that straddles its y. Counts ask only this: the contact's
/// t, its exact tie-breaks and its scratch space are not computed.
pub fn polygon_hit(query: &Segment, edges: &[PolygonEdge]) -> bool {
    let Some(first) = edges.first() else {
        return false;
    };
    let b = &first.polygon;
    if query.x0.max(query.x1) < b.min_x
        || b.max_x < query.x0.min(query.x1)
        || query.y0.max(query.y1) < b.min_y
        || b.max_y < query.y0.min(query.y1)
    {
        return false;
    }
    let (x, y) = (query.x0, query.y0);
    let mut rays = 0u32;
    for edge in edges {
        let e = &edge.edge;
        if wall_hit(query, e) {
            return true;
        }
        if (e.y0 > y) == (e.y1 > y) || x > e.x0.max(e.x1) {
            continue;
        }
        let crosses = x < e.x0.min(e.x1) || {
            let coord = |x: f32, y: f32| robust::Coord {
                x: x as f64,
                y: y as f64,
            };
            let orientation = robust::orient2d(coord(e.x0, e.y0), coord(e.x1, e.y1), coord(x, y));
            (e.y1 > y) != (orientation < 0.0)
        };
        rays += crosses as u32;
    }
    rays % 2 == 1
}

/// [`crate::polygon_edge`]'s answer, always certain: the ends' orientations are exact signs of
/// f32 points in f64 (`robust`), and the contact is [`contact_filtered`]'s, or where that cannot
/// tell [`contact_narrow`]'s, or the exact function's beyond the narrow integers' reach. The same comparisons as the kernel, on plain floats (the
/// CPU compares f32 values exactly).
pub fn edge_filtered(query: &Segment, edge: &PolygonEdge) -> Option<EdgeContact> {
    let b = &edge.polygon;
    let apart = |v0: f32, v1: f32, lo: f32, hi: f32| (v0 < lo && v1 < lo) || (v0 > hi && v1 > hi);
    if apart(query.x0, query.x1, b.min_x, b.max_x) || apart(query.y0, query.y1, b.min_y, b.max_y) {
        return Some(EdgeContact::MISS);
    }
    let e = &edge.edge;
    let (lo_x, hi_x) = (e.x0.min(e.x1), e.x0.max(e.x1));
    let (lo_y, hi_y) = (e.y0.min(e.y1), e.y0.max(e.y1));
    let coord = |x: f32, y: f32| robust::Coord {
        x: x as f64,
        y: y as f64,
    };
    let mut ends = 0;
    for (k, (x, y)) in [(query.x0, query.y0), (query.x1, query.y1)]
        .into_iter()
        .enumerate()
    {
        let shift = edge_ends::END_SHIFT * k as u32;
        let straddles = (e.y0 > y) != (e.y1 > y);
        if lo_x <= x && x <= hi_x && lo_y <= y && y <= hi_y {
            let orientation = robust::orient2d(coord(e.x0, e.y0), coord(e.x1, e.y1), coord(x, y));
            if orientation == 0.0 {
                ends |= edge_ends::START_ON << shift;
            } else if straddles && (e.y1 > y) != (orientation < 0.0) {
                ends |= edge_ends::START_RAY << shift;
            }
        } else if straddles && x < lo_x {
            ends |= edge_ends::START_RAY << shift;
        }
    }
    let contact = if apart(query.x0, query.x1, lo_x, hi_x) || apart(query.y0, query.y1, lo_y, hi_y)
    {
        SegmentContact::MISS
    } else {
        contact_filtered(query, e)
            .or_else(|| contact_narrow(query, e))
            .unwrap_or_else(|| segment_segment(query, e))
    };
    Some(EdgeContact {
        t_enter: contact.t_enter,
        t_exit: contact.t_exit,
        contact: contact.contact,
        ends,
    })
}
