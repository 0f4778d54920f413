//! Polygons through the broad phase's grid on the GPU (`shaders/polygon_grid.wgsl`, after the
//! walk of `shaders/shape_walk.wgsl`): each query segment lists the polygons whose box its own
//! meets, and the GPU tests each candidate's edges into one list of edges' contacts, which the
//! host gathers (`src/engine/polygons.rs`) as it gathers the dense pairs'. The tiles, rooms and
//! reruns are the shapes' grid's (`grid.rs`).

use super::GpuShapeQueries;
use super::grid::GridWork;
use super::kernels::{GridQuery, ShapeGrid};
use crate::cpu::grid::Grid;
use crate::error::Result;
use crate::shape::Shape;
use crate::types::{Rect, Segment};

/// The most edges a polygon may have to go through the grid: one invocation tests all of a
/// candidate's edges in a loop, and a software GPU ends a long loop early without an error
/// (lavapipe left the last edges of a 400-edge strip unwritten, about 2^16 iterations of the
/// exact code's loops in all: its loop limiter). Past it the caller runs the dense passes, one
/// edge an invocation.
pub(crate) const MOST_EDGES_A_CANDIDATE: u32 = 64;

impl<S: Shape> GpuShapeQueries<S> {
    /// Polygons through `grid` (over the polygons' boxes): every query's candidates, the
    /// polygons whose box its own meets, each tested against its polygon's edges on the GPU
    /// (`shaders/polygon_grid.wgsl`). `self` is the polygons' edges' kernel, `edges` the
    /// polygons' edges in order and `offsets` where each polygon's start (and the last one's
    /// end). `each(segment, polygon, its edges' contacts)` takes every candidate, in no set
    /// order; a pair that is not one misses. False, with nothing done, where it cannot run
    /// here ([`grid_runs`](Self::grid_runs)), or where a polygon has more edges than
    /// [`MOST_EDGES_A_CANDIDATE`].
    pub(crate) fn polygons_through(
        &mut self,
        queries: &[Segment],
        edges: &[S],
        offsets: &[u32],
        grid: &Grid,
        mut each: impl FnMut(usize, usize, &[S::Contact]),
    ) -> Result<bool> {
        let query = GridQuery::PolygonEdges;
        let polygons = offsets.len().saturating_sub(1);
        // Every edge goes up in one tile.
        let edge_bytes = (edges.len() * size_of::<S>().max(size_of::<Rect>())) as u64;
        let most_edges = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        if !self.grid_runs(query, grid, polygons)
            || edge_bytes > self.max_binding_bytes
            || most_edges > MOST_EDGES_A_CANDIDATE
        {
            return Ok(false);
        }
        // The table: the polygons' count, then their offsets.
        let table: Vec<u32> = std::iter::once(polygons as u32)
            .chain(offsets.iter().copied())
            .collect();
        let context = self.context.clone();
        let cap = self.max_binding_bytes;
        let state = self.grid.get_or_insert_with(|| ShapeGrid::new(&context));
        let table_bytes = bytemuck::cast_slice::<u32, u8>(&table);
        if state
            .polygon_table
            .reserve(&context.device, table_bytes.len() as u64, cap)
        {
            // The query's group names the table it replaced.
            state.groups[query as usize].0 = None;
        }
        context
            .queue
            .write_buffer(state.polygon_table.get(), 0, table_bytes);
        let contact = size_of::<S::Contact>();
        let rooms = self.grid_rooms(query, grid, edges.len());
        // One piece at a time: a tile's copy reads the lists it left.
        self.run_grid(
            queries,
            edges,
            grid,
            (query, 1),
            |this, work, encoder, slot| match work {
                GridWork::Tile { .. } => {
                    let state = this.grid.as_ref().expect("uploaded first");
                    let staging = this.staging[slot].get();
                    encoder.copy_buffer_to_buffer(&state.edge_count, 0, staging, 4, 4);
                    (4, 0)
                }
                GridWork::Copy { count, edges, .. } => {
                    let (list_bytes, edge_bytes) = ((count * 4) as u64, (edges * contact) as u64);
                    this.reserve_staging(slot, 2 * list_bytes + edge_bytes);
                    let state = this.grid.as_ref().expect("uploaded first");
                    let staging = this.staging[slot].get();
                    let mut at = 0;
                    for (buffer, bytes) in [
                        (state.listed_pairs.get(), list_bytes),
                        (state.listed_edges.get(), list_bytes),
                        (state.edge_contacts.get(), edge_bytes),
                    ] {
                        if bytes > 0 {
                            encoder.copy_buffer_to_buffer(buffer, 0, staging, at, bytes);
                        }
                        at += bytes;
                    }
                    (at, *edges)
                }
            },
            |work, mapped, again| match work {
                GridWork::Tile {
                    tile,
                    list,
                    hits: room,
                } => {
                    let count = bytemuck::pod_read_unaligned::<u32>(&mapped[..4]) as usize;
                    let edges = bytemuck::pod_read_unaligned::<u32>(&mapped[4..8]) as usize;
                    if edges > *room {
                        rooms.again(tile, *list, edges, again);
                    } else if count > 0 {
                        again.push(GridWork::Copy {
                            tile: tile.clone(),
                            count,
                            edges,
                        });
                    }
                }
                GridWork::Copy { tile, count, edges } => {
                    let (pairs, rest) = mapped.split_at(count * 4);
                    let (starts, contacts) = rest.split_at(count * 4);
                    let contacts: Vec<S::Contact> =
                        bytemuck::pod_collect_to_vec(&contacts[..edges * contact]);
                    let pairs: Vec<u32> = bytemuck::pod_collect_to_vec(pairs);
                    let starts: Vec<u32> = bytemuck::pod_collect_to_vec(starts);
                    for (pair, start) in pairs.into_iter().zip(starts) {
                        let (q, p) = (pair as usize / polygons, pair as usize % polygons);
                        let start = start as usize;
                        let len = (offsets[p + 1] - offsets[p]) as usize;
                        each(tile.segments.start + q, p, &contacts[start..start + len]);
                    }
                }
            },
        )?;
        Ok(true)
    }
}
