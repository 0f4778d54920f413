//! The picture's frame: the plot area inside fixed margins (the legend's band above, the
//! axes' labels left and below), scene coordinates to pixels (y up, as data is plotted, or
//! down, as on a screen), drawing primitives, the axes with their scale, the legend, and the
//! density image that stands for the segments when there are too many to draw one by one.

use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, Stroke, Transform};

/// Pixels left of the plot area: the y axis's labels.
pub const LEFT: f32 = 64.0;
/// Pixels right of the plot area.
pub const RIGHT: f32 = 12.0;
/// Pixels above the plot area: the legend's band (up to three rows of entries).
pub const TOP: f32 = 44.0;
/// Pixels below the plot area: the x axis's labels.
pub const BOTTOM: f32 = 36.0;

const INK: [u8; 4] = [40, 40, 40, 255];

pub fn paint(rgba: [u8; 4]) -> Paint<'static> {
    let mut p = Paint::default();
    p.set_color(Color::from_rgba8(rgba[0], rgba[1], rgba[2], rgba[3]));
    p.anti_alias = true;
    p
}

/// Scene coordinates to pixels: a uniform scale that fits the view in the plot area,
/// centred; y grows upwards unless `y_down`.
pub struct View {
    pub scale: f32,
    dx: f32,
    dy: f32,
    /// +scale (y down) or -scale (y up).
    sy: f32,
    /// The plot area: x, y, width, height in pixels.
    pub plot: [f32; 4],
}

impl View {
    pub fn fit(view: [f32; 4], width: u32, height: u32, y_down: bool) -> Self {
        let plot = [
            LEFT,
            TOP,
            (width as f32 - LEFT - RIGHT).max(1.0),
            (height as f32 - TOP - BOTTOM).max(1.0),
        ];
        let (w, h) = (
            (view[2] - view[0]).max(1e-30),
            (view[3] - view[1]).max(1e-30),
        );
        let scale = (plot[2] / w).min(plot[3] / h);
        let left = plot[0] + (plot[2] - w * scale) / 2.0;
        let top = plot[1] + (plot[3] - h * scale) / 2.0;
        let (sy, dy) = if y_down {
            (scale, top - view[1] * scale)
        } else {
            (-scale, top + view[3] * scale)
        };
        Self {
            scale,
            dx: left - view[0] * scale,
            dy,
            sy,
            plot,
        }
    }

    pub fn at(&self, x: f32, y: f32) -> (f32, f32) {
        (x * self.scale + self.dx, y * self.sy + self.dy)
    }

    /// The scene coordinates of pixel (px, py).
    fn scene(&self, px: f32, py: f32) -> (f32, f32) {
        ((px - self.dx) / self.scale, (py - self.dy) / self.sy)
    }

    /// A scene box's pixel rectangle (x, y, width, height), whichever way y points.
    pub fn rect(&self, min: (f32, f32), max: (f32, f32)) -> Option<tiny_skia::Rect> {
        let (a, b) = (self.at(min.0, min.1), self.at(max.0, max.1));
        let (x, y) = (a.0.min(b.0), a.1.min(b.1));
        let (w, h) = ((b.0 - a.0).abs().max(1.0), (b.1 - a.1).abs().max(1.0));
        tiny_skia::Rect::from_xywh(x, y, w, h)
    }
}

pub fn line(
    pixmap: &mut Pixmap,
    v: &View,
    a: (f32, f32),
    b: (f32, f32),
    width: f32,
    rgba: [u8; 4],
) {
    let (a, b) = (v.at(a.0, a.1), v.at(b.0, b.1));
    let mut pb = PathBuilder::new();
    pb.move_to(a.0, a.1);
    // A zero-length segment (a point) still shows: a round cap draws a dot.
    pb.line_to(b.0 + if a == b { 0.01 } else { 0.0 }, b.1);
    if let Some(path) = pb.finish() {
        let stroke = Stroke {
            width,
            line_cap: tiny_skia::LineCap::Round,
            ..Stroke::default()
        };
        pixmap.stroke_path(&path, &paint(rgba), &stroke, Transform::identity(), None);
    }
}

/// A shape: `path` filled, then its edge stroked, inside `mask`.
pub fn filled(
    pixmap: &mut Pixmap,
    path: &tiny_skia::Path,
    rule: FillRule,
    (fill, edge): ([u8; 4], [u8; 4]),
    mask: &tiny_skia::Mask,
) {
    let mask = Some(mask);
    pixmap.fill_path(path, &paint(fill), rule, Transform::identity(), mask);
    pixmap.stroke_path(
        path,
        &paint(edge),
        &Stroke::default(),
        Transform::identity(),
        mask,
    );
}

