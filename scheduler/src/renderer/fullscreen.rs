//! What the plan makes for fullscreen passes (the shader prelude, layout, uniform block,
//! bind group and pipeline), and the backend description of a graph pass.

use switchyard_backend as backend;
use switchyard_backend::Backend;
use switchyard_backend::{
    BindEntry, BindGroupDesc, BindGroupId, BindGroupLayoutDesc, BindResource, BindingType, BlendMode, BufferUsage,
    ColorAttachment, ColorTargetState, CreateError, CullMode, DepthAttachment, LayoutEntry, PassDesc, PipelineDesc,
    PipelineId, Resource, Stages, TextureFormat, TextureId, TextureSampleKind,
};

use super::gpu::{buffer, FrameResources};
use super::RenderError;
use crate::frame_graph::*;

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

/// Shader, layout, uniform buffer, bind group and pipeline of a fullscreen pass.
#[allow(clippy::too_many_arguments)]
pub(super) fn fullscreen<B: Backend>(
    b: &B,
    gpu: &FrameResources,
    shader: &FullscreenShader,
    pass: &str,
    format: TextureFormat,
    size: (u32, u32),
    inputs: &[(TextureId, TextureFormat)],
    made: &mut Vec<Resource>,
) -> Result<(PipelineId, BindGroupId), RenderError> {
    let shader_error = |e: CreateError| RenderError::Shader { pass: pass.to_owned(), source: e };
    let module = b
        .create_shader(&backend::ShaderDesc {
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
    for (i, (_, f)) in inputs.iter().enumerate() {
        let kind = if f.is_depth() { TextureSampleKind::UnfilterableFloat } else { TextureSampleKind::Float };
        entries.push(LayoutEntry { binding: 3 + i as u32, visibility: stages, ty: BindingType::Texture(kind) });
    }
    let layout = b
        .create_bind_group_layout(&BindGroupLayoutDesc { label: format!("{pass}-layout"), entries })
        .map_err(RenderError::FrameBuffer)?;
    made.push(Resource::BindGroupLayout(layout));
    let uniform = buffer(b, &format!("{pass}-frame"), 64, BufferUsage::UNIFORM).map_err(RenderError::FrameBuffer)?;
    made.push(Resource::Buffer(uniform));
    let (w, h) = (size.0 as f32, size.1 as f32);
    let mut block = [0f32; 16];
    block[..4].copy_from_slice(&[w, h, 1.0 / w, 1.0 / h]);
    block[4..12].copy_from_slice(&shader.params);
    b.write_buffer(uniform, 0, bytemuck::cast_slice(&block))
        .map_err(|e| RenderError::FrameBuffer(CreateError::Invalid(e.to_string())))?;
    let mut bind = vec![
        BindEntry { binding: 0, resource: BindResource::Buffer { buffer: uniform, offset: 0, size: None } },
        BindEntry { binding: 1, resource: BindResource::Sampler(gpu.post_sampler) },
        BindEntry { binding: 2, resource: BindResource::Sampler(gpu.point_sampler) },
    ];
    for (i, (t, _)) in inputs.iter().enumerate() {
        bind.push(BindEntry { binding: 3 + i as u32, resource: BindResource::Texture(*t) });
    }
    let group = b
        .create_bind_group(&BindGroupDesc { label: format!("{pass}-inputs"), layout, entries: bind })
        .map_err(RenderError::FrameBuffer)?;
    made.push(Resource::BindGroup(group));
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
    Ok((pipeline, group))
}

/// The backend's description of a graph pass.
pub(super) fn backend_pass(p: &Pass, label: &'static str, texture: &dyn Fn(TargetId) -> TextureId) -> PassDesc {
    let store = |s| match s {
        StoreOp::Store => backend::StoreOp::Store,
        StoreOp::Discard => backend::StoreOp::Discard,
    };
    if matches!(p.content, PassContent::Compute(_)) {
        return PassDesc::compute(label);
    }
    // Don't-care loads run as clears: any content is allowed, and clearing is one choice.
    // (wgpu's `LoadOp::DontCare` needs an unsafe token.)
    PassDesc {
        label,
        color: p.color.map(|a| ColorAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => backend::LoadOp::Clear([0.0; 4]),
            },
            store: store(a.store),
            resolve: a.resolve.map(texture),
        }),
        depth: p.depth.map(|a| DepthAttachment {
            texture: texture(a.target),
            load: match a.load {
                LoadOp::Clear(v) => backend::LoadOp::Clear(v),
                LoadOp::Load => backend::LoadOp::Load,
                LoadOp::DontCare => backend::LoadOp::Clear(1.0),
            },
            store: store(a.store),
        }),
        compute: false,
    }
}
