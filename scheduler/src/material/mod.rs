//! Shaders with keyword variants, materials, and the display-list cache.
//!
//! A shader is WGSL plus a keyword list and the layout of its material constant block.
//! The variant in use is a bit mask over its keywords: material keywords OR global
//! keywords; each variant is compiled once (keywords become `const KW_<NAME>: bool` lines).
//!
//! For each (material, variant, pass) the cache keeps one display list: the pipeline,
//! the material's bind group, the resolved constant block, and a patch table of
//! (offset in the block ← offset in the global sheet). A material keeps several lists at
//! once, so switching keywords back and forth never rebuilds. Per frame only the constant
//! block is copied into the frame's ring and the globals are patched in.

mod compile;
mod desc;
mod display_list;
mod log;
mod scene_group;
pub(crate) mod sheet;

pub(crate) use compile::create_missing;
pub use desc::{MaterialBinding, MaterialDesc, PassKind, ShaderDesc, ShaderPasses, INDEXED_STORAGE_BUFFERS};
pub use display_list::ListCounts;
#[cfg(test)]
use display_list::Patch;
pub(crate) use display_list::{BuildCtx, DisplayList};
pub use log::{PipelineLog, PipelineLogEntry};
pub(crate) use scene_group::{SceneKinds, SceneLayout};

pub use sheet::{srgb_to_linear, PropertySheet, PropertyType, PropertyValue};

use switchyard_backend::{
    Backend, BindGroupId, BindGroupLayoutId, ColorTargetState, CompareFunction, CullMode, DepthState, PipelineDesc,
    PipelineId, Resource, ShaderId, ShaderModuleDesc, StepMode, TextureFormat, VertexAttribute, VertexBufferLayout,
    VertexFormat,
};

use crate::error::ResourceError;

/// Most keywords one shader declares (variant masks are u32).
pub const MAX_KEYWORDS: usize = 16;
/// Size of one material constant slot in the frame ring (the dynamic-offset alignment).
pub const CONSTANT_SLOT: u32 = 256;

#[derive(Debug, Clone)]
pub(crate) struct Decl {
    pub(crate) name: String,
    pub(crate) ty: PropertyType,
    pub(crate) offset: u32,
}

/// A registered shader and its compiled variants.
#[derive(Debug)]
pub(crate) struct ShaderRecord {
    pub(crate) name: String,
    wgsl: String,
    pub(crate) keywords: Vec<String>,
    pub(crate) decls: Vec<Decl>,
    pub(crate) block_size: u32,
    pub(crate) passes: ShaderPasses,
    pub(crate) materials: MaterialBinding,
    /// Compiled variants: (mask, module).
    variants: Vec<(u32, ShaderId)>,
    /// Pipelines made from them, each asked of the backend once.
    pipelines: Vec<(PipelineKey, PipelineId)>,
    /// Removed (`Renderer::remove_shader`): its slot is free for the next shader.
    pub(crate) removed: bool,
}

/// What a material pipeline of one shader depends on besides the shader: its variant,
/// pass, blending, the forward passes' color target and the scene passes' group 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    pub(crate) variant: u32,
    pub(crate) pass: PassKind,
    pub(crate) transparent: bool,
    pub(crate) color_format: TextureFormat,
    pub(crate) color_samples: u32,
    pub(crate) scene: Option<SceneLayout>,
}

impl PipelineKey {
    /// The key of a pipeline drawn with `layouts`' forward target and scene group.
    pub(crate) fn new(variant: u32, pass: PassKind, transparent: bool, layouts: &Layouts) -> Self {
        Self {
            variant,
            pass,
            transparent,
            color_format: layouts.color_format,
            color_samples: layouts.color_samples,
            scene: layouts.scene,
        }
    }

    /// `layouts` with this key's forward target and scene group.
    pub(crate) fn layouts(&self, layouts: &Layouts) -> Layouts {
        Layouts { color_format: self.color_format, color_samples: self.color_samples, scene: self.scene, ..*layouts }
    }
}

