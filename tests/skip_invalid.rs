//! A game's frame with bad bullets and hitboxes: under `Batch::skip_invalid` every invalid
//! element misses and is listed, and every valid pair is answered as if the bad ones were never
//! there (checked against the strict query over the valid elements alone, indices mapped back);
//! the strict default still fails; a rect set rebuilt with a bad hitbox keeps the others.

mod common;

use common::{cpu_engine, gpu_engine};
use rectcast::gpu::frames::{FrameCapacity, Frames};
use rectcast::scene::random_batch;
use rectcast::{
    Batch, BroadPhase, Counts, Engine, Error, Filter, FirstHit, GpuLimits, Hit, InputArray,
    InputError, Problem, Rect, RectSet, Segment,
};

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;
const BEYOND: f32 = 1e19; // past ±2^62

/// A frame of `random_batch` with bad values planted: NaN, ±infinite and out-of-range bullets,
/// and hitboxes with those and with min above max. A hitbox and a bullet at the origin, where a
/// skipped element's stand-in lies, show any stand-in that is tested.
fn bad_frame() -> (Vec<Segment>, Vec<Rect>) {
    let (mut segments, mut rects) = random_batch(77, 2500, 1200, 100.0);
    rects[10] = Rect::new(-1.0, -1.0, 1.0, 1.0);
    segments[20] = Segment::new(-5.0, -5.0, 5.0, 5.0);
    segments[0].x0 = NAN;
    segments[17].y1 = -INF;
    segments[25_00 - 1].x1 = BEYOND;
    segments[1000] = Segment::new(NAN, NAN, NAN, NAN);
    rects[3].min_y = NAN;
    rects[500].max_x = INF;
    rects[501].min_x = -BEYOND;
    rects[1199] = Rect {
        min_x: 5.0,
        max_x: 4.0,
        ..rects[1199]
    };
    (segments, rects)
}

fn valid_segment(s: &Segment) -> bool {
    rectcast::validate::check_segment(0, s).is_ok()
}

fn valid_rect(r: &Rect) -> bool {
    rectcast::validate::check_rect(0, r).is_ok()
}

/// Indices of the valid elements.
fn kept<T>(items: &[T], valid: impl Fn(&T) -> bool) -> Vec<u32> {
    (0..items.len() as u32)
        .filter(|&i| valid(&items[i as usize]))
        .collect()
}

/// The answers a frame with skipped elements must give: the strict queries over the valid
/// elements only (a CPU engine), their indices mapped back to the frame's.
struct Expected {
    first: Vec<FirstHit>,
    hits: Vec<Hit>,
    counts: Counts,
    skipped_segments: Vec<usize>,
    skipped_rects: Vec<usize>,
}

/// Teams: a filter per segment and per rect.
type Teams<'a> = Option<(&'a [Filter], &'a [Filter])>;

fn expected(segments: &[Segment], rects: &[Rect], teams: Teams) -> Expected {
    let (ks, kr) = (kept(segments, valid_segment), kept(rects, valid_rect));
    let sub_segments: Vec<Segment> = ks.iter().map(|&i| segments[i as usize]).collect();
    let sub_rects: Vec<Rect> = kr.iter().map(|&i| rects[i as usize]).collect();
    let pick = |f: &[Filter], keep: &[u32]| -> Vec<Filter> {
        keep.iter().map(|&i| f[i as usize]).collect()
    };
    let sub_teams = teams.map(|(s, r)| (pick(s, &ks), pick(r, &kr)));
    let mut batch = Batch::new(&sub_segments, &sub_rects);
    if let Some((s, r)) = &sub_teams {
        batch = batch.with_segment_filters(s).with_rect_filters(r);
    }
    let mut cpu = cpu_engine();
    let sub_first = cpu.first_hit(&batch).expect("the valid elements alone");
    let mut first = vec![FirstHit::NONE; segments.len()];
    for (j, hit) in sub_first.iter().enumerate() {
        let mut hit = *hit;
        if hit.rect != FirstHit::NO_RECT {
            hit.rect = kr[hit.rect as usize];
        }
        first[ks[j] as usize] = hit;
    }
    let hits = (cpu.hits(&batch).expect("hits").into_iter())
        .map(|h| Hit {
            segment: ks[h.segment as usize],
            rect: kr[h.rect as usize],
            ..h
        })
        .collect();
    let sub_counts = cpu.counts(&batch).expect("counts");
    let mut counts = Counts {
        per_segment: vec![0; segments.len()],
        per_target: vec![0; rects.len()],
    };
    for (j, &c) in sub_counts.per_segment.iter().enumerate() {
        counts.per_segment[ks[j] as usize] = c;
    }
    for (j, &c) in sub_counts.per_target.iter().enumerate() {
        counts.per_target[kr[j] as usize] = c;
    }
    let skipped =
        |n: usize, keep: &[u32]| (0..n).filter(|i| !keep.contains(&(*i as u32))).collect();
    Expected {
        first,
        hits,
        counts,
        skipped_segments: skipped(segments.len(), &ks),
        skipped_rects: skipped(rects.len(), &kr),
    }
}

