//! `pairs`, `first-hit`, `hits`, `count`: every segment against every rect (or, with `--walls`,
//! `--circles` or `--polygons`, every wall, circle or polygon), as streaming jobs. The targets
//! are read whole, segments in chunks, in three stages at once: this thread reads chunk k + 2
//! (the reader) and writes the rows of chunk k (the writer) while a worker thread runs chunk
//! k + 1 on the engine, so reading, the engine's work and writing overlap, and memory stays
//! bounded (three chunks) whatever the input size. What a target's rows hold and how each
//! query runs on it is its description in `targets.rs`; this module only streams.
//!
//! To stdout (which cannot be taken back), the segments are first read through once and
//! checked, so bad input leaves no partial output there either; with `--out` rows go to a
//! temporary file that is moved into place only on success.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender};

use clap::Args;
use rectcast::{BroadPhase, Engine, SceneShape, Segment, ShapeRecord, TargetKind, Targets};

use crate::job::{
    self, Progress, SEGMENTS_PER_CHUNK, check_whole, destination, one_stdin, report, text,
};
use crate::kept::{self, Keeping, KeptRows, Side, Wanted};
use crate::mixed::Mixed;
use crate::options::{BackendArg, BroadPhaseArg, JobArgs, Outcome, engine};
use crate::output::{At, Sink, Table, TargetColumns};
use crate::polygons::PolygonFile;
use crate::polygons::report_srid;
use crate::polylines::is_polyline_file;
use crate::records::{self, RecordKind, Records};
use crate::shape_files::{FlagHelp, ShapeFiles, TARGETS, capitalized};
use crate::table::Column;
use crate::table::Kept;
use crate::targets::{
    FirstRow, ForShape, HitRow, PolygonTargets, Rects, ResultCells, SHAPE_FLAGS, Shapes, Target,
    for_shape,
};

/// Results per chunk for dense `pairs`.
const PAIRS_PER_CHUNK: usize = 1 << 22;

