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
use crate::handle::{BindGroupId, BufferId, HandleBits, PipelineId, TextureId};

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

/// A 64-bit digest of a command stream, stable across runs, threads and machines.
///
/// A fixed-seed multiply-fold hash over the commands' fields (never a randomly seeded
/// hasher). Chunk digests are combined in submission order with [`Digest::combine`], so a
/// frame's digest depends only on the commands and their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Digest(u64);

const SEED: u64 = 0x5157_1c4a_7d0b_e3a1;

#[inline]
fn mix(h: u64, w: u64) -> u64 {
    let m = u128::from(h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15_u128 | (0xd6e8_feb8_6659_fd93_u128 << 64));
    (m as u64) ^ ((m >> 64) as u64)
}

impl Default for Digest {
    fn default() -> Self {
        Self(SEED)
    }
}

impl Digest {
    /// The digest value.
    #[inline]
    pub fn value(self) -> u64 {
        self.0
    }

    /// Folds a raw word in.
    #[inline]
    pub fn word(&mut self, w: u64) {
        self.0 = mix(self.0, w);
    }

    /// Folds another digest in (order matters).
    #[inline]
    pub fn combine(&mut self, other: Digest) {
        self.word(other.0);
    }

    /// Folds a pass description in.
    pub fn pass(&mut self, p: &PassDesc) {
        self.word(0xFA55);
        if p.compute {
            self.word(0xC0);
        }
        // The engine's drawing is not Switchyard's to digest: only that it is there.
        if p.native.is_some() {
            self.word(0x7A7E);
        }
        if let Some(c) = &p.color {
            self.word(c.texture.bits());
            match c.load {
                LoadOp::Clear(v) => v.iter().for_each(|x| self.word(x.to_bits())),
                LoadOp::Load => self.word(1),
                LoadOp::DontCare(_) => self.word(2),
            }
            self.word(c.store as u64);
            if let Some(r) = c.resolve {
                self.word(0x4E50);
                self.word(r.bits());
            }
        }
        if let Some(d) = &p.depth {
            self.word(d.texture.bits());
            match d.load {
                LoadOp::Clear(v) => self.word(u64::from(v.to_bits())),
                LoadOp::Load => self.word(1),
                LoadOp::DontCare(_) => self.word(2),
            }
            self.word(d.store as u64);
        }
    }

