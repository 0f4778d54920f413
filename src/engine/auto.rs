//! `Backend::Auto`'s choice, made for each call from a cost model: the time the CPU would take
//! against the GPU's, the GPU's opening included while it is not open. A call the CPU finishes
//! sooner than a GPU could open opens none.
//!
//! The model counts a call's work in pair tests: every (segment, target) pair without a grid;
//! through a grid, [`GRID_TESTS_PER_SEGMENT`] a segment plus one a target (building the grid).
//! Each [`Family`] of calls has its own cost per test on one CPU thread and on the GPU; a GPU
//! call adds a fixed cost and a cost per segment (its upload, its result's readback and merge),
//! and opening a GPU (instance, device, the query kernels) another. The defaults come from the
//! figures measured on an NVIDIA H100 with 16 cores (issue 32), and the brute-force rect
//! queries' CPU cost from this project's 2-core development machine (AVX-512), whose GPU cost
//! on an H100 was not measured (estimated from the kernel's speed: 30–50× the CPU's 16
//! threads); `rectcast bench --query auto` measures a machine's own, and prints them in the
//! form [`AutoCosts::parse`] reads from the `RECTCAST_AUTO_COSTS` environment variable.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The environment variable [`Engine::new`](super::Engine::new) reads an `Auto` engine's costs
/// from ([`AutoCosts::parse`]).
pub const AUTO_COSTS_VAR: &str = "RECTCAST_AUTO_COSTS";

/// The pair tests the model counts a segment for when its call walks a grid: about what a
/// game's bullet meets (a cell or two, a few hitboxes each).
pub const GRID_TESTS_PER_SEGMENT: f64 = 8.0;

/// The kinds of call the model tells apart: each has its own cost per pair test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Rects: the dense or listed pairs, and clipping.
    Pairs,
    /// Rects: first hits and counts, every pair tested.
    FirstHits,
    /// Rects: first hits and counts through a grid.
    GridFirstHits,
    /// Rects: the list of hits, every pair tested (its cost grows with the hits found).
    Hits,
    /// Rects: the list of hits through a grid.
    GridHits,
    /// Segments against walls.
    Walls,
    /// Segments against circles.
    Circles,
    /// Segments against polygons (a test per edge).
    Polygons,
}

impl Family {
    pub const ALL: [Family; 8] = [
        Family::Pairs,
        Family::FirstHits,
        Family::GridFirstHits,
        Family::Hits,
        Family::GridHits,
        Family::Walls,
        Family::Circles,
        Family::Polygons,
    ];

    /// The family of this family's calls through a grid (rect first hits and hits have their
    /// own), else itself.
    pub fn through_grid(self) -> Family {
        match self {
            Family::FirstHits => Family::GridFirstHits,
            Family::Hits => Family::GridHits,
            other => other,
        }
    }

    /// Whether the family's calls walk a grid.
    pub fn is_grid(self) -> bool {
        matches!(self, Family::GridFirstHits | Family::GridHits)
    }

    /// The pair tests the model counts for a call of this family over `segments` and
    /// `targets` (polygons: their edges): through a grid for the [grid's
    /// families](Self::is_grid), every pair for the others (see the module's documentation in
    /// `src/engine/auto.rs`).
    pub fn tests(self, segments: usize, targets: usize) -> f64 {
        if self.is_grid() {
            segments as f64 * GRID_TESTS_PER_SEGMENT + targets as f64
        } else {
            segments as f64 * targets as f64
        }
    }

    /// Its name in [`AutoCosts`]' text form.
    pub fn name(self) -> &'static str {
        match self {
            Family::Pairs => "pairs",
            Family::FirstHits => "first_hits",
            Family::GridFirstHits => "grid_first_hits",
            Family::Hits => "hits",
            Family::GridHits => "grid_hits",
            Family::Walls => "walls",
            Family::Circles => "circles",
            Family::Polygons => "polygons",
        }
    }
}

/// What one pair test costs a family of calls: on one CPU thread, and on the GPU end to end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestCost {
    pub cpu_ns: f64,
    pub gpu_ns: f64,
}

