//! The queries over shapes (hits, first hits, counts; docs/semantics.md, "Queries over
//! shapes") against the dense pairs they reduce, element by element, on the CPU and the GPU,
//! for walls and circles.
//!
//! scripts/test.sh: native only (the reductions order t by their bits, which no arithmetic
//! changes; each kind's pairs, first hits, hits and counts are tested under the emulated
//! arithmetics in its own file).

mod common;

use rectcast::scene::SplitMix64;
use rectcast::{Circle, Engine, SceneShape, Segment, Shape, ShapeContact, ShapeHit};

fn circles(seed: u64, n: usize) -> Vec<Circle> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            // On a grid now and then, so that several circles give one segment the same t.
            if rng.below(3) == 0 {
                let k = rng.below(5) as f32 * 100.0;
                Circle::new(k, k, 50.0)
            } else {
                Circle::new(
                    rng.range(0.0, 1000.0),
                    rng.range(0.0, 1000.0),
                    rng.range(0.0, 60.0),
                )
            }
        })
        .collect()
}

#[track_caller]
fn assert_same<T: PartialEq + std::fmt::Debug>(what: &str, want: &[T], got: &[T]) {
    if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
        panic!(
            "{what}: first difference at {i}: want {:?}, got {:?} ({} vs {} entries)",
            want.get(i),
            got.get(i),
            want.len(),
            got.len()
        );
    }
}

fn check<S: SceneShape>(engine: &mut Engine, what: &str, segments: &[Segment], shapes: &[S]) {
    let pairs = engine.shape_pairs(segments, shapes).expect("pairs");
    // The reductions of the dense pairs, the way the contract states them.
    let hits = common::hits_of_pairs(&pairs, shapes.len());
    let (mut per_segment, mut per_shape) = (vec![0u32; segments.len()], vec![0u64; shapes.len()]);
    for hit in &hits {
        per_segment[hit.segment as usize] += 1;
        per_shape[hit.shape as usize] += 1;
    }
    assert!(hits.len() > 50, "{what}: {} hits", hits.len());
    assert_same(
        what,
        &hits,
        &engine.shape_hits(segments, shapes).expect("hits"),
    );
    common::assert_first_hits_of_pairs(
        what,
        &pairs,
        shapes.len(),
        &engine.shape_first_hits(segments, shapes).expect("first"),
        |s, k| format!("segment {s} {:?}, shape {k}", segments[s]),
    );
    let counts = engine.shape_counts(segments, shapes).expect("counts");
    assert_same(what, &per_segment, &counts.per_segment);
    assert_same(what, &per_shape, &counts.per_target);
}

#[test]
fn hits_first_hits_and_counts_reduce_the_pairs_on_the_cpu() {
    let mut engine = common::cpu_engine();
    let (segments, _) = rectcast::scene::random_batch(41, 300, 1, 1000.0);
    let (walls, _) = rectcast::scene::random_batch(42, 90, 1, 1000.0);
    check(&mut engine, "walls", &segments, &walls);
    check(&mut engine, "circles", &segments, &circles(43, 120));
}

#[test]
fn hits_first_hits_and_counts_reduce_the_pairs_on_the_gpu() {
    let Some(mut gpu) = common::gpu_engine("shape_queries", rectcast::GpuLimits::default()) else {
        return;
    };
    let (segments, _) = rectcast::scene::random_batch(44, 80, 1, 1000.0);
    let (walls, _) = rectcast::scene::random_batch(45, 40, 1, 1000.0);
    check(&mut gpu, "walls on the gpu", &segments, &walls);
    let disks = circles(46, 40);
    check(&mut gpu, "circles on the gpu", &segments, &disks);
    // And the GPU's first hits are the CPU's.
    let want = common::cpu_engine()
        .shape_first_hits(&segments, &disks)
        .expect("cpu");
    assert_same(
        "gpu vs cpu",
        &want,
        &gpu.shape_first_hits(&segments, &disks).expect("gpu"),
    );
}

