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
use std::time::Instant;

use crate::material::ShaderDesc;
use glam::{Mat4, Vec3, Vec4};
use parking_lot::{Mutex, RwLock};
use rayon::prelude::*;
use slotmap::SlotMap;
use switchyard_backend::*;

use crate::error::*;
use crate::frame::*;
use crate::graph::JobGraph;
use crate::material::*;
use crate::profile;
use crate::scene::*;
use crate::sort::RadixSorter;
use crate::stats::FrameStats;
use crate::submit::{FramePacket, SubmitReport, SubmitThread, ViewUpload};
use crate::view::{cull_range, Frustum, View};

/// Most views per frame.
pub const MAX_VIEWS: usize = 8;
/// Most shadow views per frame (the lit shader samples two maps).
pub const MAX_SHADOW_VIEWS: usize = 2;
/// Objects per culling job part.
const CULL_PART: usize = 16 * 1024;
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

struct GrowBuffer {
    id: BufferId,
    capacity: u64,
}

struct ViewWork<C> {
    view: View,
    frustum: Frustum,
    pass: PassDesc,
    slot: u32,
    parts: Vec<Vec<u32>>,
    visible: Vec<u32>,
    used: Vec<u64>,
    keys: Vec<u64>,
    queue: Vec<u32>,
    sorter: RadixSorter,
    batches: Vec<Batch>,
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
            visible: Vec::new(),
            used: Vec::new(),
            keys: Vec::new(),
            queue: Vec::new(),
            sorter: RadixSorter::new(),
            batches: Vec::new(),
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
    mesh_bounds: Vec<crate::scene::LocalBounds>,
    vertices: GrowBuffer,
    indices: GrowBuffer,
    cpu_vertices: Vec<Vertex>,
    cpu_indices: Vec<u32>,
    forward_group: BindGroupId,
    shadow_group: BindGroupId,
    multi_draw: bool,
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
                mesh_bounds: Vec::new(),
                vertices,
                indices,
                cpu_vertices: Vec::new(),
                cpu_indices: Vec::new(),
                forward_group,
                shadow_group,
                multi_draw,
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

    // ---- resources -------------------------------------------------------------------

    /// Registers a shader (variants compile on first use).
    pub fn create_shader(&mut self, desc: &ShaderDesc) -> Result<ShaderHandle, ResourceError> {
        let rec = ShaderRecord::new(desc)?;
        // Compile the base variant now so malformed WGSL fails here, not mid-frame.
        rec.variant_module(&*self.shared.backend, 0)?;
        self.shared.shaders.push(rec);
        Ok(self.shader_handles.insert(self.shared.shaders.len() as u32 - 1))
    }

    /// Uploads an RGBA8 sRGB texture.
    pub fn create_texture(&mut self, width: u32, height: u32, rgba8: &[u8]) -> Result<TextureHandle, ResourceError> {
        let b = &*self.shared.backend;
        let t = b.create_texture(&TextureDesc {
            label: "texture".into(),
            width,
            height,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST,
        })?;
        if let Err(e) = b.write_texture(t, rgba8) {
            let _ = b.destroy(Resource::Texture(t));
            return Err(e.into());
        }
        Ok(self.textures.insert(t))
    }

