//! `rectcast info`: the GPU adapters found, the one chosen and its limits, the CPU's SIMD
//! levels, and what `--backend auto` picks here.

use rectcast::{Backend, Simd};

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
    match rectcast::GpuContext::new() {
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
    println!("auto backend: {}", engine(Backend::Auto)?.chosen());
    Ok(())
}
