//! GIS text read into rectcast's inputs, one geometry at a time, each with its place: what the
//! `rectcast` CLI and the Python package (`rectcast.read_polygons`, `read_polylines`) read,
//! so that both read a file alike.
//!
//! - **WKT** (`.wkt`): one geometry a line (blank lines skipped). PostGIS's EWKT prefix
//!   (`SRID=4326;POLYGON …`, any case) is read and returned, and must be the same on every
//!   line; the coordinates are used as given. A geometry with z or m values is refused:
//!   rectcast is 2-d.
//! - **GeoJSON** (`.geojson`, `.json`): a FeatureCollection, one Feature, or one geometry.
//!   A position's numbers after x and y are dropped.
//!
//! Numbers are read correctly rounded to f64 ([`parse`]), as shapely and JSON parsers read
//! them; an origin is subtracted in f64 ([`Parsed::rounded`]: geometry far from (0, 0), as
//! web mercator's, keeps its precision in a frame near it, [`auto_origin`]); then each is
//! rounded to f32 (nearest, ties to even): exact for every f32 value and every midpoint
//! between two. The one case this differs from reading straight to f32 is a number within
//! half an f64 unit in the last place of a midpoint without being one (17 significant digits
//! or more), which the f64 reading moves onto it (double rounding).
//!
//! An error names its place: a WKT line and column (of the first token that does not fit, for
//! text that is not WKT), or a GeoJSON feature.
//!
//! A vertex equal to the one before it in its ring or part is dropped, as GEOS ignores it (-0
//! and +0 are equal; a NaN is never, and is left for the caller to refuse). A geometry of the
//! wrong type, or empty, is an error at its place; a file that cannot be read at all (not
//! JSON, two SRIDs) is an error for the whole file.

mod wkt_place;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// Points in order: a ring (its closing repeat, if any, kept) or a line's part.
pub type Points = Vec<[f32; 2]>;

/// Points as the file gives them, in f64, before any shift or rounding.
pub type WidePoints = Vec<[f64; 2]>;

/// Rounding to f32 that moves a vertex by more than this share of the geometry's extent (its
/// bounds' larger side) is said (the CLI's stderr, Python's `RoundingWarning`): the data lie
/// far from the origin for their size, and an origin near them would keep their precision.
pub const DISPLACEMENT_BOUND: f64 = 1.0 / (1u64 << 20) as f64;

/// The origin an automatic choice takes for geometry within `bounds` (min_x, min_y, max_x,
/// max_y): on each axis, the bounds' centre rounded to a whole number (half away from 0)
/// where the bounds lie farther from 0 than their width, so that the shift makes f32's
/// spacing there at least twice finer; else 0. Whole numbers keep whole coordinates whole,
/// and the shift of a coordinate within the bounds is exact in f64.
pub fn auto_origin(bounds: [f64; 4]) -> [f64; 2] {
    let axis = |lo: f64, hi: f64| {
        let far = lo.is_finite() && hi.is_finite() && lo.abs().min(hi.abs()) > hi - lo;
        if far { ((lo + hi) / 2.0).round() } else { 0.0 }
    };
    [axis(bounds[0], bounds[2]), axis(bounds[1], bounds[3])]
}

/// A text format of geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Wkt,
    GeoJson,
}

impl Format {
    /// `.wkt`, `.geojson` or `.json` (any case, gzipped or not: `.wkt.gz`); `None` otherwise.
    pub fn of(path: &Path) -> Option<Self> {
        let extension = |p: &Path| {
            p.extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
        };
        let ext = match extension(path).as_deref() {
            Some("gz") => extension(&path.with_extension("")),
            other => other.map(str::to_string),
        };
        match ext.as_deref() {
            Some("wkt") => Some(Format::Wkt),
            Some("geojson" | "json") => Some(Format::GeoJson),
            _ => None,
        }
    }
}

/// Where a geometry is in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A WKT line and the column its geometry starts at (both 1-based).
    Line { line: u64, column: usize },
    /// A GeoJSON feature (0-based).
    Feature(u64),
    /// A GeoJSON file that is one geometry.
    Geometry,
}

impl Place {
    /// The place in `file`'s words: `file:3:1`, `file: feature 2`, `file: geometry`.
    pub fn in_file(&self, file: impl fmt::Display) -> String {
        match self {
            Place::Line { line, column } => format!("{file}:{line}:{column}"),
            Place::Feature(i) => format!("{file}: feature {i}"),
            Place::Geometry => format!("{file}: geometry"),
        }
    }
}

