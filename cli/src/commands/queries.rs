//! `pairs`, `first-hit`, `hits`, `count`: every segment against every rect, as streaming
//! jobs. Rects are read whole, segments in chunks; each chunk runs on the engine and its rows
//! are written before the next is read, so memory stays bounded whatever the input size.
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
use crate::records::{self, Records};

/// Results per chunk for dense `pairs`.
const PAIRS_PER_CHUNK: usize = 1 << 22;

/// The inputs and output of a query over every segment and every rect.
#[derive(Args)]
pub struct QueryArgs {
    /// Segments: .csv (columns x0,y0,x1,y1 found by name, in any order; others ignored), .npy
    /// (float32, shape [N, 4]) or .f32 (raw little-endian, 4 per record); .gz of any; `-` for
    /// CSV on stdin. Streamed in chunks: any size.
    #[arg(long)]
    segments: PathBuf,
    /// Rects, in the same formats (columns min_x,min_y,max_x,max_y). Held in memory.
    #[arg(long)]
    rects: PathBuf,
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// first-hit, hits and count: find each segment's candidate rects through a grid over the
    /// rects (built once per job), or test every rect (`off`). The output is the same bytes.
    #[arg(long, value_enum, default_value = "auto")]
    broad_phase: BroadPhaseArg,
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
    let table = match query {
        Query::Pairs | Query::Hits => Table::Pairs,
        Query::FirstHit => Table::FirstHit,
        Query::Count => Table::Count,
    };
    Sink::check(args.out.as_deref(), table)?;
    one_stdin(&[&args.segments, &args.rects])?;
    let mut rect_file =
        Records::open(&args.rects, &records::RECTS, job.skip_invalid).map_err(text)?;
    let (rects, rect_ids) = rect_file.read_all().map_err(text)?;
    let to = destination(args.out.as_deref(), &[&args.segments], || {
        check_whole(&args.segments, &records::SEGMENTS, job).map(|_| ())
    })?;
    let mut segments =
        Records::open(&args.segments, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    let mut engine = engine(args.backend.into())?;
    let broad_phase = BroadPhase::from(args.broad_phase);
    engine.set_broad_phase(broad_phase);
    // The grid is built once for the whole job, not once per chunk (a GPU lists its cells
    // once too, and keeps them). Segments stream in, so `Auto` goes by the rects alone.
    let want_grid = query != Query::Pairs && broad_phase.uses_grid(usize::MAX, rects.len(), false);
    let mut sink = Sink::create(to, table)?;
    let m = rects.len();
    let chunk_len = match query {
        Query::Pairs => (PAIRS_PER_CHUNK / m.max(1)).max(1),
        _ => SEGMENTS_PER_CHUNK,
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
    let mut per_rect = vec![0u64; m];
    let mut first = Vec::new();
    let mut done = 0;
    let e = |e: rectcast::Error| e.to_string();
    let mut said_fallback = false;
    let mut read_next = false;
    loop {
        if read_next {
            segments
                .read_chunk(&mut chunk, &mut ids, chunk_len)
                .map_err(text)?;
        }
        read_next = true;
        if chunk.is_empty() {
            break;
        }
        let batch = match &rect_set {
            Some(set) => Batch::over(&chunk, set),
            None => Batch::new(&chunk, &rects),
        };
        match query {
            Query::Pairs => {
                let results = engine.pairs(&chunk, &rects).map_err(e)?;
                sink.pairs(
                    results
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (ids[i / m], rect_ids[i % m], r)),
                )?;
            }
            Query::Hits => {
                let hits = engine.hits(&batch).map_err(e)?;
                sink.pairs(hits.iter().map(|h| {
                    (
                        ids[h.segment as usize],
                        rect_ids[h.rect as usize],
                        &h.result,
                    )
                }))?;
            }
            Query::FirstHit => {
                // One buffer for every chunk: no fresh pages per chunk.
                first.resize(chunk.len(), rectcast::FirstHit::NONE);
                engine.first_hit_into(&batch, &mut first).map_err(e)?;
                sink.first_hits(&ids, &rect_ids, &first)?;
            }
            Query::Count => {
                let counts = engine.counts(&batch).map_err(e)?;
                for (total, n) in per_rect.iter_mut().zip(&counts.per_rect) {
                    *total += n;
                }
            }
        }
        job::note_fallback(&engine, &mut said_fallback);
        done += chunk.len() as u64;
        progress.update(done, segments.progress());
    }
    if query == Query::Count {
        sink.counts(&rect_ids, &per_rect)?;
    }
    progress.finish();
    sink.finish()?;
    report(&rect_file);
    report(&segments);
    Ok(())
}
