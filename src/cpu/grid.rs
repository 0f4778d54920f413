//! The broad phase: a uniform grid over the rects, and the walk of a segment through it.
//!
//! - **Cells.** Column `j` holds the x values from `xs[j - 1]` (inclusive) to `xs[j]`
//!   (exclusive); column 0 starts at −∞ and the last column ends at +∞, so every value has a
//!   column. The boundaries are stored f32 values and a value's column is found by comparing it
//!   with them ([`cell_of`], after an arithmetic guess that comparisons correct), so every
//!   machine puts a value in the same cell. Rows likewise, with `ys`.
//! - **Binning.** Rect `r` is listed in every cell of columns `col_of(min_x)..=col_of(max_x)` and
//!   rows `row_of(min_y)..=row_of(max_y)`, in ascending rect order within a cell.
//! - **The walk.** A segment visits the rows between its ends' rows, along its motion (from its
//!   start's row to its end's, [`walk_row`]), and in each row the columns its points in that
//!   row can have ([`row_columns`]), from its start's side ([`walk_col`]); those columns come
//!   from the x of the segment's line at the row's two bounds, computed in f32 and then widened by
//!   [`WALK_MARGIN_RELATIVE`] × (|x0| + |x1|) + [`WALK_MARGIN_ABSOLUTE`] before their columns are
//!   looked up: the widening is thousands of times the largest error f32 arithmetic can make
//!   there (a few ulps of |x0| + |x1| even with a 2.5-ulp division, fused multiply-adds or
//!   flushed subnormals), so the columns always include every column the segment touches in the
//!   row, and the walk never skips a cell a common point of the segment and a rect lies in. The
//!   range is then clamped to the segment's own columns, which is exact.
//! - **Rows in t order.** Every point of the segment in a row comes before every point in the
//!   next, which lets a first-hit search stop at a row boundary ([`Step::Row`]).
//! - **Each pair once.** A rect that spans several visited cells is tested in the first of them
//!   in walk order only ([`is_first_visit`]). The walk's column ranges are made monotone along
//!   the walk (each bound no further back than the previous row's), which keeps them
//!   conservative and makes the rows where a rect's columns are met one run, so "first" is a
//!   test of the previous row alone.
//! - **What prunes.** A pair is dropped only when the rect is in no visited cell (then no point
//!   of the segment is in the rect: a miss) or the segment's box and the rect do not overlap
//!   (the reference's first rule). Every other pair runs the reference, so results are the brute
//!   force's, bit for bit.
//! - **Bound.** A segment whose walk would scan more entries than there are rects, or cross more
//!   rows than [`ROWS_PER_RECT_SCAN`] allows, runs against every rect instead (the brute force):
//!   the grid never costs a segment much more than the brute force would.
//!
//! Written in the shaders' style (flat arrays, no allocation, f32 and u32 arithmetic) so that a
//! WGSL twin can mirror it line for line; docs/broad_phase.md gives the design.

use crate::cpu::segment_rect::order_key;
use crate::types::{Rect, Segment};

/// The most columns, and the most rows.
pub const MAX_CELLS_PER_AXIS: u32 = 4096;
/// A grid lists at most this many entries per rect on average; a finer grid is coarsened.
pub const MAX_ENTRIES_PER_RECT: u64 = 32;
/// Cells are about this many mean rect extents wide (tuned on the bullet-hell scenes).
pub const CELL_PER_EXTENT: f64 = 0.5;
/// The walk's widening, relative to |x0| + |x1| (2^-16: about 128 ulps).
pub const WALK_MARGIN_RELATIVE: f32 = 1.0 / 65536.0;
/// The walk's widening, absolute (2^-100, a normal f32 far above flushed subnormals).
pub const WALK_MARGIN_ABSOLUTE: f32 = 7.888_609e-31;
/// |y1 − y0| below this takes every column of the segment in every row (no division by a
/// value a GPU may flush).
pub const WALK_MIN_SPAN: f32 = 7.888_609e-31;
/// A row of the walk costs about as much as testing this many rects.
pub const ROWS_PER_RECT_SCAN: u32 = 32;

