//! What the commands write: the tables (their columns, and the row of each result), and the
//! sink they go to: CSV on stdout (straight, or held in a temporary file until the job has
//! succeeded), or `--out FILE` in the format its extension names (`formats/`).
//!
//! `--out` is written to a temporary file beside it and renamed over it only when the whole
//! job succeeded: on any error no output file appears, and an earlier file of that name is
//! left untouched. A symlink's target is what is replaced (the link stays). A named pipe or a
//! device is not replaced but written, as GNU tools write it, and a descriptor's name
//! (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`) is that descriptor, written
//! as it was opened (appending, if the shell opened it so): the table is made whole in an
//! unnamed temporary file first, then copied there. An `--out` that is one of the job's inputs
//! is refused.
//!
//! Indices (`segment`, `rect`) are record indices in the input files, counting from 0 and
//! counting invalid records skipped with `--skip-invalid`, so rows join back to the inputs.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use rectcast::Clipped;

use crate::formats::{Format, Writer};
use crate::kept::{self, KeptRows};
use crate::records;
use crate::table::Kept;
use crate::table::{Cell, Column, ColumnType, LineIndex, MAX_ROW};
use crate::targets::{self, Cells, kind_cell};

/// The tables the commands write.
#[derive(Clone, Copy, Debug)]
pub enum Table {
    /// `pairs` and `hits`: (segment, target, hit) and the target's result.
    Pairs(TargetColumns),
    /// `first-hit`: (segment, target, absent on a miss) and the result.
    FirstHit(TargetColumns),
    /// `count`: (target, hits).
    Count(TargetColumns),
    /// `overlaps`: polygon × polygon.
    Overlaps,
    /// `clip`: its columns, and after them any kept ones ([`Table::clip`]).
    Clip(&'static [Column]),
    /// Input records, as `gen` writes them.
    Segments,
    Rects,
}

/// A query target as its tables show it ([`targets::Target`]): the columns before its id
/// column (a mixed job's `target_kind`), its id column, and its result's; and whether the segments are polylines' (`polylines.rs`), whose rows then name
/// each segment's `line` and `line_segment` after it.
#[derive(Clone, Copy, Debug)]
pub struct TargetColumns {
    lead: &'static [Column],
    name: &'static str,
    result: &'static [Column],
    lines: bool,
    /// Columns kept from the inputs (`--keep`), last.
    kept: &'static [Column],
}

impl TargetColumns {
    pub fn of<T: targets::Target>() -> Self {
        Self {
            lead: T::lead_columns(),
            name: T::NAME,
            result: T::result_columns(),
            lines: false,
            kept: &[],
        }
    }

    /// The same, over polylines' segments.
    pub fn over_lines(self, lines: bool) -> Self {
        Self { lines, ..self }
    }

    /// The same, with `kept` columns last.
    pub fn keeping(self, kept: Vec<Column>) -> Self {
        let kept: &'static [Column] = if kept.is_empty() {
            &[]
        } else {
            Box::leak(kept.into_boxed_slice())
        };
        Self { kept, ..self }
    }
}

/// A segment's id columns: its record index, and over polylines its line and place in it.
fn segment_columns(lines: bool) -> &'static [Column] {
    const ALL: [Column; 3] = [
        column("segment", ColumnType::U64),
        column("line", ColumnType::U64),
        column("line_segment", ColumnType::U64),
    ];
    if lines { &ALL } else { &ALL[..1] }
}

