//! The crate's one error type.

use std::fmt;

/// Everything rectcast can fail with. The library returns these; it never panics on bad input or
/// on a GPU failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input value breaks the contract's domain (see [`InputError`]).
    #[error(transparent)]
    Input(#[from] InputError),
    /// No GPU adapter matched (none at all, or none named by `WGPU_ADAPTER_NAME`).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The device's (or adapter's) limits are below what rectcast's kernels need
    /// ([`crate::GpuContext::required_limits`]): each limit short, with what it needs and what
    /// the device gives.
    #[error("the GPU device's limits are below rectcast's: {}", describe_shortfalls(.0))]
    DeviceLimits(Vec<LimitShortfall>),
    /// The adapter refused to create a device.
    #[error("could not create a GPU device: {0}")]
    RequestDevice(#[from] wgpu::RequestDeviceError),
    /// wgpu reported a validation or internal error (a bug in rectcast, or a broken driver).
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The GPU ran out of memory for this batch.
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
    /// The device was lost (driver reset, GPU removed); build a new [`crate::GpuContext`].
    #[error("GPU device lost: {0}")]
    DeviceLost(String),
    /// Reading results back from the GPU failed.
    #[error("could not read results back from the GPU: {0}")]
    BufferMap(#[from] wgpu::BufferAsyncError),
    /// Waiting for the GPU failed (a wait for a submission the queue never took is
    /// [`Error::DeviceLost`] instead).
    #[error("waiting for the GPU failed: {0}")]
    Poll(wgpu::PollError),
    /// The GPU did not finish a step within its [`crate::gpu::WaitLimit`]. The call is
    /// abandoned (its work may still finish on the GPU); the engine stays usable.
    #[error(
        "the GPU did not finish {step} within {waited:.1?}; the call was abandoned (a larger \
         GpuLimits::wait allows longer steps)"
    )]
    Timeout {
        step: &'static str,
        waited: std::time::Duration,
    },
    /// The call was cancelled through the engine's [`crate::Cancel`]; its outputs are
    /// unspecified.
    #[error("the call was cancelled")]
    Cancelled,
    /// A GPU engine used in a forked child of the process that opened its device: the driver's
    /// threads and state are not there. An engine with a CPU fallback (`Backend::Auto`) runs
    /// the call on the CPU instead.
    #[error(
        "this engine's GPU device was opened in process {opened_in}, before a fork; a forked \
         child cannot use it: make a new engine in the child, or start it with spawn"
    )]
    Forked { opened_in: u32 },
    /// The CPU backend's options cannot be met (a SIMD level this CPU lacks, threads that do
    /// not start).
    #[error("CPU backend: {0}")]
    CpuOptions(String),

    /// `Backend::Auto`'s costs could not be read (`RECTCAST_AUTO_COSTS`, see
    /// [`crate::AutoCosts::parse`]).
    #[error("auto backend: {0}")]
    AutoCosts(String),
    /// The results of `queries × targets` (segments × rects or shapes, or polygons × polygons)
    /// do not fit this machine's address space or memory.
    #[error(
        "{queries} {query_array}s × {targets} {target_array}s is more results than this machine can hold"
    )]
    TooManyPairs {
        queries: usize,
        query_array: InputArray,
        targets: usize,
        target_array: InputArray,
    },
    /// A filter array's length differs from its segments' or rects'.
    #[error("{got} {array} filters for {expected} {array}s")]
    FilterLength {
        array: &'static str,
        expected: usize,
        got: usize,
    },
    /// A [`crate::Batch`] whose `rect_set` is set but whose `rects` are not that set's rects.
    #[error("the batch's rects are not its rect set's rects (build the batch with Batch::over)")]
    RectSetMismatch,
    /// Clipping to one rect per segment with a different number of rects.
    #[error("clipping {segments} segments to one rect each needs {segments} rects, got {rects}")]
    ClipRectCount { segments: usize, rects: usize },
    /// A frame larger than the [`crate::FrameCapacity`] its buffers were made for.
    #[error(
        "a frame of {segments} segments and {rects} rects exceeds the capacity of \
         {capacity_segments} segments and {capacity_rects} rects"
    )]
    FrameCapacity {
        segments: usize,
        rects: usize,
        capacity_segments: usize,
        capacity_rects: usize,
    },
    /// Every staging buffer of the ring holds a frame not yet read.
    #[error("frame {frame} is still unread in its slot of the {ring}-frame ring: read it first")]
    RingFull { frame: u64, ring: usize },
    /// `encode` or `dispatch` without a `write` since the last one.
    #[error("no frame was written since the last dispatch")]
    NothingWritten,
    /// Reading a frame that is not in flight (already read, or never submitted).
    #[error("frame {0} is not in flight (already read, or not submitted)")]
    UnknownFrame(u64),
    /// The output slice has the wrong length.
    #[error("output holds {got} results, the query produces {expected}")]
    OutputLength { expected: usize, got: usize },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One device limit below what rectcast needs ([`crate::GpuContext::required_limits`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitShortfall {
    /// The limit's name, as a field of [`wgpu::Limits`] (`max_storage_buffers_per_shader_stage`).
    pub limit: &'static str,
    /// What rectcast needs: at least this, or for an alignment (`min_…_alignment`) at most.
    pub needs: u64,
    /// What the device gives.
    pub got: u64,
}

/// `max_storage_buffers_per_shader_stage is 4, needs 8; …`
fn describe_shortfalls(short: &[LimitShortfall]) -> String {
    let each: Vec<String> = short
        .iter()
        .map(|s| {
            let bound = if s.limit.starts_with("min_") {
                "at most"
            } else {
                "at least"
            };
            format!("{} is {}, needs {bound} {}", s.limit, s.got, s.needs)
        })
        .collect();
    each.join("; ")
}

/// Which input array a bad value is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputArray {
    Segments,
    Rects,
    Pairs,
    /// The walls of a segment × segment query.
    Walls,
    /// The circles of a segment × circle query.
    Circles,
    /// The polygons of a segment × polygon or polygon × polygon query.
    Polygons,
}

impl InputArray {
    /// What errors call one element of the array (`segment`, `rect`, ...).
    pub fn name(self) -> &'static str {
        match self {
            InputArray::Segments => "segment",
            InputArray::Rects => "rect",
            InputArray::Pairs => "pair",
            InputArray::Walls => "wall",
            InputArray::Circles => "circle",
            InputArray::Polygons => "polygon",
        }
    }
}

