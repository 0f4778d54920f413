//! The `rectcast` command line: `pairs`, `first-hit`, `hits`, `count`, `clip`, `info`, `demo`,
//! `bench`.

mod csv_io;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};
use rectcast::{Backend, Batch, ClipTo, Engine, Kind, PairResult, Rect, scene};

#[derive(Parser)]
#[command(
    name = "rectcast",
    version,
    about = "Segment vs rectangle collision (Liang–Barsky) on the GPU or the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
    /// Every segment against every rect, one CSV row per pair (segment-major).
    Pairs {
        /// CSV with the header x0,y0,x1,y1.
        #[arg(long)]
        segments: PathBuf,
        /// CSV with the header min_x,min_y,max_x,max_y.
        #[arg(long)]
        rects: PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Output file (written whole or not at all); stdout when absent.
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        /// CSV with the header x0,y0,x1,y1.
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
        /// CSV with the header min_x,min_y,max_x,max_y, one rect per segment.
        #[arg(long)]
        rects: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "auto")]
        backend: BackendArg,
        /// Output file (written whole or not at all); stdout when absent.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The GPU adapters found, the one chosen, and its limits.
    Info,
    /// A bullet-hell frame (thousands of bullets, hundreds of hitboxes) on the chosen backend.
    Demo {
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
struct QueryArgs {
    /// CSV with the header x0,y0,x1,y1.
    #[arg(long)]
    segments: PathBuf,
    /// CSV with the header min_x,min_y,max_x,max_y.
    #[arg(long)]
    rects: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Output file (written whole or not at all); stdout when absent.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BenchQuery {
    Pairs,
    FirstHit,
    Frames,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Pairs {
            segments,
            rects,
            backend,
            out,
        } => pairs(segments, rects, backend.into(), out),
        Command::FirstHit(args) => first_hit(args),
        Command::Hits(args) => hits(args),
        Command::Count(args) => count(args),
        Command::Clip {
            segments,
            rect,
            rects,
            backend,
            out,
        } => clip(segments, rect, rects, backend.into(), out),
        Command::Info => info(),
        Command::Demo { backend } => demo(backend.into()),
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

type Outcome = Result<(), String>;

fn engine(backend: Backend) -> Result<Engine, String> {
    Engine::new(backend).map_err(|e| e.to_string())
}

fn pairs(segments: PathBuf, rects: PathBuf, backend: Backend, out: Option<PathBuf>) -> Outcome {
    let segments = csv_io::read_segments(&segments).map_err(|e| e.to_string())?;
    let rects = csv_io::read_rects(&rects).map_err(|e| e.to_string())?;
    let mut engine = engine(backend)?;
    let results = engine.pairs(&segments, &rects).map_err(|e| e.to_string())?;
    csv_io::write_output(out.as_deref(), |w| {
        csv_io::write_pairs(w, rects.len(), &results)
    })
}

/// Reads a query's inputs and opens its engine.
fn open(args: &QueryArgs) -> Result<(Vec<rectcast::Segment>, Vec<Rect>, Engine), String> {
    let segments = csv_io::read_segments(&args.segments).map_err(|e| e.to_string())?;
    let rects = csv_io::read_rects(&args.rects).map_err(|e| e.to_string())?;
    Ok((segments, rects, engine(args.backend.into())?))
}

fn first_hit(args: QueryArgs) -> Outcome {
    let (segments, rects, mut engine) = open(&args)?;
    let first = engine
        .first_hit(&Batch::new(&segments, &rects))
        .map_err(|e| e.to_string())?;
    csv_io::write_output(args.out.as_deref(), |w| csv_io::write_first_hits(w, &first))
}

fn hits(args: QueryArgs) -> Outcome {
    let (segments, rects, mut engine) = open(&args)?;
    let hits = engine
        .hits(&Batch::new(&segments, &rects))
        .map_err(|e| e.to_string())?;
    csv_io::write_output(args.out.as_deref(), |w| csv_io::write_hits(w, &hits))
}

fn count(args: QueryArgs) -> Outcome {
    let (segments, rects, mut engine) = open(&args)?;
    let counts = engine
        .counts(&Batch::new(&segments, &rects))
        .map_err(|e| e.to_string())?;
    csv_io::write_output(args.out.as_deref(), |w| {
        csv_io::write_counts(w, &counts.per_rect)
    })
}

fn clip(
    segments: PathBuf,
    rect: Option<String>,
    rects: Option<PathBuf>,
    backend: Backend,
    out: Option<PathBuf>,
) -> Outcome {
    let segments = csv_io::read_segments(&segments).map_err(|e| e.to_string())?;
    let per_segment;
    let to = match (rect, rects) {
        (Some(rect), _) => ClipTo::Rect(csv_io::parse_rect_arg(&rect)?),
        (None, Some(path)) => {
            per_segment = csv_io::read_rects(&path).map_err(|e| e.to_string())?;
            ClipTo::PerSegment(&per_segment)
        }
        (None, None) => return Err("give --rect or --rects".into()),
    };
    let clipped = engine(backend)?
        .clip(&segments, to)
        .map_err(|e| e.to_string())?;
    csv_io::write_output(out.as_deref(), |w| csv_io::write_clipped(w, &clipped))
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
    println!("auto backend: {}", engine(Backend::Auto)?.chosen());
    Ok(())
}

fn demo(backend: Backend) -> Outcome {
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
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn bench(
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: Vec<BackendArg>,
) -> Outcome {
    let (segments, rects) = scene::random_batch(7, segment_count, rect_count, 1000.0);
    let explicit = !backends.is_empty();
    let backends = if explicit {
        backends
    } else {
        vec![BackendArg::Cpu, BackendArg::Gpu]
    };
    let mut results = vec![PairResult::MISS; segments.len() * rects.len()];
    println!(
        "dense pairs, {} segments x {} rects = {} pairs, {} iterations",
        segments.len(),
        rects.len(),
        results.len(),
        iterations
    );
    for b in backends {
        let mut engine = match Engine::new(b.into()) {
            Ok(engine) => engine,
            Err(e) if !explicit => {
                println!("{b:?}: skipped ({e})");
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        engine
            .pairs_into(&segments, &rects, &mut results)
            .map_err(|e| e.to_string())?;
        let mut times = Vec::with_capacity(iterations);
        for _ in 0..iterations.max(1) {
            let start = Instant::now();
            engine
                .pairs_into(&segments, &rects, &mut results)
                .map_err(|e| e.to_string())?;
            times.push(start.elapsed());
        }
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "{}\n  median {:>9.3} ms  best {:>9.3} ms  {:>8.1} Mpairs/s (median; GPU: upload + kernel + readback)",
            engine.chosen(),
            ms(median),
            ms(times[0]),
            results.len() as f64 / median.as_secs_f64() / 1e6
        );
        if let Some(context) = engine.gpu_context() {
            let decided = (iterations.max(1) + 1) * results.len();
            println!(
                "  pairs the {} kernel left to the host's exact path: {} of {decided}",
                context.adapter_info().name,
                engine.uncertain_pairs()
            );
        }
    }
    Ok(())
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
    let (segments, rects) = scene::bullet_hell(2026, segment_count, rect_count);
    let batch = Batch::new(&segments, &rects);
    let pairs = (segments.len() * rects.len()) as f64;
    println!(
        "first hit, bullet-hell scene, {} segments x {} rects = {pairs} pairs, {iterations} iterations",
        segments.len(),
        rects.len()
    );
    let explicit = !backends.is_empty();
    let backends = if explicit {
        backends
    } else {
        vec![BackendArg::Cpu, BackendArg::Gpu]
    };
    let mut out = vec![rectcast::FirstHit::NONE; segments.len()];
    for b in backends {
        let mut engine = match Engine::new(b.into()) {
            Ok(engine) => engine,
            Err(e) if !explicit => {
                println!("{b:?}: skipped ({e})");
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        let (median, best) = time(iterations, || {
            engine
                .first_hit_into(&batch, &mut out)
                .map_err(|e| e.to_string())
        })?;
        println!(
            "{}\n  median {:>9.3} ms  best {:>9.3} ms  {:>8.1} Mpairs/s (median; GPU: upload + kernel + readback)",
            engine.chosen(),
            ms(median),
            ms(best),
            pairs / median.as_secs_f64() / 1e6
        );
    }
    Ok(())
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
