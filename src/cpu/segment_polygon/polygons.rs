//! The polygons a query runs against, checked whole when built.

use crate::error::{InputArray, InputError, Problem};
use crate::types::{Rect, Segment};
use crate::validate;

/// Polygons, each the closed region its rings bound: a simple polygon's one ring, or outer
/// rings and holes (a polygon with holes, a multipolygon's parts), docs/semantics.md "Segment ×
/// polygon". Stored flat: polygon `i`'s vertices are `vertices[offsets[i]..offsets[i + 1]]`,
/// ring after ring, and its edge `k` runs from its vertex `k` to the next vertex of the same
/// ring (a ring's last back to its first). Convex or not, either orientation.
///
/// Built only through [`Polygons::new`], [`Polygons::from_rings`] (one ring each),
/// [`Polygons::from_polygons`] or [`Polygons::with_rings`] (rings each), which check every
/// ring: at least three vertices, every value finite and within ±2^62, no zero-length edge,
/// and simple (no two edges meet but consecutive ones at their shared vertex). A ring that
/// repeats its first vertex at the end (as WKT and GeoJSON do) loses that repeat.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygons {
    vertices: Vec<[f32; 2]>,
    offsets: Vec<u32>,
    /// Each ring's first vertex, and the end: ring r is `vertices[rings[r]..rings[r + 1]]`.
    rings: Vec<u32>,
    /// Each polygon's first ring, and the end.
    polygon_rings: Vec<u32>,
}

impl Default for Polygons {
    /// No polygons: every query over them answers nothing.
    fn default() -> Self {
        Self::empty()
    }
}

impl Polygons {
    /// Polygons from the flat form: `offsets` holds one more entry than there are polygons,
    /// from 0 to `vertices.len()`, in order.
    ///
    /// # Errors
    /// The first bad polygon, named by its index ([`InputArray::Polygons`]).
    pub fn new(vertices: Vec<[f32; 2]>, offsets: Vec<u32>) -> Result<Self, InputError> {
        let (first, last) = (
            offsets.first().copied().unwrap_or(0),
            offsets.last().copied().unwrap_or(0),
        );
        if first != 0 || last as usize != vertices.len() {
            return Err(InputError {
                array: InputArray::Polygons,
                index: 0,
                field: "offsets",
                problem: Problem::BadOffsets {
                    start: first,
                    end: last,
                    vertices: vertices.len(),
                },
            });
        }
        let count = offsets.len().saturating_sub(1);
        let ranges = (0..count).map(|i| (offsets[i], offsets[i + 1]));
        let mut checked = Polygons::empty();
        for (i, (start, end)) in ranges.enumerate() {
            let ring = slice_of(&vertices, i, "offsets", start, end)?;
            checked.push(i, [ring])?;
        }
        Ok(checked)
    }

    /// Polygons of rings each, in the flat form GeoArrow and shapely's `to_ragged_array` use:
    /// polygon `i` is rings `polygon_offsets[i]..polygon_offsets[i + 1]`, ring `r` is
    /// `vertices[ring_offsets[r]..ring_offsets[r + 1]]`; each offsets array runs from 0 to the
    /// end of the next, in order.
    ///
    /// # Errors
    /// As [`Polygons::new`]; bad `polygon_offsets` name the field "polygon_offsets".
    pub fn with_rings(
        vertices: &[[f32; 2]],
        ring_offsets: &[u32],
        polygon_offsets: &[u32],
    ) -> Result<Self, InputError> {
        let rings = ring_offsets.len().saturating_sub(1);
        let (first, last) = (
            polygon_offsets.first().copied().unwrap_or(0),
            polygon_offsets.last().copied().unwrap_or(0),
        );
        let (ring_first, ring_last) = (
            ring_offsets.first().copied().unwrap_or(0),
            ring_offsets.last().copied().unwrap_or(0),
        );
        let bad = |field, start, end, vertices| InputError {
            array: InputArray::Polygons,
            index: 0,
            field,
            problem: Problem::BadOffsets {
                start,
                end,
                vertices,
            },
        };
        if first != 0 || last as usize != rings {
            return Err(bad("polygon_offsets", first, last, rings));
        }
        if ring_first != 0 || ring_last as usize != vertices.len() {
            return Err(bad("ring_offsets", ring_first, ring_last, vertices.len()));
        }
        let mut checked = Polygons::empty();
        for i in 0..polygon_offsets.len().saturating_sub(1) {
            let (start, end) = (polygon_offsets[i], polygon_offsets[i + 1]);
            let ring_range = slice_of(ring_offsets, i, "polygon_offsets", start, end)?;
            let mut its = Vec::with_capacity(ring_range.len());
            for r in start as usize..end as usize {
                let (a, b) = (ring_offsets[r], ring_offsets[r + 1]);
                its.push(slice_of(vertices, i, "ring_offsets", a, b)?);
            }
            checked.push(i, its)?;
        }
        Ok(checked)
    }

