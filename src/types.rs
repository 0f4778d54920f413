//! The contract's types: inputs, the per-pair result and its decoded views.
//!
//! Every struct here that crosses to the GPU is `#[repr(C)]` + `Pod` and names the WGSL struct it
//! mirrors; `tests/shader.rs` checks sizes and offsets against naga's layout of the shader.

use bytemuck::{Pod, Zeroable};
use std::fmt;

/// A segment from `(x0, y0)` (t = 0) to `(x1, y1)` (t = 1). Mirrors WGSL `Segment`.
///
/// A zero-length segment (`x0 == x1 && y0 == y1`) is a point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Segment {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

impl Segment {
    pub const fn new(x0: f32, y0: f32, x1: f32, y1: f32) -> Self {
        Self { x0, y0, x1, y1 }
    }

    /// The point at parameter `t` (computed in f32; exact at t = 0 and t = 1).
    pub fn point_at(&self, t: f32) -> (f32, f32) {
        if t == 1.0 {
            return (self.x1, self.y1);
        }
        (
            self.x0 + t * (self.x1 - self.x0),
            self.y0 + t * (self.y1 - self.y0),
        )
    }
}

/// A closed axis-aligned rectangle: `min_x <= x <= max_x` and `min_y <= y <= max_y`, boundary
/// included. Zero width or height is allowed (a line segment or a point). Mirrors WGSL `Rect`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Rect {
    pub min_x: f32,
    pub min_y: f32,
    pub max_x: f32,
    pub max_y: f32,
}

impl Rect {
    pub const fn new(min_x: f32, min_y: f32, max_x: f32, max_y: f32) -> Self {
        Self {
            min_x,
            min_y,
            max_x,
            max_y,
        }
    }

    /// Whether the point is in the closed rectangle (plain comparisons, exact).
    pub fn contains(&self, x: f32, y: f32) -> bool {
        self.min_x <= x && x <= self.max_x && self.min_y <= y && y <= self.max_y
    }
}

/// One (segment index, rect index) pair of an explicit pair list. Mirrors WGSL `PairIndex`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct PairIndex {
    pub segment: u32,
    pub rect: u32,
}

impl PairIndex {
    pub const fn new(segment: u32, rect: u32) -> Self {
        Self { segment, rect }
    }
}

/// Which segments and rects are tested against each other: a pair is tested when
/// `segment.mask & rect.category != 0 && rect.mask & segment.category != 0` (the usual physics
/// engine rule: bullets of one team skip that team's hitboxes). Mirrors WGSL `Filter`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Filter {
    /// The categories this object belongs to (bits).
    pub category: u32,
    /// The categories this object is tested against (bits).
    pub mask: u32,
}

impl Filter {
    /// In every category, tested against every category: what no filter means.
    pub const ALL: Filter = Filter::new(u32::MAX, u32::MAX);
    /// In no category, tested against none: never tested (what a skipped invalid element gets,
    /// [`crate::Batch::skip_invalid`]).
    pub const NONE: Filter = Filter::new(0, 0);

    pub const fn new(category: u32, mask: u32) -> Self {
        Self { category, mask }
    }

    /// Whether a segment with this filter and a rect with `rect` are tested.
    pub const fn tests(&self, rect: &Filter) -> bool {
        self.mask & rect.category != 0 && rect.mask & self.category != 0
    }
}

impl Default for Filter {
    fn default() -> Self {
        Filter::ALL
    }
}

/// Bit positions of [`PairResult::flags`]. These constants are the one source: the shader
/// receives them as pipeline-overridable constants of the same names (see `gpu::shader`).
pub mod flags {
    /// The closed rectangle and the segment share at least one point.
    pub const HIT: u32 = 1 << 0;
    /// The segment's start point (t = 0) is in the rectangle.
    pub const START_INSIDE: u32 = 1 << 1;
    /// The segment's end point (t = 1) is in the rectangle.
    pub const END_INSIDE: u32 = 1 << 2;
    /// Shift of the 4-bit entry-side mask ([`super::Sides`] bits).
    pub const ENTRY_SHIFT: u32 = 4;
    /// Shift of the 4-bit exit-side mask ([`super::Sides`] bits).
    pub const EXIT_SHIFT: u32 = 8;
    /// Set by the GPU kernel, alone, on a pair its floating-point filter could not decide with
    /// certainty. rectcast re-decides those pairs exactly on the host before results reach the
    /// caller, so no result it returns carries it; a game running
    /// [`crate::gpu::shader::segment_rect_wgsl`] in its own shader decides them with
    /// [`crate::segment_rect`].
    pub const UNCERTAIN: u32 = 1 << 31;
}

