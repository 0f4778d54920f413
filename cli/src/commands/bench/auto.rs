//! `rectcast bench --query auto`: the constants of `Backend::Auto`'s cost model measured on
//! this machine: opening a GPU, a GPU call's fixed cost, and each family's cost per pair test on
//! one CPU thread and on the GPU end to end. It prints them as `RECTCAST_AUTO_COSTS` reads them.

use std::time::Instant;

use rectcast::{
    AutoCosts, Backend, Batch, BroadPhase, Engine, Family, GpuContext, GpuLimits, Rect, Segment,
    TestCost, scene,
};

use super::measure::{ms, time};
use crate::options::{Outcome, engine};

/// A call that runs a family's scene on an engine.
type Run = Box<dyn FnMut(&mut Engine) -> rectcast::Result<()>>;

/// One family's measured call: its scene, and a call that runs it on an engine.
struct Call {
    family: Family,
    what: String,
    segments: usize,
    targets: usize,
    run: Run,
}

/// The scenes: rects through a grid at `segments` × `rects` (bullet hell), every pair at a
/// sixteenth of the rects, the dense pairs at a sixteenth of the segments (random); shapes at a
/// sixty-fourth (their GPU kernels are slow to compile and to run on a software GPU).
fn calls(segments: usize, rects: usize) -> Vec<Call> {
    let (bullets, boxes) = scene::bullet_hell(41, segments, rects);
    let few = (rects / 16).max(1);
    let (few_bullets, few_boxes) = scene::bullet_hell(47, segments, few);
    let (dense, dense_boxes) = scene::random_batch(42, (segments / 16).max(1), rects / 4, 1000.0);
    let shape_segments = (segments / 64).max(1);
    let shape_count = (rects / 16).max(1);
    let (queries, _) = scene::random_batch(43, shape_segments, 1, 1000.0);
    let (walls, _) = scene::random_batch(44, shape_count, 1, 1000.0);
    let circles = scene::random_circles(45, shape_count, 1000.0, (5.0, 40.0));
    let polygons = scene::random_polygons(46, shape_count / 4, 1000.0, (10.0, 60.0), (8, 16));
    let shaped = |family, what: &str, targets, run| Call {
        family,
        what: format!("{what}, {shape_segments} x {targets}"),
        segments: shape_segments,
        targets,
        run,
    };
    // A rect query with the broad phase set: the grid's families through it, the others not.
    let rect_call = |family: Family, what: &str, (s, r): (&[Segment], &[Rect]), hits: bool| {
        let (s, r) = (s.to_vec(), r.to_vec());
        let grid = family.is_grid();
        let what = format!("{what}, {} x {}", s.len(), r.len());
        let (segments, targets) = (s.len(), r.len());
        let run: Run = Box::new(move |e: &mut Engine| {
            e.set_broad_phase(if grid {
                BroadPhase::On
            } else {
                BroadPhase::Off
            });
            let batch = Batch::new(&s, &r);
            match hits {
                true => e.hits(&batch).map(drop),
                false => e.first_hit(&batch).map(drop),
            }
        });
        Call {
            family,
            what,
            segments,
            targets,
            run,
        }
    };
    let (q1, q2, q3) = (queries.clone(), queries.clone(), queries);
    let edges = polygons.edge_count();
    let (n, m) = (dense.len(), dense_boxes.len());
    let all = (&bullets[..], &boxes[..]);
    let some = (&few_bullets[..], &few_boxes[..]);
    vec![
        Call {
            family: Family::Pairs,
            what: format!("rect pairs, random, {n} x {m}"),
            segments: n,
            targets: m,
            run: Box::new(move |e| e.pairs(&dense, &dense_boxes).map(drop)),
        },
        rect_call(
            Family::FirstHits,
            "rect first hits, every pair",
            some,
            false,
        ),
        rect_call(Family::GridFirstHits, "rect first hits, grid", all, false),
        rect_call(Family::Hits, "rect hits, every pair", some, true),
        rect_call(Family::GridHits, "rect hits, grid", all, true),
        shaped(
            Family::Walls,
            "wall first hits, random",
            walls.len(),
            Box::new(move |e| e.shape_first_hits(&q1, &walls).map(drop)),
        ),
        shaped(
            Family::Circles,
            "circle first hits, random",
            circles.len(),
            Box::new(move |e| e.shape_first_hits(&q2, &circles).map(drop)),
        ),
        shaped(
            Family::Polygons,
            "polygon first hits, random (edges)",
            edges,
            Box::new(move |e| e.polygon_first_hits(&q3, &polygons).map(drop)),
        ),
    ]
}

