//! Polygon inputs (`--polygons`), read and checked whole before any work:
//! - `.wkt`: one `POLYGON ((x y, …), (hole …))` or `MULTIPOLYGON` a line (blank lines skipped);
//! - `.geojson` or `.json`: a FeatureCollection of Polygons and MultiPolygons, one Feature, or
//!   one geometry;
//! - the flat form: the vertices as records (`.npy` float32 [V, 2], CSV `x,y`, `.f32`), with
//!   `--polygon-offsets`, an `.npy` of P + 1 integers from 0 to V (polygon i is vertices
//!   `offsets[i]..offsets[i + 1]`).
//!
//! WKT and GeoJSON are read by `rectcast_geotext`, as the Python package reads them: numbers
//! rounded to f32, EWKT's SRID said once and ignored, a vertex equal to the one before it
//! dropped as GEOS ignores it. A ring ends where it starts, as WKT and GeoJSON write
//! rings (one that does not is an error at its place, as GEOS refuses it); in the flat form a
//! ring may repeat its first vertex at the end or not.
//! A polygon's rings are its outer ring and holes, or every ring of a MultiPolygon's parts
//! (docs/semantics.md, "Segment × polygon"); one whose ring is not a valid simple ring is an
//! error naming its place (`file:line:column` in WKT, the feature in GeoJSON, the
//! polygon in the flat form), or with `--skip-invalid` is skipped and counted. Polygon ids (the
//! output's `polygon` column) count every polygon of the file from 0, skipped ones included.

use std::io::Read;
use std::path::Path;

use rectcast::Polygons;

use rectcast_geotext as geotext;

use crate::formats::Input;
use crate::formats::npy;
use crate::kept::{self, Keeping, Side, Wanted};
use crate::records::{self, Records, Skipped};
use crate::table::Kept;

/// A polygon file read whole: the valid polygons, their ids, and the ones skipped.
pub struct PolygonFile {
    pub polygons: Polygons,
    pub ids: Vec<u64>,
    skipped: Skipped,
    path: std::path::PathBuf,
    /// The SRID of an EWKT file's `SRID=…;` prefixes (one for the whole file).
    srid: Option<i64>,
    /// Each valid polygon's GeoJSON properties (none from WKT or the flat form), and the names
    /// of every feature's, skipped ones included.
    properties: Vec<geotext::Properties>,
    property_names: Vec<String>,
}

impl PolygonFile {
    /// Reads and checks `path` (and the flat form's `offsets`).
    pub fn read(path: &Path, offsets: Option<&Path>, skip_invalid: bool) -> Result<Self, String> {
        let name = path.display();
        let mut srid = None;
        let mut properties = Vec::new();
        // `.wkt.gz` is WKT: gzip streams are decompressed on the way in.
        let rings = match (geotext::Format::of(path), offsets) {
            (Some(format), None) => {
                let (rings, its, all) = text_rings(path, format)?;
                srid = its;
                properties = all;
                rings
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{name}: --polygon-offsets goes with a flat vertex file, not WKT or GeoJSON"
                ));
            }
            (None, Some(offsets)) => flat_rings(path, offsets)?,
            (None, None) => {
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
        let property_names = crate::polylines::property_names(&properties);
        if !properties.is_empty() {
            properties = ids
                .iter()
                .map(|&i| std::mem::take(&mut properties[i as usize]))
                .collect();
        }
        Ok(Self {
            polygons,
            ids,
            skipped,
            path: path.to_path_buf(),
            srid,
            properties,
            property_names,
        })
    }

    /// What the polygons offer to `--keep` (GeoJSON properties), and each valid polygon's
    /// values of those of `wanted` it has.
    pub fn keep(&self, wanted: &[Wanted]) -> (Keeping, Kept) {
        let has = self.property_names.clone();
        let keeping = Keeping::new(
            &self.path,
            has,
            kept::noun(&self.path),
            wanted,
            Side::Targets,
        );
        let mut values = Kept::new(keeping.names.len());
        for polygon in &self.properties {
            for name in &keeping.names {
                values.push(crate::polylines::property(polygon, name));
            }
        }
        (keeping, values)
    }

    /// Says on stderr how many polygons were skipped, and where the first were.
    pub fn report(&self) {
        report_srid(&self.path, self.srid);
        if let Some(line) = self.skipped.report(&self.path) {
            eprintln!("rectcast: {line}");
        }
    }
}

/// A polygon's rings: its outer ring and holes, or a multipolygon's parts' rings.
type PolygonRings = Vec<Vec<[f32; 2]>>;

/// Each polygon's place, and its rings or why it has none.
type Rings = Vec<(String, Result<PolygonRings, String>)>;

/// A WKT or GeoJSON file's polygons (`rectcast_geotext`: repeated vertices dropped), and
/// the SRID of its EWKT prefixes.
fn text_rings(
    path: &Path,
    format: geotext::Format,
) -> Result<(Rings, Option<i64>, Vec<geotext::Properties>), String> {
    let mut text = String::new();
    Input::open(path)
        .map_err(|e| e.to_string())?
        .data
        .reader()
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let parsed = geotext::parse(format, geotext::Kind::Polygons, &text)
        .map_err(|e| e.in_file(path.display()))?;
    let read = crate::origin::rounded(parsed, path);
    let rings = read.geometries.into_iter();
    let rings = rings.map(|(place, rings)| (place.in_file(path.display()), rings));
    Ok((rings.collect(), read.srid, read.properties))
}

fn flat_rings(path: &Path, offsets_path: &Path) -> Result<Rings, String> {
    let (vertices, _, _) = Records::open(path, &records::VERTICES, false)
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

/// Says on stderr that a file's SRID is ignored.
pub fn report_srid(path: &Path, srid: Option<i64>) {
    if let Some(srid) = srid {
        eprintln!(
            "rectcast: {}: EWKT SRID={srid}, ignored: coordinates are used as given",
            path.display()
        );
    }
}
