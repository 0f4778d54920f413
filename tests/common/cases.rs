//! Helpers for the named contract cases, shared by tests/contract.rs and tests/gpu_vs_cpu.rs.
#![allow(
    dead_code,
    reason = "each test binary uses its own part of this module"
)]

use rectcast::{Kind, PairResult, Rect, Segment, Sides, segment_rect};

/// The rectangle of the hand cases: [0, 10] × [0, 10].
pub const R: Rect = Rect::new(0.0, 0.0, 10.0, 10.0);

/// Checks one case on the CPU: kind, and (t, sides) at entry and exit when given.
pub fn expect(
    s: Segment,
    r: Rect,
    kind: Kind,
    enter: Option<(f32, Sides)>,
    exit: Option<(f32, Sides)>,
) -> PairResult {
    let got = segment_rect(&s, &r);
    let show = |g: &PairResult| {
        format!(
            "{} t_enter {} entry {:?} t_exit {} exit {:?}",
            g.kind(),
            g.t_enter,
            g.entry_sides().to_string(),
            g.t_exit,
            g.exit_sides().to_string()
        )
    };
    assert_eq!(got.kind(), kind, "{s:?} vs {r:?}: got {}", show(&got));
    if let Some((t, sides)) = enter {
        assert_eq!(
            (got.t_enter.to_bits(), got.entry_sides()),
            (t.to_bits(), sides),
            "entry of {s:?} vs {r:?}: got {}",
            show(&got)
        );
    }
    if let Some((t, sides)) = exit {
        assert_eq!(
            (got.t_exit.to_bits(), got.exit_sides()),
            (t.to_bits(), sides),
            "exit of {s:?} vs {r:?}: got {}",
            show(&got)
        );
    }
    if kind == Kind::Miss {
        assert_eq!(got, PairResult::MISS);
    }
    assert_invariants(&s, &r, &got);
    got
}

/// What every result must satisfy, whatever the inputs.
pub fn assert_invariants(s: &Segment, r: &Rect, got: &PairResult) {
    let ctx = || format!("{s:?} vs {r:?}: {got:?}");
    assert_eq!(
        got.start_inside(),
        got.hit() && r.contains(s.x0, s.y0),
        "start_inside: {}",
        ctx()
    );
    assert_eq!(
        got.end_inside(),
        got.hit() && r.contains(s.x1, s.y1),
        "end_inside: {}",
        ctx()
    );
    if r.contains(s.x0, s.y0) || r.contains(s.x1, s.y1) {
        assert!(got.hit(), "an end is inside, so it must hit: {}", ctx());
    }
    if !got.hit() {
        assert_eq!(*got, PairResult::MISS, "{}", ctx());
        return;
    }
    assert!(
        0.0 <= got.t_enter && got.t_enter <= got.t_exit && got.t_exit <= 1.0,
        "t order: {}",
        ctx()
    );
    assert!(
        got.t_enter.is_sign_positive() && got.t_exit.is_sign_positive(),
        "t is -0.0: {}",
        ctx()
    );
    if got.start_inside() {
        assert!(
            got.t_enter == 0.0 && got.entry_sides().is_empty(),
            "start inside: {}",
            ctx()
        );
    } else {
        assert!(
            !got.entry_sides().is_empty(),
            "entered through no side: {}",
            ctx()
        );
    }
    if got.end_inside() {
        assert!(
            got.t_exit == 1.0 && got.exit_sides().is_empty(),
            "end inside: {}",
            ctx()
        );
    } else {
        assert!(
            !got.exit_sides().is_empty(),
            "left through no side: {}",
            ctx()
        );
    }
    // A side is crossed only when the segment moves across its line.
    for (sides, _) in [(got.entry_sides(), "entry"), (got.exit_sides(), "exit")] {
        if sides.contains(Sides::MIN_X) || sides.contains(Sides::MAX_X) {
            assert!(
                s.x0 != s.x1,
                "x side crossed by an x-parallel segment: {}",
                ctx()
            );
        }
        if sides.contains(Sides::MIN_Y) || sides.contains(Sides::MAX_Y) {
            assert!(
                s.y0 != s.y1,
                "y side crossed by a y-parallel segment: {}",
                ctx()
            );
        }
    }
    let kind = got.kind();
    assert_eq!(
        kind,
        match (got.start_inside(), got.end_inside()) {
            (true, true) => Kind::Inside,
            (false, true) => Kind::Enter,
            (true, false) => Kind::Exit,
            (false, false) => Kind::Cross,
        },
        "{}",
        ctx()
    );
}

/// The segments of the hand cases (tests/contract.rs) plus signed-zero and off-grid variants,
/// for running them densely against [`hand_rects`] on every backend.
pub fn hand_segments() -> Vec<Segment> {
    let s = Segment::new;
    vec![
        s(12.0, -5.0, 20.0, 20.0),
        s(2.0, 2.0, 8.0, 7.0),
        s(-5.0, 5.0, 5.0, 5.0),
        s(5.0, 5.0, 15.0, 5.0),
        s(-5.0, 2.0, 15.0, 8.0),
        s(0.0, 0.0, -3.0, -4.0),
        s(-3.0, -4.0, 0.0, 0.0),
        s(-1.0, 1.0, 1.0, -1.0),
        s(-2.0, -2.0, 2.0, 2.0),
        s(2.0, 0.0, 8.0, 0.0),
        s(0.0, 0.0, 10.0, 0.0),
        s(-5.0, 0.0, 15.0, 0.0),
        s(12.0, 0.0, 20.0, 0.0),
        s(-5.0, 5.0, 0.0, 5.0),
        s(0.0, 5.0, -5.0, 5.0),
        s(-5.0, 5.0, -1.0, 5.0),
        s(-10.0, -8.0, -2.0, -1.0),
        s(11.0, 5.0, 20.0, 5.0),
        s(12.0, 11.0, 20.0, 18.0),
        s(0.0, -5.0, 0.0, 15.0),
        s(10.0, 15.0, 10.0, -5.0),
        s(15.0, 10.0, -5.0, 10.0),
        s(-0.5, -5.0, -0.5, 15.0),
        s(10.5, -5.0, 10.5, 15.0),
        s(5.0, 5.0, 5.0, 20.0),
        s(5.0, 5.0, 5.0, 5.0),
        s(-1.0, 5.0, -1.0, 5.0),
        s(0.0, 0.0, 0.0, 0.0),
        s(10.0, 10.0, 10.0, 10.0),
        s(0.0, 5.0, -0.0, 15.0),
        s(-0.0, -5.0, 0.0, 5.0),
        s(0.0, 0.0, -0.0, -0.0),
        s(0.0, 5.0, 10.0, 5.0),
        s(5.0, -5.0, 5.0, 15.0),
        s(0.0, 0.0, 10.0, 10.5),
        s(0.1, 0.2, 9.7, 13.3),
        s(-1e-30, 3.0, 1e-30, 3.0),
        s(-0.0, 5.0, -5.0, 5.0),
        s(5.0, 5.0, 10.0, 5.0),
    ]
}

/// The rects of the hand cases, degenerate ones included.
pub fn hand_rects() -> Vec<Rect> {
    vec![
        R,
        Rect::new(-0.0, -0.0, 0.0, 0.0),
        Rect::new(5.0, 0.0, 5.0, 10.0),
        Rect::new(0.0, 5.0, 10.0, 5.0),
        Rect::new(5.0, 5.0, 5.0, 5.0),
        Rect::new(0.1, 0.1, 0.3, 9.9),
        Rect::new(-10.0, 0.0, -0.0, 10.0),
    ]
}
