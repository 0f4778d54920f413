//! The broad phase at scale (issue 14): first hit on bullet-hell, uniform random and clustered
//! scenes, in equivalent pairs (segments × rects) per second, every row in one run:
//!
//! - `brute force`: every rect tested (`BroadPhase::Off`), all threads;
//! - `broad phase, N threads`: a prepared `RectSet` (its grid built once, outside the timing);
//! - `broad phase + build`: the grid built inside each call (`BroadPhase::On` on a plain batch,
//!   the per-frame path);
//! - on the GPU, where one opens: the broad phase end to end (a prepared set, whose grid the GPU
//!   keeps between calls), with its build on the GPU in every call, its walk's kernel time
//!   alone (where the device has timestamp queries), and the brute force on the smallest scene;
//! - `parry2d BVH`: the peer a Rust user picks instead: `Bvh::from_leaves` (binned SAH) and
//!   `Bvh::cast_ray` (best first) per segment, with rayon over the segments, build included.
//!
//! A game's frame (`game frame`): 50,000 bullets against 5,000 moving hitboxes, everything
//! rebuilt each frame, on one thread and on all, beside parry2d.
//!
//! And the same for circles (`circles`): a grid over the circles' boxes, built per call; for
//! walls (`walls`): a grid along them, built per call, beside the rects they cross; and a tile
//! map's walls and circles (`tile_map`), whose pairs take the narrow exact integers.
//!
//! The brute force is left out above 10^10 pairs (seconds per iteration); `rectcast bench
//! --query broad-phase` times it once there. `cargo bench --bench broad_phase`.

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use parry2d::bounding_volume::Aabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy};
use parry2d::query::{Ray, RayCast};
use rayon::prelude::*;
use rectcast::FrameCapacity;
use rectcast::{
    Backend, Batch, BroadPhase, Circle, CpuOptions, Engine, FirstHit, FrameLoop, LayeredBatch,
    Rect, RectSet, Segment, TargetBatch, TargetHit, Targets, scene,
};

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// A parry2d result not written yet (its row left out by a filter).
const UNSET: u32 = u32::MAX - 1;

fn cpu(threads: usize, broad_phase: BroadPhase) -> Engine {
    let options = CpuOptions::threads(threads);
    let mut engine = Engine::with_cpu_options(Backend::Cpu, options).expect("the CPU engine opens");
    engine.set_broad_phase(broad_phase);
    engine
}

/// parry2d's BVH over the rects, built, then one best-first ray cast per segment (t in 0..1,
/// solid: a start inside is a hit at 0), on rayon's threads.
fn parry_first_hit(segments: &[Segment], rects: &[Rect], out: &mut [(u32, f32)]) {
    let aabbs: Vec<Aabb> = rects
        .iter()
        .map(|r| Aabb::new(Vector::new(r.min_x, r.min_y), Vector::new(r.max_x, r.max_y)))
        .collect();
    parry_cast(segments, &aabbs, out, |leaf, ray, best| {
        aabbs[leaf].cast_local_ray(ray, best, true)
    });
}

/// The peer's row, parry2d's BVH built and cast ([`parry_first_hit`]); its last answers.
fn parry_row(group: &mut Group, segments: &[Segment], rects: &[Rect]) -> Vec<(u32, f32)> {
    let mut parry_out = vec![(UNSET, 0.0); segments.len()];
    group.bench_function(
        format!(
            "parry2d BVH, build + cast_ray, {} threads",
            rayon::current_num_threads()
        ),
        |b| b.iter(|| parry_first_hit(segments, rects, &mut parry_out)),
    );
    parry_out
}

/// Whether this is `cargo bench` rather than the suite's single pass over each row.
fn benching() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The largest scene (segments × rects) whose GPU rows the suite's single pass runs.
const SUITE_GPU_PAIRS: f64 = (1u64 << 28) as f64;

