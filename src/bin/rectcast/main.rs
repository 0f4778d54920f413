//! The `rectcast` command line: `pairs`, `first-hit`, `hits`, `count`, `clip`, `info`, `demo`,
//! `bench`.

mod generate;
mod npy;
mod output;
#[cfg(feature = "parquet")]
mod parquet_io;
mod records;
mod render;
mod stream;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};
use rectcast::{Backend, Batch, Engine, Kind, PairResult, Simd, scene};

#[derive(Parser)]
#[command(
    name = "rectcast",
    version,
    about = "Segment vs rectangle collision (Liang–Barsky) on the GPU or the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// CPU backend: worker threads (0: one per core).
    #[arg(long, global = true, default_value_t = 0)]
    threads: usize,
    /// CPU backend: the SIMD level (auto: the best this CPU runs).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    simd: SimdArg,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SimdArg {
    Auto,
    Avx512,
    Avx2,
    Portable,
}

impl SimdArg {
    fn level(self) -> Option<Simd> {
        match self {
            SimdArg::Auto => None,
            SimdArg::Avx512 => Some(Simd::Avx512),
            SimdArg::Avx2 => Some(Simd::Avx2),
            SimdArg::Portable => Some(Simd::Portable),
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    Auto,
    Gpu,
    Cpu,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Gpu => Backend::Gpu,
            BackendArg::Cpu => Backend::Cpu,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Every segment against every rect, one row per pair (segment-major).
    Pairs(QueryArgs),
    /// The closest hit of each segment: the rect with the smallest t_enter (ties: the lowest
    /// rect index), one row per segment; on a miss rect is empty and kind is miss.
    FirstHit(QueryArgs),
    /// Only the hitting pairs, in (segment, rect) order, with the `pairs` columns.
    Hits(QueryArgs),
    /// Hits per rect (damage per enemy): one `rect,hits` row per rect.
    Count(QueryArgs),
    /// Each segment clipped to one rect (--rect) or to its own rect (--rects: row i for segment
    /// i): `segment,kind,x0,y0,x1,y1`, coordinates empty on a miss.
    Clip {
        /// Segments: .csv (header x0,y0,x1,y1), .npy (float32, shape [N, 4]) or .f32 (raw
        /// little-endian, 4 per record); streamed in chunks.
        #[arg(long)]
        segments: PathBuf,
        /// The one rect: min_x,min_y,max_x,max_y.
        #[arg(
            long,
            value_name = "MIN_X,MIN_Y,MAX_X,MAX_Y",
            allow_hyphen_values = true,
            conflicts_with = "rects",
            required_unless_present = "rects"
        )]
        rect: Option<String>,
        /// One rect per segment (row i for segment i), streamed beside the segments: .csv
        /// (header min_x,min_y,max_x,max_y), .npy or .f32.
        #[arg(long)]
        rects: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Output: .npy (structured rows), .f32 (the clipped segment, NaN on a miss) or CSV
        /// (any other name); stdout (CSV) when absent. Written whole or not at all.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        job: JobArgs,
    },
    /// Writes a seeded scene to try and benchmark with: DIR/segments.EXT and DIR/rects.EXT.
    Gen {
        #[arg(long, value_enum, default_value = "bullet-hell")]
        kind: generate::SceneKind,
        #[arg(long)]
        segments: u64,
        #[arg(long)]
        rects: u64,
        #[arg(long)]
        out_dir: PathBuf,
        /// The files' format.
        #[arg(long, default_value = "csv", value_parser = ["csv", "npy", "f32"])]
        format: String,
        #[arg(long, default_value_t = 2026)]
        seed: u64,
    },
    /// The GPU adapters found, the one chosen, and its limits.
    Info,
    /// A bullet-hell frame (thousands of bullets, hundreds of hitboxes) on the chosen backend.
    Demo {
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Also draw the frame (first hits) to this PNG.
        #[arg(long, value_name = "PNG")]
        render: Option<PathBuf>,
    },
    /// Draws a scene as the engine decides it, to a PNG: rects, segments (grey: no hit,
    /// orange: hits), the part inside a rect in red, entry and exit points, a legend.
    Render {
        /// Segments (.csv, .npy or .f32), read whole.
        #[arg(long)]
        segments: PathBuf,
        /// Rects (.csv, .npy or .f32), read whole.
        #[arg(long)]
        rects: PathBuf,
        /// The PNG to write.
        #[arg(long)]
        out: PathBuf,
        #[arg(long, value_enum, default_value = "first-hit")]
        query: render::RenderQuery,
        /// The image size, WIDTHxHEIGHT.
        #[arg(long, default_value = "1200x800", value_parser = parse_size)]
        size: (u32, u32),
        /// The part of the scene to draw (default: all of it, with a margin).
        #[arg(
            long,
            value_name = "MIN_X,MIN_Y,MAX_X,MAX_Y",
            allow_hyphen_values = true
        )]
        view: Option<String>,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
    },
    /// Throughput of a query per backend: dense pairs on a seeded random scene (default
    /// 4096 x 1024), first hit on a bullet-hell scene (default 65536 x 4096), or the per-frame
    /// API's latency on a bullet-hell frame (default 10000 x 1000, GPU only).
    Bench {
        #[arg(long, value_enum, default_value = "pairs")]
        query: BenchQuery,
        #[arg(long)]
        segments: Option<usize>,
        #[arg(long)]
        rects: Option<usize>,
        /// Timed repetitions per backend (after one warm-up).
        #[arg(long, default_value_t = 10)]
        iterations: usize,
        /// Backends to measure (repeatable); default: cpu, and gpu when one opens.
        #[arg(long, value_enum)]
        backend: Vec<BackendArg>,
    },
}

