//! Keeping a tree tight: the refit of what changed, the partial rebuild of the changed top
//! (Jolt's, which rebuilds the changed nodes down to depth 5 from the subtrees below them), the
//! full rebuilds (`optimize`, and the fast one updates use), and [`Quality`], which decides
//! when a rebuild pays.

use super::build::{Builder, Unit};
use super::node::{LANES, NONE, REFIT};
use super::tree::{loc_lane, loc_node, Loc, Tree};
use crate::store::Store;

impl Tree {
    /// Brings the boxes of nodes up to date below every node marked for refit (every node
    /// when `bulk`, which also sets the dirty bits of changed proxies' lanes from the store),
    /// children before parents, and passes the dirty bits up. Proxies' lanes were written when
    /// they moved; counts were kept by removals; heights stay upper bounds.
    pub(crate) fn refit(&mut self, store: &Store, bulk: bool, order: &mut Vec<u32>) {
        order.clear();
        if self.root == NONE {
            return;
        }
        if bulk && self.ordered {
            // Children after parents in memory: one backward pass, streaming.
            for n in (0..self.nodes.len() as u32).rev() {
                if !self.is_free(n) {
                    self.refit_node(store, n, true);
                }
            }
            return;
        }
        // Pre-order over the marked nodes; reversed, every node comes after its descendants.
        order.push(self.root);
        let mut i = 0;
        while i < order.len() {
            let node = &self.nodes[order[i] as usize];
            for lane in 0..LANES {
                let c = node.child[lane];
                if c.is_node() && (bulk || self.nodes[c.index() as usize].flags & REFIT != 0) {
                    order.push(c.index());
                }
            }
            i += 1;
        }
        for k in (0..order.len()).rev() {
            self.refit_node(store, order[k], bulk);
        }
    }

    /// Refits node `n` (whose children are done): in bulk, sets the dirty bits of its
    /// changed proxies from the store; then writes its box and dirty bit into its parent.
    /// (Reading the moved proxies' boxes here, prefetched, instead of writing them into their
    /// lanes as they come, measured no faster.)
    #[inline]
    fn refit_node(&mut self, store: &Store, n: u32, bulk: bool) {
        let node = &mut self.nodes[n as usize];
        node.flags &= !REFIT;
        if bulk {
            // Every proxy lane's bit is set afresh (node lanes' bits were just written by the
            // children), so bits left from earlier updates do not matter. The store's flags
            // are a byte per slot: they stay in cache, unlike the nodes.
            let mut dirty = node.dirty & node.node_lanes() as u8;
            for lane in 0..LANES {
                let c = node.child[lane];
                if c.is_proxy() && store.is_dirty(c.index() as usize) {
                    dirty |= 1 << lane;
                }
            }
            node.dirty = dirty;
        }
        let (parent, union, dirty) = (node.parent, node.union(), node.dirty != 0);
        if parent != NONE {
            let pn = &mut self.nodes[loc_node(parent) as usize];
            let pl = loc_lane(parent);
            pn.set_lane_box(pl, &union);
            pn.dirty = (pn.dirty & !(1 << pl)) | (u8::from(dirty) << pl);
        }
    }

    /// Clears the dirty bits along the marked paths (after an update that marked paths; a bulk
    /// refit rewrites every bit and needs no clearing).
    pub(crate) fn clear_marks(&mut self, stack: &mut Vec<u32>) {
        stack.clear();
        if self.root == NONE {
            return;
        }
        stack.push(self.root);
        while let Some(n) = stack.pop() {
            let node = &mut self.nodes[n as usize];
            let mut dirty = std::mem::take(&mut node.dirty);
            while dirty != 0 {
                let c = node.child[dirty.trailing_zeros() as usize];
                dirty &= dirty - 1;
                if c.is_node() {
                    stack.push(c.index());
                }
            }
        }
    }

