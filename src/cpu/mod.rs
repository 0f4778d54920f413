//! The CPU kernels: one module per shader in `shaders/`, same names, same branch order.

pub mod pairs;
pub mod queries;
pub mod segment_rect;
