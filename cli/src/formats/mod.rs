//! The file formats, each in its own module with its reader and its writer, chosen by a file's
//! extension. A new format is a module here and its arm in each `match` below: the extension
//! (`Format::of`), the reader, the tables it can hold, and the writer (`Writer`).
//!
//! Inputs may also be `-` (stdin, read as CSV) or gzip-compressed (`.csv.gz`, `.npy.gz`,
//! `.f32.gz`): those are streams, read once from start to end; a plain file can be read again.

pub mod csv;
pub mod f32;
mod format;
mod input;
pub mod npy;
#[cfg(feature = "parquet")]
pub mod parquet;

pub use format::Format;
pub use input::{BUFFER, Data, Input, Reader, STDIN, can_read_again};

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::table::{Cell, Column, ColumnType, FileError, RecordSource, TableWriter};

/// Why a `.parquet` file cannot be read or written by this build.
#[cfg(not(feature = "parquet"))]
pub const NO_PARQUET: &str =
    "this rectcast is built without Parquet: build it with `--features parquet`";

impl Format {
    /// Reads the records of `data` (at `path`, `size` bytes on disk), whose columns are
    /// `columns`.
    pub fn reader(
        self,
        path: &Path,
        data: Data,
        columns: &'static [&'static str],
        #[cfg_attr(
            not(feature = "parquet"),
            allow(unused_variables, reason = "only Parquet reads the size")
        )]
        size: u64,
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
            Format::Wkt | Format::GeoJson => {
                let text = if self == Format::Wkt {
                    rectcast_geotext::Format::Wkt
                } else {
                    rectcast_geotext::Format::GeoJson
                };
                Box::new(crate::polylines::LinesSource::open(
                    text, path, data, columns, size,
                )?)
            }
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
