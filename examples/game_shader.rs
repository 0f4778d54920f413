//! A game's own compute shader calling rectcast's exported WGSL: `shader::segment_rect_wgsl()`
//! (every constant filled in, every name prefixed `rc_`) put before the game's kernel, in a
//! pipeline the game builds on its own device, with no pipeline constants. The pairs the kernel
//! flags `flags::UNCERTAIN` are decided on the host with `segment_rect`; every result is then
//! the CPU's, byte for byte (tests/exported_wgsl.rs runs `pairs_in_own_pipeline` against the
//! CPU on hand-made and random pairs).
//!
//! `cargo run --release --example game_shader`

use rectcast::gpu::shader;
use rectcast::{PairResult, Rect, Segment, flags, segment_rect, wgpu};
use wgpu::util::DeviceExt;

/// The game's kernel: pair i is (segment i, rect i); `rc_segment_rect` and the `rc_` structs
/// come from the exported module, the rest is the game's own.
pub const GAME_KERNEL: &str = "
@group(0) @binding(0) var<storage, read> segments: array<rc_Segment>;
@group(0) @binding(1) var<storage, read> rects: array<rc_Rect>;
@group(0) @binding(2) var<storage, read_write> results: array<rc_PairResult>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i < arrayLength(&results)) {
        results[i] = rc_segment_rect(segments[i], rects[i]);
    }
}
";

/// The game's whole shader: the exported module, then its kernel.
pub fn game_source() -> String {
    format!("{}\n{GAME_KERNEL}", shader::segment_rect_wgsl())
}

/// Pair i = (`segments[i]`, `rects[i]`) through the game's kernel on `device`, with the pairs
/// it flags uncertain decided on the host: the results, and how many the host decided.
pub fn pairs_in_own_pipeline(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    segments: &[Segment],
    rects: &[Rect],
) -> (Vec<PairResult>, usize) {
    let n = segments.len();
    let input = |data: &[u8], label| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: data,
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let segment_buffer = input(bytemuck::cast_slice(segments), "game.segments");
    let rect_buffer = input(bytemuck::cast_slice(rects), "game.rects");
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
        entry_point: Some("main"),
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
    let mut got: Vec<PairResult> =
        bytemuck::cast_slice(&readback.slice(..).get_mapped_range().expect("mapped")).to_vec();
    let mut decided = 0;
    for (i, result) in got.iter_mut().enumerate() {
        if result.flags == flags::UNCERTAIN {
            *result = segment_rect(&segments[i], &rects[i]);
            decided += 1;
        }
    }
    (got, decided)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The game's own device, with WebGPU's default limits: rectcast opens nothing here.
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    println!("on {}", adapter.get_info().name);
    let bullets = [
        Segment::new(0.0, 0.5, 3.0, 0.5),
        Segment::new(1.5, 2.0, 1.5, 0.5),
        Segment::new(-1.0, -1.0, -0.5, -0.5),
    ];
    let boxes = [Rect::new(1.0, 0.0, 2.0, 1.0); 3];
    let (results, decided) = pairs_in_own_pipeline(&device, &queue, &bullets, &boxes);
    for (i, r) in results.iter().enumerate() {
        let cpu = segment_rect(&bullets[i], &boxes[i]);
        assert_eq!(bytemuck::bytes_of(r), bytemuck::bytes_of(&cpu), "pair {i}");
        println!(
            "bullet {i}: {:?} at t = {} (the CPU's bytes)",
            r.kind(),
            r.t_enter
        );
    }
    println!("{decided} pairs decided on the host");
    Ok(())
}
