//! `Abp`: automatic box pruning, PhysX's region-free broad phase, made column-wise.
//!
//! PhysX's ABP keeps the boxes sorted along one axis and, each update, sweeps the moved dynamic
//! boxes among themselves (complete box pruning) and against the unmoved dynamic and the fixed
//! boxes (bipartite box pruning); fixed boxes are re-sorted only when they change. This type does
//! the same, inside each column of an automatic grid over the two non-sweep axes
//! ([`layout`]): a plain sweep tests N²·w/L candidates in a dense scene, the columns divide
//! that by their number. A pair is reported only in the one column that holds the corner of
//! its overlap, so pairs of boxes that share several columns are found once.
//!
//! Per update:
//! 1. boxes that changed leave their old columns (one in-place compaction per column touched);
//! 2. the changed boxes, radix-sorted by their sweep-axis minimum, are dealt in that order into
//!    the per-column "moved" lists, which are therefore sorted;
//! 3. in each touched column: moved dynamic × moved dynamic (complete), moved dynamic × unmoved
//!    dynamic, moved dynamic × all fixed, moved fixed × unmoved dynamic (bipartite);
//! 4. the moved lists are merged into the column's sorted lists.
//!
//! Pairs between two unmoved boxes are not tested: the pair set keeps them.

mod layout;

use std::collections::HashSet;
use std::ops::ControlFlow;

use crate::encode::encode;
use crate::pairs::{diff_pairs, pair_key};
use crate::prune::{bipartite, complete, BoxList, EncodedBox};
use crate::query::{forward_queries, segment_bounds, Ray, SpatialIndex};
use crate::store::{forward_to_store, Store};
use crate::{Aabb, Algorithm, BroadPhase, Config, Error, Pair, PairEvents, Stats};
pub use layout::AbpSettings;
use layout::{is_home, ColumnRange, Layout};

/// A box arriving in a column this update, before the column sorts its arrivals.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    enc: EncodedBox,
    slot: u32,
    tag: u32,
}

/// One column of the grid: its fixed and dynamic boxes, each sorted on the sweep axis, and
/// this update's arrivals.
#[derive(Clone, Debug, Default)]
struct Column {
    fixed: BoxList,
    dynamic: BoxList,
    /// Arrivals as dealt, in slot order: each column sorts its own, in cache.
    arriving_fixed: Vec<Arrival>,
    arriving_dynamic: Vec<Arrival>,
    /// The arrivals sorted, ready to sweep.
    moved_fixed: BoxList,
    moved_dynamic: BoxList,
    /// Keys of the pairs whose home is this column, sorted.
    pairs: Vec<u64>,
}

/// Automatic box pruning: sorted sweeps in automatic columns, with fixed boxes kept sorted
/// between updates. The default choice for scenes where many objects move.
///
/// ```
/// use broadphase::{Abp, Aabb, BroadPhase, Config, Pair, ProxyDesc};
/// let mut bp = Abp::new(Config::default());
/// let ground = bp.insert(Aabb::new([-50.0, -1.0, -50.0], [50.0, 0.0, 50.0]), ProxyDesc::fixed())?;
/// let ball = bp.insert(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(ground, ball)]);
/// bp.set_aabb(ball, Aabb::new([0.0, 2.0, 0.0], [1.0, 3.0, 1.0]))?;
/// assert_eq!(bp.update()?.deleted(), &[Pair::new(ground, ball)]);
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Abp {
    store: Store,
    settings: AbpSettings,
    layout: Layout,
    columns: Vec<Column>,
    /// Per slot: the columns holding its entries, while the structure holds it.
    ranges: Vec<ColumnRange>,
    /// Per slot: whether its centre lies outside the layout (it sits in a border column).
    outside: Vec<bool>,
    /// Live proxies the layout was chosen for; `None` before the first update.
    layout_for: Option<usize>,
    /// Entries in all columns (a box counts once per column it covers).
    entries: usize,
    /// Boxes in the structure whose centre lies outside the layout.
    outside_count: usize,
    /// Columns touched by this update.
    touched: Vec<u32>,
    /// Per column: in `touched`. Kept apart from the columns, which are large, so that
    /// marking them stays in cache.
    is_touched: Vec<bool>,
    /// Per column: some box left it this update (compact its lists).
    leavers: Vec<bool>,
    /// Scratch for sorting a column's arrivals.
    order: Vec<u64>,
    /// A column's pairs found this update, then its merged pairs (scratch).
    found: Vec<u64>,
    merged: Vec<u64>,
    /// Candidate created and deleted pair keys of this update.
    created: Vec<u64>,
    deleted: Vec<u64>,
    /// Candidates tested this update.
    tests: u64,
    rebuilds: u64,
}

