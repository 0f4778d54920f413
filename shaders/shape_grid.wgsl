// The queries over shapes through the broad phase's grid (docs/broad_phase.md): each query
// segment walks the grid over the shapes' boxes and lists its candidates, each once; then the
// exact path runs over the list, every invocation on it (as shape_pairs_listed runs over the
// dense pairs' list), with the same hooks as the dense passes, so that every pair is decided as
// the brute force decides it: first hits, hits and counts give the same bytes as
// shaders/shape_queries.wgsl's reductions.
//
// Compiled last, after a reducing shape's kernel (its hooks, shaders/shape_passes.wgsl's
// bindings, shaders/shape_queries.wgsl's outputs and comes_first) and shaders/grid_walk.wgsl
// (the walk, group 1). The host builds the grid (src/cpu/grid.rs, over Shape::bounds) and
// uploads it: a shape's box is known on the host, and a level's static shapes keep their grid
// from call to call. One tile holds every shape, and any number of the queries.
//
// CPU mirror: the walk is src/cpu/grid.rs's (walk_cells, whose visitor tests what
// next_candidate hands over here). The list's order never matters: a first hit is the least
// (t, shape) over the candidates, taken with atomic maxima of keys that order them as
// comes_first does; counts add up; and the host sorts the hit list.

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

// Each listed candidate's contact (the first hits' exact pass), at its place in the list.
@group(0) @binding(14) var<storage, read_write> listed_contacts: array<Contact>;
// Each query's first hit, found in two steps over the list: the largest key of its hits'
// t_enter (first_key, zeroed by the host), then the largest key of the shapes that hit at that
// t (first_mark, zeroed): the smallest t_enter, the lowest shape on a tie (comes_first). A key
// of 0 means none: no t's key and no shape's is 0.
@group(0) @binding(15) var<storage, read_write> first_keys: array<atomic<u32>>;
@group(0) @binding(16) var<storage, read_write> first_marks: array<atomic<u32>>;

// The key of a t_enter: the larger, the earlier (order_key, as comes_first compares them).
fn first_key(t: f32) -> u32 {
    return ~(bitcast<u32>(order_key(t)) ^ 0x80000000u);
}

// The mark of shape j: the larger, the lower the index.
fn first_mark(j: u32) -> u32 {
    return ~j;
}

// Lists each query's candidates, pair q * shape_count + j, that certain_miss does not rule out.
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
    var candidates = candidates_of(query);
    loop {
        let j = next_candidate(query, &candidates);
        if (j == NO_SHAPE) {
            break;
        }
        if (!certain_miss(query, j)) {
            let k = atomicAdd(&pair_list.count, 1u);
            if (k < room) {
                listed_pairs[k] = q * shape_params.shape_count + j;
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

// The first hits' exact pass: each listed candidate's contact, and its query's first key.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_first_times(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count) {
        return;
    }
    let q = i / shape_params.shape_count;
    let c = shape_exact(queries[q], i % shape_params.shape_count);
    listed_contacts[k] = c;
    if (contact_hit(c)) {
        atomicMax(&first_keys[q], first_key(c.t_enter));
    }
}

// The first hits' second step: the shapes that hit at their query's first t mark it.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_first_shapes(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count) {
        return;
    }
    let c = listed_contacts[k];
    let q = i / shape_params.shape_count;
    if (contact_hit(c) && first_key(c.t_enter) == atomicLoad(&first_keys[q])) {
        atomicMax(&first_marks[q], first_mark(i % shape_params.shape_count));
    }
}

// The first hits' last step: the one candidate of each query that won writes its contact.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_first_contacts(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count) {
        return;
    }
    let c = listed_contacts[k];
    let q = i / shape_params.shape_count;
    if (contact_hit(c) && first_mark(i % shape_params.shape_count) == atomicLoad(&first_marks[q])) {
        first_contacts[q] = c;
    }
}

// The hitting pairs among the listed candidates, appended in no set order as shape_hit_list
// appends them. The count goes on past the lists' room: the host then runs the tile again with
// room for them all.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_hits(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count) {
        return;
    }
    let c = shape_exact(queries[i / shape_params.shape_count], i % shape_params.shape_count);
    if (contact_hit(c)) {
        let at = atomicAdd(&hit_count, 1u);
        if (at < min(arrayLength(&hit_pairs), arrayLength(&hit_contacts))) {
            hit_pairs[at] = i;
            hit_contacts[at] = c;
        }
    }
}

// Hits per query and per shape among the listed candidates, exactly, without t, as
// shape_counts sums them from every pair.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_counts(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count) {
        return;
    }
    let q = i / shape_params.shape_count;
    let j = i % shape_params.shape_count;
    if (shape_hit(queries[q], j)) {
        count_hit(q, j);
    }
}
