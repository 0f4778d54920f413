//! CPU mirror of `circle_verdict` in shaders/segment_circle.wgsl: the GPU's hit filter for
//! circles, in f32, whose error bounds hold on any arithmetic WGSL allows (docs/semantics.md,
//! "Segment × circle"). The same functions under the same names, the same branches.
//!
//! The shader's float operations (`f_sub`, `f_mul`, `f_det`) are [`F32Arithmetic`]'s here, so
//! that one code can be replayed on every arithmetic a GPU may have:
//! [`Ieee`](crate::cpu::arithmetic::Ieee) is the CPU's own, tests/filter.rs replays the others.
//! The CPU's batch path has its own filters, in f64 ([`super::filters`]); this one shows what
//! the GPU certifies.
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "kept line for line comparable with the WGSL"
)]

use super::Circle;
use crate::cpu::arithmetic::F32Arithmetic;
use crate::cpu::segment_rect::{UNCERTAIN, order_key};
use crate::types::Segment;

/// The constants of the filter: the one source for this mirror and the shader (overrides of
/// the same names; the range as the bits of its ends).
///
/// With every value 0 or within [`VERDICT_SMALLEST`, `VERDICT_LARGEST`], every difference of
/// two values is 0 or a multiple of 2^-63 at least that, and every product of two differences
/// is 0 or at least 2^-126: nothing below the products of four values is subnormal, so no
/// flushed value is multiplied by a large one, and nothing overflows (the largest, a cross
/// product squared, stays below 2^126).
pub mod bounds {
    /// The bound's relative part: 2^-18 = 32·2^-23. Each quantity is off by at most about
    /// 10 roundings of its terms' magnitudes (the discriminant's, the largest), each within
    /// 1.5 ulp (rounding toward zero, or the emulated hostile rounding), so 15·2^-23, doubled
    /// for the rounding of the bound itself and rounded up to a power of two.
    pub const VERDICT_RELATIVE: f32 = 1.0 / (1u32 << 18) as f32;
    /// The bound's absolute part, 2^-118: covers a flushed product of four values, or the
    /// bound's own relative part flushed (each below 2^-126), many times over.
    pub const VERDICT_FLOOR: f32 = 1.0 / (1u128 << 118) as f32;
    /// The smallest nonzero magnitude the filter takes, 2^-40.
    pub const VERDICT_SMALLEST: f32 = 1.0 / (1u64 << 40) as f32;
    /// The largest magnitude the filter takes, 2^30.
    pub const VERDICT_LARGEST: f32 = (1u32 << 30) as f32;
}

use bounds::{VERDICT_FLOOR, VERDICT_LARGEST, VERDICT_RELATIVE, VERDICT_SMALLEST};

/// [`circle_verdict`]'s certain answers (its third is `UNCERTAIN`): values private to the
/// kernel, like `UNCERTAIN`, never exchanged with the host.
pub const CIRCLE_APART: i32 = 0;
pub const CIRCLE_MEETS: i32 = 1;

/// Whether v is 0 or within the filter's range (compared as bits: no float comparison).
fn in_verdict_range(v: f32) -> bool {
    let magnitude = v.to_bits() & 0x7fff_ffff;
    magnitude == 0
        || (magnitude >= VERDICT_SMALLEST.to_bits() && magnitude <= VERDICT_LARGEST.to_bits())
}

/// The sign of value, computed from terms whose magnitudes sum to size, when certain: past
/// `VERDICT_RELATIVE·size + VERDICT_FLOOR`; else `UNCERTAIN`.
fn verdict_sign(ops: &dyn F32Arithmetic, value: f32, size: f32) -> i32 {
    let bound = ops.add(ops.mul(VERDICT_RELATIVE, size), VERDICT_FLOOR);
    if value > bound {
        return 1;
    }
    if value < -bound {
        return -1;
    }
    UNCERTAIN
}

