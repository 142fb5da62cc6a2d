//! What the plan makes for fullscreen passes (the shader prelude, layout, uniform block,
//! bind group and pipeline), and the backend description of a graph pass.

use switchyard_backend as backend;
use switchyard_backend::Backend;
use switchyard_backend::{
    BindEntry, BindGroupDesc, BindGroupId, BindGroupLayoutDesc, BindGroupLayoutId, BindResource, BindingType,
    BlendMode, BufferId, BufferUsage, ColorAttachment, ColorTargetState, CreateError, CullMode, DepthAttachment,
    LayoutEntry, PassDesc, PipelineDesc, PipelineId, Resource, Stages, TextureFormat, TextureId, TextureSampleKind,
};

use super::gpu::FrameResources;
use crate::error::RenderError;
use crate::frame_graph::BufferBinding;
use crate::frame_graph::FullscreenShader;
use crate::frame_graph::LoadOp;
use crate::frame_graph::Pass;
use crate::frame_graph::PassContent;
use crate::frame_graph::StoreOp;
use crate::frame_graph::TargetId;
use crate::gpu_buffer::buffer;

/// The vertex stage and bindings every fullscreen shader gets (see [`FullscreenShader`]).
const FULLSCREEN_PRELUDE: &str = "
struct FullscreenFrame { size: vec2<f32>, inv_size: vec2<f32>, params: array<vec4<f32>, 2> }
struct FullscreenVertex { @builtin(position) position: vec4<f32>, @location(0) uv: vec2<f32> }
@group(0) @binding(0) var<uniform> frame: FullscreenFrame;
@group(0) @binding(1) var frame_sampler: sampler;
@group(0) @binding(2) var frame_point_sampler: sampler;
@vertex
fn sy_fullscreen_vs(@builtin(vertex_index) i: u32) -> FullscreenVertex {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var o: FullscreenVertex;
    o.position = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    o.uv = uv;
    return o;
}
";

/// Most bind groups a fullscreen pass with external inputs keeps, one per combination of
/// the engine's textures it was given (a swapchain's images, say); the oldest goes first.
const INPUT_GROUPS: usize = 4;

/// What a kept group binds: the external inputs' textures and the engine's buffers.
type GroupKey = (Vec<TextureId>, Vec<BufferId>);

/// The bind group of a fullscreen pass that samples external targets or binds the
/// engine's buffers: made per combination of the textures a frame gives and the buffers
/// bound, and kept for the next frames.
#[derive(Debug)]
pub(crate) struct ExternalInputGroups {
    /// The pass (errors name it).
    pub(crate) pass: String,
    pub(crate) layout: BindGroupLayoutId,
    /// The group's entries; those of external inputs are filled per frame.
    pub(crate) entries: Vec<BindEntry>,
    /// (entry, target) of each external input.
    pub(crate) externals: Vec<(usize, usize)>,
    /// (entry, graph buffer, its name) of each buffer the pass binds.
    pub(crate) buffers: Vec<(usize, usize, String)>,
    /// The textures of the external inputs, the buffers bound, and their group, newest last.
    pub(crate) groups: Vec<(GroupKey, BindGroupId)>,
}

impl ExternalInputGroups {
    /// The group for this frame's textures of the external inputs (`texture` gives them)
    /// and the buffers bound (`buffer` gives them; one unbound is an error): a kept one, or
    /// a new one (past [`INPUT_GROUPS`] the oldest kept one goes to `retire`: queued
    /// frames may still bind it).
    pub(crate) fn group<B: Backend>(
        &mut self,
        b: &B,
        texture: impl Fn(usize) -> Option<TextureId>,
        buffer: impl Fn(usize) -> Option<BufferId>,
        mut retire: impl FnMut(BindGroupId),
    ) -> Result<BindGroupId, RenderError> {
        if let Some((_, _, name)) = self.buffers.iter().find(|(_, i, _)| buffer(*i).is_none()) {
            let what = "read by a pass and bound to no engine buffer (Renderer::bind_buffer)";
            return Err(RenderError::Buffer { buffer: name.clone(), what });
        }
        let given = |(_, t): &(usize, usize)| texture(*t).unwrap_or_default();
        let bound = |(_, i, _): &(usize, usize, String)| buffer(*i).unwrap_or_default();
        // A kept group is found without allocating (the key is built only for a new one).
        let found = self.groups.iter().find(|((t, bu), _)| {
            t.iter().copied().eq(self.externals.iter().map(given))
                && bu.iter().copied().eq(self.buffers.iter().map(bound))
        });
        if let Some((_, g)) = found {
            return Ok(*g);
        }
        let key: Vec<TextureId> = self.externals.iter().map(given).collect();
        let bound: Vec<BufferId> = self.buffers.iter().map(bound).collect();
        for (&(e, _), &t) in self.externals.iter().zip(&key) {
            self.entries[e].resource = BindResource::Texture(t);
        }
        for (&(e, _, _), &bu) in self.buffers.iter().zip(&bound) {
            self.entries[e].resource = BindResource::Buffer { buffer: bu, offset: 0, size: None };
        }
        let desc =
            BindGroupDesc { label: "fullscreen-inputs".into(), layout: self.layout, entries: self.entries.clone() };
        let group =
            b.create_bind_group(&desc).map_err(|source| RenderError::BindGroup { pass: self.pass.clone(), source })?;
        if self.groups.len() == INPUT_GROUPS {
            retire(self.groups.remove(0).1);
        }
        self.groups.push(((key, bound), group));
        Ok(group)
    }

