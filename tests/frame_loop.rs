//! One frame loop for both backends (`FrameLoop`): the same calls give the same first hits on
//! the CPU and on a GPU, frame after frame, read a frame late, with a bad bullet skipped; and
//! the same misuse gets the same error on both; and a frame the GPU does not finish in time, or
//! one on a lost device, is answered on the CPU fallback.

mod common;

use common::{cpu_engine, gpu_engine};
use rectcast::FrameCapacity;
use rectcast::{
    Batch, Cancel, CpuOptions, Engine, Error, FirstHit, FrameLoop, GpuLimits, Segment, WaitLimit,
    scene,
};
use std::time::Duration;

/// Frame `k`'s bullets and hitboxes: a bullet-hell scene, with a NaN bullet in odd frames.
fn frame(k: u64) -> (Vec<Segment>, Vec<rectcast::Rect>) {
    let (mut bullets, hitboxes) = scene::bullet_hell(k, 3000 + 100 * k as usize, 1500);
    if k % 2 == 1 {
        bullets[k as usize * 7].y0 = f32::NAN;
    }
    (bullets, hitboxes)
}

/// Runs 6 frames through `frames`, reading each one a frame late, and checks each against the
/// engine's own first hits on the CPU, element by element.
fn assert_loop_answers(what: &str, mut frames: FrameLoop) {
    let mut reference = cpu_engine();
    let mut previous: Option<(_, Vec<FirstHit>)> = None;
    let mut hits = 0;
    for k in 0..7u64 {
        let last = k == 6;
        let id = if last {
            None
        } else {
            let (bullets, hitboxes) = frame(k);
            let batch = Batch::new(&bullets, &hitboxes).skip_invalid();
            frames.write(&batch).expect("written");
            let skipped = frames.last_skipped().segments.len();
            assert_eq!(
                skipped,
                (k % 2) as usize,
                "{what}: frame {k}'s skipped bullets"
            );
            let want = reference.first_hit(&batch).expect("the reference");
            Some((frames.dispatch().expect("dispatched"), want))
        };
        if let Some((id, want)) = previous.take() {
            let mut got = vec![FirstHit::NONE; want.len()];
            frames.read(id, &mut got).expect("read");
            if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
                panic!(
                    "{what}: frame {}: segment {i}: want {:?}, got {:?}",
                    k - 1,
                    want[i],
                    got[i]
                );
            }
            hits += got.iter().filter(|h| h.rect != FirstHit::NO_RECT).count();
        }
        previous = id;
    }
    assert!(
        hits > 1000,
        "{what}: {hits} hits in six frames prove little"
    );
}

#[test]
fn one_loop_gives_the_references_first_hits_on_the_cpu() {
    let frames = FrameLoop::new(cpu_engine(), FrameCapacity::new(4000, 1500)).expect("a loop");
    assert!(frames.chosen().to_string().starts_with("cpu"));
    assert_loop_answers("cpu", frames);
}

#[test]
fn one_loop_gives_the_references_first_hits_on_the_gpu() {
    let Some(gpu) = gpu_engine("one_loop_on_the_gpu", GpuLimits::default()) else {
        return;
    };
    let frames = FrameLoop::new(gpu, FrameCapacity::new(4000, 1500)).expect("a loop");
    assert!(frames.chosen().to_string().starts_with("gpu"));
    assert_loop_answers("gpu", frames);
}

