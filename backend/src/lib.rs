//! The contract between Switchyard's scheduler and the GPU: a compact command format, the
//! [`Backend`] trait, and two backends.
//!
//! Design choices:
//! - **Handles, not references.** Resources are created through a backend and named by
//!   slotmap keys ([`BufferId`], [`PipelineId`], ...). A stale handle is a typed error.
//! - **Chunks record in parallel, one thread submits.** [`Backend::record`] takes `&self`
//!   and is called from many worker threads at once; each call turns one slice of
//!   [`Command`]s into a finished, backend-specific chunk. [`Backend::submit`] is called by
//!   the one submission thread with a frame's chunks in order.
//! - **Validate once, in one place.** Every backend runs the same validator over a chunk
//!   before executing it, so the null backend and the wgpu backend accept and reject
//!   exactly the same streams.
//! - **Backends:** [`null::NullBackend`] validates, counts and digests (tests, CPU
//!   benchmarks); [`wgpu::WgpuBackend`] renders through wgpu on Vulkan, Metal, DX12 or GL,
//!   headless by default.

#![deny(missing_docs)]

/// A Tracy zone named by a string literal until the end of the enclosing block, with
/// the `tracy` feature and a running client (the upload thread's staging steps).
macro_rules! zone {
    ($name:literal) => {
        #[cfg(feature = "tracy")]
        let _zone = tracy_client::Client::running().map(|c| c.span(tracy_client::span_location!($name), 0));
    };
}

mod command;
mod desc;
mod error;
mod handle;
pub mod null;
mod reflect;
mod registry;
mod surface;
mod texels;
mod upload;
mod validate;
pub mod wgpu;

pub use command::{
    AttachmentRole, Caps, ColorAttachment, Command, Counts, DepthAttachment, Digest, DontCareToken,
    DrawIndexedIndirectArgs, DynamicOffsets, LoadOp, PassDesc, ResourceKind, StoreOp, DISPATCH_INDIRECT_SIZE,
    DRAW_INDEXED_INDIRECT_SIZE, MAX_DYNAMIC_OFFSETS, MAX_WORKGROUPS_PER_DIMENSION,
};
pub use desc::{
    AddressMode, BindEntry, BindGroupDesc, BindGroupLayoutDesc, BindResource, BindingType, BlendMode, BufferDesc,
    BufferUsage, ColorTargetState, CompareFunction, ComputePipelineDesc, CullMode, DepthState, FilterMode, IndexFormat,
    LayoutEntry, PipelineDesc, SamplerDesc, ShaderModuleDesc, Stages, StepMode, TextureDesc, TextureFormat,
    TextureSampleKind, TextureUsage, VertexAttribute, VertexBufferLayout, VertexFormat,
};
pub use error::{CreateError, DestroyError, InitError, PassError, ReadbackError, RecordError, SubmitError, WriteError};
pub use handle::{
    BindGroupId, BindGroupLayoutId, BufferId, HandleBits, PipelineId, SamplerId, ShaderId, SurfaceId, TextureId,
};
pub use reflect::fragment_writes_every_texel;
pub use surface::{Acquired, SkipReason, SurfaceError};
pub use texels::{level_side, max_mip_levels};
pub use upload::{upload_now, PrepareUploads, PreparedUploads, StagedWrites, TextureWrite, Uploads, MAX_STAGING_BYTES};
pub use validate::PassLayout;
/// The wgpu-profiler that times the wgpu backend's passes ([`wgpu::WgpuBackend::gpu_profile`]).
pub use wgpu_profiler;

/// Any resource handle, for [`Backend::destroy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// A buffer.
    Buffer(BufferId),
    /// A texture.
    Texture(TextureId),
    /// A sampler.
    Sampler(SamplerId),
    /// A shader module.
    Shader(ShaderId),
    /// A bind group layout.
    BindGroupLayout(BindGroupLayoutId),
    /// A bind group.
    BindGroup(BindGroupId),
    /// A pipeline.
    Pipeline(PipelineId),
}

