//! `bplab tree`: builds a scene into a [`QuadTree`], runs it, and writes the trees as Graphviz
//! DOT (Jolt's `JPH_DUMP_BROADPHASE_TREE`), with the figures that say whether a tree is good:
//! depth, nodes, fill, rebuilds, and the work of box probes.

use std::fmt::Write;
use std::ops::ControlFlow;

use broadphase::{Aabb, BroadPhase, ChildDump, Config, Error, LayerMask, QuadTree, TreeDump};

use crate::scenes::{Scene, SceneKind};

/// What to build and dump.
#[derive(Clone, Debug)]
pub struct TreeOptions {
    /// The scene.
    pub scene: SceneKind,
    /// Objects in the scene.
    pub n: usize,
    /// The scene's seed.
    pub seed: u64,
    /// Insert the boxes one `insert` call at a time (Jolt's deep-chain case) rather than as
    /// one `insert_batch`.
    pub one_by_one: bool,
    /// Frames to run after the first update, before dumping.
    pub frames: usize,
    /// Box probes (half-size 5, spread over the scene's bounds) whose work is reported.
    pub probes: usize,
}

/// Builds and runs the tree; returns the DOT graph and a report of its figures.
///
/// # Errors
/// When the scene hands the broad phase a box it rejects (a scene bug).
pub fn tree(opts: &TreeOptions) -> Result<(String, String), Error> {
    let mut scene = Scene::new(opts.scene, opts.n, opts.seed);
    let mut qt = QuadTree::new(Config::default());
    let initial = scene.initial();
    let mut ids = if opts.one_by_one {
        initial
            .iter()
            .map(|&(aabb, desc)| qt.insert(aabb, desc))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        qt.insert_batch(&initial)?
    };
    qt.update()?;
    let mut report = String::new();
    let built = if opts.one_by_one {
        "one by one"
    } else {
        "as one batch"
    };
    let _ = writeln!(
        report,
        "{} boxes of `{}` inserted {built}: depth {}, {} nodes",
        initial.len(),
        opts.scene,
        qt.depth(),
        qt.node_count()
    );
    let mut feeder = crate::run::Feeder::default();
    for _ in 0..opts.frames {
        feeder.apply(&mut qt, &mut ids, &scene.step())?;
        qt.update()?;
    }
    let stats = qt.stats();
    let _ = writeln!(
        report,
        "after {} frames: {} proxies, {} pairs",
        opts.frames, stats.proxies, stats.pairs
    );
    for (name, value) in stats.figures.counters() {
        let _ = writeln!(report, "  {name:<22} {value}");
    }
    if opts.probes > 0 {
        let probes = probe_boxes(&scene, opts.probes);
        let (mut nodes, mut proxies, mut hits) = (0u64, 0u64, 0u64);
        for probe in &probes {
            let s = qt.probe_aabb(*probe, LayerMask::ALL, &mut |_| ControlFlow::Continue(()))?;
            nodes += s.nodes_visited;
            proxies += s.proxies_visited;
            hits += s.hits;
        }
        let per_hit = |x: u64| x as f64 / hits.max(1) as f64;
        let _ = writeln!(
            report,
            "{} probes of ±5: {hits} hits, {nodes} nodes and {proxies} proxies visited \
             ({:.2} nodes and {:.2} proxies per hit)",
            probes.len(),
            per_hit(nodes),
            per_hit(proxies)
        );
    }
    Ok((dot(&qt.dump()), report))
}

fn fmt_box(b: &Aabb) -> String {
    format!(
        "[{:.3}, {:.3}, {:.3}] .. [{:.3}, {:.3}, {:.3}]",
        b.min[0], b.min[1], b.min[2], b.max[0], b.max[1], b.max[2]
    )
}

