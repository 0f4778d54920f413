//! Every shape after rectangles, registered once: a line here, beside the shape's folder of
//! `src/cpu/` and its kernel in `shaders/` (docs/architecture.md). The tests compose each
//! registered kernel (`tests/shader.rs`), and fail on a kernel in `shaders/` that is not here.

use crate::gpu::Emulation;
use crate::shape::{Shape, ShapeKernel, ShapeRecord};

/// A registered shape: its kernel, and the constants the kernel takes.
#[derive(Clone, Copy, Debug)]
pub struct Registered {
    /// What the shapes are called in errors and docs (their [`crate::InputArray`]'s name).
    pub name: &'static str,
    pub kernel: ShapeKernel,
    /// [`Shape::constants`].
    pub constants: fn(Emulation) -> Vec<(&'static str, f64)>,
    /// Whether files and arrays hold the shapes as records ([`ShapeRecord`]; `name` is then
    /// its plural): the CLI and Python register such a shape too, in one line each, and their
    /// tests fail on one they left out.
    pub records: bool,
}

impl Registered {
    const fn of<S: Shape>(name: &'static str) -> Self {
        Self {
            name,
            kernel: S::KERNEL,
            constants: S::constants,
            records: false,
        }
    }

    const fn with_records<S: ShapeRecord>() -> Self {
        Self {
            records: true,
            ..Self::of::<S>(S::PLURAL)
        }
    }
}

/// The shapes, one line each.
pub const SHAPES: &[Registered] = &[
    Registered::with_records::<crate::Segment>(),
    Registered::with_records::<crate::Circle>(),
    Registered::of::<crate::PolygonEdge>("polygons"),
];
