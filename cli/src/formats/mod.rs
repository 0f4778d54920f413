//! The file formats, each in its own module with its reader and its writer, chosen by a file's
//! extension. A new format is a module here and its arm in each `match` below: the extension
//! (`Format::of`), the reader, the tables it can hold, and the writer (`Writer`).
//!
//! Inputs may also be `-` (stdin, read as CSV) or gzip-compressed (`.csv.gz`, `.npy.gz`,
//! `.f32.gz`): those are streams, read once from start to end; a plain file can be read again.

pub mod csv;
pub mod f32;
pub mod npy;
#[cfg(feature = "parquet")]
pub mod parquet;

use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::table::{Cell, Column, ColumnType, FileError, RecordSource, TableWriter};

/// Why a `.parquet` file cannot be read or written by this build.
#[cfg(not(feature = "parquet"))]
pub const NO_PARQUET: &str =
    "this rectcast is built without Parquet: build it with `--features parquet`";

/// Buffered output: large writes, few system calls.
pub const BUFFER: usize = 1 << 20;

/// The file formats, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.csv`, and any extension not listed below.
    Csv,
    /// `.npy`: numpy's format.
    Npy,
    /// `.f32`: raw little-endian float32, 4 per record.
    F32,
    /// `.parquet`, with the cargo feature `parquet`.
    Parquet,
    /// `.wkt`: line strings as segments (`polylines.rs`), read only.
    Wkt,
    /// `.geojson` and `.json`: line strings as segments, read only.
    GeoJson,
}

/// The path that means stdin.
pub const STDIN: &str = "-";

/// Whether `path` names a gzip-compressed file (`.gz`, any case).
fn gzipped(path: &Path) -> bool {
    extension(path).as_deref() == Some("gz")
}

fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
}

