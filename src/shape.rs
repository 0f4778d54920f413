//! The seam every shape after rectangles goes through. A shape is one folder of `src/cpu/` (its
//! types and scalar function in `mod.rs`, the mirror of its kernel in `shaders/`; its float
//! filters in `filters.rs`; its [`Shape`] impl in `shape.rs`), and this module, the seam alone,
//! imports none of them. The engine's dense query
//! ([`crate::Engine::shape_pairs`]), its validation, the CPU batch path and the GPU host
//! (`gpu::shapes`) are written once, over this trait.
//!
//! Rectangles keep their own, older path (filters on the GPU, the broad phase, every query).

use bytemuck::Pod;

use crate::cpu::lanes::{HitLanes, LaneVerdicts};
use crate::error::{InputArray, InputError};
use crate::gpu::Emulation;
use crate::types::{Rect, Segment};

/// A shape's per-pair result, as the queries over shapes read it.
pub trait ShapeContact: Pod + Send + Sync + PartialEq + std::fmt::Debug {
    /// Whether the segment meets the shape.
    fn hit(&self) -> bool;
    /// The first t of the segment at the shape (0 on a miss).
    fn t_enter(&self) -> f32;
    /// The last t of the segment at the shape (0 on a miss).
    fn t_exit(&self) -> f32;
    /// What the contact's category is called where a table gives it a column: `kind` (the
    /// ends' inside or out, as rects have), or `contact` (how two segments meet).
    const CATEGORY: &'static str;
    /// Its category: a code (0 on a miss) and the code's lowercase name.
    fn category(&self) -> (u32, &'static str);
    /// The name of each category code, in code order.
    fn category_names() -> Vec<&'static str>;
    /// Where the segment meets the shape's boundary on its way, as a picture marks it: at
    /// t_enter (coming in from outside, or meeting a wall) and at t_exit (going out, or the far
    /// end of a stretch along a wall). A miss meets neither.
    fn boundary(&self) -> (bool, bool);
}

/// [`ShapeContact`] for a contact type with `t_enter` and `t_exit` fields and a `hit` method of
/// its own (every shape's so far), and a category named `$column`: what its method `$category`
/// gives, a `$categories` (with `code`, `name` and `ALL`); its `boundary` method too.
macro_rules! contact_with_times {
    ($contact:ty, $column:literal, $category:ident: $categories:ty) => {
        impl $crate::shape::ShapeContact for $contact {
            fn hit(&self) -> bool {
                <$contact>::hit(self)
            }

            fn t_enter(&self) -> f32 {
                self.t_enter
            }

            fn t_exit(&self) -> f32 {
                self.t_exit
            }

            const CATEGORY: &'static str = $column;

            fn category(&self) -> (u32, &'static str) {
                let category = self.$category();
                (category.code(), category.name())
            }

            fn category_names() -> Vec<&'static str> {
                <$categories>::ALL.iter().map(|c| c.name()).collect()
            }

            fn boundary(&self) -> (bool, bool) {
                <$contact>::boundary(self)
            }
        }
    };
}
pub(crate) use contact_with_times;

/// One hitting (segment, shape) pair of a query over shapes
/// ([`crate::Engine::shape_hits`], [`crate::Engine::shape_first_hits`]): the shapes' form of a
/// rect's [`crate::Hit`], with the shape's contact for the rect's `PairResult`. A segment's first
/// hit is an `Option` of one, where rects have the flat [`crate::FirstHit`] (its docs say why).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeHit<C> {
    pub segment: u32,
    pub shape: u32,
    pub contact: C,
}

