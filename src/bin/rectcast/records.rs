//! Input files, streamed record by record: CSV (`.csv`, and any other extension), NPY (`.npy`:
//! float32, shape [N, 4], C order) and raw little-endian f32 (`.f32`: 4 values per record, no
//! header). Errors say where: `file:line:column` in a CSV (the column being the CSV column),
//! `file: row N, field` in a binary file (N counts records from 0, as numpy indexes them).
//!
//! A record that cannot be read as four numbers, or whose values break the contract's domain,
//! is *invalid*: by default the first one stops the job; with `--skip-invalid` it is skipped
//! and counted. A file that cannot be read at all (missing, wrong header, truncated) always
//! stops the job.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use rectcast::{InputError, Rect, Segment, validate};

use crate::npy;

/// Where in a file a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The whole file.
    File,
    /// A CSV line and column (1-based; column 0: the whole line).
    Line { line: u64, column: usize },
    /// A binary record (0-based, as numpy counts rows) and its field.
    Row { row: u64, field: &'static str },
}

/// A bad input file: where and what.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub place: Place,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        match &self.place {
            Place::File => {}
            Place::Line { line, column: 0 } => write!(f, ":{line}")?,
            Place::Line { line, column } => write!(f, ":{line}:{column}")?,
            Place::Row { row, field } => write!(f, ": row {row}, {field}")?,
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FileError {}

impl FileError {
    pub fn new(path: &Path, place: Place, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            place,
            message: message.into(),
        }
    }
}

/// The file formats, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Npy,
    F32,
    /// With the cargo feature `parquet`.
    Parquet,
}

impl Format {
    /// `.npy`, `.f32` and `.parquet` by extension (any case); everything else is CSV.
    pub fn of(path: &Path) -> Self {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("npy") => Format::Npy,
            Some("f32") => Format::F32,
            Some("parquet") => Format::Parquet,
            _ => Format::Csv,
        }
    }
}

/// Why a `.parquet` file cannot be read or written by this build.
#[cfg(not(feature = "parquet"))]
pub const NO_PARQUET: &str =
    "this rectcast is built without Parquet: build it with `--features parquet`";

