//! Mip levels made on the GPU (`Backend::generate_mips`): each level drawn from the one
//! above by a full-screen triangle that samples it with a linear filter (a 2 x 2 box where
//! the sides halve evenly; sRGB views decode before filtering and encode after).

use std::collections::HashMap;

use parking_lot::Mutex;

use super::WgpuBackend;
use crate::error::WriteError;
use crate::handle::TextureId;

const SHADER: &str = r"
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var smp: sampler;
struct V { @builtin(position) pos: vec4<f32>, @location(0) uv: vec2<f32> };
@vertex fn vs(@builtin(vertex_index) i: u32) -> V {
    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    var o: V;
    o.pos = vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, 0.0, 1.0);
    o.uv = uv;
    return o;
}
@fragment fn fs(v: V) -> @location(0) vec4<f32> {
    return textureSampleLevel(src, smp, v.uv, 0.0);
}
";

/// The shader, layout and sampler (made on first use), and one pipeline per format.
pub(super) struct MipMaker {
    module: wgpu::ShaderModule,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    sampler: wgpu::Sampler,
    pipelines: Mutex<HashMap<wgpu::TextureFormat, wgpu::RenderPipeline>>,
}

impl MipMaker {
    pub(super) fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("switchyard-mips"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::FRAGMENT,
            ty,
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("switchyard-mips"),
            entries: &[
                entry(
                    0,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(1, wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering)),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("switchyard-mips"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("switchyard-mips"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        Self { module, layout, pipeline_layout, sampler, pipelines: Mutex::new(HashMap::new()) }
    }

    /// Makes `format`'s pipeline where there is none: whether it made one.
    pub(super) fn ensure(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> bool {
        let mut made = false;
        self.pipelines.lock().entry(format).or_insert_with(|| {
            made = true;
            self.make(device, format)
        });
        made
    }

    fn pipeline(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        self.pipelines.lock().entry(format).or_insert_with(|| self.make(device, format)).clone()
    }

    fn make(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> wgpu::RenderPipeline {
        zone!("mip-pipeline");
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("switchyard-mips"),
            layout: Some(&self.pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &self.module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        })
    }
}

impl WgpuBackend {
    /// See [`crate::Backend::generate_mips`].
    pub(super) fn make_mips(&self, texture: TextureId) -> Result<(), WriteError> {
        if self.is_lost() {
            return Err(WriteError::DeviceLost);
        }
        let reg = self.reg.read();
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-mips") });
        self.encode_mips(&reg, texture, &mut encoder)?;
        let commands = encoder.finish();
        drop(reg);
        // Level 0's staged write (if any) runs before these commands: wgpu flushes staged
        // writes at the start of the next submit.
        let _queue = self.queue_use.lock();
        self.queue.submit([commands]);
        Ok(())
    }

    /// Records the passes that make every level of `texture` below the first on
    /// `encoder` (checked first: nothing recorded on a refusal).
    pub(super) fn encode_mips(
        &self,
        reg: &crate::registry::Registry<super::WgpuObjects>,
        texture: TextureId,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), WriteError> {
        let kind = crate::command::ResourceKind::Texture;
        let e = reg.textures.get(texture).ok_or(WriteError::InvalidHandle { kind })?;
        crate::texels::check_generate(&e.meta)?;
        self.encode_levels(&e.obj.0, e.meta.mip_levels, encoder);
        Ok(())
    }

    /// Records the passes that make levels 1..`levels` of `t` from its first (checked:
    /// `texels::check_generate`).
    pub(super) fn encode_levels(&self, t: &wgpu::Texture, levels: u32, encoder: &mut wgpu::CommandEncoder) {
        let maker = self.mips.get_or_init(|| MipMaker::new(&self.device));
        let pipeline = maker.pipeline(&self.device, t.format());
        let level = |l| {
            t.create_view(&wgpu::TextureViewDescriptor {
                base_mip_level: l,
                mip_level_count: Some(1),
                ..Default::default()
            })
        };
        for l in 1..levels {
            let (src, dst) = (level(l - 1), level(l));
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("switchyard-mips"),
                layout: &maker.layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&src) },
                    wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&maker.sampler) },
                ],
            });
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("switchyard-mips"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &dst,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.draw(0..3, 0..1);
        }
    }
}
