//! Resource tables shared by every backend, and the checks that run on descriptors.
//!
//! A backend keeps its native objects next to the metadata the validator needs, in one
//! slotmap per resource kind. The checks here run before any native object is created,
//! so bad input returns a typed error and changes nothing, on every backend alike.

use std::collections::HashMap;

use crate::command::{Caps, ResourceKind};
use crate::desc::{
    BindGroupDesc, BindGroupLayoutDesc, BindResource, BindingType, BufferDesc, BufferUsage, ComputePipelineDesc,
    FilterMode, LayoutEntry, PipelineDesc, SamplerDesc, Stages, StepMode, TextureDesc, TextureFormat,
    TextureSampleKind, TextureUsage,
};
use crate::error::{CreateError, DestroyError};
use crate::handle::{BindGroupId, BindGroupLayoutId, BufferId, PipelineId, SamplerId, ShaderId, TextureId};
use crate::reflect::{EntryPoint, ShaderResource};
use crate::reflect::{ShaderMeta, Stage};
pub(crate) use crate::texels::TextureMeta;
use crate::Resource;
use table::next_tag;
pub(crate) use table::Table;

mod table;

/// Native objects of one backend (all `()` for the null backend).
pub(crate) trait NativeObjects {
    type Buffer: Send + Sync;
    type Texture: Send + Sync;
    type Sampler: Send + Sync;
    type Shader: Send + Sync;
    type Layout: Send + Sync;
    type BindGroup: Send + Sync;
    type Pipeline: Send + Sync;
}

/// Metadata plus the native object.
#[derive(Debug)]
pub(crate) struct Stored<M, O> {
    pub(crate) meta: M,
    pub(crate) obj: O,
}

#[derive(Debug, Clone)]
pub(crate) struct BufferMeta {
    pub(crate) size: u64,
    pub(crate) usage: BufferUsage,
}

#[derive(Debug, Clone)]
pub(crate) struct SamplerMeta {
    pub(crate) comparison: bool,
    /// Linear filtering.
    pub(crate) filtering: bool,
}

