//! What the renderer owns on the GPU besides meshes, textures and pipelines: its render
//! targets, the bind group layouts every pipeline follows, the shared per-frame buffers,
//! the samplers, and the bind groups of the views.

use switchyard_backend::{
    AddressMode, Backend, BindEntry, BindGroupDesc, BindGroupId, BindGroupLayoutDesc, BindResource, BindingType,
    BufferId, BufferUsage, CompareFunction, CreateError, FilterMode, LayoutEntry, Resource, SamplerDesc, SamplerId,
    Stages, TextureDesc, TextureFormat, TextureId, TextureSampleKind, TextureUsage,
};

use crate::error::InitError;
use crate::frame_graph::MAX_SHADOW_MAPS;
use crate::frame_graph::MAX_VIEWS;
use crate::gpu_buffer::{buffer, Made};
use crate::material::{Layouts, MaterialBinding, SceneKinds, SceneLayout, CONSTANT_SLOT};

/// Bytes of one view's globals in the globals buffer (the dynamic-offset alignment).
pub(super) const GLOBALS_SLOT: usize = 512;

/// Bytes of one object transform in the transform buffer.
pub(crate) const TRANSFORM_SIZE: u64 = 64;

/// The renderer's fixed GPU objects, created with it. The targets belong to the frame
/// graph's plan (`plan.rs`).
#[derive(Debug)]
pub(crate) struct FrameResources {
    /// 1x1 white: the base texture of materials without one.
    pub(crate) white: TextureId,
    /// 1x1 depth: the shadow map a forward pass without one binds (its matrix is zero,
    /// so nothing samples it).
    pub(crate) no_shadow: TextureId,
    pub(crate) layouts: Layouts,
    pub(crate) globals_buf: BufferId,
    pub(crate) constants_buf: BufferId,
    pub(crate) transforms_buf: BufferId,
    /// Each object's dense material (u32 per dense object index, written with its
    /// transform): what indexed materials' shaders find their slot with.
    pub(crate) object_materials_buf: BufferId,
    pub(crate) material_sampler: SamplerId,
    pub(crate) shadow_sampler: SamplerId,
    /// Linear, clamping: what fullscreen passes sample their inputs with.
    pub(crate) post_sampler: SamplerId,
    /// Nearest, clamping: what fullscreen passes sample depth inputs with.
    pub(crate) point_sampler: SamplerId,
    /// Group 0 of shadow passes (globals, transforms).
    pub(crate) shadow_group: BindGroupId,
    /// The cull pipelines and the bounds buffer, where the renderer culls on the GPU.
    pub(crate) cull: Option<crate::gpu_cull::CullObjects>,
    /// The scene passes' group 2 layouts made so far, one per kinds (made with the first
    /// graph whose scene passes read engine buffers, so other graphs' streams keep their
    /// handles), and the empty group a shadow pipeline's group 1 then binds.
    pub(crate) scene_layouts: Vec<SceneLayout>,
    pub(crate) empty_group: Option<BindGroupId>,
}

impl FrameResources {
    /// Creates the fixed objects, the transform buffer for `max_objects` and the constant
    /// ring for `max_materials`, and with `gpu_cull` the cull pipelines and the bounds
    /// buffer; on an error, none stays.
    pub(crate) fn create<B: Backend>(
        b: &B,
        max_objects: usize,
        max_materials: usize,
        gpu_cull: bool,
        occlusion: bool,
        count: bool,
    ) -> Result<Self, InitError> {
        let mut m = Made::new(b);
        let target = |label: &str, w, h, format, usage| {
            b.create_texture(&TextureDesc {
                label: label.into(),
                width: w,
                height: h,
                format,
                usage,
                samples: 1,
                mip_levels: 1,
            })
        };
        let white = m.add(target(
            "white",
            1,
            1,
            TextureFormat::Rgba8UnormSrgb,
            TextureUsage::SAMPLED | TextureUsage::COPY_DST,
        ))?;
        b.write_texture(white, &[255; 4])?;
        let no_shadow = m.add(target(
            "no-shadow",
            1,
            1,
            TextureFormat::Depth32Float,
            TextureUsage::SAMPLED | TextureUsage::RENDER_TARGET,
        ))?;
        let layouts = create_layouts(&mut m)?;
        let globals_buf = m.add(buffer(b, "globals", (MAX_VIEWS * GLOBALS_SLOT) as u64, BufferUsage::UNIFORM))?;
        let constants_size = max_materials as u64 * u64::from(CONSTANT_SLOT);
        let constants_usage = BufferUsage::UNIFORM | BufferUsage::STORAGE;
        let constants_buf = m.add(buffer(b, "material-constants", constants_size, constants_usage))?;
        let transforms_size = max_objects as u64 * TRANSFORM_SIZE;
        let transforms_buf = m.add(buffer(b, "transforms", transforms_size, BufferUsage::STORAGE))?;
        let object_materials_buf =
            m.add(buffer(b, "object-materials", max_objects as u64 * 4, BufferUsage::STORAGE))?;
        let mut sampler = |label: &str, filter, address, compare| {
            m.add(b.create_sampler(&SamplerDesc { label: label.into(), filter, address, compare }))
        };
        let shadow_sampler =
            sampler("shadow", FilterMode::Linear, AddressMode::ClampToEdge, Some(CompareFunction::LessEqual))?;
        let material_sampler = sampler("material", FilterMode::Linear, AddressMode::Repeat, None)?;
        let post_sampler = sampler("fullscreen", FilterMode::Linear, AddressMode::ClampToEdge, None)?;
        let point_sampler = sampler("fullscreen-point", FilterMode::Nearest, AddressMode::ClampToEdge, None)?;
        let globals = BindResource::Buffer { buffer: globals_buf, offset: 0, size: Some(GLOBALS_SLOT as u64) };
        let transforms = BindResource::Buffer { buffer: transforms_buf, offset: 0, size: None };
        let shadow_group = m.add(b.create_bind_group(&BindGroupDesc {
            label: "globals-shadow".into(),
            layout: layouts.shadow_globals,
            entries: vec![BindEntry { binding: 0, resource: globals }, BindEntry { binding: 1, resource: transforms }],
        }))?;
        let cull = if gpu_cull {
            Some(crate::gpu_cull::CullObjects::create(&mut m, b, max_objects, occlusion, count)?)
        } else {
            None
        };
        m.keep();
        Ok(Self {
            cull,
            white,
            no_shadow,
            layouts,
            globals_buf,
            constants_buf,
            transforms_buf,
            object_materials_buf,
            material_sampler,
            shadow_sampler,
            post_sampler,
            point_sampler,
            shadow_group,
            scene_layouts: Vec::new(),
            empty_group: None,
        })
    }

