//! Dense pair throughput per backend on a seeded random scene (the 4096 × 1024), and the
//! demo's bullet-hell frame. GPU figures include upload, kernel and readback. A backend that
//! cannot open is reported and skipped: benches measure, tests judge.
//!
//! `cargo bench --bench pairs`; `rectcast bench` prints the same figure without criterion.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rectcast::{Backend, Engine, PairResult, scene};

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

criterion_group!(benches, bench_pairs);
criterion_main!(benches);
