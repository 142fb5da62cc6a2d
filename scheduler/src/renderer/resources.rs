//! Creating and changing resources and scene objects.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use switchyard_backend::{Backend, BindGroupId, Resource};
use switchyard_kernels::cull::CullLoop;

use super::config::RendererConfig;
use super::copies::MeshCopy;
use super::gpu::FrameResources;
use super::meshes::{MeshStore, MESH_INDICES, MESH_VERTICES};
use super::retire::Retiree;
use super::Renderer;
use crate::error::InitError;
use crate::error::ResourceError;
use crate::gpu_buffer::GrowBuffer;
use crate::gpu_buffer::{buffer, Made};
use crate::graph::Slot;
use crate::material::{
    Library, MaterialBinding, MaterialDesc, MaterialRecord, PassKind, PropertySheet, PropertyValue, ShaderDesc,
    ShaderRecord,
};
use crate::record::MeshRange;
use crate::scene::{
    HandleKind, Handles, LocalBounds, MaterialHandle, MeshHandle, ObjectDesc, ObjectId, SceneError, ShaderHandle,
    TextureHandle,
};
use crate::scene::{Owner, Resolve};

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

pub(super) use super::textures::TextureRecord;

impl<B: Backend> Resources<B> {
    /// What a material with base texture `t` binds: `t`, or while it is queued its
    /// fallback (white where none was chosen). `None`: a stale handle.
    pub(super) fn bound_texture(&self, t: TextureHandle) -> Option<switchyard_backend::TextureId> {
        let tex = self.textures.get(t)?;
        if !tex.queued {
            return Some(tex.id);
        }
        Some(tex.fallback.and_then(|f| self.textures.get(f)).map_or(self.gpu.white, |f| f.id))
    }

    /// Holds the groups of a material with base texture `t`: the group it binds, the
    /// texture that group binds, and (while `t` is queued) `t`'s own, held ahead so its
    /// arrival makes nothing. On an error nothing is held.
    pub(super) fn hold_groups(
        &mut self,
        t: Option<TextureHandle>,
        binding: MaterialBinding,
    ) -> Result<(BindGroupId, switchyard_backend::TextureId, Option<switchyard_backend::TextureId>), ResourceError>
    {
        let bound = match t {
            Some(t) => self.bound_texture(t).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?,
            None => self.gpu.white,
        };
        let ahead = t.and_then(|t| self.textures.get(t)).filter(|t| t.queued).map(|t| t.id);
        let b = &*self.backend;
        let group = self.groups.hold(b, &self.gpu, bound, binding)?;
        if let Some(a) = ahead {
            if let Err(e) = self.groups.hold(b, &self.gpu, a, binding) {
                // Made just now if this was its only hold: no frame has seen it.
                if let Some(g) = self.groups.let_go(bound, binding) {
                    let _ = b.destroy(Resource::BindGroup(g));
                }
                return Err(e.into());
            }
        }
        Ok((group, bound, ahead))
    }
}

pub(super) struct Resolver<'a> {
    pub(super) meshes: &'a Handles<MeshHandle, u32>,
    pub(super) bounds: &'a [LocalBounds],
    pub(super) materials: &'a Handles<MaterialHandle, u32>,
}

impl Resolve for Resolver<'_> {
    fn mesh(&self, h: MeshHandle) -> Option<(u32, LocalBounds)> {
        self.meshes.get(h).map(|&i| (i, self.bounds[i as usize]))
    }
    fn material(&self, h: MaterialHandle) -> Option<u32> {
        self.materials.get(h).copied()
    }
}