impl ShaderRecord {
    pub(crate) fn new(desc: &ShaderDesc) -> Result<Self, ResourceError> {
        if desc.passes.mask() == 0 {
            return Err(ResourceError::Invalid(format!("shader `{}` declares no pass", desc.name)));
        }
        if desc.keywords.len() > MAX_KEYWORDS {
            return Err(ResourceError::Invalid(format!("shader `{}`: more than {MAX_KEYWORDS} keywords", desc.name)));
        }
        for (n, line) in desc.wgsl.lines().enumerate() {
            if let Some((_, name)) = line_condition(line).filter(|(_, name)| !desc.keywords.iter().any(|k| k == name)) {
                return Err(ResourceError::Invalid(format!(
                    "shader `{}`: line {}'s `// if {name}` names a keyword the shader does not declare",
                    desc.name,
                    n + 1
                )));
            }
        }
        let mut decls = Vec::with_capacity(desc.constants.len());
        let mut off = 0u32;
        for (name, ty) in &desc.constants {
            if decls.iter().any(|d: &Decl| &d.name == name) {
                return Err(ResourceError::Invalid(format!("shader `{}`: duplicate constant `{name}`", desc.name)));
            }
            off = off.next_multiple_of(ty.align());
            decls.push(Decl { name: name.clone(), ty: *ty, offset: off });
            off += ty.size();
        }
        let block_size = off.next_multiple_of(16).max(16);
        if block_size > CONSTANT_SLOT {
            return Err(ResourceError::Invalid(format!(
                "shader `{}`: constant block over {CONSTANT_SLOT} bytes",
                desc.name
            )));
        }
        Ok(Self {
            name: desc.name.clone(),
            wgsl: desc.wgsl.clone(),
            keywords: desc.keywords.clone(),
            decls,
            block_size,
            passes: desc.passes.clone(),
            materials: desc.materials,
            variants: Vec::new(),
            pipelines: Vec::new(),
            removed: false,
        })
    }

    /// Empties a removed shader's record (its compiled objects taken before): the source
    /// and declarations go, the slot waits for the next shader.
    pub(crate) fn forget(&mut self) {
        (self.wgsl, self.keywords, self.decls, self.removed) = (String::new(), Vec::new(), Vec::new(), true);
    }

    /// Bit of `keyword` in this shader's variant mask.
    pub(crate) fn keyword_bit(&self, keyword: &str) -> Option<u32> {
        self.keywords.iter().position(|k| k == keyword).map(|i| 1 << i)
    }

