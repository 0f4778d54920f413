//! The grid along walls: the cells list each wall only where its line can be, not over its
//! whole box, so that a short bullet's first hit among long walls looks at the walls near its
//! start alone. First hits over walls: the CPU's, and the GPU's walk (with each entry's box
//! listed, `Grid::list_entry_boxes`; docs/broad_phase.md).
//!
//! - **Listing.** A wall is listed in the cells of its own walk ([`walk_cells`]): the rows
//!   between its ends' rows and, in each, the columns its points in that row can have, widened
//!   as any segment's walk is (`cpu::grid`). So every point of the wall lies in a cell that
//!   lists it, and a query segment's walk, conservative in the same way, reaches every wall it
//!   has a point in common with in the cell of that point.
//! - **No each-pair-once rule.** A wall is met in every visited cell that lists it (a query
//!   crossing it near a cell boundary, or running beside it). First hits keep the smallest
//!   (t, wall), so a second meeting changes nothing; hits and counts, which would list or count
//!   it twice, take the grid over boxes.
//! - **Cells.** About [`ALONG_ENTRIES_PER_CELL`] entries each on average, from the walls' total
//!   length and number over their extent.
//! - **Lanes.** The lane filter lists each cell's walls in blocks of sixteen lanes
//!   (`LaneFilter::list_cells`), which the walk filters in place, a block at a time.

use super::CpuKernel;
use crate::cpu::grid::{
    CellStep, Grid, MAX_CELLS_PER_AXIS, Next, ROWS_PER_RECT_SCAN, Walk, box_entries, walk_cells,
    walk_of,
};
use crate::cpu::lanes::LANES;
use crate::types::Segment;
use rayon::prelude::*;

/// The entries a cell of a grid along walls lists on average, about: three blocks of the lane
/// filter. On 1M bullets × 100k walls (bullet hell, first hits, 2 threads) 16 took 0.94–1.01 s
/// end to end, 32 0.60–0.69 s, 48 0.55–0.63 s and 64 0.58–0.64 s, with the least memory
/// from 48 on (smaller cells list a long wall in more of them, and pad more blocks).
pub const ALONG_ENTRIES_PER_CELL: f64 = 48.0;

/// A grid along walls lists at most this many entries per wall on average; a finer grid is
/// coarsened.
pub const MAX_ENTRIES_PER_WALL: u64 = 64;

/// Walls listed per task of a parallel build.
const WALLS_PER_TASK: usize = 4096;

impl Grid {
    /// A grid over `walls` (valid segments) whose cells list each wall along its line (module
    /// docs), in ascending order within a cell. With `parallel`, the walls' walks run on the
    /// current rayon pool (a kernel runs it on its own).
    pub fn build_along(&mut self, walls: &[Segment], parallel: bool) {
        let (mut cols, mut rows, bounds) = size_along(walls);
        self.cell_start.clear();
        self.entries.clear();
        self.boxes.clear();
        self.spans.clear();
        self.entry_spans.clear();
        self.along = true;
        let limit = MAX_ENTRIES_PER_WALL * walls.len() as u64;
        // (cell, wall), in wall order.
        let listed = loop {
            self.fill_bounds(cols, rows, &bounds);
            let grid = &*self;
            let list = |first: usize, walls: &[Segment]| {
                let mut listed = Vec::new();
                for (k, w) in walls.iter().enumerate() {
                    let wall = (first + k) as u32;
                    walk_cells(grid, w, &walk_of(grid, w), |step| {
                        if let CellStep::Cell(at) = step {
                            listed.push((at.cell, wall));
                        }
                        Next::Entry
                    });
                }
                listed
            };
            let listed = if parallel {
                let parts: Vec<Vec<(u32, u32)>> = walls
                    .par_chunks(WALLS_PER_TASK)
                    .enumerate()
                    .map(|(c, part)| list(c * WALLS_PER_TASK, part))
                    .collect();
                parts.concat()
            } else {
                list(0, walls)
            };
            let total = listed.len() as u64;
            if (total <= limit && total < u32::MAX as u64) || (cols == 1 && rows == 1) {
                break listed;
            }
            cols = cols.div_ceil(2);
            rows = rows.div_ceil(2);
        };
        self.planned_entries = listed.len() as u64;
        let cells = (self.cols * self.rows) as usize;
        self.cell_start.resize(cells + 1, 0);
        for &(cell, _) in &listed {
            self.cell_start[cell as usize + 1] += 1;
        }
        for i in 1..self.cell_start.len() {
            self.cell_start[i] += self.cell_start[i - 1];
        }
        self.entries.resize(listed.len(), 0);
        let mut next: Vec<u32> = self.cell_start[..cells].to_vec();
        for &(cell, wall) in &listed {
            let at = &mut next[cell as usize];
            self.entries[*at as usize] = wall;
            *at += 1;
        }
    }
}

