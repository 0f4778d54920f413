//! A scene of mixed targets for one call a frame: rects, circles, walls and polygons in one
//! [`Targets`], and one result type, [`TargetHit`], whatever the kind. The queries are
//! [`crate::Engine::target_first_hits_into`], [`crate::Engine::target_hits`] and
//! [`crate::Engine::target_counts`], on either backend.
//!
//! Each kind's query runs through its own broad phase (rects through their [`RectSet`]'s grid,
//! shapes through theirs); the engine merges them (`kind_first.rs` holds each kind's first
//! hits of a call). A first hit is the smallest `t_enter` in exact
//! arithmetic across every kind: two hits whose rounded `t_enter` are equal are ordered by
//! their exact entry times ([`entry_time`]), and an exact tie goes to the lower
//! [`TargetKind`], then the lower index.

pub(crate) mod entry_time;
pub(crate) mod kind_first;
mod layers;

pub use layers::{LayerHit, LayeredBatch};

use crate::broad_phase::RectSet;
use crate::cpu::segment_circle::{Circle, CircleContact};
use crate::cpu::segment_polygon::{PolygonContact, Polygons};
use crate::cpu::segment_segment::SegmentContact;
use crate::error::{Error, InputArray, InputError, Result};
use crate::query::{Batch, OnInvalid};
use crate::shape::{Shape, ShapeHit};
use crate::types::{Filter, PairResult, Rect, Segment};

/// A kind of target, in the order that breaks an exact tie of entry times (rects first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TargetKind {
    Rect,
    Circle,
    Wall,
    Polygon,
}

impl TargetKind {
    /// Every kind, in tie order.
    pub const ALL: [TargetKind; 4] = [
        TargetKind::Rect,
        TargetKind::Circle,
        TargetKind::Wall,
        TargetKind::Polygon,
    ];

    /// What errors call an element of this kind.
    pub fn array(self) -> InputArray {
        match self {
            TargetKind::Rect => InputArray::Rects,
            TargetKind::Circle => InputArray::Circles,
            TargetKind::Wall => InputArray::Walls,
            TargetKind::Polygon => InputArray::Polygons,
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// How a segment meets one target: the kind's own contact, whole.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetContact {
    /// With its [`crate::Kind`] and entry and exit sides.
    Rect(PairResult),
    /// With its [`crate::CircleKind`].
    Circle(CircleContact),
    /// With its [`crate::Contact`].
    Wall(SegmentContact),
    /// With its [`crate::Kind`] and entry and exit edges.
    Polygon(PolygonContact),
}

impl TargetContact {
    pub fn kind(&self) -> TargetKind {
        match self {
            TargetContact::Rect(_) => TargetKind::Rect,
            TargetContact::Circle(_) => TargetKind::Circle,
            TargetContact::Wall(_) => TargetKind::Wall,
            TargetContact::Polygon(_) => TargetKind::Polygon,
        }
    }

    /// The first t of the segment at the target, correctly rounded.
    pub fn t_enter(&self) -> f32 {
        match self {
            TargetContact::Rect(c) => c.t_enter,
            TargetContact::Circle(c) => c.t_enter,
            TargetContact::Wall(c) => c.t_enter,
            TargetContact::Polygon(c) => c.t_enter,
        }
    }

    /// The last t of the segment at the target, correctly rounded.
    pub fn t_exit(&self) -> f32 {
        match self {
            TargetContact::Rect(c) => c.t_exit,
            TargetContact::Circle(c) => c.t_exit,
            TargetContact::Wall(c) => c.t_exit,
            TargetContact::Polygon(c) => c.t_exit,
        }
    }
}

/// One hitting (segment, target) pair: the target is `target` of its kind's array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetHit {
    pub segment: u32,
    pub target: u32,
    pub contact: TargetContact,
}

impl TargetHit {
    pub fn kind(&self) -> TargetKind {
        self.contact.kind()
    }
}

/// A shape a scene holds as a kind of its own (walls, circles): what
/// [`crate::Engine::shape_first_hits`] needs to ask the scene's query over such shapes alone.
pub trait SceneShape: Shape {
    /// The scene's kind of this shape.
    const KIND: TargetKind;
    /// Sets `shapes` as `targets`' shapes of this kind.
    ///
    /// # Errors
    /// As [`Targets::set_walls`].
    fn set_in(targets: &mut Targets, shapes: &[Self]) -> Result<()>;
    /// A hit of this kind as the shapes' own hit; `None` for another kind's.
    fn shape_hit(hit: TargetHit) -> Option<ShapeHit<Self::Contact>>;
}

/// `hit`'s segment and target with `contact`.
fn as_shape_hit<C>(hit: &TargetHit, contact: C) -> ShapeHit<C> {
    ShapeHit {
        segment: hit.segment,
        shape: hit.target,
        contact,
    }
}

impl SceneShape for Segment {
    const KIND: TargetKind = TargetKind::Wall;
    fn set_in(targets: &mut Targets, walls: &[Self]) -> Result<()> {
        targets.set_walls(walls)
    }
    fn shape_hit(hit: TargetHit) -> Option<ShapeHit<SegmentContact>> {
        match hit.contact {
            TargetContact::Wall(c) => Some(as_shape_hit(&hit, c)),
            _ => None,
        }
    }
}

impl SceneShape for Circle {
    const KIND: TargetKind = TargetKind::Circle;
    fn set_in(targets: &mut Targets, circles: &[Self]) -> Result<()> {
        targets.set_circles(circles)
    }
    fn shape_hit(hit: TargetHit) -> Option<ShapeHit<CircleContact>> {
        match hit.contact {
            TargetContact::Circle(c) => Some(as_shape_hit(&hit, c)),
            _ => None,
        }
    }
}

/// A polygon's hit as the polygons' own hit ([`crate::Engine::polygon_first_hits`]); `None`
/// for another kind's.
pub(crate) fn polygon_hit_of(hit: TargetHit) -> Option<ShapeHit<PolygonContact>> {
    match hit.contact {
        TargetContact::Polygon(c) => Some(as_shape_hit(&hit, c)),
        _ => None,
    }
}

/// Hits per segment and per target of each kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetCounts {
    pub per_segment: Vec<u32>,
    /// Per target, one array per kind in [`TargetKind`] order.
    pub per_target: [Vec<u64>; 4],
}

