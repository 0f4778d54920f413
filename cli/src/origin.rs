//! `--origin`: the (x, y) subtracted, in f64, from every WKT and GeoJSON coordinate before it
//! is rounded to f32. Geometry far from (0, 0) (web mercator's x near -8.24e6, where f32's
//! spacing is 0.5) keeps its precision in a frame near it; intersections do not change under
//! translation, and neither do the rows' t. Records (CSV, .npy, .f32, Parquet) are f32 already
//! and are never shifted, so a job that mixes them with geometry text takes no given origin.
//!
//! `auto` (the default): where the segments and the targets are all WKT or GeoJSON,
//! `rectcast_geotext::auto_origin` of the targets' bounds (the rule the Python package takes);
//! else none. `none`: none. `X,Y`: that one.

use std::path::Path;
use std::sync::OnceLock;

use rectcast_geotext as geotext;

/// `--origin`, as the queries and `overlaps` take it.
#[derive(clap::Args, Clone, Copy)]
pub struct OriginArgs {
    /// WKT and GeoJSON only: the X,Y subtracted, in f64, from every coordinate before it is
    /// rounded to f32, so that geometry far from 0,0 (web mercator's) keeps its precision; the
    /// rows' t do not change. `auto`: where every input is WKT or GeoJSON, the targets' (both
    /// files' for overlaps) bounds' centre in whole units, on an axis where they lie farther
    /// from 0 than their size; else none. `none`: none. Said on stderr when not 0,0, and where
    /// rounding moves a vertex by more than 2^-20 of the geometry's extent.
    #[arg(
        long,
        value_name = "auto|none|X,Y",
        default_value = "auto",
        allow_hyphen_values = true
    )]
    pub origin: OriginArg,
}

/// What `--origin` says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OriginArg {
    Auto,
    None,
    At([f64; 2]),
}

impl std::str::FromStr for OriginArg {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "auto" => return Ok(OriginArg::Auto),
            "none" => return Ok(OriginArg::None),
            _ => {}
        }
        let numbers: Vec<_> = text.split(',').map(|n| n.trim().parse::<f64>()).collect();
        match numbers[..] {
            [Ok(x), Ok(y)] if x.is_finite() && y.is_finite() => Ok(OriginArg::At([x, y])),
            _ => Err(format!(
                "expected auto, none or two finite numbers X,Y (-8240000,4970000), found {text:?}"
            )),
        }
    }
}

/// The job's origin, chosen once ([`choose`]); (0, 0) before.
static ORIGIN: OnceLock<[f64; 2]> = OnceLock::new();

/// The origin WKT and GeoJSON inputs are read at.
pub fn origin() -> [f64; 2] {
    ORIGIN.get().copied().unwrap_or([0.0; 2])
}

/// Chooses the job's origin from `arg`, for `segments` (or the first polygons of `overlaps`)
/// against `targets` (each read as its kind of geometry), and keeps it for every read after.
///
/// # Errors
/// A given origin with an input that is records, not geometry text; a target file that
/// cannot be read.
pub fn choose(
    arg: OriginArg,
    segments: &Path,
    targets: &[(&Path, geotext::Kind)],
) -> Result<[f64; 2], String> {
    let text = |path: &Path| geotext::Format::of(path).is_some();
    let chosen = match arg {
        OriginArg::None => [0.0; 2],
        OriginArg::At(at) => {
            if let Some(records) = std::iter::once(segments)
                .chain(targets.iter().map(|(path, _)| *path))
                .find(|path| !text(path))
            {
                return Err(format!(
                    "--origin shifts WKT and GeoJSON, whose coordinates are rounded to f32 as \
                     they are read; {} is records, f32 already: give them in one frame, or \
                     --origin none",
                    records.display()
                ));
            }
            at
        }
        OriginArg::Auto if !(text(segments) && targets.iter().all(|(path, _)| text(path))) => {
            [0.0; 2]
        }
        OriginArg::Auto => {
            let mut bounds: Option<[f64; 4]> = None;
            for &(path, kind) in targets {
                if let Some(b) = parsed(path, kind)?.bounds() {
                    let all = bounds.get_or_insert(b);
                    *all = [
                        all[0].min(b[0]),
                        all[1].min(b[1]),
                        all[2].max(b[2]),
                        all[3].max(b[3]),
                    ];
                }
            }
            bounds.map_or([0.0; 2], geotext::auto_origin)
        }
    };
    let _ = ORIGIN.set(chosen);
    if chosen != [0.0; 2] {
        eprintln!(
            "rectcast: WKT and GeoJSON shifted by origin {},{} before rounding to f32 (--origin)",
            chosen[0], chosen[1]
        );
    }
    Ok(chosen)
}

/// A geometry text file, parsed.
fn parsed(path: &Path, kind: geotext::Kind) -> Result<geotext::Parsed, String> {
    use std::io::Read;
    let format = geotext::Format::of(path).expect("a geometry text file");
    let mut text = String::new();
    crate::formats::Input::open(path)
        .map_err(|e| e.to_string())?
        .data
        .reader()
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    geotext::parse(format, kind, &text).map_err(|e| e.in_file(path.display()))
}

/// `parsed` (of `path`) rounded at the job's origin, and said on stderr where rounding moved
/// a vertex by more than `rectcast_geotext::DISPLACEMENT_BOUND` of its extent.
pub fn rounded(parsed: geotext::Parsed, path: &Path) -> geotext::Read {
    let origin = origin();
    let read = parsed.rounded(origin);
    if read.moved_far() {
        eprintln!(
            "rectcast: {}: rounding to f32 at origin {},{} moved a vertex by {}, more than \
             2^-20 of the geometry's extent {}: the answers are about the rounded vertices; \
             --origin auto (the default) shifts jobs of WKT and GeoJSON near their targets, \
             --origin X,Y near the data any such job",
            path.display(),
            origin[0],
            origin[1],
            read.displacement as f32,
            read.extent as f32
        );
    }
    read
}
