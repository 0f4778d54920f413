//! What the queries run against from Python (rects, walls, circles, polygons), each described
//! once: the fields a pair's result packs into (the CLI's `.npy` columns, in numpy's types),
//! and, for the shapes, how each query runs on the engine. The rows of every query are
//! composed from that description.

use numpy::PyReadonlyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rectcast::{
    Circle, CircleContact, Counts, Engine, NO_EDGE, PairResult, PolygonContact, Polygons,
    SceneShape, Segment, SegmentContact, Shape, ShapeContact, ShapeHit, ShapeRecord,
};

use crate::rows::{Packed, Row, Ty, rows};
use crate::{PyEngine, records};

/// A pair's result as a row packs it.
pub(crate) trait Packs: Copy + Send + Sync {
    /// Its fields, after the indices.
    const FIELDS: &'static [(&'static str, Ty)];
    /// The result of a segment that hits nothing (a first-hit row's).
    const MISS: Self;
    fn hit(&self) -> bool;
    /// Its fields' values: t NaN on a miss.
    fn pack(&self, row: &mut Row<'_>);
}

/// t, NaN on a miss.
fn t(hit: bool, t: f32) -> f32 {
    if hit { t } else { f32::NAN }
}

impl Packs for PairResult {
    const FIELDS: &'static [(&'static str, Ty)] = &[
        ("kind", Ty::U8),
        ("t_enter", Ty::F32),
        ("t_exit", Ty::F32),
        ("entry", Ty::U8),
        ("exit", Ty::U8),
    ];
    const MISS: Self = PairResult::MISS;
    fn hit(&self) -> bool {
        PairResult::hit(self)
    }
    fn pack(&self, row: &mut Row<'_>) {
        let hit = self.hit();
        row.u8(self.kind() as u8)
            .f32(t(hit, self.t_enter))
            .f32(t(hit, self.t_exit))
            .u8(self.entry_sides().bits() as u8)
            .u8(self.exit_sides().bits() as u8);
    }
}

/// A shape's contact's first fields: its category code ([`ShapeContact::category`]) and t.
fn pack_category_and_times<C: ShapeContact>(contact: &C, row: &mut Row<'_>) {
    let hit = contact.hit();
    row.u8(contact.category().0 as u8)
        .f32(t(hit, contact.t_enter()))
        .f32(t(hit, contact.t_exit()));
}

