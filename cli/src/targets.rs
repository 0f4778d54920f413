//! What the queries run against, each described once: rects, walls, circles and polygons. A
//! target says its name (its id column's), the cells of a pair's result after the indices
//! (with their columns), and how each query (pairs, first-hit, hits, count) runs a chunk of
//! segments on the engine. The tables (`output.rs`), the commands' flags (`shape_files.rs`),
//! the query and render commands and every format read this description. A new shape through
//! the library's seam is one word in the `registered_shapes!` line below: the rest comes from
//! its [`ShapeRecord`] and [`ShapeContact`].

use rectcast::{
    BroadPhase, Circle, CircleContact, Engine, FirstHit, Hit, PairResult, PolygonContact, Polygons,
    Rect, RectSet, SceneShape, Segment, SegmentContact, Shape, ShapeContact, ShapeHit, ShapeRecord,
};

use crate::table::{Cell, Column, ColumnType};

/// The most cells a result has after its indices (a job over every kind of target: the
/// union of their columns, `mixed.rs`).
pub const MAX_CELLS: usize = 10;

/// A result's cells after its indices, on the stack.
#[derive(Clone, Copy, Debug)]
pub struct Cells {
    cells: [Cell<'static>; MAX_CELLS],
    len: usize,
}

impl Cells {
    /// No cells.
    pub const NONE: Self = Self {
        cells: [Cell::Bool(false); MAX_CELLS],
        len: 0,
    };

    pub fn new<const N: usize>(cells: [Cell<'static>; N]) -> Self {
        Self::NONE.then(&cells)
    }

    /// These cells, then `more`.
    pub fn then(mut self, more: &[Cell<'static>]) -> Self {
        self.cells[self.len..self.len + more.len()].copy_from_slice(more);
        self.len += more.len();
        self
    }

    pub fn as_slice(&self) -> &[Cell<'static>] {
        &self.cells[..self.len]
    }
}

/// A pair's result as table cells.
pub trait ResultCells: Copy + Send + Sync + 'static {
    /// The columns of [`cells`](Self::cells).
    const COLUMNS: &'static [Column];
    /// The result of a segment that hits nothing (a first-hit row's).
    const MISS: Self;
    fn hit(&self) -> bool;
    /// Its cells: the category (kind or contact), t (absent on a miss), and what the target
    /// adds.
    fn cells(&self) -> Cells;
}

const fn column(name: &'static str, ty: ColumnType) -> Column {
    Column::new(name, ty)
}

/// A kind's cell: its code and name.
pub fn kind_cell(kind: rectcast::Kind) -> Cell<'static> {
    Cell::Category(kind as u8, kind.name())
}

/// The t cells of a result: absent on a miss.
fn times(hit: bool, t_enter: f32, t_exit: f32) -> [Cell<'static>; 2] {
    let t = |t| Cell::F32(hit.then_some(t));
    [t(t_enter), t(t_exit)]
}

impl ResultCells for PairResult {
    const COLUMNS: &'static [Column] = &[
        column("kind", ColumnType::Category),
        column("t_enter", ColumnType::F32),
        column("t_exit", ColumnType::F32),
        column("entry", ColumnType::Sides),
        column("exit", ColumnType::Sides),
    ];
    const MISS: Self = PairResult::MISS;
    fn hit(&self) -> bool {
        PairResult::hit(self)
    }
    fn cells(&self) -> Cells {
        let [t_enter, t_exit] = times(self.hit(), self.t_enter, self.t_exit);
        Cells::new([
            kind_cell(self.kind()),
            t_enter,
            t_exit,
            Cell::Sides(self.entry_sides()),
            Cell::Sides(self.exit_sides()),
        ])
    }
}

/// A shape's contact's first cells: its category ([`ShapeContact::category`]) and t.
fn category_and_times<C: ShapeContact>(contact: &C) -> [Cell<'static>; 3] {
    let (code, name) = contact.category();
    let [t_enter, t_exit] = times(contact.hit(), contact.t_enter(), contact.t_exit());
    [Cell::Category(code as u8, name), t_enter, t_exit]
}

