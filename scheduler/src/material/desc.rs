//! What an engine describes: shaders (WGSL, keywords, constants, entry points, how their
//! materials bind) and materials, and the pass kinds they draw in.

use super::{PropertySheet, PropertyType, CONSTANT_SLOT};

/// The pipelines a scene pass draws with: which of a shader's entry points
/// ([`ShaderPasses`]) its materials use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PassKind {
    /// Depth only, from a light (a vertex entry, no fragment stage).
    Shadow = 0,
    /// Lit color with depth (a vertex and a fragment entry).
    Forward = 1,
    /// Depth only, from a camera: a depth prepass. The forward entry's vertex stage
    /// without a fragment stage, so a pass of this kind writes the depth a forward pass
    /// of the same camera would, for the objects whose shader has a forward entry.
    Depth = 2,
}

impl PassKind {
    /// This kind's bit in a pass mask.
    pub(crate) fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The entry points a shader has for each pass kind. Objects of a material whose shader
/// lacks a kind are not drawn in passes of that kind (a shader without a shadow entry casts
/// no shadows), never a per-frame error. `Renderer::create_shader` builds each declared
/// pass's pipeline once, so a missing or mistyped entry point is an error there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShaderPasses {
    /// Vertex entry of the depth-only shadow pass.
    pub shadow: Option<String>,
    /// Vertex and fragment entries of the forward pass.
    pub forward: Option<(String, String)>,
}

impl Default for ShaderPasses {
    /// The built-in convention: `vs_shadow`; `vs_main` and `fs_main`.
    fn default() -> Self {
        Self { shadow: Some("vs_shadow".into()), forward: Some(("vs_main".into(), "fs_main".into())) }
    }
}

impl ShaderPasses {
    /// The kinds declared, as a mask of [`PassKind`] bits.
    pub(crate) fn mask(&self) -> u8 {
        (if self.shadow.is_some() { PassKind::Shadow.bit() } else { 0 })
            | (if self.forward.is_some() { PassKind::Forward.bit() | PassKind::Depth.bit() } else { 0 })
    }
}

/// Describes a shader: WGSL following the binding convention of `shaders/lit.wgsl`.
#[derive(Clone, Debug, PartialEq)]
pub struct ShaderDesc {
    /// Name (labels, errors).
    pub name: String,
    /// WGSL source; may use `KW_<KEYWORD>` constants for each keyword. A line that ends in
    /// `// if NAME` is kept only in the variants with keyword `NAME` on, one that ends in
    /// `// if !NAME` only in those with it off: what a `KW_` constant cannot remove, as a
    /// vertex output that only some variants read (the lit shader's normal, which `FLAT`
    /// derives instead). `NAME`, in capitals, digits and `_` (a lower-case word after
    /// `// if` is a comment), must be one of `keywords`.
    pub wgsl: String,
    /// Keywords, at most [`MAX_KEYWORDS`](super::MAX_KEYWORDS).
    pub keywords: Vec<String>,
    /// The material constant block, in order (WGSL uniform layout rules apply).
    pub constants: Vec<(String, PropertyType)>,
    /// Its entry points per pass kind.
    pub passes: ShaderPasses,
    /// How its materials' constants reach it: one block per draw, or indexed.
    pub materials: MaterialBinding,
}

/// How a shader reads its material's constant block (group 1, binding 0 of the binding
/// convention).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MaterialBinding {
    /// `var<uniform>`: the material's block, bound at its dynamic offset. Materials are
    /// draw states of their own: a multi-draw spans one material.
    #[default]
    PerDraw,
    /// `var<storage, read>`: an array of [`CONSTANT_SLOT`]-byte slots, one per dense
    /// material index, read at the slot of the object's material, which binding 3 of the
    /// same group (`var<storage, read> array<u32>`, vertex stage) holds per object index.
    /// The materials of one pipeline and texture share one draw state, so a multi-draw
    /// spans them and a frame's draw calls scale with pipelines. Pad the slot struct to
    /// 256 bytes with members (`pad: array<vec4<f32>, N>`): naga's GLSL output ignores
    /// `@size`, so a GL adapter would read the slots at the block's own size. Needs
    /// [`INDEXED_STORAGE_BUFFERS`] storage buffers per shader stage (`Caps`); the
    /// built-in form is [`ShaderDesc::lit_indexed`].
    Indexed,
}

