//! The fast CPU path: the scalar reference's answers ([`super::segment_rect`],
//! [`super::queries`], [`super::pairs`]), bit for bit, in a fraction of its time.
//!
//! - **Layout.** The rects are copied into blocks of [`LANES`] (struct of arrays within a block),
//!   padded with empty rects that overlap nothing.
//! - **SIMD cull.** For each segment, one pass compares the segment's bounding box with all the
//!   rects, 16 per block, and keeps a bit mask per block. Explicit AVX-512 or AVX2, chosen at
//!   run time ([`Simd::detect`]), else a portable loop that LLVM vectorises for the baseline.
//! - **Exactness.** The bounding-box test is the reference's first rule, "both ends beyond one
//!   side of a slab", turned around: `max(x0, x1) >= min_x && min(x0, x1) <= max_x` (and y) holds
//!   exactly when `beyond_one_side` does not, for every finite input. A pair it rejects is a
//!   [`PairResult::MISS`] in the reference and adds nothing to any query; every pair it keeps
//!   runs the reference itself ([`segment_rect`]) and the query's own step (`queries::is_closer` for
//!   the first hit). So every decision is the reference's, in the reference's order.
//! - **Threads.** rayon over chunks of segments, or none at all with one thread (then nothing is
//!   allocated per call).

use rayon::prelude::*;

use super::workers::Workers;
use crate::cancel::Cancel;

use super::grid::{Grid, Next, Step, prefers_brute_force, visit_cells, walk_of};
use super::lane_filter::{Candidates, LaneFilter};
use super::lanes::{HitLanes, LaneVerdicts};
pub use super::lanes::{LANES, Simd};
use super::queries::{Entry, compare_entries, entry_of, is_closer, is_tested};
use super::segment_circle::CircleContact;
use super::segment_polygon::{EdgeContact, PolygonContact, PolygonEdge, filters::polygon_filtered};
use super::segment_rect::AXIS_Y;
use super::segment_rect::{pair_flags, pair_times, segment_rect};
use super::segment_segment::SegmentContact;
use super::shape_queries::{NO_SHAPE, comes_first};
use crate::query::{Batch, Counts};
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::types::{Circle, Filter, FirstHit, Hit, PairIndex, PairResult, Rect, Segment, flags};

/// Blocks whose masks one SIMD call computes (the caller's stack buffer holds as many).
const SPAN: usize = 64;

