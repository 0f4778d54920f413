//! Every shader parses and validates with naga (no GPU needed), takes exactly the constants the
//! host supplies, and lays out its structs exactly as the Rust mirrors.

use std::mem::{offset_of, size_of};

use rectcast::cpu::grid::CellSpan;
use rectcast::gpu::Emulation;
use rectcast::gpu::shader::{self, GridAxis, GridParams, Params, QueryParams, ShapeParams};
use rectcast::{
    Circle, CircleContact, EdgeContact, Filter, FirstHit, Hit, PairIndex, PairResult, PolygonEdge,
    Rect, Segment, SegmentContact,
};

fn parse(source: &str, name: &str) -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{name} does not parse:\n{}", e.emit_to_string(source)));
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{name} does not validate:\n{}", e.emit_to_string(source)));
    (module, info)
}

/// A registered shape's kernel, by its file: its source and its constants.
fn registered(file: &str) -> (&'static str, Vec<(&'static str, f64)>) {
    let shape = registered_shape(file);
    (shape.kernel.source, (shape.constants)(Emulation::Native))
}

/// A registered shape's queries through the grid, by its kernel's file: their source and
/// constants.
fn registered_grid(file: &str) -> (&'static str, Vec<(&'static str, f64)>) {
    let shape = registered_shape(file);
    let source = (shape.kernel.grid).unwrap_or_else(|| panic!("shaders/{file} walks no grid"));
    let constants =
        shader::shape_grid_constants(&shape.kernel, (shape.constants)(Emulation::Native));
    (source, constants)
}

fn registered_shape(file: &str) -> &'static rectcast::registry::Registered {
    rectcast::registry::SHAPES
        .iter()
        .find(|s| s.kernel.file == file)
        .unwrap_or_else(|| panic!("shaders/{file} is not a registered shape's kernel"))
}

/// Each kernel as the host compiles it: its file after `segment_rect.wgsl`, with its constants.
struct Kernel {
    file: &'static str,
    source: &'static str,
    constants: Vec<(&'static str, f64)>,
    entry_points: &'static [&'static str],
}

/// The entry points of a shape's kernel that runs through every pass and reduces on the GPU:
/// `shaders/shape_passes.wgsl`'s, then `shaders/shape_queries.wgsl`'s.
const SHAPE_ENTRY_POINTS: &[&str] = &[
    "list_dispatch",
    "shape_pairs_dense",
    "shape_pairs_listed",
    "shape_counts",
    "shape_counts_listed",
    "shape_hit_list",
];

/// The entry points of such a kernel's queries through the grid (`ShapeKernel::grid`): its
/// own, then `shaders/shape_grid.wgsl`'s.
const SHAPE_GRID_ENTRY_POINTS: &[&str] = &[
    "list_dispatch",
    "shape_pairs_dense",
    "shape_pairs_listed",
    "shape_counts",
    "shape_counts_listed",
    "shape_hit_list",
    "shape_grid_list",
    "shape_grid_hits",
    "shape_grid_counts",
];

/// The entry points of the polygons' kernel through the grid: its own, then
/// `shaders/shape_walk.wgsl`'s list, then `shaders/polygon_grid.wgsl`'s.
const POLYGON_GRID_ENTRY_POINTS: &[&str] = &[
    "polygon_edges_dense",
    "list_dispatch",
    "shape_pairs_dense",
    "shape_pairs_listed",
    "shape_counts",
    "shape_counts_listed",
    "shape_grid_list",
    "polygon_grid_edges",
];

