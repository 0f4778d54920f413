//! `pairs`, `first-hit`, `hits`, `count`: every segment against every rect (or, with `--walls`,
//! `--circles` or `--polygons`, every wall, circle or polygon), as streaming jobs. Rects are read whole, segments in chunks; a worker thread runs each chunk on the
//! engine while this thread writes the rows of the chunk before and reads the chunk after, so
//! reading, the engine's work and writing overlap, and memory stays bounded (three chunks)
//! whatever the input size.
//!
//! To stdout (which cannot be taken back), the segments are first read through once and
//! checked, so bad input leaves no partial output there either; with `--out` rows go to a
//! temporary file that is moved into place only on success.

use std::path::PathBuf;

use clap::Args;
use rectcast::{Batch, BroadPhase, RectSet};

use crate::job::{
    self, Progress, SEGMENTS_PER_CHUNK, check_whole, destination, one_stdin, report, text,
};
use crate::options::{BackendArg, BroadPhaseArg, JobArgs, Outcome, engine};
use crate::output::{Sink, Table};
use crate::polygons::PolygonFile;
use crate::records::{self, Records};

/// Results per chunk for dense `pairs`.
const PAIRS_PER_CHUNK: usize = 1 << 22;

/// A chunk of segments for the worker, and a buffer for its first hits.
struct Job {
    chunk: Vec<rectcast::Segment>,
    ids: Vec<u64>,
    first: Vec<rectcast::FirstHit>,
    /// The input's progress once the chunk was read.
    progress: (u64, u64),
}

/// A chunk the worker ran, its buffers coming back, and its results.
struct Done {
    chunk: Vec<rectcast::Segment>,
    ids: Vec<u64>,
    progress: (u64, u64),
    out: Out,
}

type WallHit = rectcast::ShapeHit<rectcast::SegmentContact>;
type CircleHit = rectcast::ShapeHit<rectcast::CircleContact>;
type PolygonHit = rectcast::ShapeHit<rectcast::PolygonContact>;

enum Out {
    Pairs(Vec<rectcast::PairResult>),
    Hits(Vec<rectcast::Hit>),
    FirstHit(Vec<rectcast::FirstHit>),
    /// Hits per rect, wall or circle.
    Counts(Vec<u64>),
    WallPairs(Vec<rectcast::SegmentContact>),
    WallHits(Vec<WallHit>),
    WallFirstHits(Vec<Option<WallHit>>),
    CirclePairs(Vec<rectcast::CircleContact>),
    CircleHits(Vec<CircleHit>),
    CircleFirstHits(Vec<Option<CircleHit>>),
    PolygonPairs(Vec<rectcast::PolygonContact>),
    PolygonHits(Vec<PolygonHit>),
    PolygonFirstHits(Vec<Option<PolygonHit>>),
}

/// What the segments run against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Against {
    Rects,
    Walls,
    Circles,
    Polygons,
}

/// What a query runs against, held in memory: rects, walls, circles or polygons.
struct Held {
    rects: Vec<rectcast::Rect>,
    walls: Vec<rectcast::Segment>,
    circles: Vec<rectcast::Circle>,
    polygons: rectcast::Polygons,
}

