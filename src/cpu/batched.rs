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
use super::lanes::{Candidates, HIT_LANES, HitLanes, LaneFilter, LaneVerdicts};
use super::queries::{Entry, compare_entries, entry_of, is_closer, is_tested};
use super::segment_circle::{CircleContact, CircleKind};
use super::segment_polygon::{
    EdgeContact, PolygonContact, PolygonEdge, edge_ends, polygon_contact,
};
use super::segment_rect::AXIS_Y;
use super::segment_rect::{pair_flags, pair_times, segment_rect};
use super::segment_segment::{SegmentContact, segment_segment};
use super::shape_queries::{NO_SHAPE, comes_first};
use crate::query::{Batch, Counts};
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::types::{Circle, Filter, FirstHit, Hit, PairIndex, PairResult, Rect, Segment, flags};

/// Rects per block: one AVX-512 register, two AVX2 ones.
pub const LANES: usize = 16;

/// Blocks whose masks one SIMD call computes (the caller's stack buffer holds as many).
const SPAN: usize = 64;

/// The instruction set the cull runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Simd {
    /// x86-64 AVX-512F: 16 lanes, compares into mask registers.
    Avx512,
    /// x86-64 AVX2: two 8-lane halves per block.
    Avx2,
    /// Plain Rust that LLVM vectorises for the build's baseline (SSE2 on x86-64, NEON on
    /// aarch64).
    Portable,
}

impl Simd {
    /// The best level this CPU runs, detected at run time: no `target-cpu=native` needed.
    pub fn detect() -> Self {
        Self::available()[0]
    }

    /// Every level this CPU runs, best first; [`Simd::Portable`] always.
    pub fn available() -> Vec<Self> {
        [Self::Avx512, Self::Avx2, Self::Portable]
            .into_iter()
            .filter(|s| s.is_supported())
            .collect()
    }

    /// Whether this CPU runs the level.
    pub fn is_supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            Self::Portable => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512",
            Self::Avx2 => "avx2",
            Self::Portable => "portable",
        }
    }
}

impl std::fmt::Display for Simd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
    super::lanes::mask_of(&overlap)
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

/// Shewchuk's bound on the error of `l − r`, for `l` and `r` products of two differences of
/// exact values, each difference rounded once, all in f64: `(3 + 16u)·u·(|l| + |r|)`, u = 2^-53.
const CROSS_ERROR: f64 = (3.0 + 16.0 * (f64::EPSILON / 2.0)) * (f64::EPSILON / 2.0);

/// `a × b` in f64 and its error bound, when its sign is certain (|value| above the bound).
fn certain_cross(ax: f64, ay: f64, bx: f64, by: f64) -> Option<(f64, f64)> {
    let (l, r) = (ax * by, ay * bx);
    let value = l - r;
    let bound = CROSS_ERROR * (l.abs() + r.abs());
    (value.abs() > bound).then_some((value, bound))
}

/// `x − y`, when f64 holds it exactly (TwoSum's error is zero).
fn exact_sub(x: f64, y: f64) -> Option<f64> {
    let s = x - y;
    let z = s - x;
    let error = (x - (s - z)) + (-y - z);
    (error == 0.0).then_some(s)
}

/// `a × b`, when f64 holds both products and their difference exactly (a product's error,
/// which a fused multiply-add gives exactly, is zero).
fn exact_cross(ax: f64, ay: f64, bx: f64, by: f64) -> Option<f64> {
    let (l, r) = (ax * by, ay * bx);
    if ax.mul_add(by, -l) != 0.0 || ay.mul_add(bx, -r) != 0.0 {
        return None;
    }
    exact_sub(l, r)
}