fn kernels() -> [Kernel; 14] {
    [
        Kernel {
            file: "segment_rect.wgsl",
            source: shader::SEGMENT_RECT_WGSL,
            constants: shader::segment_rect_constants(Emulation::Native),
            entry_points: &[],
        },
        Kernel {
            file: "rect_pairs.wgsl",
            source: shader::RECT_PAIRS_WGSL,
            constants: shader::rect_pairs_constants(Emulation::Native),
            entry_points: &["pairs_dense", "pairs_list", "compact_pairs"],
        },
        Kernel {
            file: "exact.wgsl",
            source: shader::EXACT_WGSL,
            constants: shader::exact_constants(Emulation::Native),
            entry_points: &[],
        },
        Kernel {
            file: "segment_segment.wgsl",
            source: registered("segment_segment.wgsl").0,
            constants: registered("segment_segment.wgsl").1,
            entry_points: SHAPE_ENTRY_POINTS,
        },
        Kernel {
            // The first kernel that runs through its passes.
            file: "shape_passes.wgsl",
            source: registered("segment_segment.wgsl").0,
            constants: registered("segment_segment.wgsl").1,
            entry_points: SHAPE_ENTRY_POINTS,
        },
        Kernel {
            // The first kernel that reduces its contacts with it.
            file: "shape_queries.wgsl",
            source: registered("segment_segment.wgsl").0,
            constants: registered("segment_segment.wgsl").1,
            entry_points: SHAPE_ENTRY_POINTS,
        },
        Kernel {
            // The first kernel whose queries walk the grid with it.
            file: "shape_walk.wgsl",
            source: registered_grid("segment_segment.wgsl").0,
            constants: registered_grid("segment_segment.wgsl").1,
            entry_points: SHAPE_GRID_ENTRY_POINTS,
        },
        Kernel {
            file: "polygon_grid.wgsl",
            source: registered_grid("segment_polygon.wgsl").0,
            constants: registered_grid("segment_polygon.wgsl").1,
            entry_points: POLYGON_GRID_ENTRY_POINTS,
        },
        Kernel {
            file: "shape_grid.wgsl",
            source: registered_grid("segment_segment.wgsl").0,
            constants: registered_grid("segment_segment.wgsl").1,
            entry_points: SHAPE_GRID_ENTRY_POINTS,
        },
        Kernel {
            file: "segment_circle.wgsl",
            source: registered("segment_circle.wgsl").0,
            constants: registered("segment_circle.wgsl").1,
            entry_points: SHAPE_ENTRY_POINTS,
        },
        Kernel {
            file: "segment_polygon.wgsl",
            source: registered("segment_polygon.wgsl").0,
            constants: registered("segment_polygon.wgsl").1,
            entry_points: &[
                "polygon_edges_dense",
                "list_dispatch",
                "shape_pairs_dense",
                "shape_pairs_listed",
                "shape_counts",
                "shape_counts_listed",
            ],
        },
        Kernel {
            file: "rect_queries.wgsl",
            source: shader::RECT_QUERIES_WGSL,
            constants: shader::rect_queries_constants(0, Emulation::Native),
            entry_points: &[
                "hit_offsets",
                "hit_times",
                "order_hits",
                "first_hit_rects",
                "segment_rects",
                "clip",
            ],
        },
        Kernel {
            // The first kernel that walks the grid: the rects' queries through it.
            file: "grid_walk.wgsl",
            source: shader::GRID_WGSL,
            constants: shader::grid_constants(0, Emulation::Native),
            entry_points: &[
                "hit_offsets",
                "hit_times",
                "order_hits",
                "first_hit_rects",
                "segment_rects",
                "clip",
                "segment_cells",
                "grid_count",
                "grid_scan_blocks",
                "grid_scan_sums",
                "grid_add_offsets",
                "grid_fill",
            ],
        },
        Kernel {
            file: "grid.wgsl",
            source: shader::GRID_WGSL,
            constants: shader::grid_constants(0, Emulation::Native),
            entry_points: &[
                "hit_offsets",
                "hit_times",
                "order_hits",
                "first_hit_rects",
                "segment_rects",
                "clip",
                "segment_cells",
                "grid_count",
                "grid_scan_blocks",
                "grid_scan_sums",
                "grid_add_offsets",
                "grid_fill",
            ],
        },
    ]
}

fn kernel(file: &str) -> Kernel {
    kernels()
        .into_iter()
        .find(|k| k.file == file)
        .unwrap_or_else(|| panic!("shaders/{file} is not one of the host's kernels"))
}

