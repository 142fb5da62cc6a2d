//! The renderer: resources, the scene, and the frame loop.
//!
//! `render_frame` (in `render.rs`, reached from [`Renderer::render_graph`] and
//! [`Renderer::render`] in `input.rs`) runs one frame's job graph (`jobs.rs`) on the
//! worker pool, stage by stage in the order data flows:
//!
//! ```text
//! cull[v] ──► sort[v] ──► batch[v] ──► record[v] ──► (frame packet) ──► submission thread
//!    └──────► patch (display lists of every used material) ──┘
//! ```
//!
//! Each stage's output for each view sits in its own slot ([`ViewFrame`]); the graph
//! proves that no two jobs that may overlap touch a slot in conflicting ways.

use std::sync::Arc;

use glam::Vec3;
use gpu::{buffer, FrameResources, Made};
use switchyard_backend::{Backend, BindGroupId, BufferUsage, Caps, Command, Digest, PassDesc, TextureId};
use switchyard_kernels::cull::{CullLoop, Frustum};

use crate::batch::Batches;
use crate::cull::VisibleList;
use crate::error::{InitError, RenderError};
use crate::frame_graph::{Queue, TargetId, MAX_PASSES, MAX_VIEWS};
use crate::graph::Slot;
use crate::material::PropertySheet;
use crate::profile;
use crate::record::{GrowBuffer, RecordedPass};
use crate::scene::{new_owner, Handles, LocalBounds, MaterialHandle, MeshHandle, Resolve, Scene};
use crate::sort::SortedQueue;
use crate::submit::SubmitThread;
use crate::view::View;

mod device;
mod fullscreen;
pub(crate) mod gpu;
mod input;
mod jobs;
mod meshes;
mod passes;
mod plan;
mod present;
mod recover;
#[cfg(feature = "reference")]
mod reference;
mod render;
mod resources;
mod retire;

use device::DeviceSide;
use render::FrameState;
use resources::Resources;

pub use input::FrameInput;
pub use meshes::MeshMemory;
pub use present::Presented;
pub use recover::RecoverStats;
#[cfg(feature = "reference")]
pub use reference::{ReferenceFrame, ViewOutput};

/// Most shadow views of a frame given as views (forward views sample every shadow map,
/// and the lit shader samples four).
pub const MAX_SHADOW_VIEWS: usize = crate::frame_graph::MAX_SHADOW_MAPS;
/// Bytes of one view's globals in the globals buffer (the dynamic-offset alignment).
const GLOBALS_SLOT: usize = 512;

/// Renderer options.
#[derive(Clone, Debug)]
pub struct RendererConfig {
    /// Worker threads (0: available parallelism).
    pub threads: usize,
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
    /// Keep display lists between frames (the default). `false` rebuilds every used list
    /// every frame: the behaviour the cache replaces, kept as a benchmark baseline.
    pub display_list_cache: bool,
    /// Digest the command stream every frame ([`FrameStats::digest`](crate::FrameStats::digest)). `None` (the
    /// default): where the backend asks for it ([`Backend::digests_commands`]: the null
    /// backend does, wgpu does not, since it costs CPU time per command).
    pub digest: Option<bool>,
}

impl Default for RendererConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            frames_in_flight: 3,
            width: 640,
            height: 360,
            shadow_map_size: 1024,
            max_objects: 1 << 20,
            max_materials: 4096,
            multi_draw: true,
            display_list_cache: true,
            digest: None,
        }
    }
}

impl RendererConfig {
    /// The configuration's sizes within what `caps` allows.
    fn check(&self, caps: &Caps) -> Result<(), InitError> {
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
        if self.frames_in_flight > 16 {
            return Err(InitError::Config("frames_in_flight above 16"));
        }
        Ok(())
    }
}

/// Vertex of the shared mesh buffers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    /// Position.
    pub position: [f32; 3],
    /// Normal.
    pub normal: [f32; 3],
    /// Texture coordinate.
    pub uv: [f32; 2],
}

/// Mesh data to upload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertices.
    pub vertices: Vec<Vertex>,
    /// Triangle list indices.
    pub indices: Vec<u32>,
}

/// Light and fog shared by every view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lighting {
    /// Direction the light travels.
    pub direction: Vec3,
    /// Fog color (linear).
    pub fog_color: Vec3,
    /// Fog density per unit distance.
    pub fog_density: f32,
    /// 0: no shadowing, 1: full.
    pub shadow_strength: f32,
}

