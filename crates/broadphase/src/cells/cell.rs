//! One cell: its fixed and dynamic boxes, each list sorted on the sweep axis, what an update
//! brings it, and the pairs it reports.

use std::ops::ControlFlow;

use crate::prune::{BoxList, EncodedBox};
use crate::slack::Trim;
use crate::Aabb;

/// One cell: its fixed and dynamic boxes, each sorted on the sweep axis, and the pairs it
/// reports.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cell {
    /// The cell's key (see [`tag`](super::tag())): its region and coordinates.
    pub key: u32,
    /// Whether the cell finds pairs. Mbp keeps its out-of-bounds boxes in a cell that does
    /// not: they are held for queries only.
    pub prune: bool,
    /// `[sweep, u, v]`: the axis the cell's lists are sorted on, then the two others.
    pub axes: [usize; 3],
    pub fixed: BoxList,
    pub dynamic: BoxList,
    /// Keys of the pairs this cell reports, sorted.
    pub(super) pairs: Vec<u64>,
    /// This update's candidate created and deleted pair keys.
    pub(super) created: Vec<u64>,
    pub(super) deleted: Vec<u64>,
    /// When those lists give their memory back (emptied once gathered).
    pub(super) trims: [Trim; 2],
    /// Candidates tested this update.
    pub(super) tests: u64,
    /// A box holding every box of the cell, kept when the owner asks
    /// ([`Cells::track_bounds`](super::Cells::track_bounds)).
    pub bounds: Option<Aabb>,
}

impl Cell {
    /// An empty cell sweeping along `axes[0]`.
    pub(crate) fn new(key: u32, prune: bool, axes: [usize; 3]) -> Self {
        Self {
            key,
            prune,
            axes,
            ..Self::default()
        }
    }

    /// Boxes held (fixed and dynamic).
    pub(crate) fn len(&self) -> usize {
        self.fixed.len() + self.dynamic.len()
    }

    /// Measures the box holding every box of the cell, or `None` when empty.
    pub(super) fn measure(&self) -> Option<Aabb> {
        match (self.fixed.bounds(self.axes), self.dynamic.bounds(self.axes)) {
            (Some(a), Some(b)) => Some(a.union(&b)),
            (a, b) => a.or(b),
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.fixed.memory_bytes()
            + self.dynamic.memory_bytes()
            + (self.pairs.capacity() + self.created.capacity() + self.deleted.capacity()) * 8
    }

    /// Visits the boxes of this cell that overlap `q`, as `(slot, tag)`, until `visit`
    /// breaks.
    pub(crate) fn scan(
        &self,
        q: &Aabb,
        visit: &mut dyn FnMut(u32, u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let enc = EncodedBox::new(q, self.axes);
        let x = self.axes[0];
        for list in [&self.fixed, &self.dynamic] {
            for i in list.sweep_range(q.min[x], q.max[x]) {
                if list.overlaps(i, &enc) {
                    visit(list.id(i), list.tag(i))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every slot held, with its tag.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        [&self.fixed, &self.dynamic]
            .into_iter()
            .flat_map(|l| l.ids().iter().copied().zip(l.tags().iter().copied()))
    }
}
