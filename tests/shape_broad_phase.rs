//! The queries over shapes through the broad phase's grid on the GPU (`shaders/shape_grid.wgsl`):
//! first hits, hits and counts of walls and circles, against the exact oracles' dense pairs
//! (tests/common), element by element, in scenes whose segments walk the grid's cells and
//! whose long ones prefer the brute force; long segments' first hits, whose walks a ceiling
//! stops, against the CPU's; with hit lists past the room a tile starts with, and with tiles and
//! bindings cut tiny.

mod common;

use rectcast::cpu::grid::{Grid, prefers_brute_force, walk_of};
use rectcast::cpu::shape_walk::{candidates_of, next_candidate};
use rectcast::scene::SplitMix64;
use rectcast::{
    BroadPhase, Circle, Engine, GpuLimits, Rect, SceneShape, Segment, Shape, ShapeContact,
};

/// Bullets (short, some of them points or axis-aligned) over the square [0, 1000]², with a few
/// long segments across it: those walk many rows and take the brute force.
fn segments(rng: &mut SplitMix64, n: usize) -> Vec<Segment> {
    (0..n)
        .map(|k| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            match k % 16 {
                0 => Segment::new(x, -10.0, 1000.0 - x, 1010.0),
                1 => Segment::new(x, y, x, y),
                2 => Segment::new(x, y, x + rng.range(-40.0, 40.0), y),
                3 => Segment::new(x, y, x, y + rng.range(-40.0, 40.0)),
                _ => Segment::new(x, y, x + rng.range(-30.0, 30.0), y + rng.range(-30.0, 30.0)),
            }
        })
        .collect()
}

/// Walls of every length, some of them points, some on a lattice where bullets end.
fn walls(rng: &mut SplitMix64, m: usize) -> Vec<Segment> {
    (0..m)
        .map(|k| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            match k % 10 {
                0 => Segment::new(x, y, rng.range(0.0, 1000.0), rng.range(0.0, 1000.0)),
                1 => Segment::new(x, y, x, y),
                2 => {
                    let k = rng.below(10) as f32 * 100.0;
                    Segment::new(k, 0.0, k, 1000.0)
                }
                _ => Segment::new(x, y, x + rng.range(-25.0, 25.0), y + rng.range(-25.0, 25.0)),
            }
        })
        .collect()
}

/// Disks of every size: points, small ones, and a few that cover much of the scene.
fn circles(rng: &mut SplitMix64, m: usize) -> Vec<Circle> {
    (0..m)
        .map(|k| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            let r = match k % 20 {
                0 => rng.range(100.0, 400.0),
                1 => 0.0,
                _ => rng.range(0.5, 20.0),
            };
            Circle::new(x, y, r)
        })
        .collect()
}

/// How many of `segments` walk the grid over `shapes`' boxes and how many take the brute force
/// instead, by the CPU mirror of the walk (`src/cpu/grid.rs`).
fn walks_and_brute_force<S: Shape>(segments: &[Segment], shapes: &[S]) -> (usize, usize) {
    let bounds: Vec<_> = shapes.iter().map(S::bounds).collect();
    let mut grid = Grid::default();
    grid.build(&bounds);
    let brute = segments
        .iter()
        .filter(|s| prefers_brute_force(&grid, s, &walk_of(&grid, s), shapes.len()))
        .count();
    (segments.len() - brute, brute)
}

/// First hits, hits and counts of `segments` against `shapes` through the GPU's grid, each
/// checked element by element against the oracle's dense pairs (`oracle`).
fn check_through_the_grid<S: SceneShape + std::fmt::Debug>(
    engine: &mut Engine,
    what: &str,
    segments: &[Segment],
    shapes: &[S],
    oracle: impl Fn(&Segment, &S) -> S::Contact,
) {
    let pairs: Vec<S::Contact> = segments
        .iter()
        .flat_map(|q| shapes.iter().map(|s| oracle(q, s)))
        .collect();
    let describe =
        |q: usize, k: usize| format!("segment {q} {:?}, shape {k} {:?}", segments[q], shapes[k]);
    // First hits run on the host's CPU, the scene's query (docs/semantics.md).
    let first = engine
        .shape_first_hits(segments, shapes)
        .expect("first hits");
    let hits = engine.shape_hits(segments, shapes).expect("hits");
    assert!(
        engine.used_broad_phase(),
        "{what}: the hits did not take the grid"
    );
    common::assert_queries_of_pairs(what, &pairs, shapes.len(), &hits, &first, describe);
    let counts = engine.shape_counts(segments, shapes).expect("counts");
    assert!(
        engine.used_broad_phase(),
        "{what}: the counts did not take the grid"
    );
    let hitting: Vec<bool> = pairs.iter().map(|c| c.hit()).collect();
    common::assert_counts_of_pairs(what, &hitting, shapes.len(), &counts, describe);
}

