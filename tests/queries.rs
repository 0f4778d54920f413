//! The queries (first hit, hit list, counts, clip, filters) against what the dense `pairs` result
//! implies, on hand cases, exact-tie grids, adversarial pairs and seeded random scenes, on both
//! backends; and the GPU host's overflow, chunking and determinism guarantees.

mod common;

use common::adversarial::{self, Category};
use common::scenes::Scene;
use common::{cases, cpu_engine, gpu_engine};
use rectcast::scene::{self, SplitMix64};
use rectcast::{
    Batch, ClipTo, Counts, Engine, Filter, FirstHit, GpuLimits, Hit, PairResult, Rect, Segment,
};

/// Rects on an integer grid, several of them duplicated or sharing edges, and segments between
/// grid points: entries through corners and shared edges at exactly equal t, the first-hit
/// tie rule's cases, and decisions the GPU filter cannot certify.
fn tie_grid() -> (Vec<Segment>, Vec<Rect>) {
    let mut rects = Vec::new();
    for i in 0..6 {
        for j in 0..6 {
            let (x, y) = (i as f32 * 2.0, j as f32 * 2.0);
            rects.push(Rect::new(x, y, x + 2.0, y + 2.0));
            if (i + j) % 3 == 0 {
                rects.push(Rect::new(x, y, x + 2.0, y + 2.0));
            }
            if (i * j) % 4 == 1 {
                rects.push(Rect::new(x, y, x + 1.0, y + 3.0));
            }
        }
    }
    let mut rng = SplitMix64::new(11);
    let segments = (0..300)
        .map(|_| {
            let mut p = || rng.below(15) as f32 - 1.0;
            Segment::new(p(), p(), p(), p())
        })
        .collect();
    (segments, rects)
}

fn scenes() -> Vec<Scene> {
    let (corner_segments, corner_rects) = adversarial::pairs(Category::Corner, 5, 150);
    let (tiny_segments, tiny_rects) = adversarial::pairs(Category::Mixed, 6, 100);
    vec![
        Scene::new("hand cases", (cases::hand_segments(), cases::hand_rects())),
        Scene::new("tie grid", tie_grid()),
        Scene::new("tie grid", tie_grid()).with_filters(3),
        Scene::new("adversarial corners", (corner_segments, corner_rects)),
        Scene::new("adversarial mixed", (tiny_segments, tiny_rects)),
        // Sizes around the workgroup (64) and rect-tile boundaries.
        Scene::new("bullet hell", scene::bullet_hell(1, 700, 130)),
        Scene::new("bullet hell", scene::bullet_hell(2, 65, 63)).with_filters(4),
        Scene::new("random", scene::random_batch(3, 517, 65, 1000.0)),
        Scene::new("random", scene::random_batch(4, 129, 200, 1000.0)).with_filters(5),
    ]
}

/// Every pair by the scalar reference, which culls nothing: what the queries must imply.
fn dense(scene: &Scene) -> Vec<PairResult> {
    let mut results = vec![PairResult::MISS; scene.segments.len() * scene.rects.len()];
    rectcast::cpu::rect_pairs::pairs_dense(&scene.segments, &scene.rects, &mut results);
    results
}

/// The tested pairs of segment `s` that hit, as (rect, result), from the dense results.
fn tested_hits<'a>(
    scene: &'a Scene,
    dense: &'a [PairResult],
    s: usize,
) -> impl Iterator<Item = (usize, PairResult)> + 'a {
    let m = scene.rects.len();
    let batch = scene.batch();
    (0..m)
        .filter(move |&r| batch.is_tested(s, r) && dense[s * m + r].hit())
        .map(move |r| (r, dense[s * m + r]))
}

/// Argmin of t_enter over the tested hits, ties to the lowest rect index.
fn expected_first_hits(scene: &Scene, dense: &[PairResult]) -> Vec<FirstHit> {
    (0..scene.segments.len())
        .map(|s| {
            let mut best = FirstHit::NONE;
            for (r, result) in tested_hits(scene, dense, s) {
                if best.rect().is_none() || result.t_enter < best.result.t_enter {
                    best = FirstHit {
                        rect: r as u32,
                        result,
                    };
                }
            }
            best
        })
        .collect()
}

