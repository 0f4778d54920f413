//! The queries over shapes (and polygons' edges) on the CPU: dense pairs, hits, first hits and
//! counts, each the shape's scalar function's answer.

use super::along::prefers_cull_along;
use super::cull::{fill_blocks, for_each_candidate};
use super::order::scatter;
use super::shape_cull::{
    AppendAll, CountInPlace, PreparedShapes, ShapeLayout, collect_candidates, prefers_cull,
    shape_candidates,
};
use super::start_cell::{CellEntries, holds_start, start_entries};
use super::{CpuKernel, SLICE, chunk_len, work_per_segment};
use crate::cpu::grid::{CellStep, Grid, Next, Step, visit_cells, walk_cells, walk_of};
use crate::cpu::lane_filter::{Candidates, LaneFilter};
use crate::cpu::lanes::{LANES, Simd};
use crate::cpu::segment_polygon::{PolygonContact, PolygonEdge, filters::polygon_filtered};
use crate::query::Counts;
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::types::{Rect, Segment};
use rayon::prelude::*;
use std::ops::Range;

/// An f32 at or below the correctly rounded t at which a segment whose coordinate goes from
/// `p0` to `p1` (not equal) reaches `bound` (which it does, at some t >= 0): the quotient in f64
/// is within 3 · 2^-53 of the exact one (two differences of f32 values and a division), so
/// lowering it by 2^-50 and rounding down is safe, and rounding to nearest is monotone.
fn crossing_t_below(p0: f32, p1: f32, bound: f32) -> f32 {
    let (p0, p1) = (p0 as f64, p1 as f64);
    let t = (bound as f64 - p0) / (p1 - p0) * (1.0 - 2f64.powi(-50));
    let f = t as f32;
    if f as f64 > t { f.next_down() } else { f }
}

/// An f32 at or below the correctly rounded t at which `s` first meets box `b` (0 when it
/// starts in it): each axis's entering t in f64 is within 3 · 2^-53 of the exact one, lowered
/// by 2^-50 and rounded down. Every point of the box on the segment is at that t or later.
fn box_t_below(s: &Segment, b: &Rect) -> f32 {
    let entering = |p0: f32, p1: f32, lo: f32, hi: f32| {
        let d = p1 as f64 - p0 as f64;
        if d > 0.0 {
            (lo as f64 - p0 as f64) / d
        } else if d < 0.0 {
            (hi as f64 - p0 as f64) / d
        } else {
            f64::NEG_INFINITY
        }
    };
    let t = entering(s.x0, s.x1, b.min_x, b.max_x).max(entering(s.y0, s.y1, b.min_y, b.max_y));
    if t <= 0.0 {
        return 0.0;
    }
    let t = t * (1.0 - 2f64.powi(-50));
    let f = t as f32;
    if f as f64 > t { f.next_down() } else { f }
}

/// A bound at or below the rounded t at which `s` first meets a shape in box `b`: the lane
/// filter's `t_below` where it gave one (above 0), else the box's ([`box_t_below`]).
fn box_bound(s: &Segment, b: &Rect, t_below: f32) -> f32 {
    if t_below > 0.0 {
        t_below
    } else {
        box_t_below(s, b)
    }
}

impl CpuKernel {
    /// [`crate::Engine::shape_pairs`]: inputs valid, `out` one per (query, shape),
    /// query-major. The shapes' boxes ([`Shape::bounds`]) are culled sixteen at a time as the
    /// rect path culls rects, and the pairs left go through the shape's lane filter
    /// ([`Shape::hit_lanes`]); each pair it does not rule out goes through [`Shape::filtered`],
    /// the scalar reference where that cannot certify. Rows spread over the threads.
    pub(crate) fn shape_pairs_dense<S: Shape>(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        out: &mut [S::Contact],
    ) {
        if shapes.is_empty() {
            return;
        }
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let simd = self.simd;
        let prepared = self.prepare_shapes(&bounds, None, |simd, order| {
            LaneFilter::of(simd, shapes, order)
        });
        let (layout, filter) = (&prepared.layout, prepared.filter.as_ref());
        let rows = |first: usize, rows: &mut [S::Contact]| {
            let mut candidates = Candidates::new(filter);
            for (i, row) in rows.chunks_exact_mut(shapes.len()).enumerate() {
                row.fill(S::MISS);
                let query = &queries[first + i];
                collect_candidates(simd, query, layout, filter, &mut candidates, AppendAll);
                candidates.sieve(query, filter, |k, _| {
                    let shape = &shapes[k];
                    row[k] = S::filtered(query, shape).unwrap_or_else(|| S::exact(query, shape));
                });
            }
        };
        let chunk = chunk_len(queries.len(), shapes.len(), self.threads);
        self.chunked(out, chunk, shapes.len(), rows);
        self.keep_shapes(prepared);
    }