/// The size and extent of a grid along `walls`: square cells of side c, where a cell of the
/// walls' extent (area A) meets about [`ALONG_ENTRIES_PER_CELL`] of them. By Cauchy–Crofton a
/// wall of length l meets a random square cell of side c in about (4 / π) · l · c / A and holds
/// it in about c² / A, so c solves (4 / π) · (Σ l / A) · c + (n / A) · c² = E. An axis of no
/// extent has one cell.
fn size_along(walls: &[Segment]) -> (u32, u32, [f64; 4]) {
    let mut b = [f64::MAX, f64::MIN, f64::MAX, f64::MIN];
    let mut length = 0f64;
    for w in walls {
        let (x0, y0, x1, y1) = (w.x0 as f64, w.y0 as f64, w.x1 as f64, w.y1 as f64);
        b[0] = b[0].min(x0.min(x1));
        b[1] = b[1].max(x0.max(x1));
        b[2] = b[2].min(y0.min(y1));
        b[3] = b[3].max(y0.max(y1));
        length += (x1 - x0).hypot(y1 - y0);
    }
    let (width, height) = (b[1] - b[0], b[3] - b[2]);
    let extent = width.max(height);
    // NaN, or no extent (no walls, or all at one point): one cell.
    if !(extent > 0.0 && extent.is_finite()) {
        return (1, 1, [0.0; 4]);
    }
    // A flat extent is taken as a strip one finest cell thick.
    let floor = extent / MAX_CELLS_PER_AXIS as f64;
    let area = width.max(floor) * height.max(floor);
    let (a, b1) = (
        walls.len() as f64 / area,
        4.0 / std::f64::consts::PI * length / area,
    );
    let e = ALONG_ENTRIES_PER_CELL;
    let c = (-b1 + (b1 * b1 + 4.0 * a * e).sqrt()) / (2.0 * a);
    let cells = |extent: f64| -> u32 {
        if extent > 0.0 && c > 0.0 {
            (extent / c).ceil().clamp(1.0, MAX_CELLS_PER_AXIS as f64) as u32
        } else {
            1
        }
    };
    (cells(width), cells(height), b)
}

/// The lanes `s`'s walk through `grid` (a grid along walls) filters, before any stop: each
/// visited cell's walls in whole blocks of sixteen. Stops counting once past `limit`.
pub(super) fn walk_lanes(grid: &Grid, s: &Segment, walk: &Walk, limit: u64) -> u64 {
    let mut lanes = 0u64;
    walk_cells(grid, s, walk, |step| {
        if let CellStep::Cell(at) = step {
            let cell = at.cell as usize;
            let walls = grid.cell_start[cell + 1] - grid.cell_start[cell];
            lanes += walls.div_ceil(LANES as u32) as u64 * LANES as u64;
            if lanes > limit {
                return Next::Stop;
            }
        }
        Next::Entry
    });
    lanes
}

/// Whether segment `s` takes the box cull rather than its walk through `grid` (a grid along
/// `walls` walls): when the walk would filter more lanes than there are walls
/// ([`walk_lanes`]), or cross more rows than [`ROWS_PER_RECT_SCAN`] allows, so that it never
/// costs much more than the brute force.
#[inline(always)]
pub(super) fn prefers_cull_along(grid: &Grid, s: &Segment, walk: &Walk, walls: usize) -> bool {
    let (walls, rows) = (walls as u64, (walk.row_max - walk.row_min + 1) as u64);
    if rows * ROWS_PER_RECT_SCAN as u64 > walls {
        return true;
    }
    // Every lane the walk filters is in its box's cells, each cell's padded by under a block:
    // when those are few (a bullet's), the walk's own count is not needed.
    let cells = rows * (walk.col_max - walk.col_min + 1) as u64;
    if cells * (LANES as u64 - 1) + box_entries(grid, walk, walls) <= walls {
        return false;
    }
    walk_lanes(grid, s, walk, walls) > walls
}

