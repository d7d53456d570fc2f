//! Change tracking: which slots changed since the last update, the filter rules and their
//! changes, and the start and end of an update.

use super::{Store, ALIVE, DIRTY, FIXED, OUT, WAS_IN};
use crate::filter::LayerMatrix;
use crate::slack::grow;
use crate::{Error, Layer};

/// Flags `slot` as changed and lists it, unless it is already.
#[inline(always)]
fn mark_changed(flags: &mut u8, dirty: &mut Vec<u32>, slot: usize) {
    if *flags & DIRTY == 0 {
        *flags |= DIRTY;
        // As long as the slots, at most: an eighth to spare, not double.
        grow(dirty, 1);
        dirty.push(slot as u32);
    }
}

impl Store {
    pub(super) fn mark_dirty(&mut self, slot: usize) {
        mark_changed(&mut self.flags[slot], &mut self.dirty, slot);
    }

    /// The layers (one bit each) whose collision rules changed before the update in progress:
    /// the proxies on them are dirty because the filter changed, whether or not they moved.
    #[inline]
    #[must_use]
    pub fn rules_changed(&self) -> u64 {
        self.rules_changed
    }

    pub(crate) fn set_layers_collide(
        &mut self,
        a: Layer,
        b: Layer,
        collide: bool,
    ) -> Result<(), Error> {
        if self.matrix.set(a, b, collide)? {
            self.all_layers_collide = self.matrix == LayerMatrix::default();
            // Every pair the change affects has a proxy on layer `a`: re-testing those finds
            // the pairs now allowed and drops the ones now forbidden.
            self.rule_changes |= 1 << a.0;
        }
        Ok(())
    }

    /// Starts an update: clears the last events and turns rule changes into changed proxies.
    pub(crate) fn begin_update(&mut self) {
        self.events.clear(&mut self.events_trims);
        self.tests = 0;
        self.rules_changed = self.rule_changes;
        if self.rule_changes != 0 {
            for slot in 0..self.aabbs.len() {
                if self.flags[slot] & ALIVE != 0
                    && (self.rule_changes >> self.descs[slot].layer.0) & 1 != 0
                {
                    self.mark_dirty(slot);
                }
            }
            self.rule_changes = 0;
        }
        self.sort_out_of_world();
    }

    /// Makes every proxy new to the structure, for a fresh engine: no slot is held
    /// ([`was_in`](Self::was_in)) and every live one is dirty, so that the next update builds
    /// the engine from the store and queries until then test every proxy directly.
    pub(crate) fn forget_structure(&mut self) {
        for slot in 0..self.flags.len() {
            self.flags[slot] &= !WAS_IN;
            if self.flags[slot] & ALIVE != 0 {
                self.mark_dirty(slot);
            }
        }
    }

    /// Forgets what changed and releases the removed slots.
    pub(super) fn end_update(&mut self) {
        // Tighten the bounds once enough boxes moved or left to make them loose: amortised
        // O(1) per change.
        if self.boxes_set == self.len && self.len > 0 {
            self.bounds = self.set_bounds;
            self.bounds_loose = 0;
        } else if self.bounds_loose > self.len / 4 + 64 {
            self.recompute_bounds();
        }
        (self.set_bounds, self.boxes_set) = (None, 0);
        self.last_changed = self.dirty.len();
        self.settle_dirty();
        self.free.append(&mut self.pending_free);
    }

    /// Clears the changed list, each of its slots held by the engine if it is live and in the
    /// world's bounds, as an update leaves them.
    pub(super) fn settle_dirty(&mut self) {
        for &s in &self.dirty {
            let s = s as usize;
            let alive = self.flags[s] & ALIVE;
            let mut f = alive;
            if alive != 0 {
                f |= self.flags[s] & (FIXED | OUT);
                if f & OUT == 0 {
                    f |= WAS_IN;
                }
            }
            self.flags[s] = f;
        }
        self.dirty.clear();
    }
}
