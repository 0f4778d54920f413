//! CSV: records with a header naming their columns (`x0,y0,x1,y1` or `min_x,min_y,max_x,max_y`,
//! in any order; other columns are ignored), read with the csv crate; tables written with their
//! column names as the header. An absent value is an
//! empty field, t and coordinates are the shortest decimal that reads back as the same f32,
//! and sides are joined by `+`. Only a kept column's text (`--keep`) may need quoting: it is
//! quoted where it holds a comma, a quote, a line break or spaces at either end (RFC 4180, as
//! the csv crate writes it).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Data, Reader};
use crate::table::{Cell, Column, FileError, Place, Raw, RecordSource, TableWriter};

/// Reads the records of a CSV file whose header names `columns`, in any order, among others.
pub struct CsvSource {
    path: PathBuf,
    columns: &'static [&'static str],
    /// Where each of `columns` is in a row (0-based).
    at: [usize; 4],
    reader: csv::Reader<Reader>,
    record: csv::StringRecord,
    header: csv::StringRecord,
    /// Where each kept column is (`--keep`).
    kept_at: Vec<usize>,
}

impl CsvSource {
    pub fn open(
        path: &Path,
        data: Data,
        columns: &'static [&'static str],
    ) -> Result<Self, FileError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            // Values are trimmed where they are read as numbers; a kept column is kept as it is.
            .trim(csv::Trim::Headers)
            .from_reader(data.reader());
        let header = reader.headers().map_err(|e| csv_error(path, &e))?.clone();
        let at = find_columns(&header, columns)
            .map_err(|message| FileError::new(path, Place::Line { line: 1, column: 0 }, message))?;
        Ok(Self {
            path: path.to_owned(),
            columns,
            at,
            reader,
            record: csv::StringRecord::new(),
            header,
            kept_at: Vec::new(),
        })
    }
}

/// Where each of `columns` is in `header`; a missing or repeated one is an error naming it.
fn find_columns(
    header: &csv::StringRecord,
    columns: &'static [&'static str],
) -> Result<[usize; 4], String> {
    let found = || {
        let names: Vec<&str> = header.iter().collect();
        match names.join(",") {
            names if names.is_empty() => "an empty file".to_string(),
            names => names,
        }
    };
    let mut at = [0; 4];
    for (at, &name) in at.iter_mut().zip(columns) {
        let mut places = header.iter().enumerate().filter(|(_, h)| *h == name);
        *at = match (places.next(), places.next()) {
            (Some((i, _)), None) => i,
            (None, _) => {
                return Err(format!(
                    "no column {name}: the header needs {} (in any order; other columns are ignored), found {}",
                    columns.join(","),
                    found()
                ));
            }
            (Some(_), Some(_)) => {
                return Err(format!("column {name} appears twice in {}", found()));
            }
        };
    }
    Ok(at)
}

/// A CSV error at its line (and column), said once: the csv crate's own message repeats
/// the place ("record 2 (line: 3, byte: 40)"), so the message is ours.
fn csv_error(path: &Path, e: &csv::Error) -> FileError {
    let line = e.position().map_or(0, |p| p.line());
    let (line, column, message) = match e.kind() {
        // Point at the first missing field, or the first extra one.
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => (
            pos.as_ref().map_or(line, |p| p.line()),
            (*len).min(*expected_len) as usize + 1,
            format!("found record with {len} fields, but the header has {expected_len}"),
        ),
        csv::ErrorKind::Utf8 { pos, err } => {
            let hint = if path == Path::new(super::STDIN) {
                "; stdin is read as CSV: for .npy or .f32 input give the file's name, not `-`"
            } else {
                "; is it a binary file named .csv? .npy and .f32 are read by their extension"
            };
            let line = pos.as_ref().map_or(line, |p| p.line());
            (line, err.field() + 1, format!("not UTF-8 text{hint}"))
        }
        csv::ErrorKind::Io(io) => (line, 0, io.to_string()),
        _ => (line, 0, e.to_string()),
    };
    FileError::new(path, Place::Line { line, column }, message)
}

