//! CPU mirror of `shaders/rect_queries.wgsl`: the per-segment queries under the same names, in the
//! same branch order. The shader's workgroup tiles of rects become a plain loop over words of 32
//! rects (a tile holds whole words); its `found` list becomes a `Vec`.
//!
//! The CPU decides every pair exactly inline, so `is_uncertain` never holds here; the branch is
//! kept so that the two files read alike.

use super::segment_rect::{
    AXIS_NONE, AXIS_X, AXIS_Y, UNCERTAIN, compare_crossings, decide_exactly, order_key, pair_flags,
    pair_times, segment_rect, select_i32,
};
use crate::query::Batch;
use crate::types::{Filter, FirstHit, Hit, PairResult, Rect, Segment, Sides, flags};

const SIDE_MIN_X: u32 = Sides::MIN_X.bits();
const SIDE_MAX_X: u32 = Sides::MAX_X.bits();
const SIDE_MIN_Y: u32 = Sides::MIN_Y.bits();

/// Which query `segment_rects` runs: the shader's `QUERY` pipeline constant takes these values.
pub mod query {
    /// The closest hit per segment.
    pub const QUERY_FIRST_HIT: u32 = 0;
    /// Hits per segment and per rect.
    pub const QUERY_COUNTS: u32 = 1;
    /// Every hitting pair.
    pub const QUERY_HITS: u32 = 2;
}

/// The longest run of one segment's hits the shader's `order_hits` sorts (after a grid walk);
/// the host sorts a longer one. Each costs up to `n * (n - 1) / 2` swaps of one invocation.
pub const ORDER_RUN_LIMIT: u32 = 64;

/// Bits of the shader's `QueryParams.filters`: which filter arrays hold real filters.
pub const FILTER_SEGMENTS: u32 = 1;
pub const FILTER_RECTS: u32 = 2;

use query::{QUERY_COUNTS, QUERY_FIRST_HIT, QUERY_HITS};

const NO_RECT: u32 = FirstHit::NO_RECT;

/// Where `segment_rects` writes: the shader's `first_hits`, `segment_hits`, `rect_hits` and
/// `found` bindings. A query writes only its own (the others may be empty).
pub struct QueryOutputs<'a> {
    /// One per segment (QUERY_FIRST_HIT).
    pub first_hits: &'a mut [FirstHit],
    /// One per segment: its hits (QUERY_COUNTS), or its listed entries (QUERY_HITS), which the
    /// shader's `hit_offsets` turns into offsets (mirrored by [`hit_offsets`]).
    pub segment_hits: &'a mut [u32],
    /// One per rect, added to (QUERY_COUNTS).
    pub rect_hits: &'a mut [u64],
    /// Hitting pairs in (segment, rect) order (QUERY_HITS), appended to.
    pub found: &'a mut Vec<Hit>,
}

/// Whether a segment and a rect are tested at all: each one's mask accepts the other's category.
#[inline(always)]
pub(crate) fn is_tested(segment_filter: &Filter, rect_filter: &Filter) -> bool {
    (segment_filter.mask & rect_filter.category) != 0
        && (rect_filter.mask & segment_filter.category) != 0
}

/// A box as order keys: a segment's bounding box, or a rect.
#[derive(Clone, Copy, Debug)]
struct KeyBox {
    min_x: f32,
    max_x: f32,
    min_y: f32,
    max_y: f32,
}

/// Computed once per segment (and once per rect), not once per pair.
#[inline(always)]
fn segment_box(s: &Segment) -> KeyBox {
    let x0 = order_key(s.x0);
    let y0 = order_key(s.y0);
    let x1 = order_key(s.x1);
    let y1 = order_key(s.y1);
    KeyBox {
        min_x: x0.min(x1),
        max_x: x0.max(x1),
        min_y: y0.min(y1),
        max_y: y0.max(y1),
    }
}