    /// The scene passes' group 2 layout of `kinds` (made on first use, with the empty
    /// layout and group the first time), and the empty group.
    pub(crate) fn scene_layout<B: Backend>(
        &mut self,
        b: &B,
        kinds: SceneKinds,
    ) -> Result<(SceneLayout, BindGroupId), CreateError> {
        let empty = match (self.scene_layouts.first(), self.empty_group) {
            (Some(l), Some(g)) => (l.empty, g),
            _ => {
                let mut m = Made::new(b);
                let layout =
                    m.add(b.create_bind_group_layout(&BindGroupLayoutDesc {
                        label: "empty".into(),
                        entries: Vec::new(),
                    }))?;
                let desc = BindGroupDesc { label: "empty".into(), layout, entries: Vec::new() };
                let group = m.add(b.create_bind_group(&desc))?;
                m.keep();
                self.empty_group = Some(group);
                (layout, group)
            }
        };
        if let Some(l) = self.scene_layouts.iter().find(|l| l.kinds == kinds) {
            return Ok((*l, empty.1));
        }
        let vs = Stages::VERTEX | Stages::FRAGMENT;
        let entries = kinds
            .kinds()
            .enumerate()
            .map(|(j, k)| LayoutEntry {
                binding: j as u32,
                visibility: vs,
                ty: match k {
                    crate::BufferBinding::Uniform => BindingType::Uniform { dynamic: false, min_size: 0 },
                    crate::BufferBinding::Storage => BindingType::Storage { dynamic: false },
                },
            })
            .collect();
        let layout = b.create_bind_group_layout(&BindGroupLayoutDesc { label: "scene-buffers".into(), entries })?;
        let made = SceneLayout { kinds, layout, empty: empty.0 };
        self.scene_layouts.push(made);
        Ok((made, empty.1))
    }

    /// Every object here, given up (the renderer goes, or its device did).
    pub(crate) fn resources(&self) -> Vec<Resource> {
        let l = &self.layouts;
        let mut all = vec![
            Resource::BindGroup(self.shadow_group),
            Resource::Texture(self.white),
            Resource::Texture(self.no_shadow),
            Resource::BindGroupLayout(l.forward_globals),
            Resource::BindGroupLayout(l.shadow_globals),
            Resource::BindGroupLayout(l.material),
            Resource::BindGroupLayout(l.material_indexed),
            Resource::Buffer(self.globals_buf),
            Resource::Buffer(self.constants_buf),
            Resource::Buffer(self.transforms_buf),
            Resource::Buffer(self.object_materials_buf),
            Resource::Sampler(self.material_sampler),
            Resource::Sampler(self.shadow_sampler),
            Resource::Sampler(self.post_sampler),
            Resource::Sampler(self.point_sampler),
        ];
        all.extend(self.cull.iter().flat_map(|c| c.resources()));
        all.extend(self.empty_group.map(Resource::BindGroup));
        all.extend(self.scene_layouts.iter().map(|l| Resource::BindGroupLayout(l.layout)));
        all.extend(self.scene_layouts.first().map(|l| Resource::BindGroupLayout(l.empty)));
        all
    }

