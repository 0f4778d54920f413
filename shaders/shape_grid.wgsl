// The queries over shapes through the broad phase's grid (docs/broad_phase.md): each query
// segment walks the grid over the shapes' boxes and lists its candidates, each once; then the
// exact path runs over the list, every invocation on it (as shape_pairs_listed runs over the
// dense pairs' list), with the same hooks as the dense passes, so that every pair is decided as
// the brute force decides it: first hits, hits and counts give the same bytes as
// shaders/shape_queries.wgsl's reductions.
//
// Compiled last, after a reducing shape's kernel (its hooks, shaders/shape_passes.wgsl's
// bindings, shaders/shape_queries.wgsl's outputs and comes_first), shaders/grid_walk.wgsl (the
// walk, group 1) and shaders/shape_walk.wgsl (each segment's candidates, and the pass that lists
// them). The host builds the grid (src/cpu/grid.rs, over Shape::bounds; for walls' first hits
// along the walls, src/cpu/batched/along.rs) and uploads it: a
// shape's box is known on the host, and a level's static shapes keep their grid from call to
// call. One tile holds every shape, and any number of the queries.
//
// The list's order never matters: a first hit is the least (t, shape) over the candidates,
// taken with atomic maxima of keys that order them as comes_first does; counts add up; and the
// host sorts the hit list.

// The list's hooks: the grid holds the tile's shapes, and lists those that the kernel's
// grid_verdict does not rule out.
fn grid_shapes() -> u32 {
    return shape_params.shape_count;
}

fn grid_candidate(query: Segment, j: u32) -> bool {
    return grid_verdict(query, j) != SHAPE_APART;
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


// The first hits' list: shape_grid_list's, under a ceiling. A candidate grid_verdict certifies
// as a hit puts the query's ceiling at a time at or after its t_enter: the earlier of the time
// its segment leaves the shape's box (box_times) and the kernel's own (grid_met_by, for walls
// where the segment crosses the wall's line); a candidate whose box the segment enters only after the ceiling is
// not listed, and the walk stops once every shape left is entered after it (walk_passed): such
// a shape's t_enter rounds past the ceiling, so it cannot come first. The ceiling starts at 1,
// past which nothing is met, and becomes the query's first key, which the exact pass raises
// (docs/broad_phase.md, "The first hits' ceiling").
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_grid_first_list(
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
    var ceiling = 1.0;
    var candidates = candidates_of(query, shapes);
    loop {
        let j = next_candidate(query, &candidates, ceiling);
        if (j == NO_SHAPE) {
            break;
        }
        let times = box_times(query, bounds[j]);
        if (order_key(times.x) > order_key(ceiling)) {
            continue;
        }
        let verdict = grid_verdict(query, j);
        if (verdict == SHAPE_APART) {
            continue;
        }
        if (verdict == SHAPE_MEETS) {
            let met_by = ratio_time_above(grid_met_by(query, j));
            if (order_key(times.y) < order_key(ceiling)) {
                ceiling = times.y;
            }
            if (order_key(met_by) < order_key(ceiling)) {
                ceiling = met_by;
            }
        }
        let k = atomicAdd(&pair_list.count, 1u);
        if (k < room) {
            listed_pairs[k] = q * shapes + j;
        }
    }
    atomicStore(&first_keys[q], first_key(ceiling));
}

// The first hits' exact pass: each listed candidate's contact, and its query's first key. A
// candidate whose box its segment enters after the first key's t (a ceiling, or a hit's t_enter
// as the pass finds them) is skipped: its t_enter would round past that t.
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
    let j = i % shape_params.shape_count;
    let query = queries[q];
    if (first_key(box_times(query, bounds[j]).x) < atomicLoad(&first_keys[q])) {
        listed_contacts[k] = shape_miss();
        return;
    }
    let c = shape_exact(query, j);
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
