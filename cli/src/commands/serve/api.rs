//! What the playground asks the engine, and what each request may hold.
//!
//! - `GET /api/info`: the version and the engine's backend.
//! - `GET /api/scene?kind=bullet-hell|random&segments=N&rects=N&walls=N&circles=N&polygons=N&seed=S`:
//!   a seeded scene (`rectcast gen`'s generators) as JSON.
//! - `POST /api/load?name=FILE&as=rects|walls|circles|polygons|segments`: a file dropped on the
//!   page (any format the CLI reads: CSV, NPY, .f32, WKT, GeoJSON…), read as the CLI reads it,
//!   its errors named by the file's line and column; the records as JSON.
//! - `POST /api/pairs`: JSON `{ "segments": [[x0, y0, x1, y1]…], "rects": [[min_x, min_y, max_x,
//!   max_y]…], "walls": [[x0, y0, x1, y1]…], "circles": [[x, y, r]…], "polygons": [[[[x, y]…]
//!   ring…] polygon…] }`: every pair of the segments with each kind given, each kind's table as
//!   `rectcast pairs` writes it in CSV.
//! - `POST /api/first-hit`: binary, little-endian: `u32` segments, `u32` rects, then their
//!   `f32` fields; the answer is each segment's first hit as `shaders/rect_queries.wgsl`'s
//!   `FirstHit` (`u32` rect, `f32` t_enter, `f32` t_exit, `u32` flags), byte for byte what
//!   the page's GPU writes.
//!
//! Every number must be a float32 value: JSON's are doubles, and one float32 cannot hold is
//! refused, naming where it is, rather than rounded.

use std::io::Read;
use std::path::Path;

use rectcast::{Batch, Circle, FirstHit, Polygons, Rect, Segment, ShapeRecord, scene};
use serde_json::{Value, json};

use super::shared::{Reply, State};
use crate::formats::csv::CsvWriter;
use crate::output::{Table, TargetColumns};
use crate::polygons::PolygonFile;
use crate::records::{self, RecordKind, Records};
use crate::table::{Cell, TableWriter};
use crate::targets::{PolygonTargets, Rects, Shapes, Target};

/// The most segments of one frame's first hits, and of a generated scene.
pub const MAX_SEGMENTS: usize = 1 << 20;
/// The most targets of each kind in one request or scene.
pub const MAX_TARGETS: usize = 1 << 16;
/// The most pairs `/api/pairs` answers (its rows are text).
pub const MAX_PAIRS: usize = 1 << 18;
/// The most segment-rect pairs of one `/api/first-hit` (segments times rects): what bounds a
/// frame's work where every rect overlaps every other and no broad phase prunes (about 3 s on
/// 2 cores; 65,536 x 65,536 took 46 s and held a drag behind it).
pub const MAX_FIRST_HIT_PAIRS: usize = 1 << 28;

pub fn info(state: &State) -> Reply {
    Reply::json(&json!({
        "version": env!("CARGO_PKG_VERSION"),
        "engine": state.chosen,
        "limits": {
            "segments": MAX_SEGMENTS,
            "targets": MAX_TARGETS,
            "pairs": MAX_PAIRS,
            "first_hit_pairs": MAX_FIRST_HIT_PAIRS,
            "body_bytes": state.max_body,
        },
    }))
}

