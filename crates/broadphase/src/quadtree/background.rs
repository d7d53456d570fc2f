//! Rebuilding a tree on another thread while updates go on
//! ([`QuadTreeSettings::background_rebuild`](super::QuadTreeSettings::background_rebuild)).
//!
//! When a tree's cost says a rebuild pays, the update refits it as usual instead, and at its
//! end hands the tree (shared, as snapshots share it: no copy) to a thread that collects its
//! proxies with their boxes and builds a fresh tree over them (the Morton build an in-place
//! rebuild uses). The next updates note which proxies they change. [`UPDATES`] updates later
//! (a count, not a clock, so that the swap falls on the same update everywhere) the thread is
//! joined, waiting for it if it must, and the fresh tree catches up before that update starts:
//! each proxy changed since leaves it, takes its box as the running tree holds it, or joins
//! it, and one bulk refit makes every node exact. The fresh tree then replaces the running one
//! and the update proceeds as usual. Pairs are found by exact walks whatever the trees' shape,
//! so the events are those of an in-place rebuild, or of none.

use std::sync::Arc;
use std::thread::JoinHandle;

use super::build::{Builder, Unit};
use super::node::{Child, NONE};
use super::tree::{loc_lane, loc_node, AllNew, Loc, Tree};
use crate::store::Store;

/// Updates between the one that starts a build and the one that swaps it in.
pub(crate) const UPDATES: u64 = 4;

/// Fewer proxies than this are rebuilt in place: a thread costs more than their build.
pub(crate) const MIN_PROXIES: usize = 4096;

/// What the thread built: the tree, and where each slot sits in it.
struct Built {
    tree: Tree,
    /// Per slot (as many as the store had): its place in `tree`, or [`NONE`].
    locs: Vec<Loc>,
}

/// A tree building on another thread, and the proxies changed since it started.
#[derive(Debug)]
pub(crate) struct Rebuild {
    pub(crate) tree: usize,
    /// The update (counted by the engine) at which it is swapped in.
    pub(crate) due: u64,
    build: JoinHandle<Built>,
    /// Slots changed since the build started, once each, and a flag per slot saying so.
    changed: Vec<u32>,
    seen: Vec<bool>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built")
            .field("proxies", &self.tree.proxies)
            .finish()
    }
}

impl Rebuild {
    /// Starts rebuilding tree `t`, as `source` holds it after the update numbered `now`, over
    /// `slots` slots.
    ///
    /// # Errors
    /// When the operating system refuses the thread.
    pub(crate) fn start(
        t: usize,
        source: Arc<Tree>,
        slots: usize,
        now: u64,
    ) -> Result<Self, std::io::Error> {
        let build = std::thread::Builder::new()
            .name("broadphase-quadtree-rebuild".into())
            .spawn(move || {
                let mut units = Vec::with_capacity(source.proxies);
                if source.root != NONE {
                    source.collect_proxies(source.root, &mut units, &mut Vec::new());
                }
                drop(source);
                let mut tree = Tree::new();
                let mut locs = vec![NONE; slots];
                if !units.is_empty() {
                    tree.proxies = units.len();
                    tree.root =
                        Builder::default().build_fast(&mut tree, &AllNew, &mut locs, &mut units);
                }
                Built { tree, locs }
            })?;
        Ok(Self {
            tree: t,
            due: now + UPDATES,
            build,
            changed: Vec::new(),
            seen: Vec::new(),
        })
    }

    /// Notes the slots the update in progress changed.
    pub(crate) fn record(&mut self, store: &Store) {
        if self.seen.len() < store.slot_count() {
            self.seen.resize(store.slot_count(), false);
        }
        for &slot in store.dirty() {
            if !std::mem::replace(&mut self.seen[slot as usize], true) {
                self.changed.push(slot);
            }
        }
    }

    /// Joins the build and brings the fresh tree to where `running` is (as of the last
    /// update): `home` and `locs` say which slots it holds and where. Returns the fresh tree
    /// and writes its places into `locs`; `None` if the thread failed (the running tree
    /// stays).
    pub(crate) fn finish(
        self,
        store: &Store,
        running: &Tree,
        t: u8,
        home: &[u8],
        locs: &mut [Loc],
    ) -> Option<Tree> {
        let Built {
            mut tree,
            locs: mut fresh,
        } = self.build.join().ok()?;
        fresh.resize(locs.len(), NONE);
        for &slot in &self.changed {
            let s = slot as usize;
            let held = fresh[s] != NONE;
            if home[s] != t {
                if held {
                    let l = fresh[s];
                    tree.remove_proxy(&mut fresh, l, true);
                }
                continue;
            }
            // The running tree holds the box of the last update.
            let l = locs[s];
            let aabb = running.nodes[loc_node(l) as usize].lane_box(loc_lane(l));
            if held {
                tree.move_proxy(fresh[s], &aabb, true);
            } else {
                let unit = Unit {
                    bounds: aabb,
                    child: Child::proxy(slot),
                    count: 1,
                };
                tree.insert_unit(store, &mut fresh, unit);
                tree.proxies += 1;
            }
        }
        let mut stack = Vec::new();
        tree.refit(store, true, &mut stack);
        for (s, l) in locs.iter_mut().enumerate() {
            if home[s] == t {
                *l = fresh[s];
            }
        }
        Some(tree)
    }
}

/// The trees building on other threads. A clone of the engine starts with none: its trees are
/// its own, and the originals' builds stay with the original (the clone's trees are simply
/// rebuilt when their cost next says so).
#[derive(Debug, Default)]
pub(crate) struct Rebuilds(pub(crate) Vec<Rebuild>);

impl Clone for Rebuilds {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl Rebuilds {
    /// Whether tree `t` is building.
    pub(crate) fn building(&self, t: usize) -> bool {
        self.0.iter().any(|r| r.tree == t)
    }
}
