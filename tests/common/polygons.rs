//! An independent oracle for segment × polygon and polygon × polygon (docs/semantics.md,
//! "Segment × polygon"): exact integers (num-bigint, every f32 as an integer over 2^149), ends
//! placed by Sunday's winding number, the boundary met through the segment oracle's exact
//! common parts (tests/common/segments.rs), ratios compared by cross-multiplication. Also an
//! O(n²) check of simplicity for the validator's tests, and generators of rings full of
//! degeneracies.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use rectcast::scene::SplitMix64;
use rectcast::{Kind, PolygonContact, Segment};

use super::degenerate::coordinate;
use super::exact::{round_ratio_to_f32, scaled_2_149};
use super::segments::common_part;

type P = (BigInt, BigInt);

fn point(x: f32, y: f32) -> P {
    (scaled_2_149(x), scaled_2_149(y))
}

/// (b − a) × (p − a).
fn orient(a: &P, b: &P, p: &P) -> BigInt {
    (&b.0 - &a.0) * (&p.1 - &a.1) - (&b.1 - &a.1) * (&p.0 - &a.0)
}

fn on_segment(p: &P, a: &P, b: &P) -> bool {
    orient(a, b, p).is_zero()
        && a.0.clone().min(b.0.clone()) <= p.0
        && p.0 <= a.0.clone().max(b.0.clone())
        && a.1.clone().min(b.1.clone()) <= p.1
        && p.1 <= a.1.clone().max(b.1.clone())
}

/// Whether (x, y) is in the closed polygon: on an edge, or a winding number other than 0.
pub fn contains(ring: &[[f32; 2]], x: f32, y: f32) -> bool {
    let p = point(x, y);
    let n = ring.len();
    let mut winding = 0i64;
    for k in 0..n {
        let a = point(ring[k][0], ring[k][1]);
        let b = point(ring[(k + 1) % n][0], ring[(k + 1) % n][1]);
        if on_segment(&p, &a, &b) {
            return true;
        }
        if a.1 <= p.1 {
            if b.1 > p.1 && orient(&a, &b, &p).is_positive() {
                winding += 1;
            }
        } else if b.1 <= p.1 && orient(&a, &b, &p).is_negative() {
            winding -= 1;
        }
    }
    winding != 0
}

fn edge(ring: &[[f32; 2]], k: usize) -> Segment {
    let ([x0, y0], [x1, y1]) = (ring[k], ring[(k + 1) % ring.len()]);
    Segment::new(x0, y0, x1, y1)
}

/// a.0 / a.1 < b.0 / b.1, denominators above 0.
fn less(a: &(BigInt, BigInt), b: &(BigInt, BigInt)) -> bool {
    &a.0 * &b.1 < &b.0 * &a.1
}

/// Whether (x, y) is in the closed region of `rings`: on an edge of any, or inside (a winding
/// number other than 0) an odd number of them.
pub fn contains_rings<R: AsRef<[[f32; 2]]>>(rings: &[R], x: f32, y: f32) -> bool {
    let p = point(x, y);
    let on_boundary = rings.iter().any(|ring| {
        let ring = ring.as_ref();
        (0..ring.len()).any(|k| {
            let e = edge(ring, k);
            on_segment(&p, &point(e.x0, e.y0), &point(e.x1, e.y1))
        })
    });
    let inside = rings
        .iter()
        .filter(|ring| contains(ring.as_ref(), x, y))
        .count();
    on_boundary || inside % 2 == 1
}

/// The contract's answer for `query` against the polygon `ring`.
pub fn segment_polygon(query: &Segment, ring: &[[f32; 2]]) -> PolygonContact {
    segment_polygon_rings(query, &[ring])
}

/// The contract's answer for `query` against the polygon of `rings` (edges numbered ring after
/// ring).
pub fn segment_polygon_rings<R: AsRef<[[f32; 2]]>>(query: &Segment, rings: &[R]) -> PolygonContact {
    let start_in = contains_rings(rings, query.x0, query.y0);
    let end_in = contains_rings(rings, query.x1, query.y1);
    let mut entry: Option<(usize, (BigInt, BigInt))> = None;
    let mut exit: Option<(usize, (BigInt, BigInt))> = None;
    let edges = rings
        .iter()
        .flat_map(|ring| (0..ring.as_ref().len()).map(move |k| edge(ring.as_ref(), k)));
    for (k, e) in edges.enumerate() {
        let Some(part) = common_part(query, &e) else {
            continue;
        };
        if entry.as_ref().is_none_or(|(_, t)| less(&part.enter, t)) {
            entry = Some((k, part.enter));
        }
        if exit.as_ref().is_none_or(|(_, t)| less(t, &part.exit)) {
            exit = Some((k, part.exit));
        }
    }
    if !start_in && !end_in && entry.is_none() {
        return PolygonContact::MISS;
    }
    let mut c = PolygonContact::whole(Kind::of_hit(start_in, end_in));
    if !start_in {
        let (k, t) = entry.expect("the boundary is met");
        c.t_enter = round_ratio_to_f32(&t.0, &t.1);
        c.entry_edge = k as u32;
    }
    if !end_in {
        let (k, t) = exit.expect("the boundary is met");
        c.t_exit = round_ratio_to_f32(&t.0, &t.1);
        c.exit_edge = k as u32;
    }
    c
}

/// Whether two closed polygons share a point: their boundaries meet, or a vertex of one is in
/// the other.
pub fn overlap(a: &[[f32; 2]], b: &[[f32; 2]]) -> bool {
    overlap_rings(&[a], &[b])
}