    /// Polygons from one ring each.
    ///
    /// # Errors
    /// As [`Polygons::new`].
    pub fn from_rings<R: AsRef<[[f32; 2]]>>(
        rings: impl IntoIterator<Item = R>,
    ) -> Result<Self, InputError> {
        let mut checked = Polygons::empty();
        for (i, ring) in rings.into_iter().enumerate() {
            checked.push(i, [ring.as_ref()])?;
        }
        Ok(checked)
    }

    /// Polygons of rings each: a polygon's outer ring and its holes, or every ring of a
    /// multipolygon's parts, in any order (the region is the same: docs/semantics.md).
    ///
    /// # Errors
    /// As [`Polygons::new`]; a polygon of no ring has 0 vertices.
    pub fn from_polygons<P, R>(polygons: impl IntoIterator<Item = P>) -> Result<Self, InputError>
    where
        P: IntoIterator<Item = R>,
        R: AsRef<[[f32; 2]]>,
    {
        let mut checked = Polygons::empty();
        for (i, rings) in polygons.into_iter().enumerate() {
            let rings: Vec<R> = rings.into_iter().collect();
            checked.push(i, rings.iter().map(AsRef::as_ref))?;
        }
        Ok(checked)
    }

    /// No polygons, ready to push.
    fn empty() -> Self {
        Self {
            vertices: Vec::new(),
            offsets: vec![0],
            rings: vec![0],
            polygon_rings: vec![0],
        }
    }

    /// Checks polygon `index`'s rings and appends them; on an error nothing is appended.
    fn push<'r>(
        &mut self,
        index: usize,
        rings: impl IntoIterator<Item = &'r [[f32; 2]]>,
    ) -> Result<(), InputError> {
        let too_many = InputError {
            array: InputArray::Polygons,
            index,
            field: "ring",
            problem: Problem::TooFewVertices(u32::MAX),
        };
        let (vertices, ring_count) = (self.vertices.len(), self.rings.len());
        let mut numbered = 0u32;
        let mut checked = Ok(());
        for ring in rings {
            let ring = match ring {
                [first, .., last] if first == last => &ring[..ring.len() - 1],
                _ => ring,
            };
            // A later ring's vertices and edges are numbered as the polygon's.
            checked = check_ring(index, ring).map_err(|e| renumbered(e, numbered));
            if checked.is_err() {
                break;
            }
            self.vertices.extend_from_slice(ring);
            numbered += ring.len() as u32;
            let end = u32::try_from(self.vertices.len()).map_err(|_| too_many);
            match end {
                Ok(end) => self.rings.push(end),
                Err(e) => {
                    checked = Err(e);
                    break;
                }
            }
        }
        if checked.is_ok() && self.rings.len() == ring_count {
            checked = Err(InputError {
                problem: Problem::TooFewVertices(0),
                ..too_many
            });
        }
        if let Err(e) = checked {
            self.vertices.truncate(vertices);
            self.rings.truncate(ring_count);
            return Err(e);
        }
        self.offsets.push(self.vertices.len() as u32);
        self.polygon_rings.push(self.rings.len() as u32 - 1);
        Ok(())
    }

    /// How many polygons.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Polygon `i`'s vertices, ring after ring (no repeated closing vertex): its edge k starts
    /// at vertex k.
    pub fn polygon_vertices(&self, i: usize) -> &[[f32; 2]] {
        &self.vertices[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Polygon `i`'s rings, in order (no repeated closing vertex).
    pub fn rings_of(&self, i: usize) -> impl ExactSizeIterator<Item = &[[f32; 2]]> + '_ {
        let (first, end) = (self.polygon_rings[i], self.polygon_rings[i + 1]);
        (first as usize..end as usize).map(|r| self.ring_at(r))
    }

    /// Every ring of every polygon, in order.
    pub fn rings(&self) -> impl ExactSizeIterator<Item = &[[f32; 2]]> + '_ {
        (0..self.rings.len().saturating_sub(1)).map(|r| self.ring_at(r))
    }

    fn ring_at(&self, r: usize) -> &[[f32; 2]] {
        &self.vertices[self.rings[r] as usize..self.rings[r + 1] as usize]
    }

    /// Which of polygon `i`'s rings its edge `k` is on, and the edge's index within that ring.
    pub fn edge_ring(&self, i: usize, k: usize) -> (usize, usize) {
        let (first, end) = (
            self.polygon_rings[i] as usize,
            self.polygon_rings[i + 1] as usize,
        );
        let at = self.offsets[i] as usize + k;
        // The last ring of the polygon that starts at or before the edge's vertex.
        let r = first + self.rings[first..end].partition_point(|&start| start as usize <= at) - 1;
        (r - first, at - self.rings[r] as usize)
    }

    /// Polygon `i`'s edge `k`: from its vertex k to the next vertex of the same ring.
    pub fn edge(&self, i: usize, k: usize) -> Segment {
        let (r, within) = self.edge_ring(i, k);
        let ring = self.rings_of(i).nth(r).unwrap_or_default();
        let ([x0, y0], [x1, y1]) = (ring[within], ring[(within + 1) % ring.len()]);
        Segment::new(x0, y0, x1, y1)
    }

    /// How many rings polygon `i` has.
    pub fn ring_count(&self, i: usize) -> usize {
        (self.polygon_rings[i + 1] - self.polygon_rings[i]) as usize
    }

    /// The rings' flat form ([`Polygons::with_rings`]): each ring's first vertex and the end,
    /// and each polygon's first ring and the end.
    pub fn ring_offsets(&self) -> (&[u32], &[u32]) {
        (&self.rings, &self.polygon_rings)
    }

    /// The flat vertex array.
    pub fn vertices(&self) -> &[[f32; 2]] {
        &self.vertices
    }

    /// The flat form's offsets: `len() + 1` of them, from 0 to `vertices().len()`.
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// How many edges in all (one per vertex).
    pub fn edge_count(&self) -> usize {
        self.vertices.len()
    }

    /// The smallest box that holds polygon `i` (its vertices' extremes: exact).
    pub fn bounds(&self, i: usize) -> Rect {
        let ring = self.polygon_vertices(i);
        let mut b = Rect::new(ring[0][0], ring[0][1], ring[0][0], ring[0][1]);
        for &[x, y] in ring {
            b.min_x = b.min_x.min(x);
            b.min_y = b.min_y.min(y);
            b.max_x = b.max_x.max(x);
            b.max_y = b.max_y.max(y);
        }
        b
    }
}

