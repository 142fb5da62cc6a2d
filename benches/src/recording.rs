//! Record workloads on the wgpu backend against hand-written wgpu.
//!
//! (a) State churn, the shape of wgpu's own Renderpass benchmark: every draw binds its own
//! bind group of 7 textures and its own vertex and index buffers. (b) One hand-written
//! `draw_indexed` per visible object, what a user writes without Switchyard.

use std::sync::Arc;

use rayon::prelude::*;
use switchyard_backend::wgpu::{Encoding, WgpuBackend, WgpuConfig};
use switchyard_backend::*;

const CHURN_WGSL: &str = r#"
@group(0) @binding(0) var t0: texture_2d<f32>;
@group(0) @binding(1) var t1: texture_2d<f32>;
@group(0) @binding(2) var t2: texture_2d<f32>;
@group(0) @binding(3) var t3: texture_2d<f32>;
@group(0) @binding(4) var t4: texture_2d<f32>;
@group(0) @binding(5) var t5: texture_2d<f32>;
@group(0) @binding(6) var t6: texture_2d<f32>;
@vertex fn vs(@location(0) p: vec2<f32>) -> @builtin(position) vec4<f32> { return vec4<f32>(p, 0.0, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> {
    let c = vec2<i32>(0, 0);
    return textureLoad(t0, c, 0) + textureLoad(t1, c, 0) + textureLoad(t2, c, 0) + textureLoad(t3, c, 0)
         + textureLoad(t4, c, 0) + textureLoad(t5, c, 0) + textureLoad(t6, c, 0);
}
"#;

/// A view of a new square 2D texture of side `size`.
fn raw_view(
    device: &::wgpu::Device,
    size: u32,
    format: ::wgpu::TextureFormat,
    usage: ::wgpu::TextureUsages,
) -> ::wgpu::TextureView {
    device
        .create_texture(&::wgpu::TextureDescriptor {
            label: None,
            size: ::wgpu::Extent3d { width: size, height: size, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: ::wgpu::TextureDimension::D2,
            format,
            usage,
            view_formats: &[],
        })
        .create_view(&Default::default())
}

/// A hand-written pipeline: `vs`/`fs` of `wgsl`, one vertex buffer of one attribute,
/// RGBA8 color, optional depth.
fn raw_pipeline(
    device: &::wgpu::Device,
    wgsl: &str,
    layout: &::wgpu::BindGroupLayout,
    stride: u64,
    format: ::wgpu::VertexFormat,
    depth: bool,
) -> ::wgpu::RenderPipeline {
    let module = device.create_shader_module(::wgpu::ShaderModuleDescriptor {
        label: None,
        source: ::wgpu::ShaderSource::Wgsl(wgsl.into()),
    });
    let pl = device.create_pipeline_layout(&::wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(layout)],
        immediate_size: 0,
    });
    let attrs = [::wgpu::VertexAttribute { format, offset: 0, shader_location: 0 }];
    device.create_render_pipeline(&::wgpu::RenderPipelineDescriptor {
        label: None,
        layout: Some(&pl),
        vertex: ::wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[Some(::wgpu::VertexBufferLayout {
                array_stride: stride,
                step_mode: ::wgpu::VertexStepMode::Vertex,
                attributes: &attrs,
            })],
        },
        primitive: Default::default(),
        depth_stencil: depth.then(|| ::wgpu::DepthStencilState {
            format: ::wgpu::TextureFormat::Depth32Float,
            depth_write_enabled: Some(true),
            depth_compare: Some(::wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(::wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(::wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// Chunks the report cuts the 10k churn draws into at every thread count (625 draws
/// each). Measured on the 16-core H200 (`docs/bench/h200-16core/run13/chunkprobe.txt`):
/// wgpu-core sizes each bundle's usage trackers to every buffer alive on the device, so a
/// bundle costs about 70 µs more to finish and as much to drop with this scene's 40k buffers;
/// 16 chunks keep that small and still give 16 threads one chunk each.
pub const CHURN_CHUNKS: usize = 16;

/// Textures shared by the bind groups (each group takes 7 of them).
const TEXTURES: usize = 64;

struct Raw {
    pipeline: ::wgpu::RenderPipeline,
    groups: Vec<::wgpu::BindGroup>,
    vbs: Vec<::wgpu::Buffer>,
    ibs: Vec<::wgpu::Buffer>,
    target: ::wgpu::TextureView,
}

/// The state-churn scene, built twice on one device: as Switchyard resources and as raw
/// wgpu objects for the hand-written baselines.
pub struct Churn {
    /// The backend (its device also holds the raw objects).
    pub backend: Arc<WgpuBackend>,
    pipeline: PipelineId,
    groups: Vec<BindGroupId>,
    vbs: Vec<BufferId>,
    ibs: Vec<BufferId>,
    pass: PassDesc,
    raw: Raw,
}

impl std::fmt::Debug for Churn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Churn").field("draws", &self.groups.len()).finish_non_exhaustive()
    }
}

fn tri(d: usize) -> [f32; 6] {
    let x = (d % 100) as f32 / 50.0 - 1.0;
    let y = (d / 100 % 100) as f32 / 50.0 - 1.0;
    [x, y, x + 0.02, y, x, y + 0.02]
}

impl Churn {
    /// `draws` draws on a new device with `encoding`.
    pub fn new(draws: usize, encoding: Encoding) -> Result<Self, String> {
        let backend =
            Arc::new(WgpuBackend::new(&WgpuConfig { encoding, ..WgpuConfig::default() }).map_err(|e| e.to_string())?);
        let b = &*backend;
        let e = |e: CreateError| e.to_string();
        let textures: Vec<TextureId> = (0..TEXTURES)
            .map(|i| {
                let t = b.create_texture(&TextureDesc {
                    label: "churn".into(),
                    width: 1,
                    height: 1,
                    format: TextureFormat::Rgba8Unorm,
                    usage: TextureUsage::SAMPLED | TextureUsage::COPY_DST,
                    samples: 1,
                    mip_levels: 1,
                })?;
                b.write_texture(t, &[i as u8, 0, 0, 255]).map_err(|e| CreateError::Invalid(e.to_string()))?;
                Ok(t)
            })
            .collect::<Result<_, CreateError>>()
            .map_err(e)?;
        let layout = b
            .create_bind_group_layout(&BindGroupLayoutDesc {
                label: "churn".into(),
                entries: (0..7)
                    .map(|i| LayoutEntry {
                        binding: i,
                        visibility: Stages::FRAGMENT,
                        ty: BindingType::Texture(TextureSampleKind::Float),
                    })
                    .collect(),
            })
            .map_err(e)?;
        let shader =
            b.create_shader(&ShaderModuleDesc { label: "churn".into(), wgsl: CHURN_WGSL.into() }).map_err(e)?;
        let color = b
            .create_texture(&TextureDesc {
                label: "churn-target".into(),
                width: 256,
                height: 256,
                format: TextureFormat::Rgba8Unorm,
                usage: TextureUsage::RENDER_TARGET,
                samples: 1,
                mip_levels: 1,
            })
            .map_err(e)?;
        let pipeline = b
            .create_pipeline(&PipelineDesc {
                label: "churn".into(),
                shader,
                vertex_entry: "vs".into(),
                fragment_entry: Some("fs".into()),
                bind_group_layouts: vec![layout],
                vertex_buffers: vec![VertexBufferLayout {
                    stride: 8,
                    step: StepMode::Vertex,
                    attributes: vec![VertexAttribute { format: VertexFormat::Float32x2, offset: 0, location: 0 }],
                }],
                cull: CullMode::None,
                color: Some(ColorTargetState { format: TextureFormat::Rgba8Unorm, blend: BlendMode::Replace }),
                depth: None,
                samples: 1,
            })
            .map_err(e)?;
        let mut groups = Vec::with_capacity(draws);
        let mut vbs = Vec::with_capacity(draws);
        let mut ibs = Vec::with_capacity(draws);
        for d in 0..draws {
            groups.push(
                b.create_bind_group(&BindGroupDesc {
                    label: "churn".into(),
                    layout,
                    entries: (0..7)
                        .map(|k| BindEntry {
                            binding: k as u32,
                            resource: BindResource::Texture(textures[(d * 7 + k) % TEXTURES]),
                        })
                        .collect(),
                })
                .map_err(e)?,
            );
            let vb = b
                .create_buffer(&BufferDesc {
                    label: "churn-vb".into(),
                    size: 24,
                    usage: BufferUsage::VERTEX | BufferUsage::COPY_DST,
                })
                .map_err(e)?;
            b.write_buffer(vb, 0, bytemuck::cast_slice(&tri(d))).map_err(|e| e.to_string())?;
            let ib = b
                .create_buffer(&BufferDesc {
                    label: "churn-ib".into(),
                    size: 12,
                    usage: BufferUsage::INDEX | BufferUsage::COPY_DST,
                })
                .map_err(e)?;
            b.write_buffer(ib, 0, bytemuck::cast_slice(&[0u32, 1, 2])).map_err(|e| e.to_string())?;
            vbs.push(vb);
            ibs.push(ib);
        }
        let pass = PassDesc {
            label: "churn".into(),
            color: Some(ColorAttachment { texture: color, load: LoadOp::Load, store: StoreOp::Store, resolve: None }),
            depth: None,
            compute: false,
            native: None,
        };
        let raw = Self::raw(b.device(), draws)?;
        Ok(Self { backend, pipeline, groups, vbs, ibs, pass, raw })
    }

    fn raw(device: &::wgpu::Device, draws: usize) -> Result<Raw, String> {
        use ::wgpu::util::DeviceExt;
        let textures: Vec<::wgpu::TextureView> = (0..TEXTURES)
            .map(|_| raw_view(device, 1, ::wgpu::TextureFormat::Rgba8Unorm, ::wgpu::TextureUsages::TEXTURE_BINDING))
            .collect();
        let entries: Vec<::wgpu::BindGroupLayoutEntry> = (0..7)
            .map(|i| ::wgpu::BindGroupLayoutEntry {
                binding: i,
                visibility: ::wgpu::ShaderStages::FRAGMENT,
                ty: ::wgpu::BindingType::Texture {
                    sample_type: ::wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: ::wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            })
            .collect();
        let layout =
            device.create_bind_group_layout(&::wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
        let pipeline = raw_pipeline(device, CHURN_WGSL, &layout, 8, ::wgpu::VertexFormat::Float32x2, false);
        let mut groups = Vec::with_capacity(draws);
        let mut vbs = Vec::with_capacity(draws);
        let mut ibs = Vec::with_capacity(draws);
        for d in 0..draws {
            let entries: Vec<::wgpu::BindGroupEntry> = (0..7)
                .map(|k| ::wgpu::BindGroupEntry {
                    binding: k as u32,
                    resource: ::wgpu::BindingResource::TextureView(&textures[(d * 7 + k) % TEXTURES]),
                })
                .collect();
            groups.push(device.create_bind_group(&::wgpu::BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &entries,
            }));
            vbs.push(device.create_buffer_init(&::wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(&tri(d)),
                usage: ::wgpu::BufferUsages::VERTEX,
            }));
            ibs.push(device.create_buffer_init(&::wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(&[0u32, 1, 2]),
                usage: ::wgpu::BufferUsages::INDEX,
            }));
        }
        let target = raw_view(device, 256, ::wgpu::TextureFormat::Rgba8Unorm, ::wgpu::TextureUsages::RENDER_ATTACHMENT);
        Ok(Raw { pipeline, groups, vbs, ibs, target })
    }

    /// Number of draws.
    pub fn draws(&self) -> usize {
        self.groups.len()
    }

    /// Switchyard: commands for each of `chunks` contiguous chunks built and recorded in
    /// parallel on the current pool (validation and encoding included). The report uses
    /// [`CHURN_CHUNKS`] at every thread count, as the renderer cuts chunks independently of
    /// the thread count.
    pub fn record_ours(&self, chunks: usize) -> Vec<<WgpuBackend as Backend>::Chunk> {
        (0..chunks.max(1)).into_par_iter().map(|c| self.record_range(c, chunks.max(1))).collect()
    }

    /// Chunk `c` of `chunks`: its commands built, validated and encoded.
    fn record_range(&self, c: usize, chunks: usize) -> <WgpuBackend as Backend>::Chunk {
        let n = self.draws();
        let per = n.div_ceil(chunks);
        let range = c * per..((c + 1) * per).min(n);
        let mut cmds = Vec::with_capacity(1 + 4 * range.len());
        cmds.push(Command::SetPipeline(self.pipeline));
        for d in range {
            cmds.push(Command::SetBindGroup { index: 0, group: self.groups[d], offsets: DynamicOffsets::NONE });
            cmds.push(Command::SetVertexBuffer { slot: 0, buffer: self.vbs[d], offset: 0 });
            cmds.push(Command::SetIndexBuffer { buffer: self.ibs[d], format: IndexFormat::Uint32, offset: 0 });
            cmds.push(Command::DrawIndexed {
                first_index: 0,
                index_count: 3,
                base_vertex: 0,
                first_instance: 0,
                instance_count: 1,
            });
        }
        let position = ChunkPosition { index: c as u32, count: chunks as u32 };
        self.backend.record(&self.pass, position, &cmds).expect("valid churn chunk")
    }

    fn raw_pass(&self, range: std::ops::Range<usize>) -> ::wgpu::CommandBuffer {
        let device = self.backend.device();
        let r = &self.raw;
        let mut enc = device.create_command_encoder(&Default::default());
        {
            let mut rp = enc.begin_render_pass(&::wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(::wgpu::RenderPassColorAttachment {
                    view: &r.target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: ::wgpu::Operations { load: ::wgpu::LoadOp::Load, store: ::wgpu::StoreOp::Store },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            rp.set_pipeline(&r.pipeline);
            for d in range {
                rp.set_bind_group(0, &r.groups[d], &[]);
                rp.set_vertex_buffer(0, r.vbs[d].slice(..));
                rp.set_index_buffer(r.ibs[d].slice(..), ::wgpu::IndexFormat::Uint32);
                rp.draw_indexed(0..3, 0, 0..1);
            }
        }
        enc.finish()
    }

    /// Hand-written wgpu: `passes` render passes, one per thread of the current pool.
    pub fn record_by_hand(&self, passes: usize) -> Vec<::wgpu::CommandBuffer> {
        let n = self.draws();
        let per = n.div_ceil(passes.max(1));
        if passes <= 1 {
            return vec![self.raw_pass(0..n)];
        }
        (0..passes).into_par_iter().map(|c| self.raw_pass(c * per..((c + 1) * per).min(n))).collect()
    }
}

/// One recording of the churn scene taken apart: how long until every chunk existed
/// (`wall`), the recording work summed over the threads that did it (`summed`: above the
/// one-thread work, the excess is contention or slower cores), and dropping the chunks
/// on the calling thread (`drop`; in a frame the submission thread drops them after
/// `queue.submit`). Milliseconds. For hand-written bundles, `encode` and `finish` split
/// `summed` into the `set_*`/`draw*` calls and `RenderBundleEncoder::finish`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordSplit {
    /// Until every chunk existed.
    pub wall: f64,
    /// Recording work summed over threads.
    pub summed: f64,
    /// The encoder calls, summed (hand-written bundles only; 0 otherwise).
    pub encode: f64,
    /// `finish`, summed (hand-written bundles only; 0 otherwise).
    pub finish: f64,
    /// Dropping every chunk on the calling thread.
    pub drop: f64,
}

impl RecordSplit {
    /// The median of each field over `runs`.
    pub fn median(runs: &[RecordSplit]) -> RecordSplit {
        let pick = |f: fn(&RecordSplit) -> f64| crate::frames::percentile(&runs.iter().map(f).collect::<Vec<_>>(), 0.5);
        RecordSplit {
            wall: pick(|s| s.wall),
            summed: pick(|s| s.summed),
            encode: pick(|s| s.encode),
            finish: pick(|s| s.finish),
            drop: pick(|s| s.drop),
        }
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Churn {
    /// [`Churn::record_ours`] in `chunks` chunks, taken apart as [`RecordSplit`] says.
    pub fn record_ours_split(&self, chunks: usize) -> RecordSplit {
        let t = std::time::Instant::now();
        let timed: Vec<(f64, <WgpuBackend as Backend>::Chunk)> = (0..chunks.max(1))
            .into_par_iter()
            .map(|c| {
                let t = std::time::Instant::now();
                let chunk = self.record_range(c, chunks.max(1));
                (ms(t.elapsed()), chunk)
            })
            .collect();
        let wall = ms(t.elapsed());
        let summed = timed.iter().map(|c| c.0).sum();
        let t = std::time::Instant::now();
        drop(timed);
        RecordSplit { wall, summed, drop: ms(t.elapsed()), ..RecordSplit::default() }
    }

    /// Hand-written wgpu render bundles, one per chunk of `chunks`, taken apart as
    /// [`RecordSplit`] says.
    pub fn bundles_by_hand_split(&self, chunks: usize) -> RecordSplit {
        let n = self.draws();
        let per = n.div_ceil(chunks.max(1));
        let t = std::time::Instant::now();
        let timed: Vec<(f64, f64, ::wgpu::RenderBundle)> = (0..chunks.max(1))
            .into_par_iter()
            .map(|c| {
                let t0 = std::time::Instant::now();
                let r = &self.raw;
                let mut enc =
                    self.backend.device().create_render_bundle_encoder(&::wgpu::RenderBundleEncoderDescriptor {
                        label: None,
                        color_formats: &[Some(::wgpu::TextureFormat::Rgba8Unorm)],
                        depth_stencil: None,
                        sample_count: 1,
                        multiview: None,
                    });
                enc.set_pipeline(&r.pipeline);
                for d in c * per..((c + 1) * per).min(n) {
                    enc.set_bind_group(0, &r.groups[d], &[]);
                    enc.set_vertex_buffer(0, r.vbs[d].slice(..));
                    enc.set_index_buffer(r.ibs[d].slice(..), ::wgpu::IndexFormat::Uint32);
                    enc.draw_indexed(0..3, 0, 0..1);
                }
                let t1 = std::time::Instant::now();
                let bundle = enc.finish(&::wgpu::RenderBundleDescriptor { label: None });
                (ms(t1 - t0), ms(t1.elapsed()), bundle)
            })
            .collect();
        let wall = ms(t.elapsed());
        let encode: f64 = timed.iter().map(|c| c.0).sum();
        let finish: f64 = timed.iter().map(|c| c.1).sum();
        let t = std::time::Instant::now();
        drop(timed);
        RecordSplit { wall, summed: encode + finish, encode, finish, drop: ms(t.elapsed()) }
    }
}

/// One hand-written `draw_indexed` per visible object: a per-object dynamic uniform offset
/// (its transform) and the object's mesh range, as a renderer without batching does it.
pub struct PerObject {
    device: ::wgpu::Device,
    pipeline: ::wgpu::RenderPipeline,
    group: ::wgpu::BindGroup,
    vb: ::wgpu::Buffer,
    ib: ::wgpu::Buffer,
    color: ::wgpu::TextureView,
    depth: ::wgpu::TextureView,
}

impl std::fmt::Debug for PerObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PerObject")
    }
}

const PER_OBJECT_WGSL: &str = r#"
@group(0) @binding(0) var<uniform> model: mat4x4<f32>;
@vertex fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> { return model * vec4<f32>(p, 1.0); }
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }
"#;

impl PerObject {
    /// Resources for `objects` objects on `backend`'s device (36-index cubes).
    pub fn new(backend: &WgpuBackend, objects: usize) -> Self {
        use ::wgpu::util::DeviceExt;
        let device = backend.device().clone();
        let cube: Vec<[f32; 3]> = (0..8).map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2 & 1) as f32]).collect();
        let idx: Vec<u32> = [
            0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6, 0, 6, 4, 1, 5, 7, 1, 7, 3,
        ]
        .to_vec();
        let vb = device.create_buffer_init(&::wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&cube),
            usage: ::wgpu::BufferUsages::VERTEX,
        });
        let ib = device.create_buffer_init(&::wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(&idx),
            usage: ::wgpu::BufferUsages::INDEX,
        });
        let uniforms = device.create_buffer(&::wgpu::BufferDescriptor {
            label: None,
            size: objects.max(1) as u64 * 256,
            usage: ::wgpu::BufferUsages::UNIFORM,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&::wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[::wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: ::wgpu::ShaderStages::VERTEX,
                ty: ::wgpu::BindingType::Buffer {
                    ty: ::wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: std::num::NonZeroU64::new(64),
                },
                count: None,
            }],
        });
        let group = device.create_bind_group(&::wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[::wgpu::BindGroupEntry {
                binding: 0,
                resource: ::wgpu::BindingResource::Buffer(::wgpu::BufferBinding {
                    buffer: &uniforms,
                    offset: 0,
                    size: std::num::NonZeroU64::new(64),
                }),
            }],
        });
        let pipeline = raw_pipeline(&device, PER_OBJECT_WGSL, &layout, 12, ::wgpu::VertexFormat::Float32x3, true);
        let target = |format| raw_view(&device, 256, format, ::wgpu::TextureUsages::RENDER_ATTACHMENT);
        let color = target(::wgpu::TextureFormat::Rgba8Unorm);
        let depth = target(::wgpu::TextureFormat::Depth32Float);
        Self { device, pipeline, group, vb, ib, color, depth }
    }

    /// Encodes one draw per visible object (dense indices) into one render pass.
    pub fn record(&self, visible: &[u32]) -> ::wgpu::CommandBuffer {
        let mut enc = self.device.create_command_encoder(&Default::default());
        {
            let mut rp = enc.begin_render_pass(&::wgpu::RenderPassDescriptor {
                label: None,
                color_attachments: &[Some(::wgpu::RenderPassColorAttachment {
                    view: &self.color,
                    depth_slice: None,
                    resolve_target: None,
                    ops: ::wgpu::Operations { load: ::wgpu::LoadOp::Load, store: ::wgpu::StoreOp::Store },
                })],
                depth_stencil_attachment: Some(::wgpu::RenderPassDepthStencilAttachment {
                    view: &self.depth,
                    depth_ops: Some(::wgpu::Operations { load: ::wgpu::LoadOp::Load, store: ::wgpu::StoreOp::Store }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            rp.set_pipeline(&self.pipeline);
            rp.set_vertex_buffer(0, self.vb.slice(..));
            rp.set_index_buffer(self.ib.slice(..), ::wgpu::IndexFormat::Uint32);
            for &o in visible {
                rp.set_bind_group(0, &self.group, &[o * 256]);
                rp.draw_indexed(0..36, 0, 0..1);
            }
        }
        enc.finish()
    }
}
