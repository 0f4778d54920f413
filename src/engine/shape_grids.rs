//! The CPU's grids over the last few calls' shapes, kept so that a call over the same shapes
//! (a CLI job's next chunk, a game's static level geometry) uses its grid again instead of
//! building it.

use crate::cpu::grid::Grid;
use crate::types::{Rect, Segment};

/// How many grids are kept: one per shape kind of a scene (`Targets`: circles, walls and
/// polygons), so that the static kinds of a frame are never built again.
const KEPT: usize = 3;

/// A grid over shapes' boxes (or along walls), and what it was built over.
#[derive(Default)]
struct ShapeGrid {
    grid: Grid,
    bounds: Vec<Rect>,
    /// The walls the grid lists along their lines, when it does ([`Grid::build_along`]).
    paths: Vec<Segment>,
}

impl ShapeGrid {
    /// Whether this is the grid over `bounds`, along `along` where given, byte for byte.
    fn is_over(&self, bounds: &[Rect], along: Option<&[Segment]>) -> bool {
        let bytes = bytemuck::cast_slice::<Rect, u8>;
        let wall_bytes = bytemuck::cast_slice::<Segment, u8>;
        self.grid.is_built()
            && bytes(&self.bounds) == bytes(bounds)
            && match along {
                Some(walls) => self.grid.along && wall_bytes(&self.paths) == wall_bytes(walls),
                None => !self.grid.along,
            }
    }
}

/// The kept grids, the most recently used first.
#[derive(Default)]
pub(super) struct ShapeGrids {
    grids: Vec<ShapeGrid>,
}

impl ShapeGrids {
    /// The grid over `bounds` (along `along`'s walls where given): a kept one over them, else
    /// one `build` builds in the memory of the least recently used.
    pub(super) fn over(
        &mut self,
        bounds: &[Rect],
        along: Option<&[Segment]>,
        build: impl FnOnce(&mut Grid),
    ) -> &mut Grid {
        let slot = match self.grids.iter().position(|g| g.is_over(bounds, along)) {
            Some(kept) => self.grids.remove(kept),
            None => {
                let mut slot = match self.grids.len() {
                    KEPT.. => self.grids.pop().unwrap_or_default(),
                    _ => ShapeGrid::default(),
                };
                build(&mut slot.grid);
                slot.bounds.clear();
                slot.bounds.extend_from_slice(bounds);
                slot.paths.clear();
                slot.paths.extend_from_slice(along.unwrap_or_default());
                slot
            }
        };
        self.grids.insert(0, slot);
        &mut self.grids[0].grid
    }
}
