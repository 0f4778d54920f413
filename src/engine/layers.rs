//! The queries over layers of targets ([`LayeredBatch`]): each layer's own query
//! ([`Engine::target_first_hits_into`], [`Engine::target_hits`], [`Engine::target_counts`]),
//! merged on the host in the scene's one exact order.

use super::targets::{MERGE_CHUNK, Merge, first_by};
use super::{Engine, check_output};
use crate::error::Result;
use crate::gpu::GpuCall;
use crate::targets::{LayerHit, LayeredBatch, TargetBatch, TargetCounts, TargetHit, TargetKind};
use std::time::Duration;

impl Engine {
    /// Each segment's first hit over every layer of `batch`, as if the layers were one
    /// [`crate::Targets`] whose every kind is its layers' arrays one after the other: the
    /// smallest `t_enter` in exact arithmetic, an exact tie going to the lower
    /// [`TargetKind`], then the lower layer, then the lower index. `None` when a segment hits
    /// nothing its filter tests. Into a buffer of one entry per segment, reused across frames.
    ///
    /// Each layer runs its own query ([`target_first_hits_into`](Self::target_first_hits_into))
    /// on what it prepared, so a level's static layer keeps its grids while the frame's layer
    /// is set again; the host merges them. On a GPU engine, [`Engine::last_gpu_call`] sums the
    /// layers' calls and the merge.
    ///
    /// # Errors
    /// [`crate::Error::OutputLength`] before any work; as
    /// [`target_first_hits_into`](Self::target_first_hits_into) for each layer.
    pub fn layered_first_hits_into(
        &mut self,
        batch: &LayeredBatch,
        out: &mut [Option<LayerHit>],
    ) -> Result<()> {
        check_output(batch.segments.len(), out.len())?;
        let mut layers = std::mem::take(&mut self.layer_first);
        let answered = self.each_layer_first(batch, &mut layers);
        self.layer_first = layers;
        let calls = answered?;
        let started = std::time::Instant::now();
        let layers = &self.layer_first;
        let merges: Vec<Merge> = (0..layers.len())
            .map(|l| Merge::of(&batch.layer(l)))
            .collect();
        self.host_chunks(out, MERGE_CHUNK, |from, part| {
            let mut candidates: Vec<LayerHit> = Vec::with_capacity(layers.len());
            for (j, slot) in part.iter_mut().enumerate() {
                candidates.clear();
                candidates.extend(layers.iter().enumerate().filter_map(|(l, hits)| {
                    let hit = hits[from + j]?;
                    Some(LayerHit {
                        layer: l as u32,
                        hit,
                    })
                }));
                if candidates.len() < 2 {
                    // Most segments: settled by one layer, or hitting nothing.
                    *slot = candidates.first().copied();
                    continue;
                }
                candidates.sort_unstable_by_key(LayerHit::tie_order);
                *slot = first_by(
                    &candidates,
                    |c| &c.hit.contact,
                    |c| merges[c.layer as usize].entry_time(&c.hit),
                )
                .copied();
            }
        });
        calls.report(self, started.elapsed());
        self.check_cancel()
    }

    /// [`layered_first_hits_into`](Self::layered_first_hits_into) into a new vector.
    ///
    /// # Errors
    /// As [`layered_first_hits_into`](Self::layered_first_hits_into).
    pub fn layered_first_hits(&mut self, batch: &LayeredBatch) -> Result<Vec<Option<LayerHit>>> {
        let mut out = vec![None; batch.segments.len()];
        self.layered_first_hits_into(batch, &mut out)?;
        Ok(out)
    }

    /// Every tested hitting (segment, target) pair over every layer, in (segment, kind,
    /// layer, index) order: the order of the one scene the layers make.
    ///
    /// # Errors
    /// As [`layered_first_hits_into`](Self::layered_first_hits_into).
    pub fn layered_hits(&mut self, batch: &LayeredBatch) -> Result<Vec<LayerHit>> {
        let (layers, calls) = self.each_layer(batch, Engine::target_hits)?;
        let started = std::time::Instant::now();
        let mut out = Vec::with_capacity(layers.iter().map(Vec::len).sum());
        let mut rest: Vec<&[TargetHit]> = layers.iter().map(Vec::as_slice).collect();
        for segment in 0..batch.segments.len() as u32 {
            for kind in TargetKind::ALL {
                for (l, hits) in rest.iter_mut().enumerate() {
                    let n = hits
                        .iter()
                        .take_while(|h| h.segment == segment && h.kind() == kind)
                        .count();
                    let (now, later) = hits.split_at(n);
                    *hits = later;
                    out.extend(now.iter().map(|&hit| LayerHit {
                        layer: l as u32,
                        hit,
                    }));
                }
            }
        }
        calls.report(self, started.elapsed());
        Ok(out)
    }

    /// Tested hits per segment and per target, each layer's own
    /// ([`target_counts`](Self::target_counts)): one [`TargetCounts`] a layer, in layer order.
    /// A segment's hits over the whole scene are its `per_segment` summed over the layers.
    ///
    /// # Errors
    /// As [`layered_first_hits_into`](Self::layered_first_hits_into).
    pub fn layered_counts(&mut self, batch: &LayeredBatch) -> Result<Vec<TargetCounts>> {
        let (counts, calls) = self.each_layer(batch, Engine::target_counts)?;
        calls.report(self, Duration::ZERO);
        Ok(counts)
    }

