//! `rectcast bench --query broad-phase`: first hit, hits and counts through the grid against
//! the brute force, the grid's build timed alone.

use rectcast::{Backend, Batch, Engine, Hit};

use super::measure::{BenchScene, ms, time};
use crate::options::{BackendArg, Outcome, cpu_options};

/// The broad phase on one scene: the grid's build, then first hit (prepared set, and built per
/// call), hits and counts with the grid, against first hit by brute force; on one CPU thread
/// and on all, and on the GPU where one opens. Throughput counts equivalent pairs
/// (segments × rects) per second.
pub(super) fn bench_broad_phase(
    which: BenchScene,
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: &[BackendArg],
) -> Outcome {
    use rectcast::{BroadPhase, CpuOptions, FirstHit, RectSet};
    let (segments, rects) = which.generate(2026, segment_count, rect_count);
    let pairs = (segments.len() as f64) * (rects.len() as f64);
    println!(
        "broad phase, {which:?} scene, {} segments x {} rects = {pairs:.3e} pairs, {iterations} iterations",
        segments.len(),
        rects.len()
    );
    let e = |e: rectcast::Error| e.to_string();
    let set = RectSet::new(&rects).map_err(e)?;
    let (cols, rows) = set.cells();
    println!(
        "grid: {cols} x {rows} cells, {} entries ({:.2} per rect)",
        set.entries(),
        set.entries() as f64 / rects.len().max(1) as f64
    );
    // Rows are printed as they are measured: the hit list of a dense scene can take long.
    println!(
        "{:72}  {:>10}  {:>10}  {:>12}",
        "", "median ms", "best ms", "Mpairs/s"
    );
    let row =
        |name: String, (median, best): (std::time::Duration, std::time::Duration), rate: bool| {
            let rate = if rate {
                format!("{:.1}", pairs / median.as_secs_f64() / 1e6)
            } else {
                String::new()
            };
            println!(
                "{name:72}  {:>10.3}  {:>10.3}  {rate:>12}",
                ms(median),
                ms(best)
            );
        };
    let mut rebuilt = set.clone();
    row(
        "grid build (RectSet::rebuild, 1 thread)".into(),
        time(iterations, || rebuilt.rebuild(&rects).map_err(e))?,
        false,
    );
    let options = cpu_options();
    let all = Engine::with_cpu_options(Backend::Cpu, options).map_err(e)?;
    let one = CpuOptions {
        threads: 1,
        ..options
    };
    let mut thread_counts = vec![one];
    if all.chosen()
        != Engine::with_cpu_options(Backend::Cpu, one)
            .map_err(e)?
            .chosen()
    {
        thread_counts.push(options);
    }
    let mut grid_first = vec![FirstHit::NONE; segments.len()];
    let over = Batch::over(&segments, &set);
    let plain = Batch::new(&segments, &rects);
    for &options in &thread_counts {
        let mut engine = Engine::with_cpu_options(Backend::Cpu, options).map_err(e)?;
        engine.set_broad_phase(BroadPhase::On);
        let name = engine.chosen().to_string();
        row(
            format!("first hit, broad phase, prepared set ({name})"),
            time(iterations, || {
                engine.first_hit_into(&over, &mut grid_first).map_err(e)
            })?,
            true,
        );
        row(
            format!("first hit, broad phase, grid built per call ({name})"),
            time(iterations, || {
                engine.first_hit_into(&plain, &mut grid_first).map_err(e)
            })?,
            true,
        );
    }
    // The brute force on all threads; once when it would take long.
    let mut engine = all;
    engine.set_broad_phase(BroadPhase::Off);
    let mut brute_first = vec![FirstHit::NONE; segments.len()];
    let brute_iterations = if pairs > 1e10 { 1 } else { iterations };
    row(
        format!("first hit, brute force ({})", engine.chosen()),
        time(brute_iterations, || {
            engine.first_hit_into(&plain, &mut brute_first).map_err(e)
        })?,
        true,
    );
    engine.set_broad_phase(BroadPhase::On);
    let mut cpu_counts = rectcast::Counts::default();
    row(
        format!("counts, broad phase ({})", engine.chosen()),
        time(iterations, || {
            cpu_counts = engine.counts(&over).map_err(e)?;
            Ok(())
        })?,
        true,
    );
    let hit_count: u64 = cpu_counts.per_segment.iter().map(|&n| n as u64).sum();
    println!("hitting pairs: {hit_count}");
    // The hit list holds 20 bytes a pair: past this, it would not fit a small machine.
    const MAX_LISTED: u64 = 50_000_000;
    let listed = hit_count <= MAX_LISTED;
    let mut cpu_hits = Vec::new();
    if listed {
        row(
            format!("hits, broad phase ({})", engine.chosen()),
            time(iterations, || {
                cpu_hits = engine.hits(&over).map_err(e)?;
                Ok(())
            })?,
            true,
        );
    } else {
        println!("hits: skipped ({hit_count} hitting pairs, more than {MAX_LISTED} to list)");
    }
    let same = |got: &[FirstHit]| {
        bytemuck::cast_slice::<FirstHit, u8>(got)
            == bytemuck::cast_slice::<FirstHit, u8>(&brute_first)
    };
    let mut differ = Vec::new();
    if !same(&grid_first) {
        differ.push("CPU");
    }
    // The GPU, where one opens and unless --backend leaves it out: its grid built there
    // (kept for the prepared set).
    let gpu_wanted = backends.is_empty() || backends.contains(&BackendArg::Gpu);
    let gpu = if gpu_wanted {
        Engine::new(Backend::Gpu).map_err(|e| e.to_string())
    } else {
        Err("not asked for: --backend leaves it out".to_string())
    };
    match gpu {
        Ok(mut gpu) => {
            gpu.set_broad_phase(BroadPhase::On);
            let name = gpu.chosen().to_string();
            let mut gpu_first = vec![FirstHit::NONE; segments.len()];
            let timed = gpu.time_gpu_kernels(true);
            let mut kernel = std::time::Duration::MAX;
            row(
                format!("first hit, broad phase, prepared set ({name})"),
                time(iterations, || {
                    gpu.first_hit_into(&over, &mut gpu_first).map_err(e)?;
                    kernel = kernel.min(gpu.gpu_kernel_time().unwrap_or(kernel));
                    Ok(())
                })?,
                true,
            );
            if timed && kernel != std::time::Duration::MAX {
                println!(
                    "{:72}  {:>10}  {:>10.3}",
                    "  of which the walk's kernel",
                    "",
                    ms(kernel)
                );
            }
            if !gpu.used_broad_phase() {
                println!("  (this device ran the brute force: it binds too few buffers)");
            }
            if !same(&gpu_first) {
                differ.push("GPU (prepared set)");
            }
            row(
                format!("first hit, broad phase, grid built per call ({name})"),
                time(iterations, || {
                    gpu.first_hit_into(&plain, &mut gpu_first).map_err(e)
                })?,
                true,
            );
            if !same(&gpu_first) {
                differ.push("GPU (built per call)");
            }
            let mut gpu_counts = rectcast::Counts::default();
            row(
                format!("counts, broad phase, prepared set ({name})"),
                time(iterations, || {
                    gpu_counts = gpu.counts(&over).map_err(e)?;
                    Ok(())
                })?,
                true,
            );
            if gpu_counts != cpu_counts {
                differ.push("GPU counts");
            }
            if listed {
                let mut gpu_hits = Vec::new();
                row(
                    format!("hits, broad phase, prepared set ({name})"),
                    time(iterations, || {
                        gpu_hits = gpu.hits(&over).map_err(e)?;
                        Ok(())
                    })?,
                    true,
                );
                if bytemuck::cast_slice::<Hit, u8>(&gpu_hits)
                    != bytemuck::cast_slice::<Hit, u8>(&cpu_hits)
                {
                    differ.push("GPU hits");
                }
            }
        }
        Err(err) => println!("gpu: skipped ({err})"),
    }
    println!(
        "identical to the brute force's (first hits; the CPU's counts and hits): {}",
        if differ.is_empty() {
            "yes".to_string()
        } else {
            format!("NO ({})", differ.join(", "))
        }
    );
    if !differ.is_empty() {
        return Err("the broad phase's results differ from the brute force's".into());
    }
    Ok(())
}
