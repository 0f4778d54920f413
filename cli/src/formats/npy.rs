//! NPY, numpy's `.npy` format (header versions 1.0 to 3.0). Records: float32 of shape [N, 4]
//! ([N, 3] for circles),
//! C order, what `np.save(path, a.astype(np.float32))` writes. Tables: one structured record
//! per row (named fields, so `np.load` gives named columns), or a plain float32 [N, k] array
//! when every column is an f32 (the record files `rectcast gen` writes). The row count is known
//! only at the end, so the shape is written with a fixed width and patched in place.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::Data;
use super::f32::BinarySource;
use crate::table::{Cell, Column, ColumnType, FileError, Place, TableWriter};

const MAGIC: &[u8] = b"\x93NUMPY";

/// A parsed header: `descr` as written (`<f4`, or a structured list), the shape, and the
/// header's length in bytes (where the data starts).
#[derive(Debug)]
pub struct Header {
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<u64>,
    pub length: u64,
}

/// Reads the header and leaves `reader` at the first data byte.
pub fn read_header(reader: &mut impl Read) -> Result<Header, String> {
    let mut start = [0u8; 8];
    reader
        .read_exact(&mut start)
        .map_err(|_| "not an NPY file (too short)".to_string())?;
    if &start[..6] != MAGIC {
        return Err("not an NPY file (no \\x93NUMPY magic)".into());
    }
    let (len, prefix) = match start[6] {
        1 => {
            let mut b = [0u8; 2];
            reader.read_exact(&mut b).map_err(|e| e.to_string())?;
            (u16::from_le_bytes(b) as usize, 10)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            reader.read_exact(&mut b).map_err(|e| e.to_string())?;
            (u32::from_le_bytes(b) as usize, 12)
        }
        v => return Err(format!("unsupported NPY version {v}")),
    };
    let mut text = vec![0u8; len];
    reader
        .read_exact(&mut text)
        .map_err(|_| "the NPY header is cut short".to_string())?;
    let text = String::from_utf8(text).map_err(|_| "the NPY header is not text".to_string())?;
    let value = |key: &str| -> Result<&str, String> {
        let at = text
            .find(&format!("'{key}'"))
            .ok_or_else(|| format!("the NPY header has no '{key}'"))?;
        let rest = text[at + key.len() + 2..].trim_start();
        Ok(rest.strip_prefix(':').unwrap_or(rest).trim_start())
    };
    let descr = value("descr")?;
    let descr = match descr.chars().next() {
        Some(q @ ('\'' | '"')) => descr[1..].split(q).next().unwrap_or_default().to_string(),
        _ => descr.split("),").next().unwrap_or(descr).to_string() + ")",
    };
    let fortran_order = value("fortran_order")?.starts_with("True");
    let shape = value("shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("the NPY header's shape is not a tuple")?;
    let shape = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| format!("bad NPY shape entry {s:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Header {
        descr,
        fortran_order,
        shape,
        length: (prefix + len) as u64,
    })
}