    /// `query` over each layer of `batch` in turn (every layer's filters checked first), and
    /// the layers' GPU calls.
    fn each_layer<T>(
        &mut self,
        batch: &LayeredBatch,
        query: impl Fn(&mut Engine, &TargetBatch) -> Result<T>,
    ) -> Result<(Vec<T>, LayerCalls)> {
        batch.check_layers()?;
        let mut answers = Vec::with_capacity(batch.layers.len());
        let mut calls = LayerCalls::default();
        for l in 0..batch.layers.len() {
            answers.push(query(self, &batch.layer(l))?);
            calls.add(self);
        }
        self.keep_layer_skipped(batch, None);
        Ok((answers, calls))
    }

    /// What a layered call leaves in [`Engine::last_skipped`]: the skipped segments, named in
    /// the whole batch (`segments`: the first layer's list, which ran over all of them; `None`:
    /// the last layer's, which did too), and no rects (each layer's
    /// [`crate::Targets::skipped`] lists its own); nothing after a call with no layers.
    fn keep_layer_skipped(
        &mut self,
        batch: &LayeredBatch,
        segments: Option<Vec<crate::InputError>>,
    ) {
        if batch.layers.is_empty() {
            self.skipped = Default::default();
        }
        if let Some(segments) = segments {
            self.skipped.segments = segments;
        }
        self.skipped.rects.clear();
    }

    /// Each layer's first hits into `layers` (one vector a layer, reused), and the layers'
    /// GPU calls summed (none on the CPU). A segment that starts inside a rect of an earlier
    /// layer is settled: nothing comes before t = 0, and a tie there goes to the rect of the
    /// lowest layer. So each later layer queries only the segments not settled yet, gathered
    /// into a batch of their own, and leaves the others `None`.
    fn each_layer_first(
        &mut self,
        batch: &LayeredBatch,
        layers: &mut Vec<Vec<Option<TargetHit>>>,
    ) -> Result<LayerCalls> {
        batch.check_layers()?;
        let n = batch.segments.len();
        layers.resize_with(batch.layers.len(), Vec::new);
        let mut calls = LayerCalls::default();
        let mut open: Vec<u32> = Vec::new();
        let mut settled = vec![false; if batch.layers.len() > 1 { n } else { 0 }];
        let mut skipped_segments = None;
        let (mut segments, mut filters) = (Vec::new(), Vec::new());
        let mut answers = Vec::new();
        for (l, hits) in layers.iter_mut().enumerate() {
            hits.clear();
            hits.resize(n, None);
            if l == 0 || open.len() == n {
                self.target_first_hits_into(&batch.layer(l), hits)?;
                calls.add(self);
            } else if !open.is_empty() {
                // The segments still open, alone: their answers go back to their indices.
                segments.clear();
                segments.extend(open.iter().map(|&i| batch.segments[i as usize]));
                let mut layer = batch.layer(l);
                layer.segments = &segments;
                if let Some(f) = batch.segment_filters {
                    filters.clear();
                    filters.extend(open.iter().map(|&i| f[i as usize]));
                    layer.segment_filters = Some(&filters);
                }
                answers.clear();
                answers.resize(open.len(), None);
                self.target_first_hits_into(&layer, &mut answers)?;
                for (&i, answer) in open.iter().zip(&answers) {
                    hits[i as usize] = answer.map(|hit| TargetHit { segment: i, ..hit });
                }
                calls.add(self);
            }
            if l == 0 {
                // The skipped segments, named in the whole batch.
                skipped_segments = Some(self.skipped.segments.clone());
            }
            if l + 1 < batch.layers.len() {
                for (s, hit) in settled.iter_mut().zip(hits.iter()) {
                    *s |= hit.is_some_and(|h| match h.contact {
                        crate::TargetContact::Rect(r) => r.start_inside(),
                        _ => false,
                    });
                }
                open.clear();
                open.extend((0..n as u32).filter(|&i| !settled[i as usize]));
            }
        }
        self.keep_layer_skipped(batch, skipped_segments);
        Ok(calls)
    }
}

/// A layered call's GPU accounting: its layers' calls and kernel times summed (none on the
/// CPU), and the host's merge.
#[derive(Default)]
struct LayerCalls {
    call: Option<GpuCall>,
    kernel_time: Option<Duration>,
}

impl LayerCalls {
    /// Adds the layer call `engine` just made.
    fn add(&mut self, engine: &Engine) {
        if let Some(layer) = engine.gpu_call {
            *self.call.get_or_insert_with(GpuCall::default) += layer;
        }
        if let Some(kernel) = engine.kernel_time {
            *self.kernel_time.get_or_insert(Duration::ZERO) += kernel;
        }
    }

    /// Makes the sums `engine`'s last call's, with `merging` on the host added.
    fn report(self, engine: &mut Engine, merging: Duration) {
        engine.gpu_call = self.call.map(|mut call| {
            call.on_host += merging;
            call
        });
        engine.kernel_time = self.kernel_time;
    }
}
