//! Whether a ring is simple, in O(n log n): no two of its edges meet, but consecutive ones at
//! their shared vertex alone. A sweep of the plane from left to right (Shamos and Hoey), exact:
//! every decision is the sign of an orientation of f32 points (as f64, by `robust`) or a plain
//! comparison of coordinates.
//!
//! - Points are ordered by x, then y; an edge runs from its lesser end (left) to its greater
//!   (right), so a vertical edge starts at its lower end.
//! - At each vertex, in that order, the edges ending there leave the sweep and those starting
//!   there enter it. The edges crossing the sweep line are kept in their order along it, and
//!   two edges are tested when they become neighbours there. While no two edges meet, that order
//!   never changes, so it is a fixed order ([`Edge`]'s `Ord`): two edges crossing one vertical
//!   line compare at the later of their left ends.
//! - Before the sweep: a point that is two vertices of the ring, and an edge that turns straight
//!   back along the one before it (a spike), are found by sorting and by each vertex's two
//!   edges. After them, the two edges of each vertex share that vertex alone, and the only
//!   pairs the sweep skips are consecutive ones.
//!
//! If two edges meet, some two that meet are neighbours along the sweep line at or before the
//! leftmost point where any two meet (the classical argument), or an edge starts on another
//! (found as the edges are ordered): the sweep finds a meeting pair of every ring that is not
//! simple, and none of one that is.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;

use robust::{Coord, orient2d};

/// A pair of edges that meet, lower index first; `None` when the ring is simple. The ring has
/// three vertices or more, no two consecutive ones equal (its closing repeat dropped).
pub fn meeting_edges(ring: &[[f32; 2]]) -> Option<(usize, usize)> {
    let n = ring.len();
    // -0 as +0: one point, whose two spellings the sweep's order would tell apart.
    let at = |v: usize| {
        let [x, y] = ring[v % n];
        Coord {
            x: x as f64 + 0.0,
            y: y as f64 + 0.0,
        }
    };
    // A spike: edge v - 1 and edge v, on one line, overlap beyond vertex v.
    for v in 0..n {
        let (before, after) = ((v + n - 1) % n, v);
        if spike(at(before), at(v), at(v + 1)) {
            return Some((before.min(after), before.max(after)));
        }
    }
    // Vertices in sweep order; two at one point make the ring touch itself there.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| lexicographic(at(a), at(b)).then(a.cmp(&b)));
    for pair in order.windows(2) {
        if lexicographic(at(pair[0]), at(pair[1])) == Ordering::Equal {
            // Edges pair[0] and pair[1] both start at the point.
            return Some((pair[0].min(pair[1]), pair[0].max(pair[1])));
        }
    }
    let found = Cell::new(None);
    let edge = |k: usize| {
        let (p, q) = (at(k), at(k + 1));
        let (left, right) = match lexicographic(p, q) {
            Ordering::Greater => (q, p),
            _ => (p, q),
        };
        Edge {
            left,
            right,
            index: k,
            found: &found,
        }
    };
    let consecutive = |a: usize, b: usize| a.abs_diff(b) == 1 || a.abs_diff(b) == n - 1;
    let meet = |a: &Edge, b: &Edge| {
        !consecutive(a.index, b.index) && closed_segments_meet(a.left, a.right, b.left, b.right)
    };
    let pair = |a: usize, b: usize| Some((a.min(b), a.max(b)));
    #[allow(
        clippy::mutable_key_type,
        reason = "an edge's Cell records a meeting found; its order never reads it"
    )]
    let mut sweep: BTreeSet<Edge> = BTreeSet::new();
    for &v in &order {
        // The two edges of vertex v: v - 1 (ending or starting here) and v.
        let edges = [edge((v + n - 1) % n), edge(v)];
        let here = at(v);
        for e in edges.iter().filter(|e| same(e.right, here)) {
            let below = sweep.range(..e).next_back().copied();
            let above = sweep
                .range((Bound::Excluded(e), Bound::Unbounded))
                .next()
                .copied();
            sweep.remove(e);
            if let Some(met) = found.get() {
                return Some(met);
            }
            if let (Some(b), Some(a)) = (below, above)
                && meet(&b, &a)
            {
                return pair(b.index, a.index);
            }
        }
        for e in edges.into_iter().filter(|e| same(e.left, here)) {
            sweep.insert(e);
            if let Some(met) = found.get() {
                return Some(met);
            }
            let below = sweep.range(..&e).next_back().copied();
            let above = sweep
                .range((Bound::Excluded(&e), Bound::Unbounded))
                .next()
                .copied();
            for other in [below, above].into_iter().flatten() {
                if meet(&e, &other) {
                    return pair(e.index, other.index);
                }
            }
        }
    }
    None
}

