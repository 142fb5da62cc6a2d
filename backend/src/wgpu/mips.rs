//! Mip levels made on the GPU (`Backend::generate_mips`).
//!
//! Where the adapter has compute shaders, four storage textures a stage and texture view
//! formats, RGBA8 textures made to have their levels generated are made as `Rgba8Unorm`
//! with storage use (an sRGB one viewed as sRGB: `WgpuBackend::compute_mips`), and one
//! dispatch makes four levels: each workgroup reads a tile of 16 x 16 texels of the
//! source level and writes the 2 x 2 box means of 8 x 8, 4 x 4, 2 x 2 and 1 x 1 texels
//! below it, kept in workgroup memory in between (linear values, sRGB encoded on store).
//! A 256 x 256 texture is two dispatches instead of eight render passes: the streamed
//! demo's frames spent about 0.18 ms of GPU time a frame on about 21 such passes (RUNS.md
//! run 78; levels drawn from a source four above, in passes that did not wait for each
//! other, took as long: run 79), and about 0.06 ms on the dispatches (run 80).
//! Elsewhere each level is drawn from the one above by a full-screen triangle that samples
//! it with a linear filter (a 2 x 2 box where the sides halve evenly; sRGB views decode
//! before filtering and encode after).

use std::collections::HashMap;

use parking_lot::Mutex;

use super::WgpuBackend;
use crate::error::{CreateError, WriteError};
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

/// Four levels a dispatch: level `k` of the dispatch is the 2 x 2 box mean of level `k - 1`
/// (sides halved, at least 1; a side of 1 reads its one texel twice), computed from the
/// source level's texels in linear values without rounding in between.
const COMPUTE_SHADER: &str = r"
@group(0) @binding(0) var src: texture_2d<f32>;
@group(0) @binding(1) var dst1: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(2) var dst2: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(3) var dst3: texture_storage_2d<rgba8unorm, write>;
@group(0) @binding(4) var dst4: texture_storage_2d<rgba8unorm, write>;
// x: the levels this dispatch writes (1 to 4; bindings past them hold a 1 x 1 stand-in).
@group(0) @binding(5) var<uniform> levels: vec4<u32>;
// Levels 1-4 of the dispatch as a workgroup computed them: 8 x 8 texels from 0, 4 x 4
// from 64, 2 x 2 from 80, 1 x 1 at 84.
var<workgroup> tile: array<vec4<f32>, 85>;

fn encode(c: vec4<f32>, srgb: bool) -> vec4<f32> {
    if !srgb {
        return c;
    }
    let rgb = clamp(c.rgb, vec3<f32>(0.0), vec3<f32>(1.0));
    let lo = rgb * 12.92;
    let hi = 1.055 * pow(rgb, vec3<f32>(1.0 / 2.4)) - 0.055;
    return vec4<f32>(select(hi, lo, rgb <= vec3<f32>(0.0031308)), c.a);
}

// Where texel `p` of a level `size` texels a side (clamped to it) lies in a workgroup's
// tile of that level, `w` texels a side from `origin`.
fn at(p: vec2<i32>, origin: vec2<i32>, size: vec2<i32>, w: i32) -> i32 {
    let q = clamp(clamp(p, vec2<i32>(0), size - 1) - origin, vec2<i32>(0), vec2<i32>(w - 1));
    return q.y * w + q.x;
}

fn load(p: vec2<i32>, size: vec2<i32>) -> vec4<f32> {
    return textureLoad(src, min(p, size - 1), 0);
}

// A texel of the next level (`g * w / 2 + lid`) from a workgroup's tile of one (`size`
// texels a side; the tile `w` a side, in `tile` from `read_at`), kept in `tile` from
// `write_at`.
fn down(g: vec2<i32>, lid: vec2<i32>, size: vec2<i32>, w: i32, read_at: i32, write_at: i32) -> vec4<f32> {
    let h = w / 2;
    let p = 2 * (g * h + lid);
    let o = g * w;
    let c = (tile[read_at + at(p, o, size, w)] + tile[read_at + at(p + vec2<i32>(1, 0), o, size, w)]
        + tile[read_at + at(p + vec2<i32>(0, 1), o, size, w)] + tile[read_at + at(p + vec2<i32>(1, 1), o, size, w)]) * 0.25;
    tile[write_at + lid.y * h + lid.x] = c;
    return c;
}