/// Memory by kind ([`Renderer::memory`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The backend's live objects and their bytes.
    pub gpu: switchyard_backend::LiveResources,
    /// Vertex and index bytes the renderer holds on the CPU: the meshes kept
    /// ([`CpuCopy::Keep`](super::CpuCopy::Keep)) and the uploads queued.
    pub cpu_mesh_bytes: u64,
    /// Texel bytes of the textures kept on the CPU ([`CpuCopy::Keep`](super::CpuCopy::Keep))
    /// and of the uploads queued.
    pub cpu_texture_bytes: u64,
    /// Of the backend's texture bytes, those of removed textures the renderer keeps for a
    /// later texture of the same shape (at most 64 MiB).
    pub pooled_texture_bytes: u64,
}

/// What the renderer owns on the GPU and the records behind it: the backend, the fixed
/// objects, the shared mesh buffers, the shaders, materials and textures and their handles,
/// the global properties and the lighting. The frame's jobs read it (through `&`; the
/// library's slot is the patch job's to write).
pub(super) struct Resources<B: Backend> {
    pub(super) backend: Arc<B>,
    pub(super) gpu: FrameResources,
    /// The materials' bind groups, one per texture bound (`groups.rs`).
    pub(super) groups: super::groups::MaterialGroups,
    pub(super) mesh_ranges: Vec<MeshRange>,
    pub(super) mesh_bounds: Vec<LocalBounds>,
    pub(super) vertices: GrowBuffer,
    pub(super) indices: GrowBuffer,
    /// Elements of the shared buffers up to the last one a mesh took (live and free).
    pub(super) vertex_end: u32,
    pub(super) index_end: u32,
    /// Free ranges and slots of the shared mesh buffers.
    pub(super) meshes: super::meshes::MeshStore,
    /// What each dense mesh draws: its ranges once resident, a fallback's or nothing
    /// before (`residency.rs`). `mesh_ranges` is where it lives.
    pub(super) draw_ranges: Vec<MeshRange>,
    /// Mesh and texture uploads waiting for a frame to take them (`residency.rs`).
    pub(super) uploads: super::residency::UploadQueue,
    /// Shared mesh buffers that grew since the last batch: each new one takes the old
    /// one's contents by a GPU copy before the next batch's writes; the old ones are
    /// retired once that batch is handed over.
    pub(super) pending_copies: Vec<switchyard_backend::BufferCopy>,
    pub(super) shader_handles: Handles<ShaderHandle, u32>,
    pub(super) textures: Handles<TextureHandle, TextureRecord>,
    pub(super) mesh_handles: Handles<MeshHandle, u32>,
    pub(super) material_handles: Handles<MaterialHandle, u32>,
    /// Shader and material records; the patch job compiles variants and builds lists.
    pub(super) library: Slot<Library>,
    pub(super) globals: PropertySheet,
    pub(super) globals_version: u64,
    pub(super) global_keywords: Vec<String>,
    pub(super) lighting: Lighting,
    pub(super) multi_draw: bool,
    pub(super) display_list_cache: bool,
    /// Digest every chunk's commands.
    pub(super) digest: bool,
    pub(super) kernel: CullLoop,
    /// Why GPU culling was asked for and not done (the backend lacks what it needs).
    pub(super) cull_fallback: Option<&'static str>,
    /// Why occlusion culling was asked for and is off.
    pub(super) occlusion_fallback: Option<&'static str>,
    /// Why count buffers were asked for and are off.
    pub(super) count_fallback: Option<&'static str>,
}

