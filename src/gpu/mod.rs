//! The GPU host: context, shaders and their constants, chunking, and one module per kernel.

mod buffers;
pub mod chunks;
mod compiled;
pub mod context;
pub mod emulation;
pub mod frames;
pub mod grid;
mod limits;
pub mod pairs;
pub mod queries;
mod rect_kernel;
mod ring;
pub mod shader;
pub mod shapes;
mod timer;

pub use context::{AdapterReport, GpuContext, enumerate_adapters};
pub use emulation::Emulation;
pub use frames::Frames;
pub use limits::{GpuLimits, WaitLimit};
pub use pairs::GpuPairs;
pub use queries::{GpuCall, GpuQueries, GridQuery, QueryCaps};
pub use ring::CHUNKS_IN_FLIGHT;
pub use shapes::GpuShapeQueries;

/// The old name of [`GpuShapeQueries`], which answers every query over shapes, not only pairs.
#[deprecated(note = "renamed rectcast::gpu::GpuShapeQueries")]
pub type GpuShapePairs<S> = GpuShapeQueries<S>;