/// The cells a rect is listed in: columns `col_min..=col_max`, rows `row_min..=row_max`.
/// Mirrors WGSL `CellSpan` (the shapes' grid goes up to the GPU as the host built it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct CellSpan {
    pub col_min: u32,
    pub col_max: u32,
    pub row_min: u32,
    pub row_max: u32,
}

/// A rect's cells in 16 bits each ([`MAX_CELLS_PER_AXIS`] fits): `[col_min, col_max,
/// row_min, row_max]`, as [`CellSpan`] holds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntrySpan(pub [u16; 4]);

impl EntrySpan {
    pub(crate) fn of(span: &CellSpan) -> Self {
        Self([span.col_min, span.col_max, span.row_min, span.row_max].map(|v| v as u16))
    }

    #[inline(always)]
    pub fn span(self) -> CellSpan {
        let [col_min, col_max, row_min, row_max] = self.0.map(u32::from);
        CellSpan {
            col_min,
            col_max,
            row_min,
            row_max,
        }
    }
}

const _: () = assert!(MAX_CELLS_PER_AXIS <= u16::MAX as u32 + 1);

/// A uniform grid over a set of rects (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Grid {
    pub cols: u32,
    pub rows: u32,
    /// The columns: `cols - 1` boundaries, non-decreasing.
    pub xs: Axis,
    /// The rows: `rows - 1` boundaries, non-decreasing.
    pub ys: Axis,
    /// Cell `row * cols + col` lists `entries[cell_start[cell]..cell_start[cell + 1]]`.
    pub cell_start: Vec<u32>,
    /// Rect indices, ascending within each cell.
    pub entries: Vec<u32>,
    /// Each entry's rect, for a streaming box test (along walls, none, until
    /// [`Grid::list_entry_boxes`] lists each entry's wall's box for the GPU's walk).
    pub boxes: Vec<Rect>,
    /// Each rect's cells.
    pub spans: Vec<CellSpan>,
    /// Each entry's rect's cells, packed ([`EntrySpan`]), or none: after
    /// [`Grid::list_entry_spans`], the walk reads them beside the boxes, where `spans[rect]`
    /// is a read from anywhere in memory per candidate. Worth it where a walk tests many
    /// candidates (shapes: no t = 0 ceiling ends walls' walks); rects' walks mostly end in
    /// their first cell, and listing them costs more than it saves there.
    pub entry_spans: Vec<EntrySpan>,
    /// The entries the cells list (or will, after [`Grid::plan`] alone).
    pub planned_entries: u64,
    /// Whether the cells list walls along their lines ([`Grid::build_along`]) rather than
    /// rects over their boxes: then a walk meets a wall in every visited cell that lists it
    /// (no each-pair-once rule: first hits only, through [`walk_cells`], or the GPU's walk),
    /// `spans` and `entry_spans` are empty, and so is `boxes` until
    /// [`Grid::list_entry_boxes`].
    pub along: bool,
}

/// The cells of one axis: `bounds` (non-decreasing) split it, and `origin` and `scale` (cells
/// per unit) give a first guess of a value's cell.
#[derive(Clone, Debug, Default)]
pub struct Axis {
    pub bounds: Vec<f32>,
    pub cells: u32,
    pub origin: f32,
    pub scale: f32,
}

/// The cell a value lies in: the largest `j < cells` with `j == 0` or `bounds[j - 1] <= v`.
/// The guess from `origin` and `scale` is usually right; comparisons of order keys with the
/// bounds then move it to the exact cell, so the answer never depends on the arithmetic.
#[inline(always)]
pub fn cell_of(axis: &Axis, v: f32) -> u32 {
    let k = order_key(v);
    // Any guess will do (even NaN or infinite); in range it is rarely off by one.
    let guess = (v - axis.origin) * axis.scale;
    let mut j = if guess >= 1.0 {
        guess.min((axis.cells - 1) as f32) as u32
    } else {
        0
    };
    while j > 0 && order_key(axis.bounds[(j - 1) as usize]) > k {
        j -= 1;
    }
    while j + 1 < axis.cells && order_key(axis.bounds[j as usize]) <= k {
        j += 1;
    }
    j
}

