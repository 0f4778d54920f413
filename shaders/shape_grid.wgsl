// The queries over shapes through the broad phase's grid (docs/broad_phase.md): each query
// segment walks the grid over the shapes' boxes and lists its candidates, each once; then the
// exact path runs over the list, every invocation on it (as shape_pairs_listed runs over the
// dense pairs' list), with the same hooks as the dense passes, so that every pair is decided as
// the brute force decides it: hits and counts give the same bytes as shaders/shape_queries.wgsl's
// reductions. (First hits over shapes run on the host's CPU, in the scene's exact order:
// docs/semantics.md, "Queries over shapes".)
//
// Compiled last, after a reducing shape's kernel (its hooks, shaders/shape_passes.wgsl's
// bindings, shaders/shape_queries.wgsl's outputs), shaders/grid_walk.wgsl (the walk, group 1)
// and shaders/shape_walk.wgsl (each segment's candidates, and the pass that lists them). The
// host builds the grid (src/cpu/grid.rs, over Shape::bounds) and uploads it: a shape's box is
// known on the host, and a level's static shapes keep their grid from call to call. One tile
// holds every shape, and any number of the queries.
//
// The list's order never matters: counts add up, and the host sorts the hit list.

// The list's hooks: the grid holds the tile's shapes, and lists those that the kernel's
// grid_verdict does not rule out.
fn grid_shapes() -> u32 {
    return shape_params.shape_count;
}

fn grid_candidate(query: Segment, j: u32) -> bool {
    return grid_verdict(query, j) != SHAPE_APART;
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
