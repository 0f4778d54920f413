use rectcast::*;
use std::time::Instant;
fn main() {
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
    let threads: usize = std::env::args().nth(1).map_or(1, |a| a.parse().unwrap());
    let mut engine = Engine::with_cpu_options(
        Backend::Cpu,
        CpuOptions {
            threads,
            ..Default::default()
        },
    )
    .unwrap();
    let mut rect_out = vec![FirstHit::NONE; segments.len()];
    for _ in 0..3 {
        let t = Instant::now();
        let set = RectSet::new(rects).unwrap();
        let t1 = t.elapsed();
        engine
            .first_hit_into(&Batch::over(&segments, &set), &mut rect_out)
            .unwrap();
        let t2 = t.elapsed();
        let ch = engine.shape_hits(&segments, &circles).unwrap();
        let t3 = t.elapsed();
        let wh = engine.shape_hits(&segments, &walls).unwrap();
        let t4 = t.elapsed();
        let cf = engine.shape_first_hits(&segments, &circles).unwrap();
        let t5 = t.elapsed();
        let wf = engine.shape_first_hits(&segments, &walls).unwrap();
        let t6 = t.elapsed();
        let mut targets = Targets::new();
        targets.set_rects(rects).unwrap();
        targets.set_circles(&circles).unwrap();
        targets.set_walls(&walls).unwrap();
        let mut out = vec![None; segments.len()];
        let t7 = t.elapsed();
        engine
            .target_first_hits_into(&TargetBatch::over(&segments, &targets), &mut out)
            .unwrap();
        let t8 = t.elapsed();
        println!(
            "set {:?} rects {:?} circle hits {:?} ({}) wall hits {:?} ({}) circle first {:?} ({}) wall first {:?} ({}) | targets {:?}",
            t1,
            t2 - t1,
            t3 - t2,
            ch.len(),
            t4 - t3,
            wh.len(),
            t5 - t4,
            cf.iter().flatten().count(),
            t6 - t5,
            wf.iter().flatten().count(),
            t8 - t7
        );
    }
}