impl<B: Backend> Resources<B> {
    /// The fixed GPU objects and the shared mesh buffers, with no shader, material, mesh or
    /// texture yet. On an error nothing made here stays on the backend.
    pub(super) fn new(backend: Arc<B>, config: &RendererConfig, owner: Owner) -> Result<Self, InitError> {
        let b = &*backend;
        let (gpu_cull, cull_fallback) = crate::gpu_cull::resolve(config.cull, &b.caps());
        let (occlusion, occlusion_fallback) = crate::occlusion::resolve(config.occlusion, gpu_cull, &b.caps());
        let (count, count_fallback) = crate::gpu_cull::resolve_count(config, &b.caps());
        let gpu = FrameResources::create(b, config.max_objects, config.max_materials, gpu_cull, occlusion, count)?;
        let mut m = Made::new(b);
        m.adopt(gpu.resources());
        let vertices = GrowBuffer { id: m.add(buffer(b, "mesh-vertices", 1 << 16, MESH_VERTICES))?, capacity: 1 << 16 };
        let indices = GrowBuffer { id: m.add(buffer(b, "mesh-indices", 1 << 16, MESH_INDICES))?, capacity: 1 << 16 };
        // Nothing can fail after the groups (made last).
        let groups = super::groups::MaterialGroups::new(b, &gpu)?;
        let multi_draw = config.multi_draw && b.caps().multi_draw_indirect;
        let digest = config.digest.unwrap_or_else(|| b.digests_commands());
        m.keep();
        Ok(Self {
            backend,
            gpu,
            groups,
            mesh_ranges: Vec::new(),
            mesh_bounds: Vec::new(),
            vertices,
            indices,
            vertex_end: 0,
            index_end: 0,
            meshes: MeshStore::default(),
            draw_ranges: Vec::new(),
            uploads: Default::default(),
            pending_copies: Vec::new(),
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
            cull_fallback,
            occlusion_fallback,
            count_fallback,
        })
    }
}

impl<B: Backend> Renderer<B> {
    // ---- resources -------------------------------------------------------------------

    /// Registers a shader (variants compile on first use).
    pub fn create_shader(&mut self, desc: &ShaderDesc) -> Result<ShaderHandle, ResourceError> {
        let mut rec = ShaderRecord::new(desc)?;
        let caps = self.res.backend.caps();
        if desc.materials == MaterialBinding::Indexed
            && caps.max_storage_buffers_per_stage < crate::material::INDEXED_STORAGE_BUFFERS
        {
            return Err(ResourceError::Backend(switchyard_backend::CreateError::Unsupported(
                "indexed materials: the adapter binds too few storage buffers per shader stage",
            )));
        }
        // Compile the base variant and its declared passes' pipelines now, so malformed
        // WGSL or a missing entry point fails here, not mid-frame. (The record keeps the
        // pipelines: the display lists' first frame finds them.) A refusal destroys what
        // was made.
        let b = &*self.res.backend;
        let layouts = self.res.gpu.layouts;
        let mask = rec.passes.mask();
        let made = [PassKind::Shadow, PassKind::Forward]
            .into_iter()
            .filter(|p| mask & p.bit() != 0)
            .try_for_each(|pass| rec.pipeline(b, 0, pass, false, &layouts).map(drop));
        if let Err(e) = made {
            rec.take_compiled().for_each(|r| {
                let _ = b.destroy(r);
            });
            return Err(e);
        }
        let shaders = &mut self.res.library.get_mut().shaders;
        // A removed shader's slot is taken first.
        let dense = match shaders.iter().position(|s| s.removed) {
            Some(i) => {
                shaders[i] = rec;
                i
            }
            None => {
                shaders.push(rec);
                shaders.len() - 1
            }
        };
        Ok(self.res.shader_handles.insert(dense as u32))
    }

    /// Memory by kind: what the backend holds on the GPU (everything, the engine's own
    /// objects on a shared backend included: [`Backend::live`]) and the mesh and texture
    /// data the renderer keeps on the CPU (to grow the shared buffers and rebuild after a
    /// lost device).
    pub fn memory(&self) -> MemoryReport {
        let b = &self.res;
        MemoryReport {
            gpu: b.backend.live(),
            cpu_mesh_bytes: b.uploads.mesh_bytes()
                + b.meshes
                    .copies
                    .iter()
                    .map(|c| match c {
                        MeshCopy::Kept(m) => (size_of_val(&m.vertices[..]) + size_of_val(&m.indices[..])) as u64,
                        _ => 0,
                    })
                    .sum::<u64>(),
            cpu_texture_bytes: b.uploads.bytes() - b.uploads.mesh_bytes()
                + b.textures.iter().filter_map(|(_, t)| t.texels.as_ref()).map(|t| t.len() as u64).sum::<u64>(),
            pooled_texture_bytes: b.meshes.pool.bytes(),
        }
    }

