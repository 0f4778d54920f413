//! The fast CPU path (`Engine` on `Backend::Cpu`) against the scalar reference
//! (`rectcast::cpu::rect_queries`, `cpu::rect_pairs`), bit for bit, for every query, at every SIMD level
//! this CPU runs and at 1 and 3 threads, over seeded random, bullet-hell, adversarial and
//! exact-tie scenes, with and without filters.

mod common;

use bytemuck::Pod;
use common::adversarial::{self, Category};
use common::cases;
use common::scenes::Scene;
use rectcast::cpu::rect_queries::{QueryOutputs, clip, query, segment_rects};
use rectcast::scene::{self, SplitMix64};
use rectcast::{
    Backend, Batch, ClipTo, Counts, CpuOptions, Engine, FirstHit, Hit, PairIndex, PairResult, Rect,
    Segment, Simd,
};

/// Segments and rects on a small integer grid: shared edges, corners and equal entry times.
fn tie_grid(seed: u64) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed);
    let mut p = || rng.below(13) as f32 - 1.0;
    let segments = (0..250).map(|_| Segment::new(p(), p(), p(), p())).collect();
    let rects = (0..37)
        .map(|_| {
            let (a, b, c, d) = (p(), p(), p(), p());
            Rect::new(a.min(b), c.min(d), a.max(b), c.max(d))
        })
        .collect();
    (segments, rects)
}

fn scenes() -> Vec<Scene> {
    let mut scenes = vec![
        Scene::new("hand cases", (cases::hand_segments(), cases::hand_rects())),
        Scene::new("tie grid", tie_grid(1)),
        Scene::new("tie grid", tie_grid(2)).with_filters(3),
        // Rect counts off the 16-lane blocks and the 64-block spans.
        Scene::new("bullet hell", scene::bullet_hell(5, 1500, 1031)),
        Scene::new("bullet hell", scene::bullet_hell(6, 333, 17)).with_filters(7),
        Scene::new("random", scene::random_batch(8, 700, 130, 1000.0)),
        Scene::new("random", scene::random_batch(9, 129, 1, 1000.0)).with_filters(10),
        Scene::new(
            "no rects",
            (scene::random_batch(11, 40, 0, 10.0).0, Vec::new()),
        ),
        Scene::new(
            "no segments",
            (Vec::new(), scene::random_batch(12, 0, 40, 10.0).1),
        ),
    ];
    // Every adversarial category as an all-pairs batch: signed zeros, subnormals, the 2^62
    // limit, zero-width rects and points, where the cull's comparisons must equal the
    // reference's rule exactly.
    for (i, category) in Category::ALL.into_iter().enumerate() {
        scenes.push(Scene::new(
            &format!("adversarial {}", category.name()),
            adversarial::pairs(category, 100 + i as u64, 120),
        ));
    }
    scenes
}

/// Every engine to compare: each SIMD level here, at 1 and 3 threads.
fn engines() -> Vec<Engine> {
    Simd::available()
        .into_iter()
        .flat_map(|simd| {
            [1, 3].map(|threads| {
                Engine::with_cpu_options(
                    Backend::Cpu,
                    CpuOptions {
                        threads,
                        simd: Some(simd),
                    },
                )
                .expect("a supported level opens")
            })
        })
        .collect()
}

/// Bit for bit (so -0.0 and +0.0 differ); on a difference, panics at the first index.
fn assert_bits<T: Pod + std::fmt::Debug>(
    what: &str,
    expected: &[T],
    actual: &[T],
    inputs: impl Fn(usize) -> String,
) {
    let bytes = |v: &T| bytemuck::bytes_of(v).to_vec();
    if let Some(i) = (0..expected.len().max(actual.len()))
        .find(|&i| expected.get(i).map(bytes) != actual.get(i).map(bytes))
    {
        panic!(
            "{what}: first difference at index {i} ({} expected, {} actual)\n  inputs   {}\n  expected {:?}\n  actual   {:?}",
            expected.len(),
            actual.len(),
            inputs(i),
            expected.get(i),
            actual.get(i)
        );
    }
}

