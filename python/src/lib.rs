//! `rectcast._rectcast`: the library's engine for Python. Inputs are numpy float32 arrays of
//! shape (N, 4), read in place (no copy); results come back as packed rows with the fields of
//! the CLI's `.npy` output (bytes and a dtype description), which the Python package
//! (`rectcast/`) views as a structured array without a copy, or turns into an Arrow batch. No
//! contract logic lives there or here.

mod fork_lock;
mod geotext;
mod mixed;
mod rows;
mod targets;

use fork_lock::ForkLock;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rectcast::{
    Backend, Batch, Cancel, ClipTo, CpuOptions, Engine, Error, FirstHit, Kind, Polygons, Rect,
    Segment, Sides,
};
use rows::{Packed, Ty, rows};
use targets::{
    More, PolygonTargets, count_rows, first_hit_rows, hit_rows, pair_rows, shape_rows, target_rows,
};

/// Runs `f`, a panic turned into a `RuntimeError` (PyO3's own `PanicException` is not an
/// `Exception`, so `except Exception` misses it, and it does not pickle across Dask's or
/// multiprocessing's workers). The library returns errors rather than panic; this is the
/// net under that promise.
fn unpanicked<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".to_owned());
        Err(PyRuntimeError::new_err(format!(
            "rectcast: internal error (a bug; please report it): {message}"
        )))
    })
}

/// A library error as a Python exception: bad input is a `ValueError` (it names the array,
/// the row and the field), anything else (GPU failures) a `RuntimeError`.
fn raise(e: Error) -> PyErr {
    match e {
        Error::Input(_) | Error::AutoCosts(_) | Error::CpuOptions(_) => {
            PyValueError::new_err(e.to_string())
        }
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The records of a (N, 4) float32 array, in place.
fn records<'a, T: bytemuck::Pod>(
    array: &'a PyReadonlyArray2<'_, f32>,
    name: &str,
) -> PyResult<&'a [T]> {
    let shape = array.shape();
    let columns = size_of::<T>() / size_of::<f32>();
    if shape[1] != columns {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (N, {columns}), found {shape:?}"
        )));
    }
    let values = array.as_slice().map_err(|_| {
        PyValueError::new_err(format!("{name}: expected a C-contiguous, aligned array"))
    })?;
    Ok(bytemuck::cast_slice(values))
}

/// The segments and rects of a query, in place.
fn inputs<'a>(
    segments: &'a PyReadonlyArray2<'_, f32>,
    rects: &'a PyReadonlyArray2<'_, f32>,
) -> PyResult<(&'a [Segment], &'a [Rect])> {
    Ok((records(segments, "segments")?, records(rects, "rects")?))
}

/// Polygons from the flat form, checked (a `ValueError` names the first bad polygon):
/// vertices (V, 2) float32 and offsets int64, one ring per polygon (P + 1 offsets into the
/// vertices); or, with `polygon_offsets` (P + 1 into the rings), rings each, `offsets` then
/// being the rings' (R + 1 into the vertices).
fn polygons(
    vertices: &PyReadonlyArray2<'_, f32>,
    offsets: &PyReadonlyArray1<'_, i64>,
    polygon_offsets: Option<&PyReadonlyArray1<'_, i64>>,
    name: &str,
) -> PyResult<Polygons> {
    let vertices: &[[f32; 2]] = records(vertices, name)?;
    let offsets = offsets_u32(offsets, name, "offsets")?;
    if offsets.first() != Some(&0) || offsets.last().map(|&o| o as usize) != Some(vertices.len()) {
        return Err(PyValueError::new_err(format!(
            "{name}: offsets must run from 0 to the {} vertices",
            vertices.len()
        )));
    }
    let checked = match polygon_offsets {
        None => Polygons::new(vertices.to_vec(), offsets),
        Some(polygon_offsets) => {
            let polygon_offsets = offsets_u32(polygon_offsets, name, "polygon offsets")?;
            Polygons::with_rings(vertices, &offsets, &polygon_offsets)
        }
    };
    checked.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Polygons in the flat form, as Python passes them: vertices, offsets, polygon offsets.
type FlatPolygons<'py> = (
    PyReadonlyArray2<'py, f32>,
    PyReadonlyArray1<'py, i64>,
    Option<PyReadonlyArray1<'py, i64>>,
);

