//! The broad phase's public face: [`RectSet`], rects prepared once with their grid
//! ([`crate::cpu::grid`]), and [`BroadPhase`], whether an [`crate::Engine`] uses one.

use crate::cpu::grid::Grid;
use crate::error::{InputError, Result};
use crate::types::Rect;
use crate::validate;

/// Whether queries find candidate rects through a grid (the broad phase) or test every rect
/// (the brute force). Results are the same bytes either way; only the time differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BroadPhase {
    /// The grid when the batch has at least [`AUTO_MIN_RECTS`] rects and either brings a
    /// [`RectSet`] or has at least [`AUTO_MIN_SEGMENTS`] segments (below that the brute force
    /// was measured faster, build included); else the brute force.
    #[default]
    Auto,
    /// Always the grid (built for the call when the batch brings no [`RectSet`]).
    On,
    /// Always the brute force.
    Off,
}

/// `BroadPhase::Auto` uses a grid for batches with at least this many rects (measured on 2
/// cores, 65,536 segments, the grid built per call: bullet-hell ties at 512 rects, and the grid
/// wins by 1.4× at 1,024 and 1.8× at 4,096; clustered ties at 1,024 and the grid wins by 2.2×
/// at 4,096)…
pub const AUTO_MIN_RECTS: usize = 1024;
/// …and, when it must build the grid for the call, at least this many segments (the build
/// costs about 230 ns per rect; a segment saves about 0.13 ns per rect).
pub const AUTO_MIN_SEGMENTS: usize = 2048;

impl BroadPhase {
    /// Whether a batch of `segments` × `rects` uses a grid: one it brings (`prepared`), or one
    /// built for the call.
    pub fn uses_grid(self, segments: usize, rects: usize, prepared: bool) -> bool {
        match self {
            BroadPhase::On => true,
            BroadPhase::Off => false,
            BroadPhase::Auto => {
                rects >= AUTO_MIN_RECTS && (prepared || segments >= AUTO_MIN_SEGMENTS)
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BroadPhase::Auto => "auto",
            BroadPhase::On => "on",
            BroadPhase::Off => "off",
        }
    }
}

/// Rects prepared once for many queries (a level's static geometry): a copy of the rects and
/// a grid over them. Query it with [`crate::Batch::over`]. For hitboxes that move, keep one
/// and [`rebuild`](Self::rebuild) it each frame: that reuses its memory.
#[derive(Clone, Debug, Default)]
pub struct RectSet {
    rects: Vec<Rect>,
    /// The invalid rects the last rebuild kept as stand-ins that never hit.
    skipped: Vec<InputError>,
    grid: Grid,
    /// Which contents these are: new with every rebuild (a GPU keeps the grid it built for an
    /// id until another comes; clones share it, and their contents).
    id: u64,
}

/// The next [`RectSet`] id.
static NEXT_SET: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RectSet {
    /// Validates `rects` and builds their grid.
    ///
    /// # Errors
    /// [`crate::Error::Input`] naming the first invalid rect.
    pub fn new(rects: &[Rect]) -> Result<Self> {
        let mut set = Self::default();
        set.rebuild(rects)?;
        Ok(set)
    }

    /// Replaces the rects and rebuilds the grid in the memory already held.
    ///
    /// # Errors
    /// [`crate::Error::Input`] naming the first invalid rect; the set is then empty.
    pub fn rebuild(&mut self, rects: &[Rect]) -> Result<()> {
        self.id = NEXT_SET.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.rects.clear();
        self.skipped.clear();
        if let Err(e) = validate::check_inputs(&[], rects) {
            self.grid.build(&[]);
            return Err(e.into());
        }
        self.rects.extend_from_slice(rects);
        self.grid.build(&self.rects);
        Ok(())
    }

    /// [`rebuild`](Self::rebuild), keeping every valid rect when some are invalid (a game's
    /// frame, where one bad hitbox must not empty the set): each invalid rect keeps its index
    /// but misses every segment in every query over the set. Returns them, each with its first
    /// problem ([`skipped`](Self::skipped) keeps them until the next rebuild).
    pub fn rebuild_skipping_invalid(&mut self, rects: &[Rect]) -> &[InputError] {
        if self.rebuild(rects).is_err() {
            self.id = NEXT_SET.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.rects.extend_from_slice(rects);
            for (i, r) in rects.iter().enumerate() {
                if let Err(e) = validate::check_rect(i, r) {
                    self.skipped.push(e);
                }
            }
            // A valid stand-in for each, within the valid rects' bounds, for the grid; queries
            // over the set never test it.
            let stand_in = validate::stand_in_rect(&self.rects, &self.skipped);
            for e in &self.skipped {
                self.rects[e.index] = stand_in;
            }
            self.grid.build(&self.rects);
        }
        &self.skipped
    }

    /// The invalid rects the last rebuild skipped
    /// ([`rebuild_skipping_invalid`](Self::rebuild_skipping_invalid)); they miss every segment.
    pub fn skipped(&self) -> &[InputError] {
        &self.skipped
    }

    /// The rects, each at its index; a rect skipped by
    /// [`rebuild_skipping_invalid`](Self::rebuild_skipping_invalid) is a valid stand-in there (a
    /// point at a valid rect's corner), which queries over the set never test, but which a batch
    /// made of these rects alone (`Batch::new`) would.
    pub fn rects(&self) -> &[Rect] {
        &self.rects
    }

    /// The grid's columns and rows.
    pub fn cells(&self) -> (u32, u32) {
        (self.grid.cols, self.grid.rows)
    }

    /// Rect entries the grid lists (a rect is listed once per cell it covers).
    pub fn entries(&self) -> usize {
        self.grid.entry_count()
    }

    pub(crate) fn grid(&self) -> &Grid {
        &self.grid
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}
