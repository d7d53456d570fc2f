//! World bounds ([`Config::world_bounds`](crate::Config::world_bounds)): which proxies lie
//! wholly outside them. Engines never see those ([`Store::is_alive`] is false for them), so
//! every algorithm drops their pairs and finds them again when they come back, with no code of
//! its own.

use super::{Store, ALIVE, OUT};
use crate::{Error, ProxyId};

impl Store {
    /// Refuses insertions into a broad phase whose world bounds are not a valid box.
    pub(super) fn validate_world(&self) -> Result<(), Error> {
        match self.world {
            Some(w) if w.validate().is_err() => Err(Error::invalid_world_bounds(&w)),
            _ => Ok(()),
        }
    }

    /// At the start of an update: flags [`OUT`] the changed live proxies now wholly outside
    /// the world, clears it on those back inside, and lists the slots out.
    pub(super) fn sort_out_of_world(&mut self) {
        let Some(world) = self.world else { return };
        let mut changed = false;
        for &s in &self.dirty {
            let s = s as usize;
            let f = self.flags[s];
            let out = f & ALIVE != 0 && !world.overlaps(&self.aabbs[s]);
            if out != (f & OUT != 0) {
                self.flags[s] ^= OUT;
                if out {
                    self.out_count += 1;
                } else {
                    self.out_count -= 1;
                }
                changed = true;
            }
            // A removed slot that was out left the count at its removal.
            changed |= f & ALIVE == 0;
        }
        if changed {
            let flags = &self.flags;
            self.outside.retain(|&s| flags[s as usize] & OUT != 0);
            let listed = self.outside.len();
            for &s in &self.dirty {
                if flags[s as usize] & OUT != 0 && self.outside[..listed].binary_search(&s).is_err()
                {
                    self.outside.push(s);
                }
            }
            self.outside.sort_unstable();
        }
    }

    /// Whether the slot is flagged out of the world's bounds (as of the last update, unless
    /// it changed since).
    #[inline]
    pub(crate) fn is_out(&self, slot: usize) -> bool {
        self.flags[slot] & OUT != 0
    }

    /// The slots out of the world's bounds at the last update (some may have been removed
    /// since: test [`Store::is_live`]).
    #[inline]
    pub(crate) fn outside(&self) -> &[u32] {
        &self.outside
    }

    /// The ids of the live proxies out of the world's bounds at the last update, sorted.
    pub(crate) fn outside_world(&self) -> Vec<ProxyId> {
        let mut ids: Vec<ProxyId> = self
            .outside
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| self.flags[s] & (ALIVE | OUT) == ALIVE | OUT)
            .map(|s| self.id_at(s))
            .collect();
        ids.sort_unstable();
        ids
    }

    /// The world bounds moved by `offset` with the boxes of an origin shift; `Err` when they
    /// would leave the float range.
    pub(super) fn shifted_world(&self, offset: [f32; 3]) -> Result<Option<crate::Aabb>, ()> {
        match self.world {
            Some(w) if w.validate().is_ok() => {
                let moved = w.translated(offset);
                if moved.is_valid() {
                    Ok(Some(moved))
                } else {
                    Err(())
                }
            }
            other => Ok(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, Algorithm, Config, Error, ProxyDesc};

    #[test]
    fn an_invalid_world_refuses_insertions() {
        let unit = Aabb::new([0.0; 3], [1.0; 3]);
        for world in [
            Aabb::new([1.0; 3], [0.0; 3]),
            Aabb::new([f32::NAN; 3], [1.0; 3]),
        ] {
            for &algorithm in Algorithm::ALL {
                let mut bp = crate::new(algorithm, Config::default().with_world_bounds(world));
                let single = bp.insert(unit, ProxyDesc::dynamic());
                let batch = bp.insert_batch(&[(unit, ProxyDesc::dynamic())]);
                for r in [single.map(|_| ()), batch.map(|_| ())] {
                    assert!(
                        matches!(r, Err(Error::InvalidParameter { name, .. }) if name == "Config::world_bounds")
                    );
                }
                assert!(bp.is_empty());
            }
        }
    }

    #[test]
    fn a_shift_that_overflows_the_world_changes_nothing() -> Result<(), Error> {
        let world = Aabb::new([-1.0e38; 3], [1.0e38; 3]);
        let mut bp = crate::new(Algorithm::Abp, Config::default().with_world_bounds(world));
        let id = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
        bp.update()?;
        assert!(matches!(
            bp.shift_origin([-3.0e38, 0.0, 0.0]),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(bp.aabb(id)?, Aabb::new([0.0; 3], [1.0; 3]));
        // A shift the world survives moves it with the boxes: nothing changes sides.
        bp.shift_origin([1.0e37, 0.0, 0.0])?;
        bp.update()?;
        assert!(bp.outside_world().is_empty());
        assert_eq!(bp.check_structure(), Ok(()));
        Ok(())
    }
}
