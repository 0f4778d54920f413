//! The query commands as streaming jobs: rects are read whole, segments in chunks; each chunk
//! runs on the engine and its rows are written before the next is read, so memory stays
//! bounded whatever the input size.
//!
//! To stdout (which cannot be taken back), the inputs are first read through once and checked,
//! so bad input leaves no partial output there either; with `--out` rows go to a temporary
//! file that is moved into place only on success.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rectcast::{Backend, Batch, ClipTo, Rect, Segment};

use crate::output::{Sink, Table};
use crate::records::{self, FileError, Records};
use crate::{JobArgs, Outcome, QueryArgs, engine};

/// Segments per chunk for the per-segment queries: large enough to keep a GPU busy.
const SEGMENTS_PER_CHUNK: usize = 1 << 18;
/// Results per chunk for dense `pairs`.
const PAIRS_PER_CHUNK: usize = 1 << 22;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    Pairs,
    FirstHit,
    Hits,
    Count,
}

fn text(e: FileError) -> String {
    e.to_string()
}

/// A progress bar on stderr, when asked for or when stderr is a terminal; nothing otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
}

impl Progress {
    fn new(asked: bool, total_bytes: u64) -> Self {
        let shown = asked || std::io::stderr().is_terminal();
        let bar = shown.then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(total_bytes),
                ProgressDrawTarget::stderr_with_hz(4),
            );
            if !std::io::stderr().is_terminal() {
                // indicatif draws only on terminals; asked for, say it line by line.
                bar.set_draw_target(ProgressDrawTarget::term_like_with_hz(Box::new(LineTerm), 1));
            }
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {percent}% {msg}, eta {eta}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Self {
            bar,
            start: Instant::now(),
        }
    }

    fn update(&self, records: u64, (_, bytes): (u64, u64)) {
        if let Some(bar) = &self.bar {
            let rate = records as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(bytes);
            bar.set_message(format!("{records} records, {rate:.0} records/s"));
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

/// A stderr that is not a terminal: each redraw becomes one line.
#[derive(Debug)]
struct LineTerm;

impl indicatif::TermLike for LineTerm {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, line: &str) -> std::io::Result<()> {
        eprintln!("{line}");
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        eprint!("{s}");
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Reads `path` through once, as a check before anything goes to stdout: the first invalid
/// record is an error (unless skipping). Returns the number of records, invalid ones included.
fn check_whole<T>(
    path: &Path,
    kind: &'static records::RecordKind<T>,
    job: JobArgs,
) -> Result<u64, String> {
    let mut file = Records::open(path, kind, job.skip_invalid).map_err(text)?;
    let mut count = 0;
    while let Some((_, value)) = file.next_record().map_err(text)? {
        count += 1;
        if let Err(problem) = value {
            file.reject(problem).map_err(text)?;
        }
    }
    Ok(count)
}

fn report<T>(files: &[&Records<T>]) {
    for f in files {
        if let Some(line) = f.skipped.report(f.path()) {
            eprintln!("rectcast: {line}");
        }
    }
}

/// `pairs`, `first-hit`, `hits`, `count`: every segment against every rect.
pub fn query(args: QueryArgs, query: Query) -> Outcome {
    let job = args.job;
    let table = match query {
        Query::Pairs | Query::Hits => Table::Pairs,
        Query::FirstHit => Table::FirstHit,
        Query::Count => Table::Count,
    };
    Sink::check(args.out.as_deref(), table)?;
    let mut rect_file =
        Records::open(&args.rects, &records::RECTS, job.skip_invalid).map_err(text)?;
    let (rects, rect_ids) = rect_file.read_all().map_err(text)?;
    if args.out.is_none() {
        check_whole(&args.segments, &records::SEGMENTS, job)?;
    }
    let mut segments =
        Records::open(&args.segments, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    let mut engine = engine(args.backend.into())?;
    let mut sink = Sink::create(args.out.as_deref(), table)?;
    let m = rects.len();
    let chunk_len = match query {
        Query::Pairs => (PAIRS_PER_CHUNK / m.max(1)).max(1),
        _ => SEGMENTS_PER_CHUNK,
    };
    let progress = Progress::new(job.progress, segments.progress().0);
    let (mut chunk, mut ids) = (Vec::new(), Vec::new());
    let mut per_rect = vec![0u64; m];
    let mut done = 0;
    let e = |e: rectcast::Error| e.to_string();
    loop {
        segments
            .read_chunk(&mut chunk, &mut ids, chunk_len)
            .map_err(text)?;
        if chunk.is_empty() {
            break;
        }
        let batch = Batch::new(&chunk, &rects);
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
                let first = engine.first_hit(&batch).map_err(e)?;
                sink.first_hits(&ids, &rect_ids, &first)?;
            }
            Query::Count => {
                let counts = engine.counts(&batch).map_err(e)?;
                for (total, n) in per_rect.iter_mut().zip(&counts.per_rect) {
                    *total += n;
                }
            }
        }
        done += chunk.len() as u64;
        progress.update(done, segments.progress());
    }
    if query == Query::Count {
        sink.counts(&rect_ids, &per_rect)?;
    }
    progress.finish();
    sink.finish()?;
    report(&[&rect_file]);
    report(&[&segments]);
    Ok(())
}

/// `clip`: each segment against one rect, or against the rect on the same row of `--rects`
/// (both files streamed side by side).
pub fn clip(
    segments_path: PathBuf,
    rect: Option<String>,
    rects_path: Option<PathBuf>,
    backend: Backend,
    out: Option<PathBuf>,
    job: JobArgs,
) -> Outcome {
    let one = rect.map(|r| records::parse_rect_arg(&r)).transpose()?;
    Sink::check(out.as_deref(), Table::Clip)?;
    if out.is_none() {
        let n = check_whole(&segments_path, &records::SEGMENTS, job)?;
        if let Some(path) = &rects_path {
            let m = check_whole(path, &records::RECTS, job)?;
            if n != m {
                return Err(count_mismatch(&segments_path, n, path, m));
            }
        }
    }
    let mut segments =
        Records::open(&segments_path, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    let mut per_segment = match &rects_path {
        Some(path) => Some(Records::open(path, &records::RECTS, job.skip_invalid).map_err(text)?),
        None => None,
    };
    let mut engine = engine(backend)?;
    let mut sink = Sink::create(out.as_deref(), Table::Clip)?;
    let progress = Progress::new(job.progress, segments.progress().0);
    let (mut chunk, mut ids, mut rects) = (Vec::new(), Vec::new(), Vec::new());
    let mut done = 0;
    loop {
        match (&mut per_segment, one) {
            (None, Some(_)) => segments
                .read_chunk(&mut chunk, &mut ids, SEGMENTS_PER_CHUNK)
                .map_err(text)?,
            (Some(rect_file), _) => read_pairs(
                &mut segments,
                rect_file,
                (&mut chunk, &mut rects, &mut ids),
                (
                    &segments_path,
                    rects_path.as_deref().unwrap_or(Path::new("")),
                ),
            )?,
            (None, None) => return Err("give --rect or --rects".into()),
        }
        if chunk.is_empty() {
            break;
        }
        let to = match one {
            Some(rect) => ClipTo::Rect(rect),
            None => ClipTo::PerSegment(&rects),
        };
        let clipped = engine.clip(&chunk, to).map_err(|e| e.to_string())?;
        sink.clipped(&ids, &clipped)?;
        done += chunk.len() as u64;
        progress.update(done, segments.progress());
    }
    progress.finish();
    sink.finish()?;
    report(&[&segments]);
    if let Some(rect_file) = &per_segment {
        report(&[rect_file]);
    }
    Ok(())
}

fn count_mismatch(segments: &Path, n: u64, rects: &Path, m: u64) -> String {
    format!(
        "clipping to one rect per segment needs as many rects as segments: {} has {n} records, {} has {m}",
        segments.display(),
        rects.display()
    )
}

/// Up to a chunk of (segment, rect) records read side by side; a pair with an invalid side is
/// an error, or skipped whole.
fn read_pairs(
    segments: &mut Records<Segment>,
    rects: &mut Records<Rect>,
    (chunk, rect_chunk, ids): (&mut Vec<Segment>, &mut Vec<Rect>, &mut Vec<u64>),
    (segments_path, rects_path): (&Path, &Path),
) -> Result<(), String> {
    chunk.clear();
    rect_chunk.clear();
    ids.clear();
    while chunk.len() < SEGMENTS_PER_CHUNK {
        let s = segments.next_record().map_err(text)?;
        let r = rects.next_record().map_err(text)?;
        match (s, r) {
            (None, None) => break,
            (Some((i, _)), None) => {
                return Err(count_mismatch(segments_path, i + 1, rects_path, i));
            }
            (None, Some((i, _))) => {
                return Err(count_mismatch(segments_path, i, rects_path, i + 1));
            }
            (Some((i, s)), Some((_, r))) => match (s, r) {
                (Ok(s), Ok(r)) => {
                    chunk.push(s);
                    rect_chunk.push(r);
                    ids.push(i);
                }
                (s, r) => {
                    if let Err(problem) = s {
                        segments.reject(problem).map_err(text)?;
                    }
                    if let Err(problem) = r {
                        rects.reject(problem).map_err(text)?;
                    }
                }
            },
        }
    }
    Ok(())
}
