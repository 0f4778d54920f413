//! The CPU kernels: one module per shader in `shaders/`, same names, same branch order (the
//! scalar reference), and [`batched`], the fast path that gives the reference's answers.
//! [`segment_segment`] is the next shape's scalar reference, ahead of its shader.

pub mod batched;
pub mod grid;
pub mod pairs;
pub mod queries;
pub(crate) mod rounding;
pub mod segment_rect;
pub mod segment_segment;
