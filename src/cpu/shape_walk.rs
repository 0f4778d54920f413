//! CPU mirror of `shaders/shape_walk.wgsl`: a segment's candidates through the grid over
//! shapes' boxes, one at a time, each once, as the GPU lists them before its exact path runs
//! over the list (walls' and circles' queries, `shaders/shape_grid.wgsl`; polygons' edges,
//! `shaders/polygon_grid.wgsl`). Same names and the same branch order (the drift test,
//! tests/shader.rs, holds them); the GPU's passes over the list are the dense passes' hooks,
//! mirrored by each shape's folder. The CPU's own queries walk the grid through
//! [`super::grid::walk_cells`]; this is the executable form of the GPU's walk, which tests
//! check against every shape the segment touches.

use super::arithmetic::{F32Arithmetic, Ieee};
use super::grid::{
    Grid, Walk, is_first_visit, prefers_brute_force, row_columns, walk_col, walk_of, walk_row,
};
use super::segment_rect::order_key;
use crate::types::{Rect, Segment};

/// A query's walk through the grid, one candidate at a time: the rows and columns of
/// [`walk_of`] and [`row_columns`], the cell it is in and its next entry; or every shape in
/// turn when the grid would cost the query more ([`prefers_brute_force`]).
#[derive(Clone, Copy, Debug)]
pub struct Candidates {
    walk: Walk,
    brute: bool,
    /// The row's step along the walk, its columns, the previous row's, and the column's step.
    step: u32,
    range: (u32, u32),
    prev: (u32, u32),
    col_step: u32,
    /// The cell's next entry and its end (the brute force: the next shape, and the count).
    next: u32,
    end: u32,
}

/// Whether segment `s`'s box and box `b` are apart (`boxes_apart`, shaders/shape_passes.wgsl).
fn boxes_apart(s: &Segment, b: &Rect) -> bool {
    s.x0.max(s.x1) < b.min_x
        || b.max_x < s.x0.min(s.x1)
        || s.y0.max(s.y1) < b.min_y
        || b.max_y < s.y0.min(s.y1)
}

/// Points the walk at the entries of the cell it is in.
fn enter_cell(grid: &Grid, c: &mut Candidates) {
    let cell = walk_row(&c.walk, c.step) * grid.cols + walk_col(&c.walk, c.range, c.col_step);
    c.next = grid.cell_start[cell as usize];
    c.end = grid.cell_start[cell as usize + 1];
}

/// Segment `s`'s walk through `grid` (over `shapes` shapes), in its first cell (or at its first
/// shape).
pub fn candidates_of(grid: &Grid, s: &Segment, shapes: usize) -> Candidates {
    let walk = walk_of(grid, s);
    let mut c = Candidates {
        walk,
        brute: false,
        step: 0,
        range: (0, 0),
        prev: (0, 0),
        col_step: 0,
        next: 0,
        end: 0,
    };
    if prefers_brute_force(grid, s, &walk, shapes) {
        c.brute = true;
        c.end = shapes as u32;
        return c;
    }
    c.range = row_columns(grid, s, &walk, walk_row(&walk, 0), true, c.prev);
    enter_cell(grid, &mut c);
    c
}

/// Moves the walk to its next cell: the row's next column, else the next row's first; false
/// past the walk's last cell.
fn next_cell(grid: &Grid, s: &Segment, c: &mut Candidates) -> bool {
    if c.col_step < c.range.1 - c.range.0 {
        c.col_step += 1;
    } else {
        if c.step >= c.walk.row_max - c.walk.row_min {
            return false;
        }
        c.prev = c.range;
        c.step += 1;
        c.col_step = 0;
        c.range = row_columns(grid, s, &c.walk, walk_row(&c.walk, c.step), false, c.prev);
    }
    enter_cell(grid, c);
    true
}