fn expected_hits(scene: &Scene, dense: &[PairResult]) -> Vec<Hit> {
    (0..scene.segments.len())
        .flat_map(|s| {
            tested_hits(scene, dense, s).map(move |(r, result)| Hit {
                segment: s as u32,
                rect: r as u32,
                result,
            })
        })
        .collect()
}

fn expected_counts(scene: &Scene, dense: &[PairResult]) -> Counts {
    let mut counts = Counts {
        per_segment: vec![0; scene.segments.len()],
        per_target: vec![0; scene.rects.len()],
    };
    for h in expected_hits(scene, dense) {
        counts.per_segment[h.segment as usize] += 1;
        counts.per_target[h.rect as usize] += 1;
    }
    counts
}

/// Element by element; on a difference, panics with the first index and its segment.
fn assert_first_hits(what: &str, scene: &Scene, expected: &[FirstHit], actual: &[FirstHit]) {
    assert_eq!(expected.len(), actual.len(), "{what}: lengths differ");
    if let Some(i) = (0..expected.len()).find(|&i| expected[i] != actual[i]) {
        let rect = |f: &FirstHit| f.rect().map(|r| scene.rects[r as usize]);
        panic!(
            "{what}: first difference at segment {i} {:?}\n  expected {:?} on {:?}\n  actual   {:?} on {:?}",
            scene.segments[i],
            expected[i],
            rect(&expected[i]),
            actual[i],
            rect(&actual[i]),
        );
    }
}

fn assert_first_hit_rects(what: &str, scene: &Scene, expected: &[FirstHit], actual: &[u32]) {
    assert_eq!(expected.len(), actual.len(), "{what}: lengths differ");
    if let Some(i) = (0..expected.len()).find(|&i| expected[i].rect != actual[i]) {
        panic!(
            "{what}: first difference at segment {i} {:?}: expected rect {} ({:?}), got {}",
            scene.segments[i],
            expected[i].rect,
            expected[i].rect().map(|r| scene.rects[r as usize]),
            actual[i],
        );
    }
}

fn assert_hits(what: &str, scene: &Scene, expected: &[Hit], actual: &[Hit]) {
    if let Some(i) =
        (0..expected.len().max(actual.len())).find(|&i| expected.get(i) != actual.get(i))
    {
        let inputs = |h: Option<&Hit>| {
            h.map(|h| {
                (
                    scene.segments[h.segment as usize],
                    scene.rects[h.rect as usize],
                )
            })
        };
        panic!(
            "{what}: first difference at hit {i} (expected {} hits, got {})\n  expected {:?} {:?}\n  actual   {:?} {:?}",
            expected.len(),
            actual.len(),
            expected.get(i),
            inputs(expected.get(i)),
            actual.get(i),
            inputs(actual.get(i)),
        );
    }
}

fn assert_counts(what: &str, expected: &Counts, actual: &Counts) {
    let first = |e: &[u64], a: &[u64]| (0..e.len().max(a.len())).find(|&i| e.get(i) != a.get(i));
    let per_segment = |c: &Counts| c.per_segment.iter().map(|&n| n as u64).collect::<Vec<_>>();
    if let Some(i) = first(&per_segment(expected), &per_segment(actual)) {
        panic!(
            "{what}: per-segment counts differ first at segment {i}: expected {:?}, got {:?}",
            expected.per_segment.get(i),
            actual.per_segment.get(i)
        );
    }
    if let Some(i) = first(&expected.per_target, &actual.per_target) {
        panic!(
            "{what}: per-rect counts differ first at rect {i}: expected {:?}, got {:?}",
            expected.per_target.get(i),
            actual.per_target.get(i)
        );
    }
}

/// Every query of every scene on `engine` against the dense results.
fn check_engine(engine: &mut Engine, backend: &str) {
    for scene in scenes() {
        let what = format!("{backend}, {}", scene.name);
        let dense = dense(&scene);
        let batch = scene.batch();
        let first = engine.first_hit(&batch).expect("first hit");
        let expected = expected_first_hits(&scene, &dense);
        assert_first_hits(&format!("{what}: first hit"), &scene, &expected, &first);
        assert_first_hit_rects(
            &format!("{what}: first hit rects"),
            &scene,
            &expected,
            &engine.first_hit_rects(&batch).expect("first hit rects"),
        );
        let hits = engine.hits(&batch).expect("hits");
        assert_hits(
            &format!("{what}: hits"),
            &scene,
            &expected_hits(&scene, &dense),
            &hits,
        );
        let counts = engine.counts(&batch).expect("counts");
        assert_counts(
            &format!("{what}: counts"),
            &expected_counts(&scene, &dense),
            &counts,
        );
    }
}