fn specialised(kernel: &Kernel) -> naga::Module {
    let name = kernel.file;
    let (module, info) = parse(kernel.source, name);
    let constants: naga::back::PipelineConstants = kernel
        .constants
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    let (module, _) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
            .unwrap_or_else(|e| panic!("{name}: the host's constants do not specialise it: {e:?}"));
    module.into_owned()
}

#[test]
fn every_shader_in_the_shaders_folder_is_a_kernel_the_host_builds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("shaders/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            specialised(&kernel(&file));
            files.push(file);
        }
    }
    files.sort();
    assert_eq!(
        files,
        [
            "exact.wgsl",
            "grid.wgsl",
            "grid_walk.wgsl",
            "polygon_grid.wgsl",
            "rect_pairs.wgsl",
            "rect_queries.wgsl",
            "segment_circle.wgsl",
            "segment_polygon.wgsl",
            "segment_rect.wgsl",
            "segment_segment.wgsl",
            "shape_grid.wgsl",
            "shape_passes.wgsl",
            "shape_queries.wgsl",
            "shape_walk.wgsl"
        ]
    );
}

#[test]
fn every_registered_shape_kernel_composes_with_the_entry_points_it_names() {
    assert!(rectcast::registry::SHAPES.len() >= 3);
    for shape in rectcast::registry::SHAPES {
        let k = &shape.kernel;
        let kernel = Kernel {
            file: k.file,
            source: k.source,
            constants: (shape.constants)(Emulation::Native),
            entry_points: &[],
        };
        let module = specialised(&kernel);
        let found: Vec<&str> = module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        let mut named = vec![k.entry];
        named.extend(k.listed);
        named.extend(k.counts);
        if k.reduces {
            named.push("shape_hit_list");
        }
        for name in named {
            assert!(
                found.contains(&name),
                "{} (shaders/{}): no entry point {name}; it has {found:?}",
                shape.name,
                k.file
            );
        }
    }
}

#[test]
fn every_shape_kernel_in_the_shaders_folder_is_registered() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let mut shapes = Vec::new();
    for entry in std::fs::read_dir(dir).expect("shaders/") {
        let file = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if file.starts_with("segment_") && file != "segment_rect.wgsl" {
            shapes.push(file);
        }
    }
    assert!(shapes.len() >= 3, "{shapes:?}");
    for file in shapes {
        assert!(
            rectcast::registry::SHAPES
                .iter()
                .any(|s| s.kernel.file == file),
            "shaders/{file} is a shape's kernel that src/registry.rs does not register"
        );
    }
}

