//! The queries over shapes (hits, first hits, counts; docs/semantics.md, "Queries over
//! shapes") against the dense pairs they reduce, element by element, on the CPU and the GPU,
//! for walls and circles.

mod common;

use rectcast::scene::SplitMix64;
use rectcast::{Circle, Engine, Segment, Shape, ShapeContact, ShapeHit};

fn circles(seed: u64, n: usize) -> Vec<Circle> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            // On a grid now and then, so that several circles give one segment the same t.
            if rng.below(3) == 0 {
                let k = rng.below(5) as f32 * 100.0;
                Circle::new(k, k, 50.0)
            } else {
                Circle::new(
                    rng.range(0.0, 1000.0),
                    rng.range(0.0, 1000.0),
                    rng.range(0.0, 60.0),
                )
            }
        })
        .collect()
}

/// The reductions of the dense pairs, the way the contract states them.
fn expected<S: Shape>(
    pairs: &[S::Contact],
    segments: usize,
    m: usize,
) -> (
    Vec<ShapeHit<S::Contact>>,
    Vec<Option<ShapeHit<S::Contact>>>,
    Vec<u32>,
    Vec<u64>,
) {
    let mut hits = Vec::new();
    let mut first: Vec<Option<ShapeHit<S::Contact>>> = vec![None; segments];
    let (mut per_segment, mut per_shape) = (vec![0u32; segments], vec![0u64; m]);
    for (i, c) in pairs.iter().enumerate() {
        if !c.hit() {
            continue;
        }
        let hit = ShapeHit {
            segment: (i / m) as u32,
            shape: (i % m) as u32,
            contact: *c,
        };
        hits.push(hit);
        per_segment[i / m] += 1;
        per_shape[i % m] += 1;
        // Pairs come in shape order: a later one replaces only with a smaller t.
        let slot = &mut first[i / m];
        if slot.is_none() || c.t_enter() < slot.unwrap().contact.t_enter() {
            *slot = Some(hit);
        }
    }
    (hits, first, per_segment, per_shape)
}

#[track_caller]
fn assert_same<T: PartialEq + std::fmt::Debug>(what: &str, want: &[T], got: &[T]) {
    if let Some(i) = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i)) {
        panic!(
            "{what}: first difference at {i}: want {:?}, got {:?} ({} vs {} entries)",
            want.get(i),
            got.get(i),
            want.len(),
            got.len()
        );
    }
}

fn check<S: Shape>(engine: &mut Engine, what: &str, segments: &[Segment], shapes: &[S]) {
    let pairs = engine.shape_pairs(segments, shapes).expect("pairs");
    let (hits, first, per_segment, per_shape) = expected::<S>(&pairs, segments.len(), shapes.len());
    assert!(hits.len() > 50, "{what}: {} hits", hits.len());
    assert_same(
        what,
        &hits,
        &engine.shape_hits(segments, shapes).expect("hits"),
    );
    assert_same(
        what,
        &first,
        &engine.shape_first_hits(segments, shapes).expect("first"),
    );
    let counts = engine.shape_counts(segments, shapes).expect("counts");
    assert_same(what, &per_segment, &counts.per_segment);
    assert_same(what, &per_shape, &counts.per_rect);
}

#[test]
fn hits_first_hits_and_counts_reduce_the_pairs_on_the_cpu() {
    let mut engine = common::cpu_engine();
    let (segments, _) = rectcast::scene::random_batch(41, 300, 1, 1000.0);
    let (walls, _) = rectcast::scene::random_batch(42, 90, 1, 1000.0);
    check(&mut engine, "walls", &segments, &walls);
    check(&mut engine, "circles", &segments, &circles(43, 120));
}

#[test]
fn hits_first_hits_and_counts_reduce_the_pairs_on_the_gpu() {
    let Some(mut gpu) = common::gpu_engine("shape_queries", rectcast::GpuLimits::default()) else {
        return;
    };
    let (segments, _) = rectcast::scene::random_batch(44, 80, 1, 1000.0);
    let (walls, _) = rectcast::scene::random_batch(45, 40, 1, 1000.0);
    check(&mut gpu, "walls on the gpu", &segments, &walls);
    let disks = circles(46, 40);
    check(&mut gpu, "circles on the gpu", &segments, &disks);
    // And the GPU's first hits are the CPU's.
    let want = common::cpu_engine()
        .shape_first_hits(&segments, &disks)
        .expect("cpu");
    assert_same(
        "gpu vs cpu",
        &want,
        &gpu.shape_first_hits(&segments, &disks).expect("gpu"),
    );
}

#[test]
fn a_tie_goes_to_the_lowest_shape_and_a_point_inside_comes_first() {
    let mut engine = common::cpu_engine();
    let segment = [Segment::new(0.0, 0.0, 10.0, 0.0)];
    // Shapes 1 and 2 are entered at the same t = 0.4, shape 0 later; shape 3 never.
    let disks = [
        Circle::new(8.0, 0.0, 1.0),
        Circle::new(5.0, 0.0, 1.0),
        Circle::new(5.0, 0.0, 1.0),
        Circle::new(5.0, 5.0, 1.0),
    ];
    let first = engine.shape_first_hits(&segment, &disks).expect("first")[0].expect("a hit");
    assert_eq!((first.shape, first.contact.t_enter), (1, 0.4));
    let counts = engine.shape_counts(&segment, &disks).expect("counts");
    assert_eq!(
        (counts.per_segment, counts.per_rect),
        (vec![3], vec![1, 1, 1, 0])
    );
    // A wall through the start: t = 0, before every circle.
    let walls = [
        Segment::new(5.0, -1.0, 5.0, 1.0),
        Segment::new(0.0, -1.0, 0.0, 1.0),
    ];
    let first = engine.shape_first_hits(&segment, &walls).expect("first")[0].expect("a hit");
    assert_eq!((first.shape, first.contact.t_enter), (1, 0.0));
    // Nothing hit: None; no shapes: None for every segment.
    assert_eq!(
        engine
            .shape_first_hits(&segment, &disks[3..])
            .expect("none"),
        [None]
    );
    assert_eq!(
        engine
            .shape_first_hits::<Circle>(&segment, &[])
            .expect("empty"),
        [None]
    );
    // A bad shape is named before any work.
    let e = engine
        .shape_hits(&segment, &[Circle::new(0.0, 0.0, -1.0)])
        .unwrap_err();
    assert_eq!(e.to_string(), "circle 0: r is -1, below 0");
}
