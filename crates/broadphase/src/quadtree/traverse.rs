//! Queries through the trees: the box walk (used by every query shape through the shared
//! driver, and directly by `query_aabb`), and the ray walk. Walks keep their own stack on the
//! heap when they outgrow a small inline one, so no tree is too deep to query.

use std::ops::ControlFlow;

use super::node::{Node, LANES, NONE};
use super::tree::Tree;
use crate::query::{ray_aabb, Ray};
use crate::Aabb;

/// What a query walk counted: nodes opened and proxies whose box was tested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// Tree nodes opened (each tests its four children at once).
    pub nodes_visited: u64,
    /// Proxies reached in the trees (their boxes were tested with their node).
    pub proxies_visited: u64,
    /// Proxies reported.
    pub hits: u64,
}

/// A depth-first stack: inline for ordinary depths, on the heap beyond.
pub(crate) struct Stack {
    inline: [u32; 64],
    len: usize,
    spill: Vec<u32>,
}

impl Stack {
    pub(crate) fn new() -> Self {
        Self {
            inline: [0; 64],
            len: 0,
            spill: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, v: u32) {
        // Once spilled, stay spilled until the spill is empty: last in, first out.
        if self.spill.is_empty() && self.len < self.inline.len() {
            self.inline[self.len] = v;
            self.len += 1;
        } else {
            self.spill.push(v);
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u32> {
        if let Some(v) = self.spill.pop() {
            return Some(v);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.inline[self.len])
    }
}

impl Tree {
    /// Visits every proxy whose lane overlaps `q`, with the node and lane holding it (whose
    /// box is the proxy's as of the last update); `stats` counts the work.
    #[inline]
    pub(crate) fn walk_box(
        &self,
        q: &Aabb,
        stats: &mut QueryStats,
        mut visit: impl FnMut(u32, &Node, usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.root == NONE {
            return ControlFlow::Continue(());
        }
        let mut stack = Stack::new();
        stack.push(self.root);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            stats.nodes_visited += 1;
            let mut m = node.overlap_mask(q);
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let c = node.child[lane];
                if c.is_node() {
                    // Popped later than it is pushed: start loading it now.
                    self.nodes[c.index() as usize].prefetch();
                    stack.push(c.index());
                } else {
                    stats.proxies_visited += 1;
                    visit(c.index(), node, lane)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Visits every proxy whose lane the ray enters within `max_t`, with its lane's box,
    /// walking down only the nodes it enters (the same slab test as the exact one, so no hit
    /// is culled).
    pub(crate) fn walk_ray(
        &self,
        ray: &Ray,
        max_t: f32,
        visit: &mut dyn FnMut(u32, &Aabb) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if self.root == NONE {
            return ControlFlow::Continue(());
        }
        let mut stack = Stack::new();
        stack.push(self.root);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            for lane in 0..LANES {
                let c = node.child[lane];
                // Empty lanes are skipped by their child, not their box: an inverted box is
                // not a miss for the slab test.
                let b = node.lane_box(lane);
                if c.is_empty() || ray_aabb(ray, max_t, &b).is_none() {
                    continue;
                }
                if c.is_node() {
                    stack.push(c.index());
                } else {
                    visit(c.index(), &b)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_spills_and_comes_back_in_order() {
        let mut s = Stack::new();
        for v in 0..200 {
            s.push(v);
        }
        for v in (0..200).rev() {
            assert_eq!(s.pop(), Some(v));
        }
        assert_eq!(s.pop(), None);
    }
}