/// [`overlap`] for polygons of rings: some rings' boundaries meet, or some ring of one has a
/// vertex in the other (a ring whose boundary meets no other lies wholly in or out).
pub fn overlap_rings<R: AsRef<[[f32; 2]]>>(a: &[R], b: &[R]) -> bool {
    let boundaries_meet = a.iter().any(|ra| {
        let ra = ra.as_ref();
        b.iter().any(|rb| {
            let rb = rb.as_ref();
            (0..ra.len())
                .any(|i| (0..rb.len()).any(|j| common_part(&edge(ra, i), &edge(rb, j)).is_some()))
        })
    });
    boundaries_meet
        || a.iter()
            .any(|r| contains_rings(b, r.as_ref()[0][0], r.as_ref()[0][1]))
        || b.iter()
            .any(|r| contains_rings(a, r.as_ref()[0][0], r.as_ref()[0][1]))
}

/// Whether a ring (no closing repeat) is a valid simple polygon, in O(n²): three vertices or
/// more, no zero-length edge, consecutive edges meeting only at their shared vertex, others
/// not at all.
pub fn simple(ring: &[[f32; 2]]) -> bool {
    let n = ring.len();
    if n < 3 {
        return false;
    }
    for i in 0..n {
        if ring[i] == ring[(i + 1) % n] {
            return false;
        }
        for j in i + 1..n {
            let part = common_part(&edge(ring, i), &edge(ring, j));
            let consecutive = j == i + 1 || (i == 0 && j == n - 1);
            match part {
                None => {}
                Some(p) if consecutive && p.kind == rectcast::Contact::Overlap => return false,
                Some(_) if consecutive => {}
                Some(_) => return false,
            }
        }
    }
    true
}

/// Whether edges `i` and `j` of `ring` meet as a simple ring forbids: anywhere, or, for two
/// consecutive edges, along more than their shared vertex.
pub fn edges_meet(ring: &[[f32; 2]], i: usize, j: usize) -> bool {
    let n = ring.len();
    let consecutive = i.abs_diff(j) == 1 || i.abs_diff(j) == n - 1;
    match common_part(&edge(ring, i), &edge(ring, j)) {
        None => false,
        Some(p) if consecutive => p.kind == rectcast::Contact::Overlap,
        Some(_) => true,
    }
}

/// A random polygon of one to three simple rings over one region: a simple polygon, one with
/// holes, a multipolygon's parts, or rings that cross (the region is the points inside an odd
/// number of them, and every boundary).
pub fn random_polygon_rings(rng: &mut SplitMix64, scale: f32) -> Vec<Vec<[f32; 2]>> {
    let rings = 1 + rng.below(3) as usize;
    (0..rings).map(|_| random_simple_ring(rng, scale)).collect()
}

/// A random ring of 3 to 7 vertices on the degenerate generators' coordinates (grids, repeats,
/// now and then any float), simple or not.
pub fn random_ring(rng: &mut SplitMix64, scale: f32) -> Vec<[f32; 2]> {
    let n = 3 + rng.below(5) as usize;
    (0..n)
        .map(|_| [coordinate(rng, scale), coordinate(rng, scale)])
        .collect()
}

/// A random simple polygon: star-shaped around a point, vertices at increasing angles, on a
/// grid now and then (collinear edges, vertices on grid lines), or a random ring that happens
/// to be simple.
pub fn random_simple_ring(rng: &mut SplitMix64, scale: f32) -> Vec<[f32; 2]> {
    loop {
        let ring = if rng.below(2) == 0 {
            random_ring(rng, scale)
        } else {
            let n = 3 + rng.below(10) as usize;
            let (cx, cy) = (coordinate(rng, scale), coordinate(rng, scale));
            let cx = if cx.abs() > 8.0 * scale { 0.0 } else { cx };
            let cy = if cy.abs() > 8.0 * scale { 0.0 } else { cy };
            let mut angles: Vec<f64> = (0..n)
                .map(|_| rng.range(0.0, std::f32::consts::TAU) as f64)
                .collect();
            angles.sort_by(f64::total_cmp);
            angles
                .iter()
                .map(|&a| {
                    let r = (1 + rng.below(4)) as f64 * scale as f64;
                    let (x, y) = (cx as f64 + r * a.cos(), cy as f64 + r * a.sin());
                    if rng.below(2) == 0 {
                        [
                            (x / scale as f64).round() as f32 * scale,
                            (y / scale as f64).round() as f32 * scale,
                        ]
                    } else {
                        [x as f32, y as f32]
                    }
                })
                .collect()
        };
        let valid = ring.iter().all(|v| {
            v.iter()
                .all(|c| c.is_finite() && c.abs() <= rectcast::MAX_ABS_COORDINATE)
        });
        if valid && simple(&ring) {
            return ring;
        }
    }
}

/// A pentagon, the square [-4, 4]² in units of `unit` with a vertex at the small value `small`
/// (either sign) off the y axis, at a random height on the grid: every edge of it with a query
/// on the grid of step `unit` spans as many binary orders as `unit` and `small` do.
pub fn notched_pentagon(rng: &mut SplitMix64, unit: f32, small: f32) -> Vec<Vec<[f32; 2]>> {
    let notch = [
        if rng.below(2) == 0 { small } else { -small },
        (rng.below(7) as f32 - 3.0) * unit,
    ];
    let g = 4.0 * unit;
    vec![vec![[-g, -g], [g, -g], [g, g], notch, [-g, g]]]
}