fn scene_group(c: &mut Criterion, name: &str, (segments, rects): (Vec<Segment>, Vec<Rect>)) {
    let pairs = (segments.len() as f64) * (rects.len() as f64);
    let mut group: Group = c.benchmark_group(format!(
        "first_hit/{name} {}x{}",
        segments.len(),
        rects.len()
    ));
    group.sample_size(10);
    group.throughput(Throughput::Elements(pairs as u64));
    let mut out = vec![FirstHit::NONE; segments.len()];
    let plain = Batch::new(&segments, &rects);
    if pairs <= 1e10 {
        let mut brute = cpu(0, BroadPhase::Off);
        group.bench_function(format!("brute force, {}", brute.chosen()), |b| {
            b.iter(|| brute.first_hit_into(&plain, &mut out).unwrap())
        });
    }
    let set = RectSet::new(&rects).unwrap();
    let over = Batch::over(&segments, &set);
    for threads in [1, 0] {
        let mut engine = cpu(threads, BroadPhase::On);
        group.bench_function(format!("broad phase, {}", engine.chosen()), |b| {
            b.iter(|| engine.first_hit_into(&over, &mut out).unwrap())
        });
        group.bench_function(format!("broad phase + build, {}", engine.chosen()), |b| {
            b.iter(|| engine.first_hit_into(&plain, &mut out).unwrap())
        });
    }
    // The suite's single pass (scripts/test.sh) runs the GPU rows on the small scenes only:
    // on lavapipe a row over a large one takes 10 to 15 s.
    let gpu = if benching() || pairs <= SUITE_GPU_PAIRS {
        Engine::new(Backend::Gpu)
    } else {
        Err(rectcast::Error::Gpu(
            "over large scenes only under `cargo bench`".into(),
        ))
    };
    match gpu {
        Ok(mut gpu) => {
            // Criterion cuts long names: the adapter is said once, the rows say "gpu".
            eprintln!("gpu: {}", gpu.chosen());
            let name = "gpu";
            gpu.set_broad_phase(BroadPhase::On);
            group.bench_function(format!("{name}, broad phase, end to end"), |b| {
                b.iter(|| gpu.first_hit_into(&over, &mut out).unwrap());
                assert!(gpu.used_broad_phase(), "the GPU did not walk its grid");
            });
            group.bench_function(format!("{name}, broad phase + build, end to end"), |b| {
                b.iter(|| gpu.first_hit_into(&plain, &mut out).unwrap())
            });
            // The walk's dispatches alone (the build's are not timed), where the device
            // has timestamp queries.
            if gpu.time_gpu_kernels(true) {
                group.bench_function(format!("{name}, broad phase, kernel only"), |b| {
                    b.iter_custom(|iterations| {
                        let mut total = std::time::Duration::ZERO;
                        for _ in 0..iterations {
                            gpu.first_hit_into(&over, &mut out).unwrap();
                            total += gpu.gpu_kernel_time().unwrap_or_default();
                        }
                        total
                    })
                });
                gpu.time_gpu_kernels(false);
            }
            if segments.len() * rects.len() <= 65_536 * 4096 {
                gpu.set_broad_phase(BroadPhase::Off);
                group.bench_function(format!("{name}, brute force, end to end"), |b| {
                    b.iter(|| gpu.first_hit_into(&plain, &mut out).unwrap())
                });
            }
        }
        Err(e) => eprintln!("gpu: skipped ({e})"),
    }
    let parry_out = parry_row(&mut group, &segments, &rects);
    group.finish();
    // The same segments hit something in both (parry's t is not the contract's, and it breaks
    // ties its own way, so only hit or miss is compared).
    // Only where the rows ran (a filter on the command line leaves them out).
    if parry_out.iter().any(|h| h.0 != UNSET) {
        let ours = out.iter().filter(|h| h.rect().is_some()).count();
        let theirs = parry_out.iter().filter(|h| h.0 != u32::MAX).count();
        eprintln!("{name}: segments hit: rectcast {ours}, parry2d {theirs}");
    }
}

fn bullet_hell(c: &mut Criterion) {
    for (n, m) in [(65_536, 4096), (262_144, 32_768), (1_048_576, 100_000)] {
        scene_group(c, "bullet-hell", scene::bullet_hell(2026, n, m));
    }
}

