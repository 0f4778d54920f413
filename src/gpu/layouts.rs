//! Every bind group layout the kernels bind, as data: the hosts build their layouts from these,
//! and [`required_limits`] counts the device limits they need from the same entries, so the
//! limits a device must meet cannot drift from what the kernels bind.

use super::shader::WORKGROUP_SIZE;

/// A bind group layout's entries.
pub(crate) type Entries = &'static [wgpu::BindGroupLayoutEntry];

pub(crate) const fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

pub(crate) const fn uniform_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// `shaders/rect_pairs.wgsl`: the parameters; segments, rects, pair list; results, compact
/// mask and words, uncertain list.
pub(crate) const RECT_PAIRS: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(3, true),
    storage_entry(4, false),
    storage_entry(5, false),
    storage_entry(6, false),
];

/// `shaders/rect_queries.wgsl` (group 0 of the grid's pipelines too): the parameters; four
/// inputs read; four outputs written.
pub(crate) const RECT_QUERIES: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(3, true),
    storage_entry(4, true),
    storage_entry(5, false),
    storage_entry(6, false),
    storage_entry(7, false),
    storage_entry(8, false),
];

/// `shaders/grid.wgsl`'s group 1: its parameters, the rects' boxes, and the grid's buffers.
pub(crate) const GRID: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, false),
    storage_entry(3, false),
    storage_entry(4, false),
    storage_entry(5, false),
    storage_entry(6, false),
    storage_entry(7, false),
];

/// A shape's dense and listed pairs (`shaders/shape_passes.wgsl`).
pub(crate) const SHAPES: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(3, false),
    storage_entry(4, true),
    storage_entry(7, false),
    storage_entry(8, false),
];

/// A shape's counts: hits per query and per shape summed on the GPU.
pub(crate) const SHAPE_COUNTS: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(4, true),
    storage_entry(5, false),
    storage_entry(6, false),
    storage_entry(7, false),
    storage_entry(8, false),
];

/// A shape's reductions (`shaders/shape_queries.wgsl`): the hit list.
pub(crate) const SHAPE_REDUCTIONS: Entries = &[
    uniform_entry(0),
    storage_entry(3, false),
    storage_entry(11, false),
    storage_entry(12, false),
    storage_entry(13, false),
];

/// The walk through the grid (`shaders/grid_walk.wgsl`): [`GRID`] without the build's own
/// buffers. Group 1 of the shapes' queries through the grid.
pub(crate) const GRID_WALK: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(3, false),
    storage_entry(4, false),
    storage_entry(5, false),
    storage_entry(6, false),
];

/// A shape's hits through the grid: the tile's inputs, the list of candidates, and
/// [`SHAPE_REDUCTIONS`]' hit list.
pub(crate) const SHAPE_GRID_HITS: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(4, true),
    storage_entry(7, false),
    storage_entry(8, false),
    storage_entry(11, false),
    storage_entry(12, false),
    storage_entry(13, false),
];

/// A shape's counts through the grid: [`SHAPE_COUNTS`]' bindings.
pub(crate) const SHAPE_GRID_COUNTS: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(4, true),
    storage_entry(5, false),
    storage_entry(6, false),
    storage_entry(7, false),
    storage_entry(8, false),
];

/// Polygons' edges through the grid (`shaders/polygon_grid.wgsl`): the tile's queries and
/// edges, the edges' contacts, the list of candidates, the polygons' table, where each
/// candidate's edges start, and how many there are.
pub(crate) const POLYGON_GRID_EDGES: Entries = &[
    uniform_entry(0),
    storage_entry(1, true),
    storage_entry(2, true),
    storage_entry(3, false),
    storage_entry(7, false),
    storage_entry(8, false),
    storage_entry(17, true),
    storage_entry(18, false),
    storage_entry(19, false),
];

/// The shapes' pipelines through the grid (hits, counts; polygons' edges), each with the walk
/// as group 1. Optional, as [`GRID_PIPELINE`].
pub(crate) const SHAPE_GRID_PIPELINES: [&[Entries]; 3] = [
    &[SHAPE_GRID_HITS, GRID_WALK],
    &[SHAPE_GRID_COUNTS, GRID_WALK],
    &[POLYGON_GRID_EDGES, GRID_WALK],
];

/// The groups of every pipeline layout every query needs (one group each).
const REQUIRED: &[&[Entries]] = &[
    &[RECT_PAIRS],
    &[RECT_QUERIES],
    &[SHAPES],
    &[SHAPE_COUNTS],
    &[SHAPE_REDUCTIONS],
];

