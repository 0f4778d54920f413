//! CSV in and out for the CLI: inputs with file:line:column errors, results written to a
//! temporary file that replaces `--out` only when everything succeeded.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use rectcast::{Clipped, FirstHit, Hit, InputError, PairResult, Rect, Segment, validate};

/// A bad input file: where (file:line:column, the column being the CSV column; line and column
/// 0 when the problem is the whole file) and what.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub line: u64,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.path.display())?;
        if self.line > 0 {
            write!(f, "{}:", self.line)?;
            if self.column > 0 {
                write!(f, "{}:", self.column)?;
            }
        }
        write!(f, " {}", self.message)
    }
}

impl std::error::Error for FileError {}

fn at(path: &Path, line: u64, column: usize, message: impl Into<String>) -> FileError {
    FileError {
        path: path.to_owned(),
        line,
        column,
        message: message.into(),
    }
}

/// Reads a CSV whose header is exactly `columns` into rows of f32, checking each row with
/// `check` (given the row's index) as it is read, so the first bad value in file order is
/// the one reported.
fn read_rows<T>(
    path: &Path,
    columns: [&'static str; 4],
    make: impl Fn([f32; 4]) -> T,
    check: impl Fn(usize, &T) -> Result<(), InputError>,
) -> Result<Vec<T>, FileError> {
    let file =
        std::fs::File::open(path).map_err(|e| at(path, 0, 0, format!("cannot open: {e}")))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(std::io::BufReader::new(file));
    let csv_error = |e: csv::Error| {
        let (line, column) = match e.kind() {
            // Point at the first missing field, or the first extra one.
            csv::ErrorKind::UnequalLengths {
                pos,
                expected_len,
                len,
            } => (
                pos.as_ref().map_or(0, |p| p.line()),
                (*len).min(*expected_len) as usize + 1,
            ),
            _ => (e.position().map_or(0, |p| p.line()), 0),
        };
        at(path, line, column, e.to_string())
    };
    let header = reader.headers().map_err(csv_error)?.clone();
    if header.iter().ne(columns) {
        let found: Vec<&str> = header.iter().collect();
        let found = if found.is_empty() {
            "an empty file".to_string()
        } else {
            found.join(",")
        };
        return Err(at(
            path,
            1,
            1,
            format!("expected the header {}, found {found}", columns.join(",")),
        ));
    }
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(csv_error)? {
        let line = record.position().map_or(0, |p| p.line());
        let mut values = [0f32; 4];
        for (column, (field, value)) in record.iter().zip(values.iter_mut()).enumerate() {
            let name = columns[column];
            let bad = |message: String| at(path, line, column + 1, message);
            *value = field
                .parse()
                .map_err(|_| bad(format!("{name}: {field:?} is not a number")))?;
            // "1e39" parses to inf: say what the user wrote, not what it rounded to.
            let written_infinite = field.to_ascii_lowercase().contains("inf");
            if value.is_infinite() && !written_infinite {
                return Err(bad(format!("{name} is {field}, beyond the limit ±2^62")));
            }
        }
        let row = make(values);
        check(rows.len(), &row).map_err(|e| {
            let column = columns.iter().position(|c| *c == e.field).unwrap_or(0) + 1;
            at(path, line, column, format!("{} {}", e.field, e.problem))
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Reads `x0,y0,x1,y1` rows.
pub fn read_segments(path: &Path) -> Result<Vec<Segment>, FileError> {
    read_rows(
        path,
        ["x0", "y0", "x1", "y1"],
        |[x0, y0, x1, y1]| Segment::new(x0, y0, x1, y1),
        validate::check_segment,
    )
}

/// Reads `min_x,min_y,max_x,max_y` rows.
pub fn read_rects(path: &Path) -> Result<Vec<Rect>, FileError> {
    read_rows(
        path,
        ["min_x", "min_y", "max_x", "max_y"],
        |[min_x, min_y, max_x, max_y]| Rect::new(min_x, min_y, max_x, max_y),
        validate::check_rect,
    )
}

/// The columns of the `pairs` and `hits` tables.
const PAIRS_HEADER: &str = "segment,rect,hit,kind,t_enter,t_exit,entry,exit";

/// Writes the `pairs` table, segment-major.
pub fn write_pairs(
    out: &mut dyn Write,
    rect_count: usize,
    results: &[PairResult],
) -> std::io::Result<()> {
    writeln!(out, "{PAIRS_HEADER}")?;
    for (i, r) in results.iter().enumerate() {
        let (segment, rect) = (i / rect_count, i % rect_count);
        if r.hit() {
            write!(out, "{segment},{rect},")?;
            write_hit_columns(out, r)?;
        } else {
            writeln!(out, "{segment},{rect},false,miss,,,,")?;
        }
    }
    Ok(())
}

/// The columns of a hitting pair after `segment,rect,`: `true,kind,t_enter,t_exit,entry,exit`.
fn write_hit_columns(out: &mut dyn Write, r: &PairResult) -> std::io::Result<()> {
    writeln!(
        out,
        "true,{},{},{},{},{}",
        r.kind(),
        r.t_enter,
        r.t_exit,
        r.entry_sides(),
        r.exit_sides()
    )
}

/// Writes the `first-hit` table: one row per segment, rect empty on a miss.
pub fn write_first_hits(out: &mut dyn Write, first: &[FirstHit]) -> std::io::Result<()> {
    writeln!(out, "segment,rect,kind,t_enter,t_exit,entry,exit")?;
    for (segment, f) in first.iter().enumerate() {
        match f.rect() {
            Some(rect) => {
                let r = &f.result;
                writeln!(
                    out,
                    "{segment},{rect},{},{},{},{},{}",
                    r.kind(),
                    r.t_enter,
                    r.t_exit,
                    r.entry_sides(),
                    r.exit_sides()
                )?;
            }
            None => writeln!(out, "{segment},,miss,,,,")?,
        }
    }
    Ok(())
}

/// Writes the `hits` table: the `pairs` columns, hitting rows only.
pub fn write_hits(out: &mut dyn Write, hits: &[Hit]) -> std::io::Result<()> {
    writeln!(out, "{PAIRS_HEADER}")?;
    for h in hits {
        write!(out, "{},{},", h.segment, h.rect)?;
        write_hit_columns(out, &h.result)?;
    }
    Ok(())
}

/// Writes the `count` table: `rect,hits`, one row per rect.
pub fn write_counts(out: &mut dyn Write, per_rect: &[u64]) -> std::io::Result<()> {
    writeln!(out, "rect,hits")?;
    for (rect, hits) in per_rect.iter().enumerate() {
        writeln!(out, "{rect},{hits}")?;
    }
    Ok(())
}

/// Writes the `clip` table: `segment,kind,x0,y0,x1,y1`, coordinates empty on a miss.
pub fn write_clipped(out: &mut dyn Write, clipped: &[Clipped]) -> std::io::Result<()> {
    writeln!(out, "segment,kind,x0,y0,x1,y1")?;
    for (segment, c) in clipped.iter().enumerate() {
        match c.segment {
            Some(p) => writeln!(
                out,
                "{segment},{},{},{},{},{}",
                c.kind(),
                p.x0,
                p.y0,
                p.x1,
                p.y1
            )?,
            None => writeln!(out, "{segment},miss,,,,")?,
        }
    }
    Ok(())
}

/// Parses `--rect min_x,min_y,max_x,max_y`, with the same checks as a rects file.
pub fn parse_rect_arg(text: &str) -> Result<Rect, String> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    let names = ["min_x", "min_y", "max_x", "max_y"];
    if fields.len() != 4 {
        return Err(format!(
            "--rect {text:?}: expected 4 comma-separated numbers {}, found {}",
            names.join(","),
            fields.len()
        ));
    }
    let mut v = [0f32; 4];
    for (i, field) in fields.iter().enumerate() {
        v[i] = field
            .parse()
            .map_err(|_| format!("--rect: {}: {field:?} is not a number", names[i]))?;
    }
    let rect = Rect::new(v[0], v[1], v[2], v[3]);
    validate::check_rect(0, &rect).map_err(|e| format!("--rect: {} {}", e.field, e.problem))?;
    Ok(rect)
}

/// Runs `write` into `--out` through a temporary file in the same folder, renamed over the
/// target only on success (so a failure leaves no partial file), or into stdout.
pub fn write_output(
    out: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    match out {
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock)
                .and_then(|()| lock.flush())
                .map_err(|e| format!("writing stdout: {e}"))
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let fail = |e: &dyn fmt::Display| format!("{}: {e}", path.display());
            let temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
            let mut buffered = std::io::BufWriter::new(temp);
            write(&mut buffered)
                .and_then(|()| buffered.flush())
                .map_err(|e| fail(&e))?;
            let temp = buffered
                .into_inner()
                .map_err(|e| fail(&e.error().to_string()))?;
            temp.persist(path).map_err(|e| fail(&e.error))?;
            Ok(())
        }
    }
}
