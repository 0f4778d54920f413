//! A scene of mixed targets (`Targets`): one call answers rects, circles, walls and polygons
//! together, in one exact order. Checked element by element against a brute force over the
//! scalar functions ordered by an independent exact oracle (rationals, and circles' roots
//! bracketed by integer square roots), on the CPU and on the GPU; hits whose rounded t are
//! equal but whose exact t differ come in their exact order, whatever their kinds; exact ties go
//! to the lower kind, then index; filters, skipped elements and bad calls.
//!
//! scripts/test.sh: native only (the merge is host code; each kind's kernels are tested under
//! the emulated arithmetics in their own files).

mod common;

use std::cmp::Ordering;
use std::time::Duration;

use common::exact::scaled_2_149;
use common::polygons::random_simple_ring;
use common::segments::common_part;
use common::{cpu_engine, gpu_engine};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use rectcast::FrameCapacity;
use rectcast::scene::{SplitMix64, bullet_hell};
use rectcast::{
    Batch, BroadPhase, Circle, CpuOptions, Engine, Error, Filter, FrameLoop, GpuLimits, InputArray,
    Kind, LayerHit, LayeredBatch, Polygons, Rect, Segment, ShapeHit, TargetBatch, TargetContact,
    TargetHit, TargetKind, Targets, WaitLimit, segment_circle, segment_polygon_rings, segment_rect,
    segment_segment,
};

/// An exact entry time: a ratio (den > 0) or a circle's smaller root (−b − √disc) / a.
#[derive(Clone, Debug)]
enum Exact {
    Ratio(BigInt, BigInt),
    Root { a: BigInt, b: BigInt, disc: BigInt },
}

fn ratio(n: BigInt, d: BigInt) -> Exact {
    if d.is_negative() {
        Exact::Ratio(-n, -d)
    } else {
        Exact::Ratio(n, d)
    }
}

impl Exact {
    /// As a ratio, when it is one.
    fn rational(&self) -> Option<(BigInt, BigInt)> {
        match self {
            Exact::Ratio(n, d) => Some((n.clone(), d.clone())),
            Exact::Root { a, b, disc } => {
                let s = disc.sqrt();
                (&s * &s == *disc).then(|| (-b - s, a.clone()))
            }
        }
    }

    /// Brackets of an irrational root, ever finer: (lo, hi, den).
    fn bracket(a: &BigInt, b: &BigInt, disc: &BigInt, k: u64) -> (BigInt, BigInt, BigInt) {
        let s = (disc << (2 * k)).sqrt();
        let base = -(b << k);
        (&base - &s - 1, &base - &s, a << k)
    }

    fn cmp(&self, other: &Exact) -> Ordering {
        let ratios =
            |(n1, d1): (BigInt, BigInt), (n2, d2): (BigInt, BigInt)| (n1 * d2).cmp(&(n2 * d1));
        match (self.rational(), other.rational()) {
            (Some(x), Some(y)) => ratios(x, y),
            (None, Some((n, d))) => {
                let Exact::Root { a, b, disc } = self else {
                    unreachable!()
                };
                let mut k = 64;
                loop {
                    let (lo, hi, den) = Self::bracket(a, b, disc, k);
                    if ratios((hi, den.clone()), (n.clone(), d.clone())) == Ordering::Less {
                        return Ordering::Less;
                    }
                    if ratios((lo, den), (n.clone(), d.clone())) == Ordering::Greater {
                        return Ordering::Greater;
                    }
                    k *= 2;
                }
            }
            (Some(_), None) => other.cmp(self).reverse(),
            (None, None) => {
                let (
                    Exact::Root {
                        a: a1,
                        b: b1,
                        disc: d1,
                    },
                    Exact::Root {
                        a: a2,
                        b: b2,
                        disc: d2,
                    },
                ) = (self, other)
                else {
                    unreachable!()
                };
                // Two irrational roots are equal only with equal integer and surd parts.
                if a2 * a2 * d1 == a1 * a1 * d2 && a2 * b1 == a1 * b2 {
                    return Ordering::Equal;
                }
                let mut k = 64;
                loop {
                    let (lo1, hi1, den1) = Self::bracket(a1, b1, d1, k);
                    let (lo2, hi2, den2) = Self::bracket(a2, b2, d2, k);
                    if ratios((hi1, den1.clone()), (lo2, den2.clone())) == Ordering::Less {
                        return Ordering::Less;
                    }
                    if ratios((lo1, den1), (hi2, den2)) == Ordering::Greater {
                        return Ordering::Greater;
                    }
                    k *= 2;
                }
            }
        }
    }
}

fn zero() -> Exact {
    Exact::Ratio(BigInt::zero(), BigInt::from(1))
}

/// Liang–Barsky in rationals: the latest entry into a slab, or 0.
fn rect_entry(s: &Segment, r: &Rect) -> Exact {
    let mut best = zero();
    for (c0, c1, lo, hi) in [
        (s.x0, s.x1, r.min_x, r.max_x),
        (s.y0, s.y1, r.min_y, r.max_y),
    ] {
        let (c0, d) = (scaled_2_149(c0), scaled_2_149(c1) - scaled_2_149(c0));
        if d.is_zero() {
            continue;
        }
        let bound = scaled_2_149(if d.is_positive() { lo } else { hi });
        let t = ratio(bound - c0, d);
        if t.cmp(&best) == Ordering::Greater {
            best = t;
        }
    }
    best
}

fn wall_entry(s: &Segment, w: &Segment) -> Exact {
    let part = common_part(s, w).expect("a hit");
    ratio(part.enter.0, part.enter.1)
}

fn circle_entry(s: &Segment, c: &Circle) -> Exact {
    let v = scaled_2_149;
    let (fx, fy) = (v(s.x0) - v(c.cx), v(s.y0) - v(c.cy));
    let (dx, dy) = (v(s.x1) - v(s.x0), v(s.y1) - v(s.y0));
    let a = &dx * &dx + &dy * &dy;
    let b = &fx * &dx + &fy * &dy;
    let cc = &fx * &fx + &fy * &fy - v(c.r) * v(c.r);
    if !cc.is_positive() {
        return zero();
    }
    let disc = &b * &b - &a * &cc;
    Exact::Root { a, b, disc }
}

/// The smallest first t over the edges the segment meets, 0 when it starts inside.
fn polygon_entry(s: &Segment, rings: &[Vec<[f32; 2]>], kind: Kind) -> Exact {
    if matches!(kind, Kind::Inside | Kind::Exit) {
        return zero();
    }
    rings
        .iter()
        .flat_map(|ring| (0..ring.len()).map(move |k| (ring, k)))
        .filter_map(|(ring, k)| {
            let (a, b) = (ring[k], ring[(k + 1) % ring.len()]);
            common_part(s, &Segment::new(a[0], a[1], b[0], b[1]))
        })
        .map(|part| ratio(part.enter.0, part.enter.1))
        .min_by(|x, y| x.cmp(y))
        .expect("a hit meets an edge")
}

struct Scene {
    segments: Vec<Segment>,
    segment_filters: Vec<Filter>,
    rects: Vec<Rect>,
    circles: Vec<Circle>,
    walls: Vec<Segment>,
    /// Each polygon's rings: one, or two (a hole, a second part, or crossing rings).
    rings: Vec<Vec<Vec<[f32; 2]>>>,
    filters: [Vec<Filter>; 4],
}

fn team(rng: &mut SplitMix64) -> Filter {
    match rng.below(4) {
        0 => Filter::new(1, 2),
        1 => Filter::new(2, 1),
        _ => Filter::ALL,
    }
}

