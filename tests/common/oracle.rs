//! An independent oracle for inputs with small integer coordinates: the contract's definition of
//! I evaluated with exact rationals (i64), in the p_k / q_k form of the classic Liang–Barsky
//! write-up rather than the kernel's slab form. For such inputs every f32 operation of the
//! kernel is exact too, so decisions must match exactly and t must be the correctly rounded
//! quotient, bit for bit.

use rectcast::{PairResult, Rect, Segment, Sides, flags};

/// t = num / den with den > 0.
#[derive(Clone, Copy, Debug)]
struct Frac {
    num: i64,
    den: i64,
}

impl Frac {
    fn new(num: i64, den: i64) -> Self {
        if den < 0 {
            Self {
                num: -num,
                den: -den,
            }
        } else {
            Self { num, den }
        }
    }
    fn cmp(self, other: Frac) -> std::cmp::Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
    fn to_f32(self) -> f32 {
        // Small integers convert exactly; the f32 division is correctly rounded.
        self.num as f32 / self.den as f32
    }
}

fn int(v: f32) -> i64 {
    assert!(
        v == v.trunc() && v.abs() < 1e6,
        "oracle needs small integers, got {v}"
    );
    v as i64
}

pub fn segment_rect(s: &Segment, r: &Rect) -> PairResult {
    let (x0, y0, x1, y1) = (int(s.x0), int(s.y0), int(s.x1), int(s.y1));
    let (dx, dy) = (x1 - x0, y1 - y0);
    // p_k t <= q_k for every boundary k: inside the closed rectangle.
    let boundaries = [
        (-dx, x0 - int(r.min_x), Sides::MIN_X),
        (dx, int(r.max_x) - x0, Sides::MAX_X),
        (-dy, y0 - int(r.min_y), Sides::MIN_Y),
        (dy, int(r.max_y) - y0, Sides::MAX_Y),
    ];
    let mut lower = Frac::new(0, 1);
    let mut upper = Frac::new(1, 1);
    for &(p, q, _) in &boundaries {
        if p == 0 {
            if q < 0 {
                return PairResult::MISS;
            }
        } else if p < 0 {
            let t = Frac::new(q, p);
            if t.cmp(lower).is_gt() {
                lower = t;
            }
        } else {
            let t = Frac::new(q, p);
            if t.cmp(upper).is_lt() {
                upper = t;
            }
        }
    }
    if lower.cmp(upper).is_gt() {
        return PairResult::MISS;
    }
    let start_inside = r.contains(s.x0, s.y0);
    let end_inside = r.contains(s.x1, s.y1);
    let mut bits = flags::HIT;
    let mut entry = Sides::NONE;
    let mut exit = Sides::NONE;
    // Sides crossed inward at t_enter / outward at t_exit.
    for &(p, q, side) in &boundaries {
        if p < 0 && !start_inside && Frac::new(q, p).cmp(lower).is_eq() {
            entry = entry | side;
        }
        if p > 0 && !end_inside && Frac::new(q, p).cmp(upper).is_eq() {
            exit = exit | side;
        }
    }
    if start_inside {
        bits |= flags::START_INSIDE;
    }
    if end_inside {
        bits |= flags::END_INSIDE;
    }
    bits |= entry.bits() << flags::ENTRY_SHIFT | exit.bits() << flags::EXIT_SHIFT;
    PairResult {
        t_enter: if start_inside { 0.0 } else { lower.to_f32() },
        t_exit: if end_inside { 1.0 } else { upper.to_f32() },
        flags: bits,
    }
}

/// Every segment with endpoints on the integer grid `coords × coords`, every rect with corners
/// on `rect_coords` (min <= max): all the corner, edge, parallel and point cases at once.
pub fn exhaustive_grid(
    coords: std::ops::RangeInclusive<i32>,
    rect_coords: std::ops::RangeInclusive<i32>,
) -> (Vec<Segment>, Vec<Rect>) {
    let c: Vec<f32> = coords.map(|v| v as f32).collect();
    let rc: Vec<f32> = rect_coords.map(|v| v as f32).collect();
    let mut segments = Vec::new();
    for &x0 in &c {
        for &y0 in &c {
            for &x1 in &c {
                for &y1 in &c {
                    segments.push(Segment::new(x0, y0, x1, y1));
                }
            }
        }
    }
    let mut rects = Vec::new();
    for &min_x in &rc {
        for &max_x in rc.iter().filter(|&&v| v >= min_x) {
            for &min_y in &rc {
                for &max_y in rc.iter().filter(|&&v| v >= min_y) {
                    rects.push(Rect::new(min_x, min_y, max_x, max_y));
                }
            }
        }
    }
    (segments, rects)
}