/// `rectcast bench --query auto`.
pub(super) fn bench_auto(segments: usize, rects: usize, iterations: usize, gpu: bool) -> Outcome {
    let e = |e: rectcast::Error| e.to_string();
    let mut cpu = engine(Backend::Cpu)?;
    let threads = cpu.cpu_threads();
    println!(
        "the cost model of --backend auto, measured: {}, {iterations} iterations each",
        cpu.chosen()
    );
    let mut costs = AutoCosts::default();
    let mut opened = None;
    if gpu {
        // A process's first opening: the instance, the driver, the device, the query kernels.
        let start = Instant::now();
        match GpuContext::new().and_then(|c| Engine::gpu(c, GpuLimits::default())) {
            Ok(engine) => {
                costs.gpu_open = start.elapsed();
                let again = Instant::now();
                GpuContext::new()
                    .and_then(|c| Engine::gpu(c, GpuLimits::default()))
                    .map_err(e)?;
                println!(
                    "opening {}: {:.1} ms, again in this process {:.1} ms",
                    engine.chosen(),
                    ms(costs.gpu_open),
                    ms(again.elapsed())
                );
                opened = Some(engine);
            }
            Err(why) => println!("no GPU ({why}): the GPU's costs stay the defaults"),
        }
    }
    if let Some(gpu) = &mut opened {
        let one = [rectcast::Segment::new(0.0, 0.0, 1.0, 1.0)];
        let boxes = [rectcast::Rect::new(0.5, 0.5, 2.0, 2.0)];
        let (median, _) = time(iterations, || {
            gpu.first_hit(&Batch::new(&one, &boxes))
                .map(drop)
                .map_err(e)
        })?;
        costs.gpu_call = median;
        println!("a GPU call (1 x 1 first hit): {:.3} ms", ms(median));
        // A segment's own cost: its upload, readback and merge, against one rect.
        let (bullets, _) = scene::bullet_hell(48, segments, 1);
        let (median, _) = time(iterations, || {
            gpu.set_broad_phase(BroadPhase::Off);
            gpu.first_hit(&Batch::new(&bullets, &boxes))
                .map(drop)
                .map_err(e)
        })?;
        let per_segment = median.saturating_sub(costs.gpu_call);
        costs.gpu_segment_ns = per_segment.as_secs_f64() * 1e9 / segments as f64;
        println!(
            "a GPU segment ({segments} x 1 first hits): {:.3} ns",
            costs.gpu_segment_ns
        );
    }
    let calls = calls(segments, rects);
    let names: Vec<String> = calls
        .iter()
        .map(|c| format!("{} ({})", c.family.name(), c.what))
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    println!(
        "{:width$}  {:>10}  {:>10}  {:>10}  {:>11}  {:>11}",
        "family (scene)", "tests", "cpu ms", "gpu ms", "cpu ns/test", "gpu ns/test"
    );
    for (mut call, name) in calls.into_iter().zip(names) {
        let (cpu_time, _) = time(iterations, || (call.run)(&mut cpu).map_err(e))?;
        let tests = call.family.tests(call.segments, call.targets);
        let cost = costs.test_mut(call.family);
        cost.cpu_ns = cpu_time.as_secs_f64() * 1e9 * threads as f64 / tests;
        let gpu_time = match &mut opened {
            Some(gpu) => {
                let (median, _) = time(iterations, || (call.run)(gpu).map_err(e))?;
                let fixed = costs.gpu_call.as_secs_f64()
                    + call.segments as f64 * costs.gpu_segment_ns / 1e9;
                let run = (median.as_secs_f64() - fixed).max(0.0);
                let cost = costs.test_mut(call.family);
                cost.gpu_ns = run * 1e9 / tests;
                Some(median)
            }
            None => None,
        };
        let TestCost { cpu_ns, gpu_ns } = costs.test(call.family);
        println!(
            "{name:width$}  {tests:>10.4e}  {:>10.3}  {:>10}  {:>11.3}  {:>11}",
            ms(cpu_time),
            gpu_time.map_or("-".into(), |t| format!("{:.3}", ms(t))),
            cpu_ns,
            match gpu_time {
                Some(_) => format!("{gpu_ns:.3}"),
                None => format!("{gpu_ns} (default)"),
            }
        );
    }
    println!(
        "tests: every pair, or through a grid {} a segment and one a rect; cpu ns per test on one of {threads} threads; gpu ns per test past the call's and the segments' own",
        rectcast::GRID_TESTS_PER_SEGMENT
    );
    if opened
        .as_ref()
        .and_then(Engine::gpu_context)
        .is_some_and(GpuContext::is_software)
    {
        println!(
            "this GPU is a software one: auto never opens it unless WGPU_ADAPTER_NAME names it"
        );
    }
    println!("{}={}", rectcast::AUTO_COSTS_VAR, rounded(&costs));
    Ok(())
}

/// `costs` to three significant digits (a measurement's own noise is larger).
fn rounded(costs: &AutoCosts) -> AutoCosts {
    let round = |v: f64| {
        if v == 0.0 || !v.is_finite() {
            return v;
        }
        let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
        (v * scale).round() / scale
    };
    let millis = |d: std::time::Duration| {
        std::time::Duration::from_secs_f64(round(d.as_secs_f64() * 1e3) / 1e3)
    };
    let mut out = costs.clone();
    out.gpu_open = millis(costs.gpu_open);
    out.gpu_call = millis(costs.gpu_call);
    out.gpu_segment_ns = round(costs.gpu_segment_ns);
    for cost in &mut out.tests {
        *cost = TestCost {
            cpu_ns: round(cost.cpu_ns),
            gpu_ns: round(cost.gpu_ns),
        };
    }
    out
}
