//! `rectcast info`: the GPU adapters found, the one chosen and its limits, the CPU's SIMD
//! levels, and what `--backend auto` picks here.

use std::time::{Duration, Instant};

use rectcast::{Backend, Engine, GpuLimits, Simd};

use super::bench::ms;

use crate::options::{Outcome, engine};

/// `rectcast info`.
pub fn run() -> Outcome {
    let adapters = rectcast::gpu::enumerate_adapters();
    println!("adapters found: {}", adapters.len());
    for a in &adapters {
        println!(
            "  {} ({:?}, {:?}, driver {} {})",
            a.info.name, a.info.backend, a.info.device_type, a.info.driver, a.info.driver_info
        );
    }
    let start = Instant::now();
    let opened = rectcast::GpuContext::new();
    let open_time = start.elapsed();
    match &opened {
        Ok(context) => {
            let l = context.limits();
            println!("gpu backend: {}", context.describe());
            println!(
                "  max_storage_buffer_binding_size: {}",
                l.max_storage_buffer_binding_size
            );
            println!("  max_buffer_size: {}", l.max_buffer_size);
            println!(
                "  max_compute_workgroups_per_dimension: {}",
                l.max_compute_workgroups_per_dimension
            );
            println!(
                "  max_compute_invocations_per_workgroup: {}",
                l.max_compute_invocations_per_workgroup
            );
            println!(
                "  max_storage_buffers_per_shader_stage: {}",
                l.max_storage_buffers_per_shader_stage
            );
            let (build, again) = (build_time(context)?, open_and_build()?);
            println!(
                "  pipeline cache: {}",
                match context.pipeline_cache_file() {
                    Some(file) => format!(
                        "{} ({} bytes; RECTCAST_CACHE_DIR moves it, RECTCAST_PIPELINE_CACHE=off keeps none)",
                        file.display(),
                        std::fs::metadata(file).map_or(0, |m| m.len())
                    ),
                    None =>
                        "none (off, no cache directory, or an adapter wgpu keeps none for)".into(),
                }
            );
            println!(
                "  time to open: {:.1} ms, to build an engine and run its first first hit (1 x 1): {:.1} ms (the process's first; again: {:.1} and {:.1} ms)",
                ms(open_time),
                ms(build),
                ms(again.0),
                ms(again.1)
            );
        }
        Err(e) => println!("gpu backend: none ({e})"),
    }
    let levels: Vec<&str> = Simd::available().iter().map(|s| s.name()).collect();
    println!(
        "{} (SIMD levels here: {}; --threads, --simd)",
        engine(Backend::Cpu)?.chosen(),
        levels.join(", ")
    );
    println!(
        "timestamp queries: {}",
        match engine(Backend::Gpu).map(|mut gpu| gpu.time_gpu_kernels(true)) {
            Ok(true) => "yes (bench reports kernel-only time)",
            Ok(false) => "no",
            Err(_) => "no GPU",
        }
    );
    let auto = engine(Backend::Auto)?;
    let costs = auto.auto_costs().cloned().unwrap_or_default();
    println!(
        "auto backend: each call where its cost model expects it sooner, a GPU opened at the first such call ({}={costs}; rectcast bench --query auto measures them)",
        rectcast::AUTO_COSTS_VAR
    );
    println!(
        "  the GPU auto would open: {}",
        match &opened {
            Ok(context) if context.is_software() && !costs.software_gpu => format!(
                "none: {} is a software one, slower than the CPU (unless WGPU_ADAPTER_NAME names it)",
                context.adapter_info().name
            ),
            Ok(context) => context.describe(),
            Err(e) => format!("none ({e})"),
        }
    );
    Ok(())
}

/// How long an engine on `context` takes to build and to run its first first hit, one segment
/// against one rect (`Engine::gpu`, then the first hit's pipeline).
fn build_time(context: &rectcast::GpuContext) -> Result<Duration, String> {
    let start = Instant::now();
    let one = [rectcast::Segment::new(0.0, 0.0, 1.0, 1.0)];
    let boxes = [rectcast::Rect::new(0.5, 0.5, 2.0, 2.0)];
    Engine::gpu(context.clone(), GpuLimits::default())
        .and_then(|mut engine| engine.first_hit(&rectcast::Batch::new(&one, &boxes)))
        .map_err(|e| e.to_string())?;
    Ok(start.elapsed())
}

/// A second opening and build in this process: the driver loaded, and its own cache, if it
/// keeps one, warm.
fn open_and_build() -> Result<(Duration, Duration), String> {
    let start = Instant::now();
    let context = rectcast::GpuContext::new().map_err(|e| e.to_string())?;
    let open = start.elapsed();
    Ok((open, build_time(&context)?))
}
