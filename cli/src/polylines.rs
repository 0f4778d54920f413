//! Line strings as `--segments`: roads, trajectories, any polyline is the chain of its
//! segments. A `.wkt` file holds one `LINESTRING (x y, …)` or `MULTILINESTRING` a line; a
//! `.geojson` or `.json` file LineString and MultiLineString features (geo_text.rs: EWKT, the
//! rounding to f32).
//!
//! Each line is its segments in order, vertex k to vertex k + 1 of each part (a
//! MultiLineString's parts one after another, no segment between them). A vertex equal to the
//! one before it is dropped, as GEOS drops it; a part left with one vertex is one segment of
//! zero length there (a point). An empty line, or a geometry that is not a line, is an error
//! at its place (`file:line:column`, or the feature), or with `--skip-invalid` is skipped and
//! counted as one record. The query tables then name each segment's line (`line`, counting
//! every line of the file from 0) and its place in it (`line_segment`, counting on through a
//! MultiLineString's parts), as the Python package does (`rectcast.Polylines`).

use std::io::Read;
use std::path::Path;

use crate::formats::{Data, Format, Input};
use crate::geo_text::{self, GeoJsonGeometry, WktGeometry};
use crate::records::SEGMENTS;
use crate::table::{FileError, Place, Raw, RecordSource};

/// Which line each record of a polyline file is on: the record index at which each line
/// starts.
#[derive(Debug, Default)]
pub struct LineIndex {
    starts: Vec<u64>,
}

impl LineIndex {
    /// Record `segment`'s line, and its place in that line.
    pub fn of(&self, segment: u64) -> (u64, u64) {
        let line = self.starts.partition_point(|&start| start <= segment) - 1;
        (line as u64, segment - self.starts[line])
    }
}

/// A polyline file read whole: its records (segments, and one invalid record for each line
/// that has none), where each line starts, and its SRID.
struct Polylines {
    records: Vec<Raw>,
    index: LineIndex,
    srid: Option<i64>,
}

/// Whether `path` names a polyline file (`.wkt`, `.geojson`, `.json`, gzipped or not).
pub fn is_polyline_file(path: &Path) -> bool {
    matches!(format_of(path), Format::Wkt | Format::GeoJson)
}

fn format_of(path: &Path) -> Format {
    match path.extension().map(|e| e.to_ascii_lowercase()) {
        Some(e) if e == "gz" => Format::of(&path.with_extension("")),
        _ => Format::of(path),
    }
}

/// The line index of a polyline file (`None` for any other), its SRID said on stderr.
pub fn line_index(path: &Path) -> Result<Option<LineIndex>, String> {
    if !is_polyline_file(path) {
        return Ok(None);
    }
    let input = Input::open(path).map_err(|e| e.to_string())?;
    let lines = read(input.format, path, input.data).map_err(|e| e.to_string())?;
    geo_text::report_srid(path, lines.srid);
    Ok(Some(lines.index))
}

fn read(format: Format, path: &Path, data: Data) -> Result<Polylines, FileError> {
    let mut text = String::new();
    data.reader()
        .read_to_string(&mut text)
        .map_err(|e| FileError::new(path, Place::File, e.to_string()))?;
    let whole = |e: String| FileError::new(path, Place::File, e);
    let (lines, srid): (Vec<PlacedLine>, _) = match format {
        Format::Wkt => {
            let (geometries, srid) = geo_text::parse_wkt(path, &text).map_err(whole)?;
            (geometries.into_iter().map(wkt_line).collect(), srid)
        }
        _ => {
            let geometries = geo_text::parse_geojson(path, &text).map_err(whole)?;
            let lines = geometries.into_iter().enumerate();
            (lines.map(|(i, g)| geojson_line(i, g)).collect(), None)
        }
    };
    let mut records = Vec::new();
    let mut starts = Vec::with_capacity(lines.len());
    for (place, parts) in lines {
        starts.push(records.len() as u64);
        let segments = parts.and_then(|parts| {
            let segments = segments_of(&parts);
            match segments.is_empty() {
                true => Err("an empty line, with no point".to_string()),
                false => Ok(segments),
            }
        });
        match segments {
            Ok(segments) => records.extend(
                segments
                    .into_iter()
                    .map(|segment| Raw::Values(segment, place.clone())),
            ),
            Err(e) => records.push(Raw::Invalid(FileError::new(path, place, e))),
        }
    }
    Ok(Polylines {
        records,
        index: LineIndex { starts },
        srid,
    })
}

