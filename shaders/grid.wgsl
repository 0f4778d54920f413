// The broad phase on the GPU: a uniform grid over the rects, built here (spans and counts, a
// prefix sum, the fill), and the walk of each segment through it for the per-segment queries.
//
// Compiled after shaders/segment_rect.wgsl, shaders/rect_queries.wgsl and shaders/grid_walk.wgsl
// (src/gpu/shader.rs joins them): the walk is grid_walk.wgsl's, and a segment meets its
// candidates with rect_queries.wgsl's `meet`, so every pair is decided as the brute force decides
// it. CPU mirror: src/cpu/grid.rs, with the same names and the same
// branch order (docs/broad_phase.md gives the design).
//
// Two differences from the CPU, both deliberate:
// - the fill takes a cell's slots with atomics, so a cell's entries come in any order. The walk
//   never depends on it: a first hit is the least (t, rect) over the candidates, whatever order
//   they come in; counts add up; the hit list's runs are sorted by rect (order_hits);
// - a first-hit search ends at a row boundary only when the order of its best hit and the
//   boundary is certain (compare_entries may answer UNCERTAIN here).

// Cells each invocation of the prefix sum adds up serially.
override SCAN_PER_INVOCATION: u32;

// Entries per cell while building; then each cell's next free slot while filling.
@group(1) @binding(2) var<storage, read_write> cell_counts: array<atomic<u32>>;
// The prefix sum's block totals.
@group(1) @binding(7) var<storage, read_write> block_sums: array<u32>;

// Per-segment queries through the grid: each segment meets the rects of the cells it walks
// (each once), or every rect when the grid would cost it more. Rect chunks are not split: the
// grid covers the batch's rects.
@compute @workgroup_size(WORKGROUP_SIZE)
fn segment_cells(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let segment = segment_id(workgroup_id, num_workgroups, local_index);
    if (segment >= params.segment_count) {
        return;
    }
    let s = segments[segment];
    let s_filter = segment_filter(segment);
    let s_box = segment_box(s);
    var search = new_search();
    // Past a hit at t = 0 only a lower rect index can win.
    var ceiling = NO_RECT;
    let walk = walk_of(s);
    if (prefers_brute_force(s, walk, params.rect_count)) {
        // In ascending order: past the ceiling, no later rect can win either.
        for (var rect = 0u; rect < params.rect_count && rect <= ceiling; rect++) {
            let r = rects[rect];
            if (boxes_overlap(s_box, rect_box(r)) && is_tested(s_filter, rect_filter(rect))) {
                if (meet(segment, s, rect, r, &search)) {
                    if (QUERY == QUERY_COUNTS) {
                        atomicAdd(&rect_hits[rect], 1u);
                    }
                    if (QUERY == QUERY_FIRST_HIT && search.best.rect == rect && search.best_entry.axis == AXIS_NONE) {
                        ceiling = rect;
                    }
                }
            }
        }
        finish(segment, s, search);
        return;
    }
    var prev = vec2(0u, 0u);
    for (var step = 0u; step <= walk.row_max - walk.row_min; step++) {
        let row = walk_row(walk, step);
        if (step > 0u && QUERY == QUERY_FIRST_HIT && search.best.rect != NO_RECT) {
            // Rows come in t order: a best hit certainly before the boundary into this row is
            // final (UNCERTAIN is not < 0).
            let bound = axis_bound(grid.ys, select(row, row - 1u, walk.up));
            if (compare_entries(s, search.best_entry, Entry(AXIS_Y, bound)) < 0) {
                break;
            }
        }
        let range = row_columns(s, walk, row, step == 0u, prev);
        for (var col_step = 0u; col_step <= range.y - range.x; col_step++) {
            let col = walk_col(walk, range, col_step);
            let cell = row * grid.cols + col;
            let end = cell_start[cell + 1u];
            for (var e = cell_start[cell]; e < end; e++) {
                let rect = entries[e];
                // The cell's entries come in any order: skip, not stop.
                if (rect > ceiling) {
                    continue;
                }
                let b = boxes[e];
                // The reference's first rule (boxes apart is a miss), and the filters.
                if (!boxes_overlap(s_box, rect_box(b)) || !is_tested(s_filter, rect_filter(rect))) {
                    continue;
                }
                if (!is_first_visit(spans[rect], walk, col, row, range, step == 0u, prev)) {
                    continue;
                }
                if (meet(segment, s, rect, b, &search)) {
                    if (QUERY == QUERY_COUNTS) {
                        atomicAdd(&rect_hits[rect], 1u);
                    }
                    if (QUERY == QUERY_FIRST_HIT && search.best.rect == rect && search.best_entry.axis == AXIS_NONE) {
                        ceiling = rect;
                    }
                }
            }
            // The first cell holds the start point, so it lists every rect a hit at t = 0 can
            // be on: past a t = 0 hit, nothing later can win.
            if (step == 0u && col_step == 0u && ceiling != NO_RECT) {
                break;
            }
        }
        if (ceiling != NO_RECT) {
            break;
        }
        prev = range;
    }
    finish(segment, s, search);
}

