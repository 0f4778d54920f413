//! The CPU path against the exact oracle (tests/common/exact.rs) on any valid input: decisions
//! must be equal and t within 1 ulp of the correctly rounded exact value.
//!
//! cargo +nightly fuzz run segment_rect -- -max_total_time=60
#![no_main]

use libfuzzer_sys::fuzz_target;
use rectcast::{MAX_ABS_COORDINATE, Rect, Segment};

#[allow(dead_code, reason = "the fuzzer uses the oracle only, not the test scoring")]
#[path = "../../tests/common/exact.rs"]
mod exact;

fuzz_target!(|data: [u8; 32]| {
    let v: [f32; 8] = std::array::from_fn(|i| {
        f32::from_le_bytes([data[4 * i], data[4 * i + 1], data[4 * i + 2], data[4 * i + 3]])
    });
    // Only valid inputs: the engine rejects the rest before any work.
    if v.iter().any(|x| !x.is_finite() || x.abs() > MAX_ABS_COORDINATE) {
        return;
    }
    let s = Segment::new(v[0], v[1], v[2], v[3]);
    let r = Rect::new(v[4].min(v[6]), v[5].min(v[7]), v[4].max(v[6]), v[5].max(v[7]));
    let got = rectcast::segment_rect(&s, &r);
    let want = exact::segment_rect(&s, &r);
    let ulp = exact::ulp_distance(got.t_enter, want.t_enter)
        .max(exact::ulp_distance(got.t_exit, want.t_exit));
    assert!(
        got.flags == want.flags && ulp <= 1,
        "segment {s:?} rect {r:?}: got {got:?}, exact {want:?} ({ulp} ulp)"
    );
});
