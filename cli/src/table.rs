//! The interface between the commands and the file formats: records come in through a
//! [`RecordSource`], tables go out through a [`TableWriter`]. A table is a list of typed
//! [`Column`]s and a row is one [`Cell`] per column; each format (`formats/`) decides how a
//! column type is stored, so a new table needs no format code and a new format no command code.

use std::fmt;
use std::path::{Path, PathBuf};

use rectcast::Sides;

/// Where in a file a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// The whole file.
    File,
    /// A CSV line and column (1-based; column 0: the whole line).
    Line { line: u64, column: usize },
    /// A binary record (0-based, as numpy counts rows) and its field.
    Row { row: u64, field: &'static str },
    /// A GeoJSON feature (0-based).
    Feature(u64),
}

/// A bad input file: where and what.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub place: Place,
    pub message: String,
}

/// An input as messages name it: `stdin` for `-`, else its path.
pub fn input_name(path: &Path) -> String {
    if path == Path::new("-") {
        "stdin".to_string()
    } else {
        path.display().to_string()
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&input_name(&self.path))?;
        match &self.place {
            Place::File => {}
            Place::Line { line, column: 0 } => write!(f, ":{line}")?,
            Place::Line { line, column } => write!(f, ":{line}:{column}")?,
            Place::Row { row, field } => write!(f, ": row {row}, {field}")?,
            Place::Feature(feature) => write!(f, ": feature {feature}")?,
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FileError {}

impl FileError {
    pub fn new(path: &Path, place: Place, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            place,
            message: message.into(),
        }
    }
}

/// One record as a format reads it: its values (as many as its columns, at most four, the rest
/// 0) and where they are, or why they could not be read. Whether the values are in the
/// contract's domain is checked later, by `Records`.
pub enum Raw {
    Values([f32; 4], Place),
    Invalid(FileError),
}

/// A file's records, one at a time: what each input format provides.
pub trait RecordSource {
    /// The next record, `None` at the end; `Err` when the file itself is broken.
    fn next(&mut self) -> Result<Option<Raw>, FileError>;
    /// Up to `max` whole records' values appended to `out`, for a source that reads them in
    /// bulk (a binary file of four values a record): `Some(n)`, 0 at the end; `None` from a
    /// source that reads one at a time (then call [`next`](Self::next)).
    fn next_block(
        &mut self,
        _out: &mut Vec<[f32; 4]>,
        _max: usize,
    ) -> Result<Option<usize>, FileError> {
        Ok(None)
    }
    /// Bytes consumed so far (for progress).
    fn bytes(&self) -> u64;
    /// The 1-based column of a record's field (0 to 3) in a text file, for error places.
    fn column(&self, field: usize) -> usize {
        field + 1
    }
    /// The names of the columns whose values [`keep`](Self::keep) can carry into the output
    /// (`--keep`): a CSV header's, a Parquet file's, GeoJSON properties; none in a file of
    /// values only.
    fn columns(&self) -> Vec<String> {
        Vec::new()
    }
    /// From now on, each record's values of the columns `names` (each one of
    /// [`columns`](Self::columns)), given by [`kept`](Self::kept).
    fn keep(&mut self, _names: &[String]) -> Result<(), FileError> {
        Ok(())
    }
    /// The kept values of the record [`next`](Self::next) gave last, pushed onto `out`.
    fn kept(&self, _out: &mut Kept) {}
    /// For a file of polylines' segments: which line each record is on, and the file's SRID.
    fn lines(&self) -> Option<(LineIndex, Option<i64>)> {
        None
    }
}

/// Which line each record of a polyline file is on (`polylines.rs`): the record index at
/// which each line starts.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<u64>,
}

impl LineIndex {
    /// Lines starting at these records, in order, the first at 0.
    pub fn new(starts: Vec<u64>) -> Self {
        Self { starts }
    }

    /// Record `segment`'s line, and its place in that line.
    pub fn of(&self, segment: u64) -> (u64, u64) {
        let line = self.starts.partition_point(|&start| start <= segment) - 1;
        (line as u64, segment - self.starts[line])
    }
}

