//! A game loop over every kind of target: a level of walls, crates and a building set once,
//! enemies (boxes and round ones) moved every frame, and each bullet's first hit this frame,
//! on whichever backend runs the frames sooner (`FrameLoop`, the same answers on both).
//!
//! A bullet's move this frame is a segment from where it is to where it will be. Its first
//! hit is the earliest contact along that move: a bullet that starts inside an enemy hits it
//! at t = 0. A bullet that hits anything goes back to its gun.
//!
//! `cargo run --release --example bullets`

use rectcast::{
    Backend, Circle, Engine, FrameCapacity, FrameLoop, LayerHit, LayeredBatch, Polygons, Rect,
    Segment, TargetKind, Targets,
};

/// The arena: 640 × 480, walled.
const WIDTH: f32 = 640.0;
const HEIGHT: f32 = 480.0;

/// What stays put (walls, crates, a building) and what moves (enemies, bullets).
pub struct Game {
    pub walls: Vec<Segment>,
    pub crates: Vec<Rect>,
    /// An L-shaped building's outline.
    pub building: Vec<[f32; 2]>,
    pub enemy_boxes: Vec<Rect>,
    pub enemy_circles: Vec<Circle>,
    /// Each bullet's position and its velocity a frame.
    pub bullets: Vec<[f32; 4]>,
    frame: u32,
    level: Targets,
    enemies: Targets,
}

impl Game {
    pub fn new(bullets: usize) -> rectcast::Result<Self> {
        let corners = [[0.0, 0.0], [WIDTH, 0.0], [WIDTH, HEIGHT], [0.0, HEIGHT]];
        let mut walls: Vec<Segment> = (0..4)
            .map(|i| {
                let ([x0, y0], [x1, y1]) = (corners[i], corners[(i + 1) % 4]);
                Segment::new(x0, y0, x1, y1)
            })
            .collect();
        walls.push(Segment::new(480.0, 60.0, 560.0, 200.0)); // a slanted barrier
        let crates = vec![
            Rect::new(200.0, 300.0, 240.0, 340.0),
            Rect::new(420.0, 380.0, 470.0, 420.0),
        ];
        let building = vec![
            [150.0, 150.0],
            [230.0, 150.0],
            [230.0, 180.0],
            [180.0, 180.0],
            [180.0, 260.0],
            [150.0, 260.0],
        ];
        let mut level = Targets::new();
        level.set_walls(&walls)?;
        level.set_rects(&crates)?;
        level.set_polygons(Polygons::from_rings([&building[..]])?);
        let mut game = Game {
            walls,
            crates,
            building,
            enemy_boxes: Vec::new(),
            enemy_circles: Vec::new(),
            bullets: (0..bullets).map(gun).collect(),
            frame: 0,
            level,
            enemies: Targets::new(),
        };
        game.move_enemies()?;
        Ok(game)
    }

    /// This frame's enemies: boxes patrolling across, round ones bobbing up and down.
    fn move_enemies(&mut self) -> rectcast::Result<()> {
        let step = self.frame as f32;
        self.enemy_boxes = (0..4)
            .map(|i| {
                let x = 120.0 + ((step * 3.0 + 90.0 * i as f32) % 360.0);
                let y = 60.0 + 100.0 * i as f32;
                Rect::new(x, y, x + 24.0, y + 24.0)
            })
            .collect();
        self.enemy_circles = (0..3)
            .map(|i| {
                let y = 80.0 + ((step * 2.0 + 120.0 * i as f32) % 320.0);
                Circle::new(300.0 + 60.0 * i as f32, y, 14.0)
            })
            .collect();
        self.enemies.set_rects(&self.enemy_boxes)?;
        self.enemies.set_circles(&self.enemy_circles)
    }

    /// Each bullet's move this frame.
    pub fn moves(&self) -> Vec<Segment> {
        self.bullets
            .iter()
            .map(|&[x, y, vx, vy]| Segment::new(x, y, x + vx, y + vy))
            .collect()
    }

    /// The level first, the frame's enemies second.
    pub fn layers(&self) -> [&Targets; 2] {
        [&self.level, &self.enemies]
    }

    /// After a frame: a bullet that hit something goes back to its gun, the others fly on;
    /// then the enemies move.
    fn advance(&mut self, moves: &[Segment], first: &[Option<LayerHit>]) -> rectcast::Result<()> {
        for (i, (bullet, hit)) in self.bullets.iter_mut().zip(first).enumerate() {
            *bullet = match hit {
                Some(_) => gun(i),
                None => [moves[i].x1, moves[i].y1, bullet[2], bullet[3]],
            };
        }
        self.frame += 1;
        self.move_enemies()
    }
}

/// Bullet `i` leaving its gun at the arena's left edge, each with its own heading.
fn gun(i: usize) -> [f32; 4] {
    let y = 40.0 + (i % 40) as f32 * 10.0;
    let (vx, vy) = (6.0 + (i % 7) as f32, (i % 11) as f32 - 5.0);
    [20.0, y, vx, vy]
}

/// Plays `frames` frames of `game` on `engine`'s frame loop, calling `each` with every frame's
/// moves and first hits before the game moves on.
pub fn play(
    engine: Engine,
    game: &mut Game,
    frames: u32,
    mut each: impl FnMut(&Game, &[Segment], &[Option<LayerHit>]),
) -> rectcast::Result<()> {
    let capacity = FrameCapacity::new(game.bullets.len(), game.crates.len() + 4);
    let mut frame_loop = FrameLoop::new(engine, capacity)?;
    let mut first = vec![None; game.bullets.len()];
    for _ in 0..frames {
        let moves = game.moves();
        let layers = game.layers();
        frame_loop.layered_first_hits_into(&LayeredBatch::over(&moves, &layers), &mut first)?;
        each(game, &moves, &first);
        game.advance(&moves, &first)?;
    }
    Ok(())
}

fn main() -> rectcast::Result<()> {
    let engine = Engine::new(Backend::Auto)?;
    println!("running on {}", engine.chosen());
    let mut game = Game::new(2_000)?;
    play(engine, &mut game, 120, |game, moves, first| {
        if game.frame % 20 != 0 {
            return;
        }
        let mut by_kind = [0; 4];
        for hit in first.iter().flatten() {
            by_kind[hit.hit.kind() as usize] += 1;
        }
        let names = TargetKind::ALL.map(|kind| format!("{kind:?}").to_lowercase());
        let counts: Vec<String> = (names.iter().zip(by_kind))
            .map(|(name, n)| format!("{n} {name}"))
            .collect();
        println!("frame {}: {} hits", game.frame, counts.join(", "));
        if let Some((b, hit)) = (first.iter().enumerate()).find_map(|(b, h)| Some((b, (*h)?))) {
            let (x, y) = moves[b].point_at(hit.hit.contact.t_enter());
            let layer = ["level's", "enemies'"][hit.layer as usize];
            println!(
                "  bullet {b} hit the {layer} {:?} {} at ({x:.1}, {y:.1})",
                hit.hit.kind(),
                hit.hit.target
            );
        }
    })
}
