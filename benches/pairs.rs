//! Dense pair throughput per backend on a seeded random scene (the 4096 × 1024), and the
//! demo's bullet-hell frame; and first hit per segment on a bullet-hell scene. GPU figures include upload, kernel and readback. A backend that
//! cannot open is reported and skipped: benches measure, tests judge.
//!
//! `cargo bench --bench pairs`; `rectcast bench` prints the same figure without criterion.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rectcast::{Backend, Batch, Engine, FirstHit, PairResult, scene};

fn bench_pairs(c: &mut Criterion) {
    let scenes = [
        (
            "random 4096x1024",
            scene::random_batch(7, 4096, 1024, 1000.0),
        ),
        ("bullet-hell 8192x512", scene::bullet_hell(2026, 8192, 512)),
    ];
    for backend in [Backend::Cpu, Backend::Gpu] {
        let mut engine = match Engine::new(backend) {
            Ok(engine) => engine,
            Err(e) => {
                eprintln!("{backend:?}: skipped ({e})");
                continue;
            }
        };
        let mut group = c.benchmark_group(format!("pairs/{}", engine.chosen()));
        group.sample_size(10);
        for (name, (segments, rects)) in &scenes {
            let mut results = vec![PairResult::MISS; segments.len() * rects.len()];
            group.throughput(Throughput::Elements(results.len() as u64));
            group.bench_function(*name, |b| {
                b.iter(|| {
                    engine
                        .pairs_into(segments, rects, &mut results)
                        .expect("pairs")
                })
            });
        }
        group.finish();
    }
}

/// First hit per segment on a bullet-hell scene: every pair tested, one result per segment read
/// back. `rectcast bench --query first-hit` runs the 65,536 x 4,096 scene.
fn bench_first_hit(c: &mut Criterion) {
    let (segments, rects) = scene::bullet_hell(2026, 16_384, 1024);
    let batch = Batch::new(&segments, &rects);
    for backend in [Backend::Cpu, Backend::Gpu] {
        let mut engine = match Engine::new(backend) {
            Ok(engine) => engine,
            Err(e) => {
                eprintln!("{backend:?}: skipped ({e})");
                continue;
            }
        };
        let mut group = c.benchmark_group(format!("first_hit/{}", engine.chosen()));
        group.sample_size(10);
        group.throughput(Throughput::Elements((segments.len() * rects.len()) as u64));
        let mut out = vec![FirstHit::NONE; segments.len()];
        group.bench_function("bullet-hell 16384x1024", |b| {
            b.iter(|| engine.first_hit_into(&batch, &mut out).expect("first hit"))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_pairs, bench_first_hit);
criterion_main!(benches);
