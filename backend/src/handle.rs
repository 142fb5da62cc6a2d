//! Handles to backend resources.
//!
//! Every resource a backend creates is named by a slotmap key: a slot index plus a
//! generation, so a handle to a destroyed resource is detected (typed error) instead of
//! silently naming whatever reuses the slot; the generation's top bits carry the backend's
//! tag, so a handle of another backend is detected too. Keys are allocated in creation order, so the
//! same sequence of `create_*` calls yields the same handles on every backend and run,
//! which keeps command-stream digests backend-independent.

use slotmap::{new_key_type, Key};

new_key_type! {
    /// A GPU buffer (vertex, index, uniform, storage, indirect).
    pub struct BufferId;
    /// A texture: sampled image, render target or depth target.
    pub struct TextureId;
    /// A texture sampler.
    pub struct SamplerId;
    /// A compiled and validated WGSL shader module.
    pub struct ShaderId;
    /// A bind group layout.
    pub struct BindGroupLayoutId;
    /// A bind group: resources bound at one group index.
    pub struct BindGroupId;
    /// A render pipeline (cached: equal descriptors give the same id).
    pub struct PipelineId;
    /// A presentation surface (a window's swapchain).
    pub struct SurfaceId;
}

/// Bits of a handle's FFI form that hold its backend's tag: the top 16 of its slot
/// version (see the registry's `Table`).
pub(crate) const TAG_BITS: u64 = 0xFFFF << 48;

/// A stable 64-bit encoding of a handle (slot and generation), used by digests. The
/// backend's tag is left out (see the registry): the same creation order gives the same
/// bits on every backend.
pub trait HandleBits {
    /// The handle as 64 stable bits.
    fn bits(self) -> u64;
}

macro_rules! impl_bits {
    ($($t:ty),*) => {$(
        impl HandleBits for $t {
            #[inline]
            fn bits(self) -> u64 {
                self.data().as_ffi() & !TAG_BITS
            }
        }
    )*};
}
impl_bits!(BufferId, TextureId, SamplerId, ShaderId, BindGroupLayoutId, BindGroupId, PipelineId);