/// [`cell_of`] for a value `v` at or above (by order key) one that lies in cell `low`: most
/// often cell `low` itself, told by one comparison with the next boundary (a short segment's
/// far end, in [`walk_of`]).
#[inline(always)]
pub fn cell_at_or_above(axis: &Axis, v: f32, low: u32) -> u32 {
    if low + 1 >= axis.cells || order_key(axis.bounds[low as usize]) > order_key(v) {
        low
    } else {
        cell_of(axis, v)
    }
}

/// The smaller of two values by order key (one of them, exactly).
#[inline(always)]
fn key_min(a: f32, b: f32) -> f32 {
    if order_key(b) < order_key(a) { b } else { a }
}

/// The larger of two values by order key (one of them, exactly).
#[inline(always)]
fn key_max(a: f32, b: f32) -> f32 {
    if order_key(b) > order_key(a) { b } else { a }
}

/// The x of the segment's line at `y` (an estimate: see [`row_columns`] for its error).
#[inline(always)]
fn x_at(s: &Segment, y: f32) -> f32 {
    let t = (y - s.y0) / (s.y1 - s.y0);
    s.x0 + t * (s.x1 - s.x0)
}

/// Which cells a segment crosses, walked along its motion: rows from its start's row to its
/// end's, and in each row the columns from the start's side.
#[derive(Clone, Copy, Debug)]
pub struct Walk {
    /// The lowest and highest row.
    pub row_min: u32,
    pub row_max: u32,
    /// The columns of the segment's box.
    pub col_min: u32,
    pub col_max: u32,
    /// Whether the column ranges are to be interpolated (the segment crosses rows slanted).
    pub slanted: bool,
    /// Whether the walk goes up the rows (y1 >= y0), and right along the columns (x1 >= x0).
    pub up: bool,
    pub right: bool,
}

/// The rows and the columns of a segment's box, and its directions.
#[inline(always)]
pub fn walk_of(grid: &Grid, s: &Segment) -> Walk {
    let row_min = cell_of(&grid.ys, key_min(s.y0, s.y1));
    let row_max = cell_at_or_above(&grid.ys, key_max(s.y0, s.y1), row_min);
    let col_min = cell_of(&grid.xs, key_min(s.x0, s.x1));
    let col_max = cell_at_or_above(&grid.xs, key_max(s.x0, s.x1), col_min);
    let span = (s.y1 - s.y0).abs();
    Walk {
        row_min,
        row_max,
        col_min,
        col_max,
        slanted: row_min != row_max && col_min != col_max && span >= WALK_MIN_SPAN,
        up: order_key(s.y1) >= order_key(s.y0),
        right: order_key(s.x1) >= order_key(s.x0),
    }
}

/// The `step`-th row of the walk.
#[inline(always)]
pub fn walk_row(walk: &Walk, step: u32) -> u32 {
    if walk.up {
        walk.row_min + step
    } else {
        walk.row_max - step
    }
}

/// The `step`-th column of a row's range.
#[inline(always)]
pub fn walk_col(walk: &Walk, range: (u32, u32), step: u32) -> u32 {
    if walk.right {
        range.0 + step
    } else {
        range.1 - step
    }
}

/// The columns the segment visits in `row`: those of its line's x at the row's bounds (the
/// segment's own y at its lowest and highest row), widened (module docs), clamped to the
/// segment's columns, and made monotone along the walk with the previous row's range `prev`
/// (ignored on the first row).
#[inline(always)]
pub fn row_columns(
    grid: &Grid,
    s: &Segment,
    walk: &Walk,
    row: u32,
    first: bool,
    prev: (u32, u32),
) -> (u32, u32) {
    if !walk.slanted {
        return (walk.col_min, walk.col_max);
    }
    let y_low = if row == walk.row_min {
        key_min(s.y0, s.y1)
    } else {
        grid.ys.bounds[(row - 1) as usize]
    };
    let y_high = if row == walk.row_max {
        key_max(s.y0, s.y1)
    } else {
        grid.ys.bounds[row as usize]
    };
    let xa = x_at(s, y_low);
    let xb = x_at(s, y_high);
    let margin = (s.x0.abs() + s.x1.abs()) * WALK_MARGIN_RELATIVE + WALK_MARGIN_ABSOLUTE;
    let lo = cell_of(&grid.xs, key_min(xa, xb) - margin).max(walk.col_min);
    let hi = cell_of(&grid.xs, key_max(xa, xb) + margin).min(walk.col_max);
    if first {
        return (lo, hi);
    }
    // Along the motion, x only moves one way: each bound no further back than the previous
    // row's, which was itself conservative.
    if walk.right {
        (lo.max(prev.0), hi.max(prev.1))
    } else {
        (lo.min(prev.0), hi.min(prev.1))
    }
}

