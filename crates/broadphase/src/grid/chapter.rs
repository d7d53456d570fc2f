//! The chapter's sort-and-sweep strategy, for the lab's side-by-side comparison with the grid.

use crate::encode::encode;
use crate::prune::{complete, BoxList, EncodedBox};
use crate::radix::RadixSorter;
use crate::{Aabb, Error};

/// What one [`SortAndSweep::run`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SweepFigures {
    /// Overlapping pairs found.
    pub pairs: u64,
    /// Candidate pairs tested: pairs whose intervals overlap on the sweep axis.
    pub tests: u64,
    /// Passes of the radix sort of the interval starts.
    pub radix_passes: u32,
}

/// Sort and sweep from scratch (GPU Gems 3, section 32.1.1): every box's interval on one axis,
/// sorted by its start with a radix sort, then swept with the list of open intervals; the
/// boxes whose intervals overlap are tested on the two other axes. No state is kept between
/// runs: it is the chapter's baseline, not a broad phase (see [`Abp`](crate::Abp) for one).
///
/// ```
/// use broadphase::{Aabb, SortAndSweep};
/// let boxes = [
///     Aabb::new([0.0; 3], [1.0; 3]),
///     Aabb::new([0.5, 3.0, 0.0], [1.5, 4.0, 1.0]), // overlaps on x only
///     Aabb::new([0.9; 3], [2.0; 3]),
/// ];
/// let figures = SortAndSweep::new(8)?.run(&boxes, 0);
/// assert_eq!((figures.pairs, figures.tests), (1, 3));
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SortAndSweep {
    sorter: RadixSorter,
    keys: Vec<u32>,
    order: Vec<u32>,
    list: BoxList,
}

impl SortAndSweep {
    /// A sweeper whose radix sort reads `radix_bits` bits per pass.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `radix_bits` is outside `4..=16`.
    pub fn new(radix_bits: u32) -> Result<Self, Error> {
        Ok(Self {
            sorter: RadixSorter::new(radix_bits)?,
            keys: Vec::new(),
            order: Vec::new(),
            list: BoxList::default(),
        })
    }

    /// Finds the overlapping pairs of `boxes` by sweeping along `axis` (0, 1 or 2; others are
    /// taken modulo 3). Boxes must be valid ([`Aabb::validate`]); invalid ones give unspecified
    /// figures.
    pub fn run(&mut self, boxes: &[Aabb], axis: usize) -> SweepFigures {
        let axis = axis % 3;
        let axes = [axis, (axis + 1) % 3, (axis + 2) % 3];
        self.keys.clear();
        self.keys.extend(boxes.iter().map(|b| encode(b.min[axis])));
        self.order.clear();
        self.order.extend(0..boxes.len() as u32);
        let report = self.sorter.sort_unchecked(&mut self.keys, &mut self.order);
        self.list.clear();
        for &i in &self.order {
            self.list
                .push(&EncodedBox::new(&boxes[i as usize], axes), i, 0);
        }
        let mut pairs = 0;
        let tests = complete(&self.list, |_, _| pairs += 1);
        SweepFigures {
            pairs,
            tests,
            radix_passes: report.passes,
        }
    }
}