/// The shapes read as records, registered once each with their contact (docs/architecture.md, "A new
/// shape"): their contacts' cells, and [`for_shape`], which runs a generic step with the shape a flag names. Their
/// names, records, columns and help come from the library ([`ShapeRecord`], [`ShapeContact`]).
macro_rules! registered_shapes {
    ($($shape:ty: $contact:ty),+) => {
        $(impl ResultCells for $contact {
            const COLUMNS: &'static [Column] = &[
                column(
                    <$contact as ShapeContact>::CATEGORY,
                    ColumnType::Category,
                ),
                column("t_enter", ColumnType::F32),
                column("t_exit", ColumnType::F32),
            ];
            const MISS: Self = <$shape as Shape>::MISS;
            fn hit(&self) -> bool {
                ShapeContact::hit(self)
            }
            fn cells(&self) -> Cells {
                Cells::new(category_and_times(self))
            }
        })+

        /// The registered shapes' flags, in order (`walls`, `circles`).
        pub const SHAPE_FLAGS: &[&str] = &[$(<$shape as ShapeRecord>::PLURAL),+];

        /// Runs `step` with the registered shape whose flag is `flag`; none when no shape has it.
        pub fn for_shape<F: ForShape>(flag: &str, step: F) -> Option<F::Output> {
            $(if flag == <$shape as ShapeRecord>::PLURAL {
                return Some(step.with::<$shape>());
            })+
            None
        }
    };
}

registered_shapes!(Segment: SegmentContact, Circle: CircleContact);

/// A step generic over a registered shape, chosen at run time by its flag ([`for_shape`]).
pub trait ForShape {
    type Output;
    fn with<S: ShapeRecord + SceneShape>(self) -> Self::Output
    where
        S::Contact: ResultCells;
}

impl ResultCells for PolygonContact {
    const COLUMNS: &'static [Column] = &[
        column("kind", ColumnType::Category),
        column("t_enter", ColumnType::F32),
        column("t_exit", ColumnType::F32),
        column("entry_edge", ColumnType::Index),
        column("exit_edge", ColumnType::Index),
    ];
    const MISS: Self = PolygonContact::MISS;
    fn hit(&self) -> bool {
        PolygonContact::hit(self)
    }
    fn cells(&self) -> Cells {
        // Edges absent where there is none.
        let edge = |e: u32| Cell::Index((e != rectcast::NO_EDGE).then_some(e as u64));
        let [kind, t_enter, t_exit] = category_and_times(self);
        Cells::new([
            kind,
            t_enter,
            t_exit,
            edge(self.entry_edge),
            edge(self.exit_edge),
        ])
    }
}

/// One hitting pair as a row reads it: segment, target and result.
pub trait HitRow<R>: Send {
    fn row(&self) -> (u32, u32, &R);
}

impl HitRow<PairResult> for Hit {
    fn row(&self) -> (u32, u32, &PairResult) {
        (self.segment, self.rect, &self.result)
    }
}

impl<C: Send> HitRow<C> for ShapeHit<C> {
    fn row(&self) -> (u32, u32, &C) {
        (self.segment, self.shape, &self.contact)
    }
}

/// A segment's first hit as a row reads it: the target and result, or none.
pub trait FirstRow<R>: Send + Sync {
    fn first(&self) -> Option<(u32, &R)>;
}

impl FirstRow<PairResult> for FirstHit {
    fn first(&self) -> Option<(u32, &PairResult)> {
        self.rect().map(|rect| (rect, &self.result))
    }
}

impl<C: Send + Sync> FirstRow<C> for Option<ShapeHit<C>> {
    fn first(&self) -> Option<(u32, &C)> {
        self.as_ref().map(|hit| (hit.shape, &hit.contact))
    }
}

/// What the queries run against, held in memory.
pub trait Target: Sync {
    /// The id column's name: what one of them is called.
    const NAME: &'static str;
    type Result: Copy + Send + Sync + 'static;
    type Hit: HitRow<Self::Result>;
    type First: FirstRow<Self::Result>;
    /// What a job builds once before its chunks run (the rects' grid), on another thread while
    /// the first chunk is read.
    type Prepared: Send + Sync;

