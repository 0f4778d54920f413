//! `rectcast bench`: a query's throughput per backend in one table (the scalar reference, the
//! CPU on one thread and on all, the GPU end to end and kernel only), or the per-frame API's
//! latency.

use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use rectcast::{Backend, Batch, BroadPhase, Engine, GpuContext, GpuLimits, PairResult, scene};

mod auto;
mod broad_phase;
mod measure;

use crate::options::{BackendArg, BroadPhaseArg, Outcome, cpu_options, engine};
use broad_phase::bench_broad_phase;
pub use measure::ms;
use measure::{BenchScene, time};

#[derive(Args)]
pub struct BenchArgs {
    /// What to measure.
    #[arg(long, value_enum, default_value = "pairs")]
    query: BenchQuery,
    /// Segments in the generated scene (default: the query's own, printed in its title).
    #[arg(long)]
    segments: Option<usize>,
    /// Rects (or walls, circles, polygons) in the generated scene (default: the query's own).
    #[arg(long)]
    rects: Option<usize>,
    /// Timed repetitions per backend (after one warm-up).
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// Backends to measure (repeatable); default: cpu, and gpu when one opens.
    #[arg(long, value_enum)]
    backend: Vec<BackendArg>,
    /// The scene of `--query broad-phase` (default: bullet-hell), `--query pairs` (default:
    /// random) and the shapes' queries (default: random; bullet-hell puts a wall along each
    /// hitbox's diagonal and a circle in each hitbox).
    #[arg(long, value_enum)]
    scene: Option<BenchScene>,
    /// Whether the engines find candidates through a grid (the queries over shapes, and
    /// `--query first-hit`): auto (the library's choice), on or off.
    #[arg(long, value_enum, default_value = "auto")]
    broad_phase: BroadPhaseArg,
    /// How a GPU reads dense pairs back: compact (a mask bit per pair, then the results that
    /// are not a miss), all (every result), or auto (compact, except on a software GPU).
    #[arg(long, value_enum, default_value = "auto")]
    readback: Readback,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Readback {
    Auto,
    Compact,
    All,
}

impl Readback {
    /// The GPU limits that ask for it.
    fn limits(self) -> GpuLimits {
        GpuLimits {
            compact_readback: match self {
                Readback::Auto => None,
                Readback::Compact => Some(true),
                Readback::All => Some(false),
            },
            ..GpuLimits::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BenchQuery {
    Pairs,
    /// Segment × segment: every segment against every wall (`Engine::wall_pairs`).
    Walls,
    /// Segment × circle: every segment against every circle (`Engine::circle_pairs`).
    Circles,
    /// Segment × polygon: every segment against every polygon (`Engine::polygon_pairs`).
    Polygons,
    /// Segment × segment, hits per segment and per wall (`Engine::shape_counts`).
    WallCounts,
    /// Segment × circle, hits per segment and per circle (`Engine::shape_counts`).
    CircleCounts,
    /// Segment × segment, each segment's first hit (`Engine::shape_first_hits`).
    WallFirstHits,
    /// Segment × circle, each segment's first hit (`Engine::shape_first_hits`).
    CircleFirstHits,
    /// Segment × segment, the hitting pairs (`Engine::shape_hits`).
    WallHits,
    /// Segment × circle, the hitting pairs (`Engine::shape_hits`).
    CircleHits,
    /// Segment × polygon, hits per segment and per polygon (`Engine::polygon_counts`).
    PolygonCounts,
    /// Segment × polygon, each segment's first hit (`Engine::polygon_first_hits`).
    PolygonFirstHits,
    /// Segment × polygon, the hitting pairs (`Engine::polygon_hits`).
    PolygonHits,
    FirstHit,
    Frames,
    /// First hit, hits and counts with the broad phase (a grid) against the brute force.
    BroadPhase,
    /// The constants of `--backend auto`'s cost model on this machine (default 65536 x
    /// 4096: rect first hits and hits at that size, the dense pairs and shapes smaller), printed
    /// as RECTCAST_AUTO_COSTS reads them.
    Auto,
}

/// `rectcast bench`.
pub fn run(args: BenchArgs) -> Outcome {
    let BenchArgs {
        query,
        segments,
        rects,
        iterations,
        backend,
        scene,
        readback,
        broad_phase,
    } = args;
    let limits = readback.limits();
    let broad_phase = BroadPhase::from(broad_phase);
    match query {
        BenchQuery::Pairs => bench(
            scene.unwrap_or(BenchScene::Random),
            segments.unwrap_or(4096),
            rects.unwrap_or(1024),
            iterations,
            (backend, limits, BroadPhase::Auto),
        ),
        BenchQuery::Walls
        | BenchQuery::Circles
        | BenchQuery::Polygons
        | BenchQuery::WallCounts
        | BenchQuery::CircleCounts
        | BenchQuery::WallFirstHits
        | BenchQuery::CircleFirstHits
        | BenchQuery::WallHits
        | BenchQuery::CircleHits
        | BenchQuery::PolygonCounts
        | BenchQuery::PolygonFirstHits
        | BenchQuery::PolygonHits => bench_shapes(
            query,
            (scene.unwrap_or(BenchScene::Random), segments.unwrap_or(512)),
            rects.unwrap_or(256),
            iterations,
            (backend, limits, broad_phase),
        ),
        BenchQuery::FirstHit => bench_first_hit(
            segments.unwrap_or(65_536),
            rects.unwrap_or(4096),
            iterations,
            (backend, limits, broad_phase),
        ),
        BenchQuery::BroadPhase => bench_broad_phase(
            scene.unwrap_or(BenchScene::BulletHell),
            segments.unwrap_or(1 << 20),
            rects.unwrap_or(100_000),
            iterations,
            &backend,
        ),
        BenchQuery::Auto => auto::bench_auto(
            segments.unwrap_or(65_536),
            rects.unwrap_or(4096),
            iterations,
            backend.is_empty() || backend.contains(&BackendArg::Gpu),
        ),
        BenchQuery::Frames => {
            if !backend.is_empty() && !backend.contains(&BackendArg::Gpu) {
                return Err(
                    "--query frames measures the GPU's per-frame API: --backend cpu or auto does not apply (give --backend gpu, or none)".into(),
                );
            }
            bench_frames(
                segments.unwrap_or(10_000),
                rects.unwrap_or(1000),
                iterations,
            )
        }
    }
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
            // A query whose host recorded no timestamps (none does today) has no row.
            let Some(time) = engine.gpu_kernel_time() else {
                engine.time_gpu_kernels(false);
                return Ok(None);
            };
            times.push(time);
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
    (backends, limits, broad_phase): (Vec<BackendArg>, GpuLimits, BroadPhase),
    (reference_name, mut reference): (&str, impl FnMut()),
    mut run: impl FnMut(&mut Engine) -> Outcome,
) -> Outcome {
    let explicit = !backends.is_empty();
    let backends = if explicit {
        backends
    } else {
        vec![BackendArg::Cpu, BackendArg::Gpu]
    };
    let mut rows = vec![Row::timed(
        format!("scalar reference ({reference_name}, 1 thread)"),
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
        engines.push(match b {
            BackendArg::Gpu => GpuContext::new()
                .and_then(|context| Engine::gpu(context, limits))
                .map_err(|e| e.to_string()),
            other => engine(other.into()),
        });
        for opened in engines {
            let mut engine = match opened {
                Ok(engine) => engine,
                Err(e) if !explicit => {
                    notes.push(format!("{b:?}: skipped ({e})"));
                    continue;
                }
                Err(e) => return Err(e),
            };
            engine.set_broad_phase(broad_phase);
            let mut row = Row::timed(String::new(), iterations, || run(&mut engine))?;
            let grid = match engine.used_broad_phase() {
                true => ", through the grid",
                false => "",
            };
            row.name = match engine.gpu_context() {
                Some(_) => format!("{}{grid}, end to end", engine.chosen()),
                None => format!("{}{grid}", engine.chosen()),
            };
            rows.push(row);
            if let Some(context) = engine.gpu_context() {
                let adapter = context.adapter_info().name.clone();
                if let Some(call) = engine.last_gpu_call() {
                    notes.push(format!(
                        "{adapter}, the last end-to-end call on the host: preparing (checking inputs, planning the grid) {:.3} ms, submitting (uploads, recording) {:.3} ms, waiting for the GPU {:.3} ms, merging results {:.3} ms; {} chunk(s), {} in flight before the first read; {:.3} MB read back, {} packed result(s) not read back, decided on the host",
                        ms(call.preparing),
                        ms(call.submitting),
                        ms(call.waiting),
                        ms(call.merging),
                        call.chunks,
                        call.submitted_before_first_read,
                        call.bytes_read as f64 / 1e6,
                        call.decided_on_host
                    ));
                }
                match Row::kernel(&mut engine, iterations, &mut run)? {
                    Some(row) => rows.push(row),
                    None => notes.push(format!(
                        "{adapter}: no kernel time for this query (no timestamp queries, or none recorded), no kernel-only row"
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
    which: BenchScene,
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: (Vec<BackendArg>, GpuLimits, BroadPhase),
) -> Outcome {
    let (segments, rects) = which.generate(7, segment_count, rect_count);
    let mut results = vec![PairResult::MISS; segments.len() * rects.len()];
    println!(
        "dense pairs, {which:?} scene, {} segments x {} rects = {} pairs, {iterations} iterations",
        segments.len(),
        rects.len(),
        results.len(),
    );
    let mut expected = results.clone();
    bench_table(
        results.len() as f64,
        iterations,
        backends,
        ("rectcast::cpu::rect_pairs", || {
            rectcast::cpu::rect_pairs::pairs_dense(&segments, &rects, &mut expected)
        }),
        |engine| {
            engine
                .pairs_into(&segments, &rects, &mut results)
                .map_err(|e| e.to_string())
        },
    )
}

/// Every segment against every wall, circle or polygon of a random scene (long segments at
/// every slope on a 1000 x 1000 square; walls are such segments, circles of radius 5 to 40 and
/// star-shaped polygons of 8 to 16 vertices and radius 10 to 60 on the same square), or of the
/// bullet-hell scene (a wall along each hitbox's diagonal, a disk and an octagon in each one):
/// the scalar function, the CPU engine and the GPU's kernel; the dense pairs, or the counts,
/// the first hits or the hits.
fn bench_shapes(
    query: BenchQuery,
    (scene_kind, segment_count): (BenchScene, usize),
    shape_count: usize,
    iterations: usize,
    backends: (Vec<BackendArg>, GpuLimits, BroadPhase),
) -> Outcome {
    let (segments, walls, disks, polygons) = match scene_kind {
        BenchScene::BulletHell => {
            // Bullets among hitboxes: a wall along each one's diagonal, a disk in each one.
            let (segments, boxes) = scene::bullet_hell(2026, segment_count, shape_count);
            let walls = boxes
                .iter()
                .map(|b| rectcast::Segment::new(b.min_x, b.min_y, b.max_x, b.max_y))
                .collect::<Vec<_>>();
            let disks = boxes
                .iter()
                .map(|b| {
                    let (w, h) = (b.max_x - b.min_x, b.max_y - b.min_y);
                    rectcast::Circle::new(b.min_x + w / 2.0, b.min_y + h / 2.0, w.min(h) / 2.0)
                })
                .collect::<Vec<_>>();
            // An octagon with a vertex at each third of the box's sides (8 wide in a
            // zero-width hitbox).
            let octagons = boxes.iter().map(|b| {
                let (w, h) = ((b.max_x - b.min_x).max(8.0), b.max_y - b.min_y);
                let (x1, x2) = (b.min_x + w / 3.0, b.min_x + 2.0 * w / 3.0);
                let (y1, y2) = (b.min_y + h / 3.0, b.min_y + 2.0 * h / 3.0);
                [
                    [x1, b.min_y],
                    [x2, b.min_y],
                    [b.min_x + w, y1],
                    [b.min_x + w, y2],
                    [x2, b.max_y],
                    [x1, b.max_y],
                    [b.min_x, y2],
                    [b.min_x, y1],
                ]
            });
            let polygons = rectcast::Polygons::from_rings(octagons).map_err(|e| e.to_string())?;
            (segments, walls, disks, polygons)
        }
        _ => (
            scene::random_batch(7, segment_count, 1, 1000.0).0,
            scene::random_batch(8, shape_count, 1, 1000.0).0,
            scene::random_circles(9, shape_count, 1000.0, (5.0, 40.0)),
            scene::random_polygons(10, shape_count, 1000.0, (10.0, 60.0), (8, 16)),
        ),
    };
    let pairs = segments.len() * shape_count;
    use BenchQuery::{CircleCounts, CircleFirstHits, CircleHits, Circles};
    use BenchQuery::{PolygonCounts, PolygonFirstHits, PolygonHits, Polygons};
    let circles = matches!(query, Circles | CircleCounts | CircleFirstHits | CircleHits);
    let on_polygons = matches!(
        query,
        Polygons | PolygonCounts | PolygonFirstHits | PolygonHits
    );
    let (what, name) = match query {
        _ if circles => ("circles", "rectcast::segment_circle"),
        _ if on_polygons => ("polygons", "rectcast::segment_polygon"),
        _ => ("walls", "rectcast::segment_segment"),
    };
    let reduced = match query {
        BenchQuery::WallCounts | CircleCounts | PolygonCounts => " (counts)",
        BenchQuery::WallFirstHits | CircleFirstHits | PolygonFirstHits => " (first hits)",
        BenchQuery::WallHits | CircleHits | PolygonHits => " (hits)",
        _ => "",
    };
    println!(
        "{what}{reduced}, {} scene, {} segments x {shape_count} {what} = {pairs} pairs, {iterations} iterations",
        match scene_kind {
            BenchScene::BulletHell => "bullet-hell",
            _ => "random",
        },
        segments.len()
    );
    let reference = || {
        for s in &segments {
            match query {
                _ if circles => disks.iter().for_each(|c| {
                    std::hint::black_box(rectcast::segment_circle(s, c));
                }),
                _ if on_polygons => polygons.rings().for_each(|ring| {
                    std::hint::black_box(rectcast::segment_polygon(s, ring));
                }),
                _ => walls.iter().for_each(|w| {
                    std::hint::black_box(rectcast::segment_segment(s, w));
                }),
            }
        }
    };
    bench_table(
        pairs as f64,
        iterations,
        backends,
        (name, reference),
        |engine| {
            let done = match query {
                BenchQuery::WallCounts => engine
                    .shape_counts(&segments, &walls)
                    .map(|c| c.per_target.len()),
                CircleCounts => engine
                    .shape_counts(&segments, &disks)
                    .map(|c| c.per_target.len()),
                BenchQuery::WallFirstHits => {
                    engine.shape_first_hits(&segments, &walls).map(|f| f.len())
                }
                CircleFirstHits => engine.shape_first_hits(&segments, &disks).map(|f| f.len()),
                BenchQuery::WallHits => engine.shape_hits(&segments, &walls).map(|h| h.len()),
                CircleHits => engine.shape_hits(&segments, &disks).map(|h| h.len()),
                Circles => engine.circle_pairs(&segments, &disks).map(|r| r.len()),
                Polygons => engine.polygon_pairs(&segments, &polygons).map(|r| r.len()),
                PolygonCounts => engine
                    .polygon_counts(&segments, &polygons)
                    .map(|c| c.per_target.len()),
                PolygonFirstHits => engine
                    .polygon_first_hits(&segments, &polygons)
                    .map(|f| f.len()),
                PolygonHits => engine.polygon_hits(&segments, &polygons).map(|h| h.len()),
                _ => engine.wall_pairs(&segments, &walls).map(|r| r.len()),
            };
            done.map(|_| ()).map_err(|e| e.to_string())
        },
    )
}

fn bench_first_hit(
    segment_count: usize,
    rect_count: usize,
    iterations: usize,
    backends: (Vec<BackendArg>, GpuLimits, BroadPhase),
) -> Outcome {
    use rectcast::cpu::rect_queries::{QueryOutputs, query, segment_rects};
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
        ("rectcast::cpu::rect_queries", || {
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
        }),
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
        "per-frame first hit on {}, bullet-hell frame of {} segments x {} rects (latency over {iterations} frames)",
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
    // Pipelined: frame k's results read during frame k + 1, over FRAMES frames in a row.
    const FRAMES: usize = 300;
    let mut previous = None;
    let start = Instant::now();
    for _ in 0..FRAMES {
        frames.write(&batch).map_err(|e| e.to_string())?;
        let id = frames.dispatch().map_err(|e| e.to_string())?;
        if let Some(previous) = previous.replace(id) {
            frames.read(previous, &mut out).map_err(|e| e.to_string())?;
        }
    }
    if let Some(last) = previous {
        frames.read(last, &mut out).map_err(|e| e.to_string())?;
    }
    println!(
        "  per frame, pipelined (read a frame later), {FRAMES} frames: {:.3} ms",
        ms(start.elapsed()) / FRAMES as f64
    );
    // Never blocking: every frame dispatches the next and takes whichever earlier frames are
    // done (try_read); only a full ring makes the loop poll until a slot frees.
    let mut pending = std::collections::VecDeque::new();
    let (mut ready_at_once, mut full_ring) = (0usize, 0usize);
    let start = Instant::now();
    for _ in 0..FRAMES {
        loop {
            match frames.write(&batch) {
                Ok(()) => break,
                Err(rectcast::Error::RingFull { .. }) => {
                    full_ring += 1;
                    let oldest = *pending.front().expect("a full ring has a frame");
                    if frames
                        .try_read(oldest, &mut out)
                        .map_err(|e| e.to_string())?
                    {
                        pending.pop_front();
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        pending.push_back(frames.dispatch().map_err(|e| e.to_string())?);
        while let Some(&oldest) = pending.front() {
            if !frames
                .try_read(oldest, &mut out)
                .map_err(|e| e.to_string())?
            {
                break;
            }
            pending.pop_front();
            ready_at_once += 1;
        }
    }
    while let Some(oldest) = pending.pop_front() {
        frames.read(oldest, &mut out).map_err(|e| e.to_string())?;
    }
    println!(
        "  per frame, never blocking (try_read), {FRAMES} frames: {:.3} ms ({ready_at_once} frames taken as they came, {full_ring} polls of a full ring)",
        ms(start.elapsed()) / FRAMES as f64
    );
    Ok(())
}
