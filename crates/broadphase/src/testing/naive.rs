//! [`NaiveOracle`]: the contract written down a second time, sharing no code with the store,
//! the driver or any engine, so that the oracle every algorithm is checked against is checked
//! too.

use std::ops::ControlFlow;

use crate::{
    Aabb, Algorithm, BroadPhase, BruteForce, CastHit, Config, Error, Figures, Layer, LayerMask,
    Obb, Pair, PairEvents, ProxyDesc, ProxyId, Ray, RayHit, Snapshot, Stats,
};

/// A proxy: its box, its description.
type Proxy = (Aabb, ProxyDesc);

/// The contract of the crate's design (ids, generations, slot reuse, validation and its order,
/// the filter, events and pairs) in plain vectors: per slot, `Some` proxy while live and its
/// generation; every pair found by testing every two live proxies at each update.
///
/// What it answers itself: every mutation with its errors, `update`'s events, `pairs`,
/// `aabb`, `desc`, `contains`, `len`, the layer rules, `query_aabb` and `query_point`. The
/// other queries (sphere, oriented box, ray, box cast, nearest) are answered by a
/// [`BruteForce`] it keeps in step: their exact float arithmetic (slab tests, distances,
/// tie-breaking) lives in one implementation, and a second copy here would be a copy, not a
/// check; those answers are thus not cross-checked.
///
/// ```
/// use broadphase::testing::NaiveOracle;
/// use broadphase::{Aabb, BroadPhase, Config, Pair, ProxyDesc};
/// let mut bp = NaiveOracle::new(Config::default());
/// let a = bp.insert(Aabb::new([0.0; 3], [1.0; 3]), ProxyDesc::dynamic())?;
/// let b = bp.insert(Aabb::new([1.0; 3], [2.0; 3]), ProxyDesc::dynamic())?;
/// assert_eq!(bp.update()?.created(), &[Pair::new(a, b)]);
/// assert_eq!(bp.check_structure(), Ok(()));
/// # Ok::<(), broadphase::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct NaiveOracle {
    proxies: Vec<Option<Proxy>>,
    generations: Vec<u32>,
    /// Slots free for reuse, the last freed on top.
    free: Vec<u32>,
    /// Slots removed since the last update: free after it.
    pending: Vec<u32>,
    /// The proxies removed since the last update, with their descriptions.
    gone: Vec<(ProxyId, ProxyDesc)>,
    /// Per layer, the layers it collides with.
    rules: [u64; 64],
    limit: usize,
    /// The world bounds, if any: a proxy whose box misses them pairs with nothing.
    world: Option<Aabb>,
    /// The proxies out of the world's bounds at the last update.
    outside: Vec<ProxyId>,
    pairs: Vec<Pair>,
    events: PairEvents,
    /// The queries it does not answer itself.
    queries: BruteForce,
}

impl NaiveOracle {
    /// An empty oracle with `config`'s proxy limit.
    #[must_use]
    pub fn new(config: Config) -> Self {
        Self {
            proxies: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            pending: Vec::new(),
            gone: Vec::new(),
            rules: [u64::MAX; 64],
            limit: config.max_proxies.min(crate::MAX_PROXIES),
            world: config.world_bounds,
            outside: Vec::new(),
            pairs: Vec::new(),
            events: PairEvents::default(),
            queries: BruteForce::new(config.with_parallel(false)),
        }
    }

    /// The slot of a live proxy, or why `id` names none.
    fn slot(&self, id: ProxyId) -> Result<usize, Error> {
        let s = id.index() as usize;
        match (self.generations.get(s), self.proxies.get(s)) {
            (None, _) | (_, None) => Err(Error::UnknownProxy { id }),
            (Some(&g), _) if id.generation() > g => Err(Error::UnknownProxy { id }),
            (Some(&g), Some(Some(_))) if id.generation() == g => Ok(s),
            _ => Err(Error::StaleProxy { id }),
        }
    }

    fn check_layer(layer: Layer) -> Result<(), Error> {
        if layer.0 < 64 {
            Ok(())
        } else {
            Err(Error::InvalidLayer { layer: layer.0 })
        }
    }

