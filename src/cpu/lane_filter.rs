//! The CPU batch path's second cull for shapes: the hit alone, sixteen (query, shape) pairs at a
//! time, where floating point certifies it ([`Shape::hit_lanes`]).
//!
//! The box cull ([`super::batched`]) keeps every shape whose box meets the query's; for long
//! segments against walls that is nearly half of all pairs, and most of them miss. Each kept
//! candidate's values are copied into a lane of [`HitLanes`]; sixteen at a time go through the
//! shape's lane filter, compiled for the kernel's SIMD level, which sorts each into a certain
//! hit, a certain miss, or "only the exact path can tell". Certain misses go no further: a
//! query that needs only the hit (counts) never computes a t, and one that needs the contact
//! (hits, first hits, dense pairs) computes it for the hits and the unsure pairs alone, through
//! [`Shape::filtered`] and [`Shape::exact`] as before. So every answer is still the scalar
//! function's.
//!
//! The filters compute from the f32 inputs in f32 (walls: Shewchuk's orientation bound for
//! f32, with an absolute allowance for gradual underflow) or f64 (circles, as the scalar
//! filter), and assume the IEEE default environment (no flush-to-zero, which Rust never sets):
//! within the valid domain (|v| ≤ 2^62) no intermediate overflows.

use super::grid::Grid;
use super::lanes::{HIT_LANES, HitLanes, LANES, Simd};
use crate::shape::Shape;
use crate::types::Segment;

impl HitLanes {
    /// Lanes holding `shapes` (at most sixteen; the others zero).
    pub fn of<S: Shape>(shapes: &[S]) -> Self {
        let mut lanes = Self::ZERO;
        for (lane, shape) in shapes.iter().take(HIT_LANES).enumerate() {
            lanes.set(lane, shape.lane_values());
        }
        lanes
    }
}

/// One batch's verdicts as bit masks (bit l for lane l), lanes not asked about cleared.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Masks {
    pub(crate) hit: u16,
    pub(crate) unsure: u16,
    /// The lowest `t_below` of a certain hit, as bits (bounds are 0 or above and not NaN, so
    /// their bits order as they do; `u32::MAX` for none): runs that write `t_below` only.
    pub(crate) low: u32,
}

/// How a SIMD level turns sixteen bools into a bit mask (the filters compute bools, which the
/// compiler keeps in mask or vector registers; a plain shift-and-or loop over them becomes a
/// reduction, several times the cost of the filter's own compares).
trait Level {
    fn mask(lanes: &[bool; HIT_LANES]) -> u16;

    /// Adds one to each count whose lane is in `mask`.
    #[inline(always)]
    fn add_lanes(counts: &mut [u32; HIT_LANES], mask: u16) {
        for (lane, count) in counts.iter_mut().enumerate() {
            *count += (mask >> lane & 1) as u32;
        }
    }

    /// The lowest of the lanes of `mask` in `t` (each 0 or above, not NaN), as bits, which
    /// order as the values do; `u32::MAX` (a NaN's bits) for an empty mask.
    #[inline(always)]
    fn lowest(t: &[f32; HIT_LANES], mask: u16) -> u32 {
        (0..HIT_LANES)
            .filter(|lane| mask >> lane & 1 == 1)
            .map(|lane| t[lane].to_bits())
            .min()
            .unwrap_or(u32::MAX)
    }
}

/// Any target: the plain loop (SSE2's byte sign mask on x86-64, its baseline).
struct Baseline;

impl Level for Baseline {
    #[inline(always)]
    fn mask(lanes: &[bool; HIT_LANES]) -> u16 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of x86-64; 16 bools are 16 bytes, each 0 or 1.
        unsafe {
            use std::arch::x86_64::*;
            let v = _mm_loadu_si128(lanes.as_ptr().cast());
            _mm_movemask_epi8(_mm_slli_epi16::<7>(v)) as u16
        }
        #[cfg(not(target_arch = "x86_64"))]
        lanes
            .iter()
            .enumerate()
            .fold(0, |m, (lane, &b)| m | (b as u16) << lane)
    }
}

