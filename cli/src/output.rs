//! What the commands write: the tables (their columns, and the row of each result), and the
//! sink they go to: CSV on stdout (straight, or held in a temporary file until the job has
//! succeeded), or `--out FILE` in the format its extension names (`formats/`).
//!
//! `--out` is written to a temporary file beside it and renamed over it only when the whole
//! job succeeded: on any error no output file appears, and an earlier file of that name is
//! left untouched.
//!
//! Indices (`segment`, `rect`) are record indices in the input files, counting from 0 and
//! counting invalid records skipped with `--skip-invalid`, so rows join back to the inputs.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rectcast::{
    CircleContact, Clipped, FirstHit, PairResult, PolygonContact, SegmentContact, ShapeHit,
};

use crate::formats::{Format, Writer};
use crate::records;
use crate::table::{Cell, Column, ColumnType};

/// The tables the commands write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// `pairs` and `hits`.
    Pairs,
    /// `pairs` and `hits` with `--walls`: segment × segment.
    Walls,
    /// `first-hit --walls`.
    WallFirstHit,
    /// `count --walls`.
    WallCount,
    /// `pairs` and `hits` with `--circles`: segment × circle.
    Circles,
    /// `first-hit --circles`.
    CircleFirstHit,
    /// `count --circles`.
    CircleCount,
    /// `pairs` and `hits` with `--polygons`: segment × polygon.
    Polygons,
    /// `first-hit --polygons`.
    PolygonFirstHit,
    /// `count --polygons`.
    PolygonCount,
    /// `overlaps`: polygon × polygon.
    Overlaps,
    FirstHit,
    Count,
    Clip,
    /// Input records, as `gen` writes them.
    Segments,
    Rects,
}

const fn column(name: &'static str, ty: ColumnType) -> Column {
    Column::new(name, ty)
}

const PAIRS: [Column; 8] = [
    column("segment", ColumnType::U64),
    column("rect", ColumnType::U64),
    column("hit", ColumnType::Bool),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
    column("entry", ColumnType::Sides),
    column("exit", ColumnType::Sides),
];