impl fmt::Display for InputArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with a value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Problem {
    /// NaN.
    NotANumber,
    /// +inf or -inf.
    Infinite(f32),
    /// |value| > 2^62 (see [`crate::MAX_ABS_COORDINATE`]).
    OutOfRange(f32),
    /// `min_*` is greater than the matching `max_*` (named by the error's `field`).
    MinAboveMax { min: f32, max: f32 },
    /// A pair's index is past the end of its array.
    IndexOutOfRange { index: u32, len: usize },
    /// A circle's radius is below 0.
    NegativeRadius(f32),
    /// A polygon's vertex is NaN, infinite or beyond ±2^62 (the field names its coordinate).
    BadVertex { vertex: u32, value: f32 },
    /// A polygon's ring, after a closing vertex equal to its first is dropped, has fewer than
    /// three vertices.
    TooFewVertices(u32),
    /// Two consecutive vertices are equal: a zero-length edge.
    RepeatedVertex(u32),
    /// The ring is not simple: two of its edges meet where they should not (edges that do not
    /// follow each other meet, or two that do overlap).
    NotSimple { edge: u32, other: u32 },
    /// A polygon's range of the flat vertex array (`offsets[i]..offsets[i + 1]`) is not in
    /// order or not within the array.
    BadOffsets {
        start: u32,
        end: u32,
        vertices: usize,
    },
}

/// A value outside the contract's domain: which array, which element, which field, and why.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("{array} {index}: {field} {problem}")]
pub struct InputError {
    pub array: InputArray,
    /// The element's index in its array (0-based).
    pub index: usize,
    /// The field's name (`x0`, `min_y`, `segment`, …).
    pub field: &'static str,
    pub problem: Problem,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Problem::NotANumber => write!(f, "is NaN"),
            Problem::Infinite(v) => write!(f, "is infinite ({v})"),
            Problem::OutOfRange(v) => write!(f, "is {v}, beyond the limit ±2^62"),
            Problem::MinAboveMax { min, max } => write!(f, "is {min}, greater than the max {max}"),
            Problem::NegativeRadius(r) => write!(f, "is {r}, below 0"),
            Problem::BadVertex { vertex, value } => write!(
                f,
                "of vertex {vertex} is {value}: not finite, or beyond the limit ±2^62"
            ),
            Problem::TooFewVertices(n) => write!(f, "has {n} vertices, fewer than 3"),
            Problem::RepeatedVertex(v) => write!(
                f,
                "repeats vertex {} at vertex {v}: a zero-length edge",
                v - 1
            ),
            Problem::NotSimple { edge, other } => write!(
                f,
                "is not simple: edges {edge} and {other} meet (edge k runs from vertex k to \
                 vertex k + 1)"
            ),
            Problem::BadOffsets {
                start,
                end,
                vertices,
            } => write!(
                f,
                "run from {start} to {end}, not in order within the {vertices} vertices"
            ),
            Problem::IndexOutOfRange { index, len } => {
                write!(f, "is {index}, out of range (there are {len})")
            }
        }
    }
}

impl From<wgpu::PollError> for Error {
    /// A wait for a submission the queue never took (`WrongSubmissionIndex`) is a device that
    /// was destroyed or lost, whose lost callback may not have run yet: an engine with a CPU
    /// fallback then answers on the CPU.
    fn from(e: wgpu::PollError) -> Self {
        match e {
            wgpu::PollError::WrongSubmissionIndex(..) => {
                Error::DeviceLost(format!("the queue did not take a submission ({e})"))
            }
            e => Error::Poll(e),
        }
    }
}