    fn check_box(aabb: &Aabb) -> Result<(), Error> {
        let finite = aabb.min.iter().chain(&aabb.max).all(|v| v.is_finite());
        if !finite {
            return Err(Error::NonFiniteAabb { aabb: *aabb });
        }
        match (0..3).find(|&a| aabb.min[a] > aabb.max[a]) {
            Some(axis) => Err(Error::InvertedAabb { aabb: *aabb, axis }),
            None => Ok(()),
        }
    }

    /// Insertions fail while the world bounds are not a valid box.
    fn check_world(&self) -> Result<(), Error> {
        match self.world {
            Some(w) if Self::check_box(&w).is_err() => Err(Error::invalid_world_bounds(&w)),
            _ => Ok(()),
        }
    }

    /// Whether a proxy with this box lies in the world (touching its bounds counts).
    fn in_world(&self, aabb: &Aabb) -> bool {
        self.world.is_none_or(|w| w.overlaps(aabb))
    }

    fn collide(&self, a: Layer, b: Layer) -> bool {
        self.rules[usize::from(a.0)] >> b.0 & 1 != 0
    }

    fn allows(&self, a: &ProxyDesc, b: &ProxyDesc) -> bool {
        let both_fixed = a.is_fixed() && b.is_fixed();
        let same_group = a.group.0 != 0 && a.group == b.group;
        !both_fixed && !same_group && self.collide(a.layer, b.layer)
    }

    /// The live proxies, with their ids, in slot order.
    fn live(&self) -> impl Iterator<Item = (ProxyId, &Proxy)> + '_ {
        self.proxies.iter().enumerate().filter_map(|(s, p)| {
            p.as_ref()
                .map(|p| (ProxyId::from_raw_parts(s as u32, self.generations[s]), p))
        })
    }

    fn insert_unchecked(&mut self, aabb: Aabb, desc: ProxyDesc) -> ProxyId {
        let s = match self.free.pop() {
            Some(s) => s as usize,
            None => {
                self.proxies.push(None);
                self.generations.push(0);
                self.proxies.len() - 1
            }
        };
        self.proxies[s] = Some((aabb, desc));
        ProxyId::from_raw_parts(s as u32, self.generations[s])
    }

    fn overlapping(
        &self,
        q: &Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) {
        for (id, (aabb, desc)) in self.live() {
            if mask.contains(desc.layer) && aabb.overlaps(q) && visit(id).is_break() {
                return;
            }
        }
    }
}

/// What a forwarded call must return: the oracle already validated it the same way.
fn mirrored<T>(r: Result<T, Error>) {
    debug_assert!(r.is_ok(), "the queries' mirror disagrees");
}

impl BroadPhase for NaiveOracle {
    fn algorithm(&self) -> Algorithm {
        Algorithm::BruteForce
    }

    fn insert(&mut self, aabb: Aabb, desc: ProxyDesc) -> Result<ProxyId, Error> {
        self.check_world()?;
        Self::check_box(&aabb)?;
        Self::check_layer(desc.layer)?;
        if self.len() + 1 > self.limit {
            return Err(Error::CapacityExceeded { limit: self.limit });
        }
        mirrored(self.queries.insert(aabb, desc));
        Ok(self.insert_unchecked(aabb, desc))
    }

    fn insert_batch(&mut self, items: &[(Aabb, ProxyDesc)]) -> Result<Vec<ProxyId>, Error> {
        self.check_world()?;
        for (aabb, desc) in items {
            Self::check_box(aabb)?;
            Self::check_layer(desc.layer)?;
        }
        if self.len() + items.len() > self.limit {
            return Err(Error::CapacityExceeded { limit: self.limit });
        }
        mirrored(self.queries.insert_batch(items));
        Ok(items
            .iter()
            .map(|&(aabb, desc)| self.insert_unchecked(aabb, desc))
            .collect())
    }

