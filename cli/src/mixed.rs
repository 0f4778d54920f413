//! A job over several kinds of target at once (`--rects`, `--walls`, `--circles`,
//! `--polygons` in any mix): one [`rectcast::Targets`], built once for the job, asked through
//! the library's scene queries, so a first hit is the library's across every kind (the exact
//! order of t, then kind, then index). Rows name `target_kind` and `target` (the record index
//! within its kind's file), then one column for each name any kind's result has, in
//! [`TargetKind`] order: a row fills its kind's columns and leaves the others absent, so every
//! mixed table has the same columns whichever kinds a job gives.

use std::sync::OnceLock;

use rectcast::{
    BroadPhase, Circle, CircleContact, Engine, PairResult, PolygonContact, Segment, SegmentContact,
    TargetBatch, TargetContact, TargetHit, TargetKind, Targets,
};

use crate::table::{Cell, Column, ColumnType};
use crate::targets::{
    Cells, FirstRow, HitRow, MAX_CELLS, PolygonTargets, Rects, ResultCells, Shapes, Target, rings,
};

/// Each kind's name, as a single-kind job names its id column.
fn name(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Rect => Rects::NAME,
        TargetKind::Circle => Shapes::<Circle>::NAME,
        TargetKind::Wall => Shapes::<Segment>::NAME,
        TargetKind::Polygon => PolygonTargets::NAME,
    }
}

/// Each kind's columns after the ids, as a single-kind job writes them.
fn kind_columns(kind: TargetKind) -> &'static [Column] {
    match kind {
        TargetKind::Rect => Rects::result_columns(),
        TargetKind::Circle => Shapes::<Circle>::result_columns(),
        TargetKind::Wall => Shapes::<Segment>::result_columns(),
        TargetKind::Polygon => PolygonTargets::result_columns(),
    }
}

/// The union of every kind's columns, in kind order (a name once, at its first place), and
/// where each kind's columns are in it.
struct Union {
    columns: Vec<Column>,
    at: [Vec<usize>; 4],
}

fn union() -> &'static Union {
    static UNION: OnceLock<Union> = OnceLock::new();
    UNION.get_or_init(|| {
        let mut columns: Vec<Column> = Vec::new();
        let at = TargetKind::ALL.map(|kind| {
            let own = kind_columns(kind);
            own.iter()
                .map(|c| match columns.iter().position(|u| u.name == c.name) {
                    Some(i) => {
                        assert_eq!(columns[i].ty, c.ty, "column {} of two types", c.name);
                        i
                    }
                    None => {
                        columns.push(*c);
                        columns.len() - 1
                    }
                })
                .collect()
        });
        assert!(columns.len() <= MAX_CELLS, "{} cells a row", columns.len());
        Union { columns, at }
    })
}

/// An absent cell of a column of type `ty`.
fn absent(ty: ColumnType) -> Cell<'static> {
    match ty {
        ColumnType::Index => Cell::Index(None),
        ColumnType::F32 => Cell::F32(None),
        ColumnType::Category => Cell::Category(0, ""),
        ColumnType::Sides => Cell::Sides(rectcast::Sides::NONE),
        ColumnType::Text => Cell::Text(None),
        // A result's columns are of the types above.
        ColumnType::U64 | ColumnType::Bool => unreachable!("a result column of type {ty:?}"),
    }
}

const KIND_COLUMN: [Column; 1] = [Column::new("target_kind", ColumnType::Category)];

/// Targets of several kinds, and where each kind's ids start among the job's.
pub struct Mixed {
    targets: Targets,
    starts: [usize; 5],
}

impl Mixed {
    /// Over `targets`, whose ids the job gives kind after kind in [`TargetKind`] order.
    pub fn new(targets: Targets) -> Self {
        let mut starts = [0; 5];
        for (k, kind) in TargetKind::ALL.iter().enumerate() {
            starts[k + 1] = starts[k] + targets.len(*kind);
        }
        Self { targets, starts }
    }

    /// The kind of target `target`, and its index within its kind.
    fn kind_of(&self, target: usize) -> (TargetKind, usize) {
        let k = self.starts[1..].partition_point(|&end| end <= target);
        (TargetKind::ALL[k], target - self.starts[k])
    }

    fn batch<'a>(&'a self, segments: &'a [Segment]) -> TargetBatch<'a> {
        TargetBatch::over(segments, &self.targets)
    }
}

impl HitRow<TargetContact> for TargetHit {
    fn row(&self) -> (u32, u32, &TargetContact) {
        (self.segment, self.target, &self.contact)
    }
}

impl FirstRow<TargetContact> for Option<TargetHit> {
    fn first(&self) -> Option<(u32, &TargetContact)> {
        self.as_ref().map(|hit| (hit.target, &hit.contact))
    }
}

/// Segment `s`'s dense row of one kind's results, `per` a segment, as contacts.
fn row_of<R: Copy>(
    results: &[R],
    s: usize,
    per: usize,
    contact: fn(R) -> TargetContact,
) -> impl Iterator<Item = TargetContact> + '_ {
    results[s * per..(s + 1) * per]
        .iter()
        .map(move |&r| contact(r))
}

impl Target for Mixed {
    const NAME: &'static str = "target";
    type Result = TargetContact;
    type Hit = TargetHit;
    type First = Option<TargetHit>;
    type Prepared = ();

