//! The segment × polygon contract's executable form (docs/semantics.md, "Segment × polygon"),
//! and polygon × polygon overlap built on it.
//!
//! A polygon is decided edge by edge: for each edge, where the query meets it
//! ([`crate::segment_segment`], exact, t correctly rounded), and for each end of the query,
//! whether it lies on the edge and whether the edge crosses the ray from it towards +x (exact
//! orientation signs on the integers of [`super::exact`]). That per-edge function,
//! [`polygon_edge`], is the CPU mirror of `shaders/segment_polygon.wgsl`: one GPU invocation
//! per (query, edge), within a software GPU's loop budget whatever the polygon's size. The
//! polygon's answer, [`polygon_contact`], gathers its edges on the host for either backend: an
//! end is in the polygon when it is on an edge or an odd number of edges cross its ray;
//! t_enter is 0 for a start inside, else the smallest t at which the query meets an edge (the
//! first point inside is on the boundary); t_exit likewise.

pub mod filters;
mod polygons;
mod shape;
mod simple_ring;

pub use polygons::{Polygons, check_ring};

use bytemuck::{Pod, Zeroable};

use super::exact::{
    BigPoint, big_from_f32, big_is_negative, big_is_zero, big_mul, big_sub, difference,
    double_compare, double_mul,
};
use super::narrow::{
    narrow_cross, narrow_difference, narrow_is_negative, narrow_is_zero, ratio_below, scaled_values,
};
use super::segment_rect::order_key;
use super::segment_segment::narrow::{contact_narrow, narrow_ratios};
use super::segment_segment::{
    Contact, SegmentContact, WALLS_APART, segment_segment, segment_segment_ratios, wall_verdict,
};
use crate::types::{Kind, Rect, Segment};

/// The bits of [`EdgeContact::ends`]: for each end of the query, whether it lies on the edge
/// and whether the edge crosses the ray from it towards +x (counted half-open in y, so a ray
/// through a vertex counts once). The end's bits are the start's shifted by
/// `END_SHIFT`. WGSL gets them as overrides.
pub mod edge_ends {
    /// The query's start lies on the edge.
    pub const START_ON: u32 = 1;
    /// The edge crosses the ray from the query's start towards +x.
    pub const START_RAY: u32 = 2;
    /// Where the end's bits are.
    pub const END_SHIFT: u32 = 2;
    /// The query's end lies on the edge.
    pub const END_ON: u32 = START_ON << END_SHIFT;
    /// The edge crosses the ray from the query's end towards +x.
    pub const END_RAY: u32 = START_RAY << END_SHIFT;
    /// The GPU's alone, never in an answer: the pair's values span more binary orders than the
    /// kernel's narrow integers reach, so the host decides it ([`super::polygon_edge`]).
    pub const HOST: u32 = 1 << 4;
}

/// One edge of a polygon, with the polygon's box: what the GPU reads per edge (32 bytes).
/// WGSL `PolygonEdge`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PolygonEdge {
    /// From the polygon's vertex k to vertex k + 1.
    pub edge: Segment,
    /// The polygon's box: a query apart from it meets no edge and has both ends outside.
    pub polygon: Rect,
}

const _: () = assert!(size_of::<PolygonEdge>() == 32);

/// A query against one edge of a polygon (16 bytes). WGSL `EdgeContact`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct EdgeContact {
    /// Where the query meets the edge: [`SegmentContact`]'s fields.
    pub t_enter: f32,
    pub t_exit: f32,
    pub contact: u32,
    /// [`edge_ends`] bits.
    pub ends: u32,
}

const _: () = assert!(size_of::<EdgeContact>() == 16);

impl EdgeContact {
    pub const MISS: Self = Self {
        t_enter: 0.0,
        t_exit: 0.0,
        contact: 0,
        ends: 0,
    };

    /// Whether the query meets the edge itself.
    pub fn hit(&self) -> bool {
        self.contact != 0
    }

    /// How the query meets the edge itself.
    pub fn contact(&self) -> Contact {
        Contact::from_code(self.contact)
    }

    /// Where the query meets the edge, as a wall's ([`SegmentContact::boundary`]).
    pub fn boundary(&self) -> (bool, bool) {
        let contact = self.contact();
        (contact != Contact::Miss, contact == Contact::Overlap)
    }
}