/// The constants of `Backend::Auto`'s cost model (see the module's documentation in
/// `src/engine/auto.rs`, and docs/library.md, "Which backend `auto` picks").
#[derive(Clone, Debug, PartialEq)]
pub struct AutoCosts {
    /// Opening a GPU: instance, adapter, device and the query kernels (H100, driver cache
    /// warm: 177 ms and 49 ms, and the first call's buffers).
    pub gpu_open: Duration,
    /// A GPU call's fixed cost: a submission and a map (H100: a 100k × 10k frame took 1.5–1.8
    /// ms end to end, its kernel 0.06 ms).
    pub gpu_call: Duration,
    /// A GPU call's cost per segment, in nanoseconds: its upload, and its result's readback and
    /// merge on the host.
    pub gpu_segment_ns: f64,
    /// Each family's cost per pair test, in [`Family::ALL`]'s order.
    pub tests: [TestCost; 8],
    /// Whether a software adapter (lavapipe, WARP, SwiftShader) may be opened: it runs the
    /// kernels on the CPU's own cores, slower than the CPU backend. `false` unless
    /// `WGPU_ADAPTER_NAME` names the adapter to use.
    pub software_gpu: bool,
}

impl Default for AutoCosts {
    /// The H100's figures (issue 32; 16 threads): first hits 1M × 4,096 through the grid in
    /// 14.4 ms on the GPU (8 ns a segment, 0.6 ns a grid test), and 100k × 10k in 2.95 ms on
    /// the CPU against 2.18 ms; rect pairs 8,192 × 512 in 3.4 ms on the CPU and 2.4–3.1 ms on
    /// the GPU; hits 262,144 × 32,768 in 403 against 1,332 ms and 100k × 10k in 37 against 123
    /// ms; walls 8,192 × 2,048 in 359 ms on one thread against 447 ms; circles 2,048 × 1,024 in
    /// 8.8 against 36.6 ms. Polygons are tested edge by edge, as walls. First hits and hits
    /// over every pair: 0.15 and 0.3 ns a pair on one AVX-512 thread (measured here), and on
    /// the GPU 0.0003 and 0.003 ns (estimated, not measured).
    fn default() -> Self {
        let cost = |cpu_ns, gpu_ns| TestCost { cpu_ns, gpu_ns };
        Self {
            gpu_open: Duration::from_millis(250),
            gpu_call: Duration::from_micros(1500),
            gpu_segment_ns: 8.0,
            tests: [
                cost(13.0, 0.27),
                cost(0.15, 0.0003),
                cost(58.0, 0.6),
                cost(0.3, 0.003),
                cost(1500.0, 400.0),
                cost(21.0, 27.0),
                cost(4.2, 17.5),
                cost(21.0, 27.0),
            ],
            software_gpu: std::env::var_os("WGPU_ADAPTER_NAME").is_some(),
        }
    }
}

impl AutoCosts {
    /// A family's cost per test.
    pub fn test(&self, family: Family) -> TestCost {
        self.tests[family as usize]
    }

    pub fn test_mut(&mut self, family: Family) -> &mut TestCost {
        &mut self.tests[family as usize]
    }

