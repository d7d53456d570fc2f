//! The node layout: four children per node, their boxes structure-of-arrays so that one pass
//! over six `[f32; 4]` rows tests a box against all four (Jolt's `AABox4VsBox`), 128 bytes,
//! aligned to a cache line.

use crate::prefetch::prefetch;
use crate::simd;
use crate::Aabb;

/// Children per node.
pub(crate) const LANES: usize = 4;

/// "No node": the parent of a root, an absent root, a proxy not in any tree.
pub(crate) const NONE: u32 = u32::MAX;

/// Set on a child reference that names a proxy slot rather than a node.
const PROXY_TAG: u32 = 1 << 31;

/// A child of a node: a node index, a proxy slot (tagged), or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Child(u32);

impl Child {
    /// An empty lane. Its box is inverted, so no box test ever passes it.
    pub(crate) const EMPTY: Child = Child(u32::MAX);

    /// The node at `index`.
    #[inline]
    pub(crate) fn node(index: u32) -> Self {
        debug_assert!(index < PROXY_TAG);
        Child(index)
    }

    /// The proxy in `slot` (slots are below 2^24, see `MAX_PROXIES`).
    #[inline]
    pub(crate) fn proxy(slot: u32) -> Self {
        debug_assert!(slot < PROXY_TAG - 1);
        Child(slot | PROXY_TAG)
    }

    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self == Self::EMPTY
    }

    #[inline]
    pub(crate) fn is_node(self) -> bool {
        self.0 & PROXY_TAG == 0
    }

    #[inline]
    pub(crate) fn is_proxy(self) -> bool {
        self.0 & PROXY_TAG != 0 && !self.is_empty()
    }

    /// The node index or proxy slot.
    #[inline]
    pub(crate) fn index(self) -> u32 {
        self.0 & !PROXY_TAG
    }
}

/// Node flag: the node's boxes, count or height may be stale (a proxy below it moved or left).
pub(crate) const REFIT: u8 = 1;

/// One node of a tree: up to four children, each a node or a proxy, with their boxes.
///
/// `bounds[k][lane]` holds, for `k` in `0..3`, the minimum on axis `k`, and for `k` in `3..6`
/// the maximum on axis `k - 3`. After every update each lane's box is exactly the union of the
/// current boxes of the proxies below it (a proxy's lane holds its box bit for bit), so tests
/// on lanes are exact tests on proxies.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct Node {
    /// The children's boxes, structure-of-arrays.
    pub(crate) bounds: [[f32; LANES]; 6],
    /// The children.
    pub(crate) child: [Child; LANES],
    /// `parent << 2 | lane` of this node in its parent, or [`NONE`] for a root.
    pub(crate) parent: u32,
    /// Proxies below this node.
    pub(crate) count: u32,
    /// Lanes whose subtree holds a proxy changed since the last update: pair finding descends
    /// only where one side has such a proxy. Exact during an update's pair finding; scratch
    /// otherwise (a bulk refit rewrites every bit, so they are not cleared after it).
    pub(crate) dirty: u8,
    /// [`REFIT`].
    pub(crate) flags: u8,
    /// Levels of nodes in this subtree: 1 when every child is a proxy.
    pub(crate) height: u8,
    _pad: [u8; 5],
}

// The layout the issue asks for: four lanes of six bounds, four children, all in 128 bytes on a
// cache-line boundary. Pinned at compile time.
const _: () = assert!(std::mem::size_of::<Node>() == 128);
const _: () = assert!(std::mem::align_of::<Node>() == 64);

impl Default for Node {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Node {
    /// A node with four empty lanes.
    pub(crate) const EMPTY: Node = Node {
        bounds: [
            [f32::INFINITY; LANES],
            [f32::INFINITY; LANES],
            [f32::INFINITY; LANES],
            [f32::NEG_INFINITY; LANES],
            [f32::NEG_INFINITY; LANES],
            [f32::NEG_INFINITY; LANES],
        ],
        child: [Child::EMPTY; LANES],
        parent: NONE,
        count: 0,
        dirty: 0,
        flags: 0,
        height: 1,
        _pad: [0; 5],
    };

    /// The box of `lane` (inverted when the lane is empty).
    #[inline]
    pub(crate) fn lane_box(&self, lane: usize) -> Aabb {
        let b = &self.bounds;
        Aabb::new(
            [b[0][lane], b[1][lane], b[2][lane]],
            [b[3][lane], b[4][lane], b[5][lane]],
        )
    }

    /// Sets the box of `lane`.
    #[inline]
    pub(crate) fn set_lane_box(&mut self, lane: usize, aabb: &Aabb) {
        for k in 0..3 {
            self.bounds[k][lane] = aabb.min[k];
            self.bounds[k + 3][lane] = aabb.max[k];
        }
    }

