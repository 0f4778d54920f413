//! Compiled pipelines kept between processes: wgpu's `PipelineCache` (Vulkan), in a file of the
//! user's cache directory, one per adapter. A driver that keeps no cache of its own (lavapipe)
//! then compiles a kernel once per machine, not once per process.
//!
//! The file is rectcast's header (a magic line, the format, a hash of the rest) and wgpu's data,
//! which carries wgpu's own header (its version, the adapter, the driver). A file that is
//! missing, short, corrupt or from another wgpu, adapter or driver is ignored, and a new one is
//! written over it; deleting it is always safe. Writes go to a temporary file renamed over the
//! old one, so that processes running side by side never read half a file.
//!
//! `RECTCAST_CACHE_DIR` names the directory (default: `$XDG_CACHE_HOME/rectcast`, else
//! `~/.cache/rectcast`; `~/Library/Caches/rectcast` on macOS, `%LOCALAPPDATA%\rectcast` on
//! Windows); `RECTCAST_PIPELINE_CACHE=off` keeps no cache.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file's first bytes.
const MAGIC: &[u8] = b"rectcast pipeline cache\n";
/// The layout of what follows the magic line: bump it when it changes.
const FORMAT: u32 = 1;
/// Magic, format, hash.
const HEADER: usize = MAGIC.len() + 4 + 8;

/// A device's pipeline cache and its file.
#[derive(Debug)]
pub(crate) struct PipelineStore {
    pub(crate) cache: wgpu::PipelineCache,
    path: PathBuf,
    /// The hash of the data last read or written, so that an unchanged cache is not rewritten.
    saved: Mutex<Option<u64>>,
}

/// Where the cache files live, or `None` when caching is off or no directory is known.
pub(crate) fn directory() -> Option<PathBuf> {
    if std::env::var_os("RECTCAST_PIPELINE_CACHE").is_some_and(|v| v == "off") {
        return None;
    }
    if let Some(dir) = std::env::var_os("RECTCAST_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|home| home.join("Library/Caches"))
    } else {
        var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|home| home.join(".cache")))
    };
    base.map(|base| base.join("rectcast"))
}

fn hash(data: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    data.hash(&mut hasher);
    hasher.finish()
}

/// The data a file holds, when its header and hash check.
fn read(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::read(path).ok()?;
    let (header, data) = file.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (format, stored) = rest.split_at(4);
    let intact =
        magic == MAGIC && format == FORMAT.to_le_bytes() && stored == hash(data).to_le_bytes();
    intact.then(|| data.to_vec())
}

impl PipelineStore {
    /// The cache of `device` (which has `Features::PIPELINE_CACHE`), from its file when one is
    /// intact; `None` where wgpu keeps no cache for the adapter or no directory is known.
    pub(crate) fn open(device: &wgpu::Device, info: &wgpu::AdapterInfo) -> Option<Self> {
        let key = wgpu::util::pipeline_cache_key(info)?;
        let path = directory()?.join(format!("{key}.bin"));
        let data = read(&path);
        // SAFETY: the data is either none, or bytes this module wrote from
        // `PipelineCache::get_data` (its hash checked); wgpu checks its own header (version,
        // adapter, driver) and, with `fallback`, starts empty on any mismatch.
        let cache = unsafe {
            device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                label: Some("rectcast.pipeline_cache"),
                data: data.as_deref(),
                fallback: true,
            })
        };
        Some(Self {
            cache,
            path,
            saved: Mutex::new(data.as_deref().map(hash)),
        })
    }

    /// The file the cache is kept in.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the cache to its file if it changed since it was read or last written. A cache
    /// that cannot be written is no error: the next process compiles again.
    pub(crate) fn save(&self) {
        let Some(data) = self.cache.get_data() else {
            return;
        };
        let digest = hash(&data);
        let mut saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        if *saved == Some(digest) {
            return;
        }
        let written = (|| -> std::io::Result<()> {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)?;
            let name = self.path.file_name().unwrap_or_default().to_string_lossy();
            let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
            let mut file = Vec::with_capacity(HEADER + data.len());
            file.extend_from_slice(MAGIC);
            file.extend_from_slice(&FORMAT.to_le_bytes());
            file.extend_from_slice(&digest.to_le_bytes());
            file.extend_from_slice(&data);
            std::fs::write(&temporary, &file)?;
            std::fs::rename(&temporary, &self.path).inspect_err(|_| {
                let _ = std::fs::remove_file(&temporary);
            })
        })();
        if written.is_ok() {
            *saved = Some(digest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_back_only_when_its_header_and_hash_check() {
        let dir = std::env::temp_dir().join(format!("rectcast-cache-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cache.bin");
        let data = b"some pipeline bytes".to_vec();
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&FORMAT.to_le_bytes());
        file.extend_from_slice(&hash(&data).to_le_bytes());
        file.extend_from_slice(&data);
        std::fs::write(&path, &file).unwrap();
        assert_eq!(read(&path), Some(data.clone()));
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let cases = [
            ("a flipped bit", flipped),
            ("cut short", file[..file.len() - 1].to_vec()),
            ("the header cut", file[..HEADER - 1].to_vec()),
            ("empty", Vec::new()),
            ("another format", {
                let mut other = file.clone();
                other[MAGIC.len()] ^= 2;
                other
            }),
        ];
        for (what, bytes) in cases {
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(read(&path), None, "{what}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read(&path), None, "missing");
    }
}
