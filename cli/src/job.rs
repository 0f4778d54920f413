//! What the streaming jobs (`pairs`, `first-hit`, `hits`, `count`, `clip`) share: where the
//! rows go (with the check of the inputs before anything goes to stdout), the progress bar, and
//! the report of skipped records.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::formats::{STDIN, can_read_again};
use crate::options::{JobArgs, Outcome};
use crate::output::To;
use crate::records::{self, Records};
use crate::table::FileError;

/// Segments per chunk for the per-segment queries: large enough to keep a GPU busy (a query
/// job has up to three at once: one being read, one on the engine, one being written).
pub const SEGMENTS_PER_CHUNK: usize = 1 << 17;

pub fn text(e: FileError) -> String {
    e.to_string()
}

/// A progress bar on stderr, when asked for or when stderr is a terminal; nothing otherwise.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
}

impl Progress {
    pub fn new(asked: bool, total_bytes: u64) -> Self {
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

    pub fn update(&self, records: u64, (_, bytes): (u64, u64)) {
        if let Some(bar) = &self.bar {
            let rate = records as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
            bar.set_position(bytes);
            bar.set_message(format!("{records} records, {rate:.0} records/s"));
        }
    }

    pub fn finish(&self) {
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
    /// indicatif writes the bar's last line without a newline (on a terminal the cursor stays
    /// there for the next redraw); here every redraw is a whole line.
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        if !s.is_empty() {
            eprintln!("{s}");
        }
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where a job's rows go, decided before any work. To `--out` as the job goes: the file is
/// moved into place only on success. Without `--out` they go to stdout, which cannot be taken
/// back, so bad input must leave nothing there: plain files are read through and checked by
/// `check` first, then streamed; when an input can be read only once (stdin, a pipe, gzip), the
/// rows wait in a temporary file until the job has succeeded.
pub fn destination<'a>(
    out: Option<&'a Path>,
    inputs: &[&Path],
    check: impl FnOnce() -> Outcome,
) -> Result<To<'a>, String> {
    Ok(match out {
        Some(path) => To::File(path),
        None if inputs.iter().all(|p| can_read_again(p)) => {
            check()?;
            To::Stdout
        }
        None => To::StdoutAtEnd,
    })
}

/// At most one of a job's inputs may be stdin.
pub fn one_stdin(inputs: &[&Path]) -> Outcome {
    if inputs.iter().filter(|p| **p == Path::new(STDIN)).count() > 1 {
        return Err("only one input can be stdin (-)".into());
    }
    Ok(())
}

/// Reads `path` through once, as a check before anything goes to stdout: the first invalid
/// record is an error (unless skipping). Returns the number of records, invalid ones included.
pub fn check_whole<T>(
    path: &Path,
    kind: &records::RecordKind<T>,
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

/// Says on stderr how many invalid records of `file` were skipped, if any.
pub fn report<T>(file: &Records<T>) {
    if let Some(line) = file.skipped.report(file.path()) {
        eprintln!("rectcast: {line}");
    }
}

/// What a job has said on stderr about its engine.
#[derive(Default)]
pub struct Said {
    fallback: bool,
    /// The backend the last chunk ran on, as last said.
    backend: Option<String>,
}

/// Says on stderr, once per job, that the engine ran a chunk on the CPU because the GPU could
/// not finish it (`Backend::Auto`: a timeout or a lost device); the results are the same. With
/// `--verbose`, also where the chunk ran and why, each time that changes.
pub fn note_engine(engine: &rectcast::Engine, said: &mut Said) {
    if let Some(why) = engine.last_fallback()
        && !said.fallback
    {
        eprintln!("rectcast: {why}");
        said.fallback = true;
    }
    if crate::options::verbose() {
        let chosen = engine.chosen();
        let backend = match &chosen {
            rectcast::Chosen::Gpu(adapter) => format!("gpu {adapter}"),
            rectcast::Chosen::Cpu { kernel, .. } => format!("cpu {kernel}"),
        };
        if said.backend.as_ref() != Some(&backend) {
            eprintln!("rectcast: backend: {chosen}");
            said.backend = Some(backend);
        }
    }
}
