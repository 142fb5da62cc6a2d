//! The renderer's options and their limits.

use switchyard_backend::Caps;

use super::gpu;
use crate::error::InitError;

/// Renderer options.
#[derive(Clone, Debug)]
pub struct RendererConfig {
    /// Worker threads of Switchyard's own pool (0: available parallelism; unused with the
    /// engine's pool).
    pub threads: usize,
    /// Which threads run the frame's jobs: Switchyard's own pool (the default), the
    /// engine's, or rayon's global one. The command stream is the same on any of them.
    pub pool: super::WorkerPool,
    /// Frames queued to the submission thread and the GPU (default 3; 1..=16).
    pub frames_in_flight: usize,
    /// Main target size.
    pub width: u32,
    /// Main target size.
    pub height: u32,
    /// Shadow map side.
    pub shadow_map_size: u32,
    /// Most objects in the scene (sizes the transform buffer).
    pub max_objects: usize,
    /// Most materials (sizes the constant ring).
    pub max_materials: usize,
    /// Use multi-draw-indirect where the backend has it.
    pub multi_draw: bool,
    /// Where a view is culled on the GPU and drawn with multi-draw, draw through a count
    /// buffer where the backend has one ([`Caps::indirect_count`]; the default): the cull
    /// packs each multi-draw's non-empty records and writes their number, so the GPU
    /// skips the buckets it culled empty. `false`: every bucket's record is drawn, empty
    /// or not (the measured baseline; [`Renderer::indirect_count`](crate::Renderer::indirect_count)
    /// says which one runs).
    pub indirect_count: bool,
    /// An opaque forward pass culled on the GPU that follows a depth prepass
    /// (`PassKind::Depth`) of the same camera and queue, culled on the GPU too, draws the
    /// prepass's visible set instead of culling again (the default): no cull of its own,
    /// and no split for occlusion culling (the prepass's two phases are done by then).
    /// `false`: it culls on its own (the measured baseline).
    pub reuse_prepass_cull: bool,
    /// Where views are culled ([`CullMode`](crate::CullOn)); GPU culling falls back to
    /// the CPU where the backend cannot ([`Renderer::cull_fallback`](crate::Renderer::cull_fallback)).
    pub cull: crate::CullOn,
    /// Cull the opaque forward passes that are culled on the GPU by occlusion too, in two
    /// phases against a depth pyramid (`occlusion.rs`; default `false`). Needs GPU
    /// culling; falls back to frustum culling where the backend cannot
    /// ([`Renderer::occlusion_fallback`](crate::Renderer::occlusion_fallback)). Only
    /// passes with a single-sampled depth target of the graph's own are split.
    pub occlusion: bool,
    /// Keep display lists between frames (the default). `false` rebuilds every used list
    /// every frame: the behaviour the cache replaces, kept as a benchmark baseline.
    pub display_list_cache: bool,
    /// The engine owns the profiler: it starts the Tracy client and marks its frames, and
    /// Switchyard does neither (its zones appear once the engine's client runs). `false`
    /// (the default): Switchyard starts the client and marks one frame per `render` call.
    pub engine_profiler: bool,
    /// Digest the command stream every frame ([`FrameStats::digest`](crate::FrameStats::digest)). `None` (the
    /// default): where the backend asks for it ([`Backend::digests_commands`](switchyard_backend::Backend::digests_commands): the null
    /// backend does, wgpu does not, since it costs CPU time per command).
    pub digest: Option<bool>,
    /// Acquire a surface's image late ([`Renderer::present_graph`](crate::Renderer::present_graph);
    /// the default): the frame is recorded into a stand-in for the image, and the
    /// submission thread acquires the image only after it has submitted the frame's passes
    /// before the first one that draws into it, so neither the frame's CPU work nor its
    /// offscreen passes wait for the swapchain. Needs a backend that records without
    /// naming attachments ([`Backend::surface_stand_in`](switchyard_backend::Backend::surface_stand_in):
    /// wgpu with render bundles, the null backend); elsewhere, and with `false`, the image
    /// is acquired on the calling thread before the frame is recorded.
    pub late_acquire: bool,
    /// Whether [`Renderer::create_mesh`](crate::Renderer::create_mesh) and
    /// [`Renderer::create_texture`](crate::Renderer::create_texture) keep the data on the
    /// CPU after uploading it. [`CpuCopy::Drop`](crate::CpuCopy::Drop) (the default): the
    /// GPU holds the one copy, and after a lost device the engine supplies the data again
    /// ([`RecoverStats::needs_data`](crate::RecoverStats::needs_data)).
    pub cpu_copies: super::CpuCopy,
    /// Bytes of mesh and texture data a frame hands to the upload thread at most (default
    /// 64 MiB; non-zero): the queue's head up to this, a larger request alone
    /// (`residency.rs`).
    pub upload_budget: u64,
    /// Bytes of mapped staging memory [`Renderer::warm_up`](crate::Renderer::warm_up) makes
    /// for the upload thread's batches (default 16 MiB; at most
    /// [`MAX_STAGING_BYTES`](switchyard_backend::MAX_STAGING_BYTES)), so the first batches
    /// stage as fast as later ones instead of making it as they go. The ring still grows
    /// where batches need more; 0 makes none ahead.
    pub upload_staging: u64,
}