// The build, step 1 (cell_counts cleared): each rect's span, and a count in each of its cells.
@compute @workgroup_size(WORKGROUP_SIZE)
fn grid_count(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let rect = segment_id(workgroup_id, num_workgroups, local_index);
    if (rect >= grid.rect_count) {
        return;
    }
    let span = rect_span(rects[rect]);
    spans[rect] = span;
    for (var row = span.row_min; row <= span.row_max; row++) {
        for (var col = span.col_min; col <= span.col_max; col++) {
            atomicAdd(&cell_counts[row * grid.cols + col], 1u);
        }
    }
}

// The build, step 2: each block of WORKGROUP_SIZE * SCAN_PER_INVOCATION cells gets its counts'
// exclusive prefix sum in cell_start, and its total in block_sums.
@compute @workgroup_size(WORKGROUP_SIZE)
fn grid_scan_blocks(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let block = workgroup_id.y * num_workgroups.x + workgroup_id.x;
    let cells = grid.cols * grid.rows;
    let first = (block * WORKGROUP_SIZE + local_index) * SCAN_PER_INVOCATION;
    var own = 0u;
    for (var k = 0u; k < SCAN_PER_INVOCATION; k++) {
        if (first + k < cells) {
            own += atomicLoad(&cell_counts[first + k]);
        }
    }
    var running = scan_share(local_index, own);
    for (var k = 0u; k < SCAN_PER_INVOCATION; k++) {
        if (first + k < cells) {
            cell_start[first + k] = running;
            running += atomicLoad(&cell_counts[first + k]);
        }
    }
    // (A two-dimensional dispatch may have workgroups past the last block.)
    if (local_index == WORKGROUP_SIZE - 1u && block * WORKGROUP_SIZE * SCAN_PER_INVOCATION < cells) {
        block_sums[block] = running;
    }
}

// The build, step 3 (one workgroup): the blocks' totals become their exclusive prefix sum, and
// the grand total goes to cell_start[cells].
@compute @workgroup_size(WORKGROUP_SIZE)
fn grid_scan_sums(@builtin(local_invocation_index) local_index: u32) {
    let cells = grid.cols * grid.rows;
    let per_block = WORKGROUP_SIZE * SCAN_PER_INVOCATION;
    let blocks = (cells + per_block - 1u) / per_block;
    let per_invocation = (blocks + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let first = local_index * per_invocation;
    var own = 0u;
    for (var k = 0u; k < per_invocation; k++) {
        if (first + k < blocks) {
            own += block_sums[first + k];
        }
    }
    var running = scan_share(local_index, own);
    for (var k = 0u; k < per_invocation; k++) {
        if (first + k < blocks) {
            let total = block_sums[first + k];
            block_sums[first + k] = running;
            running += total;
        }
    }
    if (local_index == WORKGROUP_SIZE - 1u) {
        cell_start[cells] = running;
    }
}

// The build, step 4: each cell's start gets its block's offset.
@compute @workgroup_size(WORKGROUP_SIZE)
fn grid_add_offsets(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let cell = segment_id(workgroup_id, num_workgroups, local_index);
    if (cell >= grid.cols * grid.rows) {
        return;
    }
    cell_start[cell] += block_sums[cell / (WORKGROUP_SIZE * SCAN_PER_INVOCATION)];
}

// The build, step 5 (cell_counts cleared): each rect takes a slot in each of its cells.
@compute @workgroup_size(WORKGROUP_SIZE)
fn grid_fill(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let rect = segment_id(workgroup_id, num_workgroups, local_index);
    if (rect >= grid.rect_count) {
        return;
    }
    let span = spans[rect];
    let r = rects[rect];
    for (var row = span.row_min; row <= span.row_max; row++) {
        for (var col = span.col_min; col <= span.col_max; col++) {
            let cell = row * grid.cols + col;
            let at = cell_start[cell] + atomicAdd(&cell_counts[cell], 1u);
            entries[at] = rect;
            boxes[at] = r;
        }
    }
}
