//! The queries over rects on the CPU: first hit, hit list, counts, dense and listed pairs, and
//! clipping, each the scalar reference's answer.

use super::cull::{RectBlock, candidates_until, fill_blocks, for_each_candidate};
use super::start_cell::{AHEAD, CellEntries, fetch_ahead, holds_start, start_entries};
use super::{CpuKernel, SLICE, chunk_len, work_per_segment};
use crate::cpu::grid::{Grid, Next, Step, prefers_brute_force, visit_cells, walk_of};
use crate::cpu::lanes::Simd;
use crate::cpu::rect_queries::{Entry, compare_entries, entry_of, is_closer, is_tested};
use crate::cpu::segment_rect::AXIS_Y;
use crate::cpu::segment_rect::{pair_flags, pair_times_in_f64, segment_rect_in_f64};
use crate::query::{Batch, Counts};
use crate::types::{Filter, FirstHit, Hit, PairIndex, PairResult, Rect, Segment, flags};
use rayon::prelude::*;

pub(super) fn filter_at(filters: Option<&[Filter]>, i: usize) -> Filter {
    filters.map_or(Filter::ALL, |f| f[i])
}

/// Segment `segment`'s first hit: the reference's `segment_rects` loop for QUERY_FIRST_HIT,
/// over the candidates only (from the grid when there is one and it pays for this segment).
/// With a grid, `start` is the entries of the cell the segment starts in ([`start_entries`]);
/// without one it is not read.
#[inline(always)]
pub(super) fn first_hit_of(
    simd: Simd,
    blocks: &[RectBlock],
    grid: Option<&Grid>,
    batch: &Batch,
    segment: usize,
    start: CellEntries,
) -> FirstHit {
    let s = &batch.segments[segment];
    let s_filter = filter_at(batch.segment_filters, segment);
    if let Some((rect, r)) = grid.and_then(|grid| start_rect(grid, batch, s, start, &s_filter)) {
        return FirstHit {
            rect,
            result: segment_rect_in_f64(s, r),
        };
    }
    let mut best = FirstHit::NONE;
    let mut best_entry = Entry::NONE;
    // Past a hit at t = 0, only a lower rect index can win: the grid's cells list rects in
    // ascending order, so a cell's entries above it are skipped.
    let ceiling = std::cell::Cell::new(u32::MAX);
    let mut step = |step: Step| {
        let rect = match step {
            // Past a hit at t = 0 (the brute force's loop; the grid's cells check this
            // themselves).
            Step::Rect(rect, _) if rect > ceiling.get() => return Next::Cell,
            Step::Rect(rect, _) => rect as usize,
            // Rows come in t order: a best hit strictly before this row's boundary is final.
            Step::Row(bound) => {
                let boundary = Entry::crossing(AXIS_Y, bound);
                let done =
                    best.rect != FirstHit::NO_RECT && compare_entries(s, best_entry, boundary) < 0;
                return if done { Next::Stop } else { Next::Entry };
            }
            // Rows suffice for rects: most walks end in their first cell (at t = 0).
            Step::Col { .. } => return Next::Entry,
        };
        if !is_tested(&s_filter, &filter_at(batch.rect_filters, rect)) {
            return Next::Entry;
        }
        let r = &batch.rects[rect];
        let result = pair_flags(s, r);
        if (result.flags & flags::HIT) == 0 {
            return Next::Entry;
        }
        let entry = entry_of(&result, r);
        if is_closer(s, rect as u32, entry, &best, best_entry) == 1 {
            best = FirstHit {
                rect: rect as u32,
                result,
            };
            best_entry = entry;
            if entry.is_start() {
                ceiling.set(rect as u32);
                return Next::Cell;
            }
        }
        Next::Entry
    };
    match grid.map(|g| (g, walk_of(g, s))) {
        Some((grid, walk)) if !prefers_brute_force(grid, s, &walk, batch.rects.len()) => {
            visit_cells(grid, s, &walk, &ceiling, true, step);
        }
        // In ascending order: past the ceiling, no later rect can win either.
        _ => candidates_until(simd, s, blocks, |rect| {
            step(Step::Rect(rect as u32, u32::MAX)) != Next::Cell
        }),
    }
    // t for the closest hit only, as in the reference.
    if best.rect != FirstHit::NO_RECT {
        best.result = pair_times_in_f64(s, &batch.rects[best.rect as usize], best.result);
    }
    best
}

