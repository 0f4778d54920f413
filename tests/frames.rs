//! The per-frame API as a game uses it: write, dispatch, read frame k during frame k + 1; the
//! caller's own encoder and shaders; and no allocation in steady state, counted by a global
//! allocator.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::cpu_engine;
use rectcast::gpu::frames::{FrameCapacity, Frames};
use rectcast::gpu::shader;
use rectcast::{
    Backend, Batch, CpuOptions, Engine, Error, FirstHit, GpuContext, PairResult, Rect, Segment,
    scene,
};

/// Counts the allocations of the thread that turned counting on (tests run in parallel).
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| {
                let (n, bytes) = a.get();
                a.set((n + 1, bytes + layout.size() as u64));
            });
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| {
                let (n, bytes) = a.get();
                a.set((n + 1, bytes + new_size as u64));
            });
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// (allocations, bytes) made by this thread while running `f`.
fn allocations(f: impl FnOnce()) -> (u64, u64) {
    ALLOCATIONS.with(|a| a.set((0, 0)));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

fn context(test: &str) -> Option<GpuContext> {
    match GpuContext::new() {
        Ok(context) => Some(context),
        Err(e) if std::env::var("RECTCAST_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("{test}: RECTCAST_REQUIRE_GPU=1 but no GPU could be opened: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: no GPU adapter ({e})");
            None
        }
    }
}

fn assert_same_first_hits(
    what: &str,
    segments: &[Segment],
    expected: &[FirstHit],
    actual: &[FirstHit],
) {
    // Byte for byte: the same rect, flags and correctly rounded t.
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        assert!(
            bytemuck::bytes_of(e) == bytemuck::bytes_of(a),
            "{what}: first difference at segment {i} {:?}: expected {e:?}, got {a:?}",
            segments[i]
        );
    }
    assert_eq!(expected.len(), actual.len(), "{what}: lengths");
}

fn frame(k: u64) -> (Vec<Segment>, Vec<Rect>) {
    // Frames change size too: 2000 to 2400 bullets.
    scene::bullet_hell(100 + k, 2000 + 100 * (k as usize % 5), 300)
}

#[test]
fn frame_k_is_read_during_frame_k_plus_one_and_equals_the_cpu_first_hit() {
    let Some(context) = context("frames") else {
        return;
    };
    let mut frames = Frames::new(&context, FrameCapacity::new(2400, 300)).expect("frames");
    let mut cpu = cpu_engine();
    let mut in_flight: Option<(u64, rectcast::gpu::frames::FrameId)> = None;
    let mut out = Vec::new();
    for k in 0..8 {
        let (segments, rects) = frame(k);
        frames.write(&Batch::new(&segments, &rects)).expect("write");
        let id = frames.dispatch().expect("dispatch");
        if let Some((previous, previous_id)) = in_flight {
            let (segments, rects) = frame(previous);
            out.resize(segments.len(), FirstHit::NONE);
            frames.read(previous_id, &mut out).expect("read");
            let expected = cpu.first_hit(&Batch::new(&segments, &rects)).expect("cpu");
            assert_same_first_hits(&format!("frame {previous}"), &segments, &expected, &out);
        }
        in_flight = Some((k, id));
    }
}

#[test]
fn a_game_loop_that_never_waits_gets_every_frame_with_try_read() {
    // The game's thread never blocks: each frame it dispatches the next and polls the ones in
    // flight with try_read, taking whichever are done; a full ring only delays a write.
    let Some(context) = context("frames, never waiting") else {
        return;
    };
    let mut frames = Frames::new(&context, FrameCapacity::new(2400, 300)).expect("frames");
    let mut cpu = cpu_engine();
    let mut pending: std::collections::VecDeque<(u64, rectcast::gpu::frames::FrameId)> =
        Default::default();
    let mut out = Vec::new();
    let mut done = 0;
    let mut take_ready =
        |frames: &mut Frames, pending: &mut std::collections::VecDeque<_>, done: &mut u64| {
            while let Some(&(k, id)) = pending.front() {
                let (segments, rects) = frame(k);
                out.resize(segments.len(), FirstHit::NONE);
                if !frames.try_read(id, &mut out).expect("try_read") {
                    break;
                }
                let expected = cpu.first_hit(&Batch::new(&segments, &rects)).expect("cpu");
                assert_same_first_hits(&format!("frame {k}"), &segments, &expected, &out);
                pending.pop_front();
                *done += 1;
            }
        };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for k in 0..30 {
        let (segments, rects) = frame(k);
        // A full ring: the game does other work and polls again.
        while let Err(rectcast::Error::RingFull { .. }) =
            frames.write(&Batch::new(&segments, &rects))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "frame {k}: the ring stayed full"
            );
            take_ready(&mut frames, &mut pending, &mut done);
        }
        pending.push_back((k, frames.dispatch().expect("dispatch")));
        take_ready(&mut frames, &mut pending, &mut done);
    }
    while !pending.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} frames never became ready",
            pending.len()
        );
        take_ready(&mut frames, &mut pending, &mut done);
    }
    assert_eq!(done, 30);
}