    /// The variant bits of those of `keywords` this shader declares (the others select
    /// nothing, as global keywords do).
    pub(crate) fn declared_bits<'a>(&self, keywords: impl IntoIterator<Item = &'a str>) -> u32 {
        keywords.into_iter().filter_map(|k| self.keyword_bit(k)).fold(0, |a, b| a | b)
    }

    /// The variant mask of `keywords`, or the first of them this shader does not declare.
    pub(crate) fn keyword_mask<'k>(&self, keywords: &'k [String]) -> Result<u32, &'k String> {
        keywords.iter().try_fold(0, |mask, k| self.keyword_bit(k).map(|bit| mask | bit).ok_or(k))
    }

    /// WGSL of one variant.
    pub(crate) fn variant_source(&self, mask: u32) -> String {
        let mut src = String::with_capacity(self.wgsl.len() + 40 * self.keywords.len());
        for (i, k) in self.keywords.iter().enumerate() {
            src.push_str(&format!("const KW_{k}: bool = {};\n", mask & (1 << i) != 0));
        }
        for line in self.wgsl.lines() {
            let kept = line_condition(line)
                .is_none_or(|(on, name)| self.keyword_bit(name).is_some_and(|bit| (mask & bit != 0) == on));
            if kept {
                src.push_str(line);
                src.push('\n');
            }
        }
        src
    }

    /// The compiled module of one variant (compiled on first use).
    pub(crate) fn variant_module<B: Backend>(&mut self, backend: &B, mask: u32) -> Result<ShaderId, ResourceError> {
        if let Some(id) = self.module_of(mask) {
            return Ok(id);
        }
        let id = backend.create_shader(&self.module_desc(mask))?;
        self.variants.push((mask, id));
        Ok(id)
    }

    /// The pipeline of one variant for `pass` (made on first use, then kept).
    pub(crate) fn pipeline<B: Backend>(
        &mut self,
        backend: &B,
        variant: u32,
        pass: PassKind,
        transparent: bool,
        layouts: &Layouts,
    ) -> Result<PipelineId, ResourceError> {
        let key = PipelineKey::new(variant, pass, transparent, layouts);
        if let Some(id) = self.pipeline_of(&key) {
            return Ok(id);
        }
        let module = self.variant_module(backend, variant)?;
        let id = backend.create_pipeline(&pipeline_desc(self, module, variant, pass, transparent, layouts))?;
        self.pipelines.push((key, id));
        Ok(id)
    }

    /// The pipeline of `key`, made before.
    pub(crate) fn pipeline_of(&self, key: &PipelineKey) -> Option<PipelineId> {
        self.pipelines.iter().find(|(k, _)| k == key).map(|&(_, id)| id)
    }

    /// The compiled module of a variant.
    pub(crate) fn module_of(&self, mask: u32) -> Option<ShaderId> {
        self.variants.iter().find(|(m, _)| *m == mask).map(|&(_, id)| id)
    }

    /// The description of a variant's module.
    pub(crate) fn module_desc(&self, mask: u32) -> ShaderModuleDesc {
        ShaderModuleDesc { label: format!("{}#{mask:x}", self.name), wgsl: self.variant_source(mask) }
    }

    /// A variant compiled elsewhere (a batch), kept as if [`Self::variant_module`] had.
    pub(crate) fn add_module(&mut self, mask: u32, id: ShaderId) {
        self.variants.push((mask, id));
    }

    /// A pipeline made elsewhere (a batch), kept as if [`Self::pipeline`] had.
    pub(crate) fn add_pipeline(&mut self, key: PipelineKey, id: PipelineId) {
        self.pipelines.push((key, id));
    }

    /// The pipeline keys made so far, in the order they were made.
    pub(crate) fn pipeline_keys(&self) -> impl Iterator<Item = &PipelineKey> {
        self.pipelines.iter().map(|(k, _)| k)
    }

    /// The compiled modules, given up while the pipelines made from them stay (a variant
    /// that needs a new pipeline later is compiled again from the kept source).
    pub(crate) fn take_modules(&mut self) -> impl Iterator<Item = ShaderId> + '_ {
        self.variants.drain(..).map(|(_, id)| id)
    }

    /// The compiled modules and pipelines, given up (to destroy them, or because they
    /// belong to a lost device).
    pub(crate) fn take_compiled(&mut self) -> impl Iterator<Item = Resource> + '_ {
        let pipelines = self.pipelines.drain(..).map(|(_, p)| Resource::Pipeline(p));
        pipelines.chain(self.variants.drain(..).map(|(_, m)| Resource::Shader(m)))
    }

    /// Validates a property against the declaration.
    pub(crate) fn check_property(&self, name: &str, ty: PropertyType) -> Result<(), ResourceError> {
        match self.decls.iter().find(|d| d.name == name) {
            None => Err(ResourceError::UnknownProperty(name.into())),
            Some(d) if d.ty != ty => Err(ResourceError::PropertyType { name: name.into(), expected: d.ty }),
            Some(_) => Ok(()),
        }
    }
}

/// Per-material data resolved once per frame, before the jobs run: what keys and batches
/// need of a material without touching its record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaterialFrame {
    /// Variant mask (material | global keywords).
    pub(crate) variant: u32,
    /// Dense shader index.
    pub(crate) shader: u32,
    /// Alpha blended.
    pub(crate) transparent: bool,
    /// Shadow-pass state id: materials with equal shader and variant share it.
    pub(crate) shadow_state: u32,
    /// The pass kinds its shader has entry points for ([`crate::PassKind::bit`]s).
    pub(crate) passes: u8,
    /// An indexed material ([`MaterialBinding::Indexed`]): the material whose lists its
    /// forward and depth batches draw with, the first (lowest dense index) of the indexed
    /// materials of its shader, variant, blending and group, so the objects of all of them
    /// share keys, batches and buckets (each reads its own slot). `None`: itself.
    pub(crate) batch_as: Option<u32>,
}

