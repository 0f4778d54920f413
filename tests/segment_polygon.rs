//! The segment × polygon and polygon × polygon contracts (docs/semantics.md, "Segment ×
//! polygon", "Polygon × polygon"): named cases, the validator against an O(n²) oracle, the exact
//! oracle on seeded scenes full of degeneracies, symmetries, and both backends against it.

mod common;

use common::degenerate::{random_segment, valid};
use common::polygons::{self, random_polygon_rings, random_ring, random_simple_ring};
use rectcast::scene::SplitMix64;
use rectcast::{
    GpuLimits, InputArray, Kind, NO_EDGE, PolygonContact, Polygons, Problem, Segment,
    segment_polygon, segment_polygon_rings,
};

fn s(x0: f32, y0: f32, x1: f32, y1: f32) -> Segment {
    Segment::new(x0, y0, x1, y1)
}

/// The square [0, 4] × [0, 4], counter-clockwise from the origin: edge 0 along y = 0, edge 1
/// along x = 4, edge 2 along y = 4, edge 3 along x = 0.
const SQUARE: [[f32; 2]; 4] = [[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]];

/// A U open upwards: the notch is (1, 1)–(3, 4).
const U: [[f32; 2]; 8] = [
    [0.0, 0.0],
    [4.0, 0.0],
    [4.0, 4.0],
    [3.0, 4.0],
    [3.0, 1.0],
    [1.0, 1.0],
    [1.0, 4.0],
    [0.0, 4.0],
];

/// [`expect_rings`] for a simple polygon, through the one-ring form too.
#[track_caller]
fn expect(query: Segment, ring: &[[f32; 2]], kind: Kind, t: (f32, f32), edges: (u32, u32)) {
    expect_rings(query, &[ring], kind, t, edges);
    assert_eq!(
        segment_polygon(&query, ring),
        segment_polygon_rings(&query, &[ring]),
        "the one-ring form"
    );
}

