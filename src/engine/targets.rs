//! The queries over a scene of mixed targets ([`Targets`]): each kind's own query, merged on
//! the host in one exact order. First hits run the rects on this engine's backend and the
//! shapes on the host's CPU, each kind bounded by the kinds before it; hits and counts run
//! every kind on the engine's backend.

use super::scene_report::SceneReport;
use super::shapes::contact_of;
use super::{Engine, Inner, check_output};
use crate::cpu::batched::{CpuKernel, Earlier, FirstOrder};
use crate::cpu::lane_filter::LaneFilter;
use crate::cpu::segment_circle::CircleContact;
use crate::cpu::segment_polygon::{NO_EDGE, PolygonContact};
use crate::cpu::segment_segment::SegmentContact;
use crate::error::{Error, Result};
use crate::query::Batch;
use crate::shape::{Shape, ShapeContact, ShapeHit};
use crate::targets::entry_time::EntryTime;
use crate::targets::kind_first::{KindFirst, KindsBefore, rect_hit, shape_starts_in};
use crate::targets::{TargetBatch, TargetContact, TargetCounts, TargetHit, TargetKind, Targets};
use crate::types::{Filter, FirstHit, Rect, Segment};
use std::cmp::Ordering;

/// Each kind's hits of one call, in (segment, target) order, before the filters.
#[derive(Default)]
struct KindHits {
    circles: Vec<ShapeHit<CircleContact>>,
    walls: Vec<ShapeHit<SegmentContact>>,
    polygons: Vec<ShapeHit<PolygonContact>>,
}

/// A range of segments' part of each kind's hits.
struct KindSlices<'h> {
    circles: &'h [ShapeHit<CircleContact>],
    walls: &'h [ShapeHit<SegmentContact>],
    polygons: &'h [ShapeHit<PolygonContact>],
}

/// The hits of segments `from..` in `hits` (in segment order).
fn from_segment<C>(hits: &[ShapeHit<C>], from: usize) -> &[ShapeHit<C>] {
    &hits[hits.partition_point(|h| (h.segment as usize) < from)..]
}

/// Takes the hits of `segment` from the front of `hits` (in segment order), as targets.
fn take_segment<'h, C: Copy>(
    hits: &mut &'h [ShapeHit<C>],
    segment: u32,
    contact: fn(C) -> TargetContact,
) -> impl Iterator<Item = TargetHit> + 'h {
    let n = hits.iter().take_while(|h| h.segment == segment).count();
    let (now, rest) = hits.split_at(n);
    *hits = rest;
    now.iter().map(move |h| TargetHit {
        segment: h.segment,
        target: h.shape,
        contact: contact(h.contact),
    })
}

impl KindHits {
    fn starting_at(&self, from: usize) -> KindSlices<'_> {
        KindSlices {
            circles: from_segment(&self.circles, from),
            walls: from_segment(&self.walls, from),
            polygons: from_segment(&self.polygons, from),
        }
    }

    fn len(&self) -> usize {
        self.circles.len() + self.walls.len() + self.polygons.len()
    }
}

impl<'h> KindSlices<'h> {
    /// Takes `segment`'s hits of every kind from the front, in kind order.
    fn take(&mut self, segment: u32) -> impl Iterator<Item = TargetHit> + 'h {
        let circles = take_segment(&mut self.circles, segment, TargetContact::Circle);
        let walls = take_segment(&mut self.walls, segment, TargetContact::Wall);
        let polygons = take_segment(&mut self.polygons, segment, TargetContact::Polygon);
        circles.chain(walls).chain(polygons)
    }
}

/// What a merge needs of one call: its (admitted) segments and their filters, and the targets.
pub(super) struct Merge<'a> {
    segments: &'a [Segment],
    segment_filters: Option<&'a [Filter]>,
    targets: &'a Targets,
}

impl<'a> Merge<'a> {
    /// Whether the pair is tested: the filters accept each other, and neither is skipped.
    fn tested(&self, hit: &TargetHit) -> bool {
        self.tests(hit.segment as usize, hit.kind(), hit.target as usize)
    }

    /// Whether segment `segment` and target `k` of `kind` are tested.
    fn tests(&self, segment: usize, kind: TargetKind, k: usize) -> bool {
        let segment = self.segment_filters.map_or(Filter::ALL, |f| f[segment]);
        segment.tests(&self.targets.filter(kind, k))
    }

    /// The merge of `batch`'s segments as given: for ordering hits only, which skipped
    /// segments have none of.
    pub(super) fn of(batch: &TargetBatch<'a>) -> Self {
        Merge {
            segments: batch.segments,
            segment_filters: batch.segment_filters,
            targets: batch.targets,
        }
    }