impl Abp {
    /// An empty broad phase with the default [`AbpSettings`].
    #[must_use]
    pub fn new(config: Config) -> Self {
        Self::with_checked_settings(config, AbpSettings::default())
    }

    /// An empty broad phase with chosen column settings.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the settings are invalid ([`AbpSettings::validate`]).
    pub fn with_settings(config: Config, settings: AbpSettings) -> Result<Self, Error> {
        settings.validate()?;
        Ok(Self::with_checked_settings(config, settings))
    }

    fn with_checked_settings(config: Config, settings: AbpSettings) -> Self {
        Self {
            store: Store::new(&config),
            settings,
            layout: Layout::single(0),
            columns: vec![Column::default()],
            ranges: Vec::new(),
            outside: Vec::new(),
            layout_for: None,
            entries: 0,
            outside_count: 0,
            touched: Vec::new(),
            is_touched: vec![false],
            leavers: vec![false],
            order: Vec::new(),
            found: Vec::new(),
            merged: Vec::new(),
            created: Vec::new(),
            deleted: Vec::new(),
            tests: 0,
            rebuilds: 0,
        }
    }

    /// The number of columns the boxes are sorted in.
    #[must_use]
    pub fn columns(&self) -> usize {
        self.layout.columns()
    }

    /// Whether the population changed enough since the layout was chosen to choose again.
    fn needs_new_layout(&self) -> bool {
        let n = self.store.len();
        match self.layout_for {
            None => true,
            Some(built) => {
                n > 2 * built + 256
                    || (4 * n < built && self.layout.columns() > 1)
                    || (self.layout.columns() > 1 && self.outside_count > n / 4 + 64)
                    || self.entries > 4 * n + 1024
            }
        }
    }

    /// Chooses a new layout from the live boxes and empties every column: everything will be
    /// dealt in again as moved.
    fn new_layout(&mut self) {
        // Every pair will be found again in the new columns: all the old ones become deleted
        // candidates, which the pairs found again cancel.
        self.deleted.extend(self.store.pair_keys());
        let s = &self.store;
        let live = (0..s.slot_count()).filter(|&i| s.is_alive(i));
        self.layout = Layout::choose(&self.settings, s.len(), live.map(|i| s.aabb_at(i)));
        let columns = self.layout.columns();
        self.columns.clear();
        self.columns.resize_with(columns, Column::default);
        self.is_touched = vec![false; columns];
        self.leavers = vec![false; columns];
        self.layout_for = Some(s.len());
        self.entries = 0;
        self.outside_count = 0;
        self.outside.iter_mut().for_each(|o| *o = false);
        self.rebuilds += 1;
    }

    fn touch(&mut self, c: usize) {
        if !self.is_touched[c] {
            self.is_touched[c] = true;
            self.touched.push(c as u32);
        }
    }