/// A segment's id cells ([`segment_columns`]): `segment`, and with `lines` its line's.
fn segment_cells(segment: u64, lines: Option<&LineIndex>) -> ([Cell<'static>; 3], usize) {
    match lines {
        None => ([Cell::U64(segment); 3], 1),
        Some(index) => {
            let (line, within) = index.of(segment);
            ([Cell::U64(segment), Cell::U64(line), Cell::U64(within)], 3)
        }
    }
}

const fn column(name: &'static str, ty: ColumnType) -> Column {
    Column::new(name, ty)
}

const OVERLAPS: [Column; 2] = [
    column("polygon", ColumnType::U64),
    column("other", ColumnType::U64),
];

const CLIP: [Column; 6] = [
    column("segment", ColumnType::U64),
    column("kind", ColumnType::Category),
    column("x0", ColumnType::F32),
    column("y0", ColumnType::F32),
    column("x1", ColumnType::F32),
    column("y1", ColumnType::F32),
];

/// The columns of a query's table over a target, composed once per process and kept.
fn composed(
    query: u8,
    target: TargetColumns,
    make: impl FnOnce() -> Vec<Column>,
) -> &'static [Column] {
    type Key = (u8, &'static str, bool, Vec<&'static str>);
    type Composed = Vec<(Key, &'static [Column])>;
    static TABLES: std::sync::Mutex<Composed> = std::sync::Mutex::new(Vec::new());
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    let kept = target.kept.iter().map(|c| c.name).collect();
    let key = (query, target.name, target.lines, kept);
    if let Some((_, columns)) = tables.iter().find(|(k, _)| *k == key) {
        return columns;
    }
    let columns: &'static [Column] = Box::leak(make().into_boxed_slice());
    tables.push((key, columns));
    columns
}

impl Table {
    /// The `clip` table, with `kept` columns last (composed once a job).
    pub fn clip(kept: Vec<Column>) -> Self {
        if kept.is_empty() {
            return Table::Clip(&CLIP);
        }
        Table::Clip(Box::leak(CLIP.iter().copied().chain(kept).collect()))
    }

    pub fn columns(self) -> &'static [Column] {
        match self {
            Table::Pairs(t) => composed(0, t, || {
                let ids = [
                    column(t.name, ColumnType::U64),
                    column("hit", ColumnType::Bool),
                ];
                let segment = segment_columns(t.lines).iter().chain(t.lead);
                let result = t.result.iter().chain(t.kept);
                segment.chain(&ids).chain(result).copied().collect()
            }),
            Table::FirstHit(t) => composed(1, t, || {
                let ids = [column(t.name, ColumnType::Index)];
                let segment = segment_columns(t.lines).iter().chain(t.lead);
                let result = t.result.iter().chain(t.kept);
                segment.chain(&ids).chain(result).copied().collect()
            }),
            Table::Count(t) => composed(2, t, || {
                let count = [
                    column(t.name, ColumnType::U64),
                    column("hits", ColumnType::U64),
                ];
                t.lead.iter().chain(&count).chain(t.kept).copied().collect()
            }),
            Table::Overlaps => &OVERLAPS,
            Table::Clip(columns) => columns,
            Table::Segments => &records::SEGMENT_COLUMNS,
            Table::Rects => &records::RECT_COLUMNS,
        }
    }
}

// A row's cells fit: a segment's three ids, a target's kind, its id and hit, its result's.
const _: () = assert!(3 + 1 + 2 + targets::MAX_CELLS <= MAX_ROW);

/// A row of cells, on the stack: a result's indices, then its cells.
#[derive(Clone, Copy)]
struct Row<'a> {
    cells: [Cell<'a>; MAX_ROW],
    len: usize,
}

impl<'a> Row<'a> {
    /// The cells of `parts`, one after another.
    fn new(parts: &[&[Cell<'a>]]) -> Self {
        let mut cells = [Cell::Bool(false); MAX_ROW];
        let mut len = 0;
        for part in parts {
            cells[len..len + part.len()].copy_from_slice(part);
            len += part.len();
        }
        Self { cells, len }
    }

    /// The row with the kept columns' cells after it: those of the segment at `segment` in
    /// `chunk` (a chunk's kept values), and of the target at `target` (none: a miss).
    fn keeping(
        self,
        kept: Option<&'a KeptRows>,
        chunk: &'a Kept,
        segment: usize,
        target: Option<usize>,
    ) -> Line<'a> {
        let Some(kept) = kept else {
            return Line::Row(self);
        };
        let mut cells = self.as_ref().to_vec();
        cells.extend(kept.plan.iter().map(|from| {
            Cell::Text(match *from {
                kept::From::Segment(k) => chunk.get(segment, k),
                kept::From::Target(k) => target.and_then(|t| kept.targets.get(t, k)),
            })
        }));
        Line::Kept(cells)
    }
}

impl<'a> AsRef<[Cell<'a>]> for Row<'a> {
    fn as_ref(&self) -> &[Cell<'a>] {
        &self.cells[..self.len]
    }
}

