//! Polygon inputs (`--polygons`), read and checked whole before any work:
//! - `.wkt`: one `POLYGON ((x y, …), (hole …))` or `MULTIPOLYGON` a line (blank lines skipped);
//! - `.geojson` or `.json`: a FeatureCollection of Polygons and MultiPolygons, one Feature, or
//!   one geometry;
//! - the flat form: the vertices as records (`.npy` float32 [V, 2], CSV `x,y`, `.f32`), with
//!   `--polygon-offsets`, an `.npy` of P + 1 integers from 0 to V (polygon i is vertices
//!   `offsets[i]..offsets[i + 1]`).
//!
//! WKT numbers are read straight to f32 (rounded to nearest); GeoJSON numbers as f64 first, as
//! JSON parsers read them, then rounded to f32. A ring may repeat its first vertex at the end.
//! A polygon's rings are its outer ring and holes, or every ring of a MultiPolygon's parts
//! (docs/semantics.md, "Segment × polygon"); one whose ring is not a valid simple ring is an
//! error naming its place (`file:line:column` in WKT, the feature in GeoJSON, the
//! polygon in the flat form), or with `--skip-invalid` is skipped and counted. Polygon ids (the
//! output's `polygon` column) count every polygon of the file from 0, skipped ones included.

use std::io::Read;
use std::path::Path;

use rectcast::Polygons;

use crate::formats::Input;
use crate::formats::npy;
use crate::geo_text;
use crate::records::{self, Records, Skipped};

/// A polygon file read whole: the valid polygons, their ids, and the ones skipped.
pub struct PolygonFile {
    pub polygons: Polygons,
    pub ids: Vec<u64>,
    skipped: Skipped,
    path: std::path::PathBuf,
    /// The SRID of an EWKT file's `SRID=…;` prefixes (one for the whole file).
    srid: Option<i64>,
}

impl PolygonFile {
    /// Reads and checks `path` (and the flat form's `offsets`).
    pub fn read(path: &Path, offsets: Option<&Path>, skip_invalid: bool) -> Result<Self, String> {
        let name = path.display();
        let extension = |p: &Path| {
            p.extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
        };
        // `.wkt.gz` is WKT: gzip streams are decompressed on the way in.
        let ext = match extension(path).as_deref() {
            Some("gz") => extension(&path.with_extension("")),
            other => other.map(str::to_string),
        };
        let mut srid = None;
        let rings = match (ext.as_deref(), offsets) {
            (Some("wkt"), None) => {
                let (rings, its) = wkt_rings(path)?;
                srid = its;
                rings
            }
            (Some("geojson" | "json"), None) => geojson_rings(path)?,
            (Some("wkt" | "geojson" | "json"), Some(_)) => {
                return Err(format!(
                    "{name}: --polygon-offsets goes with a flat vertex file, not WKT or GeoJSON"
                ));
            }
            (_, Some(offsets)) => flat_rings(path, offsets)?,
            (_, None) => {
                return Err(format!(
                    "{name}: polygons are .wkt, .geojson or .json; or vertices (.npy [V, 2], CSV \
                     x,y, .f32) with --polygon-offsets"
                ));
            }
        };
        let mut skipped = Skipped::default();
        let mut kept = Vec::new();
        let mut ids = Vec::new();
        for (i, (place, rings)) in rings.into_iter().enumerate() {
            let checked = match rings {
                Ok(rings) => Polygons::from_polygons([&rings])
                    .map(|_| rings)
                    .map_err(|mut e| {
                        e.index = i;
                        format!("{place}: {e}")
                    }),
                Err(e) => Err(format!("{place}: polygon {i}: {e}")),
            };
            match checked {
                Ok(rings) => {
                    kept.push(rings);
                    ids.push(i as u64);
                }
                Err(e) if skip_invalid => skipped.add(e),
                Err(e) => return Err(e),
            }
        }
        let polygons = Polygons::from_polygons(&kept).map_err(|e| format!("{name}: {e}"))?;
        Ok(Self {
            polygons,
            ids,
            skipped,
            path: path.to_path_buf(),
            srid,
        })
    }

    /// Says on stderr how many polygons were skipped, and where the first were.
    pub fn report(&self) {
        geo_text::report_srid(&self.path, self.srid);
        if let Some(line) = self.skipped.report(&self.path) {
            eprintln!("rectcast: {line}");
        }
    }
}

/// A polygon's rings: its outer ring and holes, or a multipolygon's parts' rings.
type PolygonRings = Vec<Vec<[f32; 2]>>;

/// Each polygon's place, and its rings or why it has none.
type Rings = Vec<(String, Result<PolygonRings, String>)>;

