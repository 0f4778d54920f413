// A query segment's candidates through the broad phase's grid over shapes' boxes (docs/
// broad_phase.md), each once, and the pass that lists them: written once for every query that
// walks the grid over shapes (shaders/shape_grid.wgsl's, over a reducing shape's contacts, and
// shaders/polygon_grid.wgsl's, over polygons' edges).
//
// Compiled after shaders/grid_walk.wgsl (the walk, group 1) and a shape's kernel over
// shaders/shape_passes.wgsl (the tile, the list's bindings), before the queries' file, which
// defines the two hooks the list calls:
// - `grid_shapes()`: how many shapes the grid holds (the tile's shapes, or its polygons);
// - `grid_candidate(query, j)`: whether shape j, whose box the walk found meeting the query's,
//   is listed (not what certain_miss rules out, or a polygon whose box the query meets).
//
// CPU mirror: src/cpu/shape_walk.rs (the walk, line for line; the drift test holds it). The
// CPU's own queries walk the grid through src/cpu/grid.rs's walk_cells.

// A query's walk through the grid, one candidate at a time: the rows and columns of walk_of and
// row_columns, the cell it is in and its next entry; or every shape in turn when the grid would
// cost the query more (prefers_brute_force).
struct Candidates {
    walk: Walk,
    brute: bool,
    // The row's step along the walk, its columns, the previous row's, and the column's step.
    step: u32,
    range: vec2<u32>,
    prev: vec2<u32>,
    col_step: u32,
    // The cell's next entry and its end (the brute force: the next shape, and the count).
    next: u32,
    end: u32,
}

// Points the walk at the entries of the cell it is in.
fn enter_cell(c: ptr<function, Candidates>) {
    let cell = walk_row((*c).walk, (*c).step) * grid.cols + walk_col((*c).walk, (*c).range, (*c).col_step);
    (*c).next = cell_start[cell];
    (*c).end = cell_start[cell + 1u];
}

// Segment s's walk through the grid over `shapes` shapes, in its first cell (or at its first
// shape).
fn candidates_of(s: Segment, shapes: u32) -> Candidates {
    let walk = walk_of(s);
    var c = Candidates(walk, false, 0u, vec2(0u, 0u), vec2(0u, 0u), 0u, 0u, 0u);
    if (prefers_brute_force(s, walk, shapes)) {
        c.brute = true;
        c.end = shapes;
        return c;
    }
    c.range = row_columns(s, walk, walk_row(walk, 0u), true, c.prev);
    enter_cell(&c);
    return c;
}

// Moves the walk to its next cell: the row's next column, else the next row's first; false past
// the walk's last cell.
fn next_cell(s: Segment, c: ptr<function, Candidates>) -> bool {
    if ((*c).col_step < (*c).range.y - (*c).range.x) {
        (*c).col_step += 1u;
    } else {
        if ((*c).step >= (*c).walk.row_max - (*c).walk.row_min) {
            return false;
        }
        (*c).prev = (*c).range;
        (*c).step += 1u;
        (*c).col_step = 0u;
        (*c).range = row_columns(s, (*c).walk, walk_row((*c).walk, (*c).step), false, (*c).prev);
    }
    enter_cell(c);
    return true;
}

// The walk's times (src/cpu/shape_walk.rs, time_bounds): the margin, and the range of values
// whose times it bounds.
override TIME_RELATIVE: f32;
override TIME_FLOOR: f32;
override TIME_SMALLEST_BITS: u32;
override TIME_LARGEST_BITS: u32;
override RATIO_SMALLEST_BITS: u32;
override RATIO_LARGEST_BITS: u32;

// Whether v is 0 or within the times' range (compared as bits: no float comparison).
fn in_time_range(v: f32) -> bool {
    let magnitude = bitcast<u32>(v) & 0x7fffffffu;
    return magnitude == 0u || (magnitude >= TIME_SMALLEST_BITS && magnitude <= TIME_LARGEST_BITS);
}

// A time at or before t, which was computed within 2^-20 of it relatively.
fn time_below(t: f32) -> f32 {
    return f_sub(t, f_add(f_mul(abs(t), TIME_RELATIVE), TIME_FLOOR));
}

// A time at or after t, as time_below.
fn time_above(t: f32) -> f32 {
    return f_add(t, f_add(f_mul(abs(t), TIME_RELATIVE), TIME_FLOOR));
}

// A time at or after num / den, a ratio at most 1 of positive terms (f.x, f.y) each computed
// within 2^-21 relatively; 1 where a term is past the ratios' range.
fn ratio_time_above(f: vec2<f32>) -> f32 {
    let num = bitcast<u32>(f.x);
    let den = bitcast<u32>(f.y);
    if (num < RATIO_SMALLEST_BITS || num > RATIO_LARGEST_BITS || den < RATIO_SMALLEST_BITS || den > RATIO_LARGEST_BITS) {
        return 1.0;
    }
    return time_above(f_div(f.x, f.y));
}

// A time at or before the one at which a segment going from a0 to a1 on an axis reaches v:
// (v - a0) / (a1 - a0), bounded below; 0 where that cannot be told (a value past the range,
// or a1 = a0), which is past no ceiling.
fn boundary_time(a0: f32, a1: f32, v: f32) -> f32 {
    if (!(in_time_range(a0) && in_time_range(a1) && in_time_range(v))) {
        return 0.0;
    }
    let d = f_sub(a1, a0);
    if ((bitcast<u32>(d) & 0x7fffffffu) == 0u) {
        return 0.0;
    }
    return time_below(f_div(f_sub(v, a0), d));
}

