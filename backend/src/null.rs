//! The null backend: validates every command, counts, and digests the stream.
//!
//! It executes nothing on a GPU. Tests use it to check what the scheduler submits, and CPU
//! benchmarks use it to measure the scheduler without a driver in the way. Its frame
//! digest is folded exactly as documented on [`Digest`]: per pass, the pass description,
//! then each chunk's digest in order.

use parking_lot::{Mutex, RwLock};

use crate::command::{Caps, Command, Counts, Digest, PassDesc, ResourceKind};
use crate::desc::{
    BindGroupDesc, BindGroupLayoutDesc, BufferDesc, ComputePipelineDesc, PipelineDesc, SamplerDesc, ShaderModuleDesc,
    TextureDesc, TextureFormat, TextureUsage,
};
use crate::error::{CreateError, DestroyError, ReadbackError, RecordError, SubmitError, WriteError};
use crate::handle::{BindGroupId, BindGroupLayoutId, BufferId, PipelineId, SamplerId, ShaderId, SurfaceId, TextureId};
use crate::reflect::reflect_wgsl;
use crate::registry::{NativeObjects, Registry, Stored};
use crate::surface::{check_size, Swapchains};
use crate::upload::{check_buffer_copy, check_buffer_write, check_texture_write};
use crate::validate::{resolve_pass, validate_chunk};
use crate::{
    Acquired, Backend, BufferWrite, ChunkPosition, Image, LiveResources, PassSubmit, Resource, SkipReason,
    SubmissionId, SurfaceError,
};

/// A null surface: a swapchain of three render-target textures of its size.
#[derive(Debug)]
struct NullSurface {
    size: (u32, u32),
    format: TextureFormat,
    images: Vec<TextureId>,
    next: usize,
    acquired: Option<TextureId>,
    presents: u64,
    /// The texture late-acquired frames are recorded into ([`Backend::surface_stand_in`]).
    stand_in: TextureId,
}

/// Images in a null surface's swapchain.
const SWAPCHAIN_IMAGES: usize = 3;

struct NullObjects;
impl NativeObjects for NullObjects {
    type Buffer = ();
    type Texture = ();
    type Sampler = ();
    type Shader = ();
    type Layout = ();
    type BindGroup = ();
    type Pipeline = ();
}

/// A chunk recorded by the null backend.
#[derive(Clone, Debug, PartialEq)]
pub struct NullChunk {
    /// The pass it was recorded for.
    pub pass: PassDesc,
    /// Digest of its commands.
    pub digest: Digest,
    /// What it counts.
    pub counts: Counts,
}

/// What the null backend saw in one submitted frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NullFrameReport {
    /// The submission.
    pub submission: SubmissionId,
    /// Digest of the frame's passes and commands.
    pub digest: u64,
    /// Counts over the frame.
    pub counts: Counts,
    /// Passes.
    pub passes: u32,
    /// Chunks.
    pub chunks: u32,
    /// Bytes of per-frame uploads.
    pub upload_bytes: u64,
    /// Buffer writes among them (each a copy on the GPU, and on wgpu's Vulkan backend a
    /// barrier after another copy into the same buffer).
    pub upload_writes: u32,
}

/// What [`Backend::prepare_uploads`] made on the null backend, as the wgpu backend would
/// (each format once, bytes up to the most asked).
#[derive(Debug, Default)]
struct Prepared {
    mip_formats: Vec<TextureFormat>,
    staging_bytes: u64,
    /// The frame writes last asked for.
    frame_writes: Vec<u64>,
    /// The most bytes frame writes came to.
    frame_bytes: u64,
}

/// The validating, recording backend without a GPU.
pub struct NullBackend {
    reg: RwLock<Registry<NullObjects>>,
    caps: Caps,
    last: Mutex<NullFrameReport>,
    /// Bytes copied between buffers ([`Backend::copy_buffers`]) so far.
    copied: std::sync::atomic::AtomicU64,
    /// Bytes and batches of staged uploads submitted ([`Backend::submit_staged`]).
    staged: [std::sync::atomic::AtomicU64; 2],
    /// [`NullBackend::lose_device`] was called: every later call fails with `DeviceLost`.
    lost: std::sync::atomic::AtomicBool,
    /// What [`Backend::prepare_uploads`] made.
    prepared: Mutex<Prepared>,
    surfaces: Swapchains<NullSurface>,
}

impl std::fmt::Debug for NullBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NullBackend").field("caps", &self.caps).finish_non_exhaustive()
    }
}

