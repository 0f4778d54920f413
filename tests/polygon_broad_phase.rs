//! Polygons through the broad phase's grid on the GPU (`shaders/polygon_grid.wgsl`): first hits,
//! hits, counts and the dense pairs, against the exact oracle's dense pairs (tests/common),
//! element by element, in scenes whose segments walk the grid's cells and whose long ones
//! prefer the brute force; with candidates and edges past the room a tile starts with, tiles
//! and bindings cut tiny, and edge pairs past the kernel's narrow integers, which the host
//! decides.

mod common;

use rectcast::scene::SplitMix64;
use rectcast::{BroadPhase, Engine, GpuLimits, PolygonContact, Polygons, Segment};

/// Polygons' rings.
type Rings = Vec<Vec<[f32; 2]>>;

/// A star-shaped ring of 3 to `3 + more - 1` vertices around (cx, cy), at most `r` from it.
fn star(rng: &mut SplitMix64, (cx, cy): (f32, f32), more: u64, r: f32) -> Vec<[f32; 2]> {
    let n = 3 + rng.below(more) as usize;
    // Angles spread around the center with some jitter: no gap reaches a half turn, so the
    // ring is simple.
    let angles: Vec<f32> = (0..n)
        .map(|k| (k as f32 + rng.range(0.0, 0.4)) * std::f32::consts::TAU / n as f32)
        .collect();
    angles
        .iter()
        .map(|a| {
            let d = rng.range(0.3 * r, r);
            [cx + d * a.cos(), cy + d * a.sin()]
        })
        .collect()
}

/// Polygons over the square [0, 1000]²: small stars, squares on a lattice where bullets end,
/// squares with a hole, and a few large stars that cover much of the scene.
fn polygons(rng: &mut SplitMix64, m: usize) -> Vec<Rings> {
    (0..m)
        .map(|k| {
            let center = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            match k % 10 {
                0 => vec![star(rng, center, 20, 250.0)],
                1 => {
                    let (x, y) = (rng.below(50) as f32 * 20.0, rng.below(50) as f32 * 20.0);
                    vec![vec![
                        [x, y],
                        [x + 20.0, y],
                        [x + 20.0, y + 20.0],
                        [x, y + 20.0],
                    ]]
                }
                2 => {
                    let (x, y) = center;
                    vec![
                        vec![[x, y], [x + 30.0, y], [x + 30.0, y + 30.0], [x, y + 30.0]],
                        vec![
                            [x + 10.0, y + 10.0],
                            [x + 10.0, y + 20.0],
                            [x + 20.0, y + 20.0],
                            [x + 20.0, y + 10.0],
                        ],
                    ]
                }
                _ => vec![star(rng, center, 9, 25.0)],
            }
        })
        .collect()
}

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
                3 => {
                    // Along a lattice line, where the lattice squares' edges lie.
                    let x = rng.below(50) as f32 * 20.0;
                    Segment::new(x, y, x, y + rng.range(-60.0, 60.0))
                }
                _ => Segment::new(x, y, x + rng.range(-30.0, 30.0), y + rng.range(-30.0, 30.0)),
            }
        })
        .collect()
}