    /// Takes the changed boxes out of the columns they were in.
    fn remove_leavers(&mut self) {
        // When most proxies changed, nearly every column has leavers: compacting them all
        // beats finding which.
        let bulk = 2 * self.store.dirty().len() >= self.store.len();
        for k in 0..self.store.dirty().len() {
            let slot = self.store.dirty()[k] as usize;
            if !self.store.was_in(slot) {
                continue;
            }
            let r = self.ranges[slot];
            self.entries -= r.count();
            if std::mem::take(&mut self.outside[slot]) {
                self.outside_count -= 1;
            }
            if !bulk {
                for u in r.u0..=r.u1 {
                    for v in r.v0..=r.v1 {
                        let c = self.layout.index(usize::from(u), usize::from(v));
                        self.touch(c);
                        self.leavers[c] = true;
                    }
                }
            }
        }
        if bulk {
            for c in 0..self.columns.len() {
                self.touch(c);
                self.leavers[c] = true;
            }
        }
        let store = &self.store;
        for &c in &self.touched {
            if std::mem::take(&mut self.leavers[c as usize]) {
                let col = &mut self.columns[c as usize];
                col.fixed.retain(|id| !store.is_dirty(id as usize));
                col.dynamic.retain(|id| !store.is_dirty(id as usize));
            }
        }
    }

    /// Encodes the boxes to (re)insert and deals them into the columns they cover. The pass
    /// follows slot order, so reading the store is sequential; each column sorts its own
    /// arrivals later, in cache (a global sort would read them back in random order).
    fn deal_movers(&mut self, everything: bool) {
        let slots = self.store.slot_count();
        if self.ranges.len() < slots {
            self.ranges.resize(slots, ColumnRange::default());
            self.outside.resize(slots, false);
        }
        let count = if everything {
            slots
        } else {
            self.store.dirty().len()
        };
        for k in 0..count {
            let slot = if everything {
                k
            } else {
                self.store.dirty()[k] as usize
            };
            if !self.store.is_alive(slot) {
                continue;
            }
            let aabb = self.store.aabb_at(slot);
            let fixed = self.store.desc_at(slot).is_fixed();
            let r = self.layout.range(aabb);
            let outside = self.layout.is_outside(aabb);
            self.ranges[slot] = r;
            self.outside[slot] = outside;
            self.outside_count += usize::from(outside);
            self.entries += r.count();
            let arrival = Arrival {
                enc: EncodedBox::new(aabb, self.layout.axes),
                slot: slot as u32,
                tag: r.home_tag(),
            };
            for u in r.u0..=r.u1 {
                for v in r.v0..=r.v1 {
                    let c = self.layout.index(usize::from(u), usize::from(v));
                    self.touch(c);
                    let col = &mut self.columns[c];
                    if fixed {
                        col.arriving_fixed.push(arrival);
                    } else {
                        col.arriving_dynamic.push(arrival);
                    }
                }
            }
        }
    }

    /// Finds the new pairs of every touched column, then merges its arrivals in.
    fn prune_touched(&mut self) {
        self.touched.sort_unstable();
        let cells_v = self.layout.cells[1];
        let store = &self.store;
        let mut tests = 0;
        for &c in &self.touched {
            let col = &mut self.columns[c as usize];
            sort_into(
                &mut col.arriving_dynamic,
                &mut self.order,
                &mut col.moved_dynamic,
            );
            sort_into(
                &mut col.arriving_fixed,
                &mut self.order,
                &mut col.moved_fixed,
            );
            let (u, v) = (c / cells_v as u32, c % cells_v as u32);
            let (md, mf, d, f) = (
                &col.moved_dynamic,
                &col.moved_fixed,
                &col.dynamic,
                &col.fixed,
            );
            let found = &mut self.found;
            found.clear();
            // Fixed boxes are never swept against fixed boxes.
            let mut report = |a: &BoxList, i: usize, b: &BoxList, j: usize| {
                let (x, y) = (a.id(i), b.id(j));
                if is_home(u, v, a.tag(i), b.tag(j)) && store.allows_unless_both_fixed(x, y) {
                    found.push(pair_key(x, y));
                }
            };
            tests += complete(md, |i, j| report(md, i, md, j));
            tests += bipartite(md, d, |i, j| report(md, i, d, j));
            tests += bipartite(md, f, |i, j| report(md, i, f, j));
            tests += bipartite(md, mf, |i, j| report(md, i, mf, j));
            tests += bipartite(mf, d, |i, j| report(mf, i, d, j));
            // Each pair is found at most once per column: the five sweeps cover disjoint
            // pairs of lists, and a pair's home column is unique.
            found.sort_unstable();
            diff_pairs(
                &col.pairs,
                found,
                |slot| store.is_dirty(slot as usize),
                &mut self.merged,
                &mut self.created,
                &mut self.deleted,
            );
            std::mem::swap(&mut col.pairs, &mut self.merged);
            merge_arrivals(&mut col.dynamic, &mut col.moved_dynamic);
            merge_arrivals(&mut col.fixed, &mut col.moved_fixed);
            self.is_touched[c as usize] = false;
        }
        self.tests = tests;
        self.touched.clear();
    }