/// The errors of misuse, by variant name, in order: dispatch with nothing written, a frame
/// over the capacity, a full ring, a wrong-sized output, a frame read twice.
fn misuse(engine: Engine) -> Vec<String> {
    let capacity = FrameCapacity {
        ring: 2,
        ..FrameCapacity::new(100, 10)
    };
    let mut frames = FrameLoop::new(engine, capacity).expect("a loop");
    let (bullets, hitboxes) = scene::bullet_hell(1, 100, 10);
    let batch = Batch::new(&bullets, &hitboxes);
    let name = |e: Error| {
        format!("{e:?}")
            .split([' ', '(', '{'])
            .next()
            .unwrap_or("")
            .to_string()
    };
    let mut errors = vec![name(frames.dispatch().expect_err("nothing written"))];
    let (more, _) = scene::bullet_hell(2, 101, 10);
    errors.push(name(
        frames
            .write(&Batch::new(&more, &hitboxes))
            .expect_err("over capacity"),
    ));
    let mut ids = Vec::new();
    for _ in 0..2 {
        frames.write(&batch).expect("written");
        ids.push(frames.dispatch().expect("dispatched"));
    }
    errors.push(name(frames.write(&batch).expect_err("the ring is full")));
    let mut out = vec![FirstHit::NONE; 100];
    errors.push(name(
        frames.read(ids[0], &mut out[..99]).expect_err("wrong size"),
    ));
    frames.read(ids[0], &mut out).expect("read");
    errors.push(name(frames.read(ids[0], &mut out).expect_err("read twice")));
    frames.write(&batch).expect("a slot is free again");
    errors
}

#[test]
fn the_same_misuse_gets_the_same_error_on_both_backends() {
    let cpu = misuse(cpu_engine());
    assert_eq!(
        cpu,
        [
            "NothingWritten",
            "FrameCapacity",
            "RingFull",
            "OutputLength",
            "UnknownFrame"
        ]
    );
    if let Some(gpu) = gpu_engine("the_same_misuse_on_the_gpu", GpuLimits::default()) {
        assert_eq!(misuse(gpu), cpu);
    }
}

/// A frame written, then a write refused for a NaN bullet: the first frame is still the one
/// dispatched, and nothing is listed as skipped; the same on both backends.
fn refused_write_keeps_the_frame(what: &str, engine: Engine) {
    let mut frames = FrameLoop::new(engine, FrameCapacity::new(4000, 1500)).expect("a loop");
    let (bullets, hitboxes) = frame(1);
    let skipping = Batch::new(&bullets, &hitboxes).skip_invalid();
    frames.write(&skipping).expect("written");
    assert_eq!(frames.last_skipped().count(), 1, "{what}");
    let strict = Batch::new(&bullets, &hitboxes);
    assert!(
        matches!(frames.write(&strict), Err(Error::Input(_))),
        "{what}"
    );
    assert!(
        frames.last_skipped().is_empty(),
        "{what}: a refused write skipped nothing"
    );
    let id = frames.dispatch().expect("the first frame is still written");
    let mut got = vec![FirstHit::NONE; bullets.len()];
    frames.read(id, &mut got).expect("read");
    let want = cpu_engine().first_hit(&skipping).expect("the reference");
    assert!(
        want == got,
        "{what}: the dispatched frame is not the one written first"
    );
}

#[test]
fn a_refused_write_keeps_the_frame_written_before_it_on_both_backends() {
    refused_write_keeps_the_frame("cpu", cpu_engine());
    if let Some(gpu) = gpu_engine("a_refused_write_on_the_gpu", GpuLimits::default()) {
        refused_write_keeps_the_frame("gpu", gpu);
    }
}

/// The first segment where two frames' first hits differ, with its inputs, as a panic.
fn assert_same_first_hits(what: &str, batch: &Batch, want: &[FirstHit], got: &[FirstHit]) {
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what}: segment {i} {:?}: want {:?}, got {:?}",
            batch.segments[i], want[i], got[i]
        );
    }
}

/// Frames that grow until one times out: lavapipe runs much of a submission inside the
/// submitting call, and a fast GPU finishes a small frame at once, so each frame finished in
/// time is followed by a larger one.
const GROWING_FRAMES: usize = 10;

/// Frame `k` of those: 10,000 bullets, doubling up to 640,000, against 1,500 boxes.
fn growing_frame(k: usize) -> (Vec<Segment>, Vec<rectcast::Rect>) {
    let scale = 1 << k.min(6);
    scene::bullet_hell(k as u64, 10_000 * scale, 1500)
}

