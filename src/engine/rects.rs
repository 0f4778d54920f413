//! The queries over rects: pairs, first hits, hits, counts and clipping, on either backend.
use super::auto::{Family, Work};
use super::{Engine, On, check_output};
use crate::cpu::grid::Grid;
use crate::error::{Error, InputArray, Result};
use crate::gpu::GridQuery;
use crate::query::{Batch, ClipTo, Clipped, Counts, Skipped};

use crate::types::{FirstHit, Hit, PairIndex, PairResult, Rect, Segment};
use crate::validate;

/// The error of `segments × rects` results that do not fit.
fn too_many(segments: &[Segment], rects: &[Rect]) -> Error {
    Error::TooManyPairs {
        queries: segments.len(),
        query_array: InputArray::Segments,
        targets: rects.len(),
        target_array: InputArray::Rects,
    }
}

/// `segments × rects`, or [`Error::TooManyPairs`] when that overflows.
fn pair_count(segments: &[Segment], rects: &[Rect]) -> Result<usize> {
    segments
        .len()
        .checked_mul(rects.len())
        .ok_or_else(|| too_many(segments, rects))
}

impl Engine {
    /// Every segment against every rect: `results[s * rects.len() + r]` (segment-major).
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid value, before any work; GPU errors.
    pub fn pairs(&mut self, segments: &[Segment], rects: &[Rect]) -> Result<Vec<PairResult>> {
        validate::check_inputs(segments, rects)?;
        let n = pair_count(segments, rects)?;
        let mut results = Vec::new();
        // A batch too big for memory is an error, not an abort.
        results
            .try_reserve_exact(n)
            .map_err(|_| too_many(segments, rects))?;
        results.resize(n, PairResult::MISS);
        self.pairs_into_unchecked(segments, rects, &mut results)?;
        Ok(results)
    }

