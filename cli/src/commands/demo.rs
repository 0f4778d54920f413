//! `rectcast demo`: the embedded bullet-hell frame on the chosen backend, timed, and drawn on
//! request.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use rectcast::FrameCapacity;
use rectcast::{
    Backend, Batch, Engine, FirstHit, FrameLoop, Kind, PairResult, Rect, Segment, scene,
};

use super::bench::ms;
use super::render::{Look, RenderQuery, Scene, Style, render};
use crate::options::{BackendArg, Outcome, engine};

#[derive(Args)]
pub struct DemoArgs {
    /// Where the engine runs: each call where it is sooner, a GPU opened only when it pays
    /// (`auto`); the GPU whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Also draw the frame (first hits) to this picture (.png or .svg).
    #[arg(long, value_name = "PICTURE")]
    render: Option<PathBuf>,
    /// Frames the game loop runs (first hits through `FrameLoop`, bullets moving).
    #[arg(long, default_value_t = 240)]
    frames: usize,
}

/// The scene's bullets `k` frames on: each one's move repeated `k` times along its own
/// direction, wrapped onto the 1920 × 1080 field.
fn moved(bullets: &[Segment], k: usize, out: &mut Vec<Segment>) {
    out.clear();
    out.extend(bullets.iter().map(|b| {
        let (dx, dy) = (b.x1 - b.x0, b.y1 - b.y0);
        let x = (b.x0 + dx * k as f32).rem_euclid(1920.0);
        let y = (b.y0 + dy * k as f32).rem_euclid(1080.0);
        Segment::new(x, y, x + dx, y + dy)
    }));
}

/// A sorted sample's value at fraction `q`.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// `rectcast demo`.
pub fn run(args: DemoArgs) -> Outcome {
    let DemoArgs {
        backend,
        render: render_to,
        frames,
    } = args;
    let e = |e: rectcast::Error| e.to_string();
    let (bullets, hitboxes) = scene::bullet_hell(2026, 8192, 512);
    let opening = Instant::now();
    let mut engine = engine(backend.into())?;
    let opened = opening.elapsed();
    // The first call builds buffers; a game pays that once and reuses its result buffer, so
    // time a later frame that way too.
    let start = Instant::now();
    let results = engine.pairs(&bullets, &hitboxes).map_err(e)?;
    let first = start.elapsed();
    let mut again = vec![PairResult::MISS; results.len()];
    engine
        .pairs_into(&bullets, &hitboxes, &mut again)
        .map_err(e)?;
    let start = Instant::now();
    engine
        .pairs_into(&bullets, &hitboxes, &mut again)
        .map_err(e)?;
    let steady = start.elapsed();
    if again != results {
        return Err("two runs of the same frame disagree".into());
    }
    let count = |k: Kind| results.iter().filter(|r| r.kind() == k).count();
    println!("rectcast demo: a bullet-hell game, every bullet against every hitbox");
    println!("backend: {}", engine.chosen());
    println!(
        "bullets (segments): {}, hitboxes (rects): {}",
        bullets.len(),
        hitboxes.len()
    );
    println!("pairs: {}", results.len());
    println!(
        "hits: {} (enter {}, exit {}, cross {}, inside {})",
        results.iter().filter(|r| r.hit()).count(),
        count(Kind::Enter),
        count(Kind::Exit),
        count(Kind::Cross),
        count(Kind::Inside)
    );
    println!(
        "time: first frame {:.2} ms, next frame {:.2} ms ({:.0} Mpairs/s), every pair's result",
        ms(first),
        ms(steady),
        results.len() as f64 / steady.as_secs_f64() / 1e6
    );
    let mut game = game_loop(engine, &bullets, &hitboxes, frames, opened)?;
    let engine = game.engine_mut();
    if let Some(path) = render_to {
        render(
            engine,
            &Scene {
                segments: &bullets,
                rects: &hitboxes,
                shapes: &[],
                polygons: &rectcast::Polygons::default(),
            },
            RenderQuery::FirstHit,
            (1920, 1080),
            Some([0.0, 0.0, 1920.0, 1080.0]),
            // A game's frame: screen coordinates, y down.
            Look {
                y_down: true,
                style: Style::Lines,
            },
            &path,
        )?;
        println!("drawn to {}", path.display());
    }
    Ok(())
}

/// The game loop: `frames` frames of first hits through a [`FrameLoop`] on `engine` (each
/// frame written, dispatched, and the one before read), timed frame by frame, the last checked
/// against the CPU's first hits; prints the fixed cost and the frames' times apart.
fn game_loop(
    engine: Engine,
    bullets: &[Segment],
    hitboxes: &[Rect],
    frames: usize,
    opened: Duration,
) -> Result<FrameLoop, String> {
    let e = |e: rectcast::Error| e.to_string();
    let frames = frames.max(2);
    let start = Instant::now();
    let mut game =
        FrameLoop::new(engine, FrameCapacity::new(bullets.len(), hitboxes.len())).map_err(e)?;
    let made = start.elapsed();
    let mut moving = Vec::with_capacity(bullets.len());
    let mut hits = vec![FirstHit::NONE; bullets.len()];
    let mut previous = None;
    let mut times = Vec::with_capacity(frames);
    for k in 0..=frames {
        let start = Instant::now();
        let id = if k < frames {
            moved(bullets, k, &mut moving);
            game.write(&Batch::new(&moving, hitboxes)).map_err(e)?;
            Some(game.dispatch().map_err(e)?)
        } else {
            None
        };
        if let Some(previous) = previous {
            game.read(previous, &mut hits).map_err(e)?;
        }
        previous = id;
        // The last pass only reads: the frames are the passes that write one.
        if id.is_some() {
            times.push(start.elapsed());
        }
    }
    // The last frame's first hits, as the CPU gives them.
    let want = Engine::new(Backend::Cpu)
        .and_then(|mut cpu| cpu.first_hit(&Batch::new(&moving, hitboxes)))
        .map_err(e)?;
    if let Some(i) = (0..want.len()).find(|&i| want[i] != hits[i]) {
        return Err(format!(
            "frame {}: bullet {i} {:?}: the CPU's first hit {:?}, the loop's {:?}",
            frames - 1,
            moving[i],
            want[i],
            hits[i]
        ));
    }
    let first_frame = times[0];
    let mut steady = times[1..].to_vec();
    steady.sort();
    let median = quantile(&steady, 0.5);
    println!(
        "game loop: {frames} frames of first hits through FrameLoop on {}, bullets moving, each frame read a frame late",
        game.chosen()
    );
    println!(
        "  fixed cost: opening the engine {:.2} ms, the loop {:.2} ms, its first frame {:.2} ms",
        ms(opened),
        ms(made),
        ms(first_frame)
    );
    println!(
        "  a frame: median {:.3} ms, 90th percentile {:.3} ms, best {:.3} ms ({:.0} Mpairs/s, {:.0} frames/s)",
        ms(median),
        ms(quantile(&steady, 0.9)),
        ms(steady[0]),
        (bullets.len() * hitboxes.len()) as f64 / median.as_secs_f64() / 1e6,
        1.0 / median.as_secs_f64()
    );
    println!(
        "  checked: the last frame's {} first hits are the CPU's, byte for byte ({} hit)",
        hits.len(),
        hits.iter().filter(|h| h.rect().is_some()).count()
    );
    Ok(game)
}