#[test]
fn moving_hitboxes_rebuilt_on_the_gpu_every_frame_give_the_brute_force_first_hits() {
    let Some(context) = context("frames with a broad phase") else {
        return;
    };
    // Enough hitboxes and bullets for Auto to take the grid; they move every frame, and the
    // grid is listed again on the GPU in each frame's submission.
    let frame = |k: u64| scene::bullet_hell(300 + k, 3000 + 200 * (k as usize % 3), 2000);
    let mut frames = Frames::new(&context, FrameCapacity::new(3400, 2000)).expect("frames");
    let mut cpu = cpu_engine();
    cpu.set_broad_phase(rectcast::BroadPhase::Off);
    let mut in_flight: Option<(u64, rectcast::gpu::frames::FrameId)> = None;
    let mut out = Vec::new();
    for k in 0..6 {
        let (segments, rects) = frame(k);
        frames.write(&Batch::new(&segments, &rects)).expect("write");
        let id = frames.dispatch().expect("dispatch");
        assert!(frames.used_broad_phase(), "frame {k} did not walk a grid");
        if let Some((previous, previous_id)) = in_flight {
            let (segments, rects) = frame(previous);
            out.resize(segments.len(), FirstHit::NONE);
            frames.read(previous_id, &mut out).expect("read");
            let expected = cpu.first_hit(&Batch::new(&segments, &rects)).expect("cpu");
            assert_same_first_hits(&format!("frame {previous}"), &segments, &expected, &out);
        }
        in_flight = Some((k, id));
    }
    // Off: the same frames by brute force on the GPU.
    frames.set_broad_phase(rectcast::BroadPhase::Off);
    let (segments, rects) = frame(9);
    frames.write(&Batch::new(&segments, &rects)).expect("write");
    let id = frames.dispatch().expect("dispatch");
    assert!(!frames.used_broad_phase());
    if let Some((_, previous_id)) = in_flight {
        let _ = frames.read(previous_id, &mut vec![FirstHit::NONE; 3400]);
    }
    out.resize(segments.len(), FirstHit::NONE);
    frames.read(id, &mut out).expect("read");
    let expected = cpu.first_hit(&Batch::new(&segments, &rects)).expect("cpu");
    assert_same_first_hits("frame 9, brute force", &segments, &expected, &out);
}

#[test]
fn a_loop_too_small_for_the_grid_builds_its_kernels_only_when_a_frame_walks_one() {
    let Some(context) = context("frames too small for a grid") else {
        return;
    };
    // 300 hitboxes: under Auto's least for a grid, so the loop opens without the grid's
    // kernels (one pipeline: the first hit's).
    let mut frames = Frames::new(&context, FrameCapacity::new(2400, 300)).expect("frames");
    assert_eq!(context.pipeline_compilations(), 1, "the first hit's alone");
    let (segments, rects) = frame(1);
    let mut cpu = cpu_engine();
    let mut out = vec![FirstHit::NONE; segments.len()];
    let expected = cpu.first_hit(&Batch::new(&segments, &rects)).expect("cpu");
    frames.write(&Batch::new(&segments, &rects)).expect("write");
    let id = frames.dispatch().expect("dispatch");
    frames.read(id, &mut out).expect("read");
    assert!(!frames.used_broad_phase());
    assert_eq!(
        context.pipeline_compilations(),
        1,
        "a brute-force frame built more"
    );
    // On: the first frame that walks a grid builds its kernels, with the same bytes.
    frames.set_broad_phase(rectcast::BroadPhase::On);
    frames.write(&Batch::new(&segments, &rects)).expect("write");
    let id = frames.dispatch().expect("dispatch");
    frames.read(id, &mut out).expect("read");
    assert!(frames.used_broad_phase(), "the frame did not walk a grid");
    assert!(context.pipeline_compilations() > 1, "no grid kernels built");
    assert_same_first_hits("through the grid", &segments, &expected, &out);
}

