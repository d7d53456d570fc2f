//! The rules [`Auto`](crate::Auto) chooses by: which algorithm suits the measured scene, and
//! why. Each threshold names the `bplab bench` figures that set it (single thread, median
//! milliseconds per frame; the module docs of `auto` give the command). Every rule that
//! leaves an algorithm has a band beside the one that enters it, so that a scene near a
//! threshold does not flip every update.

use std::fmt;

use super::SceneMeasures;
use crate::Algorithm;

/// Why [`Auto`](crate::Auto) runs on the algorithm it runs on
/// ([`AutoFigures::reason`](crate::AutoFigures::reason)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// No update has run yet.
    #[default]
    NotChosen,
    /// Pinned by [`Auto::pin`](crate::Auto::pin).
    Pinned,
    /// Most proxies are fixed and few move (a level): [`QuadTree`](crate::QuadTree) keeps
    /// the fixed ones for free and follows the few that move.
    FixedLevel,
    /// Few proxies change per update in a small scene, and most dynamic ones are at rest:
    /// [`Sap`](crate::Sap)'s sorted axes hardly change, and it touches only the boxes that
    /// move.
    MostlyResting,
    /// Many pairs per proxy in a small scene: [`Sap`](crate::Sap) keeps the pairs and
    /// updates them by swaps, where a pass over each column finds and diffs each again.
    Crowded,
    /// Many pairs per proxy in a large scene: [`Grid`](crate::Grid)'s cells bound the
    /// candidates of each box, where Sap's axes grow long enough that each move swaps past
    /// many boxes.
    LargeCrowd,
    /// Many proxies move, arrive or leave: [`Abp`](crate::Abp) re-bins the moved boxes and
    /// prunes each column, with no structure to repair.
    Moving,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::NotChosen => "no update yet",
            Reason::Pinned => "pinned",
            Reason::FixedLevel => "most proxies are fixed and few move",
            Reason::MostlyResting => "most bodies at rest in a small scene",
            Reason::Crowded => "many pairs per proxy",
            Reason::LargeCrowd => "many pairs per proxy in a large scene",
            Reason::Moving => "many proxies move, arrive or leave",
        })
    }
}

/// A threshold with a band: a scene enters the rule past `enter` and leaves it only past
/// `leave`, on the other side.
struct Band {
    enter: f32,
    leave: f32,
}

impl Band {
    /// Whether `value` is at or above the threshold, given whether the rule holds now.
    fn above(&self, value: f32, holding: bool) -> bool {
        value >= if holding { self.leave } else { self.enter }
    }

    /// Whether `value` is at or below the threshold, given whether the rule holds now.
    fn below(&self, value: f32, holding: bool) -> bool {
        value <= if holding { self.leave } else { self.enter }
    }
}

/// Fixed share of a level. static_world (2,000 dynamic boxes among fixed ones) at 100k:
/// QuadTree 0.65, Abp 0.85; at 1M: QuadTree 1.05, Abp 2.86, Sap 3.5.
const FIXED_LEVEL: Band = Band {
    enter: 0.9,
    leave: 0.8,
};
/// Moving share of a level: QuadTree follows each moving box down its tree, Abp sweeps the
/// columns the moving boxes are in, fixed boxes and all, so the tree wins where few of the
/// boxes move. static_world, its 2,000 dynamic boxes all moving: at 30k (6.7% moving) Abp
/// 0.43, QuadTree 0.48; 50k (4%) 0.50 and 0.48; 70k (2.9%) 0.59 and 0.53; 300k 1.26 and 0.92
/// (`bplab run --scene static_world --algo abp,quadtree --threads 1`). `bplab phases`' level
/// (26,000 boxes, 7.7% moving): Abp 0.38, QuadTree 0.56.
const MOVING_LEVEL: Band = Band {
    enter: 0.04,
    leave: 0.06,
};
/// Proxies below which a level of fixed boxes is cheap for every algorithm (static_world 10k:
/// Abp 0.27, QuadTree 0.48, with 20% of the boxes moving): the tree's build is not worth a
/// switch.
const FIXED_LEVEL_MIN_PROXIES: usize = 20_000;

