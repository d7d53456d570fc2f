//! What [`Auto`](crate::Auto) measures of the scene it holds before each update: counts read
//! from the store's changes (O(changed), the work the update does anyway) and, now and then,
//! a clustering index from a sample of the boxes (O(sample)).

use crate::engine::Store;
use crate::split_mix::mix;
use crate::Aabb;

/// Boxes sampled for the clustering index and the first estimate of the pairs: enough for a
/// stable figure (on boxes spread evenly it stays within 0.95–1.05 over the lab's scenes and
/// sizes), few enough to cost nothing beside an update. (8,192 boxes in a 32³ grid, tried,
/// saw the lab's clusters less, not more: at that scale a Gaussian cluster is smooth.)
const SAMPLE: usize = 1024;
/// Cells per axis of the grid the sample is counted in: 16³ = 4,096 cells, four cells a
/// sampled box.
const SAMPLE_GRID: usize = 16;
/// The share of the sample cut off at each end of each axis before the grid is laid over it,
/// so that a few far boxes do not squeeze the rest into one cell.
const TRIM: f32 = 0.02;
/// The weight of the newest update in the running means: about the last eight updates count.
const SMOOTHING: f32 = 0.125;
/// The clustering index is sampled again after this many updates, or sooner when the count of
/// proxies changed by a quarter since.
const RESAMPLE_UPDATES: u64 = 16;
/// A step in the changed share: an update whose share differs from the running mean by this
/// much (a spawn, a wake-up, most bodies going to sleep) restarts the means at its own
/// figures, rather than eight updates of smoothing carrying the scene that was. `bplab
/// phases`: 14,000 dynamic boxes spawned among 24,000 fixed and 2,000 moving ones change 40%
/// of the proxies in one update against a mean of 5%; smoothed, the mean still said
/// "resting" (under 15%) and chose Sap for a scene in which 40% move every update.
const STEP: f32 = 0.25;

/// The figures [`Auto`](crate::Auto) chooses from, as of its last update
/// ([`AutoFigures::measures`](crate::AutoFigures::measures)).
///
/// ```
/// use broadphase::{Aabb, Auto, BroadPhase, Config, Figures, ProxyDesc};
/// let mut bp = Auto::new(Config::default());
/// bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::fixed())?;
/// bp.insert(Aabb::new([0.5; 3], [2.0; 3]), ProxyDesc::dynamic())?;
/// bp.update()?;
/// let Figures::Auto(auto) = bp.stats().figures else { unreachable!() };
/// assert_eq!(auto.measures.proxies, 2);
/// assert_eq!(auto.measures.fixed_share, 0.5);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct SceneMeasures {
    /// Proxies held.
    pub proxies: usize,
    /// The share of them that are fixed.
    pub fixed_share: f32,
    /// The share of the proxies that changed (moved, arrived, left) per update: a running
    /// mean over about the last eight updates, which restarts at an update whose share is a
    /// quarter of the proxies or more away from it (a spawn, a wake-up, a fall asleep). The
    /// first update (every proxy new) says nothing of motion: until the second, it is 1.
    pub changed_share: f32,
    /// The share of the proxies that changed in this update alone.
    pub changed_now: f32,
    /// The share of the proxies that moved (changed, neither arriving nor leaving) per
    /// update: `changed_share` less `churn_share`. Before the second update, the share of
    /// them that are dynamic (each assumed to move).
    pub moving_share: f32,
    /// The share of the proxies that arrived or left per update: a running mean, as
    /// `changed_share`.
    pub churn_share: f32,
    /// Pairs per proxy at the last update; before the first, estimated from the overlaps
    /// among a sample of the boxes.
    pub pairs_per_proxy: f32,
    /// How much the boxes gather: the sum of the squared counts of a sample of box centres
    /// in a 16×16×16 grid over the sample's bounds, over what boxes spread evenly would give.
    /// About 1 for boxes spread evenly, 10 when they fill a tenth of their bounds.
    pub clustering: f32,
}

/// The running measures, updated before each update.
#[derive(Clone, Debug, Default)]
pub(crate) struct Meter {
    pub(crate) measures: SceneMeasures,
    /// Updates measured with proxies present.
    updates: u64,
    /// Whether the last update's changed share stepped up from the running mean by
    /// [`STEP`] or more.
    stepped_up: bool,
    /// The update and proxy count of the last clustering sample.
    sampled_at: Option<(u64, usize)>,
    /// The sampled slots and their centres, kept for their memory.
    slots: Vec<u32>,
    centres: Vec<[f32; 3]>,
}

