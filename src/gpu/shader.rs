//! The WGSL sources and the constants they are specialised with.
//!
//! The shaders declare every number as an `override` without a default; [`constants`] supplies
//! them from the Rust definitions, so a number lives in one place. A missing one fails pipeline
//! creation (and the plain `cargo test` naga check).

use crate::cpu::pairs::filter;
use crate::types::{Sides, flags};

/// `shaders/pairs.wgsl`.
pub const PAIRS_WGSL: &str = include_str!("../../shaders/pairs.wgsl");

/// Invocations per workgroup of every rectcast kernel.
pub const WORKGROUP_SIZE: u32 = 64;

/// The pipeline-overridable constants of every rectcast shader, by name.
pub fn constants() -> [(&'static str, f64); 15] {
    [
        ("WORKGROUP_SIZE", WORKGROUP_SIZE as f64),
        ("FLAG_HIT", flags::HIT as f64),
        ("FLAG_START_INSIDE", flags::START_INSIDE as f64),
        ("FLAG_END_INSIDE", flags::END_INSIDE as f64),
        ("ENTRY_SHIFT", flags::ENTRY_SHIFT as f64),
        ("EXIT_SHIFT", flags::EXIT_SHIFT as f64),
        ("SIDE_MIN_X", Sides::MIN_X.bits() as f64),
        ("SIDE_MAX_X", Sides::MAX_X.bits() as f64),
        ("SIDE_MIN_Y", Sides::MIN_Y.bits() as f64),
        ("SIDE_MAX_Y", Sides::MAX_Y.bits() as f64),
        ("FLAG_UNCERTAIN", flags::UNCERTAIN as f64),
        ("FILTER_RELATIVE", filter::FILTER_RELATIVE as f64),
        ("FILTER_ABSOLUTE", filter::FILTER_ABSOLUTE as f64),
        ("FILTER_FLOOR", filter::FILTER_FLOOR as f64),
        ("TINY_DIFFERENCE", filter::TINY_DIFFERENCE as f64),
    ]
}

/// The uniform block of `pairs.wgsl`. Mirrors WGSL `Params`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub segment_count: u32,
    pub rect_count: u32,
    pub pair_count: u32,
    /// 1.0, opaque to the shader compiler: see `two_sum` in the shader.
    pub one: f32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            segment_count: 0,
            rect_count: 0,
            pair_count: 0,
            one: 1.0,
        }
    }
}

const _: () = assert!(size_of::<Params>() == 16);
