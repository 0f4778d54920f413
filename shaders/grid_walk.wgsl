// The walk through the broad phase's grid, written once for every kernel that walks it: the
// grid's cells (built by shaders/grid.wgsl over rects, or on the host over shapes' boxes), and
// which cells a segment crosses, in order along its motion, each candidate once.
//
// Compiled after shaders/segment_rect.wgsl (its Segment, Rect, order_key and float operations),
// before the kernels that walk: shaders/grid.wgsl (rects) and shaders/shape_grid.wgsl (shapes).
// CPU mirror: src/cpu/grid.rs, with the same names and the same branch order
// (docs/broad_phase.md gives the design).

// The walk's widening and its floor (src/cpu/grid.rs).
override WALK_MARGIN_RELATIVE: f32;
override WALK_MARGIN_ABSOLUTE: f32;
override WALK_MIN_SPAN: f32;
override ROWS_PER_RECT_SCAN: u32;

// The cells of one axis: `cells - 1` bounds at grid_bounds[first..], and a first guess of a
// value's cell from `origin` and `scale` (cells per unit).
struct Axis {
    first: u32,
    cells: u32,
    origin: f32,
    scale: f32,
}

struct GridParams {
    xs: Axis,
    ys: Axis,
    cols: u32,
    rows: u32,
    rect_count: u32,
    // 1 where the cells list walls along their lines (src/cpu/grid.rs, Grid::along: a wall in
    // every cell of its line, its box beside each entry; first hits alone), else 0.
    along: u32,
}

// The cells a rect is listed in: columns col_min..=col_max, rows row_min..=row_max.
struct CellSpan {
    col_min: u32,
    col_max: u32,
    row_min: u32,
    row_max: u32,
}

// Which cells a segment crosses, walked along its motion.
struct Walk {
    row_min: u32,
    row_max: u32,
    col_min: u32,
    col_max: u32,
    slanted: bool,
    up: bool,
    right: bool,
}

@group(1) @binding(0) var<uniform> grid: GridParams;

// Whether the cells list walls along their lines: a walk meets a wall in every visited cell
// that lists it, with no each-pair-once rule.
fn walk_lists_along() -> bool {
    return grid.along != 0u;
}
// The columns' bounds, then the rows'.
@group(1) @binding(1) var<storage, read> grid_bounds: array<f32>;
// Cell `row * cols + col` lists entries[cell_start[cell]..cell_start[cell + 1]].
@group(1) @binding(3) var<storage, read_write> cell_start: array<u32>;
@group(1) @binding(4) var<storage, read_write> entries: array<u32>;
// Each entry's rect, for a streaming box test.
@group(1) @binding(5) var<storage, read_write> boxes: array<Rect>;
@group(1) @binding(6) var<storage, read_write> spans: array<CellSpan>;

fn axis_bound(axis: Axis, j: u32) -> f32 {
    return grid_bounds[axis.first + j];
}

// The cell a value lies in: the largest j < cells with j == 0 or bounds[j - 1] <= v. The guess
// is usually right; comparisons of order keys then move it to the exact cell.
fn cell_of(axis: Axis, v: f32) -> u32 {
    let k = order_key(v);
    // Any guess will do (even NaN or infinite); in range it is rarely off by one.
    let guess = f_mul(f_sub(v, axis.origin), axis.scale);
    var j = 0u;
    if (guess >= 1.0) {
        j = u32(min(guess, f32(axis.cells - 1u)));
    }
    while (j > 0u && order_key(axis_bound(axis, j - 1u)) > k) {
        j -= 1u;
    }
    while (j + 1u < axis.cells && order_key(axis_bound(axis, j)) <= k) {
        j += 1u;
    }
    return j;
}

// cell_of for a value v at or above (by order key) one that lies in cell `low`: most often
// cell `low` itself, told by one comparison with the next boundary (a short segment's far
// end, in walk_of).
fn cell_at_or_above(axis: Axis, v: f32, low: u32) -> u32 {
    if (low + 1u >= axis.cells || order_key(axis_bound(axis, low)) > order_key(v)) {
        return low;
    } else {
        return cell_of(axis, v);
    }
}

// The smaller of two values by order key (one of them, exactly).
fn key_min(a: f32, b: f32) -> f32 {
    return select(a, b, order_key(b) < order_key(a));
}

// The larger of two values by order key (one of them, exactly).
fn key_max(a: f32, b: f32) -> f32 {
    return select(a, b, order_key(b) > order_key(a));
}

// The x of the segment's line at y (an estimate: row_columns widens it).
fn x_at(s: Segment, y: f32) -> f32 {
    let t = f_div(f_sub(y, s.y0), f_sub(s.y1, s.y0));
    return f_add(s.x0, f_mul(t, f_sub(s.x1, s.x0)));
}

