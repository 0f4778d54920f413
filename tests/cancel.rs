//! `Engine::set_cancel`: a cancelled engine answers every query with `Error::Cancelled` and
//! runs again after `Cancel::reset`, with the uncancelled answers; a long call cancelled from
//! another thread stops between its chunks instead of running to its end, on the CPU and on
//! the GPU (whose waits for a chunk stop too).
//!
//! scripts/test.sh: native only (cancelling changes no arithmetic).

mod common;

use std::time::{Duration, Instant};

use rectcast::{
    Backend, Batch, BroadPhase, Cancel, Circle, CpuOptions, Engine, Error, FirstHit, Polygons,
    Rect, Segment,
};

fn scene(n: usize, m: usize) -> (Vec<Segment>, Vec<Rect>) {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 10_000) as f32 / 10.0
    };
    let segments = (0..n)
        .map(|_| Segment::new(next(), next(), next(), next()))
        .collect();
    let rects = (0..m)
        .map(|_| {
            let (x, y) = (next(), next());
            Rect::new(x, y, x + 8.0, y + 8.0)
        })
        .collect();
    (segments, rects)
}

fn engine(threads: usize) -> Engine {
    let options = CpuOptions::threads(threads);
    Engine::with_cpu_options(Backend::Cpu, options).unwrap()
}

#[test]
fn a_cancelled_engine_answers_every_query_cancelled_and_runs_again_after_reset() {
    let (s, r) = scene(3_000, 200);
    let walls: Vec<Segment> = s[..100].to_vec();
    let circles: Vec<Circle> = r
        .iter()
        .map(|b| Circle::new(b.min_x, b.min_y, 5.0))
        .collect();
    let squares = Polygons::new(
        r.iter()
            .flat_map(|b| {
                [
                    [b.min_x, b.min_y],
                    [b.max_x, b.min_y],
                    [b.max_x, b.max_y],
                    [b.min_x, b.max_y],
                ]
            })
            .collect(),
        (0..=r.len() as u32).map(|i| 4 * i).collect(),
    )
    .unwrap();
    for threads in [1, 2] {
        let mut uncancelled = engine(threads);
        let mut e = engine(threads);
        let cancel = Cancel::new();
        e.set_cancel(Some(cancel.clone()));
        cancel.cancel();
        let batch = Batch::new(&s, &r);
        let cancelled = |what: &str, outcome: Result<(), Error>| {
            assert!(
                matches!(outcome, Err(Error::Cancelled)),
                "{threads} threads: {what}: {outcome:?}, not Cancelled"
            );
        };
        cancelled("pairs", e.pairs(&s, &r).map(drop));
        cancelled("first_hit", e.first_hit(&batch).map(drop));
        cancelled("hits", e.hits(&batch).map(drop));
        cancelled("counts", e.counts(&batch).map(drop));
        for broad_phase in [BroadPhase::On, BroadPhase::Off] {
            e.set_broad_phase(broad_phase);
            cancelled("wall hits", e.shape_hits(&s, &walls).map(drop));
            cancelled(
                "circle first hits",
                e.shape_first_hits(&s, &circles).map(drop),
            );
            cancelled("circle counts", e.shape_counts(&s, &circles).map(drop));
            cancelled("polygon hits", e.polygon_hits(&s, &squares).map(drop));
            cancelled(
                "polygon first hits",
                e.polygon_first_hits(&s, &squares).map(drop),
            );
        }
        cancel.reset();
        e.set_broad_phase(BroadPhase::Auto);
        assert_eq!(
            e.first_hit(&batch).unwrap(),
            uncancelled.first_hit(&batch).unwrap()
        );
        assert_eq!(
            e.counts(&batch).unwrap(),
            uncancelled.counts(&batch).unwrap()
        );
        assert_eq!(
            e.shape_hits(&s, &circles).unwrap(),
            uncancelled.shape_hits(&s, &circles).unwrap()
        );
    }
}

#[test]
fn a_long_call_cancelled_from_another_thread_stops_between_chunks() {
    // Brute force over every pair: about a second's work on one thread here.
    let (s, r) = scene(100_000, 1_000);
    for threads in [1, 2] {
        let mut e = engine(threads);
        e.set_broad_phase(BroadPhase::Off);
        let batch = Batch::new(&s, &r);
        let start = Instant::now();
        e.counts(&batch).unwrap();
        let whole = start.elapsed();
        let cancel = Cancel::new();
        e.set_cancel(Some(cancel.clone()));
        let canceller = {
            let cancel = cancel.clone();
            std::thread::spawn(move || {
                std::thread::sleep(whole / 20);
                cancel.cancel();
            })
        };
        let start = Instant::now();
        let outcome = e.counts(&batch);
        let stopped = start.elapsed();
        canceller.join().unwrap();
        assert!(
            matches!(outcome, Err(Error::Cancelled)),
            "{threads} threads: {outcome:?}"
        );
        // Chunks are at most an eighth of the 100,000 segments: far less than the whole call.
        assert!(
            stopped < whole / 2 + Duration::from_millis(50),
            "{threads} threads: cancelled after {stopped:?}, the whole call takes {whole:?}"
        );
    }
}

