//! Shared by the integration tests: the GPU gate, the element-by-element comparison, an
//! independent rational oracle for small-integer inputs, the exact oracle for any f32 input, and
//! the adversarial generator.
#![allow(
    dead_code,
    reason = "each test binary uses its own part of this module"
)]

#[allow(unused_imports, reason = "used by some test binaries")]
pub use rectcast::scene::adversarial;
pub mod cases;
pub mod circles;
pub mod degenerate;
pub mod exact;
pub mod lanes;
pub mod oracle;
pub mod polygons;
pub mod scenes;
pub mod segments;

pub use exact::ulp_distance;
use rectcast::{Backend, Engine, GpuContext, GpuLimits, PairResult, Rect, Segment};

/// An engine on the GPU, or `None` with a printed SKIPPED line when no adapter opens.
/// With RECTCAST_REQUIRE_GPU=1 a missing adapter fails the test instead.
pub fn gpu_engine(test: &str, limits: GpuLimits) -> Option<Engine> {
    // The context takes its emulation from RECTCAST_GPU_EMULATION (scripts/test.sh).
    open_gpu(test, limits, |context| context)
}

/// [`gpu_engine`] with kernels emulating `emulation`'s float arithmetic.
pub fn gpu_engine_emulating(
    test: &str,
    limits: GpuLimits,
    emulation: rectcast::gpu::Emulation,
) -> Option<Engine> {
    open_gpu(test, limits, |context| context.with_emulation(emulation))
}

/// The adapter the suite's GPU tests use, opened again as a device of the test's own with
/// `limits` (the suite's other tests share one: [`shared_context`]): `None` as [`gpu_engine`].
pub fn own_device(
    test: &str,
    limits: rectcast::wgpu::Limits,
) -> Option<(
    rectcast::wgpu::Device,
    rectcast::wgpu::Queue,
    rectcast::wgpu::AdapterInfo,
)> {
    use rectcast::wgpu;
    let probe = gpu_engine(test, GpuLimits::default())?;
    let info = probe.gpu_context()?.adapter_info().clone();
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
        .into_iter()
        .find(|a| a.get_info().name == info.name)
        .expect("the same adapter again");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: limits.clone(),
        ..Default::default()
    }))
    .unwrap_or_else(|e| panic!("{test}: the adapter refused {limits:?}: {e}"));
    Some((device, queue, info))
}

/// A context on a device of the test's own with [`GpuContext::required_limits`], as a game
/// brings its device ([`GpuContext::from_device`]), and a handle to the device (to destroy
/// it, say).
pub fn own_gpu_context(test: &str) -> Option<(GpuContext, rectcast::wgpu::Device)> {
    let (device, queue, info) = own_device(test, GpuContext::required_limits())?;
    let context = GpuContext::from_device(device.clone(), queue, info).expect("a context");
    Some((context, device))
}

/// One device for the whole test binary, as an application would keep one: its engines share
/// the kernels compiled on it (a shape's take about 20 s to compile on lavapipe), and each
/// engine keeps its own buffers. Tests of a device's own behaviour open their own.
fn shared_context() -> Result<GpuContext, String> {
    static CONTEXT: std::sync::OnceLock<Result<GpuContext, String>> = std::sync::OnceLock::new();
    CONTEXT
        .get_or_init(|| GpuContext::new().map_err(|e| e.to_string()))
        .clone()
}

fn open_gpu(
    test: &str,
    limits: GpuLimits,
    setup: impl FnOnce(GpuContext) -> GpuContext,
) -> Option<Engine> {
    let opened = shared_context()
        .and_then(|context| Engine::gpu(setup(context), limits).map_err(|e| e.to_string()));
    match opened {
        Ok(engine) => {
            eprintln!("{test}: on {}", engine.chosen());
            Some(engine)
        }
        Err(e) if std::env::var("RECTCAST_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("{test}: RECTCAST_REQUIRE_GPU=1 but no GPU could be opened: {e}")
        }
        Err(e) => {
            eprintln!(
                "SKIPPED {test}: no GPU adapter ({e}); set RECTCAST_REQUIRE_GPU=1 to fail instead"
            );
            None
        }
    }
}

pub fn cpu_engine() -> Engine {
    Engine::new(Backend::Cpu).expect("the CPU engine always opens")
}

