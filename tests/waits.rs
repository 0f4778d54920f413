//! Every GPU wait is bounded: past its `WaitLimit` a call returns `Error::Timeout` naming the
//! step, never hangs, and the engine serves the next call; with a CPU fallback (what
//! `Backend::Auto` engines have) the call runs on the CPU instead and says so.

mod common;

use std::time::Duration;

use common::{cpu_engine, gpu_engine};
use rectcast::scene::{bullet_hell, random_batch};
use rectcast::{Batch, CpuOptions, Error, GpuLimits, WaitLimit};

/// No time at all: any step that is not already done times out.
const NO_WAIT: WaitLimit = WaitLimit {
    base: Duration::ZERO,
    per_gigapair: Duration::ZERO,
};

fn impatient() -> GpuLimits {
    GpuLimits {
        wait: Some(NO_WAIT),
        ..GpuLimits::default()
    }
}

/// Calls `attempt` until it reports a timeout: with no time at all, a step times out unless
/// the GPU finished it before the first look (lavapipe runs much of a submission inside the
/// submitting call, and a machine with many cores finishes a small batch quickly). So each
/// call that finishes in time makes the next batch larger: `attempt` gets the scale, 1, 2,
/// 4, … up to `max_scale`, and checks every outcome itself.
fn until_a_timeout(what: &str, max_scale: usize, mut attempt: impl FnMut(usize) -> bool) {
    let mut scale = 1;
    for _ in 0..30 {
        if attempt(scale) {
            return;
        }
        scale = (scale * 2).min(max_scale);
    }
    panic!(
        "{what}: 30 calls with no time to wait (up to {max_scale}x the batch), and none timed out"
    );
}

#[test]
fn a_tiny_wait_limit_on_a_large_batch_times_out_and_the_next_call_works() {
    let Some(mut gpu) = gpu_engine("timeout", impatient()) else {
        return;
    };
    until_a_timeout("dense pairs", 8, |scale| {
        let (segments, rects) = random_batch(3, 1500 * scale, 1000, 1.0e3);
        match gpu.pairs(&segments, &rects) {
            Err(Error::Timeout { step, waited }) => {
                assert_eq!(step, "a chunk of dense pairs");
                assert_eq!(waited, Duration::ZERO);
                true
            }
            Ok(got) => {
                let want = cpu_engine().pairs(&segments, &rects).expect("cpu");
                let inputs = common::dense_inputs(&segments, &rects);
                common::assert_same_results("in time", &want, &got, 0, &inputs);
                false
            }
            Err(e) => panic!("expected a timeout or the results, got {e}"),
        }
    });
    until_a_timeout("first hit", 64, |scale| {
        let (bullets, boxes) = bullet_hell(4, 10_000 * scale, 1000);
        let batch = Batch::new(&bullets, &boxes);
        match gpu.first_hit(&batch) {
            Err(Error::Timeout { step, .. }) => {
                assert_eq!(step, "a first-hit chunk");
                true
            }
            Ok(got) => {
                let want = cpu_engine().first_hit(&batch).expect("cpu");
                assert!(
                    bytemuck::cast_slice::<_, u8>(&got) == bytemuck::cast_slice::<_, u8>(&want),
                    "a first hit in time differs from the CPU's"
                );
                false
            }
            Err(e) => panic!("expected a timeout or the results, got {e}"),
        }
    });
    let (segments, rects) = random_batch(3, 1500, 1000, 1.0e3);
    let want = cpu_engine().pairs(&segments, &rects).expect("cpu");
    let inputs = common::dense_inputs(&segments, &rects);
    let (bullets, boxes) = bullet_hell(4, 10_000, 1000);
    let batch = Batch::new(&bullets, &boxes);
    let want_first = cpu_engine().first_hit(&batch).expect("cpu");
    let same = |got: &[rectcast::FirstHit]| {
        bytemuck::cast_slice::<_, u8>(got) == bytemuck::cast_slice::<_, u8>(&want_first)
    };
    // The same engine, with time to finish: every result, byte for byte the CPU's.
    gpu.set_gpu_wait(WaitLimit::default());
    let got = gpu.pairs(&segments, &rects).expect("the next call works");
    common::assert_same_results("after a timeout", &want, &got, 0, &inputs);
    let first = gpu.first_hit(&batch).expect("first hit after a timeout");
    assert!(
        same(&first),
        "first hit after a timeout differs from the CPU's"
    );
}

#[test]
fn with_a_cpu_fallback_a_timed_out_call_runs_on_the_cpu_and_says_so() {
    let Some(gpu) = gpu_engine("fallback", impatient()) else {
        return;
    };
    let mut gpu = gpu.with_cpu_fallback(CpuOptions::default()).expect("cpu");
    until_a_timeout("counts", 64, |scale| {
        let (bullets, boxes) = bullet_hell(5, 10_000 * scale, 1000);
        let batch = Batch::new(&bullets, &boxes);
        let want = cpu_engine().counts(&batch).expect("cpu");
        // Never an error: the CPU takes over, with the same counts.
        let counts = gpu.counts(&batch).expect("falls back instead of failing");
        assert_eq!(counts.per_segment, want.per_segment);
        assert_eq!(counts.per_target, want.per_target);
        match gpu.last_fallback() {
            Some(reason) => {
                assert!(reason.contains("did not finish a counts chunk"), "{reason}");
                assert!(reason.contains("this call ran on the CPU"), "{reason}");
                true
            }
            None => false,
        }
    });
    let (bullets, boxes) = bullet_hell(5, 10_000, 1000);
    let batch = Batch::new(&bullets, &boxes);
    let want = cpu_engine().counts(&batch).expect("cpu");
    // With time enough, the GPU again, and no fallback to report.
    gpu.set_gpu_wait(WaitLimit::default());
    let again = gpu.counts(&batch).expect("gpu");
    assert_eq!(gpu.last_fallback(), None);
    assert_eq!(again.per_target, want.per_target);
}

