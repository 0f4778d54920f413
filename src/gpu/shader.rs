//! The WGSL sources and the constants they are specialised with.
//!
//! `shaders/segment_rect.wgsl` holds the per-pair function; each kernel file is compiled after it.
//! The shaders declare every number as an `override` without a default; the `*_constants`
//! functions supply them from the Rust definitions, so a number lives in one place. A missing
//! one fails pipeline creation (and the plain `cargo test` naga check).

use super::emulation::Emulation;
use crate::cpu::rect_queries::{FILTER_RECTS, FILTER_SEGMENTS, query};
use crate::cpu::segment_rect::{filter, time};
use crate::types::{Filter, FirstHit, Sides, flags};

/// `shaders/segment_rect.wgsl`: the per-pair function `segment_rect(s: Segment, r: Rect) ->
/// PairResult` and the structs it takes, for inclusion in your own shaders. Specialise the
/// pipeline with [`segment_rect_constants`]. A result whose `flags` equal `FLAG_UNCERTAIN` is a pair the
/// GPU could not decide with certainty: decide it with [`crate::segment_rect`] on the host.
pub const SEGMENT_RECT_WGSL: &str = include_str!("../../shaders/segment_rect.wgsl");

/// The prefix of every module-scope name of [`segment_rect_wgsl`].
pub const EXPORT_PREFIX: &str = "rc_";

/// [`SEGMENT_RECT_WGSL`] for a game's own shader: every `override` a `const` with its value
/// (native arithmetic), so the pipeline takes no constants, and every module-scope name
/// prefixed with [`EXPORT_PREFIX`], so that none meets the game's own (`rc_Segment`,
/// `rc_Rect`, `rc_PairResult`, `rc_segment_rect`, …; the structs' fields keep their names).
/// Include it before your kernel and call `rc_segment_rect(s, r)`; a result whose `flags`
/// equal [`flags::UNCERTAIN`] is decided with [`crate::segment_rect`] on the host.
/// examples/game_shader.rs runs it in a pipeline of its own.
pub fn segment_rect_wgsl() -> String {
    let header = "// rectcast's shaders/segment_rect.wgsl, specialised: each override below is a \
                  const with the value rectcast's pipelines pass, and each name prefixed.\n";
    let constants = segment_rect_constants(Emulation::Native);
    header.to_string() + &prefixed(&specialised(SEGMENT_RECT_WGSL, &constants), EXPORT_PREFIX)
}

/// The names `source` declares at module scope: each `struct`, `fn`, `const`, `override`,
/// `var` and `alias` that starts a line.
fn module_names(source: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for line in source.lines() {
        let mut words = line.splitn(2, ' ');
        let (Some(keyword), Some(rest)) = (words.next(), words.next()) else {
            continue;
        };
        let rest = match keyword {
            "struct" | "fn" | "const" | "override" | "alias" => rest,
            // `var<storage, read> name: …`
            k if k.starts_with("var") => match line.find('>') {
                Some(end) if k.contains('<') => line[end + 1..].trim_start(),
                _ => rest,
            },
            _ => continue,
        };
        let name = identifier(rest.trim_start());
        if !name.is_empty() {
            names.push(name);
        }
    }
    names
}

