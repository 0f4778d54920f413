//! The shapes' queries through the broad phase's grid on the GPU (`shaders/shape_grid.wgsl`,
//! after the walk of `shaders/grid_walk.wgsl`): hits and counts, each query segment
//! listing the shapes of the cells it crosses, and the exact path running over that list, with
//! the bytes of the dense passes'. The tiles, rooms and reruns here serve the polygons' edges
//! too (`polygon_grid.rs`).
//!
//! The grid is built on the host over the shapes' boxes ([`Grid::build`]; the engine keeps it
//! for the same shapes from call to call) and goes up once per call; a tile is a run of queries
//! against every shape. A tile's list, and its hit list, start with room for a few a query; a
//! tile that found more runs again with room for all, or in halves past what a binding holds.
//! The pipelines compile on their query's first use, and only where the device binds their
//! buffers ([`layouts::allow_shape_grid`]): elsewhere the caller runs the dense passes (the same
//! bytes).

use super::kernels::{GridPipelines, GridQuery, ShapeGrid};
use super::queries::{copy_hits, merge_counts, merge_hits};
use super::{GpuShapeQueries, Run, Staged, TileWork};
use crate::cpu::grid::Grid;
use crate::error::Result;
use crate::gpu::buffers::{Binder, Growable};
use crate::gpu::chunks::{self, DenseChunk};
use crate::gpu::layouts;
use crate::gpu::ring::CHUNKS_IN_FLIGHT;
use crate::gpu::timer::KernelTimer;
use crate::shape::{Shape, ShapeHit};
use crate::types::{Rect, Segment};

/// Queries one tile of the grid's queries takes at most: a tile reads back its outputs while
/// the next runs, and its wait is sized by its worst case (every query testing every shape).
const TILE_QUERIES: usize = 1 << 16;

/// Room for listed candidates per query of a tile at first.
const FIRST_LIST_ROOM: usize = 16;

/// Room for hits per query of a tile at first.
const FIRST_HIT_ROOM: usize = 8;

/// Segments, evenly spaced through a call's, whose walks judge whether the grid pays.
const SAMPLED_WALKS: usize = 256;

/// What the dense passes cost a query over shapes on the GPU, against which its grid is
/// judged ([`grid_pays`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DensePairs {
    /// Reduced on the GPU (walls, circles): [`PAIRS_PER_VISITED_ENTRY`] pairs an entry.
    Reduced,
    /// Each read back and gathered on the host (polygons' edges):
    /// [`GATHERED_PAIRS_PER_VISITED_ENTRY`] pairs an entry. A gathered pair costs the host
    /// more than a grid's build costs a shape, at any size, so `BroadPhase::Auto` builds the
    /// grid for them whatever the batch (lavapipe, polygon first hits, bullet-hell: 512 × 64
    /// octagons 41 ms dense, 0.6 ms through the grid; 16,384 × 256, 7.5 s and 30 ms).
    Gathered,
}

impl DensePairs {
    /// How many dense pairs one entry a walk visits costs.
    pub(crate) fn pairs_per_entry(self) -> u64 {
        match self {
            DensePairs::Reduced => PAIRS_PER_VISITED_ENTRY,
            DensePairs::Gathered => GATHERED_PAIRS_PER_VISITED_ENTRY,
        }
    }
}

/// About how many dense pairs one entry a walk visits costs, where the GPU reduces the dense
/// pairs (walls, circles): the grid pays where the walks visit fewer entries than the dense
/// passes test pairs, by this factor. A walk runs serially in its invocation, while the dense
/// passes test every pair side by side (lavapipe, 2 cores: walls 8,192 × 2,048 over the random
/// scene, long segments that visit hundreds of entries each, took 4.35 s through the grid and
/// 2.21 s dense; 16,384 bullets × 2,048, a few entries each, 21 ms through the grid and 540 ms
/// dense).
const PAIRS_PER_VISITED_ENTRY: u64 = 8;

/// The same where the host gathers the dense pairs it reads back (polygons: every edge pair's
/// contact, read back and gathered into its polygon's): a dense pair costs the host more than
/// an entry costs a walk, so the grid pays wherever its walks visit fewer entries than there
/// are pairs (lavapipe, 2 cores: polygon first hits over the random scene, long segments,
/// 512 × 256 took 101 ms through the grid and 112 ms dense, 4,096 × 1,024 1.14 s and 3.74 s;
/// 16,384 bullets × 2,048, 79 ms and 33.1 s).
const GATHERED_PAIRS_PER_VISITED_ENTRY: u64 = 1;

