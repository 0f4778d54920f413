//! `rectcast render`: a picture of what the engine decided for a scene, drawn with tiny-skia
//! (pure Rust). Rects, circles and polygons are filled blue, walls are dark lines (each
//! registered shape as the library outlines it: `ShapeRecord::outline`); a segment
//! that hits nothing is grey, one that hits is orange; the part of it inside a shape (or
//! along a wall) is red (for a polygon, each stretch inside it: a segment may leave a polygon
//! that is not convex and enter it again), its entry point (or the point where it meets a
//! wall) green and its exit point purple. With `first-hit` only each segment's first hit
//! among all the shapes (the smallest t_enter) is drawn so; with `pairs` every hit.
//!
//! Above [`DENSITY_ABOVE`] segments (or with `--style density`) the segments are a density
//! image instead: how many lines cross each pixel, hitting ones on an orange-red ramp and the
//! others on a grey one, each on a log scale; the legend says so.
//!
//! y grows upwards, as data is plotted, unless `--y-down` (screen coordinates: the demo's
//! frame). The plot area has a frame with ticks and their values (the axes' scale); the
//! legend sits in a band above it, off the data (`canvas`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use rectcast::{
    Batch, Engine, Outline as ShapeOutline, Polygons, Rect, SceneShape, Segment, ShapeContact,
    ShapeRecord,
};
mod canvas;
mod png;
mod svg;
use canvas::{Density, Draw, Mark, Outline, View};

use crate::options::{BackendArg, Outcome, engine};
use crate::records::{self, RecordKind, Records};
use crate::shape_files::{FlagHelp, ShapeFiles, TARGETS, capitalized};
use crate::targets::{ForShape, ResultCells, SHAPE_FLAGS, for_shape};

#[derive(Args)]
#[command(group(clap::ArgGroup::new(TARGETS).required(true).multiple(true)))]
pub struct RenderArgs {
    /// Segments (.csv, .npy or .f32, .gz of any, `-` for stdin), read whole.
    #[arg(long)]
    segments: PathBuf,
    /// Rects (.csv, .npy or .f32), read whole.
    #[arg(long, group = TARGETS)]
    rects: Option<PathBuf>,
    /// The registered shapes' files (`--walls`, `--circles`), drawn with the other targets.
    #[command(flatten)]
    shapes: ShapeFiles<RenderHelp>,
    /// Polygons (.wkt, .geojson, or vertices with --polygon-offsets), read whole.
    #[arg(long, group = TARGETS)]
    polygons: Option<PathBuf>,
    /// The flat form's offsets for --polygons.
    #[arg(long, requires = "polygons")]
    polygon_offsets: Option<PathBuf>,
    /// The picture to write: its name says the format, .png or .svg (vectors, each mark with
    /// a class naming what it is).
    #[arg(long)]
    out: PathBuf,
    /// What to draw: each segment's first hit, or every hitting pair.
    #[arg(long, value_enum, default_value = "first-hit")]
    query: RenderQuery,
    /// The image size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1200x800", value_parser = parse_size)]
    size: (u32, u32),
    /// The part of the scene to draw (default: all of it, with a margin).
    #[arg(
        long,
        value_name = "MIN_X,MIN_Y,MAX_X,MAX_Y",
        allow_hyphen_values = true
    )]
    view: Option<String>,
    /// Screen coordinates: y grows downwards (a game's frame, the demo's). By default y grows
    /// upwards, as data is plotted (a WKT "U" stands upright).
    #[arg(long)]
    y_down: bool,
    /// How segments are drawn: one line each (`lines`, with their hits' parts and ends), or a
    /// density image, hits and misses on two colour ramps (`density`); `auto` draws lines up
    /// to 20,000 segments.
    #[arg(long, value_enum, default_value = "auto")]
    style: Style,
    /// Where the engine runs: a hardware GPU when one opens, else the CPU (`auto`); the GPU
    /// whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
}

/// `--size 1200x800`.
fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parsed = text
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
    match parsed {
        Some((w, h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => Ok((w, h)),
        _ => Err(format!(
            "expected WIDTHxHEIGHT, each 1 to 16384 pixels, found {text:?}"
        )),
    }
}

/// How segments are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Style {
    /// Lines up to [`DENSITY_ABOVE`] segments, a density image above.
    Auto,
    /// One line per segment.
    Lines,
    /// A density image.
    Density,
}

