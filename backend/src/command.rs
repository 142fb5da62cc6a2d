//! The command format the scheduler records and a backend executes.
//!
//! A frame is a sequence of passes ([`PassDesc`]: attachments with explicit load and store
//! ops). Inside a pass, workers record *chunks*: each a slice of [`Command`]s that a
//! backend turns into one finished command buffer. Commands are `Copy`, fixed size
//! (40 bytes) and carry no heap data, so a chunk is one reusable `Vec<Command>`.
//!
//! Each chunk starts with no state bound: like a wgpu `RenderBundle`, it must set its own
//! pipeline, bind groups and buffers before drawing.

use crate::desc::IndexFormat;
use crate::handle::{BindGroupId, BufferId, PipelineId, TextureId};

/// The most dynamic offsets one `SetBindGroup` carries.
pub const MAX_DYNAMIC_OFFSETS: usize = 2;

/// Size of one indexed indirect draw record (`DrawIndexedIndirectArgs`): five u32.
pub const DRAW_INDEXED_INDIRECT_SIZE: u64 = 20;

/// Size of one indirect dispatch record (`DispatchIndirectArgs`): three u32.
pub const DISPATCH_INDIRECT_SIZE: u64 = 12;

/// Most workgroups of one dispatch in each dimension (wgpu's default limit).
pub const MAX_WORKGROUPS_PER_DIMENSION: u32 = 65_535;

/// Arguments of one indexed indirect draw, laid out as the GPU reads them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DrawIndexedIndirectArgs {
    /// Indices per instance.
    pub index_count: u32,
    /// Instances.
    pub instance_count: u32,
    /// First index in the index buffer.
    pub first_index: u32,
    /// Added to each index.
    pub base_vertex: i32,
    /// First instance (non-zero needs [`Caps::multi_draw_indirect`] on the executing backend).
    pub first_instance: u32,
}

/// Kinds of resources, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A buffer.
    Buffer,
    /// A texture.
    Texture,
    /// A sampler.
    Sampler,
    /// A shader module.
    Shader,
    /// A bind group layout.
    BindGroupLayout,
    /// A bind group.
    BindGroup,
    /// A pipeline.
    Pipeline,
}

/// Which attachment of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttachmentRole {
    /// The color attachment.
    Color,
    /// The depth attachment.
    Depth,
}

/// What happens to an attachment when the pass begins.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadOp<V> {
    /// Clear to a value.
    Clear(V),
    /// Keep the previous contents.
    Load,
    /// The contents are undefined: the pass writes every texel before anything reads
    /// one (no blending, no depth test against them), as its token promises. Cheapest on
    /// tiled GPUs; where a backend has nothing cheaper it clears.
    DontCare(DontCareToken),
}

/// The promise behind [`LoadOp::DontCare`]: the pass writes every texel of the
/// attachment before it reads, blends with or stores any (wgpu's `LoadOpDontCare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DontCareToken(());

impl DontCareToken {
    /// Makes the promise.
    ///
    /// # Safety
    /// Every pass this token's load op begins must write every texel of the attachment
    /// before reading, blending with or storing it; otherwise the attachment's contents
    /// are undefined, which wgpu treats as undefined behavior.
    pub const unsafe fn promise() -> Self {
        Self(())
    }
}

/// What happens to an attachment when the pass ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreOp {
    /// Keep the results.
    Store,
    /// Results may be thrown away (transient depth, say).
    Discard,
}

/// A color attachment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorAttachment {
    /// Render-target texture with a color format.
    pub texture: TextureId,
    /// Load op; clear color is linear RGBA.
    pub load: LoadOp<[f64; 4]>,
    /// Store op.
    pub store: StoreOp,
    /// The single-sample texture a multisampled attachment resolves into at the end of
    /// the pass (same format and size, `RENDER_TARGET`).
    pub resolve: Option<TextureId>,
}

/// A depth attachment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthAttachment {
    /// Render-target texture with a depth format.
    pub texture: TextureId,
    /// Load op; clear depth in [0, 1].
    pub load: LoadOp<f32>,
    /// Store op.
    pub store: StoreOp,
}