/// A row as written: on the stack, or with kept columns after it.
#[allow(
    clippy::large_enum_variant,
    reason = "the plain row stays on the stack: boxing it would cost every row an allocation"
)]
enum Line<'a> {
    Row(Row<'a>),
    Kept(Vec<Cell<'a>>),
}

impl<'a> AsRef<[Cell<'a>]> for Line<'a> {
    fn as_ref(&self) -> &[Cell<'a>] {
        match self {
            Line::Row(row) => row.as_ref(),
            Line::Kept(cells) => cells,
        }
    }
}

/// Where a row's segment is in its chunk, and its target among the targets (none on a miss):
/// where their kept values are.
#[derive(Clone, Copy, Debug)]
pub struct At {
    pub segment: usize,
    pub target: Option<usize>,
}

/// Where `--out` goes, by what is at its path.
pub enum OutPlace {
    /// A regular file, or nothing yet: written beside and renamed over, at this path (a
    /// symlink's target).
    Replace(PathBuf),
    /// A named pipe or a device: opened for writing as it is.
    Direct(PathBuf),
    /// One of this process's descriptors, by its name: written as it is.
    Descriptor(PathBuf, i32),
}

impl OutPlace {
    /// The path, as resolved or as given.
    pub fn path(&self) -> &Path {
        match self {
            OutPlace::Replace(path) | OutPlace::Direct(path) | OutPlace::Descriptor(path, _) => {
                path
            }
        }
    }

    /// The destination opened for writing, for the Direct and Descriptor places.
    pub fn open(&self) -> Result<File, String> {
        match self {
            OutPlace::Replace(path) | OutPlace::Direct(path) => std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| io_error(path, e)),
            OutPlace::Descriptor(path, fd) => duplicate(*fd).map_err(|e| io_error(path, e)),
        }
    }
}

/// The descriptor a path names (`/dev/stdout`, `/dev/fd/3`, `/proc/self/fd/3`), if it names
/// one.
fn descriptor(path: &Path) -> Option<i32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => text
            .strip_prefix("/dev/fd/")
            .or_else(|| text.strip_prefix("/proc/self/fd/"))
            .and_then(|n| n.parse().ok()),
    }
}

/// A file of its own for descriptor `fd`, which stays open: its duplicate.
fn duplicate(fd: i32) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::{BorrowedFd, OwnedFd};
        // SAFETY: `fd` is open for as long as this call (a descriptor the process was given,
        // by name, and checked to exist by `out_place`).
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let owned: OwnedFd = borrowed.try_clone_to_owned()?;
        Ok(File::from(owned))
    }
    #[cfg(not(unix))]
    {
        let _ = fd;
        Err(std::io::Error::other("descriptors are named only on Unix"))
    }
}

/// What `--out PATH` names: see [`OutPlace`].
pub fn out_place(path: &Path) -> Result<OutPlace, String> {
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_dir() {
            return Err(io_error(path, "is a folder"));
        }
        if let Some(fd) = descriptor(path) {
            return Ok(OutPlace::Descriptor(path.to_owned(), fd));
        }
        if !m.is_file() {
            return Ok(OutPlace::Direct(path.to_owned()));
        }
    }
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !link {
        return Ok(OutPlace::Replace(path.to_owned()));
    }
    // The target, where it exists; else the path the link names (a new file made there).
    let target = std::fs::canonicalize(path).or_else(|_| {
        std::fs::read_link(path).map(|to| path.parent().unwrap_or(Path::new("")).join(to))
    });
    target.map(OutPlace::Replace).map_err(|e| io_error(path, e))
}

