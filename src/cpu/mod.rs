//! The CPU kernels: one module per shader in `shaders/`, same names, same branch order (the
//! scalar reference), and [`batched`], the fast path that gives the reference's answers.
//! [`exact`] holds the exact integers the shapes after rectangles compute on, `narrow` the
//! 64- and 128-bit ones the CPU takes first where a pair's values span few binary orders.

pub mod arithmetic;
pub mod batched;
pub mod exact;
pub mod grid;
pub(crate) mod lane_filter;
pub mod lanes;
pub(crate) mod narrow;
pub mod rect_pairs;
pub mod rect_queries;
pub(crate) mod rounding;
pub mod segment_circle;
pub mod segment_polygon;
pub mod segment_rect;
pub mod segment_segment;
pub mod shape_queries;
pub mod shape_walk;
pub mod workers;
