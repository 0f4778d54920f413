//! The cell of the grid a segment starts in, for the first hits' fast paths: a segment that
//! starts inside a target is answered from that cell's list alone (rects: `rects::start_rect`,
//! shapes: `shapes::start_shape`), most bullets of a crowded frame.

use crate::cpu::grid::{Grid, cell_of};
use crate::cpu::segment_rect::order_key;
use crate::types::{Rect, Segment};
use std::ops::Range;

/// The entries of a cell of the grid: `start..end` of its `entries` and `boxes`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CellEntries {
    start: u32,
    end: u32,
}

impl CellEntries {
    pub(super) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Segments whose start cells a first-hit query looks up, and asks the memory system for the
/// first of their boxes, before it answers any of them ([`fetch_ahead`]).
pub(super) const AHEAD: usize = 32;

/// The entries of the cell segment `s` starts in: every target whose box holds the start is
/// listed there, in ascending order.
#[inline(always)]
pub(super) fn start_entries(grid: &Grid, s: &Segment) -> CellEntries {
    let (x, y) = (order_key(s.x0), order_key(s.y0));
    let cell = (cell_of(&grid.ys, y) * grid.cols + cell_of(&grid.xs, x)) as usize;
    CellEntries {
        start: grid.cell_start[cell],
        end: grid.cell_start[cell + 1],
    }
}

/// Whether closed box `b` holds the start of `s`, by order keys (as the reference's slabs).
/// Without short circuits: one branch per entry scanned, rarely taken until the last.
#[inline(always)]
pub(super) fn holds_start(b: &Rect, s: &Segment) -> bool {
    let (x, y) = (order_key(s.x0), order_key(s.y0));
    (order_key(b.min_x) <= x)
        & (x <= order_key(b.max_x))
        & (order_key(b.min_y) <= y)
        & (y <= order_key(b.max_y))
}

/// A hint that the first of `entries`' boxes and indices will soon be read: a bullet's start
/// cell is anywhere in the grid, whose lists outgrow the caches, and a lookup that waits for
/// each cell's boxes in turn cost the rects' fast path most of its time. A prefetch changes no
/// answer.
#[inline(always)]
pub(super) fn fetch_ahead(grid: &Grid, entries: CellEntries) {
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (grid, entries);
    #[cfg(target_arch = "x86_64")]
    if let (Some(b), Some(e)) = (
        grid.boxes.get(entries.start as usize),
        grid.entries.get(entries.start as usize),
    ) {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch of an address inside a live allocation reads nothing the program
        // sees and cannot fault.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(b).cast());
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(e).cast());
        }
    }
}