/// A game asks for first hits: its first frame compiles the shape's kernels for them and not
/// the counts entry point (on lavapipe about 5 s of a circle's 17), which compiles on the
/// first count and once per device.
#[test]
fn a_shapes_first_hits_and_hits_compile_no_counts_kernel_until_a_count_is_asked() {
    let Some(probe) = common::gpu_engine("lazy_counts", rectcast::GpuLimits::default()) else {
        return;
    };
    // A context of its own on the same device, so that no other test's kernels count.
    let opened = probe.gpu_context().expect("on the gpu");
    let context = rectcast::GpuContext::from_device(
        opened.device().clone(),
        opened.queue().clone(),
        opened.adapter_info().clone(),
    )
    .expect("the device meets the limits")
    .with_emulation(opened.emulation());
    let engine =
        || Engine::gpu(context.clone(), rectcast::GpuLimits::default()).expect("an engine");
    let (segments, _) = rectcast::scene::random_batch(47, 80, 1, 1000.0);
    let disks = circles(48, 40);
    let mut cpu = common::cpu_engine();
    let mut gpu = engine();
    let before = context.kernel_compilations();
    let first = gpu.shape_first_hits(&segments, &disks).expect("first hits");
    assert_same(
        "first hits",
        &cpu.shape_first_hits(&segments, &disks).unwrap(),
        &first,
    );
    let hits = gpu.shape_hits(&segments, &disks).expect("hits");
    assert_same("hits", &cpu.shape_hits(&segments, &disks).unwrap(), &hits);
    let for_queries = context.kernel_compilations();
    assert_eq!(
        for_queries,
        before + 1,
        "first hits and hits compile one kernel set"
    );
    let want = cpu.shape_counts(&segments, &disks).unwrap();
    for (engine, what) in [
        (&mut gpu, "the first count"),
        (&mut engine(), "another engine's"),
    ] {
        let counts = engine.shape_counts(&segments, &disks).expect("counts");
        assert_same(what, &want.per_segment, &counts.per_segment);
        assert_same(what, &want.per_target, &counts.per_target);
        assert_eq!(
            context.kernel_compilations(),
            for_queries + 1,
            "{what}: the counts kernel compiles once per device"
        );
    }
}

#[test]
fn over_many_tiles_the_shape_queries_keep_the_ring_full_and_account_their_host_time() {
    // Over tiny limits, each query runs over dozens of tiles. The dense pairs and counts keep
    // the ring full before the first read-back; the hits read one piece at a time (a tile's
    // count, then its hits alone, which a later tile would overwrite). First hits run on the
    // host.
    let Some(mut gpu) = common::gpu_engine("shape_ring", common::tiny_limits()) else {
        return;
    };
    let (segments, _) = rectcast::scene::random_batch(47, 60, 1, 1000.0);
    let disks = circles(48, 90);
    check(&mut gpu, "circles over tiny limits", &segments, &disks);
    let full = rectcast::gpu::CHUNKS_IN_FLIGHT;
    let mut calls = Vec::new();
    gpu.shape_pairs(&segments, &disks).expect("pairs");
    calls.push(("pairs", gpu.last_gpu_call().expect("a GPU call"), full));
    gpu.shape_counts(&segments, &disks).expect("counts");
    calls.push(("counts", gpu.last_gpu_call().expect("a GPU call"), full));
    gpu.shape_hits(&segments, &disks).expect("hits");
    calls.push(("hits", gpu.last_gpu_call().expect("a GPU call"), 1));
    for (what, call, before_first_read) in calls {
        assert!(call.chunks >= 10, "{what}: {call:?}");
        assert_eq!(
            call.submitted_before_first_read, before_first_read,
            "{what}: {call:?}"
        );
        assert!(
            call.bytes_read > 0 && !call.submitting.is_zero() && !call.merging.is_zero(),
            "{what}: {call:?}"
        );
    }
}

