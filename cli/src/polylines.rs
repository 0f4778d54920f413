//! Line strings as `--segments`: roads, trajectories, any polyline is the chain of its
//! segments. A `.wkt` file holds one `LINESTRING (x y, …)` or `MULTILINESTRING` a line; a
//! `.geojson` or `.json` file LineString and MultiLineString features, read by
//! `rectcast_geotext` as the Python package reads them (EWKT, the rounding to f32).
//!
//! Each line is its segments in order, vertex k to vertex k + 1 of each part (a
//! MultiLineString's parts one after another, no segment between them). A vertex equal to the
//! one before it is dropped, as GEOS ignores it; a part left with one vertex is one segment of
//! zero length there (a point). An empty line, or a geometry that is not a line, is an error
//! at its place (`file:line:column`, or the feature), or with `--skip-invalid` is skipped and
//! counted as one record. The query tables then name each segment's line (`line`, counting
//! every geometry of the file from 0) and its place in it (`line_segment`, counting on through a
//! MultiLineString's parts), as the Python package does (`rectcast.Polylines`).

use std::io::Read;
use std::path::Path;

use rectcast_geotext as geotext;

use crate::formats::Data;
use crate::records::SEGMENTS;
use crate::table::{FileError, LineIndex, Place, Raw, RecordSource};

/// A polyline file read whole: its records (segments, and one invalid record for each line
/// that has none), where each line starts, and its SRID.
struct Polylines {
    records: Vec<Raw>,
    index: LineIndex,
    srid: Option<i64>,
    properties: Vec<geotext::Properties>,
}

/// Whether `path` names a polyline file (`.wkt`, `.geojson`, `.json`, gzipped or not).
pub fn is_polyline_file(path: &Path) -> bool {
    geotext::Format::of(path).is_some()
}

fn read(format: geotext::Format, path: &Path, data: Data) -> Result<Polylines, FileError> {
    let mut text = String::new();
    data.reader()
        .read_to_string(&mut text)
        .map_err(|e| FileError::new(path, Place::File, e.to_string()))?;
    let parsed = geotext::parse(format, geotext::Kind::Lines, &text).map_err(|e| {
        let place = e.place.map_or(Place::File, place);
        FileError::new(path, place, e.message)
    })?;
    let read = crate::origin::rounded(parsed, path);
    let mut records = Vec::new();
    let mut starts = Vec::with_capacity(read.geometries.len());
    for (at, parts) in read.geometries {
        starts.push(records.len() as u64);
        let place = place(at);
        match parts {
            Ok(parts) => records.extend(
                geotext::segments(&parts)
                    .into_iter()
                    .map(|segment| Raw::Values(segment, place.clone())),
            ),
            Err(e) => records.push(Raw::Invalid(FileError::new(path, place, e))),
        }
    }
    Ok(Polylines {
        records,
        index: LineIndex::new(starts),
        srid: read.srid,
        properties: read.properties,
    })
}

/// A geometry's place as a record's.
fn place(at: geotext::Place) -> Place {
    match at {
        geotext::Place::Line { line, column } => Place::Line { line, column },
        geotext::Place::Feature(feature) => Place::Feature(feature),
        geotext::Place::Geometry => Place::File,
    }
}

/// A polyline file's records, as a format reads them (`formats::Format::reader`).
pub struct LinesSource {
    records: std::vec::IntoIter<Raw>,
    count: usize,
    size: u64,
    index: LineIndex,
    srid: Option<i64>,
    properties: Vec<geotext::Properties>,
    /// The kept properties (`--keep`).
    kept: Vec<String>,
}

impl LinesSource {
    /// Reads `data` (at `path`) whole; only segments are lines.
    pub fn open(
        format: geotext::Format,
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
            index: lines.index,
            srid: lines.srid,
            properties: lines.properties,
            kept: Vec::new(),
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

    /// A bad value's place is its line's (`file:line`: a record's fields have no column).
    fn column(&self, _field: usize) -> usize {
        0
    }

    fn lines(&self) -> Option<(LineIndex, Option<i64>)> {
        Some((self.index.clone(), self.srid))
    }

    /// Every property a feature has.
    fn columns(&self) -> Vec<String> {
        property_names(&self.properties)
    }

    fn keep(&mut self, names: &[String]) -> Result<(), FileError> {
        self.kept = names.to_vec();
        Ok(())
    }

    /// A segment's kept values are its line's properties.
    fn kept(&self, out: &mut crate::table::Kept) {
        let given = (self.count - self.records.len()) as u64;
        let (line, _) = self.index.of(given - 1);
        let properties = &self.properties[line as usize];
        for name in &self.kept {
            out.push(property(properties, name));
        }
    }
}

/// The names of the properties the features have, each once, in the order first met.
pub fn property_names(properties: &[geotext::Properties]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, _) in properties.iter().flatten() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// A feature's property `name`: none where it has none, or null.
pub fn property<'a>(properties: &'a geotext::Properties, name: &str) -> Option<&'a str> {
    let value = properties.iter().find(|(n, _)| n == name);
    value.and_then(|(_, value)| value.as_deref())
}