/// A game's frame (issue 37): 50,000 bullets against 5,000 hitboxes that move, so everything is
/// redone each frame: a `RectSet` rebuilt then queried, a plain `Batch` whose grid the call
/// builds, and the same frame through a `FrameLoop` on the CPU (write, dispatch, read), on one
/// thread and on all; parry2d's BVH, built and cast, is the peer.
fn game_frame(c: &mut Criterion) {
    let (segments, rects) = scene::bullet_hell(37, 50_000, 5_000);
    let mut group: Group = c.benchmark_group("game frame/bullet-hell 50000x5000");
    group.sample_size(30);
    let mut out = vec![FirstHit::NONE; segments.len()];
    let plain = Batch::new(&segments, &rects);
    let mut set = RectSet::default();
    for threads in [1, 0] {
        let mut engine = cpu(threads, BroadPhase::Auto);
        let chosen = engine.chosen();
        group.bench_function(format!("RectSet rebuilt + first hit, {chosen}"), |b| {
            b.iter(|| {
                set.rebuild(&rects).unwrap();
                engine
                    .first_hit_into(&Batch::over(&segments, &set), &mut out)
                    .unwrap()
            })
        });
        group.bench_function(
            format!("plain Batch (grid built in the call), {chosen}"),
            |b| b.iter(|| engine.first_hit_into(&plain, &mut out).unwrap()),
        );
        let capacity = FrameCapacity::new(segments.len(), rects.len());
        let mut frames = FrameLoop::new(cpu(threads, BroadPhase::Auto), capacity).unwrap();
        group.bench_function(
            format!("FrameLoop write + dispatch + read, {chosen}"),
            |b| {
                b.iter(|| {
                    frames.write(&plain).unwrap();
                    let id = frames.dispatch().unwrap();
                    frames.read(id, &mut out).unwrap()
                })
            },
        );
    }
    gpu_frame_rows(&mut group, &segments, &rects, &out);
    parry_row(&mut group, &segments, &rects);
    group.finish();
}

/// The game frame on the GPU, where one opens, end to end: a `RectSet` rebuilt and queried, a
/// plain `Batch`, and a `FrameLoop` read at once (latency) or a frame later (pipelined, as a
/// game runs it); each row's last call split into its host parts, and every row's answers
/// checked against the CPU's (`cpu_out`).
fn gpu_frame_rows(group: &mut Group, segments: &[Segment], rects: &[Rect], cpu_out: &[FirstHit]) {
    let plain = &Batch::new(segments, rects);
    let Ok(mut gpu) = Engine::new(Backend::Gpu) else {
        return;
    };
    eprintln!("gpu: {}", gpu.chosen());
    let mut out = vec![FirstHit::NONE; cpu_out.len()];
    let mut set = RectSet::default();
    let report = |row: &str, gpu: &Engine, out: &mut [FirstHit]| {
        if out.iter().all(|h| *h == FirstHit::NONE) {
            return; // the row left out by a filter
        }
        let same = out.iter().zip(cpu_out).filter(|(a, b)| a == b).count();
        eprintln!("gpu, {row}: {same} of {} first hits the CPU's", out.len());
        eprintln!("gpu, {row}: last call {:?}", gpu.last_gpu_call());
        out.fill(FirstHit::NONE);
    };
    group.bench_function("gpu, RectSet rebuilt + first hit, end to end", |b| {
        b.iter(|| {
            set.rebuild(rects).unwrap();
            let batch = Batch::over(segments, &set);
            gpu.first_hit_into(&batch, &mut out).unwrap()
        })
    });
    report("RectSet rebuilt", &gpu, &mut out);
    group.bench_function("gpu, plain Batch, end to end", |b| {
        b.iter(|| gpu.first_hit_into(plain, &mut out).unwrap())
    });
    report("plain Batch", &gpu, &mut out);
    let capacity = FrameCapacity::new(cpu_out.len(), rects.len());
    let mut frames = FrameLoop::new(gpu, capacity).unwrap();
    group.bench_function("gpu, FrameLoop write + dispatch + read", |b| {
        b.iter(|| {
            frames.write(plain).unwrap();
            let id = frames.dispatch().unwrap();
            frames.read(id, &mut out).unwrap()
        })
    });
    let mut previous = None;
    group.bench_function("gpu, FrameLoop pipelined (read a frame later)", |b| {
        b.iter(|| {
            frames.write(plain).unwrap();
            let id = frames.dispatch().unwrap();
            if let Some(previous) = previous.replace(id) {
                frames.read(previous, &mut out).unwrap()
            }
        })
    });
    // Where the row ran (not left out by a filter): its last frame, against the CPU's.
    if let Some(previous) = previous {
        frames.read(previous, &mut out).unwrap();
        let same = out.iter().zip(cpu_out).filter(|(a, b)| a == b).count();
        eprintln!(
            "gpu, FrameLoop pipelined: {same} of {} first hits the CPU's",
            out.len()
        );
    }
    assert_eq!(
        frames.last_fallback(),
        None,
        "a GPU frame fell back to the CPU"
    );
}

