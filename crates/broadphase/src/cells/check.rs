//! The invariants of the cells Abp and Mbp share ([`Cells::check`]): each cell's lists
//! sorted and holding their boxes' keys, fixed and dynamic boxes apart, no slot twice, and its
//! pairs sorted, of two of its boxes that overlap, reported by this cell.

use std::collections::HashMap;

use super::cell::Cell;
use super::tags::{reporting_cell, Report};
use super::Cells;
use crate::prune::{BoxList, EncodedBox};
use crate::store::Store;

/// Where a cell holds a slot: fixed list or dynamic, and the index there.
type Held = HashMap<u32, (bool, usize)>;

impl Cell {
    /// Checks one cell against `store` as of the last update; returns the slots it holds,
    /// each with its tag.
    pub(crate) fn check(&self, store: &Store) -> Result<Vec<(u32, u32)>, String> {
        let name = self.key;
        let mut held = Held::new();
        for (list, fixed) in [(&self.fixed, true), (&self.dynamic, false)] {
            list.check()
                .map_err(|e| format!("cell {name:#x}'s {} list: {e}", kind(fixed)))?;
            for i in 0..list.len() {
                let slot = list.id(i);
                let s = slot as usize;
                if s >= store.slot_count() || !store.was_in(s) {
                    return Err(format!(
                        "cell {name:#x} holds slot {slot}, not live at the last update"
                    ));
                }
                if held.insert(slot, (fixed, i)).is_some() {
                    return Err(format!("cell {name:#x} holds slot {slot} twice"));
                }
                if store.is_dirty(s) {
                    continue;
                }
                if store.is_fixed(s) != fixed {
                    return Err(format!(
                        "cell {name:#x} holds slot {slot} in its {} list",
                        kind(fixed)
                    ));
                }
                if !same_keys(list, i, &EncodedBox::new(store.aabb_at(s), self.axes)) {
                    return Err(format!(
                        "cell {name:#x} holds keys for slot {slot} that are not its box {:?}",
                        store.aabb_at(s)
                    ));
                }
            }
        }
        if !self.prune && !self.pairs.is_empty() {
            return Err(format!("cell {name:#x} finds no pairs but holds some"));
        }
        if let Some(w) = self.pairs.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "cell {name:#x}'s pairs {:#x} and {:#x} are out of order",
                w[0], w[1]
            ));
        }
        for &k in &self.pairs {
            let (a, b) = crate::pairs::key_slots(k);
            let (Some(&(fa, i)), Some(&(fb, j))) = (held.get(&a), held.get(&b)) else {
                return Err(format!(
                    "cell {name:#x} reports pair ({a}, {b}) but does not hold both"
                ));
            };
            let (la, lb) = (self.list(fa), self.list(fb));
            if fa && fb {
                return Err(format!("cell {name:#x} reports fixed pair ({a}, {b})"));
            }
            if !overlap(la, i, lb, j) {
                return Err(format!(
                    "cell {name:#x} reports pair ({a}, {b}) whose keys do not overlap"
                ));
            }
            if reporting_cell(self.key, la.tag(i), lb.tag(j)) == Report::Elsewhere {
                return Err(format!(
                    "cell {name:#x} reports pair ({a}, {b}), which another cell reports"
                ));
            }
        }
        Ok(self.entries().collect())
    }

    fn list(&self, fixed: bool) -> &BoxList {
        if fixed {
            &self.fixed
        } else {
            &self.dynamic
        }
    }
}

fn kind(fixed: bool) -> &'static str {
    if fixed {
        "fixed"
    } else {
        "dynamic"
    }
}

/// Whether box `i` of `list` holds exactly the keys of `enc`.
fn same_keys(list: &BoxList, i: usize, enc: &EncodedBox) -> bool {
    list.min_x(i) == enc.min_x && list.max_x(i) == enc.max_x && list.uv(i) == enc.uv
}

/// Whether box `i` of `a` and box `j` of `b` overlap, on their keys.
fn overlap(a: &BoxList, i: usize, b: &BoxList, j: usize) -> bool {
    let (p, q) = (a.uv(i), b.uv(j));
    a.min_x(i) <= b.max_x(j)
        && b.min_x(j) <= a.max_x(i)
        && p[0] <= q[2]
        && q[0] <= p[2]
        && p[1] <= q[3]
        && q[1] <= p[3]
}

impl Cells {
    /// Checks every cell ([`Cell::check`]) and that no update is half done (nothing touched
    /// or marked); returns per cell the slots it holds with their tags.
    pub(crate) fn check(&self, store: &Store) -> Result<Vec<Vec<(u32, u32)>>, String> {
        if !self.touched.is_empty() || self.is_touched.iter().chain(&self.leavers).any(|&t| t) {
            return Err("cells: cells are still marked touched between updates".into());
        }
        if self.is_touched.len() != self.cells.len() || self.leavers.len() != self.cells.len() {
            return Err("cells: the marks are not one per cell".into());
        }
        self.cells.iter().map(|c| c.check(store)).collect()
    }

    /// The first cell holding two dynamic boxes or more, to corrupt in the checks' tests.
    #[cfg(test)]
    pub(crate) fn crowded_for_test(&mut self) -> &mut Cell {
        let c = (0..self.cells.len())
            .find(|&c| self.cells[c].dynamic.len() >= 2)
            .unwrap_or(0);
        &mut self.cells[c]
    }

    /// Swaps the first and last dynamic boxes of a crowded cell: a list out of order.
    #[cfg(test)]
    pub(crate) fn disorder_for_test(&mut self) {
        let list = &mut self.crowded_for_test().dynamic;
        let last = list.len() - 1;
        list.swap_for_test(0, last);
    }
}
