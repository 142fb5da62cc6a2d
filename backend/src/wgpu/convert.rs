//! Conversions between Switchyard's descriptors and errors and wgpu's.

use crate::command::{LoadOp, StoreOp};
use crate::desc::{
    AddressMode, BindingType, BufferUsage, CompareFunction, FilterMode, IndexFormat, SamplerDesc, Stages,
    TextureFormat, TextureSampleKind, TextureUsage, VertexFormat,
};
use crate::error::CreateError;

pub(super) fn texture_format(f: TextureFormat) -> wgpu::TextureFormat {
    match f {
        TextureFormat::Rgba8Unorm => wgpu::TextureFormat::Rgba8Unorm,
        TextureFormat::Rgba8UnormSrgb => wgpu::TextureFormat::Rgba8UnormSrgb,
        TextureFormat::Depth32Float => wgpu::TextureFormat::Depth32Float,
        TextureFormat::Rgba16Float => wgpu::TextureFormat::Rgba16Float,
        TextureFormat::Bgra8UnormSrgb => wgpu::TextureFormat::Bgra8UnormSrgb,
        TextureFormat::Bc1RgbaUnorm => wgpu::TextureFormat::Bc1RgbaUnorm,
        TextureFormat::Bc1RgbaUnormSrgb => wgpu::TextureFormat::Bc1RgbaUnormSrgb,
        TextureFormat::Bc7RgbaUnorm => wgpu::TextureFormat::Bc7RgbaUnorm,
        TextureFormat::Bc7RgbaUnormSrgb => wgpu::TextureFormat::Bc7RgbaUnormSrgb,
    }
}

/// The format of an engine texture, where this backend supports it.
pub(super) fn from_texture_format(f: wgpu::TextureFormat) -> Option<TextureFormat> {
    [
        TextureFormat::Rgba8Unorm,
        TextureFormat::Rgba8UnormSrgb,
        TextureFormat::Depth32Float,
        TextureFormat::Rgba16Float,
        TextureFormat::Bgra8UnormSrgb,
    ]
    .into_iter()
    .find(|&ours| texture_format(ours) == f)
}

pub(super) fn index_format(f: IndexFormat) -> wgpu::IndexFormat {
    match f {
        IndexFormat::Uint16 => wgpu::IndexFormat::Uint16,
        IndexFormat::Uint32 => wgpu::IndexFormat::Uint32,
    }
}

const BUFFER_USAGES: [(BufferUsage, wgpu::BufferUsages); 7] = [
    (BufferUsage::VERTEX, wgpu::BufferUsages::VERTEX),
    (BufferUsage::INDEX, wgpu::BufferUsages::INDEX),
    (BufferUsage::UNIFORM, wgpu::BufferUsages::UNIFORM),
    (BufferUsage::STORAGE, wgpu::BufferUsages::STORAGE),
    (BufferUsage::INDIRECT, wgpu::BufferUsages::INDIRECT),
    (BufferUsage::COPY_DST, wgpu::BufferUsages::COPY_DST),
    (BufferUsage::COPY_SRC, wgpu::BufferUsages::COPY_SRC),
];

pub(super) fn buffer_usage(u: BufferUsage) -> wgpu::BufferUsages {
    BUFFER_USAGES.iter().filter(|(ours, _)| u.contains(*ours)).fold(wgpu::BufferUsages::empty(), |w, (_, t)| w | *t)
}

/// The usages of ours a wgpu buffer's usages allow (those with no counterpart dropped).
pub(super) fn from_buffer_usage(u: wgpu::BufferUsages) -> BufferUsage {
    BUFFER_USAGES.iter().filter(|(_, theirs)| u.contains(*theirs)).fold(BufferUsage::NONE, |w, (ours, _)| w | *ours)
}

const USAGES: [(TextureUsage, wgpu::TextureUsages); 5] = [
    (TextureUsage::RENDER_TARGET, wgpu::TextureUsages::RENDER_ATTACHMENT),
    (TextureUsage::SAMPLED, wgpu::TextureUsages::TEXTURE_BINDING),
    (TextureUsage::COPY_SRC, wgpu::TextureUsages::COPY_SRC),
    (TextureUsage::COPY_DST, wgpu::TextureUsages::COPY_DST),
    (TextureUsage::TRANSIENT, wgpu::TextureUsages::TRANSIENT_ATTACHMENT),
];

pub(super) fn texture_usage(u: TextureUsage) -> wgpu::TextureUsages {
    USAGES.iter().filter(|(ours, _)| u.contains(*ours)).fold(wgpu::TextureUsages::empty(), |w, (_, theirs)| w | *theirs)
}

/// The usages of an engine texture this backend knows (others are ignored).
pub(super) fn from_texture_usage(u: wgpu::TextureUsages) -> TextureUsage {
    USAGES.iter().filter(|(_, theirs)| u.contains(*theirs)).fold(TextureUsage::NONE, |w, (ours, _)| w | *ours)
}