/// Changed share per update of a resting scene. sleeping (a tenth of the boxes moving) at
/// 10k: Sap 0.25, Abp 0.28.
const RESTING: Band = Band {
    enter: 0.15,
    leave: 0.25,
};
/// The share of the dynamic proxies that move, in a resting scene: most dynamic bodies
/// asleep. Sap keeps the bodies at rest in lists its moving endpoints only read, where Abp's
/// columns take each moved box out of their resting lists and merge it back, and sweep it
/// against the whole column. A level whose dynamic boxes all move is no resting scene: Abp
/// sweeps them against the fixed ones alone. 40,000 boxes, one in ten of the dynamic ones
/// moving: 92% fixed, Sap 0.08, Abp 0.20; 60% fixed, Sap 0.48, Abp 0.64 (`bplab phases`'
/// asleep phase: Sap 0.59, Abp 0.74). `bplab phases`' level, its 2,000 dynamic boxes among
/// 24,000 fixed all moving: Abp 0.38, Sap 0.57; static_world at 10k: Abp 0.27, Sap 0.50.
const AWAKE: Band = Band {
    enter: 0.25,
    leave: 0.4,
};
/// Proxies above which Sap's swaps cost more than Abp's columns even at rest: sleeping 100k:
/// Abp 3.60, Sap 4.73 (`docs/PERFORMANCE.md`).
const SMALL_SCENE: usize = 50_000;

/// Pairs per proxy of a crowd, at any size. clustered 10k (11 pairs a box): Sap 3.90, Abp
/// 6.40, QuadTree 5.58; sizes (25-34 a box) at 10k: Sap 6.2, Abp 8.7; clustered 30k (4 a box)
/// is no crowd: QuadTree 7.3, Abp 8.6, Sap 9.1.
const CROWDED: Band = Band {
    enter: 8.0,
    leave: 6.0,
};
/// Proxies from which a crowd runs on Grid rather than Sap: Sap's sweep grows with the
/// boxes along its axes. sizes (37 pairs a box) at 10k: Sap 5.28, Grid 7.22; at 100k: Grid
/// 86.8, Sap 100, Abp 131; at 300k: Grid 338, Abp 483, Sap 828. resting (12 a box) at 100k:
/// Abp 1.35, Grid 1.48, Sap 1.68; at 1M all within 16.5-17.4.
const LARGE_CROWD: Band = Band {
    enter: 50_000.0,
    leave: 40_000.0,
};

