//! The rect queries, each as the chunks it runs through the host's ring and how their found
//! lists merge.

use std::ops::Range;

use crate::cpu::rect_queries::beats;
use crate::cpu::segment_rect::segment_rect;
use crate::error::Result;
use crate::gpu::rect_kernel::RectKernel;
use crate::query::{Batch, Counts};
use crate::types::{FirstHit, Hit, Rect, Segment, flags};

use super::kernels::ChunkOut;
use super::{GpuRectQueries, GridQuery};

/// A found entry's result with the chunk's offsets applied; an uncertain one decided exactly.
fn decided(batch: &Batch, chunk: &ChunkOut, h: &Hit) -> Hit {
    let segment = chunk.segments.start + h.segment as usize;
    let rect = chunk.rects.start + h.rect as usize;
    let result = if h.result.flags == flags::UNCERTAIN {
        segment_rect(&batch.segments[segment], &batch.rects[rect])
    } else {
        h.result
    };
    Hit {
        segment: segment as u32,
        rect: rect as u32,
        result,
    }
}

/// Appends a hit list chunk's hits to `hits` in (segment, rect) order, its uncertain pairs
/// decided and its misses dropped, from its ordered entries and each segment's offset among
/// them. Returns how many segments' runs the host had to sort.
fn chunk_hits(batch: &Batch, chunk: &ChunkOut, hits: &mut Vec<Hit>) -> u64 {
    let ordered = chunk.first_hits;
    hits.reserve(ordered.len());
    let mut sorted = 0;
    for (i, &start) in chunk.segment_hits.iter().enumerate() {
        let end = chunk
            .segment_hits
            .get(i + 1)
            .map_or(ordered.len(), |&e| e as usize);
        let segment = chunk.segments.start + i;
        let from = hits.len();
        for entry in &ordered[start as usize..end] {
            let rect = chunk.rects.start + entry.rect as usize;
            let result = if entry.result.flags == flags::UNCERTAIN {
                segment_rect(&batch.segments[segment], &batch.rects[rect])
            } else {
                entry.result
            };
            if result.hit() {
                hits.push(Hit {
                    segment: segment as u32,
                    rect: rect as u32,
                    result,
                });
            }
        }
        let run = &mut hits[from..];
        if !run.is_sorted_by_key(|h| h.rect) {
            run.sort_unstable_by_key(|h| h.rect);
            sorted += 1;
        }
    }
    sorted
}

/// Joins chunks' hits, each in (segment, rect) order, into one list in that order. Chunks
/// that each hold every rect are put in segment order and concatenated. Otherwise (a segment's
/// rects in several tiles: a software GPU's, or a list split by rects) each segment's place is
/// counted first, and the chunks then copy their hits there in rect-tile order: a segment's
/// chunks hold disjoint rects, so its hits land in rect order. Linear in the hits either way.
fn join_chunks(
    segments: usize,
    rects: usize,
    mut chunks: Vec<(Range<usize>, Range<usize>, Vec<Hit>)>,
) -> Vec<Hit> {
    if chunks.iter().all(|(_, r, _)| *r == (0..rects)) {
        chunks.sort_unstable_by_key(|(s, _, _)| s.start);
        if chunks.len() == 1 {
            return chunks.pop().map(|(_, _, hits)| hits).unwrap_or_default();
        }
        return chunks.into_iter().flat_map(|(_, _, hits)| hits).collect();
    }
    let mut place = vec![0usize; segments + 1];
    for (_, _, hits) in &chunks {
        for h in hits {
            place[h.segment as usize + 1] += 1;
        }
    }
    for i in 0..segments {
        place[i + 1] += place[i];
    }
    let total = place[segments];
    let mut out = vec![Hit::default(); total];
    chunks.sort_by_key(|(_, r, _)| r.start);
    for (_, _, hits) in chunks {
        for h in hits {
            let at = &mut place[h.segment as usize];
            out[*at] = h;
            *at += 1;
        }
    }
    out
}

impl GpuRectQueries {
    /// First-hit query; `out.len() == batch.segments.len()`. Inputs are valid.
    pub(crate) fn first_hit(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        out: &mut [FirstHit],
    ) -> Result<()> {
        out.fill(FirstHit::NONE);
        let all_rects = 0..batch.rects.len();
        self.run(RectKernel::FirstHit, batch, grid, |chunk| {
            let best = &mut out[chunk.segments.clone()];
            // A chunk that holds every rect is its segments' only one: its first hits are
            // theirs, copied as they are, and only the found list is merged. Rect tiles may
            // come in any order: merge them with the full tie rule.
            let tiles = if chunk.rects == all_rects {
                best.copy_from_slice(chunk.first_hits);
                &[][..]
            } else {
                chunk.first_hits
            };
            for (i, (best, local)) in best.iter_mut().zip(tiles).enumerate() {
                if let Some(rect) = local.rect() {
                    let rect = rect + chunk.rects.start as u32;
                    let s = &batch.segments[chunk.segments.start + i];
                    if beats(s, batch.rects, rect, &local.result, best) {
                        *best = FirstHit {
                            rect,
                            result: local.result,
                        };
                    }
                }
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                let best = &mut out[h.segment as usize];
                let s = &batch.segments[h.segment as usize];
                if h.result.hit() && beats(s, batch.rects, h.rect, &h.result, best) {
                    // A hit whose order the kernel could not certify carries its decisions
                    // only: its t comes from the reference.
                    *best = FirstHit {
                        rect: h.rect,
                        result: segment_rect(s, &batch.rects[h.rect as usize]),
                    };
                }
            }
        })
    }

