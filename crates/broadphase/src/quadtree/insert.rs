//! Linking new proxies and built subtrees into a tree without letting it degenerate.
//!
//! Jolt links every batch, and every single body, as a new child of the root, so a thousand
//! single insertions make a chain a thousand levels deep. Here a unit (a proxy, or a subtree
//! built from a batch) descends from the root into the child whose box grows least, R-tree
//! style, until it reaches the level of its own height; a node that overflows splits in two
//! and hands the new half to its parent, up to the root. The tree therefore only grows taller
//! at the root, by one level for a whole layer of splits: every leaf stays about `log4 n` deep
//! whatever the order of insertion.

use super::build::Unit;
use super::node::{centre, half_area, Child, Node, LANES, NONE};
use super::tree::{loc_lane, loc_node, Loc, Tree};
use crate::store::Store;
use crate::Aabb;

/// A unit with what its new parent must know about it.
#[derive(Clone, Copy, Debug)]
struct Entry {
    unit: Unit,
    height: u8,
    dirty: bool,
}

impl Tree {
    fn entry(&self, store: &Store, unit: Unit) -> Entry {
        let (_, height, dirty) = self.child_info(store, unit.child);
        Entry {
            unit,
            height,
            dirty,
        }
    }

    /// Links `unit` (a proxy, or the root of a subtree whose parent is unset) into the tree.
    pub(crate) fn insert_unit(&mut self, store: &Store, locs: &mut [Loc], unit: Unit) {
        let e = self.entry(store, unit);
        if self.root == NONE {
            let r = self.alloc();
            self.set_child(locs, r, 0, unit.child, &unit.bounds);
            self.finish_node(store, r);
            self.root = r;
            return;
        }
        // Descend to the level of the unit's height, growing the boxes on the way: they stay
        // exact, since the unit ends up below each lane taken.
        let mut n = self.root;
        loop {
            let node = &mut self.nodes[n as usize];
            node.count += unit.count;
            if node.height <= e.height + 1 {
                break;
            }
            let Some(lane) = best_lane(node, &unit.bounds) else {
                break;
            };
            let grown = node.lane_box(lane).union(&unit.bounds);
            node.set_lane_box(lane, &grown);
            if e.dirty {
                node.dirty |= 1 << lane;
            }
            n = node.child[lane].index();
        }
        self.add_entry(store, locs, n, e);
    }

    /// Adds `e` as a child of node `n` (whose count already includes it), splitting `n`, and
    /// then its ancestors, as long as they overflow.
    fn add_entry(&mut self, store: &Store, locs: &mut [Loc], mut n: u32, mut e: Entry) {
        loop {
            if let Some(lane) = self.nodes[n as usize].free_lane() {
                self.set_child(locs, n, lane, e.unit.child, &e.unit.bounds);
                let node = &mut self.nodes[n as usize];
                if e.dirty {
                    node.dirty |= 1 << lane;
                }
                if node.height < e.height + 1 {
                    node.height = e.height + 1;
                    self.raise_heights(n);
                }
                return;
            }
            // Five children for four lanes: split into `n` and a new sibling.
            let sibling = self.split(store, locs, n, e);
            self.raise_heights(n);
            let parent = self.nodes[n as usize].parent;
            let (n_box, n_dirty) = {
                let node = &self.nodes[n as usize];
                (node.union(), node.dirty != 0)
            };
            let s = &self.nodes[sibling as usize];
            let s_entry = Entry {
                unit: Unit {
                    bounds: s.union(),
                    child: Child::node(sibling),
                    count: s.count,
                },
                height: s.height,
                dirty: s.dirty != 0,
            };
            if parent == NONE {
                // The root split: a new root over the two halves. The only way the tree grows
                // taller.
                let r = self.alloc();
                self.ordered = false;
                self.set_child(locs, r, 0, Child::node(n), &n_box);
                self.set_child(locs, r, 1, Child::node(sibling), &s_entry.unit.bounds);
                self.finish_node(store, r);
                self.root = r;
                return;
            }
            // The parent's lane for `n` shrinks to what stayed; the sibling goes beside it. The
            // parent's count already covers both.
            let (p, pl) = (loc_node(parent), loc_lane(parent));
            let pn = &mut self.nodes[p as usize];
            pn.set_lane_box(pl, &n_box);
            if n_dirty {
                pn.dirty |= 1 << pl;
            } else {
                pn.dirty &= !(1 << pl);
            }
            n = p;
            e = s_entry;
        }
    }

    /// After node `n`'s height grew, raises its ancestors' heights to match.
    fn raise_heights(&mut self, mut n: u32) {
        loop {
            let node = &self.nodes[n as usize];
            let (h, parent) = (node.height, node.parent);
            if parent == NONE {
                return;
            }
            let p = &mut self.nodes[loc_node(parent) as usize];
            if p.height > h {
                return;
            }
            p.height = h + 1;
            n = loc_node(parent);
        }
    }

