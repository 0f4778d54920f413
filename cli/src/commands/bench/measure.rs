//! What the bench tables share: the scenes they run on, and how a run is timed.

use std::time::{Duration, Instant};

use clap::ValueEnum;
use rectcast::scene;

use crate::options::Outcome;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchScene {
    /// `scene::bullet_hell`: short moves on a 1920 x 1080 field, hitboxes of 8 to 96 px.
    BulletHell,
    /// `scene::random_batch` on a 1000 x 1000 square: long segments at every slope.
    Random,
    /// `scene::clustered`: 16 dense clusters on an empty 10,000-unit field.
    Clustered,
}

impl BenchScene {
    pub fn generate(
        self,
        seed: u64,
        segment_count: usize,
        rect_count: usize,
    ) -> (Vec<rectcast::Segment>, Vec<rectcast::Rect>) {
        match self {
            BenchScene::BulletHell => scene::bullet_hell(seed, segment_count, rect_count),
            BenchScene::Random => scene::random_batch(seed, segment_count, rect_count, 1000.0),
            BenchScene::Clustered => scene::clustered(seed, segment_count, rect_count),
        }
    }
}

/// Milliseconds.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The median and best of `iterations` timed runs of `run`, after one warm-up.
pub fn time(
    iterations: usize,
    mut run: impl FnMut() -> Outcome,
) -> Result<(Duration, Duration), String> {
    run()?;
    let mut times = Vec::with_capacity(iterations.max(1));
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        run()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((times[times.len() / 2], times[0]))
}