/// First hits, hits, counts and the dense pairs of `segments` against `shapes` through the
/// GPU's grid, each checked element by element against the oracle's dense pairs.
fn check_through_the_grid(engine: &mut Engine, what: &str, segments: &[Segment], shapes: &[Rings]) {
    let polygons = Polygons::from_polygons(shapes).expect("valid polygons");
    let pairs: Vec<PolygonContact> = segments
        .iter()
        .flat_map(|q| {
            shapes
                .iter()
                .map(|rings| common::polygons::segment_polygon_rings(q, rings))
        })
        .collect();
    let describe =
        |q: usize, k: usize| format!("segment {q} {:?}, polygon {k} {:?}", segments[q], shapes[k]);
    let first = engine
        .polygon_first_hits(segments, &polygons)
        .expect("first hits");
    assert!(
        engine.used_broad_phase(),
        "{what}: the first hits did not take the grid"
    );
    let hits = engine.polygon_hits(segments, &polygons).expect("hits");
    assert!(
        engine.used_broad_phase(),
        "{what}: the hits did not take the grid"
    );
    common::assert_queries_of_pairs(what, &pairs, shapes.len(), &hits, &first, describe);
    let counts = engine.polygon_counts(segments, &polygons).expect("counts");
    assert!(
        engine.used_broad_phase(),
        "{what}: the counts did not take the grid"
    );
    let dense = engine.polygon_pairs(segments, &polygons).expect("pairs");
    assert!(
        engine.used_broad_phase(),
        "{what}: the pairs did not take the grid"
    );
    if let Some(i) = (0..pairs.len()).find(|&i| pairs[i] != dense[i]) {
        let (q, k) = (i / shapes.len(), i % shapes.len());
        panic!(
            "{what}: pair {i} differs: want {:?}, got {:?}: {}",
            pairs[i],
            dense[i],
            describe(q, k)
        );
    }
    let hitting: Vec<bool> = pairs.iter().map(|c| c.hit()).collect();
    common::assert_counts_of_pairs(what, &hitting, shapes.len(), &counts, describe);
    assert!(hits.len() > 50, "{what}: {} hits", hits.len());
}

#[test]
fn polygons_through_the_gpus_grid_give_the_oracles_first_hits_hits_counts_and_pairs() {
    let Some(mut gpu) =
        common::gpu_through_the_grid("polygons through the grid", GpuLimits::default())
    else {
        return;
    };
    let mut rng = SplitMix64::new(3501);
    let (segments, polygons) = (segments(&mut rng, 800), polygons(&mut rng, 150));
    check_through_the_grid(&mut gpu, "polygons", &segments, &polygons);
}

/// `polygons`, the first `crossed` of them crossed by 100 bullets flying along y = 10, through
/// the grid in `chunks` submissions, and the oracle's first hits, hits and counts.
fn assert_a_row_runs_in(what: &str, polygons: &[Rings], crossed: usize, chunks: usize) {
    let Some(mut gpu) = common::gpu_through_the_grid(what, GpuLimits::default()) else {
        return;
    };
    let mut rng = SplitMix64::new(3502);
    let bullets: Vec<Segment> = (0..100)
        .map(|_| Segment::new(-5.0, rng.range(9.0, 11.0), 1005.0, rng.range(9.0, 11.0)))
        .collect();
    let set = Polygons::from_polygons(polygons).expect("valid polygons");
    let hits = gpu.polygon_hits(&bullets, &set).expect("hits");
    assert!(gpu.used_broad_phase());
    assert_eq!(
        hits.len(),
        100 * crossed,
        "every bullet meets every polygon crossed"
    );
    let call = gpu.last_gpu_call().expect("a GPU call");
    assert_eq!(call.chunks, chunks, "{what}: {call:?}");
    check_through_the_grid(&mut gpu, what, &bullets, polygons);
}

/// Squares of side 20 along the x axis, `count` of them, every 1000 / count.
fn row_of_squares(count: usize) -> Vec<Rings> {
    (0..count)
        .map(|k| {
            let x = k as f32 * (1000.0 / count as f32);
            vec![vec![[x, 0.0], [x + 10.0, 0.0], [x + 10.0, 20.0], [x, 20.0]]]
        })
        .collect()
}

/// scripts/test.sh: native only
#[test]
fn a_tile_with_more_candidates_than_its_list_holds_runs_again_with_room_for_all() {
    // 40 candidates a bullet, where a tile starts with room for 16: the tile, the tile again
    // with room for its 4,000 candidates and their 16,000 edges (4 a polygon, on average),
    // and their copy.
    assert_a_row_runs_in("a row of 40 squares", &row_of_squares(40), 40, 3);
}