impl TargetCounts {
    /// The hits of each target of `kind`.
    pub fn of(&self, kind: TargetKind) -> &[u64] {
        &self.per_target[kind.slot()]
    }
}

/// Targets of every kind, prepared for many queries: a level's static geometry, a frame's
/// moving hitboxes, or both, each kind set on its own. Setting rects, circles or walls again
/// replaces them in the memory already held (rects rebuild their grid, [`RectSet::rebuild`]);
/// polygons are replaced by the [`Polygons`] given.
///
/// By default an invalid target fails its setter, which leaves the kind empty. Under
/// [`Targets::skipping_invalid`] it keeps its index and misses every segment, and
/// [`Targets::skipped`] lists it. Polygons are checked when built ([`Polygons::new`]).
#[derive(Clone, Debug, Default)]
pub struct Targets {
    rects: RectSet,
    circles: Vec<Circle>,
    walls: Vec<Segment>,
    polygons: Polygons,
    filters: [Option<Vec<Filter>>; 4],
    /// The invalid targets of each kind kept as stand-ins (rects: the set's own list).
    skipped: [Vec<InputError>; 4],
    on_invalid: OnInvalid,
}

/// `shapes` into `kept`, checked: under [`OnInvalid::Miss`] each invalid one is replaced by
/// `stand_in` of the first valid one (or of the default) and listed in `skipped`.
fn keep_shapes<S: Shape + Default>(
    kept: &mut Vec<S>,
    skipped: &mut Vec<InputError>,
    shapes: &[S],
    on_invalid: OnInvalid,
    stand_in: impl Fn(&S) -> S,
) -> Result<()> {
    kept.clear();
    skipped.clear();
    for (i, s) in shapes.iter().enumerate() {
        if let Err(e) = S::check(i, s) {
            if on_invalid == OnInvalid::Fail {
                return Err(e.into());
            }
            skipped.push(e);
        }
    }
    kept.extend_from_slice(shapes);
    if !skipped.is_empty() {
        let valid = (0..shapes.len()).find(|&i| S::check(i, &shapes[i]).is_ok());
        let stand_in = valid.map_or_else(S::default, |i| stand_in(&shapes[i]));
        for e in skipped.iter() {
            kept[e.index] = stand_in;
        }
    }
    Ok(())
}

impl Targets {
    /// No targets; invalid ones fail their setter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Invalid targets miss instead of failing their setter (a game's frame): each keeps its
    /// index, misses every segment, and is listed by [`skipped`](Self::skipped).
    pub fn skipping_invalid(self) -> Self {
        Self {
            on_invalid: OnInvalid::Miss,
            ..self
        }
    }

    /// Replaces the rects and rebuilds their grid.
    ///
    /// # Errors
    /// [`Error::Input`] naming the first invalid rect, unless invalid ones are skipped.
    pub fn set_rects(&mut self, rects: &[Rect]) -> Result<()> {
        match self.on_invalid {
            OnInvalid::Fail => self.rects.rebuild(rects),
            OnInvalid::Miss => {
                self.rects.rebuild_skipping_invalid(rects);
                Ok(())
            }
        }
    }

    /// Replaces the circles.
    ///
    /// # Errors
    /// As [`set_rects`](Self::set_rects), for circles.
    pub fn set_circles(&mut self, circles: &[Circle]) -> Result<()> {
        let skipped = &mut self.skipped[TargetKind::Circle.slot()];
        let stand_in = |c: &Circle| Circle::new(c.cx, c.cy, 0.0);
        keep_shapes(
            &mut self.circles,
            skipped,
            circles,
            self.on_invalid,
            stand_in,
        )
    }

