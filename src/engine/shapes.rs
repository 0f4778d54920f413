//! The queries over shapes ([`Shape`]: walls, circles), on either backend.
use super::auto::{Family, Work};
use super::{Engine, Inner, On, Place};
use crate::Circle;
use crate::broad_phase::BroadPhase;
use crate::cpu::batched::{CpuKernel, FirstOrder, Simd};
use crate::cpu::grid::Grid;
use crate::cpu::lane_filter::LaneFilter;
use crate::cpu::segment_circle::CircleContact;
use crate::cpu::segment_segment::SegmentContact;
use crate::cpu::shape_queries;
use crate::error::{Error, InputArray, Result};
use crate::gpu::shapes::{DensePairs, grid_pays};
use crate::query::Counts;
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::targets::{SceneShape, TargetBatch, Targets};
use crate::types::{Rect, Segment};
use crate::validate;

/// Results per chunk of the queries over shapes (hits, first hits, counts): their memory
/// whatever the batch.
pub const SHAPE_PAIRS_PER_CHUNK: usize = 1 << 22;

/// The hitting pairs of rows of `m` results each, from `chunks`, which hands each chunk of
/// rows to its argument with the chunk's first row.
pub(super) fn hits_in_rows<C: ShapeContact>(
    m: usize,
    chunks: impl FnOnce(&mut dyn FnMut(usize, &[C])) -> Result<()>,
) -> Result<Vec<ShapeHit<C>>> {
    let mut hits = Vec::new();
    chunks(&mut |first, contacts| {
        for (i, contact) in shape_queries::shape_hit_list(contacts) {
            hits.push(ShapeHit {
                segment: (first + i / m) as u32,
                shape: (i % m) as u32,
                contact,
            });
        }
    })?;
    Ok(hits)
}

/// Hits per row and per column, as [`hits_in_rows`].
pub(super) fn counts_in_rows<C: ShapeContact>(
    n: usize,
    m: usize,
    chunks: impl FnOnce(&mut dyn FnMut(usize, &[C])) -> Result<()>,
) -> Result<Counts> {
    let mut counts = Counts {
        per_segment: vec![0; n],
        per_target: vec![0; m],
    };
    chunks(&mut |start, contacts| {
        for (k, row) in contacts.chunks_exact(m).enumerate() {
            for (shape, contact) in row.iter().enumerate() {
                if contact.hit() {
                    counts.per_segment[start + k] += 1;
                    counts.per_target[shape] += 1;
                }
            }
        }
    })?;
    Ok(counts)
}

/// A candidate pair's contact on the CPU: the shape's float filter where it certifies the
/// answer, else its exact function.
pub(super) fn contact_of<S: Shape>(
    shapes: &[S],
) -> impl Fn(&Segment, usize) -> S::Contact + Sync + Copy + '_ {
    move |q: &Segment, k: usize| {
        let shape = &shapes[k];
        S::filtered(q, shape).unwrap_or_else(|| S::exact(q, shape))
    }
}

/// The error of `segments × shapes` results that do not fit (`shapes` of `array`).
pub(super) fn too_many(segments: usize, shapes: usize, array: InputArray) -> Error {
    Error::TooManyPairs {
        queries: segments,
        query_array: InputArray::Segments,
        targets: shapes,
        target_array: array,
    }
}

/// Segment and shape indices (shapes of `array`) must fit in u32.
pub(super) fn check_indices(segments: usize, shapes: usize, array: InputArray) -> Result<()> {
    if segments > u32::MAX as usize || shapes > u32::MAX as usize {
        return Err(too_many(segments, shapes, array));
    }
    Ok(())
}

/// Checks every segment and every shape, before any work.
pub(super) fn check_shapes<S: Shape>(segments: &[Segment], shapes: &[S]) -> Result<()> {
    validate::check_inputs(segments, &[])?;
    for (i, shape) in shapes.iter().enumerate() {
        S::check(i, shape)?;
    }
    Ok(())
}