/// What a column holds, and so how each format stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// A record index or a count, always present.
    U64,
    /// A record index, or nothing (a first-hit miss): -1 in NPY.
    Index,
    Bool,
    /// A category (a pair's kind, a contact): its name (`enter`), or its code (`u8`) where a
    /// format stores numbers: a kind is 0 miss, 1 inside, 2 enter, 3 exit, 4 cross (and for a
    /// circle 5 tangent); a contact 0 miss, 1 cross, 2 touch, 3 overlap.
    Category,
    /// A parameter or a coordinate, or nothing (a miss): NaN in NPY and `.f32`.
    F32,
    /// A set of sides: joined by `+` (`min_x+min_y`), or bits 1 min_x, 2 max_x, 4 min_y, 8 max_y.
    Sides,
    /// A value kept from an input (`--keep`): its text as the input holds it, or nothing.
    /// Formats of numbers only (NPY, `.f32`) cannot hold it.
    Text,
}

/// A named, typed column of a table.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColumnType,
}

impl Column {
    pub const fn new(name: &'static str, ty: ColumnType) -> Self {
        Self { name, ty }
    }
}

/// One value of a row, of its column's type (an absent value is `None`).
#[derive(Clone, Copy, Debug)]
pub enum Cell<'a> {
    U64(u64),
    Index(Option<u64>),
    Bool(bool),
    /// A category's code and name.
    Category(u8, &'static str),
    F32(Option<f32>),
    Sides(Sides),
    Text(Option<&'a str>),
}

impl Cell<'_> {
    pub fn ty(&self) -> ColumnType {
        match self {
            Cell::U64(_) => ColumnType::U64,
            Cell::Index(_) => ColumnType::Index,
            Cell::Bool(_) => ColumnType::Bool,
            Cell::Category(..) => ColumnType::Category,
            Cell::F32(_) => ColumnType::F32,
            Cell::Sides(_) => ColumnType::Sides,
            Cell::Text(_) => ColumnType::Text,
        }
    }
}

/// A table being written: what each output format provides. Rows come in batches (a chunk of
/// the job each); a writer may hold a batch until [`end_batch`](Self::end_batch).
///
/// Called through `formats::Writer`, an enum, not a trait object: `row` is inlined into the
/// loop that builds the cells, so the cells' types are known there and cost nothing to match.
pub trait TableWriter {
    /// One row: a cell per column, in the columns' order and of their types.
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()>;
    /// The end of a batch of rows.
    fn end_batch(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// Completes the table (row count, footer) and flushes it; `rows` rows were written.
    fn finish(self, rows: u64) -> std::io::Result<()>;
}

/// A boxed writer (a large one, kept off the stack) writes as the writer inside.
impl<T: TableWriter> TableWriter for Box<T> {
    #[inline(always)]
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        (**self).row(cells)
    }
    fn end_batch(&mut self) -> std::io::Result<()> {
        (**self).end_batch()
    }
    fn finish(self, rows: u64) -> std::io::Result<()> {
        (*self).finish(rows)
    }
}

/// Values kept from an input, record by record, [`width`](Self::width) a record: the kept
/// columns' values in the order they were asked for.
#[derive(Debug, Default)]
pub struct Kept {
    width: usize,
    text: String,
    /// Each value's span of `text`, or none.
    values: Vec<Option<(usize, usize)>>,
}

impl Kept {
    /// No values yet, `width` a record.
    pub fn new(width: usize) -> Self {
        Self {
            width,
            ..Self::default()
        }
    }

    /// No values, `width` a record from now on (the buffers kept).
    pub fn reset(&mut self, width: usize) {
        self.width = width;
        self.text.clear();
        self.values.clear();
    }

    /// The next value of the record being pushed.
    pub fn push(&mut self, value: Option<&str>) {
        let span = value.map(|v| {
            let start = self.text.len();
            self.text.push_str(v);
            (start, self.text.len())
        });
        self.values.push(span);
    }

    /// Value `k` of record `record` (counting the records pushed, from 0).
    pub fn get(&self, record: usize, k: usize) -> Option<&str> {
        self.values[record * self.width + k].map(|(start, end)| &self.text[start..end])
    }
}

/// Whether every column of a table is an f32 (the record files: segments and rects).
pub fn all_f32(columns: &[Column]) -> bool {
    columns.iter().all(|c| c.ty == ColumnType::F32)
}

/// The most cells a row has, but for kept columns (`--keep`): a segment's three ids, a mixed
/// job's target kind, the target's id and hit, and a result's cells (held by `output.rs`).
pub const MAX_ROW: usize = 16;
