//! The CPU batch path's second cull for shapes: the hit alone, eight (query, shape) pairs at a
//! time, where floating point certifies it ([`Shape::hit_lanes`]).
//!
//! The box cull ([`super::batched`]) keeps every shape whose box meets the query's; for long
//! segments against walls that is nearly half of all pairs, and most of them miss. Each kept
//! candidate's values are copied into a lane of [`HitLanes`]; eight at a time go through the
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

use super::batched::{LANES, Simd};
use crate::shape::Shape;
use crate::types::Segment;

/// Pairs per call of a lane filter.
pub const HIT_LANES: usize = 8;

/// Eight shapes' values ([`Shape::lane_values`]) for one call of [`Shape::hit_lanes`], one
/// array per value (struct of arrays, so each value is one vector). The filter chooses its
/// precision: walls compute in f32, circles in f64.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub struct HitLanes {
    pub values: [[f32; HIT_LANES]; 4],
}

impl HitLanes {
    pub const ZERO: Self = Self {
        values: [[0.0; HIT_LANES]; 4],
    };

    /// Lanes holding `shapes` (at most eight; the others zero).
    pub fn of<S: Shape>(shapes: &[S]) -> Self {
        let mut lanes = Self::ZERO;
        for (lane, shape) in shapes.iter().take(HIT_LANES).enumerate() {
            for (array, value) in lanes.values.iter_mut().zip(shape.lane_values()) {
                array[lane] = value;
            }
        }
        lanes
    }
}

/// A lane filter's verdicts, one per lane: `hit` where floating point certifies a hit,
/// `unsure` where only the exact path can tell. A lane in neither misses, certainly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneVerdicts {
    pub hit: [bool; HIT_LANES],
    pub unsure: [bool; HIT_LANES],
}

impl LaneVerdicts {
    /// Nothing certified: every lane goes to the exact path.
    pub const UNSURE: Self = Self {
        hit: [false; HIT_LANES],
        unsure: [true; HIT_LANES],
    };
}

/// A candidate's verdict in [`Candidates`]: a certain miss.
const MISS: u8 = 0;
/// A certain hit.
const HIT: u8 = 1;
/// Only the exact path can tell.
const UNSURE: u8 = 2;

/// Sixteen shapes' lane values ([`Shape::lane_values`]), one array per value: beside the box
/// cull's block of the same sixteen shapes, so that the box cull hands on the values of the
/// shapes it keeps.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct ValueBlock {
    pub values: [[f32; LANES]; 4],
}

/// A shape's lane filter, compiled for one SIMD level, and the values it reads of each shape.
pub(crate) struct LaneFilter {
    /// The values in the box cull's layout order.
    pub(crate) blocks: Vec<ValueBlock>,
    /// Shape k's place in that order.
    place: Vec<u32>,
    run: unsafe fn(&Segment, &Candidates, &mut [u8]),
}

impl LaneFilter {
    /// The filter of `S` over `shapes` on `simd` (a level this CPU runs), their values laid out
    /// in `order` (the box cull's: place p holds shape `order[p]`); `None` for a shape without
    /// one ([`Shape::HIT_LANES`]).
    pub(crate) fn of<S: Shape>(simd: Simd, shapes: &[S], order: &[u32]) -> Option<Self> {
        if !S::HIT_LANES {
            return None;
        }
        let run: unsafe fn(&Segment, &Candidates, &mut [u8]) = match simd {
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => x86::avx512::<S>,
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => x86::avx2::<S>,
            _ => portable::<S>,
        };
        let mut blocks = vec![
            ValueBlock {
                values: [[0.0; LANES]; 4]
            };
            shapes.len().div_ceil(LANES)
        ];
        let mut place = vec![0; shapes.len()];
        for (p, &k) in order.iter().enumerate() {
            let values = shapes[k as usize].lane_values();
            for (array, value) in blocks[p / LANES].values.iter_mut().zip(values) {
                array[p % LANES] = value;
            }
            place[k as usize] = p as u32;
        }
        Some(Self { blocks, place, run })
    }

    /// Shape `k`'s values.
    #[inline(always)]
    fn values(&self, k: usize) -> [f32; 4] {
        let p = self.place[k] as usize;
        let block = &self.blocks[p / LANES];
        block.values.map(|array| array[p % LANES])
    }
}

