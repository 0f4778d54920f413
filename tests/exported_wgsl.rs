//! The per-pair WGSL a game drops into its own shader (`shader::segment_rect_wgsl()`): every
//! constant filled in, exact, and run in a pipeline the test builds itself, as a game would,
//! with no pipeline constants: its results are `segment_rect`'s on the CPU, byte for byte, once
//! the pairs it flags `flags::UNCERTAIN` are decided there.

mod common;

use common::cases::{hand_rects, hand_segments};
use rectcast::gpu::Emulation;
use rectcast::gpu::shader::{self, segment_rect_constants};
use rectcast::{GpuLimits, Rect, Segment, flags, segment_rect};

#[allow(dead_code, reason = "the example's main is not run here")]
#[path = "../examples/game_shader.rs"]
mod game_shader;

use game_shader::{game_source, pairs_in_own_pipeline};

#[test]
fn every_name_the_export_declares_is_prefixed_and_fields_keep_theirs() {
    let source = shader::segment_rect_wgsl();
    let module = naga::front::wgsl::parse_str(&source).expect("parses");
    let names: Vec<String> = (module.types.iter().filter_map(|(_, t)| t.name.clone()))
        .chain(module.functions.iter().filter_map(|(_, f)| f.name.clone()))
        .chain(module.constants.iter().filter_map(|(_, c)| c.name.clone()))
        .chain(module.overrides.iter().filter_map(|(_, o)| o.name.clone()))
        .chain(
            module
                .global_variables
                .iter()
                .filter_map(|(_, g)| g.name.clone()),
        )
        .collect();
    assert!(names.len() > 50, "{names:?}");
    for name in &names {
        assert!(
            name.starts_with(shader::EXPORT_PREFIX),
            "{name} is not prefixed"
        );
    }
    // The structs' fields are the Rust mirrors' (the buffers' layouts).
    let (_, segment) = (module.types.iter())
        .find(|(_, t)| t.name.as_deref() == Some("rc_Segment"))
        .expect("rc_Segment");
    let naga::TypeInner::Struct { members, .. } = &segment.inner else {
        panic!("{segment:?}")
    };
    let fields: Vec<_> = members.iter().filter_map(|m| m.name.as_deref()).collect();
    assert_eq!(fields, ["x0", "y0", "x1", "y1"]);
    // A field named like a module-scope name keeps its name, where declared and after a `.`;
    // comments are left alone.
    let src = "struct Hit {\n    flags: u32,\n}\nconst flags: u32 = 1u;\nfn get(h: Hit) -> u32 {\n    // flags of h\n    return h.flags + flags;\n}\n";
    let want = "struct p_Hit {\n    flags: u32,\n}\nconst p_flags: u32 = 1u;\nfn p_get(h: p_Hit) -> u32 {\n    // flags of h\n    return h.flags + p_flags;\n}\n";
    assert_eq!(shader::prefixed(src, "p_"), want);
}

#[test]
fn the_exported_function_has_every_constant_filled_in_exactly() {
    let source = shader::segment_rect_wgsl();
    let left = source
        .lines()
        .find(|l| l.trim_start().starts_with("override "));
    assert!(left.is_none(), "an override is left: {left:?}");
    let module = naga::front::wgsl::parse_str(&game_source())
        .unwrap_or_else(|e| panic!("does not parse:\n{}", e.emit_to_string(&game_source())));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .expect("validates");
    // Each constant's value, read back from the module, is the one the pipelines get.
    for (name, want) in segment_rect_constants(Emulation::Native) {
        let (_, constant) = (module.constants.iter())
            .find(|(_, c)| c.name.as_deref() == Some(&format!("{}{name}", shader::EXPORT_PREFIX)))
            .unwrap_or_else(|| panic!("no const {name}"));
        let got = match module.global_expressions[constant.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => f64::from(v),
            naga::Expression::Literal(naga::Literal::I32(v)) => f64::from(v),
            naga::Expression::Literal(naga::Literal::F32(v)) => f64::from(v),
            ref other => panic!("{name} is {other:?}"),
        };
        assert_eq!(got.to_bits(), want.to_bits(), "{name}: {got} for {want}");
    }
}

