//! The chunk ring the GPU hosts run their chunks through: up to [`CHUNKS_IN_FLIGHT`] chunks
//! submitted, each with its own staging buffer (its slot), and the oldest read back while the
//! later ones run. A read-back may ask for work again (a found list that overflowed, a chunk
//! split in two), which goes before the rest. On an error, the chunks still in flight give
//! their maps up, so the staging buffers serve the next call.
//!
//! The host says what to submit and how to read a chunk back; the order is the ring's: the
//! oldest chunk is read back before the next one's inputs go up (a buffer that grows is
//! replaced, and with it what an unread chunk left there).

use std::collections::VecDeque;

use super::timer::KernelTimer;
use crate::error::Result;

/// Chunks in flight at once, each with its own staging buffer: while the host waits for one
/// and merges its results, the GPU uploads and runs the next.
pub const CHUNKS_IN_FLIGHT: usize = 3;

/// Chunks in flight for a host with `timer`: one at a time while kernels are timed (the timer
/// waits for each dispatch).
pub(crate) fn ring_size(timer: Option<&KernelTimer>) -> usize {
    if timer.is_some_and(|t| t.total().is_some()) {
        1
    } else {
        CHUNKS_IN_FLIGHT
    }
}

/// A submitted chunk: the staging slot it holds until it is read back or cancelled.
pub(crate) trait Submitted {
    fn slot(&self) -> usize;
}

/// What a host does with the ring's chunks (`host` is handed to each step).
pub(crate) struct Steps<Submit, Finish, Cancel> {
    /// Uploads and dispatches one piece of work into a free slot (below the ring's size):
    /// `None` when it needed nothing submitted.
    pub submit: Submit,
    /// Reads a chunk back; `newest` when no later chunk is in flight. Work it pushes on
    /// `again` runs next, the last pushed first.
    pub finish: Finish,
    /// Gives a chunk's map up, after an error.
    pub cancel: Cancel,
}

/// Runs `work`, then what the read-backs ask again, through a ring of `size` chunks; stops with
/// [`Error::Cancelled`](crate::Error::Cancelled) before the next chunk once `token` is set.
pub(crate) fn run<H, W, C, Submit, Finish, Cancel>(
    host: &mut H,
    size: usize,
    mut work: impl Iterator<Item = W>,
    mut steps: Steps<Submit, Finish, Cancel>,
    token: Option<&crate::Cancel>,
) -> Result<()>
where
    C: Submitted,
    Submit: FnMut(&mut H, W, usize) -> Result<Option<C>>,
    Finish: FnMut(&mut H, C, bool, &mut Vec<W>) -> Result<()>,
    Cancel: FnMut(&mut H, C),
{
    let mut again = Vec::new();
    let mut in_flight: VecDeque<C> = VecDeque::new();
    let outcome = (|| loop {
        while in_flight.len() < size {
            let Some(piece) = again.pop().or_else(|| work.next()) else {
                break;
            };
            if token.is_some_and(crate::Cancel::is_cancelled) {
                return Err(crate::Error::Cancelled);
            }
            let slot = (0..size)
                .find(|&slot| in_flight.iter().all(|c| c.slot() != slot))
                .expect("the ring has a free slot");
            if let Some(chunk) = (steps.submit)(host, piece, slot)? {
                in_flight.push_back(chunk);
            }
        }
        let Some(oldest) = in_flight.pop_front() else {
            return Ok(());
        };
        (steps.finish)(host, oldest, in_flight.is_empty(), &mut again)?;
    })();
    for chunk in in_flight {
        (steps.cancel)(host, chunk);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::{Steps, Submitted, run};
    use crate::error::{Error, Result};

    /// A chunk of the test's host: its work item and slot.
    struct Chunk {
        work: u32,
        slot: usize,
    }

    impl Submitted for Chunk {
        fn slot(&self) -> usize {
            self.slot
        }
    }

    /// What happened, in order: `s3@1` submitted work 3 in slot 1, `f3` read it back, `c3`
    /// cancelled it.
    fn trace(work: Vec<u32>, size: usize, fail_at: Option<u32>) -> (Result<()>, Vec<String>) {
        trace_cancelled(work, size, fail_at, None)
    }

    /// [`trace`], with the call's cancel token set once work `cancel_at` is read back.
    fn trace_cancelled(
        work: Vec<u32>,
        size: usize,
        fail_at: Option<u32>,
        cancel_at: Option<u32>,
    ) -> (Result<()>, Vec<String>) {
        let mut log: Vec<String> = Vec::new();
        let token = crate::Cancel::new();
        let outcome = run(
            &mut log,
            size,
            work.into_iter(),
            Steps {
                submit: |log: &mut Vec<String>, work: u32, slot| {
                    log.push(format!("s{work}@{slot}"));
                    // Work 0 needs nothing submitted.
                    Ok((work != 0).then_some(Chunk { work, slot }))
                },
                finish: |log: &mut Vec<String>, chunk: Chunk, newest, again: &mut Vec<u32>| {
                    log.push(format!("f{}{}", chunk.work, if newest { "!" } else { "" }));
                    if Some(chunk.work) == cancel_at {
                        token.cancel();
                    }
                    if Some(chunk.work) == fail_at {
                        return Err(Error::Cancelled);
                    }
                    // Work 5 asks for its two halves, 51 then 52.
                    if chunk.work == 5 {
                        again.extend([52, 51]);
                    }
                    Ok(())
                },
                cancel: |log: &mut Vec<String>, chunk: Chunk| log.push(format!("c{}", chunk.work)),
            },
            Some(&token),
        );
        (outcome, log)
    }

    #[test]
    fn the_ring_reads_the_oldest_back_before_the_next_goes_up() {
        let (outcome, log) = trace(vec![1, 2, 3, 4], 3, None);
        assert!(outcome.is_ok());
        assert_eq!(
            log,
            ["s1@0", "s2@1", "s3@2", "f1", "s4@0", "f2", "f3", "f4!"]
        );
    }

    #[test]
    fn work_asked_again_goes_next_and_nothing_submitted_takes_no_slot() {
        let (outcome, log) = trace(vec![5, 0, 6], 2, None);
        assert!(outcome.is_ok());
        assert_eq!(
            log,
            [
                "s5@0", "s0@1", "s6@1", "f5", "s51@0", "f6", "s52@1", "f51", "f52!"
            ]
        );
    }

    #[test]
    fn an_error_cancels_every_chunk_still_in_flight() {
        let (outcome, log) = trace(vec![1, 2, 3, 4], 3, Some(1));
        assert!(matches!(outcome, Err(Error::Cancelled)));
        assert_eq!(log, ["s1@0", "s2@1", "s3@2", "f1", "c2", "c3"]);
    }

    #[test]
    fn a_ring_of_one_runs_each_chunk_alone() {
        let (_, log) = trace(vec![1, 2], 1, None);
        assert_eq!(log, ["s1@0", "f1!", "s2@0", "f2!"]);
    }

    #[test]
    fn a_cancel_stops_the_ring_before_its_next_chunk_and_gives_up_those_in_flight() {
        let (outcome, log) = trace_cancelled(vec![1, 2, 3, 4, 5], 2, None, Some(1));
        assert!(matches!(outcome, Err(Error::Cancelled)), "{outcome:?}");
        assert_eq!(log, ["s1@0", "s2@1", "f1", "c2"]);
    }
}
