//! The broad phase (a grid over the rects) against the brute force: the same bytes for first
//! hit, hits and counts, on every scene family, the skewed worst cases and the adversarial
//! generator, with one thread and with several, with and without filters.

mod common;

use common::adversarial::{self, Category};
use rectcast::gpu::Emulation;
use rectcast::scene::{self, SplitMix64};
use rectcast::{
    Batch, BroadPhase, CpuOptions, Engine, Filter, FirstHit, GpuLimits, Hit, Rect, RectSet, Segment,
};

fn cpu(threads: usize, broad_phase: BroadPhase) -> Engine {
    let options = CpuOptions::threads(threads);
    let mut engine = Engine::with_cpu_options(rectcast::Backend::Cpu, options).unwrap();
    engine.set_broad_phase(broad_phase);
    engine
}

fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    (0..a.len().min(b.len()))
        .find(|&i| a[i] != b[i])
        .or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

fn bytes_of_first_hits(v: &[FirstHit]) -> Vec<[u8; 16]> {
    v.iter()
        .map(|h| bytemuck::bytes_of(h).try_into().unwrap())
        .collect()
}

fn bytes_of_hits(v: &[Hit]) -> Vec<[u8; 20]> {
    v.iter()
        .map(|h| bytemuck::bytes_of(h).try_into().unwrap())
        .collect()
}

/// What the brute force gives for a batch.
struct Expected {
    first: Vec<FirstHit>,
    hits: Vec<Hit>,
    counts: rectcast::Counts,
}

/// Runs first hit, hits and counts on `engine` (which must use its grid) and panics at the first
/// difference from `expected`, with its inputs.
fn assert_engine_matches(
    what: &str,
    engine: &mut Engine,
    b: &Batch,
    expected: &Expected,
    segments: &[Segment],
    rects: &[Rect],
) {
    let first = engine.first_hit(b).unwrap();
    assert!(engine.used_broad_phase(), "{what}: the grid was not used");
    if let Some(i) = first_difference(
        &bytes_of_first_hits(&expected.first),
        &bytes_of_first_hits(&first),
    ) {
        panic!(
            "{what}: first hit differs at segment {i} {:?}\n  brute force {:?}\n  grid        {:?}\n  rects: brute's {:?}, grid's {:?}",
            segments[i],
            expected.first[i],
            first[i],
            expected.first[i].rect().map(|r| rects[r as usize]),
            first[i].rect().map(|r| rects[r as usize]),
        );
    }
    let rects_only = engine.first_hit_rects(b).unwrap();
    assert!(engine.used_broad_phase(), "{what}: the grid was not used");
    if let Some(i) = (0..first.len()).find(|&i| first[i].rect != rects_only[i]) {
        panic!(
            "{what}: first hit rect differs at segment {i} {:?}: brute force {:?}, rects only {}",
            segments[i], expected.first[i], rects_only[i]
        );
    }
    let hits = engine.hits(b).unwrap();
    assert!(engine.used_broad_phase(), "{what}: the grid was not used");
    if let Some(i) = first_difference(&bytes_of_hits(&expected.hits), &bytes_of_hits(&hits)) {
        let show = |h: Option<&Hit>| {
            h.map(|h| {
                format!(
                    "{h:?}: segment {:?}, rect {:?}",
                    segments[h.segment as usize], rects[h.rect as usize]
                )
            })
        };
        panic!(
            "{what}: hit {i} differs ({} hits brute force, {} grid)\n  brute force {:?}\n  grid        {:?}",
            expected.hits.len(),
            hits.len(),
            show(expected.hits.get(i)),
            show(hits.get(i)),
        );
    }
    let counts = engine.counts(b).unwrap();
    assert!(engine.used_broad_phase(), "{what}: the grid was not used");
    if let Some(i) = first_difference(&expected.counts.per_segment, &counts.per_segment) {
        panic!(
            "{what}: hit count of segment {i} {:?} differs: brute force {}, grid {}",
            segments[i], expected.counts.per_segment[i], counts.per_segment[i]
        );
    }
    if let Some(i) = first_difference(&expected.counts.per_target, &counts.per_target) {
        panic!(
            "{what}: hit count of rect {i} {:?} differs: brute force {}, grid {}",
            rects[i], expected.counts.per_target[i], counts.per_target[i]
        );
    }
}