/// The result for one (segment, rect) pair. Mirrors WGSL `PairResult`.
///
/// On a miss `flags == 0` and both t are 0.0. On a hit `0 <= t_enter <= t_exit <= 1`,
/// `t_enter == 0` exactly when the start is inside and `t_exit == 1` exactly when the end is
/// inside. Read it through [`kind`](Self::kind), [`entry_sides`](Self::entry_sides) and
/// [`exit_sides`](Self::exit_sides).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PairResult {
    pub t_enter: f32,
    pub t_exit: f32,
    pub flags: u32,
}

impl PairResult {
    pub const MISS: Self = Self {
        t_enter: 0.0,
        t_exit: 0.0,
        flags: 0,
    };

    pub fn hit(&self) -> bool {
        self.flags & flags::HIT != 0
    }
    pub fn start_inside(&self) -> bool {
        self.flags & flags::START_INSIDE != 0
    }
    pub fn end_inside(&self) -> bool {
        self.flags & flags::END_INSIDE != 0
    }

    pub fn kind(&self) -> Kind {
        if self.hit() {
            Kind::of_hit(self.start_inside(), self.end_inside())
        } else {
            Kind::Miss
        }
    }

    /// The sides crossed at `t_enter`; empty when the start is inside or on a miss.
    pub fn entry_sides(&self) -> Sides {
        Sides::from_bits((self.flags >> flags::ENTRY_SHIFT) & Sides::ALL.0)
    }

    /// The sides crossed at `t_exit`; empty when the end is inside or on a miss.
    pub fn exit_sides(&self) -> Sides {
        Sides::from_bits((self.flags >> flags::EXIT_SHIFT) & Sides::ALL.0)
    }
}

/// A segment's closest hit: the rect with the smallest `t_enter`, the lowest rect index on a
/// tie. Mirrors WGSL `FirstHit`.
///
/// The queries over shapes mean the same and answer `Option<ShapeHit<C>>`
/// ([`crate::Engine::shape_first_hits`]). Rects keep a flat, `Pod` type with a sentinel because
/// their first hits are written where `Option` cannot go: into a caller's buffer
/// ([`crate::Engine::first_hit_into`], reused every frame), straight from a GPU buffer the
/// kernel fills, and across the frames API's staging ring. [`FirstHit::rect`] gives the
/// `Option`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct FirstHit {
    /// The rect's index, or [`FirstHit::NO_RECT`] when the segment hits nothing.
    pub rect: u32,
    /// The pair's result; [`PairResult::MISS`] when there is no hit.
    pub result: PairResult,
}

impl FirstHit {
    /// `rect` of a segment that hits no rect.
    pub const NO_RECT: u32 = u32::MAX;
    /// A segment that hits no rect.
    pub const NONE: FirstHit = FirstHit {
        rect: FirstHit::NO_RECT,
        result: PairResult::MISS,
    };

    /// The rect hit first, if any.
    pub fn rect(&self) -> Option<u32> {
        (self.rect != Self::NO_RECT).then_some(self.rect)
    }
}

impl Default for FirstHit {
    fn default() -> Self {
        FirstHit::NONE
    }
}

/// One hitting (segment, rect) pair of a hit list. Mirrors WGSL `Hit`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Hit {
    pub segment: u32,
    pub rect: u32,
    pub result: PairResult,
}