    /// The exact time at which `hit`'s segment enters its target.
    pub(super) fn entry_time(&self, hit: &TargetHit) -> EntryTime {
        let s = &self.segments[hit.segment as usize];
        self.entry_of(s, hit.target as usize, &hit.contact)
    }

    /// The exact time at which `s` enters target `k`, its contact `contact`.
    fn entry_of(&self, s: &Segment, k: usize, contact: &TargetContact) -> EntryTime {
        let t = self.targets;
        match contact {
            TargetContact::Rect(r) => EntryTime::of_rect(s, &t.rects().rects()[k], r),
            TargetContact::Circle(c) => EntryTime::of_circle(s, &t.circles()[k], c),
            TargetContact::Wall(_) => EntryTime::of_wall(s, &t.walls()[k]),
            TargetContact::Polygon(c) => {
                // The entry edge, where the segment starts outside (unread otherwise).
                let edge = match c.entry_edge {
                    NO_EDGE => Segment::default(),
                    e => t.polygons().edge(k, e as usize),
                };
                EntryTime::of_polygon(s, edge, c)
            }
        }
    }

    /// The first of `candidates` (in target order: kind, then index), by exact entry time.
    fn first(&self, candidates: &[TargetHit]) -> Option<TargetHit> {
        first_by(candidates, |hit| &hit.contact, |hit| self.entry_time(hit)).copied()
    }
}

/// The first of `candidates` by exact entry time, an exact tie going to the earlier in
/// `candidates`' order: `contact` gives a candidate's contact, and `exact` its exact entry
/// time, asked only on a tie of rounded `t_enter`.
pub(super) fn first_by<T>(
    candidates: &[T],
    contact: impl Fn(&T) -> &TargetContact,
    exact: impl Fn(&T) -> EntryTime,
) -> Option<&T> {
    // Most segments: one candidate has the least rounded t, which decides.
    let (mut best, mut tied) = (candidates.first()?, false);
    let mut t_best = contact(best).t_enter();
    for c in &candidates[1..] {
        let t = contact(c).t_enter();
        if t < t_best {
            (best, tied, t_best) = (c, false, t);
        } else if t == t_best {
            tied = true;
        }
    }
    if !tied {
        return Some(best);
    }
    // Two candidates share a rounded t.
    let mut best: Option<(&T, Option<EntryTime>)> = None;
    for c in candidates {
        let Some((now, best_time)) = &mut best else {
            best = Some((c, None));
            continue;
        };
        let (c_contact, now_contact) = (contact(c), contact(now));
        let (t, t_best) = (c_contact.t_enter(), now_contact.t_enter());
        // Rounding is monotone: a smaller rounded t is a smaller exact one, and only equal
        // rounded ones need the exact order. An exact tie keeps the earlier candidate.
        // Two targets the segment starts in tie at exactly 0 (bullets inside hitboxes).
        let both_in = t == 0.0 && starts_in(c_contact) && starts_in(now_contact);
        let sooner = t < t_best
            || (t == t_best && !both_in && {
                let best_time = best_time.get_or_insert_with(|| exact(now));
                exact(c).cmp(best_time) == Ordering::Less
            });
        if sooner {
            best = Some((c, None));
        }
    }
    best.map(|(c, _)| c)
}

/// Whether the segment certainly starts in the target (its entry is exactly 0), from the
/// contact alone; false for walls, whose t of 0 may be a rounded tiny one.
fn starts_in(contact: &TargetContact) -> bool {
    match contact {
        TargetContact::Rect(r) => r.start_inside(),
        TargetContact::Circle(c) => shape_starts_in(c),
        TargetContact::Wall(c) => shape_starts_in(c),
        TargetContact::Polygon(c) => shape_starts_in(c),
    }
}

/// One kind's first hits in the scene's order ([`CpuKernel::shape_first_hits_culled`]): the
/// pairs the filters test, equal rounded `t_enter` ordered by their exact entries, then by
/// index.
struct KindOrder<'m, C> {
    merge: &'m Merge<'m>,
    kind: TargetKind,
    contact: fn(C) -> TargetContact,
    /// The kinds before this one: each segment's first hit among them.
    before: KindsBefore<'m>,
}