pub(super) fn stages(s: Stages) -> wgpu::ShaderStages {
    let mut w = wgpu::ShaderStages::empty();
    if s.contains(Stages::VERTEX) {
        w |= wgpu::ShaderStages::VERTEX;
    }
    if s.contains(Stages::FRAGMENT) {
        w |= wgpu::ShaderStages::FRAGMENT;
    }
    if s.contains(Stages::COMPUTE) {
        w |= wgpu::ShaderStages::COMPUTE;
    }
    w
}

pub(super) fn compare(c: CompareFunction) -> wgpu::CompareFunction {
    match c {
        CompareFunction::Less => wgpu::CompareFunction::Less,
        CompareFunction::LessEqual => wgpu::CompareFunction::LessEqual,
        CompareFunction::Greater => wgpu::CompareFunction::Greater,
        CompareFunction::Always => wgpu::CompareFunction::Always,
    }
}

pub(super) fn binding_type(t: BindingType) -> wgpu::BindingType {
    match t {
        BindingType::Uniform { dynamic, min_size } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: std::num::NonZeroU64::new(min_size),
        },
        BindingType::Storage { dynamic } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        BindingType::StorageReadWrite { dynamic } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: false },
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        BindingType::Texture(kind) => wgpu::BindingType::Texture {
            sample_type: match kind {
                TextureSampleKind::Float => wgpu::TextureSampleType::Float { filterable: true },
                TextureSampleKind::Depth => wgpu::TextureSampleType::Depth,
                TextureSampleKind::UnfilterableFloat => wgpu::TextureSampleType::Float { filterable: false },
            },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        BindingType::Sampler { comparison } => wgpu::BindingType::Sampler(if comparison {
            wgpu::SamplerBindingType::Comparison
        } else {
            wgpu::SamplerBindingType::Filtering
        }),
        BindingType::NonFilteringSampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering),
    }
}

pub(super) fn vertex_format(f: VertexFormat) -> wgpu::VertexFormat {
    match f {
        VertexFormat::Float32 => wgpu::VertexFormat::Float32,
        VertexFormat::Float32x2 => wgpu::VertexFormat::Float32x2,
        VertexFormat::Float32x3 => wgpu::VertexFormat::Float32x3,
        VertexFormat::Float32x4 => wgpu::VertexFormat::Float32x4,
        VertexFormat::Uint32 => wgpu::VertexFormat::Uint32,
        VertexFormat::Unorm8x4 => wgpu::VertexFormat::Unorm8x4,
    }
}

pub(super) fn sampler(d: &SamplerDesc) -> wgpu::SamplerDescriptor<'_> {
    let filter = match d.filter {
        FilterMode::Nearest => wgpu::FilterMode::Nearest,
        FilterMode::Linear => wgpu::FilterMode::Linear,
    };
    let address = match d.address {
        AddressMode::ClampToEdge => wgpu::AddressMode::ClampToEdge,
        AddressMode::Repeat => wgpu::AddressMode::Repeat,
    };
    wgpu::SamplerDescriptor {
        label: Some(&d.label),
        address_mode_u: address,
        address_mode_v: address,
        address_mode_w: address,
        mag_filter: filter,
        min_filter: filter,
        // Between mip levels too (textures with one level are unaffected).
        mipmap_filter: match d.filter {
            FilterMode::Nearest => wgpu::MipmapFilterMode::Nearest,
            FilterMode::Linear => wgpu::MipmapFilterMode::Linear,
        },
        compare: d.compare.map(compare),
        ..Default::default()
    }
}

pub(super) fn color_ops(load: LoadOp<[f64; 4]>, store: StoreOp) -> wgpu::Operations<wgpu::Color> {
    wgpu::Operations {
        load: match load {
            LoadOp::Clear([r, g, b, a]) => wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
            LoadOp::Load => wgpu::LoadOp::Load,
            // SAFETY: the token is the caller's promise that the pass writes every texel
            // before reading, blending with or storing one (`DontCareToken::promise`).
            LoadOp::DontCare(_) => wgpu::LoadOp::DontCare(unsafe { wgpu::LoadOpDontCare::enabled() }),
        },
        store: store_op(store),
    }
}

pub(super) fn depth_ops(load: LoadOp<f32>, store: StoreOp) -> wgpu::Operations<f32> {
    wgpu::Operations {
        load: match load {
            LoadOp::Clear(v) => wgpu::LoadOp::Clear(v),
            LoadOp::Load => wgpu::LoadOp::Load,
            // SAFETY: as for color: the token carries the caller's promise.
            LoadOp::DontCare(_) => wgpu::LoadOp::DontCare(unsafe { wgpu::LoadOpDontCare::enabled() }),
        },
        store: store_op(store),
    }
}

fn store_op(s: StoreOp) -> wgpu::StoreOp {
    match s {
        StoreOp::Store => wgpu::StoreOp::Store,
        StoreOp::Discard => wgpu::StoreOp::Discard,
    }
}

/// A wgpu error caught in an error scope, as a creation error.
pub(super) fn map_create_error(e: wgpu::Error) -> CreateError {
    match e {
        wgpu::Error::OutOfMemory { .. } => CreateError::OutOfMemory { requested: 0 },
        other => CreateError::Validation(other.to_string()),
    }
}