/// Every edge of every polygon, in order (a polygon's ring after ring), each with its polygon's
/// box.
pub fn polygon_edges(polygons: &Polygons) -> Vec<PolygonEdge> {
    let mut edges = Vec::with_capacity(polygons.edge_count());
    for i in 0..polygons.len() {
        let bounds = polygons.bounds(i);
        for ring in polygons.rings_of(i) {
            ring_edges(ring, bounds, &mut edges);
        }
    }
    edges
}

fn ring_edges(ring: &[[f32; 2]], polygon: Rect, edges: &mut Vec<PolygonEdge>) {
    let n = ring.len();
    for k in 0..n {
        let ([x0, y0], [x1, y1]) = (ring[k], ring[(k + 1) % n]);
        edges.push(PolygonEdge {
            edge: Segment::new(x0, y0, x1, y1),
            polygon,
        });
    }
}

/// Whether a segment's box and box `b` are apart, on order keys (exact on any GPU, flushed
/// subnormals or not): the kernel's test for the polygon's box, whose answer changes the
/// per-edge bits, so it must be exact.
fn apart(s: &Segment, b: &Rect) -> bool {
    let (x0, x1) = (order_key(s.x0), order_key(s.x1));
    let (y0, y1) = (order_key(s.y0), order_key(s.y1));
    (x0 < order_key(b.min_x) && x1 < order_key(b.min_x))
        || (x0 > order_key(b.max_x) && x1 > order_key(b.max_x))
        || (y0 < order_key(b.min_y) && y1 < order_key(b.min_y))
        || (y0 > order_key(b.max_y) && y1 > order_key(b.max_y))
}

/// The ends' bits of one edge ([`edge_ends`]), exactly: plain comparisons on order keys
/// first, then the orientation (b − a) × (p − a) exactly (`orientation_sign`) for an end
/// within the edge's box.
pub fn end_flags(query: &Segment, edge: &Segment) -> u32 {
    let px = [query.x0, query.x1];
    let py = [query.y0, query.y1];
    let (ax, ay) = (order_key(edge.x0), order_key(edge.y0));
    let (bx, by) = (order_key(edge.x1), order_key(edge.y1));
    let (lo_x, hi_x) = (ax.min(bx), ax.max(bx));
    let (lo_y, hi_y) = (ay.min(by), ay.max(by));
    let mut flags = 0u32;
    let mut straddles = [false; 2];
    let mut needs_sign = [false; 2];
    for k in 0..2 {
        let x = order_key(px[k]);
        let y = order_key(py[k]);
        // The edge crosses the end's horizontal line, counted half-open: one end above, the
        // other at or below.
        straddles[k] = (ay > y) != (by > y);
        let in_box = lo_x <= x && x <= hi_x && lo_y <= y && y <= hi_y;
        if in_box {
            needs_sign[k] = true;
        } else if straddles[k] && x < lo_x {
            flags |= edge_ends::START_RAY << (edge_ends::END_SHIFT * k as u32);
        }
    }
    for k in 0..2 {
        if !needs_sign[k] {
            continue;
        }
        let orientation = orientation_sign(edge, px[k], py[k]);
        let shift = edge_ends::END_SHIFT * k as u32;
        if orientation == 0 {
            // On the edge's line and within its box: on the edge.
            flags |= edge_ends::START_ON << shift;
        } else if straddles[k] && (by > order_key(py[k])) != (orientation < 0) {
            // Left of an upward edge, or right of a downward one: the crossing is beyond the
            // end in +x.
            flags |= edge_ends::START_RAY << shift;
        }
    }
    flags
}

/// The sign of (b − a) × (p − a) for the edge a → b and the point p: −1, 0 or 1. On the
/// narrow integers when the six values are within their reach, else on the wide ones (where
/// the shader leaves the pair to the host).
fn orientation_sign(edge: &Segment, px: f32, py: f32) -> i32 {
    let values = scaled_values(&[edge.x0, edge.y0, edge.x1, edge.y1, px, py, 0.0, 0.0]);
    let Some(v) = values else {
        return wide_orientation_sign(edge, px, py); // backend: the shader leaves it to the host
    };
    let cross = narrow_cross(
        narrow_difference(v[2], v[3], v[0], v[1]),
        narrow_difference(v[4], v[5], v[0], v[1]),
    );
    if narrow_is_zero(cross) {
        return 0;
    }
    if narrow_is_negative(cross) { -1 } else { 1 }
}