/// Growing frame `k`, written and dispatched behind busy work: with nothing ahead of them an
/// H200 finished frames of up to 640k bullets before the first look (and all ten in 1 run of
/// 6); see `keep_the_gpu_busy` for what the work buys. Its id and inputs.
fn dispatch_growing(
    frames: &mut FrameLoop,
    k: usize,
) -> (
    rectcast::gpu::frames::FrameId,
    Vec<Segment>,
    Vec<rectcast::Rect>,
) {
    common::keep_the_gpu_busy(frames.engine_mut().gpu_context().expect("on the GPU"));
    let (bullets, hitboxes) = growing_frame(k);
    frames
        .write(&Batch::new(&bullets, &hitboxes))
        .expect("written");
    let id = frames.dispatch().expect("dispatched");
    (id, bullets, hitboxes)
}

/// No time at all to wait: a frame the GPU has not finished at the first look times out.
fn no_wait() -> GpuLimits {
    GpuLimits {
        wait: Some(WaitLimit {
            base: Duration::ZERO,
            per_gigapair: Duration::ZERO,
        }),
        ..GpuLimits::default()
    }
}

/// scripts/test.sh: native only (how a frame is answered after a timeout, which no emulated
/// arithmetic changes: the loop's answers run under each in the tests above).
#[test]
fn a_frame_the_gpu_does_not_finish_in_time_is_answered_on_the_cpu_fallback_and_says_so() {
    let Some(engine) = gpu_engine("frame fallback", no_wait()) else {
        return;
    };
    let engine = engine
        .with_cpu_fallback(CpuOptions::default())
        .expect("a fallback");
    let mut frames = FrameLoop::new(engine, FrameCapacity::new(640_000, 1500)).expect("a loop");
    let mut reference = cpu_engine();
    let mut fell_back = false;
    for k in 0..GROWING_FRAMES {
        let (id, bullets, hitboxes) = dispatch_growing(&mut frames, k);
        let batch = Batch::new(&bullets, &hitboxes);
        let mut got = vec![FirstHit::NONE; bullets.len()];
        frames
            .read(id, &mut got)
            .expect("with a fallback, a read never times out");
        let want = reference.first_hit(&batch).expect("the reference");
        assert_same_first_hits(&format!("frame {k}"), &batch, &want, &got);
        if let Some(reason) = frames.last_fallback() {
            assert!(reason.contains("did not finish a frame"), "{reason}");
            assert!(reason.contains("this frame ran on the CPU"), "{reason}");
            // Answered is read: a second read is refused, as after any read.
            assert!(
                matches!(frames.read(id, &mut got), Err(Error::UnknownFrame(_))),
                "a frame answered on the CPU read again"
            );
            fell_back = true;
            break;
        }
    }
    assert!(
        fell_back,
        "ten frames up to 640k bullets, each behind busy work, and none timed out"
    );
    // With time to wait, the GPU answers again, in every slot of the ring: the one whose frame
    // the CPU answered is freed once the GPU is done with it.
    frames.set_gpu_wait(WaitLimit::default());
    for k in 0..4u64 {
        let (bullets, hitboxes) = scene::bullet_hell(100 + k, 20_000, 1500);
        let batch = Batch::new(&bullets, &hitboxes);
        frames.write(&batch).expect("the ring has room again");
        let id = frames.dispatch().expect("dispatched");
        let mut got = vec![FirstHit::NONE; bullets.len()];
        frames.read(id, &mut got).expect("read");
        assert_eq!(frames.last_fallback(), None, "frame {k} after the fallback");
        let want = reference.first_hit(&batch).expect("the reference");
        assert_same_first_hits(&format!("frame {k} after"), &batch, &want, &got);
    }
}

/// A loop of 20,000 bullets × 1,500 boxes on a GPU engine with a CPU fallback, on a device of
/// the test's own (to lose), and the device.
fn loop_on_own_device(test: &str) -> Option<(FrameLoop, rectcast::wgpu::Device)> {
    let (context, device) = common::own_gpu_context(test)?;
    let engine = Engine::gpu(context, GpuLimits::default())
        .expect("an engine")
        .with_cpu_fallback(CpuOptions::default())
        .expect("a fallback");
    let frames = FrameLoop::new(engine, FrameCapacity::new(20_000, 1500)).expect("a loop");
    Some((frames, device))
}