#[test]
fn a_tie_goes_to_the_lowest_shape_and_a_point_inside_comes_first() {
    let mut engine = common::cpu_engine();
    let segment = [Segment::new(0.0, 0.0, 10.0, 0.0)];
    // Shapes 1 and 2 are entered at the same t = 0.4, shape 0 later; shape 3 never.
    let disks = [
        Circle::new(8.0, 0.0, 1.0),
        Circle::new(5.0, 0.0, 1.0),
        Circle::new(5.0, 0.0, 1.0),
        Circle::new(5.0, 5.0, 1.0),
    ];
    let first = engine.shape_first_hits(&segment, &disks).expect("first")[0].expect("a hit");
    assert_eq!((first.shape, first.contact.t_enter), (1, 0.4));
    let counts = engine.shape_counts(&segment, &disks).expect("counts");
    assert_eq!(
        (counts.per_segment, counts.per_target),
        (vec![3], vec![1, 1, 1, 0])
    );
    // A wall through the start: t = 0, before every circle.
    let walls = [
        Segment::new(5.0, -1.0, 5.0, 1.0),
        Segment::new(0.0, -1.0, 0.0, 1.0),
    ];
    let first = engine.shape_first_hits(&segment, &walls).expect("first")[0].expect("a hit");
    assert_eq!((first.shape, first.contact.t_enter), (1, 0.0));
    // Nothing hit: None; no shapes: None for every segment.
    assert_eq!(
        engine
            .shape_first_hits(&segment, &disks[3..])
            .expect("none"),
        [None]
    );
    assert_eq!(
        engine
            .shape_first_hits::<Circle>(&segment, &[])
            .expect("empty"),
        [None]
    );
    // A bad shape is named before any work.
    let e = engine
        .shape_hits(&segment, &[Circle::new(0.0, 0.0, -1.0)])
        .unwrap_err();
    assert_eq!(e.to_string(), "circle 0: r is -1, below 0");
}

#[test]
fn on_a_gpu_engine_an_exact_tie_goes_to_the_lowest_shape_across_invocations_and_tiles() {
    // 600 circles off the segments' lines but for three equal ones entered first (shapes 2,
    // 65 and 300) and one entered later (shape 1): an exact tie. A GPU engine answers first
    // hits on its host, in the scene's order, and hits on the GPU, which takes a query's shapes
    // 64 at a time per workgroup, and over tiny limits puts shape 300 in another tile.
    let segments: Vec<Segment> = (0..5)
        .map(|k| Segment::new(0.0, k as f32, 10.0, k as f32))
        .collect();
    let mut disks: Vec<Circle> = (0..600)
        .map(|k| Circle::new(k as f32, 100.0, 1.0))
        .collect();
    for k in [2, 65, 300] {
        disks[k] = Circle::new(5.0, 2.0, 3.0);
    }
    disks[1] = Circle::new(8.0, 2.0, 3.0);
    let want = common::cpu_engine()
        .shape_first_hits(&segments, &disks)
        .expect("cpu");
    assert_eq!(want[2].expect("a hit").shape, 2);
    assert_eq!(want[2].expect("a hit").contact.t_enter, 0.2);
    for (limits, what) in [
        (rectcast::GpuLimits::default(), "default limits"),
        (common::tiny_limits(), "tiny limits"),
    ] {
        let Some(mut gpu) = common::gpu_engine("gpu_ties", limits) else {
            return;
        };
        assert_same(
            what,
            &want,
            &gpu.shape_first_hits(&segments, &disks).expect("gpu"),
        );
        let hits = gpu.shape_hits(&segments, &disks).expect("gpu hits");
        assert_same(
            what,
            &common::cpu_engine()
                .shape_hits(&segments, &disks)
                .expect("cpu"),
            &hits,
        );
    }
}

/// Walls, circles and polygons around the clustered scene's rects: most segments far from most
/// shapes, many near a few.
fn clustered_shapes(seed: u64) -> (Vec<Segment>, Vec<Segment>, Vec<Circle>, rectcast::Polygons) {
    let (segments, rects) = rectcast::scene::clustered(seed, 3000, 1500);
    let (walls, disks, polygons) = shapes_in(&rects);
    (segments, walls, disks, polygons)
}

/// In each rect: its diagonal, its inscribed circle, and a triangle or a concave quadrilateral
/// sharing corners with it (rects with no area make no polygon).
fn shapes_in(rects: &[rectcast::Rect]) -> (Vec<Segment>, Vec<Circle>, rectcast::Polygons) {
    let walls = rects
        .iter()
        .map(|r| Segment::new(r.min_x, r.min_y, r.max_x, r.max_y))
        .collect();
    let disks = rects
        .iter()
        .map(|r| {
            let (w, h) = (r.max_x - r.min_x, r.max_y - r.min_y);
            Circle::new(r.min_x + w / 2.0, r.min_y + h / 2.0, w.min(h) / 2.0)
        })
        .collect();
    // A triangle and a concave quadrilateral in each rect, sharing corners with it.
    let rings: Vec<Vec<[f32; 2]>> = rects
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mid = (
                r.min_x + (r.max_x - r.min_x) / 2.0,
                r.min_y + (r.max_y - r.min_y) / 4.0,
            );
            if i % 2 == 0 {
                vec![[r.min_x, r.min_y], [r.max_x, r.min_y], [r.min_x, r.max_y]]
            } else {
                vec![
                    [r.min_x, r.min_y],
                    [mid.0, mid.1],
                    [r.max_x, r.min_y],
                    [mid.0, r.max_y],
                ]
            }
        })
        .filter(|ring| rectcast::Polygons::from_rings([ring]).is_ok())
        .collect();
    let polygons = rectcast::Polygons::from_rings(&rings).expect("valid rings");
    (walls, disks, polygons)
}

