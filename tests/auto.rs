//! `Backend::Auto` chooses per call from its cost model (`AutoCosts`): a call the CPU finishes
//! before a GPU could open opens none; one the model places on the GPU opens it and gives the
//! CPU's bytes; once open, each call still runs where the model places it; a software GPU is
//! refused once and never tried again; a frame loop opens the GPU when a frame is sooner
//! there. The choices are costs set by the test, never timings.

mod common;

use common::{cpu_engine, gpu_engine};
use rectcast::FrameCapacity;
use rectcast::{
    AutoCosts, Backend, Batch, BroadPhase, Chosen, CpuOptions, Engine, Family, FirstHit, FrameLoop,
    GpuContext, GpuLimits, Segment, TestCost, scene,
};
use std::time::Duration;

/// Costs under which `family` is far sooner on an open GPU, which opens at no cost, software
/// or not; every other family stays on the CPU.
fn gpu_costs(family: Family) -> AutoCosts {
    let mut costs = AutoCosts {
        gpu_open: Duration::ZERO,
        gpu_call: Duration::ZERO,
        software_gpu: true,
        ..AutoCosts::default()
    };
    for other in Family::ALL {
        *costs.test_mut(other) = TestCost {
            cpu_ns: 1.0,
            gpu_ns: 1e6,
        };
    }
    *costs.test_mut(family) = TestCost {
        cpu_ns: 1e6,
        gpu_ns: 1.0,
    };
    costs
}

fn auto_engine(costs: AutoCosts) -> Engine {
    let mut engine =
        Engine::with_cpu_options(Backend::Auto, CpuOptions::threads(2)).expect("an auto engine");
    engine.set_auto_costs(costs);
    engine
}

#[test]
fn one_bullet_against_one_box_runs_on_the_cpu_and_opens_no_device() {
    let mut engine = auto_engine(AutoCosts::default());
    assert!(engine.last_choice().is_none());
    let bullets = [Segment::new(-5.0, 2.0, 15.0, 8.0)];
    let boxes = [rectcast::Rect::new(0.0, 0.0, 10.0, 10.0)];
    let first = engine.first_hit(&Batch::new(&bullets, &boxes)).unwrap();
    assert_eq!(first[0].rect(), Some(0));
    assert!(engine.gpu_context().is_none(), "a device was opened");
    let choice = engine.last_choice().expect("a choice").clone();
    assert!(
        !choice.gpu && choice.cpu < choice.gpu_estimate,
        "{choice:?}"
    );
    // The opening is in the GPU's estimate: 250 ms by default.
    assert!(
        choice.gpu_estimate >= Duration::from_millis(250),
        "{choice:?}"
    );
    match engine.chosen() {
        Chosen::Cpu {
            reason: Some(why), ..
        } => assert!(why.starts_with("auto: first_hits, "), "{why}"),
        other => panic!("expected the CPU and why, got {other}"),
    }
    assert!(engine.last_gpu_call().is_none());
}

#[test]
fn a_call_placed_on_the_gpu_opens_it_and_gives_the_cpus_bytes_and_a_small_one_stays_on_the_cpu() {
    let test = "a_call_placed_on_the_gpu_opens_it";
    if gpu_engine(test, GpuLimits::default()).is_none() {
        return;
    }
    let mut engine = auto_engine(gpu_costs(Family::FirstHits));
    let (bullets, boxes) = scene::bullet_hell(32, 3000, 700);
    let batch = Batch::new(&bullets, &boxes);
    let want = cpu_engine().first_hit(&batch).unwrap();
    let got = engine.first_hit(&batch).expect("first hits");
    assert!(engine.gpu_context().is_some(), "{}", engine.chosen());
    assert!(
        matches!(engine.chosen(), Chosen::Gpu(_)),
        "{}",
        engine.chosen()
    );
    assert!(engine.last_choice().unwrap().gpu);
    assert!(engine.last_gpu_call().is_some(), "the call ran on the CPU");
    assert_first_hits_equal("first hits placed on the GPU", &bullets, &want, &got);

    // The GPU open: counts (placed on the GPU too) and hits (on the CPU) give the CPU's.
    let counts = engine.counts(&batch).unwrap();
    assert!(engine.last_gpu_call().is_some(), "counts ran on the CPU");
    assert_eq!(counts, cpu_engine().counts(&batch).unwrap());
    let hits = engine.hits(&batch).unwrap();
    assert!(engine.last_gpu_call().is_none(), "hits ran on the GPU");
    assert!(!engine.last_choice().unwrap().gpu);
    assert!(
        matches!(engine.chosen(), Chosen::Cpu { .. }),
        "{}",
        engine.chosen()
    );
    assert_eq!(hits, cpu_engine().hits(&batch).unwrap());

    // A shape's first hits run on the host, the CPU's own path, its grid (no GPU compile, no
    // GPU chunk, no brute force).
    let walls: Vec<Segment> = boxes
        .iter()
        .map(|b| Segment::new(b.min_x, b.min_y, b.max_x, b.max_y))
        .collect();
    engine.set_broad_phase(BroadPhase::Off);
    engine.first_hit(&batch).unwrap();
    assert!(!engine.used_broad_phase());
    engine.set_broad_phase(BroadPhase::On);
    let got = engine.shape_first_hits(&bullets, &walls).unwrap();
    let chunks = engine.last_gpu_call().map_or(0, |call| call.chunks);
    assert_eq!(chunks, 0, "walls ran on the GPU");
    assert!(
        engine.used_broad_phase(),
        "walls ran without their CPU grid"
    );
    let want = cpu_engine().shape_first_hits(&bullets, &walls).unwrap();
    assert_eq!(got, want);

    // A frame loop on this engine, its GPU open, whose frames the model puts on the CPU.
    engine.set_auto_costs(gpu_costs(Family::Hits));
    let frames = FrameLoop::new(engine, FrameCapacity::new(3000, 700)).unwrap();
    let chosen = frames.chosen().to_string();
    assert!(chosen.starts_with("cpu"), "{chosen}");
}

