// The queries over shapes, reduced on the GPU (docs/semantics.md, "Queries over shapes"): each
// query's first hit, and the hitting pairs, from a tile's contacts as the dense pairs' passes
// leave them (shaders/shape_passes.wgsl, binding 3, query-major: pair i is query i / shape_count, shape i % shape_count), so that
// the host reads back one result per query, or the hits alone, instead of every pair.
//
// Compiled after a shape's kernel file, which names its contact `Contact` and says whether one
// hits (`contact_hit`). CPU mirror: src/cpu/shape_queries.rs, same function names.

// A query's first shape when it hits none (the host's value).
override NO_SHAPE: u32;

// Each query's first hit in the tile: its shape (NO_SHAPE for none), and that pair's contact.
@group(0) @binding(9) var<storage, read_write> first_shapes: array<u32>;
@group(0) @binding(10) var<storage, read_write> first_contacts: array<Contact>;

// The tile's hitting pairs, in no set order (the host sorts them by pair index): how many
// (zeroed by the host before the dispatch), then each one's pair index and contact.
@group(0) @binding(11) var<storage, read_write> hit_count: atomic<u32>;
@group(0) @binding(12) var<storage, read_write> hit_pairs: array<u32>;
@group(0) @binding(13) var<storage, read_write> hit_contacts: array<Contact>;

// Whether contact c, of shape j, comes before best, of shape best_shape (NO_SHAPE: none yet): it
// hits, and enters sooner, or as soon at a lower index. A total order on the hits, so the first
// hit is the same whatever order the candidates are taken in. The times are compared as integer
// keys (order_key): a GPU may flush subnormal operands of a float comparison, and a t as small
// as 2^-149 is a real answer.
fn comes_first(c: Contact, j: u32, best: Contact, best_shape: u32) -> bool {
    if (!contact_hit(c)) {
        return false;
    }
    if (best_shape == NO_SHAPE) {
        return true;
    }
    let t = order_key(c.t_enter);
    let best_t = order_key(best.t_enter);
    return t < best_t || (t == best_t && j < best_shape);
}

var<workgroup> group_shapes: array<u32, WORKGROUP_SIZE>;
var<workgroup> group_contacts: array<Contact, WORKGROUP_SIZE>;

// One workgroup per query of the tile (rows of workgroups, as the host's grid): each invocation
// takes every WORKGROUP_SIZE-th shape of the query's row, then the first invocation takes the
// best of the workgroup's.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_first_hits(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let q = workgroup_id.y * num_workgroups.x + workgroup_id.x;
    if (q >= shape_params.query_count) {
        return;
    }
    let row = q * shape_params.shape_count;
    var best: Contact;
    var best_shape = NO_SHAPE;
    for (var j = local_index; j < shape_params.shape_count; j += WORKGROUP_SIZE) {
        let c = contacts[row + j];
        if (comes_first(c, j, best, best_shape)) {
            best = c;
            best_shape = j;
        }
    }
    group_shapes[local_index] = best_shape;
    group_contacts[local_index] = best;
    workgroupBarrier();
    if (local_index != 0u) {
        return;
    }
    for (var k = 1u; k < WORKGROUP_SIZE; k += 1u) {
        let shape = group_shapes[k];
        if (shape != NO_SHAPE && comes_first(group_contacts[k], shape, best, best_shape)) {
            best = group_contacts[k];
            best_shape = shape;
        }
    }
    first_shapes[q] = best_shape;
    first_contacts[q] = best;
}

// Every hitting pair of the tile (pair i as in the dense kernels), appended.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_hit_list(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_index(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    let c = contacts[i];
    if (contact_hit(c)) {
        let k = atomicAdd(&hit_count, 1u);
        hit_pairs[k] = i;
        hit_contacts[k] = c;
    }
}
