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

// The walk's next candidate: a shape whose box meets the segment's, in the first cell of the walk
// that lists it (is_first_visit), so each once; NO_SHAPE past the last.
fn next_candidate(s: Segment, c: ptr<function, Candidates>) -> u32 {
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
            if (is_first_visit(spans[j], (*c).walk, col, row, (*c).range, (*c).step == 0u, (*c).prev)) {
                return j;
            }
        }
        if (!next_cell(s, c)) {
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
        let j = next_candidate(query, &candidates);
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
