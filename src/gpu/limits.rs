//! Limits a caller may set below the device's.

use super::context::GpuContext;

/// Uncertain pair ids one dense or list dispatch lists for the host; past that the host scans
/// the results.
pub(crate) const UNCERTAIN_LISTED: u64 = 1024;
/// The `Uncertain` buffer of `pairs.wgsl`: a count, then the list.
pub(crate) const UNCERTAIN_BYTES: u64 = 4 * (1 + UNCERTAIN_LISTED);

/// Lower limits than the device's, to exercise chunking with small batches (tests) or to keep
/// a game's frame from holding huge bindings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuLimits {
    /// The largest storage binding, in bytes (default: the device's limit).
    pub max_binding_bytes: Option<u64>,
    /// Workgroups per dispatch dimension (default: the device's limit).
    pub max_workgroups_per_dimension: Option<u32>,
    /// Entries the hit list of the queries starts with (default 16,384). It grows when a
    /// dispatch finds more, up to the binding limit; past that the batch is split.
    pub hit_list_capacity: Option<u64>,
}

impl GpuLimits {
    /// The largest binding in bytes (a multiple of 16) and workgroups per dimension: these
    /// limits, capped by the device's.
    pub(crate) fn resolve(&self, context: &GpuContext) -> (u64, u32) {
        let device_limits = context.limits();
        let max_binding_bytes = self
            .max_binding_bytes
            .unwrap_or(u64::MAX)
            .min(device_limits.max_storage_buffer_binding_size)
            // A staging buffer holds a chunk's results and the uncertain list.
            .min(
                device_limits
                    .max_buffer_size
                    .saturating_sub(UNCERTAIN_BYTES),
            )
            / 16
            * 16;
        let max_workgroups_per_dimension = self
            .max_workgroups_per_dimension
            .unwrap_or(u32::MAX)
            .min(device_limits.max_compute_workgroups_per_dimension)
            .max(1);
        (max_binding_bytes, max_workgroups_per_dimension)
    }
}
