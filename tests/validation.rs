//! Inputs outside the contract's domain are rejected before any work, naming the element and the
//! field, on every backend (the GPU twin is in tests/gpu_vs_cpu.rs).

mod common;

use common::cpu_engine;
use rectcast::{Error, InputArray, MAX_ABS_COORDINATE, PairIndex, Problem, Rect, Segment};

const UNIT: Rect = Rect::new(0.0, 0.0, 1.0, 1.0);
const S: Segment = Segment::new(0.0, 0.0, 1.0, 1.0);

fn input_error(result: rectcast::Result<Vec<rectcast::PairResult>>) -> rectcast::InputError {
    match result {
        Err(Error::Input(e)) => e,
        Err(other) => panic!("expected an input error, got {other}"),
        Ok(_) => panic!("expected an input error, got results"),
    }
}

#[test]
fn nan_in_a_segment_names_its_index_and_field() {
    let segments = [S, S, Segment::new(0.0, 0.0, f32::NAN, 1.0)];
    let e = input_error(cpu_engine().pairs(&segments, &[UNIT]));
    assert_eq!(
        (e.array, e.index, e.field, e.problem),
        (InputArray::Segments, 2, "x1", Problem::NotANumber)
    );
    assert_eq!(e.to_string(), "segment 2: x1 is NaN");
}

#[test]
fn infinity_in_a_rect_is_rejected() {
    let rects = [UNIT, Rect::new(0.0, f32::NEG_INFINITY, 1.0, 1.0)];
    let e = input_error(cpu_engine().pairs(&[S], &rects));
    assert_eq!((e.array, e.index, e.field), (InputArray::Rects, 1, "min_y"));
    assert_eq!(e.to_string(), "rect 1: min_y is infinite (-inf)");
}

#[test]
fn coordinates_beyond_2_pow_62_are_rejected_and_2_pow_62_is_accepted() {
    let limit = MAX_ABS_COORDINATE;
    assert_eq!(limit, 2f32.powi(62));
    let edge = [Segment::new(-limit, limit, limit, -limit)];
    assert!(cpu_engine().pairs(&edge, &[UNIT]).is_ok());
    let beyond = f32::from_bits(limit.to_bits() + 1);
    let e = input_error(cpu_engine().pairs(&[Segment::new(0.0, -beyond, 0.0, 0.0)], &[UNIT]));
    assert_eq!((e.index, e.field), (0, "y0"));
    assert!(matches!(e.problem, Problem::OutOfRange(_)));
}

#[test]
fn min_above_max_is_rejected_and_equal_is_accepted() {
    assert!(
        cpu_engine()
            .pairs(&[S], &[Rect::new(1.0, 0.0, 1.0, 0.0)])
            .is_ok()
    );
    let e = input_error(cpu_engine().pairs(&[S], &[UNIT, UNIT, Rect::new(0.0, 2.0, 1.0, 1.0)]));
    assert_eq!((e.index, e.field), (2, "min_y"));
    assert_eq!(e.to_string(), "rect 2: min_y is 2, greater than the max 1");
}

#[test]
fn pair_index_out_of_range_is_rejected() {
    let pairs = [PairIndex::new(0, 0), PairIndex::new(0, 1)];
    let e = input_error(cpu_engine().pair_list(&[S], &[UNIT], &pairs));
    assert_eq!((e.array, e.index, e.field), (InputArray::Pairs, 1, "rect"));
    assert_eq!(
        e.to_string(),
        "pair 1: rect is 1, out of range (there are 1)"
    );
}

#[test]
fn a_wrong_sized_output_buffer_is_an_error() {
    let mut out = vec![rectcast::PairResult::MISS; 3];
    match cpu_engine().pairs_into(&[S, S], &[UNIT], &mut out) {
        Err(Error::OutputLength {
            expected: 2,
            got: 3,
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_auto_backend_opens_nothing_before_a_call_and_says_so() {
    let engine = rectcast::Engine::new(rectcast::Backend::Auto).expect("auto never fails");
    let chosen = engine.chosen().to_string();
    assert!(engine.gpu_context().is_none(), "{chosen}");
    assert!(
        chosen.starts_with("cpu: ") && chosen.contains("(auto: no call yet; a GPU opens when"),
        "{chosen}"
    );
}
