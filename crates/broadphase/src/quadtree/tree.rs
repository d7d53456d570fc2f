//! One tree: its nodes in a growable arena, the links between nodes and proxies, and the small
//! edits everything else is made of (linking a child, removing a proxy, marking a path).

use super::node::{Child, Node, LANES, NONE, REFIT};
use crate::store::Store;
use crate::Aabb;

/// Where a proxy sits: `node << 2 | lane`, or [`NONE`].
pub(crate) type Loc = u32;

#[inline]
pub(crate) fn loc(node: u32, lane: usize) -> Loc {
    (node << 2) | lane as u32
}

#[inline]
pub(crate) fn loc_node(l: Loc) -> u32 {
    l >> 2
}

#[inline]
pub(crate) fn loc_lane(l: Loc) -> usize {
    (l & 3) as usize
}

/// Which proxies changed since the last update: what the dirty bits of the nodes above them
/// are made of (the pair walks follow them). The store knows; a batch prepared away from the
/// broad phase is new throughout.
pub(crate) trait Changed {
    /// Whether the proxy in `slot` changed.
    fn changed(&self, slot: u32) -> bool;
}

impl Changed for Store {
    #[inline]
    fn changed(&self, slot: u32) -> bool {
        self.is_dirty(slot as usize)
    }
}

/// Every proxy is new: a [`PreparedBatch`](super::PreparedBatch)'s subtrees.
pub(crate) struct AllNew;

impl Changed for AllNew {
    #[inline]
    fn changed(&self, _slot: u32) -> bool {
        true
    }
}

/// Flag of a node on the free list (never reached from the root).
const FREE: u8 = 0x80;

/// A 4-wide AABB tree over some of the proxies. The root is always a node (with one to four
/// children) or absent.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tree {
    /// The arena. Indices are stable until a rebuild or a compaction re-lays the tree.
    pub(crate) nodes: Vec<Node>,
    /// Free arena entries.
    free: Vec<u32>,
    /// The root node, or [`NONE`] for an empty tree.
    pub(crate) root: u32,
    /// Proxies in the tree.
    pub(crate) proxies: usize,
    /// Whether every node's index is above its parent's (true after a build into a fresh
    /// arena): then a refit of everything is one backward pass over the arena.
    pub(crate) ordered: bool,
}

impl Tree {
    pub(crate) fn new() -> Self {
        Self {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NONE,
            proxies: 0,
            ordered: true,
        }
    }

    /// Nodes in use.
    #[inline]
    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    #[inline]
    pub(crate) fn is_free(&self, n: u32) -> bool {
        self.nodes[n as usize].flags & FREE != 0
    }