#[inline(always)]
fn rect_box(r: &Rect) -> KeyBox {
    KeyBox {
        min_x: order_key(r.min_x),
        max_x: order_key(r.max_x),
        min_y: order_key(r.min_y),
        max_y: order_key(r.max_y),
    }
}

/// Whether a segment's box and a rect share a point: exactly when `segment_rect` does not
/// reject the pair by its first rule (both ends beyond one side of a slab), so a pair that
/// fails is a miss and is skipped. [`super::batched`] runs the same test 16 rects at a time.
#[inline(always)]
fn boxes_overlap(a: &KeyBox, b: &KeyBox) -> bool {
    a.min_x <= b.max_x && b.min_x <= a.max_x && a.min_y <= b.max_y && b.min_y <= a.max_y
}

/// Where a hit enters its rect: nowhere (AXIS_NONE) when the start is inside, so t = 0; else
/// the axis and the bound of a side it crosses (x at a corner, where both give the same t).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    axis: u32,
    bound: f32,
}

impl Entry {
    /// Where the segment crosses the line `axis = bound` (AXIS_X or AXIS_Y), which it must cross
    /// at some t > 0.
    pub(crate) fn crossing(axis: u32, bound: f32) -> Self {
        Self { axis, bound }
    }

    /// No hit yet (the start of a first-hit search).
    pub(crate) const NONE: Self = Self {
        axis: AXIS_NONE,
        bound: 0.0,
    };

    /// Whether the hit is at t = 0 (the segment starts in the rect): of a real hit, the
    /// earliest there is.
    pub(crate) fn is_start(&self) -> bool {
        self.axis == AXIS_NONE
    }
}

#[inline(always)]
pub(crate) fn entry_of(result: &PairResult, r: &Rect) -> Entry {
    let sides = result.flags >> flags::ENTRY_SHIFT;
    if (result.flags & flags::START_INSIDE) != 0 {
        return Entry {
            axis: AXIS_NONE,
            bound: 0.0,
        };
    }
    let (axis, bound) = if (sides & SIDE_MIN_X) != 0 {
        (AXIS_X, r.min_x)
    } else if (sides & SIDE_MAX_X) != 0 {
        (AXIS_X, r.max_x)
    } else if (sides & SIDE_MIN_Y) != 0 {
        (AXIS_Y, r.min_y)
    } else {
        (AXIS_Y, r.max_y)
    };
    Entry { axis, bound }
}

/// WGSL's `select(f, t, cond)` for bool.
#[inline(always)]
fn select_bool(f: bool, t: bool, cond: bool) -> bool {
    if cond { t } else { f }
}

/// Sign of t_a − t_b for two entries of segment s, decided like `segment_rect`'s (never from
/// the rounded t).
#[inline(always)]
pub(crate) fn compare_entries(s: &Segment, a: Entry, b: Entry) -> i32 {
    // No entry is t = 0; an entry through a side is at t > 0 (the start is outside its slab).
    if a.axis == AXIS_NONE || b.axis == AXIS_NONE {
        return (a.axis != AXIS_NONE) as i32 - (b.axis != AXIS_NONE) as i32;
    }
    let plus_x = order_key(s.x1) > order_key(s.x0);
    let plus_y = order_key(s.y1) > order_key(s.y0);
    if a.axis == b.axis {
        // Along the motion, the farther bound is crossed later.
        let plus = if a.axis == AXIS_X { plus_x } else { plus_y };
        let ka = order_key(a.bound);
        let kb = order_key(b.bound);
        let later = select_bool(ka < kb, ka > kb, plus);
        return if ka == kb {
            0
        } else {
            select_i32(-1, 1, later)
        };
    }
    // t_x − t_y, from the side of the line the corner (bx, by) lies on.
    let flip = plus_x != plus_y;
    if a.axis == AXIS_X {
        let order = compare_crossings(s, a.bound, b.bound, flip);
        return decide_exactly(order, s, a.bound, b.bound, flip); // backend: the CPU decides inline
    }
    let order = compare_crossings(s, b.bound, a.bound, !flip);
    decide_exactly(order, s, b.bound, a.bound, !flip) // backend: the CPU decides inline
}

