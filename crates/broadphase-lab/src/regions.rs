//! `bplab regions`: lays a scene out in Mbp's regions and draws them (SVG), with each
//! region's population.

use std::fmt::Write;

use broadphase::{Aabb, BroadPhase, Config, Error, Mbp, MbpSettings};

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
    Ok((mbp.regions_svg(), table))
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