/// A game's frame over mixed targets (issue 37's scene): 50,000 bullets against bullet hell's
/// hitboxes made 2,000 boxes, 2,000 circles (their inscribed disks) and 1,000 walls (their
/// diagonals), the circles and walls moving (no grid or layout kept from an earlier frame): one
/// `Targets` set again and queried in one call, against the three calls a game made before
/// (rects, circles, walls) without their merge; on the GPU, where one opens, the same call end
/// to end.
fn mixed_frame(c: &mut Criterion) {
    const POSES: usize = 8;
    let (segments, boxes) = scene::bullet_hell(37, 50_000, 5_000);
    let rects = &boxes[..2_000];
    let circles: Vec<Circle> = boxes[2_000..4_000]
        .iter()
        .map(|b| {
            let r = (b.max_x - b.min_x).min(b.max_y - b.min_y) / 2.0;
            Circle::new((b.min_x + b.max_x) / 2.0, (b.min_y + b.max_y) / 2.0, r)
        })
        .collect();
    let walls: Vec<Segment> = boxes[4_000..]
        .iter()
        .map(|b| Segment::new(b.min_x, b.min_y, b.max_x, b.max_y))
        .collect();
    // Every target moves each frame, a quarter unit at a time through eight poses, more than
    // an engine keeps grids and layouts of: none is used again, as in a game.
    let poses: Vec<(Vec<Circle>, Vec<Segment>)> = (0..POSES)
        .map(|p| {
            let d = 0.25 * p as f32;
            let circles = circles.iter().map(|c| Circle::new(c.cx + d, c.cy, c.r));
            let walls = walls
                .iter()
                .map(|w| Segment::new(w.x0 + d, w.y0, w.x1 + d, w.y1));
            (circles.collect(), walls.collect())
        })
        .collect();
    let mut group: Group =
        c.benchmark_group("game frame/mixed 50000x(2000 rects+2000 circles+1000 walls)");
    group.sample_size(20);
    // Each kind set again in `pose`, then the one call.
    let frame =
        |engine: &mut Engine, targets: &mut Targets, pose: usize, out: &mut [Option<TargetHit>]| {
            let (circles, walls) = &poses[pose % POSES];
            targets.set_rects(rects).unwrap();
            targets.set_circles(circles).unwrap();
            targets.set_walls(walls).unwrap();
            let batch = TargetBatch::over(&segments, targets);
            engine.target_first_hits_into(&batch, out).unwrap()
        };
    let mut targets = Targets::new();
    let mut out = vec![None; segments.len()];
    let mut rect_out = vec![FirstHit::NONE; segments.len()];
    for threads in [1, 0] {
        let mut engine = cpu(threads, BroadPhase::Auto);
        let chosen = engine.chosen();
        let mut pose = 0;
        group.bench_function(
            format!("Targets set + target_first_hits_into, {chosen}"),
            |b| {
                b.iter(|| {
                    pose += 1;
                    frame(&mut engine, &mut targets, pose, &mut out)
                })
            },
        );
        let mut three_frames = 0;
        group.bench_function(format!("three calls, no merge, {chosen}"), |b| {
            b.iter(|| {
                let (circles, walls) = &poses[three_frames % POSES];
                three_frames += 1;
                let plain = Batch::new(&segments, rects);
                engine.first_hit_into(&plain, &mut rect_out).unwrap();
                let c = engine.shape_first_hits(&segments, circles).unwrap();
                let w = engine.shape_first_hits(&segments, walls).unwrap();
                (c, w)
            })
        });
    }
    if let Ok(mut gpu) = Engine::new(Backend::Gpu) {
        eprintln!("gpu: {}", gpu.chosen());
        let mut on_gpu = vec![None; segments.len()];
        let mut pose = 0;
        group.bench_function(
            "gpu, Targets set + target_first_hits_into, end to end",
            |b| {
                b.iter(|| {
                    pose += 1;
                    frame(&mut gpu, &mut targets, pose, &mut on_gpu)
                })
            },
        );
        // The CPU's answer in the GPU's last pose, where the row ran.
        if pose == 0 {
            return group.finish();
        }
        frame(&mut cpu(0, BroadPhase::Auto), &mut targets, pose, &mut out);
        let same = out.iter().zip(&on_gpu).filter(|(a, b)| a == b).count();
        eprintln!("gpu: {same} of {} first hits the CPU's", out.len());
        eprintln!("gpu: last call {:?}", gpu.last_gpu_call());
    }
    group.finish();
}

