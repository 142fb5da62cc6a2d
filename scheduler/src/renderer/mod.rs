//! The renderer: a thin owner of the worker pool, the scene and three parts.
//!
//! - **Resources** (`resources.rs`; meshes in `meshes.rs`, the fixed GPU objects in
//!   `gpu.rs`): shaders, materials, meshes, textures, their handles and GPU side, the
//!   global properties and the lighting.
//! - **The frame** (`render.rs`): the graph, its plan (`plan.rs`, `passes.rs`,
//!   `fullscreen.rs`), each pass's outputs and the frame's steps; what a frame is given
//!   (`input.rs`, `present.rs`).
//! - **The device side** (`device.rs`): the hand-off to the submission thread, what waits
//!   for the frames that may read it (`retire.rs`), device loss and recovery
//!   (`recover.rs`).
//!
//! `render_frame` (in `render.rs`, reached from [`Renderer::render_graph`] and
//! [`Renderer::render`] in `input.rs`) runs one frame's job graph (`jobs.rs`) on the
//! worker pool (`workers.rs`), stage by stage in the order data flows:
//!
//! ```text
//! cull[v] ──► sort[v] ──► batch[v] ──► record[v] ──► (frame packet) ──► submission thread
//!    └──────► patch (display lists of every used material) ──┘
//! ```
//!
//! Each stage's output for each view sits in its own slot (`jobs::ViewFrame`); the graph
//! proves that no two jobs that may overlap touch a slot in conflicting ways.

use std::sync::Arc;

use switchyard_backend::{Backend, Image, TextureId};

use crate::error::{InitError, RenderError};
use crate::frame_graph::TargetId;
use crate::graph::JobSpan;
use crate::profile;
use crate::scene::{new_owner, Scene};
use crate::submit::{SubmitReport, SubmitThread};

mod config;
mod copies;
mod device;
mod fullscreen;
pub(crate) mod gpu;
mod groups;
mod input;
mod jobs;
mod mesh_data;
mod meshes;
mod passes;
mod plan;
mod present;
mod recover;
#[cfg(feature = "reference")]
mod reference;
mod render;
mod residency;
mod resources;
mod retire;
mod textures;
mod uploads;
mod views;
mod warm_up;
mod workers;

use device::DeviceSide;
use render::FrameState;
use resources::Resources;
use workers::Workers;

pub use config::RendererConfig;
pub use copies::{CpuCopy, NeedsData};
pub use input::{FrameInput, GpuCullCounts, MAX_SHADOW_VIEWS};
pub use mesh_data::{MeshData, Vertex};
pub use meshes::MeshMemory;
pub use present::Presented;
pub use recover::RecoverStats;
#[cfg(feature = "reference")]
pub use reference::{GpuCullView, ReferenceFrame, ViewOutput};
pub use residency::{MeshOptions, Streamed, TextureOptions, UploadToken};
pub use resources::{Lighting, MemoryReport};
pub use textures::TextureData;
pub use warm_up::{LogReplay, LogSkip, WarmUp};
pub use workers::WorkerPool;

/// The Switchyard renderer over a backend: a thin owner of the worker pool, the scene and
/// three parts — what it owns on the GPU (`Resources`, `resources.rs`), the frames
/// (`FrameState`, `render.rs`) and the device side (`DeviceSide`, `device.rs`).
pub struct Renderer<B: Backend> {
    config: RendererConfig,
    pool: Workers,
    scene: Scene,
    res: Resources<B>,
    frame: FrameState<B>,
    device: DeviceSide<B>,
}

// An engine moves its renderer between threads and shares it behind a lock.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Renderer<switchyard_backend::null::NullBackend>>();
    send_sync::<Renderer<switchyard_backend::wgpu::WgpuBackend>>();
};

impl<B: Backend> Drop for Renderer<B> {
    /// Waits for the frames in flight, then destroys everything the renderer made on its
    /// backend (an engine's backend outlives it: nothing stays behind). The workers and
    /// the submission thread are joined after.
    fn drop(&mut self) {
        let _ = self.device.submit.flush();
        self.give_up_backend();
    }
}