/// Runs `query` on one chunk.
fn run_chunk(
    engine: &mut rectcast::Engine,
    (query, against): (Query, Against),
    held: &Held,
    rect_set: Option<&RectSet>,
    job: Job,
) -> Result<Done, String> {
    let (rects, walls, circles) = (&held.rects[..], &held.walls[..], &held.circles[..]);
    let polygons = &held.polygons;
    let Job {
        chunk,
        ids,
        mut first,
        progress,
    } = job;
    let e = |e: rectcast::Error| e.to_string();
    let batch = match rect_set {
        Some(set) => Batch::over(&chunk, set),
        None => Batch::new(&chunk, rects),
    };
    let out = match (against, query) {
        (Against::Rects, Query::Pairs) => Out::Pairs(engine.pairs(&chunk, rects).map_err(e)?),
        (Against::Rects, Query::Hits) => Out::Hits(engine.hits(&batch).map_err(e)?),
        (Against::Rects, Query::FirstHit) => {
            // One buffer for every chunk: no fresh pages per chunk.
            first.resize(chunk.len(), rectcast::FirstHit::NONE);
            engine.first_hit_into(&batch, &mut first).map_err(e)?;
            Out::FirstHit(first)
        }
        (Against::Rects, Query::Count) => Out::Counts(engine.counts(&batch).map_err(e)?.per_target),
        (Against::Walls, Query::Pairs) => {
            Out::WallPairs(engine.wall_pairs(&chunk, walls).map_err(e)?)
        }
        (Against::Walls, Query::Hits) => {
            Out::WallHits(engine.shape_hits(&chunk, walls).map_err(e)?)
        }
        (Against::Walls, Query::FirstHit) => {
            Out::WallFirstHits(engine.shape_first_hits(&chunk, walls).map_err(e)?)
        }
        (Against::Walls, Query::Count) => {
            Out::Counts(engine.shape_counts(&chunk, walls).map_err(e)?.per_target)
        }
        (Against::Circles, Query::Pairs) => {
            Out::CirclePairs(engine.circle_pairs(&chunk, circles).map_err(e)?)
        }
        (Against::Circles, Query::Hits) => {
            Out::CircleHits(engine.shape_hits(&chunk, circles).map_err(e)?)
        }
        (Against::Circles, Query::FirstHit) => {
            Out::CircleFirstHits(engine.shape_first_hits(&chunk, circles).map_err(e)?)
        }
        (Against::Circles, Query::Count) => {
            Out::Counts(engine.shape_counts(&chunk, circles).map_err(e)?.per_target)
        }
        (Against::Polygons, Query::Pairs) => {
            Out::PolygonPairs(engine.polygon_pairs(&chunk, polygons).map_err(e)?)
        }
        (Against::Polygons, Query::Hits) => {
            Out::PolygonHits(engine.polygon_hits(&chunk, polygons).map_err(e)?)
        }
        (Against::Polygons, Query::FirstHit) => {
            Out::PolygonFirstHits(engine.polygon_first_hits(&chunk, polygons).map_err(e)?)
        }
        (Against::Polygons, Query::Count) => Out::Counts(
            engine
                .polygon_counts(&chunk, polygons)
                .map_err(e)?
                .per_target,
        ),
    };
    Ok(Done {
        chunk,
        ids,
        progress,
        out,
    })
}

/// The inputs and output of a query over every segment and every rect.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("targets").required(true).args(["rects", "walls", "circles", "polygons"])))]
pub struct QueryArgs {
    /// Segments: .csv (columns x0,y0,x1,y1 found by name, in any order; others ignored), .npy
    /// (float32, shape [N, 4]) or .f32 (raw little-endian, 4 per record); .gz of any; `-` for
    /// CSV on stdin. Streamed in chunks: any size.
    #[arg(long)]
    segments: PathBuf,
    /// Rects, in the same formats (columns min_x,min_y,max_x,max_y). Held in memory.
    #[arg(long)]
    rects: Option<PathBuf>,
    /// Walls (segments, in the segments' formats) instead of rects: segment × segment. Rows
    /// (segment, wall, hit, contact, t_enter, t_exit) for pairs and hits, (segment, wall,
    /// contact, t_enter, t_exit) for first-hit, (wall, hits) for count. Held in memory.
    #[arg(long, conflicts_with = "rects")]
    walls: Option<PathBuf>,
    /// Circles (closed disks, columns cx,cy,r; .npy of shape [N, 3]; .f32 of 3 values a
    /// record) instead of rects: segment × circle, the walls' rows with `circle` and `kind`.
    /// Held in memory.
    #[arg(long, conflicts_with_all = ["rects", "walls"])]
    circles: Option<PathBuf>,
    /// Polygons (simple, closed: boundary and interior) instead of rects: segment × polygon.
    /// `.wkt` (one POLYGON a line), `.geojson`/`.json` (Polygon features), or vertices (.npy
    /// float32 [V, 2], CSV x,y, .f32) with --polygon-offsets. Rows add `entry_edge` and
    /// `exit_edge` (edge k runs from vertex k to k + 1). Held in memory.
    #[arg(long, conflicts_with_all = ["rects", "walls", "circles"])]
    polygons: Option<PathBuf>,
    /// The flat form's offsets: an .npy of P + 1 integers from 0 to V; polygon i is vertices
    /// offsets[i]..offsets[i + 1].
    #[arg(long, requires = "polygons")]
    polygon_offsets: Option<PathBuf>,
    /// Where the engine runs: a hardware GPU when one opens, else the CPU (`auto`); the GPU
    /// whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// first-hit, hits and count: find each segment's candidates through a grid over the rects
    /// (built once per job) or, for walls, circles and polygons on the CPU, over their boxes
    /// (built per chunk); or test every one (`off`). The output is the same bytes. Default:
    /// auto. Not for pairs, which are every pair.
    #[arg(long, value_enum)]
    broad_phase: Option<BroadPhaseArg>,
    /// Output: .npy (structured rows, `np.load`) or CSV (any other name); stdout (CSV) when
    /// absent. Written as the job goes to a temporary file, moved into place only on success:
    /// the streaming path for huge jobs. Stdout gets rows only once the input is known good
    /// (read twice, or held in a temporary file when it is a pipe).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    job: JobArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    Pairs,
    FirstHit,
    Hits,
    Count,
}