/// [`LANES`] rects, one array per coordinate.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct RectBlock {
    min_x: [f32; LANES],
    max_x: [f32; LANES],
    min_y: [f32; LANES],
    max_y: [f32; LANES],
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
fn fill_blocks(rects: &[Rect], blocks: &mut Vec<RectBlock>) {
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
struct SegmentBox {
    min_x: f32,
    max_x: f32,
    min_y: f32,
    max_y: f32,
}

impl SegmentBox {
    fn of(s: &Segment) -> Self {
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
struct BlockMask {
    block: u32,
    mask: u32,
}

/// The masks of the blocks of `blocks` (at most [`SPAN`]) that have a lane overlapping `b`,
/// compacted into `out`; returns how many.
#[inline]
fn block_masks(
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

fn masks_portable(b: &SegmentBox, blocks: &[RectBlock], out: &mut [BlockMask; SPAN]) -> usize {
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
mod x86 {
    use super::{
        BlockMask, Candidates, DenseBlocks, HitLanes, LANES, LaneFilter, RectBlock, SPAN,
        SegmentBox, ShapeLayout,
    };
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

    /// The box cull of [`masks_avx512`] in two levels (each block's own box, sixteen blocks at
    /// a time, then the boxes of the blocks kept), each block's kept lanes (their shape
    /// indices, and their values when given) compressed into `out` at once: sixteen lanes are
    /// stored past the candidates kept so far, and the next block's overwrite those not kept.
    ///
    /// # Safety
    /// `out` has room for `out.len + (layout.blocks.len() + 1) * LANES` candidates, values
    /// included when `values` is given (one value block per block, in the layout's order).
    #[target_feature(enable = "avx512f,popcnt")]
    pub(super) unsafe fn collect_avx512(
        b: &SegmentBox,
        layout: &ShapeLayout,
        values: Option<&[HitLanes]>,
        out: &mut Candidates,
        mut dense: impl DenseBlocks,
    ) {
        debug_assert!(out.shapes.len() >= out.len + (layout.blocks.len() + 1) * LANES);
        debug_assert!(values.is_none_or(|v| v.len() == layout.blocks.len() && out.keeps_values()));
        let s_min_x = _mm512_set1_ps(b.min_x);
        let s_max_x = _mm512_set1_ps(b.max_x);
        let s_min_y = _mm512_set1_ps(b.min_y);
        let s_max_y = _mm512_set1_ps(b.max_y);
        // SAFETY: each array holds 16 f32, one unaligned 512-bit load.
        let overlaps = |block: &RectBlock| unsafe {
            let k =
                _mm512_cmp_ps_mask::<_CMP_LE_OQ>(s_min_x, _mm512_loadu_ps(block.max_x.as_ptr()));
            let k = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(
                k,
                _mm512_loadu_ps(block.min_x.as_ptr()),
                s_max_x,
            );
            let k = _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(
                k,
                s_min_y,
                _mm512_loadu_ps(block.max_y.as_ptr()),
            );
            _mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(k, _mm512_loadu_ps(block.min_y.as_ptr()), s_max_y)
        };
        let shapes = out.shapes.as_mut_ptr();
        let [v0, v1, v2, v3] = &mut out.values;
        let arrays = [
            v0.as_mut_ptr(),
            v1.as_mut_ptr(),
            v2.as_mut_ptr(),
            v3.as_mut_ptr(),
        ];
        let mut n = out.len;
        for (g, group) in layout.groups.iter().enumerate() {
            let mut blocks = overlaps(group) as u32;
            while blocks != 0 {
                let i = g * LANES + blocks.trailing_zeros() as usize;
                blocks &= blocks - 1;
                let k = overlaps(&layout.blocks[i]);
                if k == 0 || dense.take(i, k) {
                    continue;
                }
                // SAFETY: n + 16 is within the room the caller ensured (n grows by at most 16
                // a block, once per block); 16 u32 per index array.
                unsafe {
                    let index = _mm512_loadu_si512(layout.shapes[i].as_ptr().cast());
                    _mm512_storeu_si512(
                        shapes.add(n).cast(),
                        _mm512_maskz_compress_epi32(k, index),
                    );
                }
                if let Some(values) = values {
                    for (array, value) in arrays.iter().zip(&values[i].values) {
                        // SAFETY: as above; each value array has the same room.
                        unsafe {
                            let v = _mm512_loadu_ps(value.as_ptr());
                            _mm512_storeu_ps(array.add(n), _mm512_maskz_compress_ps(k, v));
                        }
                    }
                }
                n += k.count_ones() as usize;
            }
        }
        out.len = n;
    }

    /// [`super::collect_lanes`] compiled for AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) fn collect_avx2(
        b: &SegmentBox,
        layout: &ShapeLayout,
        filter: Option<&LaneFilter>,
        out: &mut Candidates,
        dense: impl DenseBlocks,
    ) {
        super::collect_lanes(b, layout, filter, out, dense)
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
fn for_each_candidate(simd: Simd, s: &Segment, blocks: &[RectBlock], mut visit: impl FnMut(usize)) {
    candidates_until(simd, s, blocks, |rect| {
        visit(rect);
        true
    });
}

/// [`for_each_candidate`], stopping at the first candidate for which `visit` returns false.
#[inline(always)]
fn candidates_until(
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

/// Appends every candidate of `s` among the shapes of `layout` to `out`: from `grid` (a grid
/// over the same boxes) where its walk pays for `s`, in the walk's order, else from the SIMD
/// box cull, in the layout's order.
#[inline(always)]
fn shape_candidates(
    simd: Simd,
    layout: &ShapeLayout,
    grid: Option<&Grid>,
    s: &Segment,
    filter: Option<&LaneFilter>,
    out: &mut Candidates,
    dense: impl DenseBlocks,
) {
    let shapes = layout.order.len();
    match grid.map(|g| (g, walk_of(g, s))) {
        Some((grid, walk))
            if !prefers_brute_force(grid, s, &walk, brute_force_cost(shapes, filter)) =>
        {
            let no_ceiling = std::cell::Cell::new(u32::MAX);
            visit_cells(grid, s, &walk, &no_ceiling, |step| {
                if let Step::Rect(k) = step {
                    out.push(k as usize, filter);
                }
                Next::Entry
            });
        }
        _ => collect_candidates(simd, s, layout, filter, out, dense),
    }
}

/// What the box cull does with a block that has lanes kept: [`DenseBlocks::take`] may answer
/// it in place (true: nothing appended), else its kept lanes are appended to the candidates.
/// A trait rather than a closure so that it is inlined into each SIMD level's cull, and
/// compiled with its instructions.
trait DenseBlocks {
    fn take(&mut self, block: usize, kept: u16) -> bool;
}

impl<D: DenseBlocks> DenseBlocks for &mut D {
    #[inline(always)]
    fn take(&mut self, block: usize, kept: u16) -> bool {
        (**self).take(block, kept)
    }
}

/// Every kept lane appended.
struct AppendAll;

impl DenseBlocks for AppendAll {
    #[inline(always)]
    fn take(&mut self, _block: usize, _kept: u16) -> bool {
        false
    }
}

/// Counts' blocks with [`DENSE_LANES`] or more lanes kept: through the lane filter as they lie
/// ([`LaneFilter::count_block`]), certain hits added to `per_place` (by place in the
/// layout) sixteen lanes at once, and the unsure lanes through `hit`.
struct CountInPlace<'a, H: Fn(usize) -> bool> {
    filter: &'a LaneFilter,
    layout: &'a ShapeLayout,
    query: &'a Segment,
    per_place: &'a mut [[u32; LANES]],
    per_shape: &'a mut [u64],
    hit: H,
    hits: u32,
}

impl<H: Fn(usize) -> bool> DenseBlocks for CountInPlace<'_, H> {
    #[inline(always)]
    fn take(&mut self, block: usize, kept: u16) -> bool {
        if kept.count_ones() < DENSE_LANES {
            return false;
        }
        let counts = &mut self.per_place[block];
        let verdicts = self.filter.count_block(self.query, block, kept, counts);
        self.hits += verdicts.hit.count_ones();
        let mut unsure = verdicts.unsure;
        while unsure != 0 {
            let k = self.layout.shapes[block][unsure.trailing_zeros() as usize] as usize;
            unsure &= unsure - 1;
            if (self.hit)(k) {
                self.per_shape[k] += 1;
                self.hits += 1;
            }
        }
        true
    }
}

/// Kept lanes from which counts answer a block in place ([`CountInPlace`]) rather than
/// appending them to the candidates.
const DENSE_LANES: u32 = 9;

/// How many rects' worth of the grid's work the brute force over `shapes` costs a segment, for
/// [`prefers_brute_force`]: all of them, but an eighth with a lane filter, whose box cull and
/// filter cost a shape about an eighth of what a walk's entry costs. Measured on 2,048 long
/// random segments × 1,024 walls or circles (`BroadPhase::Auto`, counts, 2 threads): the
/// grid's choice went from 5.1 ms to 1.8 ms for walls and 4.2 to 2.0 ms for circles, while
/// 100,000 short bullets × 10,000 circles kept the grid (43 to 44 ms).
fn brute_force_cost(shapes: usize, filter: Option<&LaneFilter>) -> usize {
    if filter.is_some() { shapes / 8 } else { shapes }
}

/// Appends the shapes whose boxes meet `s`'s box to `out`, in the layout's order, with their
/// lane values when there is a filter: the box cull tests each block's box first (sixteen
/// blocks at a time), then the boxes of the blocks it keeps. AVX-512 compresses each block's
/// kept lanes straight into the buffer; the other levels append them one by one. A block
/// with lanes kept goes first to `dense.take(block, kept lanes)`, which may answer it in place
/// (true: nothing appended).
#[inline(always)]
fn collect_candidates(
    simd: Simd,
    s: &Segment,
    layout: &ShapeLayout,
    filter: Option<&LaneFilter>,
    out: &mut Candidates,
    dense: impl DenseBlocks,
) {
    let b = SegmentBox::of(s);
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => {
            out.ensure_room(out.len + (layout.blocks.len() + 1) * LANES);
            let values = filter.map(|f| &f.blocks[..]);
            // SAFETY: AVX-512 is only used where it is supported (checked in
            // `CpuKernel::new`); the room is ensured above.
            unsafe { x86::collect_avx512(&b, layout, values, out, dense) }
        }
        // SAFETY: AVX2 is only used where it is supported (checked in `CpuKernel::new`).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::collect_avx2(&b, layout, filter, out, dense) },
        _ => collect_lanes(&b, layout, filter, out, dense),
    }
}

/// The lanes of `block` whose boxes meet `b`, as a bit mask: written over the lanes, so that
/// it vectorises for the level it is compiled for.
#[inline(always)]
fn lanes_overlapping(b: &SegmentBox, block: &RectBlock) -> u16 {
    let overlap: [bool; LANES] = std::array::from_fn(|lane| {
        (b.min_x <= block.max_x[lane])
            & (block.min_x[lane] <= b.max_x)
            & (b.min_y <= block.max_y[lane])
            & (block.min_y[lane] <= b.max_y)
    });
    super::lane_filter::mask_of(&overlap)
}

/// [`collect_candidates`] on the levels without AVX-512: each block's box first, then the
/// boxes of the blocks kept, whose kept lanes are appended one by one (with their values,
/// read from the filter's block beside the box-cull block).
#[inline(always)]
fn collect_lanes(
    b: &SegmentBox,
    layout: &ShapeLayout,
    filter: Option<&LaneFilter>,
    out: &mut Candidates,
    mut dense: impl DenseBlocks,
) {
    for (g, group) in layout.groups.iter().enumerate() {
        let mut blocks = lanes_overlapping(b, group);
        while blocks != 0 {
            let block = g * LANES + blocks.trailing_zeros() as usize;
            blocks &= blocks - 1;
            let kept = lanes_overlapping(b, &layout.blocks[block]);
            if kept == 0 || dense.take(block, kept) {
                continue;
            }
            let values = filter.map(|f| &f.blocks[block]);
            out.ensure_room(out.len + LANES);
            let mut lanes = kept;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                out.push_lane(layout.shapes[block][lane], values, lane);
            }
        }
    }
}

/// The shapes' boxes as the shapes' box cull reads them: in blocks of sixteen, in the order of
/// a Morton curve over the boxes' centres (so that a block's shapes lie near one another), each
/// lane's shape index beside them, and each block's own box (the box of its sixteen) in
/// `groups`, blocks of sixteen of those, which the cull tests first. Small shapes scattered
/// over a field (circles) then cost the cull a fraction of their blocks.
pub(crate) struct ShapeLayout {
    pub(crate) blocks: Vec<RectBlock>,
    pub(crate) shapes: Vec<[u32; LANES]>,
    pub(crate) groups: Vec<RectBlock>,
    /// The shapes in layout order: place p holds shape `order[p]`.
    pub(crate) order: Vec<u32>,
}

impl ShapeLayout {
    pub(crate) fn new(bounds: &[Rect]) -> Self {
        let center = |b: &Rect| {
            (
                (b.min_x as f64 + b.max_x as f64) / 2.0,
                (b.min_y as f64 + b.max_y as f64) / 2.0,
            )
        };
        let (mut lo, mut hi) = (
            (f64::INFINITY, f64::INFINITY),
            (f64::NEG_INFINITY, f64::NEG_INFINITY),
        );
        for b in bounds {
            let (x, y) = center(b);
            lo = (lo.0.min(x), lo.1.min(y));
            hi = (hi.0.max(x), hi.1.max(y));
        }
        let scale = |lo: f64, hi: f64| if hi > lo { 65535.0 / (hi - lo) } else { 0.0 };
        let (scale_x, scale_y) = (scale(lo.0, hi.0), scale(lo.1, hi.1));
        // Sixteen bits spread to the even bit positions.
        let spread = |v: u32| {
            let mut x = v & 0xFFFF;
            x = (x | (x << 8)) & 0x00FF_00FF;
            x = (x | (x << 4)) & 0x0F0F_0F0F;
            x = (x | (x << 2)) & 0x3333_3333;
            (x | (x << 1)) & 0x5555_5555
        };
        // The Morton key above the shape's index: one u64 sort (ties by index).
        let mut keyed: Vec<u64> = bounds
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let (x, y) = center(b);
                let qx = ((x - lo.0) * scale_x) as u32;
                let qy = ((y - lo.1) * scale_y) as u32;
                let key = spread(qx) | spread(qy) << 1;
                (key as u64) << 32 | k as u64
            })
            .collect();
        keyed.sort_unstable();
        let order: Vec<u32> = keyed.into_iter().map(|key| key as u32).collect();
        let sorted: Vec<Rect> = order.iter().map(|&k| bounds[k as usize]).collect();
        let mut blocks = Vec::new();
        fill_blocks(&sorted, &mut blocks);
        let mut shapes = vec![[u32::MAX; LANES]; blocks.len()];
        for (place, &k) in order.iter().enumerate() {
            shapes[place / LANES][place % LANES] = k;
        }
        let unions: Vec<Rect> = sorted
            .chunks(LANES)
            .map(|chunk| {
                chunk.iter().fold(
                    Rect::new(
                        f32::INFINITY,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        f32::NEG_INFINITY,
                    ),
                    |u, b| {
                        Rect::new(
                            u.min_x.min(b.min_x),
                            u.min_y.min(b.min_y),
                            u.max_x.max(b.max_x),
                            u.max_y.max(b.max_y),
                        )
                    },
                )
            })
            .collect();
        let mut groups = Vec::new();
        fill_blocks(&unions, &mut groups);
        Self {
            blocks,
            shapes,
            groups,
            order,
        }
    }

    /// The layout of `bounds`, and the lane filter `filter` makes for `simd` in its order.
    fn with_filter(
        simd: Simd,
        bounds: &[Rect],
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
    ) -> (Self, Option<LaneFilter>) {
        let layout = Self::new(bounds);
        let filter = filter(simd, &layout.order);
        (layout, filter)
    }
}

fn filter_at(filters: Option<&[Filter]>, i: usize) -> Filter {
    filters.map_or(Filter::ALL, |f| f[i])
}

/// Segment `segment`'s first hit: the reference's `segment_rects` loop for QUERY_FIRST_HIT,
/// over the candidates only (from the grid when there is one and it pays for this segment).
#[inline(always)]
fn first_hit_of(
    simd: Simd,
    blocks: &[RectBlock],
    grid: Option<&Grid>,
    batch: &Batch,
    segment: usize,
) -> FirstHit {
    let s = &batch.segments[segment];
    let s_filter = filter_at(batch.segment_filters, segment);
    let mut best = FirstHit::NONE;
    let mut best_entry = Entry::NONE;
    // Past a hit at t = 0, only a lower rect index can win: the grid's cells list rects in
    // ascending order, so a cell's entries above it are skipped.
    let ceiling = std::cell::Cell::new(u32::MAX);
    let mut step = |step: Step| {
        let rect = match step {
            // Past a hit at t = 0 (the brute force's loop; the grid's cells check this
            // themselves).
            Step::Rect(rect) if rect > ceiling.get() => return Next::Cell,
            Step::Rect(rect) => rect as usize,
            // Rows come in t order: a best hit strictly before this row's boundary is final.
            Step::Row(bound) => {
                let boundary = Entry::crossing(AXIS_Y, bound);
                let done =
                    best.rect != FirstHit::NO_RECT && compare_entries(s, best_entry, boundary) < 0;
                return if done { Next::Stop } else { Next::Entry };
            }
        };
        if !is_tested(&s_filter, &filter_at(batch.rect_filters, rect)) {
            return Next::Entry;
        }
        let r = &batch.rects[rect];
        let result = pair_flags(s, r);
        if (result.flags & flags::HIT) == 0 {
            return Next::Entry;
        }
        let entry = entry_of(&result, r);
        if is_closer(s, rect as u32, entry, &best, best_entry) == 1 {
            best = FirstHit {
                rect: rect as u32,
                result,
            };
            best_entry = entry;
            if entry.is_start() {
                ceiling.set(rect as u32);
                return Next::Cell;
            }
        }
        Next::Entry
    };
    match grid.map(|g| (g, walk_of(g, s))) {
        Some((grid, walk)) if !prefers_brute_force(grid, s, &walk, batch.rects.len()) => {
            visit_cells(grid, s, &walk, &ceiling, step);
        }
        // In ascending order: past the ceiling, no later rect can win either.
        _ => candidates_until(simd, s, blocks, |rect| {
            step(Step::Rect(rect as u32)) != Next::Cell
        }),
    }
    // t for the closest hit only, as in the reference.
    if best.rect != FirstHit::NO_RECT {
        best.result = pair_times(s, &batch.rects[best.rect as usize], best.result);
    }
    best
}

/// Calls `hit` for every tested, hitting pair of segment `segment`, with the pair's decisions
/// ([`pair_flags`]: both t 0; [`pair_times`] fills them in): in rect order without a grid, in
/// the grid's walk order with one (callers that need rect order sort).
#[inline(always)]
fn hits_of(
    simd: Simd,
    blocks: &[RectBlock],
    grid: Option<&Grid>,
    batch: &Batch,
    segment: usize,
    mut hit: impl FnMut(usize, PairResult),
) {
    let s = &batch.segments[segment];
    let s_filter = filter_at(batch.segment_filters, segment);
    let mut consider = |rect: usize| {
        if !is_tested(&s_filter, &filter_at(batch.rect_filters, rect)) {
            return;
        }
        let result = pair_flags(s, &batch.rects[rect]);
        if (result.flags & flags::HIT) != 0 {
            hit(rect, result);
        }
    };
    match grid.map(|g| (g, walk_of(g, s))) {
        Some((grid, walk)) if !prefers_brute_force(grid, s, &walk, batch.rects.len()) => {
            let no_ceiling = std::cell::Cell::new(u32::MAX);
            visit_cells(grid, s, &walk, &no_ceiling, |step| {
                if let Step::Rect(rect) = step {
                    consider(rect as usize);
                }
                Next::Entry
            });
        }
        _ => for_each_candidate(simd, s, blocks, consider),
    }
}

/// How the CPU backend runs: its worker threads and SIMD level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuOptions {
    /// Worker threads; 0 (the default) is one per core, as rayon counts them
    /// (`RAYON_NUM_THREADS` overrides).
    pub threads: usize,
    /// The SIMD level; `None` (the default) is the best this CPU runs.
    pub simd: Option<Simd>,
}