fn levels_of(g: vec2<i32>, lid: vec2<i32>, srgb: bool) {
    let n = levels.x;
    let s0 = vec2<i32>(textureDimensions(src));
    let s1 = max(s0 / 2, vec2<i32>(1));
    let p1 = g * 8 + lid;
    let q = 2 * p1;
    let c1 = (load(q, s0) + load(q + vec2<i32>(1, 0), s0) + load(q + vec2<i32>(0, 1), s0)
        + load(q + vec2<i32>(1, 1), s0)) * 0.25;
    if all(p1 < s1) {
        textureStore(dst1, p1, encode(c1, srgb));
    }
    tile[lid.y * 8 + lid.x] = c1;
    workgroupBarrier();
    let s2 = max(s1 / 2, vec2<i32>(1));
    if n >= 2u && all(lid < vec2<i32>(4)) {
        let c = down(g, lid, s1, 8, 0, 64);
        if all(g * 4 + lid < s2) {
            textureStore(dst2, g * 4 + lid, encode(c, srgb));
        }
    }
    workgroupBarrier();
    let s3 = max(s2 / 2, vec2<i32>(1));
    if n >= 3u && all(lid < vec2<i32>(2)) {
        let c = down(g, lid, s2, 4, 64, 80);
        if all(g * 2 + lid < s3) {
            textureStore(dst3, g * 2 + lid, encode(c, srgb));
        }
    }
    workgroupBarrier();
    let s4 = max(s3 / 2, vec2<i32>(1));
    if n >= 4u && all(lid == vec2<i32>(0)) {
        let c = down(g, lid, s3, 2, 80, 84);
        if all(g < s4) {
            textureStore(dst4, g, encode(c, srgb));
        }
    }
}

@compute @workgroup_size(8, 8)
fn linear(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    levels_of(vec2<i32>(wg.xy), vec2<i32>(l.xy), false);
}

@compute @workgroup_size(8, 8)
fn srgb(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    levels_of(vec2<i32>(wg.xy), vec2<i32>(l.xy), true);
}
";

/// Levels one dispatch writes.
const LEVELS_PER_DISPATCH: u32 = 4;

/// The compute path's layout, its two pipelines (linear, sRGB: made on first use), the
/// levels-written values (one per dynamic offset) and the stand-in for bindings past the
/// levels a dispatch writes.
struct ComputeMips {
    module: wgpu::ShaderModule,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: [std::sync::OnceLock<wgpu::ComputePipeline>; 2],
    levels: wgpu::Buffer,
    stride: u32,
    stand_in: wgpu::TextureView,
}