/// Clusters are no reason to leave Abp: clustered (Gaussian clusters of about 1,000 boxes) at
/// 30k: Abp 5.90, Mbp 5.80, QuadTree 6.13; 100k: Abp 11.7, Mbp 11.6, QuadTree 13.4; 300k: Abp
/// 31.5, QuadTree 42.3 (`bplab run --scene clustered --threads 1`). An earlier rule sent
/// clustered scenes from 20,000 proxies to QuadTree, when Abp's columns were laid out from a
/// sample that missed most clusters.
/// The algorithm that suits `m`, and why, given the one running now (`current`, with the
/// reason it was chosen for).
pub(crate) fn choose(m: &SceneMeasures, current: Reason) -> (Algorithm, Reason) {
    let holds = |r: Reason| current == r;
    if m.proxies >= FIXED_LEVEL_MIN_PROXIES
        && FIXED_LEVEL.above(m.fixed_share, holds(Reason::FixedLevel))
        && MOVING_LEVEL.below(m.moving_share, holds(Reason::FixedLevel))
    {
        return (Algorithm::QuadTree, Reason::FixedLevel);
    }
    if CROWDED.above(
        m.pairs_per_proxy,
        holds(Reason::Crowded) || holds(Reason::LargeCrowd),
    ) {
        return if LARGE_CROWD.above(m.proxies as f32, holds(Reason::LargeCrowd)) {
            (Algorithm::Grid, Reason::LargeCrowd)
        } else {
            (Algorithm::Sap, Reason::Crowded)
        };
    }
    let resting = holds(Reason::MostlyResting);
    let dynamic = 1.0 - m.fixed_share;
    if m.proxies < SMALL_SCENE
        && RESTING.below(m.changed_share, resting)
        && dynamic > 0.0
        && AWAKE.below(m.moving_share / dynamic, resting)
    {
        return (Algorithm::Sap, Reason::MostlyResting);
    }
    (Algorithm::Abp, Reason::Moving)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crowd(proxies: usize) -> SceneMeasures {
        SceneMeasures {
            proxies,
            changed_share: 1.0,
            pairs_per_proxy: 12.0,
            clustering: 1.0,
            ..SceneMeasures::default()
        }
    }

    #[test]
    fn a_crowd_runs_on_sap_when_small_and_on_grid_when_large() {
        assert_eq!(
            choose(&crowd(10_000), Reason::NotChosen),
            (Algorithm::Sap, Reason::Crowded)
        );
        assert_eq!(
            choose(&crowd(100_000), Reason::NotChosen),
            (Algorithm::Grid, Reason::LargeCrowd)
        );
    }

    #[test]
    fn a_crowd_near_the_size_threshold_keeps_its_algorithm() {
        // Between 40,000 and 50,000 proxies each keeps what it runs on.
        assert_eq!(
            choose(&crowd(45_000), Reason::LargeCrowd),
            (Algorithm::Grid, Reason::LargeCrowd)
        );
        assert_eq!(
            choose(&crowd(45_000), Reason::Crowded),
            (Algorithm::Sap, Reason::Crowded)
        );
        assert_eq!(
            choose(&crowd(35_000), Reason::LargeCrowd),
            (Algorithm::Sap, Reason::Crowded)
        );
        // A large crowd thinning out leaves at the crowd's own band (6 pairs a proxy).
        let thinner = SceneMeasures {
            pairs_per_proxy: 7.0,
            ..crowd(100_000)
        };
        assert_eq!(
            choose(&thinner, Reason::LargeCrowd),
            (Algorithm::Grid, Reason::LargeCrowd)
        );
        assert_eq!(
            choose(&thinner, Reason::Moving),
            (Algorithm::Abp, Reason::Moving)
        );
    }

    /// A level runs on QuadTree only while few of its boxes move, and on Sap only while most
    /// of its dynamic boxes rest: a level whose every dynamic box moves runs on Abp.
    #[test]
    fn a_level_runs_on_the_tree_while_few_move_and_on_sap_while_most_rest() {
        let level = |proxies: usize, fixed_share: f32, moving_share: f32| SceneMeasures {
            proxies,
            fixed_share,
            moving_share,
            changed_share: moving_share,
            pairs_per_proxy: 1.0,
            clustering: 1.0,
            ..SceneMeasures::default()
        };
        let choose_new = |m: &SceneMeasures| choose(m, Reason::NotChosen).0;
        // static_world at 100k and 30k: 2,000 dynamic boxes, all moving.
        assert_eq!(choose_new(&level(100_000, 0.98, 0.02)), Algorithm::QuadTree);
        assert_eq!(choose_new(&level(30_000, 0.933, 0.067)), Algorithm::Abp);
        // One in ten of the dynamic boxes moving, under 50,000: most rest.
        assert_eq!(choose_new(&level(30_000, 0.6, 0.04)), Algorithm::Sap);
        // The level keeps the tree up to 6% moving, and takes it only at 4% or fewer.
        assert_eq!(
            choose(&level(100_000, 0.95, 0.05), Reason::FixedLevel).0,
            Algorithm::QuadTree
        );
        assert_eq!(choose_new(&level(100_000, 0.95, 0.05)), Algorithm::Abp);
        // Sap keeps a scene up to 40% of the dynamic boxes moving, and takes it at 25%.
        let waking = level(30_000, 0.5, 0.15);
        assert_eq!(choose(&waking, Reason::MostlyResting).0, Algorithm::Sap);
        assert_eq!(choose_new(&waking), Algorithm::Abp);
        // Every proxy fixed: nothing rests that could wake.
        assert_eq!(choose_new(&level(10_000, 1.0, 0.0)), Algorithm::Abp);
    }

    /// Clusters of moving boxes run on Abp, however tight.
    #[test]
    fn moving_clusters_run_on_abp() {
        for clustering in [1.0, 1.3, 2.5] {
            let clusters = SceneMeasures {
                pairs_per_proxy: 1.6,
                clustering,
                ..crowd(100_000)
            };
            assert_eq!(
                choose(&clusters, Reason::NotChosen),
                (Algorithm::Abp, Reason::Moving)
            );
        }
    }
}