macro_rules! resource_from {
    ($($id:ident => $kind:ident),*) => {$(
        impl From<$id> for Resource {
            fn from(id: $id) -> Self {
                Resource::$kind(id)
            }
        }
    )*};
}
resource_from!(BufferId => Buffer, TextureId => Texture, SamplerId => Sampler, ShaderId => Shader,
    BindGroupLayoutId => BindGroupLayout, BindGroupId => BindGroup, PipelineId => Pipeline);

/// Live resources of a backend, by kind ([`Backend::live`]): leak checks, and the GPU
/// memory they take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)] // one count per resource kind
pub struct LiveResources {
    pub buffers: usize,
    pub textures: usize,
    pub samplers: usize,
    pub shaders: usize,
    pub bind_group_layouts: usize,
    pub bind_groups: usize,
    pub pipelines: usize,
    /// Bytes of the live buffers, as created.
    pub buffer_bytes: u64,
    /// Bytes of the live textures: texels × bytes per texel × samples (imported and
    /// swapchain textures included; a driver's padding and compression not).
    pub texture_bytes: u64,
    /// Bytes of mapped staging memory held for uploads (the wgpu backend's staging
    /// rings: chunks free, written or on their way back), not counted in `buffer_bytes`.
    /// The rings are the backend's: what a dropped renderer's frames made stays for the
    /// next one to reuse (each ring keeps a bounded number of free chunks).
    pub staging_bytes: u64,
}

impl LiveResources {
    /// The objects alone: `staging_bytes` zeroed (the staging rings are the backend's,
    /// not any renderer's), for leak checks across renderers and harnesses.
    pub fn objects(self) -> Self {
        Self { staging_bytes: 0, ..self }
    }
}

/// A buffer's size and usage, as [`Backend::buffer_info`] reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    /// Size in bytes.
    pub size: u64,
    /// Allowed uses.
    pub usage: BufferUsage,
}

/// A texture's size, format and usage, as [`Backend::texture_info`] reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextureInfo {
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Texel format.
    pub format: TextureFormat,
    /// Allowed uses.
    pub usage: TextureUsage,
    /// Samples per texel.
    pub samples: u32,
}

/// Where a chunk sits in its pass: backends that encode one render pass per chunk need it
/// to apply the pass's load op on the first chunk and its store op on the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkPosition {
    /// Index of this chunk in the pass.
    pub index: u32,
    /// Number of chunks in the pass.
    pub count: u32,
}

impl ChunkPosition {
    /// The only chunk of its pass.
    pub const SINGLE: Self = Self { index: 0, count: 1 };
}

/// A CPU write into a buffer that the submission thread performs before the frame's passes.
#[derive(Clone, Copy, Debug)]
pub struct BufferWrite<'a> {
    /// Destination buffer (needs `COPY_DST`).
    pub buffer: BufferId,
    /// Byte offset, multiple of 4.
    pub offset: u64,
    /// The bytes (length a multiple of 4).
    pub data: &'a [u8],
}

/// A GPU-side copy of a buffer's first `size` bytes to the start of another
/// ([`Backend::copy_buffers`]): a grown buffer takes its predecessor's contents without
/// a trip through the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferCopy {
    /// Source buffer (needs `COPY_SRC`).
    pub src: BufferId,
    /// Destination buffer (needs `COPY_DST`).
    pub dst: BufferId,
    /// Bytes, a multiple of 4, within both buffers.
    pub size: u64,
}

/// One pass of a frame and its recorded chunks, in order.
#[derive(Debug)]
pub struct PassSubmit<C> {
    /// The pass.
    pub desc: PassDesc,
    /// Chunks recorded for exactly this pass, in order. `submit` drains it.
    pub chunks: Vec<C>,
}

/// Identifies a submission, for [`Backend::wait`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubmissionId(pub u64);

/// An RGBA8 image read back from a render target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Tightly packed RGBA8 rows, top row first.
    pub pixels: Vec<u8>,
}

