//! Throughput in pairs per second, every backend on the same scenes in one run (issue 5):
//!
//! - `scalar reference`: `rectcast::cpu::rect_queries` / `cpu::rect_pairs`, the contract's executable
//!   form, one thread;
//! - `cpu, 1 thread` and `cpu, all threads`: the fast CPU path (`Engine` on `Backend::Cpu`);
//! - `gpu end-to-end`: upload, kernel, readback; `gpu kernel`: the kernel's own time from
//!   timestamp queries, where the adapter has them;
//! - `parry2d`: the peer, `Aabb::clip_line_parameters` restricted to t in [0, 1], in the plain
//!   loop a user would write (first hit: the smallest t, the lowest rect on a tie); for
//!   polygons `geo`'s exact `intersects`.
//!
//! A backend that cannot open is reported and skipped: benches measure, tests judge.
//! `cargo bench --bench throughput`; `rectcast bench` prints the same table on any machine.

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use parry2d::bounding_volume::Aabb;
use parry2d::math::Vector;
use rectcast::cpu::rect_queries::{QueryOutputs, query, segment_rects};
use rectcast::{Backend, Batch, CpuOptions, Engine, FirstHit, PairResult, Rect, Segment, scene};
use std::time::Duration;

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn aabbs(rects: &[Rect]) -> Vec<Aabb> {
    rects
        .iter()
        .map(|r| Aabb::new(Vector::new(r.min_x, r.min_y), Vector::new(r.max_x, r.max_y)))
        .collect()
}

/// The segment's part inside `aabb`, as t0..t1 within 0..1, or None.
#[inline(always)]
fn parry_pair(s: &Segment, aabb: &Aabb) -> Option<(f32, f32)> {
    let origin = Vector::new(s.x0, s.y0);
    let dir = Vector::new(s.x1 - s.x0, s.y1 - s.y0);
    let (t0, t1) = aabb.clip_line_parameters(origin, dir)?;
    (t0 <= 1.0 && t1 >= 0.0).then(|| (t0.max(0.0), t1.min(1.0)))
}

fn parry_first_hit(segments: &[Segment], aabbs: &[Aabb], out: &mut [(u32, f32)]) {
    for (s, out) in segments.iter().zip(out.iter_mut()) {
        let mut best = (u32::MAX, f32::INFINITY);
        for (rect, aabb) in aabbs.iter().enumerate() {
            if let Some((t0, _)) = parry_pair(s, aabb)
                && t0 < best.1
            {
                best = (rect as u32, t0);
            }
        }
        *out = best;
    }
}

fn parry_all_pairs(segments: &[Segment], aabbs: &[Aabb], out: &mut [Option<(f32, f32)>]) {
    for (s, row) in segments.iter().zip(out.chunks_exact_mut(aabbs.len())) {
        for (aabb, out) in aabbs.iter().zip(row.iter_mut()) {
            *out = parry_pair(s, aabb);
        }
    }
}

/// The fast CPU path at 1 thread and at all threads, testing every pair (the broad phase has
/// its own bench, `benches/broad_phase.rs`).
fn cpu_engines() -> Vec<Engine> {
    [1, 0]
        .into_iter()
        .map(|threads| {
            let options = CpuOptions::threads(threads);
            let mut engine =
                Engine::with_cpu_options(Backend::Cpu, options).expect("the CPU engine opens");
            engine.set_broad_phase(rectcast::BroadPhase::Off);
            engine
        })
        .collect()
}

fn gpu_engine() -> Option<Engine> {
    match Engine::new(Backend::Gpu) {
        Ok(engine) => Some(engine),
        Err(e) => {
            eprintln!("gpu: skipped ({e})");
            None
        }
    }
}

/// `run` timed by the kernel's own timestamps: the sum over the iterations.
fn bench_kernel(
    group: &mut Group,
    name: &str,
    engine: &mut Engine,
    mut run: impl FnMut(&mut Engine),
) {
    if !engine.time_gpu_kernels(true) {
        eprintln!("{name}: skipped (the adapter has no timestamp queries)");
        return;
    }
    group.bench_function(name, |b| {
        b.iter_custom(|iterations| {
            (0..iterations)
                .map(|_| {
                    run(engine);
                    engine.gpu_kernel_time().unwrap_or_default()
                })
                .sum::<Duration>()
        })
    });
    engine.time_gpu_kernels(false);
}

