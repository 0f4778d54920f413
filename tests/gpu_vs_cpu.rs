//! The GPU (lavapipe in CI) against the CPU, element by element. Every test prints SKIPPED
//! when no adapter opens, and fails instead under RECTCAST_REQUIRE_GPU=1.

mod common;

use common::cases::{hand_rects, hand_segments};
use common::{assert_same_results, cpu_engine, dense_inputs, gpu_engine};
use rectcast::gpu::chunks::ChunkCaps;
use rectcast::scene::{SplitMix64, random_batch};
use rectcast::{Engine, GpuContext, GpuLimits, PairIndex, Rect, Segment};

/// The largest t difference accepted between backends, in ulp: none. Both give the correctly
/// rounded exact t, so the results are compared byte for byte, flags and t.
const MAX_T_ULP: u32 = 0;

fn compare_dense(what: &str, gpu: &mut Engine, segments: &[Segment], rects: &[Rect]) -> u32 {
    let expected = cpu_engine().pairs(segments, rects).expect("cpu");
    let actual = gpu.pairs(segments, rects).expect("gpu");
    assert_same_results(
        what,
        &expected,
        &actual,
        MAX_T_ULP,
        dense_inputs(segments, rects),
    )
}

fn compare_list(
    what: &str,
    gpu: &mut Engine,
    segments: &[Segment],
    rects: &[Rect],
    pairs: &[PairIndex],
) -> u32 {
    let expected = cpu_engine().pair_list(segments, rects, pairs).expect("cpu");
    let actual = gpu.pair_list(segments, rects, pairs).expect("gpu");
    assert_same_results(what, &expected, &actual, MAX_T_ULP, |i| {
        (
            segments[pairs[i].segment as usize],
            rects[pairs[i].rect as usize],
        )
    })
}

fn random_pairs(seed: u64, count: usize, segments: usize, rects: usize) -> Vec<PairIndex> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            PairIndex::new(
                rng.below(segments as u64) as u32,
                rng.below(rects as u64) as u32,
            )
        })
        .collect()
}

#[test]
fn hand_cases_agree_with_the_cpu() {
    let Some(mut gpu) = gpu_engine("hand_cases_agree_with_the_cpu", GpuLimits::default()) else {
        return;
    };
    compare_dense("hand cases", &mut gpu, &hand_segments(), &hand_rects());
}

#[test]
fn every_small_integer_configuration_agrees_with_the_cpu_and_the_oracle() {
    let Some(mut gpu) = gpu_engine("every_small_integer_configuration", GpuLimits::default())
    else {
        return;
    };
    let (segments, rects) = common::oracle::exhaustive_grid(-1..=4, 0..=3);
    compare_dense("small integer grid", &mut gpu, &segments, &rects);
    let actual = gpu.pairs(&segments, &rects).expect("gpu");
    let oracle: Vec<_> = segments
        .iter()
        .flat_map(|s| rects.iter().map(|r| common::oracle::segment_rect(s, r)))
        .collect();
    assert_same_results(
        "gpu vs oracle",
        &oracle,
        &actual,
        MAX_T_ULP,
        dense_inputs(&segments, &rects),
    );
}

#[test]
fn random_batches_around_the_workgroup_size_agree() {
    let Some(mut gpu) = gpu_engine(
        "random_batches_around_the_workgroup_size",
        GpuLimits::default(),
    ) else {
        return;
    };
    let wg = rectcast::gpu::shader::WORKGROUP_SIZE as usize;
    let sizes = [
        (0, 0),
        (0, 5),
        (5, 0),
        (1, 1),
        (wg - 1, 1),
        (wg, 1),
        (wg + 1, 1),
        (1, wg - 1),
        (1, wg + 1),
        (3, wg + 1),
        (wg + 1, wg - 1),
        (517, 263),
    ];
    for (k, (n, m)) in sizes.into_iter().enumerate() {
        let (segments, rects) = random_batch(100 + k as u64, n, m, 50.0);
        compare_dense(&format!("random {n} x {m}"), &mut gpu, &segments, &rects);
    }
}

