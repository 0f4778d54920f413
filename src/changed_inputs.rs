//! Values that change after validation: another thread may write into the caller's arrays
//! while a call runs (Python's zero-copy inputs make that easy). The answer is then
//! unspecified, but the CPU kernels must never index out of bounds, loop forever or panic,
//! whatever they read. These tests switch validation off on their own thread
//! (`validate::SKIP_FOR_TEST`) and hand every CPU query values validation would refuse.

use crate::validate::SKIP_FOR_TEST;
use crate::{Batch, BroadPhase, Circle, ClipTo, CpuOptions, Engine, Polygons, Rect, Segment, Simd};

/// Values a writer might leave in a cell: beyond the domain, infinite, not a number.
const WILD: [f32; 7] = [
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MAX,
    -f32::MAX,
    1e30,
    -1e30,
];

/// A small deterministic generator (xorshift), so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn coordinate(&mut self) -> f32 {
        (self.next() % 2000) as f32 / 10.0 - 100.0
    }
}

/// `n` records of `width` valid coordinates, with about one value in eight replaced by a wild
/// one.
fn records(rng: &mut Rng, n: usize, width: usize) -> Vec<f32> {
    (0..n * width)
        .map(|_| match rng.next() % 8 {
            0 => WILD[(rng.next() % WILD.len() as u64) as usize],
            _ => rng.coordinate(),
        })
        .collect()
}

/// Segments with wild values here and there, and some whose box is the whole plane (which a
/// box cull must not take for an overlap with the padding past the last shape).
fn segments(rng: &mut Rng, n: usize) -> Vec<Segment> {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let mut s: Vec<Segment> = bytemuck::cast_slice(&records(rng, n, 4)).to_vec();
    s.extend([
        Segment::new(-inf, -inf, inf, inf),
        Segment::new(inf, inf, -inf, -inf),
        Segment::new(-inf, inf, inf, -inf),
        Segment::new(nan, nan, nan, nan),
        Segment::new(-f32::MAX, -f32::MAX, f32::MAX, f32::MAX),
        Segment::new(0.0, 0.0, inf, nan),
    ]);
    s
}

/// Rects as a writer might leave them: wild values, min above max.
fn rects(rng: &mut Rng, n: usize) -> Vec<Rect> {
    records(rng, n, 4)
        .chunks(4)
        .map(|v| {
            let (x, y) = (v[0], v[1]);
            match rng.next() % 4 {
                0 => Rect::new(v[0], v[1], v[2], v[3]),
                _ => Rect::new(x, y, x + v[2].abs() / 10.0, y + v[3].abs() / 10.0),
            }
        })
        .collect()
}

fn circles(rng: &mut Rng, n: usize) -> Vec<Circle> {
    bytemuck::cast_slice(&records(rng, n, 3)).to_vec()
}

/// Valid polygons (they are owned, so they cannot change during a call): squares.
fn polygons(rng: &mut Rng, n: usize) -> Polygons {
    let mut vertices = Vec::new();
    let mut offsets = vec![0];
    for _ in 0..n {
        let (x, y) = (rng.coordinate(), rng.coordinate());
        vertices.extend([[x, y], [x + 3.0, y], [x + 3.0, y + 3.0], [x, y + 3.0]]);
        offsets.push(vertices.len() as u32);
    }
    Polygons::new(vertices, offsets).expect("squares are simple")
}

/// Every CPU query over these inputs, its answer ignored: only a panic fails.
fn run_every_query(engine: &mut Engine, s: &[Segment], r: &[Rect], c: &[Circle], p: &Polygons) {
    let batch = Batch::new(s, r);
    let _ = engine.pairs(s, r);
    let _ = engine.first_hit(&batch);
    let _ = engine.first_hit_rects(&batch);
    let _ = engine.hits(&batch);
    let _ = engine.counts(&batch);
    if let Some(rect) = r.first() {
        let _ = engine.clip(s, ClipTo::Rect(*rect));
    }
    let _ = engine.clip(
        &s[..r.len().min(s.len())],
        ClipTo::PerSegment(&r[..r.len().min(s.len())]),
    );
    let walls = &s[..s.len() / 2];
    let _ = engine.shape_pairs(s, walls);
    let _ = engine.shape_hits(s, walls);
    let _ = engine.shape_first_hits(s, walls);
    let _ = engine.shape_counts(s, walls);
    let _ = engine.shape_pairs(s, c);
    let _ = engine.shape_hits(s, c);
    let _ = engine.shape_first_hits(s, c);
    let _ = engine.shape_counts(s, c);
    let _ = engine.polygon_pairs(s, p);
    let _ = engine.polygon_hits(s, p);
    let _ = engine.polygon_first_hits(s, p);
    let _ = engine.polygon_counts(s, p);
}

#[test]
fn cpu_queries_never_panic_on_values_changed_after_validation() {
    SKIP_FOR_TEST.set(true);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for simd in Simd::available() {
        for threads in [1, 2] {
            let options = CpuOptions {
                threads,
                simd: Some(simd),
            };
            let mut engine = Engine::with_cpu_options(crate::Backend::Cpu, options).unwrap();
            // Brute force (few shapes, 17 to leave a partial SIMD block) and the grid (many).
            for (n, shapes, broad_phase) in [
                (64, 17, BroadPhase::Off),
                (150, 1_000, BroadPhase::On),
                (150, 1_000, BroadPhase::Off),
            ] {
                engine.set_broad_phase(broad_phase);
                let s = segments(&mut rng, n);
                let r = rects(&mut rng, shapes);
                let c = circles(&mut rng, shapes);
                let p = polygons(&mut rng, shapes / 8 + 1);
                run_every_query(&mut engine, &s, &r, &c, &p);
            }
        }
    }
}
