//! Resource descriptors: what a backend is asked to create.
//!
//! Descriptors are plain data, independent of wgpu, so the scheduler and the null backend
//! never see a wgpu type. They derive `Hash` and `Eq` where they are cache keys.

use crate::handle::{BindGroupLayoutId, BufferId, SamplerId, ShaderId, TextureId};

macro_rules! flags {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $flag:ident = $bit:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub u32);
        impl $name {
            $($(#[$fm])* pub const $flag: Self = Self(1 << $bit);)*
            /// No flags.
            pub const NONE: Self = Self(0);
            /// Whether every flag of `other` is set in `self`.
            #[inline]
            pub fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }
        }
        impl std::ops::BitOr for $name {
            type Output = Self;
            #[inline]
            fn bitor(self, rhs: Self) -> Self {
                Self(self.0 | rhs.0)
            }
        }
    };
}

flags! {
    /// How a buffer may be used.
    BufferUsage {
        /// Bound as a vertex buffer.
        VERTEX = 0,
        /// Bound as an index buffer.
        INDEX = 1,
        /// Bound as a uniform buffer.
        UNIFORM = 2,
        /// Bound as a storage buffer.
        STORAGE = 3,
        /// Source of indirect draw arguments.
        INDIRECT = 4,
        /// Written by the CPU through [`crate::Backend::write_buffer`].
        COPY_DST = 5,
        /// Copied from.
        COPY_SRC = 6,
    }
}

flags! {
    /// How a texture may be used.
    TextureUsage {
        /// Color or depth attachment of a pass.
        RENDER_TARGET = 0,
        /// Sampled in shaders.
        SAMPLED = 1,
        /// Read back or copied from.
        COPY_SRC = 2,
        /// Written by the CPU through [`crate::Backend::write_texture`].
        COPY_DST = 3,
        /// Only an attachment whose content lives within one pass (cleared on load,
        /// discarded on store): may have no memory behind it
        /// ([`crate::Caps::transient_saves_memory`]). Only with `RENDER_TARGET`.
        TRANSIENT = 4,
    }
}

flags! {
    /// Shader stages that see a binding.
    Stages {
        /// Vertex stage.
        VERTEX = 0,
        /// Fragment stage.
        FRAGMENT = 1,
        /// Compute stage.
        COMPUTE = 2,
    }
}

/// Texel formats Switchyard renders to and samples from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum TextureFormat {
    /// 8-bit RGBA, linear.
    Rgba8Unorm,
    /// 8-bit RGBA, sRGB encoded.
    Rgba8UnormSrgb,
    /// 32-bit float depth.
    Depth32Float,
    /// 16-bit float RGBA, linear: high dynamic range scene color.
    Rgba16Float,
    /// 8-bit BGRA, sRGB encoded: the swapchain format of many windows.
    Bgra8UnormSrgb,
    /// BC1 (DXT1) RGBA, linear: 8 bytes per 4 x 4 block (needs [`crate::Caps::bc_textures`]).
    Bc1RgbaUnorm,
    /// BC1 RGBA, sRGB encoded.
    Bc1RgbaUnormSrgb,
    /// BC7 RGBA, linear: 16 bytes per 4 x 4 block (needs [`crate::Caps::bc_textures`]).
    Bc7RgbaUnorm,
    /// BC7 RGBA, sRGB encoded.
    Bc7RgbaUnormSrgb,
}

impl TextureFormat {
    /// Whether this is a depth format.
    #[inline]
    pub fn is_depth(self) -> bool {
        matches!(self, Self::Depth32Float)
    }
    /// Bytes per texel; 0 for the block-compressed formats (see [`TextureFormat::block`]).
    #[inline]
    pub fn bytes_per_texel(self) -> u32 {
        match self {
            Self::Rgba16Float => 8,
            Self::Rgba8Unorm | Self::Rgba8UnormSrgb | Self::Bgra8UnormSrgb | Self::Depth32Float => 4,
            Self::Bc1RgbaUnorm | Self::Bc1RgbaUnormSrgb | Self::Bc7RgbaUnorm | Self::Bc7RgbaUnormSrgb => 0,
        }
    }
}

/// Index element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexFormat {
    /// 16-bit indices.
    Uint16,
    /// 32-bit indices.
    Uint32,
}