/// Above this many segments `--style auto` draws a density image: one line each would cover
/// the picture.
pub const DENSITY_ABOVE: usize = 20_000;

/// What a picture looks like: how y points and how segments are drawn.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    pub y_down: bool,
    pub style: Style,
}

/// `--view`: four numbers, min below max on both axes.
fn parse_view(text: &str) -> Result<[f32; 4], String> {
    let r = records::parse_rect_arg(text).map_err(|e| e.replace("--rect", "--view"))?;
    if !(r.min_x < r.max_x && r.min_y < r.max_y) {
        return Err(format!(
            "--view: expected min_x < max_x and min_y < max_y (a region with an area), found {text}"
        ));
    }
    Ok([r.min_x, r.min_y, r.max_x, r.max_y])
}

/// The formats `render` writes, by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Png,
    Svg,
}

/// `--out` must name a PNG or an SVG: the format follows the name, and no other is written.
fn check_out(out: &Path) -> Result<Format, String> {
    let extension = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match extension.as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        other => Err(format!(
            "{}: render writes PNG or SVG: name the file .png or .svg (found {})",
            out.display(),
            other.map_or("no extension".to_string(), |e| format!(".{e}"))
        )),
    }
}

/// The records of `kind` in `path`, read whole; none without a path.
fn read<T>(path: Option<&Path>, kind: &records::RecordKind<T>) -> Result<Vec<T>, String> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    Records::open(path, kind, false)
        .and_then(|mut r| r.read_all())
        .map(|(values, _, _)| values)
        .map_err(|e| e.to_string())
}

