//! The polygons a query runs against, checked whole when built.

use crate::error::{InputArray, InputError, Problem};
use crate::types::Rect;
use crate::validate;

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

/// Checks one polygon's ring (its closing repeat, if any, already dropped): at least three
/// vertices, each value finite and within ±2^62, no zero-length edge, and simple: no two
/// edges meet, but consecutive ones at their shared vertex alone. Exact (orientation signs of
/// f32 points, evaluated by `robust`), in O(n log n + pairs of edges whose x-ranges overlap).
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
    let at = |v: usize| {
        let [x, y] = ring[v % n];
        robust::Coord {
            x: x as f64,
            y: y as f64,
        }
    };
    for v in 1..=n {
        if ring[v % n] == ring[v - 1] {
            return Err(error("ring", Problem::RepeatedVertex(v as u32)));
        }
    }
    // Sort and sweep: edges in order of their smallest x; each meets only the edges after it
    // that start (in x) before it ends.
    let lo = |k: usize| ring[k][0].min(ring[(k + 1) % n][0]);
    let hi = |k: usize| ring[k][0].max(ring[(k + 1) % n][0]);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| lo(a).total_cmp(&lo(b)));
    for (p, &i) in order.iter().enumerate() {
        for &j in order[p + 1..].iter().take_while(|&&j| lo(j) <= hi(i)) {
            let (i, j) = (i.min(j), i.max(j));
            let (a, b, c, d) = (at(i), at(i + 1), at(j), at(j + 1));
            let bad = if j == i + 1 {
                // Consecutive, sharing b = c: they overlap when d turns straight back along
                // the first edge.
                spike(a, b, d)
            } else if i == 0 && j == n - 1 {
                // The last edge ends where the first starts, d = a.
                spike(c, a, b)
            } else {
                closed_segments_meet(a, b, c, d)
            };
            if bad {
                let (edge, other) = (i as u32, j as u32);
                return Err(error("ring", Problem::NotSimple { edge, other }));
            }
        }
    }
    Ok(())
}

/// Whether the edges a → v and v → d overlap beyond v: d lies back along the first edge.
/// Collinear, a ≠ v and d ≠ v: they are on one side of v exactly when their x (or, on a
/// vertical line, their y) are on one side of v's, plain comparisons.
fn spike(a: robust::Coord<f64>, v: robust::Coord<f64>, d: robust::Coord<f64>) -> bool {
    let same_side = if a.x != v.x {
        (a.x > v.x) == (d.x > v.x)
    } else {
        (a.y > v.y) == (d.y > v.y)
    };
    robust::orient2d(a, v, d) == 0.0 && same_side
}

/// Whether the closed segments a–b and c–d share a point, exactly (f32 points as f64, whose
/// orientation signs `robust` evaluates exactly; the rest are plain comparisons).
pub(crate) fn closed_segments_meet(
    a: robust::Coord<f64>,
    b: robust::Coord<f64>,
    c: robust::Coord<f64>,
    d: robust::Coord<f64>,
) -> bool {
    let sign = |v: f64| (v > 0.0) as i32 - (v < 0.0) as i32;
    let (o1, o2) = (
        sign(robust::orient2d(a, b, c)),
        sign(robust::orient2d(a, b, d)),
    );
    let (o3, o4) = (
        sign(robust::orient2d(c, d, a)),
        sign(robust::orient2d(c, d, b)),
    );
    let within = |p: robust::Coord<f64>, q: robust::Coord<f64>, r: robust::Coord<f64>| {
        p.x.min(q.x) <= r.x && r.x <= p.x.max(q.x) && p.y.min(q.y) <= r.y && r.y <= p.y.max(q.y)
    };
    (o1 * o2 < 0 && o3 * o4 < 0)
        || (o1 == 0 && within(a, b, c))
        || (o2 == 0 && within(a, b, d))
        || (o3 == 0 && within(c, d, a))
        || (o4 == 0 && within(c, d, b))
}