    /// Replaces the walls.
    ///
    /// # Errors
    /// As [`set_rects`](Self::set_rects), for walls.
    pub fn set_walls(&mut self, walls: &[Segment]) -> Result<()> {
        let skipped = &mut self.skipped[TargetKind::Wall.slot()];
        let stand_in = |w: &Segment| Segment::new(w.x0, w.y0, w.x0, w.y0);
        keep_shapes(&mut self.walls, skipped, walls, self.on_invalid, stand_in)
    }

    /// Replaces the polygons (checked when they were built).
    pub fn set_polygons(&mut self, polygons: Polygons) {
        self.polygons = polygons;
    }

    /// One [`Filter`] per target of `kind` (teams), or `None` for every target tested. Checked
    /// against the kind's length at each query.
    pub fn set_filters(&mut self, kind: TargetKind, filters: Option<&[Filter]>) {
        let slot = &mut self.filters[kind.slot()];
        match (slot.as_mut(), filters) {
            (Some(kept), Some(f)) => {
                kept.clear();
                kept.extend_from_slice(f);
            }
            (_, f) => *slot = f.map(<[Filter]>::to_vec),
        }
    }

    pub fn rects(&self) -> &RectSet {
        &self.rects
    }

    pub fn circles(&self) -> &[Circle] {
        &self.circles
    }

    pub fn walls(&self) -> &[Segment] {
        &self.walls
    }

    pub fn polygons(&self) -> &Polygons {
        &self.polygons
    }

    /// How many targets of `kind` there are (skipped ones included).
    pub fn len(&self, kind: TargetKind) -> usize {
        match kind {
            TargetKind::Rect => self.rects.rects().len(),
            TargetKind::Circle => self.circles.len(),
            TargetKind::Wall => self.walls.len(),
            TargetKind::Polygon => self.polygons.len(),
        }
    }

    /// Whether there are no targets of any kind.
    pub fn is_empty(&self) -> bool {
        TargetKind::ALL.iter().all(|&k| self.len(k) == 0)
    }

    /// The filters of `kind`, if set.
    pub fn filters(&self, kind: TargetKind) -> Option<&[Filter]> {
        self.filters[kind.slot()].as_deref()
    }

    /// The invalid targets of `kind` the last setter kept as misses, in index order.
    pub fn skipped(&self, kind: TargetKind) -> &[InputError] {
        match kind {
            TargetKind::Rect => self.rects.skipped(),
            _ => &self.skipped[kind.slot()],
        }
    }

    /// The filter of target `k` of `kind`: [`Filter::NONE`] for a skipped one.
    pub(crate) fn filter(&self, kind: TargetKind, k: usize) -> Filter {
        let skipped = self.skipped(kind);
        if !skipped.is_empty() && skipped.binary_search_by_key(&k, |e| e.index).is_ok() {
            return Filter::NONE;
        }
        self.filters(kind).map_or(Filter::ALL, |f| f[k])
    }

    /// Every filter array's length against its kind's.
    pub(crate) fn check_filters(&self) -> Result<()> {
        for kind in TargetKind::ALL {
            if let Some(f) = self.filters(kind)
                && f.len() != self.len(kind)
            {
                return Err(Error::FilterLength {
                    array: kind.array().name(),
                    expected: self.len(kind),
                    got: f.len(),
                });
            }
        }
        Ok(())
    }
}

/// Segments against [`Targets`], with optional per-segment filters.
#[derive(Clone, Copy, Debug)]
pub struct TargetBatch<'a> {
    pub segments: &'a [Segment],
    /// One filter per segment, or `None`.
    pub segment_filters: Option<&'a [Filter]>,
    pub targets: &'a Targets,
    /// What a query does with an invalid segment (default: [`OnInvalid::Fail`]).
    pub on_invalid: OnInvalid,
}

impl<'a> TargetBatch<'a> {
    pub fn over(segments: &'a [Segment], targets: &'a Targets) -> Self {
        Self {
            segments,
            segment_filters: None,
            targets,
            on_invalid: OnInvalid::Fail,
        }
    }

    /// With one filter per segment.
    pub fn with_segment_filters(self, filters: &'a [Filter]) -> Self {
        Self {
            segment_filters: Some(filters),
            ..self
        }
    }

    /// Invalid segments miss everything instead of failing the call, as
    /// [`Batch::skip_invalid`]; [`crate::Engine::last_skipped`] lists them.
    pub fn skip_invalid(self) -> Self {
        Self {
            on_invalid: OnInvalid::Miss,
            ..self
        }
    }

    /// The batch over the rects that every query starts from: its segment side is what the
    /// engine admits (stand-ins for skipped segments) for every kind.
    pub(crate) fn rect_batch(&self) -> Result<Batch<'a>> {
        self.targets.check_filters()?;
        Ok(Batch {
            segment_filters: self.segment_filters,
            rect_filters: self.targets.filters(TargetKind::Rect),
            on_invalid: self.on_invalid,
            ..Batch::over(self.segments, &self.targets.rects)
        })
    }
}
