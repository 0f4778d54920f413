//! A chunk's results read back: what it copied into its staging buffer, and their expansion
//! into the caller's output (misses implied, packed results placed, the results not read back
//! decided on the host).

use std::ops::Range;

use crate::cpu::rect_pairs::WORD_PAIRS;
use crate::types::{PairResult, flags};

/// Pairs one thread expands at a time: larger ranges are spread over rayon's threads.
const EXPAND_PER_THREAD: usize = 1 << 16;

/// What a chunk copied into its staging buffer.
#[derive(Clone, Copy, Debug)]
pub(super) enum Copied {
    /// The compact header, then the first `packed` packed results.
    Compact { header_bytes: u64, packed: usize },
    /// Every pair's result.
    All,
}

/// Pairs the host decided while expanding a chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Decided {
    /// Left uncertain by the kernel.
    pub(super) uncertain: u64,
    /// Packed by the GPU but not read back.
    pub(super) not_read: u64,
}

impl std::ops::AddAssign for Decided {
    fn add_assign(&mut self, other: Self) {
        self.uncertain += other.uncertain;
        self.not_read += other.not_read;
    }
}

/// A chunk's results as read back: compact (the word headers of WGSL `Compact`, and all or
/// the first of the packed results), or every pair's result.
pub(super) struct ReadBack<'a> {
    /// Two words per word of pairs: where its packed results start, and its mask. `None`
    /// when `results` holds every pair's result.
    pub(super) headers: Option<&'a [u32]>,
    pub(super) results: &'a [PairResult],
    /// Pairs in the chunk.
    pub(super) pairs: usize,
}