/// Whether `path` can be read a second time, cheaply: a plain file, not stdin, a pipe, a
/// device, or a gzip stream (which would be decompressed twice).
pub fn can_read_again(path: &Path) -> bool {
    path != Path::new(STDIN) && !gzipped(path) && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// An input's bytes as opened: a plain file, or a stream read once.
pub enum Data {
    File(File),
    Stream(Box<dyn Read>),
}

/// An opened input: its format, its bytes, and for progress its size on disk (0 when unknown)
/// and, for a decompressed stream, the compressed bytes read so far.
pub struct Input {
    pub format: Format,
    pub data: Data,
    pub size: u64,
    pub compressed_read: Option<Arc<AtomicU64>>,
}

impl Input {
    /// Opens `path`: stdin for `-`, a gzip stream for `.gz`, else the file.
    pub fn open(path: &Path) -> Result<Self, FileError> {
        if path == Path::new(STDIN) {
            return Ok(Self {
                format: Format::Csv,
                data: Data::Stream(Box::new(std::io::stdin().lock())),
                size: 0,
                compressed_read: None,
            });
        }
        let cannot = |e: std::io::Error| {
            FileError::new(path, crate::table::Place::File, format!("cannot open: {e}"))
        };
        let file = File::open(path).map_err(cannot)?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if !gzipped(path) {
            return Ok(Self {
                format: Format::of(path),
                data: Data::File(file),
                size,
                compressed_read: None,
            });
        }
        let read = Arc::new(AtomicU64::new(0));
        let counted = Counted {
            inner: file,
            read: read.clone(),
        };
        Ok(Self {
            format: Format::of(&path.with_extension("")),
            data: Data::Stream(Box::new(flate2::read::MultiGzDecoder::new(counted))),
            size,
            compressed_read: Some(read),
        })
    }
}

/// An input's bytes as one buffered reader, whatever they come from.
pub type Reader = std::io::BufReader<Box<dyn Read>>;

impl Data {
    /// The bytes as one reader, buffered.
    pub fn reader(self) -> Reader {
        let inner: Box<dyn Read> = match self {
            Data::File(file) => Box::new(file),
            Data::Stream(stream) => stream,
        };
        std::io::BufReader::with_capacity(BUFFER, inner)
    }
}

/// A reader that counts the bytes it passes on.
struct Counted {
    inner: File,
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Compressed extensions this build neither reads nor writes: an output named so is refused
/// rather than written uncompressed under that name.
const OTHER_COMPRESSIONS: [&str; 8] = ["zst", "bz2", "xz", "lz4", "zip", "br", "7z", "lzma"];

impl Format {
    /// The format of an output file, and whether it is gzip-compressed: `.csv.gz`, `.npy.gz`
    /// and `.f32.gz` are written compressed, as they are read. Parquet compresses its own
    /// columns, so `.parquet.gz` is refused, as is any other compression.
    pub fn of_output(path: &Path) -> Result<(Self, bool), String> {
        match extension(path).as_deref() {
            Some("gz") => match Format::of(&path.with_extension("")) {
                Format::Parquet => Err(
                    "Parquet compresses its own columns: write .parquet, not .parquet.gz".into(),
                ),
                inner => Ok((inner, true)),
            },
            Some(other) if OTHER_COMPRESSIONS.contains(&other) => Err(format!(
                ".{other} output is not written: gzip (.gz) is the compression read and written"
            )),
            _ => Ok((Format::of(path), false)),
        }
    }

    /// `.npy`, `.f32`, `.parquet`, `.wkt`, `.geojson` and `.json` by extension (any case);
    /// everything else is CSV.
    pub fn of(path: &Path) -> Self {
        match extension(path).as_deref() {
            Some("npy") => Format::Npy,
            Some("f32") => Format::F32,
            Some("parquet") => Format::Parquet,
            Some("wkt") => Format::Wkt,
            Some("geojson" | "json") => Format::GeoJson,
            _ => Format::Csv,
        }
    }

    /// Reads the records of `data` (at `path`, `size` bytes on disk), whose columns are
    /// `columns`.
    pub fn reader(
        self,
        path: &Path,
        data: Data,
        columns: &'static [&'static str],
        #[cfg_attr(not(feature = "parquet"), allow(unused_variables))] size: u64,
    ) -> Result<Box<dyn RecordSource>, FileError> {
        let width = columns.len();
        Ok(match self {
            Format::Csv => Box::new(csv::CsvSource::open(path, data, columns)?),
            Format::Npy => Box::new(npy::open(path, data, width)?),
            Format::F32 => Box::new(f32::open(path, data, width)?),
            #[cfg(feature = "parquet")]
            Format::Parquet => Box::new(parquet::ParquetSource::open(path, data, columns, size)?),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => {
                return Err(FileError::new(path, crate::table::Place::File, NO_PARQUET));
            }
            Format::Wkt | Format::GeoJson => Box::new(crate::polylines::LinesSource::open(
                self, path, data, columns, size,
            )?),
        })
    }

    /// Whether a table of `columns` can be written in this format, and if not why.
    pub fn holds(self, columns: &[Column]) -> Result<(), String> {
        match self {
            Format::F32 if f32::float_columns(columns) != 4 => Err(
                ".f32 output holds 4 f32 per record, which only clip writes; use .npy or .csv"
                    .into(),
            ),
            Format::Npy | Format::F32 if columns.iter().any(|c| c.ty == ColumnType::Text) => Err(
                "NPY and .f32 hold numbers, and kept columns (--keep) are text: use .csv or \
                 .parquet"
                    .into(),
            ),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => Err(NO_PARQUET.into()),
            Format::Wkt | Format::GeoJson => Err(
                "WKT and GeoJSON are read (line strings, polygons), not written: use .csv, \
                 .npy or .parquet"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// A writer of a table of `columns` into `file`, once [`holds`](Self::holds) said yes; the
    /// CSV header is written now, the NPY header now and again at the end.
    pub fn writer(self, file: File, columns: &'static [Column]) -> std::io::Result<Writer> {
        let buffered = |file| BufWriter::with_capacity(BUFFER, file);
        Ok(match self {
            Format::Csv => Writer::Csv(csv::CsvWriter::new(buffered(file), columns)?),
            Format::Npy => Writer::Npy(npy::NpyWriter::new(buffered(file), columns)?),
            Format::F32 => Writer::F32(f32::F32Writer::new(buffered(file))),
            // Arrow's writer buffers a row group itself.
            #[cfg(feature = "parquet")]
            Format::Parquet => {
                Writer::Parquet(Box::new(parquet::ParquetWriter::new(file, columns)?))
            }
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => return Err(std::io::Error::other(NO_PARQUET)),
            Format::Wkt | Format::GeoJson => {
                return Err(std::io::Error::other("WKT and GeoJSON are not written"));
            }
        })
    }
}

/// A table writer of any format. An enum rather than a trait object, so that the loop writing a
/// batch is compiled once per format with `row` inlined: a row of cells then costs what writing
/// its values costs.
pub enum Writer {
    Csv(csv::CsvWriter<BufWriter<File>>),
    Stdout(csv::CsvWriter<BufWriter<std::io::Stdout>>),
    Npy(npy::NpyWriter),
    F32(f32::F32Writer<BufWriter<File>>),
    #[cfg(feature = "parquet")]
    Parquet(Box<parquet::ParquetWriter>),
}

/// `$body` with `$w` bound to the writer inside, whatever its format.
macro_rules! each_writer {
    ($writer:expr, $w:ident => $body:expr) => {
        match $writer {
            Writer::Csv($w) => $body,
            Writer::Stdout($w) => $body,
            Writer::Npy($w) => $body,
            Writer::F32($w) => $body,
            #[cfg(feature = "parquet")]
            Writer::Parquet($w) => $body,
        }
    };
}

impl Writer {
    /// CSV to stdout.
    pub fn stdout(columns: &[Column]) -> std::io::Result<Self> {
        let out = BufWriter::with_capacity(BUFFER, std::io::stdout());
        Ok(Writer::Stdout(csv::CsvWriter::new(out, columns)?))
    }

    /// CSV to a file (rows held for stdout).
    pub fn csv(file: File, columns: &[Column]) -> std::io::Result<Self> {
        Ok(Writer::Csv(csv::CsvWriter::new(
            BufWriter::with_capacity(BUFFER, file),
            columns,
        )?))
    }

    /// Writes `rows` and ends the batch; returns how many rows were written.
    pub fn batch<'a, R: AsRef<[Cell<'a>]>>(
        &mut self,
        rows: impl IntoIterator<Item = R>,
    ) -> std::io::Result<u64> {
        fn all<'a, W: TableWriter, R: AsRef<[Cell<'a>]>>(
            w: &mut W,
            rows: impl IntoIterator<Item = R>,
        ) -> std::io::Result<u64> {
            let mut count = 0;
            for row in rows {
                w.row(row.as_ref())?;
                count += 1;
            }
            w.end_batch()?;
            Ok(count)
        }
        each_writer!(self, w => all(w, rows))
    }

    /// Completes the table; `rows` rows were written.
    pub fn finish(self, rows: u64) -> std::io::Result<()> {
        each_writer!(self, w => w.finish(rows))
    }
}

/// Whether every column of a table is an f32 (the record files: segments and rects).
pub fn all_f32(columns: &[Column]) -> bool {
    columns.iter().all(|c| c.ty == ColumnType::F32)
}