/// Coordinates on a grid of `steps` steps a side: few steps give many exact ties (shared sides,
/// starts inside several targets), many give rounded ties of different exact t (entries a few
/// units apart along segments thousands of units long).
fn scene(seed: u64, segments: usize, each: usize, steps: u64) -> Scene {
    let mut rng = SplitMix64::new(seed);
    let c = |rng: &mut SplitMix64| (rng.below(steps + 1) as f32 - (steps / 2) as f32) / 2.0;
    let segments: Vec<Segment> = (0..segments)
        .map(|_| Segment::new(c(&mut rng), c(&mut rng), c(&mut rng), c(&mut rng)))
        .collect();
    let rects = (0..each)
        .map(|_| {
            let (x, y) = (c(&mut rng), c(&mut rng));
            Rect::new(x, y, x + rng.below(8) as f32, y + rng.below(8) as f32)
        })
        .collect();
    let circles = (0..each)
        .map(|_| Circle::new(c(&mut rng), c(&mut rng), rng.below(9) as f32 / 2.0))
        .collect();
    let walls = (0..each)
        .map(|_| Segment::new(c(&mut rng), c(&mut rng), c(&mut rng), c(&mut rng)))
        .collect();
    let rings = (0..each / 2)
        .map(|p| {
            loop {
                // Moved, a ring's rounding may make it repeat a vertex: another, then. Every
                // third polygon has a second ring about the same point.
                let (x, y) = (c(&mut rng), c(&mut rng));
                let rings: Vec<Vec<[f32; 2]>> = (0..1 + (p % 3 == 0) as usize)
                    .map(|_| {
                        random_simple_ring(&mut rng, 2.0)
                            .iter()
                            .map(|v| [v[0] + x, v[1] + y])
                            .collect()
                    })
                    .collect();
                if Polygons::from_polygons([&rings]).is_ok() {
                    break rings;
                }
            }
        })
        .collect::<Vec<Vec<Vec<[f32; 2]>>>>();
    let segment_filters = (0..segments.len()).map(|_| team(&mut rng)).collect();
    let counts = [each, each, each, rings.len()];
    let filters = counts.map(|n| (0..n).map(|_| team(&mut rng)).collect());
    Scene {
        segments,
        segment_filters,
        rects,
        circles,
        walls,
        rings,
        filters,
    }
}

/// Segment `i` of a near-ties scene: from (x0, y0) by (dx, dy), coprime, with u·dx − v·dy = 1,
/// so that it crosses the line x = bx = x0 + v at t = v / dx, 1 / (dx·dy) (about 2^-26) before
/// the line y = by = y0 + u at u / dy. Returns the segment and (bx, by).
fn near_tie_crossing(rng: &mut SplitMix64, i: usize) -> (Segment, f32, f32) {
    let gcd = |mut a: i64, mut b: i64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let (dx, dy) = loop {
        let (dx, dy) = (4096 + rng.below(4096) as i64, 4096 + rng.below(4096) as i64);
        if gcd(dx, dy) == 1 {
            break (dx, dy);
        }
    };
    let u = (1..dy).find(|u| u * dx % dy == 1).unwrap();
    let v = (u * dx - 1) / dy;
    let (x0, y0) = (i as i64 * 20_000, -(rng.below(4096) as i64));
    let s = Segment::new(x0 as f32, y0 as f32, (x0 + dx) as f32, (y0 + dy) as f32);
    (s, (x0 + v) as f32, (y0 + u) as f32)
}

/// Segments each entering two targets 1 / (dx·dy) apart in t, about 2^-26: often the same f32.
/// Over dx, dy coprime, u·dx − v·dy = 1 gives the line x = x0 + v crossed at t = v / dx, just
/// before the line y = y0 + u at u / dy. The first is a wall's or a polygon's edge, the second a
/// rect's side, so that the exact order and the kinds' order disagree.
fn near_ties(seed: u64, count: usize) -> Scene {
    let mut rng = SplitMix64::new(seed);
    let mut scene = scene(seed, 0, 0, 2);
    for i in 0..count {
        let (segment, bx, by) = near_tie_crossing(&mut rng, i);
        scene.segments.push(segment);
        scene
            .rects
            .push(Rect::new(bx - 5.0, by, bx + 5.0, by + 5.0));
        if i % 2 == 0 {
            scene.walls.push(Segment::new(bx, by - 5.0, bx, by + 5.0));
        } else {
            // Every other polygon has a small hole as its first ring, so that the edge entered
            // (along x = bx) is the second ring's closing edge: the exact order reads it by
            // the polygon's edge numbering.
            let hole = vec![
                [bx + 2.0, by - 0.5],
                [bx + 3.0, by - 0.5],
                [bx + 2.0, by + 0.5],
            ];
            let triangle = vec![[bx, by - 5.0], [bx + 5.0, by], [bx, by + 5.0]];
            scene.rings.push(match i % 4 {
                1 => vec![hole, triangle],
                _ => vec![triangle],
            });
        }
    }
    scene.segment_filters = vec![Filter::ALL; count];
    let counts = [scene.rects.len(), 0, scene.walls.len(), scene.rings.len()];
    scene.filters = counts.map(|n| vec![Filter::ALL; n]);
    scene
}

/// Segments each entering two targets of one kind, the higher index first in exact arithmetic
/// but often at the same f32, so that only the exact order picks it: walls and polygon edges
/// on the lines x = x0 + v and y = y0 + u of [`near_ties`] (1 / (dx·dy) apart, about 2^-26),
/// and two circles about one center, their radii one ulp apart (entries about 2^-35 apart).
/// Then walls crossed at t that round to 0 (about 1e-48): the lower wall crossed later.
fn near_ties_within_kinds(seed: u64, count: usize) -> Scene {
    let mut rng = SplitMix64::new(seed);
    let mut scene = scene(seed, 0, 0, 2);
    for i in 0..count {
        let (segment, bx, by) = near_tie_crossing(&mut rng, i);
        scene.segments.push(segment);
        match i % 3 {
            // The lower index on y = by, crossed 1 / (dx·dy) after x = bx.
            0 => {
                scene.walls.push(Segment::new(bx - 5.0, by, bx + 5.0, by));
                scene.walls.push(Segment::new(bx, by - 5.0, bx, by + 5.0));
            }
            1 => {
                scene
                    .rings
                    .push(vec![vec![[bx - 5.0, by], [bx + 5.0, by], [bx, by + 5.0]]]);
                scene
                    .rings
                    .push(vec![vec![[bx, by - 5.0], [bx + 5.0, by], [bx, by + 5.0]]]);
            }
            _ => {
                let (cx, cy) = (
                    (segment.x0 + segment.x1) / 2.0,
                    (segment.y0 + segment.y1) / 2.0,
                );
                let r = 3.0 + rng.below(64) as f32 / 16.0;
                scene.circles.push(Circle::new(cx, cy, r));
                scene.circles.push(Circle::new(cx, cy, r.next_up()));
            }
        }
    }
    // From just above y = 0 down a long way: the wall at y = 1e-39 (index 1) is crossed at
    // t ≈ 9e-49, before the wall at y = 0 (index 0) at t ≈ 1e-48, and both round to 0.
    scene.walls.push(Segment::new(-1.0, 0.0, 1.0, 0.0));
    scene.walls.push(Segment::new(-1.0, 1e-39, 1.0, 1e-39));
    scene.segments.push(Segment::new(0.0, 1e-38, 0.0, -1e10));
    scene.segment_filters = vec![Filter::ALL; scene.segments.len()];
    let counts = [0, scene.circles.len(), scene.walls.len(), scene.rings.len()];
    scene.filters = counts.map(|n| vec![Filter::ALL; n]);
    scene
}

fn targets_of(scene: &Scene) -> Targets {
    let mut targets = Targets::new();
    targets.set_rects(&scene.rects).unwrap();
    targets.set_circles(&scene.circles).unwrap();
    targets.set_walls(&scene.walls).unwrap();
    targets.set_polygons(Polygons::from_polygons(&scene.rings).unwrap());
    for kind in TargetKind::ALL {
        targets.set_filters(kind, Some(&scene.filters[kind as usize]));
    }
    targets
}