/// The grid's pipelines' groups: the queries' and the grid's. Optional: on a device that cannot
/// bind them, the GPU queries test every rect instead (the same bytes).
pub(crate) const GRID_PIPELINE: &[Entries] = &[RECT_QUERIES, GRID];

/// Buffers of `kind` a pipeline of `groups` binds in its one (compute) stage.
fn buffers_per_stage(groups: &[Entries], uniform: bool) -> u32 {
    let count = groups
        .iter()
        .flat_map(|entries| entries.iter())
        .filter(|e| match e.ty {
            wgpu::BindingType::Buffer { ty, .. } => {
                matches!(ty, wgpu::BufferBindingType::Uniform) == uniform
            }
            _ => false,
        })
        .count();
    count as u32
}

/// What a device must allow to bind `layouts`: bind groups, bindings per group, and storage and
/// uniform buffers per stage; the rest as `base`.
fn binding(layouts: &[&[Entries]], base: wgpu::Limits) -> wgpu::Limits {
    let most = |f: &dyn Fn(&[Entries]) -> u32| layouts.iter().map(|g| f(g)).max().unwrap_or(0);
    wgpu::Limits {
        max_bind_groups: most(&|g| g.len() as u32),
        max_bindings_per_bind_group: most(&|g| {
            let top = g.iter().flat_map(|e| e.iter()).map(|e| e.binding).max();
            top.map_or(0, |b| b + 1)
        }),
        max_storage_buffers_per_shader_stage: most(&|g| buffers_per_stage(g, false)),
        max_uniform_buffers_per_shader_stage: most(&|g| buffers_per_stage(g, true)),
        ..base
    }
}

/// The limits every rectcast kernel is built and tested with (see
/// [`GpuContext::required_limits`](super::GpuContext::required_limits)).
pub(crate) fn required_limits() -> wgpu::Limits {
    // The weakest profile wgpu knows stands for what rectcast does not use (textures, vertex
    // buffers); the compute limits are rectcast's own, at WebGPU's defaults where the kernels
    // adapt (bindings and buffers are chunked to the device's sizes), and workgroup memory at
    // wgpu's downlevel figure (Metal's), which the kernels' few tiles fit well within.
    let webgpu = wgpu::Limits::defaults();
    let base = wgpu::Limits {
        max_storage_buffer_binding_size: webgpu.max_storage_buffer_binding_size,
        max_buffer_size: webgpu.max_buffer_size,
        max_compute_workgroup_storage_size: wgpu::Limits::downlevel_defaults()
            .max_compute_workgroup_storage_size,
        max_compute_invocations_per_workgroup: WORKGROUP_SIZE,
        max_compute_workgroup_size_x: WORKGROUP_SIZE,
        max_compute_workgroup_size_y: 1,
        max_compute_workgroup_size_z: 1,
        max_compute_workgroups_per_dimension: webgpu.max_compute_workgroups_per_dimension,
        ..wgpu::Limits::downlevel_webgl2_defaults()
    };
    binding(REQUIRED, base)
}

/// [`required_limits`], and what the grid's pipelines bind besides: with these the broad phase
/// runs on the GPU too.
pub(crate) fn grid_limits() -> wgpu::Limits {
    let required = required_limits();
    let [hits, counts, polygons] = SHAPE_GRID_PIPELINES;
    let grids = [GRID_PIPELINE, hits, counts, polygons];
    binding(&grids, required.clone()).or_better_values_from(&required)
}

/// Whether `limits` allow the grid's pipelines (their binding limits; the rest is
/// [`required_limits`]' to check).
pub(crate) fn allow_grid(limits: &wgpu::Limits) -> bool {
    binding(&[GRID_PIPELINE], limits.clone()).check_limits(limits)
}

/// Whether `limits` allow the shapes' pipelines through the grid, as [`allow_grid`].
pub(crate) fn allow_shape_grid(limits: &wgpu::Limits) -> bool {
    binding(&SHAPE_GRID_PIPELINES, limits.clone()).check_limits(limits)
}

/// A bind group layout of `entries`.
pub(crate) fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    entries: Entries,
) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries,
    })
}

/// The pipeline layout of `groups`, in order.
pub(crate) fn pipeline_layout(
    device: &wgpu::Device,
    label: &str,
    groups: &[&wgpu::BindGroupLayout],
) -> wgpu::PipelineLayout {
    let groups: Vec<Option<&wgpu::BindGroupLayout>> = groups.iter().map(|g| Some(*g)).collect();
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &groups,
        immediate_size: 0,
    })
}
