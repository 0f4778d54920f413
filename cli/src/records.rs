//! Input files (or stdin, or gzip streams), read record by record in any format (`formats/`). Errors say where:
//! `file:line:column` in a CSV (the column being the CSV column), `file: row N, field` in a
//! binary file (N counts records from 0, as numpy indexes them).
//!
//! A record that cannot be read as four numbers, or whose values break the contract's domain,
//! is *invalid*: by default the first one stops the job; with `--skip-invalid` it is skipped
//! and counted. A file that cannot be read at all (missing, wrong header, truncated) always
//! stops the job.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rectcast::{InputError, Rect, Segment, ShapeRecord, validate};

use crate::formats::Input;
use crate::kept::{Keeping, Side, Wanted};
use crate::table::Kept;
use crate::table::{Column, ColumnType, FileError, LineIndex, Place, Raw, RecordSource};

/// The most values a record holds.
pub const MAX_VALUES: usize = 4;

/// What a file's records are: their float32 columns' names (at most [`MAX_VALUES`]), how their
/// values become one (the first `names.len()` of the array; the rest are 0), and the check of
/// the contract's domain.
pub struct RecordKind<T> {
    pub names: &'static [&'static str],
    make: fn([f32; MAX_VALUES]) -> T,
    check: fn(usize, &T) -> Result<(), InputError>,
}

impl<T> Clone for RecordKind<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RecordKind<T> {}

impl<T> RecordKind<T> {
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }
}

impl<S: ShapeRecord> RecordKind<S> {
    /// A registered shape's records, as the library describes them ([`ShapeRecord`]).
    pub const fn shape() -> Self {
        Self {
            names: S::FIELDS,
            make: S::from_record,
            check: S::check,
        }
    }
}