fn reference(query: u32, batch: &Batch) -> (Vec<FirstHit>, Counts, Vec<Hit>) {
    let mut first_hits = vec![FirstHit::NONE; batch.segments.len()];
    let mut counts = Counts {
        per_segment: vec![0; batch.segments.len()],
        per_target: vec![0; batch.rects.len()],
    };
    let mut found = Vec::new();
    segment_rects(
        query,
        batch,
        &mut QueryOutputs {
            first_hits: &mut first_hits,
            segment_hits: &mut counts.per_segment,
            rect_hits: &mut counts.per_target,
            found: &mut found,
        },
    );
    (first_hits, counts, found)
}

#[test]
fn first_hit_equals_the_scalar_reference_bit_for_bit() {
    for scene in scenes() {
        let batch = scene.batch();
        let (expected, _, _) = reference(query::QUERY_FIRST_HIT, &batch);
        for mut engine in engines() {
            let actual = engine.first_hit(&batch).expect("first hit");
            assert_bits(
                &format!("{} on {}", scene.name, engine.chosen()),
                &expected,
                &actual,
                |i| format!("{:?}", scene.segments[i]),
            );
        }
    }
}

#[test]
fn hits_equal_the_scalar_reference_in_segment_rect_order() {
    for scene in scenes() {
        let batch = scene.batch();
        let (_, _, expected) = reference(query::QUERY_HITS, &batch);
        for mut engine in engines() {
            let actual = engine.hits(&batch).expect("hits");
            assert_bits(
                &format!("{} on {}", scene.name, engine.chosen()),
                &expected,
                &actual,
                |i| format!("hit {i}"),
            );
        }
    }
}

#[test]
fn the_hit_lists_placing_steps_put_each_segments_hits_at_its_offset_in_rect_order() {
    use rectcast::cpu::rect_queries::{hit_offsets, order_hits};
    // The mirror of what the GPU does to a hit list: counts per segment become offsets, and
    // each segment's run, listed in any order, is sorted by rect.
    for scene in scenes() {
        let batch = scene.batch();
        // The mirror's segment_rects counts each segment's listed entries, as the shader does.
        let (_, listed, hits) = reference(query::QUERY_HITS, &batch);
        let mut offsets = vec![0u32; batch.segments.len()];
        for h in &hits {
            offsets[h.segment as usize] += 1;
        }
        assert!(
            offsets == listed.per_segment,
            "{}: segment_rects' counts of listed entries",
            scene.name
        );
        let total = hit_offsets(&mut offsets);
        assert_eq!(total as usize, hits.len(), "{}: the total", scene.name);
        for (i, h) in hits.iter().enumerate() {
            let start = offsets[h.segment as usize] as usize;
            assert!(
                start <= i && (start == 0 || hits[start - 1].segment < h.segment),
                "{}: hit {i} {h:?} is not in its segment's run from {start}",
                scene.name
            );
        }
        // Each run reversed, as cells could list it; ordered back into the reference's.
        let in_order: Vec<FirstHit> = hits
            .iter()
            .map(|h| FirstHit {
                rect: h.rect,
                result: h.result,
            })
            .collect();
        let mut listed = in_order.clone();
        for (i, &start) in offsets.iter().enumerate() {
            let end = offsets.get(i + 1).map_or(listed.len(), |&e| e as usize);
            listed[start as usize..end].reverse();
        }
        order_hits(&offsets, &mut listed);
        assert_bits(&scene.name, &in_order, &listed, |i| {
            format!("{:?}", hits[i])
        });
    }
}

#[test]
fn counts_equal_the_scalar_reference() {
    for scene in scenes() {
        let batch = scene.batch();
        let (_, expected, _) = reference(query::QUERY_COUNTS, &batch);
        for mut engine in engines() {
            let actual = engine.counts(&batch).expect("counts");
            let what = format!("{} on {}", scene.name, engine.chosen());
            assert_bits(
                &format!("{what}, per segment"),
                &expected.per_segment,
                &actual.per_segment,
                |i| format!("{:?}", scene.segments[i]),
            );
            assert_bits(
                &format!("{what}, per rect"),
                &expected.per_target,
                &actual.per_target,
                |i| format!("{:?}", scene.rects[i]),
            );
        }
    }
}