#[test]
fn a_segment_through_the_square_enters_and_leaves_by_its_edges() {
    expect(
        s(-2.0, 1.0, 6.0, 1.0),
        &SQUARE,
        Kind::Cross,
        (0.25, 0.75),
        (3, 1),
    );
    expect(
        s(-2.0, 1.0, 2.0, 1.0),
        &SQUARE,
        Kind::Enter,
        (0.5, 1.0),
        (3, NO_EDGE),
    );
    expect(
        s(2.0, 1.0, 6.0, 1.0),
        &SQUARE,
        Kind::Exit,
        (0.0, 0.5),
        (NO_EDGE, 1),
    );
    expect(
        s(1.0, 1.0, 3.0, 3.0),
        &SQUARE,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    expect(
        s(5.0, 1.0, 6.0, 3.0),
        &SQUARE,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn a_segment_inside_the_polygon_hits_though_it_meets_no_edge() {
    expect(
        s(1.0, 1.0, 2.0, 2.0),
        &SQUARE,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn a_segment_along_an_edge_crosses_from_where_it_meets_it() {
    expect(
        s(-1.0, 0.0, 5.0, 0.0),
        &SQUARE,
        Kind::Cross,
        (1.0 / 6.0, 5.0 / 6.0),
        (0, 0),
    );
}

#[test]
fn a_segment_through_a_vertex_names_the_lower_of_its_two_edges() {
    // Through (0, 0), edges 3 and 0, and out through (4, 4), edges 1 and 2.
    expect(
        s(-1.0, -1.0, 5.0, 5.0),
        &SQUARE,
        Kind::Cross,
        (1.0 / 6.0, 5.0 / 6.0),
        (0, 1),
    );
}

#[test]
fn grazing_a_vertex_from_outside_crosses_at_one_t() {
    // Through the corner (0, 4), on edges 2 and 3, outside before and after it.
    expect(
        s(-1.0, 3.0, 1.0, 5.0),
        &SQUARE,
        Kind::Cross,
        (0.5, 0.5),
        (2, 2),
    );
}

#[test]
fn ends_on_the_boundary_are_in() {
    expect(
        s(0.0, 2.0, -1.0, 2.0),
        &SQUARE,
        Kind::Exit,
        (0.0, 0.0),
        (NO_EDGE, 3),
    );
    expect(
        s(-1.0, 2.0, 0.0, 2.0),
        &SQUARE,
        Kind::Enter,
        (1.0, 1.0),
        (3, NO_EDGE),
    );
    expect(
        s(0.0, 0.0, 4.0, 4.0),
        &SQUARE,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn a_point_query_is_inside_on_a_vertex_and_misses_beside_it() {
    expect(
        s(4.0, 4.0, 4.0, 4.0),
        &SQUARE,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    expect(
        s(2.0, 2.0, 2.0, 2.0),
        &SQUARE,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    let beside = 4f32.next_up();
    expect(
        s(beside, 4.0, beside, 4.0),
        &SQUARE,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn a_concave_polygons_query_with_both_ends_in_is_inside_across_the_notch() {
    // From one arm of the U to the other, over the notch: outside between t = 0.25 and 0.75.
    expect(
        s(0.5, 3.0, 3.5, 3.0),
        &U,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    // From outside, through both arms: enters at the left, leaves at the right.
    expect(
        s(-1.0, 2.0, 5.0, 2.0),
        &U,
        Kind::Cross,
        (1.0 / 6.0, 5.0 / 6.0),
        (7, 1),
    );
}

#[test]
fn a_ray_through_a_vertex_counts_that_vertex_once() {
    // The ray from (1, 2) towards +x passes through the vertex (4, 2) of this diamond-like
    // pentagon; the point is inside.
    let ring = [[0.0, 0.0], [3.0, 0.0], [4.0, 2.0], [3.0, 4.0], [0.0, 4.0]];
    expect(
        s(1.0, 2.0, 1.0, 2.0),
        &ring,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    // And from outside, at the vertex's height, beyond it.
    expect(
        s(5.0, 2.0, 5.0, 2.0),
        &ring,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
    // A ray along a horizontal edge: the point left of the top edge's line.
    expect(
        s(-1.0, 4.0, -1.0, 4.0),
        &ring,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn edges_met_within_half_an_ulp_of_each_other_are_ordered_exactly() {
    // A sliver triangle: edge 0 slants from (1, -1) to (1 + 2^-23, 1) and crosses y = 0 at
    // 1 + 2^-24; edge 2 runs down x = 1. Along the query from (0, 0) to (2, 0) the sliver is
    // entered at t = 0.5 through edge 2 and left at t = 0.5 + 2^-25 through edge 0, a tie that
    // rounds to 0.5: both t are 0.5, and only the exact order names edge 2 the entry.
    let right = 1f32 + f32::EPSILON;
    let sliver = [[1.0, -1.0], [right, 1.0], [1.0, 1.0]];
    expect(
        s(0.0, 0.0, 2.0, 0.0),
        &sliver,
        Kind::Cross,
        (0.5, 0.5),
        (2, 0),
    );
    // Backwards the entry, at t = 0.5 - 2^-25, is a float of its own.
    let before_half = 0.5f32.next_down();
    expect(
        s(2.0, 0.0, 0.0, 0.0),
        &sliver,
        Kind::Cross,
        (before_half, 0.5),
        (0, 2),
    );
}

/// The square [0, 4]² with the hole [1, 3]² (edges 4 to 7: along y = 1, x = 3, y = 3, x = 1).
const HOLE: [[f32; 2]; 4] = [[1.0, 1.0], [3.0, 1.0], [3.0, 3.0], [1.0, 3.0]];

#[track_caller]
fn expect_rings(
    query: Segment,
    rings: &[&[[f32; 2]]],
    kind: Kind,
    t: (f32, f32),
    edges: (u32, u32),
) {
    let got = segment_polygon_rings(&query, rings);
    let want = PolygonContact {
        t_enter: t.0,
        t_exit: t.1,
        kind: kind.code(),
        entry_edge: edges.0,
        exit_edge: edges.1,
    };
    assert_eq!(got, want, "query {query:?}: got {:?}", got.kind());
    assert_eq!(
        got,
        polygons::segment_polygon_rings(&query, rings),
        "the oracle"
    );
    // The engine, through the flat form, gives the scalar function's bytes.
    let polygons = Polygons::from_polygons([rings]).unwrap();
    let pairs = common::cpu_engine()
        .polygon_pairs(&[query], &polygons)
        .unwrap();
    assert_eq!(pairs, vec![got], "the engine");
}

#[test]
fn a_segment_inside_a_hole_misses_and_one_through_it_crosses_the_outer_ring() {
    let holed: [&[[f32; 2]]; 2] = [&SQUARE, &HOLE];
    expect_rings(
        s(1.5, 1.5, 2.5, 2.5),
        &holed,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
    // In, through the hole, and out: I spans the hole, as across a concave notch.
    expect_rings(
        s(-2.0, 2.0, 6.0, 2.0),
        &holed,
        Kind::Cross,
        (0.25, 0.75),
        (3, 1),
    );
    // From the hole into the solid part: enters across the hole's edge.
    expect_rings(
        s(2.0, 2.0, 4.0, 2.0),
        &holed,
        Kind::Enter,
        (0.5, 1.0),
        (5, NO_EDGE),
    );
    // The hole's orientation does not matter.
    let reversed: Vec<[f32; 2]> = HOLE.iter().rev().copied().collect();
    let holed_cw: [&[[f32; 2]]; 2] = [&SQUARE, &reversed];
    expect_rings(
        s(1.5, 1.5, 2.5, 2.5),
        &holed_cw,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn a_holes_boundary_belongs_to_the_polygon() {
    let holed: [&[[f32; 2]]; 2] = [&SQUARE, &HOLE];
    // Along a hole's edge: both ends on the boundary, in.
    expect_rings(
        s(1.0, 1.0, 3.0, 1.0),
        &holed,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    // From inside the hole to its edge: enters at the end.
    expect_rings(
        s(2.0, 2.0, 2.0, 3.0),
        &holed,
        Kind::Enter,
        (1.0, 1.0),
        (6, NO_EDGE),
    );
    // A point on a hole's vertex is in.
    expect_rings(
        s(3.0, 3.0, 3.0, 3.0),
        &holed,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
}

#[test]
fn through_a_vertex_the_outer_ring_and_a_hole_share_names_the_lowest_edge() {
    // A hole touching the outer ring at the origin: a segment from outside through that
    // vertex into the hole meets the region at that one point.
    let hole = [[0.0, 0.0], [2.0, 1.0], [1.0, 2.0]];
    let rings: [&[[f32; 2]]; 2] = [&SQUARE, &hole];
    expect_rings(
        s(-1.0, -1.0, 1.0, 1.0),
        &rings,
        Kind::Cross,
        (0.5, 0.5),
        (0, 0),
    );
}

#[test]
fn a_segment_from_one_part_of_a_multipolygon_to_another_spans_the_gap() {
    let right = [[6.0, 0.0], [8.0, 0.0], [8.0, 4.0], [6.0, 4.0]];
    let parts: [&[[f32; 2]]; 2] = [&SQUARE, &right];
    expect_rings(
        s(-2.0, 2.0, 14.0, 2.0),
        &parts,
        Kind::Cross,
        (0.125, 0.625),
        (3, 5),
    );
    expect_rings(
        s(2.0, 2.0, 7.0, 2.0),
        &parts,
        Kind::Inside,
        (0.0, 1.0),
        (NO_EDGE, NO_EDGE),
    );
    expect_rings(
        s(5.0, 1.0, 5.0, 3.0),
        &parts,
        Kind::Miss,
        (0.0, 0.0),
        (NO_EDGE, NO_EDGE),
    );
}

/// Simple polygons (a third of them), and polygons of two or three rings: holes, parts,
/// crossing rings.
#[test]
fn every_seeded_query_and_polygon_matches_the_oracle() {
    let mut rng = SplitMix64::new(0x4015);
    let mut holes = 0;
    for scale in [1.0f32, 1e-40, 3e18, 1e-3] {
        for _ in 0..300 {
            let rings = random_polygon_rings(&mut rng, scale);
            if rings.len() == 1 {
                // The one-ring form is the same function.
                let query = random_segment(&mut rng, scale);
                assert_eq!(
                    segment_polygon(&query, &rings[0]),
                    segment_polygon_rings(&query, &rings)
                );
            }
            for _ in 0..20 {
                let query = random_segment(&mut rng, scale);
                if !valid(&query) {
                    continue;
                }
                let got = segment_polygon_rings(&query, &rings);
                let want = polygons::segment_polygon_rings(&query, &rings);
                assert_eq!(got, want, "scale {scale}: query {query:?} rings {rings:?}");
                // A start inside two rings is out (in a hole).
                let inside = rings
                    .iter()
                    .filter(|r| polygons::contains(r, query.x0, query.y0))
                    .count();
                holes +=
                    (inside == 2 && !polygons::contains_rings(&rings, query.x0, query.y0)) as usize;
            }
        }
    }
    assert!(holes > 50, "{holes} starts in holes");
}

#[test]
fn polygons_with_rings_in_the_flat_form_number_edges_ring_after_ring() {
    let vertices: Vec<[f32; 2]> = SQUARE.iter().chain(&HOLE).copied().collect();
    let p = Polygons::with_rings(&vertices, &[0, 4, 8], &[0, 2]).unwrap();
    assert_eq!(
        p,
        Polygons::from_polygons([[&SQUARE[..], &HOLE[..]]]).unwrap()
    );
    assert_eq!((p.len(), p.ring_count(0), p.edge_count()), (1, 2, 8));
    assert_eq!(p.edge_ring(0, 3), (0, 3));
    assert_eq!(p.edge_ring(0, 5), (1, 1));
    assert_eq!(p.edge(0, 3), s(0.0, 4.0, 0.0, 0.0));
    assert_eq!(p.edge(0, 7), s(1.0, 3.0, 1.0, 1.0));
    assert_eq!(p.ring_offsets(), (&[0, 4, 8][..], &[0, 2][..]));
    // A bad hole is named by its polygon, its vertices numbered as the polygon's.
    let repeated = [[1.0, 1.0], [3.0, 1.0], [3.0, 1.0], [1.0, 3.0]];
    let e = Polygons::from_polygons([vec![&SQUARE[..], &repeated[..]]]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "polygon 0: ring repeats vertex 5 at vertex 6: a zero-length edge"
    );
    let e = Polygons::with_rings(&vertices, &[0, 4, 8], &[0, 3]).unwrap_err();
    assert_eq!(e.field, "polygon_offsets");
    let e = Polygons::with_rings(&vertices, &[0, 4, 7], &[0, 2]).unwrap_err();
    assert_eq!(e.field, "ring_offsets");
    let none: [&[[f32; 2]]; 0] = [];
    let e = Polygons::from_polygons([none]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "polygon 0: ring has 0 vertices, fewer than 3"
    );
}

#[test]
fn reversing_the_ring_keeps_the_answer_but_the_edge_numbers() {
    let mut rng = SplitMix64::new(0x4e7);
    for _ in 0..400 {
        let ring = random_simple_ring(&mut rng, 1.0);
        let reversed: Vec<[f32; 2]> = ring.iter().rev().copied().collect();
        let query = random_segment(&mut rng, 1.0);
        let (a, b) = (
            segment_polygon(&query, &ring),
            segment_polygon(&query, &reversed),
        );
        assert_eq!(
            (a.kind, a.t_enter, a.t_exit),
            (b.kind, b.t_enter, b.t_exit),
            "query {query:?} ring {ring:?}"
        );
    }
}

#[test]
fn scaling_and_translating_by_powers_of_two_keep_every_byte() {
    let mut rng = SplitMix64::new(0x5ca1e);
    for _ in 0..300 {
        let ring = random_simple_ring(&mut rng, 1.0);
        let query = random_segment(&mut rng, 1.0);
        if !valid(&query) || ring.iter().flatten().any(|v| v.abs() > 1e6) {
            continue;
        }
        let base = segment_polygon(&query, &ring);
        for (scale, shift) in [
            (2f32.powi(40), 0.0f32),
            (2f64.powi(-60) as f32, 0.0),
            (1.0, 64.0),
        ] {
            let map = |v: f32| v * scale + shift;
            let ring2: Vec<[f32; 2]> = ring.iter().map(|&[x, y]| [map(x), map(y)]).collect();
            let q2 = s(map(query.x0), map(query.y0), map(query.x1), map(query.y1));
            let exact = ring
                .iter()
                .flatten()
                .chain(&[query.x0, query.y0, query.x1, query.y1])
                .all(|&v| (map(v) - shift) / scale == v);
            if !exact {
                continue;
            }
            assert_eq!(
                segment_polygon(&q2, &ring2),
                base,
                "×{scale} +{shift}: {query:?} {ring:?}"
            );
        }
    }
}

#[test]
fn the_validator_accepts_exactly_the_simple_rings() {
    let mut rng = SplitMix64::new(0x5171e);
    let (mut accepted, mut rejected) = (0, 0);
    for _ in 0..4000 {
        let ring = random_ring(&mut rng, 1.0);
        if ring
            .iter()
            .flatten()
            .any(|v| !v.is_finite() || v.abs() > rectcast::MAX_ABS_COORDINATE)
        {
            continue;
        }
        // No closing repeat: the validator would drop it.
        if ring.first() == ring.last() {
            continue;
        }
        let simple = polygons::simple(&ring);
        let got = Polygons::from_rings([&ring[..]]);
        assert_eq!(got.is_ok(), simple, "ring {ring:?}: {got:?}");
        if simple { accepted += 1 } else { rejected += 1 }
    }
    assert!(
        accepted > 200 && rejected > 200,
        "{accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn the_sweep_judges_longer_rings_on_a_small_grid_as_the_all_pairs_check_does() {
    // 8 to 40 vertices on a 6 x 6 grid: collinear edges, verticals, vertices on edges and
    // shared points, most rings not simple. Each answer against every pair of edges, and a
    // refusal's pair must meet.
    let mut rng = SplitMix64::new(0x5_7ee9);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..3000 {
        let n = 8 + rng.below(33) as usize;
        let mut ring: Vec<[f32; 2]> = Vec::with_capacity(n);
        while ring.len() < n {
            let v = [rng.below(6) as f32 - 2.0, rng.below(6) as f32 - 3.0];
            if ring.last() != Some(&v) {
                ring.push(v);
            }
        }
        if ring.first() == ring.last() {
            continue;
        }
        // Now and then a simple ring: a star's vertices, so both answers are met.
        if round % 3 == 0 {
            ring = random_simple_ring(&mut rng, 1.0);
        }
        let simple = polygons::simple(&ring);
        match Polygons::from_rings([&ring[..]]) {
            Ok(_) => {
                assert!(simple, "accepted a ring that is not simple: {ring:?}");
                accepted += 1;
            }
            Err(e) => {
                assert!(!simple, "refused a simple ring: {ring:?}: {e}");
                if let Problem::NotSimple { edge, other } = e.problem {
                    assert!(
                        polygons::edges_meet(&ring, edge as usize, other as usize),
                        "edges {edge} and {other} of {ring:?} do not meet"
                    );
                }
                rejected += 1;
            }
        }
    }
    assert!(
        accepted > 500 && rejected > 500,
        "{accepted} accepted, {rejected} rejected"
    );
    // Where the sweep's steps are each needed: edges 0 and 4 cross, and become neighbours
    // only when the short edge between them (6) and edge 7 leave the sweep; and a vertex the
    // ring passes twice, first with both edges to its left, then with both to its right.
    let crossing = [
        [0.0, 0.0],
        [10.0, 10.0],
        [30.0, 10.0],
        [30.0, 0.0],
        [10.0, 0.0],
        [0.0, 10.0],
        [-5.0, 10.0],
        [1.0, 5.0],
        [2.0, 5.0],
    ];
    let touching = [
        [0.0, 0.0],
        [1.0, 1.0],
        [0.0, 2.0],
        [0.0, 4.0],
        [3.0, 4.0],
        [2.0, 3.0],
        [1.0, 1.0],
        [2.0, 0.0],
    ];
    for (ring, meeting) in [(&crossing[..], (0, 4)), (&touching[..], (1, 6))] {
        assert!(!polygons::simple(ring));
        let e = Polygons::from_rings([ring]).unwrap_err();
        let Problem::NotSimple { edge, other } = e.problem else {
            panic!("{ring:?}: {e}");
        };
        assert!(polygons::edges_meet(ring, edge as usize, other as usize));
        assert_eq!((edge, other), meeting, "{ring:?}");
    }
}

#[test]
fn a_zigzag_ring_whose_edges_all_overlap_in_x_is_checked_in_one_sweep() {
    // 65,536 vertices zigzagging between x = 0 and x = 1 while y climbs: every edge's x-range
    // overlaps every other's (an all-pairs sweep in x tested 2^31 pairs), then back down the
    // side. Simple; and with one vertex moved onto an edge three rungs below, not.
    let rungs = 32_767;
    let mut ring: Vec<[f32; 2]> = (0..=rungs).map(|k| [(k % 2) as f32, k as f32]).collect();
    ring.push([-1.0, rungs as f32]);
    ring.push([-1.0, -1.0]);
    assert!(Polygons::from_rings([&ring[..]]).is_ok());
    let mut touching = ring.clone();
    let k = 20_000;
    touching[k] = [(k % 2) as f32, (k - 3) as f32 + 0.5];
    let e = Polygons::from_rings([&touching[..]]).unwrap_err();
    let Problem::NotSimple { edge, other } = e.problem else {
        panic!("{e}");
    };
    assert!(polygons::edges_meet(
        &touching,
        edge as usize,
        other as usize
    ));
}

#[test]
fn invalid_polygons_are_errors_naming_the_polygon() {
    let ok = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    let err = |rings: &[&[[f32; 2]]]| Polygons::from_rings(rings.iter().copied()).unwrap_err();
    let e = err(&[&ok, &[[0.0, 0.0], [1.0, 1.0]]]);
    assert_eq!(
        (e.array, e.index, e.problem),
        (InputArray::Polygons, 1, Problem::TooFewVertices(2))
    );
    assert_eq!(
        e.to_string(),
        "polygon 1: ring has 2 vertices, fewer than 3"
    );
    let bowtie = [[0.0, 0.0], [2.0, 2.0], [2.0, 0.0], [0.0, 2.0]];
    let e = err(&[&ok, &ok, &bowtie]);
    assert_eq!(e.index, 2);
    assert_eq!(e.problem, Problem::NotSimple { edge: 0, other: 2 });
    let spike = [[0.0, 0.0], [2.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    assert!(matches!(err(&[&spike]).problem, Problem::NotSimple { .. }));
    let repeated = [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]];
    let e = err(&[&repeated]);
    assert_eq!(e.problem, Problem::RepeatedVertex(2));
    assert_eq!(
        e.to_string(),
        "polygon 0: ring repeats vertex 1 at vertex 2: a zero-length edge"
    );
    let nan = [[0.0, 0.0], [f32::NAN, 0.0], [0.0, 1.0]];
    let e = err(&[&nan]);
    assert_eq!((e.field, e.index), ("x", 0));
    assert!(e.to_string().contains("vertex 1"), "{e}");
    // A closing repeat is dropped, as WKT and GeoJSON write rings.
    let closed = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]];
    let p = Polygons::from_rings([&closed[..]]).unwrap();
    assert_eq!(p.polygon_vertices(0), &ok[..]);
    // The flat form's offsets.
    let e = Polygons::new(ok.to_vec(), vec![0, 3, 2, 3]).unwrap_err();
    assert_eq!((e.index, e.field), (1, "offsets"));
    assert_eq!(
        Polygons::new(ok.to_vec(), vec![0, 3])
            .unwrap()
            .polygon_vertices(0),
        &ok[..]
    );
    // Offsets that leave vertices out, or start past 0.
    for offsets in [vec![0, 2], vec![1, 3], vec![]] {
        let e = Polygons::new(ok.to_vec(), offsets.clone()).unwrap_err();
        assert_eq!(e.field, "offsets", "{offsets:?}");
    }
    assert!(Polygons::new(vec![], vec![]).unwrap().is_empty());
    // No polygons, however made, are the same empty set: no rings, no edges.
    for none in [
        Polygons::default(),
        Polygons::new(vec![], vec![0]).unwrap(),
        Polygons::from_rings(Vec::<Vec<[f32; 2]>>::new()).unwrap(),
        Polygons::with_rings(&[], &[0], &[0]).unwrap(),
    ] {
        assert_eq!(none, Polygons::default());
        assert_eq!(
            (none.len(), none.rings().count(), none.edge_count()),
            (0, 0, 0)
        );
        assert_eq!(none.ring_offsets(), (&[0][..], &[0][..]));
    }
    // The scalar functions take any slice without panicking.
    let q = s(0.0, 0.0, 1.0, 1.0);
    assert_eq!(segment_polygon(&q, &[]), PolygonContact::MISS);
    assert!(!rectcast::polygons_overlap(&[], &ok));
    let _ = segment_polygon(&q, &[[0.0, 0.0]]);
    let _ = segment_polygon(&q, &[[0.0, 0.0], [1.0, 1.0]]);
}

/// Polygons of one to three rings (simple ones, with holes, multipolygons, crossing rings)
/// and segments, full of degeneracies.
fn scene(seed: u64, polygons: usize, queries: usize) -> (Polygons, Vec<Segment>) {
    let mut rng = SplitMix64::new(seed);
    let shapes: Vec<Vec<Vec<[f32; 2]>>> = (0..polygons)
        .map(|_| random_polygon_rings(&mut rng, 1.0))
        .collect();
    assert!(shapes.iter().any(|p| p.len() == 1) && shapes.iter().any(|p| p.len() > 1));
    let segments = (0..queries)
        .map(|_| random_segment(&mut rng, 1.0))
        .filter(valid)
        .collect();
    (Polygons::from_polygons(&shapes).unwrap(), segments)
}

fn rings_of(polygons: &Polygons, p: usize) -> Vec<&[[f32; 2]]> {
    polygons.rings_of(p).collect()
}

fn oracle_pairs(segments: &[Segment], polygons: &Polygons) -> Vec<PolygonContact> {
    segments
        .iter()
        .flat_map(|q| {
            (0..polygons.len())
                .map(move |p| polygons::segment_polygon_rings(q, &rings_of(polygons, p)))
        })
        .collect()
}

#[track_caller]
fn assert_same_pairs(
    what: &str,
    got: &[PolygonContact],
    want: &[PolygonContact],
    segments: &[Segment],
    polygons: &Polygons,
) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        let (q, p) = (i / polygons.len(), i % polygons.len());
        panic!(
            "{what}: first difference at pair {i} (query {q} {:?}, polygon {p} {:?}): got {:?}, want {:?}",
            segments[q],
            rings_of(polygons, p),
            got[i],
            want[i]
        );
    }
}

#[test]
fn the_cpu_backend_matches_the_oracle_pair_by_pair() {
    let (polygons, segments) = scene(0xc9, 40, 300);
    let want = oracle_pairs(&segments, &polygons);
    for threads in [1, 2] {
        let options = rectcast::CpuOptions {
            threads,
            ..Default::default()
        };
        let mut engine =
            rectcast::Engine::with_cpu_options(rectcast::Backend::Cpu, options).unwrap();
        let got = engine.polygon_pairs(&segments, &polygons).unwrap();
        assert_same_pairs(
            &format!("cpu, {threads} threads"),
            &got,
            &want,
            &segments,
            &polygons,
        );
    }
}

#[test]
fn the_gpu_matches_the_oracle_pair_by_pair() {
    let (polygons, segments) = scene(0x69, 12, 90);
    let want = oracle_pairs(&segments, &polygons);
    // The environment's arithmetic (RECTCAST_GPU_EMULATION's, in scripts/test.sh's later
    // passes), and flushed subnormals, which polygons' edges meet most, in every pass.
    use rectcast::gpu::Emulation;
    let mut emulations = vec![None];
    if Emulation::from_env().expect("a mode") != Emulation::Flush {
        emulations.push(Some(Emulation::Flush));
    }
    for emulation in emulations {
        let test = "the_gpu_matches_the_oracle_pair_by_pair";
        let opened = match emulation {
            None => common::gpu_engine(test, GpuLimits::default()),
            Some(e) => common::gpu_engine_emulating(test, GpuLimits::default(), e),
        };
        let Some(mut gpu) = opened else {
            return;
        };
        let got = gpu.polygon_pairs(&segments, &polygons).unwrap();
        assert_same_pairs(
            &format!("gpu {emulation:?}"),
            &got,
            &want,
            &segments,
            &polygons,
        );
    }
}

#[test]
fn the_gpu_matches_the_oracle_on_both_sides_of_the_narrow_integers_reach_at_every_scale() {
    // The kernel decides a pair whose eight values span at most 62 binary orders on its
    // narrow integers, and leaves the others to the host: both must give the oracle's answer.
    use common::degenerate::{binary_orders, power_of_two, segment_spanning};
    let Some(mut gpu) = common::gpu_engine("polygon_pairs", GpuLimits::default()) else {
        return;
    };
    let mut rng = SplitMix64::new(41);
    let (mut sides, mut seen) = ([0usize; 2], std::collections::BTreeSet::new());
    for b in [-86, -31, 0, 33, 59] {
        let unit = power_of_two(b);
        for orders in [62, 63] {
            let small = power_of_two(b + 3 - orders);
            // Pentagons notched at a vertex near the y axis by the small value, on a grid of
            // step 2^b from -4 to 4: every edge and query pair spans exactly `orders`.
            let shapes: Vec<Vec<Vec<[f32; 2]>>> = (0..6)
                .map(|_| common::polygons::notched_pentagon(&mut rng, unit, small))
                .collect();
            let polygons = Polygons::from_polygons(&shapes).unwrap();
            let segments: Vec<Segment> = (0..40)
                .map(|_| segment_spanning(&mut rng, b, orders))
                .collect();
            for q in &segments {
                for ring in &shapes {
                    for k in 0..ring[0].len() {
                        let (a, c) = (ring[0][k], ring[0][(k + 1) % ring[0].len()]);
                        let values = [q.x0, q.y0, q.x1, q.y1, a[0], a[1], c[0], c[1]];
                        assert_eq!(binary_orders(&values), Some(orders), "{q:?} {ring:?}");
                        sides[(orders - 62) as usize] += 1;
                    }
                }
            }
            let want = oracle_pairs(&segments, &polygons);
            let got = gpu.polygon_pairs(&segments, &polygons).unwrap();
            assert_same_pairs(
                &format!("grid 2^{b}, values spanning {orders} binary orders"),
                &got,
                &want,
                &segments,
                &polygons,
            );
            seen.extend(want.iter().map(|c| c.kind));
        }
    }
    assert!(seen.len() >= 4, "kinds seen: {seen:?}");
    assert!(
        sides.iter().all(|&n| n > 5_000),
        "edge pairs per side: {sides:?}"
    );
    // Every query meets its polygon's box: each pair past the reach went to the host, and none
    // within it.
    assert_eq!(gpu.uncertain_pairs(), sides[1] as u64);
}

#[test]
fn queries_over_polygons_agree_with_the_pairs() {
    let (polygons, segments) = scene(0x91, 25, 200);
    let mut engine = common::cpu_engine();
    let pairs = engine.polygon_pairs(&segments, &polygons).unwrap();
    let m = polygons.len();
    let hits = engine.polygon_hits(&segments, &polygons).unwrap();
    let want: Vec<(u32, u32)> = (0..pairs.len())
        .filter(|&i| pairs[i].hit())
        .map(|i| ((i / m) as u32, (i % m) as u32))
        .collect();
    assert_eq!(
        hits.iter()
            .map(|h| (h.segment, h.shape))
            .collect::<Vec<_>>(),
        want
    );
    let counts = engine.polygon_counts(&segments, &polygons).unwrap();
    for (q, &n) in counts.per_segment.iter().enumerate() {
        assert_eq!(
            n as usize,
            pairs[q * m..(q + 1) * m].iter().filter(|c| c.hit()).count()
        );
    }
    // One at the least rounded t_enter; the exact order's, tests/targets.rs holds.
    let first = engine.polygon_first_hits(&segments, &polygons).unwrap();
    common::assert_first_hits_of_pairs("polygons", &pairs, m, &first, |q, p| {
        format!("segment {q} {:?}, polygon {p}", segments[q])
    });
    assert!(hits.len() > 100, "{} hits", hits.len());
}

#[test]
fn polygons_overlap_exactly_touching_and_containment_included() {
    let square = SQUARE.to_vec();
    let inner = vec![[1.0, 1.0], [2.0, 1.0], [2.0, 2.0]];
    let corner = vec![[4.0, 4.0], [6.0, 4.0], [6.0, 6.0]];
    let apart = vec![[4.0f32.next_up(), 4.0], [6.0, 4.0], [6.0, 6.0]];
    let a = Polygons::from_rings([&square]).unwrap();
    let b = Polygons::from_rings([&inner, &corner, &apart]).unwrap();
    let mut engine = common::cpu_engine();
    assert_eq!(
        engine.polygon_overlaps(&a, &b).unwrap(),
        vec![true, true, false]
    );
    assert_eq!(
        engine.polygon_overlaps(&b, &a).unwrap(),
        vec![true, true, false]
    );
    assert!(rectcast::polygons_overlap(&square, &inner));
    assert!(rectcast::polygons_overlap(&inner, &square));
}

#[test]
fn a_multipolygon_overlaps_what_holds_any_of_its_parts_and_not_what_lies_in_a_hole() {
    let big = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
    let far = [[20.0, 20.0], [21.0, 20.0], [21.0, 21.0], [20.0, 21.0]];
    let small = [[4.0, 4.0], [5.0, 4.0], [5.0, 5.0], [4.0, 5.0]];
    let hole = [[2.0, 2.0], [8.0, 2.0], [8.0, 8.0], [2.0, 8.0]];
    // No boundaries meet: only the second part's vertex tells that it lies inside.
    let a = Polygons::from_polygons([vec![&big[..]], vec![&big[..], &hole[..]]]).unwrap();
    let b = Polygons::from_polygons([vec![&far[..], &small[..]]]).unwrap();
    let mut engine = common::cpu_engine();
    assert_eq!(engine.polygon_overlaps(&a, &b).unwrap(), vec![true, false]);
    assert_eq!(engine.polygon_overlaps(&b, &a).unwrap(), vec![true, false]);
    assert!(rectcast::polygons_overlap_rings(
        &[&far[..], &small[..]],
        &[&big[..]]
    ));
    assert!(rectcast::polygons_overlap_rings(
        &[&big[..]],
        &[&far[..], &small[..]]
    ));
    assert!(!rectcast::polygons_overlap_rings(
        &[&big[..], &hole[..]],
        &[&far[..], &small[..]]
    ));
    assert!(polygons::overlap_rings(
        &[&big[..]],
        &[&far[..], &small[..]]
    ));
}

#[test]
fn polygon_overlaps_match_the_oracle_on_both_backends() {
    let mut rng = SplitMix64::new(0x0e1);
    let shapes: Vec<Vec<Vec<[f32; 2]>>> = (0..30)
        .map(|_| random_polygon_rings(&mut rng, 1.0))
        .collect();
    let (a, b) = shapes.split_at(14);
    let (pa, pb) = (
        Polygons::from_polygons(a).unwrap(),
        Polygons::from_polygons(b).unwrap(),
    );
    let want: Vec<bool> = a
        .iter()
        .flat_map(|ra| b.iter().map(move |rb| polygons::overlap_rings(ra, rb)))
        .collect();
    let check = |what: &str, got: Vec<bool>| {
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            let (x, y) = (i / b.len(), i % b.len());
            panic!(
                "{what}: first difference at {i}: {:?} and {:?}: got {}",
                a[x], b[y], got[i]
            );
        }
    };
    check(
        "cpu",
        common::cpu_engine().polygon_overlaps(&pa, &pb).unwrap(),
    );
    for (i, ra) in a.iter().enumerate() {
        for (j, rb) in b.iter().enumerate() {
            assert_eq!(
                rectcast::polygons_overlap_rings(ra, rb),
                want[i * b.len() + j]
            );
        }
    }
    assert!(want.iter().any(|&o| o) && want.iter().any(|&o| !o));
    if let Some(mut gpu) = common::gpu_engine(
        "polygon_overlaps_match_the_oracle_on_both_backends",
        GpuLimits::default(),
    ) {
        // Every pair of edges and polygons, and through the grid.
        for broad_phase in [rectcast::BroadPhase::Off, rectcast::BroadPhase::On] {
            gpu.set_broad_phase(broad_phase);
            let got = gpu.polygon_overlaps(&pa, &pb).unwrap();
            assert_eq!(
                gpu.used_broad_phase(),
                broad_phase == rectcast::BroadPhase::On
            );
            check(&format!("gpu, {broad_phase:?}"), got);
        }
    }
}

#[test]
fn counts_of_segments_along_edges_through_vertices_and_of_points_match_the_pairs() {
    // Counts ask each pair's hit alone (`polygon_hit`): every segment between two points of a
    // lattice through the polygons' vertices, edges and notches (points, segments along edges,
    // rays through vertices, ends on the boundary, both ends in a notch), against the pairs.
    let triangle = [[5.0, 0.0], [7.0, 2.0], [5.0, 2.0]];
    let polygons = Polygons::from_rings([&SQUARE[..], &U[..], &triangle[..]]).unwrap();
    let lattice: Vec<f32> = (-1..=16).map(|k| k as f32 / 2.0).collect();
    let points: Vec<(f32, f32)> = lattice
        .iter()
        .step_by(2)
        .flat_map(|&x| lattice.iter().map(move |&y| (x, y)))
        .collect();
    let segments: Vec<Segment> = points
        .iter()
        .enumerate()
        .flat_map(|(i, &(x0, y0))| {
            points
                .iter()
                .skip(i % 7)
                .step_by(7)
                .map(move |&(x1, y1)| s(x0, y0, x1, y1))
        })
        .collect();
    let m = polygons.len();
    for broad_phase in [rectcast::BroadPhase::Off, rectcast::BroadPhase::On] {
        let mut engine = common::cpu_engine();
        engine.set_broad_phase(broad_phase);
        let pairs = engine.polygon_pairs(&segments, &polygons).unwrap();
        let counts = engine.polygon_counts(&segments, &polygons).unwrap();
        let mut per_polygon = vec![0u64; m];
        for (q, row) in pairs.chunks(m).enumerate() {
            for (p, pair) in row.iter().enumerate() {
                per_polygon[p] += pair.hit() as u64;
            }
            let want = row.iter().filter(|c| c.hit()).count() as u32;
            assert_eq!(
                counts.per_segment[q], want,
                "{broad_phase:?}: segment {q} {:?}: pairs {row:?}",
                segments[q]
            );
        }
        assert_eq!(counts.per_target, per_polygon, "{broad_phase:?}");
        let hits: u64 = per_polygon.iter().sum();
        assert!(
            hits > 1000 && hits < (segments.len() * m) as u64 - 1000,
            "{hits} hits of {} pairs",
            segments.len() * m
        );
    }
}