/// A file's geometries, in order: each one's place, and its rings or parts or why it has
/// none; the SRID of its EWKT prefixes; and each geometry's properties.
#[derive(Debug)]
pub struct Read {
    pub geometries: Vec<(Place, Result<Vec<Points>, String>)>,
    pub srid: Option<i64>,
    /// One a geometry: a GeoJSON feature's properties, and its `id` as the property `id`
    /// where it has no property of that name; none in WKT.
    pub properties: Vec<Properties>,
    /// The farthest the shift and rounding moved a vertex (0 for none), and the extent of the
    /// geometry read (its bounds' larger side; 0 for none).
    pub displacement: f64,
    pub extent: f64,
}

impl Read {
    /// Whether rounding moved a vertex by more than [`DISPLACEMENT_BOUND`] of the extent.
    pub fn moved_far(&self) -> bool {
        self.displacement > DISPLACEMENT_BOUND * self.extent
    }
}

/// A file's geometries as the file gives them ([`parse`]): places, SRID and properties as in
/// [`Read`], each geometry's rings or parts in f64, nothing dropped yet.
#[derive(Debug)]
pub struct Parsed {
    kind: Kind,
    pub geometries: Vec<(Place, Result<Vec<WidePoints>, String>)>,
    pub srid: Option<i64>,
    pub properties: Vec<Properties>,
}

/// A geometry's properties, by name in order of name: each one's text (a string as it is, any
/// other JSON value as serde_json writes it), or none for a JSON null.
pub type Properties = Vec<(String, Option<String>)>;

/// A problem with a whole file (it is not JSON, its lines have two SRIDs): where it shows,
/// if in one place, and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub place: Option<Place>,
    pub message: String,
}

impl FileError {
    /// The problem in `file`'s words: `file:2:1: …`, `file: …`.
    pub fn in_file(&self, file: impl fmt::Display) -> String {
        match self.place {
            Some(place) => format!("{}: {}", place.in_file(file), self.message),
            None => format!("{file}: {}", self.message),
        }
    }
}

/// Which geometries a read takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Polygons and multipolygons, as their rings: a polygon's shell and holes, or every ring
    /// of a multipolygon's parts.
    Polygons,
    /// Line strings and multi line strings, as their parts.
    Lines,
}

/// Reads `text` in `format`, taking geometries of `kind`, rounded where they are (origin
/// (0, 0)): [`parse`], then [`Parsed::rounded`].
///
/// # Errors
/// A problem with the whole file ([`FileError`]); each geometry's own is in [`Read`].
pub fn read(format: Format, kind: Kind, text: &str) -> Result<Read, FileError> {
    Ok(parse(format, kind, text)?.rounded([0.0; 2]))
}

/// Parses `text` in `format`, taking geometries of `kind`, its numbers correctly rounded to
/// f64.
///
/// # Errors
/// A problem with the whole file ([`FileError`]); each geometry's own is in [`Parsed`].
pub fn parse(format: Format, kind: Kind, text: &str) -> Result<Parsed, FileError> {
    match format {
        Format::Wkt => wkt_read(kind, text),
        Format::GeoJson => geojson_read(kind, text),
    }
}

impl Parsed {
    /// The bounds (min_x, min_y, max_x, max_y) of the geometries' finite vertices; `None`
    /// where there is none.
    pub fn bounds(&self) -> Option<[f64; 4]> {
        let mut bounds: Option<[f64; 4]> = None;
        let points = (self.geometries.iter())
            .filter_map(|(_, g)| g.as_ref().ok())
            .flatten()
            .flatten();
        for &[x, y] in points.filter(|[x, y]| x.is_finite() && y.is_finite()) {
            let b = bounds.get_or_insert([x, y, x, y]);
            *b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
        }
        bounds
    }

