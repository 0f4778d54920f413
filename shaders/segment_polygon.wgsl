// Segment x polygon, one edge at a time: where a query meets one edge of a polygon, and for each
// end of the query whether it lies on the edge and whether the edge crosses the ray from it
// towards +x, all exact (docs/semantics.md, "Segment x polygon"); and the dense entry point over
// queries x edges. The host gathers a polygon's edges into its answer (polygon_contact in
// src/cpu/segment_polygon/mod.rs), so an invocation's work is one edge's whatever the polygon, within
// a software GPU's loop budget.
//
// Compiled after shaders/segment_rect.wgsl (Segment, Rect, order_key), shaders/exact.wgsl (the
// narrow integers) and shaders/segment_segment.wgsl (wall_verdict, contact_narrow), before shaders/shape_passes.wgsl (the
// tile: shape_params, queries, invocation_index). CPU mirror: src/cpu/segment_polygon/mod.rs,
// same function names, same branches.

override EDGE_START_ON: u32;
override EDGE_START_RAY: u32;
override EDGE_END_SHIFT: u32;
override EDGE_HOST: u32;

struct PolygonEdge {
    edge: Segment,
    // The polygon's box.
    polygon: Rect,
}

struct EdgeContact {
    t_enter: f32,
    t_exit: f32,
    contact: u32,
    ends: u32,
}

// Bindings 2 and 3 of the wall kernel's passes hold other types under other names; an entry point
// binds only the variables it uses.
@group(0) @binding(2) var<storage, read> polygon_edges: array<PolygonEdge>;
@group(0) @binding(3) var<storage, read_write> edge_contacts: array<EdgeContact>;

// Whether a segment's box and box b are apart, on order keys: exact on any GPU, flushed
// subnormals or not. The polygon's box decides the per-edge bits, so this test must be exact.
fn apart(s: Segment, b: Rect) -> bool {
    let x0 = order_key(s.x0);
    let x1 = order_key(s.x1);
    let y0 = order_key(s.y0);
    let y1 = order_key(s.y1);
    return (x0 < order_key(b.min_x) && x1 < order_key(b.min_x))
        || (x0 > order_key(b.max_x) && x1 > order_key(b.max_x))
        || (y0 < order_key(b.min_y) && y1 < order_key(b.min_y))
        || (y0 > order_key(b.max_y) && y1 > order_key(b.max_y));
}

// The ends' bits of one edge: plain comparisons on order keys first, then the orientation
// (b - a) x (p - a) exactly (orientation_sign) for an end within the edge's box.
fn end_flags(query: Segment, edge: Segment) -> u32 {
    let px = array<f32, 2>(query.x0, query.x1);
    let py = array<f32, 2>(query.y0, query.y1);
    let ax = order_key(edge.x0);
    let ay = order_key(edge.y0);
    let bx = order_key(edge.x1);
    let by = order_key(edge.y1);
    let lo_x = min(ax, bx);
    let hi_x = max(ax, bx);
    let lo_y = min(ay, by);
    let hi_y = max(ay, by);
    var flags = 0u;
    var straddles = array<bool, 2>(false, false);
    var needs_sign = array<bool, 2>(false, false);
    for (var k = 0u; k < 2u; k += 1u) {
        let x = order_key(px[k]);
        let y = order_key(py[k]);
        // The edge crosses the end's horizontal line, counted half-open: one end above, the
        // other at or below.
        straddles[k] = (ay > y) != (by > y);
        let in_box = lo_x <= x && x <= hi_x && lo_y <= y && y <= hi_y;
        if (in_box) {
            needs_sign[k] = true;
        } else if (straddles[k] && x < lo_x) {
            flags |= EDGE_START_RAY << (EDGE_END_SHIFT * k);
        }
    }
    for (var k = 0u; k < 2u; k += 1u) {
        if (!needs_sign[k]) {
            continue;
        }
        let orientation = orientation_sign(edge, px[k], py[k]);
        let shift = EDGE_END_SHIFT * k;
        if (orientation == 0) {
            // On the edge's line and within its box: on the edge.
            flags |= EDGE_START_ON << shift;
        } else if (straddles[k] && (by > order_key(py[k])) != (orientation < 0)) {
            // Left of an upward edge, or right of a downward one: the crossing is beyond the
            // end in +x.
            flags |= EDGE_START_RAY << shift;
        }
    }
    return flags;
}

// The sign of (b - a) x (p - a) for the edge a -> b and the point p: -1, 0 or 1, on the narrow
// integers (polygon_edge leaves the pairs beyond their reach to the host).
fn orientation_sign(edge: Segment, px: f32, py: f32) -> i32 {
    let v = scaled_values(array<f32, 8>(edge.x0, edge.y0, edge.x1, edge.y1, px, py, 0.0, 0.0)).scaled;
    let cross = narrow_cross(narrow_difference(v[2], v[3], v[0], v[1]), narrow_difference(v[4], v[5], v[0], v[1]));
    if (narrow_is_zero(cross)) {
        return 0;
    }
    return select(1, -1, narrow_is_negative(cross));
}

// The query against one edge of a polygon; a query apart from the polygon's box misses every
// edge of it with no bits. On the narrow integers alone: a pair whose eight values span more
// binary orders than they reach gets EDGE_HOST alone, and the host decides it (the kernel then
// holds no wide integers, whose code a software GPU runs in part even where no pair takes it).
fn polygon_edge(query: Segment, edge: PolygonEdge) -> EdgeContact {
    if (apart(query, edge.polygon)) {
        return EdgeContact(0.0, 0.0, CONTACT_MISS, 0u);
    }
    let e = edge.edge;
    if (!scaled_values(array<f32, 8>(query.x0, query.y0, query.x1, query.y1, e.x0, e.y0, e.x1, e.y1)).fits) { return EdgeContact(0.0, 0.0, CONTACT_MISS, EDGE_HOST); } // backend: the CPU decides inline
    let ends = end_flags(query, e);
    var contact = SegmentContact(0.0, 0.0, CONTACT_MISS);
    if (!apart(query, edge_box(e)) && wall_verdict(query, e) != WALLS_APART) {
        contact = contact_narrow(query, e).contact;
    }
    return EdgeContact(contact.t_enter, contact.t_exit, contact.contact, ends);
}

// The edge's box, each bound one of its values chosen by order keys (a float min may flush a
// subnormal and shrink the box).
fn edge_box(e: Segment) -> Rect {
    let x_swapped = order_key(e.x1) < order_key(e.x0);
    let y_swapped = order_key(e.y1) < order_key(e.y0);
    return Rect(select(e.x0, e.x1, x_swapped), select(e.y0, e.y1, y_swapped), select(e.x1, e.x0, x_swapped), select(e.y1, e.y0, y_swapped));
}

// Every query against every polygon edge, query-major: pair i is query i / shape_count, edge
// i % shape_count. The dispatch may be two-dimensional: rows of workgroups.
@compute @workgroup_size(WORKGROUP_SIZE)
fn polygon_edges_dense(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_index(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    let query = queries[i / shape_params.shape_count];
    edge_contacts[i] = polygon_edge(query, polygon_edges[i % shape_params.shape_count]);
}