#[test]
fn ten_million_random_pairs_agree_and_report_the_max_t_ulp() {
    let Some(mut gpu) = gpu_engine("ten_million_random_pairs", GpuLimits::default()) else {
        return;
    };
    let mut worst = 0;
    // Two scales: a game field, and coordinates far from the origin.
    for (seed, size) in [(1u64, 1000.0f32), (2, 3.0e7)] {
        let (segments, rects) = random_batch(seed, 2500, 2000, size);
        worst = worst.max(compare_dense(
            "10^7 random pairs",
            &mut gpu,
            &segments,
            &rects,
        ));
    }
    eprintln!(
        "max t difference CPU vs {}: {worst} ulp over 10^7 pairs",
        gpu.chosen()
    );
}

#[test]
fn pair_lists_agree_with_the_cpu() {
    let Some(mut gpu) = gpu_engine("pair_lists_agree_with_the_cpu", GpuLimits::default()) else {
        return;
    };
    let (segments, rects) = random_batch(5, 300, 200, 100.0);
    for count in [0, 1, 63, 64, 65, 10_000] {
        let pairs = random_pairs(count as u64, count, segments.len(), rects.len());
        compare_list(
            &format!("{count} listed pairs"),
            &mut gpu,
            &segments,
            &rects,
            &pairs,
        );
    }
}

#[test]
fn batches_over_tiny_binding_and_dispatch_limits_are_chunked_invisibly() {
    for compact_readback in [false, true] {
        batches_over_tiny_limits(compact_readback);
    }
}