    /// The geometries less `origin` (in f64), rounded to f32; then a vertex equal to the one
    /// before it in its ring or part dropped, as GEOS ignores it, an empty ring or part absent,
    /// and an empty geometry or an unclosed ring an error.
    pub fn rounded(self, origin: [f64; 2]) -> Read {
        let kind = self.kind;
        let extent = self
            .bounds()
            .map_or(0.0, |b| (b[2] - b[0]).max(b[3] - b[1]));
        let mut displacement = 0.0f64;
        let mut round = |[x, y]: [f64; 2]| {
            let r = [(x - origin[0]) as f32, (y - origin[1]) as f32];
            for (got, was, o) in [(r[0], x, origin[0]), (r[1], y, origin[1])] {
                let moved = (f64::from(got) + o - was).abs();
                if moved > displacement {
                    displacement = moved;
                }
            }
            r
        };
        let geometries = (self.geometries.into_iter())
            .map(|(place, geometry)| {
                let geometry = geometry.and_then(|parts| {
                    let mut parts: Vec<Points> = (parts.into_iter())
                        .map(|part| part.into_iter().map(&mut round).collect())
                        .collect();
                    for part in parts.iter_mut() {
                        part.dedup_by(|b, a| a == b);
                    }
                    // An empty ring or part (`POLYGON ((…), EMPTY)`) is absent, as GEOS reads it.
                    parts.retain(|part| !part.is_empty());
                    if parts.is_empty() {
                        return Err(format!("an empty {}", kind.noun()));
                    }
                    match unclosed(&parts) {
                        Some(e) if kind == Kind::Polygons => Err(e),
                        _ => Ok(parts),
                    }
                });
                (place, geometry)
            })
            .collect();
        Read {
            geometries,
            srid: self.srid,
            properties: self.properties,
            displacement,
            extent,
        }
    }
}

/// The first ring of a polygon that does not end where it starts, as an error: WKT and
/// GeoJSON write every ring closed (GEOS refuses one that is not), so an open one is a
/// mistake in the file, not a ring to close silently.
fn unclosed(rings: &[Points]) -> Option<String> {
    let (r, ring) = (rings.iter().enumerate()).find(|(_, ring)| ring.first() != ring.last())?;
    let (first, last) = (ring[0], ring[ring.len() - 1]);
    Some(format!(
        "ring {r} is not closed: it ends at {} {}, not at its first vertex {} {} (WKT and \
         GeoJSON repeat it at the end)",
        last[0], last[1], first[0], first[1]
    ))
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Polygons => "polygon",
            Kind::Lines => "line, with no point",
        }
    }
}

/// A line's segments, from its parts ([`Kind::Lines`]): vertex k to k + 1 of each part in
/// order, none between parts; a part of one point, a segment of zero length there.
pub fn segments(parts: &[Points]) -> Vec<[f32; 4]> {
    let mut segments = Vec::new();
    for part in parts {
        match part[..] {
            [] => {}
            [[x, y]] => segments.push([x, y, x, y]),
            _ => segments.extend(
                part.windows(2)
                    .map(|w| [w[0][0], w[0][1], w[1][0], w[1][1]]),
            ),
        }
    }
    segments
}

fn wkt_read(kind: Kind, text: &str) -> Result<Parsed, FileError> {
    let mut geometries = Vec::new();
    let mut srid: Option<(i64, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let column = line[..line.len() - line.trim_start().len()].chars().count() + 1;
        let place = Place::Line {
            line: n as u64 + 1,
            column,
        };
        let at = |message| FileError {
            place: Some(place),
            message,
        };
        let (its, body) = ewkt_srid(line.trim()).map_err(at)?;
        if let Some(its) = its {
            match srid {
                None => srid = Some((its, n + 1)),
                Some((first, _)) if first == its => {}
                Some((first, on)) => {
                    return Err(at(format!(
                        "SRID={its}, but line {on} has SRID={first}: one coordinate system a file"
                    )));
                }
            }
        }
        // The column of `offset` in `body`, a slice of `line`.
        let at_offset = |offset: usize| Place::Line {
            line: n as u64 + 1,
            column: line[..body.as_ptr() as usize - line.as_ptr() as usize + offset]
                .chars()
                .count()
                + 1,
        };
        // The wkt crate (and the walk that places its errors) reads a nested geometry by
        // recursion: bounded here, a line nested thousands deep is an error, not an overflow.
        if let Some(offset) = too_deep(body) {
            let message =
                format!("not WKT that rectcast reads: parentheses nested over {MAX_NESTING} deep");
            geometries.push((at_offset(offset), Err(message)));
            continue;
        }
        if let Some(unread) = unread_type(body) {
            geometries.push((place, Err(unread)));
            continue;
        }
        let parsed = wkt::Wkt::<f64>::from_str(body);
        // The crate reads a geometry and ignores what follows it: that is an error here.
        if parsed.is_ok()
            && let Some(offset) = wkt_place::trailing_offset(body)
        {
            let after = "not WKT: text after the geometry (one geometry a line)";
            geometries.push((at_offset(offset), Err(after.to_string())));
            continue;
        }
        let parts = match parsed {
            Err(e) => {
                // The place is the first token that does not fit, where one is found.
                if let Some(offset) = wkt_place::error_offset(body) {
                    geometries.push((at_offset(offset), Err(format!("not WKT: {e}"))));
                    continue;
                }
                Err(format!("not WKT: {e}"))
            }
            Ok(g) => match dimension(&g) {
                wkt::types::Dimension::XY => wkt_parts(kind, g),
                d => Err(format!(
                    "a {} {}: rectcast is 2-d, drop the other coordinates first",
                    type_name(&g),
                    dimension_name(d)
                )),
            },
        };
        geometries.push((place, parts));
    }
    Ok(Parsed {
        kind,
        properties: vec![Properties::new(); geometries.len()],
        geometries,
        srid: srid.map(|(srid, _)| srid),
    })
}

