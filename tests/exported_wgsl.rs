//! The per-pair WGSL a game drops into its own shader (`shader::segment_rect_wgsl()`): every
//! constant filled in, exact, and run in a pipeline the test builds itself, as a game would,
//! with no pipeline constants: its results are `segment_rect`'s on the CPU, byte for byte, once
//! the pairs it flags `flags::UNCERTAIN` are decided there.

mod common;

use common::cases::{hand_rects, hand_segments};
use rectcast::gpu::Emulation;
use rectcast::gpu::shader::{self, segment_rect_constants};
use rectcast::{GpuLimits, PairResult, Rect, Segment, flags, segment_rect, wgpu};
use wgpu::util::DeviceExt;

/// A game's kernel: one pair per invocation, `segment_rect` from the included module.
const GAME_KERNEL: &str = "
@group(0) @binding(0) var<storage, read> game_segments: array<Segment>;
@group(0) @binding(1) var<storage, read> game_rects: array<Rect>;
@group(0) @binding(2) var<storage, read_write> game_results: array<PairResult>;

@compute @workgroup_size(64)
fn game_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&game_results)) {
        game_results[i] = segment_rect(game_segments[i], game_rects[i]);
    }
}
";

fn game_source() -> String {
    format!("{}\n{GAME_KERNEL}", shader::segment_rect_wgsl())
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
            .find(|(_, c)| c.name.as_deref() == Some(name))
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
    let input = |data: &[u8], label| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: data,
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let segment_buffer = input(bytemuck::cast_slice(&segments), "game.segments");
    let rect_buffer = input(bytemuck::cast_slice(&rects), "game.rects");
    let bytes = (n * size_of::<PairResult>()) as u64;
    let results = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("game.results"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("game.readback"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("game.wgsl"),
        source: wgpu::ShaderSource::Wgsl(game_source().into()),
    });
    // No layout and no constants: the game's pipeline as wgpu derives it.
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("game.pipeline"),
        layout: None,
        module: &module,
        entry_point: Some("game_main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("game.group"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[(0, &segment_buffer), (1, &rect_buffer), (2, &results)].map(
            |(binding, buffer)| wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            },
        ),
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64) as u32, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&results, 0, &readback, 0, bytes);
    queue.submit([encoder.finish()]);
    readback
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("the GPU finishes");
    let view = readback.slice(..).get_mapped_range().expect("mapped");
    let got: Vec<PairResult> = bytemuck::cast_slice(&view).to_vec();
    let mut uncertain = 0;
    for i in 0..n {
        let want = segment_rect(&segments[i], &rects[i]);
        let mut answer = got[i];
        if answer.flags == flags::UNCERTAIN {
            uncertain += 1;
            answer = segment_rect(&segments[i], &rects[i]);
        }
        assert!(
            bytemuck::bytes_of(&answer) == bytemuck::bytes_of(&want),
            "pair {i} ({:?} x {:?}): the game's pipeline gave {answer:?}, the CPU {want:?}",
            segments[i],
            rects[i]
        );
    }
    let hits = (0..n).filter(|&i| got[i].flags & flags::HIT != 0).count();
    assert!(hits > n / 10, "{hits} hits of {n} pairs prove little");
    eprintln!("{n} pairs, {hits} hits, {uncertain} decided on the host");
}
