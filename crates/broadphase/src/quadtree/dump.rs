//! The trees as data (Jolt's `JPH_DUMP_BROADPHASE_TREE`, at any moment and without rebuilding
//! anything): what `bplab tree` draws as Graphviz DOT.

use super::node::{Child, LANES, NONE};
use super::tree::Tree;
use super::QuadTree;
use crate::store::Store;
use crate::{Aabb, ProxyId};

/// One tree of a [`QuadTree`] ([`QuadTree::dump`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TreeDump {
    /// Whether the tree holds the fixed proxies of its layer group (else the dynamic ones).
    pub fixed: bool,
    /// The layer group ([`QuadTreeSettings::layer_groups`](crate::QuadTreeSettings)).
    pub layer_group: usize,
    /// Proxies in the tree.
    pub proxies: usize,
    /// Its depth (1 when the root holds proxies only; 0 when empty).
    pub depth: usize,
    /// Its nodes from the root down (pre-order); empty when the tree is.
    pub nodes: Vec<NodeDump>,
}

/// A node of a [`TreeDump`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct NodeDump {
    /// The node's index, which [`ChildDump::Node`] names.
    pub index: u32,
    /// Proxies below it.
    pub proxies: u32,
    /// Its height (1 when all its children are proxies).
    pub height: u32,
    /// Whether a proxy below it changed since the last update: the next update refits this
    /// node and pairs that proxy again.
    pub changed: bool,
    /// Its occupied lanes: each lane's box and child.
    pub lanes: Vec<(Aabb, ChildDump)>,
}

/// What a lane of a [`NodeDump`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildDump {
    /// A node, by [`NodeDump::index`].
    Node(u32),
    /// A proxy, and whether it changed since the last update.
    Proxy {
        /// The proxy.
        id: ProxyId,
        /// Whether it changed since the last update.
        changed: bool,
    },
}

impl QuadTree {
    /// The trees as data: two per layer group (fixed, then dynamic), each node with its
    /// lanes' boxes and children, proxies and nodes above them marked when they changed since
    /// the last update. `bplab tree` draws it as Graphviz DOT.
    ///
    /// ```
    /// use broadphase::{Aabb, BroadPhase, ChildDump, Config, ProxyDesc, QuadTree};
    /// let mut bp = QuadTree::new(Config::default());
    /// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
    /// bp.update()?;
    /// bp.set_aabb(a, Aabb::new([2.0; 3], [3.0; 3]))?;
    /// let dynamic = &bp.dump()[1];
    /// assert_eq!(dynamic.proxies, 1);
    /// assert!(dynamic.nodes[0].changed);
    /// assert!(matches!(dynamic.nodes[0].lanes[0].1, ChildDump::Proxy { id, changed: true } if id == a));
    /// # Ok::<(), broadphase::Error>(())
    /// ```
    #[must_use]
    pub fn dump(&self) -> Vec<TreeDump> {
        self.engine
            .trees
            .iter()
            .enumerate()
            .map(|(t, tree)| TreeDump {
                fixed: t % 2 == 0,
                layer_group: t / 2,
                proxies: tree.proxies,
                depth: tree.depth(),
                nodes: dump_nodes(&self.store, tree),
            })
            .collect()
    }
}

fn dump_nodes(store: &Store, tree: &Tree) -> Vec<NodeDump> {
    if tree.root == NONE {
        return Vec::new();
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
    order
        .iter()
        .map(|&n| {
            let node = &tree.nodes[n as usize];
            let lanes = (0..LANES)
                .filter_map(|lane| {
                    let c = node.child[lane];
                    let child = if c.is_node() {
                        ChildDump::Node(c.index())
                    } else if c.is_proxy() {
                        let s = c.index() as usize;
                        ChildDump::Proxy {
                            id: store.id_at_last_update(s),
                            changed: store.is_dirty(s),
                        }
                    } else {
                        return None;
                    };
                    Some((node.lane_box(lane), child))
                })
                .collect();
            NodeDump {
                index: n,
                proxies: node.count,
                height: u32::from(node.height),
                changed: marked[n as usize],
                lanes,
            }
        })
        .collect()
}

fn changed(store: &Store, c: Child, marked: &[bool]) -> bool {
    if c.is_node() {
        marked[c.index() as usize]
    } else {
        c.is_proxy() && store.is_dirty(c.index() as usize)
    }
}