impl Default for Lighting {
    fn default() -> Self {
        Self {
            direction: Vec3::new(-0.4, -1.0, -0.3),
            fog_color: Vec3::new(0.6, 0.7, 0.8),
            fog_density: 0.0,
            shadow_strength: 0.8,
        }
    }
}

/// What the frame's jobs read of one view, set before they run.
#[derive(Clone, Debug)]
pub(crate) struct ViewSetup {
    /// The camera and the pipelines it draws with (its label is unused: the pass's name is
    /// `pass.label`).
    pub(crate) view: View,
    pub(crate) frustum: Frustum,
    pub(crate) pass: PassDesc,
    /// Group 0 of the pass (globals, transforms, shadow maps).
    pub(crate) group: BindGroupId,
    pub(crate) queue: Queue,
    /// The view's index in the globals buffer (its order in the `render` call).
    pub(crate) slot: u32,
}

/// One view's stage outputs, one slot each: written by its stage's job, read by the next.
#[derive(Debug)]
pub(crate) struct ViewFrame<C> {
    pub(crate) setup: ViewSetup,
    pub(crate) visible: Slot<VisibleList>,
    pub(crate) sorted: Slot<SortedQueue>,
    pub(crate) batches: Slot<Batches>,
    pub(crate) recorded: Slot<RecordedPass<C>>,
    /// The last frame's indirect arguments, kept for `view_output` (its packet's copy
    /// went to the GPU).
    #[cfg(feature = "reference")]
    pub(crate) args: Vec<switchyard_backend::DrawIndexedIndirectArgs>,
}

impl<C> ViewFrame<C> {
    fn new(setup: ViewSetup) -> Self {
        Self {
            setup,
            visible: Slot::default(),
            sorted: Slot::default(),
            batches: Slot::default(),
            recorded: Slot::default(),
            #[cfg(feature = "reference")]
            args: Vec::new(),
        }
    }
}

/// What an engine pass (fullscreen, callback, compute) recorded this frame.
#[derive(Debug)]
pub(crate) struct EngineRecorded<C> {
    /// The backend pass (external attachments filled in for this frame).
    pub(crate) pass: PassDesc,
    pub(crate) commands: Vec<Command>,
    pub(crate) chunk: Option<C>,
    pub(crate) digest: Option<Digest>,
    pub(crate) error: Option<RenderError>,
    /// Draw calls, dispatches and state changes among the commands, counted as backends
    /// count them.
    pub(crate) draw_calls: u32,
    pub(crate) dispatches: u32,
    pub(crate) state_changes: u32,
    /// This frame's textures of the targets the pass samples (a callback's inputs).
    pub(crate) inputs: Vec<(TargetId, TextureId)>,
    /// A fullscreen pass's bind group for this frame's external inputs.
    pub(crate) input_group: Option<BindGroupId>,
    pub(crate) ms: f64,
}

impl<C> Default for EngineRecorded<C> {
    fn default() -> Self {
        Self {
            pass: PassDesc { label: "".into(), color: None, depth: None, compute: false },
            commands: Vec::new(),
            chunk: None,
            digest: None,
            error: None,
            draw_calls: 0,
            dispatches: 0,
            state_changes: 0,
            inputs: Vec::new(),
            input_group: None,
            ms: 0.0,
        }
    }
}

/// The worker pool. Dropping it waits (up to 10 s) until every worker thread has left:
/// rayon's own pool only asks them to.
struct Workers {
    pool: Option<rayon::ThreadPool>,
    /// Workers that have not left yet, and a signal for each that does.
    alive: Arc<(parking_lot::Mutex<usize>, parking_lot::Condvar)>,
}

impl Workers {
    fn start(threads: usize) -> Result<Self, InitError> {
        let alive = Arc::new((parking_lot::Mutex::new(0), parking_lot::Condvar::new()));
        let (up, down) = (alive.clone(), alive.clone());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("switchyard-worker-{i}"))
            .start_handler(move |i| {
                *up.0.lock() += 1;
                up.1.notify_all();
                profile::thread_name(&format!("switchyard-worker-{i}"));
            })
            .exit_handler(move |_| {
                *down.0.lock() -= 1;
                down.1.notify_all();
            })
            .build()
            .map_err(|e| InitError::Pool(e.to_string()))?;
        // Count every worker in (so a drop waits for each), within a bound.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut n = alive.0.lock();
        while *n < threads && !alive.1.wait_until(&mut n, deadline).timed_out() {}
        drop(n);
        Ok(Self { pool: Some(pool), alive })
    }
}