impl RecordSource for CsvSource {
    fn next(&mut self) -> Result<Option<Raw>, FileError> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => return Ok(None),
            Ok(true) => {}
            // A row of the wrong length is one bad record; the reader goes on after it.
            Err(e) if matches!(e.kind(), csv::ErrorKind::UnequalLengths { .. }) => {
                return Ok(Some(Raw::Invalid(csv_error(&self.path, &e))));
            }
            Err(e) => return Err(csv_error(&self.path, &e)),
        }
        let line = self.record.position().map_or(0, |p| p.line());
        let mut values = [0f32; 4];
        for ((&at, &name), value) in self.at.iter().zip(self.columns).zip(values.iter_mut()) {
            let field = self.record[at].trim();
            let bad = |message: String| {
                Ok(Some(Raw::Invalid(FileError::new(
                    &self.path,
                    Place::Line {
                        line,
                        column: at + 1,
                    },
                    message,
                ))))
            };
            let Ok(parsed) = field.parse::<f32>() else {
                return bad(format!("{name}: {field:?} is not a number"));
            };
            // "1e39" parses to inf: say what the user wrote, not what it rounded to.
            if parsed.is_infinite() && !field.to_ascii_lowercase().contains("inf") {
                return bad(format!("{name} is {field}, beyond the limit ±2^62"));
            }
            *value = parsed;
        }
        Ok(Some(Raw::Values(values, Place::Line { line, column: 0 })))
    }

    fn bytes(&self) -> u64 {
        self.reader.position().byte()
    }

    fn column(&self, field: usize) -> usize {
        self.at[field] + 1
    }

    fn columns(&self) -> Vec<String> {
        self.header.iter().map(str::to_string).collect()
    }

    /// A name the header has twice is refused: which one is meant?
    fn keep(&mut self, names: &[String]) -> Result<(), FileError> {
        self.kept_at = names
            .iter()
            .map(|name| {
                let mut places = (self.header.iter().enumerate())
                    .filter(|(_, h)| h == name)
                    .map(|(at, _)| at);
                match (places.next(), places.next()) {
                    (Some(at), None) => Ok(at),
                    _ => Err(FileError::new(
                        &self.path,
                        Place::Line { line: 1, column: 0 },
                        format!("--keep {name}: the header has two columns {name}"),
                    )),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    fn kept(&self, out: &mut crate::table::Kept) {
        for &at in &self.kept_at {
            out.push(Some(&self.record[at]));
        }
    }
}

/// Writes a table as CSV to any writer: a file, or stdout.
pub struct CsvWriter<W: Write> {
    out: W,
}

impl<W: Write> CsvWriter<W> {
    /// Writes the header: the column names (a kept column's quoted where it needs it).
    pub fn new(mut out: W, columns: &[Column]) -> std::io::Result<Self> {
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_text(&mut out, column.name)?;
        }
        out.write_all(b"\n")?;
        Ok(Self { out })
    }
}

impl<W: Write> TableWriter for CsvWriter<W> {
    #[inline]
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        let w = &mut self.out;
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            match *cell {
                Cell::U64(v) | Cell::Index(Some(v)) => write!(w, "{v}")?,
                Cell::Bool(v) => write!(w, "{v}")?,
                Cell::Category(_, name) => w.write_all(name.as_bytes())?,
                Cell::F32(Some(v)) => write!(w, "{v}")?,
                Cell::Sides(sides) => write!(w, "{sides}")?,
                Cell::Text(Some(text)) => write_text(w, text)?,
                Cell::Index(None) | Cell::F32(None) | Cell::Text(None) => {}
            }
        }
        w.write_all(b"\n")
    }

    fn finish(mut self, _rows: u64) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A text field, quoted (its quotes doubled) where it would not read back as itself.
fn write_text(w: &mut impl Write, text: &str) -> std::io::Result<()> {
    let plain = !text.contains([',', '"', '\n', '\r']) && text.trim() == text;
    if plain {
        return w.write_all(text.as_bytes());
    }
    w.write_all(b"\"")?;
    w.write_all(text.replace('"', "\"\"").as_bytes())?;
    w.write_all(b"\"")
}
