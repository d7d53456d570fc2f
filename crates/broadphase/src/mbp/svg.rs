//! The region layout as an SVG picture, for the lab.

use std::fmt::Write;

use super::table::State;
use super::{MbpEngine, OUT};
use crate::store::Store;
use crate::Aabb;

/// Picture width in pixels (the height follows the aspect ratio).
const WIDTH: f64 = 800.0;
const MARGIN: f64 = 24.0;
/// At most this many proxies are drawn as dots.
const DOTS: usize = 4000;

/// Draws `mbp`'s regions, their cells and a sample of its proxies (held in `s`).
pub(super) fn render(mbp: &MbpEngine, s: &Store) -> String {
    let [a, b] = mbp.plane();
    // The view: every finite region border and every box held.
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    let mut grow = |k: usize, x: f32| {
        if x.is_finite() {
            lo[k] = lo[k].min(f64::from(x));
            hi[k] = hi[k].max(f64::from(x));
        }
    };
    for r in mbp.regions.iter().flatten() {
        for (k, axis) in [(0, a), (1, b)] {
            grow(k, r.bounds.min[axis]);
            grow(k, r.bounds.max[axis]);
        }
    }
    if let Some(w) = s.bounds() {
        for (k, axis) in [(0, a), (1, b)] {
            grow(k, w.min[axis]);
            grow(k, w.max[axis]);
        }
    }
    for k in 0..2 {
        if lo[k] > hi[k] {
            (lo[k], hi[k]) = (0.0, 1.0);
        }
        let pad = ((hi[k] - lo[k]) * 0.02).max(1e-3);
        lo[k] -= pad;
        hi[k] += pad;
    }
    let scale = (WIDTH - 2.0 * MARGIN) / (hi[0] - lo[0]).max(hi[1] - lo[1]);
    let height = (hi[1] - lo[1]) * scale + 2.0 * MARGIN + 40.0;
    // Plane coordinates to pixels (the second axis grows upwards).
    let px = |x: f64| MARGIN + (x.clamp(lo[0], hi[0]) - lo[0]) * scale;
    let py = |y: f64| MARGIN + (hi[1] - y.clamp(lo[1], hi[1])) * scale;
    let name = |axis: usize| ["x", "y", "z"][axis];

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0}" viewBox="0 0 {WIDTH} {height:.0}" font-family="sans-serif" font-size="10">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let most = mbp
        .regions
        .iter()
        .flatten()
        .filter_map(|r| r.built())
        .map(|b| {
            let (f, d) = mbp.population(b);
            f + d
        })
        .max()
        .unwrap_or(0)
        .max(1);
    for (i, r) in mbp.regions.iter().enumerate() {
        let Some(r) = r else { continue };
        if matches!(r.state, State::Removing(_)) {
            continue;
        }
        let (x0, x1) = (
            px(f64::from(r.bounds.min[a])),
            px(f64::from(r.bounds.max[a])),
        );
        let (y0, y1) = (
            py(f64::from(r.bounds.max[b])),
            py(f64::from(r.bounds.min[b])),
        );
        let (fixed, dynamic) = r.built().map_or((0, 0), |b| mbp.population(b));
        let members = fixed + dynamic;
        let shade = 0.08 + 0.5 * members as f64 / most as f64;
        let _ = writeln!(
            out,
            r##"<rect x="{x0:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="#3b7dd8" fill-opacity="{shade:.2}" stroke="#1d3f6e" stroke-width="1"/>"##,
            (x1 - x0).max(0.5),
            (y1 - y0).max(0.5)
        );
        if let Some(built) = r.built() {
            // Cell borders, where the cells cut the picture's axes.
            let [_, u, v] = built.grid.axes;
            for (k, axis) in [(0, u), (1, v)] {
                for c in 1..built.grid.cells[k] {
                    let (_, edge) = built.grid.cell_span(k, c - 1);
                    if axis == a {
                        let x = px(edge);
                        let _ = writeln!(
                            out,
                            r##"<line x1="{x:.1}" y1="{y0:.1}" x2="{x:.1}" y2="{y1:.1}" stroke="#1d3f6e" stroke-opacity="0.3" stroke-width="0.5"/>"##
                        );
                    } else if axis == b {
                        let y = py(edge);
                        let _ = writeln!(
                            out,
                            r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{x1:.1}" y2="{y:.1}" stroke="#1d3f6e" stroke-opacity="0.3" stroke-width="0.5"/>"##
                        );
                    }
                }
            }
            if x1 - x0 > 40.0 && y1 - y0 > 14.0 {
                let _ = writeln!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}">r{i}: {} + {}</text>"#,
                    x0 + 3.0,
                    y0 + 11.0,
                    fixed,
                    dynamic
                );
            }
        }
    }
    // A sample of the proxies, as dots at their centres; out-of-bounds ones in red.
    let outside: std::collections::HashSet<u32> =
        mbp.cells.get(OUT).entries().map(|(slot, _)| slot).collect();
    let stride = s.len().div_ceil(DOTS).max(1);
    for slot in (0..s.slot_count())
        .filter(|&i| s.is_alive(i))
        .step_by(stride)
    {
        let c = centre(s.aabb_at(slot));
        let colour = if outside.contains(&(slot as u32)) {
            "#d62728"
        } else {
            "#222222"
        };
        let _ = writeln!(
            out,
            r#"<circle cx="{:.1}" cy="{:.1}" r="1.2" fill="{colour}"/>"#,
            px(c[a]),
            py(c[b])
        );
    }
    let regions = mbp
        .regions
        .iter()
        .flatten()
        .filter(|r| r.built().is_some())
        .count();
    let _ = writeln!(
        out,
        r#"<text x="{MARGIN}" y="{:.0}" font-size="12">{} regions ({}), {} cells, {} proxies, {} out of bounds; horizontal {}, vertical {}</text>"#,
        height - 14.0,
        regions,
        if mbp.auto { "derived" } else { "added" },
        mbp.cells.len() - 1,
        s.len(),
        mbp.cells.get(OUT).len(),
        name(a),
        name(b)
    );
    out.push_str("</svg>\n");
    out
}

fn centre(b: &Aabb) -> [f64; 3] {
    std::array::from_fn(|i| 0.5 * (f64::from(b.min[i]) + f64::from(b.max[i])))
}
