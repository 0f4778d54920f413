//! Raw little-endian float32, 4 values (16 bytes) per record (3, 12 bytes, for circles) and no
//! header: read as records,
//! and written from a table's four f32 columns (clip's segment; NaN for a miss). The reader
//! also serves NPY, whose data is the same after its header.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use super::{Data, Reader};
use crate::table::{Cell, Column, ColumnType, FileError, Place, Raw, RecordSource, TableWriter};

/// Records of `width` little-endian f32 after a header of `header` bytes.
pub struct BinarySource {
    path: PathBuf,
    reader: Reader,
    /// Values per record (4, or 3 for circles).
    width: usize,
    /// How many records there are, when known (a file, or an NPY header); a stream without a
    /// count ends at its end.
    records: Option<u64>,
    row: u64,
    header: u64,
    /// Whether each value is a float64 (NPY `<f8`), converted exactly to f32 or refused.
    wide: bool,
    /// Whether the input was read to its end after the counted records ([`Self::end`]).
    ended: bool,
}

impl BinarySource {
    /// `records` records after `header` bytes already read from `reader`; a file (`size`
    /// bytes, when it is one) must hold them all.
    pub fn new(
        path: &Path,
        reader: Reader,
        width: usize,
        header: u64,
        records: Option<u64>,
        size: Option<u64>,
    ) -> Result<Self, FileError> {
        let record = 4 * width as u64;
        if let (Some(records), Some(size)) = (records, size)
            && header + records * record > size
        {
            return Err(FileError::new(
                path,
                Place::File,
                format!(
                    "the header promises {records} records ({} bytes) but the file has {size} bytes",
                    header + records * record
                ),
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            reader,
            width,
            records,
            row: 0,
            header,
            wide: false,
            ended: false,
        })
    }

    /// Values are float64 (NPY `<f8`): each one converts to f32 where f32 holds it exactly,
    /// else its record is invalid (named, and skipped with `--skip-invalid`).
    pub fn float64(mut self) -> Self {
        self.wide = true;
        self
    }

    /// The record count, once the size was checked against another.
    pub fn with_records(mut self, records: u64) -> Self {
        self.records = Some(records);
        self
    }

    /// After the counted records, the input must end: bytes beyond what the header promises
    /// are an error, and reading to the end is what makes a gzip stream check its CRC and
    /// length (a damaged or truncated member is an error here, not records read as good).
    fn end(&mut self) -> Result<(), FileError> {
        if std::mem::replace(&mut self.ended, true) {
            return Ok(());
        }
        let records = self.records.unwrap_or(self.row);
        let place = Place::Row {
            row: records,
            field: "record",
        };
        match self.reader.fill_buf() {
            Ok([]) => Ok(()),
            Ok(_) => Err(FileError::new(
                &self.path,
                place,
                format!("the input goes on after the {records} records its header promises"),
            )),
            Err(e) => Err(FileError::new(
                &self.path,
                place,
                format!("cannot read past the last record: {e}"),
            )),
        }
    }
}

impl RecordSource for BinarySource {
    fn next(&mut self) -> Result<Option<Raw>, FileError> {
        if Some(self.row) == self.records {
            self.end()?;
            return Ok(None);
        }
        let place = Place::Row {
            row: self.row,
            field: "record",
        };
        // A stream without a count ends where its data does, between two records.
        if self.records.is_none() {
            match self.reader.fill_buf() {
                Ok([]) => {
                    self.ended = true;
                    return Ok(None);
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(FileError::new(
                        &self.path,
                        place,
                        format!("cannot read: {e}"),
                    ));
                }
            }
        }
        let size = if self.wide { 8 } else { 4 };
        let mut record = [0u8; 32];
        let bytes = &mut record[..size * self.width];
        if let Err(e) = self.reader.read_exact(bytes) {
            let message = match (e.kind(), self.records) {
                (std::io::ErrorKind::UnexpectedEof, None) => {
                    format!(
                        "the input ends inside this record ({} bytes each)",
                        bytes.len()
                    )
                }
                (std::io::ErrorKind::UnexpectedEof, Some(records)) => format!(
                    "the input ends inside this record, before the {records} its header promises"
                ),
                _ => format!("cannot read: {e}"),
            };
            return Err(FileError::new(&self.path, place, message));
        }
        self.row += 1;
        if self.wide {
            let mut values = [0f32; 4];
            for (i, value) in values.iter_mut().enumerate().take(self.width) {
                let wide =
                    f64::from_le_bytes(record[8 * i..8 * i + 8].try_into().expect("8 bytes"));
                *value = wide as f32;
                if *value as f64 != wide && !wide.is_nan() {
                    return Ok(Some(Raw::Invalid(FileError::new(
                        &self.path,
                        place,
                        format!(
                            "value {i} is {wide} (float64), which float32 cannot hold exactly: the answer would be about another number; round the file to float32 (a.astype(np.float32)) if that is the question"
                        ),
                    ))));
                }
            }
            return Ok(Some(Raw::Values(values, place)));
        }
        let values: [f32; 4] = std::array::from_fn(|i| {
            f32::from_le_bytes(record[4 * i..4 * i + 4].try_into().expect("4 bytes"))
        });
        Ok(Some(Raw::Values(values, place)))
    }

