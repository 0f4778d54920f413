//! Hostile hardware, emulated on whatever GPU runs the suite (lavapipe in CI): every emulated
//! arithmetic (`rectcast::gpu::Emulation`) gives the CPU's bytes, and the control, a t taken
//! from the perturbed float division's estimate without the exact integer correction, does
//! not, so these comparisons can tell. scripts/test.sh also runs the whole library suite under each mode
//! (`RECTCAST_GPU_EMULATION`).

mod common;

use common::adversarial::{self, Category};
use common::{assert_same_results, cpu_engine, dense_inputs, gpu_engine_emulating};
use rectcast::gpu::Emulation;
use rectcast::scene::{bullet_hell, random_batch};
use rectcast::{Engine, GpuLimits, PairIndex, PairResult, Rect, Segment};

/// Scenes where an arithmetic difference would show: every adversarial category (pair i with
/// rect i) and dense random and bullet-hell batches.
struct Scenes {
    lists: Vec<(String, Vec<Segment>, Vec<Rect>)>,
    dense: Vec<(&'static str, Vec<Segment>, Vec<Rect>)>,
}

fn scenes() -> Scenes {
    let lists = Category::ALL
        .iter()
        .map(|&c| {
            let (s, r) = adversarial::pairs(c, 5, 4000);
            (c.name().to_string(), s, r)
        })
        .collect();
    let (a, b) = bullet_hell(3, 600, 400);
    let (c, d) = random_batch(4, 500, 400, 1.0e3);
    let (e, f) = random_batch(5, 500, 400, 3.0e7);
    Scenes {
        lists,
        dense: vec![
            ("bullet hell", a, b),
            ("random 1e3", c, d),
            ("random 3e7", e, f),
        ],
    }
}

fn diagonal(n: usize) -> Vec<PairIndex> {
    (0..n as u32).map(|i| PairIndex::new(i, i)).collect()
}

/// Every scene on `gpu` against the CPU, byte for byte: panics at the first difference with its
/// index and inputs.
fn assert_same_bytes(gpu: &mut Engine, scenes: &Scenes) {
    let mut cpu = cpu_engine();
    let what = gpu.chosen().to_string();
    for (name, segments, rects) in &scenes.lists {
        let pairs = diagonal(segments.len());
        let want = cpu.pair_list(segments, rects, &pairs).expect("cpu");
        let got = gpu.pair_list(segments, rects, &pairs).expect("gpu");
        assert_same_results(&format!("{what}, {name}"), &want, &got, 0, |i| {
            (segments[i], rects[i])
        });
    }
    for (name, segments, rects) in &scenes.dense {
        let want = cpu.pairs(segments, rects).expect("cpu");
        let got = gpu.pairs(segments, rects).expect("gpu");
        assert_same_results(
            &format!("{what}, {name}"),
            &want,
            &got,
            0,
            dense_inputs(segments, rects),
        );
    }
}

/// How many results of all scenes differ from the CPU's bytes.
fn count_differences(gpu: &mut Engine, scenes: &Scenes) -> usize {
    let mut cpu = cpu_engine();
    let differ = |a: &[PairResult], b: &[PairResult]| {
        a.iter()
            .zip(b)
            .filter(|(a, b)| bytemuck::bytes_of(*a) != bytemuck::bytes_of(*b))
            .count()
    };
    let mut count = 0;
    for (_, segments, rects) in &scenes.lists {
        let pairs = diagonal(segments.len());
        count += differ(
            &cpu.pair_list(segments, rects, &pairs).expect("cpu"),
            &gpu.pair_list(segments, rects, &pairs).expect("gpu"),
        );
    }
    for (_, segments, rects) in &scenes.dense {
        count += differ(
            &cpu.pairs(segments, rects).expect("cpu"),
            &gpu.pairs(segments, rects).expect("gpu"),
        );
    }
    count
}

fn emulating(test: &str, emulation: Emulation) -> Option<Engine> {
    gpu_engine_emulating(test, GpuLimits::default(), emulation)
}

#[test]
fn unpredictable_rounding_and_a_2_5_ulp_division_give_the_cpus_bytes() {
    if let Some(mut gpu) = emulating("rounding", Emulation::Rounding) {
        assert_same_bytes(&mut gpu, &scenes());
    }
}

#[test]
fn flushed_subnormals_give_the_cpus_bytes() {
    if let Some(mut gpu) = emulating("flush", Emulation::Flush) {
        assert_same_bytes(&mut gpu, &scenes());
    }
}

#[test]
fn fused_multiply_adds_give_the_cpus_bytes() {
    if let Some(mut gpu) = emulating("fused", Emulation::Fused) {
        assert_same_bytes(&mut gpu, &scenes());
    }
}

#[test]
fn a_t_from_an_uncertified_perturbed_division_is_caught() {
    let Some(mut gpu) = emulating("uncertified", Emulation::Uncertified) else {
        return;
    };
    let differences = count_differences(&mut gpu, &scenes());
    eprintln!("uncertified t: {differences} results differ from the CPU's bytes");
    assert!(
        differences > 1000,
        "the control should differ from the CPU, and only {differences} results do: the \
         comparisons could not see a GPU that divides differently"
    );
}

/// A kernel after shaders/segment_rect.wgsl that writes what its emulated operations give:
/// [0] f_mul(2^-70, 2^-70); [1] a·a − RN(a·a) through f_mul_sub with a = 1 + 2^-12; then
/// f_add(x, y) for 256 pairs of operands ([`sum_operands`]). The operands are made from bits,
/// with no float arithmetic: a compiler may contract or reorder float arithmetic differently in
/// each pipeline (an H100's did: `1.0 + f32(i) * 0.0123` there differed in its last bit between
/// the native and the flush pipelines), so only the one add under test is float arithmetic.
const PROBE: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<f32>;

// Operand `k` (0: x in [1, 2), 1: y in [0.1, 0.2)) of the i-th sum, from its bits.
fn sum_operand(i: u32, k: u32) -> f32 {
    if (k == 0u) {
        return bitcast<f32>(0x3f800000u + i * 0x7e37u);
    }
    return bitcast<f32>(0x3dcccccdu + (i * 7u % 13u) * 0x10ec3u);
}

@compute @workgroup_size(1)
fn main() {
    let tiny = 8.470329e-22; // 2^-70
    out[0] = f_mul(tiny, tiny);
    let a = 1.0002441; // 1 + 2^-12
    let right = f_mul(a, a);
    out[1] = f_mul_sub(a, a, f_mul(a, a), right);
    for (var i = 0u; i < 256u; i++) {
        out[2u + i] = f_add(sum_operand(i, 0u), sum_operand(i, 1u));
    }
}
"#;

/// The probe's operands of its i-th sum, as `sum_operand` makes them.
fn sum_operands(i: u32) -> (f32, f32) {
    (
        f32::from_bits(0x3f80_0000 + i * 0x7e37),
        f32::from_bits(0x3dcc_cccd + (i * 7 % 13) * 0x10ec3),
    )
}

/// The f32 values next to x + y, exact in f64 (the operands' exponents are close): below and
/// above, or the sum twice where it is an f32. WGSL's addition is correctly rounded, which it
/// defines as either of these two.
fn neighbours(x: f32, y: f32) -> (f32, f32) {
    let exact = f64::from(x) + f64::from(y);
    let nearest = exact as f32;
    match f64::from(nearest).partial_cmp(&exact) {
        Some(std::cmp::Ordering::Less) => (nearest, nearest.next_up()),
        Some(std::cmp::Ordering::Greater) => (nearest.next_down(), nearest),
        _ => (nearest, nearest),
    }
}

/// Whether each of the probe's sums in `out` is one WGSL allows: `what` names the pipeline.
fn assert_sums_allowed(out: &[f32], what: &str) {
    for (i, &sum) in out[2..].iter().enumerate() {
        let (x, y) = sum_operands(i as u32);
        let (below, above) = neighbours(x, y);
        assert!(
            sum == below || sum == above,
            "{what}: {x} + {y} gave {sum}, neither neighbour of the exact sum ({below}, {above})"
        );
    }
}

/// What the probe kernel writes on `context` under `emulation`.
fn probe(context: &rectcast::GpuContext, emulation: Emulation) -> Vec<f32> {
    use wgpu::util::DeviceExt;
    let device = context.device();
    let source = format!("{}\n{PROBE}", rectcast::gpu::shader::SEGMENT_RECT_WGSL);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("probe"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let constants = rectcast::gpu::shader::segment_rect_constants(emulation);
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("probe"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: true,
        },
        cache: None,
    });
    let bytes = 4 * 258;
    let out = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("probe.out"),
        contents: &vec![0u8; bytes],
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe.read"),
        size: bytes as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: out.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &read, 0, bytes as u64);
    context.queue().submit([encoder.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(std::time::Duration::from_secs(60)),
        })
        .expect("poll");
    bytemuck::cast_slice(&read.slice(..).get_mapped_range().unwrap()).to_vec()
}