fn first_hit(c: &mut Criterion) {
    let (segments, rects) = scene::bullet_hell(2026, 65_536, 4_096);
    let batch = Batch::new(&segments, &rects);
    let mut group = c.benchmark_group("first_hit/bullet-hell 65536x4096");
    group.sample_size(10);
    group.throughput(Throughput::Elements((segments.len() * rects.len()) as u64));
    let mut out = vec![FirstHit::NONE; segments.len()];

    group.bench_function("scalar reference", |b| {
        b.iter(|| {
            segment_rects(
                query::QUERY_FIRST_HIT,
                &batch,
                &mut QueryOutputs {
                    first_hits: &mut out,
                    segment_hits: &mut [],
                    rect_hits: &mut [],
                    found: &mut Vec::new(),
                },
            )
        })
    });
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |b| {
            b.iter(|| engine.first_hit_into(&batch, &mut out).expect("first hit"))
        });
    }
    if let Some(mut engine) = gpu_engine() {
        let name = engine.chosen().to_string();
        group.bench_function(format!("{name}, end to end"), |b| {
            b.iter(|| engine.first_hit_into(&batch, &mut out).expect("first hit"))
        });
        bench_kernel(&mut group, &format!("{name}, kernel"), &mut engine, |e| {
            e.first_hit_into(&batch, &mut out).expect("first hit")
        });
    }
    let aabbs = aabbs(&rects);
    let mut parry_out = vec![(0, 0.0); segments.len()];
    group.bench_function("parry2d", |b| {
        b.iter(|| parry_first_hit(&segments, &aabbs, &mut parry_out))
    });
    group.finish();
}

fn all_pairs(c: &mut Criterion) {
    let (segments, rects) = scene::bullet_hell(2026, 16_384, 1_024);
    let mut group = c.benchmark_group("all_pairs/bullet-hell 16384x1024");
    group.sample_size(10);
    group.throughput(Throughput::Elements((segments.len() * rects.len()) as u64));
    let mut results = vec![PairResult::MISS; segments.len() * rects.len()];

    group.bench_function("scalar reference", |b| {
        b.iter(|| rectcast::cpu::rect_pairs::pairs_dense(&segments, &rects, &mut results))
    });
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |b| {
            b.iter(|| {
                engine
                    .pairs_into(&segments, &rects, &mut results)
                    .expect("pairs")
            })
        });
    }
    if let Some(mut engine) = gpu_engine() {
        let name = engine.chosen().to_string();
        group.bench_function(format!("{name}, end to end"), |b| {
            b.iter(|| {
                engine
                    .pairs_into(&segments, &rects, &mut results)
                    .expect("pairs")
            })
        });
        bench_kernel(&mut group, &format!("{name}, kernel"), &mut engine, |e| {
            e.pairs_into(&segments, &rects, &mut results)
                .expect("pairs")
        });
    }
    let aabbs = aabbs(&rects);
    let mut parry_out = vec![None; segments.len() * rects.len()];
    group.bench_function("parry2d", |b| {
        b.iter(|| parry_all_pairs(&segments, &aabbs, &mut parry_out))
    });
    group.finish();
}

/// Segment × segment (`Engine::wall_pairs`) against parry2d's `segments_intersection2d` in the
/// plain loop, every query against every wall of a random scene (long segments at every slope,
/// so many cross). The GPU row is left out: its exact integer kernel runs at about 5 µs a pair
/// on lavapipe, too slow for a criterion sample; `rectcast bench` will carry it.
fn walls(c: &mut Criterion) {
    let (queries, _) = scene::random_batch(2026, 2_048, 1, 1000.0);
    let (walls, _) = scene::random_batch(2027, 1_024, 1, 1000.0);
    let mut group = c.benchmark_group("walls/random 2048x1024");
    group.sample_size(10);
    group.throughput(Throughput::Elements((queries.len() * walls.len()) as u64));
    group.bench_function("scalar reference", |b| {
        b.iter(|| {
            for q in &queries {
                for w in &walls {
                    std::hint::black_box(rectcast::segment_segment(q, w));
                }
            }
        })
    });
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |b| {
            b.iter(|| engine.wall_pairs(&queries, &walls).expect("wall pairs"))
        });
        // What parry's loop gives (hits, nothing written per pair): the counts.
        group.bench_function(format!("counts, {}", engine.chosen()), |b| {
            b.iter(|| engine.shape_counts(&queries, &walls).expect("counts"))
        });
    }
    let point = |x: f32, y: f32| Vector::new(x, y);
    group.bench_function("parry2d", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            for q in &queries {
                for w in &walls {
                    hits += parry2d::utils::segments_intersection2d(
                        point(q.x0, q.y0),
                        point(q.x1, q.y1),
                        point(w.x0, w.y0),
                        point(w.x1, w.y1),
                        f32::EPSILON,
                    )
                    .is_some() as usize;
                }
            }
            hits
        })
    });
    group.finish();
}