impl Default for NullBackend {
    fn default() -> Self {
        Self::new(true)
    }
}

impl NullBackend {
    /// A null backend; `multi_draw_indirect` decides whether it reports native multi-draw
    /// (with count buffers, as wgpu's command-buffer encoding on Vulkan does), so tests can
    /// exercise both of the scheduler's draw paths. Indirect draws are accepted either
    /// way, as wgpu's bundle encoding accepts them.
    pub fn new(multi_draw_indirect: bool) -> Self {
        Self {
            reg: RwLock::default(),
            caps: Caps {
                multi_draw_indirect,
                indirect_count: multi_draw_indirect,
                indirect_draws: true,
                max_storage_buffers_per_stage: 8,
                min_uniform_offset_alignment: 256,
                max_texture_size: 8192,
                max_buffer_size: 1 << 32,
                max_bind_groups: 4,
                transient_saves_memory: false,
                compute: true,
                sample_counts: 1 | 4,
                gpu_timestamps: false,
                bc_textures: true,
                inlines_uniforms: false,
            },
            last: Mutex::default(),
            copied: std::sync::atomic::AtomicU64::new(0),
            staged: Default::default(),
            lost: Default::default(),
            prepared: Mutex::default(),
            surfaces: Swapchains::default(),
        }
    }

    /// A surface of `width` x `height` (0 x 0: a minimized window) in `format`: a
    /// swapchain of three render-target textures, as a window's would be.
    pub fn create_surface(&self, width: u32, height: u32, format: TextureFormat) -> Result<SurfaceId, SurfaceError> {
        let id = self.surfaces.surfaces.lock().insert(NullSurface {
            size: (0, 0),
            format,
            images: Vec::new(),
            next: 0,
            acquired: None,
            presents: 0,
            stand_in: TextureId::default(),
        });
        let desc = TextureDesc {
            label: "surface stand-in".into(),
            width: width.max(1),
            height: height.max(1),
            format,
            usage: TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC,
            samples: 1,
            mip_levels: 1,
        };
        let stand_in = {
            let mut reg = self.reg.write();
            let meta = reg.check_texture(&desc, &self.caps);
            meta.map(|meta| {
                reg.textures.insert(Stored { meta: crate::registry::TextureMeta { unbound: true, ..meta }, obj: () })
            })
        };
        let configured = stand_in.map_err(|e| SurfaceError::Validation(e.to_string())).and_then(|t| {
            self.surfaces.surfaces.lock()[id].stand_in = t;
            self.configure_surface(id, width, height)
        });
        if let Err(e) = configured {
            if let Some(s) = self.surfaces.surfaces.lock().remove(id) {
                let _ = self.reg.write().destroy(Resource::Texture(s.stand_in));
            }
            return Err(e);
        }
        Ok(id)
    }

    /// A late-acquired image given back: its stand-in has none bound again.
    fn unbind(&self, stand_in: TextureId, image: TextureId) {
        if image == stand_in {
            if let Some(t) = self.reg.write().textures.get_mut(stand_in) {
                t.meta.unbound = true;
            }
        }
    }

    /// Bytes and batches of staged uploads submitted so far ([`Backend::submit_staged`]).
    pub fn staged_uploads(&self) -> (u64, u64) {
        let r = std::sync::atomic::Ordering::Relaxed;
        (self.staged[0].load(r), self.staged[1].load(r))
    }

    /// The mip formats and the staging bytes [`Backend::prepare_uploads`] made so far
    /// (as the wgpu backend would: each format once, the bytes up to the largest asked),
    /// and the frame writes it was last asked to make room for.
    pub fn prepared_uploads(&self) -> (Vec<TextureFormat>, u64, Vec<u64>) {
        let p = self.prepared.lock();
        (p.mip_formats.clone(), p.staging_bytes, p.frame_writes.clone())
    }