/// An int64 offsets array as u32, each checked.
fn offsets_u32(offsets: &PyReadonlyArray1<'_, i64>, name: &str, what: &str) -> PyResult<Vec<u32>> {
    let offsets = offsets.as_slice().map_err(|_| {
        PyValueError::new_err(format!("{name}: {what}: expected a contiguous array"))
    })?;
    offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            u32::try_from(o).map_err(|_| {
                PyValueError::new_err(format!("{name}: {what}: {i} is {o}, not in 0..2^32"))
            })
        })
        .collect()
}

/// The invalid polygons of the flat form (as `polygons` reads it, `polygon_offsets` giving
/// rings each): each one's index and why, as the library checks it (`skip_invalid=True`).
#[pyfunction]
#[pyo3(signature = (vertices, offsets, polygon_offsets=None))]
fn invalid_polygons(
    vertices: PyReadonlyArray2<'_, f32>,
    offsets: PyReadonlyArray1<'_, i64>,
    polygon_offsets: Option<PyReadonlyArray1<'_, i64>>,
) -> PyResult<Vec<(usize, String)>> {
    let vertices: &[[f32; 2]] = records(&vertices, "polygons")?;
    let rings = offsets_u32(&offsets, "polygons", "offsets")?;
    let parts = match &polygon_offsets {
        Some(p) => offsets_u32(p, "polygons", "polygon offsets")?,
        None => (0..rings.len() as u32).collect(),
    };
    let ring = |r: usize| -> PyResult<Vec<[f32; 2]>> {
        let (from, to) = (rings[r] as usize, rings[r + 1] as usize);
        (vertices.get(from..to).map(<[_]>::to_vec)).ok_or_else(|| {
            PyValueError::new_err(format!("polygons: offsets {from} then {to}: not in order"))
        })
    };
    let mut bad = Vec::new();
    for (i, w) in parts.windows(2).enumerate() {
        let polygon = (w[0] as usize..w[1] as usize)
            .map(ring)
            .collect::<PyResult<Vec<_>>>()?;
        if let Err(mut e) = Polygons::from_polygons([&polygon]) {
            e.index = i;
            bad.push((i, e.to_string()));
        }
    }
    Ok(bad)
}

/// The largest first-hits buffer an engine keeps between calls.
const KEPT_FIRST_HITS_BYTES: usize = 16 << 20;

/// An engine on one backend, kept across calls (its buffers are reused).
///
/// Threads may share one: calls take turns on the engine. No lock is ever waited for with
/// the GIL held, since the thread holding it may be waiting for the GIL to return.
#[pyclass(name = "Engine", module = "rectcast._rectcast")]
struct PyEngine {
    /// Taken over in a forked child whose parent was mid-call (`fork_lock.rs`).
    engine: ForkLock<Engine>,
    /// First hits, kept between calls: a fresh one would cost its page faults every call.
    /// A call takes it out, and puts it back when done (a call that finds it out makes its
    /// own).
    first_hits: ForkLock<Vec<FirstHit>>,
}