    /// Appends a mesh to the shared vertex and index buffers.
    pub fn create_mesh(&mut self, mesh: &MeshData) -> Result<MeshHandle, ResourceError> {
        if mesh.vertices.is_empty() || mesh.indices.is_empty() || mesh.indices.len() % 3 != 0 {
            return Err(ResourceError::Invalid("a mesh needs vertices and a multiple of 3 indices".into()));
        }
        if mesh.indices.iter().any(|&i| i as usize >= mesh.vertices.len()) {
            return Err(ResourceError::Invalid("mesh index out of range".into()));
        }
        if mesh.vertices.iter().any(|v| !v.position.iter().chain(&v.normal).chain(&v.uv).all(|x| x.is_finite())) {
            return Err(ResourceError::Invalid("mesh vertex is not finite".into()));
        }
        let s = &mut self.shared;
        let b = &*s.backend;
        let range = MeshRange {
            first_index: s.cpu_indices.len() as u32,
            index_count: mesh.indices.len() as u32,
            base_vertex: s.cpu_vertices.len() as i32,
        };
        let (mut lo, mut hi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
        for v in &mesh.vertices {
            lo = lo.min(Vec3::from(v.position));
            hi = hi.max(Vec3::from(v.position));
        }
        let v_end = ((s.cpu_vertices.len() + mesh.vertices.len()) * 32) as u64;
        let i_end = ((s.cpu_indices.len() + mesh.indices.len()) * 4) as u64;
        let grow = |g: &mut GrowBuffer, need: u64, label: &str, usage, all: &[u8]| -> Result<bool, ResourceError> {
            if need <= g.capacity {
                return Ok(false);
            }
            let cap = need.next_power_of_two();
            let id = buffer(b, label, cap, usage)?;
            b.write_buffer(id, 0, all)?;
            let _ = b.destroy(Resource::Buffer(g.id));
            *g = GrowBuffer { id, capacity: cap };
            Ok(true)
        };
        s.cpu_vertices.extend_from_slice(&mesh.vertices);
        s.cpu_indices.extend_from_slice(&mesh.indices);
        let pad_indices = |v: &[u32]| bytemuck::cast_slice::<u32, u8>(v).to_vec();
        if !grow(&mut s.vertices, v_end, "mesh-vertices", BufferUsage::VERTEX, bytemuck::cast_slice(&s.cpu_vertices))? {
            b.write_buffer(
                s.vertices.id,
                u64::from(range.base_vertex as u32) * 32,
                bytemuck::cast_slice(&mesh.vertices),
            )?;
        }
        if !grow(&mut s.indices, i_end, "mesh-indices", BufferUsage::INDEX, &pad_indices(&s.cpu_indices))? {
            b.write_buffer(s.indices.id, u64::from(range.first_index) * 4, bytemuck::cast_slice(&mesh.indices))?;
        }
        s.mesh_ranges.push(range);
        s.mesh_bounds.push(crate::scene::LocalBounds { center: (lo + hi) * 0.5, extent: (hi - lo) * 0.5 });
        Ok(self.mesh_handles.insert(s.mesh_ranges.len() as u32 - 1))
    }

    /// Creates a material. Keywords and properties must be declared by its shader.
    pub fn create_material(&mut self, desc: &MaterialDesc) -> Result<MaterialHandle, ResourceError> {
        if self.materials.get_mut().len() >= self.config.max_materials {
            return Err(ResourceError::Invalid(format!("more than {} materials", self.config.max_materials)));
        }
        let &shader = self.shader_handles.get(desc.shader).ok_or(ResourceError::StaleHandle(HandleKind::Shader))?;
        let rec = &self.shared.shaders[shader as usize];
        let mut mask = 0;
        for k in &desc.keywords {
            mask |= rec.keyword_bit(k).ok_or_else(|| ResourceError::UnknownKeyword(k.clone()))?;
        }
        for i in 0..desc.properties.len() {
            let (name, ty) = desc.properties.property(i);
            rec.check_property(name, ty)?;
        }
        let texture = match desc.base_texture {
            Some(t) => *self.textures.get(t).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?,
            None => self.white,
        };
        let group = self.shared.backend.create_bind_group(&BindGroupDesc {
            label: "material".into(),
            layout: self.shared.layouts.material,
            entries: vec![
                BindEntry {
                    binding: 0,
                    resource: BindResource::Buffer {
                        buffer: self.constants_buf,
                        offset: 0,
                        size: Some(u64::from(CONSTANT_SLOT)),
                    },
                },
                BindEntry { binding: 1, resource: BindResource::Texture(texture) },
                BindEntry { binding: 2, resource: BindResource::Sampler(self.material_sampler) },
            ],
        })?;
        let materials = self.materials.get_mut();
        materials.push(Some(MaterialRecord {
            shader,
            keyword_mask: mask,
            sheet: desc.properties.clone(),
            group,
            transparent: desc.transparent,
            version: 0,
            lists: Vec::new(),
        }));
        Ok(self.material_handles.insert(materials.len() as u32 - 1))
    }

    /// Sets a material property (declared by its shader). Its display lists rebuild once.
    pub fn set_material_property(
        &mut self,
        m: MaterialHandle,
        name: &str,
        value: PropertyValue,
    ) -> Result<(), ResourceError> {
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let rec =
            self.materials.get_mut()[i as usize].as_mut().ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        self.shared.shaders[rec.shader as usize].check_property(name, value.ty())?;
        rec.sheet.set(name, value);
        rec.version += 1;
        Ok(())
    }

    /// Turns a material keyword on or off (no rebuild: each variant keeps its lists).
    pub fn set_material_keyword(&mut self, m: MaterialHandle, keyword: &str, on: bool) -> Result<(), ResourceError> {
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let rec =
            self.materials.get_mut()[i as usize].as_ref().ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let bit = self.shared.shaders[rec.shader as usize]
            .keyword_bit(keyword)
            .ok_or_else(|| ResourceError::UnknownKeyword(keyword.into()))?;
        let rec = self.materials.get_mut()[i as usize].as_mut().expect("checked");
        if on {
            rec.keyword_mask |= bit;
        } else {
            rec.keyword_mask &= !bit;
        }
        Ok(())
    }

    /// Removes a material no object uses.
    pub fn remove_material(&mut self, m: MaterialHandle) -> Result<(), ResourceError> {
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let users = self.scene.material_users.get(i as usize).copied().unwrap_or(0);
        if users > 0 {
            return Err(ResourceError::InUse(HandleKind::Material, users as usize));
        }
        self.material_handles.remove(m);
        if let Some(rec) = self.materials.get_mut()[i as usize].take() {
            let _ = self.shared.backend.destroy(Resource::BindGroup(rec.group));
        }
        Ok(())
    }

    /// Sets a global property; materials whose shader declares it but do not set it take it.
    pub fn set_global(&mut self, name: &str, value: PropertyValue) -> Result<(), ResourceError> {
        let existed = self.globals.find(name).is_some();
        if !self.globals.set(name, value) {
            let i = self.globals.find(name).expect("exists with another type");
            return Err(ResourceError::PropertyType { name: name.into(), expected: self.globals.property(i).1 });
        }
        if !existed {
            self.globals_version += 1; // a new global changes which properties lists patch
        }
        Ok(())
    }

    /// Turns a global keyword on or off.
    pub fn set_global_keyword(&mut self, keyword: &str, on: bool) {
        let pos = self.global_keywords.iter().position(|k| k == keyword);
        match (pos, on) {
            (None, true) => self.global_keywords.push(keyword.into()),
            (Some(i), false) => {
                self.global_keywords.swap_remove(i);
            }
            _ => {}
        }
    }

    /// Sets light and fog.
    pub fn set_lighting(&mut self, lighting: Lighting) {
        self.lighting = lighting;
    }

    // ---- scene -----------------------------------------------------------------------

    /// Inserts objects; all or nothing.
    pub fn insert_objects(&mut self, objects: &[ObjectDesc]) -> Result<Vec<ObjectId>, SceneError> {
        let r = Resolver {
            meshes: &self.mesh_handles,
            bounds: &self.shared.mesh_bounds,
            materials: &self.material_handles,
        };
        self.scene.insert(&r, objects)
    }

    /// Replaces objects' descriptions; all or nothing.
    pub fn update_objects(&mut self, edits: &[(ObjectId, ObjectDesc)]) -> Result<(), SceneError> {
        let r = Resolver {
            meshes: &self.mesh_handles,
            bounds: &self.shared.mesh_bounds,
            materials: &self.material_handles,
        };
        self.scene.update(&r, edits)
    }

    /// Moves objects; all or nothing.
    pub fn set_transforms(&mut self, edits: &[(ObjectId, Mat4)]) -> Result<(), SceneError> {
        let bounds = &self.shared.mesh_bounds;
        let r = Resolver { meshes: &self.mesh_handles, bounds, materials: &self.material_handles };
        self.scene.set_transforms(&r, |m| bounds[m as usize], edits)
    }

    /// Removes objects; all or nothing.
    pub fn remove_objects(&mut self, ids: &[ObjectId]) -> Result<(), SceneError> {
        self.scene.remove(ids)
    }
}

/// What identifies a view for graph reuse.
type ViewKey = (PassKind, &'static str);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    Cull(usize),
    Sort(usize),
    Patch,
    Record(usize),
}

fn build_graph(views: &[View]) -> (JobGraph, Vec<Job>) {
    let mut g = JobGraph::new();
    let mut jobs = Vec::new();
    let culls: Vec<usize> = views
        .iter()
        .enumerate()
        .map(|(v, view)| {
            jobs.push(Job::Cull(v));
            g.add(format!("cull[{}]", view.label), &[])
        })
        .collect();
    jobs.push(Job::Patch);
    let patch = g.add("patch", &culls);
    for (v, view) in views.iter().enumerate() {
        jobs.push(Job::Sort(v));
        let sort = g.add(format!("sort[{}]", view.label), &[culls[v]]);
        jobs.push(Job::Record(v));
        g.add(format!("record[{}]", view.label), &[sort, patch]);
    }
    (g, jobs)
}

/// Grows a per-view buffer to at least `need` bytes (they are in no bind group).
fn grow<B: Backend>(
    b: &B,
    g: &mut Option<GrowBuffer>,
    need: u64,
    usage: BufferUsage,
    label: &str,
) -> Result<(), CreateError> {
    if g.as_ref().is_some_and(|g| g.capacity >= need) {
        return Ok(());
    }
    let cap = need.next_power_of_two();
    let id = buffer(b, label, cap, usage)?;
    if let Some(old) = g.take() {
        let _ = b.destroy(Resource::Buffer(old.id));
    }
    *g = Some(GrowBuffer { id, capacity: cap });
    Ok(())
}

#[inline]
fn bit(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Borrowed frame context the jobs run against.
struct FrameCtx<'a, B: Backend> {
    shared: &'a Shared<B>,
    objects: &'a Objects,
    views: &'a [Mutex<ViewWork<B::Chunk>>],
    used: &'a Mutex<[Vec<u64>; 2]>,
    patch: &'a RwLock<PatchWork>,
    materials: &'a Mutex<Vec<Option<MaterialRecord>>>,
    mat_frames: &'a [MaterialFrame],
    globals: &'a PropertySheet,
    globals_version: u64,
    constants: &'a Mutex<Vec<u8>>,
}

impl<B: Backend> FrameCtx<'_, B> {
    fn run(&self, job: Job) {
        match job {
            Job::Cull(v) => self.cull(&mut self.views[v].lock()),
            Job::Sort(v) => self.sort(&mut self.views[v].lock()),
            Job::Patch => self.patch(),
            Job::Record(v) => self.record(&mut self.views[v].lock()),
        }
    }

