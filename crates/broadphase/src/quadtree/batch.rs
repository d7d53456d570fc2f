//! Streaming batches (Jolt's `AddBodiesPrepare` / `AddBodiesFinalize` / `AddBodiesAbort`):
//! a [`PreparedBatch`] is checked and built into one subtree per tree on any thread, with no
//! access to the broad phase; [`QuadTree::commit`](crate::QuadTree::commit) gives its proxies
//! their ids, and the next update links its subtrees in instead of building them; dropping it
//! aborts (nothing happened).

use super::build::{Builder, Unit};
use super::node::{Child, NONE};
use super::tree::{AllNew, Loc, Tree};
use super::{tree_for, QuadTreeSettings};
use crate::filter::check_layer;
use crate::store::Store;
use crate::{Aabb, Error, Layer, ProxyDesc};

/// Proxies checked and built into subtrees away from the broad phase, ready to be committed
/// to a [`QuadTree`](crate::QuadTree) with the same layer groups
/// ([`QuadTreeSettings::layer_groups`]).
///
/// Committing it is [`BroadPhase::insert_batch`](crate::BroadPhase::insert_batch) of the same
/// items (the same ids, and the same events at the next update) without the cost of building
/// their trees: that was done here. Dropping it instead changes nothing.
///
/// ```
/// use broadphase::{Aabb, BroadPhase, Config, PreparedBatch, ProxyDesc, QuadTree, QuadTreeSettings};
///
/// let mut bp = QuadTree::new(Config::default());
/// let ground = bp.insert(Aabb::new([-9.0, -1.0, -9.0], [9.0, 0.0, 9.0]), ProxyDesc::fixed())?;
/// bp.update()?;
/// // A level section, prepared on another thread while the broad phase keeps running.
/// let section = std::thread::spawn(|| {
///     let items: Vec<_> = (0..100)
///         .map(|k| (Aabb::new([k as f32, 0.0, 0.0], [k as f32 + 0.5, 1.0, 1.0]), ProxyDesc::dynamic()))
///         .collect();
///     PreparedBatch::new(&QuadTreeSettings::default(), items)
/// });
/// let ids = bp.commit(section.join().unwrap()?)?;
/// assert_eq!(ids.len(), 100);
/// assert_eq!(bp.update()?.created().len(), 10); // the boxes at x < 9.5 touch the ground
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PreparedBatch {
    items: Vec<(Aabb, ProxyDesc)>,
    /// The layer groups the subtrees were sorted by.
    groups: Vec<crate::LayerMask>,
    parts: Vec<Part>,
}

/// The subtree of the items bound for one tree.
#[derive(Clone, Debug)]
struct Part {
    tree: usize,
    /// Its proxies are numbered by their place in `items`.
    sub: Tree,
    /// The items it holds, and where each sits in `sub`.
    items: Vec<u32>,
    locs: Vec<Loc>,
}

/// A committed batch waiting for the next update: its parts, and the slot each item took.
#[derive(Clone, Debug)]
pub(crate) struct Committed {
    batch: PreparedBatch,
    slots: Vec<u32>,
}

impl PreparedBatch {
    /// Checks `items` and builds them into subtrees for a [`QuadTree`](crate::QuadTree) with
    /// `settings`' layer groups. Runs anywhere: it needs nothing of the broad phase.
    ///
    /// # Errors
    /// [`Error::NonFiniteAabb`], [`Error::InvertedAabb`] or [`Error::InvalidLayer`] for the
    /// first bad item; [`Error::InvalidParameter`] for bad settings.
    pub fn new(settings: &QuadTreeSettings, items: Vec<(Aabb, ProxyDesc)>) -> Result<Self, Error> {
        settings.validate()?;
        for (aabb, desc) in &items {
            aabb.validate()?;
            check_layer(desc.layer)?;
        }
        let group_of = super::group_of(&settings.layer_groups);
        let mut by_tree: Vec<Vec<u32>> = vec![Vec::new(); 2 * settings.layer_groups.len()];
        for (k, (_, desc)) in items.iter().enumerate() {
            by_tree[usize::from(tree_for(&group_of, desc))].push(k as u32);
        }
        let mut builder = Builder::default();
        let mut parts = Vec::new();
        for (tree, members) in by_tree.into_iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let mut units: Vec<Unit> = members
                .iter()
                .enumerate()
                .map(|(i, &k)| Unit {
                    bounds: items[k as usize].0,
                    child: Child::proxy(i as u32),
                    count: 1,
                })
                .collect();
            let mut sub = Tree::new();
            let mut locs = vec![NONE; members.len()];
            sub.root = builder.build(&mut sub, &AllNew, &mut locs, &mut units);
            sub.proxies = members.len();
            parts.push(Part {
                tree,
                sub,
                items: members,
                locs,
            });
        }
        Ok(Self {
            items,
            groups: settings.layer_groups.clone(),
            parts,
        })
    }

    /// The items, in the order their ids are given.
    #[must_use]
    pub fn items(&self) -> &[(Aabb, ProxyDesc)] {
        &self.items
    }

    /// The number of proxies.
    #[must_use]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether it holds no proxy.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The batch committed, its items having taken `slots` (in item order); `None` when it
    /// was prepared for other layer groups than `groups` (its proxies then join as any
    /// insertion does).
    pub(crate) fn committed(
        self,
        groups: &[crate::LayerMask],
        slots: Vec<u32>,
    ) -> Option<Committed> {
        (self.groups == groups).then_some(Committed { batch: self, slots })
    }
}