/// Sixteen bools as a bit mask, for code compiled at any level (the box cull's lanes).
#[inline(always)]
pub(crate) fn mask_of(lanes: &[bool; HIT_LANES]) -> u16 {
    Baseline::mask(lanes)
}

/// The verdicts of `S`'s filter for `query` against `lanes`, as masks: only `live` lanes;
/// with `T`, each lane's `t_below` written to `t_below` (which is empty otherwise).
#[inline(always)]
fn masks_of<S: Shape, L: Level, const T: bool>(
    query: &Segment,
    lanes: &HitLanes,
    live: u16,
    t_below: &mut [f32],
) -> Masks {
    let v = S::hit_lanes(query, lanes);
    let hit = L::mask(&v.hit) & live;
    let mut low = u32::MAX;
    if T {
        t_below.copy_from_slice(&v.t_below);
        low = L::lowest(&v.t_below, hit);
    }
    Masks {
        hit,
        unsure: L::mask(&v.unsure) & live,
        low,
    }
}

/// The lanes set in `mask`, in ascending order.
#[inline(always)]
fn lanes_of(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let lane = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            lane
        })
    })
}

/// The lanes below `n` (of sixteen).
#[inline(always)]
fn live_below(n: usize) -> u16 {
    if n >= HIT_LANES {
        u16::MAX
    } else {
        (1u16 << n) - 1
    }
}

/// A shape's lane filter, compiled for one SIMD level, and the values it reads of each shape.
pub(crate) struct LaneFilter {
    /// The values in the box cull's layout order, a block per box-cull block.
    pub(crate) blocks: Vec<HitLanes>,
    /// Shape k's values at k: what the grid's walk reads, a shape at a time (one memory read,
    /// where the blocks would take two dependent ones).
    by_shape: Vec<[f32; 4]>,
    /// The values of each entry of the grid the walk goes through, beside its box (after
    /// [`LaneFilter::list_entries`]; empty otherwise): read in the walk's order, where
    /// `by_shape` is a read from anywhere per candidate (a quarter of a walls walk's time on
    /// bullet hell).
    by_entry: Vec<[f32; 4]>,
    run: Run,
    /// `run` that also writes each candidate's `t_below` ([`Candidates::sieve_first`]).
    run_first: Run,
    count_block: unsafe fn(&Segment, &HitLanes, u16, &mut [u32; HIT_LANES]) -> Masks,
    /// The verdicts and each lane's `t_below` for one block read in place (a cell's block).
    first_block: FirstBlock,
    starts_inside: fn(&Segment, &[f32; 4]) -> bool,
    /// A grid along walls' cells, in blocks (after [`LaneFilter::list_cells`]).
    cells: CellBlocks,
}

/// [`LaneFilter`]'s `first_block`.
type FirstBlock = unsafe fn(&Segment, &HitLanes, u16, &mut [f32; HIT_LANES]) -> Masks;

/// The shapes a grid along walls lists, cell by cell in blocks of sixteen lanes.
#[derive(Default)]
struct CellBlocks {
    /// Cell c's blocks are `start[c]..start[c + 1]`.
    start: Vec<u32>,
    blocks: Vec<CellBlock>,
    /// The entries they were listed from.
    entries: usize,
}

/// Sixteen shapes of a cell: their values, their indices, and which lanes are live (a cell's
/// last block may have fewer), side by side in memory (the walk reads them in turn).
#[derive(Clone, Copy)]
struct CellBlock {
    lanes: HitLanes,
    shapes: [u32; HIT_LANES],
    live: u16,
}

/// The blocks of a cell [`LaneFilter::first_in_cell`] filters before it visits any: most cells
/// have fewer, and the lowest bound among them goes first.
const CELL_GROUP: usize = 4;

