//! `overlaps`: polygon × polygon. Every polygon of `--polygons` against every polygon of
//! `--other`, closed (touching and containment overlap), one `polygon,other` row per
//! overlapping pair in (polygon, other) order. Both sets are read and checked whole before any
//! work, so bad input leaves no output.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::job::{destination, one_stdin};
use crate::options::{BackendArg, Outcome, engine};
use crate::output::{Sink, Table};
use crate::polygons::PolygonFile;

#[derive(Args)]
pub struct OverlapsArgs {
    /// Polygons, holes and multipolygons included: `.wkt` (one POLYGON or MULTIPOLYGON a
    /// line), `.geojson`/`.json` (Polygon and MultiPolygon features), or vertices (.npy
    /// float32 [V, 2], CSV x,y, .f32) with --polygon-offsets.
    #[arg(long)]
    polygons: PathBuf,
    /// The flat form's offsets for --polygons: an .npy of P + 1 integers from 0 to V.
    #[arg(long)]
    polygon_offsets: Option<PathBuf>,
    /// The polygons each of --polygons is tested against, in the same formats.
    #[arg(long)]
    other: PathBuf,
    /// The flat form's offsets for --other.
    #[arg(long)]
    other_offsets: Option<PathBuf>,
    /// Where the engine runs: a hardware GPU when one opens, else the CPU (`auto`); the GPU
    /// whatever it is, lavapipe included (`gpu`); or the CPU (`cpu`).
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Output: .npy (structured rows) or CSV (any other name); stdout (CSV) when absent.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Skip invalid polygons (counted, the first few reported) instead of stopping at the
    /// first. Polygon ids stay those of the input.
    #[arg(long)]
    skip_invalid: bool,
    #[command(flatten)]
    origin: crate::origin::OriginArgs,
}

pub fn run(args: OverlapsArgs) -> Outcome {
    let inputs: Vec<&Path> = [Some(args.polygons.as_path()), Some(args.other.as_path())]
        .into_iter()
        .chain([
            args.polygon_offsets.as_deref(),
            args.other_offsets.as_deref(),
        ])
        .flatten()
        .collect();
    crate::output::not_an_input(args.out.as_deref(), &inputs)?;
    Sink::check(args.out.as_deref(), Table::Overlaps)?;
    one_stdin(&[&args.polygons, &args.other])?;
    let kind = rectcast_geotext::Kind::Polygons;
    let both = [
        (args.polygons.as_path(), kind),
        (args.other.as_path(), kind),
    ];
    crate::origin::choose(args.origin.origin, &args.polygons, &both)?;
    let a = PolygonFile::read(
        &args.polygons,
        args.polygon_offsets.as_deref(),
        args.skip_invalid,
    )?;
    let b = PolygonFile::read(
        &args.other,
        args.other_offsets.as_deref(),
        args.skip_invalid,
    )?;
    // Both inputs are read whole and checked: stdout gets rows only after that.
    let to = destination(args.out.as_deref(), &[], || Ok(()))?;
    let mut engine = engine(args.backend.into())?;
    let overlap = engine
        .polygon_overlaps(&a.polygons, &b.polygons)
        .map_err(|e| e.to_string())?;
    crate::job::note_engine(&engine, &mut crate::job::Said::default());
    let m = b.polygons.len();
    let mut sink = Sink::create(to, Table::Overlaps)?;
    sink.overlaps(
        overlap
            .iter()
            .enumerate()
            .filter(|(_, o)| **o)
            .map(|(i, _)| (a.ids[i / m], b.ids[i % m])),
    )?;
    sink.finish()?;
    a.report();
    b.report();
    Ok(())
}
