//! `bplab regions`: lays a scene out in Mbp's regions and draws them (SVG), with each
//! region's population.

use std::collections::HashSet;
use std::fmt::Write;

use broadphase::{Aabb, BroadPhase, Config, Error, Mbp, MbpSettings, ProxyId, RegionInfo};

use crate::scenes::{Scene, SceneKind};

/// What to lay out.
#[derive(Clone, Debug)]
pub struct RegionOptions {
    /// The scene.
    pub scene: SceneKind,
    /// Objects in the scene.
    pub n: usize,
    /// The scene's seed.
    pub seed: u64,
    /// Regions per horizontal axis over the scene's bounds; 0: let Mbp derive its regions.
    pub subdivisions: u32,
    /// Outer bounds this much wider than the scene's on each horizontal side (Unreal's
    /// `MBPOuterBounds`), if any.
    pub outer: Option<f32>,
    /// The up axis (0 = x, 1 = y, 2 = z).
    pub up: usize,
    /// Frames to run before drawing.
    pub frames: usize,
}

/// Runs the scene in Mbp and returns the SVG picture and a table of the regions.
///
/// # Errors
/// When the settings are invalid (an up axis above 2).
pub fn regions(opts: &RegionOptions) -> Result<(String, String), Error> {
    let mut scene = Scene::new(opts.scene, opts.n, opts.seed);
    let mut mbp = if opts.subdivisions == 0 {
        Mbp::new(Config::default())
    } else {
        let bounds = scene.bounds().unwrap_or(Aabb::new([0.0; 3], [1.0; 3]));
        let outer_bounds = opts.outer.map(|m| {
            let mut o = bounds;
            for axis in (0..3).filter(|&a| a != opts.up) {
                o.min[axis] -= m;
                o.max[axis] += m;
            }
            o
        });
        let mut settings = MbpSettings::new(bounds, opts.subdivisions);
        settings.outer_bounds = outer_bounds;
        settings.up = opts.up;
        Mbp::with_settings(Config::default(), &settings)?
    };
    let mut ids = mbp.insert_batch(&scene.initial())?;
    mbp.update()?;
    let mut feeder = crate::run::Feeder::default();
    for _ in 0..opts.frames {
        feeder.apply(&mut mbp, &mut ids, &scene.step())?;
        mbp.update()?;
    }
    let mut table = String::new();
    let _ = writeln!(
        table,
        "region      fixed   dynamic  cells  overlaps  bounds"
    );
    for (i, r) in mbp.regions().iter().enumerate() {
        let name =
            r.id.map_or_else(|| format!("derived {i}"), |id| id.to_string());
        let _ = writeln!(
            table,
            "{name:<10} {:>6} {:>9} {:>6}  {:<8}  {:?} .. {:?}",
            r.fixed,
            r.dynamic,
            r.cells,
            if r.overlaps { "yes" } else { "no" },
            r.bounds.min,
            r.bounds.max
        );
    }
    let _ = writeln!(
        table,
        "{} proxies, {} pairs, {} out of bounds",
        mbp.len(),
        mbp.pairs().len(),
        mbp.out_of_bounds().len()
    );
    let proxies: Vec<(ProxyId, Aabb)> = ids
        .iter()
        .filter_map(|&id| mbp.aabb(id).ok().map(|b| (id, b)))
        .collect();
    let picture = Picture {
        regions: &mbp.regions(),
        plane: mbp.plane(),
        derived: mbp.derives_regions(),
        proxies: &proxies,
        out_of_bounds: &mbp.out_of_bounds(),
    };
    Ok((svg(&picture), table))
}

/// What [`svg`] draws: Mbp's regions as data, and the proxies.
pub struct Picture<'a> {
    /// [`Mbp::regions`].
    pub regions: &'a [RegionInfo],
    /// [`Mbp::plane`]: the picture's horizontal and vertical axes.
    pub plane: [usize; 2],
    /// [`Mbp::derives_regions`].
    pub derived: bool,
    /// The live proxies and their boxes.
    pub proxies: &'a [(ProxyId, Aabb)],
    /// [`Mbp::out_of_bounds`].
    pub out_of_bounds: &'a [ProxyId],
}