    /// Turns the columns' candidate changes into the update's events. A pair whose home
    /// column changed was deleted from the old column and created in the new one: it is in
    /// both candidate lists, and in neither event list.
    fn finish(&mut self) {
        self.created.sort_unstable();
        self.deleted.sort_unstable();
        cancel_common(&mut self.created, &mut self.deleted);
        self.store.tests = self.tests;
        self.store.finish_update_with(&self.created, &self.deleted);
        self.created.clear();
        self.deleted.clear();
    }
}

/// Merges a column's sorted arrivals into its sorted list and empties `arrivals`. When every
/// box of the column moved (all of them, in a scene where everything moves), the arrivals
/// simply become the list.
fn merge_arrivals(list: &mut BoxList, arrivals: &mut BoxList) {
    if list.is_empty() {
        std::mem::swap(list, arrivals);
    } else {
        list.merge_in(arrivals);
        list.shrink();
    }
    arrivals.clear();
}

/// Removes the keys present in both sorted lists from both.
fn cancel_common(a: &mut Vec<u64>, b: &mut Vec<u64>) {
    if a.is_empty() || b.is_empty() {
        return;
    }
    let (mut i, mut j, mut wa, mut wb) = (0, 0, 0, 0);
    while i < a.len() || j < b.len() {
        let x = a.get(i).copied().unwrap_or(u64::MAX);
        let y = b.get(j).copied().unwrap_or(u64::MAX);
        if x == y {
            i += 1;
            j += 1;
        } else if x < y {
            a[wa] = x;
            wa += 1;
            i += 1;
        } else {
            b[wb] = y;
            wb += 1;
            j += 1;
        }
    }
    a.truncate(wa);
    b.truncate(wb);
}

/// Sorts a column's arrivals on the sweep axis and appends them to `list` (emptied first).
/// Sorting `key << 32 | position` words and then copying is cheaper than moving whole
/// arrivals around; the positions make the order total, so the sort's result is fixed.
fn sort_into(arrivals: &mut Vec<Arrival>, order: &mut Vec<u64>, list: &mut BoxList) {
    list.clear();
    if arrivals.is_empty() {
        return;
    }
    order.clear();
    order.extend(
        arrivals
            .iter()
            .enumerate()
            .map(|(i, a)| (u64::from(a.enc.min_x) << 32) | i as u64),
    );
    order.sort_unstable();
    for &o in order.iter() {
        let a = &arrivals[(o & 0xFFFF_FFFF) as usize];
        list.push(&a.enc, a.slot, a.tag);
    }
    arrivals.clear();
}