    /// The defaults with the items of `text` set: comma-separated `name=value`, where a name is
    /// `gpu_open_ms` or `gpu_call_ms` (milliseconds), `gpu_segment_ns` (nanoseconds), or a
    /// [`Family::name`] whose value is `CPU_NS/GPU_NS` (nanoseconds per test, the CPU's on one
    /// thread). Spaces around items are ignored; an empty text is the defaults.
    /// [`Display`](fmt::Display) writes this form.
    ///
    /// # Errors
    /// The item (1-based) and what is wrong with it: an unknown name, a value that is not a
    /// finite number at least 0, a family's value without its `/`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut costs = Self::default();
        for (i, item) in text.split(',').map(str::trim).enumerate() {
            if item.is_empty() {
                continue;
            }
            let at = |why: String| format!("item {} `{item}`: {why}", i + 1);
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| at("expected name=value".into()))?;
            let number = |text: &str| {
                text.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| at(format!("{text} is not a number at least 0")))
            };
            let millis = |v: f64| Duration::from_secs_f64(v / 1e3);
            match name.trim() {
                "gpu_open_ms" => costs.gpu_open = millis(number(value)?),
                "gpu_call_ms" => costs.gpu_call = millis(number(value)?),
                "gpu_segment_ns" => costs.gpu_segment_ns = number(value)?,
                name => {
                    let family = Family::ALL
                        .into_iter()
                        .find(|f| f.name() == name)
                        .ok_or_else(|| {
                            let known: Vec<_> = Family::ALL.iter().map(|f| f.name()).collect();
                            at(format!(
                                "unknown cost {name} (known: gpu_open_ms, gpu_call_ms, gpu_segment_ns, {})",
                                known.join(", ")
                            ))
                        })?;
                    let (cpu, gpu) = value
                        .split_once('/')
                        .ok_or_else(|| at("a family's costs are CPU_NS/GPU_NS".into()))?;
                    *costs.test_mut(family) = TestCost {
                        cpu_ns: number(cpu)?,
                        gpu_ns: number(gpu)?,
                    };
                }
            }
        }
        Ok(costs)
    }

    /// The costs `RECTCAST_AUTO_COSTS` sets, or the defaults when it is unset.
    ///
    /// # Errors
    /// As [`parse`](Self::parse), the variable named.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(AUTO_COSTS_VAR) {
            Ok(text) => Self::parse(&text).map_err(|e| format!("{AUTO_COSTS_VAR}: {e}")),
            Err(std::env::VarError::NotPresent) => Ok(Self::default()),
            Err(e) => Err(format!("{AUTO_COSTS_VAR}: {e}")),
        }
    }

    /// What `work` would take on the CPU's `threads` and, once open, on the GPU.
    pub(crate) fn estimate(&self, work: Work, threads: usize) -> (Duration, Duration) {
        let cost = self.test(work.family);
        let ns = |v: f64| Duration::from_secs_f64(v.max(0.0) / 1e9);
        let cpu = ns(work.tests * cost.cpu_ns / threads.max(1) as f64);
        let gpu_ns = work.segments as f64 * self.gpu_segment_ns + work.tests * cost.gpu_ns;
        (cpu, self.gpu_call + ns(gpu_ns))
    }
}

impl fmt::Display for AutoCosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "gpu_open_ms={},gpu_call_ms={},gpu_segment_ns={}",
            ms(self.gpu_open),
            ms(self.gpu_call),
            self.gpu_segment_ns
        )?;
        for family in Family::ALL {
            let cost = self.test(family);
            write!(f, ",{}={}/{}", family.name(), cost.cpu_ns, cost.gpu_ns)?;
        }
        Ok(())
    }
}

/// A call's work, as the model counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Work {
    pub family: Family,
    pub segments: usize,
    pub tests: f64,
}

impl Work {
    /// Every segment against every target.
    pub fn dense(family: Family, segments: usize, targets: usize) -> Self {
        Self::through(family, segments, targets, false)
    }

    /// Through a grid when `grid` (in the family's [grid variant](Family::through_grid)),
    /// else [`dense`](Self::dense).
    pub fn through(family: Family, segments: usize, targets: usize, grid: bool) -> Self {
        let family = if grid { family.through_grid() } else { family };
        Self {
            family,
            segments,
            tests: family.tests(segments, targets),
        }
    }
}