    /// The columns before the id column: none, or in a job over several kinds the target's
    /// kind.
    fn lead_columns() -> &'static [Column] {
        &[]
    }
    /// The columns after the ids: the result's, then what the targets themselves say (a
    /// polygon's rings).
    fn result_columns() -> &'static [Column];
    /// The lead cells of target `target` (an index into these targets), or of a first-hit miss.
    fn lead(&self, _target: Option<usize>) -> Cells {
        Cells::NONE
    }
    /// The cells of `result` with target `target`, or of a first-hit miss (`None`).
    fn cells(&self, target: usize, result: Option<&Self::Result>) -> Cells;
    fn hit(result: &Self::Result) -> bool;
    /// The index into these targets of a hit's `index` (within its kind, in a job over
    /// several).
    fn flat(&self, index: u32, _result: &Self::Result) -> usize {
        index as usize
    }

    fn len(&self) -> usize;
    /// Pairs a chunk of `segments` makes with them, for sizing dense chunks (a polygon's pairs
    /// count per edge).
    fn pairs_per_segment(&self) -> usize {
        self.len()
    }
    /// What the job's chunks share, given the query and the broad phase.
    fn prepare(&self, dense: bool, broad_phase: BroadPhase) -> Result<Self::Prepared, String>;
    fn pairs(
        &self,
        engine: &mut Engine,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<Self::Result>>;
    fn hits(
        &self,
        engine: &mut Engine,
        prepared: &Self::Prepared,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<Self::Hit>>;
    /// Each segment's first hit, into `out` (its buffer kept between chunks where the engine
    /// fills one).
    fn first_hits(
        &self,
        engine: &mut Engine,
        prepared: &Self::Prepared,
        segments: &[Segment],
        out: &mut Vec<Self::First>,
    ) -> rectcast::Result<()>;
    /// Hits per target.
    fn counts(
        &self,
        engine: &mut Engine,
        prepared: &Self::Prepared,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<u64>>;
}

/// A result's cells, or a miss's, then `more`.
pub fn result_cells<R: ResultCells>(result: Option<&R>, more: Cells) -> Cells {
    result
        .copied()
        .unwrap_or(R::MISS)
        .cells()
        .then(more.as_slice())
}

/// The [`Target`] items of one kind whose result is `$result` (its [`ResultCells`]), with
/// nothing after the result's cells.
macro_rules! one_kind {
    ($result:ty) => {
        fn result_columns() -> &'static [Column] {
            <$result as ResultCells>::COLUMNS
        }
        fn cells(&self, _: usize, result: Option<&$result>) -> Cells {
            result_cells(result, Cells::NONE)
        }
        fn hit(result: &$result) -> bool {
            ResultCells::hit(result)
        }
    };
}

/// Rects: the broad phase's grid built once per job.
pub struct Rects(pub Vec<Rect>);

impl Rects {
    fn batch<'a>(
        &'a self,
        set: &'a Option<RectSet>,
        segments: &'a [Segment],
    ) -> rectcast::Batch<'a> {
        match set {
            Some(set) => rectcast::Batch::over(segments, set),
            None => rectcast::Batch::new(segments, &self.0),
        }
    }
}

impl Target for Rects {
    const NAME: &'static str = "rect";
    type Result = PairResult;
    type Hit = Hit;
    type First = FirstHit;
    type Prepared = Option<RectSet>;
    one_kind!(PairResult);