    fn cull(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text("cull", || w.view.label.to_string());
        let t = Instant::now();
        let o = self.objects;
        let n = o.len();
        w.parts.resize_with(n.div_ceil(CULL_PART).max(1), Vec::new);
        let (frustum, mask, shadow) = (w.frustum, w.view.layer_mask, w.view.pass == PassKind::Shadow);
        w.parts.par_iter_mut().enumerate().for_each(|(p, out)| {
            out.clear();
            cull_range(o, &frustum, mask, shadow, p * CULL_PART..((p + 1) * CULL_PART).min(n), out);
        });
        w.visible.clear();
        for p in &w.parts {
            w.visible.extend_from_slice(p);
        }
        w.used.clear();
        w.used.resize(self.mat_frames.len().div_ceil(64), 0);
        for &i in &w.visible {
            let m = o.material[i as usize] as usize;
            w.used[m / 64] |= 1 << (m % 64);
        }
        let mut used = self.used.lock();
        let acc = &mut used[w.view.pass as usize];
        acc.resize(w.used.len(), 0);
        acc.iter_mut().zip(&w.used).for_each(|(a, b)| *a |= b);
        w.ms[0] = t.elapsed().as_secs_f64() * 1e3;
    }

    fn sort(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text("sort", || w.view.label.to_string());
        let t = Instant::now();
        let (o, mats, view) = (self.objects, self.mat_frames, w.view);
        w.visible
            .par_iter()
            .with_min_len(4096)
            .map(|&i| {
                let i = i as usize;
                let m = o.material[i];
                let depth = depth_bits(&view, o.cx[i], o.cy[i], o.cz[i]);
                sort_key(view.pass, o.layer[i], &mats[m as usize], m, o.mesh[i], depth)
            })
            .collect_into_vec(&mut w.keys);
        w.queue.clear();
        w.queue.extend_from_slice(&w.visible);
        w.sorter.sort(&mut w.keys, &mut w.queue);
        build_batches(view.pass, &w.queue, o, mats, &mut w.batches);
        w.ms[1] = t.elapsed().as_secs_f64() * 1e3;
    }