#[test]
fn the_embedded_shaders_are_the_files_in_shaders() {
    let read = |file: &str| {
        std::fs::read_to_string(format!("{}/shaders/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("read")
    };
    let library = read("segment_rect.wgsl");
    assert_eq!(shader::SEGMENT_RECT_WGSL, library);
    for file in ["rect_pairs.wgsl", "rect_queries.wgsl", "exact.wgsl"] {
        assert_eq!(
            kernel(file).source,
            format!("{library}\n{}", read(file)),
            "{file}"
        );
    }
    // The shapes' kernels build on the exact integers and run through the passes over a tile,
    // and their contacts are reduced after; their queries through the grid add the walk.
    for file in ["segment_segment.wgsl", "segment_circle.wgsl"] {
        assert_eq!(
            registered_grid(file).0,
            format!(
                "{}\n{}\n{}\n{}",
                kernel(file).source,
                read("grid_walk.wgsl"),
                read("shape_walk.wgsl"),
                read("shape_grid.wgsl")
            ),
            "{file}"
        );
        assert_eq!(
            kernel(file).source,
            format!(
                "{library}\n{}\n{}\n{}\n{}",
                read("exact.wgsl"),
                read(file),
                read("shape_passes.wgsl"),
                read("shape_queries.wgsl")
            ),
            "{file}"
        );
    }
    // Polygons build on segment × segment, and run their own entry point over the tile.
    assert_eq!(
        kernel("segment_polygon.wgsl").source,
        format!(
            "{library}\n{}\n{}\n{}\n{}",
            read("exact.wgsl"),
            read("segment_segment.wgsl"),
            read("segment_polygon.wgsl"),
            read("shape_passes.wgsl")
        )
    );
    // Their edges through the grid: that kernel, the walk, then their own file.
    assert_eq!(
        registered_grid("segment_polygon.wgsl").0,
        format!(
            "{}\n{}\n{}\n{}",
            kernel("segment_polygon.wgsl").source,
            read("grid_walk.wgsl"),
            read("shape_walk.wgsl"),
            read("polygon_grid.wgsl")
        )
    );
    // The grid's kernels call the queries' helpers.
    assert_eq!(
        kernel("grid.wgsl").source,
        format!(
            "{library}\n{}\n{}\n{}",
            read("rect_queries.wgsl"),
            read("grid_walk.wgsl"),
            read("grid.wgsl")
        )
    );
}

#[test]
fn each_shader_declares_exactly_the_constants_the_host_supplies() {
    for kernel in kernels() {
        let (module, _) = parse(kernel.source, kernel.file);
        let mut declared: Vec<String> = module
            .overrides
            .iter()
            .filter_map(|(_, o)| o.name.clone())
            .collect();
        let mut supplied: Vec<String> = kernel
            .constants
            .iter()
            .map(|(k, _)| k.to_string())
            .collect();
        declared.sort();
        supplied.sort();
        assert_eq!(declared, supplied, "{}", kernel.file);
        for (_, o) in module.overrides.iter() {
            assert!(
                o.init.is_none(),
                "{}: override {:?} has a default: numbers live in Rust",
                kernel.file,
                o.name
            );
        }
    }
}

#[test]
fn entry_points_use_the_hosts_workgroup_size() {
    for kernel in kernels() {
        let module = specialised(&kernel);
        let names: Vec<&str> = module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, kernel.entry_points, "{}", kernel.file);
        for entry in &module.entry_points {
            assert_eq!(
                entry.workgroup_size,
                [shader::WORKGROUP_SIZE, 1, 1],
                "{}",
                entry.name
            );
        }
    }
}

/// Size and (name, offset) of each member of the WGSL struct `name`.
fn wgsl_layout(module: &naga::Module, name: &str) -> (u32, Vec<(String, u32)>) {
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).expect("layout");
    let (handle, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no struct {name} in the shader"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct")
    };
    assert_eq!(*span, layouter[handle].size);
    (
        *span,
        members
            .iter()
            .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
            .collect(),
    )
}