/// The lowest rect the filters test that holds segment `s`'s start (closed, as the reference's
/// slabs are), if any, `start` the entries of the start's cell: then that rect is the first
/// hit. Its hit is at t = 0, the earliest there is, and a tie at t = 0 goes to the lowest rect;
/// every rect that holds the start is listed in the start's cell, in ascending order. Most
/// bullets in a crowded scene start inside a hitbox, and this answers them with a few
/// comparisons instead of a walk. With the rect, its copy in the grid's boxes (just read,
/// where `batch.rects` is a read from anywhere in memory).
#[inline(always)]
fn start_rect<'g>(
    grid: &'g Grid,
    batch: &Batch,
    s: &Segment,
    start: CellEntries,
    s_filter: &Filter,
) -> Option<(u32, &'g Rect)> {
    start
        .range()
        .find(|&e| {
            holds_start(&grid.boxes[e], s)
                && is_tested(
                    s_filter,
                    &filter_at(batch.rect_filters, grid.entries[e] as usize),
                )
        })
        .map(|e| (grid.entries[e], &grid.boxes[e]))
}

/// Calls `hit` for every tested, hitting pair of segment `segment`, with the pair's decisions
/// ([`pair_flags`]: both t 0; [`pair_times`] fills them in): in rect order without a grid, in
/// the grid's walk order with one (callers that need rect order sort).
#[inline(always)]
pub(super) fn hits_of(
    simd: Simd,
    blocks: &[RectBlock],
    grid: Option<&Grid>,
    batch: &Batch,
    segment: usize,
    mut hit: impl FnMut(usize, PairResult),
) {
    let s = &batch.segments[segment];
    let s_filter = filter_at(batch.segment_filters, segment);
    let mut consider = |rect: usize| {
        if !is_tested(&s_filter, &filter_at(batch.rect_filters, rect)) {
            return;
        }
        let result = pair_flags(s, &batch.rects[rect]);
        if (result.flags & flags::HIT) != 0 {
            hit(rect, result);
        }
    };
    match grid.map(|g| (g, walk_of(g, s))) {
        Some((grid, walk)) if !prefers_brute_force(grid, s, &walk, batch.rects.len()) => {
            let no_ceiling = std::cell::Cell::new(u32::MAX);
            visit_cells(grid, s, &walk, &no_ceiling, false, |step| {
                if let Step::Rect(rect, _) = step {
                    consider(rect as usize);
                }
                Next::Entry
            });
        }
        _ => for_each_candidate(simd, s, blocks, consider),
    }
}

impl CpuKernel {
    /// [`crate::Engine::first_hit_into`]: inputs valid, `out` one per segment.
    /// `grid`, when given, is a grid over `batch.rects`.
    pub(crate) fn first_hit(&mut self, batch: &Batch, grid: Option<&Grid>, out: &mut [FirstHit]) {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        // Segments in input order: sorting them by start cell (for the cells' sake in cache)
        // measured slower on bullet-hell scenes, whose gather and scatter cost more. Instead
        // the start cells of the next `AHEAD` segments are looked up and fetched first.
        let chunk = chunk_len(
            batch.segments.len(),
            work_per_segment(batch.rects, grid),
            self.threads,
        );
        self.chunked(out, chunk, 1, |first, out| {
            for (k, out) in out.chunks_mut(AHEAD).enumerate() {
                let first = first + k * AHEAD;
                let mut starts = [CellEntries::default(); AHEAD];
                if let Some(grid) = grid {
                    for (i, start) in starts[..out.len()].iter_mut().enumerate() {
                        *start = start_entries(grid, &batch.segments[first + i]);
                        fetch_ahead(grid, *start);
                    }
                }
                for (i, out) in out.iter_mut().enumerate() {
                    *out = first_hit_of(simd, blocks, grid, batch, first + i, starts[i]);
                }
            }
        });
    }

    /// [`crate::Engine::hits`]: every hit in (segment, rect) order.
    pub(crate) fn hits(&mut self, batch: &Batch, grid: Option<&Grid>) -> Vec<Hit> {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let hits_in = |segments: std::ops::Range<usize>, found: &mut Vec<Hit>| {
            for segment in segments {
                if segment % SLICE == 0 && self.cancelled() {
                    return;
                }
                let s = &batch.segments[segment];
                let first = found.len();
                hits_of(simd, blocks, grid, batch, segment, |rect, result| {
                    found.push(Hit {
                        segment: segment as u32,
                        rect: rect as u32,
                        result: pair_times_in_f64(s, &batch.rects[rect], result),
                    })
                });
                if grid.is_some() {
                    found[first..].sort_unstable_by_key(|h| h.rect);
                }
            }
        };
        let n = batch.segments.len();
        let chunk = chunk_len(n, work_per_segment(batch.rects, grid), self.threads);
        if self.threads == 1 {
            let mut found = Vec::new();
            for first in (0..n).step_by(chunk) {
                if self.cancelled() {
                    break;
                }
                hits_in(first..(first + chunk).min(n), &mut found);
            }
            return found;
        }
        let parts: Vec<Vec<Hit>> = Self::install(&self.pool, || {
            (0..n.div_ceil(chunk))
                .into_par_iter()
                .map(|c| {
                    let mut found = Vec::new();
                    if !self.cancelled() {
                        hits_in(c * chunk..((c + 1) * chunk).min(n), &mut found);
                    }
                    found
                })
                .collect()
        });
        parts.concat()
    }

