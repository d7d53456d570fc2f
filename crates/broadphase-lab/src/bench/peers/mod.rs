//! The peers `bplab bench` runs beside `broadphase` (cargo feature `peers`): parry3d's BVH in
//! rapier's mode and in exact mode, and broccoli. The best peer of a cell is the fastest of
//! them there.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "peers")]
pub mod broccoli;
#[cfg(feature = "peers")]
pub mod parry;

use crate::bench::contender::Contender;
use crate::bench::BenchError;
use crate::scenes::Scene;

/// A peer library, in one way of driving it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeerKind {
    /// parry3d's `Bvh` driven as rapier drives it: leaves loosened by a skin, change
    /// detection, the candidate pairs of the leaves that moved out of their loosened boxes.
    ParryRapier,
    /// parry3d's `Bvh` with margin 0 and a full self-traversal each frame: the exact pair set.
    ParryExact,
    /// broccoli's tree, rebuilt each frame, on x and y, its pairs filtered on z.
    Broccoli,
}

impl PeerKind {
    /// Every peer.
    pub const ALL: &'static [PeerKind] = &[
        PeerKind::ParryRapier,
        PeerKind::ParryExact,
        PeerKind::Broccoli,
    ];

    /// The name used on the command line and in the results.
    pub fn name(self) -> &'static str {
        match self {
            PeerKind::ParryRapier => "parry_rapier",
            PeerKind::ParryExact => "parry_exact",
            PeerKind::Broccoli => "broccoli",
        }
    }

    /// Whether this build has the peers (cargo feature `peers`).
    pub fn available() -> bool {
        cfg!(feature = "peers")
    }

    /// The peer built on the scene's current boxes, its pairs found once.
    ///
    /// # Errors
    /// [`BenchError::Options`] when the lab was built without the `peers` feature.
    pub fn build(self, scene: &Scene) -> Result<Box<dyn Contender>, BenchError> {
        #[cfg(feature = "peers")]
        {
            Ok(match self {
                PeerKind::ParryRapier => {
                    Box::new(parry::Yardstick::new(parry::Mode::Rapier, scene))
                }
                PeerKind::ParryExact => Box::new(parry::Yardstick::new(parry::Mode::Exact, scene)),
                PeerKind::Broccoli => Box::new(broccoli::Broccoli::new(scene)),
            })
        }
        #[cfg(not(feature = "peers"))]
        {
            let _ = scene;
            Err(BenchError::Options(format!(
                "peer {} needs the lab built with the `peers` feature",
                self.name()
            )))
        }
    }
}

impl fmt::Display for PeerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PeerKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::scenes::find_by_name(s, PeerKind::ALL, PeerKind::name, "peer")
    }
}