pub fn dot(pixmap: &mut Pixmap, at: (f32, f32), radius: f32, rgba: [u8; 4]) {
    if let Some(path) = PathBuilder::from_circle(at.0, at.1, radius) {
        pixmap.fill_path(
            &path,
            &paint(rgba),
            FillRule::Winding,
            Transform::identity(),
            None,
        );
    }
}

/// 8 x 8 bitmap text, `scale` pixels per font pixel, its top left at (x, y).
pub fn text(pixmap: &mut Pixmap, x: f32, y: f32, scale: f32, s: &str, rgba: [u8; 4]) {
    let p = paint(rgba);
    for (i, c) in s.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY
            .get(c as usize)
            .copied()
            .unwrap_or([0; 8]);
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    let r = tiny_skia::Rect::from_xywh(
                        x + (i as f32 * 8.0 + col as f32) * scale,
                        y + row as f32 * scale,
                        scale,
                        scale,
                    );
                    if let Some(r) = r {
                        pixmap.fill_rect(r, &p, Transform::identity(), None);
                    }
                }
            }
        }
    }
}

/// The legend in the band above the plot area: entries left to right, wrapping to the next
/// row (three rows at most fit the band).
pub fn legend(pixmap: &mut Pixmap, entries: &[(String, [u8; 4])]) {
    let (mut x, mut y) = (LEFT, 4.0);
    for (label, rgba) in entries {
        let width = 18.0 + 8.0 * label.len() as f32 + 14.0;
        if x + width > pixmap.width() as f32 && x > LEFT {
            (x, y) = (LEFT, y + 13.0);
        }
        if let Some(r) = tiny_skia::Rect::from_xywh(x, y, 14.0, 8.0) {
            pixmap.fill_rect(r, &paint(*rgba), Transform::identity(), None);
        }
        text(pixmap, x + 18.0, y, 1.0, label, INK);
        x += width;
    }
}

/// A step of 1, 2 or 5 times a power of ten giving about `count` ticks over `span`.
fn nice_step(span: f32, count: f32) -> f32 {
    let raw = (span / count.max(1.0)).max(f32::MIN_POSITIVE);
    let power = 10f32.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * power)
}

/// A tick label: as many decimals as the step needs.
fn label(value: f32, step: f32) -> String {
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let value = if value.abs() < step / 2.0 { 0.0 } else { value };
    format!("{value:.decimals$}")
}

/// The plot area's frame, and ticks with their scene values along its bottom and left.
pub fn axes(pixmap: &mut Pixmap, v: &View) {
    let [px, py, pw, ph] = v.plot;
    // On the pixels just outside the plot area, whole (a line on a pixel edge would be two
    // half-grey pixels).
    if let Some(frame) = tiny_skia::Rect::from_xywh(px - 0.5, py - 0.5, pw + 1.0, ph + 1.0) {
        let path = PathBuilder::from_rect(frame);
        pixmap.stroke_path(
            &path,
            &paint(INK),
            &Stroke::default(),
            Transform::identity(),
            None,
        );
    }
    let tick = |pixmap: &mut Pixmap, a: (f32, f32), b: (f32, f32)| {
        let mut pb = PathBuilder::new();
        pb.move_to(a.0, a.1);
        pb.line_to(b.0, b.1);
        if let Some(path) = pb.finish() {
            pixmap.stroke_path(
                &path,
                &paint(INK),
                &Stroke::default(),
                Transform::identity(),
                None,
            );
        }
    };
    // x: the scene's values at the plot's left and right edges.
    let (x0, _) = v.scene(px, py);
    let (x1, _) = v.scene(px + pw, py);
    let step = nice_step(x1 - x0, pw / 100.0);
    let mut k = (x0.min(x1) / step).ceil();
    while k * step <= x0.max(x1) {
        let value = k * step;
        let (x, _) = v.at(value, 0.0);
        tick(pixmap, (x, py + ph), (x, py + ph + 5.0));
        let s = label(value, step);
        text(
            pixmap,
            x - 4.0 * s.len() as f32,
            py + ph + 9.0,
            1.0,
            &s,
            INK,
        );
        k += 1.0;
    }
    // y: the values at the plot's top and bottom edges.
    let (_, y0) = v.scene(px, py);
    let (_, y1) = v.scene(px, py + ph);
    let step = nice_step((y1 - y0).abs(), ph / 60.0);
    let mut k = (y0.min(y1) / step).ceil();
    while k * step <= y0.max(y1) {
        let value = k * step;
        let (_, y) = v.at(0.0, value);
        tick(pixmap, (px - 5.0, y), (px, y));
        let s = label(value, step);
        let x = (px - 8.0 - 8.0 * s.len() as f32).max(0.0);
        text(pixmap, x, y - 4.0, 1.0, &s, INK);
        k += 1.0;
    }
}