/// A WKT file's polygons, and the SRID of its EWKT prefixes.
fn wkt_rings(path: &Path) -> Result<(Rings, Option<i64>), String> {
    let (geometries, srid) = geo_text::wkt_geometries(path)?;
    let rings = geometries
        .into_iter()
        .map(|g| {
            let rings = g.geometry.and_then(|geometry| match geometry {
                wkt::Wkt::Polygon(polygon) if polygon.rings().is_empty() => {
                    Err("an empty POLYGON".to_string())
                }
                wkt::Wkt::Polygon(polygon) => {
                    Ok(polygon.rings().iter().map(geo_text::wkt_points).collect())
                }
                wkt::Wkt::MultiPolygon(parts) if parts.polygons().is_empty() => {
                    Err("an empty MULTIPOLYGON".to_string())
                }
                wkt::Wkt::MultiPolygon(parts) => Ok(parts
                    .polygons()
                    .iter()
                    .flat_map(|p| p.rings().iter().map(geo_text::wkt_points))
                    .collect()),
                other => Err(format!(
                    "a {}, not a POLYGON or MULTIPOLYGON",
                    geo_text::type_name(&other)
                )),
            });
            (g.place, rings)
        })
        .collect();
    Ok((rings, srid))
}

fn geojson_rings(path: &Path) -> Result<Rings, String> {
    use geojson::GeometryValue;
    let ring = |geometry: Option<geojson::Geometry>| match geometry.map(|g| g.value) {
        None => Err("a feature without a geometry".to_string()),
        Some(GeometryValue::Polygon { coordinates }) if coordinates.is_empty() => {
            Err("an empty Polygon".to_string())
        }
        Some(GeometryValue::Polygon { coordinates }) => coordinates
            .iter()
            .map(|r| geo_text::geojson_points(r))
            .collect(),
        Some(GeometryValue::MultiPolygon { coordinates }) if coordinates.is_empty() => {
            Err("an empty MultiPolygon".to_string())
        }
        Some(GeometryValue::MultiPolygon { coordinates }) => coordinates
            .iter()
            .flatten()
            .map(|r| geo_text::geojson_points(r))
            .collect(),
        Some(other) => Err(format!(
            "a {}, not a Polygon or MultiPolygon",
            other.type_name()
        )),
    };
    Ok(geo_text::geojson_geometries(path)?
        .into_iter()
        .map(|g| (g.place, ring(g.geometry)))
        .collect())
}

fn flat_rings(path: &Path, offsets_path: &Path) -> Result<Rings, String> {
    let (vertices, _) = Records::open(path, &records::VERTICES, false)
        .and_then(|mut file| file.read_all())
        .map_err(|e| e.to_string())?;
    let offsets = read_offsets(offsets_path)?;
    let name = offsets_path.display();
    if offsets.first() != Some(&0) || offsets.last() != Some(&(vertices.len() as u64)) {
        return Err(format!(
            "{name}: offsets must run from 0 to the {} vertices of {} (found {} offsets, from {} to {})",
            vertices.len(),
            path.display(),
            offsets.len(),
            offsets.first().map_or("none".into(), u64::to_string),
            offsets.last().map_or("none".into(), u64::to_string),
        ));
    }
    Ok(offsets
        .windows(2)
        .map(|w| {
            let place = path.display().to_string();
            let ring = (w[0] <= w[1])
                .then(|| vec![vertices[w[0] as usize..w[1] as usize].to_vec()])
                .ok_or_else(|| format!("offsets {} then {}: not in order", w[0], w[1]));
            (place, ring)
        })
        .collect())
}

/// An `.npy` of integers (`<i4`, `<i8`, `<u4`, `<u8`), one dimension.
fn read_offsets(path: &Path) -> Result<Vec<u64>, String> {
    let name = path.display();
    let mut reader = Input::open(path).map_err(|e| e.to_string())?.data.reader();
    let header = npy::read_header(&mut reader).map_err(|e| format!("{name}: {e}"))?;
    let width = match header.descr.as_str() {
        "<i4" | "<u4" => 4,
        "<i8" | "<u8" => 8,
        other => {
            return Err(format!(
                "{name}: offsets must be int32, int64, uint32 or uint64, found descr {other:?}"
            ));
        }
    };
    let [count] = header.shape[..] else {
        return Err(format!(
            "{name}: offsets must be one-dimensional, found shape {:?}",
            header.shape
        ));
    };
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{name}: {e}"))?;
    if (bytes.len() as u64) < count * width {
        return Err(format!("{name}: truncated: {count} offsets expected"));
    }
    let signed = header.descr.starts_with("<i");
    (0..count as usize)
        .map(|i| {
            let b = &bytes[i * width as usize..(i + 1) * width as usize];
            let v: i128 = match (width, signed) {
                (4, true) => i32::from_le_bytes(b.try_into().unwrap()) as i128,
                (4, false) => u32::from_le_bytes(b.try_into().unwrap()) as i128,
                (_, true) => i64::from_le_bytes(b.try_into().unwrap()) as i128,
                (_, false) => u64::from_le_bytes(b.try_into().unwrap()) as i128,
            };
            u64::try_from(v).map_err(|_| format!("{name}: offset {i} is {v}, below 0"))
        })
        .collect()
}