/// A shape a query segment is tested against, exactly, on the CPU and the GPU.
pub trait Shape: Pod + Send + Sync + 'static {
    /// The result of one (query segment, shape) pair: GPU-ready, as the kernel writes it.
    type Contact: ShapeContact;
    /// The result of a pair that does not meet.
    const MISS: Self::Contact;
    /// What errors call an element of the shapes' array.
    const ARRAY: InputArray;
    /// The kernel: its composed source, file and dense entry point.
    const KERNEL: ShapeKernel;

    /// The contract's answer (the scalar CPU function, which the kernel mirrors).
    fn exact(query: &Segment, shape: &Self) -> Self::Contact;

    /// The same answer where floating point certifies it, `None` where only the exact path
    /// can tell: the CPU batch path's filter.
    fn filtered(query: &Segment, shape: &Self) -> Option<Self::Contact>;

    /// Whether the segment meets the shape, exactly: [`Shape::exact`]'s hit, which a shape may
    /// decide for less than the whole contact (the CPU's counts ask only this).
    fn hit(query: &Segment, shape: &Self) -> bool {
        Self::filtered(query, shape)
            .unwrap_or_else(|| Self::exact(query, shape))
            .hit()
    }

    /// Whether the shape has a lane filter of its own ([`Shape::hit_lanes`]); without one the
    /// CPU batch path sends every candidate of the box cull to [`Shape::filtered`].
    const HIT_LANES: bool = false;

    /// What the lane filter reads of the shape: up to four values.
    fn lane_values(&self) -> [f32; 4] {
        [0.0; 4]
    }

    /// The hit alone, for one query and sixteen shapes ([`HitLanes`], from
    /// [`Shape::lane_values`]): the lanes where floating point certifies a hit, and those only
    /// the exact path can tell; the others miss, certainly. The CPU batch path's second cull
    /// (`cpu::lanes`), compiled once per SIMD level: write it over the lanes without branches,
    /// so that it vectorises.
    #[inline(always)]
    fn hit_lanes(query: &Segment, shapes: &HitLanes) -> LaneVerdicts {
        let _ = (query, shapes);
        LaneVerdicts::UNSURE
    }

    /// Whether `query` certainly starts strictly inside the shape, from its lane values
    /// ([`Shape::lane_values`]): then it meets the shape at t = 0 and the contact's `t_enter`
    /// is 0. Never true where floating point cannot tell (the default: never). The grid's
    /// first hits answer such a shape at once, not in the lane filter's batch.
    #[inline(always)]
    fn starts_inside(query: &Segment, values: &[f32; 4]) -> bool {
        let _ = (query, values);
        false
    }

    /// A closed box that holds the shape: a segment whose box misses it misses the shape, and
    /// the CPU batch path culls such pairs sixteen at a time before any other work.
    fn bounds(&self) -> Rect;

    /// The segments `shapes` are, when they are segments (walls): the CPU's first hits then
    /// list each in the grid's cells along it ([`crate::cpu::grid::Grid::build_along`]), not
    /// in every cell of its box. None for shapes with an area (the default).
    fn paths(shapes: &[Self]) -> Option<&[Segment]> {
        let _ = shapes;
        None
    }

    /// Checks one shape against the input domain; `index` is its place in its array.
    ///
    /// # Errors
    /// The first bad field, named.
    fn check(index: usize, shape: &Self) -> Result<(), InputError>;

    /// The overridable constants of the kernel, for one emulation mode (tests only;
    /// [`Emulation::Native`] otherwise).
    fn constants(emulation: Emulation) -> Vec<(&'static str, f64)>;
}

/// A shape that files and arrays hold as records of up to four f32 values (a CSV's columns, a
/// NumPy array's rows): how the CLI and Python read them, name them and describe them. Walls and
/// circles are; polygons' edges are not (polygons are rings, read whole).
pub trait ShapeRecord: Shape {
    /// One shape, as a table's id column names it (`wall`).
    const NAME: &'static str;
    /// The shapes, as a flag or a keyword names them (`walls`).
    const PLURAL: &'static str;
    /// What the shapes are, in a help text's words (`closed disks`).
    const ABOUT: &'static str;
    /// A record's values in order: a CSV's column names, a NumPy row's.
    const FIELDS: &'static [&'static str];
    /// The shape of a record: its first `FIELDS.len()` values (the rest are not read).
    fn from_record(values: [f32; 4]) -> Self;
    /// How a picture of a scene draws the shapes (the CLI's `render`): as lines, or as areas.
    const LINES: bool;
    /// How a picture of a scene draws this one: a line or an area's outline.
    fn outline(&self) -> Outline;
}

/// A shape as a picture draws it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outline {
    /// A line from one point to another: a wall.
    Line([f32; 2], [f32; 2]),
    /// A closed disk: its center and radius.
    Disk([f32; 2], f32),
}