/// Where `Auto` ran a call, and why: [`Engine::last_choice`](super::Engine::last_choice).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Whether the call ran on the GPU.
    pub gpu: bool,
    /// The call's family.
    pub family: Family,
    /// The model's pair tests for the call.
    pub tests: f64,
    /// The model's time on the CPU backend's threads.
    pub cpu: Duration,
    /// The model's time on the GPU, its opening included when it was not open.
    pub gpu_estimate: Duration,
    /// Why, in words, when the call did not run where the estimates point: no GPU could be
    /// opened, or only a software one.
    pub refused: Option<Arc<str>>,
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let (cpu, gpu) = (ms(self.cpu), ms(self.gpu_estimate));
        let family = self.family.name();
        let tests = self.tests;
        match (&self.refused, self.gpu) {
            (Some(why), _) => write!(f, "auto: {why}"),
            (None, true) => write!(
                f,
                "auto: {family}, {tests:.3e} tests: the GPU's {gpu:.3} ms beat the CPU's {cpu:.3} ms"
            ),
            (None, false) => write!(
                f,
                "auto: {family}, {tests:.3e} tests: the CPU's {cpu:.3} ms beat the GPU's {gpu:.3} ms"
            ),
        }
    }
}

/// An `Auto` engine's state: its costs, the GPU's (refused, or not tried: an open one is the
/// engine's GPU host), what calls the GPU would have run sooner have cost, and the last choice.
#[derive(Clone, Debug)]
pub(crate) struct Auto {
    pub costs: AutoCosts,
    /// Why no GPU is used, once opening one failed or found a software adapter (shared with
    /// each choice it decides: a call on the CPU allocates nothing for it).
    pub refused: Option<Arc<str>>,
    /// What the calls run on the CPU would have saved on a GPU already open: once this passes
    /// the cost of opening it, it is opened (a stream of calls each too small to pay for the
    /// opening pays for it together; the stream then costs at most about twice what the
    /// better backend would have).
    pub forgone: Duration,
    pub last: Option<Choice>,
    /// The wait limit and kernel timing set on the engine, for the GPU it opens.
    pub wait: Option<crate::gpu::WaitLimit>,
    pub timing: bool,
}

/// What the model decides for one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Cpu,
    Gpu,
    /// Open a GPU, then run there.
    Open,
}

impl Auto {
    pub fn new(costs: AutoCosts) -> Self {
        Self {
            costs,
            refused: None,
            forgone: Duration::ZERO,
            last: None,
            wait: None,
            timing: false,
        }
    }

    /// Decides `work`'s backend (`open`: whether a GPU is open), and records the choice. A
    /// `lasting` work repeats many times (a game's frame loop), which pays for the opening.
    pub fn decide(&mut self, work: Work, threads: usize, open: bool, lasting: bool) -> Decision {
        let (cpu, run) = self.costs.estimate(work, threads);
        let gpu_estimate = if open || lasting {
            run
        } else {
            run + self.costs.gpu_open
        };
        let decision = if open {
            if run < cpu {
                Decision::Gpu
            } else {
                Decision::Cpu
            }
        } else if self.refused.is_some() {
            Decision::Cpu
        } else if run < cpu {
            let forgone = self.forgone + (cpu - run);
            if gpu_estimate < cpu || forgone >= self.costs.gpu_open {
                Decision::Open
            } else {
                self.forgone = forgone;
                Decision::Cpu
            }
        } else {
            Decision::Cpu
        };
        self.last = Some(Choice {
            gpu: decision != Decision::Cpu,
            family: work.family,
            tests: work.tests,
            cpu,
            gpu_estimate,
            refused: self.refused.clone().filter(|_| !open),
        });
        decision
    }

    /// The GPU could not be opened (or is a software one): the last call runs on the CPU, and
    /// so do all later ones.
    pub fn refuse(&mut self, why: String) {
        let why: Arc<str> = why.into();
        if let Some(last) = &mut self.last {
            last.gpu = false;
            last.refused = Some(why.clone());
        }
        self.refused = Some(why);
    }

