//! The renderer: resources, the scene, and the frame loop.
//!
//! `render(views)` runs the frame's job graph on the worker pool:
//!
//! ```text
//! cull[v] ──► sort[v] (keys, radix sort, batches) ──► record[v] ──► (packet) ──► submit thread
//!     └────► patch (display lists of every used material) ──┘
//! ```
//!
//! and hands the finished packet to the submission thread.

use std::sync::Arc;

use glam::{Mat4, Vec3, Vec4};
use parking_lot::{Mutex, RwLock};
use slotmap::SlotMap;
use switchyard_backend::*;

use crate::error::*;
use crate::frame::*;
use crate::graph::JobGraph;
use crate::material::*;
use crate::profile;
use crate::scene::*;
use crate::sort::RadixSorter;
use crate::submit::{FramePacket, SubmitReport, SubmitThread, ViewUpload};
use crate::view::{Frustum, View};

mod frame;
mod jobs;
mod reference;
mod resources;

use jobs::{Job, ViewKey};
pub use reference::{ReferenceFrame, ViewOutput};

/// Most views per frame.
pub const MAX_VIEWS: usize = 8;
/// Most shadow views per frame (the lit shader samples two maps).
pub const MAX_SHADOW_VIEWS: usize = 2;
/// Objects per culling job part.
const CULL_PART: usize = 16 * 1024;
/// Most visible indices per piece of the sort job's first pass.
const PIECE: usize = 4096;
const GLOBALS_SLOT: usize = 256;

/// Renderer options.
#[derive(Clone, Debug)]
pub struct RendererConfig {
    /// Worker threads (0: available parallelism).
    pub threads: usize,
    /// Frames queued to the submission thread and the GPU (default 3).
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
        }
    }
}

