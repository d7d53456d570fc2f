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
    /// The boxes gather in clusters in a large scene: [`QuadTree`](crate::QuadTree)'s nodes
    /// follow the clusters where fixed columns cut through them.
    Clustered,
    /// Many pairs per proxy: [`Sap`](crate::Sap) keeps the pairs and updates them by swaps,
    /// where a pass over each column finds and diffs each again.
    Crowded,
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
            Reason::Clustered => "the boxes gather in clusters in a large scene",
            Reason::Crowded => "many pairs per proxy",
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
/// 6.40, QuadTree 5.58; sizes (25-34 a box) at 10k: Sap 6.2, Abp 8.7; at 100k: Grid 89, Sap
/// 101, Abp 157; clustered 30k (4 a box) is no crowd: QuadTree 7.3, Abp 8.6, Sap 9.1.
const CROWDED: Band = Band {
    enter: 8.0,
    leave: 6.0,
};

/// Clustering index of a clustered scene, from 20,000 proxies up. The lab's clustered scene
/// (Gaussian clusters of about 1,000 boxes) measures 2.3 at 30k, 1.34 at 100k, 1.18 at 300k;
/// boxes spread evenly, 0.95–1.05. clustered 30k: QuadTree 7.3, Abp 8.6; 100k: QuadTree
/// 16.8, Mbp 17.0, Abp 26.9; uniform 100k: Abp 9.6, QuadTree 10.3.
const CLUSTERED: Band = Band {
    enter: 1.25,
    leave: 1.15,
};
/// Proxies from which clusters pay for QuadTree's build (see [`CLUSTERED`]).
const CLUSTERED_MIN_PROXIES: usize = 20_000;

/// The algorithm that suits `m`, and why, given the one running now (`current`, with the
/// reason it was chosen for).
pub(crate) fn choose(m: &SceneMeasures, current: Reason) -> (Algorithm, Reason) {
    let holds = |r: Reason| current == r;
    if m.proxies >= FIXED_LEVEL_MIN_PROXIES
        && FIXED_LEVEL.above(m.fixed_share, holds(Reason::FixedLevel))
    {
        return (Algorithm::QuadTree, Reason::FixedLevel);
    }
    if CROWDED.above(m.pairs_per_proxy, holds(Reason::Crowded)) {
        return (Algorithm::Sap, Reason::Crowded);
    }
    if m.proxies < SMALL_SCENE && RESTING.below(m.changed_share, holds(Reason::MostlyResting)) {
        return (Algorithm::Sap, Reason::MostlyResting);
    }
    if m.proxies >= CLUSTERED_MIN_PROXIES && CLUSTERED.above(m.clustering, holds(Reason::Clustered))
    {
        return (Algorithm::QuadTree, Reason::Clustered);
    }
    (Algorithm::Abp, Reason::Moving)
}
