//! The file formats, each in its own module with its reader and its writer, chosen by a file's
//! extension. A new format is a module here and a line in each `match` below.

pub mod csv;
pub mod f32;
pub mod npy;
#[cfg(feature = "parquet")]
pub mod parquet;

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use crate::table::{Column, ColumnType, FileError, RecordSource, TableWriter};

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

    /// Reads the records of `file` (at `path`, `bytes` long), whose columns are `columns`.
    pub fn reader(
        self,
        path: &Path,
        file: File,
        columns: [&'static str; 4],
        #[cfg_attr(not(feature = "parquet"), allow(unused_variables))] bytes: u64,
    ) -> Result<Box<dyn RecordSource>, FileError> {
        Ok(match self {
            Format::Csv => Box::new(csv::CsvSource::open(path, file, columns)?),
            Format::Npy => Box::new(npy::open(path, file)?),
            Format::F32 => Box::new(f32::open(path, file)?),
            #[cfg(feature = "parquet")]
            Format::Parquet => Box::new(parquet::ParquetSource::open(path, file, columns, bytes)?),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => {
                return Err(FileError::new(path, crate::table::Place::File, NO_PARQUET));
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
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => Err(NO_PARQUET.into()),
            _ => Ok(()),
        }
    }

    /// A writer of a table of `columns` into `file`, once [`holds`](Self::holds) said yes; the
    /// CSV header is written now, the NPY header now and again at the end.
    pub fn writer(
        self,
        file: File,
        columns: &'static [Column],
    ) -> std::io::Result<Box<dyn TableWriter>> {
        Ok(match self {
            Format::Csv => Box::new(csv::CsvWriter::new(
                BufWriter::with_capacity(BUFFER, file),
                columns,
            )?),
            Format::Npy => Box::new(npy::NpyWriter::new(
                BufWriter::with_capacity(BUFFER, file),
                columns,
            )?),
            Format::F32 => Box::new(f32::F32Writer::new(BufWriter::with_capacity(BUFFER, file))),
            // Arrow's writer buffers a row group itself.
            #[cfg(feature = "parquet")]
            Format::Parquet => Box::new(parquet::ParquetWriter::new(file, columns)?),
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => return Err(std::io::Error::other(NO_PARQUET)),
        })
    }
}

/// Whether every column of a table is an f32 (the record files: segments and rects).
pub fn all_f32(columns: &[Column]) -> bool {
    columns.iter().all(|c| c.ty == ColumnType::F32)
}