/// The shapes read as records, registered once each with their contact (docs/architecture.md, "A new
/// shape"): their contacts' fields, [`shape_rows`], which runs a query over the shape a keyword
/// names, and [`shapes`], what Python knows of each. Their names, fields and categories come
/// from the library ([`ShapeRecord`], [`ShapeContact`]).
macro_rules! registered_shapes {
    ($($shape:ty: $contact:ty),+) => {
        $(
            // Python's arrays are read in place as the shapes: a shape's bytes are its record.
            const _: () = assert!(
                size_of::<$shape>() == <$shape as ShapeRecord>::FIELDS.len() * size_of::<f32>()
            );

            impl Packs for $contact {
                const FIELDS: &'static [(&'static str, Ty)] = &[
                    (<$contact as ShapeContact>::CATEGORY, Ty::U8),
                    ("t_enter", Ty::F32),
                    ("t_exit", Ty::F32),
                ];
                const MISS: Self = <$shape as Shape>::MISS;
                fn hit(&self) -> bool {
                    ShapeContact::hit(self)
                }
                fn pack(&self, row: &mut Row<'_>) {
                    pack_category_and_times(self, row);
                }
            }
        )+

        /// The rows of `query` of `segments` against the shapes of the keyword `keyword`
        /// (`walls`, `circles`), given as `shapes`.
        pub(crate) fn shape_rows<'py>(
            py: Python<'py>,
            engine: &PyEngine,
            query: &str,
            keyword: &str,
            segments: &[Segment],
            shapes: &PyReadonlyArray2<'py, f32>,
        ) -> PyResult<Packed<'py>> {
            $(if keyword == <$shape as ShapeRecord>::PLURAL {
                let shapes = Shapes(records::<$shape>(shapes, keyword)?);
                return target_rows(py, engine, query, segments, &shapes);
            })+
            Err(PyValueError::new_err(format!(
                "shape: expected one of {}, found {keyword:?}",
                [$(<$shape as ShapeRecord>::PLURAL),+].join(", ")
            )))
        }

        /// The invalid records among `array`, as the library checks them, by what they are
        /// (`segments`, `rects`, or a registered shape's keyword): each one's index and the
        /// library's error, in order (`skip_invalid=True`).
        #[pyfunction]
        pub(crate) fn invalid_records(
            keyword: &str,
            array: PyReadonlyArray2<'_, f32>,
        ) -> PyResult<Vec<(usize, String)>> {
            fn bad<T>(
                items: &[T],
                check: impl Fn(usize, &T) -> Result<(), rectcast::InputError>,
            ) -> Vec<(usize, String)> {
                (items.iter().enumerate())
                    .filter_map(|(i, item)| check(i, item).err().map(|e| (i, e.to_string())))
                    .collect()
            }
            match keyword {
                "segments" => return Ok(bad(records::<Segment>(&array, keyword)?, rectcast::validate::check_segment)),
                "rects" => return Ok(bad(records::<rectcast::Rect>(&array, keyword)?, rectcast::validate::check_rect)),
                _ => {}
            }
            $(if keyword == <$shape as ShapeRecord>::PLURAL {
                return Ok(bad(records::<$shape>(&array, keyword)?, <$shape as Shape>::check));
            })+
            Err(PyValueError::new_err(format!("invalid_records: no records named {keyword:?}")))
        }

        /// What Python knows of each registered shape: its keyword, its rows' field, its
        /// record's columns, its category's field and the name of each category code.
        #[pyfunction]
        pub(crate) fn shapes() -> Vec<ShapeDescription> {
            vec![$(ShapeDescription {
                keyword: <$shape as ShapeRecord>::PLURAL,
                name: <$shape as ShapeRecord>::NAME,
                columns: <$shape as ShapeRecord>::FIELDS.to_vec(),
                category: <$contact as ShapeContact>::CATEGORY,
                category_names: <$contact as ShapeContact>::category_names(),
            }),+]
        }
    };
}

registered_shapes!(Segment: SegmentContact, Circle: CircleContact);

/// A registered shape, as the Python package reads it (`rectcast._SHAPES`).
#[derive(IntoPyObject)]
pub(crate) struct ShapeDescription {
    keyword: &'static str,
    name: &'static str,
    columns: Vec<&'static str>,
    category: &'static str,
    category_names: Vec<&'static str>,
}

impl Packs for PolygonContact {
    const FIELDS: &'static [(&'static str, Ty)] = &[
        ("kind", Ty::U8),
        ("t_enter", Ty::F32),
        ("t_exit", Ty::F32),
        ("entry_edge", Ty::I64),
        ("exit_edge", Ty::I64),
    ];
    const MISS: Self = PolygonContact::MISS;
    fn hit(&self) -> bool {
        PolygonContact::hit(self)
    }
    fn pack(&self, row: &mut Row<'_>) {
        // -1 where there is no edge.
        let edge = |e: u32| if e == NO_EDGE { -1 } else { i64::from(e) };
        let hit = self.hit();
        row.u8(self.kind as u8)
            .f32(t(hit, self.t_enter))
            .f32(t(hit, self.t_exit))
            .i64(edge(self.entry_edge))
            .i64(edge(self.exit_edge));
    }
}

/// Fields the targets themselves add after a result's ([`PyTarget::MORE`]), and how they pack
/// a result of target `target` (an index); none for rects.
pub(crate) struct More<'a, R> {
    pub fields: &'static [(&'static str, Ty)],
    pub pack: &'a (dyn Fn(u32, &R, &mut Row<'_>) + Sync),
}

impl<R: 'static> More<'static, R> {
    pub(crate) const NONE: Self = More {
        fields: &[],
        pack: &|_, _, _| {},
    };
}

