//! The device contract: `GpuContext::required_limits` is enough for every kernel, a device
//! below it is refused up front with each short limit named, and `grid_limits` is what the GPU
//! broad phase needs. The devices here are the test adapter opened again with exactly those
//! limits, so every limit the kernels exceed is one wgpu refuses.
//!
//! scripts/test.sh: native only (no emulated arithmetic changes a device's limits).

mod common;

use common::{assert_same_results, cpu_engine, dense_inputs};
use rectcast::scene::random_batch;
use rectcast::{Batch, BroadPhase, Engine, Error, GpuContext, GpuLimits, LimitShortfall, wgpu};

/// The adapter the suite's GPU tests use, opened again with `limits`: `None` (skipped) when
/// there is no GPU and RECTCAST_REQUIRE_GPU is not 1.
fn device_with(
    test: &str,
    limits: wgpu::Limits,
) -> Option<(wgpu::Device, wgpu::Queue, wgpu::AdapterInfo)> {
    common::own_device(test, limits)
}

/// Runs pairs, first hits, hits and counts over rects and walls on `gpu` and on the CPU, and
/// compares them element by element.
fn assert_queries_agree(what: &str, gpu: &mut Engine) {
    let mut cpu = cpu_engine();
    let (segments, rects) = random_batch(61, 3000, 1100, 100.0);
    let want = cpu.pairs(&segments, &rects).expect("cpu pairs");
    let got = gpu.pairs(&segments, &rects).expect("gpu pairs");
    assert_same_results(what, &want, &got, 0, dense_inputs(&segments, &rects));
    let batch = Batch::new(&segments, &rects);
    for engine in [&mut cpu, &mut *gpu] {
        engine.set_broad_phase(BroadPhase::On);
    }
    let first = |e: &mut Engine| e.first_hit(&batch).expect("first hits");
    let (want, got) = (first(&mut cpu), first(gpu));
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what}: first hit of segment {i} ({:?}): cpu {:?}, gpu {:?}",
            segments[i], want[i], got[i]
        );
    }
    let hits = |e: &mut Engine| e.hits(&batch).expect("hits");
    let (want, got) = (hits(&mut cpu), hits(gpu));
    if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
        panic!(
            "{what}: hit {i}: cpu {:?}, gpu {:?}",
            want.get(i),
            got.get(i)
        );
    }
    assert_eq!(
        cpu.counts(&batch).expect("cpu counts"),
        gpu.counts(&batch).expect("gpu counts"),
        "{what}: counts"
    );
    // The shapes' layouts (every shape binds the same ones), with walls: the cheapest to build.
    let walls = &segments[..400];
    let want = cpu.shape_first_hits(&segments, walls).expect("cpu walls");
    let got = gpu.shape_first_hits(&segments, walls).expect("gpu walls");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        panic!(
            "{what}: first wall of segment {i} ({:?}): cpu {:?}, gpu {:?}",
            segments[i], want[i], got[i]
        );
    }
    assert_eq!(
        cpu.shape_counts(&segments, walls).expect("cpu wall counts"),
        gpu.shape_counts(&segments, walls).expect("gpu wall counts"),
        "{what}: wall counts"
    );
}

#[test]
fn every_kernel_runs_on_a_device_with_exactly_the_required_limits() {
    let test = "every_kernel_runs_on_a_device_with_exactly_the_required_limits";
    let Some((device, queue, info)) = device_with(test, GpuContext::required_limits()) else {
        return;
    };
    let context = GpuContext::from_device(device, queue, info).expect("the limits it asks for");
    let mut gpu = Engine::gpu(context, GpuLimits::default()).expect("every kernel builds");
    assert_queries_agree("on the required limits", &mut gpu);
    // Below the grid's limits the GPU tests every rect, even with the broad phase on.
    assert!(!gpu.used_broad_phase(), "the grid ran without its limits");
}

#[test]
fn the_gpu_broad_phase_runs_on_a_device_with_the_grid_limits() {
    let test = "the_gpu_broad_phase_runs_on_a_device_with_the_grid_limits";
    let Some((device, queue, info)) = device_with(test, GpuContext::grid_limits()) else {
        return;
    };
    let context = GpuContext::from_device(device, queue, info).expect("above the required");
    let mut gpu = Engine::gpu(context, GpuLimits::default()).expect("every kernel builds");
    assert_queries_agree("on the grid limits", &mut gpu);
    assert!(gpu.used_broad_phase(), "the grid did not run on its limits");
}

#[test]
fn a_device_with_downlevel_limits_is_refused_naming_each_short_limit() {
    let test = "a_device_with_downlevel_limits_is_refused_naming_each_short_limit";
    let Some((device, queue, info)) = device_with(test, wgpu::Limits::downlevel_defaults()) else {
        return;
    };
    match GpuContext::from_device(device, queue, info) {
        Err(Error::DeviceLimits(short)) => {
            let storage = LimitShortfall {
                limit: "max_storage_buffers_per_shader_stage",
                needs: u64::from(
                    GpuContext::required_limits().max_storage_buffers_per_shader_stage,
                ),
                got: 4,
            };
            assert_eq!(short, [storage], "only the storage buffers are short");
            let message = Error::DeviceLimits(short).to_string();
            assert!(
                message.contains("max_storage_buffers_per_shader_stage is 4, needs at least 8"),
                "{message}"
            );
        }
        Err(other) => panic!("expected Error::DeviceLimits, got {other}"),
        Ok(_) => panic!("a device with 4 storage buffers per stage was accepted"),
    }
}

#[test]
fn webgpus_default_limits_meet_the_required_ones_and_not_the_grids() {
    // What GpuContext::required_limits' and grid_limits' docs promise a game.
    let required = GpuContext::required_limits();
    assert!(required.check_limits(&wgpu::Limits::defaults()));
    assert!(!required.check_limits(&wgpu::Limits::downlevel_defaults()));
    let grid = GpuContext::grid_limits();
    assert!(
        required.check_limits(&grid),
        "the grid's limits include the required"
    );
    assert_eq!(grid.max_storage_buffers_per_shader_stage, 15);
    assert_eq!(grid.max_bind_groups, 2);
    assert!(!grid.check_limits(&wgpu::Limits::defaults()));
    assert_eq!(required.max_storage_buffers_per_shader_stage, 8);
    assert_eq!(required.max_bindings_per_bind_group, 14);
    assert_eq!(required.max_compute_workgroup_storage_size, 16_352);
}