    /// Bytes copied between buffers on the "GPU" so far ([`Backend::copy_buffers`] and the
    /// copies of staged batches).
    pub fn copied_bytes(&self) -> u64 {
        self.copied.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Images presented from `surface` so far.
    pub fn presents(&self, surface: SurfaceId) -> u64 {
        self.surfaces.surfaces.lock().get(surface).map_or(0, |s| s.presents)
    }

    /// Loses the "device", as a driver reset would: every later call fails with a
    /// `DeviceLost` error (a `Renderer` then needs a new backend: `Renderer::recover`).
    pub fn lose_device(&self) {
        self.lost.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether [`NullBackend::lose_device`] was called.
    pub fn is_lost(&self) -> bool {
        self.lost.load(std::sync::atomic::Ordering::Acquire)
    }

    fn alive<E>(&self, lost: E) -> Result<(), E> {
        if self.is_lost() {
            return Err(lost);
        }
        Ok(())
    }

    /// A null backend that reports `caps` and enforces its limits (tests of what happens at
    /// a limit: a small `max_buffer_size`, say).
    pub fn with_caps(caps: Caps) -> Self {
        Self { caps, ..Self::new(caps.multi_draw_indirect) }
    }

    /// The report of the most recent submitted frame.
    pub fn last_frame(&self) -> NullFrameReport {
        *self.last.lock()
    }
}

impl Backend for NullBackend {
    type Chunk = NullChunk;
    type Staged = crate::StagedWrites;

    fn name(&self) -> String {
        "null".into()
    }

    fn caps(&self) -> Caps {
        self.caps
    }

    fn digests_commands(&self) -> bool {
        true
    }

    fn create_buffer(&self, desc: &BufferDesc) -> Result<BufferId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        let meta = reg.check_buffer(desc, &self.caps)?;
        Ok(reg.buffers.insert(Stored { meta, obj: () }))
    }

    fn write_buffer(&self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), WriteError> {
        self.alive(WriteError::DeviceLost)?;
        check_buffer_write(&self.reg.read(), &BufferWrite { buffer, offset, data })
    }

    fn create_texture(&self, desc: &TextureDesc) -> Result<TextureId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        let meta = reg.check_texture(desc, &self.caps)?;
        Ok(reg.textures.insert(Stored { meta, obj: () }))
    }

    fn write_texture_level(&self, texture: TextureId, level: u32, data: &[u8]) -> Result<(), WriteError> {
        self.alive(WriteError::DeviceLost)?;
        check_texture_write(&self.reg.read(), texture, level, data)
    }

    fn generate_mips(&self, texture: TextureId) -> Result<(), WriteError> {
        self.alive(WriteError::DeviceLost)?;
        let reg = self.reg.read();
        let m = &reg.textures.get(texture).ok_or(WriteError::InvalidHandle { kind: ResourceKind::Texture })?.meta;
        crate::texels::check_generate(m)
    }

    fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let meta = crate::registry::SamplerMeta::of(desc);
        Ok(self.reg.write().samplers.insert(Stored { meta, obj: () }))
    }

    fn create_shader(&self, desc: &ShaderModuleDesc) -> Result<ShaderId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let meta = reflect_wgsl(desc)?;
        Ok(self.reg.write().shaders.insert(Stored { meta, obj: () }))
    }

    fn create_bind_group_layout(&self, desc: &BindGroupLayoutDesc) -> Result<BindGroupLayoutId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        let meta = reg.check_layout(desc)?;
        Ok(reg.layouts.insert(Stored { meta, obj: () }))
    }

    fn create_bind_group(&self, desc: &BindGroupDesc) -> Result<BindGroupId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        let meta = reg.check_bind_group(desc, &self.caps)?;
        Ok(reg.bind_groups.insert(Stored { meta, obj: () }))
    }

    fn create_pipeline(&self, desc: &PipelineDesc) -> Result<PipelineId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        if let Some(id) = reg.cached_pipeline(desc) {
            return Ok(id);
        }
        let meta = reg.check_pipeline(desc, &self.caps)?;
        let id = reg.pipelines.insert(Stored { meta, obj: () });
        reg.pipeline_cache.insert(desc.clone(), id);
        Ok(id)
    }

    fn create_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineId, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        let mut reg = self.reg.write();
        let meta = reg.check_compute_pipeline(desc, &self.caps)?;
        Ok(reg.pipelines.insert(Stored { meta, obj: () }))
    }

    fn destroy(&self, resource: Resource) -> Result<(), DestroyError> {
        self.reg.write().destroy(resource)
    }

    fn texture_info(&self, texture: TextureId) -> Option<crate::TextureInfo> {
        self.reg.read().texture_info(texture)
    }
    fn buffer_info(&self, buffer: BufferId) -> Option<crate::BufferInfo> {
        self.reg.read().buffers.get(buffer).map(|e| crate::BufferInfo { size: e.meta.size, usage: e.meta.usage })
    }

    fn record(
        &self,
        pass: &PassDesc,
        _position: ChunkPosition,
        commands: &[Command],
    ) -> Result<NullChunk, RecordError> {
        self.alive(RecordError::DeviceLost)?;
        let reg = self.reg.read();
        let layout = resolve_pass(&reg, pass)?;
        let counts = validate_chunk(&reg, &layout, commands, &self.caps)?;
        Ok(NullChunk { pass: pass.clone(), digest: Digest::of_commands(commands), counts })
    }

    fn copy_buffers(&self, copies: &[crate::BufferCopy]) -> Result<(), SubmitError> {
        self.alive(SubmitError::DeviceLost)?;
        let reg = self.reg.read();
        for c in copies {
            check_buffer_copy(&reg, c)?;
        }
        let bytes: u64 = copies.iter().map(|c| c.size).sum();
        self.copied.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    fn stage(&self, uploads: &crate::Uploads<'_>) -> Result<crate::StagedWrites, SubmitError> {
        self.alive(SubmitError::DeviceLost)?;
        crate::upload::check_uploads(&self.reg.read(), uploads)?;
        Ok(crate::StagedWrites::of(uploads))
    }

    fn prepare_uploads(&self, prepare: &crate::PrepareUploads<'_>) -> Result<crate::PreparedUploads, CreateError> {
        self.alive(CreateError::DeviceLost)?;
        crate::upload::check_prepare(prepare)?;
        let mut p = self.prepared.lock();
        let mut made = crate::PreparedUploads::default();
        for &f in prepare.mip_formats {
            if !p.mip_formats.contains(&f) {
                p.mip_formats.push(f);
                made.mip_pipelines += 1;
            }
        }
        made.staging_bytes = prepare.staging_bytes.saturating_sub(p.staging_bytes);
        p.staging_bytes = p.staging_bytes.max(prepare.staging_bytes);
        let frame: u64 = prepare.frame_writes.iter().sum();
        made.frame_staging_bytes = frame.saturating_sub(p.frame_bytes);
        p.frame_bytes = p.frame_bytes.max(frame);
        p.frame_writes = prepare.frame_writes.to_vec();
        Ok(made)
    }

    fn submit_staged(&self, staged: crate::StagedWrites) -> Result<(), SubmitError> {
        self.alive(SubmitError::DeviceLost)?;
        staged.check(&self.reg.read())?;
        let r = std::sync::atomic::Ordering::Relaxed;
        self.staged[0].fetch_add(staged.bytes, r);
        self.staged[1].fetch_add(1, r);
        self.copied.fetch_add(staged.copied, r);
        Ok(())
    }

    fn submit(
        &self,
        uploads: &[BufferWrite<'_>],
        passes: &mut [PassSubmit<NullChunk>],
    ) -> Result<SubmissionId, SubmitError> {
        self.alive(SubmitError::DeviceLost)?;
        let reg = self.reg.read();
        for w in uploads {
            check_buffer_write(&reg, w)?;
        }
        for (pi, p) in passes.iter().enumerate() {
            resolve_pass(&reg, &p.desc)?;
            if p.desc.native.is_some() && !p.chunks.is_empty() {
                return Err(SubmitError::Pass(crate::PassError::Native("carries no chunks")));
            }
            crate::validate::check_bound(&reg, &p.desc)?;
            if let Some(ci) = p.chunks.iter().position(|c| c.pass != p.desc) {
                return Err(SubmitError::ChunkMismatch { pass: pi, chunk: ci });
            }
        }
        let mut last = self.last.lock();
        let mut report = NullFrameReport {
            submission: SubmissionId(last.submission.0 + 1),
            upload_bytes: uploads.iter().map(|w| w.data.len() as u64).sum(),
            upload_writes: uploads.len() as u32,
            passes: passes.len() as u32,
            ..NullFrameReport::default()
        };
        let mut digest = Digest::default();
        for p in passes.iter_mut() {
            digest.pass(&p.desc);
            for c in p.chunks.drain(..) {
                digest.combine(c.digest);
                report.counts += c.counts;
                report.chunks += 1;
            }
        }
        report.digest = digest.value();
        *last = report;
        Ok(report.submission)
    }

    fn wait(&self, _submission: SubmissionId) -> Result<(), SubmitError> {
        self.alive(SubmitError::DeviceLost)
    }

    fn read_rgba8(&self, texture: TextureId) -> Result<Image, ReadbackError> {
        self.alive(ReadbackError::DeviceLost)?;
        if !self.reg.read().textures.contains_key(texture) {
            return Err(ReadbackError::InvalidHandle);
        }
        Err(ReadbackError::Unsupported("the null backend renders no pixels"))
    }

    fn live(&self) -> LiveResources {
        self.reg.read().live()
    }

    fn read_buffer(&self, buffer: BufferId, offset: u64, len: u64) -> Result<Vec<u8>, ReadbackError> {
        self.alive(ReadbackError::DeviceLost)?;
        let reg = self.reg.read();
        let b = &reg.buffers.get(buffer).ok_or(ReadbackError::InvalidHandle)?.meta;
        crate::validate::check_buffer_read(b, offset, len)?;
        Err(ReadbackError::Unsupported("the null backend keeps no buffer contents"))
    }

    fn acquire(&self, surface: SurfaceId) -> Result<Acquired, SurfaceError> {
        self.alive(SurfaceError::DeviceLost)?;
        let mut surfaces = self.surfaces.idle(surface, |s| s.acquired.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        if s.images.is_empty() {
            return Ok(Acquired::Skip(SkipReason::ZeroSize));
        }
        let image = s.images[s.next];
        s.next = (s.next + 1) % s.images.len();
        s.acquired = Some(image);
        Ok(Acquired::Image(image))
    }

    fn surface_stand_in(&self, surface: SurfaceId) -> Option<TextureId> {
        self.surfaces.surfaces.lock().get(surface).map(|s| s.stand_in)
    }

    fn acquire_late(&self, surface: SurfaceId, size: (u32, u32)) -> Result<Acquired, SurfaceError> {
        self.alive(SurfaceError::DeviceLost)?;
        let mut surfaces = self.surfaces.idle(surface, |s| s.acquired.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        if s.images.is_empty() {
            return Ok(Acquired::Skip(SkipReason::ZeroSize));
        }
        if s.size != size {
            return Ok(Acquired::Skip(SkipReason::Resized));
        }
        s.next = (s.next + 1) % s.images.len();
        s.acquired = Some(s.stand_in);
        if let Some(t) = self.reg.write().textures.get_mut(s.stand_in) {
            t.meta.unbound = false;
        }
        Ok(Acquired::Image(s.stand_in))
    }

    fn configure_surface(&self, surface: SurfaceId, width: u32, height: u32) -> Result<(), SurfaceError> {
        self.alive(SurfaceError::DeviceLost)?;
        check_size(width, height, self.caps.max_texture_size)?;
        let mut surfaces = self.surfaces.idle(surface, |s| s.acquired.is_some())?;
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        let mut reg = self.reg.write();
        for old in s.images.drain(..) {
            let _ = reg.destroy(Resource::Texture(old));
        }
        (s.size, s.next) = ((width, height), 0);
        if width == 0 || height == 0 {
            return Ok(());
        }
        if let Some(t) = reg.textures.get_mut(s.stand_in) {
            (t.meta.width, t.meta.height) = (width, height);
        }
        for _ in 0..SWAPCHAIN_IMAGES {
            let desc = TextureDesc {
                label: "swapchain".into(),
                width,
                height,
                format: s.format,
                usage: TextureUsage::RENDER_TARGET | TextureUsage::COPY_SRC,
                samples: 1,
                mip_levels: 1,
            };
            let meta = reg.check_texture(&desc, &self.caps).map_err(|e| SurfaceError::Validation(e.to_string()))?;
            s.images.push(reg.textures.insert(Stored { meta, obj: () }));
        }
        Ok(())
    }

    fn surface_size(&self, surface: SurfaceId) -> Option<(u32, u32)> {
        self.surfaces.surfaces.lock().get(surface).map(|s| s.size)
    }

    fn present(&self, surface: SurfaceId) -> Result<(), SurfaceError> {
        self.alive(SurfaceError::DeviceLost)?;
        let mut surfaces = self.surfaces.surfaces.lock();
        let s = surfaces.get_mut(surface).ok_or(SurfaceError::InvalidHandle)?;
        let image = s.acquired.take().ok_or(SurfaceError::NotAcquired)?;
        self.unbind(s.stand_in, image);
        s.presents += 1;
        self.surfaces.image_back();
        Ok(())
    }

    fn release_image(&self, surface: SurfaceId) {
        if let Some(s) = self.surfaces.surfaces.lock().get_mut(surface) {
            if let Some(image) = s.acquired.take() {
                self.unbind(s.stand_in, image);
            }
        }
        self.surfaces.image_back();
    }
}
