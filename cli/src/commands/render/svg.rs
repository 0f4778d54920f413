//! The picture as SVG: the same marks as the PNG, as vectors, each with a `class` naming what
//! it is (`miss`, `hit`, `inside`, `entry`, `exit`, `shape`, `wall`), so that a stylesheet can
//! restyle them. The density image is a PNG inside the SVG.

use std::fmt::Write as _;

use super::canvas::{Density, Draw, Mark, Outline};

/// The document's elements so far, in drawing order.
pub struct Svg {
    width: u32,
    height: u32,
    plot: [f32; 4],
    background: [u8; 4],
    body: String,
}

/// `fill="#rrggbb"` (with its opacity unless opaque), under attribute `what`.
fn colour(what: &str, [r, g, b, a]: [u8; 4]) -> String {
    let mut s = format!(r##"{what}="#{r:02x}{g:02x}{b:02x}""##);
    if a < 255 {
        let _ = write!(s, r#" {what}-opacity="{:.3}""#, f32::from(a) / 255.0);
    }
    s
}

/// A coordinate, to a hundredth of a pixel.
fn n(v: f32) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Standard base64 (RFC 4648, padded), for the density image's data URL.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let word = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(word >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

const CUT: &str = r#"clip-path="url(#plot)""#;

impl Svg {
    pub fn new(width: u32, height: u32, plot: [f32; 4], background: [u8; 4]) -> Self {
        Self {
            width,
            height,
            plot,
            background,
            body: String::new(),
        }
    }

    /// The SVG file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let (w, h) = (self.width, self.height);
        let [px, py, pw, ph] = self.plot.map(n);
        let mut s = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">
<defs><clipPath id="plot"><rect x="{px}" y="{py}" width="{pw}" height="{ph}"/></clipPath></defs>
<rect width="{w}" height="{h}" {}/>
"#,
            colour("fill", self.background)
        );
        s += &self.body;
        s += "</svg>\n";
        s.into_bytes()
    }
}

impl Draw for Svg {
    fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn shape(&mut self, outline: &Outline, fill: [u8; 4], edge: [u8; 4], mark: Mark) {
        let paint = format!("{} {} {CUT}", colour("fill", fill), colour("stroke", edge));
        let class = mark.name();
        let _ = match outline {
            Outline::Rect([x, y, w, h]) => writeln!(
                self.body,
                r#"<rect class="{class}" x="{}" y="{}" width="{}" height="{}" {paint}/>"#,
                n(*x),
                n(*y),
                n(*w),
                n(*h)
            ),
            Outline::Circle((x, y), r) => writeln!(
                self.body,
                r#"<circle class="{class}" cx="{}" cy="{}" r="{}" {paint}/>"#,
                n(*x),
                n(*y),
                n(*r)
            ),
            Outline::Ring(points) => {
                let mut d = String::new();
                for (k, &(x, y)) in points.iter().enumerate() {
                    let _ = write!(d, "{}{} {} ", if k == 0 { "M" } else { "L" }, n(x), n(y));
                }
                writeln!(
                    self.body,
                    r#"<path class="{class}" d="{d}Z" fill-rule="evenodd" {paint}/>"#
                )
            }
        };
    }

    fn line(&mut self, a: (f32, f32), b: (f32, f32), width: f32, rgba: [u8; 4], mark: Mark) {
        let _ = writeln!(
            self.body,
            r#"<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}" stroke-width="{}" stroke-linecap="round" {} {CUT}/>"#,
            mark.name(),
            n(a.0),
            n(a.1),
            n(b.0),
            n(b.1),
            n(width),
            colour("stroke", rgba)
        );
    }

    fn dot(&mut self, at: (f32, f32), radius: f32, rgba: [u8; 4], mark: Mark) {
        let _ = writeln!(
            self.body,
            r#"<circle class="{}" cx="{}" cy="{}" r="{}" {} {CUT}/>"#,
            mark.name(),
            n(at.0),
            n(at.1),
            n(radius),
            colour("fill", rgba)
        );
    }

    fn density(&mut self, density: &Density) {
        let (w, h) = density.size();
        let Some(mut pixmap) = tiny_skia::Pixmap::new(w, h) else {
            return;
        };
        for (pixel, colour) in pixmap.pixels_mut().iter_mut().zip(density.colours()) {
            if let Some([r, g, b]) = colour
                && let Some(c) = tiny_skia::PremultipliedColorU8::from_rgba(r, g, b, 255)
            {
                *pixel = c;
            }
        }
        if let Ok(png) = pixmap.encode_png() {
            let _ = writeln!(
                self.body,
                r#"<image class="density" x="0" y="0" width="{w}" height="{h}" style="image-rendering:pixelated" href="data:image/png;base64,{}" {CUT}/>"#,
                base64(&png)
            );
        }
    }

    fn swatch(&mut self, [x, y, w, h]: [f32; 4], rgba: [u8; 4]) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" {}/>"#,
            n(x),
            n(y),
            n(w),
            n(h),
            colour("fill", rgba)
        );
    }

    fn rule(&mut self, a: (f32, f32), b: (f32, f32), rgba: [u8; 4]) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke-width="1" {}/>"#,
            n(a.0),
            n(a.1),
            n(b.0),
            n(b.1),
            colour("stroke", rgba)
        );
    }

    /// Monospace text stretched to 8 px a character, as the PNG's glyphs are.
    fn text(&mut self, x: f32, y: f32, s: &str, rgba: [u8; 4]) {
        let length = 8 * s.chars().count();
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-family="monospace" font-size="11" textLength="{length}" lengthAdjust="spacingAndGlyphs" {}>{}</text>"#,
            n(x),
            n(y + 8.0),
            colour("fill", rgba),
            escape(s)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_pads_as_rfc_4648_says() {
        // RFC 4648, section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
    }

    #[test]
    fn numbers_are_short_and_text_is_escaped() {
        assert_eq!(n(12.0), "12");
        assert_eq!(n(-0.001), "0");
        assert_eq!(n(12.3456), "12.35");
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(colour("fill", [255, 0, 16, 255]), r##"fill="#ff0010""##);
    }
}
