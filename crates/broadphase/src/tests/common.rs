//! Pieces shared by the suites in `src/tests/`.

/// Implements every required method of `BroadPhase` but `update` by forwarding to
/// `self.$field`, leaving the provided ones (`set_aabbs`, `remove_batch`, `is_empty`,
/// `ray_cast_closest`) to the trait's defaults: for wrappers that test one thing (the defaults
/// themselves, or what happens at an update).
macro_rules! forward_all_but_update {
    ($field:tt) => {
        fn algorithm(&self) -> broadphase::Algorithm {
            self.$field.algorithm()
        }
        fn insert(
            &mut self,
            aabb: broadphase::Aabb,
            desc: broadphase::ProxyDesc,
        ) -> Result<broadphase::ProxyId, broadphase::Error> {
            self.$field.insert(aabb, desc)
        }
        fn insert_batch(
            &mut self,
            items: &[(broadphase::Aabb, broadphase::ProxyDesc)],
        ) -> Result<Vec<broadphase::ProxyId>, broadphase::Error> {
            self.$field.insert_batch(items)
        }
        fn set_aabb(
            &mut self,
            id: broadphase::ProxyId,
            aabb: broadphase::Aabb,
        ) -> Result<(), broadphase::Error> {
            self.$field.set_aabb(id, aabb)
        }
        fn set_desc(
            &mut self,
            id: broadphase::ProxyId,
            desc: broadphase::ProxyDesc,
        ) -> Result<(), broadphase::Error> {
            self.$field.set_desc(id, desc)
        }
        fn remove(&mut self, id: broadphase::ProxyId) -> Result<(), broadphase::Error> {
            self.$field.remove(id)
        }
        fn events(&self) -> &broadphase::PairEvents {
            self.$field.events()
        }
        fn pairs(&self) -> &[broadphase::Pair] {
            self.$field.pairs()
        }
        fn aabb(&self, id: broadphase::ProxyId) -> Result<broadphase::Aabb, broadphase::Error> {
            self.$field.aabb(id)
        }
        fn desc(
            &self,
            id: broadphase::ProxyId,
        ) -> Result<broadphase::ProxyDesc, broadphase::Error> {
            self.$field.desc(id)
        }
        fn contains(&self, id: broadphase::ProxyId) -> bool {
            self.$field.contains(id)
        }
        fn len(&self) -> usize {
            self.$field.len()
        }
        fn stats(&self) -> broadphase::Stats {
            self.$field.stats()
        }
        fn check_structure(&self) -> Result<(), String> {
            self.$field.check_structure()
        }
        fn shift_origin(&mut self, shift: [f32; 3]) -> Result<(), broadphase::Error> {
            self.$field.shift_origin(shift)
        }
        fn set_layers_collide(
            &mut self,
            a: broadphase::Layer,
            b: broadphase::Layer,
            collide: bool,
        ) -> Result<(), broadphase::Error> {
            self.$field.set_layers_collide(a, b, collide)
        }
        fn outside_world(&self) -> Vec<broadphase::ProxyId> {
            self.$field.outside_world()
        }
        fn snapshot(&self) -> broadphase::Snapshot {
            self.$field.snapshot()
        }
        fn layers_collide(&self, a: broadphase::Layer, b: broadphase::Layer) -> bool {
            self.$field.layers_collide(a, b)
        }
        fn query_aabb(
            &self,
            aabb: broadphase::Aabb,
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::ProxyId) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.query_aabb(aabb, mask, visit)
        }
        fn query_point(
            &self,
            p: [f32; 3],
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::ProxyId) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.query_point(p, mask, visit)
        }
        fn query_sphere(
            &self,
            center: [f32; 3],
            radius: f32,
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::ProxyId) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.query_sphere(center, radius, mask, visit)
        }
        fn query_obb(
            &self,
            obb: &broadphase::Obb,
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::ProxyId) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.query_obb(obb, mask, visit)
        }
        fn ray_cast(
            &self,
            ray: &broadphase::Ray,
            max_t: f32,
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::RayHit) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.ray_cast(ray, max_t, mask, visit)
        }
        fn box_cast(
            &self,
            aabb: broadphase::Aabb,
            motion: [f32; 3],
            mask: broadphase::LayerMask,
            visit: &mut dyn FnMut(broadphase::CastHit) -> std::ops::ControlFlow<()>,
        ) -> Result<(), broadphase::Error> {
            self.$field.box_cast(aabb, motion, mask, visit)
        }
        fn nearest(
            &self,
            p: [f32; 3],
            k: usize,
            mask: broadphase::LayerMask,
        ) -> Result<Vec<(broadphase::ProxyId, f32)>, broadphase::Error> {
            self.$field.nearest(p, k, mask)
        }
    };
}