/// Whether cell (`col`, `row`) is the first cell of the walk that lists a rect with cells
/// `span`: the first of the rect's columns in this row's range (in the walk's direction), on
/// the first row whose range meets the rect's columns. `first` says whether `row` is the walk's
/// first; `prev` is the previous row's range.
#[inline(always)]
pub fn is_first_visit(
    span: &CellSpan,
    walk: &Walk,
    col: u32,
    row: u32,
    range: (u32, u32),
    first: bool,
    prev: (u32, u32),
) -> bool {
    let first_col = if walk.right {
        range.0.max(span.col_min)
    } else {
        range.1.min(span.col_max)
    };
    if col != first_col {
        return false;
    }
    let rect_first_row = if walk.up { span.row_min } else { span.row_max };
    first || row == rect_first_row || prev.0 > span.col_max || prev.1 < span.col_min
}

/// Entries the walk would scan, stopping early once past `limit`.
#[inline(always)]
pub fn walk_entries(grid: &Grid, s: &Segment, walk: &Walk, limit: u64) -> u64 {
    let mut total = 0u64;
    let mut prev = (0, 0);
    for step in 0..=(walk.row_max - walk.row_min) {
        let row = walk_row(walk, step);
        let range = row_columns(grid, s, walk, row, step == 0, prev);
        let first = row * grid.cols;
        total += (grid.cell_start[(first + range.1 + 1) as usize]
            - grid.cell_start[(first + range.0) as usize]) as u64;
        if total > limit {
            break;
        }
        prev = range;
    }
    total
}

/// Whether the grid would cost segment `s` more than testing every rect: then the caller runs
/// the brute force for it.
#[inline(always)]
pub fn prefers_brute_force(grid: &Grid, s: &Segment, walk: &Walk, rects: usize) -> bool {
    let rows = (walk.row_max - walk.row_min + 1) as u64;
    if rows * ROWS_PER_RECT_SCAN as u64 > rects as u64 {
        return true;
    }
    // The entries of the segment's box bound the walk's: when they are few, the walk's own
    // count is not needed.
    box_entries(grid, walk, rects as u64) > rects as u64
        && walk_entries(grid, s, walk, rects as u64) > rects as u64
}

/// Entries the cells of the walk's box list (every cell of its rows and columns; a rect once
/// per cell), stopping early once past `limit`.
#[inline(always)]
pub fn box_entries(grid: &Grid, walk: &Walk, limit: u64) -> u64 {
    let mut in_box = 0u64;
    for row in walk.row_min..=walk.row_max {
        let first = row * grid.cols;
        in_box += (grid.cell_start[(first + walk.col_max + 1) as usize]
            - grid.cell_start[(first + walk.col_min) as usize]) as u64;
        if in_box > limit {
            break;
        }
    }
    in_box
}

/// A rect's cells.
#[inline(always)]
pub fn rect_span(grid: &Grid, r: &Rect) -> CellSpan {
    CellSpan {
        col_min: cell_of(&grid.xs, r.min_x),
        col_max: cell_of(&grid.xs, r.max_x),
        row_min: cell_of(&grid.ys, r.min_y),
        row_max: cell_of(&grid.ys, r.max_y),
    }
}

/// What [`visit_cells`] hands its visitor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// A rect to test, and its entry in the grid (its place in `entries`, `boxes`...).
    Rect(u32, u32),
    /// The walk is about to enter a new row, across the line y = this bound, which the segment
    /// crosses at some t > 0. Every rect not tested yet has no point before that crossing.
    Row(f32),
    /// The walk is about to enter the next column of its row, across the line x = `x`, which
    /// the segment reaches at some t >= 0. Every rect not tested yet has no point before that
    /// crossing, nor before the segment's crossing of y = `next_row` (the next row's bound,
    /// `None` in the walk's last row): each of its points lies in a later column of this row
    /// or in a later row.
    Col { x: f32, next_row: Option<f32> },
}

