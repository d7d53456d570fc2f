//! What a proxy is, besides its box: mobility, layer, group and user data.

/// Whether a proxy moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Mobility {
    /// Static: level geometry. May be moved (it costs more than moving a dynamic proxy) and
    /// never pairs with another fixed proxy.
    Fixed,
    /// Moves freely; pairs with everything the filter allows.
    #[default]
    Dynamic,
}

/// A collision layer, `0..64`. Which layers collide is set with
/// [`BroadPhase::set_layers_collide`](crate::BroadPhase::set_layers_collide); by default all do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Layer(pub u8);

impl Layer {
    /// The number of layers.
    pub const COUNT: usize = 64;
}

/// A collision group: proxies of the same non-zero group never pair (the parts of one ragdoll,
/// say). Group 0 means "no group".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Group(pub u32);

impl Group {
    /// No group: pairs with everything the other rules allow.
    pub const NONE: Group = Group(0);
}

/// A set of layers, one bit per layer: queries report only proxies on these layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayerMask(pub u64);

impl LayerMask {
    /// Every layer.
    pub const ALL: LayerMask = LayerMask(u64::MAX);
    /// No layer.
    pub const NONE: LayerMask = LayerMask(0);

    /// The mask holding exactly `layer` (empty when the layer is out of range).
    #[inline]
    #[must_use]
    pub fn of(layer: Layer) -> Self {
        LayerMask(1u64.checked_shl(u32::from(layer.0)).unwrap_or(0))
    }

    /// Whether `layer` is in the mask.
    #[inline]
    #[must_use]
    pub fn contains(self, layer: Layer) -> bool {
        self.0 & Self::of(layer).0 != 0
    }

    /// The mask with `layer` added.
    #[inline]
    #[must_use]
    pub fn with(self, layer: Layer) -> Self {
        LayerMask(self.0 | Self::of(layer).0)
    }
}

impl Default for LayerMask {
    fn default() -> Self {
        Self::ALL
    }
}

/// Everything about a proxy except its box.
///
/// ```
/// use broadphase::{Group, Layer, Mobility, ProxyDesc};
/// let wall = ProxyDesc::fixed().with_layer(Layer(1));
/// let arm = ProxyDesc::dynamic().with_group(Group(7)).with_user_data(42);
/// assert_eq!(wall.mobility, Mobility::Fixed);
/// assert_eq!(arm.user_data, 42);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ProxyDesc {
    /// Fixed or dynamic.
    pub mobility: Mobility,
    /// The collision layer, `0..64`.
    pub layer: Layer,
    /// The collision group; 0 for none.
    pub group: Group,
    /// Anything the caller wants to keep with the proxy; the broad phase never reads it.
    pub user_data: u64,
}

impl ProxyDesc {
    /// A dynamic proxy on layer 0 with no group.
    #[inline]
    #[must_use]
    pub const fn dynamic() -> Self {
        Self {
            mobility: Mobility::Dynamic,
            layer: Layer(0),
            group: Group(0),
            user_data: 0,
        }
    }

    /// A fixed (static) proxy on layer 0 with no group.
    #[inline]
    #[must_use]
    pub const fn fixed() -> Self {
        Self {
            mobility: Mobility::Fixed,
            ..Self::dynamic()
        }
    }

    /// The same description on `layer`.
    #[inline]
    #[must_use]
    pub const fn with_layer(self, layer: Layer) -> Self {
        Self { layer, ..self }
    }

    /// The same description in `group`.
    #[inline]
    #[must_use]
    pub const fn with_group(self, group: Group) -> Self {
        Self { group, ..self }
    }

    /// The same description carrying `user_data`.
    #[inline]
    #[must_use]
    pub const fn with_user_data(self, user_data: u64) -> Self {
        Self { user_data, ..self }
    }

    /// Whether the proxy is fixed.
    #[inline]
    #[must_use]
    pub const fn is_fixed(&self) -> bool {
        matches!(self.mobility, Mobility::Fixed)
    }
}