    /// [`crate::Engine::polygon_pairs`]: every query against every polygon, `out` query-major.
    /// `edges` are the polygons' edges in order ([`crate::cpu::segment_polygon::polygon_edges`]),
    /// polygon i's from `offsets[i]`. Polygons are culled by box sixteen at a time; each edge of
    /// one left goes through [`edge_filtered`], and [`polygon_contact`] gathers them.
    pub(crate) fn polygon_pairs_dense(
        &mut self,
        queries: &[Segment],
        edges: &[PolygonEdge],
        offsets: &[u32],
        out: &mut [PolygonContact],
    ) {
        let polygons = offsets.len() - 1;
        if polygons == 0 {
            return;
        }
        let bounds: Vec<Rect> = (0..polygons)
            .map(|i| edges[offsets[i] as usize].polygon)
            .collect();
        fill_blocks(&bounds, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let rows = |first: usize, rows: &mut [PolygonContact]| {
            let mut contacts = Vec::new();
            for (i, row) in rows.chunks_exact_mut(polygons).enumerate() {
                row.fill(PolygonContact::MISS);
                let query = &queries[first + i];
                for_each_candidate(simd, query, blocks, |k| {
                    let edges = &edges[offsets[k] as usize..offsets[k + 1] as usize];
                    row[k] = polygon_filtered(query, edges, &mut contacts);
                });
            }
        };
        let chunk = chunk_len(queries.len(), edges.len(), self.threads);
        self.chunked(out, chunk, polygons, rows);
    }

    /// The hitting pairs of `segments` against shapes whose closed boxes are `bounds`, a chunk
    /// of segments at a time, in (segment, shape) order: `each(the chunk's hits)`, segment
    /// indices counted from the first segment of the call. Each segment's candidates come from
    /// `grid` (a grid over `bounds`) where its walk pays, else from the SIMD box cull, go
    /// through `filter` (the shapes' lane filter, when they have one), and each one left goes
    /// through `contact`. Memory follows the hits of a chunk, never segments × shapes.
    pub(crate) fn shape_hit_chunks<C: ShapeContact>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        mut each: impl FnMut(&[ShapeHit<C>]),
    ) {
        let simd = self.simd;
        let prepared = self.prepare_shapes(bounds, grid, filter);
        let (layout, filter) = (&prepared.layout, prepared.filter.as_ref());
        let rows = |first: usize, part: &[Segment]| {
            let mut hits = Vec::new();
            let mut row: Vec<(u32, C)> = Vec::new();
            let mut candidates = Candidates::new(filter);
            for (i, s) in part.iter().enumerate() {
                if i % SLICE == 0 && self.cancelled() {
                    break;
                }
                row.clear();
                shape_candidates(simd, layout, grid, s, filter, &mut candidates, AppendAll);
                candidates.sieve(s, filter, |k, _| {
                    let c = contact(s, k);
                    if c.hit() {
                        row.push((k as u32, c));
                    }
                });
                // The candidates come in the walk's or the layout's order; rows in shape order.
                row.sort_unstable_by_key(|&(k, _)| k);
                let segment = (first + i) as u32;
                hits.extend(row.iter().map(|&(shape, contact)| ShapeHit {
                    segment,
                    shape,
                    contact,
                }));
            }
            hits
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        // A few tasks per thread in each call of `each`.
        let call = chunk * self.threads * 8;
        let mut buffer = Vec::new();
        for (c, calls) in segments.chunks(call.max(1)).enumerate() {
            if self.cancelled() {
                break;
            }
            let first = c * call;
            let parts: Vec<Vec<ShapeHit<C>>> = if self.threads == 1 {
                vec![rows(first, calls)]
            } else {
                Self::install(&self.pool, || {
                    calls
                        .par_chunks(chunk)
                        .enumerate()
                        .map(|(k, part)| rows(first + k * chunk, part))
                        .collect()
                })
            };
            buffer.clear();
            for part in parts {
                buffer.extend(part);
            }
            each(&buffer);
        }
        self.keep_shapes(prepared);
    }

    /// Hits per segment and per shape (`counts`, sized and zeroed) of `segments` against
    /// shapes whose closed boxes are `bounds`: the candidates of [`CpuKernel::shape_hit_chunks`]
    /// through `filter`; a pair it certifies is counted as it stands, and only the pairs it
    /// cannot tell go through `hit`. Nothing is listed.
    pub(crate) fn shape_counts_culled(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        hit: impl Fn(&Segment, usize) -> bool + Sync,
        counts: &mut Counts,
    ) {
        let simd = self.simd;
        let prepared = self.prepare_shapes(bounds, grid, filter);
        let (layout, filter) = (&prepared.layout, prepared.filter.as_ref());
        // Segments near one another in turn (`order::spatial_order`).
        let (order, in_turn) = self.in_spatial_order(segments, bounds.len());
        let count_in = |first: usize, per_segment: &mut [u32], per_shape: &mut [u64]| {
            let mut candidates = Candidates::new(filter);
            // Certain hits of the blocks answered in place, by place in the layout.
            let mut per_place = vec![[0u32; LANES]; layout.blocks.len()];
            for (i, hits) in per_segment.iter_mut().enumerate() {
                let s = &in_turn[first + i];
                let in_place = match filter {
                    Some(filter) => {
                        let mut dense = CountInPlace {
                            filter,
                            layout,
                            query: s,
                            per_place: &mut per_place,
                            per_shape,
                            hit: |k| hit(s, k),
                            hits: 0,
                        };
                        shape_candidates(
                            simd,
                            layout,
                            grid,
                            s,
                            Some(filter),
                            &mut candidates,
                            &mut dense,
                        );
                        dense.hits
                    }
                    None => {
                        shape_candidates(simd, layout, grid, s, None, &mut candidates, AppendAll);
                        0
                    }
                };
                *hits += in_place + candidates.count(s, filter, per_shape, |k| hit(s, k));
            }
            for (&k, &count) in layout.order.iter().zip(per_place.iter().flatten()) {
                per_shape[k as usize] += count as u64;
            }
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        match &order {
            None => self.counts_in_chunks(chunk, counts, count_in),
            Some(order) => {
                let mut in_order = Counts {
                    per_segment: vec![0; segments.len()],
                    per_target: std::mem::take(&mut counts.per_target),
                };
                self.counts_in_chunks(chunk, &mut in_order, count_in);
                scatter(order, in_order.per_segment, &mut counts.per_segment);
                counts.per_target = in_order.per_target;
            }
        }
        self.keep_shapes(prepared);
    }

    /// Each segment's first hit among shapes whose closed boxes are `bounds` (the smallest
    /// `t_enter`, a tie ordered by `order_of`'s exact entries), of the pairs `order_of` tests, `first` one per segment: as
    /// [`CpuKernel::shape_hit_chunks`], but the grid's walk stops at the first row boundary
    /// the best hit so far is certainly before (every shape not visited yet meets the segment
    /// only past that boundary, so its rounded t cannot be smaller, nor tie), a candidate
    /// whose box the segment enters after the best hit is skipped, and past a best hit that
    /// [settles](FirstOrder::settles) each cell's entries above it are skipped (cells list
    /// shapes in ascending order). The walk's candidates are answered sixteen at a time
    /// (the lane filter's width), so that a bullet starting inside shapes sets that ceiling
    /// after its first few. The best is the smallest (t, shape) of the candidates answered,
    /// whatever their order, so the batches change only how soon the pruning starts.
    /// On a grid along walls ([`Grid::build_along`]) each cell's walls are filtered where the
    /// lane filter listed them ([`LaneFilter::first_in_cell`]), with the same stops.
    #[allow(
        clippy::too_many_arguments,
        reason = "the culled walk's inputs, its order and its stops"
    )]
    pub(crate) fn shape_first_hits_culled<C: ShapeContact, O: FirstOrder<C>>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        order_of: &O,
        first: &mut [Option<ShapeHit<C>>],
    ) {
        let simd = self.simd;
        let prepared = self.prepare_shapes(bounds, grid, filter);
        let (layout, filter) = (&prepared.layout, prepared.filter.as_ref());
        // Segments near one another in turn, where the shapes' blocks and cells outgrow the
        // caches: `order::spatial_order`.
        let (order, in_turn) = self.in_spatial_order(segments, bounds.len());
        let rows = |turns: Range<usize>, put: &mut dyn FnMut(usize, Option<ShapeHit<C>>)| {
            let mut candidates = Candidates::new(filter);
            let mut started_inside = 0;
            let start = turns.start;
            for turn in turns {
                let i = turn - start;
                let index = order.as_ref().map_or(turn, |o| o.indices()[turn] as usize);
                let s = &in_turn[turn];
                // What comes before this query's shapes: past a hit there that nothing here
                // can come before, the segment has nothing to look for; else only a shape
                // entered no later than its rounded t can come first.
                let earlier = order_of.earlier(index);
                if earlier.settles {
                    // Its slot is left as it is (`FirstOrder::earlier`): most of a crowded
                    // frame's bullets, whose writes cost the scene's merge a tenth.
                    continue;
                }
                // A segment that starts inside a shape: answered from its start's cell alone.
                if let Some(grid) = grid.filter(|g| !g.along) {
                    let start = start_entries(grid, s);
                    let tested = |k: usize| order_of.tests(index, k).then(|| contact(s, k));
                    if let Some((shape, contact)) = start_shape(grid, s, start, order_of, tested) {
                        started_inside += 1;
                        let segment = index as u32;
                        put(
                            turn,
                            Some(ShapeHit {
                                segment,
                                shape,
                                contact,
                            }),
                        );
                        continue;
                    }
                }
                let best = std::cell::Cell::new(None::<(u32, C)>);
                // Past a best hit at t = 0, only a lower shape can come first: the grid's
                // cells list shapes in ascending order, so a cell's entries above it are
                // skipped.
                let ceiling = std::cell::Cell::new(u32::MAX);
                let visit = |k: usize, t_below: f32| {
                    // A shape lies in its box: one whose box the segment enters after the best
                    // hit cannot come first (best-first pruning, exact: the box's t is at or
                    // below the shape's).
                    // The lane filter's bound, where it gives one, is closer still (walls
                    // crossed inside their boxes).
                    let now = best.get();
                    if earlier.t_enter < f32::INFINITY
                        && earlier.t_enter < box_bound(s, &bounds[k], t_below)
                    {
                        return;
                    }
                    if let Some((best_shape, best_contact)) = now {
                        // A grid along walls lists a wall in each cell of its line.
                        if k as u32 == best_shape {
                            return;
                        }
                        let t = best_contact.t_enter();
                        let later = k as u32 > best_shape;
                        // Every bound is at or above 0: past a best hit that nothing later
                        // comes before (t = 0), a higher shape is out without its bound
                        // (most candidates, where segments start inside shapes).
                        if later && order_of.settles(&best_contact) {
                            return;
                        }
                        // Of equal rounded t, the exact order may put a higher shape first.
                        if box_bound(s, &bounds[k], t_below) > t {
                            return;
                        }
                    }
                    if !order_of.tests(index, k) {
                        return;
                    }
                    let c = contact(s, k);
                    let k = k as u32;
                    let sooner = c.hit()
                        && now.is_none_or(|(best_shape, b)| {
                            c.t_enter() < b.t_enter()
                                || (c.t_enter() == b.t_enter()
                                    && order_of.before(s, (k, &c), (best_shape, &b)))
                        });
                    if sooner {
                        best.set(Some((k, c)));
                        if order_of.settles(&c) {
                            ceiling.set(k);
                        }
                    }
                };
                // The best hit's t so far, or the earlier one's if sooner (infinity for none).
                let best_t = || {
                    let t = best.get().map_or(f32::INFINITY, |(_, c)| c.t_enter());
                    t.min(earlier.t_enter)
                };
                let visited = |k: usize, t_below: f32| {
                    visit(k, t_below);
                    best_t()
                };
                // The grid's walk pays where its ceiling does: where segments of this part
                // start inside shapes (1 in 4 or more so far).
                let ceiling_pays = started_inside * 4 >= i;
                // Whether the best hit so far comes before every shape not met yet when the
                // walk is about to cross `boundary` (a row's or a column's: [`Step`]).
                let done_at = |boundary: Step| {
                    let t = best_t();
                    t < f32::INFINITY
                        && match boundary {
                            Step::Row(y) => t < crossing_t_below(s.y0, s.y1, y),
                            Step::Col { x, next_row } => {
                                t < crossing_t_below(s.x0, s.x1, x)
                                    && next_row.is_none_or(|y| t < crossing_t_below(s.y0, s.y1, y))
                            }
                            Step::Rect(..) => false,
                        }
                };
                let walk = grid.map(|g| (g, walk_of(g, s)));
                match (walk, filter) {
                    // Along walls: each cell's walls through the lane filter in place.
                    (Some((grid, walk)), Some(filter))
                        if grid.along && !prefers_cull_along(grid, s, &walk, bounds.len()) =>
                    {
                        let mut visited = visited;
                        walk_cells(grid, s, &walk, |step| match step {
                            CellStep::Cell(at) => {
                                filter.first_in_cell(s, at.cell as usize, best_t(), &mut visited);
                                Next::Entry
                            }
                            CellStep::Boundary(boundary) if done_at(boundary) => Next::Stop,
                            CellStep::Boundary(_) => Next::Entry,
                        });
                    }
                    (Some((grid, walk)), _)
                        if !grid.along
                            && !prefers_cull(
                                grid,
                                s,
                                &walk,
                                bounds.len(),
                                filter,
                                ceiling_pays,
                            ) =>
                    {
                        let mut batch = FIRST_BATCH;
                        visit_cells(grid, s, &walk, &ceiling, false, |step| match step {
                            Step::Rect(k, e) => {
                                let (k, e) = (k as usize, e as usize);
                                // A shape the segment starts inside is met at t = 0: answered
                                // at once (with the candidates before it), so that it sets
                                // the ceiling.
                                let inside = filter.is_some_and(|f| f.starts_inside(s, k, e));
                                if inside && candidates.len == 0 {
                                    visit(k, 0.0);
                                    return Next::Entry;
                                }
                                candidates.push_entry(k, e, filter);
                                // Answered in batches growing to sixteen (the lane filter's
                                // width), so that a hit at t = 0 soon sets the ceiling.
                                if inside || candidates.len >= batch {
                                    candidates.sieve_first(s, filter, best_t(), &visited);
                                    batch = (batch * 2).min(LANES);
                                }
                                Next::Entry
                            }
                            boundary => {
                                // Every candidate before this boundary answered first.
                                candidates.sieve_first(s, filter, best_t(), &visited);
                                if done_at(boundary) {
                                    Next::Stop
                                } else {
                                    Next::Entry
                                }
                            }
                        });
                    }
                    _ => collect_candidates(simd, s, layout, filter, &mut candidates, AppendAll),
                }
                candidates.sieve_first(s, filter, best_t(), &visited);
                started_inside += best.get().is_some_and(|(_, c)| c.t_enter() == 0.0) as usize;
                let segment = index as u32;
                let hit = best.get().map(|(shape, contact)| ShapeHit {
                    segment,
                    shape,
                    contact,
                });
                put(turn, hit);
            }
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        self.chunked_into(first, order.as_ref(), chunk, rows);
        self.keep_shapes(prepared);
    }
}