    /// A fresh empty node.
    pub(crate) fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(n) => {
                self.nodes[n as usize] = Node::EMPTY;
                self.ordered = false;
                n
            }
            None => {
                self.nodes.push(Node::EMPTY);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Returns a node to the arena.
    pub(crate) fn release(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        *node = Node::EMPTY;
        node.flags = FREE;
        self.free.push(n);
    }

    /// Drops every node: the tree is empty and holds no memory.
    pub(crate) fn clear(&mut self) {
        self.nodes = Vec::new();
        self.free = Vec::new();
        self.root = NONE;
        self.proxies = 0;
        self.ordered = true;
    }

    /// Drops every node but keeps the arena's memory, for a rebuild.
    pub(crate) fn reset(&mut self) {
        self.nodes.clear();
        self.free.clear();
        self.root = NONE;
        self.proxies = 0;
        self.ordered = true;
    }

    /// Sorts the free list so that the next allocations come in increasing order: a subtree
    /// built from them is laid out roughly depth-first, as traversals read it.
    pub(crate) fn sort_free(&mut self) {
        // Highest first: `alloc` pops from the end.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + self.free.capacity() * 4
    }

    /// Puts `child`, whose box is `bounds`, in `lane` of node `n`, and links it back: a node's
    /// parent field, or a proxy's location. Count, height and dirty bits are the caller's.
    #[inline]
    pub(crate) fn set_child(
        &mut self,
        locs: &mut [Loc],
        n: u32,
        lane: usize,
        child: Child,
        bounds: &Aabb,
    ) {
        let node = &mut self.nodes[n as usize];
        node.child[lane] = child;
        node.set_lane_box(lane, bounds);
        if child.is_node() {
            self.nodes[child.index() as usize].parent = loc(n, lane);
        } else if child.is_proxy() {
            locs[child.index() as usize] = loc(n, lane);
        }
    }

    /// What a child adds to its parent: its proxies, its height and whether it holds a changed
    /// proxy.
    #[inline]
    pub(crate) fn child_info(&self, store: &impl Changed, c: Child) -> (u32, u8, bool) {
        if c.is_node() {
            let n = &self.nodes[c.index() as usize];
            (n.count, n.height, n.dirty != 0)
        } else if c.is_proxy() {
            (1, 0, store.changed(c.index()))
        } else {
            (0, 0, false)
        }
    }

    /// Recomputes node `n`'s count, height and dirty bits from its children.
    pub(crate) fn finish_node(&mut self, store: &impl Changed, n: u32) {
        let (mut count, mut height, mut dirty) = (0u32, 0u8, 0u8);
        for lane in 0..LANES {
            let c = self.nodes[n as usize].child[lane];
            let (k, h, d) = self.child_info(store, c);
            count += k;
            height = height.max(h);
            dirty |= u8::from(d) << lane;
        }
        let node = &mut self.nodes[n as usize];
        node.count = count;
        node.height = height.saturating_add(1);
        node.dirty = dirty;
    }

    /// Marks the path from lane `lane` of node `n` to the root: boxes to refit, and, when
    /// `dirty`, the lanes that lead to a changed proxy.
    pub(crate) fn mark_path(&mut self, mut n: u32, mut lane: usize, dirty: bool) {
        loop {
            let node = &mut self.nodes[n as usize];
            let bit = 1u8 << lane;
            let done = node.flags & REFIT != 0 && (!dirty || node.dirty & bit != 0);
            node.flags |= REFIT;
            if dirty {
                node.dirty |= bit;
            }
            if done || node.parent == NONE {
                return;
            }
            let p = node.parent;
            n = loc_node(p);
            lane = loc_lane(p);
        }
    }

    /// Writes a moved proxy's new box into its lane. Unless `bulk`, also marks the lane dirty
    /// and the path above for refit and pair finding; in bulk, the refit of every node does
    /// that, so that this is only stores: a read of the node here (to set a bit) would wait on
    /// a cache miss per proxy.
    #[inline]
    pub(crate) fn move_proxy(&mut self, l: Loc, aabb: &Aabb, bulk: bool) {
        let (n, lane) = (loc_node(l), loc_lane(l));
        let node = &mut self.nodes[n as usize];
        node.set_lane_box(lane, aabb);
        if !bulk {
            node.dirty |= 1 << lane;
            node.flags |= REFIT;
            let parent = node.parent;
            if parent != NONE {
                self.mark_path(loc_node(parent), loc_lane(parent), true);
            }
        }
    }

    /// Takes the proxy at `l` out of the tree. Counts above it drop by one; nodes left empty
    /// are freed, and a node left with one child is spliced out (the child takes its place).
    /// Unless `bulk` (every node will be refit), the path above is marked for refit.
    pub(crate) fn remove_proxy(&mut self, locs: &mut [Loc], l: Loc, bulk: bool) {
        let (mut n, lane) = (loc_node(l), loc_lane(l));
        let c = self.nodes[n as usize].child[lane];
        if c.is_proxy() {
            locs[c.index() as usize] = NONE;
        }
        self.nodes[n as usize].clear_lane(lane);
        self.proxies -= 1;
        let mut up = n;
        loop {
            let node = &mut self.nodes[up as usize];
            node.count -= 1;
            if node.parent == NONE {
                break;
            }
            up = loc_node(node.parent);
        }
        // Free the nodes this leaves empty.
        while self.nodes[n as usize].len() == 0 {
            let parent = self.nodes[n as usize].parent;
            self.release(n);
            if parent == NONE {
                self.root = NONE;
                return;
            }
            n = loc_node(parent);
            self.nodes[n as usize].clear_lane(loc_lane(parent));
        }
        // A node with a single child costs a level and a node: its child takes its place.
        let node = &self.nodes[n as usize];
        if node.len() == 1 {
            let only = node.occupied().trailing_zeros() as usize;
            let child = node.child[only];
            let bounds = node.lane_box(only);
            let dirty = node.dirty & (1 << only) != 0;
            let parent = node.parent;
            if parent != NONE {
                self.release(n);
                let (p, pl) = (loc_node(parent), loc_lane(parent));
                self.set_child(locs, p, pl, child, &bounds);
                if dirty {
                    self.nodes[p as usize].dirty |= 1 << pl;
                }
                n = p;
            } else if child.is_node() {
                self.release(n);
                self.root = child.index();
                self.nodes[self.root as usize].parent = NONE;
                return;
            }
        }
        if !bulk {
            let parent = self.nodes[n as usize].parent;
            self.nodes[n as usize].flags |= REFIT;
            if parent != NONE {
                self.mark_path(loc_node(parent), loc_lane(parent), false);
            }
        }
    }

    /// Lanes holding a child, from the counts: every proxy fills one lane and every node but
    /// the root one lane of its parent (what [`check`](Self::check) verifies), so no walk is
    /// needed.
    pub(crate) fn used_lanes(&self) -> usize {
        if self.root == NONE {
            return 0;
        }
        self.proxies + self.node_count() - 1
    }

    /// The number of node levels as the root records them: the measured
    /// [`depth`](Self::depth) after a build, possibly more after removals (a subtree that
    /// lost a level does not tell the nodes above it until the next rebuild). O(1).
    pub(crate) fn height(&self) -> usize {
        if self.root == NONE {
            return 0;
        }
        usize::from(self.nodes[self.root as usize].height)
    }

    /// The number of node levels (a root holding only proxies is one level), measured.
    pub(crate) fn depth(&self) -> usize {
        if self.root == NONE {
            return 0;
        }
        let mut deepest = 0;
        let mut stack = vec![(self.root, 1usize)];
        while let Some((n, d)) = stack.pop() {
            deepest = deepest.max(d);
            for c in self.nodes[n as usize].child {
                if c.is_node() {
                    stack.push((c.index(), d + 1));
                }
            }
        }
        deepest
    }

    /// Checks every invariant against `store` as of the last update: links both ways, boxes
    /// exact (a node's lane the union of its child's, a proxy's lane its box unless it changed
    /// since), counts, heights, no refit marks left, every proxy once and `home` naming this
    /// tree (`t`) for it, no node both free and linked. Returns the proxies seen.
    pub(crate) fn check(
        &self,
        store: &Store,
        locs: &[Loc],
        home: &[u8],
        t: u8,
    ) -> Result<usize, String> {
        let fail = |what: String| Err(format!("quadtree: tree {t}: {what}"));
        if self
            .free
            .iter()
            .any(|&n| n as usize >= self.nodes.len() || !self.is_free(n))
        {
            return fail("a node on the free list is not flagged free".into());
        }
        if self.root == NONE {
            if self.proxies != 0 || self.node_count() != 0 {
                return fail(format!("empty, but counts {} proxies", self.proxies));
            }
            return Ok(0);
        }
        if self.nodes[self.root as usize].parent != NONE {
            return fail("the root has a parent".into());
        }
        let mut seen_nodes = 0;
        let mut seen = 0;
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            seen_nodes += 1;
            if seen_nodes > self.nodes.len() {
                return fail("a node is reached twice".into());
            }
            let node = &self.nodes[n as usize];
            if self.is_free(n) {
                return fail(format!("node {n} is free but linked"));
            }
            if node.flags & REFIT != 0 {
                return fail(format!("node {n} is left marked for refit"));
            }
            if node.len() < 1 || (n != self.root && node.len() < 2) {
                return fail(format!("node {n} has {} children", node.len()));
            }
            if n != self.root && self.ordered && loc_node(node.parent) >= n {
                return fail(format!(
                    "node {n} lies before its parent in an ordered arena"
                ));
            }
            let mut count = 0;
            let mut height = 0;
            for lane in 0..LANES {
                let c = node.child[lane];
                let b = node.lane_box(lane);
                if c.is_empty() {
                    if b.min[0] <= b.max[0] {
                        return fail(format!("node {n}'s empty lane {lane} has a box"));
                    }
                } else if c.is_proxy() {
                    let s = c.index() as usize;
                    if s >= store.slot_count() || !store.was_in(s) {
                        return fail(format!("node {n} holds slot {s}, not live at the update"));
                    }
                    if locs.get(s) != Some(&loc(n, lane)) || home.get(s) != Some(&t) {
                        return fail(format!("slot {s}'s recorded place is not node {n}'s lane"));
                    }
                    let want = store.aabb_at(s);
                    let bits = |x: &[f32; 3]| x.map(f32::to_bits);
                    if !store.is_dirty(s)
                        && (bits(&b.min) != bits(&want.min) || bits(&b.max) != bits(&want.max))
                    {
                        return fail(format!("slot {s}'s lane holds {b:?}, its box is {want:?}"));
                    }
                    count += 1;
                    seen += 1;
                } else {
                    let k = c.index();
                    let Some(child) = self.nodes.get(k as usize) else {
                        return fail(format!("node {n} links node {k} outside the arena"));
                    };
                    if child.parent != loc(n, lane) {
                        return fail(format!("node {k}'s parent link is not node {n}"));
                    }
                    if child.union() != b {
                        return fail(format!("node {n}'s lane {lane} does not bound node {k}"));
                    }
                    count += child.count;
                    height = height.max(child.height);
                    stack.push(k);
                }
            }
            if node.count != count {
                return fail(format!("node {n} counts {}, holds {count}", node.count));
            }
            // Heights are upper bounds: removals may lower a subtree without telling the
            // nodes above; rebuilds make them exact again.
            if node.height <= height {
                return fail(format!("node {n}'s height is below its children's"));
            }
        }
        if seen != self.proxies || seen_nodes != self.node_count() {
            return fail(format!(
                "holds {seen} proxies in {seen_nodes} nodes, counts {} in {}",
                self.proxies,
                self.node_count()
            ));
        }
        Ok(seen)
    }
}