const fn floats<const N: usize>(names: [&'static str; N]) -> [Column; N] {
    let mut columns = [Column::new("", ColumnType::F32); N];
    let mut i = 0;
    while i < N {
        columns[i] = Column::new(names[i], ColumnType::F32);
        i += 1;
    }
    columns
}

const SEGMENT_NAMES: [&str; 4] = ["x0", "y0", "x1", "y1"];
const RECT_NAMES: [&str; 4] = ["min_x", "min_y", "max_x", "max_y"];

/// The columns of a table of segments, and of one of rects.
pub const SEGMENT_COLUMNS: [Column; 4] = floats(SEGMENT_NAMES);
pub const RECT_COLUMNS: [Column; 4] = floats(RECT_NAMES);

pub const SEGMENTS: RecordKind<Segment> = RecordKind {
    names: &SEGMENT_NAMES,
    make: |[x0, y0, x1, y1]| Segment::new(x0, y0, x1, y1),
    check: validate::check_segment,
};

pub const RECTS: RecordKind<Rect> = RecordKind {
    names: &RECT_NAMES,
    make: |[min_x, min_y, max_x, max_y]| Rect::new(min_x, min_y, max_x, max_y),
    check: validate::check_rect,
};

const VERTEX_NAMES: [&str; 2] = ["x", "y"];

/// The vertices of polygons in the flat form (`--polygons` with `--polygon-offsets`): their
/// values are checked with their polygon (`polygons.rs`).
pub const VERTICES: RecordKind<[f32; 2]> = RecordKind {
    names: &VERTEX_NAMES,
    make: |[x, y, _, _]| [x, y],
    check: |_, _| Ok(()),
};

/// Skipped invalid records: how many, and where the first few were.
#[derive(Debug, Default)]
pub struct Skipped {
    pub count: u64,
    pub first: Vec<String>,
}

impl Skipped {
    const SHOWN: usize = 5;

    /// One more skipped, `problem` saying where and why.
    pub fn add(&mut self, problem: String) {
        self.count += 1;
        if self.first.len() < Skipped::SHOWN {
            self.first.push(problem);
        }
    }

    /// The end-of-job report, or None when nothing was skipped.
    pub fn report(&self, path: &Path) -> Option<String> {
        (self.count > 0).then(|| {
            let more = if self.count as usize > self.first.len() {
                ", …"
            } else {
                ""
            };
            format!(
                "skipped {} invalid record{} of {}: {}{more}",
                self.count,
                if self.count == 1 { "" } else { "s" },
                path.display(),
                self.first.join("; ")
            )
        })
    }
}

/// A record's index in its file, and its value or why it is invalid.
pub type Record<T> = (u64, Result<T, FileError>);

/// A file of records, read one at a time or in chunks, each valid record with its index in the
/// file (invalid ones included, so output indices join back to the input rows).
pub struct Records<T> {
    path: PathBuf,
    kind: RecordKind<T>,
    source: Box<dyn RecordSource>,
    skip_invalid: bool,
    index: u64,
    total_bytes: u64,
    /// For a gzip input, the compressed bytes read so far.
    compressed_read: Option<Arc<AtomicU64>>,
    pub skipped: Skipped,
    /// A block of raw values read in bulk (kept between chunks).
    block: Vec<[f32; MAX_VALUES]>,
    /// Values each record keeps (`--keep`).
    kept_width: usize,
}

impl<T> Records<T> {
    pub fn open(path: &Path, kind: &RecordKind<T>, skip_invalid: bool) -> Result<Self, FileError> {
        let input = Input::open(path)?;
        let source = input
            .format
            .reader(path, input.data, kind.names(), input.size)?;
        Ok(Self {
            path: path.to_owned(),
            kind: *kind,
            source,
            skip_invalid,
            index: 0,
            total_bytes: input.size,
            compressed_read: input.compressed_read,
            skipped: Skipped::default(),
            block: Vec::new(),
            kept_width: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// For a file of polylines' segments: which line each record is on, and the file's SRID.
    pub fn lines(&self) -> Option<(LineIndex, Option<i64>)> {
        self.source.lines()
    }

    /// What this file offers to `--keep`, keeping those of `wanted` asked of `side` that it
    /// has: each valid record's values of them come with it from [`read_chunk`](Self::read_chunk).
    pub fn keep(&mut self, wanted: &[Wanted], side: Side) -> Result<Keeping, FileError> {
        let noun = crate::kept::noun(&self.path);
        let keeping = Keeping::new(&self.path, self.source.columns(), noun, wanted, side);
        self.source.keep(&keeping.names)?;
        self.kept_width = keeping.names.len();
        Ok(keeping)
    }

    /// The file's size (0 when unknown), and the bytes of it read so far.
    pub fn progress(&self) -> (u64, u64) {
        let read = match &self.compressed_read {
            Some(read) => read.load(Ordering::Relaxed),
            None => self.source.bytes(),
        };
        (self.total_bytes, read)
    }

    /// The next record with its index: its value, or why it is invalid (for the caller to
    /// [`reject`](Self::reject)); `None` at the end. `Err` when the file itself is broken.
    pub fn next_record(&mut self) -> Result<Option<Record<T>>, FileError> {
        let Some(raw) = self.source.next()? else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        let value = match raw {
            Raw::Invalid(e) => Err(e),
            Raw::Values(values, place) => self.value(index, values, place),
        };
        Ok(Some((index, value)))
    }

    /// Record `index`'s values (read at `place`) as a checked value, or why it is invalid.
    #[inline(always)]
    fn value(&self, index: u64, values: [f32; MAX_VALUES], place: Place) -> Result<T, FileError> {
        let value = (self.kind.make)(values);
        match (self.kind.check)(index as usize, &value) {
            Ok(()) => Ok(value),
            Err(e) => {
                let field = self.kind.names.iter().position(|&name| name == e.field);
                let place = match place {
                    Place::Line { line, .. } => Place::Line {
                        line,
                        column: field.map_or(0, |f| self.source.column(f)),
                    },
                    Place::Row { row, .. } => Place::Row {
                        row,
                        field: e.field,
                    },
                    Place::File => Place::File,
                    Place::Feature(feature) => Place::Feature(feature),
                };
                Err(FileError::new(
                    &self.path,
                    place,
                    format!("{} {}", e.field, e.problem),
                ))
            }
        }
    }

    /// An invalid record: an error, or counted and skipped with `--skip-invalid`.
    pub fn reject(&mut self, problem: FileError) -> Result<(), FileError> {
        if !self.skip_invalid {
            return Err(problem);
        }
        self.skipped.count += 1;
        if self.skipped.first.len() < Skipped::SHOWN {
            self.skipped.first.push(problem.to_string());
        }
        Ok(())
    }

    /// The kept values of the record [`next_record`](Self::next_record) gave last, pushed onto
    /// `out` (for a caller reading record by record).
    pub fn push_kept(&self, out: &mut Kept) {
        if self.kept_width > 0 {
            self.source.kept(out);
        }
    }

    /// `kept` emptied, for this file's kept values.
    pub fn reset_kept(&self, kept: &mut Kept) {
        kept.reset(self.kept_width);
    }

    /// Up to `max` valid records into `values` (cleared first), their indices into `ids`, and
    /// their kept values ([`keep`](Self::keep)) into `kept`.
    pub fn read_chunk(
        &mut self,
        values: &mut Vec<T>,
        ids: &mut Vec<u64>,
        kept: &mut Kept,
        max: usize,
    ) -> Result<(), FileError> {
        values.clear();
        ids.clear();
        kept.reset(self.kept_width);
        // In blocks where the source reads them so (binary files): no per-record read.
        let mut block = std::mem::take(&mut self.block);
        let blocks = loop {
            if values.len() >= max {
                break Some(());
            }
            block.clear();
            let want = (max - values.len()).min(1 << 16);
            match self.source.next_block(&mut block, want) {
                Ok(Some(0)) => break Some(()),
                Ok(Some(_)) => {}
                Ok(None) => break None,
                Err(e) => {
                    self.block = block;
                    return Err(e);
                }
            }
            for &raw in &block {
                let index = self.index;
                self.index += 1;
                let place = Place::Row {
                    row: index,
                    field: "record",
                };
                match self.value(index, raw, place) {
                    Ok(v) => {
                        values.push(v);
                        ids.push(index);
                    }
                    Err(problem) => {
                        if let Err(e) = self.reject(problem) {
                            self.block = block;
                            return Err(e);
                        }
                    }
                }
            }
        };
        self.block = block;
        if blocks.is_some() {
            return Ok(());
        }
        while values.len() < max {
            let Some((index, value)) = self.next_record()? else {
                break;
            };
            match value {
                Ok(v) => {
                    values.push(v);
                    ids.push(index);
                    if self.kept_width > 0 {
                        self.source.kept(kept);
                    }
                }
                Err(problem) => self.reject(problem)?,
            }
        }
        Ok(())
    }

    /// Every valid record, with its index and its kept values.
    pub fn read_all(&mut self) -> Result<(Vec<T>, Vec<u64>, Kept), FileError> {
        let (mut values, mut ids, mut kept) = (Vec::new(), Vec::new(), Kept::default());
        self.read_chunk(&mut values, &mut ids, &mut kept, usize::MAX)?;
        Ok((values, ids, kept))
    }
}

/// Parses `--rect min_x,min_y,max_x,max_y`, with the same checks as a rects file.
pub fn parse_rect_arg(text: &str) -> Result<Rect, String> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    let names = ["min_x", "min_y", "max_x", "max_y"];
    if fields.len() != 4 {
        return Err(format!(
            "--rect {text:?}: expected 4 comma-separated numbers {}, found {}",
            names.join(","),
            fields.len()
        ));
    }
    let mut v = [0f32; 4];
    for (i, field) in fields.iter().enumerate() {
        v[i] = field
            .parse()
            .map_err(|_| format!("--rect: {}: {field:?} is not a number", names[i]))?;
    }
    let rect = Rect::new(v[0], v[1], v[2], v[3]);
    validate::check_rect(0, &rect).map_err(|e| format!("--rect: {} {}", e.field, e.problem))?;
    Ok(rect)
}