/// Picture width in pixels (the height follows the aspect ratio).
const WIDTH: f64 = 800.0;
const MARGIN: f64 = 24.0;
/// At most this many proxies are drawn as dots.
const DOTS: usize = 4000;

/// The region layout as an SVG picture, seen along the up axis (derived regions: along the
/// sweep axis): regions shaded by population, their cells, and a sample of the proxies
/// (out-of-bounds ones in red).
pub fn svg(p: &Picture<'_>) -> String {
    let [a, b] = p.plane;
    // The view: every finite region border and every box.
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    let mut grow = |k: usize, x: f32| {
        if x.is_finite() {
            lo[k] = lo[k].min(f64::from(x));
            hi[k] = hi[k].max(f64::from(x));
        }
    };
    for bounds in p
        .regions
        .iter()
        .map(|r| &r.bounds)
        .chain(p.proxies.iter().map(|(_, b)| b))
    {
        for (k, axis) in [(0, a), (1, b)] {
            grow(k, bounds.min[axis]);
            grow(k, bounds.max[axis]);
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
    crate::output::svg_open(&mut out, WIDTH, height);
    let built = || p.regions.iter().filter(|r| r.cells > 0);
    let most = built()
        .map(|r| r.fixed + r.dynamic)
        .max()
        .unwrap_or(0)
        .max(1);
    for (i, r) in p.regions.iter().enumerate() {
        let (x0, x1) = (
            px(f64::from(r.bounds.min[a])),
            px(f64::from(r.bounds.max[a])),
        );
        let (y0, y1) = (
            py(f64::from(r.bounds.max[b])),
            py(f64::from(r.bounds.min[b])),
        );
        let members = r.fixed + r.dynamic;
        let shade = 0.08 + 0.5 * members as f64 / most as f64;
        let _ = writeln!(
            out,
            r##"<rect x="{x0:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="#3b7dd8" fill-opacity="{shade:.2}" stroke="#1d3f6e" stroke-width="1"/>"##,
            (x1 - x0).max(0.5),
            (y1 - y0).max(0.5)
        );
        if r.cells == 0 {
            continue;
        }
        // Cell borders, where the cells cut the picture's axes.
        for &(axis, edge) in &r.cuts {
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
        if x1 - x0 > 40.0 && y1 - y0 > 14.0 {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}">r{i}: {} + {}</text>"#,
                x0 + 3.0,
                y0 + 11.0,
                r.fixed,
                r.dynamic
            );
        }
    }
    // A sample of the proxies, as dots at their centres; out-of-bounds ones in red.
    let outside: HashSet<ProxyId> = p.out_of_bounds.iter().copied().collect();
    let stride = p.proxies.len().div_ceil(DOTS).max(1);
    for (id, bounds) in p.proxies.iter().step_by(stride) {
        let c: [f64; 3] =
            std::array::from_fn(|i| 0.5 * (f64::from(bounds.min[i]) + f64::from(bounds.max[i])));
        let colour = if outside.contains(id) {
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
    let caption = format!(
        "{} regions ({}), {} cells, {} proxies, {} out of bounds; horizontal {}, vertical {}",
        built().count(),
        if p.derived { "derived" } else { "added" },
        p.regions.iter().map(|r| r.cells).sum::<usize>(),
        p.proxies.len(),
        p.out_of_bounds.len(),
        name(a),
        name(b)
    );
    crate::output::svg_close(&mut out, MARGIN, height - 14.0, &caption);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_the_unreal_set_up() {
        let opts = RegionOptions {
            scene: SceneKind::Uniform,
            n: 2000,
            seed: 1,
            subdivisions: 4,
            outer: Some(10.0),
            up: 1,
            frames: 2,
        };
        let (svg, table) = regions(&opts).expect("valid options");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("20 regions (added)"), "{svg}");
        assert!(table.contains("0 out of bounds"), "{table}");
    }
}
