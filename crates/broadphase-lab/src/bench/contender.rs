//! A contender of `bplab bench` and the criterion benches: anything that takes a scene's frames
//! and finds the overlapping pairs, a `broadphase` algorithm or a peer library.

use broadphase::{Algorithm, AutoFigures, BroadPhase, Config, Error, Figures, ProxyId};

use crate::bench::peers::PeerKind;
use crate::bench::BenchError;
use crate::run::Feeder;
use crate::scenes::{Frame, Scene};

/// A pair of scene objects, by scene index, smaller first.
pub type IndexPair = (u32, u32);

/// What a contender reports after a frame, by scene index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reported {
    /// Exactly the overlapping pairs (sorted, each once): what `broadphase` reports.
    Exact(Vec<IndexPair>),
    /// The candidate pairs found this frame (each smaller first, in any order, maybe
    /// repeated): a peer that reports only the pairs of the boxes that moved out of their
    /// loosened bounds, as rapier's broad phase does. What such a peer has reported since a
    /// pair's boxes last arrived, filtered by exact overlap, is the exact pair set.
    Candidates(Vec<IndexPair>),
}

/// A broad phase under test, fed one scene frame at a time.
pub trait Contender: Send {
    /// Applies the frame's removals, arrivals and moves, then finds the pairs. Returns a figure
    /// of the result (a pair or event count) for the timer to black-box, so that no work is
    /// optimised away.
    ///
    /// # Errors
    /// When the broad phase rejects the frame's input (a scene bug).
    fn frame(&mut self, frame: &Frame) -> Result<usize, Error>;

    /// The pairs found by the last frame (or the build), by scene index.
    fn reported(&self) -> Reported;

    /// What the report should say of how it ran, if anything: for `Auto`, the algorithm it
    /// ran on at the end, why, and how often it switched.
    fn note(&self) -> Option<String> {
        None
    }

    /// Bytes of the bench's own bookkeeping that this contender holds, not its library's: the
    /// map from proxies to scene indices, the lists a frame is handed over in, a peer's copy
    /// of the pair filter. Left out of its memory figures. They only grow (cleared, never
    /// shrunk), so a figure read after a frame bounds what they held during it.
    fn bench_bytes(&self) -> usize {
        0
    }
}

/// A `broadphase` algorithm driven through the [`BroadPhase`] trait, its objects keyed by scene
/// index.
pub struct BroadPhaseContender {
    bp: Box<dyn BroadPhase>,
    /// The id of each scene object (stale while the object is away).
    ids: Vec<ProxyId>,
    /// The scene index behind each proxy slot, to name pairs by scene index.
    owners: Vec<u32>,
    /// A frame's removals, arrivals and moves, each handed over as one batch.
    feeder: Feeder,
}

impl BroadPhaseContender {
    /// Builds `algorithm` from the scene's current boxes with one `insert_batch` and one
    /// `update`, as a game loads a level: set-up cost, not per-frame cost.
    ///
    /// # Errors
    /// If the broad phase rejects a scene box (a scene bug).
    pub fn new(algorithm: Algorithm, config: Config, scene: &Scene) -> Result<Self, Error> {
        Self::with_broad_phase(broadphase::new(algorithm, config), scene)
    }

    /// [`BroadPhaseContender::new`] for a broad phase built by the caller (an algorithm with
    /// non-default settings).
    ///
    /// # Errors
    /// If the broad phase rejects a scene box (a scene bug).
    pub fn with_broad_phase(mut bp: Box<dyn BroadPhase>, scene: &Scene) -> Result<Self, Error> {
        let ids = bp.insert_batch(&scene.initial())?;
        let mut contender = Self {
            bp,
            ids: Vec::new(),
            owners: Vec::new(),
            feeder: Feeder::default(),
        };
        // Owned before the update, so that the bytes left out of its peak ([`bench_bytes`])
        // were held at the peak.
        for (i, &id) in ids.iter().enumerate() {
            contender.own(id, i as u32);
        }
        contender.ids = ids;
        contender.bp.update()?;
        Ok(contender)
    }