impl LaneFilter {
    /// The filter of `S` over `shapes` on `simd` (a level this CPU runs), their values laid out
    /// in `order` (the box cull's: place p holds shape `order[p]`); `None` for a shape without
    /// one ([`Shape::HIT_LANES`]).
    pub(crate) fn of<S: Shape>(simd: Simd, shapes: &[S], order: &[u32]) -> Option<Self> {
        if !S::HIT_LANES {
            return None;
        }
        type CountBlock = unsafe fn(&Segment, &HitLanes, u16, &mut [u32; HIT_LANES]) -> Masks;
        let (run, run_first, count_block, first_block): (Run, Run, CountBlock, FirstBlock) =
            match simd {
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => (
                    x86::avx512::<S, false>,
                    x86::avx512::<S, true>,
                    x86::avx512_count::<S>,
                    x86::avx512_first::<S>,
                ),
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => (
                    x86::avx2::<S, false>,
                    x86::avx2::<S, true>,
                    x86::avx2_count::<S>,
                    x86::avx2_first::<S>,
                ),
                _ => (
                    portable::<S, false>,
                    portable::<S, true>,
                    portable_count::<S>,
                    portable_first::<S>,
                ),
            };
        let mut blocks = vec![HitLanes::ZERO; shapes.len().div_ceil(LANES)];
        for (p, &k) in order.iter().enumerate() {
            blocks[p / LANES].set(p % LANES, shapes[k as usize].lane_values());
        }
        Some(Self {
            blocks,
            by_shape: shapes.iter().map(S::lane_values).collect(),
            by_entry: Vec::new(),
            run,
            run_first,
            count_block,
            first_block,
            starts_inside: S::starts_inside,
            cells: CellBlocks::default(),
        })
    }

    /// The verdicts for `query` against the shapes of layout block `block`, read in place,
    /// for the lanes of `live` (the box cull's, for a block where most lanes pass it: cheaper
    /// than compressing them into [`Candidates`] first); one added to `counts[lane]` for each
    /// certain hit.
    #[inline(always)]
    pub(crate) fn count_block(
        &self,
        query: &Segment,
        block: usize,
        live: u16,
        counts: &mut [u32; HIT_LANES],
    ) -> Masks {
        // SAFETY: as in `Candidates::filter`.
        unsafe { (self.count_block)(query, &self.blocks[block], live, counts) }
    }

    /// Whether `other` is this filter, made in the same layout order: the same functions
    /// over the same values (compared as bytes), so the same blocks too.
    pub(crate) fn is_same(&self, other: &LaneFilter) -> bool {
        let bytes = bytemuck::cast_slice::<[f32; 4], u8>;
        std::ptr::fn_addr_eq(self.run, other.run)
            && std::ptr::fn_addr_eq(self.run_first, other.run_first)
            && std::ptr::fn_addr_eq(self.count_block, other.count_block)
            && std::ptr::fn_addr_eq(self.first_block, other.first_block)
            && bytes(&self.by_shape) == bytes(&other.by_shape)
    }

    /// Lists the values of each of `grid`'s entries (a grid over these shapes), unless they
    /// are listed already (a grid over these shapes holds as many entries only when it is
    /// the same grid: grids are built from the boxes alone).
    pub(crate) fn list_entries(&mut self, grid: &Grid) {
        if self.by_entry.len() == grid.entries.len() && !self.by_entry.is_empty() {
            return;
        }
        let by_shape = &self.by_shape;
        self.by_entry.clear();
        self.by_entry
            .extend(grid.entries.iter().map(|&k| by_shape[k as usize]));
    }