/// Every tested hit, from the scalar functions, in (segment, kind, index) order, each with its
/// exact entry time.
fn brute_force(scene: &Scene) -> Vec<(TargetHit, Exact)> {
    let mut out = Vec::new();
    for (i, s) in scene.segments.iter().enumerate() {
        let tested = |kind: TargetKind, k: usize| {
            scene.segment_filters[i].tests(&scene.filters[kind as usize][k])
        };
        let mut push = |k: usize, contact: TargetContact, exact: Exact| {
            let hit = TargetHit {
                segment: i as u32,
                target: k as u32,
                contact,
            };
            out.push((hit, exact));
        };
        for (k, r) in scene.rects.iter().enumerate() {
            let c = segment_rect(s, r);
            if c.hit() && tested(TargetKind::Rect, k) {
                push(k, TargetContact::Rect(c), rect_entry(s, r));
            }
        }
        for (k, circle) in scene.circles.iter().enumerate() {
            let c = segment_circle(s, circle);
            if c.hit() && tested(TargetKind::Circle, k) {
                push(k, TargetContact::Circle(c), circle_entry(s, circle));
            }
        }
        for (k, w) in scene.walls.iter().enumerate() {
            let c = segment_segment(s, w);
            if c.hit() && tested(TargetKind::Wall, k) {
                push(k, TargetContact::Wall(c), wall_entry(s, w));
            }
        }
        for (k, ring) in scene.rings.iter().enumerate() {
            let c = segment_polygon_rings(s, ring);
            if c.hit() && tested(TargetKind::Polygon, k) {
                push(
                    k,
                    TargetContact::Polygon(c),
                    polygon_entry(s, ring, c.kind()),
                );
            }
        }
    }
    out
}

/// Each segment's first hit: the least exact entry, then kind, then index.
fn first_hits(hits: &[(TargetHit, Exact)], segments: usize) -> (Vec<Option<TargetHit>>, usize) {
    let mut first: Vec<Option<(TargetHit, Exact)>> = vec![None; segments];
    let mut near_ties = 0;
    for (hit, exact) in hits {
        let slot = &mut first[hit.segment as usize];
        let sooner = match slot {
            None => true,
            Some((best, best_exact)) => {
                let order = exact.cmp(best_exact);
                if hit.contact.t_enter() == best.contact.t_enter() && order != Ordering::Equal {
                    near_ties += 1;
                }
                order == Ordering::Less
            }
        };
        if sooner {
            *slot = Some((*hit, exact.clone()));
        }
    }
    (
        first.into_iter().map(|f| f.map(|(h, _)| h)).collect(),
        near_ties,
    )
}

fn describe(scene: &Scene, hit: &Option<TargetHit>) -> String {
    let Some(h) = hit else {
        return "none".into();
    };
    let k = h.target as usize;
    let target = match h.kind() {
        TargetKind::Rect => format!("{:?}", scene.rects[k]),
        TargetKind::Circle => format!("{:?}", scene.circles[k]),
        TargetKind::Wall => format!("{:?}", scene.walls[k]),
        TargetKind::Polygon => format!("{:?}", scene.rings[k]),
    };
    format!("{h:?} on {target}")
}

fn assert_scene(engine: &mut Engine, scene: &Scene, what: &str) {
    let targets = targets_of(scene);
    let batch =
        TargetBatch::over(&scene.segments, &targets).with_segment_filters(&scene.segment_filters);
    let expected = brute_force(scene);
    let (first, _) = first_hits(&expected, scene.segments.len());
    let got = engine.target_first_hits(&batch).unwrap();
    for (i, (want, got)) in first.iter().zip(&got).enumerate() {
        assert_eq!(
            want,
            got,
            "{what}: segment {i} {:?}: expected {}, got {}",
            scene.segments[i],
            describe(scene, want),
            describe(scene, got)
        );
    }
    let hits = engine.target_hits(&batch).unwrap();
    for (k, (want, got)) in expected.iter().map(|(h, _)| h).zip(&hits).enumerate() {
        assert_eq!(want, got, "{what}: hit {k}");
    }
    assert_eq!(hits.len(), expected.len(), "{what}: hits");
    let counts = engine.target_counts(&batch).unwrap();
    let mut per_segment = vec![0; scene.segments.len()];
    let mut per_target = TargetKind::ALL.map(|k| vec![0u64; targets.len(k)]);
    for (h, _) in &expected {
        per_segment[h.segment as usize] += 1;
        per_target[h.kind() as usize][h.target as usize] += 1;
    }
    assert_eq!(
        counts.per_segment, per_segment,
        "{what}: counts per segment"
    );
    for kind in TargetKind::ALL {
        assert_eq!(
            counts.of(kind),
            per_target[kind as usize],
            "{what}: counts of {kind:?}"
        );
    }
}

#[test]
fn mixed_scenes_match_the_brute_force_in_exact_order_on_the_cpu() {
    for seed in 0..4 {
        let scene = scene(seed, 400, 60, 64);
        let (_, near_ties) = first_hits(&brute_force(&scene), scene.segments.len());
        eprintln!("seed {seed}: {near_ties} rounded ties of different exact t");
        assert_scene(&mut cpu_engine(), &scene, &format!("cpu, seed {seed}"));
        // Through the grids (too few for them by default): starts inside shapes and on
        // their boundaries, on the lattice, answered from the start's cell.
        let mut engine = cpu_engine();
        engine.set_broad_phase(BroadPhase::On);
        assert_scene(&mut engine, &scene, &format!("cpu, grids, seed {seed}"));
    }
    let scene = near_ties(9, 200);
    let (_, near_ties) = first_hits(&brute_force(&scene), scene.segments.len());
    eprintln!("near ties: {near_ties} rounded ties of different exact t");
    assert!(near_ties > 40, "{near_ties}");
    assert_scene(&mut cpu_engine(), &scene, "cpu, near ties");
}

#[test]
fn within_a_kind_rounded_ties_go_to_the_exact_first_entry_whatever_the_broad_phase() {
    let scene = near_ties_within_kinds(21, 150);
    let (_, near_ties) = first_hits(&brute_force(&scene), scene.segments.len());
    eprintln!("near ties within kinds: {near_ties} rounded ties of different exact t");
    assert!(near_ties > 60, "{near_ties}");
    for broad_phase in [BroadPhase::On, BroadPhase::Off] {
        let mut engine = cpu_engine();
        engine.set_broad_phase(broad_phase);
        assert_scene(&mut engine, &scene, &format!("cpu, {broad_phase:?}"));
    }
}

/// A kind's own first hit as the scene names it.
fn as_target<C>(contact: fn(C) -> TargetContact, hit: Option<ShapeHit<C>>) -> Option<TargetHit> {
    hit.map(|h| TargetHit {
        segment: h.segment,
        target: h.shape,
        contact: contact(h.contact),
    })
}

/// `got` against `want`, element by element: the first difference, with its segment and targets.
fn assert_route(scene: &Scene, what: &str, want: &[Option<TargetHit>], got: &[Option<TargetHit>]) {
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what}: segment {i} {:?}: expected {}, got {}",
            scene.segments[i],
            describe(scene, &want[i]),
            describe(scene, &got[i])
        );
    }
}