#[test]
fn queries_equal_what_the_dense_pairs_imply_on_the_cpu() {
    check_engine(&mut cpu_engine(), "cpu");
}

#[test]
fn queries_equal_what_the_dense_pairs_imply_on_the_gpu() {
    let Some(mut engine) = gpu_engine("queries on the gpu", GpuLimits::default()) else {
        return;
    };
    check_engine(&mut engine, "gpu");
    eprintln!(
        "pairs or orders the host decided: {}",
        engine.uncertain_pairs()
    );
}

#[test]
fn first_hit_ties_go_to_the_lowest_rect_index() {
    // Three copies of one rect, and one entered at the same t through a shared edge.
    let rects = [
        Rect::new(5.0, 0.0, 6.0, 1.0),
        Rect::new(2.0, 0.0, 3.0, 1.0),
        Rect::new(2.0, 0.0, 3.0, 1.0),
        Rect::new(2.0, -1.0, 4.0, 0.0),
        Rect::new(2.0, 0.0, 3.0, 1.0),
        // Entered at t = 0.2 by the diagonal, through min_y and through min_x.
        Rect::new(1.0, 2.0, 5.0, 3.0),
        Rect::new(2.0, 1.0, 3.0, 5.0),
    ];
    let segments = [
        Segment::new(0.0, 0.0, 10.0, 0.0),
        Segment::new(0.0, 0.5, 10.0, 0.5),
        Segment::new(0.0, 0.0, 10.0, 10.0),
        Segment::new(10.0, 10.0, 0.0, 0.0),
    ];
    let mut engines = vec![("cpu", cpu_engine())];
    engines.extend(gpu_engine("first hit ties", GpuLimits::default()).map(|e| ("gpu", e)));
    for (name, mut engine) in engines {
        let first = engine
            .first_hit(&Batch::new(&segments, &rects))
            .expect("first hit");
        // Along y = 0 rects 1, 2, 3 and 4 are all entered at x = 2 (t = 0.2): rect 1 wins.
        assert_eq!(first[0].rect(), Some(1), "{name}: {:?}", first[0]);
        assert_eq!(first[0].result.t_enter, 0.2, "{name}");
        assert_eq!(first[1].rect(), Some(1), "{name}: {:?}", first[1]);
        // A tie across axes (an exact decision the GPU leaves to the host): the lower index.
        assert_eq!(first[2].rect(), Some(5), "{name}: {:?}", first[2]);
        assert_eq!(first[2].result.t_enter, 0.2, "{name}");
        // Backwards, rect 5 is entered through max_y at t = 0.7 and rect 6 through max_x at 0.7.
        assert_eq!(first[3].rect(), Some(5), "{name}: {:?}", first[3]);
    }
}

#[test]
fn filters_skip_exactly_the_pairs_they_exclude() {
    let segments = [Segment::new(0.0, 0.5, 10.0, 0.5)];
    let rects = [
        Rect::new(1.0, 0.0, 2.0, 1.0),
        Rect::new(3.0, 0.0, 4.0, 1.0),
        Rect::new(5.0, 0.0, 6.0, 1.0),
    ];
    // The bullet (team 1) skips team 1's hitbox; the third hitbox ignores bullets of team 1.
    let segment_filters = [Filter::new(1, !1)];
    let rect_filters = [
        Filter::new(1, u32::MAX),
        Filter::new(2, u32::MAX),
        Filter::new(4, 2),
    ];
    let batch = Batch::new(&segments, &rects)
        .with_segment_filters(&segment_filters)
        .with_rect_filters(&rect_filters);
    let mut engines = vec![("cpu", cpu_engine())];
    engines.extend(gpu_engine("filters", GpuLimits::default()).map(|e| ("gpu", e)));
    for (name, mut engine) in engines {
        assert_eq!(
            engine.first_hit(&batch).unwrap()[0].rect(),
            Some(1),
            "{name}"
        );
        let hits: Vec<u32> = engine
            .hits(&batch)
            .unwrap()
            .iter()
            .map(|h| h.rect)
            .collect();
        assert_eq!(hits, [1], "{name}");
        assert_eq!(
            engine.counts(&batch).unwrap().per_target,
            [0, 1, 0],
            "{name}"
        );
        let unfiltered = Batch::new(&segments, &rects);
        assert_eq!(
            engine.counts(&unfiltered).unwrap().per_target,
            [1, 1, 1],
            "{name}"
        );
    }
}