impl Engine {
    /// Every query segment against every shape of one kind ([`Shape`]: walls, circles):
    /// `result[q * shapes.len() + s]`, query-major. Each is the shape's scalar function's
    /// answer ([`Shape::exact`]), exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or shape, before any work;
    /// [`Error::TooManyPairs`] when the result would not fit in memory; GPU errors.
    pub fn shape_pairs<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<S::Contact>> {
        check_shapes(segments, shapes)?;
        let overflow = || too_many(segments.len(), shapes.len(), S::ARRAY);
        let n = segments
            .len()
            .checked_mul(shapes.len())
            .ok_or_else(overflow)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| overflow())?;
        out.resize(n, S::MISS);
        self.shape_pairs_into(segments, shapes, &mut out)?;
        Ok(out)
    }

    /// [`Engine::shape_pairs`] into `out`, inputs checked.
    fn shape_pairs_into<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
        out: &mut [S::Contact],
    ) -> Result<()> {
        let work = Work::dense(family::<S>(), segments.len(), shapes.len());
        self.run(work, |on| match on {
            On::Gpu(gpu) => gpu.on_shapes::<S, _>(|host| host.pairs_dense(segments, shapes, out)),
            On::Cpu(kernel) => {
                kernel.shape_pairs_dense(segments, shapes, out);
                Ok(())
            }
        })
    }

    /// The pairs of every segment with every shape, a chunk of segments at a time (memory
    /// bounded by [`SHAPE_PAIRS_PER_CHUNK`] results whatever the batch): `each(first segment,
    /// the chunk's results, query-major)`. Inputs checked, indices fit in u32.
    fn shape_chunks<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
        mut each: impl FnMut(usize, &[S::Contact]),
    ) -> Result<()> {
        check_shapes(segments, shapes)?;
        if segments.len() > u32::MAX as usize || shapes.len() > u32::MAX as usize {
            return Err(too_many(segments.len(), shapes.len(), S::ARRAY));
        }
        if shapes.is_empty() {
            return Ok(());
        }
        let rows = (SHAPE_PAIRS_PER_CHUNK / shapes.len()).max(1);
        let mut out = Vec::new();
        for (c, chunk) in segments.chunks(rows).enumerate() {
            out.clear();
            out.resize(chunk.len() * shapes.len(), S::MISS);
            self.shape_pairs_into(chunk, shapes, &mut out)?;
            each(c * rows, &out);
        }
        Ok(())
    }

    /// The hitting (segment, shape) pairs of every segment against every shape, in (segment,
    /// shape) order: [`Engine::shape_pairs`] without the misses, in memory bounded by the hits.
    ///
    /// # Errors
    /// As [`Engine::shape_pairs`].
    pub fn shape_hits<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<ShapeHit<S::Contact>>> {
        check_shapes(segments, shapes)?;
        check_indices(segments.len(), shapes.len(), S::ARRAY)?;
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let contact = contact_of(shapes);
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        let mut hits = Vec::new();
        let work = Work::dense(family::<S>(), segments.len(), shapes.len());
        if self.culled_hits(work, segments, &bounds, filter, contact, |chunk| {
            hits.extend_from_slice(chunk)
        })? {
            return Ok(hits);
        }
        if S::KERNEL.reduces {
            // Reduced on the GPU, through the grid where the setting picks it (the CPU,
            // without a grid, if the GPU times out).
            return self.with_gpu_grid((segments, &bounds), DensePairs::Reduced, |this, grid| {
                this.run(work, |on| match on {
                    On::Gpu(gpu) => gpu.on_shapes::<S, _>(|host| {
                        if let Some(grid) = grid
                            && let Some(hits) = host.hits_through(segments, shapes, grid)?
                        {
                            return Ok((hits, true));
                        }
                        Ok((host.hits(segments, shapes)?, false))
                    }),
                    On::Cpu(kernel) => {
                        let mut hits = Vec::new();
                        kernel.shape_hit_chunks(
                            segments,
                            &bounds,
                            None,
                            filter,
                            contact,
                            |chunk| hits.extend_from_slice(chunk),
                        );
                        Ok((hits, false))
                    }
                })
            });
        }
        hits_in_rows(shapes.len(), |each| {
            self.shape_chunks(segments, shapes, each)
        })
    }

    /// Each segment's first hit among the shapes of one kind: the scene's query
    /// ([`Engine::target_first_hits_into`]) over them alone, so the same rule and the same
    /// answer on every route and backend: the smallest `t_enter` in exact arithmetic (two hits
    /// whose rounded `t_enter` are equal are ordered by their exact entries), an exact tie
    /// going to the lower index; `None` on a miss. One per segment.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid shape or segment, before any work; GPU errors.
    pub fn shape_first_hits<S: SceneShape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
    ) -> Result<Vec<Option<ShapeHit<S::Contact>>>> {
        let mut targets = Targets::new();
        S::set_in(&mut targets, shapes)?;
        let first = self.target_first_hits(&TargetBatch::over(segments, &targets))?;
        Ok(first.iter().map(|hit| hit.and_then(S::shape_hit)).collect())
    }

    /// Hits per segment and per shape (`Counts::per_target` counts per shape).
    ///
    /// # Errors
    /// As [`Engine::shape_pairs`].
    pub fn shape_counts<S: Shape>(&mut self, segments: &[Segment], shapes: &[S]) -> Result<Counts> {
        let mut counts = Counts {
            per_segment: vec![0; segments.len()],
            per_target: vec![0; shapes.len()],
        };
        check_shapes(segments, shapes)?;
        check_indices(segments.len(), shapes.len(), S::ARRAY)?;
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let hit = |q: &Segment, k: usize| S::hit(q, &shapes[k]);
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        let work = Work::dense(family::<S>(), segments.len(), shapes.len());
        let listed =
            self.with_shape_grid(work, segments.len(), &bounds, None, |kernel, grid| {
                kernel.shape_counts_culled(segments, &bounds, grid, filter, hit, &mut counts)
            })?;
        if listed {
            return Ok(counts);
        }
        // On the GPU: the kernel's counts entry point, summed there, through the grid where
        // the setting picks it (the CPU, without a grid, if the GPU times out).
        self.with_gpu_grid((segments, &bounds), DensePairs::Reduced, |this, grid| {
            this.run(work, |on| {
                counts.per_segment.fill(0);
                counts.per_target.fill(0);
                let (per_segment, per_shape) = (&mut counts.per_segment, &mut counts.per_target);
                match on {
                    On::Gpu(gpu) => gpu.on_shapes::<S, _>(|host| {
                        if let Some(grid) = grid
                            && host.counts_through(
                                segments,
                                shapes,
                                grid,
                                per_segment,
                                per_shape,
                            )?
                        {
                            return Ok(((), true));
                        }
                        Ok((
                            host.counts(segments, shapes, per_segment, per_shape)?,
                            false,
                        ))
                    }),
                    On::Cpu(kernel) => {
                        kernel.shape_counts_culled(
                            segments,
                            &bounds,
                            None,
                            filter,
                            hit,
                            &mut counts,
                        );
                        Ok(((), false))
                    }
                }
            })
        })?;
        Ok(counts)
    }

    /// Runs `run` with the shapes' CPU queries on a GPU engine's host CPU (its CPU fallback's
    /// kernel where it has one, else its own on all cores) rather than its GPU; the same on the
    /// CPU.
    pub(super) fn on_host<R>(&mut self, run: impl FnOnce(&mut Self) -> R) -> R {
        let was = std::mem::replace(&mut self.shapes_on_host, true);
        // Restored on a panic too, so that a caught panic leaves the engine's shapes on its GPU.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(self)));
        self.shapes_on_host = was;
        result.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// [`Engine::culled_hits`] for first hits in `order_of`'s order, the grid's walk stopping
    /// early.
    #[allow(
        clippy::too_many_arguments,
        reason = "the culled walk's inputs and its stop, each its own kind"
    )]
    pub(super) fn culled_first_hits<C: ShapeContact>(
        &mut self,
        work: Work,
        segments: &[Segment],
        bounds: &[Rect],
        along: Option<&[Segment]>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        order_of: &impl FirstOrder<C>,
        first: &mut [Option<ShapeHit<C>>],
    ) -> Result<bool> {
        self.with_shape_grid(work, segments.len(), bounds, along, |kernel, grid| {
            kernel.shape_first_hits_culled(segments, bounds, grid, filter, contact, order_of, first)
        })
    }

    /// On the CPU, runs `run` with the grid over `bounds` when the broad-phase setting picks
    /// it (one of the last few calls' when it was over the same shapes, else built for the
    /// call: [`ShapeGrids`](super::shape_grids::ShapeGrids)), else `None`; `false` on the GPU,
    /// unless [on its host](Engine::on_host) or `Auto` places `work` on the CPU.
    pub(super) fn with_shape_grid(
        &mut self,
        work: Work,
        segments: usize,
        bounds: &[Rect],
        along: Option<&[Segment]>,
        run: impl FnOnce(&mut CpuKernel, Option<&Grid>),
    ) -> Result<bool> {
        let use_grid =
            self.broad_phase.uses_grid(segments, bounds.len(), false) && !bounds.is_empty();
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        let place = match self.shapes_on_host {
            true => Place::Cpu,
            false => self.place(work),
        };
        // On a GPU engine's host, the call's GPU part says where it ran and whether it used
        // a grid: the fallback's report and `used_grid` are its.
        let (kernel, own_call) = match &mut self.inner {
            Inner::Cpu { kernel, .. } => (kernel, true),
            Inner::Gpu(host) if place == Place::Cpu => {
                let cancel = &self.cancel;
                let kernel = match &mut host.fallback {
                    // The CPU options the engine was given.
                    Some(kernel) => kernel,
                    None => host.host_cpu.get_or_insert_with(|| {
                        let mut kernel = CpuKernel::default();
                        kernel.set_cancel(cancel.clone());
                        kernel
                    }),
                };
                (kernel, !self.shapes_on_host)
            }
            Inner::Gpu(_) => return Ok(false),
        };
        if own_call {
            // The call runs on the CPU: no fallback, no GPU call (an `Auto` engine's last
            // call may have been one).
            self.last_fallback = None;
            self.gpu_call = None;
            self.kernel_time = None;
        }
        // Looked up only when the grid is wanted: the brute force's calls pay nothing for it.
        let grid = use_grid.then(|| {
            self.shape_grids.over(bounds, along, |grid| match along {
                Some(walls) => kernel.build_along(grid, walls),
                None => kernel.build_grid(grid, bounds),
            }) as &Grid
        });
        run(kernel, grid);
        if self.shapes_on_host {
            // A part of a scene's call, which starts with no grid used: any part's grid is
            // the call's.
            self.used_grid |= use_grid;
        } else if own_call {
            self.used_grid = use_grid;
        }
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(true)
    }

    /// Runs a GPU call, `run`, with the grid over `bounds` when the broad-phase setting picks
    /// it (one of the last few calls' when it was over the same shapes, else built here on the
    /// host: [`ShapeGrids`](super::shape_grids::ShapeGrids)), and under `Auto` only where it
    /// pays for `segments` on the GPU ([`grid_pays`], against what `dense` pairs cost: long
    /// segments' walks cost more than the dense passes; the batch sizes past which `Auto` builds
    /// a grid at all are the CPU's, and do not hold back dense pairs gathered on the host);
    /// else `None`. `run` answers with whether the call went through the grid, which
    /// [`Engine::used_broad_phase`] then says; the grid's build counts as the call's preparing.
    pub(super) fn with_gpu_grid<T>(
        &mut self,
        (segments, bounds): (&[Segment], &[Rect]),
        dense: DensePairs,
        run: impl FnOnce(&mut Self, Option<&Grid>) -> Result<(T, bool)>,
    ) -> Result<T> {
        let use_grid = !bounds.is_empty()
            && match (self.broad_phase, dense) {
                (BroadPhase::Auto, DensePairs::Gathered) => true,
                (broad_phase, _) => broad_phase.uses_grid(segments.len(), bounds.len(), false),
            };
        let building = std::time::Instant::now();
        let mut grids = std::mem::take(&mut self.shape_grids);
        let grid = use_grid
            .then(|| &*grids.over(bounds, None, |grid| grid.build(bounds)))
            .filter(|grid| {
                self.broad_phase == BroadPhase::On || grid_pays(grid, segments, bounds.len(), dense)
            });
        let built = building.elapsed();
        let outcome = run(self, grid);
        self.shape_grids = grids;
        let (result, through) = outcome?;
        self.used_grid = through && self.last_fallback.is_none();
        if let Some(call) = &mut self.gpu_call {
            call.preparing += built;
        }
        Ok(result)
    }

    /// On the CPU, the hitting pairs a chunk at a time (`each`), never the dense pairs: each
    /// segment's candidates through the broad phase where the setting picks it (a grid over the
    /// shapes' boxes, built for the call), else the box cull; then the shapes' lane filter
    /// (`filter`, made for the kernel's SIMD level), and `contact` answers a candidate left.
    /// `false` on the GPU, which reduces the dense pairs (on the GPU where the kernel
    /// [`reduces`](crate::ShapeKernel::reduces), else on the host).
    pub(super) fn culled_hits<C: ShapeContact>(
        &mut self,
        work: Work,
        segments: &[Segment],
        bounds: &[Rect],
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        each: impl FnMut(&[ShapeHit<C>]),
    ) -> Result<bool> {
        self.with_shape_grid(work, segments.len(), bounds, None, |kernel, grid| {
            kernel.shape_hit_chunks(segments, bounds, grid, filter, contact, each)
        })
    }

    /// Every query segment against every wall, segment × segment (docs/semantics.md):
    /// `result[q * walls.len() + w]`, query-major. Each is [`crate::segment_segment`]'s
    /// answer, exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or wall, before any work; GPU errors.
    pub fn wall_pairs(
        &mut self,
        segments: &[Segment],
        walls: &[Segment],
    ) -> Result<Vec<SegmentContact>> {
        self.shape_pairs(segments, walls)
    }

    /// Every query segment against every circle (closed disks), segment × circle
    /// (docs/semantics.md): `result[q * circles.len() + c]`, query-major. Each is
    /// [`crate::segment_circle`]'s answer, exact, with correctly rounded t, on either backend.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment or circle (a negative radius
    /// included), before any work; GPU errors.
    pub fn circle_pairs(
        &mut self,
        segments: &[Segment],
        circles: &[Circle],
    ) -> Result<Vec<CircleContact>> {
        self.shape_pairs(segments, circles)
    }
}

/// The cost model's family of shape `S`'s calls.
pub(super) fn family<S: Shape>() -> Family {
    match S::ARRAY {
        InputArray::Circles => Family::Circles,
        InputArray::Polygons => Family::Polygons,
        _ => Family::Walls,
    }
}

#[cfg(test)]
mod tests {
    use super::check_indices;
    use crate::error::InputArray;

    #[test]
    fn more_shapes_than_u32_indices_name_the_shapes_in_the_error() {
        let past = u32::MAX as usize + 1;
        assert!(check_indices(past - 1, past - 1, InputArray::Circles).is_ok());
        let e = check_indices(3, past, InputArray::Circles).expect_err("too many");
        assert_eq!(
            e.to_string(),
            "3 segments × 4294967296 circles is more results than this machine can hold"
        );
        let e = check_indices(past, 2, InputArray::Walls).expect_err("too many");
        assert_eq!(
            e.to_string(),
            "4294967296 segments × 2 walls is more results than this machine can hold"
        );
    }
}