/// `rectcast render`: reads both files whole, runs the query, draws.
pub fn run(args: RenderArgs) -> Outcome {
    check_out(&args.out)?;
    let mut inputs = vec![args.segments.as_path()];
    inputs.extend(args.rects.as_deref());
    inputs.extend(args.polygons.as_deref());
    inputs.extend(args.polygon_offsets.as_deref());
    inputs.extend(args.shapes.given().map(|(_, path)| path));
    crate::output::not_an_input(Some(&args.out), &inputs)?;
    let view = args.view.as_deref().map(parse_view).transpose()?;
    let segments = read(Some(&args.segments), &records::SEGMENTS)?;
    let rects = read(args.rects.as_deref(), &records::RECTS)?;
    let shapes = args
        .shapes
        .given()
        .map(|(flag, path)| {
            for_shape(flag, ReadShapes(path))
                .unwrap_or_else(|| Err(format!("no shape takes --{flag}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let polygons = match &args.polygons {
        Some(path) => {
            crate::polygons::PolygonFile::read(path, args.polygon_offsets.as_deref(), false)?
                .polygons
        }
        None => Polygons::default(),
    };
    let mut engine = engine(args.backend.into())?;
    render(
        &mut engine,
        &Scene {
            segments: &segments,
            rects: &rects,
            shapes: &shapes,
            polygons: &polygons,
        },
        args.query,
        args.size,
        view,
        Look {
            y_down: args.y_down,
            style: args.style,
        },
        &args.out,
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderQuery {
    /// Each segment's closest hit.
    FirstHit,
    /// Every hitting pair.
    Pairs,
}

const BACKGROUND: [u8; 4] = [255, 255, 255, 255];
const RECT_FILL: [u8; 4] = [70, 130, 180, 70];
const RECT_EDGE: [u8; 4] = [40, 90, 150, 255];
const MISS: [u8; 4] = [150, 150, 150, 255];
const HIT: [u8; 4] = [240, 140, 20, 255];
const INSIDE: [u8; 4] = [215, 25, 40, 255];
const ENTRY: [u8; 4] = [20, 160, 60, 255];
const EXIT: [u8; 4] = [130, 50, 180, 255];
const WALL: [u8; 4] = [50, 50, 60, 255];

/// What a picture shows: the segments, and the shapes they are tested against.
pub struct Scene<'a> {
    pub segments: &'a [Segment],
    pub rects: &'a [Rect],
    /// The registered shapes' sets, in flag order (walls, circles).
    pub shapes: &'a [Box<dyn ShapeSet>],
    pub polygons: &'a Polygons,
}

/// A registered shape's set, as a picture reads it.
pub trait ShapeSet {
    /// The shapes as drawn.
    fn outlines(&self) -> Vec<ShapeOutline>;
    /// The hits of `segments` on them, every one (the dense pairs that hit).
    fn parts(&self, engine: &mut Engine, segments: &[Segment]) -> rectcast::Result<Vec<Part>>;
}

impl<S: ShapeRecord> ShapeSet for Vec<S> {
    fn outlines(&self) -> Vec<ShapeOutline> {
        self.iter().map(S::outline).collect()
    }
    fn parts(&self, engine: &mut Engine, segments: &[Segment]) -> rectcast::Result<Vec<Part>> {
        let contacts = engine.shape_pairs(segments, self)?;
        Ok(shape_parts(&contacts, self.len(), ShapeContact::boundary).collect())
    }
}

/// Reads a registered shape's file whole.
struct ReadShapes<'a>(&'a Path);

impl ForShape for ReadShapes<'_> {
    type Output = Result<Box<dyn ShapeSet>, String>;
    fn with<S: ShapeRecord + SceneShape>(self) -> Self::Output
    where
        S::Contact: ResultCells,
    {
        let shapes = read(Some(self.0), &RecordKind::<S>::shape())?;
        Ok(Box::new(shapes))
    }
}

/// What `render` says of a shape's flag.
pub struct RenderHelp;

impl FlagHelp for RenderHelp {
    fn help<S: ShapeRecord + SceneShape>() -> String
    where
        S::Contact: ResultCells,
    {
        let values = S::FIELDS.len();
        format!(
            "{} ({}: columns {} in CSV, {values} values a record in .npy [N, {values}] and .f32), \
             read whole: drawn {} with the other targets",
            capitalized(S::PLURAL),
            S::ABOUT,
            S::FIELDS.join(","),
            if S::LINES { "as lines" } else { "filled" },
        )
    }
}

/// A registered shape's name, and whether it is drawn as lines, for the legend.
struct DrawnAs;

impl ForShape for DrawnAs {
    type Output = (&'static str, bool);
    fn with<S: ShapeRecord + SceneShape>(self) -> Self::Output
    where
        S::Contact: ResultCells,
    {
        (S::NAME, S::LINES)
    }
}

/// A hit to draw: the part of a segment in a shape (or along a wall), and which of its ends
/// to mark (an entry, or where it meets a wall; an exit).
#[derive(Clone, Copy, Debug)]
pub struct Part {
    segment: usize,
    t_enter: f32,
    t_exit: f32,
    entry: bool,
    exit: bool,
    /// The polygon hit, whose inside stretches between t_enter and t_exit are drawn (a
    /// segment may leave and enter again a polygon that is not convex).
    polygon: Option<usize>,
}

/// The stretches of `s` between `t0` and `t1` that lie in the closed polygon `ring`, for the
/// picture alone (f64, with a drawing tolerance; the engine's t_enter and t_exit are exact).
/// The segment's line crosses the ring's edges at breakpoints; a stretch between two is in
/// the polygon when its midpoint is (inside, or on an edge).
fn inside_stretches(s: &Segment, rings: &[&[[f32; 2]]], t0: f32, t1: f32) -> Vec<(f32, f32)> {
    let (ax, ay) = (s.x0 as f64, s.y0 as f64);
    let (dx, dy) = (s.x1 as f64 - ax, s.y1 as f64 - ay);
    let mut ts = vec![t0 as f64, t1 as f64];
    // Every ring's edges: inside an odd number of rings is inside (holes, multipolygons).
    let edges = || {
        rings.iter().flat_map(|ring| {
            ring.iter()
                .zip(ring.iter().cycle().skip(1))
                .map(|(&[x0, y0], &[x1, y1])| (x0 as f64, y0 as f64, x1 as f64, y1 as f64))
        })
    };
    for (ex, ey, fx, fy) in edges() {
        let (gx, gy) = (fx - ex, fy - ey);
        let denominator = dx * gy - dy * gx;
        if denominator != 0.0 {
            let t = ((ex - ax) * gy - (ey - ay) * gx) / denominator;
            if t > t0 as f64 && t < t1 as f64 {
                ts.push(t);
            }
        }
    }
    ts.sort_by(f64::total_cmp);
    let scale = edges()
        .map(|(x, y, _, _)| x.abs().max(y.abs()))
        .fold(ax.abs().max(ay.abs()), f64::max)
        .max(1.0);
    let contains = |(px, py): (f64, f64)| {
        let mut inside = false;
        for (ex, ey, fx, fy) in edges() {
            let (gx, gy) = (fx - ex, fy - ey);
            let length = gx.hypot(gy);
            let along = ((px - ex) * gx + (py - ey) * gy) / (length * length);
            let off = ((px - ex) * gy - (py - ey) * gx).abs() / length;
            if (0.0..=1.0).contains(&along) && off <= 1e-9 * scale {
                return true; // on the boundary: in the closed polygon
            }
            if (ey > py) != (fy > py) && px < ex + (py - ey) / (fy - ey) * gx {
                inside = !inside;
            }
        }
        inside
    };
    let mut stretches: Vec<(f32, f32)> = Vec::new();
    for pair in ts.windows(2) {
        let mid = (pair[0] + pair[1]) / 2.0;
        if !contains((ax + mid * dx, ay + mid * dy)) {
            continue;
        }
        let (a, b) = (pair[0] as f32, pair[1] as f32);
        match stretches.last_mut() {
            Some(last) if last.1 == a => last.1 = b,
            _ => stretches.push((a, b)),
        }
    }
    // A point-sized contact (a vertex touch) has no stretch between breakpoints.
    if stretches.is_empty() {
        stretches.push((t0, t1));
    }
    stretches
}

/// The bounding box of the scene with a 5 % margin.
fn scene_view(scene: &Scene) -> [f32; 4] {
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    let points = scene
        .segments
        .iter()
        .flat_map(|s| [(s.x0, s.y0), (s.x1, s.y1)])
        .chain(
            scene
                .rects
                .iter()
                .flat_map(|r| [(r.min_x, r.min_y), (r.max_x, r.max_y)]),
        )
        .chain(scene.shapes.iter().flat_map(|set| set.outlines()).flat_map(
            |outline| match outline {
                ShapeOutline::Line([x0, y0], [x1, y1]) => [(x0, y0), (x1, y1)],
                ShapeOutline::Disk([cx, cy], r) => [(cx - r, cy - r), (cx + r, cy + r)],
            },
        ))
        .chain(scene.polygons.vertices().iter().map(|&[x, y]| (x, y)));
    for (x, y) in points {
        b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
    }
    if !b[0].is_finite() {
        return [0.0, 0.0, 1.0, 1.0];
    }
    let margin = ((b[2] - b[0]).max(b[3] - b[1]) * 0.05).max(1.0);
    [b[0] - margin, b[1] - margin, b[2] + margin, b[3] + margin]
}

/// Calls `each(start, end)` for the part of part `p`'s segment inside its shape: the span
/// from t_enter to t_exit, or for a polygon each stretch inside it.
fn inside_parts(scene: &Scene, p: &Part, mut each: impl FnMut((f32, f32), (f32, f32))) {
    let s = &scene.segments[p.segment];
    match p.polygon {
        Some(k) => {
            let rings: Vec<&[[f32; 2]]> = scene.polygons.rings_of(k).collect();
            for (t0, t1) in inside_stretches(s, &rings, p.t_enter, p.t_exit) {
                each(point(s, t0), point(s, t1));
            }
        }
        None => each(point(s, p.t_enter), point(s, p.t_exit)),
    }
}

/// The point at parameter t of segment s.
fn point(s: &Segment, t: f32) -> (f32, f32) {
    (s.x0 + t * (s.x1 - s.x0), s.y0 + t * (s.y1 - s.y0))
}

/// The hits to draw, as `engine` decides them: every hit, or each segment's first among all the
/// shapes (the smallest t_enter; on a tie rects, then walls, circles and polygons, lowest index
/// first).
fn parts(engine: &mut Engine, scene: &Scene, query: RenderQuery) -> Result<Vec<Part>, String> {
    let e = |e: rectcast::Error| e.to_string();
    let mut parts = Vec::new();
    if !scene.rects.is_empty() {
        let batch = Batch::new(scene.segments, scene.rects);
        let hits: Vec<(usize, rectcast::PairResult)> = match query {
            RenderQuery::FirstHit => engine
                .first_hit(&batch)
                .map_err(e)?
                .iter()
                .enumerate()
                .filter(|(_, f)| f.rect().is_some())
                .map(|(s, f)| (s, f.result))
                .collect(),
            RenderQuery::Pairs => engine
                .hits(&batch)
                .map_err(e)?
                .iter()
                .map(|h| (h.segment as usize, h.result))
                .collect(),
        };
        parts.extend(hits.into_iter().map(|(segment, r)| Part {
            segment,
            t_enter: r.t_enter,
            t_exit: r.t_exit,
            entry: !r.entry_sides().is_empty(),
            exit: !r.exit_sides().is_empty(),
            polygon: None,
        }));
    }
    for set in scene.shapes {
        parts.extend(set.parts(engine, scene.segments).map_err(e)?);
    }
    if !scene.polygons.is_empty() {
        let contacts = engine
            .polygon_pairs(scene.segments, scene.polygons)
            .map_err(e)?;
        let m = scene.polygons.len();
        parts.extend(
            shape_parts(&contacts, m, ShapeContact::boundary)
                .zip(contacts.iter().enumerate().filter(|(_, c)| c.hit()))
                .map(|(part, (i, _))| Part {
                    polygon: Some(i % m),
                    ..part
                }),
        );
    }
    if query == RenderQuery::FirstHit {
        // Each segment's first part: the smallest t_enter, the earliest listed on a tie.
        let mut first: Vec<Option<Part>> = vec![None; scene.segments.len()];
        for part in parts {
            let slot = &mut first[part.segment];
            if slot.is_none_or(|best| part.t_enter < best.t_enter) {
                *slot = Some(part);
            }
        }
        return Ok(first.into_iter().flatten().collect());
    }
    Ok(parts)
}

/// The parts of a shape's dense pairs (`m` shapes a segment) that hit; `ends` says which ends
/// to mark (an entry or a contact, an exit).
fn shape_parts<C: ShapeContact>(
    contacts: &[C],
    m: usize,
    ends: impl Fn(&C) -> (bool, bool),
) -> impl Iterator<Item = Part> {
    contacts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.hit())
        .map(move |(i, c)| {
            let (entry, exit) = ends(c);
            Part {
                segment: i / m,
                t_enter: c.t_enter(),
                t_exit: c.t_exit(),
                entry,
                exit,
                polygon: None,
            }
        })
}

/// Draws the scene as `engine` decides it and writes it to `out` (atomically), as PNG or SVG
/// by its name.
pub fn render(
    engine: &mut Engine,
    scene: &Scene,
    query: RenderQuery,
    (width, height): (u32, u32),
    view: Option<[f32; 4]>,
    look: Look,
    out: &Path,
) -> Result<(), String> {
    let format = check_out(out)?;
    let parts = parts(engine, scene, query)?;
    let v = View::fit(
        view.unwrap_or_else(|| scene_view(scene)),
        width,
        height,
        look.y_down,
    );
    let bytes = match format {
        Format::Png => {
            let mut png = png::Png::new(width, height, v.plot, BACKGROUND)?;
            draw(&mut png, scene, &parts, &v, query, look);
            png.encode()?
        }
        Format::Svg => {
            let mut svg = svg::Svg::new(width, height, v.plot, BACKGROUND);
            draw(&mut svg, scene, &parts, &v, query, look);
            svg.encode()
        }
    };
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    match crate::output::out_place(out)? {
        crate::output::OutPlace::Replace(out) => {
            let mut temp = crate::output::temp_beside(&out).map_err(|e| fail(&e))?;
            std::io::Write::write_all(&mut temp, &bytes).map_err(|e| fail(&e))?;
            crate::output::persist(temp.into_temp_path(), &out)
        }
        place => place.open().and_then(|mut file| {
            std::io::Write::write_all(&mut file, &bytes).map_err(|e| fail(&e))
        }),
    }
}

/// The picture's marks: the shapes, the segments (one by one, or their density), the axes
/// and the legend.
fn draw(d: &mut dyn Draw, scene: &Scene, parts: &[Part], v: &View, query: RenderQuery, look: Look) {
    let at = |(x, y): (f32, f32)| v.at(x, y);
    let shape = (RECT_FILL, RECT_EDGE);
    for r in scene.rects {
        let outline = Outline::Rect(v.rect((r.min_x, r.min_y), (r.max_x, r.max_y)));
        d.shape(&outline, shape.0, shape.1, Mark::Shape);
    }
    let outlines: Vec<ShapeOutline> = scene.shapes.iter().flat_map(|set| set.outlines()).collect();
    // Areas under the polygons, lines over them.
    for outline in &outlines {
        if let ShapeOutline::Disk([cx, cy], r) = *outline {
            let outline = Outline::Circle(v.at(cx, cy), (r * v.scale).max(0.5));
            d.shape(&outline, shape.0, shape.1, Mark::Shape);
        }
    }
    for ring in scene.polygons.rings() {
        let outline = Outline::Ring(ring.iter().map(|&[x, y]| v.at(x, y)).collect());
        d.shape(&outline, shape.0, shape.1, Mark::Shape);
    }
    for outline in &outlines {
        if let ShapeOutline::Line([x0, y0], [x1, y1]) = *outline {
            d.line(at((x0, y0)), at((x1, y1)), 3.0, WALL, Mark::Wall);
        }
    }
    let dense = match look.style {
        Style::Auto => scene.segments.len() > DENSITY_ABOVE,
        Style::Lines => false,
        Style::Density => true,
    };
    let inside = match query {
        RenderQuery::FirstHit => "in its first shape",
        RenderQuery::Pairs => "in a shape",
    };
    // The legend names every kind of target, drawn or not: areas, then lines.
    let drawn: Vec<_> = SHAPE_FLAGS
        .iter()
        .filter_map(|flag| for_shape(flag, DrawnAs))
        .collect();
    let names = |lines: bool| drawn.iter().filter(move |d| d.1 == lines).map(|d| d.0);
    let areas: Vec<_> = ["rect"]
        .into_iter()
        .chain(names(false))
        .chain(["polygon"])
        .collect();
    let shapes_entry = (areas.join(", "), RECT_EDGE);
    let wall_entry = (names(true).collect::<Vec<_>>().join(", "), WALL);
    let entries = if dense {
        // Every segment whole, then the parts inside the shapes they hit (the red lines of
        // the line style): where those cross a pixel, the hits' ramp shows.
        let mut density = Density::new(d.size());
        for s in scene.segments {
            density.add(v, (s.x0, s.y0), (s.x1, s.y1), false);
        }
        for p in parts {
            inside_parts(scene, p, |a, b| density.add(v, a, b, true));
        }
        d.density(&density);
        // The rects' edges over the density, faint, so the shapes stay visible under it.
        let [r, g, b, _] = RECT_EDGE;
        for rect in scene.rects {
            let outline = Outline::Rect(v.rect((rect.min_x, rect.min_y), (rect.max_x, rect.max_y)));
            d.shape(&outline, [0; 4], [r, g, b, 70], Mark::Shape);
        }
        let [miss_light, miss_dark] = canvas::ramp_ends(false);
        let [hit_light, hit_dark] = canvas::ramp_ends(true);
        let n = scene.segments.len();
        vec![
            shapes_entry,
            wall_entry,
            (
                format!("density of {n} segments (log):"),
                [255, 255, 255, 0],
            ),
            ("outside, few".to_string(), miss_light),
            ("many".to_string(), miss_dark),
            (format!("{inside}, few"), hit_light),
            ("many".to_string(), hit_dark),
        ]
    } else {
        let mut hitting = vec![false; scene.segments.len()];
        for p in parts {
            hitting[p.segment] = true;
        }
        for (s, hit) in scene.segments.iter().zip(&hitting) {
            let (colour, mark) = if *hit {
                (HIT, Mark::Hit)
            } else {
                (MISS, Mark::Miss)
            };
            d.line(at((s.x0, s.y0)), at((s.x1, s.y1)), 2.0, colour, mark);
        }
        for p in parts {
            let s = &scene.segments[p.segment];
            inside_parts(scene, p, |a, b| {
                d.line(at(a), at(b), 4.0, INSIDE, Mark::Inside)
            });
            if p.entry {
                d.dot(at(point(s, p.t_enter)), 4.0, ENTRY, Mark::Entry);
            }
            if p.exit {
                d.dot(at(point(s, p.t_exit)), 4.0, EXIT, Mark::Exit);
            }
        }
        vec![
            shapes_entry,
            wall_entry,
            ("segment, no hit".to_string(), MISS),
            ("segment, hits".to_string(), HIT),
            (inside.to_string(), INSIDE),
            ("entry".to_string(), ENTRY),
            ("exit".to_string(), EXIT),
        ]
    };
    canvas::axes(d, v);
    canvas::legend(d, &entries);
}