/// scripts/test.sh: native only (a lost device, which no emulated arithmetic changes).
#[test]
fn a_frame_on_a_device_lost_before_its_read_is_answered_on_the_cpu_fallback() {
    let Some((mut frames, device)) = loop_on_own_device("lost device") else {
        return;
    };
    let (bullets, hitboxes) = scene::bullet_hell(7, 20_000, 1500);
    let batch = Batch::new(&bullets, &hitboxes);
    frames.write(&batch).expect("written");
    let id = frames.dispatch().expect("dispatched");
    device.destroy();
    let mut got = vec![FirstHit::NONE; bullets.len()];
    frames
        .read(id, &mut got)
        .expect("a lost device's frame answered on the CPU");
    let reason = frames.last_fallback().expect("the read says it fell back");
    assert!(reason.contains("lost"), "{reason}");
    assert!(reason.contains("this frame ran on the CPU"), "{reason}");
    let want = cpu_engine().first_hit(&batch).expect("the reference");
    assert_same_first_hits("the lost device's frame", &batch, &want, &got);
}

/// A game's device lost in the middle of its loop: the frame in flight is answered on the CPU
/// when read, and the loop goes on with every later frame on the CPU (written, dispatched and
/// read as before, read a frame late), each the CPU's answer.
///
/// scripts/test.sh: native only (a lost device, which no emulated arithmetic changes).
#[test]
fn after_its_device_is_lost_a_frame_loop_goes_on_on_the_cpu_fallback() {
    let Some((mut frames, device)) = loop_on_own_device("lost mid-loop") else {
        return;
    };
    let mut reference = cpu_engine();
    let mut previous: Option<(_, Vec<FirstHit>, Batch)> = None;
    let scenes: Vec<_> = (0..5)
        .map(|k| scene::bullet_hell(200 + k, 20_000, 1500))
        .collect();
    for (k, (bullets, hitboxes)) in scenes.iter().enumerate() {
        let batch = Batch::new(bullets, hitboxes);
        if k == 2 {
            device.destroy();
        }
        frames
            .write(&batch)
            .unwrap_or_else(|e| panic!("frame {k} written: {e}"));
        let id = frames
            .dispatch()
            .unwrap_or_else(|e| panic!("frame {k} dispatched: {e}"));
        let want = reference.first_hit(&batch).expect("the reference");
        if let Some((id, want, batch)) = previous.replace((id, want, batch)) {
            let mut got = vec![FirstHit::NONE; want.len()];
            frames
                .read(id, &mut got)
                .unwrap_or_else(|e| panic!("frame {} read: {e}", k - 1));
            assert_same_first_hits(&format!("frame {}", k - 1), &batch, &want, &got);
        }
    }
    let (id, want, batch) = previous.expect("the last frame");
    let mut got = vec![FirstHit::NONE; want.len()];
    frames.read(id, &mut got).expect("the last frame read");
    assert_same_first_hits("the last frame", &batch, &want, &got);
    let reason = frames
        .last_fallback()
        .expect("the last read says it ran on the CPU");
    assert!(reason.contains("lost"), "{reason}");
}