/// A game's frame over a level and its enemies (issue 37's layers): bullet hell's 5,000 boxes,
/// 3,000 of them the level's (static) and 2,000 enemies moving every frame, against 50,000
/// bullets. One `Targets` whose rects are set again every frame (the grid over all 5,000
/// rebuilt), against two layers: the level set once, the enemies set each frame, one layered
/// call; both give the same first hits.
fn layered_frame(c: &mut Criterion) {
    let (segments, boxes) = scene::bullet_hell(37, 50_000, 5_000);
    let (enemies, level_boxes) = boxes.split_at(2_000);
    let moved: Vec<Rect> = enemies
        .iter()
        .map(|r| Rect::new(r.min_x + 0.25, r.min_y, r.max_x + 0.25, r.max_y))
        .collect();
    let poses = [enemies, &moved[..]];
    let mut group: Group = c.benchmark_group("game frame/level 3000 + enemies 2000, 50000 bullets");
    group.sample_size(20);
    let mut level = Targets::new();
    level.set_rects(level_boxes).unwrap();
    let (mut frame_layer, mut one) = (Targets::new(), Targets::new());
    let mut all = Vec::with_capacity(boxes.len());
    let (mut out, mut layered_out) = (vec![None; segments.len()], vec![None; segments.len()]);
    for threads in [1, 0] {
        let mut engine = cpu(threads, BroadPhase::Auto);
        let chosen = engine.chosen();
        let mut pose = 0;
        group.bench_function(
            format!("one Targets, every rect set each frame, {chosen}"),
            |b| {
                b.iter(|| {
                    pose += 1;
                    all.clear();
                    all.extend_from_slice(level_boxes);
                    all.extend_from_slice(poses[pose % 2]);
                    one.set_rects(&all).unwrap();
                    let batch = TargetBatch::over(&segments, &one);
                    engine.target_first_hits_into(&batch, &mut out).unwrap()
                })
            },
        );
        let mut layered_pose = 0;
        group.bench_function(format!("two layers, the level set once, {chosen}"), |b| {
            b.iter(|| {
                layered_pose += 1;
                frame_layer.set_rects(poses[layered_pose % 2]).unwrap();
                let layers = [&level, &frame_layer];
                let batch = LayeredBatch::over(&segments, &layers);
                engine
                    .layered_first_hits_into(&batch, &mut layered_out)
                    .unwrap()
            })
        });
        // The same answers, where both rows ran in the same pose: the level's rects first,
        // then the enemies', in both.
        if pose > 0 && pose % 2 == layered_pose % 2 {
            let same = out
                .iter()
                .zip(&layered_out)
                .filter(|(one, layered)| {
                    let as_one = layered.map(|l| {
                        let before = if l.layer == 1 { level_boxes.len() } else { 0 };
                        (l.hit.target as usize + before, l.hit.contact)
                    });
                    one.map(|h| (h.target as usize, h.contact)) == as_one
                })
                .count();
            let settled = layered_out
                .iter()
                .flatten()
                .filter(|l| l.layer == 0 && l.hit.contact.t_enter() == 0.0)
                .count();
            eprintln!("layers: {settled} bullets first hit the level at t = 0");
            assert_eq!(same, out.len(), "layers: first hits not the one scene's");
        }
    }
    group.finish();
}

