//! The per-pair contract (docs/semantics.md), case by case, on the scalar CPU function.
//! tests/gpu_vs_cpu.rs runs the same cases through the GPU.

mod common;

use common::cases::{self, R, expect};
use rectcast::{Kind, Rect, Segment, Sides, segment_rect};

fn seg(x0: f32, y0: f32, x1: f32, y1: f32) -> Segment {
    Segment::new(x0, y0, x1, y1)
}

// --- the four cases of the classic write-up -------------------------------------------------

#[test]
fn segment_entirely_outside_misses() {
    expect(seg(12.0, -5.0, 20.0, 20.0), R, Kind::Miss, None, None);
}

#[test]
fn segment_entirely_inside() {
    expect(
        seg(2.0, 2.0, 8.0, 7.0),
        R,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_starting_outside_enters() {
    expect(
        seg(-5.0, 5.0, 5.0, 5.0),
        R,
        Kind::Enter,
        Some((0.5, Sides::MIN_X)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_starting_inside_exits() {
    expect(
        seg(5.0, 5.0, 15.0, 5.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.5, Sides::MAX_X)),
    );
}

#[test]
fn segment_passing_through_crosses() {
    expect(
        seg(-5.0, 2.0, 15.0, 8.0),
        R,
        Kind::Cross,
        Some((0.25, Sides::MIN_X)),
        Some((0.75, Sides::MAX_X)),
    );
}

// --- the cases the write-up's readers raised --------------------------------------------------

#[test]
fn corner_touch_at_t0_leaving_the_corner_exits_through_both_sides() {
    let both = Sides::MIN_X | Sides::MIN_Y;
    expect(
        seg(0.0, 0.0, -3.0, -4.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.0, both)),
    );
}

#[test]
fn corner_touch_at_t1_arriving_at_the_corner_enters_through_both_sides() {
    let both = Sides::MIN_X | Sides::MIN_Y;
    expect(
        seg(-3.0, -4.0, 0.0, 0.0),
        R,
        Kind::Enter,
        Some((1.0, both)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn corner_graze_mid_segment_is_a_cross_at_one_instant() {
    // Crosses the min_x line inward and the min_y line outward at the same instant, at (0, 0).
    expect(
        seg(-1.0, 1.0, 1.0, -1.0),
        R,
        Kind::Cross,
        Some((0.5, Sides::MIN_X)),
        Some((0.5, Sides::MIN_Y)),
    );
}

#[test]
fn diagonal_through_a_corner_enters_through_both_sides() {
    let both = Sides::MIN_X | Sides::MIN_Y;
    expect(
        seg(-2.0, -2.0, 2.0, 2.0),
        R,
        Kind::Enter,
        Some((0.5, both)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_lying_on_an_edge_between_the_corners_is_inside() {
    expect(
        seg(2.0, 0.0, 8.0, 0.0),
        R,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_lying_on_an_edge_from_corner_to_corner_is_inside() {
    expect(
        seg(0.0, 0.0, 10.0, 0.0),
        R,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_along_an_edge_past_both_corners_crosses_without_the_edge_side() {
    // It runs along min_y: that side is never crossed, only min_x and max_x are.
    expect(
        seg(-5.0, 0.0, 15.0, 0.0),
        R,
        Kind::Cross,
        Some((0.25, Sides::MIN_X)),
        Some((0.75, Sides::MAX_X)),
    );
}

#[test]
fn segment_on_an_edge_line_but_past_the_corner_misses() {
    expect(seg(12.0, 0.0, 20.0, 0.0), R, Kind::Miss, None, None);
}

#[test]
fn segment_starting_outside_and_ending_exactly_on_an_edge_enters_at_t1() {
    expect(
        seg(-5.0, 5.0, 0.0, 5.0),
        R,
        Kind::Enter,
        Some((1.0, Sides::MIN_X)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn segment_starting_exactly_on_an_edge_and_leaving_exits_at_t0() {
    expect(
        seg(0.0, 5.0, -5.0, 5.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.0, Sides::MIN_X)),
    );
}

#[test]
fn line_through_the_box_but_segment_stops_short_misses() {
    expect(seg(-5.0, 5.0, -1.0, 5.0), R, Kind::Miss, None, None);
    // Not axis-parallel: the line y = 7/8 (x + 10) - 8 meets the box, the segment ends before.
    expect(seg(-10.0, -8.0, -2.0, -1.0), R, Kind::Miss, None, None);
}

#[test]
fn line_through_the_box_but_segment_starts_past_it_misses() {
    expect(seg(11.0, 5.0, 20.0, 5.0), R, Kind::Miss, None, None);
    expect(seg(12.0, 11.0, 20.0, 18.0), R, Kind::Miss, None, None);
}

// --- parallel segments on and beside each side --------------------------------------------------

#[test]
fn parallel_segments_on_each_side_cross_without_that_side() {
    // (segment along the side's line, past both corners) -> (entry, exit)
    let cases = [
        (seg(0.0, -5.0, 0.0, 15.0), Sides::MIN_Y, Sides::MAX_Y), // on min_x, going +y
        (seg(10.0, 15.0, 10.0, -5.0), Sides::MAX_Y, Sides::MIN_Y), // on max_x, going -y
        (seg(-5.0, 0.0, 15.0, 0.0), Sides::MIN_X, Sides::MAX_X), // on min_y, going +x
        (seg(15.0, 10.0, -5.0, 10.0), Sides::MAX_X, Sides::MIN_X), // on max_y, going -x
    ];
    for (s, entry, exit) in cases {
        expect(s, R, Kind::Cross, Some((0.25, entry)), Some((0.75, exit)));
    }
}

#[test]
fn parallel_segments_just_beside_each_side_miss() {
    for s in [
        seg(-0.5, -5.0, -0.5, 15.0),
        seg(10.5, -5.0, 10.5, 15.0),
        seg(-5.0, -0.5, 15.0, -0.5),
        seg(-5.0, 10.5, 15.0, 10.5),
    ] {
        expect(s, R, Kind::Miss, None, None);
    }
}

#[test]
fn parallel_segment_inside_crossing_one_side() {
    expect(
        seg(5.0, 5.0, 5.0, 20.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((1.0 / 3.0, Sides::MAX_Y)),
    );
}

// --- zero-length segments ---------------------------------------------------------------------

#[test]
fn zero_length_segment_inside_is_inside_from_0_to_1() {
    expect(
        seg(5.0, 5.0, 5.0, 5.0),
        R,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn zero_length_segment_outside_misses() {
    expect(seg(-1.0, 5.0, -1.0, 5.0), R, Kind::Miss, None, None);
    expect(seg(11.0, 11.0, 11.0, 11.0), R, Kind::Miss, None, None);
}

#[test]
fn zero_length_segment_on_the_boundary_is_inside() {
    for (x, y) in [
        (0.0, 5.0),
        (10.0, 5.0),
        (5.0, 0.0),
        (5.0, 10.0),
        (0.0, 0.0),
        (10.0, 10.0),
    ] {
        expect(
            seg(x, y, x, y),
            R,
            Kind::Inside,
            Some((0.0, Sides::NONE)),
            Some((1.0, Sides::NONE)),
        );
    }
}

// --- signed zeros -------------------------------------------------------------------------------

#[test]
fn negative_zero_direction_is_parallel() {
    // x goes from 0.0 to -0.0: no movement in x, so the segment runs along the min_x side.
    expect(
        seg(0.0, 5.0, -0.0, 15.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.5, Sides::MAX_Y)),
    );
    expect(
        seg(-0.0, -5.0, 0.0, 5.0),
        R,
        Kind::Enter,
        Some((0.5, Sides::MIN_Y)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn t_is_never_negative_zero() {
    // Leaving at once through the min_x line from x0 = -0.0: the numerator is -0.0 - 0.0 = -0.0.
    expect(
        seg(-0.0, 5.0, -5.0, 5.0),
        R,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.0, Sides::MIN_X)),
    );
    // Leaving through max_x = -0.0 exactly at t = 0.
    let r = Rect::new(-10.0, 0.0, -0.0, 10.0);
    expect(
        seg(0.0, 5.0, 5.0, 5.0),
        r,
        Kind::Exit,
        Some((0.0, Sides::NONE)),
        Some((0.0, Sides::MAX_X)),
    );
}

#[test]
fn negative_zero_rect_bounds_equal_positive_zero() {
    let r = Rect::new(-0.0, -0.0, 0.0, 0.0);
    let both_min = Sides::MIN_X | Sides::MIN_Y;
    let both_max = Sides::MAX_X | Sides::MAX_Y;
    expect(
        seg(-1.0, -1.0, 1.0, 1.0),
        r,
        Kind::Cross,
        Some((0.5, both_min)),
        Some((0.5, both_max)),
    );
    expect(
        seg(0.0, 0.0, -0.0, -0.0),
        r,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

// --- degenerate rectangles ----------------------------------------------------------------------

#[test]
fn zero_width_rect_is_crossed_at_one_instant() {
    let wall = Rect::new(5.0, 0.0, 5.0, 10.0);
    expect(
        seg(0.0, 5.0, 10.0, 5.0),
        wall,
        Kind::Cross,
        Some((0.5, Sides::MIN_X)),
        Some((0.5, Sides::MAX_X)),
    );
    expect(
        seg(10.0, 5.0, 0.0, 5.0),
        wall,
        Kind::Cross,
        Some((0.5, Sides::MAX_X)),
        Some((0.5, Sides::MIN_X)),
    );
}

#[test]
fn segment_along_a_zero_width_rect_crosses_its_ends() {
    let wall = Rect::new(5.0, 0.0, 5.0, 10.0);
    expect(
        seg(5.0, -5.0, 5.0, 15.0),
        wall,
        Kind::Cross,
        Some((0.25, Sides::MIN_Y)),
        Some((0.75, Sides::MAX_Y)),
    );
    expect(
        seg(5.0, 2.0, 5.0, 8.0),
        wall,
        Kind::Inside,
        Some((0.0, Sides::NONE)),
        Some((1.0, Sides::NONE)),
    );
}

#[test]
fn zero_height_rect_is_crossed_at_one_instant() {
    let floor = Rect::new(0.0, 5.0, 10.0, 5.0);
    expect(
        seg(5.0, 0.0, 5.0, 10.0),
        floor,
        Kind::Cross,
        Some((0.5, Sides::MIN_Y)),
        Some((0.5, Sides::MAX_Y)),
    );
    expect(seg(5.0, 0.0, 5.0, 4.0), floor, Kind::Miss, None, None);
}

#[test]
fn point_rect_hit_diagonally_sets_both_sides_each_way() {
    let point = Rect::new(5.0, 5.0, 5.0, 5.0);
    let min = Sides::MIN_X | Sides::MIN_Y;
    let max = Sides::MAX_X | Sides::MAX_Y;
    expect(
        seg(0.0, 0.0, 10.0, 10.0),
        point,
        Kind::Cross,
        Some((0.5, min)),
        Some((0.5, max)),
    );
    expect(seg(0.0, 0.0, 10.0, 10.5), point, Kind::Miss, None, None);
}

// --- every small integer configuration, against an independent rational oracle ----------------

#[test]
fn every_small_integer_configuration_matches_the_rational_oracle() {
    let (segments, rects) = common::oracle::exhaustive_grid(-1..=4, 0..=3);
    let mut checked = 0usize;
    for s in &segments {
        for r in &rects {
            let expected = common::oracle::segment_rect(s, r);
            let actual = segment_rect(s, r);
            assert!(
                expected.flags == actual.flags
                    && expected.t_enter.to_bits() == actual.t_enter.to_bits()
                    && expected.t_exit.to_bits() == actual.t_exit.to_bits(),
                "segment {s:?} rect {r:?}\n  oracle {expected:?} ({}, entry {}, exit {})\n  kernel {actual:?} ({}, entry {}, exit {})",
                expected.kind(),
                expected.entry_sides(),
                expected.exit_sides(),
                actual.kind(),
                actual.entry_sides(),
                actual.exit_sides(),
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 1296 * 100);
}

// --- invariants on random data ------------------------------------------------------------------

#[test]
fn random_pairs_keep_every_invariant_of_the_contract() {
    let (segments, rects) = rectcast::scene::random_batch(11, 2000, 300, 100.0);
    for s in &segments {
        for r in &rects {
            cases::assert_invariants(s, r, &segment_rect(s, r));
        }
    }
}