    fn patch(&self) {
        let _z = profile::zone("patch");
        let t = Instant::now();
        let [shadow, fwd] = &*self.used.lock();
        let mut pw = self.patch.write();
        let pw = &mut *pw;
        let nmat = self.mat_frames.len();
        pw.lists.clear();
        pw.lists.resize(nmat, FrameList::default());
        pw.list_index.clear();
        pw.list_index.resize(nmat, 0);
        pw.slot_materials.clear();
        for m in 0..nmat {
            if bit(fwd, m) {
                pw.lists[m].offset = pw.slot_materials.len() as u32 * CONSTANT_SLOT;
                pw.slot_materials.push(m as u32);
            }
        }
        let ctx = BuildCtx {
            backend: &*self.shared.backend,
            layouts: &self.shared.layouts,
            globals: self.globals,
            globals_version: self.globals_version,
        };
        let shaders = &self.shared.shaders;
        let mut materials = self.materials.lock();
        // Lookups and builds run in material order: building creates backend objects, and
        // their handles (part of the command stream) must not depend on thread timing.
        let mut counts = ListCounts::default();
        for (m, (rec, list)) in materials.iter_mut().zip(pw.lists.iter_mut()).enumerate() {
            let (f, s) = (bit(fwd, m), bit(shadow, m));
            let Some(rec) = rec.as_mut().filter(|_| f || s) else { continue };
            let shader = &shaders[rec.shader as usize];
            let variant = self.mat_frames[m].variant;
            let err = |source| RenderError::DisplayList { material: m as u32, source };
            let built = (|| {
                if f {
                    let i = rec.list(shader, variant, PassKind::Forward, &ctx, &mut counts).map_err(err)?;
                    list.forward = rec.lists[i].pipeline;
                    list.group = rec.group;
                    pw.list_index[m] = i as u32;
                }
                if s {
                    let i = rec.list(shader, variant, PassKind::Shadow, &ctx, &mut counts).map_err(err)?;
                    list.shadow = rec.lists[i].pipeline;
                }
                Ok(())
            })();
            if let Err(e) = built {
                pw.error = Some(e);
                break;
            }
        }
        pw.counts = counts;
        if pw.error.is_none() {
            let mut constants = self.constants.lock();
            constants.clear();
            constants.resize(pw.slot_materials.len() * CONSTANT_SLOT as usize, 0);
            let globals = self.globals.values();
            let materials = &*materials;
            let list_index = &pw.list_index;
            constants.par_chunks_mut(CONSTANT_SLOT as usize).zip(pw.slot_materials.par_iter()).for_each(|(dst, &m)| {
                let rec = materials[m as usize].as_ref().expect("used material exists");
                rec.lists[list_index[m as usize] as usize].patch_into(dst, globals);
            });
        }
        pw.ms = t.elapsed().as_secs_f64() * 1e3;
    }