/// The sign of x² + y² − rr: 1 for a point certainly outside the disk, −1 certainly in it.
fn outside_sign(ops: &dyn F32Arithmetic, x: f32, y: f32, rr: f32) -> i32 {
    let squares = ops.det(x, x, -y, y);
    verdict_sign(
        ops,
        ops.sub(squares, rr),
        ops.add(ops.add(ops.mul(x, x), ops.mul(y, y)), rr),
    )
}

/// The sign of ax·bx + ay·by (f · d, or g · d).
fn dot_sign(ops: &dyn F32Arithmetic, ax: f32, ay: f32, bx: f32, by: f32) -> i32 {
    let size = ops.add(ops.mul(ax, bx).abs(), ops.mul(ay, by).abs());
    verdict_sign(ops, ops.det(ax, bx, -ay, by), size)
}

/// The sign of R²·|d|² − (f × d)², which is (f · d)² − |d|²·q(0): whether the segment's line
/// meets the disk.
fn discriminant_sign(ops: &dyn F32Arithmetic, fx: f32, fy: f32, dx: f32, dy: f32, rr: f32) -> i32 {
    let cross = ops.det(fx, dy, fy, dx);
    let size = ops.add(ops.mul(fx, dy).abs(), ops.mul(fy, dx).abs());
    let dd = ops.det(dx, dx, -dy, dy);
    let reach = ops.mul(rr, dd);
    verdict_sign(
        ops,
        ops.det(rr, dd, cross, cross),
        ops.add(reach, ops.mul(size, size)),
    )
}

/// Whether `query` meets `circle`, certified in f32 on the arithmetic `ops`: `CIRCLE_MEETS`
/// when an end is certainly in the disk, or both are certainly outside with the line's
/// nearest point to the center certainly between them and certainly inside; `CIRCLE_APART`
/// when both ends are certainly outside and the segment is a point, or that nearest point
/// certainly lies at or past an end, or the line certainly misses the disk; `UNCERTAIN`
/// otherwise (an end on or near the circle, a tangent, a value outside the filter's range),
/// left to the exact integers. Never a wrong answer on any arithmetic WGSL allows.
pub fn circle_verdict(ops: &dyn F32Arithmetic, query: &Segment, circle: &Circle) -> i32 {
    let in_range = in_verdict_range(query.x0)
        && in_verdict_range(query.y0)
        && in_verdict_range(query.x1)
        && in_verdict_range(query.y1)
        && in_verdict_range(circle.cx)
        && in_verdict_range(circle.cy)
        && in_verdict_range(circle.r);
    if !in_range {
        return UNCERTAIN;
    }
    let fx = ops.sub(query.x0, circle.cx);
    let fy = ops.sub(query.y0, circle.cy);
    let gx = ops.sub(query.x1, circle.cx);
    let gy = ops.sub(query.y1, circle.cy);
    let dx = ops.sub(query.x1, query.x0);
    let dy = ops.sub(query.y1, query.y0);
    let rr = ops.mul(circle.r, circle.r);
    let start = outside_sign(ops, fx, fy, rr);
    let end = outside_sign(ops, gx, gy, rr);
    if start == -1 || end == -1 {
        return CIRCLE_MEETS;
    }
    if start != 1 || end != 1 {
        return UNCERTAIN;
    }
    if order_key(query.x0) == order_key(query.x1) && order_key(query.y0) == order_key(query.y1) {
        // A point outside the disk.
        return CIRCLE_APART;
    }
    // Both ends outside: the segment meets the disk only if the nearest point of its line
    // lies strictly between them (f · d < 0 < g · d) and within R.
    let ahead = dot_sign(ops, fx, fy, dx, dy);
    let behind = dot_sign(ops, gx, gy, dx, dy);
    if ahead == 1 || behind == -1 {
        return CIRCLE_APART;
    }
    let discriminant = discriminant_sign(ops, fx, fy, dx, dy, rr);
    if discriminant == -1 {
        return CIRCLE_APART;
    }
    if ahead == -1 && behind == 1 && discriminant == 1 {
        return CIRCLE_MEETS;
    }
    UNCERTAIN
}