impl PyEngine {
    /// Runs `work` on the engine with the GIL released (its lock taken only then), a panic
    /// as a `RuntimeError`. A call of `pairs` pairs or more (long enough to be worth
    /// interrupting) runs on a helper thread while this one checks Python's signals every
    /// 20 ms: Ctrl-C cancels the engine's call (it stops at its next chunk) and raises
    /// `KeyboardInterrupt` here.
    pub(crate) fn run<T: Send>(
        &self,
        py: Python<'_>,
        pairs: usize,
        work: impl FnOnce(&mut Engine) -> rectcast::Result<T> + Send,
    ) -> PyResult<T> {
        /// Below this many pairs a call takes milliseconds: no helper thread.
        const INTERRUPTIBLE: usize = 1 << 22;
        let on_engine = |cancel: Option<&Cancel>| {
            unpanicked(|| {
                let mut engine = self.engine.lock();
                engine.set_cancel(cancel.cloned());
                let outcome = work(&mut engine);
                engine.set_cancel(None);
                outcome.map_err(raise)
            })
        };
        if pairs < INTERRUPTIBLE {
            return py.detach(|| on_engine(None));
        }
        let cancel = Cancel::new();
        std::thread::scope(|scope| {
            let call = scope.spawn(|| on_engine(Some(&cancel)));
            loop {
                let finished = py.detach(|| {
                    for _ in 0..20 {
                        if call.is_finished() {
                            return true;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    call.is_finished()
                });
                if finished {
                    break;
                }
                if let Err(interrupt) = py.check_signals() {
                    cancel.cancel();
                    let _ = py.detach(|| call.join());
                    return Err(interrupt);
                }
            }
            py.detach(|| call.join()).unwrap_or_else(|_| {
                Err(PyRuntimeError::new_err(
                    "rectcast: the call's thread panicked",
                ))
            })
        })
    }

    /// The kept first-hits buffer, taken out (empty when another call has it), with the GIL
    /// released.
    fn take_first_hits(&self, py: Python<'_>) -> Vec<FirstHit> {
        py.detach(|| std::mem::take(&mut *self.first_hits.lock()))
    }
}

#[pymethods]
impl PyEngine {
    #[new]
    #[pyo3(signature = (backend = "auto", threads = 0))]
    fn new(py: Python<'_>, backend: &str, threads: usize) -> PyResult<Self> {
        let backend = match backend {
            "auto" => Backend::Auto,
            "gpu" => Backend::Gpu,
            "cpu" => Backend::Cpu,
            other => {
                return Err(PyValueError::new_err(format!(
                    "backend: expected \"auto\", \"gpu\" or \"cpu\", found {other:?}"
                )));
            }
        };
        let options = CpuOptions {
            threads,
            ..CpuOptions::default()
        };
        let engine = py
            .detach(|| Engine::with_cpu_options(backend, options))
            .map_err(raise)?;
        Ok(Self {
            engine: ForkLock::new(engine),
            first_hits: ForkLock::new(Vec::new()),
        })
    }

    /// What the engine runs on, and why.
    #[getter]
    fn chosen(&self, py: Python<'_>) -> PyResult<String> {
        self.run(py, 0, |e| Ok(e.chosen().to_string()))
    }

    /// Seconds the library's own first hit takes on these arrays, nothing converted: what the
    /// Python layer's overhead is measured against (python/benches/). `into`: into a buffer
    /// made and touched beforehand (`first_hit_into`), else a fresh result (`first_hit`).
    fn _library_first_hit_seconds(
        &self,
        py: Python<'_>,
        segments: PyReadonlyArray2<'_, f32>,
        rects: PyReadonlyArray2<'_, f32>,
        into: bool,
    ) -> PyResult<f64> {
        let (s, r) = inputs(&segments, &rects)?;
        let mut out = vec![FirstHit::NONE; s.len()];
        self.run(py, s.len() * r.len(), |e| {
            let batch = Batch::new(s, r);
            let start = std::time::Instant::now();
            if into {
                e.first_hit_into(&batch, &mut out)?;
            } else {
                std::hint::black_box(e.first_hit(&batch)?);
            }
            Ok(start.elapsed().as_secs_f64())
        })
    }

    /// Every segment against every rect, segment-major.
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Packed<'py>> {
        let (s, r) = inputs(&segments, &rects)?;
        let results = self.run(py, s.len() * r.len(), |e| e.pairs(s, r))?;
        pair_rows(py, "rect", &results, r.len(), More::NONE)
    }

    /// The closest hit of each segment (ties: the lowest rect); rect -1 on a miss.
    fn first_hit<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Packed<'py>> {
        let (s, r) = inputs(&segments, &rects)?;
        let mut first = self.take_first_hits(py);
        first.resize(s.len(), FirstHit::NONE);
        let out: &mut [FirstHit] = &mut first;
        let done = self.run(py, s.len() * r.len(), |e| {
            e.first_hit_into(&Batch::new(s, r), out)
        });
        let packed = done.and_then(|()| {
            first_hit_rows(
                py,
                "rect",
                &first,
                |f: &FirstHit| f.rect().map(|rect| (rect, &f.result)),
                More::NONE,
            )
        });
        // Kept for the next call up to 16 MiB (a million segments' worth); a larger one goes
        // back to the allocator rather than sit in an idle engine.
        if first.capacity() * size_of::<FirstHit>() <= KEPT_FIRST_HITS_BYTES {
            py.detach(|| *self.first_hits.lock() = first);
        }
        packed
    }

