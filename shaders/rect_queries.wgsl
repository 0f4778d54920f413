// The per-segment queries: first hit, counts, hit list (one invocation owns one segment and
// walks every rect, tiled through workgroup memory), and clipping (one segment, one rect).
//
// The hit list comes out in its final (segment, rect) order, whatever order the atomics gave:
// 1. segment_rects (or grid.wgsl's segment_cells) lists each segment's hits in `found`, each
//    with its place among its segment's (its ordinal), and each segment's count in segment_hits;
// 2. hit_offsets turns the counts into each segment's offset (a prefix sum);
// 3. hit_times computes each hit's t and writes it at its segment's offset plus its ordinal, in
//    first_hits (a rect and its result per entry; the segment is the run it lies in);
// 4. after a grid walk only, whose cells list rects in any order, order_hits sorts each
//    segment's run by rect.
//
// Compiled after shaders/segment_rect.wgsl (src/gpu/shader.rs joins them). CPU mirror:
// src/cpu/rect_queries.rs, with the same names and the same branch order.
//
// A pair segment_rect cannot decide with certainty is never counted, kept or compared here: it
// goes to the `found` list with its flags, and the host decides it exactly and merges it in. So
// does a first-hit candidate whose order against the best so far could not be certified: which
// hit comes first is decided like every other decision, never from the rounded t.

override WORKGROUP_SIZE: u32;
// Which query a `segment_rects` pipeline runs: one of the QUERY_* values (a pipeline constant, so
// each pipeline keeps only its own branch).
override QUERY: u32;
override QUERY_FIRST_HIT: u32;
override QUERY_COUNTS: u32;
override QUERY_HITS: u32;
// FirstHit.rect when the segment hits nothing.
override NO_RECT: u32;
// Bits of QueryParams.filters: which filter arrays are bound.
override FILTER_SEGMENTS: u32;
override FILTER_RECTS: u32;
// A filter that tests against everything.
override FILTER_ALL: u32;

struct Filter {
    category: u32,
    mask: u32,
}

struct FirstHit {
    rect: u32,
    result: PairResult,
}

struct Hit {
    segment: u32,
    rect: u32,
    result: PairResult,
}

// Pairs for the host: how many were found, and the first arrayLength(&hits) of them. When more
// were found the host grows the list or splits the batch, and runs it again.
struct Found {
    count: atomic<u32>,
    hits: array<Hit>,
}

struct QueryParams {
    segment_count: u32,
    rect_count: u32,
    // FILTER_SEGMENTS | FILTER_RECTS: which filter arrays hold real filters.
    filters: u32,
    // Pads the block to 16 bytes.
    padding: u32,
}

@group(0) @binding(0) var<uniform> params: QueryParams;
@group(0) @binding(1) var<storage, read> segments: array<Segment>;
@group(0) @binding(2) var<storage, read> rects: array<Rect>;
@group(0) @binding(3) var<storage, read> segment_filters: array<Filter>;
@group(0) @binding(4) var<storage, read> rect_filters: array<Filter>;
// Per segment, its closest hit (first hit, clip). The hit list's entries in order (QUERY_HITS).
@group(0) @binding(5) var<storage, read_write> first_hits: array<FirstHit>;
// Per segment, its hits (QUERY_COUNTS), its first hit's rect (first_hit_rects), or its listed
// entries and then their offset in the ordered hit list (QUERY_HITS).
@group(0) @binding(6) var<storage, read_write> segment_hits: array<u32>;
@group(0) @binding(7) var<storage, read_write> rect_hits: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> found: Found;

// A box as order keys: a segment's bounding box, or a rect.
struct KeyBox {
    min_x: i32,
    max_x: i32,
    min_y: i32,
    max_y: i32,
}

// The rects of the current tile, their boxes, their filters, and the hits each took in this
// tile.
var<workgroup> tile_rects: array<Rect, WORKGROUP_SIZE>;
var<workgroup> tile_boxes: array<KeyBox, WORKGROUP_SIZE>;
var<workgroup> tile_filters: array<Filter, WORKGROUP_SIZE>;
var<workgroup> tile_hits: array<atomic<u32>, WORKGROUP_SIZE>;

