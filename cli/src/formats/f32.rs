//! Raw little-endian float32, 4 values (16 bytes) per record and no header: read as records,
//! and written from a table's four f32 columns (clip's segment; NaN for a miss). The reader
//! also serves NPY, whose data is the same after its header.

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::Data;
use crate::table::{Cell, Column, ColumnType, FileError, Place, Raw, RecordSource, TableWriter};

/// Records of four little-endian f32 after a header of `header` bytes.
pub struct BinarySource {
    path: PathBuf,
    reader: BufReader<Box<dyn Read>>,
    /// How many records there are, when known (a file, or an NPY header); a stream without a
    /// count ends at its end.
    records: Option<u64>,
    row: u64,
    header: u64,
}

impl BinarySource {
    /// `records` records after `header` bytes already read from `reader`; a file (`size`
    /// bytes, when it is one) must hold them all.
    pub fn new(
        path: &Path,
        reader: BufReader<Box<dyn Read>>,
        header: u64,
        records: Option<u64>,
        size: Option<u64>,
    ) -> Result<Self, FileError> {
        if let (Some(records), Some(size)) = (records, size)
            && header + records * 16 > size
        {
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
        if Some(self.row) == self.records {
            return Ok(None);
        }
        let mut bytes = [0u8; 16];
        let read = read_record(&mut self.reader, &mut bytes);
        let place = Place::Row {
            row: self.row,
            field: "record",
        };
        match read {
            Ok(16) => {}
            Ok(0) if self.records.is_none() => return Ok(None),
            Ok(n) => {
                let promised = self.records.map_or(String::new(), |r| {
                    format!(" of the {r} its header promises")
                });
                return Err(FileError::new(
                    &self.path,
                    place,
                    format!("the input ends {n} bytes into this record{promised} (16 bytes each)"),
                ));
            }
            Err(e) => {
                return Err(FileError::new(
                    &self.path,
                    place,
                    format!("cannot read: {e}"),
                ));
            }
        }
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

/// Reads up to 16 bytes: fewer only at the end of the input.
fn read_record(reader: &mut impl Read, bytes: &mut [u8; 16]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < 16 {
        match reader.read(&mut bytes[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The input's size when it is a file, and a buffered reader at its start.
pub fn sized(
    path: &Path,
    data: Data,
) -> Result<(Option<u64>, BufReader<Box<dyn Read>>), FileError> {
    let size = match &data {
        Data::File(file) => Some(
            file.metadata()
                .map_err(|e| FileError::new(path, Place::File, format!("cannot read: {e}")))?
                .len(),
        ),
        Data::Stream(_) => None,
    };
    Ok((size, data.reader()))
}

/// Opens `.f32` records: whole records, nothing else.
pub fn open(path: &Path, data: Data) -> Result<BinarySource, FileError> {
    let (size, reader) = sized(path, data)?;
    let Some(size) = size else {
        return BinarySource::new(path, reader, 0, None, None);
    };
    if size % 16 != 0 {
        return Err(FileError::new(
            path,
            Place::File,
            format!(
                "{size} bytes is not a whole number of records (4 little-endian f32, 16 bytes each)"
            ),
        ));
    }
    BinarySource::new(path, reader, 0, Some(size / 16), Some(size))
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