/// Every public route to a first hit, on the near ties within kinds (two targets of one kind
/// entered under an ulp apart, the higher index first): each kind's own call
/// (`shape_first_hits` over walls and over circles, `polygon_first_hits`), the scene's
/// (`target_first_hits`, `_into`), layers (`layered_first_hits`, `_into`) and the frame loop's
/// two, on the CPU and on the GPU: each picks the exact-earliest target, element by element
/// against the brute force.
#[test]
fn every_first_hit_route_picks_the_exact_earliest_target_on_near_ties() {
    let scene = near_ties_within_kinds(21, 150);
    let expected = brute_force(&scene);
    let (want, near_ties) = first_hits(&expected, scene.segments.len());
    assert!(near_ties > 60, "{near_ties}");
    // Each kind's own call answers the scene's first hit among that kind alone.
    let of_kind = |kind: TargetKind| {
        let hits: Vec<_> = expected
            .iter()
            .filter(|(h, _)| h.kind() == kind)
            .cloned()
            .collect();
        let (first, near_ties) = first_hits(&hits, scene.segments.len());
        assert!(near_ties > 10, "{kind:?}: {near_ties} near ties");
        first
    };
    let (walls, circles, polygons) = (
        of_kind(TargetKind::Wall),
        of_kind(TargetKind::Circle),
        of_kind(TargetKind::Polygon),
    );
    let targets = targets_of(&scene);
    let batch = TargetBatch::over(&scene.segments, &targets);
    let rings = Polygons::from_polygons(&scene.rings).unwrap();
    let layers = split_scene(&scene, 40).map(|l| targets_of(&l));
    let layer_refs = [&layers[0], &layers[1]];
    let layered = LayeredBatch::over(&scene.segments, &layer_refs);
    let from_layers = |hits: &[Option<LayerHit>]| -> Vec<Option<TargetHit>> {
        // A layer's index within its kind, plus the first layer's of that kind.
        let whole = |h: &LayerHit| TargetHit {
            target: h.hit.target + h.layer * layers[0].len(h.hit.kind()) as u32,
            ..h.hit
        };
        hits.iter().map(|h| h.as_ref().map(whole)).collect()
    };
    let n = scene.segments.len();
    let gpu = gpu_engine(
        "every_first_hit_route_picks_the_exact_earliest_target_on_near_ties",
        GpuLimits::default(),
    );
    for mut engine in [Some(cpu_engine()), gpu].into_iter().flatten() {
        let on = engine.chosen().to_string();
        let route = |what: &str| format!("{on}, {what}");
        let got: Vec<_> = engine
            .shape_first_hits(&scene.segments, &scene.walls)
            .unwrap()
            .into_iter()
            .map(|h| as_target(TargetContact::Wall, h))
            .collect();
        assert_route(&scene, &route("shape_first_hits over walls"), &walls, &got);
        let got: Vec<_> = engine
            .shape_first_hits(&scene.segments, &scene.circles)
            .unwrap()
            .into_iter()
            .map(|h| as_target(TargetContact::Circle, h))
            .collect();
        assert_route(
            &scene,
            &route("shape_first_hits over circles"),
            &circles,
            &got,
        );
        let got: Vec<_> = engine
            .polygon_first_hits(&scene.segments, &rings)
            .unwrap()
            .into_iter()
            .map(|h| as_target(TargetContact::Polygon, h))
            .collect();
        assert_route(&scene, &route("polygon_first_hits"), &polygons, &got);
        let got = engine.target_first_hits(&batch).unwrap();
        assert_route(&scene, &route("target_first_hits"), &want, &got);
        let mut out = vec![None; n];
        engine.target_first_hits_into(&batch, &mut out).unwrap();
        assert_route(&scene, &route("target_first_hits_into"), &want, &out);
        let got = from_layers(&engine.layered_first_hits(&layered).unwrap());
        assert_route(&scene, &route("layered_first_hits"), &want, &got);
        let mut layered_out = vec![None; n];
        engine
            .layered_first_hits_into(&layered, &mut layered_out)
            .unwrap();
        let got = from_layers(&layered_out);
        assert_route(&scene, &route("layered_first_hits_into"), &want, &got);
        let mut frames = FrameLoop::new(engine, FrameCapacity::new(n, 1)).unwrap();
        frames.target_first_hits_into(&batch, &mut out).unwrap();
        assert_route(
            &scene,
            &route("FrameLoop::target_first_hits_into"),
            &want,
            &out,
        );
        frames
            .layered_first_hits_into(&layered, &mut layered_out)
            .unwrap();
        let got = from_layers(&layered_out);
        assert_route(
            &scene,
            &route("FrameLoop::layered_first_hits_into"),
            &want,
            &got,
        );
    }
}

/// Each kind after the rects looks only for hits no later than the kinds' before it, and not
/// at all past an exact start inside one. A rect's top side and a circle's top point at y = 0,
/// entered from just above at t ≈ 1e-48, round to 0 like a start inside, but are not: the wall
/// at y = 1e-39, crossed at t ≈ 9e-49, comes first for both segments.
#[test]
fn a_wall_crossed_before_a_rect_or_a_circle_at_t_that_round_to_0_comes_first() {
    let mut scene = scene(1, 0, 0, 2);
    scene.segments = vec![
        Segment::new(0.0, 1e-38, 0.0, -1e10),
        Segment::new(10.0, 1e-38, 10.0, -1e10),
    ];
    scene.rects = vec![Rect::new(-1.0, -1.0, 1.0, 0.0)];
    scene.circles = vec![Circle::new(10.0, -1.0, 1.0)];
    scene.walls = vec![Segment::new(-1.0, 1e-39, 11.0, 1e-39)];
    scene.segment_filters = vec![Filter::ALL; 2];
    scene.filters = [1, 1, 1, 0].map(|n| vec![Filter::ALL; n]);
    let (first, _) = first_hits(&brute_force(&scene), 2);
    for hit in &first {
        let hit = hit.expect("a hit");
        assert_eq!((hit.kind(), hit.contact.t_enter()), (TargetKind::Wall, 0.0));
    }
    assert_scene(&mut cpu_engine(), &scene, "entries that round to 0");
}

/// A game's frames: static circles and polygons set once, rects and walls moved every frame,
/// on one engine, which keeps each kind's grid and layout between frames; every frame against
/// the brute force, with the grids forced on.
#[test]
fn static_kinds_set_once_and_moving_kinds_each_frame_answer_every_frame_afresh() {
    let mut engine = cpu_engine();
    engine.set_broad_phase(BroadPhase::On);
    let level = scene(31, 300, 200, 512);
    for frame in 0..4 {
        let moved = scene(40 + frame, 0, 200, 512);
        let frame_scene = Scene {
            rects: moved.rects,
            walls: moved.walls,
            segments: level.segments.clone(),
            segment_filters: level.segment_filters.clone(),
            circles: level.circles.clone(),
            rings: level.rings.clone(),
            filters: [
                moved.filters[0].clone(),
                level.filters[1].clone(),
                moved.filters[2].clone(),
                level.filters[3].clone(),
            ],
        };
        assert_scene(&mut engine, &frame_scene, &format!("frame {frame}"));
    }
}

/// `scene`'s targets as two layers, each kind's arrays split at `at` (their filters with them),
/// both over its segments.
fn split_scene(scene: &Scene, at: usize) -> [Scene; 2] {
    fn halves<T: Clone>(v: &[T], at: usize) -> [Vec<T>; 2] {
        let (a, b) = v.split_at(at.min(v.len()));
        [a.to_vec(), b.to_vec()]
    }
    let [rects, circles, walls, rings] = [
        halves(&scene.rects, at).map(|v| (v, Vec::new(), Vec::new(), Vec::new())),
        halves(&scene.circles, at).map(|v| (Vec::new(), v, Vec::new(), Vec::new())),
        halves(&scene.walls, at).map(|v| (Vec::new(), Vec::new(), v, Vec::new())),
        halves(&scene.rings, at).map(|v| (Vec::new(), Vec::new(), Vec::new(), v)),
    ];
    let filters = scene.filters.clone().map(|f| halves(&f, at));
    [0, 1].map(|l| Scene {
        segments: scene.segments.clone(),
        segment_filters: scene.segment_filters.clone(),
        rects: rects[l].0.clone(),
        circles: circles[l].1.clone(),
        walls: walls[l].2.clone(),
        rings: rings[l].3.clone(),
        filters: filters.clone().map(|f| f[l].clone()),
    })
}

