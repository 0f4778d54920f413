//! WKT and GeoJSON read for Python (`rectcast.read_polygons`, `read_polylines`) by the same
//! crate the CLI reads them with (`rectcast_geotext`): the same geometries, places, errors and
//! SRID. Python reads the file (gzip too) and passes its text.

use std::path::Path;

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rectcast::Polygons;
use rectcast_geotext::{self as geotext, Kind, Points};

/// The format of `path` (`.wkt`, `.geojson`, `.json`, gzipped or not).
fn format(path: &str) -> PyResult<geotext::Format> {
    geotext::Format::of(Path::new(path)).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{path}: geometry is read from .wkt, .geojson or .json"
        ))
    })
}

/// How far the shift and rounding moved a vertex, and the geometry's extent
/// (`rectcast_geotext::Read`): Python warns where the first is over `DISPLACEMENT_BOUND` of
/// the second.
type Moved = (f64, f64);

/// Every geometry of `text` (from `path`) of `kind`, less `origin`, each checked by `check` in
/// file order: the first problem is a ValueError naming its place (`file:line:column`, `file:
/// feature i`), worded as the CLI words it (`what` names a polygon's number, as the CLI's
/// errors do); the file's SRID; and how far rounding moved a vertex.
fn geometries(
    path: &str,
    kind: Kind,
    (text, origin): (&str, [f64; 2]),
    what: impl Fn(usize) -> String,
    check: impl Fn(usize, &[Points]) -> Result<(), String>,
) -> PyResult<(Vec<Vec<Points>>, Option<i64>, Moved)> {
    let read = geotext::parse(format(path)?, kind, text)
        .map_err(|e| PyValueError::new_err(e.in_file(path)))?
        .rounded(origin);
    let moved = (read.displacement, read.extent);
    let mut geometries = Vec::with_capacity(read.geometries.len());
    for (i, (place, parts)) in read.geometries.into_iter().enumerate() {
        let at = place.in_file(path);
        let parts = parts.map_err(|e| PyValueError::new_err(format!("{at}: {}{e}", what(i))))?;
        check(i, &parts).map_err(|e| PyValueError::new_err(format!("{at}: {e}")))?;
        geometries.push(parts);
    }
    Ok((geometries, read.srid, moved))
}

/// `rectcast_geotext::auto_origin`: the origin `origin="auto"` takes for geometry within
/// `bounds` (min_x, min_y, max_x, max_y), the CLI's `--origin auto` rule.
#[pyfunction]
pub(crate) fn auto_origin(bounds: [f64; 4]) -> (f64, f64) {
    let [x, y] = geotext::auto_origin(bounds);
    (x, y)
}

type Vertices<'py> = Bound<'py, PyArray2<f32>>;
type Offsets<'py> = Bound<'py, PyArray1<i64>>;

/// A WKT or GeoJSON file's polygons as GeoArrow's flat form: (vertices float32 (V, 2),
/// ring_offsets, polygon_offsets, srid, (displacement, extent)), less `origin`. Polygon i is
/// the file's geometry i; each is checked as the engine checks it, and the first that is not
/// valid raises naming its place.
#[pyfunction]
#[pyo3(signature = (path, text, origin = (0.0, 0.0)))]
pub(crate) fn read_polygons<'py>(
    py: Python<'py>,
    path: &str,
    text: &str,
    origin: (f64, f64),
) -> PyResult<(
    Vertices<'py>,
    Offsets<'py>,
    Offsets<'py>,
    Option<i64>,
    Moved,
)> {
    let number = |i| format!("polygon {i}: ");
    let check = |i, polygon: &[Points]| {
        Polygons::from_polygons([polygon])
            .map(|_| ())
            .map_err(|mut e| {
                e.index = i;
                e.to_string()
            })
    };
    let origin = [origin.0, origin.1];
    let (polygons, srid, moved) = geometries(path, Kind::Polygons, (text, origin), number, check)?;
    let (mut vertices, mut rings, mut parts) = (Vec::new(), vec![0i64], vec![0i64]);
    for polygon in &polygons {
        for ring in polygon {
            vertices.extend(ring.iter().flatten().copied());
            rings.push((vertices.len() / 2) as i64);
        }
        parts.push(rings.len() as i64 - 1);
    }
    let n = vertices.len() / 2;
    let vertices = vertices.into_pyarray(py).reshape([n, 2])?;
    Ok((
        vertices,
        rings.into_pyarray(py),
        parts.into_pyarray(py),
        srid,
        moved,
    ))
}

/// A WKT or GeoJSON file's line strings as their segments: (segments float32 (S, 4), line,
/// line_segment, lines, srid, (displacement, extent)), less `origin`, line i the file's
/// geometry i.
#[pyfunction]
#[pyo3(signature = (path, text, origin = (0.0, 0.0)))]
pub(crate) fn read_polylines<'py>(
    py: Python<'py>,
    path: &str,
    text: &str,
    origin: (f64, f64),
) -> PyResult<(
    Vertices<'py>,
    Offsets<'py>,
    Offsets<'py>,
    usize,
    Option<i64>,
    Moved,
)> {
    let read = (text, [origin.0, origin.1]);
    let (lines, srid, moved) =
        geometries(path, Kind::Lines, read, |_| String::new(), |_, _| Ok(()))?;
    let (mut segments, mut line, mut within) = (Vec::new(), Vec::new(), Vec::new());
    for (i, parts) in lines.iter().enumerate() {
        let its = geotext::segments(parts);
        line.extend(std::iter::repeat_n(i as i64, its.len()));
        within.extend(0..its.len() as i64);
        segments.extend(its.iter().flatten().copied());
    }
    let n = segments.len() / 4;
    let segments = segments.into_pyarray(py).reshape([n, 4])?;
    Ok((
        segments,
        line.into_pyarray(py),
        within.into_pyarray(py),
        lines.len(),
        srid,
        moved,
    ))
}