/// The identifier `s` starts with (empty if none).
fn identifier(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// `source` (WGSL whose module-scope declarations start their lines, as rectcast's do) with
/// each module-scope name `prefix`ed wherever it is used: not after a `.` (a field), and not
/// where a struct declares a field of that name. Comments are kept as they are.
pub fn prefixed(source: &str, prefix: &str) -> String {
    let names = module_names(source);
    let mut out = String::with_capacity(source.len() + 8 * names.len());
    let (mut in_struct, mut depth, mut after_struct) = (false, 0usize, false);
    let mut last = ' ';
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let word = identifier(rest);
            let tail = &rest[word.len()..];
            let field_declared = in_struct && tail.trim_start().starts_with(':');
            if last != '.' && !field_declared && names.contains(&word) {
                out.push_str(prefix);
            }
            out.push_str(word);
            after_struct |= word == "struct";
            last = 'a';
            rest = tail;
            continue;
        }
        match c {
            '{' => {
                depth += 1;
                if after_struct {
                    in_struct = true;
                    after_struct = false;
                }
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    in_struct = false;
                }
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `source` with each `override NAME: TYPE;` declaration that `constants` names made
/// `const NAME: TYPE = value;`: floats as exact hexadecimal literals, integers as `u` or `i`
/// literals. An override `constants` does not name, or whose value its type cannot hold
/// exactly (a fraction or an out-of-range integer, a non-finite float, a float f32 rounds), is
/// left as it is, for the pipeline to set.
pub fn specialised(source: &str, constants: &[(&str, f64)]) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        let declared = line
            .trim()
            .strip_prefix("override ")
            .and_then(|rest| rest.strip_suffix(';'))
            .and_then(|decl| decl.split_once(':'))
            .map(|(name, ty)| (name.trim(), ty.trim()));
        let value = declared.and_then(|(name, ty)| {
            let (_, v) = constants.iter().find(|(n, _)| *n == name)?;
            Some((name, ty, wgsl_literal(ty, *v)?))
        });
        match value {
            Some((name, ty, literal)) => {
                out.push_str(&format!("const {name}: {ty} = {literal};"));
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

/// `v` as a WGSL literal of type `ty` (`u32`, `i32`, `f32`), exactly; `None` for another type
/// or a value the type does not hold exactly.
fn wgsl_literal(ty: &str, v: f64) -> Option<String> {
    let integral = |lo: f64, hi: f64| v.fract() == 0.0 && (lo..=hi).contains(&v);
    match ty {
        "u32" if integral(0.0, f64::from(u32::MAX)) => Some(format!("{}u", v as u32)),
        // -2147483648i is the negation of a literal i32 cannot hold.
        "i32" if v == f64::from(i32::MIN) => Some("(-2147483647i - 1i)".into()),
        "i32" if integral(f64::from(i32::MIN), f64::from(i32::MAX)) => {
            Some(format!("{}i", v as i32))
        }
        "f32" if v.is_finite() && f64::from(v as f32) == v => {
            let bits = (v as f32).to_bits();
            let sign = if bits >> 31 == 1 { "-" } else { "" };
            let (exponent, fraction) = ((bits >> 23) & 0xff, bits & 0x7f_ffff);
            // 23 fraction bits as six hexadecimal digits.
            Some(match exponent {
                0 => format!("{sign}0x0.{:06x}p-126f", fraction << 1),
                e => format!("{sign}0x1.{:06x}p{}f", fraction << 1, e as i32 - 127),
            })
        }
        _ => None,
    }
}

/// The dense and pair-list kernels (`shaders/rect_pairs.wgsl`), after the per-pair function.
pub const RECT_PAIRS_WGSL: &str = concat!(
    include_str!("../../shaders/segment_rect.wgsl"),
    "\n",
    include_str!("../../shaders/rect_pairs.wgsl")
);

/// The per-segment query kernels (`shaders/rect_queries.wgsl`), after the per-pair function.
pub const RECT_QUERIES_WGSL: &str = concat!(
    include_str!("../../shaders/segment_rect.wgsl"),
    "\n",
    include_str!("../../shaders/rect_queries.wgsl")
);

/// The broad phase's kernels over rects (`shaders/grid.wgsl`: the grid's build, and the rects'
/// queries through it), after the per-pair function, the query kernels, whose helpers they
/// call, and the walk (`shaders/grid_walk.wgsl`, which the shapes' kernels walk too).
pub const GRID_WGSL: &str = concat!(
    include_str!("../../shaders/segment_rect.wgsl"),
    "\n",
    include_str!("../../shaders/rect_queries.wgsl"),
    "\n",
    include_str!("../../shaders/grid_walk.wgsl"),
    "\n",
    include_str!("../../shaders/grid.wgsl")
);

/// The exact integers (`shaders/exact.wgsl`: `Big`, `Wide`, `ratio_to_f32`) after the per-pair
/// function of rects (whose `mul_wide` they use): what the shapes' kernels build on.
pub const EXACT_WGSL: &str = concat!(
    include_str!("../../shaders/segment_rect.wgsl"),
    "\n",
    include_str!("../../shaders/exact.wgsl")
);

/// A kernel the host compiles: its file in `shaders/`, the whole source its pipelines compile
/// (the file after what it builds on), and the constants they are specialised with.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub file: &'static str,
    pub source: &'static str,
    /// Every `override` of `source`, by name. A kernel that runs several queries takes the
    /// query as the constant `QUERY` ([`rect_queries_constants`]): here it is 0, and a pipeline
    /// sets it to one of the `QUERY_*` values beside it.
    pub constants: Constants,
}

/// Every kernel the host compiles, emulating `emulation` ([`Emulation::Native`] but in tests),
/// one per file of `shaders/` but the parts they include: the rects' function and kernels,
/// the exact integers, the broad phase's grid, and each registered shape's
/// ([`crate::registry::SHAPES`]). What `rectcast shaders --json` exports, for a page or a
/// game to compile with these constants.
pub fn kernels(emulation: Emulation) -> Vec<Kernel> {
    let mut kernels = vec![
        Kernel {
            file: "segment_rect.wgsl",
            source: SEGMENT_RECT_WGSL,
            constants: segment_rect_constants(emulation),
        },
        Kernel {
            file: "rect_pairs.wgsl",
            source: RECT_PAIRS_WGSL,
            constants: rect_pairs_constants(emulation),
        },
        Kernel {
            file: "rect_queries.wgsl",
            source: RECT_QUERIES_WGSL,
            constants: rect_queries_constants(0, emulation),
        },
        Kernel {
            file: "grid.wgsl",
            source: GRID_WGSL,
            constants: grid_constants(0, emulation),
        },
        Kernel {
            file: "exact.wgsl",
            source: EXACT_WGSL,
            constants: exact_constants(emulation),
        },
    ];
    kernels.extend(crate::registry::SHAPES.iter().map(|shape| Kernel {
        file: shape.kernel.file,
        source: shape.kernel.source,
        constants: (shape.constants)(emulation),
    }));
    kernels
}

/// Cells each invocation of the grid's prefix sum adds up serially (a workgroup takes
/// `WORKGROUP_SIZE` times as many).
pub const SCAN_PER_INVOCATION: u32 = 16;

/// Invocations per workgroup of every rectcast kernel, and rects per workgroup tile.
pub const WORKGROUP_SIZE: u32 = 64;

/// Pipeline constants: each `override`'s name and value.
pub type Constants = Vec<(&'static str, f64)>;

/// The overridable constants of [`SEGMENT_RECT_WGSL`], by name, for kernels emulating
/// `emulation` (tests only; [`Emulation::Native`] otherwise).
pub fn segment_rect_constants(emulation: Emulation) -> Constants {
    vec![
        ("FLAG_HIT", flags::HIT as f64),
        ("FLAG_START_INSIDE", flags::START_INSIDE as f64),
        ("FLAG_END_INSIDE", flags::END_INSIDE as f64),
        ("ENTRY_SHIFT", flags::ENTRY_SHIFT as f64),
        ("EXIT_SHIFT", flags::EXIT_SHIFT as f64),
        ("SIDE_MIN_X", Sides::MIN_X.bits() as f64),
        ("SIDE_MAX_X", Sides::MAX_X.bits() as f64),
        ("SIDE_MIN_Y", Sides::MIN_Y.bits() as f64),
        ("SIDE_MAX_Y", Sides::MAX_Y.bits() as f64),
        ("FLAG_UNCERTAIN", flags::UNCERTAIN as f64),
        ("FILTER_RELATIVE", filter::FILTER_RELATIVE as f64),
        ("FILTER_ABSOLUTE", filter::FILTER_ABSOLUTE as f64),
        ("FILTER_FLOOR", filter::FILTER_FLOOR as f64),
        ("MAX_SPREAD", time::MAX_SPREAD as f64),
        ("ZERO_EXPONENT", time::ZERO_EXPONENT as f64),
        ("EMULATION", emulation.code() as f64),
        ("EMULATE_NATIVE", Emulation::Native.code() as f64),
        ("EMULATE_ROUNDING", Emulation::Rounding.code() as f64),
        ("EMULATE_FLUSH", Emulation::Flush.code() as f64),
        ("EMULATE_FUSED", Emulation::Fused.code() as f64),
        ("EMULATE_UNCERTIFIED", Emulation::Uncertified.code() as f64),
    ]
}

/// The overridable constants of [`RECT_PAIRS_WGSL`].
pub fn rect_pairs_constants(emulation: Emulation) -> Constants {
    let mut constants = segment_rect_constants(emulation);
    constants.push(("WORKGROUP_SIZE", WORKGROUP_SIZE as f64));
    constants
}

/// The overridable constants of [`EXACT_WGSL`]: those of the rects' file it builds on, and the
/// narrow integers' reach.
pub fn exact_constants(emulation: Emulation) -> Constants {
    let mut constants = segment_rect_constants(emulation);
    constants.push(("NARROW_SPAN", crate::cpu::narrow::SPAN as f64));
    constants
}

/// The overridable constants of what every shape's kernel is composed of besides its own file:
/// [`EXACT_WGSL`] and the passes over a tile (`shaders/shape_passes.wgsl`).
pub fn shape_passes_constants(emulation: Emulation) -> Constants {
    let mut constants = exact_constants(emulation);
    constants.push(("WORKGROUP_SIZE", WORKGROUP_SIZE as f64));
    constants
}

/// `constants` with those of `shaders/shape_queries.wgsl`, which a shape's kernel may end with
/// ([`crate::ShapeKernel::reduces`]).
pub(crate) fn with_shape_queries(mut constants: Constants) -> Constants {
    constants.push(("NO_SHAPE", crate::cpu::shape_queries::NO_SHAPE as f64));
    constants
}

/// The overridable constants of [`RECT_QUERIES_WGSL`], for a pipeline running `query` (a
/// [`query`] value; the `clip` entry point ignores it), emulating `emulation`.
pub fn rect_queries_constants(query: u32, emulation: Emulation) -> Constants {
    let mut constants = segment_rect_constants(emulation);
    constants.extend([
        ("WORKGROUP_SIZE", WORKGROUP_SIZE as f64),
        ("QUERY", query as f64),
        ("QUERY_FIRST_HIT", query::QUERY_FIRST_HIT as f64),
        ("QUERY_COUNTS", query::QUERY_COUNTS as f64),
        ("QUERY_HITS", query::QUERY_HITS as f64),
        ("NO_RECT", FirstHit::NO_RECT as f64),
        ("FILTER_SEGMENTS", FILTER_SEGMENTS as f64),
        ("FILTER_RECTS", FILTER_RECTS as f64),
        ("FILTER_ALL", Filter::ALL.category as f64),
    ]);
    constants
}

/// The overridable constants of [`GRID_WGSL`], for a pipeline running `query` (the build's
/// entry points ignore it), emulating `emulation`.
pub fn grid_constants(query: u32, emulation: Emulation) -> Constants {
    let mut constants = rect_queries_constants(query, emulation);
    constants.extend(grid_walk_constants());
    constants.push(("SCAN_PER_INVOCATION", SCAN_PER_INVOCATION as f64));
    constants
}

/// The overridable constants of a shape's queries through the grid
/// ([`crate::ShapeKernel::grid`]), after the shape's own (`constants`,
/// [`crate::Shape::constants`]): the walk's ([`grid_walk_constants`]), its times'
/// (`crate::cpu::shape_walk::time_bounds`), and the list's
/// `NO_SHAPE` where the kernel does not reduce its contacts (polygons: their grid file
/// declares it, a reducing kernel's reductions do).
pub fn shape_grid_constants(kernel: &crate::ShapeKernel, mut constants: Constants) -> Constants {
    use crate::cpu::shape_walk::time_bounds::{
        RATIO_LARGEST, RATIO_SMALLEST, TIME_FLOOR, TIME_LARGEST, TIME_RELATIVE, TIME_SMALLEST,
    };
    constants.extend(grid_walk_constants());
    constants.extend([
        ("TIME_RELATIVE", TIME_RELATIVE as f64),
        ("TIME_FLOOR", TIME_FLOOR as f64),
        ("TIME_SMALLEST_BITS", TIME_SMALLEST.to_bits() as f64),
        ("TIME_LARGEST_BITS", TIME_LARGEST.to_bits() as f64),
        ("RATIO_SMALLEST_BITS", RATIO_SMALLEST.to_bits() as f64),
        ("RATIO_LARGEST_BITS", RATIO_LARGEST.to_bits() as f64),
    ]);
    match kernel.reduces {
        true => constants,
        false => with_shape_queries(constants),
    }
}

/// The overridable constants of the walk through the grid (`shaders/grid_walk.wgsl`): its
/// widening and its floor, from `src/cpu/grid.rs`. A shape's queries through the grid
/// ([`crate::ShapeKernel::grid`]) take them after the shape's own ([`crate::Shape::constants`]).
pub fn grid_walk_constants() -> Constants {
    use crate::cpu::grid::{
        ROWS_PER_RECT_SCAN, WALK_MARGIN_ABSOLUTE, WALK_MARGIN_RELATIVE, WALK_MIN_SPAN,
    };
    vec![
        ("WALK_MARGIN_RELATIVE", WALK_MARGIN_RELATIVE as f64),
        ("WALK_MARGIN_ABSOLUTE", WALK_MARGIN_ABSOLUTE as f64),
        ("WALK_MIN_SPAN", WALK_MIN_SPAN as f64),
        ("ROWS_PER_RECT_SCAN", ROWS_PER_RECT_SCAN as f64),
    ]
}

/// One axis of `grid.wgsl`'s `GridParams`. Mirrors WGSL `Axis`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GridAxis {
    /// Where the axis's bounds start in the bounds array.
    pub first: u32,
    pub cells: u32,
    pub origin: f32,
    pub scale: f32,
}

/// The uniform block of `grid.wgsl`. Mirrors WGSL `GridParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GridParams {
    pub xs: GridAxis,
    pub ys: GridAxis,
    pub cols: u32,
    pub rows: u32,
    pub rect_count: u32,
    /// 1 where the cells list walls along their lines ([`crate::cpu::grid::Grid::along`]),
    /// else 0.
    pub along: u32,
}

/// The uniform block of each shape's kernel (`segment_segment.wgsl`, `segment_circle.wgsl`).
/// Mirrors WGSL `ShapeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ShapeParams {
    pub query_count: u32,
    pub shape_count: u32,
    pub pair_count: u32,
    /// The most workgroups a dispatch may have in x: the rows of the dense kernels' second
    /// pass, whose size only the GPU knows (`list_dispatch`).
    pub row_workgroups: u32,
}

/// The uniform block of `rect_pairs.wgsl`. Mirrors WGSL `Params`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Params {
    pub segment_count: u32,
    pub rect_count: u32,
    pub pair_count: u32,
    /// Pads the block to 16 bytes.
    pub padding: u32,
}

/// The uniform block of `rect_queries.wgsl`. Mirrors WGSL `QueryParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct QueryParams {
    pub segment_count: u32,
    pub rect_count: u32,
    /// `FILTER_SEGMENTS | FILTER_RECTS`: which filter arrays hold real filters.
    pub filters: u32,
    /// Pads the block to 16 bytes.
    pub padding: u32,
}

const _: () = assert!(size_of::<Params>() == 16);
const _: () = assert!(size_of::<QueryParams>() == 16);
const _: () = assert!(size_of::<GridParams>() == 48);
