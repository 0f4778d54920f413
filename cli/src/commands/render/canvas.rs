//! The picture's frame: the plot area inside fixed margins (the legend's band above, the
//! axes' labels left and below), scene coordinates to pixels (y up, as data is plotted, or
//! down, as on a screen), the marks a picture is made of ([`Draw`], which the PNG and the SVG
//! writers implement), the axes with their scale, the legend, and the density image that
//! stands for the segments when there are too many to draw one by one.

/// Pixels left of the plot area: the y axis's labels.
pub const LEFT: f32 = 64.0;
/// Pixels right of the plot area.
pub const RIGHT: f32 = 12.0;
/// Pixels above the plot area: the legend's band (up to three rows of entries).
pub const TOP: f32 = 44.0;
/// Pixels below the plot area: the x axis's labels.
pub const BOTTOM: f32 = 36.0;

const INK: [u8; 4] = [40, 40, 40, 255];

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

    /// A scene box's pixel rectangle (x, y, width, height), whichever way y points; at least
    /// a pixel wide and high.
    pub fn rect(&self, min: (f32, f32), max: (f32, f32)) -> [f32; 4] {
        let (a, b) = (self.at(min.0, min.1), self.at(max.0, max.1));
        let (x, y) = (a.0.min(b.0), a.1.min(b.1));
        let (w, h) = ((b.0 - a.0).abs().max(1.0), (b.1 - a.1).abs().max(1.0));
        [x, y, w, h]
    }
}

/// A shape's outline, in pixels.
pub enum Outline {
    /// x, y, width, height.
    Rect([f32; 4]),
    /// Centre and radius.
    Circle((f32, f32), f32),
    /// A closed ring, filled even-odd.
    Ring(Vec<(f32, f32)>),
}

/// What a mark is, for a reader of the SVG (its `class`) and for the legend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Shape,
    Wall,
    Miss,
    Hit,
    Inside,
    Entry,
    Exit,
}

impl Mark {
    pub fn name(self) -> &'static str {
        match self {
            Mark::Shape => "shape",
            Mark::Wall => "wall",
            Mark::Miss => "miss",
            Mark::Hit => "hit",
            Mark::Inside => "inside",
            Mark::Entry => "entry",
            Mark::Exit => "exit",
        }
    }
}

/// A picture being drawn, in pixels (y down), whatever its format. Marks of the scene are cut
/// at the plot area's frame; the margins' marks (the axes, the legend) are not.
pub trait Draw {
    fn size(&self) -> (u32, u32);
    /// A shape in the plot area: `fill`ed, then its edge stroked 1 px wide in `edge`.
    fn shape(&mut self, outline: &Outline, fill: [u8; 4], edge: [u8; 4], mark: Mark);
    /// A line in the plot area, `width` px wide with round caps: a zero-length one is a dot.
    fn line(&mut self, a: (f32, f32), b: (f32, f32), width: f32, rgba: [u8; 4], mark: Mark);
    /// A disc in the plot area.
    fn dot(&mut self, at: (f32, f32), radius: f32, rgba: [u8; 4], mark: Mark);
    /// The density image over the plot area.
    fn density(&mut self, density: &Density);
    /// A filled box in the margins (a legend swatch).
    fn swatch(&mut self, xywh: [f32; 4], rgba: [u8; 4]);
    /// A 1 px line in the margins (the frame, a tick).
    fn rule(&mut self, a: (f32, f32), b: (f32, f32), rgba: [u8; 4]);
    /// A line of text, 8 px a character and 8 px high, its top left at (x, y).
    fn text(&mut self, x: f32, y: f32, s: &str, rgba: [u8; 4]);
}

/// The legend in the band above the plot area: entries left to right, wrapping to the next
/// row (three rows at most fit the band).
pub fn legend(d: &mut dyn Draw, entries: &[(String, [u8; 4])]) {
    let (mut x, mut y) = (LEFT, 4.0);
    for (label, rgba) in entries {
        let width = 18.0 + 8.0 * label.chars().count() as f32 + 14.0;
        if x + width > d.size().0 as f32 && x > LEFT {
            (x, y) = (LEFT, y + 13.0);
        }
        d.swatch([x, y, 14.0, 8.0], *rgba);
        d.text(x + 18.0, y, label, INK);
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
pub fn axes(d: &mut dyn Draw, v: &View) {
    let [px, py, pw, ph] = v.plot;
    // On the pixels just outside the plot area, whole (a line on a pixel edge would be two
    // half-grey pixels).
    let (left, top, right, bottom) = (px - 0.5, py - 0.5, px + pw + 0.5, py + ph + 0.5);
    d.rule((left, top), (right, top), INK);
    d.rule((right, top), (right, bottom), INK);
    d.rule((right, bottom), (left, bottom), INK);
    d.rule((left, bottom), (left, top), INK);
    // x: the scene's values at the plot's left and right edges.
    let (x0, _) = v.scene(px, py);
    let (x1, _) = v.scene(px + pw, py);
    let step = nice_step(x1 - x0, pw / 100.0);
    let mut k = (x0.min(x1) / step).ceil();
    while k * step <= x0.max(x1) {
        let value = k * step;
        let (x, _) = v.at(value, 0.0);
        d.rule((x, py + ph), (x, py + ph + 5.0), INK);
        let s = label(value, step);
        d.text(x - 4.0 * s.len() as f32, py + ph + 9.0, &s, INK);
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
        d.rule((px - 5.0, y), (px, y), INK);
        let s = label(value, step);
        let x = (px - 8.0 - 8.0 * s.len() as f32).max(0.0);
        d.text(x, y - 4.0, &s, INK);
        k += 1.0;
    }
}

/// How many lines cross each pixel of the plot area, those inside the shapes they hit and
/// the others apart: what the picture shows when the segments are too many to draw one by
/// one.
pub struct Density {
    width: usize,
    height: usize,
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
    pub fn new((width, height): (u32, u32)) -> Self {
        let (width, height) = (width as usize, height as usize);
        let n = width * height;
        Self {
            width,
            height,
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

    /// The picture's width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width as u32, self.height as u32)
    }

    /// Each counted pixel's colour, row by row (`None` where no line passes): the hits' ramp
    /// where any line inside a shape passes, else the others' ramp, each on a log scale of its
    /// own busiest pixel.
    pub fn colours(&self) -> impl Iterator<Item = Option<[u8; 3]>> + '_ {
        let top = |counts: &[u32]| (counts.iter().copied().max().unwrap_or(0) as f32 + 1.0).ln();
        let (top_hits, top_misses) = (top(&self.hits), top(&self.misses));
        let shade = |count: u32, top: f32, ramp: [[f32; 3]; 2]| {
            let f = if top > 0.0 {
                (count as f32 + 1.0).ln() / top
            } else {
                1.0
            };
            let c = |i: usize| (ramp[0][i] + (ramp[1][i] - ramp[0][i]) * f) as u8;
            [c(0), c(1), c(2)]
        };
        self.hits
            .iter()
            .zip(&self.misses)
            .map(move |(&hits, &misses)| {
                if hits > 0 {
                    Some(shade(hits, top_hits, HIT_RAMP))
                } else if misses > 0 {
                    Some(shade(misses, top_misses, MISS_RAMP))
                } else {
                    None
                }
            })
    }
}
