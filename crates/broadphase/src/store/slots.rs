//! Slots and ids: inserting, re-describing and removing proxies, one at a time or in
//! batches, each checked before anything changes.

use super::moves::MOVE_AHEAD;
use super::{Store, ALIVE, BOX_SET, FIXED, LEAVING, OUT, RETIRED};
use crate::filter::check_layer;
use crate::prefetch::{prefetch, prefetch_whole};
use crate::slack::{self, grow};
use crate::{Aabb, Error, ProxyDesc, ProxyId};

/// The [`FIXED`] flag of a description.
fn fixed_flag(desc: &ProxyDesc) -> u8 {
    if desc.is_fixed() {
        FIXED
    } else {
        0
    }
}

impl Store {
    fn check_new(&self, aabb: &Aabb, desc: &ProxyDesc) -> Result<(), Error> {
        aabb.validate()?;
        check_layer(desc.layer)
    }

    fn check_room(&self, extra: usize) -> Result<(), Error> {
        if self.len + extra > self.limit {
            Err(Error::CapacityExceeded { limit: self.limit })
        } else {
            Ok(())
        }
    }

    /// Inserts a proxy already checked by `check_new` and `check_room`.
    fn insert_checked(&mut self, aabb: Aabb, desc: ProxyDesc) -> ProxyId {
        let slot = match self.free.pop() {
            Some(s) => {
                let s = s as usize;
                self.aabbs[s] = aabb;
                self.descs[s] = desc;
                // WAS_IN stays as the last update left it (clear, since the slot was freed).
                self.flags[s] = ALIVE | BOX_SET | fixed_flag(&desc);
                s
            }
            None => {
                // Past the slots it had, the arrays grow by an eighth, not double.
                grow(&mut self.aabbs, 1);
                grow(&mut self.descs, 1);
                grow(&mut self.generations, 1);
                grow(&mut self.flags, 1);
                self.aabbs.push(aabb);
                self.descs.push(desc);
                self.generations.push(0);
                self.flags.push(ALIVE | BOX_SET | fixed_flag(&desc));
                self.aabbs.len() - 1
            }
        };
        self.len += 1;
        self.boxes_set += 1;
        self.grow_bounds(&aabb);
        self.fixed += usize::from(desc.is_fixed());
        self.grouped += usize::from(desc.group.0 != 0);
        self.mark_dirty(slot);
        ProxyId::from_raw_parts(slot as u32, self.generations[slot])
    }

    pub(crate) fn insert(&mut self, aabb: Aabb, desc: ProxyDesc) -> Result<ProxyId, Error> {
        self.validate_world()?;
        self.check_new(&aabb, &desc)?;
        self.check_room(1)?;
        Ok(self.insert_checked(aabb, desc))
    }

    /// All or nothing: every item is checked before the first is inserted.
    pub(crate) fn insert_batch(
        &mut self,
        items: &[(Aabb, ProxyDesc)],
    ) -> Result<Vec<ProxyId>, Error> {
        self.validate_world()?;
        for (aabb, desc) in items {
            self.check_new(aabb, desc)?;
        }
        self.check_room(items.len())?;
        // Room for the slots the free ones do not cover, at once: pushing a large first batch
        // one proxy at a time left the arrays up to twice the size they need (at 100,000
        // proxies, 14 bytes a proxy unused), and `Vec::reserve` doubled them again for the
        // first batch of churn past them (46 bytes a proxy at 100,000).
        let fresh = items.len().saturating_sub(self.free.len());
        slack::reserve(&mut self.aabbs, fresh);
        slack::reserve(&mut self.descs, fresh);
        slack::reserve(&mut self.generations, fresh);
        slack::reserve(&mut self.flags, fresh);
        slack::grow(&mut self.dirty, items.len());
        // Freed slots are reused last freed first, and lie all over the store: the entries of
        // the slot the item [`MOVE_AHEAD`] places on will take are prefetched.
        Ok(items
            .iter()
            .map(|&(aabb, desc)| {
                if let Some(&ahead) = self.free.iter().rev().nth(MOVE_AHEAD) {
                    let i = ahead as usize;
                    prefetch_whole(&self.aabbs[i]);
                    prefetch(&self.descs[i]);
                    prefetch(&self.flags[i]);
                    prefetch(&self.generations[i]);
                }
                self.insert_checked(aabb, desc)
            })
            .collect())
    }