    fn record(&self, w: &mut ViewWork<B::Chunk>) {
        let _z = profile::zone_text("record", || w.view.label.to_string());
        let t = Instant::now();
        let pw = self.patch.read();
        if pw.error.is_some() {
            return;
        }
        let b = &*self.shared.backend;
        let w = &mut *w;
        let (Some(inst_id), Some(args_id)) = (w.instance_buf.as_ref().map(|g| g.id), w.args_buf.as_ref().map(|g| g.id))
        else {
            return;
        };
        w.upload.instance_buffer = Some(inst_id);
        w.upload.args_buffer = Some(args_id);
        w.upload.instances.resize(w.queue.len(), 0);
        w.upload.args.resize(w.batches.len(), DrawIndexedIndirectArgs::default());
        let nchunks = w.batches.len().div_ceil(CHUNK_BATCHES);
        w.cmds.resize_with(nchunks, Vec::new);
        w.chunks.clear();
        w.chunks.resize_with(nchunks, || None);
        w.digests.clear();
        w.digests.resize(nchunks, Digest::default());
        let ctx = RecordCtx {
            pass: w.view.pass,
            view_group: match w.view.pass {
                PassKind::Forward => self.shared.forward_group,
                PassKind::Shadow => self.shared.shadow_group,
            },
            view_offset: w.slot * GLOBALS_SLOT as u32,
            vertices: self.shared.vertices.id,
            indices: self.shared.indices.id,
            instances: inst_id,
            args: args_id,
            multi_draw: self.shared.multi_draw,
            meshes: &self.shared.mesh_ranges,
            lists: &pw.lists,
        };
        // Split the instance and argument memory into each chunk's disjoint slice.
        let mut slices = Vec::with_capacity(nchunks);
        let (mut inst, mut args) = (&mut w.upload.instances[..], &mut w.upload.args[..]);
        for c in w.batches.chunks(CHUNK_BATCHES) {
            let items = c.iter().map(|b| b.count as usize).sum::<usize>();
            let (i, rest_i) = std::mem::take(&mut inst).split_at_mut(items);
            let (a, rest_a) = std::mem::take(&mut args).split_at_mut(c.len());
            slices.push((i, a));
            inst = rest_i;
            args = rest_a;
        }
        let (pass, queue, batches, label) = (w.pass, &w.queue, &w.batches, w.view.label);
        let result = w
            .cmds
            .par_iter_mut()
            .zip(w.chunks.par_iter_mut())
            .zip(w.digests.par_iter_mut())
            .zip(slices.into_par_iter())
            .enumerate()
            .map(|(c, (((cmds, out), digest), (inst, args)))| -> Result<ChunkCounts, RenderError> {
                let b0 = c * CHUNK_BATCHES;
                let bs = &batches[b0..(b0 + CHUNK_BATCHES).min(batches.len())];
                let _z = profile::zone_text("record-chunk", || {
                    format!(
                        "{label} chunk {c}: batches {b0}..{}, materials {}..{}",
                        b0 + bs.len(),
                        bs[0].material,
                        bs[bs.len() - 1].material
                    )
                });
                let counts = record_chunk(&ctx, bs, b0, queue, inst, args, cmds);
                *digest = Digest::of_commands(cmds);
                let position = ChunkPosition { index: c as u32, count: nchunks as u32 };
                *out = Some(b.record(&pass, position, cmds)?);
                Ok(counts)
            })
            .try_reduce(ChunkCounts::default, |a, b| {
                Ok(ChunkCounts {
                    draw_calls: a.draw_calls + b.draw_calls,
                    state_changes: a.state_changes + b.state_changes,
                })
            });
        match result {
            Ok(c) => w.counts = c,
            Err(e) => w.error = Some(e),
        }
        w.ms[2] = t.elapsed().as_secs_f64() * 1e3;
    }
}

impl<B: Backend> Renderer<B> {
    fn validate_views(&self, views: &[View]) -> Result<(), RenderError> {
        if views.is_empty() || views.len() > MAX_VIEWS {
            return Err(RenderError::InvalidView { index: 0, what: "between 1 and MAX_VIEWS views" });
        }
        let mut shadows = 0;
        for (i, v) in views.iter().enumerate() {
            if !v.view_proj.is_finite() || !v.eye.is_finite() || !v.far.is_finite() || v.far <= 0.0 {
                return Err(RenderError::InvalidView {
                    index: i,
                    what: "matrix, eye or far is not finite and positive",
                });
            }
            if v.pass == PassKind::Shadow {
                shadows += 1;
                if shadows > MAX_SHADOW_VIEWS {
                    return Err(RenderError::InvalidView { index: i, what: "more than MAX_SHADOW_VIEWS shadow views" });
                }
            }
        }
        Ok(())
    }

    /// Takes finished packets back; with `block`, waits for at least one.
    fn collect_done(&mut self, block: bool) -> bool {
        let mut got = false;
        loop {
            let next = if block && !got { self.submit.done.recv().ok() } else { self.submit.done.try_recv().ok() };
            let Some((packet, report)) = next else { return got || !block };
            got = true;
            if let Err(e) = &report.result {
                self.pending_error.get_or_insert(e.clone());
            }
            self.last_report = Some(report);
            self.free_packets.push(packet);
        }
    }