impl SamplerMeta {
    pub(crate) fn of(d: &SamplerDesc) -> Self {
        Self { comparison: d.compare.is_some(), filtering: d.filter == FilterMode::Linear }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct LayoutMeta {
    pub(crate) entries: Vec<LayoutEntry>,
}

/// A dynamic binding's window: the bound range may move by the dynamic offset as long as
/// `offset + base + size <= buffer_size`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DynamicWindow {
    pub(crate) base: u64,
    pub(crate) size: u64,
    pub(crate) buffer_size: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct BindGroupMeta {
    pub(crate) layout: BindGroupLayoutId,
    pub(crate) dynamic: Vec<DynamicWindow>,
    /// Buffers bound read-write (a dispatch may not read its arguments from them).
    pub(crate) writable: Vec<BufferId>,
    /// Textures bound (a pass may not sample what it renders into).
    pub(crate) textures: Vec<TextureId>,
    /// (binding, bytes) of each buffer range bound.
    pub(crate) buffer_sizes: Vec<(u32, u64)>,
}

#[derive(Debug, Clone)]
pub(crate) struct PipelineMeta {
    pub(crate) layouts: Vec<BindGroupLayoutId>,
    /// (stride, step) per vertex slot.
    pub(crate) vertex: Vec<(u64, StepMode)>,
    pub(crate) color: Option<TextureFormat>,
    pub(crate) depth: Option<TextureFormat>,
    /// A compute pipeline (bound in compute passes only).
    pub(crate) compute: bool,
    pub(crate) samples: u32,
    /// Creations that returned it (a cached render pipeline is returned again for an equal
    /// descriptor): each `destroy` gives one back, the last one destroys it.
    pub(crate) refs: u32,
    /// (group, binding, bytes): uniform blocks its shader reads whose layout entry sets no
    /// minimum size, so the range bound at draw time must hold them (wgpu's late check).
    pub(crate) uniform_sizes: Vec<(u32, u32, u64)>,
}

pub(crate) struct Registry<O: NativeObjects> {
    pub(crate) buffers: Table<BufferId, Stored<BufferMeta, O::Buffer>>,
    pub(crate) textures: Table<TextureId, Stored<TextureMeta, O::Texture>>,
    pub(crate) samplers: Table<SamplerId, Stored<SamplerMeta, O::Sampler>>,
    pub(crate) shaders: Table<ShaderId, Stored<ShaderMeta, O::Shader>>,
    pub(crate) layouts: Table<BindGroupLayoutId, Stored<LayoutMeta, O::Layout>>,
    pub(crate) bind_groups: Table<BindGroupId, Stored<BindGroupMeta, O::BindGroup>>,
    pub(crate) pipelines: Table<PipelineId, Stored<PipelineMeta, O::Pipeline>>,
    /// Pipeline cache: descriptor → id, hashed with ahash (fixed seeds: deterministic).
    pub(crate) pipeline_cache: HashMap<PipelineDesc, PipelineId, ahash::RandomState>,
}

impl<O: NativeObjects> Default for Registry<O> {
    fn default() -> Self {
        let tag = next_tag();
        Self {
            buffers: Table::new(tag),
            textures: Table::new(tag),
            samplers: Table::new(tag),
            shaders: Table::new(tag),
            layouts: Table::new(tag),
            bind_groups: Table::new(tag),
            pipelines: Table::new(tag),
            pipeline_cache: HashMap::with_hasher(ahash::RandomState::with_seeds(1, 2, 3, 4)),
        }
    }
}

fn invalid(kind: ResourceKind) -> CreateError {
    CreateError::InvalidHandle { kind }
}

impl<O: NativeObjects> Registry<O> {
    pub(crate) fn check_buffer(&self, d: &BufferDesc, caps: &Caps) -> Result<BufferMeta, CreateError> {
        if d.size == 0 || d.size > caps.max_buffer_size {
            return Err(CreateError::Limit { what: "buffer size", requested: d.size, maximum: caps.max_buffer_size });
        }
        if !d.size.is_multiple_of(4) {
            return Err(CreateError::Invalid(format!("buffer `{}`: size {} is not a multiple of 4", d.label, d.size)));
        }
        if d.usage == BufferUsage::NONE {
            return Err(CreateError::Invalid(format!("buffer `{}` has no usage", d.label)));
        }
        Ok(BufferMeta { size: d.size, usage: d.usage })
    }

    pub(crate) fn check_texture(&self, d: &TextureDesc, caps: &Caps) -> Result<TextureMeta, CreateError> {
        for side in [d.width, d.height] {
            if side == 0 || side > caps.max_texture_size {
                return Err(CreateError::Limit {
                    what: "texture side",
                    requested: u64::from(side),
                    maximum: u64::from(caps.max_texture_size),
                });
            }
        }
        if d.usage == TextureUsage::NONE {
            return Err(CreateError::Invalid(format!("texture `{}` has no usage", d.label)));
        }
        if d.usage.contains(TextureUsage::TRANSIENT)
            && d.usage != (TextureUsage::TRANSIENT | TextureUsage::RENDER_TARGET)
        {
            return Err(CreateError::Invalid(format!("transient texture `{}` can only be a render target", d.label)));
        }
        if d.format.is_depth() && d.usage.contains(TextureUsage::COPY_DST) {
            return Err(CreateError::Invalid(format!("depth texture `{}` cannot be written by the CPU", d.label)));
        }
        check_samples(d.samples, caps)?;
        crate::texels::check_levels(d, caps)?;
        let multisample_usage = TextureUsage::RENDER_TARGET | TextureUsage::TRANSIENT;
        if d.samples > 1
            && (!d.usage.contains(TextureUsage::RENDER_TARGET)
                || multisample_usage.0 | d.usage.0 != multisample_usage.0)
        {
            return Err(CreateError::Invalid(format!(
                "multisampled texture `{}` can only be a render target (resolve it to sample or copy it)",
                d.label
            )));
        }
        let (width, height, format, usage, samples, mip_levels) =
            (d.width, d.height, d.format, d.usage, d.samples, d.mip_levels);
        Ok(TextureMeta { width, height, format, usage, samples, mip_levels, unbound: false })
    }

    pub(crate) fn check_layout(&self, d: &BindGroupLayoutDesc) -> Result<LayoutMeta, CreateError> {
        let mut entries = d.entries.clone();
        entries.sort_by_key(|e| e.binding);
        if entries.windows(2).any(|w| w[0].binding == w[1].binding) {
            return Err(CreateError::Invalid(format!("layout `{}`: duplicate binding", d.label)));
        }
        let dynamic_count = entries
            .iter()
            .filter(|e| {
                matches!(
                    e.ty,
                    BindingType::Uniform { dynamic: true, .. }
                        | BindingType::Storage { dynamic: true }
                        | BindingType::StorageReadWrite { dynamic: true }
                )
            })
            .count();
        if entries.iter().any(|e| {
            matches!(e.ty, BindingType::StorageReadWrite { .. }) && e.visibility != crate::desc::Stages::COMPUTE
        }) {
            return Err(CreateError::Invalid(format!(
                "layout `{}`: a read-write storage buffer is visible to compute stages only",
                d.label
            )));
        }
        if dynamic_count > crate::command::MAX_DYNAMIC_OFFSETS {
            return Err(CreateError::Limit {
                what: "dynamic bindings per layout",
                requested: dynamic_count as u64,
                maximum: crate::command::MAX_DYNAMIC_OFFSETS as u64,
            });
        }
        Ok(LayoutMeta { entries })
    }

    pub(crate) fn check_bind_group(&self, d: &BindGroupDesc, caps: &Caps) -> Result<BindGroupMeta, CreateError> {
        let layout = self.layouts.get(d.layout).ok_or(invalid(ResourceKind::BindGroupLayout))?;
        if d.entries.len() != layout.meta.entries.len() {
            return Err(CreateError::Invalid(format!(
                "bind group `{}`: {} entries for a layout of {}",
                d.label,
                d.entries.len(),
                layout.meta.entries.len()
            )));
        }
        let mut dynamic = Vec::new();
        let mut writable = Vec::new();
        let mut textures = Vec::new();
        let mut buffer_sizes = Vec::new();
        for le in &layout.meta.entries {
            let e = d.entries.iter().find(|e| e.binding == le.binding).ok_or_else(|| {
                CreateError::Invalid(format!("bind group `{}`: binding {} missing", d.label, le.binding))
            })?;
            let bad =
                |what: &str| CreateError::Invalid(format!("bind group `{}`: binding {}: {what}", d.label, le.binding));
            match (le.ty, e.resource) {
                (
                    BindingType::Uniform { dynamic: dy, .. }
                    | BindingType::Storage { dynamic: dy }
                    | BindingType::StorageReadWrite { dynamic: dy },
                    BindResource::Buffer { buffer, offset, size },
                ) => {
                    let b = self.buffers.get(buffer).ok_or(invalid(ResourceKind::Buffer))?;
                    let need = if matches!(le.ty, BindingType::Uniform { .. }) {
                        BufferUsage::UNIFORM
                    } else {
                        BufferUsage::STORAGE
                    };
                    if !b.meta.usage.contains(need) {
                        return Err(bad("buffer lacks the usage this binding needs"));
                    }
                    let size = size.unwrap_or(b.meta.size.saturating_sub(offset));
                    if size == 0 || offset.checked_add(size).is_none_or(|end| end > b.meta.size) {
                        return Err(bad("buffer range outside the buffer"));
                    }
                    if offset % u64::from(caps.min_uniform_offset_alignment) != 0 {
                        return Err(bad("buffer offset is not aligned"));
                    }
                    let min = min_size_of(le.ty);
                    if min > size {
                        return Err(bad("bound range smaller than the layout's minimum"));
                    }
                    if dy {
                        dynamic.push(DynamicWindow { base: offset, size, buffer_size: b.meta.size });
                    }
                    buffer_sizes.push((le.binding, size));
                    if matches!(le.ty, BindingType::StorageReadWrite { .. }) {
                        writable.push(buffer);
                    }
                }
                (BindingType::Texture(kind), BindResource::Texture(id)) => {
                    let t = self.textures.get(id).ok_or(invalid(ResourceKind::Texture))?;
                    textures.push(id);
                    if !t.meta.usage.contains(TextureUsage::SAMPLED) {
                        return Err(bad("texture lacks SAMPLED usage"));
                    }
                    let fits = match kind {
                        TextureSampleKind::Float => !t.meta.format.is_depth(),
                        TextureSampleKind::Depth => t.meta.format.is_depth(),
                        TextureSampleKind::UnfilterableFloat => true,
                    };
                    if !fits {
                        return Err(bad("texture format does not match the sample kind"));
                    }
                }
                (BindingType::Sampler { comparison }, BindResource::Sampler(s)) => {
                    let s = self.samplers.get(s).ok_or(invalid(ResourceKind::Sampler))?;
                    if s.meta.comparison != comparison {
                        return Err(bad("sampler comparison mode does not match"));
                    }
                }
                (BindingType::NonFilteringSampler, BindResource::Sampler(s)) => {
                    let s = self.samplers.get(s).ok_or(invalid(ResourceKind::Sampler))?;
                    if s.meta.comparison || s.meta.filtering {
                        return Err(bad("a non-filtering binding needs a nearest sampler without comparison"));
                    }
                }
                _ => return Err(bad("resource type does not match the layout")),
            }
        }
        Ok(BindGroupMeta { layout: d.layout, dynamic, writable, textures, buffer_sizes })
    }

    pub(crate) fn check_pipeline(&self, d: &PipelineDesc, caps: &Caps) -> Result<PipelineMeta, CreateError> {
        let shader = self.shaders.get(d.shader).ok_or(invalid(ResourceKind::Shader))?;
        let find =
            |name: &str, stage: Stage| shader.meta.entry_points.iter().find(|e| e.name == name && e.stage == stage);
        let vertex = find(&d.vertex_entry, Stage::Vertex).ok_or_else(|| {
            CreateError::Invalid(format!("pipeline `{}`: no vertex entry point `{}`", d.label, d.vertex_entry))
        })?;
        let fragment = match &d.fragment_entry {
            Some(fs) => Some(find(fs, Stage::Fragment).ok_or_else(|| {
                CreateError::Invalid(format!("pipeline `{}`: no fragment entry point `{fs}`", d.label))
            })?),
            None => None,
        };
        self.check_pipeline_layouts(&d.bind_group_layouts, caps)?;
        let mut uniform_sizes = Vec::new();
        for e in std::iter::once(vertex).chain(fragment) {
            self.check_entry_bindings(&d.label, e, &d.bind_group_layouts)?;
            uniform_sizes.extend(self.late_uniform_sizes(e, &d.bind_group_layouts));
        }
        for vb in &d.vertex_buffers {
            if vb.stride % 4 != 0 || vb.attributes.iter().any(|a| a.offset + a.format.size() > vb.stride) {
                return Err(CreateError::Invalid(format!(
                    "pipeline `{}`: vertex attribute outside its stride",
                    d.label
                )));
            }
        }
        if d.color.is_some_and(|c| c.format.is_depth()) || d.depth.is_some_and(|z| !z.format.is_depth()) {
            return Err(CreateError::Invalid(format!("pipeline `{}`: target format of the wrong kind", d.label)));
        }
        if d.color.is_some() != d.fragment_entry.is_some() {
            return Err(CreateError::Invalid(format!(
                "pipeline `{}`: a color target needs a fragment entry point",
                d.label
            )));
        }
        if d.color.is_none() && d.depth.is_none() {
            return Err(CreateError::Invalid(format!("pipeline `{}` has no targets", d.label)));
        }
        check_samples(d.samples, caps)?;
        Ok(PipelineMeta {
            layouts: d.bind_group_layouts.clone(),
            vertex: d.vertex_buffers.iter().map(|v| (v.stride, v.step)).collect(),
            color: d.color.map(|c| c.format),
            depth: d.depth.map(|z| z.format),
            compute: false,
            samples: d.samples,
            refs: 1,
            uniform_sizes,
        })
    }

    pub(crate) fn check_compute_pipeline(
        &self,
        d: &ComputePipelineDesc,
        caps: &Caps,
    ) -> Result<PipelineMeta, CreateError> {
        if !caps.compute {
            return Err(CreateError::Unsupported("compute pipelines (the adapter has no compute shaders)"));
        }
        let shader = self.shaders.get(d.shader).ok_or(invalid(ResourceKind::Shader))?;
        let entry =
            shader.meta.entry_points.iter().find(|e| e.name == d.entry && e.stage == Stage::Compute).ok_or_else(
                || CreateError::Invalid(format!("pipeline `{}`: no compute entry point `{}`", d.label, d.entry)),
            )?;
        self.check_pipeline_layouts(&d.bind_group_layouts, caps)?;
        self.check_entry_bindings(&d.label, entry, &d.bind_group_layouts)?;
        let uniform_sizes = self.late_uniform_sizes(entry, &d.bind_group_layouts).collect();
        Ok(PipelineMeta {
            layouts: d.bind_group_layouts.clone(),
            vertex: Vec::new(),
            color: None,
            depth: None,
            compute: true,
            samples: 1,
            refs: 1,
            uniform_sizes,
        })
    }
}

/// A sample count the backend supports: 1, or one in `caps.sample_counts`.
fn check_samples(samples: u32, caps: &Caps) -> Result<(), CreateError> {
    if !samples.is_power_of_two() || samples > 8 || caps.sample_counts & samples == 0 {
        return Err(CreateError::Unsupported("this sample count (see Caps::sample_counts)"));
    }
    Ok(())
}

impl<O: NativeObjects> Registry<O> {
    /// Every binding an entry point uses is in the pipeline's layouts, visible to its stage,
    /// of a type that serves it (what wgpu checks when it creates the pipeline). The
    /// layouts are live (checked before).
    fn check_entry_bindings(
        &self,
        label: &str,
        e: &EntryPoint,
        layouts: &[BindGroupLayoutId],
    ) -> Result<(), CreateError> {
        let stage = match e.stage {
            Stage::Vertex => Stages::VERTEX,
            Stage::Fragment => Stages::FRAGMENT,
            Stage::Compute => Stages::COMPUTE,
        };
        for b in &e.bindings {
            let entry = layouts
                .get(b.group as usize)
                .and_then(|l| self.layouts.get(*l))
                .and_then(|l| l.meta.entries.iter().find(|le| le.binding == b.binding));
            let why = match entry {
                None => Some("missing"),
                Some(le) if !le.visibility.contains(stage) => Some("not visible to its stage"),
                Some(le) => b.resource.mismatch(le.ty),
            };
            if let Some(why) = why {
                return Err(CreateError::Invalid(format!(
                    "pipeline `{label}`: entry point `{}` uses @group({}) @binding({}), {why} in the pipeline layout",
                    e.name, b.group, b.binding
                )));
            }
        }
        Ok(())
    }

    /// The uniform blocks `e` reads through layout entries without a minimum size (the
    /// bindings are checked to exist first).
    fn late_uniform_sizes<'a>(
        &'a self,
        e: &'a EntryPoint,
        layouts: &'a [BindGroupLayoutId],
    ) -> impl Iterator<Item = (u32, u32, u64)> + 'a {
        e.bindings.iter().filter_map(move |b| {
            let ShaderResource::Uniform(size) = b.resource else { return None };
            let l = self.layouts.get(*layouts.get(b.group as usize)?)?;
            let le = l.meta.entries.iter().find(|le| le.binding == b.binding)?;
            matches!(le.ty, BindingType::Uniform { min_size: 0, .. }).then_some((b.group, b.binding, size))
        })
    }

