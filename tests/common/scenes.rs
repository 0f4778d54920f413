//! A named scene for the query tests: segments, rects, and optional filters.

use rectcast::scene::SplitMix64;
use rectcast::{Batch, Filter, Rect, Segment};

pub struct Scene {
    pub name: String,
    pub segments: Vec<Segment>,
    pub rects: Vec<Rect>,
    pub segment_filters: Option<Vec<Filter>>,
    pub rect_filters: Option<Vec<Filter>>,
}

impl Scene {
    pub fn new(name: &str, (segments, rects): (Vec<Segment>, Vec<Rect>)) -> Self {
        Self {
            name: name.into(),
            segments,
            rects,
            segment_filters: None,
            rect_filters: None,
        }
    }

    pub fn batch(&self) -> Batch<'_> {
        Batch {
            segments: &self.segments,
            rects: &self.rects,
            segment_filters: self.segment_filters.as_deref(),
            rect_filters: self.rect_filters.as_deref(),
            ..Batch::default()
        }
    }

    /// Random filters: 3 category bits, masks that accept about half of them.
    pub fn with_filters(mut self, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut filter = |_| Filter::new(1 << rng.below(3), rng.below(8) as u32);
        self.segment_filters = Some((0..self.segments.len()).map(&mut filter).collect());
        self.rect_filters = Some((0..self.rects.len()).map(&mut filter).collect());
        self.name += " filtered";
        self
    }
}