/// How a segment meets a closed rectangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// No common point.
    Miss,
    /// Both ends inside (so the whole segment is: the rectangle is convex).
    Inside,
    /// Starts outside, ends inside.
    Enter,
    /// Starts inside, ends outside.
    Exit,
    /// Both ends outside, yet they share a point: passes through, touches a corner, or runs
    /// along an edge.
    Cross,
}

impl Kind {
    /// Every kind, in code order.
    pub const ALL: [Kind; 5] = [
        Kind::Miss,
        Kind::Inside,
        Kind::Enter,
        Kind::Exit,
        Kind::Cross,
    ];

    /// The lowercase name used by the CLI (`miss`, `inside`, `enter`, `exit`, `cross`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Miss => "miss",
            Kind::Inside => "inside",
            Kind::Enter => "enter",
            Kind::Exit => "exit",
            Kind::Cross => "cross",
        }
    }

    /// Its code where a result stores it as a number (polygons' `kind`): 0 to 4 in the order
    /// above.
    pub const fn code(self) -> u32 {
        match self {
            Kind::Miss => 0,
            Kind::Inside => 1,
            Kind::Enter => 2,
            Kind::Exit => 3,
            Kind::Cross => 4,
        }
    }

    /// The kind of a hit, from whether each end is inside the target (closed: an end on the
    /// boundary is inside). A miss is [`Kind::Miss`] whatever its ends.
    pub const fn of_hit(start_inside: bool, end_inside: bool) -> Kind {
        match (start_inside, end_inside) {
            (true, true) => Kind::Inside,
            (false, true) => Kind::Enter,
            (true, false) => Kind::Exit,
            (false, false) => Kind::Cross,
        }
    }

    /// The kind of [`Kind::code`]; any other number is `Miss`.
    pub const fn from_code(code: u32) -> Kind {
        match code {
            1 => Kind::Inside,
            2 => Kind::Enter,
            3 => Kind::Exit,
            4 => Kind::Cross,
            _ => Kind::Miss,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of rectangle sides, named by the coordinate they lie on (y-up and y-down users alike).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sides(u32);

impl Sides {
    /// The side `x == min_x`.
    pub const MIN_X: Sides = Sides(1);
    /// The side `x == max_x`.
    pub const MAX_X: Sides = Sides(2);
    /// The side `y == min_y`.
    pub const MIN_Y: Sides = Sides(4);
    /// The side `y == max_y`.
    pub const MAX_Y: Sides = Sides(8);
    pub const NONE: Sides = Sides(0);
    pub const ALL: Sides = Sides(15);

    /// Each side with its CLI name, in the order the CLI joins them.
    pub const NAMED: [(Sides, &'static str); 4] = [
        (Sides::MIN_X, "min_x"),
        (Sides::MAX_X, "max_x"),
        (Sides::MIN_Y, "min_y"),
        (Sides::MAX_Y, "max_y"),
    ];

    pub const fn from_bits(bits: u32) -> Sides {
        Sides(bits & 15)
    }
    pub const fn bits(self) -> u32 {
        self.0
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub const fn contains(self, other: Sides) -> bool {
        self.0 & other.0 == other.0
    }
    /// The number of sides in the set (2 at a corner).
    pub const fn len(self) -> u32 {
        self.0.count_ones()
    }
}

impl std::ops::BitOr for Sides {
    type Output = Sides;
    fn bitor(self, rhs: Sides) -> Sides {
        Sides(self.0 | rhs.0)
    }
}

/// `min_x+min_y` style, in the order of [`Sides::NAMED`]; empty for no side.
impl fmt::Display for Sides {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (side, name) in Sides::NAMED {
            if self.contains(side) {
                if !first {
                    f.write_str("+")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

const _: () = assert!(size_of::<Segment>() == 16);
const _: () = assert!(size_of::<Rect>() == 16);
const _: () = assert!(size_of::<PairIndex>() == 8);
const _: () = assert!(size_of::<PairResult>() == 12);
const _: () = assert!(size_of::<Filter>() == 8);
const _: () = assert!(size_of::<FirstHit>() == 16);
const _: () = assert!(size_of::<Hit>() == 20);