    /// The kept groups, given up.
    pub(crate) fn take_groups(&mut self) -> impl Iterator<Item = BindGroupId> + '_ {
        self.groups.drain(..).map(|(_, g)| g)
    }
}

/// Group 2 of a graph's scene passes: the engine's buffers they read
/// ([`crate::MAX_SCENE_BUFFERS`]), its group made per buffers bound and kept.
#[derive(Debug)]
pub(crate) struct SceneBuffers {
    pub(crate) layout: crate::material::SceneLayout,
    /// The groups, made per buffers bound (no external textures).
    pub(crate) inputs: ExternalInputGroups,
    /// Group 1 of a shadow pass (its pipelines' empty group).
    pub(crate) empty_group: BindGroupId,
}

impl SceneBuffers {
    /// The group of `buffers` (graph buffer, binding) in `layout`: one entry per buffer.
    pub(crate) fn new(
        graph: &crate::FrameGraph,
        buffers: &[(usize, BufferBinding)],
        layout: crate::material::SceneLayout,
        empty_group: BindGroupId,
    ) -> Self {
        let entries = (0..buffers.len())
            .map(|j| BindEntry {
                binding: j as u32,
                resource: BindResource::Buffer { buffer: BufferId::default(), offset: 0, size: None },
            })
            .collect();
        let buffers = buffers.iter().enumerate().map(|(j, &(b, _))| (j, b, graph.buffers[b].clone())).collect();
        let inputs = ExternalInputGroups {
            pass: "scene passes".into(),
            layout: layout.layout,
            entries,
            externals: Vec::new(),
            buffers,
            groups: Vec::new(),
        };
        Self { layout, inputs, empty_group }
    }
}

/// Shader, layout, uniform buffer, bind group and pipeline of a fullscreen pass. Inputs
/// are (texture, format, external target): an external one's texture comes per frame, and
/// then the group does too (the returned `ExternalInputGroups`).
#[allow(clippy::too_many_arguments)]
pub(super) fn fullscreen<B: Backend>(
    b: &B,
    gpu: &FrameResources,
    shader: &FullscreenShader,
    pass: &str,
    format: TextureFormat,
    size: (u32, u32),
    inputs: &[(TextureId, TextureFormat, Option<usize>)],
    buffers: &[(usize, BufferBinding, String)],
    made: &mut Vec<Resource>,
) -> Result<(PipelineId, Option<BindGroupId>, Option<ExternalInputGroups>), RenderError> {
    let shader_error = |e: CreateError| RenderError::Shader { pass: pass.to_owned(), source: e };
    let module = b
        .create_shader(&backend::ShaderModuleDesc {
            label: shader.name.clone(),
            wgsl: format!("{FULLSCREEN_PRELUDE}\n{}", shader.wgsl),
        })
        .map_err(shader_error)?;
    made.push(Resource::Shader(module));
    let stages = Stages::FRAGMENT | Stages::VERTEX;
    let mut entries = vec![
        LayoutEntry { binding: 0, visibility: stages, ty: BindingType::Uniform { dynamic: false, min_size: 0 } },
        LayoutEntry { binding: 1, visibility: stages, ty: BindingType::Sampler { comparison: false } },
        LayoutEntry { binding: 2, visibility: stages, ty: BindingType::NonFilteringSampler },
    ];
    for (i, (_, f, _)) in inputs.iter().enumerate() {
        let kind = if f.is_depth() { TextureSampleKind::UnfilterableFloat } else { TextureSampleKind::Float };
        entries.push(LayoutEntry { binding: 3 + i as u32, visibility: stages, ty: BindingType::Texture(kind) });
    }
    let first_buffer = 3 + inputs.len();
    for (j, (_, binding, _)) in buffers.iter().enumerate() {
        let ty = match binding {
            BufferBinding::Uniform => BindingType::Uniform { dynamic: false, min_size: 0 },
            BufferBinding::Storage => BindingType::Storage { dynamic: false },
        };
        entries.push(LayoutEntry { binding: (first_buffer + j) as u32, visibility: Stages::FRAGMENT, ty });
    }
    let group_error = |source| RenderError::BindGroup { pass: pass.to_owned(), source };
    let layout = b
        .create_bind_group_layout(&BindGroupLayoutDesc { label: format!("{pass}-layout"), entries })
        .map_err(group_error)?;
    made.push(Resource::BindGroupLayout(layout));
    let uniform = buffer(b, &format!("{pass}-frame"), 64, BufferUsage::UNIFORM).map_err(RenderError::FrameBuffer)?;
    made.push(Resource::Buffer(uniform));
    let (w, h) = (size.0 as f32, size.1 as f32);
    let mut block = [0f32; 16];
    block[..4].copy_from_slice(&[w, h, 1.0 / w, 1.0 / h]);
    block[4..12].copy_from_slice(&shader.params);
    b.write_buffer(uniform, 0, bytemuck::cast_slice(&block)).map_err(RenderError::Write)?;
    let mut bind = vec![
        BindEntry { binding: 0, resource: BindResource::Buffer { buffer: uniform, offset: 0, size: None } },
        BindEntry { binding: 1, resource: BindResource::Sampler(gpu.post_sampler) },
        BindEntry { binding: 2, resource: BindResource::Sampler(gpu.point_sampler) },
    ];
    for (i, (t, _, _)) in inputs.iter().enumerate() {
        bind.push(BindEntry { binding: 3 + i as u32, resource: BindResource::Texture(*t) });
    }
    let externals: Vec<(usize, usize)> =
        inputs.iter().enumerate().filter_map(|(i, &(_, _, ext))| Some((3 + i, ext?))).collect();
    // The engine's buffers come per frame (bound to the graph's buffers); a placeholder
    // until then (the group is made per frame).
    for (j, _) in buffers.iter().enumerate() {
        let resource = BindResource::Buffer { buffer: BufferId::default(), offset: 0, size: None };
        bind.push(BindEntry { binding: (first_buffer + j) as u32, resource });
    }
    let buffers: Vec<(usize, usize, String)> =
        buffers.iter().enumerate().map(|(j, (i, _, name))| (first_buffer + j, *i, name.clone())).collect();
    let (group, per_frame) = if externals.is_empty() && buffers.is_empty() {
        let group = b
            .create_bind_group(&BindGroupDesc { label: format!("{pass}-inputs"), layout, entries: bind })
            .map_err(group_error)?;
        made.push(Resource::BindGroup(group));
        (Some(group), None)
    } else {
        (
            None,
            Some(ExternalInputGroups {
                pass: pass.to_owned(),
                layout,
                entries: bind,
                externals,
                buffers,
                groups: Vec::new(),
            }),
        )
    };
    let pipeline = b
        .create_pipeline(&PipelineDesc {
            label: format!("{pass}-pipeline"),
            shader: module,
            vertex_entry: "sy_fullscreen_vs".into(),
            fragment_entry: Some(shader.entry.clone()),
            bind_group_layouts: vec![layout],
            vertex_buffers: Vec::new(),
            cull: CullMode::None,
            color: Some(ColorTargetState { format, blend: BlendMode::Replace }),
            depth: None,
            samples: 1,
        })
        .map_err(shader_error)?;
    made.push(Resource::Pipeline(pipeline));
    Ok((pipeline, group, per_frame))
}

