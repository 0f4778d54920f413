//! The queries over polygons, segment × polygon and polygon × polygon, on either backend.
use crate::cpu::batched::FirstOrder;
use crate::cpu::segment_polygon::Polygons;
use crate::cpu::segment_polygon::filters::{polygon_filtered, polygon_hit};
use crate::cpu::segment_polygon::{
    EdgeContact, PolygonContact, PolygonEdge, edge_ends, polygon_contact, polygon_edge,
    polygon_edges,
};
use crate::error::{Error, InputArray, Result};
use crate::gpu::shapes::DensePairs;
use crate::query::Counts;
use crate::shape::ShapeHit;
use crate::targets::{TargetBatch, Targets, polygon_hit_of};
use crate::types::{Rect, Segment};
use crate::validate;

use super::auto::{Family, Work};
use super::shapes::{SHAPE_PAIRS_PER_CHUNK, check_indices, counts_in_rows, hits_in_rows};
use super::{Engine, Inner, On};

/// A (segment, polygon index) pair's contact, on the culled paths.
type PolygonContactOf<'a> = dyn Fn(&Segment, usize) -> PolygonContact + Sync + 'a;

/// A (segment, polygon index) pair's hit alone ([`polygon_hit`]), for the culled counts.
type PolygonHitOf<'a> = dyn Fn(&Segment, usize) -> bool + Sync + 'a;

/// How a query over polygons went on a GPU engine ([`Engine::polygons_through_grid`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Through {
    /// Through the grid on the GPU: every hit was handed over.
    Grid,
    /// On the host's CPU instead (the GPU fell back, or `Auto` put it there): the caller runs
    /// the query [on the host](Engine::on_host), and drops what it was handed.
    Host,
    /// Not through the grid (the broad-phase setting, or the device): the dense passes.
    Dense,
}

impl Engine {
    /// Every query segment against every polygon, segment × polygon (docs/semantics.md):
    /// `result[q * polygons.len() + p]`, query-major. Each is [`crate::segment_polygon`]'s
    /// answer, exact, with correctly rounded t, on either backend. On the GPU each (query,
    /// edge) runs there and the host gathers each polygon's edges, every pair's or, through
    /// the grid where the broad-phase setting picks it, only each segment's candidates' (the
    /// others miss); on the CPU polygons are culled by box and their edges certified in
    /// floating point where it can.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid segment, before any work (polygons are
    /// checked when built); GPU errors.
    pub fn polygon_pairs(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<PolygonContact>> {
        let m = polygons.len();
        let too_many = || super::shapes::too_many(segments.len(), m, InputArray::Polygons);
        let n = segments.len().checked_mul(m).ok_or_else(too_many)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| too_many())?;
        validate::check_inputs(segments, &[])?;
        check_indices(segments.len(), polygons.edge_count(), InputArray::Polygons)?;
        if matches!(self.inner, Inner::Gpu(_)) {
            out.resize(n, PolygonContact::MISS);
            let through = self.polygons_through_grid(segments, polygons, |s, p, contact| {
                out[s * m + p] = contact;
            })?;
            if through == Through::Grid {
                return Ok(out);
            }
            out.clear();
        }
        // Every pair: on the CPU, where the grid is not taken, or where the GPU fell back
        // from it (the dense chunks have their own fallback).
        self.polygon_chunks(segments, polygons, |_, rows| out.extend_from_slice(rows))?;
        Ok(out)
    }

    /// The hitting (segment, polygon) pairs, as [`Engine::shape_hits`].
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<ShapeHit<PolygonContact>>> {
        let mut hits = Vec::new();
        if self.culled_polygon_hits(segments, polygons, |chunk| hits.extend_from_slice(chunk))? {
            return Ok(hits);
        }
        let through = self.polygons_through_grid(segments, polygons, |s, p, contact| {
            hits.push(ShapeHit {
                segment: s as u32,
                shape: p as u32,
                contact,
            })
        })?;
        match through {
            Through::Grid => {
                // Handed over in no set order: (segment, polygon) is each hit's own key.
                hits.sort_unstable_by_key(|h| (h.segment, h.shape));
                return Ok(hits);
            }
            Through::Host => {
                // The host's grid, if it walks one, is the call's.
                self.used_grid = false;
                return self.on_host(|this| this.polygon_hits(segments, polygons));
            }
            Through::Dense => {}
        }
        hits_in_rows(polygons.len(), |each| {
            self.polygon_chunks(segments, polygons, each)
        })
    }