impl Image {
    /// The pixel at (x, y).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [self.pixels[i], self.pixels[i + 1], self.pixels[i + 2], self.pixels[i + 3]]
    }
}

/// A GPU backend: creates resources, records chunks on many threads, submits on one.
///
/// Creation calls may come from any thread. `record` is called concurrently from the
/// scheduler's workers. `submit`, `wait` and `read_rgba8` are called from one thread at a
/// time (the scheduler's submission thread, or a test).
pub trait Backend: Send + Sync + 'static {
    /// A finished chunk: a wgpu `RenderBundle` or `CommandBuffer`, or the null backend's
    /// digest and counts.
    type Chunk: Send + Sync + 'static;
    /// A batch of uploads staged by [`Backend::stage`], waiting for
    /// [`Backend::submit_staged`].
    type Staged: Send + 'static;

    /// A short name ("null", "wgpu/Vulkan/llvmpipe", ...).
    fn name(&self) -> String;
    /// What this backend can do.
    fn caps(&self) -> Caps;
    /// Whether a scheduler should digest the command stream by default: the null backend
    /// does (tests compare digests), GPU backends do not (it costs CPU time per command).
    fn digests_commands(&self) -> bool {
        false
    }

    /// Creates a buffer (contents zeroed).
    fn create_buffer(&self, desc: &BufferDesc) -> Result<BufferId, CreateError>;
    /// Writes bytes into a buffer (ordered before the next submit).
    fn write_buffer(&self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), WriteError>;
    /// Creates a texture.
    fn create_texture(&self, desc: &TextureDesc) -> Result<TextureId, CreateError>;
    /// Uploads mip level 0 (the whole texture, where it has one level) from tightly packed
    /// texels (rows of 4 x 4 blocks for compressed formats).
    fn write_texture(&self, texture: TextureId, data: &[u8]) -> Result<(), WriteError> {
        self.write_texture_level(texture, 0, data)
    }
    /// Uploads one mip level from tightly packed texels (or blocks): exactly
    /// [`TextureFormat::level_bytes`] bytes, ordered before the next submit.
    fn write_texture_level(&self, texture: TextureId, level: u32, data: &[u8]) -> Result<(), WriteError>;
    /// Makes every mip level below the first from the one above it on the GPU (a box
    /// filter; in sRGB formats, on linear values), ordered before the next submit. The
    /// texture needs more than one level, an uncompressed color format and `SAMPLED |
    /// RENDER_TARGET` usage.
    fn generate_mips(&self, texture: TextureId) -> Result<(), WriteError>;
    /// Creates a sampler.
    fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerId, CreateError>;
    /// Compiles and validates a WGSL module.
    fn create_shader(&self, desc: &ShaderModuleDesc) -> Result<ShaderId, CreateError>;
    /// Compiles several WGSL modules: where the backend compiles in parallel, on the
    /// threads of the rayon pool it is called from. Ids are handed out in `descs`' order
    /// whatever order the compilations finish in, exactly as calls of
    /// [`Backend::create_shader`] one after another would (a refused module takes none).
    fn create_shaders(&self, descs: &[ShaderModuleDesc]) -> Vec<Result<ShaderId, CreateError>> {
        descs.iter().map(|d| self.create_shader(d)).collect()
    }
    /// Creates a bind group layout.
    fn create_bind_group_layout(&self, desc: &BindGroupLayoutDesc) -> Result<BindGroupLayoutId, CreateError>;
    /// Creates a bind group.
    fn create_bind_group(&self, desc: &BindGroupDesc) -> Result<BindGroupId, CreateError>;
    /// Creates a render pipeline, or returns the cached one for an equal descriptor. Each
    /// call counts: the pipeline lives until `destroy` was called for it as often (so two
    /// users of one backend that ask for equal pipelines each destroy theirs).
    fn create_pipeline(&self, desc: &PipelineDesc) -> Result<PipelineId, CreateError>;
    /// Creates several render pipelines, as [`Backend::create_shaders`] compiles modules:
    /// in parallel where the backend can, ids handed out in `descs`' order as calls of
    /// [`Backend::create_pipeline`] one after another would (equal descriptors, in the
    /// batch or cached before, share one pipeline and each counts as a creation).
    fn create_pipelines(&self, descs: &[PipelineDesc]) -> Vec<Result<PipelineId, CreateError>> {
        descs.iter().map(|d| self.create_pipeline(d)).collect()
    }
    /// Creates a compute pipeline (bound in compute passes, [`PassDesc::compute`]). The
    /// default: this backend has no compute.
    fn create_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineId, CreateError> {
        let _ = desc;
        Err(CreateError::Unsupported("compute pipelines"))
    }
    /// Destroys a resource; its handle becomes stale (a cached pipeline: gives back one
    /// creation of it, see [`Backend::create_pipeline`]). Frames already recorded keep
    /// what they use on the GPU side, but a destroyed buffer takes no more uploads: destroy
    /// what queued frames use only after they finished.
    fn destroy(&self, resource: Resource) -> Result<(), DestroyError>;
    /// What a live texture is: size, format and usage (`None` for a stale handle).
    fn texture_info(&self, texture: TextureId) -> Option<TextureInfo>;
    /// What a live buffer is: size and usage (`None` for a stale handle).
    fn buffer_info(&self, buffer: BufferId) -> Option<BufferInfo>;

    /// Validates and records one chunk of `pass`. Callable from many threads at once.
    fn record(
        &self,
        pass: &PassDesc,
        position: ChunkPosition,
        commands: &[Command],
    ) -> Result<Self::Chunk, RecordError>;
    /// Performs `uploads`, then executes `passes` in order, each with its chunks in order.
    /// Drains the chunk vectors (their capacity stays with the caller).
    fn submit(
        &self,
        uploads: &[BufferWrite<'_>],
        passes: &mut [PassSubmit<Self::Chunk>],
    ) -> Result<SubmissionId, SubmitError>;
    /// Copies buffers on the GPU, in order, after everything submitted before and before
    /// the next submit's uploads and passes (called by the submission thread). Checked
    /// first: a stale handle, a missing usage or a size outside either buffer is refused
    /// and copies nothing. The default: this backend cannot.
    fn copy_buffers(&self, copies: &[BufferCopy]) -> Result<(), SubmitError> {
        let _ = copies;
        Err(SubmitError::Write(WriteError::Invalid("this backend copies no buffers")))
    }
    /// Checks a batch of resource uploads and stages it: the bytes copied into staging
    /// memory and the GPU copies (and mip generations) recorded, nothing submitted yet.
    /// Called from the scheduler's upload thread while workers record and the submission
    /// thread submits. A refused write (stale handle, missing usage, a size or range that
    /// does not fit, a lost device) stages nothing.
    fn stage(&self, uploads: &Uploads<'_>) -> Result<Self::Staged, SubmitError>;
    /// Makes ahead what uploads would otherwise make on first use, so the first batches
    /// and the first frame stage as fast as later ones: the mip generator of each of
    /// `mip_formats`, mapped staging memory until the upload thread's ring holds at least
    /// `staging_bytes`, and room in the frames' ring for `frame_writes` (all kept for
    /// reuse while the backend lives). Calling it again makes only what is missing. A
    /// format whose mips are not generated (compressed, depth) is `Invalid`, more than
    /// [`MAX_STAGING_BYTES`] for a ring is `Limit`, both making nothing; a lost device is
    /// `DeviceLost`. The default (a backend without staging memory or mip pipelines)
    /// checks the arguments and makes nothing.
    fn prepare_uploads(&self, prepare: &PrepareUploads<'_>) -> Result<PreparedUploads, CreateError> {
        upload::check_prepare(prepare)?;
        Ok(PreparedUploads::default())
    }
    /// Submits a staged batch: after everything submitted before, before the next
    /// submit's uploads and passes. A batch that writes an object destroyed since it was
    /// staged is refused (a use after free on the GPU).
    fn submit_staged(&self, staged: Self::Staged) -> Result<(), SubmitError>;
    /// Blocks until the GPU finished `submission`.
    fn wait(&self, submission: SubmissionId) -> Result<(), SubmitError>;
    /// The GPU time of each pass of `submission` in ms, in submission order, into `out`
    /// (the first of them where a frame has more passes than the backend times), once
    /// `wait` returned for it: `false` (and `out` untouched) where passes are not timed
    /// ([`Caps::gpu_timestamps`]), or this submission's times are not read back (only the
    /// two newest submissions read back are kept: a frame split around a late acquire is two).
    fn gpu_pass_times(&self, submission: SubmissionId, out: &mut Vec<f64>) -> bool {
        let _ = (submission, out);
        false
    }
    /// Reads a color render target back as RGBA8 (waits for the GPU).
    fn read_rgba8(&self, texture: TextureId) -> Result<Image, ReadbackError>;

    /// How many resources of each kind this backend holds, and their bytes (the default:
    /// a backend that does not count).
    fn live(&self) -> LiveResources {
        LiveResources::default()
    }

    /// Reads `len` bytes of a `COPY_SRC` buffer from `offset` (both multiples of 4) after
    /// everything submitted so far (waits for the GPU). The default: this backend keeps
    /// no buffer contents.
    fn read_buffer(&self, buffer: BufferId, offset: u64, len: u64) -> Result<Vec<u8>, ReadbackError> {
        let _ = (buffer, offset, len);
        Err(ReadbackError::Unsupported("this backend keeps no buffer contents"))
    }

    /// Acquires `surface`'s next image. One image is out at a time: this waits (up to
    /// 10 s) until the last one was presented or released. Called by the thread that
    /// renders; the default: this backend has no surfaces.
    fn acquire(&self, surface: SurfaceId) -> Result<Acquired, SurfaceError> {
        let _ = surface;
        Err(SurfaceError::Unsupported)
    }
    /// For late acquire: a texture handle that stands for `surface`'s next image, stable
    /// across frames and sized like the surface, so a frame can be recorded into it before
    /// the image exists; [`Backend::acquire_late`] binds the image to it on the submission
    /// thread. A submit that draws into it with no image bound is refused. `None`: this
    /// backend (or its encoding) names attachments when it records, so it acquires early
    /// only.
    fn surface_stand_in(&self, surface: SurfaceId) -> Option<TextureId> {
        let _ = surface;
        None
    }
    /// Acquires `surface`'s next image into its stand-in (on the submission thread, once
    /// the frame's work before its first pass into the image is submitted), for a frame
    /// recorded at `size`: a surface configured to another size since skips
    /// ([`SkipReason::Resized`]). Present and release as after [`Backend::acquire`].
    fn acquire_late(&self, surface: SurfaceId, size: (u32, u32)) -> Result<Acquired, SurfaceError> {
        let _ = (surface, size);
        Err(SurfaceError::Unsupported)
    }
    /// Configures `surface` for `width` x `height` (0 x 0: acquiring skips until it has a
    /// size again).
    fn configure_surface(&self, surface: SurfaceId, width: u32, height: u32) -> Result<(), SurfaceError> {
        let _ = (surface, width, height);
        Err(SurfaceError::Unsupported)
    }
    /// The size `surface` is configured for.
    fn surface_size(&self, surface: SurfaceId) -> Option<(u32, u32)> {
        let _ = surface;
        None
    }
    /// Presents the image last acquired from `surface`. Called by the submission thread
    /// after the submit that drew into it.
    fn present(&self, surface: SurfaceId) -> Result<(), SurfaceError> {
        let _ = surface;
        Err(SurfaceError::Unsupported)
    }
    /// Gives back the image last acquired from `surface` without presenting it (its frame
    /// failed). Nothing acquired: nothing happens.
    fn release_image(&self, surface: SurfaceId) {
        let _ = surface;
    }
}