/// How [`visit_cells`] goes on after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The next entry of the cell (after a rect), the new row (after a row).
    Entry,
    /// The next cell (every later entry of this cell has a higher rect index).
    Cell,
    /// Nothing more (after a row: no rect from here on can matter).
    Stop,
}

/// A cell of a walk, as [`walk_cells`] hands it over: its index (`row * cols + col`), its
/// column and row, its row's column range, whether it is in the walk's first row and first in
/// its row, and the previous row's range (what [`is_first_visit`] reads).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellAt {
    pub cell: u32,
    pub col: u32,
    pub row: u32,
    pub range: (u32, u32),
    pub first_row: bool,
    pub first_col: bool,
    pub prev: (u32, u32),
}

/// What [`walk_cells`] hands its visitor: a boundary ([`Step::Row`] or [`Step::Col`]) or a
/// cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellStep {
    Boundary(Step),
    Cell(CellAt),
}

/// What [`walk_cells`] hands its steps to: a closure over [`CellStep`]s, or a type whose
/// methods are inlined where the walk calls them (the rects' walk: a closure called from the
/// walk's three places is not, and cost rects' first hits 5 % more instructions).
pub trait CellVisitor {
    /// A boundary about to be crossed ([`Step::Row`] or [`Step::Col`]).
    fn boundary(&mut self, step: Step) -> Next;
    /// A cell of the walk.
    fn cell(&mut self, at: CellAt) -> Next;
}

impl<F: FnMut(CellStep) -> Next> CellVisitor for F {
    #[inline(always)]
    fn boundary(&mut self, step: Step) -> Next {
        self(CellStep::Boundary(step))
    }

    #[inline(always)]
    fn cell(&mut self, at: CellAt) -> Next {
        self(CellStep::Cell(at))
    }
}

/// Calls `visit` for each cell of `s`'s walk through `grid` in walk order (rows along the
/// motion, each row's columns from the start's side), and for each boundary crossed between
/// them, before the cell past it: `Step::Row(y)` before each row after the first,
/// `Step::Col { .. }` before each column after the first of a row. [`Next::Stop`] from any
/// step ends the walk.
#[inline(always)]
pub fn walk_cells(grid: &Grid, s: &Segment, walk: &Walk, mut visit: impl CellVisitor) {
    // Never for valid values; values changed after validation (NaN) may give inverted ranges,
    // whose walk is skipped rather than run out of the grid.
    if walk.row_min > walk.row_max || walk.col_min > walk.col_max {
        return;
    }
    let mut prev = (0, 0);
    for step in 0..=(walk.row_max - walk.row_min) {
        let row = walk_row(walk, step);
        if step > 0 {
            // The boundary the segment crosses into this row.
            let bound = if walk.up {
                grid.ys.bounds[(row - 1) as usize]
            } else {
                grid.ys.bounds[row as usize]
            };
            if visit.boundary(Step::Row(bound)) == Next::Stop {
                return;
            }
        }
        let range = row_columns(grid, s, walk, row, step == 0, prev);
        if range.0 > range.1 || range.1 >= grid.cols {
            return;
        }
        let next_row = (step < walk.row_max - walk.row_min).then(|| {
            let next = walk_row(walk, step + 1);
            if walk.up {
                grid.ys.bounds[(next - 1) as usize]
            } else {
                grid.ys.bounds[next as usize]
            }
        });
        for col_step in 0..=(range.1 - range.0) {
            let col = walk_col(walk, range, col_step);
            if col_step > 0 {
                // The boundary the segment crosses into this column.
                let x = if walk.right {
                    grid.xs.bounds[(col - 1) as usize]
                } else {
                    grid.xs.bounds[col as usize]
                };
                if visit.boundary(Step::Col { x, next_row }) == Next::Stop {
                    return;
                }
            }
            let at = CellAt {
                cell: row * grid.cols + col,
                col,
                row,
                range,
                first_row: step == 0,
                first_col: col_step == 0,
                prev,
            };
            if visit.cell(at) == Next::Stop {
                return;
            }
        }
        prev = range;
    }
}