/// One pass: a render pass with its attachments and their load/store ops, or a compute
/// pass (no attachments; its chunks dispatch).
#[derive(Clone, Debug, PartialEq)]
pub struct PassDesc {
    /// Debug label: the pass's name (shared, so a frame copies a pointer, not the text).
    pub label: std::sync::Arc<str>,
    /// Color attachment.
    pub color: Option<ColorAttachment>,
    /// Depth attachment.
    pub depth: Option<DepthAttachment>,
    /// A compute pass: `color` and `depth` are `None`, its commands bind compute
    /// pipelines and dispatch.
    pub compute: bool,
    /// A pass the engine draws with wgpu itself ([`crate::wgpu::WgpuPassDraw`]): it
    /// carries no chunks; the wgpu backend runs the drawing inside the render pass it
    /// begins, the null backend submits the pass (its loads and stores) without it.
    pub native: Option<crate::wgpu::native::NativePass>,
}

impl PassDesc {
    /// A compute pass.
    pub fn compute(label: impl Into<std::sync::Arc<str>>) -> Self {
        Self { label: label.into(), color: None, depth: None, compute: true, native: None }
    }
}

/// Dynamic offsets of one `SetBindGroup`, inline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DynamicOffsets {
    len: u8,
    values: [u32; MAX_DYNAMIC_OFFSETS],
}

impl DynamicOffsets {
    /// No offsets.
    pub const NONE: Self = Self { len: 0, values: [0; MAX_DYNAMIC_OFFSETS] };

    /// One offset.
    #[inline]
    pub fn one(offset: u32) -> Self {
        Self { len: 1, values: [offset, 0] }
    }

    /// Up to [`MAX_DYNAMIC_OFFSETS`] offsets; `None` when there are more.
    pub fn from_slice(offsets: &[u32]) -> Option<Self> {
        if offsets.len() > MAX_DYNAMIC_OFFSETS {
            return None;
        }
        let mut values = [0; MAX_DYNAMIC_OFFSETS];
        values[..offsets.len()].copy_from_slice(offsets);
        Some(Self { len: offsets.len() as u8, values })
    }

    /// The offsets.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.values[..self.len as usize]
    }
}

/// One command inside a render pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Bind a render pipeline (a compute pipeline in a compute pass); resets nothing else.
    SetPipeline(PipelineId),
    /// Bind a bind group at `index`, with its dynamic offsets.
    SetBindGroup {
        /// Group index.
        index: u32,
        /// The group.
        group: BindGroupId,
        /// Dynamic offsets, one per dynamic binding, in binding order.
        offsets: DynamicOffsets,
    },
    /// Bind a vertex buffer range to a slot.
    SetVertexBuffer {
        /// Slot.
        slot: u32,
        /// The buffer.
        buffer: BufferId,
        /// Byte offset.
        offset: u64,
    },
    /// Bind the index buffer from `offset` to its end.
    SetIndexBuffer {
        /// The buffer.
        buffer: BufferId,
        /// Index type.
        format: IndexFormat,
        /// Byte offset.
        offset: u64,
    },
    /// Non-indexed draw.
    Draw {
        /// First vertex.
        first_vertex: u32,
        /// Vertex count.
        vertex_count: u32,
        /// First instance.
        first_instance: u32,
        /// Instance count.
        instance_count: u32,
    },
    /// Indexed draw.
    DrawIndexed {
        /// First index.
        first_index: u32,
        /// Index count.
        index_count: u32,
        /// Added to each index.
        base_vertex: i32,
        /// First instance.
        first_instance: u32,
        /// Instance count.
        instance_count: u32,
    },
    /// `count` indexed draws whose arguments ([`DrawIndexedIndirectArgs`]) are packed in
    /// `buffer` from `offset`. Needs [`Caps::indirect_draws`] (one native call where
    /// [`Caps::multi_draw_indirect`]).
    MultiDrawIndexedIndirect {
        /// Buffer with `INDIRECT` usage.
        buffer: BufferId,
        /// Byte offset, multiple of 4.
        offset: u64,
        /// Number of draws.
        count: u32,
    },
    /// Up to `max_count` indexed draws whose arguments are packed in `buffer` from
    /// `offset`, as many as the `u32` at `count_offset` in `count_buffer` says (a count
    /// the GPU wrote: a cull that compacted the non-empty draws of a multi-draw). Needs
    /// [`Caps::indirect_count`]; counted as `max_count` draws (the real count lives in GPU
    /// memory).
    MultiDrawIndexedIndirectCount {
        /// Buffer with `INDIRECT` usage holding the records.
        buffer: BufferId,
        /// Byte offset of the first record, multiple of 4.
        offset: u64,
        /// Buffer with `INDIRECT` usage holding the count (may be `buffer`).
        count_buffer: BufferId,
        /// Byte offset of the count, multiple of 4.
        count_offset: u64,
        /// Most draws (the records `buffer` holds from `offset`).
        max_count: u32,
    },
    /// Runs the bound compute pipeline over `x * y * z` workgroups (compute passes).
    Dispatch {
        /// Workgroups in x.
        x: u32,
        /// Workgroups in y.
        y: u32,
        /// Workgroups in z.
        z: u32,
    },
    /// A dispatch whose workgroup counts (three u32) are read from `buffer` at `offset`
    /// (compute passes): what a GPU pass that sizes the next one writes.
    DispatchIndirect {
        /// Buffer with `INDIRECT` usage.
        buffer: BufferId,
        /// Byte offset, multiple of 4.
        offset: u64,
    },
}

