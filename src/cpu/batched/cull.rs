//! The rect blocks and the SIMD box cull: for one segment, which of the rects' boxes meet its
//! box, sixteen at a time (AVX-512, AVX2, or portable code LLVM vectorises).

use crate::cpu::lanes::{LANES, Simd};
use crate::types::{Rect, Segment};

/// Blocks whose masks one SIMD call computes (the caller's stack buffer holds as many).
pub(super) const SPAN: usize = 64;

/// [`LANES`] rects, one array per coordinate.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct RectBlock {
    pub(super) min_x: [f32; LANES],
    pub(super) max_x: [f32; LANES],
    pub(super) min_y: [f32; LANES],
    pub(super) max_y: [f32; LANES],
}

impl RectBlock {
    /// Every value NaN: the box cull's comparisons are ordered (`<=`, `_CMP_LE_OQ`), so no box
    /// overlaps it, whatever the segment's values. With ±infinity instead, a segment whose
    /// values changed to infinities after validation overlapped the padding lanes past the
    /// last rect, and their indices ran past the rects.
    const EMPTY: Self = Self {
        min_x: [f32::NAN; LANES],
        max_x: [f32::NAN; LANES],
        min_y: [f32::NAN; LANES],
        max_y: [f32::NAN; LANES],
    };
}

/// Lays `rects` out in blocks, reusing `blocks`' memory.
pub(super) fn fill_blocks(rects: &[Rect], blocks: &mut Vec<RectBlock>) {
    blocks.clear();
    blocks.resize(rects.len().div_ceil(LANES), RectBlock::EMPTY);
    for (block, chunk) in blocks.iter_mut().zip(rects.chunks(LANES)) {
        for (lane, r) in chunk.iter().enumerate() {
            block.min_x[lane] = r.min_x;
            block.max_x[lane] = r.max_x;
            block.min_y[lane] = r.min_y;
            block.max_y[lane] = r.max_y;
        }
    }
}

/// A segment's bounding box, computed once per segment.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegmentBox {
    pub(super) min_x: f32,
    pub(super) max_x: f32,
    pub(super) min_y: f32,
    pub(super) max_y: f32,
}

impl SegmentBox {
    pub(super) fn of(s: &Segment) -> Self {
        Self {
            min_x: s.x0.min(s.x1),
            max_x: s.x0.max(s.x1),
            min_y: s.y0.min(s.y1),
            max_y: s.y0.max(s.y1),
        }
    }
}

/// A block with at least one rect the segment's box overlaps: bit `l` of `mask` is lane `l`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BlockMask {
    block: u32,
    mask: u32,
}

/// The masks of the blocks of `blocks` (at most [`SPAN`]) that have a lane overlapping `b`,
/// compacted into `out`; returns how many.
#[inline]
pub(super) fn block_masks(
    simd: Simd,
    b: &SegmentBox,
    blocks: &[RectBlock],
    out: &mut [BlockMask; SPAN],
) -> usize {
    debug_assert!(blocks.len() <= SPAN);
    match simd {
        // SAFETY: `Simd` values other than Portable are only used where `is_supported` holds
        // (checked in `CpuKernel::new`).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { x86::masks_avx512(b, blocks, out) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::masks_avx2(b, blocks, out) },
        _ => masks_portable(b, blocks, out),
    }
}