    /// Why an `Auto` engine runs on the CPU now, for [`Engine::chosen`](super::Engine::chosen).
    pub fn reason(&self) -> String {
        match (&self.last, &self.refused) {
            (Some(last), _) => last.to_string(),
            (None, Some(why)) => format!("auto: {why}"),
            (None, None) => "auto: no call yet; a GPU opens when a call would be sooner there, \
                             its opening included"
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_form_reads_back_what_it_writes_and_names_a_bad_item() {
        let mut costs = AutoCosts {
            gpu_open: Duration::from_millis(30),
            ..AutoCosts::default()
        };
        costs.test_mut(Family::Circles).gpu_ns = 2.5;
        let text = costs.to_string();
        assert_eq!(AutoCosts::parse(&text), Ok(costs), "{text}");
        assert_eq!(AutoCosts::parse(" "), Ok(AutoCosts::default()));
        let errors = [
            (
                "gpu_open_ms=1,hitz=1/2",
                "item 2 `hitz=1/2`: unknown cost hitz",
            ),
            (
                "walls=3",
                "item 1 `walls=3`: a family's costs are CPU_NS/GPU_NS",
            ),
            (
                "gpu_call_ms=-1",
                "item 1 `gpu_call_ms=-1`: -1 is not a number at least 0",
            ),
            (
                "pairs=1/NaN",
                "item 1 `pairs=1/NaN`: NaN is not a number at least 0",
            ),
            ("gpu_open_ms", "item 1 `gpu_open_ms`: expected name=value"),
        ];
        for (text, want) in errors {
            let got = AutoCosts::parse(text).expect_err(text);
            assert!(got.starts_with(want), "{text}: {got}");
        }
    }

    #[test]
    fn the_defaults_decide_the_h100_jobs_as_the_readme_says() {
        let mut auto = Auto::new(AutoCosts::default());
        let first_hits = |s, r| Work::through(Family::FirstHits, s, r, true);
        // 1M × 100k first hits, one call in a fresh process: the CPU (0.08 s there end to end
        // against the GPU's 0.31 s).
        let big = first_hits(1 << 20, 100_000);
        assert_eq!(auto.decide(big, 16, false, false), Decision::Cpu);
        // 100k × 10k on a GPU already open: the GPU (2.18 against 2.95 ms).
        assert_eq!(
            auto.decide(first_hits(100_000, 10_000), 16, true, false),
            Decision::Gpu
        );
        // Hits and walls stay on the CPU, open GPU or not.
        let hits = Work::through(Family::Hits, 262_144, 32_768, true);
        assert_eq!(auto.decide(hits, 16, true, false), Decision::Cpu);
        let walls = Work::dense(Family::Walls, 8192, 2048);
        assert_eq!(auto.decide(walls, 16, true, false), Decision::Cpu);
        // One segment against one rect: the CPU.
        assert_eq!(
            auto.decide(first_hits(1, 1), 16, false, false),
            Decision::Cpu
        );
    }

    #[test]
    fn calls_too_small_to_pay_for_the_opening_open_the_gpu_once_together_they_would_have() {
        let mut auto = Auto::new(AutoCosts {
            gpu_open: Duration::from_millis(10),
            gpu_call: Duration::ZERO,
            ..AutoCosts::default()
        });
        // 1 ms on the CPU, 0.1 ms on an open GPU: 0.9 ms forgone a call.
        auto.costs.gpu_segment_ns = 0.0;
        auto.costs.tests[Family::Pairs as usize] = TestCost {
            cpu_ns: 1.0,
            gpu_ns: 0.1,
        };
        let work = Work::dense(Family::Pairs, 1000, 1000);
        let decisions: Vec<_> = (0..12)
            .map(|_| auto.decide(work, 1, false, false))
            .collect();
        let opened = decisions.iter().position(|d| *d == Decision::Open);
        assert_eq!(opened, Some(11), "{decisions:?}");
        assert_eq!(auto.decide(work, 1, true, false), Decision::Gpu);
        // A frame loop's frame pays for the opening at once.
        let mut fresh = Auto::new(auto.costs.clone());
        assert_eq!(fresh.decide(work, 1, false, true), Decision::Open);
        // A call the CPU does sooner stays there, the GPU open or not.
        let small = Work::dense(Family::Walls, 1, 1);
        assert_eq!(auto.decide(small, 1, true, false), Decision::Cpu);
        assert_eq!(fresh.decide(small, 1, false, true), Decision::Cpu);
        auto.refuse("no adapter".into());
        assert_eq!(auto.decide(work, 1, false, false), Decision::Cpu);
        assert!(auto.reason().ends_with("no adapter"), "{}", auto.reason());
    }
}