/// Hits, first hits and counts with the broad phase on against the same queries with it off,
/// element by element.
fn same_with_and_without_the_grid<C: ShapeContact>(
    what: &str,
    mut query: impl FnMut(&mut Engine) -> (Vec<ShapeHit<C>>, Vec<Option<ShapeHit<C>>>, rectcast::Counts),
) {
    let mut off = common::cpu_engine();
    off.set_broad_phase(rectcast::BroadPhase::Off);
    let mut on = common::cpu_engine();
    on.set_broad_phase(rectcast::BroadPhase::On);
    let (hits, first, counts) = query(&mut off);
    assert!(!off.used_broad_phase());
    assert!(hits.len() > 200, "{what}: {} hits", hits.len());
    let (grid_hits, grid_first, grid_counts) = query(&mut on);
    assert!(on.used_broad_phase(), "{what}: the grid was not used");
    assert_same(&format!("{what} hits"), &hits, &grid_hits);
    assert_same(&format!("{what} first hits"), &first, &grid_first);
    assert_same(
        &format!("{what} counts"),
        &counts.per_segment,
        &grid_counts.per_segment,
    );
    assert_same(
        &format!("{what} counts"),
        &counts.per_target,
        &grid_counts.per_target,
    );
}

/// [`same_with_and_without_the_grid`] for walls, circles and polygons over `segments`.
fn every_shape_with_and_without_the_grid(
    scene: &str,
    segments: &[Segment],
    walls: &[Segment],
    disks: &[Circle],
    polygons: &rectcast::Polygons,
) {
    same_with_and_without_the_grid(&format!("walls{scene}"), |e| {
        (
            e.shape_hits(segments, walls).unwrap(),
            e.shape_first_hits(segments, walls).unwrap(),
            e.shape_counts(segments, walls).unwrap(),
        )
    });
    same_with_and_without_the_grid(&format!("circles{scene}"), |e| {
        (
            e.shape_hits(segments, disks).unwrap(),
            e.shape_first_hits(segments, disks).unwrap(),
            e.shape_counts(segments, disks).unwrap(),
        )
    });
    same_with_and_without_the_grid(&format!("polygons{scene}"), |e| {
        (
            e.polygon_hits(segments, polygons).unwrap(),
            e.polygon_first_hits(segments, polygons).unwrap(),
            e.polygon_counts(segments, polygons).unwrap(),
        )
    });
}

#[test]
fn the_broad_phase_over_shapes_finds_what_the_brute_force_finds() {
    let (segments, walls, disks, polygons) = clustered_shapes(47);
    every_shape_with_and_without_the_grid("", &segments, &walls, &disks, &polygons);
    // Long segments across many shapes: the first-hit walk stops at row boundaries.
    let (long, _) = rectcast::scene::random_batch(48, 2500, 1, 1000.0);
    let far_disks = rectcast::scene::random_circles(49, 1500, 1000.0, (5.0, 40.0));
    same_with_and_without_the_grid("circles, long segments", |e| {
        (
            e.shape_hits(&long, &far_disks).unwrap(),
            e.shape_first_hits(&long, &far_disks).unwrap(),
            e.shape_counts(&long, &far_disks).unwrap(),
        )
    });
    let far_polygons = rectcast::scene::random_polygons(50, 1200, 1000.0, (5.0, 30.0), (3, 9));
    same_with_and_without_the_grid("polygons, long segments", |e| {
        (
            e.polygon_hits(&long, &far_polygons).unwrap(),
            e.polygon_first_hits(&long, &far_polygons).unwrap(),
            e.polygon_counts(&long, &far_polygons).unwrap(),
        )
    });
    // And the brute force is the dense pairs reduced.
    let mut engine = common::cpu_engine();
    engine.set_broad_phase(rectcast::BroadPhase::On);
    check(&mut engine, "circles, grid", &segments[..400], &disks);
    check(
        &mut engine,
        "circles, long segments, grid",
        &long[..600],
        &far_disks,
    );
    assert!(engine.used_broad_phase());
    engine.set_broad_phase(rectcast::BroadPhase::Off);
    check(
        &mut engine,
        "circles, long segments, box cull",
        &long[..600],
        &far_disks,
    );
    assert!(!engine.used_broad_phase());
}

