//! The segment × segment contract (docs/semantics.md, "Segment × segment"): named cases, the
//! exact oracle on seeded scenes full of degeneracies, and the symmetries the answer must keep.

mod common;

use common::degenerate::{random_segment, valid};
use rectcast::scene::SplitMix64;
use rectcast::{Contact, Segment, SegmentContact, segment_segment};

fn s(x0: f32, y0: f32, x1: f32, y1: f32) -> Segment {
    Segment::new(x0, y0, x1, y1)
}

#[track_caller]
fn expect(query: Segment, wall: Segment, contact: Contact, t_enter: f32, t_exit: f32) {
    let got = segment_segment(&query, &wall);
    let want = SegmentContact {
        t_enter,
        t_exit,
        contact: contact.code(),
    };
    assert_eq!(
        got,
        want,
        "query {query:?} wall {wall:?}: got {:?} {got:?}",
        got.contact()
    );
    assert_eq!(
        got,
        common::segments::segment_segment(&query, &wall),
        "the oracle"
    );
}

#[test]
fn crossing_diagonals_cross_at_the_middle() {
    expect(
        s(0.0, 0.0, 2.0, 2.0),
        s(0.0, 2.0, 2.0, 0.0),
        Contact::Cross,
        0.5,
        0.5,
    );
}

#[test]
fn a_crossing_a_third_of_the_way_is_rounded_to_nearest() {
    // t = 1/3 exactly: the f32 nearest to it, not a float division's guess.
    expect(
        s(0.0, 0.0, 3.0, 0.0),
        s(1.0, -1.0, 1.0, 1.0),
        Contact::Cross,
        1.0 / 3.0,
        1.0 / 3.0,
    );
}

#[test]
fn an_end_on_the_wall_touches() {
    // The query ends on the wall's interior (a T), and starts on it.
    expect(
        s(0.0, 0.0, 1.0, 0.0),
        s(1.0, -1.0, 1.0, 1.0),
        Contact::Touch,
        1.0,
        1.0,
    );
    expect(
        s(1.0, 0.0, 3.0, 0.0),
        s(1.0, -1.0, 1.0, 1.0),
        Contact::Touch,
        0.0,
        0.0,
    );
    // The wall's end on the query's interior.
    expect(
        s(0.0, 0.0, 4.0, 0.0),
        s(1.0, 0.0, 1.0, 5.0),
        Contact::Touch,
        0.25,
        0.25,
    );
}

#[test]
fn two_ends_that_meet_touch() {
    expect(
        s(0.0, 0.0, 1.0, 1.0),
        s(1.0, 1.0, 2.0, 0.0),
        Contact::Touch,
        1.0,
        1.0,
    );
}

