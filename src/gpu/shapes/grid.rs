//! The shapes' queries through the broad phase's grid on the GPU (`shaders/shape_grid.wgsl`,
//! after the walk of `shaders/grid_walk.wgsl`): first hits, hits and counts, each query segment
//! deciding only the shapes of the cells it crosses, with the bytes of the dense passes'.
//!
//! The grid is built on the host over the shapes' boxes ([`Grid::build`], which the engine keeps
//! for the same shapes from call to call) and goes up once per call; a tile is a run of queries
//! against every shape. The pipelines compile on their query's first use, and only where the
//! device binds their buffers ([`layouts::allow_shape_grid`]): elsewhere the caller runs the
//! dense passes (the same bytes).

use super::kernels::{GridPipeline, GridQuery, ShapeGrid};
use super::queries::{merge_counts, merge_first_hits};
use super::{GpuShapeQueries, Run, Staged, TileWork};
use crate::cpu::grid::Grid;
use crate::error::Result;
use crate::gpu::buffers::{Binder, Growable};
use crate::gpu::chunks::{self, DenseChunk};
use crate::gpu::layouts;
use crate::gpu::ring::CHUNKS_IN_FLIGHT;
use crate::gpu::shader::{GridAxis, GridParams};
use crate::gpu::timer::KernelTimer;
use crate::shape::{Shape, ShapeHit};
use crate::types::{Rect, Segment};

/// Queries one tile of the grid's queries takes at most: a tile reads back its outputs while
/// the next runs, and its wait is sized by its worst case (every query testing every shape).
const TILE_QUERIES: usize = 1 << 16;

/// Room for hits per query of a tile at first: a tile with more runs again with room for all.
const FIRST_HIT_ROOM: usize = 8;

/// The hits' work through the grid: a tile with room for `room` hits, whose read-back is how
/// many it found, then a copy of them.
enum GridHits {
    Tile { tile: DenseChunk, room: usize },
    Copy { tile: DenseChunk, count: usize },
}

impl TileWork for GridHits {
    fn tile(&self) -> Option<&DenseChunk> {
        match self {
            GridHits::Tile { tile, .. } => Some(tile),
            GridHits::Copy { .. } => None,
        }
    }
}

impl<S: Shape> GpuShapeQueries<S> {
    /// Whether the queries over `shapes` can run through `grid` here: the kernel walks grids,
    /// the device binds the pipelines' buffers, and the shapes and the grid fit its bindings.
    fn grid_runs(&self, grid: &Grid, shapes: usize) -> bool {
        let limits = self.context.limits();
        let entries = grid.entries.len() as u64;
        S::KERNEL.grid.is_some()
            && grid.is_built()
            && !grid.along
            && grid.spans.len() == shapes
            && shapes > 0
            && layouts::allow_shape_grid(&limits)
            // Each shape's value, box and (a query's hits on every shape) contact.
            && (shapes * size_of::<S>().max(size_of::<Rect>()).max(size_of::<S::Contact>())) as u64
                <= self.max_binding_bytes
            && crate::gpu::grid::fits(
                grid,
                entries,
                self.max_binding_bytes,
                self.max_workgroups_per_dimension,
            )
    }

    /// The tiles of `queries` against all `shapes` shapes through the grid.
    fn grid_tiles(
        &self,
        queries: usize,
        shapes: usize,
    ) -> impl Iterator<Item = DenseChunk> + use<S> {
        let dispatch = self.caps.pairs as usize;
        // Hits name their pair as q * shapes + j, in u32.
        let tile = TILE_QUERIES
            .min(self.caps.segments as usize)
            .min(dispatch)
            .min(u32::MAX as usize / shapes.max(1))
            .max(1);
        (0..queries.div_ceil(tile)).map(move |k| DenseChunk {
            segments: k * tile..((k + 1) * tile).min(queries),
            targets: 0..shapes,
        })
    }