    fn set_aabb(&mut self, id: ProxyId, aabb: Aabb) -> Result<(), Error> {
        let s = self.slot(id)?;
        Self::check_box(&aabb)?;
        mirrored(self.queries.set_aabb(id, aabb));
        if let Some(p) = &mut self.proxies[s] {
            p.0 = aabb;
        }
        Ok(())
    }

    fn set_desc(&mut self, id: ProxyId, desc: ProxyDesc) -> Result<(), Error> {
        let s = self.slot(id)?;
        Self::check_layer(desc.layer)?;
        mirrored(self.queries.set_desc(id, desc));
        if let Some(p) = &mut self.proxies[s] {
            p.1 = desc;
        }
        Ok(())
    }

    fn remove(&mut self, id: ProxyId) -> Result<(), Error> {
        let s = self.slot(id)?;
        mirrored(self.queries.remove(id));
        if let Some(p) = self.proxies[s].take() {
            self.gone.push((id, p.1));
        }
        // A slot whose generation would wrap is never used again.
        if let Some(g) = self.generations[s].checked_add(1) {
            self.generations[s] = g;
            self.pending.push(s as u32);
        }
        Ok(())
    }

    fn update(&mut self) -> Result<&PairEvents, Error> {
        mirrored(self.queries.update());
        let (live, outside): (Vec<(ProxyId, &Proxy)>, Vec<_>) =
            self.live().partition(|(_, p)| self.in_world(&p.0));
        let outside: Vec<ProxyId> = outside.into_iter().map(|(id, _)| id).collect();
        let mut now = Vec::new();
        for (k, (a, pa)) in live.iter().enumerate() {
            for (b, pb) in &live[k + 1..] {
                if pa.0.overlaps(&pb.0) && self.allows(&pa.1, &pb.1) {
                    now.push(Pair::new(*a, *b));
                }
            }
        }
        now.sort_unstable();
        let created = now.iter().filter(|p| self.pairs.binary_search(p).is_err());
        let deleted = self.pairs.iter().filter(|p| now.binary_search(p).is_err());
        let deleted: Vec<Pair> = deleted.copied().collect();
        // The removed proxies the deleted pairs name.
        let mut removed: Vec<(ProxyId, ProxyDesc)> = std::mem::take(&mut self.gone)
            .into_iter()
            .filter(|&(id, _)| deleted.iter().any(|p| p.a == id || p.b == id))
            .collect();
        removed.sort_unstable_by_key(|&(id, _)| id);
        self.events = PairEvents {
            created: created.copied().collect(),
            deleted,
            removed,
        };
        self.pairs = now;
        self.outside = outside;
        self.free.append(&mut self.pending);
        Ok(&self.events)
    }

    fn events(&self) -> &PairEvents {
        &self.events
    }

    fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    fn aabb(&self, id: ProxyId) -> Result<Aabb, Error> {
        let s = self.slot(id)?;
        self.proxies[s].map(|p| p.0).ok_or(Error::StaleProxy { id })
    }

    fn desc(&self, id: ProxyId) -> Result<ProxyDesc, Error> {
        let s = self.slot(id)?;
        self.proxies[s].map(|p| p.1).ok_or(Error::StaleProxy { id })
    }

    fn contains(&self, id: ProxyId) -> bool {
        self.slot(id).is_ok()
    }

    fn len(&self) -> usize {
        self.proxies.iter().flatten().count()
    }

    fn stats(&self) -> Stats {
        let fixed = self.live().filter(|(_, p)| p.1.is_fixed()).count();
        Stats {
            proxies: self.len(),
            fixed,
            dynamic: self.len() - fixed,
            pairs: self.pairs.len(),
            created: self.events.created.len(),
            deleted: self.events.deleted.len(),
            changed: 0,
            tests: 0,
            memory_bytes: 0,
            figures: Figures::None,
        }
    }

