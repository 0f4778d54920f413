//! Result files, written as the job goes: CSV (stdout, or `--out` with any extension but
//! these), NPY (`--out X.npy`: one structured record per row, loaded with `np.load`), raw f32
//! (`--out X.f32`: clip only, the clipped segment as 4 little-endian f32, NaN on a miss).
//!
//! `--out` is written to a temporary file beside it and renamed over it only when the whole
//! job succeeded: on any error no output file appears, and an earlier file of that name is
//! left untouched.
//!
//! Indices (`segment`, `rect`) are record indices in the input files, counting from 0 and
//! counting invalid records skipped with `--skip-invalid`, so rows join back to the inputs.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rectcast::{Clipped, FirstHit, PairResult};

use crate::npy;

/// The tables the commands write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// `pairs` and `hits`.
    Pairs,
    FirstHit,
    Count,
    Clip,
}

impl Table {
    fn csv_header(self) -> &'static str {
        match self {
            Table::Pairs => "segment,rect,hit,kind,t_enter,t_exit,entry,exit",
            Table::FirstHit => "segment,rect,kind,t_enter,t_exit,entry,exit",
            Table::Count => "rect,hits",
            Table::Clip => "segment,kind,x0,y0,x1,y1",
        }
    }

    /// The numpy dtype of one row: packed, little-endian. `kind` is 0 miss, 1 inside, 2 enter,
    /// 3 exit, 4 cross; `entry`/`exit` are side bits (1 min_x, 2 max_x, 4 min_y, 8 max_y); t and
    /// clipped coordinates are NaN on a miss, `rect` is -1 on a first-hit miss.
    pub fn npy_descr(self) -> &'static str {
        match self {
            Table::Pairs => {
                "[('segment', '<u8'), ('rect', '<u8'), ('hit', '|b1'), ('kind', '|u1'), \
                 ('t_enter', '<f4'), ('t_exit', '<f4'), ('entry', '|u1'), ('exit', '|u1')]"
            }
            Table::FirstHit => {
                "[('segment', '<u8'), ('rect', '<i8'), ('kind', '|u1'), ('t_enter', '<f4'), \
                 ('t_exit', '<f4'), ('entry', '|u1'), ('exit', '|u1')]"
            }
            Table::Count => "[('rect', '<u8'), ('hits', '<u8')]",
            Table::Clip => {
                "[('segment', '<u8'), ('kind', '|u1'), ('x0', '<f4'), ('y0', '<f4'), \
                 ('x1', '<f4'), ('y1', '<f4')]"
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Csv,
    Npy,
    F32,
    #[cfg_attr(
        not(feature = "parquet"),
        allow(dead_code, reason = "the feature makes them")
    )]
    Parquet,
}

enum Target {
    Stdout(BufWriter<std::io::Stdout>),
    File {
        path: PathBuf,
        writer: BufWriter<tempfile::NamedTempFile>,
    },
    #[cfg(feature = "parquet")]
    Parquet {
        path: PathBuf,
        temp: tempfile::NamedTempFile,
        sink: Box<crate::parquet_io::ParquetSink>,
    },
}

/// Where a command's table goes.
pub struct Sink {
    table: Table,
    format: Format,
    target: Target,
    rows: u64,
}

/// A temporary file in `path`'s folder (so the final rename stays on one file system), created
/// with the permissions a plain new file gets (0666 less the umask), not 0600.
pub fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".rectcast-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

impl Sink {
    /// Whether `out` can hold `table`: checked before any work.
    pub fn check(out: Option<&Path>, table: Table) -> Result<(), String> {
        match out {
            Some(path) => Self::format_of(path, table).map(|_| ()),
            None => Ok(()),
        }
    }