/// 1 when a hit on `rect` entering at `entry` beats the best so far: an earlier entry, or on a
/// tie the lower rect index; 0 when it does not. (The shader may also answer UNCERTAIN.)
#[inline(always)]
pub(crate) fn is_closer(
    s: &Segment,
    rect: u32,
    entry: Entry,
    best: &FirstHit,
    best_entry: Entry,
) -> i32 {
    if best.rect == NO_RECT {
        return 1;
    }
    let order = compare_entries(s, entry, best_entry);
    if order == UNCERTAIN {
        return UNCERTAIN;
    }
    (order < 0 || (order == 0 && rect < best.rect)) as i32
}

/// For the host's merges: whether a hit of segment `s` on `rects[rect]` beats `best` (a first
/// hit of `s` among the same `rects`), decided exactly.
pub fn beats(s: &Segment, rects: &[Rect], rect: u32, result: &PairResult, best: &FirstHit) -> bool {
    if best.rect == NO_RECT {
        return true;
    }
    let entry = entry_of(result, &rects[rect as usize]);
    let best_entry = entry_of(&best.result, &rects[best.rect as usize]);
    is_closer(s, rect, entry, best, best_entry) == 1
}

#[inline(always)]
fn is_uncertain(result: &PairResult) -> bool {
    result.flags == flags::UNCERTAIN
}

/// Hands a pair to the caller: a hit for the hit list.
#[inline(always)]
fn push_found(found: &mut Vec<Hit>, segment: u32, rect: u32, result: PairResult) {
    found.push(Hit {
        segment,
        rect,
        result,
    });
}

/// Lists an entry of the hit list and counts it among its segment's: the shader keeps the
/// count as the entry's ordinal until `hit_times` places it; here the list's own order is it.
#[inline(always)]
fn list_hit(found: &mut Vec<Hit>, segment: u32, rect: u32, result: PairResult, hits: &mut u32) {
    push_found(found, segment, rect, result);
    *hits += 1;
}

fn segment_filter(batch: &Batch, segment: usize) -> Filter {
    batch.segment_filters.map_or(Filter::ALL, |f| f[segment])
}

fn rect_filter(batch: &Batch, rect: usize) -> Filter {
    batch.rect_filters.map_or(Filter::ALL, |f| f[rect])
}