/// The inputs and output of a query over every segment and every rect.
#[derive(Args)]
pub(crate) struct QueryArgs {
    /// Segments: .csv (header x0,y0,x1,y1), .npy (float32, shape [N, 4]) or .f32 (raw
    /// little-endian, 4 per record). Streamed in chunks: any size.
    #[arg(long)]
    segments: PathBuf,
    /// Rects, in the same formats (header min_x,min_y,max_x,max_y). Held in memory.
    #[arg(long)]
    rects: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Output: .npy (structured rows, `np.load`) or CSV (any other name); stdout (CSV) when
    /// absent. Written as the job goes to a temporary file, moved into place only on success.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    job: JobArgs,
}

/// How a streaming job treats bad records and reports progress.
#[derive(Args, Clone, Copy)]
pub(crate) struct JobArgs {
    /// Skip invalid records (counted, the first few reported at the end) instead of stopping
    /// at the first one. Row indices in the output stay those of the input.
    #[arg(long)]
    skip_invalid: bool,
    /// A progress bar on stderr (records, rate, time left); shown anyway when stderr is a
    /// terminal.
    #[arg(long)]
    progress: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BenchQuery {
    Pairs,
    FirstHit,
    Frames,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let _ = CPU_OPTIONS.set(rectcast::CpuOptions {
        threads: cli.threads,
        simd: cli.simd.level(),
    });
    let outcome = match cli.command {
        Command::Pairs(args) => stream::query(args, stream::Query::Pairs),
        Command::FirstHit(args) => stream::query(args, stream::Query::FirstHit),
        Command::Hits(args) => stream::query(args, stream::Query::Hits),
        Command::Count(args) => stream::query(args, stream::Query::Count),
        Command::Clip {
            segments,
            rect,
            rects,
            backend,
            out,
            job,
        } => stream::clip(segments, rect, rects, backend.into(), out, job),
        Command::Gen {
            kind,
            segments,
            rects,
            out_dir,
            format,
            seed,
        } => generate::run(kind, segments, rects, &out_dir, &format, seed),
        Command::Info => info(),
        Command::Demo { backend, render } => demo(backend.into(), render),
        Command::Render {
            segments,
            rects,
            out,
            query,
            size,
            view,
            backend,
        } => render_files(&segments, &rects, &out, query, size, view, backend.into()),
        Command::Bench {
            query,
            segments,
            rects,
            iterations,
            backend,
        } => match query {
            BenchQuery::Pairs => bench(
                segments.unwrap_or(4096),
                rects.unwrap_or(1024),
                iterations,
                backend,
            ),
            BenchQuery::FirstHit => bench_first_hit(
                segments.unwrap_or(65_536),
                rects.unwrap_or(4096),
                iterations,
                backend,
            ),
            BenchQuery::Frames => bench_frames(
                segments.unwrap_or(10_000),
                rects.unwrap_or(1000),
                iterations,
            ),
        },
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rectcast: error: {message}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) type Outcome = Result<(), String>;

/// The CPU backend's options from `--threads` and `--simd`, set once in `main`.
static CPU_OPTIONS: OnceLock<rectcast::CpuOptions> = OnceLock::new();

fn cpu_options() -> rectcast::CpuOptions {
    CPU_OPTIONS.get().copied().unwrap_or_default()
}

pub(crate) fn engine(backend: Backend) -> Result<Engine, String> {
    Engine::with_cpu_options(backend, cpu_options()).map_err(|e| e.to_string())
}

fn info() -> Outcome {
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

/// `--size 1200x800`.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parsed = text
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    match parsed {
        Some((w, h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => Ok((w, h)),
        _ => Err(format!(
            "expected WIDTHxHEIGHT, each 1 to 16384 pixels, found {text:?}"
        )),
    }
}

fn render_files(
    segments: &std::path::Path,
    rects: &std::path::Path,
    out: &std::path::Path,
    query: render::RenderQuery,
    size: (u32, u32),
    view: Option<String>,
    backend: Backend,
) -> Outcome {
    let view = view
        .map(|v| {
            records::parse_rect_arg(&v)
                .map(|r| [r.min_x, r.min_y, r.max_x, r.max_y])
                .map_err(|e| e.replace("--rect", "--view"))
        })
        .transpose()?;
    let (segments, _) = records::Records::open(segments, &records::SEGMENTS, false)
        .and_then(|mut s| s.read_all())
        .map_err(|e| e.to_string())?;
    let (rects, _) = records::Records::open(rects, &records::RECTS, false)
        .and_then(|mut r| r.read_all())
        .map_err(|e| e.to_string())?;
    let mut engine = engine(backend)?;
    render::render(&mut engine, &segments, &rects, query, size, view, out)
}

fn demo(backend: Backend, render_to: Option<PathBuf>) -> Outcome {
    let (segments, rects) = scene::bullet_hell(2026, 8192, 512);
    let mut engine = engine(backend)?;
    // The first call builds buffers; a game pays that once and reuses its result buffer, so
    // time a later frame that way too.
    let start = Instant::now();
    let results = engine.pairs(&segments, &rects).map_err(|e| e.to_string())?;
    let first = start.elapsed();
    let mut again = vec![PairResult::MISS; results.len()];
    engine
        .pairs_into(&segments, &rects, &mut again)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    engine
        .pairs_into(&segments, &rects, &mut again)
        .map_err(|e| e.to_string())?;
    let steady = start.elapsed();
    if again != results {
        return Err("two runs of the same frame disagree".into());
    }
    let count = |k: Kind| results.iter().filter(|r| r.kind() == k).count();
    println!("rectcast demo: one bullet-hell frame");
    println!("backend: {}", engine.chosen());
    println!(
        "bullets (segments): {}, hitboxes (rects): {}",
        segments.len(),
        rects.len()
    );
    println!("pairs: {}", results.len());
    println!(
        "hits: {} (enter {}, exit {}, cross {}, inside {})",
        results.iter().filter(|r| r.hit()).count(),
        count(Kind::Enter),
        count(Kind::Exit),
        count(Kind::Cross),
        count(Kind::Inside)
    );
    println!(
        "time: first frame {:.2} ms, next frame {:.2} ms ({:.0} Mpairs/s)",
        ms(first),
        ms(steady),
        results.len() as f64 / steady.as_secs_f64() / 1e6
    );
    if let Some(path) = render_to {
        render::render(
            &mut engine,
            &segments,
            &rects,
            render::RenderQuery::FirstHit,
            (1920, 1080),
            Some([0.0, 0.0, 1920.0, 1080.0]),
            &path,
        )?;
        println!("drawn to {}", path.display());
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One row of a bench table: a backend's median and best time.
struct Row {
    name: String,
    median: Duration,
    best: Duration,
}

impl Row {
    /// The median and best of `iterations` timed runs of `run`, after one warm-up.
    fn timed(
        name: String,
        iterations: usize,
        mut run: impl FnMut() -> Outcome,
    ) -> Result<Self, String> {
        let (median, best) = time(iterations, &mut run)?;
        Ok(Self { name, median, best })
    }

    /// The kernel's own time, from timestamp queries, over `iterations` runs after a warm-up.
    fn kernel(
        engine: &mut Engine,
        iterations: usize,
        mut run: impl FnMut(&mut Engine) -> Outcome,
    ) -> Result<Option<Self>, String> {
        if !engine.time_gpu_kernels(true) {
            return Ok(None);
        }
        run(engine)?;
        let mut times = Vec::with_capacity(iterations.max(1));
        for _ in 0..iterations.max(1) {
            run(engine)?;
            times.push(engine.gpu_kernel_time().unwrap_or_default());
        }
        engine.time_gpu_kernels(false);
        times.sort();
        Ok(Some(Self {
            name: format!("{}, kernel only", engine.chosen()),
            median: times[times.len() / 2],
            best: times[0],
        }))
    }
}

/// Times `run` on the scalar reference and on each backend, and prints one table: median and
/// best milliseconds, Mpairs/s (median), and the speed-up over the scalar reference.
fn bench_table(
    pairs: f64,
    iterations: usize,
    backends: Vec<BackendArg>,
    mut reference: impl FnMut(),
    mut run: impl FnMut(&mut Engine) -> Outcome,
) -> Outcome {
    let explicit = !backends.is_empty();
    let backends = if explicit {
        backends
    } else {
        vec![BackendArg::Cpu, BackendArg::Gpu]
    };
    let mut rows = vec![Row::timed(
        "scalar reference (rectcast::cpu::queries, 1 thread)".into(),
        iterations,
        || {
            reference();
            Ok(())
        },
    )?];
    let mut notes = Vec::new();
    for b in backends {
        let mut engines = Vec::new();
        if matches!(b, BackendArg::Cpu) {
            // The fast path on one thread, then on the chosen threads (all by default).
            let options = cpu_options();
            if options.threads != 1 {
                engines.push(
                    Engine::with_cpu_options(
                        Backend::Cpu,
                        rectcast::CpuOptions {
                            threads: 1,
                            ..options
                        },
                    )
                    .map_err(|e| e.to_string()),
                );
            }
        }
        engines.push(engine(b.into()));
        for opened in engines {
            let mut engine = match opened {
                Ok(engine) => engine,
                Err(e) if !explicit => {
                    notes.push(format!("{b:?}: skipped ({e})"));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let name = match engine.gpu_context() {
                Some(_) => format!("{}, end to end", engine.chosen()),
                None => engine.chosen().to_string(),
            };
            rows.push(Row::timed(name, iterations, || run(&mut engine))?);
            if let Some(context) = engine.gpu_context() {
                let adapter = context.adapter_info().name.clone();
                match Row::kernel(&mut engine, iterations, &mut run)? {
                    Some(row) => rows.push(row),
                    None => notes.push(format!(
                        "{adapter}: no timestamp queries, no kernel-only row"
                    )),
                }
                notes.push(format!(
                    "pairs the {adapter} kernel left to the host's exact path: {}",
                    engine.uncertain_pairs()
                ));
            }
        }
    }
    let reference = rows[0].median;
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
    println!(
        "{:width$}  {:>10}  {:>10}  {:>10}  {:>9}",
        "backend", "median ms", "best ms", "Mpairs/s", "vs scalar"
    );
    for row in &rows {
        println!(
            "{:width$}  {:>10.3}  {:>10.3}  {:>10.1}  {:>8.1}x",
            row.name,
            ms(row.median),
            ms(row.best),
            pairs / row.median.as_secs_f64() / 1e6,
            reference.as_secs_f64() / row.median.as_secs_f64()
        );
    }
    for note in notes {
        println!("{note}");
    }
    println!("(GPU end to end: upload + kernel + readback; kernel only: timestamp queries)");
    Ok(())
}

fn bench(
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: Vec<BackendArg>,
) -> Outcome {
    let (segments, rects) = scene::random_batch(7, segment_count, rect_count, 1000.0);
    let mut results = vec![PairResult::MISS; segments.len() * rects.len()];
    println!(
        "dense pairs, random scene, {} segments x {} rects = {} pairs, {iterations} iterations",
        segments.len(),
        rects.len(),
        results.len(),
    );
    let mut expected = results.clone();
    bench_table(
        results.len() as f64,
        iterations,
        backends,
        || rectcast::cpu::pairs::pairs_dense(&segments, &rects, &mut expected),
        |engine| {
            engine
                .pairs_into(&segments, &rects, &mut results)
                .map_err(|e| e.to_string())
        },
    )
}

/// The median and best of `iterations` timed runs of `run`, after one warm-up.
fn time(
    iterations: usize,
    mut run: impl FnMut() -> Outcome,
) -> Result<(Duration, Duration), String> {
    run()?;
    let mut times = Vec::with_capacity(iterations.max(1));
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        run()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((times[times.len() / 2], times[0]))
}

fn bench_first_hit(
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: Vec<BackendArg>,
) -> Outcome {
    use rectcast::cpu::queries::{QueryOutputs, query, segment_rects};
    let (segments, rects) = scene::bullet_hell(2026, segment_count, rect_count);
    let batch = Batch::new(&segments, &rects);
    let pairs = (segments.len() * rects.len()) as f64;
    println!(
        "first hit, bullet-hell scene, {} segments x {} rects = {pairs} pairs, {iterations} iterations",
        segments.len(),
        rects.len()
    );
    let mut out = vec![rectcast::FirstHit::NONE; segments.len()];
    let mut expected = out.clone();
    bench_table(
        pairs,
        iterations,
        backends,
        || {
            segment_rects(
                query::QUERY_FIRST_HIT,
                &batch,
                &mut QueryOutputs {
                    first_hits: &mut expected,
                    segment_hits: &mut [],
                    rect_hits: &mut [],
                    found: &mut Vec::new(),
                },
            )
        },
        |engine| {
            engine
                .first_hit_into(&batch, &mut out)
                .map_err(|e| e.to_string())
        },
    )
}

fn bench_frames(segment_count: usize, rect_count: usize, iterations: usize) -> Outcome {
    use rectcast::gpu::frames::{FrameCapacity, Frames};
    let context = rectcast::GpuContext::new().map_err(|e| e.to_string())?;
    let (segments, rects) = scene::bullet_hell(2026, segment_count, rect_count);
    let batch = Batch::new(&segments, &rects);
    let mut frames = Frames::new(&context, FrameCapacity::new(segments.len(), rects.len()))
        .map_err(|e| e.to_string())?;
    let mut out = vec![rectcast::FirstHit::NONE; segments.len()];
    println!(
        "per-frame first hit on {}, bullet-hell frame of {} segments x {} rects, {iterations} frames",
        context.describe(),
        segments.len(),
        rects.len()
    );
    // Latency: write, dispatch, and wait for this frame's results.
    let (median, best) = time(iterations, || {
        frames.write(&batch).map_err(|e| e.to_string())?;
        let id = frames.dispatch().map_err(|e| e.to_string())?;
        frames.read(id, &mut out).map_err(|e| e.to_string())
    })?;
    println!(
        "  latency (write + dispatch + read): median {:.3} ms, best {:.3} ms",
        ms(median),
        ms(best)
    );
    // Pipelined: frame k's results read during frame k + 1.
    let mut previous = None;
    let (median, best) = time(iterations, || {
        frames.write(&batch).map_err(|e| e.to_string())?;
        let id = frames.dispatch().map_err(|e| e.to_string())?;
        if let Some(previous) = previous.replace(id) {
            frames.read(previous, &mut out).map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    println!(
        "  per frame, pipelined (read a frame later): median {:.3} ms, best {:.3} ms",
        ms(median),
        ms(best)
    );
    Ok(())
}
