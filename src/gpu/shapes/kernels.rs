//! A shape's pipelines, compiled once per device and emulation, and the optional parts of its
//! kernel with their buffers: the counts entry point, the reductions of
//! `shaders/shape_queries.wgsl`, and the queries through the grid (`shaders/shape_grid.wgsl`,
//! whose calls are `grid.rs`'s).

use super::super::buffers::{Growable, compute_pipeline};
use super::super::context::GpuContext;
use super::super::layouts::{self, Entries, SHAPE_COUNTS, SHAPE_REDUCTIONS, SHAPES};
use super::super::shader::{self, GridParams};
use crate::error::Result;
use crate::shape::Shape;

/// The entry point of `shaders/shape_queries.wgsl`.
pub(super) const HITS_ENTRY: &str = "shape_hit_list";

/// A bind group layout of `entries`, and the pipeline layout of that one group.
fn layouts(
    device: &wgpu::Device,
    label: &'static str,
    entries: Entries,
) -> (wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let layout = layouts::bind_group_layout(device, label, entries);
    let pipeline_layout = layouts::pipeline_layout(device, label, &[&layout]);
    (layout, pipeline_layout)
}

/// A shape's layouts and pipelines: compiled once per device and emulation, shared by every
/// engine on the device (see [`GpuContext::compiled`]). The counts entry point is not among
/// them: it compiles on the first count ([`ShapeKernels::compile_counts`]), so that a game that
/// asks for first hits does not wait for it (on lavapipe 5 s for circles and 13 s for walls,
/// of a shape's 17 to 26 s).
#[derive(Clone)]
pub(super) struct ShapeKernels {
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) dense: wgpu::ComputePipeline,
    /// `list_dispatch` and the second pass, where the kernel has one.
    pub(super) listed: Option<(wgpu::ComputePipeline, wgpu::ComputePipeline)>,
    /// The hit list's layout and `shape_hit_list`.
    pub(super) reductions: Option<(wgpu::BindGroupLayout, wgpu::ComputePipeline)>,
}

/// Shape `S`'s kernel as a module, and its pipeline constants, on `context`.
fn module_of<S: Shape>(context: &GpuContext) -> (wgpu::ShaderModule, Vec<(&'static str, f64)>) {
    let module = context
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(S::KERNEL.file),
            source: wgpu::ShaderSource::Wgsl(S::KERNEL.source.into()),
        });
    (module, S::constants(context.emulation()))
}

/// The tag of a shape's counts kernel among a device's compiled kernels.
struct CountsOf<S>(std::marker::PhantomData<S>);

impl ShapeKernels {
    pub(super) fn compile<S: Shape>(context: &GpuContext) -> Result<Self> {
        let device = &context.device;
        context.scoped(|| {
            let (module, constants) = module_of::<S>(context);
            let (module, constants) = (&module, &constants);
            // Each layout's pipelines, named after their entry points.
            let pipelines = |label: &'static str, entries: Entries| {
                let (layout, pipeline_layout) = layouts(device, label, entries);
                let pipeline = move |entry: &str| {
                    compute_pipeline(context, &pipeline_layout, module, entry, entry, constants)
                };
                (layout, pipeline)
            };
            let (layout, pipeline) = pipelines("rectcast.shapes.layout", SHAPES);
            let dense = pipeline(S::KERNEL.entry);
            let listed = S::KERNEL
                .listed
                .map(|entry| (pipeline("list_dispatch"), pipeline(entry)));
            let reductions = S::KERNEL.reduces.then(|| {
                let (layout, pipeline) =
                    pipelines("rectcast.shapes.reductions_layout", SHAPE_REDUCTIONS);
                (layout, pipeline(HITS_ENTRY))
            });
            Ok(Self {
                layout,
                dense,
                listed,
                reductions,
            })
        })
    }

    /// Shape `S`'s counts entry point, its second pass over the pairs the first lists
    /// ([`COUNTS_LISTED_ENTRY`]), and their layout, where it has them: compiled on the device's
    /// first count of `S`, then kept for every engine on the device, as the rest.
    pub(super) fn compile_counts<S: Shape>(
        context: &GpuContext,
    ) -> Result<Option<CountsPipelines>> {
        let Some(entry) = S::KERNEL.counts else {
            return Ok(None);
        };
        let device = &context.device;
        let compile = || {
            context.scoped(|| {
                let (module, constants) = module_of::<S>(context);
                let (layout, pipeline_layout) =
                    layouts(device, "rectcast.shapes.counts_layout", SHAPE_COUNTS);
                let pipeline = |entry| {
                    compute_pipeline(context, &pipeline_layout, &module, entry, entry, &constants)
                };
                Ok((layout, pipeline(entry), pipeline(COUNTS_LISTED_ENTRY)))
            })
        };
        context.compiled::<CountsOf<S>, _>(compile).map(Some)
    }
}

/// The counts' second pass, over the pairs the first lists (`shaders/shape_passes.wgsl`).
pub(super) const COUNTS_LISTED_ENTRY: &str = "shape_counts_listed";

