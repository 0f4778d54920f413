//! `rectcast gen`: seeded scenes written as input files, streamed in chunks so that scenes
//! larger than memory can be written.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use rectcast::scene::{self, adversarial};
use rectcast::{Rect, Segment};

use crate::options::Outcome;
use crate::output::{Sink, Table, To};

/// Records generated per chunk.
const CHUNK: usize = 1 << 20;

#[derive(Args)]
pub struct GenArgs {
    /// The kind of scene.
    #[arg(long, value_enum, default_value = "bullet-hell")]
    kind: SceneKind,
    /// How many segments to write.
    #[arg(long)]
    segments: u64,
    /// How many rects to write.
    #[arg(long)]
    rects: u64,
    /// The folder to write segments.EXT and rects.EXT into (made if missing).
    #[arg(long)]
    out_dir: PathBuf,
    /// The files' format.
    #[arg(long, default_value = "csv", value_parser = ["csv", "npy", "f32"])]
    format: String,
    /// The generator's seed: the same seed writes the same files.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
}

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

/// Writes `count` records of `table` made by `make(chunk index, chunk length)` to `path`,
/// whole or not at all.
fn write_records(
    path: &Path,
    table: Table,
    count: u64,
    mut make: impl FnMut(u64, usize) -> Vec<[f32; 4]>,
) -> Outcome {
    let mut sink = Sink::create(To::File(path), table)?;
    let mut done = 0;
    let mut k = 0;
    while done < count {
        let n = CHUNK.min((count - done) as usize);
        sink.records(make(k, n))?;
        done += n as u64;
        k += 1;
    }
    sink.finish()
}

/// Writes `DIR/segments.EXT` and `DIR/rects.EXT`.
pub fn run(args: GenArgs) -> Outcome {
    let GenArgs {
        kind,
        segments,
        rects,
        out_dir: dir,
        format,
        seed,
    } = args;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let segments_path = dir.join(format!("segments.{format}"));
    let rects_path = dir.join(format!("rects.{format}"));
    write_records(&segments_path, Table::Segments, segments, |k, n| {
        let (segments, _) = chunk(kind, seed, k, n, false);
        segments.iter().map(|s| [s.x0, s.y0, s.x1, s.y1]).collect()
    })?;
    write_records(&rects_path, Table::Rects, rects, |k, n| {
        let (_, rects) = chunk(kind, seed, k, n, true);
        rects
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