impl MaterialFrame {
    /// The material that batches of `material` (whose frame this is) draw with in
    /// forward and depth passes.
    #[inline]
    pub(crate) fn batch_material(&self, material: u32) -> u32 {
        self.batch_as.unwrap_or(material)
    }
}

/// Bind group layouts every pipeline follows (the binding convention).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layouts {
    pub(crate) forward_globals: BindGroupLayoutId,
    pub(crate) shadow_globals: BindGroupLayoutId,
    pub(crate) material: BindGroupLayoutId,
    /// Group 1 of [`MaterialBinding::Indexed`] shaders: the slots, texture, sampler and the
    /// objects' materials.
    pub(crate) material_indexed: BindGroupLayoutId,
    pub(crate) color_format: TextureFormat,
    /// Samples per texel of the forward passes' attachments.
    pub(crate) color_samples: u32,
    /// The scene passes' group 2, where the graph's scene passes read engine buffers.
    pub(crate) scene: Option<SceneLayout>,
}

/// The vertex layout every mesh uses: position, normal, uv (32 bytes), then the
/// per-instance object index.
pub(crate) fn vertex_layout() -> Vec<VertexBufferLayout> {
    vec![
        VertexBufferLayout {
            stride: 32,
            step: StepMode::Vertex,
            attributes: vec![
                VertexAttribute { format: VertexFormat::Float32x3, offset: 0, location: 0 },
                VertexAttribute { format: VertexFormat::Float32x3, offset: 12, location: 1 },
                VertexAttribute { format: VertexFormat::Float32x2, offset: 24, location: 2 },
            ],
        },
        VertexBufferLayout {
            stride: 4,
            step: StepMode::Instance,
            attributes: vec![VertexAttribute { format: VertexFormat::Uint32, offset: 0, location: 3 }],
        },
    ]
}

pub(crate) fn pipeline_desc(
    shader: &ShaderRecord,
    module: ShaderId,
    variant: u32,
    pass: PassKind,
    transparent: bool,
    layouts: &Layouts,
) -> PipelineDesc {
    let material = match shader.materials {
        MaterialBinding::PerDraw => layouts.material,
        MaterialBinding::Indexed => layouts.material_indexed,
    };
    let depth = |write, bias| DepthState {
        format: TextureFormat::Depth32Float,
        write,
        compare: CompareFunction::Less,
        bias,
        bias_slope_scale_bits: if bias != 0 { 2.0f32.to_bits() } else { 0 },
    };
    match pass {
        PassKind::Shadow => PipelineDesc {
            label: format!("{}#{variant:x}/shadow", shader.name),
            shader: module,
            vertex_entry: shader.passes.shadow.clone().unwrap_or_default(),
            fragment_entry: None,
            bind_group_layouts: match layouts.scene {
                Some(g) => vec![layouts.shadow_globals, g.empty, g.layout],
                None => vec![layouts.shadow_globals],
            },
            vertex_buffers: vertex_layout(),
            cull: CullMode::Back,
            color: None,
            depth: Some(depth(true, 2)),
            samples: 1,
        },
        PassKind::Forward => PipelineDesc {
            label: format!("{}#{variant:x}/forward", shader.name),
            shader: module,
            vertex_entry: shader.passes.forward.as_ref().map(|f| f.0.clone()).unwrap_or_default(),
            fragment_entry: Some(shader.passes.forward.as_ref().map(|f| f.1.clone()).unwrap_or_default()),
            bind_group_layouts: match layouts.scene {
                Some(g) => vec![layouts.forward_globals, material, g.layout],
                None => vec![layouts.forward_globals, material],
            },
            vertex_buffers: vertex_layout(),
            cull: CullMode::Back,
            color: Some(ColorTargetState {
                format: layouts.color_format,
                blend: if transparent {
                    switchyard_backend::BlendMode::Alpha
                } else {
                    switchyard_backend::BlendMode::Replace
                },
            }),
            depth: Some(depth(!transparent, 0)),
            samples: layouts.color_samples,
        },
        // The forward vertex stage alone (same code, so the same depth), single-sampled.
        PassKind::Depth => PipelineDesc {
            label: format!("{}#{variant:x}/depth", shader.name),
            shader: module,
            vertex_entry: shader.passes.forward.as_ref().map(|f| f.0.clone()).unwrap_or_default(),
            fragment_entry: None,
            bind_group_layouts: match layouts.scene {
                Some(g) => vec![layouts.forward_globals, material, g.layout],
                None => vec![layouts.forward_globals, material],
            },
            vertex_buffers: vertex_layout(),
            cull: CullMode::Back,
            color: None,
            depth: Some(depth(!transparent, 0)),
            samples: 1,
        },
    }
}