/// The kernel's function: `query` against one edge of a polygon. A query whose box is apart
/// from the polygon's box gets [`EdgeContact::MISS`] for every edge of it.
pub fn polygon_edge(query: &Segment, edge: &PolygonEdge) -> EdgeContact {
    if apart(query, &edge.polygon) {
        return EdgeContact::MISS;
    }
    let ends = end_flags(query, &edge.edge);
    let mut contact = SegmentContact::MISS;
    if !apart(query, &edge_box(&edge.edge)) && wall_verdict(query, &edge.edge) != WALLS_APART {
        contact = match contact_narrow(query, &edge.edge) {
            Some(narrow) => narrow,
            // Beyond the narrow integers' reach: where the shader leaves the pair to the host.
            None => segment_segment(query, &edge.edge),
        };
    }
    EdgeContact {
        t_enter: contact.t_enter,
        t_exit: contact.t_exit,
        contact: contact.contact,
        ends,
    }
}

/// The edge's box, each bound one of its values chosen by order keys (on a GPU a float min
/// may flush a subnormal and shrink the box).
fn edge_box(e: &Segment) -> Rect {
    let x_swapped = order_key(e.x1) < order_key(e.x0);
    let y_swapped = order_key(e.y1) < order_key(e.y0);
    let pick = |a: f32, b: f32, swapped: bool| if swapped { b } else { a };
    Rect::new(
        pick(e.x0, e.x1, x_swapped),
        pick(e.y0, e.y1, y_swapped),
        pick(e.x1, e.x0, x_swapped),
        pick(e.y1, e.y0, y_swapped),
    )
}

/// [`orientation_sign`] on the wide integers, for the values the narrow ones do not reach.
fn wide_orientation_sign(edge: &Segment, px: f32, py: f32) -> i32 {
    let a = BigPoint {
        x: big_from_f32(edge.x0),
        y: big_from_f32(edge.y0),
    };
    let b = BigPoint {
        x: big_from_f32(edge.x1),
        y: big_from_f32(edge.y1),
    };
    let e = difference(&b, &a);
    let p = BigPoint {
        x: big_from_f32(px),
        y: big_from_f32(py),
    };
    let w = difference(&p, &a);
    let orientation = big_sub(&big_mul(&e.x, &w.y), &big_mul(&e.y, &w.x));
    if big_is_zero(&orientation) {
        return 0;
    }
    if big_is_negative(&orientation) { -1 } else { 1 }
}

/// The edge index of [`PolygonContact`] where there is none.
pub const NO_EDGE: u32 = u32::MAX;

/// How a query segment meets a polygon (20 bytes).
///
/// `kind` is a [`Kind`] code ([`Kind::code`]), from whether each end is in the polygon (on its
/// boundary counts). `t_enter` is 0 for a start inside, else the first t at which the query
/// meets the boundary, correctly rounded; `entry_edge` is that boundary point's edge (the lowest
/// index where it is on two, a vertex), [`NO_EDGE`] for a start inside or a miss. `t_exit` and
/// `exit_edge` likewise from the end. On a miss every field is 0 but the edges.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PolygonContact {
    pub t_enter: f32,
    pub t_exit: f32,
    pub kind: u32,
    pub entry_edge: u32,
    pub exit_edge: u32,
}

impl Default for PolygonContact {
    fn default() -> Self {
        Self::MISS
    }
}

impl PolygonContact {
    pub const MISS: Self = Self {
        t_enter: 0.0,
        t_exit: 0.0,
        kind: 0,
        entry_edge: NO_EDGE,
        exit_edge: NO_EDGE,
    };

    /// A hit of `kind` from t 0 to 1 with no edge named: the contact before either end's
    /// crossing is placed (an end outside then moves its t to its edge's).
    pub const fn whole(kind: Kind) -> Self {
        Self {
            t_enter: 0.0,
            t_exit: 1.0,
            kind: kind.code(),
            entry_edge: NO_EDGE,
            exit_edge: NO_EDGE,
        }
    }