/// Segment × circle (`Engine::circle_pairs`) against parry2d's `Ball::cast_local_ray` (solid,
/// time of impact up to 1, the segment as the ray from its start) in the plain loop: every
/// query against every circle of a random scene (long segments, circles of radius 5 to 40 on
/// the same 1000 × 1000 field, so that many are crossed). parry gives the entering t alone,
/// rectcast both t and the kind, exactly. The GPU row is left out as for walls.
fn circles(c: &mut Criterion) {
    use parry2d::query::{Ray, RayCast};
    use parry2d::shape::Ball;
    let (queries, _) = scene::random_batch(2026, 2_048, 1, 1000.0);
    let circles = scene::random_circles(2028, 1_024, 1000.0, (5.0, 40.0));
    let mut group = c.benchmark_group("circles/random 2048x1024");
    group.sample_size(10);
    group.throughput(Throughput::Elements((queries.len() * circles.len()) as u64));
    group.bench_function("scalar reference", |b| {
        b.iter(|| {
            for q in &queries {
                for circle in &circles {
                    std::hint::black_box(rectcast::segment_circle(q, circle));
                }
            }
        })
    });
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |b| {
            b.iter(|| {
                engine
                    .circle_pairs(&queries, &circles)
                    .expect("circle pairs")
            })
        });
        group.bench_function(format!("counts, {}", engine.chosen()), |b| {
            b.iter(|| engine.shape_counts(&queries, &circles).expect("counts"))
        });
    }
    let balls: Vec<(Ball, Vector)> = circles
        .iter()
        .map(|c| (Ball::new(c.r), Vector::new(c.cx, c.cy)))
        .collect();
    group.bench_function("parry2d", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            for q in &queries {
                let dir = Vector::new(q.x1 - q.x0, q.y1 - q.y0);
                for (ball, center) in &balls {
                    let ray = Ray::new(Vector::new(q.x0, q.y0) - *center, dir);
                    hits += ball.cast_local_ray(&ray, 1.0, true).is_some() as usize;
                }
            }
            hits
        })
    });
    group.finish();
}

/// Segment × polygon (`Engine::polygon_pairs`) against geo's exact `Line::intersects(&Polygon)`
/// in the plain loop (f64, as geo users hold coordinates): every query against every polygon of
/// a random scene (star-shaped polygons of 8 to 16 vertices, radius 10 to 60, about half
/// concave). geo answers a boolean; rectcast the kind, both t and both edges, exactly.
fn polygons(c: &mut Criterion) {
    use geo::Intersects;
    let (queries, _) = scene::random_batch(2026, 2_048, 1, 1000.0);
    let polygons = scene::random_polygons(2029, 256, 1000.0, (10.0, 60.0), (8, 16));
    let mut group = c.benchmark_group("polygons/random 2048x256");
    group.sample_size(10);
    group.throughput(Throughput::Elements(
        (queries.len() * polygons.len()) as u64,
    ));
    group.bench_function("scalar reference", |b| {
        b.iter(|| {
            for q in &queries {
                for ring in polygons.rings() {
                    std::hint::black_box(rectcast::segment_polygon(q, ring));
                }
            }
        })
    });
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |b| {
            b.iter(|| {
                engine
                    .polygon_pairs(&queries, &polygons)
                    .expect("polygon pairs")
            })
        });
        group.bench_function(format!("counts, {}", engine.chosen()), |b| {
            b.iter(|| engine.polygon_counts(&queries, &polygons).expect("counts"))
        });
    }
    let geo_polygons = geo_polygons(&polygons);
    let lines: Vec<geo::Line<f64>> = queries
        .iter()
        .map(|q| {
            geo::Line::new(
                geo::coord! { x: q.x0 as f64, y: q.y0 as f64 },
                geo::coord! { x: q.x1 as f64, y: q.y1 as f64 },
            )
        })
        .collect();
    group.bench_function("geo", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            for line in &lines {
                for polygon in &geo_polygons {
                    hits += line.intersects(polygon) as usize;
                }
            }
            hits
        })
    });
    group.finish();
}

fn geo_polygons(polygons: &rectcast::Polygons) -> Vec<geo::Polygon<f64>> {
    polygons
        .rings()
        .map(|ring| {
            let coords: Vec<(f64, f64)> = ring.iter().map(|&[x, y]| (x as f64, y as f64)).collect();
            geo::Polygon::new(geo::LineString::from(coords), vec![])
        })
        .collect()
}

/// Polygon × polygon (`Engine::polygon_overlaps`) against geo's exact
/// `Polygon::intersects(&Polygon)`: every polygon against every polygon of two random scenes.
fn overlaps(c: &mut Criterion) {
    use geo::Intersects;
    let a = scene::random_polygons(2030, 512, 1000.0, (10.0, 60.0), (8, 16));
    let b = scene::random_polygons(2031, 512, 1000.0, (10.0, 60.0), (8, 16));
    let mut group = c.benchmark_group("overlaps/random 512x512");
    group.sample_size(10);
    group.throughput(Throughput::Elements((a.len() * b.len()) as u64));
    for mut engine in cpu_engines() {
        group.bench_function(engine.chosen().to_string(), |bench| {
            bench.iter(|| engine.polygon_overlaps(&a, &b).expect("overlaps"))
        });
    }
    let (ga, gb) = (geo_polygons(&a), geo_polygons(&b));
    group.bench_function("geo", |bench| {
        bench.iter(|| {
            let mut hits = 0usize;
            for p in &ga {
                for q in &gb {
                    hits += p.intersects(q) as usize;
                }
            }
            hits
        })
    });
    group.finish();
}

criterion_group!(
    benches, first_hit, all_pairs, walls, circles, polygons, overlaps
);
criterion_main!(benches);