fn uniform_random(c: &mut Criterion) {
    scene_group(
        c,
        "uniform random",
        scene::random_batch(2026, 65_536, 32_768, 1000.0),
    );
}

fn clustered(c: &mut Criterion) {
    scene_group(c, "clustered", scene::clustered(2026, 262_144, 32_768));
}

/// The game case with round enemies: 100,000 bullets against 10,000 circles (the bullet-hell
/// hitboxes' inscribed disks), and 1,048,576 against 100,000 (issue 35's scene, over 100 deep:
/// nearly every bullet starts inside circles; only under `cargo bench`, not in the suite's
/// single pass), each bullet's first hit (`Engine::shape_first_hits`, exact), with the grid
/// over the circles' boxes built in each call, against the box cull alone (no grid: the
/// circles' boxes down a tree of Morton blocks, sixteen at a time) and parry2d's BVH of balls
/// (`Bvh::cast_ray` with `Ball::cast_local_ray`, build included, rayon over the bullets).
fn circles(c: &mut Criterion) {
    circles_at(c, 100_000, 10_000);
    if benching() {
        circles_at(c, 1 << 20, 100_000);
    }
}

fn circles_at(c: &mut Criterion, bullets: usize, hitboxes: usize) {
    use parry2d::shape::Ball;
    let (segments, rects) = scene::bullet_hell(2026, bullets, hitboxes);
    let disks: Vec<rectcast::Circle> = rects
        .iter()
        .map(|r| {
            let (w, h) = (r.max_x - r.min_x, r.max_y - r.min_y);
            rectcast::Circle::new(r.min_x + w / 2.0, r.min_y + h / 2.0, w.min(h) / 2.0)
        })
        .collect();
    let mut group = c.benchmark_group(format!("circles, bullet-hell {bullets}x{hitboxes}"));
    group.sample_size(10);
    group.throughput(Throughput::Elements((segments.len() * disks.len()) as u64));
    let mut first = Vec::new();
    for broad_phase in [BroadPhase::Off, BroadPhase::On] {
        let chosen = cpu(0, broad_phase).chosen();
        let name = match broad_phase {
            BroadPhase::Off => format!("brute force, {chosen}"),
            _ => format!("broad phase + build, {chosen}"),
        };
        // A new engine each time: an engine keeps the last call's grid, layout and filter.
        group.bench_function(name, |b| {
            b.iter(|| {
                first = cpu(0, broad_phase)
                    .shape_first_hits(&segments, &disks)
                    .expect("first hits")
            })
        });
    }
    let balls: Vec<(Ball, Aabb)> = disks
        .iter()
        .map(|d| {
            let aabb = Aabb::new(
                Vector::new(d.cx - d.r, d.cy - d.r),
                Vector::new(d.cx + d.r, d.cy + d.r),
            );
            (Ball::new(d.r), aabb)
        })
        .collect();
    let mut parry_out = vec![(UNSET, 0.0f32); segments.len()];
    group.bench_function(
        format!(
            "parry2d BVH of balls, build + cast_ray, {} threads",
            rayon::current_num_threads()
        ),
        |b| {
            b.iter(|| {
                let aabbs: Vec<Aabb> = balls.iter().map(|(_, a)| *a).collect();
                parry_cast(&segments, &aabbs, &mut parry_out, |leaf, ray, best| {
                    let d = &disks[leaf];
                    let local = Ray::new(
                        Vector::new(ray.origin.x - d.cx, ray.origin.y - d.cy),
                        ray.dir,
                    );
                    balls[leaf].0.cast_local_ray(&local, best, true)
                })
            })
        },
    );
    group.finish();
    // Only where both rows ran (a filter may leave them out).
    if !first.is_empty() && parry_out.iter().any(|h| h.0 != UNSET) {
        let ours = first.iter().filter(|h| h.is_some()).count();
        let theirs = parry_out.iter().filter(|h| h.0 != u32::MAX).count();
        eprintln!("circles: bullets that hit: rectcast {ours}, parry2d {theirs}");
    }
}