    pub fn hit(&self) -> bool {
        self.kind != Kind::Miss.code()
    }

    pub fn kind(&self) -> Kind {
        Kind::from_code(self.kind)
    }

    /// Whether the segment comes in across an edge (`entry_edge`) and goes out across one
    /// (`exit_edge`).
    pub fn boundary(&self) -> (bool, bool) {
        (self.entry_edge != NO_EDGE, self.exit_edge != NO_EDGE)
    }
}

/// Where `query` meets the closed polygon `ring` (a valid ring: see [`Polygons`]; an empty
/// one is missed, and other rings that [`Polygons`] would refuse get the same rules, which
/// mean nothing for them).
///
/// Degenerate cases: a query on the boundary hits (`Cross`, or `Inside` when both ends are on
/// it); a concave polygon's query with both ends in is `Inside` even where it leaves the
/// polygon between them (t_enter 0, t_exit 1); a zero-length query is a point, `Inside` with t
/// from 0 to 1 when in the polygon; a query through a vertex names the lower of its two edges.
pub fn segment_polygon(query: &Segment, ring: &[[f32; 2]]) -> PolygonContact {
    segment_polygon_rings(query, &[ring])
}

/// Where `query` meets the closed region of `rings`: a polygon's outer ring and its holes, or
/// a multipolygon's rings, in any order (docs/semantics.md: the points inside an odd number of
/// rings, and every ring's boundary). Edges are numbered ring after ring, as in [`Polygons`].
/// The degenerate cases are [`segment_polygon`]'s, and a query along a hole's edge or through a
/// vertex that an outer ring and a hole share is on the boundary.
pub fn segment_polygon_rings<R: AsRef<[[f32; 2]]>>(query: &Segment, rings: &[R]) -> PolygonContact {
    let mut vertices = rings.iter().flat_map(|r| r.as_ref().iter());
    let Some(&[x, y]) = vertices.next() else {
        return PolygonContact::MISS;
    };
    let mut polygon = Rect::new(x, y, x, y);
    for &[x, y] in vertices {
        polygon = Rect::new(
            polygon.min_x.min(x),
            polygon.min_y.min(y),
            polygon.max_x.max(x),
            polygon.max_y.max(y),
        );
    }
    let mut edges = Vec::new();
    for ring in rings {
        ring_edges(ring.as_ref(), polygon, &mut edges);
    }
    let contacts: Vec<EdgeContact> = edges.iter().map(|e| polygon_edge(query, e)).collect();
    polygon_contact(query, &edges, &contacts)
}

/// The polygon's answer from its edges' ([`polygon_edge`] for each, in order): shared by the
/// scalar function, the CPU batch path and the GPU host, so both backends give its bytes.
pub fn polygon_contact(
    query: &Segment,
    edges: &[PolygonEdge],
    contacts: &[EdgeContact],
) -> PolygonContact {
    let mut on = 0u32;
    let mut any_hit = false;
    let (mut start_rays, mut end_rays) = (0u32, 0u32);
    for c in contacts {
        on |= c.ends;
        start_rays += (c.ends & edge_ends::START_RAY != 0) as u32;
        end_rays += (c.ends & edge_ends::END_RAY != 0) as u32;
        any_hit |= c.hit();
    }
    let start_in = on & edge_ends::START_ON != 0 || start_rays % 2 == 1;
    let end_in = on & edge_ends::END_ON != 0 || end_rays % 2 == 1;
    if !start_in && !end_in && !any_hit {
        return PolygonContact::MISS;
    }
    let mut result = PolygonContact::whole(Kind::of_hit(start_in, end_in));
    // An end out with no edge met cannot come from exact per-edge results; from a broken GPU
    // it leaves that end's t and edge as for an end in, rather than failing.
    let entry = (!start_in)
        .then(|| extreme_edge(query, edges, contacts, Extreme::Entry))
        .flatten();
    if let Some(k) = entry {
        result.entry_edge = k as u32;
        result.t_enter = contacts[k].t_enter;
    }
    let exit = (!end_in)
        .then(|| extreme_edge(query, edges, contacts, Extreme::Exit))
        .flatten();
    if let Some(k) = exit {
        result.exit_edge = k as u32;
        result.t_exit = contacts[k].t_exit;
    }
    result
}

