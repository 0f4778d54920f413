//! The `rectcast` command line: `pairs`, `first-hit`, `hits`, `count`, `clip`, `gen`, `info`,
//! `demo`, `render`, `bench`, `serve`, `shaders`.
//!
//! - `commands/`: one module per command (its arguments and its `run`); a new command is a
//!   module there and a variant of [`Command`].
//! - `formats/`: one module per file format, with its reader and its writer; `table.rs` is the
//!   interface between the two sides.
//! - `records.rs` (input files, record by record), `output.rs` (the tables and where they go),
//!   `job.rs` (what the streaming jobs share), `options.rs` (what every command shares).

mod commands;
mod formats;
mod job;
mod kept;
mod mixed;
mod options;
mod origin;
mod output;
mod polygons;
mod polylines;
mod records;
mod shape_files;
mod signals;
mod table;
mod targets;

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::queries::{Query, QueryArgs};
use commands::{bench, clip, demo, generate, info, overlaps, queries, render, serve, shaders};
use options::{Outcome, SimdArg};

#[derive(Parser)]
#[command(
    name = "rectcast",
    version,
    about = "Exact segment collision against rects, walls, circles and polygons, on the GPU or the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// CPU backend: worker threads (0: one per core).
    #[arg(long, global = true, default_value_t = 0)]
    threads: usize,
    /// CPU backend: the SIMD level (auto: the best this CPU runs).
    #[arg(long, global = true, value_enum, default_value = "auto")]
    simd: SimdArg,
    /// GPU backend: how long a step may take before the GPU is taken as stuck, in seconds,
    /// plus 100 s per 10^9 pairs (default 10; the first run of a walls, circles or polygons
    /// kernel gets 120 s more, and later ones at least four times their measured pace). For a
    /// slow adapter.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = options::parse_gpu_wait)]
    gpu_wait: Option<std::time::Duration>,
    /// Say on stderr where each query ran and why: with `--backend auto`, the cost model's
    /// estimates for the CPU and the GPU (RECTCAST_AUTO_COSTS sets its constants; `rectcast
    /// bench --query auto` measures them).
    #[arg(long, short, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Every segment against every rect, one row per pair (segment-major).
    Pairs(QueryArgs),
    /// The closest hit of each segment: the rect with the smallest t_enter (ties: the lowest
    /// rect index), one row per segment; on a miss rect is empty and kind is miss.
    FirstHit(QueryArgs),
    /// Only the hitting pairs, in (segment, rect) order, with the `pairs` columns.
    Hits(QueryArgs),
    /// Hits per rect (damage per enemy): one `rect,hits` row per rect.
    Count(QueryArgs),
    /// Polygon × polygon: every polygon of --polygons against every one of --other, closed
    /// (touching and containment overlap); one `polygon,other` row per overlapping pair.
    Overlaps(overlaps::OverlapsArgs),
    /// Each segment clipped to one rect (--rect) or to its own rect (--rects: row i for segment
    /// i): `segment,kind,x0,y0,x1,y1`, coordinates empty on a miss.
    Clip(clip::ClipArgs),
    /// Writes a seeded scene to try and benchmark with: DIR/segments.EXT and DIR/rects.EXT.
    Gen(generate::GenArgs),
    /// The GPU adapters found, the one chosen, and its limits.
    Info,
    /// A bullet-hell frame (thousands of bullets, hundreds of hitboxes) on the chosen backend.
    Demo(demo::DemoArgs),
    /// Draws a scene as the engine decides it, to a PNG or an SVG: rects, segments (grey: no
    /// hit, orange: hits), the part inside a rect in red, entry and exit points, a legend.
    Render(render::RenderArgs),
    /// Throughput of a query per backend: dense pairs on a seeded random scene (default
    /// 4096 x 1024), first hit on a bullet-hell scene (default 65536 x 4096), or the per-frame
    /// API's latency on a bullet-hell frame (default 10000 x 1000, GPU only).
    Bench(bench::BenchArgs),
    /// The playground: a local web page where the library's own WGSL runs in the browser's
    /// WebGPU, checked against this engine (prints its address; --open opens it).
    Serve(serve::ServeArgs),
    /// Every kernel as the library compiles it: WGSL, override constants, entry points and
    /// their bindings (--json for a page or a game).
    Shaders(shaders::ShadersArgs),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = Cli::parse();
    quiet_drivers();
    // After quiet_drivers, which sets a variable while no other thread exists.
    signals::install();
    options::set_cpu_options(rectcast::CpuOptions {
        threads: cli.threads,
        simd: cli.simd.level(),
    });
    options::set_gpu_wait(cli.gpu_wait);
    options::set_verbose(cli.verbose);
    let outcome: Outcome = match cli.command {
        Command::Pairs(args) => queries::run(args, Query::Pairs),
        Command::FirstHit(args) => queries::run(args, Query::FirstHit),
        Command::Hits(args) => queries::run(args, Query::Hits),
        Command::Count(args) => queries::run(args, Query::Count),
        Command::Overlaps(args) => overlaps::run(args),
        Command::Clip(args) => clip::run(args),
        Command::Gen(args) => generate::run(args),
        Command::Info => info::run(),
        Command::Demo(args) => demo::run(args),
        Command::Render(args) => render::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Shaders(args) => shaders::run(args),
    };
    options::finish_opening();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rectcast: error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A closed stdout (`rectcast pairs … | head -1`) ends the command as it ends any Unix tool: at
/// once, by SIGPIPE, with nothing printed. Rust ignores SIGPIPE, which would turn every write to
/// a closed pipe into an error message instead. Rows go to stdout only when no named temporary
/// file is open (with `--out` they go to the file), so a SIGPIPE leaves nothing behind.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: at the start of main, before any other thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Mesa's drivers print "error: XDG_RUNTIME_DIR is invalid or not set" on every adapter list
/// when the variable is unset (headless machines, cron, containers), although nothing is wrong.
/// Give them a runtime folder then, before any GPU call: a private one of this user's, as tmux
/// does (`$TMPDIR/rectcast-runtime-UID`, mode 0700, kept: a command ended by SIGPIPE could
/// not remove a fresh one). Where it cannot be had safely, the noise stays.
#[cfg(unix)]
fn quiet_drivers() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| Path::new(&dir).is_absolute()) {
        return;
    }
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let dir = std::env::temp_dir().join(format!("rectcast-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    // Ours alone: a real folder (not a link someone planted), owned by us, closed to others.
    let private = std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0);
    if private {
        // SAFETY: at the start of main, before any other thread exists (no engine, no rayon
        // pool).
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

#[cfg(not(unix))]
fn quiet_drivers() {}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn every_option_of_every_command_has_help_text() {
        let cli = Cli::command();
        let mut missing = Vec::new();
        let commands = std::iter::once(&cli).chain(cli.get_subcommands());
        for command in commands {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{} --{id}", command.get_name()));
                }
            }
        }
        assert!(missing.is_empty(), "options without help text: {missing:?}");
    }
}