/// Why a request was not answered: a 400 for what the request holds, a 500 for what failed here
/// (a GPU's error or timeout).
pub struct Failure {
    status: u16,
    message: String,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self {
            status: 400,
            message,
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl Failure {
    /// The engine's error: the request's inputs (400), or the engine itself (500).
    fn engine(e: rectcast::Error) -> Self {
        let status = if matches!(e, rectcast::Error::Input(_)) {
            400
        } else {
            500
        };
        Self {
            status,
            message: e.to_string(),
        }
    }

    fn internal(e: impl std::fmt::Display) -> Self {
        Self {
            status: 500,
            message: e.to_string(),
        }
    }

    fn reply(self) -> Reply {
        Reply::error(self.status, self.message)
    }
}

/// `name=value` pairs of a query string, their values percent-decoded.
fn params(query: &str) -> Vec<(&str, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (name, value) = p.split_once('=').unwrap_or((p, ""));
            (name, percent_decoded(value))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn param<'a>(params: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// A count parameter, 0 when absent, at most `max`.
fn count(params: &[(&str, String)], name: &str, max: usize) -> Result<usize, String> {
    let Some(text) = param(params, name) else {
        return Ok(0);
    };
    let n: usize = text
        .parse()
        .map_err(|_| format!("{name}={text}: not a count"))?;
    if n > max {
        return Err(format!("{name}={n}: at most {max}"));
    }
    Ok(n)
}

pub fn scene(query: &str) -> Reply {
    match scene_of(query) {
        Ok(value) => Reply::json(&value),
        Err(message) => Reply::error(400, message),
    }
}

fn scene_of(query: &str) -> Result<Value, String> {
    let params = params(query);
    let segments = count(&params, "segments", MAX_SEGMENTS)?;
    let [rects, walls, circles, polygons] =
        ["rects", "walls", "circles", "polygons"].map(|name| count(&params, name, MAX_TARGETS));
    let (rects, walls, circles, polygons) = (rects?, walls?, circles?, polygons?);
    let seed = match param(&params, "seed") {
        None => 2026,
        Some(text) => text
            .parse()
            .map_err(|_| format!("seed={text}: not a whole number"))?,
    };
    // The shapes in a square of the field's height, stretched across its width.
    let kind = param(&params, "kind").unwrap_or("bullet-hell");
    let (width, height, (s, r)) = match kind {
        "bullet-hell" => (1920.0, 1080.0, scene::bullet_hell(seed, segments, rects)),
        "random" => (
            1000.0,
            1000.0,
            scene::random_batch(seed, segments, rects, 1000.0),
        ),
        "adversarial" => (1920.0, 1080.0, adversarial(seed, segments, rects)),
        other => return Err(format!("kind={other}: bullet-hell, random or adversarial")),
    };
    let stretch = width / height;
    let (walls, _) = scene::random_batch(seed ^ 1, walls, 0, height);
    let walls: Vec<Segment> = walls
        .iter()
        .map(|w| Segment::new(w.x0 * stretch, w.y0, w.x1 * stretch, w.y1))
        .collect();
    let circles: Vec<Circle> = scene::random_circles(seed ^ 2, circles, height, (6.0, 40.0))
        .iter()
        .map(|c| Circle::new(c.cx * stretch, c.cy, c.r))
        .collect();
    let polygons = scene::random_polygons(seed ^ 3, polygons, height, (12.0, 60.0), (3, 9));
    Ok(json!({
        "width": width,
        "height": height,
        // Adversarial values are placed to the ulp: moved, they would be ordinary ones.
        "still": kind == "adversarial",
        "segments": s.iter().map(segment_values).collect::<Vec<_>>(),
        "rects": r.iter().map(|r| [r.min_x, r.min_y, r.max_x, r.max_y]).collect::<Vec<_>>(),
        "walls": walls.iter().map(segment_values).collect::<Vec<_>>(),
        "circles": circles.iter().map(|c| [c.cx, c.cy, c.r]).collect::<Vec<_>>(),
        "polygons": polygons_json(&polygons, stretch),
    }))
}

/// Polygons as arrays of rings of `[x, y]`, each x times `stretch`.
fn polygons_json(polygons: &Polygons, stretch: f32) -> Value {
    (0..polygons.len())
        .map(|i| {
            polygons
                .rings_of(i)
                .map(|ring| {
                    ring.iter()
                        .map(|&[x, y]| [x * stretch, y])
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .into()
}

/// `rectcast gen --kind adversarial`'s pairs, a category per 256 (corners, edges, ulps,
/// subnormal and 2^62 magnitudes, signed zeros…): segment i of the first `rects` meets its own
/// rect i on a decision's edge.
fn adversarial(seed: u64, segments: usize, rects: usize) -> (Vec<Segment>, Vec<Rect>) {
    let categories = scene::adversarial::Category::ALL;
    let count = segments.max(rects);
    let (mut s, mut r) = (Vec::new(), Vec::new());
    for (k, start) in (0..count).step_by(256).enumerate() {
        let category = categories[k % categories.len()];
        let (more_s, more_r) = scene::adversarial::pairs(
            category,
            seed.wrapping_add(k as u64),
            256.min(count - start),
        );
        s.extend(more_s);
        r.extend(more_r);
    }
    s.truncate(segments);
    r.truncate(rects);
    (s, r)
}

fn segment_values(s: &Segment) -> [f32; 4] {
    [s.x0, s.y0, s.x1, s.y1]
}

/// A JSON number as the float32 it must be, or where it is and why not.
fn float32(value: &Value, at: &dyn Fn() -> String) -> Result<f32, String> {
    let x = value
        .as_f64()
        .ok_or_else(|| format!("{}: {value} is not a number", at()))?;
    let f = x as f32;
    if f64::from(f) != x {
        return Err(format!(
            "{}: {x} is not a float32 value (the nearest is {f}; round with Math.fround)",
            at()
        ));
    }
    Ok(f)
}

/// `field` of `body`: an array of arrays of `N` numbers each (none when absent).
fn records<const N: usize>(body: &Value, field: &str, max: usize) -> Result<Vec<[f32; N]>, String> {
    let Some(items) = body.get(field) else {
        return Ok(Vec::new());
    };
    let items = items
        .as_array()
        .ok_or_else(|| format!("{field}: not an array"))?;
    if items.len() > max {
        return Err(format!("{field}: {} of them, at most {max}", items.len()));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let values = item
                .as_array()
                .filter(|v| v.len() == N)
                .ok_or_else(|| format!("{field}[{i}]: not an array of {N} numbers"))?;
            let mut record = [0.0; N];
            for (k, value) in values.iter().enumerate() {
                record[k] = float32(value, &|| format!("{field}[{i}][{k}]"))?;
            }
            Ok(record)
        })
        .collect()
}

/// Polygons, each its rings, each its `[x, y]` vertices.
type Rings = Vec<Vec<Vec<[f32; 2]>>>;

/// `polygons` of `body`: polygons of rings of `[x, y]` vertices, not yet checked.
fn polygon_rings(body: &Value) -> Result<Option<Rings>, String> {
    let Some(items) = body.get("polygons") else {
        return Ok(None);
    };
    let shape = |at: String| format!("{at}: polygons are arrays of rings of [x, y] vertices");
    let items = items.as_array().ok_or_else(|| shape("polygons".into()))?;
    if items.len() > MAX_TARGETS {
        return Err(format!(
            "polygons: {} of them, at most {MAX_TARGETS}",
            items.len()
        ));
    }
    let mut all = Vec::with_capacity(items.len());
    for (i, polygon) in items.iter().enumerate() {
        let rings = polygon
            .as_array()
            .ok_or_else(|| shape(format!("polygons[{i}]")))?;
        let mut out = Vec::with_capacity(rings.len());
        for (r, ring) in rings.iter().enumerate() {
            let vertices = ring
                .as_array()
                .ok_or_else(|| shape(format!("polygons[{i}][{r}]")))?;
            let mut points = Vec::with_capacity(vertices.len());
            for (v, vertex) in vertices.iter().enumerate() {
                let xy = vertex
                    .as_array()
                    .filter(|xy| xy.len() == 2)
                    .ok_or_else(|| shape(format!("polygons[{i}][{r}][{v}]")))?;
                let at = |k: usize| move || format!("polygons[{i}][{r}][{v}][{k}]");
                points.push([float32(&xy[0], &at(0))?, float32(&xy[1], &at(1))?]);
            }
            out.push(points);
        }
        all.push(out);
    }
    Ok(Some(all))
}

/// The edges of polygons given as rings, each ring's closing repeat not counted: what a pair
/// limit counts before the polygons are checked.
fn edges_of(polygons: &[Vec<Vec<[f32; 2]>>]) -> usize {
    let ring_edges = |ring: &Vec<[f32; 2]>| {
        ring.len() - usize::from(ring.len() > 1 && ring.first() == ring.last())
    };
    polygons.iter().flatten().map(ring_edges).sum()
}

pub fn pairs(state: &State, _query: &str, body: &[u8]) -> Reply {
    match pairs_of(state, body) {
        Ok(value) => Reply::json(&value),
        Err(failure) => failure.reply(),
    }
}

fn pairs_of(state: &State, body: &[u8]) -> Result<Value, Failure> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    if !body.is_object() {
        return Err("the body is not a JSON object".into());
    }
    let segments: Vec<Segment> = records::<4>(&body, "segments", MAX_PAIRS)?
        .into_iter()
        .map(|[x0, y0, x1, y1]| Segment::new(x0, y0, x1, y1))
        .collect();
    let rects = records::<4>(&body, "rects", MAX_TARGETS)?;
    let walls = records::<4>(&body, "walls", MAX_TARGETS)?;
    let circles = records::<3>(&body, "circles", MAX_TARGETS)?;
    let rings = polygon_rings(&body)?;
    let targets = [
        rects.len(),
        walls.len(),
        circles.len(),
        rings.as_deref().map_or(0, edges_of),
    ];
    let pairs = targets.iter().map(|t| t * segments.len()).sum::<usize>();
    if pairs > MAX_PAIRS {
        return Err(format!(
            "{} segments make {pairs} pairs with these targets, at most {MAX_PAIRS}",
            segments.len()
        )
        .into());
    }
    // Checked once the pairs are known to be few enough.
    let polygons = rings
        .map(Polygons::from_polygons)
        .transpose()
        .map_err(|e| e.to_string())?;
    let mut engine = state.engines.take();
    let engine = &mut *engine;
    let mut out = serde_json::Map::new();
    if body.get("rects").is_some() {
        let rects = rects
            .into_iter()
            .map(|[a, b, c, d]| Rect::new(a, b, c, d))
            .collect();
        out.insert(
            "rects".into(),
            table(engine, &Rects(rects), &segments)?.into(),
        );
    }
    if body.get("walls").is_some() {
        let walls = walls.into_iter().map(Segment::from_record).collect();
        out.insert(
            "walls".into(),
            table(engine, &Shapes(walls), &segments)?.into(),
        );
    }
    if body.get("circles").is_some() {
        let circles = circles
            .into_iter()
            .map(|[x, y, r]| Circle::new(x, y, r))
            .collect();
        out.insert(
            "circles".into(),
            table(engine, &Shapes(circles), &segments)?.into(),
        );
    }
    if let Some(polygons) = polygons {
        let table = table(engine, &PolygonTargets(polygons), &segments)?;
        out.insert("polygons".into(), table.into());
    }
    Ok(Value::Object(out))
}

/// Every pair of `segments` with `target`, as `rectcast pairs` writes them in CSV.
fn table<T: Target>(
    engine: &mut rectcast::Engine,
    target: &T,
    segments: &[Segment],
) -> Result<String, Failure> {
    let results = target.pairs(engine, segments).map_err(Failure::engine)?;
    let columns = Table::Pairs(TargetColumns::of::<T>()).columns();
    let mut text = Vec::new();
    let mut writer = CsvWriter::new(&mut text, columns).map_err(Failure::internal)?;
    let n = target.len().max(1);
    for (i, result) in results.iter().enumerate() {
        let t = i % n;
        let ids = [
            Cell::U64((i / n) as u64),
            Cell::U64(t as u64),
            Cell::Bool(T::hit(result)),
        ];
        let lead = target.lead(Some(t));
        let row: Vec<Cell> = lead
            .as_slice()
            .iter()
            .chain(&ids)
            .chain(target.cells(t, Some(result)).as_slice())
            .copied()
            .collect();
        writer.row(&row).map_err(Failure::internal)?;
    }
    writer
        .finish(results.len() as u64)
        .map_err(Failure::internal)?;
    String::from_utf8(text).map_err(Failure::internal)
}

pub fn first_hit(state: &State, _query: &str, body: &[u8]) -> Reply {
    match first_hit_of(state, body) {
        Ok(bytes) => Reply::ok("application/octet-stream", bytes),
        Err(failure) => failure.reply(),
    }
}

fn first_hit_of(state: &State, body: &[u8]) -> Result<Vec<u8>, Failure> {
    let word = |k: usize| -> Option<usize> {
        let bytes = body.get(4 * k..4 * k + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?) as usize)
    };
    let (Some(segments), Some(rects)) = (word(0), word(1)) else {
        return Err(format!(
            "the body is {} bytes: it starts with two u32 counts (segments, rects)",
            body.len()
        )
        .into());
    };
    if segments > MAX_SEGMENTS || rects > MAX_TARGETS {
        return Err(format!(
            "{segments} segments and {rects} rects: at most {MAX_SEGMENTS} and {MAX_TARGETS}"
        )
        .into());
    }
    if segments * rects > MAX_FIRST_HIT_PAIRS {
        return Err(format!(
            "{segments} segments and {rects} rects make {} pairs, at most {MAX_FIRST_HIT_PAIRS} \
             a request: send the frame in parts",
            segments * rects
        )
        .into());
    }
    let expected = 8 + 16 * (segments + rects);
    if body.len() != expected {
        return Err(format!(
            "the body is {} bytes; {segments} segments and {rects} rects take 8 + 16 x {} = {expected}",
            body.len(),
            segments + rects
        )
        .into());
    }
    let floats: Vec<f32> = body[8..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    let (s, r) = floats.split_at(4 * segments);
    let segments: Vec<Segment> = s
        .chunks_exact(4)
        .map(|v| Segment::new(v[0], v[1], v[2], v[3]))
        .collect();
    let rects: Vec<Rect> = r
        .chunks_exact(4)
        .map(|v| Rect::new(v[0], v[1], v[2], v[3]))
        .collect();
    let hits: Vec<FirstHit> = (state.engines.take())
        .first_hit(&Batch::new(&segments, &rects))
        .map_err(Failure::engine)?;
    let mut out = Vec::with_capacity(16 * hits.len());
    for hit in &hits {
        out.extend(hit.rect.to_le_bytes());
        out.extend(hit.result.t_enter.to_le_bytes());
        out.extend(hit.result.t_exit.to_le_bytes());
        out.extend(hit.result.flags.to_le_bytes());
    }
    Ok(out)
}

pub fn load(state: &State, query: &str, body: &[u8]) -> Reply {
    match load_of(query, body, state.max_body) {
        Ok(value) => Reply::json(&value),
        Err(message) => Reply::error(400, message),
    }
}

/// A dropped file's records, read as the CLI reads them. Records are counted as they are
/// decompressed and read, stopping one past the limit; a WKT or GeoJSON file, read whole, may
/// be at most `max_text` bytes once decompressed (a 0.5 MiB gzip bomb once grew the server by
/// 770 MiB before it was refused).
fn load_of(query: &str, body: &[u8], max_text: u64) -> Result<Value, String> {
    let params = params(query);
    let name =
        param(&params, "name").ok_or("name=FILE is missing: the file's name says its format")?;
    // Only the name's last part: the file is written in a folder of its own, nowhere else.
    let name = Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.starts_with('.'))
        .ok_or_else(|| format!("name={name}: not a file name"))?;
    let kind = param(&params, "as").unwrap_or("rects");
    let gzipped = Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    if gzipped && rectcast_geotext::Format::of(Path::new(name)).is_some() {
        let mut decompressed = flate2::read::MultiGzDecoder::new(body).take(max_text + 1);
        let size = std::io::copy(&mut decompressed, &mut std::io::sink())
            .map_err(|e| format!("{name}: not gzip: {e}"))?;
        if size > max_text {
            return Err(format!(
                "{name}: over {} MiB once decompressed, at most what a body may be \
                 (--max-body-mib)",
                max_text >> 20
            ));
        }
    }
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary folder: {e}"))?;
    let path = dir.path().join(name);
    std::fs::write(&path, body).map_err(|e| format!("{name}: {e}"))?;
    // Errors name the file as the page knows it, not the temporary folder.
    let within = format!("{}/", dir.path().display());
    let named = |e: String| e.replace(&within, "");
    // Targets as many as a query takes (`/api/pairs`, `/api/first-hit`): a scene loaded whole
    // is one every drag and frame can ask about.
    let value = match kind {
        "rects" => records_json(&path, &records::RECTS, MAX_TARGETS, |r: &Rect| {
            vec![r.min_x, r.min_y, r.max_x, r.max_y]
        }),
        "segments" => records_json(&path, &records::SEGMENTS, MAX_SEGMENTS, |s: &Segment| {
            segment_values(s).to_vec()
        }),
        "walls" => records_json(
            &path,
            &RecordKind::<Segment>::shape(),
            MAX_TARGETS,
            |s: &Segment| segment_values(s).to_vec(),
        ),
        "circles" => records_json(
            &path,
            &RecordKind::<Circle>::shape(),
            MAX_TARGETS,
            |c: &Circle| vec![c.cx, c.cy, c.r],
        ),
        "polygons" => PolygonFile::read(&path, None, false).and_then(|file| {
            if file.polygons.len() > MAX_TARGETS {
                return Err(format!(
                    "{}: {} polygons, at most {MAX_TARGETS} (what a query takes)",
                    path.display(),
                    file.polygons.len()
                ));
            }
            Ok(polygons_json(&file.polygons, 1.0))
        }),
        other => {
            return Err(format!(
                "as={other}: rects, walls, circles, polygons or segments"
            ));
        }
    }
    .map_err(named)?;
    Ok(json!({ kind: value }))
}

/// Every record of `path` read as `kind`, each as its values.
fn records_json<T>(
    path: &Path,
    kind: &RecordKind<T>,
    max: usize,
    values: impl Fn(&T) -> Vec<f32>,
) -> Result<Value, String> {
    let mut file = Records::open(path, kind, false).map_err(|e| e.to_string())?;
    // One past the limit at most is read (and decompressed): a longer file is refused.
    let (mut records, mut ids, mut kept) = (Vec::new(), Vec::new(), Default::default());
    (file.read_chunk(&mut records, &mut ids, &mut kept, max + 1)).map_err(|e| e.to_string())?;
    if records.len() > max {
        return Err(format!(
            "{}: more than {max} records, what a query takes",
            path.display()
        ));
    }
    Ok(records.iter().map(values).collect::<Vec<_>>().into())
}
