//! The GPU host: context, shaders and their constants, chunking, and one module per kernel.

mod buffers;
mod call;
pub mod chunks;
mod compiled;
pub mod context;
pub mod emulation;
pub mod frames;
pub(crate) mod grid;
mod layouts;
mod limits;
mod pipeline_cache;
mod rect_kernel;
pub(crate) mod rect_pairs;
pub(crate) mod rect_queries;
mod ring;
pub mod shader;
pub(crate) mod shapes;
mod timer;

pub use crate::error::LimitShortfall;
pub use call::GpuCall;
pub use context::{AdapterReport, GpuContext, enumerate_adapters};
pub use emulation::Emulation;
pub use frames::Frames;
pub use limits::{GpuLimits, HIT_LIST_LIMIT, OVERLAP_SEGMENTS, WaitLimit};
pub(crate) use rect_pairs::GpuRectPairs;
pub(crate) use rect_queries::{GpuRectQueries, GridQuery};
pub use ring::CHUNKS_IN_FLIGHT;
pub(crate) use shapes::GpuShapeQueries;
