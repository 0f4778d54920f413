//! `rectcast._rectcast`: the library's engine for Python. Inputs are numpy float32 arrays of
//! shape (N, 4), read in place (no copy); results come back as named columns, one numpy array
//! each, with the fields of the CLI's `.npy` output. The Python package (`rectcast/`) turns
//! them into a structured array or an Arrow batch; no contract logic lives there or here.

use std::sync::Mutex;

use numpy::{IntoPyArray, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rectcast::{
    Backend, Batch, ClipTo, CpuOptions, Engine, Error, FirstHit, Kind, PairResult, Rect,
    Segment, Sides,
};

/// A library error as a Python exception: bad input is a `ValueError` (it names the array,
/// the row and the field), anything else (GPU failures) a `RuntimeError`.
fn raise(e: Error) -> PyErr {
    match e {
        Error::Input(_) => PyValueError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The records of a (N, 4) float32 array, in place.
fn records<'a, T: bytemuck::Pod>(
    array: &'a PyReadonlyArray2<'_, f32>,
    name: &str,
) -> PyResult<&'a [T]> {
    let shape = array.shape();
    if shape[1] != 4 {
        return Err(PyValueError::new_err(format!(
            "{name}: expected shape (N, 4), found {shape:?}"
        )));
    }
    let values = array.as_slice().map_err(|_| {
        PyValueError::new_err(format!("{name}: expected a C-contiguous, aligned array"))
    })?;
    Ok(bytemuck::cast_slice(values))
}

/// Named columns, in order, as a dict of numpy arrays.
struct Columns<'py> {
    dict: Bound<'py, PyDict>,
}

impl<'py> Columns<'py> {
    fn new(py: Python<'py>) -> Self {
        Self {
            dict: PyDict::new(py),
        }
    }

    fn add<T: numpy::Element>(self, name: &str, values: Vec<T>) -> PyResult<Self> {
        let py = self.dict.py();
        self.dict.set_item(name, values.into_pyarray(py))?;
        Ok(self)
    }

    /// kind, t_enter, t_exit (NaN on a miss), entry, exit of each result.
    fn results<'r>(self, results: impl Iterator<Item = &'r PairResult> + Clone) -> PyResult<Self> {
        let t = |r: &PairResult, t: f32| if r.hit() { t } else { f32::NAN };
        self.add("kind", results.clone().map(|r| r.kind() as u8).collect())?
            .add("t_enter", results.clone().map(|r| t(r, r.t_enter)).collect())?
            .add("t_exit", results.clone().map(|r| t(r, r.t_exit)).collect())?
            .add("entry", results.clone().map(|r| r.entry_sides().bits() as u8).collect())?
            .add("exit", results.map(|r| r.exit_sides().bits() as u8).collect())
    }
}

/// An engine on one backend, kept across calls (its buffers are reused).
#[pyclass(name = "Engine", module = "rectcast._rectcast")]
struct PyEngine {
    engine: Mutex<Engine>,
}

impl PyEngine {
    /// Runs `work` on the engine with the GIL released.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&mut Engine) -> rectcast::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            work(&mut engine)
        })
        .map_err(raise)
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
            engine: Mutex::new(engine),
        })
    }

    /// What the engine runs on, and why.
    #[getter]
    fn chosen(&self) -> String {
        let engine = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        engine.chosen().to_string()
    }

    /// Every segment against every rect, segment-major.
    fn pairs<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let r: &[Rect] = records(&rects, "rects")?;
        let results = self.run(py, |e| e.pairs(s, r))?;
        let m = r.len().max(1) as u64;
        let index = 0..results.len() as u64;
        Columns::new(py)
            .add("segment", index.clone().map(|i| i / m).collect())?
            .add("rect", index.map(|i| i % m).collect())?
            .add("hit", results.iter().map(PairResult::hit).collect())?
            .results(results.iter())
            .map(|c| c.dict)
    }

    /// The closest hit of each segment (ties: the lowest rect); rect -1 on a miss.
    fn first_hit<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let r: &[Rect] = records(&rects, "rects")?;
        let first = self.run(py, |e| e.first_hit(&Batch::new(s, r)))?;
        Columns::new(py)
            .add("segment", (0..first.len() as u64).collect())?
            .add(
                "rect",
                first
                    .iter()
                    .map(|f: &FirstHit| f.rect().map_or(-1, i64::from))
                    .collect(),
            )?
            .results(first.iter().map(|f| &f.result))
            .map(|c| c.dict)
    }

    /// Only the hitting pairs, in (segment, rect) order.
    fn hits<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let r: &[Rect] = records(&rects, "rects")?;
        let hits = self.run(py, |e| e.hits(&Batch::new(s, r)))?;
        Columns::new(py)
            .add("segment", hits.iter().map(|h| u64::from(h.segment)).collect())?
            .add("rect", hits.iter().map(|h| u64::from(h.rect)).collect())?
            .add("hit", vec![true; hits.len()])?
            .results(hits.iter().map(|h| &h.result))
            .map(|c| c.dict)
    }

    /// Hits per rect.
    fn counts<'py>(
        &self,
        py: Python<'py>,
        segments: PyReadonlyArray2<'py, f32>,
        rects: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let r: &[Rect] = records(&rects, "rects")?;
        let counts = self.run(py, |e| e.counts(&Batch::new(s, r)))?;
        Columns::new(py)
            .add("rect", (0..r.len() as u64).collect())?
            .add("hits", counts.per_rect)
            .map(|c| c.dict)
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
    ) -> PyResult<Bound<'py, PyDict>> {
        let s: &[Segment] = records(&segments, "segments")?;
        let r: &[Rect] = records(&rects, "rects")?;
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
        let clipped = self.run(py, |e| e.clip(s, to))?;
        let end = |f: fn(&Segment) -> f32| -> Vec<f32> {
            clipped
                .iter()
                .map(|c| c.segment.as_ref().map_or(f32::NAN, f))
                .collect()
        };
        Columns::new(py)
            .add("segment", (0..clipped.len() as u64).collect())?
            .add("kind", clipped.iter().map(|c| c.kind() as u8).collect())?
            .add("x0", end(|p| p.x0))?
            .add("y0", end(|p| p.y0))?
            .add("x1", end(|p| p.x1))?
            .add("y1", end(|p| p.y1))
            .map(|c| c.dict)
    }
}

/// The name of each kind code (0 miss, 1 inside, 2 enter, 3 exit, 4 cross).
#[pyfunction]
fn kind_names() -> Vec<&'static str> {
    [Kind::Miss, Kind::Inside, Kind::Enter, Kind::Exit, Kind::Cross]
        .map(Kind::name)
        .to_vec()
}

/// The name of each set of sides, by its bits (1 min_x, 2 max_x, 4 min_y, 8 max_y): `min_x+min_y`.
#[pyfunction]
fn side_names() -> Vec<String> {
    (0..16).map(|bits| Sides::from_bits(bits).to_string()).collect()
}

#[pymodule]
fn _rectcast(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEngine>()?;
    m.add_function(wrap_pyfunction!(kind_names, m)?)?;
    m.add_function(wrap_pyfunction!(side_names, m)?)?;
    Ok(())
}