#[test]
fn near_misses_by_one_ulp_miss() {
    let below = f32::from_bits(1.0f32.to_bits() - 1);
    expect(
        s(0.0, 0.0, below, 0.0),
        s(1.0, -1.0, 1.0, 1.0),
        Contact::Miss,
        0.0,
        0.0,
    );
    // The wall stops one ulp short of the query's line.
    expect(
        s(0.0, 0.0, 2.0, 0.0),
        s(1.0, f32::from_bits(1), 1.0, 1.0),
        Contact::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn parallel_overlapping_segments_overlap() {
    // The classic defect: collinear overlapping lines reported as a miss.
    expect(
        s(0.0, 0.0, 4.0, 0.0),
        s(1.0, 0.0, 3.0, 0.0),
        Contact::Overlap,
        0.25,
        0.75,
    );
    // The wall covers the query's start: the common part starts at t = 0.
    expect(
        s(0.0, 0.0, 4.0, 4.0),
        s(3.0, 3.0, -1.0, -1.0),
        Contact::Overlap,
        0.0,
        0.75,
    );
    // A wall longer than the query on both sides: all of it.
    expect(
        s(1.0, 1.0, 2.0, 2.0),
        s(0.0, 0.0, 9.0, 9.0),
        Contact::Overlap,
        0.0,
        1.0,
    );
}

#[test]
fn collinear_segments_meeting_end_to_end_touch_and_apart_miss() {
    expect(
        s(0.0, 0.0, 1.0, 0.0),
        s(1.0, 0.0, 2.0, 0.0),
        Contact::Touch,
        1.0,
        1.0,
    );
    expect(
        s(0.0, 0.0, 1.0, 0.0),
        s(1.5, 0.0, 2.0, 0.0),
        Contact::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn parallel_segments_on_distinct_lines_miss() {
    expect(
        s(0.0, 0.0, 4.0, 0.0),
        s(0.0, 1e-30, 4.0, 1e-30),
        Contact::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn a_point_wall_touches_where_it_lies() {
    expect(
        s(0.0, 0.0, 8.0, 0.0),
        s(2.0, 0.0, 2.0, 0.0),
        Contact::Touch,
        0.25,
        0.25,
    );
    expect(
        s(0.0, 0.0, 8.0, 0.0),
        s(2.0, 1.0, 2.0, 1.0),
        Contact::Miss,
        0.0,
        0.0,
    );
    expect(
        s(0.0, 0.0, 8.0, 0.0),
        s(9.0, 0.0, 9.0, 0.0),
        Contact::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn a_point_query_on_the_wall_touches_for_every_t() {
    expect(
        s(1.0, 1.0, 1.0, 1.0),
        s(0.0, 0.0, 2.0, 2.0),
        Contact::Touch,
        0.0,
        1.0,
    );
    expect(
        s(1.0, 1.0, 1.0, 1.0),
        s(0.0, 0.0, 2.0, 2.1),
        Contact::Miss,
        0.0,
        0.0,
    );
    // Two points: equal ones touch.
    expect(
        s(3.0, -2.0, 3.0, -2.0),
        s(3.0, -2.0, 3.0, -2.0),
        Contact::Touch,
        0.0,
        1.0,
    );
    expect(
        s(-0.0, 0.0, 0.0, -0.0),
        s(0.0, 0.0, 0.0, 0.0),
        Contact::Touch,
        0.0,
        1.0,
    );
}

#[test]
fn huge_and_subnormal_coordinates_are_exact() {
    let big = 4_611_686_018_427_387_904.0f32; // 2^62, the largest valid magnitude
    expect(
        s(-big, -big, big, big),
        s(-big, big, big, -big),
        Contact::Cross,
        0.5,
        0.5,
    );
    let tiny = f32::from_bits(1); // 2^-149
    expect(
        s(0.0, 0.0, 4.0 * tiny, 4.0 * tiny),
        s(0.0, 4.0 * tiny, 4.0 * tiny, 0.0),
        Contact::Cross,
        0.5,
        0.5,
    );
    // A crossing whose t is itself subnormal: the wall at x = 2^-149 on a query of length
    // 2^62, t = 2^-211, which rounds to 0.
    expect(
        s(0.0, 0.0, big, 0.0),
        s(tiny, -1.0, tiny, 1.0),
        Contact::Cross,
        0.0,
        0.0,
    );
}

/// A wall for `query`: one time in four on the query's line, its ends at dyadic fractions of the
/// query (collinear cases), else another of `random_segment`'s.
fn wall_for(rng: &mut SplitMix64, query: &Segment, scale: f32) -> Segment {
    if rng.below(4) != 0 {
        return random_segment(rng, scale);
    }
    let mut along = || [-1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5][rng.below(7) as usize];
    let (a, b) = (along(), along());
    let (dx, dy) = (query.x1 - query.x0, query.y1 - query.y0);
    s(
        query.x0 + a * dx,
        query.y0 + a * dy,
        query.x0 + b * dx,
        query.y0 + b * dy,
    )
}

#[test]
fn seeded_scenes_full_of_degeneracies_give_the_oracles_answer() {
    let mut rng = SplitMix64::new(17);
    let mut seen = [0usize; 4];
    for i in 0..60_000 {
        let scale = [1.0, 1e-40, 3e18, 0.001][i % 4];
        let query = random_segment(&mut rng, scale);
        let wall = wall_for(&mut rng, &query, scale);
        if !valid(&query) || !valid(&wall) {
            continue;
        }
        let got = segment_segment(&query, &wall);
        let want = common::segments::segment_segment(&query, &wall);
        assert_eq!(
            got,
            want,
            "case {i}: query {query:?} wall {wall:?}: got {:?}, the oracle {:?}",
            got.contact(),
            want.contact()
        );
        seen[got.contact as usize] += 1;
    }
    // Every kind shows up often enough to count.
    assert!(seen.iter().all(|&n| n > 500), "contacts seen: {seen:?}");
}

#[test]
fn the_walls_direction_does_not_matter() {
    let mut rng = SplitMix64::new(18);
    for _ in 0..20_000 {
        let (query, wall) = (random_segment(&mut rng, 1.0), random_segment(&mut rng, 1.0));
        let reversed = s(wall.x1, wall.y1, wall.x0, wall.y0);
        assert_eq!(
            segment_segment(&query, &wall),
            segment_segment(&query, &reversed),
            "query {query:?} wall {wall:?}"
        );
    }
}

#[test]
fn swapping_query_and_wall_keeps_the_contact() {
    let mut rng = SplitMix64::new(19);
    for _ in 0..20_000 {
        let (a, b) = (random_segment(&mut rng, 1.0), random_segment(&mut rng, 1.0));
        let (ab, ba) = (segment_segment(&a, &b), segment_segment(&b, &a));
        // A point query touches over all its t, so only the contact is symmetric.
        assert_eq!(ab.contact(), ba.contact(), "{a:?} and {b:?}");
    }
}

#[test]
fn scaling_and_translating_by_powers_of_two_keep_every_byte() {
    let mut rng = SplitMix64::new(20);
    for _ in 0..20_000 {
        // Small integers, so that every image below is exact.
        let mut grid = || rng.below(17) as f32 - 8.0;
        let (query, wall) = (
            s(grid(), grid(), grid(), grid()),
            s(grid(), grid(), grid(), grid()),
        );
        let want = segment_segment(&query, &wall);
        for k in [-140, -20, 3, 40, 58] {
            // In f64: a debug build computes 2f32.powi(-140) as 1 / 2^140, which overflows to
            // a zero factor.
            let f = 2f64.powi(k) as f32;
            let scale = |v: &Segment| s(v.x0 * f, v.y0 * f, v.x1 * f, v.y1 * f);
            assert_eq!(
                segment_segment(&scale(&query), &scale(&wall)),
                want,
                "2^{k}: {query:?} {wall:?}"
            );
        }
        let shift = 1048576.0; // 2^20
        let moved = |v: &Segment| s(v.x0 + shift, v.y0 - shift, v.x1 + shift, v.y1 - shift);
        assert_eq!(
            segment_segment(&moved(&query), &moved(&wall)),
            want,
            "{query:?} {wall:?}"
        );
    }
}

#[test]
fn a_t_halfway_between_two_floats_rounds_to_even() {
    // The wall crosses the x axis midway between its ends' x: t = 0.5 + 2^-25, halfway
    // between 0.5 (even) and 0.5 + 2^-24 (odd).
    let ulp = 2f32.powi(-24);
    expect(
        s(0.0, 0.0, 1.0, 0.0),
        s(0.5, -1.0, 0.5 + ulp, 1.0),
        Contact::Cross,
        0.5,
        0.5,
    );
    // t = 0.5 + 1.5 · 2^-24: between 0.5 + 2^-24 (odd) and 0.5 + 2^-23 (even).
    expect(
        s(0.0, 0.0, 1.0, 0.0),
        s(0.5 + ulp, -1.0, 0.5 + 2.0 * ulp, 1.0),
        Contact::Cross,
        0.5 + 2.0 * ulp,
        0.5 + 2.0 * ulp,
    );
}

#[test]
fn the_narrow_integers_give_the_references_contact_and_t_wherever_they_reach() {
    use rectcast::cpu::segment_segment::narrow::contact_narrow;
    let mut rng = SplitMix64::new(29);
    let (mut seen, mut beyond) = ([0usize; 4], 0usize);
    for i in 0..120_000 {
        // Grid scenes at every scale (subnormal to huge), a quarter of them collinear, and now
        // and then a value of any exponent, past the narrow integers' reach.
        let scale = [1.0, 1e-40, 3e18, 0.001, 7.0][i % 5];
        let query = random_segment(&mut rng, scale);
        let wall = wall_for(&mut rng, &query, scale);
        if !valid(&query) || !valid(&wall) {
            continue;
        }
        let Some(got) = contact_narrow(&query, &wall) else {
            beyond += 1;
            continue;
        };
        let want = segment_segment(&query, &wall);
        assert_eq!(
            (got.contact(), got.t_enter.to_bits(), got.t_exit.to_bits()),
            (
                want.contact(),
                want.t_enter.to_bits(),
                want.t_exit.to_bits()
            ),
            "case {i}: query {query:?} wall {wall:?}"
        );
        seen[got.contact as usize] += 1;
    }
    // Every contact is reached on narrow integers, most pairs are (a value of any exponent
    // comes in one pair of three), and some are not.
    let narrow: usize = seen.iter().sum();
    assert!(seen.iter().all(|&n| n > 500), "contacts seen: {seen:?}");
    assert!(
        narrow > beyond && beyond > 1000,
        "{narrow} narrow, {beyond} beyond"
    );
}

#[test]
fn values_a_few_binary_orders_too_far_apart_are_left_to_the_wide_integers() {
    use rectcast::cpu::segment_segment::narrow::contact_narrow;
    // 62 binary orders between the smallest bit and the largest: narrow. One more: not.
    let tiny = 2f32.powi(-30);
    let within = (s(0.0, 0.0, 2f32.powi(31), 1.0), s(tiny, -1.0, tiny, 1.0));
    assert_eq!(
        contact_narrow(&within.0, &within.1),
        Some(segment_segment(&within.0, &within.1))
    );
    let past = (s(0.0, 0.0, 2f32.powi(32), 1.0), s(tiny, -1.0, tiny, 1.0));
    assert_eq!(contact_narrow(&past.0, &past.1), None);
    assert_eq!(segment_segment(&past.0, &past.1).contact(), Contact::Cross);
}

#[test]
fn the_gpu_gives_the_oracles_answer_on_both_sides_of_the_narrow_integers_reach_at_every_scale() {
    use common::degenerate::{binary_orders, segment_spanning};
    use rectcast::cpu::segment_segment::narrow::contact_narrow;
    let Some(mut gpu) = common::gpu_engine("wall_pairs", rectcast::GpuLimits::default()) else {
        return;
    };
    let mut rng = SplitMix64::new(31);
    // Pairs on each side of the reach (62 orders: narrow; 63: wide), and their contacts.
    let (mut sides, mut seen) = ([0usize; 2], [0usize; 4]);
    // Grids from the subnormals (the small value at 2^-149) to the largest valid values.
    for b in [-86, -60, -31, -1, 0, 9, 33, 59] {
        for orders in [62, 63] {
            let mut batch = |n| -> Vec<Segment> {
                (0..n)
                    .map(|_| segment_spanning(&mut rng, b, orders))
                    .collect()
            };
            let (queries, walls) = (batch(48), batch(40));
            let got = gpu.wall_pairs(&queries, &walls).expect("gpu");
            let mut want = Vec::with_capacity(got.len());
            for q in &queries {
                for w in &walls {
                    let values = [q.x0, q.y0, q.x1, q.y1, w.x0, w.y0, w.x1, w.y1];
                    assert_eq!(binary_orders(&values), Some(orders), "{q:?} {w:?}");
                    // The CPU's narrow path takes exactly the pairs within the reach.
                    assert_eq!(contact_narrow(q, w).is_some(), orders <= 62, "{q:?} {w:?}");
                    let contact = common::segments::segment_segment(q, w);
                    seen[contact.contact as usize] += 1;
                    sides[(orders - 62) as usize] += 1;
                    want.push(contact);
                }
            }
            assert_same_contacts(
                &format!("grid 2^{b}, values spanning {orders} binary orders"),
                &queries,
                &walls,
                &want,
                &got,
            );
        }
    }
    assert!(seen.iter().all(|&n| n > 20), "contacts seen: {seen:?}");
    assert!(
        sides.iter().all(|&n| n > 10_000),
        "pairs per side: {sides:?}"
    );
}

/// `n` segments for a dense batch, at a scale, with the degeneracies of `random_segment`.
fn batch(seed: u64, n: usize, scale: f32) -> Vec<Segment> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let segment = random_segment(&mut rng, scale);
        if valid(&segment) {
            out.push(segment);
        }
    }
    out
}

#[track_caller]
fn assert_same_contacts(
    what: &str,
    queries: &[Segment],
    walls: &[Segment],
    want: &[SegmentContact],
    got: &[SegmentContact],
) {
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        let (q, w) = (queries[i / walls.len()], walls[i % walls.len()]);
        panic!(
            "{what}: first difference at pair {i} (query {}, wall {}):\n  query {q:?}\n  wall  {w:?}\n  cpu {:?} {:?}\n  gpu {:?} {:?}",
            i / walls.len(),
            i % walls.len(),
            want[i].contact(),
            want[i],
            got[i].contact(),
            got[i]
        );
    }
}

#[test]
fn the_gpu_gives_the_cpus_bytes_on_seeded_scenes() {
    let Some(mut gpu) = common::gpu_engine("wall_pairs", rectcast::GpuLimits::default()) else {
        return;
    };
    let mut cpu = common::cpu_engine();
    let mut seen = [0usize; 4];
    for (seed, scale) in [(1, 1.0), (2, 1e-40), (3, 3e18), (4, 0.001)] {
        let (queries, walls) = (batch(seed, 120, scale), batch(seed + 100, 90, scale));
        let want = cpu.wall_pairs(&queries, &walls).expect("cpu");
        let got = gpu.wall_pairs(&queries, &walls).expect("gpu");
        assert_same_contacts(&format!("scale {scale}"), &queries, &walls, &want, &got);
        for c in &want {
            seen[c.contact as usize] += 1;
        }
        // The exact oracle, pair by pair: the GPU is judged by the contract, not by the CPU.
        let oracle: Vec<SegmentContact> = queries
            .iter()
            .flat_map(|q| {
                walls
                    .iter()
                    .map(move |w| common::segments::segment_segment(q, w))
            })
            .collect();
        assert_same_contacts(
            &format!("oracle, scale {scale}"),
            &queries,
            &walls,
            &oracle,
            &got,
        );
    }
    assert!(seen.iter().all(|&n| n > 20), "contacts seen: {seen:?}");
}

/// scripts/test.sh: native only (how the work is split into tiles and chunks, which no
/// emulated arithmetic changes: the default limits' tests run under each).
#[test]
fn wall_batches_over_tiny_limits_are_chunked_invisibly() {
    // 4 KiB bindings: 256 segments or walls and 341 contacts per dispatch; 4 workgroups per
    // dimension, so dispatches are 2D; more walls than one binding holds: wall tiles.
    let limits = common::tiny_limits();
    let Some(mut gpu) = common::gpu_engine("wall_batches_over_tiny_limits", limits) else {
        return;
    };
    let (queries, walls) = (batch(5, 40, 1.0), batch(6, 300, 1.0));
    let want = common::cpu_engine()
        .wall_pairs(&queries, &walls)
        .expect("cpu");
    let got = gpu.wall_pairs(&queries, &walls).expect("gpu");
    assert_same_contacts("tiny limits", &queries, &walls, &want, &got);
}

#[test]
fn an_invalid_wall_is_named_before_any_work() {
    let queries = [s(0.0, 0.0, 1.0, 1.0)];
    let walls = [s(0.0, 0.0, 1.0, 1.0), s(0.0, f32::NAN, 1.0, 1.0)];
    let e = common::cpu_engine()
        .wall_pairs(&queries, &walls)
        .unwrap_err();
    assert_eq!(e.to_string(), "wall 1: y0 is NaN");
    let queries = [s(0.0, 0.0, f32::INFINITY, 1.0)];
    let e = common::cpu_engine()
        .wall_pairs(&queries, &walls[..1])
        .unwrap_err();
    assert!(e.to_string().starts_with("segment 0: x1"), "{e}");
}

#[test]
fn the_float_filter_certifies_only_the_references_answers() {
    use rectcast::cpu::segment_segment::filters::contact_filtered;
    let mut rng = SplitMix64::new(21);
    let (mut certified, mut total) = (0usize, 0usize);
    for i in 0..200_000 {
        // Half the scenes uniform (the filter's case), half the degenerate generator's.
        let (query, wall) = if i % 2 == 0 {
            let mut v = || rng.range(-100.0, 100.0);
            (s(v(), v(), v(), v()), s(v(), v(), v(), v()))
        } else {
            let scale = [1.0, 1e-40, 3e18, 0.001][(i / 2) % 4];
            (
                random_segment(&mut rng, scale),
                random_segment(&mut rng, scale),
            )
        };
        if !valid(&query) || !valid(&wall) {
            continue;
        }
        total += 1;
        if let Some(got) = contact_filtered(&query, &wall) {
            certified += 1;
            assert_eq!(
                got,
                segment_segment(&query, &wall),
                "case {i}: query {query:?} wall {wall:?}"
            );
        }
    }
    // The filter must do its job: most pairs never reach the exact integers.
    assert!(
        certified * 10 > total * 8,
        "{certified} of {total} certified"
    );
    // The CPU engine (filter, then the reference) gives the reference's bytes.
    let (queries, walls) = (batch(7, 300, 1.0), batch(8, 200, 1.0));
    let want: Vec<SegmentContact> = queries
        .iter()
        .flat_map(|q| walls.iter().map(move |w| segment_segment(q, w)))
        .collect();
    let got = common::cpu_engine()
        .wall_pairs(&queries, &walls)
        .expect("cpu");
    assert_same_contacts("cpu engine", &queries, &walls, &want, &got);
}

#[test]
fn crossings_whose_t_sits_on_a_rounding_boundary_are_left_to_the_exact_path() {
    use rectcast::cpu::segment_segment::filters::contact_filtered;
    // t = 0.5 + 2^-25 exactly, halfway between two f32: no float interval can certify it.
    let ulp = 2f32.powi(-24);
    let (query, wall) = (s(0.0, 0.0, 1.0, 0.0), s(0.5, -1.0, 0.5 + ulp, 1.0));
    assert_eq!(contact_filtered(&query, &wall), None);
    // A plain crossing is certified.
    let got = contact_filtered(&s(0.0, 0.0, 2.0, 2.0), &s(0.0, 2.0, 2.0, 0.0));
    assert_eq!(got.map(|c| c.contact()), Some(Contact::Cross));
}

/// The lane filter's verdicts for `query` against `walls` (up to sixteen), as plain code (the
/// engines run it compiled for each SIMD level: tests/fast_cpu.rs).
fn lane_verdicts(query: &Segment, walls: &[Segment]) -> rectcast::cpu::lanes::LaneVerdicts {
    use rectcast::Shape;
    use rectcast::cpu::lanes::HitLanes;
    Segment::hit_lanes(query, &HitLanes::of(walls))
}

#[test]
fn the_lane_filter_certifies_only_the_references_hits() {
    let mut rng = SplitMix64::new(23);
    let mut tally = common::lanes::LaneTally::default();
    for i in 0..40_000 {
        // Subnormal scales (1e-40, and 1e-21 whose products go subnormal) are left to the
        // exact path almost always: there the verdicts must be right, not many.
        let scale = [1.0, 1e-40, 3e18, 0.001, 1e-21][i % 5];
        let normal = scale == 1.0 || scale == 3e18 || scale == 0.001;
        let query = random_segment(&mut rng, scale);
        // Half uniform (the filter's case), half the degenerate generator's.
        let walls: Vec<Segment> = (0..rectcast::cpu::lanes::HIT_LANES)
            .map(|_| {
                if i % 2 == 0 {
                    let mut v = || rng.range(-100.0, 100.0) * scale;
                    s(v(), v(), v(), v())
                } else {
                    random_segment(&mut rng, scale)
                }
            })
            .collect();
        if !valid(&query) || !walls.iter().all(valid) {
            continue;
        }
        let want: Vec<(bool, f32)> = walls
            .iter()
            .map(|wall| {
                let contact = segment_segment(&query, wall);
                (contact.hit(), contact.t_enter)
            })
            .collect();
        for (wall, &(want, _)) in walls.iter().zip(&want) {
            assert_eq!(
                rectcast::cpu::segment_segment::filters::wall_hit(&query, wall),
                want,
                "wall_hit, case {i}: query {query:?} wall {wall:?}"
            );
        }
        tally.check(&lane_verdicts(&query, &walls), &want, normal, |lane| {
            format!(
                "case {i} lane {lane}: query {query:?} wall {:?}",
                walls[lane]
            )
        });
    }
    tally.assert_enough();
}

#[test]
fn an_end_on_the_other_line_or_collinear_walls_are_left_to_the_exact_path() {
    // An end on the query's line, collinear overlap, a point wall: none certain.
    let query = s(0.0, 0.0, 4.0, 0.0);
    let walls = [
        s(2.0, 0.0, 2.0, 3.0),
        s(1.0, 0.0, 6.0, 0.0),
        s(3.0, 0.0, 3.0, 0.0),
    ];
    let verdicts = lane_verdicts(&query, &walls);
    assert_eq!(verdicts.unsure[..3], [true; 3]);
    // A proper crossing and a wall wholly on one side are certain.
    let verdicts = lane_verdicts(&query, &[s(1.0, -1.0, 2.0, 1.0), s(1.0, 1.0, 3.0, 2.0)]);
    assert_eq!((verdicts.hit[0], verdicts.unsure[0]), (true, false));
    assert_eq!((verdicts.hit[1], verdicts.unsure[1]), (false, false));
}

#[test]
fn an_orientation_whose_products_underflow_is_never_certain_of_the_wrong_sign() {
    use rectcast::cpu::segment_segment::filters::certain_cross_f32;
    // Points near one line at 1e-20, whose cross products go subnormal: rounded to 2^-149
    // steps they can differ by one step while the exact orientation has the other sign
    // (found by a search; Shewchuk's relative bound alone certified it).
    let coord = |x: f32, y: f32| robust::Coord {
        x: x as f64,
        y: y as f64,
    };
    let check = |a: (f32, f32), b: (f32, f32), c: (f32, f32)| {
        let (pos, neg) = certain_cross_f32(b.0 - a.0, b.1 - a.1, c.0 - a.0, c.1 - a.1);
        let exact = robust::orient2d(coord(a.0, a.1), coord(b.0, b.1), coord(c.0, c.1));
        let wrong = (pos && exact <= 0.0) || (neg && exact >= 0.0);
        assert!(
            !wrong,
            "a {a:?} b {b:?} c {c:?}: certain {pos}/{neg}, exact {exact:e}"
        );
    };
    check(
        (1.23328e-19, 1.6127507e-19),
        (1.4040419e-19, 5.773377e-20),
        (1.4165075e-19, 5.0175257e-20),
    );
    check(
        (2.9395433e-20, 2.932767e-20),
        (1.4840018e-20, 1.9827348e-20),
        (8.129973e-21, 1.5447701e-20),
    );
    // The same family, seeded: points about 2^-60 to 2^-80 near a line, nudged by an ulp.
    let mut rng = SplitMix64::new(29);
    for _ in 0..200_000 {
        let base = 2f32.powi(-(60 + rng.below(20) as i32));
        let mut v = || base * rng.range(1.0, 3.0);
        let (a, b) = ((v(), v()), (v(), v()));
        let t = rng.range(-0.5, 1.5);
        let nudge = |x: f32, k: u64| f32::from_bits((x.to_bits() as i64 + k as i64 - 1) as u32);
        let c = (
            nudge(a.0 + (b.0 - a.0) * t, rng.below(3)),
            nudge(a.1 + (b.1 - a.1) * t, rng.below(3)),
        );
        check(a, b, c);
    }
}

/// The seeded scenes of the GPU test, and two more scales: 1e-21, where products are
/// subnormal, and 1 again with another seed.
const COUNT_SCENES: [(u64, f32); 6] = [
    (1, 1.0),
    (2, 1e-40),
    (3, 3e18),
    (4, 0.001),
    (5, 1e-21),
    (6, 1.0),
];

#[test]
fn the_orientation_filter_and_the_hit_alone_give_the_oracles_hit() {
    use rectcast::cpu::segment_segment::{
        WALLS_APART, WALLS_CROSS, segment_segment_hit, wall_verdict,
    };
    for (seed, scale) in COUNT_SCENES {
        let (queries, walls) = (batch(seed, 120, scale), batch(seed + 100, 90, scale));
        let (mut apart, mut cross, mut pairs) = (0usize, 0usize, 0usize);
        for q in &queries {
            for w in &walls {
                let want = common::segments::segment_segment(q, w);
                let verdict = wall_verdict(q, w);
                let at = format!("scale {scale}: query {q:?}, wall {w:?}, oracle {want:?}");
                if verdict == WALLS_APART {
                    assert!(!want.hit(), "certified apart, but they meet: {at}");
                    apart += 1;
                } else if verdict == WALLS_CROSS {
                    assert_eq!(want.contact(), Contact::Cross, "certified crossing: {at}");
                    cross += 1;
                }
                assert_eq!(segment_segment_hit(q, w), want.hit(), "the hit alone: {at}");
                pairs += 1;
            }
        }
        eprintln!("scale {scale}: {apart} apart and {cross} crossing of {pairs} pairs certified");
        // Subnormal products leave most pairs to the integers; elsewhere the filter decides
        // most of them, both ways.
        if scale != 1e-21 && scale != 1e-40 {
            assert!(apart > pairs / 3 && cross > pairs / 50, "scale {scale}");
        }
    }
}

#[test]
fn the_gpus_counts_first_hits_and_hits_are_the_oracles_on_seeded_scenes() {
    gpu_queries_match_the_oracle(rectcast::GpuLimits::default(), "default");
}

/// Apart from the default limits' test, so that the two run at once (they share the kernels).
/// scripts/test.sh: native only (how the work is split into tiles and chunks, which no
/// emulated arithmetic changes: the default limits' tests run under each).
#[test]
fn the_gpus_counts_first_hits_and_hits_are_the_oracles_over_tiny_limits() {
    gpu_queries_match_the_oracle(common::tiny_limits(), "tiny limits");
}

fn gpu_queries_match_the_oracle(limits: rectcast::GpuLimits, what: &str) {
    let Some(mut gpu) = common::gpu_engine("wall_queries", limits) else {
        return;
    };
    for (seed, scale) in COUNT_SCENES {
        // Over tiny limits, more walls than one binding holds: wall tiles, and each
        // query's pairs split over several dispatches. Fewer queries there: the scales are
        // the default run's to cover, the tiles and chunks this one's.
        let (n, m) = if what == "tiny limits" {
            (24, 300)
        } else {
            (120, 90)
        };
        let (queries, walls) = (batch(seed, n, scale), batch(seed + 100, m, scale));
        let pairs: Vec<SegmentContact> = queries
            .iter()
            .flat_map(|q| {
                walls
                    .iter()
                    .map(move |w| common::segments::segment_segment(q, w))
            })
            .collect();
        let what = format!("{what}, scale {scale}");
        let describe =
            |s: usize, k: usize| format!("query {s} {:?}, wall {k} {:?}", queries[s], walls[k]);
        let hits: Vec<bool> = pairs.iter().map(|c| c.hit()).collect();
        let got = gpu.shape_counts(&queries, &walls).expect("gpu counts");
        common::assert_counts_of_pairs(&what, &hits, walls.len(), &got, describe);
        common::assert_queries_of_pairs(
            &what,
            &pairs,
            walls.len(),
            &gpu.shape_hits(&queries, &walls).expect("gpu hits"),
            &gpu.shape_first_hits(&queries, &walls)
                .expect("gpu first hits"),
            describe,
        );
    }
}

#[test]
fn a_second_pass_longer_than_a_row_of_workgroups_runs_whole() {
    // Every query crosses every wall: no pair is answered in the first pass, and each dispatch
    // of 341 pairs lists all of them for the second, six workgroups in rows of four.
    let limits = common::tiny_limits();
    let Some(mut gpu) = common::gpu_engine("second_pass_rows", limits) else {
        return;
    };
    let queries: Vec<Segment> = (0..60)
        .map(|k| s(-1.0, k as f32 + 0.5, 100.0, k as f32 * 1.01 + 0.25))
        .collect();
    let walls: Vec<Segment> = (0..50)
        .map(|k| s(k as f32 * 1.5 + 0.3, -2.0, k as f32 * 1.5 + 0.7, 200.0))
        .collect();
    let want = common::cpu_engine()
        .wall_pairs(&queries, &walls)
        .expect("cpu");
    assert!(want.iter().all(|c| c.contact() == Contact::Cross));
    let got = gpu.wall_pairs(&queries, &walls).expect("gpu");
    assert_same_contacts("all crossing", &queries, &walls, &want, &got);
}

#[test]
fn a_pictures_marks_are_the_meeting_point_and_an_overlaps_far_end() {
    use rectcast::ShapeContact;
    let wall = Segment::new(0.0, 0.0, 4.0, 0.0);
    for (query, contact, marks) in [
        (
            Segment::new(1.0, -1.0, 1.0, 1.0),
            Contact::Cross,
            (true, false),
        ),
        (
            Segment::new(1.0, 0.0, 1.0, 1.0),
            Contact::Touch,
            (true, false),
        ),
        (
            Segment::new(-1.0, 0.0, 2.0, 0.0),
            Contact::Overlap,
            (true, true),
        ),
        (
            Segment::new(1.0, 1.0, 2.0, 1.0),
            Contact::Miss,
            (false, false),
        ),
    ] {
        let got = segment_segment(&query, &wall);
        assert_eq!(got.contact(), contact, "{query:?}");
        assert_eq!(
            ShapeContact::boundary(&got),
            marks,
            "{query:?}: {contact:?}"
        );
    }
}