// The rows and the columns of a segment's box, and its directions.
fn walk_of(s: Segment) -> Walk {
    let row_min = cell_of(grid.ys, key_min(s.y0, s.y1));
    let row_max = cell_at_or_above(grid.ys, key_max(s.y0, s.y1), row_min);
    let col_min = cell_of(grid.xs, key_min(s.x0, s.x1));
    let col_max = cell_at_or_above(grid.xs, key_max(s.x0, s.x1), col_min);
    let span = abs(f_sub(s.y1, s.y0));
    return Walk(
        row_min,
        row_max,
        col_min,
        col_max,
        row_min != row_max && col_min != col_max && span >= WALK_MIN_SPAN,
        order_key(s.y1) >= order_key(s.y0),
        order_key(s.x1) >= order_key(s.x0),
    );
}

// The step-th row of the walk.
fn walk_row(walk: Walk, step: u32) -> u32 {
    return select(walk.row_max - step, walk.row_min + step, walk.up);
}

// The step-th column of a row's range.
fn walk_col(walk: Walk, range: vec2<u32>, step: u32) -> u32 {
    return select(range.y - step, range.x + step, walk.right);
}

// The columns the segment visits in `row`: those of its line's x at the row's bounds, widened,
// clamped to the segment's columns, and made monotone along the walk with the previous row's
// range `prev` (ignored on the first row).
fn row_columns(s: Segment, walk: Walk, row: u32, first: bool, prev: vec2<u32>) -> vec2<u32> {
    if (!walk.slanted) {
        return vec2(walk.col_min, walk.col_max);
    }
    // (Both sides of a select are evaluated: the bounds' indices are kept in range.)
    let y_low = select(axis_bound(grid.ys, max(row, 1u) - 1u), key_min(s.y0, s.y1), row == walk.row_min);
    let y_high = select(axis_bound(grid.ys, min(row, grid.ys.cells - 2u)), key_max(s.y0, s.y1), row == walk.row_max);
    let xa = x_at(s, y_low);
    let xb = x_at(s, y_high);
    let margin = f_add(f_mul(f_add(abs(s.x0), abs(s.x1)), WALK_MARGIN_RELATIVE), WALK_MARGIN_ABSOLUTE);
    let lo = max(cell_of(grid.xs, f_sub(key_min(xa, xb), margin)), walk.col_min);
    let hi = min(cell_of(grid.xs, f_add(key_max(xa, xb), margin)), walk.col_max);
    if (first) {
        return vec2(lo, hi);
    }
    // Along the motion, x only moves one way: each bound no further back than the previous
    // row's, which was itself conservative.
    return select(min(vec2(lo, hi), prev), max(vec2(lo, hi), prev), walk.right);
}

// Whether cell (col, row) is the first cell of the walk that lists a rect with cells `span`:
// the first of the rect's columns in this row's range (in the walk's direction), on the first
// row whose range meets the rect's columns.
fn is_first_visit(span: CellSpan, walk: Walk, col: u32, row: u32, range: vec2<u32>, first: bool, prev: vec2<u32>) -> bool {
    let first_col = select(min(range.y, span.col_max), max(range.x, span.col_min), walk.right);
    if (col != first_col) {
        return false;
    }
    let rect_first_row = select(span.row_max, span.row_min, walk.up);
    return first || row == rect_first_row || prev.x > span.col_max || prev.y < span.col_min;
}

// Entries the walk would scan, stopping early once past `limit`.
fn walk_entries(s: Segment, walk: Walk, limit: u32) -> u32 {
    var total = 0u;
    var prev = vec2(0u, 0u);
    for (var step = 0u; step <= walk.row_max - walk.row_min; step++) {
        let row = walk_row(walk, step);
        let range = row_columns(s, walk, row, step == 0u, prev);
        let first = row * grid.cols;
        total += cell_start[first + range.y + 1u] - cell_start[first + range.x];
        if (total > limit) {
            break;
        }
        prev = range;
    }
    return total;
}

// Whether the grid would cost the segment more than testing every rect: then it meets every
// rect instead (the brute force).
fn prefers_brute_force(s: Segment, walk: Walk, rects: u32) -> bool {
    let rows = walk.row_max - walk.row_min + 1u;
    if (rows * ROWS_PER_RECT_SCAN > rects) {
        return true;
    }
    // The entries of the segment's box bound the walk's: when they are few, the walk's own
    // count is not needed.
    return box_entries(walk, rects) > rects && walk_entries(s, walk, rects) > rects;
}

// Entries the cells of the walk's box list (every cell of its rows and columns; a rect once
// per cell), stopping early once past `limit`.
fn box_entries(walk: Walk, limit: u32) -> u32 {
    var in_box = 0u;
    for (var row = walk.row_min; row <= walk.row_max; row++) {
        let first = row * grid.cols;
        in_box += cell_start[first + walk.col_max + 1u] - cell_start[first + walk.col_min];
        if (in_box > limit) {
            break;
        }
    }
    return in_box;
}

// A rect's cells.
fn rect_span(r: Rect) -> CellSpan {
    return CellSpan(cell_of(grid.xs, r.min_x), cell_of(grid.xs, r.max_x), cell_of(grid.ys, r.min_y),
        cell_of(grid.ys, r.max_y));
}
