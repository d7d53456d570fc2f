//! parry3d's [`Bvh`] in the two ways people drive it: the way rapier's broad phase
//! (`BroadPhaseBvh`) does, and exactly (margin 0, every overlap every frame).
//!
//! Per frame, as rapier does: moved leaves are rewritten in place
//! (`update_partially_if_present`, no propagation to ancestors), removed leaves go through
//! `remove` and new ones through `insert_or_update_partially`; then `optimize_incremental`
//! rebuilds a few subtrees, `refit` brings every internal box up to date (and re-lays the
//! tree depth-first), and `traverse_bvtt_single_tree` walks the tree against itself, reporting
//! overlapping leaf pairs. The reported pairs are pushed into a `Vec`, nothing more: rapier's
//! pair-map bookkeeping after the walk (dropping already-known pairs, finding stale ones) is
//! left out, so rapier mode's time is a lower bound on rapier's broad phase, whereas the
//! `broadphase` contenders also produce the created and deleted pairs.

use std::fmt;

use broadphase::{Aabb, Error};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use crate::bench::contender::{Contender, IndexPair, Reported};
use crate::bench::peers::PairRule;
use crate::scenes::{Frame, Scene};

/// rapier's change-detection skin (`1.0e-2 * length_unit`, with a length unit of 1: the scenes'
/// boxes are 0.5 to 2 wide).
pub const RAPIER_SKIN: f32 = 1.0e-2;

/// How the tree updates its leaves and walks itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// rapier's settings: change detection on, leaves fattened by [`RAPIER_SKIN`].
    ///
    /// A leaf is rewritten (fattened by the skin, and flagged as changed) only when its new box
    /// leaves its stored one; the walk then visits only pairs with a changed leaf, so each frame
    /// reports the candidate pairs of the leaves that escaped, not every overlap. The skin is
    /// what makes this work: with a margin of 0, `update_partially_if_present` never flags a
    /// leaf, and a change-detecting walk would report (almost) nothing.
    Rapier,
    /// Margin 0 and no change detection: every frame reports every overlapping pair, exactly
    /// the persistent pair set of `broadphase`, at the price of walking the whole tree.
    Exact,
}

impl Mode {
    /// The margin leaves are updated with.
    pub fn margin(self) -> f32 {
        match self {
            Mode::Rapier => RAPIER_SKIN,
            Mode::Exact => 0.0,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Rapier => "rapier mode (skin, change detection)",
            Mode::Exact => "exact mode (margin 0, full traversal)",
        })
    }
}

/// parry3d's box for a `broadphase` box. parry's `Aabb` holds glam vectors; its overlap test,
/// like `broadphase`'s, is inclusive (touching boxes overlap).
#[inline]
pub fn to_parry(aabb: &Aabb) -> ParryAabb {
    ParryAabb::new(Vector::from_array(aabb.min), Vector::from_array(aabb.max))
}

/// parry3d's BVH over a scene, leaf index = scene index.
pub struct Yardstick {
    mode: Mode,
    tree: Bvh,
    workspace: BvhWorkspace,
    /// Which objects may pair (fixed boxes never pair with one another).
    rule: PairRule,
    /// The leaf pairs the last walk reported.
    pairs: Vec<IndexPair>,
}

impl Yardstick {
    /// Builds the tree from every box of the scene (binned SAH, as rapier's first pass
    /// rebuilds) and walks it once. `from_leaves` ends with a refit that leaves every leaf
    /// flagged as changed, so this first walk reports every overlapping pair in either mode
    /// (a second refit here would clear the flags and hide them from a change-detecting walk).
    pub fn new(mode: Mode, scene: &Scene) -> Self {
        let aabbs: Vec<ParryAabb> = (0..scene.len()).map(|i| to_parry(&scene.aabb(i))).collect();
        let mut ys = Self {
            mode,
            tree: Bvh::from_leaves(BvhBuildStrategy::Binned, &aabbs),
            workspace: BvhWorkspace::default(),
            rule: PairRule::new(scene),
            pairs: Vec::new(),
        };
        ys.traverse();
        ys
    }

    /// The leaf pairs the last frame reported (those the pair filter allows), in traversal
    /// order, each in either order.
    pub fn pairs(&self) -> &[IndexPair] {
        &self.pairs
    }

    fn traverse(&mut self) {
        self.pairs.clear();
        let (pairs, rule) = (&mut self.pairs, &self.rule);
        let mut collect = |a: u32, b: u32| {
            if rule.allows(a, b) {
                pairs.push((a, b));
            }
        };
        match self.mode {
            Mode::Rapier => self
                .tree
                .traverse_bvtt_single_tree::<true>(&mut self.workspace, &mut collect),
            Mode::Exact => self
                .tree
                .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut collect),
        }
    }
}

impl Contender for Yardstick {
    fn frame(&mut self, frame: &Frame) -> Result<usize, Error> {
        let margin = self.mode.margin();
        self.rule.apply(frame);
        // rapier's order: removals first, then in-place updates, then insertions.
        for &i in &frame.removed {
            self.tree.remove(i);
        }
        for &(i, aabb) in &frame.moved {
            let _ = self
                .tree
                .update_partially_if_present(to_parry(&aabb), i, margin);
        }
        for &(i, aabb, _) in &frame.added {
            let _ = self
                .tree
                .insert_or_update_partially(to_parry(&aabb), i, margin);
        }
        self.tree.optimize_incremental(&mut self.workspace);
        self.tree.refit(&mut self.workspace);
        self.traverse();
        Ok(self.pairs.len())
    }

    fn reported(&self) -> Reported {
        let mut pairs: Vec<IndexPair> = self
            .pairs
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        match self.mode {
            Mode::Rapier => Reported::Candidates(pairs),
            Mode::Exact => {
                pairs.sort_unstable();
                Reported::Exact(pairs)
            }
        }
    }

    fn bench_bytes(&self) -> usize {
        self.rule.bytes()
    }
}