/// Every batch of eight candidates through `S`'s filter: `verdicts[i]` for candidate i
/// ([`HIT`], [`UNSURE`] or [`MISS`]; lanes past the last candidate read the buffer's slack and
/// are ignored).
#[inline(always)]
fn filter_all<S: Shape>(query: &Segment, candidates: &Candidates, verdicts: &mut [u8]) {
    let batches = candidates.len.div_ceil(HIT_LANES);
    for (c, out) in verdicts[..batches * HIT_LANES]
        .chunks_exact_mut(HIT_LANES)
        .enumerate()
    {
        let at = c * HIT_LANES;
        let mut lanes = HitLanes::ZERO;
        for (lane, values) in lanes.values.iter_mut().zip(&candidates.values) {
            lane.copy_from_slice(&values[at..at + HIT_LANES]);
        }
        let v = S::hit_lanes(query, &lanes);
        for (lane, out) in out.iter_mut().enumerate() {
            *out = (v.hit[lane] as u8 * HIT) | (v.unsure[lane] as u8 * UNSURE);
        }
    }
}

fn portable<S: Shape>(query: &Segment, candidates: &Candidates, verdicts: &mut [u8]) {
    filter_all::<S>(query, candidates, verdicts)
}

/// The same filter compiled with each level's instructions (the filters are
/// `#[inline(always)]`, so their bodies take these functions' target features).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Candidates, filter_all};
    use crate::shape::Shape;
    use crate::types::Segment;

    #[target_feature(enable = "avx512f")]
    pub(super) fn avx512<S: Shape>(query: &Segment, c: &Candidates, verdicts: &mut [u8]) {
        filter_all::<S>(query, c, verdicts)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn avx2<S: Shape>(query: &Segment, c: &Candidates, verdicts: &mut [u8]) {
        filter_all::<S>(query, c, verdicts)
    }
}

/// One query's candidates, in the order found: their shapes and, when the shapes have a lane
/// filter, their lane values (struct of arrays), with slack past the end for whole-vector
/// stores and reads. [`Candidates::sieve`] filters them all at once, after they are all
/// written (so no vector read waits on the scalar writes just before it).
pub(crate) struct Candidates {
    pub(crate) shapes: Vec<u32>,
    pub(crate) values: [Vec<f32>; 4],
    pub(crate) len: usize,
    verdicts: Vec<u8>,
}

impl Candidates {
    /// Room for every shape of `blocks` box-cull blocks (and `LANES` more, for the SIMD
    /// stores).
    pub(crate) fn new(blocks: usize, filter: Option<&LaneFilter>) -> Self {
        let room = (blocks + 1) * LANES;
        let values = if filter.is_some() { room } else { 0 };
        Self {
            shapes: vec![0; room],
            values: std::array::from_fn(|_| vec![0.0; values]),
            len: 0,
            verdicts: vec![MISS; values],
        }
    }

    /// Appends shape `k` (with its values, given the filter).
    #[inline(always)]
    pub(crate) fn push(&mut self, k: usize, filter: Option<&LaneFilter>) {
        let at = self.len;
        self.ensure_room(at + LANES);
        self.shapes[at] = k as u32;
        if let Some(filter) = filter {
            for (array, value) in self.values.iter_mut().zip(filter.values(k)) {
                array[at] = value;
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
            self.verdicts.resize(room, MISS);
        }
    }

    /// Whether it was made for a filter (and so keeps the candidates' values).
    pub(crate) fn keeps_values(&self) -> bool {
        !self.verdicts.is_empty()
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
        let len = self.len;
        if let Some(filter) = filter {
            self.filter(query, filter);
            for (&k, &verdict) in self.shapes[..len].iter().zip(&self.verdicts) {
                if verdict != MISS {
                    visit(k as usize, verdict == HIT);
                }
            }
        } else {
            self.shapes[..len]
                .iter()
                .for_each(|&k| visit(k as usize, false));
        }
        self.len = 0;
    }

    /// Counts the candidates that hit into `per_shape` and returns how many: the filter's
    /// certain hits without a branch, `hit(shape)` for the unsure ones (every one without a
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
        self.len = len;
        self.filter(query, filter);
        self.len = 0;
        for (&k, &verdict) in self.shapes[..len].iter().zip(&self.verdicts) {
            let certain = (verdict & HIT) as u32;
            per_shape[k as usize] += certain as u64;
            hits += certain;
            if verdict == UNSURE && hit(k as usize) {
                per_shape[k as usize] += 1;
                hits += 1;
            }
        }
        hits
    }

    /// Every candidate's verdict into `self.verdicts`.
    #[inline]
    fn filter(&mut self, query: &Segment, filter: &LaneFilter) {
        let mut verdicts = std::mem::take(&mut self.verdicts);
        // SAFETY: `run` was compiled for a SIMD level this CPU runs (`LaneFilter::of` takes
        // the kernel's level, checked when the kernel was made).
        unsafe { (filter.run)(query, self, &mut verdicts) };
        self.verdicts = verdicts;
    }
}