/// (member name, offset) of a Rust mirror.
type Members = Vec<(&'static str, usize)>;

#[test]
fn rust_mirrors_have_the_shaders_struct_layouts() {
    let pairs = specialised(&kernel("rect_pairs.wgsl"));
    let queries = specialised(&kernel("rect_queries.wgsl"));
    let grid = specialised(&kernel("grid.wgsl"));
    let walls = specialised(&kernel("segment_segment.wgsl"));
    let circles = specialised(&kernel("segment_circle.wgsl"));
    let polygons = specialised(&kernel("segment_polygon.wgsl"));
    let cases: [(&naga::Module, &str, usize, Members); 20] = [
        (
            &polygons,
            "PolygonEdge",
            size_of::<PolygonEdge>(),
            vec![
                ("edge", offset_of!(PolygonEdge, edge)),
                ("polygon", offset_of!(PolygonEdge, polygon)),
            ],
        ),
        (
            &polygons,
            "EdgeContact",
            size_of::<EdgeContact>(),
            vec![
                ("t_enter", offset_of!(EdgeContact, t_enter)),
                ("t_exit", offset_of!(EdgeContact, t_exit)),
                ("contact", offset_of!(EdgeContact, contact)),
                ("ends", offset_of!(EdgeContact, ends)),
            ],
        ),
        (
            &circles,
            "Circle",
            size_of::<Circle>(),
            vec![
                ("cx", offset_of!(Circle, cx)),
                ("cy", offset_of!(Circle, cy)),
                ("r", offset_of!(Circle, r)),
            ],
        ),
        (
            &circles,
            "CircleContact",
            size_of::<CircleContact>(),
            vec![
                ("t_enter", offset_of!(CircleContact, t_enter)),
                ("t_exit", offset_of!(CircleContact, t_exit)),
                ("kind", offset_of!(CircleContact, kind)),
            ],
        ),
        (
            &circles,
            "ShapeParams",
            size_of::<ShapeParams>(),
            vec![
                ("query_count", offset_of!(ShapeParams, query_count)),
                ("shape_count", offset_of!(ShapeParams, shape_count)),
                ("pair_count", offset_of!(ShapeParams, pair_count)),
                ("row_workgroups", offset_of!(ShapeParams, row_workgroups)),
            ],
        ),
        (
            &walls,
            "SegmentContact",
            size_of::<SegmentContact>(),
            vec![
                ("t_enter", offset_of!(SegmentContact, t_enter)),
                ("t_exit", offset_of!(SegmentContact, t_exit)),
                ("contact", offset_of!(SegmentContact, contact)),
            ],
        ),
        (
            &walls,
            "ShapeParams",
            size_of::<ShapeParams>(),
            vec![
                ("query_count", offset_of!(ShapeParams, query_count)),
                ("shape_count", offset_of!(ShapeParams, shape_count)),
                ("pair_count", offset_of!(ShapeParams, pair_count)),
                ("row_workgroups", offset_of!(ShapeParams, row_workgroups)),
            ],
        ),
        (
            &grid,
            "Axis",
            size_of::<GridAxis>(),
            vec![
                ("first", offset_of!(GridAxis, first)),
                ("cells", offset_of!(GridAxis, cells)),
                ("origin", offset_of!(GridAxis, origin)),
                ("scale", offset_of!(GridAxis, scale)),
            ],
        ),
        (
            &grid,
            "GridParams",
            size_of::<GridParams>(),
            vec![
                ("xs", offset_of!(GridParams, xs)),
                ("ys", offset_of!(GridParams, ys)),
                ("cols", offset_of!(GridParams, cols)),
                ("rows", offset_of!(GridParams, rows)),
                ("rect_count", offset_of!(GridParams, rect_count)),
                ("along", offset_of!(GridParams, along)),
            ],
        ),
        (
            &grid,
            "CellSpan",
            size_of::<CellSpan>(),
            vec![
                ("col_min", offset_of!(CellSpan, col_min)),
                ("col_max", offset_of!(CellSpan, col_max)),
                ("row_min", offset_of!(CellSpan, row_min)),
                ("row_max", offset_of!(CellSpan, row_max)),
            ],
        ),
        (
            &pairs,
            "Segment",
            size_of::<Segment>(),
            vec![
                ("x0", offset_of!(Segment, x0)),
                ("y0", offset_of!(Segment, y0)),
                ("x1", offset_of!(Segment, x1)),
                ("y1", offset_of!(Segment, y1)),
            ],
        ),
        (
            &pairs,
            "Rect",
            size_of::<Rect>(),
            vec![
                ("min_x", offset_of!(Rect, min_x)),
                ("min_y", offset_of!(Rect, min_y)),
                ("max_x", offset_of!(Rect, max_x)),
                ("max_y", offset_of!(Rect, max_y)),
            ],
        ),
        (
            &pairs,
            "PairIndex",
            size_of::<PairIndex>(),
            vec![
                ("segment", offset_of!(PairIndex, segment)),
                ("rect", offset_of!(PairIndex, rect)),
            ],
        ),
        (
            &pairs,
            "PairResult",
            size_of::<PairResult>(),
            vec![
                ("t_enter", offset_of!(PairResult, t_enter)),
                ("t_exit", offset_of!(PairResult, t_exit)),
                ("flags", offset_of!(PairResult, flags)),
            ],
        ),
        (
            &pairs,
            "Params",
            size_of::<Params>(),
            vec![
                ("segment_count", offset_of!(Params, segment_count)),
                ("rect_count", offset_of!(Params, rect_count)),
                ("pair_count", offset_of!(Params, pair_count)),
                ("padding", offset_of!(Params, padding)),
            ],
        ),
        (
            &queries,
            "Filter",
            size_of::<Filter>(),
            vec![
                ("category", offset_of!(Filter, category)),
                ("mask", offset_of!(Filter, mask)),
            ],
        ),
        (
            &queries,
            "FirstHit",
            size_of::<FirstHit>(),
            vec![
                ("rect", offset_of!(FirstHit, rect)),
                ("result", offset_of!(FirstHit, result)),
            ],
        ),
        (
            &queries,
            "Hit",
            size_of::<Hit>(),
            vec![
                ("segment", offset_of!(Hit, segment)),
                ("rect", offset_of!(Hit, rect)),
                ("result", offset_of!(Hit, result)),
            ],
        ),
        (
            &queries,
            "QueryParams",
            size_of::<QueryParams>(),
            vec![
                ("segment_count", offset_of!(QueryParams, segment_count)),
                ("rect_count", offset_of!(QueryParams, rect_count)),
                ("filters", offset_of!(QueryParams, filters)),
                ("padding", offset_of!(QueryParams, padding)),
            ],
        ),
        (
            &queries,
            "PairResult",
            size_of::<PairResult>(),
            vec![
                ("t_enter", offset_of!(PairResult, t_enter)),
                ("t_exit", offset_of!(PairResult, t_exit)),
                ("flags", offset_of!(PairResult, flags)),
            ],
        ),
    ];
    for (module, name, rust_size, rust_members) in cases {
        let (size, members) = wgsl_layout(module, name);
        assert_eq!(size as usize, rust_size, "size of {name}");
        let rust: Vec<(String, u32)> = rust_members
            .into_iter()
            .map(|(n, o)| (n.to_string(), o as u32))
            .collect();
        assert_eq!(members, rust, "members of {name}");
    }
}

/// The comparison and logic operators of a source, in order, from `fn <from>` to the end of
/// `fn <to>`, comments dropped: the part of a kernel where vello's two copies drifted (`<` on one
/// side, `<=` on the other). Lines marked `// backend:` are where the two backends differ on
/// purpose (the GPU defers an uncertain decision, the CPU decides it inline).
fn decision_operators(source: &str, from: &str, to: &str) -> Vec<&'static str> {
    let start = source
        .find(&format!("fn {from}("))
        .unwrap_or_else(|| panic!("fn {from}"));
    let body_start = source
        .find(&format!("fn {to}("))
        .unwrap_or_else(|| panic!("fn {to}"));
    // The end of the last function: the first line that is only "}" after it starts.
    let end = body_start
        + source[body_start..]
            .find("\n}\n")
            .unwrap_or_else(|| panic!("end of {to}"));
    let mut code: String = source[start..end]
        .lines()
        .filter(|line| !line.contains("// backend:"))
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
        // Not comparisons: WGSL type arguments, arrows, shifts, compound assignment.
        .replace("<i32>", " ")
        .replace("<u32>", " ")
        .replace("<f32>", " ")
        .replace("->", " ")
        .replace("=>", " ")
        .replace("<<", " ")
        .replace(">>", " ")
        .replace("|=", " ")
        .replace("!=", " NE ")
        // A Rust range loop is the shader's loop condition: `a..=b` is `<= b`, `a..b` is `< b`.
        .replace("..=", " <= ")
        .replace("..", " < ");
    // WGSL array types (`array<Big, 9>`) are not comparisons either, nor its pointers
    // (`ptr<function, Candidates>`, a Rust `&mut`), nor a Rust `Option<…>` (the shader's `fits`
    // flag, or its sentinel).
    for generic in ["array<", "ptr<", "Option<"] {
        while let Some(at) = code.find(generic) {
            let close = at + code[at..].find('>').expect("a generic type closes");
            code.replace_range(at..=close, " ");
        }
    }
    const OPERATORS: [&str; 8] = ["<=", ">=", "==", "&&", "||", "<", ">", " NE "];
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while !rest.is_empty() {
        if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
            found.push(*op);
            rest = &rest[op.len()..];
        } else if (rest.starts_with('!') && !rest.starts_with("!=")) || rest.starts_with('~') {
            // Rust's `!` is WGSL's `~` on integers too.
            found.push("!");
            rest = &rest[1..];
        } else {
            let next = rest.chars().next().map_or(1, char::len_utf8);
            rest = &rest[next..];
        }
    }
    found
}