#[test]
fn walls_through_the_gpus_grid_give_the_oracles_answers() {
    let Some(mut gpu) =
        common::gpu_through_the_grid("walls through the grid", GpuLimits::default())
    else {
        return;
    };
    let mut rng = SplitMix64::new(3401);
    let (segments, walls) = (segments(&mut rng, 1500), walls(&mut rng, 400));
    let (walked, brute) = walks_and_brute_force(&segments, &walls);
    assert!(
        walked > 1000 && brute > 20,
        "{walked} walk the grid, {brute} take the brute force"
    );
    check_through_the_grid(
        &mut gpu,
        "walls",
        &segments,
        &walls,
        common::segments::segment_segment,
    );
}

#[test]
fn circles_through_the_gpus_grid_give_the_oracles_answers() {
    let Some(mut gpu) =
        common::gpu_through_the_grid("circles through the grid", GpuLimits::default())
    else {
        return;
    };
    let mut rng = SplitMix64::new(3402);
    let (segments, circles) = (segments(&mut rng, 1500), circles(&mut rng, 400));
    let (walked, brute) = walks_and_brute_force(&segments, &circles);
    assert!(
        walked > 1000 && brute > 20,
        "{walked} walk the grid, {brute} take the brute force"
    );
    check_through_the_grid(
        &mut gpu,
        "circles",
        &segments,
        &circles,
        common::circles::segment_circle,
    );
}

/// A fence of `posts` posts, and 200 bullets flying through all of it.
fn fence(posts: usize) -> (Vec<Segment>, Vec<Segment>) {
    let posts: Vec<Segment> = (0..posts)
        .map(|k| Segment::new(10.0 + 16.0 * k as f32, 0.0, 10.0 + 16.0 * k as f32, 100.0))
        .collect();
    let mut rng = SplitMix64::new(3403);
    let bullets: Vec<Segment> = (0..200)
        .map(|_| {
            let y = rng.range(1.0, 99.0);
            Segment::new(0.0, y, 1000.0, rng.range(1.0, 99.0))
        })
        .collect();
    (bullets, posts)
}

/// Hits through the grid over `fence(posts)` (every bullet meets every post) in `chunks`
/// submissions, and the oracle's first hits, hits and counts.
fn assert_a_fence_runs_in(posts: usize, chunks: usize) {
    let what = format!("a fence of {posts}");
    let Some(mut gpu) = common::gpu_through_the_grid(&what, GpuLimits::default()) else {
        return;
    };
    let (bullets, posts) = fence(posts);
    let hits = gpu.shape_hits(&bullets, &posts).expect("hits");
    assert!(gpu.used_broad_phase());
    assert_eq!(
        hits.len(),
        200 * posts.len(),
        "every bullet meets every post"
    );
    let call = gpu.last_gpu_call().expect("a GPU call");
    assert_eq!(call.chunks, chunks, "{what}: {call:?}");
    check_through_the_grid(
        &mut gpu,
        &what,
        &bullets,
        &posts,
        common::segments::segment_segment,
    );
}

/// scripts/test.sh: native only
#[test]
fn a_tile_with_more_candidates_than_its_list_holds_runs_again_with_room_for_all() {
    // 60 candidates a bullet, where a tile starts with room for 16: the tile, the tile again
    // with room for its 12,000 candidates and as many hits, and their copy.
    assert_a_fence_runs_in(60, 3);
}

/// scripts/test.sh: native only
#[test]
fn a_tile_with_more_hits_than_its_hit_list_holds_runs_again_with_room_for_all() {
    // 12 candidates a bullet fit the list's room for 16, and their 12 hits a bullet do not fit
    // the hit list's 8: the tile, the tile again with room for its 2,400 hits, and their copy.
    assert_a_fence_runs_in(12, 3);
}