/// `vertices[start..end]`, or an error naming polygon `index` and `field` where that is not a
/// range of them.
fn slice_of<'v, T>(
    vertices: &'v [T],
    index: usize,
    field: &'static str,
    start: u32,
    end: u32,
) -> Result<&'v [T], InputError> {
    (start <= end && end as usize <= vertices.len())
        .then(|| &vertices[start as usize..end as usize])
        .ok_or(InputError {
            array: InputArray::Polygons,
            index,
            field,
            problem: Problem::BadOffsets {
                start,
                end,
                vertices: vertices.len(),
            },
        })
}

/// A ring's error with its vertices and edges numbered from `first`, as its polygon's are.
fn renumbered(mut e: InputError, first: u32) -> InputError {
    e.problem = match e.problem {
        Problem::BadVertex { vertex, value } => Problem::BadVertex {
            vertex: vertex + first,
            value,
        },
        Problem::RepeatedVertex(v) => Problem::RepeatedVertex(v + first),
        Problem::NotSimple { edge, other } => Problem::NotSimple {
            edge: edge + first,
            other: other + first,
        },
        other => other,
    };
    e
}

/// Checks one polygon's ring (its closing repeat, if any, already dropped): at least three
/// vertices, each value finite and within ±2^62, no zero-length edge, and simple: no two
/// edges meet, but consecutive ones at their shared vertex alone. Exact (orientation signs of
/// f32 points, evaluated by `robust`), in O(n log n) (`simple_ring.rs`).
pub fn check_ring(index: usize, ring: &[[f32; 2]]) -> Result<(), InputError> {
    let error = |field: &'static str, problem| InputError {
        array: InputArray::Polygons,
        index,
        field,
        problem,
    };
    let n = ring.len();
    if n < 3 {
        return Err(error("ring", Problem::TooFewVertices(n as u32)));
    }
    for (v, &[x, y]) in ring.iter().enumerate() {
        for (field, value) in [("x", x), ("y", y)] {
            if validate::check_value(InputArray::Polygons, index, field, value).is_err() {
                let vertex = v as u32;
                return Err(error(field, Problem::BadVertex { vertex, value }));
            }
        }
    }
    for v in 1..=n {
        if ring[v % n] == ring[v - 1] {
            return Err(error("ring", Problem::RepeatedVertex(v as u32)));
        }
    }
    if let Some((edge, other)) = super::simple_ring::meeting_edges(ring) {
        let (edge, other) = (edge as u32, other as u32);
        return Err(error("ring", Problem::NotSimple { edge, other }));
    }
    Ok(())
}