#[test]
fn dense_pairs_equal_the_scalar_reference_bit_for_bit() {
    for scene in scenes() {
        let (segments, rects) = (&scene.segments, &scene.rects);
        let mut expected = vec![PairResult::MISS; segments.len() * rects.len()];
        rectcast::cpu::rect_pairs::pairs_dense(segments, rects, &mut expected);
        for mut engine in engines() {
            let actual = engine.pairs(segments, rects).expect("pairs");
            assert_bits(
                &format!("{} on {}", scene.name, engine.chosen()),
                &expected,
                &actual,
                |i| {
                    format!(
                        "{:?} {:?}",
                        segments[i / rects.len()],
                        rects[i % rects.len()]
                    )
                },
            );
        }
    }
}

#[test]
fn wall_and_circle_pairs_equal_the_scalar_functions_bit_for_bit() {
    // Walls and circles go through the same box cull as rects (their boxes, sixteen at a
    // time), then the float filter or the exact path, at every SIMD level and thread count.
    let mut rng = rectcast::scene::SplitMix64::new(61);
    for scene in scenes() {
        let segments = &scene.segments;
        let walls: Vec<Segment> = segments.iter().rev().take(97).copied().collect();
        let circles: Vec<rectcast::Circle> = scene
            .rects
            .iter()
            .map(|r| {
                let radius = (r.max_x - r.min_x).max(0.0) * rng.range(0.0, 1.0);
                rectcast::Circle::new(r.min_x, r.max_y, radius)
            })
            .collect();
        let wall_want: Vec<_> = segments
            .iter()
            .flat_map(|s| walls.iter().map(move |w| rectcast::segment_segment(s, w)))
            .collect();
        let circle_want: Vec<_> = segments
            .iter()
            .flat_map(|s| circles.iter().map(move |c| rectcast::segment_circle(s, c)))
            .collect();
        for mut engine in engines() {
            let what = format!("{} on {}", scene.name, engine.chosen());
            let got = engine.wall_pairs(segments, &walls).expect("walls");
            assert_bits(&format!("walls, {what}"), &wall_want, &got, |i| {
                format!(
                    "{:?} {:?}",
                    segments[i / walls.len()],
                    walls[i % walls.len()]
                )
            });
            let got = engine.circle_pairs(segments, &circles).expect("circles");
            assert_bits(&format!("circles, {what}"), &circle_want, &got, |i| {
                format!(
                    "{:?} {:?}",
                    segments[i / circles.len()],
                    circles[i % circles.len()]
                )
            });
        }
    }
}

/// Hits, each segment's shapes hit at the smallest rounded `t_enter` (none: a miss), and
/// counts.
type ShapeAnswers<C> = (Vec<rectcast::ShapeHit<C>>, Vec<Vec<u32>>, Counts);

/// Hits, first hits and counts over `shapes` from the scalar function of every pair. A first
/// hit is one of the shapes hit at the smallest rounded `t_enter`: which one, on a rounded tie,
/// the exact order says (tests/targets.rs holds it to the exact entries).
fn shape_reference<S: rectcast::Shape>(
    segments: &[Segment],
    shapes: &[S],
) -> ShapeAnswers<S::Contact> {
    use rectcast::ShapeContact;
    let mut hits = Vec::new();
    let mut first = vec![Vec::new(); segments.len()];
    let mut counts = Counts {
        per_segment: vec![0; segments.len()],
        per_target: vec![0; shapes.len()],
    };
    for (i, s) in segments.iter().enumerate() {
        let mut best: Option<(f32, Vec<u32>)> = None;
        for (k, shape) in shapes.iter().enumerate() {
            let contact = S::exact(s, shape);
            if !contact.hit() {
                continue;
            }
            hits.push(rectcast::ShapeHit {
                segment: i as u32,
                shape: k as u32,
                contact,
            });
            counts.per_segment[i] += 1;
            counts.per_target[k] += 1;
            match &mut best {
                Some((t, tied)) if contact.t_enter() == *t => tied.push(k as u32),
                Some((t, _)) if contact.t_enter() > *t => {}
                _ => best = Some((contact.t_enter(), vec![k as u32])),
            }
        }
        first[i] = best.map_or_else(Vec::new, |(_, tied)| tied);
    }
    (hits, first, counts)
}

