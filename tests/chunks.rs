//! The chunk planner, with sizes no GPU could hold: every pair covered exactly once, no chunk
//! over a cap, no index overflow past 2^32 pairs.

use rectcast::gpu::chunks::{ChunkCaps, plan_dense, plan_list, workgroup_grid};
use rectcast::gpu::shader::WORKGROUP_SIZE;

fn assert_dense_plan_covers(n: usize, m: usize, caps: ChunkCaps) -> usize {
    let mut covered: u64 = 0;
    let mut next_segment = 0;
    let mut chunks = 0;
    let mut last_rect_end = m;
    for chunk in plan_dense(n, m, caps) {
        assert!(
            !chunk.segments.is_empty() && !chunk.targets.is_empty(),
            "{chunk:?}"
        );
        assert!(
            chunk.pair_count() as u64 <= caps.pairs,
            "{chunk:?} over {caps:?}"
        );
        assert!(
            chunk.segments.len() as u64 <= caps.segments
                && chunk.targets.len() as u64 <= caps.rects
        );
        // Segment tiles in order; within one, rect tiles in order and covering 0..m.
        if chunk.targets.start == 0 {
            assert_eq!(
                last_rect_end, m,
                "previous segment tile did not reach the last rect"
            );
            assert_eq!(chunk.segments.start, next_segment);
            next_segment = chunk.segments.end;
        } else {
            assert_eq!(chunk.targets.start, last_rect_end);
        }
        last_rect_end = chunk.targets.end;
        covered += chunk.pair_count() as u64;
        chunks += 1;
    }
    assert_eq!(covered, n as u64 * m as u64);
    assert_eq!(next_segment, if n * m == 0 { 0 } else { n });
    chunks
}

#[test]
fn a_batch_that_fits_is_one_chunk() {
    let caps = ChunkCaps::new(128 << 20, 65_535);
    assert_eq!(assert_dense_plan_covers(4096, 1024, caps), 1);
}

#[test]
fn empty_batches_have_no_chunks() {
    let caps = ChunkCaps::new(128 << 20, 65_535);
    for (n, m) in [(0, 0), (0, 10), (10, 0)] {
        assert_eq!(assert_dense_plan_covers(n, m, caps), 0);
    }
    assert_eq!(plan_list(0, caps, false).count(), 0);
}

#[test]
fn more_than_2_pow_32_pairs_are_split_without_overflow() {
    // 2^20 segments x 2^13 rects = 2^33 pairs on a device with 128 MiB bindings.
    let caps = ChunkCaps::new(128 << 20, 65_535);
    let chunks = assert_dense_plan_covers(1 << 20, 1 << 13, caps);
    assert!(chunks >= (1u64 << 33).div_ceil(caps.pairs) as usize);
}

#[test]
fn more_rects_than_one_binding_are_tiled() {
    let caps = ChunkCaps::new(4096, 4);
    assert_eq!((caps.pairs, caps.rects, caps.segments), (341, 256, 256));
    assert_dense_plan_covers(300, 700, caps);
    assert_dense_plan_covers(1, 100_000, caps);
    assert_dense_plan_covers(100_000, 1, caps);
}

#[test]
fn dispatch_caps_bound_the_pairs_per_chunk() {
    // Huge bindings but 2 workgroups per dimension: 2 * 2 * WORKGROUP_SIZE pairs per dispatch.
    let caps = ChunkCaps::new(1 << 40, 2);
    assert_eq!(caps.pairs, 4 * WORKGROUP_SIZE as u64);
    assert_dense_plan_covers(1000, 3, caps);
}

#[test]
fn pair_index_space_stays_below_2_pow_31() {
    let caps = ChunkCaps::new(1 << 40, 65_535);
    assert_eq!(caps.pairs, 1 << 31);
}

#[test]
fn pair_lists_split_into_runs_in_order() {
    let caps = ChunkCaps::new(4096, 4);
    for gather in [false, true] {
        let runs: Vec<_> = plan_list(2000, caps, gather).collect();
        assert_eq!(runs.first().map(|r| r.start), Some(0));
        assert_eq!(runs.last().map(|r| r.end), Some(2000));
        for pair in runs.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        let cap = if gather { 256 } else { 341 };
        assert!(runs.iter().all(|r| r.len() <= cap), "gather {gather}");
    }
}

#[test]
fn workgroup_grid_goes_2d_past_the_dimension_limit() {
    assert_eq!(workgroup_grid(1, 65_535), (1, 1));
    let wg = WORKGROUP_SIZE as usize;
    assert_eq!(workgroup_grid(wg, 65_535), (1, 1));
    assert_eq!(workgroup_grid(wg + 1, 65_535), (2, 1));
    let (x, y) = workgroup_grid(wg * 70_000, 65_535);
    assert_eq!(x, 65_535);
    assert_eq!(y, 2);
    assert!(x as usize * y as usize * wg >= wg * 70_000);
}