/// The fast CPU kernel: its options, its thread pool, and its rect blocks (kept between calls,
/// so that a steady stream of batches allocates nothing on one thread).
pub struct CpuKernel {
    simd: Simd,
    threads: usize,
    /// Its own workers, or `None` for the process's shared pool ([`Workers::shared`]).
    pool: Option<Workers>,
    blocks: Vec<RectBlock>,
    /// Set: chunks not started yet are skipped (the engine then discards the call's results).
    cancel: Option<Cancel>,
}

impl std::fmt::Debug for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuKernel({self})")
    }
}

impl std::fmt::Display for CpuKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.threads == 1 { "" } else { "s" };
        write!(f, "{}, {} thread{s}", self.simd, self.threads)
    }
}

/// Segments per parallel task: a few tasks per thread, none too small to be worth a steal.
fn chunk_len(segments: usize, rects: usize, threads: usize) -> usize {
    let tasks = threads * 8;
    let by_count = segments.div_ceil(tasks.max(1));
    // At least about 64k pairs per task, and at most 64k segments: a call is cancelled
    // between chunks (`Cancel`), so none is long.
    let by_work = (1 << 16) / rects.max(1);
    by_count.min(1 << 16).max(by_work).max(1)
}

/// About how many of `boxes` a segment is tested against: all of them, or with a grid (over
/// them) the mean entries of a cell times a few cells.
fn work_per_segment(boxes: &[Rect], grid: Option<&Grid>) -> usize {
    grid.map_or(boxes.len(), |g| {
        (4 * g.entry_count() / g.cell_start.len().max(1)).clamp(1, boxes.len().max(1))
    })
}

