//! The scene passes' group 2: the engine's buffers that a graph's scene passes read
//! ([`crate::MAX_SCENE_BUFFERS`]), as material pipelines see them.

use switchyard_backend::BindGroupLayoutId;

use crate::frame_graph::BufferBinding;

/// The kinds of the scene passes' group 2 bindings, two bits each from the low bits (1:
/// uniform, 2: storage), at most four ([`crate::MAX_SCENE_BUFFERS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct SceneKinds(pub(crate) u8);

impl SceneKinds {
    pub(crate) fn of(kinds: impl IntoIterator<Item = BufferBinding>) -> Self {
        Self(kinds.into_iter().take(4).enumerate().fold(0, |code, (j, k)| {
            code | match k {
                BufferBinding::Uniform => 1,
                BufferBinding::Storage => 2,
            } << (2 * j)
        }))
    }

    pub(crate) fn kinds(self) -> impl Iterator<Item = BufferBinding> {
        (0..4).map_while(move |j| match (self.0 >> (2 * j)) & 3 {
            1 => Some(BufferBinding::Uniform),
            2 => Some(BufferBinding::Storage),
            _ => None,
        })
    }
}

/// The scene passes' group 2 (the engine's buffers) as material pipelines see it: its
/// kinds, its layout, and the empty layout a shadow pipeline's group 1 then has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SceneLayout {
    pub(crate) kinds: SceneKinds,
    pub(crate) layout: BindGroupLayoutId,
    pub(crate) empty: BindGroupLayoutId,
}