/// What a file's records are: their column names, how four values become one, and the check
/// of the contract's domain.
pub struct RecordKind<T> {
    pub columns: [&'static str; 4],
    make: fn([f32; 4]) -> T,
    check: fn(usize, &T) -> Result<(), InputError>,
}

pub const SEGMENTS: RecordKind<Segment> = RecordKind {
    columns: ["x0", "y0", "x1", "y1"],
    make: |[x0, y0, x1, y1]| Segment::new(x0, y0, x1, y1),
    check: validate::check_segment,
};

pub const RECTS: RecordKind<Rect> = RecordKind {
    columns: ["min_x", "min_y", "max_x", "max_y"],
    make: |[min_x, min_y, max_x, max_y]| Rect::new(min_x, min_y, max_x, max_y),
    check: validate::check_rect,
};

/// One record as read: four values, or why they could not be read, and where it is.
pub(crate) enum Raw {
    Values([f32; 4], Place),
    Invalid(FileError),
}

/// A source of raw records.
pub(crate) trait Source {
    /// The next record, `None` at the end; `Err` when the file itself is broken.
    fn next(&mut self) -> Result<Option<Raw>, FileError>;
    /// Bytes consumed so far (for progress).
    fn bytes(&self) -> u64;
}

struct CsvSource {
    path: PathBuf,
    columns: [&'static str; 4],
    reader: csv::Reader<BufReader<File>>,
    record: csv::StringRecord,
}

impl CsvSource {
    fn open(path: &Path, file: File, columns: [&'static str; 4]) -> Result<Self, FileError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(BufReader::with_capacity(1 << 20, file));
        let header = reader.headers().map_err(|e| csv_error(path, &e))?.clone();
        if header.iter().ne(columns) {
            let found: Vec<&str> = header.iter().collect();
            let found = if found.is_empty() {
                "an empty file".to_string()
            } else {
                found.join(",")
            };
            return Err(FileError::new(
                path,
                Place::Line { line: 1, column: 1 },
                format!("expected the header {}, found {found}", columns.join(",")),
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            columns,
            reader,
            record: csv::StringRecord::new(),
        })
    }
}

fn csv_error(path: &Path, e: &csv::Error) -> FileError {
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
    FileError::new(path, Place::Line { line, column }, e.to_string())
}

impl Source for CsvSource {
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
        for (column, (field, value)) in self.record.iter().zip(values.iter_mut()).enumerate() {
            let name = self.columns[column];
            let bad = |message: String| {
                Ok(Some(Raw::Invalid(FileError::new(
                    &self.path,
                    Place::Line {
                        line,
                        column: column + 1,
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
}

/// Records of four little-endian f32 after `header` bytes: NPY's data and raw `.f32` files.
struct BinarySource {
    path: PathBuf,
    reader: BufReader<File>,
    records: u64,
    row: u64,
    header: u64,
}

impl Source for BinarySource {
    fn next(&mut self) -> Result<Option<Raw>, FileError> {
        if self.row == self.records {
            return Ok(None);
        }
        let mut bytes = [0u8; 16];
        self.reader.read_exact(&mut bytes).map_err(|e| {
            FileError::new(
                &self.path,
                Place::Row {
                    row: self.row,
                    field: "record",
                },
                format!("cannot read: {e}"),
            )
        })?;
        let values: [f32; 4] = std::array::from_fn(|i| {
            f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        });
        let place = Place::Row {
            row: self.row,
            field: "record",
        };
        self.row += 1;
        Ok(Some(Raw::Values(values, place)))
    }

    fn bytes(&self) -> u64 {
        self.header + self.row * 16
    }
}

/// Opens a binary source: an NPY header, or none for `.f32`; the data must be whole records.
fn open_binary(path: &Path, file: File, format: Format) -> Result<BinarySource, FileError> {
    let size = file
        .metadata()
        .map_err(|e| FileError::new(path, Place::File, format!("cannot read: {e}")))?
        .len();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (header, records) = if format == Format::Npy {
        let header = npy::read_header(&mut reader)
            .map_err(|message| FileError::new(path, Place::File, message))?;
        if header.descr != "<f4"
            || header.fortran_order
            || header.shape.len() != 2
            || header.shape[1] != 4
        {
            return Err(FileError::new(
                path,
                Place::File,
                format!(
                    "expected float32 ('<f4') of shape (N, 4) in C order, found descr {:?}, shape {:?}, fortran_order {}",
                    header.descr, header.shape, header.fortran_order
                ),
            ));
        }
        (header.length, header.shape[0])
    } else {
        if size % 16 != 0 {
            return Err(FileError::new(
                path,
                Place::File,
                format!(
                    "{size} bytes is not a whole number of records (4 little-endian f32, 16 bytes each)"
                ),
            ));
        }
        (0, size / 16)
    };
    if header + records * 16 > size {
        return Err(FileError::new(
            path,
            Place::File,
            format!(
                "the header promises {records} records ({} bytes) but the file has {size} bytes",
                header + records * 16
            ),
        ));
    }
    Ok(BinarySource {
        path: path.to_owned(),
        reader,
        records,
        row: 0,
        header,
    })
}

/// Skipped invalid records: how many, and where the first few were.
#[derive(Debug, Default)]
pub struct Skipped {
    pub count: u64,
    pub first: Vec<String>,
}

impl Skipped {
    const SHOWN: usize = 5;

    /// The end-of-job report, or None when nothing was skipped.
    pub fn report(&self, path: &Path) -> Option<String> {
        (self.count > 0).then(|| {
            let more = if self.count as usize > self.first.len() {
                ", …"
            } else {
                ""
            };
            format!(
                "skipped {} invalid record{} of {}: {}{more}",
                self.count,
                if self.count == 1 { "" } else { "s" },
                path.display(),
                self.first.join("; ")
            )
        })
    }
}

/// A record's index in its file, and its value or why it is invalid.
pub type Record<T> = (u64, Result<T, FileError>);

/// A file of records, read one at a time or in chunks, each valid record with its index in the
/// file (invalid ones included, so output indices join back to the input rows).
pub struct Records<T: 'static> {
    path: PathBuf,
    kind: &'static RecordKind<T>,
    source: Box<dyn Source>,
    skip_invalid: bool,
    index: u64,
    total_bytes: u64,
    pub skipped: Skipped,
}

impl<T> Records<T> {
    pub fn open(
        path: &Path,
        kind: &'static RecordKind<T>,
        skip_invalid: bool,
    ) -> Result<Self, FileError> {
        let file = File::open(path)
            .map_err(|e| FileError::new(path, Place::File, format!("cannot open: {e}")))?;
        let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let format = Format::of(path);
        let source: Box<dyn Source> = match format {
            Format::Csv => Box::new(CsvSource::open(path, file, kind.columns)?),
            Format::Npy | Format::F32 => Box::new(open_binary(path, file, format)?),
            #[cfg(feature = "parquet")]
            Format::Parquet => Box::new(crate::parquet_io::ParquetSource::open(
                path,
                file,
                kind.columns,
                total_bytes,
            )?),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => return Err(FileError::new(path, Place::File, NO_PARQUET)),
        };
        Ok(Self {
            path: path.to_owned(),
            kind,
            source,
            skip_invalid,
            index: 0,
            total_bytes,
            skipped: Skipped::default(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size, and the bytes read so far.
    pub fn progress(&self) -> (u64, u64) {
        (self.total_bytes, self.source.bytes())
    }

    /// The next record with its index: its value, or why it is invalid (for the caller to
    /// [`reject`](Self::reject)); `None` at the end. `Err` when the file itself is broken.
    pub fn next_record(&mut self) -> Result<Option<Record<T>>, FileError> {
        let Some(raw) = self.source.next()? else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        let value = match raw {
            Raw::Invalid(e) => Err(e),
            Raw::Values(values, place) => {
                let value = (self.kind.make)(values);
                match (self.kind.check)(index as usize, &value) {
                    Ok(()) => Ok(value),
                    Err(e) => {
                        let column = self.kind.columns.iter().position(|c| *c == e.field);
                        let place = match place {
                            Place::Line { line, .. } => Place::Line {
                                line,
                                column: column.map_or(0, |c| c + 1),
                            },
                            Place::Row { row, .. } => Place::Row {
                                row,
                                field: e.field,
                            },
                            Place::File => Place::File,
                        };
                        Err(FileError::new(
                            &self.path,
                            place,
                            format!("{} {}", e.field, e.problem),
                        ))
                    }
                }
            }
        };
        Ok(Some((index, value)))
    }

    /// An invalid record: an error, or counted and skipped with `--skip-invalid`.
    pub fn reject(&mut self, problem: FileError) -> Result<(), FileError> {
        if !self.skip_invalid {
            return Err(problem);
        }
        self.skipped.count += 1;
        if self.skipped.first.len() < Skipped::SHOWN {
            self.skipped.first.push(problem.to_string());
        }
        Ok(())
    }

    /// Up to `max` valid records into `values` (cleared first) and their indices into `ids`.
    pub fn read_chunk(
        &mut self,
        values: &mut Vec<T>,
        ids: &mut Vec<u64>,
        max: usize,
    ) -> Result<(), FileError> {
        values.clear();
        ids.clear();
        while values.len() < max {
            let Some((index, value)) = self.next_record()? else {
                break;
            };
            match value {
                Ok(v) => {
                    values.push(v);
                    ids.push(index);
                }
                Err(problem) => self.reject(problem)?,
            }
        }
        Ok(())
    }

    /// Every valid record, with its index.
    pub fn read_all(&mut self) -> Result<(Vec<T>, Vec<u64>), FileError> {
        let (mut values, mut ids) = (Vec::new(), Vec::new());
        self.read_chunk(&mut values, &mut ids, usize::MAX)?;
        Ok((values, ids))
    }
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