    /// Lists the shapes of each cell of `grid` (a grid along these shapes, walls:
    /// `Grid::build_along`) in blocks of sixteen lanes, unless they are listed already (a grid
    /// along the same walls lists as many entries only when it is the same grid: it is built
    /// from the walls alone, and the filter holds the same walls only when it
    /// [`is_same`](Self::is_same)).
    pub(crate) fn list_cells(&mut self, grid: &Grid) {
        let cells = (grid.cols * grid.rows) as usize;
        let c = &mut self.cells;
        if c.start.len() == cells + 1 && c.entries == grid.entries.len() {
            return;
        }
        c.start.clear();
        c.blocks.clear();
        c.entries = grid.entries.len();
        c.start.push(0);
        for cell in 0..cells {
            let listed = &grid.entries[grid.cell_start[cell] as usize..]
                [..(grid.cell_start[cell + 1] - grid.cell_start[cell]) as usize];
            for part in listed.chunks(HIT_LANES) {
                let mut lanes = HitLanes::ZERO;
                let mut shapes = [u32::MAX; HIT_LANES];
                for (lane, &k) in part.iter().enumerate() {
                    lanes.set(lane, self.by_shape[k as usize]);
                    shapes[lane] = k;
                }
                c.blocks.push(CellBlock {
                    lanes,
                    shapes,
                    live: live_below(part.len()),
                });
            }
            c.start.push(c.blocks.len() as u32);
        }
    }

    /// [`Candidates::sieve_first`] over the shapes listed in `cell` of the grid along walls
    /// ([`LaneFilter::list_cells`]), read in place, [`CELL_GROUP`] blocks at a time: the
    /// certain hit with the lowest bound first, then the lanes that can still come first.
    /// Returns the best t after them (`best` before; `visit` gives it back after each shape).
    #[inline(always)]
    pub(crate) fn first_in_cell(
        &self,
        query: &Segment,
        cell: usize,
        mut best: f32,
        visit: &mut impl FnMut(usize, f32) -> f32,
    ) -> f32 {
        let c = &self.cells;
        let blocks = &c.blocks[c.start[cell] as usize..c.start[cell + 1] as usize];
        for group in blocks.chunks(CELL_GROUP) {
            let mut masks = [Masks::default(); CELL_GROUP];
            let mut t_below = [[0f32; HIT_LANES]; CELL_GROUP];
            for ((block, m), t) in group.iter().zip(&mut masks).zip(&mut t_below) {
                // SAFETY: as in `Candidates::filter`.
                *m = unsafe { (self.first_block)(query, &block.lanes, block.live, t) };
            }
            if masks.iter().all(|m| m.hit | m.unsure == 0) {
                continue;
            }
            best = answer_first(
                &masks[..group.len()],
                t_below.as_flattened(),
                |at| group[at / HIT_LANES].shapes[at % HIT_LANES],
                best,
                visit,
            );
        }
        best
    }

    /// Shape `k`'s values.
    #[inline(always)]
    fn values(&self, k: usize) -> [f32; 4] {
        self.by_shape[k]
    }

    /// Shape `k`'s values, listed as `entry` of the grid ([`LaneFilter::list_entries`]; by
    /// shape when it did not list them).
    #[inline(always)]
    fn entry_values(&self, k: usize, entry: usize) -> [f32; 4] {
        match self.by_entry.get(entry) {
            Some(&values) => values,
            None => self.values(k),
        }
    }

    /// [`Shape::starts_inside`] for shape `k`, listed as `entry` of the grid.
    #[inline(always)]
    pub(crate) fn starts_inside(&self, query: &Segment, k: usize, entry: usize) -> bool {
        (self.starts_inside)(query, &self.entry_values(k, entry))
    }
}

/// A lane filter run over a buffer of candidates: masks, and with `T` each one's `t_below`.
type Run = unsafe fn(&Segment, &Candidates, &mut [Masks], &mut [f32]);