    /// Splits the four children of `n` plus `extra` between `n` and a new node, by the
    /// cheaper of the 2 | 3 and 3 | 2 splits along the axis where their centres spread most.
    /// Returns the new node, finished; `n` is finished too.
    fn split(&mut self, store: &Store, locs: &mut [Loc], n: u32, extra: Entry) -> u32 {
        let node: Node = self.nodes[n as usize];
        let mut all = [extra; LANES + 1];
        for lane in 0..LANES {
            let c = node.child[lane];
            let (count, height, _) = self.child_info(store, c);
            all[lane] = Entry {
                unit: Unit {
                    bounds: node.lane_box(lane),
                    child: c,
                    count,
                },
                height,
                dirty: node.dirty & (1 << lane) != 0,
            };
        }
        let spread = |k: usize| {
            let (lo, hi) = all
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), e| {
                    let c = centre(&e.unit.bounds, k);
                    (lo.min(c), hi.max(c))
                });
            f64::from(hi) - f64::from(lo)
        };
        let axis = (0..3).fold(0, |best, k| if spread(k) > spread(best) { k } else { best });
        all.sort_by(|a, b| centre(&a.unit.bounds, axis).total_cmp(&centre(&b.unit.bounds, axis)));
        let cost = |group: &[Entry]| {
            let b = group
                .iter()
                .skip(1)
                .fold(group[0].unit.bounds, |b, e| b.union(&e.unit.bounds));
            half_area(&b) * group.iter().map(|e| f64::from(e.unit.count)).sum::<f64>()
        };
        let at = if cost(&all[..2]) + cost(&all[2..]) <= cost(&all[..3]) + cost(&all[3..]) {
            2
        } else {
            3
        };
        let sibling = self.alloc();
        // Children move to the new node, which may lie after them in the arena.
        self.ordered = false;
        {
            let keep = &mut self.nodes[n as usize];
            for lane in 0..LANES {
                keep.clear_lane(lane);
            }
        }
        for (i, e) in all.iter().enumerate() {
            let (target, lane) = if i < at { (n, i) } else { (sibling, i - at) };
            self.set_child(locs, target, lane, e.unit.child, &e.unit.bounds);
        }
        self.finish_node(store, n);
        self.finish_node(store, sibling);
        sibling
    }

    /// Links a subtree freshly built from a batch (root `r`). A subtree whose box is much
    /// larger than the nodes at the level it would join (a batch scattered over the world,
    /// say) is taken apart, and its children linked one by one, down to single proxies if
    /// need be; a compact one (a new part of a level) is linked whole.
    pub(crate) fn link_subtree(&mut self, store: &Store, locs: &mut [Loc], r: u32) {
        if self.root == NONE {
            self.root = r;
            return;
        }
        let root_area = half_area(&self.nodes[self.root as usize].union());
        let tree_height = i32::from(self.nodes[self.root as usize].height);
        let mut stack = vec![r];
        while let Some(s) = stack.pop() {
            let node = self.nodes[s as usize];
            let unit = Unit {
                bounds: node.union(),
                child: Child::node(s),
                count: node.count,
            };
            // A lane at depth d of a balanced tree over the root's volume has about
            // 4^(-2d/3) of the root's area; the subtree would become a lane at depth
            // `tree_height - height`.
            let depth = (tree_height - i32::from(node.height)).max(0);
            let expected = root_area * 4f64.powf(-2.0 * f64::from(depth) / 3.0);
            if half_area(&unit.bounds) <= 4.0 * expected {
                self.insert_unit(store, locs, unit);
                continue;
            }
            self.release(s);
            for lane in 0..LANES {
                let c = node.child[lane];
                if c.is_node() {
                    self.nodes[c.index() as usize].parent = NONE;
                    stack.push(c.index());
                } else if c.is_proxy() {
                    let u = Unit {
                        bounds: node.lane_box(lane),
                        child: c,
                        count: 1,
                    };
                    self.insert_unit(store, locs, u);
                }
            }
        }
    }
}

/// The node lane whose box grows least (by area) to take `b`, the smaller box on ties.
fn best_lane(node: &Node, b: &Aabb) -> Option<usize> {
    let mut best: Option<(f64, f64, usize)> = None;
    for lane in 0..LANES {
        if !node.child[lane].is_node() {
            continue;
        }
        let lb = node.lane_box(lane);
        let area = half_area(&lb);
        let growth = half_area(&lb.union(b)) - area;
        if best.is_none_or(|(g, a, _)| growth < g || (growth == g && area < a)) {
            best = Some((growth, area, lane));
        }
    }
    best.map(|(_, _, lane)| lane)
}