    /// First-hit query, each segment's rect only ([`FirstHit::NO_RECT`] on a miss); `out.len()
    /// == batch.segments.len()`. Inputs are valid.
    pub(crate) fn first_hit_rects(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        out: &mut [u32],
    ) -> Result<()> {
        out.fill(FirstHit::NO_RECT);
        // The best so far as a whole result, recomputed: only where a segment's rects come in
        // several tiles, or the kernel left pairs to the host.
        let best = |s: &Segment, rect: u32| {
            if rect == FirstHit::NO_RECT {
                FirstHit::NONE
            } else {
                FirstHit {
                    rect,
                    result: segment_rect(s, &batch.rects[rect as usize]),
                }
            }
        };
        let all_rects = 0..batch.rects.len();
        self.run(RectKernel::FirstHitRects, batch, grid, |chunk| {
            let bests = &mut out[chunk.segments.clone()];
            // As in `first_hit`: a chunk that holds every rect gives its segments' rects as
            // they are; only the found list is merged.
            let tiles = if chunk.rects == all_rects {
                bests.copy_from_slice(chunk.segment_hits);
                &[][..]
            } else {
                chunk.segment_hits
            };
            for (i, (best_rect, &local)) in bests.iter_mut().zip(tiles).enumerate() {
                if local == FirstHit::NO_RECT {
                    continue;
                }
                let rect = local + chunk.rects.start as u32;
                let s = &batch.segments[chunk.segments.start + i];
                // Rect tiles may come in any order: merge with the full tie rule (the results
                // recomputed only then).
                if *best_rect == FirstHit::NO_RECT
                    || beats(
                        s,
                        batch.rects,
                        rect,
                        &segment_rect(s, &batch.rects[rect as usize]),
                        &best(s, *best_rect),
                    )
                {
                    *best_rect = rect;
                }
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                let best_rect = &mut out[h.segment as usize];
                let s = &batch.segments[h.segment as usize];
                if h.result.hit() && beats(s, batch.rects, h.rect, &h.result, &best(s, *best_rect))
                {
                    *best_rect = h.rect;
                }
            }
        })
    }

    /// Hit-list query, in (segment, rect) order. Inputs are valid.
    ///
    /// Each chunk's list comes back in its final order (`hit_offsets`, `hit_times` and
    /// `order_hits` in the shader): the host decides its uncertain pairs, drops those that
    /// miss, and checks each segment's run, sorting one only where the GPU left it (after a
    /// grid walk, a run past [`crate::cpu::rect_queries::ORDER_RUN_LIMIT`], or every run on a
    /// GPU that does not order them: [`crate::GpuLimits::order_on_gpu`]). A chunk that holds
    /// every rect and follows the hits so far is appended to them as it comes back; any other
    /// joins them at the end, by segment and rect tile. In time linear in the hits.
    pub(crate) fn hits(&mut self, batch: &Batch, grid: Option<GridQuery>) -> Result<Vec<Hit>> {
        let all_rects = 0..batch.rects.len();
        // The hits of segments 0..next, in order; the chunks that came out of order.
        let (mut hits, mut next) = (Vec::new(), 0);
        let mut later = Vec::new();
        let mut sorted_on_host = 0;
        self.run(RectKernel::Hits, batch, grid, |chunk| {
            if chunk.rects == all_rects && chunk.segments.start == next && later.is_empty() {
                sorted_on_host += chunk_hits(batch, chunk, &mut hits);
                next = chunk.segments.end;
            } else {
                let mut own = Vec::new();
                sorted_on_host += chunk_hits(batch, chunk, &mut own);
                later.push((chunk.segments.clone(), chunk.rects.clone(), own));
            }
        })?;
        self.call.sorted_on_host += sorted_on_host;
        if later.is_empty() {
            return Ok(hits);
        }
        let started = std::time::Instant::now();
        later.push((0..next, all_rects, hits));
        let hits = join_chunks(batch.segments.len(), batch.rects.len(), later);
        self.call.merging += started.elapsed();
        Ok(hits)
    }

    /// Counts query into zeroed counts of the batch's sizes. Inputs are valid.
    pub(crate) fn counts(
        &mut self,
        batch: &Batch,
        grid: Option<GridQuery>,
        counts: &mut Counts,
    ) -> Result<()> {
        self.run(RectKernel::Counts, batch, grid, |chunk| {
            let per_segment = &mut counts.per_segment[chunk.segments.clone()];
            for (total, &n) in per_segment.iter_mut().zip(chunk.segment_hits) {
                *total += n;
            }
            let per_target = &mut counts.per_target[chunk.rects.clone()];
            for (total, &n) in per_target.iter_mut().zip(chunk.rect_hits) {
                *total += n as u64;
            }
            for h in chunk.found {
                let h = decided(batch, chunk, h);
                if h.result.hit() {
                    counts.per_segment[h.segment as usize] += 1;
                    counts.per_target[h.rect as usize] += 1;
                }
            }
        })
    }

    /// Clip query: segment i against `rects[0]` when there is one rect, else `rects[i]`.
    /// Inputs are valid and sized.
    pub(crate) fn clip(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        out: &mut [FirstHit],
    ) -> Result<()> {
        let batch = Batch::new(segments, rects);
        self.run(RectKernel::Clip, &batch, None, |chunk| {
            for (i, local) in chunk.first_hits.iter().enumerate() {
                let s = chunk.segments.start + i;
                out[s] = FirstHit {
                    rect: local
                        .rect()
                        .map_or(FirstHit::NO_RECT, |r| r + chunk.rects.start as u32),
                    result: local.result,
                };
            }
            for h in chunk.found {
                let h = decided(&batch, chunk, h);
                out[h.segment as usize] = FirstHit {
                    rect: if h.result.hit() {
                        h.rect
                    } else {
                        FirstHit::NO_RECT
                    },
                    result: h.result,
                };
            }
        })
    }
}
