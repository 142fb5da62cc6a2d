//! Resource descriptions at and past the limits.

use super::*;

/// Resource descriptions: buffers, textures, samplers, layouts, bind groups, render and
/// compute pipelines with arbitrary sizes, formats, usages, sample counts, entries and
/// stages (at and past the limits), each created on the null backend; what was made is
/// destroyed again.
pub fn resource_descs(data: &[u8]) {
    resource_descs_on(&NullBackend::new(true), data, &mut Log::default());
}

/// [`resource_descs`] on `b`, noting each creation in `log`.
pub fn resource_descs_on<B: Backend>(b: &B, data: &[u8], log: &mut Log) {
    let mut made = Destroy(b, Vec::new());
    let _ = run_resource_descs(b, &mut Unstructured::new(data), log, &mut made.1);
}

/// Shaders whose bindings and entry points the pipelines below may or may not match.
const RESOURCE_SHADERS: [&str; 3] = [
    "@group(0) @binding(0) var<uniform> u: vec4<f32>;
     @group(0) @binding(1) var t: texture_2d<f32>;
     @group(0) @binding(2) var s: sampler;
     @vertex fn vs(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> { return vec4<f32>(p, 1.0) * u.x; }
     @fragment fn fs() -> @location(0) vec4<f32> { return textureSample(t, s, vec2<f32>(0.5)); }
     @fragment fn fs_depth() -> @builtin(frag_depth) f32 { return 0.5; }",
    "@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> { return vec4<f32>(f32(i), 0.0, 0.0, 1.0); }
     @fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }",
    "@group(0) @binding(0) var<storage, read_write> v: array<u32>;
     @group(0) @binding(1) var<storage, read> r: array<u32>;
     @compute @workgroup_size(1) fn main() { v[0] = r[0]; }",
];

fn side(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(*u.choose(&[0, 1, 4, 64, 2048, 8192, 8193, 16384, 16385, 1 << 20])?)
}

fn layout_entry(u: &mut Unstructured<'_>) -> Result<LayoutEntry> {
    let ty = match u.int_in_range(0..=7)? {
        0 => BindingType::Uniform { dynamic: u.arbitrary()?, min_size: *u.choose(&[0, 4, 16, 64, 1 << 20])? },
        1 => BindingType::Storage { dynamic: u.arbitrary()? },
        2 => BindingType::StorageReadWrite { dynamic: u.arbitrary()? },
        3 => BindingType::Texture(TextureSampleKind::Float),
        4 => BindingType::Texture(TextureSampleKind::Depth),
        5 => BindingType::Texture(TextureSampleKind::UnfilterableFloat),
        6 => BindingType::Sampler { comparison: u.arbitrary()? },
        _ => BindingType::NonFilteringSampler,
    };
    Ok(LayoutEntry { binding: u.int_in_range(0..=3)?, visibility: Stages(u.int_in_range(0..=7)?), ty })
}