#[test]
fn a_timeout_in_a_call_of_many_chunks_leaves_the_engine_serving_the_next() {
    // 64 KiB bindings: 4,096 segments a chunk, up to three in flight. Whichever chunk's wait
    // gives up, every staging buffer's map ends (read, or cancelled): the next call maps them
    // again, and would fail on a buffer still mapped or pending. (On lavapipe the timeout
    // lands on the last chunk: a submission there completes by the end of the next one.)
    let limits = GpuLimits {
        max_binding_bytes: Some(64 << 10),
        ..impatient()
    };
    let Some(mut gpu) = gpu_engine("timeout in flight", limits) else {
        return;
    };
    let (bullets, boxes) = bullet_hell(5, 40_000, 1000);
    let batch = Batch::new(&bullets, &boxes);
    let want = cpu_engine().first_hit(&batch).expect("cpu");
    let same = |got: &[rectcast::FirstHit]| {
        bytemuck::cast_slice::<_, u8>(got) == bytemuck::cast_slice::<_, u8>(&want)
    };
    until_a_timeout("first hit in chunks", 1, |_| match gpu.first_hit(&batch) {
        Err(Error::Timeout { step, .. }) => {
            assert_eq!(step, "a first-hit chunk");
            true
        }
        Ok(got) => {
            assert!(same(&got), "a first hit in time differs from the CPU's");
            false
        }
        Err(e) => panic!("expected a timeout or the results, got {e}"),
    });
    gpu.set_gpu_wait(WaitLimit::default());
    let got = gpu.first_hit(&batch).expect("the next call works");
    assert!(
        same(&got),
        "first hit after a timeout differs from the CPU's"
    );
    let overlap = gpu.last_gpu_call().expect("on the GPU");
    assert!(overlap.submitted_before_first_read > 1, "{overlap:?}");
}

/// A game's own device, lost between two calls (`Device::destroy`), its error handler not set:
/// with a CPU fallback the next call runs on the CPU and says why, and nothing panics.
/// scripts/test.sh: native only (a lost device, which no emulated arithmetic changes).
#[test]
fn on_a_games_device_lost_between_calls_the_fallback_answers_and_nothing_panics() {
    let Some((context, device)) = common::own_gpu_context("lost between calls") else {
        return;
    };
    let mut gpu = rectcast::Engine::gpu(context, GpuLimits::default())
        .expect("an engine")
        .with_cpu_fallback(CpuOptions::default())
        .expect("a fallback");
    let (bullets, boxes) = bullet_hell(8, 20_000, 1000);
    let batch = Batch::new(&bullets, &boxes);
    let want = cpu_engine().first_hit(&batch).expect("cpu");
    let same = |got: &[rectcast::FirstHit]| {
        bytemuck::cast_slice::<_, u8>(got) == bytemuck::cast_slice::<_, u8>(&want)
    };
    assert!(
        same(&gpu.first_hit(&batch).expect("on the gpu")),
        "the GPU's first hits"
    );
    assert_eq!(gpu.last_fallback(), None);
    device.destroy();
    let got = gpu
        .first_hit(&batch)
        .expect("a lost device's call answered on the CPU");
    assert!(
        same(&got),
        "the fallback's first hits differ from the CPU's"
    );
    let reason = gpu.last_fallback().expect("the call says it fell back");
    assert!(reason.contains("lost"), "{reason}");
}

/// A polygon job of many chunks on a GPU far slower than the wait limit's one rate: a 200 × 1
/// strip whose long sides are unit edges, and segments along its bottom edge, so half the pairs
/// are collinear edges, the polygon kernel's slowest (15 µs a pair on lavapipe). With a limit
/// of 1 ms, the first chunk has its compilation allowance and every later one its kernel's
/// measured pace: the job finishes with the CPU's answer. (It failed on lavapipe at its second
/// chunk, `rectcast pairs --backend gpu` on a 2000 × 1 strip, with the default limit.)
/// scripts/test.sh: native only (how long chunks may wait, which no emulated arithmetic
/// changes).
#[test]
fn a_polygon_job_slower_than_the_wait_limits_rate_finishes_at_its_own_pace() {
    let limits = GpuLimits {
        // 64 KiB bindings: 4,096 pairs a chunk.
        max_binding_bytes: Some(64 << 10),
        wait: Some(WaitLimit {
            base: Duration::from_millis(1),
            per_gigapair: Duration::ZERO,
        }),
        ..GpuLimits::default()
    };
    let Some(mut gpu) = gpu_engine("slow polygons", limits) else {
        return;
    };
    let bottom = (0..=200).map(|x| [x as f32, 0.0]);
    let top = (0..=200).rev().map(|x| [x as f32, 1.0]);
    let strip: Vec<[f32; 2]> = bottom.chain(top).collect();
    let polygons = rectcast::Polygons::from_rings([&strip]).expect("a simple strip");
    let segments: Vec<rectcast::Segment> = (0..300)
        .map(|i| rectcast::Segment::new(-1.0 - i as f32, 0.0, 201.0 + i as f32, 0.0))
        .collect();
    let want = cpu_engine()
        .polygon_pairs(&segments, &polygons)
        .expect("cpu");
    let got = gpu
        .polygon_pairs(&segments, &polygons)
        .expect("a valid job finishes, however slow its kernel");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g, w,
            "segment {i} {:?}: the GPU's contact differs",
            segments[i]
        );
    }
    assert_eq!(got.len(), want.len());
    let call = gpu.last_gpu_call().expect("on the GPU");
    assert!(call.chunks > 3, "a job of many chunks: {call:?}");
}
