//! The polygons a query runs against, checked whole when built.

use crate::error::{InputArray, InputError, Problem};
use crate::types::Rect;
use crate::validate::check_ring;

/// Simple polygons, each the closed region of a ring of vertices (its boundary and interior),
/// stored flat: polygon `i` is `vertices[offsets[i]..offsets[i + 1]]`, and edge `k` runs from
/// its vertex `k` to vertex `k + 1` (the last back to the first). Convex or not, either
/// orientation.
///
/// Built only through [`Polygons::new`] or [`Polygons::from_rings`], which check every ring
/// (docs/semantics.md, "Segment × polygon"): at least three vertices, every value finite and
/// within ±2^62, no zero-length edge, and simple (no two edges meet but consecutive ones at
/// their shared vertex). A ring that repeats its first vertex at the end (as WKT and GeoJSON
/// do) loses that repeat.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Polygons {
    vertices: Vec<[f32; 2]>,
    offsets: Vec<u32>,
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
        let mut checked = Polygons::default();
        checked.offsets.push(0);
        for (i, (start, end)) in ranges.enumerate() {
            let ring = (start <= end && end as usize <= vertices.len())
                .then(|| &vertices[start as usize..end as usize])
                .ok_or(InputError {
                    array: InputArray::Polygons,
                    index: i,
                    field: "offsets",
                    problem: Problem::BadOffsets {
                        start,
                        end,
                        vertices: vertices.len(),
                    },
                })?;
            checked.push(i, ring)?;
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
        let mut checked = Polygons::default();
        checked.offsets.push(0);
        for (i, ring) in rings.into_iter().enumerate() {
            checked.push(i, ring.as_ref())?;
        }
        Ok(checked)
    }

    fn push(&mut self, index: usize, ring: &[[f32; 2]]) -> Result<(), InputError> {
        let ring = match ring {
            [first, .., last] if first == last => &ring[..ring.len() - 1],
            _ => ring,
        };
        check_ring(index, ring)?;
        let too_many = InputError {
            array: InputArray::Polygons,
            index,
            field: "ring",
            problem: Problem::TooFewVertices(u32::MAX),
        };
        self.vertices.extend_from_slice(ring);
        let end = u32::try_from(self.vertices.len()).map_err(|_| too_many)?;
        self.offsets.push(end);
        Ok(())
    }

    /// How many polygons.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Polygon `i`'s ring (no repeated closing vertex).
    pub fn ring(&self, i: usize) -> &[[f32; 2]] {
        &self.vertices[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Every ring in order.
    pub fn rings(&self) -> impl ExactSizeIterator<Item = &[[f32; 2]]> + '_ {
        (0..self.len()).map(|i| self.ring(i))
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
        let ring = self.ring(i);
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