/// The deepest nesting of parentheses a WKT geometry may have: a MULTIPOLYGON needs 3, and
/// each GEOMETRYCOLLECTION around a geometry one more.
pub const MAX_NESTING: usize = 64;

/// The byte offset of the first parenthesis nested deeper than [`MAX_NESTING`], if any.
fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            b'(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(offset);
                }
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Geometry types of WKT (ISO SQL/MM) that the wkt crate does not read: curves, surfaces and
/// triangles.
const UNREAD_TYPES: [&str; 10] = [
    "CIRCULARSTRING",
    "COMPOUNDCURVE",
    "CURVEPOLYGON",
    "MULTICURVE",
    "MULTISURFACE",
    "CURVE",
    "SURFACE",
    "POLYHEDRALSURFACE",
    "TIN",
    "TRIANGLE",
];

/// The geometry types the wkt crate reads.
const READ_TYPES: [&str; 7] = [
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
];

/// Why a geometry whose type rectcast does not read is refused, naming the type (the wkt crate
/// says only "Invalid type encountered"); `None` for a type it reads, or text that does not
/// start with a word (the crate judges those).
fn unread_type(text: &str) -> Option<String> {
    let word = &text[..text
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(text.len())];
    let word = word.to_ascii_uppercase();
    if word.is_empty() || READ_TYPES.contains(&word.as_str()) {
        return None;
    }
    Some(if UNREAD_TYPES.contains(&word.as_str()) {
        format!(
            "a {word}, a WKT type rectcast does not read: write it as POLYGON or LINESTRING \
             geometries first (PostGIS's ST_CurveToLine makes curves into lines)"
        )
    } else {
        format!("not WKT: {word} is not a geometry type")
    })
}

fn wkt_parts(kind: Kind, g: wkt::Wkt<f64>) -> Result<Vec<WidePoints>, String> {
    let points = |line: &wkt::types::LineString<f64>| -> WidePoints {
        line.coords().iter().map(|c| [c.x, c.y]).collect()
    };
    match (kind, g) {
        (Kind::Polygons, wkt::Wkt::Polygon(p)) => Ok(p.rings().iter().map(points).collect()),
        (Kind::Polygons, wkt::Wkt::MultiPolygon(m)) => Ok(m
            .polygons()
            .iter()
            .flat_map(|p| p.rings().iter().map(points))
            .collect()),
        (Kind::Lines, wkt::Wkt::LineString(line)) => Ok(vec![points(&line)]),
        (Kind::Lines, wkt::Wkt::MultiLineString(m)) => {
            Ok(m.line_strings().iter().map(points).collect())
        }
        (Kind::Polygons, other) => Err(format!(
            "a {}, not a POLYGON or MULTIPOLYGON",
            type_name(&other)
        )),
        (Kind::Lines, other) => Err(format!(
            "a {}, not a LINESTRING or MULTILINESTRING",
            type_name(&other)
        )),
    }
}

/// An EWKT line's SRID (`SRID=4326;…`, any case) and the WKT after it; the line itself when it
/// has none.
fn ewkt_srid(line: &str) -> Result<(Option<i64>, &str), String> {
    let Some((head, rest)) = line.split_once(';') else {
        return Ok((None, line));
    };
    let head = head.trim();
    if !head
        .get(..5)
        .is_some_and(|h| h.eq_ignore_ascii_case("SRID="))
    {
        return Ok((None, line));
    }
    let srid = head[5..].trim().parse::<i64>().map_err(|_| {
        format!("an EWKT prefix {head:?} whose SRID is not an integer (SRID=4326;POLYGON …)")
    })?;
    Ok((Some(srid), rest.trim()))
}

