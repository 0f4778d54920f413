//! The shapes' broad phase is never much worse than their brute force, counted in work (boxes
//! and entries looked at), not time: per segment and per scene, on the scenes of
//! docs/broad_phase.md ("Worst cases, and the bound"), with and without a lane filter, with and
//! without first hits' t = 0 ceiling, and first hits over walls through the grid along them.

use super::along::{prefers_cull_along, walk_lanes};
use super::cull::SegmentBox;
use super::shape_cull::{ShapeLayout, for_each_block, lanes_overlapping, prefers_cull};
use crate::cpu::grid::{Grid, walk_entries, walk_of};
use crate::cpu::lane_filter::LaneFilter;
use crate::cpu::lanes::{LANES, Simd};
use crate::scene::{SplitMix64, bullet_hell, clustered, random_batch};
use crate::types::{Rect, Segment};

/// What the broad phase looks at for `s`: where it takes the grid's walk, the entries of the
/// cells it walks and one per row (`walk_entries`, the walk's full scan, before any stop);
/// else the boxes the box cull tests, sixteen for each tree node or block it tests.
fn work(
    grid: &Grid,
    layout: &ShapeLayout,
    s: &Segment,
    filter: Option<&LaneFilter>,
    ceiling_pays: bool,
) -> u64 {
    let walk = walk_of(grid, s);
    let shapes = layout.order.len();
    if !prefers_cull(grid, s, &walk, shapes, filter, ceiling_pays) {
        let rows = (walk.row_max - walk.row_min + 1) as u64;
        return walk_entries(grid, s, &walk, u64::MAX) + rows;
    }
    cull_work(layout, s)
}

/// What the box cull looks at for `s`: sixteen boxes for each tree node or block it tests.
fn cull_work(layout: &ShapeLayout, s: &Segment) -> u64 {
    let b = SegmentBox::of(s);
    let tested = std::cell::Cell::new(0u64);
    let overlaps = |node: &_| {
        tested.set(tested.get() + 1);
        lanes_overlapping(&b, node)
    };
    for_each_block(&layout.tree, overlaps, |_| tested.set(tested.get() + 1));
    tested.get() * LANES as u64
}

/// What first hits over walls look at for `s` with a grid along them: where it takes the walk,
/// the lanes of the cells it walks (`walk_lanes`, the full walk, before any stop) and one per
/// row; else the box cull's.
fn along_work(grid: &Grid, layout: &ShapeLayout, s: &Segment) -> u64 {
    let walk = walk_of(grid, s);
    if prefers_cull_along(grid, s, &walk, layout.order.len()) {
        return cull_work(layout, s);
    }
    let rows = (walk.row_max - walk.row_min + 1) as u64;
    walk_lanes(grid, s, &walk, u64::MAX) + rows
}

/// The brute force's work for one segment: every shape's box, sixteen to a block.
fn brute_force(layout: &ShapeLayout) -> u64 {
    (layout.blocks.len() * LANES) as u64
}