/// scripts/test.sh: native only (a cancelled fallback, which no emulated arithmetic changes).
#[test]
fn a_cancelled_engine_does_not_answer_a_timed_out_frame_and_the_frame_stays_readable() {
    let Some(engine) = gpu_engine("cancelled fallback", no_wait()) else {
        return;
    };
    let mut engine = engine
        .with_cpu_fallback(CpuOptions::default())
        .expect("a fallback");
    let cancel = Cancel::new();
    engine.set_cancel(Some(cancel.clone()));
    cancel.cancel();
    let mut frames = FrameLoop::new(engine, FrameCapacity::new(640_000, 1500)).expect("a loop");
    let mut reference = cpu_engine();
    for k in 0..GROWING_FRAMES {
        let (id, bullets, hitboxes) = dispatch_growing(&mut frames, k);
        let batch = Batch::new(&bullets, &hitboxes);
        let mut got = vec![FirstHit::NONE; bullets.len()];
        match frames.read(id, &mut got) {
            // In time: the GPU's answer.
            Ok(()) => assert_eq!(frames.last_fallback(), None, "frame {k}"),
            Err(Error::Cancelled) => {
                // Not answered: with the cancel gone and time to wait, the GPU's answer.
                frames.engine_mut().set_cancel(None);
                frames.set_gpu_wait(WaitLimit::default());
                frames.read(id, &mut got).expect("the frame is still there");
                assert_eq!(frames.last_fallback(), None);
                let want = reference.first_hit(&batch).expect("the reference");
                assert_same_first_hits(&format!("frame {k}"), &batch, &want, &got);
                return;
            }
            Err(e) => panic!("frame {k}: {e}"),
        }
    }
    panic!("ten frames up to 640k bullets, and none timed out");
}

#[allow(dead_code, reason = "the example's main is not run here")]
#[path = "../examples/bullets.rs"]
mod bullets;

/// The bullets example's game as one scene: each kind the level's then the enemies' (the
/// scene the layers' answer is defined as).
fn one_scene(game: &bullets::Game) -> rectcast::Targets {
    let mut scene = rectcast::Targets::new();
    scene.set_walls(&game.walls).unwrap();
    scene
        .set_rects(&[&game.crates[..], &game.enemy_boxes[..]].concat())
        .unwrap();
    scene.set_circles(&game.enemy_circles).unwrap();
    scene.set_polygons(rectcast::Polygons::from_rings([&game.building[..]]).unwrap());
    scene
}

/// Plays the bullets example on `engine` and holds every frame's first hits to the engine's
/// first hits over the same frame as one scene on the CPU, element by element.
fn assert_bullets_example_answers(what: &str, engine: Engine) {
    use rectcast::TargetKind;
    let mut reference = cpu_engine();
    let mut game = bullets::Game::new(600).unwrap();
    let mut by_kind = [0usize; 4];
    let mut frame = 0;
    bullets::play(engine, &mut game, 40, |game, moves, first| {
        let scene = one_scene(game);
        let want = reference
            .target_first_hits(&rectcast::TargetBatch::over(moves, &scene))
            .unwrap();
        for (i, (got, want)) in first.iter().zip(&want).enumerate() {
            // A layer-1 rect is the scene's rect after the level's crates.
            let got = got.map(|h| {
                let after = match (h.layer, h.hit.kind()) {
                    (1, TargetKind::Rect) => game.crates.len() as u32,
                    _ => 0,
                };
                (h.hit.kind(), h.hit.target + after, h.hit.contact)
            });
            let want = want.map(|h| (h.kind(), h.target, h.contact));
            assert_eq!(
                got, want,
                "{what}: frame {frame}, bullet {i} {:?}: the first difference",
                moves[i]
            );
            if let Some((kind, ..)) = got {
                by_kind[kind as usize] += 1;
            }
        }
        frame += 1;
    })
    .unwrap();
    // The game tests what it says: bullets hit every kind, enemies of both layers' kinds.
    assert!(
        by_kind.iter().all(|&n| n > 10),
        "{what}: hits by kind {by_kind:?}"
    );
}

#[test]
fn the_bullets_examples_game_loop_gives_the_scenes_first_hits_on_the_cpu() {
    assert_bullets_example_answers("cpu", cpu_engine());
}

#[test]
fn the_bullets_examples_game_loop_gives_the_scenes_first_hits_on_the_gpu() {
    let test = "the_bullets_examples_game_loop_gives_the_scenes_first_hits_on_the_gpu";
    if let Some(engine) = gpu_engine(test, GpuLimits::default()) {
        assert_bullets_example_answers("gpu", engine);
    }
}