impl std::ops::Deref for Workers {
    type Target = rayon::ThreadPool;
    fn deref(&self) -> &rayon::ThreadPool {
        self.pool.as_ref().expect("dropped only in Drop")
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        drop(self.pool.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut n = self.alive.0.lock();
        while *n > 0 && !self.alive.1.wait_until(&mut n, deadline).timed_out() {}
    }
}

/// A texture the engine made, and its texels (kept to upload again on a new device).
#[derive(Debug)]
struct TextureRecord {
    id: TextureId,
    width: u32,
    height: u32,
    texels: Box<[u8]>,
}

/// The Switchyard renderer over a backend: a thin owner of the worker pool, the scene and
/// three parts — what it owns on the GPU (`Resources`), the frames (`FrameState`) and
/// the device side (`DeviceSide`), each a struct in `renderer/mod.rs`.
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

struct Resolver<'a> {
    meshes: &'a Handles<MeshHandle, u32>,
    bounds: &'a [LocalBounds],
    materials: &'a Handles<MaterialHandle, u32>,
}

impl Resolve for Resolver<'_> {
    fn mesh(&self, h: MeshHandle) -> Option<(u32, LocalBounds)> {
        self.meshes.get(h).map(|&i| (i, self.bounds[i as usize]))
    }
    fn material(&self, h: MaterialHandle) -> Option<u32> {
        self.materials.get(h).copied()
    }
}

impl<B: Backend> Renderer<B> {
    /// Creates a renderer: worker pool, submission thread, targets and shared buffers.
    pub fn new(backend: Arc<B>, config: RendererConfig) -> Result<Self, InitError> {
        config.check(&backend.caps())?;
        profile::start();
        let owner = new_owner();
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        let pool = Workers::start(threads)?;
        let b = &*backend;
        // On an error nothing made here stays on the backend.
        let gpu = FrameResources::create(b, &config)?;
        let mut m = Made::new(b);
        m.adopt(gpu.resources());
        let vertices =
            GrowBuffer { id: m.add(buffer(b, "mesh-vertices", 1 << 16, BufferUsage::VERTEX))?, capacity: 1 << 16 };
        let indices =
            GrowBuffer { id: m.add(buffer(b, "mesh-indices", 1 << 16, BufferUsage::INDEX))?, capacity: 1 << 16 };
        let multi_draw = config.multi_draw && b.caps().multi_draw_indirect;
        let digest = config.digest.unwrap_or_else(|| b.digests_commands());
        let submit = SubmitThread::spawn(backend.clone(), config.frames_in_flight)
            .map_err(|e| InitError::Thread(e.to_string()))?;
        m.keep();
        Ok(Self {
            scene: Scene::with_capacity(config.max_objects, owner),
            pool,
            res: Resources {
                backend,
                gpu,
                mesh_ranges: Vec::new(),
                mesh_hashes: Vec::new(),
                mesh_bounds: Vec::new(),
                vertices,
                indices,
                cpu_vertices: Vec::new(),
                cpu_indices: Vec::new(),
                meshes: meshes::MeshStore::default(),
                pending_uploads: Vec::new(),
                shader_handles: Handles::new(owner),
                textures: Handles::new(owner),
                mesh_handles: Handles::new(owner),
                material_handles: Handles::new(owner),
                library: Slot::default(),
                globals: PropertySheet::new(),
                globals_version: 0,
                global_keywords: Vec::new(),
                lighting: Lighting::default(),
                multi_draw,
                display_list_cache: config.display_list_cache,
                digest,
                kernel: CullLoop::best(),
            },
            frame: FrameState {
                graph: None,
                graph_generation: 0,
                plan: None,
                views: Vec::new(),
                engine_passes: Vec::new(),
                view_cameras: Vec::new(),
                patched: Slot::default(),
                mat_frames: Vec::new(),
                shadow_states: Vec::new(),
                lacking_passes: 0,
                number: 0,
                #[cfg(feature = "fault-injection")]
                fault_panic: None,
            },
            device: DeviceSide {
                submit,
                retired: retire::Retired::default(),
                lost: false,
                reconfigures: 0,
                surface_targets: Vec::new(),
            },
            config,
        })
    }

    /// Makes the job named `job` (as in [`RenderError::JobPanicked`] and Tracy:
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

    /// What the last frame's graph does that is legal but likely not meant (a store nothing
    /// reads, a load of a target nothing wrote), worded for a log; the same until the views'
    /// configuration changes.
    pub fn frame_warnings(&self) -> Vec<String> {
        self.frame.plan.as_ref().map_or_else(Vec::new, |p| p.graph.warnings.iter().map(|w| w.to_string()).collect())
    }
}