/// Checks the grid's work on a scene against the brute force's, per segment (at most twice) and
/// in all (at most a quarter more), for each way a query decides (lane filter or not, ceiling
/// or not); gives the largest of the totals' ratios.
fn assert_never_much_worse(name: &str, segments: &[Segment], bounds: &[Rect]) -> f64 {
    let mut grid = Grid::default();
    grid.build(bounds);
    grid.list_entry_spans();
    let layout = ShapeLayout::new(bounds, false);
    // The lane filter's presence is what the choice reads: walls over the boxes' diagonals.
    let walls: Vec<Segment> = bounds
        .iter()
        .map(|b| Segment::new(b.min_x, b.min_y, b.max_x, b.max_y))
        .collect();
    let filter = LaneFilter::of(Simd::Portable, &walls, &layout.order);
    assert!(filter.is_some());
    let brute = brute_force(&layout);
    let mut worst = 0f64;
    for filter in [filter.as_ref(), None] {
        for ceiling_pays in [false, true] {
            let mut total = 0u64;
            for (i, s) in segments.iter().enumerate() {
                let w = work(&grid, &layout, s, filter, ceiling_pays);
                assert!(
                    w <= 2 * brute,
                    "{name}, filter {}, ceiling {ceiling_pays}: segment {i} {s:?} costs {w} \
                     where the brute force costs {brute}",
                    filter.is_some()
                );
                total += w;
            }
            let ratio = total as f64 / (brute * segments.len() as u64) as f64;
            assert!(
                ratio <= 1.25,
                "{name}, filter {}, ceiling {ceiling_pays}: {ratio:.3} × the brute force's work",
                filter.is_some()
            );
            worst = worst.max(ratio);
        }
    }
    // First hits over walls: the grid along them.
    let mut along = Grid::default();
    along.build_along(&walls, false);
    let mut total = 0u64;
    for (i, s) in segments.iter().enumerate() {
        let w = along_work(&along, &layout, s);
        assert!(
            w <= 2 * brute,
            "{name}, along walls: segment {i} {s:?} costs {w} where the brute force costs {brute}"
        );
        total += w;
    }
    let ratio = total as f64 / (brute * segments.len() as u64) as f64;
    assert!(
        ratio <= 1.25,
        "{name}, along walls: {ratio:.3} × the brute force's work"
    );
    worst.max(ratio)
}

#[test]
fn short_bullets_among_many_small_targets_cost_a_small_part_of_the_brute_force() {
    let (segments, rects) = bullet_hell(7, 4096, 10_000);
    let ratio = assert_never_much_worse("bullet hell", &segments, &rects);
    // Where the broad phase is for: it must pay.
    assert!(
        ratio < 0.05,
        "bullet hell: {ratio:.3} × the brute force's work"
    );
}

#[test]
fn long_segments_over_big_overlapping_boxes_cost_no_more_than_the_brute_force() {
    // Boxes a third of the field on average: each cell lists thousands of entries.
    let (segments, rects) = random_batch(3, 2048, 8192, 1000.0);
    assert_never_much_worse("long segments, big boxes", &segments, &rects);
}

#[test]
fn long_segments_across_small_scattered_targets_stay_within_the_bound() {
    let (_, rects) = bullet_hell(8, 0, 10_000);
    let mut rng = SplitMix64::new(9);
    let segments: Vec<Segment> = (0..2048)
        .map(|_| {
            let mut v = |hi: f32| rng.range(0.0, hi);
            Segment::new(v(1920.0), v(1080.0), v(1920.0), v(1080.0))
        })
        .collect();
    assert_never_much_worse("long segments", &segments, &rects);
}

#[test]
fn one_target_covering_the_world_among_small_ones_stays_within_the_bound() {
    let (segments, mut rects) = bullet_hell(10, 2048, 3000);
    rects.push(Rect::new(-1e6, -1e6, 1e6, 1e6));
    let long: Vec<Segment> = segments
        .iter()
        .map(|s| Segment::new(s.x0, s.y0, 1920.0 - s.x0, 1080.0 - s.y0))
        .collect();
    assert_never_much_worse("one huge target, short", &segments, &rects);
    assert_never_much_worse("one huge target, long", &long, &rects);
}

#[test]
fn clustered_targets_and_every_target_in_one_cell_stay_within_the_bound() {
    let (segments, rects) = clustered(11, 4096, 10_000);
    assert_never_much_worse("clusters", &segments, &rects);
    let same = vec![Rect::new(5.0, 5.0, 6.0, 6.0); 3000];
    let through: Vec<Segment> = (0..512)
        .map(|i| Segment::new(0.0, i as f32 / 50.0, 10.0, 10.0 - i as f32 / 50.0))
        .collect();
    assert_never_much_worse("one cell", &through, &same);
}