/// The first hit of segment `s` among shapes in the exact order when it starts inside one: the lowest shape `contact` answers (the pairs tested) whose
/// closed set holds the start (its hit [settles](FirstOrder::settles)), `start` the entries of
/// the start's cell ([`start_entries`]); `None` when no listed shape settles (the walk then
/// answers). Its entry is exactly 0, the least there is, and an exact tie goes to the lower
/// shape; every shape whose box holds the start is listed there, in ascending order. A lower
/// shape entered at a t that rounds to 0 is entered later, exactly; one the segment starts on
/// (a circle's rim, a polygon's edge) holds the start, and settles first.
#[inline(always)]
fn start_shape<C: ShapeContact, O: FirstOrder<C>>(
    grid: &Grid,
    s: &Segment,
    start: CellEntries,
    order_of: &O,
    contact: impl Fn(usize) -> Option<C>,
) -> Option<(u32, C)> {
    for e in start.range() {
        if !holds_start(&grid.boxes[e], s) {
            continue;
        }
        let k = grid.entries[e];
        let Some(c) = contact(k as usize) else {
            continue;
        };
        if order_of.settles(&c) {
            return Some((k, c));
        }
    }
    None
}

/// What a first-hit query over shapes ([`CpuKernel::shape_first_hits_culled`]) answers:
/// which pairs it tests, and how it orders two hits whose rounded `t_enter` are equal (a
/// smaller rounded `t_enter` always comes first: rounding is monotone).
pub(crate) trait FirstOrder<C: ShapeContact>: Sync {
    /// Whether the pair (segment `segment`, shape `shape`) is tested; an untested one misses.
    fn tests(&self, segment: usize, shape: usize) -> bool;