/// A version 1.0 header for `rows` records of `descr` (a numpy dtype literal), each of `columns`
/// values when given (shape (rows, columns)), always the same length whatever `rows` is, so
/// it can be rewritten in place once the count is known.
pub fn header(descr: &str, rows: u64, columns: Option<u64>) -> Vec<u8> {
    let rest = columns.map_or(String::new(), |c| format!(" {c}"));
    let dict =
        format!("{{'descr': {descr}, 'fortran_order': False, 'shape': ({rows:>20},{rest}), }}");
    // Magic (6) + version (2) + length (2) + dict + padding + '\n', a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let padding = unpadded.next_multiple_of(64) - unpadded;
    let text = format!("{dict}{}\n", " ".repeat(padding));
    let mut out = Vec::with_capacity(10 + text.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(text.len() as u16).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// Opens `.npy` float32 records: shape (N, width), C order.
pub fn open(path: &Path, data: Data, width: usize) -> Result<BinarySource, FileError> {
    let (size, mut reader) = super::f32::sized(path, data)?;
    let header =
        read_header(&mut reader).map_err(|message| FileError::new(path, Place::File, message))?;
    let wide = header.descr == "<f8";
    if !(header.descr == "<f4" || wide)
        || header.fortran_order
        || header.shape.len() != 2
        || header.shape[1] != width as u64
    {
        return Err(FileError::new(
            path,
            Place::File,
            format!(
                "expected float32 ('<f4', or float64 '<f8' whose values float32 holds exactly) of shape (N, {width}) in C order, found descr {:?}, shape {:?}, fortran_order {}",
                header.descr, header.shape, header.fortran_order
            ),
        ));
    }
    // The size check counts 4 bytes a value: a float64 file holds twice that.
    let source = BinarySource::new(
        path,
        reader,
        width,
        header.length,
        Some(header.shape[0] * if wide { 2 } else { 1 }),
        size,
    )?;
    Ok(if wide {
        source.float64().with_records(header.shape[0])
    } else {
        source
    })
}

/// A column's numpy type: packed, little-endian.
fn dtype(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::U64 => "<u8",
        ColumnType::Index => "<i8",
        ColumnType::Bool => "|b1",
        ColumnType::Category | ColumnType::Sides => "|u1",
        ColumnType::F32 => "<f4",
        ColumnType::Text => unreachable!("NPY holds no text: `Format::holds` refuses it"),
    }
}

/// The header's `descr` and the columns in its shape, if any: a structured record per row, or
/// for a table of f32 columns alone a plain [N, k] float32 array.
fn layout(columns: &[Column]) -> (String, Option<u64>) {
    if crate::table::all_f32(columns) {
        return (
            format!("'{}'", dtype(ColumnType::F32)),
            Some(columns.len() as u64),
        );
    }
    let fields: Vec<String> = columns
        .iter()
        .map(|c| format!("('{}', '{}')", c.name, dtype(c.ty)))
        .collect();
    (format!("[{}]", fields.join(", ")), None)
}

/// Writes a table to an NPY file: the header first with no rows, and again at the end.
pub struct NpyWriter {
    out: BufWriter<File>,
    descr: String,
    shape: Option<u64>,
}

impl NpyWriter {
    pub fn new(mut out: BufWriter<File>, columns: &[Column]) -> std::io::Result<Self> {
        let (descr, shape) = layout(columns);
        out.write_all(&header(&descr, 0, shape))?;
        Ok(Self { out, descr, shape })
    }
}

impl TableWriter for NpyWriter {
    // Inlined where the cells are made, so that their types are known and the match folds away.
    #[inline(always)]
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        // The row's bytes on the stack, then one write: a write per value costs more than the
        // value. Each value is a fixed number of bytes, copied as such.
        let mut row = [0u8; 8 * crate::table::MAX_ROW];
        let mut at = 0;
        fn put<const N: usize>(row: &mut [u8], at: &mut usize, value: [u8; N]) {
            row[*at..*at + N].copy_from_slice(&value);
            *at += N;
        }
        for cell in cells {
            match *cell {
                Cell::U64(v) => put(&mut row, &mut at, v.to_le_bytes()),
                Cell::Index(v) => put(&mut row, &mut at, v.map_or(-1, |v| v as i64).to_le_bytes()),
                Cell::Bool(v) => put(&mut row, &mut at, [v as u8]),
                Cell::Category(code, _) => put(&mut row, &mut at, [code]),
                Cell::F32(v) => put(&mut row, &mut at, v.unwrap_or(f32::NAN).to_le_bytes()),
                Cell::Sides(sides) => put(&mut row, &mut at, [sides.bits() as u8]),
                Cell::Text(_) => unreachable!("NPY holds no text: `Format::holds` refuses it"),
            }
        }
        self.out.write_all(&row[..at])
    }

    fn finish(self, rows: u64) -> std::io::Result<()> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header(&self.descr, rows, self.shape))?;
        file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_header_reads_back_and_keeps_its_length() {
        let descr = "[('segment', '<u8'), ('kind', '|u1')]";
        let small = header(descr, 3, None);
        let large = header(descr, 123_456_789_012, None);
        assert_eq!(small.len(), large.len());
        assert_eq!(small.len() % 64, 0);
        let h = read_header(&mut &large[..]).unwrap();
        assert_eq!(h.shape, [123_456_789_012]);
        assert!(!h.fortran_order);
        assert_eq!(h.length as usize, large.len());
        let h = read_header(&mut &header("'<f4'", 7, Some(4))[..]).unwrap();
        assert_eq!((h.descr.as_str(), h.shape.as_slice()), ("<f4", &[7, 4][..]));
    }

    #[test]
    fn numpys_own_header_parses() {
        // As numpy 1.26 writes np.zeros((3, 4), np.float32).
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        let text = format!("{dict}{}\n", " ".repeat(128 - 10 - dict.len() - 1));
        bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
        bytes.extend_from_slice(text.as_bytes());
        let h = read_header(&mut &bytes[..]).unwrap();
        assert_eq!((h.descr.as_str(), h.shape.as_slice()), ("<f4", &[3, 4][..]));
        assert_eq!(h.length, 128);
    }
}