pub(super) fn masks_portable(
    b: &SegmentBox,
    blocks: &[RectBlock],
    out: &mut [BlockMask; SPAN],
) -> usize {
    let mut n = 0;
    for (i, block) in blocks.iter().enumerate() {
        let mut mask = 0u32;
        for lane in 0..LANES {
            let overlap = (b.min_x <= block.max_x[lane])
                & (block.min_x[lane] <= b.max_x)
                & (b.min_y <= block.max_y[lane])
                & (block.min_y[lane] <= b.max_y);
            mask |= (overlap as u32) << lane;
        }
        out[n] = BlockMask {
            block: i as u32,
            mask,
        };
        n += (mask != 0) as usize;
    }
    n
}

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    use super::{BlockMask, RectBlock, SPAN, SegmentBox};
    use std::arch::x86_64::*;

    /// AVX-512: four compares per block, chained through a mask register. `_CMP_LE_OQ` is
    /// IEEE `<=` (-0.0 == +0.0), the reference's comparison.
    #[target_feature(enable = "avx512f")]
    pub(super) fn masks_avx512(
        b: &SegmentBox,
        blocks: &[RectBlock],
        out: &mut [BlockMask; SPAN],
    ) -> usize {
        let s_min_x = _mm512_set1_ps(b.min_x);
        let s_max_x = _mm512_set1_ps(b.max_x);
        let s_min_y = _mm512_set1_ps(b.min_y);
        let s_max_y = _mm512_set1_ps(b.max_y);
        let mut n = 0;
        for (i, block) in blocks.iter().enumerate() {
            // SAFETY: each array holds 16 f32, one unaligned 512-bit load.
            let (min_x, max_x, min_y, max_y) = unsafe {
                (
                    _mm512_loadu_ps(block.min_x.as_ptr()),
                    _mm512_loadu_ps(block.max_x.as_ptr()),
                    _mm512_loadu_ps(block.min_y.as_ptr()),
                    _mm512_loadu_ps(block.max_y.as_ptr()),
                )
            };
            let k = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(s_min_x, max_x);
            let k = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(k, min_x, s_max_x);
            let k = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(k, s_min_y, max_y);
            let k = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(k, min_y, s_max_y);
            out[n] = BlockMask {
                block: i as u32,
                mask: k as u32,
            };
            n += (k != 0) as usize;
        }
        n
    }

    /// AVX2: each block as two 8-lane halves, compared, and-ed and moved to a bit mask.
    #[target_feature(enable = "avx2")]
    pub(super) fn masks_avx2(
        b: &SegmentBox,
        blocks: &[RectBlock],
        out: &mut [BlockMask; SPAN],
    ) -> usize {
        let s_min_x = _mm256_set1_ps(b.min_x);
        let s_max_x = _mm256_set1_ps(b.max_x);
        let s_min_y = _mm256_set1_ps(b.min_y);
        let s_max_y = _mm256_set1_ps(b.max_y);
        let mut n = 0;
        for (i, block) in blocks.iter().enumerate() {
            let mut mask = 0u32;
            for half in 0..2 {
                let at = half * 8;
                // SAFETY: lanes at..at + 8 of 16-f32 arrays, one unaligned 256-bit load each.
                let (min_x, max_x, min_y, max_y) = unsafe {
                    (
                        _mm256_loadu_ps(block.min_x.as_ptr().add(at)),
                        _mm256_loadu_ps(block.max_x.as_ptr().add(at)),
                        _mm256_loadu_ps(block.min_y.as_ptr().add(at)),
                        _mm256_loadu_ps(block.max_y.as_ptr().add(at)),
                    )
                };
                let x = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_LE_OQ>(s_min_x, max_x),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(min_x, s_max_x),
                );
                let y = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_LE_OQ>(s_min_y, max_y),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(min_y, s_max_y),
                );
                mask |= (_mm256_movemask_ps(_mm256_and_ps(x, y)) as u32) << at;
            }
            out[n] = BlockMask {
                block: i as u32,
                mask,
            };
            n += (mask != 0) as usize;
        }
        n
    }
}

/// Calls `visit` with the index of every rect whose box overlaps segment `s`'s, in ascending
/// order: the only pairs of `s` the reference does not reject outright.
#[inline(always)]
pub(super) fn for_each_candidate(
    simd: Simd,
    s: &Segment,
    blocks: &[RectBlock],
    mut visit: impl FnMut(usize),
) {
    candidates_until(simd, s, blocks, |rect| {
        visit(rect);
        true
    });
}

/// [`for_each_candidate`], stopping at the first candidate for which `visit` returns false.
#[inline(always)]
pub(super) fn candidates_until(
    simd: Simd,
    s: &Segment,
    blocks: &[RectBlock],
    mut visit: impl FnMut(usize) -> bool,
) {
    let b = SegmentBox::of(s);
    let mut masks = [BlockMask::default(); SPAN];
    for (span_index, span) in blocks.chunks(SPAN).enumerate() {
        let n = block_masks(simd, &b, span, &mut masks);
        for m in &masks[..n] {
            let base = (span_index * SPAN + m.block as usize) * LANES;
            let mut bits = m.mask;
            while bits != 0 {
                if !visit(base + bits.trailing_zeros() as usize) {
                    return;
                }
                bits &= bits - 1;
            }
        }
    }
}