    /// Whether `c` (its shape and contact) comes before `best` for segment `s`, their rounded
    /// `t_enter` equal.
    fn before(&self, s: &Segment, c: (u32, &C), best: (u32, &C)) -> bool;

    /// Whether no higher shape can come before hit `c` (its entry is the least there is).
    fn settles(&self, c: &C) -> bool;

    /// What segment `segment` hit before this query, in targets ordered before these shapes
    /// ([`Earlier::NONE`] for none). A shape entered after it cannot come first, and the
    /// query may answer any hit, or none, for a segment whose first hit comes earlier; one
    /// that [settles](Earlier::settles) is not answered at all: its slot in `first` is left as
    /// it was (a scene's kinds keep theirs from frame to frame, and read no kind's slot past
    /// one that settles: `targets::kind_first`).
    fn earlier(&self, segment: usize) -> Earlier;
}

/// A first hit among targets ordered before a query's shapes ([`FirstOrder::earlier`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Earlier {
    /// Its rounded `t_enter` (infinity for none).
    pub(crate) t_enter: f32,
    /// Whether no shape of the query can come before it (an exact start inside: every entry
    /// is at least 0, and an exact tie goes to the earlier target).
    pub(crate) settles: bool,
}

impl Earlier {
    pub(crate) const NONE: Self = Self {
        t_enter: f32::INFINITY,
        settles: false,
    };
}