impl Meter {
    /// Measures the scene as it stands before an update: `pairs` is the count of pairs at
    /// the last update.
    pub(crate) fn measure(&mut self, store: &Store, pairs: usize) {
        let m = &mut self.measures;
        m.proxies = store.len();
        if m.proxies == 0 {
            return;
        }
        let n = m.proxies as f32;
        m.fixed_share = store.fixed_len() as f32 / n;
        m.pairs_per_proxy = pairs as f32 / n;
        // A slot in the changed list that the structure held and holds no more left; one
        // it did not hold arrived.
        let churn = store
            .dirty()
            .iter()
            .filter(|&&s| store.was_in(s as usize) != store.is_alive(s as usize))
            .count();
        let changed = store.dirty().len() as f32 / n;
        let churn = churn as f32 / n;
        m.changed_now = changed.min(1.0);
        self.updates += 1;
        let step = changed - m.changed_share;
        self.stepped_up = self.updates > 2 && step >= STEP;
        match self.updates {
            // The first update brings every proxy in: it says nothing of motion, so the scene
            // counts as moving until the second.
            1 => (m.changed_share, m.churn_share) = (1.0, 0.0),
            2 => (m.changed_share, m.churn_share) = (changed, churn),
            _ if step.abs() >= STEP => (m.changed_share, m.churn_share) = (changed, churn),
            _ => {
                m.changed_share += SMOOTHING * (changed - m.changed_share);
                m.churn_share += SMOOTHING * (churn - m.churn_share);
            }
        }
        m.moving_share = if self.updates == 1 {
            1.0 - m.fixed_share
        } else {
            (m.changed_share - m.churn_share).max(0.0)
        };
        let due = match self.sampled_at {
            None => true,
            Some((at, count)) => {
                self.updates >= at + RESAMPLE_UPDATES || count.abs_diff(m.proxies) > count / 4
            }
        };
        if due {
            self.sample(store);
            self.measures.clustering = self.clustering(store);
            self.sampled_at = Some((self.updates, self.measures.proxies));
        }
        if self.updates == 1 {
            // No pair is known before the first update: estimate them from the sample.
            let proxies = self.measures.proxies;
            self.measures.pairs_per_proxy = self.estimated_pairs_per_proxy(store, proxies);
        }
    }

    /// Updates measured so far with proxies present.
    pub(crate) fn updates(&self) -> u64 {
        self.updates
    }

    /// Whether this update's changed share stepped up from the running mean by [`STEP`] or
    /// more (a spawn, a wake-up): the scene is not the one the mean described.
    pub(crate) fn stepped_up(&self) -> bool {
        self.stepped_up
    }

    /// Draws the sample: up to [`SAMPLE`] live slots, spread over the slots by a hash (not a
    /// stride, which would line up with a lattice inserted row by row), the same for the same
    /// store.
    fn sample(&mut self, store: &Store) {
        let slots = store.slot_count();
        let size = SAMPLE;
        self.slots.clear();
        if slots <= size {
            self.slots.extend(0..slots as u32);
        } else {
            self.slots
                .extend((0..size as u64).map(|i| (mix(i) % slots as u64) as u32));
            self.slots.sort_unstable();
            self.slots.dedup();
        }
        self.slots.retain(|&s| store.is_alive(s as usize));
    }

    /// Pairs per proxy, estimated from the overlaps among the sample: a share `p` of the
    /// sample's pairs overlap, so about `p (n - 1) / 2` per proxy. For the first update, when
    /// no pair is known yet.
    fn estimated_pairs_per_proxy(&self, store: &Store, proxies: usize) -> f32 {
        let k = self.slots.len();
        if k < 2 {
            return 0.0;
        }
        let mut boxes: Vec<&Aabb> = self
            .slots
            .iter()
            .map(|&s| store.aabb_at(s as usize))
            .collect();
        boxes.sort_unstable_by(|a, b| a.min[0].total_cmp(&b.min[0]));
        let mut overlaps = 0u64;
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                if b.min[0] > a.max[0] {
                    break;
                }
                overlaps += u64::from(a.overlaps(b));
            }
        }
        let share = overlaps as f64 / (k as f64 * (k as f64 - 1.0) / 2.0);
        (share * (proxies as f64 - 1.0) / 2.0) as f32
    }

    /// The clustering index of the sample's centres (see [`SceneMeasures::clustering`]).
    fn clustering(&mut self, store: &Store) -> f32 {
        self.centres.clear();
        self.centres.extend(
            self.slots
                .iter()
                .map(|&s| store.aabb_at(s as usize).center()),
        );
        let k = self.centres.len();
        if k < 2 {
            return 1.0;
        }
        // The trimmed bounds of the sample, axis by axis.
        let mut lo = [0.0f32; 3];
        let mut scale = [0.0f32; 3];
        let mut axis_values = Vec::with_capacity(k);
        let cut = ((k as f32 * TRIM) as usize).min(k / 2 - 1);
        let mut cells = 1usize;
        for axis in 0..3 {
            axis_values.clear();
            axis_values.extend(self.centres.iter().map(|c| c[axis]));
            axis_values.sort_unstable_by(f32::total_cmp);
            let (a, b) = (axis_values[cut], axis_values[k - 1 - cut]);
            lo[axis] = a;
            if b > a {
                scale[axis] = SAMPLE_GRID as f32 / (b - a);
                cells *= SAMPLE_GRID;
            }
        }
        let mut counts = vec![0u32; SAMPLE_GRID * SAMPLE_GRID * SAMPLE_GRID];
        for c in &self.centres {
            let cell = |axis: usize| {
                let x = (c[axis] - lo[axis]) * scale[axis];
                // Trimmed boxes fall in the border cells; NaN cannot occur (boxes are valid).
                (x.max(0.0) as usize).min(SAMPLE_GRID - 1)
            };
            counts[(cell(0) * SAMPLE_GRID + cell(1)) * SAMPLE_GRID + cell(2)] += 1;
        }
        let sum_sq: f64 = counts.iter().map(|&c| f64::from(c) * f64::from(c)).sum();
        // Spread evenly over `cells` cells, k boxes give k + k(k-1)/cells on average.
        let k = k as f64;
        let even = k + k * (k - 1.0) / cells as f64;
        (sum_sq / even) as f32
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.centres.capacity() * std::mem::size_of::<[f32; 3]>() + self.slots.capacity() * 4
    }
}