#[derive(Clone, Copy, PartialEq)]
enum Extreme {
    /// The smallest t_enter.
    Entry,
    /// The largest t_exit.
    Exit,
}

/// The hit edge with the smallest t_enter (or largest t_exit), exactly: rounded values that
/// tie are told apart by their exact ratios, and an exact tie (a vertex) goes to the lower
/// index; `None` when no edge hits.
fn extreme_edge(
    query: &Segment,
    edges: &[PolygonEdge],
    contacts: &[EdgeContact],
    extreme: Extreme,
) -> Option<usize> {
    let t = |c: &EdgeContact| match extreme {
        Extreme::Entry => c.t_enter,
        Extreme::Exit => -c.t_exit,
    };
    let mut best: Option<usize> = None;
    for (k, c) in contacts.iter().enumerate() {
        if !c.hit() {
            continue;
        }
        best = match best {
            None => Some(k),
            Some(b) if t(c) < t(&contacts[b]) => Some(k),
            Some(b) if t(c) == t(&contacts[b]) && before(query, edges, k, b, extreme) => Some(k),
            keep => keep,
        };
    }
    best
}

/// Whether edge k's exact t (enter or exit) is strictly before edge b's, in `extreme`'s order.
/// On the narrow integers where both edges' values reach them ([`narrow_ratios`]), else on the
/// wide ones.
fn before(query: &Segment, edges: &[PolygonEdge], k: usize, b: usize, extreme: Extreme) -> bool {
    if let (Some(rk), Some(rb)) = (
        narrow_ratios(query, &edges[k].edge),
        narrow_ratios(query, &edges[b].edge),
    ) {
        let (nk, dk, nb, db) = match extreme {
            Extreme::Entry => (rk.enter_num, rk.enter_den, rb.enter_num, rb.enter_den),
            Extreme::Exit => (rb.exit_num, rb.exit_den, rk.exit_num, rk.exit_den),
        };
        // Non-negative, below 2^127.
        return ratio_below(nk as u128, dk as u128, nb as u128, db as u128);
    }
    let (rk, rb) = (
        segment_segment_ratios(query, &edges[k].edge),
        segment_segment_ratios(query, &edges[b].edge),
    );
    let (nk, dk, nb, db) = match extreme {
        Extreme::Entry => (rk.enter_num, rk.enter_den, rb.enter_num, rb.enter_den),
        Extreme::Exit => (rb.exit_num, rb.exit_den, rk.exit_num, rk.exit_den),
    };
    // nk / dk < nb / db, denominators above 0.
    double_compare(&double_mul(&nk, &db), &double_mul(&nb, &dk)) < 0
}

/// Whether two closed polygons share a point (containment included), exactly: an edge of
/// `a` meets `b` (its boundary, or lies inside it), or `b` lies inside `a` (its first vertex
/// does).
pub fn polygons_overlap(a: &[[f32; 2]], b: &[[f32; 2]]) -> bool {
    polygons_overlap_rings(&[a], &[b])
}

/// [`polygons_overlap`] for polygons of rings ([`segment_polygon_rings`]): an edge of `a`
/// meets `b`, or a ring of `b` lies inside `a` (its first vertex does). That is enough: where
/// the regions share a point and no boundary of `a` meets `b`, some boundary point of `b` is in
/// `a`, and its whole ring with it, since that ring meets no boundary of `a`.
pub fn polygons_overlap_rings<R: AsRef<[[f32; 2]]>>(a: &[R], b: &[R]) -> bool {
    let edges_meet = a.iter().any(|ring| {
        let ring = ring.as_ref();
        let n = ring.len();
        (0..n).any(|k| {
            let ([x0, y0], [x1, y1]) = (ring[k], ring[(k + 1) % n]);
            segment_polygon_rings(&Segment::new(x0, y0, x1, y1), b).hit()
        })
    });
    edges_meet
        || b.iter()
            .filter_map(|ring| ring.as_ref().first())
            .any(|&[x, y]| segment_polygon_rings(&Segment::new(x, y, x, y), a).hit())
}
