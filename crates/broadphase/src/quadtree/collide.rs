//! Pair finding: a tree against itself, or two trees against each other, walked together.
//!
//! Each step takes two nodes (or one node against itself) and tests every lane of one against
//! the four lanes of the other at once. A pair of lanes is followed only when their boxes
//! overlap *and* one of them leads to a proxy changed since the last update (the nodes' dirty
//! bits): pairs of two unchanged proxies are kept by the pair set without being looked at.
//! So the walk costs what the changed proxies cost, whether they are ten or all of them, and
//! the upper levels are shared by all of them instead of being walked once per moved proxy.
//!
//! Every pair of proxies is met exactly once: in the walk of a tree against itself a pair of
//! distinct lanes is taken once (`a < b`), and two different subtrees are disjoint. So no hash
//! set is needed to deduplicate. Lanes hold the proxies' exact boxes, so the lane test is the
//! contract's overlap test and what is met is reported as is, after the filter.

use super::node::{Node, LANES, NONE};
use super::tree::Tree;
use crate::pairs::pair_key;
use crate::store::Store;
use crate::Aabb;

/// One step of a walk: node `a` of the first tree against node `b` of the second, or against
/// itself when `b` is [`NONE`]. It carries `b`'s box (as its parent's lane holds it) and whether
/// `b` leads to a changed proxy, so that `a`'s lanes can be sifted before `b` is even loaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    a: u32,
    b: u32,
    b_box: Aabb,
    b_dirty: bool,
}

/// A walk of two trees (the same tree twice for a self walk).
pub(crate) struct Walk<'a> {
    ta: &'a Tree,
    tb: &'a Tree,
    store: &'a Store,
    /// Proxy-against-subtree descents (scratch).
    stack: Vec<u32>,
    /// Lane tests made (4 per node visited), for the stats.
    pub(crate) tests: u64,
}

/// Lanes above `lane`.
#[inline(always)]
fn above(lane: usize) -> u32 {
    (0b1111u32 << (lane + 1)) & 0b1111
}

impl<'a> Walk<'a> {
    pub(crate) fn new(ta: &'a Tree, tb: &'a Tree, store: &'a Store) -> Self {
        Self {
            ta,
            tb,
            store,
            stack: Vec::new(),
            tests: 0,
        }
    }

    /// The first step: the roots, when both trees have one.
    pub(crate) fn start(&self, same: bool) -> Option<Step> {
        if self.ta.root == NONE || self.tb.root == NONE {
            return None;
        }
        let root_b = &self.tb.nodes[self.tb.root as usize];
        Some(Step {
            a: self.ta.root,
            b: if same { NONE } else { self.tb.root },
            b_box: root_b.union(),
            b_dirty: root_b.dirty != 0,
        })
    }

    #[inline(always)]
    fn emit(&self, out: &mut Vec<u64>, p: u32, q: u32) {
        if self.store.allows_unless_both_fixed(p, q) {
            out.push(pair_key(p, q));
        }
    }

    /// One step: emits the pairs it meets, pushes the steps below it.
    #[inline]
    pub(crate) fn step(&mut self, s: Step, next: &mut Vec<Step>, out: &mut Vec<u64>) {
        if s.b == NONE {
            self.self_step(s.a, next, out);
        } else {
            self.pair_step(&s, next, out);
        }
    }

    /// Runs `s` and everything below it.
    pub(crate) fn run(&mut self, s: Step, steps: &mut Vec<Step>, out: &mut Vec<u64>) {
        steps.clear();
        steps.push(s);
        while let Some(s) = steps.pop() {
            self.step(s, steps, out);
        }
    }

    fn self_step(&mut self, n: u32, next: &mut Vec<Step>, out: &mut Vec<u64>) {
        let t = self.ta;
        let node = &t.nodes[n as usize];
        let dirty = u32::from(node.dirty);
        let (proxies, nodes) = (node.proxy_lanes(), node.node_lanes());
        let mut lanes = proxies | nodes;
        self.tests += 4 * u64::from(lanes.count_ones());
        while lanes != 0 {
            let a = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let da = dirty >> a & 1 != 0;
            let box_a = node.lane_box(a);
            let mut m = node.overlap_mask(&box_a) & above(a);
            if !da {
                m &= dirty;
            }
            self.dispatch(
                t,
                node,
                a,
                &box_a,
                da,
                t,
                node,
                (proxies, nodes),
                m,
                next,
                out,
            );
            if da && nodes >> a & 1 != 0 {
                let c = node.child[a].index();
                t.nodes[c as usize].prefetch();
                next.push(Step {
                    a: c,
                    b: NONE,
                    b_box: box_a,
                    b_dirty: true,
                });
            }
        }
    }

    fn pair_step(&mut self, s: &Step, next: &mut Vec<Step>, out: &mut Vec<u64>) {
        let (ta, tb) = (self.ta, self.tb);
        let x = &ta.nodes[s.a as usize];
        let dx = u32::from(x.dirty);
        // Only the lanes of `x` that reach `b`'s box can meet `b`'s lanes; and when `b` is
        // unchanged, only the changed ones. Often none: then `b` is never loaded.
        let mut lanes = x.overlap_mask(&s.b_box);
        if !s.b_dirty {
            lanes &= dx;
        }
        self.tests += LANES as u64;
        if lanes == 0 {
            return;
        }
        let y = &tb.nodes[s.b as usize];
        let dy = u32::from(y.dirty);
        let kinds_y = (y.proxy_lanes(), y.node_lanes());
        self.tests += 4 * u64::from(lanes.count_ones());
        while lanes != 0 {
            let a = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let da = dx >> a & 1 != 0;
            let box_a = x.lane_box(a);
            let mut m = y.overlap_mask(&box_a);
            if !da {
                m &= dy;
            }
            self.dispatch(ta, x, a, &box_a, da, tb, y, kinds_y, m, next, out);
        }
    }

