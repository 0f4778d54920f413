//! The file formats by name: which format a path's extension says, for inputs and outputs.

use std::path::Path;

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

/// Whether `path` names a gzip-compressed file (`.gz`, any case).
pub fn gzipped(path: &Path) -> bool {
    extension(path).as_deref() == Some("gz")
}

pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
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
}
