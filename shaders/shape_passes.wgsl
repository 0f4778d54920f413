// The passes over a tile of queries x shapes, written once for every shape: the tile's uniform
// block and buffers, each invocation's pair, the list between the dense pairs' two passes, the
// counts, and their entry points (docs/semantics.md, "Queries over shapes").
//
// Compiled after a shape's kernel file, which binds its shapes (binding 2) and defines the hooks
// the entry points call, each the kernel's form of what the host's `Shape` says:
// - `alias Contact` and `contact_hit(c)`: a pair's result and whether it hits
//   (`Shape::Contact`, `ShapeContact::hit`);
// - `certain_miss(query, j)`: whether plain float tests certify that the query misses shape j
//   of the tile (its box, `Shape::bounds`, and what else the shape can certify on any GPU); false
//   where they cannot tell. The host's twin is the batch path's cull and `Shape::filtered`;
// - `grid_verdict(query, j)`: what plain float tests certify of the grid's candidates
//   (shaders/shape_grid.wgsl): SHAPE_APART for a miss (certain_miss's, or a costlier one where
//   it pays on the few candidates a walk lists, not over every pair of a dense pass),
//   SHAPE_MEETS for a hit, UNCERTAIN otherwise; its bounds hold on any GPU, as certain_miss's;
// - `shape_miss()`: the contact of a miss (`Shape::MISS`);
// - `shape_exact(query, j)`: the pair's contact, exactly (`Shape::exact`);
// - `shape_hit(query, j)`: whether the pair hits, exactly, without t (`Shape::hit`): the counts.
// Polygons bind other types at bindings 2 and 3 and run their own dense entry point over this
// tile (shaders/segment_polygon.wgsl, and the README's "Layout" for why).

// The tile's queries, each pair's contact (pair i is query i / shape_count, shape
// i % shape_count: query-major), and each shape's box (Shape::bounds, from the host).
@group(0) @binding(1) var<storage, read> queries: array<Segment>;
@group(0) @binding(3) var<storage, read_write> contacts: array<Contact>;
@group(0) @binding(4) var<storage, read> bounds: array<Rect>;

// Invocations per workgroup of the shapes' kernels (the host's).
override WORKGROUP_SIZE: u32;

// grid_verdict's certain answers (its third is UNCERTAIN, shaders/segment_rect.wgsl).
const SHAPE_APART: i32 = 0;
const SHAPE_MEETS: i32 = 1;

// The tile's uniform block: its queries, its shapes, and their pairs.
struct ShapeParams {
    query_count: u32,
    shape_count: u32,
    pair_count: u32,
    // The most workgroups a dispatch may have in x (the host's limit): list_dispatch's rows.
    row_workgroups: u32,
}

@group(0) @binding(0) var<uniform> shape_params: ShapeParams;

// Whether segment s's box and a shape's box (Shape::bounds, from the host) are apart: the pair
// then misses, and the exact path is skipped. Plain comparisons, sound on any GPU (flushing
// subnormal operands to zero only ever turns "apart" into "not apart"). Its CPU twin is the
// batch path's cull (masks_portable in src/cpu/batched/cull.rs and its SIMD forms).
fn boxes_apart(s: Segment, b: Rect) -> bool {
    return max(s.x0, s.x1) < b.min_x || b.max_x < min(s.x0, s.x1) || max(s.y0, s.y1) < b.min_y || b.max_y < min(s.y0, s.y1);
}

// The outputs of shape_counts: hits per query and per shape of the tile, zeroed by the host
// before each dispatch. Atomic adds: a sum is the same in any
// order, so the counts are bytes the host can compare.
@group(0) @binding(5) var<storage, read_write> query_hits: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> shape_hits: array<atomic<u32>>;

// One hitting pair (query q, shape j of the tile), counted.
fn count_hit(q: u32, j: u32) {
    atomicAdd(&query_hits[q], 1u);
    atomicAdd(&shape_hits[j], 1u);
}

// The invocation's place in a dispatch of rows of workgroups (chunks::workgroup_grid on the
// host): every shape entry point's pair, or list entry, index.
fn invocation_index(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32) -> u32 {
    return (workgroup_id.y * num_workgroups.x + workgroup_id.x) * WORKGROUP_SIZE + local_index;
}

// The dense pairs' two passes (shape_pairs_dense, then shape_pairs_listed): the first answers every pair it can at once and lists the others here, in any order;
// the second runs the exact path over the list, so that its invocations all do the same work
// instead of idling beside a neighbour on the exact path. Each pair's contact still lands at
// its own index: the order of the list changes no byte.
struct PairList {
    // How many pairs are listed (zeroed by the host before the first pass).
    count: atomic<u32>,
    // The second pass's workgroups (list_dispatch writes them): an indirect dispatch.
    x: u32,
    y: u32,
    z: u32,
}
@group(0) @binding(7) var<storage, read_write> pair_list: PairList;
@group(0) @binding(8) var<storage, read_write> listed_pairs: array<u32>;

// Pair i goes to the second pass.
fn list_pair(i: u32) {
    listed_pairs[atomicAdd(&pair_list.count, 1u)] = i;
}

// The second pass's workgroups, rows of at most row_workgroups: one invocation writes them.
@compute @workgroup_size(WORKGROUP_SIZE)
fn list_dispatch(@builtin(local_invocation_index) local_index: u32) {
    if (local_index != 0u) {
        return;
    }
    let groups = (atomicLoad(&pair_list.count) + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let x = max(min(groups, shape_params.row_workgroups), 1u);
    pair_list.x = x;
    pair_list.y = (groups + x - 1u) / x;
    pair_list.z = 1u;
}

// The listed pair the second pass's invocation takes, or the pair count (past every pair) when
// it has none.
fn listed_pair(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32) -> u32 {
    let k = invocation_index(workgroup_id, num_workgroups, local_index);
    if (k >= atomicLoad(&pair_list.count)) {
        return shape_params.pair_count;
    }
    return listed_pairs[k];
}

// The first of the dense pairs' two passes, over every pair of the tile (rows of workgroups): a
// miss certain_miss certifies is written here, every other pair listed for shape_pairs_listed.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_pairs_dense(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_index(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    if (certain_miss(queries[i / shape_params.shape_count], i % shape_params.shape_count)) {
        contacts[i] = shape_miss();
        return;
    }
    list_pair(i);
}

// The second pass, over the pairs shape_pairs_dense listed: each one's contact, exactly.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_pairs_listed(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = listed_pair(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    contacts[i] = shape_exact(queries[i / shape_params.shape_count], i % shape_params.shape_count);
}

// The counts' first pass, over every pair of the tile: a pair certain_miss certifies is not a hit,
// every other pair is listed for shape_counts_listed (as the dense pairs' first pass lists them,
// so that no invocation of this pass holds the exact path's code and its variables).
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_counts(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = invocation_index(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    if (!certain_miss(queries[i / shape_params.shape_count], i % shape_params.shape_count)) {
        list_pair(i);
    }
}

// The counts' second pass, over the pairs shape_counts listed: hits per query and per shape of
// the tile, exactly, without t.
@compute @workgroup_size(WORKGROUP_SIZE)
fn shape_counts_listed(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let i = listed_pair(workgroup_id, num_workgroups, local_index);
    if (i >= shape_params.pair_count) {
        return;
    }
    let q = i / shape_params.shape_count;
    let j = i % shape_params.shape_count;
    if (shape_hit(queries[q], j)) {
        count_hit(q, j);
    }
}
