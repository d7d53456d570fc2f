//! The peers `bplab bench` runs beside `broadphase` (cargo feature `peers`): parry3d's BVH in
//! rapier's mode and in exact mode, and broccoli. The best peer of a cell is the fastest of
//! them there.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "peers")]
pub mod broccoli;
#[cfg(feature = "peers")]
pub mod parry;

use broadphase::ProxyDesc;

use crate::bench::contender::Contender;
use crate::bench::BenchError;
use crate::scenes::{Frame, Scene};

/// `broadphase`'s pair filter for a peer, which has none of its own: two objects pair only if
/// they are not both fixed and not in the same non-zero group (the scenes keep every layer
/// colliding). A peer applies it to each pair it finds, inside the frame, as a user of that
/// library would in the pair callback.
#[derive(Clone, Debug)]
pub struct PairRule {
    descs: Vec<ProxyDesc>,
}

impl PairRule {
    /// The rule for the scene's objects as they are now.
    pub fn new(scene: &Scene) -> Self {
        Self {
            descs: (0..scene.len()).map(|i| scene.desc(i)).collect(),
        }
    }

    /// The bytes it holds: the bench's, not the peer's.
    pub fn bytes(&self) -> usize {
        self.descs.capacity() * std::mem::size_of::<ProxyDesc>()
    }

    /// Takes the descriptions of the objects the frame adds.
    pub fn apply(&mut self, frame: &Frame) {
        for &(i, _, desc) in &frame.added {
            self.descs[i as usize] = desc;
        }
    }

    /// Whether objects `a` and `b` may pair, whatever their boxes.
    #[inline]
    pub fn allows(&self, a: u32, b: u32) -> bool {
        let (p, q) = (&self.descs[a as usize], &self.descs[b as usize]);
        !(p.is_fixed() && q.is_fixed()) && (p.group.0 == 0 || p.group != q.group)
    }
}

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