    /// A pipeline's bind group layouts: within the limit, all live.
    fn check_pipeline_layouts(&self, layouts: &[BindGroupLayoutId], caps: &Caps) -> Result<(), CreateError> {
        if layouts.len() > caps.max_bind_groups as usize {
            return Err(CreateError::Limit {
                what: "bind groups",
                requested: layouts.len() as u64,
                maximum: u64::from(caps.max_bind_groups),
            });
        }
        if layouts.iter().any(|l| !self.layouts.contains_key(*l)) {
            return Err(invalid(ResourceKind::BindGroupLayout));
        }
        Ok(())
    }
}

fn min_size_of(ty: BindingType) -> u64 {
    match ty {
        BindingType::Uniform { min_size, .. } => min_size,
        _ => 0,
    }
}

impl<O: NativeObjects> Registry<O> {
    /// How many resources of each kind are alive.
    pub(crate) fn live(&self) -> crate::LiveResources {
        crate::LiveResources {
            buffers: self.buffers.len(),
            textures: self.textures.len(),
            samplers: self.samplers.len(),
            shaders: self.shaders.len(),
            bind_group_layouts: self.layouts.len(),
            bind_groups: self.bind_groups.len(),
            pipelines: self.pipelines.len(),
            staging_bytes: 0,
            buffer_bytes: self.buffers.values().map(|b| b.meta.size).sum(),
            texture_bytes: self
                .textures
                .values()
                .map(|t| {
                    let m = &t.meta;
                    m.format.mip_chain_bytes(m.width, m.height, m.mip_levels) * u64::from(m.samples)
                })
                .sum(),
        }
    }

