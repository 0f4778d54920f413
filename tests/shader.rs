//! Every shader parses and validates with naga (no GPU needed), takes exactly the constants the
//! host supplies, and lays out its structs exactly as the Rust mirrors.

use std::mem::{offset_of, size_of};

use rectcast::gpu::shader::{self, Params};
use rectcast::{PairIndex, PairResult, Rect, Segment};

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

fn specialised(source: &str, name: &str) -> naga::Module {
    let (module, info) = parse(source, name);
    let constants: naga::back::PipelineConstants = shader::constants()
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    let (module, _) =
        naga::back::pipeline_constants::process_overrides(&module, &info, None, &constants)
            .unwrap_or_else(|e| panic!("{name}: the host's constants do not specialise it: {e}"));
    module.into_owned()
}

#[test]
fn every_shader_in_the_shaders_folder_parses_and_validates() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).expect("shaders/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "wgsl") {
            let source = std::fs::read_to_string(&path).expect("read");
            specialised(&source, &path.display().to_string());
            count += 1;
        }
    }
    assert!(count >= 1, "no shaders found in {dir}");
}

#[test]
fn the_embedded_shader_is_the_file_in_shaders() {
    let on_disk =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/shaders/pairs.wgsl"))
            .expect("read");
    assert_eq!(shader::PAIRS_WGSL, on_disk);
}

#[test]
fn the_shader_declares_exactly_the_constants_the_host_supplies() {
    let (module, _) = parse(shader::PAIRS_WGSL, "pairs.wgsl");
    let mut declared: Vec<String> = module
        .overrides
        .iter()
        .filter_map(|(_, o)| o.name.clone())
        .collect();
    let mut supplied: Vec<String> = shader::constants()
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    declared.sort();
    supplied.sort();
    assert_eq!(declared, supplied);
    for (_, o) in module.overrides.iter() {
        assert!(
            o.init.is_none(),
            "override {:?} has a default: numbers live in Rust",
            o.name
        );
    }
}

#[test]
fn entry_points_use_the_hosts_workgroup_size() {
    let module = specialised(shader::PAIRS_WGSL, "pairs.wgsl");
    let names: Vec<&str> = module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["pairs_dense", "pairs_list"]);
    for entry in &module.entry_points {
        assert_eq!(
            entry.workgroup_size,
            [shader::WORKGROUP_SIZE, 1, 1],
            "{}",
            entry.name
        );
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
    let module = specialised(shader::PAIRS_WGSL, "pairs.wgsl");
    let cases: [(&str, usize, Members); 5] = [
        (
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
            "PairIndex",
            size_of::<PairIndex>(),
            vec![
                ("segment", offset_of!(PairIndex, segment)),
                ("rect", offset_of!(PairIndex, rect)),
            ],
        ),
        (
            "PairResult",
            size_of::<PairResult>(),
            vec![
                ("t_enter", offset_of!(PairResult, t_enter)),
                ("t_exit", offset_of!(PairResult, t_exit)),
                ("flags", offset_of!(PairResult, flags)),
            ],
        ),
        (
            "Params",
            size_of::<Params>(),
            vec![
                ("segment_count", offset_of!(Params, segment_count)),
                ("rect_count", offset_of!(Params, rect_count)),
                ("pair_count", offset_of!(Params, pair_count)),
                ("one", offset_of!(Params, one)),
            ],
        ),
    ];
    for (name, rust_size, rust_members) in cases {
        let (size, members) = wgsl_layout(&module, name);
        assert_eq!(size as usize, rust_size, "size of {name}");
        let rust: Vec<(String, u32)> = rust_members
            .into_iter()
            .map(|(n, o)| (n.to_string(), o as u32))
            .collect();
        assert_eq!(members, rust, "members of {name}");
    }
}

/// The comparison and logic operators of a source, in order, from `fn outside_slab` to
/// the end of `fn segment_rect`, comments dropped: the part of a kernel where vello's two copies
/// drifted (`<` on one side, `<=` on the other). Lines marked `// backend:` are where the two
/// backends differ on purpose (the GPU defers an uncertain pair, the CPU decides it inline).
fn decision_operators(source: &str) -> Vec<&'static str> {
    // Not from `order_key`: the CPU compares the values themselves, the shader integer keys.
    let start = source.find("fn outside_slab").expect("fn outside_slab");
    let body_start = source.find("fn segment_rect").expect("fn segment_rect");
    // The end of segment_rect: the first line that is only "}" after it starts.
    let end = body_start
        + source[body_start..]
            .find("\n}\n")
            .expect("end of segment_rect");
    let code: String = source[start..end]
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
        .replace("!=", " NE ");
    const OPERATORS: [&str; 8] = ["<=", ">=", "==", "&&", "||", "<", ">", " NE "];
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while !rest.is_empty() {
        if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
            found.push(*op);
            rest = &rest[op.len()..];
        } else if rest.starts_with('!') && !rest.starts_with("!=") {
            found.push("!");
            rest = &rest[1..];
        } else {
            let next = rest.chars().next().map_or(1, char::len_utf8);
            rest = &rest[next..];
        }
    }
    found
}

#[test]
fn cpu_mirror_makes_the_same_decisions_in_the_same_order_as_the_shader() {
    let cpu = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cpu/pairs.rs"))
        .expect("read");
    let wgsl = decision_operators(shader::PAIRS_WGSL);
    let rust = decision_operators(&cpu);
    assert!(wgsl.len() > 30, "too few operators found: {wgsl:?}");
    if let Some(i) = (0..wgsl.len().max(rust.len())).find(|&i| wgsl.get(i) != rust.get(i)) {
        panic!(
            "the CPU mirror drifted from shaders/pairs.wgsl at decision operator {i}: shader {:?}, cpu {:?}\n  shader: {wgsl:?}\n  cpu:    {rust:?}",
            wgsl.get(i),
            rust.get(i)
        );
    }
}