/// The shaders and materials: what the patch job reads and extends (compiled variants,
/// display lists) while it runs, in one slot.
#[derive(Debug, Default)]
pub(crate) struct Library {
    /// Shader records by dense index.
    pub(crate) shaders: Vec<ShaderRecord>,
    /// Material records by dense index (`None`: removed).
    pub(crate) materials: Vec<Option<MaterialRecord>>,
}

/// A material and its display lists.
#[derive(Debug)]
pub(crate) struct MaterialRecord {
    /// The engine's handle of it (errors name it).
    pub(crate) handle: crate::scene::MaterialHandle,
    pub(crate) shader: u32,
    pub(crate) keyword_mask: u32,
    pub(crate) sheet: PropertySheet,
    /// The group it binds now: `bound`'s (shared with the other materials of that texture).
    pub(crate) group: BindGroupId,
    /// The texture its group binds: its base texture, white without one, or while the
    /// base texture is queued that texture's fallback.
    pub(crate) bound: switchyard_backend::TextureId,
    /// While its base texture is queued: that texture, whose group it holds already.
    pub(crate) ahead: Option<switchyard_backend::TextureId>,
    /// Its base texture (`None`: white), to bind again on a new device.
    pub(crate) texture: Option<crate::scene::TextureHandle>,
    pub(crate) transparent: bool,
    pub(crate) version: u64,
    pub(crate) lists: Vec<DisplayList>,
}

#[cfg(test)]
impl MaterialRecord {
    /// An opaque, untextured material of shader 0 with `sheet`, no lists yet (unit tests).
    pub(crate) fn of_sheet(sheet: PropertySheet) -> Self {
        Self {
            handle: crate::scene::MaterialHandle::default(),
            shader: 0,
            keyword_mask: 0,
            sheet,
            group: BindGroupId::default(),
            bound: switchyard_backend::TextureId::default(),
            ahead: None,
            texture: None,
            transparent: false,
            version: 0,
            lists: Vec::new(),
        }
    }
}

