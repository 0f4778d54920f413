//! The picture as pixels (tiny-skia), written as PNG.

use tiny_skia::{Color, FillRule, Mask, Paint, PathBuilder, Pixmap, Stroke, Transform};

use super::canvas::{Density, Draw, Mark, Outline};

fn paint(rgba: [u8; 4]) -> Paint<'static> {
    let mut p = Paint::default();
    p.set_color(Color::from_rgba8(rgba[0], rgba[1], rgba[2], rgba[3]));
    p.anti_alias = true;
    p
}

/// A pixmap, and the plot area as a mask that cuts the scene's marks.
pub struct Png {
    pixmap: Pixmap,
    plot: Mask,
}

impl Png {
    /// A `width` x `height` picture of `background`, its plot area at `plot` (x, y, width,
    /// height).
    pub fn new(
        width: u32,
        height: u32,
        plot: [f32; 4],
        background: [u8; 4],
    ) -> Result<Self, String> {
        let mut pixmap = Pixmap::new(width, height)
            .ok_or_else(|| format!("cannot make a {width} x {height} image"))?;
        let [r, g, b, a] = background;
        pixmap.fill(Color::from_rgba8(r, g, b, a));
        let mut mask = Mask::new(width, height)
            .ok_or_else(|| format!("cannot make a {width} x {height} mask"))?;
        let [x, y, w, h] = plot;
        if let Some(r) = tiny_skia::Rect::from_xywh(x, y, w, h) {
            mask.fill_path(
                &PathBuilder::from_rect(r),
                FillRule::Winding,
                false,
                Transform::identity(),
            );
        }
        Ok(Self { pixmap, plot: mask })
    }

    /// The PNG file's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        self.pixmap.encode_png().map_err(|e| e.to_string())
    }

    fn stroke(&mut self, path: &tiny_skia::Path, stroke: &Stroke, rgba: [u8; 4], cut: bool) {
        let mask = cut.then_some(&self.plot);
        let paint = paint(rgba);
        self.pixmap
            .stroke_path(path, &paint, stroke, Transform::identity(), mask);
    }
}

fn segment(a: (f32, f32), b: (f32, f32)) -> Option<tiny_skia::Path> {
    let mut pb = PathBuilder::new();
    pb.move_to(a.0, a.1);
    // A zero-length segment still shows: tiny-skia draws nothing for it, so it is nudged.
    pb.line_to(b.0 + if a == b { 0.01 } else { 0.0 }, b.1);
    pb.finish()
}

impl Draw for Png {
    fn size(&self) -> (u32, u32) {
        (self.pixmap.width(), self.pixmap.height())
    }

    fn shape(&mut self, outline: &Outline, fill: [u8; 4], edge: [u8; 4], _: Mark) {
        let (path, rule) = match outline {
            Outline::Rect([x, y, w, h]) => (
                tiny_skia::Rect::from_xywh(*x, *y, *w, *h).map(PathBuilder::from_rect),
                FillRule::Winding,
            ),
            Outline::Circle((x, y), r) => (PathBuilder::from_circle(*x, *y, *r), FillRule::Winding),
            Outline::Ring(points) => {
                let mut pb = PathBuilder::new();
                for (k, &(x, y)) in points.iter().enumerate() {
                    if k == 0 {
                        pb.move_to(x, y);
                    } else {
                        pb.line_to(x, y);
                    }
                }
                pb.close();
                (pb.finish(), FillRule::EvenOdd)
            }
        };
        let Some(path) = path else { return };
        if fill[3] > 0 {
            self.pixmap.fill_path(
                &path,
                &paint(fill),
                rule,
                Transform::identity(),
                Some(&self.plot),
            );
        }
        self.stroke(&path, &Stroke::default(), edge, true);
    }

    fn line(&mut self, a: (f32, f32), b: (f32, f32), width: f32, rgba: [u8; 4], _: Mark) {
        if let Some(path) = segment(a, b) {
            let stroke = Stroke {
                width,
                line_cap: tiny_skia::LineCap::Round,
                ..Stroke::default()
            };
            self.stroke(&path, &stroke, rgba, true);
        }
    }

    fn dot(&mut self, at: (f32, f32), radius: f32, rgba: [u8; 4], _: Mark) {
        if let Some(path) = PathBuilder::from_circle(at.0, at.1, radius) {
            self.pixmap.fill_path(
                &path,
                &paint(rgba),
                FillRule::Winding,
                Transform::identity(),
                Some(&self.plot),
            );
        }
    }

    fn density(&mut self, density: &Density) {
        for (pixel, colour) in self.pixmap.pixels_mut().iter_mut().zip(density.colours()) {
            if let Some([r, g, b]) = colour
                && let Some(c) = tiny_skia::PremultipliedColorU8::from_rgba(r, g, b, 255)
            {
                *pixel = c;
            }
        }
    }

    fn swatch(&mut self, [x, y, w, h]: [f32; 4], rgba: [u8; 4]) {
        if let Some(r) = tiny_skia::Rect::from_xywh(x, y, w, h) {
            self.pixmap
                .fill_rect(r, &paint(rgba), Transform::identity(), None);
        }
    }

    fn rule(&mut self, a: (f32, f32), b: (f32, f32), rgba: [u8; 4]) {
        let mut pb = PathBuilder::new();
        pb.move_to(a.0, a.1);
        pb.line_to(b.0, b.1);
        if let Some(path) = pb.finish() {
            self.stroke(&path, &Stroke::default(), rgba, false);
        }
    }

    /// 8 x 8 bitmap glyphs, a pixel each.
    fn text(&mut self, x: f32, y: f32, s: &str, rgba: [u8; 4]) {
        let p = paint(rgba);
        for (i, c) in s.chars().enumerate() {
            let glyph = font8x8::legacy::BASIC_LEGACY
                .get(c as usize)
                .copied()
                .unwrap_or([0; 8]);
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    let at = (x + (i * 8 + col) as f32, y + row as f32);
                    if bits & (1 << col) != 0
                        && let Some(r) = tiny_skia::Rect::from_xywh(at.0, at.1, 1.0, 1.0)
                    {
                        self.pixmap.fill_rect(r, &p, Transform::identity(), None);
                    }
                }
            }
        }
    }
}
