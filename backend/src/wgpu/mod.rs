//! The wgpu backend: the real GPU path.
//!
//! Headless by default: passes render into offscreen textures that
//! [`Backend::read_rgba8`] copies back. Workers call [`Backend::record`] on their own
//! threads; each call validates its chunk (the shared validator) and encodes it with one of
//! two strategies ([`Encoding`]):
//!
//! - **`RenderBundle`** (default): a `RenderBundleEncoder` per chunk, created on the worker
//!   (it is `!Send`), finished into a `RenderBundle`. The submission thread opens one render
//!   pass per pass and executes the bundles in order. Bundles have no multi-draw-indirect,
//!   so `MultiDrawIndexedIndirect` becomes a loop of `draw_indexed_indirect` in a bundle.
//! - **`CommandBuffer`**: a `CommandEncoder` and a render pass per chunk (first chunk
//!   applies the pass's load op, later ones load), finished into a `CommandBuffer`;
//!   multi-draw-indirect is native. The submission thread submits them in order.
//!
//! Which one is faster depends on the workload and driver; `switchyard-bench-report`
//! measures both (BENCHMARKS.md). `RenderBundle` is the default: with per-batch draws it
//! recorded the default scene fastest on the H200 machine (Vulkan) and won the state-churn
//! workload on every adapter measured.
//!
//! wgpu reports validation errors through a device callback; this backend catches them in
//! error scopes while creating resources and, on a device it created, in a shared list
//! while submitting (on an engine's device, [`WgpuBackend::from_device`], in error scopes
//! too: the engine's callbacks stay its own), and returns them as typed errors instead of
//! panicking.

mod cache;
mod compute;
mod convert;
mod device;
mod encode;
mod engine;
mod mips;
pub(crate) mod native;
mod pipeline;
mod readback;
mod staging;
mod timing;
mod upload;

pub use cache::PipelineCacheError;
pub use native::{NativePass, WgpuPassContext, WgpuPassDraw};
pub use staging::STAGING_RING_KEPT;
pub use upload::WgpuStaged;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use convert::{binding_type, buffer_usage, map_create_error, sampler, stages, texture_format, texture_usage};
use parking_lot::{Mutex, RwLock};

use crate::command::{Caps, Command, Counts, PassDesc};
use crate::desc::{
    BindGroupDesc, BindGroupLayoutDesc, BindResource, BufferDesc, ComputePipelineDesc, PipelineDesc, SamplerDesc,
    ShaderModuleDesc, TextureDesc,
};
use crate::error::{CreateError, DestroyError, ReadbackError, RecordError, SubmitError, WriteError};
use crate::handle::{BindGroupId, BindGroupLayoutId, BufferId, PipelineId, SamplerId, ShaderId, SurfaceId, TextureId};
use crate::reflect::reflect_wgsl;
use crate::registry::{NativeObjects, Registry, SamplerMeta, Stored};
use crate::upload::check_buffer_write;
use crate::validate::{resolve_pass, validate_chunk};
use crate::{Acquired, Backend, BufferWrite, ChunkPosition, Image, PassSubmit, Resource, SubmissionId, SurfaceError};

/// How workers encode their chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// One `RenderBundle` per chunk, executed inside one render pass per pass.
    #[default]
    RenderBundle,
    /// One `CommandBuffer` (with its own render pass) per chunk.
    CommandBuffer,
}

/// Options for [`WgpuBackend::new`].
#[derive(Clone, Debug)]
pub struct WgpuConfig {
    /// Chunk encoding strategy.
    pub encoding: Encoding,
    /// Which wgpu backends to consider; `None` reads `WGPU_BACKEND` or takes all.
    pub backends: Option<wgpu::Backends>,
    /// Ask for the fallback (software) adapter.
    pub force_fallback_adapter: bool,
    /// Let wgpu validate indirect draw arguments on the GPU (a compute pass per
    /// submission and CPU work per indirect draw). Off by default: Switchyard writes the
    /// arguments itself from validated mesh ranges and instance counts.
    pub validate_indirect: bool,
}

impl Default for WgpuConfig {
    fn default() -> Self {
        Self {
            encoding: Encoding::RenderBundle,
            backends: None,
            force_fallback_adapter: false,
            validate_indirect: false,
        }
    }
}

struct WgpuObjects;
impl NativeObjects for WgpuObjects {
    type Buffer = wgpu::Buffer;
    type Texture = (wgpu::Texture, wgpu::TextureView);
    type Sampler = wgpu::Sampler;
    type Shader = wgpu::ShaderModule;
    type Layout = wgpu::BindGroupLayout;
    type BindGroup = wgpu::BindGroup;
    type Pipeline = compute::NativePipeline;
}