/// Long segments across a sparse scene: the chunk's length, from each segment's estimated work
/// (a few of the grid's entries), is one chunk for the whole call, whose every segment walks
/// hundreds of cells. A cancel is looked at within the chunk, so the call stops soon after it
/// rather than at the chunk's end, for rects' counts and hits and for polygons' hits.
#[test]
fn a_dense_chunk_of_long_segments_cancelled_from_another_thread_stops_within_it() {
    let (_, r) = scene(0, 100_000);
    let r: Vec<Rect> = r
        .iter()
        .map(|b| Rect::new(b.min_x, b.min_y, b.min_x + 0.5, b.min_y + 0.5))
        .collect();
    let (ends, _) = scene(8_192, 0);
    // From one side of the scene to the other.
    let s: Vec<Segment> = ends
        .iter()
        .map(|e| Segment::new(0.0, e.y0, 1000.0, e.y1))
        .collect();
    let squares = Polygons::new(
        r[..20_000]
            .iter()
            .flat_map(|b| {
                [
                    [b.min_x, b.min_y],
                    [b.max_x, b.min_y],
                    [b.max_x, b.max_y],
                    [b.min_x, b.max_y],
                ]
            })
            .collect(),
        (0..=20_000u32).map(|i| 4 * i).collect(),
    )
    .unwrap();
    let batch = Batch::new(&s, &r);
    type Call<'a> = Box<dyn Fn(&mut Engine) -> Result<(), Error> + 'a>;
    let calls: [(&str, Call, &[usize]); 3] = [
        ("counts", Box::new(|e| e.counts(&batch).map(drop)), &[1, 2]),
        ("hits", Box::new(|e| e.hits(&batch).map(drop)), &[2]),
        (
            "polygon hits",
            Box::new(|e| e.polygon_hits(&s, &squares).map(drop)),
            &[2],
        ),
    ];
    for (what, call, threads) in &calls {
        for &threads in *threads {
            let mut e = engine(threads);
            e.set_broad_phase(BroadPhase::On);
            let start = Instant::now();
            call(&mut e).unwrap();
            let whole = start.elapsed();
            let cancel = Cancel::new();
            e.set_cancel(Some(cancel.clone()));
            let canceller = {
                let cancel = cancel.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(whole / 20);
                    cancel.cancel();
                })
            };
            let start = Instant::now();
            let outcome = call(&mut e);
            let stopped = start.elapsed();
            canceller.join().unwrap();
            assert!(
                matches!(outcome, Err(Error::Cancelled)),
                "{what}, {threads} threads: {outcome:?}"
            );
            // A slice is 512 of the 8,192 segments: at the chunk's end would be the whole call.
            assert!(
                stopped < whole / 2,
                "{what}, {threads} threads: cancelled after {stopped:?}, the whole call takes \
                 {whole:?}"
            );
        }
    }
}

/// A cancel set and reset while a call runs (a game's frame dropped, then the next one
/// started) must not leave that call answering `Ok` with chunks it skipped: every call here
/// either answers in full, the uncancelled answer, or is `Cancelled`.
#[test]
fn a_cancel_set_and_reset_during_a_call_never_leaves_skipped_chunks_in_an_ok_answer() {
    let (s, r) = scene(20_000, 200);
    let batch = Batch::new(&s, &r);
    let expected = engine(1).first_hit(&batch).unwrap();
    for threads in [1, 2] {
        let mut e = engine(threads);
        let cancel = Cancel::new();
        e.set_cancel(Some(cancel.clone()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let toggler = {
            let (cancel, stop) = (cancel.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    cancel.cancel();
                    std::thread::sleep(Duration::from_micros(20));
                    cancel.reset();
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let (mut answered, mut cancelled) = (0, 0);
        for call in 0..400 {
            let mut out = vec![FirstHit::NONE; s.len()];
            match e.first_hit_into(&batch, &mut out) {
                Ok(()) => {
                    answered += 1;
                    if let Some(i) = (0..s.len()).find(|&i| out[i] != expected[i]) {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                        panic!(
                            "{threads} threads, call {call}: Ok, but segment {i} {:?} has {:?}, \
                             not {:?}",
                            s[i], out[i], expected[i]
                        );
                    }
                }
                Err(Error::Cancelled) => cancelled += 1,
                Err(e) => panic!("{e}"),
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        toggler.join().unwrap();
        eprintln!("{threads} threads: {answered} calls answered, {cancelled} cancelled");
    }
}

#[test]
fn a_long_gpu_call_cancelled_from_another_thread_stops_within_a_chunk_and_runs_again() {
    let Some(mut gpu) = common::gpu_engine("cancel", rectcast::GpuLimits::default()) else {
        return;
    };
    // The brute force over every pair, in chunks (a software GPU's rect tiles; on a hardware
    // GPU, chunks of 2^18 segments): 2.4 s on lavapipe here.
    gpu.set_broad_phase(BroadPhase::Off);
    let (s, r) = scene(150_000, 2_000);
    let batch = Batch::new(&s, &r);
    let start = Instant::now();
    let expected = gpu.counts(&batch).unwrap();
    let whole = start.elapsed();
    let chunks = gpu.last_gpu_call().expect("a GPU call").chunks;
    assert!(chunks >= 3, "{chunks} chunks");
    let cancel = Cancel::new();
    gpu.set_cancel(Some(cancel.clone()));
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(whole / 10);
            cancel.cancel();
        })
    };
    let start = Instant::now();
    let outcome = gpu.counts(&batch);
    let stopped = start.elapsed();
    canceller.join().unwrap();
    assert!(matches!(outcome, Err(Error::Cancelled)), "{outcome:?}");
    // At most a chunk or two past the cancel (a chunk being submitted, on a software GPU whose
    // submissions wait for the one before), far less than the whole call.
    let most = whole / 10 + whole * 2 / chunks as u32 + Duration::from_millis(100);
    assert!(
        stopped < most.min(whole * 3 / 4),
        "cancelled after {stopped:?}, the whole call takes {whole:?} in {chunks} chunks"
    );
    cancel.reset();
    let again = gpu.counts(&batch).unwrap();
    assert!(again == expected, "the call after the cancel differs");
}