/// What a backend can do beyond the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// `MultiDrawIndexedIndirect` is one native call (with non-zero `first_instance`).
    pub multi_draw_indirect: bool,
    /// `MultiDrawIndexedIndirectCount` is one native call: the GPU reads the number of
    /// draws from a buffer (Vulkan's `drawIndexedIndirectCount`; wgpu's
    /// `MULTI_DRAW_INDIRECT_COUNT`, with the command-buffer encoding only: render bundles
    /// have no multi-draw). Implies `multi_draw_indirect`.
    pub indirect_count: bool,
    /// Indirect draws with non-zero `first_instance` execute: `MultiDrawIndexedIndirect`
    /// is accepted in every encoding (where multi-draw is not native, a loop of single
    /// indirect draws). Implied by `multi_draw_indirect`.
    pub indirect_draws: bool,
    /// Most storage buffers one shader stage binds.
    pub max_storage_buffers_per_stage: u32,
    /// Required alignment of dynamic uniform/storage offsets.
    pub min_uniform_offset_alignment: u32,
    /// Largest 2D texture side.
    pub max_texture_size: u32,
    /// Largest buffer.
    pub max_buffer_size: u64,
    /// Most bind groups one pipeline uses.
    pub max_bind_groups: u32,
    /// Textures made with [`crate::TextureUsage::TRANSIENT`] take no memory (tiled GPUs).
    pub transient_saves_memory: bool,
    /// Compute pipelines and passes are available.
    pub compute: bool,
    /// The sample counts render targets of every format Switchyard renders to support,
    /// as a mask of the counts themselves (`1 | 4`: single-sampled and 4x).
    pub sample_counts: u32,
    /// Passes are timed on the GPU ([`crate::Backend::gpu_pass_times`]).
    pub gpu_timestamps: bool,
    /// BC1 and BC7 compressed textures can be made ([`crate::TextureFormat::is_compressed`]).
    pub bc_textures: bool,
    /// The driver compiles a variant of a shader for each set of values of the uniform
    /// buffers that steer its loops and branches (lavapipe's inlined uniforms: a CPU
    /// adapter). Parameters that change every frame then go in a read-only storage
    /// buffer, or every frame compiles shaders; on GPUs a uniform buffer reads them faster.
    pub inlines_uniforms: bool,
}

/// What one chunk or frame did, counted the same way by every backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Commands executed.
    pub commands: u64,
    /// Draw API calls (a multi-draw counts once).
    pub draw_calls: u64,
    /// Draws issued on the GPU (a multi-draw counts each record).
    pub draws: u64,
    /// Instances drawn (direct draws only; indirect counts live in GPU memory).
    pub instances: u64,
    /// Pipeline, bind group and buffer bindings.
    pub state_changes: u64,
    /// Dispatches (direct and indirect).
    pub dispatches: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Self) {
        self.commands += o.commands;
        self.draw_calls += o.draw_calls;
        self.draws += o.draws;
        self.instances += o.instances;
        self.state_changes += o.state_changes;
        self.dispatches += o.dispatches;
    }
}

mod digest;
pub use digest::Digest;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_small_and_copy() {
        assert!(std::mem::size_of::<Command>() <= 40, "{}", std::mem::size_of::<Command>());
        static_assertions::assert_impl_all!(Command: Copy, Send, Sync);
        // A token is only ever made by `promise` (unsafe): never by a default.
        static_assertions::assert_not_impl_any!(DontCareToken: Default);
    }

    #[test]
    fn dynamic_offsets_roundtrip() {
        assert_eq!(DynamicOffsets::from_slice(&[256, 512]).unwrap().as_slice(), &[256, 512]);
        assert!(DynamicOffsets::from_slice(&[0, 0, 0]).is_none());
    }
}
