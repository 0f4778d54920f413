//! The queries over shapes reduced from a tile's contacts: the CPU mirror of
//! `shaders/shape_queries.wgsl`, same names. The GPU reduces there what its dense kernels
//! computed, so that the host reads back one result per query, or the hits alone; the CPU's
//! queries order their hits with the same [`comes_first`].

use crate::shape::ShapeContact;

/// A query's first shape when it hits none (WGSL `NO_SHAPE`).
pub const NO_SHAPE: u32 = u32::MAX;

/// Whether contact `c`, of shape `j`, comes before `best`, of shape `best_shape` ([`NO_SHAPE`]:
/// none yet): it hits, and enters sooner, or as soon at a lower index. A total order on the
/// hits, so the first hit is the same whatever order the candidates are taken in.
pub fn comes_first(
    c: &impl ShapeContact,
    j: u32,
    best: &impl ShapeContact,
    best_shape: u32,
) -> bool {
    if !c.hit() {
        return false;
    }
    if best_shape == NO_SHAPE {
        return true;
    }
    c.t_enter() < best.t_enter() || (c.t_enter() == best.t_enter() && j < best_shape)
}

/// One query's first hit among a row of contacts (shape `j` at `row[j]`): its shape and
/// contact, `None` on a miss. The shader's `shape_first_hits` takes a workgroup per query.
pub fn shape_first_hits<C: ShapeContact>(row: &[C]) -> Option<(u32, C)> {
    let mut best: Option<(u32, C)> = None;
    for (j, c) in row.iter().enumerate() {
        let j = j as u32;
        let (best_shape, best_contact) = best.unwrap_or((NO_SHAPE, *c));
        if comes_first(c, j, &best_contact, best_shape) {
            best = Some((j, *c));
        }
    }
    best
}

/// The hitting pairs of a tile's contacts: each one's pair index and contact, in pair order.
/// The shader's `shape_hit_list` appends them in no set order, and the host sorts them.
pub fn shape_hit_list<C: ShapeContact>(contacts: &[C]) -> impl Iterator<Item = (usize, C)> + '_ {
    contacts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.hit())
        .map(|(i, c)| (i, *c))
}
