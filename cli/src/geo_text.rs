//! The text formats of GIS data, read whole, one geometry at a time, with where each is:
//! - WKT: one geometry a line (blank lines skipped), an EWKT `SRID=n;` prefix accepted (one
//!   SRID a file), reported and ignored; numbers read straight to f32, rounded to nearest;
//! - GeoJSON: a FeatureCollection, one Feature, or one geometry; numbers read as f64, as
//!   JSON parsers read them, then rounded to f32.
//!
//! Polygons (`polygons.rs`) and polylines (`polylines.rs`) take their geometries from here.

use std::io::Read;
use std::path::Path;
use std::str::FromStr;

use crate::formats::Input;

/// A geometry of a WKT file: its place (`file:line:column`), its line and column, and the
/// geometry or why the line is not one.
pub struct WktGeometry {
    pub place: String,
    pub line: u64,
    pub column: usize,
    pub geometry: Result<wkt::Wkt<f32>, String>,
}

/// A geometry of a GeoJSON file: its place (`file: feature i`) and the geometry (none for a
/// feature without one).
pub struct GeoJsonGeometry {
    pub place: String,
    pub geometry: Option<geojson::Geometry>,
}

pub fn read_text(path: &Path) -> Result<String, String> {
    let mut text = String::new();
    Input::open(path)
        .map_err(|e| e.to_string())?
        .data
        .reader()
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text)
}

/// A WKT file's geometries, and the SRID of its EWKT prefixes (`SRID=4326;POLYGON …`, as
/// PostGIS writes them), which must agree. A geometry with z or m values is refused: rectcast
/// is 2-d.
pub fn wkt_geometries(path: &Path) -> Result<(Vec<WktGeometry>, Option<i64>), String> {
    parse_wkt(path, &read_text(path)?)
}

/// [`wkt_geometries`] of a file's text.
pub fn parse_wkt(path: &Path, text: &str) -> Result<(Vec<WktGeometry>, Option<i64>), String> {
    let mut geometries = Vec::new();
    let mut srid: Option<(i64, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let column = line.len() - line.trim_start().len() + 1;
        if line.trim().is_empty() {
            continue;
        }
        let place = format!("{}:{}:{column}", path.display(), n + 1);
        let (its, body) = ewkt_srid(line.trim()).map_err(|e| format!("{place}: {e}"))?;
        if let Some(its) = its {
            match srid {
                None => srid = Some((its, n + 1)),
                Some((first, _)) if first == its => {}
                Some((first, on)) => {
                    return Err(format!(
                        "{place}: SRID={its}, but line {on} has SRID={first}: one coordinate \
                         system a file"
                    ));
                }
            }
        }
        let geometry = match wkt::Wkt::<f32>::from_str(body) {
            Err(e) => Err(format!("not WKT: {e}")),
            Ok(g) => match dimension(&g) {
                wkt::types::Dimension::XY => Ok(g),
                d => Err(format!(
                    "a {} {}: rectcast is 2-d, drop the other coordinates first",
                    type_name(&g),
                    dimension_name(d)
                )),
            },
        };
        geometries.push(WktGeometry {
            place,
            line: n as u64 + 1,
            column,
            geometry,
        });
    }
    Ok((geometries, srid.map(|(srid, _)| srid)))
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

/// Says on stderr that a file's SRID is ignored.
pub fn report_srid(path: &Path, srid: Option<i64>) {
    if let Some(srid) = srid {
        eprintln!(
            "rectcast: {}: EWKT SRID={srid}, ignored: coordinates are used as given",
            path.display()
        );
    }
}

fn dimension(g: &wkt::Wkt<f32>) -> wkt::types::Dimension {
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

pub fn type_name(g: &wkt::Wkt<f32>) -> &'static str {
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

/// A WKT line string's points.
pub fn wkt_points(line: &wkt::types::LineString<f32>) -> Vec<[f32; 2]> {
    line.coords().iter().map(|c| [c.x, c.y]).collect()
}

/// A GeoJSON file's geometries: a FeatureCollection's features', a Feature's, or the one.
pub fn geojson_geometries(path: &Path) -> Result<Vec<GeoJsonGeometry>, String> {
    parse_geojson(path, &read_text(path)?)
}

/// [`geojson_geometries`] of a file's text.
pub fn parse_geojson(path: &Path, text: &str) -> Result<Vec<GeoJsonGeometry>, String> {
    use geojson::GeoJson;
    let name = path.display();
    let geojson = GeoJson::from_str(text).map_err(|e| format!("{name}: not GeoJSON: {e}"))?;
    let placed = |i: usize, geometry| GeoJsonGeometry {
        place: format!("{name}: feature {i}"),
        geometry,
    };
    Ok(match geojson {
        GeoJson::FeatureCollection(fc) => fc
            .features
            .into_iter()
            .enumerate()
            .map(|(i, f)| placed(i, f.geometry))
            .collect(),
        GeoJson::Feature(f) => vec![placed(0, f.geometry)],
        GeoJson::Geometry(g) => vec![GeoJsonGeometry {
            place: format!("{name}: geometry"),
            geometry: Some(g),
        }],
    })
}

/// GeoJSON positions as f32 points (x and y; any further numbers dropped).
pub fn geojson_points(positions: &[geojson::Position]) -> Result<Vec<[f32; 2]>, String> {
    positions
        .iter()
        .map(|p| match p.as_slice() {
            [x, y, ..] => Ok([*x as f32, *y as f32]),
            _ => Err("a position with fewer than 2 numbers".to_string()),
        })
        .collect()
}