#[test]
fn each_emulation_changes_the_arithmetic_it_names() {
    // The modes are live on this driver: without this, a mode that emulated nothing would pass
    // the byte comparisons above for the wrong reason.
    let Some(engine) = emulating("probe", Emulation::Native) else {
        return;
    };
    let context = engine.gpu_context().expect("a GPU engine");
    let native = probe(context, Emulation::Native);
    assert_sums_allowed(&native, "native");
    let tiny_product = 2f64.powi(-140) as f32; // 2f32.powi(-140) is 0 in a debug build
    assert_eq!(native[0], tiny_product, "native keeps a subnormal product");
    assert_eq!(native[1], 0.0, "native rounds a·a before subtracting");

    let flush = probe(context, Emulation::Flush);
    assert_eq!(flush[0], 0.0, "flush: a subnormal product is zero");
    // Normal sums stay what WGSL allows; not necessarily the native pipeline's bits, since
    // WGSL lets each round either way.
    assert_sums_allowed(&flush, "flush");

    let fused = probe(context, Emulation::Fused);
    assert_eq!(
        fused[1],
        2f32.powi(-24),
        "fused: a·a − RN(a·a) is the rounding error"
    );

    // An ulp either way from a sum WGSL allows, and about 2 in 3 moved off the nearest (the
    // nudge is -1, 0 or +1 ulp by a hash of the operands): counted against the host's nearest,
    // not the native pipeline's bits, which WGSL lets round either way.
    let rounding = probe(context, Emulation::Rounding);
    let mut moved = 0;
    for (i, &r) in rounding[2..].iter().enumerate() {
        let (x, y) = sum_operands(i as u32);
        let (below, above) = neighbours(x, y);
        let nearest = (f64::from(x) + f64::from(y)) as f32;
        assert!(
            r.to_bits().abs_diff(below.to_bits()) <= 1
                || r.to_bits().abs_diff(above.to_bits()) <= 1,
            "rounding: {x} + {y} gave {r}, more than 1 ulp from the exact sum's neighbours"
        );
        moved += usize::from(r != nearest);
    }
    assert!(
        (100..220).contains(&moved),
        "rounding: {moved} of 256 sums moved off the nearest (about 2 in 3 should)"
    );
}