    fn own(&mut self, id: ProxyId, owner: u32) {
        let slot = id.index() as usize;
        if slot >= self.owners.len() {
            self.owners.resize(slot + 1, u32::MAX);
        }
        self.owners[slot] = owner;
    }

    /// The broad phase itself.
    pub fn broad_phase(&self) -> &dyn BroadPhase {
        self.bp.as_ref()
    }

    /// Every overlapping pair as of the last update, as scene indices `(low, high)`, sorted.
    pub fn pairs(&self) -> Vec<IndexPair> {
        let owner = |id: ProxyId| self.owners[id.index() as usize];
        let mut pairs: Vec<IndexPair> = self
            .bp
            .pairs()
            .iter()
            .map(|p| {
                let (a, b) = (owner(p.a), owner(p.b));
                (a.min(b), a.max(b))
            })
            .collect();
        pairs.sort_unstable();
        pairs
    }
}

impl Contender for BroadPhaseContender {
    fn frame(&mut self, frame: &Frame) -> Result<usize, Error> {
        // The scene's order: removals, then arrivals, then moves, each handed over as one
        // batch, the way a game hands over a frame's destroyed, spawned and moved bodies.
        self.feeder.apply(self.bp.as_mut(), &mut self.ids, frame)?;
        for &(i, _, _) in &frame.added {
            self.own(self.ids[i as usize], i);
        }
        let events = self.bp.update()?;
        Ok(events.created().len() + events.deleted().len())
    }

    fn reported(&self) -> Reported {
        Reported::Exact(self.pairs())
    }

    fn note(&self) -> Option<String> {
        match self.bp.stats().figures {
            Figures::Auto(f) => Some(auto_note(&f)),
            _ => None,
        }
    }

    /// The owners and the feeder's lists; not the ids, which `insert_batch` returns and every
    /// user keeps.
    fn bench_bytes(&self) -> usize {
        self.owners.capacity() * std::mem::size_of::<u32>() + self.feeder.bytes()
    }
}

/// `Auto`'s choice in words: `quadtree (most proxies are fixed), 1 switch`.
pub fn auto_note(f: &AutoFigures) -> String {
    let plural = if f.switches == 1 { "" } else { "es" };
    format!(
        "{} ({}), {} switch{plural}",
        f.running.cli_name(),
        f.reason,
        f.switches
    )
}

/// Who runs in a bench cell: one of `broadphase`'s algorithms or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContenderKind {
    /// A `broadphase` algorithm with its defaults.
    Algorithm(Algorithm),
    /// A peer library.
    Peer(PeerKind),
    /// GpuGrid (`broadphase-gpu`, feature `gpu`) with its defaults.
    Gpu,
}

impl ContenderKind {
    /// The name in the results: the algorithm's command-line name, or the peer's.
    pub fn name(self) -> &'static str {
        match self {
            ContenderKind::Algorithm(a) => a.cli_name(),
            ContenderKind::Peer(p) => p.name(),
            ContenderKind::Gpu => crate::gpu::NAME,
        }
    }

    /// Whether this is a peer.
    pub fn is_peer(self) -> bool {
        matches!(self, ContenderKind::Peer(_))
    }

    /// The contender built on the scene's current boxes.
    ///
    /// # Errors
    /// When a broad phase rejects a scene box (a scene bug), or a peer is not in this build.
    pub fn build(self, scene: &Scene) -> Result<Box<dyn Contender>, BenchError> {
        match self {
            ContenderKind::Algorithm(a) => Ok(Box::new(BroadPhaseContender::new(
                a,
                Config::default(),
                scene,
            )?)),
            ContenderKind::Peer(p) => p.build(scene),
            ContenderKind::Gpu => {
                let grid = crate::gpu::grid(Config::default()).map_err(BenchError::Gpu)?;
                Ok(Box::new(BroadPhaseContender::with_broad_phase(
                    grid, scene,
                )?))
            }
        }
    }
}