/// The game case with walls (issue 35's target: within 3× the rects' time): 100,000 bullets
/// against the diagonals of 10,000 bullet-hell hitboxes, and 1,048,576 against 100,000's (only
/// under `cargo bench`), each bullet's first hit (`Engine::shape_first_hits`: the grid along the
/// walls built in each call), beside the same bullets' first hit among the hitboxes themselves
/// (`Engine::first_hit_into`, the grid built in each call) and parry2d's BVH of segments (build
/// included).
fn walls(c: &mut Criterion) {
    walls_at(c, 100_000, 10_000);
    if benching() {
        walls_at(c, 1 << 20, 100_000);
    }
}

fn walls_at(c: &mut Criterion, bullets: usize, hitboxes: usize) {
    use parry2d::shape::Segment as ParrySegment;
    let (segments, rects) = scene::bullet_hell(2026, bullets, hitboxes);
    let walls: Vec<Segment> = rects
        .iter()
        .map(|r| Segment::new(r.min_x, r.min_y, r.max_x, r.max_y))
        .collect();
    let mut group = c.benchmark_group(format!("walls, bullet-hell {bullets}x{hitboxes}"));
    group.sample_size(10);
    group.throughput(Throughput::Elements((segments.len() * walls.len()) as u64));
    let mut engine = cpu(0, BroadPhase::On);
    let mut first = Vec::new();
    // A new engine each time: an engine keeps the last call's grid along the walls.
    group.bench_function(
        format!("walls, broad phase + build, {}", engine.chosen()),
        |b| {
            b.iter(|| {
                first = cpu(0, BroadPhase::On)
                    .shape_first_hits(&segments, &walls)
                    .expect("first hits")
            })
        },
    );
    let mut out = vec![FirstHit::NONE; segments.len()];
    let plain = Batch::new(&segments, &rects);
    group.bench_function(
        format!("rects, broad phase + build, {}", engine.chosen()),
        |b| b.iter(|| engine.first_hit_into(&plain, &mut out).unwrap()),
    );
    let edges: Vec<ParrySegment> = walls
        .iter()
        .map(|w| ParrySegment::new(Vector::new(w.x0, w.y0), Vector::new(w.x1, w.y1)))
        .collect();
    let mut parry_out = vec![(UNSET, 0.0f32); segments.len()];
    group.bench_function(
        format!(
            "walls, parry2d BVH of segments, build + cast_ray, {} threads",
            rayon::current_num_threads()
        ),
        |b| {
            b.iter(|| {
                let aabbs: Vec<Aabb> = edges.iter().map(|e| e.local_aabb()).collect();
                parry_cast(&segments, &aabbs, &mut parry_out, |leaf, ray, best| {
                    edges[leaf].cast_local_ray(ray, best, true)
                })
            })
        },
    );
    group.finish();
    // Only where both rows ran (a filter may leave them out).
    if !first.is_empty() && parry_out.iter().any(|h| h.0 != UNSET) {
        let ours = first.iter().filter(|h| h.is_some()).count();
        let theirs = parry_out.iter().filter(|h| h.0 != u32::MAX).count();
        eprintln!("walls: bullets that hit: rectcast {ours}, parry2d {theirs}");
    }
}

/// parry2d's BVH over `aabbs`, built, then one best-first ray cast per segment (t in 0..1),
/// each leaf through `cast(leaf, ray, best)`, on rayon's threads.
fn parry_cast(
    segments: &[Segment],
    aabbs: &[Aabb],
    out: &mut [(u32, f32)],
    cast: impl Fn(usize, &Ray, f32) -> Option<f32> + Sync,
) {
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, aabbs);
    segments
        .par_iter()
        .zip(out.par_iter_mut())
        .with_min_len(1024)
        .for_each(|(s, out)| {
            let ray = Ray::new(
                Vector::new(s.x0, s.y0),
                Vector::new(s.x1 - s.x0, s.y1 - s.y0),
            );
            *out = bvh
                .cast_ray(&ray, 1.0, |leaf, best| cast(leaf as usize, &ray, best))
                .unwrap_or((u32::MAX, f32::INFINITY));
        });
}