/// Refuses an `--out` that is one of `inputs` (the same file, by any name or link): replaced,
/// the input would be gone, and written, it would be read back as it is written.
pub fn not_an_input(out: Option<&Path>, inputs: &[&Path]) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Some(out) = out else {
            return Ok(());
        };
        let Ok(written) = std::fs::metadata(out) else {
            return Ok(());
        };
        for input in inputs {
            if let Ok(read) = std::fs::metadata(input)
                && (read.dev(), read.ino()) == (written.dev(), written.ino())
                && read.is_file()
            {
                return Err(format!(
                    "--out {} is the input {}: it would be replaced before it is read; write \
                     the output elsewhere",
                    out.display(),
                    input.display()
                ));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (out, inputs);
    Ok(())
}

/// A temporary file in `path`'s folder (so the final rename stays on one file system), created
/// with the permissions a plain new file gets (0666 less the umask), not 0600. An error names
/// the folder, not the hidden temporary name it could not make there.
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
    let temp = builder.tempfile_in(dir).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("cannot write in {}: {}", dir.display(), e.kind()),
        )
    })?;
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
    /// The table, whole in an unnamed temporary file, to copy (gzipped or not) into `out`: the
    /// temporary file beside the path, then moved into place, or the pipe or device itself.
    Whole {
        table: File,
        path: PathBuf,
        out: File,
        gzip: bool,
        temp: Option<tempfile::TempPath>,
    },
}