fn batches_over_tiny_limits(compact_readback: bool) {
    // 4 KiB bindings: 341 results, 256 segments or rects per dispatch; 4 workgroups per
    // dimension, so dispatches are 2D.
    let limits = GpuLimits {
        max_binding_bytes: Some(4096),
        max_workgroups_per_dimension: Some(4),
        compact_readback: Some(compact_readback),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("batches_over_tiny_limits", limits) else {
        return;
    };
    assert_eq!(ChunkCaps::new(4096, 4).pairs, 341);
    // More rects than one binding holds: rect tiles; more segments too.
    let (segments, rects) = random_batch(21, 300, 700, 100.0);
    compare_dense("chunked dense 300 x 700", &mut gpu, &segments, &rects);
    let (few_segments, few_rects) = random_batch(22, 90, 3, 100.0);
    compare_dense("chunked dense 90 x 3", &mut gpu, &few_segments, &few_rects);
    // A pair list whose segments fit (indexed) and one whose rects do not (gathered).
    let pairs = random_pairs(23, 2000, few_segments.len(), few_rects.len());
    compare_list(
        "chunked list, indexed",
        &mut gpu,
        &few_segments,
        &few_rects,
        &pairs,
    );
    let pairs = random_pairs(24, 2000, segments.len(), rects.len());
    compare_list(
        "chunked list, gathered",
        &mut gpu,
        &segments,
        &rects,
        &pairs,
    );
}

#[test]
fn one_engine_serves_batches_that_grow_and_shrink() {
    let Some(mut gpu) = gpu_engine(
        "one_engine_serves_batches_that_grow_and_shrink",
        GpuLimits::default(),
    ) else {
        return;
    };
    for (k, (n, m)) in [(10, 10), (1000, 300), (3, 2), (2000, 500), (1, 1)]
        .into_iter()
        .enumerate()
    {
        let (segments, rects) = random_batch(300 + k as u64, n, m, 100.0);
        compare_dense(
            &format!("frame {k}: {n} x {m}"),
            &mut gpu,
            &segments,
            &rects,
        );
        let pairs = random_pairs(k as u64, n, n, m);
        compare_list(
            &format!("frame {k} list"),
            &mut gpu,
            &segments,
            &rects,
            &pairs,
        );
    }
}

#[test]
fn buffers_are_kept_between_calls_and_grow_only_for_a_bigger_batch() {
    let Some(mut gpu) = gpu_engine("buffers_are_kept_between_calls", GpuLimits::default()) else {
        return;
    };
    let before = gpu.gpu_buffer_bytes();
    assert!(
        before <= 8 * 1024,
        "only the params block before the first batch: {before} bytes"
    );
    let (segments, rects) = random_batch(40, 500, 100, 100.0);
    gpu.pairs(&segments, &rects).expect("gpu");
    let held = gpu.gpu_buffer_bytes();
    // Same size, then smaller: nothing is reallocated.
    gpu.pairs(&segments, &rects).expect("gpu");
    gpu.pairs(&segments[..10], &rects[..10]).expect("gpu");
    assert_eq!(gpu.gpu_buffer_bytes(), held);
    // Bigger: the buffers grow, and results stay right after the bind group is rebuilt.
    let (segments, rects) = random_batch(41, 1500, 100, 100.0);
    compare_dense("after growing", &mut gpu, &segments, &rects);
    assert!(gpu.gpu_buffer_bytes() > held);
}

/// A context of its own on the test device, under its emulation, so that no other test's
/// engines count in its kernel compilations.
fn own_context(test: &str) -> Option<GpuContext> {
    let probe = gpu_engine(test, GpuLimits::default())?;
    let opened = probe.gpu_context().expect("on the gpu");
    let context = GpuContext::from_device(
        opened.device().clone(),
        opened.queue().clone(),
        opened.adapter_info().clone(),
    )
    .expect("the device meets the limits")
    .with_emulation(opened.emulation());
    Some(context)
}

#[test]
fn engines_on_one_context_share_its_compiled_kernels() {
    let Some(context) = own_context("engines_on_one_context_share") else {
        return;
    };
    assert_eq!(context.kernel_compilations(), 0);
    let (segments, rects) = random_batch(42, 300, 50, 100.0);
    let mut first = Engine::gpu(context.clone(), GpuLimits::default()).expect("first engine");
    compare_dense("first engine", &mut first, &segments, &rects);
    let compiled = context.kernel_compilations();
    assert!(compiled > 0, "the first engine compiled its kernels");
    // A second engine, other limits: it takes the first one's kernels.
    let mut second = Engine::gpu(context.clone(), common::tiny_limits()).expect("second engine");
    compare_dense("second engine", &mut second, &segments, &rects);
    assert_eq!(
        context.kernel_compilations(),
        compiled,
        "the second engine compiled again"
    );
    // Other pipeline constants are other kernels.
    let other = match context.emulation() {
        rectcast::gpu::Emulation::Native => rectcast::gpu::Emulation::Fused,
        _ => rectcast::gpu::Emulation::Native,
    };
    let mut third = Engine::gpu(context.clone().with_emulation(other), GpuLimits::default())
        .expect("third engine");
    compare_dense("another emulation", &mut third, &segments, &rects);
    assert!(context.kernel_compilations() > compiled);
}

#[test]
fn engines_sharing_a_context_across_threads_each_read_their_own_results() {
    // A map's callback runs on whichever thread polls the device: one thread's wait may end
    // while another thread is running its callback. Every call must still get its bytes.
    let Some(probe) = gpu_engine(
        "engines_sharing_a_context_across_threads",
        GpuLimits::default(),
    ) else {
        return;
    };
    let context = probe.gpu_context().expect("on the gpu").clone();
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let context = context.clone();
            scope.spawn(move || {
                let mut gpu = Engine::gpu(context, GpuLimits::default()).expect("engine");
                let mut cpu = cpu_engine();
                for call in 0..150 {
                    let (segments, rects) = random_batch(1000 * thread + call, 64, 16, 100.0);
                    let want = cpu.pairs(&segments, &rects).expect("cpu");
                    let got = gpu
                        .pairs(&segments, &rects)
                        .unwrap_or_else(|e| panic!("thread {thread}, call {call}: {e}"));
                    let what = format!("thread {thread}, call {call}");
                    assert_same_results(&what, &want, &got, 0, dense_inputs(&segments, &rects));
                }
            });
        }
    });
}

#[test]
fn a_games_own_device_runs_the_queries() {
    let Some(probe) = gpu_engine("a_games_own_device_runs_the_queries", GpuLimits::default())
    else {
        return;
    };
    // The game made its device; rectcast borrows it.
    let context = probe.gpu_context().expect("on the gpu").clone();
    let shared = GpuContext::from_device(
        context.device().clone(),
        context.queue().clone(),
        context.adapter_info().clone(),
    )
    .expect("the device meets the limits");
    let mut gpu =
        Engine::gpu(shared, GpuLimits::default()).expect("kernels build on the game's device");
    let (segments, rects) = rectcast::scene::bullet_hell(9, 2048, 128);
    compare_dense(
        "bullet hell on a shared device",
        &mut gpu,
        &segments,
        &rects,
    );
}