    /// Removes a shader no material uses (`InUse` with their count otherwise). Its compiled
    /// variants and pipelines are destroyed once the frames that may still use them have
    /// finished.
    pub fn remove_shader(&mut self, s: ShaderHandle) -> Result<(), ResourceError> {
        let &i = self.res.shader_handles.get(s).ok_or(ResourceError::StaleHandle(HandleKind::Shader))?;
        let lib = self.res.library.get_mut();
        let users = lib.materials.iter().flatten().filter(|m| m.shader == i).count();
        if users > 0 {
            return Err(ResourceError::InUse(HandleKind::Shader, users));
        }
        self.res.shader_handles.remove(s);
        let rec = &mut lib.shaders[i as usize];
        let gone: Vec<Resource> = rec.take_compiled().collect();
        rec.forget();
        let s = &mut self.res;
        for r in gone {
            self.device.retired.retire(Retiree::Resource(r), &*s.backend, &mut s.meshes);
        }
        Ok(())
    }

    /// Creates a material. Keywords and properties must be declared by its shader.
    pub fn create_material(&mut self, desc: &MaterialDesc) -> Result<MaterialHandle, ResourceError> {
        // Removed materials leave free dense slots: a new material takes the first one.
        let free = self.res.library.get_mut().materials.iter().position(Option::is_none);
        if free.is_none() && self.res.library.get_mut().materials.len() >= self.config.max_materials {
            return Err(ResourceError::Invalid(format!("more than {} materials", self.config.max_materials)));
        }
        let &shader = self.res.shader_handles.get(desc.shader).ok_or(ResourceError::StaleHandle(HandleKind::Shader))?;
        let rec = &self.res.library.get_mut().shaders[shader as usize];
        let mask = rec.keyword_mask(&desc.keywords).map_err(|k| ResourceError::UnknownKeyword(k.clone()))?;
        for i in 0..desc.properties.len() {
            let (name, ty) = desc.properties.property(i);
            rec.check_property(name, ty)?;
        }
        let binding = rec.materials;
        let (group, bound, ahead) = self.res.hold_groups(desc.base_texture, binding)?;
        let materials = &mut self.res.library.get_mut().materials;
        let record = Some(MaterialRecord {
            handle: MaterialHandle::default(),
            shader,
            keyword_mask: mask,
            sheet: desc.properties.clone(),
            group,
            bound,
            ahead,
            texture: desc.base_texture,
            transparent: desc.transparent,
            version: 0,
            lists: Vec::new(),
        });
        let dense = match free {
            Some(i) => {
                materials[i] = record;
                i
            }
            None => {
                materials.push(record);
                materials.len() - 1
            }
        };
        let handle = self.res.material_handles.insert(dense as u32);
        materials[dense].as_mut().expect("just placed").handle = handle;
        Ok(handle)
    }

    /// Sets a material property (declared by its shader). Its display lists rebuild once.
    pub fn set_material_property(
        &mut self,
        m: MaterialHandle,
        name: &str,
        value: PropertyValue,
    ) -> Result<(), ResourceError> {
        let &i = self.res.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let lib = self.res.library.get_mut();
        let rec = lib.materials[i as usize].as_mut().ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        lib.shaders[rec.shader as usize].check_property(name, value.ty())?;
        rec.sheet.set(name, value);
        rec.version += 1;
        Ok(())
    }