/// scripts/test.sh: native only
#[test]
fn the_grids_tiles_and_hit_lists_cut_to_tiny_bindings_give_the_same_answers() {
    let Some(mut gpu) =
        common::gpu_through_the_grid("tiny bindings through the grid", common::tiny_limits())
    else {
        return;
    };
    // 4 KiB bindings: 256 segments a tile, and about 200 hits a list, so that a tile's hits
    // are split into halves; the grid over 120 shapes still fits its bindings.
    let mut rng = SplitMix64::new(3404);
    let segments: Vec<Segment> = (0..700)
        .map(|k| match k % 2 {
            0 => Segment::new(rng.range(0.0, 1000.0), 0.0, rng.range(0.0, 1000.0), 1000.0),
            _ => {
                let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
                Segment::new(x, y, x + 20.0, y + 20.0)
            }
        })
        .collect();
    // Small shapes, so that the grid over them fits a 4 KiB binding.
    let walls: Vec<Segment> = (0..120)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            Segment::new(x, y, x + rng.range(-25.0, 25.0), y + rng.range(-25.0, 25.0))
        })
        .collect();
    let circles: Vec<Circle> = (0..120)
        .map(|_| {
            Circle::new(
                rng.range(0.0, 1000.0),
                rng.range(0.0, 1000.0),
                rng.range(0.0, 20.0),
            )
        })
        .collect();
    for bounds in [
        walls.iter().map(Shape::bounds).collect::<Vec<_>>(),
        circles.iter().map(Shape::bounds).collect(),
    ] {
        let mut grid = Grid::default();
        grid.build(&bounds);
        let cells = grid.cell_start.len() as u64;
        assert!(
            grid.entries.len() * 16 <= 4096 && cells * 4 <= 4096,
            "the grid must fit a 4 KiB binding: {} entries, {cells} cells",
            grid.entries.len()
        );
    }
    check_through_the_grid(
        &mut gpu,
        "walls, tiny",
        &segments,
        &walls,
        common::segments::segment_segment,
    );
    check_through_the_grid(
        &mut gpu,
        "circles, tiny",
        &segments,
        &circles,
        common::circles::segment_circle,
    );
}

/// scripts/test.sh: native only
#[test]
fn auto_walks_the_gpus_grid_for_bullets_and_runs_the_dense_passes_for_long_segments() {
    let Some(mut gpu) = common::gpu_engine("auto through the grid", GpuLimits::default()) else {
        return;
    };
    let mut cpu = common::cpu_engine();
    cpu.set_broad_phase(BroadPhase::Off);
    // Bullets among hitboxes, a wall along each one's diagonal: a few entries a walk. Long
    // segments across the same field: hundreds, where the dense passes cost less.
    let (bullets, boxes) = rectcast::scene::bullet_hell(3405, 4096, 1024);
    let walls: Vec<Segment> = boxes
        .iter()
        .map(|b| Segment::new(b.min_x, b.min_y, b.max_x, b.max_y))
        .collect();
    let mut rng = SplitMix64::new(3406);
    let long: Vec<Segment> = (0..2048)
        .map(|_| {
            let (x0, x1) = (rng.range(0.0, 1920.0), rng.range(0.0, 1920.0));
            Segment::new(x0, -5.0, x1, 1085.0)
        })
        .collect();
    for (what, segments, through_the_grid) in [("bullets", &bullets, true), ("long", &long, false)]
    {
        let hits = gpu.shape_hits(segments, &walls).expect("hits");
        assert_eq!(
            gpu.used_broad_phase(),
            through_the_grid,
            "{what}: the grid taken"
        );
        let want = cpu.shape_hits(segments, &walls).expect("hits");
        if let Some(k) = (0..want.len().max(hits.len())).find(|&k| want.get(k) != hits.get(k)) {
            panic!(
                "{what}: hit {k}: the CPU's {:?}, the GPU's {:?}",
                want.get(k),
                hits.get(k)
            );
        }
        assert!(hits.len() > 100, "{what}: few hits");
    }
}