    /// The live cached pipeline of an equal descriptor, counted as one more creation.
    pub(crate) fn cached_pipeline(&mut self, d: &PipelineDesc) -> Option<PipelineId> {
        let id = *self.pipeline_cache.get(d)?;
        self.pipelines.get_mut(id)?.meta.refs += 1;
        Some(id)
    }

    /// The size, format and usage of a live texture.
    pub(crate) fn texture_info(&self, t: crate::handle::TextureId) -> Option<crate::TextureInfo> {
        self.textures.get(t).map(|e| crate::TextureInfo {
            width: e.meta.width,
            height: e.meta.height,
            format: e.meta.format,
            usage: e.meta.usage,
            samples: e.meta.samples,
        })
    }

    /// Removes a live resource (a pipeline another equal creation holds loses one
    /// reference); a handle that names nothing is a typed error and changes nothing.
    pub(crate) fn destroy(&mut self, r: Resource) -> Result<(), DestroyError> {
        let gone = |kind| DestroyError::InvalidHandle { kind };
        match r {
            Resource::Buffer(id) => self.buffers.remove(id).map(drop).ok_or(gone(ResourceKind::Buffer)),
            Resource::Texture(id) => self.textures.remove(id).map(drop).ok_or(gone(ResourceKind::Texture)),
            Resource::Sampler(id) => self.samplers.remove(id).map(drop).ok_or(gone(ResourceKind::Sampler)),
            Resource::Shader(id) => self.shaders.remove(id).map(drop).ok_or(gone(ResourceKind::Shader)),
            Resource::BindGroupLayout(id) => {
                self.layouts.remove(id).map(drop).ok_or(gone(ResourceKind::BindGroupLayout))
            }
            Resource::BindGroup(id) => self.bind_groups.remove(id).map(drop).ok_or(gone(ResourceKind::BindGroup)),
            Resource::Pipeline(id) => {
                let p = self.pipelines.get_mut(id).ok_or(gone(ResourceKind::Pipeline))?;
                if p.meta.refs > 1 {
                    // Another creation of an equal descriptor still holds it.
                    p.meta.refs -= 1;
                    return Ok(());
                }
                self.pipelines.remove(id);
                self.pipeline_cache.retain(|_, v| *v != id);
                Ok(())
            }
        }
    }
}