/// Every batch of sixteen candidates through `S`'s filter: `masks[c]` for candidates
/// 16c..16c + 16 (lanes past the last candidate read the buffer's slack and are cleared), and
/// with `T` their `t_below` at the same places of `t_below`.
#[inline(always)]
fn filter_all<S: Shape, L: Level, const T: bool>(
    query: &Segment,
    candidates: &Candidates,
    masks: &mut [Masks],
    t_below: &mut [f32],
) {
    let len = candidates.len;
    for (c, out) in masks[..len.div_ceil(HIT_LANES)].iter_mut().enumerate() {
        let at = c * HIT_LANES;
        let mut lanes = HitLanes::ZERO;
        for (lane, values) in lanes.values.iter_mut().zip(&candidates.values) {
            lane.copy_from_slice(&values[at..at + HIT_LANES]);
        }
        let t = if T {
            &mut t_below[at..at + HIT_LANES]
        } else {
            &mut []
        };
        *out = masks_of::<S, L, T>(query, &lanes, live_below(len - at), t);
    }
}

fn portable<S: Shape, const T: bool>(
    query: &Segment,
    candidates: &Candidates,
    masks: &mut [Masks],
    t_below: &mut [f32],
) {
    filter_all::<S, Baseline, T>(query, candidates, masks, t_below)
}

/// [`LaneFilter::count_block`] on level `L`.
#[inline(always)]
fn count_block<S: Shape, L: Level>(
    query: &Segment,
    lanes: &HitLanes,
    live: u16,
    counts: &mut [u32; HIT_LANES],
) -> Masks {
    let masks = masks_of::<S, L, false>(query, lanes, live, &mut []);
    L::add_lanes(counts, masks.hit);
    masks
}

/// [`LaneFilter`]'s `first_block` on level `L`.
#[inline(always)]
fn first_block<S: Shape, L: Level>(
    query: &Segment,
    lanes: &HitLanes,
    live: u16,
    t_below: &mut [f32; HIT_LANES],
) -> Masks {
    masks_of::<S, L, true>(query, lanes, live, t_below)
}

fn portable_first<S: Shape>(
    query: &Segment,
    lanes: &HitLanes,
    live: u16,
    t_below: &mut [f32; HIT_LANES],
) -> Masks {
    first_block::<S, Baseline>(query, lanes, live, t_below)
}

fn portable_count<S: Shape>(
    query: &Segment,
    lanes: &HitLanes,
    live: u16,
    counts: &mut [u32; HIT_LANES],
) -> Masks {
    count_block::<S, Baseline>(query, lanes, live, counts)
}