/// A hit of one scene, as two layers of its targets name it, `first` the first layer.
fn in_two_layers(first: &Targets, hit: &TargetHit) -> LayerHit {
    let before = first.len(hit.kind()) as u32;
    let layer = u32::from(hit.target >= before);
    let target = hit.target - layer * before;
    LayerHit {
        layer,
        hit: TargetHit { target, ..*hit },
    }
}

/// `scene` split into two layers at `at` answers, in one layered call, what the one scene
/// answers: each hit the same, its index within its kind the layer's plus the layers' before.
fn assert_layers_as_one_scene(engine: &mut Engine, scene: &Scene, at: usize, what: &str) {
    let layers = split_scene(scene, at).map(|l| targets_of(&l));
    let layer_refs = [&layers[0], &layers[1]];
    let batch = LayeredBatch::over(&scene.segments, &layer_refs)
        .with_segment_filters(&scene.segment_filters);
    let expected = brute_force(scene);
    let (first, _) = first_hits(&expected, scene.segments.len());
    let in_layers = |hit: &TargetHit| in_two_layers(&layers[0], hit);
    let got = engine.layered_first_hits(&batch).unwrap();
    for (i, (want, got)) in first.iter().zip(&got).enumerate() {
        assert_eq!(
            want.as_ref().map(in_layers),
            *got,
            "{what}: segment {i} {:?}: expected {}",
            scene.segments[i],
            describe(scene, want),
        );
    }
    let hits = engine.layered_hits(&batch).unwrap();
    for (k, (want, got)) in expected.iter().zip(&hits).enumerate() {
        assert_eq!(in_layers(&want.0), *got, "{what}: hit {k}");
    }
    assert_eq!(hits.len(), expected.len(), "{what}: hits");
    let counts = engine.layered_counts(&batch).unwrap();
    let mut per_segment = vec![0; scene.segments.len()];
    let mut per_target = layers
        .each_ref()
        .map(|l| TargetKind::ALL.map(|k| vec![0u64; l.len(k)]));
    for (h, _) in &expected {
        per_segment[h.segment as usize] += 1;
        let h = in_layers(h);
        per_target[h.layer as usize][h.hit.kind() as usize][h.hit.target as usize] += 1;
    }
    let summed: Vec<u32> = (0..scene.segments.len())
        .map(|i| counts.iter().map(|c| c.per_segment[i]).sum())
        .collect();
    assert_eq!(summed, per_segment, "{what}: counts per segment");
    for (l, layer) in counts.iter().enumerate() {
        for kind in TargetKind::ALL {
            let want = &per_target[l][kind as usize];
            assert_eq!(
                layer.of(kind),
                want,
                "{what}: layer {l}'s counts of {kind:?}"
            );
        }
    }
}

/// A level's static layer and a frame's layer, queried as one scene: ties across layers (a
/// start inside targets of both, shared sides) go to the lower kind, then the lower layer,
/// then the lower index; rounded ties of different exact t across layers come in exact order.
#[test]
fn layers_answer_as_the_one_scene_their_arrays_make_in_exact_order_on_the_cpu() {
    for (seed, at) in [(0, 30), (1, 0), (2, 60), (3, 17)] {
        let scene = scene(seed, 400, 60, 64);
        assert_layers_as_one_scene(&mut cpu_engine(), &scene, at, &format!("cpu, seed {seed}"));
    }
    // The near ties' two targets of a segment are of one kind, or of two, in either layer.
    for at in [0, 50, 100, 200] {
        let what = format!("cpu, near ties split at {at}");
        assert_layers_as_one_scene(&mut cpu_engine(), &near_ties(9, 200), at, &what);
        let what = format!("cpu, near ties within kinds split at {at}");
        let scene = near_ties_within_kinds(5, 200);
        assert_layers_as_one_scene(&mut cpu_engine(), &scene, at, &what);
    }
}

/// Three layers, team filters and a bad bullet after many bullets a first layer's rect settles
/// (they start inside it): the later layers query only the bullets still open, gathered into a
/// batch of their own, and the answers are still the one scene's, the bad bullet named by its
/// index in the whole batch. A later layer's bad filters fail the call even when every bullet
/// is settled before it.
#[test]
fn later_layers_query_only_the_open_bullets_and_name_them_in_the_whole_batch() {
    let scene = scene(6, 400, 60, 64);
    let bad = 390;
    let [first, rest] = split_scene(&scene, 20);
    let [second, third] = split_scene(&rest, 20);
    let layers = [&first, &second, &third].map(targets_of);
    let mut segments = scene.segments.clone();
    segments[bad].x0 = f32::NAN;
    let one = targets_of(&scene);
    let mut engine = cpu_engine();
    let want = engine
        .target_first_hits(
            &TargetBatch::over(&segments, &one)
                .with_segment_filters(&scene.segment_filters)
                .skip_invalid(),
        )
        .unwrap();
    let refs = [&layers[0], &layers[1], &layers[2]];
    let batch = LayeredBatch::over(&segments, &refs)
        .with_segment_filters(&scene.segment_filters)
        .skip_invalid();
    let got = engine.layered_first_hits(&batch).unwrap();
    let settled = got[..bad]
        .iter()
        .flatten()
        .filter(|h| {
            h.layer == 0 && matches!(h.hit.contact, TargetContact::Rect(r) if r.start_inside())
        })
        .count();
    assert!(settled > 20, "{settled} bullets settled by the first layer");
    for (i, (want, got)) in want.iter().zip(&got).enumerate() {
        // Named in the first layer and the rest, then the rest in the second and third.
        let want = want.map(|h| match in_two_layers(&layers[0], &h) {
            LayerHit { layer: 0, hit } => LayerHit { layer: 0, hit },
            LayerHit { hit, .. } => {
                let LayerHit { layer, hit } = in_two_layers(&layers[1], &hit);
                LayerHit {
                    layer: layer + 1,
                    hit,
                }
            }
        });
        assert_eq!(want, *got, "segment {i} {:?}", segments[i]);
    }
    let skipped: Vec<usize> = engine
        .last_skipped()
        .segments
        .iter()
        .map(|e| e.index)
        .collect();
    assert_eq!(skipped, [bad]);
    // Every bullet starts inside the first layer's one rect; the second's filters are short.
    let mut everywhere = Targets::new();
    everywhere
        .set_rects(&[Rect::new(-1e4, -1e4, 1e4, 1e4)])
        .unwrap();
    let mut short = targets_of(&second);
    short.set_filters(TargetKind::Circle, Some(&[Filter::ALL]));
    let refs = [&everywhere, &short];
    let batch = LayeredBatch::over(&scene.segments, &refs);
    let error = engine.layered_first_hits(&batch).unwrap_err();
    assert!(matches!(error, Error::FilterLength { .. }), "{error}");
}

#[test]
fn layers_give_the_cpus_results_on_the_gpu() {
    let Some(mut gpu) = gpu_engine(
        "layers_give_the_cpus_results_on_the_gpu",
        GpuLimits::default(),
    ) else {
        return;
    };
    assert_layers_as_one_scene(&mut gpu, &scene(11, 300, 40, 64), 20, "gpu");
    let call = gpu.last_gpu_call().expect("a GPU engine reports its calls");
    assert!(
        call.chunks >= 2 && call.on_host > Duration::ZERO,
        "{call:?}"
    );
    assert_layers_as_one_scene(&mut gpu, &near_ties(9, 200), 100, "gpu, near ties");
}