fn assert_same_decisions(cpu_file: &str, wgsl: &str, from: &str, to: &str, at_least: usize) {
    let cpu = std::fs::read_to_string(format!("{}/src/cpu/{cpu_file}", env!("CARGO_MANIFEST_DIR")))
        .expect("read");
    let wgsl = decision_operators(wgsl, from, to);
    let rust = decision_operators(&cpu, from, to);
    assert!(wgsl.len() >= at_least, "too few operators found: {wgsl:?}");
    if let Some(i) = (0..wgsl.len().max(rust.len())).find(|&i| wgsl.get(i) != rust.get(i)) {
        panic!(
            "src/cpu/{cpu_file} drifted from its shader between fn {from} and fn {to}, at decision operator {i}: shader {:?}, cpu {:?}\n  shader: {wgsl:?}\n  cpu:    {rust:?}",
            wgsl.get(i),
            rust.get(i)
        );
    }
}

#[test]
fn cpu_mirror_makes_the_same_decisions_in_the_same_order_as_the_shader() {
    // Not from `order_key`: the CPU compares the values themselves, the shader integer keys.
    assert_same_decisions(
        "segment_rect.rs",
        shader::SEGMENT_RECT_WGSL,
        "outside_slab",
        "pair_times",
        50,
    );
}