    /// A file with a known record count is read a block at a time, straight into `out`.
    fn next_block(
        &mut self,
        out: &mut Vec<[f32; 4]>,
        max: usize,
    ) -> Result<Option<usize>, FileError> {
        // In bulk only where a record is an array's element, four float32 values.
        let (Some(records), 4, false) = (self.records, self.width, self.wide) else {
            return Ok(None);
        };
        let n = (records - self.row).min(max as u64) as usize;
        if n == 0 {
            self.end()?;
            return Ok(Some(0));
        }
        let start = out.len();
        out.resize(start + n, [0.0; 4]);
        let new = &mut out[start..];
        // As `next` would: an error names the record it happened in.
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(new);
        let mut filled = 0;
        let failure = loop {
            if filled == bytes.len() {
                break None;
            }
            match self.reader.read(&mut bytes[filled..]) {
                Ok(0) => {
                    break Some(format!(
                        "the input ends inside this record, before the {records} its header promises"
                    ));
                }
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Some(format!("cannot read: {e}")),
            }
        };
        if let Some(message) = failure {
            out.truncate(start);
            let place = Place::Row {
                row: self.row + (filled / 16) as u64,
                field: "record",
            };
            return Err(FileError::new(&self.path, place, message));
        }
        // Little-endian in the file: nothing to do on a little-endian machine.
        for v in new.iter_mut().flatten() {
            *v = f32::from_bits(u32::from_le(v.to_bits()));
        }
        self.row += n as u64;
        Ok(Some(n))
    }

    fn bytes(&self) -> u64 {
        self.header + self.row * 16
    }
}

/// The input's size when it is a regular file, and a buffered reader at its start. A named
/// pipe or a device opens as a file but has no size (its length reads 0): it is read to its
/// end, as stdin is.
pub fn sized(path: &Path, data: Data) -> Result<(Option<u64>, Reader), FileError> {
    let size = match &data {
        Data::File(file) => {
            let metadata = file
                .metadata()
                .map_err(|e| FileError::new(path, Place::File, format!("cannot read: {e}")))?;
            metadata.is_file().then_some(metadata.len())
        }
        Data::Stream(_) => None,
    };
    Ok((size, data.reader()))
}

/// Opens `.f32` records of `width` values: whole records, nothing else.
pub fn open(path: &Path, data: Data, width: usize) -> Result<BinarySource, FileError> {
    let (size, reader) = sized(path, data)?;
    let Some(size) = size else {
        return BinarySource::new(path, reader, width, 0, None, None);
    };
    let record = 4 * width as u64;
    if size % record != 0 {
        return Err(FileError::new(
            path,
            Place::File,
            format!(
                "{size} bytes is not a whole number of records ({width} little-endian f32, {record} bytes each)"
            ),
        ));
    }
    BinarySource::new(path, reader, width, 0, Some(size / record), Some(size))
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
    // Inlined where the cells are made, so that their types are known and the match folds away.
    #[inline(always)]
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        // The 4 values on the stack, then one write.
        let mut row = [0u8; 16];
        let floats = cells.iter().filter_map(|cell| match cell {
            Cell::F32(v) => Some(v.unwrap_or(f32::NAN)),
            _ => None,
        });
        for (bytes, v) in row.chunks_exact_mut(4).zip(floats) {
            bytes.copy_from_slice(&v.to_le_bytes());
        }
        self.out.write_all(&row)
    }

    fn finish(mut self, _rows: u64) -> std::io::Result<()> {
        self.out.flush()
    }
}