/// Fields `first` (the indices), then the result's, then `more`.
fn fields<R: Packs>(
    first: &[(&'static str, Ty)],
    more: &[(&'static str, Ty)],
) -> Vec<(&'static str, Ty)> {
    first.iter().chain(R::FIELDS).chain(more).copied().collect()
}

/// Dense pairs' rows (segment-major over `width` targets called `name`): (segment, target,
/// hit), then the result, then `more`.
pub(crate) fn pair_rows<'py, R: Packs>(
    py: Python<'py>,
    name: &'static str,
    results: &[R],
    width: usize,
    more: More<'_, R>,
) -> PyResult<Packed<'py>> {
    let m = width.max(1);
    let first = [("segment", Ty::U64), (name, Ty::U64), ("hit", Ty::Bool)];
    rows(
        py,
        &fields::<R>(&first, more.fields),
        results,
        |i, r, row| {
            row.u64((i / m) as u64)
                .u64((i % m) as u64)
                .u8(r.hit() as u8);
            r.pack(row);
            (more.pack)((i % m) as u32, r, row);
        },
    )
}

/// Hits' rows, in the pairs' fields; `of` gives a hit's (segment, target, result).
pub(crate) fn hit_rows<'py, R: Packs, H: Sync>(
    py: Python<'py>,
    name: &'static str,
    hits: &[H],
    of: impl Fn(&H) -> (u32, u32, &R) + Sync,
    more: More<'_, R>,
) -> PyResult<Packed<'py>> {
    let first = [("segment", Ty::U64), (name, Ty::U64), ("hit", Ty::Bool)];
    rows(py, &fields::<R>(&first, more.fields), hits, |_, h, row| {
        let (segment, target, r) = of(h);
        row.u64(u64::from(segment)).u64(u64::from(target)).u8(1);
        r.pack(row);
        (more.pack)(target, r, row);
    })
}

/// First hits' rows, one per segment: (segment, target or -1), then the result (a miss's when
/// none); `of` gives a segment's first hit's target and result.
pub(crate) fn first_hit_rows<'py, R: Packs, F: Sync>(
    py: Python<'py>,
    name: &'static str,
    first: &[F],
    of: impl Fn(&F) -> Option<(u32, &R)> + Sync,
    more: More<'_, R>,
) -> PyResult<Packed<'py>> {
    let first_fields = [("segment", Ty::U64), (name, Ty::I64)];
    rows(
        py,
        &fields::<R>(&first_fields, more.fields),
        first,
        |i, f, row| {
            let hit = of(f);
            row.u64(i as u64)
                .i64(hit.map_or(-1, |(target, _)| i64::from(target)));
            let (target, result) = hit.map_or((0, R::MISS), |(target, r)| (target, *r));
            result.pack(row);
            (more.pack)(target, &result, row);
        },
    )
}

/// Counts' rows: (target, hits).
pub(crate) fn count_rows<'py>(
    py: Python<'py>,
    name: &'static str,
    per_target: &[u64],
) -> PyResult<Packed<'py>> {
    rows(
        py,
        &[(name, Ty::U64), ("hits", Ty::U64)],
        per_target,
        |i, hits, row| {
            row.u64(i as u64).u64(*hits);
        },
    )
}

/// The targets of the queries over shapes, as Python passes them.
pub(crate) trait PyTarget: Sync {
    /// The target's field (`wall`, `circle`, `polygon`).
    const NAME: &'static str;
    type Result: Packs;
    /// Fields after the result's that the targets themselves say (a polygon's rings).
    const MORE: &'static [(&'static str, Ty)] = &[];
    /// Those fields of `result` with target `target` (an index into these targets).
    fn pack_more(&self, _target: u32, _result: &Self::Result, _row: &mut Row<'_>) {}
    fn len(&self) -> usize;
    /// The pairs a call over `segments` tests (a polygon's per edge): whether it is long
    /// enough to be worth interrupting.
    fn work(&self, segments: usize) -> usize {
        segments * self.len()
    }
    fn pairs(&self, e: &mut Engine, s: &[Segment]) -> rectcast::Result<Vec<Self::Result>>;
    fn hits(&self, e: &mut Engine, s: &[Segment]) -> rectcast::Result<Vec<ShapeHit<Self::Result>>>;
    fn first_hits(
        &self,
        e: &mut Engine,
        s: &[Segment],
    ) -> rectcast::Result<Vec<Option<ShapeHit<Self::Result>>>>;
    fn counts(&self, e: &mut Engine, s: &[Segment]) -> rectcast::Result<Counts>;
}