/// The `const`s of `source` by name, as naga reads their values.
fn constants_of(source: &str) -> Vec<(String, f64)> {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("does not parse:\n{}", e.emit_to_string(source)));
    (module.constants.iter())
        .map(|(_, c)| {
            let value = match module.global_expressions[c.init] {
                naga::Expression::Literal(naga::Literal::U32(v)) => f64::from(v),
                naga::Expression::Literal(naga::Literal::I32(v)) => f64::from(v),
                naga::Expression::Literal(naga::Literal::F32(v)) => f64::from(v),
                ref other => panic!("{:?} is {other:?}", c.name),
            };
            (c.name.clone().unwrap_or_default(), value)
        })
        .collect()
}

#[test]
fn specialised_floats_and_integers_keep_every_bit() {
    let floats = [
        0.1f32,
        -3.5,
        1.0 / 3.0,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40, // subnormal
        f32::from_bits(1),
        -0.0,
        0.0,
    ];
    let mut source = String::new();
    let mut constants = Vec::new();
    let names: Vec<String> = (0..floats.len() + 2).map(|i| format!("C{i}")).collect();
    for (i, v) in floats.iter().enumerate() {
        source += &format!("override {}: f32;\n", names[i]);
        constants.push((names[i].as_str(), f64::from(*v)));
    }
    let k = floats.len();
    source += &format!(
        "override {}: u32;\noverride {}: i32;\n",
        names[k],
        names[k + 1]
    );
    constants.push((names[k].as_str(), f64::from(u32::MAX)));
    constants.push((names[k + 1].as_str(), f64::from(i32::MIN)));
    // What a WGSL literal of its type cannot hold exactly stays an override.
    let left = "override LEFT_F: f32;\noverride LEFT_U: u32;\noverride LEFT_I: i32;\n";
    let unheld = [("LEFT_F", 0.1f64), ("LEFT_U", -1.0), ("LEFT_I", 0.5)];
    let specialised = shader::specialised(
        &(source.clone() + left),
        &[&constants[..], &unheld].concat(),
    );
    assert!(specialised.ends_with(left), "{specialised}");
    let got = constants_of(&shader::specialised(&source, &constants));
    assert_eq!(got.len(), constants.len());
    for ((name, want), (got_name, got)) in constants.iter().zip(&got) {
        assert_eq!(name, got_name);
        assert_eq!(
            (*got as f32).to_bits(),
            (*want as f32).to_bits(),
            "{name}: {got:e} for {want:e}"
        );
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn a_games_own_pipeline_runs_the_exported_function_with_the_cpus_results() {
    let Some(engine) = common::gpu_engine("a_games_own_pipeline", GpuLimits::default()) else {
        return;
    };
    let context = engine.gpu_context().expect("on the gpu");
    let (device, queue) = (context.device(), context.queue());
    // Hand cases (corners, edges, points, one-ulp misses) against hand rects, every pair.
    let (hs, hr) = (hand_segments(), hand_rects());
    // And random pairs, a share of them snapped to land on edges and corners.
    let (rs, rr) = rectcast::scene::random_batch(7, 64, 64, 100.0);
    let every = |ss: &[Segment], rs: &[Rect]| -> Vec<(Segment, Rect)> {
        (ss.iter())
            .flat_map(|s| rs.iter().map(move |r| (*s, *r)))
            .collect()
    };
    let (segments, rects): (Vec<Segment>, Vec<Rect>) = [every(&hs, &hr), every(&rs, &rr)]
        .concat()
        .into_iter()
        .unzip();
    let n = segments.len();
    let (got, uncertain) = pairs_in_own_pipeline(device, queue, &segments, &rects);
    for i in 0..n {
        let want = segment_rect(&segments[i], &rects[i]);
        assert!(
            bytemuck::bytes_of(&got[i]) == bytemuck::bytes_of(&want),
            "pair {i} ({:?} x {:?}): the game's pipeline gave {:?}, the CPU {want:?}",
            segments[i],
            rects[i],
            got[i]
        );
    }
    let hits = (0..n).filter(|&i| got[i].flags & flags::HIT != 0).count();
    assert!(hits > n / 10, "{hits} hits of {n} pairs prove little");
    eprintln!("{n} pairs, {hits} hits, {uncertain} decided on the host");
}