/// Calls `visit(Step::Rect(rect, entry))` once for each rect listed in a cell of the walk whose box
/// overlaps the segment's box, cell by cell in walk order ([`walk_cells`]), each cell's rects
/// in ascending order, and `visit(Step::Row(y))` before each row after the first (likewise
/// `Step::Col`). A cell's entries above `ceiling` (which `visit` may lower) are skipped. With
/// `ceiling_ends_walk`, once the first
/// cell (the start point's) is done with a ceiling set, the walk ends: for rects a ceiling
/// means a hit at t = 0 exactly, and every rect such a hit can be on contains the start point,
/// so it is listed in that cell. Shapes compare rounded t, and a t that rounds to 0 can belong
/// to a shape that does not hold the start point (a root below 2^-150 on a long segment), in
/// another cell: their ceiling only skips entries.
///
/// Rows come in the order of t: every point of the segment in a row comes before every point in
/// the next. So when a rect has not been tested by the time a row starts, it has no point before
/// that row's boundary (else the conservative walk would have listed it in an earlier visited
/// cell), and a first-hit search whose best hit comes strictly before the boundary is done.
#[inline(always)]
pub fn visit_cells(
    grid: &Grid,
    s: &Segment,
    walk: &Walk,
    ceiling: &std::cell::Cell<u32>,
    ceiling_ends_walk: bool,
    visit: impl FnMut(Step) -> Next,
) {
    debug_assert!(
        !grid.along,
        "a grid along walls lists a wall in several cells"
    );
    let entries = Entries {
        grid,
        walk,
        ceiling,
        ceiling_ends_walk,
        keys: [
            order_key(key_min(s.x0, s.x1)),
            order_key(key_max(s.x0, s.x1)),
            order_key(key_min(s.y0, s.y1)),
            order_key(key_max(s.y0, s.y1)),
        ],
        visit,
    };
    walk_cells(grid, s, walk, entries);
}

/// [`visit_cells`]' visitor: each cell's entries, with the segment's box as order keys (min x,
/// max x, min y, max y).
struct Entries<'a, V> {
    grid: &'a Grid,
    walk: &'a Walk,
    ceiling: &'a std::cell::Cell<u32>,
    ceiling_ends_walk: bool,
    keys: [f32; 4],
    visit: V,
}

impl<V: FnMut(Step) -> Next> CellVisitor for Entries<'_, V> {
    #[inline(always)]
    fn boundary(&mut self, step: Step) -> Next {
        (self.visit)(step)
    }

    #[inline(always)]
    fn cell(&mut self, at: CellAt) -> Next {
        let (grid, [min_x, max_x, min_y, max_y]) = (self.grid, self.keys);
        let cell = at.cell as usize;
        let (start, end) = (grid.cell_start[cell], grid.cell_start[cell + 1]);
        for e in start as usize..end as usize {
            let rect = grid.entries[e];
            if rect > self.ceiling.get() {
                break;
            }
            let b = &grid.boxes[e];
            // The reference's first rule: boxes apart is a miss.
            if min_x > order_key(b.max_x)
                || order_key(b.min_x) > max_x
                || min_y > order_key(b.max_y)
                || order_key(b.min_y) > max_y
            {
                continue;
            }
            let span = match grid.entry_spans.get(e) {
                Some(packed) => packed.span(),
                None => grid.spans[rect as usize],
            };
            if !is_first_visit(
                &span,
                self.walk,
                at.col,
                at.row,
                at.range,
                at.first_row,
                at.prev,
            ) {
                continue;
            }
            if (self.visit)(Step::Rect(rect, e as u32)) == Next::Cell {
                break;
            }
        }
        // The first cell holds the start point, so it lists every rect a hit at t = 0 can be
        // on: past a t = 0 hit (a ceiling), nothing later can win.
        let ceiling_set = self.ceiling.get() != u32::MAX;
        if self.ceiling_ends_walk && at.first_row && at.first_col && ceiling_set {
            return Next::Stop;
        }
        Next::Entry
    }
}