/// The first differing element of two slices, printed with its segment.
fn assert_same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    want: &[T],
    got: &[T],
    segments: &[Segment],
) {
    if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
        panic!(
            "{what}: element {i} differs (segment {:?}): want {:?}, got {:?}",
            segments.get(i),
            want.get(i),
            got.get(i)
        );
    }
}

fn indices(errors: &[InputError]) -> Vec<usize> {
    errors.iter().map(|e| e.index).collect()
}

/// Runs the skipping queries on `engine` and checks them against [`expected`].
fn assert_skipping_frame(what: &str, engine: &mut Engine, teams: Teams) {
    let (segments, rects) = bad_frame();
    let want = expected(&segments, &rects, teams);
    assert!(
        want.hits.len() > 1000,
        "{what}: a frame with few hits proves little"
    );
    let mut batch = Batch::new(&segments, &rects).skip_invalid();
    if let Some((s, r)) = teams {
        batch = batch.with_segment_filters(s).with_rect_filters(r);
    }
    let mut first = vec![FirstHit::NONE; segments.len()];
    engine.first_hit_into(&batch, &mut first).expect("answered");
    assert_same(
        &format!("{what}: first hits"),
        &want.first,
        &first,
        &segments,
    );
    let skipped = engine.last_skipped().clone();
    assert_eq!(indices(&skipped.segments), want.skipped_segments, "{what}");
    assert_eq!(indices(&skipped.rects), want.skipped_rects, "{what}");
    assert_eq!(skipped.count(), 8, "{what}: every planted value");
    let hits = engine.hits(&batch).expect("answered");
    assert_same(&format!("{what}: hits"), &want.hits, &hits, &segments);
    let counts = engine.counts(&batch).expect("answered");
    assert_same(
        &format!("{what}: per segment"),
        &want.counts.per_segment,
        &counts.per_segment,
        &segments,
    );
    assert_eq!(
        want.counts.per_target, counts.per_target,
        "{what}: per rect"
    );
    // A clean frame next: nothing skipped.
    let (clean, clean_rects) = random_batch(5, 10, 10, 100.0);
    engine
        .first_hit(&Batch::new(&clean, &clean_rects).skip_invalid())
        .expect("answered");
    assert!(
        engine.last_skipped().is_empty(),
        "{what}: stale skipped list"
    );
}

#[test]
fn a_frame_with_bad_bullets_and_hitboxes_answers_every_valid_pair_on_the_cpu() {
    for broad_phase in [BroadPhase::On, BroadPhase::Off] {
        let mut cpu = cpu_engine();
        cpu.set_broad_phase(broad_phase);
        assert_skipping_frame(&format!("cpu, grid {}", broad_phase.name()), &mut cpu, None);
    }
}

#[test]
fn a_frame_with_bad_bullets_and_hitboxes_and_teams_answers_every_valid_pair_on_the_cpu() {
    let (segments, rects) = team_filters();
    assert_skipping_frame("cpu, teams", &mut cpu_engine(), Some((&segments, &rects)));
    if let Some(mut gpu) = gpu_engine("bad bullets and teams on the gpu", GpuLimits::default()) {
        assert_skipping_frame("gpu, teams", &mut gpu, Some((&segments, &rects)));
    }
}

/// Three teams of bullets and of hitboxes; a bullet tests two teams of hitboxes.
fn team_filters() -> (Vec<Filter>, Vec<Filter>) {
    let team = |n: u32, mask| (0..n).map(|i| Filter::new(1 << (i % 3), mask)).collect();
    (team(2500, 0b101), team(1200, 0b111))
}

#[test]
fn a_frame_with_bad_bullets_and_hitboxes_answers_every_valid_pair_on_the_gpu() {
    for broad_phase in [BroadPhase::On, BroadPhase::Off] {
        let Some(mut gpu) = gpu_engine("a_frame_with_bad_bullets_on_the_gpu", GpuLimits::default())
        else {
            return;
        };
        gpu.set_broad_phase(broad_phase);
        assert_skipping_frame(&format!("gpu, grid {}", broad_phase.name()), &mut gpu, None);
    }
}

#[test]
fn the_strict_default_fails_the_frame_naming_the_first_bad_value() {
    let (segments, rects) = bad_frame();
    let mut out = vec![FirstHit::NONE; segments.len()];
    let err = cpu_engine()
        .first_hit_into(&Batch::new(&segments, &rects), &mut out)
        .expect_err("a NaN bullet");
    match err {
        Error::Input(e) => assert_eq!(
            e,
            InputError {
                array: InputArray::Segments,
                index: 0,
                field: "x0",
                problem: Problem::NotANumber
            }
        ),
        other => panic!("expected Error::Input, got {other}"),
    }
    assert!(
        out.iter().all(|h| *h == FirstHit::NONE),
        "the output was written"
    );
}

