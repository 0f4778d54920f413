// Segment x polygon through the broad phase's grid (docs/broad_phase.md): each query segment
// walks the grid over the polygons' boxes and lists the polygons whose box its own meets
// (shaders/shape_walk.wgsl); then one invocation per listed candidate tests the query against
// every edge of its polygon (polygon_edge, as the dense entry point does), and writes the edges'
// contacts side by side into one list. The host gathers each candidate's edges into its
// polygon's answer (polygon_contact, as it gathers the dense pairs') and decides the edges left
// to it (EDGE_HOST), so that every pair gets the bytes the brute force gives it.
//
// Compiled last, after the polygons' kernel (shaders/segment_polygon.wgsl over
// shaders/shape_passes.wgsl: the tile, polygon_edge, the list's bindings), shaders/grid_walk.wgsl
// (the walk, group 1) and shaders/shape_walk.wgsl (the candidates, and the pass that lists
// them). The host builds the grid over the polygons' boxes and uploads it with the polygons'
// table; the tile's shapes are the polygons' edges. The polygons' kernel does not reduce, so the
// walk's NO_SHAPE is declared here.

override NO_SHAPE: u32;

// The polygons: how many, then where each one's edges start in polygon_edges, and where the
// last one's end (count + 1 offsets).
struct PolygonTable {
    count: u32,
    offsets: array<u32>,
}

@group(0) @binding(17) var<storage, read> polygon_table: PolygonTable;
// Where each listed candidate's edges' contacts start in edge_contacts, at its place in the list.
@group(0) @binding(18) var<storage, read_write> listed_edges: array<u32>;
// How many edges' contacts the candidates took (zeroed by the host). It goes on past the room
// of edge_contacts: the host then runs the tile again with room for them all.
@group(0) @binding(19) var<storage, read_write> edge_count: atomic<u32>;

// The list's hooks: the grid holds the polygons, and lists those whose box the query's meets,
// exactly (apart, as polygon_edge tests it: a query apart from the box gets no bits from any
// edge, and misses).
fn grid_shapes() -> u32 {
    return polygon_table.count;
}

fn grid_candidate(query: Segment, p: u32) -> bool {
    let first = polygon_table.offsets[p];
    return first < polygon_table.offsets[p + 1u] && !apart(query, polygon_edges[first].polygon);
}

// Each listed candidate's edges, in their polygon's order, from the place it takes in
// edge_contacts (listed_edges). One invocation loops over them all: a software GPU ends a long
// loop early without an error, so the host sends a polygon of more edges than
// MOST_EDGES_A_CANDIDATE (src/gpu/shapes/polygon_grid.rs) to the dense passes instead.
@compute @workgroup_size(WORKGROUP_SIZE)
fn polygon_grid_edges(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    var k: u32;
    let i = grid_listed(workgroup_id, num_workgroups, local_index, &k);
    if (i >= shape_params.pair_count || k >= arrayLength(&listed_edges)) {
        return;
    }
    let p = i % polygon_table.count;
    let query = queries[i / polygon_table.count];
    let first = polygon_table.offsets[p];
    let edges = polygon_table.offsets[p + 1u] - first;
    let at = atomicAdd(&edge_count, edges);
    listed_edges[k] = at;
    if (at + edges > arrayLength(&edge_contacts)) {
        return;
    }
    for (var e = 0u; e < edges; e += 1u) {
        edge_contacts[at + e] = polygon_edge(query, polygon_edges[first + e]);
    }
}