impl Grid {
    /// A grid over `rects` (valid rects), reusing this grid's memory.
    pub fn build(&mut self, rects: &[Rect]) {
        self.plan(rects);
        self.count_cells();
        self.fill_entries(rects);
    }

    /// Sizes the grid for `rects` (valid rects): its cells and bounds and every rect's span,
    /// but no cells' lists (`cell_start` and `entries` are left empty; [`Grid::is_built`] is
    /// false). Returns the entries the lists will hold. The GPU builds the lists from this.
    pub fn plan(&mut self, rects: &[Rect]) -> u64 {
        let (mut cols, mut rows, bounds) = size_for(rects);
        self.along = false;
        self.cell_start.clear();
        self.entries.clear();
        self.boxes.clear();
        self.entry_spans.clear();
        loop {
            self.fill_bounds(cols, rows, &bounds);
            let entries = self.fill_spans(rects);
            let limit = MAX_ENTRIES_PER_RECT * rects.len() as u64;
            // Entries are indexed by u32; a grid too fine for them is coarsened.
            if (entries <= limit && entries < u32::MAX as u64) || (cols == 1 && rows == 1) {
                self.planned_entries = entries;
                return entries;
            }
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        }
    }

    /// Whether the cells list their rects (after [`Grid::build`], not [`Grid::plan`] alone).
    pub fn is_built(&self) -> bool {
        self.cell_start.len() == (self.cols * self.rows) as usize + 1
    }

    /// Boundaries splitting `bounds` (min_x, max_x, min_y, max_y) evenly.
    pub(crate) fn fill_bounds(&mut self, cols: u32, rows: u32, bounds: &[f64; 4]) {
        self.cols = cols;
        self.rows = rows;
        let even = |lo: f64, hi: f64, n: u32, axis: &mut Axis| {
            axis.bounds.clear();
            axis.bounds
                .extend((1..n).map(|j| (lo + (hi - lo) * j as f64 / n as f64) as f32));
            axis.cells = n;
            axis.origin = lo as f32;
            axis.scale = if hi > lo {
                (n as f64 / (hi - lo)).min(f32::MAX as f64) as f32
            } else {
                0.0
            };
        };
        even(bounds[0], bounds[1], cols, &mut self.xs);
        even(bounds[2], bounds[3], rows, &mut self.ys);
    }

    /// Computes every rect's span; returns the entries they make.
    fn fill_spans(&mut self, rects: &[Rect]) -> u64 {
        self.spans.clear();
        let mut total = 0u64;
        for r in rects {
            let span = rect_span(self, r);
            self.spans.push(span);
            // Empty when min > max (a rect changed after validation).
            total += (span.col_max + 1).saturating_sub(span.col_min) as u64
                * (span.row_max + 1).saturating_sub(span.row_min) as u64;
        }
        total
    }

    /// Counts the cells' entries into `cell_start` (from the spans).
    fn count_cells(&mut self) {
        let cells = (self.cols * self.rows) as usize;
        self.cell_start.clear();
        self.cell_start.resize(cells + 1, 0);
        for span in &self.spans {
            for row in span_rows(span) {
                let cells = row_cells((row * self.cols) as usize, span);
                // Cell `c` counts in `cell_start[c + 1]`.
                for count in &mut self.cell_start[cells.start + 1..cells.end + 1] {
                    *count += 1;
                }
            }
        }
    }

    /// Turns the cells' counts (in `cell_start[1..]`) into their starts, and sizes the entries
    /// and their boxes for them; returns the entries.
    pub(crate) fn size_lists(&mut self) -> usize {
        for i in 1..self.cell_start.len() {
            self.cell_start[i] += self.cell_start[i - 1];
        }
        let total = *self.cell_start.last().unwrap_or(&0) as usize;
        // Zeroed in full (`plan` cleared them) although the fill writes every entry: the
        // zeroing's streaming writes bring the lines in ahead of the fill's scattered ones. A
        // build that kept the last frame's values instead measured slower (0.68 against 0.51
        // ms for 5,000 boxes).
        self.entries.resize(total, 0);
        self.boxes.resize(total, Rect::new(0.0, 0.0, 0.0, 0.0));
        total
    }

