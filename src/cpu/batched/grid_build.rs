//! The grid over boxes built on a kernel's threads: the same cells and the same entries, in the
//! same order, as [`Grid::build`] and [`Grid::list_entry_spans`], the rows split into bands
//! that threads count and fill on their own (each band's cells, and so its entries, are one
//! run of the arrays). Where shapes' grids are built per call (a CLI job's first chunk, a
//! game's moving hitboxes), the serial build was a tenth of 1M bullets × 100k circles' first
//! hits.

use super::CpuKernel;
use crate::cpu::grid::{EntrySpan, Grid, row_cells};
use crate::types::Rect;
use rayon::prelude::*;

/// Rows per band, at least: fewer make bands whose every thread reads all the spans for little.
const MIN_BAND_ROWS: u32 = 8;

impl Grid {
    /// [`Grid::build`], then [`Grid::list_entry_spans`], with the rows in bands on the current
    /// rayon pool: the same grid, byte for byte.
    pub fn build_listing_spans_in_parallel(&mut self, rects: &[Rect]) {
        self.build_in_bands(rects, true);
    }

    /// [`Grid::build`] with the rows in bands on the current rayon pool: the same grid, byte
    /// for byte (a rects' grid: no entry spans).
    pub fn build_in_parallel(&mut self, rects: &[Rect]) {
        self.build_in_bands(rects, false);
    }

    /// The banded build, listing the entries' spans or not.
    fn build_in_bands(&mut self, rects: &[Rect], list_spans: bool) {
        self.plan(rects);
        let (cols, rows) = (self.cols as usize, self.rows);
        let bands = (rayon::current_num_threads() as u32 * 4)
            .min(rows.div_ceil(MIN_BAND_ROWS))
            .max(1);
        let band_rows = rows.div_ceil(bands);
        let bands = rows.div_ceil(band_rows);
        // Each band counts its own cells' entries (cell_start[1..], a band's cells in a run).
        self.cell_start.clear();
        self.cell_start.resize(cols * rows as usize + 1, 0);
        let spans = &self.spans;
        self.cell_start[1..]
            .par_chunks_mut(cols * band_rows as usize)
            .enumerate()
            .for_each(|(band, counts)| {
                let first_row = band as u32 * band_rows;
                let last_row = first_row + (counts.len() / cols) as u32 - 1;
                for span in spans {
                    for row in span.row_min.max(first_row)..span.row_max.min(last_row) + 1 {
                        let at = (row - first_row) as usize * cols;
                        for count in &mut counts[row_cells(at, span)] {
                            *count += 1;
                        }
                    }
                }
            });
        let total = self.size_lists();
        self.entry_spans.clear();
        if list_spans {
            self.entry_spans.resize(total, EntrySpan::default());
        }
        // Each band's entries, boxes and spans: one run of each array, cut at its cells' start.
        let starts: Vec<usize> = (0..=bands)
            .map(|band| self.cell_start[((band * band_rows).min(rows)) as usize * cols] as usize)
            .collect();
        let mut parts = Vec::with_capacity(bands as usize);
        let (mut entries, mut boxes, mut packed) = (
            &mut self.entries[..],
            &mut self.boxes[..],
            &mut self.entry_spans[..],
        );
        for band in 0..bands as usize {
            let len = starts[band + 1] - starts[band];
            let (e, e_rest) = entries.split_at_mut(len);
            let (b, b_rest) = boxes.split_at_mut(len);
            let (p, p_rest) = packed.split_at_mut(if list_spans { len } else { 0 });
            parts.push((band as u32, e, b, p));
            (entries, boxes, packed) = (e_rest, b_rest, p_rest);
        }
        let (cell_start, spans) = (&self.cell_start, &self.spans);
        parts
            .into_par_iter()
            .for_each(|(band, entries, boxes, packed)| {
                let first_row = band * band_rows;
                let last_row = (first_row + band_rows).min(rows) - 1;
                let base = starts[band as usize];
                let first_cell = first_row as usize * cols;
                let mut next: Vec<u32> = cell_start[first_cell..(last_row as usize + 1) * cols]
                    .iter()
                    .map(|&start| start - base as u32)
                    .collect();
                for (rect, span) in spans.iter().enumerate() {
                    let packed_span = EntrySpan::of(span);
                    for row in span.row_min.max(first_row)..span.row_max.min(last_row) + 1 {
                        let at = (row - first_row) as usize * cols;
                        for slot in &mut next[row_cells(at, span)] {
                            let e = *slot as usize;
                            *slot += 1;
                            entries[e] = rect as u32;
                            boxes[e] = rects[rect];
                            if list_spans {
                                packed[e] = packed_span;
                            }
                        }
                    }
                }
            });
    }
}