/// The counts' layout, their first pass and their second.
pub(super) type CountsPipelines = (
    wgpu::BindGroupLayout,
    wgpu::ComputePipeline,
    wgpu::ComputePipeline,
);

/// A shape's counts entry point: hits per query and per shape of a tile, summed on the GPU
/// (bindings 5 and 6 of `shaders/shape_passes.wgsl`), so that a call reads back one number per
/// query and per shape instead of every pair's contact. Its first pass lists the pairs the
/// float filters do not certify as misses (bindings 7 and 8, the dense pairs' list), and the
/// second runs the exact hit test over that list.
pub(super) struct CountsKernel {
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) listed: wgpu::ComputePipeline,
    pub(super) query_hits: Growable,
    pub(super) shape_hits: Growable,
    pub(super) bind_group: Option<wgpu::BindGroup>,
}

impl CountsKernel {
    pub(super) fn new((layout, pipeline, listed): CountsPipelines) -> Self {
        let counter = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        Self {
            layout,
            pipeline,
            listed,
            query_hits: Growable::new("rectcast.shapes.query_hits", counter),
            shape_hits: Growable::new("rectcast.shapes.shape_hits", counter),
            bind_group: None,
        }
    }
}

/// The hits reduced on the GPU from a tile's dense pairs (`shaders/shape_queries.wgsl`):
/// their pipeline, its layout, and its outputs.
pub(super) struct Reductions {
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) hits: wgpu::ComputePipeline,
    /// How many pairs of the tile hit (zeroed before each dispatch), then each one's pair
    /// index and contact, in no set order.
    pub(super) hit_count: wgpu::Buffer,
    pub(super) hit_pairs: Growable,
    pub(super) hit_contacts: Growable,
    pub(super) bind_group: Option<wgpu::BindGroup>,
}

impl Reductions {
    pub(super) fn new(
        (layout, hits): (wgpu::BindGroupLayout, wgpu::ComputePipeline),
        hit_count: wgpu::Buffer,
    ) -> Self {
        let output = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        Self {
            layout,
            hits,
            hit_count,
            hit_pairs: Growable::new("rectcast.shapes.hit_pairs", output),
            hit_contacts: Growable::new("rectcast.shapes.hit_contacts", output),
            bind_group: None,
        }
    }
}

/// A query through the grid: its passes after the list's, and the layout of their group 0
/// (group 1 is the walk's, [`layouts::GRID_WALK`]). The first two are a reducing shape's
/// (`shaders/shape_grid.wgsl`); the last is the polygons' (`shaders/polygon_grid.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GridQuery {
    Hits = 0,
    Counts = 1,
    PolygonEdges = 2,
}

/// How many queries through the grid there are: [`GridQuery`]'s.
pub(super) const GRID_QUERIES: usize = 3;

impl GridQuery {
    /// The pass that walks the grid and lists each query's candidates, all of them.
    pub(super) fn list(self) -> &'static str {
        "shape_grid_list"
    }

    /// The passes over the list of candidates, in order; the first is the exact path's.
    pub(super) fn passes(self) -> &'static [&'static str] {
        match self {
            GridQuery::Hits => &["shape_grid_hits"],
            GridQuery::Counts => &["shape_grid_counts"],
            GridQuery::PolygonEdges => &["polygon_grid_edges"],
        }
    }

    fn entries(self) -> Entries {
        match self {
            GridQuery::Hits => layouts::SHAPE_GRID_HITS,
            GridQuery::Counts => layouts::SHAPE_GRID_COUNTS,
            GridQuery::PolygonEdges => layouts::POLYGON_GRID_EDGES,
        }
    }

    /// Whether a kernel that does (or does not) reduce its contacts runs this query: the
    /// reductions' queries, or the polygons' edges.
    pub(super) fn runs_on(self, reduces: bool) -> bool {
        reduces != (self == GridQuery::PolygonEdges)
    }
}

/// A query's pipelines through the grid, all of one pipeline layout (its group 0, the walk's
/// group 1): the walk that lists candidates, the list's indirect dispatch, and the passes over
/// the list. Compiled once per device and emulation for each shape, on the query's first use.
#[derive(Clone)]
pub(super) struct GridPipelines {
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) walk_layout: wgpu::BindGroupLayout,
    pub(super) list: wgpu::ComputePipeline,
    pub(super) list_dispatch: wgpu::ComputePipeline,
    pub(super) passes: Vec<wgpu::ComputePipeline>,
}

/// The tag of shape `S`'s pipelines for query `Q` among a device's compiled kernels.
struct GridPipelinesOf<S, const Q: u8>(std::marker::PhantomData<S>);