#[test]
fn a_software_gpu_is_refused_once_and_never_tried_again() {
    let test = "a_software_gpu_is_refused_once";
    let Some(probe) = gpu_engine(test, GpuLimits::default()) else {
        return;
    };
    let software = probe.gpu_context().is_some_and(GpuContext::is_software);
    let costs = AutoCosts {
        software_gpu: false,
        ..gpu_costs(Family::FirstHits)
    };
    let mut engine = auto_engine(costs);
    let (bullets, boxes) = scene::bullet_hell(33, 500, 100);
    let batch = Batch::new(&bullets, &boxes);
    let want = cpu_engine().first_hit(&batch).unwrap();
    for call in 0..2 {
        let got = engine.first_hit(&batch).unwrap();
        assert_first_hits_equal(&format!("call {call}"), &bullets, &want, &got);
        let choice = engine.last_choice().unwrap().clone();
        if software {
            let why = choice.refused.expect("refused");
            assert!(why.contains("is a software one"), "{why}");
            assert!(engine.gpu_context().is_none() && !choice.gpu);
            assert!(engine.chosen().to_string().contains("software"));
        } else {
            assert!(choice.gpu && engine.gpu_context().is_some(), "{choice:?}");
        }
    }
}

#[test]
fn a_frame_loop_opens_the_gpu_when_a_frame_is_sooner_there_and_stays_on_the_cpu_otherwise() {
    let test = "a_frame_loop_opens_the_gpu";
    let capacity = FrameCapacity::new(2000, 400);
    let on_cpu = FrameLoop::new(auto_engine(AutoCosts::default()), capacity).unwrap();
    // Default costs: a 2,000 × 400 frame is sooner on the CPU than a GPU call's fixed cost.
    assert!(
        on_cpu.chosen().to_string().starts_with("cpu"),
        "{}",
        on_cpu.chosen()
    );
    if gpu_engine(test, GpuLimits::default()).is_none() {
        return;
    }
    let costs = AutoCosts {
        gpu_open: Duration::from_secs(3600),
        ..gpu_costs(Family::FirstHits)
    };
    let mut frames = FrameLoop::new(auto_engine(costs), capacity).unwrap();
    assert!(
        frames.chosen().to_string().starts_with("gpu"),
        "{}",
        frames.chosen()
    );
    let (bullets, boxes) = scene::bullet_hell(34, 2000, 400);
    let batch = Batch::new(&bullets, &boxes);
    frames.write(&batch).unwrap();
    let id = frames.dispatch().unwrap();
    let mut got = vec![FirstHit::NONE; bullets.len()];
    frames.read(id, &mut got).unwrap();
    let want = cpu_engine().first_hit(&batch).unwrap();
    assert_first_hits_equal("a GPU frame", &bullets, &want, &got);
}

fn assert_first_hits_equal(what: &str, bullets: &[Segment], want: &[FirstHit], got: &[FirstHit]) {
    assert_eq!(want.len(), got.len(), "{what}");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what}: segment {i} {:?}: want {:?}, got {:?}",
            bullets[i], want[i], got[i]
        );
    }
}