/// The constants of the walk's times: the one source for this mirror and the shader
/// (overrides of the same names; the range as the bits of its ends).
///
/// With every value 0 or within [`TIME_SMALLEST`, `TIME_LARGEST`], a difference of two is 0
/// or a multiple of 2^-63 at least that, and below 2^31; so a quotient of two differences is 0
/// or within 2^-94 .. 2^94: normal, where WGSL's division is within 2.5 ulp, and its own
/// margin (2^-18 of it) is normal too.
pub mod time_bounds {
    /// The margin's relative part: 2^-18 = 32·2^-23. A time is off by its two differences'
    /// roundings and the division's, each within 1.5 ulp (rounding toward zero, or the emulated
    /// hostile rounding) but the division's 3.5 (WGSL's 2.5, nudged), so 6.5·2^-23; the margin
    /// is four times that, for its own roundings, rounded up to a power of two.
    pub const TIME_RELATIVE: f32 = 1.0 / (1u32 << 18) as f32;
    /// The margin's absolute part, 2^-100: a time of 0 whose division is off by an ulp of 0,
    /// or flushed, many times over.
    pub const TIME_FLOOR: f32 = 1.0 / (1u128 << 100) as f32;
    /// The smallest nonzero magnitude the times take, 2^-40.
    pub const TIME_SMALLEST: f32 = 1.0 / (1u64 << 40) as f32;
    /// The largest magnitude the times take, 2^30.
    pub const TIME_LARGEST: f32 = (1u32 << 30) as f32;
    /// The smallest term of a ratio [`super::ratio_time_above`] bounds, 2^-100: the ratio is
    /// then at least 2^-200 (or 0 where it is flushed), off by far less than `TIME_FLOOR` beside
    /// its relative error.
    pub const RATIO_SMALLEST: f32 = 1.0 / (1u128 << 100) as f32;
    /// The largest term of such a ratio, 2^100: its division is within WGSL's 2.5 ulp.
    pub const RATIO_LARGEST: f32 = (1u128 << 100) as f32;
}

use time_bounds::{
    RATIO_LARGEST, RATIO_SMALLEST, TIME_FLOOR, TIME_LARGEST, TIME_RELATIVE, TIME_SMALLEST,
};

/// Whether v is 0 or within the times' range (compared as bits: no float comparison).
pub fn in_time_range(v: f32) -> bool {
    let magnitude = v.to_bits() & 0x7fff_ffff;
    magnitude == 0 || (magnitude >= TIME_SMALLEST.to_bits() && magnitude <= TIME_LARGEST.to_bits())
}

/// A time at or before t, which was computed within 2^-20 of it relatively (a time of
/// [`time_bounds`]'s range).
pub fn time_below(ops: &dyn F32Arithmetic, t: f32) -> f32 {
    ops.sub(t, ops.add(ops.mul(t.abs(), TIME_RELATIVE), TIME_FLOOR))
}

/// A time at or after t, as [`time_below`].
pub fn time_above(ops: &dyn F32Arithmetic, t: f32) -> f32 {
    ops.add(t, ops.add(ops.mul(t.abs(), TIME_RELATIVE), TIME_FLOOR))
}

/// A time at or after num / den, a ratio at most 1 of positive terms `f` each computed within
/// 2^-21 relatively (as [`crate::cpu::segment_segment::crossing_fraction`]'s); 1 where a term
/// is past the ratios' range ([`time_bounds`]). The ratio's error is then its terms' and the
/// division's, within 8.5·2^-23: [`time_above`]'s margin covers it.
pub fn ratio_time_above(ops: &dyn F32Arithmetic, f: (f32, f32)) -> f32 {
    let num = f.0.to_bits();
    let den = f.1.to_bits();
    if num < RATIO_SMALLEST.to_bits()
        || num > RATIO_LARGEST.to_bits()
        || den < RATIO_SMALLEST.to_bits()
        || den > RATIO_LARGEST.to_bits()
    {
        return 1.0;
    }
    time_above(ops, ops.div(f.0, f.1))
}

/// A time at or before the one at which a segment going from a0 to a1 on an axis reaches v:
/// (v - a0) / (a1 - a0), bounded below; 0 where that cannot be told (a value past the range,
/// or a1 = a0), which is past no ceiling.
pub fn boundary_time(ops: &dyn F32Arithmetic, a0: f32, a1: f32, v: f32) -> f32 {
    if !(in_time_range(a0) && in_time_range(a1) && in_time_range(v)) {
        return 0.0;
    }
    let d = ops.sub(a1, a0);
    if d.to_bits() & 0x7fff_ffff == 0 {
        return 0.0;
    }
    time_below(ops, ops.div(ops.sub(v, a0), d))
}

/// `times` (a time at or before the segment enters a box, and one at or after it leaves)
/// narrowed by one axis: the segment from a0 to a1 is within lo..=hi between the times it
/// reaches them. An axis the segment does not move along leaves them.
fn axis_times(
    ops: &dyn F32Arithmetic,
    (a0, a1): (f32, f32),
    (lo, hi): (f32, f32),
    times: (f32, f32),
) -> (f32, f32) {
    let d = ops.sub(a1, a0);
    if d.to_bits() & 0x7fff_ffff == 0 {
        return times;
    }
    let forward = d > 0.0;
    let near = if forward { lo } else { hi };
    let far = if forward { hi } else { lo };
    let enter = time_below(ops, ops.div(ops.sub(near, a0), d));
    let leave = time_above(ops, ops.div(ops.sub(far, a0), d));
    (times.0.max(enter), times.1.min(leave))
}