    fn len(&self) -> usize {
        self.0.len()
    }
    /// The grid, when the query finds candidates and the broad phase would use one: built once
    /// for the whole job, not once per chunk (a GPU lists its cells once too, and keeps them).
    /// Segments stream in, so `Auto` goes by the rects alone.
    fn prepare(&self, dense: bool, broad_phase: BroadPhase) -> Result<Option<RectSet>, String> {
        if dense || !broad_phase.uses_grid(usize::MAX, self.0.len(), false) {
            return Ok(None);
        }
        RectSet::new(&self.0).map(Some).map_err(|e| e.to_string())
    }
    fn pairs(
        &self,
        engine: &mut Engine,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<PairResult>> {
        engine.pairs(segments, &self.0)
    }
    fn hits(
        &self,
        engine: &mut Engine,
        set: &Option<RectSet>,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<Hit>> {
        engine.hits(&self.batch(set, segments))
    }
    fn first_hits(
        &self,
        engine: &mut Engine,
        set: &Option<RectSet>,
        segments: &[Segment],
        out: &mut Vec<FirstHit>,
    ) -> rectcast::Result<()> {
        // One buffer for every chunk: no fresh pages per chunk.
        out.resize(segments.len(), FirstHit::NONE);
        engine.first_hit_into(&self.batch(set, segments), out)
    }
    fn counts(
        &self,
        engine: &mut Engine,
        set: &Option<RectSet>,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<u64>> {
        Ok(engine.counts(&self.batch(set, segments))?.per_target)
    }
}

/// The queries of a target the engine answers in one call each, over `self.0`: nothing built
/// per job, each chunk's first hits a fresh vector.
macro_rules! engine_queries {
    ($pairs:ident, $hits:ident, $first_hits:ident, $counts:ident) => {
        type Hit = ShapeHit<Self::Result>;
        type First = Option<ShapeHit<Self::Result>>;
        type Prepared = ();

        fn len(&self) -> usize {
            self.0.len()
        }
        fn prepare(&self, _: bool, _: BroadPhase) -> Result<(), String> {
            Ok(())
        }
        fn pairs(&self, engine: &mut Engine, s: &[Segment]) -> rectcast::Result<Vec<Self::Result>> {
            engine.$pairs(s, &self.0)
        }
        fn hits(
            &self,
            engine: &mut Engine,
            _: &(),
            s: &[Segment],
        ) -> rectcast::Result<Vec<Self::Hit>> {
            engine.$hits(s, &self.0)
        }
        fn first_hits(
            &self,
            engine: &mut Engine,
            _: &(),
            s: &[Segment],
            out: &mut Vec<Self::First>,
        ) -> rectcast::Result<()> {
            *out = engine.$first_hits(s, &self.0)?;
            Ok(())
        }
        fn counts(&self, engine: &mut Engine, _: &(), s: &[Segment]) -> rectcast::Result<Vec<u64>> {
            Ok(engine.$counts(s, &self.0)?.per_target)
        }
    };
}

/// Shapes through the library's seam ([`Shape`]) read as records: walls and circles, named as
/// the library names them ([`ShapeRecord::NAME`]).
pub struct Shapes<S: Shape>(pub Vec<S>);

impl<S: ShapeRecord + SceneShape> Target for Shapes<S>
where
    S::Contact: ResultCells,
{
    const NAME: &'static str = S::NAME;
    type Result = S::Contact;
    one_kind!(S::Contact);
    engine_queries!(shape_pairs, shape_hits, shape_first_hits, shape_counts);
}

/// Polygons: gathered from their edges by the engine.
pub struct PolygonTargets(pub Polygons);

impl Target for PolygonTargets {
    const NAME: &'static str = "polygon";
    type Result = PolygonContact;
    engine_queries!(
        polygon_pairs,
        polygon_hits,
        polygon_first_hits,
        polygon_counts
    );

    fn pairs_per_segment(&self) -> usize {
        self.0.len().max(self.0.edge_count())
    }

    fn result_columns() -> &'static [Column] {
        static COLUMNS: std::sync::OnceLock<Vec<Column>> = std::sync::OnceLock::new();
        COLUMNS.get_or_init(|| [PolygonContact::COLUMNS, RINGS].concat())
    }
    fn cells(&self, target: usize, result: Option<&PolygonContact>) -> Cells {
        result_cells(result, rings(&self.0, target, result))
    }
    fn hit(result: &PolygonContact) -> bool {
        result.hit()
    }
}

/// The rings of a polygon's entry and exit edges: 0 a polygon's first ring (its shell), then
/// its holes and other parts' rings in their order.
pub const RINGS: &[Column] = &[
    column("entry_ring", ColumnType::Index),
    column("exit_ring", ColumnType::Index),
];

/// The [`RINGS`] cells of `result` with polygon `polygon` of `polygons`: absent where there is
/// no edge.
pub fn rings(polygons: &Polygons, polygon: usize, result: Option<&PolygonContact>) -> Cells {
    let ring = |edge: u32| {
        let ring = (edge != rectcast::NO_EDGE)
            .then(|| polygons.edge_ring(polygon, edge as usize).0 as u64);
        Cell::Index(ring)
    };
    let result = result.copied().unwrap_or(PolygonContact::MISS);
    Cells::new([ring(result.entry_edge), ring(result.exit_edge)])
}