#[test]
fn bullets_starting_inside_many_shapes_get_the_brute_forces_first_hits_from_the_grid() {
    // Hitboxes about 25 deep over the field: nearly every bullet starts inside many shapes, so
    // the first hit is at t = 0, and the walk skips every entry above the best one so far.
    let (segments, rects) = rectcast::scene::bullet_hell(51, 3000, 20_000);
    let (walls, disks, polygons) = shapes_in(&rects);
    let mut engine = common::cpu_engine();
    let first = engine.shape_first_hits(&segments, &disks).unwrap();
    let at_start = first
        .iter()
        .filter(|h| h.is_some_and(|h| h.contact.t_enter == 0.0))
        .count();
    assert!(
        at_start > 2500,
        "{at_start} of 3000 bullets start in a circle"
    );
    every_shape_with_and_without_the_grid(", bullet hell", &segments, &walls, &disks, &polygons);
    // And both are the dense pairs reduced, in any order the candidates come: over enough
    // bullets (1,024 or more) against enough shapes (8,192 or more) that first hits take the
    // bullets in a spatial order, and the box cull goes down two tree levels to the blocks.
    for broad_phase in [rectcast::BroadPhase::On, rectcast::BroadPhase::Off] {
        engine.set_broad_phase(broad_phase);
        check(
            &mut engine,
            "circles, bullet hell",
            &segments[..1100],
            &disks,
        );
        check(&mut engine, "walls, bullet hell", &segments[..1100], &walls);
    }
}

#[test]
fn a_wall_through_the_start_comes_before_a_lower_wall_met_at_a_t_that_rounds_to_zero() {
    // Everything at 2^-99, where one ulp is 2^-122. The bullet starts at x = 2^-99, a column
    // boundary of the grid, and flies left 2^62: wall 0 stands one ulp to its left, in the
    // column before, and the bullet meets it at t = 2^-123 / 2^62, which rounds to 0.0. Walls
    // 1 to 20 pass through the start: t = 0 exactly. Equal rounded t, but exactly wall 0 is
    // met later: the lowest wall through the start comes first, whatever cell lists wall 0.
    let unit = 2f32.powi(-99);
    let start = Segment::new(unit, 0.5 * unit, -2f32.powi(62), 0.5 * unit);
    let mut walls = vec![Segment::new(unit.next_down(), 0.0, unit.next_down(), unit)];
    walls.extend((1..=20).map(|k| Segment::new(unit, 0.0, unit, unit * (0.5 + k as f32 / 40.0))));
    // Far walls that make the grid 4 columns wide (their mean width sets the cells), with
    // the rows above the bullet's.
    walls.extend((0..300).map(|k| {
        let y = unit * (2.0 + k as f32 / 300.0);
        let x = if k % 2 == 0 { 0.0 } else { 0.7 * unit };
        Segment::new(x, y, x + 1.3 * unit, y)
    }));
    let boxes: Vec<rectcast::Rect> = walls.iter().map(Shape::bounds).collect();
    let mut grid = rectcast::cpu::grid::Grid::default();
    grid.build(&boxes);
    assert!(
        grid.xs.bounds.contains(&unit),
        "x = 2^-99 is no column boundary: {:?}",
        grid.xs.bounds
    );
    let rounds_to_0 = rectcast::segment_segment(&start, &walls[0]);
    assert!(
        rounds_to_0.hit() && rounds_to_0.t_enter == 0.0,
        "{rounds_to_0:?}"
    );
    for broad_phase in [rectcast::BroadPhase::On, rectcast::BroadPhase::Off] {
        let mut engine = common::cpu_engine();
        engine.set_broad_phase(broad_phase);
        let first = engine.shape_first_hits(&[start], &walls).unwrap();
        assert_eq!(
            first[0].map(|h| h.shape),
            Some(1),
            "{broad_phase:?}: {:?}",
            first[0]
        );
        assert_eq!(
            engine.used_broad_phase(),
            broad_phase == rectcast::BroadPhase::On
        );
    }
}