    pub(crate) fn set_desc(&mut self, id: ProxyId, desc: ProxyDesc) -> Result<(), Error> {
        let slot = self.slot(id)?;
        check_layer(desc.layer)?;
        let old = self.descs[slot];
        self.fixed = self.fixed + usize::from(desc.is_fixed()) - usize::from(old.is_fixed());
        self.grouped =
            self.grouped + usize::from(desc.group.0 != 0) - usize::from(old.group.0 != 0);
        self.descs[slot] = desc;
        self.flags[slot] = (self.flags[slot] & !FIXED) | fixed_flag(&desc);
        self.mark_dirty(slot);
        Ok(())
    }

    pub(crate) fn remove(&mut self, id: ProxyId) -> Result<(), Error> {
        let slot = self.slot(id)?;
        self.remove_slot(slot);
        Ok(())
    }

    /// Removes the live proxy in `slot`.
    fn remove_slot(&mut self, slot: usize) {
        self.boxes_set -= usize::from(self.flags[slot] & BOX_SET != 0);
        // An out-of-bounds slot stays listed outside until the next update.
        self.out_count -= usize::from(self.flags[slot] & OUT != 0);
        self.flags[slot] &= !(ALIVE | BOX_SET | OUT);
        self.len -= 1;
        self.bounds_loose += 1;
        self.fixed -= usize::from(self.descs[slot].is_fixed());
        self.grouped -= usize::from(self.descs[slot].group.0 != 0);
        // A slot whose generation would wrap is retired rather than reused, so that an old id
        // can never become valid again.
        if let Some(next) = self.generations[slot].checked_add(1) {
            self.generations[slot] = next;
            self.pending_free.push(slot as u32);
        } else {
            self.flags[slot] |= RETIRED;
        }
        self.mark_dirty(slot);
    }

    /// All or nothing: every id is checked, and marked so that one listed twice is caught,
    /// before the first removal (the marks are taken back if one fails). Removed proxies lie
    /// all over the store: the entries of the id [`MOVE_AHEAD`] places on are prefetched
    /// before they are needed, in both passes.
    pub(crate) fn remove_batch(&mut self, ids: &[ProxyId]) -> Result<(), Error> {
        let ahead = |store: &Self, k: usize| {
            if let Some(next) = ids.get(k + MOVE_AHEAD) {
                let i = next.index() as usize;
                if let (Some(g), Some(f), Some(d)) = (
                    store.generations.get(i),
                    store.flags.get(i),
                    store.descs.get(i),
                ) {
                    prefetch(g);
                    prefetch(f);
                    prefetch(d);
                }
            }
        };
        for (k, &id) in ids.iter().enumerate() {
            ahead(self, k);
            let checked = self.slot(id).and_then(|slot| {
                if self.flags[slot] & LEAVING != 0 {
                    // Listed before in this batch: removing it again would find it stale.
                    Err(Error::StaleProxy { id })
                } else {
                    Ok(slot)
                }
            });
            match checked {
                Ok(slot) => self.flags[slot] |= LEAVING,
                Err(e) => {
                    for done in &ids[..k] {
                        self.flags[done.index() as usize] &= !LEAVING;
                    }
                    return Err(e);
                }
            }
        }
        for (k, &id) in ids.iter().enumerate() {
            ahead(self, k);
            let slot = id.index() as usize;
            self.flags[slot] &= !LEAVING;
            self.remove_slot(slot);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    /// Proxies removed and re-added each frame take slots past the store's until the next
    /// update frees theirs: the per-slot arrays make room for them by an eighth, not double.
    #[test]
    fn churn_past_the_first_batch_grows_the_arrays_by_an_eighth() {
        let mut store = Store::new(&Config::default());
        let boxes: Vec<(Aabb, ProxyDesc)> = (0..10_000)
            .map(|i| {
                let lo = [i as f32, 0.0, 0.0];
                (Aabb::new(lo, lo.map(|c| c + 1.0)), ProxyDesc::default())
            })
            .collect();
        let mut ids = store.insert_batch(&boxes).unwrap();
        assert_eq!(
            store.aabbs.capacity(),
            10_000,
            "the first batch is sized exactly"
        );
        for frame in 0..4 {
            store.begin_update();
            store.finish_update_listed(&[], &[]);
            let leaving: Vec<ProxyId> = ids.drain(..500).collect();
            store.remove_batch(&leaving).unwrap();
            let start = 500 * frame;
            ids.extend(store.insert_batch(&boxes[start..start + 500]).unwrap());
        }
        for capacity in [
            store.aabbs.capacity(),
            store.descs.capacity(),
            store.generations.capacity(),
            store.flags.capacity(),
        ] {
            assert!((10_500..=11_900).contains(&capacity), "{capacity}");
        }
    }
}
