//! The CPU kernels: one module per shader in `shaders/`, same names, same branch order (the
//! scalar reference), and [`batched`], the fast path that gives the reference's answers.

pub mod batched;
pub mod grid;
pub mod pairs;
pub mod queries;
pub(crate) mod rounding;
pub mod segment_rect;