/// The answer where `d × e` is 0 or too small to be certain, for the cases floating point can
/// still certify: two points (equal or not), a point certainly off the other segment's line,
/// and segments that f64 computes exactly to lie on parallel lines apart (axis-aligned and
/// equal-slope segments on a grid). `None` otherwise (collinear, or not exact in f64).
/// Boxes meet (the caller checked).
fn parallel_apart(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    let f = |v: f32| v as f64;
    let point = |s: &Segment| s.x0 == s.x1 && s.y0 == s.y1;
    match (point(query), point(wall)) {
        // Two points whose boxes meet (the caller checked): the same point. They touch, every
        // t of the query naming it.
        (true, true) => {
            return Some(SegmentContact {
                t_enter: 0.0,
                t_exit: 1.0,
                contact: crate::cpu::segment_segment::Contact::Touch.code(),
            });
        }
        // A point off the other's line, certainly: a miss.
        (true, false) | (false, true) => {
            let (p, s) = if point(query) {
                (query, wall)
            } else {
                (wall, query)
            };
            let off = certain_cross(
                f(p.x0) - f(s.x0),
                f(p.y0) - f(s.y0),
                f(s.x1) - f(s.x0),
                f(s.y1) - f(s.y0),
            );
            return off.map(|_| SegmentContact::MISS);
        }
        (false, false) => {}
    }
    let (dx, dy) = (
        exact_sub(f(query.x1), f(query.x0))?,
        exact_sub(f(query.y1), f(query.y0))?,
    );
    let (ex, ey) = (
        exact_sub(f(wall.x1), f(wall.x0))?,
        exact_sub(f(wall.y1), f(wall.y0))?,
    );
    if (dx == 0.0 && dy == 0.0) || (ex == 0.0 && ey == 0.0) || exact_cross(dx, dy, ex, ey)? != 0.0 {
        return None;
    }
    let (wx, wy) = (
        exact_sub(f(wall.x0), f(query.x0))?,
        exact_sub(f(wall.y0), f(query.y0))?,
    );
    (exact_cross(wx, wy, dx, dy)? != 0.0).then_some(SegmentContact::MISS)
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

/// [`crate::segment_polygon`]'s answer for one polygon (its edges, in order), through
/// [`edge_filtered`]; `contacts` is scratch space.
pub(crate) fn polygon_filtered(
    query: &Segment,
    edges: &[PolygonEdge],
    contacts: &mut Vec<EdgeContact>,
) -> PolygonContact {
    contacts.clear();
    contacts.extend(
        edges
            .iter()
            .map(|e| edge_filtered(query, e).expect("always certain")),
    );
    polygon_contact(query, edges, contacts)
}

/// [`crate::polygon_edge`]'s answer, always certain: the ends' orientations are exact signs of
/// f32 points in f64 (`robust`), and the contact is [`contact_filtered`]'s, or the exact
/// function's where that cannot tell. The same comparisons as the kernel, on plain floats (the
/// CPU compares f32 values exactly).
pub fn edge_filtered(query: &Segment, edge: &PolygonEdge) -> Option<EdgeContact> {
    let b = &edge.polygon;
    let apart = |v0: f32, v1: f32, lo: f32, hi: f32| (v0 < lo && v1 < lo) || (v0 > hi && v1 > hi);
    if apart(query.x0, query.x1, b.min_x, b.max_x) || apart(query.y0, query.y1, b.min_y, b.max_y) {
        return Some(EdgeContact::MISS);
    }
    let e = &edge.edge;
    let (lo_x, hi_x) = (e.x0.min(e.x1), e.x0.max(e.x1));
    let (lo_y, hi_y) = (e.y0.min(e.y1), e.y0.max(e.y1));
    let coord = |x: f32, y: f32| robust::Coord {
        x: x as f64,
        y: y as f64,
    };
    let mut ends = 0;
    for (k, (x, y)) in [(query.x0, query.y0), (query.x1, query.y1)]
        .into_iter()
        .enumerate()
    {
        let shift = edge_ends::END_SHIFT * k as u32;
        let straddles = (e.y0 > y) != (e.y1 > y);
        if lo_x <= x && x <= hi_x && lo_y <= y && y <= hi_y {
            let orientation = robust::orient2d(coord(e.x0, e.y0), coord(e.x1, e.y1), coord(x, y));
            if orientation == 0.0 {
                ends |= edge_ends::START_ON << shift;
            } else if straddles && (e.y1 > y) != (orientation < 0.0) {
                ends |= edge_ends::START_RAY << shift;
            }
        } else if straddles && x < lo_x {
            ends |= edge_ends::START_RAY << shift;
        }
    }
    let contact = if apart(query.x0, query.x1, lo_x, hi_x) || apart(query.y0, query.y1, lo_y, hi_y)
    {
        SegmentContact::MISS
    } else {
        contact_filtered(query, e).unwrap_or_else(|| segment_segment(query, e))
    };
    Some(EdgeContact {
        t_enter: contact.t_enter,
        t_exit: contact.t_exit,
        contact: contact.contact,
        ends,
    })
}

/// [`crate::segment_segment`]'s answer where floating point certifies it, `None` where only its
/// exact integers can tell. f32 values are exact in f64 and no product of the valid domain
/// overflows or loses precision to underflow (|v| ≤ 2^62, v a multiple of 2^-149), so each
/// cross product's sign is certain past Shewchuk's bound. What is certified: boxes apart (a
/// miss); of two segments whose lines' `d × e` is certain, a miss as soon as one of the four
/// cross products that place the crossing against an end is certain and on the far side, and
/// a proper crossing when all four are certain and inside, with t certain when both ends of its
/// interval round to the same f32. Everything else (parallels, touches, ends on a line, t near
/// a rounding boundary) takes the exact path, but for points and parallel lines apart
/// (`parallel_apart`).
pub fn contact_filtered(query: &Segment, wall: &Segment) -> Option<SegmentContact> {
    // Boxes apart: plain comparisons of the inputs, exact.
    if query.x0.max(query.x1) < wall.x0.min(wall.x1)
        || wall.x0.max(wall.x1) < query.x0.min(query.x1)
        || query.y0.max(query.y1) < wall.y0.min(wall.y1)
        || wall.y0.max(wall.y1) < query.y0.min(query.y1)
    {
        return Some(SegmentContact::MISS);
    }
    let (p0x, p0y) = (query.x0 as f64, query.y0 as f64);
    let (p1x, p1y) = (query.x1 as f64, query.y1 as f64);
    let (q0x, q0y) = (wall.x0 as f64, wall.y0 as f64);
    let (q1x, q1y) = (wall.x1 as f64, wall.y1 as f64);
    let (dx, dy) = (p1x - p0x, p1y - p0y);
    let (ex, ey) = (q1x - q0x, q1y - q0y);
    // den = d × e; the crossing at t = a / den, u = b / den; den − a = (p1 − q0) × e and
    // den − b = d × (q1 − p0) place it against the far ends.
    let Some((den, den_bound)) = certain_cross(dx, dy, ex, ey) else {
        return parallel_apart(query, wall);
    };
    let a = certain_cross(q0x - p0x, q0y - p0y, ex, ey);
    let b = certain_cross(q0x - p0x, q0y - p0y, dx, dy);
    let den_a = certain_cross(p1x - q0x, p1y - q0y, ex, ey);
    let den_b = certain_cross(dx, dy, q1x - p0x, q1y - p0y);
    let positive = den > 0.0;
    let sides = [a, b, den_a, den_b];
    // One certain side past an end is a miss, whatever the others (an end on the other's
    // line, uncertain, often lies beyond the other segment).
    if sides.iter().flatten().any(|&(v, _)| (v > 0.0) != positive) {
        return Some(SegmentContact::MISS);
    }
    if sides.iter().any(Option::is_none) {
        return None;
    }
    let (a, a_bound) = a?;
    // 0 < t < 1 and 0 < u < 1: a proper crossing. t = |a| / |den| within the bounds, each
    // quotient widened for its own rounding.
    let (a, den) = (a.abs(), den.abs());
    let low = (a - a_bound) / (den + den_bound) * (1.0 - 4.0 * f64::EPSILON);
    let high = (a + a_bound) / (den - den_bound) * (1.0 + 4.0 * f64::EPSILON);
    let t = low as f32;
    (t == high as f32).then_some(SegmentContact {
        t_enter: t,
        t_exit: t,
        contact: crate::cpu::segment_segment::Contact::Cross.code(),
    })
}

/// [`segment_segment`]'s hit alone, exact and without t: the boxes meet, and neither segment
/// has both ends strictly on one side of the other's line, the four orientations being exact
/// signs of f32 points in f64 (`robust`). When all four are zero the segments lie on one line
/// (or are points on it), and their boxes meeting is their meeting; when some but not all are
/// zero, the ends on a line are the common point.
pub fn wall_hit(query: &Segment, wall: &Segment) -> bool {
    if query.x0.max(query.x1) < wall.x0.min(wall.x1)
        || wall.x0.max(wall.x1) < query.x0.min(query.x1)
        || query.y0.max(query.y1) < wall.y0.min(wall.y1)
        || wall.y0.max(wall.y1) < query.y0.min(query.y1)
    {
        return false;
    }
    let point = |x: f32, y: f32| robust::Coord {
        x: x as f64,
        y: y as f64,
    };
    let (p0, p1) = (point(query.x0, query.y0), point(query.x1, query.y1));
    let (q0, q1) = (point(wall.x0, wall.y0), point(wall.x1, wall.y1));
    let one_side = |a: f64, b: f64| (a > 0.0 && b > 0.0) || (a < 0.0 && b < 0.0);
    !one_side(robust::orient2d(p0, p1, q0), robust::orient2d(p0, p1, q1))
        && !one_side(robust::orient2d(q0, q1, p0), robust::orient2d(q0, q1, p1))
}

/// Shewchuk's bound for a 2 × 2 determinant of differences of exact inputs, in f32:
/// `(3 + 16u)·u·(|l| + |r|)`, u = 2^-24.
const CROSS_ERROR_F32: f32 = (3.0 + 16.0 * (f32::EPSILON / 2.0)) * (f32::EPSILON / 2.0);

/// What gradual underflow can add to that bound in f32: a product that goes subnormal is off
/// by at most 2^-150 absolute (differences and sums that go subnormal are exact), so two
/// products and their difference by well under 2^-120.
const UNDERFLOW_F32: f32 = 1.0 / (1u128 << 120) as f32;

/// Whether `u × v` (two differences of f32 inputs, each rounded once) is certainly positive,
/// and whether certainly negative, in f32: past Shewchuk's bound plus `UNDERFLOW_F32`.
#[inline(always)]
pub fn certain_cross_f32(ux: f32, uy: f32, vx: f32, vy: f32) -> (bool, bool) {
    let (l, r) = (ux * vy, uy * vx);
    let value = l - r;
    let bound = CROSS_ERROR_F32 * (l.abs() + r.abs()) + UNDERFLOW_F32;
    (value > bound, value < -bound)
}

/// [`contact_filtered`]'s hit alone, for sixteen walls ([`Shape::hit_lanes`]; lanes x0, y0, x1,
/// y1), in f32: the four cross products that place each segment's ends against the other's
/// line, each certain past Shewchuk's bound for f32 plus `UNDERFLOW_F32` (inputs exact,
/// differences rounded once; |v| ≤ 2^62 keeps every product below 2^126 and every sum below
/// 2^127, so nothing overflows). A certain miss: both ends of one segment strictly on one side
/// of the other's line. A certain hit: both pairs of ends strictly apart, a proper crossing.
/// Anything else (an end on a line, parallels, a point, products lost to underflow) is left to
/// the exact path. f32 rather than f64: half the vector width for the same verdicts, but for
/// the few pairs whose orientations f32 cannot certify.
#[inline(always)]
pub fn wall_hit_lanes(query: &Segment, walls: &HitLanes) -> LaneVerdicts {
    let [x0, y0, x1, y1] = &walls.values;
    let (px, py, rx, ry) = (query.x0, query.y0, query.x1, query.y1);
    let (dx, dy) = (rx - px, ry - py);
    let sign = certain_cross_f32;
    let mut hit = [false; HIT_LANES];
    let mut unsure = [false; HIT_LANES];
    for lane in 0..HIT_LANES {
        let (ax, ay, bx, by) = (x0[lane], y0[lane], x1[lane], y1[lane]);
        let (ex, ey) = (bx - ax, by - ay);
        // The wall's ends against the query's line, the query's ends against the wall's.
        let (p1, n1) = sign(dx, dy, ax - px, ay - py);
        let (p2, n2) = sign(dx, dy, bx - px, by - py);
        let (p3, n3) = sign(ex, ey, px - ax, py - ay);
        let (p4, n4) = sign(ex, ey, rx - ax, ry - ay);
        let miss = (p1 & p2) | (n1 & n2) | (p3 & p4) | (n3 & n4);
        let cross = ((p1 & n2) | (n1 & p2)) & ((p3 & n4) | (n3 & p4));
        hit[lane] = cross;
        unsure[lane] = !(miss | cross);
    }
    LaneVerdicts { hit, unsure }
}

/// Half an ulp of 1.0 in f64: the unit of the circle filter's error bounds.
const HALF_ULP: f64 = f64::EPSILON / 2.0;

/// The sign of a value computed with at most `bound` error, when certain: `Some(value > 0)`.
fn certain_sign(value: f64, bound: f64) -> Option<bool> {
    (value.abs() > bound).then_some(value > 0.0)
}

/// A lower bound of the exact `a − b` from its f64 rounding `d` (off by at most u·|d|).
fn below(d: f64) -> f64 {
    d - d.abs() * 2f64.powi(-50)
}

/// What the circle filter knows of a query: f = p0 − c and d = p1 − p0, each rounded once
/// from exact f32 values, and R².
struct CircleFrame {
    f: [f64; 2],
    d: [f64; 2],
    rr: f64,
}

impl CircleFrame {
    /// The side of the root (the entering one, or the `upper` one) that `m` lies on, when
    /// certain: the mirror of `root_side` in f64. G = f + m·d is off by at most 5u·S per
    /// axis (S = |f| + |m·d|), so q(m) = |G|² − R² by at most 16u·(ΣS² + R²) and q′(m)/2 =
    /// d · G by at most 12u·Σ|d|·S.
    fn side(&self, m: f64, upper: bool) -> Option<i32> {
        let mut q = -self.rr;
        let mut q_bound = self.rr;
        let mut slope = 0.0;
        let mut slope_bound = 0.0;
        for axis in 0..2 {
            let (f, d) = (self.f[axis], self.d[axis]);
            let g = f + m * d;
            let s = f.abs() + (m * d).abs();
            q += g * g;
            q_bound += s * s;
            slope += d * g;
            slope_bound += d.abs() * s;
        }
        let q = certain_sign(q, 16.0 * HALF_ULP * q_bound);
        let slope = certain_sign(slope, 12.0 * HALF_ULP * slope_bound);
        match (q?, upper) {
            (false, false) => Some(1),
            (false, true) => Some(-1),
            // Outside the disk: which side of the vertex tells the roots apart.
            (true, false) => Some(if slope? { 1 } else { -1 }),
            (true, true) => Some(if slope? { 1 } else { -1 }),
        }
    }

    /// `estimate` as the root's correctly rounded f32, when the midpoints to both of its
    /// neighbours certainly lie on either side of the root.
    fn certify(&self, estimate: f64, upper: bool) -> Option<f32> {
        let t = (estimate as f32).clamp(0.0, 1.0);
        let bits = t.to_bits();
        let previous = if bits == 0 {
            -f32::from_bits(1)
        } else {
            f32::from_bits(bits - 1)
        };
        let next = f32::from_bits(bits + 1);
        let low = (previous as f64 + t as f64) / 2.0;
        let high = (t as f64 + next as f64) / 2.0;
        (self.side(low, upper)? == -1 && self.side(high, upper)? == 1).then_some(t)
    }
}

/// [`crate::segment_circle`]'s answer where floating point certifies it, `None` where only
/// its exact integers can tell. In f64, from f32 inputs: the boxes of the segment and the disk
/// apart (a miss); the signs of q(0) and q(1) (ends in or out), of the discriminant
/// (R²·|d|² − (f × d)²) and of q′ at the ends (where the vertex lies), each past its error
/// bound; each t a root estimate certified by the sides of the midpoints to its neighbours.
/// Tangents, ends on the circle and t near a rounding boundary take the exact path.
pub fn circle_filtered(query: &Segment, circle: &Circle) -> Option<CircleContact> {
    let f = |v: f32| v as f64;
    let (cx, cy, r) = (f(circle.cx), f(circle.cy), f(circle.r));
    let (x0, y0, x1, y1) = (f(query.x0), f(query.y0), f(query.x1), f(query.y1));
    // Boxes apart, against lower bounds of the exact box edges.
    if x0.max(x1) < below(cx - r)
        || -x0.min(x1) < below(-cx - r)
        || y0.max(y1) < below(cy - r)
        || -y0.min(y1) < below(-cy - r)
    {
        return Some(CircleContact::MISS);
    }
    let frame = CircleFrame {
        f: [x0 - cx, y0 - cy],
        d: [x1 - x0, y1 - y0],
        rr: r * r,
    };
    let [fx, fy] = frame.f;
    let [dx, dy] = frame.d;
    let (gx, gy) = (x1 - cx, y1 - cy);
    let rr = frame.rr;
    // q(0) and q(1): each |·|² − R², off by at most 8u of its terms' magnitudes.
    let start_out = certain_sign(
        fx * fx + fy * fy - rr,
        8.0 * HALF_ULP * (fx * fx + fy * fy + rr),
    )?;
    let end_out = certain_sign(
        gx * gx + gy * gy - rr,
        8.0 * HALF_ULP * (gx * gx + gy * gy + rr),
    )?;
    if !start_out && !end_out {
        return Some(CircleContact {
            t_enter: 0.0,
            t_exit: 1.0,
            kind: CircleKind::Inside.code(),
        });
    }
    if dx == 0.0 && dy == 0.0 {
        // A point (f64 subtraction of f32 values is 0 only for equal ones) outside.
        return Some(CircleContact::MISS);
    }
    let dd = dx * dx + dy * dy;
    let fd = fx * dx + fy * dy;
    let cross = fx * dy - fy * dx;
    let cross_bound = 8.0 * HALF_ULP * ((fx * dy).abs() + (fy * dx).abs());
    let kind = match (start_out, end_out) {
        (false, _) => CircleKind::Exit,
        (true, false) => CircleKind::Enter,
        (true, true) => {
            // The discriminant R²·|d|² − (f × d)², from |f × d| within its bound and |d|²
            // within 4u.
            let (far, near) = (
                (cross.abs() - cross_bound).max(0.0),
                cross.abs() + cross_bound,
            );
            if far * far > rr * dd * (1.0 + 16.0 * HALF_ULP) {
                return Some(CircleContact::MISS);
            }
            // The vertex past an end: f · d ≥ 0 or g · d ≤ 0, certainly.
            let ahead = certain_sign(fd, 8.0 * HALF_ULP * ((fx * dx).abs() + (fy * dy).abs()));
            let gd = gx * dx + gy * dy;
            let behind = certain_sign(gd, 8.0 * HALF_ULP * ((gx * dx).abs() + (gy * dy).abs()));
            if ahead == Some(true) || behind == Some(false) {
                return Some(CircleContact::MISS);
            }
            if ahead != Some(false)
                || behind != Some(true)
                || near * near * (1.0 + 16.0 * HALF_ULP) >= rr * dd * (1.0 - 16.0 * HALF_ULP)
            {
                return None;
            }
            CircleKind::Cross
        }
    };
    // Root estimates, each without cancellation: t± = (−fd ± √D) / dd = q(0) / (−fd ∓ √D).
    let root = (rr * dd - cross * cross).max(0.0).sqrt();
    let start = fx * fx + fy * fy - rr;
    let mut t = [0.0f32, 1.0];
    if start_out {
        let estimate = if fd < 0.0 {
            start / (root - fd)
        } else {
            (-fd - root) / dd
        };
        t[0] = frame.certify(estimate, false)?;
    }
    if end_out {
        let estimate = if fd <= 0.0 {
            (root - fd) / dd
        } else {
            start / (-fd - root)
        };
        t[1] = frame.certify(estimate, true)?;
    }
    Some(CircleContact {
        t_enter: t[0],
        t_exit: t[1],
        kind: kind.code(),
    })
}

/// [`circle_filtered`]'s hit alone, for sixteen circles ([`Shape::hit_lanes`]; lanes cx, cy, r), with the same f64 values and error bounds: an end certainly in the disk is a hit; both
/// ends certainly out, a point, or the line certainly apart from the disk, or its nearest point
/// certainly past an end, a miss; both ends out, the nearest point certainly between them and
/// certainly within R, a hit. Tangents and ends on the circle are left to the exact path.
#[inline(always)]
pub fn circle_hit_lanes(query: &Segment, circles: &HitLanes) -> LaneVerdicts {
    let [cx, cy, r, _] = &circles.values;
    let (x0, y0) = (query.x0 as f64, query.y0 as f64);
    let (x1, y1) = (query.x1 as f64, query.y1 as f64);
    let (dx, dy) = (x1 - x0, y1 - y0);
    let dd = dx * dx + dy * dy;
    // f64 subtraction of f32 values is 0 only for equal ones.
    let point = dx == 0.0 && dy == 0.0;
    let mut hit = [false; HIT_LANES];
    let mut unsure = [false; HIT_LANES];
    for lane in 0..HIT_LANES {
        let (cx, cy, r) = (cx[lane] as f64, cy[lane] as f64, r[lane] as f64);
        let rr = r * r;
        let (fx, fy) = (x0 - cx, y0 - cy);
        let (gx, gy) = (x1 - cx, y1 - cy);
        // q(0) and q(1), each |·|² − R² within 8u of its terms' magnitudes.
        let (ff, gg) = (fx * fx + fy * fy, gx * gx + gy * gy);
        let (start_bound, end_bound) = (8.0 * HALF_ULP * (ff + rr), 8.0 * HALF_ULP * (gg + rr));
        let start_in = ff - rr < -start_bound;
        let both_out = (ff - rr > start_bound) & (gg - rr > end_bound);
        let end_in = gg - rr < -end_bound;
        // The discriminant from |f × d| within its bound, and where the vertex lies.
        let cross = fx * dy - fy * dx;
        let cross_bound = 8.0 * HALF_ULP * ((fx * dy).abs() + (fy * dx).abs());
        let far = (cross.abs() - cross_bound).max(0.0);
        let near = cross.abs() + cross_bound;
        let apart = far * far > rr * dd * (1.0 + 16.0 * HALF_ULP);
        let fd = fx * dx + fy * dy;
        let fd_bound = 8.0 * HALF_ULP * ((fx * dx).abs() + (fy * dy).abs());
        let gd = gx * dx + gy * dy;
        let gd_bound = 8.0 * HALF_ULP * ((gx * dx).abs() + (gy * dy).abs());
        let (ahead, not_ahead) = (fd > fd_bound, fd < -fd_bound);
        let (behind, not_behind) = (gd < -gd_bound, gd > gd_bound);
        let within = near * near * (1.0 + 16.0 * HALF_ULP) < rr * dd * (1.0 - 16.0 * HALF_ULP);
        let miss = both_out & (point | apart | ahead | behind);
        let crossed = both_out & !point & not_ahead & not_behind & within;
        hit[lane] = start_in | end_in | crossed;
        unsure[lane] = !(miss | hit[lane]);
    }
    LaneVerdicts { hit, unsure }
}

#[cfg(test)]
mod tests {
    use super::{CircleFrame, exact_cross, exact_sub};

    #[test]
    fn a_root_estimate_one_float_off_is_never_certified() {
        // From (-2, 0) to (2, 0) through the unit circle: roots 0.25 and 0.75.
        let frame = CircleFrame {
            f: [-2.0, 0.0],
            d: [4.0, 0.0],
            rr: 1.0,
        };
        let ulp = |t: f32| f32::from_bits(t.to_bits() + 1) - t;
        for (root, upper) in [(0.25f32, false), (0.75, true)] {
            assert_eq!(frame.certify(root as f64, upper), Some(root));
            for wrong in [root + ulp(root), root - ulp(root - ulp(root))] {
                assert_eq!(
                    frame.certify(wrong as f64, upper),
                    None,
                    "{wrong} for {root}"
                );
            }
            // The other root's estimate is not this one's.
            assert_eq!(frame.certify(1.0 - root as f64, upper), None);
        }
    }

    #[test]
    fn products_that_f64_rounds_are_not_taken_as_exact() {
        let (a, b) = (2f64.powi(-40), 2f64.powi(-41));
        // (1 + 2^-40)(1 + 2^-41) needs 82 bits; 1 · (1 + 3 · 2^-41) is exact: f64 computes the
        // cross product as 0, and it is 2^-81.
        assert_eq!((1.0 + a) * (1.0 + b) - (1.0 + 3.0 * b), 0.0);
        assert_eq!(exact_cross(1.0 + a, 1.0 + 3.0 * b, 1.0, 1.0 + b), None);
        assert_eq!(exact_cross(3.0, 2.0, 5.0, 4.0), Some(2.0));
        // A difference f64 rounds, and one it holds.
        assert_eq!(exact_sub(1.0, 2f64.powi(-60)), None);
        assert_eq!(exact_sub(1.0, 2f64.powi(-40)), Some(1.0 - 2f64.powi(-40)));
    }
}