    /// Appends a unit for every proxy below node `n`.
    pub(crate) fn collect_proxies(&self, n: u32, units: &mut Vec<Unit>, stack: &mut Vec<u32>) {
        stack.clear();
        stack.push(n);
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            for lane in 0..LANES {
                let c = node.child[lane];
                if c.is_node() {
                    stack.push(c.index());
                } else if c.is_proxy() {
                    units.push(Unit {
                        bounds: node.lane_box(lane),
                        child: c,
                        count: 1,
                    });
                }
            }
        }
    }

    /// Rebuilds the whole tree from its proxies (and `extra` ones to add), in a fresh arena
    /// laid out depth-first. Proxies' boxes are read from the store: exact even for proxies
    /// moved since the last update.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rebuild_all(
        &mut self,
        store: &Store,
        locs: &mut [Loc],
        builder: &mut Builder,
        units: &mut Vec<Unit>,
        extra: &[u32],
        stack: &mut Vec<u32>,
    ) {
        units.clear();
        if self.root != NONE {
            self.collect_proxies(self.root, units, stack);
        }
        for u in units.iter_mut() {
            u.bounds = *store.aabb_at(u.child.index() as usize);
        }
        units.extend(extra.iter().map(|&s| Unit::proxy(store, s)));
        let proxies = units.len();
        self.clear();
        self.proxies = proxies;
        if units.is_empty() {
            return;
        }
        self.nodes.reserve(proxies / 2 + 1);
        self.root = builder.build(self, store, locs, units);
    }

    /// Rebuilds the tree with the fast (Morton) build from `slots`, the proxies it must hold
    /// now, with their current boxes: what an update does instead of moving every proxy and
    /// refitting, once refitting has let a tree everything moves in grow loose.
    pub(crate) fn rebuild_fast(
        &mut self,
        store: &Store,
        locs: &mut [Loc],
        builder: &mut Builder,
        units: &mut Vec<Unit>,
        slots: impl Iterator<Item = u32>,
    ) {
        units.clear();
        units.extend(slots.map(|s| Unit::proxy(store, s)));
        self.reset();
        self.proxies = units.len();
        if units.is_empty() {
            self.clear();
            return;
        }
        self.root = builder.build_fast(self, store, locs, units);
    }

    /// Jolt's partial rebuild, for an update in which much of the tree changed (then every
    /// node near the root has): the nodes above depth `depth` are taken apart and the top of
    /// the tree is built again, by SAH, from what hangs below them: proxies, and whole
    /// subtrees kept as they are. Returns the number of units the new top was built from (0
    /// when nothing needed it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rebuild_top(
        &mut self,
        store: &Store,
        locs: &mut [Loc],
        builder: &mut Builder,
        units: &mut Vec<Unit>,
        opened: &mut Vec<(u32, u32)>,
        depth: u32,
    ) -> usize {
        if self.root == NONE || depth == 0 {
            return 0;
        }
        units.clear();
        opened.clear();
        opened.push((self.root, 0));
        let mut i = 0;
        while i < opened.len() {
            let (n, d) = opened[i];
            let node = self.nodes[n as usize];
            for lane in 0..LANES {
                let c = node.child[lane];
                if c.is_proxy() {
                    units.push(Unit {
                        bounds: node.lane_box(lane),
                        child: c,
                        count: 1,
                    });
                } else if c.is_node() {
                    let child = &mut self.nodes[c.index() as usize];
                    if d + 1 < depth {
                        opened.push((c.index(), d + 1));
                    } else {
                        child.parent = NONE;
                        units.push(Unit {
                            bounds: node.lane_box(lane),
                            child: c,
                            count: child.count,
                        });
                    }
                }
            }
            i += 1;
        }
        if opened.len() == 1 && units.len() <= LANES {
            // Only the root was open: nothing to rebuild. Relink what was detached.
            let root = self.root;
            for lane in 0..LANES {
                let c = self.nodes[root as usize].child[lane];
                if c.is_node() {
                    self.nodes[c.index() as usize].parent = super::tree::loc(root, lane);
                }
            }
            return 0;
        }
        for &(n, _) in opened.iter() {
            self.release(n);
        }
        self.sort_free();
        self.root = builder.build(self, store, locs, units);
        units.len()
    }
}

/// Walks after a build that set a tree's baseline cost (the first one, on the very boxes the
/// tree was built for, is left out: it flatters the tree).
const BASELINE_WALKS: u32 = 4;

