#![doc = include_str!("../README.md")]

mod broad_phase;
mod cancel;
#[cfg(test)]
mod changed_inputs;
pub mod cpu;
mod engine;
mod error;
pub mod gpu;
mod query;
pub mod registry;
pub mod scene;
pub mod shape;
mod targets;
mod types;
pub mod validate;

pub use broad_phase::{AUTO_MIN_RECTS, AUTO_MIN_SEGMENTS, BroadPhase, RectSet};
pub use cancel::Cancel;
pub use cpu::batched::{CpuOptions, Simd};
pub use cpu::segment_circle::{Circle, CircleContact, CircleKind, segment_circle};
pub use cpu::segment_polygon::{
    EdgeContact, NO_EDGE, PolygonContact, PolygonEdge, Polygons, polygon_edge, polygons_overlap,
    polygons_overlap_rings, segment_polygon, segment_polygon_rings,
};
pub use cpu::segment_rect::segment_rect;
pub use cpu::segment_segment::{Contact, SegmentContact, segment_segment};
pub use engine::{
    AUTO_COSTS_VAR, AutoCosts, Backend, Choice, Chosen, Engine, Family, FrameLoop,
    GRID_TESTS_PER_SEGMENT, TestCost,
};
pub use error::{Error, InputArray, InputError, LimitShortfall, Problem, Result};
pub use gpu::frames::FrameCapacity;
pub use gpu::{GpuContext, GpuLimits, WaitLimit};
pub use query::{Batch, ClipTo, Clipped, Counts, OnInvalid, Skipped};
pub use shape::{Outline, Shape, ShapeContact, ShapeHit, ShapeKernel, ShapeRecord};
pub use targets::{
    LayerHit, LayeredBatch, SceneShape, TargetBatch, TargetContact, TargetCounts, TargetHit,
    TargetKind, Targets,
};
pub use types::{Filter, FirstHit, Hit, Kind, PairIndex, PairResult, Rect, Segment, Sides, flags};
pub use validate::MAX_ABS_COORDINATE;
/// The wgpu this crate is built with (30): a game passing its own device to
/// [`GpuContext::from_device`] names its types through this, so the versions cannot differ.
pub use wgpu;

/// The per-pair contract (docs/semantics.md).
#[doc = include_str!("../docs/semantics.md")]
pub mod semantics {}
