//! Layers of targets queried as one scene: a level's static geometry prepared once, the
//! frame's moving hitboxes set each frame, and one call over both ([`LayeredBatch`]).

use super::{TargetBatch, TargetHit, TargetKind, Targets};
use crate::query::OnInvalid;
use crate::types::{Filter, Segment};

/// Segments against layers of [`Targets`], queried as one scene whose every kind is its
/// layers' arrays one after the other: a first hit is the smallest exact `t_enter` over every
/// layer, an exact tie going to the lower [`TargetKind`], then the lower layer, then the
/// lower index. Each layer keeps what it prepared (a static layer's grids are not rebuilt),
/// and each has its own filters and invalid targets.
#[derive(Clone, Copy, Debug)]
pub struct LayeredBatch<'a> {
    pub segments: &'a [Segment],
    /// One filter per segment, or `None`.
    pub segment_filters: Option<&'a [Filter]>,
    /// The layers, in tie order.
    pub layers: &'a [&'a Targets],
    /// What a query does with an invalid segment (default: [`OnInvalid::Fail`]).
    pub on_invalid: OnInvalid,
}

/// A hit of a layered scene: the layer, and the hit among that layer's targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerHit {
    pub layer: u32,
    pub hit: TargetHit,
}

impl LayerHit {
    /// The order of an exact tie: kind, then layer, then index.
    pub(crate) fn tie_order(&self) -> (TargetKind, u32, u32) {
        (self.hit.kind(), self.layer, self.hit.target)
    }
}

impl<'a> LayeredBatch<'a> {
    pub fn over(segments: &'a [Segment], layers: &'a [&'a Targets]) -> Self {
        Self {
            segments,
            segment_filters: None,
            layers,
            on_invalid: OnInvalid::Fail,
        }
    }

    /// With one filter per segment.
    pub fn with_segment_filters(self, filters: &'a [Filter]) -> Self {
        Self {
            segment_filters: Some(filters),
            ..self
        }
    }

    /// Invalid segments miss everything instead of failing the call, as
    /// [`TargetBatch::skip_invalid`].
    pub fn skip_invalid(self) -> Self {
        Self {
            on_invalid: OnInvalid::Miss,
            ..self
        }
    }

    /// Every layer's filters against its kinds, so that a call fails alike whichever layers
    /// its segments need.
    pub(crate) fn check_layers(&self) -> crate::Result<()> {
        self.layers.iter().try_for_each(|l| l.check_filters())
    }

    /// The same segments over layer `layer` alone.
    pub(crate) fn layer(&self, layer: usize) -> TargetBatch<'a> {
        TargetBatch {
            segments: self.segments,
            segment_filters: self.segment_filters,
            targets: self.layers[layer],
            on_invalid: self.on_invalid,
        }
    }
}
