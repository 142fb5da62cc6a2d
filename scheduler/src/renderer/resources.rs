//! Creating and changing resources and scene objects.

use glam::Mat4;
use switchyard_backend::{Backend, Resource, TextureDesc, TextureFormat, TextureId, TextureUsage};

use super::retire::Retiree;
use super::{Lighting, Renderer, Resolver, TextureRecord};
use crate::error::ResourceError;
use crate::material::{MaterialDesc, MaterialRecord, PassKind, PropertyValue, ShaderDesc, ShaderRecord};
use crate::scene::{HandleKind, MaterialHandle, ObjectDesc, ObjectId, SceneError, ShaderHandle, TextureHandle};

impl<B: Backend> Renderer<B> {
    // ---- resources -------------------------------------------------------------------

    /// Registers a shader (variants compile on first use).
    pub fn create_shader(&mut self, desc: &ShaderDesc) -> Result<ShaderHandle, ResourceError> {
        let mut rec = ShaderRecord::new(desc)?;
        // Compile the base variant and its declared passes' pipelines now, so malformed
        // WGSL or a missing entry point fails here, not mid-frame. (The record keeps the
        // pipelines: the display lists' first frame finds them.) A refusal destroys what
        // was made.
        let b = &*self.shared.backend;
        let layouts = self.shared.gpu.layouts;
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
        let shaders = &mut self.library.get_mut().shaders;
        shaders.push(rec);
        Ok(self.shader_handles.insert(shaders.len() as u32 - 1))
    }

    /// Uploads an RGBA8 sRGB texture.
    pub fn create_texture(&mut self, width: u32, height: u32, rgba8: &[u8]) -> Result<TextureHandle, ResourceError> {
        let id = upload_texture(&*self.shared.backend, width, height, rgba8)?;
        Ok(self.textures.insert(TextureRecord { id, width, height, texels: rgba8.into() }))
    }

    /// Creates a material. Keywords and properties must be declared by its shader.
    pub fn create_material(&mut self, desc: &MaterialDesc) -> Result<MaterialHandle, ResourceError> {
        // Removed materials leave free dense slots: a new material takes the first one.
        let free = self.library.get_mut().materials.iter().position(Option::is_none);
        if free.is_none() && self.library.get_mut().materials.len() >= self.config.max_materials {
            return Err(ResourceError::Invalid(format!("more than {} materials", self.config.max_materials)));
        }
        let &shader = self.shader_handles.get(desc.shader).ok_or(ResourceError::StaleHandle(HandleKind::Shader))?;
        let rec = &self.library.get_mut().shaders[shader as usize];
        let mut mask = 0;
        for k in &desc.keywords {
            mask |= rec.keyword_bit(k).ok_or_else(|| ResourceError::UnknownKeyword(k.clone()))?;
        }
        for i in 0..desc.properties.len() {
            let (name, ty) = desc.properties.property(i);
            rec.check_property(name, ty)?;
        }
        let texture = match desc.base_texture {
            Some(t) => self.textures.get(t).ok_or(ResourceError::StaleHandle(HandleKind::Texture))?.id,
            None => self.shared.gpu.white,
        };
        let group = self.shared.gpu.material_group(&*self.shared.backend, texture)?;
        let materials = &mut self.library.get_mut().materials;
        let record = Some(MaterialRecord {
            handle: MaterialHandle::default(),
            shader,
            keyword_mask: mask,
            sheet: desc.properties.clone(),
            group,
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
        let handle = self.material_handles.insert(dense as u32);
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
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let lib = self.library.get_mut();
        let rec = lib.materials[i as usize].as_mut().ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        lib.shaders[rec.shader as usize].check_property(name, value.ty())?;
        rec.sheet.set(name, value);
        rec.version += 1;
        Ok(())
    }

    /// Turns a material keyword on or off (no rebuild: each variant keeps its lists).
    pub fn set_material_keyword(&mut self, m: MaterialHandle, keyword: &str, on: bool) -> Result<(), ResourceError> {
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let lib = self.library.get_mut();
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
        let &i = self.material_handles.get(m).ok_or(ResourceError::StaleHandle(HandleKind::Material))?;
        let users = self.scene.material_users.get(i as usize).copied().unwrap_or(0);
        if users > 0 {
            return Err(ResourceError::InUse(HandleKind::Material, users as usize));
        }
        self.material_handles.remove(m);
        if let Some(rec) = self.library.get_mut().materials[i as usize].take() {
            // Queued frames may still bind it: destroyed once they finish.
            let s = &mut self.shared;
            s.retired.retire(Retiree::Resource(Resource::BindGroup(rec.group)), &*s.backend, &mut s.meshes);
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

    /// The light and fog every view shades with.
    pub fn lighting(&self) -> Lighting {
        self.lighting
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
        self.scene.set_transforms(|m| bounds[m as usize], edits)
    }

    /// Removes objects; all or nothing.
    pub fn remove_objects(&mut self, ids: &[ObjectId]) -> Result<(), SceneError> {
        self.scene.remove(ids)
    }
}

/// Creates an RGBA8 sRGB texture and uploads `texels` (destroyed again on a failed upload).
pub(super) fn upload_texture<B: Backend>(
    b: &B,
    width: u32,
    height: u32,
    texels: &[u8],
) -> Result<TextureId, ResourceError> {
    let t = b.create_texture(&TextureDesc {
        label: "texture".into(),
        width,
        height,
        format: TextureFormat::Rgba8UnormSrgb,
        usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST,
        samples: 1,
    })?;
    if let Err(e) = b.write_texture(t, texels) {
        let _ = b.destroy(Resource::Texture(t));
        return Err(e.into());
    }
    Ok(t)
}