/// The trees as a Graphviz DOT graph: one cluster per tree, a record per node listing its
/// children's boxes, an ellipse per proxy. Proxies changed since the last update, and the
/// nodes above them, are drawn red: what the next update will refit and pair again.
///
/// Render it with `dot -Tsvg tree.dot -o tree.svg`.
pub fn dot(trees: &[TreeDump]) -> String {
    let colour = |changed: bool| if changed { "red" } else { "black" };
    let mut out = String::from("digraph quadtree {\n  node [fontname=\"monospace\"];\n");
    for (t, tree) in trees.iter().enumerate() {
        let kind = if tree.fixed { "fixed" } else { "dynamic" };
        let _ = writeln!(
            out,
            "  subgraph cluster_{t} {{\n    label=\"tree {t}: {kind}, layer group {}, \
             {} proxies, {} nodes, depth {}\";",
            tree.layer_group,
            tree.proxies,
            tree.nodes.len(),
            tree.depth
        );
        for node in &tree.nodes {
            let n = node.index;
            let mut label = format!(
                "node {n} | {} proxies, height {}",
                node.proxies, node.height
            );
            for (lane, (bounds, _)) in node.lanes.iter().enumerate() {
                let _ = write!(label, " | <l{lane}> {}", fmt_box(bounds));
            }
            let _ = writeln!(
                out,
                "    t{t}n{n} [shape=record, color={}, label=\"{{{label}}}\"];",
                colour(node.changed)
            );
            for (lane, (_, child)) in node.lanes.iter().enumerate() {
                match *child {
                    ChildDump::Node(c) => {
                        let _ = writeln!(out, "    t{t}n{n}:l{lane} -> t{t}n{c};");
                    }
                    ChildDump::Proxy { id, changed } => {
                        let s = id.index();
                        let _ = writeln!(
                            out,
                            "    p{s} [label=\"{id}\", color={}];\n    t{t}n{n}:l{lane} -> p{s};",
                            colour(changed)
                        );
                    }
                }
            }
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

/// `count` boxes of half-size 5 at places spread over the scene's bounds, from a fixed
/// sequence (the same probes for the same scene).
fn probe_boxes(scene: &Scene, count: usize) -> Vec<Aabb> {
    let Some(bounds) = scene.bounds() else {
        return Vec::new();
    };
    // A low-discrepancy sequence (the R3 sequence): even cover, no generator needed.
    const G: [f64; 3] = [
        0.819_172_513_396_164_4,
        0.671_043_606_703_789_2,
        0.549_700_477_901_970_6,
    ];
    (0..count)
        .map(|k| {
            let mut c = [0.0f32; 3];
            for a in 0..3 {
                let t = (0.5 + G[a] * (k + 1) as f64).fract() as f32;
                c[a] = bounds.min[a] + t * (bounds.max[a] - bounds.min[a]);
            }
            Aabb::new(c.map(|x| x - 5.0), c.map(|x| x + 5.0))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_by_one_insertion_stays_as_shallow_as_a_batch() {
        let mut depths = Vec::new();
        for one_by_one in [false, true] {
            let opts = TreeOptions {
                scene: SceneKind::Grid,
                n: 5_000,
                seed: 1,
                one_by_one,
                frames: 2,
                probes: 50,
            };
            let (dot, report) = tree(&opts).expect("valid scene");
            assert!(dot.starts_with("digraph quadtree"), "{dot}");
            assert!(dot.trim_end().ends_with('}'));
            assert!(report.contains("probes of ±5"), "{report}");
            let depth: usize = report
                .split("depth ")
                .nth(1)
                .and_then(|r| r.split(',').next())
                .and_then(|d| d.parse().ok())
                .expect("the report gives the depth");
            depths.push(depth);
        }
        // Jolt's one-by-one chain would be thousands deep here.
        assert!(depths[1] <= 2 * depths[0], "depths {depths:?}");
    }

    /// A moved proxy and the nodes above it are drawn red until the next update.
    #[test]
    fn changed_proxies_are_drawn_red() -> Result<(), Error> {
        let mut qt = QuadTree::new(Config::default());
        let items: Vec<_> = (0..200)
            .map(|i| {
                let lo = [(i % 10) as f32 * 3.0, (i / 10) as f32 * 3.0, 0.0];
                (
                    Aabb::new(lo, lo.map(|c| c + 1.0)),
                    broadphase::ProxyDesc::dynamic(),
                )
            })
            .collect();
        let ids = qt.insert_batch(&items)?;
        qt.update()?;
        assert!(!dot(&qt.dump()).contains("color=red"));
        qt.set_aabb(ids[7], Aabb::new([100.0; 3], [101.0; 3]))?;
        let graph = dot(&qt.dump());
        assert!(
            graph.contains(&format!("label=\"{}\", color=red", ids[7])),
            "{graph}"
        );
        assert!(graph.contains("color=red, label=\"{node"), "{graph}");
        qt.update()?;
        assert!(!dot(&qt.dump()).contains("color=red"));
        Ok(())
    }
}