/// How much a tree's walks have cost beyond what they cost after its last build, and whether
/// rebuilding has been paying. Refits keep a tree exact but not good: proxies that drift apart
/// stretch the nodes they share, and with everything drifting (the uniform scene) the walk
/// costs 4x more after 100 frames, 230x after 600. But a rebuild is not always better: in
/// Jolt's grid scene (cubes oscillating about a lattice) the tree built on the lattice beats
/// any tree rebuilt while the cubes are off it. So each rebuild is checked against the cost
/// just before it, and one that did not pay makes the next one wait twice as long. Only
/// counts enter (never clocks), so rebuilds, and with them the order of pairs, are the same
/// on every run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Quality {
    /// Which kind of walk the figures are for: queries from a few changed proxies (true) or
    /// simultaneous walks. Their costs are not comparable.
    sparse: bool,
    /// Lane tests per changed proxy after the last build; `None` while being measured.
    baseline: Option<f64>,
    /// Walks seen since the last build (or change of kind), and their summed cost.
    walks: u32,
    sum: f64,
    /// Lane tests beyond the baseline since then (walks below it count against).
    excess: f64,
    /// Recent cost per changed proxy, smoothed.
    recent: f64,
    /// The recent cost when the tree was last rebuilt, until the rebuild is judged.
    before: Option<f64>,
    /// How many times a rebuild's price the excess must reach: doubles after a rebuild that
    /// did not pay, halves after one that did.
    penalty: f64,
    /// Proxies in the tree at its last build.
    built: usize,
}

impl Default for Quality {
    fn default() -> Self {
        Self {
            sparse: false,
            baseline: None,
            walks: 0,
            sum: 0.0,
            excess: 0.0,
            recent: 0.0,
            before: None,
            penalty: 1.0,
            built: 0,
        }
    }
}

impl Quality {
    /// The record of a tree just rebuilt over `proxies`; the history of rebuilds carries over.
    pub(super) fn rebuilt(&self, proxies: usize) -> Self {
        Self {
            sparse: self.sparse,
            before: (self.recent > 0.0).then_some(self.recent),
            penalty: self.penalty,
            built: proxies,
            ..Self::default()
        }
    }

    /// Whether a tree of `proxies` has grown or shrunk so much since its last build that
    /// insertions (R-tree descents, good but not SAH-good) or removals (underfull nodes) make
    /// up too much of it. Rebuilding at +25% costs O(1) per insertion over time.
    pub(super) fn outgrown(&self, proxies: usize) -> bool {
        proxies > self.built + self.built / 4 + 64 || proxies < self.built / 2
    }

    /// Records walks of `tests` lane tests (by queries when `sparse`) for `changed` changed
    /// proxies.
    pub(super) fn observe(&mut self, sparse: bool, tests: u64, changed: usize) {
        if changed == 0 {
            return;
        }
        if sparse != self.sparse {
            // A different kind of walk: measure its baseline afresh.
            self.sparse = sparse;
            self.baseline = None;
            self.walks = 0;
            self.sum = 0.0;
            self.recent = 0.0;
        }
        let per = tests as f64 / changed as f64;
        self.recent = if self.recent > 0.0 {
            0.75 * self.recent + 0.25 * per
        } else {
            per
        };
        let Some(b) = self.baseline else {
            self.walks += 1;
            if self.walks > 1 {
                self.sum += per;
            }
            if self.walks > BASELINE_WALKS {
                let b = self.sum / f64::from(BASELINE_WALKS);
                self.baseline = Some(b);
                if let Some(before) = self.before.take() {
                    // A rebuild that saved under 5% did not pay for itself.
                    self.penalty = if b > 0.95 * before {
                        (self.penalty * 2.0).min(1024.0)
                    } else {
                        (self.penalty / 2.0).max(1.0)
                    };
                }
            }
            return;
        };
        // Signed, floored at zero: a walk cheaper than the baseline pays back, so that noise
        // around a tree that does not degrade never adds up.
        self.excess = (self.excess + tests as f64 - b * changed as f64).max(0.0);
    }

    /// Whether the extra cost of the walks since the last build has passed what rebuilding a
    /// tree of `proxies` costs (`cost` tests per proxy, times the penalty): then the rebuild
    /// pays for itself.
    pub(super) fn wants_rebuild(&self, proxies: usize, cost: f64) -> bool {
        self.excess > cost * self.penalty * proxies as f64
    }
}
