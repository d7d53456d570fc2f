//! The peer yardstick: parry3d's [`Bvh`] driven the way rapier's broad phase (`BroadPhaseBvh`)
//! drives it, so that `broadphase`'s figures can be read against the tree a Rust physics engine
//! actually ships.
//!
//! Per frame, as rapier does: moved leaves are rewritten in place
//! (`update_partially_if_present`, no propagation to ancestors), removed leaves go through
//! `remove` and new ones through `insert_or_update_partially`; then `optimize_incremental`
//! rebuilds a few subtrees, `refit` brings every internal box up to date (and re-lays the
//! tree depth-first), and `traverse_bvtt_single_tree` walks the tree against itself, reporting
//! overlapping leaf pairs. The reported pairs are pushed into a `Vec`, nothing more: rapier's
//! pair-map bookkeeping after the walk (dropping already-known pairs, finding stale ones) is
//! left out, so the yardstick's time is a lower bound on rapier's broad phase, whereas the
//! `broadphase` contender also produces the created and deleted pairs.

use std::collections::HashSet;
use std::fmt;

use broadphase::{Aabb, Algorithm, Config};
use broadphase_lab::scenes::{Frame, Scene};
use parry3d::bounding_volume::Aabb as ParryAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::{BroadPhaseContender, Contender};

/// rapier's change-detection skin (`1.0e-2 * length_unit`, with a length unit of 1: the scenes'
/// boxes are 0.5 to 2 wide).
pub const RAPIER_SKIN: f32 = 1.0e-2;

/// How the yardstick updates leaves and walks the tree.
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
    /// the persistent pair set of `broadphase`. The same output as the `broadphase` contender,
    /// at the price of walking the whole tree every frame.
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
    /// The leaf pairs the last walk reported.
    pairs: Vec<(u32, u32)>,
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
            pairs: Vec::new(),
        };
        ys.traverse();
        ys
    }

    /// The leaf pairs the last frame reported, in traversal order, each in either order.
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    fn traverse(&mut self) {
        self.pairs.clear();
        let pairs = &mut self.pairs;
        let mut collect = |a: u32, b: u32| pairs.push((a, b));
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
    fn frame(&mut self, frame: &Frame) -> usize {
        let margin = self.mode.margin();
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
        self.pairs.len()
    }
}

/// Checks, before any timing, that the yardstick finds the pairs `broadphase`'s Abp finds on
/// the first `frames` frames of `scene`, so that the two do equivalent work:
///
/// - at the start (both modes), the reported pairs are exactly Abp's pair set;
/// - in [`Mode::Exact`], the same holds after every frame;
/// - in [`Mode::Rapier`], every Abp pair has been reported at some frame since both its boxes
///   last arrived (what rapier's pair map accumulates), i.e. no overlap is missed.
///
/// Returns the number of pairs Abp holds and the number the yardstick reported, on the last
/// frame checked.
///
/// # Panics
/// With the frame and the first differing pairs, when the two disagree.
pub fn check_against_abp(mode: Mode, scene: &Scene, frames: usize) -> (usize, usize) {
    let mut scene = scene.clone();
    let mut abp = BroadPhaseContender::new(Algorithm::Abp, Config::default(), &scene);
    let mut ys = Yardstick::new(mode, &scene);
    let norm = |&(a, b): &(u32, u32)| (a.min(b), a.max(b));

    let mut seen: HashSet<(u32, u32)> = HashSet::new();
    let mut want = abp.pairs();
    for f in 0..=frames {
        if f > 0 {
            let frame = scene.step();
            abp.frame(&frame);
            ys.frame(&frame);
            want = abp.pairs();
            // rapier drops the pairs of a removed collider; its arrival is reported afresh.
            seen.retain(|&(a, b)| !frame.removed.contains(&a) && !frame.removed.contains(&b));
        }
        if f == 0 || mode == Mode::Exact {
            let mut got: Vec<(u32, u32)> = ys.pairs().iter().map(norm).collect();
            got.sort_unstable();
            if got != want {
                let (g, w): (HashSet<_>, HashSet<_>) = (
                    got.iter().copied().collect(),
                    want.iter().copied().collect(),
                );
                let only_ys: Vec<_> = g.difference(&w).take(5).collect();
                let only_abp: Vec<_> = w.difference(&g).take(5).collect();
                panic!(
                    "parry3d yardstick ({mode}) disagrees with Abp at frame {f}: \
                     {} pairs (of which {} distinct) against {}; \
                     only in the yardstick: {only_ys:?}; only in Abp: {only_abp:?}",
                    got.len(),
                    g.len(),
                    want.len(),
                );
            }
        }
        seen.extend(ys.pairs().iter().map(norm));
        let missed: Vec<_> = want.iter().filter(|p| !seen.contains(p)).take(5).collect();
        assert!(
            missed.is_empty(),
            "parry3d yardstick ({mode}) never reported these Abp pairs by frame {f}: {missed:?}"
        );
    }
    (want.len(), ys.pairs().len())
}

/// The yardstick in `mode` on `scene`, built after [`check_against_abp`] passed on its first
/// `frames` frames (what the check found is printed on stderr). Set-up for a bench.
///
/// # Panics
/// As [`check_against_abp`].
pub fn checked(mode: Mode, scene: &Scene, frames: usize) -> Box<dyn Contender> {
    let (pairs, reported) = check_against_abp(mode, scene, frames);
    eprintln!(
        "yardstick check passed: {mode}, {} objects, {frames} frames; \
         last frame: Abp holds {pairs} pairs, the yardstick reported {reported}",
        scene.len()
    );
    Box::new(Yardstick::new(mode, scene))
}