#[test]
fn bullets_passing_a_hair_from_grid_corners_get_the_brute_forces_first_hits() {
    // Where a segment crosses into the next row a hair before a column boundary, the widened
    // walk still visits that column in the row it leaves: a hit found there may lie past the
    // row's boundary, and a wall first listed in the next row can come before it. The walk's
    // column stop must weigh the next row's boundary too. At x = 10^5 the widening
    // (2^-16 (|x0| + |x1|)) is about 3 units, so the hair can be a unit wide.
    let mut rng = SplitMix64::new(53);
    let walls: Vec<Segment> = (0..4000)
        .map(|_| {
            let (x, y) = (1e5 + rng.range(0.0, 100.0), rng.range(0.0, 100.0));
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let len = rng.range(0.5, 3.0);
            Segment::new(x, y, x + len * angle.cos(), y + len * angle.sin())
        })
        .collect();
    // Walls' first hits walk a grid along them, hits and counts one over their boxes: the
    // corners of both.
    let boxes: Vec<rectcast::Rect> = walls.iter().map(Shape::bounds).collect();
    let mut over_boxes = rectcast::cpu::grid::Grid::default();
    over_boxes.build(&boxes);
    let mut along = rectcast::cpu::grid::Grid::default();
    along.build_along(&walls, false);
    let mut segments = Vec::new();
    for grid in [&over_boxes, &along] {
        let (xs, ys) = (&grid.xs.bounds, &grid.ys.bounds);
        assert!(
            xs.len() >= 8 && ys.len() >= 8,
            "{} x {} cells",
            xs.len(),
            ys.len()
        );
        segments.extend((0..6000).map(|_| {
            let x = xs[rng.below(xs.len() as u64) as usize] + rng.range(-1.0, 1.0);
            let y = ys[rng.below(ys.len() as u64) as usize] + rng.range(-1.0, 1.0);
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let (dx, dy) = (angle.cos(), angle.sin());
            let (before, after) = (rng.range(0.01, 2.0), rng.range(0.5, 4.0));
            Segment::new(
                x - before * dx,
                y - before * dy,
                x + after * dx,
                y + after * dy,
            )
        }));
    }
    let mut off = common::cpu_engine();
    off.set_broad_phase(rectcast::BroadPhase::Off);
    let mut on = common::cpu_engine();
    on.set_broad_phase(rectcast::BroadPhase::On);
    let want = off.shape_first_hits(&segments, &walls).unwrap();
    let got = on.shape_first_hits(&segments, &walls).unwrap();
    assert!(on.used_broad_phase());
    assert!(want.iter().flatten().count() > 6000, "too few hits");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "segment {i} {:?}: brute force {:?}, grid {:?}",
            segments[i], want[i], got[i]
        );
    }
}