#[derive(Debug)]
enum Encoded {
    Bundle(wgpu::RenderBundle),
    Buffer(wgpu::CommandBuffer),
    /// A compute pass's validated commands, encoded at submit (wgpu has no compute bundles).
    Compute(Vec<Command>),
}

/// A chunk recorded by the wgpu backend.
#[derive(Debug)]
pub struct WgpuChunk {
    pass: PassDesc,
    encoded: Encoded,
    /// What the chunk counts.
    pub counts: Counts,
}

/// What the callbacks of a device this backend created write into: its validation errors
/// and whether it was lost.
type DeviceSink = (Arc<Mutex<Vec<String>>>, Arc<AtomicBool>);

/// The wgpu backend.
pub struct WgpuBackend {
    adapter_info: wgpu::AdapterInfo,
    device: wgpu::Device,
    queue: wgpu::Queue,
    reg: RwLock<Registry<WgpuObjects>>,
    caps: Caps,
    encoding: Encoding,
    /// Validation errors the device reported (its uncaptured-error handler, installed only
    /// on a device this backend created).
    errors: Arc<Mutex<Vec<String>>>,
    lost: Arc<AtomicBool>,
    /// This backend created the device (and installed its callbacks); `false`: an engine's.
    owns_device: bool,
    submissions: Mutex<Vec<(SubmissionId, wgpu::SubmissionIndex)>>,
    next_submission: Mutex<u64>,
    /// Held around every `queue.submit` and around configuring a surface: wgpu refuses a
    /// surface configure while another thread submits (it waits for the queue to empty),
    /// and with late acquire the submission thread submits while the engine resizes.
    queue_use: Mutex<()>,
    /// Kept for surfaces' capabilities.
    adapter: wgpu::Adapter,
    surfaces: crate::surface::Swapchains<engine::WgpuSurface>,
    /// Per-pass GPU timestamps (devices with timestamp queries, `RenderBundle` encoding).
    timer: Option<timing::PassTimer>,
    /// The driver's pipeline cache, where the device keeps one (`cache.rs`).
    driver_cache: RwLock<Option<wgpu::PipelineCache>>,
    /// What makes mip levels on the GPU, made on first use (`mips.rs`).
    mips: std::sync::OnceLock<mips::MipMaker>,
    /// RGBA8 textures whose levels may be generated are made for the compute path
    /// (`mips.rs`): the adapter has compute shaders, four storage textures a stage and
    /// texture view formats.
    compute_mips: bool,
    /// The submission thread's uploads go through it (`staging.rs`).
    staging: Mutex<staging::StagingRing>,
    /// The upload thread's batches go through this one (`upload.rs`).
    upload_ring: Mutex<staging::StagingRing>,
}

impl std::fmt::Debug for WgpuBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuBackend")
            .field("adapter", &self.adapter_info.name)
            .field("backend", &self.adapter_info.backend)
            .field("encoding", &self.encoding)
            .finish_non_exhaustive()
    }
}

impl WgpuBackend {
    /// The adapter in use.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// Whether passes get GPU zones in Tracy (feature `tracy`, a running Tracy client,
    /// and passes timed on the GPU: [`Caps::gpu_timestamps`]).
    pub fn gpu_zones(&self) -> bool {
        self.timer.as_ref().is_some_and(timing::PassTimer::zones)
    }

    /// The encoding strategy in use.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The wgpu device (for engines that create their own resources beside Switchyard's).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    fn scoped<T>(&self, f: impl FnOnce() -> T) -> Result<T, CreateError> {
        if self.lost.load(Ordering::Relaxed) {
            return Err(CreateError::DeviceLost);
        }
        // Internal errors too: a shader the platform's translator refuses (GLSL lacks some
        // WGSL operations) is reported as one.
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f();
        let errors = [validation, oom, internal].map(|scope| pollster::block_on(scope.pop()));
        match errors.into_iter().flatten().next() {
            Some(e) => Err(map_create_error(e)),
            None => Ok(value),
        }
    }

    fn take_errors(&self) -> Result<(), SubmitError> {
        if self.lost.load(Ordering::Relaxed) {
            return Err(SubmitError::DeviceLost);
        }
        let mut errors = self.errors.lock();
        if errors.is_empty() {
            return Ok(());
        }
        let msg = errors.join("; ");
        errors.clear();
        Err(SubmitError::Validation(msg))
    }
}

impl Backend for WgpuBackend {
    type Chunk = WgpuChunk;
    type Staged = WgpuStaged;