impl<C: ShapeContact> FirstOrder<C> for KindOrder<'_, C> {
    fn tests(&self, segment: usize, shape: usize) -> bool {
        self.merge.tests(segment, self.kind, shape)
    }

    fn before(&self, s: &Segment, (k, c): (u32, &C), (best, b): (u32, &C)) -> bool {
        if shape_starts_in(c) && shape_starts_in(b) {
            return k < best;
        }
        let exact = |k: u32, c: &C| self.merge.entry_of(s, k as usize, &(self.contact)(*c));
        match exact(k, c).cmp(&exact(best, b)) {
            Ordering::Less => true,
            Ordering::Equal => k < best,
            Ordering::Greater => false,
        }
    }

    fn settles(&self, c: &C) -> bool {
        shape_starts_in(c)
    }

    fn earlier(&self, segment: usize) -> Earlier {
        self.before.earlier(segment)
    }
}

impl Engine {
    /// Each segment's first hit among every target of `batch.targets`, whatever its kind: the
    /// smallest `t_enter` in exact arithmetic (two hits whose rounded `t_enter` are equal are
    /// ordered by their exact entry), an exact tie going to the lower [`TargetKind`], then to
    /// the lower index. `None` when a segment hits nothing its filter tests. Into a buffer of
    /// one entry per segment, reused across frames.
    ///
    /// Each kind runs its own query, in kind order, each looking only for hits no later than
    /// the kinds' before it: the rects through their grid on this engine's backend, the shapes
    /// on the host's CPU on either backend (bounded by the rects, their walks are short; the
    /// GPU's exact shape kernels are slower than one CPU thread). The host merges them, so both
    /// backends give the same results.
    ///
    /// # Errors
    /// [`crate::Error::Input`] naming the first invalid segment (unless the batch skips them:
    /// [`crate::Engine::last_skipped`] then lists them),
    /// [`crate::Error::FilterLength`], [`crate::Error::OutputLength`], before any work; GPU
    /// errors.
    pub fn target_first_hits_into(
        &mut self,
        batch: &TargetBatch,
        out: &mut [Option<TargetHit>],
    ) -> Result<()> {
        self.check_cancel()?;
        let rect_batch = batch.rect_batch()?;
        self.admitting(&rect_batch, |engine, admitted| {
            check_output(admitted.segments.len(), out.len())?;
            let mut report = SceneReport::default();
            // Whether any kind's part walks a grid (the rects' part says its own).
            engine.used_grid = false;
            let mut kinds = std::mem::take(&mut engine.target_first);
            let answered = engine.kind_first_hits(admitted, batch.targets, &mut kinds, &mut report);
            engine.target_first = kinds;
            answered?;
            // Each kind's first hit, merged over the engine's threads.
            let merge = merge_of(admitted, batch.targets);
            engine.host_part(&mut report, |engine| {
                let kinds = &engine.target_first;
                engine.host_chunks(out, MERGE_CHUNK, |from, part| {
                    let mut candidates = Vec::with_capacity(TargetKind::ALL.len());
                    for (j, slot) in part.iter_mut().enumerate() {
                        // Most bullets of a crowded frame: settled by a rect, with nothing to
                        // merge.
                        if let Some(hit) = kinds.settled(from + j) {
                            *slot = Some(hit);
                            continue;
                        }
                        kinds.of(from + j, &mut candidates);
                        // Every slot read is this frame's, unless a cancel was set while the
                        // call ran: its skipped chunks left slots of an earlier frame, whose
                        // targets may be gone. The call then answers `Cancelled` (even if the
                        // cancel was reset: the kernel remembers the skip), but this merge
                        // runs first and must not index past this frame's targets.
                        candidates.retain(|h| (h.target as usize) < merge.targets.len(h.kind()));
                        *slot = merge.first(&candidates);
                    }
                });
            });
            engine.report_scene(report);
            engine.check_cancel()
        })
    }

    /// [`target_first_hits_into`](Self::target_first_hits_into) into a new vector.
    ///
    /// # Errors
    /// As [`target_first_hits_into`](Self::target_first_hits_into).
    pub fn target_first_hits(&mut self, batch: &TargetBatch) -> Result<Vec<Option<TargetHit>>> {
        let mut out = vec![None; batch.segments.len()];
        self.target_first_hits_into(batch, &mut out)?;
        Ok(out)
    }