/// The condition a shader line ends in (`// if NAME`: kept where keyword `NAME` is on;
/// `// if !NAME`: where it is off), as (on, NAME); `None` for any other line. `NAME` is
/// written as keywords are, in capitals, digits and `_` after a capital, so a comment
/// such as `// if needed` stays a comment.
fn line_condition(line: &str) -> Option<(bool, &str)> {
    let (_, tail) = line.trim_end().rsplit_once("// if ")?;
    let (on, name) = match tail.strip_prefix('!') {
        Some(name) => (false, name),
        None => (true, tail),
    };
    let mut bytes = name.bytes();
    let word = bytes.next().is_some_and(|b| b.is_ascii_uppercase())
        && bytes.all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    word.then_some((on, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_backend::null::NullBackend;

    #[test]
    fn lines_kept_per_keyword_and_undeclared_conditions_refused() {
        assert_eq!(line_condition("    x: f32, // if FLAT"), Some((true, "FLAT")));
        assert_eq!(line_condition("let y = 1; // if !FOG_2  "), Some((false, "FOG_2")));
        let comments = ["// if the light is on", "a; // if needed", "a; // if Flat", "a; // if _X", "a; // if 2D"];
        for line in comments.into_iter().chain(["a; // if ", "a; // if !", "a; // FLAT", "a; // if FLAT;"]) {
            assert_eq!(line_condition(line), None, "{line}");
        }
        let desc = ShaderDesc {
            wgsl: "a // if FLAT\nb // if !FLAT\nc\nd // if !FOG\n".into(),
            keywords: vec!["FOG".into(), "FLAT".into()],
            ..ShaderDesc::lit()
        };
        let shader = ShaderRecord::new(&desc).unwrap();
        let body = |mask: u32| shader.variant_source(mask).lines().filter(|l| !l.starts_with("const")).count();
        let src = shader.variant_source(0b10);
        assert!(src.contains("a // if FLAT") && !src.contains("b //") && src.contains("\nc\n") && src.contains("d //"));
        assert_eq!((body(0), body(0b01), body(0b10), body(0b11)), (3, 2, 3, 2));
        // A condition on a keyword the shader does not declare: refused, naming the line.
        let bad = ShaderDesc { wgsl: "a\nb // if !FLAT\n".into(), keywords: vec!["FOG".into()], ..ShaderDesc::lit() };
        assert!(matches!(ShaderRecord::new(&bad), Err(ResourceError::Invalid(m)) if m.contains("line 2")));
    }

    #[test]
    fn constant_block_layout_and_patches_land_at_their_offsets() {
        let mut shader = ShaderRecord::new(&ShaderDesc::lit()).unwrap();
        let off = |n: &str| shader.decls.iter().find(|d| d.name == n).unwrap().offset;
        assert_eq!(
            (off("_BaseColor"), off("_Emission"), off("_Roughness"), off("_RimStrength"), off("_Time")),
            (0, 16, 32, 36, 40)
        );
        assert_eq!(shader.block_size, 48);

        let b = NullBackend::new(true);
        let layouts = crate::renderer::gpu::standard_layouts(&b).unwrap();
        let mut globals = PropertySheet::new();
        globals.set("_Fog", PropertyValue::Vec4([9.0; 4]));
        globals.set("_Time", PropertyValue::Float(2.5));
        // The list only names the material's group.
        let mut mat = MaterialRecord::of_sheet(
            PropertySheet::new()
                .with("_Roughness", PropertyValue::Float(0.75))
                .with("_BaseColor", PropertyValue::Color([1.0, 0.5, 0.0, 1.0])),
        );
        let ctx = BuildCtx { backend: &b, layouts: &layouts, globals: &globals, globals_version: 0, cache: true };
        let mut counts = ListCounts::default();
        let i = mat.list(&mut shader, 0, PassKind::Forward, &ctx, &mut counts).unwrap();
        let list = &mat.lists[i];
        assert_eq!(list.patches, vec![Patch { dst: 40, src: globals.offset(globals.find("_Time").unwrap()), len: 4 }]);
        let mut slot = vec![0xAAu8; CONSTANT_SLOT as usize];
        list.patch_into(&mut slot, globals.values());
        let f = |o: usize| f32::from_le_bytes(slot[o..o + 4].try_into().unwrap());
        assert_eq!(f(0), 1.0);
        assert!((f(4) - 0.2140).abs() < 1e-3, "sRGB authored color stored linear");
        assert_eq!(f(32), 0.75);
        assert_eq!(f(36), 0.0, "undeclared by the material and not global: zero");
        assert_eq!(f(40), 2.5, "global patched in");
        assert_eq!(slot[48], 0xAA, "nothing written past the block");
        assert_eq!((counts.misses, counts.hits), (1, 0));
        mat.list(&mut shader, 0, PassKind::Forward, &ctx, &mut counts).unwrap();
        assert_eq!(counts.hits, 1);
    }
}