    /// Lane `a` of node `x` (box `box_a`, dirty `da`) against the lanes `m` of node `y` (whose
    /// proxy and node lanes are given), which overlap it and of which one side is dirty: proxies against proxies are pairs, a proxy
    /// against a node descends at once, two nodes make a step.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn dispatch(
        &mut self,
        tx: &Tree,
        x: &Node,
        a: usize,
        box_a: &Aabb,
        da: bool,
        ty: &Tree,
        y: &Node,
        (proxies_y, nodes_y): (u32, u32),
        m: u32,
        next: &mut Vec<Step>,
        out: &mut Vec<u64>,
    ) {
        if m == 0 {
            return;
        }
        let ca = x.child[a];
        let (mut mp, mut mn) = (m & proxies_y, m & nodes_y);
        if ca.is_proxy() {
            let p = ca.index();
            while mp != 0 {
                let b = mp.trailing_zeros() as usize;
                mp &= mp - 1;
                self.emit(out, p, y.child[b].index());
            }
            while mn != 0 {
                let b = mn.trailing_zeros() as usize;
                mn &= mn - 1;
                self.proxy_vs(ty, y.child[b].index(), p, box_a, da, out);
            }
        } else {
            let na = ca.index();
            let dy = u32::from(y.dirty);
            while mp != 0 {
                let b = mp.trailing_zeros() as usize;
                mp &= mp - 1;
                let db = dy >> b & 1 != 0;
                self.proxy_vs(tx, na, y.child[b].index(), &y.lane_box(b), db, out);
            }
            if mn != 0 {
                tx.nodes[na as usize].prefetch();
            }
            while mn != 0 {
                let b = mn.trailing_zeros() as usize;
                mn &= mn - 1;
                let nb = y.child[b].index();
                // Not `nb`: the step sifts `na`'s lanes with `nb`'s box first and often
                // never opens `nb`. (Opening the larger of the two first instead, or the
                // smaller, measured 8% and 12% slower.)
                next.push(Step {
                    a: na,
                    b: nb,
                    b_box: y.lane_box(b),
                    b_dirty: dy >> b & 1 != 0,
                });
            }
        }
    }

    /// The proxy `p` (box `bp`) against the subtree of node `n` in `t`: its descent is short
    /// and private, so it runs here rather than through the step list.
    fn proxy_vs(&mut self, t: &Tree, n: u32, p: u32, bp: &Aabb, dp: bool, out: &mut Vec<u64>) {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push(n);
        while let Some(n) = stack.pop() {
            let node: &Node = &t.nodes[n as usize];
            self.tests += LANES as u64;
            let mut m = node.overlap_mask(bp);
            if !dp {
                m &= u32::from(node.dirty);
            }
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                let c = node.child[lane];
                if c.is_node() {
                    t.nodes[c.index() as usize].prefetch();
                    stack.push(c.index());
                } else {
                    self.emit(out, p, c.index());
                }
            }
        }
        self.stack = stack;
    }
}

/// Splits a walk into steps that can run apart: expands steps breadth-first (emitting what the
/// expanded steps meet into `out`) until there are at least `want` of them or none is left.
/// The split depends only on the trees, never on the number of threads, so the concatenated
/// output is the same however the steps are then run.
pub(crate) fn split_walk(
    walk: &mut Walk<'_>,
    first: Step,
    want: usize,
    out: &mut Vec<u64>,
) -> Vec<Step> {
    let mut steps = vec![first];
    let mut next = Vec::new();
    while !steps.is_empty() && steps.len() < want {
        next.clear();
        for &s in &steps {
            walk.step(s, &mut next, out);
        }
        std::mem::swap(&mut steps, &mut next);
    }
    steps
}

/// Pair finding for few changes: each changed proxy of tree `a` (slots `from`) queries tree
/// `b` with its box. When few proxies changed, scattered, a simultaneous walk still opens most
/// node pairs (a leaf with one changed proxy in four pairs with all its neighbours), while a
/// query opens only what the proxy's own small box overlaps: measured on 100,000 sleeping
/// boxes (10% moving), a quarter of the lane tests.
///
/// A pair of two changed proxies is met from both sides (or twice within one tree); it is
/// reported only from its smaller slot, so no hash set is needed. `self_walk` says that `a`
/// and `b` are the same tree. Returns the lane tests made.
pub(crate) fn query_pairs(
    tb: &Tree,
    store: &Store,
    from: &[u32],
    self_walk: bool,
    out: &mut Vec<u64>,
) -> u64 {
    let mut nodes = 0;
    let mut stats = super::QueryStats::default();
    for &p in from {
        let bp = *store.aabb_at(p as usize);
        let _ = tb.walk_box(&bp, &mut stats, |q, _, _| {
            // Within one tree a proxy meets itself; a changed partner reports the pair
            // itself when its slot is the smaller.
            let twice = store.is_dirty(q as usize);
            if q != p && (!twice || p < q) && store.allows_unless_both_fixed(p, q) {
                out.push(pair_key(p, q));
            }
            std::ops::ControlFlow::Continue(())
        });
        nodes += stats.nodes_visited;
        stats.nodes_visited = 0;
    }
    let _ = self_walk;
    nodes * LANES as u64
}