impl<B: Backend> std::fmt::Debug for Renderer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("config", &self.config)
            .field("frame", &self.frame.number)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Renderer<B> {
    /// Creates a renderer: worker pool, submission thread, targets and shared buffers.
    pub fn new(backend: Arc<B>, config: RendererConfig) -> Result<Self, InitError> {
        config.check(&backend.caps())?;
        if !config.engine_profiler {
            profile::start();
        }
        let owner = new_owner();
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        let pool = Workers::new(&config.pool, threads)?;
        let submit = SubmitThread::spawn(backend.clone(), config.frames_in_flight)
            .map_err(|e| InitError::Thread(e.to_string()))?;
        Ok(Self {
            scene: Scene::with_capacity(config.max_objects, owner),
            pool,
            res: Resources::new(backend, &config, owner)?,
            frame: FrameState::new(),
            device: DeviceSide::new(submit),
            config,
        })
    }

    /// Makes the job named `job` (as in [`RenderError::JobPanicked`](crate::RenderError::JobPanicked) and Tracy:
    /// `cull[main]`, `patch`, `record[shadow0]`, `pass[post]`, ...) panic when it runs in
    /// frame `frame` ([`FrameStats::frame`] numbering; the next frame is
    /// `stats.frame + 1`). Fault injection for tests; one fault at a time.
    #[cfg(feature = "fault-injection")]
    pub fn inject_job_panic(&mut self, job: &str, frame: u64) {
        self.frame.fault_panic = Some((job.to_owned(), frame));
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<B> {
        &self.res.backend
    }

    /// The configuration.
    pub fn config(&self) -> &RendererConfig {
        &self.config
    }

    /// Worker threads in the pool.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Whether draws go through multi-draw-indirect.
    pub fn multi_draw(&self) -> bool {
        self.res.multi_draw
    }

    /// Whether GPU-culled views draw their multi-draws through count buffers
    /// ([`RendererConfig::indirect_count`] and a backend that can).
    pub fn indirect_count(&self) -> bool {
        self.res.gpu.cull.as_ref().is_some_and(|c| c.counts())
    }

    /// Why count buffers are off where they were asked for
    /// ([`RendererConfig::indirect_count`]) and views are culled on the GPU: the
    /// GPU-culled multi-draws then draw every bucket's record, empty or not.
    pub fn indirect_count_fallback(&self) -> Option<&'static str> {
        self.res.count_fallback
    }

    /// Whether views are culled on the GPU ([`CullMode::Gpu`](crate::CullOn::Gpu) over a
    /// backend that can: shadow passes and opaque forward passes).
    pub fn gpu_cull(&self) -> bool {
        self.res.gpu.cull.is_some()
    }

    /// Why GPU culling was asked for and every view is culled on the CPU instead: what the
    /// backend lacks (`None` where it culls on the GPU or was not asked to).
    pub fn cull_fallback(&self) -> Option<&'static str> {
        self.res.cull_fallback
    }

    /// Whether the opaque forward passes culled on the GPU are culled by occlusion too
    /// ([`RendererConfig::occlusion`](crate::RendererConfig::occlusion) over a backend
    /// that can).
    pub fn occlusion(&self) -> bool {
        self.res.gpu.cull.as_ref().is_some_and(|c| c.occlusion.is_some())
    }

    /// Why occlusion culling was asked for and is off (`None` where it is on or was not
    /// asked for).
    pub fn occlusion_fallback(&self) -> Option<&'static str> {
        self.res.occlusion_fallback
    }

    /// Whether each frame's command stream is digested ([`FrameStats::digest`](crate::FrameStats::digest)).
    pub fn digests(&self) -> bool {
        self.res.digest
    }

    /// What [`Renderer::read_color`] reads: the retained color target the last frame's
    /// last pass wrote (`None` before the first frame, or when it wrote an external one).
    pub fn color_target(&self) -> Option<TextureId> {
        self.frame.plan.as_ref().and_then(|p| p.readback)
    }

    /// The texture of a retained or transient target of the current graph (`None` for an
    /// external or unused target, a target of another graph, or before the graph's first
    /// frame).
    pub fn target_texture(&self, target: TargetId) -> Option<TextureId> {
        self.frame
            .plan
            .as_ref()
            .filter(|p| p.tag == target.1)
            .and_then(|p| p.textures.get(target.0 as usize).copied().flatten())
    }

    /// Bytes the current graph's own targets take on the GPU, and the bytes aliasing and
    /// memoryless targets save against one texture per target: (used, saved).
    pub fn target_memory(&self) -> (u64, u64) {
        self.frame.plan.as_ref().map_or((0, 0), |p| (p.memory.bytes, p.memory.saved))
    }

    /// The scene (read-only).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The names of the last frame's passes in submission order (the order of
    /// [`FrameStats::passes`](crate::FrameStats::passes)): the views' labels, made unique.
    pub fn pass_names(&self) -> &[String] {
        self.frame.plan.as_ref().map_or(&[], |p| &p.names)
    }

    /// When each job of the last frame ran (cull, sort, batch and record per scene pass,
    /// patch, one per engine pass), in ms after the job graph began; empty before the first
    /// frame. [`FrameStats::jobs_ms`](crate::FrameStats::jobs_ms) is the graph's length.
    pub fn last_job_spans(&self) -> Vec<JobSpan<'_>> {
        self.frame.plan.as_ref().map_or_else(Vec::new, |p| p.jobs.spans().collect())
    }

    /// The last frame's critical path through its job graph, first job first: the job
    /// that ended last, preceded by its input that ended last, and so on back to a job
    /// with no inputs. Shortening a job on it can shorten the frame; others cannot.
    pub fn last_critical_path(&self) -> Vec<JobSpan<'_>> {
        self.frame.plan.as_ref().map_or_else(Vec::new, |p| p.jobs.critical_path())
    }

    /// What the last frame's graph does that is legal but likely not meant (a store nothing
    /// reads, a load of a target nothing wrote), worded for a log; the same until the views'
    /// configuration changes.
    pub fn frame_warnings(&self) -> Vec<String> {
        self.frame.plan.as_ref().map_or_else(Vec::new, |p| p.graph.warnings.iter().map(|w| w.to_string()).collect())
    }

    /// Waits until every frame handed to the submission thread is finished on the GPU;
    /// returns a submission error of any of them.
    pub fn flush(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        if self.device.lost {
            return Err(RenderError::DeviceLost);
        }
        self.device.flush(&*self.res.backend, &mut self.res.meshes)?;
        self.poll()
    }

    /// Takes back the frames the submission thread finished, without waiting: returns the
    /// first submission error among them (naming its frame) as soon as it is known, or the
    /// latest report. An engine that renders rarely calls it to learn of a failed frame
    /// before its next `render`.
    pub fn poll(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        self.device.poll()
    }

    /// Flushes, then reads the color target the last frame's last pass wrote (retained,
    /// RGBA8) back.
    pub fn read_color(&mut self) -> Result<Image, RenderError> {
        self.flush()?;
        let t = self
            .color_target()
            .ok_or(RenderError::InvalidOutput { what: "the last pass writes no retained color target" })?;
        let read = self.res.backend.read_rgba8(t).map_err(RenderError::from);
        self.note_lost(read)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use switchyard_backend::null::NullBackend;

    use super::*;
    use crate::material::PassKind;

    /// Switchyard marks one frame per `render` call unless the engine owns the profiler.
    #[test]
    fn frames_are_marked_unless_the_engine_owns_the_profiler() {
        for engine_profiler in [false, true] {
            let config = RendererConfig { threads: 1, engine_profiler, ..RendererConfig::default() };
            let mut r = Renderer::new(Arc::new(NullBackend::new(false)), config).unwrap();
            let view = crate::View {
                label: "main",
                view_proj: glam::Mat4::IDENTITY,
                eye: glam::Vec3::ZERO,
                far: 1.0,
                layer_mask: 1,
                pass: PassKind::Forward,
            };
            let before = profile::MARKS.with(|m| m.get());
            for _ in 0..3 {
                r.render(&[view]).unwrap();
            }
            let marks = profile::MARKS.with(|m| m.get()) - before;
            assert_eq!(marks, if engine_profiler { 0 } else { 3 }, "engine_profiler {engine_profiler}");
        }
    }
}
