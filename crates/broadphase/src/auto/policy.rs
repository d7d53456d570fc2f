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
    /// Most proxies are fixed (a level): [`QuadTree`](crate::QuadTree) keeps them for free
    /// and follows the few that move.
    FixedLevel,
    /// Few proxies change per update in a small scene: [`Sap`](crate::Sap)'s sorted axes
    /// hardly change, and it touches only the boxes that move.
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
            Reason::FixedLevel => "most proxies are fixed",
            Reason::MostlyResting => "few proxies change per update in a small scene",
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
/// QuadTree 2.21, Abp 2.93; at 1M: QuadTree 3.8, Sap 8.0, Abp 17.6.
const FIXED_LEVEL: Band = Band {
    enter: 0.9,
    leave: 0.8,
};
/// Proxies below which a level of fixed boxes is cheap for every algorithm (static_world 10k:
/// Abp 0.49, QuadTree 0.53): the tree's build is not worth a switch.
const FIXED_LEVEL_MIN_PROXIES: usize = 20_000;

/// Changed share per update of a resting scene. sleeping (a tenth of the boxes moving) at
/// 10k: Sap 0.37, Abp 0.51.
const RESTING: Band = Band {
    enter: 0.15,
    leave: 0.25,
};
/// Proxies above which Sap's swaps cost more than Abp's columns even at rest: sleeping 100k:
/// Abp 6.7, Sap 8.6.
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
    if m.proxies < SMALL_SCENE && RESTING.below(m.changed_share, holds(Reason::MostlyResting)) {
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