    /// Its own bookkeeping: free slots dead and listed once, pairs sorted and each once.
    fn check_structure(&self) -> Result<(), String> {
        let mut listed = vec![false; self.proxies.len()];
        for &s in self.free.iter().chain(&self.pending) {
            let s = s as usize;
            if self.proxies.get(s).is_none_or(Option::is_some)
                || std::mem::replace(&mut listed[s], true)
            {
                return Err(format!(
                    "naive: free slot {s} is live, unknown or listed twice"
                ));
            }
        }
        if self.pairs.windows(2).any(|w| w[0] >= w[1]) {
            return Err("naive: pairs out of order".into());
        }
        self.queries.check_structure()
    }

    fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), Error> {
        if shift.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteShift { shift });
        }
        let offset = shift.map(|v| -v);
        let world = self.world.map(|w| w.translated(offset));
        if self.world.is_some_and(|w| Self::check_box(&w).is_ok())
            && world.is_some_and(|w| Self::check_box(&w).is_err())
        {
            return Err(Error::world_shift_overflow(shift));
        }
        for (id, p) in self.live() {
            if Self::check_box(&p.0.translated(offset)).is_err() {
                return Err(Error::ShiftOverflow { shift, id });
            }
        }
        mirrored(self.queries.shift_origin(shift));
        for p in self.proxies.iter_mut().flatten() {
            p.0 = p.0.translated(offset);
        }
        if self.world.is_some_and(|w| Self::check_box(&w).is_ok()) {
            self.world = world;
        }
        Ok(())
    }

    fn set_layers_collide(&mut self, a: Layer, b: Layer, collide: bool) -> Result<(), Error> {
        Self::check_layer(a)?;
        Self::check_layer(b)?;
        mirrored(self.queries.set_layers_collide(a, b, collide));
        let (ia, ib) = (usize::from(a.0), usize::from(b.0));
        if collide {
            self.rules[ia] |= 1 << b.0;
            self.rules[ib] |= 1 << a.0;
        } else {
            self.rules[ia] &= !(1 << b.0);
            self.rules[ib] &= !(1 << a.0);
        }
        Ok(())
    }

    fn outside_world(&self) -> Vec<ProxyId> {
        // Those removed since the last update are gone.
        let mut ids: Vec<ProxyId> = self
            .outside
            .iter()
            .copied()
            .filter(|&id| self.slot(id).is_ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    fn layers_collide(&self, a: Layer, b: Layer) -> bool {
        a.0 < 64 && b.0 < 64 && self.collide(a, b)
    }

    fn snapshot(&self) -> Snapshot {
        // The mirror holds the same proxies with the same ids and boxes.
        self.queries.snapshot()
    }

    fn query_aabb(
        &self,
        aabb: Aabb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        Self::check_box(&aabb)?;
        self.overlapping(&aabb, mask, visit);
        Ok(())
    }

    fn query_point(
        &self,
        p: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        if let Some(&bad) = p.iter().find(|v| !v.is_finite()) {
            return Err(Error::InvalidParameter {
                name: "query point",
                value: f64::from(bad),
                expected: "a finite value",
            });
        }
        self.overlapping(&Aabb::new(p, p), mask, visit);
        Ok(())
    }

    fn query_sphere(
        &self,
        center: [f32; 3],
        radius: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        self.queries.query_sphere(center, radius, mask, visit)
    }

    fn query_obb(
        &self,
        obb: &Obb,
        mask: LayerMask,
        visit: &mut dyn FnMut(ProxyId) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        self.queries.query_obb(obb, mask, visit)
    }

    fn ray_cast(
        &self,
        ray: &Ray,
        max_t: f32,
        mask: LayerMask,
        visit: &mut dyn FnMut(RayHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        self.queries.ray_cast(ray, max_t, mask, visit)
    }

    fn box_cast(
        &self,
        aabb: Aabb,
        motion: [f32; 3],
        mask: LayerMask,
        visit: &mut dyn FnMut(CastHit) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        self.queries.box_cast(aabb, motion, mask, visit)
    }

    fn nearest(
        &self,
        p: [f32; 3],
        k: usize,
        mask: LayerMask,
    ) -> Result<Vec<(ProxyId, f32)>, Error> {
        self.queries.nearest(p, k, mask)
    }
}
