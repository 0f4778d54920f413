//! The GPU host: context, shaders and their constants, chunking, and one module per kernel.

pub mod chunks;
pub mod context;
pub mod pairs;
pub mod shader;

pub use context::{AdapterReport, GpuContext, enumerate_adapters};
pub use pairs::{GpuLimits, GpuPairs};
