//! One module per command or family of commands: its arguments and its `run`.

pub mod bench;
pub mod clip;
pub mod demo;
pub mod generate;
pub mod info;
pub mod overlaps;
pub mod queries;
pub mod render;
pub mod serve;
pub mod shaders;