#[test]
fn mixed_scenes_give_the_cpus_results_on_the_gpu() {
    let Some(mut gpu) = gpu_engine(
        "mixed_scenes_give_the_cpus_results_on_the_gpu",
        GpuLimits::default(),
    ) else {
        return;
    };
    assert_scene(&mut gpu, &scene(11, 300, 40, 64), "gpu");
    // The counts, the last call, reported whole: every kind's GPU call, and the host's merge.
    let call = gpu.last_gpu_call().expect("a GPU engine reports its calls");
    assert!(
        call.chunks >= 4 && call.on_host > Duration::ZERO,
        "{call:?}"
    );
    assert_scene(&mut gpu, &near_ties(9, 200), "gpu, near ties");
}

/// A GPU engine's scene call reports itself whole in `last_gpu_call`: the rects' chunks on the
/// GPU and the host's part (the shapes' first hits and the merge); a scene without rects, no
/// chunk, never the call before it. A CPU engine reports none.
#[test]
fn a_gpu_scenes_report_has_the_rects_chunks_and_the_hosts_part_and_never_the_last_calls() {
    let Some(mut gpu) = gpu_engine("a_gpu_scenes_report", GpuLimits::default()) else {
        return;
    };
    let scene = scene(3, 2000, 60, 64);
    let targets = targets_of(&scene);
    let batch =
        TargetBatch::over(&scene.segments, &targets).with_segment_filters(&scene.segment_filters);
    gpu.target_first_hits(&batch).unwrap();
    let call = gpu.last_gpu_call().expect("a GPU engine reports its calls");
    assert!(
        call.chunks >= 1 && call.on_host > Duration::ZERO,
        "{call:?}"
    );
    let mut circles_only = Targets::new();
    circles_only.set_circles(&scene.circles).unwrap();
    gpu.target_first_hits(&TargetBatch::over(&scene.segments, &circles_only))
        .unwrap();
    let call = gpu.last_gpu_call().expect("a GPU engine reports its calls");
    assert!(
        call.chunks == 0 && call.on_host > Duration::ZERO,
        "{call:?}"
    );
    let mut cpu = cpu_engine();
    cpu.target_first_hits(&batch).unwrap();
    assert_eq!(cpu.last_gpu_call(), None);
}

/// A GPU engine runs the scene's rects on the GPU and its shapes on the host's CPU: when the
/// rects' call times out and falls back to the CPU, the call still says so after the shapes
/// ran, with the CPU's results. Batches double until a call with no time to wait times out.
#[test]
fn a_scene_whose_rects_fall_back_to_the_cpu_says_so_after_its_shapes_ran_on_the_host() {
    let no_wait = WaitLimit {
        base: std::time::Duration::ZERO,
        per_gigapair: std::time::Duration::ZERO,
    };
    let limits = GpuLimits {
        wait: Some(no_wait),
        ..GpuLimits::default()
    };
    let Some(gpu) = gpu_engine("a_scene_whose_rects_fall_back", limits) else {
        return;
    };
    let mut gpu = gpu.with_cpu_fallback(CpuOptions::default()).unwrap();
    for scale in (0..8).map(|k| 1 << k) {
        let (bullets, boxes) = bullet_hell(5, 10_000 * scale, 1000);
        let mut targets = Targets::new();
        targets.set_rects(&boxes[..500]).unwrap();
        let circles: Vec<Circle> = boxes[500..]
            .iter()
            .map(|b| Circle::new(b.min_x, b.min_y, (b.max_x - b.min_x) / 2.0))
            .collect();
        targets.set_circles(&circles).unwrap();
        let batch = TargetBatch::over(&bullets, &targets);
        let want = cpu_engine().target_first_hits(&batch).unwrap();
        let got = gpu
            .target_first_hits(&batch)
            .expect("falls back instead of failing");
        for (i, (want, got)) in want.iter().zip(&got).enumerate() {
            assert_eq!(want, got, "segment {i} {:?}", bullets[i]);
        }
        if let Some(reason) = gpu.last_fallback() {
            assert!(reason.contains("this call ran on the CPU"), "{reason}");
            return;
        }
    }
    panic!("no call with no time to wait timed out, up to 1.28M bullets");
}

/// A segment along y = 0 from x = 0 to 3 enters the rect at x = 1 (t = 1/3) and crosses a
/// wall at x = 1 − 2^-27 (t = 1/3 − 2^-27/3): 5/12 of an ulp apart, the same f32.
fn near_tie() -> (Segment, Rect, Segment) {
    let s = Segment::new(0.0, 0.0, 3.0, 0.0);
    let rect = Rect::new(1.0, -1.0, 2.0, 1.0);
    let wall = Segment::new(1.0, -1.0, 1.0 - 2f32.powi(-24), 7.0);
    (s, rect, wall)
}

#[test]
fn a_wall_entered_under_half_an_ulp_before_a_rect_comes_first_though_both_round_alike() {
    let (s, rect, wall) = near_tie();
    assert_eq!(
        segment_rect(&s, &rect).t_enter,
        segment_segment(&s, &wall).t_enter
    );
    let mut targets = Targets::new();
    targets.set_rects(&[rect]).unwrap();
    targets
        .set_walls(&[Segment::new(5.0, 5.0, 6.0, 6.0), wall])
        .unwrap();
    let first = cpu_engine()
        .target_first_hits(&TargetBatch::over(&[s], &targets))
        .unwrap();
    let first = first[0].expect("a hit");
    assert_eq!(
        (first.kind(), first.target),
        (TargetKind::Wall, 1),
        "{first:?}"
    );
    // Reversed, the segment leaves the rect last and meets the wall first at the other end.
    let back = Segment::new(3.0, 0.0, 0.0, 0.0);
    let first = cpu_engine()
        .target_first_hits(&TargetBatch::over(&[back], &targets))
        .unwrap();
    assert_eq!(first[0].map(|h| h.kind()), Some(TargetKind::Rect));
}

/// Segment `s`'s first hit among `targets`: its kind and index.
fn first_target(engine: &mut Engine, targets: &Targets, s: Segment) -> Option<(TargetKind, u32)> {
    let hit = engine
        .target_first_hits(&TargetBatch::over(&[s], targets))
        .unwrap()[0];
    hit.map(|h| (h.kind(), h.target))
}

#[test]
fn an_exact_tie_goes_to_the_lower_kind_then_the_lower_index() {
    // From (0, 0): in a rect, a circle, a polygon, on a wall, all at t = 0.
    let s = Segment::new(0.0, 0.0, 4.0, 0.0);
    let mut targets = Targets::new();
    targets
        .set_walls(&[Segment::new(0.0, -1.0, 0.0, 1.0)])
        .unwrap();
    targets
        .set_circles(&[Circle::new(9.0, 9.0, 1.0), Circle::new(0.0, 0.0, 1.0)])
        .unwrap();
    targets.set_polygons(
        Polygons::from_rings(&[vec![[-1.0, -1.0], [1.0, -1.0], [0.0, 1.0]]]).unwrap(),
    );
    let mut engine = cpu_engine();
    let first = |engine: &mut Engine, targets: &Targets| first_target(engine, targets, s);
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Circle, 1)));
    targets
        .set_rects(&[
            Rect::new(5.0, 5.0, 6.0, 6.0),
            Rect::new(-1.0, -1.0, 1.0, 1.0),
        ])
        .unwrap();
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Rect, 1)));
    // At t = 1/4, x = 1: a rect's side, a circle's tangent point and two walls, exactly.
    let mut targets = Targets::new();
    targets.set_circles(&[Circle::new(1.0, 1.0, 1.0)]).unwrap();
    targets
        .set_walls(&[
            Segment::new(1.0, 1.0, 1.0, -1.0),
            Segment::new(1.0, -2.0, 1.0, 2.0),
        ])
        .unwrap();
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Circle, 0)));
    targets.set_circles(&[]).unwrap();
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Wall, 0)));
    targets
        .set_rects(&[Rect::new(1.0, -1.0, 2.0, 1.0)])
        .unwrap();
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Rect, 0)));
}