thread_local! {
    /// One GPU engine per test thread and emulation (`None`: the environment's), opened once:
    /// `None` inside when no adapter opens (which RECTCAST_REQUIRE_GPU=1 turns into a failure).
    static GPUS: std::cell::RefCell<Vec<(Option<Emulation>, Option<Engine>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's GPU engine emulating `emulation`, with the grid on; skips when no
/// GPU opens (unless RECTCAST_REQUIRE_GPU=1, which fails).
fn with_gpu(emulation: Option<Emulation>, f: impl FnOnce(&mut Engine)) {
    GPUS.with_borrow_mut(|gpus| {
        if !gpus.iter().any(|(e, _)| *e == emulation) {
            let engine = match emulation {
                None => common::gpu_engine("broad phase", GpuLimits::default()),
                Some(e) => common::gpu_engine_emulating("broad phase", GpuLimits::default(), e),
            };
            gpus.push((emulation, engine));
        }
        let (_, engine) = gpus.iter_mut().find(|(e, _)| *e == emulation).unwrap();
        if let Some(engine) = engine {
            engine.set_broad_phase(BroadPhase::On);
            f(engine);
        }
    });
}

/// Every float behaviour a GPU may have: the environment's (lavapipe's own) and each emulated
/// one (not the control, `Uncertified`, whose t must differ). Under RECTCAST_GPU_EMULATION
/// (scripts/test.sh's later passes) the environment's alone: the others ran in the first pass.
fn every_emulation() -> Vec<Option<Emulation>> {
    match Emulation::from_env().expect("RECTCAST_GPU_EMULATION names a mode") {
        Emulation::Native => vec![
            None,
            Some(Emulation::Rounding),
            Some(Emulation::Flush),
            Some(Emulation::Fused),
        ],
        _ => vec![None],
    }
}

/// Runs first hit, hits and counts with the grid (built per call, and prepared) and without,
/// on the CPU and on the GPU, and panics at the first difference with its inputs.
fn assert_grid_matches_brute_force(
    scene: &str,
    segments: &[Segment],
    rects: &[Rect],
    filters: Option<(&[Filter], &[Filter])>,
) {
    assert_grid_matches_brute_force_on(scene, segments, rects, filters, &[None]);
}

/// [`assert_grid_matches_brute_force`], with a GPU engine for each of `emulations`.
fn assert_grid_matches_brute_force_on(
    scene: &str,
    segments: &[Segment],
    rects: &[Rect],
    filters: Option<(&[Filter], &[Filter])>,
    emulations: &[Option<Emulation>],
) {
    let set = RectSet::new(rects).unwrap();
    let batch = |segments| {
        let b = Batch::new(segments, rects);
        match filters {
            Some((s, r)) => b.with_segment_filters(s).with_rect_filters(r),
            None => b,
        }
    };
    let prepared = |segments| {
        let b = Batch::over(segments, &set);
        match filters {
            Some((s, r)) => b.with_segment_filters(s).with_rect_filters(r),
            None => b,
        }
    };
    let mut brute = cpu(2, BroadPhase::Off);
    let expected = Expected {
        first: brute.first_hit(&batch(segments)).unwrap(),
        hits: brute.hits(&batch(segments)).unwrap(),
        counts: brute.counts(&batch(segments)).unwrap(),
    };
    assert!(!brute.used_broad_phase());
    for prepared_set in [false, true] {
        let b = if prepared_set {
            prepared(segments)
        } else {
            batch(segments)
        };
        let what = |on: &str| {
            format!(
                "{scene} ({} segments x {} rects, {on}, {})",
                segments.len(),
                rects.len(),
                if prepared_set {
                    "prepared RectSet"
                } else {
                    "grid built per call"
                }
            )
        };
        for threads in [1, 2] {
            let mut grid = cpu(threads, BroadPhase::On);
            let on = format!("CPU, {threads} thread(s)");
            assert_engine_matches(&what(&on), &mut grid, &b, &expected, segments, rects);
        }
        for &emulation in emulations {
            with_gpu(emulation, |gpu| {
                let on = format!("GPU emulating {emulation:?}");
                assert_engine_matches(&what(&on), gpu, &b, &expected, segments, rects);
            });
        }
    }
}

#[test]
fn bullet_hell_frames_give_the_brute_force_bytes() {
    for (seed, n, m) in [(1, 4096, 1024), (2, 2000, 5000), (3, 300, 40)] {
        let (segments, rects) = scene::bullet_hell(seed, n, m);
        assert_grid_matches_brute_force_on(
            "bullet-hell",
            &segments,
            &rects,
            None,
            &every_emulation(),
        );
    }
}

#[test]
fn uniform_random_scenes_give_the_brute_force_bytes() {
    for (seed, n, m) in [(4, 2000, 3000), (5, 500, 600)] {
        let (segments, rects) = scene::random_batch(seed, n, m, 1000.0);
        assert_grid_matches_brute_force_on(
            "uniform random",
            &segments,
            &rects,
            None,
            &every_emulation(),
        );
    }
}

#[test]
fn vertical_and_slanted_segments_in_one_workgroup_list_every_hit() {
    // Segments 338..343 of the uniform random scene above: one vertical segment (a walk down a
    // single column) beside four slanted ones, each meeting hundreds of big rects. With each
    // hit's t computed inside the walk, lavapipe (Mesa 22.3.6) lost 250-360 of the vertical
    // segment's hits under emulated rounding, a different number each run; alone, or with
    // fewer neighbours, it lost none. The hit list's t now come in a second step (hit_times).
    let segments = [
        Segment::new(143.7335, 11.104525, 143.7335, 763.0706),
        Segment::new(971.0646, 669.616, 250.0, 409.62982),
        Segment::new(875.0, 747.50006, 437.5, 812.5),
        Segment::new(33.515514, 1000.0, 981.1664, 250.44041),
        Segment::new(500.0, 767.3318, 745.15045, 588.0085),
    ];
    let (_, rects) = scene::random_batch(4, 2000, 3000, 1000.0);
    assert_grid_matches_brute_force_on(
        "a vertical segment among slanted ones",
        &segments,
        &rects,
        None,
        &every_emulation(),
    );
}

#[test]
fn clustered_scenes_give_the_brute_force_bytes() {
    let (segments, rects) = scene::clustered(6, 3000, 4000);
    assert_grid_matches_brute_force("clustered", &segments, &rects, None);
}

#[test]
fn filtered_batches_give_the_brute_force_bytes() {
    let (segments, rects) = scene::bullet_hell(7, 3000, 2000);
    let mut rng = SplitMix64::new(7);
    let mut filter = || Filter::new(1 << rng.below(3), rng.next_u64() as u32 | 1);
    let segment_filters: Vec<Filter> = segments.iter().map(|_| filter()).collect();
    let rect_filters: Vec<Filter> = rects.iter().map(|_| filter()).collect();
    assert_grid_matches_brute_force(
        "bullet-hell with filters",
        &segments,
        &rects,
        Some((&segment_filters, &rect_filters)),
    );
}

#[test]
fn every_adversarial_category_gives_the_brute_force_bytes() {
    for category in Category::ALL {
        let (segments, rects) = adversarial::pairs(category, 8, 700);
        assert_grid_matches_brute_force_on(
            category.name(),
            &segments,
            &rects,
            None,
            &every_emulation(),
        );
    }
}

#[test]
fn all_rects_in_one_cell_give_the_brute_force_bytes() {
    // Every rect the same few units: one dense cell, the rest of the grid empty.
    let (segments, _) = scene::random_batch(9, 1500, 0, 100.0);
    let rects: Vec<Rect> = (0..2000)
        .map(|i| {
            let d = (i % 7) as f32 * 0.125;
            Rect::new(40.0 + d, 40.0, 41.0 + d, 42.0)
        })
        .collect();
    assert_grid_matches_brute_force("all rects in one cell", &segments, &rects, None);
}

#[test]
fn a_rect_covering_the_world_gives_the_brute_force_bytes() {
    let (segments, mut rects) = scene::bullet_hell(10, 2000, 1500);
    rects[700] = Rect::new(-10.0, -10.0, 2000.0, 1100.0);
    rects.push(Rect::new(-1e6, -1e6, 1e6, 1e6));
    assert_grid_matches_brute_force("a rect covering the world", &segments, &rects, None);
}

#[test]
fn segments_spanning_the_world_give_the_brute_force_bytes() {
    // Long segments at every slope through many small rects: the walk crosses hundreds of
    // cells, and a walk one cell short misses hits.
    let (_, rects) = scene::bullet_hell(11, 0, 6000);
    let mut rng = SplitMix64::new(11);
    let segments: Vec<Segment> = (0..1500)
        .map(|i| {
            let (x0, y0) = (rng.range(-50.0, 1970.0), rng.range(-50.0, 1130.0));
            let (x1, y1) = (rng.range(-50.0, 1970.0), rng.range(-50.0, 1130.0));
            match i % 8 {
                0 => Segment::new(x0, y0, x1, y0),
                1 => Segment::new(x0, y0, x0, y1),
                2 => Segment::new(-100.0, y0, 2100.0, y1),
                3 => Segment::new(x0, -100.0, x1, 1200.0),
                // Nearly horizontal and nearly vertical: a huge slope between rows.
                4 => Segment::new(-100.0, y0, 2100.0, y0 + 0.001),
                5 => Segment::new(x0, -100.0, x0 + 0.001, 1200.0),
                _ => Segment::new(x0, y0, x1, y1),
            }
        })
        .collect();
    assert_grid_matches_brute_force("segments spanning the world", &segments, &rects, None);
}

#[test]
fn segments_along_cell_boundaries_and_rect_edges_give_the_brute_force_bytes() {
    // Integer coordinates: rect edges, segment ends and the grid's boundaries coincide often.
    let mut rng = SplitMix64::new(12);
    let mut int = |lo: u64, hi: u64| (lo + rng.below(hi - lo)) as f32;
    let rects: Vec<Rect> = (0..3000)
        .map(|_| {
            let (x, y) = (int(0, 512), int(0, 512));
            Rect::new(x, y, x + int(0, 9), y + int(0, 9))
        })
        .collect();
    let segments: Vec<Segment> = (0..2000)
        .map(|_| Segment::new(int(0, 520), int(0, 520), int(0, 520), int(0, 520)))
        .collect();
    assert_grid_matches_brute_force("integer grid", &segments, &rects, None);
}

#[test]
fn points_and_zero_size_rects_give_the_brute_force_bytes() {
    let mut rng = SplitMix64::new(13);
    let rects: Vec<Rect> = (0..3000)
        .map(|i| {
            let (x, y) = (rng.range(0.0, 300.0), rng.range(0.0, 300.0));
            match i % 3 {
                0 => Rect::new(x, y, x, y),
                1 => Rect::new(x, y, x, y + 5.0),
                _ => Rect::new(x, y, x + 5.0, y),
            }
        })
        .collect();
    // Segments through the point rects' own coordinates, and points.
    let segments: Vec<Segment> = (0..2000)
        .map(|i| {
            let r = rects[i % rects.len()];
            let q = rects[(i * 7 + 3) % rects.len()];
            if i % 4 == 0 {
                Segment::new(r.min_x, r.min_y, r.min_x, r.min_y)
            } else {
                Segment::new(r.min_x, r.min_y, q.max_x, q.max_y)
            }
        })
        .collect();
    assert_grid_matches_brute_force("points and zero-size rects", &segments, &rects, None);
}

#[test]
fn huge_and_tiny_coordinates_give_the_brute_force_bytes() {
    let big = rectcast::MAX_ABS_COORDINATE;
    let mut rng = SplitMix64::new(14);
    for (scale, name) in [(big * 0.9, "huge coordinates"), (1e-36, "tiny coordinates")] {
        let rects: Vec<Rect> = (0..2500)
            .map(|_| {
                let (x, y) = (rng.range(-1.0, 0.99), rng.range(-1.0, 0.99));
                let (w, h) = (rng.range(0.0, 0.02), rng.range(0.0, 0.02));
                Rect::new(x * scale, y * scale, (x + w) * scale, (y + h) * scale)
            })
            .collect();
        let segments: Vec<Segment> = (0..1500)
            .map(|i| {
                let (x0, y0) = (rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
                let (x1, y1) = if i % 2 == 0 {
                    (rng.range(-1.0, 1.0), rng.range(-1.0, 1.0))
                } else {
                    (x0 + rng.range(-0.05, 0.05), y0 + rng.range(-0.05, 0.05))
                };
                Segment::new(x0 * scale, y0 * scale, x1 * scale, y1 * scale)
            })
            .collect();
        assert_grid_matches_brute_force_on(name, &segments, &rects, None, &every_emulation());
    }
    // Subnormal rects and segments around zero, where a GPU may flush.
    let tiny = f32::from_bits(1);
    let rects: Vec<Rect> = (0..1000)
        .map(|i| {
            let x = (i as f32 - 500.0) * tiny * 3.0;
            Rect::new(x, -tiny * 50.0, x + tiny, tiny * 50.0)
        })
        .collect();
    let segments: Vec<Segment> = (0..800)
        .map(|i| {
            let x = (i as f32 - 400.0) * tiny * 4.0;
            Segment::new(x, -tiny * 100.0, -x, tiny * 100.0)
        })
        .collect();
    assert_grid_matches_brute_force_on(
        "subnormal coordinates",
        &segments,
        &rects,
        None,
        &every_emulation(),
    );
}

#[test]
fn a_rect_set_reused_and_rebuilt_gives_the_brute_force_bytes() {
    let mut brute = cpu(2, BroadPhase::Off);
    let mut grid = cpu(2, BroadPhase::Auto);
    let mut set = RectSet::default();
    for frame in 0..5u64 {
        let (segments, rects) = scene::bullet_hell(100 + frame, 3000, 1100 + 300 * frame as usize);
        set.rebuild(&rects).unwrap();
        let expected = brute.first_hit(&Batch::new(&segments, &rects)).unwrap();
        let got = grid.first_hit(&Batch::over(&segments, &set)).unwrap();
        assert!(grid.used_broad_phase());
        assert_eq!(
            first_difference(&bytes_of_first_hits(&expected), &bytes_of_first_hits(&got)),
            None,
            "frame {frame}"
        );
        // The GPU keeps a set's grid between calls, and builds it again after a rebuild.
        with_gpu(None, |gpu| {
            for call in 0..2 {
                let got = gpu.first_hit(&Batch::over(&segments, &set)).unwrap();
                assert!(gpu.used_broad_phase());
                assert_eq!(
                    first_difference(&bytes_of_first_hits(&expected), &bytes_of_first_hits(&got)),
                    None,
                    "GPU, frame {frame}, call {call}"
                );
            }
        });
    }
}

#[test]
fn auto_uses_the_grid_only_above_the_measured_crossover() {
    let mut engine = cpu(1, BroadPhase::Auto);
    let (segments, rects) =
        scene::bullet_hell(15, rectcast::AUTO_MIN_SEGMENTS, rectcast::AUTO_MIN_RECTS);
    engine.first_hit(&Batch::new(&segments, &rects)).unwrap();
    assert!(engine.used_broad_phase());
    engine
        .first_hit(&Batch::new(&segments, &rects[..rects.len() - 1]))
        .unwrap();
    assert!(!engine.used_broad_phase());
    engine
        .first_hit(&Batch::new(&segments[1..], &rects))
        .unwrap();
    assert!(
        !engine.used_broad_phase(),
        "too few segments to pay for a build"
    );
    let set = RectSet::new(&rects).unwrap();
    engine
        .first_hit(&Batch::over(&segments[1..], &set))
        .unwrap();
    assert!(engine.used_broad_phase(), "a prepared set is already built");
    engine.set_broad_phase(BroadPhase::Off);
    engine.first_hit(&Batch::over(&segments, &set)).unwrap();
    assert!(!engine.used_broad_phase(), "Off ignores a prepared set");
}

#[test]
fn a_batch_whose_rects_are_not_its_sets_is_an_error() {
    let (segments, rects) = scene::bullet_hell(16, 10, 10);
    let set = RectSet::new(&rects).unwrap();
    let mut batch = Batch::over(&segments, &set);
    batch.rects = &rects;
    let e = cpu(1, BroadPhase::On).first_hit(&batch).unwrap_err();
    assert!(e.to_string().contains("rect set"), "{e}");
}

#[test]
fn an_invalid_rect_set_names_the_rect() {
    let mut rects = vec![Rect::new(0.0, 0.0, 1.0, 1.0); 5];
    rects[3].max_x = f32::NAN;
    let e = RectSet::new(&rects).unwrap_err();
    assert!(
        e.to_string().contains("rect 3") || e.to_string().contains("rects[3]"),
        "{e}"
    );
}

#[test]
fn a_tie_entered_exactly_on_a_row_boundary_goes_to_the_lower_index() {
    // A lattice of small rects, and two rects placed on one of the grid's row boundaries y = b:
    // rect 1 spans the boundary and is entered through its min_x side exactly at (x, b), in the
    // row below; rect 0 starts at y = b, so it is listed in the row above only, and is entered
    // at its corner (x, b): the same t. The first-hit walk finds rect 1 first and must not
    // stop at the boundary, where rect 1's entry ties with the crossing.
    let mut rects = vec![Rect::new(0.0, 0.0, 2.0, 2.0), Rect::new(0.0, 0.0, 1.0, 2.0)];
    for i in 0..20 {
        for j in 0..20 {
            let (x, y) = (i as f32 * 50.0, j as f32 * 50.0);
            rects.push(Rect::new(x, y, x + 4.0, y + 4.0));
        }
    }
    // The two rects' sizes set the grid, not their places (they stay inside the lattice's box).
    let mut grid = rectcast::cpu::grid::Grid::default();
    grid.build(&rects);
    let mut segments = Vec::new();
    for row in 1..grid.ys.bounds.len() - 1 {
        let b = grid.ys.bounds[row];
        let x = 525.0;
        rects[0] = Rect::new(x, b, x + 2.0, b + 2.0);
        rects[1] = Rect::new(x, b - 1.0, x + 1.0, b + 1.0);
        let mut check = rectcast::cpu::grid::Grid::default();
        check.build(&rects);
        assert_eq!(check.ys.bounds, grid.ys.bounds, "the grid moved");
        let s = Segment::new(x - 2.0, b - 2.0, x + 2.0, b + 2.0);
        segments.push(s);
        let mut engine = cpu(1, BroadPhase::On);
        let first = engine.first_hit(&Batch::new(&[s], &rects)).unwrap()[0];
        assert_eq!(
            first.rect(),
            Some(0),
            "boundary y = {b}: segment {s:?}, rects 0 {:?} and 1 {:?}: {first:?}",
            rects[0],
            rects[1]
        );
        assert_eq!(first.result.t_enter, 0.5);
    }
    assert_grid_matches_brute_force("ties on row boundaries", &segments, &rects, None);
}

#[test]
fn a_segment_finding_more_pairs_than_a_binding_holds_splits_its_rects_and_keeps_the_bytes() {
    // 4 KiB bindings: 256 rects (or grid entries) fit one, but the found list holds only 204
    // hits. Each segment runs along a row of 240 point rects (one entry each; a last point
    // far above sizes the cells), so its chunk overflows down to one segment and is then split
    // by rects: those chunks leave the grid (which holds global rect indices) for the brute
    // force, and the hits found in pieces are merged back in order.
    let mut rects: Vec<Rect> = (0..240)
        .map(|i| {
            let x = i as f32 * 4.0;
            Rect::new(x, 0.0, x, 0.0)
        })
        .collect();
    rects.push(Rect::new(0.0, 100.0, 0.0, 100.0));
    let segments: Vec<Segment> = (0..4)
        .map(|i| Segment::new(-5.0 - i as f32, 0.0, 1005.0 + i as f32, 0.0))
        .collect();
    let mut plan = rectcast::cpu::grid::Grid::default();
    assert!(
        plan.plan(&rects) * 16 <= 4096,
        "the grid must fit a 4 KiB binding"
    );
    let limits = GpuLimits {
        max_binding_bytes: Some(4096),
        // A found list that starts small, so that it grows up to the binding's limit.
        hit_list_capacity: Some(16),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = common::gpu_engine("a rect split under a grid", limits) else {
        return;
    };
    gpu.set_broad_phase(BroadPhase::On);
    let set = RectSet::new(&rects).unwrap();
    let mut brute = cpu(1, BroadPhase::Off);
    let b = Batch::new(&segments, &rects);
    let expected = Expected {
        first: brute.first_hit(&b).unwrap(),
        hits: brute.hits(&b).unwrap(),
        counts: brute.counts(&b).unwrap(),
    };
    assert_eq!(
        expected.hits.len(),
        960,
        "every segment meets every point of its row"
    );
    for b in [Batch::new(&segments, &rects), Batch::over(&segments, &set)] {
        assert_engine_matches("4 KiB bindings", &mut gpu, &b, &expected, &segments, &rects);
    }
}

#[test]
fn a_far_end_found_from_the_near_ends_cell_is_the_cell_of_it_on_every_axis() {
    use rectcast::cpu::grid::{Axis, cell_at_or_above, cell_of};
    // Axes with one cell, repeated boundaries (-0 and +0 among them: equal as values), and
    // subnormal boundaries; values on the boundaries, one ulp either side, and far outside.
    let axes: Vec<Vec<f32>> = vec![
        vec![],
        vec![0.0],
        vec![-1.0, 0.0, 0.0, 0.0, 2.5, 2.5, 7.0],
        vec![-1e-44, -0.0, 0.0, 1e-45, 3e-45, 1.0],
        (0..50).map(|k| k as f32 * 0.25 - 6.0).collect(),
    ];
    let mut rng = SplitMix64::new(44);
    for bounds in axes {
        let cells = bounds.len() as u32 + 1;
        let axis = Axis {
            origin: bounds.first().copied().unwrap_or(0.0),
            scale: if bounds.len() > 1 { 4.0 } else { 0.0 },
            cells,
            bounds: bounds.clone(),
        };
        let mut values: Vec<f32> = vec![-1e30, 1e30, -0.0, 0.0, 1e-45, -1e-45];
        for &b in &bounds {
            values.extend([b, b.next_down(), b.next_up()]);
        }
        values.extend((0..200).map(|_| rng.range(-10.0, 10.0)));
        for &a in &values {
            for &b in values.iter().filter(|&&b| b >= a) {
                let (from_near, direct) = (
                    cell_at_or_above(&axis, b, cell_of(&axis, a)),
                    cell_of(&axis, b),
                );
                assert_eq!(
                    from_near,
                    direct,
                    "bounds {bounds:?}: {b:e} (from {a:e} in cell {}) put in cell {from_near}, its cell is {direct}",
                    cell_of(&axis, a)
                );
            }
        }
    }
}

/// The GPU's hit list through a grid (its runs ordered on the GPU or not: `order_on_gpu`),
/// checked against the brute force, and how many segments' runs the host had to sort.
fn gpu_grid_hits(
    what: &str,
    segments: &[Segment],
    rects: &[Rect],
    order_on_gpu: Option<bool>,
) -> Option<(Vec<Hit>, u64)> {
    let limits = GpuLimits {
        order_on_gpu,
        ..GpuLimits::default()
    };
    let mut gpu = common::gpu_engine(what, limits)?;
    gpu.set_broad_phase(BroadPhase::On);
    let b = Batch::new(segments, rects);
    let expected = cpu(2, BroadPhase::Off).hits(&b).unwrap();
    let hits = gpu.hits(&b).unwrap();
    assert!(gpu.used_broad_phase(), "{what}: the grid was not used");
    if let Some(i) = first_difference(&bytes_of_hits(&expected), &bytes_of_hits(&hits)) {
        panic!(
            "{what}: hit {i} differs ({} hits brute force, {} grid)\n  brute force {:?}\n  grid        {:?}",
            expected.len(),
            hits.len(),
            expected.get(i),
            hits.get(i),
        );
    }
    let sorted = gpu.last_gpu_call().expect("a GPU call").sorted_on_host;
    Some((hits, sorted))
}

#[test]
fn a_grid_walks_hit_list_comes_back_from_the_gpu_in_rect_order() {
    // Bullets among large hitboxes: many bullets hit several, listed by the cells in any order.
    let (segments, rects) = scene::bullet_hell(31, 4096, 3000);
    let Some((hits, sorted)) = gpu_grid_hits("grid hits in order", &segments, &rects, Some(true))
    else {
        return;
    };
    let several = hits
        .windows(2)
        .filter(|w| w[0].segment == w[1].segment)
        .count();
    assert!(
        several > 100,
        "only {several} hits follow one of their segment's"
    );
    assert_eq!(sorted, 0, "the host sorted {sorted} segments' runs");
    // Not ordered on the GPU: the host sorts the runs the cells listed out of order.
    let (_, sorted) = gpu_grid_hits("grid hits", &segments, &rects, Some(false)).unwrap();
    assert!(sorted > 100, "the host sorted only {sorted} runs");
}

/// scripts/test.sh: native only (where runs are sorted by default, which no emulated
/// arithmetic changes).
#[test]
fn a_software_gpu_leaves_a_grid_walks_runs_to_the_host() {
    let (segments, rects) = scene::bullet_hell(34, 2048, 3000);
    let Some((_, sorted)) = gpu_grid_hits("runs by default", &segments, &rects, None) else {
        return;
    };
    let software = common::gpu_engine("runs by default", GpuLimits::default())
        .and_then(|e| e.gpu_context().map(|c| c.is_software()))
        .expect("a GPU engine");
    assert_eq!(
        sorted > 0,
        software,
        "{sorted} runs sorted on the host of a {} GPU",
        if software { "software" } else { "hardware" }
    );
}

#[test]
fn a_segment_with_more_grid_hits_than_the_gpu_orders_is_ordered_by_the_host() {
    // 300 small rects along a diagonal, their indices shuffled among 20,000 rects far away, and
    // a segment along the diagonal through all of them: a run past ORDER_RUN_LIMIT.
    let (_, mut rects) = scene::bullet_hell(32, 0, 20_000);
    let mut rng = SplitMix64::new(32);
    for k in 0..300 {
        let at = 5000.0 + k as f32 * 10.0;
        let slot = rng.below(rects.len() as u64) as usize;
        let far = rects[slot];
        rects[slot] = Rect::new(at, at, at + 4.0, at + 4.0);
        rects.push(far);
    }
    let mut segments = vec![Segment::new(4990.0, 4990.0, 8010.0, 8010.0)];
    segments.extend(scene::bullet_hell(33, 500, 0).0);
    let Some((hits, sorted)) = gpu_grid_hits("a long run", &segments, &rects, Some(true)) else {
        return;
    };
    let run = hits.iter().filter(|h| h.segment == 0).count();
    assert!(
        run > rectcast::cpu::rect_queries::ORDER_RUN_LIMIT as usize,
        "the diagonal hits {run} rects"
    );
    assert!(sorted >= 1, "the host sorted no run");
}