/// Whether the grid over `shapes` shapes pays for `queries` on the GPU: its walks, judged on
/// [`SAMPLED_WALKS`] of them (every shape for those that prefer the brute force), visit fewer
/// entries than the dense passes test pairs, by what `dense` pairs cost. Host work of a few
/// hundred walks, whatever the call.
pub(crate) fn grid_pays(
    grid: &Grid,
    queries: &[Segment],
    shapes: usize,
    dense: DensePairs,
) -> bool {
    use crate::cpu::grid::{prefers_brute_force, walk_entries, walk_of};
    if !grid.is_built() || queries.is_empty() {
        return false;
    }
    let step = (queries.len() / SAMPLED_WALKS).max(1);
    let (mut visited, mut walks) = (0u64, 0u64);
    for s in queries.iter().step_by(step).take(SAMPLED_WALKS) {
        let walk = walk_of(grid, s);
        visited += match prefers_brute_force(grid, s, &walk, shapes) {
            true => shapes as u64,
            false => walk_entries(grid, s, &walk, shapes as u64),
        };
        walks += 1;
    }
    visited * dense.pairs_per_entry() <= walks * shapes as u64
}

/// A piece of a query's work through the grid: a tile with room for `list` candidates and
/// `hits` hits (polygons: edges' contacts), or the copy of the `count` hits a tile found
/// (polygons: its `count` candidates and their `edges` edges' contacts).
pub(super) enum GridWork {
    Tile {
        tile: DenseChunk,
        list: usize,
        hits: usize,
    },
    Copy {
        tile: DenseChunk,
        count: usize,
        edges: usize,
    },
}

impl TileWork for GridWork {
    fn tile(&self) -> Option<&DenseChunk> {
        match self {
            GridWork::Tile { tile, .. } => Some(tile),
            GridWork::Copy { .. } => None,
        }
    }
}

/// The most candidates and hits one tile's lists hold: what one binding holds of each; and
/// the room for hits a candidate takes at first (polygons: edges' contacts, as many as a
/// polygon has edges on average).
#[derive(Clone, Copy)]
pub(super) struct Rooms {
    list: usize,
    hits: usize,
    per_candidate: usize,
}

impl Rooms {
    /// A tile over `segments` with the room a tile starts with.
    fn tile(self, segments: std::ops::Range<usize>, shapes: usize) -> GridWork {
        let n = segments.len();
        GridWork::Tile {
            list: (n * FIRST_LIST_ROOM).min(self.list),
            hits: (n * FIRST_HIT_ROOM * self.per_candidate).min(self.hits),
            tile: DenseChunk {
                segments,
                targets: 0..shapes,
            },
        }
    }

    /// `tile` again, its lists found `list` candidates and `hits` hits past their room: with
    /// room for all, or in halves past what a binding holds. (One query's candidates and hits,
    /// one per shape at most, always fit: [`grid_runs`](GpuShapeQueries::grid_runs).)
    pub(super) fn again(
        self,
        tile: &DenseChunk,
        list: usize,
        hits: usize,
        again: &mut Vec<GridWork>,
    ) {
        let (start, end) = (tile.segments.start, tile.segments.end);
        if (list <= self.list && hits <= self.hits) || end - start == 1 {
            again.push(GridWork::Tile {
                tile: tile.clone(),
                list: list.min(self.list),
                hits: hits.min(self.hits),
            });
        } else {
            let mid = start + (end - start) / 2;
            let shapes = tile.targets.len();
            again.extend([start..mid, mid..end].map(|half| self.tile(half, shapes)));
        }
    }
}

impl<S: Shape> GpuShapeQueries<S> {
    /// Whether `query` over `shapes` can run through `grid` here: the kernel walks grids and
    /// runs the query, the device binds the pipelines' buffers, and the shapes and the grid
    /// fit its bindings.
    pub(super) fn grid_runs(&self, query: GridQuery, grid: &Grid, shapes: usize) -> bool {
        let limits = self.context.limits();
        let entries = grid.entries.len() as u64;
        S::KERNEL.grid.is_some()
            && query.runs_on(S::KERNEL.reduces)
            && grid.is_built()
            // Not along walls: a wall in every cell of its line would be met twice.
            && !grid.along
            && grid.spans.len() == shapes
            && shapes > 0
            && layouts::allow_shape_grid(&limits)
            // Each shape's value, box and (a query's candidates and hits on every shape)
            // contact.
            && (shapes * size_of::<S>().max(size_of::<Rect>()).max(size_of::<S::Contact>())) as u64
                <= self.max_binding_bytes
            && crate::gpu::grid::fits(
                grid,
                entries,
                self.max_binding_bytes,
                self.max_workgroups_per_dimension,
            )
    }

