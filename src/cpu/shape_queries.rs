//! The queries over shapes reduced from a tile's contacts: the CPU mirror of
//! `shaders/shape_queries.wgsl`, same names. The GPU reduces there what its dense kernels
//! computed, so that the host reads back the hits alone.

use crate::shape::ShapeContact;

/// No shape: where the grid's walk ends (WGSL `NO_SHAPE`, `shaders/shape_walk.wgsl`).
pub const NO_SHAPE: u32 = u32::MAX;

/// The hitting pairs of a tile's contacts: each one's pair index and contact, in pair order.
/// The shader's `shape_hit_list` appends them in no set order, and the host sorts them.
pub fn shape_hit_list<C: ShapeContact>(contacts: &[C]) -> impl Iterator<Item = (usize, C)> + '_ {
    contacts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.hit())
        .map(|(i, c)| (i, *c))
}