/// How many shapes' layouts a kernel keeps: one per shape kind of a scene (`Targets`: circles,
/// walls and polygons), so that the static kinds of a frame are never prepared again.
const KEPT_SHAPES: usize = 3;

/// The first batch of a walk's candidates for the lane filter in first hits: the batches
/// double up to its width, so that a bullet starting inside shapes sets the ceiling after a
/// few (docs/broad_phase.md).
const FIRST_BATCH: usize = 4;

impl CpuKernel {
    /// The layout of `bounds`, and the lane filter `filter` makes for this kernel's SIMD level
    /// in its order, with its values listed beside `grid`'s entries when there is one (a grid
    /// over `bounds`). One of the last few calls' ([`KEPT_SHAPES`]) is used again when its
    /// boxes were these, byte for byte, and its filter the same (the same lane values and
    /// function): the Morton sort, the filter's blocks and its entries' values are the most of
    /// a call's set-up (a CLI job calls once per chunk of segments; a game's frame once per
    /// kind of its scene). Hand it back with [`CpuKernel::keep_shapes`].
    pub(super) fn prepare_shapes(
        &mut self,
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
    ) -> PreparedShapes {
        let bytes = bytemuck::cast_slice::<Rect, u8>;
        let kept = self
            .shapes
            .iter()
            .position(|kept| bytes(&kept.bounds) == bytes(bounds));
        let mut prepared = match kept.map(|at| self.shapes.remove(at)) {
            Some(last) => {
                let fresh = filter(self.simd, &last.layout.order);
                let filter = match (last.filter, fresh) {
                    (Some(last), Some(fresh)) if last.is_same(&fresh) => Some(last),
                    (_, fresh) => fresh,
                };
                PreparedShapes { filter, ..last }
            }
            None => {
                let layout = match self.in_parallel(bounds.len()) {
                    false => ShapeLayout::new(bounds, false),
                    true => Self::install(&self.pool, || ShapeLayout::new(bounds, true)),
                };
                let filter = filter(self.simd, &layout.order);
                PreparedShapes {
                    bounds: bounds.to_vec(),
                    layout,
                    filter,
                }
            }
        };
        match (&mut prepared.filter, grid) {
            (Some(filter), Some(grid)) if grid.along => filter.list_cells(grid),
            (Some(filter), Some(grid)) => filter.list_entries(grid),
            _ => {}
        }
        prepared
    }

    /// Keeps `prepared` for the next calls, in place of the least recently used.
    pub(super) fn keep_shapes(&mut self, prepared: PreparedShapes) {
        self.shapes.truncate(KEPT_SHAPES - 1);
        self.shapes.insert(0, prepared);
    }
}