#[test]
fn a_full_ring_is_an_error_not_a_stall() {
    let Some(context) = context("full ring") else {
        return;
    };
    let capacity = FrameCapacity {
        ring: 2,
        ..FrameCapacity::new(100, 10)
    };
    let mut frames = Frames::new(&context, capacity).expect("frames");
    let (segments, rects) = scene::bullet_hell(1, 100, 10);
    let batch = Batch::new(&segments, &rects);
    let mut ids = Vec::new();
    for _ in 0..2 {
        frames.write(&batch).expect("write");
        ids.push(frames.dispatch().expect("dispatch"));
    }
    assert!(matches!(
        frames.write(&batch),
        Err(Error::RingFull { frame: 0, ring: 2 })
    ));
    let mut out = vec![FirstHit::NONE; 100];
    frames.read(ids[0], &mut out).expect("read");
    frames.write(&batch).expect("a slot is free again");
    assert!(matches!(
        frames.read(ids[0], &mut out),
        Err(Error::UnknownFrame(0))
    ));
    let (big, _) = scene::bullet_hell(1, 101, 10);
    assert!(matches!(
        frames.write(&Batch::new(&big, &rects)),
        Err(Error::FrameCapacity { .. })
    ));
}

#[test]
fn the_callers_encoder_records_the_frame_and_its_shaders_can_read_the_result_buffer() {
    let Some(context) = context("caller's encoder") else {
        return;
    };
    let (segments, rects) = scene::bullet_hell(5, 500, 64);
    let mut frames = Frames::new(&context, FrameCapacity::new(500, 64)).expect("frames");
    frames.write(&Batch::new(&segments, &rects)).expect("write");
    let device = context.device();
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    let id = frames.encode(&mut encoder).expect("encode");
    // The game's own pass would bind `first_hits_buffer`; here a copy reads it.
    let bytes = (segments.len() * size_of::<FirstHit>()) as u64;
    let mine = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("game.readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(frames.first_hits_buffer(), 0, &mine, 0, bytes);
    context.queue().submit([encoder.finish()]);
    frames.submitted(id);
    let mut out = vec![FirstHit::NONE; segments.len()];
    frames.read(id, &mut out).expect("read");
    mine.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let raw: Vec<FirstHit> =
        bytemuck::cast_slice(&mine.slice(..).get_mapped_range().unwrap()).to_vec();
    // The raw records equal the results, except the ones the host decided.
    let uncertain = shader::segment_rect_constants(rectcast::gpu::Emulation::Native)
        .iter()
        .find(|(name, _)| *name == "FLAG_UNCERTAIN")
        .map(|(_, v)| *v as u32)
        .unwrap();
    for (i, (r, o)) in raw.iter().zip(&out).enumerate() {
        if r.result.flags != uncertain {
            assert_eq!(r, o, "segment {i}");
        }
    }
    let expected = cpu_engine()
        .first_hit(&Batch::new(&segments, &rects))
        .unwrap();
    assert_same_first_hits("own encoder", &segments, &expected, &out);
}

#[test]
fn steady_state_frames_allocate_nothing_in_rectcast() {
    // The CPU path on one thread (a game's own frame thread): a reused output buffer, rect
    // blocks kept in the engine, no allocation at all.
    let (segments, rects) = scene::bullet_hell(3, 10_000, 1000);
    let batch = Batch::new(&segments, &rects);
    let one_thread = CpuOptions::threads(1);
    let mut engine = Engine::with_cpu_options(Backend::Cpu, one_thread).unwrap();
    let mut out = vec![FirstHit::NONE; segments.len()];
    engine.first_hit_into(&batch, &mut out).unwrap();
    let (n, _) = allocations(|| {
        for _ in 0..3 {
            engine.first_hit_into(&batch, &mut out).unwrap();
        }
    });
    assert_eq!(n, 0, "the CPU first_hit_into allocated {n} times");
    // On all threads, only rayon's job queue may allocate now and then, never per segment.
    let mut engine = cpu_engine();
    engine.first_hit_into(&batch, &mut out).unwrap();
    let (n, _) = allocations(|| {
        for _ in 0..3 {
            engine.first_hit_into(&batch, &mut out).unwrap();
        }
    });
    assert!(
        n <= 3,
        "the threaded CPU first_hit_into allocated {n} times in 3 frames"
    );

    // The GPU path: what remains per frame is wgpu's own bookkeeping (a submit, a map), the same
    // for 1,000 and 10,000 segments, and small next to the frame's data.
    let Some(context) = context("allocations") else {
        return;
    };
    let per_frame = |segments: usize| {
        let (s, r) = scene::bullet_hell(4, segments, 1000);
        let batch = Batch::new(&s, &r);
        let mut frames = Frames::new(&context, FrameCapacity::new(segments, 1000)).unwrap();
        let mut out = vec![FirstHit::NONE; segments];
        let mut previous = None;
        let mut frame = |frames: &mut Frames| {
            frames.write(&batch).unwrap();
            let id = frames.dispatch().unwrap();
            if let Some(previous) = previous.replace(id) {
                frames.read(previous, &mut out).unwrap();
            }
        };
        for _ in 0..5 {
            frame(&mut frames);
        }
        let (n, bytes) = allocations(|| {
            for _ in 0..10 {
                frame(&mut frames);
            }
        });
        (n / 10, bytes / 10)
    };
    let small = per_frame(1000);
    let large = per_frame(10_000);
    eprintln!("allocations per frame: 1,000 segments {small:?}, 10,000 segments {large:?}");
    let data = 10_000 * (size_of::<Segment>() + size_of::<FirstHit>()) as u64;
    assert!(
        large.1 * 20 < data,
        "{} bytes per frame for {data} bytes of data",
        large.1
    );
    assert!(
        large.0 <= small.0 + 2,
        "allocations grow with the frame: {small:?} vs {large:?}"
    );
}

#[test]
fn the_exported_wgsl_function_runs_in_a_users_own_shader() {
    let Some(context) = context("user shader") else {
        return;
    };
    // A user's kernel: their own bindings and entry point around the included function.
    let source = format!(
        "{}\n{}",
        shader::SEGMENT_RECT_WGSL,
        r#"
@group(0) @binding(1) var<storage, read> segs: array<Segment>;
@group(0) @binding(2) var<storage, read> boxes: array<Rect>;
@group(0) @binding(3) var<storage, read_write> out: array<PairResult>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&out)) {
        out[i] = segment_rect(segs[i], boxes[i]);
    }
}
"#
    );
    // Pair i is (segments[i], rects[i]).
    let (segments, rects) = scene::random_batch(9, 640, 640, 100.0);
    let device = context.device();
    use wgpu::util::DeviceExt;
    let buffer = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let segs = buffer(
        "segs",
        bytemuck::cast_slice(&segments),
        wgpu::BufferUsages::STORAGE,
    );
    let boxes = buffer(
        "boxes",
        bytemuck::cast_slice(&rects),
        wgpu::BufferUsages::STORAGE,
    );
    let bytes = (segments.len() * size_of::<PairResult>()) as u64;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("out"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("user"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let constants = shader::segment_rect_constants(rectcast::gpu::Emulation::Native);
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("user"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: true,
        },
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 1,
                resource: segs.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: boxes.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: out.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((segments.len() as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, bytes);
    context.queue().submit([encoder.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let results: Vec<PairResult> =
        bytemuck::cast_slice(&read.slice(..).get_mapped_range().unwrap()).to_vec();
    let mut certain = 0;
    for (i, r) in results.iter().enumerate() {
        let expected = rectcast::segment_rect(&segments[i], &rects[i]);
        if r.flags != 1 << 31 {
            certain += 1;
            // The whole result, t included: correctly rounded on every backend.
            assert_eq!(
                bytemuck::bytes_of(r),
                bytemuck::bytes_of(&expected),
                "pair {i}: {:?} {:?}: {r:?} against {expected:?}",
                segments[i],
                rects[i]
            );
        }
    }
    assert!(certain > 600, "only {certain} pairs certain");
}
