//! Exact segment collision, in huge batches, with the same bytes on the CPU and any GPU.
//!
//! Line segments against rectangles ([`Rect`]), walls (a [`Segment`] each), circles
//! ([`Circle`]) and polygons with holes ([`Polygons`]), and polygons against polygons. Every
//! decision is the exact one for the f32 inputs and every `t` is correctly rounded; the
//! contract, every degenerate case included, is `docs/semantics.md`, and the scalar functions
//! ([`segment_rect`], [`segment_segment`], [`segment_circle`], [`segment_polygon`]) are its
//! executable form.
//!
//! An [`Engine`] runs the queries on a [`Backend`]: a GPU through wgpu, or the CPU (SIMD and
//! rayon). Over a scene of mixed targets ([`Targets`], a [`TargetBatch`] of segments over it),
//! [`Engine::target_first_hits_into`], [`Engine::target_hits`] and [`Engine::target_counts`]
//! answer every kind at once, with one tie rule: the exact order of entry, then kind, then
//! index. [`FrameLoop`] runs a game's frames on either backend.
//!
//! ```
//! use rectcast::{Circle, Engine, Rect, Segment, TargetBatch, TargetKind, Targets};
//!
//! let mut scene = Targets::new();
//! scene.set_rects(&[Rect::new(8.0, -1.0, 9.0, 1.0)])?;
//! scene.set_circles(&[Circle::new(4.0, 0.0, 1.0)])?;
//! let bullets = [Segment::new(0.0, 0.0, 10.0, 0.0)];
//! let first = Engine::cpu().target_first_hits(&TargetBatch::over(&bullets, &scene))?;
//! assert_eq!(first[0].map(|hit| hit.kind()), Some(TargetKind::Circle));
//! # Ok::<(), rectcast::Error>(())
//! ```
//!
//! The guide is `docs/library.md`; the README has a batch job and a game frame.

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;

/// The library guide's examples (`docs/library.md`), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryGuideExamples;

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