    /// [`pairs`](Self::pairs) into a caller's buffer of `segments.len() * rects.len()` results
    /// (reuse it across frames). On an error its contents are unspecified.
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`pairs`](Self::pairs).
    pub fn pairs_into(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        validate::check_inputs(segments, rects)?;
        let expected = pair_count(segments, rects)?;
        check_output(expected, results.len())?;
        self.pairs_into_unchecked(segments, rects, results)
    }

    fn pairs_into_unchecked(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) -> Result<()> {
        let work = Work::dense(Family::Pairs, segments.len(), rects.len());
        self.run(work, |on| match on {
            On::Gpu(gpu) => {
                gpu.pairs()?.pairs_dense(segments, rects, results)?;
                gpu.account_pairs();
                Ok(())
            }
            On::Cpu(kernel) => {
                kernel.pairs_dense(segments, rects, results);
                Ok(())
            }
        })
    }

    /// The listed (segment, rect) pairs: `results[i]` is `pairs[i]`.
    ///
    /// # Errors
    /// [`Error::Input`] for an invalid value or an index out of range, before any work; GPU
    /// errors.
    pub fn pair_list(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        pairs: &[PairIndex],
    ) -> Result<Vec<PairResult>> {
        validate::check_inputs(segments, rects)?;
        validate::check_pairs(pairs, segments.len(), rects.len())?;
        let mut results = vec![PairResult::MISS; pairs.len()];
        self.run(Work::dense(Family::Pairs, pairs.len(), 1), |on| {
            match on {
                On::Gpu(gpu) => {
                    gpu.pairs()?
                        .pairs_list(segments, rects, pairs, &mut results)?;
                    gpu.account_pairs();
                }
                On::Cpu(kernel) => kernel.pairs_list(segments, rects, pairs, &mut results),
            }
            Ok(())
        })?;
        Ok(results)
    }

    /// The closest hit of each segment among the rects its filter tests: the smallest
    /// `t_enter`, the lowest rect index on a tie; [`FirstHit::NONE`] when it hits none.
    /// `result[s]` is segment `s`'s.
    ///
    /// A segment starting inside a rect hits it at `t_enter = 0`.
    ///
    /// An invalid segment or rect fails the call ([`Error::Input`]), unless the batch skips
    /// them ([`Batch::skip_invalid`]): then each misses, and
    /// [`last_skipped`](Self::last_skipped) lists them.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid value (unless skipped),
    /// [`Error::FilterLength`], before any work; GPU errors.
    pub fn first_hit(&mut self, batch: &Batch) -> Result<Vec<FirstHit>> {
        let mut out = vec![FirstHit::NONE; batch.segments.len()];
        self.first_hit_into(batch, &mut out)?;
        Ok(out)
    }

    /// [`first_hit`](Self::first_hit) into a caller's buffer of one entry per segment (reuse
    /// it across frames: on the CPU with one thread this allocates nothing).
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`first_hit`](Self::first_hit).
    pub fn first_hit_into(&mut self, batch: &Batch, out: &mut [FirstHit]) -> Result<()> {
        self.admitting(batch, |engine, batch| {
            check_output(batch.segments.len(), out.len())?;
            engine.run_with_grid(batch, Family::FirstHits, |on, grid| {
                match on {
                    On::Gpu(gpu) => {
                        gpu.queries.first_hit(batch, grid, out)?;
                        gpu.account_queries();
                    }
                    On::Cpu(kernel) => kernel.first_hit(batch, built(grid), out),
                }
                Ok(())
            })
        })
    }

    /// Each segment's first-hit rect: [`first_hit_rects_into`](Self::first_hit_rects_into)
    /// into a new vector.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn first_hit_rects(&mut self, batch: &Batch) -> Result<Vec<u32>> {
        let mut out = vec![FirstHit::NO_RECT; batch.segments.len()];
        self.first_hit_rects_into(batch, &mut out)?;
        Ok(out)
    }

    /// [`first_hit`](Self::first_hit), each segment's rect only: `out[s]` is the rect of
    /// segment `s`'s closest hit, [`FirstHit::NO_RECT`] when it hits none (for a game that only
    /// needs which hitbox each bullet hit). A GPU reads back 4 bytes a segment instead of 16;
    /// the CPU computes the whole first hit and keeps the rect.
    ///
    /// # Errors
    /// [`Error::OutputLength`] for a wrong-sized buffer; as [`first_hit`](Self::first_hit).
    pub fn first_hit_rects_into(&mut self, batch: &Batch, out: &mut [u32]) -> Result<()> {
        self.admitting(batch, |engine, batch| {
            check_output(batch.segments.len(), out.len())?;
            engine.run_with_grid(batch, Family::FirstHits, |on, grid| {
                match on {
                    On::Gpu(gpu) => {
                        gpu.queries.first_hit_rects(batch, grid, out)?;
                        gpu.account_queries();
                    }
                    On::Cpu(kernel) => {
                        let mut first = vec![FirstHit::NONE; out.len()];
                        kernel.first_hit(batch, built(grid), &mut first);
                        crate::cpu::rect_queries::first_hit_rects(&first, out);
                    }
                }
                Ok(())
            })
        })
    }

    /// Every hitting (segment, rect) pair the filters test, in (segment, rect) order, whatever
    /// the backend did internally.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn hits(&mut self, batch: &Batch) -> Result<Vec<Hit>> {
        self.admitting(batch, |engine, batch| {
            engine.run_with_grid(batch, Family::Hits, |on, grid| match on {
                On::Gpu(gpu) => {
                    let hits = gpu.queries.hits(batch, grid)?;
                    gpu.account_queries();
                    Ok(hits)
                }
                On::Cpu(kernel) => Ok(kernel.hits(batch, built(grid))),
            })
        })
    }

    /// Hits per segment and per rect (damage per enemy), of the pairs the filters test.
    ///
    /// # Errors
    /// As [`first_hit`](Self::first_hit).
    pub fn counts(&mut self, batch: &Batch) -> Result<Counts> {
        self.admitting(batch, |engine, batch| engine.counts_admitted(batch))
    }

    fn counts_admitted(&mut self, batch: &Batch) -> Result<Counts> {
        let mut counts = Counts {
            per_segment: vec![0; batch.segments.len()],
            per_target: vec![0; batch.rects.len()],
        };
        self.run_with_grid(batch, Family::FirstHits, |on, grid| {
            // Afresh: a GPU call that failed may have added some chunks' counts.
            counts.per_segment.fill(0);
            counts.per_target.fill(0);
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.counts(batch, grid, &mut counts)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => kernel.counts(batch, built(grid), &mut counts),
            }
            Ok(())
        })?;
        Ok(counts)
    }

    /// Clips each segment to one rect (a viewport) or to its own rect: the classic
    /// Liang–Barsky clipping job. `result[i]` is segment `i` clipped, `None` on a miss (see
    /// [`Clipped::new`] for how the clipped ends are placed).
    ///
    /// # Errors
    /// [`Error::Input`], [`Error::ClipRectCount`] for a per-segment rect count that differs from
    /// the segment count, before any work; GPU errors.
    pub fn clip(&mut self, segments: &[Segment], to: ClipTo) -> Result<Vec<Clipped>> {
        let one;
        let rects = match to {
            ClipTo::Rect(rect) => {
                one = [rect];
                &one[..]
            }
            ClipTo::PerSegment(rects) => {
                if rects.len() != segments.len() {
                    return Err(Error::ClipRectCount {
                        segments: segments.len(),
                        rects: rects.len(),
                    });
                }
                rects
            }
        };
        validate::check_inputs(segments, rects)?;
        let mut results = vec![FirstHit::NONE; segments.len()];
        self.run(Work::dense(Family::Pairs, segments.len(), 1), |on| {
            match on {
                On::Gpu(gpu) => {
                    gpu.queries.clip(segments, rects, &mut results)?;
                    gpu.account_queries();
                }
                On::Cpu(kernel) => kernel.clip(segments, rects, &mut results),
            }
            Ok(())
        })?;
        Ok(results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let rect = if rects.len() == 1 {
                    &rects[0]
                } else {
                    &rects[i]
                };
                Clipped::new(&segments[i], rect, r.result)
            })
            .collect())
    }
}

