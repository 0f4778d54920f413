//! Every decision equals the exact oracle's (tests/common/exact.rs) on adversarial and random
//! inputs, on both backends; t is within the documented distance of the correctly rounded exact
//! value. `exactness_report` (ignored; run it with `--ignored --nocapture`) prints the per-category
//! table of the closing note on 1.1·10^6 adversarial and 1.5·10^7 random pairs.

mod common;

use common::adversarial::{self, Category};
use common::exact::{self, Score};
use common::{cpu_engine, gpu_engine};
use rectcast::scene::{bullet_hell, random_batch};
use rectcast::{Engine, GpuLimits, PairIndex, Rect, Segment};

/// t on the CPU: the correctly rounded exact value.
const CPU_T_ULP: u32 = 0;
/// t on a GPU: the correctly rounded exact value too (docs/semantics.md).
const GPU_T_ULP: u32 = 0;

fn run_list(
    engine: &mut Engine,
    segments: &[Segment],
    rects: &[Rect],
) -> Vec<rectcast::PairResult> {
    let pairs: Vec<PairIndex> = (0..segments.len() as u32)
        .map(|i| PairIndex::new(i, i))
        .collect();
    engine
        .pair_list(segments, rects, &pairs)
        .expect("pair list")
}

/// Scores the engine on `per_category` pairs of every adversarial category, with the number of
/// pairs the engine re-decided on the host for each.
fn adversarial_scores(
    engine: &mut Engine,
    seed: u64,
    per_category: usize,
) -> Vec<(Category, Score, u64)> {
    Category::ALL
        .iter()
        .map(|&category| {
            let (segments, rects) = adversarial::pairs(category, seed, per_category);
            let inputs = |i: usize| (segments[i], rects[i]);
            let want = exact::oracle_results(segments.len(), inputs);
            let before = engine.uncertain_pairs();
            let got = run_list(engine, &segments, &rects);
            let host = engine.uncertain_pairs() - before;
            // t within [0, 1], t_enter <= t_exit, the 0 / 1 rules, never -0.0.
            for (i, result) in got.iter().enumerate() {
                common::cases::assert_invariants(&segments[i], &rects[i], result);
            }
            (category, exact::score(&want, &got, inputs), host)
        })
        .collect()
}

fn assert_all_exact(backend: &str, scores: &[(Category, Score, u64)], max_t_ulp: u32) {
    for (category, score, _) in scores {
        score.assert_exact(&format!("{backend}, {}", category.name()), max_t_ulp);
    }
}

#[test]
fn cpu_decides_every_adversarial_category_exactly() {
    let scores = adversarial_scores(&mut cpu_engine(), 1, 20_000);
    assert_all_exact("cpu", &scores, CPU_T_ULP);
}

#[test]
fn gpu_decides_every_adversarial_category_exactly() {
    let Some(mut gpu) = gpu_engine(
        "gpu_decides_every_adversarial_category_exactly",
        GpuLimits::default(),
    ) else {
        return;
    };
    let scores = adversarial_scores(&mut gpu, 1, 20_000);
    assert_all_exact("gpu", &scores, GPU_T_ULP);
}

/// The dense scenes of the report: a bullet-hell frame and random batches at two scales.
fn random_scenes(scale: usize) -> Vec<(&'static str, Vec<Segment>, Vec<Rect>)> {
    let (a, b) = bullet_hell(7, 25 * scale, 20 * scale);
    let (c, d) = random_batch(8, 25 * scale, 20 * scale, 1.0e3);
    let (e, f) = random_batch(9, 25 * scale, 20 * scale, 3.0e7);
    vec![
        ("bullet_hell", a, b),
        ("random_1e3", c, d),
        ("random_3e7", e, f),
    ]
}

fn dense_score(
    engine: &mut Engine,
    segments: &[Segment],
    rects: &[Rect],
    want: &[rectcast::PairResult],
) -> Score {
    let got = engine.pairs(segments, rects).expect("pairs");
    exact::score(want, &got, common::dense_inputs(segments, rects))
}

#[test]
fn random_scenes_are_decided_exactly_on_both_backends() {
    let mut gpu = gpu_engine(
        "random_scenes_are_decided_exactly_on_both_backends",
        GpuLimits::default(),
    );
    for (name, segments, rects) in random_scenes(10) {
        let want = exact::oracle_results(
            segments.len() * rects.len(),
            common::dense_inputs(&segments, &rects),
        );
        dense_score(&mut cpu_engine(), &segments, &rects, &want)
            .assert_exact(&format!("cpu, {name}"), CPU_T_ULP);
        if let Some(gpu) = gpu.as_mut() {
            dense_score(gpu, &segments, &rects, &want)
                .assert_exact(&format!("gpu, {name}"), GPU_T_ULP);
        }
    }
}

