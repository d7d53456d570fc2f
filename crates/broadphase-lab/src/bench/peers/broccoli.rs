//! broccoli, a 2D broad phase (a kd-tree whose nodes are swept and pruned), driven the way its
//! documentation drives it: the tree is rebuilt from every box each frame, then
//! `find_colliding_pairs` reports the overlapping rectangles.
//!
//! broccoli has no third axis: the scenes' boxes are projected onto x and y, and each pair it
//! reports is kept only if the boxes also overlap on z (inclusively, as `broadphase` and
//! broccoli's own ranges test) and `broadphase`'s pair filter allows it ([`PairRule`]). Those
//! tests run inside the frame, so the frame yields exactly `broadphase`'s pairs.

use broadphase::{Aabb, Error};
use broccoli::aabb::BBox;
use broccoli::{rect, Tree};

use crate::bench::contender::{Contender, IndexPair, Reported};
use crate::bench::peers::PairRule;
use crate::scenes::{Frame, Scene};

/// broccoli over a scene's boxes, rebuilt every frame.
pub struct Broccoli {
    /// Each scene object's box (`None` while it is away).
    boxes: Vec<Option<Aabb>>,
    /// Which objects may pair (fixed boxes never pair with one another).
    rule: PairRule,
    /// The rectangles the tree is built on, kept from frame to frame.
    bots: Vec<BBox<f32, u32>>,
    /// The pairs of the last frame.
    pairs: Vec<IndexPair>,
}

impl Broccoli {
    /// broccoli on the scene's current boxes, with its pairs found once.
    pub fn new(scene: &Scene) -> Self {
        let mut b = Self {
            boxes: (0..scene.len()).map(|i| Some(scene.aabb(i))).collect(),
            rule: PairRule::new(scene),
            bots: Vec::with_capacity(scene.len()),
            pairs: Vec::new(),
        };
        b.find_pairs();
        b
    }

    fn find_pairs(&mut self) {
        let Self {
            boxes,
            rule,
            bots,
            pairs,
        } = self;
        bots.clear();
        bots.extend(boxes.iter().enumerate().filter_map(|(i, b)| {
            b.map(|b| BBox::new(rect(b.min[0], b.max[0], b.min[1], b.max[1]), i as u32))
        }));
        pairs.clear();
        let mut tree = Tree::new(bots);
        tree.find_colliding_pairs(|a, b| {
            let (i, j) = (a.inner, b.inner);
            if let (Some(p), Some(q)) = (boxes[i as usize], boxes[j as usize]) {
                if p.min[2] <= q.max[2] && q.min[2] <= p.max[2] && rule.allows(i, j) {
                    pairs.push((i.min(j), i.max(j)));
                }
            }
        });
    }
}

impl Contender for Broccoli {
    fn frame(&mut self, frame: &Frame) -> Result<usize, Error> {
        frame.apply_to(&mut self.boxes);
        self.rule.apply(frame);
        self.find_pairs();
        Ok(self.pairs.len())
    }

    fn reported(&self) -> Reported {
        let mut pairs = self.pairs.clone();
        pairs.sort_unstable();
        Reported::Exact(pairs)
    }

    fn bench_bytes(&self) -> usize {
        self.rule.bytes()
    }
}