    /// `query`'s pipeline (compiled on its first use) and the grid's buffers, with `grid` on
    /// the GPU: its cells, entries, boxes and spans over the shapes.
    fn upload_grid(&mut self, grid: &Grid, query: GridQuery) -> Result<()> {
        let context = self.context.clone();
        let state = self.grid.get_or_insert_with(|| ShapeGrid::new(&context));
        if state.pipelines[query as usize].is_none() {
            state.pipelines[query as usize] = Some(GridPipeline::compile::<S>(&context, query)?);
        }
        let pipeline = state.pipelines[query as usize]
            .as_ref()
            .expect("compiled above");
        let device = &context.device;
        let cap = self.max_binding_bytes;
        let bounds: Vec<f32> = grid
            .xs
            .bounds
            .iter()
            .chain(&grid.ys.bounds)
            .copied()
            .collect();
        let (_, walk) = &mut state.groups[query as usize];
        let replaced = context.scoped(|| {
            Ok(Binder::new(device, cap, walk)
                .bind(0, &state.params)
                .grow(1, &mut state.bounds, (bounds.len() * 4) as u64)
                .grow(3, &mut state.cell_start, (grid.cell_start.len() * 4) as u64)
                .grow(4, &mut state.entries, (grid.entries.len() * 4) as u64)
                .grow(5, &mut state.boxes, (grid.boxes.len() * 16) as u64)
                .grow(6, &mut state.spans, (grid.spans.len() * 16) as u64)
                .build("rectcast.shapes.grid_walk", &pipeline.walk_layout, walk))
        })?;
        if replaced {
            // The other queries' walks name the buffers replaced.
            for (k, (_, walk)) in state.groups.iter_mut().enumerate() {
                if k != query as usize {
                    *walk = None;
                }
            }
        }
        let queue = &context.queue;
        let write = |buffer: &Growable, bytes: &[u8]| {
            if !bytes.is_empty() {
                queue.write_buffer(buffer.get(), 0, bytes);
            }
        };
        write(&state.bounds, bytemuck::cast_slice(&bounds));
        write(&state.cell_start, bytemuck::cast_slice(&grid.cell_start));
        write(&state.entries, bytemuck::cast_slice(&grid.entries));
        write(&state.boxes, bytemuck::cast_slice(&grid.boxes));
        write(&state.spans, bytemuck::cast_slice(&grid.spans));
        let axis = |a: &crate::cpu::grid::Axis, first: usize| GridAxis {
            first: first as u32,
            cells: a.cells,
            origin: a.origin,
            scale: a.scale,
        };
        let params = GridParams {
            xs: axis(&grid.xs, 0),
            ys: axis(&grid.ys, grid.xs.bounds.len()),
            cols: grid.cols,
            rows: grid.rows,
            rect_count: grid.spans.len() as u32,
            padding: 0,
        };
        queue.write_buffer(&state.params, 0, bytemuck::bytes_of(&params));
        Ok(())
    }

    /// Makes room for a tile's outputs of `query` (`queries` of them and `shapes`, or `room`
    /// hits), rebuilding its group 0 when a buffer it names was replaced.
    fn reserve_grid(&mut self, query: GridQuery, queries: usize, shapes: usize, room: usize) {
        let device = &self.context.device;
        let cap = self.max_binding_bytes;
        let contact = size_of::<S::Contact>() as u64;
        let state = self.grid.as_mut().expect("uploaded first");
        let pipeline = state.pipelines[query as usize]
            .as_ref()
            .expect("compiled first");
        let (group, _) = &mut state.groups[query as usize];
        let binder = Binder::new(device, cap, group)
            .bind(0, &self.params)
            .bind(1, self.queries.get())
            .bind(2, self.shapes.get())
            .bind(4, self.bounds.get());
        let n = queries as u64;
        let binder = match query {
            GridQuery::FirstHits => binder.grow(9, &mut state.first_shapes, n * 4).grow(
                10,
                &mut state.first_contacts,
                n * contact,
            ),
            GridQuery::Hits => binder
                .bind(11, &state.hit_count)
                .grow(12, &mut state.hit_pairs, room as u64 * 4)
                .grow(13, &mut state.hit_contacts, room as u64 * contact),
            GridQuery::Counts => binder.grow(5, &mut state.query_hits, n * 4).grow(
                6,
                &mut state.shape_hits,
                shapes as u64 * 4,
            ),
        };
        binder.build("rectcast.shapes.grid_group", &pipeline.layout, group);
    }