// Computed once per segment (and once per rect and tile), not once per pair.
fn segment_box(s: Segment) -> KeyBox {
    let x0 = order_key(s.x0);
    let y0 = order_key(s.y0);
    let x1 = order_key(s.x1);
    let y1 = order_key(s.y1);
    return KeyBox(min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1));
}

fn rect_box(r: Rect) -> KeyBox {
    return KeyBox(order_key(r.min_x), order_key(r.max_x), order_key(r.min_y), order_key(r.max_y));
}

// Whether a segment's box and a rect share a point: exactly when segment_rect does not reject
// the pair by its first rule (both ends beyond one side of a slab), so a pair that fails is a
// miss and is skipped.
fn boxes_overlap(a: KeyBox, b: KeyBox) -> bool {
    return a.min_x <= b.max_x && b.min_x <= a.max_x && a.min_y <= b.max_y && b.min_y <= a.max_y;
}

// Whether a segment and a rect are tested at all: each one's mask accepts the other's category.
fn is_tested(segment_filter: Filter, rect_filter: Filter) -> bool {
    return (segment_filter.mask & rect_filter.category) != 0u
        && (rect_filter.mask & segment_filter.category) != 0u;
}

// Where a hit enters its rect: nowhere (AXIS_NONE) when the start is inside, so t = 0; else
// the axis and the bound of a side it crosses (x at a corner, where both give the same t).
struct Entry {
    axis: u32,
    bound: f32,
}

fn entry_of(result: PairResult, r: Rect) -> Entry {
    let sides = result.flags >> ENTRY_SHIFT;
    if ((result.flags & FLAG_START_INSIDE) != 0u) {
        return Entry(AXIS_NONE, 0.0);
    }
    if ((sides & SIDE_MIN_X) != 0u) {
        return Entry(AXIS_X, r.min_x);
    }
    if ((sides & SIDE_MAX_X) != 0u) {
        return Entry(AXIS_X, r.max_x);
    }
    if ((sides & SIDE_MIN_Y) != 0u) {
        return Entry(AXIS_Y, r.min_y);
    }
    return Entry(AXIS_Y, r.max_y);
}

// Sign of t_a - t_b for two entries of segment s, decided like segment_rect's (never from the
// rounded t), or UNCERTAIN.
fn compare_entries(s: Segment, a: Entry, b: Entry) -> i32 {
    // No entry is t = 0; an entry through a side is at t > 0 (the start is outside its slab).
    if (a.axis == AXIS_NONE || b.axis == AXIS_NONE) {
        return select(0, 1, a.axis != AXIS_NONE) - select(0, 1, b.axis != AXIS_NONE);
    }
    let plus_x = order_key(s.x1) > order_key(s.x0);
    let plus_y = order_key(s.y1) > order_key(s.y0);
    if (a.axis == b.axis) {
        // Along the motion, the farther bound is crossed later.
        let plus = select(plus_y, plus_x, a.axis == AXIS_X);
        let ka = order_key(a.bound);
        let kb = order_key(b.bound);
        let later = select((ka < kb), (ka > kb), plus);
        return select(select(-1, 1, later), 0, ka == kb);
    }
    // t_x - t_y, from the side of the line the corner (bx, by) lies on.
    let flip = plus_x != plus_y;
    if (a.axis == AXIS_X) {
        return compare_crossings(s, a.bound, b.bound, flip);
    }
    return compare_crossings(s, b.bound, a.bound, !flip);
}

// 1 when a hit on `rect` entering at `entry` beats the best so far: an earlier entry, or on a
// tie the lower rect index; 0 when it does not; UNCERTAIN when the two could not be ordered.
fn is_closer(s: Segment, rect: u32, entry: Entry, best: FirstHit, best_entry: Entry) -> i32 {
    if (best.rect == NO_RECT) {
        return 1;
    }
    let order = compare_entries(s, entry, best_entry);
    if (order == UNCERTAIN) {
        return UNCERTAIN;
    }
    return select(0, 1, order < 0 || (order == 0 && rect < best.rect));
}

fn is_uncertain(result: PairResult) -> bool {
    return result.flags == FLAG_UNCERTAIN;
}