    /// Each segment's first-hit rect alone (ties: the lowest rect), -1 on a miss: a GPU reads
    /// back 4 bytes a segment.
    fn first_hit_rects<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let (s, r) = inputs(&segments, &rects)?;
        let first = self.run(py, s.len() * r.len(), |e| {
            e.first_hit_rects(&Batch::new(s, r))
        })?;
        let rects: Vec<i64> = first
            .iter()
            .map(|&rect| match rect {
                FirstHit::NO_RECT => -1,
                rect => i64::from(rect),
            })
            .collect();
        Ok(rects.into_pyarray(py))
    }

    /// A query (`pairs`, `hits`, `first_hit`, `counts`) of segments against a registered
    /// shape (`shape`: its keyword, `walls` or `circles`: `shapes()`).
    fn shape_query<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        shape: &str,
        segments: PyReadonlyArray2<'py, f32>,
        shapes: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Packed<'py>> {
        let s: &[Segment] = records(&segments, "segments")?;
        shape_rows(py, self, query, shape, s, &shapes)
    }

    /// A query (`pairs`, `hits`, `first_hit`, `counts`) of segments against several kinds of
    /// target at once, each optional (`polygons` in the flat form of `polygon_query`): the
    /// CLI's `.npy` rows of a mixed job (`mixed.rs`).
    #[pyo3(signature = (query, segments, rects=None, walls=None, circles=None, polygons=None))]
    #[allow(
        clippy::too_many_arguments,
        reason = "one optional array for each kind of target, as Python passes them"
    )]
    fn mixed_query<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        segments: PyReadonlyArray2<'py, f32>,
        rects: Option<PyReadonlyArray2<'py, f32>>,
        walls: Option<PyReadonlyArray2<'py, f32>>,
        circles: Option<PyReadonlyArray2<'py, f32>>,
        polygons: Option<FlatPolygons<'py>>,
    ) -> PyResult<Packed<'py>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let polygons = match &polygons {
            Some((vertices, offsets, polygon_offsets)) => Some(self::polygons(
                vertices,
                offsets,
                polygon_offsets.as_ref(),
                "polygons",
            )?),
            None => None,
        };
        let mixed = mixed::Mixed {
            rects: rects.as_ref().map(|r| records(r, "rects")).transpose()?,
            walls: walls.as_ref().map(|w| records(w, "walls")).transpose()?,
            circles: circles
                .as_ref()
                .map(|c| records(c, "circles"))
                .transpose()?,
            polygons,
        };
        mixed::mixed_rows(py, self, query, s, mixed)
    }

    /// A query (`pairs`, `hits`, `first_hit`, `counts`) of segments against polygons in the
    /// flat form (rings each with `polygon_offsets`).
    #[pyo3(signature = (query, segments, vertices, offsets, polygon_offsets=None))]
    fn polygon_query<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        segments: PyReadonlyArray2<'py, f32>,
        vertices: PyReadonlyArray2<'py, f32>,
        offsets: PyReadonlyArray1<'py, i64>,
        polygon_offsets: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Packed<'py>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let p = polygons(&vertices, &offsets, polygon_offsets.as_ref(), "polygons")?;
        target_rows(py, self, query, s, &PolygonTargets(&p))
    }

    /// Polygon × polygon: the overlapping pairs (polygon, other) of `a` × `b`, in order
    /// (each in `polygon_query`'s flat form).
    #[allow(
        clippy::too_many_arguments,
        reason = "two polygon sets in their flat form, as Python passes them"
    )]
    fn overlaps<'py>(
        &self,
        py: Python<'py>,
        vertices: PyReadonlyArray2<'py, f32>,
        offsets: PyReadonlyArray1<'py, i64>,
        polygon_offsets: Option<PyReadonlyArray1<'py, i64>>,
        other_vertices: PyReadonlyArray2<'py, f32>,
        other_offsets: PyReadonlyArray1<'py, i64>,
        other_polygon_offsets: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Packed<'py>> {
        let a = polygons(&vertices, &offsets, polygon_offsets.as_ref(), "polygons")?;
        let b = polygons(
            &other_vertices,
            &other_offsets,
            other_polygon_offsets.as_ref(),
            "other",
        )?;
        let overlap = self.run(py, a.len() * b.len(), |e| e.polygon_overlaps(&a, &b))?;
        let m = b.len().max(1);
        let pairs: Vec<(u64, u64)> = overlap
            .iter()
            .enumerate()
            .filter(|(_, o)| **o)
            .map(|(i, _)| ((i / m) as u64, (i % m) as u64))
            .collect();
        let fields = [("polygon", Ty::U64), ("other", Ty::U64)];
        rows(py, &fields, &pairs, |_, &(a, b), row| {
            row.u64(a).u64(b);
        })
    }

    /// Only the hitting pairs, in (segment, rect) order.
    fn hits<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Packed<'py>> {
        let (s, r) = inputs(&segments, &rects)?;
        let hits = self.run(py, s.len() * r.len(), |e| e.hits(&Batch::new(s, r)))?;
        hit_rows(
            py,
            "rect",
            &hits,
            |h| (h.segment, h.rect, &h.result),
            More::NONE,
        )
    }

    /// Hits per rect.
    fn counts<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Packed<'py>> {
        let (s, r) = inputs(&segments, &rects)?;
        let counts = self.run(py, s.len() * r.len(), |e| e.counts(&Batch::new(s, r)))?;
        count_rows(py, "rect", &counts.per_target)
    }

    /// Each segment clipped to `rect` (one rect, shape (1, 4)) or to its own row of `rects`
    /// (`per_segment`); coordinates NaN on a miss.
    #[pyo3(signature = (segments, rects, per_segment))]
    fn clip<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
        per_segment: bool,
    ) -> PyResult<Packed<'py>> {
        let (s, r) = inputs(&segments, &rects)?;
        let to = match (per_segment, r) {
            (true, r) => ClipTo::PerSegment(r),
            (false, [one]) => ClipTo::Rect(*one),
            (false, _) => {
                return Err(PyValueError::new_err(format!(
                    "rect: expected one rect, found {}",
                    r.len()
                )));
            }
        };
        let clipped = self.run(py, s.len(), |e| e.clip(s, to))?;
        let fields = [
            ("segment", Ty::U64),
            ("kind", Ty::U8),
            ("x0", Ty::F32),
            ("y0", Ty::F32),
            ("x1", Ty::F32),
            ("y1", Ty::F32),
        ];
        rows(py, &fields, &clipped, |i, c, row| {
            let [x0, y0, x1, y1] = c
                .segment
                .map_or([f32::NAN; 4], |p| [p.x0, p.y0, p.x1, p.y1]);
            row.u64(i as u64)
                .u8(c.kind() as u8)
                .f32(x0)
                .f32(y0)
                .f32(x1)
                .f32(y1);
        })
    }
}