    /// Empties `lane`: no child, an inverted box, not dirty.
    #[inline]
    pub(crate) fn clear_lane(&mut self, lane: usize) {
        self.child[lane] = Child::EMPTY;
        for k in 0..3 {
            self.bounds[k][lane] = f32::INFINITY;
            self.bounds[k + 3][lane] = f32::NEG_INFINITY;
        }
        self.dirty &= !(1 << lane);
    }

    /// The lanes holding a child, as a bit mask.
    #[inline]
    pub(crate) fn occupied(&self) -> u32 {
        let mut m = 0;
        for lane in 0..LANES {
            m |= u32::from(!self.child[lane].is_empty()) << lane;
        }
        m
    }

    /// The lanes holding a proxy, as a bit mask.
    #[inline]
    pub(crate) fn proxy_lanes(&self) -> u32 {
        let mut m = 0;
        for lane in 0..LANES {
            m |= u32::from(self.child[lane].is_proxy()) << lane;
        }
        m
    }

    /// The lanes holding a node, as a bit mask.
    #[inline]
    pub(crate) fn node_lanes(&self) -> u32 {
        let mut m = 0;
        for lane in 0..LANES {
            m |= u32::from(self.child[lane].is_node()) << lane;
        }
        m
    }

    /// Asks the CPU to start loading this node (both of its cache lines): walks know which
    /// nodes they will open next well before they open them.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        prefetch(self);
        // The second line: a node is 128 bytes, two lines, aligned.
        prefetch(&self.child);
    }

    /// The number of lanes holding a child.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.occupied().count_ones() as usize
    }

    /// The first empty lane.
    #[inline]
    pub(crate) fn free_lane(&self) -> Option<usize> {
        (0..LANES).find(|&l| self.child[l].is_empty())
    }

    /// The union of the lanes' boxes (inverted when the node is empty).
    #[inline]
    pub(crate) fn union(&self) -> Aabb {
        let b = &self.bounds;
        let lo = |k: usize| b[k][0].min(b[k][1]).min(b[k][2].min(b[k][3]));
        let hi = |k: usize| b[k][0].max(b[k][1]).max(b[k][2].max(b[k][3]));
        Aabb::new([lo(0), lo(1), lo(2)], [hi(3), hi(4), hi(5)])
    }

    /// The lanes whose box overlaps `q` (inclusive, the contract's test), as a bit mask. Empty
    /// lanes never pass: their boxes are inverted.
    #[inline(always)]
    pub(crate) fn overlap_mask(&self, q: &Aabb) -> u32 {
        // Six SSE compares where built (`simd::Sse2::lane_overlap_mask`), else lane by lane.
        match simd::sse2() {
            Some(sse2) => sse2.lane_overlap_mask(&self.bounds, q),
            None => overlap_mask_scalar(&self.bounds, q),
        }
    }
}

/// The four lanes' overlap test, one lane at a time: the fallback, and the reference the SIMD
/// version is tested against.
#[inline(always)]
pub(crate) fn overlap_mask_scalar(b: &[[f32; LANES]; 6], q: &Aabb) -> u32 {
    let mut m = 0u32;
    for lane in 0..LANES {
        let hit = (b[0][lane] <= q.max[0])
            & (b[1][lane] <= q.max[1])
            & (b[2][lane] <= q.max[2])
            & (q.min[0] <= b[3][lane])
            & (q.min[1] <= b[4][lane])
            & (q.min[2] <= b[5][lane]);
        m |= u32::from(hit) << lane;
    }
    m
}

/// The surface area of a box (half of it: the constant factor does not matter to costs), in
/// `f64` so that boxes spanning the float range stay finite. Inverted boxes count as 0.
#[inline]
pub(crate) fn half_area(b: &Aabb) -> f64 {
    let e: [f64; 3] = std::array::from_fn(|k| (f64::from(b.max[k]) - f64::from(b.min[k])).max(0.0));
    e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
}