/// The same filter compiled with each level's instructions (the filters are
/// `#[inline(always)]`, so their bodies take these functions' target features).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{
        Baseline, Candidates, HIT_LANES, HitLanes, Level, Masks, count_block, filter_all,
        first_block,
    };
    use crate::shape::Shape;
    use crate::types::Segment;
    use std::arch::x86_64::*;

    /// AVX-512F: the bools widened to sixteen dwords and tested into a mask register.
    struct Avx512;

    impl Level for Avx512 {
        #[inline(always)]
        fn mask(lanes: &[bool; HIT_LANES]) -> u16 {
            // SAFETY: only inlined into `avx512` and `avx512_count` below (AVX-512F); 16 bools
            // are 16 bytes.
            unsafe {
                let v = _mm512_cvtepu8_epi32(_mm_loadu_si128(lanes.as_ptr().cast()));
                _mm512_test_epi32_mask(v, v)
            }
        }

        #[inline(always)]
        fn add_lanes(counts: &mut [u32; HIT_LANES], mask: u16) {
            // SAFETY: as above; 16 u32 are one 512-bit load and store.
            unsafe {
                let c = _mm512_loadu_si512(counts.as_ptr().cast());
                let c = _mm512_mask_add_epi32(c, mask, c, _mm512_set1_epi32(1));
                _mm512_storeu_si512(counts.as_mut_ptr().cast(), c);
            }
        }

        #[inline(always)]
        fn lowest(t: &[f32; HIT_LANES], mask: u16) -> u32 {
            // SAFETY: as above; 16 f32 are one 512-bit load.
            unsafe { _mm512_mask_reduce_min_epu32(mask, _mm512_loadu_si512(t.as_ptr().cast())) }
        }
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn avx512<S: Shape, const T: bool>(
        query: &Segment,
        c: &Candidates,
        masks: &mut [Masks],
        t_below: &mut [f32],
    ) {
        filter_all::<S, Avx512, T>(query, c, masks, t_below)
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn avx512_count<S: Shape>(
        query: &Segment,
        lanes: &HitLanes,
        live: u16,
        counts: &mut [u32; HIT_LANES],
    ) -> Masks {
        count_block::<S, Avx512>(query, lanes, live, counts)
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn avx512_first<S: Shape>(
        query: &Segment,
        lanes: &HitLanes,
        live: u16,
        t_below: &mut [f32; HIT_LANES],
    ) -> Masks {
        first_block::<S, Avx512>(query, lanes, live, t_below)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2_first<S: Shape>(
        query: &Segment,
        lanes: &HitLanes,
        live: u16,
        t_below: &mut [f32; HIT_LANES],
    ) -> Masks {
        first_block::<S, Baseline>(query, lanes, live, t_below)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2<S: Shape, const T: bool>(
        query: &Segment,
        c: &Candidates,
        masks: &mut [Masks],
        t_below: &mut [f32],
    ) {
        filter_all::<S, Baseline, T>(query, c, masks, t_below)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2_count<S: Shape>(
        query: &Segment,
        lanes: &HitLanes,
        live: u16,
        counts: &mut [u32; HIT_LANES],
    ) -> Masks {
        count_block::<S, Baseline>(query, lanes, live, counts)
    }
}

/// The candidates of `masks.len()` batches of [`Candidates::sieve_first`] that can come first
/// (verdicts `masks`, bounds `t_below` at the same places, `shape(place)`): the certain hit
/// with the lowest bound first, then in each batch each unsure lane (bound 0) and each certain
/// hit bounded at or below the best, `visit(shape, its bound)` giving the best after it. A
/// batch whose every certain hit is bounded past the best keeps its unsure lanes. Returns the
/// best after them (`best` before).
#[inline(always)]
fn answer_first(
    masks: &[Masks],
    t_below: &[f32],
    shape: impl Fn(usize) -> u32,
    mut best: f32,
    visit: &mut impl FnMut(usize, f32) -> f32,
) -> f32 {
    // The lowest bound of a certain hit (each batch's from the filter), then its lane.
    // None gives `u32::MAX`, a NaN's bits, which compares below nothing.
    let (mut low, mut low_batch) = (u32::MAX, 0);
    for (c, m) in masks.iter().enumerate() {
        if m.low < low {
            (low, low_batch) = (m.low, c);
        }
    }
    let low = f32::from_bits(low);
    let lowest = (low <= best).then(|| {
        let at = low_batch * HIT_LANES;
        at + lanes_of(masks[low_batch].hit)
            .find(|&lane| t_below[at + lane] == low)
            .unwrap_or(0)
    });
    if let Some(at) = lowest {
        best = visit(shape(at) as usize, low);
    }
    for (c, &m) in masks.iter().enumerate() {
        let at = c * HIT_LANES;
        let t_below = &t_below[at..at + HIT_LANES];
        let mut kept = m.unsure;
        if f32::from_bits(m.low) <= best {
            let mut near = 0u16;
            for (lane, &t) in t_below.iter().enumerate() {
                near |= ((t <= best) as u16) << lane;
            }
            kept |= m.hit & near;
        }
        if let Some(lowest) = lowest.filter(|l| l / HIT_LANES == c) {
            kept &= !(1 << (lowest % HIT_LANES));
        }
        for lane in lanes_of(kept) {
            let t = if m.hit >> lane & 1 == 1 {
                t_below[lane]
            } else {
                0.0
            };
            best = visit(shape(at + lane) as usize, t);
        }
    }
    best
}

/// One query's candidates, in the order found: their shapes and, when the shapes have a lane
/// filter, their lane values (struct of arrays), with slack past the end for whole-vector
/// stores and reads. [`Candidates::sieve`] filters them all at once, after they are all
/// written (so no vector read waits on the scalar writes just before it).
pub(crate) struct Candidates {
    pub(crate) shapes: Vec<u32>,
    pub(crate) values: [Vec<f32>; 4],
    pub(crate) len: usize,
    /// The filter's verdicts, a batch of sixteen candidates each (with a filter only).
    masks: Vec<Masks>,
    /// Each candidate's `t_below` ([`Candidates::sieve_first`] only; as long as `values`).
    t_below: Vec<f32>,
}

impl Candidates {
    /// Room for a few batches, grown as they come ([`Candidates::ensure_room`]): a walk's
    /// segment takes a batch or two, and zeroing room for every shape (as a box cull of a
    /// long segment may need) was a chunk's biggest memset.
    pub(crate) fn new(filter: Option<&LaneFilter>) -> Self {
        let room = 4 * LANES;
        let values = if filter.is_some() { room } else { 0 };
        Self {
            shapes: vec![0; room],
            values: std::array::from_fn(|_| vec![0.0; values]),
            len: 0,
            masks: vec![Masks::default(); values / HIT_LANES],
            t_below: vec![0.0; values],
        }
    }

    /// Appends shape `k`, listed as `entry` of the grid the filter listed its values for
    /// ([`LaneFilter::list_entries`]; by shape when it did not).
    #[inline(always)]
    pub(crate) fn push_entry(&mut self, k: usize, entry: usize, filter: Option<&LaneFilter>) {
        let at = self.len;
        self.ensure_room(at + LANES);
        self.shapes[at] = k as u32;
        if let Some(filter) = filter {
            let values = filter.entry_values(k, entry);
            for (array, value) in self.values.iter_mut().zip(values) {
                array[at] = value;
            }
        }
        self.len += 1;
    }

    /// Appends shape `k`, lane `lane` of a block of values (given the filter); room for it
    /// ensured.
    #[inline(always)]
    pub(crate) fn push_lane(&mut self, k: u32, values: Option<&HitLanes>, lane: usize) {
        let at = self.len;
        self.shapes[at] = k;
        if let Some(values) = values {
            for (array, value) in self.values.iter_mut().zip(&values.values) {
                array[at] = value[lane];
            }
        }
        self.len += 1;
    }

    /// Makes the buffer hold at least `room` candidates (values included, when it keeps them).
    #[inline(always)]
    pub(crate) fn ensure_room(&mut self, room: usize) {
        if room > self.shapes.len() {
            self.grow(room);
        }
    }

    #[cold]
    fn grow(&mut self, room: usize) {
        let room = room.max(self.shapes.len() * 2).next_multiple_of(LANES);
        self.shapes.resize(room, 0);
        if self.keeps_values() {
            self.values.iter_mut().for_each(|v| v.resize(room, 0.0));
            self.t_below.resize(room, 0.0);
            self.masks.resize(room / HIT_LANES, Masks::default());
        }
    }

    /// Whether it was made for a filter (and so keeps the candidates' values).
    pub(crate) fn keeps_values(&self) -> bool {
        !self.masks.is_empty()
    }

    /// Hands every candidate that `filter` does not rule out to `visit(shape, certain_hit)`,
    /// in the order found (every one, unsure, without a filter), and empties the buffer.
    #[inline]
    pub(crate) fn sieve(
        &mut self,
        query: &Segment,
        filter: Option<&LaneFilter>,
        mut visit: impl FnMut(usize, bool),
    ) {
        let len = std::mem::take(&mut self.len);
        let Some(filter) = filter else {
            self.shapes[..len]
                .iter()
                .for_each(|&k| visit(k as usize, false));
            return;
        };
        self.filter::<false>(query, filter, len);
        let masks = &self.masks[..len.div_ceil(HIT_LANES)];
        let batches = self.shapes.chunks_exact(HIT_LANES).zip(masks);
        for (batch, m) in batches {
            for lane in lanes_of(m.hit | m.unsure) {
                visit(batch[lane] as usize, m.hit >> lane & 1 == 1);
            }
        }
    }

    /// [`Candidates::sieve`] for first hits: `visit(shape, t_below)`, where `t_below` is at
    /// or below the shape's rounded `t_enter` ([`crate::cpu::lanes::LaneVerdicts`]; 0 where
    /// the filter gives no bound, or there is no filter), and `visit` gives back the best
    /// hit's rounded `t_enter` so far (`best`, before the first call; infinity for none).
    /// The certain hit with the lowest bound goes first: most often it is the first hit, and
    /// past its t every certain hit bounded later is left out sixteen at a time, with no
    /// visit (walls: a bullet crosses dozens). Every candidate left out has a bound above the
    /// best t, so it cannot come first.
    #[inline]
    pub(crate) fn sieve_first(
        &mut self,
        query: &Segment,
        filter: Option<&LaneFilter>,
        best: f32,
        mut visit: impl FnMut(usize, f32) -> f32,
    ) {
        let len = std::mem::take(&mut self.len);
        // Most calls in a walk whose segment starts inside a shape: nothing buffered.
        if len == 0 {
            return;
        }
        let Some(filter) = filter else {
            for &k in &self.shapes[..len] {
                visit(k as usize, 0.0);
            }
            return;
        };
        self.filter::<true>(query, filter, len);
        let batches = len.div_ceil(HIT_LANES);
        let shapes = &self.shapes;
        answer_first(
            &self.masks[..batches],
            &self.t_below,
            |at| shapes[at],
            best,
            &mut visit,
        );
    }

    /// Counts the candidates that hit into `per_shape` and returns how many: the filter's
    /// certain hits as they stand, `hit(shape)` for the unsure ones (every one without a
    /// filter). Empties the buffer.
    #[inline]
    pub(crate) fn count(
        &mut self,
        query: &Segment,
        filter: Option<&LaneFilter>,
        per_shape: &mut [u64],
        hit: impl Fn(usize) -> bool,
    ) -> u32 {
        let len = std::mem::take(&mut self.len);
        let mut hits = 0;
        let Some(filter) = filter else {
            for &k in &self.shapes[..len] {
                if hit(k as usize) {
                    per_shape[k as usize] += 1;
                    hits += 1;
                }
            }
            return hits;
        };
        self.filter::<false>(query, filter, len);
        let masks = &self.masks[..len.div_ceil(HIT_LANES)];
        for (batch, m) in self.shapes.chunks_exact(HIT_LANES).zip(masks) {
            hits += m.hit.count_ones();
            let mut certain = m.hit;
            while certain != 0 {
                per_shape[batch[certain.trailing_zeros() as usize] as usize] += 1;
                certain &= certain - 1;
            }
            let mut unsure = m.unsure;
            while unsure != 0 {
                let k = batch[unsure.trailing_zeros() as usize] as usize;
                unsure &= unsure - 1;
                if hit(k) {
                    per_shape[k] += 1;
                    hits += 1;
                }
            }
        }
        hits
    }

    /// The verdicts of the first `len` candidates into `self.masks`, a pair per batch of
    /// sixteen, and with `T` their `t_below` into `self.t_below`.
    #[inline]
    fn filter<const T: bool>(&mut self, query: &Segment, filter: &LaneFilter, len: usize) {
        let mut masks = std::mem::take(&mut self.masks);
        let mut t_below = std::mem::take(&mut self.t_below);
        self.len = len;
        let run = if T { filter.run_first } else { filter.run };
        // SAFETY: `run` was compiled for a SIMD level this CPU runs (`LaneFilter::of` takes
        // the kernel's level, checked when the kernel was made).
        unsafe { run(query, self, &mut masks, &mut t_below) };
        self.len = 0;
        self.masks = masks;
        self.t_below = t_below;
    }
}