    fn write_globals(&self, views: &[View], out: &mut Vec<u8>) {
        let shadow_vp: Vec<Mat4> = views.iter().filter(|v| v.pass == PassKind::Shadow).map(|v| v.view_proj).collect();
        let time = self
            .globals
            .find("_Time")
            .map_or(0.0, |i| f32::from_le_bytes(self.globals.bytes(i)[..4].try_into().expect("f32")));
        out.clear();
        out.resize(views.len() * GLOBALS_SLOT, 0);
        let l = &self.lighting;
        for (v, dst) in views.iter().zip(out.chunks_mut(GLOBALS_SLOT)) {
            let mut g = [0f32; 64];
            g[..16].copy_from_slice(&v.view_proj.to_cols_array());
            for k in 0..MAX_SHADOW_VIEWS {
                let m = shadow_vp.get(k).copied().unwrap_or(Mat4::ZERO);
                g[16 + 16 * k..32 + 16 * k].copy_from_slice(&m.to_cols_array());
            }
            g[48..52].copy_from_slice(&l.direction.normalize_or(Vec3::NEG_Y).extend(0.0).to_array());
            g[52..56].copy_from_slice(&v.eye.extend(1.0).to_array());
            g[56..60].copy_from_slice(&l.fog_color.extend(1.0).to_array());
            g[60..64].copy_from_slice(&[
                time,
                l.fog_density,
                if shadow_vp.is_empty() { 0.0 } else { l.shadow_strength },
                0.0,
            ]);
            dst.copy_from_slice(bytemuck::cast_slice(&g));
        }
    }

    fn pass_desc(&self, view: &View, shadow_index: usize, first_forward: bool) -> PassDesc {
        match view.pass {
            PassKind::Shadow => PassDesc {
                label: view.label,
                color: None,
                depth: Some(DepthAttachment {
                    texture: self.shadow_maps[shadow_index],
                    load: LoadOp::Clear(1.0),
                    store: StoreOp::Store,
                }),
            },
            PassKind::Forward => PassDesc {
                label: view.label,
                color: Some(ColorAttachment {
                    texture: self.color,
                    load: if first_forward { LoadOp::Clear([0.55, 0.65, 0.8, 1.0]) } else { LoadOp::Load },
                    store: StoreOp::Store,
                }),
                depth: Some(DepthAttachment {
                    texture: self.depth,
                    load: if first_forward { LoadOp::Clear(1.0) } else { LoadOp::Load },
                    store: StoreOp::Store,
                }),
            },
        }
    }

