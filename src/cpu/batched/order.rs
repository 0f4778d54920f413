//! The order a call's segments go in against many shapes (near one another in turn), and
//! their answers put back at each segment's place as they come.

use super::shape_cull::morton_keys;
use super::{CpuKernel, SLICE};
use crate::types::Segment;
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;

/// Shapes from which a call's segments go in [`spatial_order`]: about where their blocks,
/// values and grid outgrow a core's L2 cache.
const SPATIAL_ORDER_MIN_SHAPES: usize = 8192;

/// A permutation of `0..n`: place p holds index `self.0[p]`. Made only by [`spatial_order`],
/// whose counting pass hands out each index once (n within u32, which it asserts), so that
/// the answers written through it ([`CpuKernel::chunked_into`]) land each at a place of its
/// own.
pub(super) struct Order(Vec<u32>);

impl Order {
    pub(super) fn indices(&self) -> &[u32] {
        &self.0
    }
}

/// The order to take `segments` in (first hits and counts, whose results go back to each
/// segment's place; hits are listed in segment order), where [`takes_spatial_order`]: their
/// midpoints on a 256 × 256 lattice over their extent, cells in Morton order, segments in
/// index order within a cell, so that segments in turn read the same blocks, cells and
/// shapes (a lattice cell is about a cell of a grid over 100k shapes). On 1M bullets × 100k
/// walls (bullet hell, first hits) taking them as they come missed the caches at nearly every
/// block, and polygons' counts at nearly every polygon's edges. One counting pass, where the
/// full Morton order's comparison sort took 20 ms of 1M segments' 40 ms set-up.
fn spatial_order(segments: &[Segment], parallel: bool) -> Order {
    const BITS: u32 = 16;
    // Indices and counts in u32: more segments would wrap them, and places would repeat.
    assert!(
        u32::try_from(segments.len()).is_ok(),
        "more segments than u32 indices"
    );
    let keys = morton_keys(segments.len(), parallel, |k| {
        let s = &segments[k];
        (
            (s.x0 as f64 + s.x1 as f64) / 2.0,
            (s.y0 as f64 + s.y1 as f64) / 2.0,
        )
    });
    // A key's lattice cell: its top bits (eight an axis, interleaved).
    let cell = |key: u32| (key >> (32 - BITS)) as usize;
    // Each lattice cell's first place, then the indices dealt out in turn.
    let mut next = vec![0u32; (1 << BITS) + 1];
    for &key in &keys {
        next[cell(key) + 1] += 1;
    }
    for cell in 1..next.len() {
        next[cell] += next[cell - 1];
    }
    let mut order = vec![0u32; keys.len()];
    for (k, &key) in keys.iter().enumerate() {
        let place = &mut next[cell(key)];
        order[*place as usize] = k as u32;
        *place += 1;
    }
    Order(order)
}

/// Whether [`spatial_order`] pays for `segments` segments against `shapes` shapes: not for
/// few of either (taken as they come).
fn takes_spatial_order(segments: usize, shapes: usize) -> bool {
    // An `Order` holds u32 indices: beyond them it could not be a permutation.
    shapes >= SPATIAL_ORDER_MIN_SHAPES && (1024..=u32::MAX as usize).contains(&segments)
}

/// Puts each value of `in_order` (one per segment, in `order`) at its segment's place in `out`.
pub(super) fn scatter<T>(order: &Order, in_order: Vec<T>, out: &mut [T]) {
    for (&index, value) in order.0.iter().zip(in_order) {
        out[index as usize] = value;
    }
}

/// `out`'s places, written from several threads at once: each by one thread only, since
/// [`Places::put`] takes an index of the caller's own range and an [`Order`] maps distinct
/// indices to distinct places.
struct Places<'a, T> {
    out: *mut T,
    len: usize,
    order: &'a Order,
    _out: std::marker::PhantomData<&'a mut [T]>,
}

