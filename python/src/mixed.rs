//! A query over several kinds of target at once (`rects=`, `walls=`, `circles=`, `polygons=`
//! in any mix): one [`Targets`] scene asked through the library's scene queries, so a first
//! hit is the library's across every kind (the exact order of t, then kind, then index). The
//! rows are the CLI's `.npy` rows of a mixed job: `target_kind` (1 rect, 2 circle, 3 wall,
//! 4 polygon; 0 on a first-hit miss) and `target` (the index within its kind), then one field
//! for each name any kind's result has, in [`TargetKind`] order, a row filling its kind's and
//! leaving the others absent (t NaN, indices -1, codes 0).

use std::sync::OnceLock;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rectcast::{
    Circle, CircleContact, PairResult, PolygonContact, Polygons, Rect, Segment, SegmentContact,
    TargetBatch, TargetContact, TargetKind, Targets,
};

use crate::PyEngine;
use crate::rows::{Packed, Row, Ty, rows};
use crate::targets::{Packs, PolygonTargets, PyTarget, Shapes};

/// Each kind's result fields, as its own rows pack them (a polygon's rings after them).
fn kind_fields(kind: TargetKind) -> Vec<(&'static str, Ty)> {
    match kind {
        TargetKind::Rect => PairResult::FIELDS.to_vec(),
        TargetKind::Circle => CircleContact::FIELDS.to_vec(),
        TargetKind::Wall => SegmentContact::FIELDS.to_vec(),
        TargetKind::Polygon => [
            PolygonContact::FIELDS,
            <PolygonTargets<'_> as PyTarget>::MORE,
        ]
        .concat(),
    }
}

/// Each kind's name, as its own rows name their target's field.
fn name(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Rect => "rect",
        TargetKind::Circle => <Shapes<'_, Circle> as PyTarget>::NAME,
        TargetKind::Wall => <Shapes<'_, Segment> as PyTarget>::NAME,
        TargetKind::Polygon => <PolygonTargets<'_> as PyTarget>::NAME,
    }
}

/// Every kind of target in `target_kind` code order (from 1): its name and its result's
/// fields in a mixed query's rows.
#[pyfunction]
pub(crate) fn target_kinds() -> Vec<(&'static str, Vec<&'static str>)> {
    (TargetKind::ALL.iter())
        .map(|&kind| (name(kind), kind_fields(kind).iter().map(|f| f.0).collect()))
        .collect()
}

/// The union of every kind's fields, in kind order (a name once, at its first place); each
/// kind's fields as (their offset in the kind's own packing, size, offset in the union); and
/// the union's bytes with every field absent.
struct Union {
    fields: Vec<(&'static str, Ty)>,
    at: [Vec<(usize, usize, usize)>; 4],
    absent: Vec<u8>,
}

fn union() -> &'static Union {
    static UNION: OnceLock<Union> = OnceLock::new();
    UNION.get_or_init(|| {
        let mut fields: Vec<(&'static str, Ty)> = Vec::new();
        let places = TargetKind::ALL.map(|kind| {
            (kind_fields(kind).into_iter())
                .map(|(name, ty)| match fields.iter().position(|f| f.0 == name) {
                    Some(i) => {
                        assert!(fields[i].1 == ty, "field {name} of two types");
                        (ty.size(), i)
                    }
                    None => {
                        fields.push((name, ty));
                        (ty.size(), fields.len() - 1)
                    }
                })
                .collect::<Vec<_>>()
        });
        let offsets: Vec<usize> = (fields.iter())
            .scan(0, |at, (_, ty)| {
                let here = *at;
                *at += ty.size();
                Some(here)
            })
            .collect();
        let at = places.map(|places| {
            let mut own = 0;
            (places.into_iter())
                .map(|(size, i)| {
                    let place = (own, size, offsets[i]);
                    own += size;
                    place
                })
                .collect()
        });
        let mut absent = Vec::new();
        for (_, ty) in &fields {
            absent.extend_from_slice(ty.absent());
        }
        Union { fields, at, absent }
    })
}

/// The most bytes one kind's own packing takes.
const MAX_KIND_BYTES: usize = 64;

/// The union's bytes of `contact` (of target `target`), packed by its kind's own rows and
/// moved to their places; `polygons` for a polygon's rings.
fn put_union(row: &mut Row<'_>, contact: &TargetContact, target: u32, polygons: Option<&Polygons>) {
    let union = union();
    let mut own = [0u8; MAX_KIND_BYTES];
    {
        let mut scratch = Row::over(&mut own);
        match contact {
            TargetContact::Rect(r) => r.pack(&mut scratch),
            TargetContact::Circle(c) => c.pack(&mut scratch),
            TargetContact::Wall(w) => w.pack(&mut scratch),
            TargetContact::Polygon(p) => {
                p.pack(&mut scratch);
                let polygons = polygons.expect("a polygon's contact comes with the polygons");
                PolygonTargets(polygons).pack_more(target, p, &mut scratch);
            }
        }
    }
    let mut block = [0u8; MAX_KIND_BYTES];
    let block = &mut block[..union.absent.len()];
    block.copy_from_slice(&union.absent);
    for &(from, size, to) in &union.at[contact.kind() as usize] {
        block[to..to + size].copy_from_slice(&own[from..from + size]);
    }
    row.bytes(block);
}

/// Whether `contact` is a hit.
fn hit(contact: &TargetContact) -> bool {
    match contact {
        TargetContact::Rect(r) => Packs::hit(r),
        TargetContact::Circle(c) => Packs::hit(c),
        TargetContact::Wall(w) => Packs::hit(w),
        TargetContact::Polygon(p) => Packs::hit(p),
    }
}

/// The code of `kind` in `target_kind` (0: none).
fn code(kind: TargetKind) -> u8 {
    kind as u8 + 1
}

/// The targets of a mixed query, as Python passes them (each kind optional).
pub(crate) struct Mixed<'a> {
    pub rects: Option<&'a [Rect]>,
    pub walls: Option<&'a [Segment]>,
    pub circles: Option<&'a [Circle]>,
    pub polygons: Option<Polygons>,
}