    /// Renders one frame of `views` and hands it to the submission thread.
    ///
    /// Shadow views are submitted before forward views (which sample their maps); the
    /// i-th shadow view renders into shadow map i. A submission error of an earlier frame
    /// is returned by the next call.
    pub fn render(&mut self, views: &[View]) -> Result<FrameStats, RenderError> {
        let t_frame = Instant::now();
        let _z = profile::zone("frame");
        self.validate_views(views)?;
        self.collect_done(false);
        if let Some(e) = self.pending_error.take() {
            return Err(e.into());
        }
        let mut packet = loop {
            if let Some(p) = self.free_packets.pop() {
                break p;
            }
            if !self.collect_done(true) {
                return Err(RenderError::SubmitThreadGone);
            }
            if let Some(e) = self.pending_error.take() {
                return Err(e.into());
            }
        };
        self.frame += 1;
        packet.frame = self.frame;

        // Per-material frame data: the variant from material and global keywords.
        let materials = self.materials.get_mut();
        self.mat_frames.clear();
        let mut shadow_states: Vec<(u32, u32)> = Vec::new();
        for rec in materials.iter() {
            let mf = match rec {
                Some(r) => {
                    let shader = &self.shared.shaders[r.shader as usize];
                    let global =
                        self.global_keywords.iter().filter_map(|k| shader.keyword_bit(k)).fold(0, |a, b| a | b);
                    let variant = r.keyword_mask | global;
                    let key = (r.shader, variant);
                    let state = shadow_states.iter().position(|s| *s == key).unwrap_or_else(|| {
                        shadow_states.push(key);
                        shadow_states.len() - 1
                    }) as u32;
                    MaterialFrame { variant, shader: r.shader, transparent: r.transparent, shadow_state: state }
                }
                None => MaterialFrame::default(),
            };
            self.mat_frames.push(mf);
        }

        // Globals and dirty transforms.
        let mut globals_bytes = std::mem::take(&mut packet.globals.1);
        self.write_globals(views, &mut globals_bytes);
        packet.globals = (Some(self.globals_buf), globals_bytes);
        packet.transforms.0 = Some(self.transforms_buf);
        packet.transforms.1.clear();
        packet.transform_writes.clear();
        for (s, e) in self.scene.dirty.drain(..) {
            let start = packet.transforms.1.len();
            let src = &self.scene.objects.transforms[s as usize..(e as usize).min(self.scene.objects.len())];
            packet.transforms.1.extend_from_slice(bytemuck::cast_slice(src));
            packet.transform_writes.push((u64::from(s) * 64, start..packet.transforms.1.len()));
        }

        // Views: shadow views first, then forward views, each in the order given.
        let mut order: Vec<usize> = (0..views.len()).filter(|&i| views[i].pass == PassKind::Shadow).collect();
        order.extend((0..views.len()).filter(|&i| views[i].pass == PassKind::Forward));
        // The graph is built once per view configuration and reused.
        let same =
            self.graph.as_ref().is_some_and(|(k, _, _)| k.iter().copied().eq(views.iter().map(|v| (v.pass, v.label))));
        if !same {
            let (graph, jobs) = build_graph(views);
            self.graph = Some((views.iter().map(|v| (v.pass, v.label)).collect(), graph, jobs));
        }
        while self.views.len() < views.len() {
            self.views.push(Mutex::new(ViewWork::default()));
        }
        packet.views.resize_with(views.len(), ViewUpload::default);
        let (mut shadow_i, mut first_forward) = (0, true);
        for &v in &order {
            let pass = self.pass_desc(&views[v], shadow_i, first_forward);
            match views[v].pass {
                PassKind::Shadow => shadow_i += 1,
                PassKind::Forward => first_forward = false,
            }
            let w = self.views[v].get_mut();
            w.view = views[v];
            w.frustum = Frustum::from_view_proj(&views[v].view_proj);
            w.pass = pass;
            w.slot = v as u32;
            w.error = None;
            w.ms = [0.0; 3];
            w.counts = ChunkCounts::default();
            std::mem::swap(&mut w.upload, &mut packet.views[v]);
            // Instance and indirect buffers hold at most one entry per object. They grow
            // here, in view order, so buffer handles do not depend on job timing.
            let need = self.scene.len().max(1024) as u64;
            let b = &*self.shared.backend;
            let grown = grow(b, &mut w.instance_buf, need * 4, BufferUsage::VERTEX, "instances")
                .and_then(|_| grow(b, &mut w.args_buf, need * 20, BufferUsage::INDIRECT, "indirect"));
            if let Err(e) = grown {
                std::mem::swap(&mut w.upload, &mut packet.views[v]);
                self.free_packets.push(packet);
                return Err(RenderError::DisplayList { material: u32::MAX, source: e.into() });
            }
        }
        for u in self.used.get_mut().iter_mut() {
            u.clear();
        }
        self.patch.get_mut().error = None;
        let constants = Mutex::new(std::mem::take(&mut packet.constants.1));

        let ctx = FrameCtx {
            shared: &self.shared,
            objects: &self.scene.objects,
            views: &self.views[..views.len()],
            used: &self.used,
            patch: &self.patch,
            materials: &self.materials,
            mat_frames: &self.mat_frames,
            globals: &self.globals,
            globals_version: self.globals_version,
            constants: &constants,
        };
        let (_, graph, jobs) = self.graph.as_ref().expect("set above");
        let ran = graph.run(&self.pool, &|j| ctx.run(jobs[j]));
        packet.constants = (Some(self.constants_buf), constants.into_inner());

        // Gather results in submission order.
        let mut stats = FrameStats {
            frame: self.frame,
            objects: self.scene.len() as u32,
            views: views.len() as u32,
            ..FrameStats::default()
        };
        let mut error = ran.err().map(|p| RenderError::JobPanicked { job: p.job, message: p.message });
        let pw = self.patch.get_mut();
        error = error.or(pw.error.take());
        stats.patch_ms = pw.ms;
        stats.lists = pw.counts;
        packet.passes.resize_with(views.len(), || PassSubmit {
            desc: PassDesc { label: "", color: None, depth: None },
            chunks: Vec::new(),
        });
        let mut digest = Digest::default();
        for (k, &v) in order.iter().enumerate() {
            let w = self.views[v].get_mut();
            std::mem::swap(&mut w.upload, &mut packet.views[v]);
            error = error.or(w.error.take());
            stats.visible[v] = w.visible.len() as u32;
            stats.queue_items += w.queue.len() as u32;
            stats.batches += w.batches.len() as u32;
            stats.draw_calls += w.counts.draw_calls;
            stats.state_changes += w.counts.state_changes;
            stats.cull_ms += w.ms[0];
            stats.sort_ms += w.ms[1];
            stats.record_ms += w.ms[2];
            stats.chunks += w.chunks.len() as u32;
            digest.pass(&w.pass);
            w.digests.iter().for_each(|d| digest.combine(*d));
            let p = &mut packet.passes[k];
            p.desc = w.pass;
            p.chunks.clear();
            p.chunks.extend(w.chunks.drain(..).flatten());
        }
        stats.digest = digest.value();
        stats.upload_bytes = packet.upload_bytes();
        if let Some(e) = error {
            packet.passes.iter_mut().for_each(|p| p.chunks.clear());
            self.free_packets.push(packet);
            // The scene's dirty transforms were consumed: resend everything next frame.
            let n = self.scene.len() as u32;
            if n > 0 {
                self.scene.dirty.push((0, n));
            }
            return Err(e);
        }
        if !self.submit.send(packet) {
            return Err(RenderError::SubmitThreadGone);
        }
        if let Some(r) = &self.last_report {
            stats.submitted_frame = r.frame;
            stats.submit_ms = r.submit_ms;
            stats.gpu_wait_ms = r.gpu_wait_ms;
        }
        stats.frame_ms = t_frame.elapsed().as_secs_f64() * 1e3;
        profile::plot("visible", f64::from(stats.queue_items));
        profile::plot("draw calls", f64::from(stats.draw_calls));
        profile::plot("batches", f64::from(stats.batches));
        profile::frame_mark();
        Ok(stats)
    }

    /// Waits until every frame handed to the submission thread is finished on the GPU;
    /// returns a submission error of any of them.
    pub fn flush(&mut self) -> Result<Option<SubmitReport>, RenderError> {
        if !self.submit.flush() {
            return Err(RenderError::SubmitThreadGone);
        }
        self.collect_done(false);
        if let Some(e) = self.pending_error.take() {
            return Err(e.into());
        }
        Ok(self.last_report.clone())
    }