impl Abp {
    /// Visits the boxes of column `(u, v)` that may overlap `q`; `home` says, from a box's
    /// tag, whether this column is where the query reports it.
    fn scan_column(
        &self,
        u: usize,
        v: usize,
        q: &Aabb,
        home: &mut dyn FnMut(u32, u32) -> bool,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let [x, a, b] = self.layout.axes;
        let q_min_x = encode(q.min[x]);
        let q_uv = [
            encode(q.min[a]),
            encode(q.min[b]),
            encode(q.max[a]),
            encode(q.max[b]),
        ];
        let col = &self.columns[self.layout.index(u, v)];
        for list in [&col.fixed, &col.dynamic] {
            for i in list.sweep_range(q.min[x], q.max[x]) {
                let uv = list.uv(i);
                let hit = list.max_x(i) >= q_min_x
                    && uv[0] <= q_uv[2]
                    && q_uv[0] <= uv[2]
                    && uv[1] <= q_uv[3]
                    && q_uv[1] <= uv[3];
                if hit && home(list.tag(i), list.id(i)) {
                    visit(list.id(i))?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl SpatialIndex for Abp {
    /// The columns the box covers, binary-searched on the sweep axis; a box in several of
    /// them is visited in the first the query covers.
    fn candidates(
        &self,
        bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let r = self.layout.range(bounds);
        for u in r.u0..=r.u1 {
            for v in r.v0..=r.v1 {
                let mut home =
                    |tag: u32, _id: u32| is_home(u32::from(u), u32::from(v), tag, r.home_tag());
                self.scan_column(usize::from(u), usize::from(v), bounds, &mut home, visit)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The columns the ray crosses, each searched over the stretch of the ray inside it.
    fn ray_candidates(
        &self,
        ray: &Ray,
        max_t: f32,
        world: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Some(segment) = segment_bounds(ray, max_t, world) else {
            return ControlFlow::Continue(());
        };
        let [_, a, b] = self.layout.axes;
        let r = self.layout.range(&segment);
        // Boxes straddling several columns may be met in more than one.
        let mut seen: HashSet<u32> = HashSet::new();
        for u in r.u0..=r.u1 {
            for v in r.v0..=r.v1 {
                let (u, v) = (usize::from(u), usize::from(v));
                let mut column = *world;
                for (k, axis, i) in [(0, a, u), (1, b, v)] {
                    let (lo, hi) = self.layout.column_span(k, i);
                    column.min[axis] = column.min[axis].max(lo as f32);
                    column.max[axis] = column.max[axis].min(hi as f32);
                }
                if !column.is_valid() {
                    continue;
                }
                let Some(stretch) = segment_bounds(ray, max_t, &column) else {
                    continue;
                };
                // Rounding of the ray's points: a relative hair more all round.
                let pad = stretch
                    .min
                    .iter()
                    .chain(&stretch.max)
                    .fold(0.0f32, |m, c| m.max(c.abs()))
                    * 1e-6;
                let stretch = stretch.inflated(pad + f32::MIN_POSITIVE);
                let ranges = &self.ranges;
                let mut home = |_tag: u32, id: u32| {
                    ranges.get(id as usize).is_some_and(|r| r.count() == 1) || seen.insert(id)
                };
                self.scan_column(u, v, &stretch, &mut home, visit)?;
            }
        }
        ControlFlow::Continue(())
    }
}

impl BroadPhase for Abp {
    forward_to_store!();
    forward_queries!();

    fn algorithm(&self) -> Algorithm {
        Algorithm::Abp
    }

    fn update(&mut self) -> Result<&PairEvents, Error> {
        self.store.begin_update();
        if !self.store.dirty().is_empty() {
            let everything = self.needs_new_layout();
            if everything {
                self.new_layout();
            } else {
                self.remove_leavers();
            }
            self.deal_movers(everything);
            self.prune_touched();
        }
        self.finish();
        Ok(&self.store.events)
    }

    fn pairs(&self) -> &[Pair] {
        self.store.pairs.pairs()
    }

    fn stats(&self) -> Stats {
        let mut stats = self.store.stats();
        stats.memory_bytes += self
            .columns
            .iter()
            .map(|c| {
                c.fixed.memory_bytes()
                    + c.dynamic.memory_bytes()
                    + (c.arriving_fixed.capacity() + c.arriving_dynamic.capacity())
                        * std::mem::size_of::<Arrival>()
                    + c.pairs.capacity() * 8
                    + c.moved_fixed.memory_bytes()
                    + c.moved_dynamic.memory_bytes()
            })
            .sum::<usize>()
            + self.ranges.capacity() * std::mem::size_of::<ColumnRange>();
        stats.counters = vec![
            ("columns", self.layout.columns() as u64),
            ("sweep axis", self.layout.axes[0] as u64),
            ("entries", self.entries as u64),
            ("outside", self.outside_count as u64),
            ("layouts", self.rebuilds),
        ];
        stats
    }
}