    fn format_of(path: &Path, table: Table) -> Result<Format, String> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("npy") => Ok(Format::Npy),
            #[cfg(feature = "parquet")]
            Some("parquet") => Ok(Format::Parquet),
            #[cfg(not(feature = "parquet"))]
            Some("parquet") => Err(format!(
                "{}: {}",
                path.display(),
                crate::records::NO_PARQUET
            )),
            Some("f32") if table == Table::Clip => Ok(Format::F32),
            Some("f32") => Err(format!(
                "{}: .f32 output holds 4 f32 per record, which only clip writes; use .npy or .csv",
                path.display()
            )),
            _ => Ok(Format::Csv),
        }
    }

    /// Opens `out` (or stdout) for `table` and writes the table's header.
    pub fn create(out: Option<&Path>, table: Table) -> Result<Self, String> {
        let (format, target) = match out {
            None => (
                Format::Csv,
                Target::Stdout(BufWriter::with_capacity(1 << 20, std::io::stdout())),
            ),
            Some(path) => {
                let format = Self::format_of(path, table)?;
                let temp = temp_beside(path).map_err(|e| io_error(path, e))?;
                #[cfg(feature = "parquet")]
                if format == Format::Parquet {
                    let file = temp.reopen().map_err(|e| io_error(path, e))?;
                    let sink = crate::parquet_io::ParquetSink::create(file, table)
                        .map(Box::new)
                        .map_err(|e| io_error(path, e))?;
                    let target = Target::Parquet {
                        path: path.to_owned(),
                        temp,
                        sink,
                    };
                    return Ok(Self {
                        table,
                        format,
                        target,
                        rows: 0,
                    });
                }
                (
                    format,
                    Target::File {
                        path: path.to_owned(),
                        writer: BufWriter::with_capacity(1 << 20, temp),
                    },
                )
            }
        };
        let mut sink = Self {
            table,
            format,
            target,
            rows: 0,
        };
        match format {
            Format::Csv => {
                let header = table.csv_header();
                writeln!(sink.writer(), "{header}").map_err(|e| sink.error(e))?;
            }
            Format::Npy => {
                let header = npy::header(table.npy_descr(), 0, None);
                sink.writer()
                    .write_all(&header)
                    .map_err(|e| sink.error(e))?;
            }
            Format::F32 | Format::Parquet => {}
        }
        Ok(sink)
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.target {
            Target::Stdout(w) => w,
            Target::File { writer, .. } => writer,
            #[cfg(feature = "parquet")]
            Target::Parquet { .. } => unreachable!("Parquet rows go to its sink"),
        }
    }

    fn error(&self, e: impl std::fmt::Display) -> String {
        match &self.target {
            Target::Stdout(_) => format!("writing stdout: {e}"),
            Target::File { path, .. } => io_error(path, e),
            #[cfg(feature = "parquet")]
            Target::Parquet { path, .. } => io_error(path, e),
        }
    }

    /// Rows for a Parquet file go to its sink (only called when the target is one).
    #[cfg(feature = "parquet")]
    fn parquet(
        &mut self,
        write: impl FnOnce(&mut crate::parquet_io::ParquetSink) -> Result<u64, String>,
    ) -> Result<(), String> {
        let Target::Parquet { sink, .. } = &mut self.target else {
            unreachable!("checked by the caller")
        };
        let written = write(sink).map(|rows| self.rows += rows);
        written.map_err(|e| self.error(e))
    }

    /// Runs `write` on the writer and counts the rows it reports; an I/O error names the file.
    fn write_rows(
        &mut self,
        write: impl FnOnce(Format, &mut dyn Write) -> std::io::Result<u64>,
    ) -> Result<(), String> {
        let format = self.format;
        let written = write(format, self.writer());
        match written {
            Ok(rows) => {
                self.rows += rows;
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
        #[cfg(feature = "parquet")]
        if self.format == Format::Parquet {
            return self.parquet(|p| p.pairs(rows));
        }
        self.write_rows(|format, w| {
            let mut count = 0;
            for (segment, rect, r) in rows {
                count += 1;
                match format {
                    Format::Csv if r.hit() => writeln!(
                        w,
                        "{segment},{rect},true,{},{},{},{},{}",
                        r.kind(),
                        r.t_enter,
                        r.t_exit,
                        r.entry_sides(),
                        r.exit_sides()
                    )?,
                    Format::Csv => writeln!(w, "{segment},{rect},false,miss,,,,")?,
                    _ => {
                        w.write_all(&segment.to_le_bytes())?;
                        w.write_all(&rect.to_le_bytes())?;
                        w.write_all(&[r.hit() as u8, r.kind() as u8])?;
                        write_t(w, r)?;
                        w.write_all(&[r.entry_sides().bits() as u8, r.exit_sides().bits() as u8])?;
                    }
                }
            }
            Ok(count)
        })
    }

    /// First-hit rows: one per segment; `rect_ids` maps rect positions to record indices.
    pub fn first_hits(
        &mut self,
        ids: &[u64],
        rect_ids: &[u64],
        first: &[FirstHit],
    ) -> Result<(), String> {
        #[cfg(feature = "parquet")]
        if self.format == Format::Parquet {
            return self.parquet(|p| p.first_hits(ids, rect_ids, first));
        }
        self.write_rows(|format, w| {
            for (segment, f) in ids.iter().zip(first) {
                let r = &f.result;
                let rect = f.rect().map(|rect| rect_ids[rect as usize]);
                match (format, rect) {
                    (Format::Csv, Some(rect)) => writeln!(
                        w,
                        "{segment},{rect},{},{},{},{},{}",
                        r.kind(),
                        r.t_enter,
                        r.t_exit,
                        r.entry_sides(),
                        r.exit_sides()
                    )?,
                    (Format::Csv, None) => writeln!(w, "{segment},,miss,,,,")?,
                    _ => {
                        w.write_all(&segment.to_le_bytes())?;
                        w.write_all(&rect.map_or(-1, |r| r as i64).to_le_bytes())?;
                        w.write_all(&[r.kind() as u8])?;
                        write_t(w, r)?;
                        w.write_all(&[r.entry_sides().bits() as u8, r.exit_sides().bits() as u8])?;
                    }
                }
            }
            Ok(ids.len() as u64)
        })
    }

    /// Count rows: one per rect.
    pub fn counts(&mut self, rect_ids: &[u64], per_rect: &[u64]) -> Result<(), String> {
        #[cfg(feature = "parquet")]
        if self.format == Format::Parquet {
            return self.parquet(|p| p.counts(rect_ids, per_rect));
        }
        self.write_rows(|format, w| {
            for (rect, hits) in rect_ids.iter().zip(per_rect) {
                match format {
                    Format::Csv => writeln!(w, "{rect},{hits}")?,
                    _ => {
                        w.write_all(&rect.to_le_bytes())?;
                        w.write_all(&hits.to_le_bytes())?;
                    }
                }
            }
            Ok(rect_ids.len() as u64)
        })
    }

    /// Clip rows: one per segment.
    pub fn clipped(&mut self, ids: &[u64], clipped: &[Clipped]) -> Result<(), String> {
        #[cfg(feature = "parquet")]
        if self.format == Format::Parquet {
            return self.parquet(|p| p.clipped(ids, clipped));
        }
        self.write_rows(|format, w| {
            for (segment, c) in ids.iter().zip(clipped) {
                let p = c.segment;
                let ends = p.map_or([f32::NAN; 4], |p| [p.x0, p.y0, p.x1, p.y1]);
                match (format, p) {
                    (Format::Csv, Some(p)) => writeln!(
                        w,
                        "{segment},{},{},{},{},{}",
                        c.kind(),
                        p.x0,
                        p.y0,
                        p.x1,
                        p.y1
                    )?,
                    (Format::Csv, None) => writeln!(w, "{segment},miss,,,,")?,
                    (Format::Npy, _) => {
                        w.write_all(&segment.to_le_bytes())?;
                        w.write_all(&[c.kind() as u8])?;
                        w.write_all(bytemuck::cast_slice(&ends.map(f32::to_le_bytes)))?;
                    }
                    // Parquet rows never reach this writer.
                    (Format::F32 | Format::Parquet, _) => {
                        w.write_all(bytemuck::cast_slice(&ends.map(f32::to_le_bytes)))?
                    }
                }
            }
            Ok(ids.len() as u64)
        })
    }

    /// Flushes, writes the NPY row count, and moves the file into place.
    pub fn finish(self) -> Result<(), String> {
        let (rows, format, descr) = (self.rows, self.format, self.table.npy_descr());
        match self.target {
            Target::Stdout(mut w) => w.flush().map_err(|e| format!("writing stdout: {e}")),
            Target::File { path, writer } => {
                let mut temp = writer
                    .into_inner()
                    .map_err(|e| io_error(&path, e.error()))?;
                if format == Format::Npy {
                    temp.seek(SeekFrom::Start(0))
                        .and_then(|_| temp.write_all(&npy::header(descr, rows, None)))
                        .map_err(|e| io_error(&path, e))?;
                }
                temp.persist(&path).map_err(|e| io_error(&path, e.error))?;
                Ok(())
            }
            #[cfg(feature = "parquet")]
            Target::Parquet { path, temp, sink } => {
                sink.finish().map_err(|e| io_error(&path, e))?;
                temp.persist(&path).map_err(|e| io_error(&path, e.error))?;
                Ok(())
            }
        }
    }
}

/// t_enter and t_exit, NaN on a miss.
fn write_t(w: &mut dyn Write, r: &PairResult) -> std::io::Result<()> {
    let (a, b) = if r.hit() {
        (r.t_enter, r.t_exit)
    } else {
        (f32::NAN, f32::NAN)
    };
    w.write_all(&a.to_le_bytes())?;
    w.write_all(&b.to_le_bytes())
}
