//! The GPU host: context, shaders and their constants, chunking, and one module per kernel.

mod buffers;
mod call;
pub mod chunks;
mod compiled;
pub mod context;
pub mod emulation;
pub mod frames;
pub mod grid;
mod layouts;
mod limits;
mod pipeline_cache;
mod rect_kernel;
pub mod rect_pairs;
pub mod rect_queries;
mod ring;
pub mod shader;
pub mod shapes;
mod timer;

pub use crate::error::LimitShortfall;
pub use call::GpuCall;
pub use context::{AdapterReport, GpuContext, enumerate_adapters};
pub use emulation::Emulation;
pub use frames::Frames;
pub use limits::{GpuLimits, HIT_LIST_LIMIT, OVERLAP_SEGMENTS, WaitLimit};
pub use rect_pairs::GpuRectPairs;
pub use rect_queries::{GpuRectQueries, GridQuery, QueryCaps};
pub use ring::CHUNKS_IN_FLIGHT;
pub use shapes::GpuShapeQueries;