/// scripts/test.sh: native only
#[test]
fn a_tile_with_more_edges_than_its_contacts_hold_runs_again_with_room_for_all() {
    // One candidate a bullet fits the list's room for 16, and its 48 edges do not fit the
    // room for 8 candidates' edges a bullet, at 4 edges a polygon on average: the tile, the
    // tile again with room for its 4,800 edges, and their copy. A regular 48-gon, stretched
    // along x, that every bullet crosses, and 47 triangles away from the bullets.
    let ring: Vec<[f32; 2]> = (0..48)
        .map(|k| {
            let a = k as f32 * std::f32::consts::TAU / 48.0;
            [500.0 + 900.0 * a.cos(), 10.0 + 9.0 * a.sin()]
        })
        .collect();
    let mut polygons = vec![vec![ring]];
    polygons.extend((0..47).map(|k| {
        let x = k as f32 * 20.0;
        vec![vec![[x, 500.0], [x + 10.0, 500.0], [x, 510.0]]]
    }));
    assert_a_row_runs_in("a 48-gon", &polygons, 1, 3);
}

/// scripts/test.sh: native only
#[test]
fn polygons_through_the_grid_cut_to_tiny_bindings_give_the_same_answers() {
    let Some(mut gpu) =
        common::gpu_through_the_grid("tiny bindings through the grid", common::tiny_limits())
    else {
        return;
    };
    // 4 KiB bindings: 256 segments a tile and 256 contacts a list, so that tiles of long
    // segments are split into halves; 24 small polygons' edges and the grid over them still
    // fit.
    let mut rng = SplitMix64::new(3504);
    let segments: Vec<Segment> = (0..400)
        .map(|k| match k % 2 {
            0 => Segment::new(rng.range(0.0, 1000.0), 0.0, rng.range(0.0, 1000.0), 1000.0),
            _ => {
                let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
                Segment::new(x, y, x + 40.0, y + 40.0)
            }
        })
        .collect();
    let polygons: Vec<Rings> = (0..24)
        .map(|_| {
            let center = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            vec![star(&mut rng, center, 3, 60.0)]
        })
        .collect();
    let edges: usize = polygons.iter().map(|p| p[0].len()).sum();
    assert!(edges * 32 <= 4096, "{edges} edges must fit a 4 KiB binding");
    let set = Polygons::from_polygons(&polygons).expect("valid polygons");
    let bounds: Vec<_> = (0..set.len()).map(|p| set.bounds(p)).collect();
    let mut grid = rectcast::cpu::grid::Grid::default();
    grid.build(&bounds);
    let cells = grid.cell_start.len();
    assert!(
        grid.entries.len() * 16 <= 4096 && cells * 4 <= 4096,
        "the grid must fit a 4 KiB binding: {} entries, {cells} cells",
        grid.entries.len()
    );
    check_through_the_grid(&mut gpu, "polygons, tiny", &segments, &polygons);
}

#[test]
fn edge_pairs_past_the_narrow_integers_reach_are_decided_on_the_host_through_the_grid() {
    // Pentagons notched at a vertex by a value 2^-60 of the grid's step: every edge pair
    // spans 63 binary orders, past the kernel's narrow integers (62), and the host decides it.
    use common::degenerate::{power_of_two, segment_spanning};
    let Some(mut gpu) =
        common::gpu_through_the_grid("polygons past the reach", GpuLimits::default())
    else {
        return;
    };
    let mut rng = SplitMix64::new(3505);
    let unit = power_of_two(0);
    let small = power_of_two(3 - 63);
    let shapes: Vec<Rings> = (0..6)
        .map(|_| common::polygons::notched_pentagon(&mut rng, unit, small))
        .collect();
    let segments: Vec<Segment> = (0..120)
        .map(|_| segment_spanning(&mut rng, 0, 63))
        .collect();
    let before = gpu.uncertain_pairs();
    check_through_the_grid(&mut gpu, "past the reach", &segments, &shapes);
    assert!(
        gpu.uncertain_pairs() > before,
        "no edge pair went to the host"
    );
}

