//! Parquet (Apache Arrow), with the cargo feature `parquet`.
//!
//! Records: float32 columns named like the CSV headers (`x0,y0,x1,y1`, `min_x,min_y,max_x,max_y`;
//! other columns are ignored), read in batches, streamed; float64 columns (pandas' default)
//! converted exactly, a value float32 cannot hold making its record invalid, as a null value
//! does.
//! Tables: the CSV table's columns, typed: indices `uint64`, t and coordinates `float32`, `kind`
//! and sides as strings, `hit` boolean; what CSV leaves empty is null. One record batch per
//! batch of rows.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float32Builder, StringBuilder, UInt64Builder};
use arrow_array::{Array, ArrayRef, Float32Array, Float64Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::Data;
use crate::table::{Cell, Column, ColumnType, FileError, Place, Raw, RecordSource, TableWriter};

/// Rows per batch read.
const BATCH: usize = 1 << 16;

/// One column of a batch: float32 as stored, or float64 converted on the way.
enum Values {
    F32(Float32Array),
    F64(Float64Array),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::F32(a) => a.len(),
            Values::F64(a) => a.len(),
        }
    }
    fn is_null(&self, i: usize) -> bool {
        match self {
            Values::F32(a) => a.is_null(i),
            Values::F64(a) => a.is_null(i),
        }
    }
    /// Row i's value as f32, or the float64 f32 cannot hold exactly.
    fn value(&self, i: usize) -> Result<f32, f64> {
        match self {
            Values::F32(a) => Ok(a.value(i)),
            Values::F64(a) => {
                let wide = a.value(i);
                let narrow = wide as f32;
                if narrow as f64 == wide || wide.is_nan() {
                    Ok(narrow)
                } else {
                    Err(wide)
                }
            }
        }
    }
}

/// Reads the named float32 columns of a Parquet file (four, or three for circles), batch by
/// batch.
pub struct ParquetSource {
    path: PathBuf,
    columns: &'static [&'static str],
    reader: ParquetRecordBatchReader,
    batch: Option<Vec<Values>>,
    at: usize,
    row: u64,
    rows: u64,
    bytes: u64,
    schema: SchemaRef,
    /// The kept columns' names (`--keep`), and their arrays in the batch being read.
    kept: Vec<String>,
    kept_batch: Vec<ArrayRef>,
}

impl ParquetSource {
    pub fn open(
        path: &Path,
        data: Data,
        columns: &'static [&'static str],
        bytes: u64,
    ) -> Result<Self, FileError> {
        let whole = |e: &dyn std::fmt::Display| FileError::new(path, Place::File, e.to_string());
        let Data::File(file) = data else {
            // Its footer, at the end, says where the columns are.
            return Err(whole(
                &"Parquet is read from a file, not from a pipe or a gzip stream",
            ));
        };
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| whole(&e))?;
        let rows = builder.metadata().file_metadata().num_rows() as u64;
        let schema = builder.schema().clone();
        for &name in columns {
            match schema.field_with_name(name) {
                Ok(f) if matches!(f.data_type(), DataType::Float32 | DataType::Float64) => {}
                Ok(f) => {
                    return Err(whole(&format!(
                        "column {name} is {}, expected float32 (or float64 whose values float32 holds exactly)",
                        f.data_type()
                    )));
                }
                Err(_) => {
                    return Err(whole(&format!(
                        "no column {name}: expected float32 columns {}",
                        columns.join(",")
                    )));
                }
            }
        }
        let reader = builder
            .with_batch_size(BATCH)
            .build()
            .map_err(|e| whole(&e))?;
        Ok(Self {
            path: path.to_owned(),
            columns,
            reader,
            batch: None,
            at: 0,
            row: 0,
            rows,
            bytes,
            schema,
            kept: Vec::new(),
            kept_batch: Vec::new(),
        })
    }
}

