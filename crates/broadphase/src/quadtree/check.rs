//! QuadTree's invariants ([`QuadTreeEngine::check`]): every tree's own (links both ways,
//! every lane the exact box of what it holds, counts, heights, each proxy's recorded place the
//! lane holding it), each held proxy in exactly one tree, the one its description asks for,
//! and the persistent pairs' keys sorted.

use super::{QuadTreeEngine, NO_TREE};
use crate::store::Store;

impl QuadTreeEngine {
    pub(super) fn check(&self, store: &Store) -> Result<(), String> {
        let mut total = 0;
        for (t, tree) in self.trees.iter().enumerate() {
            total += tree.check(store, &self.locs, &self.home, t as u8)?;
        }
        let mut held = 0;
        for s in 0..store.slot_count().max(self.home.len()) {
            let home = self.home.get(s).copied().unwrap_or(NO_TREE);
            let was_in = s < store.slot_count() && store.was_in(s);
            if was_in != (home != NO_TREE) {
                return Err(format!(
                    "quadtree: slot {s} is held by the store: {was_in}, in tree {home}"
                ));
            }
            if was_in && !store.is_dirty(s) && home != self.tree_for(store.desc_at(s)) {
                return Err(format!(
                    "quadtree: slot {s} is in tree {home}, its description asks for another"
                ));
            }
            held += usize::from(was_in);
        }
        if total != held {
            return Err(format!(
                "quadtree: the trees hold {total} proxies, {held} are held"
            ));
        }
        crate::brute::check_sorted_keys("quadtree", &self.keys)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, BroadPhase, Config, ProxyDesc, QuadTree};

    /// Enough boxes for a tree of several levels, fixed and dynamic.
    fn live() -> QuadTree {
        let mut bp = QuadTree::new(Config::default());
        for k in 0..60 {
            let lo = [(k % 5) as f32, (k / 5 % 4) as f32, (k / 20) as f32].map(|c| c * 1.5);
            let d = if k % 6 == 0 {
                ProxyDesc::fixed()
            } else {
                ProxyDesc::dynamic()
            };
            assert!(bp.insert(Aabb::new(lo, lo.map(|c| c + 2.0)), d).is_ok());
        }
        assert!(bp.update().is_ok());
        assert!(bp.depth() > 1);
        assert_eq!(bp.check_structure(), Ok(()));
        bp
    }

    /// The root of the dynamic tree, and a lane of it that holds a node.
    fn inner_lane(bp: &QuadTree) -> (usize, u32, usize) {
        let t = bp
            .engine
            .trees
            .iter()
            .position(|t| t.proxies > 20)
            .unwrap_or(1);
        let root = bp.engine.trees[t].root;
        let node = &bp.engine.trees[t].nodes[root as usize];
        let lane = (0..4).find(|&l| node.child[l].is_node()).unwrap_or(0);
        (t, root, lane)
    }

    #[test]
    fn a_node_box_that_misses_its_child_is_caught() {
        let mut bp = live();
        let (t, root, lane) = inner_lane(&bp);
        let node = &mut std::sync::Arc::make_mut(&mut bp.engine.trees[t]).nodes[root as usize];
        let b = node.lane_box(lane);
        node.set_lane_box(lane, &Aabb::new(b.min, b.min));
        bp.assert_broken("does not bound node");
    }

    #[test]
    fn a_wrong_location_is_caught() {
        let mut bp = live();
        bp.engine.locs.swap(1, 2);
        bp.assert_broken("recorded place");
    }

    #[test]
    fn a_miscounted_node_is_caught() {
        let mut bp = live();
        let (t, root, _) = inner_lane(&bp);
        std::sync::Arc::make_mut(&mut bp.engine.trees[t]).nodes[root as usize].count += 1;
        bp.assert_broken("counts");
    }

    #[test]
    fn a_proxy_in_the_wrong_tree_is_caught() {
        let mut bp = live();
        // Slot 0 is fixed: say it lives in the tree of dynamic proxies.
        bp.engine.home[0] += 1;
        bp.assert_broken("recorded place");
    }
}