// SAFETY: threads write through `out` only at distinct places (`Places::put`), while the
// `&mut [T]` it came from is borrowed for `'a`.
unsafe impl<T: Send> Sync for Places<'_, T> {}

impl<T> Places<'_, T> {
    /// Stores `value` at the place of index `i` in `order`, `i` in `range`: the range of
    /// indices this thread answers.
    fn put(&self, range: &Range<usize>, i: usize, value: T) {
        assert!(range.contains(&i), "index {i} outside its chunk {range:?}");
        let place = self.order.0[i] as usize;
        assert!(place < self.len);
        // SAFETY: in bounds; index i belongs to one chunk, run by one thread, and no other
        // index has this place (`Order` is a permutation), so no other thread touches it.
        unsafe { *self.out.add(place) = value }
    }
}

impl CpuKernel {
    /// The order segments go in ([`spatial_order`], where it pays), and the segments gathered
    /// in it once (in one pass whose reads from anywhere in memory overlap, where the loop
    /// over them would wait on each), worked out on this kernel's threads.
    /// With one thread, on this one: a one-thread kernel runs nothing on a pool.
    pub(super) fn in_spatial_order<'a>(
        &self,
        segments: &'a [Segment],
        shapes: usize,
    ) -> (Option<Order>, Cow<'a, [Segment]>) {
        if !takes_spatial_order(segments.len(), shapes) {
            return (None, Cow::Borrowed(segments));
        }
        if self.threads == 1 {
            let order = spatial_order(segments, false);
            let in_turn = order.0.iter().map(|&k| segments[k as usize]).collect();
            return (Some(order), Cow::Owned(in_turn));
        }
        Self::install(&self.pool, || {
            let order = spatial_order(segments, true);
            let in_turn = order.0.par_iter().map(|&k| segments[k as usize]).collect();
            (Some(order), Cow::Owned(in_turn))
        })
    }

    /// Runs `each(indices, put)` over consecutive runs of `chunk` indices of `out`'s items,
    /// as [`CpuKernel::chunked`] does; `put(i, value)` stores item i's value at `out[i]`, or
    /// with an `order` at `out[order[i]]`: the answers of segments taken in order go to their
    /// places as each chunk ends (from a chunk's own small buffer), with no vector of the
    /// whole call in turn to fill and no serial pass to scatter it (1M circles' first hits:
    /// 9 ms and 16 ms on two threads). Answers written to their places one by one from inside
    /// the walk cost it more than that: the writes all over `out` evicted what it reads.
    pub(super) fn chunked_into<T: Send>(
        &self,
        out: &mut [T],
        order: Option<&Order>,
        chunk: usize,
        each: impl Fn(Range<usize>, &mut dyn FnMut(usize, T)) + Sync,
    ) {
        let Some(order) = order else {
            return self.chunked(out, chunk, 1, |start, part| {
                let range = start..start + part.len();
                each(range.clone(), &mut |i, value| {
                    assert!(range.contains(&i), "index {i} outside its chunk {range:?}");
                    part[i - start] = value
                })
            });
        };
        assert_eq!(order.0.len(), out.len(), "an order of every item");
        let places = Places {
            out: out.as_mut_ptr(),
            len: out.len(),
            order,
            _out: std::marker::PhantomData,
        };
        let chunk = chunk.max(1);
        let run = |c: usize| {
            let range = c * chunk..((c + 1) * chunk).min(places.len);
            let mut answers = Vec::with_capacity(range.len());
            // A slice at a time (`SLICE`), none once the call is cancelled.
            for first in range.clone().step_by(SLICE) {
                if self.cancelled() {
                    return;
                }
                let slice = first..(first + SLICE).min(range.end);
                each(slice, &mut |i, value| answers.push((i, value)));
            }
            for (i, value) in answers {
                places.put(&range, i, value);
            }
        };
        let chunks = places.len.div_ceil(chunk);
        if self.threads == 1 {
            for c in 0..chunks {
                if self.cancelled() {
                    return;
                }
                run(c);
            }
            return;
        }
        Self::install(&self.pool, || {
            (0..chunks).into_par_iter().for_each(|c| {
                if !self.cancelled() {
                    run(c)
                }
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::batched::CpuOptions;
    use crate::scene::{bullet_hell, clustered};

    #[test]
    fn segments_go_in_lattice_order_each_once_ties_by_index() {
        let mut scenes = vec![
            ("bullet hell", bullet_hell(5, 20_000, 0).0),
            ("clustered", clustered(6, 5_000, 0).0),
        ];
        // All at one point: one lattice cell, so the order is the index order.
        scenes.push(("one point", vec![Segment::new(3.0, 4.0, 3.0, 4.0); 100]));
        for (name, segments) in scenes {
            for parallel in [false, true] {
                let order = spatial_order(&segments, parallel);
                let keys = morton_keys(segments.len(), false, |k| {
                    let s = &segments[k];
                    (
                        (s.x0 as f64 + s.x1 as f64) / 2.0,
                        (s.y0 as f64 + s.y1 as f64) / 2.0,
                    )
                });
                let mut seen = vec![false; segments.len()];
                for &k in order.indices() {
                    assert!(!seen[k as usize], "{name}: segment {k} twice");
                    seen[k as usize] = true;
                }
                assert!(seen.iter().all(|&s| s), "{name}: a segment left out");
                let lattice = |k: u32| keys[k as usize] >> 16;
                for (p, pair) in order.indices().windows(2).enumerate() {
                    let (a, b) = (pair[0], pair[1]);
                    assert!(
                        (lattice(a), a) < (lattice(b), b),
                        "{name}: places {p} and {}: segment {a} (cell {}) before {b} (cell {})",
                        p + 1,
                        lattice(a),
                        lattice(b)
                    );
                }
            }
        }
    }

    #[test]
    fn answers_put_in_turn_land_at_their_segments_places() {
        let (segments, _) = bullet_hell(7, 10_007, 0);
        let order = spatial_order(&segments, false);
        // Each answer names its segment, so a misplaced one shows where it went.
        let mut want = vec![0u32; segments.len()];
        scatter(&order, order.indices().to_vec(), &mut want);
        assert!(want.iter().enumerate().all(|(i, &k)| k as usize == i));
        for threads in [1, 2, 3] {
            let kernel = CpuKernel::new(CpuOptions::threads(threads)).expect("a kernel");
            for chunk in [1, 97, 4096, 20_000] {
                let mut out = vec![u32::MAX; segments.len()];
                kernel.chunked_into(&mut out, Some(&order), chunk, |turns, put| {
                    for turn in turns {
                        put(turn, order.indices()[turn]);
                    }
                });
                if let Some(i) = (0..out.len()).find(|&i| out[i] != want[i]) {
                    panic!(
                        "{threads} threads, chunks of {chunk}: place {i} holds {}",
                        out[i]
                    );
                }
                let mut in_turn = vec![u32::MAX; segments.len()];
                kernel.chunked_into(&mut in_turn, None, chunk, |turns, put| {
                    for turn in turns {
                        put(turn, turn as u32);
                    }
                });
                assert!(in_turn.iter().enumerate().all(|(i, &k)| k as usize == i));
            }
        }
    }

    #[test]
    #[should_panic(expected = "outside its chunk")]
    fn an_answer_put_for_another_chunks_segment_is_refused() {
        let (segments, _) = bullet_hell(8, 2_000, 0);
        let order = spatial_order(&segments, false);
        let kernel = CpuKernel::new(CpuOptions::threads(1)).expect("a kernel");
        let mut out = vec![0u32; segments.len()];
        kernel.chunked_into(&mut out, Some(&order), 100, |turns, put| {
            put(turns.end % 2_000, 1)
        });
    }
}
