// The queries over shapes through the broad phase's grid (docs/broad_phase.md): each query
// segment walks the grid over the shapes' boxes and decides each candidate once, with the same
// hooks as the dense passes, so that every pair is decided as the brute force decides it:
// first hits, hits and counts give the same bytes as shaders/shape_queries.wgsl's reductions.
//
// Compiled last, after a reducing shape's kernel (its hooks, shaders/shape_passes.wgsl's
// bindings, shaders/shape_queries.wgsl's outputs and comes_first) and shaders/grid_walk.wgsl
// (the walk, group 1). The host builds the grid (src/cpu/grid.rs, over Shape::bounds) and
// uploads it: a shape's box is known on the host, and a level's static shapes keep their grid
// from call to call. One tile holds every shape, and any number of the queries.
//
// CPU mirror: the walk is src/cpu/grid.rs's (walk_cells, whose visitor tests what
// next_candidate hands over here); the candidates' order never matters: a first hit is the
// least (t, shape) over them (comes_first), counts add up, and the host sorts the hit list.

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

// Segment s's walk, in its first cell (or at its first shape).
fn candidates_of(s: Segment) -> Candidates {
    let walk = walk_of(s);
    var c = Candidates(walk, false, 0u, vec2(0u, 0u), vec2(0u, 0u), 0u, 0u, 0u);
    if (prefers_brute_force(s, walk, shape_params.shape_count)) {
        c.brute = true;
        c.end = shape_params.shape_count;
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

// Each query's first hit among its candidates: its shape (NO_SHAPE for none) and that pair's
// contact, as shape_first_hits gives them from the dense pairs.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_first_hits(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let q = invocation_index(workgroup_id, num_workgroups, local_index);
    if (q >= shape_params.query_count) {
        return;
    }
    let query = queries[q];
    var best: Contact;
    var best_shape = NO_SHAPE;
    var candidates = candidates_of(query);
    loop {
        let j = next_candidate(query, &candidates);
        if (j == NO_SHAPE) {
            break;
        }
        if (certain_miss(query, j)) {
            continue;
        }
        let c = shape_exact(query, j);
        if (comes_first(c, j, best, best_shape)) {
            best = c;
            best_shape = j;
        }
    }
    first_shapes[q] = best_shape;
    first_contacts[q] = best;
}

// The hitting pairs among the queries' candidates, appended in no set order as shape_hit_list
// appends them (pair q * shape_count + j). The count goes on past the lists' room: the host then
// runs the tile again with room for them all.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_hits(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let q = invocation_index(workgroup_id, num_workgroups, local_index);
    if (q >= shape_params.query_count) {
        return;
    }
    let query = queries[q];
    let room = min(arrayLength(&hit_pairs), arrayLength(&hit_contacts));
    var candidates = candidates_of(query);
    loop {
        let j = next_candidate(query, &candidates);
        if (j == NO_SHAPE) {
            break;
        }
        if (certain_miss(query, j)) {
            continue;
        }
        let c = shape_exact(query, j);
        if (contact_hit(c)) {
            let k = atomicAdd(&hit_count, 1u);
            if (k < room) {
                hit_pairs[k] = q * shape_params.shape_count + j;
                hit_contacts[k] = c;
            }
        }
    }
}

// Hits per query and per shape among the queries' candidates, exactly, without t, as
// shape_counts sums them from every pair.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_counts(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let q = invocation_index(workgroup_id, num_workgroups, local_index);
    if (q >= shape_params.query_count) {
        return;
    }
    let query = queries[q];
    var candidates = candidates_of(query);
    loop {
        let j = next_candidate(query, &candidates);
        if (j == NO_SHAPE) {
            break;
        }
        if (!certain_miss(query, j) && shape_hit(query, j)) {
            count_hit(q, j);
        }
    }
}
