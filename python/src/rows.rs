//! Results packed as numpy lays out a structured dtype: the field types, one row's bytes, and
//! the packing of many rows on every core.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use rayon::prelude::*;
use rectcast::cpu::workers::Workers;

use crate::unpanicked;

/// A field's numpy type, packed little-endian (the CLI's `.npy` types).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    U64,
    I64,
    Bool,
    U8,
    F32,
}

impl Ty {
    fn descr(self) -> &'static str {
        match self {
            Ty::U64 => "<u8",
            Ty::I64 => "<i8",
            Ty::Bool => "|b1",
            Ty::U8 => "|u1",
            Ty::F32 => "<f4",
        }
    }
    /// A field of this type where a row has none (a mixed row's other kinds' fields): t NaN,
    /// an index -1, a code 0.
    pub(crate) fn absent(self) -> &'static [u8] {
        const NAN: [u8; 4] = f32::NAN.to_le_bytes();
        const MINUS_ONE: [u8; 8] = (-1i64).to_le_bytes();
        match self {
            Ty::F32 => &NAN,
            Ty::I64 => &MINUS_ONE,
            Ty::U64 => &[0; 8],
            Ty::Bool | Ty::U8 => &[0],
        }
    }
    pub(crate) fn size(self) -> usize {
        match self {
            Ty::U64 | Ty::I64 => 8,
            Ty::F32 => 4,
            Ty::Bool | Ty::U8 => 1,
        }
    }
}

/// One row's bytes being written, field after field.
pub(crate) struct Row<'a> {
    bytes: &'a mut [u8],
    at: usize,
}

impl<'a> Row<'a> {
    /// A row writing `bytes` from the start.
    pub(crate) fn over(bytes: &'a mut [u8]) -> Self {
        Row { bytes, at: 0 }
    }
    /// The next fields, as their bytes.
    pub(crate) fn bytes(&mut self, value: &[u8]) -> &mut Self {
        self.bytes[self.at..self.at + value.len()].copy_from_slice(value);
        self.at += value.len();
        self
    }
    fn put<const N: usize>(&mut self, value: [u8; N]) -> &mut Self {
        self.bytes[self.at..self.at + N].copy_from_slice(&value);
        self.at += N;
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.put(v.to_le_bytes())
    }
    pub(crate) fn i64(&mut self, v: i64) -> &mut Self {
        self.put(v.to_le_bytes())
    }
    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.put([v])
    }
    pub(crate) fn f32(&mut self, v: f32) -> &mut Self {
        self.put(v.to_le_bytes())
    }
}

/// Asks Linux to back a large, fresh buffer with huge pages (where transparent huge pages are
/// `madvise`d, as by default): a result of hundreds of MB then costs a few hundred page faults
/// instead of tens of thousands, which were most of the Python layer's cost over the library's.
fn huge_pages(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = bytes.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(PAGE);
        let end = (start + bytes.len()) / PAGE * PAGE;
        if end > aligned + (2 << 20) {
            // SAFETY: the range lies inside `bytes`, which we own; MADV_HUGEPAGE is advice
            // that changes no contents, and an error (no THP support) leaves things as they were.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    end - aligned,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// Packed rows and the description of their numpy dtype.
pub(crate) type Packed<'py> = (Bound<'py, PyArray1<u8>>, Vec<(&'static str, &'static str)>);

/// Rows of `fields`, packed as numpy lays out a structured dtype of them: the bytes (a uint8
/// array, handed over without a copy) and the dtype's description, for Python to view them as
/// a structured array, again without a copy. `write` fills row `i`'s fields in order.
pub(crate) fn rows<'py, T>(
    py: Python<'py>,
    fields: &[(&'static str, Ty)],
    items: &[T],
    write: impl Fn(usize, &T, &mut Row<'_>) + Sync,
) -> PyResult<Packed<'py>>
where
    T: Sync,
{
    let size: usize = fields.iter().map(|(_, ty)| ty.size()).sum();
    let mut bytes = vec![0u8; items.len() * size];
    huge_pages(&mut bytes);
    // Blocks of rows on every core, the GIL released: packing is a memory-bound pass, and it
    // is most of what the Python layer adds to the library's call.
    const BLOCK: usize = 1 << 14;
    // On the library's pool, never rayon's global one, which a forked child cannot use.
    py.detach(|| {
        unpanicked(|| {
            Workers::shared().install(|| {
                bytes
                    .par_chunks_mut((BLOCK * size).max(1))
                    .zip(items.par_chunks(BLOCK))
                    .enumerate()
                    .for_each(|(b, (block, items))| {
                        for (k, (row, item)) in block.chunks_exact_mut(size).zip(items).enumerate()
                        {
                            let mut row = Row { bytes: row, at: 0 };
                            write(b * BLOCK + k, item, &mut row);
                            debug_assert_eq!(row.at, size, "a row that does not fill its fields");
                        }
                    });
            });
            Ok(())
        })
    })?;
    let descr = fields
        .iter()
        .map(|(name, ty)| (*name, ty.descr()))
        .collect();
    Ok((bytes.into_pyarray(py), descr))
}