/// Every shape `segments` touch, by the scalar function `touches`, is among the candidates the
/// walk's CPU mirror lists (`src/cpu/shape_walk.rs`, the GPU's walk line for line), and none is
/// listed twice.
fn assert_the_walk_lists_every_shape_touched<S: Shape>(
    what: &str,
    segments: &[Segment],
    shapes: &[S],
    touches: impl Fn(&Segment, &S) -> bool,
) -> usize {
    let bounds: Vec<_> = shapes.iter().map(S::bounds).collect();
    let mut grid = Grid::default();
    grid.build(&bounds);
    let mut touched = 0;
    for (q, s) in segments.iter().enumerate() {
        let mut listed = vec![false; shapes.len()];
        let mut candidates = candidates_of(&grid, s, shapes.len());
        while let Some(j) = next_candidate(&grid, s, &mut candidates, 1.0) {
            assert!(
                !listed[j as usize],
                "{what}: segment {q} {s:?} lists shape {j} twice"
            );
            listed[j as usize] = true;
        }
        for (j, shape) in shapes.iter().enumerate() {
            if touches(s, shape) {
                touched += 1;
                assert!(
                    listed[j],
                    "{what}: segment {q} {s:?} touches shape {j} ({:?}), which its walk skips",
                    bounds[j]
                );
            }
        }
    }
    touched
}

#[test]
fn the_walk_lists_every_shape_a_segment_touches_once() {
    let mut rng = SplitMix64::new(3407);
    let (segments, walls, circles) = (
        segments(&mut rng, 3000),
        walls(&mut rng, 600),
        circles(&mut rng, 600),
    );
    let touched = assert_the_walk_lists_every_shape_touched("walls", &segments, &walls, |s, w| {
        rectcast::segment_segment(s, w).hit()
    });
    assert!(touched > 1000, "walls: {touched} touches");
    let touched =
        assert_the_walk_lists_every_shape_touched("circles", &segments, &circles, |s, c| {
            rectcast::segment_circle(s, c).hit()
        });
    assert!(touched > 1000, "circles: {touched} touches");
}

/// Long segments in every direction (150 to 400 long) over the square [0, 1000]²: over
/// mid-sized shapes they cross tens of rows and walk the grid, meeting many shapes each.
fn long_segments(rng: &mut SplitMix64, n: usize) -> Vec<Segment> {
    (0..n)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            let (length, angle) = (
                rng.range(150.0, 400.0),
                rng.range(0.0, std::f32::consts::TAU),
            );
            Segment::new(x, y, x + length * angle.cos(), y + length * angle.sin())
        })
        .collect()
}

/// Walls 10 to 60 long and disks of radius 5 to 25, over the square [0, 1000]².
fn mid_sized(rng: &mut SplitMix64, m: usize) -> (Vec<Segment>, Vec<Circle>) {
    let walls = (0..m)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            let (length, angle) = (rng.range(10.0, 60.0), rng.range(0.0, std::f32::consts::TAU));
            Segment::new(x, y, x + length * angle.cos(), y + length * angle.sin())
        })
        .collect();
    let circles = (0..m)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            Circle::new(x, y, rng.range(5.0, 25.0))
        })
        .collect();
    (walls, circles)
}

/// Under a ceiling at a segment's first hit, the walk's CPU mirror still lists every shape the
/// segment meets at a t that rounds to the ceiling or before, by the scalar contact; and it
/// stops early. Returns the candidates listed under the ceilings and under 1. `grid` is over
/// the shapes' boxes, or along walls.
fn assert_the_walk_under_a_ceiling_lists_every_shape_met_by_then<S: Shape>(
    what: &str,
    grid: &Grid,
    segments: &[Segment],
    shapes: &[S],
    contact: impl Fn(&Segment, &S) -> Option<f32>,
) -> (usize, usize) {
    let bounds: Vec<_> = shapes.iter().map(S::bounds).collect();
    let (mut under, mut all) = (0, 0);
    for (q, s) in segments.iter().enumerate() {
        let times: Vec<Option<f32>> = shapes.iter().map(|shape| contact(s, shape)).collect();
        let first = times.iter().flatten().copied().reduce(f32::min);
        // The first hit's t is the lowest ceiling a first hit can have.
        for ceiling in [first.unwrap_or(1.0), 1.0] {
            let mut listed = vec![false; shapes.len()];
            let mut candidates = candidates_of(grid, s, shapes.len());
            while let Some(j) = next_candidate(grid, s, &mut candidates, ceiling) {
                listed[j as usize] = true;
                if ceiling == 1.0 {
                    all += 1;
                } else {
                    under += 1;
                }
            }
            for (j, t) in times.iter().enumerate() {
                if let Some(t) = t.filter(|t| *t <= ceiling) {
                    assert!(
                        listed[j],
                        "{what}: segment {q} {s:?} meets shape {j} ({:?}) at {t}, which its walk under the ceiling {ceiling} skips",
                        bounds[j]
                    );
                }
            }
        }
    }
    (under, all)
}