fn dimension(g: &wkt::Wkt<f64>) -> wkt::types::Dimension {
    match g {
        wkt::Wkt::Point(g) => g.dimension(),
        wkt::Wkt::LineString(g) => g.dimension(),
        wkt::Wkt::Polygon(g) => g.dimension(),
        wkt::Wkt::MultiPoint(g) => g.dimension(),
        wkt::Wkt::MultiLineString(g) => g.dimension(),
        wkt::Wkt::MultiPolygon(g) => g.dimension(),
        wkt::Wkt::GeometryCollection(g) => g.dimension(),
    }
}

/// WKT's name of a dimension beyond x and y ("Z", "M", "ZM").
fn dimension_name(d: wkt::types::Dimension) -> &'static str {
    match d {
        wkt::types::Dimension::XY => "",
        wkt::types::Dimension::XYZ => "Z",
        wkt::types::Dimension::XYM => "M",
        wkt::types::Dimension::XYZM => "ZM",
    }
}

fn type_name(g: &wkt::Wkt<f64>) -> &'static str {
    match g {
        wkt::Wkt::Point(_) => "POINT",
        wkt::Wkt::LineString(_) => "LINESTRING",
        wkt::Wkt::Polygon(_) => "POLYGON",
        wkt::Wkt::MultiPoint(_) => "MULTIPOINT",
        wkt::Wkt::MultiLineString(_) => "MULTILINESTRING",
        wkt::Wkt::MultiPolygon(_) => "MULTIPOLYGON",
        wkt::Wkt::GeometryCollection(_) => "GEOMETRYCOLLECTION",
    }
}

fn geojson_read(kind: Kind, text: &str) -> Result<Parsed, FileError> {
    use geojson::GeoJson;
    let geojson = GeoJson::from_str(text).map_err(|e| FileError {
        place: None,
        message: format!("not GeoJSON: {e}"),
    })?;
    let features = match geojson {
        GeoJson::FeatureCollection(fc) => fc.features,
        GeoJson::Feature(f) => vec![f],
        GeoJson::Geometry(g) => {
            return Ok(Parsed {
                kind,
                geometries: vec![(Place::Geometry, geojson_parts(kind, Some(g)))],
                srid: None,
                properties: vec![Properties::new()],
            });
        }
    };
    let mut read = Parsed {
        kind,
        geometries: Vec::with_capacity(features.len()),
        srid: None,
        properties: Vec::with_capacity(features.len()),
    };
    for (i, feature) in features.into_iter().enumerate() {
        read.properties.push(properties(&feature));
        let parts = geojson_parts(kind, feature.geometry);
        read.geometries.push((Place::Feature(i as u64), parts));
    }
    Ok(read)
}

/// A feature's properties as text, and its `id` where no property has that name.
fn properties(feature: &geojson::Feature) -> Properties {
    let text = |value: &geojson::JsonValue| match value {
        geojson::JsonValue::Null => None,
        geojson::JsonValue::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    };
    let mut properties: Properties = (feature.properties.iter().flatten())
        .map(|(name, value)| (name.clone(), text(value)))
        .collect();
    if let Some(id) = &feature.id
        && !properties.iter().any(|(name, _)| name == "id")
    {
        let id = match id {
            geojson::feature::Id::String(s) => s.clone(),
            geojson::feature::Id::Number(n) => n.to_string(),
        };
        properties.push(("id".to_string(), Some(id)));
    }
    properties
}