/// Compares two result arrays element by element: flags must be equal, t within
/// `max_t_ulp` (with 0, the same bits: byte for byte). Panics at the first difference, naming
/// the index and its inputs; returns the largest t difference seen, in ulp.
pub fn assert_same_results(
    what: &str,
    expected: &[PairResult],
    actual: &[PairResult],
    max_t_ulp: u32,
    inputs: impl Fn(usize) -> (Segment, Rect),
) -> u32 {
    assert_eq!(expected.len(), actual.len(), "{what}: result counts differ");
    let mut worst = 0;
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        let ulp = ulp_distance(e.t_enter, a.t_enter).max(ulp_distance(e.t_exit, a.t_exit));
        let same_bits = bytemuck::bytes_of(e) == bytemuck::bytes_of(a);
        if e.flags != a.flags || ulp > max_t_ulp || (max_t_ulp == 0 && !same_bits) {
            let (s, r) = inputs(i);
            panic!(
                "{what}: first difference at index {i}\n  segment {s:?}\n  rect    {r:?}\n  expected {e:?} ({}, entry {}, exit {})\n  actual   {a:?} ({}, entry {}, exit {})\n  t differs by {ulp} ulp (allowed {max_t_ulp})",
                e.kind(),
                e.entry_sides(),
                e.exit_sides(),
                a.kind(),
                a.entry_sides(),
                a.exit_sides()
            );
        }
        worst = worst.max(ulp);
    }
    worst
}

/// The inputs of dense pair `i` (segment-major).
pub fn dense_inputs<'a>(
    segments: &'a [Segment],
    rects: &'a [Rect],
) -> impl Fn(usize) -> (Segment, Rect) + 'a {
    move |i| (segments[i / rects.len()], rects[i % rects.len()])
}

/// Checks `got` (a query's counts) against the counts of the oracle's dense pairs `hits`
/// (query-major over `shapes` shapes), element by element; a failure names the first differing
/// segment or shape and its pairs' inputs through `describe(segment, shape)`.
#[track_caller]
pub fn assert_counts_of_pairs(
    what: &str,
    hits: &[bool],
    shapes: usize,
    got: &rectcast::Counts,
    describe: impl Fn(usize, usize) -> String,
) {
    let segments = hits.len() / shapes;
    let mut per_segment = vec![0u32; segments];
    let mut per_shape = vec![0u64; shapes];
    for (i, _) in hits.iter().enumerate().filter(|(_, hit)| **hit) {
        per_segment[i / shapes] += 1;
        per_shape[i % shapes] += 1;
    }
    assert_eq!(
        got.per_segment.len(),
        segments,
        "{what}: per-segment length"
    );
    assert_eq!(got.per_target.len(), shapes, "{what}: per-shape length");
    if let Some(s) = (0..segments).find(|&s| per_segment[s] != got.per_segment[s]) {
        let hitting: Vec<String> = (0..shapes)
            .filter(|&k| hits[s * shapes + k])
            .map(|k| describe(s, k))
            .collect();
        panic!(
            "{what}: first difference at segment {s}: want {} hits, got {}; the oracle's hits:\n  {}",
            per_segment[s],
            got.per_segment[s],
            hitting.join("\n  ")
        );
    }
    if let Some(k) = (0..shapes).find(|&k| per_shape[k] != got.per_target[k]) {
        let hitting: Vec<String> = (0..segments)
            .filter(|&s| hits[s * shapes + k])
            .map(|s| describe(s, k))
            .collect();
        panic!(
            "{what}: first difference at shape {k}: want {} hits, got {}; the oracle's hits:\n  {}",
            per_shape[k],
            got.per_target[k],
            hitting.join("\n  ")
        );
    }
}

/// 4 KiB bindings and 4 workgroups per dimension: every batch of a test is cut into many
/// chunks and tiles, each dispatched in rows of workgroups.
pub fn tiny_limits() -> GpuLimits {
    GpuLimits {
        max_binding_bytes: Some(4096),
        max_workgroups_per_dimension: Some(4),
        ..GpuLimits::default()
    }
}

/// The hits of the dense pairs `pairs` (query-major over `shapes` shapes), as the contract
/// states them (docs/semantics.md, "Queries over shapes"): every hitting pair in (segment,
/// shape) order. Written from the contract, not from the library's reductions.
pub fn hits_of_pairs<C: rectcast::ShapeContact>(
    pairs: &[C],
    shapes: usize,
) -> Vec<rectcast::ShapeHit<C>> {
    pairs
        .iter()
        .enumerate()
        .filter(|(_, c)| c.hit())
        .map(|(i, c)| rectcast::ShapeHit {
            segment: (i / shapes) as u32,
            shape: (i % shapes) as u32,
            contact: *c,
        })
        .collect()
}