/// A tile map (issue 35's narrow integers): 20,000 walls, each a unit edge of a 256 × 256
/// integer grid, and 20,000 circles on its points (radius 1/2, 1 or 2), against 200,000 short
/// shots from grid points or a quarter past them. Ends on walls, shots along them and ends on
/// circles are everyday here: the pairs the float filters leave to the exact integers, which
/// take the narrow path (64 to 256 bits), not the 448- and 896-bit one. Each shot's first hit
/// (`Engine::shape_first_hits`, the grid built per call) against parry2d's BVH of segments and
/// of balls (build included; parry's t are not exact, and a shot along a wall is no hit for it).
fn tile_map(c: &mut Criterion) {
    use parry2d::shape::{Ball, Segment as ParrySegment};
    let mut rng = scene::SplitMix64::new(35);
    let point = |rng: &mut scene::SplitMix64| (rng.below(256) as f32, rng.below(256) as f32);
    let walls: Vec<Segment> = (0..20_000)
        .map(|_| {
            let (x, y) = point(&mut rng);
            let across = rng.below(2) as f32;
            Segment::new(x, y, x + across, y + 1.0 - across)
        })
        .collect();
    let disks: Vec<rectcast::Circle> = (0..20_000)
        .map(|_| {
            let (x, y) = point(&mut rng);
            rectcast::Circle::new(x, y, [0.5, 1.0, 2.0][rng.below(3) as usize])
        })
        .collect();
    let segments: Vec<Segment> = (0..200_000)
        .map(|_| {
            let (x, y) = point(&mut rng);
            let x = x + rng.below(2) as f32 * 0.25;
            let mut step = || rng.below(9) as f32 - 4.0;
            Segment::new(x, y, x + step(), y + step())
        })
        .collect();
    let mut group = c.benchmark_group("tile map 200000 shots x 20000");
    group.sample_size(10);
    group.throughput(Throughput::Elements((segments.len() * walls.len()) as u64));
    let engine = cpu(0, BroadPhase::On);
    let mut parry_out = vec![(0u32, 0.0f32); segments.len()];
    let threads = rayon::current_num_threads();
    // A new engine each time: an engine keeps the last call's grid, layout and filter.
    group.bench_function(
        format!("walls, broad phase + build, {}", engine.chosen()),
        |b| {
            b.iter(|| {
                cpu(0, BroadPhase::On)
                    .shape_first_hits(&segments, &walls)
                    .expect("first hits")
            })
        },
    );
    let edges: Vec<ParrySegment> = walls
        .iter()
        .map(|w| ParrySegment::new(Vector::new(w.x0, w.y0), Vector::new(w.x1, w.y1)))
        .collect();
    group.bench_function(
        format!("walls, parry2d BVH of segments, {threads} threads"),
        |b| {
            b.iter(|| {
                let aabbs: Vec<Aabb> = edges.iter().map(|e| e.local_aabb()).collect();
                parry_cast(&segments, &aabbs, &mut parry_out, |leaf, ray, best| {
                    edges[leaf].cast_local_ray(ray, best, true)
                })
            })
        },
    );
    group.bench_function(
        format!("circles, broad phase + build, {}", engine.chosen()),
        |b| {
            b.iter(|| {
                cpu(0, BroadPhase::On)
                    .shape_first_hits(&segments, &disks)
                    .expect("first hits")
            })
        },
    );
    group.bench_function(
        format!("circles, parry2d BVH of balls, {threads} threads"),
        |b| {
            b.iter(|| {
                let aabbs: Vec<Aabb> = disks
                    .iter()
                    .map(|d| {
                        Aabb::new(
                            Vector::new(d.cx - d.r, d.cy - d.r),
                            Vector::new(d.cx + d.r, d.cy + d.r),
                        )
                    })
                    .collect();
                parry_cast(&segments, &aabbs, &mut parry_out, |leaf, ray, best| {
                    let d = &disks[leaf];
                    let local = Ray::new(
                        Vector::new(ray.origin.x - d.cx, ray.origin.y - d.cy),
                        ray.dir,
                    );
                    Ball::new(d.r).cast_local_ray(&local, best, true)
                })
            })
        },
    );
    group.finish();
}

criterion_group!(
    benches,
    bullet_hell,
    game_frame,
    mixed_frame,
    layered_frame,
    uniform_random,
    clustered,
    circles,
    walls,
    tile_map
);
criterion_main!(benches);
