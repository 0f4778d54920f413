//! `clip`: each segment clipped to one rect (`--rect`), or to the rect on the same row of
//! `--rects` (both files streamed side by side), as a streaming job like the queries.

use std::path::{Path, PathBuf};

use clap::Args;
use rectcast::{ClipTo, Rect, Segment};

use crate::job::{
    self, Progress, SEGMENTS_PER_CHUNK, check_whole, destination, one_stdin, report, text,
};
use crate::kept::{self, Keeping, KeptRows, Side};
use crate::options::{BackendArg, JobArgs, Outcome, engine};
use crate::output::{Sink, Table};
use crate::records::{self, Records};
use crate::table::Kept;

#[derive(Args)]
pub struct ClipArgs {
    /// Segments: .csv (columns x0,y0,x1,y1 found by name, in any order; others ignored), .npy
    /// (float32, shape [N, 4]) or .f32 (raw little-endian, 4 per record); .gz of any; `-` for
    /// CSV on stdin. Streamed in chunks.
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
    /// (columns min_x,min_y,max_x,max_y), .npy or .f32.
    #[arg(long)]
    rects: Option<PathBuf>,
    /// Where the engine runs: a hardware GPU when one opens, else the CPU (`auto`); the GPU
    /// whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Input columns carried into each row, after its own, as text: a column of the segments'
    /// file or, with --rects, of the rects' (CSV and Parquet columns). A name both files
    /// have, or one the rows have already, is written segments:NAME or rects:NAME. Not in .npy
    /// or .f32 output, which hold numbers.
    #[arg(long, value_name = "COLUMN", num_args = 1.., value_delimiter = ',')]
    keep: Vec<String>,
    /// Output: .npy (structured rows), .f32 (the clipped segment, NaN on a miss) or CSV
    /// (any other name); stdout (CSV) when absent. Written whole or not at all.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    job: JobArgs,
}

/// `clip`: each segment against one rect, or against the rect on the same row of `--rects`
/// (both files streamed side by side).
pub fn run(args: ClipArgs) -> Outcome {
    let ClipArgs {
        segments: segments_path,
        rect,
        rects: rects_path,
        backend,
        keep,
        out,
        job,
    } = args;
    let one = rect.map(|r| records::parse_rect_arg(&r)).transpose()?;
    let wanted = kept::parse(&keep, "rects", &["rects"])?;
    let table = Table::clip(kept::columns(
        &wanted,
        Table::clip(Vec::new()).columns(),
        "rects",
    )?);
    Sink::check(out.as_deref(), table)?;
    let inputs: Vec<&Path> = [Some(segments_path.as_path()), rects_path.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    one_stdin(&inputs)?;
    crate::output::not_an_input(out.as_deref(), &inputs)?;
    let mut segments =
        Records::open(&segments_path, &records::SEGMENTS, job.skip_invalid).map_err(text)?;
    let mut per_segment = match &rects_path {
        Some(path) => Some(Records::open(path, &records::RECTS, job.skip_invalid).map_err(text)?),
        None => None,
    };
    // The kept columns are settled before the inputs are read through.
    let kept_segments = segments.keep(&wanted, Side::Segments).map_err(text)?;
    let kept_rects = match &mut per_segment {
        Some(rect_file) => rect_file.keep(&wanted, Side::Targets).map_err(text)?,
        None => Keeping {
            path: "--rect".into(),
            ..Keeping::default()
        },
    };
    let plan = kept::plan(&wanted, &kept_segments, &kept_rects, None)?;
    let kept = (!plan.is_empty()).then(|| KeptRows {
        plan,
        targets: Kept::default(),
    });
    let to = destination(out.as_deref(), &inputs, || {
        let n = check_whole(&segments_path, &records::SEGMENTS, job)?;
        if let Some(path) = &rects_path {
            let m = check_whole(path, &records::RECTS, job)?;
            if n != m {
                return Err(count_mismatch(&segments_path, n, path, m));
            }
        }
        Ok(())
    })?;
    let mut engine = engine(backend.into())?;
    let mut sink = Sink::create(to, table)?.with_kept(kept);
    let (mut segments_kept, mut rects_kept) = (Kept::default(), Kept::default());
    let progress = Progress::new(job.progress, segments.progress().0);
    let (mut chunk, mut ids, mut rects) = (Vec::new(), Vec::new(), Vec::new());
    let mut done = 0;
    let mut said = job::Said::default();
    loop {
        match (&mut per_segment, one) {
            (None, Some(_)) => segments
                .read_chunk(&mut chunk, &mut ids, &mut segments_kept, SEGMENTS_PER_CHUNK)
                .map_err(text)?,
            (Some(rect_file), _) => read_pairs(
                &mut segments,
                rect_file,
                (&mut chunk, &mut rects, &mut ids),
                (&mut segments_kept, &mut rects_kept),
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
        job::note_engine(&engine, &mut said);
        let rects_kept = per_segment.is_some().then_some(&mut rects_kept);
        sink.clipped(&ids, &clipped, &segments_kept, rects_kept)?;
        done += chunk.len() as u64;
        progress.update(done, segments.progress());
    }
    progress.finish();
    sink.finish()?;
    report(&segments);
    if let Some(rect_file) = &per_segment {
        report(rect_file);
    }
    Ok(())
}

fn count_mismatch(segments: &Path, n: u64, rects: &Path, m: u64) -> String {
    format!(
        "clipping to one rect per segment needs as many rects as segments: {} has {n} records, {} has {m}",
        crate::table::input_name(segments),
        crate::table::input_name(rects)
    )
}

/// Up to a chunk of (segment, rect) records read side by side, with their kept values; a pair
/// with an invalid side is an error, or skipped whole.
fn read_pairs(
    segments: &mut Records<Segment>,
    rects: &mut Records<Rect>,
    (chunk, rect_chunk, ids): (&mut Vec<Segment>, &mut Vec<Rect>, &mut Vec<u64>),
    (segments_kept, rects_kept): (&mut Kept, &mut Kept),
    (segments_path, rects_path): (&Path, &Path),
) -> Result<(), String> {
    chunk.clear();
    rect_chunk.clear();
    ids.clear();
    segments.reset_kept(segments_kept);
    rects.reset_kept(rects_kept);
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
                    segments.push_kept(segments_kept);
                    rects.push_kept(rects_kept);
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
