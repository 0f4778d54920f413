//! The lane types the CPU batch path's culls share: the SIMD level ([`Simd`]), the sixteen lanes
//! of a block ([`LANES`]), and what a shape's lane filter reads and answers ([`HitLanes`],
//! [`LaneVerdicts`]; [`crate::Shape::hit_lanes`]). The filters themselves run in
//! `cpu::lane_filter`; this layer knows no shape.

/// Rects per block: one AVX-512 register, two AVX2 ones.
pub const LANES: usize = 16;

/// The instruction set the cull runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Simd {
    /// x86-64 AVX-512F: 16 lanes, compares into mask registers.
    Avx512,
    /// x86-64 AVX2: two 8-lane halves per block.
    Avx2,
    /// Plain Rust that LLVM vectorises for the build's baseline (SSE2 on x86-64, NEON on
    /// aarch64).
    Portable,
}

impl Simd {
    /// The best level this CPU runs, detected at run time: no `target-cpu=native` needed.
    pub fn detect() -> Self {
        Self::available()[0]
    }

    /// Every level this CPU runs, best first; [`Simd::Portable`] always.
    pub fn available() -> Vec<Self> {
        [Self::Avx512, Self::Avx2, Self::Portable]
            .into_iter()
            .filter(|s| s.is_supported())
            .collect()
    }

    /// Whether this CPU runs the level.
    pub fn is_supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            Self::Portable => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Avx512 => "avx512",
            Self::Avx2 => "avx2",
            Self::Portable => "portable",
        }
    }
}

impl std::fmt::Display for Simd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Pairs per call of a lane filter: one box-cull block.
pub const HIT_LANES: usize = LANES;

/// Sixteen shapes' values ([`crate::Shape::lane_values`]) for one call of [`crate::Shape::hit_lanes`], one
/// array per value (struct of arrays, so each value is one vector). The filter chooses its
/// precision: walls compute in f32, circles in f64. The lane filter keeps its shapes' values
/// in these blocks, beside the box cull's blocks of the same sixteen shapes.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct HitLanes {
    pub values: [[f32; HIT_LANES]; 4],
}

impl HitLanes {
    pub const ZERO: Self = Self {
        values: [[0.0; HIT_LANES]; 4],
    };

    pub(crate) fn set(&mut self, lane: usize, values: [f32; 4]) {
        for (array, value) in self.values.iter_mut().zip(values) {
            array[lane] = value;
        }
    }
}

/// A lane filter's verdicts, one per lane: `hit` where floating point certifies a hit,
/// `unsure` where only the exact path can tell. A lane in neither misses, certainly.
/// `t_below` is, for a certain hit, an f32 at or below the hit's `t_enter` (the correctly
/// rounded one [`crate::Shape::exact`] gives), 0 where the filter gives no bound: first hits
/// skip a candidate whose bound is past the best hit so far without computing its contact.
/// Queries that read only the masks never compute it (the filters are inlined, and LLVM drops
/// what nothing reads).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaneVerdicts {
    pub hit: [bool; HIT_LANES],
    pub unsure: [bool; HIT_LANES],
    pub t_below: [f32; HIT_LANES],
}

impl LaneVerdicts {
    /// Nothing certified: every lane goes to the exact path.
    pub const UNSURE: Self = Self {
        hit: [false; HIT_LANES],
        unsure: [true; HIT_LANES],
        t_below: [0.0; HIT_LANES],
    };
}