/// The inputs and output of a query over every segment and every rect.
#[derive(Args)]
#[command(group(clap::ArgGroup::new(TARGETS).required(true).multiple(true)))]
pub struct QueryArgs {
    /// Segments: .csv (columns x0,y0,x1,y1 found by name, in any order; others ignored), .npy
    /// (float32, shape [N, 4]) or .f32 (raw little-endian, 4 per record); .gz of any; `-` for
    /// CSV on stdin. Streamed in chunks: any size. Or polylines: .wkt (LINESTRING,
    /// MULTILINESTRING) or .geojson: their segments, rows naming each one's line and
    /// line_segment.
    #[arg(long)]
    segments: PathBuf,
    /// Rects, in the same formats (columns min_x,min_y,max_x,max_y). Held in memory. Any mix
    /// of --rects, --walls, --circles and --polygons makes one job: its rows start
    /// segment,target_kind,target (the index within that kind's file) and carry every kind's
    /// columns, empty where a kind has none.
    #[arg(long, group = TARGETS)]
    rects: Option<PathBuf>,
    /// The registered shapes' files (`--walls`, `--circles`), alone or with any other kind.
    #[command(flatten)]
    shapes: ShapeFiles<QueryHelp>,
    /// Polygons, holes and multipolygons included, alone or with other kinds: segment × polygon (its
    /// boundary and interior; each ring simple and closed). `.wkt` (one POLYGON or
    /// MULTIPOLYGON a line), `.geojson`/`.json` (Polygon and MultiPolygon features), or
    /// vertices (.npy float32 [V, 2], CSV x,y, .f32) with --polygon-offsets. Rows add
    /// `entry_edge` and `exit_edge` (edges numbered ring after ring through the polygon, edge
    /// k from vertex k to k + 1), and `entry_ring` and `exit_ring` (0 for the shell, then its
    /// holes and further parts' rings in order). Held in memory.
    #[arg(long, group = TARGETS)]
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
    /// or, for walls, circles and polygons on the CPU, over their boxes (built once per job);
    /// or test every one (`off`). The output is the same bytes. Default:
    /// auto. Not for pairs, which are every pair.
    #[arg(long, value_enum)]
    broad_phase: Option<BroadPhaseArg>,
    /// Input columns carried into each row, after its own, as text: a column of the segments'
    /// file or of the targets' (CSV and Parquet columns; GeoJSON properties, and a feature's
    /// id). A name both files have, or one the rows have already, is written segments:NAME or
    /// TARGETS:NAME (rects:id, polygons:kind); the column is named as written. count keeps the
    /// targets' columns only. Not in .npy output, which holds numbers.
    #[arg(long, value_name = "COLUMN", num_args = 1.., value_delimiter = ',')]
    keep: Vec<String>,
    /// Output: .npy (structured rows, `np.load`) or CSV (any other name); stdout (CSV) when
    /// absent. Written as the job goes to a temporary file, moved into place only on success:
    /// the streaming path for huge jobs. Stdout gets rows only once the input is known good
    /// (read twice, or held in a temporary file when it is a pipe).
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    origin: crate::origin::OriginArgs,
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

/// The table a query writes over targets `T`, for segments of polylines' `lines` or not, with
/// `kept` columns last.
fn table<T: Target>(query: Query, lines: bool, kept: Vec<Column>) -> Table {
    let target = TargetColumns::of::<T>().over_lines(lines).keeping(kept);
    match query {
        Query::Pairs | Query::Hits => Table::Pairs(target),
        Query::FirstHit => Table::FirstHit(target),
        Query::Count => Table::Count(target),
    }
}

/// `pairs`, `first-hit`, `hits`, `count`: every segment against every target. One arm per
/// kind of target: how its file is read.
pub fn run(args: QueryArgs, query: Query) -> Outcome {
    if query == Query::Pairs && args.broad_phase.is_some() {
        return Err(
            "--broad-phase applies to first-hit, hits and count: pairs are every pair, so there are no candidates to find".into(),
        );
    }
    let mut inputs = vec![args.segments.as_path()];
    inputs.extend(args.rects.as_deref());
    inputs.extend(args.polygons.as_deref());
    inputs.extend(args.polygon_offsets.as_deref());
    inputs.extend(args.shapes.given().map(|(_, path)| path));
    crate::output::not_an_input(args.out.as_deref(), &inputs)?;
    let targets = target_files(&args);
    crate::origin::choose(args.origin.origin, &args.segments, &targets)?;
    // The device opens while the targets and the first segments are read.
    crate::options::open_ahead(args.backend.into());
    if targets.len() > 1 {
        return mixed(&args, query);
    }
    if let Some((flag, path)) = args.shapes.given().next() {
        let held = Held {
            args: &args,
            query,
            path,
        };
        return for_shape(flag, held).unwrap_or_else(|| Err(format!("no shape takes --{flag}")));
    }
    match (&args.polygons, &args.rects) {
        (Some(path), _) => {
            let (table, wanted) = job_table::<PolygonTargets>(&args, query, "polygons")?;
            Sink::check(args.out.as_deref(), table)?;
            one_stdin(&[&args.segments, path])?;
            let offsets = args.polygon_offsets.as_deref();
            let file = PolygonFile::read(path, offsets, args.job.skip_invalid)?;
            let (targets, values) = file.keep(&wanted);
            let keep = Keep {
                table,
                wanted,
                targets,
                values,
            };
            let polygons = PolygonTargets(file.polygons.clone());
            stream(&args, query, &polygons, &file.ids, keep, || file.report())
        }
        (None, Some(path)) => held(&args, query, ("rects", path), &records::RECTS, Rects),
        (None, None) => Err(format!(
            "give --rects (or {} or --polygons)",
            SHAPE_FLAGS
                .iter()
                .map(|flag| format!("--{flag}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The targets' files of a job, each with how its geometry text is read.
fn target_files(args: &QueryArgs) -> Vec<(&Path, rectcast_geotext::Kind)> {
    use rectcast_geotext::Kind;
    let lines = args.rects.iter().map(|p| (p.as_path(), Kind::Lines));
    let shapes = args.shapes.given().map(|(_, path)| (path, Kind::Lines));
    let polygons = args.polygons.iter().map(|p| (p.as_path(), Kind::Polygons));
    lines.chain(shapes).chain(polygons).collect()
}

/// A job over several kinds of target at once (`mixed.rs`): each kind's file read whole into
/// one [`Targets`], their ids kind after kind in [`TargetKind`] order.
fn mixed(args: &QueryArgs, query: Query) -> Outcome {
    let mut flags = vec!["rects", "polygons"];
    flags.extend(SHAPE_FLAGS);
    let of_targets = |arg: &&String| {
        query == Query::Count || arg.split_once(':').is_some_and(|(f, _)| flags.contains(&f))
    };
    if let Some(arg) = args.keep.iter().find(of_targets) {
        return Err(format!(
            "--keep {arg}: a job over several kinds of target keeps the segments' columns \
             only, and count, whose rows are the targets', keeps none"
        ));
    }
    let (table, mut wanted) = job_table::<Mixed>(args, query, "segments")?;
    for w in &mut wanted {
        w.side.get_or_insert(Side::Segments);
    }
    Sink::check(args.out.as_deref(), table)?;
    let files = target_files(args);
    let mut inputs = vec![args.segments.as_path()];
    inputs.extend(files.iter().map(|(path, _)| *path));
    one_stdin(&inputs)?;
    let skip = args.job.skip_invalid;
    let mut targets = Targets::new();
    let mut ids: [Vec<u64>; 4] = Default::default();
    let mut reports: Vec<Box<dyn FnOnce()>> = Vec::new();
    if let Some(path) = &args.rects {
        let mut file = Records::open(path, &records::RECTS, skip).map_err(text)?;
        let (rects, read, _) = file.read_all().map_err(text)?;
        targets.set_rects(&rects).map_err(|e| e.to_string())?;
        ids[TargetKind::Rect as usize] = read;
        reports.push(Box::new(move || report(&file)));
    }
    for (flag, path) in args.shapes.given() {
        let into = ReadInto {
            path,
            skip,
            targets: &mut targets,
            ids: &mut ids,
        };
        let read = for_shape(flag, into).unwrap_or_else(|| Err(format!("no shape takes --{flag}")));
        reports.push(read?);
    }
    if let Some(path) = &args.polygons {
        let file = PolygonFile::read(path, args.polygon_offsets.as_deref(), skip)?;
        targets.set_polygons(file.polygons.clone());
        ids[TargetKind::Polygon as usize] = file.ids.clone();
        reports.push(Box::new(move || file.report()));
    }
    let keep = Keep {
        table,
        wanted,
        targets: Keeping::default(),
        values: Kept::default(),
    };
    let said = || reports.into_iter().for_each(|report| report());
    stream(args, query, &Mixed::new(targets), &ids.concat(), keep, said)
}

/// Reads a registered shape's file into a mixed job's targets; what it skipped is said later.
struct ReadInto<'a> {
    path: &'a Path,
    skip: bool,
    targets: &'a mut Targets,
    ids: &'a mut [Vec<u64>; 4],
}

impl ForShape for ReadInto<'_> {
    type Output = Result<Box<dyn FnOnce()>, String>;
    fn with<S: ShapeRecord + SceneShape>(self) -> Self::Output
    where
        S::Contact: ResultCells,
    {
        let kind = RecordKind::<S>::shape();
        let mut file = Records::open(self.path, &kind, self.skip).map_err(text)?;
        let (shapes, read, _) = file.read_all().map_err(text)?;
        S::set_in(self.targets, &shapes).map_err(|e| e.to_string())?;
        self.ids[S::KIND as usize] = read;
        Ok(Box::new(move || report(&file)))
    }
}

/// A job over a registered shape's file, held in memory.
struct Held<'a> {
    args: &'a QueryArgs,
    query: Query,
    path: &'a Path,
}

impl ForShape for Held<'_> {
    type Output = Outcome;
    fn with<S: ShapeRecord + SceneShape>(self) -> Outcome
    where
        S::Contact: ResultCells,
    {
        let kind = RecordKind::<S>::shape();
        let flag = S::PLURAL;
        held(self.args, self.query, (flag, self.path), &kind, Shapes::<S>)
    }
}

/// What `pairs`, `first-hit`, `hits` and `count` say of a shape's flag: its records, and the
/// rows of each query's table.
pub struct QueryHelp;

impl FlagHelp for QueryHelp {
    fn help<S: ShapeRecord + SceneShape>() -> String
    where
        S::Contact: ResultCells,
    {
        let rows = |query| {
            let columns = table::<Shapes<S>>(query, false, Vec::new()).columns();
            columns
                .iter()
                .map(|c| c.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let values = S::FIELDS.len();
        // A shape whose record is a segment's is read from line strings too (polylines.rs).
        let lines = if S::FIELDS == records::SEGMENTS.names() {
            format!(
                "; or line strings, .wkt (LINESTRING, MULTILINESTRING) or .geojson, each of \
                 their segments a {} numbered in file order",
                S::NAME
            )
        } else {
            String::new()
        };
        format!(
            "{} ({}: columns {} in CSV, {values} values a record in .npy [N, {values}] and .f32\
             {lines}), alone or with other kinds: segment × {}. Rows ({}) for pairs and hits, ({}) for \
             first-hit, ({}) for count. Held in memory",
            capitalized(S::PLURAL),
            S::ABOUT,
            S::FIELDS.join(","),
            S::NAME,
            rows(Query::Pairs),
            rows(Query::FirstHit),
            rows(Query::Count),
        )
    }
}

/// A job over targets read as records of `kind` from `path` (given with `--flag`), held in
/// memory.
fn held<V, T: Target>(
    args: &QueryArgs,
    query: Query,
    (flag, path): (&str, &Path),
    kind: &RecordKind<V>,
    make: impl FnOnce(Vec<V>) -> T,
) -> Outcome {
    let (table, wanted) = job_table::<T>(args, query, flag)?;
    Sink::check(args.out.as_deref(), table)?;
    one_stdin(&[&args.segments, path])?;
    let mut file = Records::open(path, kind, args.job.skip_invalid).map_err(text)?;
    let targets = file.keep(&wanted, Side::Targets).map_err(text)?;
    let (values, ids, values_kept) = file.read_all().map_err(text)?;
    let keep = Keep {
        table,
        wanted,
        targets,
        values: values_kept,
    };
    stream(args, query, &make(values), &ids, keep, || report(&file))
}

/// The table a job writes over targets `T` (named `flag`), and the `--keep` columns it asked
/// for, checked against the table's own.
fn job_table<T: Target>(
    args: &QueryArgs,
    query: Query,
    flag: &str,
) -> Result<(Table, Vec<Wanted>), String> {
    let mut flags = vec!["rects", "polygons"];
    flags.extend(SHAPE_FLAGS);
    let wanted = kept::parse(&args.keep, flag, &flags)?;
    let lines = is_polyline_file(&args.segments);
    let own = table::<T>(query, lines, Vec::new()).columns();
    let kept = kept::columns(&wanted, own, flag)?;
    Ok((table::<T>(query, lines, kept), wanted))
}

/// A job's kept columns: its table (which has them), what `--keep` asked, and what the
/// targets keep.
struct Keep {
    table: Table,
    wanted: Vec<Wanted>,
    targets: Keeping,
    values: Kept,
}

/// A chunk of segments for the worker, and a buffer for its first hits.
struct Chunk<T: Target> {
    segments: Vec<Segment>,
    ids: Vec<u64>,
    /// The segments' kept values (`--keep`).
    kept: Kept,
    first: Vec<T::First>,
    /// The input's progress once the chunk was read.
    progress: (u64, u64),
}

/// What the worker computed for a chunk.
enum Out<T: Target> {
    Pairs(Vec<T::Result>),
    Hits(Vec<T::Hit>),
    FirstHits(Vec<T::First>),
    /// Hits per target.
    Counts(Vec<u64>),
}

/// A piece of a chunk the worker ran: the chunk (its buffers coming back with the last
/// piece), where the piece's segments start in it, how many there are, and their results.
/// Hits come in pieces ([`Pieces`]); every other query's piece is its whole chunk.
struct Done<T: Target> {
    chunk: Arc<Chunk<T>>,
    start: usize,
    len: usize,
    out: Out<T>,
}

impl<T: Target> Done<T> {
    /// Whether this is its chunk's last piece.
    fn last(&self) -> bool {
        self.start + self.len == self.chunk.segments.len()
    }
}

/// Hits per piece: a chunk's hits are found a piece of segments at a time, so that the rows
/// waiting to be written stay about this many however many rects each segment hits (a chunk
/// of 131,072 segments that hit 3,000 rects each would be 4e8 hits, 16 GB).
const HITS_PER_PIECE: usize = 1 << 21;

/// How many segments the next piece of hits takes: as many as keep its hits near
/// [`HITS_PER_PIECE`] at the hits per segment of the piece before, growing at most fourfold a
/// piece from 1,024 (a denser stretch met after a sparse one overshoots by that much at most
/// once, then the pieces shrink to it).
#[derive(Debug)]
struct Pieces {
    per_segment: f64,
    planned: usize,
}

impl Pieces {
    fn new() -> Self {
        Self {
            per_segment: 0.0,
            planned: 1 << 8,
        }
    }

    /// The next piece's length, at most `remaining`.
    fn next(&mut self, remaining: usize) -> usize {
        let by_hits = HITS_PER_PIECE as f64 / self.per_segment.max(1e-9);
        let planned = (by_hits as usize)
            .min(self.planned.saturating_mul(4))
            .max(1);
        self.planned = planned;
        planned.min(remaining)
    }

    /// A piece of `len` segments had `hits` hits.
    fn saw(&mut self, len: usize, hits: usize) {
        self.per_segment = hits as f64 / len.max(1) as f64;
    }
}

/// The job over every segment of `--segments` and every target of `target` (`target_ids`
/// their record indices), into `keep.table`; `report_held` says what the targets' file
/// skipped.
fn stream<T: Target>(
    args: &QueryArgs,
    query: Query,
    target: &T,
    target_ids: &[u64],
    keep: Keep,
    report_held: impl FnOnce(),
) -> Outcome {
    let job = args.job;
    let mut segments =
        Records::open(&args.segments, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    // The kept columns are settled before the segments are read through.
    let kept_segments = segments.keep(&keep.wanted, Side::Segments).map_err(text)?;
    let per_target = (query == Query::Count).then_some(T::NAME);
    let plan = kept::plan(&keep.wanted, &kept_segments, &keep.targets, per_target)?;
    let kept = (!plan.is_empty()).then_some(KeptRows {
        plan,
        targets: keep.values,
    });
    let to = destination(args.out.as_deref(), &[&args.segments], || {
        check_whole(&args.segments, &records::SEGMENTS, job).map(|_| ())
    })?;
    let mut engine = engine(args.backend.into())?;
    let broad_phase = BroadPhase::from(args.broad_phase.unwrap_or(BroadPhaseArg::Auto));
    engine.set_broad_phase(broad_phase);
    // Polylines' segments: rows name each one's line.
    let lines = segments.lines().map(|(lines, srid)| {
        report_srid(&args.segments, srid);
        lines
    });
    let mut sink = Sink::create(to, keep.table)?
        .with_lines(lines)
        .with_kept(kept);
    // Dense pairs a chunk of pairs at a time; the other queries a chunk of segments (their
    // memory follows the hits; on a GPU the engine runs a shape's dense pairs in bounded
    // chunks itself).
    let chunk_len = if query == Query::Pairs {
        (PAIRS_PER_CHUNK / target.pairs_per_segment().max(1)).max(1)
    } else {
        SEGMENTS_PER_CHUNK
    };
    let progress = Progress::new(job.progress, segments.progress().0);
    let mut reader = Reader {
        segments: &mut segments,
        chunk_len,
        spare: Vec::new(),
    };
    // What the chunks share (the rects' grid) is built on another thread while the first
    // chunk is read.
    let (prepared, first) = std::thread::scope(|scope| {
        let preparing = scope.spawn(|| target.prepare(query == Query::Pairs, broad_phase));
        let first = reader.read(Vec::new());
        (preparing.join().expect("preparing does not panic"), first)
    });
    let prepared = prepared?;
    let first = first?;
    let mut writer = Writer {
        sink: &mut sink,
        target_ids,
        width: target.len(),
        per_target: vec![0u64; target.len()],
        done: 0,
        progress: &progress,
    };
    // Errors come out in the order a job that did one chunk at a time would meet them: a
    // chunk's rows are written before a read error of a later chunk is reported.
    std::thread::scope(|scope| -> Outcome {
        // Made here, so that an early return drops this thread's ends and the worker stops.
        let (to_worker, chunks) = std::sync::mpsc::sync_channel::<Chunk<T>>(1);
        let (to_writer, results) = std::sync::mpsc::sync_channel(1);
        let prepared = &prepared;
        let engine = &mut engine;
        scope.spawn(move || worker(engine, query, target, prepared, chunks, to_writer));
        let mut next = Some(first);
        let mut spare_first = Vec::new();
        let mut in_flight = 0;
        let mut read_error = None;
        loop {
            // Chunk k + 1 to the worker (it waits in the channel while the worker runs chunk k).
            if let Some(chunk) = next.take().filter(|chunk| !chunk.segments.is_empty()) {
                // A worker that stopped has sent its error: it comes out below.
                if to_worker.send(chunk).is_ok() {
                    in_flight += 1;
                    // Chunk k + 2, read while the worker runs.
                    match reader.read(std::mem::take(&mut spare_first)) {
                        Ok(chunk) => next = Some(chunk),
                        Err(e) => read_error = Some(e),
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
            // Chunk k's rows, written while the worker runs chunk k + 1 (for hits, each
            // piece's rows while the worker runs the next piece). Every piece of chunk k is
            // taken before chunk k + 2 is sent: the worker, still sending pieces, is not yet
            // taking chunks, and chunk k + 1 fills the channel to it.
            let done = loop {
                let done = results
                    .recv()
                    .map_err(|_| "rectcast: the engine's worker thread stopped".to_string())??;
                writer.write(target, &done)?;
                if done.last() {
                    break done;
                }
            };
            in_flight -= 1;
            if let Out::FirstHits(first) = done.out {
                spare_first = first;
            }
            // The worker has let go of its last piece's chunk: its buffers are reused.
            if let Ok(Chunk {
                segments,
                ids,
                kept,
                ..
            }) = Arc::try_unwrap(done.chunk)
            {
                reader.spare.push((segments, ids, kept));
            }
        }
        drop(to_worker);
        read_error.map_or(Ok(()), Err)
    })?;
    if query == Query::Count {
        writer
            .sink
            .counts(target_ids, &writer.per_target, |t| target.lead(Some(t)))?;
    }
    progress.finish();
    sink.finish()?;
    report_held();
    report(&segments);
    Ok(())
}

/// The reader stage: chunks of segments, in buffers the writer gives back.
struct Reader<'a> {
    segments: &'a mut Records<Segment>,
    chunk_len: usize,
    spare: Vec<(Vec<Segment>, Vec<u64>, Kept)>,
}

impl Reader<'_> {
    /// The next chunk (empty at the end), with `first` as its first hits' buffer.
    fn read<T: Target>(&mut self, first: Vec<T::First>) -> Result<Chunk<T>, String> {
        let (mut segments, mut ids, mut kept) = self.spare.pop().unwrap_or_default();
        self.segments
            .read_chunk(&mut segments, &mut ids, &mut kept, self.chunk_len)
            .map_err(text)?;
        Ok(Chunk {
            segments,
            ids,
            kept,
            first,
            progress: self.segments.progress(),
        })
    }
}

/// The worker stage: runs each chunk on the engine, until the reader stops sending or a chunk
/// fails.
fn worker<T: Target>(
    engine: &mut Engine,
    query: Query,
    target: &T,
    prepared: &T::Prepared,
    chunks: Receiver<Chunk<T>>,
    to_writer: SyncSender<Result<Done<T>, String>>,
) {
    let mut said = job::Said::default();
    let mut pieces = Pieces::new();
    for mut chunk in chunks {
        let mut first = Some(std::mem::take(&mut chunk.first));
        let n = chunk.segments.len();
        let mut chunk = Some(Arc::new(chunk));
        let mut start = 0;
        // One piece, or for hits as many as keep their rows bounded (a chunk is never empty).
        while start < n {
            let len = match query {
                Query::Hits => pieces.next(n - start),
                _ => n,
            };
            let Some(whole) = &chunk else { return };
            let segments = &whole.segments[start..start + len];
            let out = match query {
                Query::Pairs => target.pairs(engine, segments).map(Out::Pairs),
                Query::Hits => target.hits(engine, prepared, segments).map(|hits| {
                    pieces.saw(len, hits.len());
                    Out::Hits(hits)
                }),
                Query::FirstHit => {
                    let mut first = first.take().unwrap_or_default();
                    target
                        .first_hits(engine, prepared, segments, &mut first)
                        .map(|()| Out::FirstHits(first))
                }
                Query::Count => target.counts(engine, prepared, segments).map(Out::Counts),
            };
            job::note_engine(engine, &mut said);
            // The last piece takes the worker's hold on the chunk, so that the writer gets its
            // buffers back.
            let piece_chunk = if start + len == n {
                chunk.take()
            } else {
                chunk.clone()
            };
            let done = out.map_err(|e| e.to_string()).map(|out| Done {
                chunk: piece_chunk.expect("the chunk is held until its last piece"),
                start,
                len,
                out,
            });
            let failed = done.is_err();
            if to_writer.send(done).is_err() || failed {
                return;
            }
            start += len;
            if query != Query::Hits {
                break;
            }
        }
    }
}

/// The writer stage: each chunk's rows, the targets' counts summed until the end.
struct Writer<'a> {
    sink: &'a mut Sink,
    target_ids: &'a [u64],
    /// Targets per dense row.
    width: usize,
    per_target: Vec<u64>,
    /// Segments done.
    done: u64,
    progress: &'a Progress,
}

impl Writer<'_> {
    fn write<T: Target>(&mut self, target: &T, done: &Done<T>) -> Outcome {
        let (ids, targets, m) = (&done.chunk.ids[done.start..], self.target_ids, self.width);
        let kept = &done.chunk.kept;
        let start = done.start;
        match &done.out {
            Out::Pairs(results) => {
                let rows = results.iter().enumerate().map(|(i, r)| {
                    let t = i % m;
                    let at = At {
                        segment: start + i / m,
                        target: Some(t),
                    };
                    let (lead, cells) = (target.lead(Some(t)), target.cells(t, Some(r)));
                    (ids[i / m], targets[t], T::hit(r), lead, cells, at)
                });
                self.sink.pairs(rows, kept)?
            }
            Out::Hits(hits) => {
                let rows = hits.iter().map(|h| {
                    let (segment, t, r) = h.row();
                    let t = target.flat(t, r);
                    let at = At {
                        segment: start + segment as usize,
                        target: Some(t),
                    };
                    let (lead, cells) = (target.lead(Some(t)), target.cells(t, Some(r)));
                    (
                        ids[segment as usize],
                        targets[t],
                        T::hit(r),
                        lead,
                        cells,
                        at,
                    )
                });
                self.sink.pairs(rows, kept)?
            }
            Out::FirstHits(first) => {
                let rows = ids.iter().zip(first).enumerate().map(|(i, (&s, f))| {
                    let first = f.first().map(|(t, r)| (target.flat(t, r), r));
                    let t = first.map(|(t, _)| t);
                    let cells = target.cells(t.unwrap_or(0), first.map(|(_, r)| r));
                    let at = At {
                        segment: start + i,
                        target: t,
                    };
                    (s, t.map(|t| targets[t]), target.lead(t), cells, at)
                });
                self.sink.first_hits(rows, kept)?
            }
            Out::Counts(counts) => {
                for (total, n) in self.per_target.iter_mut().zip(counts) {
                    *total += n;
                }
            }
        }
        self.done += done.len as u64;
        self.progress.update(self.done, done.chunk.progress);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_grow_fourfold_while_sparse_and_shrink_to_the_budget_after_a_dense_one() {
        let mut pieces = Pieces::new();
        let mut lengths = Vec::new();
        for _ in 0..5 {
            let len = pieces.next(usize::MAX);
            pieces.saw(len, len); // one hit a segment
            lengths.push(len);
        }
        assert_eq!(lengths, [1024, 4096, 16384, 65536, 262144]);
        // 3,000 hits a segment: the next piece holds about HITS_PER_PIECE hits.
        pieces.saw(262144, 262144 * 3000);
        assert_eq!(pieces.next(usize::MAX), HITS_PER_PIECE / 3000);
        // A piece is never longer than what is left of its chunk.
        assert_eq!(pieces.next(10), 10);
    }
}
