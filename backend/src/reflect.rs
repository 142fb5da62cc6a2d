//! What a WGSL module declares, read with naga: its entry points and the bindings each
//! uses (which a pipeline's layouts must hold), and whether a fragment entry writes every
//! texel it covers.

use crate::desc::{BindingType, ShaderModuleDesc, TextureSampleKind};
use crate::error::CreateError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Vertex,
    Fragment,
    Compute,
}

#[derive(Debug, Clone)]
pub(crate) struct ShaderMeta {
    pub(crate) entry_points: Vec<EntryPoint>,
}

/// An entry point and the resource bindings it uses (what a pipeline's layouts must hold).
#[derive(Debug, Clone)]
pub(crate) struct EntryPoint {
    pub(crate) name: String,
    pub(crate) stage: Stage,
    pub(crate) bindings: Vec<ShaderBinding>,
}

/// A resource the shader reads or writes at `@group(group) @binding(binding)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShaderBinding {
    pub(crate) group: u32,
    pub(crate) binding: u32,
    pub(crate) resource: ShaderResource,
}

/// What a shader binding declares, as far as a layout entry must agree with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShaderResource {
    /// `var<uniform>` of this many bytes.
    Uniform(u64),
    /// `var<storage, read>`.
    Storage,
    /// `var<storage, read_write>`.
    StorageReadWrite,
    /// `texture_2d<f32>`.
    FloatTexture,
    /// `texture_depth_2d`.
    DepthTexture,
    /// `sampler`.
    Sampler,
    /// `sampler_comparison`.
    ComparisonSampler,
    /// Anything no layout entry of this crate describes (storage textures, integer or
    /// multisampled textures, other dimensions).
    Other,
}

impl ShaderResource {
    /// Why a layout entry of type `ty` cannot serve it (`None`: it can).
    pub(crate) fn mismatch(self, ty: BindingType) -> Option<&'static str> {
        let fits = match (self, ty) {
            (Self::Uniform(size), BindingType::Uniform { min_size, .. }) => {
                if min_size != 0 && min_size < size {
                    return Some("a uniform block larger than the layout's minimum size");
                }
                true
            }
            (Self::Storage, BindingType::Storage { .. })
            | (Self::StorageReadWrite, BindingType::StorageReadWrite { .. })
            | (
                Self::FloatTexture,
                BindingType::Texture(TextureSampleKind::Float | TextureSampleKind::UnfilterableFloat),
            )
            | (Self::DepthTexture, BindingType::Texture(TextureSampleKind::Depth))
            | (Self::Sampler, BindingType::Sampler { comparison: false } | BindingType::NonFilteringSampler)
            | (Self::ComparisonSampler, BindingType::Sampler { comparison: true }) => true,
            _ => false,
        };
        (!fits).then_some("of another type than the layout's entry")
    }
}

