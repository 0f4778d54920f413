// The queries over shapes, reduced on the GPU (docs/semantics.md, "Queries over shapes"): the
// hitting pairs, from a tile's contacts as the dense pairs' passes leave them
// (shaders/shape_passes.wgsl, binding 3, query-major: pair i is query i / shape_count, shape
// i % shape_count), so that the host reads back the hits alone instead of every pair.
//
// Compiled after a shape's kernel file, which names its contact `Contact` and says whether one
// hits (`contact_hit`). CPU mirror: src/cpu/shape_queries.rs, same function names.

// No shape: where the grid's walk ends (shaders/shape_walk.wgsl, which a reducing kernel's grid
// file follows; the host's value).
override NO_SHAPE: u32;

// The tile's hitting pairs, in no set order (the host sorts them by pair index): how many
// (zeroed by the host before the dispatch), then each one's pair index and contact.
@group(0) @binding(11) var<storage, read_write> hit_count: atomic<u32>;
@group(0) @binding(12) var<storage, read_write> hit_pairs: array<u32>;
@group(0) @binding(13) var<storage, read_write> hit_contacts: array<Contact>;

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