/// How many lines cross each pixel of the plot area, those inside the shapes they hit and
/// the others apart: what the picture shows when the segments are too many to draw one by
/// one.
pub struct Density {
    width: usize,
    hits: Vec<u32>,
    misses: Vec<u32>,
}

/// Light to dark orange-red, for hits.
const HIT_RAMP: [[f32; 3]; 2] = [[255.0, 200.0, 120.0], [170.0, 10.0, 20.0]];
/// Light to dark grey, for misses.
const MISS_RAMP: [[f32; 3]; 2] = [[215.0, 215.0, 215.0], [70.0, 70.0, 70.0]];

/// The colours at the light and dark ends of the hits' and the misses' ramps.
pub fn ramp_ends(hit: bool) -> [[u8; 4]; 2] {
    let ramp = if hit { HIT_RAMP } else { MISS_RAMP };
    ramp.map(|[r, g, b]| [r as u8, g as u8, b as u8, 255])
}

impl Density {
    pub fn new(pixmap: &Pixmap) -> Self {
        let n = (pixmap.width() * pixmap.height()) as usize;
        Self {
            width: pixmap.width() as usize,
            hits: vec![0; n],
            misses: vec![0; n],
        }
    }

    /// Adds the pixels of the line from a to b (scene coordinates) inside the plot area.
    pub fn add(&mut self, v: &View, a: (f32, f32), b: (f32, f32), hit: bool) {
        let (a, b) = (v.at(a.0, a.1), v.at(b.0, b.1));
        let [px, py, pw, ph] = v.plot;
        // Clipped to the plot area first (Liang–Barsky), so a long line costs its visible
        // pixels only.
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0f32, 1f32);
        for (p, q) in [
            (-dx, a.0 - px),
            (dx, px + pw - 1.0 - a.0),
            (-dy, a.1 - py),
            (dy, py + ph - 1.0 - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
            }
        }
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return;
        }
        let (x0, y0) = (a.0 + t0 * dx, a.1 + t0 * dy);
        let (x1, y1) = (a.0 + t1 * dx, a.1 + t1 * dy);
        let steps = (x1 - x0).abs().max((y1 - y0).abs()).ceil().max(1.0) as i64;
        let counts = if hit {
            &mut self.hits
        } else {
            &mut self.misses
        };
        // One pixel a step, in 32.32 fixed point (the ends lie in the plot area).
        const ONE: f64 = (1u64 << 32) as f64;
        let fixed = |v: f32| (v.max(0.0) as f64 * ONE) as i64;
        let (mut x, mut y) = (fixed(x0), fixed(y0));
        let sx = ((x1 - x0) as f64 / steps as f64 * ONE) as i64;
        let sy = ((y1 - y0) as f64 / steps as f64 * ONE) as i64;
        for _ in 0..=steps {
            let at = (y >> 32) as usize * self.width + (x >> 32) as usize;
            if let Some(c) = counts.get_mut(at) {
                *c = c.saturating_add(1);
            }
            x += sx;
            y += sy;
        }
    }

    /// Paints the counted pixels over the picture: the hits' ramp where any line inside a
    /// shape passes, else the others' ramp, each on a log scale of its own busiest pixel.
    pub fn paint(&self, pixmap: &mut Pixmap) {
        let top = |counts: &[u32]| (counts.iter().copied().max().unwrap_or(0) as f32 + 1.0).ln();
        let (top_hits, top_misses) = (top(&self.hits), top(&self.misses));
        let shade = |count: u32, top: f32, ramp: [[f32; 3]; 2]| {
            let f = if top > 0.0 {
                (count as f32 + 1.0).ln() / top
            } else {
                1.0
            };
            let c = |i: usize| (ramp[0][i] + (ramp[1][i] - ramp[0][i]) * f) as u8;
            tiny_skia::PremultipliedColorU8::from_rgba(c(0), c(1), c(2), 255)
        };
        for ((pixel, &hits), &misses) in pixmap
            .pixels_mut()
            .iter_mut()
            .zip(&self.hits)
            .zip(&self.misses)
        {
            let color = if hits > 0 {
                shade(hits, top_hits, HIT_RAMP)
            } else if misses > 0 {
                shade(misses, top_misses, MISS_RAMP)
            } else {
                continue;
            };
            if let Some(color) = color {
                *pixel = color;
            }
        }
    }
}
