//! Each kind's first hits of one call over a scene, kept between frames: what the engine's
//! scene queries merge ([`crate::Engine::target_first_hits_into`]).

use super::{TargetContact, TargetHit};
use crate::cpu::batched::Earlier;
use crate::cpu::segment_circle::CircleContact;
use crate::cpu::segment_polygon::PolygonContact;
use crate::cpu::segment_segment::SegmentContact;
use crate::shape::{ShapeContact, ShapeHit};
use crate::types::{FirstHit, PairResult};

/// Segment `segment`'s hit of rect `rect`, as a target.
pub(crate) fn rect_hit(segment: u32, rect: u32, result: PairResult) -> TargetHit {
    TargetHit {
        segment,
        target: rect,
        contact: TargetContact::Rect(result),
    }
}

/// Whether a shape's hit starts inside it: it meets no boundary on the way in (never a wall).
pub(crate) fn shape_starts_in(c: &impl ShapeContact) -> bool {
    c.hit() && !c.boundary().0
}

/// Each kind's first hit per segment, in the scene's order (empty for a shape kind with no
/// targets), kept between frames.
///
/// A shape kind's query answers only the segments no kind before it settles (an exact start
/// inside: nothing can come before it), and leaves the other slots as they were, from any
/// earlier frame. So every reader reads the kinds in kind order and stops at the first hit
/// that settles ([`KindsBefore::earlier`], [`KindFirst::of`], [`KindFirst::settled`]): the
/// slots after it are stale. Nothing then fills 50,000 slots per kind with `None` each frame,
/// nor keeps a vector of the kinds' first hits so far in step with them.
#[derive(Default)]
pub(crate) struct KindFirst {
    pub(crate) rects: Vec<FirstHit>,
    pub(crate) circles: Vec<Option<ShapeHit<CircleContact>>>,
    pub(crate) walls: Vec<Option<ShapeHit<SegmentContact>>>,
    pub(crate) polygons: Vec<Option<ShapeHit<PolygonContact>>>,
}

/// Segment `i`'s hit in `first` (a shape kind's slots), folded into the first hit so far.
#[inline(always)]
fn fold<C: ShapeContact>(earlier: &mut Earlier, first: &[Option<ShapeHit<C>>], i: usize) {
    if let Some(Some(hit)) = first.get(i) {
        earlier.t_enter = earlier.t_enter.min(hit.contact.t_enter());
        earlier.settles |= shape_starts_in(&hit.contact);
    }
}

/// The kinds queried before a shape kind, for its query: each segment's first hit among them
/// ([`KindsBefore::earlier`]). A kind not before the one queried, or without targets, is empty.
#[derive(Clone, Copy)]
pub(crate) struct KindsBefore<'k> {
    pub(crate) rects: &'k [FirstHit],
    pub(crate) circles: &'k [Option<ShapeHit<CircleContact>>],
    pub(crate) walls: &'k [Option<ShapeHit<SegmentContact>>],
}

impl KindsBefore<'_> {
    /// Segment `i`'s first hit among these kinds: read in kind order, up to one that settles.
    #[inline(always)]
    pub(crate) fn earlier(&self, i: usize) -> Earlier {
        let mut earlier = Earlier::NONE;
        if let Some(first) = self.rects.get(i)
            && first.rect().is_some()
        {
            earlier.t_enter = first.result.t_enter;
            earlier.settles = first.result.start_inside();
        }
        if !earlier.settles {
            fold(&mut earlier, self.circles, i);
        }
        if !earlier.settles {
            fold(&mut earlier, self.walls, i);
        }
        earlier
    }
}

impl KindFirst {
    /// Segment `i`'s first hit of each kind, as targets, in kind order, up to the first that
    /// settles (the later kinds' slots are stale), into `into` (cleared first). Pushed kind by
    /// kind: a chain of the kinds' iterators cost the merge of a frame of 50k bullets twice
    /// its time.
    pub(crate) fn of(&self, i: usize, into: &mut Vec<TargetHit>) {
        into.clear();
        if let Some(first) = self.rects.get(i)
            && let Some(rect) = first.rect()
        {
            into.push(rect_hit(i as u32, rect, first.result));
            if first.result.start_inside() {
                return;
            }
        }
        /// Pushes the kind's hit; whether it settles.
        #[inline(always)]
        fn push<C: ShapeContact>(
            first: &[Option<ShapeHit<C>>],
            i: usize,
            contact: fn(C) -> TargetContact,
            into: &mut Vec<TargetHit>,
        ) -> bool {
            let Some(Some(hit)) = first.get(i) else {
                return false;
            };
            into.push(TargetHit {
                segment: hit.segment,
                target: hit.shape,
                contact: contact(hit.contact),
            });
            shape_starts_in(&hit.contact)
        }
        let _ = push(&self.circles, i, TargetContact::Circle, into)
            || push(&self.walls, i, TargetContact::Wall, into)
            || push(&self.polygons, i, TargetContact::Polygon, into);
    }

    /// Segment `i`'s rect hit, if the segment starts inside that rect: then it is the
    /// segment's first hit of every kind (nothing precedes t = 0, and an exact tie goes to the
    /// lowest kind, rects), and the shapes' queries left the segment out.
    #[inline(always)]
    pub(crate) fn settled(&self, i: usize) -> Option<TargetHit> {
        let first = self.rects.get(i)?;
        let rect = first.rect()?;
        first
            .result
            .start_inside()
            .then(|| rect_hit(i as u32, rect, first.result))
    }

    /// `first` sized for `n` segments where `used`, else emptied (its memory kept). Slots
    /// kept from the frame before keep their values: the kind's query writes every slot that
    /// is read (see [`KindFirst`]).
    pub(crate) fn sized<T: Clone>(first: &mut Vec<T>, used: bool, n: usize, none: T) -> &mut [T] {
        if used {
            first.resize(n, none);
        } else {
            first.clear();
        }
        first
    }
}