    /// Every tested hitting (segment, target) pair, in (segment, kind, index) order.
    ///
    /// # Errors
    /// As [`target_first_hits_into`](Self::target_first_hits_into).
    pub fn target_hits(&mut self, batch: &TargetBatch) -> Result<Vec<TargetHit>> {
        self.check_cancel()?;
        let rect_batch = batch.rect_batch()?;
        self.admitting(&rect_batch, |engine, admitted| {
            let mut report = SceneReport::default();
            let rects = if admitted.rects.is_empty() {
                Vec::new()
            } else {
                engine.gpu_part(&mut report, |engine| engine.hits(admitted))?
            };
            let kinds = engine.shape_kind_hits(admitted.segments, batch.targets, 0, &mut report)?;
            let merge = merge_of(admitted, batch.targets);
            let out = engine.host_part(&mut report, |_| {
                let mut rects = &rects[..];
                let mut shapes = kinds.starting_at(0);
                let mut out = Vec::with_capacity(rects.len() + kinds.len());
                for i in 0..admitted.segments.len() as u32 {
                    let n = rects.iter().take_while(|h| h.segment == i).count();
                    let (now, rest) = rects.split_at(n);
                    rects = rest;
                    out.extend(now.iter().map(|h| rect_hit(i, h.rect, h.result)));
                    out.extend(shapes.take(i).filter(|h| merge.tested(h)));
                }
                out
            });
            engine.report_scene(report);
            engine.check_cancel()?;
            Ok(out)
        })
    }

    /// Tested hits per segment and per target of each kind.
    ///
    /// # Errors
    /// As [`target_first_hits_into`](Self::target_first_hits_into).
    pub fn target_counts(&mut self, batch: &TargetBatch) -> Result<TargetCounts> {
        self.check_cancel()?;
        let rect_batch = batch.rect_batch()?;
        self.admitting(&rect_batch, |engine, admitted| {
            let targets = batch.targets;
            let mut counts = TargetCounts {
                per_segment: vec![0; admitted.segments.len()],
                per_target: TargetKind::ALL.map(|k| vec![0; targets.len(k)]),
            };
            let mut report = SceneReport::default();
            if !admitted.rects.is_empty() {
                let rects = engine.gpu_part(&mut report, |engine| engine.counts(admitted))?;
                counts.per_segment = rects.per_segment;
                counts.per_target[0] = rects.per_target;
            }
            // Shapes take no filters: their counts come from their tested hits, a part of the
            // segments at a time.
            let merge = merge_of(admitted, targets);
            let n = admitted.segments.len();
            for start in (0..n).step_by(SHAPE_CHUNK) {
                let segments = &admitted.segments[start..(start + SHAPE_CHUNK).min(n)];
                let kinds = engine.shape_kind_hits(segments, targets, start, &mut report)?;
                engine.host_part(&mut report, |_| {
                    let mut shapes = kinds.starting_at(start);
                    for i in start as u32..(start + segments.len()) as u32 {
                        for hit in shapes.take(i).filter(|h| merge.tested(h)) {
                            counts.per_segment[i as usize] += 1;
                            counts.per_target[hit.kind() as usize][hit.target as usize] += 1;
                        }
                    }
                });
            }
            engine.report_scene(report);
            engine.check_cancel()?;
            Ok(counts)
        })
    }

    /// Each kind's first hits of the admitted batch's segments in the scene's order, into
    /// `kinds`: the rects' through their set on this engine's backend, then the shapes'
    /// through their broad phase on the host's CPU ([`Engine::on_host`]), each kind's walk
    /// stopping past the kinds' before it.
    fn kind_first_hits(
        &mut self,
        admitted: &Batch,
        targets: &Targets,
        kinds: &mut KindFirst,
        report: &mut SceneReport,
    ) -> Result<()> {
        let merge = &merge_of(admitted, targets);
        let segments = admitted.segments;
        let n = segments.len();
        let rects = KindFirst::sized(
            &mut kinds.rects,
            !admitted.rects.is_empty(),
            n,
            FirstHit::NONE,
        );
        if !rects.is_empty() {
            self.gpu_part(report, |this| this.first_hit_into(admitted, rects))?;
        }
        // Each kind after the rects looks only for hits no later than the kinds' before it
        // (`KindsBefore`): a segment that starts inside a rect looks no further.
        // The shapes on the host's CPU, on a GPU engine too: bounded by the rects' hits, their
        // walks are short, and the GPU's exact shape kernels are slower than one CPU thread.
        self.host_part(report, |this| {
            this.on_host(|this| {
                let circles =
                    KindFirst::sized(&mut kinds.circles, !targets.circles().is_empty(), n, None);
                if !circles.is_empty() {
                    let order = KindOrder {
                        merge,
                        kind: TargetKind::Circle,
                        contact: TargetContact::Circle,
                        before: KindsBefore {
                            rects: &kinds.rects,
                            circles: &[],
                            walls: &[],
                        },
                    };
                    this.shape_kind_first(segments, targets.circles(), &order, circles)?;
                }
                let walls =
                    KindFirst::sized(&mut kinds.walls, !targets.walls().is_empty(), n, None);
                if !walls.is_empty() {
                    let order = KindOrder {
                        merge,
                        kind: TargetKind::Wall,
                        contact: TargetContact::Wall,
                        before: KindsBefore {
                            rects: &kinds.rects,
                            circles: &kinds.circles,
                            walls: &[],
                        },
                    };
                    this.shape_kind_first(segments, targets.walls(), &order, walls)?;
                }
                let polygons =
                    KindFirst::sized(&mut kinds.polygons, !targets.polygons().is_empty(), n, None);
                if !polygons.is_empty() {
                    let order = KindOrder {
                        merge,
                        kind: TargetKind::Polygon,
                        contact: TargetContact::Polygon,
                        before: KindsBefore {
                            rects: &kinds.rects,
                            circles: &kinds.circles,
                            walls: &kinds.walls,
                        },
                    };
                    this.culled_polygon_first_hits(segments, targets.polygons(), &order, polygons)?;
                }
                Ok(())
            })
        })
    }