    /// Records `query`'s walk over the uploaded tile of `queries` queries.
    fn encode_grid(&self, encoder: &mut wgpu::CommandEncoder, query: GridQuery, queries: usize) {
        let state = self.grid.as_ref().expect("uploaded first");
        let pipeline = state.pipelines[query as usize]
            .as_ref()
            .expect("compiled first");
        let (group, walk) = &state.groups[query as usize];
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("rectcast.shapes.grid_pass"),
            timestamp_writes: self.timer.as_ref().and_then(KernelTimer::writes),
        });
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, group.as_ref(), &[]);
        pass.set_bind_group(1, walk.as_ref(), &[]);
        let (x, y) = chunks::workgroup_grid(queries, self.max_workgroups_per_dimension);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// [`first_hits`](Self::first_hits) through `grid` (over `shapes`' boxes): false, with
    /// nothing done, where it cannot run here ([`grid_runs`](Self::grid_runs)).
    pub(crate) fn first_hits_through(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
        first: &mut [Option<ShapeHit<S::Contact>>],
    ) -> Result<bool> {
        if !self.grid_runs(grid, shapes.len()) {
            return Ok(false);
        }
        let query = GridQuery::FirstHits;
        self.upload_grid(grid, query)?;
        let contact = size_of::<S::Contact>();
        let work = self.grid_tiles(queries.len(), shapes.len());
        let run = Run {
            in_flight: CHUNKS_IN_FLIGHT,
            contacts: false,
        };
        self.run_tiles(
            queries,
            shapes,
            run,
            work,
            |this, tile: &DenseChunk, encoder, slot| {
                let n = tile.segments.len();
                let (shape_bytes, contact_bytes) = ((n * 4) as u64, (n * contact) as u64);
                this.reserve_grid(query, n, shapes.len(), 0);
                this.reserve_staging(slot, shape_bytes + contact_bytes);
                this.encode_grid(encoder, query, n);
                let state = this.grid.as_ref().expect("uploaded first");
                let staging = this.staging[slot].get();
                let shapes_out = state.first_shapes.get();
                encoder.copy_buffer_to_buffer(shapes_out, 0, staging, 0, shape_bytes);
                let contacts_out = state.first_contacts.get();
                encoder.copy_buffer_to_buffer(contacts_out, 0, staging, shape_bytes, contact_bytes);
                Ok(Staged {
                    bytes: shape_bytes + contact_bytes,
                    step: query.entry(),
                    pairs: tile.pair_count(),
                })
            },
            |tile, mapped, _| merge_first_hits(tile, mapped, first),
        )?;
        Ok(true)
    }

    /// [`hits`](Self::hits) through `grid`, as [`first_hits_through`](Self::first_hits_through):
    /// `None` where it cannot run here.
    pub(crate) fn hits_through(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
    ) -> Result<Option<Vec<ShapeHit<S::Contact>>>> {
        if !self.grid_runs(grid, shapes.len()) {
            return Ok(None);
        }
        let query = GridQuery::Hits;
        self.upload_grid(grid, query)?;
        let contact = size_of::<S::Contact>();
        let most_room = (self.max_binding_bytes / contact as u64) as usize;
        let m = shapes.len();
        let mut hits = Vec::new();
        let work = self
            .grid_tiles(queries.len(), m)
            .map(|tile| GridHits::Tile {
                room: (tile.segments.len() * FIRST_HIT_ROOM).min(most_room),
                tile,
            });
        // One piece at a time: a tile's copy reads the hit list it left.
        let run = Run {
            in_flight: 1,
            contacts: false,
        };
        self.run_tiles(
            queries,
            shapes,
            run,
            work,
            |this, work: &GridHits, encoder, slot| match work {
                GridHits::Tile { tile, room } => {
                    let n = tile.segments.len();
                    this.reserve_grid(query, n, m, *room);
                    this.reserve_staging(slot, 4);
                    let state = this.grid.as_ref().expect("uploaded first");
                    encoder.clear_buffer(&state.hit_count, 0, None);
                    this.encode_grid(encoder, query, n);
                    let state = this.grid.as_ref().expect("uploaded first");
                    let staging = this.staging[slot].get();
                    encoder.copy_buffer_to_buffer(&state.hit_count, 0, staging, 0, 4);
                    Ok(Staged {
                        bytes: 4,
                        step: query.entry(),
                        pairs: tile.pair_count(),
                    })
                }
                GridHits::Copy { count, .. } => {
                    let (pair_bytes, contact_bytes) =
                        ((count * 4) as u64, (count * contact) as u64);
                    this.reserve_staging(slot, pair_bytes + contact_bytes);
                    let state = this.grid.as_ref().expect("uploaded first");
                    let staging = this.staging[slot].get();
                    let (pairs_out, contacts_out) =
                        (state.hit_pairs.get(), state.hit_contacts.get());
                    encoder.copy_buffer_to_buffer(pairs_out, 0, staging, 0, pair_bytes);
                    encoder.copy_buffer_to_buffer(
                        contacts_out,
                        0,
                        staging,
                        pair_bytes,
                        contact_bytes,
                    );
                    Ok(Staged {
                        bytes: pair_bytes + contact_bytes,
                        step: query.entry(),
                        pairs: *count,
                    })
                }
            },
            |work, mapped, again| match work {
                GridHits::Tile { tile, room } => {
                    let count = bytemuck::pod_read_unaligned::<u32>(mapped) as usize;
                    if count > *room {
                        // Again with room for them all, or in halves past the most a binding
                        // holds.
                        if count <= most_room || tile.segments.len() == 1 {
                            again.push(GridHits::Tile {
                                tile: tile.clone(),
                                room: count.min(most_room),
                            });
                        } else {
                            let (start, end) = (tile.segments.start, tile.segments.end);
                            let mid = start + (end - start) / 2;
                            for segments in [start..mid, mid..end] {
                                let room = (segments.len() * FIRST_HIT_ROOM).min(most_room);
                                let tile = DenseChunk {
                                    segments,
                                    targets: 0..m,
                                };
                                again.push(GridHits::Tile { tile, room });
                            }
                        }
                    } else if count > 0 {
                        again.push(GridHits::Copy {
                            tile: tile.clone(),
                            count,
                        });
                    }
                }
                GridHits::Copy { tile, count } => {
                    let (pair_bytes, contact_bytes) = mapped.split_at(count * 4);
                    let indices: &[u32] = bytemuck::cast_slice(pair_bytes);
                    let contacts: &[S::Contact] = bytemuck::cast_slice(contact_bytes);
                    hits.extend(indices.iter().zip(contacts).map(|(&i, &contact)| {
                        let i = i as usize;
                        ShapeHit {
                            segment: (tile.segments.start + i / m) as u32,
                            shape: (i % m) as u32,
                            contact,
                        }
                    }));
                }
            },
        )?;
        // Appended in no set order: (segment, shape) is each hit's own key.
        hits.sort_unstable_by_key(|h| (h.segment, h.shape));
        Ok(Some(hits))
    }

    /// [`counts`](Self::counts) through `grid`, as [`first_hits_through`](Self::first_hits_through).
    pub(crate) fn counts_through(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
        per_query: &mut [u32],
        per_shape: &mut [u64],
    ) -> Result<bool> {
        if !self.grid_runs(grid, shapes.len()) || S::KERNEL.counts.is_none() {
            return Ok(false);
        }
        let query = GridQuery::Counts;
        self.upload_grid(grid, query)?;
        let m = shapes.len();
        let work = self.grid_tiles(queries.len(), m);
        let run = Run {
            in_flight: CHUNKS_IN_FLIGHT,
            contacts: false,
        };
        self.run_tiles(
            queries,
            shapes,
            run,
            work,
            |this, tile: &DenseChunk, encoder, slot| {
                let n = tile.segments.len();
                let (query_bytes, shape_bytes) = ((n * 4) as u64, (m * 4) as u64);
                this.reserve_grid(query, n, m, 0);
                this.reserve_staging(slot, query_bytes + shape_bytes);
                let state = this.grid.as_ref().expect("uploaded first");
                encoder.clear_buffer(state.query_hits.get(), 0, Some(query_bytes));
                encoder.clear_buffer(state.shape_hits.get(), 0, Some(shape_bytes));
                this.encode_grid(encoder, query, n);
                let state = this.grid.as_ref().expect("uploaded first");
                let staging = this.staging[slot].get();
                encoder.copy_buffer_to_buffer(state.query_hits.get(), 0, staging, 0, query_bytes);
                let shape_hits = state.shape_hits.get();
                encoder.copy_buffer_to_buffer(shape_hits, 0, staging, query_bytes, shape_bytes);
                Ok(Staged {
                    bytes: query_bytes + shape_bytes,
                    step: query.entry(),
                    pairs: tile.pair_count(),
                })
            },
            |tile, mapped, _| merge_counts(tile, mapped, per_query, per_shape),
        )?;
        Ok(true)
    }
}
