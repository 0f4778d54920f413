//! `rectcast gen`: seeded scenes written as input files, streamed in chunks so that scenes
//! larger than memory can be written.

use std::io::{BufWriter, Write};
use std::path::Path;

use clap::ValueEnum;
use rectcast::scene::{self, adversarial};
use rectcast::{Rect, Segment};

use crate::npy;
use crate::records::Format;

/// Records generated per chunk.
const CHUNK: usize = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SceneKind {
    /// Bullets on a 1920 x 1080 field (moves of up to 40 px) and hitboxes of 8 to 96 px.
    BulletHell,
    /// Uniform segments and rects in a 1000 x 1000 square, with axis-parallel segments, points
    /// and grid-snapped coordinates.
    Random,
    /// The exact-decision stress cases: lines through corners, along edges, tiny and huge
    /// magnitudes, signed zeros (every category in turn).
    Adversarial,
}

/// Chunk `k` of a scene's segments (`rects == false`) or rects: each chunk from its own seed.
fn chunk(kind: SceneKind, seed: u64, k: u64, n: usize, rects: bool) -> (Vec<Segment>, Vec<Rect>) {
    let seed = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(2 * k + rects as u64);
    let (s, r) = if rects { (0, n) } else { (n, 0) };
    match kind {
        SceneKind::BulletHell => scene::bullet_hell(seed, s, r),
        SceneKind::Random => scene::random_batch(seed, s, r, 1000.0),
        SceneKind::Adversarial => {
            let categories = adversarial::Category::ALL;
            let category = categories[(k as usize + rects as usize) % categories.len()];
            adversarial::pairs(category, seed, n)
        }
    }
}

/// Writes `count` records made by `make(chunk index, chunk length)` to `path`, atomically.
fn write_records(
    path: &Path,
    columns: &str,
    count: u64,
    mut make: impl FnMut(u64, usize) -> Vec<[f32; 4]>,
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let temp = crate::output::temp_beside(path).map_err(|e| fail(&e))?;
    let mut w = BufWriter::with_capacity(1 << 20, temp);
    let format = Format::of(path);
    let written = (|| -> std::io::Result<()> {
        match format {
            Format::Csv => writeln!(w, "{columns}")?,
            Format::Npy => w.write_all(&npy::header("'<f4'", count, Some(4)))?,
            Format::F32 | Format::Parquet => {}
        }
        let mut done = 0;
        let mut k = 0;
        while done < count {
            let n = CHUNK.min((count - done) as usize);
            for v in make(k, n) {
                match format {
                    Format::Csv => writeln!(w, "{},{},{},{}", v[0], v[1], v[2], v[3])?,
                    _ => w.write_all(bytemuck::cast_slice(&v.map(f32::to_le_bytes)))?,
                }
            }
            done += n as u64;
            k += 1;
        }
        w.flush()
    })();
    written.map_err(|e| fail(&e))?;
    let temp = w.into_inner().map_err(|e| fail(e.error()))?;
    temp.persist(path).map_err(|e| fail(&e.error))?;
    Ok(())
}

/// Writes `DIR/segments.EXT` and `DIR/rects.EXT`.
pub fn run(
    kind: SceneKind,
    segments: u64,
    rects: u64,
    dir: &Path,
    format: &str,
    seed: u64,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let segments_path = dir.join(format!("segments.{format}"));
    let rects_path = dir.join(format!("rects.{format}"));
    write_records(&segments_path, "x0,y0,x1,y1", segments, |k, n| {
        chunk(kind, seed, k, n, false)
            .0
            .iter()
            .map(|s| [s.x0, s.y0, s.x1, s.y1])
            .collect()
    })?;
    write_records(&rects_path, "min_x,min_y,max_x,max_y", rects, |k, n| {
        chunk(kind, seed, k, n, true)
            .1
            .iter()
            .map(|r| [r.min_x, r.min_y, r.max_x, r.max_y])
            .collect()
    })?;
    println!(
        "wrote {} ({segments} segments) and {} ({rects} rects)",
        segments_path.display(),
        rects_path.display()
    );
    Ok(())
}
