//! The segment × circle contract (docs/semantics.md, "Segment × circle"): named cases, the
//! exact oracle on seeded scenes full of degeneracies, the symmetries the answer must keep, the
//! CPU's float filter, and the GPU kernel against both.

mod common;

use common::degenerate::{coordinate, random_segment, valid};
use rectcast::scene::SplitMix64;
use rectcast::{Circle, CircleContact, CircleKind, Segment, segment_circle};

fn s(x0: f32, y0: f32, x1: f32, y1: f32) -> Segment {
    Segment::new(x0, y0, x1, y1)
}

fn c(cx: f32, cy: f32, r: f32) -> Circle {
    Circle::new(cx, cy, r)
}

#[track_caller]
fn expect(query: Segment, circle: Circle, kind: CircleKind, t_enter: f32, t_exit: f32) {
    let got = segment_circle(&query, &circle);
    let want = CircleContact {
        t_enter,
        t_exit,
        kind: kind.code(),
    };
    assert_eq!(
        got,
        want,
        "query {query:?} circle {circle:?}: got {:?} {got:?}",
        got.kind()
    );
    assert_eq!(
        got,
        common::circles::segment_circle(&query, &circle),
        "the oracle"
    );
}

#[test]
fn a_segment_through_the_center_crosses_the_circle_twice() {
    expect(
        s(-2.0, 0.0, 2.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Cross,
        0.25,
        0.75,
    );
    expect(
        s(0.0, -3.0, 0.0, 1.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Enter,
        0.5,
        1.0,
    );
}

#[test]
fn segments_from_inside_exit_and_from_outside_enter() {
    expect(
        s(0.0, 0.0, 2.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Exit,
        0.0,
        0.5,
    );
    expect(
        s(2.0, 0.0, 0.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Enter,
        0.5,
        1.0,
    );
    expect(
        s(-0.5, 0.0, 0.5, 0.25),
        c(0.0, 0.0, 1.0),
        CircleKind::Inside,
        0.0,
        1.0,
    );
}

#[test]
fn an_end_on_the_circle_is_in_the_disk() {
    expect(
        s(1.0, 0.0, 3.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Exit,
        0.0,
        0.0,
    );
    expect(
        s(3.0, 0.0, 1.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Enter,
        1.0,
        1.0,
    );
    // A chord: both ends on the circle.
    expect(
        s(0.0, 5.0, 0.0, -5.0),
        c(0.0, 0.0, 5.0),
        CircleKind::Inside,
        0.0,
        1.0,
    );
    expect(
        s(3.0, 4.0, -3.0, 4.0),
        c(0.0, 0.0, 5.0),
        CircleKind::Inside,
        0.0,
        1.0,
    );
}

#[test]
fn a_line_tangent_to_the_circle_touches_once_and_one_ulp_away_it_does_not() {
    expect(
        s(-2.0, 1.0, 2.0, 1.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Tangent,
        0.5,
        0.5,
    );
    let out = 1.0 + f32::EPSILON;
    expect(
        s(-2.0, out, 2.0, out),
        c(0.0, 0.0, 1.0),
        CircleKind::Miss,
        0.0,
        0.0,
    );
    // One ulp inside: a chord of length about 2^-11, around t = 0.5.
    let within = 1.0 - f32::EPSILON / 2.0;
    let got = segment_circle(&s(-2.0, within, 2.0, within), &c(0.0, 0.0, 1.0));
    assert_eq!(got.kind(), CircleKind::Cross);
    assert!(got.t_enter < 0.5 && got.t_exit > 0.5, "{got:?}");
    assert_eq!(
        got,
        common::circles::segment_circle(&s(-2.0, within, 2.0, within), &c(0.0, 0.0, 1.0))
    );
}

#[test]
fn a_disk_beyond_the_end_of_the_segment_is_missed() {
    // The line crosses the disk, the segment stops short of it.
    expect(
        s(-3.0, 0.0, -2.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Miss,
        0.0,
        0.0,
    );
    expect(
        s(3.0, 0.0, 2.0, 0.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Miss,
        0.0,
        0.0,
    );
    // The tangent point lies beyond the end.
    expect(
        s(-3.0, 1.0, -1.0, 1.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn a_point_query_is_inside_with_every_t_or_misses() {
    expect(
        s(0.5, 0.5, 0.5, 0.5),
        c(0.0, 0.0, 1.0),
        CircleKind::Inside,
        0.0,
        1.0,
    );
    expect(
        s(0.0, 1.0, 0.0, 1.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Inside,
        0.0,
        1.0,
    );
    expect(
        s(1.0, 1.0, 1.0, 1.0),
        c(0.0, 0.0, 1.0),
        CircleKind::Miss,
        0.0,
        0.0,
    );
}

#[test]
fn a_zero_radius_circle_is_a_point() {
    let point = c(0.5, 0.0, 0.0);
    expect(s(0.0, 0.0, 1.0, 0.0), point, CircleKind::Tangent, 0.5, 0.5);
    expect(s(0.5, 0.0, 1.0, 0.0), point, CircleKind::Exit, 0.0, 0.0);
    expect(s(0.0, 0.0, 0.5, 0.0), point, CircleKind::Enter, 1.0, 1.0);
    expect(s(0.0, 1e-30, 1.0, 1e-30), point, CircleKind::Miss, 0.0, 0.0);
    expect(s(0.5, 0.0, 0.5, 0.0), point, CircleKind::Inside, 0.0, 1.0);
}

#[test]
fn an_irrational_crossing_is_rounded_to_nearest() {
    // x = ±√0.75 on y = 0.5: t = (2 ∓ √0.75) / 4.
    let got = segment_circle(&s(-2.0, 0.5, 2.0, 0.5), &c(0.0, 0.0, 1.0));
    let root = 0.75f64.sqrt();
    assert_eq!(got.kind(), CircleKind::Cross);
    assert_eq!(got.t_enter, ((2.0 - root) / 4.0) as f32);
    assert_eq!(got.t_exit, ((2.0 + root) / 4.0) as f32);
    expect(
        s(-2.0, 0.5, 2.0, 0.5),
        c(0.0, 0.0, 1.0),
        CircleKind::Cross,
        got.t_enter,
        got.t_exit,
    );
}

#[test]
fn a_t_halfway_between_two_floats_rounds_to_even() {
    // Entering at t = 1 − r = 0.5 + 2^-25: halfway between 0.5 (even) and 0.5 + 2^-24.
    let ulp = 2f32.powi(-24);
    let query = s(0.0, 0.0, 1.0, 0.0);
    expect(
        query,
        c(1.0, 0.0, 0.5 - ulp / 2.0),
        CircleKind::Enter,
        0.5,
        1.0,
    );
    // t = 0.5 + 1.5 · 2^-24: between 0.5 + 2^-24 (odd) and 0.5 + 2^-23 (even).
    expect(
        query,
        c(1.0, 0.0, 0.5 - 1.5 * ulp),
        CircleKind::Enter,
        0.5 + 2.0 * ulp,
        1.0,
    );
}

#[test]
fn huge_and_subnormal_coordinates_are_exact() {
    let tiny = 2f64.powi(-140) as f32;
    expect(
        s(-2.0 * tiny, 0.0, 2.0 * tiny, 0.0),
        c(0.0, 0.0, tiny),
        CircleKind::Cross,
        0.25,
        0.75,
    );
    let huge = 2f32.powi(60);
    expect(
        s(-huge, huge, huge, huge),
        c(0.0, 0.0, huge),
        CircleKind::Tangent,
        0.5,
        0.5,
    );
    // A disk of radius 2^-20 at 2^60, whose coordinates' ulp is 2^37: the segment passes
    // exactly through its center.
    let query = s(huge, 0.0, huge, 1.0);
    expect(
        query,
        c(huge, 0.5, 2f32.powi(-20)),
        CircleKind::Cross,
        0.5 - 2f32.powi(-20),
        0.5 + 2f32.powi(-20),
    );
}

/// A circle for `query`: on the grid, or through its start at a 3-4-5 offset (an end exactly
/// on the circle), or with a radius of any float.
fn random_circle(rng: &mut SplitMix64, scale: f32, query: &Segment) -> Circle {
    match rng.below(6) {
        0 => {
            let k = (rng.below(3) as f32 + 1.0) * 0.5 * scale;
            let (sx, sy) = (
                [1.0, -1.0][rng.below(2) as usize],
                [1.0, -1.0][rng.below(2) as usize],
            );
            c(query.x0 + 3.0 * k * sx, query.y0 + 4.0 * k * sy, 5.0 * k)
        }
        1 => c(
            coordinate(rng, scale),
            coordinate(rng, scale),
            coordinate(rng, scale).abs(),
        ),
        _ => c(
            coordinate(rng, scale),
            coordinate(rng, scale),
            rng.below(5) as f32 * 0.5 * scale,
        ),
    }
}

fn valid_circle(c: &Circle) -> bool {
    rectcast::validate::check_circle(0, c).is_ok()
}

#[test]
fn seeded_scenes_full_of_degeneracies_give_the_oracles_answer() {
    let mut rng = SplitMix64::new(31);
    let mut seen = [0usize; 6];
    for i in 0..40_000 {
        let scale = [1.0, 1e-40, 3e18, 0.001][i % 4];
        let query = random_segment(&mut rng, scale);
        let circle = random_circle(&mut rng, scale, &query);
        if !valid(&query) || !valid_circle(&circle) {
            continue;
        }
        let got = segment_circle(&query, &circle);
        let want = common::circles::segment_circle(&query, &circle);
        assert_eq!(
            got,
            want,
            "case {i}: query {query:?} circle {circle:?}: got {:?}, the oracle {:?}",
            got.kind(),
            want.kind()
        );
        seen[got.kind as usize] += 1;
    }
    // Every kind shows up often enough to count.
    assert!(seen.iter().all(|&n| n > 30), "kinds seen: {seen:?}");
}

#[test]
fn tangent_lines_one_ulp_either_side_give_the_oracles_answer() {
    let mut rng = SplitMix64::new(32);
    let mut kinds = [0usize; 6];
    for _ in 0..3_000 {
        let (cx, cy) = (rng.range(-100.0, 100.0), rng.range(-100.0, 100.0));
        let r = rng.range(0.0, 50.0);
        // Horizontal lines at the top of the circle, and one or two ulps off it.
        let top = cy + r;
        for y in [
            top,
            f32::from_bits(top.to_bits() + 1),
            f32::from_bits(top.to_bits() - 1),
        ] {
            let query = s(cx - 2.0 * r - 1.0, y, cx + r + 1.0, y);
            let circle = c(cx, cy, r);
            let got = segment_circle(&query, &circle);
            assert_eq!(
                got,
                common::circles::segment_circle(&query, &circle),
                "query {query:?} circle {circle:?}"
            );
            kinds[got.kind as usize] += 1;
        }
    }
    assert!(kinds[CircleKind::Miss.code() as usize] > 100, "{kinds:?}");
    assert!(kinds[CircleKind::Cross.code() as usize] > 100, "{kinds:?}");
}

#[test]
fn reversing_the_segment_swaps_enter_and_exit() {
    let mut rng = SplitMix64::new(33);
    for _ in 0..20_000 {
        let query = random_segment(&mut rng, 1.0);
        let circle = random_circle(&mut rng, 1.0, &query);
        if !valid(&query) || !valid_circle(&circle) {
            continue;
        }
        let reversed = s(query.x1, query.y1, query.x0, query.y0);
        let (ahead, back) = (
            segment_circle(&query, &circle),
            segment_circle(&reversed, &circle),
        );
        let mirrored = match ahead.kind() {
            CircleKind::Enter => CircleKind::Exit,
            CircleKind::Exit => CircleKind::Enter,
            kind => kind,
        };
        assert_eq!(back.kind(), mirrored, "{query:?} {circle:?}");
    }
}

#[test]
fn scaling_and_translating_by_powers_of_two_keep_every_byte() {
    let mut rng = SplitMix64::new(34);
    for _ in 0..10_000 {
        // Small integers, so that every image below is exact.
        let mut grid = || rng.below(17) as f32 - 8.0;
        let query = s(grid(), grid(), grid(), grid());
        let circle = c(grid(), grid(), grid().abs());
        let want = segment_circle(&query, &circle);
        for k in [-140, -20, 3, 40, 58] {
            // In f64: 2f32.powi(-140) may be computed as 1 / 2^140, which overflows.
            let f = 2f64.powi(k) as f32;
            let scaled = s(query.x0 * f, query.y0 * f, query.x1 * f, query.y1 * f);
            let disk = c(circle.cx * f, circle.cy * f, circle.r * f);
            assert_eq!(
                segment_circle(&scaled, &disk),
                want,
                "2^{k}: {query:?} {circle:?}"
            );
        }
        let shift = 1048576.0; // 2^20
        let moved = s(
            query.x0 + shift,
            query.y0 - shift,
            query.x1 + shift,
            query.y1 - shift,
        );
        let disk = c(circle.cx + shift, circle.cy - shift, circle.r);
        assert_eq!(segment_circle(&moved, &disk), want, "{query:?} {circle:?}");
    }
}

/// `n` queries, and `m` circles around them, at a scale, with the degeneracies above.
fn batch(seed: u64, n: usize, m: usize, scale: f32) -> (Vec<Segment>, Vec<Circle>) {
    let mut rng = SplitMix64::new(seed);
    let mut queries = Vec::with_capacity(n);
    while queries.len() < n {
        let segment = random_segment(&mut rng, scale);
        if valid(&segment) {
            queries.push(segment);
        }
    }
    let mut circles = Vec::with_capacity(m);
    while circles.len() < m {
        let near = queries[rng.below(n as u64) as usize];
        let circle = random_circle(&mut rng, scale, &near);
        if valid_circle(&circle) {
            circles.push(circle);
        }
    }
    (queries, circles)
}

#[track_caller]
fn assert_same_contacts(
    what: &str,
    queries: &[Segment],
    circles: &[Circle],
    want: &[CircleContact],
    got: &[CircleContact],
) {
    assert_eq!(want.len(), got.len(), "{what}: lengths");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        let (q, c) = (queries[i / circles.len()], circles[i % circles.len()]);
        panic!(
            "{what}: first difference at pair {i} (query {}, circle {}):\n  query  {q:?}\n  circle {c:?}\n  want {:?} {:?}\n  got  {:?} {:?}",
            i / circles.len(),
            i % circles.len(),
            want[i].kind(),
            want[i],
            got[i].kind(),
            got[i]
        );
    }
}

fn oracle(queries: &[Segment], circles: &[Circle]) -> Vec<CircleContact> {
    queries
        .iter()
        .flat_map(|q| {
            circles
                .iter()
                .map(move |c| common::circles::segment_circle(q, c))
        })
        .collect()
}

#[test]
fn the_gpu_gives_the_oracles_bytes_on_seeded_scenes() {
    let Some(mut gpu) = common::gpu_engine("circle_pairs", rectcast::GpuLimits::default()) else {
        return;
    };
    let mut cpu = common::cpu_engine();
    let mut seen = [0usize; 6];
    for (seed, scale) in [(1, 1.0), (2, 1e-40), (3, 3e18), (4, 0.001)] {
        let (queries, circles) = batch(seed, 100, 80, scale);
        let want = oracle(&queries, &circles);
        let cpu_got = cpu.circle_pairs(&queries, &circles).expect("cpu");
        assert_same_contacts(
            &format!("cpu, scale {scale}"),
            &queries,
            &circles,
            &want,
            &cpu_got,
        );
        let got = gpu.circle_pairs(&queries, &circles).expect("gpu");
        assert_same_contacts(
            &format!("gpu, scale {scale}"),
            &queries,
            &circles,
            &want,
            &got,
        );
        for c in &want {
            seen[c.kind as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&n| n > 10), "kinds seen: {seen:?}");
}

#[test]
fn the_gpu_gives_the_oracles_answer_on_both_sides_of_the_narrow_integers_reach_at_every_scale() {
    use common::degenerate::{binary_orders, power_of_two, segment_spanning};
    use rectcast::cpu::segment_circle::narrow::circle_narrow;
    let Some(mut gpu) = common::gpu_engine("circle_pairs", rectcast::GpuLimits::default()) else {
        return;
    };
    let mut rng = SplitMix64::new(37);
    // Pairs on each side of the reach (62 orders: narrow; 63: wide), roots the narrow search
    // reaches and roots too deep for it, and the kinds met.
    let (mut sides, mut roots, mut seen) = ([0usize; 2], [0usize; 2], [0usize; 6]);
    // Grids from the subnormals (the small value at 2^-149) to the largest valid values.
    for b in [-86, -60, -31, -1, 0, 9, 33, 59] {
        let unit = power_of_two(b);
        let mut check = |what: &str, queries: &[Segment], circles: &[Circle]| {
            let want = oracle(queries, circles);
            let got = gpu.circle_pairs(queries, circles).expect("gpu");
            assert_same_contacts(what, queries, circles, &want, &got);
            for c in &want {
                seen[c.kind as usize] += 1;
            }
        };
        for orders in [62, 63] {
            let queries: Vec<Segment> = (0..40)
                .map(|_| segment_spanning(&mut rng, b, orders))
                .collect();
            let mut grid = |n: u64| (rng.below(n) as f32 - (n / 2) as f32) * unit;
            let circles: Vec<Circle> = (0..30)
                .map(|_| c(grid(9), grid(9), grid(4).abs() + unit))
                .collect();
            for q in &queries {
                for k in &circles {
                    let values = [q.x0, q.y0, q.x1, q.y1, k.cx, k.cy, k.r];
                    assert_eq!(binary_orders(&values), Some(orders), "{q:?} {k:?}");
                    sides[(orders - 62) as usize] += 1;
                }
            }
            let what = format!("grid 2^{b}, values spanning {orders} binary orders");
            check(&what, &queries, &circles);
        }
        // A chord at height h = 2^-j of the radius from a start just outside the circle: it
        // enters at t ≈ h² / 4, which the narrow search reaches down to about 2^-40.
        let circle = [c(0.0, 0.0, unit)];
        let mut queries = Vec::new();
        for j in [6, 10, 14, 17, 19, 21] {
            let h = unit * power_of_two(-j);
            for query in [s(unit, h, -unit, h), s(-unit, -h, unit, -h)] {
                roots[circle_narrow(&query, &circle[0]).is_none() as usize] += 1;
                queries.extend([query, s(query.x1, query.y1, query.x0, query.y0)]);
            }
        }
        check(
            &format!("grid 2^{b}, roots near the ends"),
            &queries,
            &circle,
        );
    }
    assert!(seen.iter().all(|&n| n > 20), "kinds seen: {seen:?}");
    assert!(
        sides.iter().all(|&n| n > 5_000),
        "pairs per side: {sides:?}"
    );
    assert!(
        roots.iter().all(|&n| n > 10),
        "roots narrow, and too deep: {roots:?}"
    );
}

/// scripts/test.sh: native only (how the work is split into tiles and chunks, which no
/// emulated arithmetic changes: the default limits' tests run under each).
#[test]
fn circle_batches_over_tiny_limits_are_chunked_invisibly() {
    // 4 KiB bindings: 256 segments, 341 circles or contacts per dispatch; 4 workgroups per
    // dimension, so dispatches are 2D; more circles than one binding holds: circle tiles.
    let limits = common::tiny_limits();
    let Some(mut gpu) = common::gpu_engine("circle_batches_over_tiny_limits", limits) else {
        return;
    };
    let (queries, circles) = batch(5, 30, 400, 1.0);
    let want = common::cpu_engine()
        .circle_pairs(&queries, &circles)
        .expect("cpu");
    let got = gpu.circle_pairs(&queries, &circles).expect("gpu");
    assert_same_contacts("tiny limits", &queries, &circles, &want, &got);
}

#[test]
fn an_invalid_circle_is_named_before_any_work() {
    let queries = [s(0.0, 0.0, 1.0, 1.0)];
    let circles = [c(0.0, 0.0, 1.0), c(0.0, 0.0, -1.0)];
    let e = common::cpu_engine()
        .circle_pairs(&queries, &circles)
        .unwrap_err();
    assert_eq!(e.to_string(), "circle 1: r is -1, below 0");
    let e = common::cpu_engine()
        .circle_pairs(&queries, &[c(f32::INFINITY, 0.0, 1.0)])
        .unwrap_err();
    assert!(e.to_string().starts_with("circle 0: cx is infinite"), "{e}");
    // -0.0 is a zero radius.
    assert!(
        common::cpu_engine()
            .circle_pairs(&queries, &[c(0.0, 0.0, -0.0)])
            .is_ok()
    );
}

#[test]
fn the_float_filter_certifies_only_the_references_answers() {
    use rectcast::cpu::segment_circle::filters::circle_filtered;
    let mut rng = SplitMix64::new(35);
    let (mut certified, mut uniform, mut uniform_certified) = (0usize, 0usize, 0usize);
    let mut hits_certified = 0usize;
    for i in 0..200_000 {
        // Half the scenes uniform (the filter's case), half the degenerate generator's.
        let (query, circle) = if i % 2 == 0 {
            let mut v = || rng.range(-100.0, 100.0);
            (s(v(), v(), v(), v()), c(v(), v(), v().abs() / 4.0))
        } else {
            let scale = [1.0, 1e-40, 3e18, 0.001][(i / 2) % 4];
            let query = random_segment(&mut rng, scale);
            let circle = random_circle(&mut rng, scale, &query);
            (query, circle)
        };
        if !valid(&query) || !valid_circle(&circle) {
            continue;
        }
        let got = circle_filtered(&query, &circle);
        if let Some(got) = got {
            certified += 1;
            hits_certified += got.hit() as usize;
            assert_eq!(
                got,
                segment_circle(&query, &circle),
                "case {i}: query {query:?} circle {circle:?}"
            );
        }
        if i % 2 == 0 {
            uniform += 1;
            uniform_certified += got.is_some() as usize;
        }
    }
    // The filter must do its job: almost every uniform pair never reaches the exact integers,
    // hits with their t included.
    assert!(
        uniform_certified * 100 > uniform * 99,
        "{uniform_certified} of {uniform} uniform pairs certified"
    );
    assert!(
        hits_certified > 10_000,
        "{hits_certified} hits certified of {certified}"
    );
}

#[test]
fn tangents_and_rounding_ties_are_left_to_the_exact_path() {
    use rectcast::cpu::segment_circle::filters::circle_filtered;
    let circle = c(0.0, 0.0, 1.0);
    assert_eq!(circle_filtered(&s(-2.0, 1.0, 2.0, 1.0), &circle), None);
    let ulp = 2f32.powi(-24);
    assert_eq!(
        circle_filtered(&s(0.0, 0.0, 1.0, 0.0), &c(1.0, 0.0, 0.5 - ulp / 2.0)),
        None
    );
    // A plain crossing is certified.
    let got = circle_filtered(&s(-2.0, 0.0, 2.0, 0.0), &circle);
    assert_eq!(got.map(|c| c.kind()), Some(CircleKind::Cross));
}

#[test]
fn the_narrow_integers_give_the_references_kind_and_t_wherever_they_reach() {
    use rectcast::cpu::segment_circle::narrow::{circle_narrow, narrow_meeting};
    let mut rng = SplitMix64::new(33);
    let (mut seen, mut beyond) = ([0usize; 6], 0usize);
    for i in 0..60_000 {
        // Grid scenes at every scale (subnormal to huge), circles through the query's start,
        // and now and then a value of any exponent, past the narrow integers' reach.
        let scale = [1.0, 1e-40, 3e18, 0.001, 7.0][i % 5];
        let query = random_segment(&mut rng, scale);
        let circle = random_circle(&mut rng, scale, &query);
        if !valid(&query) || !valid_circle(&circle) {
            continue;
        }
        let Some(got) = circle_narrow(&query, &circle) else {
            beyond += 1;
            continue;
        };
        let want = segment_circle(&query, &circle);
        assert_eq!(
            (got.kind(), got.t_enter.to_bits(), got.t_exit.to_bits()),
            (want.kind(), want.t_enter.to_bits(), want.t_exit.to_bits()),
            "case {i}: query {query:?} circle {circle:?}"
        );
        // Without the roots (what counts ask), the same kind, wherever they reach.
        let alone = narrow_meeting(&query, &circle, false).map(|c| c.kind);
        assert!(
            alone.is_none_or(|kind| kind == want.kind),
            "case {i}: query {query:?} circle {circle:?}: the kind alone {alone:?}"
        );
        seen[got.kind as usize] += 1;
    }
    let narrow: usize = seen.iter().sum();
    assert!(seen.iter().all(|&n| n > 30), "kinds seen: {seen:?}");
    assert!(
        narrow > beyond && beyond > 1000,
        "{narrow} narrow, {beyond} beyond"
    );
}

#[test]
fn tangents_ties_and_roots_near_zero_on_narrow_integers_are_the_references_or_left_alone() {
    use rectcast::cpu::segment_circle::narrow::circle_narrow;
    let ulp = 2f32.powi(-24);
    let cases = [
        // Tangent at the top, and one ulp either side.
        (s(-2.0, 1.0, 2.0, 1.0), c(0.0, 0.0, 1.0)),
        (
            s(-2.0, 1.0 + ulp * 2.0, 2.0, 1.0 + ulp * 2.0),
            c(0.0, 0.0, 1.0),
        ),
        (s(-2.0, 1.0 - ulp, 2.0, 1.0 - ulp), c(0.0, 0.0, 1.0)),
        // A root halfway between two floats, and one next to it.
        (s(0.0, 0.0, 1.0, 0.0), c(1.0, 0.0, 0.5 - ulp / 2.0)),
        (s(0.0, 0.0, 1.0, 0.0), c(1.0, 0.0, 0.5 - ulp)),
        // Ends on the circle (heading out, and along the tangent: t = 0 exactly), a point
        // circle on the segment, a point query.
        (s(1.0, 0.0, 3.0, 0.0), c(0.0, 0.0, 1.0)),
        (s(0.0, 1.0, 2.0, 1.0), c(0.0, 0.0, 1.0)),
        (s(-1.0, 0.0, 3.0, 0.0), c(1.0, 0.0, 0.0)),
        (s(0.5, 0.5, 0.5, 0.5), c(0.0, 0.0, 1.0)),
    ];
    for (query, circle) in cases {
        assert_eq!(
            circle_narrow(&query, &circle),
            Some(segment_circle(&query, &circle)),
            "query {query:?} circle {circle:?}"
        );
    }
    // Roots below 2^-40 are searched on the wide integers; so is a circle 2^70 times its
    // segment.
    assert_eq!(
        circle_narrow(&s(0.0, 0.0, 1.0, 0.0), &c(0.0, 0.0, 2f32.powi(-60))),
        None
    );
    assert_eq!(
        circle_narrow(&s(0.0, 0.0, 1.0, 0.0), &c(0.0, 0.0, 2f32.powi(70))),
        None
    );
    assert_eq!(
        segment_circle(&s(0.0, 0.0, 1.0, 0.0), &c(0.0, 0.0, 2f32.powi(-60))).kind(),
        CircleKind::Exit
    );
}

#[test]
fn the_longest_searches_stay_within_the_gpus_loop_budget() {
    // Under emulated rounding every search starts at the far end of [0, 1] from its estimate:
    // about 60 probes a root, two roots a pair. lavapipe stops an invocation's loops after
    // 65,535 iterations in all, silently; the answers must still be the oracle's.
    let Some(mut gpu) = common::gpu_engine_emulating(
        "circle_longest_searches",
        rectcast::GpuLimits::default(),
        rectcast::gpu::Emulation::Rounding,
    ) else {
        return;
    };
    let (mut queries, mut circles) = batch(9, 40, 30, 1.0);
    // Roots near 0 and near 1, and a crossing whose entering root is below 2^-90.
    queries.extend([
        s(0.0, 0.0, 1.0, 0.0),
        s(7.106875e-24, -3.0, -140185686000000.0, -2.0),
    ]);
    circles.extend([
        c(0.0, 0.0, 2f32.powi(-60)),
        c(1.0, 0.0, 1e-7),
        c(-3.14653e-23, 1.0, 4.0),
    ]);
    let want = oracle(&queries, &circles);
    let got = gpu.circle_pairs(&queries, &circles).expect("gpu");
    assert_same_contacts("far estimates", &queries, &circles, &want, &got);
}

#[test]
fn the_lane_filter_certifies_only_the_references_hits() {
    use rectcast::Shape;
    use rectcast::cpu::lanes::HitLanes;
    let mut rng = SplitMix64::new(37);
    let mut tally = common::lanes::LaneTally::default();
    for i in 0..40_000 {
        // Subnormal scales (1e-40, and 1e-21 whose products go subnormal) are left to the
        // exact path almost always: there the verdicts must be right, not many.
        let scale = [1.0, 1e-40, 3e18, 0.001, 1e-21][i % 5];
        let normal = scale == 1.0 || scale == 3e18 || scale == 0.001;
        let query = if i % 2 == 0 {
            let mut v = || rng.range(-100.0, 100.0) * scale;
            s(v(), v(), v(), v())
        } else {
            random_segment(&mut rng, scale)
        };
        // Half uniform (the filter's case), half the degenerate generator's.
        let circles: Vec<Circle> = (0..rectcast::cpu::lanes::HIT_LANES)
            .map(|_| {
                if i % 2 == 0 {
                    let mut v = || rng.range(-100.0, 100.0) * scale;
                    c(v(), v(), v().abs() / 4.0)
                } else {
                    random_circle(&mut rng, scale, &query)
                }
            })
            .collect();
        if !valid(&query) || !circles.iter().all(valid_circle) {
            continue;
        }
        let verdicts = Circle::hit_lanes(&query, &HitLanes::of(&circles));
        let want: Vec<(bool, f32)> = circles
            .iter()
            .map(|circle| {
                let contact = segment_circle(&query, circle);
                (contact.hit(), contact.t_enter)
            })
            .collect();
        tally.check(&verdicts, &want, normal, |lane| {
            format!(
                "case {i} lane {lane}: query {query:?} circle {:?}",
                circles[lane]
            )
        });
    }
    tally.assert_enough();
}

/// The seeded scenes of the GPU test, and 1e-21, where products are subnormal.
const COUNT_SCENES: [(u64, f32); 5] = [(1, 1.0), (2, 1e-40), (3, 3e18), (4, 0.001), (5, 1e-21)];

#[test]
fn the_box_filter_and_the_hit_alone_give_the_oracles_hit() {
    use rectcast::Shape;
    use rectcast::cpu::segment_circle::circle_meeting;
    use rectcast::cpu::segment_circle::narrow::narrow_meeting;
    use rectcast::cpu::segment_rect::line_misses_box;
    for (seed, scale) in COUNT_SCENES {
        let (queries, circles) = batch(seed, 100, 80, scale);
        let (mut certified, mut misses) = (0usize, 0usize);
        for q in &queries {
            for disk in &circles {
                let want = common::circles::segment_circle(q, disk);
                let at = format!("scale {scale}: query {q:?}, circle {disk:?}, oracle {want:?}");
                if line_misses_box(q, &disk.bounds()) {
                    assert!(
                        !want.hit(),
                        "certified clear of the box, but it meets: {at}"
                    );
                    certified += 1;
                }
                misses += usize::from(!want.hit());
                let alone = circle_meeting(q, disk, false);
                assert_eq!(alone.kind, want.kind, "the kind alone: {at}");
                if let Some(narrow) = narrow_meeting(q, disk, false) {
                    assert_eq!(narrow.kind, want.kind, "the kind alone, narrow: {at}");
                }
                assert_eq!(Circle::hit(q, disk), want.hit(), "Shape::hit: {at}");
            }
        }
        eprintln!("scale {scale}: {certified} of {misses} misses certified by the box's corners");
        if scale != 1e-21 && scale != 1e-40 {
            assert!(certified > misses / 4, "scale {scale}");
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
    let Some(mut gpu) = common::gpu_engine("circle_queries", limits) else {
        return;
    };
    for (seed, scale) in COUNT_SCENES {
        // Over tiny limits, more circles than one binding holds: circle tiles, and each
        // query's pairs split over several dispatches. Fewer queries there: the scales are
        // the default run's to cover, the tiles and chunks this one's.
        let (n, m) = if what == "tiny limits" {
            (20, 400)
        } else {
            (100, 80)
        };
        let (queries, circles) = batch(seed, n, m, scale);
        let pairs = oracle(&queries, &circles);
        let what = format!("{what}, scale {scale}");
        let describe =
            |s: usize, k: usize| format!("query {s} {:?}, circle {k} {:?}", queries[s], circles[k]);
        let hits: Vec<bool> = pairs.iter().map(|c| c.hit()).collect();
        let got = gpu.shape_counts(&queries, &circles).expect("gpu counts");
        common::assert_counts_of_pairs(&what, &hits, circles.len(), &got, describe);
        common::assert_queries_of_pairs(
            &what,
            &pairs,
            circles.len(),
            &gpu.shape_hits(&queries, &circles).expect("gpu hits"),
            &gpu.shape_first_hits(&queries, &circles)
                .expect("gpu first hits"),
            describe,
        );
    }
}

#[test]
fn a_second_pass_longer_than_a_row_of_workgroups_runs_whole() {
    // Every query crosses every circle: no pair is answered in the first pass, and each
    // dispatch of 341 pairs lists all of them for the second, six workgroups in rows of four.
    let limits = common::tiny_limits();
    let Some(mut gpu) = common::gpu_engine("second_pass_rows", limits) else {
        return;
    };
    let queries: Vec<Segment> = (0..60)
        .map(|k| s(-10.0, k as f32 * 0.1, 110.0, 3.0 - k as f32 * 0.05))
        .collect();
    let circles: Vec<Circle> = (0..50)
        .map(|k| c(k as f32 * 2.0, 1.5, 9.0 + k as f32 * 0.01))
        .collect();
    let want = oracle(&queries, &circles);
    assert!(want.iter().all(|c| c.kind() == CircleKind::Cross));
    let got = gpu.circle_pairs(&queries, &circles).expect("gpu");
    assert_same_contacts("all crossing", &queries, &circles, &want, &got);
}

#[test]
fn a_pictures_marks_are_where_the_segment_crosses_the_circle_and_the_tangent_point() {
    use rectcast::ShapeContact;
    let disk = c(0.0, 0.0, 1.0);
    for (query, kind, marks) in [
        (s(-2.0, 0.0, 2.0, 0.0), CircleKind::Cross, (true, true)),
        (s(-2.0, 0.0, 0.0, 0.0), CircleKind::Enter, (true, false)),
        (s(0.0, 0.0, 2.0, 0.0), CircleKind::Exit, (false, true)),
        (s(-0.5, 0.0, 0.5, 0.0), CircleKind::Inside, (false, false)),
        (s(-2.0, 1.0, 2.0, 1.0), CircleKind::Tangent, (true, false)),
        (s(-2.0, 3.0, 2.0, 3.0), CircleKind::Miss, (false, false)),
    ] {
        let got = segment_circle(&query, &disk);
        assert_eq!(got.kind(), kind, "{query:?}");
        assert_eq!(got.boundary(), marks, "{query:?}: {kind:?}");
        assert_eq!(ShapeContact::boundary(&got), marks, "{query:?}: the seam's");
    }
}