fn run_resource_descs<B: Backend>(
    b: &B,
    u: &mut Unstructured<'_>,
    log: &mut Log,
    made: &mut Vec<Resource>,
) -> Result<()> {
    let mut buffers = Vec::new();
    let mut textures = Vec::new();
    let mut samplers = Vec::new();
    let mut layouts = Vec::new();
    let mut shaders = Vec::new();
    for wgsl in RESOURCE_SHADERS {
        let s = b.create_shader(&switchyard::backend::ShaderModuleDesc { label: "descs".into(), wgsl: wgsl.into() });
        if let Ok(s) = log.note("create_shader", s) {
            made.push(s.into());
            shaders.push(s);
        }
    }
    let keep = |r: Resource, made: &mut Vec<Resource>| made.push(r);
    while !u.is_empty() {
        match u.int_in_range(0..=6)? {
            0 => {
                let size = *u.choose(&[0, 3, 4, 64, 256, 1 << 20, 1 << 32, (1 << 32) + 4, u64::MAX - 3])?;
                let desc = BufferDesc { label: "b".into(), size, usage: BufferUsage(u.int_in_range(0..=127)?) };
                if let Ok(id) = log.note("create_buffer", b.create_buffer(&desc)) {
                    keep(id.into(), made);
                    buffers.push(id);
                }
            }
            1 => {
                let desc = TextureDesc {
                    label: "t".into(),
                    width: side(u)?,
                    height: side(u)?,
                    format: *u.choose(&TEXTURE_FORMATS)?,
                    usage: TextureUsage(u.int_in_range(0..=31)?),
                    samples: *u.choose(&[1, 1, 2, 3, 4, 8, 16])?,
                    mip_levels: *u.choose(&[1, 1, 2, 3, 0, 20])?,
                };
                if let Ok(id) = log.note("create_texture", b.create_texture(&desc)) {
                    keep(id.into(), made);
                    textures.push(id);
                }
            }
            2 => {
                let desc = SamplerDesc {
                    label: "s".into(),
                    filter: *u.choose(&[FilterMode::Nearest, FilterMode::Linear])?,
                    address: *u.choose(&[AddressMode::ClampToEdge, AddressMode::Repeat])?,
                    compare: *u.choose(&[None, Some(CompareFunction::LessEqual), Some(CompareFunction::Always)])?,
                };
                if let Ok(id) = log.note("create_sampler", b.create_sampler(&desc)) {
                    keep(id.into(), made);
                    samplers.push(id);
                }
            }
            3 => {
                let mut entries = Vec::new();
                for _ in 0..u.int_in_range(0..=4)? {
                    entries.push(layout_entry(u)?);
                }
                let desc = BindGroupLayoutDesc { label: "l".into(), entries };
                if let Ok(id) = log.note("create_bind_group_layout", b.create_bind_group_layout(&desc)) {
                    keep(id.into(), made);
                    layouts.push(id);
                }
            }
            4 if !layouts.is_empty() => {
                let mut entries = Vec::new();
                for _ in 0..u.int_in_range(0..=4)? {
                    let resource = match u.int_in_range(0..=2)? {
                        0 if !buffers.is_empty() => BindResource::Buffer {
                            buffer: *u.choose(&buffers)?,
                            offset: *u.choose(&[0, 4, 256, 512])?,
                            size: *u.choose(&[None, Some(0), Some(16), Some(256), Some(1 << 20)])?,
                        },
                        1 if !textures.is_empty() => BindResource::Texture(*u.choose(&textures)?),
                        _ if !samplers.is_empty() => BindResource::Sampler(*u.choose(&samplers)?),
                        _ => continue,
                    };
                    entries.push(BindEntry { binding: u.int_in_range(0..=3)?, resource });
                }
                let desc = BindGroupDesc { label: "g".into(), layout: *u.choose(&layouts)?, entries };
                if let Ok(id) = log.note("create_bind_group", b.create_bind_group(&desc)) {
                    keep(id.into(), made);
                }
            }
            5 if !shaders.is_empty() => {
                let mut bind_group_layouts = Vec::new();
                for _ in 0..u.int_in_range(0..=2)? {
                    if let Ok(&l) = u.choose(&layouts) {
                        bind_group_layouts.push(l);
                    }
                }
                let color = |u: &mut Unstructured<'_>| -> Result<Option<ColorTargetState>> {
                    Ok(if u.ratio(3, 4)? {
                        let blend = *u.choose(&[BlendMode::Replace, BlendMode::Alpha])?;
                        Some(ColorTargetState { format: *u.choose(&FORMATS)?, blend })
                    } else {
                        None
                    })
                };
                let desc = PipelineDesc {
                    label: "p".into(),
                    shader: *u.choose(&shaders)?,
                    vertex_entry: (*u.choose(&["vs", "main", "fs"])?).into(),
                    fragment_entry: (*u.choose(&[None, Some("fs"), Some("fs_depth"), Some("vs")])?).map(String::from),
                    bind_group_layouts,
                    vertex_buffers: if u.arbitrary()? {
                        vec![VertexBufferLayout {
                            stride: *u.choose(&[0, 4, 12, 13, 16])?,
                            step: StepMode::Vertex,
                            attributes: vec![VertexAttribute {
                                format: *u.choose(&[VertexFormat::Float32x3, VertexFormat::Float32x4])?,
                                offset: *u.choose(&[0, 4])?,
                                location: *u.choose(&[0, 1])?,
                            }],
                        }]
                    } else {
                        Vec::new()
                    },
                    cull: CullMode::None,
                    color: color(u)?,
                    depth: if u.arbitrary()? {
                        Some(DepthState {
                            format: *u.choose(&FORMATS)?,
                            write: u.arbitrary()?,
                            compare: CompareFunction::Less,
                            bias: 0,
                            bias_slope_scale_bits: 0,
                        })
                    } else {
                        None
                    },
                    samples: *u.choose(&[1, 1, 4, 3])?,
                };
                if let Ok(id) = log.note("create_pipeline", b.create_pipeline(&desc)) {
                    keep(id.into(), made);
                }
            }
            6 if !shaders.is_empty() => {
                let mut bind_group_layouts = Vec::new();
                for _ in 0..u.int_in_range(0..=2)? {
                    if let Ok(&l) = u.choose(&layouts) {
                        bind_group_layouts.push(l);
                    }
                }
                let desc = ComputePipelineDesc {
                    label: "c".into(),
                    shader: *u.choose(&shaders)?,
                    entry: (*u.choose(&["main", "vs"])?).into(),
                    bind_group_layouts,
                };
                if let Ok(id) = log.note("create_compute_pipeline", b.create_compute_pipeline(&desc)) {
                    keep(id.into(), made);
                }
            }
            _ => {}
        }
    }
    Ok(())
}