    /// [`crate::Engine::counts`]: adds to `counts`, sized for the batch and zeroed.
    pub(crate) fn counts(&mut self, batch: &Batch, grid: Option<&Grid>, counts: &mut Counts) {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let count_in = |first: usize, per_segment: &mut [u32], per_target: &mut [u64]| {
            for (i, hits) in per_segment.iter_mut().enumerate() {
                hits_of(simd, blocks, grid, batch, first + i, |rect, _| {
                    *hits += 1;
                    per_target[rect] += 1;
                });
            }
        };
        let chunk = chunk_len(
            batch.segments.len(),
            work_per_segment(batch.rects, grid),
            self.threads,
        );
        self.counts_in_chunks(chunk, counts, count_in);
    }

    /// Runs `count_in(first segment, its chunk of per-segment counts, per-rect counts)` over
    /// chunks of `chunk` segments on the pool, each task with per-rect counts of its own, and
    /// adds those up into `counts.per_target` (in order, into `counts.per_target` itself, with one
    /// thread). Chunks not started once the call is cancelled are skipped.
    pub(super) fn counts_in_chunks(
        &self,
        chunk: usize,
        counts: &mut Counts,
        count_in: impl Fn(usize, &mut [u32], &mut [u64]) + Sync,
    ) {
        // A chunk's counts, a slice at a time (`SLICE`), none once the call is cancelled.
        let sliced = |first: usize, per_segment: &mut [u32], per_target: &mut [u64]| {
            for (k, per_segment) in per_segment.chunks_mut(SLICE).enumerate() {
                if self.cancelled() {
                    return;
                }
                count_in(first + k * SLICE, per_segment, per_target);
            }
        };
        if self.threads == 1 {
            for (c, per_segment) in counts.per_segment.chunks_mut(chunk.max(1)).enumerate() {
                sliced(c * chunk, per_segment, &mut counts.per_target);
            }
            return;
        }
        let rect_count = counts.per_target.len();
        let per_segment = &mut counts.per_segment;
        let per_target = Self::install(&self.pool, || {
            per_segment
                .par_chunks_mut(chunk)
                .enumerate()
                .fold(
                    || vec![0u64; rect_count],
                    |mut per_target, (c, per_segment)| {
                        sliced(c * chunk, per_segment, &mut per_target);
                        per_target
                    },
                )
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                    a
                })
        });
        if let Some(per_target) = per_target {
            counts.per_target.copy_from_slice(&per_target);
        }
    }

    /// [`crate::Engine::pairs_into`]: every pair, segment-major; `results` sized.
    pub(crate) fn pairs_dense(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) {
        if rects.is_empty() {
            return;
        }
        fill_blocks(rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let rows = |first: usize, rows: &mut [PairResult]| {
            for (i, row) in rows.chunks_exact_mut(rects.len()).enumerate() {
                row.fill(PairResult::MISS);
                let s = &segments[first + i];
                for_each_candidate(simd, s, blocks, |rect| {
                    row[rect] = segment_rect_in_f64(s, &rects[rect]);
                });
            }
        };
        let chunk = chunk_len(segments.len(), rects.len(), self.threads);
        self.chunked(results, chunk, rects.len(), rows);
    }

    /// [`crate::Engine::pair_list`]: indices in range, `results` one per pair.
    pub(crate) fn pairs_list(
        &self,
        segments: &[Segment],
        rects: &[Rect],
        pairs: &[PairIndex],
        results: &mut [PairResult],
    ) {
        let one = |(pair, result): (&PairIndex, &mut PairResult)| {
            *result =
                segment_rect_in_f64(&segments[pair.segment as usize], &rects[pair.rect as usize]);
        };
        if self.threads == 1 {
            pairs.iter().zip(results.iter_mut()).for_each(one);
            return;
        }
        Self::install(&self.pool, || {
            pairs
                .par_iter()
                .zip(results.par_iter_mut())
                .with_min_len(4096)
                .for_each(one)
        });
    }

    /// [`crate::Engine::clip`]: the reference's `clip`, split across threads.
    pub(crate) fn clip(&self, segments: &[Segment], rects: &[Rect], first_hits: &mut [FirstHit]) {
        if self.threads == 1 || segments.len() < 4096 {
            crate::cpu::rect_queries::clip(segments, rects, first_hits);
            return;
        }
        let chunk = segments.len().div_ceil(self.threads * 8).max(4096);
        Self::install(&self.pool, || {
            first_hits
                .par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, out)| {
                    let at = c * chunk;
                    let segments = &segments[at..at + out.len()];
                    let rects = if rects.len() == 1 {
                        rects
                    } else {
                        &rects[at..at + out.len()]
                    };
                    crate::cpu::rect_queries::clip(segments, rects, out);
                })
        });
    }
}