impl Committed {
    /// The parts bound for tree `t`, with their proxies' slots (item order within the part).
    fn parts(&self, t: usize) -> impl Iterator<Item = &Part> {
        self.batch.parts.iter().filter(move |p| p.tree == t)
    }

    /// Whether it has a part for tree `t`.
    pub(crate) fn goes_to(&self, t: usize) -> bool {
        self.parts(t).next().is_some()
    }

    /// Links the parts bound for tree `t` whose proxies are all still as committed (live,
    /// bound for that tree, with their box) into `tree`, marking their slots in `linked`.
    pub(crate) fn link(
        &self,
        store: &Store,
        group_of: &[u8; Layer::COUNT],
        t: usize,
        tree: &mut Tree,
        locs: &mut [Loc],
        linked: &mut [bool],
    ) {
        for part in self.parts(t) {
            let slots: Vec<u32> = part.items.iter().map(|&k| self.slots[k as usize]).collect();
            let intact = part.items.iter().zip(&slots).all(|(&k, &s)| {
                let s = s as usize;
                store.is_alive(s)
                    && usize::from(tree_for(group_of, store.desc_at(s))) == t
                    && bits(store.aabb_at(s)) == bits(&self.batch.items[k as usize].0)
            });
            if intact {
                tree.adopt(store, locs, part, &slots);
                for &s in &slots {
                    linked[s as usize] = true;
                }
            }
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        let parts: usize = self
            .batch
            .parts
            .iter()
            .map(|p| p.sub.memory_bytes() + (p.items.capacity() + p.locs.capacity()) * 4)
            .sum();
        parts
            + self.batch.items.capacity() * std::mem::size_of::<(Aabb, ProxyDesc)>()
            + self.slots.capacity() * 4
    }
}

/// A box's bits, for an exact comparison.
fn bits(b: &Aabb) -> [u32; 6] {
    let (lo, hi) = (b.min.map(f32::to_bits), b.max.map(f32::to_bits));
    [lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]]
}

impl Tree {
    /// Copies `part`'s subtree into this tree's arena (its proxies renamed by `slots`, their
    /// places written to `locs`) and links it in as a built batch is linked.
    fn adopt(&mut self, store: &Store, locs: &mut [Loc], part: &Part, slots: &[u32]) {
        let sub = &part.sub;
        if sub.root == NONE {
            return;
        }
        if let [slot] = slots {
            // A node of one child may only be a root: a lone proxy goes in as itself.
            let unit = Unit {
                bounds: sub.nodes[sub.root as usize].lane_box(0),
                child: Child::proxy(*slot),
                count: 1,
            };
            self.insert_unit(store, locs, unit);
            self.proxies += 1;
            return;
        }
        let offset = self.nodes.len() as u32;
        self.nodes.reserve(sub.nodes.len());
        for node in &sub.nodes {
            let mut node = *node;
            for c in &mut node.child {
                if c.is_node() {
                    *c = Child::node(c.index() + offset);
                } else if c.is_proxy() {
                    *c = Child::proxy(slots[c.index() as usize]);
                }
            }
            if node.parent != NONE {
                node.parent += offset << 2;
            }
            self.nodes.push(node);
        }
        for (&slot, &l) in slots.iter().zip(&part.locs) {
            locs[slot as usize] = l + (offset << 2);
        }
        self.link_subtree(store, locs, sub.root + offset);
        self.proxies += slots.len();
    }
}
