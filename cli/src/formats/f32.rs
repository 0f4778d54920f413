//! Raw little-endian float32, 4 values (16 bytes) per record and no header: read as records,
//! and written from a table's four f32 columns (clip's segment; NaN for a miss). The reader
//! also serves NPY, whose data is the same after its header.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::table::{Cell, Column, ColumnType, FileError, Place, Raw, RecordSource, TableWriter};

/// Records of four little-endian f32 after a header of `header` bytes.
pub struct BinarySource {
    path: PathBuf,
    reader: BufReader<File>,
    records: u64,
    row: u64,
    header: u64,
}

impl BinarySource {
    /// `records` records after `header` bytes already read from `reader`; the file (`size`
    /// bytes) must hold them all.
    pub fn new(
        path: &Path,
        reader: BufReader<File>,
        header: u64,
        records: u64,
        size: u64,
    ) -> Result<Self, FileError> {
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
        Ok(Self {
            path: path.to_owned(),
            reader,
            records,
            row: 0,
            header,
        })
    }
}

impl RecordSource for BinarySource {
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

/// The file's size, and a buffered reader at its start.
pub fn sized(path: &Path, file: File) -> Result<(u64, BufReader<File>), FileError> {
    let size = file
        .metadata()
        .map_err(|e| FileError::new(path, Place::File, format!("cannot read: {e}")))?
        .len();
    Ok((size, BufReader::with_capacity(super::BUFFER, file)))
}

/// Opens a `.f32` file: whole records, nothing else.
pub fn open(path: &Path, file: File) -> Result<BinarySource, FileError> {
    let (size, reader) = sized(path, file)?;
    if size % 16 != 0 {
        return Err(FileError::new(
            path,
            Place::File,
            format!(
                "{size} bytes is not a whole number of records (4 little-endian f32, 16 bytes each)"
            ),
        ));
    }
    BinarySource::new(path, reader, 0, size / 16, size)
}

/// How many of a table's columns are f32: a `.f32` file holds exactly 4.
pub fn float_columns(columns: &[Column]) -> usize {
    columns.iter().filter(|c| c.ty == ColumnType::F32).count()
}

/// Writes a table's f32 cells, NaN where absent; its other cells are left out.
pub struct F32Writer<W: Write> {
    out: W,
}

impl<W: Write> F32Writer<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }
}

impl<W: Write> TableWriter for F32Writer<W> {
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        for cell in cells {
            if let Cell::F32(v) = cell {
                self.out.write_all(&v.unwrap_or(f32::NAN).to_le_bytes())?;
            }
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>, _rows: u64) -> std::io::Result<()> {
        self.out.flush()
    }
}