/// The box's centre on `axis`, without overflow for boxes near the ends of the float range.
#[inline]
pub(crate) fn centre(b: &Aabb, axis: usize) -> f32 {
    0.5 * b.min[axis] + 0.5 * b.max[axis]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_tags() {
        assert!(Child::EMPTY.is_empty());
        assert!(!Child::EMPTY.is_proxy());
        assert!(!Child::EMPTY.is_node());
        let p = Child::proxy(7);
        assert!(p.is_proxy() && !p.is_node() && p.index() == 7);
        let n = Child::node(9);
        assert!(n.is_node() && !n.is_proxy() && n.index() == 9);
        let last = Child::proxy((1 << 24) - 1);
        assert!(last.is_proxy() && !last.is_empty());
    }

    #[test]
    fn empty_lanes_never_overlap() {
        let mut n = Node::EMPTY;
        let huge = Aabb::new([-f32::MAX; 3], [f32::MAX; 3]);
        assert_eq!(n.overlap_mask(&huge), 0);
        n.child[2] = Child::proxy(1);
        n.set_lane_box(2, &Aabb::new([0.0; 3], [1.0; 3]));
        assert_eq!(n.overlap_mask(&huge), 0b100);
        // Inclusive: touching at a corner counts.
        assert_eq!(n.overlap_mask(&Aabb::point([1.0; 3])), 0b100);
        assert_eq!(n.overlap_mask(&Aabb::point([1.0, 1.0, 1.5])), 0);
        assert_eq!(n.occupied(), 0b100);
        assert_eq!(n.free_lane(), Some(0));
        assert_eq!(n.union(), Aabb::new([0.0; 3], [1.0; 3]));
        n.clear_lane(2);
        assert_eq!(n.overlap_mask(&huge), 0);
        assert_eq!(n.len(), 0);
    }

    #[test]
    fn the_mask_is_the_contract_test() {
        // Every lane against boxes around it: the mask agrees with `Aabb::overlaps`.
        let mut n = Node::EMPTY;
        let boxes = [
            Aabb::new([0.0; 3], [1.0; 3]),
            Aabb::new([-2.0, 0.5, 0.0], [-1.0, 3.0, 0.0]),
            Aabb::new([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
            Aabb::new([-0.0, -5.0, 2.0], [0.5, -4.0, 9.0]),
        ];
        for (l, b) in boxes.iter().enumerate() {
            n.child[l] = Child::proxy(l as u32);
            n.set_lane_box(l, b);
            assert_eq!(n.lane_box(l), *b);
        }
        let coords = [-3.0f32, -1.0, 0.0, 0.5, 1.0, 2.5];
        for &x in &coords {
            for &y in &coords {
                for &z in &coords {
                    let q = Aabb::new([x, y, z], [x + 0.5, y + 1.0, z + 7.0]);
                    let want = boxes
                        .iter()
                        .enumerate()
                        .fold(0, |m, (l, b)| m | (u32::from(b.overlaps(&q)) << l));
                    assert_eq!(n.overlap_mask(&q), want, "{q:?}");
                }
            }
        }
    }

    #[test]
    fn simd_and_scalar_agree() {
        // Random lanes and queries on a coarse lattice (many exact contacts), with empty
        // lanes, zeros of both signs and the ends of the float range; SSE2 called directly
        // (whatever the dispatch) and as dispatched.
        let sse2 = simd::Sse2::detect();
        let mut rng = crate::split_mix::SplitMix64::new(1);
        let mut next = move || rng.next_u64();
        let special = [0.0f32, -0.0, 1.0, -1.0, f32::MAX, -f32::MAX, 0.5];
        let mut coord = move || -> f32 {
            let r = next();
            if r % 8 == 0 {
                special[(r >> 8) as usize % special.len()]
            } else {
                ((r >> 8) % 9) as f32 * 0.5 - 2.0
            }
        };
        for round in 0..20_000usize {
            let mut n = Node::EMPTY;
            for lane in 0..LANES {
                let a: [f32; 3] = std::array::from_fn(|_| coord());
                let b: [f32; 3] = std::array::from_fn(|_| coord());
                if (round + lane) % 5 != 0 {
                    n.child[lane] = Child::proxy(lane as u32);
                    n.set_lane_box(
                        lane,
                        &Aabb::new(
                            std::array::from_fn(|k| a[k].min(b[k])),
                            std::array::from_fn(|k| a[k].max(b[k])),
                        ),
                    );
                }
            }
            let a: [f32; 3] = std::array::from_fn(|_| coord());
            let b: [f32; 3] = std::array::from_fn(|_| coord());
            let q = Aabb::new(
                std::array::from_fn(|k| a[k].min(b[k])),
                std::array::from_fn(|k| a[k].max(b[k])),
            );
            let want = overlap_mask_scalar(&n.bounds, &q);
            if let Some(sse2) = sse2 {
                assert_eq!(sse2.lane_overlap_mask(&n.bounds, &q), want, "{n:?} {q:?}");
            }
            assert_eq!(n.overlap_mask(&q), want, "{n:?} {q:?}");
        }
    }

    #[test]
    fn areas_stay_finite() {
        let b = Aabb::new([-3e38; 3], [3e38; 3]);
        assert!(half_area(&b).is_finite());
        assert_eq!(centre(&b, 0), 0.0);
        assert_eq!(half_area(&Node::EMPTY.lane_box(0)), 0.0);
    }
}
