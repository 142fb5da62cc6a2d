//! Render pipelines: a checked descriptor into a wgpu pipeline and its layout.
use super::convert::{compare, texture_format, vertex_format};
use super::WgpuBackend;
use crate::desc::{BlendMode, CullMode, PipelineDesc, StepMode};
use crate::error::CreateError;
use crate::handle::PipelineId;
use crate::registry::Stored;

impl WgpuBackend {
    /// The cached pipeline of an equal descriptor, or a new one, cached.
    pub(super) fn build_pipeline(&self, desc: &PipelineDesc) -> Result<PipelineId, CreateError> {
        let mut reg = self.reg.write();
        if let Some(id) = reg.cached_pipeline(desc) {
            return Ok(id);
        }
        let meta = reg.check_pipeline(desc, &self.caps)?;
        let layouts: Vec<_> = desc.bind_group_layouts.iter().map(|l| Some(&reg.layouts[*l].obj)).collect();
        let attrs: Vec<Vec<wgpu::VertexAttribute>> = desc
            .vertex_buffers
            .iter()
            .map(|vb| {
                vb.attributes
                    .iter()
                    .map(|a| wgpu::VertexAttribute {
                        format: vertex_format(a.format),
                        offset: a.offset,
                        shader_location: a.location,
                    })
                    .collect()
            })
            .collect();
        let buffers: Vec<_> = desc
            .vertex_buffers
            .iter()
            .zip(&attrs)
            .map(|(vb, attributes)| {
                Some(wgpu::VertexBufferLayout {
                    array_stride: vb.stride,
                    step_mode: match vb.step {
                        StepMode::Vertex => wgpu::VertexStepMode::Vertex,
                        StepMode::Instance => wgpu::VertexStepMode::Instance,
                    },
                    attributes,
                })
            })
            .collect();
        let module = &reg.shaders[desc.shader].obj;
        let targets = [desc.color.map(|c| wgpu::ColorTargetState {
            format: texture_format(c.format),
            blend: match c.blend {
                BlendMode::Replace => None,
                BlendMode::Alpha => Some(wgpu::BlendState::ALPHA_BLENDING),
            },
            write_mask: wgpu::ColorWrites::ALL,
        })];
        let driver_cache = self.driver_cache.read();
        let obj = self.scoped(|| {
            let layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&desc.label),
                bind_group_layouts: &layouts,
                immediate_size: 0,
            });
            self.device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(&desc.label),
                layout: Some(&layout),
                vertex: wgpu::VertexState {
                    module,
                    entry_point: Some(&desc.vertex_entry),
                    compilation_options: Default::default(),
                    buffers: &buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode: match desc.cull {
                        CullMode::None => None,
                        CullMode::Back => Some(wgpu::Face::Back),
                        CullMode::Front => Some(wgpu::Face::Front),
                    },
                    ..Default::default()
                },
                depth_stencil: desc.depth.map(|z| wgpu::DepthStencilState {
                    format: texture_format(z.format),
                    depth_write_enabled: Some(z.write),
                    depth_compare: Some(compare(z.compare)),
                    stencil: Default::default(),
                    bias: wgpu::DepthBiasState {
                        constant: z.bias,
                        slope_scale: f32::from_bits(z.bias_slope_scale_bits),
                        clamp: 0.0,
                    },
                }),
                multisample: wgpu::MultisampleState { count: desc.samples, ..Default::default() },
                fragment: desc.fragment_entry.as_ref().map(|fs| wgpu::FragmentState {
                    module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: if desc.color.is_some() { &targets } else { &[] },
                }),
                multiview_mask: None,
                cache: driver_cache.as_ref(),
            })
        })?;
        drop(layouts);
        let id = reg.pipelines.insert(Stored { meta, obj: super::compute::NativePipeline::Render(obj) });
        reg.pipeline_cache.insert(desc.clone(), id);
        Ok(id)
    }
}