/// Through the grid, a bullet that starts inside a shape is answered from its start's cell.
/// This one also starts on the rim of a lower circle (and on the edge of a lower polygon):
/// the closed shape holds the start, its entry is exactly 0 too, and the lower shape comes
/// first, though the start is not strictly inside it.
#[test]
fn a_bullet_starting_on_a_lower_shapes_boundary_and_inside_a_higher_one_hits_the_lower() {
    // Through the lower shape and out.
    let s = Segment::new(1.0, 0.0, -3.0, 0.0);
    let mut engine = cpu_engine();
    engine.set_broad_phase(BroadPhase::On);
    let mut targets = Targets::new();
    let inside = Circle::new(1.0, 0.0, 0.5);
    targets
        .set_circles(&[Circle::new(0.0, 0.0, 1.0), inside])
        .unwrap();
    assert_eq!(
        first_target(&mut engine, &targets, s),
        Some((TargetKind::Circle, 0))
    );
    // Strictly inside both: the lower again, and the higher where the lower is not tested.
    let inner = Segment::new(0.75, 0.0, -3.0, 0.0);
    assert_eq!(
        first_target(&mut engine, &targets, inner),
        Some((TargetKind::Circle, 0))
    );
    targets.set_filters(TargetKind::Circle, Some(&[Filter::NONE, Filter::ALL]));
    assert_eq!(
        first_target(&mut engine, &targets, inner),
        Some((TargetKind::Circle, 1))
    );
    // Polygons: the start on the lower triangle's edge x = 1, inside the higher square.
    let mut targets = Targets::new();
    let rings = [
        vec![[1.0, -1.0], [1.0, 1.0], [-1.0, 0.0]],
        vec![[0.5, -0.5], [1.5, -0.5], [1.5, 0.5], [0.5, 0.5]],
    ];
    targets.set_polygons(Polygons::from_rings(&rings).unwrap());
    assert_eq!(
        first_target(&mut engine, &targets, s),
        Some((TargetKind::Polygon, 0))
    );
}

/// An engine keeps each kind's first hits between frames, and a kind's query leaves a bullet
/// that an earlier kind settles (an exact start inside) as it was: the merge must never read
/// that stale answer. Here it names wall 40 of an earlier frame, which no longer exists.
#[test]
fn a_bullet_settled_by_a_circle_is_not_merged_with_its_wall_hit_of_an_earlier_frame() {
    let s = Segment::new(0.0, 0.0, 4.0, 0.0);
    let mut engine = cpu_engine();
    let mut targets = Targets::new();
    let far = Circle::new(50.0, 50.0, 1.0);
    // Frame 1: it starts on wall 40 (t = 0, not inside), and hits no circle.
    let mut walls = vec![Segment::new(90.0, 90.0, 91.0, 91.0); 50];
    walls[40] = Segment::new(0.0, -1.0, 0.0, 1.0);
    targets.set_walls(&walls).unwrap();
    targets.set_circles(&[far]).unwrap();
    let first = |engine: &mut Engine, targets: &Targets| first_target(engine, targets, s);
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Wall, 40)));
    // Frame 2: it starts inside circle 1, and one wall is left, far away.
    targets
        .set_circles(&[far, Circle::new(0.0, 0.0, 1.0)])
        .unwrap();
    targets.set_walls(&walls[..1]).unwrap();
    assert_eq!(first(&mut engine, &targets), Some((TargetKind::Circle, 1)));
}

#[test]
fn teams_filter_every_kind() {
    let s = Segment::new(0.0, 0.0, 10.0, 0.0);
    let mut targets = Targets::new();
    targets
        .set_rects(&[Rect::new(1.0, -1.0, 2.0, 1.0)])
        .unwrap();
    targets.set_circles(&[Circle::new(4.0, 0.0, 1.0)]).unwrap();
    targets
        .set_walls(&[Segment::new(6.0, -1.0, 6.0, 1.0)])
        .unwrap();
    targets
        .set_polygons(Polygons::from_rings(&[vec![[8.0, -1.0], [9.0, -1.0], [8.0, 1.0]]]).unwrap());
    let (ours, theirs) = (Filter::new(1, 2), Filter::new(2, 1));
    let mut engine = cpu_engine();
    let mut order = Vec::new();
    let (segments, theirs, ours) = ([s], [theirs], [ours]);
    let first = |engine: &mut Engine, targets: &Targets, team: &[Filter]| {
        let batch = TargetBatch::over(&segments, targets).with_segment_filters(team);
        let first = engine.target_first_hits(&batch).unwrap()[0];
        let hits = engine.target_hits(&batch).unwrap().len();
        let counts = engine.target_counts(&batch).unwrap().per_segment[0] as usize;
        assert_eq!(hits, counts);
        (first.map(|h| h.kind()), hits)
    };
    // Our bullets pass through our own targets, kind by kind; theirs hit them all.
    for kind in TargetKind::ALL {
        let (kind_first, hits) = first(&mut engine, &targets, &ours);
        order.push(kind_first.expect("a hit"));
        assert_eq!(hits, 4 - kind as usize);
        targets.set_filters(kind, Some(&ours));
        assert_eq!(
            first(&mut engine, &targets, &theirs),
            (Some(TargetKind::Rect), 4)
        );
    }
    assert_eq!(first(&mut engine, &targets, &ours), (None, 0));
    assert_eq!(order, TargetKind::ALL);
}

#[test]
fn a_frame_with_bad_bullets_and_targets_answers_every_valid_pair_and_lists_the_bad_ones() {
    let scene = scene(5, 300, 40, 64);
    let (mut segments, mut rects, mut circles, mut walls) = (
        scene.segments.clone(),
        scene.rects.clone(),
        scene.circles.clone(),
        scene.walls.clone(),
    );
    // Through where the skipped targets' stand-ins lie: the first valid circle's center (1),
    // the first valid wall's start (0), the first valid rect's corner (0).
    let through = |x: f32, y: f32| Segment::new(x - 1.0, y - 1.0, x + 1.0, y + 1.0);
    segments[10] = through(circles[1].cx, circles[1].cy);
    segments[11] = through(walls[0].x0, walls[0].y0);
    segments[12] = through(rects[0].min_x, rects[0].min_y);
    let good = segments.clone();
    segments[3].x1 = f32::NAN;
    segments[200].y0 = f32::INFINITY;
    rects[7].min_x = f32::NAN;
    circles[0].r = -1.0;
    circles[39].cx = 1e19;
    walls[12].y1 = f32::NEG_INFINITY;
    let mut targets = Targets::new().skipping_invalid();
    targets.set_rects(&rects).unwrap();
    targets.set_circles(&circles).unwrap();
    targets.set_walls(&walls).unwrap();
    targets.set_polygons(Polygons::from_polygons(&scene.rings).unwrap());
    let skipped = |kind| {
        targets
            .skipped(kind)
            .iter()
            .map(|e| e.index)
            .collect::<Vec<_>>()
    };
    assert_eq!(skipped(TargetKind::Rect), [7]);
    assert_eq!(skipped(TargetKind::Circle), [0, 39]);
    assert_eq!(skipped(TargetKind::Wall), [12]);
    let mut engine = cpu_engine();
    let first = engine
        .target_first_hits(&TargetBatch::over(&segments, &targets).skip_invalid())
        .unwrap();
    let bad: Vec<usize> = engine
        .last_skipped()
        .segments
        .iter()
        .map(|e| e.index)
        .collect();
    assert_eq!(bad, [3, 200]);
    // The same frame without the bad elements: each bad target made a point far away.
    let far = 1e6;
    rects[7] = Rect::new(far, far, far, far);
    circles[0] = Circle::new(far, far, 0.0);
    circles[39] = circles[0];
    walls[12] = Segment::new(far, far, far, far);
    let mut clean = Targets::new();
    clean.set_rects(&rects).unwrap();
    clean.set_circles(&circles).unwrap();
    clean.set_walls(&walls).unwrap();
    clean.set_polygons(Polygons::from_polygons(&scene.rings).unwrap());
    let expected = engine
        .target_first_hits(&TargetBatch::over(&good, &clean))
        .unwrap();
    for (i, (want, got)) in expected.iter().zip(&first).enumerate() {
        let want = if bad.contains(&i) { None } else { *want };
        assert_eq!(&want, got, "segment {i}");
    }
    assert!(first.iter().filter(|f| f.is_some()).count() > 100);
    let hits = engine
        .target_hits(&TargetBatch::over(&segments, &targets).skip_invalid())
        .unwrap();
    let mut expected = engine
        .target_hits(&TargetBatch::over(&good, &clean))
        .unwrap();
    expected.retain(|h| !bad.contains(&(h.segment as usize)));
    for (k, (want, got)) in expected.iter().zip(&hits).enumerate() {
        assert_eq!(want, got, "hit {k}");
    }
    assert_eq!(expected.len(), hits.len());
}

