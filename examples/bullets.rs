//! A game loop's use of rectcast: one engine kept across frames, bullets moved each frame, and
//! the first hitbox each bullet enters this frame.
//!
//! `cargo run --release --example bullets`

use rectcast::{Backend, Engine, PairResult, Rect, Segment};

fn main() -> Result<(), rectcast::Error> {
    let mut engine = Engine::new(Backend::Auto)?;
    println!("running on {}", engine.chosen());
    let hitboxes = [
        Rect::new(100.0, 100.0, 140.0, 180.0),
        Rect::new(300.0, 50.0, 310.0, 400.0),
    ];
    let mut bullets: Vec<(f32, f32, f32, f32)> = (0..8)
        .map(|i| (0.0, 90.0 + 12.0 * i as f32, 45.0, 2.0))
        .collect();
    let mut results = vec![PairResult::MISS; bullets.len() * hitboxes.len()];
    for frame in 0..8 {
        // A bullet's move this frame is a segment from where it was to where it will be.
        let moves: Vec<Segment> = bullets
            .iter()
            .map(|&(x, y, vx, vy)| Segment::new(x, y, x + vx, y + vy))
            .collect();
        engine.pairs_into(&moves, &hitboxes, &mut results)?;
        for (b, row) in results.chunks(hitboxes.len()).enumerate() {
            // The earliest entry this frame, if any (a bullet already inside has no entry).
            let first = row
                .iter()
                .enumerate()
                .filter(|(_, r)| r.hit() && !r.start_inside())
                .min_by(|a, b| a.1.t_enter.total_cmp(&b.1.t_enter));
            if let Some((h, r)) = first {
                let (x, y) = moves[b].point_at(r.t_enter);
                println!(
                    "frame {frame}: bullet {b} {} hitbox {h} at ({x:.1}, {y:.1}) through {}",
                    r.kind(),
                    r.entry_sides()
                );
            }
        }
        for (bullet, m) in bullets.iter_mut().zip(&moves) {
            (bullet.0, bullet.1) = (m.x1, m.y1);
        }
    }
    Ok(())
}