const WALLS: [Column; 6] = [
    column("segment", ColumnType::U64),
    column("wall", ColumnType::U64),
    column("hit", ColumnType::Bool),
    column("contact", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
];

const CIRCLES: [Column; 6] = [
    column("segment", ColumnType::U64),
    column("circle", ColumnType::U64),
    column("hit", ColumnType::Bool),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
];

const POLYGONS: [Column; 8] = [
    column("segment", ColumnType::U64),
    column("polygon", ColumnType::U64),
    column("hit", ColumnType::Bool),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
    column("entry_edge", ColumnType::Index),
    column("exit_edge", ColumnType::Index),
];

const POLYGON_FIRST_HIT: [Column; 7] = [
    column("segment", ColumnType::U64),
    column("polygon", ColumnType::Index),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
    column("entry_edge", ColumnType::Index),
    column("exit_edge", ColumnType::Index),
];

const POLYGON_COUNT: [Column; 2] = [
    column("polygon", ColumnType::U64),
    column("hits", ColumnType::U64),
];

const OVERLAPS: [Column; 2] = [
    column("polygon", ColumnType::U64),
    column("other", ColumnType::U64),
];

const WALL_FIRST_HIT: [Column; 5] = [
    column("segment", ColumnType::U64),
    column("wall", ColumnType::Index),
    column("contact", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
];

const CIRCLE_FIRST_HIT: [Column; 5] = [
    column("segment", ColumnType::U64),
    column("circle", ColumnType::Index),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
];

const WALL_COUNT: [Column; 2] = [
    column("wall", ColumnType::U64),
    column("hits", ColumnType::U64),
];

const CIRCLE_COUNT: [Column; 2] = [
    column("circle", ColumnType::U64),
    column("hits", ColumnType::U64),
];

const FIRST_HIT: [Column; 7] = [
    column("segment", ColumnType::U64),
    column("rect", ColumnType::Index),
    column("kind", ColumnType::Category),
    column("t_enter", ColumnType::F32),
    column("t_exit", ColumnType::F32),
    column("entry", ColumnType::Sides),
    column("exit", ColumnType::Sides),
];

const COUNT: [Column; 2] = [
    column("rect", ColumnType::U64),
    column("hits", ColumnType::U64),
];

const CLIP: [Column; 6] = [
    column("segment", ColumnType::U64),
    column("kind", ColumnType::Category),
    column("x0", ColumnType::F32),
    column("y0", ColumnType::F32),
    column("x1", ColumnType::F32),
    column("y1", ColumnType::F32),
];

impl Table {
    pub fn columns(self) -> &'static [Column] {
        match self {
            Table::Pairs => &PAIRS,
            Table::Walls => &WALLS,
            Table::WallFirstHit => &WALL_FIRST_HIT,
            Table::WallCount => &WALL_COUNT,
            Table::Circles => &CIRCLES,
            Table::CircleFirstHit => &CIRCLE_FIRST_HIT,
            Table::CircleCount => &CIRCLE_COUNT,
            Table::Polygons => &POLYGONS,
            Table::PolygonFirstHit => &POLYGON_FIRST_HIT,
            Table::PolygonCount => &POLYGON_COUNT,
            Table::Overlaps => &OVERLAPS,
            Table::FirstHit => &FIRST_HIT,
            Table::Count => &COUNT,
            Table::Clip => &CLIP,
            Table::Segments => records::SEGMENTS.columns,
            Table::Rects => records::RECTS.columns,
        }
    }
}

/// The cells of a shape's contact after its indices: its category (contact or kind), and t
/// (absent on a miss).
pub trait ShapeCells: rectcast::ShapeContact {
    /// The category cell of a miss.
    const MISS_CATEGORY: Cell;
    fn cells(&self) -> [Cell; 3];
}

impl ShapeCells for SegmentContact {
    const MISS_CATEGORY: Cell = Cell::Category(0, "miss");
    fn cells(&self) -> [Cell; 3] {
        let t = |t| self.hit().then_some(t);
        let contact = self.contact();
        [
            Cell::Category(contact.code() as u8, contact.name()),
            Cell::F32(t(self.t_enter)),
            Cell::F32(t(self.t_exit)),
        ]
    }
}

impl ShapeCells for CircleContact {
    const MISS_CATEGORY: Cell = Cell::Category(0, "miss");
    fn cells(&self) -> [Cell; 3] {
        let t = |t| self.hit().then_some(t);
        let kind = self.kind();
        [
            Cell::Category(kind.code() as u8, kind.name()),
            Cell::F32(t(self.t_enter)),
            Cell::F32(t(self.t_exit)),
        ]
    }
}

/// A polygon contact's cells after its indices: kind, t (absent on a miss), and the entry and
/// exit edges (absent where there is none).
fn polygon_cells(c: &PolygonContact) -> [Cell; 5] {
    let t = |t| c.hit().then_some(t);
    let edge = |e: u32| (e != rectcast::NO_EDGE).then_some(e as u64);
    [
        kind_cell(c.kind()),
        Cell::F32(t(c.t_enter)),
        Cell::F32(t(c.t_exit)),
        Cell::Index(edge(c.entry_edge)),
        Cell::Index(edge(c.exit_edge)),
    ]
}

/// A kind's cell: its code and name.
fn kind_cell(kind: rectcast::Kind) -> Cell {
    Cell::Category(kind as u8, kind.name())
}

/// A pair's cells after its indices: kind, t (absent on a miss) and sides.
fn result_cells(r: &PairResult) -> [Cell; 5] {
    let t = |t| r.hit().then_some(t);
    [
        kind_cell(r.kind()),
        Cell::F32(t(r.t_enter)),
        Cell::F32(t(r.t_exit)),
        Cell::Sides(r.entry_sides()),
        Cell::Sides(r.exit_sides()),
    ]
}

/// A temporary file in `path`'s folder (so the final rename stays on one file system), created
/// with the permissions a plain new file gets (0666 less the umask), not 0600.
pub fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        // Said so, rather than as the hidden temporary path that could not be made in it.
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no folder {} to write it in", dir.display()),
        ));
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(".rectcast-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let temp = builder.tempfile_in(dir)?;
    crate::signals::remove_on_signal(temp.path());
    Ok(temp)
}