    /// Turns a material keyword on or off (no rebuild: each variant keeps its lists).
    pub fn set_material_keyword(&mut self, m: MaterialHandle, keyword: &str, on: bool) -> Result<(), ResourceError> {
        let &i = self.res.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let lib = self.res.library.get_mut();
        let rec = lib.materials[i as usize].as_mut().ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let bit = lib.shaders[rec.shader as usize]
            .keyword_bit(keyword)
            .ok_or_else(|| ResourceError::UnknownKeyword(keyword.into()))?;
        if on {
            rec.keyword_mask |= bit;
        } else {
            rec.keyword_mask &= !bit;
        }
        Ok(())
    }

    /// Removes a material no object uses.
    pub fn remove_material(&mut self, m: MaterialHandle) -> Result<(), ResourceError> {
        let &i = self.res.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let users = self.scene.material_users.get(i as usize).copied().unwrap_or(0);
        if users > 0 {
            return Err(ResourceError::InUse(HandleKind::Material, users as usize));
        }
        self.res.material_handles.remove(m);
        let lib = self.res.library.get_mut();
        if let Some(rec) = lib.materials[i as usize].take() {
            // Queued frames may still bind its group: destroyed once they finish, where
            // it was the last material of its texture.
            let binding = lib.shaders[rec.shader as usize].materials;
            let s = &mut self.res;
            for t in std::iter::once(rec.bound).chain(rec.ahead) {
                if let Some(g) = s.groups.let_go(t, binding) {
                    self.device.retired.retire(Retiree::Resource(Resource::BindGroup(g)), &*s.backend, &mut s.meshes);
                }
            }
        }
        Ok(())
    }

    /// Sets a global property; materials whose shader declares it but do not set it take it.
    pub fn set_global(&mut self, name: &str, value: PropertyValue) -> Result<(), ResourceError> {
        let existed = self.res.globals.find(name).is_some();
        if !self.res.globals.set(name, value) {
            let i = self.res.globals.find(name).expect("exists with another type");
            return Err(ResourceError::PropertyType { name: name.into(), expected: self.res.globals.property(i).1 });
        }
        if !existed {
            self.res.globals_version += 1; // a new global changes which properties lists patch
        }
        Ok(())
    }

    /// Turns a global keyword on or off.
    pub fn set_global_keyword(&mut self, keyword: &str, on: bool) {
        let pos = self.res.global_keywords.iter().position(|k| k == keyword);
        match (pos, on) {
            (None, true) => self.res.global_keywords.push(keyword.into()),
            (Some(i), false) => {
                self.res.global_keywords.swap_remove(i);
            }
            _ => {}
        }
    }

    /// Sets light and fog.
    pub fn set_lighting(&mut self, lighting: Lighting) {
        self.res.lighting = lighting;
    }

    /// The light and fog every view shades with.
    pub fn lighting(&self) -> Lighting {
        self.res.lighting
    }

    // ---- scene -----------------------------------------------------------------------

    /// Inserts objects; all or nothing.
    pub fn insert_objects(&mut self, objects: &[ObjectDesc]) -> Result<Vec<ObjectId>, SceneError> {
        let r = Resolver {
            meshes: &self.res.mesh_handles,
            bounds: &self.res.mesh_bounds,
            materials: &self.res.material_handles,
        };
        self.scene.insert(&r, objects)
    }

    /// Replaces objects' descriptions; all or nothing.
    pub fn update_objects(&mut self, edits: &[(ObjectId, ObjectDesc)]) -> Result<(), SceneError> {
        let r = Resolver {
            meshes: &self.res.mesh_handles,
            bounds: &self.res.mesh_bounds,
            materials: &self.res.material_handles,
        };
        self.scene.update(&r, edits)
    }

    /// Moves objects; all or nothing.
    pub fn set_transforms(&mut self, edits: &[(ObjectId, Mat4)]) -> Result<(), SceneError> {
        let bounds = &self.res.mesh_bounds;
        self.scene.set_transforms(|m| bounds[m as usize], edits)
    }

    /// Removes objects; all or nothing.
    pub fn remove_objects(&mut self, ids: &[ObjectId]) -> Result<(), SceneError> {
        self.scene.remove(ids)
    }
}