/// Every query over `shapes` on `engine` against [`shape_reference`], element by element.
fn check_shape_queries<S: rectcast::SceneShape>(
    what: &str,
    engine: &mut Engine,
    segments: &[Segment],
    shapes: &[S],
) {
    let (hits, first, counts) = shape_reference(segments, shapes);
    let got = engine.shape_hits(segments, shapes).expect("hits");
    if let Some(i) = (0..hits.len().max(got.len())).find(|&i| hits.get(i) != got.get(i)) {
        panic!(
            "{what}: hits differ at {i}: expected {:?}, got {:?}",
            hits.get(i),
            got.get(i)
        );
    }
    let got: Vec<Option<u32>> = engine
        .shape_first_hits(segments, shapes)
        .expect("first hits")
        .iter()
        .map(|h| h.map(|h| h.shape))
        .collect();
    let among = |i: usize| match got[i] {
        Some(k) => first[i].contains(&k),
        None => first[i].is_empty(),
    };
    if let Some(i) = (0..first.len()).find(|&i| !among(i)) {
        panic!(
            "{what}: first hit of segment {i} ({:?}): expected one of {:?}, got {:?}",
            segments[i], first[i], got[i]
        );
    }
    let got = engine.shape_counts(segments, shapes).expect("counts");
    if let Some(i) = (0..segments.len()).find(|&i| counts.per_segment[i] != got.per_segment[i]) {
        panic!(
            "{what}: hits of segment {i} ({:?}): expected {}, got {}",
            segments[i], counts.per_segment[i], got.per_segment[i]
        );
    }
    if let Some(k) = (0..shapes.len()).find(|&k| counts.per_target[k] != got.per_target[k]) {
        panic!(
            "{what}: hits of shape {k}: expected {}, got {}",
            counts.per_target[k], got.per_target[k]
        );
    }
}

#[test]
fn wall_and_circle_queries_equal_the_scalar_functions_at_every_simd_level() {
    // The box cull, then the lane filter compiled for each SIMD level, then the scalar
    // functions for the pairs it cannot tell; with the broad phase's grid and without.
    let mut rng = rectcast::scene::SplitMix64::new(62);
    let mut batches = vec![
        (
            "random",
            scene::random_batch(63, 300, 1, 1000.0).0,
            scene::random_batch(64, 181, 1, 1000.0).0,
        ),
        (
            "tie grid",
            tie_grid(65).0,
            tie_grid(66).0.into_iter().take(90).collect(),
        ),
    ];
    let tiny: Vec<Segment> = tie_grid(67)
        .0
        .iter()
        .map(|s| Segment::new(s.x0 * 1e-40, s.y0 * 1e-40, s.x1 * 1e-40, s.y1 * 1e-40))
        .collect();
    batches.push(("tie grid at 1e-40", tiny.clone(), tiny[..70].to_vec()));
    for (name, segments, walls) in &batches {
        let circles: Vec<rectcast::Circle> = walls
            .iter()
            .map(|w| {
                let r = ((w.x1 - w.x0).abs() + (w.y1 - w.y0).abs()) * rng.range(0.0, 0.6);
                rectcast::Circle::new(w.x0, w.y0, r)
            })
            .collect();
        for mut engine in engines() {
            for broad_phase in [rectcast::BroadPhase::Off, rectcast::BroadPhase::On] {
                engine.set_broad_phase(broad_phase);
                let what = format!("{name} on {}, broad phase {broad_phase:?}", engine.chosen());
                check_shape_queries(&format!("walls, {what}"), &mut engine, segments, walls);
                check_shape_queries(&format!("circles, {what}"), &mut engine, segments, &circles);
            }
        }
    }
}