/// A time at or before segment s enters box b, and one at or after it leaves it, within
/// 0..=1: every point of s in b lies between them. (0, 1) where they cannot be told (a value
/// past [`time_bounds`]'s range).
pub fn box_times(ops: &dyn F32Arithmetic, s: &Segment, b: &Rect) -> (f32, f32) {
    let in_range = in_time_range(s.x0)
        && in_time_range(s.y0)
        && in_time_range(s.x1)
        && in_time_range(s.y1)
        && in_time_range(b.min_x)
        && in_time_range(b.min_y)
        && in_time_range(b.max_x)
        && in_time_range(b.max_y);
    if !in_range {
        return (0.0, 1.0);
    }
    let times = axis_times(ops, (s.x0, s.x1), (b.min_x, b.max_x), (0.0, 1.0));
    axis_times(ops, (s.y0, s.y1), (b.min_y, b.max_y), times)
}

/// A time at or before segment s enters `row` from the walk's previous row: at the bound
/// between them.
fn row_time(grid: &Grid, s: &Segment, walk: &Walk, row: u32) -> f32 {
    let bound = if walk.up { row - 1 } else { row };
    boundary_time(&Ieee, s.y0, s.y1, grid.ys.bounds[bound as usize])
}

/// A time at or before segment s enters `col` from the row's previous column.
fn col_time(grid: &Grid, s: &Segment, walk: &Walk, col: u32) -> f32 {
    let bound = if walk.right { col - 1 } else { col };
    boundary_time(&Ieee, s.x0, s.x1, grid.xs.bounds[bound as usize])
}

/// Whether the walk, just moved to a new cell, can stop: every shape it has not given yet meets
/// segment s only after `ceiling`. Such a shape has each of its points on s in this cell or
/// later ones: past the bound the walk just crossed into this row, or into this column and
/// into the next row (the rows before, and this row's columns before, list every shape with
/// a point of s there). Every bound the walk crosses lies within s, so a `ceiling` of 1
/// (hits, counts) never stops it: that costs no division.
fn walk_passed(grid: &Grid, s: &Segment, c: &Candidates, ceiling: f32) -> bool {
    let ceiling_key = order_key(ceiling);
    if ceiling_key >= order_key(1.0) {
        return false;
    }
    if c.col_step == 0 {
        return order_key(row_time(grid, s, &c.walk, walk_row(&c.walk, c.step))) > ceiling_key;
    }
    let col = walk_col(&c.walk, c.range, c.col_step);
    let last_row = c.step >= c.walk.row_max - c.walk.row_min;
    order_key(col_time(grid, s, &c.walk, col)) > ceiling_key
        && (last_row
            || order_key(row_time(grid, s, &c.walk, walk_row(&c.walk, c.step + 1))) > ceiling_key)
}

/// The walk's next candidate: a shape whose box meets the segment's, in the first cell of the
/// walk that lists it ([`is_first_visit`]), so each once (on a grid along walls,
/// [`Grid::along`], in every cell that lists it: first hits alone); `None` past the last, or once every
/// shape left meets the segment only after `ceiling` (`walk_passed`; 1 for every shape
/// the segment meets).
pub fn next_candidate(grid: &Grid, s: &Segment, c: &mut Candidates, ceiling: f32) -> Option<u32> {
    if c.brute {
        if c.next >= c.end {
            return None;
        }
        c.next += 1;
        return Some(c.next - 1);
    }
    loop {
        while c.next < c.end {
            let e = c.next as usize;
            c.next += 1;
            let j = grid.entries[e];
            if boxes_apart(s, &grid.boxes[e]) {
                continue;
            }
            let row = walk_row(&c.walk, c.step);
            let col = walk_col(&c.walk, c.range, c.col_step);
            if grid.along
                || is_first_visit(
                    &grid.spans[j as usize],
                    &c.walk,
                    col,
                    row,
                    c.range,
                    c.step == 0,
                    c.prev,
                )
            {
                return Some(j);
            }
        }
        if !next_cell(grid, s, c) || walk_passed(grid, s, c, ceiling) {
            return None;
        }
    }
}