/// `pairs`, `first-hit`, `hits`, `count`: every segment against every rect.
pub fn run(args: QueryArgs, query: Query) -> Outcome {
    let job = args.job;
    if query == Query::Pairs && args.broad_phase.is_some() {
        return Err(
            "--broad-phase applies to first-hit, hits and count: pairs are every pair, so there are no candidates to find".into(),
        );
    }
    let against = match (&args.walls, &args.circles, &args.polygons) {
        (Some(_), _, _) => Against::Walls,
        (None, Some(_), _) => Against::Circles,
        (None, None, Some(_)) => Against::Polygons,
        (None, None, None) => Against::Rects,
    };
    let table = match (against, query) {
        (Against::Rects, Query::Pairs | Query::Hits) => Table::Pairs,
        (Against::Rects, Query::FirstHit) => Table::FirstHit,
        (Against::Rects, Query::Count) => Table::Count,
        (Against::Walls, Query::Pairs | Query::Hits) => Table::Walls,
        (Against::Walls, Query::FirstHit) => Table::WallFirstHit,
        (Against::Walls, Query::Count) => Table::WallCount,
        (Against::Circles, Query::Pairs | Query::Hits) => Table::Circles,
        (Against::Circles, Query::FirstHit) => Table::CircleFirstHit,
        (Against::Circles, Query::Count) => Table::CircleCount,
        (Against::Polygons, Query::Pairs | Query::Hits) => Table::Polygons,
        (Against::Polygons, Query::FirstHit) => Table::PolygonFirstHit,
        (Against::Polygons, Query::Count) => Table::PolygonCount,
    };
    Sink::check(args.out.as_deref(), table)?;
    // Rects, walls or circles: held in memory, with their record ids.
    let held_path = match (&args.walls, &args.circles, &args.polygons, &args.rects) {
        (Some(walls), _, _, _) => walls,
        (None, Some(circles), _, _) => circles,
        (None, None, Some(polygons), _) => polygons,
        (None, None, None, Some(rects)) => rects,
        (None, None, None, None) => {
            return Err("give --rects (or --walls, --circles or --polygons)".into());
        }
    };
    one_stdin(&[&args.segments, held_path])?;
    let open = |path: &PathBuf| Records::open(path, &records::RECTS, job.skip_invalid);
    let mut rect_file = args.rects.as_ref().map(open).transpose().map_err(text)?;
    let open = |path: &PathBuf| Records::open(path, &records::SEGMENTS, job.skip_invalid);
    let mut wall_file = args.walls.as_ref().map(open).transpose().map_err(text)?;
    let open = |path: &PathBuf| Records::open(path, &records::CIRCLES, job.skip_invalid);
    let mut circle_file = args.circles.as_ref().map(open).transpose().map_err(text)?;
    let (rects, rect_ids) = match &mut rect_file {
        Some(file) => file.read_all().map_err(text)?,
        None => Default::default(),
    };
    let (walls, wall_ids) = match &mut wall_file {
        Some(file) => file.read_all().map_err(text)?,
        None => Default::default(),
    };
    let (circles, circle_ids) = match &mut circle_file {
        Some(file) => file.read_all().map_err(text)?,
        None => Default::default(),
    };
    let polygon_file = args
        .polygons
        .as_ref()
        .map(|path| PolygonFile::read(path, args.polygon_offsets.as_deref(), job.skip_invalid))
        .transpose()?;
    let (polygons, polygon_ids) = match &polygon_file {
        Some(file) => (file.polygons.clone(), file.ids.clone()),
        None => Default::default(),
    };
    // The ids of the second column: rects', walls' or circles'.
    let rect_ids = match against {
        Against::Walls => wall_ids,
        Against::Circles => circle_ids,
        Against::Polygons => polygon_ids,
        Against::Rects => rect_ids,
    };
    let to = destination(args.out.as_deref(), &[&args.segments], || {
        check_whole(&args.segments, &records::SEGMENTS, job).map(|_| ())
    })?;
    let mut segments =
        Records::open(&args.segments, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    let mut engine = engine(args.backend.into())?;
    let broad_phase = BroadPhase::from(args.broad_phase.unwrap_or(BroadPhaseArg::Auto));
    engine.set_broad_phase(broad_phase);
    // The grid is built once for the whole job, not once per chunk (a GPU lists its cells
    // once too, and keeps them). Segments stream in, so `Auto` goes by the rects alone.
    let want_grid = against == Against::Rects
        && query != Query::Pairs
        && broad_phase.uses_grid(usize::MAX, rects.len(), false);
    let mut sink = Sink::create(to, table)?;
    let m = rects
        .len()
        .max(walls.len())
        .max(circles.len())
        .max(polygons.len());
    // Dense pairs a chunk of pairs at a time (a polygon's pairs counted per edge); the other
    // queries a chunk of segments (their memory follows the hits; on a GPU the engine runs a
    // shape's dense pairs in bounded chunks itself).
    let chunk_len = if query == Query::Pairs {
        (PAIRS_PER_CHUNK / m.max(polygons.edge_count()).max(1)).max(1)
    } else {
        SEGMENTS_PER_CHUNK
    };
    let progress = Progress::new(job.progress, segments.progress().0);
    let (mut chunk, mut ids) = (Vec::new(), Vec::new());
    // The grid is built on another thread while the first chunk is read.
    let (rect_set, first_read) = std::thread::scope(|scope| {
        let building = want_grid.then(|| scope.spawn(|| RectSet::new(&rects)));
        let first_read = segments.read_chunk(&mut chunk, &mut ids, chunk_len);
        let set = building.map(|b| b.join().expect("building a grid does not panic"));
        (set, first_read)
    });
    let rect_set = rect_set.transpose().map_err(|e| e.to_string())?;
    first_read.map_err(text)?;
    let mut per_target = vec![0u64; m];
    let mut done = 0;
    // Three stages at once: this thread reads chunk k + 2 and writes chunk k's rows while a
    // worker runs chunk k + 1 on the engine. Errors come out in the order a job that did one
    // chunk at a time would meet them: a chunk's rows are written before a read error of a
    // later chunk is reported.
    let rect_set = rect_set.as_ref();
    let held = &Held {
        rects,
        walls,
        circles,
        polygons,
    };
    std::thread::scope(|scope| -> Outcome {
        // Made here, so that an early return drops this thread's ends and the worker stops.
        let (to_worker, jobs) = std::sync::mpsc::sync_channel::<Job>(1);
        let (to_writer, results) = std::sync::mpsc::sync_channel::<Result<Done, String>>(1);
        scope.spawn(move || {
            let mut said_fallback = false;
            for job in jobs {
                let done = run_chunk(&mut engine, (query, against), held, rect_set, job);
                job::note_fallback(&engine, &mut said_fallback);
                let failed = done.is_err();
                if to_writer.send(done).is_err() || failed {
                    break;
                }
            }
        });
        let mut next = Some(Job {
            chunk,
            ids,
            first: Vec::new(),
            progress: segments.progress(),
        });
        let mut spare: Vec<(Vec<rectcast::Segment>, Vec<u64>)> = Vec::new();
        let mut spare_first = Vec::new();
        let mut in_flight = 0;
        let mut read_error = None;
        loop {
            // Chunk k + 1 to the worker (it waits in the channel while the worker runs chunk k).
            if let Some(job) = next.take().filter(|job| !job.chunk.is_empty()) {
                let job = Job {
                    first: std::mem::take(&mut spare_first),
                    ..job
                };
                // A worker that stopped has sent its error: it comes out below.
                if to_worker.send(job).is_ok() {
                    in_flight += 1;
                    // Chunk k + 2, read while the worker runs.
                    let (mut chunk, mut ids) = spare.pop().unwrap_or_default();
                    match segments.read_chunk(&mut chunk, &mut ids, chunk_len) {
                        Ok(()) => {
                            next = Some(Job {
                                chunk,
                                ids,
                                first: Vec::new(),
                                progress: segments.progress(),
                            })
                        }
                        Err(e) => read_error = Some(text(e)),
                    }
                }
            }
            if in_flight == 0 {
                break;
            }
            // Two chunks in flight before the first result is taken.
            if in_flight < 2 && next.is_some() {
                continue;
            }
            // Chunk k's rows, written while the worker runs chunk k + 1.
            let finished = results
                .recv()
                .map_err(|_| "rectcast: the engine's worker thread stopped".to_string())??;
            in_flight -= 1;
            match &finished.out {
                Out::Pairs(results) => sink.pairs(
                    results
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (finished.ids[i / m], rect_ids[i % m], r)),
                )?,
                Out::WallPairs(contacts) => sink.shape_pairs(
                    contacts
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (finished.ids[i / m], rect_ids[i % m], c)),
                )?,
                Out::CirclePairs(contacts) => sink.shape_pairs(
                    contacts
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (finished.ids[i / m], rect_ids[i % m], c)),
                )?,
                Out::WallHits(hits) => sink.shape_pairs(hits.iter().map(|h| {
                    (
                        finished.ids[h.segment as usize],
                        rect_ids[h.shape as usize],
                        &h.contact,
                    )
                }))?,
                Out::CircleHits(hits) => sink.shape_pairs(hits.iter().map(|h| {
                    (
                        finished.ids[h.segment as usize],
                        rect_ids[h.shape as usize],
                        &h.contact,
                    )
                }))?,
                Out::PolygonPairs(contacts) => sink.polygon_pairs(
                    contacts
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (finished.ids[i / m], rect_ids[i % m], c)),
                )?,
                Out::PolygonHits(hits) => sink.polygon_pairs(hits.iter().map(|h| {
                    (
                        finished.ids[h.segment as usize],
                        rect_ids[h.shape as usize],
                        &h.contact,
                    )
                }))?,
                Out::PolygonFirstHits(first) => {
                    sink.polygon_first_hits(&finished.ids, &rect_ids, first)?
                }
                Out::WallFirstHits(first) => {
                    sink.shape_first_hits(&finished.ids, &rect_ids, first)?
                }
                Out::CircleFirstHits(first) => {
                    sink.shape_first_hits(&finished.ids, &rect_ids, first)?
                }
                Out::Hits(hits) => sink.pairs(hits.iter().map(|h| {
                    (
                        finished.ids[h.segment as usize],
                        rect_ids[h.rect as usize],
                        &h.result,
                    )
                }))?,
                Out::FirstHit(first) => sink.first_hits(&finished.ids, &rect_ids, first)?,
                Out::Counts(counts) => {
                    for (total, n) in per_target.iter_mut().zip(counts) {
                        *total += n;
                    }
                }
            }
            done += finished.chunk.len() as u64;
            progress.update(done, finished.progress);
            if let Out::FirstHit(first) = finished.out {
                spare_first = first;
            }
            spare.push((finished.chunk, finished.ids));
        }
        drop(to_worker);
        read_error.map_or(Ok(()), Err)
    })?;
    if query == Query::Count {
        sink.counts(&rect_ids, &per_target)?;
    }
    progress.finish();
    sink.finish()?;
    if let Some(file) = &rect_file {
        report(file);
    }
    if let Some(file) = &wall_file {
        report(file);
    }
    if let Some(file) = &circle_file {
        report(file);
    }
    if let Some(file) = &polygon_file {
        file.report();
    }
    report(&segments);
    Ok(())
}