impl ReadBack<'_> {
    /// Writes the results of the chunk's pairs `range` to `out`: a miss where a mask has no
    /// bit, the packed result where it has one, and `decide(pair)` (the exact CPU answer) where
    /// that result is uncertain or was not read back. Large ranges are spread over rayon's
    /// threads.
    pub(super) fn expand(
        &self,
        range: Range<usize>,
        out: &mut [PairResult],
        decide: &(impl Fn(usize) -> PairResult + Sync),
    ) -> Decided {
        debug_assert_eq!(range.len(), out.len());
        if out.len() <= EXPAND_PER_THREAD {
            return self.expand_run(range.start, out, decide);
        }
        use rayon::prelude::*;
        crate::cpu::workers::Workers::shared().install(|| {
            out.par_chunks_mut(EXPAND_PER_THREAD)
                .enumerate()
                .map(|(k, run)| self.expand_run(range.start + k * EXPAND_PER_THREAD, run, decide))
                .reduce(Decided::default, |mut a, b| {
                    a += b;
                    a
                })
        })
    }

    /// [`expand`](Self::expand) on one thread, for pairs `first..first + out.len()`.
    pub(super) fn expand_run(
        &self,
        first: usize,
        out: &mut [PairResult],
        decide: &impl Fn(usize) -> PairResult,
    ) -> Decided {
        let mut decided = Decided::default();
        let mut settle = |result: Option<&PairResult>, pair: usize| match result {
            Some(r) if r.flags != flags::UNCERTAIN => *r,
            Some(_) => {
                decided.uncertain += 1;
                decide(pair)
            }
            None => {
                decided.not_read += 1;
                decide(pair)
            }
        };
        let Some(headers) = self.headers else {
            let all = &self.results[first..first + out.len()];
            for (k, (result, r)) in out.iter_mut().zip(all).enumerate() {
                *result = settle(Some(r), first + k);
            }
            return decided;
        };
        let mut pair = first;
        let end = first + out.len();
        while pair < end {
            let word = pair / WORD_PAIRS;
            let lane = pair % WORD_PAIRS;
            let word_end = ((word + 1) * WORD_PAIRS).min(end);
            // The word's packed results start at headers[2 word]; lane's is past those of the
            // lanes before it.
            let mask = headers[2 * word + 1];
            let below = mask & ((1u64 << lane) - 1) as u32;
            let mut k = headers[2 * word] as usize + below.count_ones() as usize;
            let bits = mask >> lane;
            let run = &mut out[pair - first..word_end - first];
            if bits == 0 {
                run.fill(PairResult::MISS);
            } else {
                for (j, result) in run.iter_mut().enumerate() {
                    *result = if bits >> j & 1 == 0 {
                        PairResult::MISS
                    } else {
                        k += 1;
                        settle(self.results.get(k - 1), pair + j)
                    };
                }
            }
            pair = word_end;
        }
        decided
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::rect_pairs::compact_pairs;

    /// Results of every kind, uncertain ones among them, in runs of hits and misses.
    fn mixed_results(n: usize) -> Vec<PairResult> {
        (0..n)
            .map(|i| match (i * 7919) % 11 {
                0..=5 => PairResult::MISS,
                6 => PairResult {
                    t_enter: 0.0,
                    t_exit: 0.0,
                    flags: flags::UNCERTAIN,
                },
                k => PairResult {
                    t_enter: i as f32,
                    t_exit: k as f32,
                    flags: flags::HIT | (k as u32) << flags::ENTRY_SHIFT,
                },
            })
            .collect()
    }

    /// What the host's exact path gives a pair in these tests.
    fn exact(pair: usize) -> PairResult {
        PairResult {
            t_enter: -(pair as f32),
            t_exit: 0.0,
            flags: flags::HIT,
        }
    }

    fn expected(results: &[PairResult]) -> Vec<PairResult> {
        let settled = |(i, r): (usize, &PairResult)| {
            if r.flags == flags::UNCERTAIN {
                exact(i)
            } else {
                *r
            }
        };
        results.iter().enumerate().map(settled).collect()
    }

    #[test]
    fn compact_results_expand_to_the_full_ones_over_any_range() {
        let n = 3 * EXPAND_PER_THREAD + 77;
        let results = mixed_results(n);
        let mut headers = vec![0; 2 * n.div_ceil(WORD_PAIRS)];
        let mut packed = Vec::new();
        compact_pairs(&results, &mut headers, &mut packed);
        let compact = ReadBack {
            headers: Some(&headers),
            results: &packed,
            pairs: n,
        };
        let want = expected(&results);
        let uncertain = results
            .iter()
            .filter(|r| r.flags == flags::UNCERTAIN)
            .count() as u64;
        let mut out = vec![PairResult::MISS; n];
        let decided = compact.expand(0..n, &mut out, &exact);
        assert_eq!(out, want);
        assert_eq!(
            decided,
            Decided {
                uncertain,
                not_read: 0
            }
        );
        // Ranges that start and end inside words, as a tile of rects gives.
        for range in [5..6, 31..33, 40..200, 1000..1000 + EXPAND_PER_THREAD + 3] {
            let mut part = vec![PairResult::MISS; range.len()];
            compact.expand(range.clone(), &mut part, &exact);
            assert_eq!(part, want[range.clone()], "{range:?}");
        }
        // Every pair's result read back: the same.
        let all = ReadBack {
            headers: None,
            results: &results,
            pairs: n,
        };
        let mut out = vec![PairResult::MISS; n];
        assert_eq!(all.expand(0..n, &mut out, &exact).uncertain, uncertain);
        assert_eq!(out, want);
    }

    #[test]
    fn packed_results_not_read_back_are_decided_on_the_host() {
        let n = 1000;
        let results = mixed_results(n);
        let mut headers = vec![0; 2 * n.div_ceil(WORD_PAIRS)];
        let mut packed = Vec::new();
        compact_pairs(&results, &mut headers, &mut packed);
        let read = packed.len() / 3;
        let compact = ReadBack {
            headers: Some(&headers),
            results: &packed[..read],
            pairs: n,
        };
        let mut out = vec![PairResult::MISS; n];
        let decided = compact.expand(0..n, &mut out, &exact);
        assert_eq!(decided.not_read, (packed.len() - read) as u64);
        // Packed in word order here, so the unread ones are the last pairs that are not misses.
        let mut want = expected(&results);
        let mut unread = packed.len() - read;
        for (i, r) in results.iter().enumerate().rev() {
            if unread > 0 && r.flags != 0 {
                want[i] = exact(i);
                unread -= 1;
            }
        }
        assert_eq!(out, want);
    }
}