    /// Flushes, then reads the main color target back as RGBA8 (sRGB-encoded).
    pub fn read_color(&mut self) -> Result<Image, RenderError> {
        self.flush()?;
        Ok(self.shared.backend.read_rgba8(self.color)?)
    }
}

/// The single-threaded reference result of a frame (see [`Renderer::reference_frame`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceFrame {
    /// Visible dense object indices per view (order given to `render`).
    pub visible: Vec<Vec<u32>>,
    /// Sorted queue per view.
    pub queue: Vec<Vec<u32>>,
    /// Digest of the command stream.
    pub digest: u64,
    /// Instance data per view.
    pub instances: Vec<Vec<u32>>,
}

/// What the parallel pipeline produced for one view in the last frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewOutput {
    /// Visible dense object indices.
    pub visible: Vec<u32>,
    /// Sorted queue.
    pub queue: Vec<u32>,
}

impl<B: Backend> Renderer<B> {
    /// The parallel pipeline's outputs of the last frame for view `v`.
    pub fn view_output(&self, v: usize) -> Option<ViewOutput> {
        let w = self.views.get(v)?.lock();
        Some(ViewOutput { visible: w.visible.clone(), queue: w.queue.clone() })
    }

    /// Computes the last rendered frame again with a plain single-threaded pipeline: a
    /// per-object frustum test, `sort_by_key` (stable), and serial recording against the
    /// display lists the last frame used. Tests compare it with the parallel pipeline;
    /// benchmarks use it as the baseline.
    pub fn reference_frame(&self, views: &[View]) -> ReferenceFrame {
        let o = &self.scene.objects;
        let pw = self.patch.read();
        let mut order: Vec<usize> = (0..views.len()).filter(|&i| views[i].pass == PassKind::Shadow).collect();
        order.extend((0..views.len()).filter(|&i| views[i].pass == PassKind::Forward));
        let mut out = ReferenceFrame {
            visible: vec![Vec::new(); views.len()],
            queue: vec![Vec::new(); views.len()],
            digest: 0,
            instances: vec![Vec::new(); views.len()],
        };
        let mut digest = Digest::default();
        let (mut shadow_i, mut first_forward) = (0, true);
        for &v in &order {
            let view = &views[v];
            let pass = self.pass_desc(view, shadow_i, first_forward);
            match view.pass {
                PassKind::Shadow => shadow_i += 1,
                PassKind::Forward => first_forward = false,
            }
            let f = Frustum::from_view_proj(&view.view_proj);
            let need = if view.pass == PassKind::Shadow { CASTS_SHADOWS } else { 0 };
            let visible: Vec<u32> = (0..o.len())
                .filter(|&i| {
                    (view.layer_mask >> o.layer[i]) & 1 == 1
                        && o.flags[i] & need == need
                        && f.intersects(Vec3::new(o.cx[i], o.cy[i], o.cz[i]), Vec3::new(o.ex[i], o.ey[i], o.ez[i]))
                })
                .map(|i| i as u32)
                .collect();
            let mut items: Vec<(u64, u32)> = visible
                .iter()
                .map(|&i| {
                    let i = i as usize;
                    let m = o.material[i];
                    let depth = depth_bits(view, o.cx[i], o.cy[i], o.cz[i]);
                    (sort_key(view.pass, o.layer[i], &self.mat_frames[m as usize], m, o.mesh[i], depth), i as u32)
                })
                .collect();
            items.sort_by_key(|p| p.0);
            let queue: Vec<u32> = items.iter().map(|p| p.1).collect();
            let mut batches = Vec::new();
            build_batches(view.pass, &queue, o, &self.mat_frames, &mut batches);
            let w = self.views[v].lock();
            let ctx = RecordCtx {
                pass: view.pass,
                view_group: match view.pass {
                    PassKind::Forward => self.shared.forward_group,
                    PassKind::Shadow => self.shared.shadow_group,
                },
                view_offset: v as u32 * GLOBALS_SLOT as u32,
                vertices: self.shared.vertices.id,
                indices: self.shared.indices.id,
                instances: w.instance_buf.as_ref().map_or_else(BufferId::default, |g| g.id),
                args: w.args_buf.as_ref().map_or_else(BufferId::default, |g| g.id),
                multi_draw: self.shared.multi_draw,
                meshes: &self.shared.mesh_ranges,
                lists: &pw.lists,
            };
            digest.pass(&pass);
            let mut instances = vec![0u32; queue.len()];
            let mut args = vec![DrawIndexedIndirectArgs::default(); batches.len()];
            let mut cmds = Vec::new();
            let mut done = 0;
            for (c, bs) in batches.chunks(CHUNK_BATCHES).enumerate() {
                let items = bs.iter().map(|b| b.count as usize).sum::<usize>();
                let b0 = c * CHUNK_BATCHES;
                record_chunk(
                    &ctx,
                    bs,
                    b0,
                    &queue,
                    &mut instances[done..done + items],
                    &mut args[b0..b0 + bs.len()],
                    &mut cmds,
                );
                digest.combine(Digest::of_commands(&cmds));
                done += items;
            }
            out.visible[v] = visible;
            out.queue[v] = queue;
            out.instances[v] = instances;
        }
        out.digest = digest.value();
        out
    }
}