impl ComputeMips {
    fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("switchyard-mips-compute"),
            source: wgpu::ShaderSource::Wgsl(COMPUTE_SHADER.into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        };
        let storage = wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format: wgpu::TextureFormat::Rgba8Unorm,
            view_dimension: wgpu::TextureViewDimension::D2,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("switchyard-mips-compute"),
            entries: &[
                entry(
                    0,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(1, storage),
                entry(2, storage),
                entry(3, storage),
                entry(4, storage),
                entry(
                    5,
                    wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: true,
                        min_binding_size: std::num::NonZeroU64::new(16),
                    },
                ),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("switchyard-mips-compute"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let stride = device.limits().min_uniform_buffer_offset_alignment.max(16);
        let mut values = vec![0u8; (stride * LEVELS_PER_DISPATCH) as usize];
        for n in 1..=LEVELS_PER_DISPATCH {
            let at = ((n - 1) * stride) as usize;
            values[at..at + 4].copy_from_slice(&n.to_le_bytes());
        }
        // Written through the queue, not mapped at creation: on a device lost before its
        // loss is reported the buffer is invalid and its mapped range would panic in wgpu,
        // where a queued write only reports an error (the next frame sees the loss).
        let levels = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("switchyard-mips-levels"),
            size: values.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&levels, 0, &values);
        let stand_in = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("switchyard-mips-stand-in"),
                size: wgpu::Extent3d { width: 1, height: 1, depth_or_array_layers: 1 },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu::TextureFormat::Rgba8Unorm,
                usage: wgpu::TextureUsages::STORAGE_BINDING,
                view_formats: &[],
            })
            .create_view(&wgpu::TextureViewDescriptor::default());
        Self { module, layout, pipeline_layout, pipelines: Default::default(), levels, stride, stand_in }
    }

    /// The pipeline for sRGB (`srgb`) or linear textures, and whether this call made it.
    fn pipeline(&self, device: &wgpu::Device, srgb: bool) -> (wgpu::ComputePipeline, bool) {
        let mut made = false;
        let p = self.pipelines[usize::from(srgb)].get_or_init(|| {
            made = true;
            zone!("mip-pipeline");
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("switchyard-mips-compute"),
                layout: Some(&self.pipeline_layout),
                module: &self.module,
                entry_point: Some(if srgb { "srgb" } else { "linear" }),
                compilation_options: Default::default(),
                cache: None,
            })
        });
        (p.clone(), made)
    }
}

/// The shader, layout and sampler (made on first use), and one pipeline per format; the
/// compute path where the backend makes textures for it.
pub(super) struct MipMaker {
    compute: Option<ComputeMips>,
    module: wgpu::ShaderModule,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    sampler: wgpu::Sampler,
    pipelines: Mutex<HashMap<wgpu::TextureFormat, wgpu::RenderPipeline>>,
}

impl MipMaker {
    /// The levels' uniform values (compute path) are written through `queue`: they reach
    /// the GPU with the next submit, before any submit of passes made with this maker.
    pub(super) fn new(device: &wgpu::Device, queue: &wgpu::Queue, compute: bool) -> Self {
        let compute = compute.then(|| ComputeMips::new(device, queue));
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
        Self { compute, module, layout, pipeline_layout, sampler, pipelines: Mutex::new(HashMap::new()) }
    }

