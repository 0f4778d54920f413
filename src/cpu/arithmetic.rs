//! The f32 operations of the shaders' emulation hooks (`f_add`, `f_sub`, `f_mul`, `f_det` and
//! `f_div` in shaders/segment_rect.wgsl) as one arithmetic performs them. The CPU mirrors of
//! the GPU's certified f32 filters (`circle_verdict`, the walk's times in
//! [`super::shape_walk`]) take their operations from [`F32Arithmetic`], so that one code can be
//! replayed on every arithmetic a GPU may have: [`Ieee`] is the CPU's own, tests/filter.rs
//! replays the others.

/// The f32 operations of the hooks, as one arithmetic performs them.
pub trait F32Arithmetic {
    fn add(&self, a: f32, b: f32) -> f32;
    fn sub(&self, a: f32, b: f32) -> f32;
    fn mul(&self, a: f32, b: f32) -> f32;
    /// a·b − c·d, as `sub(mul(a, b), mul(c, d))`, or with either product fused into the
    /// subtraction (a GPU may contract it into a multiply-add).
    fn det(&self, a: f32, b: f32, c: f32, d: f32) -> f32;
    /// a / b: within 2.5 ulp on a GPU (WGSL's bound), correctly rounded here.
    fn div(&self, a: f32, b: f32) -> f32;
}

/// The CPU's arithmetic: IEEE 754 round to nearest, ties to even, subnormals kept, no fusion.
pub struct Ieee;

impl F32Arithmetic for Ieee {
    fn add(&self, a: f32, b: f32) -> f32 {
        a + b
    }
    fn sub(&self, a: f32, b: f32) -> f32 {
        a - b
    }
    fn mul(&self, a: f32, b: f32) -> f32 {
        a * b
    }
    fn det(&self, a: f32, b: f32, c: f32, d: f32) -> f32 {
        a * b - c * d
    }
    fn div(&self, a: f32, b: f32) -> f32 {
        a / b
    }
}
