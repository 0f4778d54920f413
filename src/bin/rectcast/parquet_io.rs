//! Parquet (Apache Arrow) inputs and outputs, with the cargo feature `parquet`.
//!
//! Inputs: float32 columns named like the CSV headers (`x0,y0,x1,y1`, `min_x,min_y,max_x,max_y`;
//! other columns are ignored), read in row groups, streamed. A null value is an invalid record.
//! Outputs: the CSV table's columns, typed: indices `uint64`, t and coordinates `float32`,
//! `kind` and sides as strings, `hit` boolean; what CSV leaves empty is null.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BooleanArray, Float32Array, RecordBatch, StringArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use rectcast::{Clipped, FirstHit, PairResult};

use crate::output::Table;
use crate::records::{FileError, Place, Raw, Source};

/// Rows per batch read.
const BATCH: usize = 1 << 16;

/// Reads the four named float32 columns of a Parquet file, batch by batch.
pub struct ParquetSource {
    path: PathBuf,
    columns: [&'static str; 4],
    reader: ParquetRecordBatchReader,
    batch: Option<[Float32Array; 4]>,
    at: usize,
    row: u64,
    rows: u64,
    bytes: u64,
}

impl ParquetSource {
    pub fn open(
        path: &Path,
        file: File,
        columns: [&'static str; 4],
        bytes: u64,
    ) -> Result<Self, FileError> {
        let whole = |e: &dyn std::fmt::Display| FileError::new(path, Place::File, e.to_string());
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| whole(&e))?;
        let rows = builder.metadata().file_metadata().num_rows() as u64;
        let schema = builder.schema().clone();
        for name in columns {
            match schema.field_with_name(name) {
                Ok(f) if f.data_type() == &DataType::Float32 => {}
                Ok(f) => {
                    return Err(whole(&format!(
                        "column {name} is {}, expected float32",
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
        })
    }
}

impl Source for ParquetSource {
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
                if let Some(c) = (0..4).find(|&c| batch[c].is_null(i)) {
                    return Ok(Some(Raw::Invalid(FileError::new(
                        &self.path,
                        Place::Row {
                            row,
                            field: self.columns[c],
                        },
                        format!("{} is null", self.columns[c]),
                    ))));
                }
                let values = std::array::from_fn(|c| batch[c].value(i));
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
                next.column_by_name(name)
                    .and_then(|c| c.as_any().downcast_ref::<Float32Array>())
                    .cloned()
                    .ok_or_else(|| {
                        FileError::new(&self.path, Place::File, format!("no float32 column {name}"))
                    })
            };
            let [a, b, c, d] = self.columns;
            self.batch = Some([column(a)?, column(b)?, column(c)?, column(d)?]);
            self.at = 0;
        }
    }

    /// Bytes read so far, estimated from the rows.
    fn bytes(&self) -> u64 {
        self.bytes * self.row / self.rows.max(1)
    }
}

fn schema(table: Table) -> SchemaRef {
    let u64 = |n: &str, null| Field::new(n, DataType::UInt64, null);
    let f32 = |n: &str| Field::new(n, DataType::Float32, true);
    let text = |n: &str, null| Field::new(n, DataType::Utf8, null);
    Arc::new(Schema::new(match table {
        Table::Pairs => vec![
            u64("segment", false),
            u64("rect", false),
            Field::new("hit", DataType::Boolean, false),
            text("kind", false),
            f32("t_enter"),
            f32("t_exit"),
            text("entry", true),
            text("exit", true),
        ],
        Table::FirstHit => vec![
            u64("segment", false),
            u64("rect", true),
            text("kind", false),
            f32("t_enter"),
            f32("t_exit"),
            text("entry", true),
            text("exit", true),
        ],
        Table::Count => vec![u64("rect", false), u64("hits", false)],
        Table::Clip => vec![
            u64("segment", false),
            text("kind", false),
            f32("x0"),
            f32("y0"),
            f32("x1"),
            f32("y1"),
        ],
    }))
}

/// A result table written as Parquet, one row group per chunk of the job.
pub struct ParquetSink {
    schema: SchemaRef,
    writer: ArrowWriter<File>,
}

fn sides(r: &PairResult) -> (Option<String>, Option<String>) {
    let text = |s: rectcast::Sides| (!s.is_empty()).then(|| s.to_string());
    (text(r.entry_sides()), text(r.exit_sides()))
}

fn t(r: &PairResult) -> (Option<f32>, Option<f32>) {
    if r.hit() {
        (Some(r.t_enter), Some(r.t_exit))
    } else {
        (None, None)
    }
}

fn strings(v: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

impl ParquetSink {
    pub fn create(file: File, table: Table) -> Result<Self, String> {
        let schema = schema(table);
        let writer = ArrowWriter::try_new(file, schema.clone(), None).map_err(|e| e.to_string())?;
        Ok(Self { schema, writer })
    }

    fn write(&mut self, columns: Vec<ArrayRef>) -> Result<(), String> {
        let batch =
            RecordBatch::try_new(self.schema.clone(), columns).map_err(|e| e.to_string())?;
        self.writer.write(&batch).map_err(|e| e.to_string())
    }

    pub fn pairs<'a>(
        &mut self,
        rows: impl IntoIterator<Item = (u64, u64, &'a PairResult)>,
    ) -> Result<u64, String> {
        let rows: Vec<_> = rows.into_iter().collect();
        let (entry, exit): (Vec<_>, Vec<_>) = rows.iter().map(|r| sides(r.2)).unzip();
        let (t_enter, t_exit): (Vec<_>, Vec<_>) = rows.iter().map(|r| t(r.2)).unzip();
        self.write(vec![
            Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(UInt64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(BooleanArray::from_iter(
                rows.iter().map(|r| Some(r.2.hit())),
            )),
            strings(rows.iter().map(|r| Some(r.2.kind().to_string())).collect()),
            Arc::new(Float32Array::from(t_enter)),
            Arc::new(Float32Array::from(t_exit)),
            strings(entry),
            strings(exit),
        ])?;
        Ok(rows.len() as u64)
    }

    pub fn first_hits(
        &mut self,
        ids: &[u64],
        rect_ids: &[u64],
        first: &[FirstHit],
    ) -> Result<u64, String> {
        let (entry, exit): (Vec<_>, Vec<_>) = first.iter().map(|f| sides(&f.result)).unzip();
        let (t_enter, t_exit): (Vec<_>, Vec<_>) = first.iter().map(|f| t(&f.result)).unzip();
        let rects: Vec<Option<u64>> = first
            .iter()
            .map(|f| f.rect().map(|r| rect_ids[r as usize]))
            .collect();
        self.write(vec![
            Arc::new(UInt64Array::from_iter_values(ids.iter().copied())),
            Arc::new(UInt64Array::from(rects)),
            strings(
                first
                    .iter()
                    .map(|f| Some(f.result.kind().to_string()))
                    .collect(),
            ),
            Arc::new(Float32Array::from(t_enter)),
            Arc::new(Float32Array::from(t_exit)),
            strings(entry),
            strings(exit),
        ])?;
        Ok(ids.len() as u64)
    }

    pub fn counts(&mut self, rect_ids: &[u64], per_rect: &[u64]) -> Result<u64, String> {
        self.write(vec![
            Arc::new(UInt64Array::from_iter_values(rect_ids.iter().copied())),
            Arc::new(UInt64Array::from_iter_values(per_rect.iter().copied())),
        ])?;
        Ok(rect_ids.len() as u64)
    }

    pub fn clipped(&mut self, ids: &[u64], clipped: &[Clipped]) -> Result<u64, String> {
        let coordinate = |f: fn(&rectcast::Segment) -> f32| -> ArrayRef {
            Arc::new(Float32Array::from(
                clipped
                    .iter()
                    .map(|c| c.segment.as_ref().map(f))
                    .collect::<Vec<_>>(),
            ))
        };
        self.write(vec![
            Arc::new(UInt64Array::from_iter_values(ids.iter().copied())),
            strings(clipped.iter().map(|c| Some(c.kind().to_string())).collect()),
            coordinate(|p| p.x0),
            coordinate(|p| p.y0),
            coordinate(|p| p.x1),
            coordinate(|p| p.y1),
        ])?;
        Ok(ids.len() as u64)
    }

    /// Writes the footer; the file is then complete.
    pub fn finish(self) -> Result<(), String> {
        self.writer.close().map(|_| ()).map_err(|e| e.to_string())
    }
}