/// Storage buffers per shader stage an [`MaterialBinding::Indexed`] shader's pipelines bind
/// besides the engine's scene buffers: the transforms, the material slots and the objects'
/// materials.
pub const INDEXED_STORAGE_BUFFERS: u32 = 3;

impl ShaderDesc {
    /// Switchyard's built-in lit shader: base color, emission, roughness, rim strength,
    /// and the global `_Time`; keywords `SPECULAR`, `RIM`, `EMISSIVE`, `FOG`, `FLAT`
    /// (each face's normal from the screen-space derivatives of its position instead of the
    /// vertex normals: flat faces from meshes whose faces share vertices) and `BOX_FACES`
    /// (the mesh is the +x, +y and +z faces of the unit box, x and z in -0.5..0.5 and y in
    /// 0..1, as `switchyard_city::box_faces` builds it; the vertex stage mirrors them on
    /// each axis toward the view's camera, the eye or an orthographic camera's direction,
    /// in the object's own space: the faces a box can show, with half the triangles of
    /// the whole box. Any transform that does not mirror; the pixels are the whole box's)
    /// and `UNTEXTURED` (the base color alone: the material's base texture is not read and
    /// the vertex stage passes no uv). `FLAT` and `UNTEXTURED` take the normal and the uv
    /// out of the vertex outputs.
    pub fn lit() -> Self {
        Self {
            name: "lit".into(),
            wgsl: include_str!("../shaders/lit.wgsl").into(),
            keywords: ["SPECULAR", "RIM", "EMISSIVE", "FOG", "FLAT", "BOX_FACES", "UNTEXTURED"]
                .map(String::from)
                .to_vec(),
            constants: vec![
                ("_BaseColor".into(), PropertyType::Color),
                ("_Emission".into(), PropertyType::Color),
                ("_Roughness".into(), PropertyType::Float),
                ("_RimStrength".into(), PropertyType::Float),
                ("_Time".into(), PropertyType::Float),
            ],
            passes: ShaderPasses::default(),
            materials: MaterialBinding::PerDraw,
        }
    }

    /// The built-in lit shader in the form `caps` allows: [`ShaderDesc::lit_indexed`] where
    /// the adapter binds [`INDEXED_STORAGE_BUFFERS`] storage buffers per stage, else
    /// [`ShaderDesc::lit`].
    pub fn lit_for(caps: &switchyard_backend::Caps) -> Self {
        if caps.max_storage_buffers_per_stage >= INDEXED_STORAGE_BUFFERS {
            Self::lit_indexed()
        } else {
            Self::lit()
        }
    }

    /// The built-in lit shader with its materials indexed ([`MaterialBinding::Indexed`]):
    /// the same constants, keywords and images as [`ShaderDesc::lit`].
    pub fn lit_indexed() -> Self {
        const _: () = assert!(CONSTANT_SLOT == 256, "lit.wgsl's indexed slots are 256 bytes");
        let lit = Self::lit();
        let mut wgsl = String::with_capacity(lit.wgsl.len());
        for line in lit.wgsl.lines().filter(|l| !l.ends_with("// per draw")) {
            match line.trim_start().strip_prefix("// indexed: ") {
                Some(code) => wgsl.push_str(code),
                None => wgsl.push_str(line),
            }
            wgsl.push('\n');
        }
        Self { name: "lit-indexed".into(), wgsl, materials: MaterialBinding::Indexed, ..lit }
    }
}

/// Describes a material.
#[derive(Clone, Debug, Default)]
pub struct MaterialDesc {
    /// Its shader.
    pub shader: crate::scene::ShaderHandle,
    /// Enabled keywords (must be declared by the shader).
    pub keywords: Vec<String>,
    /// Property values (must be declared by the shader, with the declared type).
    pub properties: PropertySheet,
    /// Base color texture (white when `None`).
    pub base_texture: Option<crate::scene::TextureHandle>,
    /// Alpha-blended, sorted back to front, no depth writes.
    pub transparent: bool,
}