/// A line's parts, each its points.
type Part = Vec<[f32; 2]>;

/// A line's place, and its parts or why it has none.
type PlacedLine = (Place, Result<Vec<Part>, String>);

fn wkt_line(g: WktGeometry) -> PlacedLine {
    let place = Place::Line {
        line: g.line,
        column: g.column,
    };
    let parts = g.geometry.and_then(|geometry| match geometry {
        wkt::Wkt::LineString(line) => Ok(vec![geo_text::wkt_points(&line)]),
        wkt::Wkt::MultiLineString(lines) => Ok(lines
            .line_strings()
            .iter()
            .map(geo_text::wkt_points)
            .collect()),
        other => Err(format!(
            "a {}, not a LINESTRING or MULTILINESTRING",
            geo_text::type_name(&other)
        )),
    });
    (place, parts)
}

fn geojson_line(feature: usize, g: GeoJsonGeometry) -> PlacedLine {
    use geojson::GeometryValue;
    let place = Place::Feature(feature as u64);
    let parts = match g.geometry.map(|g| g.value) {
        None => Err("a feature without a geometry".to_string()),
        Some(GeometryValue::LineString { coordinates }) => {
            geo_text::geojson_points(&coordinates).map(|points| vec![points])
        }
        Some(GeometryValue::MultiLineString { coordinates }) => coordinates
            .iter()
            .map(|part| geo_text::geojson_points(part))
            .collect(),
        Some(other) => Err(format!(
            "a {}, not a LineString or MultiLineString",
            other.type_name()
        )),
    };
    (place, parts)
}

/// A line's segments: each part's, vertex to next vertex, a repeated vertex dropped; a part of
/// one vertex, a segment from it to itself; an empty part, none.
fn segments_of(parts: &[Part]) -> Vec<[f32; 4]> {
    let mut segments = Vec::new();
    for part in parts {
        let mut points = part.clone();
        // -0 and +0 are equal here, as they are to GEOS; NaN is never equal, and is refused
        // later as a NaN.
        points.dedup_by(|b, a| a == b);
        match points[..] {
            [] => {}
            [[x, y]] => segments.push([x, y, x, y]),
            _ => segments.extend(
                points
                    .windows(2)
                    .map(|w| [w[0][0], w[0][1], w[1][0], w[1][1]]),
            ),
        }
    }
    segments
}

/// A polyline file's records, as a format reads them ([`Format::reader`]).
pub struct LinesSource {
    records: std::vec::IntoIter<Raw>,
    count: usize,
    size: u64,
}

impl LinesSource {
    /// Reads `data` (at `path`) whole; only segments are lines.
    pub fn open(
        format: Format,
        path: &Path,
        data: Data,
        columns: &'static [&'static str],
        size: u64,
    ) -> Result<Self, FileError> {
        if columns != SEGMENTS.names() {
            return Err(FileError::new(
                path,
                Place::File,
                "WKT and GeoJSON line strings are read as --segments, and polygons as \
                 --polygons; rects and shapes are records (CSV, NPY, .f32, Parquet)",
            ));
        }
        let lines = read(format, path, data)?;
        Ok(Self {
            count: lines.records.len(),
            records: lines.records.into_iter(),
            size,
        })
    }
}

impl RecordSource for LinesSource {
    fn next(&mut self) -> Result<Option<Raw>, FileError> {
        Ok(self.records.next())
    }

    /// The file's bytes, in proportion to the records given out (the file was read whole).
    fn bytes(&self) -> u64 {
        let given = self.count - self.records.len();
        (self.size as u128 * given as u128 / self.count.max(1) as u128) as u64
    }

    /// A bad value's place is its line's (`file:line:column` of the geometry).
    fn column(&self, _field: usize) -> usize {
        0
    }
}