    /// The most a tile's lists hold, for `query` over `shapes` shapes through `grid` (over
    /// `grid.spans.len()` of them: polygons over their edges).
    pub(super) fn grid_rooms(&self, query: GridQuery, grid: &Grid, shapes: usize) -> Rooms {
        let contact = size_of::<S::Contact>().max(4) as u64;
        let most = (self.max_binding_bytes / contact) as usize;
        let per_candidate = match query {
            GridQuery::PolygonEdges => shapes.div_ceil(grid.spans.len().max(1)).max(1),
            _ => 1,
        };
        Rooms {
            list: most,
            hits: most,
            per_candidate,
        }
    }

    /// The tiles of `queries` against all `shapes` shapes through the grid.
    fn grid_tiles(
        &self,
        queries: usize,
        shapes: usize,
        rooms: Rooms,
    ) -> impl Iterator<Item = GridWork> + use<S> {
        let dispatch = self.caps.pairs as usize;
        // Candidates name their pair as q * shapes + j, in u32.
        let tile = TILE_QUERIES
            .min(self.caps.segments as usize)
            .min(dispatch)
            .min(u32::MAX as usize / shapes.max(1))
            .max(1);
        (0..queries.div_ceil(tile))
            .map(move |k| rooms.tile(k * tile..((k + 1) * tile).min(queries), shapes))
    }