#[test]
fn a_filter_array_of_the_wrong_length_is_an_error() {
    let segments = [Segment::new(0.0, 0.0, 1.0, 1.0)];
    let rects = [Rect::new(0.0, 0.0, 1.0, 1.0)];
    let filters = [Filter::ALL, Filter::ALL];
    let batch = Batch::new(&segments, &rects).with_rect_filters(&filters);
    let error = cpu_engine().first_hit(&batch).unwrap_err();
    assert_eq!(error.to_string(), "2 rect filters for 1 rects");
}

fn check_clip(engine: &mut Engine, backend: &str) {
    for scene in scenes() {
        let viewport = scene.rects[scene.rects.len() / 2];
        let n = scene.segments.len();
        let own: Vec<Rect> = (0..n).map(|i| scene.rects[i % scene.rects.len()]).collect();
        for (to, rect_of) in [
            (
                ClipTo::Rect(viewport),
                Box::new(|_| viewport) as Box<dyn Fn(usize) -> Rect>,
            ),
            (ClipTo::PerSegment(&own), Box::new(|i| own[i])),
        ] {
            let clipped = engine.clip(&scene.segments, to).expect("clip");
            for (i, c) in clipped.iter().enumerate() {
                let (s, r) = (scene.segments[i], rect_of(i));
                let expected = rectcast::segment_rect(&s, &r);
                let what = format!(
                    "{backend}, {}: clip of segment {i} {s:?} to {r:?}",
                    scene.name
                );
                assert_eq!(c.result, expected, "{what}");
                assert_eq!(c.segment.is_some(), expected.hit(), "{what}");
                if let Some(part) = c.segment {
                    // The clipped part lies in the closed rect; kept ends are the segment's.
                    assert!(
                        r.contains(part.x0, part.y0) && r.contains(part.x1, part.y1),
                        "{what}: {part:?}"
                    );
                    if expected.start_inside() {
                        assert_eq!((part.x0, part.y0), (s.x0, s.y0), "{what}");
                    }
                    if expected.end_inside() {
                        assert_eq!((part.x1, part.y1), (s.x1, s.y1), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn clipping_matches_the_pair_results_and_stays_inside_the_rect_on_the_cpu() {
    check_clip(&mut cpu_engine(), "cpu");
}

#[test]
fn clipping_matches_the_pair_results_and_stays_inside_the_rect_on_the_gpu() {
    let Some(mut engine) = gpu_engine("clip on the gpu", GpuLimits::default()) else {
        return;
    };
    check_clip(&mut engine, "gpu");
}

#[test]
fn clipping_to_a_viewport_places_ends_on_the_crossed_sides() {
    let viewport = Rect::new(0.0, 0.0, 10.0, 10.0);
    let segments = [
        Segment::new(-5.0, 5.0, 15.0, 5.0),
        Segment::new(5.0, 5.0, 5.0, 20.0),
        Segment::new(-1.0, -1.0, 11.0, 11.0),
        Segment::new(20.0, 20.0, 30.0, 30.0),
    ];
    let clipped = cpu_engine()
        .clip(&segments, ClipTo::Rect(viewport))
        .expect("clip");
    let parts: Vec<Option<Segment>> = clipped.iter().map(|c| c.segment).collect();
    assert_eq!(
        parts,
        [
            Some(Segment::new(0.0, 5.0, 10.0, 5.0)),
            Some(Segment::new(5.0, 5.0, 5.0, 10.0)),
            Some(Segment::new(0.0, 0.0, 10.0, 10.0)),
            None,
        ]
    );
}

#[test]
fn per_segment_clipping_needs_one_rect_per_segment() {
    let segments = [Segment::new(0.0, 0.0, 1.0, 1.0); 3];
    let rects = [Rect::new(0.0, 0.0, 1.0, 1.0); 2];
    let error = cpu_engine()
        .clip(&segments, ClipTo::PerSegment(&rects))
        .unwrap_err();
    assert!(
        error.to_string().contains("needs 3 rects, got 2"),
        "{error}"
    );
}

/// Big overlapping rects: every segment hits most of them.
fn crowded() -> Scene {
    let mut rng = SplitMix64::new(21);
    let segments = (0..300)
        .map(|_| {
            Segment::new(
                rng.range(0.0, 100.0),
                rng.range(0.0, 100.0),
                rng.range(0.0, 100.0),
                rng.range(0.0, 100.0),
            )
        })
        .collect();
    let rects = (0..40)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 40.0), rng.range(0.0, 40.0));
            Rect::new(x, y, x + 60.0, y + 60.0)
        })
        .collect();
    Scene::new("crowded", (segments, rects))
}

#[test]
fn a_hit_list_of_capacity_one_still_returns_every_hit() {
    let limits = GpuLimits {
        hit_list_capacity: Some(1),
        ..GpuLimits::default()
    };
    let Some(mut engine) = gpu_engine("hit list of capacity 1", limits) else {
        return;
    };
    let scene = crowded();
    let expected = expected_hits(&scene, &dense(&scene));
    assert!(
        expected.len() > 5000,
        "the scene has {} hits",
        expected.len()
    );
    let hits = engine.hits(&scene.batch()).expect("hits");
    assert_hits("capacity 1", &scene, &expected, &hits);
}

#[test]
fn a_hit_list_at_the_binding_limit_splits_the_batch() {
    // 4 KiB bindings hold 204 hits; a single segment can hit 40 rects; there are thousands.
    let limits = GpuLimits {
        max_binding_bytes: Some(4096),
        hit_list_capacity: Some(1),
        ..GpuLimits::default()
    };
    let Some(mut engine) = gpu_engine("hit list at the binding limit", limits) else {
        return;
    };
    let scene = crowded();
    let expected = expected_hits(&scene, &dense(&scene));
    let hits = engine.hits(&scene.batch()).expect("hits");
    assert_hits("4 KiB bindings", &scene, &expected, &hits);
}

#[test]
fn a_hit_list_past_its_limit_is_split_and_keeps_the_gpus_memory_within_it() {
    let open = |limit| {
        let limits = GpuLimits {
            hit_list_limit: limit,
            ..GpuLimits::default()
        };
        gpu_engine("hit list past its limit", limits)
    };
    let (Some(mut unlimited), Some(mut limited)) = (open(None), open(Some(500))) else {
        return;
    };
    let scene = crowded();
    let expected = expected_hits(&scene, &dense(&scene));
    let whole = unlimited.hits(&scene.batch()).expect("hits");
    assert_hits("no limit", &scene, &expected, &whole);
    // Twice: the first call learns the hits a segment (its first chunk overflows and is
    // split), the second sizes its chunks by them and runs none twice.
    let mut chunks = Vec::new();
    for call in ["learning", "sized"] {
        let hits = limited.hits(&scene.batch()).expect("hits");
        assert_hits(&format!("500 entries, {call}"), &scene, &expected, &hits);
        let ran = limited.last_gpu_call().expect("a GPU call").chunks;
        let least = expected.len().div_ceil(500);
        assert!(
            ran >= least,
            "{call}: {ran} chunks for {} hits",
            expected.len()
        );
        chunks.push(ran);
    }
    assert!(chunks[1] < chunks[0], "chunks of the two calls: {chunks:?}");
    let (small, large) = (limited.gpu_buffer_bytes(), unlimited.gpu_buffer_bytes());
    assert!(
        small + 500 * 24 < large,
        "the GPU holds {small} bytes with a limit of 500 entries, {large} without"
    );
}

/// Every query's output as bytes.
fn all_query_bytes(engine: &mut Engine, scene: &Scene) -> Vec<Vec<u8>> {
    let batch = scene.batch();
    let first = engine.first_hit(&batch).expect("first hit");
    let first_rects = engine.first_hit_rects(&batch).expect("first hit rects");
    let hits = engine.hits(&batch).expect("hits");
    let counts = engine.counts(&batch).expect("counts");
    let clipped = engine
        .clip(&scene.segments, ClipTo::Rect(scene.rects[0]))
        .expect("clip");
    let clip_results: Vec<PairResult> = clipped.iter().map(|c| c.result).collect();
    vec![
        bytemuck::cast_slice(&first).to_vec(),
        bytemuck::cast_slice(&first_rects).to_vec(),
        bytemuck::cast_slice(&hits).to_vec(),
        bytemuck::cast_slice(&counts.per_segment).to_vec(),
        bytemuck::cast_slice(&counts.per_target).to_vec(),
        bytemuck::cast_slice(&clip_results).to_vec(),
    ]
}

#[test]
fn small_forced_limits_give_the_same_bytes_as_large_ones() {
    let Some(mut large) = gpu_engine("chunking, large", GpuLimits::default()) else {
        return;
    };
    // 1 KiB bindings: 64 segments, 64 rects and 51 found entries per dispatch; one workgroup
    // per dimension.
    let small_limits = GpuLimits {
        max_binding_bytes: Some(1024),
        max_workgroups_per_dimension: Some(1),
        hit_list_capacity: Some(1),
        ..GpuLimits::default()
    };
    let mut small = gpu_engine("chunking, small", small_limits).expect("opened once already");
    for scene in [
        crowded(),
        Scene::new("tie grid", tie_grid()).with_filters(9),
        // 300 rects in tiles of 64: each segment's first hit merged across five tiles.
        Scene::new("rect tiles", scene::random_batch(9, 400, 300, 100.0)),
    ] {
        let expected = all_query_bytes(&mut large, &scene);
        let actual = all_query_bytes(&mut small, &scene);
        for (k, (e, a)) in expected.iter().zip(&actual).enumerate() {
            assert!(
                e == a,
                "{}: query {k} differs between chunk sizes",
                scene.name
            );
        }
        // And the CPU gives the same bytes for every query, t included.
        let cpu = all_query_bytes(&mut cpu_engine(), &scene);
        for (k, (c, a)) in cpu.iter().zip(&actual).enumerate() {
            assert!(c == a, "{}: query {k} differs, cpu vs gpu", scene.name);
        }
    }
}

#[test]
fn two_runs_give_identical_bytes() {
    let scene = Scene::new("bullet hell", scene::bullet_hell(8, 3000, 300)).with_filters(2);
    let mut engines = vec![("cpu", cpu_engine())];
    engines.extend(gpu_engine("determinism", GpuLimits::default()).map(|e| ("gpu", e)));
    for (name, mut engine) in engines {
        let first = all_query_bytes(&mut engine, &scene);
        let second = all_query_bytes(&mut engine, &scene);
        assert!(first == second, "{name}: two runs differ");
    }
}

#[test]
fn a_batch_of_many_chunks_keeps_several_in_flight_and_gives_the_cpus_results() {
    // 64 KiB bindings: 4,096 segments a chunk, so ten or more chunks per query, and a found
    // list of 3,276 entries: the crowded scene's hit list overflows it, grows, splits, and
    // needs more entries back than the first copy brings (chunks after it already overwrote
    // the list, so the chunk runs again).
    let limits = GpuLimits {
        max_binding_bytes: Some(64 << 10),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("chunks in flight", limits) else {
        return;
    };
    let mut cpu = cpu_engine();
    let mut rng = SplitMix64::new(31);
    let crowded = Scene::new(
        "crowded, many chunks",
        (
            (0..20_000)
                .map(|_| {
                    let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
                    Segment::new(x, y, x + rng.range(-5.0, 5.0), y + rng.range(-5.0, 5.0))
                })
                .collect(),
            crowded().rects,
        ),
    );
    for scene in [
        Scene::new(
            "bullet hell, many chunks",
            scene::bullet_hell(12, 45_000, 600),
        )
        .with_filters(3),
        crowded,
    ] {
        let batch = scene.batch();
        let what = |query: &str| format!("{}: {query}", scene.name);
        let started = std::time::Instant::now();
        let first = gpu.first_hit(&batch).expect("first hit");
        let wall = started.elapsed();
        let overlap = gpu.last_gpu_call().expect("on the GPU");
        // The host's account of the call: each part measured, none counted twice.
        let parts = overlap.submitting + overlap.waiting + overlap.merging;
        assert!(
            parts <= wall && !overlap.submitting.is_zero() && !overlap.merging.is_zero(),
            "{}: {overlap:?} in a call of {wall:?}",
            scene.name
        );
        assert!(overlap.chunks >= 5, "{}: {overlap:?}", scene.name);
        assert_eq!(
            overlap.submitted_before_first_read,
            rectcast::gpu::CHUNKS_IN_FLIGHT,
            "{}: the first chunk was read back before the ring was full",
            scene.name
        );
        assert_first_hits(
            &what("first hit"),
            &scene,
            &cpu.first_hit(&batch).unwrap(),
            &first,
        );
        let counts = gpu.counts(&batch).expect("counts");
        assert!(gpu.last_gpu_call().unwrap().submitted_before_first_read > 1);
        assert_counts(&what("counts"), &cpu.counts(&batch).unwrap(), &counts);
        let hits = gpu.hits(&batch).expect("hits");
        assert!(gpu.last_gpu_call().unwrap().submitted_before_first_read > 1);
        let expected = cpu.hits(&batch).unwrap();
        assert!(!expected.is_empty(), "{}", scene.name);
        assert_hits(&what("hits"), &scene, &expected, &hits);
    }
}

#[test]
fn a_brute_force_query_over_more_rects_than_a_software_gpus_loop_budget_misses_none() {
    // lavapipe leaves a shader invocation's loops after 65,535 iterations in all, silently: a
    // segment scanning 100,000 rects in one dispatch never reached the last ones. The host
    // splits the rects of a software GPU's brute-force queries into dispatches that fit.
    let Some(mut gpu) = gpu_engine("software_loop_budget", rectcast::GpuLimits::default()) else {
        return;
    };
    gpu.set_broad_phase(rectcast::BroadPhase::Off);
    let n = 100_000;
    let mut rects: Vec<Rect> = (0..n)
        .map(|i| Rect::new(1000.0 + i as f32, 1000.0, 1000.5 + i as f32, 1001.0))
        .collect();
    // Hit only at the very end, and once in the middle for every other segment.
    rects[n - 1] = Rect::new(0.0, 0.0, 1.0, 1.0);
    rects[n / 2] = Rect::new(0.5, 0.0, 0.75, 0.25);
    let segments: Vec<Segment> = (0..128)
        .map(|i| Segment::new(-1.0, (i % 2) as f32 * 0.5 + 0.125, 2.0, 0.125))
        .collect();
    let batch = rectcast::Batch::new(&segments, &rects);
    let mut cpu = cpu_engine();
    let want = cpu.first_hit(&batch).expect("cpu");
    assert!(
        want.iter().all(|f| f.rect().is_some()),
        "every segment hits"
    );
    let got = gpu.first_hit(&batch).expect("gpu");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "segment {i} {:?}: cpu {:?}, gpu {:?}",
            segments[i], want[i], got[i]
        );
    }
    assert_eq!(
        gpu.counts(&batch).expect("gpu"),
        cpu.counts(&batch).expect("cpu")
    );
    assert_eq!(
        gpu.hits(&batch).expect("gpu"),
        cpu.hits(&batch).expect("cpu")
    );
}

/// scripts/test.sh: native only (how a call is split, which no emulated arithmetic changes).
#[test]
fn a_large_call_split_into_chunks_for_overlap_gives_the_same_bytes() {
    // Chunks of at most 700 segments (a hardware GPU's default is 2^18): every query of 3,000
    // segments runs as 5 even chunks, several in flight, and gives the unsplit call's bytes.
    let Some(mut whole) = gpu_engine("overlap, whole", GpuLimits::default()) else {
        return;
    };
    let limits = GpuLimits {
        overlap_segments: Some(700),
        ..GpuLimits::default()
    };
    let mut split = gpu_engine("overlap, split", limits).expect("opened once already");
    for broad_phase in [rectcast::BroadPhase::Off, rectcast::BroadPhase::On] {
        whole.set_broad_phase(broad_phase);
        split.set_broad_phase(broad_phase);
        let scene = Scene::new("bullet hell", scene::bullet_hell(35, 3000, 400)).with_filters(3);
        let expected = all_query_bytes(&mut whole, &scene);
        let actual = all_query_bytes(&mut split, &scene);
        for (k, (e, a)) in expected.iter().zip(&actual).enumerate() {
            assert!(e == a, "{broad_phase:?}: query {k} differs when split");
        }
        split.first_hit(&scene.batch()).expect("first hit");
        let call = split.last_gpu_call().expect("a GPU call");
        let least = if broad_phase == rectcast::BroadPhase::On {
            5
        } else {
            10
        };
        assert!(
            call.chunks >= least && call.submitted_before_first_read > 1,
            "{broad_phase:?}: {call:?}"
        );
    }
}