#[test]
fn cpu_mirror_orders_first_hits_like_the_shader() {
    assert_same_decisions(
        "rect_queries.rs",
        shader::RECT_QUERIES_WGSL,
        "entry_of",
        "is_closer",
        20,
    );
}

#[test]
fn cpu_mirror_culls_pairs_by_box_like_the_shader() {
    assert_same_decisions(
        "rect_queries.rs",
        shader::RECT_QUERIES_WGSL,
        "segment_box",
        "boxes_overlap",
        7,
    );
}

#[test]
fn cpu_mirror_lists_a_segments_candidates_like_the_shader() {
    assert_same_decisions(
        "shape_walk.rs",
        registered_grid("segment_segment.wgsl").0,
        "candidates_of",
        "next_candidate",
        6,
    );
}

#[test]
fn cpu_mirror_walks_the_grid_like_the_shader() {
    assert_same_decisions(
        "grid.rs",
        shader::GRID_WGSL,
        "cell_of",
        "prefers_brute_force",
        30,
    );
}

#[test]
fn cpu_mirror_does_exact_arithmetic_like_the_shader() {
    assert_same_decisions(
        "exact.rs",
        shader::EXACT_WGSL,
        "big_from_f32",
        "double_shl",
        45,
    );
}

#[test]
fn cpu_mirror_meets_walls_like_the_shader() {
    assert_same_decisions(
        "segment_segment/mod.rs",
        registered("segment_segment.wgsl").0,
        "wall_verdict",
        "segment_segment_hit",
        20,
    );
}

#[test]
fn cpu_mirror_scales_and_rounds_on_the_narrow_integers_like_the_shader() {
    assert_same_decisions(
        "narrow.rs",
        shader::EXACT_WGSL,
        "scaled_values",
        "scaled_values",
        7,
    );
    assert_same_decisions(
        "narrow.rs",
        shader::EXACT_WGSL,
        "narrow_ratio_to_f32",
        "narrow_ratio_to_f32",
        8,
    );
}