impl Engine {
    /// What the last first-hit, hits or counts call over a [`Batch`] skipped: its invalid
    /// segments and rects under [`Batch::skip_invalid`] (they missed), and a rect set's invalid
    /// rects ([`crate::RectSet::rebuild_skipping_invalid`]). Empty after a call with none, and
    /// after a call that failed.
    pub fn last_skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// Runs `call` on the batch a query answers ([`Batch::admitted`]: under
    /// [`Batch::skip_invalid`], invalid elements replaced by stand-ins that never hit), and
    /// keeps what it skipped.
    pub(super) fn admitting<T>(
        &mut self,
        batch: &Batch,
        call: impl FnOnce(&mut Self, &Batch) -> Result<T>,
    ) -> Result<T> {
        let mut stand_ins = std::mem::take(&mut self.stand_ins);
        let mut skipped = std::mem::take(&mut self.skipped);
        let checking = std::time::Instant::now();
        let outcome = batch
            .admitted(&mut stand_ins, &mut skipped)
            .and_then(|batch| {
                self.preparing = checking.elapsed();
                call(self, &batch)
            });
        self.preparing = std::time::Duration::ZERO;
        if outcome.is_err() {
            // A failed call skipped nothing it answered.
            skipped.clear();
        }
        self.stand_ins = stand_ins;
        self.skipped = skipped;
        outcome
    }
}

/// A call's grid for the CPU: only one whose cells are listed (a GPU engine's own grid is only
/// planned; its CPU fallback runs the brute force).
fn built(grid: Option<GridQuery<'_>>) -> Option<&Grid> {
    grid.map(|g| g.plan).filter(|g| g.is_built())
}
