//! The shapes' cull: their boxes in blocks of sixteen along a Morton curve, a tree over the
//! blocks' own boxes gone down first, and the candidates kept for the lane filter
//! (`cpu::lane_filter`); and which of it and the grid's walk a segment takes.

use super::cull::{RectBlock, SegmentBox, fill_blocks};
use crate::cpu::grid::{
    Grid, Next, Step, Walk, box_entries, prefers_brute_force, visit_cells, walk_of,
};
use crate::cpu::lane_filter::{Candidates, LaneFilter};
use crate::cpu::lanes::{LANES, Simd};

use crate::types::{Rect, Segment};
use rayon::prelude::*;

/// Appends every candidate of `s` among the shapes of `layout` to `out`: from `grid` (a grid
/// over the same boxes) where its walk pays for `s`, in the walk's order, else from the SIMD
/// box cull, in the layout's order.
#[inline(always)]
pub(super) fn shape_candidates(
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
        Some((grid, walk)) if !prefers_cull(grid, s, &walk, shapes, filter, false) => {
            let no_ceiling = std::cell::Cell::new(u32::MAX);
            visit_cells(grid, s, &walk, &no_ceiling, false, |step| {
                if let Step::Rect(k, e) = step {
                    out.push_entry(k as usize, e as usize, filter);
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
pub(super) trait DenseBlocks {
    fn take(&mut self, block: usize, kept: u16) -> bool;
}

impl<D: DenseBlocks> DenseBlocks for &mut D {
    #[inline(always)]
    fn take(&mut self, block: usize, kept: u16) -> bool {
        (**self).take(block, kept)
    }
}

/// Every kept lane appended.
pub(super) struct AppendAll;

impl DenseBlocks for AppendAll {
    #[inline(always)]
    fn take(&mut self, _block: usize, _kept: u16) -> bool {
        false
    }
}

/// Counts' blocks with [`DENSE_LANES`] or more lanes kept: through the lane filter as they lie
/// ([`LaneFilter::count_block`]), certain hits added to `per_place` (by place in the
/// layout) sixteen lanes at once, and the unsure lanes through `hit`.
pub(super) struct CountInPlace<'a, H: Fn(usize) -> bool> {
    pub(super) filter: &'a LaneFilter,
    pub(super) layout: &'a ShapeLayout,
    pub(super) query: &'a Segment,
    pub(super) per_place: &'a mut [[u32; LANES]],
    pub(super) per_shape: &'a mut [u64],
    pub(super) hit: H,
    pub(super) hits: u32,
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
pub(super) const DENSE_LANES: u32 = 9;

/// How many of the grid's entries the box cull over `shapes` costs a segment whose box's cells
/// list `in_box` entries: the shapes it keeps (at most all, at most those entries), but an
/// eighth with a lane filter, whose box cull and filter cost a shape about an eighth of what a
/// walk's entry costs. Measured on 2,048 long random segments × 1,024 walls or circles
/// (`BroadPhase::Auto`, counts, 2 threads): the grid's choice went from 5.1 ms to 1.8 ms for
/// walls and 4.2 to 2.0 ms for circles, while 100,000 short bullets × 10,000 circles kept the
/// grid (43 to 44 ms). Without a filter each candidate costs its shape's whole test, in the
/// walk or the cull alike, so the cull pays only where the walk would scan nearly all of the
/// box's entries anyway (seven eighths): a short segment's.
fn cull_cost(shapes: usize, in_box: u64, filter: Option<&LaneFilter>) -> usize {
    let kept = in_box.min(shapes as u64) as usize;
    if filter.is_some() {
        kept / 8
    } else {
        kept - kept / 8
    }
}

/// Whether segment `s` (its `walk` through `grid`, a grid over the shapes' boxes) takes its
/// candidates from the box cull ([`collect_candidates`]) rather than the walk:
///
/// - With `ceiling_pays` (first hits where recent segments started inside a shape): when the
///   walk would cost more than the cull over every shape ([`cull_cost`]). Past a hit at t = 0
///   the walk skips the rest of its cells' entries ([`visit_cells`]' ceiling), which the cull
///   cannot.
/// - Otherwise when it would cost more than the cull over the shapes in its box's cells: the
///   cull goes down the layout's tree ([`for_each_block`]) to the blocks near the segment and
///   tests sixteen boxes at once, where the walk tests its cells' entries one by one. So a
///   short segment takes the cull, and a long diagonal one the walk (whose cells are a thin
///   band of its box's). On 1M bullets × 100k walls (bullet hell, first hits) the walk took
///   3.3 s end to end and the cull 1.25 s; counts 4.95 s and 1.1 s.
#[inline(always)]
pub(super) fn prefers_cull(
    grid: &Grid,
    s: &Segment,
    walk: &Walk,
    shapes: usize,
    filter: Option<&LaneFilter>,
    ceiling_pays: bool,
) -> bool {
    let in_box = if ceiling_pays {
        u64::MAX
    } else {
        box_entries(grid, walk, shapes as u64)
    };
    prefers_brute_force(grid, s, walk, cull_cost(shapes, in_box, filter))
}

/// Appends the shapes whose boxes meet `s`'s box to `out`, in the layout's order, with their
/// lane values when there is a filter: the box cull goes down the layout's tree of boxes
/// ([`for_each_block`]), then tests the boxes of the blocks it reaches. AVX-512 compresses
/// each block's kept lanes straight into the buffer; the other levels append them one by
/// one. A block with lanes kept goes first to `dense.take(block, kept lanes)`, which may
/// answer it in place (true: nothing appended).
#[inline(always)]
pub(super) fn collect_candidates(
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
pub(super) fn lanes_overlapping(b: &SegmentBox, block: &RectBlock) -> u16 {
    let overlap: [bool; LANES] = std::array::from_fn(|lane| {
        (b.min_x <= block.max_x[lane])
            & (block.min_x[lane] <= b.max_x)
            & (b.min_y <= block.max_y[lane])
            & (block.min_y[lane] <= b.max_y)
    });
    crate::cpu::lane_filter::mask_of(&overlap)
}

/// [`collect_candidates`] on the levels without AVX-512: each block's box first, then the
/// boxes of the blocks kept, whose kept lanes are appended one by one (with their values,
/// read from the filter's block beside the box-cull block).
#[inline(always)]
pub(super) fn collect_lanes(
    b: &SegmentBox,
    layout: &ShapeLayout,
    filter: Option<&LaneFilter>,
    out: &mut Candidates,
    mut dense: impl DenseBlocks,
) {
    let overlaps = |block: &RectBlock| lanes_overlapping(b, block);
    for_each_block(&layout.tree, overlaps, |block| {
        let kept = lanes_overlapping(b, &layout.blocks[block]);
        if kept == 0 || dense.take(block, kept) {
            return;
        }
        let values = filter.map(|f| &f.blocks[block]);
        out.ensure_room(out.len + LANES);
        let mut lanes = kept;
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            out.push_lane(layout.shapes[block][lane], values, lane);
        }
    });
}

/// Levels of [`ShapeLayout::tree`], at most: sixteen children a node, so 2^32 shapes need 7.
const MAX_LEVELS: usize = 8;

/// A tree level stops growing once it has this many nodes or fewer (the cull tests each).
const TOP_NODES: usize = 16;

/// Calls `each(block)` for every block of the layout whose box the cull keeps, in ascending
/// order: depth first down `tree` (level 0 boxes the blocks; node `i` of a level has children
/// `16i..16i + 16` one level down), going into a child whose box `overlaps` keeps (a mask over
/// sixteen boxes). A block's box holds its shapes' boxes and a node's box its children's, so
/// every block with a box meeting the segment's is reached.
#[inline(always)]
pub(super) fn for_each_block(
    tree: &[Vec<RectBlock>],
    overlaps: impl Fn(&RectBlock) -> u16,
    mut each: impl FnMut(usize),
) {
    let Some(top) = tree.len().checked_sub(1) else {
        return;
    };
    // Per level: the node being gone through, and its children not gone into yet.
    let mut stack = [(0usize, 0u16); MAX_LEVELS];
    for (root, node) in tree[top].iter().enumerate() {
        let mut level = top;
        stack[level] = (root, overlaps(node));
        loop {
            let (node, children) = &mut stack[level];
            if *children == 0 {
                if level == top {
                    break;
                }
                level += 1;
                continue;
            }
            let child = *node * LANES + children.trailing_zeros() as usize;
            *children &= *children - 1;
            if level == 0 {
                each(child);
            } else {
                level -= 1;
                stack[level] = (child, overlaps(&tree[level][child]));
            }
        }
    }
}

/// The shapes' boxes as the shapes' box cull reads them: in blocks of sixteen, in the order of
/// a Morton curve over the boxes' centres (so that a block's shapes lie near one another), each
/// lane's shape index beside them, and a tree over the blocks' own boxes (the box of a block's
/// sixteen), sixteen to a node, which the cull goes down first. Small shapes scattered over a
/// field (circles, bullet hell's hitboxes) then cost a short segment's cull a few nodes and
/// the blocks near it, not a test of every block.
pub(crate) struct ShapeLayout {
    pub(crate) blocks: Vec<RectBlock>,
    pub(crate) shapes: Vec<[u32; LANES]>,
    /// Level 0: the blocks' boxes, sixteen to a node; each level above boxes sixteen nodes of
    /// the one below, up to [`TOP_NODES`] nodes or fewer (none without shapes).
    pub(crate) tree: Vec<Vec<RectBlock>>,
    /// The shapes in layout order: place p holds shape `order[p]`.
    pub(crate) order: Vec<u32>,
}

impl ShapeLayout {
    /// With `parallel`, on the current rayon pool ([`morton_order`]).
    pub(crate) fn new(bounds: &[Rect], parallel: bool) -> Self {
        let order = morton_order(bounds.len(), parallel, |k| {
            let b = &bounds[k];
            (
                (b.min_x as f64 + b.max_x as f64) / 2.0,
                (b.min_y as f64 + b.max_y as f64) / 2.0,
            )
        });
        let sorted: Vec<Rect> = order.iter().map(|&k| bounds[k as usize]).collect();
        let mut blocks = Vec::new();
        fill_blocks(&sorted, &mut blocks);
        let mut shapes = vec![[u32::MAX; LANES]; blocks.len()];
        for (place, &k) in order.iter().enumerate() {
            shapes[place / LANES][place % LANES] = k;
        }
        let union = |boxes: &[Rect]| {
            boxes.iter().fold(
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
        };
        let mut tree = Vec::new();
        let mut boxes: Vec<Rect> = sorted.chunks(LANES).map(union).collect();
        while !boxes.is_empty() {
            let mut level = Vec::new();
            fill_blocks(&boxes, &mut level);
            let done = level.len() <= TOP_NODES;
            tree.push(level);
            if done {
                break;
            }
            boxes = boxes.chunks(LANES).map(union).collect();
        }
        Self {
            blocks,
            shapes,
            tree,
            order,
        }
    }
}

/// The indices `0..n` in the order of a Morton curve over their points `at(k)` (16 bits an
/// axis over the points' extent; ties by index): points near one another come near one another.
/// With `parallel`, the keys and the sort on the current rayon pool: call it on a kernel's
/// (`CpuKernel::install`).
pub(super) fn morton_order(
    n: usize,
    parallel: bool,
    at: impl Fn(usize) -> (f64, f64) + Sync,
) -> Vec<u32> {
    let keys = morton_keys(n, parallel, at);
    // The key above the index: one u64 sort (ties by index).
    let keyed = |(k, &key): (usize, &u32)| (key as u64) << 32 | k as u64;
    if parallel {
        let mut keyed: Vec<u64> = keys.par_iter().enumerate().map(keyed).collect();
        keyed.par_sort_unstable();
        keyed.into_par_iter().map(|key| key as u32).collect()
    } else {
        let mut keyed: Vec<u64> = keys.iter().enumerate().map(keyed).collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|key| key as u32).collect()
    }
}

/// Each point's 32-bit Morton key: `at(k)` scaled to 16 bits an axis over the points' extent,
/// the bits interleaved (x's even, y's odd).
pub(super) fn morton_keys(
    n: usize,
    parallel: bool,
    at: impl Fn(usize) -> (f64, f64) + Sync,
) -> Vec<u32> {
    type Extent = ((f64, f64), (f64, f64));
    let extent = |(lo, hi): Extent, (x, y): (f64, f64)| {
        ((lo.0.min(x), lo.1.min(y)), (hi.0.max(x), hi.1.max(y)))
    };
    let union = |(a_lo, a_hi): Extent, (b_lo, b_hi): Extent| {
        (
            (a_lo.0.min(b_lo.0), a_lo.1.min(b_lo.1)),
            (a_hi.0.max(b_hi.0), a_hi.1.max(b_hi.1)),
        )
    };
    let empty = (
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
    );
    let (lo, hi) = if parallel {
        (0..n)
            .into_par_iter()
            .fold(|| empty, |e, k| extent(e, at(k)))
            .reduce(|| empty, union)
    } else {
        (0..n).fold(empty, |e, k| extent(e, at(k)))
    };
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
    let key = |k: usize| {
        let (x, y) = at(k);
        let qx = ((x - lo.0) * scale_x) as u32;
        let qy = ((y - lo.1) * scale_y) as u32;
        spread(qx) | spread(qy) << 1
    };
    if parallel {
        (0..n).into_par_iter().map(key).collect()
    } else {
        (0..n).map(key).collect()
    }
}

/// The shapes' layout and lane filter, and the boxes they were made for.
pub(crate) struct PreparedShapes {
    pub(super) bounds: Vec<Rect>,
    pub(super) layout: ShapeLayout,
    pub(super) filter: Option<LaneFilter>,
}

/// The shapes' cull compiled with each level's instructions.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::cull::{RectBlock, SegmentBox};
    use super::{Candidates, DenseBlocks, LANES, LaneFilter, ShapeLayout};
    use crate::cpu::lanes::HitLanes;
    use std::arch::x86_64::*;

    /// The box cull of [`super::super::cull::x86::masks_avx512`] in two levels (each block's own box, sixteen blocks at
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
        super::for_each_block(&layout.tree, overlaps, |i| {
            let k = overlaps(&layout.blocks[i]);
            if k == 0 || dense.take(i, k) {
                return;
            }
            // SAFETY: n + 16 is within the room the caller ensured (n grows by at most 16
            // a block, once per block); 16 u32 per index array.
            unsafe {
                let index = _mm512_loadu_si512(layout.shapes[i].as_ptr().cast());
                _mm512_storeu_si512(shapes.add(n).cast(), _mm512_maskz_compress_epi32(k, index));
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
        });
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
}

#[cfg(test)]
mod tests {
    use super::morton_order;
    use crate::scene::bullet_hell;
    use crate::types::Rect;

    /// A kernel sorts shapes on its pool only from `PARALLEL_SETUP_MIN` shapes, which few
    /// tests reach: the order made there must be the serial one, ties (equal centres) included.
    #[test]
    fn the_morton_order_made_on_the_pool_is_the_serial_one() {
        let (_, rects) = bullet_hell(5, 10, 40_000);
        let rects: Vec<Rect> = rects.iter().chain(&rects).copied().collect();
        let at = |k: usize| {
            let b = &rects[k];
            (
                (b.min_x as f64 + b.max_x as f64) / 2.0,
                (b.min_y as f64 + b.max_y as f64) / 2.0,
            )
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let parallel = pool.install(|| morton_order(rects.len(), true, at));
        assert_eq!(parallel, morton_order(rects.len(), false, at));
    }
}