impl IndexFormat {
    /// Bytes per index.
    #[inline]
    pub fn size(self) -> u64 {
        match self {
            Self::Uint16 => 2,
            Self::Uint32 => 4,
        }
    }
}

/// Creates a buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BufferDesc {
    /// Debug label.
    pub label: String,
    /// Size in bytes (non-zero, multiple of 4).
    pub size: u64,
    /// Allowed uses.
    pub usage: BufferUsage,
}

/// Creates a 2D texture.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextureDesc {
    /// Debug label.
    pub label: String,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Texel format.
    pub format: TextureFormat,
    /// Allowed uses.
    pub usage: TextureUsage,
    /// Samples per texel: 1, or a count in [`crate::Caps::sample_counts`] for a
    /// multisampled render target (usage `RENDER_TARGET`, maybe `TRANSIENT`, nothing else:
    /// it is resolved, never sampled or copied).
    pub samples: u32,
    /// Mip levels, from 1 (the default) to the full chain down to 1 x 1 (1 when
    /// multisampled or transient). Views and bindings see every level.
    pub mip_levels: u32,
}

impl Default for TextureDesc {
    /// A 1 x 1 single-sample RGBA8 sRGB texture with no usage yet.
    fn default() -> Self {
        Self {
            label: String::new(),
            width: 1,
            height: 1,
            format: TextureFormat::Rgba8UnormSrgb,
            usage: TextureUsage::NONE,
            samples: 1,
            mip_levels: 1,
        }
    }
}

/// Texture filtering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterMode {
    /// Nearest texel.
    Nearest,
    /// Bilinear.
    Linear,
}

/// Texture addressing outside [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// Clamp to the edge texel.
    ClampToEdge,
    /// Repeat.
    Repeat,
}

/// Depth comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareFunction {
    /// Passes if new < old.
    Less,
    /// Passes if new <= old.
    LessEqual,
    /// Passes if new > old.
    Greater,
    /// Always passes.
    Always,
}

/// Creates a sampler.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SamplerDesc {
    /// Debug label.
    pub label: String,
    /// Min/mag filter.
    pub filter: FilterMode,
    /// Address mode for u and v.
    pub address: AddressMode,
    /// A comparison sampler (shadow maps) when set.
    pub compare: Option<CompareFunction>,
}

/// Creates a shader module from WGSL.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShaderModuleDesc {
    /// Debug label.
    pub label: String,
    /// WGSL source.
    pub wgsl: String,
}

/// What kind of texture a binding samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TextureSampleKind {
    /// Filterable float color.
    Float,
    /// Depth (with comparison samplers).
    Depth,
    /// Float values read without filtering (`texture_2d<f32>` with a non-filtering
    /// sampler or `textureLoad`): any color format, and depth formats, whose depth is
    /// the red channel. How a depth texture is read outside comparisons on every backend.
    UnfilterableFloat,
}

/// The type of one binding in a bind group layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindingType {
    /// A uniform buffer; `dynamic` ones take an offset at bind time.
    Uniform {
        /// Takes a dynamic offset.
        dynamic: bool,
        /// Minimum bound size in bytes (0 = no check).
        min_size: u64,
    },
    /// A read-only storage buffer.
    Storage {
        /// Takes a dynamic offset.
        dynamic: bool,
    },
    /// A storage buffer the shader reads and writes (`var<storage, read_write>`): compute
    /// stages only.
    StorageReadWrite {
        /// Takes a dynamic offset.
        dynamic: bool,
    },
    /// A sampled 2D texture.
    Texture(TextureSampleKind),
    /// A sampler; `comparison` for shadow lookups.
    Sampler {
        /// Comparison sampler.
        comparison: bool,
    },
    /// A sampler that does not filter (nearest, no comparison): what a depth texture is
    /// sampled with outside comparisons.
    NonFilteringSampler,
}

/// One binding of a bind group layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayoutEntry {
    /// Binding number in the shader.
    pub binding: u32,
    /// Stages that see it.
    pub visibility: Stages,
    /// Its type.
    pub ty: BindingType,
}

/// Creates a bind group layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindGroupLayoutDesc {
    /// Debug label.
    pub label: String,
    /// Bindings, any order, unique binding numbers.
    pub entries: Vec<LayoutEntry>,
}