/// scripts/test.sh: native only
#[test]
fn the_walk_under_a_ceiling_lists_every_shape_met_by_then_and_stops_early() {
    let mut rng = SplitMix64::new(3409);
    let segments = long_segments(&mut rng, 500);
    let (walls, circles) = mid_sized(&mut rng, 1000);
    let (walked, _) = walks_and_brute_force(&segments, &circles);
    assert!(walked > 400, "{walked} of 500 walk the grid");
    let over_boxes = |bounds: Vec<Rect>| {
        let mut grid = Grid::default();
        grid.build(&bounds);
        grid
    };
    let (under, all) = assert_the_walk_under_a_ceiling_lists_every_shape_met_by_then(
        "walls",
        &over_boxes(walls.iter().map(Segment::bounds).collect()),
        &segments,
        &walls,
        |s, w| {
            Some(rectcast::segment_segment(s, w))
                .filter(|c| c.hit())
                .map(|c| c.t_enter)
        },
    );
    assert!(
        under * 2 < all,
        "walls: {under} listed under the ceilings, {all} under 1"
    );
    let (under, all) = assert_the_walk_under_a_ceiling_lists_every_shape_met_by_then(
        "circles",
        &over_boxes(circles.iter().map(Circle::bounds).collect()),
        &segments,
        &circles,
        |s, c| {
            Some(rectcast::segment_circle(s, c))
                .filter(|c| c.hit())
                .map(|c| c.t_enter)
        },
    );
    assert!(
        under * 2 < all,
        "circles: {under} listed under the ceilings, {all} under 1"
    );
}

/// Over walls that span the field, the grid along walls (`Grid::build_along`, with each
/// entry's box listed, as the GPU's first hits take it) lists each wall met by a segment's
/// first hit in its walk under that ceiling, as the grid over boxes does, and lists far fewer
/// candidates: a long wall's box covers most cells, its line few.
/// scripts/test.sh: native only
#[test]
fn the_walk_along_walls_lists_every_wall_met_by_the_first_hit_and_fewer_than_over_boxes() {
    let mut rng = SplitMix64::new(3411);
    let segments = long_segments(&mut rng, 500);
    let walls: Vec<Segment> = (0..1000)
        .map(|_| {
            let mut v = || rng.range(0.0, 1000.0);
            Segment::new(v(), v(), v(), v())
        })
        .collect();
    let bounds: Vec<Rect> = walls.iter().map(Segment::bounds).collect();
    let mut over_boxes = Grid::default();
    over_boxes.build(&bounds);
    let mut along = Grid::default();
    along.build_along(&walls, false);
    along.list_entry_boxes(&bounds);
    let t_enter = |s: &Segment, w: &Segment| {
        Some(rectcast::segment_segment(s, w))
            .filter(|c| c.hit())
            .map(|c| c.t_enter)
    };
    let (over_boxes_under, _) = assert_the_walk_under_a_ceiling_lists_every_shape_met_by_then(
        "walls over boxes",
        &over_boxes,
        &segments,
        &walls,
        t_enter,
    );
    let (along_under, _) = assert_the_walk_under_a_ceiling_lists_every_shape_met_by_then(
        "walls along their lines",
        &along,
        &segments,
        &walls,
        t_enter,
    );
    eprintln!(
        "under the first hits: {along_under} candidates along the walls, {over_boxes_under} over their boxes"
    );
    assert!(
        along_under * 4 < over_boxes_under,
        "{along_under} listed along the walls, {over_boxes_under} over their boxes"
    );
}
