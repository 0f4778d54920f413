//! `rectcast demo`: the embedded bullet-hell frame on the chosen backend, timed, and drawn on
//! request.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use rectcast::{Kind, PairResult, scene};

use super::bench::ms;
use super::render::{Look, RenderQuery, Scene, Style, render};
use crate::options::{BackendArg, Outcome, engine};

#[derive(Args)]
pub struct DemoArgs {
    /// Where the engine runs: a hardware GPU when one opens, else the CPU (`auto`); the GPU
    /// whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Also draw the frame (first hits) to this picture (.png or .svg).
    #[arg(long, value_name = "PICTURE")]
    render: Option<PathBuf>,
}

/// `rectcast demo`.
pub fn run(args: DemoArgs) -> Outcome {
    let DemoArgs {
        backend,
        render: render_to,
    } = args;
    let (segments, rects) = scene::bullet_hell(2026, 8192, 512);
    let mut engine = engine(backend.into())?;
    // The first call builds buffers; a game pays that once and reuses its result buffer, so
    // time a later frame that way too.
    let start = Instant::now();
    let results = engine.pairs(&segments, &rects).map_err(|e| e.to_string())?;
    let first = start.elapsed();
    let mut again = vec![PairResult::MISS; results.len()];
    engine
        .pairs_into(&segments, &rects, &mut again)
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    engine
        .pairs_into(&segments, &rects, &mut again)
        .map_err(|e| e.to_string())?;
    let steady = start.elapsed();
    if again != results {
        return Err("two runs of the same frame disagree".into());
    }
    let count = |k: Kind| results.iter().filter(|r| r.kind() == k).count();
    println!("rectcast demo: one bullet-hell frame");
    println!("backend: {}", engine.chosen());
    println!(
        "bullets (segments): {}, hitboxes (rects): {}",
        segments.len(),
        rects.len()
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
        "time: first frame {:.2} ms, next frame {:.2} ms ({:.0} Mpairs/s)",
        ms(first),
        ms(steady),
        results.len() as f64 / steady.as_secs_f64() / 1e6
    );
    if let Some(path) = render_to {
        render(
            &mut engine,
            &Scene {
                segments: &segments,
                rects: &rects,
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