/// Each segment's first hit in `got_first` against the dense pairs `pairs`: one of its hitting
/// pairs, as the pairs give it, at the smallest rounded `t_enter` (which of two at the same f32
/// is the exact order's, that tests/targets.rs holds to the exact entries); `None` for a
/// segment that hits nothing.
pub fn assert_first_hits_of_pairs<C: rectcast::ShapeContact>(
    what: &str,
    pairs: &[C],
    shapes: usize,
    got_first: &[Option<rectcast::ShapeHit<C>>],
    describe: impl Fn(usize, usize) -> String,
) {
    let segments = pairs.len() / shapes.max(1);
    assert_eq!(got_first.len(), segments, "{what}: first hits' length");
    for (s, got) in got_first.iter().enumerate() {
        let row = &pairs[s * shapes..(s + 1) * shapes];
        let least = row
            .iter()
            .filter(|c| c.hit())
            .map(|c| c.t_enter())
            .min_by(f32::total_cmp);
        let right = match (got, least) {
            (None, None) => true,
            (Some(hit), Some(t)) => {
                let k = hit.shape as usize;
                hit.segment as usize == s
                    && k < shapes
                    && row[k] == hit.contact
                    && hit.contact.t_enter() == t
            }
            _ => false,
        };
        if !right {
            let hitting: Vec<String> = (0..shapes)
                .filter(|&k| row[k].hit())
                .map(|k| format!("{} t_enter {}", describe(s, k), row[k].t_enter()))
                .collect();
            panic!(
                "{what}: segment {s}'s first hit {got:?} is not one at the least t_enter {least:?}; the pairs' hits:\n  {}",
                hitting.join("\n  ")
            );
        }
    }
}

/// A GPU engine that always takes the grid, or `None` (skipped) without an adapter.
pub fn gpu_through_the_grid(test: &str, limits: GpuLimits) -> Option<Engine> {
    let mut engine = gpu_engine(test, limits)?;
    engine.set_broad_phase(rectcast::BroadPhase::On);
    Some(engine)
}

/// Checks a query's hits and first hits against those of the oracle's dense pairs
/// ([`queries_of_pairs`]), element by element; a failure names the first differing entry and
/// the inputs of its pairs through `describe(segment, shape)`.
#[track_caller]
pub fn assert_queries_of_pairs<C: rectcast::ShapeContact>(
    what: &str,
    pairs: &[C],
    shapes: usize,
    got_hits: &[rectcast::ShapeHit<C>],
    got_first: &[Option<rectcast::ShapeHit<C>>],
    describe: impl Fn(usize, usize) -> String,
) {
    let hits = hits_of_pairs(pairs, shapes);
    if let Some(i) = (0..hits.len().max(got_hits.len())).find(|&i| hits.get(i) != got_hits.get(i)) {
        let inputs = [hits.get(i), got_hits.get(i)]
            .into_iter()
            .flatten()
            .map(|h| describe(h.segment as usize, h.shape as usize))
            .collect::<Vec<_>>();
        panic!(
            "{what}: hits differ first at {i}: want {:?}, got {:?} ({} vs {} hits)\n  {}",
            hits.get(i),
            got_hits.get(i),
            hits.len(),
            got_hits.len(),
            inputs.join("\n  ")
        );
    }
    assert_first_hits_of_pairs(what, pairs, shapes, got_first, describe);
}

/// Puts work on `context`'s queue ahead of the next call: one invocation runs up to 2^24 rounds
/// of xorshift, on a count it reads at run time. Work submitted after it finishes after it (a
/// queue's signals wait for everything submitted before them), so a call given no time to
/// wait is more likely to time out at its first look. Not certain: on lavapipe the loop ends
/// far sooner than 2^24 rounds (its result stops changing past 2^20), and on an H200 a frame
/// behind it still finished before the first look in 1 run of 4. Tests add it to, not in
/// place of, frames that grow until one times out.
pub fn keep_the_gpu_busy(context: &GpuContext) {
    use rectcast::wgpu::{self, util::DeviceExt};
    const BUSY: &str = "
        @group(0) @binding(0) var<storage, read_write> state: array<u32, 2>;
        @compute @workgroup_size(1)
        fn main() {
            var x = state[0] | 1u;
            for (var i = 0u; i < state[1]; i++) {
                x ^= x << 13u;
                x ^= x >> 17u;
                x ^= x << 5u;
            }
            state[0] = x;
        }";
    let device = context.device();
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("tests.busy"),
        source: wgpu::ShaderSource::Wgsl(BUSY.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("tests.busy"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let state = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("tests.busy.state"),
        contents: bytemuck::cast_slice(&[0x9e37_79b9u32, 1 << 24]),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tests.busy"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: state.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    context.queue().submit([encoder.finish()]);
}
