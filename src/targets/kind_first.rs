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
/// targets).
#[derive(Default)]
pub(crate) struct KindFirst {
    /// Each segment's first hit among the kinds queried so far.
    pub(crate) earlier: Vec<Earlier>,
    pub(crate) rects: Vec<FirstHit>,
    pub(crate) circles: Vec<Option<ShapeHit<CircleContact>>>,
    pub(crate) walls: Vec<Option<ShapeHit<SegmentContact>>>,
    pub(crate) polygons: Vec<Option<ShapeHit<PolygonContact>>>,
}

impl KindFirst {
    /// Segment `i`'s first hit of each kind, as targets, in kind order, into `into` (cleared
    /// first). Pushed kind by kind: a chain of the kinds' iterators cost the merge of a frame
    /// of 50k bullets twice its time.
    pub(crate) fn of(&self, i: usize, into: &mut Vec<TargetHit>) {
        into.clear();
        if let Some(first) = self.rects.get(i)
            && let Some(rect) = first.rect()
        {
            into.push(rect_hit(i as u32, rect, first.result));
        }
        #[inline(always)]
        fn push<C: Copy>(
            first: &[Option<ShapeHit<C>>],
            i: usize,
            contact: fn(C) -> TargetContact,
            into: &mut Vec<TargetHit>,
        ) {
            if let Some(Some(hit)) = first.get(i) {
                into.push(TargetHit {
                    segment: hit.segment,
                    target: hit.shape,
                    contact: contact(hit.contact),
                });
            }
        }
        push(&self.circles, i, TargetContact::Circle, into);
        push(&self.walls, i, TargetContact::Wall, into);
        push(&self.polygons, i, TargetContact::Polygon, into);
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

    /// Takes each segment's first hit of a kind just queried (`first`) into `earlier`.
    pub(crate) fn after<C: ShapeContact>(earlier: &mut [Earlier], first: &[Option<ShapeHit<C>>]) {
        for (earlier, hit) in earlier.iter_mut().zip(first) {
            if let Some(hit) = hit {
                earlier.t_enter = earlier.t_enter.min(hit.contact.t_enter());
                earlier.settles |= shape_starts_in(&hit.contact);
            }
        }
    }

    /// `first` sized for `n` segments where `used`, else emptied (its memory kept).
    pub(crate) fn sized<T: Clone>(first: &mut Vec<T>, used: bool, n: usize, none: T) -> &mut [T] {
        first.clear();
        if used {
            first.resize(n, none);
        }
        first
    }
}