impl CpuKernel {
    /// A grid over `rects` with its entries' spans listed (a shapes' grid), built on this
    /// kernel's threads.
    pub(crate) fn build_grid(&self, grid: &mut Grid, rects: &[Rect]) {
        match self.in_parallel(rects.len()) {
            false => {
                grid.build(rects);
                grid.list_entry_spans();
            }
            true => Self::install(&self.pool, || grid.build_listing_spans_in_parallel(rects)),
        }
    }

    /// A grid over `rects` (a rects' grid: no entry spans), built on this kernel's threads:
    /// a game's hitboxes move every frame, and with the first hits' walk short, the serial
    /// build was a fifth of a 2-thread frame of 50k bullets × 5k boxes.
    pub(crate) fn build_rect_grid(&self, grid: &mut Grid, rects: &[Rect]) {
        match self.threads {
            1 => grid.build(rects),
            _ => Self::install(&self.pool, || grid.build_in_parallel(rects)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cpu::grid::Grid;
    use crate::scene::{bullet_hell, clustered, random_batch};
    use crate::types::Rect;

    #[test]
    fn the_grid_built_in_bands_is_the_serial_grid_byte_for_byte() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a pool");
        let scenes: Vec<(&str, Vec<Rect>)> = vec![
            ("bullet hell", bullet_hell(3, 0, 20_000).1),
            ("clustered", clustered(4, 0, 5_000).1),
            ("big boxes", random_batch(5, 0, 3_000, 1000.0).1),
            ("one rect", vec![Rect::new(1.0, 2.0, 3.0, 4.0)]),
            ("none", Vec::new()),
            (
                "a world and specks",
                (0..500)
                    .map(|k| Rect::new(k as f32, 0.0, k as f32, 1.0))
                    .chain([Rect::new(-1e6, -1e6, 1e6, 1e6)])
                    .collect(),
            ),
        ];
        for (name, rects) in scenes {
            let mut serial = Grid::default();
            serial.build(&rects);
            serial.list_entry_spans();
            let mut rects_grid = Grid::default();
            pool.install(|| rects_grid.build_in_parallel(&rects));
            assert!(rects_grid.entry_spans.is_empty(), "{name}: a rects' grid");
            assert_eq!(rects_grid.cell_start, serial.cell_start, "{name}");
            assert_eq!(rects_grid.entries, serial.entries, "{name}");
            assert_eq!(rects_grid.boxes, serial.boxes, "{name}");
            let mut banded = Grid::default();
            pool.install(|| banded.build_listing_spans_in_parallel(&rects));
            assert_eq!(
                (banded.cols, banded.rows),
                (serial.cols, serial.rows),
                "{name}"
            );
            assert_eq!(banded.cell_start, serial.cell_start, "{name}: cell starts");
            if let Some(e) = (0..serial.entries.len()).find(|&e| {
                banded.entries[e] != serial.entries[e]
                    || banded.boxes[e] != serial.boxes[e]
                    || banded.entry_spans[e] != serial.entry_spans[e]
            }) {
                panic!(
                    "{name}: entry {e} differs: rect {} against {}",
                    banded.entries[e], serial.entries[e]
                );
            }
            assert_eq!(banded.entries.len(), serial.entries.len(), "{name}");
            assert_eq!(banded.entry_spans.len(), serial.entry_spans.len(), "{name}");
        }
    }
}