/// Creating a renderer failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// A configuration value is out of range.
    #[error("invalid config: {0}")]
    Config(&'static str),
    /// The backend refused a resource.
    #[error(transparent)]
    Backend(#[from] CreateError),
    /// The worker pool could not start.
    #[error("thread pool: {0}")]
    Pool(String),
    /// The submission thread could not start.
    #[error("submission thread: {0}")]
    Thread(String),
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

/// One culling job part's output.
#[derive(Default)]
struct CullPart {
    visible: Vec<u32>,
    used: Vec<u64>,
}

/// Views in submission order: shadow views first (forward views sample their maps), then
/// forward views, each group in the order given.
fn submission_order(views: &[View]) -> ([usize; MAX_VIEWS], usize) {
    let mut order = [0; MAX_VIEWS];
    let mut n = 0;
    for pass in [PassKind::Shadow, PassKind::Forward] {
        for (i, v) in views.iter().enumerate().take(MAX_VIEWS) {
            if v.pass == pass {
                order[n] = i;
                n += 1;
            }
        }
    }
    (order, n)
}

struct GrowBuffer {
    id: BufferId,
    capacity: u64,
}

struct ViewWork<C> {
    view: View,
    frustum: Frustum,
    pass: PassDesc,
    slot: u32,
    parts: Vec<CullPart>,
    /// The cull parts' output cut into pieces of at most `PIECE` indices, (part, start),
    /// and the pieces' offsets in the visible list: the sort job's unit of work.
    pieces: Vec<(u32, u32)>,
    piece_offsets: Vec<usize>,
    batch_scratch: BatchScratch,
    visible: Vec<u32>,
    used: Vec<u64>,
    keys: Vec<u64>,
    queue: Vec<u32>,
    sorter: RadixSorter,
    batches: Vec<Batch>,
    chunk_starts: Vec<usize>,
    cmds: Vec<Vec<Command>>,
    chunks: Vec<Option<C>>,
    digests: Vec<Digest>,
    upload: ViewUpload,
    instance_buf: Option<GrowBuffer>,
    args_buf: Option<GrowBuffer>,
    counts: ChunkCounts,
    ms: [f64; 3],
    error: Option<RenderError>,
}

impl<C> Default for ViewWork<C> {
    fn default() -> Self {
        Self {
            view: View {
                label: "",
                view_proj: Mat4::IDENTITY,
                eye: Vec3::ZERO,
                far: 1.0,
                layer_mask: 0,
                pass: PassKind::Forward,
            },
            frustum: Frustum { planes: [Vec4::ZERO; 6] },
            pass: PassDesc { label: "", color: None, depth: None },
            slot: 0,
            parts: Vec::new(),
            pieces: Vec::new(),
            piece_offsets: Vec::new(),
            batch_scratch: BatchScratch::default(),
            visible: Vec::new(),
            used: Vec::new(),
            keys: Vec::new(),
            queue: Vec::new(),
            sorter: RadixSorter::new(),
            batches: Vec::new(),
            chunk_starts: Vec::new(),
            cmds: Vec::new(),
            chunks: Vec::new(),
            digests: Vec::new(),
            upload: ViewUpload::default(),
            instance_buf: None,
            args_buf: None,
            counts: ChunkCounts::default(),
            ms: [0.0; 3],
            error: None,
        }
    }
}

/// Resources that jobs read during a frame.
struct Shared<B: Backend> {
    backend: Arc<B>,
    layouts: Layouts,
    shaders: Vec<ShaderRecord>,
    mesh_ranges: Vec<MeshRange>,
    /// Sort-key bits per dense mesh ([`mesh_bits`]).
    mesh_bits: Vec<u64>,
    mesh_bounds: Vec<crate::scene::LocalBounds>,
    vertices: GrowBuffer,
    indices: GrowBuffer,
    cpu_vertices: Vec<Vertex>,
    cpu_indices: Vec<u32>,
    forward_group: BindGroupId,
    shadow_group: BindGroupId,
    multi_draw: bool,
    display_list_cache: bool,
}

/// Display-list patching state for a frame.
struct PatchWork {
    lists: Vec<FrameList>,
    /// Index of each material's forward list in its `lists` this frame.
    list_index: Vec<u32>,
    slot_materials: Vec<u32>,
    counts: ListCounts,
    ms: f64,
    error: Option<RenderError>,
}

/// The Switchyard renderer over a backend.
pub struct Renderer<B: Backend> {
    config: RendererConfig,
    pool: rayon::ThreadPool,
    shared: Shared<B>,
    scene: Scene,
    shader_handles: SlotMap<ShaderHandle, u32>,
    textures: SlotMap<TextureHandle, TextureId>,
    mesh_handles: SlotMap<MeshHandle, u32>,
    material_handles: SlotMap<MaterialHandle, u32>,
    materials: Mutex<Vec<Option<MaterialRecord>>>,
    used: Mutex<[Vec<u64>; 2]>,
    globals: PropertySheet,
    globals_version: u64,
    global_keywords: Vec<String>,
    lighting: Lighting,
    color: TextureId,
    depth: TextureId,
    shadow_maps: [TextureId; MAX_SHADOW_VIEWS],
    globals_buf: BufferId,
    constants_buf: BufferId,
    transforms_buf: BufferId,
    material_sampler: SamplerId,
    white: TextureId,
    /// The job graph and its job table, keyed by the views' passes and labels.
    graph: Option<(Vec<ViewKey>, JobGraph, Vec<Job>)>,
    views: Vec<Mutex<ViewWork<B::Chunk>>>,
    patch: RwLock<PatchWork>,
    mat_frames: Vec<MaterialFrame>,
    /// Distinct (shader, variant) pairs of this frame: the shadow-pass state ids.
    shadow_states: Vec<(u32, u32)>,
    // Boxed: packets move through channels by pointer, not by value.
    #[allow(clippy::vec_box)]
    free_packets: Vec<Box<FramePacket<B::Chunk>>>,
    submit: SubmitThread<B>,
    frame: u64,
    last_report: Option<SubmitReport>,
    pending_error: Option<SubmitError>,
}

impl<B: Backend> std::fmt::Debug for Renderer<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer").field("config", &self.config).field("frame", &self.frame).finish_non_exhaustive()
    }
}

struct Resolver<'a> {
    meshes: &'a SlotMap<MeshHandle, u32>,
    bounds: &'a [crate::scene::LocalBounds],
    materials: &'a SlotMap<MaterialHandle, u32>,
}

impl Resolve for Resolver<'_> {
    fn mesh(&self, h: MeshHandle) -> Option<(u32, crate::scene::LocalBounds)> {
        self.meshes.get(h).map(|&i| (i, self.bounds[i as usize]))
    }
    fn material(&self, h: MaterialHandle) -> Option<u32> {
        self.materials.get(h).copied()
    }
}