    /// Each segment's first hit among the polygons, as [`Engine::shape_first_hits`]: the
    /// scene's query over them alone.
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_first_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
    ) -> Result<Vec<Option<ShapeHit<PolygonContact>>>> {
        let mut targets = Targets::new();
        targets.set_polygons(polygons.clone());
        let first = self.target_first_hits(&TargetBatch::over(segments, &targets))?;
        Ok(first
            .iter()
            .map(|hit| hit.and_then(polygon_hit_of))
            .collect())
    }

    /// Hits per segment and per polygon, as [`Engine::shape_counts`].
    ///
    /// # Errors
    /// As [`Engine::polygon_pairs`].
    pub fn polygon_counts(&mut self, segments: &[Segment], polygons: &Polygons) -> Result<Counts> {
        let mut counts = Counts {
            per_segment: vec![0; segments.len()],
            per_target: vec![0; polygons.len()],
        };
        // Each pair's hit alone, never listed (1M bullets × 100k polygons on bullet hell
        // listed 100M hits with their contacts).
        let culled = self.culled_polygons(segments, polygons, |this, work, bounds, _, hit| {
            this.with_shape_grid(work, segments.len(), bounds, None, |kernel, grid| {
                kernel.shape_counts_culled(segments, bounds, grid, |_, _| None, hit, &mut counts)
            })
        })?;
        if culled {
            return Ok(counts);
        }
        let through = self.polygons_through_grid(segments, polygons, |s, p, _| {
            counts.per_segment[s] += 1;
            counts.per_target[p] += 1;
        })?;
        match through {
            Through::Grid => return Ok(counts),
            Through::Host => {
                // The host's grid, if it walks one, is the call's.
                self.used_grid = false;
                return self.on_host(|this| this.polygon_counts(segments, polygons));
            }
            Through::Dense => {}
        }
        counts_in_rows(segments.len(), polygons.len(), |each| {
            self.polygon_chunks(segments, polygons, each)
        })
    }

    /// [`Engine::culled_first_hits`] over polygons, in `order`'s order: segments checked
    /// first.
    pub(super) fn culled_polygon_first_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        order: &impl FirstOrder<PolygonContact>,
        first: &mut [Option<ShapeHit<PolygonContact>>],
    ) -> Result<bool> {
        self.culled_polygons(segments, polygons, |this, work, bounds, contact, _| {
            this.culled_first_hits(
                work,
                segments,
                bounds,
                None,
                |_, _| None,
                contact,
                order,
                first,
            )
        })
    }

    /// [`Engine::culled_hits`] over polygons: segments checked first.
    fn culled_polygon_hits(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        each: impl FnMut(&[ShapeHit<PolygonContact>]),
    ) -> Result<bool> {
        self.culled_polygons(segments, polygons, |this, work, bounds, contact, _| {
            this.culled_hits(work, segments, bounds, |_, _| None, contact, each)
        })
    }

    /// Checks `segments` against `polygons`, then hands `run` the polygons' boxes and each
    /// (segment, polygon) pair's contact and hit, for the culled paths
    /// ([`Engine::culled_hits`]).
    fn culled_polygons<R>(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        run: impl FnOnce(&mut Self, Work, &[Rect], &PolygonContactOf, &PolygonHitOf) -> Result<R>,
    ) -> Result<R> {
        validate::check_inputs(segments, &[])?;
        check_indices(segments.len(), polygons.edge_count(), InputArray::Polygons)?;
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let bounds: Vec<Rect> = (0..polygons.len()).map(|i| polygons.bounds(i)).collect();
        let contact = |q: &Segment, k: usize| {
            let edges = &edges[offsets[k] as usize..offsets[k + 1] as usize];
            polygon_filtered(q, edges, &mut Vec::with_capacity(edges.len()))
        };
        let hit = |q: &Segment, k: usize| {
            polygon_hit(q, &edges[offsets[k] as usize..offsets[k + 1] as usize])
        };
        let work = Work::dense(Family::Polygons, segments.len(), polygons.edge_count());
        run(self, work, &bounds, &contact, &hit)
    }

    /// On a GPU engine, the polygons' queries through the grid where the broad-phase setting
    /// picks it ([`Engine::with_gpu_grid`]): `each(segment, polygon, contact)` for every
    /// hitting pair, in no set order. The GPU tests each segment's candidates' edges; here
    /// each candidate's edges are gathered into its answer ([`polygon_contact`]), the pairs
    /// the kernel left to the host decided ([`edge_ends::HOST`]), as for the dense pairs.
    /// Segments checked.
    fn polygons_through_grid(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        mut each: impl FnMut(usize, usize, PolygonContact),
    ) -> Result<Through> {
        if !matches!(self.inner, Inner::Gpu(_)) || polygons.is_empty() || segments.is_empty() {
            return Ok(Through::Dense);
        }
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let bounds: Vec<Rect> = (0..polygons.len()).map(|i| polygons.bounds(i)).collect();
        let work = Work::dense(Family::Polygons, segments.len(), edges.len());
        // The dense pairs' contacts go to the host, which gathers each polygon's.
        self.with_gpu_grid((segments, &bounds), DensePairs::Gathered, |this, grid| {
            let Some(grid) = grid else {
                return Ok((Through::Dense, false));
            };
            let through = this.run(work, |on| match on {
                On::Gpu(gpu) => {
                    let mut on_host = 0;
                    let mut decided = Vec::new();
                    let ran = gpu.on_shapes::<PolygonEdge, _>(|host| {
                        host.polygons_through(segments, &edges, offsets, grid, |s, p, contacts| {
                            let query = &segments[s];
                            let range = offsets[p] as usize..offsets[p + 1] as usize;
                            let mut contacts = contacts;
                            if contacts.iter().any(|c| c.ends & edge_ends::HOST != 0) {
                                // The pairs the kernel's narrow integers do not reach.
                                decided.clear();
                                decided.extend_from_slice(contacts);
                                for (c, edge) in decided.iter_mut().zip(&edges[range.clone()]) {
                                    if c.ends & edge_ends::HOST != 0 {
                                        on_host += 1;
                                        *c = polygon_edge(query, edge);
                                    }
                                }
                                contacts = &decided;
                            }
                            let contact = polygon_contact(query, &edges[range], contacts);
                            if contact.hit() {
                                each(s, p, contact);
                            }
                        })
                    })?;
                    gpu.edges_on_host += on_host;
                    Ok(if ran { Through::Grid } else { Through::Dense })
                }
                On::Cpu(_) => Ok(Through::Host),
            })?;
            Ok((through, through == Through::Grid))
        })
    }

    /// Polygon × polygon: whether each polygon of `a` and each of `b` share a point, closed
    /// (touching and containment overlap; docs/semantics.md): `result[i * b.len() + j]`.
    /// Exact, on either backend: built on segment × polygon (an edge of `a` that hits a polygon
    /// of `b`, or the first vertex of one of the rings of `b`'s polygon inside `a`'s:
    /// [`crate::polygons_overlap_rings`]).
    ///
    /// # Errors
    /// [`Error::TooManyPairs`] when the result does not fit; GPU errors.
    pub fn polygon_overlaps(&mut self, a: &Polygons, b: &Polygons) -> Result<Vec<bool>> {
        let (n, m) = (a.len(), b.len());
        let too_many = || Error::TooManyPairs {
            queries: n,
            query_array: InputArray::Polygons,
            targets: m,
            target_array: InputArray::Polygons,
        };
        let cells = n.checked_mul(m).ok_or_else(too_many)?;
        let mut overlap = Vec::new();
        overlap.try_reserve_exact(cells).map_err(|_| too_many())?;
        overlap.resize(cells, false);
        // Each edge of `a` against every polygon of `b`.
        let mut owner = Vec::with_capacity(a.edge_count());
        let mut edges = Vec::with_capacity(a.edge_count());
        for i in 0..n {
            for ring in a.rings_of(i) {
                for k in 0..ring.len() {
                    let ([x0, y0], [x1, y1]) = (ring[k], ring[(k + 1) % ring.len()]);
                    edges.push(Segment::new(x0, y0, x1, y1));
                    owner.push(i);
                }
            }
        }
        self.polygon_hit_pairs(&edges, b, |s, j| overlap[owner[s] * m + j] = true)?;
        // The first vertex of each ring of `b`, a point, against every polygon of `a`.
        let mut points = Vec::new();
        let mut point_owner = Vec::new();
        for j in 0..m {
            for ring in b.rings_of(j) {
                points.push(Segment::new(ring[0][0], ring[0][1], ring[0][0], ring[0][1]));
                point_owner.push(j);
            }
        }
        self.polygon_hit_pairs(&points, a, |s, i| overlap[i * m + point_owner[s]] = true)?;
        Ok(overlap)
    }

    /// Every hitting pair of `segments` against `polygons`, as `hit(segment, polygon)`, in no
    /// set order: through the GPU's grid where the setting picks it, else from the dense
    /// chunks. A pair may come twice (the dense chunks after a fallback from the grid).
    fn polygon_hit_pairs(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        mut hit: impl FnMut(usize, usize),
    ) -> Result<()> {
        validate::check_inputs(segments, &[])?;
        check_indices(segments.len(), polygons.edge_count(), InputArray::Polygons)?;
        let through = self.polygons_through_grid(segments, polygons, |s, p, _| hit(s, p))?;
        if through == Through::Grid {
            return Ok(());
        }
        let m = polygons.len();
        self.polygon_chunks(segments, polygons, |first, rows| {
            for (r, row) in rows.chunks_exact(m.max(1)).enumerate() {
                for (p, contact) in row.iter().enumerate() {
                    if contact.hit() {
                        hit(first + r, p);
                    }
                }
            }
        })
    }

    /// Segments × polygons, a chunk of segments at a time (memory bounded by
    /// [`SHAPE_PAIRS_PER_CHUNK`] per-edge results): `each(first segment, the chunk's results,
    /// query-major)`. Segments checked; indices fit in u32.
    fn polygon_chunks(
        &mut self,
        segments: &[Segment],
        polygons: &Polygons,
        mut each: impl FnMut(usize, &[PolygonContact]),
    ) -> Result<()> {
        validate::check_inputs(segments, &[])?;
        if segments.len() > u32::MAX as usize || polygons.edge_count() > u32::MAX as usize {
            return Err(super::shapes::too_many(
                segments.len(),
                polygons.len(),
                InputArray::Polygons,
            ));
        }
        if polygons.is_empty() {
            return Ok(());
        }
        let edges = polygon_edges(polygons);
        let offsets = polygons.offsets();
        let rows = (SHAPE_PAIRS_PER_CHUNK / edges.len()).max(1);
        let mut out = Vec::new();
        let mut edge_contacts = Vec::new();
        for (c, chunk) in segments.chunks(rows).enumerate() {
            out.clear();
            out.resize(chunk.len() * polygons.len(), PolygonContact::MISS);
            let work = Work::dense(Family::Polygons, chunk.len(), edges.len());
            self.run(work, |on| match on {
                On::Gpu(gpu) => {
                    edge_contacts.clear();
                    edge_contacts.resize(chunk.len() * edges.len(), EdgeContact::MISS);
                    gpu.on_shapes::<PolygonEdge, _>(|host| {
                        host.pairs_dense(chunk, &edges, &mut edge_contacts)
                    })?;
                    // The pairs the kernel's narrow integers do not reach, decided here.
                    for (i, contact) in edge_contacts.iter_mut().enumerate() {
                        if contact.ends & edge_ends::HOST != 0 {
                            gpu.edges_on_host += 1;
                            *contact =
                                polygon_edge(&chunk[i / edges.len()], &edges[i % edges.len()]);
                        }
                    }
                    for (q, (query, row)) in chunk
                        .iter()
                        .zip(out.chunks_exact_mut(polygons.len()))
                        .enumerate()
                    {
                        let contacts = &edge_contacts[q * edges.len()..(q + 1) * edges.len()];
                        for (p, result) in row.iter_mut().enumerate() {
                            let range = offsets[p] as usize..offsets[p + 1] as usize;
                            *result =
                                polygon_contact(query, &edges[range.clone()], &contacts[range]);
                        }
                    }
                    Ok(())
                }
                On::Cpu(kernel) => {
                    kernel.polygon_pairs_dense(chunk, &edges, offsets, &mut out);
                    Ok(())
                }
            })?;
            each(c * rows, &out);
        }
        Ok(())
    }
}