    /// The first hits of `segments` among `shapes` in `order`'s order, on the CPU.
    fn shape_kind_first<S: Shape>(
        &mut self,
        segments: &[Segment],
        shapes: &[S],
        order: &impl FirstOrder<S::Contact>,
        first: &mut [Option<ShapeHit<S::Contact>>],
    ) -> Result<bool> {
        let bounds: Vec<Rect> = shapes.iter().map(S::bounds).collect();
        let filter = |simd, order: &[u32]| LaneFilter::of(simd, shapes, order);
        let contact = contact_of(shapes);
        let work =
            super::auto::Work::dense(super::shapes::family::<S>(), segments.len(), shapes.len());
        self.culled_first_hits(
            work,
            segments,
            &bounds,
            S::paths(shapes),
            filter,
            contact,
            order,
            first,
        )
    }

    /// The hits of every kind but rects, each kind's own query, for `segments`, which are the
    /// call's from segment `base` on (the hits name the call's segments).
    fn shape_kind_hits(
        &mut self,
        segments: &[Segment],
        targets: &Targets,
        base: usize,
        report: &mut SceneReport,
    ) -> Result<KindHits> {
        let mut kinds = KindHits::default();
        if !targets.circles().is_empty() {
            kinds.circles = self.gpu_part(report, |e| e.shape_hits(segments, targets.circles()))?;
        }
        if !targets.walls().is_empty() {
            kinds.walls = self.gpu_part(report, |e| e.shape_hits(segments, targets.walls()))?;
        }
        if !targets.polygons().is_empty() {
            kinds.polygons =
                self.gpu_part(report, |e| e.polygon_hits(segments, targets.polygons()))?;
        }
        if base > 0 {
            let base = base as u32;
            kinds.circles.iter_mut().for_each(|h| h.segment += base);
            kinds.walls.iter_mut().for_each(|h| h.segment += base);
            kinds.polygons.iter_mut().for_each(|h| h.segment += base);
        }
        Ok(kinds)
    }
}

/// Segments a part of the merge takes.
pub(super) const MERGE_CHUNK: usize = 4096;

/// Segments whose shapes' hits a first-hit or counts call lists at once.
const SHAPE_CHUNK: usize = 1 << 16;

impl Engine {
    /// [`Error::Cancelled`] once the engine's [`crate::Cancel`] is set: the merges run no
    /// query of their own that would say so.
    pub(super) fn check_cancel(&self) -> Result<()> {
        if self.cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(())
    }

    /// Runs `each(first segment, its part of out)` over parts of `chunk` segments, on the
    /// engine's CPU threads (a GPU engine's: its fallback's, its host kernel's, or the
    /// process's).
    pub(super) fn host_chunks<T: Send>(
        &self,
        out: &mut [T],
        chunk: usize,
        each: impl Fn(usize, &mut [T]) + Sync,
    ) {
        match &self.inner {
            Inner::Cpu { kernel, .. } => kernel.chunked(out, chunk, 1, each),
            Inner::Gpu(host) => match host.fallback.as_ref().or(host.host_cpu.as_ref()) {
                Some(kernel) => kernel.chunked(out, chunk, 1, each),
                None => CpuKernel::default().chunked(out, chunk, 1, each),
            },
        }
    }
}

fn merge_of<'a>(admitted: &Batch<'a>, targets: &'a Targets) -> Merge<'a> {
    Merge {
        segments: admitted.segments,
        segment_filters: admitted.segment_filters,
        targets,
    }
}