    /// Makes `format`'s pipeline where there is none: whether it made one (the compute
    /// pipeline of its sRGB-ness where RGBA8 textures take the compute path).
    pub(super) fn ensure(&self, device: &wgpu::Device, format: wgpu::TextureFormat) -> bool {
        if let Some(c) = self.compute.as_ref().filter(|_| is_rgba8(format)) {
            return c.pipeline(device, format.is_srgb()).1;
        }
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
    /// The mip maker, made on first use under error scopes: on a device lost before its
    /// loss is reported its objects are invalid, the errors are caught here (not passed
    /// to an engine's handler) and nothing is kept, so the next call tries again.
    pub(super) fn mip_maker(&self) -> Result<&MipMaker, CreateError> {
        if let Some(maker) = self.mips.get() {
            return Ok(maker);
        }
        let made = self.scoped(|| MipMaker::new(&self.device, &self.queue, self.compute_mips))?;
        Ok(self.mips.get_or_init(|| made))
    }

    /// See [`crate::Backend::generate_mips`].
    pub(super) fn make_mips(&self, texture: TextureId) -> Result<(), WriteError> {
        if self.is_lost() {
            return Err(WriteError::DeviceLost);
        }
        // The maker's objects are fixed and valid, and the texture is checked before
        // anything is recorded: wgpu refuses them only on a lost device.
        let maker = self.mip_maker().map_err(|_| WriteError::DeviceLost)?;
        let reg = self.reg.read();
        let recorded = self.scoped(|| {
            let mut encoder =
                self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("switchyard-mips") });
            self.encode_mips(maker, &reg, texture, &mut encoder)?;
            let commands = encoder.finish();
            // Level 0's staged write (if any) runs before these commands: wgpu flushes
            // staged writes at the start of the next submit.
            let _queue = self.queue_use.lock();
            self.queue.submit([commands]);
            Ok(())
        });
        recorded.map_err(|_| WriteError::DeviceLost)?
    }

    /// Records the passes that make every level of `texture` below the first on
    /// `encoder` (checked first: nothing recorded on a refusal).
    pub(super) fn encode_mips(
        &self,
        maker: &MipMaker,
        reg: &crate::registry::Registry<super::WgpuObjects>,
        texture: TextureId,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), WriteError> {
        let kind = crate::command::ResourceKind::Texture;
        let e = reg.textures.get(texture).ok_or(WriteError::InvalidHandle { kind })?;
        crate::texels::check_generate(&e.meta)?;
        self.encode_levels(maker, &[(&e.obj.0, e.meta.format, e.meta.mip_levels)], encoder);
        Ok(())
    }

    /// Records what makes levels 1..`levels` of each texture (its format as made by the
    /// caller) from its first (checked: `texels::check_generate`): the textures made for
    /// the compute path in one compute pass, their first dispatches first (the second of a
    /// texture waits for its first; one texture's dispatch need not wait for another's),
    /// the others in render passes.
    pub(super) fn encode_levels(
        &self,
        maker: &MipMaker,
        textures: &[(&wgpu::Texture, crate::TextureFormat, u32)],
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let on_compute = |t: &wgpu::Texture| t.usage().contains(wgpu::TextureUsages::STORAGE_BINDING);
        if let Some(c) = &maker.compute {
            self.encode_compute(c, textures.iter().filter(|(t, ..)| on_compute(t)), encoder);
        }
        for &(t, _, levels) in textures.iter().filter(|(t, ..)| maker.compute.is_none() || !on_compute(t)) {
            self.encode_passes(maker, t, levels, encoder);
        }
    }

    fn encode_compute<'t>(
        &self,
        c: &ComputeMips,
        textures: impl Iterator<Item = &'t (&'t wgpu::Texture, crate::TextureFormat, u32)> + Clone,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let deepest = textures.clone().map(|&(_, _, levels)| levels).max().unwrap_or(0);
        if deepest < 2 {
            return;
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("switchyard-mips"),
            timestamp_writes: None,
        });
        for source in (0..deepest - 1).step_by(LEVELS_PER_DISPATCH as usize) {
            for &(t, format, levels) in textures.clone().filter(|&&(_, _, levels)| source + 1 < levels) {
                let srgb = format == crate::TextureFormat::Rgba8UnormSrgb;
                let (pipeline, _) = c.pipeline(&self.device, srgb);
                let view = |l, format, usage| {
                    t.create_view(&wgpu::TextureViewDescriptor {
                        format,
                        usage: Some(usage),
                        base_mip_level: l,
                        mip_level_count: Some(1),
                        ..Default::default()
                    })
                };
                let sampled = wgpu::TextureUsages::TEXTURE_BINDING;
                let src = view(source, srgb.then_some(wgpu::TextureFormat::Rgba8UnormSrgb), sampled);
                let written = (levels - 1 - source).min(LEVELS_PER_DISPATCH);
                let stored = wgpu::TextureUsages::STORAGE_BINDING;
                let dst: Vec<wgpu::TextureView> = (1..=written).map(|k| view(source + k, None, stored)).collect();
                let store = |k: usize| {
                    wgpu::BindingResource::TextureView(if k <= dst.len() { &dst[k - 1] } else { &c.stand_in })
                };
                let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("switchyard-mips-compute"),
                    layout: &c.layout,
                    entries: &[
                        wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&src) },
                        wgpu::BindGroupEntry { binding: 1, resource: store(1) },
                        wgpu::BindGroupEntry { binding: 2, resource: store(2) },
                        wgpu::BindGroupEntry { binding: 3, resource: store(3) },
                        wgpu::BindGroupEntry { binding: 4, resource: store(4) },
                        wgpu::BindGroupEntry {
                            binding: 5,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &c.levels,
                                offset: 0,
                                size: std::num::NonZeroU64::new(16),
                            }),
                        },
                    ],
                });
                // Level `source + 1` texels a side, 8 x 8 of them a workgroup.
                let side = |s: u32| (s >> (source + 1)).max(1).div_ceil(8);
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &group, &[(written - 1) * c.stride]);
                pass.dispatch_workgroups(side(t.width()), side(t.height()), 1);
            }
        }
    }

    /// Records the render passes that make levels 1..`levels` of `t` from its first, each
    /// level from the one above.
    fn encode_passes(&self, maker: &MipMaker, t: &wgpu::Texture, levels: u32, encoder: &mut wgpu::CommandEncoder) {
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

/// RGBA8 formats, whose levels the compute path makes.
fn is_rgba8(format: wgpu::TextureFormat) -> bool {
    matches!(format, wgpu::TextureFormat::Rgba8Unorm | wgpu::TextureFormat::Rgba8UnormSrgb)
}

/// The format a texture of `desc` (of `format`) is stored in, and the usage added to its
/// own: one whose levels may be generated (`texels::check_generate`: single-sampled, with
/// levels below the first, sampled and a render target; RGBA8 here) on the compute path
/// (`compute`) is stored as `Rgba8Unorm`, which storage textures take, with storage use;
/// the texture is viewed in its own format.
pub(super) fn stored_as(
    compute: bool,
    desc: &crate::TextureDesc,
    format: wgpu::TextureFormat,
) -> (wgpu::TextureFormat, wgpu::TextureUsages) {
    use crate::TextureUsage as U;
    let generated = is_rgba8(format)
        && desc.mip_levels > 1
        && desc.samples == 1
        && desc.usage.contains(U::SAMPLED | U::RENDER_TARGET)
        && !desc.usage.contains(U::TRANSIENT);
    if compute && generated {
        (wgpu::TextureFormat::Rgba8Unorm, wgpu::TextureUsages::STORAGE_BINDING)
    } else {
        (format, wgpu::TextureUsages::empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TextureDesc, TextureFormat, TextureUsage as U};

    /// Only textures whose levels may be generated, where the compute path is, change.
    #[test]
    fn only_generated_rgba8_textures_are_stored_for_the_compute_path() {
        let usage = U::SAMPLED | U::RENDER_TARGET | U::COPY_DST;
        let desc = |format, usage, samples, mip_levels| TextureDesc {
            label: "t".into(),
            width: 64,
            height: 64,
            format,
            usage,
            samples,
            mip_levels,
        };
        let stored = |compute, d: TextureDesc| stored_as(compute, &d, super::super::convert::texture_format(d.format));
        let srgb = TextureFormat::Rgba8UnormSrgb;
        let storage = (wgpu::TextureFormat::Rgba8Unorm, wgpu::TextureUsages::STORAGE_BINDING);
        assert_eq!(stored(true, desc(srgb, usage, 1, 7)), storage);
        assert_eq!(stored(true, desc(TextureFormat::Rgba8Unorm, usage, 1, 7)), storage);
        let none = wgpu::TextureUsages::empty();
        for (compute, d) in [
            (false, desc(srgb, usage, 1, 7)),
            (true, desc(srgb, usage, 1, 1)),
            (true, desc(srgb, U::RENDER_TARGET | U::COPY_DST, 1, 7)),
            (true, desc(srgb, U::SAMPLED | U::COPY_DST, 1, 7)),
            (true, desc(srgb, usage | U::TRANSIENT, 1, 7)),
            (true, desc(srgb, U::RENDER_TARGET, 4, 1)),
            (true, desc(TextureFormat::Rgba16Float, usage, 1, 7)),
        ] {
            let format = super::super::convert::texture_format(d.format);
            assert_eq!(stored(compute, d), (format, none));
        }
    }
}