fn buffer<B: Backend>(b: &B, label: &str, size: u64, usage: BufferUsage) -> Result<BufferId, CreateError> {
    b.create_buffer(&BufferDesc {
        label: label.into(),
        size: size.max(4).next_multiple_of(4),
        usage: usage | BufferUsage::COPY_DST,
    })
}

impl<B: Backend> Renderer<B> {
    /// Creates a renderer: worker pool, submission thread, targets and shared buffers.
    pub fn new(backend: Arc<B>, config: RendererConfig) -> Result<Self, InitError> {
        if config.width == 0 || config.height == 0 || config.shadow_map_size == 0 {
            return Err(InitError::Config("target sizes must be non-zero"));
        }
        if config.frames_in_flight == 0 || config.max_objects == 0 || config.max_materials == 0 {
            return Err(InitError::Config("frames_in_flight, max_objects and max_materials must be non-zero"));
        }
        profile::start();
        let threads = if config.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            config.threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("switchyard-worker-{i}"))
            .start_handler(|i| profile::thread_name(&format!("switchyard-worker-{i}")))
            .build()
            .map_err(|e| InitError::Pool(e.to_string()))?;
        let b = &*backend;
        let target = |label: &str, w, h, format, usage| {
            b.create_texture(&TextureDesc { label: label.into(), width: w, height: h, format, usage })
        };
        let rt = TextureUsage::RENDER_TARGET;
        let color = target(
            "main-color",
            config.width,
            config.height,
            TextureFormat::Rgba8UnormSrgb,
            rt | TextureUsage::COPY_SRC,
        )?;
        let depth = target("main-depth", config.width, config.height, TextureFormat::Depth32Float, rt)?;
        let s = config.shadow_map_size;
        let shadow_maps = [
            target("shadow-0", s, s, TextureFormat::Depth32Float, rt | TextureUsage::SAMPLED)?,
            target("shadow-1", s, s, TextureFormat::Depth32Float, rt | TextureUsage::SAMPLED)?,
        ];
        let white =
            target("white", 1, 1, TextureFormat::Rgba8UnormSrgb, TextureUsage::SAMPLED | TextureUsage::COPY_DST)?;
        b.write_texture(white, &[255; 4]).map_err(|e| CreateError::Invalid(e.to_string()))?;
        let vs = Stages::VERTEX | Stages::FRAGMENT;
        let entry = |binding, ty| LayoutEntry { binding, visibility: vs, ty };
        let globals_entries = vec![
            entry(0, BindingType::Uniform { dynamic: true, min_size: 0 }),
            entry(1, BindingType::Storage { dynamic: false }),
        ];
        let shadow_globals = b.create_bind_group_layout(&BindGroupLayoutDesc {
            label: "globals-shadow".into(),
            entries: globals_entries.clone(),
        })?;
        let mut fwd_entries = globals_entries;
        fwd_entries.extend([
            entry(2, BindingType::Texture(TextureSampleKind::Depth)),
            entry(3, BindingType::Texture(TextureSampleKind::Depth)),
            entry(4, BindingType::Sampler { comparison: true }),
        ]);
        let forward_globals =
            b.create_bind_group_layout(&BindGroupLayoutDesc { label: "globals-forward".into(), entries: fwd_entries })?;
        let material_layout = b.create_bind_group_layout(&BindGroupLayoutDesc {
            label: "material".into(),
            entries: vec![
                entry(0, BindingType::Uniform { dynamic: true, min_size: 0 }),
                entry(1, BindingType::Texture(TextureSampleKind::Float)),
                entry(2, BindingType::Sampler { comparison: false }),
            ],
        })?;
        let globals_buf = buffer(b, "globals", (MAX_VIEWS * GLOBALS_SLOT) as u64, BufferUsage::UNIFORM)?;
        let constants_buf = buffer(
            b,
            "material-constants",
            config.max_materials as u64 * u64::from(CONSTANT_SLOT),
            BufferUsage::UNIFORM,
        )?;
        let transforms_buf = buffer(b, "transforms", config.max_objects as u64 * 64, BufferUsage::STORAGE)?;
        let shadow_sampler = b.create_sampler(&SamplerDesc {
            label: "shadow".into(),
            filter: FilterMode::Linear,
            address: AddressMode::ClampToEdge,
            compare: Some(CompareFunction::LessEqual),
        })?;
        let material_sampler = b.create_sampler(&SamplerDesc {
            label: "material".into(),
            filter: FilterMode::Linear,
            address: AddressMode::Repeat,
            compare: None,
        })?;
        let globals_binding = BindResource::Buffer { buffer: globals_buf, offset: 0, size: Some(GLOBALS_SLOT as u64) };
        let transforms_binding = BindResource::Buffer { buffer: transforms_buf, offset: 0, size: None };
        let shadow_group = b.create_bind_group(&BindGroupDesc {
            label: "globals-shadow".into(),
            layout: shadow_globals,
            entries: vec![
                BindEntry { binding: 0, resource: globals_binding },
                BindEntry { binding: 1, resource: transforms_binding },
            ],
        })?;
        let forward_group = b.create_bind_group(&BindGroupDesc {
            label: "globals-forward".into(),
            layout: forward_globals,
            entries: vec![
                BindEntry { binding: 0, resource: globals_binding },
                BindEntry { binding: 1, resource: transforms_binding },
                BindEntry { binding: 2, resource: BindResource::Texture(shadow_maps[0]) },
                BindEntry { binding: 3, resource: BindResource::Texture(shadow_maps[1]) },
                BindEntry { binding: 4, resource: BindResource::Sampler(shadow_sampler) },
            ],
        })?;
        let vertices = GrowBuffer { id: buffer(b, "mesh-vertices", 1 << 16, BufferUsage::VERTEX)?, capacity: 1 << 16 };
        let indices = GrowBuffer { id: buffer(b, "mesh-indices", 1 << 16, BufferUsage::INDEX)?, capacity: 1 << 16 };
        let multi_draw = config.multi_draw && b.caps().multi_draw_indirect;
        let submit = SubmitThread::spawn(backend.clone(), config.frames_in_flight)
            .map_err(|e| InitError::Thread(e.to_string()))?;
        let free_packets = (0..config.frames_in_flight).map(|_| Box::default()).collect();
        Ok(Self {
            scene: Scene::with_capacity(config.max_objects),
            pool,
            shared: Shared {
                backend,
                layouts: Layouts {
                    forward_globals,
                    shadow_globals,
                    material: material_layout,
                    color_format: TextureFormat::Rgba8UnormSrgb,
                },
                shaders: Vec::new(),
                mesh_ranges: Vec::new(),
                mesh_bits: Vec::new(),
                mesh_bounds: Vec::new(),
                vertices,
                indices,
                cpu_vertices: Vec::new(),
                cpu_indices: Vec::new(),
                forward_group,
                shadow_group,
                multi_draw,
                display_list_cache: config.display_list_cache,
            },
            shader_handles: SlotMap::with_key(),
            textures: SlotMap::with_key(),
            mesh_handles: SlotMap::with_key(),
            material_handles: SlotMap::with_key(),
            materials: Mutex::new(Vec::new()),
            used: Mutex::new([Vec::new(), Vec::new()]),
            globals: PropertySheet::new(),
            globals_version: 0,
            global_keywords: Vec::new(),
            lighting: Lighting::default(),
            color,
            depth,
            shadow_maps,
            globals_buf,
            constants_buf,
            transforms_buf,
            material_sampler,
            white,
            graph: None,
            views: Vec::new(),
            patch: RwLock::new(PatchWork {
                lists: Vec::new(),
                list_index: Vec::new(),
                slot_materials: Vec::new(),
                counts: ListCounts::default(),
                ms: 0.0,
                error: None,
            }),
            mat_frames: Vec::new(),
            shadow_states: Vec::new(),
            free_packets,
            submit,
            frame: 0,
            last_report: None,
            pending_error: None,
            config,
        })
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<B> {
        &self.shared.backend
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
        self.shared.multi_draw
    }

    /// The main color target (RGBA8 sRGB).
    pub fn color_target(&self) -> TextureId {
        self.color
    }

    /// The scene (read-only).
    pub fn scene(&self) -> &Scene {
        &self.scene
    }
}