#[test]
fn pair_lists_and_clipping_equal_the_scalar_reference() {
    for scene in scenes() {
        let (segments, rects) = (&scene.segments, &scene.rects);
        if segments.is_empty() || rects.is_empty() {
            continue;
        }
        let mut rng = SplitMix64::new(17);
        let pairs: Vec<PairIndex> = (0..5000)
            .map(|_| PairIndex {
                segment: rng.below(segments.len() as u64) as u32,
                rect: rng.below(rects.len() as u64) as u32,
            })
            .collect();
        let mut expected = vec![PairResult::MISS; pairs.len()];
        rectcast::cpu::rect_pairs::pairs_list(segments, rects, &pairs, &mut expected);
        // One rect per segment, cycling through the scene's, and one viewport.
        let per_segment: Vec<Rect> = (0..segments.len())
            .map(|i| rects[i % rects.len()])
            .collect();
        let mut expected_per_segment = vec![FirstHit::NONE; segments.len()];
        clip(segments, &per_segment, &mut expected_per_segment);
        let mut expected_viewport = vec![FirstHit::NONE; segments.len()];
        clip(segments, &rects[..1], &mut expected_viewport);
        for mut engine in engines() {
            let what = format!("{} on {}", scene.name, engine.chosen());
            let actual = engine
                .pair_list(segments, rects, &pairs)
                .expect("pair list");
            assert_bits(&format!("{what}, pair list"), &expected, &actual, |i| {
                format!("{:?}", pairs[i])
            });
            for (to, expected) in [
                (ClipTo::PerSegment(&per_segment), &expected_per_segment),
                (ClipTo::Rect(rects[0]), &expected_viewport),
            ] {
                let clipped = engine.clip(segments, to).expect("clip");
                let actual: Vec<PairResult> = clipped.iter().map(|c| c.result).collect();
                let expected: Vec<PairResult> = expected.iter().map(|f| f.result).collect();
                assert_bits(&format!("{what}, clip"), &expected, &actual, |i| {
                    format!("{:?}", segments[i])
                });
            }
        }
    }
}

#[test]
fn a_large_clip_is_split_across_threads_in_order() {
    // Over the 4096 segments per task where clipping goes parallel.
    let (segments, rects) = scene::random_batch(21, 20_000, 20_000, 100.0);
    let mut expected = vec![FirstHit::NONE; segments.len()];
    clip(&segments, &rects, &mut expected);
    for mut engine in engines() {
        let clipped = engine
            .clip(&segments, ClipTo::PerSegment(&rects))
            .expect("clip");
        let actual: Vec<PairResult> = clipped.iter().map(|c| c.result).collect();
        let expected: Vec<PairResult> = expected.iter().map(|f| f.result).collect();
        assert_bits(
            &format!("clip on {}", engine.chosen()),
            &expected,
            &actual,
            |i| format!("{:?} {:?}", segments[i], rects[i]),
        );
    }
}

#[test]
fn a_thread_count_past_the_bound_is_an_error_before_any_thread_starts() {
    for threads in [CpuOptions::MAX_THREADS + 1, 20_000] {
        let Err(e) = Engine::with_cpu_options(Backend::Cpu, CpuOptions::threads(threads)) else {
            panic!("{threads} threads started");
        };
        let says = format!("{threads} CPU threads: at most 1024");
        assert!(e.to_string().contains(&says), "{e}");
    }
}

#[test]
fn every_simd_level_is_reported_and_an_unsupported_one_is_an_error() {
    let available = Simd::available();
    assert_eq!(available.last(), Some(&Simd::Portable));
    assert_eq!(available[0], Simd::detect());
    for simd in [Simd::Avx512, Simd::Avx2, Simd::Portable] {
        let opened = Engine::with_cpu_options(
            Backend::Cpu,
            CpuOptions {
                threads: 2,
                simd: Some(simd),
            },
        );
        match opened {
            Ok(engine) => {
                assert!(simd.is_supported());
                assert_eq!(
                    engine.chosen().to_string(),
                    format!("cpu: {simd}, 2 threads")
                );
            }
            Err(e) => {
                assert!(!simd.is_supported());
                assert!(e.to_string().contains("not supported"), "{e}");
            }
        }
    }
}