    /// Group 1 of a material: the constant ring (per draw: one slot at the material's
    /// dynamic offset; indexed: all of it, and the objects' materials at binding 3), its
    /// base texture and the material sampler.
    pub(crate) fn material_group<B: Backend>(
        &self,
        b: &B,
        texture: TextureId,
        binding: MaterialBinding,
    ) -> Result<BindGroupId, CreateError> {
        let buffer = |buffer, size| BindResource::Buffer { buffer, offset: 0, size };
        let mut entries = vec![
            BindEntry { binding: 1, resource: BindResource::Texture(texture) },
            BindEntry { binding: 2, resource: BindResource::Sampler(self.material_sampler) },
        ];
        let layout = match binding {
            MaterialBinding::PerDraw => {
                let slot = Some(u64::from(CONSTANT_SLOT));
                entries.push(BindEntry { binding: 0, resource: buffer(self.constants_buf, slot) });
                self.layouts.material
            }
            MaterialBinding::Indexed => {
                entries.push(BindEntry { binding: 0, resource: buffer(self.constants_buf, None) });
                entries.push(BindEntry { binding: 3, resource: buffer(self.object_materials_buf, None) });
                self.layouts.material_indexed
            }
        };
        b.create_bind_group(&BindGroupDesc { label: "material".into(), layout, entries })
    }

    /// Group 0 of a forward pass: globals, transforms, its shadow maps and the comparison
    /// sampler.
    pub(crate) fn forward_group<B: Backend>(
        &self,
        b: &B,
        maps: [TextureId; MAX_SHADOW_MAPS],
    ) -> Result<BindGroupId, CreateError> {
        let globals = BindResource::Buffer { buffer: self.globals_buf, offset: 0, size: Some(GLOBALS_SLOT as u64) };
        let transforms = BindResource::Buffer { buffer: self.transforms_buf, offset: 0, size: None };
        b.create_bind_group(&BindGroupDesc {
            label: "globals-forward".into(),
            layout: self.layouts.forward_globals,
            entries: vec![
                BindEntry { binding: 0, resource: globals },
                BindEntry { binding: 1, resource: transforms },
                BindEntry { binding: 2, resource: BindResource::Texture(maps[0]) },
                BindEntry { binding: 3, resource: BindResource::Texture(maps[1]) },
                BindEntry { binding: 4, resource: BindResource::Sampler(self.shadow_sampler) },
                BindEntry { binding: 5, resource: BindResource::Texture(maps[2]) },
                BindEntry { binding: 6, resource: BindResource::Texture(maps[3]) },
            ],
        })
    }
}

/// The layouts of the binding convention, on their own (unit tests of display lists).
#[cfg(test)]
pub(crate) fn standard_layouts<B: Backend>(b: &B) -> Result<Layouts, CreateError> {
    let mut m = Made::new(b);
    let layouts = create_layouts(&mut m)?;
    m.keep();
    Ok(layouts)
}

/// The binding convention of every pipeline (`shaders/lit.wgsl`): group 0 holds the view's
/// globals and the object transforms (plus the shadow maps in forward passes), group 1
/// the material's constants, texture and sampler.
fn create_layouts<B: Backend>(m: &mut Made<'_, B>) -> Result<Layouts, CreateError> {
    let b = m.backend();
    let vs = Stages::VERTEX | Stages::FRAGMENT;
    let entry = |binding, ty| LayoutEntry { binding, visibility: vs, ty };
    let globals_entries = vec![
        entry(0, BindingType::Uniform { dynamic: true, min_size: 0 }),
        entry(1, BindingType::Storage { dynamic: false }),
    ];
    let shadow_globals = m.add(b.create_bind_group_layout(&BindGroupLayoutDesc {
        label: "globals-shadow".into(),
        entries: globals_entries.clone(),
    }))?;
    let mut fwd_entries = globals_entries;
    fwd_entries.extend([
        entry(2, BindingType::Texture(TextureSampleKind::Depth)),
        entry(3, BindingType::Texture(TextureSampleKind::Depth)),
        entry(4, BindingType::Sampler { comparison: true }),
        // Maps 2 and 3 after the sampler: shaders written for two maps keep their bindings.
        entry(5, BindingType::Texture(TextureSampleKind::Depth)),
        entry(6, BindingType::Texture(TextureSampleKind::Depth)),
    ]);
    let forward_globals = m.add(
        b.create_bind_group_layout(&BindGroupLayoutDesc { label: "globals-forward".into(), entries: fwd_entries }),
    )?;
    let material_entries = |block| {
        vec![
            entry(0, block),
            entry(1, BindingType::Texture(TextureSampleKind::Float)),
            entry(2, BindingType::Sampler { comparison: false }),
        ]
    };
    let material = m.add(b.create_bind_group_layout(&BindGroupLayoutDesc {
        label: "material".into(),
        entries: material_entries(BindingType::Uniform { dynamic: true, min_size: 0 }),
    }))?;
    let mut indexed = material_entries(BindingType::Storage { dynamic: false });
    indexed.push(LayoutEntry { binding: 3, visibility: Stages::VERTEX, ty: BindingType::Storage { dynamic: false } });
    let material_indexed =
        m.add(b.create_bind_group_layout(&BindGroupLayoutDesc { label: "material-indexed".into(), entries: indexed }))?;
    Ok(Layouts {
        forward_globals,
        shadow_globals,
        material,
        material_indexed,
        color_format: TextureFormat::Rgba8UnormSrgb,
        color_samples: 1,
        scene: None,
    })
}