// Hands a pair to the host: a hit for the hit list, or a pair it must decide.
fn push_found(segment: u32, rect: u32, result: PairResult) {
    let k = atomicAdd(&found.count, 1u);
    if (k < arrayLength(&found.hits)) {
        found.hits[k] = Hit(segment, rect, result);
    }
}

// Lists an entry of the hit list (a hit, or a pair the host decides) with its ordinal among its
// segment's entries in t_enter, until hit_times computes t: exact in f32, since the host keeps
// the list within 2^24 entries.
fn list_hit(segment: u32, rect: u32, result: PairResult, search: ptr<function, Search>) {
    push_found(segment, rect, PairResult(f32((*search).hits), result.t_exit, result.flags));
    (*search).hits += 1u;
}

fn segment_filter(segment: u32) -> Filter {
    if ((params.filters & FILTER_SEGMENTS) != 0u) {
        return segment_filters[segment];
    }
    return Filter(FILTER_ALL, FILTER_ALL);
}

fn rect_filter(rect: u32) -> Filter {
    if ((params.filters & FILTER_RECTS) != 0u) {
        return rect_filters[rect];
    }
    return Filter(FILTER_ALL, FILTER_ALL);
}

// The dispatch may be two-dimensional (more than 65,535 workgroups): rows of workgroups.
fn segment_id(workgroup_id: vec3<u32>, num_workgroups: vec3<u32>, local_index: u32) -> u32 {
    return (workgroup_id.y * num_workgroups.x + workgroup_id.x) * WORKGROUP_SIZE + local_index;
}

// What one segment's query holds while it meets its rects.
struct Search {
    // The closest hit so far (QUERY_FIRST_HIT), where it enters, and its rect.
    best: FirstHit,
    best_entry: Entry,
    best_rect: Rect,
    // Certain hits so far (QUERY_COUNTS), entries listed so far (QUERY_HITS).
    hits: u32,
}

fn new_search() -> Search {
    return Search(FirstHit(NO_RECT, PairResult(0.0, 0.0, 0u)), Entry(AXIS_NONE, 0.0),
        Rect(0.0, 0.0, 0.0, 0.0), 0u);
}

// Segment `segment` (s) meets rect `rect` (r), a candidate: its boxes overlap and the filters
// pass. True for a certain hit the caller counts per rect (QUERY_COUNTS).
fn meet(segment: u32, s: Segment, rect: u32, r: Rect, search: ptr<function, Search>) -> bool {
    // Decisions only: t is computed for the hits that need it.
    let result = pair_flags(s, r);
    if (is_uncertain(result)) {
        if (QUERY == QUERY_HITS) {
            list_hit(segment, rect, result, search);
        } else {
            push_found(segment, rect, result);
        }
        return false;
    }
    if ((result.flags & FLAG_HIT) == 0u) {
        return false;
    }
    if (QUERY == QUERY_FIRST_HIT) {
        let entry = entry_of(result, r);
        let closer = is_closer(s, rect, entry, (*search).best, (*search).best_entry);
        // An order the filter could not certify: the host orders this hit exactly.
        if (closer == UNCERTAIN) {
            push_found(segment, rect, result);
        }
        if (closer == 1) {
            (*search).best = FirstHit(rect, result);
            (*search).best_entry = entry;
            (*search).best_rect = r;
        }
    }
    if (QUERY == QUERY_COUNTS) {
        (*search).hits += 1u;
    }
    if (QUERY == QUERY_HITS) {
        // Decisions only: hit_times computes t for every listed hit afterwards.
        list_hit(segment, rect, result, search);
    }
    return true;
}

// Writes a segment's outputs once it has met every rect.
fn finish(segment: u32, s: Segment, search: Search) {
    if (QUERY == QUERY_FIRST_HIT) {
        var best = search.best;
        // t for the closest hit only. When the GPU cannot give it, the host decides that pair
        // and merges it in (it beats the NO_RECT left here).
        if (best.rect != NO_RECT) {
            best.result = pair_times(s, search.best_rect, best.result);
            if (is_uncertain(best.result)) {
                push_found(segment, best.rect, best.result);
                best = FirstHit(NO_RECT, PairResult(0.0, 0.0, 0u));
            }
        }
        first_hits[segment] = best;
    }
    if (QUERY == QUERY_COUNTS || QUERY == QUERY_HITS) {
        segment_hits[segment] = search.hits;
    }
}

