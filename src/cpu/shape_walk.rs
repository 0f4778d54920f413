//! CPU mirror of `shaders/shape_walk.wgsl`: a segment's candidates through the grid over
//! shapes' boxes, one at a time, each once, as the GPU lists them before its exact path runs
//! over the list (walls' and circles' queries, `shaders/shape_grid.wgsl`; polygons' edges,
//! `shaders/polygon_grid.wgsl`). Same names and the same branch order (the drift test,
//! tests/shader.rs, holds them); the GPU's passes over the list are the dense passes' hooks,
//! mirrored by each shape's folder. The CPU's own queries walk the grid through
//! [`super::grid::walk_cells`]; this is the executable form of the GPU's walk, which tests
//! check against every shape the segment touches.

use super::grid::{
    Grid, Walk, is_first_visit, prefers_brute_force, row_columns, walk_col, walk_of, walk_row,
};
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

/// The walk's next candidate: a shape whose box meets the segment's, in the first cell of the
/// walk that lists it ([`is_first_visit`]), so each once; `None` past the last.
pub fn next_candidate(grid: &Grid, s: &Segment, c: &mut Candidates) -> Option<u32> {
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
            if is_first_visit(
                &grid.spans[j as usize],
                &c.walk,
                col,
                row,
                c.range,
                c.step == 0,
                c.prev,
            ) {
                return Some(j);
            }
        }
        if !next_cell(grid, s, c) {
            return None;
        }
    }
}
