//! An input opened: stdin, a gzip stream or a file, and its bytes as one buffered reader.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::format::{Format, gzipped};
use crate::table::FileError;

/// Buffered output: large writes, few system calls.
pub const BUFFER: usize = 1 << 20;

/// The path that means stdin.
pub const STDIN: &str = "-";

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