/// Where a command's table goes: its writer, and what to do with it at the end.
pub struct Sink {
    table: Table,
    writer: Writer,
    target: Target,
    rows: u64,
    /// The segments' lines, where they are polylines' (the table has their columns).
    lines: Option<std::sync::Arc<LineIndex>>,
    /// The kept columns (`--keep`), if any.
    kept: Option<KeptRows>,
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
        let (out, temp, path) = match out_place(path)? {
            OutPlace::Replace(path) => {
                let (file, temp) = temp_beside(&path)
                    .map_err(|e| io_error(&path, e))?
                    .into_parts();
                (file, Some(temp), path)
            }
            // Opened now (a pipe waits for its reader here), written at the end.
            place => (place.open()?, None, place.path().to_owned()),
        };
        let path = path.as_path();
        if gzip || temp.is_none() {
            // The table is written whole first (NPY rewrites its header at the end), then
            // compressed or copied into place.
            let held = |e| io_error(path, format!("a temporary file for the table: {e}"));
            let table_file = tempfile::tempfile().map_err(held)?;
            let copy = table_file.try_clone().map_err(held)?;
            let writer = format
                .writer(table_file, columns)
                .map_err(|e| io_error(path, e))?;
            let target = Target::Whole {
                table: copy,
                path: path.to_owned(),
                out,
                gzip,
                temp,
            };
            return Ok(Self::new(table, writer, target));
        }
        let (file, temp) = (out, temp.expect("a replaced file's temporary file"));
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
            lines: None,
            kept: None,
        }
    }

    /// Rows that end in the kept columns `kept` (a table made
    /// [`keeping`](TargetColumns::keeping) them).
    pub fn with_kept(self, kept: Option<KeptRows>) -> Self {
        Self { kept, ..self }
    }

    /// Rows that name each segment's line from `lines` (a table made
    /// [`over_lines`](TargetColumns::over_lines)).
    pub fn with_lines(self, lines: Option<LineIndex>) -> Self {
        Self {
            lines: lines.map(std::sync::Arc::new),
            ..self
        }
    }

    fn error(&self, e: impl std::fmt::Display) -> String {
        match &self.target {
            Target::Stdout => stdout_error(e),
            Target::Held(_) => format!("a temporary file for the output: {e}"),
            Target::File(path, _) | Target::Whole { path, .. } => io_error(path, e),
        }
    }

    /// One batch of rows, each row's cells of the table's columns.
    fn write<'a, R: AsRef<[Cell<'a>]>>(
        &mut self,
        rows: impl IntoIterator<Item = R>,
    ) -> Result<(), String> {
        let columns = self.table.columns();
        let table = self.table;
        let rows = rows.into_iter().inspect(|row| {
            let row = row.as_ref();
            debug_assert!(
                row.len() == columns.len()
                    && row.iter().zip(columns).all(|(cell, c)| cell.ty() == c.ty),
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

    /// Pair rows (`pairs`, `hits`): (segment, target, hit, the cells before the target's id
    /// and after the ids, where segment and target are), the indices as the inputs number
    /// their records; `chunk`: the chunk's kept values.
    pub fn pairs(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, bool, Cells, Cells, At)>,
        chunk: &Kept,
    ) -> Result<(), String> {
        let lines = self.lines.clone();
        let kept = self.kept.take();
        let written = self.write(rows.into_iter().map(
            |(segment, target, hit, lead, cells, at)| {
                let (segment, n) = segment_cells(segment, lines.as_deref());
                let ids = [Cell::U64(target), Cell::Bool(hit)];
                let row = Row::new(&[&segment[..n], lead.as_slice(), &ids, cells.as_slice()]);
                row.keeping(kept.as_ref(), chunk, at.segment, at.target)
            },
        ));
        self.kept = kept;
        written
    }

    /// First-hit rows: one per segment, with its first hit's target (none on a miss), the
    /// cells before it and after it.
    pub fn first_hits(
        &mut self,
        rows: impl IntoIterator<Item = (u64, Option<u64>, Cells, Cells, At)>,
        chunk: &Kept,
    ) -> Result<(), String> {
        let lines = self.lines.clone();
        let kept = self.kept.take();
        let written = self.write(rows.into_iter().map(|(segment, target, lead, cells, at)| {
            let (segment, n) = segment_cells(segment, lines.as_deref());
            let target = [Cell::Index(target)];
            let row = Row::new(&[&segment[..n], lead.as_slice(), &target, cells.as_slice()]);
            row.keeping(kept.as_ref(), chunk, at.segment, at.target)
        }));
        self.kept = kept;
        written
    }

    /// Overlap rows: one per overlapping pair of polygons.
    pub fn overlaps(&mut self, pairs: impl IntoIterator<Item = (u64, u64)>) -> Result<(), String> {
        self.write(pairs.into_iter().map(|(a, b)| [Cell::U64(a), Cell::U64(b)]))
    }

    /// Count rows: one per target, `lead` its cells before its id.
    pub fn counts(
        &mut self,
        target_ids: &[u64],
        per_target: &[u64],
        lead: impl Fn(usize) -> Cells,
    ) -> Result<(), String> {
        let kept = self.kept.take();
        let none = Kept::default();
        let rows = target_ids.iter().zip(per_target).enumerate();
        let written = self.write(rows.map(|(i, (&target, &hits))| {
            let row = Row::new(&[lead(i).as_slice(), &[Cell::U64(target), Cell::U64(hits)]]);
            row.keeping(kept.as_ref(), &none, 0, Some(i))
        }));
        self.kept = kept;
        written
    }

    /// Clip rows: one per segment, the coordinates absent on a miss; `chunk`: the segments'
    /// kept values, and `rects`' for rects read beside them (row i for segment i).
    pub fn clipped(
        &mut self,
        ids: &[u64],
        clipped: &[Clipped],
        chunk: &Kept,
        rects: Option<&mut Kept>,
    ) -> Result<(), String> {
        let mut kept = self.kept.take();
        if let (Some(kept), Some(rects)) = (&mut kept, rects) {
            std::mem::swap(&mut kept.targets, rects);
        }
        let written = self.write(
            ids.iter()
                .zip(clipped)
                .enumerate()
                .map(|(i, (&segment, c))| {
                    let p = c.segment;
                    let row = Row::new(&[&[
                        Cell::U64(segment),
                        kind_cell(c.kind()),
                        Cell::F32(p.map(|p| p.x0)),
                        Cell::F32(p.map(|p| p.y0)),
                        Cell::F32(p.map(|p| p.x1)),
                        Cell::F32(p.map(|p| p.y1)),
                    ]]);
                    row.keeping(kept.as_ref(), chunk, i, Some(i))
                }),
        );
        self.kept = kept;
        written
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
            Target::Whole {
                mut table,
                path,
                out,
                gzip,
                temp,
            } => {
                let copied = finished.and_then(|()| {
                    table.seek(SeekFrom::Start(0))?;
                    let mut buffered =
                        std::io::BufWriter::with_capacity(crate::formats::BUFFER, out);
                    if gzip {
                        let mut gz = flate2::write::GzEncoder::new(
                            &mut buffered,
                            flate2::Compression::fast(),
                        );
                        std::io::copy(&mut table, &mut gz)?;
                        gz.finish()?;
                    } else {
                        std::io::copy(&mut table, &mut buffered)?;
                    }
                    buffered.into_inner().map(drop).map_err(|e| e.into_error())
                });
                copied.map_err(|e| io_error(&path, e))?;
                match temp {
                    Some(temp) => persist(temp, &path),
                    None => Ok(()),
                }
            }
        }
    }
}

fn stdout_error(e: impl std::fmt::Display) -> String {
    format!("writing stdout: {e}")
}