    /// Lists every rect in its cells, in rect order (`cell_start` holds the counts).
    fn fill_entries(&mut self, rects: &[Rect]) {
        self.size_lists();
        let mut next: Vec<u32> = self.cell_start[..self.cell_start.len() - 1].to_vec();
        for (rect, span) in self.spans.iter().enumerate() {
            for row in span_rows(span) {
                for slot in &mut next[row_cells((row * self.cols) as usize, span)] {
                    let at = *slot as usize;
                    *slot += 1;
                    self.entries[at] = rect as u32;
                    self.boxes[at] = rects[rect];
                }
            }
        }
    }

    /// Lists each entry's span beside it ([`Grid::entry_spans`]); after [`Grid::build`].
    pub fn list_entry_spans(&mut self) {
        let spans = &self.spans;
        self.entry_spans.clear();
        self.entry_spans.extend(
            self.entries
                .iter()
                .map(|&rect| EntrySpan::of(&spans[rect as usize])),
        );
    }

    /// Lists each entry's shape's box beside it (`boxes`), from `bounds`, each shape's box:
    /// what a grid along walls ([`Grid::build_along`]) lists for the GPU's walk, which tests
    /// the boxes as it streams the entries. Nothing where they are listed already.
    pub fn list_entry_boxes(&mut self, bounds: &[Rect]) {
        if self.boxes.len() == self.entries.len() {
            return;
        }
        self.boxes.clear();
        self.boxes
            .extend(self.entries.iter().map(|&shape| bounds[shape as usize]));
    }

    /// Entries listed in all.
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }
}

/// A span's rows (none when it is empty: a rect changed after validation). Exclusive ranges:
/// the build's loops over `..=` ranges cost it a third of its time.
#[inline(always)]
fn span_rows(span: &CellSpan) -> std::ops::Range<u32> {
    span.row_min..span.row_max + 1
}

/// The cells of a row a span lists its rect in, the row's first cell at `first`: a run of
/// cell indices (empty when the span is).
#[inline(always)]
pub(crate) fn row_cells(first: usize, span: &CellSpan) -> std::ops::Range<usize> {
    let end = first + span.col_max as usize + 1;
    (first + span.col_min as usize).min(end)..end
}

/// The grid's size and extent for `rects`: cells about [`CELL_PER_EXTENT`] mean rect extents on
/// each axis, no smaller than the area per rect allows, at most [`MAX_CELLS_PER_AXIS`] a side.
fn size_for(rects: &[Rect]) -> (u32, u32, [f64; 4]) {
    if rects.is_empty() {
        return (1, 1, [0.0; 4]);
    }
    let mut b = [f64::MAX, f64::MIN, f64::MAX, f64::MIN];
    let (mut sum_w, mut sum_h) = (0.0f64, 0.0f64);
    for r in rects {
        b[0] = b[0].min(r.min_x as f64);
        b[1] = b[1].max(r.max_x as f64);
        b[2] = b[2].min(r.min_y as f64);
        b[3] = b[3].max(r.max_y as f64);
        sum_w += (r.max_x as f64) - (r.min_x as f64);
        sum_h += (r.max_y as f64) - (r.min_y as f64);
    }
    let m = rects.len() as f64;
    let (width, height) = (b[1] - b[0], b[3] - b[2]);
    // One rect per cell on average, at the finest.
    let density = (width.max(f64::MIN_POSITIVE) * height.max(f64::MIN_POSITIVE) / m).sqrt();
    // NaN and `max(1)`: rects changed after validation (infinite, NaN) make
    // a one-cell axis, never none.
    let cells = |extent: f64, mean: f64| -> u32 {
        if extent.is_nan() || extent <= 0.0 {
            return 1;
        }
        let cell = (mean * CELL_PER_EXTENT).max(density.min(extent));
        ((extent / cell).ceil().clamp(1.0, MAX_CELLS_PER_AXIS as f64) as u32).max(1)
    };
    (cells(width, sum_w / m), cells(height, sum_h / m), b)
}
