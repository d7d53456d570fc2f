//! The trees as Graphviz DOT (Jolt's `JPH_DUMP_BROADPHASE_TREE`, at any moment and without
//! rebuilding anything).

use std::fmt::Write;

use super::node::{Child, LANES, NONE};
use super::tree::Tree;
use super::QuadTree;
use crate::store::Store;
use crate::Aabb;

fn fmt_box(b: &Aabb) -> String {
    format!(
        "[{:.3}, {:.3}, {:.3}] .. [{:.3}, {:.3}, {:.3}]",
        b.min[0], b.min[1], b.min[2], b.max[0], b.max[1], b.max[2]
    )
}

impl QuadTree {
    /// The trees as a Graphviz DOT graph: one cluster per tree, a record per node listing its
    /// children's boxes, an ellipse per proxy. Proxies changed since the last update, and the
    /// nodes above them, are drawn red: what the next update will refit and pair again.
    ///
    /// Render it with `dot -Tsvg tree.dot -o tree.svg`.
    #[must_use]
    pub fn dump_dot(&self) -> String {
        let mut out = String::from("digraph quadtree {\n  node [fontname=\"monospace\"];\n");
        for (t, tree) in self.engine.trees.iter().enumerate() {
            let kind = if t % 2 == 0 { "fixed" } else { "dynamic" };
            let _ = writeln!(
                out,
                "  subgraph cluster_{t} {{\n    label=\"tree {t}: {kind}, layer group {}, \
                 {} proxies, {} nodes, depth {}\";",
                t / 2,
                tree.proxies,
                tree.node_count(),
                tree.depth()
            );
            dump_tree(&self.store, t, tree, &mut out);
            out.push_str("  }\n");
        }
        out.push_str("}\n");
        out
    }
}

fn dump_tree(store: &Store, t: usize, tree: &Tree, out: &mut String) {
    if tree.root == NONE {
        return;
    }
    // Pre-order, then reversed: a node is marked when a proxy below it changed.
    let mut order = vec![tree.root];
    let mut i = 0;
    while i < order.len() {
        let node = &tree.nodes[order[i] as usize];
        order.extend(node.child.iter().filter(|c| c.is_node()).map(|c| c.index()));
        i += 1;
    }
    let mut marked = vec![false; tree.nodes.len()];
    for &n in order.iter().rev() {
        let node = &tree.nodes[n as usize];
        marked[n as usize] = node.child.iter().any(|&c| changed(store, c, &marked));
    }
    for &n in &order {
        let node = &tree.nodes[n as usize];
        let colour = if marked[n as usize] { "red" } else { "black" };
        let mut label = format!("node {n} | {} proxies, height {}", node.count, node.height);
        for lane in 0..LANES {
            if !node.child[lane].is_empty() {
                let _ = write!(label, " | <l{lane}> {}", fmt_box(&node.lane_box(lane)));
            }
        }
        let _ = writeln!(
            out,
            "    t{t}n{n} [shape=record, color={colour}, label=\"{{{label}}}\"];"
        );
        for lane in 0..LANES {
            let c = node.child[lane];
            if c.is_node() {
                let _ = writeln!(out, "    t{t}n{n}:l{lane} -> t{t}n{};", c.index());
            } else if c.is_proxy() {
                let s = c.index() as usize;
                let dirty = store.is_dirty(s);
                let _ = writeln!(
                    out,
                    "    p{s} [label=\"{}\", color={}];\n    t{t}n{n}:l{lane} -> p{s};",
                    store.id_at(s),
                    if dirty { "red" } else { "black" }
                );
            }
        }
    }
}

fn changed(store: &Store, c: Child, marked: &[bool]) -> bool {
    if c.is_node() {
        marked[c.index() as usize]
    } else {
        c.is_proxy() && store.is_dirty(c.index() as usize)
    }
}