#[test]
fn a_wrong_filter_length_still_fails_a_skipping_frame() {
    let (segments, rects) = bad_frame();
    let filters = vec![Filter::ALL; 3];
    let batch = Batch::new(&segments, &rects)
        .with_segment_filters(&filters)
        .skip_invalid();
    match cpu_engine().first_hit(&batch) {
        Err(Error::FilterLength { got: 3, .. }) => {}
        other => panic!("expected Error::FilterLength, got {other:?}"),
    }
}

#[test]
fn a_rect_set_rebuilt_with_bad_hitboxes_keeps_the_others_and_they_miss() {
    let (segments, rects) = bad_frame();
    let mut set = RectSet::default();
    assert!(set.rebuild(&rects).is_err(), "the strict rebuild refuses");
    assert!(set.rects().is_empty(), "the strict rebuild empties the set");
    let skipped = indices(set.rebuild_skipping_invalid(&rects));
    assert_eq!(skipped, [3, 500, 501, 1199]);
    assert_eq!(set.rects().len(), rects.len(), "every index kept");
    // The bullets are valid here, so a strict batch over the set is answered.
    let good: Vec<Segment> = segments.iter().copied().filter(valid_segment).collect();
    let want = expected(&good, &rects, None);
    for broad_phase in [BroadPhase::On, BroadPhase::Off] {
        let mut cpu = cpu_engine();
        cpu.set_broad_phase(broad_phase);
        let first = cpu.first_hit(&Batch::over(&good, &set)).expect("answered");
        assert_same("over the set", &want.first, &first, &good);
        assert_eq!(indices(&cpu.last_skipped().rects), skipped);
        let counts = cpu.counts(&Batch::over(&good, &set)).expect("answered");
        assert_eq!(counts.per_target, want.counts.per_target);
    }
    // On a GPU, whose grid of the set is built there and kept for it.
    if let Some(mut gpu) = gpu_engine(
        "a_rect_set_with_bad_hitboxes_on_the_gpu",
        GpuLimits::default(),
    ) {
        gpu.set_broad_phase(BroadPhase::On);
        let first = gpu.first_hit(&Batch::over(&good, &set)).expect("answered");
        assert_same("gpu over the set", &want.first, &first, &good);
        let hits = gpu.hits(&Batch::over(&good, &set)).expect("answered");
        assert_same("gpu hits over the set", &want.hits, &hits, &good);
        assert_eq!(indices(&gpu.last_skipped().rects), skipped);
    }
    // The stand-ins lie within the valid rects' bounds: the grid is the one of a set whose bad
    // rects were valid points there.
    let mut pointed = rects.clone();
    for &i in &skipped {
        pointed[i] = Rect::new(
            rects[0].min_x,
            rects[0].min_y,
            rects[0].min_x,
            rects[0].min_y,
        );
    }
    let far = |r: &Rect| Rect::new(r.min_x + 1e6, r.min_y + 1e6, r.max_x + 1e6, r.max_y + 1e6);
    let far_rects: Vec<Rect> = rects.iter().map(far).collect();
    let far_pointed: Vec<Rect> = pointed.iter().map(far).collect();
    set.rebuild_skipping_invalid(&far_rects);
    let strict = RectSet::new(&far_pointed).expect("valid");
    assert_eq!(
        (set.cells(), set.entries()),
        (strict.cells(), strict.entries())
    );
    // A clean rebuild clears the list.
    set.rebuild_skipping_invalid(&rects[4..400]);
    assert!(set.skipped().is_empty());
}

#[test]
fn frames_skip_bad_bullets_and_hitboxes_on_the_gpu() {
    let Some(gpu) = gpu_engine("frames_skip_bad_bullets", GpuLimits::default()) else {
        return;
    };
    let context = gpu.gpu_context().expect("on the gpu");
    let (segments, rects) = bad_frame();
    let want = expected(&segments, &rects, None);
    let mut frames = Frames::new(context, FrameCapacity::new(2500, 1200)).expect("frames");
    let strict = frames.write(&Batch::new(&segments, &rects));
    assert!(matches!(strict, Err(Error::Input(_))), "{strict:?}");
    frames
        .write(&Batch::new(&segments, &rects).skip_invalid())
        .expect("written");
    assert_eq!(
        indices(&frames.last_skipped().segments),
        want.skipped_segments
    );
    assert_eq!(indices(&frames.last_skipped().rects), want.skipped_rects);
    let id = frames.dispatch().expect("dispatch");
    let mut first = vec![FirstHit::NONE; segments.len()];
    frames.read(id, &mut first).expect("read");
    assert_same("frames", &want.first, &first, &segments);
}