/// A resource bound into a bind group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindResource {
    /// A buffer range (`size` None = to the end).
    Buffer {
        /// The buffer.
        buffer: BufferId,
        /// Byte offset.
        offset: u64,
        /// Byte size, or to the end.
        size: Option<u64>,
    },
    /// A texture (whole, default view).
    Texture(TextureId),
    /// A sampler.
    Sampler(SamplerId),
}

/// One entry of a bind group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BindEntry {
    /// Binding number; must exist in the layout.
    pub binding: u32,
    /// What is bound.
    pub resource: BindResource,
}

/// Creates a bind group.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BindGroupDesc {
    /// Debug label.
    pub label: String,
    /// The layout it follows.
    pub layout: BindGroupLayoutId,
    /// One entry per layout binding.
    pub entries: Vec<BindEntry>,
}

/// Vertex attribute formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VertexFormat {
    /// f32.
    Float32,
    /// 2 x f32.
    Float32x2,
    /// 3 x f32.
    Float32x3,
    /// 4 x f32.
    Float32x4,
    /// u32.
    Uint32,
    /// 4 x u8 normalized to [0, 1].
    Unorm8x4,
}

impl VertexFormat {
    /// Size in bytes.
    #[inline]
    pub fn size(self) -> u64 {
        match self {
            Self::Float32 | Self::Uint32 | Self::Unorm8x4 => 4,
            Self::Float32x2 => 8,
            Self::Float32x3 => 12,
            Self::Float32x4 => 16,
        }
    }
}

/// One vertex attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VertexAttribute {
    /// Format.
    pub format: VertexFormat,
    /// Byte offset inside the element.
    pub offset: u64,
    /// Shader location.
    pub location: u32,
}

/// Whether a vertex buffer advances per vertex or per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepMode {
    /// Per vertex.
    Vertex,
    /// Per instance.
    Instance,
}

/// Layout of one vertex buffer slot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VertexBufferLayout {
    /// Bytes between elements.
    pub stride: u64,
    /// Advance per vertex or instance.
    pub step: StepMode,
    /// Attributes read from it.
    pub attributes: Vec<VertexAttribute>,
}

/// Face culling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CullMode {
    /// Draw both faces.
    None,
    /// Cull back faces (counter-clockwise front).
    Back,
    /// Cull front faces.
    Front,
}

/// Color blending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlendMode {
    /// Overwrite.
    Replace,
    /// Premultiplied-free alpha blending (src * a + dst * (1 - a)).
    Alpha,
}

/// The color target of a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColorTargetState {
    /// Format; must equal the pass's color attachment format.
    pub format: TextureFormat,
    /// Blending.
    pub blend: BlendMode,
}

/// Depth testing of a pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepthState {
    /// Format; must equal the pass's depth attachment format.
    pub format: TextureFormat,
    /// Whether depth is written.
    pub write: bool,
    /// Depth test.
    pub compare: CompareFunction,
    /// Constant depth bias (shadow maps).
    pub bias: i32,
    /// Slope-scaled depth bias, as f32 bits so the descriptor stays `Eq + Hash`.
    pub bias_slope_scale_bits: u32,
}

/// Creates a compute pipeline ([`crate::Backend::create_compute_pipeline`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ComputePipelineDesc {
    /// Debug label.
    pub label: String,
    /// Shader module holding the entry point.
    pub shader: ShaderId,
    /// Compute entry point.
    pub entry: String,
    /// Bind group layouts, by group index.
    pub bind_group_layouts: Vec<BindGroupLayoutId>,
}

/// Creates a render pipeline. Equal descriptors return the same [`crate::PipelineId`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PipelineDesc {
    /// Debug label.
    pub label: String,
    /// Shader module holding both entry points.
    pub shader: ShaderId,
    /// Vertex entry point.
    pub vertex_entry: String,
    /// Fragment entry point (None: depth-only).
    pub fragment_entry: Option<String>,
    /// Bind group layouts, by group index.
    pub bind_group_layouts: Vec<BindGroupLayoutId>,
    /// Vertex buffer slots.
    pub vertex_buffers: Vec<VertexBufferLayout>,
    /// Face culling (triangle lists, counter-clockwise front faces).
    pub cull: CullMode,
    /// Color target (None: depth-only).
    pub color: Option<ColorTargetState>,
    /// Depth target.
    pub depth: Option<DepthState>,
    /// Samples per texel of the pass's attachments (1: not multisampled).
    pub samples: u32,
}