impl Default for RendererConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            pool: super::WorkerPool::Own,
            frames_in_flight: 3,
            width: 640,
            height: 360,
            shadow_map_size: 1024,
            max_objects: 1 << 20,
            max_materials: 4096,
            multi_draw: true,
            indirect_count: true,
            reuse_prepass_cull: true,
            cull: crate::CullOn::Cpu,
            occlusion: false,
            display_list_cache: true,
            engine_profiler: false,
            digest: None,
            late_acquire: true,
            cpu_copies: super::CpuCopy::Drop,
            upload_budget: 64 << 20,
            upload_staging: 16 << 20,
        }
    }
}

impl RendererConfig {
    /// The configuration's sizes within what `caps` allows.
    pub(super) fn check(&self, caps: &Caps) -> Result<(), InitError> {
        if self.width == 0 || self.height == 0 || self.shadow_map_size == 0 {
            return Err(InitError::Config("target sizes must be non-zero"));
        }
        if [self.width, self.height, self.shadow_map_size].iter().any(|&s| s > caps.max_texture_size) {
            return Err(InitError::Config("width, height and shadow_map_size at most the backend's largest texture"));
        }
        if self.frames_in_flight == 0 || self.max_objects == 0 || self.max_materials == 0 {
            return Err(InitError::Config("frames_in_flight, max_objects and max_materials must be non-zero"));
        }
        // The buffers these sizes make: each within the backend's largest buffer (and the
        // object count within the u32 dense indices).
        let bytes = |n: usize, each: u64| u64::try_from(n).ok().and_then(|n| n.checked_mul(each));
        let fits = |b: Option<u64>| b.is_some_and(|b| b <= caps.max_buffer_size);
        if self.max_objects > u32::MAX as usize / 2 || !fits(bytes(self.max_objects, gpu::TRANSFORM_SIZE)) {
            return Err(InitError::Config("max_objects: its transform buffer exceeds the backend's largest buffer"));
        }
        if !fits(bytes(self.max_materials, u64::from(crate::material::CONSTANT_SLOT))) {
            return Err(InitError::Config("max_materials: its constant buffer exceeds the backend's largest buffer"));
        }
        if self.upload_budget == 0 {
            return Err(InitError::Config("upload_budget must be non-zero"));
        }
        if self.upload_staging > switchyard_backend::MAX_STAGING_BYTES {
            return Err(InitError::Config("upload_staging above MAX_STAGING_BYTES"));
        }
        if self.frames_in_flight > 16 {
            return Err(InitError::Config("frames_in_flight above 16"));
        }
        Ok(())
    }
}