/// scripts/test.sh: native only
#[test]
fn auto_walks_the_gpus_grid_over_polygons_whose_dense_pairs_the_host_gathers_at_any_size() {
    // Polygons' dense pairs are each read back and gathered on the host. Long segments at
    // every slope over stars walk many entries, where walls' dense pairs, reduced on the GPU,
    // cost less than the grid: polygons' cost more. A few bullets over a few octagons are
    // below the batch sizes at which `Auto` builds a grid on the CPU: their dense pairs cost
    // more than the grid's build.
    let Some(mut gpu) = common::gpu_engine("auto over polygons", GpuLimits::default()) else {
        return;
    };
    let mut cpu = common::cpu_engine();
    cpu.set_broad_phase(BroadPhase::Off);
    let long = rectcast::scene::random_batch(3506, 2048, 1, 1000.0).0;
    let stars = rectcast::scene::random_polygons(3507, 1024, 1000.0, (10.0, 60.0), (8, 16));
    let mut rng = SplitMix64::new(3508);
    let bullets = segments(&mut rng, 256);
    let few: Vec<Rings> = (0..64)
        .map(|_| {
            let center = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            vec![star(&mut rng, center, 6, 40.0)]
        })
        .collect();
    let few = Polygons::from_polygons(&few).expect("valid polygons");
    for (what, segments, polygons) in [("long", &long, &stars), ("bullets", &bullets, &few)] {
        // Hits (first hits run on the host, the scene's query).
        let hits = gpu.polygon_hits(segments, polygons).expect("hits");
        assert!(gpu.used_broad_phase(), "{what}: the grid not taken");
        let want = cpu.polygon_hits(segments, polygons).expect("hits");
        if let Some(k) = (0..want.len().max(hits.len())).find(|&k| want.get(k) != hits.get(k)) {
            panic!(
                "{what}: hit {k}: the CPU's {:?}, the GPU's {:?}",
                want.get(k),
                hits.get(k)
            );
        }
        assert!(hits.len() > 30, "{what}: few hits");
    }
}

#[test]
fn a_polygon_of_more_edges_than_an_invocation_loops_over_takes_the_dense_passes() {
    // One invocation loops over a candidate's edges through the grid, and lavapipe ends a long
    // loop early without an error: a strip of 402 edges, and segments along its bottom edges
    // and across it, past the most edges a candidate may have (64), take the dense passes.
    let Some(mut gpu) = common::gpu_through_the_grid("a long strip", GpuLimits::default()) else {
        return;
    };
    let bottom = (0..=200).map(|x| [x as f32, 0.0]);
    let top = (0..=200).rev().map(|x| [x as f32, 1.0]);
    let strip: Vec<[f32; 2]> = bottom.chain(top).collect();
    let shapes = vec![vec![strip]];
    let polygons = Polygons::from_polygons(&shapes).expect("a simple strip");
    let segments: Vec<Segment> = (0..40)
        .map(|i| match i % 2 {
            0 => Segment::new(-1.0 - i as f32, 0.0, 201.0 + i as f32, 0.0),
            _ => Segment::new(-1.0, i as f32 / 40.0, 201.0, 1.0 - i as f32 / 40.0),
        })
        .collect();
    let want: Vec<PolygonContact> = segments
        .iter()
        .map(|q| common::polygons::segment_polygon_rings(q, &shapes[0]))
        .collect();
    let got = gpu.polygon_pairs(&segments, &polygons).expect("pairs");
    assert!(!gpu.used_broad_phase(), "the grid taken");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "segment {i} {:?}: want {:?}, got {:?}",
            segments[i], want[i], got[i]
        );
    }
}