impl CpuKernel {
    /// [`Grid::build_along`] on this kernel's threads.
    pub(crate) fn build_along(&self, grid: &mut Grid, walls: &[Segment]) {
        match self.threads {
            1 => grid.build_along(walls, false),
            _ => Self::install(&self.pool, || grid.build_along(walls, true)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cpu::grid::{Grid, cell_of};
    use crate::scene::SplitMix64;
    use crate::types::Segment;

    /// Whether `grid`'s cell holding the point (x, y) lists wall `k`.
    fn lists(grid: &Grid, x: f32, y: f32, k: u32) -> bool {
        let cell = (cell_of(&grid.ys, y) * grid.cols + cell_of(&grid.xs, x)) as usize;
        let (start, end) = (grid.cell_start[cell], grid.cell_start[cell + 1]);
        grid.entries[start as usize..end as usize].contains(&k)
    }

    #[test]
    fn every_exact_point_of_a_wall_on_a_cell_boundary_lies_in_a_cell_that_lists_it() {
        // Walls whose points at a boundary's x (or y) are f32 values exactly: slopes 0, ±1, 2
        // and 1/2 and vertical, from and to random points, among random walls that size the
        // grid. Every such point's cell must list its wall, at every boundary and a value
        // either side of it: that is where a walk's widening is needed.
        let mut rng = SplitMix64::new(61);
        let mut walls = Vec::new();
        for _ in 0..3000 {
            let mut v = || rng.range(0.0, 100.0);
            walls.push(Segment::new(v(), v(), v(), v()));
        }
        type Line = fn(f32, f32, f32) -> Segment;
        let lines: [Line; 6] = [
            |x, y, d| Segment::new(x, y, x + d, y),
            |x, y, d| Segment::new(x, y, x, y + d),
            |x, y, d| Segment::new(x, y, x + d, y + d),
            |x, y, d| Segment::new(x, y, x + d, y - d),
            |x, y, d| Segment::new(x, y, x + d, y + 2.0 * d),
            |x, y, d| Segment::new(x, y, x + 2.0 * d, y + d),
        ];
        let first_special = walls.len();
        for k in 0..600 {
            // Whole coordinates, so that the points below are exact.
            let (x, y) = (rng.below(60) as f32, rng.below(60) as f32 + 30.0);
            let d = (1 + rng.below(30)) as f32 * if k % 2 == 0 { 1.0 } else { -1.0 };
            walls.push(lines[k % lines.len()](x, y, d));
        }
        let mut grid = Grid::default();
        grid.build_along(&walls, false);
        assert!(
            grid.cols > 10 && grid.rows > 10,
            "{} x {}",
            grid.cols,
            grid.rows
        );
        let near = |v: f32| [v.next_down(), v, v.next_up()];
        let mut checked = 0;
        for (k, w) in walls.iter().enumerate().skip(first_special) {
            let (dx, dy) = (w.x1 as f64 - w.x0 as f64, w.y1 as f64 - w.y0 as f64);
            let on_wall = |x: f64, y: f64| {
                let t = if dx != 0.0 {
                    (x - w.x0 as f64) / dx
                } else {
                    (y - w.y0 as f64) / dy
                };
                (0.0..=1.0).contains(&t)
                    && (x - w.x0 as f64) * dy == (y - w.y0 as f64) * dx
                    && x as f32 as f64 == x
                    && y as f32 as f64 == y
            };
            let mut points = Vec::new();
            for &b in grid.xs.bounds.iter() {
                for x in near(b) {
                    // y from x on the wall's line, where there is one.
                    if dx != 0.0 {
                        let y = w.y0 as f64 + (x as f64 - w.x0 as f64) * dy / dx;
                        points.push((x as f64, y));
                    }
                }
            }
            for &b in grid.ys.bounds.iter() {
                for y in near(b) {
                    if dy != 0.0 {
                        let x = w.x0 as f64 + (y as f64 - w.y0 as f64) * dx / dy;
                        points.push((x, y as f64));
                    }
                }
            }
            points.extend([(w.x0 as f64, w.y0 as f64), (w.x1 as f64, w.y1 as f64)]);
            for (x, y) in points.into_iter().filter(|&(x, y)| on_wall(x, y)) {
                assert!(
                    lists(&grid, x as f32, y as f32, k as u32),
                    "wall {k} {w:?}: its point ({x}, {y}) is in a cell that does not list it"
                );
                checked += 1;
            }
        }
        assert!(checked > 5000, "only {checked} points checked");
    }

    #[test]
    fn walls_with_no_extent_make_a_one_cell_grid_that_lists_them_all() {
        let walls = vec![Segment::new(3.0, 4.0, 3.0, 4.0); 40];
        let mut grid = Grid::default();
        grid.build_along(&walls, false);
        assert_eq!((grid.cols, grid.rows), (1, 1));
        assert_eq!(grid.entries, (0..40).collect::<Vec<u32>>());
        // A flat field: one row, and each wall where it lies.
        let flat: Vec<Segment> = (0..400)
            .map(|k| Segment::new(k as f32, 7.0, k as f32 + 1.5, 7.0))
            .collect();
        grid.build_along(&flat, false);
        assert_eq!(grid.rows, 1);
        assert!(grid.cols > 10, "{} columns", grid.cols);
        for (k, w) in flat.iter().enumerate() {
            for x in [w.x0, w.x0 + 0.75, w.x1] {
                assert!(lists(&grid, x, 7.0, k as u32), "wall {k} at x = {x}");
            }
        }
    }
}