/// Where a shape's kernel lives.
#[derive(Clone, Copy, Debug)]
pub struct ShapeKernel {
    /// Its file in `shaders/`.
    pub file: &'static str,
    /// The source the pipeline compiles: the file between what it builds on and the passes
    /// over a tile (`kernel_source!` in `src/shape.rs`).
    pub source: &'static str,
    /// The dense entry point over queries × shapes.
    pub entry: &'static str,
    /// The dense entry point's second pass, if the kernel has one: the dense entry point then
    /// answers only the pairs it can at once and lists the others (`list_pair`,
    /// `shaders/shape_passes.wgsl`), and this one takes the list, so that the exact path's
    /// invocations run side by side. Without one, the dense entry point answers every pair
    /// itself.
    pub listed: Option<&'static str>,
    /// The counts entry point, if the kernel has one: each pair's hit without its t, summed per
    /// query and per shape on the GPU (bindings 5 and 6 of `shaders/shape_passes.wgsl`).
    /// Without one, the GPU's counts reduce the dense pairs.
    pub counts: Option<&'static str>,
    /// Whether the source ends with `shaders/shape_queries.wgsl`, which reduces a tile's dense
    /// pairs on the GPU to the hits alone (`shape_hit_list`). It reads the kernel's contacts through the kernel file's `Contact`
    /// alias and `contact_hit`. Without it, the host reduces the dense pairs it reads back.
    pub reduces: bool,
    /// The same queries through the broad phase's grid, where the kernel has them: `source`,
    /// then the walk (`shaders/grid_walk.wgsl`, `shaders/shape_walk.wgsl`) and the queries over
    /// each segment's candidates (`shaders/shape_grid.wgsl`), as `kernel_source!(grid: file)`
    /// composes them; for polygons, their edges' contacts over each segment's candidates
    /// (`shaders/polygon_grid.wgsl`), which the host gathers. A module of its own: the walk
    /// binds a second group, and a device that binds one group only cannot create a module
    /// that declares it.
    pub grid: Option<&'static str>,
}

impl ShapeKernel {
    /// A kernel that runs through every pass of `shaders/shape_passes.wgsl`, the entry points
    /// written once over the hooks its file defines (`certain_miss`, `shape_miss`,
    /// `shape_exact`, `shape_hit`), whose contacts `shaders/shape_queries.wgsl` reduces, and
    /// whose queries walk the grid: `source` is `kernel_source!(reduces: file)`, and `grid`
    /// `kernel_source!(grid: file)`.
    pub const fn passes(file: &'static str, source: &'static str, grid: &'static str) -> Self {
        Self {
            file,
            source,
            entry: "shape_pairs_dense",
            listed: Some("shape_pairs_listed"),
            counts: Some("shape_counts"),
            reduces: true,
            grid: Some(grid),
        }
    }
}

/// A shape's kernel source: the per-pair function of rects (its `Segment`, `Rect`, `order_key`,
/// `mul_wide`), the exact integers, the shape's files in `shaders/` in the order given, then the
/// passes over a tile (`shaders/shape_passes.wgsl`); after `reduces:`, the queries reduced from
/// its contacts (`shaders/shape_queries.wgsl`) last; after `grid:`, that source, then the walk
/// (`kernel_source!(walk)`: `shaders/grid_walk.wgsl`, `shaders/shape_walk.wgsl`) and the same
/// queries through the grid (`shaders/shape_grid.wgsl`).
macro_rules! kernel_source {
    (reduces: $($file:literal),+) => {
        concat!(
            $crate::shape::kernel_source!($($file),+),
            "\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/shape_queries.wgsl"))
        )
    };
    (grid: $($file:literal),+) => {
        concat!(
            $crate::shape::kernel_source!(reduces: $($file),+),
            "\n",
            $crate::shape::kernel_source!(walk),
            "\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/shape_grid.wgsl"))
        )
    };
    (walk) => {
        concat!(
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/grid_walk.wgsl")),
            "\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/shape_walk.wgsl"))
        )
    };
    ($($file:literal),+) => {
        concat!(
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/segment_rect.wgsl")),
            "\n",
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/exact.wgsl")),
            "\n",
            $(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/", $file)), "\n",)+
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/shape_passes.wgsl"))
        )
    };
}
pub(crate) use kernel_source;