/// The name of each kind code (0 miss, 1 inside, 2 enter, 3 exit, 4 cross).
#[pyfunction]
fn kind_names() -> Vec<&'static str> {
    Kind::ALL.map(Kind::name).to_vec()
}

/// The name of each set of sides, by its bits (1 min_x, 2 max_x, 4 min_y, 8 max_y): `min_x+min_y`.
#[pyfunction]
fn side_names() -> Vec<String> {
    (0..16)
        .map(|bits| Sides::from_bits(bits).to_string())
        .collect()
}

#[pymodule]
fn _rectcast(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyEngine>()?;
    m.add_function(wrap_pyfunction!(kind_names, m)?)?;
    m.add_function(wrap_pyfunction!(side_names, m)?)?;
    m.add_function(wrap_pyfunction!(targets::shapes, m)?)?;
    m.add_function(wrap_pyfunction!(mixed::target_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(geotext::read_polygons, m)?)?;
    m.add_function(wrap_pyfunction!(geotext::read_polylines, m)?)?;
    m.add_function(wrap_pyfunction!(geotext::auto_origin, m)?)?;
    m.add_function(wrap_pyfunction!(targets::invalid_records, m)?)?;
    m.add_function(wrap_pyfunction!(invalid_polygons, m)?)?;
    m.add("MAX_ABS_COORDINATE", rectcast::MAX_ABS_COORDINATE)?;
    m.add("DISPLACEMENT_BOUND", rectcast_geotext::DISPLACEMENT_BOUND)?;
    Ok(())
}