/// Whether the edges a → v and v → d overlap beyond v: d lies back along the first edge.
/// Collinear, a ≠ v and d ≠ v: they are on one side of v exactly when their x (or, on a
/// vertical line, their y) are on one side of v's, plain comparisons.
fn spike(a: Coord<f64>, v: Coord<f64>, d: Coord<f64>) -> bool {
    let same_side = if a.x != v.x {
        (a.x > v.x) == (d.x > v.x)
    } else {
        (a.y > v.y) == (d.y > v.y)
    };
    orient2d(a, v, d) == 0.0 && same_side
}

fn lexicographic(p: Coord<f64>, q: Coord<f64>) -> Ordering {
    p.x.total_cmp(&q.x).then(p.y.total_cmp(&q.y))
}

fn same(p: Coord<f64>, q: Coord<f64>) -> bool {
    lexicographic(p, q) == Ordering::Equal
}

/// The sign of the orientation of (a, b, c): which side of the line a → b c is on.
fn side(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>) -> Ordering {
    orient2d(a, b, c)
        .partial_cmp(&0.0)
        .unwrap_or(Ordering::Equal)
}

/// An edge on the sweep line, left end to right end. Its order is its place along a vertical
/// line it crosses; where that place is not decided (an edge starting on another), the pair
/// is recorded in `found`, the sweep stops there, and the index breaks the tie.
#[derive(Clone, Copy)]
struct Edge<'a> {
    left: Coord<f64>,
    right: Coord<f64>,
    index: usize,
    found: &'a Cell<Option<(usize, usize)>>,
}

impl Edge<'_> {
    /// `self`, starting at or after `other` starts, against `other` at `self`'s left end.
    fn ordered_after_its_start(&self, other: &Self) -> Ordering {
        let at_start = side(other.left, other.right, self.left);
        if at_start != Ordering::Equal {
            return at_start;
        }
        // Its left end is on `other` (which crosses this vertical line): they meet, unless
        // both start there (the two edges of that vertex), when their right ends decide.
        if same(self.left, other.left) {
            let toward = side(other.left, other.right, self.right);
            if toward != Ordering::Equal {
                return toward;
            }
        }
        let (a, b) = (self.index.min(other.index), self.index.max(other.index));
        if self.found.get().is_none() {
            self.found.set(Some((a, b)));
        }
        self.index.cmp(&other.index)
    }
}

impl PartialEq for Edge<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl Eq for Edge<'_> {}

impl PartialOrd for Edge<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Edge<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        if self.index == other.index {
            return Ordering::Equal;
        }
        match lexicographic(self.left, other.left) {
            Ordering::Less => other.ordered_after_its_start(self).reverse(),
            _ => self.ordered_after_its_start(other),
        }
    }
}

/// Whether the closed segments a–b and c–d share a point, exactly (f32 points as f64, whose
/// orientation signs `robust` evaluates exactly; the rest are plain comparisons).
fn closed_segments_meet(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>, d: Coord<f64>) -> bool {
    let sign = |v: f64| (v > 0.0) as i32 - (v < 0.0) as i32;
    let (o1, o2) = (sign(orient2d(a, b, c)), sign(orient2d(a, b, d)));
    let (o3, o4) = (sign(orient2d(c, d, a)), sign(orient2d(c, d, b)));
    let within = |p: Coord<f64>, q: Coord<f64>, r: Coord<f64>| {
        p.x.min(q.x) <= r.x && r.x <= p.x.max(q.x) && p.y.min(q.y) <= r.y && r.y <= p.y.max(q.y)
    };
    (o1 * o2 < 0 && o3 * o4 < 0)
        || (o1 == 0 && within(a, b, c))
        || (o2 == 0 && within(a, b, d))
        || (o3 == 0 && within(c, d, a))
        || (o4 == 0 && within(c, d, b))
}