/// How kept columns are written as text: arrow's display of any type (a string as it is, a
/// number as its shortest decimal, a date or a timestamp in ISO 8601).
fn display(array: &dyn Array) -> Result<ArrayFormatter<'_>, arrow_schema::ArrowError> {
    ArrayFormatter::try_new(array, &FormatOptions::default())
}

impl RecordSource for ParquetSource {
    /// The next record's values, or its first null field; None at the end.
    fn next(&mut self) -> Result<Option<Raw>, FileError> {
        loop {
            if let Some(batch) = &self.batch
                && self.at < batch[0].len()
            {
                let i = self.at;
                self.at += 1;
                let row = self.row;
                self.row += 1;
                if let Some(c) = (0..batch.len()).find(|&c| batch[c].is_null(i)) {
                    return Ok(Some(Raw::Invalid(FileError::new(
                        &self.path,
                        Place::Row {
                            row,
                            field: self.columns[c],
                        },
                        format!("{} is null", self.columns[c]),
                    ))));
                }
                let mut values = [0f32; 4];
                for (c, column) in batch.iter().enumerate() {
                    match column.value(i) {
                        Ok(v) => values[c] = v,
                        Err(wide) => {
                            let name = self.columns[c];
                            return Ok(Some(Raw::Invalid(FileError::new(
                                &self.path,
                                Place::Row { row, field: name },
                                format!(
                                    "{name} is {wide} (float64), which float32 cannot hold exactly: the answer would be about another number"
                                ),
                            ))));
                        }
                    }
                }
                let place = Place::Row {
                    row,
                    field: "record",
                };
                return Ok(Some(Raw::Values(values, place)));
            }
            let Some(next) = self.reader.next() else {
                return Ok(None);
            };
            let next = next.map_err(|e| FileError::new(&self.path, Place::File, e.to_string()))?;
            let column = |name: &str| {
                let c = next.column_by_name(name);
                let narrow = c.and_then(|c| c.as_any().downcast_ref::<Float32Array>());
                let wide = c.and_then(|c| c.as_any().downcast_ref::<Float64Array>());
                match (narrow, wide) {
                    (Some(a), _) => Ok(Values::F32(a.clone())),
                    (None, Some(a)) => Ok(Values::F64(a.clone())),
                    (None, None) => Err(FileError::new(
                        &self.path,
                        Place::File,
                        format!("no float32 or float64 column {name}"),
                    )),
                }
            };
            let columns: Result<Vec<_>, _> = self.columns.iter().map(|name| column(name)).collect();
            self.batch = Some(columns?);
            let kept = self
                .kept
                .iter()
                .map(|name| next.column_by_name(name).cloned());
            self.kept_batch = kept.collect::<Option<_>>().ok_or_else(|| {
                let message = "a batch without a kept column of the file's schema";
                FileError::new(&self.path, Place::File, message)
            })?;
            self.at = 0;
        }
    }

    /// Bytes read so far, estimated from the rows.
    fn bytes(&self) -> u64 {
        self.bytes * self.row / self.rows.max(1)
    }

    fn columns(&self) -> Vec<String> {
        let fields = self.schema.fields().iter();
        fields.map(|f| f.name().to_string()).collect()
    }

    /// Any type arrow can display is kept as that text; another is refused.
    fn keep(&mut self, names: &[String]) -> Result<(), FileError> {
        for name in names {
            if let Ok(field) = self.schema.field_with_name(name) {
                let none = arrow_array::new_empty_array(field.data_type());
                if let Err(e) = display(none.as_ref()) {
                    let ty = field.data_type();
                    let message =
                        format!("--keep {name}: column {name} is {ty}, not shown as text: {e}");
                    return Err(FileError::new(&self.path, Place::File, message));
                }
            }
        }
        self.kept = names.to_vec();
        Ok(())
    }