#[test]
fn a_call_over_new_walls_with_the_last_calls_boxes_answers_for_the_new_walls() {
    // The engine keeps the last shapes' grid, layout and lane filter for a call over the
    // same boxes (a CLI job's next chunk). Walls along the diagonals of circles' boxes after
    // the circles, and then along the other diagonals, must each be answered for themselves:
    // first hits list walls along their lines, so the same boxes are not the same grid.
    let (segments, rects) = rectcast::scene::bullet_hell(57, 3000, 3000);
    let disks: Vec<Circle> = rects
        .iter()
        .map(|r| Circle::new(r.min_x + 10.0, r.min_y + 10.0, 10.0))
        .collect();
    let squares: Vec<rectcast::Rect> = disks.iter().map(Shape::bounds).collect();
    let diagonal = |r: &rectcast::Rect| Segment::new(r.min_x, r.min_y, r.max_x, r.max_y);
    let other_diagonal = |r: &rectcast::Rect| Segment::new(r.min_x, r.max_y, r.max_x, r.min_y);
    let walls: Vec<Segment> = squares.iter().map(diagonal).collect();
    let crossing: Vec<Segment> = squares.iter().map(other_diagonal).collect();
    let wall_boxes: Vec<rectcast::Rect> = walls.iter().map(Shape::bounds).collect();
    assert_eq!(squares, wall_boxes);
    for broad_phase in [rectcast::BroadPhase::On, rectcast::BroadPhase::Off] {
        let fresh = || {
            let mut engine = common::cpu_engine();
            engine.set_broad_phase(broad_phase);
            engine
        };
        let mut engine = fresh();
        let counts = engine.shape_counts(&segments, &disks).unwrap();
        assert!(counts.per_segment.iter().sum::<u32>() > 100);
        let both = [
            ("walls after circles", &walls),
            ("the other diagonals", &crossing),
        ];
        // First hits one after the other (a grid along the walls, then along the others),
        // then hits (a grid over their boxes).
        for (what, walls) in both {
            assert_same(
                &format!("{broad_phase:?}, {what}: first hits"),
                &fresh().shape_first_hits(&segments, walls).unwrap(),
                &engine.shape_first_hits(&segments, walls).unwrap(),
            );
        }
        for (what, walls) in both {
            assert_same(
                &format!("{broad_phase:?}, {what}: hits"),
                &fresh().shape_hits(&segments, walls).unwrap(),
                &engine.shape_hits(&segments, walls).unwrap(),
            );
        }
    }
}

/// Every GPU query reports its kernels' own time when timed (the shapes' too: their passes,
/// summed), no more than the call took, the same results as untimed, and none once timing is
/// off. (How the time is measured, which no arithmetic changes.)
/// scripts/test.sh: native only
#[test]
fn every_gpu_query_reports_its_kernel_time_when_timed() {
    let Some(mut gpu) = common::gpu_engine("kernel times", rectcast::GpuLimits::default()) else {
        return;
    };
    let (segments, rects) = rectcast::scene::random_batch(61, 300, 120, 100.0);
    let (walls, _) = rectcast::scene::random_batch(62, 80, 1, 100.0);
    let circles = rectcast::scene::random_circles(63, 80, 100.0, (2.0, 9.0));
    let batch = rectcast::Batch::new(&segments, &rects);
    type Query<'a> = Box<dyn Fn(&mut Engine) -> Vec<u8> + 'a>;
    let bytes = |v: &[u8]| v.to_vec();
    let queries: Vec<(&str, Query)> = vec![
        (
            "first hit",
            Box::new(|e| bytes(bytemuck::cast_slice(&e.first_hit(&batch).unwrap()))),
        ),
        (
            "hits",
            Box::new(|e| bytes(bytemuck::cast_slice(&e.hits(&batch).unwrap()))),
        ),
        (
            "pairs",
            Box::new(|e| bytes(bytemuck::cast_slice(&e.pairs(&segments, &rects).unwrap()))),
        ),
        (
            "wall pairs",
            Box::new(|e| {
                bytes(bytemuck::cast_slice(
                    &e.wall_pairs(&segments, &walls).unwrap(),
                ))
            }),
        ),
        (
            "circle hits",
            Box::new(|e| format!("{:?}", e.shape_hits(&segments, &circles).unwrap()).into_bytes()),
        ),
        (
            "wall counts",
            Box::new(|e| format!("{:?}", e.shape_counts(&segments, &walls).unwrap()).into_bytes()),
        ),
    ];
    let untimed: Vec<Vec<u8>> = queries.iter().map(|(_, q)| q(&mut gpu)).collect();
    if !gpu.time_gpu_kernels(true) {
        assert!(
            std::env::var_os("RECTCAST_REQUIRE_GPU").is_none(),
            "the GPU has no timestamp queries"
        );
        return;
    }
    for ((what, query), expected) in queries.iter().zip(&untimed) {
        let started = std::time::Instant::now();
        let timed = query(&mut gpu);
        let took = started.elapsed();
        assert!(timed == *expected, "{what}: timed results differ");
        let kernel = gpu
            .gpu_kernel_time()
            .unwrap_or_else(|| panic!("{what}: no kernel time"));
        assert!(
            kernel > std::time::Duration::ZERO && kernel <= took,
            "{what}: kernel {kernel:?} of a call of {took:?}"
        );
    }
    gpu.time_gpu_kernels(false);
    for (what, query) in &queries {
        query(&mut gpu);
        assert_eq!(gpu.gpu_kernel_time(), None, "{what}: timed while off");
    }
}