    /// Folds one command in.
    #[inline]
    pub fn command(&mut self, c: &Command) {
        match *c {
            Command::SetPipeline(p) => {
                self.word(1);
                self.word(p.bits());
            }
            Command::SetBindGroup { index, group, offsets } => {
                self.word(2 | u64::from(index) << 8);
                self.word(group.bits());
                offsets.as_slice().iter().for_each(|&o| self.word(u64::from(o)));
            }
            Command::SetVertexBuffer { slot, buffer, offset } => {
                self.word(3 | u64::from(slot) << 8);
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::SetIndexBuffer { buffer, format, offset } => {
                self.word(4 | (format.size() << 8));
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::Draw { first_vertex, vertex_count, first_instance, instance_count } => {
                self.word(5);
                self.word(u64::from(first_vertex) | u64::from(vertex_count) << 32);
                self.word(u64::from(first_instance) | u64::from(instance_count) << 32);
            }
            Command::DrawIndexed { first_index, index_count, base_vertex, first_instance, instance_count } => {
                self.word(6 | u64::from(base_vertex as u32) << 32);
                self.word(u64::from(first_index) | u64::from(index_count) << 32);
                self.word(u64::from(first_instance) | u64::from(instance_count) << 32);
            }
            Command::MultiDrawIndexedIndirect { buffer, offset, count } => {
                self.word(7 | u64::from(count) << 32);
                self.word(buffer.bits());
                self.word(offset);
            }
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } => {
                self.word(10 | u64::from(max_count) << 32);
                self.word(buffer.bits());
                self.word(offset);
                self.word(count_buffer.bits());
                self.word(count_offset);
            }
            Command::Dispatch { x, y, z } => {
                self.word(8 | u64::from(x) << 32);
                self.word(u64::from(y) | u64::from(z) << 32);
            }
            Command::DispatchIndirect { buffer, offset } => {
                self.word(9);
                self.word(buffer.bits());
                self.word(offset);
            }
        }
    }

    /// Digest of a slice of commands.
    pub fn of_commands(commands: &[Command]) -> Self {
        let mut d = Self::default();
        commands.iter().for_each(|c| d.command(c));
        d
    }
}

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
    fn digest_depends_on_order_and_content() {
        let a = Command::Draw { first_vertex: 0, vertex_count: 3, first_instance: 0, instance_count: 1 };
        let b = Command::Draw { first_vertex: 0, vertex_count: 6, first_instance: 0, instance_count: 1 };
        assert_ne!(Digest::of_commands(&[a, b]), Digest::of_commands(&[b, a]));
        assert_eq!(Digest::of_commands(&[a, b]), Digest::of_commands(&[a, b]));
        // Fixed values: the digest must not change between runs or machines. A stream with
        // every command kind and every field set, digested with a pass before it.
        assert_eq!(Digest::of_commands(&[]).value(), SEED);
        let mut d = Digest::default();
        d.pass(&PassDesc {
            label: "pinned".into(),
            color: Some(ColorAttachment {
                texture: TextureId::default(),
                load: LoadOp::Clear([0.25, 0.5, 0.75, 1.0]),
                store: StoreOp::Store,
                resolve: None,
            }),
            depth: Some(DepthAttachment { texture: TextureId::default(), load: LoadOp::Load, store: StoreOp::Discard }),
            compute: false,
            native: None,
        });
        let every = [
            Command::SetPipeline(PipelineId::default()),
            Command::SetBindGroup { index: 1, group: BindGroupId::default(), offsets: DynamicOffsets::one(256) },
            Command::SetVertexBuffer { slot: 1, buffer: BufferId::default(), offset: 64 },
            Command::SetIndexBuffer { buffer: BufferId::default(), format: IndexFormat::Uint32, offset: 8 },
            a,
            Command::DrawIndexed {
                first_index: 3,
                index_count: 36,
                base_vertex: -4,
                first_instance: 7,
                instance_count: 2,
            },
            Command::MultiDrawIndexedIndirect { buffer: BufferId::default(), offset: 40, count: 5 },
        ];
        d.combine(Digest::of_commands(&every));
        assert_eq!(format!("{:016x}", d.value()), "baf53afa8ebb59e6");
    }

    #[test]
    fn every_field_of_a_count_draw_is_digested() {
        let (one, two) = (BufferId::default(), BufferId::from(slotmap::KeyData::from_ffi(1 << 32 | 3)));
        let base = Command::MultiDrawIndexedIndirectCount {
            buffer: one,
            offset: 40,
            count_buffer: one,
            count_offset: 8,
            max_count: 5,
        };
        let Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count } = base
        else {
            unreachable!()
        };
        let variants = [
            base,
            Command::MultiDrawIndexedIndirectCount { buffer: two, offset, count_buffer, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset: 60, count_buffer, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer: two, count_offset, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset: 12, max_count },
            Command::MultiDrawIndexedIndirectCount { buffer, offset, count_buffer, count_offset, max_count: 6 },
            Command::MultiDrawIndexedIndirect { buffer, offset, count: max_count },
        ];
        let digests: std::collections::HashSet<u64> =
            variants.iter().map(|c| Digest::of_commands(std::slice::from_ref(c)).value()).collect();
        assert_eq!(digests.len(), variants.len());
    }

    #[test]
    fn a_dont_care_load_is_its_own_pass_word() {
        let pass = |load| PassDesc {
            label: "p".into(),
            color: Some(ColorAttachment { texture: TextureId::default(), load, store: StoreOp::Store, resolve: None }),
            depth: None,
            compute: false,
            native: None,
        };
        let digest = |p: &PassDesc| {
            let mut d = Digest::default();
            d.pass(p);
            d.value()
        };
        // SAFETY: only digested, never executed.
        let dont_care = LoadOp::DontCare(unsafe { DontCareToken::promise() });
        let loads = [LoadOp::Clear([0.0; 4]), LoadOp::Load, dont_care];
        let digests: std::collections::HashSet<u64> = loads.iter().map(|&l| digest(&pass(l))).collect();
        assert_eq!(digests.len(), 3);
    }

    #[test]
    fn dynamic_offsets_roundtrip() {
        assert_eq!(DynamicOffsets::from_slice(&[256, 512]).unwrap().as_slice(), &[256, 512]);
        assert!(DynamicOffsets::from_slice(&[0, 0, 0]).is_none());
    }
}
