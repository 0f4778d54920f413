//! The NPY header (numpy's `.npy` format, versions 1.0 to 3.0): read to check a `[N, 4]`
//! float32 input, and written for results whose row count is known only at the end, so the
//! shape is written with a fixed width and patched in place when the job is done.

use std::io::Read;

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