impl Default for CpuKernel {
    /// The best SIMD level here, one thread per core (the process's shared pool).
    fn default() -> Self {
        Self {
            simd: Simd::detect(),
            threads: Workers::shared().threads(),
            pool: None,
            blocks: Vec::new(),
            cancel: None,
        }
    }
}

impl CpuKernel {
    /// # Errors
    /// A message when the SIMD level is not supported here or the thread pool cannot start.
    pub fn new(options: CpuOptions) -> Result<Self, String> {
        let simd = options.simd.unwrap_or_else(Simd::detect);
        if !simd.is_supported() {
            return Err(format!(
                "SIMD level {simd} is not supported by this CPU (available: {})",
                Simd::available()
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let (threads, pool) = match options.threads {
            0 => (Self::default().threads, None),
            1 => (1, None),
            n => {
                let pool = Workers::new(n)?;
                (n, Some(pool))
            }
        };
        Ok(Self {
            simd,
            threads,
            pool,
            blocks: Vec::new(),
            cancel: None,
        })
    }

    pub fn simd(&self) -> Simd {
        self.simd
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Calls check `cancel` between chunks from now on (`None`: never).
    pub(crate) fn set_cancel(&mut self, cancel: Option<Cancel>) {
        self.cancel = cancel;
    }

    /// Whether this call was cancelled: its chunks not started yet are skipped.
    fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }

    /// Runs `each(first segment, its part of out)` over consecutive parts of `out`, `chunk`
    /// segments of `per` items each a part: on the pool, or in order on this thread with one
    /// thread. A part not started once the call is cancelled is skipped.
    fn chunked<T: Send>(
        &self,
        out: &mut [T],
        chunk: usize,
        per: usize,
        each: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let size = (chunk * per).max(1);
        if self.threads == 1 {
            for (c, part) in out.chunks_mut(size).enumerate() {
                if self.cancelled() {
                    return;
                }
                each(c * chunk, part);
            }
            return;
        }
        Self::install(&self.pool, || {
            out.par_chunks_mut(size).enumerate().for_each(|(c, part)| {
                if !self.cancelled() {
                    each(c * chunk, part);
                }
            })
        });
    }

    /// Runs `f` on this kernel's pool (the process's shared one when it has none of its
    /// own), never on rayon's global pool, which a forked child cannot use.
    fn install<R: Send>(pool: &Option<Workers>, f: impl FnOnce() -> R + Send) -> R {
        match pool {
            Some(pool) => pool.install(f),
            None => Workers::shared().install(f),
        }
    }

    /// [`crate::Engine::first_hit_into`]: inputs valid, `out` one per segment.
    /// `grid`, when given, is a grid over `batch.rects`.
    pub(crate) fn first_hit(&mut self, batch: &Batch, grid: Option<&Grid>, out: &mut [FirstHit]) {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        // Segments in input order: sorting them by start cell (for the cells' sake in cache)
        // measured slower on bullet-hell scenes, whose gather and scatter cost more.
        let chunk = chunk_len(
            batch.segments.len(),
            work_per_segment(batch.rects, grid),
            self.threads,
        );
        self.chunked(out, chunk, 1, |first, out| {
            for (i, out) in out.iter_mut().enumerate() {
                *out = first_hit_of(simd, blocks, grid, batch, first + i);
            }
        });
    }

    /// [`crate::Engine::hits`]: every hit in (segment, rect) order.
    pub(crate) fn hits(&mut self, batch: &Batch, grid: Option<&Grid>) -> Vec<Hit> {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let hits_in = |segments: std::ops::Range<usize>, found: &mut Vec<Hit>| {
            for segment in segments {
                let s = &batch.segments[segment];
                let first = found.len();
                hits_of(simd, blocks, grid, batch, segment, |rect, result| {
                    found.push(Hit {
                        segment: segment as u32,
                        rect: rect as u32,
                        result: pair_times(s, &batch.rects[rect], result),
                    })
                });
                if grid.is_some() {
                    found[first..].sort_unstable_by_key(|h| h.rect);
                }
            }
        };
        let n = batch.segments.len();
        let chunk = chunk_len(n, work_per_segment(batch.rects, grid), self.threads);
        if self.threads == 1 {
            let mut found = Vec::new();
            for first in (0..n).step_by(chunk) {
                if self.cancelled() {
                    break;
                }
                hits_in(first..(first + chunk).min(n), &mut found);
            }
            return found;
        }
        let parts: Vec<Vec<Hit>> = Self::install(&self.pool, || {
            (0..n.div_ceil(chunk))
                .into_par_iter()
                .map(|c| {
                    let mut found = Vec::new();
                    if !self.cancelled() {
                        hits_in(c * chunk..((c + 1) * chunk).min(n), &mut found);
                    }
                    found
                })
                .collect()
        });
        parts.concat()
    }

    /// [`crate::Engine::counts`]: adds to `counts`, sized for the batch and zeroed.
    pub(crate) fn counts(&mut self, batch: &Batch, grid: Option<&Grid>, counts: &mut Counts) {
        fill_blocks(batch.rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let count_in = |first: usize, per_segment: &mut [u32], per_rect: &mut [u64]| {
            for (i, hits) in per_segment.iter_mut().enumerate() {
                hits_of(simd, blocks, grid, batch, first + i, |rect, _| {
                    *hits += 1;
                    per_rect[rect] += 1;
                });
            }
        };
        let chunk = chunk_len(
            batch.segments.len(),
            work_per_segment(batch.rects, grid),
            self.threads,
        );
        self.counts_in_chunks(chunk, counts, count_in);
    }

    /// Runs `count_in(first segment, its chunk of per-segment counts, per-rect counts)` over
    /// chunks of `chunk` segments on the pool, each task with per-rect counts of its own, and
    /// adds those up into `counts.per_rect` (in order, into `counts.per_rect` itself, with one
    /// thread). Chunks not started once the call is cancelled are skipped.
    fn counts_in_chunks(
        &self,
        chunk: usize,
        counts: &mut Counts,
        count_in: impl Fn(usize, &mut [u32], &mut [u64]) + Sync,
    ) {
        if self.threads == 1 {
            for (c, per_segment) in counts.per_segment.chunks_mut(chunk.max(1)).enumerate() {
                if self.cancelled() {
                    return;
                }
                count_in(c * chunk, per_segment, &mut counts.per_rect);
            }
            return;
        }
        let rect_count = counts.per_rect.len();
        let per_segment = &mut counts.per_segment;
        let per_rect = Self::install(&self.pool, || {
            per_segment
                .par_chunks_mut(chunk)
                .enumerate()
                .fold(
                    || vec![0u64; rect_count],
                    |mut per_rect, (c, per_segment)| {
                        if !self.cancelled() {
                            count_in(c * chunk, per_segment, &mut per_rect);
                        }
                        per_rect
                    },
                )
                .reduce_with(|mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(a, b)| *a += b);
                    a
                })
        });
        if let Some(per_rect) = per_rect {
            counts.per_rect.copy_from_slice(&per_rect);
        }
    }

    /// [`crate::Engine::pairs_into`]: every pair, segment-major; `results` sized.
    pub(crate) fn pairs_dense(
        &mut self,
        segments: &[Segment],
        rects: &[Rect],
        results: &mut [PairResult],
    ) {
        if rects.is_empty() {
            return;
        }
        fill_blocks(rects, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let rows = |first: usize, rows: &mut [PairResult]| {
            for (i, row) in rows.chunks_exact_mut(rects.len()).enumerate() {
                row.fill(PairResult::MISS);
                let s = &segments[first + i];
                for_each_candidate(simd, s, blocks, |rect| {
                    row[rect] = segment_rect(s, &rects[rect]);
                });
            }
        };
        let chunk = chunk_len(segments.len(), rects.len(), self.threads);
        self.chunked(results, chunk, rects.len(), rows);
    }

    /// [`crate::Engine::shape_pairs`]: inputs valid, `out` one per (query, shape),
    /// query-major. The shapes' boxes ([`Shape::bounds`]) are culled sixteen at a time as the
    /// rect path culls rects, and the pairs left go through the shape's lane filter
    /// ([`Shape::hit_lanes`]); each pair it does not rule out goes through [`Shape::filtered`],
    /// the scalar reference where that cannot certify. Rows spread over the threads.
    pub(crate) fn shape_pairs_dense<S: Shape>(
        &mut self,
        queries: &[Segment],
        shapes: &[S],
        out: &mut [S::Contact],
    ) {
        if shapes.is_empty() {
            return;
        }
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let simd = self.simd;
        let (layout, filter) = ShapeLayout::with_filter(simd, &bounds, |simd, order| {
            LaneFilter::of(simd, shapes, order)
        });
        let (layout, filter) = (&layout, filter.as_ref());
        let rows = |first: usize, rows: &mut [S::Contact]| {
            let mut candidates = Candidates::new(layout.blocks.len(), filter);
            for (i, row) in rows.chunks_exact_mut(shapes.len()).enumerate() {
                row.fill(S::MISS);
                let query = &queries[first + i];
                collect_candidates(simd, query, layout, filter, &mut candidates, AppendAll);
                candidates.sieve(query, filter, |k, _| {
                    let shape = &shapes[k];
                    row[k] = S::filtered(query, shape).unwrap_or_else(|| S::exact(query, shape));
                });
            }
        };
        let chunk = chunk_len(queries.len(), shapes.len(), self.threads);
        self.chunked(out, chunk, shapes.len(), rows);
    }

    /// [`crate::Engine::polygon_pairs`]: every query against every polygon, `out` query-major.
    /// `edges` are the polygons' edges in order ([`crate::cpu::segment_polygon::polygon_edges`]),
    /// polygon i's from `offsets[i]`. Polygons are culled by box sixteen at a time; each edge of
    /// one left goes through [`edge_filtered`], and [`polygon_contact`] gathers them.
    pub(crate) fn polygon_pairs_dense(
        &mut self,
        queries: &[Segment],
        edges: &[PolygonEdge],
        offsets: &[u32],
        out: &mut [PolygonContact],
    ) {
        let polygons = offsets.len() - 1;
        if polygons == 0 {
            return;
        }
        let bounds: Vec<Rect> = (0..polygons)
            .map(|i| edges[offsets[i] as usize].polygon)
            .collect();
        fill_blocks(&bounds, &mut self.blocks);
        let (simd, blocks) = (self.simd, &self.blocks[..]);
        let rows = |first: usize, rows: &mut [PolygonContact]| {
            let mut contacts = Vec::new();
            for (i, row) in rows.chunks_exact_mut(polygons).enumerate() {
                row.fill(PolygonContact::MISS);
                let query = &queries[first + i];
                for_each_candidate(simd, query, blocks, |k| {
                    let edges = &edges[offsets[k] as usize..offsets[k + 1] as usize];
                    row[k] = polygon_filtered(query, edges, &mut contacts);
                });
            }
        };
        let chunk = chunk_len(queries.len(), edges.len(), self.threads);
        self.chunked(out, chunk, polygons, rows);
    }

    /// The hitting pairs of `segments` against shapes whose closed boxes are `bounds`, a chunk
    /// of segments at a time, in (segment, shape) order: `each(the chunk's hits)`, segment
    /// indices counted from the first segment of the call. Each segment's candidates come from
    /// `grid` (a grid over `bounds`) where its walk pays, else from the SIMD box cull, go
    /// through `filter` (the shapes' lane filter, when they have one), and each one left goes
    /// through `contact`. Memory follows the hits of a chunk, never segments × shapes.
    pub(crate) fn shape_hit_chunks<C: ShapeContact>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        mut each: impl FnMut(&[ShapeHit<C>]),
    ) {
        let simd = self.simd;
        let (layout, filter) = ShapeLayout::with_filter(simd, bounds, filter);
        let (layout, filter) = (&layout, filter.as_ref());
        let rows = |first: usize, part: &[Segment]| {
            let mut hits = Vec::new();
            let mut row: Vec<(u32, C)> = Vec::new();
            let mut candidates = Candidates::new(layout.blocks.len(), filter);
            for (i, s) in part.iter().enumerate() {
                row.clear();
                shape_candidates(simd, layout, grid, s, filter, &mut candidates, AppendAll);
                candidates.sieve(s, filter, |k, _| {
                    let c = contact(s, k);
                    if c.hit() {
                        row.push((k as u32, c));
                    }
                });
                // The candidates come in the walk's or the layout's order; rows in shape order.
                row.sort_unstable_by_key(|&(k, _)| k);
                let segment = (first + i) as u32;
                hits.extend(row.iter().map(|&(shape, contact)| ShapeHit {
                    segment,
                    shape,
                    contact,
                }));
            }
            hits
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        // A few tasks per thread in each call of `each`.
        let call = chunk * self.threads * 8;
        let mut buffer = Vec::new();
        for (c, calls) in segments.chunks(call.max(1)).enumerate() {
            if self.cancelled() {
                return;
            }
            let first = c * call;
            let parts: Vec<Vec<ShapeHit<C>>> = if self.threads == 1 {
                vec![rows(first, calls)]
            } else {
                Self::install(&self.pool, || {
                    calls
                        .par_chunks(chunk)
                        .enumerate()
                        .map(|(k, part)| rows(first + k * chunk, part))
                        .collect()
                })
            };
            buffer.clear();
            for part in parts {
                buffer.extend(part);
            }
            each(&buffer);
        }
    }

    /// Hits per segment and per shape (`counts`, sized and zeroed) of `segments` against
    /// shapes whose closed boxes are `bounds`: the candidates of [`CpuKernel::shape_hit_chunks`]
    /// through `filter`; a pair it certifies is counted as it stands, and only the pairs it
    /// cannot tell go through `hit`. Nothing is listed.
    pub(crate) fn shape_counts_listed(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        hit: impl Fn(&Segment, usize) -> bool + Sync,
        counts: &mut Counts,
    ) {
        let simd = self.simd;
        let (layout, filter) = ShapeLayout::with_filter(simd, bounds, filter);
        let (layout, filter) = (&layout, filter.as_ref());
        let count_in = |first: usize, per_segment: &mut [u32], per_shape: &mut [u64]| {
            let mut candidates = Candidates::new(layout.blocks.len(), filter);
            // Certain hits of the blocks answered in place, by place in the layout.
            let mut per_place = vec![[0u32; LANES]; layout.blocks.len()];
            for (i, hits) in per_segment.iter_mut().enumerate() {
                let s = &segments[first + i];
                let in_place = match filter {
                    Some(filter) => {
                        let mut dense = CountInPlace {
                            filter,
                            layout,
                            query: s,
                            per_place: &mut per_place,
                            per_shape,
                            hit: |k| hit(s, k),
                            hits: 0,
                        };
                        shape_candidates(
                            simd,
                            layout,
                            grid,
                            s,
                            Some(filter),
                            &mut candidates,
                            &mut dense,
                        );
                        dense.hits
                    }
                    None => {
                        shape_candidates(simd, layout, grid, s, None, &mut candidates, AppendAll);
                        0
                    }
                };
                *hits += in_place + candidates.count(s, filter, per_shape, |k| hit(s, k));
            }
            for (&k, &count) in layout.order.iter().zip(per_place.iter().flatten()) {
                per_shape[k as usize] += count as u64;
            }
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        self.counts_in_chunks(chunk, counts, count_in);
    }

    /// Each segment's first hit among shapes whose closed boxes are `bounds` (the smallest
    /// `t_enter`, the lowest shape on a tie), `first` one per segment: as
    /// [`CpuKernel::shape_hit_chunks`], but the grid's walk stops at the first row boundary
    /// the best hit so far is certainly before (every shape not visited yet meets the segment
    /// only past that boundary, so its rounded t cannot be smaller, nor tie), and a candidate
    /// whose box the segment enters after the best hit is skipped. The best is the smallest
    /// (t, shape) of the candidates answered, whatever their order, so the lane filter's
    /// batches of sixteen change only how soon the pruning starts.
    pub(crate) fn shape_first_hits_listed<C: ShapeContact>(
        &mut self,
        segments: &[Segment],
        bounds: &[Rect],
        grid: Option<&Grid>,
        filter: impl FnOnce(Simd, &[u32]) -> Option<LaneFilter>,
        contact: impl Fn(&Segment, usize) -> C + Sync,
        first: &mut [Option<ShapeHit<C>>],
    ) {
        let simd = self.simd;
        let (layout, filter) = ShapeLayout::with_filter(simd, bounds, filter);
        let (layout, filter) = (&layout, filter.as_ref());
        let rows = |start: usize, part: &mut [Option<ShapeHit<C>>]| {
            let mut candidates = Candidates::new(layout.blocks.len(), filter);
            for (i, slot) in part.iter_mut().enumerate() {
                let s = &segments[start + i];
                let best = std::cell::Cell::new(None::<(u32, C)>);
                let visit = |k: usize, _: bool| {
                    // A shape lies in its box: one whose box the segment enters after the best
                    // hit cannot come first, nor tie (best-first pruning, exact).
                    let now = best.get();
                    if now.is_some_and(|(_, bc)| box_t_below(s, &bounds[k]) > bc.t_enter()) {
                        return;
                    }
                    let c = contact(s, k);
                    let k = k as u32;
                    let (best_shape, best_contact) = now.unwrap_or((NO_SHAPE, c));
                    if comes_first(&c, k, &best_contact, best_shape) {
                        best.set(Some((k, c)));
                    }
                };
                match grid.map(|g| (g, walk_of(g, s))) {
                    Some((grid, walk))
                        if !prefers_brute_force(
                            grid,
                            s,
                            &walk,
                            brute_force_cost(bounds.len(), filter),
                        ) =>
                    {
                        let no_ceiling = std::cell::Cell::new(u32::MAX);
                        visit_cells(grid, s, &walk, &no_ceiling, |step| match step {
                            Step::Rect(k) => {
                                candidates.push(k as usize, filter);
                                Next::Entry
                            }
                            Step::Row(bound) => {
                                // Every candidate before this boundary answered first.
                                candidates.sieve(s, filter, visit);
                                let done = best
                                    .get()
                                    .is_some_and(|(_, c)| c.t_enter() < row_t_below(s, bound));
                                if done { Next::Stop } else { Next::Entry }
                            }
                        });
                    }
                    _ => collect_candidates(simd, s, layout, filter, &mut candidates, AppendAll),
                }
                candidates.sieve(s, filter, visit);
                let segment = (start + i) as u32;
                *slot = best.get().map(|(shape, contact)| ShapeHit {
                    segment,
                    shape,
                    contact,
                });
            }
        };
        let chunk = chunk_len(segments.len(), work_per_segment(bounds, grid), self.threads);
        self.chunked(first, chunk, 1, rows);
    }

    /// [`crate::Engine::pair_list`]: indices in range, `results` one per pair.
    pub(crate) fn pairs_list(
        &self,
        segments: &[Segment],
        rects: &[Rect],
        pairs: &[PairIndex],
        results: &mut [PairResult],
    ) {
        let one = |(pair, result): (&PairIndex, &mut PairResult)| {
            *result = segment_rect(&segments[pair.segment as usize], &rects[pair.rect as usize]);
        };
        if self.threads == 1 {
            pairs.iter().zip(results.iter_mut()).for_each(one);
            return;
        }
        Self::install(&self.pool, || {
            pairs
                .par_iter()
                .zip(results.par_iter_mut())
                .with_min_len(4096)
                .for_each(one)
        });
    }

    /// [`crate::Engine::clip`]: the reference's `clip`, split across threads.
    pub(crate) fn clip(&self, segments: &[Segment], rects: &[Rect], first_hits: &mut [FirstHit]) {
        if self.threads == 1 || segments.len() < 4096 {
            super::queries::clip(segments, rects, first_hits);
            return;
        }
        let chunk = segments.len().div_ceil(self.threads * 8).max(4096);
        Self::install(&self.pool, || {
            first_hits
                .par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(c, out)| {
                    let at = c * chunk;
                    let segments = &segments[at..at + out.len()];
                    let rects = if rects.len() == 1 {
                        rects
                    } else {
                        &rects[at..at + out.len()]
                    };
                    super::queries::clip(segments, rects, out);
                })
        });
    }
}

/// An f32 at or below the correctly rounded t at which `s` crosses the line y = `bound` (which
/// it does, at some t > 0): the quotient in f64 is within 3 · 2^-53 of the exact one (two
/// differences of f32 values and a division), so lowering it by 2^-50 and rounding down is
/// safe, and rounding to nearest is monotone.
fn row_t_below(s: &Segment, bound: f32) -> f32 {
    let (y0, y1) = (s.y0 as f64, s.y1 as f64);
    let t = (bound as f64 - y0) / (y1 - y0) * (1.0 - 2f64.powi(-50));
    let f = t as f32;
    if f as f64 > t { f.next_down() } else { f }
}

/// An f32 at or below the correctly rounded t at which `s` first meets box `b` (0 when it
/// starts in it): each axis's entering t in f64 is within 3 · 2^-53 of the exact one, lowered
/// by 2^-50 and rounded down. Every point of the box on the segment is at that t or later.
fn box_t_below(s: &Segment, b: &Rect) -> f32 {
    let entering = |p0: f32, p1: f32, lo: f32, hi: f32| {
        let d = p1 as f64 - p0 as f64;
        if d > 0.0 {
            (lo as f64 - p0 as f64) / d
        } else if d < 0.0 {
            (hi as f64 - p0 as f64) / d
        } else {
            f64::NEG_INFINITY
        }
    };
    let t = entering(s.x0, s.x1, b.min_x, b.max_x).max(entering(s.y0, s.y1, b.min_y, b.max_y));
    if t <= 0.0 {
        return 0.0;
    }
    let t = t * (1.0 - 2f64.powi(-50));
    let f = t as f32;
    if f as f64 > t { f.next_down() } else { f }
}

// The shapes' filters moved to their shapes' folders (`cpu::segment_segment::filters`, ...);
// their old names here are kept, deprecated, for one release.

#[deprecated(note = "moved to rectcast::cpu::segment_polygon::filters::edge_filtered")]
pub fn edge_filtered(query: &Segment, edge: &PolygonEdge) -> Option<EdgeContact> {
    super::segment_polygon::filters::edge_filtered(query, edge)
}

#[deprecated(note = "moved to rectcast::cpu::segment_segment::filters::contact_filtered")]
pub fn contact_filtered(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    super::segment_segment::filters::contact_filtered(query, wall)
}

#[deprecated(note = "moved to rectcast::cpu::segment_segment::filters::wall_hit")]
pub fn wall_hit(query: &Segment, wall: &Segment) -> bool {
    super::segment_segment::filters::wall_hit(query, wall)
}

#[deprecated(note = "moved to rectcast::cpu::segment_segment::filters::certain_cross_f32")]
pub fn certain_cross_f32(ux: f32, uy: f32, vx: f32, vy: f32) -> (bool, bool) {
    super::segment_segment::filters::certain_cross_f32(ux, uy, vx, vy)
}

#[deprecated(note = "moved to rectcast::cpu::segment_segment::filters::wall_hit_lanes")]
pub fn wall_hit_lanes(query: &Segment, walls: &HitLanes) -> LaneVerdicts {
    super::segment_segment::filters::wall_hit_lanes(query, walls)
}

#[deprecated(note = "moved to rectcast::cpu::segment_circle::filters::circle_filtered")]
pub fn circle_filtered(query: &Segment, circle: &Circle) -> Option<CircleContact> {
    super::segment_circle::filters::circle_filtered(query, circle)
}

#[deprecated(note = "moved to rectcast::cpu::segment_circle::filters::circle_hit_lanes")]
pub fn circle_hit_lanes(query: &Segment, circles: &HitLanes) -> LaneVerdicts {
    super::segment_circle::filters::circle_hit_lanes(query, circles)
}
