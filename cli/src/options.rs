//! What every command shares: the backend and CPU options, the options of a streaming job, and
//! the engine they open.

use std::sync::OnceLock;

use clap::{Args, ValueEnum};
use rectcast::{Backend, BroadPhase, CpuOptions, Engine, Simd};

/// A command's result: done, or the message `main` prints before exiting non-zero.
pub type Outcome = Result<(), String>;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SimdArg {
    Auto,
    Avx512,
    Avx2,
    Portable,
}

impl SimdArg {
    pub fn level(self) -> Option<Simd> {
        match self {
            SimdArg::Auto => None,
            SimdArg::Avx512 => Some(Simd::Avx512),
            SimdArg::Avx2 => Some(Simd::Avx2),
            SimdArg::Portable => Some(Simd::Portable),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// A hardware GPU when one opens, else the CPU (a software GPU such as lavapipe is slower
    /// than the CPU backend).
    Auto,
    /// Whatever GPU adapter opens, lavapipe included; an error without one.
    Gpu,
    /// The CPU backend (SIMD, every core).
    Cpu,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Gpu => Backend::Gpu,
            BackendArg::Cpu => Backend::Cpu,
        }
    }
}

/// `--broad-phase`: find each segment's candidate rects through a grid, or test every rect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BroadPhaseArg {
    /// The grid for jobs with enough rects to pay for it (measured; see docs/performance.md).
    Auto,
    /// Always the grid.
    On,
    /// Always every rect (the brute force), for comparison.
    Off,
}

impl From<BroadPhaseArg> for BroadPhase {
    fn from(b: BroadPhaseArg) -> Self {
        match b {
            BroadPhaseArg::Auto => BroadPhase::Auto,
            BroadPhaseArg::On => BroadPhase::On,
            BroadPhaseArg::Off => BroadPhase::Off,
        }
    }
}

/// How a streaming job treats bad records and reports progress.
#[derive(Args, Clone, Copy)]
pub struct JobArgs {
    /// Skip invalid records (counted, the first few reported at the end) instead of stopping
    /// at the first one. Row indices in the output stay those of the input.
    #[arg(long)]
    pub skip_invalid: bool,
    /// A progress bar on stderr (records, rate, time left); shown anyway when stderr is a
    /// terminal.
    #[arg(long)]
    pub progress: bool,
}

/// The CPU backend's options from `--threads` and `--simd`, set once in `main`.
static CPU_OPTIONS: OnceLock<CpuOptions> = OnceLock::new();

pub fn set_cpu_options(options: CpuOptions) {
    let _ = CPU_OPTIONS.set(options);
}

pub fn cpu_options() -> CpuOptions {
    CPU_OPTIONS.get().copied().unwrap_or_default()
}

/// `--gpu-wait`, set once in `main`.
static GPU_WAIT: OnceLock<Option<std::time::Duration>> = OnceLock::new();

pub fn set_gpu_wait(base: Option<std::time::Duration>) {
    let _ = GPU_WAIT.set(base);
}

/// `--gpu-wait SECONDS`: a positive number of seconds.
pub fn parse_gpu_wait(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text} is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{text}: a wait is a positive number of seconds"))
}

/// `--verbose`, set once in `main`.
static VERBOSE: OnceLock<bool> = OnceLock::new();

pub fn set_verbose(verbose: bool) {
    let _ = VERBOSE.set(verbose);
}

pub fn verbose() -> bool {
    VERBOSE.get().copied().unwrap_or(false)
}

/// An engine being opened on another thread while the command reads its input.
type Opening = std::thread::JoinHandle<Result<Engine, String>>;
static AHEAD: std::sync::Mutex<Option<(Backend, Opening)>> = std::sync::Mutex::new(None);

/// Starts opening `backend`'s engine on another thread when it takes a while (`--backend gpu`:
/// the device and its kernels), so that it opens while the command reads its input;
/// [`engine`] takes it. (`auto` opens no device until a call would be sooner on one.)
pub fn open_ahead(backend: Backend) {
    if backend == Backend::Gpu {
        let opening = std::thread::spawn(move || open(backend));
        *AHEAD.lock().unwrap_or_else(|p| p.into_inner()) = Some((backend, opening));
    }
}

/// Waits for an engine still opening, which the command did not take (it failed first):
/// exiting while a driver starts on another thread is not safe.
pub fn finish_opening() {
    let ahead = AHEAD.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some((_, opening)) = ahead {
        let _ = opening.join();
    }
}

/// An engine on `backend`, with the command line's CPU options and GPU wait: the one
/// [`open_ahead`] started, if it is on `backend`.
pub fn engine(backend: Backend) -> Result<Engine, String> {
    let ahead = AHEAD.lock().unwrap_or_else(|p| p.into_inner()).take();
    match ahead {
        Some((opened, opening)) if opened == backend => opening
            .join()
            .unwrap_or_else(|_| Err("opening the GPU panicked".into())),
        ahead => {
            if let Some((_, opening)) = ahead {
                let _ = opening.join();
            }
            open(backend)
        }
    }
}

fn open(backend: Backend) -> Result<Engine, String> {
    let mut engine = Engine::with_cpu_options(backend, cpu_options()).map_err(|e| e.to_string())?;
    if let Some(&Some(base)) = GPU_WAIT.get() {
        engine.set_gpu_wait(rectcast::WaitLimit {
            base,
            ..rectcast::WaitLimit::default()
        });
    }
    Ok(engine)
}
