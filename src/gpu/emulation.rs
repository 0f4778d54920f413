//! Test-only: what other GPUs may do with float arithmetic, emulated on any GPU (lavapipe
//! included) through the shaders' `EMULATION` pipeline constant, so that a test suite proves
//! on one GPU that the results do not depend on it.
//!
//! Production kernels run [`Emulation::Native`], where the emulation folds away at pipeline
//! creation. The suite runs under each other mode with `RECTCAST_GPU_EMULATION=<name>`
//! (scripts/test.sh), or a test picks one with [`GpuContext::with_emulation`](super::GpuContext::with_emulation).

use crate::error::{Error, Result};

/// The environment variable [`Emulation::from_env`] reads.
pub const EMULATION_VARIABLE: &str = "RECTCAST_GPU_EMULATION";

/// How a kernel's float arithmetic behaves. Every mode but `Uncertified` stays within what WGSL
/// and Vulkan allow a GPU (or beyond it: `Rounding` errs by up to 1.5 ulp where round toward
/// zero errs by 1), so results must be byte-identical to [`Native`](Emulation::Native)'s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Emulation {
    /// The GPU's own arithmetic.
    #[default]
    Native,
    /// Every float add, subtract and multiply of the kernels off by up to 1 ulp, every float
    /// division by up to 2 ulp, by an amount hashed from the operands: rounding that is
    /// neither to nearest nor predictable, and WGSL's 2.5-ulp division. Segment × circle
    /// searches for each t from the end of [0, 1] farthest from its estimate, the longest
    /// search there is.
    Rounding,
    /// Subnormal operands and results of float arithmetic flushed to zero.
    Flush,
    /// The filter's `a·b − c·d` as one fused multiply-add.
    Fused,
    /// The control: `Rounding`, with t taken from the float division's estimate of the
    /// quotient, without the exact integer correction. Results must *differ*: it shows that
    /// the suite notices a GPU that divides differently.
    Uncertified,
}

impl Emulation {
    /// Every mode, `Native` first.
    pub const ALL: [Self; 5] = [
        Self::Native,
        Self::Rounding,
        Self::Flush,
        Self::Fused,
        Self::Uncertified,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Rounding => "rounding",
            Self::Flush => "flush",
            Self::Fused => "fused",
            Self::Uncertified => "uncertified",
        }
    }

    /// The shaders' `EMULATE_*` value of this mode.
    pub(crate) fn code(self) -> u32 {
        self as u32
    }

    /// The mode named by `RECTCAST_GPU_EMULATION` (unset or empty: `Native`).
    ///
    /// # Errors
    /// [`Error::Gpu`] naming the variable and the modes when the value names none.
    pub fn from_env() -> Result<Self> {
        match std::env::var(EMULATION_VARIABLE) {
            Ok(name) if !name.is_empty() => Self::ALL
                .into_iter()
                .find(|m| m.name() == name)
                .ok_or_else(|| {
                    Error::Gpu(format!(
                        "{EMULATION_VARIABLE}={name}: not a mode (one of {})",
                        Self::ALL.map(Self::name).join(", ")
                    ))
                }),
            _ => Ok(Self::Native),
        }
    }
}

impl std::fmt::Display for Emulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