    fn lead_columns() -> &'static [Column] {
        &KIND_COLUMN
    }
    fn result_columns() -> &'static [Column] {
        &union().columns
    }
    /// The kind's code is 1 + its [`TargetKind`] order (0: a first-hit miss, absent).
    fn lead(&self, target: Option<usize>) -> Cells {
        let cell = target.map_or(Cell::Category(0, ""), |t| {
            let kind = self.kind_of(t).0;
            Cell::Category(kind as u8 + 1, name(kind))
        });
        Cells::new([cell])
    }
    fn cells(&self, target: usize, result: Option<&TargetContact>) -> Cells {
        let union = union();
        let mut cells = [Cell::Bool(false); MAX_CELLS];
        for (cell, c) in cells.iter_mut().zip(&union.columns) {
            *cell = absent(c.ty);
        }
        if let Some(contact) = result {
            let within = self.kind_of(target).1;
            let own = match contact {
                TargetContact::Rect(r) => r.cells(),
                TargetContact::Circle(c) => c.cells(),
                TargetContact::Wall(w) => w.cells(),
                TargetContact::Polygon(p) => {
                    let polygons = self.targets.polygons();
                    p.cells().then(rings(polygons, within, Some(p)).as_slice())
                }
            };
            for (cell, &i) in own
                .as_slice()
                .iter()
                .zip(&union.at[contact.kind() as usize])
            {
                cells[i] = *cell;
            }
        }
        Cells::NONE.then(&cells[..union.columns.len()])
    }
    fn hit(result: &TargetContact) -> bool {
        match result {
            TargetContact::Rect(r) => r.hit(),
            TargetContact::Circle(c) => ResultCells::hit(c),
            TargetContact::Wall(w) => ResultCells::hit(w),
            TargetContact::Polygon(p) => p.hit(),
        }
    }
    fn flat(&self, index: u32, result: &TargetContact) -> usize {
        self.starts[result.kind() as usize] + index as usize
    }

    fn len(&self) -> usize {
        self.starts[4]
    }
    fn pairs_per_segment(&self) -> usize {
        let polygons = self.targets.polygons();
        self.starts[3] + polygons.len().max(polygons.edge_count())
    }
    fn prepare(&self, _: bool, _: BroadPhase) -> Result<(), String> {
        Ok(())
    }
    /// Each kind's dense pairs, then every segment's rows of each kind one after another.
    fn pairs(
        &self,
        engine: &mut Engine,
        segments: &[Segment],
    ) -> rectcast::Result<Vec<TargetContact>> {
        let t = &self.targets;
        let (rects, circles, walls) = (t.rects().rects(), t.circles(), t.walls());
        let rects: Vec<PairResult> = if rects.is_empty() {
            Vec::new()
        } else {
            engine.pairs(segments, rects)?
        };
        let circles: Vec<CircleContact> = if circles.is_empty() {
            Vec::new()
        } else {
            engine.shape_pairs(segments, circles)?
        };
        let walls: Vec<SegmentContact> = if walls.is_empty() {
            Vec::new()
        } else {
            engine.shape_pairs(segments, walls)?
        };
        let polygons: Vec<PolygonContact> = if t.polygons().is_empty() {
            Vec::new()
        } else {
            engine.polygon_pairs(segments, t.polygons())?
        };
        let len = |kind| t.len(kind);
        let (m_rects, m_circles) = (len(TargetKind::Rect), len(TargetKind::Circle));
        let (m_walls, m_polygons) = (len(TargetKind::Wall), len(TargetKind::Polygon));
        let mut out = Vec::with_capacity(segments.len() * self.len());
        for s in 0..segments.len() {
            out.extend(row_of(&rects, s, m_rects, TargetContact::Rect));
            out.extend(row_of(&circles, s, m_circles, TargetContact::Circle));
            out.extend(row_of(&walls, s, m_walls, TargetContact::Wall));
            out.extend(row_of(&polygons, s, m_polygons, TargetContact::Polygon));
        }
        Ok(out)
    }
    fn hits(
        &self,
        engine: &mut Engine,
        _: &(),
        segments: &[Segment],
    ) -> rectcast::Result<Vec<TargetHit>> {
        engine.target_hits(&self.batch(segments))
    }
    fn first_hits(
        &self,
        engine: &mut Engine,
        _: &(),
        segments: &[Segment],
        out: &mut Vec<Option<TargetHit>>,
    ) -> rectcast::Result<()> {
        out.clear();
        out.resize(segments.len(), None);
        engine.target_first_hits_into(&self.batch(segments), out)
    }
    fn counts(
        &self,
        engine: &mut Engine,
        _: &(),
        segments: &[Segment],
    ) -> rectcast::Result<Vec<u64>> {
        let counts = engine.target_counts(&self.batch(segments))?;
        Ok(counts.per_target.concat())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_of_every_kinds_columns_names_each_once_with_one_type() {
        let union = union();
        let names: Vec<_> = union.columns.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "kind",
                "t_enter",
                "t_exit",
                "entry",
                "exit",
                "contact",
                "entry_edge",
                "exit_edge",
                "entry_ring",
                "exit_ring"
            ]
        );
        for kind in TargetKind::ALL {
            let own = kind_columns(kind);
            let at = &union.at[kind as usize];
            assert_eq!(own.len(), at.len());
            for (c, &i) in own.iter().zip(at) {
                assert_eq!(union.columns[i].name, c.name, "{kind:?}");
            }
        }
    }
}