    /// `query`'s pipelines (compiled on its first use) and the grid's buffers, with `grid` on
    /// the GPU: its cells, entries, boxes and spans over the shapes.
    fn upload_grid(&mut self, grid: &Grid, query: GridQuery) -> Result<()> {
        let context = self.context.clone();
        let state = self.grid.get_or_insert_with(|| ShapeGrid::new(&context));
        if state.pipelines[query as usize].is_none() {
            state.pipelines[query as usize] = Some(GridPipelines::compile::<S>(&context, query)?);
        }
        let pipelines = state.pipelines[query as usize]
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
                .build("rectcast.shapes.grid_walk", &pipelines.walk_layout, walk))
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
        let params = crate::gpu::grid::grid_params(grid);
        queue.write_buffer(&state.params, 0, bytemuck::bytes_of(&params));
        Ok(())
    }

    /// Makes room for a tile of `queries` queries against `shapes` shapes with room for `list`
    /// candidates and `hits` hits, rebuilding `query`'s group 0 when a buffer it names was
    /// replaced.
    fn reserve_grid(
        &mut self,
        query: GridQuery,
        (queries, shapes): (usize, usize),
        list: usize,
        hits: usize,
    ) {
        let device = &self.context.device;
        let cap = self.max_binding_bytes;
        let contact = size_of::<S::Contact>() as u64;
        let state = self.grid.as_mut().expect("uploaded first");
        let pipelines = state.pipelines[query as usize]
            .as_ref()
            .expect("compiled first");
        let (group, _) = &mut state.groups[query as usize];
        let (n, list) = (queries as u64, list as u64);
        let binder = Binder::new(device, cap, group)
            .bind(0, &self.params)
            .bind(1, self.queries.get())
            .bind(2, self.shapes.get())
            .bind(7, &state.pair_list)
            .grow(8, &mut state.listed_pairs, list * 4);
        let binder = match query {
            GridQuery::Hits => binder
                .bind(4, self.bounds.get())
                .bind(11, &state.hit_count)
                .grow(12, &mut state.hit_pairs, hits as u64 * 4)
                .grow(13, &mut state.hit_contacts, hits as u64 * contact),
            GridQuery::Counts => binder
                .bind(4, self.bounds.get())
                .grow(5, &mut state.query_hits, n * 4)
                .grow(6, &mut state.shape_hits, shapes as u64 * 4),
            // The polygons' table went up with the grid ([`polygons_through`]).
            GridQuery::PolygonEdges => binder
                .grow(3, &mut state.edge_contacts, hits as u64 * contact)
                .bind(17, state.polygon_table.get())
                .grow(18, &mut state.listed_edges, list * 4)
                .bind(19, &state.edge_count),
        };
        binder.build("rectcast.shapes.grid_group", &pipelines.layout, group);
    }

    /// Records `query` over the uploaded tile of `queries` queries: the walk that lists their
    /// candidates, the list's dispatch, and the passes over the list. Its outputs are cleared
    /// first; the list's length is then copied to the start of the slot's staging buffer.
    fn encode_grid(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        query: GridQuery,
        (queries, shapes): (usize, usize),
        slot: usize,
    ) {
        let state = self.grid.as_ref().expect("uploaded first");
        let pipelines = state.pipelines[query as usize]
            .as_ref()
            .expect("compiled first");
        encoder.clear_buffer(&state.pair_list, 0, None);
        let n = (queries * 4) as u64;
        match query {
            GridQuery::Hits => encoder.clear_buffer(&state.hit_count, 0, None),
            GridQuery::Counts => {
                encoder.clear_buffer(state.query_hits.get(), 0, Some(n));
                encoder.clear_buffer(state.shape_hits.get(), 0, Some((shapes * 4) as u64));
            }
            GridQuery::PolygonEdges => encoder.clear_buffer(&state.edge_count, 0, None),
        }
        let (group, walk) = &state.groups[query as usize];
        let timer = self.timer.as_ref();
        let pass = |encoder: &mut wgpu::CommandEncoder, pipeline, dispatch: Option<(u32, u32)>| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rectcast.shapes.grid_pass"),
                timestamp_writes: timer.and_then(KernelTimer::writes),
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group.as_ref(), &[]);
            pass.set_bind_group(1, walk.as_ref(), &[]);
            match dispatch {
                Some((x, y)) => pass.dispatch_workgroups(x, y, 1),
                None => pass.dispatch_workgroups_indirect(&state.list_args, 0),
            }
        };
        let walkers = chunks::workgroup_grid(queries, self.max_workgroups_per_dimension);
        pass(encoder, &pipelines.list, Some(walkers));
        pass(encoder, &pipelines.list_dispatch, Some((1, 1)));
        encoder.copy_buffer_to_buffer(&state.pair_list, 4, &state.list_args, 0, 12);
        for pipeline in &pipelines.passes {
            pass(encoder, pipeline, None);
        }
        encoder.copy_buffer_to_buffer(&state.pair_list, 0, self.staging[slot].get(), 0, 4);
    }

    /// Runs `query` through `grid` over `queries` × `shapes`: each tile as [`encode_grid`]
    /// records it, then `copy` the query's outputs into the slot's staging buffer after the
    /// list's length (their bytes, and the submission's pairs; staging is reserved for a tile's,
    /// and a copy of hits reserves its own); `merge` reads them back when
    /// the list had room for every candidate, else the tile runs again with more.
    #[allow(
        clippy::too_many_arguments,
        reason = "a tile's buffers, bounds and list, each bound on its own"
    )]
    pub(super) fn run_grid(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
        (query, in_flight): (GridQuery, usize),
        mut copy: impl FnMut(&mut Self, &GridWork, &mut wgpu::CommandEncoder, usize) -> (u64, usize),
        mut merge: impl FnMut(&GridWork, &[u8], &mut Vec<GridWork>),
    ) -> Result<()> {
        self.upload_grid(grid, query)?;
        let rooms = self.grid_rooms(query, grid, shapes.len());
        let work = self.grid_tiles(queries.len(), shapes.len(), rooms);
        let m = shapes.len();
        let run = Run {
            in_flight,
            contacts: false,
        };
        self.run_tiles(
            queries,
            shapes,
            run,
            work,
            |this, work: &GridWork, encoder, slot| {
                let (mut bytes, mut pairs) = (0, 0);
                if let GridWork::Tile { tile, list, hits } = work {
                    let n = tile.segments.len();
                    this.reserve_grid(query, (n, m), *list, *hits);
                    // The list's length, then the query's outputs: reserved at once, since a
                    // staging buffer that grows is replaced.
                    let outputs = match query {
                        GridQuery::Hits | GridQuery::PolygonEdges => 4,
                        GridQuery::Counts => (n + m) * 4,
                    };
                    this.reserve_staging(slot, 4 + outputs as u64);
                    this.encode_grid(encoder, query, (n, m), slot);
                    (bytes, pairs) = (4, tile.pair_count());
                }
                let (more, copied) = copy(this, work, encoder, slot);
                Ok(Staged {
                    bytes: bytes + more,
                    step: query.passes()[0],
                    pairs: pairs.max(copied),
                })
            },
            |work, mapped, again| {
                if let GridWork::Tile { tile, list, hits } = work {
                    let found = bytemuck::pod_read_unaligned::<u32>(&mapped[..4]) as usize;
                    if found > *list {
                        // As many hits as candidates at most (polygons: about as many edges
                        // as their polygons have): room for both at once.
                        let hits = (found * rooms.per_candidate).max(*hits);
                        rooms.again(tile, found, hits, again);
                        return;
                    }
                }
                merge(work, mapped, again);
            },
        )
    }

    /// [`hits`](Self::hits) through `grid` (over `shapes`' boxes): `None`, with nothing done,
    /// where it cannot run here ([`grid_runs`](Self::grid_runs)).
    pub(crate) fn hits_through(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
    ) -> Result<Option<Vec<ShapeHit<S::Contact>>>> {
        if !self.grid_runs(GridQuery::Hits, grid, shapes.len()) {
            return Ok(None);
        }
        let contact = size_of::<S::Contact>();
        let rooms = self.grid_rooms(GridQuery::Hits, grid, shapes.len());
        let mut hits = Vec::new();
        // One piece at a time: a tile's copy reads the hit list it left.
        let query = (GridQuery::Hits, 1);
        self.run_grid(
            queries,
            shapes,
            grid,
            query,
            |this, work, encoder, slot| match work {
                GridWork::Tile { .. } => {
                    let state = this.grid.as_ref().expect("uploaded first");
                    let staging = this.staging[slot].get();
                    encoder.copy_buffer_to_buffer(&state.hit_count, 0, staging, 4, 4);
                    (4, 0)
                }
                GridWork::Copy { count, .. } => {
                    this.reserve_staging(slot, (count * (4 + contact)) as u64);
                    let state = this.grid.as_ref().expect("uploaded first");
                    let lists = (state.hit_pairs.get(), state.hit_contacts.get());
                    let staging = this.staging[slot].get();
                    let bytes = copy_hits::<S::Contact>(encoder, lists, staging, *count);
                    (bytes, *count)
                }
            },
            |work, mapped, again| match work {
                GridWork::Tile {
                    tile,
                    list,
                    hits: room,
                } => {
                    let count = bytemuck::pod_read_unaligned::<u32>(&mapped[4..8]) as usize;
                    if count > *room {
                        rooms.again(tile, *list, count, again);
                    } else if count > 0 {
                        again.push(GridWork::Copy {
                            tile: tile.clone(),
                            count,
                            edges: 0,
                        });
                    }
                }
                GridWork::Copy { tile, count, .. } => merge_hits(tile, mapped, *count, &mut hits),
            },
        )?;
        // Appended in no set order: (segment, shape) is each hit's own key.
        hits.sort_unstable_by_key(|h| (h.segment, h.shape));
        Ok(Some(hits))
    }

    /// [`counts`](Self::counts) through `grid`, as [`hits_through`](Self::hits_through).
    pub(crate) fn counts_through(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        grid: &Grid,
        per_query: &mut [u32],
        per_shape: &mut [u64],
    ) -> Result<bool> {
        if !self.grid_runs(GridQuery::Counts, grid, shapes.len()) {
            return Ok(false);
        }
        let m = shapes.len();
        let query = (GridQuery::Counts, CHUNKS_IN_FLIGHT);
        self.run_grid(
            queries,
            shapes,
            grid,
            query,
            |this, work, encoder, slot| {
                let GridWork::Tile { tile, .. } = work else {
                    return (0, 0);
                };
                let (query_bytes, shape_bytes) = ((tile.segments.len() * 4) as u64, (m * 4) as u64);
                let state = this.grid.as_ref().expect("uploaded first");
                let staging = this.staging[slot].get();
                encoder.copy_buffer_to_buffer(state.query_hits.get(), 0, staging, 4, query_bytes);
                let shape_hits = state.shape_hits.get();
                encoder.copy_buffer_to_buffer(shape_hits, 0, staging, 4 + query_bytes, shape_bytes);
                (query_bytes + shape_bytes, 0)
            },
            |work, mapped, _| {
                if let GridWork::Tile { tile, .. } = work {
                    merge_counts(tile, &mapped[4..], per_query, per_shape);
                }
            },
        )?;
        Ok(true)
    }
}