/// Parses and validates WGSL with naga, returning the entry points.
pub(crate) fn reflect_wgsl(d: &ShaderModuleDesc) -> Result<ShaderMeta, CreateError> {
    use wgpu::naga;
    let err = |message: String| CreateError::Shader { label: d.label.clone(), message };
    let module = naga::front::wgsl::parse_str(&d.wgsl).map_err(|e| err(e.emit_to_string(&d.wgsl)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(&module)
        .map_err(|e| err(e.emit_to_string(&d.wgsl)))?;
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| err(e.to_string()))?;
    let entry_points = module
        .entry_points
        .iter()
        .enumerate()
        .map(|(i, ep)| {
            let stage = match ep.stage {
                naga::ShaderStage::Vertex => Stage::Vertex,
                naga::ShaderStage::Fragment => Stage::Fragment,
                _ => Stage::Compute,
            };
            let uses = info.get_entry_point(i);
            let bindings = module
                .global_variables
                .iter()
                .filter(|(h, _)| !uses[*h].is_empty())
                .filter_map(|(_, g)| {
                    let b = g.binding.as_ref()?;
                    let resource = shader_resource(&module, &layouter, g);
                    Some(ShaderBinding { group: b.group, binding: b.binding, resource })
                })
                .collect();
            EntryPoint { name: ep.name.clone(), stage, bindings }
        })
        .collect();
    Ok(ShaderMeta { entry_points })
}

/// Whether fragment entry point `entry` of `wgsl` writes every texel it covers: `false`
/// when it may `discard` (in it or any function it calls) or writes `sample_mask`, or
/// when `wgsl` has no such fragment entry. What a pass needs before it may begin with a
/// don't-care load (`DontCareToken`).
pub fn fragment_writes_every_texel(wgsl: &str, entry: &str) -> bool {
    use wgpu::naga::{Binding, BuiltIn, Statement, TypeInner};
    let Ok(module) = wgpu::naga::front::wgsl::parse_str(wgsl) else { return false };
    let Some(ep) = module.entry_points.iter().find(|e| e.name == entry && e.stage == wgpu::naga::ShaderStage::Fragment)
    else {
        return false;
    };
    fn kills(module: &wgpu::naga::Module, block: &wgpu::naga::Block, depth: usize) -> bool {
        // Calls nest at most as deep as the module has functions (WGSL has no recursion).
        depth <= module.functions.len()
            && block.iter().any(|s| match s {
                Statement::Kill => true,
                Statement::Block(b) => kills(module, b, depth),
                Statement::If { accept, reject, .. } => kills(module, accept, depth) || kills(module, reject, depth),
                Statement::Switch { cases, .. } => cases.iter().any(|c| kills(module, &c.body, depth)),
                Statement::Loop { body, continuing, .. } => {
                    kills(module, body, depth) || kills(module, continuing, depth)
                }
                Statement::Call { function, .. } => kills(module, &module.functions[*function].body, depth + 1),
                _ => false,
            })
    }
    let sample_mask = |b: &Option<Binding>| matches!(b, Some(Binding::BuiltIn(BuiltIn::SampleMask)));
    let writes_mask = ep.function.result.as_ref().is_some_and(|r| {
        sample_mask(&r.binding)
            || matches!(&module.types[r.ty].inner, TypeInner::Struct { members, .. }
                if members.iter().any(|m| sample_mask(&m.binding)))
    });
    !writes_mask && !kills(&module, &ep.function.body, 0)
}

/// What a bound global variable declares.
fn shader_resource(
    module: &wgpu::naga::Module,
    layouter: &wgpu::naga::proc::Layouter,
    g: &wgpu::naga::GlobalVariable,
) -> ShaderResource {
    use wgpu::naga::{AddressSpace, ImageClass, ImageDimension, ScalarKind, StorageAccess, TypeInner};
    match (g.space, &module.types[g.ty].inner) {
        (AddressSpace::Uniform, _) => ShaderResource::Uniform(u64::from(layouter[g.ty].size)),
        (AddressSpace::Storage { access }, _) if access.contains(StorageAccess::STORE) => {
            ShaderResource::StorageReadWrite
        }
        (AddressSpace::Storage { .. }, _) => ShaderResource::Storage,
        (_, TypeInner::Sampler { comparison: false }) => ShaderResource::Sampler,
        (_, TypeInner::Sampler { comparison: true }) => ShaderResource::ComparisonSampler,
        (_, TypeInner::Image { dim: ImageDimension::D2, arrayed: false, class }) => match class {
            ImageClass::Sampled { kind: ScalarKind::Float, multi: false } => ShaderResource::FloatTexture,
            ImageClass::Depth { multi: false } => ShaderResource::DepthTexture,
            _ => ShaderResource::Other,
        },
        _ => ShaderResource::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::fragment_writes_every_texel as every_texel;

    #[test]
    fn a_fragment_that_may_discard_or_mask_samples_does_not_write_every_texel() {
        let plain = "@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0); }";
        assert!(every_texel(plain, "fs"));
        assert!(!every_texel(plain, "other"), "no such entry");
        assert!(!every_texel("not wgsl", "fs"));
        let branch = "@fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
            if p.x > 4.0 { discard; } return vec4<f32>(1.0); }";
        assert!(!every_texel(branch, "fs"));
        let called = "fn cut(x: f32) { loop { if x > 1.0 { discard; } break; } }
            @fragment fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> { cut(p.x); return vec4<f32>(1.0); }";
        assert!(!every_texel(called, "fs"));
        let masked = "struct Out { @location(0) c: vec4<f32>, @builtin(sample_mask) m: u32 }
            @fragment fn fs() -> Out { return Out(vec4<f32>(1.0), 1u); }";
        assert!(!every_texel(masked, "fs"));
    }
}
