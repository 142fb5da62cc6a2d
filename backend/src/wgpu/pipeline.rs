//! Render pipelines: a checked descriptor into a wgpu pipeline and its layout, one at a
//! time or a batch created in parallel (ids handed out in the batch's order).
use rayon::prelude::*;

use super::compute::NativePipeline;
use super::convert::{compare, texture_format, vertex_format};
use super::{WgpuBackend, WgpuObjects};
use crate::desc::{BlendMode, CullMode, PipelineDesc, StepMode};
use crate::error::CreateError;
use crate::handle::PipelineId;
use crate::registry::{PipelineMeta, Registry, Stored};

impl WgpuBackend {
    /// Each descriptor's pipeline: the cached one of an equal descriptor, or a new one,
    /// cached. The new ones are created in parallel under the registry's read lock (wgpu's
    /// error scopes are per thread), then inserted in `descs`' order under its write lock,
    /// so ids do not depend on which creation finished first.
    pub(super) fn build_pipelines(&self, descs: &[PipelineDesc]) -> Vec<Result<PipelineId, CreateError>> {
        // Only the first of equal descriptors in the batch is created; the others find it
        // cached when their turn to be inserted comes.
        let mut firsts = ahash::AHashMap::with_capacity(descs.len());
        let first: Vec<bool> = descs.iter().enumerate().map(|(i, d)| *firsts.entry(d).or_insert(i) == i).collect();
        let mut made: Vec<Option<Result<(PipelineMeta, NativePipeline), CreateError>>> = {
            let reg = self.reg.read();
            let new = |(d, first): (&PipelineDesc, &bool)| {
                let cached = reg.pipeline_cache.get(d).is_some_and(|id| reg.pipelines.get(*id).is_some());
                (*first && !cached).then(|| self.native_pipeline(&reg, d))
            };
            if descs.len() > 1 {
                descs.par_iter().zip(&first).map(new).collect()
            } else {
                descs.iter().zip(&first).map(new).collect()
            }
        };
        let mut reg = self.reg.write();
        let mut out = Vec::with_capacity(descs.len());
        for (d, made) in descs.iter().zip(&mut made) {
            if let Some(id) = reg.cached_pipeline(d) {
                out.push(Ok(id));
                continue;
            }
            // Not made above: an equal descriptor earlier in the batch was refused, or a
            // cached pipeline was destroyed in between. Made again here, once more.
            let made = made.take().unwrap_or_else(|| self.native_pipeline(&reg, d));
            out.push(made.map(|(meta, obj)| {
                let id = reg.pipelines.insert(Stored { meta, obj });
                reg.pipeline_cache.insert(d.clone(), id);
                id
            }));
        }
        out
    }

    /// A new wgpu pipeline for a checked descriptor.
    fn native_pipeline(
        &self,
        reg: &Registry<WgpuObjects>,
        desc: &PipelineDesc,
    ) -> Result<(PipelineMeta, NativePipeline), CreateError> {
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
        Ok((meta, NativePipeline::Render(obj)))
    }
}