/// The rows of `query` (`pairs`, `hits`, `first_hit`, `counts`) of `segments` against the
/// targets of `mixed`, all kinds at once.
pub(crate) fn mixed_rows<'py>(
    py: Python<'py>,
    engine: &PyEngine,
    query: &str,
    segments: &[Segment],
    mixed: Mixed<'_>,
) -> PyResult<Packed<'py>> {
    let mut targets = Targets::new();
    let checked = (|| {
        if let Some(rects) = mixed.rects {
            targets.set_rects(rects)?;
        }
        if let Some(walls) = mixed.walls {
            targets.set_walls(walls)?;
        }
        if let Some(circles) = mixed.circles {
            targets.set_circles(circles)?;
        }
        Ok(())
    })();
    checked.map_err(crate::raise)?;
    let polygons = mixed.polygons;
    if let Some(polygons) = &polygons {
        targets.set_polygons(polygons.clone());
    }
    let counts = TargetKind::ALL.map(|kind| targets.len(kind));
    let width: usize = counts.iter().sum();
    // A polygon's pairs are per edge.
    let edges = polygons.as_ref().map_or(0, Polygons::edge_count);
    let work = segments.len() * (width - counts[TargetKind::Polygon as usize] + edges);
    let union = union();
    let ids = |target: (&'static str, Ty)| {
        let mut fields = vec![("segment", Ty::U64), ("target_kind", Ty::U8), target];
        if query != "first_hit" {
            fields.push(("hit", Ty::Bool));
        }
        fields.extend_from_slice(&union.fields);
        fields
    };
    let polygons = polygons.as_ref();
    let batch = TargetBatch::over(segments, &targets);
    match query {
        "first_hit" => {
            let first = engine.run(py, work, |e| e.target_first_hits(&batch))?;
            rows(py, &ids(("target", Ty::I64)), &first, |i, hit, row| {
                row.u64(i as u64);
                match hit {
                    Some(hit) => {
                        row.u8(code(hit.kind())).i64(i64::from(hit.target));
                        put_union(row, &hit.contact, hit.target, polygons);
                    }
                    None => {
                        row.u8(0).i64(-1).bytes(&union.absent);
                    }
                }
            })
        }
        "hits" => {
            let hits = engine.run(py, work, |e| e.target_hits(&batch))?;
            rows(py, &ids(("target", Ty::U64)), &hits, |_, hit, row| {
                row.u64(u64::from(hit.segment))
                    .u8(code(hit.kind()))
                    .u64(u64::from(hit.target))
                    .u8(1);
                put_union(row, &hit.contact, hit.target, polygons);
            })
        }
        "pairs" => {
            let dense = engine.run(py, work, |e| {
                let mut dense: Vec<Vec<TargetContact>> = vec![Vec::new(); 4];
                if let Some(rects) = mixed.rects {
                    dense[0] = e
                        .pairs(segments, rects)?
                        .into_iter()
                        .map(TargetContact::Rect)
                        .collect();
                }
                if let Some(circles) = mixed.circles {
                    dense[1] = (e.shape_pairs(segments, circles)?.into_iter())
                        .map(TargetContact::Circle)
                        .collect();
                }
                if let Some(walls) = mixed.walls {
                    dense[2] = (e.shape_pairs(segments, walls)?.into_iter())
                        .map(TargetContact::Wall)
                        .collect();
                }
                if let Some(polygons) = polygons {
                    dense[3] = (e.polygon_pairs(segments, polygons)?.into_iter())
                        .map(TargetContact::Polygon)
                        .collect();
                }
                Ok(dense)
            })?;
            // Segment-major, and within a segment kind after kind.
            let mut starts = [0; 5];
            for k in 0..4 {
                starts[k + 1] = starts[k] + counts[k];
            }
            let places = vec![(); segments.len() * width];
            rows(py, &ids(("target", Ty::U64)), &places, |i, (), row| {
                let (s, j) = (i / width.max(1), i % width.max(1));
                let k = starts[1..].partition_point(|&end| end <= j);
                let target = j - starts[k];
                let contact = &dense[k][s * counts[k] + target];
                row.u64(s as u64)
                    .u8(code(TargetKind::ALL[k]))
                    .u64(target as u64)
                    .u8(hit(contact) as u8);
                put_union(row, contact, target as u32, polygons);
            })
        }
        "counts" => {
            let found = engine.run(py, work, |e| e.target_counts(&batch))?;
            let per: Vec<(TargetKind, usize, u64)> = (TargetKind::ALL.iter())
                .flat_map(|&kind| {
                    (found.of(kind).iter().enumerate()).map(move |(t, &hits)| (kind, t, hits))
                })
                .collect();
            let fields = [
                ("target_kind", Ty::U8),
                ("target", Ty::U64),
                ("hits", Ty::U64),
            ];
            rows(py, &fields, &per, |_, &(kind, target, hits), row| {
                row.u8(code(kind)).u64(target as u64).u64(hits);
            })
        }
        other => Err(PyValueError::new_err(format!(
            "query: expected pairs, hits, first_hit or counts, found {other:?}"
        ))),
    }
}