fn row(name: &str, cpu: &Score, gpu: Option<(&Score, u64)>) {
    let (gm, gt, host) = gpu.map_or(("-".into(), "-".into(), "-".into()), |(g, host)| {
        (
            g.decision_mismatches.to_string(),
            g.max_t_ulp.to_string(),
            host.to_string(),
        )
    });
    println!(
        "| {name} | {} | {} | {gm} | {} | {gt} | {host} |",
        cpu.pairs, cpu.decision_mismatches, cpu.max_t_ulp
    );
}

/// The closing note's table: decision mismatches against the oracle per category and the
/// largest t error, on 1.1·10^6 adversarial pairs (10^5 per category) and 1.5·10^7 random pairs.
#[test]
#[ignore = "a measurement (minutes): cargo test --release --test exact -- --ignored --nocapture"]
fn exactness_report() {
    let mut cpu = cpu_engine();
    let mut gpu = gpu_engine("exactness_report", GpuLimits::default());
    println!(
        "| category | pairs | cpu mismatches | gpu mismatches | cpu max t ulp | gpu max t ulp | gpu pairs decided on the host |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let cpu_scores = adversarial_scores(&mut cpu, 2, 100_000);
    let gpu_scores = gpu.as_mut().map(|g| adversarial_scores(g, 2, 100_000));
    for (k, (category, score, _)) in cpu_scores.iter().enumerate() {
        row(
            category.name(),
            score,
            gpu_scores.as_ref().map(|g| (&g[k].1, g[k].2)),
        );
    }
    for (name, segments, rects) in random_scenes(100) {
        let want = exact::oracle_results(
            segments.len() * rects.len(),
            common::dense_inputs(&segments, &rects),
        );
        let c = dense_score(&mut cpu, &segments, &rects, &want);
        let g = gpu.as_mut().map(|g| {
            let before = g.uncertain_pairs();
            let score = dense_score(g, &segments, &rects, &want);
            (score, g.uncertain_pairs() - before)
        });
        row(name, &c, g.as_ref().map(|(score, host)| (score, *host)));
    }
    for (label, engine) in [("cpu", Some(&cpu)), ("gpu", gpu.as_ref())] {
        if let Some(engine) = engine {
            println!(
                "{label}: {}; pairs re-decided on the host: {}",
                engine.chosen(),
                engine.uncertain_pairs()
            );
        }
    }
    shapes_report(&mut cpu, gpu.as_mut());
}

fn mismatches<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

/// The exactness report's columns for the shapes, and where the GPU kernel's pairs go: certain
/// misses in f32, the narrow integers, and beyond them the wide integers (walls, circles) or
/// the host (polygons). The split is the kernels' own predicate, evaluated by their CPU mirrors
/// (`contact_narrow`, `circle_narrow`, `wall_verdict`); the mismatches are the engines' answers
/// against the oracles of tests/common, element by element.
fn shapes_report(cpu: &mut Engine, mut gpu: Option<&mut Engine>) {
    use common::degenerate::{coordinate, random_segment, valid};
    use rectcast::cpu::segment_circle::narrow::circle_narrow;
    use rectcast::cpu::segment_segment::narrow::contact_narrow;
    use rectcast::cpu::segment_segment::{WALLS_APART, wall_verdict};
    use rectcast::scene::SplitMix64;
    use rectcast::{Circle, Polygons};
    println!();
    println!(
        "| shape, scene | pairs | cpu mismatches | gpu mismatches | f32 certain misses | narrow | wide, or the host |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let row = |name: &str, pairs: usize, cpu: usize, gpu: Option<usize>, split: [usize; 3]| {
        let gpu = gpu.map_or("-".to_string(), |g| g.to_string());
        let [certain, narrow, beyond] = split;
        println!("| {name} | {pairs} | {cpu} | {gpu} | {certain} | {narrow} | {beyond} |");
    };
    let apart = |q: &Segment, b: [f32; 4]| {
        q.x0.max(q.x1) < b[0]
            || q.x0.min(q.x1) > b[2]
            || q.y0.max(q.y1) < b[1]
            || q.y0.min(q.y1) > b[3]
    };
    // Uniform values, the degenerate generator's at four scales, and segments at 1 against
    // shapes at 2^-70, past the narrow integers' reach.
    let scenes: [(&str, f32, f32); 6] = [
        ("uniform [-100, 100]", 0.0, 0.0),
        ("degenerate, scale 1", 1.0, 1.0),
        ("degenerate, scale 0.001", 0.001, 0.001),
        ("degenerate, scale 1e-40", 1e-40, 1e-40),
        ("degenerate, scale 3e18", 3e18, 3e18),
        ("scales 1 against 2^-70", 1.0, 2f32.powi(-70)),
    ];
    for (k, (scene, query_scale, shape_scale)) in scenes.into_iter().enumerate() {
        let mut rng = SplitMix64::new(0x5a + k as u64);
        let segment = |rng: &mut SplitMix64, scale: f32| loop {
            let s = if scale == 0.0 {
                let mut v = || rng.range(-100.0, 100.0);
                Segment::new(v(), v(), v(), v())
            } else {
                random_segment(rng, scale)
            };
            if valid(&s) {
                return s;
            }
        };
        let queries: Vec<Segment> = (0..300).map(|_| segment(&mut rng, query_scale)).collect();
        // Walls.
        let walls: Vec<Segment> = (0..200).map(|_| segment(&mut rng, shape_scale)).collect();
        let mut split = [0; 3];
        let mut want = Vec::new();
        for q in &queries {
            for w in &walls {
                want.push(common::segments::segment_segment(q, w));
                let b = [
                    w.x0.min(w.x1),
                    w.y0.min(w.y1),
                    w.x0.max(w.x1),
                    w.y0.max(w.y1),
                ];
                split[if apart(q, b) || wall_verdict(q, w) == WALLS_APART {
                    0
                } else if contact_narrow(q, w).is_some() {
                    1
                } else {
                    2
                }] += 1;
            }
        }
        let c = mismatches(&cpu.wall_pairs(&queries, &walls).unwrap(), &want);
        let g = gpu
            .as_mut()
            .map(|g| mismatches(&g.wall_pairs(&queries, &walls).unwrap(), &want));
        row(&format!("walls, {scene}"), want.len(), c, g, split);
        // Circles (every pair not boxed out reaches the integers' first step).
        let scale = if shape_scale == 0.0 {
            50.0
        } else {
            shape_scale
        };
        let valid_value = |v: f32| v.abs() <= rectcast::MAX_ABS_COORDINATE;
        let circles: Vec<Circle> = std::iter::repeat_with(|| {
            if shape_scale == 0.0 {
                let mut v = || rng.range(-100.0, 100.0);
                return Circle::new(v(), v(), v().abs() / 5.0);
            }
            let mut v = || coordinate(&mut rng, scale);
            Circle::new(v(), v(), v().abs())
        })
        .filter(|c| [c.cx, c.cy, c.r].into_iter().all(valid_value))
        .take(200)
        .collect();
        let (mut split, mut want) = ([0; 3], Vec::new());
        for q in &queries {
            for circle in &circles {
                want.push(common::circles::segment_circle(q, circle));
                let r = circle.r;
                let b = [circle.cx - r, circle.cy - r, circle.cx + r, circle.cy + r];
                split[if apart(q, b) {
                    0
                } else if circle_narrow(q, circle).is_some() {
                    1
                } else {
                    2
                }] += 1;
            }
        }
        let c = mismatches(&cpu.circle_pairs(&queries, &circles).unwrap(), &want);
        let g = gpu
            .as_mut()
            .map(|g| mismatches(&g.circle_pairs(&queries, &circles).unwrap(), &want));
        row(&format!("circles, {scene}"), want.len(), c, g, split);
        // Polygons (the degenerate generator's, at 50 in the uniform scene), per edge: a query
        // apart from the polygon's box, or past the reach (the host decides it).
        let shapes: Vec<Vec<Vec<[f32; 2]>>> =
            std::iter::repeat_with(|| common::polygons::random_polygon_rings(&mut rng, scale))
                .filter(|rings| Polygons::from_polygons(std::slice::from_ref(rings)).is_ok())
                .take(40)
                .collect();
        let polygons = Polygons::from_polygons(&shapes).unwrap();
        let (mut split, mut want) = ([0; 3], Vec::new());
        for q in &queries {
            for rings in &shapes {
                want.push(common::polygons::segment_polygon_rings(q, rings));
                let points = rings.iter().flatten();
                let b = points.fold([f32::MAX, f32::MAX, f32::MIN, f32::MIN], |b, p| {
                    [
                        b[0].min(p[0]),
                        b[1].min(p[1]),
                        b[2].max(p[0]),
                        b[3].max(p[1]),
                    ]
                });
                for ring in rings {
                    for e in 0..ring.len() {
                        let (a, c) = (ring[e], ring[(e + 1) % ring.len()]);
                        let edge = Segment::new(a[0], a[1], c[0], c[1]);
                        split[if apart(q, b) {
                            0
                        } else if contact_narrow(q, &edge).is_some() {
                            1
                        } else {
                            2
                        }] += 1;
                    }
                }
            }
        }
        let c = mismatches(&cpu.polygon_pairs(&queries, &polygons).unwrap(), &want);
        let g = gpu
            .as_mut()
            .map(|g| mismatches(&g.polygon_pairs(&queries, &polygons).unwrap(), &want));
        row(
            &format!("polygons (edge pairs split), {scene}"),
            want.len(),
            c,
            g,
            split,
        );
    }
}

/// Pairs whose decision is an exact tie (a diagonal through a corner: det = 0), which no
/// floating-point filter can certify: every one goes to the host's exact path on a GPU.
fn corner_ties(n: usize) -> (Vec<Segment>, Vec<Rect>) {
    (0..n)
        .map(|i| {
            let k = (i % 1000 + 1) as f32;
            (
                Segment::new(-k, -k, 3.0 * k, 3.0 * k),
                Rect::new(k, k, 2.0 * k + 1.0, 2.5 * k),
            )
        })
        .unzip()
}

#[test]
fn gpu_re_decides_uncertain_pairs_on_the_host_whether_listed_or_overflowing() {
    let Some(mut gpu) = gpu_engine(
        "gpu_re_decides_uncertain_pairs_on_the_host",
        GpuLimits::default(),
    ) else {
        return;
    };
    // A handful fits the kernel's list; thousands overflow it and the host scans the chunk.
    for n in [7, 5000] {
        let (segments, rects) = corner_ties(n);
        let before = gpu.uncertain_pairs();
        let got = run_list(&mut gpu, &segments, &rects);
        assert_eq!(
            gpu.uncertain_pairs() - before,
            n as u64,
            "every exact tie goes to the host"
        );
        let want = run_list(&mut cpu_engine(), &segments, &rects);
        common::assert_same_results(&format!("{n} ties"), &want, &got, 0, |i| {
            (segments[i], rects[i])
        });
        assert!(
            got.iter()
                .all(|r| r.entry_sides() == rectcast::Sides::MIN_X | rectcast::Sides::MIN_Y)
        );
    }
    assert_eq!(cpu_engine().uncertain_pairs(), 0);
}

#[test]
fn uncertain_pairs_are_re_decided_in_tiled_dense_chunks_and_gathered_lists() {
    // 4 KiB bindings (256 rects or segments) and 4 workgroups per dimension: the dense query
    // tiles its rects and the pair list gathers its inputs, so chunk-local ids must be mapped
    // back through both.
    let limits = GpuLimits {
        max_binding_bytes: Some(4096),
        max_workgroups_per_dimension: Some(4),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("uncertain_pairs_are_re_decided_in_tiled_dense", limits) else {
        return;
    };
    let (segments, rects) = corner_ties(300);
    let before = gpu.uncertain_pairs();
    let got = gpu.pairs(&segments, &rects).expect("gpu dense");
    assert!(
        gpu.uncertain_pairs() - before >= 300,
        "the diagonal pairs are exact ties"
    );
    let want = cpu_engine().pairs(&segments, &rects).expect("cpu dense");
    common::assert_same_results(
        "tiled dense",
        &want,
        &got,
        0,
        common::dense_inputs(&segments, &rects),
    );
    // Every pair (i, 299 - i) and (i, i): ties and non-ties, through gathered chunks.
    let pairs: Vec<PairIndex> = (0..300u32)
        .flat_map(|i| [PairIndex::new(i, i), PairIndex::new(i, 299 - i)])
        .collect();
    let got = gpu.pair_list(&segments, &rects, &pairs).expect("gpu list");
    let want = cpu_engine()
        .pair_list(&segments, &rects, &pairs)
        .expect("cpu list");
    common::assert_same_results("gathered list", &want, &got, 0, |i| {
        (
            segments[pairs[i].segment as usize],
            rects[pairs[i].rect as usize],
        )
    });
}