fn geojson_parts(
    kind: Kind,
    geometry: Option<geojson::Geometry>,
) -> Result<Vec<WidePoints>, String> {
    use geojson::GeometryValue as G;
    let points = |positions: &Vec<geojson::Position>| -> Result<WidePoints, String> {
        positions
            .iter()
            .map(|p| match p.as_slice() {
                [x, y, ..] => Ok([*x, *y]),
                _ => Err("a position with fewer than 2 numbers".to_string()),
            })
            .collect()
    };
    match (kind, geometry.map(|g| g.value)) {
        (_, None) => Err("a feature without a geometry".to_string()),
        (Kind::Polygons, Some(G::Polygon { coordinates })) => {
            coordinates.iter().map(points).collect()
        }
        (Kind::Polygons, Some(G::MultiPolygon { coordinates })) => {
            coordinates.iter().flatten().map(points).collect()
        }
        (Kind::Lines, Some(G::LineString { coordinates })) => Ok(vec![points(&coordinates)?]),
        (Kind::Lines, Some(G::MultiLineString { coordinates })) => {
            coordinates.iter().map(points).collect()
        }
        (Kind::Polygons, Some(other)) => Err(format!(
            "a {}, not a Polygon or MultiPolygon",
            other.type_name()
        )),
        (Kind::Lines, Some(other)) => Err(format!(
            "a {}, not a LineString or MultiLineString",
            other.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wkt(kind: Kind, text: &str) -> Read {
        read(Format::Wkt, kind, text).unwrap()
    }

    #[test]
    fn a_repeated_vertex_is_dropped_and_an_empty_geometry_refused_at_its_line() {
        let r = wkt(
            Kind::Polygons,
            "POLYGON ((0 0, 4 0, 4 0, 4 4, 0 0))\n\n  POLYGON EMPTY\n",
        );
        assert_eq!(
            r.geometries[0].1,
            Ok(vec![vec![[0., 0.], [4., 0.], [4., 4.], [0., 0.]]])
        );
        assert_eq!(r.geometries[1].0, Place::Line { line: 3, column: 3 });
        assert_eq!(r.geometries[1].1, Err("an empty polygon".to_string()));
    }

    #[test]
    fn a_polygon_ring_that_does_not_end_where_it_starts_is_refused_naming_it() {
        let r = wkt(
            Kind::Polygons,
            "POLYGON ((0 0, 4 0, 4 4, 0 0), (1 1, 2 1, 2 2))\nPOLYGON ((0 0, 4 0, 4 4, 0 4))\n",
        );
        assert_eq!(
            r.geometries[0].1,
            Err(
                "ring 1 is not closed: it ends at 2 2, not at its first vertex 1 1 (WKT and \
                 GeoJSON repeat it at the end)"
                    .to_string()
            )
        );
        assert!(matches!(&r.geometries[1].1, Err(e) if e.starts_with("ring 0 is not closed")));
        // A line need not end where it starts.
        let lines = wkt(Kind::Lines, "LINESTRING (0 0, 4 0, 4 4)\n");
        assert!(lines.geometries[0].1.is_ok());
    }

    #[test]
    fn ewkt_prefixes_give_the_srid_and_two_srids_are_an_error_at_the_second() {
        let r = wkt(
            Kind::Lines,
            "SRID=4326;LINESTRING (0 0, 1 1)\nsrid=4326 ; LINESTRING (1 1, 2 2)\n",
        );
        assert_eq!(r.srid, Some(4326));
        let two = read(
            Format::Wkt,
            Kind::Lines,
            "SRID=4326;LINESTRING (0 0, 1 1)\nSRID=3857;LINESTRING (1 1, 2 2)\n",
        );
        assert_eq!(
            two.unwrap_err().in_file("l.wkt"),
            "l.wkt:2:1: SRID=3857, but line 1 has SRID=4326: one coordinate system a file"
        );
    }

    #[test]
    fn a_lines_segments_run_part_after_part_and_a_point_is_a_zero_length_segment() {
        let r = wkt(
            Kind::Lines,
            "MULTILINESTRING ((0 0, 1 0, 1 0, 1 1), (5 5), (2 2, 3 3))\n",
        );
        let parts = r.geometries[0].1.as_ref().unwrap();
        assert_eq!(
            segments(parts),
            [
                [0., 0., 1., 0.],
                [1., 0., 1., 1.],
                [5., 5., 5., 5.],
                [2., 2., 3., 3.]
            ]
        );
    }

    #[test]
    fn text_that_is_not_wkt_is_placed_at_its_first_token_that_does_not_fit() {
        let r = wkt(
            Kind::Polygons,
            "  SRID=4326;POLYGON ((0 0, 1 0, 1 nan, 0 0))\nPOLYGON ((0 0, 1 0, 1 1, 0 0)\n",
        );
        assert_eq!(
            r.geometries[0].0,
            Place::Line {
                line: 1,
                column: 35
            }
        );
        assert_eq!(
            r.geometries[1].0,
            Place::Line {
                line: 2,
                column: 30
            }
        );
        assert!(matches!(&r.geometries[1].1, Err(e) if e.starts_with("not WKT: ")));
    }

    #[test]
    fn geojson_features_are_placed_by_number_and_the_wrong_type_refused() {
        let r = read(
            Format::GeoJson,
            Kind::Polygons,
            r#"{"type": "FeatureCollection", "features": [
                {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [0, 0]}},
                {"type": "Feature", "properties": {}, "geometry": null}]}"#,
        )
        .unwrap();
        assert_eq!(r.geometries[0].0, Place::Feature(0));
        assert_eq!(
            r.geometries[0].1,
            Err("a Point, not a Polygon or MultiPolygon".to_string())
        );
        assert_eq!(
            r.geometries[1].1,
            Err("a feature without a geometry".to_string())
        );
        assert_eq!(
            Place::Feature(1).in_file("p.geojson"),
            "p.geojson: feature 1"
        );
    }

    /// A small seeded generator: the tests' numbers, the same every run.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// A number's exact decimal expansion (every f32 value and midpoint has one).
    fn exact(x: f64) -> String {
        let text = format!("{x:.60}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }

    /// The f32 a polygon's second vertex's x was read as, in either format.
    fn vertex_x(format: Format, number: &str) -> f32 {
        let text = match format {
            Format::Wkt => format!("POLYGON ((0 0, {number} 0, {number} 1, 0 0))\n"),
            Format::GeoJson => format!(
                r#"{{"type": "Polygon", "coordinates": [[[0, 0], [{number}, 0], [{number}, 1], [0, 0]]]}}"#
            ),
        };
        let read = read(format, Kind::Polygons, &text).unwrap();
        let rings = read.geometries[0].1.as_ref().unwrap();
        rings[0][1][0]
    }

    #[test]
    fn float32_values_and_midpoints_between_them_read_to_the_nearest_ties_to_even_in_both_formats()
    {
        // The issue's vertex: halfway between 116.93984985… and 116.93985748…
        let mut cases = vec![("116.939853668212890625".to_string(), 0f32)];
        let lo = 116.939_85_f32; // 116.93984985…, the f32 below the midpoint
        let hi = f32::from_bits(lo.to_bits() + 1);
        cases[0].1 = if lo.to_bits().is_multiple_of(2) {
            lo
        } else {
            hi
        };
        cases.push((format!("{}", f32::MAX as f64), f32::MAX));
        let mut state = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..300 {
            // Positive values of every exponent from 2^-20 to 2^40, and their upper midpoints.
            let exponent = (xorshift(&mut state) % 61) as u32 + 107;
            let bits = (exponent << 23) | (xorshift(&mut state) as u32 & 0x7f_ffff);
            let (lo, hi) = (f32::from_bits(bits), f32::from_bits(bits + 1));
            let midpoint = (f64::from(lo) + f64::from(hi)) / 2.0;
            let even = if bits.is_multiple_of(2) { lo } else { hi };
            cases.push((format!("{}", f64::from(lo)), lo));
            cases.push((exact(f64::from(lo)), lo));
            cases.push((exact(midpoint), even));
            cases.push((format!("-{}", exact(midpoint)), -even));
        }
        for format in [Format::Wkt, Format::GeoJson] {
            let wrong: Vec<_> = (cases.iter())
                .map(|(text, want)| (text, *want, vertex_x(format, text)))
                .filter(|(_, want, got)| want.to_bits() != got.to_bits())
                .collect();
            assert!(
                wrong.is_empty(),
                "{format:?}: {} of {} numbers misread; the first, {}, read as {} (bits {:#x}), \
                 not {} (bits {:#x})",
                wrong.len(),
                cases.len(),
                wrong[0].0,
                wrong[0].2,
                wrong[0].2.to_bits(),
                wrong[0].1,
                wrong[0].1.to_bits()
            );
        }
    }

    #[test]
    fn geometry_far_from_the_origin_keeps_its_precision_shifted_near_it() {
        let text = "LINESTRING (-8240000.2 4970000.7, -8239990 4970010.3)\n";
        for format in [Format::Wkt, Format::GeoJson] {
            let text = match format {
                Format::Wkt => text.to_string(),
                Format::GeoJson => r#"{"type": "LineString", "coordinates": [[-8240000.2, 4970000.7], [-8239990, 4970010.3]]}"#.to_string(),
            };
            let parsed = || parse(format, Kind::Lines, &text).unwrap();
            let bounds = parsed().bounds().unwrap();
            assert_eq!(bounds, [-8240000.2, 4970000.7, -8239990.0, 4970010.3]);
            let origin = auto_origin(bounds);
            assert_eq!(origin, [-8239995.0, 4970006.0]);
            let near = parsed().rounded(origin);
            assert_eq!(
                near.geometries[0].1,
                Ok(vec![vec![[-5.2, -5.3], [5.0, 4.3]]]),
                "{format:?}"
            );
            assert!(
                near.displacement < 1e-6 && !near.moved_far(),
                "{}",
                near.displacement
            );
            // Rounded where it lies, float32's spacing there is 0.5: 0.2 and 0.3 are lost.
            let there = parsed().rounded([0.0; 2]);
            assert_eq!(
                there.geometries[0].1,
                Ok(vec![vec![[-8240000.0, 4970000.5], [-8239990.0, 4970010.5]]])
            );
            assert!((there.displacement - 0.2).abs() < 1e-6 && there.moved_far());
            assert!((there.extent - 10.2).abs() < 1e-6, "{}", there.extent);
        }
    }

    #[test]
    fn the_automatic_origin_shifts_only_an_axis_where_the_data_lie_far_for_their_size() {
        // Straddling 0, or nearer 0 than wide: no shift; centres round half away from 0.
        assert_eq!(auto_origin([-5.0, 10.0, 5.0, 30.0]), [0.0, 0.0]);
        assert_eq!(auto_origin([100.0, -3.0, 103.0, -2.0]), [102.0, -3.0]);
        assert_eq!(auto_origin([100.0, 20.0, 300.0, 29.0]), [0.0, 25.0]);
        assert_eq!(auto_origin([f64::NAN, 5.0, 1.0, 6.0]), [0.0, 6.0]);
    }

    #[test]
    fn wkt_nested_thousands_deep_is_an_error_at_its_column_not_a_stack_overflow() {
        for depth in [3_000, 10_000] {
            let text = format!(
                "{}POINT (1 2){}\n",
                "GEOMETRYCOLLECTION (".repeat(depth),
                ")".repeat(depth)
            );
            let r = wkt(Kind::Polygons, &text);
            assert_eq!(
                r.geometries[0].0,
                Place::Line {
                    line: 1,
                    column: 20 * MAX_NESTING + 20
                }
            );
            assert_eq!(
                r.geometries[0].1,
                Err("not WKT that rectcast reads: parentheses nested over 64 deep".to_string())
            );
        }
        // As deep as allowed is read (and refused for its type, not its depth).
        let text = format!(
            "{}POINT (1 2){}\n",
            "GEOMETRYCOLLECTION (".repeat(MAX_NESTING - 1),
            ")".repeat(MAX_NESTING - 1)
        );
        let r = wkt(Kind::Polygons, &text);
        assert_eq!(
            r.geometries[0].1,
            Err("a GEOMETRYCOLLECTION, not a POLYGON or MULTIPOLYGON".to_string())
        );
    }

    #[test]
    fn an_empty_ring_or_part_is_absent_as_geos_reads_it() {
        let square = vec![[1., 1.], [1., 5.], [5., 5.], [5., 1.], [1., 1.]];
        for text in [
            "MULTIPOLYGON (((1 1, 1 5, 5 5, 5 1, 1 1), EMPTY))",
            "MULTIPOLYGON (((1 1, 1 5, 5 5, 5 1, 1 1)), EMPTY)",
            "POLYGON ((1 1, 1 5, 5 5, 5 1, 1 1), EMPTY)",
        ] {
            let r = wkt(Kind::Polygons, text);
            assert_eq!(r.geometries[0].1, Ok(vec![square.clone()]), "{text}");
        }
        let r = wkt(Kind::Polygons, "MULTIPOLYGON (EMPTY, EMPTY)");
        assert_eq!(r.geometries[0].1, Err("an empty polygon".to_string()));
    }

    #[test]
    fn curves_surfaces_and_triangles_are_named_as_types_rectcast_does_not_read() {
        for (text, word) in [
            (
                "CURVEPOLYGON (CIRCULARSTRING (0 0, 1 1, 2 0, 1 -1, 0 0))",
                "CURVEPOLYGON",
            ),
            ("MultiSurface (((0 0, 1 0, 1 1, 0 0)))", "MULTISURFACE"),
            ("TRIANGLE ((0 0, 1 0, 1 1, 0 0))", "TRIANGLE"),
        ] {
            let r = wkt(Kind::Polygons, text);
            let message = r.geometries[0].1.as_ref().unwrap_err();
            assert!(
                message.starts_with(&format!("a {word}, a WKT type rectcast does not read")),
                "{message}"
            );
        }
        let r = wkt(Kind::Lines, "LINESTRANG (0 0, 1 1)");
        assert_eq!(
            r.geometries[0].1,
            Err("not WKT: LINESTRANG is not a geometry type".to_string())
        );
    }
}