// Partial totals of one block of a prefix sum.
var<workgroup> scan_totals: array<u32, WORKGROUP_SIZE>;

// Shares each invocation's total (`own_total`) with its workgroup: returns the sum of the totals
// of the invocations before it.
fn scan_share(local_index: u32, own_total: u32) -> u32 {
    scan_totals[local_index] = own_total;
    workgroupBarrier();
    var before = 0u;
    for (var k = 0u; k < local_index; k++) {
        before += scan_totals[k];
    }
    return before;
}

// Whether the found list held every entry listed: else the host runs the chunk again with more
// room, and the hit list's later steps have nothing to place.
fn found_whole() -> bool {
    return atomicLoad(&found.count) <= arrayLength(&found.hits);
}

// The hit list's second step (one workgroup): each segment's count of listed entries in
// segment_hits becomes their offset in the ordered list, an exclusive prefix sum in place. Each
// invocation adds up a run of the counts serially (the host keeps a chunk's segments within
// WORKGROUP_SIZE * 2^14, within a software GPU's loop budget).
@compute @workgroup_size(WORKGROUP_SIZE)
fn hit_offsets(@builtin(local_invocation_index) local_index: u32) {
    let n = params.segment_count;
    let per_invocation = (n + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let first = local_index * per_invocation;
    let last = min(first + per_invocation, n);
    var own = 0u;
    for (var k = first; k < last; k++) {
        own += segment_hits[k];
    }
    var running = scan_share(local_index, own);
    for (var k = first; k < last; k++) {
        let count = segment_hits[k];
        segment_hits[k] = running;
        running += count;
    }
}

// The hit list's third step (QUERY_HITS): t for each entry the first step listed (segment_rects,
// or grid.wgsl's segment_cells), written at its final place: its segment's offset plus its
// ordinal. Apart, every lane of the walk does the same work and every lane here too: computed
// inline, each hit's t (a few hundred integer operations) held up the lanes beside it. The
// dispatch is a fixed number of workgroups whatever the list's length (only the GPU knows it),
// each invocation taking every stride-th entry. A hit whose t the GPU cannot give becomes
// FLAG_UNCERTAIN, and the host decides it; an uncertain pair is left as it is.
@compute @workgroup_size(WORKGROUP_SIZE)
fn hit_times(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    if (!found_whole()) {
        return;
    }
    let listed = atomicLoad(&found.count);
    let stride = num_workgroups.x * WORKGROUP_SIZE;
    for (var k = workgroup_id.x * WORKGROUP_SIZE + local_index; k < listed; k += stride) {
        let h = found.hits[k];
        let place = segment_hits[h.segment] + u32(h.result.t_enter);
        var result = PairResult(0.0, 0.0, h.result.flags);
        if (!is_uncertain(h.result)) {
            result = pair_times(segments[h.segment], rects[h.rect], h.result);
        }
        first_hits[place] = FirstHit(h.rect, result);
    }
}

// The longest run of one segment's hits order_hits sorts (a function-scope array's length must
// be a constant, not an override: tests/shader.rs holds it equal to the CPU mirror's).
const ORDER_RUN_LIMIT: u32 = 64u;

// The hit list's last step after a grid walk (one invocation per segment): its run of entries
// sorted by rect, by insertion into the invocation's own array (each entry read and written
// once in memory), and written back only when it was not in order. A run longer than
// ORDER_RUN_LIMIT is left as it is; the host checks every run's order and sorts one that is not.
@compute @workgroup_size(WORKGROUP_SIZE)
fn order_hits(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let segment = segment_id(workgroup_id, num_workgroups, local_index);
    if (segment >= params.segment_count || !found_whole()) {
        return;
    }
    let start = segment_hits[segment];
    var end = atomicLoad(&found.count);
    if (segment + 1u < params.segment_count) {
        end = segment_hits[segment + 1u];
    }
    let len = end - start;
    if (len > ORDER_RUN_LIMIT) {
        return;
    }
    var run: array<FirstHit, ORDER_RUN_LIMIT>;
    var moved = false;
    for (var i = 0u; i < len; i++) {
        let entry = first_hits[start + i];
        var j = i;
        for (; j > 0u && run[j - 1u].rect > entry.rect; j--) {
            run[j] = run[j - 1u];
        }
        run[j] = entry;
        moved = moved || j != i;
    }
    if (moved) {
        for (var i = 0u; i < len; i++) {
            first_hits[start + i] = run[i];
        }
    }
}

// First hit, rects only: after the first-hit kernel (segment_rects or grid.wgsl's
// segment_cells), each segment's rect (NO_RECT on a miss) goes to segment_hits, so that 4 bytes
// a segment come back instead of a whole FirstHit's 16.
@compute @workgroup_size(WORKGROUP_SIZE)
fn first_hit_rects(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let segment = segment_id(workgroup_id, num_workgroups, local_index);
    if (segment >= params.segment_count) {
        return;
    }
    segment_hits[segment] = first_hits[segment].rect;
}

// Every segment against every rect, for the query QUERY: the closest hit per segment, the hits
// per segment and per rect, or every hit.
@compute @workgroup_size(WORKGROUP_SIZE)
fn segment_rects(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let segment = segment_id(workgroup_id, num_workgroups, local_index);
    // Invocations past the last segment still load rects and meet at the barriers.
    let live = segment < params.segment_count;
    var s = Segment(0.0, 0.0, 0.0, 0.0);
    var s_filter = Filter(0u, 0u);
    if (live) {
        s = segments[segment];
        s_filter = segment_filter(segment);
    }
    var search = new_search();
    let s_box = segment_box(s);
    for (var base = 0u; base < params.rect_count; base += WORKGROUP_SIZE) {
        let own = base + local_index;
        if (own < params.rect_count) {
            tile_rects[local_index] = rects[own];
            tile_boxes[local_index] = rect_box(rects[own]);
            tile_filters[local_index] = rect_filter(own);
        }
        if (QUERY == QUERY_COUNTS) {
            atomicStore(&tile_hits[local_index], 0u);
        }
        workgroupBarrier();
        let tile = min(WORKGROUP_SIZE, params.rect_count - base);
        // 32 rects at a time: first a bit per candidate (boxes overlap, filters pass), then
        // the pair for the candidates only, in rect order. An invocation's cost follows its
        // candidates, not the tile.
        for (var word = 0u; word < tile; word += 32u) {
            var candidates = 0u;
            for (var k = word; k < min(word + 32u, tile); k++) {
                if (live && boxes_overlap(s_box, tile_boxes[k]) && is_tested(s_filter, tile_filters[k])) {
                    candidates |= 1u << (k - word);
                }
            }
            while (candidates != 0u) {
                let k = word + firstTrailingBit(candidates);
                candidates &= candidates - 1u;
                if (meet(segment, s, base + k, tile_rects[k], &search) && QUERY == QUERY_COUNTS) {
                    atomicAdd(&tile_hits[k], 1u);
                }
            }
        }
        workgroupBarrier();
        // One global atomic per rect and tile, not one per hit.
        if (QUERY == QUERY_COUNTS && own < params.rect_count) {
            let tile_count = atomicLoad(&tile_hits[local_index]);
            if (tile_count != 0u) {
                atomicAdd(&rect_hits[own], tile_count);
            }
        }
    }
    if (live) {
        finish(segment, s, search);
    }
}

// Each segment against one rect: rect 0 when there is one rect, else the segment's own rect.
// The result goes to first_hits (rect NO_RECT on a miss); the host computes the clipped points.
@compute @workgroup_size(WORKGROUP_SIZE)
fn clip(
    @builtin(workgroup_id) workgroup_id: vec3<u32>,
    @builtin(num_workgroups) num_workgroups: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let segment = segment_id(workgroup_id, num_workgroups, local_index);
    if (segment >= params.segment_count) {
        return;
    }
    let rect = select(segment, 0u, params.rect_count == 1u);
    let result = segment_rect(segments[segment], rects[rect]);
    if (is_uncertain(result)) {
        push_found(segment, rect, result);
    }
    first_hits[segment] = FirstHit(select(NO_RECT, rect, (result.flags & FLAG_HIT) != 0u), result);
}