impl GridPipelines {
    /// `S`'s pipelines for `query`; its kernel walks grids (`ShapeKernel::grid`).
    pub(super) fn compile<S: Shape>(context: &GpuContext, query: GridQuery) -> Result<Self> {
        let source = S::KERNEL.grid.expect("a kernel that walks grids");
        let device = &context.device;
        let build = || {
            context.scoped(|| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(S::KERNEL.file),
                    source: wgpu::ShaderSource::Wgsl(source.into()),
                });
                let label = "rectcast.shapes.grid_layout";
                let layout = layouts::bind_group_layout(device, label, query.entries());
                let walk_layout = layouts::bind_group_layout(
                    device,
                    "rectcast.shapes.grid_walk_layout",
                    layouts::GRID_WALK,
                );
                let pipeline_layout =
                    layouts::pipeline_layout(device, label, &[&layout, &walk_layout]);
                let constants =
                    shader::shape_grid_constants(&S::KERNEL, S::constants(context.emulation()));
                let pipeline = |entry: &str| {
                    compute_pipeline(context, &pipeline_layout, &module, entry, entry, &constants)
                };
                Ok(Self {
                    list: pipeline(query.list()),
                    list_dispatch: pipeline("list_dispatch"),
                    passes: query.passes().iter().map(|entry| pipeline(entry)).collect(),
                    layout,
                    walk_layout,
                })
            })
        };
        match query {
            GridQuery::Hits => context.compiled::<GridPipelinesOf<S, 0>, _>(build),
            GridQuery::Counts => context.compiled::<GridPipelinesOf<S, 1>, _>(build),
            GridQuery::PolygonEdges => context.compiled::<GridPipelinesOf<S, 2>, _>(build),
        }
    }
}

/// The grid on the GPU for one shape's queries, the list of candidates, the queries' outputs,
/// and each query's bind groups.
pub(super) struct ShapeGrid {
    pub(super) params: wgpu::Buffer,
    pub(super) bounds: Growable,
    pub(super) cell_start: Growable,
    pub(super) entries: Growable,
    pub(super) boxes: Growable,
    pub(super) spans: Growable,
    /// Each query's pipelines, once compiled.
    pub(super) pipelines: [Option<GridPipelines>; GRID_QUERIES],
    /// Each query's groups 0 and 1.
    pub(super) groups: [(Option<wgpu::BindGroup>, Option<wgpu::BindGroup>); GRID_QUERIES],
    /// The list's header (`PairList`: its length, then its passes' indirect dispatch), the
    /// dispatch copied out of it, and the listed candidates.
    pub(super) pair_list: wgpu::Buffer,
    pub(super) list_args: wgpu::Buffer,
    pub(super) listed_pairs: Growable,
    pub(super) hit_count: wgpu::Buffer,
    pub(super) hit_pairs: Growable,
    pub(super) hit_contacts: Growable,
    pub(super) query_hits: Growable,
    pub(super) shape_hits: Growable,
    /// The polygons' table (their count, then their edges' offsets), where each listed
    /// candidate's edges' contacts start, how many there are, and the contacts.
    pub(super) polygon_table: Growable,
    pub(super) listed_edges: Growable,
    pub(super) edge_count: wgpu::Buffer,
    pub(super) edge_contacts: Growable,
}

impl ShapeGrid {
    pub(super) fn new(context: &GpuContext) -> Self {
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let output = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let buffer = |label, size, usage| {
            context.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            params: buffer(
                "rectcast.shapes.grid_params",
                size_of::<GridParams>() as u64,
                wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            ),
            bounds: Growable::new("rectcast.shapes.grid_bounds", storage),
            cell_start: Growable::new("rectcast.shapes.cell_start", storage),
            entries: Growable::new("rectcast.shapes.grid_entries", storage),
            boxes: Growable::new("rectcast.shapes.grid_boxes", storage),
            spans: Growable::new("rectcast.shapes.grid_spans", storage),
            pipelines: std::array::from_fn(|_| None),
            groups: std::array::from_fn(|_| (None, None)),
            pair_list: buffer("rectcast.shapes.grid_pair_list", 16, output),
            list_args: buffer(
                "rectcast.shapes.grid_list_args",
                12,
                wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
            ),
            listed_pairs: Growable::new("rectcast.shapes.grid_listed_pairs", output),
            hit_count: buffer("rectcast.shapes.grid_hit_count", 16, output),
            hit_pairs: Growable::new("rectcast.shapes.grid_hit_pairs", output),
            hit_contacts: Growable::new("rectcast.shapes.grid_hit_contacts", output),
            query_hits: Growable::new("rectcast.shapes.grid_query_hits", output),
            shape_hits: Growable::new("rectcast.shapes.grid_shape_hits", output),
            polygon_table: Growable::new("rectcast.shapes.grid_polygon_table", storage),
            listed_edges: Growable::new("rectcast.shapes.grid_listed_edges", output),
            edge_count: buffer("rectcast.shapes.grid_edge_count", 16, output),
            edge_contacts: Growable::new("rectcast.shapes.grid_edge_contacts", output),
        }
    }

    /// The tile's inputs were replaced: every group 0 names them.
    pub(super) fn inputs_replaced(&mut self) {
        for (group, _) in &mut self.groups {
            *group = None;
        }
    }
}