// `times` (a time at or before the segment enters a box, and one at or after it leaves) narrowed
// by one axis: the segment from a.x to a.y is within bounds.x..=bounds.y between the times it
// reaches them. An axis the segment does not move along leaves them.
fn axis_times(a: vec2<f32>, bounds: vec2<f32>, times: vec2<f32>) -> vec2<f32> {
    let d = f_sub(a.y, a.x);
    if ((bitcast<u32>(d) & 0x7fffffffu) == 0u) {
        return times;
    }
    let forward = d > 0.0;
    let near = select(bounds.y, bounds.x, forward);
    let far = select(bounds.x, bounds.y, forward);
    let enter = time_below(f_div(f_sub(near, a.x), d));
    let leave = time_above(f_div(f_sub(far, a.x), d));
    return vec2(max(times.x, enter), min(times.y, leave));
}

// A time at or before segment s enters box b, and one at or after it leaves it, within 0..=1:
// every point of s in b lies between them. (0, 1) where they cannot be told (a value past the
// range).
fn box_times(s: Segment, b: Rect) -> vec2<f32> {
    let in_range = in_time_range(s.x0) && in_time_range(s.y0) && in_time_range(s.x1)
        && in_time_range(s.y1) && in_time_range(b.min_x) && in_time_range(b.min_y)
        && in_time_range(b.max_x) && in_time_range(b.max_y);
    if (!in_range) {
        return vec2(0.0, 1.0);
    }
    let times = axis_times(vec2(s.x0, s.x1), vec2(b.min_x, b.max_x), vec2(0.0, 1.0));
    return axis_times(vec2(s.y0, s.y1), vec2(b.min_y, b.max_y), times);
}

// A time at or before segment s enters `row` from the walk's previous row: at the bound between
// them.
fn row_time(s: Segment, walk: Walk, row: u32) -> f32 {
    let bound = select(row, row - 1u, walk.up);
    return boundary_time(s.y0, s.y1, axis_bound(grid.ys, bound));
}

// A time at or before segment s enters `col` from the row's previous column.
fn col_time(s: Segment, walk: Walk, col: u32) -> f32 {
    let bound = select(col, col - 1u, walk.right);
    return boundary_time(s.x0, s.x1, axis_bound(grid.xs, bound));
}

// Whether the walk, just moved to a new cell, can stop: every shape it has not given yet meets
// segment s only after `ceiling`. Such a shape has each of its points on s in this cell or later
// ones: past the bound the walk just crossed into this row, or into this column and into the
// next row (the rows before, and this row's columns before, list every shape with a point of s
// there). Every bound the walk crosses lies within s, so a `ceiling` of 1 (hits, counts)
// never stops it: that costs no division.
fn walk_passed(s: Segment, c: Candidates, ceiling: f32) -> bool {
    let ceiling_key = order_key(ceiling);
    if (ceiling_key >= order_key(1.0)) {
        return false;
    }
    if (c.col_step == 0u) {
        return order_key(row_time(s, c.walk, walk_row(c.walk, c.step))) > ceiling_key;
    }
    let col = walk_col(c.walk, c.range, c.col_step);
    let last_row = c.step >= c.walk.row_max - c.walk.row_min;
    return order_key(col_time(s, c.walk, col)) > ceiling_key
        && (last_row || order_key(row_time(s, c.walk, walk_row(c.walk, c.step + 1u))) > ceiling_key);
}

// The walk's next candidate: a shape whose box meets the segment's, in the first cell of the walk
// that lists it (is_first_visit), so each once (on a grid along walls, in every cell that lists
// it: first hits alone); NO_SHAPE past the last, or once every shape left
// meets the segment only after `ceiling` (walk_passed; 1 for every shape the segment meets).
fn next_candidate(s: Segment, c: ptr<function, Candidates>, ceiling: f32) -> u32 {
    if ((*c).brute) {
        if ((*c).next >= (*c).end) {
            return NO_SHAPE;
        }
        (*c).next += 1u;
        return (*c).next - 1u;
    }
    loop {
        while ((*c).next < (*c).end) {
            let e = (*c).next;
            (*c).next += 1u;
            let j = entries[e];
            if (boxes_apart(s, boxes[e])) {
                continue;
            }
            let row = walk_row((*c).walk, (*c).step);
            let col = walk_col((*c).walk, (*c).range, (*c).col_step);
            if (walk_lists_along() || is_first_visit(spans[j], (*c).walk, col, row, (*c).range, (*c).step == 0u, (*c).prev)) {
                return j;
            }
        }
        if (!next_cell(s, c) || walk_passed(s, *c, ceiling)) {
            return NO_SHAPE;
        }
    }
    return NO_SHAPE;
}

// Lists each query's candidates that grid_candidate keeps, as pair q * grid_shapes() + j.
// The count goes on past the list's room: the host then runs the tile again with room for all.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_list(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let q = invocation_index(workgroup_id, num_workgroups, local_index);
    if (q >= shape_params.query_count) {
        return;
    }
    let query = queries[q];
    let room = arrayLength(&listed_pairs);
    let shapes = grid_shapes();
    var candidates = candidates_of(query, shapes);
    loop {
        let j = next_candidate(query, &candidates, 1.0);
        if (j == NO_SHAPE) {
            break;
        }
        if (grid_candidate(query, j)) {
            let k = atomicAdd(&pair_list.count, 1u);
            if (k < room) {
                listed_pairs[k] = q * shapes + j;
            }
        }
    }
}

// The listed candidate the invocation takes (at *k in the list), or the pair count (past every
// pair) when it has none: past the list's room too, when it overflowed.
fn grid_listed(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32, k: ptr<function, u32>) -> u32 {
    *k = invocation_index(workgroup_id, num_workgroups, local_index);
    if (*k >= min(atomicLoad(&pair_list.count), arrayLength(&listed_pairs))) {
        return shape_params.pair_count;
    }
    return listed_pairs[*k];
}