/// Mirror of the `segment_rects` entry point: every segment of the batch against every rect, for
/// the query `query` (a [`query`] value). Inputs are valid and outputs sized (checked by the
/// caller).
pub fn segment_rects(query: u32, batch: &Batch, out: &mut QueryOutputs) {
    let m = batch.rects.len();
    let listed = out.found.len();
    for (segment, s) in batch.segments.iter().enumerate() {
        let s_filter = segment_filter(batch, segment);
        let mut best = FirstHit::NONE;
        let mut best_entry = Entry {
            axis: AXIS_NONE,
            bound: 0.0,
        };
        let mut hits = 0u32;
        let s_box = segment_box(s);
        // 32 rects at a time: first a bit per candidate (boxes overlap, filters pass), then
        // segment_rect for the candidates only, in rect order.
        for word in (0..m).step_by(32) {
            let mut candidates = 0u32;
            for k in word..(word + 32).min(m) {
                if boxes_overlap(&s_box, &rect_box(&batch.rects[k]))
                    && is_tested(&s_filter, &rect_filter(batch, k))
                {
                    candidates |= 1 << (k - word);
                }
            }
            while candidates != 0 {
                let rect = word + candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let r = &batch.rects[rect];
                // Decisions only: t is computed for the hits that need it.
                let result = pair_flags(s, r);
                if is_uncertain(&result) {
                    if query == QUERY_HITS {
                        list_hit(out.found, segment as u32, rect as u32, result, &mut hits);
                    } else {
                        push_found(out.found, segment as u32, rect as u32, result);
                    }
                    continue;
                }
                if (result.flags & flags::HIT) == 0 {
                    continue;
                }
                if query == QUERY_FIRST_HIT {
                    let entry = entry_of(&result, r);
                    let closer = is_closer(s, rect as u32, entry, &best, best_entry);
                    if closer == 1 {
                        best = FirstHit {
                            rect: rect as u32,
                            result,
                        };
                        best_entry = entry;
                    }
                }
                if query == QUERY_COUNTS {
                    hits += 1;
                    out.rect_hits[rect] += 1;
                }
                if query == QUERY_HITS {
                    // Decisions only: hit_times computes t for every listed hit afterwards.
                    list_hit(out.found, segment as u32, rect as u32, result, &mut hits);
                }
            }
        }
        if query == QUERY_FIRST_HIT {
            // t for the closest hit only.
            if best.rect != NO_RECT {
                best.result = pair_times(s, &batch.rects[best.rect as usize], best.result);
                if is_uncertain(&best.result) {
                    push_found(out.found, segment as u32, best.rect, best.result);
                    best = FirstHit::NONE;
                }
            }
            out.first_hits[segment] = best;
        }
        if query == QUERY_COUNTS || query == QUERY_HITS {
            out.segment_hits[segment] = hits;
        }
    }
    if query == QUERY_HITS {
        hit_times(batch, &mut out.found[listed..]);
    }
}

/// Mirror of the `first_hit_rects` entry point: each segment's first-hit rect
/// ([`FirstHit::NO_RECT`] on a miss).
pub fn first_hit_rects(first_hits: &[FirstHit], rects: &mut [u32]) {
    for (rect, first) in rects.iter_mut().zip(first_hits) {
        *rect = first.rect;
    }
}

/// Mirror of the `hit_times` entry point, the hit list's second step: t for each hit that
/// `segment_rects` listed (a pair it could not decide is left for the caller as it is).
pub fn hit_times(batch: &Batch, found: &mut [Hit]) {
    for h in found {
        if is_uncertain(&h.result) {
            continue;
        }
        let s = &batch.segments[h.segment as usize];
        h.result = pair_times(s, &batch.rects[h.rect as usize], h.result);
    }
}

/// Mirror of the `hit_offsets` entry point, the hit list's second step: each segment's count
/// of listed entries becomes their offset in the ordered list (an exclusive prefix sum, in
/// place). Returns the total.
pub fn hit_offsets(segment_hits: &mut [u32]) -> u32 {
    let mut running = 0;
    for count in segment_hits {
        let own = *count;
        *count = running;
        running += own;
    }
    running
}

/// Mirror of the `order_hits` entry point, the hit list's last step after a grid walk: each
/// segment's run of `ordered` (from its offset to the next one's, or to the end) sorted by
/// rect. The shader leaves runs longer than [`ORDER_RUN_LIMIT`] to the host, which sorts them
/// as this does.
pub fn order_hits(offsets: &[u32], ordered: &mut [FirstHit]) {
    for (i, &start) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).map_or(ordered.len(), |&e| e as usize);
        ordered[start as usize..end].sort_unstable_by_key(|h| h.rect);
    }
}

/// Mirror of the `clip` entry point: segment `i` against `rects[0]` when there is one rect, else
/// against `rects[i]`; rect NO_RECT on a miss.
pub fn clip(segments: &[Segment], rects: &[Rect], first_hits: &mut [FirstHit]) {
    for (segment, s) in segments.iter().enumerate() {
        let rect = if rects.len() == 1 { 0 } else { segment };
        let result = segment_rect(s, &rects[rect]);
        let hit = (result.flags & flags::HIT) != 0;
        first_hits[segment] = FirstHit {
            rect: if hit { rect as u32 } else { NO_RECT },
            result,
        };
    }
}