#[test]
fn invalid_input_is_rejected_on_the_gpu_before_any_work() {
    let Some(mut gpu) = gpu_engine("invalid_input_is_rejected_on_the_gpu", GpuLimits::default())
    else {
        return;
    };
    let segments = [
        Segment::new(0.0, 0.0, 1.0, 1.0),
        Segment::new(0.0, f32::NAN, 1.0, 1.0),
    ];
    let err = gpu
        .pairs(&segments, &[Rect::new(0.0, 0.0, 1.0, 1.0)])
        .unwrap_err();
    assert_eq!(err.to_string(), "segment 1: y0 is NaN");
}

/// Stored (not missed) results of a dense query.
fn stored_share(results: &[rectcast::PairResult]) -> f64 {
    results.iter().filter(|r| r.flags != 0).count() as f64 / results.len() as f64
}

#[test]
fn dense_pairs_with_few_hits_read_back_a_fraction_of_the_full_results() {
    let compact = GpuLimits {
        compact_readback: Some(true),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("dense_pairs_with_few_hits", compact) else {
        return;
    };
    let (segments, rects) = rectcast::scene::bullet_hell(31, 8192, 512);
    compare_dense("bullet hell 8192 x 512", &mut gpu, &segments, &rects);
    let expected = cpu_engine().pairs(&segments, &rects).expect("cpu");
    let share = stored_share(&expected);
    assert!(
        share > 0.0 && share < 0.01,
        "the scene's hit share: {share}"
    );
    let full = (expected.len() * size_of::<rectcast::PairResult>()) as u64;
    // The first call copies back a header of 8 bytes per 32 pairs and a sixteenth of the
    // pairs' results; the next one only as many results as the first needed.
    let first = gpu.last_gpu_call().expect("a GPU call");
    assert!(
        first.bytes_read * 10 < full,
        "first call: {first:?}, {full} bytes of results"
    );
    compare_dense("bullet hell again", &mut gpu, &segments, &rects);
    let again = gpu.last_gpu_call().expect("a GPU call");
    assert!(
        again.bytes_read * 40 < full,
        "second call: {again:?}, {full} bytes of results"
    );
    assert_eq!(first.decided_on_host + again.decided_on_host, 0);
}

/// Every rect is large and around the origin, and most segments cross the middle: most pairs
/// hit, more than a chunk copies back before the engine has seen one.
fn hit_heavy_batch(seed: u64, n: usize, m: usize) -> (Vec<Segment>, Vec<Rect>) {
    let mut rng = SplitMix64::new(seed);
    let rects = (0..m)
        .map(|_| {
            let (w, h) = (rng.range(1.0, 5.0), rng.range(1.0, 5.0));
            Rect::new(-w, -h, w, h)
        })
        .collect();
    let segments = (0..n)
        .map(|_| {
            let mut point = || (rng.range(-8.0, 8.0), rng.range(-8.0, 8.0));
            let ((x0, y0), (x1, y1)) = (point(), point());
            Segment::new(x0, y0, x1, y1)
        })
        .collect();
    (segments, rects)
}

#[test]
fn hit_heavy_chunks_get_unread_results_from_the_gpu_or_decide_them_exactly() {
    // One chunk: nothing was submitted after it, so the results it did not copy back are
    // copied in a second round trip, all from the GPU.
    let compact = GpuLimits {
        compact_readback: Some(true),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("hit_heavy_chunks, one chunk", compact) else {
        return;
    };
    let (segments, rects) = hit_heavy_batch(41, 700, 300);
    compare_dense("hit heavy, one chunk", &mut gpu, &segments, &rects);
    let expected = cpu_engine().pairs(&segments, &rects).expect("cpu");
    assert!(stored_share(&expected) > 0.5, "{}", stored_share(&expected));
    let call = gpu.last_gpu_call().expect("a GPU call");
    assert_eq!((call.chunks, call.decided_on_host), (1, 0), "{call:?}");
    // Against the exact oracle too, not only the CPU backend.
    let n = segments.len() * rects.len();
    let oracle = common::exact::oracle_results(n, dense_inputs(&segments, &rects));
    let actual = gpu.pairs(&segments, &rects).expect("gpu");
    assert_same_results(
        "hit heavy vs the oracle",
        &oracle,
        &actual,
        MAX_T_ULP,
        dense_inputs(&segments, &rects),
    );

    // Many chunks in flight: the first ones' unread results were overwritten on the GPU by
    // the chunks after them, so the host decides them; later chunks copy enough back.
    let limits = GpuLimits {
        max_binding_bytes: Some(64 * 1024),
        ..compact
    };
    let Some(mut gpu) = gpu_engine("hit_heavy_chunks, many chunks", limits) else {
        return;
    };
    compare_dense("hit heavy, many chunks", &mut gpu, &segments, &rects);
    let first = gpu.last_gpu_call().expect("a GPU call");
    assert!(first.chunks > 10, "{first:?}");
    assert!(first.decided_on_host > 0, "{first:?}");
    let pairs = (segments.len() * rects.len()) as u64;
    assert!(first.decided_on_host < pairs / 2, "{first:?}");
    // The next call starts from the share this one needed: the GPU gives every result.
    compare_dense("hit heavy, many chunks again", &mut gpu, &segments, &rects);
    let again = gpu.last_gpu_call().expect("a GPU call");
    assert_eq!(again.decided_on_host, 0, "{again:?}");
    // A pair list the same way.
    let list = random_pairs(42, 30_000, segments.len(), rects.len());
    compare_list("hit heavy list", &mut gpu, &segments, &rects, &list);
}

/// A first hit's host time is accounted whole: checking the inputs and planning the grid
/// (`preparing`) as well as submitting, waiting and merging, which add up to no more than the
/// call took.
#[test]
fn a_first_hits_host_parts_include_its_checks_and_grid_plan_and_fit_in_the_call() {
    let Some(mut gpu) = gpu_engine("host parts", GpuLimits::default()) else {
        return;
    };
    let (segments, rects) = rectcast::scene::bullet_hell(51, 20_000, 2_000);
    let batch = rectcast::Batch::new(&segments, &rects);
    gpu.set_broad_phase(rectcast::BroadPhase::On);
    let started = std::time::Instant::now();
    let first = gpu.first_hit(&batch).expect("first hits");
    let took = started.elapsed();
    assert_eq!(first, cpu_engine().first_hit(&batch).expect("cpu"));
    let call = gpu.last_gpu_call().expect("a GPU call");
    assert!(call.preparing > std::time::Duration::ZERO, "{call:?}");
    let parts = call.preparing + call.submitting + call.waiting + call.merging;
    assert!(
        parts <= took,
        "{call:?} add up to more than the call's {took:?}"
    );
}

/// An engine compiles the query kernels when it opens and nothing else until a call needs it:
/// a first hit opens no pairs' or grid's pipelines (on lavapipe they are most of a process's
/// fixed cost: `rectcast first-hit --backend gpu` on one pair went from 0.7 to 0.2 s).
#[test]
fn an_engine_compiles_only_the_kernels_its_calls_need() {
    let Some(context) = own_context("compiles_what_it_needs") else {
        return;
    };
    let mut gpu = Engine::gpu(context.clone(), GpuLimits::default()).expect("an engine");
    assert_eq!(context.kernel_compilations(), 1, "the query kernels only");
    assert_eq!(
        context.pipeline_compilations(),
        0,
        "no pipeline before a call"
    );
    let (segments, rects) = random_batch(43, 600, 200, 100.0);
    let batch = rectcast::Batch::new(&segments, &rects);
    gpu.set_broad_phase(rectcast::BroadPhase::Off);
    let first = gpu.first_hit(&batch).expect("first hits");
    assert_eq!(first, cpu_engine().first_hit(&batch).expect("cpu"));
    assert_eq!(
        context.kernel_compilations(),
        1,
        "a first hit compiled more"
    );
    assert_eq!(context.pipeline_compilations(), 1, "a first hit's pipeline");
    gpu.first_hit(&batch).expect("first hits again");
    assert_eq!(context.pipeline_compilations(), 1, "built again");
    let hits = gpu.hits(&batch).expect("hits");
    assert_eq!(hits, cpu_engine().hits(&batch).expect("cpu"));
    assert_eq!(
        context.pipeline_compilations(),
        4,
        "the hit list's three steps (a fourth orders a grid walk's)"
    );
    compare_dense("pairs", &mut gpu, &segments, &rects);
    assert_eq!(context.kernel_compilations(), 2, "the pairs' kernels");
    gpu.set_broad_phase(rectcast::BroadPhase::On);
    let walked = gpu.first_hit(&batch).expect("first hits through the grid");
    assert!(gpu.used_broad_phase(), "the grid was walked");
    assert_eq!(walked, first);
    assert_eq!(context.kernel_compilations(), 3, "the grid's kernels");
}