    fn kept(&self, out: &mut crate::table::Kept) {
        let row = self.at - 1;
        for column in &self.kept_batch {
            if column.is_null(row) {
                out.push(None);
                continue;
            }
            // Checked displayable in `keep`.
            match display(column.as_ref()) {
                Ok(text) => out.push(Some(&text.value(row).to_string())),
                Err(_) => out.push(None),
            }
        }
    }
}

/// A column's Arrow type, and whether it may be null.
fn field(column: &Column) -> Field {
    let (ty, nullable) = match column.ty {
        ColumnType::U64 => (DataType::UInt64, false),
        ColumnType::Index => (DataType::UInt64, true),
        ColumnType::Bool => (DataType::Boolean, false),
        ColumnType::Category => (DataType::Utf8, false),
        ColumnType::F32 => (DataType::Float32, true),
        ColumnType::Sides | ColumnType::Text => (DataType::Utf8, true),
    };
    Field::new(column.name, ty, nullable)
}

/// The rows of one batch, column by column.
enum Builder {
    U64(UInt64Builder),
    Bool(BooleanBuilder),
    F32(Float32Builder),
    Text(StringBuilder),
}

impl Builder {
    fn of(ty: ColumnType) -> Self {
        match ty {
            ColumnType::U64 | ColumnType::Index => Builder::U64(UInt64Builder::new()),
            ColumnType::Bool => Builder::Bool(BooleanBuilder::new()),
            ColumnType::F32 => Builder::F32(Float32Builder::new()),
            ColumnType::Category | ColumnType::Sides | ColumnType::Text => {
                Builder::Text(StringBuilder::new())
            }
        }
    }

    fn push(&mut self, cell: &Cell) {
        match (self, *cell) {
            (Builder::U64(b), Cell::U64(v)) => b.append_value(v),
            (Builder::U64(b), Cell::Index(v)) => b.append_option(v),
            (Builder::Bool(b), Cell::Bool(v)) => b.append_value(v),
            (Builder::F32(b), Cell::F32(v)) => b.append_option(v),
            // A mixed job's column of another kind than the row's.
            (Builder::Text(b), Cell::Category(_, "")) => b.append_null(),
            (Builder::Text(b), Cell::Category(_, name)) => b.append_value(name),
            (Builder::Text(b), Cell::Sides(sides)) if sides.is_empty() => b.append_null(),
            (Builder::Text(b), Cell::Sides(sides)) => b.append_value(sides.to_string()),
            (Builder::Text(b), Cell::Text(text)) => b.append_option(text),
            (_, cell) => unreachable!("a {:?} cell in a column of another type", cell.ty()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::U64(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::F32(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
        }
    }
}

/// Writes a table as Parquet: each batch of rows becomes one record batch.
pub struct ParquetWriter {
    schema: SchemaRef,
    builders: Vec<Builder>,
    writer: ArrowWriter<File>,
}

fn parquet_error(e: parquet::errors::ParquetError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl ParquetWriter {
    pub fn new(file: File, columns: &[Column]) -> std::io::Result<Self> {
        let schema = Arc::new(Schema::new(columns.iter().map(field).collect::<Vec<_>>()));
        let writer = ArrowWriter::try_new(file, schema.clone(), None).map_err(parquet_error)?;
        Ok(Self {
            schema,
            builders: columns.iter().map(|c| Builder::of(c.ty)).collect(),
            writer,
        })
    }
}

impl TableWriter for ParquetWriter {
    #[inline]
    fn row(&mut self, cells: &[Cell]) -> std::io::Result<()> {
        for (builder, cell) in self.builders.iter_mut().zip(cells) {
            builder.push(cell);
        }
        Ok(())
    }

    fn end_batch(&mut self) -> std::io::Result<()> {
        let columns = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), columns)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        self.writer.write(&batch).map_err(parquet_error)
    }

    /// Writes the footer; the file is then complete.
    fn finish(self, _rows: u64) -> std::io::Result<()> {
        self.writer.close().map(|_| ()).map_err(parquet_error)
    }
}