/// Whether a fullscreen pass's fragment entry writes every texel of its target: it
/// neither discards nor writes `sample_mask` (what a don't-care load needs).
pub(super) fn writes_every_texel(shader: &FullscreenShader) -> bool {
    backend::fragment_writes_every_texel(&format!("{FULLSCREEN_PRELUDE}\n{}", shader.wgsl), &shader.entry)
}

/// The backend's description of a graph pass.
pub(super) fn backend_pass(p: &Pass, label: std::sync::Arc<str>, texture: &dyn Fn(TargetId) -> TextureId) -> PassDesc {
    let store = |s| match s {
        StoreOp::Store => backend::StoreOp::Store,
        StoreOp::Discard => backend::StoreOp::Discard,
    };
    if matches!(p.content, PassContent::Compute(_)) {
        return PassDesc::compute(label);
    }
    // A don't-care load is the backend's don't-care only where Switchyard knows the pass
    // writes every texel: a fullscreen pass (one triangle over the target, no blending,
    // no depth) whose fragment entry neither discards nor writes `sample_mask`. Elsewhere
    // it runs as a clear (any content is allowed; clearing is one); the plan refuses a
    // fullscreen pass that asks for it and may leave texels unwritten.
    let every_texel = matches!(&p.content, PassContent::Fullscreen(s) if writes_every_texel(s));
    // SAFETY: a fullscreen pass's pipeline draws one triangle that covers its color
    // target, with `BlendMode::Replace` and no depth attachment, and its fragment entry
    // was just found to write every texel it covers (no `discard`, no `sample_mask`), so
    // the pass writes every texel before anything reads one.
    let dont_care = every_texel.then(|| unsafe { backend::DontCareToken::promise() });
    PassDesc {
        label,
        color: p.color.map(|a| ColorAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => dont_care.map_or(backend::LoadOp::Clear([0.0; 4]), backend::LoadOp::DontCare),
            },
            store: store(a.store),
            resolve: a.resolve.map(texture),
        }),
        depth: p.depth.map(|a| DepthAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => dont_care.map_or(backend::LoadOp::Clear(1.0), backend::LoadOp::DontCare),
            },
            store: store(a.store),
        }),
        compute: false,
        native: None,
    }
}