/// Moves a temporary file from [`temp_beside`] into place at `path`.
pub fn persist(temp: tempfile::TempPath, path: &Path) -> Result<(), String> {
    let temporary = temp.to_path_buf();
    let moved = temp.persist(path).map_err(|e| io_error(path, e.error));
    crate::signals::forget(&temporary);
    moved
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// Where a table goes.
#[derive(Clone, Copy, Debug)]
pub enum To<'a> {
    /// A file, whole or not at all.
    File(&'a Path),
    /// Stdout (CSV), row by row.
    Stdout,
    /// Stdout (CSV), all at the end: rows wait in an unnamed temporary file in the system's
    /// temporary folder.
    StdoutAtEnd,
}

/// What becomes of the table at the end.
enum Target {
    Stdout,
    /// The rows, to copy to stdout.
    Held(File),
    /// The temporary file to move into place.
    File(PathBuf, tempfile::TempPath),
    /// The table, uncompressed in an unnamed temporary file, to gzip into the temporary file
    /// beside the path (opened) and move into place.
    Gzip {
        table: File,
        path: PathBuf,
        out: File,
        temp: tempfile::TempPath,
    },
}

/// Where a command's table goes: its writer, and what to do with it at the end.
pub struct Sink {
    table: Table,
    writer: Writer,
    target: Target,
    rows: u64,
}

impl Sink {
    /// Whether `out` can hold `table`: checked before any work.
    pub fn check(out: Option<&Path>, table: Table) -> Result<(), String> {
        match out {
            Some(path) => Format::of_output(path)
                .and_then(|(format, _)| format.holds(table.columns()))
                .map_err(|e| io_error(path, e)),
            None => Ok(()),
        }
    }

    /// Opens the table's destination and writes the table's header.
    pub fn create(to: To, table: Table) -> Result<Self, String> {
        let columns = table.columns();
        let path = match to {
            To::File(path) => path,
            To::Stdout => {
                let writer = Writer::stdout(columns).map_err(stdout_error)?;
                return Ok(Self::new(table, writer, Target::Stdout));
            }
            To::StdoutAtEnd => {
                let held = |e| format!("a temporary file for the output: {e}");
                let file = tempfile::tempfile().map_err(held)?;
                let copy = file.try_clone().map_err(held)?;
                let writer = Writer::csv(file, columns).map_err(held)?;
                return Ok(Self::new(table, writer, Target::Held(copy)));
            }
        };
        let (format, gzip) = Format::of_output(path).map_err(|e| io_error(path, e))?;
        format.holds(columns).map_err(|e| io_error(path, e))?;
        let (file, temp) = temp_beside(path)
            .map_err(|e| io_error(path, e))?
            .into_parts();
        if gzip {
            // The table is written whole first (NPY rewrites its header at the end), then
            // compressed into place.
            let held = |e| io_error(path, format!("a temporary file for the table: {e}"));
            let table_file = tempfile::tempfile().map_err(held)?;
            let copy = table_file.try_clone().map_err(held)?;
            let writer = format
                .writer(table_file, columns)
                .map_err(|e| io_error(path, e))?;
            let target = Target::Gzip {
                table: copy,
                path: path.to_owned(),
                out: file,
                temp,
            };
            return Ok(Self::new(table, writer, target));
        }
        let writer = format
            .writer(file, columns)
            .map_err(|e| io_error(path, e))?;
        Ok(Self::new(
            table,
            writer,
            Target::File(path.to_owned(), temp),
        ))
    }

    fn new(table: Table, writer: Writer, target: Target) -> Self {
        Self {
            table,
            writer,
            target,
            rows: 0,
        }
    }

    fn error(&self, e: impl std::fmt::Display) -> String {
        match &self.target {
            Target::Stdout => stdout_error(e),
            Target::Held(_) => format!("a temporary file for the output: {e}"),
            Target::File(path, _) | Target::Gzip { path, .. } => io_error(path, e),
        }
    }

    /// One batch of rows, each row's cells of the table's columns.
    fn write<const N: usize>(
        &mut self,
        rows: impl IntoIterator<Item = [Cell; N]>,
    ) -> Result<(), String> {
        let columns = self.table.columns();
        let table = self.table;
        let rows = rows.into_iter().inspect(|row| {
            debug_assert!(
                N == columns.len() && row.iter().zip(columns).all(|(cell, c)| cell.ty() == c.ty),
                "a row that does not fit the {table:?} table",
            )
        });
        match self.writer.batch(rows) {
            Ok(written) => {
                self.rows += written;
                Ok(())
            }
            Err(e) => Err(self.error(e)),
        }
    }

    /// Pair rows (`pairs`, `hits`): (segment, rect, result).
    pub fn pairs<'a>(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, &'a PairResult)>,
    ) -> Result<(), String> {
        self.write(rows.into_iter().map(|(segment, rect, r)| {
            let [kind, t_enter, t_exit, entry, exit] = result_cells(r);
            [
                Cell::U64(segment),
                Cell::U64(rect),
                Cell::Bool(r.hit()),
                kind,
                t_enter,
                t_exit,
                entry,
                exit,
            ]
        }))
    }

    /// Rows of a shape query's pairs (`pairs` or `hits` with `--walls` or `--circles`): t
    /// absent on a miss.
    pub fn shape_pairs<'a, C: ShapeCells + 'a>(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, &'a C)>,
    ) -> Result<(), String> {
        self.write(rows.into_iter().map(|(segment, shape, c)| {
            let [category, t_enter, t_exit] = c.cells();
            [
                Cell::U64(segment),
                Cell::U64(shape),
                Cell::Bool(c.hit()),
                category,
                t_enter,
                t_exit,
            ]
        }))
    }

    /// First-hit rows of a shape query: one per segment, the shape absent on a miss;
    /// `shape_ids` maps shape positions to record indices.
    pub fn shape_first_hits<C: ShapeCells>(
        &mut self,
        ids: &[u64],
        shape_ids: &[u64],
        first: &[Option<ShapeHit<C>>],
    ) -> Result<(), String> {
        self.write(ids.iter().zip(first).map(|(&segment, f)| {
            let [category, t_enter, t_exit] = match f {
                Some(hit) => hit.contact.cells(),
                None => [C::MISS_CATEGORY, Cell::F32(None), Cell::F32(None)],
            };
            [
                Cell::U64(segment),
                Cell::Index(f.map(|hit| shape_ids[hit.shape as usize])),
                category,
                t_enter,
                t_exit,
            ]
        }))
    }

    /// Rows of segment × polygon pairs (`pairs` or `hits` with `--polygons`).
    pub fn polygon_pairs<'a>(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, &'a PolygonContact)>,
    ) -> Result<(), String> {
        self.write(rows.into_iter().map(|(segment, polygon, c)| {
            let [kind, t_enter, t_exit, entry, exit] = polygon_cells(c);
            [
                Cell::U64(segment),
                Cell::U64(polygon),
                Cell::Bool(c.hit()),
                kind,
                t_enter,
                t_exit,
                entry,
                exit,
            ]
        }))
    }

    /// First-hit rows over polygons: one per segment, the polygon absent on a miss.
    pub fn polygon_first_hits(
        &mut self,
        ids: &[u64],
        polygon_ids: &[u64],
        first: &[Option<ShapeHit<PolygonContact>>],
    ) -> Result<(), String> {
        self.write(ids.iter().zip(first).map(|(&segment, f)| {
            let contact = f.map_or(PolygonContact::MISS, |hit| hit.contact);
            let [kind, t_enter, t_exit, entry, exit] = polygon_cells(&contact);
            [
                Cell::U64(segment),
                Cell::Index(f.map(|hit| polygon_ids[hit.shape as usize])),
                kind,
                t_enter,
                t_exit,
                entry,
                exit,
            ]
        }))
    }

    /// Overlap rows: one per overlapping pair of polygons.
    pub fn overlaps(&mut self, pairs: impl IntoIterator<Item = (u64, u64)>) -> Result<(), String> {
        self.write(pairs.into_iter().map(|(a, b)| [Cell::U64(a), Cell::U64(b)]))
    }

    pub fn first_hits(
        &mut self,
        ids: &[u64],
        rect_ids: &[u64],
        first: &[FirstHit],
    ) -> Result<(), String> {
        self.write(ids.iter().zip(first).map(|(&segment, f)| {
            let [kind, t_enter, t_exit, entry, exit] = result_cells(&f.result);
            let rect = f.rect().map(|rect| rect_ids[rect as usize]);
            [
                Cell::U64(segment),
                Cell::Index(rect),
                kind,
                t_enter,
                t_exit,
                entry,
                exit,
            ]
        }))
    }

    /// Count rows: one per rect.
    pub fn counts(&mut self, rect_ids: &[u64], per_target: &[u64]) -> Result<(), String> {
        self.write(
            rect_ids
                .iter()
                .zip(per_target)
                .map(|(&rect, &hits)| [Cell::U64(rect), Cell::U64(hits)]),
        )
    }

    /// Clip rows: one per segment, the coordinates absent on a miss.
    pub fn clipped(&mut self, ids: &[u64], clipped: &[Clipped]) -> Result<(), String> {
        self.write(ids.iter().zip(clipped).map(|(&segment, c)| {
            let p = c.segment;
            [
                Cell::U64(segment),
                kind_cell(c.kind()),
                Cell::F32(p.map(|p| p.x0)),
                Cell::F32(p.map(|p| p.y0)),
                Cell::F32(p.map(|p| p.x1)),
                Cell::F32(p.map(|p| p.y1)),
            ]
        }))
    }

    /// Records (`gen`): four values each.
    pub fn records(&mut self, records: impl IntoIterator<Item = [f32; 4]>) -> Result<(), String> {
        self.write(records.into_iter().map(|v| v.map(|v| Cell::F32(Some(v)))))
    }

    /// Completes the table (NPY row count, Parquet footer) and moves the file into place, or
    /// copies the held rows to stdout.
    pub fn finish(self) -> Result<(), String> {
        let finished = self.writer.finish(self.rows);
        match self.target {
            Target::Stdout => finished.map_err(stdout_error),
            Target::Held(mut rows) => {
                finished
                    .and_then(|()| rows.seek(SeekFrom::Start(0)))
                    .map_err(|e| format!("a temporary file for the output: {e}"))?;
                std::io::copy(&mut rows, &mut std::io::stdout().lock())
                    .map(|_| ())
                    .map_err(stdout_error)
            }
            Target::File(path, temp) => {
                finished.map_err(|e| io_error(&path, e))?;
                persist(temp, &path)
            }
            Target::Gzip {
                mut table,
                path,
                out,
                temp,
            } => {
                let compressed = finished.and_then(|()| {
                    table.seek(SeekFrom::Start(0))?;
                    let buffered = std::io::BufWriter::with_capacity(crate::formats::BUFFER, out);
                    let mut gz =
                        flate2::write::GzEncoder::new(buffered, flate2::Compression::fast());
                    std::io::copy(&mut table, &mut gz)?;
                    gz.finish()?
                        .into_inner()
                        .map(drop)
                        .map_err(|e| e.into_error())
                });
                compressed.map_err(|e| io_error(&path, e))?;
                persist(temp, &path)
            }
        }
    }
}

fn stdout_error(e: impl std::fmt::Display) -> String {
    format!("writing stdout: {e}")
}