/// The queries of a target the engine answers in one call each, over `self.0`.
macro_rules! engine_queries {
    ($pairs:ident, $hits:ident, $first_hits:ident, $counts:ident) => {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn pairs(&self, e: &mut Engine, s: &[Segment]) -> rectcast::Result<Vec<Self::Result>> {
            e.$pairs(s, self.0)
        }
        fn hits(
            &self,
            e: &mut Engine,
            s: &[Segment],
        ) -> rectcast::Result<Vec<ShapeHit<Self::Result>>> {
            e.$hits(s, self.0)
        }
        fn first_hits(
            &self,
            e: &mut Engine,
            s: &[Segment],
        ) -> rectcast::Result<Vec<Option<ShapeHit<Self::Result>>>> {
            e.$first_hits(s, self.0)
        }
        fn counts(&self, e: &mut Engine, s: &[Segment]) -> rectcast::Result<Counts> {
            e.$counts(s, self.0)
        }
    };
}

/// Shapes through the library's seam ([`Shape`]) read as records, named as the library names
/// them ([`ShapeRecord::NAME`]).
pub(crate) struct Shapes<'a, S>(pub &'a [S]);

impl<S: ShapeRecord + SceneShape> PyTarget for Shapes<'_, S>
where
    S::Contact: Packs,
{
    const NAME: &'static str = S::NAME;
    type Result = S::Contact;
    engine_queries!(shape_pairs, shape_hits, shape_first_hits, shape_counts);
}

/// Polygons, as Python passes them (the flat form, checked).
pub(crate) struct PolygonTargets<'a>(pub &'a Polygons);

impl PyTarget for PolygonTargets<'_> {
    const NAME: &'static str = "polygon";
    type Result = PolygonContact;
    engine_queries!(
        polygon_pairs,
        polygon_hits,
        polygon_first_hits,
        polygon_counts
    );

    fn work(&self, segments: usize) -> usize {
        segments * self.0.edge_count()
    }

    /// The rings of the entry and exit edges, -1 where there is no edge: 0 a polygon's first
    /// ring (its shell), then its holes and other parts' rings in their order.
    const MORE: &'static [(&'static str, Ty)] = &[("entry_ring", Ty::I64), ("exit_ring", Ty::I64)];
    fn pack_more(&self, target: u32, result: &PolygonContact, row: &mut Row<'_>) {
        let ring = |e: u32| match e {
            NO_EDGE => -1,
            e => self.0.edge_ring(target as usize, e as usize).0 as i64,
        };
        row.i64(ring(result.entry_edge)).i64(ring(result.exit_edge));
    }
}

/// The rows of `query` (`pairs`, `hits`, `first_hit`, `counts`) of `segments` against
/// `target`: the CLI's `.npy` rows with `--walls`, `--circles` or `--polygons`.
pub(crate) fn target_rows<'py, T: PyTarget>(
    py: Python<'py>,
    engine: &PyEngine,
    query: &str,
    segments: &[Segment],
    target: &T,
) -> PyResult<Packed<'py>> {
    let work = target.work(segments.len());
    let name = T::NAME;
    let pack = |t, r: &T::Result, row: &mut Row<'_>| target.pack_more(t, r, row);
    let more = || More {
        fields: T::MORE,
        pack: &pack,
    };
    match query {
        "pairs" => {
            let results = engine.run(py, work, |e| target.pairs(e, segments))?;
            pair_rows(py, name, &results, target.len(), more())
        }
        "hits" => {
            let hits = engine.run(py, work, |e| target.hits(e, segments))?;
            hit_rows(
                py,
                name,
                &hits,
                |h| (h.segment, h.shape, &h.contact),
                more(),
            )
        }
        "first_hit" => {
            let first = engine.run(py, work, |e| target.first_hits(e, segments))?;
            first_hit_rows(
                py,
                name,
                &first,
                |f| f.as_ref().map(|h| (h.shape, &h.contact)),
                more(),
            )
        }
        "counts" => {
            let counts = engine.run(py, work, |e| target.counts(e, segments))?;
            count_rows(py, name, &counts.per_target)
        }
        other => Err(PyValueError::new_err(format!(
            "query: expected pairs, hits, first_hit or counts, found {other:?}"
        ))),
    }
}