/// One loop for a game on either backend: the scene's first hits through a `FrameLoop`, with a
/// bad bullet, are the CPU engine's, as one scene or as two layers, and the write's skipped
/// list is the write's own.
#[test]
fn a_frame_loop_answers_the_scene_on_either_backend() {
    let scene = scene(8, 300, 40, 64);
    let targets = targets_of(&scene);
    let mut segments = scene.segments.clone();
    segments[9].y1 = f32::NAN;
    let batch = TargetBatch::over(&segments, &targets).skip_invalid();
    let expected = cpu_engine().target_first_hits(&batch).unwrap();
    let layers = split_scene(&scene, 25).map(|l| targets_of(&l));
    let layer_refs = [&layers[0], &layers[1]];
    let layered = LayeredBatch::over(&segments, &layer_refs).skip_invalid();
    let in_layers = |hit: &Option<TargetHit>| hit.map(|h| in_two_layers(&layers[0], &h));
    assert!(expected.iter().flatten().count() > 50);
    let gpu = gpu_engine(
        "a_frame_loop_answers_the_scene_on_either_backend",
        GpuLimits::default(),
    );
    for engine in [Some(cpu_engine()), gpu].into_iter().flatten() {
        let on = engine.chosen().to_string();
        let capacity = FrameCapacity::new(segments.len(), scene.rects.len());
        let mut frames = FrameLoop::new(engine, capacity).unwrap();
        let (bullets, boxes) = (&scene.segments[..5], &scene.rects[..3]);
        let mut bad = bullets.to_vec();
        bad[1].x0 = f32::INFINITY;
        frames
            .write(&Batch::new(&bad, boxes).skip_invalid())
            .unwrap();
        let mut out = vec![None; segments.len()];
        for _ in 0..2 {
            frames.target_first_hits_into(&batch, &mut out).unwrap();
            for (i, (want, got)) in expected.iter().zip(&out).enumerate() {
                assert_eq!(want, got, "{on}: segment {i}");
            }
        }
        let skipped =
            |s: &rectcast::Skipped| s.segments.iter().map(|e| e.index).collect::<Vec<_>>();
        assert_eq!(skipped(frames.last_target_skipped()), [9], "{on}");
        assert_eq!(skipped(frames.last_skipped()), [1], "{on}");
        let mut layered_out = vec![None; segments.len()];
        // A query that skips nothing, so that the layers' list is their own.
        let clean = TargetBatch::over(&scene.segments, &targets);
        frames.target_first_hits_into(&clean, &mut out).unwrap();
        assert_eq!(skipped(frames.last_target_skipped()), [0; 0], "{on}");
        frames
            .layered_first_hits_into(&layered, &mut layered_out)
            .unwrap();
        for (i, (want, got)) in expected.iter().zip(&layered_out).enumerate() {
            assert_eq!(in_layers(want), *got, "{on}, layers: segment {i}");
        }
        assert_eq!(skipped(frames.last_target_skipped()), [9], "{on}");
        assert_eq!(skipped(frames.last_skipped()), [1], "{on}");
    }
}

/// Over 2^16 segments the shapes' hits are listed a part at a time: the segments across the
/// first part's end get what they get in a call of their own.
#[test]
fn a_batch_larger_than_one_part_answers_each_segment_as_alone() {
    let scene = scene(4, 70_000, 30, 64);
    let targets = targets_of(&scene);
    let mut engine = cpu_engine();
    let all =
        TargetBatch::over(&scene.segments, &targets).with_segment_filters(&scene.segment_filters);
    let first = engine.target_first_hits(&all).unwrap();
    let counts = engine.target_counts(&all).unwrap();
    let from = 60_000;
    let part = TargetBatch::over(&scene.segments[from..], &targets)
        .with_segment_filters(&scene.segment_filters[from..]);
    let part_first = engine.target_first_hits(&part).unwrap();
    let part_counts = engine.target_counts(&part).unwrap();
    let mut hits = 0;
    for (j, want) in part_first.iter().enumerate() {
        let want = want.map(|h| TargetHit {
            segment: h.segment + from as u32,
            ..h
        });
        assert_eq!(first[from + j], want, "segment {}", from + j);
        hits += want.is_some() as usize;
    }
    assert!(hits > 1000, "{hits}");
    assert_eq!(counts.per_segment[from..], part_counts.per_segment[..]);
}

#[test]
fn a_cancelled_engine_answers_cancelled_even_with_nothing_to_query() {
    let scene = scene(2, 50, 10, 64);
    let mut engine = cpu_engine();
    let cancel = rectcast::Cancel::new();
    engine.set_cancel(Some(cancel.clone()));
    cancel.cancel();
    for targets in [Targets::new(), targets_of(&scene)] {
        let batch = TargetBatch::over(&scene.segments, &targets);
        assert!(matches!(
            engine.target_first_hits(&batch),
            Err(Error::Cancelled)
        ));
        assert!(matches!(engine.target_hits(&batch), Err(Error::Cancelled)));
        assert!(matches!(
            engine.target_counts(&batch),
            Err(Error::Cancelled)
        ));
    }
    cancel.reset();
    let targets = targets_of(&scene);
    assert!(
        engine
            .target_first_hits(&TargetBatch::over(&scene.segments, &targets))
            .is_ok()
    );
}

#[test]
fn bad_calls_are_errors_before_any_work() {
    let scene = scene(3, 10, 4, 64);
    let mut targets = targets_of(&scene);
    let mut engine = cpu_engine();
    let batch = TargetBatch::over(&scene.segments, &targets);
    let mut out = vec![None; 9];
    assert!(matches!(
        engine.target_first_hits_into(&batch, &mut out),
        Err(Error::OutputLength {
            expected: 10,
            got: 9
        })
    ));
    let mut segments = scene.segments.clone();
    segments[4].y0 = f32::NAN;
    match engine.target_hits(&TargetBatch::over(&segments, &targets)) {
        Err(Error::Input(e)) => {
            assert_eq!((e.array, e.index, e.field), (InputArray::Segments, 4, "y0"))
        }
        other => panic!("{other:?}"),
    }
    targets.set_filters(TargetKind::Circle, Some(&[Filter::ALL; 3]));
    let batch = TargetBatch::over(&scene.segments, &targets);
    match engine.target_counts(&batch) {
        Err(e @ Error::FilterLength { .. }) => {
            assert_eq!(e.to_string(), "3 circle filters for 4 circles")
        }
        other => panic!("{other:?}"),
    }
    let bad = Circle::new(0.0, 0.0, -2.0);
    match targets.set_circles(&[Circle::new(0.0, 0.0, 1.0), bad]) {
        Err(Error::Input(e)) => assert_eq!((e.array, e.index), (InputArray::Circles, 1)),
        other => panic!("{other:?}"),
    }
}
