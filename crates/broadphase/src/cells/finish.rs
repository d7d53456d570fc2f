//! The end of an update: the candidate changes of every cell, sorted, and those in both lists
//! (pairs whose reporting cell changed) cancelled, handed over as the update's changes; and the
//! pairs the cells hold.

use crate::engine::PairChanges;
use crate::pairs::{cancel_common, key_slots, PairList};

use super::bin::Binning;
use super::Cells;

impl Cells {
    /// Ends the update: hands the cells' candidate changes over as `changes`, each list sorted
    /// and the pairs in both (their reporting cell changed) removed from both, with the tests
    /// this update's pruning made; then sets the `slots` binned back to unchanged in
    /// `binning`.
    pub(crate) fn finish(
        &mut self,
        parallel: bool,
        binning: &mut Binning,
        slots: &[u32],
        changes: &mut PairChanges,
    ) {
        // Taken: an update that prunes nothing made no tests.
        changes.tests = std::mem::take(&mut self.tests);
        let (created, deleted) = (&mut self.created, &mut self.deleted);
        let both = parallel && created.len().min(deleted.len()) >= crate::par::SORT_BOTH_MIN;
        crate::par::both(both, || created.sort_unstable(), || deleted.sort_unstable());
        // Each pair has one reporting cell, so no cell reports a key another reports too.
        debug_assert!(self.created.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(self.deleted.windows(2).all(|w| w[0] < w[1]));
        cancel_common(&mut self.created, &mut self.deleted);
        changes.created.extend_from_slice(&self.created);
        changes.deleted.extend_from_slice(&self.deleted);
        if std::mem::take(&mut self.listed) {
            // A new layout created every pair (see `prune`).
            self.created = Vec::new();
            self.deleted = Vec::new();
        } else {
            self.trims[0].clear(&mut self.created);
            self.trims[1].clear(&mut self.deleted);
        }
        binning.reset(slots);
    }

    /// The pairs of every cell that has some, cell by cell.
    pub(crate) fn pair_lists(&self) -> Vec<PairList<'_>> {
        self.cells
            .iter()
            .filter(|c| !c.pairs.is_empty())
            .map(|c| PairList {
                keys: &c.pairs,
                slots: key_slots,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::pairs::{cancel_common, diff_pairs, pair_key};

    #[test]
    fn cancel_and_diff() {
        let (mut a, mut b) = (vec![1, 3, 5, 7], vec![2, 3, 7, 9]);
        cancel_common(&mut a, &mut b);
        assert_eq!((a, b), (vec![1, 5], vec![2, 9]));
        let (mut out, mut created, mut deleted) = (Vec::new(), Vec::new(), Vec::new());
        let key = |a: u32, b: u32| pair_key(a, b);
        let old = [key(1, 2), key(3, 4), key(5, 6)];
        let found = [key(1, 2), key(7, 8)];
        diff_pairs(
            &old,
            &found,
            |s| s == 3 || s == 7,
            &mut out,
            &mut created,
            &mut deleted,
        );
        assert_eq!(out, vec![key(1, 2), key(5, 6), key(7, 8)]);
        assert_eq!(created, vec![key(7, 8)]);
        assert_eq!(deleted, vec![key(3, 4)]);
    }
}