#[test]
fn cpu_mirror_meets_walls_on_the_narrow_integers_like_the_shader() {
    assert_same_decisions(
        "segment_segment/narrow.rs",
        registered("segment_segment.wgsl").0,
        "narrow_ratios",
        "wall_contact",
        15,
    );
}

#[test]
fn cpu_mirror_meets_circles_on_the_narrow_integers_like_the_shader() {
    assert_same_decisions(
        "segment_circle/narrow.rs",
        registered("segment_circle.wgsl").0,
        "narrow_meeting",
        "narrow_root_side",
        15,
    );
}

#[test]
fn cpu_mirror_certifies_circle_hits_in_f32_like_the_shader() {
    assert_same_decisions(
        "segment_circle/verdict.rs",
        registered("segment_circle.wgsl").0,
        "in_verdict_range",
        "circle_verdict",
        25,
    );
}

#[test]
fn cpu_mirror_places_polygon_edges_like_the_shader() {
    assert_same_decisions(
        "segment_polygon/mod.rs",
        registered("segment_polygon.wgsl").0,
        "apart",
        "edge_box",
        30,
    );
}

#[test]
fn cpu_mirror_meets_circles_like_the_shader() {
    assert_same_decisions(
        "segment_circle/mod.rs",
        registered("segment_circle.wgsl").0,
        "segment_circle",
        "side_of",
        60,
    );
}

/// The value of a WGSL `const` of a kernel, read from naga's module.
fn wgsl_const(file: &str, name: &str) -> usize {
    let module = specialised(&kernel(file));
    let (_, value) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("const {name} in {file}"));
    match module.global_expressions[value.init] {
        naga::Expression::Literal(naga::Literal::U32(v)) => v as usize,
        ref other => panic!("{name} is not a u32 literal: {other:?}"),
    }
}

#[test]
fn the_exact_integers_have_as_many_limbs_in_wgsl_as_in_the_cpu_mirror() {
    // A function-scope array needs a constant size, so LIMBS and DOUBLE are WGSL consts, not
    // overrides.
    assert_eq!(
        wgsl_const("exact.wgsl", "LIMBS"),
        rectcast::cpu::exact::LIMBS
    );
    assert_eq!(
        wgsl_const("exact.wgsl", "DOUBLE"),
        rectcast::cpu::exact::DOUBLE
    );
}

#[test]
fn the_hit_runs_the_gpu_orders_are_as_long_in_wgsl_as_in_the_cpu_mirror() {
    // `order_hits` sorts in a function-scope array: ORDER_RUN_LIMIT is a WGSL const too.
    assert_eq!(
        wgsl_const("rect_queries.wgsl", "ORDER_RUN_LIMIT"),
        rectcast::cpu::rect_queries::ORDER_RUN_LIMIT as usize
    );
}

#[test]
fn the_exported_kernels_are_the_ones_the_host_compiles() {
    // `rectcast shaders --json` and the playground export `shader::kernels`: each must be the
    // source and constants the host's pipelines take, and every kernel with entry points
    // must be there.
    let exported = shader::kernels(Emulation::Native);
    let mut files: Vec<_> = exported.iter().map(|k| k.file).collect();
    files.sort();
    let mut expected: Vec<_> = kernels()
        .into_iter()
        // The parts other kernels include, and the polygons' edges through the grid, which
        // the polygons' registry entry names (`ShapeKernel::grid`, as the walls' and circles'
        // queries through the grid).
        .filter(|k| {
            !k.file.starts_with("shape_")
                && k.file != "grid_walk.wgsl"
                && k.file != "polygon_grid.wgsl"
        })
        .map(|k| k.file)
        .collect();
    expected.sort();
    assert_eq!(files, expected);
    for k in exported {
        let host = kernel(k.file);
        assert_eq!(k.source, host.source, "{}: not the host's source", k.file);
        assert_eq!(
            k.constants, host.constants,
            "{}: not the host's constants",
            k.file
        );
    }
}