    fn name(&self) -> String {
        format!("wgpu/{:?}/{}", self.adapter_info.backend, self.adapter_info.name)
    }

    fn caps(&self) -> Caps {
        self.caps
    }

    fn create_buffer(&self, desc: &BufferDesc) -> Result<BufferId, CreateError> {
        let meta = self.reg.read().check_buffer(desc, &self.caps)?;
        let obj = self
            .scoped(|| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(&desc.label),
                    size: desc.size,
                    usage: buffer_usage(desc.usage),
                    mapped_at_creation: false,
                })
            })
            .map_err(|e| e.requesting(desc.size))?;
        Ok(self.reg.write().buffers.insert(Stored { meta, obj }))
    }

    fn write_buffer(&self, buffer: BufferId, offset: u64, data: &[u8]) -> Result<(), WriteError> {
        if self.is_lost() {
            return Err(WriteError::DeviceLost);
        }
        let reg = self.reg.read();
        check_buffer_write(&reg, &BufferWrite { buffer, offset, data })?;
        if !data.is_empty() {
            self.queue.write_buffer(&reg.buffers[buffer].obj, offset, data);
        }
        Ok(())
    }

    fn create_texture(&self, desc: &TextureDesc) -> Result<TextureId, CreateError> {
        let meta = self.reg.read().check_texture(desc, &self.caps)?;
        let obj = self
            .scoped(|| {
                let format = texture_format(desc.format);
                let (stored, usage) = mips::stored_as(self.compute_mips, desc, format);
                let t = self.device.create_texture(&wgpu::TextureDescriptor {
                    label: Some(&desc.label),
                    size: wgpu::Extent3d { width: desc.width, height: desc.height, depth_or_array_layers: 1 },
                    mip_level_count: desc.mip_levels,
                    sample_count: desc.samples,
                    dimension: wgpu::TextureDimension::D2,
                    format: stored,
                    usage: texture_usage(desc.usage) | usage,
                    view_formats: if stored == format { &[] } else { std::slice::from_ref(&format) },
                });
                // Its views sample and draw (storage views are the mip maker's alone).
                let usage = Some(texture_usage(desc.usage));
                let v =
                    t.create_view(&wgpu::TextureViewDescriptor { format: Some(format), usage, ..Default::default() });
                (t, v)
            })
            .map_err(|e| e.requesting(desc.format.mip_chain_bytes(desc.width, desc.height, desc.mip_levels)))?;
        Ok(self.reg.write().textures.insert(Stored { meta, obj }))
    }

    fn write_texture_level(&self, texture: TextureId, level: u32, data: &[u8]) -> Result<(), WriteError> {
        self.write_level(texture, level, data)
    }

    fn generate_mips(&self, texture: TextureId) -> Result<(), WriteError> {
        self.make_mips(texture)
    }

    fn create_sampler(&self, desc: &SamplerDesc) -> Result<SamplerId, CreateError> {
        let obj = self.scoped(|| self.device.create_sampler(&sampler(desc)))?;
        let meta = SamplerMeta::of(desc);
        Ok(self.reg.write().samplers.insert(Stored { meta, obj }))
    }

    fn create_shader(&self, desc: &ShaderModuleDesc) -> Result<ShaderId, CreateError> {
        self.create_shaders(std::slice::from_ref(desc)).pop().expect("one result per descriptor")
    }

    fn create_shaders(&self, descs: &[ShaderModuleDesc]) -> Vec<Result<ShaderId, CreateError>> {
        use rayon::prelude::*;
        // Parsed, validated and translated in parallel; inserted in order.
        let compile = |desc: &ShaderModuleDesc| {
            let meta = reflect_wgsl(desc)?;
            let obj = self.scoped(|| {
                self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&desc.label),
                    source: wgpu::ShaderSource::Wgsl(std::borrow::Cow::Borrowed(&desc.wgsl)),
                })
            })?;
            Ok(Stored { meta, obj })
        };
        let made: Vec<Result<_, CreateError>> =
            if descs.len() > 1 { descs.par_iter().map(compile).collect() } else { descs.iter().map(compile).collect() };
        let mut reg = self.reg.write();
        made.into_iter().map(|m| m.map(|stored| reg.shaders.insert(stored))).collect()
    }

    fn create_bind_group_layout(&self, desc: &BindGroupLayoutDesc) -> Result<BindGroupLayoutId, CreateError> {
        let meta = self.reg.read().check_layout(desc)?;
        let entries: Vec<_> = meta
            .entries
            .iter()
            .map(|e| wgpu::BindGroupLayoutEntry {
                binding: e.binding,
                visibility: stages(e.visibility),
                ty: binding_type(e.ty),
                count: None,
            })
            .collect();
        let obj = self.scoped(|| {
            self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&desc.label),
                entries: &entries,
            })
        })?;
        Ok(self.reg.write().layouts.insert(Stored { meta, obj }))
    }

    fn create_bind_group(&self, desc: &BindGroupDesc) -> Result<BindGroupId, CreateError> {
        let obj = {
            let reg = self.reg.read();
            let _meta = reg.check_bind_group(desc, &self.caps)?;
            let entries: Vec<_> = desc
                .entries
                .iter()
                .map(|e| wgpu::BindGroupEntry {
                    binding: e.binding,
                    resource: match e.resource {
                        BindResource::Buffer { buffer, offset, size } => {
                            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &reg.buffers[buffer].obj,
                                offset,
                                size: size.and_then(std::num::NonZeroU64::new),
                            })
                        }
                        BindResource::Texture(t) => wgpu::BindingResource::TextureView(&reg.textures[t].obj.1),
                        BindResource::Sampler(s) => wgpu::BindingResource::Sampler(&reg.samplers[s].obj),
                    },
                })
                .collect();
            let layout = &reg.layouts[desc.layout].obj;
            self.scoped(|| {
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&desc.label),
                    layout,
                    entries: &entries,
                })
            })?
        };
        let mut reg = self.reg.write();
        // Re-check under the write lock: a resource may have been destroyed in between.
        let meta = reg.check_bind_group(desc, &self.caps)?;
        Ok(reg.bind_groups.insert(Stored { meta, obj }))
    }

    fn create_pipeline(&self, desc: &PipelineDesc) -> Result<PipelineId, CreateError> {
        self.build_pipelines(std::slice::from_ref(desc)).pop().expect("one result per descriptor")
    }

    fn create_pipelines(&self, descs: &[PipelineDesc]) -> Vec<Result<PipelineId, CreateError>> {
        self.build_pipelines(descs)
    }

    fn create_compute_pipeline(&self, desc: &ComputePipelineDesc) -> Result<PipelineId, CreateError> {
        if self.is_lost() {
            return Err(CreateError::DeviceLost);
        }
        self.build_compute_pipeline(desc)
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

    fn record(&self, pass: &PassDesc, position: ChunkPosition, commands: &[Command]) -> Result<WgpuChunk, RecordError> {
        if self.is_lost() {
            return Err(RecordError::DeviceLost);
        }
        let reg = self.reg.read();
        let layout = resolve_pass(&reg, pass)?;
        let counts = validate_chunk(&reg, &layout, commands, &self.caps)?;
        let encoded = match self.encoding {
            _ if pass.compute => Encoded::Compute(commands.to_vec()),
            Encoding::RenderBundle => Encoded::Bundle(self.record_bundle(&reg, &layout, commands)),
            Encoding::CommandBuffer => Encoded::Buffer(self.record_command_buffer(&reg, pass, position, commands)),
        };
        Ok(WgpuChunk { pass: pass.clone(), encoded, counts })
    }

    fn stage(&self, uploads: &crate::Uploads<'_>) -> Result<WgpuStaged, SubmitError> {
        self.stage_batch(uploads)
    }

    fn prepare_uploads(&self, prepare: &crate::PrepareUploads<'_>) -> Result<crate::PreparedUploads, CreateError> {
        self.prepare_batches(prepare)
    }

    fn submit_staged(&self, staged: WgpuStaged) -> Result<(), SubmitError> {
        self.submit_batch(staged)
    }

    fn copy_buffers(&self, copies: &[crate::BufferCopy]) -> Result<(), SubmitError> {
        self.copy_now(copies)
    }

    fn submit(
        &self,
        uploads: &[BufferWrite<'_>],
        passes: &mut [PassSubmit<WgpuChunk>],
    ) -> Result<SubmissionId, SubmitError> {
        self.take_errors()?;
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
            let wrong = |c: &WgpuChunk| {
                c.pass != p.desc
                    || matches!(
                        (&c.encoded, self.encoding),
                        (Encoded::Bundle(_), Encoding::CommandBuffer) | (Encoded::Buffer(_), Encoding::RenderBundle)
                    )
                    || matches!(c.encoded, Encoded::Compute(_)) != p.desc.compute
            };
            if let Some(ci) = p.chunks.iter().position(wrong) {
                return Err(SubmitError::ChunkMismatch { pass: pi, chunk: ci });
            }
        }
        // The frame's bytes go through the staging ring (recalled after the submit).
        let mut staging = self.staging.lock();
        let copies = self.stage_uploads(&reg, uploads, &mut staging);
        // On an engine's device errors go to the engine's handler unless caught here.
        let scopes = (!self.owns_device).then(|| {
            let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
            let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            (internal, oom, self.device.push_error_scope(wgpu::ErrorFilter::Validation))
        });
        let encode::EncodedFrame { mut buffers, open, timed, native_error } = self.encode_frame(&reg, passes);
        // Finished and submitted without the registry: a creation on another thread (the
        // write lock) waits only for the encoding above, not for wgpu's work below.
        drop(reg);
        buffers.extend(open.map(wgpu::CommandEncoder::finish));
        let index = {
            let _queue = self.queue_use.lock();
            self.queue.submit(copies.into_iter().chain(buffers))
        };
        staging.recall();
        drop(staging);
        if let Some((internal, oom, validation)) = scopes {
            let invalid = pollster::block_on(validation.pop());
            let out_of_memory = pollster::block_on(oom.pop());
            let internal = pollster::block_on(internal.pop());
            if let Some(e) = invalid.or(internal) {
                return Err(SubmitError::Validation(e.to_string()));
            }
            if out_of_memory.is_some() {
                return Err(SubmitError::OutOfMemory);
            }
        }
        if let Some(e) = native_error {
            return Err(SubmitError::Validation(e));
        }
        self.take_errors()?;
        let mut next = self.next_submission.lock();
        *next += 1;
        let id = SubmissionId(*next);
        if let (Some(timer), Some(timed)) = (&self.timer, timed) {
            timer.submitted(id, timed);
        }
        let mut subs = self.submissions.lock();
        subs.push((id, index));
        // Keep only recent submissions: older ones are complete once a newer one is waited on.
        if subs.len() > 64 {
            let excess = subs.len() - 64;
            subs.drain(..excess);
        }
        Ok(id)
    }

    fn wait(&self, submission: SubmissionId) -> Result<(), SubmitError> {
        self.take_errors()?;
        let index = self.submissions.lock().iter().find(|(id, _)| *id == submission).map(|(_, i)| i.clone());
        let poll = match index {
            Some(i) => wgpu::PollType::Wait { submission_index: Some(i), timeout: None },
            None => wgpu::PollType::Wait { submission_index: None, timeout: None },
        };
        self.device.poll(poll).map_err(|e| match e {
            wgpu::PollError::Timeout => SubmitError::DeviceLost,
            other => SubmitError::Validation(other.to_string()),
        })?;
        if let Some(timer) = &self.timer {
            timer.complete(submission);
        }
        self.take_errors()
    }

    fn gpu_pass_times(&self, submission: SubmissionId, out: &mut Vec<f64>) -> bool {
        self.timer.as_ref().is_some_and(|t| t.pass_times(submission, out))
    }

    fn read_rgba8(&self, texture: TextureId) -> Result<Image, ReadbackError> {
        if self.is_lost() {
            return Err(ReadbackError::DeviceLost);
        }
        self.read_back(texture)
    }

    fn live(&self) -> crate::LiveResources {
        let staging_bytes = self.staging.lock().held() + self.upload_ring.lock().held();
        crate::LiveResources { staging_bytes, ..self.reg.read().live() }
    }

    fn read_buffer(&self, buffer: BufferId, offset: u64, len: u64) -> Result<Vec<u8>, ReadbackError> {
        if self.is_lost() {
            return Err(ReadbackError::DeviceLost);
        }
        self.read_buffer_bytes(buffer, offset, len)
    }

    fn acquire(&self, surface: SurfaceId) -> Result<Acquired, SurfaceError> {
        self.acquire_image(surface)
    }

    fn surface_stand_in(&self, surface: SurfaceId) -> Option<TextureId> {
        self.surface_stand_in_of(surface)
    }

    fn acquire_late(&self, surface: SurfaceId, size: (u32, u32)) -> Result<Acquired, SurfaceError> {
        self.acquire_into_stand_in(surface, size)
    }

    fn configure_surface(&self, surface: SurfaceId, width: u32, height: u32) -> Result<(), SurfaceError> {
        self.configure(surface, width, height)
    }

    fn surface_size(&self, surface: SurfaceId) -> Option<(u32, u32)> {
        self.surfaces.surfaces.lock().get(surface).map(|s| s.size())
    }

    fn present(&self, surface: SurfaceId) -> Result<(), SurfaceError> {
        self.present_image(surface)
    }

    fn release_image(&self, surface: SurfaceId) {
        self.release_surface_image(surface);
    }
}
